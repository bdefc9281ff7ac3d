/* core/profile.h - batch latency and memory profile of one model on one GPU kind.
 *
 * A profile gives l(b), the time to run a batch of b requests, for b in
 * 1..max_batch. It is either linear, l(b) = alpha*b + beta, or a table of
 * measured latencies. l must be non-decreasing in b (a bigger batch never runs
 * faster); the initialisers reject anything else. Memory figures are optional
 * (negative when unknown): static memory is held while the model is loaded,
 * dynamic memory is allocated by each batch execution.
 *
 * Latencies are stored as a table of nanoseconds, so l(b) is one array load.
 */
#ifndef SYM_PROFILE_H
#define SYM_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/time.h"

/* Upper limit on max_batch, to keep tables small. */
#define SYM_PROFILE_BATCH_LIMIT 4096

struct sym_profile {
	char name[64];
	bool linear;        /* true: alpha/beta are exact; false: a table */
	double alpha_ms;    /* linear slope, or the least-squares fit of a table */
	double beta_ms;     /* linear intercept, or the fit of a table */
	int max_batch;      /* >= 1 */
	sym_time *lat;      /* lat[b], b = 0..max_batch; lat[0] = 0 (owned) */
	double static_mb;   /* < 0 when unknown */
	double dynamic_mb;  /* < 0 when unknown */
	double slo_ms;      /* the model's usual SLO, 0 when unknown */
};

/* Linear profile. alpha_ms >= 0, beta_ms >= 0, alpha+beta > 0, both finite;
 * 1 <= max_batch <= SYM_PROFILE_BATCH_LIMIT. Returns 0, -EINVAL or -ENOMEM.
 * The name is truncated to fit. Memory fields start unknown, slo_ms at 0. */
int sym_profile_init_linear(struct sym_profile *p, const char *name,
			    double alpha_ms, double beta_ms, int max_batch);

/* Table profile: lat_ms[i] is l(i+1) for i in 0..n-1, so max_batch = n.
 * Entries must be finite, > 0 and non-decreasing. alpha/beta are set to the
 * least-squares line through the table, for display. */
int sym_profile_init_table(struct sym_profile *p, const char *name,
			   const double *lat_ms, int n);

/* Deep copy (the copy owns its own table). Returns 0 or -ENOMEM. */
int sym_profile_copy(struct sym_profile *dst, const struct sym_profile *src);

/* Releases the table. Accepts NULL and a zeroed profile. */
void sym_profile_finish(struct sym_profile *p);

/* l(b) in ns; b must be in 1..max_batch. */
static inline sym_time sym_profile_latency(const struct sym_profile *p, int b)
{
	return p->lat[b];
}

/* The largest b <= max_batch with l(b) <= budget, or 0 if even l(1) > budget. */
int sym_profile_max_batch_within(const struct sym_profile *p, sym_time budget);

/* The largest b with alpha*b + beta <= slo_ms for a linear model, capped at
 * SYM_PROFILE_BATCH_LIMIT; 0 if l(1) > slo_ms. Used to size linear tables. */
int sym_profile_linear_batch_limit(double alpha_ms, double beta_ms, double slo_ms);

#endif
