/* tests/test_profile.c - batch latency profiles (core/profile.h): linear and
 * table profiles, their bad inputs, the largest batch within a budget and
 * the linear batch limit at exact boundaries, deep copies; the one memory
 * rule (core/memory.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "core/memory.h"
#include "core/profile.h"
#include "testutil.h"

static void test_linear(void **state)
{
	(void)state;
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "ResNet50", 1.053, 5.072, 16), 0);
	assert_true(p.linear);
	assert_string_equal(p.name, "ResNet50");
	assert_int_equal(p.max_batch, 16);
	assert_int_equal(sym_profile_latency(&p, 1), sym_ms(6.125));
	assert_int_equal(sym_profile_latency(&p, 16), sym_ms(1.053 * 16 + 5.072));
	assert_int_equal(p.lat[0], 0);
	assert_true(p.static_mb < 0 && p.dynamic_mb < 0);
	assert_true(p.slo_ms == 0);
	/* l(b) <= 12 ms: 1.053 b + 5.072 <= 12 -> b = 6 (11.39 ms), b = 7 is 12.443 */
	assert_int_equal(sym_profile_max_batch_within(&p, sym_ms(12)), 6);
	assert_int_equal(sym_profile_max_batch_within(&p, sym_ms(6.125)), 1);
	assert_int_equal(sym_profile_max_batch_within(&p, sym_ms(6.124)), 0);
	assert_int_equal(sym_profile_max_batch_within(&p, sym_ms(1000)), 16);
	sym_profile_finish(&p);
	assert_null(p.lat);
	sym_profile_finish(&p); /* twice, and NULL, are fine */
	sym_profile_finish(NULL);
}

static void test_linear_bad(void **state)
{
	(void)state;
	struct sym_profile p;
	const double bad[][2] = { { -1, 5 }, { 1, -5 }, { 0, 0 }, { NAN, 5 }, { 1, INFINITY } };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(sym_profile_init_linear(&p, "m", bad[i][0], bad[i][1], 8), -EINVAL);
		assert_null(p.lat);
	}
	assert_int_equal(sym_profile_init_linear(&p, "m", 1, 5, 0), -EINVAL);
	assert_int_equal(sym_profile_init_linear(&p, "m", 1, 5, SYM_PROFILE_BATCH_LIMIT + 1), -EINVAL);
	assert_int_equal(sym_profile_init_linear(&p, "m", 1, 5, SYM_PROFILE_BATCH_LIMIT), 0);
	sym_profile_finish(&p);
	/* alpha 0 (a constant latency) is a valid profile */
	assert_int_equal(sym_profile_init_linear(&p, "flat", 0, 5, 4), 0);
	assert_int_equal(sym_profile_latency(&p, 4), sym_ms(5));
	sym_profile_finish(&p);
	/* a long name is cut to fit */
	char longname[200];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(sym_profile_init_linear(&p, longname, 1, 5, 2), 0);
	assert_int_equal(strlen(p.name), sizeof(p.name) - 1);
	sym_profile_finish(&p);
}

static void test_table(void **state)
{
	(void)state;
	struct sym_profile p;
	/* exactly linear: the fit recovers alpha 2, beta 3 */
	const double lat[] = { 5, 7, 9, 11 };
	assert_int_equal(sym_profile_init_table(&p, "t", lat, 4), 0);
	assert_false(p.linear);
	assert_int_equal(p.max_batch, 4);
	assert_near(p.alpha_ms, 2, 1e-12, "alpha");
	assert_near(p.beta_ms, 3, 1e-12, "beta");
	for (int b = 1; b <= 4; b++)
		assert_int_equal(sym_profile_latency(&p, b), sym_ms(lat[b - 1]));
	/* equal neighbours are allowed (non-decreasing) */
	struct sym_profile q;
	const double flat[] = { 4, 4, 6 };
	assert_int_equal(sym_profile_init_table(&q, "f", flat, 3), 0);
	assert_int_equal(sym_profile_max_batch_within(&q, sym_ms(4)), 2);
	sym_profile_finish(&q);
	/* a copy owns its own table */
	struct sym_profile c;
	assert_int_equal(sym_profile_copy(&c, &p), 0);
	assert_ptr_not_equal(c.lat, p.lat);
	sym_profile_finish(&p);
	assert_int_equal(sym_profile_latency(&c, 4), sym_ms(11));
	assert_string_equal(c.name, "t");
	sym_profile_finish(&c);
}

static void test_table_bad(void **state)
{
	(void)state;
	struct sym_profile p;
	const double dec[] = { 5, 4 }, zero[] = { 0, 1 }, nan[] = { 1, NAN }, neg[] = { -1, 2 };
	assert_int_equal(sym_profile_init_table(&p, "t", dec, 2), -EINVAL);
	assert_int_equal(sym_profile_init_table(&p, "t", zero, 2), -EINVAL);
	assert_int_equal(sym_profile_init_table(&p, "t", nan, 2), -EINVAL);
	assert_int_equal(sym_profile_init_table(&p, "t", neg, 2), -EINVAL);
	assert_int_equal(sym_profile_init_table(&p, "t", NULL, 2), -EINVAL);
	assert_int_equal(sym_profile_init_table(&p, "t", dec, 0), -EINVAL);
	assert_null(p.lat);
}

static void test_linear_batch_limit(void **state)
{
	(void)state;
	/* ResNet50 at 25 ms: (25 - 5.072) / 1.053 = 18.9 -> 18 */
	assert_int_equal(sym_profile_linear_batch_limit(1.053, 5.072, 25), 18);
	/* an SLO exactly equal to l(b) allows b, whatever the binary rounding */
	assert_int_equal(sym_profile_linear_batch_limit(0.1, 0.2, 0.1 * 7 + 0.2), 7);
	assert_int_equal(sym_profile_linear_batch_limit(1, 5, 6), 1);
	/* l(1) over the SLO: 0 */
	assert_int_equal(sym_profile_linear_batch_limit(1, 5, 5.999), 0);
	/* no slope: capped */
	assert_int_equal(sym_profile_linear_batch_limit(0, 5, 10), SYM_PROFILE_BATCH_LIMIT);
	assert_int_equal(sym_profile_linear_batch_limit(1e-6, 1, 1e9), SYM_PROFILE_BATCH_LIMIT);
}

/* The memory rule: static memory adds up, the largest dynamic memory counts
 * once (a batch at a time), unknown figures count 0. The 1080 Ti's ResNet50
 * and VGG16 of the paper's Table 1: 170 + 822 static, VGG16's 6200 dynamic. */
static void test_memory_rule(void **state)
{
	(void)state;
	struct sym_mem u = { 0, 0 };
	assert_true(sym_mem_need(&u) == 0);
	sym_mem_add(&u, 170, 2798);
	assert_true(sym_mem_need(&u) == 170 + 2798);
	assert_true(sym_mem_need_with(&u, 822, 6200) == 170 + 822 + 6200);
	assert_true(sym_mem_need(&u) == 170 + 2798); /* _with changes nothing */
	sym_mem_add(&u, 822, 6200);
	sym_mem_add(&u, -1, -1); /* unknown */
	sym_mem_add(&u, NAN, NAN);
	assert_true(sym_mem_need(&u) == 170 + 822 + 6200);
	assert_true(sym_mem_model(-1, 500) == 500);
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "VGG16", 2.73, 5.78, 16), 0);
	p.static_mb = 822;
	p.dynamic_mb = 6200; /* a batch's, whatever the batch size: never times b */
	struct sym_mem v = { 0, 0 };
	sym_mem_add_profile(&v, &p);
	sym_mem_add_profile(&v, &p);
	assert_true(sym_mem_need(&v) == 2 * 822 + 6200);
	sym_profile_finish(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linear),
		cmocka_unit_test(test_linear_bad),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_table_bad),
		cmocka_unit_test(test_linear_batch_limit),
		cmocka_unit_test(test_memory_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
