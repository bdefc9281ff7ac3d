/* tests/testutil.h - assertions and temporary files shared by the tests.
 * Include after <cmocka.h>. */
#ifndef SYM_TESTUTIL_H
#define SYM_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Fails unless hay contains needle (hay may be NULL). */
static inline void assert_contains(const char *hay, const char *needle)
{
	if (!hay || !strstr(hay, needle)) {
		print_error("message '%s' does not contain '%s'\n", hay ? hay : "(null)", needle);
		fail();
	}
}

/* Fails unless |got - want| <= tol. */
static inline void assert_near(double got, double want, double tol, const char *what)
{
	if (!(fabs(got - want) <= tol)) {
		print_error("%s: got %.17g, want %.17g +- %.3g\n", what, got, want, tol);
		fail();
	}
}

/* Writes len bytes of data to a fresh file in $TMPDIR (or /tmp) named after
 * tag; its path goes into path. The caller unlinks it. */
static inline void write_temp_bytes(const char *tag, const void *data, size_t len, char *path, size_t pathlen)
{
	const char *dir = getenv("TMPDIR");
	snprintf(path, pathlen, "%s/symphony-test-%s-XXXXXX", dir && dir[0] ? dir : "/tmp", tag);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

#endif
