/* runtime/http.h - an HTTP/1.1 server inside a process's own event loop.
 *
 * A thin layer over libmicrohttpd (Debian's libmicrohttpd-dev), which does
 * the parsing, keep-alive, chunked bodies, 100-continue and timeouts. It
 * runs in libmicrohttpd's external-epoll mode: the process adds
 * sym_http_fd() to its epoll set, calls sym_http_run() when it is readable
 * and at least every sym_http_timeout_ms(), and so every handler runs on
 * the process's one thread, with no lock, beside its fabric and its timers.
 *
 * The handler is called once per request, when the whole body is there. It
 * may answer at once or later (the frontend answers an inference when its
 * result comes back): until sym_http_reply(), the connection is suspended
 * and costs nothing (its body is freed when the handler returns). A body
 * above body_max is answered 413 without calling the handler. Every request
 * gets exactly one answer; a request whose connection closes while it waits
 * stays valid until it is answered.
 *
 * The bounds a client cannot push past (docs/runtime.md, "Client-facing
 * bounds"):
 *   - a connection's next request (its TLS handshake, headers and body) must
 *     be in within timeout_s of its accept or of its last answer, plus its
 *     body's bytes at min_rate: a silent, idle or slow client (slowloris) is
 *     closed at that deadline, whatever it trickles;
 *   - the request bodies held at once, across connections, stay within
 *     body_budget bytes: a request whose declared length the budget cannot
 *     hold now gets 503 (Retry-After: 1) before its body is read, a chunked
 *     one when it outgrows it;
 *   - at most conn_max connections (per_ip_max from one address): past
 *     conn_max the connection that has waited longest for its request (never
 *     one whose request is in) is closed to make room, so idle connections
 *     cannot lock others out;
 *   - two Content-Length headers that differ, or one with Transfer-Encoding,
 *     get 400; HTTPS speaks TLS 1.2 and 1.3 only, and a handshake left
 *     half-done costs no CPU while it waits (see park_handshakes in http.c).
 */
#ifndef SYM_HTTP_H
#define SYM_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

struct sym_http;
struct sym_http_req;

typedef void (*sym_http_handler)(void *ctx, struct sym_http_req *r);

struct sym_http_cfg {
	const char *host;         /* address to bind (a name or a numeric address) */
	const char *port;
	size_t body_max;          /* larger bodies get 413 */
	sym_http_handler handler;
	void *ctx;
	unsigned conn_max;        /* connections at once (past it the longest waiting is closed); 0: 1024 */
	unsigned timeout_s;       /* a request not in this long after the connection began waiting for it
				   * (plus its body at min_rate) closes the connection; 0: 10 */
	unsigned per_ip_max;      /* connections at once from one address; 0: no limit of its own */
	const char *tls_cert, *tls_key; /* PEM text: HTTPS (libmicrohttpd with GnuTLS); NULL: plain HTTP */
	unsigned min_rate;        /* bytes/s a request body must keep up (beyond timeout_s); 0: 32768 */
	size_t body_budget;       /* bytes of request bodies held at once, in all; 0: 8 x body_max */
};

/* Listens. Returns 0, or -EINVAL / -EADDRINUSE / -ENOMEM with a message. */
int sym_http_start(struct sym_http **out, const struct sym_http_cfg *cfg, char *err, size_t errlen);

/* A reload: the limits read per request (body_max, 0: as it is; body_budget
 * and min_rate, 0 as in sym_http_cfg) change for the requests that come from now on.
 * The connection limits and timeout stay the start's (libmicrohttpd's).
 * Accepts NULL. */
void sym_http_set_limits(struct sym_http *h, size_t body_max, size_t body_budget, unsigned min_rate);

/* Stops listening and closes every connection. Requests still waiting must
 * have been answered. Accepts NULL. */
void sym_http_stop(struct sym_http *h);

/* The descriptor to watch for input (an epoll set of libmicrohttpd's). */
int sym_http_fd(const struct sym_http *h);

/* Handles whatever is ready; never blocks. */
void sym_http_run(struct sym_http *h);

/* True when an answer given since the last sym_http_run() waits to be sent:
 * call sym_http_run() before sleeping. */
bool sym_http_pending(const struct sym_http *h);

/* How long until sym_http_run() must be called again (ms), or -1: no limit. */
int sym_http_timeout_ms(struct sym_http *h);

/* The request. Strings stay valid until the request is answered; the body
 * only until the handler returns. */
const char *sym_http_method(const struct sym_http_req *r);
const char *sym_http_path(const struct sym_http_req *r); /* without the query */
const char *sym_http_header(const struct sym_http_req *r, const char *name); /* NULL when absent */
const char *sym_http_query(const struct sym_http_req *r, const char *name);  /* NULL when absent */
const char *sym_http_body(const struct sym_http_req *r, size_t *len);       /* NUL-terminated */

/* Answers r (once; the body is copied). headers: NULL, or name, value, ...,
 * NULL. Returns 0 or -ENOMEM (the request is then answered 500). After it,
 * r must not be used. */
int sym_http_reply(struct sym_http_req *r, unsigned status, const char *content_type, const void *body,
		   size_t len, const char *const *headers);

/* Answers {"error": "<message>"} (JSON-escaped), the KServe error form. */
int sym_http_reply_error(struct sym_http_req *r, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Answers 405: the endpoint takes only `allow` ("GET, HEAD", "POST"), which
 * the Allow header and the error message say. */
int sym_http_reply_method(struct sym_http_req *r, const char *allow);

/* Answers with o as JSON (application/json), and frees o; NULL (out of
 * memory) answers 500. */
int sym_http_reply_json(struct sym_http_req *r, unsigned status, cJSON *o);

/* Requests served (answered) so far, and of those, by status class; the
 * connections closed by the bounds above, by reason; and now: connections
 * open, bytes of request bodies held. */
struct sym_http_stats {
	unsigned long long requests, s2xx, s4xx, s5xx;
	unsigned long long closed_timeout; /* no request within timeout_s (idle, silent, slow headers or handshake) */
	unsigned long long closed_slow;    /* a body below min_rate */
	unsigned long long evicted;        /* closed to make room for a new one (conn_max) */
	unsigned long long refused_full;   /* new ones closed: conn_max held, none of them waiting */
	unsigned long long refused_budget; /* requests answered 503: the body budget was spent */
	unsigned long long parked;         /* TLS handshakes parked while they waited for the client */
	unsigned connections;
	size_t body_bytes;
};
void sym_http_stats(const struct sym_http *h, struct sym_http_stats *out);

#endif
