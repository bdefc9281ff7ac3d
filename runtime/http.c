#define _GNU_SOURCE
#include "runtime/http.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "core/time.h"
#include "runtime/net.h"

/* TLS 1.2 and 1.3 only (GnuTLS's NORMAL set otherwise). */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
/* Connections libmicrohttpd may hold beyond conn_max: the ones accepted in one
 * pass before the oldest waiting are evicted, and those closing. */
#define CONN_HEADROOM 64u
/* Bodies from this size up are mapped pages of their own, given back to the
 * system when the request is done (so the process's memory follows the budget). */
#define BODY_MMAP_MIN (128u << 10)

/* One connection, from its accept to its close (libmicrohttpd's "socket
 * context"). While it waits for a request (after its accept, or after its last
 * answer went out) it is on h->waiting, oldest first; while its request's body
 * comes in, on h->body; while the handler has its request, on neither. */
struct conn {
	struct conn *prev, *next;
	struct MHD_Connection *mc;
	int fd;
	int list;             /* 0: none, 1: h->waiting, 2: h->body */
	sym_time since;       /* when it began waiting for this request */
	uint64_t got;         /* body bytes of this request received so far */
	bool seen_request;    /* a request's headers came in on it (its TLS handshake is done) */
	bool killed;          /* shut down by us: libmicrohttpd closes it on its next pass */
	bool parked;          /* TLS: suspended while its handshake waits for the client */
};

struct list {
	struct conn *head, *tail;
};

struct sym_http {
	struct MHD_Daemon *d;
	int lfd;
	int ep;        /* the descriptor the process watches: libmicrohttpd's epoll set and the parked connections */
	int mhd_ep;
	struct sym_http_cfg cfg;
	struct sym_http_stats st;
	bool resumed; /* a connection was resumed: run libmicrohttpd soon */
	bool tls;
	struct list waiting, body;
	unsigned live;       /* connections tracked and not killed */
	unsigned handshaking; /* TLS connections that have not sent a request yet */
	sym_time timeout;    /* cfg.timeout_s */
	sym_time next_sweep; /* no deadline falls before this */
	size_t body_held;    /* bytes of request bodies reserved, across connections */
};

struct sym_http_req {
	struct sym_http *h;
	struct MHD_Connection *conn;
	struct conn *c;
	char method[16];
	char *path;
	char *body;
	size_t len, cap;
	size_t reserved;  /* of h->body_held */
	bool mapped;      /* body is an mmap of cap bytes */
	bool too_large, over_budget;
	bool dispatched;
	bool suspended;
	struct MHD_Response *resp; /* the answer, until queued */
	unsigned status;
};

static sym_time now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (sym_time)ts.tv_sec * SYM_S + ts.tv_nsec;
}

/* ---- the connections' lists ---- */

static void unlink_conn(struct sym_http *h, struct conn *c)
{
	struct list *l = c->list == 1 ? &h->waiting : c->list == 2 ? &h->body : NULL;
	if (!l)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		l->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		l->tail = c->prev;
	c->prev = c->next = NULL;
	c->list = 0;
}

/* The moment c's wait for its request ends: its request within timeout,
 * plus its body's bytes at min_rate. */
static sym_time deadline(const struct sym_http *h, const struct conn *c)
{
	sym_time t = c->since + h->timeout;
	if (c->list == 2) /* a body past body_max (discarded, answered 413) earns no more time */
		t += (sym_time)((double)(c->got < h->cfg.body_max ? c->got : h->cfg.body_max) / h->cfg.min_rate * 1e9);
	return t;
}

static void append_conn(struct sym_http *h, struct conn *c, int which)
{
	unlink_conn(h, c);
	struct list *l = which == 1 ? &h->waiting : &h->body;
	c->prev = l->tail;
	c->next = NULL;
	if (l->tail)
		l->tail->next = c;
	else
		l->head = c;
	l->tail = c;
	c->list = which;
	sym_time t = deadline(h, c);
	if (t < h->next_sweep)
		h->next_sweep = t;
}

static void unpark(struct sym_http *h, struct conn *c)
{
	if (!c->parked)
		return;
	epoll_ctl(h->ep, EPOLL_CTL_DEL, c->fd, NULL);
	c->parked = false;
	MHD_resume_connection(c->mc);
	h->resumed = true;
}

/* Closes c: libmicrohttpd sees its socket shut and closes it on its next pass
 * (a parked one is resumed for that). */
static void kill_conn(struct sym_http *h, struct conn *c, unsigned long long *counter)
{
	if (c->killed)
		return;
	c->killed = true;
	unlink_conn(h, c);
	h->live--;
	(*counter)++;
	shutdown(c->fd, SHUT_RDWR);
	unpark(h, c);
	h->resumed = true; /* run libmicrohttpd again: it has a connection to close */
}

/* Closes the connections past their deadlines; sets next_sweep. */
static void sweep(struct sym_http *h, sym_time now)
{
	if (now < h->next_sweep)
		return;
	h->next_sweep = SYM_TIME_NEVER;
	/* waiting: oldest first, so deadlines in order */
	while (h->waiting.head && deadline(h, h->waiting.head) <= now)
		kill_conn(h, h->waiting.head, &h->st.closed_timeout);
	if (h->waiting.head)
		h->next_sweep = deadline(h, h->waiting.head);
	for (struct conn *c = h->body.head, *next; c; c = next) {
		next = c->next;
		sym_time t = deadline(h, c);
		if (t <= now)
			kill_conn(h, c, &h->st.closed_slow);
		else if (t < h->next_sweep)
			h->next_sweep = t;
	}
}

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct sym_http *h = cls;
	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		struct conn *c = *socket_context;
		if (!c)
			return;
		if (c->parked) /* closing while parked: libmicrohttpd shuts down (cannot happen otherwise) */
			epoll_ctl(h->ep, EPOLL_CTL_DEL, c->fd, NULL);
		if (!c->killed)
			h->live--;
		if (h->tls && !c->seen_request)
			h->handshaking--;
		unlink_conn(h, c);
		free(c);
		*socket_context = NULL;
		return;
	}
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct conn *c = calloc(1, sizeof(*c));
	if (!c || !ci) {
		/* untracked: it cannot be timed out here, so it goes at once */
		free(c);
		if (ci)
			shutdown(ci->connect_fd, SHUT_RDWR);
		return;
	}
	c->mc = mc;
	c->fd = ci->connect_fd;
	c->since = now_ns();
	*socket_context = c;
	h->live++;
	if (h->tls)
		h->handshaking++;
	append_conn(h, c, 1);
	/* Past conn_max, the connection that has waited longest for its request makes
	 * room (idle keep-alives, slow or silent clients: not one whose request is in).
	 * When that is the new one itself, the new one goes. */
	if (h->live > h->cfg.conn_max) {
		struct conn *v = h->waiting.head;
		kill_conn(h, v, v == c ? &h->st.refused_full : &h->st.evicted);
	}
}

static struct conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* ---- request bodies: reserved against the budget, mapped when large ---- */

static void body_free(struct sym_http_req *r)
{
	if (r->mapped)
		munmap(r->body, r->cap);
	else
		free(r->body);
	r->body = NULL;
	r->cap = 0;
	r->mapped = false;
	r->h->body_held -= r->reserved;
	r->reserved = 0;
}

/* Reserves room for `want` bytes of body (beyond what is reserved); false
 * when the budget does not hold them. */
static bool reserve(struct sym_http_req *r, size_t want)
{
	struct sym_http *h = r->h;
	if (want <= r->reserved)
		return true;
	size_t more = want - r->reserved;
	if (h->body_held + more > h->cfg.body_budget)
		return false;
	h->body_held += more;
	r->reserved = want;
	return true;
}

/* Grows the buffer to hold cap bytes (reserved already). */
static bool grow(struct sym_http_req *r, size_t cap)
{
	if (cap <= r->cap)
		return true;
	if (cap >= BODY_MMAP_MIN) {
		long page = sysconf(_SC_PAGESIZE);
		cap = (cap + (size_t)page - 1) / (size_t)page * (size_t)page;
		void *p;
		if (r->mapped)
			p = mremap(r->body, r->cap, cap, MREMAP_MAYMOVE);
		else
			p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return false;
		if (!r->mapped && r->len)
			memcpy(p, r->body, r->len);
		if (!r->mapped)
			free(r->body);
		r->body = p;
		r->mapped = true;
	} else {
		char *b = realloc(r->body, cap);
		if (!b)
			return false;
		r->body = b;
	}
	r->cap = cap;
	return true;
}

static void req_free(struct sym_http_req *r)
{
	if (r->resp)
		MHD_destroy_response(r->resp);
	body_free(r);
	free(r->path);
	free(r);
}

static void count(struct sym_http *h, unsigned status)
{
	h->st.requests++;
	if (status >= 200 && status < 300)
		h->st.s2xx++;
	else if (status >= 400 && status < 500)
		h->st.s4xx++;
	else if (status >= 500)
		h->st.s5xx++;
}

static enum MHD_Result queue(struct sym_http_req *r)
{
	enum MHD_Result rc = MHD_queue_response(r->conn, r->status, r->resp);
	MHD_destroy_response(r->resp);
	r->resp = NULL;
	count(r->h, r->status);
	return rc;
}

/* Takes n more bytes of body: false when they are beyond body_max (too_large),
 * the budget (over_budget) or memory; the body is then dropped. */
static void append(struct sym_http_req *r, const char *data, size_t n)
{
	if (r->too_large || r->over_budget)
		return;
	if (r->len + n > r->h->cfg.body_max) {
		r->too_large = true;
		body_free(r);
		return;
	}
	size_t want = r->len + n + 1;
	if (want > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		while (cap < want)
			cap *= 2;
		if (cap > r->h->cfg.body_max + 1)
			cap = r->h->cfg.body_max + 1;
		if (cap < r->reserved)
			cap = r->reserved; /* the declared length, reserved at once */
		if (!reserve(r, cap) || !grow(r, cap)) {
			r->over_budget = true;
			body_free(r);
			return;
		}
	}
	memcpy(r->body + r->len, data, n);
	r->len += n;
	r->body[r->len] = 0;
}

/* The request's Content-Length headers: a second one that differs, or one
 * with Transfer-Encoding, is refused (a front proxy may read the body
 * otherwise than we do: request smuggling). */
struct cl_scan {
	const char *first, *other;
	bool te;
};

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	struct cl_scan *s = cls;
	if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
		value = value ? value : "";
		if (!s->first)
			s->first = value;
		else if (strcmp(s->first, value) && !s->other)
			s->other = value;
	} else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
		s->te = true;
	}
	return MHD_YES;
}

static const char *const retry_after[] = { "Retry-After", "1", NULL }; /* a 503 of the body budget */

static enum MHD_Result refuse(struct sym_http_req *r, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Answers at once, before the body is read (libmicrohttpd then closes the connection). */
static int reply_error(struct sym_http_req *r, unsigned status, const char *msg, const char *const *headers);

static enum MHD_Result refuse(struct sym_http_req *r, unsigned status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->dispatched = true;
	return reply_error(r, status, msg, status == 503 ? retry_after : NULL) == 0 ? queue(r) : MHD_NO;
}

/* A request's headers are in: its checks before any of its body is read. */
static enum MHD_Result begin(struct sym_http *h, struct sym_http_req *r)
{
	struct MHD_Connection *conn = r->conn;
	struct cl_scan s = { 0 };
	MHD_get_connection_values(conn, MHD_HEADER_KIND, scan_header, &s);
	if (s.other)
		return refuse(r, 400, "two Content-Length headers that differ ('%.40s' and '%.40s')", s.first, s.other);
	if (s.first && s.te)
		return refuse(r, 400, "both Content-Length and Transfer-Encoding: send one of them");
	if (!s.first)
		return MHD_YES; /* no body, or chunked: reserved as it comes */
	char *end;
	errno = 0;
	unsigned long long cl = strtoull(s.first, &end, 10);
	if (end == s.first || *end || errno || s.first[0] == '-')
		return refuse(r, 400, "Content-Length: expected a byte count, got '%.40s'", s.first);
	/* a declared length above the limit is refused before its body is read */
	if (cl > h->cfg.body_max)
		return refuse(r, 413, "the body (%llu bytes) is larger than the limit of %zu bytes", cl, h->cfg.body_max);
	/* and one the budget of bodies in flight cannot hold now, with 503 (retry later) */
	if (cl && !reserve(r, (size_t)cl + 1)) {
		h->st.refused_budget++;
		return refuse(r, 503, "the server holds %zu bytes of request bodies, its budget is %zu "
				      "(http_body_budget): retry later", h->body_held, h->cfg.body_budget);
	}
	return MHD_YES;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				 const char *version, const char *upload, size_t *upsize, void **con_cls)
{
	(void)version;
	struct sym_http *h = cls;
	struct sym_http_req *r = *con_cls;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		r->h = h;
		r->conn = conn;
		r->c = conn_of(conn);
		snprintf(r->method, sizeof(r->method), "%s", method);
		r->path = strdup(url ? url : "/");
		if (!r->path) {
			free(r);
			return MHD_NO;
		}
		*con_cls = r;
		if (r->c) {
			if (h->tls && !r->c->seen_request)
				h->handshaking--;
			r->c->seen_request = true;
			r->c->got = 0;
			if (!r->c->killed)
				append_conn(h, r->c, 2); /* keeps its `since`: the body's allowance counts from it */
		}
		return begin(h, r);
	}
	if (*upsize) {
		if (r->c)
			r->c->got += *upsize;
		append(r, upload, *upsize);
		*upsize = 0;
		return MHD_YES;
	}
	if (r->resp)
		return queue(r);
	if (r->dispatched)
		return MHD_NO; /* resumed with no answer: cannot happen */
	r->dispatched = true;
	if (r->c)
		unlink_conn(h, r->c); /* the request is in: no deadline until its answer is out */
	if (r->over_budget) {
		h->st.refused_budget++;
		char msg[256];
		snprintf(msg, sizeof(msg), "the server holds %zu bytes of request bodies, its budget is %zu "
			 "(http_body_budget): retry later", h->body_held, h->cfg.body_budget);
		reply_error(r, 503, msg, retry_after);
	} else if (r->too_large) {
		sym_http_reply_error(r, 413, "the body is larger than the limit of %zu bytes", h->cfg.body_max);
	} else if (!r->body && !grow(r, 1)) {
		return MHD_NO;
	} else {
		r->body[r->len] = 0;
		h->cfg.handler(h->cfg.ctx, r);
	}
	if (r->resp)
		return queue(r);
	/* the handler has what it needs of the body: it goes now, not when the answer comes */
	body_free(r);
	MHD_suspend_connection(conn);
	r->suspended = true;
	return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode why)
{
	(void)why;
	struct sym_http *h = cls;
	struct sym_http_req *r = *con_cls;
	if (r)
		req_free(r);
	*con_cls = NULL;
	/* the connection waits for its next request from now (when it stays open) */
	struct conn *c = conn_of(conn);
	if (c && !c->killed) {
		c->since = now_ns();
		c->got = 0;
		append_conn(h, c, 1);
	}
}

void sym_http_set_limits(struct sym_http *h, size_t body_max, size_t body_budget, unsigned min_rate)
{
	if (!h)
		return;
	if (body_max)
		h->cfg.body_max = body_max;
	h->cfg.body_budget = body_budget ? body_budget : 8 * (h->cfg.body_max + 1);
	h->cfg.min_rate = min_rate ? min_rate : 32768;
}

int sym_http_start(struct sym_http **out, const struct sym_http_cfg *cfg, char *err, size_t errlen)
{
	*out = NULL;
	struct sym_http *h = calloc(1, sizeof(*h));
	if (!h)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	h->cfg = *cfg;
	h->ep = -1;
	if (!h->cfg.conn_max)
		h->cfg.conn_max = 1024;
	if (!h->cfg.timeout_s)
		h->cfg.timeout_s = 10;
	if (!h->cfg.min_rate)
		h->cfg.min_rate = 32768;
	if (!h->cfg.body_budget)
		h->cfg.body_budget = 8 * (h->cfg.body_max + 1);
	h->timeout = (sym_time)h->cfg.timeout_s * SYM_S;
	h->next_sweep = SYM_TIME_NEVER;
	char msg[256];
	h->lfd = sym_tcp_listen(cfg->host, cfg->port, msg, sizeof(msg));
	if (h->lfd < 0) {
		int rc = h->lfd;
		snprintf(err, errlen, "HTTP on %s:%s: %s", cfg->host, cfg->port, msg);
		free(h);
		return rc;
	}
	bool tls = h->tls = cfg->tls_cert && cfg->tls_key;
	if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		close(h->lfd);
		free(h);
		return snprintf(err, errlen, "HTTPS on %s:%s: this libmicrohttpd was built without TLS", cfg->host,
				cfg->port), -EINVAL;
	}
	/* The limits (http.h): libmicrohttpd's own timeout closes a connection
	 * without progress for timeout_s (a client not reading its answer); ours
	 * (sweep) a request not in by its deadline; at most conn_max + CONN_HEADROOM
	 * at once in libmicrohttpd, conn_max after eviction (on_connection), and
	 * per_ip_max from one address; a request's headers within the default
	 * 32 KiB of memory per connection (431 above, from libmicrohttpd). */
	unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | (tls ? MHD_USE_TLS : 0);
	unsigned limit = h->cfg.conn_max + CONN_HEADROOM;
	if (tls)
		h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_access, h, MHD_OPTION_LISTEN_SOCKET, h->lfd,
					MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_NOTIFY_CONNECTION,
					on_connection, h, MHD_OPTION_CONNECTION_TIMEOUT, h->cfg.timeout_s,
					MHD_OPTION_CONNECTION_LIMIT, limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
					cfg->per_ip_max, MHD_OPTION_HTTPS_MEM_CERT, cfg->tls_cert, MHD_OPTION_HTTPS_MEM_KEY,
					cfg->tls_key, MHD_OPTION_HTTPS_PRIORITIES, TLS_PRIORITIES, MHD_OPTION_END);
	else
		h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_access, h, MHD_OPTION_LISTEN_SOCKET, h->lfd,
					MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_NOTIFY_CONNECTION,
					on_connection, h, MHD_OPTION_CONNECTION_TIMEOUT, h->cfg.timeout_s,
					MHD_OPTION_CONNECTION_LIMIT, limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
					cfg->per_ip_max, MHD_OPTION_END);
	if (!h->d) {
		close(h->lfd);
		free(h);
		return snprintf(err, errlen, "HTTP%s on %s:%s: libmicrohttpd did not start%s", tls ? "S" : "", cfg->host,
				cfg->port, tls ? " (is the certificate and key PEM, and do they match?)" : ""),
		       -EINVAL;
	}
	/* the process watches an epoll set of ours: libmicrohttpd's, and the parked connections */
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
	h->mhd_ep = di ? di->epoll_fd : -1;
	h->ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	if (h->mhd_ep < 0 || h->ep < 0 || epoll_ctl(h->ep, EPOLL_CTL_ADD, h->mhd_ep, &ev)) {
		int e = errno;
		MHD_stop_daemon(h->d);
		close(h->lfd);
		if (h->ep >= 0)
			close(h->ep);
		free(h);
		return snprintf(err, errlen, "HTTP on %s:%s: epoll: %s", cfg->host, cfg->port, strerror(e)), -e;
	}
	*out = h;
	return 0;
}

static unsigned connections(const struct sym_http *h);

void sym_http_stop(struct sym_http *h)
{
	if (!h)
		return;
	/* let answers given just now go out */
	for (int i = 0; i < 20; i++) {
		if (!connections(h))
			break;
		MHD_run(h->d);
		usleep(2000);
	}
	/* libmicrohttpd stops only with no connection suspended */
	for (struct conn *c = h->waiting.head; c; c = c->next)
		unpark(h, c);
	MHD_stop_daemon(h->d);
	close(h->lfd);
	close(h->ep);
	free(h);
}

int sym_http_fd(const struct sym_http *h)
{
	return h->ep;
}

static unsigned connections(const struct sym_http *h)
{
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	return di ? di->num_connections : 0;
}

/* TLS: libmicrohttpd 0.9.75 in epoll mode keeps a connection whose handshake
 * waits for the client (GnuTLS reads the socket itself, so libmicrohttpd never
 * sees it come up empty) marked ready, and runs it again on every pass: one
 * connection that sent part of a ClientHello kept a core busy until its timeout.
 * Such a connection, with nothing to read, is parked: suspended, its socket
 * watched in our own set, and resumed when the client sends more (or closes). */
static void park_handshakes(struct sym_http *h)
{
	MHD_UNSIGNED_LONG_LONG t;
	if (!h->tls || !h->handshaking || h->resumed || MHD_get_timeout(h->d, &t) != MHD_YES || t != 0)
		return;
	for (struct conn *c = h->waiting.head; c; c = c->next) {
		int avail = 0;
		if (c->seen_request || c->parked || c->killed || ioctl(c->fd, FIONREAD, &avail) || avail > 0)
			continue;
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.ptr = c };
		if (epoll_ctl(h->ep, EPOLL_CTL_ADD, c->fd, &ev))
			continue;
		MHD_suspend_connection(c->mc);
		c->parked = true;
		h->st.parked++;
	}
}

void sym_http_run(struct sym_http *h)
{
	/* the parked connections the client sent something on (or closed) */
	/* (level-triggered: those beyond this batch are there again next time) */
	struct epoll_event evs[256];
	int n = epoll_wait(h->ep, evs, 256, 0);
	for (int i = 0; i < n; i++)
		if (evs[i].data.ptr)
			unpark(h, evs[i].data.ptr);
	sweep(h, now_ns());
	/* a resumed connection's answer is queued by one pass and sent by the
	 * next: run until libmicrohttpd has nothing left to do at once */
	h->resumed = false;
	MHD_UNSIGNED_LONG_LONG t = 0;
	/* At its connection limit, libmicrohttpd takes the listening socket out of its epoll set,
	 * and puts it back at the start of the pass after the one that closes a connection; in
	 * external-epoll mode nothing would wake us for that pass (no connection left to time
	 * out, the listener not watched), and the server would never accept again. So a pass
	 * that closed connections is followed by another, as is one that left work due now. */
	bool again = true;
	for (int i = 0; i < 6 && again; i++) {
		unsigned before = connections(h);
		MHD_run(h->d);
		again = connections(h) < before || (MHD_get_timeout(h->d, &t) == MHD_YES && t == 0);
	}
	park_handshakes(h);
}

bool sym_http_pending(const struct sym_http *h)
{
	return h && h->resumed;
}

int sym_http_timeout_ms(struct sym_http *h)
{
	MHD_UNSIGNED_LONG_LONG t;
	if (h->resumed)
		return 0;
	int64_t ms = -1;
	if (MHD_get_timeout(h->d, &t) == MHD_YES)
		ms = t > 60000 ? 60000 : (int64_t)t;
	if (h->next_sweep != SYM_TIME_NEVER) {
		sym_time left = h->next_sweep - now_ns();
		int64_t sm = left <= 0 ? 0 : (left + SYM_MS - 1) / SYM_MS;
		if (ms < 0 || sm < ms)
			ms = sm > 60000 ? 60000 : sm;
	}
	return (int)ms;
}

const char *sym_http_method(const struct sym_http_req *r)
{
	return r->method;
}

const char *sym_http_path(const struct sym_http_req *r)
{
	return r->path;
}

const char *sym_http_header(const struct sym_http_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *sym_http_query(const struct sym_http_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *sym_http_body(const struct sym_http_req *r, size_t *len)
{
	*len = r->len;
	return r->body ? r->body : "";
}

int sym_http_reply(struct sym_http_req *r, unsigned status, const char *content_type, const void *body,
		   size_t len, const char *const *headers)
{
	if (r->resp)
		return -EALREADY;
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	int rc = 0;
	if (!resp) {
		static const char oom[] = "{\"error\": \"out of memory\"}";
		resp = MHD_create_response_from_buffer(sizeof(oom) - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
		status = 500;
		content_type = "application/json";
		headers = NULL;
		rc = -ENOMEM;
		if (!resp)
			return rc; /* the connection is closed when it resumes with no answer */
	}
	if (content_type)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	for (int i = 0; headers && headers[i] && headers[i + 1]; i += 2)
		MHD_add_response_header(resp, headers[i], headers[i + 1]);
	r->resp = resp;
	r->status = status;
	if (r->suspended) {
		r->suspended = false;
		MHD_resume_connection(r->conn);
		r->h->resumed = true;
	}
	return rc;
}

/* {"error": msg}, JSON-escaped. */
static int reply_error(struct sym_http_req *r, unsigned status, const char *msg, const char *const *headers)
{
	cJSON *o = cJSON_CreateObject();
	char *text = o && cJSON_AddStringToObject(o, "error", msg) ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	int rc = sym_http_reply(r, status, "application/json", text ? text : "{}", text ? strlen(text) : 2, headers);
	free(text);
	return rc;
}

int sym_http_reply_error(struct sym_http_req *r, unsigned status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return reply_error(r, status, msg, NULL);
}

int sym_http_reply_json(struct sym_http_req *r, unsigned status, cJSON *o)
{
	char *text = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	int rc = text ? sym_http_reply(r, status, "application/json", text, strlen(text), NULL)
		      : sym_http_reply_error(r, 500, "out of memory");
	cJSON_free(text);
	return rc;
}

int sym_http_reply_method(struct sym_http_req *r, const char *allow)
{
	char msg[1024];
	snprintf(msg, sizeof(msg), "%s %s: this endpoint takes %s", r->method, r->path, allow);
	const char *h[] = { "Allow", allow, NULL };
	return reply_error(r, 405, msg, h);
}

void sym_http_stats(const struct sym_http *h, struct sym_http_stats *out)
{
	*out = h->st;
	out->connections = h->live;
	out->body_bytes = h->body_held;
}
