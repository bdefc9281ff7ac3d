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
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/policy.h"

static int parse(struct sym_policy *p, const char *params, char *err, size_t errlen)
{
	p->u.betalambda.beta = 0;
	char key[32], val[64];
	int rc;
	while ((rc = sym_policy_kv_next(p, &params, key, sizeof(key), val, sizeof(val), err, errlen)) > 0) {
		if (!strcmp(key, "beta") || !key[0]) {
			if (sym_policy_num(val, 1e-9, 1e6, &p->u.betalambda.beta)) {
				snprintf(err, errlen, "policy 'betalambda': beta must be a time in ms > 0 (got '%s')", val);
				return -EINVAL;
			}
		} else {
			snprintf(err, errlen, "policy 'betalambda': unknown parameter '%s' (expected beta)", key);
			return -EINVAL;
		}
	}
	return rc;
}

static void format(const struct sym_policy *p, char *buf, size_t len)
{
	char num[32];
	if (p->u.betalambda.beta > 0)
		snprintf(buf, len, "betalambda:beta=%s", sym_policy_fmt_num(p->u.betalambda.beta, num, sizeof(num)));
	else
		snprintf(buf, len, "betalambda");
}

static sym_time exec(const struct sym_policy *p, const struct sym_cand_view *v)
{
	if (v->size >= v->max_batch)
		return v->now;
	double beta = p->u.betalambda.beta > 0 ? p->u.betalambda.beta : v->beta_ms;
	if (v->lambda > 0 && (double)v->size >= beta / 1e3 * v->lambda)
		return v->now;
	sym_time frontrun = v->deadline - v->le[v->size + 1];
	return frontrun > v->now ? frontrun : v->now;
}

const struct sym_policy_ops sym_policy_betalambda = {
	.name = "betalambda",
	.summary = "deferred rule, first form: dispatch at the frontrun moment, or once the batch holds beta*lambda requests",
	.params_help = "beta=MS: fixed batch cost (default: the profile's beta)",
	.parse = parse,
	.format = format,
	.exec = exec,
	.sched = NULL,
};
