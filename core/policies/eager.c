/* eager: dispatch the largest feasible batch as soon as a GPU is free.
 *
 * exec = now, so a candidate takes any free GPU at once; when none is free it
 * waits, and the next GPU to free up takes the waiting candidate with the
 * smallest latest start. Batches grow only while every GPU is busy. */
#include "core/policy_api.h"

static sym_time exec(const struct sym_policy *p, const struct sym_cand_view *v)
{
	(void)p;
	return v->now;
}

const struct sym_policy_ops sym_policy_eager = {
	.name = "eager",
	.summary = "dispatch as soon as a GPU is free (work-conserving, small batches)",
	.exec = exec,
};
