/* tests/test_workloads.c - arrival processes, popularity and rate tables. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "workloads/workload.h"

#define SEED 20240611ULL


static struct sym_arrival_spec spec_of(const char *text)
{
	struct sym_arrival_spec s;
	assert_int_equal(sym_arrival_parse(text, &s), 0);
	return s;
}

/* ---- gap statistics ----------------------------------------------------- */

/* Draws n arrivals at a constant rate and returns the mean and CV of the gaps
 * (in ns), checking times never go backwards. */
static void gap_stats(const char *spec_text, double rate, size_t n, uint64_t stream,
		      double *mean, double *cv)
{
	struct sym_arrival_spec spec = spec_of(spec_text);
	struct sym_arrivals a;
	double sum = 0, sum2 = 0;
	sym_time prev = 0;

	assert_int_equal(sym_arrivals_init(&a, &spec, rate, NULL, 0, SEED, stream), 0);
	for (size_t i = 0; i < n; i++) {
		sym_time t = sym_arrivals_next(&a);
		double g;
		assert_true(t >= prev);
		assert_true(t != SYM_TIME_NEVER);
		g = (double)(t - prev);
		sum += g;
		sum2 += g * g;
		prev = t;
	}
	sym_arrivals_finish(&a);
	*mean = sum / (double)n;
	*cv = sqrt(fmax(sum2 / (double)n - *mean * *mean, 0)) / *mean;
}

/* 1M gaps: the standard error of the mean is CV/1000 (0.2% for K = 0.25),
 * so the 1% bound is five standard errors or more. */
#define NGAPS 1000000

static void check_renewal(const char *text, double k)
{
	double mean, cv;
	char what[64];

	gap_stats(text, 1000.0, NGAPS, 7, &mean, &cv);
	snprintf(what, sizeof(what), "%s mean gap (ns)", text);
	assert_near(mean, 1e6, 0.01 * 1e6, what);
	snprintf(what, sizeof(what), "%s CV", text);
	assert_near(cv, 1.0 / sqrt(k), 0.03 / sqrt(k), what);
}

static void test_poisson_gaps(void **state)
{
	(void)state;
	check_renewal("poisson", 1.0);
}

static void test_gamma_gaps(void **state)
{
	(void)state;
	check_renewal("gamma:0.25", 0.25);
	check_renewal("gamma:1", 1.0);
	check_renewal("gamma:4", 4.0);
}

static void test_uniform_gaps(void **state)
{
	struct sym_arrival_spec spec = spec_of("uniform");
	struct sym_arrivals a;
	double mean, cv;

	(void)state;
	assert_int_equal(sym_arrivals_init(&a, &spec, 1000.0, NULL, 0, SEED, 0), 0);
	for (sym_time i = 1; i <= 200000; i++)
		assert_int_equal(sym_arrivals_next(&a), i * SYM_MS);
	sym_arrivals_finish(&a);

	gap_stats("uniform", 1000.0, 1000, 0, &mean, &cv);
	assert_near(mean, 1e6, 0, "uniform mean");
	assert_near(cv, 0, 0, "uniform cv");

	/* A rate whose gap is not a whole number of ns: the n-th arrival stays
	 * close to n/3 s. Rounding each gap to 333333333 ns would drift by
	 * 10 us over 30000 arrivals; the double position only accumulates
	 * floating-point error (a few ns at 10^4 s). */
	assert_int_equal(sym_arrivals_init(&a, &spec, 3.0, NULL, 0, SEED, 0), 0);
	for (int64_t i = 1; i <= 30000; i++)
		assert_true(llabs(sym_arrivals_next(&a) - (i * SYM_S + 1) / 3) <= 100);
	sym_arrivals_finish(&a);
}

/* ---- determinism and common random numbers ------------------------------ */

static void draw(const char *text, double rate, uint64_t seed, uint64_t stream,
		 sym_time *out, size_t n)
{
	struct sym_arrival_spec spec = spec_of(text);
	struct sym_arrivals a;

	assert_int_equal(sym_arrivals_init(&a, &spec, rate, NULL, 0, seed, stream), 0);
	for (size_t i = 0; i < n; i++)
		out[i] = sym_arrivals_next(&a);
	sym_arrivals_finish(&a);
}

#define NDET 10000

static void test_determinism(void **state)
{
	static sym_time x[NDET], y[NDET];
	const char *kinds[] = { "poisson", "gamma:0.5" };

	(void)state;
	for (size_t k = 0; k < 2; k++) {
		size_t same = 0;

		draw(kinds[k], 100.0, SEED, 3, x, NDET);
		draw(kinds[k], 100.0, SEED, 3, y, NDET);
		assert_memory_equal(x, y, sizeof(x));

		draw(kinds[k], 100.0, SEED, 4, y, NDET);
		for (size_t i = 0; i < NDET; i++)
			same += x[i] == y[i];
		assert_true(same < 10);

		draw(kinds[k], 100.0, SEED + 1, 3, y, NDET);
		same = 0;
		for (size_t i = 0; i < NDET; i++)
			same += x[i] == y[i];
		assert_true(same < 10);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void test_seed_stream(void **state)
{
	static uint64_t v[1001];
	const uint64_t seeds[] = { 0, 1, SEED, UINT64_MAX };

	(void)state;
	for (size_t s = 0; s < 4; s++) {
		for (uint64_t i = 0; i <= 1000; i++) {
			v[i] = sym_seed_stream(seeds[s], i);
			assert_true(v[i] == sym_seed_stream(seeds[s], i));
		}
		qsort(v, 1001, sizeof(v[0]), cmp_u64);
		for (size_t i = 1; i <= 1000; i++)
			assert_true(v[i] != v[i - 1]);
	}
	assert_true(sym_seed_stream(1, 0) != sym_seed_stream(2, 0));
	assert_true(sym_seed_stream(0, 1) != sym_seed_stream(1, 0));
}

static void test_common_random_numbers(void **state)
{
	static sym_time x[NDET], y[NDET];
	const char *kinds[] = { "poisson", "gamma:0.5", "gamma:3", "uniform" };

	(void)state;
	for (size_t k = 0; k < 4; k++) {
		draw(kinds[k], 250.0, SEED, 9, x, NDET);
		draw(kinds[k], 500.0, SEED, 9, y, NDET);
		for (size_t i = 0; i < NDET; i++)
			assert_true(llabs(x[i] - 2 * y[i]) <= 1);
	}
}

static void test_zero_rate(void **state)
{
	struct sym_arrival_spec spec = spec_of("poisson");
	struct sym_rate_segment zero[2] = { { SYM_S, 0 }, { SYM_S, 0 } };
	struct sym_rate_segment one[1] = { { SYM_S, 100 } };
	struct sym_arrivals a;

	(void)state;
	assert_int_equal(sym_arrivals_init(&a, &spec, 0.0, NULL, 0, SEED, 0), 0);
	for (int i = 0; i < 3; i++)
		assert_true(sym_arrivals_next(&a) == SYM_TIME_NEVER);
	sym_arrivals_finish(&a);

	assert_int_equal(sym_arrivals_init(&a, &spec, 1.0, zero, 2, SEED, 0), 0);
	assert_true(sym_arrivals_next(&a) == SYM_TIME_NEVER);
	sym_arrivals_finish(&a);

	/* scale 0 silences a non-zero schedule */
	assert_int_equal(sym_arrivals_init(&a, &spec, 0.0, one, 1, SEED, 0), 0);
	assert_true(sym_arrivals_next(&a) == SYM_TIME_NEVER);
	sym_arrivals_finish(&a);
}

/* ---- schedules ---------------------------------------------------------- */

#define NSTREAMS 50

/* Counts arrivals per second of the schedule [(1s,1000),(1s,0),(1s,3000)]
 * over NSTREAMS streams and checks each second's mean count within 5%. */
static void check_schedule(const char *text)
{
	const struct sym_rate_segment seg[3] = {
		{ SYM_S, 1000 }, { SYM_S, 0 }, { SYM_S, 3000 },
	};
	struct sym_arrival_spec spec = spec_of(text);
	double count[3] = { 0, 0, 0 };

	for (uint64_t s = 0; s < NSTREAMS; s++) {
		struct sym_arrivals a;
		sym_time t, prev = 0;

		assert_int_equal(sym_arrivals_init(&a, &spec, 1.0, seg, 3, SEED, s), 0);
		while ((t = sym_arrivals_next(&a)) != SYM_TIME_NEVER) {
			assert_true(t >= prev);
			assert_true(t <= 3 * SYM_S);
			prev = t;
			count[t <= SYM_S ? 0 : t <= 2 * SYM_S ? 1 : 2]++;
		}
		/* stays ended */
		assert_true(sym_arrivals_next(&a) == SYM_TIME_NEVER);
		assert_true(sym_arrivals_next(&a) == SYM_TIME_NEVER);
		sym_arrivals_finish(&a);
	}
	assert_near(count[0] / NSTREAMS, 1000, 50, "second 0 count");
	assert_near(count[1], 0, 0, "second 1 count");
	assert_near(count[2] / NSTREAMS, 3000, 150, "second 2 count");
}

static void test_schedule_counts(void **state)
{
	(void)state;
	check_schedule("poisson");
	check_schedule("gamma:0.25");
	check_schedule("gamma:4");
	check_schedule("uniform");
}

/* Uniform gaps make the operational-time mapping exactly checkable: a gap
 * that straddles a boundary spends its remainder at the next segment's rate,
 * and a zero-rate segment is crossed in real time. */
static void test_schedule_mapping(void **state)
{
	struct sym_arrival_spec spec = spec_of("uniform");
	const struct sym_rate_segment seg[3] = {
		{ SYM_S, 1.5 }, { 2 * SYM_S, 0 }, { 10 * SYM_S, 1 },
	};
	const struct sym_rate_segment half[2] = {
		{ SYM_S / 2, 1000 }, { SYM_S / 2, 2000 },
	};
	struct sym_arrivals a;

	(void)state;
	/* scale 2: rates 3, 0, 2 per second */
	assert_int_equal(sym_arrivals_init(&a, &spec, 2.0, seg, 3, SEED, 0), 0);
	assert_int_equal(sym_arrivals_next(&a), 333333333);
	assert_int_equal(sym_arrivals_next(&a), 666666667);
	assert_int_equal(sym_arrivals_next(&a), 1000000000);
	/* op 4 is 1 unit into segment 2 (rate 2): 3 s + 0.5 s */
	assert_int_equal(sym_arrivals_next(&a), 3500000000);
	for (int i = 0; i < 19; i++)
		assert_int_equal(sym_arrivals_next(&a), 4000000000 + (sym_time)i * 500000000);
	assert_true(sym_arrivals_next(&a) == SYM_TIME_NEVER);
	sym_arrivals_finish(&a);

	/* scale 1: op 1 at 2/3 s, op 2 straddles into segment 2 with 0.5
	 * unit left at rate 1: 3.5 s */
	assert_int_equal(sym_arrivals_init(&a, &spec, 1.0, seg, 3, SEED, 0), 0);
	assert_int_equal(sym_arrivals_next(&a), 666666667);
	assert_int_equal(sym_arrivals_next(&a), 3500000000);
	assert_int_equal(sym_arrivals_next(&a), 4500000000);
	sym_arrivals_finish(&a);

	assert_int_equal(sym_arrivals_init(&a, &spec, 1.0, half, 2, SEED, 0), 0);
	for (sym_time k = 1; k <= 500; k++)
		assert_int_equal(sym_arrivals_next(&a), k * SYM_MS);
	for (sym_time k = 1; k <= 1000; k++)
		assert_int_equal(sym_arrivals_next(&a), 500 * SYM_MS + k * 500 * SYM_US);
	assert_true(sym_arrivals_next(&a) == SYM_TIME_NEVER);
	sym_arrivals_finish(&a);
}

/* The generator keeps its own copy of the segments. */
static void test_schedule_copied(void **state)
{
	struct sym_arrival_spec spec = spec_of("poisson");
	struct sym_rate_segment seg[2] = { { SYM_S, 100 }, { SYM_S, 300 } };
	struct sym_arrivals a, b;
	sym_time ta, tb;

	(void)state;
	assert_int_equal(sym_arrivals_init(&a, &spec, 1.0, seg, 2, SEED, 1), 0);
	assert_int_equal(sym_arrivals_init(&b, &spec, 1.0, seg, 2, SEED, 1), 0);
	seg[0].rate = 0;
	seg[1].duration = 1;
	do {
		ta = sym_arrivals_next(&a);
		tb = sym_arrivals_next(&b);
		assert_true(ta == tb);
	} while (ta != SYM_TIME_NEVER);
	sym_arrivals_finish(&a);
	sym_arrivals_finish(&b);
}

static void test_init_invalid(void **state)
{
	struct sym_arrival_spec ok = spec_of("poisson");
	struct sym_arrival_spec bad_shape[] = {
		{ SYM_ARRIVAL_GAMMA, 0 }, { SYM_ARRIVAL_GAMMA, -1 },
		{ SYM_ARRIVAL_GAMMA, NAN }, { SYM_ARRIVAL_GAMMA, INFINITY },
	};
	const double bad_rate[] = { -1, -1e-9, NAN, INFINITY, -INFINITY };
	const struct sym_rate_segment bad_seg[][1] = {
		{ { 0, 1 } }, { { -SYM_S, 1 } }, { { SYM_S, -1 } },
		{ { SYM_S, NAN } }, { { SYM_S, INFINITY } },
	};
	const struct sym_rate_segment overflow[2] = {
		{ INT64_MAX / 2 + 1, 1 }, { INT64_MAX / 2 + 1, 1 },
	};
	struct sym_arrivals a;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_shape) / sizeof(bad_shape[0]); i++) {
		assert_int_equal(sym_arrivals_init(&a, &bad_shape[i], 1.0, NULL, 0, SEED, 0), -EINVAL);
		sym_arrivals_finish(&a);
	}
	for (size_t i = 0; i < sizeof(bad_rate) / sizeof(bad_rate[0]); i++) {
		assert_int_equal(sym_arrivals_init(&a, &ok, bad_rate[i], NULL, 0, SEED, 0), -EINVAL);
		sym_arrivals_finish(&a);
	}
	for (size_t i = 0; i < sizeof(bad_seg) / sizeof(bad_seg[0]); i++) {
		assert_int_equal(sym_arrivals_init(&a, &ok, 1.0, bad_seg[i], 1, SEED, 0), -EINVAL);
		sym_arrivals_finish(&a);
	}
	assert_int_equal(sym_arrivals_init(&a, &ok, 1.0, NULL, 2, SEED, 0), -EINVAL);
	assert_int_equal(sym_arrivals_init(&a, &ok, 1.0, overflow, 2, SEED, 0), -EINVAL);
	sym_arrivals_finish(&a);

	/* finish accepts NULL and a zeroed object */
	sym_arrivals_finish(NULL);
	memset(&a, 0, sizeof(a));
	sym_arrivals_finish(&a);
}

/* ---- parsers ------------------------------------------------------------ */

static void test_arrival_parse(void **state)
{
	const char *bad[] = {
		"", "gamma", "gamma:", "gamma:abc", "gamma:-1", "gamma:0", "gamma:-0",
		"gamma:inf", "gamma:nan", "gamma:1x", "gamma: 1", "gamma:1 ",
		"gamma:1e999", "poisson2", "Poisson", " poisson", "poisson ",
		"uniform:1", "gamma::1", "exponential",
		/* outside what the simulator honours (SYM_GAMMA_SHAPE_MIN, _MAX) */
		"gamma:0.000999", "gamma:1e-8", "gamma:1e-300", "gamma:1000001",
	};
	struct sym_arrival_spec s;
	char buf[32];

	(void)state;
	assert_int_equal(sym_arrival_parse("gamma:0.5", &s), 0);
	assert_int_equal(s.kind, SYM_ARRIVAL_GAMMA);
	assert_near(s.shape, 0.5, 0, "shape");
	assert_string_equal(sym_arrival_format(&s, buf, sizeof(buf)), "gamma:0.5");

	assert_int_equal(sym_arrival_parse("gamma:0.001", &s), 0); /* the bounds themselves */
	assert_int_equal(sym_arrival_parse("gamma:1e6", &s), 0);
	assert_int_equal(sym_arrival_parse("gamma:4", &s), 0);
	assert_near(s.shape, 4, 0, "shape");
	assert_string_equal(sym_arrival_format(&s, buf, sizeof(buf)), "gamma:4");

	assert_int_equal(sym_arrival_parse("poisson", &s), 0);
	assert_int_equal(s.kind, SYM_ARRIVAL_POISSON);
	assert_near(s.shape, 1, 0, "poisson shape");
	assert_string_equal(sym_arrival_format(&s, buf, sizeof(buf)), "poisson");

	assert_int_equal(sym_arrival_parse("uniform", &s), 0);
	assert_int_equal(s.kind, SYM_ARRIVAL_UNIFORM);
	assert_string_equal(sym_arrival_format(&s, buf, sizeof(buf)), "uniform");

	/* truncation */
	s.kind = SYM_ARRIVAL_GAMMA;
	s.shape = 0.25;
	assert_string_equal(sym_arrival_format(&s, buf, 6), "gamma");

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s.kind = SYM_ARRIVAL_UNIFORM;
		s.shape = 42;
		if (sym_arrival_parse(bad[i], &s) != -EINVAL) {
			print_error("accepted '%s'\n", bad[i]);
			fail();
		}
		/* untouched on error */
		assert_int_equal(s.kind, SYM_ARRIVAL_UNIFORM);
		assert_near(s.shape, 42, 0, "untouched");
	}
	assert_int_equal(sym_arrival_parse(NULL, &s), -EINVAL);
}

static void test_popularity_parse(void **state)
{
	const char *bad[] = {
		"", "zipf", "zipf:", "zipf:abc", "zipf:-1", "zipf:-0.5", "zipf:inf",
		"zipf:nan", "zipf:1x", "zipf: 1", "Equal", "equal ", "equal:1",
		"zipf1", "uniform", "zipf:100.5", "zipf:1e300",
	};
	struct sym_popularity p;
	char buf[32];

	(void)state;
	assert_int_equal(sym_popularity_parse("equal", &p), 0);
	assert_int_equal(p.kind, SYM_POP_EQUAL);
	assert_string_equal(sym_popularity_format(&p, buf, sizeof(buf)), "equal");
	assert_int_equal(sym_popularity_parse("zipf:1.2", &p), 0);
	assert_int_equal(p.kind, SYM_POP_ZIPF);
	assert_near(p.s, 1.2, 0, "zipf s");
	assert_string_equal(sym_popularity_format(&p, buf, sizeof(buf)), "zipf:1.2");
	assert_int_equal(sym_popularity_parse("zipf:100", &p), 0); /* SYM_ZIPF_MAX */
	assert_int_equal(sym_popularity_parse("zipf:0", &p), 0);
	assert_int_equal(p.kind, SYM_POP_ZIPF);
	assert_near(p.s, 0, 0, "zipf 0");
	assert_string_equal(sym_popularity_format(&p, buf, sizeof(buf)), "zipf:0");

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p.kind = SYM_POP_ZIPF;
		p.s = 42;
		if (sym_popularity_parse(bad[i], &p) != -EINVAL) {
			print_error("accepted '%s'\n", bad[i]);
			fail();
		}
		assert_int_equal(p.kind, SYM_POP_ZIPF);
		assert_near(p.s, 42, 0, "untouched");
	}
}

static void test_popularity_shares(void **state)
{
	struct sym_popularity eq = { SYM_POP_EQUAL, 0 }, z1 = { SYM_POP_ZIPF, 1 };
	struct sym_popularity z0 = { SYM_POP_ZIPF, 0 }, z2 = { SYM_POP_ZIPF, 2 };
	double sh[16], sh0[16], sum;
	const double h4 = 1 + 1.0 / 2 + 1.0 / 3 + 1.0 / 4;

	(void)state;
	sym_popularity_shares(&z1, 4, sh);
	for (int i = 0; i < 4; i++)
		assert_near(sh[i], 1.0 / (i + 1) / h4, 1e-15, "zipf:1 share");

	sym_popularity_shares(&eq, 5, sh);
	for (int i = 0; i < 5; i++)
		assert_near(sh[i], 0.2, 1e-15, "equal share");

	sym_popularity_shares(&z0, 7, sh0);
	sym_popularity_shares(&eq, 7, sh);
	for (int i = 0; i < 7; i++)
		assert_near(sh0[i], sh[i], 0, "zipf:0 == equal");

	sym_popularity_shares(&z2, 16, sh);
	sum = 0;
	for (int i = 0; i < 16; i++) {
		sum += sh[i];
		if (i > 0) {
			assert_true(sh[i] < sh[i - 1]);
			assert_near(sh[0] / sh[i], (double)(i + 1) * (i + 1), 1e-9, "zipf:2 ratio");
		}
	}
	assert_near(sum, 1, 1e-12, "zipf:2 sum");

	sym_popularity_shares(&z1, 1, sh);
	assert_near(sh[0], 1, 0, "single model");
	sym_popularity_shares(&z1, 0, sh); /* no-op, must not crash */
}

/* ---- rate tables -------------------------------------------------------- */

/* Writes text to a fresh temporary file; path receives its name. */
static void write_temp(char path[64], const char *text, size_t len)
{
	write_temp_bytes("rates", text, len, path, 64);
}

static int load_text(const char *text, char path[64], struct sym_rate_table *t,
		     char *err, size_t errlen)
{
	int rc;

	write_temp(path, text, strlen(text));
	rc = sym_rate_table_load(path, t, err, errlen);
	unlink(path);
	return rc;
}

static void check_table(const struct sym_rate_table *t, size_t ncols, const char *const *names,
			size_t nrows, const double *rates)
{
	assert_int_equal(t->ncols, ncols);
	assert_int_equal(t->nrows, nrows);
	for (size_t i = 0; i < ncols; i++)
		assert_string_equal(t->names[i], names[i]);
	for (size_t i = 0; i < ncols * nrows; i++)
		assert_near(t->rates[i], rates[i], 0, "rate");
}

static void test_rate_table_good(void **state)
{
	static const char *const ab[] = { "a", "b" };
	static const double r22[] = { 1, 2, 3.5, 0 };
	const char *variants[] = {
		"second,a,b\n0,1,2\n1,3.5,0\n",
		"a,b\n1,2\n3.5,0\n",
		"t,a,b\r\n0,1,2\r\n1,3.5,0\r\n",
		"# a trace\n\ntime,a,b\n# comment\n0,1,2\n\n   \n1,3.5,0",
		"a, b\n 1 ,2\n3.5e0,\t0\n",
		("\xef\xbb\xbf" "a,b\n1,2\n3.5,0.0\n"), /* UTF-8 BOM */
	};
	struct sym_rate_table t;
	struct sym_rate_segment *seg;
	size_t nseg;
	char path[64], err[256];

	(void)state;
	for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		err[0] = 'x';
		err[1] = '\0';
		if (load_text(variants[v], path, &t, err, sizeof(err)) != 0) {
			print_error("variant %zu: %s\n", v, err);
			fail();
		}
		check_table(&t, 2, ab, 2, r22);
		assert_int_equal(sym_rate_table_find(&t, "a"), 0);
		assert_int_equal(sym_rate_table_find(&t, "b"), 1);
		assert_int_equal(sym_rate_table_find(&t, "c"), -1);
		assert_int_equal(sym_rate_table_find(&t, "second"), -1);

		assert_int_equal(sym_rate_table_segments(&t, 0, &seg, &nseg), 0);
		assert_int_equal(nseg, 2);
		for (size_t i = 0; i < nseg; i++) {
			assert_int_equal(seg[i].duration, SYM_S);
			assert_near(seg[i].rate, r22[i * 2], 0, "segment rate");
		}
		free(seg);
		assert_int_equal(sym_rate_table_segments(&t, 1, &seg, &nseg), 0);
		assert_int_equal(nseg, 2);
		assert_near(seg[0].rate, 2, 0, "segment rate");
		assert_near(seg[1].rate, 0, 0, "segment rate");
		free(seg);
		assert_int_equal(sym_rate_table_segments(&t, 2, &seg, &nseg), -EINVAL);

		sym_rate_table_finish(&t);
		assert_null(t.names);
		assert_null(t.rates);
	}
	sym_rate_table_finish(NULL);

	/* A non-time first column named like a model, and a time name later. */
	{
		static const char *const names[] = { "m", "t" };
		static const double rates[] = { 4, 5 };
		assert_int_equal(load_text("m,t\n4,5\n", path, &t, err, sizeof(err)), 0);
		check_table(&t, 2, names, 1, rates);
		sym_rate_table_finish(&t);
	}
}

/* A table drives an arrival generator: uniform gaps give the exact counts. */
static void test_rate_table_replay(void **state)
{
	struct sym_arrival_spec spec = spec_of("uniform");
	struct sym_rate_table t;
	struct sym_rate_segment *seg;
	struct sym_arrivals a;
	size_t nseg, count[3] = { 0, 0, 0 };
	char path[64], err[256];
	sym_time tm;
	int col;

	(void)state;
	assert_int_equal(load_text("second,x,y\n0,10,1\n1,0,1\n2,20,1\n", path, &t, err,
				   sizeof(err)), 0);
	col = sym_rate_table_find(&t, "x");
	assert_int_equal(col, 0);
	assert_int_equal(sym_rate_table_segments(&t, (size_t)col, &seg, &nseg), 0);
	assert_int_equal(nseg, 3);
	assert_int_equal(sym_arrivals_init(&a, &spec, 1.0, seg, nseg, SEED, 0), 0);
	free(seg);
	while ((tm = sym_arrivals_next(&a)) != SYM_TIME_NEVER)
		count[(tm - 1) / SYM_S]++;
	assert_int_equal(count[0], 10);
	assert_int_equal(count[1], 0);
	assert_int_equal(count[2], 20);
	sym_arrivals_finish(&a);
	sym_rate_table_finish(&t);
}

/* Very long lines: 3000 columns with 200-character names. */
static void test_rate_table_long_lines(void **state)
{
	enum { NCOL = 3000, NAMELEN = 200 };
	size_t cap = (size_t)NCOL * (NAMELEN + 16) * 3, len = 0;
	char *text = malloc(cap), path[64], err[256];
	struct sym_rate_table t;

	(void)state;
	assert_non_null(text);
	for (int c = 0; c < NCOL; c++)
		len += (size_t)snprintf(text + len, cap - len, "%s%0*d", c ? "," : "", NAMELEN, c);
	len += (size_t)snprintf(text + len, cap - len, "\n");
	for (int r = 0; r < 2; r++) {
		for (int c = 0; c < NCOL; c++)
			len += (size_t)snprintf(text + len, cap - len, "%s%d", c ? "," : "", c + r);
		len += (size_t)snprintf(text + len, cap - len, "\r\n");
	}
	assert_true(len < cap);
	assert_int_equal(load_text(text, path, &t, err, sizeof(err)), 0);
	assert_int_equal(t.ncols, NCOL);
	assert_int_equal(t.nrows, 2);
	assert_int_equal(strlen(t.names[NCOL - 1]), NAMELEN);
	assert_near(t.rates[NCOL + NCOL - 1], NCOL, 0, "last rate");
	snprintf(text, cap, "%0*d", NAMELEN, 1234);
	assert_int_equal(sym_rate_table_find(&t, text), 1234);
	sym_rate_table_finish(&t);
	free(text);
}

struct bad_case {
	const char *text;
	int line; /* expected line number in the message */
	const char *what; /* a word the message must contain */
};

static void test_rate_table_bad(void **state)
{
	static const struct bad_case cases[] = {
		{ "", 1, "header" },
		{ "\n\n# only comments\n", 4, "header" },
		{ "a,b,a\n1,2,3\n", 1, "'a'" },
		{ "a,,b\n1,2,3\n", 1, "column name" },
		{ "a,b,\n1,2,3\n", 1, "column name" },
		{ "second\n0\n", 1, "model column" },
		{ "a,b\n1,2\n3\n", 3, "2 fields" },
		{ "a,b\n1,2,3\n", 2, "2 fields" },
		{ "a\nabc\n", 2, "rate" },
		{ "a\n1x\n", 2, "rate" },
		{ "a,b\n1,\n", 2, "rate" },
		{ "a\n-1\n", 2, "rate" },
		{ "a\ninf\n", 2, "rate" },
		{ "a\nnan\n", 2, "rate" },
		{ "a\n1e999\n", 2, "rate" },
		{ "t,a\n0,1\n2,1\n", 3, "time 1" },
		{ "t,a\n1,1\n", 2, "time 0" },
		{ "time,a\n0.5,1\n", 2, "time 0" },
		{ "second,a\nx,1\n", 2, "time 0" },
		{ "a,b\n", 2, "data row" },
		{ "a,b\r\n# nothing\r\n\r\n", 4, "data row" },
		{ "# c\na\n1\n2\n\n-3\n", 6, "rate" },
		{ "a\n1e9\n1.000001e9\n", 3, "from 0 to 1e+09" },
	};
	struct sym_rate_table t;
	char path[64], err[256], want[128];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		memset(&t, 0xff, sizeof(t)); /* garbage in: must come back zeroed */
		err[0] = '\0';
		rc = load_text(cases[i].text, path, &t, err, sizeof(err));
		snprintf(want, sizeof(want), "%s:%d: ", path, cases[i].line);
		if (rc != -EINVAL || !strstr(err, want) || !strstr(err, cases[i].what)) {
			print_error("case %zu: rc %d, message '%s', want '%s' and '%s'\n", i,
				    rc, err, want, cases[i].what);
			fail();
		}
		assert_int_equal(t.ncols, 0);
		assert_int_equal(t.nrows, 0);
		assert_null(t.names);
		assert_null(t.rates);
		assert_null(strchr(err, '\n'));
	}

	/* a NUL byte in the middle of a line */
	write_temp(path, "a\n1\0\n", 5);
	assert_int_equal(sym_rate_table_load(path, &t, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: ", path);
	assert_non_null(strstr(err, want));
	unlink(path);

	/* no error buffer is fine */
	assert_int_equal(load_text("a\n-1\n", path, &t, NULL, 0), -EINVAL);
	/* a tiny buffer is truncated, still NUL-terminated */
	assert_int_equal(load_text("a\n-1\n", path, &t, err, 5), -EINVAL);
	assert_int_equal(strlen(err), 4);
}

static void test_rate_table_missing(void **state)
{
	struct sym_rate_table t;
	char err[256];
	const char *path = "/tmp/sym_no_such_dir_xyz/rates.csv";
	int rc;

	(void)state;
	memset(&t, 0xff, sizeof(t));
	rc = sym_rate_table_load(path, &t, err, sizeof(err));
	assert_true(rc == -ENOENT || rc == -EIO);
	assert_non_null(strstr(err, path));
	assert_int_equal(t.ncols, 0);
	assert_null(t.names);
	assert_null(t.rates);

	/* a directory cannot be read as a table */
	memset(&t, 0xff, sizeof(t));
	rc = sym_rate_table_load("/tmp", &t, err, sizeof(err));
	assert_true(rc == -EIO || rc == -EINVAL);
	assert_non_null(strstr(err, "/tmp"));
	assert_null(t.names);
}

/* ---- per-request traces ------------------------------------------------- */

static int load_trace_text(const char *text, char path[64], struct sym_trace *t, char *err, size_t errlen)
{
	write_temp_bytes("trace", text, strlen(text), path, 64);
	int rc = sym_trace_load(path, t, err, errlen);
	unlink(path);
	return rc;
}

static void test_trace_good(void **state)
{
	(void)state;
	struct sym_trace t;
	char path[64], err[256];
	/* out of order, two models, sizes; the comment and the blank line are skipped */
	assert_int_equal(load_trace_text("time_s,model,size\n# a comment\n2.5,b,1\n0.25,a,2\n\n0.5,a,0.5\n"
					 "0.000000001,b,3\n0.75,a,1\n",
					 path, &t, err, sizeof(err)),
			 0);
	assert_int_equal(t.n, 5);
	assert_int_equal(t.nmodels, 2);
	assert_string_equal(t.names[0], "b"); /* in order of first appearance */
	assert_string_equal(t.names[1], "a");
	assert_int_equal(sym_trace_find(&t, "a"), 1);
	assert_int_equal(sym_trace_find(&t, "c"), -1);
	assert_int_equal(t.count[0], 2);
	assert_int_equal(t.count[1], 3);
	/* sorted per model, to the nanosecond, sizes moved with their times */
	assert_true(t.times[0][0] == 1 && t.times[0][1] == 2500 * SYM_MS);
	assert_near(t.sizes[0][0], 3, 0, "b's first size");
	assert_true(t.times[1][0] == 250 * SYM_MS && t.times[1][1] == 500 * SYM_MS && t.times[1][2] == 750 * SYM_MS);
	assert_near(t.sizes[1][0], 2, 0, "a's first size");
	assert_near(t.sizes[1][1], 0.5, 0, "a's second size");
	/* its length: the last arrival's second rounded up; the peaks per second */
	assert_true(t.length == 3 * SYM_S);
	assert_near(t.peak[1], 3, 0, "a: three in second 0");
	assert_near(t.peak[0], 1, 0, "b: one per second");
	assert_near(t.peak_total, 4, 0, "four in second 0");
	sym_trace_finish(&t);
	/* no size column; an arrival on a whole second starts the next one */
	assert_int_equal(load_trace_text("time_s,model\n1,x\n", path, &t, err, sizeof(err)), 0);
	assert_null(t.sizes);
	assert_true(t.length == 2 * SYM_S);
	sym_trace_finish(&t);
}

static void test_trace_replay(void **state)
{
	(void)state;
	static const sym_time times[] = { 0, 100, 100, 700 };
	static const double sizes[] = { 1, 2, 3, 4 };
	struct sym_arrivals a;
	/* scale 1: the times exactly, then again after each period */
	assert_int_equal(sym_arrivals_init_replay(&a, times, sizes, 4, 1000, 1, 7, 0), 0);
	static const sym_time want1[] = { 0, 100, 100, 700, 1000, 1100, 1100, 1700, 2000 };
	for (size_t i = 0; i < sizeof(want1) / sizeof(want1[0]); i++) {
		assert_true(sym_arrivals_next(&a) == want1[i]);
		assert_near(sym_arrivals_size(&a), sizes[i % 4], 0, "its size");
	}
	sym_arrivals_finish(&a);
	/* scale 2: the time axis stays, each request twice, in place */
	assert_int_equal(sym_arrivals_init_replay(&a, times, NULL, 4, 1000, 2, 7, 0), 0);
	static const sym_time want2[] = { 0, 0, 100, 100, 100, 100, 700, 700, 1000, 1000 };
	for (size_t i = 0; i < sizeof(want2) / sizeof(want2[0]); i++) {
		assert_true(sym_arrivals_next(&a) == want2[i]);
		assert_near(sym_arrivals_size(&a), 0, 0, "no size column");
	}
	sym_arrivals_finish(&a);
	/* a fraction thins: about that share of the requests, the same ones whatever else changes, and a
	 * request kept at a scale is kept at every larger one */
	static sym_time many[10000];
	for (int i = 0; i < 10000; i++)
		many[i] = (sym_time)i * 1000;
	size_t kept[3] = { 0, 0, 0 };
	static const double sc[3] = { 0.3, 0.7, 1.5 };
	static unsigned char at[3][10000];
	for (int j = 0; j < 3; j++) {
		assert_int_equal(sym_arrivals_init_replay(&a, many, NULL, 10000, 10000 * 1000, sc[j], 5, 1), 0);
		for (;;) {
			sym_time t = sym_arrivals_next(&a);
			if (t >= 10000 * 1000)
				break;
			at[j][t / 1000]++;
			kept[j]++;
		}
		sym_arrivals_finish(&a);
	}
	assert_true(kept[0] > 2800 && kept[0] < 3200);
	assert_true(kept[1] > 6700 && kept[1] < 7300);
	assert_true(kept[2] > 14700 && kept[2] < 15300);
	for (int i = 0; i < 10000; i++) {
		assert_true(at[0][i] <= at[1][i]);
		assert_true(at[1][i] <= 1 && at[2][i] >= 1 && at[2][i] <= 2);
	}
	/* scale 0 or no times: nothing */
	assert_int_equal(sym_arrivals_init_replay(&a, times, NULL, 4, 1000, 0, 7, 0), 0);
	assert_true(sym_arrivals_next(&a) == SYM_TIME_NEVER);
	assert_int_equal(sym_arrivals_init_replay(&a, NULL, NULL, 0, 1000, 1, 7, 0), 0);
	assert_true(sym_arrivals_next(&a) == SYM_TIME_NEVER);
	/* bad input: unsorted, a period not past the last time, a negative or absurd scale */
	static const sym_time unsorted[] = { 5, 3 };
	assert_int_equal(sym_arrivals_init_replay(&a, unsorted, NULL, 2, 1000, 1, 7, 0), -EINVAL);
	assert_int_equal(sym_arrivals_init_replay(&a, times, NULL, 4, 700, 1, 7, 0), -EINVAL);
	assert_int_equal(sym_arrivals_init_replay(&a, times, NULL, 4, 1000, -1, 7, 0), -EINVAL);
	assert_int_equal(sym_arrivals_init_replay(&a, times, NULL, 4, 1000, NAN, 7, 0), -EINVAL);
	assert_int_equal(sym_arrivals_init_replay(&a, times, NULL, 4, 1000, 1e13, 7, 0), -EINVAL);
}

static void test_trace_bad(void **state)
{
	static const struct bad_case cases[] = {
		{ "", 1, "header" },
		{ "time,model\n1,a\n", 1, "time_s,model" },
		{ "time_s,model,weight\n1,a,1\n", 1, "time_s,model" },
		{ "time_s\n1\n", 1, "time_s,model" },
		{ "time_s,model\n1,a,2\n", 2, "2 fields" },
		{ "time_s,model,size\n1,a\n", 2, "3 fields" },
		{ "time_s,model\n-1,a\n", 2, "arrival time" },
		{ "time_s,model\nabc,a\n", 2, "arrival time" },
		{ "time_s,model\nnan,a\n", 2, "arrival time" },
		{ "time_s,model\n1e8,a\n", 2, "from 0 to below 1e+07" },
		{ "time_s,model\n1e7,a\n", 2, "from 0 to below 1e+07" },
		{ "time_s,model\n1,\n", 2, "model name" },
		{ "time_s,model\n1,0123456789012345678901234567890123456789012345678901234567890123\n", 2,
		  "model name of 1 to 63" },
		{ "time_s,model,size\n1,a,0\n", 2, "size above 0" },
		{ "time_s,model,size\n1,a,-2\n", 2, "size above 0" },
		{ "time_s,model,size\n1,a,1001\n", 2, "at most 1000" },
		{ "time_s,model\n", 2, "data row" },
		{ "# c\ntime_s,model\n1,a\n2,a\n\nx,a\n", 6, "arrival time" },
	};
	struct sym_trace t;
	char path[64], err[256], want[128];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&t, 0xff, sizeof(t)); /* garbage in: must come back zeroed */
		err[0] = '\0';
		int rc = load_trace_text(cases[i].text, path, &t, err, sizeof(err));
		snprintf(want, sizeof(want), "%s:%d: ", path, cases[i].line);
		if (rc != -EINVAL || !strstr(err, want) || !strstr(err, cases[i].what)) {
			print_error("case %zu: rc %d, message '%s', want '%s' and '%s'\n", i, rc, err, want, cases[i].what);
			fail();
		}
		assert_int_equal(t.n, 0);
		assert_int_equal(t.nmodels, 0);
		assert_null(t.names);
		assert_null(t.times);
	}
	memset(&t, 0xff, sizeof(t));
	int rc = sym_trace_load("/tmp/sym_no_such_dir_xyz/trace.csv", &t, err, sizeof(err));
	assert_true(rc == -ENOENT || rc == -EIO);
	assert_non_null(strstr(err, "trace.csv"));
	assert_null(t.names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_poisson_gaps),
		cmocka_unit_test(test_gamma_gaps),
		cmocka_unit_test(test_uniform_gaps),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_seed_stream),
		cmocka_unit_test(test_common_random_numbers),
		cmocka_unit_test(test_zero_rate),
		cmocka_unit_test(test_schedule_counts),
		cmocka_unit_test(test_schedule_mapping),
		cmocka_unit_test(test_schedule_copied),
		cmocka_unit_test(test_init_invalid),
		cmocka_unit_test(test_arrival_parse),
		cmocka_unit_test(test_popularity_parse),
		cmocka_unit_test(test_popularity_shares),
		cmocka_unit_test(test_rate_table_good),
		cmocka_unit_test(test_rate_table_replay),
		cmocka_unit_test(test_rate_table_long_lines),
		cmocka_unit_test(test_rate_table_bad),
		cmocka_unit_test(test_trace_good),
		cmocka_unit_test(test_trace_replay),
		cmocka_unit_test(test_trace_bad),
		cmocka_unit_test(test_rate_table_missing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
