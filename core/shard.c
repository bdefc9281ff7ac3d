#include "core/shard.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/policy_api.h"

static const char *const drop_names[SYM_DROP_NREASONS] = {
	[SYM_DROP_EXPIRED] = "expired",
	[SYM_DROP_EARLY] = "early",
	[SYM_DROP_REJECTED] = "rejected",
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

static int check_profile(const struct sym_profile *p)
{
	return p && p->lat && p->max_batch >= 1 ? 0 : -EINVAL;
}

int sym_shard_init(struct sym_shard *s, int id, const struct sym_model_cfg *cfg,
		   const struct sym_gather *gather, const struct sym_net *net)
{
	return sym_shard_init_kinds(s, id, cfg, 1, gather, net);
}

/* le: the best kind's effective latency per batch size over the kinds the
 * model runs on (several kinds). */
static void envelope(struct sym_shard *s)
{
	for (int b = 0; b <= s->max_batch + 1; b++) {
		sym_time best = SYM_TIME_NEVER;
		for (int k = 0; k < s->nkinds; k++)
			if (!(s->kinds_off >> k & 1) && b <= s->maxb_k[k] && s->lek[k][b] < best)
				best = s->lek[k][b];
		s->le[b] = best;
	}
	/* a kind dropping out can only raise the minimum: keep it monotone */
	for (int b = 1; b <= s->max_batch + 1; b++)
		if (s->le[b] < s->le[b - 1])
			s->le[b] = s->le[b - 1];
}

int sym_shard_set_kinds_off(struct sym_shard *s, uint32_t kinds_off)
{
	uint32_t all = sym_kinds_all(s->nkinds);
	if (s->nkinds < 2)
		return -EINVAL;
	s->kinds_off = kinds_off & all;
	if (s->kinds_off != all) /* (every kind off: held, its tables as they were) */
		envelope(s);
	s->version++;
	return 0;
}

void sym_shard_restart_arrivals(struct sym_shard *s)
{
	s->last_arrival = -1;
	s->gap_m1 = s->gap_m2 = 0;
	s->cv = 1;
	s->win_start = -1;
	s->win_count = 0;
}

int sym_shard_init_kinds(struct sym_shard *s, int id, const struct sym_model_cfg *cfg, int nkinds,
			 const struct sym_gather *gather, const struct sym_net *net)
{
	memset(s, 0, sizeof(*s));
	if (nkinds < 1 || nkinds > SYM_MAX_KINDS || check_profile(cfg->profile) || cfg->slo <= 0 ||
	    !isfinite(cfg->rate_hint) || cfg->rate_hint < 0 || net->ctrl < 0 || net->data < 0 ||
	    net->resp < 0 || gather->target < 0 || !isfinite(gather->sigmas) || gather->sigmas < 0)
		return -EINVAL;
	uint32_t all = sym_kinds_all(nkinds);
	if ((cfg->kinds_off & all) == all)
		return -EINVAL; /* runs on no kind */
	s->nkinds = nkinds;
	s->kinds_off = cfg->kinds_off;
	s->max_batch = 0;
	for (int k = 0; k < nkinds; k++) {
		const struct sym_profile *p = k && cfg->by_kind[k] ? cfg->by_kind[k] : cfg->profile;
		if (check_profile(p))
			return -EINVAL;
		s->prof_k[k] = p;
		s->maxb_k[k] = p->max_batch;
		if (p->max_batch > s->max_batch)
			s->max_batch = p->max_batch;
	}
	for (int k = 0; k < nkinds; k++) {
		const struct sym_profile *p = s->prof_k[k];
		sym_time *le = malloc(((size_t)p->max_batch + 2) * sizeof(*le));
		if (!le) {
			sym_shard_finish(s);
			return -ENOMEM;
		}
		s->lek[k] = le;
		le[0] = 0;
		for (int b = 1; b <= p->max_batch; b++)
			le[b] = p->lat[b] + net->ctrl + net->data * b + net->resp;
		le[p->max_batch + 1] = SYM_TIME_NEVER;
	}
	if (nkinds == 1) {
		s->le = s->lek[0];
	} else {
		s->le = malloc(((size_t)s->max_batch + 2) * sizeof(*s->le));
		if (!s->le) {
			sym_shard_finish(s);
			return -ENOMEM;
		}
		envelope(s);
	}
	s->id = id;
	s->name = cfg->name;
	s->profile = s->prof_k[0];
	s->slo = cfg->slo;
	s->net = *net;
	s->gather = *gather;
	sym_queue_init(&s->queue);
	s->lambda = cfg->rate_hint;
	s->cv = 1;
	s->spread = sym_shard_spread(s, s->lambda);
	s->last_arrival = -1;
	s->target = gather->target ? gather->target : sym_shard_target_for_rate(s, s->lambda, 1);
	return 0;
}

void sym_shard_finish(struct sym_shard *s)
{
	if (!s)
		return;
	sym_queue_finish(&s->queue);
	if (s->le != s->lek[0])
		free(s->le);
	for (int k = 0; k < SYM_MAX_KINDS; k++) {
		free(s->lek[k]);
		s->lek[k] = NULL;
	}
	s->le = NULL;
}

int sym_shard_target_for_rate(const struct sym_shard *s, double lambda, double cv)
{
	sym_time fixed = s->net.ctrl + s->net.resp;
	for (int b = s->max_batch; b > 1; b--) {
		sym_time delays = fixed + s->net.data * b;
		double l = (double)(s->le[b] - delays); /* the fastest kind's l(b) */
		double n = lambda * (l / 1e9) / b;
		if (n < 1)
			n = 1;
		double margin = lambda > 0 ? s->gather.sigmas * cv * sqrt((double)b) / lambda * 1e9 : 0;
		double budget = (double)(s->slo - delays);
		if ((1 + 1 / n) * l + margin <= budget)
			return b;
	}
	return 1;
}

double sym_shard_spread(const struct sym_shard *s, double lambda)
{
	if (!(lambda > 0) || s->le[1] > s->slo)
		return 0;
	int lo = 1, hi = s->max_batch;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if ((double)(mid - 1) / lambda * 1e9 + (double)s->le[mid] <= (double)s->slo)
			lo = mid;
		else
			hi = mid - 1;
	}
	sym_time delays = s->net.ctrl + s->net.resp + s->net.data * lo;
	return lambda * sym_to_s(s->le[lo] - delays) / lo;
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
	s->version++;
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
	/* Windowed rate estimate, smoothed across windows (a window restarted by
	 * sym_shard_restart_arrivals begins at this arrival). */
	if (s->win_start < 0) {
		s->win_start = now;
	} else if (now - s->win_start >= SYM_RATE_WINDOW) {
		double sample = s->win_count / sym_to_s(now - s->win_start);
		s->lambda = s->lambda > 0 ? (1 - SYM_RATE_SMOOTH) * s->lambda + SYM_RATE_SMOOTH * sample
					  : sample;
		s->win_start = now;
		s->win_count = 0;
		s->cv = sym_shard_gap_cv(s);
		s->spread = sym_shard_spread(s, s->lambda);
		if (!s->gather.target) /* (lazy gathering drops by it never; policies read it) */
			s->target = sym_shard_target_for_rate(s, s->lambda, s->cv);
	}
	s->win_count++;
	return 0;
}

size_t sym_shard_gather(struct sym_shard *s, sym_time now, sym_drop_fn drop, void *ctx)
{
	struct sym_queue *q = &s->queue;
	for (;;) {
		size_t n = sym_queue_len(q);
		if (!n)
			return 0;
		sym_time budget = sym_queue_at(q, 0)->deadline - now;
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
				return n;
			why = SYM_DROP_EARLY;
		} else {
			return n;
		}
		struct sym_request *r = sym_queue_pop(q);
		s->dropped_since_batch++;
		s->version++;
		drop(ctx, r, why, now);
	}
}

int sym_le_fit(const sym_time *le, int maxb, size_t n, sym_time budget)
{
	int hi = n < (size_t)maxb ? (int)n : maxb;
	if (hi < 1 || le[1] > budget)
		return 0;
	int lo = 1;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (le[mid] <= budget)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* The policy's view of a batch of b from the head of the queue (n queued). */
static sym_time policy_exec(const struct sym_shard *s, sym_time now, const struct sym_policy *pol, int k,
			    const struct sym_waits *w, const struct sym_request *head, int b, size_t n)
{
	struct sym_cand_view v = {
		.now = now,
		.deadline = head->deadline,
		.head_arrival = head->arrival,
		.size = b,
		.max_batch = s->maxb_k[k],
		.queued = n,
		.le = s->lek[k],
		.slo = s->slo,
		.lambda = s->lambda,
		.beta_ms = s->prof_k[k]->beta_ms,
		.cv = s->cv,
		.target = s->target,
		.spread = s->spread,
		.wait = w ? w->wait : 0,
		.wait_safe = w ? w->safe : 0,
	};
	sym_time exec = pol->ops->exec(pol, &v);
	return exec > now ? exec : now;
}

void sym_shard_cand_kind(const struct sym_shard *s, sym_time now, const struct sym_policy *pol, int k,
			 const struct sym_waits *w, struct sym_cand *out)
{
	const struct sym_queue *q = &s->queue;
	size_t n = sym_queue_len(q);
	const struct sym_request *head = n && !(s->kinds_off >> k & 1) ? sym_queue_at(q, 0) : NULL;
	int b = head ? sym_le_fit(s->lek[k], s->maxb_k[k], n, head->deadline - now) : 0;
	if (!b) {
		*out = (struct sym_cand){ 0, SYM_TIME_NEVER, SYM_TIME_NEVER, SYM_TIME_NEVER };
		return;
	}
	out->size = b;
	out->deadline = head->deadline;
	out->latest = head->deadline - s->lek[k][b];
	out->exec = pol && pol->ops->exec ? policy_exec(s, now, pol, k, w, head, b, n) : now;
}

void sym_shard_project(const struct sym_shard *s, sym_time now, const struct sym_policy *pol, int k,
		       const struct sym_waits *w, const struct sym_cand *cd, sym_time *f, sym_time *p)
{
	*f = cd->exec;
	*p = s->lek[k][cd->size];
	if (cd->exec <= now || !(s->lambda > 0) || !pol || !pol->ops->exec)
		return;
	const struct sym_request *head = sym_queue_at(&s->queue, 0);
	/* the largest batch that can still meet the head's deadline */
	int most = sym_le_fit(s->lek[k], s->maxb_k[k], (size_t)s->maxb_k[k], head->deadline - now);
	int b = cd->size;
	sym_time e = cd->exec;
	for (int it = 0; it < 3; it++) { /* (it converges in one or two) */
		double grow = s->lambda * sym_to_s(e - now);
		int nb = cd->size + (grow < most ? (int)grow : most);
		if (nb > most)
			nb = most;
		if (nb < cd->size)
			nb = cd->size;
		sym_time ne = policy_exec(s, now, pol, k, w, head, nb, (size_t)nb);
		b = nb;
		if (ne == e)
			break;
		e = ne;
	}
	*f = e;
	*p = s->lek[k][b];
}

void sym_shard_candidate(struct sym_shard *s, sym_time now, const struct sym_policy *pol,
			 sym_drop_fn drop, void *ctx, struct sym_cand *out)
{
	sym_shard_gather(s, now, drop, ctx);
	sym_shard_cand_kind(s, now, pol, 0, NULL, out);
}

void sym_shard_take(struct sym_shard *s, int n, struct sym_request **out)
{
	sym_queue_pop_n(&s->queue, (size_t)n, out);
	s->dropped_since_batch = 0;
	s->version++;
}
