/* core/models.h - the model side of the core's exchange (see core/ranker.h):
 * the shards of a set of models, their timers and their standing with each
 * kind's ranker.
 *
 * For each model and kind it computes the candidate (core/shard.h) whenever
 * the model's queue changes, its timer fires or a GPU is granted, and tells
 * that kind's ranker what changed:
 *   - not due there (no batch fits, or exec is later): UNREADY if it was
 *     ready, and a timer at exec;
 *   - due: READY with its latest and its delay ctrl + data*size, sent again
 *     only when either changed, and a timer at latest + 1 (a candidate still
 *     waiting then shrinks to what can make its deadline, or its head is
 *     dropped).
 * Several kinds: the READYs go out in the order of preference (the largest
 * batch, then the earliest finish, then the lower kind), and a model due on
 * several kinds is ready with each.
 *
 * A GRANT of GPU g (kind k) recomputes the candidate on k at now. If it is
 * due and g is free for it (idle, or predicted free before the plan and
 * inputs sent now would arrive: free_at < now + delay), the batch is taken
 * and dispatched with start now + ctrl + data*size, and TAKEN (with that
 * start and the planned finish) goes back; otherwise GIVEBACK. A grant that
 * answers an older READY is handled the same way: recomputing makes it
 * harmless.
 *
 * Look-ahead (sym_models_set_lookahead, when the policy asks for it: struct
 * sym_lookahead). A candidate that is not due yet is announced to its kind's
 * ranker (DEFER: its deadline, and where sym_shard_project says it is
 * heading, once per head) instead of being merely not READY, and the ranker
 * may answer with
 * a cap (PULL): the candidate is then due at min(exec, cap). The cap belongs
 * to the DEFER it answers (seq): a new DEFER drops it, a PULL for an older
 * one is ignored. With the measured wait (struct sym_lookahead.wait), the
 * model side reports what its candidates waited, and the ranker of their
 * kind keeps the estimates (core/ranker.h): a TAKEN carries how long its
 * batch's candidate waited from due (the later of becoming READY and its
 * frontrun moment) to the grant, and a READY, DEFER or UNREADY how many heads
 * were lost while due since the last message (dropped before a grant), and
 * how long the last of them had waited. Every
 * GRANT and PULL brings the kind's current estimates back; the policy reads
 * the last ones its model heard in its view.
 *
 * Models are a stride of the global ids: local li is model li*stride +
 * offset (the single-threaded core: stride 1, offset 0; a worker thread w of
 * T: stride T, offset w). Not thread-safe: one thread runs a model side.
 */
#ifndef SYM_MODELS_H
#define SYM_MODELS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/iheap.h"
#include "core/policy.h"
#include "core/ranker.h"
#include "core/request.h"
#include "core/shard.h"

struct sym_models_out {
	void *ctx;
	/* to the ranker of kind k */
	void (*send)(void *ctx, int k, const struct sym_xmsg *m);
	void (*dispatch)(void *ctx, const struct sym_dispatch *d);
	void (*drop)(void *ctx, struct sym_request *r, enum sym_drop_reason why, sym_time now);
};

/* Per local model and kind: what the ranker of that kind holds of it. */
struct sym_mstand {
	uint32_t seq;      /* READYs and DEFERs sent */
	bool ready;        /* the ranker holds (or will hold) a READY of ours */
	sym_time latest;   /* of that READY */
	sym_time delay;    /* of that READY */
	sym_time rd;       /* of that READY: its head's deadline */
	/* look-ahead */
	bool deferred;     /* the ranker holds a DEFER of ours */
	sym_time dd, df, dp; /* of that DEFER: deadline, expected due, expected le */
	sym_time cap;      /* the ranker's cap for it (SYM_TIME_NEVER: none) */
	sym_time due_since; /* measured wait: when the READY candidate became due */
	sym_time due_plan, due_plan_d; /* measured wait: the moment the timer was set for, to make the
					  candidate with that head deadline due (a timer that fires late:
					  its lateness is part of the wait) */
	uint32_t lost;      /* measured wait: heads lost while due, not reported yet */
	sym_time lost_wait; /* measured wait: how long the last of them had waited */
	sym_time wait, wait_safe; /* measured wait: the kind's estimates, as last heard (ns) */
	/* the candidate last computed (a grant at the same moment, with the
	 * shard unchanged, reuses it) */
	struct sym_cand cand;
	sym_time cand_now;
	uint32_t cand_version;
};

struct sym_models {
	int n;                      /* local models */
	int stride, offset;
	int nkinds;
	struct sym_shard *shards;   /* n, not owned */
	struct sym_mstand *stand;   /* n * nkinds */
	struct sym_iheap *timers;   /* by local index, not owned */
	struct sym_policy policy;
	struct sym_request **scratch; /* the largest batch (maxb) */
	struct sym_models_out out;
	/* look-ahead */
	bool plan;                  /* DEFER / PULL with the rankers */
	bool measure;               /* the measured wait */
	int maxb;                   /* scratch's size (last: the fields above are the hot ones) */
};

/* shards: n initialised shards (local li = model li*stride + offset);
 * timers: a heap of capacity >= n that the model side uses with ids 0..n-1.
 * Returns 0, -EINVAL or -ENOMEM. */
int sym_models_init(struct sym_models *ms, struct sym_shard *shards, int n, int stride, int offset, int nkinds,
		    const struct sym_policy *policy, struct sym_iheap *timers, const struct sym_models_out *out);
void sym_models_finish(struct sym_models *ms);

/* Queues r (its model must be one of ours) and updates its candidate.
 * Returns 0 or -ENOMEM (r is then not queued). */
int sym_models_arrive(struct sym_models *ms, struct sym_request *r, sym_time now);

/* Local model li's timer fired (the caller popped it from the heap). */
void sym_models_timer(struct sym_models *ms, int li, sym_time now);

/* Look-ahead as the policy asks it (see above). 0 or -EINVAL. */
int sym_models_set_lookahead(struct sym_models *ms, const struct sym_lookahead *la);

/* A message from a ranker: GRANT, or PULL (look-ahead). */
void sym_models_recv(struct sym_models *ms, const struct sym_xmsg *m, sym_time now);

/* Model m's (one of ours) measured waits on kind k (ns; 0 when not measured). */
struct sym_waits sym_models_waits(const struct sym_models *ms, int m, int k);

/* Model m (one of ours) runs on the kinds not in kinds_off from now: its
 * standing is recomputed (UNREADY where it no longer runs; a stale GRANT
 * from there is given back). 0 or -EINVAL (see sym_shard_set_kinds_off). */
int sym_models_set_kinds_off(struct sym_models *ms, int m, uint32_t kinds_off, sym_time now);

/* Model m's (one of ours) SLO becomes slo (> 0; a reload): what its gathering
 * and spread are judged against from now on (sym_core_set_slo). */
int sym_models_set_slo(struct sym_models *ms, int m, sym_time slo);

/* Model m (one of ours) becomes the model of cfg (a spare slot filled: the
 * runtime's model repository): its shard is made again from cfg, keeping
 * its network delays and gathering rule, and what the rankers hold of it is
 * forgotten. Only while it holds no request and no ranker holds it ready;
 * its batches must fit the scratch (max_batch at most the largest at init:
 * -EINVAL).
 * 0, -EBUSY, -EINVAL (see sym_shard_init_kinds) or -ENOMEM; on error the
 * shard keeps its old model where it can (else it is left empty: init's). */
int sym_models_set_model(struct sym_models *ms, int m, const struct sym_model_cfg *cfg);

/* Model m's (one of ours) arrival statistics start afresh (sym_shard_restart_arrivals). */
void sym_models_restart_arrivals(struct sym_models *ms, int m);

/* Requests queued over the local models. */
uint64_t sym_models_queued(const struct sym_models *ms);

#endif
