/* betalambda: the first published form of the deferred rule.
 *
 * A candidate becomes schedulable at the frontrun moment d - le(B+1), as in
 * symphony, or at once when its batch already holds at least beta * lambda
 * requests: lambda is the model's measured arrival rate, so beta * lambda is
 * the number of requests that arrive during one batch's fixed cost beta (the
 * profile's intercept, unless set). A batch that large amortises the fixed
 * cost over as many requests as arrive while it is paid, so waiting for more
 * gains little:
 *
 *     exec = now                      if B >= beta * lambda (or B is the largest batch)
 *     exec = max(now, d - le(B+1))    otherwise
 *
 * Parameters: beta=MS overrides the profile's beta (ms, > 0).
 */
#include <stddef.h>

#include "core/policy_api.h"

struct params {
	double beta; /* ms; 0: the profile's */
};
SYM_POLICY_PARAMS(struct params, params_of)

static const struct sym_param params[] = {
	{ .key = "beta", .type = SYM_PARAM_NUM, .offset = offsetof(struct params, beta), .lo = 1e-9, .hi = 1e6,
	  .unit = "ms", .def = 0, .def_text = "the profile's beta", .bare = SYM_PARAM_BARE_OK,
	  .help = "the fixed cost of a batch" },
	{ .key = NULL },
};

static sym_time exec(const struct sym_policy *p, const struct sym_cand_view *v)
{
	if (v->size >= v->max_batch)
		return v->now;
	const struct params pp = params_of(p);
	double beta = pp.beta > 0 ? pp.beta : v->beta_ms;
	if (v->lambda > 0 && (double)v->size >= beta / 1e3 * v->lambda)
		return v->now;
	sym_time frontrun = v->deadline - v->le[v->size + 1];
	return frontrun > v->now ? frontrun : v->now;
}

const struct sym_policy_ops sym_policy_betalambda = {
	.name = "betalambda",
	.summary = "deferred rule, first form: dispatch at the frontrun moment, or once the batch holds beta*lambda requests",
	.params = params,
	.params_size = sizeof(struct params),
	.exec = exec,
};
