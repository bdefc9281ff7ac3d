/* Shepherd policy tests: worked examples with exact dispatches and cancels
 * (largest batch first, preemption at lambda times the running batch and not
 * below, the running batch joining the candidate that preempts it, the
 * victim's tie-break, GPU kinds), parameters, the refusal to run without
 * cancel, and conservation on a long mixed workload. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "coredriver.h"
#include "testutil.h"

/* Checks dispatch x: GPU, model, size, decision time and request ids. */
static void expect(const struct cd_dispatch *x, int gpu, int model, int size, sym_time now, const int *ids)
{
	if (x->gpu != gpu || x->model != model || x->size != size || x->now != now)
		fail_msg("dispatch: gpu %d model %d size %d at %.4f ms; want gpu %d model %d size %d at %.4f ms",
			 x->gpu, x->model, x->size, sym_to_ms(x->now), gpu, model, size, sym_to_ms(now));
	for (int i = 0; i < size; i++)
		assert_int_equal(x->ids[i], ids[i]);
}

static void expect_cancel(const struct cd_cancel *x, int gpu, sym_time now, int size)
{
	if (x->gpu != gpu || x->now != now || x->size != size)
		fail_msg("cancel: gpu %d at %.4f ms of %d; want gpu %d at %.4f ms of %d", x->gpu, sym_to_ms(x->now),
			 x->size, gpu, sym_to_ms(now), size);
}

/* The preemption ladder. One model, l(b) = b + 5 ms, max batch 32, SLO
 * 60 ms, one GPU, no network delays; request i arrives at 0.1*i ms (i = 0..35),
 * deadline 60 + 0.1*i. lambda = 3 (the default). The candidate on the GPU
 * gathers its running batch and the queue together (S = Q(m) + Bc(n)).
 *   0.0: request 0 finds the GPU idle and runs alone (until 6).
 *   0.1: candidate {0,1}: 2 < 3 * 1.
 *   0.2: candidate {0,1,2} = 3 >= 3 * 1: the batch {0} is cancelled and
 *        {0,1,2} runs at once (until 8.2).
 *   0.3 .. 0.7: {0,1,2, 3..7} grows to 8 < 9.
 *   0.8: {0..8} = 9 >= 3 * 3: {0,1,2} is cancelled, {0..8} runs (until 14.8).
 *   0.9 .. 2.5: up to 26 < 27.
 *   2.6: {0..26} = 27 >= 3 * 9 (le(27) = 32 <= 60 - 2.6): {0..8} is cancelled
 *        and the 27 run until 34.6. (81 is beyond the largest batch.)
 *   34.6: the GPU frees: 27..35 run until 48.6 <= 62.7.
 * Three cancels; every request is served exactly once; nothing is late.
 * With lambda = 2.5 the first preemption is the same, the second comes at
 * 0.7 ({0..7} = 8 >= 2.5 * 3) and the third at 1.9 ({0..19} = 20 >= 2.5 * 8);
 * then 50 > the largest batch: 20..35 run when the GPU frees (1.9 + l(20) =
 * 26.9). (Before the running batch joined the candidate, the queue alone had
 * to reach 3x: the first preemption came at 0.3 with {1,2,3}, and request 0
 * went back to wait behind it.) */
static void test_worked_example_preemption(void **state)
{
	(void)state;
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "p", 1, 5, 32), 0);
	struct sym_model_cfg mc = { .profile = &p, .slo = 60 * SYM_MS, .name = "m" };
	struct sym_core_cfg cfg = { .nmodels = 1, .models = &mc, .ngpus = 1 };
	struct cd_driver *dr = cd_new();
	cd_start_policy(dr, &cfg, "shepherd");
	for (int i = 0; i < 36; i++)
		cd_arrive(dr, i * 100 * SYM_US, 0);
	cd_run(dr);
	int ids[36];
	for (int i = 0; i < 36; i++)
		ids[i] = i;
	assert_int_equal(dr->nd, 5);
	assert_int_equal(dr->ncancels, 3);
	expect(&dr->d[0], 0, 0, 1, 0, ids);
	expect_cancel(&dr->cancels[0], 0, 200 * SYM_US, 1);
	expect(&dr->d[1], 0, 0, 3, 200 * SYM_US, ids);
	expect_cancel(&dr->cancels[1], 0, 800 * SYM_US, 3);
	expect(&dr->d[2], 0, 0, 9, 800 * SYM_US, ids);
	expect_cancel(&dr->cancels[2], 0, 2600 * SYM_US, 9);
	expect(&dr->d[3], 0, 0, 27, 2600 * SYM_US, ids);
	assert_int_equal(dr->d[3].finish, 34600 * SYM_US);
	expect(&dr->d[4], 0, 0, 9, 34600 * SYM_US, ids + 27);
	assert_int_equal(dr->d[4].finish, 48600 * SYM_US);
	assert_int_equal(dr->ndrops, 0);
	assert_int_equal(dr->nlate, 0);
	cd_free(dr);

	dr = cd_new();
	cd_start_policy(dr, &cfg, "shepherd:lambda=2.5");
	for (int i = 0; i < 36; i++)
		cd_arrive(dr, i * 100 * SYM_US, 0);
	cd_run(dr);
	assert_int_equal(dr->nd, 5);
	assert_int_equal(dr->ncancels, 3);
	expect_cancel(&dr->cancels[0], 0, 200 * SYM_US, 1);
	expect_cancel(&dr->cancels[1], 0, 700 * SYM_US, 3);
	expect_cancel(&dr->cancels[2], 0, 1900 * SYM_US, 8);
	expect(&dr->d[2], 0, 0, 8, 700 * SYM_US, ids);
	expect(&dr->d[3], 0, 0, 20, 1900 * SYM_US, ids);
	expect(&dr->d[4], 0, 0, 16, 26900 * SYM_US, ids + 20);
	assert_int_equal(dr->ndrops, 0);
	assert_int_equal(dr->nlate, 0);
	cd_free(dr);
	sym_profile_finish(&p);
}

/* Largest batch first. Two models on one GPU, no network delays.
 *   A: l(b) = b + 5 ms, SLO 20 ms.   B: l(b) = 2b + 2 ms, SLO 12 ms.
 * Arrivals (id: time, model, deadline):
 *   0: 0 A 20    1: 1 A 21    2: 1.5 B 13.5    3: 2 A 22
 *   4: 2.5 B 14.5    5: 3 A 23    6: 4 A 24
 * lambda = 6 (no preemption: A's candidate, its running request included,
 * reaches 5 < 6 * 1):
 *   0: request 0 runs alone until 6.
 *   6: A's candidate is 4 (1,3,5,6), B's 2 (2,4): the larger, A, runs until 15
 *      (clockwork would run B first: it must start earlier).
 *   15: B's requests cannot finish even alone (15 + 4 > 14.5): dropped.
 * lambda = 3 (the default):
 *   2: A's candidate {0,1,3} (the running request 0 and the queue) = 3 >= 3 *
 *      1: request 0's batch is cancelled and {0,1,3} runs until 10.
 *   2.5, 3, 4: B's {2,4} = 2 and A's {0,1,3,5,6} = 5 stay below 9.
 *   10: B's head has expired (10 + 4 > 13.5): dropped. A's {5,6} (2) is
 *      larger than B's {4} (1): it runs until 17.
 *   17: request 4 has expired too (17 + 4 > 14.5): dropped. */
static void test_largest_first(void **state)
{
	(void)state;
	struct sym_profile pa, pb;
	assert_int_equal(sym_profile_init_linear(&pa, "a", 1, 5, 8), 0);
	assert_int_equal(sym_profile_init_linear(&pb, "b", 2, 2, 8), 0);
	struct sym_model_cfg mc[2] = {
		{ .profile = &pa, .slo = 20 * SYM_MS, .name = "a" },
		{ .profile = &pb, .slo = 12 * SYM_MS, .name = "b" },
	};
	const double at[] = { 0, 1, 1.5, 2, 2.5, 3, 4 };
	const int model[] = { 0, 0, 1, 0, 1, 0, 0 };
	for (int v = 0; v < 2; v++) {
		struct sym_core_cfg cfg = { .nmodels = 2, .models = mc, .ngpus = 1 };
		struct cd_driver *dr = cd_new();
		cd_start_policy(dr, &cfg, v ? "shepherd" : "shepherd:lambda=6");
		for (int i = 0; i < 7; i++)
			cd_arrive(dr, sym_ms(at[i]), model[i]);
		cd_run(dr);
		expect(&dr->d[0], 0, 0, 1, 0, (int[]){ 0 });
		assert_int_equal(dr->ndrops, 2);
		assert_int_equal(dr->drops[0].id, 2);
		assert_int_equal(dr->drops[1].id, 4);
		assert_int_equal(dr->drops[0].why, SYM_DROP_EXPIRED);
		assert_int_equal(dr->drops[1].why, SYM_DROP_EXPIRED);
		if (!v) {
			assert_int_equal(dr->nd, 2);
			assert_int_equal(dr->ncancels, 0);
			expect(&dr->d[1], 0, 0, 4, 6 * SYM_MS, (int[]){ 1, 3, 5, 6 });
			assert_int_equal(dr->d[1].finish, 15 * SYM_MS);
			assert_int_equal(dr->drops[0].now, 15 * SYM_MS);
			assert_int_equal(dr->drops[1].now, 15 * SYM_MS);
		} else {
			assert_int_equal(dr->nd, 3);
			assert_int_equal(dr->ncancels, 1);
			expect_cancel(&dr->cancels[0], 0, 2 * SYM_MS, 1);
			expect(&dr->d[1], 0, 0, 3, 2 * SYM_MS, (int[]){ 0, 1, 3 });
			assert_int_equal(dr->d[1].finish, 10 * SYM_MS);
			expect(&dr->d[2], 0, 0, 2, 10 * SYM_MS, (int[]){ 5, 6 });
			assert_int_equal(dr->d[2].finish, 17 * SYM_MS);
			assert_int_equal(dr->drops[0].now, 10 * SYM_MS);
			assert_int_equal(dr->drops[1].now, 17 * SYM_MS);
		}
		assert_int_equal(dr->nlate, 0);
		cd_free(dr);
	}
	sym_profile_finish(&pa);
	sym_profile_finish(&pb);
}

/* Equal batch sizes: the earlier deadline, then the lower model id. Two
 * models, l(b) = b + 5 ms, one GPU.
 *   Model 0 SLO 20, model 1 SLO 15: request 0 (model 0) runs 0..6; request 1
 *   (model 0, deadline 21) at 1, request 2 (model 1, deadline 17) at 2. At 6
 *   both candidates are 1: model 1's earlier deadline goes first (6..12), then
 *   request 1 (12..18).
 *   Both SLO 20: request 0 (model 1) runs 0..6; requests 1 (model 1) and 2
 *   (model 0) at 1, both deadline 21: model 0's goes first. */
static void test_ties(void **state)
{
	(void)state;
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "p", 1, 5, 8), 0);
	for (int v = 0; v < 2; v++) {
		struct sym_model_cfg mc[2] = {
			{ .profile = &p, .slo = 20 * SYM_MS, .name = "a" },
			{ .profile = &p, .slo = (v ? 20 : 15) * SYM_MS, .name = "b" },
		};
		struct sym_core_cfg cfg = { .nmodels = 2, .models = mc, .ngpus = 1 };
		struct cd_driver *dr = cd_new();
		cd_start_policy(dr, &cfg, "shepherd");
		if (!v) {
			cd_arrive(dr, 0, 0);
			cd_arrive(dr, SYM_MS, 0);
			cd_arrive(dr, 2 * SYM_MS, 1);
		} else {
			cd_arrive(dr, 0, 1);
			cd_arrive(dr, SYM_MS, 1);
			cd_arrive(dr, SYM_MS, 0);
		}
		cd_run(dr);
		assert_int_equal(dr->nd, 3);
		expect(&dr->d[0], 0, v, 1, 0, (int[]){ 0 });
		expect(&dr->d[1], 0, v ? 0 : 1, 1, 6 * SYM_MS, (int[]){ 2 });
		expect(&dr->d[2], 0, v ? 1 : 0, 1, 12 * SYM_MS, (int[]){ 1 });
		assert_int_equal(dr->ndrops, 0);
		assert_int_equal(dr->ncancels, 0);
		cd_free(dr);
	}
	sym_profile_finish(&p);
}

/* The victim among equal running batches: the one that started latest. Two
 * GPUs, l(b) = b + 5 ms, SLO 20 ms.
 *   0: request 0 on GPU 0 (0..6).   1: request 1 on GPU 1 (1..7).
 *   2: requests 2, 3, 4. At the first, each GPU's candidate (its running
 *      request and the queue) is 2. At the second it is 3 >= 3 * 1 on both
 *      GPUs; GPU 1's batch started later (less work lost): it is cancelled
 *      and {1,2,3} runs there (2..10). At the third GPU 0's candidate {0,4}
 *      is 2, GPU 1's 4 < 9.
 *   6: GPU 0 frees: request 4 runs (6..12 <= 22). */
static void test_victim_latest_start(void **state)
{
	(void)state;
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "p", 1, 5, 8), 0);
	struct sym_model_cfg mc = { .profile = &p, .slo = 20 * SYM_MS, .name = "m" };
	struct sym_core_cfg cfg = { .nmodels = 1, .models = &mc, .ngpus = 2 };
	struct cd_driver *dr = cd_new();
	cd_start_policy(dr, &cfg, "shepherd");
	cd_arrive(dr, 0, 0);
	cd_arrive(dr, SYM_MS, 0);
	for (int i = 0; i < 3; i++)
		cd_arrive(dr, 2 * SYM_MS, 0);
	cd_run(dr);
	assert_int_equal(dr->nd, 4);
	assert_int_equal(dr->ncancels, 1);
	expect(&dr->d[0], 0, 0, 1, 0, (int[]){ 0 });
	expect(&dr->d[1], 1, 0, 1, SYM_MS, (int[]){ 1 });
	expect_cancel(&dr->cancels[0], 1, 2 * SYM_MS, 1);
	expect(&dr->d[2], 1, 0, 3, 2 * SYM_MS, (int[]){ 1, 2, 3 });
	expect(&dr->d[3], 0, 0, 1, 6 * SYM_MS, (int[]){ 4 });
	assert_int_equal(dr->d[3].finish, 12 * SYM_MS);
	assert_int_equal(dr->ndrops, 0);
	assert_int_equal(dr->nlate, 0);
	cd_free(dr);
	sym_profile_finish(&p);
}

/* Two kinds.
 * (a) The freed GPU's kind sizes the batch. GPU 0 slow, GPU 1 fast.
 *   A: fast l(b) = b + 5, slow l(b) = 2b + 4 ms, SLO 20 ms.
 *   B: fast l = 10 ms, slow l = 200 ms (never feasible: SLO 100 ms).
 *   lambda = 100 (no preemption).
 *   0: B's request 0 cannot run on the slow GPU 0: it runs on GPU 1 (0..10).
 *   1: A's request 1 (deadline 21) on GPU 0 (slow, 1..7).
 *   2: A's requests 2..7 (deadline 22) queue.
 *   7: GPU 0 frees: on the slow kind 2b + 4 <= 15 for b <= 5: {2..6} (7..21);
 *      the fast kind would take all 6.
 *   10: GPU 1 frees: request 7 alone on the fast kind (10..16).
 * (b) The busy GPU's kind sizes the candidate that may preempt it. GPU 0 fast,
 *   GPU 1 slow. A: fast l(b) = b + 5, slow l(b) = 2b + 10 ms, SLO 17 ms.
 *   B: l = 30 ms on both kinds, SLO 100 ms. lambda = 3.
 *   0: B's request 0 on GPU 0 (fast, 0..30).  1: B's request 1 on GPU 1 (slow,
 *      1..31).
 *   2, 3, 4: A's requests 2, 3, 4 (deadlines 19, 20, 21). At 4 the queue holds
 *      3; budget 19 - 4 = 15: the fast candidate is 3 (b + 5 <= 15), the slow
 *      one 2 (2b + 10 <= 15). Only GPU 0's batch may be preempted (3 >= 3 * 1;
 *      2 < 3), although GPU 1's started later: B's request 0 is cancelled,
 *      {2,3,4} runs on GPU 0 (4..12).
 *   12: GPU 0 frees: the re-queued request 0 runs (12..42). */
static void test_heterogeneous(void **state)
{
	(void)state;
	struct sym_kind kinds[2] = { { .name = "fast" }, { .name = "slow" } };
	{
		struct sym_profile af, as, bf, bs;
		assert_int_equal(sym_profile_init_linear(&af, "af", 1, 5, 8), 0);
		assert_int_equal(sym_profile_init_linear(&as, "as", 2, 4, 8), 0);
		assert_int_equal(sym_profile_init_linear(&bf, "bf", 0, 10, 8), 0);
		assert_int_equal(sym_profile_init_linear(&bs, "bs", 0, 200, 8), 0);
		struct sym_model_cfg mc[2] = {
			{ .profile = &af, .slo = 20 * SYM_MS, .name = "a", .by_kind = { NULL, &as } },
			{ .profile = &bf, .slo = 100 * SYM_MS, .name = "b", .by_kind = { NULL, &bs } },
		};
		int gpu_kind[2] = { 1, 0 };
		struct sym_core_cfg cfg = { .nmodels = 2, .models = mc, .ngpus = 2, .nkinds = 2,
					    .kinds = kinds, .gpu_kind = gpu_kind };
		struct cd_driver *dr = cd_new();
		cd_start_policy(dr, &cfg, "shepherd:lambda=100");
		cd_arrive(dr, 0, 1);
		cd_arrive(dr, SYM_MS, 0);
		for (int i = 0; i < 6; i++)
			cd_arrive(dr, 2 * SYM_MS, 0);
		cd_run(dr);
		assert_int_equal(dr->nd, 4);
		expect(&dr->d[0], 1, 1, 1, 0, (int[]){ 0 });
		assert_int_equal(dr->d[0].kind, 0);
		expect(&dr->d[1], 0, 0, 1, SYM_MS, (int[]){ 1 });
		assert_int_equal(dr->d[1].kind, 1);
		expect(&dr->d[2], 0, 0, 5, 7 * SYM_MS, (int[]){ 2, 3, 4, 5, 6 });
		assert_int_equal(dr->d[2].finish, 21 * SYM_MS);
		expect(&dr->d[3], 1, 0, 1, 10 * SYM_MS, (int[]){ 7 });
		assert_int_equal(dr->ndrops, 0);
		assert_int_equal(dr->ncancels, 0);
		assert_int_equal(dr->nlate, 0);
		cd_free(dr);
		sym_profile_finish(&af);
		sym_profile_finish(&as);
		sym_profile_finish(&bf);
		sym_profile_finish(&bs);
	}
	{
		struct sym_profile af, as, b;
		assert_int_equal(sym_profile_init_linear(&af, "af", 1, 5, 8), 0);
		assert_int_equal(sym_profile_init_linear(&as, "as", 2, 10, 8), 0);
		assert_int_equal(sym_profile_init_linear(&b, "b", 0, 30, 8), 0);
		struct sym_model_cfg mc[2] = {
			{ .profile = &af, .slo = 17 * SYM_MS, .name = "a", .by_kind = { NULL, &as } },
			{ .profile = &b, .slo = 100 * SYM_MS, .name = "b", .by_kind = { NULL, &b } },
		};
		int gpu_kind[2] = { 0, 1 };
		struct sym_core_cfg cfg = { .nmodels = 2, .models = mc, .ngpus = 2, .nkinds = 2,
					    .kinds = kinds, .gpu_kind = gpu_kind };
		struct cd_driver *dr = cd_new();
		cd_start_policy(dr, &cfg, "shepherd");
		cd_arrive(dr, 0, 1);
		cd_arrive(dr, SYM_MS, 1);
		for (int i = 2; i <= 4; i++)
			cd_arrive(dr, i * SYM_MS, 0);
		cd_run(dr);
		assert_int_equal(dr->nd, 4);
		assert_int_equal(dr->ncancels, 1);
		expect(&dr->d[0], 0, 1, 1, 0, (int[]){ 0 });
		expect(&dr->d[1], 1, 1, 1, SYM_MS, (int[]){ 1 });
		expect_cancel(&dr->cancels[0], 0, 4 * SYM_MS, 1);
		expect(&dr->d[2], 0, 0, 3, 4 * SYM_MS, (int[]){ 2, 3, 4 });
		assert_int_equal(dr->d[2].finish, 12 * SYM_MS);
		expect(&dr->d[3], 0, 1, 1, 12 * SYM_MS, (int[]){ 0 });
		assert_int_equal(dr->ndrops, 0);
		assert_int_equal(dr->nlate, 0);
		cd_free(dr);
		sym_profile_finish(&af);
		sym_profile_finish(&as);
		sym_profile_finish(&b);
	}
}

static void nop_dispatch(void *ctx, const struct sym_dispatch *d) { (void)ctx, (void)d; }
static void nop_drop(void *ctx, struct sym_request *r, enum sym_drop_reason why, sym_time now)
{
	(void)ctx, (void)r, (void)why, (void)now;
}

/* Preemption needs a driver that can cancel: without one the core refuses
 * to start, with a message. */
static void test_needs_cancel(void **state)
{
	(void)state;
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "p", 1, 5, 8), 0);
	struct sym_model_cfg mc = { .profile = &p, .slo = 20 * SYM_MS, .name = "m" };
	struct sym_core_cfg cfg = { .nmodels = 1, .models = &mc, .ngpus = 2 };
	char err[256] = "";
	assert_int_equal(sym_policy_parse("shepherd", &cfg.policy, err, sizeof(err)), 0);
	struct sym_sink sink = { .dispatch = nop_dispatch, .drop = nop_drop, .cancel = NULL };
	struct sym_core *c = NULL;
	assert_int_equal(sym_core_create_err(&c, &cfg, &sink, err, sizeof(err)), -EINVAL);
	assert_null(c);
	assert_contains(err, "shepherd");
	assert_contains(err, "cancel");
	sym_profile_finish(&p);
}

static void test_params(void **state)
{
	(void)state;
	struct sym_policy p;
	char err[256], buf[64];
	const struct {
		const char *spec, *canon;
		double lambda;
	} good[] = {
		{ "shepherd", "shepherd", 3 },
		{ "shepherd:lambda=2", "shepherd:lambda=2", 2 },
		{ "shepherd:lambda=1.5", "shepherd:lambda=1.5", 1.5 },
		{ "shepherd:2.9", "shepherd:lambda=2.9", 2.9 },
		{ "shepherd:lambda=3", "shepherd", 3 },
		{ "shepherd:lambda=1", "shepherd:lambda=1", 1 },
		{ "shepherd:lambda=0.1e2", "shepherd:lambda=10", 10 },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (sym_policy_parse(good[i].spec, &p, err, sizeof(err)))
			fail_msg("%s: %s", good[i].spec, err);
		assert_true(cd_param(&p, "lambda") == good[i].lambda);
		assert_string_equal(sym_policy_format(&p, buf, sizeof(buf)), good[i].canon);
		struct sym_policy q;
		assert_int_equal(sym_policy_parse(buf, &q, err, sizeof(err)), 0);
		assert_true(sym_policy_equal(&q, &p));
	}
	const struct {
		const char *spec, *names;
	} bad[] = {
		{ "shepherd:lambda=0.5", "lambda" }, { "shepherd:lambda=0.999", "'0.999'" },
		{ "shepherd:lambda=0", "lambda" },   { "shepherd:lambda=-3", "'-3'" },
		{ "shepherd:lambda=x", "'x'" },      { "shepherd:lambda=inf", "'inf'" },
		{ "shepherd:lambda=nan", "'nan'" },  { "shepherd:lambda=3ms", "'3ms'" },
		{ "shepherd:lambda=", "lambda" },    { "shepherd:beta=3", "'beta'" },
		{ "shepherd:lambda=2,", "trailing comma" }, { "shepherd:", "shepherd" },
		{ "shepherd:0.5", "'0.5'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (sym_policy_parse(bad[i].spec, &p, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' accepted", bad[i].spec);
		assert_contains(err, "shepherd");
		assert_contains(err, bad[i].names);
	}
	char line[512];
	assert_true(sym_policy_help_line(sym_policy_find("shepherd"), 0, line, sizeof(line)));
	assert_true(sym_policy_is_scheduler(&p));
}

/* ---- conservation on a long mixed workload ---- */


/* Every batch met its deadline; every drop was a head that could not finish
 * even alone on the fastest kind; every dispatch onto a GPU whose batch had
 * not finished followed a cancel and is at least lambda times that batch
 * (cd_run checks conservation, cancelled requests included). */
static void check_run(const struct cd_driver *dr, double lambda)
{
	assert_int_equal(dr->nlate, 0);
	for (int i = 0; i < dr->ndrops; i++) {
		const struct cd_drop *x = &dr->drops[i];
		const struct sym_request *r = &dr->req[x->id];
		assert_int_equal(x->why, SYM_DROP_EXPIRED);
		assert_true(x->now + sym_core_le_min(dr->core, r->model)[1] > r->deadline);
	}
	int last[CD_MAXG];
	for (int g = 0; g < CD_MAXG; g++)
		last[g] = -1;
	int preempted = 0;
	for (int i = 0; i < dr->nd; i++) {
		const struct cd_dispatch *x = &dr->d[i];
		assert_true(x->size <= sym_core_max_batch(dr->core, x->model, x->kind));
		for (int j = 0; j < x->size; j++) {
			sym_time dl = dr->req[x->ids[j]].deadline;
			assert_true(x->now + sym_core_le(dr->core, x->model, x->kind)[x->size] <= dl);
		}
		int p = last[x->gpu];
		if (p >= 0 && dr->d[p].finish > x->now) {
			preempted++;
			assert_true((double)x->size >= lambda * dr->d[p].size);
		}
		last[x->gpu] = i;
	}
	assert_int_equal(preempted, dr->ncancels);
}

static void test_conservation(void **state)
{
	(void)state;
	struct sym_profile p[3], slow[3];
	assert_int_equal(sym_profile_init_linear(&p[0], "m0", 0.5, 3, 16), 0);
	assert_int_equal(sym_profile_init_linear(&p[1], "m1", 1, 6, 8), 0);
	assert_int_equal(sym_profile_init_linear(&p[2], "m2", 0.2, 1, 32), 0);
	assert_int_equal(sym_profile_init_linear(&slow[0], "s0", 1.5, 8, 16), 0);
	assert_int_equal(sym_profile_init_linear(&slow[1], "s1", 3, 15, 4), 0);
	assert_int_equal(sym_profile_init_linear(&slow[2], "s2", 0.5, 3, 32), 0);
	struct sym_model_cfg mc[3] = {
		{ .profile = &p[0], .slo = 25 * SYM_MS, .name = "m0", .by_kind = { NULL, &slow[0] } },
		{ .profile = &p[1], .slo = 40 * SYM_MS, .name = "m1", .by_kind = { NULL, &slow[1] } },
		{ .profile = &p[2], .slo = 10 * SYM_MS, .name = "m2", .by_kind = { NULL, &slow[2] } },
	};
	struct sym_kind kinds[2] = { { .name = "fast" }, { .name = "slow" } };
	int gpu_kind[4] = { 0, 1, 0, 1 };
	const char *pols[] = { "shepherd", "shepherd:lambda=1", "shepherd:lambda=1.5" };
	const double lambdas[] = { 3, 1, 1.5 };
	for (int het = 0; het < 2; het++) {
		for (size_t i = 0; i < 3; i++) {
			struct sym_core_cfg cfg = {
				.nmodels = 3,
				.models = mc,
				.ngpus = het ? 4 : 3,
				.nkinds = het ? 2 : 1,
				.kinds = het ? kinds : NULL,
				.gpu_kind = het ? gpu_kind : NULL,
				.net = { .ctrl = 200 * SYM_US, .data = 10 * SYM_US, .resp = 100 * SYM_US },
			};
			struct cd_driver *dr = cd_new();
			cd_start_policy(dr, &cfg, pols[i]);
			cd_mixed_workload(dr, 3, mc, 7);
			cd_run(dr);
			check_run(dr, lambdas[i]);
			assert_true(dr->nreq > 4000);
			/* the overload drops some and preempts; a preemption per
			 * arrival at most */
			assert_true(dr->ndrops > 0 && dr->ndrops < dr->nreq);
			assert_true(dr->ncancels > 0 && dr->ncancels <= dr->nreq);
			if (het) {
				int on_slow = 0;
				for (int k = 0; k < dr->nd; k++)
					on_slow += dr->d[k].kind == 1;
				assert_true(on_slow > 0);
			}
			cd_free(dr);
		}
	}
	for (int m = 0; m < 3; m++) {
		sym_profile_finish(&p[m]);
		sym_profile_finish(&slow[m]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_example_preemption),
		cmocka_unit_test(test_largest_first),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_victim_latest_start),
		cmocka_unit_test(test_heterogeneous),
		cmocka_unit_test(test_needs_cancel),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_conservation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
