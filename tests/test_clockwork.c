/* Clockwork policy tests. The published INFER4 behaviour (the default), with
 * exact dispatch traces: batches decided at schedule-ahead time, sizes rounded
 * down to powers of two, the internal deadline, strategies consumed when
 * tried, older requests skipped, late actions rejected by the worker, the
 * estimator following measured latencies. The older rule (clockwork:legacy:
 * the earliest latest executable moment wins, ties to the lower model, pow2
 * sizes, GPU kinds) gives the dispatches it always gave. Parameters, and
 * conservation on a long mixed workload. */
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

/* ---- the older rule: clockwork:legacy ---- */

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
	cd_start_policy(dr, &cfg, "clockwork:legacy");
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
	cd_start_policy(dr, &cfg, "clockwork:legacy");
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
 *   clockwork:legacy:            3 (1,2,3) at 6, until 6 + l(3) = 14;
 *   clockwork:legacy,sizes=pow2: 2 (1,2) at 6, until 13 (latest 21 - 7 =
 *                                14), then 3 alone at 13, until 19 <= 23. */
static void test_pow2(void **state)
{
	(void)state;
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "p", 1, 5, 8), 0);
	struct sym_model_cfg mc = { .profile = &p, .slo = 20 * SYM_MS, .name = "m" };
	for (int v = 0; v < 2; v++) {
		struct sym_core_cfg cfg = { .nmodels = 1, .models = &mc, .ngpus = 1 };
		struct cd_driver *dr = cd_new();
		cd_start_policy(dr, &cfg, v ? "clockwork:legacy,sizes=pow2" : "clockwork:legacy");
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
	cd_start_policy(dr, &cfg, "clockwork:legacy,sizes=pow2");
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
	cd_start_policy(dr, &cfg, "clockwork:legacy");
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
		cd_start_policy(dr, &cfg, v ? "clockwork:legacy,sizes=pow2" : "clockwork:legacy");
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

/* ---- the published behaviour (the default) ---- */

/* Checks dispatch x as expect() does, plus its planned start and the
 * worker's latest start (reject_after). */
static void expect_plan(const struct cd_dispatch *x, int gpu, int size, sym_time now, sym_time start,
			sym_time reject_after, const int *ids)
{
	expect(x, gpu, 0, size, now, ids);
	if (x->start != start || x->reject_after != reject_after)
		fail_msg("dispatch at %.6f ms: start %.6f reject after %.6f; want %.6f and %.6f", sym_to_ms(x->now),
			 sym_to_ms(x->start), sym_to_ms(x->reject_after), sym_to_ms(start), sym_to_ms(reject_after));
}

static void expect_drop(const struct cd_drop *x, int id, enum sym_drop_reason why, sym_time now)
{
	if (x->id != (uint64_t)id || x->why != why || x->now != now)
		fail_msg("drop: request %llu (%s) at %.6f ms; want %d (%s) at %.6f ms", (unsigned long long)x->id,
			 sym_drop_reason_name(x->why), sym_to_ms(x->now), id, sym_drop_reason_name(why),
			 sym_to_ms(now));
}

/* One model, l(b) = b + 5 ms (estimates 6, 7, 9, 13, 21 ms for sizes 1, 2,
 * 4, 8, 16), max batch 16, one GPU, no network delays. */
static void one_model(struct sym_profile *p, struct sym_model_cfg *mc, sym_time slo)
{
	assert_int_equal(sym_profile_init_linear(p, "p", 1, 5, 16), 0);
	*mc = (struct sym_model_cfg){ .profile = p, .slo = slo, .name = "m" };
}

static struct cd_driver *start_one(struct sym_core_cfg *cfg, const struct sym_model_cfg *mc, const char *spec)
{
	*cfg = (struct sym_core_cfg){ .nmodels = 1, .models = mc, .ngpus = 1 };
	struct cd_driver *dr = cd_new();
	dr->ahead = true;
	cd_start_policy(dr, cfg, spec);
	return dr;
}

/* The published INFER4, worked by hand. SLO 31 ms: internal deadline =
 * arrival + max(31 - 5, 10 + 5) = arrival + 26. A strategy (request, b) has
 * priority deadline - estimate(b); the GPU takes work while its available
 * time t (its outstanding estimates, at least now + 1) is before now + 10,
 * and a batch's latest start is t + 10. Requests (id: arrival, deadline):
 *   0: 0 (26)   1: 1 (27)   2, 3, 4: 1.2, 1.4, 1.6 (27.2, 27.4, 27.6)
 *   5..11: 4, 4.5, ..., 7 (30, 30.5, ..., 33)
 * t=0:   idle, t = 1. (0,16), (0,8), (0,4), (0,2) fail: one request queued.
 *        (0,1): 1 + 6 < 26: {0} runs 0..6 (latest start 11).
 * t=1:   t = 6 < 11. (1,16): 6 + 21 = 27 is not before 27: fails; (1,8),
 *        (1,4), (1,2) lack requests; (1,1): {1} planned 6..12, latest 16.
 *        Now t = 12 >= 1 + 10: the GPU waits until 2 ms + 1 ns.
 * t=2+:  t = 12; queue 2, 3, 4. By priority: (2,16), (3,16), (4,16) miss
 *        their deadlines (33); (2,8), (3,8), (4,8) and (2,4), (3,4), (4,4)
 *        lack requests (these are consumed: gone for this GPU); (2,2): 19 <
 *        27.2 and 3 requests from 2 on, rounded down to 2: {2,3} planned
 *        12..19, latest 22. The batch is fixed 10 ms before it starts: 5..11,
 *        all arriving before 12, cannot join it. t = 19: wait until 9+.
 * t=9+:  t = 19; queue 4..11. (5..11,16) miss; (5,8) .. (9,8) miss (19 + 13
 *        = 32 is not before 30 .. 32); (10,8) and (11,8) meet theirs but have
 *        2 and 1 requests from them on, and the reverse scan finds the
 *        newest, 11 (33 > 32), able to make it: fail. (4,2): 26 < 27.6 and 8
 *        requests from 4 on: the size is raised to 8, but 19 + 13 = 32 misses
 *        27.6: the strategy fails (no fall back to 2). (5,4): 28 < 30, 7
 *        requests from 5 on, rounded down to 4; request 4 (27.6 < 28) is
 *        older and cannot make it: dropped (early, "skipped"); {5,6,7,8}
 *        planned 19..28, latest 29. Wait until 18+.
 * t=18+: t = 28; 9, 10, 11 have (4,*), (2,*), (1,*) left: 28 + 9, 28 + 7
 *        and 28 + 6 all miss 32 .. 33: every strategy fails.
 * 32, 32.5, 33: 9, 10 and 11 time out at their internal deadlines (expired;
 *        their SLOs end at 36 .. 38). */
static void test_published_trace(void **state)
{
	(void)state;
	struct sym_profile p;
	struct sym_model_cfg mc;
	struct sym_core_cfg cfg;
	one_model(&p, &mc, 31 * SYM_MS);
	struct cd_driver *dr = start_one(&cfg, &mc, "clockwork");
	const double at[] = { 0, 1, 1.2, 1.4, 1.6, 4, 4.5, 5, 5.5, 6, 6.5, 7 };
	for (int i = 0; i < 12; i++)
		cd_arrive(dr, sym_ms(at[i]), 0);
	cd_run(dr);
	assert_int_equal(dr->nd, 4);
	expect_plan(&dr->d[0], 0, 1, 0, 0, 11 * SYM_MS, (int[]){ 0 });
	expect_plan(&dr->d[1], 0, 1, SYM_MS, 6 * SYM_MS, 16 * SYM_MS, (int[]){ 1 });
	expect_plan(&dr->d[2], 0, 2, 2 * SYM_MS + 1, 12 * SYM_MS, 22 * SYM_MS, (int[]){ 2, 3 });
	expect_plan(&dr->d[3], 0, 4, 9 * SYM_MS + 1, 19 * SYM_MS, 29 * SYM_MS, (int[]){ 5, 6, 7, 8 });
	assert_int_equal(dr->d[3].finish, 28 * SYM_MS);
	assert_int_equal(dr->ndrops, 4);
	expect_drop(&dr->drops[0], 4, SYM_DROP_EARLY, 9 * SYM_MS + 1);
	expect_drop(&dr->drops[1], 9, SYM_DROP_EXPIRED, 32 * SYM_MS);
	expect_drop(&dr->drops[2], 10, SYM_DROP_EXPIRED, sym_ms(32.5));
	expect_drop(&dr->drops[3], 11, SYM_DROP_EXPIRED, 33 * SYM_MS);
	assert_int_equal(dr->nlate, 0);
	cd_free(dr);

	/* The older rule on the same arrivals: the GPU takes work only when
	 * idle, and the batch is what is queued then: {0} at 0, {1..8} at 6
	 * (until 19; 9 arrives at 6, after the GPU's end), {9,10,11} at 19
	 * (until 27), nothing dropped. */
	dr = start_one(&cfg, &mc, "clockwork:legacy");
	for (int i = 0; i < 12; i++)
		cd_arrive(dr, sym_ms(at[i]), 0);
	cd_run(dr);
	assert_int_equal(dr->nd, 3);
	expect(&dr->d[1], 0, 0, 8, 6 * SYM_MS, (int[]){ 1, 2, 3, 4, 5, 6, 7, 8 });
	expect(&dr->d[2], 0, 0, 3, 19 * SYM_MS, (int[]){ 9, 10, 11 });
	assert_int_equal(dr->ndrops, 0);
	cd_free(dr);
	sym_profile_finish(&p);
}

/* Sizes. The first five requests of the trace above (SLO 31). At 2 ms + 1 ns
 * three requests (2, 3, 4) are queued:
 *   sizes=pow2 (published): 3 is rounded down to 2: {2,3} at 12..19, then
 *     at 9+ (t = 19) request 4 alone: (4,2) lacks a request, (4,1): 25 <
 *     27.6: {4} 19..25.
 *   sizes=all: (2,3) comes after (2,4), (3,4), (4,4) (priorities 27.2 - 8
 *     = 19.2 > 18.6): 12 + 8 = 20 < 27.2 with 3 requests: {2,3,4} 12..20.
 *   max=2: sizes 1 and 2 only: {2,3} too. */
static void test_sizes(void **state)
{
	(void)state;
	struct sym_profile p;
	struct sym_model_cfg mc;
	struct sym_core_cfg cfg;
	one_model(&p, &mc, 31 * SYM_MS);
	const double at[] = { 0, 1, 1.2, 1.4, 1.6 };
	const char *specs[] = { "clockwork", "clockwork:sizes=all", "clockwork:max=2" };
	for (int v = 0; v < 3; v++) {
		struct cd_driver *dr = start_one(&cfg, &mc, specs[v]);
		for (int i = 0; i < 5; i++)
			cd_arrive(dr, sym_ms(at[i]), 0);
		cd_run(dr);
		if (v == 1) {
			assert_int_equal(dr->nd, 3);
			expect_plan(&dr->d[2], 0, 3, 2 * SYM_MS + 1, 12 * SYM_MS, 22 * SYM_MS, (int[]){ 2, 3, 4 });
			assert_int_equal(dr->d[2].finish, 20 * SYM_MS);
		} else {
			assert_int_equal(dr->nd, 4);
			expect_plan(&dr->d[2], 0, 2, 2 * SYM_MS + 1, 12 * SYM_MS, 22 * SYM_MS, (int[]){ 2, 3 });
			expect_plan(&dr->d[3], 0, 1, 9 * SYM_MS + 1, 19 * SYM_MS, 29 * SYM_MS, (int[]){ 4 });
		}
		assert_int_equal(dr->ndrops, 0);
		cd_free(dr);
	}
	sym_profile_finish(&p);
}

/* The internal deadline. Requests at 0, 1 and 1.5 ms.
 * SLO 20: arrival + max(15, 15). {0} 0..6 and {1} 6..12 as above; at 2+ (t =
 *   12) request 2 (internal deadline 16.5): 12 + 6 = 18 misses it, every
 *   strategy fails, and it times out at 16.5 (expired), though it would
 *   finish by its real deadline 21.5. With margin=0 (arrival + max(20, 10) =
 *   21.5): {2} 12..18.
 * SLO 12: arrival + max(7, 15) = arrival + 15, past the real deadline.
 *   Request 1 (real deadline 13, internal 16): {1} planned 6..12; request 2
 *   (13.5, 16.5) is tried at 2+: 18 > 16.5, fails; at 6 (when {0} ends)
 *   the GPU has nothing left to try: 2 times out at 16.5. A request 3 at 2.5
 *   ms (14.5, 17.5) is tried at 2.5 (t = 12 < 12.5): 18 > 17.5 fails too.
 *   With l(b) = b + 2 (estimates 3, 4, ...) Clockwork plans to its internal
 *   deadline and serves late: requests at 0, 0.5, 1, 1.5, 2: {0} 0..3,
 *   {1} 3..6, {2} 6..9, {3} 9..12 (each decided on arrival), then 4 at 2+
 *   (t = 12 = 2 + 10): 12 + 3 = 15 < 17: {4} 12..15, 1 ms past its SLO. */
static void test_internal_deadline(void **state)
{
	(void)state;
	struct sym_profile p;
	struct sym_model_cfg mc;
	struct sym_core_cfg cfg;
	one_model(&p, &mc, 20 * SYM_MS);
	for (int v = 0; v < 2; v++) {
		struct cd_driver *dr = start_one(&cfg, &mc, v ? "clockwork:margin=0" : "clockwork");
		cd_arrive(dr, 0, 0);
		cd_arrive(dr, SYM_MS, 0);
		cd_arrive(dr, sym_ms(1.5), 0);
		cd_run(dr);
		if (!v) {
			assert_int_equal(dr->nd, 2);
			assert_int_equal(dr->ndrops, 1);
			expect_drop(&dr->drops[0], 2, SYM_DROP_EXPIRED, sym_ms(16.5));
		} else {
			assert_int_equal(dr->nd, 3);
			expect_plan(&dr->d[2], 0, 1, 2 * SYM_MS + 1, 12 * SYM_MS, 22 * SYM_MS, (int[]){ 2 });
			assert_int_equal(dr->ndrops, 0);
		}
		expect_plan(&dr->d[1], 0, 1, SYM_MS, 6 * SYM_MS, 16 * SYM_MS, (int[]){ 1 });
		assert_int_equal(dr->nlate, 0);
		cd_free(dr);
	}
	sym_profile_finish(&p);

	one_model(&p, &mc, 12 * SYM_MS);
	struct cd_driver *dr = start_one(&cfg, &mc, "clockwork");
	cd_arrive(dr, 0, 0);
	cd_arrive(dr, SYM_MS, 0);
	cd_arrive(dr, sym_ms(1.5), 0);
	cd_arrive(dr, sym_ms(2.5), 0);
	cd_run(dr);
	assert_int_equal(dr->nd, 2);
	assert_int_equal(dr->ndrops, 2);
	expect_drop(&dr->drops[0], 2, SYM_DROP_EXPIRED, sym_ms(16.5));
	expect_drop(&dr->drops[1], 3, SYM_DROP_EXPIRED, sym_ms(17.5));
	cd_free(dr);
	sym_profile_finish(&p);

	assert_int_equal(sym_profile_init_linear(&p, "p", 1, 2, 16), 0);
	mc = (struct sym_model_cfg){ .profile = &p, .slo = 12 * SYM_MS, .name = "m" };
	dr = start_one(&cfg, &mc, "clockwork");
	for (int i = 0; i < 5; i++)
		cd_arrive(dr, i * 500 * SYM_US, 0);
	cd_run(dr);
	assert_int_equal(dr->nd, 5);
	for (int i = 0; i < 4; i++)
		expect_plan(&dr->d[i], 0, 1, i * 500 * SYM_US, 3 * i * SYM_MS,
			    (i ? 3 * i : 1) * SYM_MS + 10 * SYM_MS, (int[]){ i });
	expect_plan(&dr->d[4], 0, 1, 2 * SYM_MS + 1, 12 * SYM_MS, 22 * SYM_MS, (int[]){ 4 });
	assert_int_equal(dr->ndrops, 0);
	assert_int_equal(dr->nlate, 1);
	assert_int_equal(dr->late[4], 1);
	cd_free(dr);
	sym_profile_finish(&p);
}

/* Real run times: dispatch i takes dur[i] ms (or as planned for i beyond
 * the table, or when the entry is 0). */
struct durs {
	int n;
	const double *ms;
};

static sym_time table_dur(struct cd_driver *dr, int i, const struct cd_dispatch *d)
{
	const struct durs *t = dr->dur_arg;
	if (i < t->n && t->ms[i] > 0)
		return sym_ms(t->ms[i]);
	return d->finish - d->start;
}

/* The worker rejects a late action. SLO 30 (internal deadline arrival + 25).
 * Requests at 0, 1 and 2 ms; {0} runs 20 ms instead of 6.
 *   0: {0} 0..6 planned, latest start 11 (t = 1 on an idle GPU).
 *   1: t = 6: {1} planned 6..12, latest 16. t = 12 = 2 + 10: wait.
 *   2+: t = 12: {2} planned 12..18, latest 22.
 *   20: {0} ends; {1} could only start at 20 > 16: the worker rejects it
 *       (request 1 dropped, rejected, at 20); {2} starts at 20 <= 22 and runs
 *       until 26.
 * With reject=off, {1} runs 20..26 and {2} 26..32 (on time: its SLO ends
 * at 32). Measured: {0} took 20 ms, so estimate(1) = 20 from then on; after
 * {2} (6 ms) it is the 99th percentile of {20, 6}: 6 * 0.01 + 20 * 0.99 =
 * 19.86 ms, while estimate(2) is still the profile's 7 ms. Two requests
 * with deadline 100 ms (internal 95): at 40 (idle GPU, t = 41; every size
 * above 1 lacks requests; 41 + 19.86 < 95): latest start 51. At 41 the GPU
 * expects to be busy until 40 + 19.86 >= 41 + 10: it does not take the
 * request (with the profile's 6 ms it would, at 41). The batch ends at 46;
 * the GPU is idle and takes it then (t = 47): latest start 57. */
static void test_reject(void **state)
{
	(void)state;
	struct sym_profile p;
	struct sym_model_cfg mc;
	struct sym_core_cfg cfg;
	one_model(&p, &mc, 30 * SYM_MS);
	const double ms[] = { 20 };
	struct durs t = { 1, ms };
	for (int v = 0; v < 2; v++) {
		struct cd_driver *dr = start_one(&cfg, &mc, v ? "clockwork:reject=off" : "clockwork");
		dr->dur = table_dur;
		dr->dur_arg = &t;
		cd_arrive(dr, 0, 0);
		cd_arrive(dr, SYM_MS, 0);
		cd_arrive(dr, 2 * SYM_MS, 0);
		cd_arrive_dl(dr, 40 * SYM_MS, 0, 100 * SYM_MS);
		cd_arrive_dl(dr, 41 * SYM_MS, 0, 100 * SYM_MS);
		cd_run(dr);
		assert_int_equal(dr->nd, 5);
		expect_plan(&dr->d[0], 0, 1, 0, 0, v ? SYM_TIME_NEVER : 11 * SYM_MS, (int[]){ 0 });
		expect_plan(&dr->d[1], 0, 1, SYM_MS, 6 * SYM_MS, v ? SYM_TIME_NEVER : 16 * SYM_MS, (int[]){ 1 });
		expect_plan(&dr->d[2], 0, 1, 2 * SYM_MS + 1, 12 * SYM_MS, v ? SYM_TIME_NEVER : 22 * SYM_MS,
			    (int[]){ 2 });
		assert_int_equal(dr->d[0].real_end, 20 * SYM_MS);
		if (!v) {
			assert_true(dr->d[1].rejected);
			assert_int_equal(dr->ndrops, 1);
			expect_drop(&dr->drops[0], 1, SYM_DROP_REJECTED, 20 * SYM_MS);
			assert_int_equal(dr->d[2].real_start, 20 * SYM_MS);
			assert_int_equal(dr->d[2].real_end, 26 * SYM_MS);
			expect_plan(&dr->d[3], 0, 1, 40 * SYM_MS, 40 * SYM_MS, 51 * SYM_MS, (int[]){ 3 });
			expect_plan(&dr->d[4], 0, 1, 46 * SYM_MS, 46 * SYM_MS, 57 * SYM_MS, (int[]){ 4 });
		} else {
			assert_false(dr->d[1].rejected);
			assert_int_equal(dr->ndrops, 0);
			assert_int_equal(dr->d[1].real_start, 20 * SYM_MS);
			assert_int_equal(dr->d[2].real_end, 32 * SYM_MS);
		}
		assert_int_equal(dr->nlate, 0);
		cd_free(dr);
	}
	sym_profile_finish(&p);
}

/* The estimator follows measured latencies (window 10, 99th percentile,
 * interpolated). SLO 200 (internal deadline arrival + 195). Requests alone
 * at 0, 50 and 100 ms run 10, 12 and 14 ms instead of 6. A probe: request A
 * at 150 ms (idle GPU) runs 6 ms; B at 151 is planned after it at t = 150 +
 * estimate(1), and its latest start t + 10 shows the estimate: the 99th
 * percentile of {10, 12, 14} is at position 1.98: 14 * 0.98 + 12 * 0.02 =
 * 13.96 ms. (Decided when t comes within 10 ms: at 153.96 ms + 1 ns.) Eight
 * more requests alone (200, 250, ..., 550) run 6 ms; the window then holds
 * ten 6 ms samples, and the probe at 600 / 601 shows 6 ms. window=0 keeps
 * the profile's 6 ms throughout. */
static void test_estimator(void **state)
{
	(void)state;
	struct sym_profile p;
	struct sym_model_cfg mc;
	struct sym_core_cfg cfg;
	one_model(&p, &mc, 200 * SYM_MS);
	const double ms[] = { 10, 12, 14 };
	struct durs t = { 3, ms };
	for (int v = 0; v < 2; v++) {
		struct cd_driver *dr = start_one(&cfg, &mc, v ? "clockwork:window=0" : "clockwork");
		dr->dur = table_dur;
		dr->dur_arg = &t;
		for (int i = 0; i < 3; i++)
			cd_arrive(dr, 50 * i * SYM_MS, 0);
		cd_arrive(dr, 150 * SYM_MS, 0);
		cd_arrive(dr, 151 * SYM_MS, 0);
		for (int i = 0; i < 8; i++)
			cd_arrive(dr, (200 + 50 * i) * SYM_MS, 0);
		cd_arrive(dr, 600 * SYM_MS, 0);
		cd_arrive(dr, 601 * SYM_MS, 0);
		cd_run(dr);
		assert_int_equal(dr->nd, 15);
		const struct cd_dispatch *b = &dr->d[4];
		assert_int_equal(b->ids[0], 4);
		if (!v) {
			assert_true(llabs(b->reject_after - sym_ms(173.96)) <= 1);
			assert_true(llabs(b->now - (sym_ms(153.96) + 1)) <= 1);
		} else {
			assert_int_equal(b->reject_after, 166 * SYM_MS);
			assert_int_equal(b->now, 151 * SYM_MS);
		}
		/* both probes' B start when A ends, at 156 and 606 */
		assert_int_equal(b->real_start, 156 * SYM_MS);
		b = &dr->d[14];
		assert_int_equal(b->ids[0], 14);
		assert_int_equal(b->now, 601 * SYM_MS);
		assert_int_equal(b->reject_after, 616 * SYM_MS);
		assert_int_equal(dr->ndrops, 0);
		cd_free(dr);
	}
	sym_profile_finish(&p);
}

/* schedule_ahead and future. The trace's first arrivals with ahead=0 (only
 * an idle GPU takes work, planned at now + 1): {0} at 0, and at 6 (when {0}
 * ends, t = 7) requests 1..4: (1,16) misses (7 + 21 > 27), (1,8), (2,8) ..
 * lack requests, (1,4): 7 + 9 = 16 < 27 with 4 requests: {1,2,3,4} 6..15,
 * latest start 17. With future=0 as well, the latest start is 16. */
static void test_ahead(void **state)
{
	(void)state;
	struct sym_profile p;
	struct sym_model_cfg mc;
	struct sym_core_cfg cfg;
	one_model(&p, &mc, 31 * SYM_MS);
	const double at[] = { 0, 1, 1.2, 1.4, 1.6 };
	for (int v = 0; v < 2; v++) {
		struct cd_driver *dr = start_one(&cfg, &mc, v ? "clockwork:ahead=0,future=0" : "clockwork:ahead=0");
		for (int i = 0; i < 5; i++)
			cd_arrive(dr, sym_ms(at[i]), 0);
		cd_run(dr);
		assert_int_equal(dr->nd, 2);
		expect_plan(&dr->d[0], 0, 1, 0, 0, (v ? 10 : 11) * SYM_MS, (int[]){ 0 });
		expect_plan(&dr->d[1], 0, 4, 6 * SYM_MS, 6 * SYM_MS, (v ? 16 : 17) * SYM_MS, (int[]){ 1, 2, 3, 4 });
		assert_int_equal(dr->ndrops, 0);
		cd_free(dr);
	}
	sym_profile_finish(&p);
}

/* Strategies are per GPU. Two GPUs (arrivals poll them in turn: the first
 * from GPU 0, the next from GPU 1, ...), SLO 20 (internal deadline arrival
 * + 15), l(b) = b + 5.
 *   0 (request 0): GPU 0 (t = 1): {0} 0..6. GPU 1 then finds it gone.
 *   0.1 (1): GPU 1 first (idle, t = 1.1): {1} 0.1..6.1.
 *   0.2 (2): GPU 0 first (t = 6): (2,1): 12 < 15.2: {2} 6..12, GPU 0's t =
 *       12 >= 10.2: it waits (until 2 + 1 ns).
 *   0.3 (3): GPU 1 (t = 6.1): {3} 6.1..12.1, then t = 12.1: waits.
 *   4.0 (4, internal deadline 19): GPU 0 (t = 12): (4,1): 18 < 19:
 *       {4} 12..18. */
static void test_two_gpus(void **state)
{
	(void)state;
	struct sym_profile p;
	struct sym_model_cfg mc;
	one_model(&p, &mc, 20 * SYM_MS);
	struct sym_core_cfg cfg = { .nmodels = 1, .models = &mc, .ngpus = 2 };
	struct cd_driver *dr = cd_new();
	dr->ahead = true;
	cd_start_policy(dr, &cfg, "clockwork");
	const double at[] = { 0, 0.1, 0.2, 0.3, 4 };
	for (int i = 0; i < 5; i++)
		cd_arrive(dr, sym_ms(at[i]), 0);
	cd_run(dr);
	assert_int_equal(dr->nd, 5);
	expect_plan(&dr->d[0], 0, 1, 0, 0, 11 * SYM_MS, (int[]){ 0 });
	expect_plan(&dr->d[1], 1, 1, sym_ms(0.1), sym_ms(0.1), sym_ms(11.1), (int[]){ 1 });
	expect_plan(&dr->d[2], 0, 1, sym_ms(0.2), 6 * SYM_MS, 16 * SYM_MS, (int[]){ 2 });
	expect_plan(&dr->d[3], 1, 1, sym_ms(0.3), sym_ms(6.1), sym_ms(16.1), (int[]){ 3 });
	expect_plan(&dr->d[4], 0, 1, 4 * SYM_MS, 12 * SYM_MS, 22 * SYM_MS, (int[]){ 4 });
	assert_int_equal(dr->ndrops, 0);
	cd_free(dr);
	sym_profile_finish(&p);
}

/* select=latest with the published values: the GPU takes work 10 ms ahead
 * and the candidate is the largest supported size that meets the head's
 * internal deadline. The trace's first five requests: {0} at 0 (t = 1),
 * {1} at 1 (t = 6), then at 2+ (t = 12) 3 queued, rounded down to 2:
 * {2,3} 12..19; at 9+ (t = 19) {4} 19..25. */
static void test_select_latest(void **state)
{
	(void)state;
	struct sym_profile p;
	struct sym_model_cfg mc;
	struct sym_core_cfg cfg;
	one_model(&p, &mc, 31 * SYM_MS);
	const double at[] = { 0, 1, 1.2, 1.4, 1.6 };
	struct cd_driver *dr = start_one(&cfg, &mc, "clockwork:select=latest");
	for (int i = 0; i < 5; i++)
		cd_arrive(dr, sym_ms(at[i]), 0);
	cd_run(dr);
	assert_int_equal(dr->nd, 4);
	expect_plan(&dr->d[0], 0, 1, 0, 0, 11 * SYM_MS, (int[]){ 0 });
	expect_plan(&dr->d[1], 0, 1, SYM_MS, 6 * SYM_MS, 16 * SYM_MS, (int[]){ 1 });
	expect_plan(&dr->d[2], 0, 2, 2 * SYM_MS + 1, 12 * SYM_MS, 22 * SYM_MS, (int[]){ 2, 3 });
	expect_plan(&dr->d[3], 0, 1, 9 * SYM_MS + 1, 19 * SYM_MS, 29 * SYM_MS, (int[]){ 4 });
	assert_int_equal(dr->ndrops, 0);
	cd_free(dr);
	sym_profile_finish(&p);
}

static void test_params(void **state)
{
	(void)state;
	struct sym_policy p;
	char err[256], buf[256];
	const char *legacy = "select=latest,sizes=all,max=0,ahead=0,margin=0,reject=off,future=0,window=0";
	const struct {
		const char *spec, *canon;
	} good[] = {
		{ "clockwork", "clockwork" },
		{ "clockwork:select=strategy,sizes=pow2,max=16,ahead=10,margin=5,reject=10,future=1,window=10,pct=99",
		  "clockwork" },
		{ "clockwork:legacy", "clockwork:legacy" },
		{ "clockwork:select=latest,sizes=all,max=0,ahead=0,margin=0,reject=off,future=0,window=0",
		  "clockwork:legacy" },
		{ "clockwork:legacy,sizes=pow2", "clockwork:legacy,sizes=pow2" },
		{ "clockwork:sizes=all", "clockwork:sizes=all" },
		{ "clockwork:pow2=0", "clockwork:sizes=all" },
		{ "clockwork:pow2=false", "clockwork:sizes=all" },
		{ "clockwork:pow2=1", "clockwork" },
		{ "clockwork:pow2=true,pow2=0", "clockwork:sizes=all" },
		{ "clockwork:select=latest", "clockwork:select=latest" },
		{ "clockwork:max=0", "clockwork:max=0" },
		{ "clockwork:max=32", "clockwork:max=32" },
		{ "clockwork:ahead=0", "clockwork:ahead=0" },
		{ "clockwork:ahead=2.5", "clockwork:ahead=2.5" },
		{ "clockwork:margin=0", "clockwork:margin=0" },
		{ "clockwork:reject=off", "clockwork:reject=off" },
		{ "clockwork:reject=0.5", "clockwork:reject=0.5" },
		{ "clockwork:future=0", "clockwork:future=0" },
		{ "clockwork:window=0", "clockwork:window=0" },
		{ "clockwork:window=1,pct=50", "clockwork:window=1,pct=50" },
		{ "clockwork:pct=100", "clockwork:pct=100" },
		{ "clockwork:ahead=0,future=3", "clockwork:ahead=0,future=3" },
		{ "clockwork:legacy,window=10,pct=90", "clockwork:legacy,window=10,pct=90" },
		{ "clockwork:sizes=all,select=latest,margin=0,reject=off", "clockwork:select=latest,sizes=all,margin=0,reject=off" },
		{ "clockwork:sizes=all,select=latest,margin=0,reject=off,ahead=0", "clockwork:legacy,max=16,future=1,window=10" },
		{ "clockwork:legacy,select=strategy", "clockwork:legacy,select=strategy" },
		{ "clockwork:legacy,select=strategy,sizes=pow2,max=16,window=10", "clockwork:ahead=0,margin=0,reject=off,future=0" },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (sym_policy_parse(good[i].spec, &p, err, sizeof(err)))
			fail_msg("%s: %s", good[i].spec, err);
		if (strcmp(sym_policy_format(&p, buf, sizeof(buf)), good[i].canon))
			fail_msg("%s: formatted as %s, want %s", good[i].spec, buf, good[i].canon);
		struct sym_policy q;
		assert_int_equal(sym_policy_parse(buf, &q, err, sizeof(err)), 0);
		assert_true(sym_policy_equal(&q, &p));
	}
	/* the values themselves */
	assert_int_equal(sym_policy_parse("clockwork", &p, err, sizeof(err)), 0);
	assert_string_equal(cd_param_text(&p, "select"), "strategy");
	assert_string_equal(cd_param_text(&p, "sizes"), "pow2");
	assert_true(cd_param(&p, "max") == 16);
	assert_true(cd_param(&p, "ahead") == 10 && cd_param(&p, "margin") == 5 && cd_param(&p, "reject") == 10);
	assert_true(cd_param(&p, "future") == 1 && cd_param(&p, "window") == 10 && cd_param(&p, "pct") == 99);
	snprintf(buf, sizeof(buf), "clockwork:%s", legacy);
	assert_int_equal(sym_policy_parse(buf, &p, err, sizeof(err)), 0);
	assert_string_equal(cd_param_text(&p, "select"), "latest");
	assert_string_equal(cd_param_text(&p, "sizes"), "all");
	assert_true(cd_param(&p, "max") == 0 && cd_param(&p, "ahead") == 0 && cd_param(&p, "margin") == 0);
	assert_string_equal(cd_param_text(&p, "reject"), "off");
	assert_true(cd_param(&p, "reject") < 0 && cd_param(&p, "future") == 0 && cd_param(&p, "window") == 0);
	const struct {
		const char *spec, *names;
	} bad[] = {
		{ "clockwork:pow2=2", "'2'" },           { "clockwork:pow2=yes", "pow2" },
		{ "clockwork:pow2=", "pow2" },           { "clockwork:size=4", "'size'" },
		{ "clockwork:pow2", "'pow2'" },          { "clockwork:pow2=1,", "trailing comma" },
		{ "clockwork:", "clockwork" },           { "clockwork:pow2=1,x=1", "'x'" },
		{ "clockwork:select=eager", "select" },  { "clockwork:select=", "select" },
		{ "clockwork:sizes=3", "sizes" },        { "clockwork:sizes=pow3", "'pow3'" },
		{ "clockwork:max=-1", "max" },           { "clockwork:max=1.5", "max" },
		{ "clockwork:max=100001", "max" },       { "clockwork:ahead=-1", "ahead" },
		{ "clockwork:ahead=x", "ahead" },        { "clockwork:ahead=1", "future" },
		{ "clockwork:ahead=0.5", "ahead" },      { "clockwork:future=10", "future" },
		{ "clockwork:margin=-0.1", "margin" },   { "clockwork:margin=inf", "margin" },
		{ "clockwork:reject=-1", "reject" },     { "clockwork:reject=on", "reject" },
		{ "clockwork:future=-1", "future" },     { "clockwork:future=nan", "future" },
		{ "clockwork:window=-1", "window" },     { "clockwork:window=1001", "window" },
		{ "clockwork:window=2.5", "window" },    { "clockwork:pct=101", "pct" },
		{ "clockwork:pct=-1", "pct" },           { "clockwork:pct=", "pct" },
		{ "clockwork:legacy=1", "'legacy'" },    { "clockwork:old", "'old'" },
		{ "clockwork:legacy,,window=1", "empty" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (sym_policy_parse(bad[i].spec, &p, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' accepted", bad[i].spec);
		assert_contains(err, "clockwork");
		assert_contains(err, bad[i].names);
	}
	char line[512];
	assert_true(sym_policy_help_line(sym_policy_find("clockwork"), 0, line, sizeof(line)));
	assert_true(sym_policy_is_scheduler(&p));
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
		assert_true(x->now + sym_core_le_min(dr->core, r->model)[1] > r->deadline);
	}
	for (int i = 0; i < dr->nd; i++) {
		const struct cd_dispatch *x = &dr->d[i];
		assert_true(x->size <= sym_core_max_batch(dr->core, x->model, x->kind));
		for (int j = 0; j < x->size; j++) {
			sym_time dl = dr->req[x->ids[j]].deadline;
			assert_true(x->now + sym_core_le(dr->core, x->model, x->kind)[x->size] <= dl);
		}
	}
}

/* The mixed workload on every variant, one and two kinds, with network
 * delays and (for two variants) run times of 0.7 to 1.9 times the planned
 * ones. The older rule
 * dispatches only feasible batches (check_run); every variant ends every
 * request exactly once (cd_run), drops only for its reasons, and keeps its
 * sizes. */
static sym_time jitter_dur(struct cd_driver *dr, int i, const struct cd_dispatch *d)
{
	(void)dr;
	double f = 0.7 + 1.2 * (double)((i * 7919) % 101) / 100.0;
	return (sym_time)((double)(d->finish - d->start) * f);
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
	const char *pols[] = { "clockwork:legacy",        "clockwork:legacy,sizes=pow2", "clockwork",
			       "clockwork:sizes=all,max=0", "clockwork:select=latest",     "clockwork:ahead=0" };
	const int npols = sizeof(pols) / sizeof(pols[0]);
	for (int het = 0; het < 2; het++) {
		for (int i = 0; i < npols; i++) {
			bool legacy = i < 2;
			struct sym_core_cfg cfg = {
				.nmodels = 3,
				.models = mc,
				.ngpus = het ? 4 : 3,
				.nkinds = het ? 2 : 1,
				.kinds = het ? kinds : NULL,
				.gpu_kind = het ? gpu_kind : NULL,
				.net = { .ctrl = 200 * SYM_US, .data = 10 * SYM_US, .resp = 100 * SYM_US },
				.max_ahead = het ? 1 : 0,
			};
			struct cd_driver *dr = cd_new();
			dr->ahead = !legacy;
			if (!legacy && i % 2)
				dr->dur = jitter_dur;
			cd_start_policy(dr, &cfg, pols[i]);
			cd_mixed_workload(dr, 3, mc, 42);
			cd_run(dr);
			if (legacy)
				check_run(dr);
			/* the overload drops some; the first underload phase none */
			assert_true(dr->nreq > 4000);
			assert_true(dr->ndrops > 0 && dr->ndrops < dr->nreq);
			for (int k = 0; k < dr->ndrops; k++) {
				const struct sym_request *r = &dr->req[dr->drops[k].id];
				/* in the underload, only (for the published rule) a request
				 * with its own, shorter deadline; with ahead=0 the internal
				 * deadline of m2 (SLO 10) is arrival + max(10 - 5, 0 + 5):
				 * drops happen; with jitter the worker rejects late batches */
				if (r->arrival < 400 * SYM_MS && i != 5 && dr->drops[k].why != SYM_DROP_REJECTED &&
				    (legacy || r->deadline == r->arrival + mc[r->model].slo))
					fail_msg("%s het %d: request %llu (arrival %.3f ms) dropped (%s)", pols[i], het,
						 (unsigned long long)r->id, sym_to_ms(r->arrival),
						 sym_drop_reason_name(dr->drops[k].why));
				if (legacy)
					continue;
				assert_true(dr->drops[k].why == SYM_DROP_EXPIRED || dr->drops[k].why == SYM_DROP_EARLY ||
					    (dr->drops[k].why == SYM_DROP_REJECTED && dr->dur));
			}
			/* rejections need a batch to run 10 ms over its estimate: only
			 * with jitter, and never with ahead=0 (nothing waits behind a
			 * batch) */
			int rejected = 0;
			for (int k = 0; k < dr->ndrops; k++)
				rejected += dr->drops[k].why == SYM_DROP_REJECTED;
			if (i == 3)
				assert_true(rejected > 0);
			else
				assert_int_equal(rejected, 0);
			if (i == 1 || i == 2 || i == 4 || i == 5)
				for (int k = 0; k < dr->nd; k++)
					assert_int_equal(dr->d[k].size & (dr->d[k].size - 1), 0);
			if (i >= 2 && i != 3)
				for (int k = 0; k < dr->nd; k++)
					assert_true(dr->d[k].size <= 16);
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
		cmocka_unit_test(test_published_trace),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_internal_deadline),
		cmocka_unit_test(test_reject),
		cmocka_unit_test(test_estimator),
		cmocka_unit_test(test_ahead),
		cmocka_unit_test(test_two_gpus),
		cmocka_unit_test(test_select_latest),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_conservation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
