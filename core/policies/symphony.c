/* symphony: deferred batch scheduling.
 *
 * The candidate B can meet its earliest deadline d if dispatched by
 * latest = d - le(B). Waiting is worth it while one more request could still
 * join: a batch of B+1 would have to go by d - le(B+1) (the *frontrun*
 * moment). Before that moment a GPU given to this batch would run it smaller
 * than it could be; after it, waiting cannot grow the batch any more, so the
 * candidate becomes dispatchable:
 *
 *     exec = max(now, d - le(B+1))
 *
 * When B is already the model's largest batch there is nothing to wait for.
 * Deferring to the frontrun moment keeps batches large and makes the GPUs of a
 * model start staggered, one batch every l(B)/N.
 */
#include "core/policy_api.h"

static sym_time exec(const struct sym_policy *p, const struct sym_cand_view *v)
{
	(void)p;
	if (v->size >= v->max_batch)
		return v->now;
	sym_time frontrun = v->deadline - v->le[v->size + 1];
	return frontrun > v->now ? frontrun : v->now;
}

const struct sym_policy_ops sym_policy_symphony = {
	.name = "symphony",
	.summary = "deferred batching: dispatch at the frontrun moment d - l(B+1), at the latest by d - l(B)",
	.exec = exec,
};
