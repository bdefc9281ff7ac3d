/* core/core.h - the scheduling core: model shards plus a ranker, driven by a
 * driver that owns time.
 *
 * The core is pure: it reads no clock, does no I/O, starts no thread and keeps
 * no global state. Every entry point takes the current time `now`, which must
 * never decrease from one call to the next. What must happen is reported
 * through the sink, synchronously, from inside the entry point:
 *   - dispatch: run this batch on this GPU (the GPU is busy from then on until
 *     the driver calls sym_core_gpu_free for it);
 *   - drop: this request will not be served (reason given).
 * Sink callbacks must not call back into the core.
 *
 * Between calls the driver must call sym_core_advance(now) no later than
 * sym_core_next_wakeup() (in the simulator: exactly then). Same calls with
 * the same times give the same callbacks in the same order.
 *
 * Not thread-safe: one thread drives one core.
 */
#ifndef SYM_CORE_H
#define SYM_CORE_H

#include <stdint.h>

#include "core/policy.h"
#include "core/ranker.h"
#include "core/request.h"
#include "core/shard.h"

struct sym_dispatch {
	int model;
	int gpu;
	int size;
	sym_time now;    /* the dispatch decision */
	sym_time start;  /* planned execution start: now + ctrl + data*size */
	sym_time finish; /* planned finish: start + l(size) */
	uint32_t dropped_before; /* this model's drops since its previous dispatch */
	struct sym_request *const *reqs; /* size requests, valid during the callback */
};

struct sym_sink {
	void *ctx;
	void (*dispatch)(void *ctx, const struct sym_dispatch *d);
	void (*drop)(void *ctx, struct sym_request *r, enum sym_drop_reason why, sym_time now);
};

struct sym_core_cfg {
	int nmodels;
	const struct sym_model_cfg *models; /* nmodels entries; profiles must outlive the core */
	int ngpus;
	struct sym_policy policy;
	struct sym_gather gather;
	struct sym_net net;
};

struct sym_core_stats {
	uint64_t arrivals, dispatches, drops, wakeups;
};

struct sym_core {
	int nmodels;
	int ngpus;
	struct sym_shard *shards;
	struct sym_ranker ranker;
	struct sym_iheap timers; /* per model: its next wake-up */
	struct sym_policy policy;
	struct sym_sink sink;
	struct sym_request **scratch; /* one batch, max over models */
	struct sym_core_stats stats;
};

/* Returns 0, -EINVAL (bad configuration) or -ENOMEM; *out is NULL on error. */
int sym_core_create(struct sym_core **out, const struct sym_core_cfg *cfg, const struct sym_sink *sink);
void sym_core_destroy(struct sym_core *c);

/* A request arrived (r->model, arrival and deadline set). Returns 0, -EINVAL
 * for an unknown model, or -ENOMEM; on error the request is not queued. */
int sym_core_arrive(struct sym_core *c, struct sym_request *r, sym_time now);

/* GPU g finished its batch and is free. */
void sym_core_gpu_free(struct sym_core *c, int gpu, sym_time now);

/* Runs every timer due at or before now. */
void sym_core_advance(struct sym_core *c, sym_time now);

/* When the core next wants sym_core_advance, or SYM_TIME_NEVER. */
static inline sym_time sym_core_next_wakeup(const struct sym_core *c)
{
	return sym_iheap_empty(&c->timers) ? SYM_TIME_NEVER : sym_iheap_top_key(&c->timers);
}

/* Requests currently queued, over all models. */
uint64_t sym_core_queued(const struct sym_core *c);

#endif
