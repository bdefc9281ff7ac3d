#include "core/capacity.h"

#include <math.h>
#include <stdbool.h>

int sym_staggered_batch(const sym_time *lat, int max_batch, sym_time slo, double n)
{
	/* lat is non-decreasing: bisect for the last b that fits */
	double k = 1 + 1 / n;
	int lo = 0, hi = max_batch;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (k * (double)lat[mid] <= (double)slo)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static bool enough(const sym_time *lat, int max_batch, sym_time slo, double rate, int n, int *batch)
{
	int b = sym_staggered_batch(lat, max_batch, slo, n);
	*batch = b;
	return b > 0 && (double)n * b / sym_to_s(lat[b]) >= rate;
}

int sym_staggered_min_gpus(const sym_time *lat, int max_batch, sym_time slo, double rate, int max_gpus,
			   int *batch)
{
	int b;
	*batch = 0;
	if (max_batch < 1 || max_gpus < 1 || lat[1] > slo)
		return -1;
	/* N * b(N) / l(b(N)) grows with N: double until enough, then bisect
	 * (lo is never enough, hi always is) */
	int lo = 0, hi = 1;
	while (!enough(lat, max_batch, slo, rate, hi, &b)) {
		if (hi >= max_gpus)
			return -1;
		lo = hi;
		hi = hi > max_gpus / 2 ? max_gpus : hi * 2;
	}
	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2;
		if (enough(lat, max_batch, slo, rate, mid, &b))
			hi = mid;
		else
			lo = mid;
	}
	enough(lat, max_batch, slo, rate, hi, &b);
	*batch = b;
	return hi;
}

static double kind_gpus(const sym_time *lat, const sym_time *le, int maxb, sym_time slo, double rate)
{
	if (!le)
		le = lat;
	if (maxb < 1 || le[1] > slo)
		return HUGE_VAL;
	/* (b - 1)/r + le(b) grows with b: bisect for the last b that fits */
	int lo = 1, hi = maxb;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if ((double)(mid - 1) / rate * 1e9 + (double)le[mid] <= (double)slo)
			lo = mid;
		else
			hi = mid - 1;
	}
	return rate * sym_to_s(lat[lo]) / lo;
}

double sym_bound_gpus(const struct sym_bound_model *m, double rate)
{
	if (!(rate > 0))
		return 0;
	double best = HUGE_VAL;
	for (int k = 0; k < m->nkinds && k < SYM_BOUND_KINDS; k++) {
		double g = kind_gpus(m->lat[k], m->le[k], m->max_batch[k], m->slo, rate);
		best = g < best ? g : best;
	}
	return best;
}

static double gpus_at(const struct sym_bound_model *ms, int n, double rate)
{
	double g = 0;
	for (int i = 0; i < n && g < HUGE_VAL; i++)
		if (ms[i].share > 0)
			g += sym_bound_gpus(&ms[i], ms[i].share * rate);
	return g;
}

double sym_multi_bound(const struct sym_bound_model *models, int n, double gpus)
{
	if (n < 1 || !(gpus > 0) || gpus_at(models, n, 1e-9) > gpus)
		return 0;
	double lo = 0, hi = 1;
	while (gpus_at(models, n, hi) <= gpus) {
		lo = hi;
		hi *= 2;
		if (hi > 1e15)
			return lo;
	}
	while (hi - lo > 1e-6 * hi) {
		double mid = (lo + hi) / 2;
		if (gpus_at(models, n, mid) <= gpus)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}
