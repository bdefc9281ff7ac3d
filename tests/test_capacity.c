/* Analytic capacity: the staggered batch and the smallest GPU count, on the
 * reference profiles (hand-computed from the linear formula); the
 * multi-model bound. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

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

static struct sym_bound_model bmodel(const struct sym_profile *p, sym_time slo, double share)
{
	struct sym_bound_model m = { .nkinds = 1, .slo = slo, .share = share };
	m.lat[0] = p->lat;
	m.max_batch[0] = p->max_batch;
	return m;
}

/* The multi-model bound. One ResNet50 on 8 GPUs is the staggered bound:
 * b = 16 (15 gaps at 5839.4 r/s take 2.57 ms, + l(16) = 21.92 ms = 24.49 ms
 * <= 25; b = 17 needs 2.74 + 22.97 > 25), 8 * 16 / 21.92 ms = 5839.4 r/s.
 * Two of them at half the rate each on 16 GPUs: twice that. A model that
 * cannot meet its SLO even alone makes it 0, one with no share does not
 * count; fewer GPUs, less; network delays (le = l + 2 ms) less; several
 * kinds: the one a model needs fewest of. */
static void test_multi_bound(void **state)
{
	(void)state;
	struct sym_profile r50, slow;
	assert_int_equal(sym_profile_init_linear(&r50, "r50", 1.053, 5.072, 64), 0);
	assert_int_equal(sym_profile_init_linear(&slow, "slow", 2.106, 10.144, 64), 0);
	struct sym_bound_model one = bmodel(&r50, 25 * SYM_MS, 1);
	double r8 = sym_multi_bound(&one, 1, 8);
	assert_true(fabs(r8 - 8 * 16 / 0.02192) < 0.1);
	assert_true(fabs(sym_bound_gpus(&one, r8) - 8) < 1e-4);
	struct sym_bound_model two[2] = { bmodel(&r50, 25 * SYM_MS, 0.5), bmodel(&r50, 25 * SYM_MS, 0.5) };
	assert_true(fabs(sym_multi_bound(two, 2, 16) - 2 * r8) < 0.2);
	/* below one GPU a model's batches take turns with others': still bounded, and less */
	double r_half = sym_multi_bound(&one, 1, 0.5), r1 = sym_multi_bound(&one, 1, 1);
	assert_true(r_half > 0 && r_half < r1 && r1 < r8);
	assert_true(fabs(sym_bound_gpus(&one, r_half) - 0.5) < 1e-4);
	/* a model that no batch serves within its SLO (l(1) = 6.1 ms > 6 ms) */
	struct sym_bound_model bad[2] = { bmodel(&r50, 25 * SYM_MS, 0.9), bmodel(&r50, 6 * SYM_MS, 0.1) };
	assert_true(sym_multi_bound(bad, 2, 8) == 0);
	assert_true(sym_bound_gpus(&bad[1], 10) == HUGE_VAL);
	bad[1].share = 0; /* no share: it does not count */
	assert_true(fabs(sym_multi_bound(bad, 2, 8) - r8 / 0.9) < 0.2);
	assert_true(sym_bound_gpus(&one, 0) == 0);
	/* network delays: 2 ms more latency for the same GPU time */
	sym_time le[65];
	for (int b = 0; b <= 64; b++)
		le[b] = r50.lat[b] + 2 * SYM_MS;
	struct sym_bound_model net = one;
	net.le[0] = le;
	assert_true(sym_multi_bound(&net, 1, 8) < r8);
	/* two kinds: the faster one's */
	struct sym_bound_model k2 = bmodel(&slow, 25 * SYM_MS, 1);
	assert_true(sym_multi_bound(&k2, 1, 8) < r8);
	k2.nkinds = 2;
	k2.lat[1] = r50.lat;
	k2.max_batch[1] = 64;
	assert_true(fabs(sym_multi_bound(&k2, 1, 8) - r8) < 0.1);
	/* no models, no GPUs */
	assert_true(sym_multi_bound(&one, 0, 8) == 0);
	assert_true(sym_multi_bound(&one, 1, 0) == 0);
	sym_profile_finish(&r50);
	sym_profile_finish(&slow);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference),
		cmocka_unit_test(test_multi_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
