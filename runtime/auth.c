/* runtime/auth.c - the cluster secret's file (see auth.h). */
#include "runtime/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#define HEX_LEN (2 * SYM_FAB_SECRET_BYTES)

int sym_secret_generate(const char *path, char *err, size_t errlen)
{
	if (sodium_init() < 0)
		return snprintf(err, errlen, "%s: cannot initialise libsodium", path), -EIO;
	uint8_t key[SYM_FAB_SECRET_BYTES];
	char hex[HEX_LEN + 2];
	randombytes_buf(key, sizeof(key));
	sodium_bin2hex(hex, sizeof(hex), key, sizeof(key));
	sodium_memzero(key, sizeof(key));
	hex[HEX_LEN] = '\n';
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		int e = errno;
		sodium_memzero(hex, sizeof(hex));
		if (e == EEXIST)
			return snprintf(err, errlen, "%s exists already: a new secret would lock out the processes "
					"that use it; remove it first to replace it", path), -EEXIST;
		return snprintf(err, errlen, "%s: %s", path, strerror(e)), -e;
	}
	/* the mode asked for is filtered by the umask, which may only take bits away */
	ssize_t n = write(fd, hex, HEX_LEN + 1);
	int e = n == HEX_LEN + 1 ? 0 : n < 0 ? errno : EIO;
	sodium_memzero(hex, sizeof(hex));
	if (!e && fsync(fd))
		e = errno;
	if (close(fd) && !e)
		e = errno;
	if (e) {
		unlink(path);
		return snprintf(err, errlen, "%s: writing the secret: %s", path, strerror(e)), -e;
	}
	return 0;
}

long sym_file_read(const char *path, size_t max, bool private, char **out, char *err, size_t errlen)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return snprintf(err, errlen, "%s: %s", path, strerror(errno)), -errno;
	struct stat st;
	long rc = 0;
	if (fstat(fd, &st))
		rc = -errno, snprintf(err, errlen, "%s: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		rc = -EINVAL, snprintf(err, errlen, "%s is not a regular file", path);
	else if ((size_t)st.st_size > max)
		rc = -EFBIG, snprintf(err, errlen, "%s is larger than %zu bytes", path, max);
	else if (private && st.st_uid != geteuid())
		rc = -EPERM, snprintf(err, errlen, "%s belongs to uid %u, not to this user (%u)", path,
				      (unsigned)st.st_uid, (unsigned)geteuid());
	else if (private && (st.st_mode & 077))
		rc = -EPERM, snprintf(err, errlen, "%s can be read by others (mode %04o); `chmod 600 %s`", path,
				      (unsigned)(st.st_mode & 07777), path);
	char *buf = rc ? NULL : malloc((size_t)st.st_size + 1);
	if (!rc && !buf)
		rc = -ENOMEM, snprintf(err, errlen, "%s: out of memory", path);
	size_t got = 0;
	while (!rc && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			snprintf(err, errlen, "%s: %s", path, n < 0 ? strerror(errno) : "shorter than its size");
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[got] = '\0';
	*out = buf;
	return (long)got;
}

int sym_secret_load(const char *path, uint8_t out[SYM_FAB_SECRET_BYTES], char *err, size_t errlen)
{
	if (sodium_init() < 0)
		return snprintf(err, errlen, "%s: cannot initialise libsodium", path), -EIO;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT)
			return snprintf(err, errlen, "the cluster secret %s does not exist (create it with "
					"`symphony keygen %s`)", path, path), -e;
		if (e == ELOOP)
			return snprintf(err, errlen, "the cluster secret %s is a symbolic link; name the file itself",
					path), -e;
		return snprintf(err, errlen, "the cluster secret %s: %s", path, strerror(e)), -e;
	}
	struct stat st;
	int rc = 0;
	char hex[HEX_LEN + 2];
	ssize_t n = 0;
	if (fstat(fd, &st))
		rc = -errno, snprintf(err, errlen, "the cluster secret %s: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		rc = -EINVAL, snprintf(err, errlen, "the cluster secret %s is not a regular file", path);
	else if (st.st_uid != geteuid())
		rc = -EPERM, snprintf(err, errlen, "the cluster secret %s belongs to uid %u, not to this user (%u)",
				      path, (unsigned)st.st_uid, (unsigned)geteuid());
	else if (st.st_mode & 077)
		rc = -EPERM, snprintf(err, errlen, "the cluster secret %s can be read by others (mode %04o); "
				      "`chmod 600 %s`", path, (unsigned)(st.st_mode & 07777), path);
	else if ((n = read(fd, hex, sizeof(hex))) < 0)
		rc = -errno, snprintf(err, errlen, "the cluster secret %s: %s", path, strerror(errno));
	close(fd);
	if (!rc) {
		size_t len = (size_t)n;
		if (len == HEX_LEN + 1 && hex[HEX_LEN] == '\n')
			len--;
		size_t got = 0;
		if (len != HEX_LEN ||
		    sodium_hex2bin(out, SYM_FAB_SECRET_BYTES, hex, len, NULL, &got, NULL) || got != SYM_FAB_SECRET_BYTES)
			rc = -EINVAL, snprintf(err, errlen, "the cluster secret %s is not %d hexadecimal digits (and a "
					       "newline), as `symphony keygen` writes it", path, HEX_LEN);
	}
	sodium_memzero(hex, sizeof(hex));
	if (rc)
		sodium_memzero(out, SYM_FAB_SECRET_BYTES);
	return rc;
}
