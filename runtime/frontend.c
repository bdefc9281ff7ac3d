/* runtime/frontend.c - a frontend: clients in, metadata to schedd, inputs
 * read by backends straight from its registered pool, answers out.
 *
 * Each accepted request takes a slot of the pool (input_max bytes and a
 * trailer, registered for remote reads) until it is answered; its input is
 * sealed there (runtime/inputseal.h) under a key each backend is told in its
 * GRANT, so a backend knows the bytes it read are the ones this frontend put
 * there for that request. The id it carries on
 * the fabric is the slot index with the slot's generation in the high half,
 * so a late result or drop for a slot already answered and reused is
 * recognised and ignored: every request gets exactly one answer, from
 * whichever of result, drop notice or failure comes first.
 *
 * Clients speak the native protocol (the binary wire format over TCP, as
 * loadgen does) or HTTP: the KServe v2 inference API and /metrics
 * (runtime/http.h, runtime/kserve.h). An HTTP inference is decoded straight
 * into its pool slot, and its connection waits, suspended, for the answer.
 *
 * One thread runs everything on the event loop (runtime/loop.h): the client
 * sockets, the HTTP server, the fabric (whose progress also serves
 * backends' reads of the pool), and the heartbeat and reconnection timers.
 * If schedd is unreachable, waiting requests are answered "unavailable" and
 * new ones are refused the same way until it is back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#include "core/build.h"
#include "runtime/auth.h"
#include "runtime/executor.h"
#include "runtime/fabric.h"
#include "runtime/http.h"
#include "runtime/inputseal.h"
#include "runtime/kserve.h"
#ifdef SYM_HAVE_GRPC
#include "runtime/grpc/grpc.h"
#endif
#include "runtime/loop.h"
#include "runtime/net.h"
#include "runtime/prom.h"
#include "runtime/run.h"
#include "runtime/tokens.h"
#include "sym_version.h"

#define CLIENT_MAX_QUEUED (4u << 20) /* unsent answer bytes before a client is cut off */
#define RECONNECT (100 * SYM_MS)      /* between attempts to reach schedd */
#define SWITCH (2 * SYM_MS)           /* from a failed attempt at the active scheduler to its standby */
#define OUTCOME_LATE SYM_WIRE_NSTATUS /* answered with its output, after its deadline */
#define NOUTCOMES (SYM_WIRE_NSTATUS + 1)

struct slot {
	uint32_t gen;
	bool busy;
	uint16_t model;
	uint32_t client;  /* index */
	uint32_t cgen;    /* the client's generation when it asked */
	uint64_t creq;    /* the client's id */
	sym_time t0;      /* when it came in */
	sym_time deadline;
	struct sym_http_req *hr; /* an HTTP request waiting for this answer, or NULL (a native client) */
	struct sym_grpc_call *gr; /* a gRPC call waiting for it, or NULL */
	bool gr_batch;            /* the gRPC input's shape had the batch dimension */
	struct sym_infer_req q;  /* what the HTTP request asked for */
};

/* Per model: what became of its requests, and how long the served ones took. */
struct fe_model {
	uint64_t outcome[NOUTCOMES];
	struct sym_hist latency; /* in to answer, of requests answered with their output */
};

/* A native client. Its index (slot->client) stays its own until its
 * handle's close callback has run. */
struct client {
	struct frontend *f;
	uint32_t idx;
	struct sym_stream st;
	struct sym_loop_io *io; /* NULL: the index is free */
	uint32_t gen;
	bool open;              /* false from client_close on */
	bool bye_sent, bye_acked; /* draining: we said bye; it said bye back (it sends nothing more) */
	bool hello;             /* its HELLO came (with a valid token, when the frontend asks for one) */
	sym_time since;         /* when it began waiting for the client: its accept, its last message, its last answer */
	uint32_t outstanding;   /* its requests not answered yet */
	uint8_t ip[16];         /* its address (an IPv4 one mapped), for clients_per_ip_max */
};

struct frontend {
	uint64_t overdue, beats; /* requests answered by the safety net (expire_overdue); heartbeats */
	struct sym_rt_ratelog overdue_log;
	sym_time schedd_heard;  /* the last message from schedd */
	unsigned schedd_try;   /* connection attempts: even the active scheduler, odd its standby */
	char schedd_addr[300];
	uint64_t resent;       /* requests sent again to a new scheduler */
	bool draining;         /* SIGTERM: no new request; stops once every slot is answered */
	bool drain_done;
	bool schedd_draining;  /* schedd said it is shutting down */
	uint32_t gpus_online;  /* as schedd last said (STATUS) */
	struct sym_loop_io *lio; /* the native clients' listener, until draining */
	struct sym_loop_timer *drain_t;
	struct sym_tokens tokens;    /* http_token_file's bearer tokens (runtime/tokens.h), or none */
	bool *off, *off_next;        /* per model: taking no request (schedd's STATUS); scratch */
	uint64_t unauthorized; /* inference requests refused 401 */
	uint64_t clients_refused; /* native clients closed at once: clients_max were connected, none idle */
	struct sym_budget clients_budget; /* what native clients' buffers hold beyond their base (clients_budget) */
	uint64_t clients_over_budget;     /* native clients closed when a message or an answer did not fit it */
	uint64_t clients_refused_ip; /* ... clients_per_ip_max from its address were, none idle */
	uint64_t clients_evicted; /* native clients closed to make room for a new one */
	uint64_t clients_timed_out; /* native clients closed: no message in time, or one too slow */
	struct sym_loop_timer *client_t; /* the native clients' deadlines */
	uint64_t bad_peers;       /* fabric members refused: not a backend of the cluster */
	struct sym_rt_ratelog refusal_log;
	uint32_t nopen; /* native clients connected */
	struct sym_rt_ratelog client_log; /* what clients provoke: at most a line a second */
	int64_t answer_batch;  /* the batch of the RESULT being answered (the debug trace), or -1 */
	struct sym_grpc *grpc; /* the gRPC API (runtime/grpc/grpc.h), or NULL */
	struct sym_cluster *c;
	const struct sym_rt_opts *o;
	int id;
	char who[32];
	struct sym_fab *fab;
	struct sym_loop *loop;
	struct sym_loop_timer *connect_t, *beat_t;
	struct sym_fab_mr *mr;
	uint8_t *pool;
	size_t stride;                 /* a slot: input_max bytes, then SYM_INPUT_TRAILER */
	uint8_t seal_key[SYM_INPUT_KEY]; /* what the inputs are sealed with (told in GRANTs) */
	struct slot *slots;
	uint32_t *freeslots;
	uint32_t nfree;
	struct client **clients;
	uint32_t nclients, capclients;
	int lfd;
	struct sym_fab_conn *schedd;
	bool schedd_up;
	uint64_t beat_seq;
	/* fencing (wire.h): the highest scheduler term seen, and the messages refused for a lower one */
	uint32_t term;
	uint64_t stale_msgs;
	struct sym_rt_ratelog term_log;
	sym_time beat_sent; /* our last heartbeat to schedd */
	sym_time *slo;
	struct sym_http *http;
	struct fe_model *ms;
	/* counters */
	uint64_t accepted, answered, results, drops, refused, stale;
};

/* New requests are taken: schedd is there and neither side is shutting down. */
static bool taking(const struct frontend *f)
{
	return f->schedd_up && !f->draining && !f->schedd_draining;
}

/* Ready (KServe): taking requests, and some GPU can run them. */
static bool ready(const struct frontend *f)
{
	return taking(f) && f->gpus_online > 0;
}

static uint64_t slot_id(const struct frontend *f, uint32_t i) { return (uint64_t)f->slots[i].gen << 32 | i; }

static inline uint8_t *slot_at(const struct frontend *f, uint32_t i) { return f->pool + (size_t)i * f->stride; }

static struct slot *slot_get(struct frontend *f, uint64_t id)
{
	uint32_t i = (uint32_t)id;
	if (i >= (uint32_t)f->c->pool_slots || !f->slots[i].busy || f->slots[i].gen != (uint32_t)(id >> 32))
		return NULL;
	return &f->slots[i];
}

static void client_freed(void *ctx)
{
	struct client *cl = ctx;
	sym_stream_close(&cl->st);
	cl->io = NULL;
}

static void maybe_drained(struct frontend *f);

/* Answers for it are dropped from now on; its socket closes at the end of the turn. */
static void client_close(struct frontend *f, uint32_t ci)
{
	struct client *cl = f->clients[ci];
	if (!cl->open)
		return;
	cl->open = false;
	f->nopen--;
	cl->gen++;
	sym_loop_io_close(cl->io, client_freed, cl);
	maybe_drained(f);
}

static void client_watch_out(struct frontend *f, uint32_t ci, bool on)
{
	struct client *cl = f->clients[ci];
	sym_loop_io_modify(cl->io, EPOLLIN | (on ? EPOLLOUT : 0));
}

/* Sends an answer to a client (if it is still there). */
static void answer_client(struct frontend *f, uint32_t ci, uint32_t cgen, uint64_t creq, uint8_t status,
			  uint16_t batch, const uint8_t *data, uint32_t len)
{
	struct client *cl = f->clients[ci];
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
		if (rc == -ENOBUFS && sym_stream_queued(&cl->st) + sym_wire_size(&m) <= CLIENT_MAX_QUEUED)
			f->clients_over_budget++;
		sym_rt_log_limited(&f->client_log, f->who, "client %u: %s; closing it", ci,
				   rc != -ENOBUFS ? strerror(-rc)
				   : sym_stream_queued(&cl->st) + sym_wire_size(&m) > CLIENT_MAX_QUEUED
					   ? "not reading its answers (4 MiB behind)"
					   : "its answers not read do not fit clients_budget now");
		client_close(f, ci);
		return;
	}
	cl->since = sym_monotonic_ns();
	client_watch_out(f, ci, sym_stream_queued(&cl->st) > 0);
}

static const char *const outcome_names[NOUTCOMES] = {
	[SYM_WIRE_OK] = "ok",
	[SYM_WIRE_DROPPED_EXPIRED] = "dropped_expired",
	[SYM_WIRE_DROPPED_EARLY] = "dropped_early",
	[SYM_WIRE_BACKEND_FAILED] = "backend_failed",
	[SYM_WIRE_FRONTEND_GONE] = "frontend_gone",
	[SYM_WIRE_BAD_REQUEST] = "bad_request",
	[SYM_WIRE_OVERLOADED] = "overloaded",
	[SYM_WIRE_UNAVAILABLE] = "unavailable",
	[SYM_WIRE_REJECTED] = "rejected",
	[SYM_WIRE_UNAUTHORIZED] = "unauthorized",
	[SYM_WIRE_NOT_LOADED] = "not_loaded",
	[OUTCOME_LATE] = "late",
};

static void account(struct frontend *f, int model, int status, sym_time t0, sym_time deadline)
{
	if (model < 0 || (size_t)model >= f->c->exp.nmodels || status < 0 || status >= SYM_WIRE_NSTATUS)
		return;
	sym_time now = sym_monotonic_ns();
	struct fe_model *fm = &f->ms[model];
	if (status == SYM_WIRE_OK) {
		sym_hist_record(&fm->latency, now - t0);
		if (now > deadline)
			status = OUTCOME_LATE;
	}
	fm->outcome[status]++;
}

static void http_answer(struct frontend *f, struct slot *s, uint8_t status, uint16_t batch, const uint8_t *data,
			uint32_t len);

static void grpc_answer(struct frontend *f, struct slot *s, uint8_t status, const uint8_t *data, uint32_t len);
static void drained(struct frontend *f);
static void on_drain_timer(struct sym_loop_timer *t, void *ctx);

/* The debug traces of a request: in (with the client's own id), and answered. */
static void trace_in(struct frontend *f, uint32_t i)
{
	struct slot *s = &f->slots[i];
	char name[40], cid[32];
	sym_rt_request_name((uint32_t)f->id, slot_id(f, i), name, sizeof(name));
	if (!s->hr)
		snprintf(cid, sizeof(cid), "%" PRIu64, s->creq);
	struct sym_log_fields lf = { .request = name, .client_id = s->hr ? (s->q.id[0] ? s->q.id : NULL) : cid,
				     .batch = -1 };
	sym_rt_trace(f->who, &lf, "request %s in: model %s, %s client%s%s, deadline in %.3f ms", name,
		     f->c->exp.models[s->model].name, s->hr ? "HTTP" : "native", lf.client_id ? " id " : "",
		     lf.client_id ? lf.client_id : "", (double)(s->deadline - s->t0) / 1e6);
}

static void trace_answer(struct frontend *f, uint32_t i, uint8_t status, uint16_t batch)
{
	struct slot *s = &f->slots[i];
	char name[40], by[80] = "";
	sym_rt_request_name((uint32_t)f->id, slot_id(f, i), name, sizeof(name));
	if (f->answer_batch >= 0)
		snprintf(by, sizeof(by), " by batch %" PRId64 " (of %u)", f->answer_batch, batch);
	struct sym_log_fields lf = { .request = name, .batch = f->answer_batch };
	sym_time now = sym_monotonic_ns();
	sym_rt_trace(f->who, &lf, "request %s answered %s%s after %.3f ms%s", name, sym_wire_status_name(status), by,
		     (double)(now - s->t0) / 1e6, status == SYM_WIRE_OK && now > s->deadline ? " (late)" : "");
}

/* Answers slot i's request and frees the slot. */
static void answer_slot(struct frontend *f, uint32_t i, uint8_t status, uint16_t batch, const uint8_t *data,
			uint32_t len)
{
	struct slot *s = &f->slots[i];
	account(f, s->model, status, s->t0, s->deadline);
	if (sym_rt_tracing())
		trace_answer(f, i, status, batch);
	if (s->hr) {
		http_answer(f, s, status, batch, data, len);
		s->hr = NULL;
	} else if (s->gr) {
		grpc_answer(f, s, status, data, len);
		s->gr = NULL;
	} else {
		struct client *cl = f->clients[s->client];
		if (cl->open && cl->gen == s->cgen && cl->outstanding)
			cl->outstanding--;
		answer_client(f, s->client, s->cgen, s->creq, status, batch, data, len);
	}
	s->busy = false;
	s->gen++;
	/* an answered request's input is nobody's business any more: a backend that reads the slot
	 * late (a stale plan) or by mistake gets zeros (a request's input is of its model's size) */
	size_t used = sym_cluster_input_bytes(f->c, s->model);
	memset(slot_at(f, i), 0, (used < f->c->input_max ? used : f->c->input_max) + SYM_INPUT_TRAILER);
	f->freeslots[f->nfree++] = i;
	maybe_drained(f);
}

static void schedd_lost(struct frontend *f, const char *why);

/* A message to schedd, carrying the highest term we have seen. */
static int to_schedd(struct frontend *f, struct sym_msg *m)
{
	m->term = f->term;
	return sym_rt_send(f->who, f->schedd, m, NULL, NULL);
}

/* Slot i's metadata to schedd, with what is left of its budget (decoding a
 * large body took some of it; a request sent again after a failover, more).
 * Returns whether it went. */
static bool send_meta(struct frontend *f, uint32_t i)
{
	struct slot *s = &f->slots[i];
	int64_t left = (int64_t)(s->deadline - sym_monotonic_ns());
	struct sym_msg meta = { .type = SYM_MSG_META };
	meta.u.meta.req_id = slot_id(f, i);
	meta.u.meta.model = s->model;
	meta.u.meta.frontend = (uint32_t)f->id;
	meta.u.meta.budget_ns = left > 0 ? left : 1; /* spent: schedd drops it as expired */
	meta.u.meta.addr = sym_fab_mr_addr(f->mr, slot_at(f, i));
	meta.u.meta.len = (uint32_t)sym_cluster_input_bytes(f->c, s->model);
	meta.u.meta.key = 0; /* each backend has its own key (GRANT) */
	if (!f->schedd_up || to_schedd(f, &meta)) {
		if (f->schedd_up)
			schedd_lost(f, "sending failed");
		return false;
	}
	return true;
}

/* The requests held past their deadlines while no scheduler was there: answered expired. */
static void expire_held(struct frontend *f)
{
	sym_time now = sym_monotonic_ns();
	for (uint32_t i = 0; i < (uint32_t)f->c->pool_slots; i++)
		if (f->slots[i].busy && f->slots[i].deadline <= now)
			answer_slot(f, i, SYM_WIRE_DROPPED_EXPIRED, 0, NULL, 0);
}

/* A safety net under exactly-once: a request sent to schedd and still held
 * well past its deadline (2 failure_ms and 100 ms more: a failed backend's
 * requests are dropped by schedd within failure_ms) was lost on the way, by a
 * backend that could not reach us; it is answered "backend failed". */
static void expire_overdue(struct frontend *f)
{
	sym_time cut = sym_monotonic_ns() - 2 * sym_ms(f->c->failure_ms) - 100 * SYM_MS;
	for (uint32_t i = 0; i < (uint32_t)f->c->pool_slots; i++)
		if (f->slots[i].busy && f->slots[i].deadline < cut) {
			f->overdue++;
			sym_rt_log_limited(&f->overdue_log, f->who, "a request %.0f ms past its deadline with no answer: "
					   "answering 'backend failed'", (double)(cut - f->slots[i].deadline) / 1e6 +
					   2 * f->c->failure_ms + 100);
			answer_slot(f, i, SYM_WIRE_BACKEND_FAILED, 0, NULL, 0);
		}
}

static void schedd_lost(struct frontend *f, const char *why)
{
	if (f->schedd) {
		sym_loop_fab_close(f->loop, f->schedd, NULL, NULL);
		f->schedd = NULL;
	}
	sym_loop_timer_stop(f->beat_t);
	bool hold = f->c->has_standby && !f->draining;
	uint32_t held = (uint32_t)f->c->pool_slots - f->nfree;
	if (f->schedd_up && hold)
		sym_rt_warn(f->who, "scheduler lost (%s): holding %u requests for the next scheduler (or until their "
			    "deadlines)", why, held);
	else if (f->schedd_up)
		sym_rt_warn(f->who, "scheduler lost (%s): answering waiting requests 'unavailable'", why);
	else if (f->o->verbose)
		sym_rt_warn(f->who, "scheduler not reachable: %s", why);
	f->schedd_up = false;
	f->gpus_online = 0;
	/* with a standby, the requests held go to it once a scheduler takes them (those the old one
	 * had sent to a backend may then run twice; the first answer counts, the other is stale) */
	for (uint32_t i = 0; i < (uint32_t)f->c->pool_slots && !hold; i++)
		if (f->slots[i].busy)
			answer_slot(f, i, SYM_WIRE_UNAVAILABLE, 0, NULL, 0);
	/* the standby is tried at once after the active one; the active one again after RECONNECT */
	sym_loop_timer_set(f->connect_t, sym_monotonic_ns() + (f->c->has_standby && f->schedd_try % 2 ? SWITCH : RECONNECT),
			   0);
}

/* Takes a free slot (there must be one) for a request of model m. */
static uint32_t take_slot(struct frontend *f, int model)
{
	uint32_t i = f->freeslots[--f->nfree];
	struct slot *s = &f->slots[i];
	s->busy = true;
	s->model = (uint16_t)model;
	s->hr = NULL;
	s->gr = NULL;
	s->t0 = sym_monotonic_ns();
	return i;
}

/* Slot i holds its input (len bytes): its metadata goes to schedd. */
static void submit(struct frontend *f, uint32_t i, int64_t budget_ns, uint32_t len)
{
	struct slot *s = &f->slots[i];
	s->deadline = s->t0 + budget_ns;
	(void)len; /* a request's input is of its model's size (checked when it came in) */
	/* sealed once, where it lies: a META sent again after a failover names the same bytes */
	sym_input_seal(f->seal_key, slot_id(f, i), slot_at(f, i), sym_cluster_input_bytes(f->c, s->model),
		       f->c->input_encryption);
	f->accepted++;
	if (sym_rt_tracing())
		trace_in(f, i);
	send_meta(f, i);
}

/* The models schedd says take no request (the repository API unloaded
 * them, or is unloading them): refused here at once with "not loaded". */
static void set_models_off(struct frontend *f, const struct sym_msg *m)
{
	size_t n = f->c->exp.nmodels;
	for (size_t k = 0; k < n; k++)
		f->off_next[k] = false;
	for (uint16_t i = 0; i < m->u.status.noff; i++) {
		uint16_t k = sym_wire_status_model(m, i);
		if (k < n)
			f->off_next[k] = true;
	}
	for (size_t k = 0; k < n; k++)
		if (f->off[k] != f->off_next[k]) {
			f->off[k] = f->off_next[k];
			if (!f->o->quiet && !sym_experiment_slot_empty(&f->c->exp, k))
				sym_rt_log(f->who, "model %s %s", f->c->models[k].name,
					   f->off[k] ? "unloaded: its requests are refused" : "loaded: taking requests");
		}
}

/* schedd filled a spare model slot (a model added to the repository): read
 * from this frontend's repository, so that its requests are checked against
 * its signature; it takes them once a STATUS says it is loaded. */
static void on_slot(struct frontend *f, const struct sym_msg *m)
{
	char err[512];
	bool capped;
	size_t k = m->u.model.model;
	int rc = sym_cluster_set_slot(f->c, k, m->u.model.name, m->u.model.name_len, &capped, err, sizeof(err));
	if (rc < 0) {
		sym_rt_warn(f->who, "model %.*s (spare slot %zu): %s; its requests are refused here", m->u.model.name_len,
			    m->u.model.name, k, err);
		if (k < f->c->exp.nmodels)
			f->off[k] = true;
		return;
	}
	if (rc > 0) {
		f->slo[k] = sym_ms(f->c->exp.model_slo_ms[k]);
		if (!f->o->quiet)
			sym_rt_log(f->who, "model %s added (spare slot %zu)", f->c->models[k].name, k - f->c->exp.slot0);
	}
}

static void on_request(struct frontend *f, uint32_t ci, const struct sym_msg *m)
{
	const struct sym_experiment *e = &f->c->exp;
	struct client *cl = f->clients[ci];
	uint64_t creq = m->u.request.req_id;
	uint8_t refuse = SYM_WIRE_OK;
	if (m->u.request.model >= e->nmodels ||
	    m->u.request.len != sym_cluster_input_bytes(f->c, m->u.request.model))
		refuse = SYM_WIRE_BAD_REQUEST; /* a request of another size would fail its whole batch */
	else if (m->u.request.budget_ns > (int64_t)(f->c->deadline_max_ms * 1e6))
		refuse = SYM_WIRE_BAD_REQUEST; /* a slot held that long by a client that may be gone: no */
	else if (f->off[m->u.request.model])
		refuse = SYM_WIRE_NOT_LOADED;
	else if (!taking(f))
		refuse = SYM_WIRE_UNAVAILABLE;
	else if (!f->nfree)
		refuse = SYM_WIRE_OVERLOADED;
	if (refuse) {
		f->refused++;
		if (m->u.request.model < e->nmodels)
			f->ms[m->u.request.model].outcome[refuse]++;
		answer_client(f, ci, cl->gen, creq, refuse, 0, NULL, 0);
		return;
	}
	uint32_t i = take_slot(f, m->u.request.model);
	struct slot *s = &f->slots[i];
	cl->outstanding++;
	s->client = ci;
	s->cgen = cl->gen;
	s->creq = creq;
	memcpy(slot_at(f, i), m->u.request.data, m->u.request.len);
	submit(f, i, m->u.request.budget_ns > 0 ? m->u.request.budget_ns : f->slo[s->model], m->u.request.len);
}


/* A native client without a valid HELLO: it gets an answer saying so
 * (status "unauthorized", for req_id: its request's, or 0), and is closed. */
static void refuse_client(struct frontend *f, uint32_t ci, uint64_t req_id, uint8_t status, const char *why)
{
	struct client *cl = f->clients[ci];
	sym_rt_log_limited(&f->client_log, f->who, "client %u refused: %s", ci, why);
	struct sym_msg m = { .type = SYM_MSG_ANSWER };
	m.u.answer.req_id = req_id;
	m.u.answer.status = status;
	if (sym_stream_send(&cl->st, &m, CLIENT_MAX_QUEUED) == 0)
		sym_stream_flush(&cl->st);
	/* what else it sent is read and dropped, so that closing does not reset the answer away */
	char sink[4096];
	for (int k = 0; k < 64 && read(cl->st.fd, sink, sizeof(sink)) > 0; k++)
		;
	client_close(f, ci);
}

/* A native client whose next message (or whose answers not read) the budget
 * for native clients cannot hold now: answered "overloaded" (for the request
 * whose beginning is in, if any) and closed; the others keep theirs. */
static void over_budget(struct frontend *f, uint32_t ci)
{
	struct client *cl = f->clients[ci];
	f->clients_over_budget++;
	uint64_t req_id = 0;
	const uint8_t *h = cl->st.rbuf + cl->st.roff;
	if (cl->st.rlen - cl->st.roff >= SYM_WIRE_HEADER + 8 && h[6] == SYM_MSG_REQUEST)
		for (int i = 0; i < 8; i++)
			req_id |= (uint64_t)h[SYM_WIRE_HEADER + i] << (8 * i);
	char why[160];
	snprintf(why, sizeof(why), "its message does not fit clients_budget now (%zu of %zu bytes held)",
		 f->clients_budget.used, f->clients_budget.max);
	refuse_client(f, ci, req_id, SYM_WIRE_OVERLOADED, why);
}

/* A native client's first message must be its HELLO (role client; with one of
 * the bearer tokens of http_token_file when the frontend has them); a HELLO
 * later is a keep-alive. Returns whether m goes on to be served. */
static bool client_hello(struct frontend *f, uint32_t ci, const struct sym_msg *m)
{
	struct client *cl = f->clients[ci];
	if (m->type == SYM_MSG_HELLO && m->u.hello.role == SYM_ROLE_CLIENT) {
		if (!cl->hello && f->tokens.n && !sym_tokens_ok(&f->tokens, m->u.hello.token, m->u.hello.token_len)) {
			f->unauthorized++;
			refuse_client(f, ci, 0, SYM_WIRE_UNAUTHORIZED, m->u.hello.token_len ? "its HELLO's bearer token is not one of http_token_file"
								   : "its HELLO carries no bearer token, and http_token_file asks for one");
			return false;
		}
		cl->hello = true;
		return false;
	}
	if (cl->hello)
		return true;
	char why[160];
	snprintf(why, sizeof(why), "its first message is a %s, not a HELLO (the native protocol since wire version 5)",
		 sym_wire_type_name(m->type));
	f->unauthorized++;
	refuse_client(f, ci, m->type == SYM_MSG_REQUEST ? m->u.request.req_id : 0, SYM_WIRE_UNAUTHORIZED, why);
	return false;
}

static void on_client(struct sym_loop_io *io, uint32_t events, void *ctx)
{
	(void)io;
	struct client *cl = ctx;
	struct frontend *f = cl->f;
	uint32_t ci = cl->idx;
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
		if (n == -ENOBUFS) {
			over_budget(f, ci);
			return;
		}
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
			cl->since = sym_monotonic_ns();
			if (!client_hello(f, ci, &m))
				continue;
			if (m.type == SYM_MSG_BYE && cl->bye_sent && m.u.bye.role == SYM_ROLE_CLIENT) {
				cl->bye_acked = true; /* everything it sent us came before this */
				maybe_drained(f);
				continue;
			}
			if (m.type != SYM_MSG_REQUEST) {
				sym_rt_log_limited(&f->client_log, f->who, "client %u sent a %s message; closing it", ci,
					   sym_wire_type_name(m.type));
				client_close(f, ci);
				return;
			}
			on_request(f, ci, &m);
		}
		if (cl->open && k == -ENOBUFS) {
			over_budget(f, ci);
			return;
		}
		if (cl->open && k < 0) {
			sym_rt_log_limited(&f->client_log, f->who, "client %u: malformed message (%s); closing it", ci, why);
			client_close(f, ci);
			return;
		}
	}
}

/* A free client index (one whose last socket has closed), or UINT32_MAX. */
static uint32_t client_new(struct frontend *f)
{
	uint32_t ci = 0;
	while (ci < f->nclients && f->clients[ci]->io)
		ci++;
	if (ci < f->nclients)
		return ci;
	if (f->nclients == f->capclients) {
		uint32_t cap = f->capclients ? f->capclients * 2 : 16;
		struct client **cls = realloc(f->clients, cap * sizeof(*cls));
		if (!cls)
			return UINT32_MAX;
		f->clients = cls;
		f->capclients = cap;
	}
	struct client *cl = calloc(1, sizeof(*cl));
	if (!cl)
		return UINT32_MAX;
	cl->f = f;
	cl->idx = ci;
	cl->st.fd = -1;
	f->clients[f->nclients++] = cl;
	return ci;
}

/* The bytes of a message a client has begun and not finished. */
static size_t client_partial(const struct client *cl)
{
	return cl->st.rlen - cl->st.roff;
}

/* The client to close for a new one (from address ip, or from any when NULL):
 * one that never sent its HELLO, else one with nothing outstanding and nothing
 * half-sent; the one waiting longest of them. UINT32_MAX: none. */
static uint32_t client_victim(const struct frontend *f, const uint8_t *ip)
{
	uint32_t best = UINT32_MAX;
	int best_rank = 0;
	for (uint32_t i = 0; i < f->nclients; i++) {
		const struct client *cl = f->clients[i];
		if (!cl->open || (ip && memcmp(cl->ip, ip, 16)))
			continue;
		int rank = !cl->hello ? 2 : !cl->outstanding && !client_partial(cl) && !cl->bye_sent ? 1 : 0;
		if (rank && (rank > best_rank || (rank == best_rank && cl->since < f->clients[best]->since))) {
			best = i;
			best_rank = rank;
		}
	}
	return best;
}

/* A client's address, as 16 bytes (IPv4 mapped into IPv6). */
static void peer_ip(int fd, uint8_t ip[16])
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	memset(ip, 0, 16);
	if (getpeername(fd, (struct sockaddr *)&ss, &sl))
		return;
	if (ss.ss_family == AF_INET) {
		ip[10] = ip[11] = 0xff;
		memcpy(ip + 12, &((struct sockaddr_in *)&ss)->sin_addr, 4);
	} else if (ss.ss_family == AF_INET6) {
		memcpy(ip, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	}
}

/* Room for a client from ip: at clients_per_ip_max from its address, or at
 * clients_max, one that waits idle (or never said HELLO) is closed for it.
 * Returns false when none can be: the new one is refused. */
static bool client_room(struct frontend *f, const uint8_t ip[16])
{
	if (f->c->clients_per_ip_max) {
		uint32_t same = 0;
		for (uint32_t i = 0; i < f->nclients; i++)
			same += f->clients[i]->open && !memcmp(f->clients[i]->ip, ip, 16);
		if (same >= (uint32_t)f->c->clients_per_ip_max) {
			uint32_t v = client_victim(f, ip);
			if (v == UINT32_MAX) {
				f->clients_refused_ip++;
				sym_rt_log_limited(&f->client_log, f->who, "refused a client: %d from its address are "
						   "connected, none idle (clients_per_ip_max)", f->c->clients_per_ip_max);
				return false;
			}
			f->clients_evicted++;
			sym_rt_log_limited(&f->client_log, f->who, "closed client %u, idle, for a new one from its "
					   "address (clients_per_ip_max %d)", v, f->c->clients_per_ip_max);
			client_close(f, v);
		}
	}
	if (f->nopen >= (uint32_t)f->c->clients_max) {
		uint32_t v = client_victim(f, NULL);
		if (v == UINT32_MAX) {
			f->clients_refused++;
			sym_rt_log_limited(&f->client_log, f->who, "refused a client: %d are connected, none idle "
					   "(clients_max)", f->c->clients_max);
			return false;
		}
		f->clients_evicted++;
		sym_rt_log_limited(&f->client_log, f->who, "closed client %u, idle, for a new one (clients_max %d)", v,
				   f->c->clients_max);
		client_close(f, v);
	}
	return true;
}

static void on_accept(struct sym_loop_io *io, uint32_t events, void *ctx)
{
	(void)io, (void)events;
	struct frontend *f = ctx;
	for (;;) {
		int fd = sym_tcp_accept(f->lfd);
		if (fd < 0)
			return;
		uint8_t ip[16];
		peer_ip(fd, ip);
		if (!client_room(f, ip)) {
			close(fd);
			continue;
		}
		uint32_t ci = client_new(f);
		struct client *cl = ci == UINT32_MAX ? NULL : f->clients[ci];
		if (!cl || sym_loop_io_start(f->loop, fd, EPOLLIN, on_client, cl, &cl->io)) {
			sym_rt_error(f->who, "no room for a client (out of memory); refusing it");
			close(fd);
			return;
		}
		uint32_t gen = cl->gen;
		sym_stream_init(&cl->st, fd);
		cl->st.budget = &f->clients_budget;
		cl->gen = gen;
		cl->open = true;
		cl->hello = false;
		cl->bye_sent = cl->bye_acked = false;
		cl->outstanding = 0;
		cl->since = sym_monotonic_ns();
		memcpy(cl->ip, ip, 16);
		f->nopen++;
		if (f->o->verbose)
			sym_rt_log(f->who, "client %u connected", ci);
		/* What it sent already (after a stall, a burst of accepts: its HELLO and request wait in
		 * the socket) is read now, so that a client that spoke is not taken for a silent one and
		 * closed for the next accepted in the same burst. */
		on_client(cl->io, EPOLLIN, cl);
	}
}

/* Every so often: a client whose next message is not in by its deadline is
 * closed: clients_timeout_s after it began waiting for it (its accept, its last
 * message or answer), plus what it has sent of the message at client_min_rate.
 * A client with answers to come is not waiting for itself, unless it has
 * begun a message (a slow one is no less slow for having requests out). */
static void on_client_timer(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	struct frontend *f = ctx;
	sym_time now = sym_monotonic_ns(), wait = sym_s(f->c->clients_timeout_s);
	for (uint32_t i = 0; i < f->nclients; i++) {
		struct client *cl = f->clients[i];
		size_t part = cl->open ? client_partial(cl) : 0;
		if (!cl->open || (cl->outstanding && !part))
			continue;
		sym_time due = cl->since + wait + (sym_time)((double)part / f->c->client_min_rate * 1e9);
		if (now < due)
			continue;
		f->clients_timed_out++;
		sym_rt_log_limited(&f->client_log, f->who, "client %u: %s after %.1f s; closing it (clients_timeout_s)", i,
				   part ? "a message still incomplete" : !cl->hello ? "no HELLO" : "idle",
				   sym_to_s(now - cl->since));
		client_close(f, i);
	}
}

static void backend_close(struct frontend *f, struct sym_fab_conn *conn);

/* A backend's (authenticated) connection gets a registration of the pool of
 * its own, readable remotely, with a random key that only it is told (in a
 * sealed GRANT), in a libfabric domain of that connection's own (the fabric's
 * isolate): the key reads nothing through any other connection, and when the
 * connection closes the registration goes, so a backend removed from the
 * cluster cannot read the pool. */
static void grant(struct frontend *f, struct sym_fab_conn *conn)
{
	char err[512];
	struct sym_fab_mr *mr;
	if (sym_fab_mr_reg_conn(conn, f->pool, (size_t)f->c->pool_slots * f->stride, SYM_FAB_REMOTE_READ, &mr,
				err, sizeof(err))) {
		sym_rt_warn(f->who, "a backend's registration of the pool: %s; closing it", err);
		sym_loop_fab_close(f->loop, conn, NULL, NULL);
		return;
	}
	sym_fab_conn_set_user(conn, mr);
	struct sym_msg g = { .type = SYM_MSG_GRANT };
	g.u.grant.frontend = (uint32_t)f->id;
	g.u.grant.key = sym_fab_mr_key(mr);
	memcpy(g.u.grant.seal_key, f->seal_key, sizeof(g.u.grant.seal_key));
	g.u.grant.encrypted = f->c->input_encryption;
	if (sym_rt_send(f->who, conn, &g, NULL, NULL))
		backend_close(f, conn);
}

static void grant_free(void *ctx)
{
	sym_fab_mr_close(ctx);
}

/* Closes a backend's connection and, once it is closed, its registration of the pool. */
static void backend_close(struct frontend *f, struct sym_fab_conn *conn)
{
	struct sym_fab_mr *mr = sym_fab_conn_user(conn);
	sym_fab_conn_set_user(conn, NULL);
	sym_loop_fab_close(f->loop, conn, mr ? grant_free : NULL, mr);
}

static void on_fab_msg(struct frontend *f, struct sym_fab_conn *conn, const uint8_t *data, size_t len)
{
	struct sym_msg m;
	char why[200];
	long n = sym_wire_decode(data, len, &m, why, sizeof(why));
	if (n <= 0 || (size_t)n != len) {
		sym_rt_warn(f->who, "malformed message from %s: %s; closing it", conn == f->schedd ? "schedd" : "a backend",
			    n < 0 ? why : "bad length");
		if (conn == f->schedd)
			schedd_lost(f, "malformed message");
		else
			backend_close(f, conn);
		return;
	}
	if (conn == f->schedd) {
		if (m.term < f->term) {
			/* a scheduler replaced since (fencing): refused; it hears our term, and we reconnect */
			f->stale_msgs++;
			sym_rt_log_limited(&f->term_log, f->who, "refused a %s message of scheduler term %u from %s: this "
					   "frontend has seen term %u; dropping the connection (a scheduler replaced "
					   "since)", sym_wire_type_name(m.type), m.term, f->schedd_addr, f->term);
			sym_rt_heartbeat(f->who, f->schedd, f->id, f->term, &f->beat_seq);
			schedd_lost(f, "a scheduler of a past term");
			return;
		}
		f->term = m.term;
		f->schedd_heard = sym_monotonic_ns();
	}
	if (m.type == SYM_MSG_HEARTBEAT && conn == f->schedd)
		return; /* schedd is alive (it heartbeats us on its own timer) */
	if (m.type == SYM_MSG_STATUS && conn == f->schedd) {
		bool was = ready(f);
		f->gpus_online = m.u.status.gpus_online;
		f->schedd_draining = m.u.status.draining;
		set_models_off(f, &m);
		if (ready(f) != was && !f->o->quiet)
			sym_rt_log(f->who, "%s: %u GPU%s online%s", ready(f) ? "ready" : "not ready", f->gpus_online,
				   f->gpus_online == 1 ? "" : "s", f->schedd_draining ? ", the scheduler is shutting down" : "");
		return;
	}
	if (m.type == SYM_MSG_MODEL && conn == f->schedd) {
		on_slot(f, &m);
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
		f->answer_batch = (int64_t)m.u.result.batch_id;
		answer_slot(f, (uint32_t)m.u.result.req_id, m.u.result.status, m.u.result.batch, m.u.result.data,
			    m.u.result.len);
		f->answer_batch = -1;
		return;
	}
	if (m.type == SYM_MSG_HELLO && conn != f->schedd && m.u.hello.role == SYM_ROLE_BACKEND)
		return;
	sym_rt_warn(f->who, "unexpected %s message from %s; closing it", sym_wire_type_name(m.type),
		    conn == f->schedd ? "schedd" : "a backend");
	if (conn == f->schedd)
		schedd_lost(f, "unexpected message");
	else
		backend_close(f, conn);
}

static void schedd_connected(struct frontend *f)
{
	struct sym_msg h = { .type = SYM_MSG_HELLO };
	h.u.hello.role = SYM_ROLE_FRONTEND;
	h.u.hello.id = (uint32_t)f->id;
	if (to_schedd(f, &h))
		return;
	f->schedd_up = true;
	f->schedd_heard = sym_monotonic_ns();
	sym_loop_timer_set(f->beat_t, sym_monotonic_ns(), sym_ms(f->c->heartbeat_ms));
	if (!f->o->quiet)
		sym_rt_log(f->who, "connected to schedd at %s", f->schedd_addr);
	/* what we hold (after a failover) goes to this scheduler */
	expire_held(f);
	uint32_t again = 0;
	for (uint32_t i = 0; i < (uint32_t)f->c->pool_slots && f->schedd_up; i++)
		if (f->slots[i].busy && send_meta(f, i))
			again++;
	if (again && !f->o->quiet)
		sym_rt_log(f->who, "sent %u requests held to the scheduler again", again);
	f->resent += again;
}

static void on_fab(void *ctx, const struct sym_fab_event *e)
{
	struct frontend *f = ctx;
	switch (e->type) {
	case SYM_FAB_CONNECTED:
		if (e->conn == f->schedd)
			schedd_connected(f);
		break;
	case SYM_FAB_ACCEPTED: {
		/* only a backend of this cluster reads the pool (its credential says so) */
		int role = 0;
		uint32_t id = 0;
		if (f->o->cred && (!sym_fab_conn_peer(e->conn, &role, &id, NULL) || role != SYM_CRED_BACKEND ||
				   id >= (uint32_t)f->c->backends_max)) {
			f->bad_peers++;
			sym_rt_log_limited(&f->refusal_log, f->who, "refused %s %u on the fabric port: only backends 0..%d "
					   "connect here", sym_cred_role_name(role), id, f->c->backends_max - 1);
			sym_loop_fab_close(f->loop, e->conn, NULL, NULL);
			break;
		}
		if (f->o->verbose)
			sym_rt_log(f->who, "backend %u connected", id);
		grant(f, e->conn);
		break;
	}
	case SYM_FAB_MSG:
		on_fab_msg(f, e->conn, e->data, e->len);
		break;
	case SYM_FAB_CLOSED:
		if (e->conn == f->schedd) {
			schedd_lost(f, e->reason);
			break;
		}
		if (f->o->verbose)
			sym_rt_warn(f->who, "a backend connection closed: %s", e->reason);
		backend_close(f, e->conn);
		break;
	default:
		break;
	}
}

static void on_connect_timer(struct sym_loop_timer *t, void *ctx)
{
	struct frontend *f = ctx;
	char err[512];
	if (f->schedd && !f->schedd_up) {
		/* an attempt unanswered (a scheduler that does not run, SIGSTOP, never answers): the other one */
		snprintf(err, sizeof(err), "no answer from %s in %.0f ms", f->schedd_addr,
			 (double)sym_rt_connect_timeout(f->c) / 1e6);
		schedd_lost(f, err);
		return;
	}
	if (f->schedd)
		return;
	expire_held(f);
	/* the active scheduler, then its standby, in turn until one takes us */
	bool standby = f->c->has_standby && f->schedd_try++ % 2;
	const struct sym_hostport *to = standby ? &f->c->standby : &f->c->schedd;
	const struct sym_fab_peer sd = { SYM_CRED_SCHEDD, standby ? 1 : 0 };
	snprintf(f->schedd_addr, sizeof(f->schedd_addr), "%s:%s", to->host, to->port);
	if (sym_fab_connect(f->fab, to->host, to->port, &sd, &f->schedd, err, sizeof(err))) {
		sym_rt_warn(f->who, "%s", err);
		sym_loop_timer_set(t, sym_monotonic_ns() + RECONNECT, 0);
		return;
	}
	sym_loop_timer_set(t, sym_monotonic_ns() + sym_rt_connect_timeout(f->c), 0); /* its deadline */
}

static void on_beat_timer(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	struct frontend *f = ctx;
	if (++f->beats % 10 == 0)
		expire_overdue(f);
	char why[64];
	if (sym_rt_beat(f->who, f->c, f->schedd, f->id, f->term, &f->beat_seq, f->schedd_heard, sym_loop_fab_time(f->loop),
			why, sizeof(why)))
		schedd_lost(f, why);
	else
		f->beat_sent = sym_monotonic_ns();
}

/* After each HTTP body decoded: our heartbeat, when one is due. One turn of
 * the loop may decode several large bodies (libmicrohttpd finishes every
 * request ready), and the timer's heartbeat comes only at the turn's end. */
static void beat_if_due(struct frontend *f)
{
	sym_time now = sym_monotonic_ns();
	if (f->schedd_up && now - f->beat_sent >= sym_ms(f->c->heartbeat_ms) &&
	    !sym_rt_heartbeat(f->who, f->schedd, f->id, f->term, &f->beat_seq))
		f->beat_sent = now;
}

/* ---- HTTP: the KServe v2 API and /metrics ---- */

static const char *drop_words(int status)
{
	switch (status) {
	case SYM_WIRE_DROPPED_EXPIRED: return "dropped to protect the SLO: its deadline could no longer be met";
	case SYM_WIRE_DROPPED_EARLY: return "dropped to protect the SLO: shed by early drop to keep its batch on time";
	case SYM_WIRE_BACKEND_FAILED: return "its backend failed";
	case SYM_WIRE_REJECTED: return "dropped to protect the SLO: its batch could not start by its latest start";
	case SYM_WIRE_OVERLOADED: return "the frontend is overloaded (its input pool is full)";
	case SYM_WIRE_UNAVAILABLE: return "the scheduler is unreachable";
	case SYM_WIRE_BAD_REQUEST: return "bad request";
	case SYM_WIRE_NOT_LOADED: return "the model is not loaded (POST /v2/repository/models/NAME/load to schedd loads it)";
	default: return sym_wire_status_name(status);
	}
}

static void http_answer(struct frontend *f, struct slot *s, uint8_t status, uint16_t batch, const uint8_t *data,
			uint32_t len)
{
	struct sym_http_req *r = s->hr;
	const struct sym_model_desc *m = &f->c->models[s->model];
	if (status != SYM_WIRE_OK) {
		sym_http_reply_error(r, status == SYM_WIRE_BAD_REQUEST ? 400 : status == SYM_WIRE_NOT_LOADED ? 404 : 503,
				     "model '%s': %s", m->name, drop_words(status));
		return;
	}
	sym_time now = sym_monotonic_ns();
	if (now > s->deadline && f->c->late_status == 504) {
		sym_http_reply_error(r, 504, "model '%s': finished %.3f ms after its deadline", m->name,
				     (double)(now - s->deadline) / 1e6);
		return;
	}
	struct sym_buf b = { 0 };
	size_t jl = 0;
	int rc = sym_kserve_encode(m, &s->q, data, len, &b, &jl);
	if (rc) {
		sym_buf_free(&b);
		if (rc == -EINVAL)
			sym_http_reply_error(r, 500, "model '%s': the backend returned %u output bytes, its output %s "
						     "has %zu", m->name, len, m->output.name, sym_tensor_bytes(&m->output));
		else
			sym_http_reply_error(r, 500, "out of memory");
		return;
	}
	char jls[24], bs[8];
	snprintf(jls, sizeof(jls), "%zu", jl);
	snprintf(bs, sizeof(bs), "%u", batch);
	const char *bin[] = { "Inference-Header-Content-Length", jls, "Symphony-Batch-Size", bs, NULL };
	const char *js[] = { "Symphony-Batch-Size", bs, NULL };
	sym_http_reply(r, 200, s->q.binary_out ? "application/octet-stream" : "application/json", b.p, b.len,
		       s->q.binary_out ? bin : js);
	sym_buf_free(&b);
}

static int parse_ms(const char *text, double *out)
{
	/* plain decimal (strtod would also take hex, "inf", leading blanks) */
	if (!*text || strspn(text, "0123456789.eE+-") != strlen(text))
		return -EINVAL;
	char *end;
	errno = 0;
	double d = strtod(text, &end);
	if (end == text || *end || errno || !(d > 0))
		return -EINVAL;
	*out = d;
	return 0;
}

/* Whether an inference of model can be taken now: SYM_WIRE_OK, or why not
 * (counted as refused): not loaded, unavailable (no scheduler, draining),
 * overloaded (the pool is full). HTTP and gRPC ask it alike. */
static int infer_refusal(struct frontend *f, int model)
{
	int refuse = f->off[model] ? SYM_WIRE_NOT_LOADED
		     : !taking(f)    ? SYM_WIRE_UNAVAILABLE
		     : !f->nfree     ? SYM_WIRE_OVERLOADED
				     : SYM_WIRE_OK;
	if (refuse) {
		f->refused++;
		f->ms[model].outcome[refuse]++;
	}
	return refuse;
}

/* The end of an inference request's checks, shared by HTTP and gRPC: rc
 * from decoding it into slot i (err says why), then its deadline dl (ms; 0:
 * the SLO) against deadline_max_ms. True when it goes on; else the request
 * counts as bad, its slot (never submitted) goes back to the pool, and err
 * says why for the caller's answer. */
static bool infer_checked(struct frontend *f, int model, uint32_t i, int rc, double dl, char *err, size_t errlen)
{
	if (!rc && dl > f->c->deadline_max_ms)
		rc = -EINVAL, snprintf(err, errlen, "deadline of %g ms is above the limit of %g ms (deadline_max_ms)", dl,
				       f->c->deadline_max_ms);
	if (!rc)
		return true;
	f->ms[model].outcome[SYM_WIRE_BAD_REQUEST]++;
	f->slots[i].busy = false; /* never submitted: back to the pool, same generation */
	f->freeslots[f->nfree++] = i;
	return false;
}

static void http_infer(struct frontend *f, struct sym_http_req *r, int model)
{
	const struct sym_model_desc *m = &f->c->models[model];
	int refuse = infer_refusal(f, model);
	if (refuse) {
		sym_http_reply_error(r, refuse == SYM_WIRE_NOT_LOADED ? 404 : 503, "model '%s': %s", m->name,
				     drop_words(refuse));
		return;
	}
	size_t len;
	const char *body = sym_http_body(r, &len);
	size_t jl = len;
	const char *ihcl = sym_http_header(r, "Inference-Header-Content-Length");
	if (ihcl) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(ihcl, &end, 10);
		if (end == ihcl || *end || errno || v > len) {
			f->ms[model].outcome[SYM_WIRE_BAD_REQUEST]++;
			sym_http_reply_error(r, 400, "header Inference-Header-Content-Length: expected a byte count up to "
						     "the body's %zu, got '%s'", len, ihcl);
			return;
		}
		jl = (size_t)v;
	}
	uint32_t i = take_slot(f, model);
	struct slot *s = &f->slots[i];
	char err[512];
	double dl = 0;
	const char *hd = sym_http_header(r, "Symphony-Deadline-Ms");
	if (hd && !*hd)
		hd = "(empty)"; /* present but empty: malformed, not absent */
	int rc = sym_kserve_decode(body, len, jl, m, slot_at(f, i), &s->q, err, sizeof(err));
	beat_if_due(f);
	if (!rc && hd && parse_ms(hd, &dl))
		rc = -EINVAL, snprintf(err, sizeof(err), "header Symphony-Deadline-Ms: expected a positive number of "
							  "milliseconds, got '%s'", hd);
	if (!rc && !dl)
		dl = s->q.deadline_ms;
	if (!infer_checked(f, model, i, rc, dl, err, sizeof(err))) {
		sym_http_reply_error(r, 400, "%s", err);
		return;
	}
	s->hr = r;
	submit(f, i, dl > 0 ? (int64_t)(dl * 1e6) : f->slo[model], (uint32_t)sym_tensor_bytes(&m->input));
}

/* ---- the gRPC API (runtime/grpc/grpc.h): the same requests as HTTP's, the same checks ---- */

#ifdef SYM_HAVE_GRPC
enum { GRPC_INVALID_ARGUMENT = 3, GRPC_DEADLINE_EXCEEDED = 4, GRPC_NOT_FOUND = 5, GRPC_RESOURCE_EXHAUSTED = 8,
       GRPC_INTERNAL = 13, GRPC_UNAVAILABLE = 14, GRPC_UNAUTHENTICATED = 16 };

/* The gRPC status of an answer that is not an output (HTTP's 400, 404, 503). */
static int grpc_code(int status)
{
	return status == SYM_WIRE_BAD_REQUEST	 ? GRPC_INVALID_ARGUMENT
	       : status == SYM_WIRE_NOT_LOADED	 ? GRPC_NOT_FOUND
	       : status == SYM_WIRE_OVERLOADED	 ? GRPC_RESOURCE_EXHAUSTED
	       : status == SYM_WIRE_UNAUTHORIZED ? GRPC_UNAUTHENTICATED
	       : status == SYM_WIRE_BACKEND_FAILED ? GRPC_INTERNAL
						   : GRPC_UNAVAILABLE;
}

static void grpc_answer(struct frontend *f, struct slot *s, uint8_t status, const uint8_t *data, uint32_t len)
{
	const struct sym_model_desc *m = &f->c->models[s->model];
	if (status != SYM_WIRE_OK) {
		sym_grpc_finish_error(s->gr, grpc_code(status), "model '%s': %s", m->name, drop_words(status));
		return;
	}
	sym_time now = sym_monotonic_ns();
	if (now > s->deadline && f->c->late_status == 504) {
		sym_grpc_finish_error(s->gr, GRPC_DEADLINE_EXCEEDED, "model '%s': finished %.3f ms after its deadline",
				      m->name, (double)(now - s->deadline) / 1e6);
		return;
	}
	if (len != sym_tensor_bytes(&m->output)) {
		sym_grpc_finish_error(s->gr, GRPC_INTERNAL, "model '%s': the backend returned %u output bytes, its output "
				      "%s has %zu", m->name, len, m->output.name, sym_tensor_bytes(&m->output));
		return;
	}
	sym_grpc_finish_infer(s->gr, m, s->gr_batch, data, len);
}

/* The model a call names (and its version, when it names one), or -1 with the call finished NOT_FOUND. */
static int grpc_model(struct frontend *f, struct sym_grpc_call *c)
{
	const char *name = sym_grpc_call_model(c), *version = sym_grpc_call_version(c);
	const struct sym_experiment *e = &f->c->exp;
	size_t m = 0;
	while (*name && m < e->nmodels && strcmp(f->c->models[m].name, name))
		m++;
	if (!*name || m == e->nmodels) {
		sym_grpc_finish_error(c, GRPC_NOT_FOUND, "unknown model '%s'", name);
		return -1;
	}
	char served[16];
	snprintf(served, sizeof(served), "%d", f->c->models[m].version);
	if (*version && strcmp(version, served)) {
		sym_grpc_finish_error(c, GRPC_NOT_FOUND, "model '%s' serves version %s only", name, served);
		return -1;
	}
	return (int)m;
}

static void grpc_infer(struct frontend *f, struct sym_grpc_call *c)
{
	size_t tl;
	const char *tok = sym_grpc_call_token(c, &tl);
	if (f->tokens.n && (!tok || !sym_tokens_ok(&f->tokens, tok, tl))) {
		f->unauthorized++;
		sym_grpc_finish_error(c, GRPC_UNAUTHENTICATED, "inference needs a valid bearer token: metadata "
				      "authorization: Bearer TOKEN");
		return;
	}
	int model = grpc_model(f, c);
	if (model < 0)
		return;
	const struct sym_model_desc *m = &f->c->models[model];
	int refuse = infer_refusal(f, model);
	if (refuse) {
		sym_grpc_finish_error(c, grpc_code(refuse), "model '%s': %s", m->name, drop_words(refuse));
		return;
	}
	uint32_t i = take_slot(f, model);
	struct slot *s = &f->slots[i];
	char err[512];
	double dl = 0;
	int rc = sym_grpc_call_input(c, m, slot_at(f, i), &dl, &s->gr_batch, err, sizeof(err));
	beat_if_due(f);
	if (!infer_checked(f, model, i, rc, dl, err, sizeof(err))) {
		sym_grpc_finish_error(c, GRPC_INVALID_ARGUMENT, "%s", err);
		return;
	}
	/* the deadline: the "deadline_ms" parameter, else the model's SLO; a client's own gRPC deadline
	 * only shortens it (a long transport timeout is no reason to defer) */
	int64_t budget = dl > 0 ? (int64_t)(dl * 1e6) : f->slo[model], left = sym_grpc_call_deadline_ns(c);
	if (left && left < budget)
		budget = left;
	s->gr = c;
	submit(f, i, budget, (uint32_t)sym_tensor_bytes(&m->input));
}

static void on_grpc(struct sym_loop_io *io, uint32_t events, void *ctx)
{
	(void)io, (void)events;
	struct frontend *f = ctx;
	struct sym_grpc_call *c;
	while ((c = sym_grpc_next(f->grpc))) {
		int m;
		switch (sym_grpc_call_kind(c)) {
		case SYM_GRPC_SERVER_LIVE:
			sym_grpc_finish_bool(c, true);
			break;
		case SYM_GRPC_SERVER_READY:
			sym_grpc_finish_bool(c, ready(f));
			break;
		case SYM_GRPC_MODEL_READY:
			if ((m = grpc_model(f, c)) >= 0)
				sym_grpc_finish_bool(c, ready(f) && !f->off[m]);
			break;
		case SYM_GRPC_SERVER_METADATA: {
			static const char *const ext[] = { "binary_tensor_data" };
			sym_grpc_finish_server_metadata(c, "symphony", SYM_VERSION, ext, 1);
			break;
		}
		case SYM_GRPC_MODEL_METADATA:
			if ((m = grpc_model(f, c)) >= 0) {
				char platform[48];
				snprintf(platform, sizeof(platform), "symphony_%s", f->c->executor);
				sym_grpc_finish_model_metadata(c, &f->c->models[m], platform);
			}
			break;
		case SYM_GRPC_MODEL_INFER:
			grpc_infer(f, c);
			break;
		case SYM_GRPC_REPOSITORY_INDEX:
		case SYM_GRPC_REPOSITORY_LOAD:
		case SYM_GRPC_REPOSITORY_UNLOAD:
			sym_grpc_finish_error(c, 12, "the model repository API is schedd's (its gRPC address, grpc_base)");
			break;
		}
	}
}

/* The gRPC API on this frontend's grpc address, on the loop. */
static int grpc_start(struct frontend *f, const struct sym_cluster_fe *me, char *err, size_t errlen)
{
	const struct sym_cluster *c = f->c;
	char *cert = NULL, *key = NULL;
	long rc = 0;
	if (c->http_tls_cert[0] && (rc = sym_file_read(c->http_tls_cert, 1 << 20, false, &cert, err, errlen)) >= 0)
		rc = sym_file_read(c->http_tls_key, 1 << 20, true, &key, err, errlen);
	if (rc >= 0) {
		struct sym_grpc_cfg gc = { .host = sym_cluster_bind_host(c, me->grpc.host), .port = me->grpc.port,
					   .tls_cert = cert, .tls_key = key, .msg_max = c->http_body_max,
					   .calls_max = (unsigned)c->pool_slots + 256, .memory_max = c->http_body_budget };
		rc = sym_grpc_start(&f->grpc, &gc, err, errlen);
	}
	if (key)
		sodium_memzero(key, strlen(key));
	free(cert);
	free(key);
	struct sym_loop_io *io;
	if (!rc && (rc = sym_loop_io_start(f->loop, sym_grpc_fd(f->grpc), EPOLLIN, on_grpc, f, &io)))
		snprintf(err, errlen, "gRPC: event loop: %s", strerror((int)-rc));
	return (int)rc;
}

/* At exit: the calls still held are answered, then the server stops. */
static void grpc_stop(struct frontend *f)
{
	if (!f->grpc)
		return;
	for (uint32_t i = 0; i < (uint32_t)f->c->pool_slots; i++)
		if (f->slots[i].busy && f->slots[i].gr) {
			sym_grpc_finish_error(f->slots[i].gr, GRPC_UNAVAILABLE, "the frontend is shutting down");
			f->slots[i].gr = NULL;
		}
	sym_grpc_stop(f->grpc);
	f->grpc = NULL;
}
#else
static void grpc_answer(struct frontend *f, struct slot *s, uint8_t status, const uint8_t *data, uint32_t len)
{
	(void)f, (void)s, (void)status, (void)data, (void)len; /* (no call without gRPC) */
}
#endif

static void write_metrics(void *ctx, struct sym_buf *b)
{
	struct frontend *f = ctx;
	const struct sym_experiment *e = &f->c->exp;
	char id[16];
	snprintf(id, sizeof(id), "%d", f->id);
	sym_prom_family(b, "symphony_requests_total", "counter",
			"Requests by model and outcome (ok, late: answered after the deadline, dropped_*, ...)");
	for (size_t m = 0; m < e->nmodels; m++)
		for (int k = 0; k < NOUTCOMES && !sym_experiment_slot_empty(e, m); k++) {
			if (k == SYM_WIRE_FRONTEND_GONE || k == SYM_WIRE_UNAUTHORIZED)
				continue;
			const char *l[] = { "frontend", id, "model", e->profiles[m].name, "outcome", outcome_names[k], NULL };
			sym_prom_sample(b, "symphony_requests_total", l, (double)f->ms[m].outcome[k]);
		}
	sym_prom_family(b, "symphony_request_latency_seconds", "histogram",
			"Time from a request's arrival at the frontend to its answer, for requests answered with output");
	for (size_t m = 0; m < e->nmodels; m++) {
		const char *l[] = { "frontend", id, "model", e->profiles[m].name, NULL };
		if (sym_experiment_slot_empty(e, m))
			continue;
		sym_prom_hist(b, "symphony_request_latency_seconds", l, &f->ms[m].latency, sym_prom_latency_bounds,
			      sym_prom_latency_nbounds);
	}
	const char *l[] = { "frontend", id, NULL };
	sym_prom_family(b, "symphony_frontend_pool_slots", "gauge", "Input slots of the frontend's registered pool");
	sym_prom_sample(b, "symphony_frontend_pool_slots", l, f->c->pool_slots);
	sym_prom_family(b, "symphony_frontend_pool_slots_busy", "gauge", "Input slots holding a waiting request");
	sym_prom_sample(b, "symphony_frontend_pool_slots_busy", l, (double)((uint32_t)f->c->pool_slots - f->nfree));
	sym_prom_family(b, "symphony_frontend_scheduler_up", "gauge", "1 when the frontend is connected to schedd");
	sym_prom_sample(b, "symphony_frontend_scheduler_up", l, f->schedd_up);
	sym_prom_family(b, "symphony_frontend_scheduler_term", "gauge", "The highest scheduler term the frontend has seen");
	sym_prom_sample(b, "symphony_frontend_scheduler_term", l, f->term);
	sym_prom_family(b, "symphony_frontend_stale_scheduler_messages_total", "counter",
			"Scheduler messages refused for a term below the highest seen (a scheduler replaced since)");
	sym_prom_sample(b, "symphony_frontend_stale_scheduler_messages_total", l, (double)f->stale_msgs);
	sym_prom_family(b, "symphony_frontend_clients_budget_used_bytes", "gauge",
			"What native clients' buffers hold beyond their base, of clients_budget");
	sym_prom_sample(b, "symphony_frontend_clients_budget_used_bytes", l, (double)f->clients_budget.used);
	sym_prom_family(b, "symphony_frontend_refusals_total", "counter",
			"Clients and requests refused: native clients over clients_max or clients_per_ip_max with "
			"none idle to close, inference without a valid bearer token (HTTP 401, or a native client's "
			"HELLO without one), native clients whose message or unread answers did not fit clients_budget, "
			"fabric members that are not a backend of the cluster (not_a_backend)");
	const char *rc[] = { "frontend", l[1], "reason", "clients_max", NULL };
	sym_prom_sample(b, "symphony_frontend_refusals_total", rc, (double)f->clients_refused);
	rc[3] = "clients_per_ip_max";
	sym_prom_sample(b, "symphony_frontend_refusals_total", rc, (double)f->clients_refused_ip);
	rc[3] = "unauthorized";
	sym_prom_sample(b, "symphony_frontend_refusals_total", rc, (double)f->unauthorized);
	rc[3] = "clients_budget";
	sym_prom_sample(b, "symphony_frontend_refusals_total", rc, (double)f->clients_over_budget);
	rc[3] = "not_a_backend";
	sym_prom_sample(b, "symphony_frontend_refusals_total", rc, (double)f->bad_peers);
	sym_prom_family(b, "symphony_frontend_clients_closed_total", "counter",
			"Native clients the frontend closed: timeout (no message within clients_timeout_s, or one "
			"slower than client_min_rate), evicted (idle, for a new client past clients_max or "
			"clients_per_ip_max)");
	rc[3] = "timeout";
	sym_prom_sample(b, "symphony_frontend_clients_closed_total", rc, (double)f->clients_timed_out);
	rc[3] = "evicted";
	sym_prom_sample(b, "symphony_frontend_clients_closed_total", rc, (double)f->clients_evicted);
	sym_prom_family(b, "symphony_frontend_overdue_requests_total", "counter",
			"Requests answered 'backend failed' by the frontend: no answer 2 failure_ms past their deadline");
	sym_prom_sample(b, "symphony_frontend_overdue_requests_total", l, (double)f->overdue);
	sym_prom_family(b, "symphony_frontend_resent_requests_total", "counter",
			"Requests held across a scheduler failover and sent again to the new scheduler");
	sym_prom_sample(b, "symphony_frontend_resent_requests_total", l, (double)f->resent);
	struct sym_http_stats hs;
	sym_http_stats(f->http, &hs);
	sym_prom_family(b, "symphony_http_responses_total", "counter", "HTTP responses by status class");
	const char *c2[] = { "frontend", id, "code", "2xx", NULL }, *c4[] = { "frontend", id, "code", "4xx", NULL },
		   *c5[] = { "frontend", id, "code", "5xx", NULL };
	sym_prom_sample(b, "symphony_http_responses_total", c2, (double)hs.s2xx);
	sym_prom_sample(b, "symphony_http_responses_total", c4, (double)hs.s4xx);
	sym_prom_sample(b, "symphony_http_responses_total", c5, (double)hs.s5xx);
	sym_prom_family(b, "symphony_http_connections_closed_total", "counter",
			"HTTP connections closed by the frontend's bounds: timeout (no request within http_timeout_s), "
			"slow (a body below client_min_rate), evicted (waiting longest, for a new one past "
			"http_conn_max), refused (past http_conn_max, none waiting), and requests refused 503 for "
			"the body budget (budget)");
	const char *hc[] = { "frontend", id, "reason", "timeout", NULL };
	sym_prom_sample(b, "symphony_http_connections_closed_total", hc, (double)hs.closed_timeout);
	hc[3] = "slow";
	sym_prom_sample(b, "symphony_http_connections_closed_total", hc, (double)hs.closed_slow);
	hc[3] = "evicted";
	sym_prom_sample(b, "symphony_http_connections_closed_total", hc, (double)hs.evicted);
	hc[3] = "refused";
	sym_prom_sample(b, "symphony_http_connections_closed_total", hc, (double)hs.refused_full);
	hc[3] = "budget";
	sym_prom_sample(b, "symphony_http_connections_closed_total", hc, (double)hs.refused_budget);
	sym_prom_family(b, "symphony_http_connections", "gauge", "HTTP connections open");
	sym_prom_sample(b, "symphony_http_connections", l, (double)hs.connections);
	sym_prom_family(b, "symphony_http_body_bytes", "gauge",
			"Bytes of HTTP request bodies held (at most http_body_budget)");
	sym_prom_sample(b, "symphony_http_body_bytes", l, (double)hs.body_bytes);
	sym_prom_family(b, "symphony_frontend_clients", "gauge", "Native clients connected");
	sym_prom_sample(b, "symphony_frontend_clients", l, (double)f->nopen);
}

/* The bearer tokens of http_token_file (runtime/tokens.h). Returns 0 or -errno, logged. */
static int load_tokens(struct frontend *f)
{
	char err[900];
	int rc = sym_tokens_load(&f->tokens, f->c->http_token_file, err, sizeof(err));
	if (rc)
		sym_rt_error(f->who, "bearer tokens: %s", err);
	return rc;
}

static void on_http(void *ctx, struct sym_http_req *r)
{
	struct frontend *f = ctx;
	const char *path = sym_http_path(r), *meth = sym_http_method(r);
	bool get = !strcmp(meth, "GET") || !strcmp(meth, "HEAD"), post = !strcmp(meth, "POST");
	if (!strcmp(path, "/metrics") || !strcmp(path, "/v2/health/live")) {
		sym_rt_serve_metrics(r, write_metrics, f);
		return;
	}
	if (!strcmp(path, "/v2/health/ready") || !strcmp(path, "/v2") ||
	    !strcmp(path, "/v2/")) {
		if (!get)
			goto not_get;
		cJSON *o = cJSON_CreateObject();
		unsigned st = 200;
		if (!strcmp(path, "/v2/health/ready")) {
			cJSON_AddBoolToObject(o, "ready", ready(f));
			st = ready(f) ? 200 : 503;
		} else {
			cJSON_AddStringToObject(o, "name", "symphony");
			cJSON_AddStringToObject(o, "version", SYM_VERSION);
			cJSON_AddStringToObject(o, "commit", sym_build_commit());
			cJSON *ex = cJSON_AddArrayToObject(o, "extensions");
			cJSON_AddItemToArray(ex, cJSON_CreateString("binary_tensor_data"));
		}
		sym_http_reply_json(r, st, o);
		return;
	}
	static const char prefix[] = "/v2/models/";
	if (!strncmp(path, "/v2/repository/", 15)) {
		sym_http_reply_error(r, 404, "the model repository API is schedd's (its HTTP port, http_base): %s %s",
				     meth, path);
		return;
	}
	if (strncmp(path, prefix, sizeof(prefix) - 1)) {
		sym_http_reply_error(r, 404, "no such endpoint: %s %s", meth, path);
		return;
	}
	const char *name = path + sizeof(prefix) - 1, *rest = strchr(name, '/');
	size_t nl = rest ? (size_t)(rest - name) : strlen(name);
	if (!rest)
		rest = "";
	const char *version = NULL; /* the one version served: the repository's, else "1" */
	size_t version_len = 0;
	if (!strncmp(rest, "/versions/", 10)) {
		const char *v = rest + 10, *after = strchr(v, '/');
		size_t vl = after ? (size_t)(after - v) : strlen(v);
		rest = after ? after : "";
		version = v;
		version_len = vl;
	}
	const struct sym_experiment *e = &f->c->exp;
	size_t m = 0;
	while (m < e->nmodels && (strlen(f->c->models[m].name) != nl || strncmp(f->c->models[m].name, name, nl)))
		m++;
	if (m == e->nmodels || !nl) { /* (an empty spare slot's name is "") */
		sym_http_reply_error(r, 404, "unknown model '%.*s'", (int)nl, name);
		return;
	}
	char served[16];
	snprintf(served, sizeof(served), "%d", f->c->models[m].version);
	if (version && (version_len != strlen(served) || strncmp(version, served, version_len))) {
		sym_http_reply_error(r, 404, "model '%.*s' serves version %s only", (int)nl, name, served);
		return;
	}
	if (!*rest) {
		if (!get)
			goto not_get;
		char platform[48];
		snprintf(platform, sizeof(platform), "symphony_%s", f->c->executor);
		sym_http_reply_json(r, 200, sym_kserve_model_metadata(&f->c->models[m], platform));
	} else if (!strcmp(rest, "/ready")) {
		if (!get)
			goto not_get;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", f->c->models[m].name);
		bool ok = ready(f) && !f->off[m];
		cJSON_AddBoolToObject(o, "ready", ok);
		if (f->off[m])
			cJSON_AddStringToObject(o, "reason", "not loaded");
		sym_http_reply_json(r, ok ? 200 : 503, o);
	} else if (!strcmp(rest, "/infer")) {
		if (!post) {
			sym_http_reply_method(r, "POST");
			return;
		}
		if (f->tokens.n && !sym_tokens_http_ok(&f->tokens, r)) {
			static const char body[] = "{\"error\":\"inference needs a valid bearer token: Authorization: "
						   "Bearer TOKEN\"}";
			const char *hdr[] = { "WWW-Authenticate", "Bearer realm=\"symphony\"", NULL };
			f->unauthorized++;
			sym_http_reply(r, 401, "application/json", body, sizeof(body) - 1, hdr);
			return;
		}
		http_infer(f, r, (int)m);
	} else {
		sym_http_reply_error(r, 404, "no such endpoint: %s %s", meth, path);
	}
	return;
not_get:
	sym_http_reply_method(r, "GET, HEAD");
}

/* The pool and the tables. */
static int alloc_tables(struct frontend *f)
{
	struct sym_cluster *c = f->c;
	f->clients_budget = (struct sym_budget){ 0, c->clients_budget };
	f->stride = c->input_max + SYM_INPUT_TRAILER;
	size_t pool_bytes = (size_t)c->pool_slots * f->stride;
	f->pool = malloc(pool_bytes);
	sym_input_keygen(f->seal_key);
	f->slots = calloc((size_t)c->pool_slots, sizeof(*f->slots));
	f->freeslots = malloc((size_t)c->pool_slots * sizeof(*f->freeslots));
	f->slo = malloc(c->exp.nmodels * sizeof(*f->slo));
	f->ms = calloc(c->exp.nmodels, sizeof(*f->ms));
	f->off = calloc(c->exp.nmodels, 2 * sizeof(*f->off));
	f->off_next = f->off ? f->off + c->exp.nmodels : NULL;
	if (!f->pool || !f->slots || !f->freeslots || !f->slo || !f->ms || !f->off) {
		sym_rt_error(f->who, "out of memory for a pool of %zu bytes", pool_bytes);
		return -ENOMEM;
	}
	for (size_t m = 0; m < c->exp.nmodels; m++) {
		f->slo[m] = sym_ms(c->exp.model_slo_ms[m]);
		f->off[m] = m >= c->exp.slot0; /* spare slots: no model until schedd fills one */
	}
	for (int i = c->pool_slots - 1; i >= 0; i--)
		f->freeslots[f->nfree++] = (uint32_t)i;
	return 0;
}

/* The fabric, the client listener, HTTP, and everything on the loop. */
static int setup(struct frontend *f)
{
	struct sym_cluster *c = f->c;
	const struct sym_cluster_fe *me = &c->frontends[f->id];
	char err[1024] = "";
	struct sym_fab_cfg fc = { .provider = c->provider, .cred = f->o->cred, .revoked = f->o->revoked, .isolate = true };
	if (sym_fab_open(&f->fab, &fc, err, sizeof(err)) ||
	    /* not readable remotely: addresses are computed from it; each backend reads through its own (grant) */
	    sym_fab_mr_reg(f->fab, f->pool, (size_t)c->pool_slots * f->stride, SYM_FAB_LOCAL_READ_TARGET, &f->mr, err,
			   sizeof(err)) ||
	    sym_fab_listen(f->fab, sym_cluster_bind_host(c, me->fabric.host), me->fabric.port, err, sizeof(err)))
		return sym_rt_error(f->who, "%s", err), -EINVAL;
	f->lfd = sym_tcp_listen(sym_cluster_bind_host(c, me->clients.host), me->clients.port, err, sizeof(err));
	if (f->lfd < 0)
		return sym_rt_error(f->who, "clients: %s", err), f->lfd;
	if (c->http_token_file[0] && load_tokens(f))
		return -EINVAL;
	if (sym_rt_metrics_start(c, SYM_ROLE_FRONTEND, f->id, sym_cluster_bind_host(c, me->clients.host), write_metrics, f, err, sizeof(err)))
		return sym_rt_error(f->who, "metrics: %s", err), -EINVAL;
	if (me->http.port[0] &&
	    sym_rt_http_start(&f->http, c, sym_cluster_bind_host(c, me->http.host), me->http.port, c->http_body_max, on_http, f, err, sizeof(err)))
		return sym_rt_error(f->who, "%s", err), -EINVAL;
	int rc = sym_rt_loop(&f->loop, f->who, f->fab, on_fab, f->http, f);
	if (!rc && ((rc = sym_loop_io_start(f->loop, f->lfd, EPOLLIN, on_accept, f, &f->lio)) ||
		    (rc = sym_loop_timer_new(f->loop, on_drain_timer, f, &f->drain_t)) ||
		    (rc = sym_loop_timer_new(f->loop, on_connect_timer, f, &f->connect_t)) ||
		    (rc = sym_loop_timer_new(f->loop, on_beat_timer, f, &f->beat_t)) ||
		    (rc = sym_loop_timer_new(f->loop, on_client_timer, f, &f->client_t))))
		sym_rt_error(f->who, "event loop: %s", strerror(-rc));
	if (!rc && me->grpc.port[0]) {
#ifdef SYM_HAVE_GRPC
		if ((rc = grpc_start(f, me, err, sizeof(err))))
			sym_rt_error(f->who, "%s", err);
#else
		rc = -ENOTSUP;
		sym_rt_error(f->who, "this build has no gRPC API (grpc_base or a frontend's \"grpc\" address): build it "
			     "with Debian's libgrpc++-dev and protobuf-compiler-grpc (meson -Dgrpc=enabled)");
#endif
	}
	if (!rc) { /* the native clients' deadlines, looked at 4 times per clients_timeout_s (at most 1 s apart) */
		sym_time every = sym_s(c->clients_timeout_s) / 4;
		every = every > SYM_S ? SYM_S : every;
		sym_loop_timer_set(f->client_t, sym_monotonic_ns() + every, every);
	}
	return rc;
}

/* Stopping: exactly one answer each, even now. */
static void finish(struct frontend *f)
{
	for (uint32_t i = 0; i < (uint32_t)f->c->pool_slots; i++)
		if (f->slots[i].busy)
			answer_slot(f, i, SYM_WIRE_UNAVAILABLE, 0, NULL, 0);
	/* the answers queued for clients go out (a client not reading gets 1 s) */
	sym_time end = sym_monotonic_ns() + SYM_S;
	for (bool queued = true; queued && sym_monotonic_ns() < end;) {
		queued = false;
		for (uint32_t i = 0; i < f->nclients; i++)
			if (f->clients[i]->open && sym_stream_flush(&f->clients[i]->st) == 1)
				queued = true;
		if (queued)
			usleep(1000);
	}
	if (f->http)
		sym_http_run(f->http); /* HTTP answers given just now */
	sym_fab_flush(f->fab, 1000);
	if (f->o->quiet)
		return;
	uint64_t late = 0;
	int64_t p99 = 0;
	for (size_t m = 0; m < f->c->exp.nmodels; m++) {
		late += f->ms[m].outcome[OUTCOME_LATE];
		int64_t q = sym_hist_quantile(&f->ms[m].latency, 0.99);
		p99 = q > p99 ? q : p99;
	}
	sym_rt_log(f->who, "stopping: %" PRIu64 " requests accepted, %" PRIu64 " refused, %" PRIu64
		   " answers, %" PRIu64 " results (%" PRIu64 " after their deadline here; latency here p99 %.3f ms), %" PRIu64
		   " drop notices, %" PRIu64 " stale, %" PRIu64 " answered by the safety net",
		   f->accepted, f->refused, f->answered, f->results, late, (double)p99 / 1e6, f->drops, f->stale,
		   f->overdue);
}

static void teardown(struct frontend *f)
{
	sym_loop_destroy(f->loop); /* the clients closing now close their sockets */
#ifdef SYM_HAVE_GRPC
	grpc_stop(f);
#endif
	sym_http_stop(f->http);
	for (uint32_t i = 0; i < f->nclients; i++) {
		if (f->clients[i]->open)
			sym_stream_close(&f->clients[i]->st);
		free(f->clients[i]);
	}
	for (size_t m = 0; f->ms && m < f->c->exp.nmodels; m++)
		sym_hist_finish(&f->ms[m].latency);
	free(f->ms);
	free(f->off);
	free(f->clients);
	if (f->lfd >= 0)
		close(f->lfd);
	if (f->mr)
		sym_fab_mr_close(f->mr);
	if (f->fab)
		sym_fab_destroy(f->fab);
	sym_tokens_free(&f->tokens);
	free(f->pool);
	sodium_memzero(f->seal_key, sizeof(f->seal_key));
	free(f->slots);
	free(f->freeslots);
	free(f->slo);
}

/* Draining is over once every request held is answered and every native
 * client has said bye back (so no request of its is still on the way). */
static void maybe_drained(struct frontend *f)
{
	if (!f->draining || f->drain_done || f->nfree != (uint32_t)f->c->pool_slots)
		return;
	for (uint32_t i = 0; i < f->nclients; i++)
		if (f->clients[i]->open && !f->clients[i]->bye_acked)
			return;
	drained(f);
}

/* Every request held is answered: say bye to schedd (it logs a leave, not a
 * failure) and stop; the answers still queued go out in finish(). */
static void drained(struct frontend *f)
{
	f->drain_done = true;
	if (f->schedd_up) {
		struct sym_msg m = { .type = SYM_MSG_BYE };
		m.u.bye.role = SYM_ROLE_FRONTEND;
		m.u.bye.id = (uint32_t)f->id;
		to_schedd(f, &m);
	}
	if (!f->o->quiet)
		sym_rt_log(f->who, "drained: every request held was answered");
	sym_loop_stop(f->loop);
}

/* SIGTERM: take no new client or request (new requests on open connections
 * are answered "unavailable", readiness turns 503), answer what is held, then
 * stop; at most deadline_max_ms + 2 s, after which what is left is answered
 * "unavailable". */
static void drain(void *ctx)
{
	struct frontend *f = ctx;
	f->draining = true;
	uint32_t held = (uint32_t)f->c->pool_slots - f->nfree;
	if (!f->o->quiet)
		sym_rt_log(f->who, "SIGTERM: draining %u requests held; no new ones", held);
	if (f->lio) {
		sym_loop_io_close(f->lio, NULL, NULL);
		f->lio = NULL;
		close(f->lfd);
		f->lfd = -1;
	}
	sym_loop_timer_set(f->drain_t, sym_monotonic_ns() + sym_ms(f->c->deadline_max_ms + 2000), 0);
	/* the native clients hear that we leave; each says bye back once it sends us nothing more */
	struct sym_msg bye = { .type = SYM_MSG_BYE };
	bye.u.bye.role = SYM_ROLE_FRONTEND;
	bye.u.bye.id = (uint32_t)f->id;
	for (uint32_t i = 0; i < f->nclients; i++) {
		struct client *cl = f->clients[i];
		if (!cl->open)
			continue;
		cl->bye_sent = true;
		if (sym_stream_send(&cl->st, &bye, CLIENT_MAX_QUEUED) < 0)
			client_close(f, i);
		else
			client_watch_out(f, i, sym_stream_queued(&cl->st) > 0);
	}
	maybe_drained(f);
}

static void on_drain_timer(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	struct frontend *f = ctx;
	sym_rt_log(f->who, "draining: %u requests still held after the longest deadline; answering them 'unavailable'",
		   (uint32_t)f->c->pool_slots - f->nfree);
	for (uint32_t i = 0; i < (uint32_t)f->c->pool_slots; i++)
		if (f->slots[i].busy)
			answer_slot(f, i, SYM_WIRE_UNAVAILABLE, 0, NULL, 0);
	if (!f->drain_done) /* a client that never said bye back */
		drained(f);
}

/* SIGHUP: the bearer tokens are read again (the old ones stay when the file is bad). */
/* SIGHUP: the cluster file read again (sym_rt_reload_cluster): the limits,
 * deadlines and SLOs that may change live are taken on, or the whole reload
 * refused naming what needs a restart; then the bearer tokens are read again. */
static void on_reload(void *ctx)
{
	struct frontend *f = ctx;
	char done[1500], err[1500];
	int rc = sym_rt_reload_cluster(f->c, f->o, done, sizeof(done), err, sizeof(err));
	if (rc < 0) {
		sym_rt_warn(f->who, "SIGHUP: reload refused, nothing changed: %s", err);
	} else {
		for (size_t m = 0; m < f->c->exp.slot0; m++)
			f->slo[m] = sym_ms(f->c->exp.model_slo_ms[m]);
		f->clients_budget.max = f->c->clients_budget;
		sym_http_set_limits(f->http, f->c->http_body_max, f->c->http_body_budget, (unsigned)f->c->client_min_rate);
		sym_rt_log(f->who, "SIGHUP: reloaded %s: %s", f->o->config_path, rc ? done : "no change");
	}
	if (!f->c->http_token_file[0]) {
		if (f->tokens.n) { /* the file was taken out of the configuration: no token needed any more */
			sym_tokens_free(&f->tokens);
			sym_rt_warn(f->who, "SIGHUP: http_token_file is gone from the configuration: inference needs no "
				    "bearer token any more");
		}
		return;
	}
	if (load_tokens(f))
		sym_rt_log(f->who, "SIGHUP: kept the %zu bearer tokens in use", f->tokens.n);
	else
		sym_rt_log(f->who, "SIGHUP: %zu bearer tokens read from %s", f->tokens.n, f->c->http_token_file);
}

int sym_frontend_run(struct sym_cluster *c, const struct sym_rt_opts *o)
{
	struct frontend f = { .c = c, .o = o, .id = o->id, .lfd = -1, .answer_batch = -1 };
	snprintf(f.who, sizeof(f.who), "frontend %d", o->id);
	const struct sym_cluster_fe *me = &c->frontends[o->id];
	int rc = 1;
	if (alloc_tables(&f) || setup(&f))
		goto out;
	if (!o->quiet)
		sym_rt_log(f.who, "clients on %s:%s, HTTP on %s%s%s, gRPC on %s%s%s, fabric (%s) on %s:%s, pool of %d inputs "
			   "of %zu bytes", me->clients.host, me->clients.port, f.http ? me->http.host : "(off)",
			   f.http ? ":" : "", f.http ? me->http.port : "", me->grpc.port[0] ? me->grpc.host : "(off)",
			   me->grpc.port[0] ? ":" : "", me->grpc.port, sym_fab_provider(f.fab), me->fabric.host,
			   me->fabric.port, c->pool_slots, c->input_max);
	sym_loop_timer_set(f.connect_t, sym_monotonic_ns(), 0);
	sym_rt_on_reload(on_reload, &f);
	sym_rt_on_term(drain, &f);
	rc = sym_loop_run(f.loop);
	if (rc)
		sym_rt_error(f.who, "%s", sym_loop_error(f.loop));
	rc = rc ? 1 : 0;
	finish(&f);
out:
	teardown(&f);
	return rc;
}
