/* core/core.h - the scheduling core as its drivers see it: model shards plus
 * a ranker per GPU kind (or a scheduler policy), driven by a driver that owns
 * time. The core is opaque here; what a policy author needs (the core's
 * state, the services scheduler policies call, the parameter tables) is in
 * core/policy_api.h, which drivers never include.
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
 * Scheduler policies (struct sym_sched_ops in core/policy_api.h) get every
 * event and act through the core's services.
 *
 * Not thread-safe: one thread drives one core.
 */
#ifndef SYM_CORE_H
#define SYM_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/policy.h"
#include "core/request.h"
#include "core/vocab.h"

/* The core: opaque to drivers. */
struct sym_core;

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
	/* Sub-clusters (core/parts.h): 0 or 1, none; else the core has nparts
	 * parts, model m in models[m].part and GPU g in gpu_part[g] (-1: none
	 * yet, the driver keeps it offline until sym_core_gpu_set_part); candidate
	 * policies only, nparts * nkinds at most SYM_MAX_KINDS. */
	int nparts;
	const int *gpu_part;
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

/* GPU g, offline, becomes one of kind `kind`'s (its ranker's) from its next
 * sym_core_gpu_online: a GPU moving to another sub-cluster, whose part and
 * kind the driver maps onto the core's kinds. 0; -EINVAL for a bad id or
 * kind; -EBUSY while g is online. */
int sym_core_gpu_set_kind(struct sym_core *c, int g, int kind);

/* Model m runs on the kinds not in kinds_off from now on (a model moving to
 * another sub-cluster, Section 4.7 of symphony-centralized-orchestration.md):
 * its queue stays, and its next batch goes to a GPU of a kind it runs on.
 * Every kind off holds it (its requests wait, none is dispatched; see
 * sym_shard_set_kinds_off). Returns 0; -EINVAL for a bad model or a core of
 * one kind; -ENOTSUP for a scheduler policy (kinds_off is the candidate
 * policies'). */
int sym_core_set_kinds_off(struct sym_core *c, int m, uint32_t kinds_off, sym_time now);

/* Sub-clusters (cfg.nparts >= 2, core/parts.h). Model m serves from part
 * `part` from now on: its queue stays, its next batch goes to a GPU of that
 * part; part -1: none, the model is held (its requests wait: a stalled move,
 * control/moves.h). GPU g, offline, joins part `part` at its next
 * sym_core_gpu_online. 0; -EINVAL for a bad id or part, or a core without
 * parts; -EBUSY (GPU) while g is online. */
int sym_core_set_part(struct sym_core *c, int m, int part, sym_time now);
int sym_core_gpu_set_part(struct sym_core *c, int g, int part);

/* Model m's arrival statistics start afresh (core/shard.h,
 * sym_shard_restart_arrivals): it was out of service and is back. 0;
 * -EINVAL for a bad model; -ENOTSUP for a scheduler policy (no shards). */
int sym_core_restart_arrivals(struct sym_core *c, int m);

/* Model m becomes the model of cfg (a spare slot of the runtime's model
 * repository filled; sym_models_set_model): only while it holds no request,
 * with batches no larger than the core's largest, candidate policies only.
 * 0, -EBUSY, -EINVAL or -ENOTSUP (a scheduler policy plans every model at
 * start). */
int sym_core_set_model(struct sym_core *c, int m, const struct sym_model_cfg *cfg);

/* Model m's SLO is slo from now on (a complex query's stage whose budget was
 * re-planned): what the policies plan with (Nexus's sessions, early drop's
 * target, timeout's wait) uses it from their next use; the requests' own
 * deadlines are the driver's. Its largest batch stays the one of the SLO it
 * was created with. Returns 0, or -EINVAL for a bad model or slo <= 0. */
int sym_core_set_slo(struct sym_core *c, int m, sym_time slo);

/* Runs every timer due at or before now. */
void sym_core_advance(struct sym_core *c, sym_time now);

/* When the core next wants sym_core_advance, or SYM_TIME_NEVER. */
sym_time sym_core_next_wakeup(const struct sym_core *c);

/* Requests currently held by the core (queued, not running), over all models. */
uint64_t sym_core_queued(const struct sym_core *c);

/* ---- what the driver may read ---- */

/* Counts since creation. */
const struct sym_core_stats *sym_core_stats(const struct sym_core *c);

/* The measured waits (core/ranker.h, the look-ahead guard's wait and wait_safe) that model m
 * last heard from the ranker of kind k, ns: 0 without them (a policy that does not measure, or
 * not a candidate policy). */
void sym_core_waits(const struct sym_core *c, int m, int k, sym_time *wait, sym_time *safe);

/* Batches a GPU may have outstanding at once (running, then planned): the
 * driver's per-GPU queue needs that many places. */
int sym_core_max_outstanding(const struct sym_core *c);

/* The largest batch over models and kinds. */
int sym_core_largest_batch(const struct sym_core *c);

/* Devices in service with nothing outstanding. */
int sym_core_idle_gpus(const struct sym_core *c);

/* Effective latency table of model m on kind k: le[b], b = 0..max_batch+1
 * (le = l + ctrl + data*b + resp; see core/shard.h). */
const sym_time *sym_core_le(const struct sym_core *c, int m, int k);

/* The same on the fastest kind for each size (with one kind: kind 0's). */
const sym_time *sym_core_le_min(const struct sym_core *c, int m);

/* Model m's largest batch on kind k. */
int sym_core_max_batch(const struct sym_core *c, int m, int k);

/* The network delays the core plans with. */
const struct sym_net *sym_core_net(const struct sym_core *c);

#endif
