/* Histogram tests: bucket boundaries, quantile precision, merge. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "core/hist.h"

static void test_buckets(void **state)
{
	(void)state;
	for (int64_t v = 0; v < 256; v++)
		assert_int_equal(sym_hist_bucket(v), v);
	/* every bucket covers [low, high) and consecutive buckets tile the line */
	for (int b = 0; b < SYM_HIST_BUCKETS - 1; b++) {
		assert_int_equal(sym_hist_bucket_high(b), sym_hist_bucket_low(b + 1));
		assert_int_equal(sym_hist_bucket(sym_hist_bucket_low(b)), b);
		assert_int_equal(sym_hist_bucket(sym_hist_bucket_high(b) - 1), b);
	}
	assert_int_equal(sym_hist_bucket(-5), 0);
	assert_int_equal(sym_hist_bucket(INT64_MAX), SYM_HIST_BUCKETS - 1);
}

static void test_quantiles(void **state)
{
	(void)state;
	struct sym_hist h;
	sym_hist_init(&h);
	assert_int_equal(sym_hist_quantile(&h, 0.5), 0);
	/* 1..100000 us in ns: p50 = 50 ms, p99 = 99 ms within 0.4% */
	for (int i = 1; i <= 100000; i++)
		assert_int_equal(sym_hist_record(&h, (int64_t)i * 1000), 0);
	assert_int_equal(h.n, 100000);
	assert_int_equal(h.min, 1000);
	assert_int_equal(h.max, 100000000);
	double p50 = (double)sym_hist_quantile(&h, 0.5), p99 = (double)sym_hist_quantile(&h, 0.99);
	assert_true(fabs(p50 - 50e6) / 50e6 < 0.004);
	assert_true(fabs(p99 - 99e6) / 99e6 < 0.004);
	assert_int_equal(sym_hist_quantile(&h, 0), 1000);
	assert_int_equal(sym_hist_quantile(&h, 1), 100000000);
	assert_true(fabs(sym_hist_mean(&h) - 50000.5e3) < 1);
	/* merge doubles every count */
	struct sym_hist m;
	sym_hist_init(&m);
	assert_int_equal(sym_hist_merge(&m, &h), 0);
	assert_int_equal(sym_hist_merge(&m, &h), 0);
	assert_int_equal(m.n, 200000);
	assert_int_equal(sym_hist_quantile(&m, 0.5), sym_hist_quantile(&h, 0.5));
	sym_hist_finish(&h);
	sym_hist_finish(&m);
	sym_hist_finish(NULL);
}

static void test_exact_small(void **state)
{
	(void)state;
	struct sym_hist h;
	sym_hist_init(&h);
	int64_t v[5] = { 7, 3, 200, 3, 9 };
	for (int i = 0; i < 5; i++)
		sym_hist_record(&h, v[i]);
	assert_int_equal(sym_hist_quantile(&h, 0.2), 3);
	assert_int_equal(sym_hist_quantile(&h, 0.4), 3);
	assert_int_equal(sym_hist_quantile(&h, 0.6), 7);
	assert_int_equal(sym_hist_quantile(&h, 0.8), 9);
	assert_int_equal(sym_hist_quantile(&h, 0.99), 200);
	sym_hist_finish(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_quantiles),
		cmocka_unit_test(test_exact_small),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
