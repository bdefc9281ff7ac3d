/* sim/goodput.h - judging a run, and the goodput search: the highest total
 * offered rate that passes.
 *
 * A run passes (sym_judge) under the experiment's criterion:
 *   - per-model (the default, the papers' goodput: every model's p99 within
 *     its SLO): every model's bad count (late + dropped, of the requests
 *     measured in the window) is within its allowance max(max_bad_rate *
 *     offered, 1), and no model with measured requests has them all bad. The
 *     allowance of one request keeps a model with few requests from failing a
 *     rate on one unlucky request (1 bad of 50 passes, 2 do not); the second
 *     rule keeps starvation from hiding behind a small count (3 of 3 dropped
 *     fails). From 1/max_bad_rate requests up the rule is exactly bad rate <=
 *     max_bad_rate. A model with no measured request passes.
 *   - aggregate: the bad fraction of all measured requests together is
 *     within max_bad_rate (the rule before per-model; kept for comparison).
 * Either way a run with no measured request fails. Results name the worst
 * model whatever the criterion, and count the models with fewer than
 * sym_min_requests() measured requests, for which the threshold says little.
 *
 * The search bisects the rate between 0 and an upper bound that no policy can
 * serve (every GPU busy running maximum-size batches), stopping when the
 * bracket is narrower than `tolerance` times its upper end. Every step reuses
 * the experiment's seed (common random numbers: at a fixed seed a higher rate
 * gives the same arrival pattern compressed), so the bad rate moves smoothly
 * with the rate. With a rate schedule (segments or CSV) the search scales the
 * whole schedule and the goodput is the scaled schedule's mean rate.
 *
 * A step stops early once its late and dropped requests exceed 1.5 times the
 * acceptable count at the expected number of measured arrivals (plus 20;
 * with a rate schedule, at its peak rate over the whole window); under the
 * per-model criterion also once one model's exceed 1.5 times that model's
 * allowance at its expected arrivals (plus 20), and the total's slack grows
 * by one request per model (the models' allowances of one). Such a step fails
 * whatever the rest of the run would do, and a step far above capacity then
 * costs a fraction of a full run. The complete run of the best ok step is
 * kept, so the caller need not run it again.
 *
 * Replications (sym_goodput_replicate) run the search once per seed, seed,
 * seed+1, ..., seed+N-1, on a thread pool, and report the mean goodput with a
 * 95% interval; the first seed's run at its own goodput is kept for the
 * detailed metrics.
 */
#ifndef SYM_GOODPUT_H
#define SYM_GOODPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "experiment/config.h"
#include "sim/engine.h"

/* The early-stop limits of a step at rate option `scale` (see above): the
 * total in *total, and per model in per_model[0..nmodels) under the per-model
 * criterion (per_model may be NULL under the aggregate one). */
void sym_stop_limits(const struct sym_experiment *e, double scale, uint64_t *total, uint64_t *per_model);

struct sym_goodput_step {
	double rate;      /* mean total offered rate of the step */
	double bad_rate;  /* of the part that ran when stopped early */
	int worst;        /* the worst model (sym_verdict), -1 when none */
	double worst_bad_rate;
	bool ok;
	bool stopped_early;
};

struct sym_goodput {
	double goodput_rps;    /* 0 when even the lowest rate tried fails */
	double fail_rps;       /* the search's bracket above it: the lowest rate that failed (the upper
				* bound when none did); the goodput lies in [goodput_rps, fail_rps] */
	double floor_rps;      /* the lowest rate the search tries: below it some model would get fewer than
				* sym_min_requests() measured requests, too few to judge its bad rate */
	bool hit_floor;        /* the search stopped at floor_rps, every rate above it failing */
	double scale;          /* the run option `rate` that achieves it */
	double upper_bound_rps;
	size_t nsteps;
	struct sym_goodput_step steps[64];
	bool have_run;            /* run: the complete run at the goodput (the best ok step) */
	/* the run's summary (kept when the run itself is not: replications past
	 * the first): median and mean batch, queueing p50/p99/max (ms), GPU busy
	 * fraction */
	double at_batch_p50, at_batch_mean, at_queue_p50_ms, at_queue_p99_ms, at_queue_max_ms, at_busy;
	struct sym_run_result run;
};

/* N searches, one per seed. */
struct sym_goodput_reps {
	size_t n;                 /* replications (>= 1) */
	uint64_t seed;            /* the first seed; search i ran seed + i */
	struct sym_goodput *by_seed; /* n searches; only by_seed[0] keeps its run */
	double mean;              /* of the n goodputs */
	bool have_ci;             /* n >= 2: ci_lo, ci_hi is the 95% interval (sym_goodput_interval) */
	double ci_lo, ci_hi;
	double run_scale;         /* the rate option of by_seed[0].run: its goodput's scale, or the lowest rate
				   * tried when that goodput is 0 */
};

/* The 95% interval of the mean goodput of n >= 2 searches that stopped
 * with brackets [pass_i, fail_i] (highest passing, lowest failing rate):
 * from the low end of the Student t interval over the pass_i to the high
 * end of the one over the fail_i. It holds the seeds' spread and the
 * search's resolution: seeds that all stop on the same probe of the
 * tolerance grid give the bracket, not a width of 0. False for n < 2. */
bool sym_goodput_interval(const double *pass, const double *fail, size_t n, double *lo, double *hi);

/* The mean total rate of the experiment's schedule at scale 1 (for a
 * constant rate: 1, the scale *is* the rate). */
double sym_schedule_mean_rate(const struct sym_experiment *e);

/* The search's upper bound (total req/s): every GPU busy with maximum-size
 * batches, the models in proportion to their rates. Its rate option is this
 * over sym_schedule_mean_rate(e). */
double sym_goodput_upper_bound(const struct sym_experiment *e);

/* The multi-model bound (core/capacity.h) of the experiment: the largest
 * total rate (req/s) any scheduler could serve its models at their shares on
 * its GPUs within their SLOs (with its network delays; several GPU kinds:
 * every GPU as the kind each model needs fewest of). 0 when a model cannot
 * meet its SLO at all; -1 when it does not apply (complex queries, a rate
 * schedule that is not one total rate split in fixed shares). */
double sym_goodput_bound(const struct sym_experiment *e);

/* Runs the search. progress: one line per step on stderr. Returns 0 or an
 * error from the engine (message in err). */
int sym_goodput_search(const struct sym_experiment *e, bool progress, struct sym_goodput *out, char *err,
		       size_t errlen);

/* Releases the kept run; call it whatever the search returned. */
void sym_goodput_finish(struct sym_goodput *g);

/* Runs e->replications searches (seeds e->seed, e->seed + 1, ...) on `jobs`
 * threads (at most one per search), and makes sure by_seed[0] holds a
 * complete run: at its goodput, or when that is 0 at the lowest rate tried.
 * progress: with one search its steps, with several one line per seed when
 * all are done (stderr). Returns 0 or the first failing seed's error (message
 * in err). Release out with sym_goodput_reps_finish whatever the result. */
int sym_goodput_replicate(const struct sym_experiment *e, int jobs, bool progress, struct sym_goodput_reps *out,
			  char *err, size_t errlen);

void sym_goodput_reps_finish(struct sym_goodput_reps *r);

/* The result object of replicated goodput searches: the result of run r (the
 * first seed's run at its goodput, g->by_seed[0].run, or a rerun of it) with
 * a config that reruns r (its rate, or its segments, scaled to g->run_scale;
 * a rate_csv schedule is echoed unscaled), then goodput_rps (the mean over
 * the seeds), goodput_ci95 ([low, high], null for one seed), replications,
 * goodput_by_seed, metrics_from ({seed, rate_rps}: the run the metrics are
 * from), rate_scale, upper_bound_rps, bound_rps and goodput_of_bound (the
 * multi-model bound, sym_goodput_bound, and the goodput's fraction of it;
 * absent where the bound does not apply) and the first seed's bisection
 * steps ("search"). NULL on ENOMEM. */
cJSON *sym_goodput_result_json(const struct sym_experiment *e, const struct sym_goodput_reps *g,
			       const struct sym_run_result *r);

#endif
