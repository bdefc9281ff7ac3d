#include "sim/engine.h"
#include "experiment/subcluster.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "control/moves.h"
#include "control/scale.h"
#include "core/autoscale.h"
#include "core/core.h"
#include "core/error.h"
#include "core/grow.h"
#include "core/memory.h"
#include "partition/partition.h"
#include "workloads/workload.h"

/* ---- event heap: (time, seq) ---- */

/* The kinds of events (ev_handlers, before sim_loop, says what each does).
 * Requests and batches: EV_ARRIVAL (model idx), EV_FINISH (GPU idx's batch
 * ends), EV_FREE (its end reaches the scheduler), EV_STAGE (the oldest
 * waiting stage request of a query arrives). Control, the simulator's side of
 * the control plane (issue 31): EV_DECIDE, a decision is due (which one:
 * DECIDE_*, idx its argument), made by the functions both drivers share
 * (experiment/subcluster.h's epoch, control/scale.h, control/moves.h); and
 * EV_ACT, one of its actions takes effect (ACT_*, idx the model or GPU). A
 * control event's kind carries which decision or action above
 * EV_WHAT_SHIFT. */
enum { EV_ARRIVAL, EV_FINISH, EV_FREE, EV_STAGE, EV_DECIDE, EV_ACT, EV_NKINDS };
/* DECIDE_EPOCH: re-partition (idx: the epoch); DECIDE_SCALE: the autoscaler's
 * interval; DECIDE_REPLAN: query idx's split is re-planned. */
enum { DECIDE_EPOCH, DECIDE_SCALE, DECIDE_REPLAN };
/* ACT_SWITCH: model idx's new part has loaded it, it switches there;
 * ACT_HOLD: model idx's stalled move holds it (no part, its requests wait);
 * ACT_GPU_READY: GPU idx, added or moved, has loaded its part's models and
 * serves; ACT_GPU_MOVES: the epoch's model moves are done, GPUs change part. */
enum { ACT_SWITCH, ACT_HOLD, ACT_GPU_READY, ACT_GPU_MOVES };
#define EV_WHAT_SHIFT 8

/* A GPU's standing with the autoscaler: in service, out (not paid for),
 * coming up (paid for, provisioning and loading), draining (paid for, its
 * batches running out before it is released). */
enum { AS_ON, AS_OFF, AS_UP, AS_DRAIN };

struct event {
	sym_time t;
	uint64_t seq;
	int32_t kind;
	int32_t idx; /* model for arrivals, GPU for completions */
};

struct evheap {
	struct event *a;
	size_t n, cap;
	uint64_t seq;
};

static inline bool ev_less(const struct event *x, const struct event *y)
{
	return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static int ev_push(struct evheap *h, sym_time t, int kind, int idx)
{
	if (h->n == h->cap && sym_grow(&h->a, &h->cap, h->n + 1, sizeof(*h->a), 256))
		return -ENOMEM;
	struct event e = { t, h->seq++, kind, idx };
	size_t i = h->n++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!ev_less(&e, &h->a[p]))
			break;
		h->a[i] = h->a[p];
		i = p;
	}
	h->a[i] = e;
	return 0;
}

static struct event ev_pop(struct evheap *h)
{
	struct event top = h->a[0];
	struct event last = h->a[--h->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && ev_less(&h->a[c + 1], &h->a[c]))
			c++;
		if (!ev_less(&h->a[c], &last))
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n)
		h->a[i] = last;
	return top;
}

/* Replaces the top event by a new one (the arrival that follows the one
 * just handled): one sift down instead of a pop and a push. The new event
 * takes its sequence number now, as a push would. */
static void ev_replace_top(struct evheap *h, sym_time t, int kind, int idx)
{
	struct event e = { t, h->seq++, kind, idx };
	size_t n = h->n, i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && ev_less(&h->a[c + 1], &h->a[c]))
			c++;
		if (!ev_less(&h->a[c], &e))
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	h->a[i] = e;
}

/* ---- simulation state ---- */

/* A request's state: flags in the low bits, then the timeline interval of
 * its arrival (kept at arrival, so that its outcome needs no division), or
 * REQ_IV_FAR when it does not fit (a run with over 2^28 intervals); REQ_MOVING: it arrived while its model
 * moved between sub-clusters (epochs). */
enum { REQ_WARMUP = 1, REQ_COUNTED = 2, REQ_MOVING = 4, REQ_IV_SHIFT = 3 };
#define REQ_IV_FAR ((1u << 28) - 1)

/* A batch sent to a GPU: what the simulated worker knows of it. */
static int ev_decide(struct evheap *h, sym_time t, int what, int idx)
{
	return ev_push(h, t, EV_DECIDE | what << EV_WHAT_SHIFT, idx);
}

static int ev_act(struct evheap *h, sym_time t, int what, int idx)
{
	return ev_push(h, t, EV_ACT | what << EV_WHAT_SHIFT, idx);
}

struct batch {
	int model, size;
	sym_time planned;      /* its planned start */
	sym_time ready;        /* when its plan and inputs are there (planned start, later with a long tail) */
	sym_time late;         /* how late it begins past the moment it could (start_late_ms) */
	sym_time dur;          /* its run time (l(b), with jitter) */
	sym_time reject_after; /* the worker rejects it if it cannot start by then */
	uint32_t dropped_before;
	bool rejected;
	struct sym_request **reqs; /* maxb entries */
};

/* A simulated GPU with its worker: it runs its batches in the order they
 * came, each at its planned start or when the one before it ends, whichever
 * is later (a plan sent ahead waits for its GPU); a batch that could only
 * start after its reject_after is rejected instead (zero time, its requests
 * dropped). q is a ring of qcap batches: the running one (when running),
 * then those waiting; ends holds, in order, the ends the scheduler hears of
 * done_ms later. */
struct gpu {
	bool running;
	bool used;
	int qh, qn;
	int eh, en;
	sym_time start, finish; /* of the running batch */
	uint64_t finish_seq;  /* the event of the running batch's completion */
	bool leaving;         /* moving to another sub-cluster: offline in its old core, finishing its batches */
	int skip_ends;        /* ends of batches its old core forgot (not reported) */
	uint32_t epoch;       /* its offline/online count (sym_core_gpu_offline) */
	size_t last_iv;       /* 1 + the last timeline interval it was counted busy in, 0: none */
	uint8_t svc;          /* AS_ON unless the autoscaler says otherwise */
	struct batch *q;
	struct sym_batch_end *ends;
};

/* A pooled request's tag is the query it belongs to (0: none; else its
 * record's index + 1). */
struct pool_chunk {
	struct pool_chunk *next;
	struct sym_request r[4096];
};

/* A complex query under way: its stage requests still to end (spawned or
 * waiting to arrive), and whether one already failed it. */
struct qrec {
	sym_time arrival, deadline, last; /* last: its latest stage response so far */
	uint32_t pending, nreq;
	uint16_t query;
	bool counted, dropped, late;
};

/* One part's autoscaling signals since the last decision. */
struct as_part {
	uint64_t ended, bad;  /* requests of its models that ended; of them late or dropped */
	double busy_s;        /* GPU-seconds its GPUs ran batches */
	double serving_s;     /* GPU-seconds its GPUs were in service */
	int serving;          /* its GPUs in service now */
};

struct sim {
	const struct sym_experiment *e;
	int qcap;          /* batches a GPU can hold: the core's outstanding limit, plus one */
	struct sym_run_result *res;
	/* one core, as in schedd; with sub-clusters, one of nparts parts
	 * (core/parts.h): model m serves from part model_part[m], GPU g serves
	 * part gpu_part[g] (out of service with an autoscaler: the part it joins
	 * first, sym_scale_pick) */
	struct sym_core *core;
	int nparts;
	int *model_part, *gpu_part;
	struct sym_subclusters sc;
	/* epochs: arrivals per model since the last epoch; a model's pending
	 * move (its new part, -1: none); whether its move stalled (the core holds
	 * it, its arrivals counted as held); each part's loaded static memory */
	uint64_t *ep_arrivals;
	int *move_to;
	bool *stalled;
	double *hold_mb;
	int *gpu_to;         /* each GPU's part after the epoch's moves */
	bool gpu_move_pending; /* an ACT_GPU_MOVES is due */
	sym_time epoch_len;
	struct evheap ev;
	struct gpu *gpus;
	struct sym_arrivals *arr;
	sym_time *slo;
	gsl_rng *jitter_rng;
	FILE *trace;
	sym_time warmup, end;
	sym_time interval; /* timeline interval */
	size_t arr_iv;     /* the interval of the latest arrival */
	sym_time arr_iv_end; /* and its end */
	/* request pool: chunks plus a free list threaded through `id` slots */
	struct pool_chunk *chunks;
	struct sym_request **free_list;
	size_t nfree, free_cap;
	uint64_t next_id;
	uint64_t ended; /* all requests that ended, warm-up included */
	uint64_t bad;   /* measured requests that ended late or dropped */
	uint64_t bad_all; /* all requests that ended late or dropped, warm-up included */
	bool as_parts;    /* the autoscaler with sub-clusters: requests' ends counted per part too */
	/* the autoscaler: per part (sub-cluster, or the whole cluster), the
	 * requests that ended and the GPU time run in the current interval; GPUs
	 * paid for, and the GPU-seconds they add up to */
	bool as_on;
	sym_time as_len;
	struct sym_scale_cfg as_cfg; /* the decision (control/scale.h) */
	struct sym_scale_state as_state;
	struct as_part *as_part;   /* nparts entries */
	uint64_t as_ended, as_bad; /* one part: s->ended and s->bad_all when the interval began */
	struct sym_scale_part *as_sp; /* nparts entries: the step's parts */
	struct sym_scale_gpu *as_gs;  /* gpus entries: the GPUs as the step sees them */
	struct sym_scale_action *as_acts; /* gpus entries: its actions */
	double as_gpu_s;
	sym_time as_iv_start;      /* the last decision */
	int as_paid, as_serving; /* GPUs paid for; of them, in service */
	sym_time as_paid_t;     /* both counted up to here */
	const uint64_t *stop_model_bad; /* opts->stop_model_bad */
	bool stop;      /* a model reached its stop_model_bad limit */
	/* complex queries: records (a free list of indices), the stage
	 * requests waiting for their arrival events, and the fan-out's random
	 * stream. Stage requests are spawned at finish + resp_ms as finishes
	 * come, in time order, so their events fire in the order they were
	 * spawned: the waiting requests are a FIFO (a ring: head swh, nsw of
	 * swcap). */
	struct qrec *qr;
	uint32_t *qfree;
	size_t nqr, qcap_rec, nqfree;
	struct sym_request **stage_wait;
	size_t swh, nsw, swcap;
	gsl_rng *fan_rng;
	gsl_rng *pfx_rng; /* prefix batching: the variants a batch holds */
	/* request data sizes (gamma, mean 1): per model its coefficient of variation (NULL: no model
	 * has one, every request's size is 0, read as 1) */
	double *size_cv;
	gsl_rng *size_rng;
	/* per query and stage (q * SYM_QUERY_MAX_STAGES + v): the deadline offsets in force (ms), and for
	 * re-planning, the requests of v that spawned children, the children of v spawned, and the fan-out
	 * last measured, since the last re-plan */
	double *qdl, *qgam;
	uint64_t *qatt, *qkids;
	size_t replan_cap;
	uint64_t q_started, q_ended;
	int err;
};

static double model_static(const struct sym_experiment *e, size_t i);
static void on_epoch(struct sim *s, int idx, sym_time now);
static void as_count(struct sim *s, sym_time now, int dpaid, int dserving, int part);
static void on_switch(struct sim *s, int m, sym_time now);
static void on_gpu_ready(struct sim *s, int gi, sym_time now);

/* A request's data size in units of its model's mean request: gamma with
 * mean 1 and the model's size_cv, or 0 (not drawn) for a model without. */
static inline float draw_size(struct sim *s, int m)
{
	if (!s->size_cv || !(s->size_cv[m] > 0))
		return 0;
	double cv2 = s->size_cv[m] * s->size_cv[m];
	float z = (float)gsl_ran_gamma(s->size_rng, 1 / cv2, cv2);
	return z > 1e-6f ? z : 1e-6f; /* a large CV can draw 0 (or round to it), which would read as unknown */
}

static struct sym_request *req_alloc(struct sim *s)
{
	if (!s->nfree) {
		/* The free list must be able to hold every request of every chunk. */
		struct pool_chunk *c = malloc(sizeof(*c));
		size_t n = sizeof(c->r) / sizeof(c->r[0]);
		struct sym_request **fl = c ? realloc(s->free_list, (s->free_cap + n) * sizeof(*fl)) : NULL;
		if (!fl) {
			free(c);
			s->err = -ENOMEM;
			return NULL;
		}
		s->free_list = fl;
		s->free_cap += n;
		c->next = s->chunks;
		s->chunks = c;
		for (size_t i = 0; i < n; i++)
			s->free_list[s->nfree++] = &c->r[n - 1 - i];
	}
	return s->free_list[--s->nfree];
}

static void req_free(struct sim *s, struct sym_request *r)
{
	s->free_list[s->nfree++] = r;
}

/* ---- complex queries (experiment/config.h, struct sym_query) ---- */

static uint32_t query_new(struct sim *s, int q, sym_time t)
{
	uint32_t i;
	if (s->nqfree) {
		i = s->qfree[--s->nqfree];
	} else {
		if (s->nqr == s->qcap_rec) {
			size_t cap = s->qcap_rec ? 2 * s->qcap_rec : 1024;
			struct qrec *x = realloc(s->qr, cap * sizeof(*x));
			uint32_t *f = x ? realloc(s->qfree, cap * sizeof(*f)) : NULL;
			if (x)
				s->qr = x;
			if (!x || !f || cap > UINT32_MAX - 1) {
				s->err = -ENOMEM;
				return 0;
			}
			s->qfree = f;
			s->qcap_rec = cap;
		}
		i = (uint32_t)s->nqr++;
	}
	s->qr[i] = (struct qrec){ .arrival = t, .deadline = t + sym_ms(s->e->queries[q].slo_ms), .last = t,
				  .query = (uint16_t)q, .counted = t >= s->warmup };
	s->q_started++;
	if (s->qr[i].counted)
		s->res->queries[q].offered++;
	return i + 1;
}

/* Query record qi (index + 1) has no stage request left: its outcome. */
static void query_end(struct sim *s, uint32_t qi)
{
	struct qrec *x = &s->qr[qi - 1];
	s->q_ended++;
	if (x->counted) {
		struct sym_query_result *r = &s->res->queries[x->query];
		r->stage_requests += x->nreq;
		if (x->dropped)
			r->dropped++;
		else if (x->late)
			r->late++;
		else
			r->good++;
		if (!x->dropped && sym_hist_record(&r->latency, x->last - x->arrival))
			s->err = -ENOMEM;
		if (x->dropped || x->late) {
			s->bad++;
			int root = s->e->queries[x->query].model[0];
			if (s->stop_model_bad && s->stop_model_bad[root] &&
			    r->late + r->dropped >= s->stop_model_bad[root])
				s->stop = true;
		}
	}
	s->qfree[s->nqfree++] = qi - 1;
}

/* A stage request of a query ended at `done` (its response back), served or
 * not: the query's count, and its children's requests when it was served
 * and the query can still be good (a dropped stage, or a response past the
 * query's deadline, fails the query: its later stages are not run). */
static void stage_end(struct sim *s, struct sym_request *r, sym_time done, bool served)
{
	uint32_t qi = r->tag;
	if (!qi)
		return;
	struct qrec *x = &s->qr[qi - 1];
	x->pending--;
	if (!served)
		x->dropped = true;
	else if (done > x->deadline)
		x->late = true;
	if (served && done > x->last)
		x->last = done;
	const struct sym_query *q = &s->e->queries[x->query];
	int v = s->e->stage_of[r->model];
	size_t qb = (size_t)x->query * SYM_QUERY_MAX_STAGES;
	bool spawn = served && !x->dropped && !x->late;
	if (spawn)
		s->qatt[qb + (size_t)v]++;
	for (int c = v + 1; spawn && c < q->nstages && !s->err; c++) {
		if (q->parent[c] != v)
			continue;
		double g = q->ngsteps[c] ? sym_query_gamma_at(q, c, sym_to_s(done)) : q->gamma[c], whole = floor(g);
		int k = (int)whole + (gsl_rng_uniform(s->fan_rng) < g - whole);
		s->qkids[qb + (size_t)c] += (uint64_t)k;
		for (int j = 0; j < k; j++) {
			struct sym_request *cr = req_alloc(s);
			if (!cr)
				return;
			*cr = (struct sym_request){ .id = s->next_id++, .arrival = done,
						    .deadline = x->arrival + sym_ms(s->qdl[qb + (size_t)c]), .model = q->model[c],
						    .size = draw_size(s, q->model[c]), .tag = qi };
			x->pending++;
			x->nreq++;
			if (s->nsw == s->swcap) {
				size_t cap = s->swcap ? 2 * s->swcap : 1024;
				struct sym_request **w = malloc(cap * sizeof(*w));
				if (!w) {
					s->err = -ENOMEM;
					return;
				}
				for (size_t i = 0; i < s->nsw; i++)
					w[i] = s->stage_wait[(s->swh + i) % s->swcap];
				free(s->stage_wait);
				s->stage_wait = w;
				s->swh = 0;
				s->swcap = cap;
			}
			s->stage_wait[(s->swh + s->nsw++) % s->swcap] = cr;
			if (ev_push(&s->ev, done, EV_STAGE, 0))
				s->err = -ENOMEM;
		}
	}
	if (!x->pending)
		query_end(s, qi);
}

/* i (< 2 * qcap) wrapped into a GPU's ring of qcap slots. */
static inline int ring_at(const struct sim *s, int i)
{
	return i >= s->qcap ? i - s->qcap : i;
}

static inline size_t interval_of(const struct sim *s, sym_time t)
{
	return (size_t)(t / s->interval);
}

static void timeline_outcome(struct sim *s, const struct sym_request *r, bool good)
{
	size_t sec = (uint32_t)r->state >> REQ_IV_SHIFT;
	if (!good)
		s->bad_all++;
	if (s->as_parts) {
		struct as_part *ap = &s->as_part[s->model_part[r->model]];
		ap->ended++;
		ap->bad += !good;
	}
	if (!good && (r->state & REQ_MOVING) && s->res->nepochs)
		s->res->epochs[s->res->nepochs - 1].moved_bad++;
	if (sec == REQ_IV_FAR)
		sec = interval_of(s, r->arrival);
	if (sec < s->res->nintervals) {
		if (good)
			s->res->timeline[sec].good++;
		else
			s->res->timeline[sec].bad++;
		if (s->res->model_timeline)
			s->res->model_timeline[(sec * s->res->nmodels + (size_t)r->model) * 3 + (good ? 1 : 2)]++;
	}
}

/* A measured request of model mr (index m) ended late or dropped (already
 * counted in mr): the run's count, and the model's early-stop limit. */
static inline void count_bad(struct sim *s, const struct sym_model_result *mr, int m)
{
	if (s->e->nqueries)
		return; /* queries are judged, and stop the run, by their own outcomes (query_end) */
	s->bad++;
	if (s->stop_model_bad && s->stop_model_bad[m] && mr->late + mr->dropped >= s->stop_model_bad[m])
		s->stop = true;
}

static void on_drop(void *ctx, struct sym_request *r, enum sym_drop_reason why, sym_time now)
{
	(void)now;
	struct sim *s = ctx;
	if (r->state & REQ_COUNTED) {
		struct sym_model_result *m = &s->res->models[r->model];
		m->dropped++;
		m->dropped_by[why]++;
		count_bad(s, m, r->model);
	}
	timeline_outcome(s, r, false);
	s->ended++;
	if (s->e->nqueries)
		stage_end(s, r, now, false);
	req_free(s, r);
}

/* GPU gi was busy over [a, b): adds the part inside [warmup, end) to the
 * busy time, and each interval's part to the timeline (with the GPU counted
 * once per interval it was busy in; a GPU's busy spans come in time order). */
static void account_busy(struct sim *s, int gi, sym_time a, sym_time b)
{
	sym_time lo = a > s->warmup ? a : s->warmup, hi = b < s->end ? b : s->end;
	if (hi > lo)
		s->res->gpu_busy_fraction += sym_to_s(hi - lo);
	if (s->as_on && b > s->as_iv_start) /* this interval's part: the rest counted in the one before */
		s->as_part[s->gpu_part[gi]].busy_s += sym_to_s(b - (a > s->as_iv_start ? a : s->as_iv_start));
	struct gpu *g = &s->gpus[gi];
	sym_time t = a;
	while (t < b && t < s->end) {
		size_t iv = interval_of(s, t);
		sym_time iv_end = (sym_time)(iv + 1) * s->interval;
		sym_time stop = b < iv_end ? b : iv_end;
		if (iv < s->res->nintervals) {
			struct sym_timeline_row *row = &s->res->timeline[iv];
			row->busy_gpu_s += sym_to_s(stop - t);
			if (g->last_iv != iv + 1) {
				g->last_iv = iv + 1;
				row->gpus_used++;
			}
		}
		t = stop;
	}
}

/* The batch at the head of GPU gi's queue starts, the GPU being free since
 * `avail`: at its planned start, or when its inputs are there, or at avail,
 * whichever is last; or it is rejected, if that is after its reject_after,
 * at the moment the worker looks at it (avail, or its planned start if that
 * is later). Its completion (or rejection) is an event. */
static void start_next(struct sim *s, int gi, sym_time avail)
{
	struct gpu *g = &s->gpus[gi];
	struct batch *b = &g->q[g->qh];
	sym_time start = (b->ready > avail ? b->ready : avail) + b->late;
	if (start > b->reject_after) {
		b->rejected = true;
		start = b->planned > avail ? b->planned : avail;
		g->finish = start;
	} else {
		g->finish = start + b->dur;
	}
	g->start = start;
	g->running = true;
	for (int i = 0; i < b->size; i++)
		b->reqs[i]->start = start; /* queueing lasts until the batch really starts */
	if (s->trace)
		fprintf(s->trace, "%d,%s,%s,%d,%.6f,%.6f,%u\n", gi, s->e->kinds[s->e->gpu_kind[gi]].name,
			s->e->models[b->model].name, b->rejected ? 0 : b->size, sym_to_ms(g->start),
			sym_to_ms(g->finish), b->dropped_before);
	g->finish_seq = s->ev.seq;
	if (ev_push(&s->ev, g->finish, EV_FINISH, gi))
		s->err = -ENOMEM;
}

static void on_dispatch(void *ctx, const struct sym_dispatch *d)
{
	struct sim *s = ctx;
	struct gpu *g = &s->gpus[d->gpu];
	if (g->qn == s->qcap) {
		s->err = -EPROTO; /* more outstanding than the core allows: a core bug */
		return;
	}
	struct batch *b = &g->q[ring_at(s, g->qh + g->qn)];
	if (!b->reqs && !(b->reqs = malloc((size_t)s->res->total.max_batch * sizeof(*b->reqs)))) {
		s->err = -ENOMEM;
		return;
	}
	g->qn++;
	sym_time dur = d->finish - d->start;
	if (s->e->pfx_n && s->e->pfx_n[d->model] > 0) {
		/* prefix batching: the plan charged a suffix beta for every request that could be of another
		 * variant; the batch pays it once per variant it holds (each request of one of the N variants,
		 * equally likely: their arrivals are one Poisson stream split evenly) */
		int nv = s->e->pfx_n[d->model], bound = d->size < nv ? d->size : nv, distinct = 0;
		uint64_t seen[(4096 + 63) / 64] = { 0 };
		for (int i = 0; i < d->size; i++) {
			unsigned v = (unsigned)gsl_rng_uniform_int(s->pfx_rng, (unsigned long)nv);
			if (!(seen[v / 64] & (1ull << (v % 64)))) {
				seen[v / 64] |= 1ull << (v % 64);
				distinct++;
			}
		}
		dur -= sym_ms(s->e->pfx_sbeta_ms[d->model] * (bound - distinct));
		if (dur < 1)
			dur = 1;
	}
	if ((s->e->trace && s->e->trace->sizes) || (s->size_cv && s->size_cv[d->model] > 0)) {
		/* data sizes: the plan charged alpha per request of mean size; the batch takes alpha per unit of
		 * its summed size (l = beta + alpha S, the fitted alpha for table profiles) */
		double sum = 0;
		for (int i = 0; i < d->size; i++)
			sum += d->reqs[i]->size;
		double alpha = s->e->profiles[(size_t)d->kind * s->e->nmodels + (size_t)d->model].alpha_ms;
		dur += sym_ms(alpha * (sum - d->size));
		if (dur < 1)
			dur = 1;
	}
	if (s->e->jitter > 0) {
		double f = 1 + s->e->jitter * (2 * gsl_rng_uniform(s->jitter_rng) - 1);
		dur = (sym_time)llround((double)dur * f);
	}
	/* A long-tailed network: the plan and its inputs take an exponential time
	 * to arrive; the batch starts at its planned start, or when they are
	 * there if that is later. */
	sym_time ready = d->start;
	if (s->e->tail_ms > 0) {
		sym_time arrive = d->now + sym_ms(gsl_ran_exponential(s->jitter_rng, s->e->tail_ms));
		if (arrive > ready)
			ready = arrive;
	}
	/* A backend that begins its batches late (its timer, its CPU): each one
	 * begins that long after the moment it could (its planned start, or the
	 * end of the batch before it), lognormal by the median and p99 given
	 * (z_0.99 = 2.3263); a late start carries on to the batches behind it. */
	sym_time late = 0;
	if (s->e->late_p99_ms > 0) {
		double sigma = log(s->e->late_p99_ms / s->e->late_p50_ms) / 2.3263478740408408;
		late = sym_ms(s->e->late_p50_ms * exp(sigma * gsl_ran_ugaussian(s->jitter_rng)));
	}
	*b = (struct batch){ .model = d->model, .size = d->size, .planned = d->start, .ready = ready, .late = late,
			     .dur = dur,
			     .reject_after = d->reject_after, .dropped_before = d->dropped_before, .reqs = b->reqs };
	memcpy(b->reqs, d->reqs, (size_t)d->size * sizeof(*b->reqs));
	if (d->now >= s->warmup && d->now < s->end) {
		struct sym_model_result *m = &s->res->models[d->model];
		m->batches++;
		m->batched += (uint64_t)d->size;
		m->batch_counts[d->size]++;
		g->used = true;
	}
	if (!g->running)
		start_next(s, d->gpu, d->now);
}

/* Preemption: the batch running on GPU gi stops at now (preempting policies
 * only dispatch to idle GPUs: nothing waits behind it). Its requests went
 * back to the core; the GPU time it used is lost. Its completion event goes
 * stale. */
static void on_cancel(void *ctx, int gi, sym_time now)
{
	struct sim *s = ctx;
	struct gpu *g = &s->gpus[gi];
	const struct batch *b = &g->q[g->qh];
	if (now > g->start) {
		account_busy(s, gi, g->start, now);
		sym_time lo = g->start > s->warmup ? g->start : s->warmup, hi = now < s->end ? now : s->end;
		if (hi > lo)
			s->res->preempted_gpu_seconds += sym_to_s(hi - lo);
	}
	if (now >= s->warmup && now < s->end)
		s->res->preemptions++;
	if (s->trace)
		fprintf(s->trace, "%d,%s,%s,-%d,%.6f,%.6f,0\n", gi, s->e->kinds[s->e->gpu_kind[gi]].name,
			s->e->models[b->model].name, b->size, sym_to_ms(g->start), sym_to_ms(now));
	g->qh = ring_at(s, g->qh + 1);
	g->qn--;
	g->running = false;
	g->finish_seq = UINT64_MAX;
}

static void gpu_left(struct sim *s, int gi, sym_time now);
static void gpu_released(struct sim *s, int gi, sym_time now);

static void report_end(struct sim *s, int gi, sym_time now, const struct sym_batch_end *e)
{
	struct gpu *g = &s->gpus[gi];
	if (g->skip_ends > 0) { /* its old core forgot the batch when the GPU left it */
		g->skip_ends--;
		if (g->leaving && !g->skip_ends && !g->qn)
			(g->svc == AS_DRAIN ? gpu_released : gpu_left)(s, gi, now);
		return;
	}
	sym_core_gpu_done(s->core, gi, now, e);
}

static void on_finish(struct sim *s, int gi, sym_time now)
{
	struct gpu *g = &s->gpus[gi];
	struct batch *b = &g->q[g->qh];
	struct sym_batch_end e = { g->start, now, b->rejected };
	if (b->rejected) {
		for (int i = 0; i < b->size; i++)
			on_drop(s, b->reqs[i], SYM_DROP_REJECTED, now); /* by the worker, not the core */
	} else {
		account_busy(s, gi, g->start, g->finish);
		sym_time done = now + sym_ms(s->e->resp_ms);
		for (int i = 0; i < b->size; i++) {
			struct sym_request *r = b->reqs[i];
			bool good = done <= r->deadline;
			if (r->state & REQ_COUNTED) {
				struct sym_model_result *m = &s->res->models[r->model];
				if (good) {
					m->served++;
				} else {
					m->late++;
					count_bad(s, m, r->model);
				}
				if (sym_hist_record(&m->latency, done - r->arrival) ||
				    sym_hist_record(&m->queueing, r->start - r->arrival))
					s->err = -ENOMEM;
			}
			timeline_outcome(s, r, good);
			s->ended++;
			if (s->e->nqueries)
				stage_end(s, r, done, true);
			req_free(s, r);
		}
	}
	g->qh = ring_at(s, g->qh + 1);
	g->qn--;
	g->running = false;
	/* the worker goes on with the next batch at once */
	if (g->qn)
		start_next(s, gi, now);
	/* The scheduler hears of the end done_ms later (its notice's trip). */
	if (s->e->done_ms > 0) {
		g->ends[ring_at(s, g->eh + g->en)] = e;
		g->en++;
		if (ev_push(&s->ev, now + sym_ms(s->e->done_ms), EV_FREE, gi))
			s->err = -ENOMEM;
	} else {
		report_end(s, gi, now, &e);
	}
}

/* The core's configuration for experiment e at rate scale `rate`; mc has
 * e->nmodels entries. */
static void core_cfg(const struct sym_experiment *e, double rate, struct sym_model_cfg *mc, struct sym_core_cfg *cc)
{
	for (size_t m = 0; m < e->nmodels; m++) {
		mc[m] = (struct sym_model_cfg){ &e->profiles[m], sym_ms(e->model_slo_ms[m]),
						rate * sym_experiment_model_rate(e, m), e->models[m].name, { NULL }, 0, 0 };
		for (int k = 1; k < e->nkinds; k++)
			mc[m].by_kind[k] = &e->profiles[(size_t)k * e->nmodels + m];
	}
	*cc = (struct sym_core_cfg){
		.nmodels = (int)e->nmodels,
		.models = mc,
		.ngpus = e->gpus,
		.nkinds = e->nkinds,
		.kinds = e->kinds,
		.gpu_kind = e->gpu_kind,
		.policy = e->policy,
		.gather = e->gather,
		.net = { sym_ms(e->ctrl_ms), sym_ms(e->data_ms), sym_ms(e->resp_ms) },
		.send_ahead = e->send_ahead,
	};
}

static void nop_dispatch(void *ctx, const struct sym_dispatch *d) { (void)ctx, (void)d; }
static void nop_drop(void *ctx, struct sym_request *r, enum sym_drop_reason why, sym_time now)
{
	(void)ctx, (void)r, (void)why, (void)now;
}
static void nop_cancel(void *ctx, int gpu, sym_time now) { (void)ctx, (void)gpu, (void)now; }

int sym_sim_check(const struct sym_experiment *e, char *err, size_t errlen)
{
	struct sym_model_cfg *mc = calloc(e->nmodels, sizeof(*mc));
	if (!mc)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	struct sym_core_cfg cc;
	core_cfg(e, sym_experiment_scale(e), mc, &cc);
	struct sym_sink sink = { NULL, nop_dispatch, nop_drop, nop_cancel };
	struct sym_core *c = NULL;
	char msg[300];
	int rc = sym_core_create_err(&c, &cc, &sink, msg, sizeof(msg));
	if (rc)
		snprintf(err, errlen, "%s", msg);
	sym_core_destroy(c);
	free(mc);
	return rc;
}

_Atomic uint64_t sym_sim_work_ns;

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sets up s for one run of e: results, GPUs, the core, the arrivals and
 * their first events. Returns 0 or -errno (a message in err, except for
 * -ENOMEM); s is freed by sim_free whatever the result. */
static int sim_setup(struct sim *s, const struct sym_run_opts *opts, struct sym_model_cfg *mc, char *err,
		     size_t errlen)
{
	const struct sym_experiment *e = s->e;
	struct sym_run_result *res = s->res;
	s->warmup = sym_s(e->warmup_s);
	s->end = sym_s(sym_experiment_duration(e));
	s->interval = sym_s(e->interval_s);
	if (s->interval < 1)
		s->interval = 1;
	s->arr_iv_end = s->interval;
	res->rate = opts->rate;
	res->window_s = sym_to_s(s->end - s->warmup);
	int rc = sym_run_result_alloc(res, e, s->end, s->interval);
	s->slo = calloc(e->nmodels, sizeof(*s->slo));
	s->arr = calloc(e->nmodels, sizeof(*s->arr));
	s->gpus = calloc((size_t)e->gpus, sizeof(*s->gpus));
	s->jitter_rng = gsl_rng_alloc(gsl_rng_mt19937);
	if (rc || !mc || !s->slo || !s->arr || !s->gpus || !s->jitter_rng)
		return -ENOMEM;
	gsl_rng_set(s->jitter_rng, (unsigned long)(sym_seed_stream(e->seed, 1u << 30) & 0xffffffffu) | 1);
	if (e->pfx_n) {
		if (!(s->pfx_rng = gsl_rng_alloc(gsl_rng_mt19937)))
			return -ENOMEM;
		gsl_rng_set(s->pfx_rng, (unsigned long)(sym_seed_stream(e->seed, (1u << 30) + 2) & 0xffffffffu) | 1);
	}
	for (size_t m = 0; m < e->nmodels; m++) {
		double cv = sym_experiment_size_cv(e, m);
		if (cv > 0 && !s->size_cv) {
			if (!(s->size_cv = calloc(e->nmodels, sizeof(double))) ||
			    !(s->size_rng = gsl_rng_alloc(gsl_rng_mt19937)))
				return -ENOMEM;
			gsl_rng_set(s->size_rng, (unsigned long)(sym_seed_stream(e->seed, (1u << 30) + 3) & 0xffffffffu) | 1);
		}
		if (s->size_cv)
			s->size_cv[m] = cv;
	}
	if (e->nqueries) {
		size_t nq = e->nqueries * SYM_QUERY_MAX_STAGES;
		s->qdl = calloc(nq, sizeof(double));
		s->qgam = calloc(nq, sizeof(double));
		s->qatt = calloc(nq, sizeof(uint64_t));
		s->qkids = calloc(nq, sizeof(uint64_t));
		if (!s->qdl || !s->qgam || !s->qatt || !s->qkids)
			return -ENOMEM;
		for (size_t q = 0; q < e->nqueries; q++) {
			const struct sym_query *x = &e->queries[q];
			for (int v = 0; v < x->nstages; v++) {
				s->qdl[q * SYM_QUERY_MAX_STAGES + (size_t)v] = x->deadline_ms[v];
				s->qgam[q * SYM_QUERY_MAX_STAGES + (size_t)v] = x->gamma[v];
			}
			if (x->replan_s > 0 && sym_s(x->replan_s) < s->end &&
			    ev_decide(&s->ev, sym_s(x->replan_s), DECIDE_REPLAN, (int)q))
				return -ENOMEM;
		}
		if (!(s->fan_rng = gsl_rng_alloc(gsl_rng_mt19937)))
			return -ENOMEM;
		gsl_rng_set(s->fan_rng, (unsigned long)(sym_seed_stream(e->seed, (1u << 30) + 1) & 0xffffffffu) | 1);
	}
	for (size_t m = 0; m < e->nmodels; m++)
		s->slo[m] = sym_ms(e->model_slo_ms[m]);
	if ((rc = sym_subclusters_build(e, opts->rate, e->autoscale.on ? e->autoscale.start_gpus : e->gpus, &s->sc, err,
					errlen)))
		return rc;
	s->nparts = s->sc.n;
	s->model_part = s->sc.model_part;
	s->gpu_part = s->sc.gpu_part;
	struct sym_core_cfg cc;
	core_cfg(e, opts->rate, mc, &cc);
	if (s->nparts > 1) {
		cc.nparts = s->nparts;
		cc.gpu_part = s->gpu_part;
		for (size_t m = 0; m < e->nmodels; m++)
			mc[m].part = s->model_part[m];
	}
	/* a batch that finished but whose GPU is not yet free cannot be cancelled:
	 * with a completion delay, preempting policies are refused */
	struct sym_sink sink = { s, on_dispatch, on_drop, e->done_ms > 0 ? NULL : on_cancel };
	char msg[300];
	if ((rc = sym_core_create_err(&s->core, &cc, &sink, msg, sizeof(msg)))) {
		if (s->nparts > 1)
			snprintf(err, errlen, "partition: cannot run sub-clusters: %s", msg);
		else
			snprintf(err, errlen, "cannot create the scheduling core: %s", msg);
		return rc == -ENOMEM ? -EINVAL : rc; /* keep the message */
	}
	s->qcap = sym_core_max_outstanding(s->core);
	sym_time first_epoch = sym_s(e->partition.phase_s + e->partition.epoch_s); /* (phase_s longer) */
	if (s->nparts > 1 && e->partition.epoch_s > 0 && first_epoch < s->end) {
		size_t n = e->nmodels;
		s->epoch_len = sym_s(e->partition.epoch_s);
		s->ep_arrivals = calloc(n, sizeof(uint64_t));
		s->move_to = malloc(n * sizeof(int));
		s->stalled = calloc(n, sizeof(bool));
		s->hold_mb = calloc((size_t)s->nparts, sizeof(double));
		s->gpu_to = calloc((size_t)e->gpus, sizeof(int));
		res->epochs = calloc((size_t)(s->end / s->epoch_len) + 1, sizeof(*res->epochs));
		if (!s->ep_arrivals || !s->move_to || !s->stalled || !s->hold_mb || !s->gpu_to || !res->epochs)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			s->move_to[i] = -1;
			s->hold_mb[s->model_part[i]] += model_static(e, i);
		}
		if ((rc = ev_decide(&s->ev, first_epoch, DECIDE_EPOCH, 0)))
			return rc;
	}
	if (e->autoscale.on) {
		const struct sym_autoscale_cfg *c = &e->autoscale;
		s->as_on = res->as.on = true;
		s->as_len = sym_s(c->interval_s);
		s->as_cfg = (struct sym_scale_cfg){ .rule = c->policy, .interval_s = c->interval_s, .target = c->target,
						    .release_fraction = c->release_fraction, .min_gpus = c->min_gpus,
						    .max_gpus = c->max_gpus, .cooldown_s = c->cooldown_s };
		res->as.decisions = calloc((size_t)(s->end / s->as_len) + 2, sizeof(*res->as.decisions));
		s->as_part = calloc((size_t)s->nparts, sizeof(*s->as_part));
		s->as_sp = calloc((size_t)s->nparts, sizeof(*s->as_sp));
		s->as_gs = calloc((size_t)e->gpus, sizeof(*s->as_gs));
		s->as_acts = calloc((size_t)e->gpus, sizeof(*s->as_acts));
		s->as_parts = s->nparts > 1;
		if (s->nparts > 1) {
			size_t n = ((size_t)(s->end / s->as_len) + 2) * (size_t)s->nparts;
			res->as.nparts = s->nparts;
			res->as.part_in_service = calloc(n, sizeof(int));
			res->as.part_delta = calloc(n, sizeof(int));
			res->as.part_busy = calloc(n, sizeof(double));
			res->as.part_bad = calloc(n, sizeof(double));
			if (!res->as.part_in_service || !res->as.part_delta || !res->as.part_busy || !res->as.part_bad)
				return -ENOMEM;
		}
		if (!res->as.decisions || !s->as_part || !s->as_sp || !s->as_gs || !s->as_acts)
			return -ENOMEM;
		/* GPUs start_gpus and up start out of service (with sub-clusters, in the part they would
		 * join first: sym_subclusters_build) */
		for (int g = c->start_gpus; g < e->gpus; g++) {
			s->gpus[g].svc = AS_OFF;
			if ((rc = sym_core_gpu_offline(s->core, g, ++s->gpus[g].epoch, 0)))
				return snprintf(err, errlen, "autoscale: the policy cannot take GPUs out of service"), rc;
		}
		as_count(s, 0, c->start_gpus, 0, 0);
		for (int g = 0; g < c->start_gpus; g++)
			as_count(s, 0, 0, 1, s->gpu_part[g]);
		sym_time first = sym_s(c->phase_s) + s->as_len; /* (the first interval is from 0: phase_s longer) */
		if (first < s->end && (rc = ev_decide(&s->ev, first, DECIDE_SCALE, 0)))
			return rc;
	}
	for (int g = 0; g < e->gpus; g++) {
		s->gpus[g].q = calloc((size_t)s->qcap, sizeof(*s->gpus[g].q));
		s->gpus[g].ends = calloc((size_t)s->qcap, sizeof(*s->gpus[g].ends));
		if (!s->gpus[g].q || !s->gpus[g].ends)
			return -ENOMEM;
	}
	if (opts->model_timeline) {
		res->model_timeline = calloc((res->nintervals ? res->nintervals : 1) * e->nmodels * 3, sizeof(uint64_t));
		if (!res->model_timeline)
			return -ENOMEM;
	}
	if ((rc = sym_experiment_arrivals(e, opts->rate, s->arr))) {
		snprintf(err, errlen, "cannot set up arrivals: %s", sym_strerror(rc));
		return rc;
	}
	for (size_t m = 0; m < e->nmodels; m++) {
		sym_time t = sym_arrivals_next(&s->arr[m]);
		if (t < s->end && (rc = ev_push(&s->ev, t, EV_ARRIVAL, (int)m)))
			return rc;
	}
	return 0;
}

/* ---- epochs (symphony-centralized-orchestration.md, Section 4.7) ---- */

static double model_static(const struct sym_experiment *e, size_t i)
{
	double x = 0;
	for (int k = 0; k < e->nkinds; k++)
		x = fmax(x, e->profiles[(size_t)k * e->nmodels + i].static_mb);
	return x;
}

/* Loading model i onto a GPU. */
static sym_time load_time(const struct sym_experiment *e, size_t i)
{
	double mb = e->models[i].file_mb >= 0 ? e->models[i].file_mb : model_static(e, i);
	return sym_ms(e->partition.load_ms + 1000 * mb / e->partition.load_mbps);
}

/* GPU gi finished its old part's batches: it loads its new part's models,
 * then goes online there (ACT_GPU_READY). */
static void gpu_left(struct sim *s, int gi, sym_time now)
{
	const struct sym_experiment *e = s->e;
	int j = s->gpu_to[gi];
	sym_time t = 0;
	for (size_t i = 0; i < e->nmodels; i++)
		if ((s->move_to[i] >= 0 ? s->move_to[i] : s->model_part[i]) == j)
			t += load_time(e, i);
	if (s->res->nepochs)
		s->res->epochs[s->res->nepochs - 1].load_gpu_s += sym_to_s(t);
	if (ev_act(&s->ev, now + t, ACT_GPU_READY, gi))
		s->err = -ENOMEM;
}

/* GPU gi has loaded its part's models: one the autoscaler added (coming up)
 * or one that moved at an epoch (leaving its old part) serves its part. */
static void on_gpu_ready(struct sim *s, int gi, sym_time now)
{
	struct gpu *g = &s->gpus[gi];
	if (g->svc == AS_UP)
		g->svc = AS_ON;
	if (g->leaving) {
		g->leaving = false;
		s->gpu_part[gi] = s->gpu_to[gi];
	}
	if (s->as_on)
		as_count(s, now, 0, 1, s->gpu_part[gi]);
	if (s->nparts > 1 && sym_core_gpu_set_part(s->core, gi, s->gpu_part[gi]))
		s->err = -EPROTO;
	sym_core_gpu_online(s->core, gi, ++g->epoch, now);
}

/* Model m's new part has loaded it: the model switches there, its queue
 * with it (sym_core_set_part, as schedd does; a stalled one's requests waited
 * in the core meanwhile); its old part unloads it. */
static void on_switch(struct sim *s, int m, sym_time now)
{
	int from = s->model_part[m], to = s->move_to[m];
	s->hold_mb[from] -= model_static(s->e, (size_t)m);
	s->model_part[m] = to;
	s->move_to[m] = -1;
	s->stalled[m] = false;
	if (sym_core_set_part(s->core, m, to, now))
		s->err = -EPROTO;
}

/* Every epoch: the rates measured since the last one, the partition
 * recomputed from the current assignment (deterministic local search under
 * the MILP's constraints and the change bound c_max: sym_subclusters_epoch),
 * and the moves by memory (control/moves.h: smooth, deferred or stalled),
 * timed here by their loads. GPUs that change part finish their batches,
 * load the new part's models, and go online there. */
static void on_epoch(struct sim *s, int idx, sym_time now)
{
	const struct sym_experiment *e = s->e;
	struct sym_run_result *res = s->res;
	size_t n = e->nmodels;
	int L = s->nparts;
	struct sym_epoch_result *x = &res->epochs[res->nepochs++];
	*x = (struct sym_epoch_result){ .t_s = sym_to_s(now) };
	sym_time next = now + s->epoch_len;
	if (next < s->end && ev_decide(&s->ev, next, DECIDE_EPOCH, idx + 1)) {
		s->err = -ENOMEM;
		return;
	}
	/* (the first epoch is partition.phase_s longer) */
	double secs = sym_to_s(idx ? s->epoch_len : sym_s(e->partition.phase_s) + s->epoch_len);
	double *rates = calloc(n, sizeof(double)), *load = calloc((size_t)L, sizeof(double));
	int *gpu_new = calloc((size_t)e->gpus, sizeof(int)), *assign = calloc(n, sizeof(int));
	bool *in_service = calloc((size_t)e->gpus, sizeof(bool));
	enum sym_move *mv = calloc(n, sizeof(*mv));
	if (!rates || !gpu_new || !assign || !in_service || !load || !mv) {
		s->err = -ENOMEM;
		goto out;
	}
	bool busy = s->gpu_move_pending; /* the last epoch's moves still under way: keep this one */
	for (size_t i = 0; i < n; i++) {
		rates[i] = (double)s->ep_arrivals[i] / secs;
		s->ep_arrivals[i] = 0;
		busy |= s->move_to[i] >= 0;
	}
	for (int g = 0; g < e->gpus; g++)
		busy |= s->gpus[g].leaving;
	/* the epoch's step (experiment/subcluster.h, schedd's too): the new assignment at the
	 * measured rates, the GPUs for it (with an autoscaler, those in service are split) and how
	 * each model moves by memory (control/moves.h) */
	for (int g = 0; s->as_on && g < e->gpus; g++)
		in_service[g] = s->gpus[g].svc == AS_ON && !s->gpus[g].leaving;
	struct sym_epoch_step st = { .rates = rates, .secs = secs, .model_part = s->model_part,
				     .gpu_part = s->gpu_part, .in_service = s->as_on ? in_service : NULL,
				     .busy = busy, .assign = assign, .gpu_new = gpu_new, .move = mv,
				     .held_mb = s->hold_mb };
	char err[256];
	int prc = sym_subclusters_epoch(e, &st, err, sizeof(err));
	if (prc < 0)
		s->err = prc;
	if (prc)
		goto out;
	x->repartitioned = true;
	x->rate_imbalance = st.rate_imbalance;
	x->mem_imbalance = st.mem_imbalance;
	/* the stages of control/moves.h, each loading one model after another per part: smooth
	 * moves from now, while the old part serves them; deferred ones from t1, the end of the
	 * smooth loads (the stalled ones are held and unloaded from their old parts then, their
	 * requests waiting in the core until the new part has loaded them); stalled ones from t2,
	 * the end of the deferred loads */
	static const enum sym_move stage_of[3] = { SYM_MOVE_SMOOTH, SYM_MOVE_DEFERRED, SYM_MOVE_STALLED };
	double t = 0, t1 = 0; /* the stage's start; the first's end */
	for (int pass = 0; pass < 3; pass++) {
		if (pass) {
			double longest = 0;
			for (int j = 0; j < L; j++) {
				longest = fmax(longest, load[j]);
				load[j] = 0;
			}
			t += longest;
			if (pass == 1)
				t1 = t;
		}
		for (size_t i = 0; i < n && !s->err; i++) {
			int to = assign[i];
			if (mv[i] != stage_of[pass])
				continue;
			x->models_moved++;
			s->move_to[i] = to;
			if (mv[i] == SYM_MOVE_STALLED) {
				x->stalled++;
				if (ev_act(&s->ev, now + sym_s(t1), ACT_HOLD, (int)i))
					s->err = -ENOMEM;
			}
			load[to] += sym_to_s(load_time(e, i));
			int gpus = 0;
			for (int g = 0; g < e->gpus; g++) /* (those in service: the others load when they join) */
				gpus += gpu_new[g] == to && (!s->as_on || s->gpus[g].svc == AS_ON);
			x->load_gpu_s += sym_to_s(load_time(e, i)) * gpus;
			if (ev_act(&s->ev, now + sym_s(t + load[to]), ACT_SWITCH, (int)i))
				s->err = -ENOMEM;
		}
	}
	if (s->err)
		goto out;
	/* GPUs change part once the models have moved (a moving model's old part
	 * keeps its GPUs while it still serves the model) */
	double last = 0;
	for (int j = 0; j < L; j++)
		last = fmax(last, t + load[j]);
	memcpy(s->gpu_to, gpu_new, (size_t)e->gpus * sizeof(int));
	s->gpu_move_pending = true;
	if (ev_act(&s->ev, now + sym_s(last), ACT_GPU_MOVES, idx))
		s->err = -ENOMEM;
out:
	free(rates);
	free(gpu_new);
	free(assign);
	free(in_service);
	free(load);
	free(mv);
}

/* The epoch's GPU moves: each GPU whose part changes leaves its old core
 * now; its batches run out, then it loads the new part's models. */
static void on_gpumove(struct sim *s, sym_time now)
{
	s->gpu_move_pending = false;
	struct sym_run_result *res = s->res;
	for (int g = 0; g < s->e->gpus; g++) {
		struct gpu *gg = &s->gpus[g];
		if (s->gpu_to[g] == s->gpu_part[g] || (s->as_on && (gg->svc != AS_ON || gg->leaving)))
			continue; /* (the autoscaler released it since the epoch) */
		res->epochs[res->nepochs - 1].gpus_moved++;
		gg->leaving = true;
		gg->skip_ends = gg->qn + gg->en;
		if (s->as_on) /* out of its part's service until it serves the new part */
			as_count(s, now, 0, -1, s->gpu_part[g]);
		if (sym_core_gpu_offline(s->core, g, ++gg->epoch, now)) {
			s->err = -EPROTO;
			return;
		}
		if (!gg->skip_ends)
			gpu_left(s, g, now);
	}
}

/* An arrival of model m at time t (the event at the top of the heap, which
 * it then replaces by the model's next arrival). Returns 0 or -errno. */
/* Query qi's split, re-planned at now from the fan-outs measured since the
 * last re-plan (an edge whose parent spawned nothing keeps its last value):
 * the requests that arrive from now on get the new deadlines, and the stage
 * models their new budgets as SLOs (sym_core_set_slo). */
static void on_replan(struct sim *s, int qi, sym_time now)
{
	const struct sym_experiment *e = s->e;
	const struct sym_query *q = &e->queries[qi];
	size_t qb = (size_t)qi * SYM_QUERY_MAX_STAGES;
	sym_time next = now + sym_s(q->replan_s);
	if (next < s->end && ev_decide(&s->ev, next, DECIDE_REPLAN, qi)) {
		s->err = -ENOMEM;
		return;
	}
	struct sym_query_stage st[SYM_QUERY_MAX_STAGES];
	for (int v = 0; v < q->nstages; v++) {
		if (v && s->qatt[qb + (size_t)q->parent[v]] > 0)
			s->qgam[qb + (size_t)v] = (double)s->qkids[qb + (size_t)v] / (double)s->qatt[qb + (size_t)q->parent[v]];
		st[v] = (struct sym_query_stage){ .name = e->models[q->model[v]].name, .profile = &e->profiles[q->model[v]],
						  .parent = q->parent[v], .gamma = v ? s->qgam[qb + (size_t)v] : 1,
						  .lat_factor = q->lat_factor };
	}
	for (int v = 0; v < q->nstages; v++)
		s->qatt[qb + (size_t)v] = s->qkids[qb + (size_t)v] = 0;
	struct sym_query_split out[SYM_QUERY_MAX_STAGES];
	double gpus, rate = e->rate * q->share > 0 ? e->rate * q->share : 1;
	char msg[256];
	if (sym_query_split(st, q->nstages, rate, q->slo_ms, q->eps_ms, out, &gpus, msg, sizeof(msg)))
		return; /* no split fits (cannot happen: the gammas do not change feasibility); keep the last */
	struct sym_run_result *res = s->res;
	if (sym_grow(&res->replans, &s->replan_cap, res->nreplans + 1, sizeof(*res->replans), 16)) {
		s->err = -ENOMEM;
		return;
	}
	struct sym_replan *r = &res->replans[res->nreplans++];
	*r = (struct sym_replan){ .t_s = sym_to_s(now), .query = qi, .nstages = q->nstages };
	for (int v = 0; v < q->nstages; v++) {
		s->qdl[qb + (size_t)v] = (v ? s->qdl[qb + (size_t)q->parent[v]] : 0) + out[v].budget_ms;
		r->gamma[v] = st[v].gamma;
		r->budget_ms[v] = out[v].budget_ms;
		/* the stage's model plans with its new budget (Nexus's sessions at their next epoch) */
		int m = q->model[v];
		if (out[v].budget_ms > 0)
			sym_core_set_slo(s->core, m, sym_ms(out[v].budget_ms));
	}
}

static int admit(struct sim *s, struct sym_request *r, int m, sym_time t);

static int on_arrival(struct sim *s, int m, sym_time t)
{
	struct sym_request *r = req_alloc(s);
	if (!r)
		return -ENOMEM;
	float given = (float)sym_arrivals_size(&s->arr[m]); /* a trace's size column, else 0 */
	*r = (struct sym_request){ .id = s->next_id++, .arrival = t, .deadline = t + s->slo[m], .model = m,
				   .size = given > 0 ? given : draw_size(s, m) };
	if (s->e->nqueries) { /* a query's root: the query arrives */
		uint32_t qi = query_new(s, s->e->query_of[m], t);
		if (!qi)
			return s->err;
		struct qrec *x = &s->qr[qi - 1];
		x->pending = x->nreq = 1;
		r->deadline = t + sym_ms(s->qdl[(size_t)x->query * SYM_QUERY_MAX_STAGES]);
		r->tag = qi;
	}
	int rc = admit(s, r, m, t);
	if (rc)
		return rc;
	sym_time next = sym_arrivals_next(&s->arr[m]);
	if (next < s->end)
		ev_replace_top(&s->ev, next, EV_ARRIVAL, m);
	else
		ev_pop(&s->ev);
	return 0;
}

/* Request r of model m (id, arrival, deadline and query set) arrives at t:
 * counted, and given to the core.
 * Returns 0 or -errno. */
static int admit(struct sim *s, struct sym_request *r, int m, sym_time t)
{
	struct sym_run_result *res = s->res;
	/* arrivals come in time order: the interval moves forward */
	while (t >= s->arr_iv_end) {
		s->arr_iv++;
		s->arr_iv_end += s->interval;
	}
	size_t iv = s->arr_iv;
	r->state = (int32_t)((iv < REQ_IV_FAR ? (uint32_t)iv : REQ_IV_FAR) << REQ_IV_SHIFT);
	if (t >= s->warmup && t < s->end) {
		r->state |= REQ_COUNTED;
		res->models[m].offered++;
	}
	if (iv < res->nintervals) {
		res->timeline[iv].offered++;
		if (res->model_timeline)
			res->model_timeline[(iv * res->nmodels + (size_t)m) * 3]++;
	}
	res->simulated_requests++;
	if (s->move_to && s->move_to[m] >= 0) {
		r->state |= REQ_MOVING;
		s->res->epochs[s->res->nepochs - 1].moved_requests++;
	}
	if (s->stalled && s->stalled[m] && s->res->nepochs) /* its move waits for memory: held in the core */
		s->res->epochs[s->res->nepochs - 1].held++;
	if (s->ep_arrivals)
		s->ep_arrivals[m]++;
	return sym_core_arrive(s->core, r, t);
}

/* A later stage's request arrives (its parent's response is back): the
 * oldest waiting one, whose arrival time this event is. */
static int on_stage(struct sim *s, sym_time t)
{
	struct sym_request *r = s->nsw ? s->stage_wait[s->swh] : NULL;
	if (!r || r->arrival != t)
		return -EPROTO; /* the FIFO's order is broken: a bug */
	s->swh = (s->swh + 1) % s->swcap;
	s->nsw--;
	return admit(s, r, r->model, t);
}

/* ---- the autoscaler (both Symphony papers: the bad rate and the idle
 * fraction as signals; experiment/config.h, struct sym_autoscale_cfg) ---- */

/* GPUs paid for and in service change by dpaid and dserving at now: their
 * GPU-seconds so far first, in total and per timeline interval. */
/* GPUs paid for and in service (in part `part`) change by dpaid and
 * dserving at now: the GPU-seconds up to now counted first. */
static void as_count(struct sim *s, sym_time now, int dpaid, int dserving, int part)
{
	sym_time t = now < s->end ? now : s->end, a = s->as_paid_t;
	if (t > a) {
		s->as_gpu_s += s->as_paid * sym_to_s(t - a);
		for (int j = 0; j < s->nparts; j++)
			s->as_part[j].serving_s += s->as_part[j].serving * sym_to_s(t - a);
		while (a < t) {
			size_t iv = interval_of(s, a);
			sym_time stop = (sym_time)(iv + 1) * s->interval;
			stop = stop < t ? stop : t;
			if (iv < s->res->nintervals) {
				s->res->timeline[iv].paid_gpu_s += s->as_paid * sym_to_s(stop - a);
				s->res->timeline[iv].serving_gpu_s += s->as_serving * sym_to_s(stop - a);
			}
			a = stop;
		}
		s->as_paid_t = t;
	}
	s->as_paid += dpaid;
	s->as_serving += dserving;
	if (dserving)
		s->as_part[part].serving += dserving;
	if (s->as_paid > s->res->as.peak_gpus)
		s->res->as.peak_gpus = s->as_paid;
}

static void gpu_released(struct sim *s, int gi, sym_time now)
{
	struct gpu *g = &s->gpus[gi];
	g->svc = AS_OFF;
	g->leaving = false;
	as_count(s, now, -1, 0, 0);
}

/* GPU g joins part j (control/scale.h's step chose it): it serves after
 * provision_s and the loading of the part's models. */
static void as_join(struct sim *s, int g, int j, sym_time now)
{
	const struct sym_experiment *e = s->e;
	sym_time load = 0;
	for (size_t i = 0; i < e->nmodels; i++)
		if (s->model_part[i] == j)
			load += load_time(e, i);
	s->gpus[g].svc = AS_UP;
	s->gpu_part[g] = j;
	if (s->gpu_to)
		s->gpu_to[g] = j; /* (an epoch's pending GPU moves leave it where it joins) */
	as_count(s, now, 1, 0, j);
	if (ev_act(&s->ev, now + sym_s(e->autoscale.provision_s) + load, ACT_GPU_READY, g))
		s->err = -ENOMEM;
}

/* GPU g, serving part j, is released: it leaves its core now (no new batch),
 * runs out what it holds, then stops being paid for. */
static void as_leave(struct sim *s, int g, int j, sym_time now)
{
	struct gpu *gg = &s->gpus[g];
	gg->svc = AS_DRAIN;
	as_count(s, now, 0, -1, j);
	gg->leaving = true;
	gg->skip_ends = gg->qn + gg->en;
	if (sym_core_gpu_offline(s->core, g, ++gg->epoch, now)) {
		s->err = -EPROTO;
		return;
	}
	if (!gg->skip_ends)
		gpu_released(s, g, now);
}

/* Every autoscale.interval_s: the interval's signals (the requests that
 * ended in it, good or bad, and the GPU time of the batches that ended in
 * it, over the GPUs in service) and control/scale.h's step, the runtime's
 * too: the simulator measures, and executes the GPUs joining and leaving. */
static void on_scale(struct sim *s, sym_time now)
{
	const struct sym_experiment *e = s->e;
	const struct sym_autoscale_cfg *c = &e->autoscale;
	struct sym_autoscale_result *as = &s->res->as;
	struct sym_scale_part *parts = s->as_sp;
	struct sym_scale_gpu *gs = s->as_gs;
	int L = s->nparts, on = 0, up = 0;
	for (int g = 0; g < e->gpus; g++) {
		const struct gpu *gg = &s->gpus[g];
		/* (a GPU moving at an epoch counts in its new part, as the runtime reports it) */
		bool moving = gg->svc == AS_ON && gg->leaving;
		gs[g].part = moving ? s->gpu_to[g] : s->gpu_part[g];
		gs[g].state = gg->svc == AS_OFF    ? SYM_SCALE_OFF
			      : gg->svc == AS_UP    ? SYM_SCALE_COMING
			      : gg->svc == AS_DRAIN ? SYM_SCALE_LEAVING
			      : moving              ? SYM_SCALE_MOVING
						    : SYM_SCALE_SERVING;
	}
	sym_scale_count(gs, e->gpus, parts, L);
	double busy_s = 0, serving_s = 0;
	uint64_t nbad = 0, nended = 0;
	/* busy over the GPU-time in service in the interval (GPUs released in it counted while they
	 * served; a batch running at the decision counted in the next); the requests that ended in
	 * it, and of them the bad; per part */
	as_count(s, now, 0, 0, 0);
	if (!s->as_parts) { /* one part: the run's counts (kept off the per-request path) */
		s->as_part[0].ended = s->ended - s->as_ended;
		s->as_part[0].bad = s->bad_all - s->as_bad;
		s->as_ended = s->ended;
		s->as_bad = s->bad_all;
	}
	for (int j = 0; j < L; j++) {
		struct as_part *ap = &s->as_part[j];
		struct sym_scale_part *p = &parts[j];
		sym_autoscale_advice_served(ap->ended - ap->bad, ap->bad, ap->busy_s, ap->serving_s,
					    p->serving > 0 ? p->serving : 1, c->threshold, &p->advice);
		p->busy_fraction = 1 - p->advice.idle_fraction;
		busy_s += ap->busy_s;
		serving_s += ap->serving_s;
		nbad += ap->bad;
		nended += ap->ended;
		on += p->serving;
		up += p->pending;
	}
	double wake_s;
	int nact = sym_scale_step(&s->as_cfg, &s->as_state, parts, L, gs, e->gpus, sym_to_s(now), s->as_acts, e->gpus,
				  &wake_s);
	int total = 0;
	for (int k = 0; k < nact; k++)
		total += s->as_acts[k].delta;
	double busy = serving_s > 0 ? busy_s / serving_s : 1, bad = nended ? (double)nbad / (double)nended : 0;
	if (as->ndecisions && as->decisions[as->ndecisions - 1].delta)
		as->decisions[as->ndecisions - 1].bad_rate_next = bad;
	size_t d = as->ndecisions++;
	as->decisions[d] = (struct sym_as_decision){ .t_s = sym_to_s(now), .in_service = on, .provisioned = on + up,
						     .busy_fraction = busy < 1 ? busy : 1, .bad_rate = bad,
						     .delta = total, .bad_rate_next = -1 };
	/* (the decision never adds and releases at once) */
	if (total > 0) {
		as->adds++;
		as->gpus_added += total;
	} else if (total < 0) {
		as->releases++;
		as->gpus_released -= total;
	}
	for (int j = 0; as->nparts > 1 && j < L; j++) {
		size_t at = d * (size_t)L + (size_t)j;
		as->part_in_service[at] = parts[j].serving;
		as->part_busy[at] = parts[j].busy_fraction;
		as->part_bad[at] = parts[j].advice.bad_rate;
	}
	for (int k = 0; k < nact; k++) {
		const struct sym_scale_action *x = &s->as_acts[k];
		if (as->nparts > 1)
			as->part_delta[d * (size_t)L + (size_t)x->part] += x->delta;
		(x->delta > 0 ? as_join : as_leave)(s, x->gpu, x->part, now);
	}
	for (int j = 0; j < L; j++)
		s->as_part[j] = (struct as_part){ .serving = s->as_part[j].serving };
	s->as_iv_start = now;
	sym_time next = now + sym_s(wake_s - sym_to_s(now));
	if (next < s->end && ev_decide(&s->ev, next, DECIDE_SCALE, 0))
		s->err = -ENOMEM;
}

/* What each kind of event does, as a table (an arrival, the common case,
 * first). Each returns 0 or -errno. */
static int ev_arrival(struct sim *s, const struct event *ev)
{
	return on_arrival(s, ev->idx, ev->t);
}

static int ev_finish(struct sim *s, const struct event *ev)
{
	if (ev->seq == s->gpus[ev->idx].finish_seq) /* else cancelled */
		on_finish(s, ev->idx, ev->t);
	return 0;
}

static int ev_free(struct sim *s, const struct event *ev)
{
	struct gpu *g = &s->gpus[ev->idx];
	struct sym_batch_end be = g->ends[g->eh];
	g->eh = ring_at(s, g->eh + 1);
	g->en--;
	report_end(s, ev->idx, ev->t, &be);
	return 0;
}

/* A control decision is due (the driver measures and calls the shared decision). */
static int ev_decide_due(struct sim *s, const struct event *ev)
{
	switch (ev->kind >> EV_WHAT_SHIFT) {
	case DECIDE_EPOCH:
		on_epoch(s, ev->idx, ev->t);
		return 0;
	case DECIDE_SCALE:
		on_scale(s, ev->t);
		return 0;
	case DECIDE_REPLAN:
		on_replan(s, ev->idx, ev->t);
		return 0;
	}
	return -EPROTO;
}

/* One of a decision's actions takes effect. */
static int ev_act_due(struct sim *s, const struct event *ev)
{
	switch (ev->kind >> EV_WHAT_SHIFT) {
	case ACT_SWITCH:
		on_switch(s, ev->idx, ev->t);
		return 0;
	case ACT_HOLD:
		s->stalled[ev->idx] = true;
		return sym_core_set_part(s->core, ev->idx, -1, ev->t) ? -EPROTO : 0; /* (held: no part) */
	case ACT_GPU_READY:
		on_gpu_ready(s, ev->idx, ev->t);
		return 0;
	case ACT_GPU_MOVES:
		on_gpumove(s, ev->t);
		return 0;
	}
	return -EPROTO;
}

static int ev_stage(struct sim *s, const struct event *ev)
{
	return on_stage(s, ev->t);
}

static int (*const ev_handlers[EV_NKINDS])(struct sim *s, const struct event *ev) = {
	[EV_ARRIVAL] = ev_arrival, [EV_FINISH] = ev_finish,	     [EV_FREE] = ev_free,
	[EV_STAGE] = ev_stage,	   [EV_DECIDE] = ev_decide_due, [EV_ACT] = ev_act_due,
};

/* The event loop: the earlier of the next event and the core's next wakeup,
 * until both are done (or the run stops early). Returns 0 or -errno. */
static int sim_loop(struct sim *s, const struct sym_run_opts *opts)
{
	struct sym_run_result *res = s->res;
	sym_time counted = 0; /* simulated time added to sym_sim_work_ns */
	int rc = 0;
	for (;;) {
		sym_time t_core = sym_core_next_wakeup(s->core);
		sym_time t_ev = s->ev.n ? s->ev.a[0].t : SYM_TIME_NEVER;
		if (t_ev == SYM_TIME_NEVER && t_core == SYM_TIME_NEVER)
			break;
		res->events++;
		if (t_core < t_ev) {
			sym_core_advance(s->core, t_core);
		} else {
			/* An arrival stays at the top while it is handled (whatever it
			 * pushes comes after it) and is then replaced by the next. */
			struct event ev = s->ev.a[0].kind == EV_ARRIVAL ? s->ev.a[0] : ev_pop(&s->ev);
			if ((rc = ev_handlers[ev.kind & ((1 << EV_WHAT_SHIFT) - 1)](s, &ev)))
				return rc;
		}
		if (s->err)
			return s->err;
		if ((opts->stop_after_bad && s->bad >= opts->stop_after_bad) || s->stop) {
			res->stopped_early = true;
			break;
		}
		if (!(res->events & 0xffff)) {
			sym_time now = t_ev < t_core ? t_ev : t_core;
			if (now > s->end)
				now = s->end;
			if (now > counted) {
				atomic_fetch_add_explicit(&sym_sim_work_ns, (uint64_t)(now - counted), memory_order_relaxed);
				counted = now;
			}
		}
	}
	if (s->end > counted && !res->stopped_early)
		atomic_fetch_add_explicit(&sym_sim_work_ns, (uint64_t)(s->end - counted), memory_order_relaxed);
	return s->err;
}

/* Conservation: every request that arrived ended exactly once. Returns 0 or
 * -EPROTO with the counts in err. */
static int check_conservation(const struct sim *s, char *err, size_t errlen)
{
	const struct sym_run_result *res = s->res;
	uint64_t counted_end = 0, counted_off = 0, queued = sym_core_queued(s->core);
	for (size_t m = 0; m < s->e->nmodels; m++) {
		const struct sym_model_result *mr = &res->models[m];
		counted_off += mr->offered;
		counted_end += mr->served + mr->late + mr->dropped;
	}
	uint64_t q_off = 0, q_end = 0;
	for (size_t i = 0; i < res->nqueries; i++) {
		q_off += res->queries[i].offered;
		q_end += res->queries[i].good + res->queries[i].late + res->queries[i].dropped;
	}
	if (!res->stopped_early && (s->q_started != s->q_ended || q_off != q_end)) {
		snprintf(err, errlen, "internal error: query conservation violated: %llu queries arrived, %llu ended; "
			 "counted %llu offered, %llu ended", (unsigned long long)s->q_started,
			 (unsigned long long)s->q_ended, (unsigned long long)q_off, (unsigned long long)q_end);
		return -EPROTO;
	}
	if (res->stopped_early ||
	    (s->ended == res->simulated_requests && counted_end == counted_off && !queued))
		return 0;
	snprintf(err, errlen,
		 "internal error: conservation violated: %llu requests arrived, %llu ended, %llu still "
		 "queued; counted %llu offered, %llu ended",
		 (unsigned long long)res->simulated_requests, (unsigned long long)s->ended,
		 (unsigned long long)queued, (unsigned long long)counted_off,
		 (unsigned long long)counted_end);
	return -EPROTO;
}

/* The totals over the models, the busy fraction and the GPUs used. */
static int sum_totals(const struct sim *s)
{
	const struct sym_experiment *e = s->e;
	struct sym_run_result *res = s->res;
	struct sym_model_result *t = &res->total;
	for (size_t m = 0; m < e->nmodels; m++) {
		struct sym_model_result *mr = &res->models[m];
		t->offered += mr->offered;
		t->served += mr->served;
		t->late += mr->late;
		t->dropped += mr->dropped;
		for (int k = 0; k < SYM_DROP_NREASONS; k++)
			t->dropped_by[k] += mr->dropped_by[k];
		t->batches += mr->batches;
		t->batched += mr->batched;
		for (int b = 0; b <= mr->max_batch; b++)
			t->batch_counts[b] += mr->batch_counts[b];
		if (sym_hist_merge(&t->latency, &mr->latency) || sym_hist_merge(&t->queueing, &mr->queueing))
			return -ENOMEM;
	}
	res->gpu_busy_fraction /= (double)e->gpus * res->window_s;
	if (s->nparts > 1) {
		res->nsub = s->nparts;
		res->model_part = malloc(e->nmodels * sizeof(int));
		res->sub_gpus = calloc((size_t)s->nparts, sizeof(int));
		res->sub_need = malloc((size_t)s->nparts * sizeof(double));
		if (e->nkinds > 1 && !(res->sub_gpus_kind = calloc((size_t)s->nparts * (size_t)e->nkinds, sizeof(int))))
			return -ENOMEM;
		if (!res->model_part || !res->sub_gpus || !res->sub_need)
			return -ENOMEM;
		memcpy(res->model_part, s->model_part, e->nmodels * sizeof(int));
		memcpy(res->sub_need, s->sc.need, (size_t)s->nparts * sizeof(double));
		for (int g = 0; g < e->gpus; g++) /* (with an autoscaler: those in service at the end) */
			if (s->gpu_part[g] >= 0 && (!s->as_on || s->gpus[g].svc == AS_ON)) {
				res->sub_gpus[s->gpu_part[g]]++;
				if (res->sub_gpus_kind)
					res->sub_gpus_kind[(size_t)s->gpu_part[g] * (size_t)e->nkinds +
							   (size_t)e->gpu_kind[g]]++;
			}
	}
	for (int g = 0; g < e->gpus; g++)
		res->gpus_used += s->gpus[g].used;
	if (s->as_on) {
		as_count((struct sim *)s, s->end, 0, 0, 0);
		res->as.gpu_hours = s->as_gpu_s / 3600;
		res->as.mean_gpus = s->end > 0 ? s->as_gpu_s / sym_to_s(s->end) : 0;
	}
	return 0;
}

static void sim_free(struct sim *s)
{
	const struct sym_experiment *e = s->e;
	sym_core_destroy(s->core);
	free(s->as_part);
	free(s->as_sp);
	free(s->as_gs);
	free(s->as_acts);
	free(s->ep_arrivals);
	free(s->move_to);
	free(s->stalled);
	free(s->hold_mb);
	free(s->gpu_to);
	sym_subclusters_finish(&s->sc);
	if (s->arr)
		for (size_t m = 0; m < e->nmodels; m++)
			sym_arrivals_finish(&s->arr[m]);
	free(s->arr);
	for (int g = 0; s->gpus && g < e->gpus; g++) {
		for (int i = 0; s->gpus[g].q && i < s->qcap; i++)
			free(s->gpus[g].q[i].reqs);
		free(s->gpus[g].q);
		free(s->gpus[g].ends);
	}
	free(s->gpus);
	free(s->slo);
	if (s->jitter_rng)
		gsl_rng_free(s->jitter_rng);
	if (s->fan_rng)
		gsl_rng_free(s->fan_rng);
	if (s->pfx_rng)
		gsl_rng_free(s->pfx_rng);
	if (s->size_rng)
		gsl_rng_free(s->size_rng);
	free(s->size_cv);
	free(s->qr);
	free(s->qfree);
	free(s->qdl);
	free(s->qgam);
	free(s->qatt);
	free(s->qkids);
	free(s->stage_wait);
	while (s->chunks) {
		struct pool_chunk *c = s->chunks;
		s->chunks = c->next;
		free(c);
	}
	free(s->free_list);
	free(s->ev.a);
}

int sym_sim_run(const struct sym_experiment *e, const struct sym_run_opts *opts, struct sym_run_result *res,
		char *err, size_t errlen)
{
	memset(res, 0, sizeof(*res));
	if (!e->resolved)
		return snprintf(err, errlen, "internal error: experiment not resolved"), -EINVAL;
	double wall0 = wall_now();
	struct sim s = { .e = e, .res = res, .trace = opts->trace, .stop_model_bad = opts->stop_model_bad };
	struct sym_model_cfg *mc = calloc(e->nmodels, sizeof(*mc));
	int rc = sim_setup(&s, opts, mc, err, errlen);
	if (!rc)
		rc = sim_loop(&s, opts);
	if (!rc)
		rc = check_conservation(&s, err, errlen);
	if (!rc)
		rc = sum_totals(&s);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	res->wall_seconds = wall_now() - wall0;
	sim_free(&s);
	free(mc);
	return rc;
}
