/* runtime/sched.h - the scheduling core on threads, driven by the monotonic
 * clock: what `symphony schedd` and `symphony bench-sched` run.
 *
 * One driver thread (schedd's network thread, or bench-sched's generator)
 * submits requests and GPU completions and drains the decisions; the core
 * runs on the scheduler's own threads:
 *
 *   - threads == 1: one scheduler thread runs a whole struct sym_core (every
 *     policy, candidate or scheduler);
 *   - threads >= 2 (candidate policies only): the core's split. Model shards
 *     are spread over `threads` worker threads (model m on worker m %
 *     threads); one ranker thread per GPU kind (a sub-cluster) owns that
 *     kind's free GPUs and the candidates ready on it. A model due on
 *     several kinds is ready with each of their rankers and the first GPU
 *     granted takes the batch (the single-threaded core, seeing every free
 *     GPU at once, picks the largest batch, then the earliest finish).
 *     Workers and rankers talk through
 *     lock-free SPSC queues (runtime/spsc.h) of small value messages: a
 *     worker tells the ranker that a candidate is ready (with its latest) or
 *     no longer is; the ranker grants a GPU to a ready model (the lowest free
 *     id; a freed GPU goes to the smallest latest); a worker given a GPU it
 *     cannot use any more gives it back. The matching is the core's
 *     (update1 in core/core.c) with message delays in between.
 *
 *     Messages, all values: worker -> ranker READY(m, latest, seq),
 *     UNREADY(m), TAKEN(g) (a granted GPU got a batch), GIVEBACK(g) (it did
 *     not); ranker -> worker GRANT(m, g, seq, epoch); driver -> ranker
 *     GPU_FREE(g), OFFLINE(g, epoch), ONLINE(g, epoch). Stale messages are
 *     harmless: a worker recomputes its candidate on every GRANT and gives
 *     the GPU back when nothing is due; the READY sequence number tells it
 *     whether the ranker still holds a newer READY of the model, so its
 *     idea of "ready at the ranker" stays exact and no UNREADY is lost.
 *
 * No lock on the per-request path: the driver pushes into one SPSC queue per
 * worker and pops decisions from one SPSC queue per worker (a dispatch of
 * size b takes 1 + ceil(b/SYM_SCHED_IDS) elements). A thread out of work
 * polls its queues for 50 us, then sleeps on eventfd/timerfd, so an idle
 * scheduler uses no CPU; a producer writes the eventfd only while its
 * consumer sleeps. A full queue never blocks a scheduler thread: what does
 * not fit waits in the thread's private backlog (counted in queue_full).
 *
 * Time: every thread reads sym_monotonic_ns(); request arrival and deadline
 * are on that clock.
 *
 * A GPU can be taken offline (its backend failed or left) and put back. A
 * GPU offline while its batch runs never reports completion; the driver
 * answers that batch's requests itself. Online makes the GPU free at once.
 * Each offline and online starts a new epoch of the GPU; a dispatch decided
 * in an earlier epoch than the driver's current one (its grant or decision
 * crossed the driver's offline on the way) is not delivered as a dispatch:
 * sym_sched_poll reports its requests as drops (SYM_DROP_EXPIRED) instead,
 * so the driver never sees a batch for a GPU it took offline.
 *
 * Requests in the scheduler are copies (a per-thread pool); the profiles
 * and model names in cfg->core must outlive the scheduler, as for the core.
 */
/* (This file shares its name with the system's <sched.h>: runtime/meson.build
 * keeps runtime/ off the include path, and it is always included as
 * "runtime/sched.h".) */
#ifndef SYM_SCHED_H
#define SYM_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

struct sym_sched;

/* Request ids per element of a dispatch on the decision queues (elements
 * are 64 bytes: one header, then ceil(size / SYM_SCHED_IDS) of ids). */
#define SYM_SCHED_IDS 8

struct sym_sched_cfg {
	struct sym_core_cfg core; /* models, GPUs, kinds, policy, gather, network delays */
	int threads;              /* scheduler worker threads, >= 1 */
	size_t queue_cap;         /* elements per SPSC queue; 0: 65536 */
	bool gpus_offline;        /* start with every GPU offline (schedd: until its backend registers) */
	/* Polling, to beat timerfd wake-up latency: a thread out of work polls
	 * its queues idle_poll_ns before sleeping, and wakes wake_early_ns before
	 * a timer to poll the rest. 0: the defaults (50 us, 100 us), for the
	 * tightest timing on a dedicated core; < 0: none (sleep at once, wake at
	 * the timer), for a machine shared with many processes. */
	sym_time idle_poll_ns, wake_early_ns;
	/* No threads: the driver runs them itself, in virtual time, with
	 * sym_sched_step (tests: the same event sequence through the split
	 * and through the single-threaded core). */
	bool manual;
};

/* A request as the driver submits it. id is the driver's (returned unchanged
 * in decisions); arrival and deadline are monotonic ns. */
struct sym_sched_req {
	uint64_t id;
	int32_t model;
	sym_time arrival;
	sym_time deadline;
};

/* A dispatch decision. reqs holds size ids, valid during the callback. */
struct sym_sched_dispatch {
	int model;
	int gpu;
	int size;
	sym_time now;    /* the decision */
	sym_time start;  /* planned start: now + ctrl + data*size, after the GPU's earlier batches */
	sym_time finish; /* planned finish */
	sym_time reject_after; /* the backend must not start it later (SYM_TIME_NEVER: no limit) */
	const uint64_t *ids;
};

struct sym_sched_out {
	void *ctx;
	void (*dispatch)(void *ctx, const struct sym_sched_dispatch *d);
	void (*drop)(void *ctx, uint64_t id, int model, enum sym_drop_reason why, sym_time now);
	/* sym_sched_set_kinds_off took effect (rc 0) or was refused (-errno);
	 * every dispatch of the model decided before it was delivered first.
	 * May be NULL. */
	void (*moved)(void *ctx, int model, int rc);
};

struct sym_sched_stats {
	uint64_t submitted, dispatches, dispatched_reqs, drops;
	/* Pushes refused because a queue was full: the driver's -EAGAIN, and
	 * elements a scheduler thread had to keep in its backlog. */
	uint64_t queue_full;
	/* Timer lateness: when a thread runs its due core timers, now minus
	 * the earliest due time (one sample per wake-up that ran timers). */
	sym_time lag_max;
	sym_time lag_p99;        /* its 99th percentile over the run (within 0.4%) */
};

/* Starts the threads. Returns 0, or -EINVAL (bad configuration, as the
 * core says; threads outside 1..256; a scheduler policy, or several GPU
 * kinds, with threads >= 2), -ENOMEM or another -errno, with a message in
 * err. Preempting policies (shepherd) are refused: there is no cancel. */
int sym_sched_create(struct sym_sched **out, const struct sym_sched_cfg *cfg, char *err, size_t errlen);

/* Stops the threads and frees everything (decisions not yet polled are lost). */
void sym_sched_destroy(struct sym_sched *s);

/* ---- driver thread only ---- */

/* Model m runs on the kinds (sub-clusters) not in kinds_off from now on:
 * queued in order with m's requests; the `moved` callback reports it, after
 * every dispatch of m decided before it (so that a GPU of a kind m left gets
 * no plan of m after it). 0; -EINVAL for an unknown model; -EAGAIN (full). */
int sym_sched_set_kinds_off(struct sym_sched *s, int model, uint32_t kinds_off);

/* With sub-clusters (cfg.core.nparts >= 2, core/parts.h): model m serves from
 * part `part` from now on (sym_sched_set_kinds_off with that part's kinds;
 * -1: none, held). -EINVAL for a bad part or a scheduler without parts. */
int sym_sched_set_part(struct sym_sched *s, int model, int part);

/* Model m's arrival statistics start afresh (core/core.h,
 * sym_core_restart_arrivals), queued in order with its requests: it was out
 * of service (the repository API) and is back. 0; -EINVAL; -EAGAIN (full). */
int sym_sched_restart_arrivals(struct sym_sched *s, int model);

/* Model `model` (a spare slot, holding no request) becomes the model of
 * cfg (sym_core_set_model), which must stay valid while the scheduler runs.
 * 0, -EINVAL, or -EAGAIN (queue full: try again). */
int sym_sched_set_model(struct sym_sched *s, int model, const struct sym_model_cfg *cfg);

/* Model's SLO becomes slo (> 0; a reload), on the thread that holds it:
 * sym_core_set_slo. -EINVAL for a bad model or SLO, -EAGAIN when its queue is full. */
int sym_sched_set_slo(struct sym_sched *s, int model, sym_time slo);

/* Queues a request. 0; -EINVAL for an unknown model; -EAGAIN when its
 * worker's queue is full (poll, then retry). */
int sym_sched_submit(struct sym_sched *s, const struct sym_sched_req *r);

/* GPU g's oldest outstanding batch ran from start to end (monotonic ns),
 * or was rejected by its backend. 0, -EINVAL (no such GPU) or -EAGAIN. An
 * end for an offline GPU is ignored (returns 0). */
int sym_sched_gpu_done(struct sym_sched *s, int g, sym_time start, sym_time end, bool rejected);

/* sym_sched_gpu_done with a batch that ended now. */
int sym_sched_gpu_free(struct sym_sched *s, int g);

/* GPU g goes offline (no new batch; a running batch never completes) or
 * comes back online (free). 0, -EINVAL (no such GPU) or -EAGAIN. Taking an
 * offline GPU offline (or an online one online) does nothing. */
int sym_sched_gpu_offline(struct sym_sched *s, int g);
int sym_sched_gpu_online(struct sym_sched *s, int g);

/* Offline GPU g comes back online as one of kind `kind`'s (its ranker's): a
 * GPU moved to another sub-cluster. 0, -EINVAL (no such GPU or kind),
 * -EBUSY (g is online) or -EAGAIN. */
int sym_sched_gpu_online_kind(struct sym_sched *s, int g, int kind);

/* The same into part `part` (its own GPU kind kept): a GPU moved to another
 * sub-cluster. -EINVAL also for a scheduler without parts. */
int sym_sched_gpu_online_part(struct sym_sched *s, int g, int part);

/* Runs out's callbacks for up to max pending decisions (dispatch counts as
 * one). Returns how many ran. */
size_t sym_sched_poll(struct sym_sched *s, const struct sym_sched_out *out, size_t max);

/* An eventfd readable while decisions are pending (for the driver's epoll
 * set; sym_sched_poll clears it). */
int sym_sched_fd(const struct sym_sched *s);

/* Requests submitted and not yet decided by the scheduler threads (a
 * snapshot; decided = dispatched or dropped, polled or not). */
uint64_t sym_sched_pending(const struct sym_sched *s);

/* Manual mode only: runs every thread's work at virtual time now until
 * none has anything left to do (their messages delivered with no delay). */
void sym_sched_step(struct sym_sched *s, sym_time now);

/* Manual mode: the earliest timer of any thread, or SYM_TIME_NEVER. */
sym_time sym_sched_next_wakeup(const struct sym_sched *s);

/* Counters so far (a snapshot; exact once the threads are idle). */
void sym_sched_stats(const struct sym_sched *s, struct sym_sched_stats *out);

#endif
