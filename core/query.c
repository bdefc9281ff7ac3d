#include "core/query.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR(rc, ...) (snprintf(err, errlen, __VA_ARGS__), (rc))

static const char *stage_name(const struct sym_query_stage *s, int v, char *buf, size_t len)
{
	if (s->name)
		return s->name;
	snprintf(buf, len, "stage %d", v);
	return buf;
}

/* The tree, and each stage's rate. */
static int check(const struct sym_query_stage *st, int n, double rate, double slo_ms, double *rates, char *err,
		 size_t errlen)
{
	if (n < 1 || n > SYM_QUERY_MAX_STAGES)
		return ERR(-EINVAL, "query: %d stages (1 to %d)", n, SYM_QUERY_MAX_STAGES);
	if (!isfinite(rate) || rate <= 0)
		return ERR(-EINVAL, "query: rate %g (expected a positive number of queries per second)", rate);
	if (!isfinite(slo_ms) || slo_ms <= 0)
		return ERR(-EINVAL, "query: SLO %g ms (expected a positive number)", slo_ms);
	for (int v = 0; v < n; v++) {
		const struct sym_query_stage *s = &st[v];
		char nb[32];
		const char *nm = stage_name(s, v, nb, sizeof(nb));
		if (v == 0 && s->parent != -1)
			return ERR(-EINVAL, "query: stage 0 (%s) is the root: its parent must be -1", nm);
		if (v > 0 && (s->parent < 0 || s->parent >= v))
			return ERR(-EINVAL, "query: %s: parent %d is not a stage before it (0..%d)", nm, s->parent, v - 1);
		if (!isfinite(s->gamma) || s->gamma < 0)
			return ERR(-EINVAL, "query: %s: fan-out gamma %g (expected >= 0)", nm, s->gamma);
		if (!isfinite(s->lat_factor) || s->lat_factor < 0 || s->lat_factor > 100)
			return ERR(-EINVAL, "query: %s: latency factor %g (expected 0 to 100)", nm, s->lat_factor);
		if (!s->profile) {
			if (s->npoints < 1 || !s->lat_ms || !s->tput)
				return ERR(-EINVAL, "query: %s has neither a profile nor (latency, throughput) points", nm);
			for (int i = 0; i < s->npoints; i++)
				if (!isfinite(s->lat_ms[i]) || s->lat_ms[i] <= 0 || !isfinite(s->tput[i]) || s->tput[i] <= 0)
					return ERR(-EINVAL, "query: %s: point %d (%g ms, %g req/s) is not positive", nm, i,
						   s->lat_ms[i], s->tput[i]);
		}
		rates[v] = (v ? rates[s->parent] : rate) * s->gamma;
	}
	return 0;
}

/* The best throughput of stage s within budget_ms: its batch (or point) in
 * *which, its latency in *lat; 0 when nothing fits. */
static double best_within(const struct sym_query_stage *s, double budget_ms, int *which, double *lat)
{
	double best = 0;
	if (s->lat_factor > 0)
		budget_ms /= s->lat_factor;
	*which = -1;
	*lat = 0;
	if (s->profile) {
		const struct sym_profile *p = s->profile;
		for (int b = 1; b <= p->max_batch; b++) {
			double l = (double)p->lat[b] / 1e6;
			if (l <= budget_ms * (1 + 1e-12) && b / l * 1e3 > best) {
				best = b / l * 1e3;
				*which = b;
				*lat = l;
			}
		}
	} else {
		for (int i = 0; i < s->npoints; i++)
			if (s->lat_ms[i] <= budget_ms * (1 + 1e-12) && s->tput[i] > best) {
				best = s->tput[i];
				*which = i;
				*lat = s->lat_ms[i];
			}
	}
	return best;
}

static void fill(const struct sym_query_stage *s, double rate, double budget_ms, struct sym_query_split *o)
{
	int which;
	double lat;
	double t = best_within(s, budget_ms, &which, &lat);
	*o = (struct sym_query_split){ .budget_ms = budget_ms, .batch = s->profile ? which : 0, .lat_ms = lat,
				       .rate = rate, .tput = t, .gpus = rate > 0 ? rate / t : 0 };
}

int sym_query_split(const struct sym_query_stage *st, int n, double rate, double slo_ms, double eps_ms,
		    struct sym_query_split *out, double *total, char *err, size_t errlen)
{
	double rates[SYM_QUERY_MAX_STAGES];
	int rc = check(st, n, rate, slo_ms, rates, err, errlen);
	if (rc)
		return rc;
	if (!isfinite(eps_ms) || eps_ms <= 0)
		return ERR(-EINVAL, "query: grid step %g ms (expected a positive number)", eps_ms);
	double steps = floor(slo_ms / eps_ms + 1e-9);
	if (steps < 1 || steps > SYM_QUERY_MAX_STEPS)
		return ERR(-EINVAL, "query: SLO %g ms over a grid of %g ms is %.0f steps (1 to %d)", slo_ms, eps_ms, steps,
			   SYM_QUERY_MAX_STEPS);
	int T = (int)steps;
	size_t cells = (size_t)n * (size_t)(T + 1);
	double *cost = malloc(cells * sizeof(double)), *f = calloc(cells, sizeof(double));
	double *kids = calloc((size_t)(T + 1), sizeof(double));
	int *pick = malloc(cells * sizeof(int));
	if (!cost || !f || !kids || !pick) {
		rc = ERR(-ENOMEM, "out of memory");
		goto out;
	}
	/* each stage's GPUs at each budget: R / T(k), infinite when nothing fits */
	for (int v = 0; v < n; v++)
		for (int k = 0; k <= T; k++) {
			int which;
			double lat, t = best_within(&st[v], k * eps_ms, &which, &lat);
			cost[(size_t)v * (T + 1) + k] = rates[v] == 0 ? 0 : t > 0 ? rates[v] / t : INFINITY;
		}
	/* f(v, t), children first (a child comes after its parent) */
	for (int v = n - 1; v >= 0; v--) {
		for (int t = 0; t <= T; t++) {
			kids[t] = 0;
			for (int c = v + 1; c < n; c++)
				if (st[c].parent == v)
					kids[t] += f[(size_t)c * (T + 1) + t];
		}
		for (int t = 0; t <= T; t++) {
			double best = INFINITY;
			int bk = -1;
			for (int k = 0; k <= t; k++) {
				double x = cost[(size_t)v * (T + 1) + k] + kids[t - k];
				if (x < best * (1 - 1e-12)) { /* the smallest budget of equals */
					best = x;
					bk = k;
				}
			}
			f[(size_t)v * (T + 1) + t] = best;
			pick[(size_t)v * (T + 1) + t] = bk;
		}
	}
	if (!isfinite(f[T])) {
		rc = ERR(-ERANGE, "query: no split of %g ms lets every stage on each path run a batch (a path's "
				  "smallest batches need more)", slo_ms);
		goto out;
	}
	/* the budgets, top down: a stage has what its parent left */
	int left[SYM_QUERY_MAX_STAGES];
	*total = 0;
	for (int v = 0; v < n; v++) {
		int t = v ? left[st[v].parent] : T;
		int k = pick[(size_t)v * (T + 1) + t];
		left[v] = t - k;
		fill(&st[v], rates[v], k * eps_ms, &out[v]);
		*total += out[v].gpus;
	}
out:
	free(cost);
	free(f);
	free(kids);
	free(pick);
	return rc;
}

int sym_query_eval(const struct sym_query_stage *st, int n, double rate, double slo_ms, const double *budget_ms,
		   struct sym_query_split *out, double *total, char *err, size_t errlen)
{
	double rates[SYM_QUERY_MAX_STAGES], used[SYM_QUERY_MAX_STAGES];
	int rc = check(st, n, rate, slo_ms, rates, err, errlen);
	if (rc)
		return rc;
	*total = 0;
	for (int v = 0; v < n; v++) {
		char nb[32];
		const char *nm = stage_name(&st[v], v, nb, sizeof(nb));
		if (!isfinite(budget_ms[v]) || budget_ms[v] <= 0)
			return ERR(-EINVAL, "query: %s: budget %g ms (expected a positive number)", nm, budget_ms[v]);
		used[v] = budget_ms[v] + (v ? used[st[v].parent] : 0);
		if (used[v] > slo_ms * (1 + 1e-9))
			return ERR(-ERANGE, "query: the path to %s takes %g ms of budgets, over the SLO of %g ms", nm,
				   used[v], slo_ms);
		fill(&st[v], rates[v], budget_ms[v], &out[v]);
		if (rates[v] > 0 && out[v].tput <= 0)
			return ERR(-ERANGE, "query: %s cannot run a batch within its budget, %g ms", nm, budget_ms[v]);
		*total += out[v].gpus;
	}
	return 0;
}

int sym_query_even(const struct sym_query_stage *st, int n, double rate, double slo_ms,
		   struct sym_query_split *out, double *total, char *err, size_t errlen)
{
	double rates[SYM_QUERY_MAX_STAGES];
	int rc = check(st, n, rate, slo_ms, rates, err, errlen);
	if (rc)
		return rc;
	int depth[SYM_QUERY_MAX_STAGES], dmax = 0;
	double budget[SYM_QUERY_MAX_STAGES];
	for (int v = 0; v < n; v++) {
		depth[v] = v ? depth[st[v].parent] + 1 : 1;
		dmax = depth[v] > dmax ? depth[v] : dmax;
	}
	for (int v = 0; v < n; v++)
		budget[v] = slo_ms / dmax;
	for (int v = 0; v < n; v++) {
		fill(&st[v], rates[v], budget[v], &out[v]);
		if (rates[v] > 0 && out[v].tput <= 0) {
			char nb[32];
			return ERR(-ERANGE, "query: %s cannot run a batch within its even share, %g ms",
				   stage_name(&st[v], v, nb, sizeof(nb)), budget[v]);
		}
	}
	return sym_query_eval(st, n, rate, slo_ms, budget, out, total, err, errlen);
}
