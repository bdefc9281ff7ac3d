/* sim/plan.h - capacity planning: how many GPUs a workload needs.
 *
 * For a resolved experiment and a target total rate R, per policy: the
 * smallest GPU count whose simulation at R passes the experiment's criterion
 * (sim/goodput.h: by default every model's bad rate within max_bad_rate;
 * each step one simulation, same seed; doubling, then bisection over whole
 * GPU counts). A failing step stops early as the goodput search's do. With
 * replications, one such search per seed (seed, seed+1, ...) on a thread
 * pool. Beside it, two analytic estimates:
 *   - staggered execution (core/capacity.h), per model for its share of R,
 *     summed over the models;
 *   - the Nexus squishy-packing plan (core/nexus_plan.h) of the whole
 *     workload.
 * Homogeneous clusters only (one device kind).
 */
#ifndef SYM_PLAN_H
#define SYM_PLAN_H

#include <stdbool.h>

#include "experiment/config.h"

struct sym_plan_result {
	int gpus;           /* the smallest count that serves R, or -1 when none up to max_gpus does */
	int at_gpus;        /* the count the metrics below are from: gpus, or max_gpus when none serves R
			     * (then from a complete run there, not one stopped early) */
	double bad_rate;    /* at at_gpus (of all its requests) */
	int worst;          /* the worst model there (struct sym_verdict), -1 when none */
	double worst_bad_rate;
	size_t few;         /* models with fewer than sym_min_requests() measured requests there */
	int steps;          /* simulations run */
	/* the margin below the answer: the step at gpus - 1, which failed (-1 when it was not run: the
	 * answer is the first count tried) */
	int below_gpus;
	double below_bad_rate;      /* of the part that ran when it stopped early */
	int below_worst;            /* the model that failed first there */
	double below_worst_bad_rate;
	bool below_stopped_early;
};

struct sym_plan_analytic {
	int staggered;      /* sum over models of the staggered minimum, -1 when a model cannot be served */
	int nexus;          /* GPUs of the squishy-packing plan, -1 when it fails */
};

/* The simulated minimum for e's policy (e->gpus is changed and restored).
 * Returns 0 or an error with a message. */
int sym_plan_search(struct sym_experiment *e, double rate, int max_gpus, bool progress, struct sym_plan_result *out,
		    char *err, size_t errlen);

/* One search per seed e->seed + i, i < e->replications, into by_seed[i], on
 * `jobs` threads, each on its own copy of e (e is not changed). progress:
 * the steps, with one seed only. Returns 0 or the first failing seed's error
 * (message in err). */
int sym_plan_replicate(const struct sym_experiment *e, double rate, int max_gpus, int jobs, bool progress,
		       struct sym_plan_result *by_seed, char *err, size_t errlen);

/* One complete run per seed (as sym_plan_replicate's) at `gpus` GPUs and
 * rate option `rate`: by_seed[i]'s at_gpus, bad_rate, worst, worst_bad_rate
 * and few (gpus -1: no search). The worst model at a plan's answer, measured
 * there under every seed. Returns 0 or the first failing seed's error. */
int sym_plan_measure(const struct sym_experiment *e, double rate, int gpus, int jobs, struct sym_plan_result *by_seed,
		     char *err, size_t errlen);

/* The goodput (the goodput search, e->replications seeds on `jobs` threads)
 * of e's policy on `gpus` GPUs: a plan's answer's headroom. e->gpus is
 * changed and restored. out is sym_goodput_reps_finish()ed by the caller.
 * Returns 0 or an error with a message. */
struct sym_goodput_reps;
int sym_plan_goodput_at(struct sym_experiment *e, int gpus, int jobs, struct sym_goodput_reps *out, char *err,
			size_t errlen);

/* The analytic estimates for e's models at total rate `rate`. */
void sym_plan_analytic(const struct sym_experiment *e, double rate, int max_gpus, struct sym_plan_analytic *out);

#endif
