/* runtime/tokens.h - bearer tokens: a file of them, and checking one.
 *
 * The file holds one token a line (at least 16 characters, no blank; blank
 * lines and lines starting with # are skipped), mode 0600 or stricter (it
 * is a secret: runtime/auth.h's private-file check). Only each token's
 * BLAKE2b hash (libsodium) is kept, and a token is compared against every
 * hash in constant time, so a caller learns nothing from how long a refusal
 * took. Frontends check inference requests and native HELLOs against
 * http_token_file; schedd checks the repository API's calls against
 * repository_token_file.
 */
#ifndef SYM_TOKENS_H
#define SYM_TOKENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_http_req;

struct sym_tokens {
	uint8_t (*hash)[32]; /* one per token */
	size_t n;
};

/* Reads the tokens of path into t, replacing what t held only on success
 * (t stays as it was on an error). 0, or a negative errno with a message
 * naming the file and line. */
int sym_tokens_load(struct sym_tokens *t, const char *path, char *err, size_t errlen);

void sym_tokens_free(struct sym_tokens *t);

/* Whether tok (len bytes) is one of t's tokens. False for NULL. */
bool sym_tokens_ok(const struct sym_tokens *t, const char *tok, size_t len);

/* Whether HTTP request r carries "Authorization: Bearer TOKEN" with one of t's tokens. */
bool sym_tokens_http_ok(const struct sym_tokens *t, struct sym_http_req *r);

#endif
