/* runtime/frontend.c - a frontend: clients in, metadata to schedd, inputs
 * read by backends straight from its registered pool, answers out.
 *
 * Each accepted request takes a slot of the pool (input_max bytes,
 * registered for remote reads) until it is answered. The id it carries on
 * the fabric is the slot index with the slot's generation in the high half,
 * so a late result or drop for a slot already answered and reused is
 * recognised and ignored: every request gets exactly one answer, from
 * whichever of result, drop notice or failure comes first.
 *
 * One thread runs everything on epoll: the client sockets, the fabric
 * (whose progress also serves backends' reads of the pool) and a heartbeat
 * timer. If schedd is unreachable, waiting requests are answered
 * "unavailable" and new ones are refused the same way until it is back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "runtime/executor.h"
#include "runtime/fabric.h"
#include "runtime/net.h"
#include "runtime/rt.h"

#define CLIENT_MAX_QUEUED (64u << 20) /* unsent answer bytes before a client is cut off */
#define LISTEN_TAG UINT64_MAX
#define FAB_TAG (UINT64_MAX - 1)

struct slot {
	uint32_t gen;
	bool busy;
	uint16_t model;
	uint32_t client;  /* index */
	uint32_t cgen;    /* the client's generation when it asked */
	uint64_t creq;    /* the client's id */
};

struct client {
	struct sym_stream st;
	uint32_t gen;
	bool open;
	bool want_out;
};

struct frontend {
	struct sym_cluster *c;
	const struct sym_rt_opts *o;
	int id;
	char who[32];
	struct sym_fab *fab;
	struct sym_rt_closed closed; /* during one batch of fabric events */
	struct sym_fab_mr *mr;
	uint8_t *pool;
	struct slot *slots;
	uint32_t *freeslots;
	uint32_t nfree;
	struct client *clients;
	uint32_t nclients, capclients;
	int ep, lfd;
	struct sym_fab_conn *schedd;
	bool schedd_up;
	sym_time next_connect, next_beat;
	uint64_t beat_seq;
	sym_time *slo;
	/* counters */
	uint64_t accepted, answered, results, drops, refused, stale;
};

static uint64_t slot_id(const struct frontend *f, uint32_t i) { return (uint64_t)f->slots[i].gen << 32 | i; }

static struct slot *slot_get(struct frontend *f, uint64_t id)
{
	uint32_t i = (uint32_t)id;
	if (i >= (uint32_t)f->c->pool_slots || !f->slots[i].busy || f->slots[i].gen != (uint32_t)(id >> 32))
		return NULL;
	return &f->slots[i];
}

static void client_close(struct frontend *f, uint32_t ci)
{
	struct client *cl = &f->clients[ci];
	if (!cl->open)
		return;
	epoll_ctl(f->ep, EPOLL_CTL_DEL, cl->st.fd, NULL);
	sym_stream_close(&cl->st);
	cl->open = false;
	cl->gen++;
}

static void client_watch_out(struct frontend *f, uint32_t ci, bool on)
{
	struct client *cl = &f->clients[ci];
	if (cl->want_out == on)
		return;
	struct epoll_event ev = { .events = EPOLLIN | (on ? EPOLLOUT : 0), .data.u64 = ci };
	epoll_ctl(f->ep, EPOLL_CTL_MOD, cl->st.fd, &ev);
	cl->want_out = on;
}

/* Sends an answer to a client (if it is still there). */
static void answer_client(struct frontend *f, uint32_t ci, uint32_t cgen, uint64_t creq, uint8_t status,
			  uint16_t batch, const uint8_t *data, uint32_t len)
{
	struct client *cl = &f->clients[ci];
	f->answered++;
	if (!cl->open || cl->gen != cgen)
		return;
	struct sym_msg m = { .type = SYM_MSG_ANSWER };
	m.u.answer.req_id = creq;
	m.u.answer.status = status;
	m.u.answer.batch = batch;
	m.u.answer.len = status == SYM_WIRE_OK ? len : 0;
	m.u.answer.data = data;
	int rc = sym_stream_send(&cl->st, &m, CLIENT_MAX_QUEUED);
	if (rc < 0) {
		sym_rt_log(f->who, "client %u: %s; closing it", ci, rc == -ENOBUFS ? "not reading its answers" : strerror(-rc));
		client_close(f, ci);
		return;
	}
	client_watch_out(f, ci, sym_stream_queued(&cl->st) > 0);
}

/* Answers slot i's request and frees the slot. */
static void answer_slot(struct frontend *f, uint32_t i, uint8_t status, uint16_t batch, const uint8_t *data,
			uint32_t len)
{
	struct slot *s = &f->slots[i];
	answer_client(f, s->client, s->cgen, s->creq, status, batch, data, len);
	s->busy = false;
	s->gen++;
	f->freeslots[f->nfree++] = i;
}

static void schedd_lost(struct frontend *f, const char *why)
{
	if (f->schedd) {
		sym_rt_close(&f->closed, f->schedd);
		f->schedd = NULL;
	}
	if (f->schedd_up)
		sym_rt_log(f->who, "scheduler lost (%s): answering waiting requests 'unavailable'", why);
	else if (f->o->verbose)
		sym_rt_log(f->who, "scheduler not reachable: %s", why);
	f->schedd_up = false;
	for (uint32_t i = 0; i < (uint32_t)f->c->pool_slots; i++)
		if (f->slots[i].busy)
			answer_slot(f, i, SYM_WIRE_UNAVAILABLE, 0, NULL, 0);
	f->next_connect = sym_monotonic_ns() + 100 * SYM_MS;
}

static void on_request(struct frontend *f, uint32_t ci, const struct sym_msg *m)
{
	const struct sym_experiment *e = &f->c->exp;
	struct client *cl = &f->clients[ci];
	uint64_t creq = m->u.request.req_id;
	uint8_t refuse = SYM_WIRE_OK;
	if (m->u.request.model >= e->nmodels || m->u.request.len > f->c->input_max || !m->u.request.len)
		refuse = SYM_WIRE_BAD_REQUEST;
	else if (!f->schedd_up)
		refuse = SYM_WIRE_UNAVAILABLE;
	else if (!f->nfree)
		refuse = SYM_WIRE_OVERLOADED;
	if (refuse) {
		f->refused++;
		answer_client(f, ci, cl->gen, creq, refuse, 0, NULL, 0);
		return;
	}
	uint32_t i = f->freeslots[--f->nfree];
	struct slot *s = &f->slots[i];
	s->busy = true;
	s->model = m->u.request.model;
	s->client = ci;
	s->cgen = cl->gen;
	s->creq = creq;
	uint8_t *p = f->pool + (size_t)i * f->c->input_max;
	memcpy(p, m->u.request.data, m->u.request.len);
	struct sym_msg meta = { .type = SYM_MSG_META };
	meta.u.meta.req_id = slot_id(f, i);
	meta.u.meta.model = s->model;
	meta.u.meta.frontend = (uint32_t)f->id;
	meta.u.meta.budget_ns = m->u.request.budget_ns > 0 ? m->u.request.budget_ns : f->slo[s->model];
	meta.u.meta.addr = sym_fab_mr_addr(f->mr, p);
	meta.u.meta.len = m->u.request.len;
	meta.u.meta.key = sym_fab_mr_key(f->mr);
	f->accepted++;
	if (sym_rt_send(f->who, f->schedd, &meta, NULL, NULL))
		schedd_lost(f, "sending failed");
}

static void on_client(struct frontend *f, uint32_t ci, uint32_t events)
{
	struct client *cl = &f->clients[ci];
	if (events & EPOLLOUT) {
		int rc = sym_stream_flush(&cl->st);
		if (rc < 0) {
			client_close(f, ci);
			return;
		}
		client_watch_out(f, ci, rc > 0);
	}
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	for (int round = 0; round < 16 && cl->open; round++) {
		long n = sym_stream_read(&cl->st);
		if (n == -EAGAIN)
			break;
		if (n <= 0) {
			if (f->o->verbose)
				sym_rt_log(f->who, "client %u left", ci);
			client_close(f, ci);
			return;
		}
		struct sym_msg m;
		char why[200];
		long k;
		while (cl->open && (k = sym_stream_next(&cl->st, &m, why, sizeof(why))) > 0) {
			if (m.type != SYM_MSG_REQUEST) {
				sym_rt_log(f->who, "client %u sent a %s message; closing it", ci,
					   sym_wire_type_name(m.type));
				client_close(f, ci);
				return;
			}
			on_request(f, ci, &m);
		}
		if (cl->open && k < 0) {
			sym_rt_log(f->who, "client %u: malformed message (%s); closing it", ci, why);
			client_close(f, ci);
			return;
		}
	}
}

static void on_accept(struct frontend *f)
{
	for (;;) {
		int fd = sym_tcp_accept(f->lfd);
		if (fd < 0)
			return;
		uint32_t ci = 0;
		while (ci < f->nclients && f->clients[ci].open)
			ci++;
		if (ci == f->nclients) {
			if (f->nclients == f->capclients) {
				uint32_t cap = f->capclients ? f->capclients * 2 : 16;
				struct client *cls = realloc(f->clients, cap * sizeof(*cls));
				if (!cls) {
					close(fd);
					return;
				}
				memset(cls + f->capclients, 0, (cap - f->capclients) * sizeof(*cls));
				f->clients = cls;
				f->capclients = cap;
			}
			f->nclients++;
		}
		struct client *cl = &f->clients[ci];
		uint32_t gen = cl->gen;
		sym_stream_init(&cl->st, fd);
		cl->gen = gen;
		cl->open = true;
		cl->want_out = false;
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = ci };
		epoll_ctl(f->ep, EPOLL_CTL_ADD, fd, &ev);
		if (f->o->verbose)
			sym_rt_log(f->who, "client %u connected", ci);
	}
}

static void on_fab_msg(struct frontend *f, struct sym_fab_conn *conn, const uint8_t *data, size_t len)
{
	struct sym_msg m;
	char why[200];
	long n = sym_wire_decode(data, len, &m, why, sizeof(why));
	if (n <= 0 || (size_t)n != len) {
		sym_rt_log(f->who, "malformed message from %s: %s; closing it", conn == f->schedd ? "schedd" : "a backend",
			   n < 0 ? why : "bad length");
		if (conn == f->schedd)
			schedd_lost(f, "malformed message");
		else
			sym_rt_close(&f->closed, conn);
		return;
	}
	if (m.type == SYM_MSG_DROP && conn == f->schedd) {
		f->drops++;
		struct slot *s = slot_get(f, m.u.drop.req_id);
		if (!s) {
			f->stale++;
			return;
		}
		answer_slot(f, (uint32_t)m.u.drop.req_id, m.u.drop.reason, 0, NULL, 0);
		return;
	}
	if (m.type == SYM_MSG_RESULT && conn != f->schedd) {
		f->results++;
		struct slot *s = slot_get(f, m.u.result.req_id);
		if (!s) {
			f->stale++;
			return;
		}
		answer_slot(f, (uint32_t)m.u.result.req_id, m.u.result.status, m.u.result.batch, m.u.result.data,
			    m.u.result.len);
		return;
	}
	if (m.type == SYM_MSG_HELLO && conn != f->schedd && m.u.hello.role == SYM_ROLE_BACKEND)
		return;
	sym_rt_log(f->who, "unexpected %s message from %s; closing it", sym_wire_type_name(m.type),
		   conn == f->schedd ? "schedd" : "a backend");
	if (conn == f->schedd)
		schedd_lost(f, "unexpected message");
	else
		sym_rt_close(&f->closed, conn);
}

static void fab_events(struct frontend *f)
{
	struct sym_fab_event ev[64];
	int n;
	while ((n = sym_fab_poll(f->fab, ev, 64)) > 0) {
		f->closed.n = 0;
		f->closed.overflow = false;
		for (int i = 0; i < n; i++) {
			struct sym_fab_event *e = &ev[i];
			if (sym_rt_was_closed(&f->closed, e->conn))
				continue;
			switch (e->type) {
			case SYM_FAB_CONNECTED:
				if (e->conn == f->schedd) {
					struct sym_msg h = { .type = SYM_MSG_HELLO };
					h.u.hello.role = SYM_ROLE_FRONTEND;
					h.u.hello.id = (uint32_t)f->id;
					if (sym_rt_send(f->who, f->schedd, &h, NULL, NULL) == 0) {
						f->schedd_up = true;
						if (!f->o->quiet)
							sym_rt_log(f->who, "connected to schedd");
					}
				}
				break;
			case SYM_FAB_ACCEPTED:
				if (f->o->verbose)
					sym_rt_log(f->who, "a backend connected");
				break;
			case SYM_FAB_MSG:
				on_fab_msg(f, e->conn, e->data, e->len);
				break;
			case SYM_FAB_CLOSED:
				if (e->conn == f->schedd)
					schedd_lost(f, e->reason);
				else {
					if (f->o->verbose)
						sym_rt_log(f->who, "a backend connection closed: %s", e->reason);
					sym_rt_close(&f->closed, e->conn);
				}
				break;
			default:
				break;
			}
		}
		if (n < 64)
			break;
	}
}

int sym_frontend_run(struct sym_cluster *c, const struct sym_rt_opts *o)
{
	struct frontend f = { .c = c, .o = o, .id = o->id, .ep = -1, .lfd = -1 };
	snprintf(f.who, sizeof(f.who), "frontend %d", o->id);
	const struct sym_cluster_fe *me = &c->frontends[o->id];
	char err[1024] = "";
	int rc = 1;
	size_t pool_bytes = (size_t)c->pool_slots * c->input_max;
	f.pool = malloc(pool_bytes);
	f.slots = calloc((size_t)c->pool_slots, sizeof(*f.slots));
	f.freeslots = malloc((size_t)c->pool_slots * sizeof(*f.freeslots));
	f.slo = malloc(c->exp.nmodels * sizeof(*f.slo));
	if (!f.pool || !f.slots || !f.freeslots || !f.slo) {
		sym_rt_log(f.who, "out of memory for a pool of %zu bytes", pool_bytes);
		goto out;
	}
	for (size_t m = 0; m < c->exp.nmodels; m++)
		f.slo[m] = sym_ms(c->exp.model_slo_ms[m]);
	for (int i = c->pool_slots - 1; i >= 0; i--)
		f.freeslots[f.nfree++] = (uint32_t)i;
	struct sym_fab_cfg fc = { .provider = c->provider };
	if (sym_fab_open(&f.fab, &fc, err, sizeof(err)) ||
	    sym_fab_mr_reg(f.fab, f.pool, pool_bytes, SYM_FAB_REMOTE_READ, &f.mr, err, sizeof(err)) ||
	    sym_fab_listen(f.fab, me->fabric.host, me->fabric.port, err, sizeof(err))) {
		sym_rt_log(f.who, "%s", err);
		goto out;
	}
	f.lfd = sym_tcp_listen(me->clients.host, me->clients.port, err, sizeof(err));
	if (f.lfd < 0) {
		sym_rt_log(f.who, "clients: %s", err);
		goto out;
	}
	f.ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = LISTEN_TAG };
	struct epoll_event fev = { .events = EPOLLIN, .data.u64 = FAB_TAG };
	if (f.ep < 0 || epoll_ctl(f.ep, EPOLL_CTL_ADD, f.lfd, &ev) ||
	    epoll_ctl(f.ep, EPOLL_CTL_ADD, sym_fab_fd(f.fab), &fev)) {
		sym_rt_log(f.who, "epoll: %s", strerror(errno));
		goto out;
	}
	if (!o->quiet)
		sym_rt_log(f.who, "clients on %s:%s, fabric (%s) on %s:%s, pool of %d inputs of %zu bytes",
			   me->clients.host, me->clients.port, sym_fab_provider(f.fab), me->fabric.host,
			   me->fabric.port, c->pool_slots, c->input_max);
	sym_time beat = sym_ms(c->heartbeat_ms);
	rc = 0;
	while (!sym_rt_stop) {
		sym_time now = sym_monotonic_ns();
		if (!f.schedd && now >= f.next_connect) {
			if (sym_fab_connect(f.fab, c->schedd.host, c->schedd.port, &f.schedd, err, sizeof(err))) {
				sym_rt_log(f.who, "%s", err);
				f.next_connect = now + 100 * SYM_MS;
			}
		}
		if (f.schedd_up && now >= f.next_beat) {
			struct sym_msg h = { .type = SYM_MSG_HEARTBEAT };
			h.u.heartbeat.id = (uint32_t)f.id;
			h.u.heartbeat.seq = ++f.beat_seq;
			if (sym_rt_send(f.who, f.schedd, &h, NULL, NULL))
				schedd_lost(&f, "heartbeat not sent");
			f.next_beat = now + beat;
		}
		fab_events(&f);
		sym_time wake = f.schedd_up ? f.next_beat : f.next_connect;
		int timeout = 0;
		if (sym_fab_trywait(f.fab))
			timeout = wake > now ? (int)((wake - now + SYM_MS - 1) / SYM_MS) : 0;
		struct epoll_event evs[64];
		int n = epoll_wait(f.ep, evs, 64, timeout);
		if (n < 0 && errno != EINTR) {
			sym_rt_log(f.who, "epoll_wait: %s", strerror(errno));
			rc = 1;
			break;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u64 == LISTEN_TAG)
				on_accept(&f);
			else if (evs[i].data.u64 != FAB_TAG)
				on_client(&f, (uint32_t)evs[i].data.u64, evs[i].events);
		}
	}
	/* Exactly one answer each, even now. */
	for (uint32_t i = 0; i < (uint32_t)c->pool_slots; i++)
		if (f.slots[i].busy)
			answer_slot(&f, i, SYM_WIRE_UNAVAILABLE, 0, NULL, 0);
	for (uint32_t i = 0; i < f.nclients; i++)
		if (f.clients[i].open)
			sym_stream_flush(&f.clients[i].st);
	if (!o->quiet)
		sym_rt_log(f.who, "stopping: %" PRIu64 " requests accepted, %" PRIu64 " refused, %" PRIu64
			   " answers, %" PRIu64 " results, %" PRIu64 " drop notices, %" PRIu64 " stale",
			   f.accepted, f.refused, f.answered, f.results, f.drops, f.stale);
out:
	for (uint32_t i = 0; i < f.nclients; i++)
		if (f.clients[i].open)
			sym_stream_close(&f.clients[i].st);
	free(f.clients);
	if (f.lfd >= 0)
		close(f.lfd);
	if (f.ep >= 0)
		close(f.ep);
	if (f.mr)
		sym_fab_mr_close(f.mr);
	if (f.fab)
		sym_fab_destroy(f.fab);
	free(f.pool);
	free(f.slots);
	free(f.freeslots);
	free(f.slo);
	return rc;
}
