/* core/core.h - the scheduling core: model shards plus a ranker per GPU kind
 * (or a scheduler policy), driven by a driver that owns time.
 *
 * The core is pure: it reads no clock, does no I/O, starts no thread and keeps
 * no global state. Every entry point takes the current time `now`, which must
 * never decrease from one call to the next. What must happen is reported
 * through the sink, synchronously, from inside the entry point:
 *   - dispatch: run this batch on this GPU, from its planned start (the GPU
 *     may still be running earlier batches: the driver runs a GPU's batches
 *     in order, each at its planned start or when the one before it ends,
 *     whichever is later);
 *   - drop: this request will not be served (reason given);
 *   - cancel: the batch running on this GPU is cancelled (preemption); its
 *     requests are back in the core, the driver must not report its
 *     end, and the GPU is free at once (usually the core dispatches
 *     to it again within the same call).
 * Sink callbacks must not call back into the core. The driver reports the
 * end of each batch, in order per GPU (sym_core_gpu_done).
 *
 * Between calls the driver must call sym_core_advance(now) no later than
 * sym_core_next_wakeup() (in the simulator: exactly then). Same calls with
 * the same times give the same callbacks in the same order.
 *
 * Candidate policies (symphony, eager, timeout, betalambda) run the exchange
 * of core/models.h (the model side: shards, candidates) and core/ranker.h
 * (one ranker per GPU kind: GPUs, ready candidates, matching), delivering its
 * messages within each entry point: after each message round every ranker
 * with news matches. The runtime's threaded scheduler runs the same two
 * sides on threads. With send-ahead (sym_core_cfg.send_ahead) a GPU running a
 * batch takes its next batch once the plan and inputs sent now would arrive
 * after its predicted free time, so it never waits on the network; at most
 * one batch is planned ahead per GPU.
 *
 * Heterogeneous clusters. GPUs come in kinds (GPU models, or CPUs); each
 * model has a profile per kind. GPU g is of kind gpu_kind[g]. Candidate
 * policies keep one candidate per (model, kind) and one ranker per kind: a
 * candidate due on kind k takes the lowest eligible GPU of kind k; a GPU of
 * kind k goes to the model ready on k with the smallest latest. A model due
 * on several kinds is ready on each; grants of one matching round reach it
 * in kind order, and one it cannot use any more goes back. With one kind this
 * is exactly the single ranker of the design.
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

#include "core/models.h"
#include "core/policy.h"
#include "core/ranker.h"
#include "core/request.h"
#include "core/shard.h"

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
	bool send_ahead;                    /* candidate policies: plan a GPU's next batch before it frees */
	int max_ahead;                      /* scheduler policies: batches a GPU may hold planned behind the
					     * running one (0: SYM_GPU_MAX_OUTSTANDING - 1); the runtime's
					     * backends hold 1 */
};

struct sym_core_stats {
	uint64_t arrivals, dispatches, drops, wakeups, cancels;
};

/* What the driver reports of a batch that ended. */
struct sym_batch_end {
	sym_time start;  /* when it really started (its end when rejected) */
	sym_time end;    /* when it ended (<= the report's now) */
	bool rejected;   /* the driver did not run it (it could not start by its reject_after); its
			  * requests are the driver's to end */
};

/* The largest number of batches a GPU may have outstanding (running and
 * planned) in the core's books. */
#define SYM_GPU_MAX_OUTSTANDING 8

/* What the core remembers of each GPU. */
struct sym_gpu_state {
	int kind;
	bool busy;          /* nout > 0, or out of service */
	bool off;           /* out of service (sym_core_gpu_offline) */
	int nout;           /* batches outstanding: running, then planned */
	uint32_t epoch;
	sym_time free_at;   /* predicted: the planned finish of its last outstanding batch */
	int model;          /* of the last batch sent to it */
	int size;
	sym_time start;     /* its planned start */
	sym_time finish;    /* its planned finish */
	struct sym_batch_end last_end; /* the last batch end reported (read it in gpu_free hooks) */
	struct sym_request **reqs; /* the running batch, only with sym_core_track_running */
};

struct sym_sched_ops;

struct sym_core {
	int nmodels;
	int ngpus;
	int nkinds;
	struct sym_kind kinds[SYM_MAX_KINDS];
	struct sym_shard *shards;
	struct sym_iheap timers;     /* candidate policies: models 0..nmodels-1, then one per ranker;
				      * schedulers: their own ids */
	struct sym_policy policy;
	bool send_ahead;
	int max_outstanding;         /* batches a GPU may have outstanding: 1 + the plans it may hold ahead */
	const struct sym_sched_ops *sched; /* NULL for candidate policies */
	void *sched_state;
	struct sym_sink sink;
	struct sym_gpu_state *gpus;
	int nfree;                   /* idle devices in service */
	int nfree_kind[SYM_MAX_KINDS]; /* idle devices per kind */
	int maxb;                    /* the largest batch over models and kinds */
	struct sym_request **scratch; /* one batch (maxb entries) */
	/* candidate policies: the exchange */
	struct sym_models models;
	struct sym_ranker *rankers;  /* one per kind */
	struct sym_xmsg *xq;         /* messages in flight: a ring of xq_cap */
	int *xq_dest;                /* per slot: the ranker's kind, or -1 for the model side */
	size_t xq_head, xq_len, xq_cap;
	uint32_t dirty;              /* rankers with news since they last matched (bit per kind) */
	bool delivering;
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

/* The oldest outstanding batch of GPU g ended (or was rejected: e says
 * which, with its real start and end; end <= now, which is when the core
 * hears of it). The GPU's predicted free time is reconciled: a batch planned
 * after it starts at its planned start, or at e->end when that is later. */
void sym_core_gpu_done(struct sym_core *c, int g, sym_time now, const struct sym_batch_end *e);

/* sym_core_gpu_done with a batch that ended at now (start unknown: its
 * planned start). */
void sym_core_gpu_free(struct sym_core *c, int gpu, sym_time now);

/* Takes GPU g out of service at now (its backend failed or left). Its
 * outstanding batches are forgotten: the driver ends their requests and
 * reports no end for them. Nothing is dispatched to it until
 * sym_core_gpu_online(g), which puts it back idle. epoch: the driver's count
 * of g's offlines and onlines, carried by later dispatches to g
 * (sym_dispatch.epoch). Returns 0; -EINVAL for a bad id; -ENOTSUP for a core
 * that tracks running batches (preempting policies). */
int sym_core_gpu_offline(struct sym_core *c, int g, uint32_t epoch, sym_time now);
int sym_core_gpu_online(struct sym_core *c, int g, uint32_t epoch, sym_time now);

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
	/* GPU g's oldest outstanding batch ended (c->gpus[g].last_end says how;
	 * c->gpus[g].nout batches are still outstanding), or g came back online
	 * idle. */
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
 * no longer in any queue), to start at now + ctrl + data*size. Marks g busy
 * and calls the sink. */
void sym_core_dispatch(struct sym_core *c, int m, int g, struct sym_request **reqs, int size, sym_time now);

/* The same on GPU g, idle or not (fewer than c->max_outstanding batches
 * outstanding there): the batch is planned to start at
 * `start` (at least now + ctrl + data*size and at least g's predicted free
 * time free_at; it is raised to both) and the driver rejects it if it
 * cannot start by reject_after (SYM_TIME_NEVER: never). Returns its planned
 * start. */
sym_time sym_core_dispatch_ahead(struct sym_core *c, int m, int g, struct sym_request **reqs, int size, sym_time now,
				 sym_time start, sym_time reject_after);

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
