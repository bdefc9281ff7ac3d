/* core/ranker.h - the ranker side of the core's exchange: matches the
 * candidates of models with the GPUs of one sub-cluster (a GPU kind).
 *
 * The exchange. The candidate policies' scheduler is two kinds of parts that
 * talk only through small value messages (struct sym_xmsg):
 *   - the model side (core/models.h): per model, its queue and candidate;
 *     it tells each kind's ranker when its candidate is due there (READY,
 *     with the candidate's latest dispatch moment and its network delay) and
 *     when it no longer is (UNREADY); given a GPU (GRANT) it recomputes its
 *     candidate and either dispatches it (TAKEN, with the batch's planned
 *     start and finish) or hands the GPU back (GIVEBACK);
 *   - the ranker side (this file), one per kind: it owns that kind's GPUs
 *     and the ready candidates, and grants GPUs.
 * The single-threaded core (core/core.c) delivers the messages itself; the
 * runtime's threaded scheduler (runtime/sched.c) carries them over queues
 * between threads. Both run exactly this code, so every rule of matching
 * lives here once.
 *
 * Matching (Algorithm 1 of symphony-deferred-batch-scheduling.md, Section
 * 3.2, with its send-ahead of Appendix D). Each GPU has a predicted free time
 * `free_at`: the planned finish of the last batch sent to it (line 12:
 * exec + l(b)), reconciled when the driver reports a batch's real end.
 *   - An *idle* GPU (nothing outstanding) can take a candidate at once.
 *   - With send-ahead, a GPU running one batch with none planned after it
 *     (*pending*) can take a candidate whose plan and inputs, sent now, would
 *     arrive after it frees: free_at < now + delay, delay = ctrl + data*b.
 *     The batch then starts at now + delay, right as the GPU frees, and the
 *     GPU holds at most that one plan ahead.
 * A ready candidate takes the lowest-numbered eligible GPU (low ids carry
 * the load, high ids stay idle to be released); GPUs go to the ready
 * candidate with the smallest latest (ties: lower model id). While
 * candidates wait, the ranker's timer is set at the moment the earliest
 * pending GPU becomes eligible for the most urgent of them:
 * free_at - delay + 1 (the authors' GPU timer at free_at minus the network
 * delay). Without send-ahead a GPU is eligible only once idle, i.e. after the
 * driver reports its batch's end.
 *
 * Look-ahead (sym_ranker_set_lookahead; the design of
 * shared/research/lookahead-deferral/report.md, Section 8, made
 * incremental). A candidate held back to its frontrun moment has a window of
 * only B x alpha in which it can still take a GPU; when other batches hold
 * every GPU through it, its oldest requests expire. So the model side tells
 * the ranker about each candidate it holds back (DEFER: its deadline d, the
 * moment f it expects to be due, the le p of the batch it expects then), and
 * the ranker keeps a plan: every candidate, ready or deferred, latest
 * deadline first, placed as late as it can start on the GPUs' predicted free
 * times: on the GPU where it can start latest, finishing by its deadline and
 * `margin` batch lengths (its own) before the next batch planned there, not
 * before the GPU frees; ties go to the GPU that is free by then (on time),
 * then to the one freeing latest (best fit). A deferred candidate planned to
 * start before f gets a cap (PULL): it becomes due at its planned start
 * instead. One that fits nowhere is pulled to now.
 *
 * What it costs. The plan is made again only when a cap may have to come
 * earlier: a new candidate or a new head (DEFER or READY with another
 * deadline), a batch taken, a GPU freeing later than predicted or leaving;
 * not for what can only relax a cap (a GPU back, a candidate gone, an arrival
 * that moves a deferred candidate's expected f and p: the plan uses the new
 * values next time, and the margin covers the growth meanwhile). It waits
 * while a grant is outstanding (its TAKEN or GIVEBACK follows at once, and
 * changes the picture). A plan stops after the last deferred candidate in
 * its order (the ready ones after it can cap nothing), and is skipped while
 * there are at least as many idle GPUs as candidates (each then has one to
 * itself). Each candidate first tries the GPU that is free latest by its
 * start among those the plan has not used yet (a binary search over the
 * GPUs kept ordered by free time, O(log G)), and only when there is none,
 * the GPUs the plan has used (at most one per candidate before it): O(C log
 * G) per plan in the common case, O(C^2) at worst.
 *
 * The measured wait (look-ahead with a measured guard). A ranker keeps two
 * running estimates of a high quantile (struct sym_lookahead.wait_quantile)
 * of how long its kind's candidates wait from due to a grant, from what the
 * models report (core/models.h): `wait`, in which a head lost while due
 * counts the time it waited, and
 * `wait_safe`, in which a lost head counts as longer than any. Each sample is
 * a Robbins-Monro quantile step, the step a twentieth of the estimate (at
 * least SYM_WAIT_MIN_STEP), from SYM_WAIT_START; a lost head moves wait_safe
 * four times as far (a fifth of it: a few losses make a model careful
 * within a short run, while the ordinary waits keep their fine steps). For
 * wait_safe a candidate that becomes due (a READY that starts a due episode:
 * its `gpu` field 1) when no GPU of the kind is idle counts as a long wait,
 * and one that finds a GPU idle as a short one: a small cluster whose GPUs
 * are all busy at the moments candidates come due makes its models careful
 * before any request is lost. The waits are a property of
 * the kind's contention, so they are pooled over its models (one model's
 * losses make them all more careful); every GRANT and PULL carries them back.
 * The samples heard between two settles are counted against the estimates as
 * they stand and applied together at the second (each sample one step), so
 * that the estimates do not depend on how the messages of several models
 * interleaved on their way.
 *
 * Stale messages are harmless: a GRANT names the READY it answers (seq), a
 * model recomputes its candidate on every GRANT, and a GPU whose grant
 * crossed an offline comes back "lost" (its batch, if any, is the driver's
 * to drop: the GRANT carried the GPU's epoch).
 *
 * All operations are O(log G + log M), but finding the lowest idle GPU,
 * a scan of a bitmap (G/64 words at most, in practice the first few). Not thread-safe: one thread runs a
 * ranker.
 */
#ifndef SYM_RANKER_H
#define SYM_RANKER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/iheap.h"
#include "core/time.h"

enum sym_xmsg_type {
	SYM_X_READY,    /* model -> ranker: due; t1 = latest, t2 = delay, t3 = its batch's le(B), seq */
	SYM_X_UNREADY,  /* model -> ranker: no candidate here (nothing queued that fits) */
	SYM_X_TAKEN,    /* model -> ranker: the granted GPU got a batch; t1 = start, t2 = finish,
			 * t3 = its wait from due to the grant (measured wait; -1: none) */
	SYM_X_GIVEBACK, /* model -> ranker: the granted GPU was not used */
	SYM_X_GRANT,    /* ranker -> model: GPU gpu; seq of the READY it answers, the GPU's epoch;
			 * t1 = its predicted free time (<= now when idle); t2, t3 = the kind's
			 * measured waits (wait, wait_safe; -1 when not measured) */
	SYM_X_DEFER,    /* model -> ranker (look-ahead): a candidate not due yet; t1 = its deadline d,
			 * t2 = when it expects to be due (f), t3 = the le of the batch it expects then, seq */
	SYM_X_PULL,     /* ranker -> model (look-ahead): be due by t1 (SYM_TIME_NEVER: no cap);
			 * seq of the DEFER it answers; t2, t3 as GRANT's */
};
/* READY, DEFER and UNREADY carry in `epoch` (unused from models) how many of
 * the model's heads were lost while due since its last message, and in t4
 * how long the last of them had waited; a READY that starts a due episode
 * has `gpu` 1 (measured wait). */

/* The measured waits' start (ns) and their estimator's smallest step. */
#define SYM_WAIT_START (1 * SYM_MS)
#define SYM_WAIT_MIN_STEP (5 * SYM_US)
/* The most wait_safe counts (lost heads count as longer than any wait). */
#define SYM_WAIT_MAX (3600 * SYM_S)

/* One message of the exchange (a value: copy it freely). */
struct sym_xmsg {
	int32_t type;
	int32_t model;
	int32_t gpu;
	int32_t kind;
	uint32_t seq;
	uint32_t epoch;
	sym_time t1, t2, t3, t4;
};

/* A ranker's view of one of its GPUs. */
struct sym_ranker_gpu {
	int8_t nout;       /* batches outstanding (running or planned); < 0 briefly when an end
			    * overtakes the TAKEN of its batch */
	bool granted;      /* a GRANT is out, its TAKEN or GIVEBACK not back yet */
	bool off;          /* out of service */
	bool lost;         /* the outstanding grant crossed an offline or online */
	uint32_t epoch;
	sym_time free_at;  /* predicted: when its last outstanding batch ends */
	sym_time plan_start, plan_len; /* the last batch taken: its planned start and length */
};

/* A ranker's view of one model's candidate (look-ahead). */
struct sym_ranker_cand {
	int8_t state;      /* 0: none, 1: deferred, 2: ready */
	bool moved;        /* its deadline changed since the last plan (its place in the order) */
	uint32_t seq;      /* of the DEFER (deferred) */
	sym_time d;        /* the head's deadline */
	sym_time f;        /* deferred: when it expects to be due */
	sym_time p;        /* the le of its batch */
	sym_time cap;      /* deferred: the last cap sent for this DEFER (SYM_TIME_NEVER: none) */
};

/* Look-ahead counters (since init). */
struct sym_ranker_plan_stats {
	uint64_t plans;      /* plans made (full ones) */
	uint64_t fast;       /* plans skipped: at least as many idle GPUs as candidates */
	uint64_t pulls;      /* PULLs sent with a cap */
	uint64_t moved;      /* PULLs sent (caps set, changed or cleared) */
	uint64_t asap;       /* candidates that fit nowhere, pulled to now */
};

/* Where grants go (called from inside the ranker's operations). */
typedef void (*sym_xsend_fn)(void *ctx, const struct sym_xmsg *m);

struct sym_ranker {
	int kind;
	int ngpus, nmodels;
	bool send_ahead;
	uint64_t *idle;         /* bit g: GPU g is idle (the lowest set bit is the lowest idle id) */
	int idle_words, nidle;
	struct sym_iheap pend;  /* send-ahead: running one batch, none planned; key: free_at */
	struct sym_iheap ready; /* id: model, key: latest */
	sym_time *delay;        /* per model: ctrl + data*size of its ready candidate */
	uint32_t *seq;          /* per model: the seq of its READY in the ready set */
	struct sym_ranker_gpu *g; /* per GPU id (only this kind's are used) */
	sym_xsend_fn send;
	void *ctx;
	/* look-ahead (off unless sym_ranker_set_lookahead) */
	bool measure;             /* the measured wait */
	double quantile;
	double wait, wait_safe;   /* its estimates (ns) */
	uint32_t fresh, s_full, s_free; /* due episodes heard since the last match; at the match: with
					 * no GPU idle, with one (wait_safe) */
	uint32_t w_above, w_below, s_above, s_below, s_lost; /* samples since the last settle, against
							      * the estimates as they stood (wait,
							      * wait_safe; its lost heads apart) */
	bool lookahead;           /* the plan */
	bool idle_go;             /* the plan sends a deferred candidate at once while every candidate has
				   * an idle GPU of its own (struct sym_lookahead.idle) */
	bool replan;              /* the plan may have to pull a candidate earlier: made again at the next
				   * match with no grant outstanding */
	double margin;            /* in batch lengths of the earlier batch */
	int ngranted;             /* GPUs granted, their TAKEN or GIVEBACK not back yet */
	double qfrac;             /* plans at most once per this fraction of the shortest batch planned */
	sym_time min_p;           /* the shortest batch (le) in the last plan */
	sym_time next_plan;       /* no plan before it */
	bool plan_waits;          /* a plan is due at next_plan (the ranker's wakeup) */
	struct sym_ranker_cand *cand; /* per model */
	int *ord, *opos;          /* the models with a candidate here, kept in plan order (sorted when
				   * planning), and where each sits (-1: none) */
	int nactive, ncapped;
	/* the GPUs in service and not granted, by predicted free time, as of the
	 * last plan (the plan's best-fit and earliest queries: binary search) */
	sym_time *gkey;
	int *ggpu, *gpos;         /* gpos[g]: g's place in gkey/ggpu, -1 when out */
	int nset;
	/* one plan's scratch, per GPU id: the plan that touched it and its earliest planned start */
	uint32_t plan_id;
	uint32_t *stamp;
	sym_time *mplan;
	int *touched, ntouched;
	sym_time *skey;           /* scratch: GPUs and candidates whose place changed */
	int *sgpu, *sord;
	int *left;                /* per place in the set, once used by the plan: a place at or before
				   * the next one to its left that is not (a union-find, path-compressed) */
	struct sym_ranker_plan_stats pstats;
};

/* The ranker of kind `kind` over GPUs 0..ngpus-1, of which it owns those with
 * gpu_kind[g] == kind (gpu_kind NULL: all); they start idle and online.
 * Returns 0, -EINVAL or -ENOMEM. */
int sym_ranker_init(struct sym_ranker *r, int kind, int ngpus, const int *gpu_kind, int nmodels, bool send_ahead,
		    sym_xsend_fn send, void *ctx);
void sym_ranker_finish(struct sym_ranker *r);

struct sym_lookahead;

/* Turns look-ahead on as la asks (its plan with its margin, >= 0 batch
 * lengths, and the measured wait). Returns 0, -EINVAL or -ENOMEM. */
int sym_ranker_set_lookahead(struct sym_ranker *r, const struct sym_lookahead *la);

/* A message from a model (READY, UNREADY, TAKEN, GIVEBACK, DEFER). Does not
 * match: call sym_ranker_match when the messages at hand are in. */
void sym_ranker_recv(struct sym_ranker *r, const struct sym_xmsg *m);

/* The oldest outstanding batch of GPU g ended at `end` (<= now). */
void sym_ranker_gpu_done(struct sym_ranker *r, int g, sym_time end);

/* GPU g leaves service (its outstanding batches are forgotten: the driver
 * answers their requests) or comes back idle at now; epoch is the driver's
 * new epoch of g, carried by later grants. */
void sym_ranker_gpu_offline(struct sym_ranker *r, int g, uint32_t epoch);
void sym_ranker_gpu_online(struct sym_ranker *r, int g, uint32_t epoch, sym_time now);

/* Grants what can be granted at now (through send). */
void sym_ranker_match(struct sym_ranker *r, sym_time now);

/* Look-ahead: call when the exchange has settled at now (every message sent
 * so far delivered, every ranker matched): applies the waits heard since
 * and, when the plan needs making again (and no grant is outstanding), makes
 * it and sends the caps that changed (PULL). Returns whether it sent any
 * (deliver them, match, and settle again). Settling at the same points in
 * both the single-threaded core and the threaded scheduler makes them decide
 * alike. */
bool sym_ranker_settle(struct sym_ranker *r, sym_time now);

/* Whether sym_ranker_settle has anything to do (a cheap test before the
 * call). */
static inline bool sym_ranker_unsettled(const struct sym_ranker *r)
{
	return r->replan || r->plan_waits || r->w_above || r->w_below || r->s_above || r->s_below || r->s_lost ||
	       r->s_full || r->s_free;
}

/* When the ranker next wants sym_ranker_match and sym_ranker_settle, or
 * SYM_TIME_NEVER. */
sym_time sym_ranker_next_wakeup(const struct sym_ranker *r);

/* The same for sym_ranker_match alone (send-ahead: the moment a running GPU
 * becomes eligible for the most urgent ready candidate). */
sym_time sym_ranker_match_due(const struct sym_ranker *r);

/* GPUs of the kind that are idle and online. */
static inline int sym_ranker_idle_count(const struct sym_ranker *r) { return r->nidle; }

#endif
