/* core/memory.h - the one memory rule: what a set of models needs on one device.
 *
 * A model's memory comes in two figures, the form of Table 1 of
 * symphony-centralized-orchestration.md (Section 3.2):
 *   - static_mb: held for as long as the model is loaded (weights, the
 *     framework's per-model buffers);
 *   - dynamic_mb: what one batch execution allocates on top, freed when the
 *     batch ends. It is a figure per batch, taken at the model's largest
 *     batch (the most a batch of it can ask for), not per request: the
 *     zoos' figures are measured for a batch, and `symphony profile` writes
 *     the dynamic memory it measured at the largest batch it ran.
 * A device runs one batch at a time (strict time multiplexing, Section 3.2),
 * so a set of models fits a device of capacity C when
 *
 *     sum of their static_mb  +  the largest of their dynamic_mb  <=  C
 *
 * (Appendix A, constraint (6)). Unknown figures (negative) count 0.
 *
 * Every place that judges memory (the simulator's check and sub-cluster
 * moves, the partitioner, the planner, the runtime's executors, the result's
 * summaries) uses these functions, so that the rule is written once.
 */
#ifndef SYM_MEMORY_H
#define SYM_MEMORY_H

#include "core/profile.h"

/* What a set of models holds on one device. Start from {0, 0}. */
struct sym_mem {
	double static_mb;  /* the sum of their static memory */
	double dynamic_mb; /* the largest dynamic memory among them */
};

/* A known figure, or 0 for an unknown (negative or NaN) one. */
static inline double sym_mem_known(double mb)
{
	return mb > 0 ? mb : 0;
}

/* Adds a model with these figures to the set. */
static inline void sym_mem_add(struct sym_mem *u, double static_mb, double dynamic_mb)
{
	u->static_mb += sym_mem_known(static_mb);
	if (sym_mem_known(dynamic_mb) > u->dynamic_mb)
		u->dynamic_mb = sym_mem_known(dynamic_mb);
}

static inline void sym_mem_add_profile(struct sym_mem *u, const struct sym_profile *p)
{
	sym_mem_add(u, p->static_mb, p->dynamic_mb);
}

/* What the set needs on a device, in MB. */
static inline double sym_mem_need(const struct sym_mem *u)
{
	return u->static_mb + u->dynamic_mb;
}

/* What the set would need with one more model. */
static inline double sym_mem_need_with(const struct sym_mem *u, double static_mb, double dynamic_mb)
{
	struct sym_mem v = *u;
	sym_mem_add(&v, static_mb, dynamic_mb);
	return sym_mem_need(&v);
}

/* What one model alone needs. */
static inline double sym_mem_model(double static_mb, double dynamic_mb)
{
	return sym_mem_known(static_mb) + sym_mem_known(dynamic_mb);
}

#endif
