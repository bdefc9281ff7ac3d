/* clockwork: Clockwork's scheduler as published (Gujarati et al., "Serving
 * DNNs like Clockwork", OSDI'20), read from its source: the INFER4
 * controller (src/clockwork/controller/concurrent_infer_and_load_scheduler
 * .cpp and .h), the GPU tracker (src/clockwork/controller/worker_tracker.h),
 * the sliding-window estimator (src/clockwork/sliding_window.h), the size
 * lookup (make_batch_lookup in src/clockwork/util.cpp), the command line's
 * defaults (src/controller.cpp) and the worker's timing checks
 * (ExecTask::run in src/clockwork/task.cpp). Every place where the older
 * version of this file departed from it is a parameter, so that the effect of
 * each can be measured.
 *
 * What INFER4 does.
 *
 *  - Batch sizes. A model has the sizes TVM compiled for it (1, 2, 4, 8, 16)
 *    that are at most max_batch (16 on the command line). A number of
 *    requests is rounded down to a supported size (batch_lookup).
 *  - Internal deadline. A request that arrived at a with SLO s is aimed at
 *    a + max(s - 5 ms, schedule_ahead + 5 ms) (RequestImpl::set_slo; 5 ms is
 *    `buffer`; with s < 5 ms the subtraction wraps and s is kept).
 *  - Estimates. estimate(b) is the 99th percentile (interpolated) of the last
 *    10 measured execution times of size b (Model::add_measurement); the
 *    profiled time until the first measurement.
 *  - Strategies. An arriving request gets one strategy per supported size b,
 *    priority = its deadline - estimate(b) (Model::enqueue). Every GPU keeps
 *    the strategies of its loaded models in its own priority queue, lowest
 *    priority first: the largest sizes of the oldest requests come first.
 *    Strategy objects are shared by the GPUs; they are invalidated when their
 *    request is batched or dropped.
 *  - Schedule ahead. A GPU tracks when its outstanding actions will be done:
 *    available = the end of its last finished action + the estimates of
 *    those outstanding, and at least now + 1 ms (`future`; WorkerTracker::
 *    available). While available < now + schedule_ahead (10 ms) it pops its
 *    top strategy and tries it at t = available (GPU::schedule_infer). A
 *    popped strategy is gone for that GPU whether or not it made a batch. So
 *    a batch is decided about 10 ms before it starts, and requests arriving
 *    after that cannot join it.
 *  - Trying a strategy (Model::try_dequeue) at t: it fails unless its
 *    deadline is after t + estimate(b). Queue heads whose deadline is before
 *    t are dropped (check_timeouts). It needs b requests counted from its own
 *    request to the newest (else the reverse scan below). That count is
 *    rounded down to a supported size; a larger one replaces b if it still
 *    meets the strategy's deadline, else the strategy fails. Older requests
 *    that would finish after their deadline are dropped ("skipped"), and the
 *    batch is the b oldest requests left.
 *  - The reverse scan (as published, and kept here) counts from the newest
 *    request only those whose deadline is *not* after the completion time,
 *    and gives the strategy the deadline and request of the b-th: it succeeds
 *    only when the b newest requests would all finish after their internal
 *    deadline (they may still meet the real one, 5 ms later).
 *  - The action goes to the worker with earliest = now and latest = its
 *    planned start + latest_delta (InferAction::set_expectations;
 *    latest_delta is schedule_ahead, 10 ms, on the INFER4 command line). The
 *    worker runs a GPU's actions in order and rejects one that could only
 *    start after its latest (ExecTask::run: "could not start in time").
 *  - A request still queued at its internal deadline is answered with a
 *    timeout (the admission thread's timeout queue).
 *
 * Here. Requests wait in a per-model FIFO (Clockwork's queue, in arrival
 * order). Each GPU has a heap with one entry per live request: the request's
 * next strategy for that GPU, in the order of their priorities (fixed when
 * made). Popping the entry and pushing the request's next strategy gives the
 * same order as Clockwork's heap of all strategies, with a fixed tie-break
 * (priority, arrival, size). Strategies are per GPU kind (each kind has its
 * own estimates) and shared by the GPUs of a kind, so that a strategy changed
 * by one GPU (the scan's inherited deadline, a raised size) is changed for
 * all, as in Clockwork. The GPU tracker follows WorkerTracker: a batch end
 * sets `available`'s base to its measured end (the moment the core hears of
 * a rejection), and its measured duration goes into the estimator.
 *
 * Simplified, and why.
 *  - Polling. INFER4's threads poll every GPU round robin without pause. We
 *    poll on events: after an arrival every GPU (starting one further each
 *    time), after a batch end that GPU, and a per-GPU timer fires when its
 *    available time comes within schedule_ahead of now.
 *  - The timeout is applied at the head of the FIFO, at its internal
 *    deadline; with one SLO per model (the simulator, the runtime) heads have
 *    the earliest deadlines and this is exact.
 *  - Not modelled: GPU clock scaling, weights loading (every model is on
 *    every GPU), the tracker's 10 ms clamp for work that never reports back,
 *    the network executor's send deadline. Percentiles are interpolated in
 *    double precision (Clockwork: float).
 *  - Network. INFER4 plans with `future` only. We also delay a batch's start
 *    by the core's ctrl + data*b and add resp to its completion (zero in the
 *    paper's cases).
 *  - A GPU holds at most c->max_outstanding batches (8 in the simulator;
 *    2 in the runtime, whose schedd sets max_ahead 1: a backend holds the
 *    running batch and one planned after it, and rejects a batch that cannot
 *    start by its latest start, as Clockwork's worker does); Clockwork has
 *    no such bound.
 *  - The core plans a batch sent to a busy GPU to start at that GPU's
 *    predicted free time (the profile's l(b)), and the driver does not start
 *    it earlier. Clockwork's worker starts an action as soon as the one
 *    before ends (earliest = now). The two differ only when a batch ends
 *    before its planned finish (jitter): we leave the GPU idle until the next
 *    batch's planned start.
 *  - Drop reasons: a timeout or check_timeouts is `expired`, a skipped
 *    request `early`, a rejected batch `rejected` (by the driver).
 *
 * The departures, one parameter each (defaults: the published values).
 *   select=strategy|latest   latest: the older rule of this file (below)
 *   sizes=pow2|all           all: every size, as the Symphony authors ran it
 *                            (their Section 5: "we added support for arbitrary
 *                            batch sizes to Clockwork"); pow2=1|0 is an alias
 *   max=N                    largest size (16; 0: the model's largest)
 *   ahead=MS                 schedule_ahead (10; 0: only idle GPUs take work)
 *   margin=MS                the deadline buffer (5; 0: the SLO itself)
 *   reject=MS|off            latest_delta (10; off: never rejected)
 *   future=MS                (1; 0: an idle GPU starts now)
 *   window=N, pct=P          the estimator (10, 99; window=0: the profile)
 *   legacy                   (a bare value) all of them as this file had
 *                            them: select=latest,sizes=all,max=0,ahead=0,
 *                            margin=0,reject=off,future=0,window=0. Later keys
 *                            override it (legacy,sizes=pow2 was pow2=1).
 *
 * The latest rule (select=latest). A GPU that may take work (idle, or within
 * schedule_ahead of free) at t runs, across all models, the candidate with
 * the least slack: per model the largest supported size b <= the queue whose
 * completion (t + estimate(b), network terms included) meets the head's
 * internal deadline d, slack d - completion; ties go to the lower model id.
 * All of a model's candidates share the head, so its largest feasible size
 * has the earliest latest executable moment. Queues are the core's shard
 * queues (deadline order); a head that cannot make its internal deadline
 * even alone on an idle GPU of the fastest kind (planned at now + future,
 * with the current estimate: the same arithmetic as the choice, so that an
 * infeasible head never blocks its queue) is dropped as expired, and a timer
 * drops it when nothing else happens. With ahead=0 GPUs are filled in id
 * order in sym_core_fill's passes, so `legacy` gives the older file's
 * dispatches exactly; with ahead > 0 the polling order rotates as in INFER4.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/policy_api.h"

#define TIMER_DROP 0 /* timeouts (strategy) or head expiry (latest); GPU g's eligibility is timer g + 1 */

/* ---- parameters ---- */

enum { SELECT_STRATEGY, SELECT_LATEST };
enum { SIZES_POW2, SIZES_ALL };

struct params {
	int select;       /* SELECT_STRATEGY (published) or SELECT_LATEST */
	int sizes;        /* batch sizes: SIZES_POW2 (published) or SIZES_ALL */
	int max;          /* the largest batch size (published 16); 0: the model's largest */
	double ahead_ms;  /* schedule ahead (published 10); 0: idle GPUs only */
	double margin_ms; /* the internal deadline's buffer (published 5) */
	double reject_ms; /* latest start after the planned one (published 10); < 0: none */
	double future_ms; /* the earliest start assumed for a new action (published 1) */
	int window;       /* measured latencies per estimate (published 10); 0: the profile */
	double pct;       /* the estimate's percentile of them (published 99) */
};
SYM_POLICY_PARAMS(struct params, params_of)

static const struct sym_param_word select_words[] = {
	{ "strategy", SELECT_STRATEGY }, { "latest", SELECT_LATEST }, { NULL, 0 },
};
static const struct sym_param_word sizes_words[] = { { "pow2", SIZES_POW2 }, { "all", SIZES_ALL }, { NULL, 0 } };
static const struct sym_param_word pow2_words[] = {
	{ "1", SIZES_POW2 }, { "true", SIZES_POW2 }, { "0", SIZES_ALL }, { "false", SIZES_ALL }, { NULL, 0 },
};
static const struct sym_param_word reject_words[] = { { "off", -1 }, { NULL, 0 } };

/* The defaults are the published values (src/controller.cpp INFER4 defaults
 * and the Scheduler constants in concurrent_infer_and_load_scheduler.h). */
#define MS(field) .type = SYM_PARAM_NUM, .offset = offsetof(struct params, field), .unit = "ms", .lo = 0, .hi = 1e6
static const struct sym_param params[] = {
	{ .key = "select", .type = SYM_PARAM_ENUM, .offset = offsetof(struct params, select), .words = select_words,
	  .def = SELECT_STRATEGY, .help = "per-(request, size) strategies, or the least-slack candidate over models "
					  "(the older rule)" },
	{ .key = "sizes", .type = SYM_PARAM_ENUM, .offset = offsetof(struct params, sizes), .words = sizes_words,
	  .def = SIZES_POW2, .help = "batch sizes: powers of two, or every size" },
	{ .key = "pow2", .type = SYM_PARAM_ENUM, .offset = offsetof(struct params, sizes), .words = pow2_words,
	  .alias = true },
	{ .key = "max", .type = SYM_PARAM_INT, .offset = offsetof(struct params, max), .lo = 0, .hi = 100000,
	  .def = 16, .help = "the largest size; 0: the model's largest batch" },
	{ .key = "ahead", MS(ahead_ms), .def = 10, .help = "schedule ahead; 0: idle GPUs only" },
	{ .key = "margin", MS(margin_ms), .def = 5, .help = "the internal deadline's buffer" },
	{ .key = "reject", MS(reject_ms), .words = reject_words, .def = 10,
	  .help = "a worker rejects an action this late" },
	{ .key = "future", MS(future_ms), .def = 1, .help = "the earliest start assumed for a new action" },
	{ .key = "window", .type = SYM_PARAM_INT, .offset = offsetof(struct params, window), .lo = 0, .hi = 1000,
	  .def = 10, .help = "measured latencies per estimate; 0: the profile" },
	{ .key = "pct", .type = SYM_PARAM_NUM, .offset = offsetof(struct params, pct), .lo = 0, .hi = 100, .def = 99,
	  .meta = "P", .help = "the estimate's percentile of them" },
	{ .key = NULL },
};
#undef MS

static const struct sym_policy_preset presets[] = {
	{ "legacy", "select=latest,sizes=all,max=0,ahead=0,margin=0,reject=off,future=0,window=0",
	  "the older rule and values of this policy; later keys override them" },
	{ NULL, NULL, NULL },
};

/* An action is planned at least `future` ahead, so a GPU only takes work
 * while that is within schedule_ahead (Clockwork needs future < ahead). */
static int check(const struct sym_policy *p, char *err, size_t errlen)
{
	const struct params pp = params_of(p);
	if (pp.ahead_ms > 0 && pp.ahead_ms <= pp.future_ms) {
		char a[32], f[32];
		snprintf(err, errlen, "ahead (%s ms) must be 0 or more than future (%s ms): no GPU would ever take work",
			 sym_policy_fmt_num(pp.ahead_ms, a, sizeof(a)), sym_policy_fmt_num(pp.future_ms, f, sizeof(f)));
		return -EINVAL;
	}
	return 0;
}

/* ---- state ---- */

/* One strategy (Clockwork's StrategyImpl): a request and a batch size. */
struct strat {
	sym_time prio;     /* deadline - estimate(size) when made; never changes */
	sym_time deadline; /* internal deadline (the reverse scan may inherit another) */
	uint64_t seq;      /* its request (the scan may inherit another) */
	int size;          /* batch size (a larger size may replace it) */
};

/* A queued request with its strategies: per kind k, nsizes[k] of them from
 * s[off[k]], sorted by priority. Freed when no heap entry refers to it and it
 * has left its queue. */
struct creq {
	struct sym_request *r;
	uint64_t seq;   /* per model, in arrival order (Clockwork's request id) */
	uint64_t gseq;  /* over all models: heap ties */
	sym_time idl;   /* internal deadline */
	int refs;       /* heap entries, plus 1 while queued */
	bool valid;     /* still queued: its strategies are valid */
	struct creq *next_free;
	struct strat s[];
};

/* A heap entry: request q's strategy number pos for this GPU's kind. */
struct hent {
	sym_time prio;
	uint64_t gseq;
	struct creq *q;
	int pos;
};

/* The estimator of one (model, kind, size). */
struct est {
	sym_time cur;   /* the estimate */
	int n, head;    /* samples held, oldest */
	sym_time *win;  /* window samples */
};

struct cmodel {
	struct creq **ring; /* the FIFO (strategy mode) */
	size_t cap, head, len;
	uint64_t next_seq;
	int nsizes[SYM_MAX_KINDS];   /* supported sizes per kind */
	int *sizes[SYM_MAX_KINDS];   /* ascending */
	int *lut[SYM_MAX_KINDS];     /* lut[n], n = 0..cap: index of the largest size <= n (n >= 1) */
	int off[SYM_MAX_KINDS];      /* kind k's strategies in creq.s */
	struct est *est[SYM_MAX_KINDS];
};

/* A batch outstanding on a GPU, oldest first. */
struct outb {
	sym_time est; /* its estimate when sent */
	int model, size;
};

struct cgpu {
	struct hent *heap; /* strategy mode */
	size_t len, cap;
	/* WorkerTracker: the base (the last end) and the outstanding batches */
	sym_time begin, total;
	struct outb out[SYM_GPU_MAX_OUTSTANDING];
	int oh, on;
	uint32_t epoch;
};

struct chunk {
	struct chunk *next;
};

struct state {
	bool strategy;            /* select=strategy */
	sym_time ahead, margin, reject, future; /* reject < 0: never */
	int window;
	double pct;
	struct cmodel *models;
	struct cgpu *gpus;
	int stride;               /* strategies per creq */
	size_t rec;               /* bytes per creq */
	struct chunk *chunks;
	struct creq *free_list;
	uint64_t gseq;
	uint64_t held;            /* requests in the FIFOs */
	int rr;                   /* the GPU polled first after the next arrival */
	struct sym_request **batch; /* c->maxb */
	struct creq **taken;      /* c->maxb */
	sym_time *sorted;         /* window */
};

/* ---- estimates ---- */

static int size_index(const struct cmodel *cm, int k, int n)
{
	int ns = cm->nsizes[k];
	int cap = cm->sizes[k][ns - 1];
	return n >= cap ? ns - 1 : cm->lut[k][n < 1 ? 1 : n];
}

static sym_time estimate(const struct state *st, int m, int k, int idx)
{
	return st->models[m].est[k][idx].cur;
}

/* SlidingWindow::get_percentile: position p*(n-1) between two samples. */
static sym_time percentile(struct state *st, const struct est *e, double pct)
{
	int n = e->n;
	for (int i = 0; i < n; i++) {
		sym_time v = e->win[i];
		int j = i;
		while (j > 0 && st->sorted[j - 1] > v) {
			st->sorted[j] = st->sorted[j - 1];
			j--;
		}
		st->sorted[j] = v;
	}
	double pos = pct / 100.0 * (n - 1);
	int up = (int)ceil(pos), down = (int)floor(pos);
	if (up == down)
		return st->sorted[up];
	return (sym_time)((double)st->sorted[up] * (pos - down) + (double)st->sorted[down] * (up - pos));
}

static void measure(struct state *st, int m, int k, int size, sym_time dur)
{
	if (!st->window)
		return;
	struct cmodel *cm = &st->models[m];
	int idx = size_index(cm, k, size);
	if (cm->sizes[k][idx] != size)
		return; /* not one of ours */
	struct est *e = &cm->est[k][idx];
	if (e->n < st->window) {
		e->win[(e->head + e->n) % st->window] = dur;
		e->n++;
	} else {
		e->win[e->head] = dur;
		e->head = (e->head + 1) % st->window;
	}
	e->cur = percentile(st, e, st->pct);
}

/* A batch of b on GPU g's kind, planned at t (the GPU's available time): its
 * execution starts at t, or when its plan and inputs are there. */
static sym_time start_at(const struct sym_core *c, int m, int b, sym_time t, sym_time now)
{
	const struct sym_net *net = &c->shards[m].net;
	sym_time s = now + net->ctrl + net->data * b;
	return s > t ? s : t;
}

static sym_time completion(const struct sym_core *c, const struct state *st, int m, int k, int idx, sym_time t,
			   sym_time now)
{
	int b = st->models[m].sizes[k][idx];
	return start_at(c, m, b, t, now) + estimate(st, m, k, idx) + c->shards[m].net.resp;
}

/* RequestImpl::set_slo: arrival + max(slo - margin, ahead + margin). */
static sym_time internal_deadline(const struct state *st, const struct sym_request *r)
{
	sym_time slo = r->deadline - r->arrival;
	sym_time e = slo >= st->margin ? slo - st->margin : slo;
	if (e < st->ahead + st->margin)
		e = st->ahead + st->margin;
	return r->arrival + e;
}

/* ---- the GPU tracker (WorkerTracker) ---- */

static void tracker_add(struct cgpu *g, sym_time now, sym_time est, int m, int size)
{
	if (!g->on)
		g->begin = now;
	g->out[(g->oh + g->on) % SYM_GPU_MAX_OUTSTANDING] = (struct outb){ est, m, size };
	g->on++;
	g->total += est;
}

/* Whether GPU g may take a batch now, and if so when it would start
 * (*t); if not, when it may (*when, SYM_TIME_NEVER: at an event). */
static bool eligible(const struct sym_core *c, const struct state *st, int g, sym_time now, sym_time *t,
		     sym_time *when)
{
	const struct sym_gpu_state *gs = &c->gpus[g];
	*when = SYM_TIME_NEVER;
	if (gs->off || gs->nout >= c->max_outstanding)
		return false;
	const struct cgpu *cg = &st->gpus[g];
	sym_time a = now + st->future;
	if (!st->ahead) {
		*t = a;
		return gs->nout == 0;
	}
	if (gs->nout > 0 && cg->begin + cg->total > a)
		a = cg->begin + cg->total;
	if (a < now + st->ahead) {
		*t = a;
		return true;
	}
	*when = a - st->ahead + 1;
	return false;
}

/* ---- requests ---- */

static struct creq *creq_alloc(struct state *st)
{
	if (!st->free_list) {
		const int n = 64;
		struct chunk *ch = malloc(sizeof(struct creq) + (size_t)n * st->rec);
		if (!ch)
			return NULL;
		ch->next = st->chunks;
		st->chunks = ch;
		char *base = (char *)ch + sizeof(struct creq); /* keeps creq alignment */
		for (int i = n - 1; i >= 0; i--) {
			struct creq *q = (struct creq *)(base + (size_t)i * st->rec);
			q->next_free = st->free_list;
			st->free_list = q;
		}
	}
	struct creq *q = st->free_list;
	st->free_list = q->next_free;
	return q;
}

static void creq_release(struct state *st, struct creq *q)
{
	if (--q->refs == 0) {
		q->next_free = st->free_list;
		st->free_list = q;
	}
}

static struct creq *fifo_at(const struct cmodel *cm, size_t i)
{
	return cm->ring[(cm->head + i) & (cm->cap - 1)];
}

/* Removes the FIFO's head: it is batched or dropped (its strategies are
 * invalid from now on). */
static struct creq *fifo_pop(struct state *st, struct cmodel *cm)
{
	struct creq *q = fifo_at(cm, 0);
	cm->head = (cm->head + 1) & (cm->cap - 1);
	cm->len--;
	st->held--;
	q->valid = false;
	return q;
}

static void fifo_drop(struct sym_core *c, struct state *st, struct cmodel *cm, enum sym_drop_reason why,
		      sym_time now)
{
	struct creq *q = fifo_pop(st, cm);
	sym_core_drop(c, q->r, why, now);
	creq_release(st, q);
}

/* ---- the heaps (strategy mode) ---- */

static bool hless(const struct hent *a, const struct hent *b)
{
	if (a->prio != b->prio)
		return a->prio < b->prio;
	if (a->gseq != b->gseq)
		return a->gseq < b->gseq;
	return a->pos < b->pos;
}

static void hpush(struct cgpu *g, struct hent e)
{
	size_t i = g->len++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!hless(&e, &g->heap[p]))
			break;
		g->heap[i] = g->heap[p];
		i = p;
	}
	g->heap[i] = e;
}

static struct hent hpop(struct cgpu *g)
{
	struct hent top = g->heap[0];
	struct hent last = g->heap[--g->len];
	size_t i = 0, n = g->len;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const struct hent *best = &last;
		if (l < n && hless(&g->heap[l], best))
			m = l, best = &g->heap[l];
		if (r < n && hless(&g->heap[r], best))
			m = r;
		if (m == i)
			break;
		g->heap[i] = g->heap[m];
		i = m;
	}
	if (n)
		g->heap[i] = last;
	return top;
}

static int hreserve(struct cgpu *g, size_t n)
{
	return sym_grow(&g->heap, &g->cap, g->len + n, sizeof(*g->heap), 64);
}

/* ---- INFER4 (select=strategy) ---- */

/* Sends reqs[0..size) of model m to GPU g, planned at t with estimate est. */
static void send(struct sym_core *c, struct state *st, int m, int g, int size, sym_time t, sym_time est,
		 sym_time now)
{
	sym_time start = start_at(c, m, size, t, now);
	sym_time reject_after = st->reject < 0 ? SYM_TIME_NEVER : start + st->reject;
	tracker_add(&st->gpus[g], now, est, m, size);
	st->gpus[g].epoch = c->gpus[g].epoch;
	sym_core_dispatch_ahead(c, m, g, st->batch, size, now, now, reject_after);
}

/* Model::try_dequeue: tries strategy pos of q for GPU g (kind k) at its
 * available time t. */
static void try_dequeue(struct sym_core *c, struct state *st, int g, int k, struct creq *q, int pos, sym_time t,
			sym_time now)
{
	int m = q->r->model;
	struct cmodel *cm = &st->models[m];
	struct strat *s = &q->s[cm->off[k] + pos];
	int idx = size_index(cm, k, s->size);
	sym_time done = completion(c, st, m, k, idx, t, now);
	if (s->deadline <= done)
		return;
	/* check_timeouts */
	while (cm->len && fifo_at(cm, 0)->idl < t)
		fifo_drop(c, st, cm, SYM_DROP_EXPIRED, now);
	if (cm->len < (size_t)s->size)
		return;
	/* requests from the strategy's own to the newest */
	int64_t avail = 1 + (int64_t)(fifo_at(cm, cm->len - 1)->seq - s->seq);
	if (avail < s->size) {
		/* the reverse scan, as published (see the header) */
		avail = 0;
		for (size_t i = cm->len; i-- > 0;) {
			const struct creq *x = fifo_at(cm, i);
			if (x->idl > done)
				break;
			if (++avail == s->size) {
				s->deadline = x->idl;
				s->seq = x->seq;
				break;
			}
		}
		if (avail < s->size)
			return;
	}
	/* a larger size if it still meets the strategy's deadline */
	int cidx = size_index(cm, k, avail > 100000 ? 100000 : (int)avail);
	if (s->size < cm->sizes[k][cidx]) {
		sym_time cdone = completion(c, st, m, k, cidx, t, now);
		if (cdone > s->deadline)
			return;
		s->size = cm->sizes[k][cidx];
		idx = cidx;
		done = cdone;
	}
	/* skip older requests that would finish too late */
	while (cm->len && fifo_at(cm, 0)->seq != s->seq && fifo_at(cm, 0)->idl < done)
		fifo_drop(c, st, cm, SYM_DROP_EARLY, now);
	if (cm->len < (size_t)s->size)
		return;
	int size = s->size;
	for (int i = 0; i < size; i++) {
		st->taken[i] = fifo_pop(st, cm);
		st->batch[i] = st->taken[i]->r;
	}
	send(c, st, m, g, size, t, estimate(st, m, k, idx), now);
	for (int i = 0; i < size; i++)
		creq_release(st, st->taken[i]);
}

/* GPU::schedule_infer for GPU g: while it may take work, pops its top
 * strategy and tries it. */
static void poll(struct sym_core *c, struct state *st, int g, sym_time now)
{
	struct cgpu *cg = &st->gpus[g];
	int k = c->gpus[g].kind;
	for (;;) {
		/* invalid strategies go first */
		while (cg->len && !cg->heap[0].q->valid)
			creq_release(st, hpop(cg).q);
		sym_time t, when;
		if (!cg->len || !eligible(c, st, g, now, &t, &when)) {
			if (cg->len && when != SYM_TIME_NEVER)
				sym_core_timer_set(c, g + 1, when);
			else
				sym_core_timer_clear(c, g + 1);
			return;
		}
		struct hent e = hpop(cg);
		struct creq *q = e.q;
		int m = q->r->model;
		q->refs++; /* held while we try it */
		if (e.pos + 1 < st->models[m].nsizes[k]) {
			struct strat *next = &q->s[st->models[m].off[k] + e.pos + 1];
			hpush(cg, (struct hent){ next->prio, q->gseq, q, e.pos + 1 });
		} else {
			creq_release(st, q);
		}
		try_dequeue(c, st, g, k, q, e.pos, t, now);
		creq_release(st, q);
	}
}

/* The admission thread's timeouts: heads at their internal deadline. Keeps
 * the timer at the next one. */
static void timeouts(struct sym_core *c, struct state *st, sym_time now)
{
	sym_time next = SYM_TIME_NEVER;
	for (int m = 0; m < c->nmodels; m++) {
		struct cmodel *cm = &st->models[m];
		while (cm->len && fifo_at(cm, 0)->idl <= now)
			fifo_drop(c, st, cm, SYM_DROP_EXPIRED, now);
		if (cm->len && fifo_at(cm, 0)->idl < next)
			next = fifo_at(cm, 0)->idl;
	}
	if (next == SYM_TIME_NEVER)
		sym_core_timer_clear(c, TIMER_DROP);
	else
		sym_core_timer_set(c, TIMER_DROP, next);
}

static int arrive_strategy(struct sym_core *c, struct state *st, struct sym_request *r, sym_time now)
{
	int m = r->model;
	struct cmodel *cm = &st->models[m];
	/* room first, so that a failure changes nothing */
	if (cm->len == cm->cap) {
		size_t cap = cm->cap ? 2 * cm->cap : 64;
		struct creq **ring = malloc(cap * sizeof(*ring));
		if (!ring)
			return -ENOMEM;
		for (size_t i = 0; i < cm->len; i++)
			ring[i] = fifo_at(cm, i);
		free(cm->ring);
		cm->ring = ring;
		cm->cap = cap;
		cm->head = 0;
	}
	for (int g = 0; g < c->ngpus; g++)
		if (hreserve(&st->gpus[g], 1))
			return -ENOMEM;
	struct creq *q = creq_alloc(st);
	if (!q)
		return -ENOMEM;
	q->r = r;
	q->seq = cm->next_seq++;
	q->gseq = st->gseq++;
	q->idl = internal_deadline(st, r);
	q->refs = 1;
	q->valid = true;
	/* Model::enqueue: a strategy per size, sorted by priority (ties: the
	 * larger size first) */
	for (int k = 0; k < c->nkinds; k++) {
		struct strat *s = &q->s[cm->off[k]];
		for (int i = 0; i < cm->nsizes[k]; i++) {
			int idx = cm->nsizes[k] - 1 - i;
			struct strat x = { q->idl - estimate(st, m, k, idx), q->idl, q->seq, cm->sizes[k][idx] };
			int j = i;
			while (j > 0 && s[j - 1].prio > x.prio) {
				s[j] = s[j - 1];
				j--;
			}
			s[j] = x;
		}
	}
	cm->ring[(cm->head + cm->len) & (cm->cap - 1)] = q;
	cm->len++;
	st->held++;
	for (int g = 0; g < c->ngpus; g++) {
		if (c->gpus[g].off)
			continue;
		q->refs++;
		hpush(&st->gpus[g], (struct hent){ q->s[cm->off[c->gpus[g].kind]].prio, q->gseq, q, 0 });
	}
	/* every GPU has new strategies: poll them, starting one further each time */
	int g0 = st->rr;
	st->rr = (st->rr + 1) % c->ngpus;
	for (int i = 0; i < c->ngpus; i++)
		poll(c, st, (g0 + i) % c->ngpus, now);
	timeouts(c, st, now);
	return 0;
}

/* ---- the latest rule (select=latest) ---- */

static sym_time head_idl(const struct sym_core *c, const struct state *st, int m)
{
	return internal_deadline(st, sym_queue_at(&c->shards[m].queue, 0));
}

/* How long after now a batch of one of model m finishes at best: on an idle
 * GPU of the fastest kind (planned at now + future), with its estimate. */
static sym_time best_one(const struct sym_core *c, const struct state *st, int m, sym_time now)
{
	sym_time best = SYM_TIME_NEVER;
	for (int k = 0; k < c->nkinds; k++) {
		sym_time d = completion(c, st, m, k, 0, now + st->future, now) - now;
		if (d < best)
			best = d;
	}
	return best;
}

/* Drops model m's heads that cannot meet their internal deadline even alone
 * on an idle GPU of the fastest kind (with the profile and no future: the
 * core's expiry rule, now + le(1) > d); returns the queue length. */
static size_t expire(struct sym_core *c, const struct state *st, int m, sym_time now)
{
	struct sym_shard *s = &c->shards[m];
	if (!sym_queue_len(&s->queue))
		return 0;
	sym_time one = best_one(c, st, m, now);
	while (sym_queue_len(&s->queue) && now + one > head_idl(c, st, m)) {
		struct sym_request *r = sym_queue_pop(&s->queue);
		s->dropped_since_batch++;
		sym_core_drop(c, r, SYM_DROP_EXPIRED, now);
	}
	return sym_queue_len(&s->queue);
}

/* The model whose candidate on kind k, planned at t, has the least slack
 * (ties: lower id), its size index in *idx; -1 when none is feasible. */
static int pick_latest(struct sym_core *c, const struct state *st, int k, sym_time t, sym_time now, int *idx)
{
	int best = -1;
	sym_time best_slack = 0;
	for (int m = 0; m < c->nmodels; m++) {
		size_t n = expire(c, st, m, now);
		if (!n)
			continue;
		const struct cmodel *cm = &st->models[m];
		sym_time d = head_idl(c, st, m);
		for (int i = size_index(cm, k, n > 100000 ? 100000 : (int)n); i >= 0; i--) {
			sym_time done = completion(c, st, m, k, i, t, now);
			if (done > d)
				continue;
			if (best < 0 || d - done < best_slack) {
				best = m;
				best_slack = d - done;
				*idx = i;
			}
			break;
		}
	}
	return best;
}

/* Fills every GPU that may take work, in id order (sym_core_fill's passes:
 * a kind that got nothing is not asked again in a pass; the pass repeats
 * when a dispatch followed such a miss). Then, while a GPU may take work
 * and requests wait, the timer is held at the next head expiry; GPUs that
 * may take work later get their own timers. */
static void fill_latest(struct sym_core *c, struct state *st, sym_time now, bool arrival)
{
	/* idle GPUs only: the lowest id first; ahead: as in poll's order */
	int g0 = 0;
	if (st->ahead && arrival) {
		g0 = st->rr;
		st->rr = (st->rr + 1) % c->ngpus;
	}
	bool again = true;
	while (again) {
		again = false;
		bool none[SYM_MAX_KINDS] = { false };
		bool missed = false;
		for (int i = 0; i < c->ngpus; i++) {
			int g = (g0 + i) % c->ngpus;
			int k = c->gpus[g].kind;
			sym_time t, when;
			while (!none[k] && eligible(c, st, g, now, &t, &when)) {
				int idx = 0;
				int m = pick_latest(c, st, k, t, now, &idx);
				if (m < 0) {
					none[k] = missed = true;
					break;
				}
				struct sym_shard *s = &c->shards[m];
				int size = st->models[m].sizes[k][idx];
				sym_time est = estimate(st, m, k, idx);
				if (c->gpus[g].nout == 0 && st->reject < 0) {
					tracker_add(&st->gpus[g], now, est, m, size);
					st->gpus[g].epoch = c->gpus[g].epoch;
					sym_core_dispatch_queue(c, m, g, size, now);
				} else {
					sym_shard_take(s, size, st->batch);
					send(c, st, m, g, size, t, est, now);
				}
				if (missed)
					again = true;
			}
		}
	}
	bool waiting = false, idle = false;
	for (int m = 0; m < c->nmodels && !waiting; m++)
		waiting = sym_queue_len(&c->shards[m].queue) > 0;
	for (int g = 0; g < c->ngpus; g++) {
		sym_time t, when;
		if (eligible(c, st, g, now, &t, &when))
			idle = true;
		else if (waiting && when != SYM_TIME_NEVER)
			sym_core_timer_set(c, g + 1, when);
		else
			sym_core_timer_clear(c, g + 1);
	}
	sym_time next = SYM_TIME_NEVER;
	if (idle) {
		for (int m = 0; m < c->nmodels; m++) {
			if (!expire(c, st, m, now))
				continue;
			sym_time e = head_idl(c, st, m) - best_one(c, st, m, now) + 1;
			if (e < next)
				next = e;
		}
	}
	if (next == SYM_TIME_NEVER)
		sym_core_timer_clear(c, TIMER_DROP);
	else
		sym_core_timer_set(c, TIMER_DROP, next);
}

/* ---- the hooks ---- */

static int arrive(struct sym_core *c, struct sym_request *r, sym_time now)
{
	struct state *st = c->sched_state;
	if (st->strategy)
		return arrive_strategy(c, st, r, now);
	int err = sym_shard_push(&c->shards[r->model], r, now);
	if (err)
		return err;
	fill_latest(c, st, now, true);
	return 0;
}

/* GPU g's oldest batch ended, or g came back online: its tracker. */
static void track_end(struct sym_core *c, struct state *st, int g, sym_time now)
{
	struct sym_gpu_state *gs = &c->gpus[g];
	struct cgpu *cg = &st->gpus[g];
	if (gs->epoch != cg->epoch || cg->on != gs->nout + 1) {
		/* back online (its batches were forgotten): nothing to measure */
		cg->on = cg->oh = 0;
		cg->total = 0;
		cg->begin = now;
		cg->epoch = gs->epoch;
	} else {
		/* WorkerTracker::success / error: the front action is done */
		const struct outb *b = &cg->out[cg->oh];
		const struct sym_batch_end *e = &gs->last_end;
		cg->total -= b->est;
		cg->begin = e->rejected ? now : e->end;
		/* A batch end with no real start (start == end: a driver that only
		 * reports when it hears of an end, sym_sched_gpu_free) is not a
		 * measurement: it would teach the estimator 0 ms. */
		if (!e->rejected && e->end > e->start)
			measure(st, b->model, gs->kind, b->size, e->end - e->start);
		cg->oh = (cg->oh + 1) % SYM_GPU_MAX_OUTSTANDING;
		cg->on--;
	}
}

/* A batch end or a timer (arrivals come through arrive). The latest rule
 * fills every free GPU whatever happened; strategies poll the GPU that freed
 * (then expire timeouts), or the GPU or timeouts whose timer fired. */
static void react(struct sym_core *c, enum sym_sched_event ev, int id, sym_time now)
{
	struct state *st = c->sched_state;
	if (ev == SYM_SCHED_GPU_FREE)
		track_end(c, st, id, now);
	if (!st->strategy) {
		fill_latest(c, st, now, false);
	} else if (ev == SYM_SCHED_GPU_FREE) {
		poll(c, st, id, now);
		timeouts(c, st, now);
	} else if (id == TIMER_DROP) {
		timeouts(c, st, now);
	} else {
		poll(c, st, id - 1, now);
	}
}

static uint64_t held(const struct sym_core *c)
{
	const struct state *st = c->sched_state;
	return st ? st->held : 0;
}

static void finish(struct sym_core *c)
{
	struct state *st = c->sched_state;
	if (!st)
		return;
	for (int m = 0; m < c->nmodels && st->models; m++) {
		struct cmodel *cm = &st->models[m];
		free(cm->ring);
		for (int k = 0; k < c->nkinds; k++) {
			free(cm->sizes[k]);
			free(cm->lut[k]);
			for (int i = 0; cm->est[k] && i < cm->nsizes[k]; i++)
				free(cm->est[k][i].win);
			free(cm->est[k]);
		}
	}
	for (int g = 0; g < c->ngpus && st->gpus; g++)
		free(st->gpus[g].heap);
	while (st->chunks) {
		struct chunk *ch = st->chunks;
		st->chunks = ch->next;
		free(ch);
	}
	free(st->models);
	free(st->gpus);
	free(st->batch);
	free(st->taken);
	free(st->sorted);
	free(st);
	c->sched_state = NULL;
}

static int init(struct sym_core *c, char *err, size_t errlen)
{
	const struct params p = params_of(&c->policy);
	struct state *st = calloc(1, sizeof(*st));
	if (!st)
		goto oom;
	c->sched_state = st;
	st->strategy = p.select == SELECT_STRATEGY;
	st->ahead = sym_ms(p.ahead_ms);
	st->margin = sym_ms(p.margin_ms);
	st->reject = p.reject_ms < 0 ? -1 : sym_ms(p.reject_ms);
	st->future = sym_ms(p.future_ms);
	st->window = p.window;
	st->pct = p.pct;
	if (st->ahead && st->ahead <= st->future) {
		snprintf(err, errlen, "ahead must be 0 or more than future");
		return -EINVAL;
	}
	st->models = calloc((size_t)c->nmodels, sizeof(*st->models));
	st->gpus = calloc((size_t)c->ngpus, sizeof(*st->gpus));
	st->batch = malloc((size_t)c->maxb * sizeof(*st->batch));
	st->taken = malloc((size_t)c->maxb * sizeof(*st->taken));
	st->sorted = malloc((size_t)(st->window ? st->window : 1) * sizeof(*st->sorted));
	if (!st->models || !st->gpus || !st->batch || !st->taken || !st->sorted)
		goto oom;
	for (int m = 0; m < c->nmodels; m++) {
		struct cmodel *cm = &st->models[m];
		int off = 0;
		for (int k = 0; k < c->nkinds; k++) {
			int mb = sym_core_max_batch(c, m, k);
			int cap = p.max && p.max < mb ? p.max : mb;
			int ns = 0;
			for (int b = 1; b <= cap; b = p.sizes == SIZES_POW2 ? 2 * b : b + 1)
				ns++;
			cm->nsizes[k] = ns;
			cm->off[k] = off;
			off += ns;
			cm->sizes[k] = malloc((size_t)ns * sizeof(int));
			cm->lut[k] = malloc((size_t)(cap + 1) * sizeof(int));
			cm->est[k] = calloc((size_t)ns, sizeof(struct est));
			if (!cm->sizes[k] || !cm->lut[k] || !cm->est[k])
				goto oom;
			int i = 0;
			for (int b = 1; b <= cap; b = p.sizes == SIZES_POW2 ? 2 * b : b + 1)
				cm->sizes[k][i++] = b;
			/* make_batch_lookup: n -> the largest size <= n */
			cm->lut[k][0] = 0;
			for (int n = 1, j = 0; n <= cap; n++) {
				while (j + 1 < ns && cm->sizes[k][j + 1] <= n)
					j++;
				cm->lut[k][n] = j;
			}
			for (i = 0; i < ns; i++) {
				cm->est[k][i].cur = c->shards[m].prof_k[k]->lat[cm->sizes[k][i]];
				if (st->window && !(cm->est[k][i].win = malloc((size_t)st->window * sizeof(sym_time))))
					goto oom;
			}
		}
		if (off > st->stride)
			st->stride = off;
	}
	st->rec = sizeof(struct creq) + (size_t)st->stride * sizeof(struct strat);
	st->rec = (st->rec + 15) & ~(size_t)15;
	for (int g = 0; g < c->ngpus; g++) {
		st->gpus[g].begin = 0;
		st->gpus[g].epoch = c->gpus[g].epoch;
	}
	if (sym_core_timers_reserve(c, c->ngpus + 1))
		goto oom;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

static const struct sym_sched_ops sched = {
	.init = init,
	.finish = finish,
	.arrive = arrive,
	.react = react,
	.held = held,
};

const struct sym_policy_ops sym_policy_clockwork = {
	.name = "clockwork",
	.summary = "Clockwork's INFER4 as published: per-(request, size) strategies by deadline - estimate, "
		   "batches decided 10 ms ahead, sizes 1,2,4,8,16, late actions rejected",
	.params = params,
	.presets = presets,
	.params_size = sizeof(struct params),
	.check = check,
	.sched = &sched,
};
