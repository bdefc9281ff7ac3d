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
 *     threads); one ranker thread per GPU kind (sub-cluster) owns the free
 *     GPUs and the ready candidates. Workers and rankers talk through
 *     lock-free SPSC queues (runtime/spsc.h) of small value messages: a
 *     worker tells the ranker that a candidate is ready (with its latest) or
 *     no longer is; the ranker grants a GPU to a ready model (the lowest free
 *     id; a freed GPU goes to the smallest latest); a worker given a GPU it
 *     cannot use any more gives it back.
 *
 * No lock on the per-request path: the driver pushes into one SPSC queue per
 * worker and pops decisions from one SPSC queue per worker (a dispatch of
 * size b takes 1 + ceil(b/SYM_SCHED_IDS) elements). Threads sleep on
 * eventfd/timerfd when idle, so an idle scheduler uses no CPU.
 *
 * Time: every thread reads sym_monotonic_ns(); request arrival and deadline
 * are on that clock.
 *
 * A GPU can be taken offline (its backend failed or left) and put back. A
 * GPU offline while its batch runs never reports completion; the driver
 * answers that batch's requests itself.
 */
#ifndef SYM_SCHED_H
#define SYM_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

struct sym_sched;

struct sym_sched_cfg {
	struct sym_core_cfg core; /* models, GPUs, kinds, policy, gather, network delays */
	int threads;              /* scheduler worker threads, >= 1 */
	size_t queue_cap;         /* elements per SPSC queue; 0: 65536 */
	bool gpus_offline;        /* start with every GPU offline (schedd: until its backend registers) */
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
	sym_time start;  /* planned start: now + ctrl + data*size */
	sym_time finish; /* planned finish */
	const uint64_t *ids;
};

struct sym_sched_out {
	void *ctx;
	void (*dispatch)(void *ctx, const struct sym_sched_dispatch *d);
	void (*drop)(void *ctx, uint64_t id, int model, enum sym_drop_reason why, sym_time now);
};

struct sym_sched_stats {
	uint64_t submitted, dispatches, dispatched_reqs, drops;
	uint64_t queue_full;     /* pushes refused because a queue was full */
	sym_time lag_max;        /* the largest delay of a core timer past its due time */
	sym_time lag_p99;        /* its 99th percentile over the run */
};

/* Starts the threads. Returns 0, or -EINVAL (bad configuration; a
 * scheduler policy with threads >= 2), -ENOMEM or another -errno, with a
 * message in err. */
int sym_sched_create(struct sym_sched **out, const struct sym_sched_cfg *cfg, char *err, size_t errlen);

/* Stops the threads and frees everything (decisions not yet polled are lost). */
void sym_sched_destroy(struct sym_sched *s);

/* ---- driver thread only ---- */

/* Queues a request. 0; -EINVAL for an unknown model; -EAGAIN when its
 * worker's queue is full (poll, then retry). */
int sym_sched_submit(struct sym_sched *s, const struct sym_sched_req *r);

/* GPU g finished its batch and is free. 0 or -EAGAIN. */
int sym_sched_gpu_free(struct sym_sched *s, int g);

/* GPU g goes offline (no new batch; a running batch never completes) or
 * comes back online (free). 0 or -EAGAIN. */
int sym_sched_gpu_offline(struct sym_sched *s, int g);
int sym_sched_gpu_online(struct sym_sched *s, int g);

/* Runs out's callbacks for up to max pending decisions (dispatch counts as
 * one). Returns how many ran. */
size_t sym_sched_poll(struct sym_sched *s, const struct sym_sched_out *out, size_t max);

/* An eventfd readable while decisions are pending (for the driver's epoll
 * set; sym_sched_poll clears it). */
int sym_sched_fd(const struct sym_sched *s);

/* Requests submitted and not yet decided (a snapshot). */
uint64_t sym_sched_pending(const struct sym_sched *s);

/* Counters so far (a snapshot; exact once the threads are idle). */
void sym_sched_stats(const struct sym_sched *s, struct sym_sched_stats *out);

#endif
