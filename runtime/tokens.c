#include "runtime/tokens.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "core/grow.h"
#include "runtime/auth.h"
#include "runtime/http.h"

_Static_assert(crypto_generichash_BYTES == 32, "a token's hash is 32 bytes");

int sym_tokens_load(struct sym_tokens *t, const char *path, char *err, size_t errlen)
{
	char *text;
	long n = sym_file_read(path, 1 << 20, true, &text, err, errlen);
	if (n < 0)
		return (int)n;
	size_t cap = 0, count = 0;
	uint8_t(*h)[32] = NULL;
	int rc = 0, line = 0;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l && !rc; l = strtok_r(NULL, "\n", &save)) {
		line++;
		size_t len = strlen(l);
		while (len && (l[len - 1] == '\r' || l[len - 1] == ' ' || l[len - 1] == '\t'))
			len--;
		if (!len || l[0] == '#')
			continue;
		if (len < 16 || strcspn(l, " \t") < len) {
			snprintf(err, errlen, "%s line %d: a token is at least 16 characters, without blanks", path, line);
			rc = -EINVAL;
			break;
		}
		if (sym_grow(&h, &cap, count + 1, sizeof(*h), 8)) {
			snprintf(err, errlen, "out of memory");
			rc = -ENOMEM;
			break;
		}
		crypto_generichash(h[count++], 32, (const uint8_t *)l, len, NULL, 0);
	}
	sodium_memzero(text, (size_t)n);
	free(text);
	if (!rc && !count) {
		snprintf(err, errlen, "%s holds no token", path);
		rc = -EINVAL;
	}
	if (rc) {
		free(h);
		return rc;
	}
	free(t->hash);
	t->hash = h;
	t->n = count;
	return 0;
}

void sym_tokens_free(struct sym_tokens *t)
{
	free(t->hash);
	t->hash = NULL;
	t->n = 0;
}

bool sym_tokens_ok(const struct sym_tokens *t, const char *tok, size_t len)
{
	if (!tok)
		return false;
	uint8_t h[32];
	crypto_generichash(h, sizeof(h), (const uint8_t *)tok, len, NULL, 0);
	bool ok = false;
	for (size_t i = 0; i < t->n; i++)
		ok |= !sodium_memcmp(h, t->hash[i], sizeof(h));
	return ok;
}

bool sym_tokens_http_ok(const struct sym_tokens *t, struct sym_http_req *r)
{
	const char *a = sym_http_header(r, "Authorization");
	if (!a || strncasecmp(a, "Bearer ", 7))
		return false;
	return sym_tokens_ok(t, a + 7, strlen(a + 7));
}
