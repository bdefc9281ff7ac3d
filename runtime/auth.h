/* runtime/auth.h - the cluster secret: the key every schedd, frontend and
 * backend proves it holds before a fabric peer trusts it (runtime/fabric.h,
 * "Authentication").
 *
 * The secret is SYM_FAB_SECRET_BYTES random bytes (libsodium's generator),
 * kept in a file as 64 hexadecimal digits and a newline. The file must be a
 * regular file of the user running the process, readable by that user only
 * (mode 0600 or 0400): a secret others can read is no secret, and a process
 * refuses it rather than run exposed.
 */
#ifndef SYM_AUTH_H
#define SYM_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/fabric.h"

/* Writes a new secret to path, created with mode 0600; an existing file is
 * left alone and refused (-EEXIST). Returns 0 or -errno with a message. */
int sym_secret_generate(const char *path, char *err, size_t errlen);

/* Reads the secret at path into out. Returns 0, or -errno with a message
 * naming the file and what is wrong (missing, not a regular file, owned by
 * someone else, readable by group or others, not 64 hex digits). */
int sym_secret_load(const char *path, uint8_t out[SYM_FAB_SECRET_BYTES], char *err, size_t errlen);

/* Reads a whole file of at most max bytes into *out (NUL-terminated, the
 * caller frees it), which must belong to this user and be unreadable by
 * others when `private` (a TLS key, the bearer tokens). Returns the length,
 * or -errno with a message naming the file. */
long sym_file_read(const char *path, size_t max, bool private, char **out, char *err, size_t errlen);

#endif
