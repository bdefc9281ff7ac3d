/* runtime/schedd.c - the scheduler daemon.
 *
 * One network thread owns the fabric (every peer connection), the request
 * table and the per-GPU batch table; the scheduling core runs on the
 * threads of runtime/sched.h. The network thread submits each request's
 * metadata and each completion, and turns the core's decisions into plan
 * and drop messages.
 *
 * Request ids given to the core are slab indices with a generation in the
 * high half, so a decision about a request whose slot was reused is
 * recognised and ignored.
 *
 * Failures. A peer is removed when its connection closes, when it sends a
 * malformed or unexpected message (logged with the reason), or when it has
 * been silent for failure_ms. A removed backend's GPU goes offline in the
 * core, and the requests of the batch it was running get a drop notice
 * (backend failed) so their frontends answer them. A removed frontend's
 * requests still queued in the core are discarded when the core decides
 * about them (a batch is planned without them; a batch left empty frees its
 * GPU at once).
 *
 * Liveness: schedd heartbeats every registered frontend and backend on a
 * timer of its own (on_beat), whatever they manage to send. Fencing between
 * the active scheduler and its standby: the section "fencing" below.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "core/autoscale.h"
#include "core/build.h"
#include "experiment/output.h"
#include "experiment/result.h"
#include "control/moves.h"
#include "experiment/subcluster.h"
#include "runtime/auth.h"
#include "runtime/executor.h"
#include "runtime/fabric.h"
#include "runtime/http.h"
#ifdef SYM_HAVE_GRPC
#include "runtime/grpc/grpc.h"
#else
struct sym_grpc_call;
#endif
#include "runtime/loop.h"
#include "runtime/prom.h"
#include "runtime/run.h"
#include "runtime/sched.h"
#include "runtime/tokens.h"
#include "sym_version.h"

#define WHO "schedd"

struct sreq {
	uint32_t gen;
	bool used;
	uint16_t model;
	uint32_t frontend;
	uint64_t fe_req;
	uint64_t addr, key;
	uint32_t len;
	sym_time arrival;
};

/* Per model, for /metrics. */
struct sd_model {
	uint64_t requests, batches, batched, drops[SYM_DROP_NREASONS];
	struct sym_hist queueing; /* planned start of its batch - arrival at schedd */
};

/* A batch planned on a GPU whose completion is awaited. An empty one (every
 * request gone by the time it was decided) is not sent: it ends with the
 * batch before it. */
struct gbatch {
	uint64_t batch;  /* 0: empty */
	int n;
	uint32_t *reqs;  /* slab indices of its requests */
	sym_time finish; /* its planned finish */
};

/* Each GPU's batches in order: the running one, then at most one planned
 * ahead (the core's send-ahead). */
#define GPU_Q 2
struct gpu {
	struct gbatch q[GPU_Q];
	int qh, qn;
};

struct peer {
	struct sym_fab_conn *conn; /* NULL when down */
	sym_time last_seen;
	bool ever;                 /* has registered once */
	bool suspect;              /* backend: silent past suspect_ms, its GPU offline to the core */
	bool leaving;              /* said bye: its GPU offline to the core, it finishes its plans */
	bool back;                 /* suspect, heard again: online once its queue is empty */
	/* backend, with sub-clusters: loading its sub-cluster's models (offline
	 * to the core until every one is loaded), and the loads and unloads it
	 * was asked for and has not reported yet */
	bool loading;
	int pending;
	sym_time hello_at;
	bool gmove; /* backend, at an epoch: its GPU moves to another sub-cluster (offline, draining, loading) */
	/* backend: its GPU was in service (gpu_serving), in part `counted_part`, at the last serving_tick:
	 * the GPU-seconds since go to that state */
	bool counted;
	int counted_part;
};

/* What an accepted connection is, once it said hello. */
struct link {
	int role; /* 0 until hello */
	int id;
	struct link *prev, *next; /* every open connection's, to free them at exit */
};

enum hold { HOLD_NO, HOLD_YES, HOLD_LOADING, HOLD_UNLOADING };

/* A model's state for the repository API. READY serves. An unload drains
 * first (DRAINING: frontends refuse its new requests, the scheduler serves
 * those it holds), then the backends unload it (UNLOADING) and it is
 * UNAVAILABLE; a load has the backends load it (LOADING), then it is READY
 * again, or, when a backend could not, is unloaded from the others and
 * UNAVAILABLE with the reason. */
enum mstate { MS_READY, MS_DRAINING, MS_UNLOADING, MS_UNAVAILABLE, MS_LOADING };

/* Where a repository call's answer goes: its HTTP request or its gRPC call. */
struct reply {
	struct sym_http_req *hr;
	struct sym_grpc_call *gc;
};

struct rmodel {
	uint8_t state;                /* enum mstate */
	bool failed;                  /* LOADING: a backend could not load it */
	char reason[300];             /* UNAVAILABLE after a failed load: why */
	struct reply waiting;         /* the load or unload call to answer when it is done (none: both NULL) */
	bool waiting_load;            /* which */
	sym_time since;               /* when the call came */
};

/* A connection to the other scheduler: the one we opened, or the one it did. */
struct slink {
	struct sym_fab_conn *conn; /* NULL: none */
	bool up;                   /* ours: connected, our hello sent */
	int role;                  /* the other's role on it (SYM_ROLE_SCHEDD: active, SYM_ROLE_STANDBY), 0
				    * until its hello */
	sym_time opened, seen;     /* ours: when we began connecting; when it was last heard */
};

struct schedd {
	struct sym_cluster *c;
	const struct sym_rt_opts *o;
	struct sym_fab *fab;
	struct sym_loop *loop;
	struct sym_sched *sched;
	struct sym_model_cfg *mc;
	/* sub-clusters (a partition): parts of the scheduler's core (core/parts.h), each pair of a
	 * part and a GPU kind a ranker (a thread of its own with threads >= 2); else nsub 0 */
	int nsub;
	struct sym_subclusters sc;
	/* per backend and model (b * nmodels + m): what its GPU holds */
	uint8_t *holds; /* enum hold */
	uint64_t loads, unloads, load_failures;
	double load_s;
	/* epochs (partition.epoch_s): the partition recomputed from the rates
	 * measured, and each model that changes part moved: loaded on its new
	 * part's GPUs, then switched (the core's kinds_off), then unloaded from
	 * its old part's; the GPU split stays as it was at start */
	struct sym_loop_timer *epoch_t;
	sym_time epoch_start;
	uint64_t *ep_base;  /* per model: requests at the epoch's start */
	int *move_to;       /* per model: the part it is moving to, or -1 */
	uint8_t *move_phase; /* 1 loading on the new part, 2 switching; stalled: 3 being held, 4 held and
			      * unloaded from its old part, waiting for the deferred moves */
	int *retry_to;      /* per model: a move that failed for want of room, tried again once the others are done */
	/* the moves by memory (control/moves.h, the simulator's too), in its stages: smooth moves;
	 * then the stalled ones held and unloaded from their old parts, and the deferred moves; then
	 * the stalled ones loaded in their new parts. Per model: a deferred or stalled move's part
	 * before its stage (-1: none); 1 when its move is a stalled one (the core holds its requests
	 * meanwhile), 2 when that failed and it goes back to its old part, 3 once its loads there are
	 * asked for */
	int *defer_to;
	uint8_t *stalled;
	bool epoch_starting; /* on_epoch is starting the smooth moves: the others wait for all of them */
	int moving;         /* moves under way */
	/* the epoch's GPU moves (as the simulator's, Section 4.7): the split for the new assignment at
	 * the measured rates, each GPU staying where it can; done once the models have moved. A moving
	 * GPU goes offline, runs out its batches, unloads its old part's models, loads the new part's,
	 * and comes online in its new part's ranker. */
	int *gpu_to;        /* per GPU: its part after the epoch */
	bool gmove_due;     /* the split decided, the model moves still under way */
	int gmoving;        /* GPUs moving */
	uint64_t gpus_moved;
	int nepochs;
	sym_time first_epoch; /* when the epoch timer first fires (host monotonic) */
	uint64_t moves_started, moves_done, moves_failed, moves_retried, moves_deferred, moves_stalled;
	double last_rate_imb, last_mem_imb;
	struct link links;        /* list head */
	struct sreq *reqs;
	uint32_t nreqs, capreqs;
	uint32_t *freelist;
	uint32_t nfree;
	struct gpu *gpus;
	struct peer *fe, *be;
	uint64_t next_batch;
	sym_time failure_ns, suspect_ns;
	uint64_t suspects, leaves; /* backends found suspect, peers that left saying bye */
	uint64_t recovered;        /* suspect backends heard again and back online */
	int last_status;           /* GPUs online as last told to the frontends (-1: never) */
	/* counters */
	uint64_t metas, plans, planned_reqs, drops_sent, dones, be_failures, fe_failures, bad_peers;
	uint64_t planned_ahead; /* plans sent to a GPU while it ran a batch (send-ahead) */
	uint64_t failed_reqs, orphans;
	uint64_t refused_hellos; /* hellos for an identity already connected */
	struct sym_rt_ratelog refusal_log, msg_log; /* refused hellos, bad messages: a line a second each */
	bool draining;                              /* SIGTERM: no new request, finishing what it holds */
	/* Fencing (docs/runtime.md, "Fencing"): of the two schedulers (runtime.schedd's two
	 * addresses), one acts as the active one, the other stands by watching it. */
	int me;                                     /* our address: 0 the first, 1 the standby's */
	bool standby;                               /* standing by: takes no frontend or backend */
	uint32_t term;                              /* active: its term; standing by: the highest seen */
	bool confirmed;                             /* active: no other scheduler can be active now; it
						     * takes registrations only then */
	sym_time unconfirmed_at;                    /* active: when it last was not confirmed */
	sym_time alive_at;                          /* our loop last ran (a longer gap: we stalled) */
	struct slink link[2];                       /* to the other scheduler: [0] ours, [1] its */
	bool watch_ever;                            /* standing by: an active scheduler was heard */
	bool watch_lost;                            /* standing by: the link to it closed: reconnecting */
	sym_time watch_heard, watch_tried;          /* the active one last heard; our last attempt */
	struct sym_loop_timer *watch_t;             /* the link timer (heartbeat_ms) */
	struct sym_rt_ratelog link_log, stall_log;
	uint64_t takeovers, step_downs, fenced_hellos;
	sym_time active_since;                      /* confirmed active since (0: it is not) */
	sym_time (*active_iv)[2];                   /* the spans it was confirmed active, for the JSON */
	int n_active_iv, cap_active_iv;
	sym_time took_over;                         /* when it last took over (0: it has not) */
	double detect_ms, registered_ms;            /* the active one's silence when we took over; the
						     * time until every configured peer registered */
	sym_time drain_end;
	uint64_t drops_by[SYM_DROP_NREASONS];
	struct sym_hist done_lag; /* a completion's arrival after the batch's planned finish */
	struct sd_model *ms;
	/* the model repository API (KServe v2's repository extension): per model */
	struct rmodel *rm;
	uint32_t *live;           /* per model: its requests in the table (queued, planned or running) */
	int repo_busy;            /* models draining, unloading or loading */
	bool status_dirty;        /* the models off changed since the frontends last heard */
	struct sym_tokens admin;  /* repository_token_file's tokens: load and unload need one */
	struct sym_grpc *grpc;    /* the gRPC API (the repository extension), or NULL */
	uint64_t repo_loads, repo_unloads, repo_failed, repo_refused, repo_not_loaded;
	double *gpu_busy_s;     /* per GPU: planned busy seconds of the batches sent */
	uint64_t *gpu_plans;    /* per GPU: plans sent */
	struct sym_http *http;
	/* autoscaling signals: this interval's, and the advice of the last one */
	sym_time iv_start, iv_len;
	/* when the first advice intervals closed (CLOCK_MONOTONIC, which every process of the host
	 * shares): in schedd.json, so that a test can put the simulator's decisions where schedd's
	 * fell against its load (autoscale.phase_s) */
	sym_time rolls[64];
	int roll_adds[64]; /* the GPUs each one's advice asked to add (the sub-clusters' summed) */
	int nrolls;
	/* and each one's advice per sub-cluster (the whole cluster's without them): the GPUs serving at
	 * its end and the signals and advice, so that the test can put them beside the simulator's
	 * (decisions[].subcluster_*); [roll * max(nsub, 1) + part], NULL if out of memory */
	struct roll_part {
		int serving, add, release;
		double busy, bad, serving_s;
	} *roll_parts;
	sym_time *first_up; /* per GPU: when it first came online (0: never), the same clock */
	/* the cluster-level actions executed here, on the same clock (schedd.json's control_actions: a
	 * test puts them beside the simulator's autoscaler decisions and epochs, issue 31); the first
	 * ACTS_MAX, the rest counted */
#define ACTS_MAX 512
	struct { sym_time t; uint8_t kind; short id, from, to; } acts[ACTS_MAX];
	int nacts;
	uint64_t acts_over;
	uint64_t iv_good, iv_bad;
	double iv_busy_s;
	double iv_serving_s; /* GPU-seconds in service in the interval, counted up to iv_tick */
	sym_time iv_tick;
	struct sym_autoscale advice;
	bool advice_set;
	/* the same per sub-cluster (nsub of each; requests by their model's
	 * part, GPU time by its GPU's), for an autoscaler that adds a part's GPUs */
	struct iv_part {
		uint64_t good, bad;
		double busy_s, serving_s, closed_serving_s; /* (the last closed interval's) */
		struct sym_autoscale advice;
	} *iv_part;
	uint64_t *batch_counts; /* by size */
	int maxb;
};

enum { ACT_JOINED, ACT_LEFT, ACT_FAILED, ACT_GPU_MOVED, ACT_MODEL_MOVED, ACT_NKINDS };
static const char *const act_names[ACT_NKINDS] = { "backend_joined", "backend_left", "backend_failed", "gpu_moved",
						   "model_moved" };

/* An action of the control plane, executed now: backend or GPU or model id, its part before and
 * after (a backend: its GPU's part in both) */
static void note_action(struct schedd *s, int kind, int id, int from, int to)
{
	if (s->nacts == ACTS_MAX) {
		s->acts_over++;
		return;
	}
	s->acts[s->nacts].t = sym_monotonic_ns();
	s->acts[s->nacts].kind = (uint8_t)kind;
	s->acts[s->nacts].id = (short)id;
	s->acts[s->nacts].from = (short)from;
	s->acts[s->nacts++].to = (short)to;
}

/* Every message we send carries our term (wire.h). */
static int sd_send(struct schedd *s, struct sym_fab_conn *conn, struct sym_msg *m, const struct sym_wire_input *in,
		   const uint16_t *models)
{
	m->term = s->term;
	return sym_rt_send(WHO, conn, m, in, models);
}

/* This interval's signals: n requests of model m served (negative: taken
 * back) or bad, GPU g busy for busy_s. */
static void iv_good(struct schedd *s, int m, int64_t n)
{
	s->iv_good += (uint64_t)n;
	if (s->iv_part)
		s->iv_part[s->sc.model_part[m]].good += (uint64_t)n;
}

static void iv_bad(struct schedd *s, int m, uint64_t n)
{
	s->iv_bad += n;
	if (s->iv_part)
		s->iv_part[s->sc.model_part[m]].bad += n;
}

static void iv_busy(struct schedd *s, int g, double busy_s)
{
	s->iv_busy_s += busy_s;
	if (s->iv_part)
		s->iv_part[s->sc.gpu_part[g]].busy_s += busy_s;
}

static uint32_t req_alloc(struct schedd *s)
{
	if (s->nfree)
		return s->freelist[--s->nfree];
	if (s->nreqs == s->capreqs) {
		uint32_t cap = s->capreqs ? s->capreqs * 2 : 4096;
		struct sreq *r = realloc(s->reqs, cap * sizeof(*r));
		uint32_t *fl = r ? realloc(s->freelist, cap * sizeof(*fl)) : NULL;
		if (r)
			s->reqs = r;
		if (!fl)
			return UINT32_MAX;
		s->freelist = fl;
		memset(s->reqs + s->capreqs, 0, (cap - s->capreqs) * sizeof(*r));
		s->capreqs = cap;
	}
	return s->nreqs++;
}

static void req_free(struct schedd *s, uint32_t i)
{
	s->live[s->reqs[i].model]--;
	s->reqs[i].used = false;
	s->reqs[i].gen++;
	s->freelist[s->nfree++] = i;
}

static struct sreq *req_get(struct schedd *s, uint64_t id)
{
	uint32_t i = (uint32_t)id;
	if (i >= s->nreqs || !s->reqs[i].used || s->reqs[i].gen != (uint32_t)(id >> 32))
		return NULL;
	return &s->reqs[i];
}

static void send_drop(struct schedd *s, const struct sreq *r, uint8_t reason)
{
	struct peer *p = &s->fe[r->frontend];
	if (!p->conn)
		return;
	struct sym_msg m = { .type = SYM_MSG_DROP };
	m.u.drop.req_id = r->fe_req;
	m.u.drop.reason = reason;
	if (sym_rt_tracing()) {
		char name[40];
		sym_rt_request_name(r->frontend, r->fe_req, name, sizeof(name));
		struct sym_log_fields lf = { .request = name, .batch = -1 };
		sym_rt_trace(WHO, &lf, "request %s of model %s dropped: %s", name, s->c->exp.models[r->model].name,
			     sym_wire_status_name(reason));
	}
	if (!sd_send(s, p->conn, &m, NULL, NULL))
		s->drops_sent++;
}

/* ---- the core's decisions ---- */

/* Reports the ends of the empty batches now at the head of GPU g's queue:
 * they end as soon as the batch before them did. */
static void pop_empty(struct schedd *s, int g, sym_time now);

/* The debug trace of a plan: its batch id and, in JSON, its requests by name
 * (in text, the first few). */
static void trace_plan(struct schedd *s, const struct sym_msg *m, const struct sym_wire_input *in)
{
	char names[200] = "";
	size_t len = 0;
	for (int i = 0; i < m->u.plan.n && len + 40 < sizeof(names); i++) {
		char r[40];
		sym_rt_request_name(in[i].frontend, in[i].req_id, r, sizeof(r));
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? " " : "", r);
	}
	struct sym_log_fields lf = { .batch = (int64_t)m->u.plan.batch_id, .inputs = in, .ninputs = m->u.plan.n };
	sym_rt_trace(WHO, &lf, "batch %" PRIu64 " of model %s on backend %u: %u request%s (%s%s), start in %.3f ms",
		     m->u.plan.batch_id, s->c->exp.models[m->u.plan.model].name, m->u.plan.gpu, m->u.plan.n,
		     m->u.plan.n == 1 ? "" : "s", names, len + 40 >= sizeof(names) ? " ..." : "",
		     (double)m->u.plan.start_in_ns / 1e6);
}

static void on_dispatch(void *ctx, const struct sym_sched_dispatch *d)
{
	struct schedd *s = ctx;
	struct gpu *g = &s->gpus[d->gpu];
	struct peer *be = &s->be[d->gpu];
	if (g->qn == GPU_Q) {
		/* the core plans at most one batch ahead: a bug if it happens */
		sym_rt_error(WHO, "internal error: a third batch for GPU %d; its requests fail", d->gpu);
		for (int i = 0; i < d->size; i++) {
			struct sreq *r = req_get(s, d->ids[i]);
			if (r) {
				send_drop(s, r, SYM_WIRE_BACKEND_FAILED);
				req_free(s, (uint32_t)d->ids[i]);
			}
		}
		return;
	}
	struct gbatch *gb = &g->q[(g->qh + g->qn) % GPU_Q];
	struct sym_wire_input in[SYM_WIRE_MAX_BATCH];
	int n = 0;
	for (int i = 0; i < d->size; i++) {
		struct sreq *r = req_get(s, d->ids[i]);
		if (!r)
			continue;
		uint32_t idx = (uint32_t)d->ids[i];
		if (!s->fe[r->frontend].conn) { /* its frontend is gone: dropped here */
			s->orphans++;
			req_free(s, idx);
			continue;
		}
		if (!be->conn) { /* offline raced with the decision */
			send_drop(s, r, SYM_WIRE_BACKEND_FAILED);
			s->failed_reqs++;
			iv_bad(s, r->model, 1);
			req_free(s, idx);
			continue;
		}
		in[n] = (struct sym_wire_input){ .frontend = r->frontend, .req_id = r->fe_req, .addr = r->addr,
						 .len = r->len, .key = r->key };
		gb->reqs[n++] = idx;
	}
	if (!be->conn)
		return; /* the GPU is offline; the core never hears of it again until it is back */
	sym_time now = sym_monotonic_ns();
	g->qn++;
	gb->n = n;
	gb->finish = d->finish;
	if (n == 0) {
		gb->batch = 0;
		pop_empty(s, d->gpu, now);
		return;
	}
	struct sym_msg m = { .type = SYM_MSG_PLAN };
	m.u.plan.batch_id = ++s->next_batch;
	m.u.plan.gpu = (uint32_t)d->gpu;
	m.u.plan.model = (uint16_t)d->model;
	m.u.plan.start_in_ns = d->start > now ? d->start - now : 0;
	m.u.plan.latest_in_ns = d->reject_after == SYM_TIME_NEVER ? -1
				: d->reject_after - now > m.u.plan.start_in_ns ? d->reject_after - now
									: m.u.plan.start_in_ns;
	m.u.plan.n = (uint16_t)n;
	gb->batch = m.u.plan.batch_id;
	if (g->qn > 1)
		s->planned_ahead++;
	s->plans++;
	s->planned_reqs += (uint64_t)n;
	struct sd_model *sm = &s->ms[d->model];
	sm->batches++;
	sm->batched += (uint64_t)n;
	for (int i = 0; i < n; i++)
		sym_hist_record(&sm->queueing, d->start - s->reqs[gb->reqs[i]].arrival);
	double busy = (double)(d->finish - d->start) / 1e9;
	s->gpu_busy_s[d->gpu] += busy;
	s->gpu_plans[d->gpu]++;
	iv_busy(s, d->gpu, busy);
	iv_good(s, d->model, n);
	if (n <= s->maxb)
		s->batch_counts[n]++;
	if (sym_rt_tracing())
		trace_plan(s, &m, in);
	if (sd_send(s, be->conn, &m, in, NULL))
		sym_rt_warn(WHO, "backend %d: the plan of batch %" PRIu64 " was not sent; waiting for its failure",
			    d->gpu, m.u.plan.batch_id);
}

static void on_drop(void *ctx, uint64_t id, int model, enum sym_drop_reason why, sym_time now)
{
	(void)model;
	(void)now;
	struct schedd *s = ctx;
	struct sreq *r = req_get(s, id);
	if (!r)
		return;
	s->drops_by[why]++;
	s->ms[r->model].drops[why]++;
	iv_bad(s, r->model, 1);
	send_drop(s, r, why == SYM_DROP_EARLY ? SYM_WIRE_DROPPED_EARLY : SYM_WIRE_DROPPED_EXPIRED);
	req_free(s, (uint32_t)id);
}

static void on_moved(void *ctx, int m, int rc);

static void poll_sched(struct schedd *s)
{
	const struct sym_sched_out out = { .ctx = s, .dispatch = on_dispatch, .drop = on_drop, .moved = on_moved };
	while (sym_sched_poll(s->sched, &out, 4096) > 0)
		;
}

/* Submits, polling decisions while the core's queue is full. */
static void submit(struct schedd *s, const struct sym_sched_req *r)
{
	int rc;
	while ((rc = sym_sched_submit(s->sched, r)) == -EAGAIN)
		poll_sched(s);
	if (rc)
		sym_rt_error(WHO, "internal error: the core refused a request: %s", strerror(-rc));
}

static void gpu_call(struct schedd *s, int (*fn)(struct sym_sched *, int), int g)
{
	while (fn(s->sched, g) == -EAGAIN)
		poll_sched(s);
}

/* Backend g's GPU serves: registered, not suspect, not leaving, its models loaded, not moving
 * to another sub-cluster. */
static bool gpu_serving(const struct schedd *s, int g)
{
	return s->be[g].conn && !s->be[g].suspect && !s->be[g].leaving && !s->be[g].loading && !s->be[g].gmove;
}

/* The GPU-seconds in service since the last tick, in all and per part, each
 * GPU counted in the state it had at the last tick; then every GPU's state now.
 * It runs on every heartbeat, at each interval's end and right after a GPU
 * comes or goes (gpu_up, send_status): the heartbeat alone is too seldom, at
 * failure_ms / 8 when that is longer than heartbeat_ms (375 ms at failure_ms
 * 3000: a GPU that joined counted up to 0.37 s it had not served, and its
 * part read 0.75 busy where the simulator read 0.95, test_control_shift). */
static void serving_tick(struct schedd *s, sym_time now)
{
	double dt = now > s->iv_tick ? (double)(now - s->iv_tick) / 1e9 : 0;
	s->iv_tick = now > s->iv_tick ? now : s->iv_tick;
	for (int g = 0; g < s->c->backends_max; g++) {
		struct peer *p = &s->be[g];
		if (p->counted && dt > 0) {
			s->iv_serving_s += dt;
			if (s->iv_part)
				s->iv_part[p->counted_part].serving_s += dt;
		}
		p->counted = gpu_serving(s, g);
		p->counted_part = s->nsub ? s->sc.gpu_part[g] : 0;
	}
}

/* GPU g online, in its part's ranker with sub-clusters (a GPU that moved comes
 * online in its new one). */
static void gpu_up(struct schedd *s, int g)
{
	serving_tick(s, sym_monotonic_ns()); /* (its state is set: it serves from now) */
	if (!s->first_up[g])
		s->first_up[g] = sym_monotonic_ns();
	if (!s->nsub) {
		gpu_call(s, sym_sched_gpu_online, g);
		return;
	}
	while (sym_sched_gpu_online_part(s->sched, g, s->sc.gpu_part[g]) == -EAGAIN)
		poll_sched(s);
}

static void gpu_done(struct schedd *s, int g, sym_time start, sym_time end, bool rejected)
{
	while (sym_sched_gpu_done(s->sched, g, start, end, rejected) == -EAGAIN)
		poll_sched(s);
}

static void pop_empty(struct schedd *s, int g, sym_time now)
{
	struct gpu *gp = &s->gpus[g];
	while (gp->qn && gp->q[gp->qh].batch == 0) {
		gp->qh = (gp->qh + 1) % GPU_Q;
		gp->qn--;
		gpu_done(s, g, now, now, false);
	}
}

/* ---- peers ---- */

static struct link *link_new(struct schedd *s)
{
	struct link *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->next = s->links.next;
	l->prev = &s->links;
	s->links.next->prev = l;
	s->links.next = l;
	return l;
}

static void link_free(void *ctx)
{
	struct link *l = ctx;
	if (!l)
		return;
	l->prev->next = l->next;
	l->next->prev = l->prev;
	free(l);
}

static void send_status(struct schedd *s, int only_fe);
static void repo_step(struct schedd *s);
static void check_taken_over(struct schedd *s);
static void link_accepted(struct schedd *s, struct sym_fab_conn *conn, struct link *l, const struct sym_msg *m);
static void link_closed(struct schedd *s, int k, bool no_answer, const char *why);
static void on_link_msg(struct schedd *s, int k, const struct sym_msg *m);
static void saw_term(struct schedd *s, uint32_t term, const char *why);
static const struct sym_hostport *other_addr(const struct schedd *s);
static void check_stall(struct schedd *s);
static bool active_now(const struct schedd *s);

static void move_check(struct schedd *s, int m);
static void move_end(struct schedd *s, int m);
static void gmove_abort(struct schedd *s, int b);
static void gmove_load(struct schedd *s, int g);

static void backend_down(struct schedd *s, int b, const char *why)
{
	struct peer *p = &s->be[b];
	if (!p->conn)
		return;
	int part = s->nsub ? s->sc.gpu_part[b] : 0;
	if (p->leaving && !s->gpus[b].qn) {
		if (!s->o->quiet)
			sym_rt_log(WHO, "backend %d left", b);
		note_action(s, ACT_LEFT, b, part, part);
	} else {
		sym_rt_warn(WHO, "backend %d removed: %s", b, why);
		s->be_failures++;
		note_action(s, ACT_FAILED, b, part, part);
	}
	sym_loop_fab_close(s->loop, p->conn, link_free, sym_fab_conn_user(p->conn));
	p->conn = NULL;
	struct gpu *g = &s->gpus[b];
	for (; g->qn; g->qh = (g->qh + 1) % GPU_Q, g->qn--) {
		struct gbatch *gb = &g->q[g->qh];
		for (int i = 0; i < gb->n; i++) {
			struct sreq *r = &s->reqs[gb->reqs[i]];
			send_drop(s, r, SYM_WIRE_BACKEND_FAILED);
			s->failed_reqs++;
			iv_bad(s, r->model, 1);
			req_free(s, gb->reqs[i]);
		}
		gb->n = 0;
	}
	gpu_call(s, sym_sched_gpu_offline, b);
	gmove_abort(s, b);
	p->suspect = p->leaving = p->back = p->loading = false;
	p->pending = 0;
	send_status(s, -1);
	for (size_t m = 0; s->move_phase && m < s->c->exp.nmodels; m++)
		if (s->move_phase[m] == 1 && s->move_to[m] == s->sc.gpu_part[b])
			move_check(s, (int)m); /* it was loading a moving model: the move goes on without it */
}

/* Backend b's GPU gets no new plans (offline to the core) while the backend
 * finishes those it has: it is suspect (silent past suspect_ms) or leaving
 * (it said bye). Its batches' completions still count. */
static void backend_quiet(struct schedd *s, int b, bool leaving, const char *why)
{
	struct peer *p = &s->be[b];
	bool was = p->suspect || p->leaving;
	if (leaving)
		p->leaving = true;
	else
		p->suspect = true;
	if (was)
		return;
	gpu_call(s, sym_sched_gpu_offline, b);
	if (!leaving)
		s->suspects++;
	/* one line per backend and event (a backend is authenticated; it turns suspect at most once per suspect_ms) */
	sym_rt_warn(WHO, "backend %d %s: no new plans for GPU %d (%zu batches to finish)", b, why, b, (size_t)s->gpus[b].qn);
	send_status(s, -1);
}

/* A suspect backend was heard again: its GPU is the core's again once the
 * batches it had in hand are done (the core, told online, takes the GPU as
 * free at once, and would plan a batch past the two it can hold). */
static void backend_heard(struct schedd *s, int b)
{
	struct peer *p = &s->be[b];
	if (!p->suspect || p->leaving)
		return;
	if (p->loading || p->gmove) { /* it goes online when its loads (or its GPU's move) are done */
		p->suspect = p->back = false;
		return;
	}
	if (s->gpus[b].qn) {
		p->back = true; /* on_done puts it online when its queue is empty */
		return;
	}
	p->suspect = p->back = false;
	gpu_up(s, b);
	s->recovered++;
	sym_rt_log(WHO, "backend %d heard again: GPU %d online", b, b);
	send_status(s, -1);
}

static int gpus_online(const struct schedd *s)
{
	int n = 0;
	for (int g = 0; g < s->c->backends_max; g++)
		n += gpu_serving(s, g);
	return n;
}

/* Tells the frontends (or only frontend only_fe) how many GPUs are online, for
 * their readiness; only when the count changed, unless only_fe >= 0. */
static void send_status(struct schedd *s, int only_fe)
{
	serving_tick(s, sym_monotonic_ns()); /* (called whenever a GPU may have come or gone) */
	int n = gpus_online(s);
	if (only_fe < 0 && n == s->last_status && !s->status_dirty)
		return;
	struct sym_msg m = { .type = SYM_MSG_STATUS };
	m.u.status.gpus_online = (uint32_t)n;
	m.u.status.gpus_max = (uint32_t)s->c->backends_max;
	m.u.status.draining = s->draining;
	uint16_t off[SYM_WIRE_MAX_MODELS];
	for (size_t k = 0; k < s->c->exp.nmodels && m.u.status.noff < SYM_WIRE_MAX_MODELS; k++)
		if (s->rm[k].state != MS_READY)
			off[m.u.status.noff++] = (uint16_t)k;
	for (int f = 0; f < s->c->nfrontends; f++)
		if (s->fe[f].conn && (only_fe < 0 || f == only_fe))
			sd_send(s, s->fe[f].conn, &m, NULL, off);
	if (only_fe < 0) {
		s->last_status = n;
		s->status_dirty = false;
	}
}

static void frontend_down(struct schedd *s, int f, const char *why)
{
	struct peer *p = &s->fe[f];
	if (!p->conn)
		return;
	if (p->leaving)
		sym_rt_log(WHO, "frontend %d left", f);
	else {
		sym_rt_warn(WHO, "frontend %d removed: %s; its queued requests will be dropped", f, why);
		s->fe_failures++;
	}
	p->leaving = false;
	sym_loop_fab_close(s->loop, p->conn, link_free, sym_fab_conn_user(p->conn));
	p->conn = NULL;
}

/* Closes a connection, whatever it is. */
static void drop_conn(struct schedd *s, struct sym_fab_conn *conn, const char *why)
{
	struct link *l = sym_fab_conn_user(conn);
	if (l && l->role == SYM_ROLE_BACKEND && s->be[l->id].conn == conn) {
		backend_down(s, l->id, why);
		return;
	}
	if (l && l->role == SYM_ROLE_FRONTEND && s->fe[l->id].conn == conn) {
		frontend_down(s, l->id, why);
		return;
	}
	if (conn == s->link[1].conn) {
		link_closed(s, 1, false, why);
		return;
	}
	if (s->o->verbose)
		sym_rt_log(WHO, "connection closed: %s", why);
	sym_loop_fab_close(s->loop, conn, link_free, l);
}

/* A hello schedd does not take: counted, logged (at most a line a second), closed. */
static void refuse_hello(struct schedd *s, struct sym_fab_conn *conn, const char *why)
{
	s->bad_peers++;
	sym_rt_log_limited(&s->refusal_log, WHO, "%s", why);
	drop_conn(s, conn, why);
}

/* A hello for an identity whose connection is up: refused, never a
 * replacement (a restarted peer is let in once the old connection is closed
 * or has been silent for failure_ms; it keeps retrying meanwhile). */
static void refuse_identity(struct schedd *s, struct sym_fab_conn *conn, const char *role, int id)
{
	char why[160];
	s->refused_hellos++;
	snprintf(why, sizeof(why), "refused a second hello as %s %d: that %s is connected", role, id, role);
	refuse_hello(s, conn, why);
}

/* Whether part `part`'s GPUs are to hold model m: it is the model's part, or
 * the part it is moving to. */
static bool part_holds(const struct schedd *s, size_t m, int part)
{
	if (s->move_to && s->move_to[m] == part)
		return true;
	/* (a stalled move's old part unloads it once the core holds it: from phase 4 on) */
	bool gone = s->stalled && s->stalled[m] == 1 && s->move_to[m] >= 0 && s->move_phase[m] != 3;
	return s->sc.model_part[m] == part && !gone;
}

/* Whether backend g's GPU is to hold model m: the model is not unloaded (or
 * being unloaded) through the repository API, and, with sub-clusters, its
 * part holds it. */
static bool should_hold(const struct schedd *s, size_t m, int g)
{
	if (s->rm[m].state == MS_UNLOADING || s->rm[m].state == MS_UNAVAILABLE)
		return false;
	return !s->nsub || part_holds(s, m, s->sc.gpu_part[g]);
}

/* Tells a frontend or backend that spare slot m holds its model now. */
static void send_model(struct schedd *s, struct sym_fab_conn *conn, size_t m)
{
	struct sym_msg x = { .type = SYM_MSG_MODEL };
	x.u.model.model = (uint16_t)m;
	x.u.model.name = s->c->exp.models[m].name;
	x.u.model.name_len = (uint8_t)strlen(x.u.model.name);
	sd_send(s, conn, &x, NULL, NULL);
}

/* A peer that registers hears of every filled slot first (before its
 * status, loads and unloads); one that held another model there from an
 * earlier scheduler gives it up (backend.c). */
static void send_slots(struct schedd *s, struct sym_fab_conn *conn)
{
	const struct sym_experiment *e = &s->c->exp;
	for (size_t m = e->slot0; m < e->nmodels; m++)
		if (!sym_experiment_slot_empty(e, m))
			send_model(s, conn, m);
}

static void send_load(struct schedd *s, int b, int model, int op)
{
	struct sym_msg m = { .type = SYM_MSG_LOAD };
	m.u.load.model = (uint16_t)model;
	m.u.load.op = (uint8_t)op;
	s->holds[(size_t)b * s->c->exp.nmodels + (size_t)model] = op == SYM_WIRE_LOAD ? HOLD_LOADING : HOLD_UNLOADING;
	s->be[b].pending++;
	sd_send(s, s->be[b].conn, &m, NULL, NULL);
}

/* Backend b registered holding the models its hello lists: it unloads those
 * it is not to hold (another sub-cluster's, or unloaded through the
 * repository API; first: their memory is what the others need) and loads
 * the missing ones. True when it holds its models already (online at once);
 * else it is loading, offline to the core. */
static bool reconcile_models(struct schedd *s, int b, const struct sym_msg *hello)
{
	size_t n = s->c->exp.nmodels;
	uint8_t *h = s->holds + (size_t)b * n;
	memset(h, HOLD_NO, n);
	for (uint16_t i = 0; i < hello->u.hello.nmodels; i++)
		h[sym_wire_hello_model(hello, i)] = HOLD_YES;
	struct peer *p = &s->be[b];
	p->pending = 0;
	for (size_t m = 0; m < n; m++)
		if (h[m] == HOLD_YES && !should_hold(s, m, b))
			send_load(s, b, (int)m, SYM_WIRE_UNLOAD);
	int loads = 0;
	for (size_t m = 0; m < n; m++)
		if (h[m] == HOLD_NO && should_hold(s, m, b)) {
			send_load(s, b, (int)m, SYM_WIRE_LOAD);
			loads++;
		}
	p->loading = loads > 0;
	return !p->loading;
}

/* Backend b loaded or unloaded a model. Once every model of its sub-cluster
 * is loaded its GPU goes online; a load that failed keeps it offline (it
 * cannot serve its sub-cluster) and says why in the log. */
static void loaded_report(struct schedd *s, struct sym_fab_conn *conn, int b, const struct sym_msg *m)
{
	const struct sym_experiment *e = &s->c->exp;
	struct peer *p = &s->be[b];
	uint8_t *h = m->u.loaded.model < e->nmodels ? &s->holds[(size_t)b * e->nmodels + m->u.loaded.model] : NULL;
	bool load = m->u.loaded.op == SYM_WIRE_LOAD;
	if (!h || *h != (load ? HOLD_LOADING : HOLD_UNLOADING) || p->pending <= 0) {
		char why[160];
		snprintf(why, sizeof(why), "a report of a model %s (model %u) that was not asked for", load ? "load" : "unload",
			 m->u.loaded.model);
		s->bad_peers++;
		drop_conn(s, conn, why);
		return;
	}
	p->pending--;
	int mi = m->u.loaded.model;
	const char *name = e->models[mi].name;
	if (!load) {
		*h = HOLD_NO;
		s->unloads++;
		if (s->move_to && s->stalled[mi] == 2 && s->move_to[mi] == s->sc.gpu_part[b])
			move_check(s, mi); /* a failed stalled move going back waited for it */
		repo_step(s);
		return;
	}
	bool moving = s->move_to && s->move_to[mi] == s->sc.gpu_part[b];
	if (m->u.loaded.status != SYM_WIRE_OK) {
		*h = HOLD_NO;
		s->load_failures++;
		struct rmodel *rm = &s->rm[mi];
		if (rm->state == MS_LOADING && !rm->failed) { /* the repository API's answer says why */
			rm->failed = true;
			snprintf(rm->reason, sizeof(rm->reason), "backend %d could not load it: %.*s", b,
				 (int)m->u.loaded.why_len, m->u.loaded.why ? m->u.loaded.why : "");
		}
		if (moving && !p->loading)
			sym_rt_error(WHO, "backend %d could not load model %s for its move to sub-cluster %d (its log says "
				     "why)", b, name, s->move_to[mi]);
		else if (p->loading)
			sym_rt_error(WHO, "backend %d could not load model %s (%.*s): GPU %d stays offline", b, name,
				     (int)m->u.loaded.why_len, m->u.loaded.why ? m->u.loaded.why : "", b);
		else
			sym_rt_error(WHO, "backend %d could not load model %s: %.*s", b, name, (int)m->u.loaded.why_len,
				     m->u.loaded.why ? m->u.loaded.why : "");
		if (moving)
			move_check(s, mi);
		if (p->gmove && p->loading) { /* its GPU stays offline, as at a registration */
			p->gmove = false;
			s->gmoving--;
		}
		repo_step(s);
		return;
	}
	*h = HOLD_YES;
	s->loads++;
	s->load_s += (double)m->u.loaded.took_ns / 1e9;
	if (moving)
		move_check(s, mi);
	repo_step(s);
	if (!p->loading)
		return;
	for (size_t k = 0; k < e->nmodels; k++)
		if (should_hold(s, k, b) && s->holds[(size_t)b * e->nmodels + k] != HOLD_YES)
			return;
	p->loading = false;
	if (!s->o->quiet)
		sym_rt_log(WHO, "backend %d loaded the models of sub-cluster %d in %.3f s: GPU %d online", b,
			   s->nsub ? s->sc.gpu_part[b] : 0, (double)(sym_monotonic_ns() - p->hello_at) / 1e9, b);
	if (p->gmove) {
		p->gmove = false;
		s->gmoving--;
	}
	if (p->suspect || p->leaving)
		return;
	gpu_up(s, b);
	send_status(s, -1);
}

/* Backend b loaded or unloaded a model (loaded_report); a GPU moving away that
 * waited for that report (a repository load, an old part's unload) goes on. */
static void on_loaded(struct schedd *s, struct sym_fab_conn *conn, int b, const struct sym_msg *m)
{
	loaded_report(s, conn, b, m);
	if (s->be[b].gmove && s->sc.gpu_part[b] != s->gpu_to[b])
		gmove_load(s, b);
}

/* ---- GPU moves between sub-clusters (epochs) ---- */

/* GPU g is part `to`'s from now on (its ranker's when it comes online). */
static void gmove_assign(struct schedd *s, int g, int to)
{
	s->sc.gpu_part[g] = to;
}

/* A moving GPU whose backend failed or left: the move ends there (its GPU is
 * its new part's; a backend registering with that id loads that part's). */
static void gmove_abort(struct schedd *s, int b)
{
	if (!s->be[b].gmove)
		return;
	s->be[b].gmove = false;
	s->gmoving--;
	gmove_assign(s, b, s->gpu_to[b]);
}

/* Moving GPU g ran out its batches and has no load or unload in flight (a
 * model that moved out of its old part is being unloaded from it at first):
 * it unloads what its new part does not hold (first: their memory is what
 * the others need) and loads what it lacks; on_loaded puts it online in its
 * new part once they are loaded. */
static void gmove_load(struct schedd *s, int g)
{
	const struct sym_experiment *e = &s->c->exp;
	size_t n = e->nmodels;
	struct peer *p = &s->be[g];
	if (p->pending || s->gpus[g].qn || s->sc.gpu_part[g] == s->gpu_to[g])
		return; /* (on_loaded and on_done call again) */
	if (p->leaving) { /* it said bye: no loads for it; its id is the new part's */
		gmove_abort(s, g);
		return;
	}
	int from = s->sc.gpu_part[g];
	gmove_assign(s, g, s->gpu_to[g]);
	uint8_t *h = s->holds + (size_t)g * n;
	int loads = 0, unloads = 0;
	for (size_t m = 0; m < n; m++)
		if (h[m] == HOLD_YES && !should_hold(s, m, g)) {
			send_load(s, g, (int)m, SYM_WIRE_UNLOAD);
			unloads++;
		}
	for (size_t m = 0; m < n; m++)
		if (h[m] == HOLD_NO && should_hold(s, m, g)) {
			send_load(s, g, (int)m, SYM_WIRE_LOAD);
			loads++;
		}
	p->hello_at = sym_monotonic_ns(); /* (on_loaded's log says how long the loads took from here) */
	if (!s->o->quiet)
		sym_rt_log(WHO, "GPU %d left sub-cluster %d, its batches done: unloading %d models, loading %d for "
			   "sub-cluster %d", g, from, unloads, loads, s->gpu_to[g]);
	p->loading = loads > 0;
	if (p->loading)
		return;
	p->gmove = false;
	s->gmoving--;
	if (!p->suspect && !p->leaving) {
		gpu_up(s, g);
		send_status(s, -1);
	}
}

/* The epoch's GPU moves, once its model moves are done: each GPU whose part
 * changes goes offline and runs out its batches (on_done), then loads. A GPU
 * whose backend went away meanwhile is the new part's at once; one whose
 * backend is still loading (it just registered) stays. */
static void gmoves_start(struct schedd *s)
{
	s->gmove_due = false;
	for (int g = 0; g < s->c->backends_max; g++) {
		int to = s->gpu_to[g], from = s->sc.gpu_part[g];
		if (to == from)
			continue;
		struct peer *p = &s->be[g];
		if (p->conn && p->loading) { /* registered, loading its part's models: it stays (this epoch) */
			s->gpu_to[g] = from;
			continue;
		}
		s->gpus_moved++;
		note_action(s, ACT_GPU_MOVED, g, from, to);
		if (!p->conn) {
			gmove_assign(s, g, to);
			if (!s->o->quiet)
				sym_rt_log(WHO, "epoch %d: GPU %d (its backend went away since the epoch began) moves from "
					   "sub-cluster %d to %d", s->nepochs, g, from, to);
			continue;
		}
		if (!s->o->quiet)
			sym_rt_log(WHO, "epoch %d: GPU %d moves from sub-cluster %d to %d: offline, %zu batches to finish",
				   s->nepochs, g, from, to, (size_t)s->gpus[g].qn);
		p->gmove = true;
		s->gmoving++;
		gpu_call(s, sym_sched_gpu_offline, g);
		send_status(s, -1);
		gmove_load(s, g);
	}
}

/* ---- the model repository API (KServe v2's repository extension) ---- */

static const char *mstate_name(int st)
{
	switch (st) {
	case MS_READY: return "READY";
	case MS_DRAINING:
	case MS_UNLOADING: return "UNLOADING";
	case MS_LOADING: return "LOADING";
	default: return "UNAVAILABLE";
	}
}

static void set_state(struct schedd *s, int m, int st)
{
	bool was_off = s->rm[m].state != MS_READY, busy = s->rm[m].state == MS_DRAINING ||
							  s->rm[m].state == MS_UNLOADING || s->rm[m].state == MS_LOADING;
	s->rm[m].state = (uint8_t)st;
	bool off = st != MS_READY, now_busy = st == MS_DRAINING || st == MS_UNLOADING || st == MS_LOADING;
	s->repo_busy += (int)now_busy - (int)busy;
	if (off != was_off) {
		s->status_dirty = true;
		send_status(s, -1);
	}
}

static bool reply_set(struct reply r)
{
	return r.hr || r.gc;
}

/* An answer that is not a success: the HTTP status, or its gRPC code. */
static void reply_error(struct reply r, unsigned status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void reply_error(struct reply r, unsigned status, const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r.hr)
		sym_http_reply_error(r.hr, status, "%s", msg);
#ifdef SYM_HAVE_GRPC
	else if (r.gc)
		sym_grpc_finish_error(r.gc, sym_grpc_code_of_http(status), "%s", msg);
#endif
}

/* Done as asked: 200 and {}, or OK. */
static void reply_done(struct reply r)
{
	if (r.hr)
		sym_http_reply_json(r.hr, 200, cJSON_CreateObject());
#ifdef SYM_HAVE_GRPC
	else if (r.gc)
		sym_grpc_finish_ok(r.gc);
#endif
}

/* The call waiting on model m, answered: 200 and {} when it did what it was
 * asked, else status and why. */
static void repo_answer(struct schedd *s, int m, unsigned status, const char *why)
{
	struct rmodel *rm = &s->rm[m];
	if (!reply_set(rm->waiting))
		return;
	const char *name = s->c->exp.models[m].name;
	double took = (double)(sym_monotonic_ns() - rm->since) / 1e9;
	if (status == 200) {
		if (!s->o->quiet)
			sym_rt_log(WHO, "repository: model %s %s in %.3f s", name, rm->waiting_load ? "loaded" : "unloaded",
				   took);
		reply_done(rm->waiting);
	} else {
		sym_rt_warn(WHO, "repository: model %s: %s", name, why);
		reply_error(rm->waiting, status, "model '%s': %s", name, why);
	}
	rm->waiting = (struct reply){ 0 };
}

/* Moves the models under way one step on: a drained model is unloaded from
 * every backend holding it; an unloaded one is UNAVAILABLE once no backend
 * holds it; a loading one is READY once every connected backend that is to
 * hold it does (or, when one could not, is unloaded again). Called when a
 * backend reports a load or unload, and on the check timer (drains end as
 * the scheduler's last requests of the model are answered). */
/* Whether a connected backend holds model m in state h; h == HOLD_NO asks
 * whether any connected backend holds it in any other state. */
static bool holding(const struct schedd *s, size_t m, int h)
{
	size_t n = s->c->exp.nmodels;
	for (int g = 0; g < s->c->backends_max; g++) {
		uint8_t x = s->holds[(size_t)g * n + m];
		if (s->be[g].conn && (h == HOLD_NO ? x != HOLD_NO : x == h))
			return true;
	}
	return false;
}

static void repo_step(struct schedd *s)
{
	if (!s->repo_busy)
		return;
	size_t n = s->c->exp.nmodels;
	for (size_t m = 0; m < n; m++) {
		struct rmodel *rm = &s->rm[m];
		if (rm->state == MS_DRAINING && !s->live[m])
			set_state(s, (int)m, MS_UNLOADING);
		if (rm->state == MS_LOADING && !holding(s, m, HOLD_LOADING)) {
			if (rm->failed) { /* unloaded from those that did load it (below), then answered with the reason */
				s->repo_failed++;
				set_state(s, (int)m, MS_UNLOADING);
			} else {
				rm->reason[0] = '\0';
				/* its arrival statistics afresh: the time it was out is not a gap between its requests */
				if (sym_sched_restart_arrivals(s->sched, (int)m)) {
					poll_sched(s); /* the queue was full: room, then once more */
					if (sym_sched_restart_arrivals(s->sched, (int)m))
						sym_rt_warn(WHO, "model %s: its arrival statistics were not restarted (the "
							    "scheduler's queue is full); its batches may stay small for a while",
							    s->c->exp.models[m].name);
				}
				set_state(s, (int)m, MS_READY);
				repo_answer(s, (int)m, 200, NULL);
			}
		}
		if (rm->state == MS_UNLOADING) {
			for (int g = 0; g < s->c->backends_max; g++)
				if (s->be[g].conn && s->holds[(size_t)g * n + m] == HOLD_YES)
					send_load(s, g, (int)m, SYM_WIRE_UNLOAD);
			if (!holding(s, m, HOLD_NO)) {
				set_state(s, (int)m, MS_UNAVAILABLE);
				repo_answer(s, (int)m, rm->failed ? 400 : 200, rm->failed ? rm->reason : NULL);
				rm->failed = false;
			}
		}
	}
}

static int model_named(const struct schedd *s, const char *name, size_t len)
{
	for (size_t m = 0; m < s->c->exp.nmodels; m++)
		if (strlen(s->c->exp.models[m].name) == len && !strncmp(s->c->exp.models[m].name, name, len))
			return (int)m;
	return -1;
}

/* POST /v2/repository/index: every model, its version and state (and why,
 * when a load failed). */
static void repo_index(struct schedd *s, struct sym_http_req *r)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t m = 0; a && m < s->c->exp.nmodels; m++) {
		if (sym_experiment_slot_empty(&s->c->exp, m))
			continue;
		cJSON *o = cJSON_CreateObject();
		char v[16];
		snprintf(v, sizeof(v), "%d", s->c->models[m].version);
		cJSON_AddStringToObject(o, "name", s->c->exp.models[m].name);
		cJSON_AddStringToObject(o, "version", v);
		cJSON_AddStringToObject(o, "state", mstate_name(s->rm[m].state));
		if (s->rm[m].state == MS_UNAVAILABLE)
			cJSON_AddStringToObject(o, "reason", s->rm[m].reason[0] ? s->rm[m].reason : "unloaded");
		cJSON_AddItemToArray(a, o);
	}
	sym_http_reply_json(r, 200, a);
}

/* A load of a model schedd does not serve: one added to the repository
 * since it started. It takes a spare slot (runtime.repository_slots): read
 * from its directory (sym_cluster_fill_slot), given to the scheduler, and
 * announced to every frontend and backend (MODEL), which read it from
 * theirs; then it loads as any unloaded model does. The slot is the
 * model's until schedd restarts. Returns the slot, or -1 answered (404 not
 * in the repository, 400 a bad model, 409 no slot left). */
static int fill_slot(struct schedd *s, struct reply r, const char *name, size_t nl)
{
	struct sym_cluster *c = s->c;
	struct sym_experiment *e = &c->exp;
	char nm[64];
	snprintf(nm, sizeof(nm), "%.*s", (int)(nl < sizeof(nm) - 1 ? nl : sizeof(nm) - 1), name);
	if (!e->model_slots || nl >= sizeof(nm)) {
		reply_error(r, 404, "unknown model '%.*s'%s", (int)(nl > 200 ? 200 : nl), name,
			    e->model_repository[0] ? " (no spare model slot: runtime.repository_slots is 0, so a "
						     "model added to the repository needs a restart)"
						   : "");
		return -1;
	}
	size_t m = e->slot0;
	while (m < e->nmodels && !sym_experiment_slot_empty(e, m))
		m++;
	if (m == e->nmodels) {
		reply_error(r, 409, "model '%s': every spare model slot is taken (runtime.repository_slots %d); "
				    "restart schedd (and the other processes) to serve more models",
			    nm, e->model_slots);
		return -1;
	}
	char err[512];
	bool capped;
	int rc = sym_cluster_fill_slot(c, m, nm, &capped, err, sizeof(err));
	if (rc) {
		sym_rt_warn(WHO, "repository: model %s: %s", nm, err);
		reply_error(r, rc == -ENOENT ? 404 : 400, "%s", err);
		return -1;
	}
	struct sym_model_cfg *mc = &s->mc[m];
	mc->slo = sym_ms(e->model_slo_ms[m]);
	mc->rate_hint = 0;
	mc->name = e->models[m].name;
	mc->part = s->nsub ? s->sc.model_part[m] : 0; /* the slot's (an unloaded model does not move at epochs) */
	if ((rc = sym_sched_set_model(s->sched, (int)m, mc))) {
		sym_rt_warn(WHO, "repository: model %s: the scheduler's queue is full (%s)", nm, strerror(-rc));
		sym_cluster_clear_slot(c, m);
		reply_error(r, 503, "model '%s': the scheduler is busy; try again", nm);
		return -1;
	}
	s->rm[m].reason[0] = '\0';
	int left = 0;
	for (size_t k = e->slot0; k < e->nmodels; k++)
		left += sym_experiment_slot_empty(e, k);
	if (!s->o->quiet)
		sym_rt_log(WHO, "repository: model %s takes spare slot %zu (%d of %d left)%s", nm, m - e->slot0, left,
			   e->model_slots,
			   capped ? "; its batches capped at the largest the slots were sized for" : "");
	for (int f = 0; f < c->nfrontends; f++)
		if (s->fe[f].conn)
			send_model(s, s->fe[f].conn, m);
	for (int g = 0; g < c->backends_max; g++)
		if (s->be[g].conn)
			send_model(s, s->be[g].conn, m);
	return (int)m;
}

/* Whether a load or unload may go on: schedd has repository tokens (else 403)
 * and the caller gave one of them (else 401, with HTTP's challenge). The
 * token: tok (tl bytes; NULL: none) for gRPC, the HTTP request's header. */
static bool repo_authorized(struct schedd *s, struct reply r, const char *tok, size_t tl, bool load)
{
	if (!s->admin.n) {
		s->repo_refused++;
		reply_error(r, 403, "the model repository's load and unload need bearer tokens: set "
			   "runtime.repository_token_file on schedd");
		return false;
	}
	if (r.hr ? sym_tokens_http_ok(&s->admin, r.hr) : tok && sym_tokens_ok(&s->admin, tok, tl))
		return true;
	s->repo_refused++;
	sym_rt_log_limited(&s->refusal_log, WHO, "repository: a %s without a valid bearer token, refused",
			   load ? "load" : "unload");
	if (r.hr) {
		static const char body[] = "{\"error\":\"the model repository's load and unload need a valid bearer "
					   "token of repository_token_file: Authorization: Bearer TOKEN\"}";
		const char *hdr[] = { "WWW-Authenticate", "Bearer realm=\"symphony\"", NULL };
		sym_http_reply(r.hr, 401, "application/json", body, sizeof(body) - 1, hdr);
	} else {
		reply_error(r, 401, "the model repository's load and unload need a valid bearer token of "
			   "repository_token_file: metadata authorization: Bearer TOKEN");
	}
	return false;
}

/* POST /v2/repository/models/NAME/load and .../unload. Answered once done:
 * an unload after the scheduler served the model's requests in hand and
 * every backend unloaded it; a load once every connected backend that is to
 * hold it loaded it (400 with the backend's reason when one could not). */
static void repo_call(struct schedd *s, struct reply r, const char *name, size_t nl, bool load)
{
	int m = model_named(s, name, nl);
	if (s->draining) {
		reply_error(r, 503, "model '%.*s': schedd is shutting down", (int)(nl > 200 ? 200 : nl), name);
		return;
	}
	if (m < 0 && (!load || (m = fill_slot(s, r, name, nl)) < 0)) {
		if (!load)
			reply_error(r, 404, "unknown model '%.*s'", (int)(nl > 200 ? 200 : nl), name);
		return;
	}
	struct rmodel *rm = &s->rm[m];
	if (reply_set(rm->waiting) || rm->state == MS_DRAINING || rm->state == MS_UNLOADING || rm->state == MS_LOADING) {
		reply_error(r, 409, "model '%s': a %s is under way", s->c->exp.models[m].name,
			    rm->state == MS_LOADING ? "load" : "unload");
		return;
	}
	if ((load && rm->state == MS_READY) || (!load && rm->state == MS_UNAVAILABLE)) {
		reply_done(r); /* it is so already */
		return;
	}
	if (s->nsub && s->move_to && s->move_to[m] >= 0) {
		reply_error(r, 409, "model '%s' is moving between sub-clusters; try again once it has moved",
			    s->c->exp.models[m].name);
		return;
	}
	rm->waiting = r;
	rm->waiting_load = load;
	rm->since = sym_monotonic_ns();
	rm->failed = false;
	rm->reason[0] = '\0';
	if (!s->o->quiet)
		sym_rt_log(WHO, "repository: %s model %s", load ? "loading" : "unloading", s->c->exp.models[m].name);
	if (!load) {
		s->repo_unloads++;
		set_state(s, m, MS_DRAINING);
	} else {
		s->repo_loads++;
		set_state(s, m, MS_LOADING);
		size_t n = s->c->exp.nmodels;
		for (int g = 0; g < s->c->backends_max; g++)
			if (s->be[g].conn && s->holds[(size_t)g * n + (size_t)m] == HOLD_NO && should_hold(s, (size_t)m, g))
				send_load(s, g, m, SYM_WIRE_LOAD);
	}
	repo_step(s);
}

/* The repository API's paths (KServe v2), on schedd's HTTP port. */
static void repo_http(struct schedd *s, struct sym_http_req *r, const char *path)
{
	if (strcmp(sym_http_method(r), "POST")) {
		sym_http_reply_method(r, "POST");
		return;
	}
	if (!strcmp(path, "/v2/repository/index")) {
		repo_index(s, r);
		return;
	}
	static const char pre[] = "/v2/repository/models/";
	const char *name = path + sizeof(pre) - 1, *slash = strncmp(path, pre, sizeof(pre) - 1) ? NULL : strchr(name, '/');
	if (slash && (!strcmp(slash, "/load") || !strcmp(slash, "/unload"))) {
		struct reply rp = { .hr = r };
		if (repo_authorized(s, rp, NULL, 0, !strcmp(slash, "/load")))
			repo_call(s, rp, name, (size_t)(slash - name), !strcmp(slash, "/load"));
		return;
	}
	sym_http_reply_error(r, 404, "no such endpoint: POST %s (the repository API: /v2/repository/index, "
				     "/v2/repository/models/NAME/load, /v2/repository/models/NAME/unload)", path);
}

/* ---- epochs: moving models between sub-clusters ---- */

/* Model m loads on part `to`'s connected GPUs that lack it (move_check goes
 * on once they have reported). */
static void move_load(struct schedd *s, int m, int to)
{
	size_t n = s->c->exp.nmodels;
	s->move_to[m] = to;
	s->move_phase[m] = 1;
	for (int g = 0; g < s->c->backends_max; g++)
		if (s->sc.gpu_part[g] == to && s->be[g].conn && s->holds[(size_t)g * n + (size_t)m] == HOLD_NO)
			send_load(s, g, m, SYM_WIRE_LOAD);
	move_check(s, m);
}

static void move_start(struct schedd *s, int m, int to)
{
	s->moving++;
	s->moves_started++;
	note_action(s, ACT_MODEL_MOVED, m, s->sc.model_part[m], to);
	move_load(s, m, to);
}

/* A stalled move (control/moves.h): the core holds model m's requests (no
 * part); on_moved then has its old part unload it (phase 4), and moves_next
 * has its new part load it once the deferred moves are done. */
static void stall_start(struct schedd *s, int m, int to)
{
	s->move_to[m] = to;
	s->move_phase[m] = 3;
	s->stalled[m] = 1;
	s->moving++;
	s->moves_started++;
	note_action(s, ACT_MODEL_MOVED, m, s->sc.model_part[m], to);
	if (sym_sched_set_part(s->sched, m, -1)) {
		poll_sched(s); /* the queue was full: room, then once more */
		if (sym_sched_set_part(s->sched, m, -1)) {
			sym_rt_warn(WHO, "model %s: the scheduler did not take its stalled move; it stays",
				    s->c->exp.models[m].name);
			s->moves_failed++;
			move_end(s, m);
		}
	}
}

static void retries_start(struct schedd *s);

/* The epoch's next stage of moves once the one before is done (control/moves.h):
 * after the smooth moves, the stalled ones are held and unloaded from their old
 * parts, then the deferred ones start (their loads follow those unloads on
 * each backend's connection); after those, the stalled ones load in their new
 * parts. Then the moves that failed for want of room are tried again, then the
 * GPUs move. A model unloaded through the repository API since stays. */
static void moves_next(struct schedd *s)
{
	if (s->epoch_starting)
		return;
	size_t n = s->c->exp.nmodels;
	bool others = false, holding = false, held = false, pending_stall = false, pending_defer = false;
	for (size_t m = 0; m < n; m++) {
		if (s->move_to[m] >= 0) {
			others |= !s->stalled[m] || s->move_phase[m] <= 2;
			holding |= s->stalled[m] && s->move_phase[m] == 3;
			held |= s->stalled[m] && s->move_phase[m] == 4;
		}
		if (s->defer_to[m] >= 0 && s->rm[m].state != MS_READY) { /* (unloaded since: it stays) */
			s->defer_to[m] = -1;
			s->stalled[m] = 0;
		}
		pending_stall |= s->defer_to[m] >= 0 && s->stalled[m];
		pending_defer |= s->defer_to[m] >= 0 && !s->stalled[m];
	}
	if (others)
		return;
	if (pending_stall || pending_defer) {
		for (size_t m = 0; m < n && pending_stall; m++)
			if (s->defer_to[m] >= 0 && s->stalled[m]) {
				int to = s->defer_to[m];
				s->defer_to[m] = -1;
				stall_start(s, (int)m, to);
			}
		for (size_t m = 0; m < n; m++)
			holding |= s->move_to[m] >= 0 && s->stalled[m] && s->move_phase[m] == 3;
		if (holding)
			return; /* (on_moved comes back here once each is held and unloaded) */
		for (size_t m = 0; m < n; m++)
			if (s->defer_to[m] >= 0) {
				int to = s->defer_to[m];
				s->defer_to[m] = -1;
				move_start(s, (int)m, to);
			}
		moves_next(s); /* (the deferred moves may all have ended at once) */
		return;
	}
	if (holding)
		return;
	if (held) {
		for (size_t m = 0; m < n; m++)
			if (s->move_to[m] >= 0 && s->stalled[m] && s->move_phase[m] == 4)
				move_load(s, (int)m, s->move_to[m]);
		return;
	}
	if (!s->moving)
		retries_start(s);
}

/* The moves that failed for want of room are tried once more when the
 * others are done (their unloads freed memory: the simulator's deferred move). */
static void move_end(struct schedd *s, int m)
{
	s->move_to[m] = -1;
	s->move_phase[m] = 0;
	s->stalled[m] = 0;
	s->moving--;
	moves_next(s);
}

static void retries_start(struct schedd *s)
{
	for (size_t k = 0; k < s->c->exp.nmodels; k++)
		if (s->retry_to[k] >= 0) {
			int to = s->retry_to[k];
			s->retry_to[k] = -2; /* tried again: not a third time */
			s->moves_retried++;
			move_start(s, (int)k, to);
		}
	if (!s->moving && s->gmove_due)
		gmoves_start(s);
}

/* Model m's move, loading on its new part: once every GPU of that part that
 * is connected reported, it switches (if one holds it online) or is given up
 * (a load failed: the part's GPUs that loaded it unload it again). */
static void move_check(struct schedd *s, int m)
{
	if (s->move_phase[m] != 1)
		return;
	size_t n = s->c->exp.nmodels;
	int to = s->move_to[m], serving = 0;
	bool failed = false;
	if (s->stalled[m] == 2) { /* going back: its old part loads it once its unloads there are done */
		for (int g = 0; g < s->c->backends_max; g++)
			if (s->sc.gpu_part[g] == to && s->be[g].conn && s->holds[(size_t)g * n + (size_t)m] == HOLD_UNLOADING)
				return; /* (loaded_report comes back) */
		s->stalled[m] = 3;
		for (int g = 0; g < s->c->backends_max; g++)
			if (s->sc.gpu_part[g] == to && s->be[g].conn && s->holds[(size_t)g * n + (size_t)m] == HOLD_NO)
				send_load(s, g, m, SYM_WIRE_LOAD);
	}
	for (int g = 0; g < s->c->backends_max; g++) {
		if (s->sc.gpu_part[g] != to || !s->be[g].conn)
			continue;
		uint8_t h = s->holds[(size_t)g * n + (size_t)m];
		if (h == HOLD_LOADING)
			return; /* not yet */
		failed |= h == HOLD_NO;
		serving += h == HOLD_YES && !s->be[g].loading && !s->be[g].suspect && !s->be[g].leaving;
	}
	const char *name = s->c->exp.models[m].name;
	int from = s->sc.model_part[m];
	if ((failed || !serving) && s->stalled[m] == 1) {
		/* its old part unloaded it already (a stalled move): back there, held meanwhile */
		for (int g = 0; g < s->c->backends_max; g++)
			if (s->sc.gpu_part[g] == to && s->be[g].conn && s->holds[(size_t)g * n + (size_t)m] == HOLD_YES)
				send_load(s, g, m, SYM_WIRE_UNLOAD);
		s->moves_failed++;
		s->stalled[m] = 2;
		s->move_to[m] = from;
		sym_rt_warn(WHO, "model %s: its stalled move failed (%s sub-cluster %d); it goes back to sub-cluster %d",
			    name, failed ? "a GPU could not load it in" : "no GPU serves yet in", to, from);
		move_check(s, m);
		return;
	}
	if ((failed || !serving) && s->stalled[m]) { /* going back failed too */
		sym_rt_error(WHO, "model %s: no GPU of sub-cluster %d could load it back after its failed move: its "
			     "requests wait (and expire) until the repository API loads it again", name, from);
		move_end(s, m);
		return;
	}
	if (failed || !serving) {
		for (int g = 0; g < s->c->backends_max; g++)
			if (s->sc.gpu_part[g] == to && s->be[g].conn && s->holds[(size_t)g * n + (size_t)m] == HOLD_YES)
				send_load(s, g, m, SYM_WIRE_UNLOAD);
		s->moves_failed++;
		bool again = s->retry_to[m] == -1 && failed;
		sym_rt_log(WHO, "model %s stays in sub-cluster %d: %s sub-cluster %d%s", name, s->sc.model_part[m],
			   failed ? "a GPU could not load it in" : "no GPU serves yet in", to,
			   again ? "; tried again when this epoch's other moves are done" : "");
		if (again)
			s->retry_to[m] = to;
		move_end(s, m);
		return;
	}
	if (sym_sched_set_part(s->sched, m, to)) {
		poll_sched(s); /* the queue was full: room, then once more */
		if (sym_sched_set_part(s->sched, m, to)) {
			sym_rt_warn(WHO, "model %s: the scheduler did not take its move; it stays", name);
			s->moves_failed++;
			move_end(s, m);
			return;
		}
	}
	s->move_phase[m] = 2;
}

/* The core switched model m (every plan of it to its old part's GPUs has
 * been sent): the old part's GPUs unload it (each after its batches of m). */
static void on_moved(void *ctx, int m, int rc)
{
	struct schedd *s = ctx;
	if (!s->move_to || (s->move_phase[m] != 2 && s->move_phase[m] != 3))
		return;
	size_t n = s->c->exp.nmodels;
	int from = s->sc.model_part[m], to = s->move_to[m];
	if (s->move_phase[m] == 3) { /* stalled: held now; its old part unloads it, its new one loads it */
		if (rc) {
			sym_rt_warn(WHO, "model %s: the scheduler refused to hold it (%s); it stays",
				    s->c->exp.models[m].name, strerror(-rc));
			s->moves_failed++;
			move_end(s, m);
			return;
		}
		s->move_phase[m] = 4; /* (part_holds: its old part holds it no more) */
		for (int g = 0; g < s->c->backends_max; g++)
			if (s->sc.gpu_part[g] == from && s->be[g].conn && s->holds[(size_t)g * n + (size_t)m] == HOLD_YES)
				send_load(s, g, m, SYM_WIRE_UNLOAD);
		if (!s->o->quiet)
			sym_rt_log(WHO, "model %s: stalled move to sub-cluster %d: its requests wait while sub-cluster %d "
				   "unloads it and %d loads it", s->c->exp.models[m].name, to, from, to);
		moves_next(s);
		return;
	}
	if (rc) {
		sym_rt_warn(WHO, "model %s: the scheduler refused its move (%s); it stays", s->c->exp.models[m].name,
			    strerror(-rc));
		s->moves_failed++;
		move_end(s, m);
		return;
	}
	s->sc.model_part[m] = to;
	if (from == to) { /* (a failed stalled move, back where it was) */
		move_end(s, m);
		return;
	}
	for (int g = 0; g < s->c->backends_max; g++)
		if (s->sc.gpu_part[g] == from && s->be[g].conn && s->holds[(size_t)g * n + (size_t)m] == HOLD_YES)
			send_load(s, g, m, SYM_WIRE_UNLOAD);
	s->moves_done++;
	if (s->o->verbose)
		sym_rt_log(WHO, "model %s moved from sub-cluster %d to %d", s->c->exp.models[m].name, from, to);
	move_end(s, m);
}

/* Every partition.epoch_s: the partition from the rates of the last epoch
 * (the simulator's sym_partition_local, under R_max, S_max and C_max), and
 * the moves it asks for. An epoch whose moves are still under way is skipped. */
static void on_epoch(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	struct schedd *s = ctx;
	struct sym_experiment *e = &s->c->exp;
	size_t n = e->nmodels;
	sym_time now = sym_monotonic_ns();
	double secs = (double)(now - s->epoch_start) / 1e9;
	s->epoch_start = now;
	s->nepochs++;
	double *rates = calloc(n, sizeof(double)), *held = calloc((size_t)s->nsub, sizeof(double));
	bool *in_service = calloc((size_t)e->gpus, sizeof(bool)), *fixed = calloc(n, sizeof(bool));
	int *assign = calloc(n, sizeof(int));
	enum sym_move *mv = calloc(n, sizeof(*mv));
	if (!rates || !held || !in_service || !fixed || !assign || !mv) {
		sym_rt_warn(WHO, "epoch %d: out of memory; the models and GPUs stay", s->nepochs);
		goto out;
	}
	for (size_t m = 0; m < n; m++) {
		rates[m] = secs > 0 ? (double)(s->ms[m].requests - s->ep_base[m]) / secs : 0;
		s->ep_base[m] = s->ms[m].requests;
		if (s->retry_to[m] == -2)
			s->retry_to[m] = -1;
		fixed[m] = s->rm[m].state == MS_UNAVAILABLE; /* (unloaded: nothing to move, no memory held) */
	}
	if (s->standby || !s->confirmed) /* only the active scheduler decides */
		goto out;
	/* the GPUs split are those with a backend that stays (the others keep their part: a GPU
	 * without a backend is no capacity to plan with) */
	for (int g = 0; g < e->gpus; g++)
		in_service[g] = s->be[g].conn && !s->be[g].leaving;
	/* the epoch's step (experiment/subcluster.h, the simulator's too): the new assignment at
	 * the measured rates, the GPUs for it, each staying where it can, and how each model moves
	 * by memory (control/moves.h): smooth ones now, deferred and stalled ones once those are
	 * done; the GPUs move once the models have */
	struct sym_epoch_step st = { .rates = rates, .secs = secs, .model_part = s->sc.model_part,
				     .gpu_part = s->sc.gpu_part, .in_service = in_service, .fixed = fixed,
				     .busy = s->moving || s->gmoving || s->gmove_due, .assign = assign,
				     .gpu_new = s->gpu_to, .move = mv, .held_mb = held };
	char err[256];
	int prc = sym_subclusters_epoch(e, &st, err, sizeof(err));
	if (prc) {
		sym_rt_log(WHO, "epoch %d: %s; the models and GPUs stay", s->nepochs, prc < 0 ? "out of memory" : err);
		goto out;
	}
	s->last_rate_imb = st.rate_imbalance;
	s->last_mem_imb = st.mem_imbalance;
	if (!s->o->quiet)
		sym_rt_log(WHO, "epoch %d: rates over %.1f s; %d models move, then %d GPUs; imbalance rate %.4f, static "
			   "memory %.4f", s->nepochs, secs, st.models_moving, st.gpus_moving, st.rate_imbalance,
			   st.mem_imbalance);
	s->epoch_starting = true;
	for (size_t m = 0; m < n; m++) {
		if (mv[m] == SYM_MOVE_SMOOTH) {
			move_start(s, (int)m, assign[m]);
		} else if (mv[m] != SYM_MOVE_NONE) {
			s->defer_to[m] = assign[m];
			s->stalled[m] = mv[m] == SYM_MOVE_STALLED;
			s->moves_deferred += mv[m] == SYM_MOVE_DEFERRED;
			s->moves_stalled += mv[m] == SYM_MOVE_STALLED;
			if (!s->o->quiet)
				sym_rt_log(WHO, "epoch %d: model %s's move to sub-cluster %d is %s (memory): after the "
					   "others", s->nepochs, e->models[m].name, assign[m], sym_move_name(mv[m]));
		}
	}
	s->epoch_starting = false;
	/* (due only now: a model move ending at once above must not start the GPU moves while the
	 * others are being started) */
	s->gmove_due = st.gpus_moving > 0;
	moves_next(s);
out:
	free(rates);
	free(held);
	free(in_service);
	free(fixed);
	free(assign);
	free(mv);
}

static void on_hello(struct schedd *s, struct sym_fab_conn *conn, struct link *l, const struct sym_msg *m)
{
	char why[200];
	int id = (int)m->u.hello.id;
	if (l->role) {
		refuse_hello(s, conn, "a second hello on one connection");
		return;
	}
	/* a member says hello as the role and id its credential proved, or not at all (both
	 * schedulers hold schedd credentials: the first address's id 0, the standby's 1) */
	int prole = 0, want_role = m->u.hello.role == SYM_ROLE_STANDBY ? SYM_ROLE_SCHEDD : (int)m->u.hello.role;
	uint32_t pid = 0;
	if (s->o->cred && (!sym_fab_conn_peer(conn, &prole, &pid, NULL) || prole != want_role || pid != m->u.hello.id)) {
		s->refused_hellos++;
		snprintf(why, sizeof(why), "refused a hello as %s %u from %s %u: a member speaks as its credential's "
			 "role and id", sym_cred_role_name(want_role), m->u.hello.id, sym_cred_role_name(prole), pid);
		refuse_hello(s, conn, why);
		return;
	}
	if (m->u.hello.role == SYM_ROLE_SCHEDD || m->u.hello.role == SYM_ROLE_STANDBY) {
		if (!s->c->has_standby || id != 1 - s->me) {
			refuse_hello(s, conn, !s->c->has_standby ? "a scheduler's hello, and this cluster has no standby"
								 : "a scheduler's hello with this scheduler's own id");
			return;
		}
		link_accepted(s, conn, l, m);
		return;
	}
	const char *rn = m->u.hello.role == SYM_ROLE_FRONTEND ? "frontend" : "backend";
	const struct sym_hostport *o = other_addr(s);
	if (s->standby) {
		char msg[400];
		snprintf(msg, sizeof(msg), "a %s's hello: this scheduler stands by (term %u; the other one is at %s:%s)", rn,
			 s->term, o->host, o->port);
		refuse_hello(s, conn, msg);
		return;
	}
	if (!s->confirmed) {
		char msg[400];
		s->fenced_hellos++;
		snprintf(msg, sizeof(msg), "a %s's hello: this scheduler (term %u) is not confirmed as the active one yet; "
			 "it is checking with the scheduler at %s:%s", rn, s->term, o->host, o->port);
		refuse_hello(s, conn, msg);
		return;
	}
	if (m->u.hello.role == SYM_ROLE_FRONTEND) {
		if (id >= s->c->nfrontends) {
			snprintf(why, sizeof(why), "hello from frontend %d, the cluster has %d", id, s->c->nfrontends);
			refuse_hello(s, conn, why);
			return;
		}
		if (s->fe[id].conn) {
			refuse_identity(s, conn, "frontend", id);
			return;
		}
		l->role = SYM_ROLE_FRONTEND;
		l->id = id;
		s->fe[id].conn = conn;
		s->fe[id].last_seen = sym_monotonic_ns();
		s->fe[id].ever = true;
		if (!s->o->quiet)
			sym_rt_log(WHO, "frontend %d registered", id);
		send_slots(s, conn);
		send_status(s, id);
		check_taken_over(s);
		return;
	}
	if (m->u.hello.role != SYM_ROLE_BACKEND) {
		refuse_hello(s, conn, "hello from a role that does not talk to schedd");
		return;
	}
	const struct sym_experiment *e = &s->c->exp;
	if (id >= s->c->backends_max) {
		snprintf(why, sizeof(why), "hello from backend %d, the cluster takes ids 0..%d (backends_max)", id,
			 s->c->backends_max - 1);
		refuse_hello(s, conn, why);
		return;
	}
	const char *kind = e->kinds[e->gpu_kind[id]].name;
	if (strcmp(m->u.hello.kind, kind) || m->u.hello.nmodels > e->nmodels) {
		snprintf(why, sizeof(why), "backend %d says kind '%s' with %u models, the cluster has '%s' with %zu",
			 id, m->u.hello.kind, m->u.hello.nmodels, kind, e->nmodels);
		refuse_hello(s, conn, why);
		return;
	}
	for (uint16_t i = 0; i < m->u.hello.nmodels; i++) {
		uint16_t mi = sym_wire_hello_model(m, i);
		if (mi >= e->nmodels || (i && mi <= sym_wire_hello_model(m, i - 1))) {
			refuse_hello(s, conn, "a backend's models must be ids of the cluster's, in increasing order");
			return;
		}
	}
	if (s->be[id].conn) {
		refuse_identity(s, conn, "backend", id);
		return;
	}
	if (m->u.hello.part && m->u.hello.part > s->nsub) {
		snprintf(why, sizeof(why), "backend %d asks for sub-cluster %d, the cluster has %d", id, m->u.hello.part - 1,
			 s->nsub);
		refuse_hello(s, conn, why);
		return;
	}
	if (m->u.hello.part && s->sc.gpu_part[id] != m->u.hello.part - 1) {
		/* started for another sub-cluster (the autoscaler's choice, control/scale.h's sym_scale_pick): its
		 * GPU, without a backend until now, joins it (an epoch's pending move of it is void) */
		if (!s->o->quiet)
			sym_rt_log(WHO, "GPU %d joins sub-cluster %d (its backend was started for it), from %d", id,
				   m->u.hello.part - 1, s->sc.gpu_part[id]);
		gmove_assign(s, id, m->u.hello.part - 1);
		s->gpu_to[id] = m->u.hello.part - 1;
	}
	l->role = SYM_ROLE_BACKEND;
	l->id = id;
	struct peer *p = &s->be[id];
	p->conn = conn;
	p->last_seen = p->hello_at = sym_monotonic_ns();
	p->ever = true;
	note_action(s, ACT_JOINED, id, s->nsub ? s->sc.gpu_part[id] : 0, s->nsub ? s->sc.gpu_part[id] : 0);
	send_slots(s, conn);
	if (!reconcile_models(s, id, m)) {
		if (!s->o->quiet)
			sym_rt_log(WHO, "backend %d (%s) registered: loading or unloading %d models (sub-cluster %d; GPU %d "
				   "offline until they are loaded)", id, kind, p->pending, s->nsub ? s->sc.gpu_part[id] : 0,
				   id);
		check_taken_over(s);
		return;
	}
	gpu_up(s, id);
	if (!s->o->quiet)
		sym_rt_log(WHO, "backend %d (%s) registered: GPU %d online", id, kind, id);
	send_status(s, -1);
	check_taken_over(s);
}

/* A frontend's request metadata: into the request table and the core. */
static void on_meta(struct schedd *s, struct sym_fab_conn *conn, const struct sym_msg *m, sym_time now)
{
	char why[256];
	if (m->u.meta.model >= s->c->exp.nmodels) {
		s->bad_peers++;
		snprintf(why, sizeof(why), "metadata for model %u, the cluster has %zu", m->u.meta.model,
			 s->c->exp.nmodels);
		sym_rt_warn(WHO, "%s", why);
		drop_conn(s, conn, why);
		return;
	}
	if (s->draining) { /* sent before the frontend heard we are shutting down */
		struct sreq tmp = { .frontend = m->u.meta.frontend, .fe_req = m->u.meta.req_id };
		send_drop(s, &tmp, SYM_WIRE_UNAVAILABLE);
		return;
	}
	if (s->rm[m->u.meta.model].state >= MS_UNLOADING) { /* sent before the frontend heard it was unloaded */
		struct sreq tmp = { .frontend = m->u.meta.frontend, .fe_req = m->u.meta.req_id };
		s->repo_not_loaded++;
		send_drop(s, &tmp, SYM_WIRE_NOT_LOADED);
		return;
	}
	uint32_t i = req_alloc(s);
	if (i == UINT32_MAX) {
		sym_rt_error(WHO, "out of memory for a request; dropping it");
		return;
	}
	struct sreq *r = &s->reqs[i];
	r->used = true;
	r->model = m->u.meta.model;
	s->live[r->model]++;
	r->frontend = m->u.meta.frontend;
	r->fe_req = m->u.meta.req_id;
	r->addr = m->u.meta.addr;
	r->key = m->u.meta.key;
	r->len = m->u.meta.len;
	r->arrival = now;
	s->metas++;
	s->ms[r->model].requests++;
	struct sym_sched_req q = { .id = (uint64_t)r->gen << 32 | i, .model = r->model, .arrival = now,
				   .deadline = now + m->u.meta.budget_ns };
	submit(s, &q);
}

/* Backend g's completion: the end of its oldest batch. */
static void on_done(struct schedd *s, struct sym_fab_conn *conn, int g, const struct sym_msg *m, sym_time now)
{
	char why[256];
	struct gpu *gp = &s->gpus[g];
	struct gbatch *gb = &gp->q[gp->qh];
	if (!gp->qn || gb->batch != m->u.done.batch_id) {
		snprintf(why, sizeof(why), "completion of batch %" PRIu64 ", which is not the next it runs",
			 m->u.done.batch_id);
		s->bad_peers++;
		drop_conn(s, conn, why);
		return;
	}
	bool rejected = m->u.done.status == SYM_WIRE_REJECTED;
	sym_time end = now - m->u.done.ago_ns, start = end - m->u.done.ran_ns;
	if (!rejected)
		sym_hist_record(&s->done_lag, now > gb->finish ? now - gb->finish : 0);
	if (rejected) {
		/* the backend answered its requests' frontends */
		s->drops_by[SYM_DROP_REJECTED] += (uint64_t)gb->n;
	}
	for (int i = 0; i < gb->n; i++) {
		if (rejected) {
			int model = s->reqs[gb->reqs[i]].model;
			s->ms[model].drops[SYM_DROP_REJECTED]++;
			iv_good(s, model, -1);
			iv_bad(s, model, 1);
		}
		req_free(s, gb->reqs[i]);
	}
	gb->n = 0;
	gp->qh = (gp->qh + 1) % GPU_Q;
	gp->qn--;
	s->dones++;
	gpu_done(s, g, start, end, rejected);
	pop_empty(s, g, now);
	if (s->be[g].back && !gp->qn)
		backend_heard(s, g);
	if (s->be[g].gmove)
		gmove_load(s, g); /* once its batches are done it loads its new part's models */
}

/* A peer leaving: a backend's GPU gets no new plan, and the backend learns that
 * everything for it has been sent (our bye comes after its last plan); it
 * finishes those and closes. A frontend has answered all it held. */
static void on_bye(struct schedd *s, struct sym_fab_conn *conn, struct link *l)
{
	s->leaves++;
	if (l->role == SYM_ROLE_FRONTEND) {
		s->fe[l->id].leaving = true;
		if (!s->o->quiet)
			sym_rt_log(WHO, "frontend %d is leaving", l->id);
		return;
	}
	backend_quiet(s, l->id, true, "is leaving");
	struct sym_msg m = { .type = SYM_MSG_BYE };
	m.u.bye.role = SYM_ROLE_SCHEDD;
	sd_send(s, conn, &m, NULL, NULL);
}

static void on_msg(struct schedd *s, struct sym_fab_conn *conn, const uint8_t *data, size_t len)
{
	struct link *l = sym_fab_conn_user(conn);
	struct sym_msg m;
	char why[256];
	long n = sym_wire_decode(data, len, &m, why, sizeof(why));
	if (n <= 0 || (size_t)n != len) {
		s->bad_peers++;
		char msg[320];
		snprintf(msg, sizeof(msg), "malformed message: %s",
			 n < 0 ? why : n == 0 ? "truncated" : "trailing bytes after the message");
		sym_rt_log_limited(&s->msg_log, WHO, "%s", msg);
		drop_conn(s, conn, msg);
		return;
	}
	sym_time now = sym_monotonic_ns();
	if (l->role == SYM_ROLE_SCHEDD || l->role == SYM_ROLE_STANDBY) { /* the other scheduler */
		if (conn == s->link[1].conn)
			on_link_msg(s, 1, &m);
		else
			drop_conn(s, conn, "a replaced connection of the other scheduler");
		return;
	}
	bool sched_hello = m.type == SYM_MSG_HELLO &&
			   (m.u.hello.role == SYM_ROLE_SCHEDD || m.u.hello.role == SYM_ROLE_STANDBY);
	if (m.term > s->term && !sched_hello) {
		/* a frontend or backend has seen a term above ours: another scheduler is (or was) active */
		char who[96];
		snprintf(who, sizeof(who), "a %s says it has seen",
			 l->role == SYM_ROLE_FRONTEND ? "frontend"
			 : l->role == SYM_ROLE_BACKEND ? "backend"
			 : m.type == SYM_MSG_HELLO && m.u.hello.role == SYM_ROLE_FRONTEND ? "frontend's hello"
			 : m.type == SYM_MSG_HELLO && m.u.hello.role == SYM_ROLE_BACKEND ? "backend's hello"
											  : "peer's message");
		saw_term(s, m.term, who);
		if (s->standby && l->role)
			return; /* stepped down: its connection is closed */
	}
	if (m.type == SYM_MSG_HELLO) {
		on_hello(s, conn, l, &m);
		return;
	}
	if (l->role == SYM_ROLE_FRONTEND)
		s->fe[l->id].last_seen = now;
	else if (l->role == SYM_ROLE_BACKEND)
		s->be[l->id].last_seen = now;
	if (l->role == SYM_ROLE_BACKEND)
		backend_heard(s, l->id);
	if (m.type == SYM_MSG_HEARTBEAT && l->role)
		return; /* alive; they hear ours on our own timer (on_beat), however many they manage to send */
	if (m.type == SYM_MSG_BYE && l->role && m.u.bye.role == l->role && (int)m.u.bye.id == l->id) {
		on_bye(s, conn, l);
		return;
	}
	if (m.type == SYM_MSG_META && l->role == SYM_ROLE_FRONTEND && (int)m.u.meta.frontend == l->id) {
		on_meta(s, conn, &m, now);
		return;
	}
	if (m.type == SYM_MSG_DONE && l->role == SYM_ROLE_BACKEND && (int)m.u.done.gpu == l->id) {
		on_done(s, conn, l->id, &m, now);
		return;
	}
	if (m.type == SYM_MSG_LOADED && l->role == SYM_ROLE_BACKEND) {
		on_loaded(s, conn, l->id, &m);
		return;
	}
	s->bad_peers++;
	snprintf(why, sizeof(why), "unexpected %s message from %s", sym_wire_type_name(m.type),
		 l->role == SYM_ROLE_FRONTEND ? "a frontend" : l->role == SYM_ROLE_BACKEND ? "a backend"
											  : "an unregistered peer");
	sym_rt_log_limited(&s->msg_log, WHO, "%s", why);
	drop_conn(s, conn, why);
}

/* ---- /metrics ---- */

/* Closes the autoscaling interval that ended by now. The bad requests are
 * those schedd dropped or lost to a failed backend; late answers are
 * counted by the frontends (symphony_requests_total{outcome="late"}). The
 * idle fraction is over the GPU-seconds in service (core/autoscale.h,
 * sym_autoscale_advice_served, as the simulator measures it): a GPU that
 * joined late in the interval counts for the part it served. */
static void interval_roll(struct schedd *s, sym_time now)
{
	if (now < s->iv_start + s->iv_len)
		return;
	serving_tick(s, now);
	/* (at least 1, as the advice asks: a standby, or a cluster with no GPU serving, has 0) */
	int online = gpus_online(s);
	sym_autoscale_advice_served(s->iv_good, s->iv_bad, s->iv_busy_s, s->iv_serving_s, online > 0 ? online : 1,
				    s->c->exp.advice_threshold, &s->advice);
	for (int j = 0; s->iv_part && j < s->nsub; j++) {
		struct iv_part *x = &s->iv_part[j];
		online = 0;
		for (int g = 0; g < s->c->backends_max; g++)
			online += s->sc.gpu_part[g] == j && gpu_serving(s, g);
		sym_autoscale_advice_served(x->good, x->bad, x->busy_s, x->serving_s, online > 0 ? online : 1,
					    s->c->exp.advice_threshold, &x->advice);
		x->closed_serving_s = x->serving_s;
		x->good = x->bad = 0;
		x->busy_s = x->serving_s = 0;
	}
	s->advice_set = true;
	if (s->nrolls < (int)(sizeof(s->rolls) / sizeof(s->rolls[0]))) {
		int adds = s->iv_part ? 0 : s->advice.add, L = s->iv_part ? s->nsub : 1;
		for (int j = 0; s->iv_part && j < s->nsub; j++)
			adds += s->iv_part[j].advice.add;
		if (!s->nrolls) /* (the record is optional: without memory, schedd.json leaves it out) */
			s->roll_parts = calloc(sizeof(s->rolls) / sizeof(s->rolls[0]) * (size_t)L, sizeof(*s->roll_parts));
		for (int j = 0; s->roll_parts && j < L; j++) {
			const struct sym_autoscale *a = s->iv_part ? &s->iv_part[j].advice : &s->advice;
			int on = 0;
			for (int g = 0; g < s->c->backends_max; g++)
				on += (!s->iv_part || s->sc.gpu_part[g] == j) && gpu_serving(s, g);
			s->roll_parts[s->nrolls * L + j] = (struct roll_part){ .serving = on, .add = a->add,
									.release = a->release,
									.busy = 1 - a->idle_fraction,
									.bad = a->bad_rate,
									.serving_s = s->iv_part ? s->iv_part[j].closed_serving_s
												: s->iv_serving_s };
		}
		s->roll_adds[s->nrolls] = adds;
		s->rolls[s->nrolls++] = now;
	}
	/* the next interval closes on the grid (start + k interval_s), as the simulator's decisions fall
	 * (autoscale.phase_s): the heartbeat that closes one comes a few ms after its moment, and
	 * restarting from it drifted the advice 6-10 ms a second against the load; after a stall of
	 * more than an interval the grid starts again now */
	s->iv_start += s->iv_len;
	if (now >= s->iv_start + s->iv_len)
		s->iv_start = now;
	s->iv_good = s->iv_bad = 0;
	s->iv_busy_s = s->iv_serving_s = 0;
}

/* Seconds until the open advice interval closes (0 when it is due: the next heartbeat closes it). */
static double next_advice_s(const struct schedd *s)
{
	sym_time now = sym_monotonic_ns(), close = s->iv_start + s->iv_len;
	return close > now ? (double)(close - now) / 1e9 : 0;
}

static void per_model(struct schedd *s, struct sym_buf *b, const char *name, const char *type, const char *help,
		      size_t field)
{
	const struct sym_experiment *e = &s->c->exp;
	sym_prom_family(b, name, type, help);
	for (size_t m = 0; m < e->nmodels; m++) {
		const char *l[] = { "model", e->profiles[m].name, NULL };
		if (!sym_experiment_slot_empty(e, m))
			sym_prom_sample(b, name, l, (double)*(const uint64_t *)((const char *)&s->ms[m] + field));
	}
}

/* A metric without labels: its family and its one sample. */
struct prom_scalar {
	const char *name, *type, *help;
	double v;
};

static void prom_scalars(struct sym_buf *b, const struct prom_scalar *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		sym_prom_family(b, x[i].name, x[i].type, x[i].help);
		sym_prom_sample(b, x[i].name, NULL, x[i].v);
	}
}

static void write_metrics(void *ctx, struct sym_buf *b)
{
	struct schedd *s = ctx;
	const struct sym_experiment *e = &s->c->exp;
	per_model(s, b, "symphony_scheduler_requests_total", "counter", "Request metadata received, by model",
		  offsetof(struct sd_model, requests));
	per_model(s, b, "symphony_scheduler_batches_total", "counter", "Batches sent to backends, by model",
		  offsetof(struct sd_model, batches));
	per_model(s, b, "symphony_scheduler_batched_requests_total", "counter", "Requests in the batches sent, by model",
		  offsetof(struct sd_model, batched));
	sym_prom_family(b, "symphony_scheduler_dropped_total", "counter",
			"Requests dropped to protect the SLO, by model and reason (expired, early)");
	for (size_t m = 0; m < e->nmodels; m++)
		for (int k = 0; k < SYM_DROP_NREASONS && !sym_experiment_slot_empty(e, m); k++) {
			const char *l[] = { "model", e->profiles[m].name, "reason",
					    sym_drop_reason_name((enum sym_drop_reason)k), NULL };
			sym_prom_sample(b, "symphony_scheduler_dropped_total", l, (double)s->ms[m].drops[k]);
		}
	sym_prom_family(b, "symphony_queueing_delay_seconds", "histogram",
			"Time from a request's arrival at schedd to its batch's planned start, by model");
	for (size_t m = 0; m < e->nmodels; m++) {
		const char *l[] = { "model", e->profiles[m].name, NULL };
		if (sym_experiment_slot_empty(e, m))
			continue;
		sym_prom_hist(b, "symphony_queueing_delay_seconds", l, &s->ms[m].queueing, sym_prom_latency_bounds,
			      sym_prom_latency_nbounds);
	}
	sym_prom_family(b, "symphony_batch_size", "histogram", "Sizes of the batches sent");
	uint64_t cum = 0, sum = 0;
	for (int k = 1; k <= s->maxb; k++)
		sum += (uint64_t)k * s->batch_counts[k];
	for (int bound = 1, k = 1; bound <= 1024; bound *= 2) {
		for (; k <= bound && k <= s->maxb; k++)
			cum += s->batch_counts[k];
		char le[16];
		snprintf(le, sizeof(le), "%d", bound);
		const char *l[] = { "le", le, NULL };
		sym_prom_sample(b, "symphony_batch_size_bucket", l, (double)cum);
	}
	const char *inf[] = { "le", "+Inf", NULL };
	sym_prom_sample(b, "symphony_batch_size_bucket", inf, (double)s->plans);
	sym_prom_sample(b, "symphony_batch_size_sum", NULL, (double)sum);
	sym_prom_sample(b, "symphony_batch_size_count", NULL, (double)s->plans);
	sym_prom_family(b, "symphony_gpu_busy_seconds_total", "counter",
			"Planned GPU time of the batches sent to each GPU (its rate is the GPU's busy fraction)");
	int up = 0;
	for (int g = 0; g < s->c->backends_max; g++) {
		char id[16];
		snprintf(id, sizeof(id), "%d", g);
		const char *l[] = { "gpu", id, NULL };
		sym_prom_sample(b, "symphony_gpu_busy_seconds_total", l, s->gpu_busy_s[g]);
	}
	up = gpus_online(s);
	sym_prom_family(b, "symphony_backend_plans_total", "counter", "Plans (batches) sent to each backend");
	for (int g = 0; g < s->c->backends_max; g++) {
		char id[16];
		snprintf(id, sizeof(id), "%d", g);
		const char *l[] = { "backend", id, NULL };
		sym_prom_sample(b, "symphony_backend_plans_total", l, (double)s->gpu_plans[g]);
	}
	sym_prom_family(b, "symphony_backend_up", "gauge",
			"Per backend and state: 1 in its state (up, suspect: silent, no new plans; leaving; down)");
	static const char *const states[] = { "up", "suspect", "leaving", "down" };
	for (int g = 0; g < s->c->backends_max; g++) {
		const struct peer *p = &s->be[g];
		int st = !p->conn ? 3 : p->leaving ? 2 : p->suspect ? 1 : 0;
		char id[16];
		snprintf(id, sizeof(id), "%d", g);
		for (int k = 0; k < 4; k++) {
			const char *l[] = { "backend", id, "state", states[k], NULL };
			sym_prom_sample(b, "symphony_backend_up", l, k == st);
		}
	}
	const struct prom_scalar roles[] = {
		{ "symphony_gpus_online", "gauge",
		  "GPUs whose backend is registered with schedd, not suspect, not leaving and not loading its models", up },
		{ "symphony_scheduler_active", "gauge",
		  "1 when this scheduler acts as the active one and is confirmed (no other can be): it takes frontends "
		  "and backends",
		  active_now(s) },
		{ "symphony_scheduler_standby", "gauge", "1 when this scheduler stands by", s->standby },
		{ "symphony_scheduler_term", "gauge",
		  "The scheduler term: acting as the active one, its own; standing by, the highest seen", s->term },
		{ "symphony_scheduler_takeovers_total", "counter", "Times this scheduler took over as the active one",
		  (double)s->takeovers },
		{ "symphony_scheduler_step_downs_total", "counter",
		  "Times this scheduler stepped down, having seen a higher term", (double)s->step_downs },
	};
	prom_scalars(b, roles, sizeof(roles) / sizeof(roles[0]));
	if (s->nsub) {
		int loading = 0;
		for (int g = 0; g < s->c->backends_max; g++)
			loading += s->be[g].conn && s->be[g].loading;
		const struct prom_scalar parts[] = {
			{ "symphony_gpus_loading", "gauge",
			  "GPUs registered and still loading their sub-cluster's models (offline until done)", loading },
			{ "symphony_model_loads_total", "counter", "Models the backends loaded on schedd's command",
			  (double)s->loads },
			{ "symphony_model_load_failures_total", "counter", "Loads a backend reported failed",
			  (double)s->load_failures },
		};
		prom_scalars(b, parts, sizeof(parts) / sizeof(parts[0]));
	}
	sym_prom_family(b, "symphony_repository_calls_total", "counter",
			"Model repository API calls: loads and unloads begun, loads that failed, calls refused "
			"(no or a wrong bearer token); and requests dropped because their model was unloaded");
	const struct {
		const char *what;
		uint64_t n;
	} rc[] = { { "load", s->repo_loads }, { "unload", s->repo_unloads }, { "load_failed", s->repo_failed },
		   { "refused", s->repo_refused }, { "request_not_loaded", s->repo_not_loaded } };
	for (size_t i = 0; i < sizeof(rc) / sizeof(rc[0]); i++) {
		const char *l[] = { "call", rc[i].what, NULL };
		sym_prom_sample(b, "symphony_repository_calls_total", l, (double)rc[i].n);
	}
	sym_prom_family(b, "symphony_model_ready", "gauge",
			"Per model: 1 when it takes requests (loaded), 0 while unloaded, unloading or loading");
	for (size_t m = 0; m < s->c->exp.nmodels; m++) {
		const char *l[] = { "model", s->c->exp.models[m].name, NULL };
		if (!sym_experiment_slot_empty(&s->c->exp, m))
			sym_prom_sample(b, "symphony_model_ready", l, s->rm[m].state == MS_READY);
	}
	sym_prom_family(b, "symphony_scheduler_events_total", "counter",
			"Scheduler events: arrivals, dispatches, completions, drops, failures, rejected messages");
	const struct {
		const char *ev;
		uint64_t n;
	} evs[] = { { "arrival", s->metas },
		    { "dispatch", s->plans },
		    { "completion", s->dones },
		    { "drop", s->drops_by[SYM_DROP_EXPIRED] + s->drops_by[SYM_DROP_EARLY] + s->drops_by[SYM_DROP_REJECTED] },
		    { "dispatch_ahead", s->planned_ahead },
		    { "failed_request", s->failed_reqs },
		    { "backend_failure", s->be_failures },
		    { "frontend_failure", s->fe_failures },
		    { "rejected_message", s->bad_peers },
		    { "refused_hello", s->refused_hellos },
		    { "refused_unconfirmed", s->fenced_hellos } };
	for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		const char *l[] = { "event", evs[i].ev, NULL };
		sym_prom_sample(b, "symphony_scheduler_events_total", l, (double)evs[i].n);
	}
	struct sym_sched_stats st;
	sym_sched_stats(s->sched, &st);
	sym_prom_family(b, "symphony_scheduler_timer_lag_seconds", "gauge",
			"How late the scheduler's timers fired since the start: p99 and max");
	const char *p99[] = { "stat", "p99", NULL }, *pmax[] = { "stat", "max", NULL };
	sym_prom_sample(b, "symphony_scheduler_timer_lag_seconds", p99, (double)st.lag_p99 / 1e9);
	sym_prom_sample(b, "symphony_scheduler_timer_lag_seconds", pmax, (double)st.lag_max / 1e9);
	const struct prom_scalar advice[] = {
		{ "symphony_autoscale_bad_rate", "gauge",
		  "Last interval: requests dropped or failed at schedd over those that arrived (the add signal)",
		  s->advice_set ? s->advice.bad_rate : 0 },
		{ "symphony_autoscale_idle_fraction", "gauge",
		  "Last interval: 1 - planned busy GPU time / (GPUs x interval) (the release signal)",
		  s->advice_set ? s->advice.idle_fraction : 1 },
		{ "symphony_autoscale_add_gpus", "gauge", "Advice from the last interval: GPUs to add",
		  s->advice_set ? s->advice.add : 0 },
		{ "symphony_autoscale_release_gpus", "gauge", "Advice from the last interval: GPUs that can be released",
		  s->advice_set ? s->advice.release : 0 },
		{ "symphony_autoscale_interval_seconds", "gauge", "Length of the autoscaling interval",
		  (double)s->iv_len / 1e9 },
		{ "symphony_autoscale_next_advice_seconds", "gauge",
		  "Seconds until the current interval closes and its advice replaces the last (an autoscaler "
		  "reads it then)", next_advice_s(s) },
	};
	prom_scalars(b, advice, sizeof(advice) / sizeof(advice[0]));
	/* per sub-cluster (none: the whole cluster is sub-cluster 0), for an autoscaler adding a part's GPUs */
	static const char *const fam[][2] = {
		{ "symphony_subcluster_autoscale_add_gpus", "Advice per sub-cluster: GPUs to add" },
		{ "symphony_subcluster_autoscale_release_gpus", "Advice per sub-cluster: GPUs that can be released" },
		{ "symphony_subcluster_autoscale_bad_rate", "Per sub-cluster: the last interval's bad rate" },
		{ "symphony_subcluster_autoscale_idle_fraction", "Per sub-cluster: the last interval's idle fraction" },
		{ "symphony_subcluster_autoscale_desired_gpus",
		  "Per sub-cluster: the GPUs the advice asks for (serving + add - release, at least 1): a "
		  "HorizontalPodAutoscaler's AverageValue-1 target (deploy/)" } };
	int L = s->iv_part ? s->nsub : 1;
	for (int f = 0; f < 5; f++) {
		sym_prom_family(b, fam[f][0], "gauge", fam[f][1]);
		for (int j = 0; j < L; j++) {
			const struct sym_autoscale *a = s->iv_part ? &s->iv_part[j].advice : &s->advice;
			char sj[16];
			snprintf(sj, sizeof(sj), "%d", j);
			const char *l[] = { "subcluster", sj, NULL };
			int serving = 0;
			for (int g = 0; g < s->c->backends_max; g++)
				serving += (s->nsub ? s->sc.gpu_part[g] == j : 1) && gpu_serving(s, g);
			int desired = serving + (s->advice_set ? a->add - a->release : 0);
			double v = f == 4	   ? (desired > 1 ? desired : 1)
				   : !s->advice_set ? (f == 3 ? 1 : 0)
				   : f == 0	   ? a->add
				   : f == 1	   ? a->release
				   : f == 2	   ? a->bad_rate
						   : a->idle_fraction;
			sym_prom_sample(b, fam[f][0], l, v);
		}
	}
	sym_prom_family(b, "symphony_backend_serving", "gauge",
			"Per backend id the cluster takes (0..backends_max-1): 1 when its GPU serves (registered, not suspect, "
			"leaving or loading), with its sub-cluster; a GPU moving between sub-clusters counts in the one it "
			"moves to");
	for (int g = 0; g < s->c->backends_max; g++) {
		char sg[16], sj[16];
		bool moving = s->be[g].gmove && s->be[g].conn;
		snprintf(sg, sizeof(sg), "%d", g);
		snprintf(sj, sizeof(sj), "%d", !s->nsub ? 0 : moving ? s->gpu_to[g] : s->sc.gpu_part[g]);
		const char *l[] = { "backend", sg, "subcluster", sj, NULL };
		sym_prom_sample(b, "symphony_backend_serving", l, gpu_serving(s, g) || moving);
	}
}

/* GET /v2/health/ready (sym_rt_set_ready): the active scheduler, confirmed
 * as the only one, not shutting down, with at least one GPU online. A
 * standby is live, not ready (a probe keeps traffic on the active one). */
static bool is_ready(void *ctx, char *why, size_t len)
{
	struct schedd *s = ctx;
	const struct sym_hostport *o = other_addr(s);
	int online = gpus_online(s);
	if (s->standby)
		snprintf(why, len, "this scheduler stands by (the active one is at %s:%s)", o ? o->host : "?",
			 o ? o->port : "?");
	else if (!s->confirmed)
		snprintf(why, len, "not confirmed as the active scheduler yet");
	else if (s->draining)
		snprintf(why, len, "shutting down");
	else if (!online)
		snprintf(why, len, "no GPU online (of %d backends)", s->c->backends_max);
	return !s->standby && s->confirmed && !s->draining && online > 0;
}

/* schedd serves /metrics, the liveness and readiness probes and the model repository API. */
/* A reload (SIGHUP; POST /v2/admin/reload): the cluster file read again
 * (sym_rt_reload_cluster); the SLOs that changed go to the scheduler, the
 * HTTP limits to the server, and the repository's tokens are read again.
 * Returns as sym_rt_reload_cluster. */
static int reload(struct schedd *s, char *done, size_t donelen, char *err, size_t errlen)
{
	size_t n = s->c->exp.slot0;
	double *old = malloc((n ? n : 1) * sizeof(double));
	if (!old)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	memcpy(old, s->c->exp.model_slo_ms, n * sizeof(double));
	int rc = sym_rt_reload_cluster(s->c, s->o, done, donelen, err, errlen);
	for (size_t m = 0; rc > 0 && m < n; m++)
		if (old[m] != s->c->exp.model_slo_ms[m] &&
		    sym_sched_set_slo(s->sched, (int)m, sym_ms(s->c->exp.model_slo_ms[m])))
			sym_rt_warn(WHO, "reload: the scheduler's queue is full: model %s keeps its SLO of %g ms there",
				    s->c->exp.models[m].name, old[m]);
	free(old);
	if (rc > 0)
		sym_http_set_limits(s->http, 0, s->c->http_body_budget, (unsigned)s->c->client_min_rate);
	if (rc >= 0 && s->c->repository_token_file[0]) {
		char terr[900];
		if (sym_tokens_load(&s->admin, s->c->repository_token_file, terr, sizeof(terr)))
			sym_rt_warn(WHO, "reload: repository tokens: %s; the %zu in use stay", terr, s->admin.n);
	} else if (rc >= 0 && s->admin.n) {
		sym_tokens_free(&s->admin); /* no token file any more: the repository's load and unload are refused */
	}
	return rc;
}

static void on_reload(void *ctx)
{
	struct schedd *s = ctx;
	char done[1500], err[1500];
	int rc = reload(s, done, sizeof(done), err, sizeof(err));
	if (rc < 0)
		sym_rt_warn(WHO, "SIGHUP: reload refused, nothing changed: %s", err);
	else
		sym_rt_log(WHO, "SIGHUP: reloaded %s: %s", s->o->config_path, rc ? done : "no change");
}

/* POST /v2/admin/reload, with a bearer token of repository_token_file: a
 * reload; 200 {"reloaded": true, "changes": ...}, or 409 naming what needs a
 * restart (nothing changed). */
static void admin_http(void *ctx, struct sym_http_req *r)
{
	struct schedd *s = ctx;
	const char *path = sym_http_path(r);
	if (strcmp(path, "/v2/admin/reload")) {
		sym_http_reply_error(r, 404, "no such endpoint: %s (the admin API: POST /v2/admin/reload)", path);
		return;
	}
	if (strcmp(sym_http_method(r), "POST")) {
		sym_http_reply_method(r, "POST");
		return;
	}
	if (!s->admin.n) {
		sym_http_reply_error(r, 403, "the admin API needs bearer tokens: set runtime.repository_token_file on schedd");
		return;
	}
	if (!sym_tokens_http_ok(&s->admin, r)) {
		static const char body[] = "{\"error\":\"the admin API needs a valid bearer token of repository_token_file: "
					   "Authorization: Bearer TOKEN\"}";
		const char *hdr[] = { "WWW-Authenticate", "Bearer realm=\"symphony\"", NULL };
		sym_rt_log_limited(&s->refusal_log, WHO, "admin: a reload without a valid bearer token, refused");
		sym_http_reply(r, 401, "application/json", body, sizeof(body) - 1, hdr);
		return;
	}
	char done[1500], err[1500];
	int rc = reload(s, done, sizeof(done), err, sizeof(err));
	if (rc < 0) {
		sym_rt_warn(WHO, "admin: reload refused, nothing changed: %s", err);
		sym_http_reply_error(r, 409, "%s", err);
		return;
	}
	sym_rt_log(WHO, "admin: reloaded %s: %s", s->o->config_path, rc ? done : "no change");
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "reloaded", true);
	cJSON_AddStringToObject(o, "changes", rc ? done : "");
	sym_http_reply_json(r, 200, o);
}

static void on_http(void *ctx, struct sym_http_req *r)
{
	struct schedd *s = ctx;
	check_stall(s);
	const char *path = sym_http_path(r);
	if (!strncmp(path, "/v2/admin/", 10)) {
		admin_http(s, r);
		return;
	}
	if (!strncmp(path, "/v2/repository/", 15)) {
		if (s->standby)
			sym_http_reply_error(r, 503, "this scheduler stands by: the repository API is the active one's");
		else
			repo_http(s, r, path);
		return;
	}
	interval_roll(s, sym_monotonic_ns());
	sym_rt_serve_metrics(r, write_metrics, s);
}

static void check_silence(struct schedd *s, sym_time now)
{
	char why[96];
	for (int b = 0; b < s->c->backends_max; b++) {
		if (!s->be[b].conn)
			continue;
		sym_time quiet = now - s->be[b].last_seen;
		snprintf(why, sizeof(why), "silent for %.1f ms", (double)quiet / 1e6);
		if (quiet > s->failure_ns)
			backend_down(s, b, why);
		else if (quiet > s->suspect_ns)
			backend_quiet(s, b, false, why);
	}
	for (int f = 0; f < s->c->nfrontends; f++)
		if (s->fe[f].conn && now - s->fe[f].last_seen > s->failure_ns) {
			snprintf(why, sizeof(why), "silent for %.1f ms", (double)(now - s->fe[f].last_seen) / 1e6);
			frontend_down(s, f, why);
		}
	/* acting as the active one: a standby that stopped sending our heartbeats back (standing by, the
	 * active one's silence is the takeover's business) */
	for (int k = 0; k < 2 && !s->standby; k++)
		if (s->link[k].conn && s->link[k].role && now - s->link[k].seen > s->failure_ns) {
			snprintf(why, sizeof(why), "silent for %.1f ms", (double)(now - s->link[k].seen) / 1e6);
			link_closed(s, k, false, why);
		}
}

static int write_stats(struct schedd *s, const char *path)
{
	struct sym_sched_stats st;
	sym_sched_stats(s->sched, &st);
	cJSON *o = cJSON_CreateObject();
	char buf[128];
	cJSON_AddStringToObject(o, "program", "symphony");
	cJSON_AddStringToObject(o, "version", SYM_VERSION);
	cJSON_AddStringToObject(o, "commit", sym_build_commit());
	cJSON_AddItemToObject(o, "provenance", sym_provenance_json(true));
	cJSON_AddStringToObject(o, "command", "schedd");
	cJSON_AddNumberToObject(o, "seed", (double)s->c->exp.seed);
	cJSON_AddStringToObject(o, "policy", sym_policy_format(&s->c->exp.policy, buf, sizeof(buf)));
	cJSON *cfg = sym_experiment_to_json(&s->c->exp);
	cJSON_AddItemToObject(cfg, "runtime", sym_cluster_runtime_json(s->c));
	cJSON_AddItemToObject(o, "config", cfg);
	cJSON_AddNumberToObject(o, "requests", (double)s->metas);
	cJSON_AddNumberToObject(o, "batches", (double)s->plans);
	cJSON_AddNumberToObject(o, "batched_requests", (double)s->planned_reqs);
	cJSON_AddNumberToObject(o, "batches_planned_ahead", (double)s->planned_ahead);
	cJSON_AddNumberToObject(o, "completions", (double)s->dones);
	cJSON *by = cJSON_AddObjectToObject(o, "dropped_by_reason");
	for (int k = 0; k < SYM_DROP_NREASONS; k++)
		cJSON_AddNumberToObject(by, sym_drop_reason_name((enum sym_drop_reason)k), (double)s->drops_by[k]);
	cJSON_AddNumberToObject(o, "failed_requests", (double)s->failed_reqs);
	cJSON_AddNumberToObject(o, "orphaned_requests", (double)s->orphans);
	cJSON_AddNumberToObject(o, "backend_failures", (double)s->be_failures);
	cJSON *rolls = cJSON_AddArrayToObject(o, "advice_intervals_closed_ns");
	for (int i = 0; rolls && i < s->nrolls; i++)
		cJSON_AddItemToArray(rolls, cJSON_CreateNumber((double)s->rolls[i]));
	cJSON *radds = cJSON_AddArrayToObject(o, "advice_intervals_add_gpus");
	for (int i = 0; radds && i < s->nrolls; i++)
		cJSON_AddItemToArray(radds, cJSON_CreateNumber(s->roll_adds[i]));
	if (s->roll_parts) { /* per interval, its advice per sub-cluster (one entry without them) */
		int L = s->iv_part ? s->nsub : 1;
		cJSON *rp = cJSON_AddArrayToObject(o, "advice_intervals_parts");
		for (int i = 0; rp && i < s->nrolls; i++) {
			cJSON *x = cJSON_CreateObject(), *on = cJSON_AddArrayToObject(x, "gpus_serving"),
			      *busy = cJSON_AddArrayToObject(x, "busy_fraction"), *bad = cJSON_AddArrayToObject(x, "bad_rate"),
			      *add = cJSON_AddArrayToObject(x, "add"), *rel = cJSON_AddArrayToObject(x, "release"),
			      *gs = cJSON_AddArrayToObject(x, "serving_gpu_s");
			for (int j = 0; j < L; j++) {
				const struct roll_part *q = &s->roll_parts[i * L + j];
				cJSON_AddItemToArray(on, cJSON_CreateNumber(q->serving));
				cJSON_AddItemToArray(busy, cJSON_CreateNumber(q->busy));
				cJSON_AddItemToArray(bad, cJSON_CreateNumber(q->bad));
				cJSON_AddItemToArray(add, cJSON_CreateNumber(q->add));
				cJSON_AddItemToArray(rel, cJSON_CreateNumber(q->release));
				cJSON_AddItemToArray(gs, cJSON_CreateNumber(q->serving_s));
			}
			cJSON_AddItemToArray(rp, x);
		}
	}
	cJSON *acts = cJSON_AddArrayToObject(o, "control_actions");
	for (int i = 0; acts && i < s->nacts; i++) {
		cJSON *a = cJSON_CreateObject();
		cJSON_AddNumberToObject(a, "t_ns", (double)s->acts[i].t);
		cJSON_AddStringToObject(a, "action", act_names[s->acts[i].kind]);
		cJSON_AddNumberToObject(a, s->acts[i].kind == ACT_MODEL_MOVED ? "model" : s->acts[i].kind == ACT_GPU_MOVED ?
					   "gpu" : "backend", s->acts[i].id);
		cJSON_AddNumberToObject(a, "from", s->acts[i].from);
		cJSON_AddNumberToObject(a, "to", s->acts[i].to);
		cJSON_AddItemToArray(acts, a);
	}
	cJSON_AddNumberToObject(o, "control_actions_not_listed", (double)s->acts_over);
	cJSON *ups = cJSON_AddArrayToObject(o, "gpus_first_online_ns");
	for (int g = 0; ups && g < s->c->backends_max; g++)
		cJSON_AddItemToArray(ups, cJSON_CreateNumber((double)s->first_up[g]));
	if (s->nsub) {
		cJSON *subs = cJSON_AddArrayToObject(o, "subclusters");
		for (int j = 0; j < s->nsub; j++) {
			cJSON *x = cJSON_CreateObject();
			cJSON *ms = cJSON_AddArrayToObject(x, "models"), *gs = cJSON_AddArrayToObject(x, "gpus");
			for (size_t m = 0; m < s->c->exp.nmodels; m++)
				if (s->sc.model_part[m] == j && !sym_experiment_slot_empty(&s->c->exp, m))
					cJSON_AddItemToArray(ms, cJSON_CreateNumber((double)m));
			for (int g = 0; g < s->c->exp.gpus; g++)
				if (s->sc.gpu_part[g] == j)
					cJSON_AddItemToArray(gs, cJSON_CreateNumber(g));
			cJSON_AddItemToArray(subs, x);
		}
		cJSON *ld = cJSON_AddObjectToObject(o, "model_loading");
		cJSON_AddNumberToObject(ld, "loads", (double)s->loads);
		cJSON_AddNumberToObject(ld, "unloads", (double)s->unloads);
		cJSON_AddNumberToObject(ld, "failures", (double)s->load_failures);
		cJSON_AddNumberToObject(ld, "load_seconds", s->load_s);
		cJSON *ep = cJSON_AddObjectToObject(o, "epochs");
		cJSON_AddNumberToObject(ep, "epoch_s", s->c->exp.partition.epoch_s);
		cJSON_AddNumberToObject(ep, "epochs", s->nepochs);
		cJSON_AddNumberToObject(ep, "first_epoch_ns", (double)s->first_epoch);
		cJSON_AddNumberToObject(ep, "moves_started", (double)s->moves_started);
		cJSON_AddNumberToObject(ep, "moves_done", (double)s->moves_done);
		cJSON_AddNumberToObject(ep, "moves_failed", (double)s->moves_failed);
		cJSON_AddNumberToObject(ep, "moves_retried", (double)s->moves_retried);
		cJSON_AddNumberToObject(ep, "moves_deferred", (double)s->moves_deferred);
		cJSON_AddNumberToObject(ep, "moves_stalled", (double)s->moves_stalled);
		cJSON_AddNumberToObject(ep, "gpus_moved", (double)s->gpus_moved);
		cJSON_AddNumberToObject(ep, "rate_imbalance", s->last_rate_imb);
		cJSON_AddNumberToObject(ep, "mem_imbalance", s->last_mem_imb);
	}
	cJSON_AddNumberToObject(o, "frontend_failures", (double)s->fe_failures);
	cJSON_AddNumberToObject(o, "rejected_messages", (double)s->bad_peers);
	cJSON_AddNumberToObject(o, "refused_hellos", (double)s->refused_hellos);
	cJSON_AddNumberToObject(o, "suspect_backends", (double)s->suspects);
	cJSON_AddNumberToObject(o, "suspects_back_online", (double)s->recovered);
	if (s->o->standby) {
		cJSON *fo = cJSON_AddObjectToObject(o, "failover");
		cJSON_AddBoolToObject(fo, "took_over", s->took_over != 0);
		cJSON_AddNumberToObject(fo, "detected_after_ms", s->took_over ? s->detect_ms : 0);
		cJSON_AddNumberToObject(fo, "all_registered_after_ms", s->registered_ms);
	}
	/* fencing; the spans it was the confirmed active scheduler, on CLOCK_MONOTONIC (seconds, the host's
	 * clock: comparable between processes of one host) */
	cJSON *fe = cJSON_AddObjectToObject(o, "fencing");
	cJSON_AddNumberToObject(fe, "term", s->term);
	cJSON_AddBoolToObject(fe, "active", active_now(s));
	cJSON_AddNumberToObject(fe, "takeovers", (double)s->takeovers);
	cJSON_AddNumberToObject(fe, "step_downs", (double)s->step_downs);
	cJSON_AddNumberToObject(fe, "refused_unconfirmed", (double)s->fenced_hellos);
	cJSON *spans = cJSON_AddArrayToObject(fe, "active_spans_s");
	for (int i = 0; i <= s->n_active_iv; i++) {
		if (i == s->n_active_iv && !s->active_since)
			break;
		sym_time from = i < s->n_active_iv ? s->active_iv[i][0] : s->active_since;
		sym_time to = i < s->n_active_iv ? s->active_iv[i][1] : sym_monotonic_ns();
		cJSON *sp = cJSON_CreateArray();
		cJSON_AddItemToArray(sp, cJSON_CreateNumber((double)from / 1e9));
		cJSON_AddItemToArray(sp, cJSON_CreateNumber((double)to / 1e9));
		cJSON_AddItemToArray(spans, sp);
	}
	cJSON_AddNumberToObject(o, "peers_left", (double)s->leaves);
	cJSON_AddNumberToObject(o, "refused_fabric_peers", (double)sym_fab_refused(s->fab, NULL, 0));
	cJSON_AddNumberToObject(o, "scheduler_lag_p99_us", (double)st.lag_p99 / 1e3);
	cJSON_AddNumberToObject(o, "scheduler_lag_max_us", (double)st.lag_max / 1e3);
	/* how long after a batch's planned finish its GPU was free to the scheduler
	 * again (start lateness plus the completion's trip): network.done_ms models it */
	cJSON_AddNumberToObject(o, "completion_lag_p50_us", (double)sym_hist_quantile(&s->done_lag, 0.5) / 1e3);
	cJSON_AddNumberToObject(o, "completion_lag_p99_us", (double)sym_hist_quantile(&s->done_lag, 0.99) / 1e3);
	cJSON_AddNumberToObject(o, "completion_lag_max_us", (double)s->done_lag.max / 1e3);
	cJSON *hist = cJSON_AddObjectToObject(o, "batch_size_histogram");
	for (int b = 1; b <= s->maxb; b++)
		if (s->batch_counts[b]) {
			char key[16];
			snprintf(key, sizeof(key), "%d", b);
			cJSON_AddNumberToObject(hist, key, (double)s->batch_counts[b]);
		}
	char err[512];
	int rc = sym_write_json(path, o, err, sizeof(err));
	if (rc)
		sym_rt_error(WHO, "%s", err);
	cJSON_Delete(o);
	return rc;
}

/* Sub-clusters (symphony-centralized-orchestration.md, Section 4.7): parts
 * of the scheduler's core (core/parts.h, as in the simulator), each pair of a
 * part and a GPU kind with its own ranker (a thread of its own with threads
 * >= 2) and its own GPUs; a model runs only on its part's GPUs, on every kind
 * there, with that kind's profile. The assignment is the configuration's
 * partition.assign, or Appendix A's MILP solved here at the configured rate
 * (within partition.time_limit_s). */
static int setup_subclusters(struct schedd *s, char *err, size_t errlen)
{
	struct sym_experiment *e = &s->c->exp;
	int L = e->partition.subclusters;
	int rc;
	if (!e->partition.assign) {
		sym_rt_log(WHO, "partition: solving Appendix A's MILP for %zu models in %d sub-clusters (at most %g s)",
			   e->nmodels, L, e->partition.time_limit_s);
		if ((rc = sym_subclusters_solve(e, sym_experiment_scale(e), err, errlen)))
			return rc;
	}
	/* the GPUs split are those of the backends started with the cluster (`backends`), the others
	 * taking the parts they would join first, as the simulator's autoscaler does (start_gpus); too
	 * few of them for a GPU a part: all */
	rc = sym_subclusters_build(e, sym_experiment_scale(e), s->c->nbackends, &s->sc, err, errlen);
	if (rc == -EINVAL && s->c->nbackends < e->gpus)
		rc = sym_subclusters_build(e, sym_experiment_scale(e), e->gpus, &s->sc, err, errlen);
	if (rc)
		return rc;
	s->nsub = L;
	s->iv_part = calloc((size_t)L, sizeof(*s->iv_part));
	s->holds = calloc((size_t)e->gpus * e->nmodels, 1);
	s->ep_base = calloc(e->nmodels, sizeof(*s->ep_base));
	s->move_to = malloc(e->nmodels * sizeof(*s->move_to));
	s->retry_to = malloc(e->nmodels * sizeof(*s->retry_to));
	s->defer_to = malloc(e->nmodels * sizeof(*s->defer_to));
	s->stalled = calloc(e->nmodels, 1);
	s->move_phase = calloc(e->nmodels, 1);
	s->gpu_to = calloc((size_t)e->gpus, sizeof(*s->gpu_to));
	if (!s->iv_part || !s->holds || !s->ep_base || !s->move_to || !s->retry_to || !s->defer_to || !s->stalled ||
	    !s->move_phase || !s->gpu_to)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	for (size_t m = 0; m < e->nmodels; m++)
		s->move_to[m] = s->retry_to[m] = s->defer_to[m] = -1;
	for (int j = 0; j < L; j++) {
		int models = 0, gpus = 0;
		for (size_t m = 0; m < e->nmodels; m++)
			models += s->sc.model_part[m] == j;
		for (int g = 0; g < e->gpus; g++)
			gpus += s->sc.gpu_part[g] == j;
		sym_rt_log(WHO, "sub-cluster %d: %d models, %d GPUs (they need %.2f at the configured rate)", j, models,
			   gpus, s->sc.need[j]);
	}
	for (size_t m = 0; m < e->nmodels; m++)
		s->mc[m].part = s->sc.model_part[m];
	return 0;
}

#ifdef SYM_HAVE_GRPC
static int grpc_start(struct schedd *s, const struct sym_hostport *me, char *err, size_t errlen);
#endif

static int setup(struct schedd *s, char *err, size_t errlen)
{
	struct sym_cluster *c = s->c;
	struct sym_experiment *e = &c->exp;
	int ng = c->backends_max;
	s->gpus = calloc((size_t)ng, sizeof(*s->gpus));
	s->be = calloc((size_t)ng, sizeof(*s->be));
	s->fe = calloc((size_t)c->nfrontends, sizeof(*s->fe));
	struct sym_model_cfg *mc = s->mc = calloc(e->nmodels, sizeof(*mc));
	if (!s->gpus || !s->be || !s->fe || !mc)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	s->maxb = 1;
	for (size_t m = 0; m < e->nmodels; m++) {
		mc[m].profile = &e->profiles[m];
		mc[m].slo = sym_ms(e->model_slo_ms[m]);
		mc[m].rate_hint = sym_experiment_model_rps(e, m);
		mc[m].name = e->models[m].name;
		for (int k = 1; k < e->nkinds; k++)
			mc[m].by_kind[k] = &e->profiles[(size_t)k * e->nmodels + m];
		for (int k = 0; k < e->nkinds; k++)
			if (e->profiles[(size_t)k * e->nmodels + m].max_batch > s->maxb)
				s->maxb = e->profiles[(size_t)k * e->nmodels + m].max_batch;
	}
	if (s->maxb > SYM_WIRE_MAX_BATCH)
		s->maxb = SYM_WIRE_MAX_BATCH;
	int rc;
	if (e->partition.subclusters > 1 && (rc = setup_subclusters(s, err, errlen)))
		return rc;
	s->batch_counts = calloc((size_t)s->maxb + 1, sizeof(uint64_t));
	if (!s->holds) /* (sub-clusters allocate it) */
		s->holds = calloc((size_t)ng * e->nmodels, 1);
	s->rm = calloc(e->nmodels, sizeof(*s->rm));
	s->live = calloc(e->nmodels, sizeof(*s->live));
	if (!s->holds || !s->rm || !s->live)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	for (size_t m = e->slot0; m < e->nmodels; m++) /* spare slots: no model yet (fill_slot) */
		s->rm[m].state = MS_UNAVAILABLE;
	if (c->repository_token_file[0]) {
		char terr[900];
		if ((rc = sym_tokens_load(&s->admin, c->repository_token_file, terr, sizeof(terr))))
			return snprintf(err, errlen, "repository tokens: %s", terr), rc;
	}
	s->ms = calloc(e->nmodels, sizeof(*s->ms));
	s->gpu_busy_s = calloc((size_t)ng, sizeof(double));
	s->gpu_plans = calloc((size_t)ng, sizeof(uint64_t));
	s->first_up = calloc((size_t)ng, sizeof(sym_time));
	if (!s->gpu_plans || !s->first_up)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	for (int g = 0; g < ng; g++)
		for (int j = 0; j < GPU_Q; j++)
			if (!(s->gpus[g].q[j].reqs = malloc((size_t)s->maxb * sizeof(uint32_t))))
				return snprintf(err, errlen, "out of memory"), -ENOMEM;
	if (!s->batch_counts || !s->ms || !s->gpu_busy_s)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	s->iv_len = (sym_time)(e->interval_s * 1e9);
	s->iv_start = s->iv_tick = sym_monotonic_ns();
	struct sym_sched_cfg sc = {
		.core = { .nmodels = (int)e->nmodels, .models = mc, .ngpus = ng, .nkinds = e->nkinds, .kinds = e->kinds,
			  .gpu_kind = e->gpu_kind, .nparts = s->nsub, .gpu_part = s->nsub ? s->sc.gpu_part : NULL,
			  .policy = e->policy, .gather = e->gather,
			  .net = { .ctrl = sym_ms(e->ctrl_ms), .data = sym_ms(e->data_ms), .resp = sym_ms(e->resp_ms) },
			  .send_ahead = e->send_ahead, .max_ahead = 1 },
		.threads = c->threads,
		.gpus_offline = true,
		/* No polling by default: the processes of a cluster share the cores here,
		 * and measured with scripts/fidelity it was better so (see docs/runtime.md, "Measurements"). */
		.idle_poll_ns = c->poll_us > 0 ? sym_ms(c->poll_us / 1000) : -1,
		.wake_early_ns = c->poll_us > 0 ? 2 * sym_ms(c->poll_us / 1000) : -1,
	};
	if ((rc = sym_sched_create(&s->sched, &sc, err, errlen)))
		return rc;
	struct sym_fab_cfg fc = { .provider = c->provider, .cred = s->o->cred, .revoked = s->o->revoked };
	if ((rc = sym_fab_open(&s->fab, &fc, err, errlen)))
		return rc;
	const struct sym_hostport *me = s->o->standby ? &c->standby : &c->schedd;
	if ((rc = sym_fab_listen(s->fab, sym_cluster_bind_host(c, me->host), me->port, err, errlen)))
		return rc;
	char port[16];
	sym_rt_set_ready(is_ready, s);
	if ((rc = sym_rt_metrics_start(c, SYM_ROLE_SCHEDD, s->o->standby, sym_cluster_bind_host(c, me->host), write_metrics, s, err, errlen)))
		return rc;
	if (sym_cluster_http_port(c, SYM_ROLE_SCHEDD, s->o->standby, port, sizeof(port))) {
		if ((rc = sym_rt_http_start(&s->http, c, sym_cluster_bind_host(c, me->host), port, 4096, on_http, s, err, errlen)))
			return rc;
	}
#ifdef SYM_HAVE_GRPC
	return grpc_start(s, me, err, errlen);
#else
	if (c->grpc_base)
		return snprintf(err, errlen, "this build has no gRPC API (grpc_base): build it with Debian's libgrpc++-dev "
					     "and protobuf-compiler-grpc (meson -Dgrpc=enabled)"),
		       -ENOTSUP;
	return 0;
#endif
}

/* ---- fencing: the active scheduler and its standby ----
 *
 * Of the two schedulers (runtime.schedd's two addresses) one acts as the
 * active one and the other stands by, watching it over a link (a fabric
 * connection either may have opened). The term (wire.h) only grows: a
 * standby takes over with the highest term it has seen plus one. The active
 * one heartbeats the link with its clock in seq, which a standby sends back.
 *
 * The active scheduler takes frontends and backends only while it is
 * confirmed: no other scheduler can be active now. It is confirmed by the
 * standby sending back a heartbeat it sent since it was last unconfirmed (the
 * other stood by after that), or when its attempt to reach the other address
 * failed (nobody there). It is unconfirmed when it starts or takes over, and
 * when its own loop did not run for failure_ms / 2 (SIGSTOP, a stall): the
 * standby may have taken over meanwhile, since it takes over after failure_ms
 * of silence. While unconfirmed it still serves the peers it has, refuses new
 * ones, and reaches for the other address.
 *
 * A scheduler that sees a term above its own (in any message of a frontend or
 * backend, or from the other scheduler acting as the active one) steps down:
 * it closes every peer and dispatches nothing more, and stands by. A standby
 * whose seen term is above the active one's makes it raise its term instead
 * (the active one is still the only one). docs/runtime.md, "Fencing", says
 * why no two are ever confirmed at once, and what this does not cover. */

static const struct sym_hostport *other_addr(const struct schedd *s)
{
	return s->me ? &s->c->schedd : &s->c->standby;
}

/* Acting as the active scheduler and confirmed: it takes registrations. */
static bool active_now(const struct schedd *s)
{
	return !s->standby && s->confirmed;
}

/* why: for the log (NULL: no line). A span of being the confirmed active
 * scheduler that ends here ends at `until` (0: now). */
static void set_confirmed_until(struct schedd *s, bool on, const char *why, sym_time until)
{
	bool was = active_now(s);
	sym_time now = sym_monotonic_ns();
	s->confirmed = on;
	if (!on)
		s->unconfirmed_at = now;
	if (was == active_now(s))
		return;
	if (active_now(s)) {
		s->active_since = now;
		if (why && !s->o->quiet)
			sym_rt_log(WHO, "confirmed as the active scheduler, term %u (%s): taking frontends and backends",
				   s->term, why);
		return;
	}
	if (s->n_active_iv == s->cap_active_iv) {
		int cap = s->cap_active_iv ? 2 * s->cap_active_iv : 8;
		sym_time(*iv)[2] = realloc(s->active_iv, (size_t)cap * sizeof(*iv));
		if (iv) {
			s->active_iv = iv;
			s->cap_active_iv = cap;
		}
	}
	if (s->n_active_iv < s->cap_active_iv) {
		s->active_iv[s->n_active_iv][0] = s->active_since;
		s->active_iv[s->n_active_iv++][1] = until ? until : now;
	}
	s->active_since = 0;
	if (why)
		sym_rt_warn(WHO, "no longer confirmed as the active scheduler (%s): taking no new frontend or backend until "
			    "it is", why);
}

static void set_confirmed(struct schedd *s, bool on, const char *why)
{
	set_confirmed_until(s, on, why, 0);
}

/* Called whenever the loop runs: a gap longer than failure_ms / 2 since the
 * last call means this process stalled, and the other scheduler may have
 * taken over meanwhile (active), or our silence count of the active one
 * would include time we could not hear it (standing by: not counted). */
static void check_stall(struct schedd *s)
{
	sym_time now = sym_monotonic_ns(), last = s->alive_at, gap = now - last;
	s->alive_at = now;
	if (!s->c->has_standby || gap <= s->failure_ns / 2)
		return;
	char why[160];
	snprintf(why, sizeof(why), "this scheduler did not run for %.1f ms: the other may have taken over meanwhile",
		 (double)gap / 1e6);
	if (!s->standby) {
		/* it did nothing since `last`: its span as the active one ended there */
		set_confirmed_until(s, false, s->confirmed ? why : NULL, last);
		return;
	}
	s->watch_heard += gap; /* (it is at most `last`) */
	sym_rt_log_limited(&s->stall_log, WHO, "standing by: this scheduler did not run for %.1f ms; that time does not "
			   "count as the active one's silence", (double)gap / 1e6);
}

static void open_link(struct schedd *s);

static void close_link(struct schedd *s, int k)
{
	struct slink *ln = &s->link[k];
	if (ln->conn)
		sym_loop_fab_close(s->loop, ln->conn, k ? link_free : NULL, k ? sym_fab_conn_user(ln->conn) : NULL);
	memset(ln, 0, sizeof(*ln));
}

static void close_links(struct schedd *s)
{
	close_link(s, 0);
	close_link(s, 1);
}

/* Stepping down: every frontend and backend is closed, without a word (they
 * find the active scheduler, and the frontends send it what they hold); the
 * requests in hand are forgotten as the core decides about them. */
static void fence_peers(struct schedd *s)
{
	for (int f = 0; f < s->c->nfrontends; f++)
		if (s->fe[f].conn) {
			sym_loop_fab_close(s->loop, s->fe[f].conn, link_free, sym_fab_conn_user(s->fe[f].conn));
			s->fe[f].conn = NULL;
			s->fe[f].leaving = false;
		}
	for (int b = 0; b < s->c->backends_max; b++) {
		struct peer *p = &s->be[b];
		if (!p->conn)
			continue;
		sym_loop_fab_close(s->loop, p->conn, link_free, sym_fab_conn_user(p->conn));
		p->conn = NULL;
		struct gpu *g = &s->gpus[b];
		for (; g->qn; g->qh = (g->qh + 1) % GPU_Q, g->qn--) {
			struct gbatch *gb = &g->q[g->qh];
			for (int i = 0; i < gb->n; i++)
				req_free(s, gb->reqs[i]);
			gb->n = 0;
		}
		gpu_call(s, sym_sched_gpu_offline, b);
		gmove_abort(s, b);
		p->suspect = p->leaving = p->back = p->loading = false;
		p->pending = 0;
		for (size_t m = 0; s->move_phase && m < s->c->exp.nmodels; m++)
			if (s->move_phase[m] == 1 && s->move_to[m] == s->sc.gpu_part[b])
				move_check(s, (int)m);
	}
	s->last_status = -1;
	serving_tick(s, sym_monotonic_ns());
}

/* why: who has seen term (a sentence's subject and verb, for the log). */
static void step_down(struct schedd *s, uint32_t term, const char *why)
{
	const struct sym_hostport *o = other_addr(s);
	sym_rt_warn(WHO, "stepping down: %s term %u, above this scheduler's %u; it dispatches nothing more and stands by "
		    "for the scheduler at %s:%s", why, term, s->term, o->host, o->port);
	set_confirmed(s, false, NULL);
	s->standby = true;
	s->term = term;
	s->step_downs++;
	fence_peers(s);
	close_links(s);
	/* as if it had watched an active one and lost it: no start-up grace, and an attempt at the other
	 * address that finds nobody makes it take over (with a term above the one it was told of) */
	s->watch_ever = s->watch_lost = true;
	s->watch_heard = sym_monotonic_ns();
	s->watch_tried = 0;
	open_link(s);
}

/* A frontend or backend's message says it has seen a term above ours. With
 * no standby configured this is the only scheduler: it takes the term on. */
static void saw_term(struct schedd *s, uint32_t term, const char *why)
{
	if (!s->c->has_standby) {
		sym_rt_log_limited(&s->msg_log, WHO, "%s term %u, above this scheduler's %u (no standby is configured: it "
				   "takes that term on)", why, term, s->term);
		s->term = term;
	} else if (s->standby) {
		s->term = term;
	} else {
		step_down(s, term, why);
	}
}

/* The standby becomes the active scheduler, with a term above any it has
 * seen. It takes registrations once confirmed (it reaches for the other
 * address at once): the frontends and backends, having lost the old one,
 * register with it (they try the two addresses in turn), and the frontends
 * send again the requests they hold. */
static void take_over(struct schedd *s, const char *why, bool nobody)
{
	sym_time now = sym_monotonic_ns();
	const struct sym_hostport *o = other_addr(s);
	s->standby = false;
	s->took_over = now;
	s->takeovers++;
	s->detect_ms = (double)(now - s->watch_heard) / 1e6;
	s->registered_ms = 0;
	s->term++;
	sym_rt_warn(WHO, "taking over as the active scheduler with term %u: the active one %s (last heard %.1f ms ago)%s%s%s%s",
		    s->term, why, s->detect_ms, nobody ? "" : "; checking with ", nobody ? "" : o->host, nobody ? "" : ":",
		    nobody ? "" : o->port);
	close_links(s);
	set_confirmed(s, false, NULL);
	s->watch_tried = 0;
	if (nobody) /* our attempt at the other address, just now, found nobody: what a probe would find */
		set_confirmed(s, true, "nobody answers at the other address");
	else
		open_link(s);
}

/* After a takeover: once every configured frontend and backend has registered. */
static void check_taken_over(struct schedd *s)
{
	if (!s->took_over || s->registered_ms > 0)
		return;
	int nb = 0, nf = 0;
	for (int b = 0; b < s->c->backends_max; b++)
		nb += s->be[b].conn != NULL;
	for (int f = 0; f < s->c->nfrontends; f++)
		nf += s->fe[f].conn != NULL;
	if (nb < s->c->nbackends || nf < s->c->nfrontends)
		return;
	s->registered_ms = (double)(sym_monotonic_ns() - s->took_over) / 1e6;
	sym_rt_log(WHO, "took over: %d frontends and %d backends registered %.1f ms after the takeover", nf, nb,
		   s->registered_ms);
}

static void link_hello(struct schedd *s, int k)
{
	struct sym_msg h = { .type = SYM_MSG_HELLO };
	h.u.hello.role = s->standby ? SYM_ROLE_STANDBY : SYM_ROLE_SCHEDD;
	h.u.hello.id = (uint32_t)s->me;
	sd_send(s, s->link[k].conn, &h, NULL, NULL);
}

/* Acting as the active one: our heartbeat, our clock in seq. */
static void link_beat(struct schedd *s, int k)
{
	struct sym_msg h = { .type = SYM_MSG_HEARTBEAT };
	h.u.heartbeat.id = (uint32_t)s->me;
	h.u.heartbeat.seq = (uint64_t)sym_monotonic_ns();
	sd_send(s, s->link[k].conn, &h, NULL, NULL);
}

/* The other scheduler's hello (hello; first: on the only link, not a second
 * one) or heartbeat (seq) on link k: it acts as the active one (role SCHEDD)
 * or stands by, with term. */
static void meet(struct schedd *s, int k, int role, uint32_t term, uint64_t seq, bool hello, bool first)
{
	const struct sym_hostport *o = other_addr(s);
	sym_time now = sym_monotonic_ns();
	char why[200];
	if (role == SYM_ROLE_SCHEDD) {
		if (!s->standby) {
			/* two acting as the active one: the higher term stays; at the same term, the first address */
			if (term > s->term || (term == s->term && s->me == 1)) {
				snprintf(why, sizeof(why), "the scheduler at %.100s:%s acts as the active one with", o->host, o->port);
				step_down(s, term, why);
			}
			return; /* else it steps down when it hears us */
		}
		if (term >= s->term) { /* (below ours, it raises its term when it hears ours) */
			s->term = term;
			s->watch_heard = now;
			s->watch_ever = true;
			s->watch_lost = false;
		}
		if (!hello) { /* sent back, with our term: it confirms the active one (above) */
			struct sym_msg h = { .type = SYM_MSG_HEARTBEAT };
			h.u.heartbeat.id = (uint32_t)s->me;
			h.u.heartbeat.seq = seq;
			sd_send(s, s->link[k].conn, &h, NULL, NULL);
		}
		return;
	}
	if (s->standby) { /* both stand by: the first whose watch runs out takes over */
		if (term > s->term)
			s->term = term;
		return;
	}
	if (term > s->term) {
		sym_rt_log(WHO, "term raised to %u: the standby has seen term %u", term + 1, term);
		s->term = term + 1;
	}
	if (hello) {
		if (first && !s->o->quiet)
			sym_rt_log(WHO, "the standby scheduler is watching (term %u)", s->term);
		link_beat(s, k); /* sent back, it confirms us */
		return;
	}
	if (!s->confirmed && seq >= (uint64_t)s->unconfirmed_at && seq <= (uint64_t)now) {
		snprintf(why, sizeof(why), "the scheduler at %.100s:%s stands by", o->host, o->port);
		set_confirmed(s, true, why);
	}
}

static void link_closed(struct schedd *s, int k, bool no_answer, const char *why);

static void link_error(struct schedd *s, int k, const char *why)
{
	s->bad_peers++;
	sym_rt_log_limited(&s->link_log, WHO, "the other scheduler's connection: %s; closing it", why);
	link_closed(s, k, false, why);
}

static void on_link_msg(struct schedd *s, int k, const struct sym_msg *m)
{
	struct slink *ln = &s->link[k];
	char why[160];
	ln->seen = sym_monotonic_ns();
	if (m->type == SYM_MSG_HELLO) {
		int role = m->u.hello.role;
		if (ln->role || (role != SYM_ROLE_SCHEDD && role != SYM_ROLE_STANDBY) || (int)m->u.hello.id != 1 - s->me) {
			snprintf(why, sizeof(why), "%s hello (role %d, id %u)", ln->role ? "a second" : "a wrong", role,
				 m->u.hello.id);
			link_error(s, k, why);
			return;
		}
		ln->role = role;
		if (k == 1)
			link_hello(s, 1); /* ours, in answer */
		bool again = s->link[1 - k].conn && s->link[1 - k].role;
		if (again) /* each opened one: both sides keep the one the first address opened */
			close_link(s, s->me == 0 ? 1 : 0);
		if (s->link[k].conn)
			meet(s, k, role, m->term, 0, true, !again);
		return;
	}
	if (m->type == SYM_MSG_HEARTBEAT && ln->role) {
		meet(s, k, ln->role, m->term, m->u.heartbeat.seq, false, false);
		return;
	}
	snprintf(why, sizeof(why), "unexpected %s message", sym_wire_type_name(m->type));
	link_error(s, k, why);
}

/* Link k closed, or failed: no_answer when nobody answered on it (the attempt
 * never connected, or the other said nothing for failure_ms: a scheduler
 * whose loop runs answers in a turn). */
static void link_closed(struct schedd *s, int k, bool no_answer, const char *why)
{
	struct slink ln = s->link[k];
	const struct sym_hostport *o = other_addr(s);
	char msg[400];
	close_link(s, k);
	if (!s->standby) {
		/* our attempt since we were last unconfirmed found nobody: no other scheduler is active */
		if (k == 0 && no_answer && !s->confirmed && ln.opened >= s->unconfirmed_at) {
			snprintf(msg, sizeof(msg), "no scheduler answers at %.100s:%s: %.200s", o->host, o->port, why);
			set_confirmed(s, true, msg);
		}
		return;
	}
	if (ln.role == SYM_ROLE_SCHEDD) { /* the active one's link: reach it again at once */
		s->watch_lost = true;
		s->watch_tried = 0;
		open_link(s);
		return;
	}
	if (k == 0 && no_answer && s->watch_lost && s->watch_ever) {
		snprintf(msg, sizeof(msg), "closed its connection and does not answer at %.100s:%s any more (%.200s)", o->host,
			 o->port, why);
		take_over(s, msg, true);
	}
}

/* A scheduler's hello on a connection it opened to us. */
static void link_accepted(struct schedd *s, struct sym_fab_conn *conn, struct link *l, const struct sym_msg *m)
{
	if (s->link[1].conn)
		link_closed(s, 1, false, "the other scheduler connected again");
	l->role = m->u.hello.role;
	l->id = (int)m->u.hello.id;
	s->link[1] = (struct slink){ .conn = conn, .up = true, .seen = sym_monotonic_ns() };
	on_link_msg(s, 1, m);
}

/* Reach for the other address when no link is there: standing by, or acting
 * as the active one and unconfirmed, at most every 100 ms; confirmed, every
 * second. */
static void open_link(struct schedd *s)
{
	sym_time now = sym_monotonic_ns();
	if (!s->c->has_standby || s->link[0].conn || s->link[1].conn || now - s->watch_tried < 100 * SYM_MS)
		return;
	/* acting as the active one, confirmed and alone: once a second, so that a scheduler that
	 * thinks itself active too (it found nobody here on a loaded machine) hears our term */
	if (!s->standby && s->confirmed && now - s->watch_tried < SYM_S)
		return;
	s->watch_tried = now;
	const struct sym_hostport *o = other_addr(s);
	char err[512];
	struct sym_fab_conn *conn;
	const struct sym_fab_peer other = { SYM_CRED_SCHEDD, (uint32_t)(1 - s->me) };
	if (sym_fab_connect(s->fab, o->host, o->port, &other, &conn, err, sizeof(err))) {
		sym_rt_log_limited(&s->link_log, WHO, "reaching the other scheduler: %s", err);
		s->link[0] = (struct slink){ .opened = now };
		link_closed(s, 0, true, err);
		return;
	}
	s->link[0] = (struct slink){ .conn = conn, .opened = now };
}

/* Every heartbeat_ms: acting as the active one, heartbeat the other
 * scheduler; standing by, take over once the active one has been silent for
 * failure_ms (5 s more while none was ever heard: it may be slow to start);
 * unconfirmed, reach for the other address. */
static void on_link_timer(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	struct schedd *s = ctx;
	check_stall(s);
	sym_time now = sym_monotonic_ns();
	/* our attempt unanswered for failure_ms / 2 and a heartbeat (connecting to a process that does
	 * not run, SIGSTOP, waits for good): nobody answers there. A scheduler whose loop runs answers
	 * in a turn; one that did not run for this long finds itself stalled when it runs again
	 * (check_stall), so it cannot be confirmed as the active one without hearing from us. */
	if (s->link[0].conn && !s->link[0].role && now - s->link[0].opened > s->failure_ns / 2 + sym_ms(s->c->heartbeat_ms)) {
		char why[96];
		snprintf(why, sizeof(why), "no answer in %.1f ms", (double)(now - s->link[0].opened) / 1e6);
		link_closed(s, 0, true, why);
	}
	if (s->standby) {
		if (now - s->watch_heard > s->failure_ns + (s->watch_ever ? 0 : 5 * SYM_S)) {
			char why[96];
			snprintf(why, sizeof(why), "was silent for %.1f ms", (double)(now - s->watch_heard) / 1e6);
			take_over(s, why, false);
			return;
		}
		open_link(s);
		return;
	}
	for (int k = 0; k < 2; k++)
		if (s->link[k].conn && s->link[k].up)
			link_beat(s, k);
	open_link(s); /* unconfirmed: to confirm; confirmed with no standby: once a second */
}

/* Our link (k = 0). */
static void on_link_event(struct schedd *s, const struct sym_fab_event *e)
{
	struct sym_msg m;
	char why[256];
	switch (e->type) {
	case SYM_FAB_CONNECTED:
		s->link[0].up = true;
		s->link[0].seen = sym_monotonic_ns();
		link_hello(s, 0);
		if (!s->standby)
			link_beat(s, 0);
		if (s->o->verbose)
			sym_rt_log(WHO, "connected to the other scheduler at %s:%s", other_addr(s)->host, other_addr(s)->port);
		break;
	case SYM_FAB_MSG: {
		long n = sym_wire_decode(e->data, e->len, &m, why, sizeof(why));
		if (n <= 0 || (size_t)n != e->len) {
			link_error(s, 0, n < 0 ? why : "a malformed message");
			break;
		}
		on_link_msg(s, 0, &m);
		break;
	}
	case SYM_FAB_CLOSED:
		link_closed(s, 0, !s->link[0].up, e->reason);
		break;
	default:
		break;
	}
}

static void on_fab(void *ctx, const struct sym_fab_event *e)
{
	struct schedd *s = ctx;
	check_stall(s);
	if (s->link[0].conn && e->conn == s->link[0].conn) {
		on_link_event(s, e);
		return;
	}
	switch (e->type) {
	case SYM_FAB_ACCEPTED: {
		struct link *l = link_new(s);
		if (!l) {
			sym_loop_fab_close(s->loop, e->conn, NULL, NULL);
			break;
		}
		sym_fab_conn_set_user(e->conn, l);
		if (s->o->verbose)
			sym_rt_log(WHO, "a peer connected");
		break;
	}
	case SYM_FAB_MSG:
		on_msg(s, e->conn, e->data, e->len);
		break;
	case SYM_FAB_CLOSED:
		drop_conn(s, e->conn, e->reason[0] ? e->reason : "connection closed");
		break;
	default:
		break;
	}
}

/* The core's decisions are waiting. */
static void on_sched(struct sym_loop_io *io, uint32_t events, void *ctx)
{
	(void)io, (void)events;
	check_stall(ctx);
	poll_sched(ctx);
}

static uint32_t live_requests(const struct schedd *s)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->nreqs; i++)
		n += s->reqs[i].used;
	return n;
}

/* Draining: stop once no request is held; past the bound, drop what is left
 * ("unavailable": the frontends answer 503) and stop. */
static void check_drained(struct schedd *s, sym_time now)
{
	uint32_t n = live_requests(s);
	if (n && now < s->drain_end)
		return;
	if (n) {
		sym_rt_warn(WHO, "draining: %u requests still held at the bound; dropping them 'unavailable'", n);
		for (uint32_t i = 0; i < s->nreqs; i++)
			if (s->reqs[i].used) {
				send_drop(s, &s->reqs[i], SYM_WIRE_UNAVAILABLE);
				req_free(s, i);
			}
	} else if (!s->o->quiet) {
		sym_rt_log(WHO, "drained: every request held was served or dropped");
	}
	sym_loop_stop(s->loop);
}

/* SIGTERM: the frontends hear that we are shutting down (they take no new
 * request and are not ready); what we hold is still scheduled and served;
 * we stop once nothing is held, or after the longest deadline and SLO plus
 * 2 s. (With a standby configured, it takes over once we are gone.) */
static void drain(void *ctx)
{
	struct schedd *s = ctx;
	s->draining = true;
	const struct sym_experiment *e = &s->c->exp;
	double slo = 0;
	for (size_t m = 0; m < e->nmodels; m++)
		slo = e->model_slo_ms[m] > slo ? e->model_slo_ms[m] : slo;
	s->drain_end = sym_monotonic_ns() + sym_ms(s->c->deadline_max_ms + slo + 2000);
	if (!s->o->quiet)
		sym_rt_log(WHO, "SIGTERM: draining %u requests held; the frontends take no new ones", live_requests(s));
	s->last_status = -1;
	send_status(s, -1);
	check_drained(s, sym_monotonic_ns());
}

/* Our heartbeat to every frontend and backend registered, on a timer of our
 * own: a peer hears from us however loaded it is and however few heartbeats
 * it manages to send (issue 28: when schedd answered one heartbeat in 25, a
 * frontend slowed by 8 MB HTTP bodies sent too few and gave schedd up). */
static void on_beat(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	struct schedd *s = ctx;
	check_stall(s);
	serving_tick(s, sym_monotonic_ns());
	struct sym_msg h = { .type = SYM_MSG_HEARTBEAT };
	h.u.heartbeat.seq = (uint64_t)sym_monotonic_ns();
	for (int f = 0; f < s->c->nfrontends; f++)
		if (s->fe[f].conn)
			sd_send(s, s->fe[f].conn, &h, NULL, NULL);
	for (int b = 0; b < s->c->backends_max; b++)
		if (s->be[b].conn)
			sd_send(s, s->be[b].conn, &h, NULL, NULL);
}

static void on_check(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	struct schedd *s = ctx;
	check_stall(s);
	sym_time now = sym_monotonic_ns();
	check_silence(s, now);
	interval_roll(s, now);
	if (s->draining)
		check_drained(s, now);
	repo_step(s);
}

/* Everything on the loop: the fabric, the core's decisions, HTTP, the failure checks. */
/* ---- the gRPC API (runtime/grpc/grpc.h): health, metadata and the repository extension ---- */

#ifdef SYM_HAVE_GRPC
static void on_grpc(struct sym_loop_io *io, uint32_t events, void *ctx)
{
	(void)io, (void)events;
	struct schedd *s = ctx;
	struct sym_grpc_call *c;
	while ((c = sym_grpc_next(s->grpc))) {
		enum sym_grpc_kind k = sym_grpc_call_kind(c);
		char why[300];
		if (k == SYM_GRPC_SERVER_LIVE) {
			sym_grpc_finish_bool(c, true);
		} else if (k == SYM_GRPC_SERVER_READY) {
			sym_grpc_finish_bool(c, is_ready(s, why, sizeof(why)));
		} else if (k == SYM_GRPC_SERVER_METADATA) {
			static const char *const ext[] = { "model_repository" };
			sym_grpc_finish_server_metadata(c, "symphony", SYM_VERSION, ext, 1);
		} else if (k == SYM_GRPC_MODEL_READY || k == SYM_GRPC_MODEL_METADATA || k == SYM_GRPC_MODEL_INFER) {
			sym_grpc_finish_error(c, 12, "schedd serves the model repository extension; models and inference are "
						     "the frontends' (their gRPC addresses)");
		} else if (*sym_grpc_call_repository(c)) {
			sym_grpc_finish_error(c, 5, "repository '%s': schedd serves one repository (give no repository_name)",
					      sym_grpc_call_repository(c));
		} else if (k == SYM_GRPC_REPOSITORY_INDEX) {
			bool ready_only = sym_grpc_call_ready_only(c);
			for (size_t m = 0; m < s->c->exp.nmodels; m++) {
				if (sym_experiment_slot_empty(&s->c->exp, m) || (ready_only && s->rm[m].state != MS_READY))
					continue;
				char v[16];
				snprintf(v, sizeof(v), "%d", s->c->models[m].version);
				sym_grpc_add_index(c, s->c->exp.models[m].name, v, mstate_name(s->rm[m].state),
						   s->rm[m].state != MS_UNAVAILABLE ? NULL
						   : s->rm[m].reason[0]	 ? s->rm[m].reason
									 : "unloaded");
			}
			sym_grpc_finish_ok(c);
		} else {
			bool load = k == SYM_GRPC_REPOSITORY_LOAD;
			struct reply rp = { .gc = c };
			size_t tl;
			const char *tok = sym_grpc_call_token(c, &tl), *name = sym_grpc_call_model(c);
			if (s->standby)
				reply_error(rp, 503, "this scheduler stands by: the repository API is the active one's");
			else if (repo_authorized(s, rp, tok, tl, load))
				repo_call(s, rp, name, strlen(name), load);
		}
	}
}

static int grpc_start(struct schedd *s, const struct sym_hostport *me, char *err, size_t errlen)
{
	const struct sym_cluster *c = s->c;
	char port[16];
	if (!sym_cluster_grpc_port(c, s->o->standby ? 1 : 0, port, sizeof(port)))
		return 0;
	char *cert = NULL, *key = NULL;
	long rc = 0;
	if (c->http_tls_cert[0] && (rc = sym_file_read(c->http_tls_cert, 1 << 20, false, &cert, err, errlen)) >= 0)
		rc = sym_file_read(c->http_tls_key, 1 << 20, true, &key, err, errlen);
	if (rc >= 0) {
		struct sym_grpc_cfg gc = { .host = sym_cluster_bind_host(c, me->host), .port = port, .tls_cert = cert,
					   .tls_key = key, .msg_max = 65536, .calls_max = 256, .memory_max = 16 << 20 };
		rc = sym_grpc_start(&s->grpc, &gc, err, errlen);
	}
	if (key)
		sodium_memzero(key, strlen(key));
	free(cert);
	free(key);
	return (int)rc;
}
#endif

static int setup_loop(struct schedd *s)
{
	sym_time check_every = s->suspect_ns / 4 > SYM_MS ? s->suspect_ns / 4 : SYM_MS;
	struct sym_loop_io *io;
	struct sym_loop_timer *t;
	int rc = sym_rt_loop(&s->loop, WHO, s->fab, on_fab, s->http, s);
	if (rc)
		return rc;
	if ((rc = sym_loop_io_start(s->loop, sym_sched_fd(s->sched), EPOLLIN, on_sched, s, &io)) ||
	    (rc = sym_loop_timer_new(s->loop, on_check, s, &t))) {
		sym_rt_error(WHO, "event loop: %s", strerror(-rc));
		return rc;
	}
	sym_loop_timer_set(t, sym_monotonic_ns() + check_every, check_every);
	if ((rc = sym_loop_timer_new(s->loop, on_beat, s, &t))) {
		sym_rt_error(WHO, "event loop: %s", strerror(-rc));
		return rc;
	}
	sym_loop_timer_set(t, sym_monotonic_ns(), sym_rt_beat_period(s->c));
#ifdef SYM_HAVE_GRPC
	if (s->grpc && (rc = sym_loop_io_start(s->loop, sym_grpc_fd(s->grpc), EPOLLIN, on_grpc, s, &io))) {
		sym_rt_error(WHO, "event loop: %s", strerror(-rc));
		return rc;
	}
#endif
	if (s->nsub && s->c->exp.partition.epoch_s > 0) {
		if ((rc = sym_loop_timer_new(s->loop, on_epoch, s, &s->epoch_t))) {
			sym_rt_error(WHO, "event loop: %s", strerror(-rc));
			return rc;
		}
		sym_time every = (sym_time)(s->c->exp.partition.epoch_s * 1e9);
		s->epoch_start = sym_monotonic_ns();
		s->first_epoch = s->epoch_start + (sym_time)(s->c->exp.partition.phase_s * 1e9) + every; /* phase_s longer */
		sym_loop_timer_set(s->epoch_t, s->first_epoch, every);
	}
	s->alive_at = s->watch_heard = s->unconfirmed_at = sym_monotonic_ns();
	if (s->c->has_standby) {
		if ((rc = sym_loop_timer_new(s->loop, on_link_timer, s, &s->watch_t))) {
			sym_rt_error(WHO, "event loop: %s", strerror(-rc));
			return rc;
		}
		sym_loop_timer_set(s->watch_t, s->watch_heard, sym_ms(s->c->heartbeat_ms));
	}
	return 0;
}

static void teardown(struct schedd *s)
{
	for (size_t m = 0; s->rm && m < s->c->exp.nmodels; m++)
		repo_answer(s, (int)m, 503, "schedd stopped before it was done");
	sym_loop_destroy(s->loop); /* connections closing now, and their links */
#ifdef SYM_HAVE_GRPC
	sym_grpc_stop(s->grpc);
#endif
	sym_http_stop(s->http);
	if (s->sched)
		sym_sched_destroy(s->sched);
	if (s->fab)
		sym_fab_destroy(s->fab);
	while (s->links.next != &s->links)
		link_free(s->links.next);
	free(s->mc);
	sym_subclusters_finish(&s->sc);
	free(s->holds);
	free(s->rm);
	free(s->live);
	sym_tokens_free(&s->admin);
	free(s->iv_part);
	free(s->roll_parts);
	free(s->ep_base);
	free(s->move_to);
	free(s->retry_to);
	free(s->defer_to);
	free(s->stalled);
	free(s->move_phase);
	free(s->gpu_to);
	for (int g = 0; s->gpus && g < s->c->backends_max; g++)
		for (int j = 0; j < GPU_Q; j++)
			free(s->gpus[g].q[j].reqs);
	free(s->gpus);
	free(s->be);
	free(s->fe);
	free(s->reqs);
	free(s->freelist);
	free(s->batch_counts);
	for (size_t m = 0; s->ms && m < s->c->exp.nmodels; m++)
		sym_hist_finish(&s->ms[m].queueing);
	free(s->ms);
	free(s->gpu_busy_s);
	free(s->first_up);
	free(s->gpu_plans);
	free(s->active_iv);
	sym_hist_finish(&s->done_lag);
}

int sym_schedd_run(struct sym_cluster *c, const struct sym_rt_opts *o)
{
	/* the first address starts as the active one, term 1, confirmed once it finds no other scheduler
	 * active (with no standby configured, at once); the standby's stands by, having seen no term */
	struct schedd s = { .c = c, .o = o, .failure_ns = sym_ms(c->failure_ms), .suspect_ns = sym_ms(c->suspect_ms),
			    .last_status = -1, .standby = o->standby, .me = o->standby ? 1 : 0, .term = o->standby ? 0 : 1,
			    .confirmed = !c->has_standby };
	s.links.next = s.links.prev = &s.links;
	sym_hist_init(&s.done_lag);
	char err[1024] = "";
	int rc = setup(&s, err, sizeof(err));
	if (rc) {
		sym_rt_error(WHO, "%s", err);
		rc = rc == -EINVAL ? 2 : 1;
		goto out;
	}
	char pol[128];
	if (!o->quiet)
		sym_rt_log(WHO, "listening on %s:%s (%s), %zu models (and %d spare slots), %d GPUs (ids up to %d), "
			   "policy %s, %d thread%s, planning delays ctrl %.3f data %.3f resp %.3f ms",
			   c->schedd.host, c->schedd.port, sym_fab_provider(s.fab), c->exp.slot0, c->exp.model_slots,
			   c->nbackends,
			   c->backends_max - 1,
			   sym_policy_format(&c->exp.policy, pol, sizeof(pol)), c->threads, c->threads > 1 ? "s" : "",
			   c->exp.ctrl_ms, c->exp.data_ms, c->exp.resp_ms);
	if (setup_loop(&s)) {
		rc = 1;
		goto out;
	}
	sym_rt_on_term(drain, &s);
	sym_rt_on_reload(on_reload, &s);
	sym_rt_set_admin(admin_http, &s);
	if ((rc = sym_loop_run(s.loop)))
		sym_rt_error(WHO, "%s", sym_loop_error(s.loop));
	sym_fab_flush(s.fab, 1000);
	rc = rc ? 1 : 0;
	if (!o->quiet)
		sym_rt_log(WHO, "stopping: %" PRIu64 " requests, %" PRIu64 " batches, %" PRIu64
			   " drops, %" PRIu64 " backend and %" PRIu64 " frontend failures, %" PRIu64 " rejected messages",
			   s.metas, s.plans, s.drops_by[0] + s.drops_by[1], s.be_failures, s.fe_failures, s.bad_peers);
	if (o->json && write_stats(&s, o->json))
		rc = 1;
out:
	teardown(&s);
	return rc;
}
