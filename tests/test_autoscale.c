/* Autoscaling advice: the formula on hand-computed cases, its edges, and the
 * threshold. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/autoscale.h"
#include "testutil.h"

static void test_add_when_bad(void **state)
{
	(void)state;
	struct sym_autoscale a;
	/* 10 GPUs, 20% bad: serving 80% well, 10/0.8 = 12.5 GPUs would serve
	 * all: add ceil(10 * 0.2 / 0.8) = ceil(2.5) = 3. All busy: idle 0. */
	sym_autoscale_advice(800, 200, 10, 1, 10, 0.01, &a);
	assert_near(a.bad_rate, 0.2, 1e-12, "r");
	assert_near(a.idle_fraction, 0, 1e-12, "f");
	assert_int_equal(a.add, 3);
	assert_int_equal(a.release, 0);
	/* exactly integral: 8 GPUs, r = 0.5 -> add 8 (not 9 from rounding noise) */
	sym_autoscale_advice(500, 500, 8, 1, 8, 0.01, &a);
	assert_int_equal(a.add, 8);
	/* everything bad: capped at r = 0.99 -> 99 N */
	sym_autoscale_advice(0, 50, 2, 1, 2, 0.01, &a);
	assert_near(a.bad_rate, 1, 0, "r");
	assert_int_equal(a.add, 198);
}

static void test_release_when_idle(void **state)
{
	(void)state;
	struct sym_autoscale a;
	/* 16 GPUs over 2 s, 12 GPU-seconds busy: f = 1 - 12/32 = 0.625;
	 * release floor(16 * 0.625) = 10. Bad rate 0.5% is within 1%. */
	sym_autoscale_advice(995, 5, 12, 2, 16, 0.01, &a);
	assert_near(a.idle_fraction, 0.625, 1e-12, "f");
	assert_int_equal(a.release, 10);
	assert_int_equal(a.add, 0);
	/* at the threshold exactly: still release (add only above it) */
	sym_autoscale_advice(99, 1, 0, 1, 4, 0.01, &a);
	assert_int_equal(a.add, 0);
	assert_int_equal(a.release, 4);
	/* above it: add, and release nothing even though GPUs were idle */
	sym_autoscale_advice(98, 2, 0, 1, 4, 0.01, &a);
	assert_int_equal(a.add, 1); /* ceil(4 * 0.02 / 0.98) = ceil(0.0816) */
	assert_int_equal(a.release, 0);
	/* nothing arrived: r = 0, all idle */
	sym_autoscale_advice(0, 0, 0, 1, 3, 0.01, &a);
	assert_near(a.bad_rate, 0, 0, "r");
	assert_int_equal(a.release, 3);
	/* busy time beyond the interval (rounding) is clamped: f = 0 */
	sym_autoscale_advice(10, 0, 3.0000001, 1, 3, 0.01, &a);
	assert_near(a.idle_fraction, 0, 0, "f");
	assert_int_equal(a.release, 0);
}

/* GPUs that came during the interval count for the time they served: two at
 * its end, one of them for its last tenth only (1.1 GPU-seconds in service),
 * 0.88 busy: 80% busy, f = 0.2, nothing to release; counted as two full
 * GPUs it would read 56% idle and release one. No service at all: f = 0. */
static void test_served(void **state)
{
	(void)state;
	struct sym_autoscale a, b;
	sym_autoscale_advice_served(1000, 0, 0.88, 1.1, 2, 0.01, &a);
	assert_true(fabs(a.idle_fraction - 0.2) < 1e-12);
	assert_int_equal(a.release, 0);
	sym_autoscale_advice(1000, 0, 0.88, 1, 2, 0.01, &b);
	assert_true(fabs(b.idle_fraction - 0.56) < 1e-12);
	assert_int_equal(b.release, 1);
	/* busier than in service (a batch planned near the end): f = 0 */
	sym_autoscale_advice_served(1000, 0, 2, 1.5, 2, 0.01, &a);
	assert_true(a.idle_fraction == 0 && a.release == 0);
	sym_autoscale_advice_served(0, 0, 0, 0, 1, 0.01, &a);
	assert_true(a.idle_fraction == 0 && a.release == 0 && a.add == 0);
	/* the bad rate's add counts the GPUs at the end: 4, 20% bad: ceil(4 * 0.25) = 1 */
	sym_autoscale_advice_served(800, 200, 1, 2, 4, 0.01, &a);
	assert_int_equal(a.add, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_when_bad),
		cmocka_unit_test(test_release_when_idle),
		cmocka_unit_test(test_served),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
