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

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/vocab.h"
#include "experiment/config.h"
#include "experiment/result.h"

struct sym_run_opts {
	double rate;      /* total rate (constant rate), or the scale of a schedule (1 = as given) */
	FILE *trace;      /* per-batch CSV rows, or NULL */
	bool model_timeline; /* also count the timeline per model (res->model_timeline) */
	uint64_t stop_after_bad; /* > 0: stop once this many measured requests were late or dropped
				  * (the goodput search's failing steps); the result is then partial,
				  * stopped_early is set and conservation is not checked */
	const uint64_t *stop_model_bad; /* NULL, or one limit per model: stop as stop_after_bad does once
					 * model m's measured late and dropped requests reach
					 * stop_model_bad[m] (> 0; 0: no limit for m) */
};

/* Simulated nanoseconds of arrivals run so far by every simulation of the
 * process (all threads): a progress meter's measure of work done. */
extern _Atomic uint64_t sym_sim_work_ns;

/* Runs one simulation of the resolved experiment e. Returns 0, -ENOMEM, or
 * -EPROTO when conservation failed (message in err). res is filled on
 * success and must be released with sym_run_result_finish either way. */
int sym_sim_run(const struct sym_experiment *e, const struct sym_run_opts *opts, struct sym_run_result *res,
		char *err, size_t errlen);

/* Checks that the scheduling core accepts the resolved experiment (the
 * policy's parameters against the models and cluster) without running it.
 * Returns 0, or -EINVAL/-ENOMEM with a message in err. */
int sym_sim_check(const struct sym_experiment *e, char *err, size_t errlen);

#endif
