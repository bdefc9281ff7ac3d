#include "core/profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static int alloc_table(struct sym_profile *p, const char *name, int max_batch)
{
	memset(p, 0, sizeof(*p));
	if (max_batch < 1 || max_batch > SYM_PROFILE_BATCH_LIMIT)
		return -EINVAL;
	p->lat = calloc((size_t)max_batch + 1, sizeof(*p->lat));
	if (!p->lat)
		return -ENOMEM;
	snprintf(p->name, sizeof(p->name), "%s", name ? name : "");
	p->max_batch = max_batch;
	p->static_mb = -1;
	p->dynamic_mb = -1;
	return 0;
}

int sym_profile_init_linear(struct sym_profile *p, const char *name,
			    double alpha_ms, double beta_ms, int max_batch)
{
	if (!isfinite(alpha_ms) || !isfinite(beta_ms) || alpha_ms < 0 || beta_ms < 0 ||
	    alpha_ms + beta_ms <= 0) {
		memset(p, 0, sizeof(*p));
		return -EINVAL;
	}
	int err = alloc_table(p, name, max_batch);
	if (err)
		return err;
	p->linear = true;
	p->alpha_ms = alpha_ms;
	p->beta_ms = beta_ms;
	for (int b = 1; b <= max_batch; b++)
		p->lat[b] = sym_ms(alpha_ms * b + beta_ms);
	return 0;
}

int sym_profile_init_table(struct sym_profile *p, const char *name,
			   const double *lat_ms, int n)
{
	if (!lat_ms || n < 1) {
		memset(p, 0, sizeof(*p));
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		if (!isfinite(lat_ms[i]) || lat_ms[i] <= 0 || (i > 0 && lat_ms[i] < lat_ms[i - 1])) {
			memset(p, 0, sizeof(*p));
			return -EINVAL;
		}
	}
	int err = alloc_table(p, name, n);
	if (err)
		return err;
	p->linear = false;
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (int b = 1; b <= n; b++) {
		p->lat[b] = sym_ms(lat_ms[b - 1]);
		sx += b;
		sy += lat_ms[b - 1];
		sxx += (double)b * b;
		sxy += b * lat_ms[b - 1];
	}
	double den = n * sxx - sx * sx;
	p->alpha_ms = den > 0 ? (n * sxy - sx * sy) / den : 0;
	p->beta_ms = (sy - p->alpha_ms * sx) / n;
	return 0;
}

int sym_profile_copy(struct sym_profile *dst, const struct sym_profile *src)
{
	*dst = *src;
	dst->lat = malloc(((size_t)src->max_batch + 1) * sizeof(*dst->lat));
	if (!dst->lat) {
		memset(dst, 0, sizeof(*dst));
		return -ENOMEM;
	}
	memcpy(dst->lat, src->lat, ((size_t)src->max_batch + 1) * sizeof(*dst->lat));
	return 0;
}

void sym_profile_finish(struct sym_profile *p)
{
	if (!p)
		return;
	free(p->lat);
	p->lat = NULL;
}

int sym_profile_max_batch_within(const struct sym_profile *p, sym_time budget)
{
	/* lat is non-decreasing: binary search for the last entry <= budget. */
	int lo = 0, hi = p->max_batch;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (p->lat[mid] <= budget)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

int sym_profile_linear_batch_limit(double alpha_ms, double beta_ms, double slo_ms)
{
	/* Decided on the same nanosecond values the latency table holds, so that
	 * an SLO written equal to l(b) allows b whatever the binary rounding. */
	sym_time slo = sym_ms(slo_ms);
	if (sym_ms(alpha_ms + beta_ms) > slo)
		return 0;
	if (alpha_ms <= 0)
		return SYM_PROFILE_BATCH_LIMIT;
	double guess = floor((slo_ms - beta_ms) / alpha_ms);
	int b = guess < 1 ? 1 : guess > SYM_PROFILE_BATCH_LIMIT ? SYM_PROFILE_BATCH_LIMIT : (int)guess;
	while (b > 1 && sym_ms(alpha_ms * b + beta_ms) > slo)
		b--;
	while (b < SYM_PROFILE_BATCH_LIMIT && sym_ms(alpha_ms * (b + 1) + beta_ms) <= slo)
		b++;
	return b;
}
