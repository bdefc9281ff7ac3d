/* core/urgency.h - the urgency scheduler's metric (urgency-scheduler.md,
 * Section IV-A4, Equations 1-5), shared by the core's policy
 * (core/policies/urgency.c) and the application API library
 * (urgency/symphony_urgency.h). Pure: no clock, no allocation.
 *
 *   slack = DL - (now + EPT)                        (Eq. 1, ms)
 *   U     = -slack^p (power, default p = 3), -slack (linear) or 2^-slack (exp)   (Eq. 2)
 *   L_A   = n_A / navg_A                            (Eq. 3)
 *   U_A,R = U * L_A                                 (Eq. 4; monotone: U / L_A when U < 0)
 *
 *   U_A   = min over available R of |U_A,R|       (Eq. 5; the application with the largest U_A goes)
 *
 * For exp the value returned is the log2 image -slack + log2(L_A), which
 * orders applications the same way and cannot overflow.
 *
 * The history table (Section IV-A3): the recent (x, seconds) pairs of one
 * application on one resource, x the consolidated requests' size, fitted as
 * time = c0 + c1 x by least squares once enough samples with two distinct x
 * exist. */
#ifndef SYM_URGENCY_H
#define SYM_URGENCY_H

#include <math.h>
#include <stdbool.h>

enum sym_urg_shape_kind { SYM_URG_POWER, SYM_URG_LINEAR, SYM_URG_EXP };

struct sym_urg_shape {
	enum sym_urg_shape_kind kind;
	double power;  /* SYM_URG_POWER: p (> 0) */
	bool monotone; /* U / L instead of U * L while U < 0 */
};

/* U_A,R of an application whose head request has `slack_ms` and whose load
 * is `load` (> 0). */
double sym_urgency(const struct sym_urg_shape *sh, double slack_ms, double load);

/* How an application's urgencies on its available resources become its
 * U_A, by which applications are ranked (the largest goes first):
 * SYM_URG_APP_EQ5 is Eq. 5 as printed, the smallest |U_A,R| (with exp,
 * U > 0 and its log image is compared as it is); SYM_URG_APP_SIGNED the
 * largest signed U_A,R. They differ while the slack is positive under the
 * power and linear shapes: there U < 0, and |U| is largest for the
 * application with the most slack (docs/policies.md). */
enum sym_urg_app_rule { SYM_URG_APP_EQ5, SYM_URG_APP_SIGNED };

/* U_A so far (-INFINITY before the first resource) with one more
 * available resource's U_A,R = u folded in. */
double sym_urg_app_fold(enum sym_urg_app_rule rule, const struct sym_urg_shape *sh, double acc, double u);

/* Algorithm 1's ranking, shared by the policy and the library: per
 * application, its urgencies on the available resources fold into its U_A
 * and choose the resource it would take (the one of smallest U_A,R); the
 * application with the largest U_A goes, an earlier deadline first on a tie. */
struct sym_urg_app {
	double u;    /* U_A so far (-INFINITY before the first resource) */
	double umin; /* the smallest U_A,R so far */
	int res;     /* its resource, -1 while none is available */
};

static inline void sym_urg_app_begin(struct sym_urg_app *a)
{
	*a = (struct sym_urg_app){ -INFINITY, INFINITY, -1 };
}

/* Resource r is available with U_A,R = u; wins_tie: r takes a tie on u from
 * the resource chosen so far. */
static inline void sym_urg_app_add(struct sym_urg_app *a, enum sym_urg_app_rule rule, const struct sym_urg_shape *sh,
				   int r, double u, bool wins_tie)
{
	a->u = sym_urg_app_fold(rule, sh, a->u, u);
	if (a->res < 0 || u < a->umin || (u == a->umin && wins_tie)) {
		a->umin = u;
		a->res = r;
	}
}

/* Whether an application with U_A u and head deadline dl goes before the
 * best so far (best_u, best_dl), or there is none yet (!have). */
static inline bool sym_urg_app_before(double u, double dl, bool have, double best_u, double best_dl)
{
	return !have || u > best_u || (u == best_u && dl < best_dl);
}

#define SYM_URG_HIST_CAP 64

struct sym_urg_hist {
	double x[SYM_URG_HIST_CAP], y[SYM_URG_HIST_CAP];
	int n, pos;
	bool fitted;
	double c0, c1; /* y = c0 + c1 x, when fitted */
};

/* Adds a completed set of size x that took y_ms; refits once min_samples
 * (2..SYM_URG_HIST_CAP) samples with two distinct sizes exist (a fit that
 * is not finite keeps the previous one). */
void sym_urg_hist_add(struct sym_urg_hist *h, double x, double y_ms, int min_samples);

/* The fitted time (ms, at least 0) of a set of size x, or `fallback` when
 * there is no fit yet. */
double sym_urg_hist_estimate(const struct sym_urg_hist *h, double x, double fallback);

#endif
