/* core/core.h - the scheduling core: model shards plus a ranker (or a
 * scheduler policy), driven by a driver that owns time.
 *
 * The core is pure: it reads no clock, does no I/O, starts no thread and keeps
 * no global state. Every entry point takes the current time `now`, which must
 * never decrease from one call to the next. What must happen is reported
 * through the sink, synchronously, from inside the entry point:
 *   - dispatch: run this batch on this GPU (the GPU is busy from then on until
 *     the driver calls sym_core_gpu_free for it);
 *   - drop: this request will not be served (reason given);
 *   - cancel: the batch running on this GPU is cancelled (preemption); its
 *     requests are back in the core, the driver must not report its
 *     completion, and the GPU is free at once (usually the core dispatches
 *     to it again within the same call).
 * Sink callbacks must not call back into the core.
 *
 * Between calls the driver must call sym_core_advance(now) no later than
 * sym_core_next_wakeup() (in the simulator: exactly then). Same calls with
 * the same times give the same callbacks in the same order.
 *
 * Heterogeneous clusters. GPUs come in kinds (GPU models, or CPUs); each
 * model has a profile per kind. GPU g is of kind gpu_kind[g]. Candidate
 * policies keep one candidate per (model, kind) and one ranker per kind: a
 * candidate due on kind k takes the lowest free GPU of kind k; a free GPU of
 * kind k grants the model ready on k with the smallest latest. With one kind
 * this is exactly the single ranker of the design.
 *
 * Scheduler policies (struct sym_sched_ops) get every event and act through
 * the services at the end of this header.
 *
 * Not thread-safe: one thread drives one core.
 */
#ifndef SYM_CORE_H
#define SYM_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/policy.h"
#include "core/ranker.h"
#include "core/request.h"
#include "core/shard.h"

struct sym_dispatch {
	int model;
	int gpu;
	int kind;        /* the GPU's kind */
	int size;
	sym_time now;    /* the dispatch decision */
	sym_time start;  /* planned execution start: now + ctrl + data*size */
	sym_time finish; /* planned finish: start + l_kind(size) */
	uint32_t dropped_before; /* this model's drops since its previous dispatch */
	struct sym_request *const *reqs; /* size requests, valid during the callback */
};

struct sym_sink {
	void *ctx;
	void (*dispatch)(void *ctx, const struct sym_dispatch *d);
	void (*drop)(void *ctx, struct sym_request *r, enum sym_drop_reason why, sym_time now);
	/* NULL when the driver cannot cancel batches (preempting policies then
	 * refuse to start). */
	void (*cancel)(void *ctx, int gpu, sym_time now);
};

struct sym_kind {
	char name[32];
	bool cpu;          /* a CPU resource (fcfs, edf and urgency prefer GPUs) */
	double memory_mb;  /* memory per device, <= 0 when unknown (no memory check) */
};

struct sym_core_cfg {
	int nmodels;
	const struct sym_model_cfg *models; /* nmodels entries; profiles must outlive the core */
	int ngpus;
	int nkinds;                         /* 0 or 1: one kind; at most SYM_MAX_KINDS */
	const struct sym_kind *kinds;       /* nkinds entries, or NULL for one unnamed GPU kind */
	const int *gpu_kind;                /* ngpus entries in 0..nkinds-1, or NULL: all kind 0 */
	struct sym_policy policy;
	struct sym_gather gather;
	struct sym_net net;
};

struct sym_core_stats {
	uint64_t arrivals, dispatches, drops, wakeups, cancels;
};

/* What the core remembers of the batch on each GPU. */
struct sym_gpu_state {
	int kind;
	bool busy;
	int model;          /* of the running batch */
	int size;
	sym_time start;     /* planned execution start */
	sym_time finish;    /* planned finish */
	struct sym_request **reqs; /* the running batch, only with sym_core_track_running */
};

struct sym_sched_ops;

struct sym_core {
	int nmodels;
	int ngpus;
	int nkinds;
	struct sym_kind kinds[SYM_MAX_KINDS];
	struct sym_shard *shards;
	struct sym_ranker *rankers;  /* one per kind (candidate policies) */
	struct sym_iheap timers;     /* candidate policies: per model; schedulers: their own ids */
	struct sym_policy policy;
	const struct sym_sched_ops *sched; /* NULL for candidate policies */
	void *sched_state;
	struct sym_sink sink;
	struct sym_gpu_state *gpus;
	int nfree;                   /* idle devices */
	int nfree_kind[SYM_MAX_KINDS]; /* idle devices per kind */
	int maxb;                    /* the largest batch over models and kinds */
	struct sym_request **scratch; /* one batch (maxb entries) */
	struct sym_core_stats stats;
	char error[256];             /* why sym_core_create failed in a scheduler's init */
};

/* Returns 0, -EINVAL (bad configuration) or -ENOMEM; *out is NULL on error. */
int sym_core_create(struct sym_core **out, const struct sym_core_cfg *cfg, const struct sym_sink *sink);

/* As sym_core_create, with a message saying what was wrong in err. */
int sym_core_create_err(struct sym_core **out, const struct sym_core_cfg *cfg, const struct sym_sink *sink,
			char *err, size_t errlen);
void sym_core_destroy(struct sym_core *c);

/* A request arrived (r->model, arrival and deadline set). Returns 0, -EINVAL
 * for an unknown model, or -ENOMEM; on error the request is not queued. */
int sym_core_arrive(struct sym_core *c, struct sym_request *r, sym_time now);

/* GPU g finished its batch and is free. */
void sym_core_gpu_free(struct sym_core *c, int gpu, sym_time now);

/* Takes free GPU g out of service at now (its backend failed or left): the
 * core treats it as busy with an empty batch (size 0) and dispatches nothing
 * to it until the driver calls sym_core_gpu_free(g), which puts it back.
 * Returns 0; -EBUSY when g is busy (a batch runs there, perhaps dispatched by
 * a timer due at now: a driver that never frees it keeps it out of service
 * just the same); -EINVAL for a bad id; -ENOTSUP for a core that tracks
 * running batches (preempting policies would take the empty batch for a
 * victim). */
int sym_core_gpu_hold(struct sym_core *c, int g, sym_time now);

/* Runs every timer due at or before now. */
void sym_core_advance(struct sym_core *c, sym_time now);

/* When the core next wants sym_core_advance, or SYM_TIME_NEVER. */
static inline sym_time sym_core_next_wakeup(const struct sym_core *c)
{
	return sym_iheap_empty(&c->timers) ? SYM_TIME_NEVER : sym_iheap_top_key(&c->timers);
}

/* Requests currently held by the core (queued, not running), over all models. */
uint64_t sym_core_queued(const struct sym_core *c);

/* ---- for scheduler policies ----
 *
 * A scheduler policy's handlers run inside the core's entry points. Handlers
 * must leave no GPU idle that their policy would use (there is no later
 * chance unless they set a timer). */
struct sym_sched_ops {
	/* Sets up c->sched_state (NULL: a policy with no state of its own). The
	 * shards (queues, le tables, drop rule) and GPU states exist already.
	 * Returns 0, or -EINVAL/-ENOMEM with a message in err. */
	int (*init)(struct sym_core *c, char *err, size_t errlen);
	void (*finish)(struct sym_core *c); /* NULL when init keeps no state */
	/* A request arrived. NULL: the core queues it in its model's shard and
	 * calls `poke` (below) for that model. Returns 0 or -ENOMEM (the request
	 * is then not held). */
	int (*arrive)(struct sym_core *c, struct sym_request *r, sym_time now);
	/* Model m's shard queue changed (after the default arrive). */
	void (*poke)(struct sym_core *c, int m, sym_time now);
	/* GPU g is free (its batch finished). */
	void (*gpu_free)(struct sym_core *c, int g, sym_time now);
	/* Timer id fired (set with sym_core_timer_set). */
	void (*timer)(struct sym_core *c, int id, sym_time now);
	/* Requests the policy holds outside the shard queues (NULL: none). */
	uint64_t (*held)(const struct sym_core *c);
};

/* Timers: ids 0..n-1, at most one pending time each. init may resize
 * (default n = nmodels). Returns 0 or -ENOMEM. */
int sym_core_timers_reserve(struct sym_core *c, int n);
static inline void sym_core_timer_set(struct sym_core *c, int id, sym_time t) { sym_iheap_set(&c->timers, id, t); }
static inline void sym_core_timer_clear(struct sym_core *c, int id) { sym_iheap_remove(&c->timers, id); }

/* Keep the request pointers of every running batch (needed to cancel).
 * Returns 0 or -ENOMEM. */
int sym_core_track_running(struct sym_core *c);

/* Dispatches reqs[0..size) of model m on free GPU g at now (0 < size <=
 * the model's largest batch on g's kind; every request must be model m's and
 * no longer in any queue). Marks g busy and calls the sink. */
void sym_core_dispatch(struct sym_core *c, int m, int g, struct sym_request **reqs, int size, sym_time now);

/* Takes the first size requests of model m's shard queue and dispatches them
 * on g (the shard's dropped-since-batch counter goes with them). */
void sym_core_dispatch_queue(struct sym_core *c, int m, int g, int size, sym_time now);

/* Ends r with a drop (reason why). */
void sym_core_drop(struct sym_core *c, struct sym_request *r, enum sym_drop_reason why, sym_time now);

/* Cancels the batch running on busy GPU g (needs sym_core_track_running and
 * a sink with cancel): calls the sink, frees g, and writes the batch's
 * requests to out (room for the model's largest batch). Returns their count. */
int sym_core_cancel(struct sym_core *c, int g, sym_time now, struct sym_request **out);

/* Chooses what a free device of kind k runs at now: a model (its batch size
 * in *size, taken from the head of its shard queue), or -1 for nothing. */
typedef int (*sym_core_pick_fn)(struct sym_core *c, int k, sym_time now, int *size);

/* Work-conserving fill: offers each free device, in id order, to pick and
 * dispatches what it chooses. A kind that got nothing is not asked again in
 * the same pass; the pass repeats when a dispatch followed such a miss
 * (taking a batch moves a head to a later deadline, which may now fit that
 * kind). Then, while a device stays idle with requests queued, keeps timer
 * `timer_id` at the next head expiry (sym_core_next_expiry), else clears it. */
void sym_core_fill(struct sym_core *c, sym_core_pick_fn pick, int timer_id, sym_time now);

/* Drops model m's queue heads that cannot finish by their deadline even
 * alone on the fastest kind (now + le(1) > deadline; reason expired).
 * Returns the queue length after. */
size_t sym_core_expire(struct sym_core *c, int m, sym_time now);

/* After expiring every model's heads at now: the earliest moment one of the
 * heads will expire (deadline - le(1) + 1), or SYM_TIME_NEVER when every
 * queue is empty. A scheduler that leaves a device idle while requests wait
 * (none fits that device's kind) sets a timer there, so that the head is
 * dropped and the requests behind it get their chance. */
sym_time sym_core_next_expiry(struct sym_core *c, sym_time now);

/* Effective latency table of model m on kind k: le[b], b = 0..max_batch+1. */
static inline const sym_time *sym_core_le(const struct sym_core *c, int m, int k)
{
	return c->shards[m].lek[k];
}

/* Model m's largest batch on kind k. */
static inline int sym_core_max_batch(const struct sym_core *c, int m, int k)
{
	return c->shards[m].maxb_k[k];
}

#endif
