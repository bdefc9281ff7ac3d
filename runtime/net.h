/* runtime/net.h - the clients' native protocol: wire-format messages over a
 * plain TCP stream (clients are not on the RDMA fabric).
 *
 * A stream is nonblocking. Reads accumulate into a buffer and
 * sym_stream_next hands out one whole message at a time; writes queue into a
 * buffer that sym_stream_flush drains as the socket accepts it. A malformed
 * message (sym_wire_decode's -EPROTO) means the peer must be dropped: the
 * stream cannot be resynchronised.
 *
 * Not thread-safe: one thread per stream.
 */
#ifndef SYM_NET_H
#define SYM_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/wire.h"

/* Bytes that a set of streams may hold beyond SYM_STREAM_BASE each, in all:
 * a frontend's native clients share one (clients_budget). */
struct sym_budget {
	size_t used, max;
};

/* A stream's read and write buffers each hold up to this much of their own;
 * capacity beyond it is charged to the stream's budget, if it has one, and
 * given back when the buffer empties. */
#define SYM_STREAM_BASE 32768

struct sym_stream {
	int fd;
	struct sym_budget *budget; /* NULL: none (set after sym_stream_init, before any I/O) */
	uint8_t *rbuf;
	size_t rlen, rcap, roff; /* bytes held, capacity, bytes already handed out */
	uint8_t *wbuf;
	size_t wlen, wcap, woff; /* bytes queued, capacity, bytes already written */
};

/* A listening socket on host:port (SO_REUSEADDR, nonblocking). Returns the
 * fd, or -errno with a message. */
int sym_tcp_listen(const char *host, const char *port, char *err, size_t errlen);

/* Connects to host:port (blocking, at most timeout_ms), then makes the
 * socket nonblocking with TCP_NODELAY. Returns the fd or -errno. */
int sym_tcp_connect(const char *host, const char *port, int timeout_ms, char *err, size_t errlen);

/* Accepts one pending connection (nonblocking, TCP_NODELAY): fd, -EAGAIN, or -errno. */
int sym_tcp_accept(int lfd);

void sym_stream_init(struct sym_stream *s, int fd);
/* Closes the fd and frees the buffers. */
void sym_stream_close(struct sym_stream *s);

/* Reads what the socket holds. Returns the bytes read (> 0), 0 at end of
 * stream, -EAGAIN when nothing was there, -ENOBUFS when the budget cannot
 * hold the buffer this needs, or -errno. */
long sym_stream_read(struct sym_stream *s);

/* The next whole message: its size (> 0, m points into the buffer until the
 * next read), 0 when none is complete, -ENOBUFS when the budget cannot hold
 * the incomplete message's declared size, or -EPROTO with the reason. */
long sym_stream_next(struct sym_stream *s, struct sym_msg *m, char *err, size_t errlen);

/* Encodes m and queues it, then tries to write. Returns 0, -EINVAL (m out
 * of bounds), -ENOBUFS (more than max_queued bytes would be waiting, or more
 * than the budget holds), or a write error. */
int sym_stream_send(struct sym_stream *s, const struct sym_msg *m, size_t max_queued);

/* Writes what is queued. Returns 0 when all is written, 1 when some waits
 * (wait for EPOLLOUT), or -errno. */
int sym_stream_flush(struct sym_stream *s);

static inline size_t sym_stream_queued(const struct sym_stream *s) { return s->wlen - s->woff; }

#endif
