/* runtime/auth.h - reading the files a process must keep private (a TLS
 * key, bearer tokens, credentials: runtime/cred.h).
 */
#ifndef SYM_AUTH_H
#define SYM_AUTH_H

#include <stdbool.h>
#include <stddef.h>

/* Reads a whole file of at most max bytes into *out (NUL-terminated, the
 * caller frees it), which must belong to this user and be unreadable by
 * others when `private` (a TLS key, the bearer tokens, a credential).
 * Returns the length, or -errno with a message naming the file. */
long sym_file_read(const char *path, size_t max, bool private, char **out, char *err, size_t errlen);

#endif
