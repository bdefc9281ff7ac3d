/* nexus: Nexus (SOSP'19) - epoch planning by squishy bin packing, frontends
 * routing by weighted round robin, backends cycling through their models.
 *
 * Epochs. At init the planner (core/nexus_plan.h) packs the models at their
 * configured rates (the shards' lambda, seeded from rate_hint); then every
 * epoch seconds it re-plans from the rates measured over the epoch that just
 * ended (arrivals counted here: the policy holds its own queues, so the
 * shards never see arrivals). A model's rate is at least one request per
 * epoch (the measurement's resolution), so every servable model keeps a
 * backend. An epoch without arrivals changes nothing and is not followed by
 * another until the next arrival (so a run ends when its work does).
 *
 * Placement. Planned GPUs are mapped onto the cluster's GPUs incrementally:
 * the (planned GPU, GPU) pairs are ranked by how many of the planned GPU's
 * models the GPU already hosts, and taken greedily (most shared models first,
 * then the lower indices); planned GPUs that share nothing take free GPUs,
 * ones hosting nothing first. A GPU whose sessions or duty cycle changed
 * starts a new cycle grid; one that kept them keeps its grid. Requests queued
 * at a GPU for a model it no longer hosts are re-routed through their
 * frontend to the model's new backends (dropped as expired only when the
 * model has no backend left).
 *
 * Spare GPUs (spare=use, the default). A plan sized exactly to the measured
 * rates runs every session at its planned rate with no headroom, so Poisson
 * arrivals alone make it shed several percent of requests at any load. When
 * the plan for the rates fits a kind with GPUs to spare, the rates are scaled
 * up instead to the largest s >= 1 (doubling, then bisection) whose plan
 * still fits, so that the headroom is spread over all the kind's GPUs, as an
 * operator given those GPUs would plan. Later kinds then get nothing to place
 * and stay idle. spare=idle plans the rates as measured and leaves the GPUs
 * outside the plan idle (the planner's own GPU count).
 *
 * Not enough GPUs. Kinds are planned one after the other, in index order, each
 * on its own profiles and memory: kind k gets the largest scale s <= 1 (by
 * bisection, 30 steps) such that the plan for s times the rates still to place
 * needs at most its GPU count; what it cannot take (1 - s of each rate) goes on
 * to the next kind. So a homogeneous cluster plans s * rates and its backends
 * get 1/s times their planned load, which early drop sheds. When even a
 * vanishing load does not fit (models that cannot share a GPU outnumber the
 * GPUs: memory, or SLOs so tight that their cycles hold one batch), models are
 * left out of that kind one by one until the rest fits: first those that have
 * no backend now (so that noise in the measured rates does not swap the
 * served set every epoch), lowest rate first. Their requests go to later
 * kinds, or are dropped on arrival when no kind hosts them.
 *
 * Frontends. Request i goes to frontend i mod N (a round-robin load
 * balancer in front of them), which picks one of the model's backends by
 * smooth weighted round robin, weights the planned rates (each backend's
 * current weight grows by its weight, the largest is chosen (ties: the
 * first) and loses the total). Each frontend keeps its own state, so N
 * frontends interleave their choices independently, as separate Nexus
 * frontends do; at every plan frontend f starts f/N of a round into each
 * rotation (independent frontends are not in phase).
 *
 * Backends. A planned GPU with duty cycle D and sessions s_0..s_{n-1} (batch
 * b_j, lat_j = the time a batch of b_j holds the GPU) gives session j fixed
 * slots at origin + k*D + off_j, off_j = lat_0 + ... + lat_{j-1}, so that each
 * session's batches are D apart and a request waits at most D, exactly the
 * planner's latency bound D + lat(b) + resp <= SLO. At a slot the GPU takes
 * the session's own deadline-ordered queue and runs the largest feasible batch
 * of at most b_j:
 *   - early (default): the sliding window of Nexus: drop the head while a
 *     batch of k = min(b_j, queued) started now would miss the head's
 *     deadline, then run k;
 *   - lazy: drop the head only when it cannot finish even alone, then run the
 *     largest n <= min(b_j, queued) that meets the head's deadline.
 * An empty queue skips its slot (the GPU idles until the next slot). A slot
 * passed while the GPU was still busy is taken when it frees. Saturated GPUs
 * have one session and D = lat(B): their slots are back to back. A GPU with
 * nothing queued keeps no timer; the next request to it resumes the grid at
 * its next slot (the grid starts at the first request after a (re)plan).
 *
 * Latencies. The planner sees, per model and kind, lat(b) = le(b) - resp: a
 * dispatched batch holds its GPU for the control message, the input transfer
 * and the execution; the response's trip back is the planner's delay. The
 * core's gathering rule (the shards' drop rule) is not used: drop= decides.
 *
 * Timers: one per GPU (ids 0..ngpus-1, the next slot) plus the epoch timer
 * (id ngpus).
 *
 * Parameters: frontends=N (default 1), epoch=S seconds (default 30),
 * drop=early|lazy (default early), trigger=F and min_epoch=S below, and
 * plan=full|incremental (default full: every epoch plans from scratch and
 * maps the plan onto the GPUs with the most overlap; incremental, Section
 * 6.1's last paragraph: the GPUs keep their sessions at the new rates, an
 * overloaded one evicts its cheapest sessions, the least used are emptied
 * onto the others when the load falls, and what is left is packed anew;
 * one GPU kind only (else full), spare GPUs then stay idle).
 *
 * Epochs triggered by change (nexus.md Section 5: "a new epoch can also be
 * triggered by large changes in workload", at most one every 10 s). With
 * trigger=F > 0, an arrival of model m whose count since the epoch began
 * differs from what its planned rate predicts by more than F of it (and by
 * more than three Poisson standard deviations, so that noise does not
 * trigger) starts a new epoch at once, once min_epoch (default 10 s) has
 * passed since the last. A model that stops arriving is noticed at the next
 * epoch only. Off by default (trigger=0), as before.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/nexus_plan.h"
#include "core/policy_api.h"

#define NX_MAX_FRONTENDS 4096
#define NX_EPOCH_DEFAULT 30.0
#define NX_EPOCH_MIN 1e-3
#define NX_EPOCH_MAX 1e6
#define NX_MIN_EPOCH_DEFAULT 10.0
#define NX_SCALE_MIN 1e-6
#define NX_BISECT 30
#define NX_SCALE_MAX 1024.0 /* spare=use: the largest headroom factor tried */
#define NX_BISECT_UP 12     /* spare=use: bisection steps (about 0.02% of the scale) */
/* A rate still to place below this fraction of the model's rate is done. */
#define NX_REM_EPS 1e-9

/* ---- parameters ---- */

enum { DROP_EARLY, DROP_LAZY };
enum { SPARE_USE, SPARE_IDLE };
enum { PLAN_FULL, PLAN_INCREMENTAL };

struct params {
	int frontends;
	double epoch_s;
	int drop;  /* DROP_EARLY, DROP_LAZY */
	int spare; /* SPARE_USE, SPARE_IDLE */
	double trigger;
	double min_epoch_s;
	int plan;  /* PLAN_FULL, PLAN_INCREMENTAL */
};
SYM_POLICY_PARAMS(struct params, params_of)

static const struct sym_param_word drop_words[] = { { "early", DROP_EARLY }, { "lazy", DROP_LAZY }, { NULL, 0 } };
static const struct sym_param_word spare_words[] = { { "use", SPARE_USE }, { "idle", SPARE_IDLE }, { NULL, 0 } };
static const struct sym_param_word plan_words[] = { { "full", PLAN_FULL }, { "incremental", PLAN_INCREMENTAL },
						    { NULL, 0 } };

static const struct sym_param params[] = {
	{ .key = "frontends", .type = SYM_PARAM_INT, .offset = offsetof(struct params, frontends), .lo = 1,
	  .hi = NX_MAX_FRONTENDS, .def = 1, .help = "frontends routing requests (request i goes to i mod N)" },
	{ .key = "epoch", .type = SYM_PARAM_NUM, .offset = offsetof(struct params, epoch_s), .lo = NX_EPOCH_MIN,
	  .hi = NX_EPOCH_MAX, .unit = "s", .def = NX_EPOCH_DEFAULT, .help = "time between plans" },
	{ .key = "drop", .type = SYM_PARAM_ENUM, .offset = offsetof(struct params, drop), .words = drop_words,
	  .def = DROP_EARLY, .help = "a backend's drop rule: Nexus's sliding window, or only what cannot finish" },
	{ .key = "trigger", .type = SYM_PARAM_NUM, .offset = offsetof(struct params, trigger), .lo = 0, .hi = 1e6,
	  .def = 0, .help = "re-plan early when a model's rate moves by more than this fraction (0: only every epoch)" },
	{ .key = "min_epoch", .type = SYM_PARAM_NUM, .offset = offsetof(struct params, min_epoch_s), .lo = NX_EPOCH_MIN,
	  .hi = NX_EPOCH_MAX, .unit = "s", .def = NX_MIN_EPOCH_DEFAULT,
	  .help = "the least time between two plans when triggered by change" },
	{ .key = "spare", .type = SYM_PARAM_ENUM, .offset = offsetof(struct params, spare), .words = spare_words,
	  .def = SPARE_USE, .help = "spread the headroom over spare GPUs, or leave them idle" },
	{ .key = "plan", .type = SYM_PARAM_ENUM, .offset = offsetof(struct params, plan), .words = plan_words,
	  .def = PLAN_FULL, .help = "each epoch: plan from scratch, or incrementally (Section 6.1: keep the GPUs, evict "
				    "the cheapest sessions of an overloaded one, release the least used; one GPU kind)" },
	{ .key = NULL },
};

/* ---- state ---- */

struct nx_sess {
	int model;
	int batch;
	double rate;  /* planned rate (the frontends' weight) */
	sym_time off; /* slot offset within the cycle */
};

struct nx_gpu {
	struct nx_sess *sess; /* nsess entries (room for nmodels) */
	int nsess;
	sym_time duty;
	sym_time origin; /* start of the current cycle; -1: the grid starts at the next request */
	sym_time slot;   /* the next slot, origin + sess[pos].off */
	int pos;         /* its session */
	bool idle;       /* not busy, nothing queued, no timer */
	uint64_t held;   /* requests in its queues */
};

struct nx_route {
	int gpu;
	double w;
};

struct nx {
	int nf;
	bool lazy;
	bool spare_idle;
	bool incremental; /* plan=incremental */
	sym_time epoch;
	double min_rate;
	double trigger;
	sym_time min_epoch;
	uint64_t triggered; /* epochs started by a change */
	int nm, ng, nk;
	struct sym_queue *q; /* per (GPU, model): q[g * nm + m] */
	struct nx_gpu *gpu;
	struct nx_sess *sbuf[2]; /* session lists, current and next plan: ng * nm each */
	int cur;
	int *new_nsess;
	sym_time *new_duty;
	sym_time **lat; /* lat[m * nk + k][b]: how long a batch of b holds a GPU of kind k */
	/* routing table: model m's backends are routes[roff[m] .. roff[m+1]) */
	int *roff;
	struct nx_route *routes;
	int nroutes;
	double *wrr; /* frontend f's current weights: wrr[f * nroutes + e] */
	/* epochs */
	uint64_t *count;
	sym_time epoch_start;
	bool armed;
	uint64_t held;
	struct sym_request **batch; /* one batch (c->maxb) */
	/* planning scratch */
	double *rates, *rem;
	bool *excl;
	struct sym_nexus_model *pm;
	int *mark, *touched, *pg;
	bool *taken;
};

static inline struct sym_queue *queue_of(struct nx *st, int g, int m)
{
	return &st->q[(size_t)g * (size_t)st->nm + (size_t)m];
}

/* ---- backends ---- */

static void serve(struct sym_core *c, struct nx *st, int g, const struct nx_sess *s, sym_time now)
{
	int m = s->model;
	int k = c->gpus[g].kind;
	const sym_time *le = sym_core_le(c, m, k);
	int maxb = sym_core_max_batch(c, m, k);
	int b = s->batch < maxb ? s->batch : maxb;
	struct sym_queue *q = queue_of(st, g, m);
	struct nx_gpu *x = &st->gpu[g];
	int n = 0;
	while (sym_queue_len(q)) {
		size_t len = sym_queue_len(q);
		sym_time budget = sym_queue_at(q, 0)->deadline - now;
		if (st->lazy) {
			if (le[1] <= budget) {
				n = sym_le_fit(le, b, len, budget);
				break;
			}
		} else {
			int w = len < (size_t)b ? (int)len : b;
			if (le[w] <= budget) {
				n = w;
				break;
			}
		}
		struct sym_request *r = sym_queue_pop(q);
		st->held--;
		x->held--;
		sym_core_drop(c, r, le[1] > budget ? SYM_DROP_EXPIRED : SYM_DROP_EARLY, now);
	}
	if (!n)
		return;
	sym_queue_pop_n(q, (size_t)n, st->batch);
	st->held -= (uint64_t)n;
	x->held -= (uint64_t)n;
	sym_core_dispatch(c, m, g, st->batch, n, now);
}

/* Runs GPU g's due slots; leaves it busy, waiting for its next slot (timer)
 * or idle. */
static void step(struct sym_core *c, struct nx *st, int g, sym_time now)
{
	struct nx_gpu *x = &st->gpu[g];
	for (;;) {
		if (c->gpus[g].busy) {
			sym_core_timer_clear(c, g);
			return;
		}
		if (!x->held || !x->nsess) {
			x->idle = true;
			sym_core_timer_clear(c, g);
			return;
		}
		if (x->slot > now) {
			sym_core_timer_set(c, g, x->slot);
			return;
		}
		const struct nx_sess *s = &x->sess[x->pos];
		if (++x->pos == x->nsess) {
			x->pos = 0;
			x->origin += x->duty;
		}
		x->slot = x->origin + x->sess[x->pos].off;
		serve(c, st, g, s, now);
	}
}

/* An idle GPU got work: resume its grid at the next slot at or after now. */
static void wake(struct sym_core *c, struct nx *st, int g, sym_time now)
{
	struct nx_gpu *x = &st->gpu[g];
	x->idle = false;
	if (x->origin < 0) {
		x->origin = now;
		x->pos = 0;
		x->slot = now;
	} else if (x->slot < now) {
		x->origin += (now - x->origin) / x->duty * x->duty;
		x->pos = 0;
		while (x->pos < x->nsess && x->origin + x->sess[x->pos].off < now)
			x->pos++;
		if (x->pos == x->nsess) {
			x->pos = 0;
			x->origin += x->duty;
		}
		x->slot = x->origin + x->sess[x->pos].off;
	}
	step(c, st, g, now);
}

/* ---- frontends ---- */

/* Frontend f's choice of backend for model m, or -1 when it has none. */
static int route(struct nx *st, int f, int m)
{
	int lo = st->roff[m], hi = st->roff[m + 1];
	if (lo == hi)
		return -1;
	if (hi - lo == 1)
		return st->routes[lo].gpu;
	double *cur = st->wrr + (size_t)f * (size_t)st->nroutes;
	double total = 0;
	int best = lo;
	for (int e = lo; e < hi; e++) {
		cur[e] += st->routes[e].w;
		total += st->routes[e].w;
		if (cur[e] > cur[best])
			best = e;
	}
	cur[best] -= total;
	return st->routes[best].gpu;
}

/* Routes r through its frontend and queues it at the chosen backend. Returns
 * 0 (also when r was dropped for want of a backend) or -ENOMEM (r not held). */
static int place(struct sym_core *c, struct nx *st, struct sym_request *r, sym_time now)
{
	int m = r->model;
	int g = route(st, (int)(r->id % (uint64_t)st->nf), m);
	if (g < 0) {
		sym_core_drop(c, r, SYM_DROP_EXPIRED, now);
		return 0;
	}
	int rc = sym_queue_push(queue_of(st, g, m), r);
	if (rc)
		return rc;
	st->held++;
	st->gpu[g].held++;
	if (st->gpu[g].idle && !c->gpus[g].busy)
		wake(c, st, g, now);
	return 0;
}

/* ---- planning ---- */

static void fill_models(struct sym_core *c, struct nx *st, int k)
{
	for (int m = 0; m < st->nm; m++) {
		const struct sym_shard *sh = &c->shards[m];
		const struct sym_profile *p = sh->prof_k[k];
		st->pm[m] = (struct sym_nexus_model){
			.rate = 0,
			.slo = sh->slo,
			.lat = st->lat[m * st->nk + k],
			.max_batch = sh->maxb_k[k],
			.delay = sh->net.resp,
			.static_mb = p->static_mb,
			.dynamic_mb = p->dynamic_mb,
		};
	}
}

static int try_plan(struct sym_core *c, struct nx *st, int k, int n, double s, struct sym_nexus_plan *out)
{
	for (int m = 0; m < st->nm; m++)
		st->pm[m].rate = st->excl[m] ? 0 : st->rem[m] * s;
	return sym_nexus_plan_compute(out, st->pm, st->nm, c->kinds[k].memory_mb, n);
}

static bool too_big(int rc)
{
	return rc == -ENOSPC || rc == -EOVERFLOW;
}

/* The plan for kind k's n GPUs: all of rem if it fits, else the largest
 * fitting scale of it (leaving out the smallest models when nothing fits). */
/* best fits at scale 1: replaces it with the plan at the largest scale s in
 * [1, NX_SCALE_MAX] that still fits (see "Spare GPUs" at the top). */
static int scale_up(struct sym_core *c, struct nx *st, int k, int n, struct sym_nexus_plan *best)
{
	struct sym_nexus_plan t;
	sym_nexus_plan_init(&t);
	double lo = 1, hi = 2;
	int rc = 0;
	for (; hi <= NX_SCALE_MAX; hi *= 2) {
		rc = try_plan(c, st, k, n, hi, &t);
		if (rc)
			break;
		struct sym_nexus_plan tmp = *best;
		*best = t;
		t = tmp;
		lo = hi;
	}
	for (int i = 0; rc != -ENOMEM && hi <= NX_SCALE_MAX && i < NX_BISECT_UP; i++) {
		double mid = (lo + hi) / 2;
		rc = try_plan(c, st, k, n, mid, &t);
		if (!rc) {
			lo = mid;
			struct sym_nexus_plan tmp = *best;
			*best = t;
			t = tmp;
		} else if (too_big(rc)) {
			hi = mid;
		}
	}
	sym_nexus_plan_finish(&t);
	return rc == -ENOMEM ? rc : 0;
}

/* plan=incremental: the plan for rem from the GPUs' current sessions
 * (nexus_plan.h, sym_nexus_plan_incremental), when there are some and there
 * is one GPU kind. Returns 0 with the plan, 1 when it does not apply or does
 * not fit (the full planning then runs), or -ENOMEM. */
static int incremental(struct sym_core *c, struct nx *st, int k, int n, struct sym_nexus_plan *best)
{
	if (!st->incremental || st->nk != 1)
		return 1;
	int ng = 0, ns = 0;
	for (int g = 0; g < st->ng; g++)
		if (c->gpus[g].kind == k && st->gpu[g].nsess) {
			ng++;
			ns += st->gpu[g].nsess;
		}
	if (!ng)
		return 1;
	struct sym_nexus_plan prev = { .ngpus = ng, .nsessions = ns };
	prev.gpus = calloc((size_t)ng, sizeof(*prev.gpus));
	prev.sessions = calloc((size_t)ns, sizeof(*prev.sessions));
	if (!prev.gpus || !prev.sessions) {
		sym_nexus_plan_finish(&prev);
		return -ENOMEM;
	}
	int p = 0, si = 0;
	for (int g = 0; g < st->ng; g++) {
		const struct nx_gpu *x = &st->gpu[g];
		if (c->gpus[g].kind != k || !x->nsess)
			continue;
		sym_time busy = 0;
		for (int i = 0; i < x->nsess; i++) {
			prev.sessions[si + i] = (struct sym_nexus_session){ .model = x->sess[i].model, .batch = x->sess[i].batch,
									    .rate = x->sess[i].rate };
			busy += st->lat[x->sess[i].model * st->nk + k][x->sess[i].batch];
		}
		prev.gpus[p++] = (struct sym_nexus_gpu){ .duty = x->duty, .busy = busy, .first = si, .nsessions = x->nsess,
							 .saturated = x->nsess == 1 && busy == x->duty };
		si += x->nsess;
	}
	for (int m = 0; m < st->nm; m++)
		st->pm[m].rate = st->rem[m];
	int ev, rel;
	int rc = sym_nexus_plan_incremental(best, &prev, st->pm, st->nm, c->kinds[k].memory_mb, n, &ev, &rel);
	sym_nexus_plan_finish(&prev);
	return rc == -ENOMEM ? rc : rc ? 1 : 0;
}

static int fit_kind(struct sym_core *c, struct nx *st, int k, int n, struct sym_nexus_plan *best)
{
	fill_models(c, st, k);
	int inc = incremental(c, st, k, n, best);
	if (inc <= 0)
		return inc;
	memset(st->excl, 0, (size_t)st->nm * sizeof(*st->excl));
	int rc = try_plan(c, st, k, n, 1, best);
	if (!rc && !st->spare_idle)
		return scale_up(c, st, k, n, best);
	if (!too_big(rc))
		return rc;
	for (;;) {
		rc = try_plan(c, st, k, n, NX_SCALE_MIN, best);
		if (!rc)
			break;
		if (!too_big(rc))
			return rc;
		/* leave out a model without a backend now before one with a
		 * backend (no churn from noise in the rates), then the lowest
		 * rate (ties: the higher index) */
		int x = -1;
		for (int m = 0; m < st->nm; m++) {
			if (st->excl[m] || st->rem[m] <= 0)
				continue;
			bool hm = st->roff[m + 1] > st->roff[m];
			bool hx = x >= 0 && st->roff[x + 1] > st->roff[x];
			if (x < 0 || (!hm && hx) || (hm == hx && st->rem[m] <= st->rem[x]))
				x = m;
		}
		if (x < 0)
			return 0; /* best is empty */
		st->excl[x] = true;
	}
	struct sym_nexus_plan t;
	sym_nexus_plan_init(&t);
	double lo = NX_SCALE_MIN, hi = 1;
	for (int i = 0; i < NX_BISECT; i++) {
		double mid = (lo + hi) / 2;
		rc = try_plan(c, st, k, n, mid, &t);
		if (!rc) {
			lo = mid;
			struct sym_nexus_plan tmp = *best;
			*best = t;
			t = tmp;
		} else if (too_big(rc)) {
			hi = mid;
		} else {
			sym_nexus_plan_finish(&t);
			return rc;
		}
	}
	sym_nexus_plan_finish(&t);
	return 0;
}

struct nx_pair {
	int p, g, score;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct nx_pair *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return (x->g > y->g) - (x->g < y->g);
}

/* Maps plan's GPUs onto kind k's GPUs (see the top) and writes their next
 * sessions. */
static int assign(struct sym_core *c, struct nx *st, int k, const struct sym_nexus_plan *plan)
{
	int P = plan->ngpus;
	size_t npairs = 0, cap = 0;
	struct nx_pair *pairs = NULL;
	for (int p = 0; p < P; p++) {
		int nt = 0;
		for (int i = 0; i < plan->gpus[p].nsessions; i++) {
			int m = sym_nexus_plan_session(plan, p, i)->model;
			for (int e = st->roff[m]; e < st->roff[m + 1]; e++) {
				int g = st->routes[e].gpu;
				if (c->gpus[g].kind != k)
					continue;
				if (!st->mark[g]++)
					st->touched[nt++] = g;
			}
		}
		for (int t = 0; t < nt; t++) {
			int g = st->touched[t];
			if (sym_grow(&pairs, &cap, npairs + 1, sizeof(*pairs), 64)) {
				for (; t < nt; t++)
					st->mark[st->touched[t]] = 0;
				free(pairs);
				return -ENOMEM;
			}
			pairs[npairs++] = (struct nx_pair){ p, g, st->mark[g] };
			st->mark[g] = 0;
		}
	}
	if (npairs)
		qsort(pairs, npairs, sizeof(*pairs), cmp_pair);
	for (int p = 0; p < P; p++)
		st->pg[p] = -1;
	for (int g = 0; g < st->ng; g++)
		st->taken[g] = c->gpus[g].kind != k;
	for (size_t i = 0; i < npairs; i++)
		if (st->pg[pairs[i].p] < 0 && !st->taken[pairs[i].g]) {
			st->pg[pairs[i].p] = pairs[i].g;
			st->taken[pairs[i].g] = true;
		}
	free(pairs);
	for (int p = 0; p < P; p++) {
		if (st->pg[p] >= 0)
			continue;
		int pick = -1;
		for (int g = 0; g < st->ng && pick < 0; g++)
			if (!st->taken[g] && !st->gpu[g].nsess)
				pick = g;
		for (int g = 0; g < st->ng && pick < 0; g++)
			if (!st->taken[g])
				pick = g;
		if (pick < 0)
			return -EINVAL; /* cannot happen: the plan fits kind k's GPUs */
		st->pg[p] = pick;
		st->taken[pick] = true;
	}
	struct nx_sess *ns = st->sbuf[1 - st->cur];
	for (int p = 0; p < P; p++) {
		int g = st->pg[p];
		struct nx_sess *out = ns + (size_t)g * (size_t)st->nm;
		sym_time off = 0;
		for (int i = 0; i < plan->gpus[p].nsessions; i++) {
			const struct sym_nexus_session *s = sym_nexus_plan_session(plan, p, i);
			out[i] = (struct nx_sess){ .model = s->model, .batch = s->batch, .rate = s->rate, .off = off };
			off += st->lat[s->model * st->nk + k][s->batch];
		}
		st->new_nsess[g] = plan->gpus[p].nsessions;
		st->new_duty[g] = plan->gpus[p].duty;
	}
	return 0;
}

/* The next plan, for `rates`, into the next session lists. */
static int plan_all(struct sym_core *c, struct nx *st, const double *rates)
{
	for (int g = 0; g < st->ng; g++) {
		st->new_nsess[g] = 0;
		st->new_duty[g] = 0;
	}
	memcpy(st->rem, rates, (size_t)st->nm * sizeof(*rates));
	for (int k = 0; k < st->nk; k++) {
		int n = 0;
		for (int g = 0; g < st->ng; g++)
			n += c->gpus[g].kind == k;
		bool any = false;
		for (int m = 0; m < st->nm; m++)
			any |= st->rem[m] > 0;
		if (!n || !any)
			continue;
		struct sym_nexus_plan plan;
		sym_nexus_plan_init(&plan);
		int rc = fit_kind(c, st, k, n, &plan);
		if (!rc)
			rc = assign(c, st, k, &plan);
		if (rc) {
			sym_nexus_plan_finish(&plan);
			return rc;
		}
		for (int i = 0; i < plan.nsessions; i++)
			st->rem[plan.sessions[i].model] -= plan.sessions[i].rate;
		for (int m = 0; m < st->nm; m++)
			if (st->rem[m] <= NX_REM_EPS * rates[m])
				st->rem[m] = 0;
		sym_nexus_plan_finish(&plan);
	}
	return 0;
}

static bool hosts(const struct nx_gpu *x, int m)
{
	for (int i = 0; i < x->nsess; i++)
		if (x->sess[i].model == m)
			return true;
	return false;
}

/* Plans for `rates` and switches to the new plan at now (see the top). On
 * -ENOMEM the old plan stays. */
static int replan(struct sym_core *c, struct nx *st, const double *rates, sym_time now)
{
	int rc = plan_all(c, st, rates);
	if (rc)
		return rc;
	/* the new routing table */
	struct nx_sess *ns = st->sbuf[1 - st->cur];
	int *roff = calloc((size_t)st->nm + 1, sizeof(*roff));
	int nroutes = 0;
	for (int g = 0; g < st->ng; g++)
		nroutes += st->new_nsess[g];
	struct nx_route *routes = calloc(nroutes ? (size_t)nroutes : 1, sizeof(*routes));
	double *wrr = calloc((size_t)st->nf * (nroutes ? (size_t)nroutes : 1), sizeof(*wrr));
	if (!roff || !routes || !wrr) {
		free(roff);
		free(routes);
		free(wrr);
		return -ENOMEM;
	}
	for (int g = 0; g < st->ng; g++)
		for (int i = 0; i < st->new_nsess[g]; i++)
			roff[ns[(size_t)g * (size_t)st->nm + (size_t)i].model + 1]++;
	for (int m = 0; m < st->nm; m++)
		roff[m + 1] += roff[m];
	for (int g = 0; g < st->ng; g++)
		for (int i = 0; i < st->new_nsess[g]; i++) {
			const struct nx_sess *s = &ns[(size_t)g * (size_t)st->nm + (size_t)i];
			int e = roff[s->model]++;
			routes[e] = (struct nx_route){ .gpu = g, .w = s->rate };
		}
	for (int m = st->nm; m > 0; m--)
		roff[m] = roff[m - 1];
	roff[0] = 0;
	/* switch the GPUs */
	for (int g = 0; g < st->ng; g++) {
		struct nx_gpu *x = &st->gpu[g];
		struct nx_sess *nx = ns + (size_t)g * (size_t)st->nm;
		bool changed = x->nsess != st->new_nsess[g] || x->duty != st->new_duty[g];
		for (int i = 0; !changed && i < x->nsess; i++)
			changed = x->sess[i].model != nx[i].model || x->sess[i].batch != nx[i].batch;
		x->sess = nx;
		x->nsess = st->new_nsess[g];
		x->duty = st->new_duty[g];
		if (!changed)
			continue;
		x->pos = 0;
		if (x->idle) {
			x->origin = -1;
		} else {
			x->origin = now;
			x->slot = now;
		}
	}
	st->cur = 1 - st->cur;
	free(st->roff);
	free(st->routes);
	free(st->wrr);
	st->roff = roff;
	st->routes = routes;
	st->nroutes = nroutes;
	st->wrr = wrr;
	/* Frontends are independent: start frontend f a fraction f/N of a round
	 * into each model's rotation, so that N frontends do not all pick the
	 * same backend for their k-th request in lockstep. */
	for (int f = 1; f < st->nf; f++)
		for (int m = 0; m < st->nm; m++) {
			int nb = roff[m + 1] - roff[m];
			for (int i = 0; nb > 1 && i < f * nb / st->nf; i++)
				route(st, f, m);
		}
	/* re-route what waits at a GPU that lost its model */
	for (int g = 0; g < st->ng; g++) {
		struct nx_gpu *x = &st->gpu[g];
		for (int m = 0; m < st->nm && x->held; m++) {
			struct sym_queue *q = queue_of(st, g, m);
			if (!sym_queue_len(q) || hosts(x, m))
				continue;
			struct sym_request *r;
			while ((r = sym_queue_pop(q))) {
				st->held--;
				x->held--;
				if (place(c, st, r, now))
					sym_core_drop(c, r, SYM_DROP_EXPIRED, now);
			}
		}
	}
	for (int g = 0; g < st->ng; g++)
		if (!st->gpu[g].idle && !c->gpus[g].busy)
			step(c, st, g, now);
	return 0;
}

/* ---- handlers ---- */

static void nx_free(struct nx *st, int nm, int ng, int nk)
{
	if (st->q)
		for (size_t i = 0; i < (size_t)ng * (size_t)nm; i++)
			sym_queue_finish(&st->q[i]);
	free(st->q);
	if (st->lat)
		for (int i = 0; i < nm * nk; i++)
			free(st->lat[i]);
	free(st->lat);
	free(st->gpu);
	free(st->sbuf[0]);
	free(st->sbuf[1]);
	free(st->new_nsess);
	free(st->new_duty);
	free(st->roff);
	free(st->routes);
	free(st->wrr);
	free(st->count);
	free(st->batch);
	free(st->rates);
	free(st->rem);
	free(st->excl);
	free(st->pm);
	free(st->mark);
	free(st->touched);
	free(st->pg);
	free(st->taken);
	free(st);
}

static void nx_finish(struct sym_core *c)
{
	nx_free(c->sched_state, c->nmodels, c->ngpus, c->nkinds);
	c->sched_state = NULL;
}

static int nx_init(struct sym_core *c, char *err, size_t errlen)
{
	const struct params p = params_of(&c->policy);
	int nm = c->nmodels, ng = c->ngpus, nk = c->nkinds;
	struct nx *st = calloc(1, sizeof(*st));
	if (!st)
		goto nomem;
	st->nf = p.frontends;
	st->lazy = p.drop == DROP_LAZY;
	st->spare_idle = p.spare == SPARE_IDLE;
	st->incremental = p.plan == PLAN_INCREMENTAL;
	st->epoch = sym_s(p.epoch_s);
	st->min_rate = 1 / p.epoch_s;
	st->trigger = p.trigger;
	st->min_epoch = sym_s(p.min_epoch_s);
	st->nm = nm;
	st->ng = ng;
	st->nk = nk;
	size_t gm = (size_t)ng * (size_t)nm;
	st->q = calloc(gm, sizeof(*st->q));
	st->gpu = calloc((size_t)ng, sizeof(*st->gpu));
	st->sbuf[0] = calloc(gm, sizeof(*st->sbuf[0]));
	st->sbuf[1] = calloc(gm, sizeof(*st->sbuf[1]));
	st->new_nsess = calloc((size_t)ng, sizeof(*st->new_nsess));
	st->new_duty = calloc((size_t)ng, sizeof(*st->new_duty));
	st->lat = calloc((size_t)nm * (size_t)nk, sizeof(*st->lat));
	st->roff = calloc((size_t)nm + 1, sizeof(*st->roff));
	st->count = calloc((size_t)nm, sizeof(*st->count));
	st->batch = calloc((size_t)c->maxb, sizeof(*st->batch));
	st->rates = calloc((size_t)nm, sizeof(*st->rates));
	st->rem = calloc((size_t)nm, sizeof(*st->rem));
	st->excl = calloc((size_t)nm, sizeof(*st->excl));
	st->pm = calloc((size_t)nm, sizeof(*st->pm));
	st->mark = calloc((size_t)ng, sizeof(*st->mark));
	st->touched = calloc((size_t)ng, sizeof(*st->touched));
	st->pg = calloc((size_t)ng, sizeof(*st->pg));
	st->taken = calloc((size_t)ng, sizeof(*st->taken));
	if (!st->q || !st->gpu || !st->sbuf[0] || !st->sbuf[1] || !st->new_nsess || !st->new_duty || !st->lat ||
	    !st->roff || !st->count || !st->batch || !st->rates || !st->rem || !st->excl || !st->pm || !st->mark ||
	    !st->touched || !st->pg || !st->taken)
		goto nomem_st;
	for (size_t i = 0; i < gm; i++)
		sym_queue_init(&st->q[i]);
	for (int m = 0; m < nm; m++)
		for (int k = 0; k < nk; k++) {
			int maxb = sym_core_max_batch(c, m, k);
			const sym_time *le = sym_core_le(c, m, k);
			sym_time *t = malloc(((size_t)maxb + 1) * sizeof(*t));
			if (!t)
				goto nomem_st;
			st->lat[m * nk + k] = t;
			t[0] = 0;
			for (int b = 1; b <= maxb; b++)
				t[b] = le[b] - c->shards[m].net.resp;
		}
	for (int g = 0; g < ng; g++) {
		st->gpu[g] = (struct nx_gpu){ .sess = st->sbuf[0] + (size_t)g * (size_t)nm, .origin = -1, .idle = true };
	}
	if (sym_core_timers_reserve(c, ng + 1))
		goto nomem_st;
	c->sched_state = st;
	for (int m = 0; m < nm; m++)
		st->rates[m] = c->shards[m].lambda > st->min_rate ? c->shards[m].lambda : st->min_rate;
	int rc = replan(c, st, st->rates, 0);
	if (rc) {
		snprintf(err, errlen, "%s", rc == -ENOMEM ? "out of memory" : "cannot plan the models");
		nx_free(st, nm, ng, nk);
		c->sched_state = NULL;
		return rc;
	}
	return 0;
nomem_st:
	nx_free(st, nm, ng, nk);
nomem:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

static void nx_epoch(struct sym_core *c, struct nx *st, sym_time now);

/* trigger=F: model m's count since the epoch began is off its planned rate
 * by more than F of the prediction and three Poisson standard deviations. */
static bool changed(const struct nx *st, int m, sym_time now)
{
	if (st->trigger <= 0 || now - st->epoch_start < st->min_epoch)
		return false;
	double expect = st->rates[m] * sym_to_s(now - st->epoch_start), dev = fabs((double)st->count[m] - expect);
	return dev > st->trigger * expect && dev > 3 * sqrt(expect > 1 ? expect : 1);
}

static int nx_arrive(struct sym_core *c, struct sym_request *r, sym_time now)
{
	struct nx *st = c->sched_state;
	if (!st->armed) {
		st->armed = true;
		st->epoch_start = now;
		memset(st->count, 0, (size_t)st->nm * sizeof(*st->count));
		sym_core_timer_set(c, st->ng, now + st->epoch);
	}
	if (changed(st, r->model, now)) {
		st->triggered++;
		nx_epoch(c, st, now);
		if (!st->armed) { /* (it had arrivals: it stays armed) */
			st->armed = true;
			st->epoch_start = now;
			sym_core_timer_set(c, st->ng, now + st->epoch);
		}
	}
	int rc = place(c, st, r, now);
	if (!rc)
		st->count[r->model]++;
	return rc;
}


static void nx_epoch(struct sym_core *c, struct nx *st, sym_time now)
{
	uint64_t total = 0;
	for (int m = 0; m < st->nm; m++)
		total += st->count[m];
	if (!total) {
		st->armed = false;
		return;
	}
	double span = sym_to_s(now - st->epoch_start);
	for (int m = 0; m < st->nm; m++) {
		double r = span > 0 ? (double)st->count[m] / span : 0;
		st->rates[m] = r > st->min_rate ? r : st->min_rate;
		st->count[m] = 0;
	}
	st->epoch_start = now;
	sym_core_timer_set(c, st->ng, now + st->epoch);
	replan(c, st, st->rates, now); /* on failure the old plan stays */
}

/* A GPU freed or its slot came: its cycle steps on; or the epoch ended
 * (arrivals come through nx_arrive). */
static void nx_react(struct sym_core *c, enum sym_sched_event ev, int id, sym_time now)
{
	struct nx *st = c->sched_state;
	if (ev == SYM_SCHED_TIMER && id == st->ng)
		nx_epoch(c, st, now);
	else if (ev == SYM_SCHED_GPU_FREE || !st->gpu[id].idle)
		step(c, st, id, now);
}

static uint64_t nx_held(const struct sym_core *c)
{
	const struct nx *st = c->sched_state;
	return st ? st->held : 0;
}

static const struct sym_sched_ops nexus_sched = {
	.init = nx_init,
	.finish = nx_finish,
	.arrive = nx_arrive,
	.react = nx_react,
	.held = nx_held,
};

const struct sym_policy_ops sym_policy_nexus = {
	.name = "nexus",
	.summary = "Nexus: epoch plans by squishy bin packing, frontends route by weighted round robin, "
		   "GPUs cycle through their models once per duty cycle",
	.params = params,
	.params_size = sizeof(struct params),
	.sched = &nexus_sched,
};
