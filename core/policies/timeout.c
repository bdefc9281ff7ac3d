/* timeout:K - TF-Serving style batching timeout.
 *
 * A batch waits until K after its oldest request arrived, or until it is full,
 * whichever is first:
 *
 *     exec = max(now, head arrival + K)      (exec = now when the batch is full)
 *
 * "Full" is TF-Serving's max_batch_size, set as an operator would for this
 * timeout: the largest b with le(b) <= SLO - K, so that a full batch sent at
 * the timeout still meets its deadline (at least 1, at most the model's
 * largest batch). The batch goes as soon as that many requests are queued.
 *
 * K is in milliseconds ("timeout:5") or a percentage of the model's SLO
 * ("timeout:30%"). A timeout past the candidate's latest start does not wait
 * for ever: when `latest` passes the batch shrinks to what can still make the
 * deadline (or the head is dropped), exactly as for every other policy.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy.h"

static int parse(struct sym_policy *p, const char *params, char *err, size_t errlen)
{
	if (!strncmp(params, "timeout=", 8))
		params += 8;
	char *end = NULL;
	errno = 0;
	double k = strtod(params, &end);
	bool pct = false;
	if (end && *end == '%') {
		pct = true;
		end++;
	}
	if (!*params || end == params || *end || errno || !isfinite(k) || k < 0 ||
	    (pct && k > 1000)) {
		snprintf(err, errlen,
			 "policy 'timeout' needs a timeout K >= 0 in ms or as a percentage of the SLO, "
			 "e.g. timeout:5 or timeout:30%% (got '%s')", params);
		return -EINVAL;
	}
	p->u.timeout.k = k;
	p->u.timeout.percent = pct;
	return 0;
}

static void format(const struct sym_policy *p, char *buf, size_t len)
{
	char num[32];
	snprintf(buf, len, "timeout:%s%s", sym_policy_fmt_num(p->u.timeout.k, num, sizeof(num)),
		 p->u.timeout.percent ? "%" : "");
}

static sym_time exec(const struct sym_policy *p, const struct sym_cand_view *v)
{
	sym_time k = p->u.timeout.percent ? (sym_time)llround((double)v->slo * p->u.timeout.k / 100.0)
					     : sym_ms(p->u.timeout.k);
	/* full = the largest b with le(b) <= slo - k (le is non-decreasing) */
	int lo = 1, hi = v->max_batch;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (v->le[mid] <= v->slo - k)
			lo = mid;
		else
			hi = mid - 1;
	}
	if (v->size >= v->max_batch || v->queued >= (size_t)lo)
		return v->now;
	sym_time t = v->head_arrival + k;
	return t > v->now ? t : v->now;
}

const struct sym_policy_ops sym_policy_timeout = {
	.name = "timeout",
	.summary = "TF-Serving batching: dispatch K after the oldest request arrived, or when full",
	.params_help = "K: timeout in ms (timeout:5) or percent of the SLO (timeout:30%)",
	.parse = parse,
	.format = format,
	.exec = exec,
};
