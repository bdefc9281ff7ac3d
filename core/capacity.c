#include "core/capacity.h"

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
