/* runtime/auth.c - private files (see auth.h). */
#include "runtime/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

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
