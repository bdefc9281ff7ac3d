#include "core/shard.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static const char *const drop_names[SYM_DROP_NREASONS] = {
	[SYM_DROP_EXPIRED] = "expired",
	[SYM_DROP_EARLY] = "early",
};

const char *sym_drop_reason_name(enum sym_drop_reason why)
{
	return (unsigned)why < SYM_DROP_NREASONS ? drop_names[why] : "unknown";
}

int sym_gather_parse(const char *text, struct sym_gather *out)
{
	if (!strcmp(text, "lazy")) {
		*out = (struct sym_gather){ SYM_GATHER_LAZY, 0, SYM_TARGET_SIGMAS };
		return 0;
	}
	if (!strcmp(text, "early") || !strcmp(text, "early:auto")) {
		*out = (struct sym_gather){ SYM_GATHER_EARLY, 0, SYM_TARGET_SIGMAS };
		return 0;
	}
	char *end = NULL;
	errno = 0;
	if (!strncmp(text, "early:auto:", 11)) {
		double k = strtod(text + 11, &end);
		if (text[11] && !*end && !errno && isfinite(k) && k >= 0 && k <= 100) {
			*out = (struct sym_gather){ SYM_GATHER_EARLY, 0, k };
			return 0;
		}
		return -EINVAL;
	}
	if (!strncmp(text, "early:", 6)) {
		long n = strtol(text + 6, &end, 10);
		if (text[6] && !*end && !errno && n >= 1 && n <= SYM_PROFILE_BATCH_LIMIT) {
			*out = (struct sym_gather){ SYM_GATHER_EARLY, (int)n, SYM_TARGET_SIGMAS };
			return 0;
		}
	}
	return -EINVAL;
}

char *sym_gather_format(const struct sym_gather *g, char *buf, size_t len)
{
	if (g->rule == SYM_GATHER_LAZY)
		snprintf(buf, len, "lazy");
	else if (g->target)
		snprintf(buf, len, "early:%d", g->target);
	else if (g->sigmas == SYM_TARGET_SIGMAS)
		snprintf(buf, len, "early:auto");
	else
		snprintf(buf, len, "early:auto:%.17g", g->sigmas);
	return buf;
}

int sym_shard_init(struct sym_shard *s, int id, const struct sym_model_cfg *cfg,
		   const struct sym_gather *gather, const struct sym_net *net)
{
	memset(s, 0, sizeof(*s));
	const struct sym_profile *p = cfg->profile;
	if (!p || !p->lat || p->max_batch < 1 || cfg->slo <= 0 || !isfinite(cfg->rate_hint) ||
	    cfg->rate_hint < 0 || net->ctrl < 0 || net->data < 0 || net->resp < 0 ||
	    gather->target < 0 || !isfinite(gather->sigmas) || gather->sigmas < 0)
		return -EINVAL;
	s->le = malloc(((size_t)p->max_batch + 2) * sizeof(*s->le));
	if (!s->le)
		return -ENOMEM;
	s->id = id;
	s->profile = p;
	s->slo = cfg->slo;
	s->max_batch = p->max_batch;
	s->net = *net;
	s->gather = *gather;
	s->le[0] = 0;
	for (int b = 1; b <= p->max_batch; b++)
		s->le[b] = p->lat[b] + net->ctrl + net->data * b + net->resp;
	s->le[p->max_batch + 1] = SYM_TIME_NEVER;
	sym_queue_init(&s->queue);
	s->lambda = cfg->rate_hint;
	s->last_arrival = -1;
	s->target = gather->target ? gather->target : sym_shard_target_for_rate(s, s->lambda, 1);
	return 0;
}

void sym_shard_finish(struct sym_shard *s)
{
	if (!s)
		return;
	sym_queue_finish(&s->queue);
	free(s->le);
	s->le = NULL;
}

int sym_shard_target_for_rate(const struct sym_shard *s, double lambda, double cv)
{
	const struct sym_profile *p = s->profile;
	for (int b = s->max_batch; b > 1; b--) {
		double l = (double)p->lat[b];
		double n = lambda * (l / 1e9) / b;
		if (n < 1)
			n = 1;
		double margin = lambda > 0 ? s->gather.sigmas * cv * sqrt((double)b) / lambda * 1e9 : 0;
		double budget = (double)(s->slo - (s->le[b] - p->lat[b]));
		if ((1 + 1 / n) * l + margin <= budget)
			return b;
	}
	return 1;
}

double sym_shard_gap_cv(const struct sym_shard *s)
{
	if (s->gap_m1 <= 0)
		return 1;
	double var = s->gap_m2 - s->gap_m1 * s->gap_m1;
	return var > 0 ? sqrt(var) / s->gap_m1 : 0;
}

int sym_shard_push(struct sym_shard *s, struct sym_request *r, sym_time now)
{
	int err = sym_queue_push(&s->queue, r);
	if (err)
		return err;
	/* Gap variability (EWMA of the gap and its square). */
	if (s->last_arrival >= 0) {
		double g = (double)(now - s->last_arrival);
		if (s->gap_m1 <= 0) {
			s->gap_m1 = g;
			s->gap_m2 = 2 * g * g; /* start at cv = 1 */
		} else {
			s->gap_m1 += (g - s->gap_m1) * SYM_GAP_SMOOTH;
			s->gap_m2 += (g * g - s->gap_m2) * SYM_GAP_SMOOTH;
		}
	}
	s->last_arrival = now;
	/* Windowed rate estimate, smoothed across windows. */
	if (now - s->win_start >= SYM_RATE_WINDOW) {
		double sample = s->win_count / sym_to_s(now - s->win_start);
		s->lambda = s->lambda > 0 ? (1 - SYM_RATE_SMOOTH) * s->lambda + SYM_RATE_SMOOTH * sample
					  : sample;
		s->win_start = now;
		s->win_count = 0;
		if (s->gather.rule == SYM_GATHER_EARLY && !s->gather.target)
			s->target = sym_shard_target_for_rate(s, s->lambda, sym_shard_gap_cv(s));
	}
	s->win_count++;
	return 0;
}

void sym_shard_candidate(struct sym_shard *s, sym_time now, const struct sym_policy *pol,
			 sym_drop_fn drop, void *ctx, struct sym_cand *out)
{
	struct sym_queue *q = &s->queue;
	sym_time budget;
	size_t n;
	for (;;) {
		n = sym_queue_len(q);
		if (!n) {
			*out = (struct sym_cand){ 0, SYM_TIME_NEVER, SYM_TIME_NEVER, SYM_TIME_NEVER };
			return;
		}
		budget = sym_queue_at(q, 0)->deadline - now;
		enum sym_drop_reason why;
		if (s->le[1] > budget) {
			why = SYM_DROP_EXPIRED;
		} else if (s->gather.rule == SYM_GATHER_EARLY) {
			size_t k = (size_t)s->target;
			if (k > n)
				k = n;
			if (k > (size_t)s->max_batch)
				k = (size_t)s->max_batch;
			if (s->le[k] <= budget)
				break;
			why = SYM_DROP_EARLY;
		} else {
			break;
		}
		struct sym_request *r = sym_queue_pop(q);
		s->dropped_since_batch++;
		drop(ctx, r, why, now);
	}
	/* B: the largest b <= min(n, max_batch) with le(b) <= budget; le(1) fits. */
	int lo = 1, hi = n < (size_t)s->max_batch ? (int)n : s->max_batch;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (s->le[mid] <= budget)
			lo = mid;
		else
			hi = mid - 1;
	}
	const struct sym_request *head = sym_queue_at(q, 0);
	struct sym_cand_view v = {
		.now = now,
		.deadline = head->deadline,
		.head_arrival = head->arrival,
		.size = lo,
		.max_batch = s->max_batch,
		.queued = n,
		.le = s->le,
		.slo = s->slo,
	};
	out->size = lo;
	out->deadline = head->deadline;
	out->latest = head->deadline - s->le[lo];
	sym_time exec = pol->ops->exec(pol, &v);
	out->exec = exec > now ? exec : now;
}

void sym_shard_take(struct sym_shard *s, int n, struct sym_request **out)
{
	sym_queue_pop_n(&s->queue, (size_t)n, out);
	s->dropped_since_batch = 0;
}
