/* Analytic capacity: the staggered batch and the smallest GPU count, on the
 * reference profiles (hand-computed from the linear formula). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/capacity.h"
#include "core/profile.h"

/* ResNet50, l(b) = 1.053 b + 5.072 ms, SLO 25 ms:
 *   N = 1 (uncoordinated): floor((12.5 - 5.072) / 1.053) = 7, l(7) = 12.443,
 *     562.6 r/s;
 *   N = 8: floor((25 / 1.125 - 5.072) / 1.053) = 16, l(16) = 21.92 ms,
 *     8 * 16 / 21.92 ms = 5839.4 r/s (the bound quoted in docs/policies.md);
 *   15000 r/s: N = 20 gives b = 17 and 14800 r/s, N = 21 gives b = 17 and
 *     15540 r/s: 21 GPUs.
 * InceptionResNetV2, 5.090 b + 18.368 ms, SLO 70 ms: N = 1 gives 3
 * (33.64 ms, 89.2 r/s); N = 8 gives 8 (59.09 ms, 1083 r/s). */
static void test_reference(void **state)
{
	(void)state;
	struct sym_profile r50, irv2;
	assert_int_equal(sym_profile_init_linear(&r50, "r50", 1.053, 5.072, 64), 0);
	assert_int_equal(sym_profile_init_linear(&irv2, "irv2", 5.090, 18.368, 64), 0);
	assert_int_equal(sym_staggered_batch(r50.lat, 64, 25 * SYM_MS, 1), 7);
	assert_int_equal(sym_staggered_batch(r50.lat, 64, 25 * SYM_MS, 8), 16);
	assert_int_equal(sym_staggered_batch(irv2.lat, 64, 70 * SYM_MS, 1), 3);
	assert_int_equal(sym_staggered_batch(irv2.lat, 64, 70 * SYM_MS, 8), 8);
	int b = -1;
	assert_int_equal(sym_staggered_min_gpus(r50.lat, 64, 25 * SYM_MS, 15000, 1000, &b), 21);
	assert_int_equal(b, 17);
	/* exactly the 8-GPU throughput needs 8; a hair more needs 9 */
	assert_int_equal(sym_staggered_min_gpus(r50.lat, 64, 25 * SYM_MS, 5839, 1000, &b), 8);
	assert_int_equal(b, 16);
	assert_int_equal(sym_staggered_min_gpus(r50.lat, 64, 25 * SYM_MS, 5840, 1000, &b), 9);
	/* a tiny rate needs one GPU, with the uncoordinated batch */
	assert_int_equal(sym_staggered_min_gpus(r50.lat, 64, 25 * SYM_MS, 1, 1000, &b), 1);
	assert_int_equal(b, 7);
	/* the cap on GPUs, and an SLO that no batch meets */
	assert_int_equal(sym_staggered_min_gpus(r50.lat, 64, 25 * SYM_MS, 15000, 20, &b), -1);
	assert_int_equal(sym_staggered_min_gpus(r50.lat, 64, 25 * SYM_MS, 15000, 21, &b), 21);
	assert_int_equal(sym_staggered_min_gpus(r50.lat, 64, 6 * SYM_MS, 10, 1000, &b), -1);
	assert_int_equal(sym_staggered_batch(r50.lat, 64, 6 * SYM_MS, 1), 0);
	/* the batch is capped by the table */
	assert_int_equal(sym_staggered_batch(r50.lat, 10, 1000 * SYM_MS, 1), 10);
	sym_profile_finish(&r50);
	sym_profile_finish(&irv2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
