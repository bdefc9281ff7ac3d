#define _GNU_SOURCE
#include "runtime/net.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int set_opts(int fd)
{
	int one = 1;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

static struct addrinfo *resolve(const char *host, const char *port, bool passive, char *err, size_t errlen,
				int *rc)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	if (passive)
		hints.ai_flags = AI_PASSIVE;
	struct addrinfo *res = NULL;
	int g = getaddrinfo(host, port, &hints, &res);
	if (g) {
		snprintf(err, errlen, "%s:%s: %s", host, port, gai_strerror(g));
		*rc = -EINVAL;
		return NULL;
	}
	return res;
}

int sym_tcp_listen(const char *host, const char *port, char *err, size_t errlen)
{
	int rc = 0;
	struct addrinfo *res = resolve(host, port, true, err, errlen, &rc);
	if (!res)
		return rc;
	rc = -EADDRNOTAVAIL;
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
		if (fd < 0) {
			rc = -errno;
			continue;
		}
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 1024) == 0) {
			freeaddrinfo(res);
			return fd;
		}
		rc = -errno;
		close(fd);
	}
	freeaddrinfo(res);
	snprintf(err, errlen, "cannot listen on %s:%s: %s", host, port, strerror(-rc));
	return rc;
}

int sym_tcp_connect(const char *host, const char *port, int timeout_ms, char *err, size_t errlen)
{
	int rc = 0;
	struct addrinfo *res = resolve(host, port, false, err, errlen, &rc);
	if (!res)
		return rc;
	rc = -ECONNREFUSED;
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
		if (fd < 0) {
			rc = -errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS) {
			rc = -errno;
			close(fd);
			continue;
		}
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int n = poll(&p, 1, timeout_ms);
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		if (n == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0 &&
		    set_opts(fd) == 0) {
			freeaddrinfo(res);
			return fd;
		}
		rc = n == 0 ? -ETIMEDOUT : -(soerr ? soerr : errno);
		close(fd);
	}
	freeaddrinfo(res);
	snprintf(err, errlen, "cannot connect to %s:%s: %s", host, port, strerror(-rc));
	return rc;
}

int sym_tcp_accept(int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

void sym_stream_init(struct sym_stream *s, int fd)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
}

static size_t over(size_t cap) { return cap > SYM_STREAM_BASE ? cap - SYM_STREAM_BASE : 0; }

void sym_stream_close(struct sym_stream *s)
{
	if (s->budget)
		s->budget->used -= over(s->rcap) + over(s->wcap);
	if (s->fd >= 0)
		close(s->fd);
	free(s->rbuf);
	free(s->wbuf);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

/* Room for need bytes in *buf: doubling up to SYM_STREAM_BASE, beyond it
 * need and a quarter (the budget pays for what is allocated). */
static int reserve(struct sym_stream *s, uint8_t **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 16384;
	while (c < need && c < SYM_STREAM_BASE)
		c *= 2;
	if (c < need)
		c = (need + need / 4 + 4095) / 4096 * 4096;
	size_t extra = over(c) - over(*cap);
	if (s->budget && s->budget->used + extra > s->budget->max)
		return -ENOBUFS;
	uint8_t *b = realloc(*buf, c);
	if (!b)
		return -ENOMEM;
	*buf = b;
	*cap = c;
	if (s->budget)
		s->budget->used += extra;
	return 0;
}

/* A buffer holding no more than `keep` bytes goes back to SYM_STREAM_BASE,
 * and its budget gets the rest back. */
static void shrink(struct sym_stream *s, uint8_t **buf, size_t *cap, size_t keep)
{
	if (*cap <= SYM_STREAM_BASE || keep > SYM_STREAM_BASE / 2)
		return;
	uint8_t *b = realloc(*buf, SYM_STREAM_BASE);
	if (!b)
		return;
	if (s->budget)
		s->budget->used -= over(*cap);
	*buf = b;
	*cap = SYM_STREAM_BASE;
}

long sym_stream_read(struct sym_stream *s)
{
	/* Drop what was handed out, then make room for at least one header. */
	if (s->roff) {
		memmove(s->rbuf, s->rbuf + s->roff, s->rlen - s->roff);
		s->rlen -= s->roff;
		s->roff = 0;
	}
	if (s->rlen < SYM_WIRE_HEADER) /* no message begun whose size we know: back to the base */
		shrink(s, &s->rbuf, &s->rcap, s->rlen);
	int rc;
	if (s->rcap - s->rlen < 4096 && (rc = reserve(s, &s->rbuf, &s->rcap, s->rlen + 16384)))
		return rc;
	ssize_t n = read(s->fd, s->rbuf + s->rlen, s->rcap - s->rlen);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	s->rlen += (size_t)n;
	return n;
}

long sym_stream_next(struct sym_stream *s, struct sym_msg *m, char *err, size_t errlen)
{
	long n = sym_wire_decode(s->rbuf + s->roff, s->rlen - s->roff, m, err, errlen);
	if (n > 0) {
		s->roff += (size_t)n;
		return n;
	}
	if (n == 0 && s->rlen - s->roff >= SYM_WIRE_HEADER) {
		/* Incomplete: make sure the whole message fits on the next read. */
		const uint8_t *h = s->rbuf + s->roff;
		size_t plen = (size_t)h[8] | (size_t)h[9] << 8 | (size_t)h[10] << 16 | (size_t)h[11] << 24;
		int rc = reserve(s, &s->rbuf, &s->rcap, s->roff + SYM_WIRE_HEADER + plen + 1);
		if (rc == -ENOBUFS)
			return snprintf(err, errlen, "a message of %zu bytes is more than the budget for messages in "
					"flight holds now", plen), -ENOBUFS;
		if (rc)
			return snprintf(err, errlen, "out of memory"), -ENOMEM;
	}
	return n;
}

int sym_stream_flush(struct sym_stream *s)
{
	while (s->woff < s->wlen) {
		ssize_t n = send(s->fd, s->wbuf + s->woff, s->wlen - s->woff, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 1;
			if (errno == EINTR)
				continue;
			return -errno;
		}
		s->woff += (size_t)n;
	}
	s->woff = s->wlen = 0;
	shrink(s, &s->wbuf, &s->wcap, 0);
	return 0;
}

int sym_stream_send(struct sym_stream *s, const struct sym_msg *m, size_t max_queued)
{
	size_t size = sym_wire_size(m);
	if (!size)
		return -EINVAL;
	if (sym_stream_queued(s) + size > max_queued)
		return -ENOBUFS;
	if (s->woff && s->woff == s->wlen)
		s->woff = s->wlen = 0;
	if (s->woff > s->wcap / 2) {
		memmove(s->wbuf, s->wbuf + s->woff, s->wlen - s->woff);
		s->wlen -= s->woff;
		s->woff = 0;
	}
	int rc = reserve(s, &s->wbuf, &s->wcap, s->wlen + size);
	if (rc)
		return rc;
	if (!sym_wire_encode(m, NULL, NULL, s->wbuf + s->wlen, size))
		return -EINVAL;
	s->wlen += size;
	rc = sym_stream_flush(s);
	return rc < 0 ? rc : 0;
}
