#include "core/hist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define SUB (1 << SYM_HIST_SUB_BITS)

void sym_hist_init(struct sym_hist *h)
{
	memset(h, 0, sizeof(*h));
}

void sym_hist_finish(struct sym_hist *h)
{
	if (!h)
		return;
	free(h->counts);
	memset(h, 0, sizeof(*h));
}

int sym_hist_bucket(int64_t v)
{
	if (v < SUB)
		return v < 0 ? 0 : (int)v;
	int k = 63 - __builtin_clzll((unsigned long long)v); /* 2^k <= v < 2^(k+1), k >= SUB_BITS */
	if (k > SYM_HIST_MAX_BITS)
		return SYM_HIST_BUCKETS - 1;
	int shift = k - SYM_HIST_SUB_BITS;
	return SUB + shift * SUB + (int)((v >> shift) - SUB);
}

int64_t sym_hist_bucket_low(int b)
{
	if (b < SUB)
		return b;
	int shift = (b - SUB) / SUB;
	int sub = (b - SUB) % SUB;
	return (int64_t)(SUB + sub) << shift;
}

int64_t sym_hist_bucket_high(int b)
{
	if (b < SUB)
		return b + 1;
	int shift = (b - SUB) / SUB;
	return sym_hist_bucket_low(b) + ((int64_t)1 << shift);
}

int sym_hist_record(struct sym_hist *h, int64_t v)
{
	if (!h->counts) {
		h->counts = calloc(SYM_HIST_BUCKETS, sizeof(*h->counts));
		if (!h->counts)
			return -ENOMEM;
	}
	if (v < 0)
		v = 0;
	h->counts[sym_hist_bucket(v)]++;
	if (!h->n || v < h->min)
		h->min = v;
	if (!h->n || v > h->max)
		h->max = v;
	h->n++;
	h->sum += (double)v;
	return 0;
}

int sym_hist_merge(struct sym_hist *dst, const struct sym_hist *src)
{
	if (!src->n)
		return 0;
	if (!dst->counts) {
		dst->counts = calloc(SYM_HIST_BUCKETS, sizeof(*dst->counts));
		if (!dst->counts)
			return -ENOMEM;
	}
	for (int b = 0; b < SYM_HIST_BUCKETS; b++)
		dst->counts[b] += src->counts[b];
	if (!dst->n || src->min < dst->min)
		dst->min = src->min;
	if (!dst->n || src->max > dst->max)
		dst->max = src->max;
	dst->n += src->n;
	dst->sum += src->sum;
	return 0;
}

int64_t sym_hist_quantile(const struct sym_hist *h, double q)
{
	if (!h->n)
		return 0;
	if (q <= 0)
		return h->min;
	if (q >= 1)
		return h->max;
	uint64_t rank = (uint64_t)ceil(q * (double)h->n);
	if (rank < 1)
		rank = 1;
	uint64_t seen = 0;
	for (int b = 0; b < SYM_HIST_BUCKETS; b++) {
		seen += h->counts[b];
		if (seen >= rank) {
			int64_t lo = sym_hist_bucket_low(b), hi = sym_hist_bucket_high(b);
			int64_t v = b < SUB ? lo : lo + (hi - lo) / 2;
			if (v < h->min)
				v = h->min;
			if (v > h->max)
				v = h->max;
			return v;
		}
	}
	return h->max;
}
