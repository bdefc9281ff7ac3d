/* core/shard.h - one model's state: its queue, its batch gathering and its
 * current candidate batch.
 *
 * A shard touches only its own model. It learns of arrivals and of the passing
 * of time, and answers with its candidate; it never sees GPUs. (In the runtime
 * shards live on worker threads and talk to the ranker through messages.)
 *
 * Network terms. A batch of b dispatched at time t starts executing at
 * t + ctrl + data*b, finishes l(b) later and its response reaches the client
 * resp after that. The shard folds all of this into the *effective latency*
 *
 *     le(b) = l(b) + ctrl + data*b + resp,
 *
 * so that a batch of b meets deadline d iff it is dispatched by d - le(b).
 * All candidate times (exec, latest) are dispatch times.
 *
 * Gathering. The queue is in deadline order and a batch is always a prefix of
 * it, so the earliest deadline d of a batch is the head's. Before computing
 * the candidate the shard applies its drop rule to the head:
 *   - lazy: drop the head only if it cannot finish even alone
 *     (now + le(1) > d);
 *   - early: a sliding window of the target size k = min(target, queued,
 *     max_batch): drop the head while a batch of k started now would miss its
 *     deadline (now + le(k) > d). This skips requests that would force the
 *     batch below the target, so that the requests behind them are served in
 *     full batches instead of everything being served late in small ones.
 * The target is fixed, or estimated from the arrival rate lambda: the largest
 * b with (1 + 1/n) * l(b) <= SLO - delays(b), n = max(1, lambda*l(b)/b), the
 * batch that n GPUs' worth of load running staggered can sustain. Arrivals
 * are not clockwork, though: gathering b requests takes b/lambda on average
 * with a standard deviation of cv*sqrt(b)/lambda (a sum of b gaps whose
 * coefficient of variation is cv, measured online). The estimate keeps
 * K of those as a margin ("early:auto:K", K = SYM_TARGET_SIGMAS by default):
 *
 *     (1 + 1/n) * l(b) + K * cv * sqrt(b) / lambda <= SLO - delays(b)
 *
 * so that bursty workloads aim at slightly smaller, safer batches.
 */
#ifndef SYM_SHARD_H
#define SYM_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "core/profile.h"
#include "core/queue.h"
#include "core/vocab.h"

struct sym_policy;

/* The candidate: `size` requests from the queue head, dispatchable from exec,
 * feasible until latest. size 0 means the queue is empty. */
struct sym_cand {
	int size;
	sym_time exec;
	sym_time latest;
	sym_time deadline;
};

typedef void (*sym_drop_fn)(void *ctx, struct sym_request *r, enum sym_drop_reason why, sym_time now);

struct sym_shard {
	int id;
	const char *name;      /* the model's name (from sym_model_cfg), or NULL */
	const struct sym_profile *profile; /* kind 0 */
	sym_time slo;
	int nkinds;
	uint32_t kinds_off;    /* kinds the model does not run on (sym_model_cfg) */
	/* The fastest kind for each size: le[b] = min over kinds of lek[k][b],
	 * b = 0..max_batch+1, max_batch = the largest maxb_k. The drop rule and
	 * the early-drop target use it (with one kind, le == lek[0]). */
	int max_batch;
	sym_time *le;
	struct sym_net net;
	struct sym_gather gather;
	int target;            /* current early-drop target */
	struct sym_queue queue;
	/* arrival-rate estimate (auto target) */
	double lambda;
	double cv;               /* the gap variability, as of the last rate window (1 until then) */
	double spread;           /* GPUs the measured load keeps busy at its largest batch that meets the
				  * SLO when it fills at that rate (sym_shard_spread), as of the last
				  * rate window */
	double gap_m1, gap_m2;   /* EWMA of inter-arrival gaps (ns) and of their squares */
	sym_time last_arrival;   /* -1 before the first */
	sym_time win_start;
	uint32_t win_count;
	uint32_t dropped_since_batch;
	uint32_t version;        /* changes whenever the queue or the rate estimate does */
	/* Per kind: the profile, its largest batch and its effective latency
	 * table lek[k][0..maxb_k[k]+1] (lek[k][maxb_k[k]+1] = SYM_TIME_NEVER).
	 * (Last: SYM_MAX_KINDS entries each, kept off the cache lines of the
	 * fields above.) */
	const struct sym_profile *prof_k[SYM_MAX_KINDS];
	int maxb_k[SYM_MAX_KINDS];
	sym_time *lek[SYM_MAX_KINDS];
};

/* Rate-estimate window and smoothing (auto early-drop target). */
#define SYM_RATE_WINDOW (200 * SYM_MS)
#define SYM_RATE_SMOOTH 0.3
/* Weight of one gap in the gap-variability estimate. */
#define SYM_GAP_SMOOTH (1.0 / 512)

/* Returns 0, -EINVAL (bad slo, profile or gather) or -ENOMEM. One kind. */
int sym_shard_init(struct sym_shard *s, int id, const struct sym_model_cfg *cfg,
		   const struct sym_gather *gather, const struct sym_net *net);

/* The same for nkinds (1..SYM_MAX_KINDS) kinds. */
int sym_shard_init_kinds(struct sym_shard *s, int id, const struct sym_model_cfg *cfg, int nkinds,
			 const struct sym_gather *gather, const struct sym_net *net);
void sym_shard_finish(struct sym_shard *s);

/* Changes the kinds the model does not run on (a model moving to another
 * sub-cluster). Every kind off holds the model: its requests queue (and are
 * dropped as they expire, when it next gathers) but it is ready nowhere
 * until a kind is back (a stalled move, control/moves.h). 0, or -EINVAL
 * (one kind only). */
int sym_shard_set_kinds_off(struct sym_shard *s, uint32_t kinds_off);

/* Starts the model's arrival statistics afresh (the gaps' variability and
 * the rate window; the rate estimate stays as a prior): a model taken out of
 * service and back (the runtime's repository API) would otherwise count the
 * time it was out as one gap, and its variability estimate, an average of
 * squared gaps, would keep its batches small for many seconds after. */
void sym_shard_restart_arrivals(struct sym_shard *s);

/* Queues r (r->model must be s->id) and updates the rate estimate.
 * Returns 0 or -ENOMEM. */
int sym_shard_push(struct sym_shard *s, struct sym_request *r, sym_time now);

/* Applies the drop rule at `now` (calling drop for each dropped request) and
 * computes the candidate on kind 0 with the policy. */
void sym_shard_candidate(struct sym_shard *s, sym_time now, const struct sym_policy *pol,
			 sym_drop_fn drop, void *ctx, struct sym_cand *out);

/* Applies the drop rule at `now` (calling drop for each dropped request).
 * Returns the queue length after it. */
size_t sym_shard_gather(struct sym_shard *s, sym_time now, sym_drop_fn drop, void *ctx);

/* The measured waits of a kind (core/models.h) for a policy's view; 0 when
 * not measured. */
struct sym_waits {
	sym_time wait, safe;
};

/* The candidate on kind k after sym_shard_gather (no drops); size 0 when the
 * queue is empty or the head cannot make its deadline on kind k. A NULL
 * policy gives exec = now. w: the measured waits of kind k, or NULL. */
void sym_shard_cand_kind(const struct sym_shard *s, sym_time now, const struct sym_policy *pol, int k,
			 const struct sym_waits *w, struct sym_cand *out);

/* Look-ahead: where candidate cd (deferred: cd->exec > now) is heading if
 * its model's requests keep arriving at the measured rate. Its batch grows by
 * lambda per second until the moment the policy would dispatch that larger
 * batch, which moves that moment earlier: the fixed point (at most 8 steps)
 * gives *f, when it expects to be due, and *p, the le of the batch it expects
 * then (never smaller than cd's). */
void sym_shard_project(const struct sym_shard *s, sym_time now, const struct sym_policy *pol, int k,
		       const struct sym_waits *w, const struct sym_cand *cd, sym_time *f, sym_time *p);

/* The largest b <= min(n, maxb) with le[b] <= budget, or 0 (le non-decreasing). */
int sym_le_fit(const sym_time *le, int maxb, size_t n, sym_time budget);

/* Takes the first n requests off the queue into out. */
void sym_shard_take(struct sym_shard *s, int n, struct sym_request **out);

/* The early-drop target for arrival rate lambda (requests/s) and gap
 * coefficient of variation cv (1 for Poisson), as above. */
int sym_shard_target_for_rate(const struct sym_shard *s, double lambda, double cv);

/* The GPUs a load of lambda (requests/s) keeps busy at its largest batch b
 * that fills and finishes within the SLO, (b - 1)/lambda + le(b) <= SLO, on
 * the fastest kind: lambda l(b)/b (the multi-model bound's need,
 * core/capacity.h). 0 for no load. */
double sym_shard_spread(const struct sym_shard *s, double lambda);

/* The current estimate of the gap coefficient of variation (1 until enough
 * arrivals were seen). */
double sym_shard_gap_cv(const struct sym_shard *s);

#endif
