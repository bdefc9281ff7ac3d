/* core/ranker.h - matches candidates and GPUs (one per sub-cluster).
 *
 * It keeps two sets and never looks inside a model:
 *   - the free GPUs, ordered by id: a candidate that reaches its exec moment
 *     takes the free GPU with the lowest id, so load packs onto low ids and
 *     high ids stay idle (and can be released by an autoscaler);
 *   - the *ready* candidates (exec <= now <= latest, no GPU yet), ordered by
 *     latest start: a GPU that becomes free takes the one with the smallest
 *     latest (ties: the lower model id).
 * Both are indexed heaps: O(log G) and O(log M) per operation.
 * Invariant kept by the core: while a candidate is ready, no GPU is free.
 */
#ifndef SYM_RANKER_H
#define SYM_RANKER_H

#include "core/iheap.h"
#include "core/time.h"

struct sym_ranker {
	int ngpus;
	int nmodels;
	struct sym_iheap free_gpus; /* key: GPU id */
	struct sym_iheap ready;     /* id: model, key: latest */
};

/* All GPUs start free. Returns 0, -EINVAL or -ENOMEM. */
int sym_ranker_init(struct sym_ranker *r, int ngpus, int nmodels);
void sym_ranker_finish(struct sym_ranker *r);

/* A candidate reached exec: the lowest free GPU id (now taken), or -1. */
int sym_ranker_take_gpu(struct sym_ranker *r);

/* GPU g is free again (it must be busy). */
void sym_ranker_put_gpu(struct sym_ranker *r, int g);

static inline int sym_ranker_free_count(const struct sym_ranker *r) { return r->free_gpus.size; }

/* Model m's candidate waits for a GPU, feasible until latest (insert or update). */
void sym_ranker_ready(struct sym_ranker *r, int m, sym_time latest);

/* Model m has no ready candidate any more. */
void sym_ranker_unready(struct sym_ranker *r, int m);

/* A GPU became free: the ready model with the smallest latest, removed from
 * the ready set, or -1 when none waits. */
int sym_ranker_grant(struct sym_ranker *r);

#endif
