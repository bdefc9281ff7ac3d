/* core/nexus_plan.h - Nexus's epoch planner: squishy bin packing.
 *
 * Given each model's request rate, SLO and batch latency profile on one GPU
 * kind, the planner decides how many GPUs the models need and what each GPU
 * runs: a duty cycle D and, per model it hosts (a *session*), the batch size
 * it runs once per cycle and the request rate routed to it. It is a pure
 * function (no clock, no global state), used by the nexus policy every epoch
 * and directly by capacity-planning tools. The rules and their derivations
 * are in core/nexus_plan.c.
 *
 * A GPU with duty cycle D runs each of its sessions' batches once per D, one
 * after the other. A request arriving just after its session's batch started
 * waits at most D for the next one and is done lat(b) + delay later, so every
 * session keeps D + lat(b) + delay <= SLO, and the batches fit in the cycle:
 * the sum of lat(b) over the sessions is <= D.
 */
#ifndef SYM_NEXUS_PLAN_H
#define SYM_NEXUS_PLAN_H

#include <stdbool.h>

#include "core/time.h"

/* Upper limit on the GPUs of one plan (a larger need is -EOVERFLOW). */
#define SYM_NEXUS_MAX_GPUS (1 << 24)

/* One model as the planner sees it. */
struct sym_nexus_model {
	double rate;          /* requests per second to plan for, finite and >= 0 (0: no GPU) */
	sym_time slo;         /* latency objective, > 0 */
	/* lat[b] for b = 1..max_batch: how long a batch of b holds the GPU
	 * (> 0, non-decreasing in b). lat[0] is not read. */
	const sym_time *lat;
	int max_batch;        /* >= 1 */
	/* Latency after the GPU is released that still counts against the SLO
	 * (the response's trip back), >= 0. */
	sym_time delay;
	double static_mb;     /* memory held while loaded, < 0 when unknown (counted as 0) */
	double dynamic_mb;    /* memory one batch execution adds, < 0 when unknown (0) */
};

/* One model on one planned GPU. */
struct sym_nexus_session {
	int model;            /* index into the models given to the planner */
	int batch;            /* the batch size it runs once per duty cycle, >= 1 */
	double rate;          /* requests per second routed to it (its planned throughput) */
};

/* One planned GPU. Its sessions are plan->sessions[first .. first+nsessions),
 * in the order the GPU runs them within a cycle. */
struct sym_nexus_gpu {
	sym_time duty;        /* the duty cycle D */
	sym_time busy;        /* sum of lat(batch) over its sessions, <= duty */
	bool saturated;       /* one model at its largest SLO-safe batch, back to back (duty = busy) */
	double memory_mb;     /* sum of the known static memory plus the largest dynamic memory */
	int first;
	int nsessions;        /* >= 1 */
};

struct sym_nexus_plan {
	int ngpus;                          /* GPUs the plan needs */
	struct sym_nexus_gpu *gpus;         /* ngpus entries: whole GPUs first, by model, then shared ones */
	int nsessions;
	struct sym_nexus_session *sessions; /* nsessions entries */
};

/* An empty plan (no GPUs), ready to be computed into or finished. */
void sym_nexus_plan_init(struct sym_nexus_plan *plan);

/* Computes the plan for models[0..nmodels) on GPUs of one kind with
 * gpu_memory_mb of memory each (<= 0: unknown, memory is not checked).
 * max_gpus > 0 caps the answer: a plan needing more GPUs fails with -ENOSPC
 * (cheaply: the whole-GPU count is checked before anything is packed);
 * max_gpus <= 0 means no cap. A model whose lat(1) + delay exceeds its SLO
 * cannot be served by any batch and gets no session; so does a model with
 * rate 0.
 *
 * Any plan already in *plan is released first. Returns 0 with the plan in
 * *plan, or -EINVAL (bad input), -ENOSPC (over max_gpus), -EOVERFLOW (more
 * than SYM_NEXUS_MAX_GPUS GPUs) or -ENOMEM, with *plan empty. */
int sym_nexus_plan_compute(struct sym_nexus_plan *plan, const struct sym_nexus_model *models, int nmodels,
			   double gpu_memory_mb, int max_gpus);

/* Nexus's incremental epoch (nexus.md, Section 6.1, last paragraph): the
 * plan for models' new rates that keeps prev's GPUs where it can. Each
 * previous GPU keeps its sessions with their rates scaled to their model's
 * new rate (a saturated GPU keeps its throughput when its model grew); a GPU
 * that no longer fits (overloaded) evicts its cheapest session (the least
 * occupancy alone) until it fits. When the total rate fell, the sessions of
 * the least utilised GPUs (under half busy) move onto the others where they
 * fit, and a GPU left empty is released. What the kept GPUs do not carry
 * (evicted sessions, growth) is bin-packed as by sym_nexus_plan_compute
 * onto new GPUs, after the kept ones. *evicted and *released count the
 * sessions evicted and the GPUs released. Same returns as
 * sym_nexus_plan_compute (-ENOSPC when the kept and new GPUs exceed
 * max_gpus > 0); -EINVAL also for a prev that names a model >= nmodels. */
int sym_nexus_plan_incremental(struct sym_nexus_plan *plan, const struct sym_nexus_plan *prev,
			       const struct sym_nexus_model *models, int nmodels, double gpu_memory_mb, int max_gpus,
			       int *evicted, int *released);

/* Releases the plan's arrays and leaves it empty. Accepts an empty plan. */
void sym_nexus_plan_finish(struct sym_nexus_plan *plan);

/* Session i (0 <= i < nsessions) of planned GPU g. */
static inline const struct sym_nexus_session *sym_nexus_plan_session(const struct sym_nexus_plan *plan, int g,
								      int i)
{
	return &plan->sessions[plan->gpus[g].first + i];
}

/* Total rate planned for model m over all GPUs (requests per second). */
double sym_nexus_plan_rate(const struct sym_nexus_plan *plan, int m);

#endif
