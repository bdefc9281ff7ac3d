/* Clockwork policy tests: worked examples with exact dispatches (the earliest
 * latest executable moment wins, ties to the lower model, pow2 sizes, GPU
 * kinds), parameters, and conservation on a long mixed workload. */
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
		fail_msg("dispatch: gpu %d model %d size %d at %.3f ms; want gpu %d model %d size %d at %.3f ms",
			 x->gpu, x->model, x->size, sym_to_ms(x->now), gpu, model, size, sym_to_ms(now));
	for (int i = 0; i < size; i++)
		assert_int_equal(x->ids[i], ids[i]);
}

/* Two models on one GPU, no network delays (le = l), lazy drop.
 *   A: l(b) = b + 5 ms, SLO 20 ms.   B: l(b) = 2b + 2 ms, SLO 12 ms.
 * Arrivals (id: time, model, deadline):
 *   0: 0 A 20    1: 1 A 21    2: 1.5 B 13.5    3: 2 A 22
 *   4: 2.5 B 14.5    5: 3 A 23    6: 4 A 24
 * t=0: the GPU is idle: request 0 runs alone at once (work-conserving),
 *      until l(1) = 6.
 * t=6: A's queue is 1,3,5,6 (d = 21, budget 15): every size up to 4 fits,
 *      the largest feasible is 4, latest = 21 - l(4) = 21 - 9 = 12.
 *      B's queue is 2,4 (d = 13.5, budget 7.5): 2b + 2 <= 7.5 for b <= 2,
 *      latest = 13.5 - l(2) = 13.5 - 6 = 7.5.
 *      B must start first (7.5 < 12): B's 2 go although A's batch is larger.
 *      They finish at 12.
 * t=12: A's 4: latest 12 >= now, still feasible: they run 12..21, meeting
 *      request 1's deadline exactly.
 * Nothing is dropped. (Largest-batch-first would run A at 6 and lose B.) */
static void test_worked_example(void **state)
{
	(void)state;
	struct sym_profile pa, pb;
	assert_int_equal(sym_profile_init_linear(&pa, "a", 1, 5, 8), 0);
	assert_int_equal(sym_profile_init_linear(&pb, "b", 2, 2, 8), 0);
	struct sym_model_cfg mc[2] = {
		{ .profile = &pa, .slo = 20 * SYM_MS, .name = "a" },
		{ .profile = &pb, .slo = 12 * SYM_MS, .name = "b" },
	};
	struct sym_core_cfg cfg = { .nmodels = 2, .models = mc, .ngpus = 1 };
	struct cd_driver *dr = cd_new();
	cd_start_policy(dr, &cfg, "clockwork");
	const double at[] = { 0, 1, 1.5, 2, 2.5, 3, 4 };
	const int model[] = { 0, 0, 1, 0, 1, 0, 0 };
	for (int i = 0; i < 7; i++)
		cd_arrive(dr, sym_ms(at[i]), model[i]);
	cd_run(dr);
	assert_int_equal(dr->nd, 3);
	expect(&dr->d[0], 0, 0, 1, 0, (int[]){ 0 });
	expect(&dr->d[1], 0, 1, 2, 6 * SYM_MS, (int[]){ 2, 4 });
	assert_int_equal(dr->d[1].finish, 12 * SYM_MS);
	expect(&dr->d[2], 0, 0, 4, 12 * SYM_MS, (int[]){ 1, 3, 5, 6 });
	assert_int_equal(dr->d[2].finish, 21 * SYM_MS);
	assert_int_equal(dr->ndrops, 0);
	assert_int_equal(dr->nlate, 0);
	assert_int_equal(dr->ncancels, 0);
	cd_free(dr);
	sym_profile_finish(&pa);
	sym_profile_finish(&pb);
}

/* Equal latest moments go to the lower model id. Two identical models
 * (l(b) = b + 5 ms, SLO 20 ms), one GPU: request 0 (model 1) runs at 0 until
 * 6; requests 1 (model 1) and 2 (model 0) arrive at 1 ms, both with deadline
 * 21 and latest 21 - 6 = 15. At 6 model 0's request goes first (until 12),
 * then model 1's. */
static void test_tie_lower_model(void **state)
{
	(void)state;
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "p", 1, 5, 8), 0);
	struct sym_model_cfg mc[2] = {
		{ .profile = &p, .slo = 20 * SYM_MS, .name = "a" },
		{ .profile = &p, .slo = 20 * SYM_MS, .name = "b" },
	};
	struct sym_core_cfg cfg = { .nmodels = 2, .models = mc, .ngpus = 1 };
	struct cd_driver *dr = cd_new();
	cd_start_policy(dr, &cfg, "clockwork");
	cd_arrive(dr, 0, 1);
	cd_arrive(dr, SYM_MS, 1);
	cd_arrive(dr, SYM_MS, 0);
	cd_run(dr);
	assert_int_equal(dr->nd, 3);
	expect(&dr->d[0], 0, 1, 1, 0, (int[]){ 0 });
	expect(&dr->d[1], 0, 0, 1, 6 * SYM_MS, (int[]){ 2 });
	expect(&dr->d[2], 0, 1, 1, 12 * SYM_MS, (int[]){ 1 });
	assert_int_equal(dr->ndrops, 0);
	cd_free(dr);
	sym_profile_finish(&p);
}

/* pow2 restricts the sizes. One model, l(b) = b + 5 ms, SLO 20 ms, one GPU.
 * Request 0 at 0 runs alone until 6; requests 1, 2, 3 arrive at 1, 2, 3 ms
 * (deadlines 21, 22, 23). At 6 (budget 15) every size up to 3 fits:
 *   clockwork:        3 (1,2,3) at 6, until 6 + l(3) = 14;
 *   clockwork:pow2=1: 2 (1,2) at 6, until 13 (latest 21 - 7 = 14), then
 *                     3 alone at 13, until 19 <= 23. */
static void test_pow2(void **state)
{
	(void)state;
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "p", 1, 5, 8), 0);
	struct sym_model_cfg mc = { .profile = &p, .slo = 20 * SYM_MS, .name = "m" };
	for (int v = 0; v < 2; v++) {
		struct sym_core_cfg cfg = { .nmodels = 1, .models = &mc, .ngpus = 1 };
		struct cd_driver *dr = cd_new();
		cd_start_policy(dr, &cfg, v ? "clockwork:pow2=1" : "clockwork");
		for (int i = 0; i < 4; i++)
			cd_arrive(dr, i * SYM_MS, 0);
		cd_run(dr);
		expect(&dr->d[0], 0, 0, 1, 0, (int[]){ 0 });
		if (!v) {
			assert_int_equal(dr->nd, 2);
			expect(&dr->d[1], 0, 0, 3, 6 * SYM_MS, (int[]){ 1, 2, 3 });
		} else {
			assert_int_equal(dr->nd, 3);
			expect(&dr->d[1], 0, 0, 2, 6 * SYM_MS, (int[]){ 1, 2 });
			expect(&dr->d[2], 0, 0, 1, 13 * SYM_MS, (int[]){ 3 });
			assert_int_equal(dr->d[2].finish, 19 * SYM_MS);
		}
		assert_int_equal(dr->ndrops, 0);
		assert_int_equal(dr->nlate, 0);
		cd_free(dr);
	}
	/* pow2 with a deadline-limited fit: 7 queued, the fit is 7, the batch 4.
	 * Requests 1..7 at 0.5 ms steps (0.5..3.5, deadlines 20.5..23.5). At 6
	 * (budget 14.5, b <= 9.5): 4 (1..4) until 15. At 15 request 5's
	 * budget is 7.5: b <= 2.5, 2 (5, 6) until 22. At 22 request 7 (deadline
	 * 23.5) cannot finish even alone (22 + 6 > 23.5): dropped as expired. */
	struct sym_core_cfg cfg = { .nmodels = 1, .models = &mc, .ngpus = 1 };
	struct cd_driver *dr = cd_new();
	cd_start_policy(dr, &cfg, "clockwork:pow2=1");
	for (int i = 0; i < 8; i++)
		cd_arrive(dr, i * 500 * SYM_US, 0);
	cd_run(dr);
	assert_int_equal(dr->nd, 3);
	expect(&dr->d[1], 0, 0, 4, 6 * SYM_MS, (int[]){ 1, 2, 3, 4 });
	expect(&dr->d[2], 0, 0, 2, 15 * SYM_MS, (int[]){ 5, 6 });
	assert_int_equal(dr->ndrops, 1);
	assert_int_equal(dr->drops[0].id, 7);
	assert_int_equal(dr->drops[0].why, SYM_DROP_EXPIRED);
	assert_int_equal(dr->drops[0].now, 22 * SYM_MS);
	cd_free(dr);
	sym_profile_finish(&p);
}

/* Two kinds. GPU 0 is slow (kind 1), GPU 1 fast (kind 0).
 *   A: fast l(b) = b + 5, slow l(b) = 2b + 4 ms, SLO 20 ms.
 *   B: fast l = 10 ms, slow l = 200 ms (never feasible: SLO 100 ms).
 * t=0: B's request 0: GPU 0 is free but its kind cannot serve B (200 > 100):
 *      it runs on GPU 1 (fast), until 10.
 * t=1: A's request 1 (deadline 21): GPU 0 (slow), l(1) = 6, until 7.
 * t=2: A's requests 2..7 (deadline 22) queue: both GPUs busy.
 * t=7: GPU 0 frees. On the slow kind 2b + 4 <= 22 - 7 = 15 for b <= 5: a
 *      batch of 5 (2..6), until 21. (The fast kind's table would allow all 6.)
 * t=10: GPU 1 frees: request 7 (budget 12) runs alone on the fast kind, until
 *      16. */
static void test_heterogeneous(void **state)
{
	(void)state;
	struct sym_profile af, as, bf, bs;
	assert_int_equal(sym_profile_init_linear(&af, "af", 1, 5, 8), 0);
	assert_int_equal(sym_profile_init_linear(&as, "as", 2, 4, 8), 0);
	assert_int_equal(sym_profile_init_linear(&bf, "bf", 0, 10, 8), 0);
	assert_int_equal(sym_profile_init_linear(&bs, "bs", 0, 200, 8), 0);
	struct sym_model_cfg mc[2] = {
		{ .profile = &af, .slo = 20 * SYM_MS, .name = "a", .by_kind = { NULL, &as } },
		{ .profile = &bf, .slo = 100 * SYM_MS, .name = "b", .by_kind = { NULL, &bs } },
	};
	struct sym_kind kinds[2] = { { .name = "fast" }, { .name = "slow" } };
	int gpu_kind[2] = { 1, 0 };
	struct sym_core_cfg cfg = { .nmodels = 2, .models = mc, .ngpus = 2, .nkinds = 2, .kinds = kinds,
				    .gpu_kind = gpu_kind };
	struct cd_driver *dr = cd_new();
	cd_start_policy(dr, &cfg, "clockwork");
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
	assert_int_equal(dr->d[1].finish, 7 * SYM_MS);
	expect(&dr->d[2], 0, 0, 5, 7 * SYM_MS, (int[]){ 2, 3, 4, 5, 6 });
	assert_int_equal(dr->d[2].finish, 21 * SYM_MS);
	expect(&dr->d[3], 1, 0, 1, 10 * SYM_MS, (int[]){ 7 });
	assert_int_equal(dr->d[3].finish, 16 * SYM_MS);
	assert_int_equal(dr->ndrops, 0);
	assert_int_equal(dr->nlate, 0);
	cd_free(dr);
	sym_profile_finish(&af);
	sym_profile_finish(&as);
	sym_profile_finish(&bf);
	sym_profile_finish(&bs);
}

/* A queue whose head cannot run on the only idle kind is not stranded: a
 * timer drops the head when it expires, and the request behind it, which
 * fits the idle kind, runs then. GPU 0 is slow, GPU 1 fast.
 *   A: fast l(b) = b + 5, slow l(b) = 2b + 10 ms.
 *   B: fast l = 50 ms, slow l = 200 ms (never feasible: SLO 100 ms).
 * t=0: B's request 0 runs on GPU 1 (fast; the slow kind cannot serve it),
 *      until 50. GPU 0 stays idle.
 * t=1: A's request 1, deadline 12 (budget 11): the slow kind needs 12, so it
 *      waits for a fast GPU; it cannot finish even alone on the fastest kind
 *      once now > 12 - 6 = 6 ms.
 *      A's request 2, deadline 30, queues behind it (a batch is a prefix of
 *      the deadline-ordered queue, so it cannot go without request 1).
 * t=6 ms + 1 ns: the timer fires: request 1 is dropped as expired and
 *      request 2 runs alone on GPU 0 (12 <= 30 - 6), until 18 ms + 1 ns. */
static void test_idle_kind_not_stranded(void **state)
{
	(void)state;
	struct sym_profile af, as, bf, bs;
	assert_int_equal(sym_profile_init_linear(&af, "af", 1, 5, 8), 0);
	assert_int_equal(sym_profile_init_linear(&as, "as", 2, 10, 8), 0);
	assert_int_equal(sym_profile_init_linear(&bf, "bf", 0, 50, 8), 0);
	assert_int_equal(sym_profile_init_linear(&bs, "bs", 0, 200, 8), 0);
	struct sym_model_cfg mc[2] = {
		{ .profile = &af, .slo = 20 * SYM_MS, .name = "a", .by_kind = { NULL, &as } },
		{ .profile = &bf, .slo = 100 * SYM_MS, .name = "b", .by_kind = { NULL, &bs } },
	};
	struct sym_kind kinds[2] = { { .name = "fast" }, { .name = "slow" } };
	int gpu_kind[2] = { 1, 0 };
	struct sym_core_cfg cfg = { .nmodels = 2, .models = mc, .ngpus = 2, .nkinds = 2, .kinds = kinds,
				    .gpu_kind = gpu_kind };
	for (int v = 0; v < 2; v++) {
		struct cd_driver *dr = cd_new();
		cd_start_policy(dr, &cfg, v ? "clockwork:pow2=1" : "clockwork");
		cd_arrive(dr, 0, 1);
		cd_arrive_dl(dr, SYM_MS, 0, 12 * SYM_MS);
		cd_arrive_dl(dr, SYM_MS, 0, 30 * SYM_MS);
		cd_run(dr);
		assert_int_equal(dr->nd, 2);
		expect(&dr->d[0], 1, 1, 1, 0, (int[]){ 0 });
		expect(&dr->d[1], 0, 0, 1, 6 * SYM_MS + 1, (int[]){ 2 });
		assert_int_equal(dr->d[1].finish, 18 * SYM_MS + 1);
		assert_int_equal(dr->ndrops, 1);
		assert_int_equal(dr->drops[0].id, 1);
		assert_int_equal(dr->drops[0].why, SYM_DROP_EXPIRED);
		assert_int_equal(dr->drops[0].now, 6 * SYM_MS + 1);
		cd_free(dr);
	}
	sym_profile_finish(&af);
	sym_profile_finish(&as);
	sym_profile_finish(&bf);
	sym_profile_finish(&bs);
}

static void test_params(void **state)
{
	(void)state;
	struct sym_policy p;
	char err[256], buf[64];
	const struct {
		const char *spec, *canon;
		bool pow2;
	} good[] = {
		{ "clockwork", "clockwork", false },        { "clockwork:pow2=1", "clockwork:pow2=1", true },
		{ "clockwork:pow2=true", "clockwork:pow2=1", true }, { "clockwork:pow2=0", "clockwork", false },
		{ "clockwork:pow2=false", "clockwork", false }, { "clockwork:pow2=1,pow2=0", "clockwork", false },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (sym_policy_parse(good[i].spec, &p, err, sizeof(err)))
			fail_msg("%s: %s", good[i].spec, err);
		assert_true(p.u.clockwork.pow2 == good[i].pow2);
		assert_string_equal(sym_policy_format(&p, buf, sizeof(buf)), good[i].canon);
		struct sym_policy q;
		assert_int_equal(sym_policy_parse(buf, &q, err, sizeof(err)), 0);
		assert_true(q.u.clockwork.pow2 == p.u.clockwork.pow2);
	}
	const struct {
		const char *spec, *names;
	} bad[] = {
		{ "clockwork:pow2=2", "'2'" },       { "clockwork:pow2=yes", "'yes'" },
		{ "clockwork:pow2=", "pow2" },       { "clockwork:size=4", "'size'" },
		{ "clockwork:pow2", "'pow2'" },      { "clockwork:pow2=1,", "trailing comma" },
		{ "clockwork:", "clockwork" },       { "clockwork:pow2=1,x=1", "'x'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (sym_policy_parse(bad[i].spec, &p, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' accepted", bad[i].spec);
		assert_contains(err, "clockwork");
		assert_contains(err, bad[i].names);
	}
	assert_non_null(sym_policy_clockwork.params_help);
	assert_null(sym_policy_clockwork.exec);
	assert_non_null(sym_policy_clockwork.sched);
}

/* ---- conservation on a long mixed workload ---- */


/* Every batch met its deadline, every drop was a head that could not finish
 * even alone on the fastest kind (cd_run checks conservation). */
static void check_run(const struct cd_driver *dr)
{
	assert_int_equal(dr->nlate, 0);
	for (int i = 0; i < dr->ndrops; i++) {
		const struct cd_drop *x = &dr->drops[i];
		const struct sym_request *r = &dr->req[x->id];
		assert_int_equal(x->why, SYM_DROP_EXPIRED);
		assert_true(x->now + dr->core->shards[r->model].le[1] > r->deadline);
	}
	for (int i = 0; i < dr->nd; i++) {
		const struct cd_dispatch *x = &dr->d[i];
		assert_true(x->size <= dr->core->shards[x->model].maxb_k[x->kind]);
		for (int j = 0; j < x->size; j++) {
			sym_time dl = dr->req[x->ids[j]].deadline;
			assert_true(x->now + dr->core->shards[x->model].lek[x->kind][x->size] <= dl);
		}
	}
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
	const char *pols[] = { "clockwork", "clockwork:pow2=1" };
	for (int het = 0; het < 2; het++) {
		for (size_t i = 0; i < 2; i++) {
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
			cd_mixed_workload(dr, 3, mc, 42);
			cd_run(dr);
			check_run(dr);
			/* the overload drops some; the first underload phase none */
			assert_true(dr->nreq > 4000);
			assert_true(dr->ndrops > 0 && dr->ndrops < dr->nreq);
			for (int k = 0; k < dr->ndrops; k++)
				assert_true(dr->req[dr->drops[k].id].arrival >= 400 * SYM_MS);
			if (i == 1)
				for (int k = 0; k < dr->nd; k++)
					assert_int_equal(dr->d[k].size & (dr->d[k].size - 1), 0);
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
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_tie_lower_model),
		cmocka_unit_test(test_pow2),
		cmocka_unit_test(test_heterogeneous),
		cmocka_unit_test(test_idle_kind_not_stranded),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_conservation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
