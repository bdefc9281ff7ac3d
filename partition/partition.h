/* partition/partition.h - partitioning models into sub-clusters (or
 * clusters), as published: symphony-centralized-orchestration.md, Section
 * 4.7 and Appendix A.1.
 *
 * m models, each with a request rate r_i, a static memory s_i (held while it
 * is loaded) and a dynamic memory d_i (what one batch adds), go to l parts.
 * A part's rate is at most R_max (what one ranker can dispatch, (5)); its
 * static memory plus the largest dynamic memory of its models is at most
 * S_max (what every GPU of the part must hold, (6)). Among such
 * assignments, the MILP minimises dR + w dS, where dR and dS bound every
 * part's distance from the average rate R = sum r / l and the average static
 * memory S = sum s / l ((7), (8)); each model in exactly one part ((9),
 * (10)). Given the current assignment and a cost c_i for loading or
 * unloading model i, the change is bounded: the sum of c_i over every part
 * model i leaves or joins is at most C_max ((11)).
 *
 * sym_partition_milp solves it with COIN-OR CBC (through its C API) within
 * a time limit (CBC runs in a child process, stopped at the limit: it checks
 * its own clock only between nodes) and returns the best solution found; sym_partition_random is
 * the paper's baseline (A.2): random assignments, checked and scored, the
 * best kept, under the same time limit. Both are pure functions of their
 * problem (the random one of its seed as well, and of the time it is given).
 *
 * The max in (6) is linearised with one variable per part (D_j >= d_i
 * x_ij); with x' the current assignment, |x_ij - x'_ij| is x_ij or 1 - x_ij,
 * so (11) needs no extra variable. w <= 0 means R / S: a part's relative
 * rate and memory imbalance then weigh the same.
 */
#ifndef SYM_PARTITION_H
#define SYM_PARTITION_H

#include <stddef.h>
#include <stdint.h>

struct sym_part_model {
	double rate;       /* r_i, requests/s, >= 0 */
	double static_mb;  /* s_i, >= 0 */
	double dynamic_mb; /* d_i, >= 0 */
	double move_cost;  /* c_i: loading or unloading it once, >= 0 (only with C_max) */
	int current;       /* its part now, or -1 (a new model: joining its part costs c_i) */
};

struct sym_part_problem {
	int nmodels;
	const struct sym_part_model *models;
	int nparts;          /* l >= 1 */
	double r_max;        /* <= 0: no limit */
	double s_max;        /* <= 0: no limit */
	double w;            /* the weight of dS; <= 0: R / S (1 when S is 0) */
	double c_max;        /* < 0: no bound on the change (11) */
	double time_limit_s; /* <= 0: 10 s */
	uint64_t seed;       /* the random baseline's */
};

enum sym_part_status {
	SYM_PART_OPTIMAL,    /* proven optimal */
	SYM_PART_FEASIBLE,   /* the best found within the time limit, not proven */
	SYM_PART_INFEASIBLE, /* proven: no assignment meets the constraints */
	SYM_PART_UNKNOWN,    /* none found within the time limit, none proven impossible */
};

struct sym_part_result {
	enum sym_part_status status;
	int *assign;           /* nmodels parts (malloc'ed), valid unless INFEASIBLE/UNKNOWN */
	double objective;      /* dR + w dS of assign */
	double w;              /* the weight used */
	double dr, ds;         /* the largest distance from the averages */
	double bound;          /* MILP: the solver's lower bound on the objective (else 0) */
	double rate_imbalance; /* (max - min) / avg of the parts' rates */
	double mem_imbalance;  /* the same of their static memory */
	double change_cost;    /* sum of c_i over the parts models leave or join */
	double seconds;        /* solving time */
	int solver_stopped;    /* MILP: 1 when CBC was still running at the time limit and was stopped (its
				* work lost: the start, a greedy assignment and local search, stands) */
	uint64_t tries;        /* random: assignments drawn; MILP: 0 */
	uint64_t feasible;     /* random: of those, the feasible ones */
};

/* Solves with CBC. Returns 0 (see r->status), or -EINVAL (a bad problem,
 * named in err) or -ENOMEM. r is filled in either case; free it with
 * sym_part_result_free. */
int sym_partition_milp(const struct sym_part_problem *p, struct sym_part_result *r, char *err, size_t errlen);

/* The solver's start alone, deterministic (no clock): the current
 * assignment when every model has one and it meets the limits, else the
 * greedy one, improved by the local search (moves and swaps that lower the
 * objective within (5), (6) and (11)) for at most max_passes passes. What the
 * simulator's epochs use: the same problem gives the same answer on any
 * machine. FEASIBLE, or UNKNOWN when no start meets the limits. */
int sym_partition_local(const struct sym_part_problem *p, int max_passes, struct sym_part_result *r, char *err,
			size_t errlen);

/* The random baseline under the same time limit (FEASIBLE when one was
 * found, else UNKNOWN). */
int sym_partition_random(const struct sym_part_problem *p, struct sym_part_result *r, char *err, size_t errlen);

/* Scores an assignment: fills objective, dr, ds, imbalances and change cost
 * of r for assign (copied), and returns whether it meets (5), (6) and (11). */
int sym_partition_score(const struct sym_part_problem *p, const int *assign, struct sym_part_result *r);

void sym_part_result_free(struct sym_part_result *r);

const char *sym_part_status_name(enum sym_part_status s);

#endif
