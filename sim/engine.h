/* sim/engine.h - the discrete-event simulator: virtual time, emulated GPUs
 * and network, arrivals from the workload generators, driving the core.
 *
 * Events (arrivals, GPU completions) sit in a heap keyed by (time, insertion
 * sequence), so equal-time events fire in a fixed order; the core's own
 * timers are run at exactly sym_core_next_wakeup() (events at the same time
 * first). A seed reproduces a run bit for bit.
 *
 * Arrivals come during [0, duration); the run then drains: every queued
 * request ends served, late or dropped. Metrics count only requests that
 * arrive in [warmup, duration); batch sizes count batches dispatched in that
 * window; GPU busy time is clipped to it. At the end the engine checks
 * conservation (every request arrived ends exactly once) and fails with
 * -EPROTO if it does not hold.
 */
#ifndef SYM_ENGINE_H
#define SYM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/hist.h"
#include "core/shard.h"
#include "sim/config.h"

struct sym_model_result {
	uint64_t offered, served, late, dropped;
	uint64_t dropped_by[SYM_DROP_NREASONS];
	struct sym_hist latency;  /* arrival to response, served and late */
	struct sym_hist queueing; /* arrival to execution start */
	uint64_t batches;
	uint64_t batched;         /* requests in those batches */
	int max_batch;
	uint64_t *batch_counts;   /* [0..max_batch] */
};

/* One interval of the timeline (interval_s long; the last may be cut short
 * by the end of arrivals). Requests count in the interval they arrived in. */
struct sym_timeline_row {
	uint64_t offered, good, bad;
	double busy_gpu_s;  /* GPU-seconds busy during this interval */
	uint32_t gpus_used; /* distinct GPUs busy at some moment of it */
};

struct sym_run_result {
	double rate;                   /* the configured total rate scale of the run */
	size_t nmodels;
	struct sym_model_result *models;
	struct sym_model_result total;
	double window_s;               /* measured window: duration - warmup */
	double gpu_busy_fraction;      /* busy GPU-time / (gpus * window) */
	int gpus_used;                 /* distinct GPUs that ran a batch in the window */
	uint64_t preemptions;          /* batches cancelled in the window (shepherd) */
	double preempted_gpu_seconds;  /* GPU time those batches had used, lost */
	uint64_t simulated_requests;   /* all arrivals, warm-up included */
	uint64_t events;
	double wall_seconds;
	bool stopped_early;            /* stop_after_bad or a stop_model_bad limit reached: counts cover only
					* part of the run */
	double interval_s;             /* timeline interval */
	size_t nintervals;             /* covering [0, duration) */
	struct sym_timeline_row *timeline;
	uint64_t *model_timeline;      /* with opts.model_timeline: per interval and model, offered,
					* good, bad: [(i * nmodels + m) * 3 + 0..2]; else NULL */
};

struct sym_run_opts {
	double rate;      /* total rate (constant rate), or the scale of a schedule (1 = as given) */
	FILE *trace;      /* per-batch CSV rows, or NULL */
	bool progress;    /* progress lines on stderr */
	bool model_timeline; /* also count the timeline per model (res->model_timeline) */
	uint64_t stop_after_bad; /* > 0: stop once this many measured requests were late or dropped
				  * (the goodput search's failing steps); the result is then partial,
				  * stopped_early is set and conservation is not checked */
	const uint64_t *stop_model_bad; /* NULL, or one limit per model: stop as stop_after_bad does once
					 * model m's measured late and dropped requests reach
					 * stop_model_bad[m] (> 0; 0: no limit for m) */
};

/* Runs one simulation of the resolved experiment e. Returns 0, -ENOMEM, or
 * -EPROTO when conservation failed (message in err). res is filled on
 * success and must be released with sym_run_result_finish either way. */
int sym_sim_run(const struct sym_experiment *e, const struct sym_run_opts *opts, struct sym_run_result *res,
		char *err, size_t errlen);

void sym_run_result_finish(struct sym_run_result *r);

/* Allocates r's per-model results and a timeline covering [0, end) in steps
 * of interval (for drivers that count their own runs: loadgen). Returns 0
 * or -ENOMEM (release with sym_run_result_finish either way). */
int sym_run_result_alloc(struct sym_run_result *r, const struct sym_experiment *e, sym_time end, sym_time interval);

/* Initialises e->nmodels arrival generators, model m's as the simulator
 * draws them at total rate (or schedule scale) `rate`: the same seed gives
 * the same arrival times in `symphony sim` and in `symphony loadgen`.
 * Returns 0, -EINVAL or -ENOMEM. */
int sym_experiment_arrivals(const struct sym_experiment *e, double rate, struct sym_arrivals *arr);

/* Checks that the scheduling core accepts the resolved experiment (the
 * policy's parameters against the models and cluster) without running it.
 * Returns 0, or -EINVAL/-ENOMEM with a message in err. */
int sym_sim_check(const struct sym_experiment *e, char *err, size_t errlen);

static inline double sym_bad_rate(const struct sym_model_result *m)
{
	return m->offered ? (double)(m->late + m->dropped) / (double)m->offered : 0;
}

/* The length (s) of timeline interval i: interval_s, except a last one cut
 * short by the end of arrivals. */
double sym_timeline_interval_len(const struct sym_run_result *r, double duration_s, size_t i);

/* The q-quantile of the batch-size distribution (0 when no batch). */
int sym_batch_quantile(const struct sym_model_result *m, double q);

#endif
