/* symphony: deferred batch scheduling, with look-ahead.
 *
 * The paper's rule (symphony-deferred-batch-scheduling.md, Section 3.2,
 * Algorithm 1). The candidate B can meet its earliest deadline d if
 * dispatched by latest = d - le(B). Waiting is worth it while one more
 * request could still join: a batch of B+1 would have to go by d - le(B+1)
 * (the *frontrun* moment). Before that moment a GPU given to this batch would
 * run it smaller than it could be; after it, waiting cannot grow the batch
 * any more, so the candidate becomes dispatchable:
 *
 *     exec = max(now, d - le(B+1))
 *
 * When B is already the model's largest batch there is nothing to wait for.
 * Deferring to the frontrun moment keeps batches large and makes the GPUs of a
 * model start staggered, one batch every l(B)/N.
 *
 * The published rule has no slack: a candidate may only start in [d - le(B+1),
 * d - le(B)], and by shrinking until d - le(1), a span of B x alpha (0.05 to
 * 0.3 ms per request on an A100). When other batches hold every GPU through
 * it, its oldest requests expire (shared/research/lookahead-deferral/
 * report.md: two models on one GPU fail at 10.8 r/s with the GPU 4% busy).
 * And where no GPU is left to stagger with (one GPU, or a model sharing its
 * GPUs with others), waiting buys no larger batch than the load brings anyway
 * while every wait spends the slack that absorbs the next batch's contention.
 * Look-ahead deferral (the default; lookahead=off is the paper's rule) adds
 * these parts, each of which can be switched off on its own for ablations:
 *
 *   - plan (core/ranker.h): the ranker plans every candidate on its GPUs'
 *     predicted free times, as late as each can start, and pulls a deferred
 *     candidate earlier (a cap on exec) when its batch would collide with
 *     another's; `margin` batch lengths are kept between batches planned on
 *     one GPU.
 *   - gain: a candidate waits only while waiting pays: when the batch it can
 *     expect at its frontrun moment (B plus the requests its measured rate
 *     brings by then) costs less than `gain` (a fraction) less GPU time per
 *     request than B, it is due now. le(b)/b = alpha + beta/b, so a model whose
 *     fixed cost is small against its per-request cost (BERT on an A100: beta
 *     0.22 ms, alpha 7.4 ms) never waits: its larger batches would only hold
 *     GPUs longer.
 *   - guard: every candidate is due early enough to absorb the wait for a GPU
 *     that its kind has shown. Two high quantiles of the wait from due to
 *     granted are measured per kind (core/models.h): `wait` (a head lost while
 *     waiting counts the time it waited) and `wait_safe` (a head lost counts as
 *     longer than any). A model whose load keeps at least `stagger` GPUs busy
 *     (n = lambda l(b*)/b*, b* the batch its load sustains staggered) is due by
 *     d - le(1) - wait: it protects its head and keeps its batches, which is
 *     what makes deferral pay on several GPUs. A model spread over fewer GPUs
 *     is due by latest - wait_safe: each head it loses while waiting moves it
 *     towards eager dispatch, and it comes back to deferring as the losses
 *     stop (at low load, none). guard=MS fixes both waits; guard=off: none.
 *   - burst: under bursty arrivals a clump already is the batch; the
 *     candidate goes burst x (1 - 1/cv^2) x (B+1)/lambda earlier, cv the
 *     measured coefficient of variation of its inter-arrival gaps (no change
 *     for Poisson arrivals, cv = 1, or smoother).
 *
 * reserve=N (an ablation, default 0) moves the dispatch no later than
 * d - (1 + N) le(B): room for N batches of its size ahead of it, the blunt
 * fix the plan refines (docs/policies.md, "When models outnumber GPUs").
 */
#include <math.h>
#include <stddef.h>

#include "core/policy_api.h"

#define GUARD_AUTO (-1.0)
/* The burst term acts from this gap CV on: an estimate of Poisson arrivals'
 * CV (1) wanders by a few percent, and below it a clump is no batch. */
#define BURST_CV 1.2

struct params {
	bool lookahead;  /* off: the paper's rule, whatever the parts below say */
	bool plan;       /* the ranker's plan and its caps */
	double margin;   /* plan: batch lengths between batches planned on one GPU */
	double replan;   /* plan: at most once per this many of the shortest batch planned */
	double gain;     /* wait only while the frontrun batch saves this fraction per request; 0: always */
	double guard;    /* ms; GUARD_AUTO: measured; 0: none */
	double stagger;  /* GPUs a model's load must keep busy for the head guard; 0: every model */
	double quantile; /* guard=auto: the quantile of the waits measured */
	double burst;    /* the burst term's factor; 0: none */
	int reserve;     /* batches of its own size a candidate leaves room for before its latest moment */
	bool idle;       /* plan: a deferred batch goes at once while every candidate has an idle GPU */
};
SYM_POLICY_PARAMS(struct params, params_of)

static const struct sym_param_word guard_words[] = { { "auto", (int)GUARD_AUTO }, { "off", 0 }, { NULL, 0 } };

static const struct sym_param params[] = {
	{ .key = "lookahead", .type = SYM_PARAM_BOOL, .offset = offsetof(struct params, lookahead), .def = 1,
	  .help = "look-ahead deferral: the parts below (off: the paper's rule, Algorithm 1)" },
	{ .key = "plan", .type = SYM_PARAM_BOOL, .offset = offsetof(struct params, plan), .def = 1,
	  .help = "the ranker plans every candidate on its GPUs' free times and pulls a deferred one earlier when "
		  "its batch would collide" },
	{ .key = "margin", .type = SYM_PARAM_NUM, .offset = offsetof(struct params, margin), .lo = 0, .hi = 100,
	  .def = 1, .meta = "K", .help = "plan: batch lengths kept between batches planned on one GPU" },
	{ .key = "replan", .type = SYM_PARAM_NUM, .offset = offsetof(struct params, replan), .lo = 0, .hi = 100,
	  .def = 1, .meta = "X", .help = "plan: made again at most once per X of the shortest batch it planned (0: after "
					  "every change)" },
	{ .key = "gain", .type = SYM_PARAM_NUM, .offset = offsetof(struct params, gain), .lo = 0, .hi = 10,
	  .def = 0.05, .meta = "X", .help = "wait only while the batch expected at the frontrun moment costs at least X "
					   "(a fraction) less GPU time per request (0: always wait)" },
	{ .key = "guard", .type = SYM_PARAM_NUM, .offset = offsetof(struct params, guard), .lo = 0, .hi = 1e6,
	  .unit = "ms", .words = guard_words, .def = GUARD_AUTO, .def_text = "auto",
	  .help = "due early enough for the wait for a GPU: measured per GPU kind (auto), fixed, or off" },
	{ .key = "stagger", .type = SYM_PARAM_NUM, .offset = offsetof(struct params, stagger), .lo = 0, .hi = 1e6,
	  .def = 1.5, .meta = "N", .help = "a model whose load keeps N GPUs busy guards its head (d - l(1) - wait); "
					    "one spread over fewer is due by latest - wait_safe, so lost heads move it "
					    "towards eager (0: every model guards its head)" },
	{ .key = "quantile", .type = SYM_PARAM_NUM, .offset = offsetof(struct params, quantile), .lo = 0.5,
	  .hi = 0.9999, .def = 0.998, .meta = "Q", .help = "guard=auto: the quantile of the waits it measures" },
	{ .key = "burst", .type = SYM_PARAM_NUM, .offset = offsetof(struct params, burst), .lo = 0, .hi = 100,
	  .def = 1, .meta = "X", .help = "go X (1 - 1/cv^2) (B+1)/lambda earlier under bursty arrivals (0: never)" },
	{ .key = "reserve", .type = SYM_PARAM_INT, .offset = offsetof(struct params, reserve), .lo = 0, .hi = 16,
	  .def = 0, .help = "go by d - (1 + N) l(B) at the latest, leaving room for N batches of its size ahead of it "
			    "(an ablation; 0: the frontrun moment)" },
	{ .key = "idle", .type = SYM_PARAM_BOOL, .offset = offsetof(struct params, idle), .def = 0,
	  .help = "low-load latency: while every candidate has an idle GPU of its own (the plan sees no "
		  "collision), a deferred batch goes at once instead of at its frontrun moment (needs plan)" },
	{ .key = NULL },
};

/* Whether waiting for the batch expected at exec e pays at least `gain` per
 * request over dispatching B now (see above). */
static bool waiting_pays(const struct sym_cand_view *v, sym_time e, double gain)
{
	double grow = v->lambda * 1e-9 * (double)(e - v->now); /* (e > now here) */
	if (grow < 1)
		return true; /* nothing to compare: keep the rule */
	int bf = v->size + (grow < v->max_batch ? (int)grow : v->max_batch);
	if (bf > v->max_batch)
		bf = v->max_batch;
	if (v->le[bf] > v->deadline - v->now)
		bf = sym_le_fit(v->le, v->max_batch, (size_t)bf, v->deadline - v->now);
	if (bf <= v->size)
		return true;
	/* le(B)/B >= (1 + gain) le(bf)/bf */
	return (double)v->le[v->size] * bf >= (1 + gain) * (double)v->le[bf] * v->size;
}

static sym_time exec(const struct sym_policy *p, const struct sym_cand_view *v)
{
	if (v->size >= v->max_batch)
		return v->now;
	const struct params x = params_of(p);
	sym_time e = v->deadline - v->le[v->size + 1]; /* the frontrun moment */
	if (x.lookahead && e > v->now) {
		if (x.gain > 0 && v->lambda > 0 && !waiting_pays(v, e, x.gain))
			return v->now;
		if (x.guard != 0) {
			bool fixed = x.guard != GUARD_AUTO;
			sym_time by;
			if (x.stagger <= 0 || v->spread >= x.stagger)
				by = v->deadline - v->le[1] - (fixed ? sym_ms(x.guard) : v->wait);
			else {
				by = v->deadline - v->le[v->size] - (fixed ? sym_ms(x.guard) : v->wait_safe);

			}
			if (by < e)
				e = by;
		}
		if (x.burst > 0 && v->lambda > 0 && v->cv > BURST_CV) {
			double c2 = v->cv * v->cv;
			e -= (sym_time)(x.burst * (c2 - 1) * (v->size + 1) * 1e9 / (c2 * v->lambda));
		}
	}
	if (x.reserve > 0) {
		sym_time by = v->deadline - (sym_time)(1 + x.reserve) * v->le[v->size];
		if (by < e)
			e = by;
	}
	return e > v->now ? e : v->now;
}

static void lookahead(const struct sym_policy *p, struct sym_lookahead *out)
{
	const struct params x = params_of(p);
	if (!x.lookahead)
		return;
	out->plan = x.plan;
	out->margin = x.margin;
	out->replan = x.replan;
	out->wait = x.guard == GUARD_AUTO;
	out->wait_quantile = x.quantile;
	out->idle = x.idle;
}

const struct sym_policy_ops sym_policy_symphony = {
	.name = "symphony",
	.summary = "deferred batching with look-ahead: dispatch at the frontrun moment d - l(B+1), earlier when the "
		   "plan foresees a collision or waiting does not pay (lookahead=off: the paper's rule)",
	.params = params,
	.params_size = sizeof(struct params),
	.exec = exec,
	.lookahead = lookahead,
};
