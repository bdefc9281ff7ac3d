/* core/hist.h - log-linear histogram of non-negative durations (ns).
 *
 * Values below 2^SYM_HIST_SUB_BITS ns are counted exactly; above, each power
 * of two is split into 2^SYM_HIST_SUB_BITS equal buckets, so a reported
 * quantile is within 2^-SYM_HIST_SUB_BITS (0.4%) of the true value. Values
 * beyond 2^SYM_HIST_MAX_BITS ns (about 73 minutes) land in the last bucket.
 * Recording is O(1) and allocation-free once the counts exist (allocated on
 * the first record). Exact count, sum, min and max are kept beside.
 */
#ifndef SYM_HIST_H
#define SYM_HIST_H

#include <stdint.h>

#define SYM_HIST_SUB_BITS 8
#define SYM_HIST_MAX_BITS 42
#define SYM_HIST_BUCKETS (((SYM_HIST_MAX_BITS - SYM_HIST_SUB_BITS) + 2) << SYM_HIST_SUB_BITS)

struct sym_hist {
	uint32_t *counts; /* SYM_HIST_BUCKETS, NULL until the first record */
	uint64_t n;
	double sum;
	int64_t min, max;
};

void sym_hist_init(struct sym_hist *h);
void sym_hist_finish(struct sym_hist *h);

/* Records v (negative values count as 0). Returns 0 or -ENOMEM. */
int sym_hist_record(struct sym_hist *h, int64_t v);

/* Adds every count of src to dst. Returns 0 or -ENOMEM. */
int sym_hist_merge(struct sym_hist *dst, const struct sym_hist *src);

/* The q-quantile (0 <= q <= 1), i.e. the smallest recorded value v such that
 * at least q*n values are <= v, to the bucket's precision (its midpoint,
 * clamped to [min, max]). 0 when empty. */
int64_t sym_hist_quantile(const struct sym_hist *h, double q);

static inline double sym_hist_mean(const struct sym_hist *h) { return h->n ? h->sum / h->n : 0; }

/* Bucket arithmetic, exposed for tests. */
int sym_hist_bucket(int64_t v);
int64_t sym_hist_bucket_low(int b);
int64_t sym_hist_bucket_high(int b); /* exclusive */

#endif
