/* core/query.h - Nexus's query analysis (nexus.md, Section 6.2): the split of
 * a complex query's end-to-end latency SLO over its stages that minimises
 * the GPUs the query needs.
 *
 * A query is a tree of model invocations: stage 0 is the root; every other
 * stage has a parent and a fan-out gamma, the invocations it gets per output
 * of its parent (a detector's objects per frame; below 1 the parent filters).
 * At a root rate R, stage v runs R_v = R * the product of the gammas on its
 * path. Given a time budget k, stage v runs at its best throughput within k,
 * T_v(k) = max over batches b with l_v(b) <= k of b / l_v(b), and needs
 * R_v / T_v(k) GPUs. The split minimises the sum over the stages subject to
 * every root-to-leaf path's budgets summing to at most the SLO L:
 *
 *   f(u, t) = min over k <= t of { R_u / T_u(k) + sum over children v of f(v, t - k) }
 *
 * on a grid of eps (the paper's L/eps segments; quadratic in L/eps per
 * stage). As published, a stage's budget bounds its batch's latency l(b);
 * queueing (Nexus's "a request that misses a batch waits for the next") is
 * the scheduler's to account for, not the split's.
 *
 * Pure: no clock, no allocation beyond the call's own scratch.
 */
#ifndef SYM_QUERY_H
#define SYM_QUERY_H

#include <stddef.h>

#include "core/profile.h"

#define SYM_QUERY_MAX_STAGES 64
#define SYM_QUERY_MAX_STEPS 100000 /* L / eps */

/* A stage's batching profile, either a model profile (T(k) from l(b)) or,
 * as Nexus's Figure 3 gives them, points of (latency, throughput): T(k) is
 * the best throughput of a point whose latency is within k. */
struct sym_query_stage {
	const char *name;
	const struct sym_profile *profile; /* or NULL: the points */
	int npoints;
	const double *lat_ms, *tput;       /* npoints each */
	int parent;                        /* -1 for stage 0 (the root), else a stage before this one */
	double gamma;                      /* invocations per output of the parent (the root: its share of R, 1) */
	double lat_factor;                 /* a batch fits budget k when lat_factor * l(b) <= k: 1 (or 0, the
					    * default) as Figure 4's plans; 2 for the worst case of a Nexus
					    * session, a request that just missed a batch (Section 6.1) */
};

struct sym_query_split {
	double budget_ms;  /* the stage's share of the SLO */
	int batch;         /* its batch within the budget (0 with points) */
	double lat_ms;     /* that batch's latency (the point's, with points) */
	double rate;       /* R_v, requests/s */
	double tput;       /* T_v(budget): requests/s per GPU */
	double gpus;       /* R_v / T_v */
};

/* The optimal split of slo_ms over the n stages at root rate `rate`, on a grid
 * of eps_ms. out[n] per stage; *total the GPUs. 0; -EINVAL with a message
 * (a bad tree, rate, SLO or grid; a stage with no batch or point at all);
 * -ERANGE when no split meets the SLO (some path's stages cannot all run
 * within it), with a message; -ENOMEM. */
int sym_query_split(const struct sym_query_stage *st, int n, double rate, double slo_ms, double eps_ms,
		    struct sym_query_split *out, double *total, char *err, size_t errlen);

/* The baseline Nexus compares with: the SLO split evenly over the stages of
 * the deepest path (every stage gets slo_ms / depth). Same results and
 * errors; -ERANGE when a stage cannot run within its even share. */
int sym_query_even(const struct sym_query_stage *st, int n, double rate, double slo_ms,
		   struct sym_query_split *out, double *total, char *err, size_t errlen);

/* A given split: stage v gets budget_ms[v]. Same results and errors;
 * -ERANGE when a path's budgets sum to more than slo_ms or a stage cannot
 * run a batch within its budget. */
int sym_query_eval(const struct sym_query_stage *st, int n, double rate, double slo_ms, const double *budget_ms,
		   struct sym_query_split *out, double *total, char *err, size_t errlen);

#endif
