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
 *
 * reserve=N (an ablation, default 0) moves the dispatch no later than
 * d - (1 + N) le(B): room for N batches of its size ahead of it. With
 * several models per GPU a candidate held to its frontrun moment is lost
 * when another model's batch holds the GPUs through its window (only alpha
 * wide); reserve=1 removes that collision, at the price of smaller batches
 * (docs/policies.md, "When models outnumber GPUs").
 */
#include <stddef.h>

#include "core/policy_api.h"

struct params {
	int reserve; /* batches of its own size a candidate leaves room for before its latest moment */
};
SYM_POLICY_PARAMS(struct params, params_of)

static const struct sym_param params[] = {
	{ .key = "reserve", .type = SYM_PARAM_INT, .offset = offsetof(struct params, reserve), .lo = 0, .hi = 16,
	  .def = 0, .help = "go by d - (1 + N) l(B) at the latest, leaving room for N batches of its size ahead of it "
			    "(0: the frontrun moment, as published)" },
	{ .key = NULL },
};

static sym_time exec(const struct sym_policy *p, const struct sym_cand_view *v)
{
	if (v->size >= v->max_batch)
		return v->now;
	sym_time frontrun = v->deadline - v->le[v->size + 1];
	int reserve = params_of(p).reserve;
	if (reserve > 0) {
		sym_time by = v->deadline - (sym_time)(1 + reserve) * v->le[v->size];
		if (by < frontrun)
			frontrun = by;
	}
	return frontrun > v->now ? frontrun : v->now;
}

const struct sym_policy_ops sym_policy_symphony = {
	.name = "symphony",
	.summary = "deferred batching: dispatch at the frontrun moment d - l(B+1), at the latest by d - l(B)",
	.params = params,
	.params_size = sizeof(struct params),
	.exec = exec,
};
