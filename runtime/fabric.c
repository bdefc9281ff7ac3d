/* runtime/fabric.c - the libfabric transport (see fabric.h).
 *
 * Design notes:
 *
 * - One EQ (connection management) and one CQ (every endpoint's sends,
 *   receives and reads), both with FI_WAIT_FD so that their fds can sit in
 *   an epoll set of our own (sym_fab_fd). A provider that cannot give fds
 *   gets FI_WAIT_NONE queues; then sym_fab_fd is -1 and sym_fab_wait sleeps
 *   for at most 1 ms at a time.
 *
 * - Every posted operation carries a `struct op` that lives inside its
 *   connection. sym_fab_close closes the endpoint first (libfabric then
 *   drops its outstanding operations without completions, fi_endpoint(3)),
 *   then drains the CQ, ignoring what it finds for that connection, and only
 *   then frees the connection with its buffers and ops: no completion can
 *   name freed memory afterwards. EQ entries are matched to connections by
 *   comparing fid pointers, never by reading a closed fid.
 *
 * - Completions become entries of an internal queue that sym_fab_poll hands
 *   out; this lets sym_fab_send and sym_fab_read progress the CQ while they
 *   wait for room without losing anything. A received buffer goes back to
 *   the provider at the next sym_fab_poll, once the caller is done with it.
 *
 * - Registration follows the mr_mode bits fi_getinfo reports (we offer
 *   LOCAL, VIRT_ADDR, ALLOCATED, PROV_KEY, ENDPOINT): descriptors go with
 *   every send, receive and read; keys come from fi_mr_key (we pick unique
 *   requested keys for providers without PROV_KEY); remote addresses are
 *   offsets unless VIRT_ADDR. Each connection's buffers are bound to its
 *   endpoint under ENDPOINT; caller registrations are then refused.
 *
 * - No room (all tx_depth ops in flight, or -FI_EAGAIN): sends and reads
 *   progress the CQ and EQ and retry for up to STALL_NS, then fail with
 *   -ENOBUFS. The caller's thread spins meanwhile; a stall that long means
 *   the peer stopped draining.
 *
 * - A connection that fails is marked down at once (sym_fab_conn_up turns
 *   false) and gets its SYM_FAB_CLOSED at the end of the current or next
 *   poll, after the messages that arrived before it. Its reads that have
 *   not ended yet end then with -ECONNABORTED; nothing else is reported
 *   about it afterwards.
 */

#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "runtime/fabric.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <sodium.h>

#include "core/grow.h"
#include "runtime/cred.h"
#include "runtime/handshake.h"

#define FAB_API FI_VERSION(1, 9)
#define MR_MODE_WANTED (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT)
#define STALL_NS (200 * 1000000LL) /* how long send/read progress the CQ waiting for room */
#define CQ_BATCH 32
#define DEPTH_MAX 65536
#define MSG_MAX_LIMIT (16u << 20)
#define AUTH_NS (1000 * 1000000LL) /* a peer has this long to authenticate */
#define AUTH_PENDING_MAX 64        /* accepted connections still authenticating, at most */
#define CONNREQ_BATCH 16           /* connection requests taken in one poll */
#define HS_MAX SYM_HS_MAX
#define SEAL 16                    /* crypto_aead_chacha20poly1305_IETF_ABYTES */

enum op_kind { OP_RX, OP_TX, OP_SEND, OP_READ };

struct op {
	struct fi_context2 fictx; /* first: for providers that want FI_CONTEXT(2) */
	struct sym_fab_conn *c;
	struct op *next; /* free tx ops, early or held receives */
	uint8_t *buf;	 /* f->buf_size bytes of the conn's registered buffer */
	void *ctx;	 /* OP_READ: the caller's */
	size_t len;	 /* OP_RX: bytes received */
	enum op_kind kind;
	bool reported; /* OP_READ: its event is already queued */
};

/* ST_AUTH: connected, running the handshake (only with a secret); the caller sees it at ST_UP */
enum conn_state { ST_CONNECTING, ST_ACCEPTING, ST_AUTH, ST_UP, ST_DOWN, ST_FREEING };

struct sym_fab_conn {
	struct sym_fab *f;
	struct sym_fab_conn *prev, *next; /* f->conns */
	struct sym_fab_conn *down_next;	  /* f->down: CLOSED not queued yet */
	struct fid_ep *ep;
	struct fi_info *info; /* kept while ep lives: some providers (sockets) point into it */
	struct fid_mr *mr;
	void *desc;
	uint8_t *bufs;
	size_t bufs_len; /* bytes mapped at bufs */
	struct op *ops; /* rx_depth receives, then tx_depth sends/reads */
	struct op *tx_free;
	struct op *early, *early_tail; /* received before the CM event said connected */
	void *user;
	enum conn_state state;
	bool announced; /* the caller holds this pointer */
	bool was_up;	/* CONNECTED/ACCEPTED queued */
	bool on_down;
	bool closed_queued;
	bool initiator;	      /* we connected (else we accepted) */
	bool in_hs;	      /* counted in f->nhs */
	int64_t auth_deadline; /* ST_AUTH, ST_ACCEPTING: mark it down after this */
	int64_t accepted_at;   /* accepted: when (the oldest goes first under a flood) */
	struct sym_fab_peer want; /* initiator: whom it means to reach */
	struct fid_domain *dom;	  /* cfg.isolate, accepted: its own domain (NULL: f's) ... */
	struct fid_cq *cq;	  /* ... and completion queue */
	struct sym_hs hs;	  /* the handshake (runtime/handshake.h), then the session keys */
	bool sealed;		  /* up with session keys: every message sealed */
	uint64_t tx_seq, rx_seq;
	char src[80];	      /* accepted: the peer's address, without the port */
	char peer[80];
	char reason[160];
};

struct sym_fab_mr {
	struct sym_fab *f;
	struct sym_fab_conn *conn; /* registered in this connection's own domain (sym_fab_mr_reg_conn) */
	struct sym_fab_mr *prev, *next;
	struct fid_mr *mr;
	uintptr_t base;
	size_t len;
	unsigned access;
};

struct qent {
	enum sym_fab_ev_type type;
	struct sym_fab_conn *c; /* NULL: dropped by sym_fab_close */
	struct op *op;		/* MSG */
	void *ctx;
	size_t len;
	int status;
};

struct sym_fab {
	struct fi_info *hints, *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_cq *cq;
	struct fid_pep *pep;
	struct fi_info *pep_info;
	int epfd; /* -1: the provider gave no wait fds */
	bool isolate; /* cfg.isolate: accepted connections get domains of their own */
	int connreqs;  /* connection requests taken in this poll (CONNREQ_BATCH at most) */
	bool eq_more;  /* the event queue was left with more to read */
	int nisolated; /* connections with a domain of their own */
	int port;
	uint64_t mr_mode;
	size_t msg_max;
	size_t buf_size; /* an op's buffer: msg_max (at least a handshake message) and a seal */
	size_t rx_depth, tx_depth;
	struct sym_fab_conn *conns, *down;
	struct sym_fab_mr *mrs;
	struct op *held; /* receives handed out by the last poll */
	struct qent *q;
	size_t qhead, qlen, qcap;
	int fatal;
	bool auth;		  /* a credential was given: every connection authenticates */
	struct sym_cred cred;
	struct sym_revoked revoked; /* sorted serials */
	int authing;		  /* accepted connections not up yet */
	int nhs;		  /* connections whose handshake is not over (auth_progress) */
	bool hs_todo;		  /* a handshake message waits to be sent */
	uint64_t refused;	  /* peers refused (every class) */
	uint64_t refusals[SYM_FAB_REFUSE_N];
	char refusal[200];	  /* why the last one was refused */
	char prov[32];
	char descr[200];
	char err[256];
};

/* ---- errors ---- */

/* libfabric's codes below 256 are errno values; the others get the nearest one. */
static int neg_errno(long ret)
{
	long e = ret < 0 ? -ret : ret;
	if (e > 0 && e < FI_ERRNO_OFFSET)
		return -(int)e;
	switch (e) {
	case FI_ETRUNC:
	case FI_ETOOSMALL:
		return -EMSGSIZE;
	case FI_ENOKEY:
		return -EACCES;
	case FI_EOPBADSTATE:
		return -ENOTCONN;
	case FI_EBADFLAGS:
	case FI_ENOEQ:
	case FI_ENOCQ:
	case FI_EDOMAIN:
		return -EINVAL;
	default:
		return -EIO;
	}
}

/* Formats "provider: what: libfabric error" into err and f->err; returns -errno. */
static int fail(struct sym_fab *f, char *err, size_t errlen, long ret, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int fail(struct sym_fab *f, char *err, size_t errlen, long ret, const char *fmt, ...)
{
	char what[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	long e = ret < 0 ? -ret : ret;
	snprintf(f->err, sizeof(f->err), "libfabric provider '%s': %s: %s", f->prov, what, fi_strerror((int)e));
	if (err && errlen)
		snprintf(err, errlen, "%s", f->err);
	return neg_errno(ret);
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- the event queue ---- */

static void qpush(struct sym_fab *f, enum sym_fab_ev_type type, struct sym_fab_conn *c, struct op *op, void *ctx,
		  size_t len, int status)
{
	if (f->qhead + f->qlen == f->qcap) {
		if (f->qhead) {
			memmove(f->q, f->q + f->qhead, f->qlen * sizeof(*f->q));
			f->qhead = 0;
		} else {
			if (sym_grow(&f->q, &f->qcap, f->qcap + 1, sizeof(*f->q), 64)) {
				f->fatal = -ENOMEM;
				return;
			}
		}
	}
	f->q[f->qhead + f->qlen++] = (struct qent){ type, c, op, ctx, len, status };
}

/* ---- connections: state changes ---- */

static void hs_end(struct sym_fab_conn *c)
{
	if (c->in_hs) {
		c->in_hs = false;
		c->f->nhs--;
	}
}

static const char *const refusal_names[SYM_FAB_REFUSE_N] = { "protocol", "credential", "identity", "revoked",
								 "timeout", "flood", "message" };

const char *sym_fab_refusal_name(int why)
{
	return why >= 0 && why < SYM_FAB_REFUSE_N ? refusal_names[why] : "?";
}

static void count_refusal(struct sym_fab *f, int why, const char *reason)
{
	f->refused++;
	f->refusals[why]++;
	snprintf(f->refusal, sizeof(f->refusal), "%s", reason);
}

static void mark_down_v(struct sym_fab_conn *c, int why, const char *fmt, va_list ap)
{
	if (c->state != ST_CONNECTING && c->state != ST_ACCEPTING && c->state != ST_AUTH && c->state != ST_UP)
		return;
	bool pending = c->state != ST_UP && !c->initiator;
	if (pending)
		c->f->authing--;
	/* a peer refused once up (revoked, a forged message) loses the connection
	 * now, with the reads of our memory it allowed, not when the caller closes it */
	if (why >= 0 && c->state == ST_UP && c->ep)
		fi_shutdown(c->ep, 0);
	hs_end(c);
	c->state = ST_DOWN;
	vsnprintf(c->reason, sizeof(c->reason), fmt, ap);
	sodium_memzero(c->hs.eph_sk, sizeof(c->hs.eph_sk)); /* the session keys stay: messages that came before go on */
	/* a peer we accepted, gone before it authenticated; or any peer refused */
	if (why >= 0 || pending)
		count_refusal(c->f, why >= 0 ? why : SYM_FAB_REFUSE_PROTOCOL, c->reason);
	c->down_next = c->f->down;
	c->f->down = c;
	c->on_down = true;
}

static void mark_down(struct sym_fab_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mark_down(struct sym_fab_conn *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	mark_down_v(c, -1, fmt, ap);
	va_end(ap);
}

/* Marks c down as a refused peer of class why. */
static void refuse(struct sym_fab_conn *c, int why, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void refuse(struct sym_fab_conn *c, int why, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	mark_down_v(c, why, fmt, ap);
	va_end(ap);
}

/* The caller learns of c: CONNECTED or ACCEPTED, then what came since. */
static void go_up(struct sym_fab_conn *c)
{
	if (!c->initiator)
		c->f->authing--;
	hs_end(c);
	qpush(c->f, c->announced ? SYM_FAB_CONNECTED : SYM_FAB_ACCEPTED, c, NULL, NULL, 0, 0);
	c->state = ST_UP;
	c->announced = true;
	c->was_up = true;
}

/* ---- authentication (see fabric.h; the messages: runtime/handshake.h) ----
 *
 * The handshake's sends wait for the end of the current poll
 * (auth_progress): a send can progress the CQ, and that must not happen in
 * the middle of reading it. */

static void auth_start(struct sym_fab_conn *c)
{
	sym_hs_start(&c->hs, &c->f->cred, &c->f->revoked, c->initiator, c->want.role, c->want.id);
	c->f->hs_todo = c->initiator;
	c->state = ST_AUTH;
	c->auth_deadline = now_ns() + AUTH_NS;
}

/* A message on a connection still authenticating (op goes back to the provider at the next poll). */
static void auth_recv(struct sym_fab_conn *c, struct op *op)
{
	struct sym_fab *f = c->f;
	op->next = f->held;
	f->held = op;
	int why;
	char text[200];
	if (sym_hs_in(&c->hs, op->buf, op->len, &why, text, sizeof(text))) {
		refuse(c, why, "%s: refused: %s", c->peer, text);
		return;
	}
	if (sym_hs_done(&c->hs)) { /* the responder, on H3 */
		c->sealed = true;
		go_up(c);
		return;
	}
	f->hs_todo = true; /* H2, or H3 */
}

static void on_connected(struct sym_fab_conn *c)
{
	if (c->state != ST_CONNECTING && c->state != ST_ACCEPTING)
		return;
	if (c->f->auth)
		auth_start(c);
	else
		go_up(c);
	struct op *early = c->early;
	c->early = c->early_tail = NULL;
	while (early) {
		struct op *op = early;
		early = op->next;
		if (c->state == ST_AUTH)
			auth_recv(c, op);
		else if (c->state == ST_UP)
			qpush(c->f, SYM_FAB_MSG, c, op, NULL, op->len, 0);
		else {
			op->next = c->f->held;
			c->f->held = op;
		}
	}
}

static struct sym_fab_conn *conn_by_fid(struct sym_fab *f, const struct fid *fid)
{
	for (struct sym_fab_conn *c = f->conns; c; c = c->next)
		if (c->ep && &c->ep->fid == fid)
			return c;
	return NULL;
}

static void addr_str(const void *sa, char *out, size_t outlen)
{
	char host[INET6_ADDRSTRLEN] = "?";
	int port = 0;
	const struct sockaddr *s = sa;
	if (s && s->sa_family == AF_INET) {
		const struct sockaddr_in *in = sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
	} else if (s && s->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
	}
	snprintf(out, outlen, "%s:%d", host, port);
}

/* ---- sealed messages ---- */

static void seal_nonce(uint64_t seq, uint8_t n[12])
{
	for (int i = 0; i < 8; i++)
		n[i] = (uint8_t)(seq >> (8 * i));
	n[8] = n[9] = n[10] = n[11] = 0;
}

/* Opens a sealed message in place (op->len becomes the message's); false:
 * it failed authentication, and c is down (op back to the provider). */
static bool unseal(struct sym_fab_conn *c, struct op *op)
{
	uint8_t n[12];
	seal_nonce(c->rx_seq, n);
	if (op->len < SEAL || crypto_aead_chacha20poly1305_ietf_decrypt_detached(
				      op->buf, NULL, op->buf, op->len - SEAL, op->buf + op->len - SEAL, NULL, 0, n,
				      c->hs.rx_key)) {
		op->next = c->f->held;
		c->f->held = op;
		refuse(c, SYM_FAB_REFUSE_MESSAGE, "%s: message %llu from %s %u failed authentication (forged, replayed or "
		       "reordered): connection closed", c->peer, (unsigned long long)c->rx_seq,
		       sym_cred_role_name(c->hs.peer_role), c->hs.peer_id);
		return false;
	}
	c->rx_seq++;
	op->len -= SEAL;
	return true;
}

/* ---- completions ---- */

static int eq_drain(struct sym_fab *f);
static int send_raw(struct sym_fab_conn *c, const void *buf, size_t len);

static void tx_put(struct sym_fab_conn *c, struct op *op)
{
	op->kind = OP_TX;
	op->next = c->tx_free;
	c->tx_free = op;
}

static void cq_done(struct sym_fab *f, struct op *op, size_t len, int fierr)
{
	struct sym_fab_conn *c = op->c;
	if (c->state == ST_FREEING)
		return;
	switch (op->kind) {
	case OP_RX:
		if (fierr) {
			eq_drain(f); /* a shutdown's flush: let its FI_SHUTDOWN give the reason */
			mark_down(c, "receive from %s failed: %s", c->peer, fi_strerror(fierr));
			return;
		}
		if (c->closed_queued)
			return;
		op->len = len;
		if (c->state == ST_CONNECTING || c->state == ST_ACCEPTING)
			eq_drain(f); /* the CM event may trail the first message (verbs does this) */
		if (c->state == ST_AUTH) {
			auth_recv(c, op);
		} else if (c->was_up) {
			if (c->sealed && !unseal(c, op))
				return;
			qpush(f, SYM_FAB_MSG, c, op, NULL, op->len, 0);
		} else {
			op->next = NULL;
			if (c->early_tail)
				c->early_tail->next = op;
			else
				c->early = op;
			c->early_tail = op;
		}
		return;
	case OP_SEND:
		tx_put(c, op);
		if (fierr) {
			eq_drain(f);
			mark_down(c, "send to %s failed: %s", c->peer, fi_strerror(fierr));
		}
		return;
	case OP_READ:
		if (!op->reported && !c->closed_queued)
			qpush(f, SYM_FAB_READ, c, NULL, op->ctx, 0, fierr ? neg_errno(fierr) : 0);
		tx_put(c, op);
		return;
	case OP_TX:
		return;
	}
}

/* Reads the CQ empty. Bounded: every entry frees or holds one of a finite set of ops. */
static int cq_drain_one(struct sym_fab *f, struct fid_cq *cq)
{
	struct fi_cq_data_entry ent[CQ_BATCH];
	for (;;) {
		ssize_t n = fi_cq_read(cq, ent, CQ_BATCH);
		if (n > 0) {
			for (ssize_t i = 0; i < n; i++)
				if (ent[i].op_context)
					cq_done(f, ent[i].op_context, ent[i].len, 0);
			continue;
		}
		if (n == -FI_EAGAIN)
			return 0;
		if (n != -FI_EAVAIL)
			return fail(f, NULL, 0, n, "reading the completion queue");
		struct fi_cq_err_entry ee;
		memset(&ee, 0, sizeof(ee));
		n = fi_cq_readerr(cq, &ee, 0);
		if (n == -FI_EAGAIN)
			return 0;
		if (n < 0)
			return fail(f, NULL, 0, n, "reading a completion error");
		if (ee.op_context)
			cq_done(f, ee.op_context, 0, ee.err ? ee.err : FI_EOTHER);
	}
}

/* The shared completion queue, then each isolated connection's. */
static int cq_drain(struct sym_fab *f)
{
	int ret = cq_drain_one(f, f->cq);
	if (ret || !f->nisolated)
		return ret;
	for (struct sym_fab_conn *c = f->conns, *next; c && !ret; c = next) {
		next = c->next; /* (cq_done never frees a connection) */
		if (c->cq)
			ret = cq_drain_one(f, c->cq);
	}
	return ret;
}

/* ---- connections: setup and teardown ---- */

/* fi_mr_reg with a random requested key (a provider with FI_MR_PROV_KEY
 * picks its own): a peer cannot guess the key of memory it was not told of. */
static int mr_reg(struct fid_domain *dom, void *buf, size_t len, uint64_t acc, struct fid_mr **out)
{
	int ret = -FI_ENOKEY;
	for (int tries = 0; tries < 4 && ret == -FI_ENOKEY; tries++) {
		uint64_t key;
		randombytes_buf(&key, sizeof(key));
		ret = fi_mr_reg(dom, buf, len, acc, 0, key, 0, out, NULL);
	}
	return ret;
}

static int post_rx(struct sym_fab_conn *c, struct op *op)
{
	op->kind = OP_RX;
	return (int)fi_recv(c->ep, op->buf, c->f->buf_size, c->desc, 0, op);
}

static void conn_destroy(struct sym_fab_conn *c);

/* cfg.isolate: an accepted connection's own domain and completion queue, its
 * queue's fd in the epoll set. A memory registration is a key into one
 * domain's table (the tcp provider looks a read's key up in the domain of the
 * endpoint it came on), so what is registered in this domain is readable
 * through this connection only. */
static int isolate(struct sym_fab *f, struct sym_fab_conn *c, struct fi_info *info)
{
	struct fi_cq_attr ca = { .size = 0, .format = FI_CQ_FORMAT_DATA,
				 .wait_obj = f->epfd >= 0 ? FI_WAIT_FD : FI_WAIT_NONE };
	int ret = fi_domain(f->fabric, info, &c->dom, NULL);
	if (ret) {
		c->dom = NULL;
		return ret;
	}
	f->nisolated++;
	if ((ret = fi_cq_open(c->dom, &ca, &c->cq, NULL))) {
		c->cq = NULL;
		return ret;
	}
	int fd = -1;
	if (f->epfd >= 0) {
		struct epoll_event ev = { .events = EPOLLIN };
		if ((ret = fi_control(&c->cq->fid, FI_GETWAIT, &fd)) || fd < 0)
			return ret ? ret : -FI_EOTHER;
		if (epoll_ctl(f->epfd, EPOLL_CTL_ADD, fd, &ev))
			return -errno;
	}
	return 0;
}

/* A connection's endpoint, its registered buffers, and its receives posted.
 * Takes info over (refusing its connection request on failure). */
static int conn_new(struct sym_fab *f, struct fi_info *info, enum conn_state st, const char *peer,
		    struct sym_fab_conn **out, char *err, size_t errlen)
{
	struct sym_fab_conn *c = calloc(1, sizeof(*c));
	size_t nops = f->rx_depth + f->tx_depth;
	size_t bytes = nops * f->buf_size;
	if (c) {
		c->ops = calloc(nops, sizeof(*c->ops));
		/* straight from mmap: pages are backed only once a message uses them (a connection
		 * that never authenticates costs address space, not memory), and no allocator
		 * touches them (glibc's MALLOC_PERTURB_, as meson test sets, wrote all 20 MB of
		 * every pending connection twice: a flood of them stalled the process) */
		c->bufs_len = (bytes + 4095) / 4096 * 4096;
		c->bufs = mmap(NULL, c->bufs_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c->bufs == MAP_FAILED)
			c->bufs = NULL;
	}
	if (!c || !c->ops || !c->bufs) {
		if (c) {
			free(c->ops);
			if (c->bufs)
				munmap(c->bufs, c->bufs_len);
		}
		free(c);
		if (info->handle && f->pep)
			fi_reject(f->pep, info->handle, NULL, 0);
		fi_freeinfo(info);
		return fail(f, err, errlen, -FI_ENOMEM, "allocating a connection to %s", peer);
	}
	c->f = f;
	c->info = info;
	c->state = st;
	c->initiator = st == ST_CONNECTING;
	if (f->auth) {
		c->in_hs = true;
		f->nhs++;
	}
	if (!c->initiator) {
		f->authing++;
		c->accepted_at = now_ns();
		c->auth_deadline = c->accepted_at + AUTH_NS;
	}
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	for (size_t i = 0; i < nops; i++) {
		c->ops[i].c = c;
		c->ops[i].buf = c->bufs + i * f->buf_size;
		if (i >= f->rx_depth)
			tx_put(c, &c->ops[i]);
	}
	c->next = f->conns;
	if (f->conns)
		f->conns->prev = c;
	f->conns = c;

	info->tx_attr->size = f->tx_depth;
	info->rx_attr->size = f->rx_depth;
	int ret = 0;
	if (f->isolate && !c->initiator && (ret = isolate(f, c, info)))
		goto bad;
	ret = fi_endpoint(c->dom ? c->dom : f->domain, info, &c->ep, c);
	if (ret) {
		c->ep = NULL;
		goto bad;
	}
	if ((ret = fi_ep_bind(c->ep, &f->eq->fid, 0)) ||
	    (ret = fi_ep_bind(c->ep, &(c->cq ? c->cq : f->cq)->fid, FI_TRANSMIT | FI_RECV)) || (ret = fi_enable(c->ep)))
		goto bad;
	ret = mr_reg(c->dom ? c->dom : f->domain, c->bufs, bytes, FI_SEND | FI_RECV, &c->mr);
	if (ret) {
		c->mr = NULL;
		goto bad;
	}
	if ((f->mr_mode & FI_MR_ENDPOINT) && ((ret = fi_mr_bind(c->mr, &c->ep->fid, 0)) || (ret = fi_mr_enable(c->mr))))
		goto bad;
	c->desc = fi_mr_desc(c->mr);
	for (size_t i = 0; i < f->rx_depth; i++)
		if ((ret = post_rx(c, &c->ops[i])))
			goto bad;
	*out = c;
	return 0;
bad:
	ret = fail(f, err, errlen, ret, "setting up the endpoint for %s", peer);
	/* a connection request is refused only while no endpoint has taken it over */
	if (!c->ep && info->handle && f->pep)
		fi_reject(f->pep, info->handle, NULL, 0);
	conn_destroy(c);
	return ret;
}

static void conn_destroy(struct sym_fab_conn *c)
{
	struct sym_fab *f = c->f;
	bool up = c->state == ST_UP || c->state == ST_AUTH;
	if ((c->state == ST_ACCEPTING || c->state == ST_AUTH) && !c->initiator)
		f->authing--;
	hs_end(c);
	c->state = ST_FREEING;
	if (c->on_down) {
		struct sym_fab_conn **pp = &f->down;
		while (*pp != c)
			pp = &(*pp)->down_next;
		*pp = c->down_next;
	}
	for (size_t i = 0; i < f->qlen; i++)
		if (f->q[f->qhead + i].c == c)
			f->q[f->qhead + i].c = NULL;
	for (struct op **pp = &f->held; *pp;) {
		if ((*pp)->c == c)
			*pp = (*pp)->next;
		else
			pp = &(*pp)->next;
	}
	if (c->prev)
		c->prev->next = c->next;
	else
		f->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (c->ep) {
		if (up)
			fi_shutdown(c->ep, 0);
		fi_close(&c->ep->fid);
		/* completions the provider queued before the close must not outlive c */
		cq_drain(f);
		if (c->cq)
			cq_drain_one(f, c->cq);
	}
	if (c->mr)
		fi_close(&c->mr->fid);
	if (c->dom) { /* what was registered for c goes with its domain (the caller's handles stay valid) */
		for (struct sym_fab_mr *mr = f->mrs; mr; mr = mr->next)
			if (mr->conn == c && mr->mr) {
				fi_close(&mr->mr->fid);
				mr->mr = NULL;
				mr->conn = NULL;
			}
		int fd = -1;
		if (c->cq && f->epfd >= 0 && !fi_control(&c->cq->fid, FI_GETWAIT, &fd) && fd >= 0)
			epoll_ctl(f->epfd, EPOLL_CTL_DEL, fd, NULL);
		if (c->cq)
			fi_close(&c->cq->fid);
		fi_close(&c->dom->fid);
		f->nisolated--;
	}
	fi_freeinfo(c->info);
	if (c->bufs)
		munmap(c->bufs, c->bufs_len);
	free(c->ops);
	sodium_memzero(c, sizeof(*c));
	free(c);
}

static bool pending_accept(const struct sym_fab_conn *c)
{
	return !c->initiator && (c->state == ST_ACCEPTING || c->state == ST_AUTH);
}

/* Room for one more accepted connection to authenticate. Each pending
 * connection holds its buffers, so they are bounded: AUTH_PENDING_MAX in
 * all. The newest always gets in: when all are taken, the oldest of the
 * address holding the most is closed for it. A flood from a few addresses
 * cannot keep a member of another address out (the flood loses its own),
 * and one from the member's own address must open AUTH_PENDING_MAX
 * connections within the member's round trip to push it out. (A cap per
 * address would be no better there: it would push the member out after a
 * handful.) */
static void admit(struct sym_fab *f)
{
	if (f->authing < AUTH_PENDING_MAX)
		return;
	struct sym_fab_conn *victim = NULL;
	int most = 0;
	for (struct sym_fab_conn *c = f->conns; c; c = c->next) {
		if (!pending_accept(c))
			continue;
		int n = 0;
		for (struct sym_fab_conn *d = f->conns; d; d = d->next)
			n += pending_accept(d) && !strcmp(d->src, c->src);
		if (n > most || (n == most && victim && c->accepted_at < victim->accepted_at)) {
			most = n;
			victim = c;
		}
	}
	if (victim)
		refuse(victim, SYM_FAB_REFUSE_FLOOD, "%s: refused: closed for a newer connection (%d in all were "
		       "authenticating, %d of them from %s)", victim->peer, f->authing, most, victim->src);
}

static void on_connreq(struct sym_fab *f, struct fi_info *info)
{
	char peer[80];
	addr_str(info->dest_addr, peer, sizeof(peer));
	char src[sizeof(peer)]; /* the address without the port */
	memcpy(src, peer, sizeof(src));
	char *colon = strrchr(src, ':');
	if (colon)
		*colon = '\0';
	if (f->auth)
		admit(f);
	struct sym_fab_conn *c;
	if (conn_new(f, info, ST_ACCEPTING, peer, &c, NULL, 0))
		return;
	snprintf(c->src, sizeof(c->src), "%s", src);
	int ret = fi_accept(c->ep, NULL, 0);
	if (ret) {
		fail(f, NULL, 0, ret, "accepting %s", peer);
		conn_destroy(c);
	}
}

static int eq_drain(struct sym_fab *f)
{
	union {
		struct fi_eq_cm_entry cm;
		struct fi_eq_entry ent;
		uint8_t raw[sizeof(struct fi_eq_cm_entry) + 256];
	} u;
	for (;;) {
		/* connection requests: CONNREQ_BATCH a poll, so that a flood of them never keeps
		 * the caller from its timers and its members (the rest wait for the next poll) */
		if (f->connreqs >= CONNREQ_BATCH) {
			f->eq_more = true;
			return 0;
		}
		uint32_t event;
		ssize_t n = fi_eq_read(f->eq, &event, &u, sizeof(u), 0);
		if (n == -FI_EAGAIN) {
			f->eq_more = false;
			return 0;
		}
		if (n == -FI_EAVAIL) {
			struct fi_eq_err_entry ee;
			memset(&ee, 0, sizeof(ee));
			n = fi_eq_readerr(f->eq, &ee, 0);
			if (n < 0)
				return n == -FI_EAGAIN ? 0 : fail(f, NULL, 0, n, "reading an event queue error");
			struct sym_fab_conn *c = conn_by_fid(f, ee.fid);
			if (c)
				mark_down(c, "connection with %s failed: %s", c->peer, fi_strerror(ee.err));
			else
				fail(f, NULL, 0, ee.err, "connection management error");
			continue;
		}
		if (n < 0)
			return fail(f, NULL, 0, n, "reading the event queue");
		if (event == FI_CONNREQ) {
			f->connreqs++;
			on_connreq(f, u.cm.info);
		} else if (event == FI_CONNECTED) {
			struct sym_fab_conn *c = conn_by_fid(f, u.cm.fid);
			if (c)
				on_connected(c);
		} else if (event == FI_SHUTDOWN) {
			struct sym_fab_conn *c = conn_by_fid(f, u.cm.fid);
			if (c)
				mark_down(c, "%s closed the connection", c->peer);
		}
	}
}

/* Queues the CLOSED events (after the reads that will never end); frees the
 * connections the caller never saw. */
static void flush_down(struct sym_fab *f)
{
	struct sym_fab_conn *c;
	while ((c = f->down)) {
		f->down = c->down_next;
		c->on_down = false;
		if (!c->announced) {
			conn_destroy(c);
			continue;
		}
		for (size_t i = f->rx_depth; i < f->rx_depth + f->tx_depth; i++) {
			struct op *op = &c->ops[i];
			if (op->kind == OP_READ && !op->reported) {
				op->reported = true;
				qpush(f, SYM_FAB_READ, c, NULL, op->ctx, 0, -ECONNABORTED);
			}
		}
		c->early = c->early_tail = NULL;
		qpush(f, SYM_FAB_CLOSED, c, NULL, NULL, 0, 0);
		c->closed_queued = true;
	}
}

/* ---- open, listen, connect ---- */

static void describe(struct sym_fab *f)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} bits[] = {
		{ FI_MR_LOCAL, "local" },	  { FI_MR_VIRT_ADDR, "virt_addr" },   { FI_MR_ALLOCATED, "allocated" },
		{ FI_MR_PROV_KEY, "prov_key" },	  { FI_MR_ENDPOINT, "endpoint" },     { FI_MR_RAW, "raw" },
		{ FI_MR_RMA_EVENT, "rma_event" }, { FI_MR_MMU_NOTIFY, "mmu_notify" }, { FI_MR_HMEM, "hmem" }
	};
	char modes[120] = "";
	size_t at = 0;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if ((f->mr_mode & bits[i].bit) && at < sizeof(modes))
			at += (size_t)snprintf(modes + at, sizeof(modes) - at, "%s%s", at ? "|" : "", bits[i].name);
	snprintf(f->descr, sizeof(f->descr), "%s (mr_mode %s, %s)", f->prov, at ? modes : "none",
		 f->epfd >= 0 ? "wait fd" : "no wait fd: sym_fab_wait polls");
}

/* The CQ and EQ, with wait fds when the provider has them. */
static int open_queues(struct sym_fab *f, char *err, size_t errlen)
{
	struct fi_eq_attr ea = { .size = 0, .wait_obj = FI_WAIT_FD };
	struct fi_cq_attr ca = { .size = 0, .format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_FD };
	int efd = -1, cfd = -1;
	int ret = fi_eq_open(f->fabric, &ea, &f->eq, NULL);
	if (!ret)
		ret = fi_cq_open(f->domain, &ca, &f->cq, NULL);
	if (!ret && !fi_control(&f->eq->fid, FI_GETWAIT, &efd) && !fi_control(&f->cq->fid, FI_GETWAIT, &cfd) &&
	    efd >= 0 && cfd >= 0) {
		f->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (f->epfd < 0)
			return fail(f, err, errlen, -errno, "creating the epoll set");
		struct epoll_event ev = { .events = EPOLLIN };
		if (epoll_ctl(f->epfd, EPOLL_CTL_ADD, efd, &ev) || epoll_ctl(f->epfd, EPOLL_CTL_ADD, cfd, &ev))
			return fail(f, err, errlen, -errno, "adding the queues' fds to the epoll set");
		return 0;
	}
	/* no fds to be had: queues without wait objects, and sym_fab_wait polls */
	if (f->cq)
		fi_close(&f->cq->fid);
	if (f->eq)
		fi_close(&f->eq->fid);
	f->cq = NULL;
	f->eq = NULL;
	ea.wait_obj = FI_WAIT_NONE;
	ca.wait_obj = FI_WAIT_NONE;
	if ((ret = fi_eq_open(f->fabric, &ea, &f->eq, NULL))) {
		f->eq = NULL;
		return fail(f, err, errlen, ret, "opening the event queue");
	}
	if ((ret = fi_cq_open(f->domain, &ca, &f->cq, NULL))) {
		f->cq = NULL;
		return fail(f, err, errlen, ret, "opening the completion queue");
	}
	return 0;
}

int sym_fab_open(struct sym_fab **out, const struct sym_fab_cfg *cfg, char *err, size_t errlen)
{
	static const struct sym_fab_cfg dflt = { 0 };
	*out = NULL;
	if (!cfg)
		cfg = &dflt;
	const char *prov = cfg->provider && cfg->provider[0] ? cfg->provider : "tcp";
	struct sym_fab *f = calloc(1, sizeof(*f));
	if (!f)
		return snprintf(err, errlen, "libfabric provider '%s': out of memory", prov), -ENOMEM;
	f->epfd = -1;
	snprintf(f->prov, sizeof(f->prov), "%s", prov);
	int ret;
	if (cfg->msg_max > MSG_MAX_LIMIT || cfg->rx_depth < 0 || cfg->rx_depth > DEPTH_MAX || cfg->tx_depth < 0 ||
	    cfg->tx_depth > DEPTH_MAX) {
		ret = fail(f, err, errlen, -FI_EINVAL, "msg_max %zu (at most %u), rx_depth %d, tx_depth %d (0..%d)",
			   cfg->msg_max, MSG_MAX_LIMIT, cfg->rx_depth, cfg->tx_depth, DEPTH_MAX);
		goto out;
	}
	f->msg_max = cfg->msg_max ? cfg->msg_max : SYM_FAB_MSG_MAX;
	f->rx_depth = cfg->rx_depth ? (size_t)cfg->rx_depth : 64;
	f->tx_depth = cfg->tx_depth ? (size_t)cfg->tx_depth : 256;
	if (sodium_init() < 0) {
		ret = fail(f, err, errlen, -FI_EOTHER, "initialising libsodium");
		goto out;
	}
	f->buf_size = (f->msg_max > HS_MAX ? f->msg_max : HS_MAX) + SEAL;
	f->isolate = cfg->isolate;
	if (cfg->cred) {
		f->auth = true;
		f->cred = *cfg->cred;
	}
	if (cfg->revoked && (ret = sym_fab_set_revoked(f, cfg->revoked)) < 0) {
		ret = fail(f, err, errlen, -FI_ENOMEM, "copying the revoked serials");
		goto out;
	}

	f->hints = fi_allocinfo();
	if (!f->hints || !(f->hints->fabric_attr->prov_name = strdup(prov))) {
		ret = fail(f, err, errlen, -FI_ENOMEM, "allocating hints");
		goto out;
	}
	f->hints->ep_attr->type = FI_EP_MSG;
	f->hints->caps = FI_MSG | FI_RMA | FI_READ | FI_REMOTE_READ;
	f->hints->mode = FI_CONTEXT | FI_CONTEXT2;
	f->hints->domain_attr->mr_mode = MR_MODE_WANTED;
	f->hints->domain_attr->threading = FI_THREAD_DOMAIN;
	ret = fi_getinfo(FAB_API, NULL, NULL, 0, f->hints, &f->info);
	if (ret) {
		f->info = NULL;
		ret = fail(f, err, errlen, ret, "no connected endpoints (FI_EP_MSG) with FI_MSG and FI_RMA reads");
		goto out;
	}
	/* what the provider reported is what we follow, not what we asked for */
	f->mr_mode = f->info->domain_attr->mr_mode;
	if (f->info->tx_attr->size && f->tx_depth > f->info->tx_attr->size)
		f->tx_depth = f->info->tx_attr->size;
	if (f->info->rx_attr->size && f->rx_depth > f->info->rx_attr->size)
		f->rx_depth = f->info->rx_attr->size;
	if ((ret = fi_fabric(f->info->fabric_attr, &f->fabric, NULL))) {
		f->fabric = NULL;
		ret = fail(f, err, errlen, ret, "opening the fabric");
		goto out;
	}
	if ((ret = fi_domain(f->fabric, f->info, &f->domain, NULL))) {
		f->domain = NULL;
		ret = fail(f, err, errlen, ret, "opening the domain");
		goto out;
	}
	if ((ret = open_queues(f, err, errlen)))
		goto out;
	describe(f);
	*out = f;
	return 0;
out:
	sym_fab_destroy(f);
	return ret;
}

/* The connection requests still in the event queue at the end (a poll takes
 * CONNREQ_BATCH, and a flood leaves more): each holds the provider's handle of
 * an accepted socket and a copy of fi_info, which only fi_reject (or an
 * endpoint) and fi_freeinfo release. Reading the queue also lets the provider
 * turn the requests that have arrived meanwhile into events; at most
 * `limit` events are read, so that a flood cannot hold the caller here. */
static void drain_connreqs(struct sym_fab *f, int limit)
{
	union {
		struct fi_eq_cm_entry cm;
		uint8_t raw[sizeof(struct fi_eq_cm_entry) + 256];
	} u;
	for (int i = 0; i < limit; i++) {
		uint32_t event;
		ssize_t n = fi_eq_read(f->eq, &event, &u, sizeof(u), 0);
		if (n == -FI_EAVAIL) {
			struct fi_eq_err_entry ee;
			memset(&ee, 0, sizeof(ee));
			if (fi_eq_readerr(f->eq, &ee, 0) < 0)
				return;
			continue;
		}
		if (n < 0)
			return; /* -FI_EAGAIN: nothing more */
		if (event == FI_CONNREQ && u.cm.info) {
			if (u.cm.info->handle && f->pep)
				fi_reject(f->pep, u.cm.info->handle, NULL, 0);
			fi_freeinfo(u.cm.info);
		}
	}
}

void sym_fab_destroy(struct sym_fab *f)
{
	if (!f)
		return;
	while (f->conns)
		conn_destroy(f->conns);
	if (f->eq && f->pep)
		drain_connreqs(f, 4096);
	if (f->pep)
		fi_close(&f->pep->fid);
	if (f->pep_info)
		fi_freeinfo(f->pep_info);
	while (f->mrs)
		sym_fab_mr_close(f->mrs);
	if (f->cq)
		fi_close(&f->cq->fid);
	if (f->eq)
		fi_close(&f->eq->fid);
	if (f->domain)
		fi_close(&f->domain->fid);
	if (f->fabric)
		fi_close(&f->fabric->fid);
	if (f->epfd >= 0)
		close(f->epfd);
	if (f->info)
		fi_freeinfo(f->info);
	if (f->hints)
		fi_freeinfo(f->hints);
	free(f->q);
	sym_revoked_free(&f->revoked);
	sodium_memzero(f, sizeof(*f));
	free(f);
}

const char *sym_fab_provider(const struct sym_fab *f)
{
	return f->prov;
}

const char *sym_fab_describe(const struct sym_fab *f)
{
	return f->descr;
}

const char *sym_fab_last_error(const struct sym_fab *f)
{
	return f->err;
}

/* Endpoint info for host:port; source is true for a listener. */
static int addr_info(struct sym_fab *f, const char *host, const char *port, bool source, struct fi_info **out,
		     char *err, size_t errlen)
{
	int ret = fi_getinfo(FAB_API, host, port, source ? FI_SOURCE : 0, f->hints, out);
	if (ret) {
		*out = NULL;
		return fail(f, err, errlen, ret, "resolving %s:%s", host ? host : "*", port ? port : "0");
	}
	return 0;
}

int sym_fab_listen(struct sym_fab *f, const char *host, const char *port, char *err, size_t errlen)
{
	if (f->pep)
		return fail(f, err, errlen, -FI_EBUSY, "already listening on port %d", f->port);
	struct fi_info *info;
	int ret = addr_info(f, host, port, true, &info, err, errlen);
	if (ret)
		return ret;
	if ((ret = fi_passive_ep(f->fabric, info, &f->pep, NULL))) {
		f->pep = NULL;
		goto bad;
	}
	struct sockaddr_storage ss;
	size_t sslen = sizeof(ss);
	if ((ret = fi_pep_bind(f->pep, &f->eq->fid, 0)) || (ret = fi_listen(f->pep)) ||
	    (ret = fi_getname(&f->pep->fid, &ss, &sslen)))
		goto bad;
	f->pep_info = info;
	f->port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
					   : ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return 0;
bad:
	ret = fail(f, err, errlen, ret, "listening on %s:%s", host ? host : "*", port ? port : "0");
	if (f->pep)
		fi_close(&f->pep->fid);
	f->pep = NULL;
	fi_freeinfo(info);
	return ret;
}

int sym_fab_listen_port(const struct sym_fab *f)
{
	return f->pep ? f->port : -1;
}

int sym_fab_connect(struct sym_fab *f, const char *host, const char *port, const struct sym_fab_peer *want,
		    struct sym_fab_conn **out, char *err, size_t errlen)
{
	*out = NULL;
	if (f->auth && (!want || want->role < SYM_CRED_SCHEDD || want->role > SYM_CRED_BACKEND))
		return fail(f, err, errlen, -FI_EINVAL, "connecting to %s:%s: name the member it must be (role and id)",
			    host, port);
	struct fi_info *info;
	int ret = addr_info(f, host, port, false, &info, err, errlen);
	if (ret)
		return ret;
	char peer[80];
	snprintf(peer, sizeof(peer), "%s:%s", host, port);
	struct sym_fab_conn *c;
	if ((ret = conn_new(f, info, ST_CONNECTING, peer, &c, err, errlen)))
		return ret;
	c->announced = true;
	c->auth_deadline = now_ns() + AUTH_NS;
	if (want)
		c->want = *want;
	/* a refusal is a CLOSED event whether the provider knows it at once or later */
	if ((ret = fi_connect(c->ep, info->dest_addr, NULL, 0)))
		mark_down(c, "connecting to %s: %s", peer, fi_strerror(-ret));
	*out = c;
	return 0;
}

void sym_fab_conn_set_user(struct sym_fab_conn *c, void *user)
{
	c->user = user;
}

void *sym_fab_conn_user(const struct sym_fab_conn *c)
{
	return c->user;
}

bool sym_fab_conn_up(const struct sym_fab_conn *c)
{
	return c->state == ST_UP;
}

bool sym_fab_conn_peer(const struct sym_fab_conn *c, int *role, uint32_t *id, uint64_t *serial)
{
	if (!c->sealed || !c->hs.peer_role) /* (also once down: who it was) */
		return false;
	if (role)
		*role = c->hs.peer_role;
	if (id)
		*id = c->hs.peer_id;
	if (serial)
		*serial = c->hs.peer_serial;
	return true;
}

int sym_fab_set_revoked(struct sym_fab *f, const struct sym_revoked *r)
{
	uint64_t *copy = NULL;
	if (r && r->n) {
		if (!(copy = malloc(r->n * sizeof(*copy))))
			return -ENOMEM;
		memcpy(copy, r->serials, r->n * sizeof(*copy));
	}
	free(f->revoked.serials);
	f->revoked.serials = copy;
	f->revoked.n = copy ? r->n : 0;
	int closed = 0;
	for (struct sym_fab_conn *c = f->conns; c; c = c->next) {
		if (!c->hs.peer_role || !sym_revoked_has(&f->revoked, c->hs.peer_serial))
			continue;
		if (c->state != ST_UP && c->state != ST_AUTH)
			continue;
		refuse(c, SYM_FAB_REFUSE_REVOKED, "%s: %s %u's credential (serial %llu) was revoked: connection closed",
		       c->peer, sym_cred_role_name(c->hs.peer_role), c->hs.peer_id, (unsigned long long)c->hs.peer_serial);
		closed++;
	}
	return closed;
}

/* ---- data transfer ---- */

/* Progresses the CQ while an operation waits for room; -ENOBUFS after STALL_NS. */
static int stall(struct sym_fab_conn *c, int64_t *deadline, const char *what)
{
	struct sym_fab *f = c->f;
	int ret = cq_drain(f);
	if (!ret)
		ret = eq_drain(f); /* a peer that has gone away only shows there */
	if (ret)
		return ret;
	if (c->state != ST_UP)
		return fail(f, NULL, 0, -FI_ENOTCONN, "%s %s: %s", what, c->peer, c->reason);
	int64_t t = now_ns();
	if (!*deadline)
		*deadline = t + STALL_NS;
	else if (t > *deadline)
		return fail(f, NULL, 0, -FI_ENOBUFS, "%s %s: %zu operations still in flight after %lld ms", what,
			    c->peer, f->tx_depth, STALL_NS / 1000000);
	return 0;
}

static int tx_get(struct sym_fab_conn *c, struct op **out, int64_t *deadline, const char *what)
{
	int ret;
	while (!c->tx_free)
		if ((ret = stall(c, deadline, what)))
			return ret;
	*out = c->tx_free;
	c->tx_free = (*out)->next;
	return 0;
}

int sym_fab_send(struct sym_fab_conn *c, const void *buf, size_t len)
{
	struct sym_fab *f = c->f;
	if (len > f->msg_max)
		return fail(f, NULL, 0, -FI_EMSGSIZE, "message of %zu bytes to %s (at most %zu)", len, c->peer,
			    f->msg_max);
	if (c->state != ST_UP)
		return fail(f, NULL, 0, -FI_ENOTCONN, "sending to %s", c->peer);
	return send_raw(c, buf, len);
}

/* Sends buf (sealed once the connection has session keys). */
static int send_raw(struct sym_fab_conn *c, const void *buf, size_t len)
{
	struct sym_fab *f = c->f;
	int64_t deadline = 0;
	struct op *op;
	int ret = tx_get(c, &op, &deadline, "sending to");
	if (ret)
		return ret;
	if (c->sealed) {
		uint8_t n[12];
		seal_nonce(c->tx_seq++, n);
		crypto_aead_chacha20poly1305_ietf_encrypt_detached(op->buf, op->buf + len, NULL, buf, len, NULL, 0, NULL,
								   n, c->hs.tx_key);
		len += SEAL;
	} else if (len) {
		memcpy(op->buf, buf, len);
	}
	op->kind = OP_SEND;
	for (;;) {
		ssize_t r = fi_send(c->ep, op->buf, len, c->desc, 0, op);
		if (!r)
			return 0;
		if (r != -FI_EAGAIN)
			ret = fail(f, NULL, 0, r, "sending to %s", c->peer);
		else
			ret = stall(c, &deadline, "sending to");
		if (ret) {
			tx_put(c, op);
			return ret;
		}
	}
}

static int mr_new(struct sym_fab *f, struct sym_fab_conn *c, void *buf, size_t len, unsigned access,
		  struct sym_fab_mr **out, char *err, size_t errlen)
{
	*out = NULL;
	unsigned all = SYM_FAB_REMOTE_READ | SYM_FAB_LOCAL_READ_TARGET | SYM_FAB_LOCAL_SEND;
	if (!buf || !len || !access || (access & ~all))
		return fail(f, err, errlen, -FI_EINVAL, "registering %zu bytes at %p with access %#x", len, buf,
			    access);
	/* an FI_MR_ENDPOINT registration serves one endpoint, but ours are
	 * handed to any peer with one key: not supported (tcp and verbs do not
	 * ask for it; only the per-connection buffers are bound) */
	if (f->mr_mode & FI_MR_ENDPOINT)
		return fail(f, err, errlen, -FI_EOPNOTSUPP, "registrations shared by endpoints (FI_MR_ENDPOINT)");
	uint64_t acc = 0;
	if (access & SYM_FAB_REMOTE_READ)
		acc |= FI_REMOTE_READ;
	if (access & SYM_FAB_LOCAL_READ_TARGET)
		acc |= FI_READ;
	if (access & SYM_FAB_LOCAL_SEND)
		acc |= FI_SEND | FI_RECV;
	struct sym_fab_mr *mr = calloc(1, sizeof(*mr));
	if (!mr)
		return fail(f, err, errlen, -FI_ENOMEM, "registering %zu bytes", len);
	int ret = mr_reg(c && c->dom ? c->dom : f->domain, buf, len, acc, &mr->mr);
	if (ret) {
		free(mr);
		return fail(f, err, errlen, ret, "registering %zu bytes at %p", len, buf);
	}
	mr->f = f;
	mr->conn = c && c->dom ? c : NULL;
	mr->base = (uintptr_t)buf;
	mr->len = len;
	mr->access = access;
	mr->next = f->mrs;
	if (f->mrs)
		f->mrs->prev = mr;
	f->mrs = mr;
	*out = mr;
	return 0;
}

int sym_fab_mr_reg(struct sym_fab *f, void *buf, size_t len, unsigned access, struct sym_fab_mr **out, char *err,
		   size_t errlen)
{
	return mr_new(f, NULL, buf, len, access, out, err, errlen);
}

int sym_fab_mr_reg_conn(struct sym_fab_conn *c, void *buf, size_t len, unsigned access, struct sym_fab_mr **out,
			char *err, size_t errlen)
{
	return mr_new(c->f, c, buf, len, access, out, err, errlen);
}

void sym_fab_mr_close(struct sym_fab_mr *mr)
{
	if (!mr)
		return;
	struct sym_fab *f = mr->f;
	if (mr->prev)
		mr->prev->next = mr->next;
	else
		f->mrs = mr->next;
	if (mr->next)
		mr->next->prev = mr->prev;
	if (mr->mr)
		fi_close(&mr->mr->fid);
	free(mr);
}

uint64_t sym_fab_mr_key(const struct sym_fab_mr *mr)
{
	return fi_mr_key(mr->mr);
}

uint64_t sym_fab_mr_addr(const struct sym_fab_mr *mr, const void *p)
{
	if (mr->f->mr_mode & FI_MR_VIRT_ADDR)
		return (uint64_t)(uintptr_t)p;
	return (uint64_t)((uintptr_t)p - mr->base);
}

int sym_fab_read(struct sym_fab_conn *c, void *local, size_t len, struct sym_fab_mr *local_mr, uint64_t raddr,
		 uint64_t rkey, void *ctx)
{
	struct sym_fab *f = c->f;
	uintptr_t p = (uintptr_t)local;
	if (!local_mr || !(local_mr->access & SYM_FAB_LOCAL_READ_TARGET) || !len || p < local_mr->base ||
	    len > local_mr->len || p - local_mr->base > local_mr->len - len)
		return fail(f, NULL, 0, -FI_EINVAL,
			    "reading %zu bytes from %s into %p: not inside a registration for reads", len, c->peer,
			    local);
	if (len > f->info->ep_attr->max_msg_size)
		return fail(f, NULL, 0, -FI_EMSGSIZE, "reading %zu bytes from %s", len, c->peer);
	if (!local_mr->mr || (local_mr->conn ? local_mr->conn != c : c->dom != NULL))
		return fail(f, NULL, 0, -FI_EINVAL, "reading %zu bytes from %s: the local registration is not in "
			    "this connection's domain", len, c->peer);
	if (c->state != ST_UP)
		return fail(f, NULL, 0, -FI_ENOTCONN, "reading from %s", c->peer);
	int64_t deadline = 0;
	struct op *op;
	int ret = tx_get(c, &op, &deadline, "reading from");
	if (ret)
		return ret;
	op->kind = OP_READ;
	op->ctx = ctx;
	op->reported = false;
	for (;;) {
		ssize_t r = fi_read(c->ep, local, len, fi_mr_desc(local_mr->mr), 0, raddr, rkey, op);
		if (!r)
			return 0;
		if (r != -FI_EAGAIN)
			ret = fail(f, NULL, 0, r, "reading %zu bytes from %s", len, c->peer);
		else
			ret = stall(c, &deadline, "reading from");
		if (ret) {
			tx_put(c, op);
			return ret;
		}
	}
}

/* ---- progress and waiting ---- */

/* Gives the receives handed out by the last poll back to the provider. */
static void repost_held(struct sym_fab *f)
{
	struct op *op;
	while ((op = f->held)) {
		f->held = op->next;
		struct sym_fab_conn *c = op->c;
		if (c->state != ST_UP && c->state != ST_CONNECTING && c->state != ST_ACCEPTING && c->state != ST_AUTH)
			continue;
		int ret = post_rx(c, op);
		if (ret)
			mark_down(c, "posting a receive for %s: %s", c->peer, fi_strerror(-ret));
	}
}

/* The handshake's sends (see auth_recv), and its deadline. Before the
 * caller sees a connection up, its part of the handshake has gone. */
static void auth_progress(struct sym_fab *f)
{
	int64_t now = now_ns();
	f->hs_todo = false;
	for (struct sym_fab_conn *c = f->conns; c; c = c->next) {
		if (c->state == ST_ACCEPTING && now > c->auth_deadline) {
			refuse(c, SYM_FAB_REFUSE_TIMEOUT, "%s: refused: it did not connect within the time allowed",
			       c->peer);
			continue;
		}
		if (c->state != ST_AUTH)
			continue;
		uint8_t b[HS_MAX];
		int ret = 0, why;
		char text[200];
		long n = sym_hs_out(&c->hs, b, &why, text, sizeof(text));
		if (n < 0) {
			refuse(c, why, "%s: refused: %s", c->peer, text);
			continue;
		}
		if (n > 0 && !(ret = send_raw(c, b, (size_t)n)) && c->initiator && sym_hs_done(&c->hs)) {
			c->sealed = true; /* H3 went: up */
			go_up(c);
			continue;
		}
		if (ret)
			mark_down(c, "%s: sending the authentication handshake: %s", c->peer, fi_strerror(-ret));
		else if (c->state == ST_AUTH && now > c->auth_deadline)
			refuse(c, SYM_FAB_REFUSE_TIMEOUT, "%s: refused: it did not authenticate within the time allowed",
			       c->peer);
	}
}

int sym_fab_poll(struct sym_fab *f, struct sym_fab_event *ev, int max)
{
	if (max < 1)
		return fail(f, NULL, 0, -FI_EINVAL, "polling for %d events", max);
	repost_held(f);
	f->connreqs = 0;
	int ret = eq_drain(f);
	if (!ret)
		ret = cq_drain(f);
	if (f->nhs)
		auth_progress(f);
	flush_down(f);
	if (ret)
		return ret;
	if (f->fatal)
		return fail(f, NULL, 0, f->fatal, "queueing events");
	int n = 0;
	while (n < max && f->qlen) {
		struct qent e = f->q[f->qhead++];
		f->qlen--;
		if (!e.c)
			continue;
		struct sym_fab_event *o = &ev[n++];
		o->type = e.type;
		o->conn = e.c;
		o->data = e.op ? e.op->buf : NULL;
		o->len = e.len;
		o->ctx = e.ctx;
		o->status = e.status;
		o->reason[0] = '\0';
		if (e.type == SYM_FAB_CLOSED)
			snprintf(o->reason, sizeof(o->reason), "%s", e.c->reason);
		if (e.type == SYM_FAB_MSG) {
			e.op->next = f->held;
			f->held = e.op;
		}
	}
	if (!f->qlen)
		f->qhead = 0;
	return n;
}

int sym_fab_fd(const struct sym_fab *f)
{
	return f->epfd;
}

/* Work is pending inside this object: queued events, receives to repost
 * (all of a connection's may be held), CLOSED events to queue. */
static bool pending(const struct sym_fab *f)
{
	return f->qlen || f->held || f->down || f->hs_todo || f->eq_more;
}

bool sym_fab_trywait(struct sym_fab *f)
{
	if (pending(f) || f->epfd < 0)
		return false;
	struct fid *few[8], **fids = few;
	size_t n = 0, cap = 2 + (size_t)f->nisolated;
	if (cap > sizeof(few) / sizeof(few[0]) && !(fids = malloc(cap * sizeof(*fids))))
		return false;
	fids[n++] = &f->eq->fid;
	fids[n++] = &f->cq->fid;
	for (struct sym_fab_conn *c = f->conns; c && n < cap; c = c->next)
		if (c->cq)
			fids[n++] = &c->cq->fid;
	bool ok = fi_trywait(f->fabric, fids, (int)n) == FI_SUCCESS;
	if (fids != few)
		free(fids);
	return ok;
}

int sym_fab_wait(struct sym_fab *f, int timeout_ms)
{
	if (pending(f) || !timeout_ms)
		return 0;
	if (f->epfd < 0) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
		return 0;
	}
	if (!sym_fab_trywait(f))
		return 0;
	struct epoll_event evs[2];
	if (epoll_wait(f->epfd, evs, 2, timeout_ms) < 0 && errno != EINTR)
		return fail(f, NULL, 0, -errno, "waiting on the epoll set");
	return 0;
}

void sym_fab_close(struct sym_fab_conn *c)
{
	if (c)
		conn_destroy(c);
}

uint64_t sym_fab_refused(const struct sym_fab *f, char *last, size_t len)
{
	if (last && len)
		snprintf(last, len, "%s", f->refusal);
	return f->refused;
}

void sym_fab_refusals(const struct sym_fab *f, uint64_t counts[SYM_FAB_REFUSE_N])
{
	memcpy(counts, f->refusals, sizeof(f->refusals));
}

int sym_fab_flush(struct sym_fab *f, int timeout_ms)
{
	if (!f)
		return 0;
	int64_t end = now_ns() + (int64_t)timeout_ms * 1000000;
	for (;;) {
		bool busy = false;
		for (struct sym_fab_conn *c = f->conns; c && !busy; c = c->next)
			for (size_t i = f->rx_depth; c->state == ST_UP && i < f->rx_depth + f->tx_depth && !busy; i++)
				busy = c->ops[i].kind == OP_SEND;
		if (!busy)
			return 0;
		if (now_ns() > end)
			return -ETIMEDOUT;
		if (cq_drain(f) || eq_drain(f))
			return 0; /* the fabric failed: nothing more will complete */
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
}
