/* fcfs and edf: the urgency scheduler's baselines.
 *
 * Scheduler policies over the shards' deadline-ordered queues, work
 * conserving: whenever a device is free and requests are queued, the chosen
 * model issues everything it has queued, up to the largest batch of the
 * device's kind, from its queue head, to a free device; GPUs are preferred
 * over CPUs (kinds marked cpu), the lowest id within. Repeat while devices
 * are free and requests are queued. No timers, no waiting.
 *
 *   fcfs: the model whose queue head arrived first (ties: the earlier head
 *         deadline, then the lower model index);
 *   edf:  the model whose queue head has the earliest deadline (ties: the
 *         earlier arrival, then the lower model index).
 *
 * Batches are not shrunk to fit deadlines (responses may be late); a queue
 * head is dropped (expired) once it cannot finish even alone on the fastest
 * kind: now + le(1) > d. One O(models) scan per dispatch.
 *
 * Parameter: max=N, the consolidation limit (requests issued together at
 * most; default: the kind's largest batch). max=1 processes one request at
 * a time, as the urgency paper's description of its baselines reads
 * ("the client request with the closest deadline is processed first").
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/policy_api.h"

struct params {
	int max; /* 0: the kind's largest batch */
};
SYM_POLICY_PARAMS(struct params, params_of)

static const struct sym_param params[] = {
	{ .key = "max", .type = SYM_PARAM_INT, .offset = offsetof(struct params, max), .lo = 1,
	  .hi = SYM_PROFILE_BATCH_LIMIT, .def = 0, .def_text = "the kind's largest batch",
	  .help = "consolidation limit: requests issued together at most" },
	{ .key = NULL },
};

/* The lowest free GPU, else the lowest free CPU, else -1. */
static int pick_device(const struct sym_core *c)
{
	int cpu = -1;
	for (int g = 0; g < c->ngpus; g++) {
		if (c->gpus[g].busy)
			continue;
		if (!c->kinds[c->gpus[g].kind].cpu)
			return g;
		if (cpu < 0)
			cpu = g;
	}
	return cpu;
}

static void schedule(struct sym_core *c, sym_time now, bool edf)
{
	while (c->nfree > 0) {
		int best = -1;
		sym_time k1 = 0, k2 = 0;
		for (int m = 0; m < c->nmodels; m++) {
			if (!sym_core_expire(c, m, now))
				continue;
			const struct sym_request *h = sym_queue_at(&c->shards[m].queue, 0);
			sym_time a = edf ? h->deadline : h->arrival;
			sym_time b = edf ? h->arrival : h->deadline;
			if (best < 0 || a < k1 || (a == k1 && b < k2)) {
				best = m;
				k1 = a;
				k2 = b;
			}
		}
		if (best < 0)
			return;
		int g = pick_device(c);
		size_t n = sym_queue_len(&c->shards[best].queue);
		int size = sym_core_max_batch(c, best, c->gpus[g].kind), lim = params_of(&c->policy).max;
		if (lim > 0 && size > lim)
			size = lim;
		if ((size_t)size > n)
			size = (int)n;
		sym_core_dispatch_queue(c, best, g, size, now);
	}
}

/* Whatever happened (an arrival, a free device; no timers are set), the
 * free devices take work now. */
static void fcfs_react(struct sym_core *c, enum sym_sched_event ev, int id, sym_time now)
{
	(void)ev, (void)id;
	schedule(c, now, false);
}

static void edf_react(struct sym_core *c, enum sym_sched_event ev, int id, sym_time now)
{
	(void)ev, (void)id;
	schedule(c, now, true);
}

static const struct sym_sched_ops fcfs_ops = {
	.init = NULL, /* no state of its own */
	.finish = NULL,
	.arrive = NULL,
	.react = fcfs_react,
	.held = NULL,
};

static const struct sym_sched_ops edf_ops = {
	.init = NULL, /* no state of its own */
	.finish = NULL,
	.arrive = NULL,
	.react = edf_react,
	.held = NULL,
};

const struct sym_policy_ops sym_policy_fcfs = {
	.name = "fcfs",
	.summary = "first come first served: the model whose queue head arrived first issues all it has queued "
		   "(up to the largest batch, or max=N) to a free device, GPUs before CPUs",
	.params = params,
	.params_size = sizeof(struct params),
	.sched = &fcfs_ops,
};

const struct sym_policy_ops sym_policy_edf = {
	.name = "edf",
	.summary = "earliest deadline first: the model whose queue head is due first issues all it has queued "
		   "(up to the largest batch, or max=N) to a free device, GPUs before CPUs",
	.params = params,
	.params_size = sizeof(struct params),
	.sched = &edf_ops,
};
