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
 * ("timeout:30%"). full=false drops the trigger on a full batch: the paper's
 * timeout rule as it states it, exec = max(now, a + K) and nothing else
 * (symphony-deferred-batch-scheduling.md, Section 3.4; an ablation: with a
 * long K it waits past every window the full trigger would have used, and
 * fails the A100 zoo from K = 30% on, shared/research/lookahead-deferral/
 * report.md Section 6). A timeout past the candidate's latest start does not wait
 * for ever: when `latest` passes the batch shrinks to what can still make the
 * deadline (or the head is dropped), exactly as for every other policy.
 */
#include <math.h>
#include <stddef.h>

#include "core/policy_api.h"

struct params {
	double k;     /* the timeout: ms, or percent of the SLO */
	bool percent; /* k is a percentage of the SLO */
	bool full;    /* also dispatch once the batch is full (TF-Serving's max_batch_size) */
};
SYM_POLICY_PARAMS(struct params, params_of)

static const struct sym_param params[] = {
	{ .key = "timeout", .type = SYM_PARAM_NUM, .offset = offsetof(struct params, k), .lo = 0, .hi = INFINITY,
	  .unit = "ms", .percent = true, .pct_offset = offsetof(struct params, percent), .pct_hi = 1000,
	  .bare = SYM_PARAM_BARE, .required = true,
	  .help = "K, counted from the oldest request's arrival (timeout:5, timeout:30%)" },
	{ .key = "full", .type = SYM_PARAM_BOOL, .offset = offsetof(struct params, full), .def = 1,
	  .help = "also go as soon as the batch is full (false: the paper's rule, the timeout alone; an ablation)" },
	{ .key = NULL },
};

static sym_time exec(const struct sym_policy *p, const struct sym_cand_view *v)
{
	const struct params pp = params_of(p);
	sym_time k = pp.percent ? (sym_time)llround((double)v->slo * pp.k / 100.0) : sym_ms(pp.k);
	/* full = the largest b with le(b) <= slo - k (le is non-decreasing) */
	int lo = 1, hi = v->max_batch;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (v->le[mid] <= v->slo - k)
			lo = mid;
		else
			hi = mid - 1;
	}
	if (v->size >= v->max_batch || (pp.full && v->queued >= (size_t)lo))
		return v->now;
	sym_time t = v->head_arrival + k;
	return t > v->now ? t : v->now;
}

const struct sym_policy_ops sym_policy_timeout = {
	.name = "timeout",
	.summary = "TF-Serving batching: dispatch K after the oldest request arrived, or when full",
	.params = params,
	.params_size = sizeof(struct params),
	.exec = exec,
};
