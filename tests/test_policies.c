/* Policy registry and parameter tests, the betalambda worked example, and
 * heterogeneous clusters under the shared candidate machinery. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "core/core.h"
#include "core/policy_api.h"
#include "core/queue.h"
#include "coredriver.h"
#include "testutil.h"

static void test_registry_round_trip(void **state)
{
	(void)state;
	size_t n;
	const struct sym_policy_ops *const *list = sym_policy_list(&n);
	assert_int_equal(n, 10);
	const char *want[] = { "symphony", "eager", "timeout", "betalambda", "clockwork",
			       "shepherd", "nexus", "urgency", "fcfs", "edf" };
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(list[i]->name, want[i]);
		assert_non_null(list[i]->summary);
		/* exactly one shape */
		assert_true((list[i]->exec != NULL) != (list[i]->sched != NULL));
		struct sym_policy p;
		char err[256] = "", buf[256], buf2[256];
		const char *spec = strcmp(want[i], "timeout") ? want[i] : "timeout:5";
		int rc = sym_policy_parse(spec, &p, err, sizeof(err));
		if (rc)
			fail_msg("%s: %s", spec, err);
		/* the canonical text parses back to the same text */
		sym_policy_format(&p, buf, sizeof(buf));
		struct sym_policy q;
		assert_int_equal(sym_policy_parse(buf, &q, err, sizeof(err)), 0);
		assert_string_equal(sym_policy_format(&q, buf2, sizeof(buf2)), buf);
		/* an empty parameter list is an error for everyone */
		char colon[64];
		snprintf(colon, sizeof(colon), "%s:", want[i]);
		assert_int_equal(sym_policy_parse(colon, &p, err, sizeof(err)), -EINVAL);
		assert_contains(err, want[i]);
	}
	struct sym_policy p;
	char err[512];
	assert_int_equal(sym_policy_parse("nosuch:x=1", &p, err, sizeof(err)), -ENOENT);
	assert_contains(err, "unknown policy 'nosuch'");
	assert_contains(err, "urgency");
	assert_contains(err, "edf");
}

static void test_kv_next(void **state)
{
	(void)state;
	struct sym_policy p = { .ops = sym_policy_find("betalambda") };
	char k[16], v[16], err[256];
	const char *s = "a=1,bare,c=x=y";
	assert_int_equal(sym_policy_kv_next(&p, &s, k, sizeof(k), v, sizeof(v), err, sizeof(err)), 1);
	assert_string_equal(k, "a");
	assert_string_equal(v, "1");
	assert_int_equal(sym_policy_kv_next(&p, &s, k, sizeof(k), v, sizeof(v), err, sizeof(err)), 1);
	assert_string_equal(k, "");
	assert_string_equal(v, "bare");
	assert_int_equal(sym_policy_kv_next(&p, &s, k, sizeof(k), v, sizeof(v), err, sizeof(err)), 1);
	assert_string_equal(k, "c");
	assert_string_equal(v, "x=y");
	assert_int_equal(sym_policy_kv_next(&p, &s, k, sizeof(k), v, sizeof(v), err, sizeof(err)), 0);
	const char *bad[] = { "a=", "=1", "a=1,", ",", "a=1,,b=2", "averyveryverylongkey=1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = bad[i];
		int rc;
		while ((rc = sym_policy_kv_next(&p, &s, k, sizeof(k), v, sizeof(v), err, sizeof(err))) > 0)
			;
		if (rc != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
		assert_contains(err, "betalambda");
	}
	double d;
	int n;
	assert_int_equal(sym_policy_num("2.5", 0, 3, &d), 0);
	assert_int_equal(sym_policy_num("3.5", 0, 3, &d), -EINVAL);
	assert_int_equal(sym_policy_num("nan", 0, 3, &d), -EINVAL);
	assert_int_equal(sym_policy_num("1x", 0, 3, &d), -EINVAL);
	assert_int_equal(sym_policy_int("7", 1, 8, &n), 0);
	assert_int_equal(n, 7);
	assert_int_equal(sym_policy_int("7.5", 1, 8, &n), -EINVAL);
	assert_int_equal(sym_policy_int("9", 1, 8, &n), -EINVAL);
	char buf[32];
	assert_string_equal(sym_policy_fmt_num(0.1, buf, sizeof(buf)), "0.1");
	assert_string_equal(sym_policy_fmt_num(1.0 / 3, buf, sizeof(buf)), "0.33333333333333331");
}

static void test_betalambda_params(void **state)
{
	(void)state;
	struct sym_policy p;
	char err[256], buf[64];
	assert_int_equal(sym_policy_parse("betalambda:beta=2.5", &p, err, sizeof(err)), 0);
	assert_string_equal(sym_policy_format(&p, buf, sizeof(buf)), "betalambda:beta=2.5");
	assert_int_equal(sym_policy_parse("betalambda:2.5", &p, err, sizeof(err)), 0);
	assert_string_equal(sym_policy_format(&p, buf, sizeof(buf)), "betalambda:beta=2.5");
	const char *bad[] = { "betalambda:beta=0", "betalambda:beta=-1", "betalambda:beta=x", "betalambda:gamma=1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(sym_policy_parse(bad[i], &p, err, sizeof(err)), -EINVAL);
		assert_contains(err, "betalambda");
	}
	assert_contains(err, "gamma");
}

/* One model, l(b) = b + 5 ms (beta 5 ms), SLO 12 ms, 3 GPUs, configured rate
 * 800/s (the estimate keeps it: the run is shorter than a rate window).
 * Requests at 0, 0.5, 1.0 and 1.5 ms.
 *   symphony: at 1.5 ms B = 4 (l(4) = 9 <= 12 - 1.5) and the frontrun moment
 *     is d - l(5) = 12 - 10 = 2 ms: one batch of 4 at 2.0 ms.
 *   betalambda: beta*lambda = 5 ms * 800/s = 4 requests, reached at 1.5 ms:
 *     one batch of 4 at once, at 1.5 ms.
 *   betalambda:beta=2: 2 ms * 800/s = 1.6, so 2 requests suffice: a batch of
 *     2 at 0.5 ms on GPU 0 and another of 2 at 1.5 ms on GPU 1 (at 1.0 ms
 *     the lone request waits: B = 1 < 1.6). */
static void beta_run(const char *policy, int nexp, const sym_time *at, const int *size, const int *gpu)
{
	struct sym_profile prof;
	assert_int_equal(sym_profile_init_linear(&prof, "m", 1, 5, 7), 0);
	struct sym_model_cfg mc = { &prof, 12 * SYM_MS, 800, "m", { NULL }, 0, 0 };
	struct sym_core_cfg cfg = { .nmodels = 1, .models = &mc, .ngpus = 3 };
	char err[256];
	assert_int_equal(sym_policy_parse(policy, &cfg.policy, err, sizeof(err)), 0);
	assert_int_equal(sym_gather_parse("lazy", &cfg.gather), 0);
	struct cd_driver *dr = cd_new();
	cd_start(dr, &cfg);
	for (int i = 0; i < 4; i++)
		cd_arrive(dr, sym_ms(0.5 * i), 0);
	cd_run(dr);
	assert_int_equal(dr->nd, nexp);
	for (int i = 0; i < nexp; i++) {
		assert_int_equal(dr->d[i].now, at[i]);
		assert_int_equal(dr->d[i].size, size[i]);
		assert_int_equal(dr->d[i].gpu, gpu[i]);
	}
	assert_int_equal(dr->ndrops, 0);
	cd_free(dr);
	sym_profile_finish(&prof);
}

static void test_betalambda_worked_example(void **state)
{
	(void)state;
	beta_run("symphony", 1, (sym_time[]){ 2 * SYM_MS }, (int[]){ 4 }, (int[]){ 0 });
	beta_run("betalambda", 1, (sym_time[]){ sym_ms(1.5) }, (int[]){ 4 }, (int[]){ 0 });
	beta_run("betalambda:beta=2", 2, (sym_time[]){ sym_ms(0.5), sym_ms(1.5) }, (int[]){ 2, 2 }, (int[]){ 0, 1 });
}

/* Two models on one GPU, l(b) = b + 5 ms, SLO 30 ms: A's request at 0 (d 30),
 * B's at 2 ms (d 32).
 *   symphony:lookahead=off (as published): A's frontrun 30 - l(2) = 23,
 *     latest 24; B's frontrun 25, latest 26. A runs 23-29 and holds the GPU
 *     through B's window: at 29 B's request cannot finish by 32 (29 + 6):
 *     dropped.
 *   symphony:lookahead=off,reserve=1 (go by d - 2 l(B)): A by 30 - 12 = 18, B
 *     by 20. A runs 18-24; B waits for the GPU and runs 24-30 (latest 26):
 *     both served.
 *   symphony (look-ahead): A defers to 23 (its guard, d - l(1) - 1 ms, the
 *     measured wait's start, is 23 too). At 2 B defers to 25 and the plan,
 *     two candidates on one GPU, places B (the later deadline) first, at 25,
 *     then A to finish one batch length (its margin) before that: by 19, so
 *     starting at 13. A is pulled to 13 and runs 13-19; B runs 25-31. */
static void reserve_run(const char *policy, int nexp, const sym_time *at, const int *model, int ndrops)
{
	struct sym_profile prof;
	assert_int_equal(sym_profile_init_linear(&prof, "m", 1, 5, 8), 0);
	struct sym_model_cfg mc[2] = { { &prof, 30 * SYM_MS, 10, "a", { NULL }, 0, 0 },
				       { &prof, 30 * SYM_MS, 10, "b", { NULL }, 0, 0 } };
	struct sym_core_cfg cfg = { .nmodels = 2, .models = mc, .ngpus = 1 };
	char err[256];
	assert_int_equal(sym_policy_parse(policy, &cfg.policy, err, sizeof(err)), 0);
	assert_int_equal(sym_gather_parse("lazy", &cfg.gather), 0);
	struct cd_driver *dr = cd_new();
	cd_start(dr, &cfg);
	cd_arrive(dr, 0, 0);
	cd_arrive(dr, 2 * SYM_MS, 1);
	cd_run(dr);
	assert_int_equal(dr->nd, nexp);
	for (int i = 0; i < nexp; i++) {
		assert_int_equal(dr->d[i].now, at[i]);
		assert_int_equal(dr->d[i].model, model[i]);
	}
	assert_int_equal(dr->ndrops, ndrops);
	cd_free(dr);
	sym_profile_finish(&prof);
}

static void test_symphony_reserve(void **state)
{
	(void)state;
	reserve_run("symphony:lookahead=off", 1, (sym_time[]){ 23 * SYM_MS }, (int[]){ 0 }, 1);
	reserve_run("symphony:lookahead=off,reserve=1", 2, (sym_time[]){ 18 * SYM_MS, 24 * SYM_MS }, (int[]){ 0, 1 },
		    0);
	reserve_run("symphony", 2, (sym_time[]){ 13 * SYM_MS, 25 * SYM_MS }, (int[]){ 0, 1 }, 0);
	reserve_run("symphony:plan=off", 1, (sym_time[]){ 23 * SYM_MS }, (int[]){ 0 }, 1);
	struct sym_policy p;
	char err[256], buf[64];
	assert_int_equal(sym_policy_parse("symphony:reserve=0", &p, err, sizeof(err)), 0);
	assert_string_equal(sym_policy_format(&p, buf, sizeof(buf)), "symphony");
	assert_int_equal(sym_policy_parse("symphony:reserve=17", &p, err, sizeof(err)), -EINVAL);
	assert_contains(err, "reserve");
	assert_int_equal(sym_policy_parse("symphony:reserve=x", &p, err, sizeof(err)), -EINVAL);
}

/* Two kinds: kind 0 fast (l = b + 5 ms), kind 1 slow (l = 2b + 10 ms). GPU 0
 * is fast, GPU 1 slow. One request at 0, SLO 30 ms.
 *   fast: frontrun 30 - l(2) = 30 - 7 = 23 ms; slow: 30 - l(2) = 30 - 14 = 16.
 * The slow kind's window opens first and its GPU is free: the request runs
 * on GPU 1 at 16 ms and finishes at 28 ms. With SLO 11 ms the slow kind
 * cannot serve it at all (l(1) = 12) and it runs on GPU 0 at 11 - 7 = 4 ms.
 * Then eager with both kinds due at once: the tie on batch size goes to the
 * kind that finishes first. */
/* One model on one GPU, requests at the given times; the dispatches' times
 * (ms) and sizes. */
static void one_model_run(const char *policy, double alpha, double beta, double slo_ms, double rate, int nreq,
			  const double *at_ms, int nexp, const double *want_ms, const int *size)
{
	struct sym_profile prof;
	assert_int_equal(sym_profile_init_linear(&prof, "m", alpha, beta, 32), 0);
	struct sym_model_cfg mc = { &prof, sym_ms(slo_ms), rate, "m", { NULL }, 0, 0 };
	struct sym_core_cfg cfg = { .nmodels = 1, .models = &mc, .ngpus = 1 };
	char err[256];
	assert_int_equal(sym_policy_parse(policy, &cfg.policy, err, sizeof(err)), 0);
	assert_int_equal(sym_gather_parse("lazy", &cfg.gather), 0);
	struct cd_driver *dr = cd_new();
	cd_start(dr, &cfg);
	for (int i = 0; i < nreq; i++)
		cd_arrive(dr, sym_ms(at_ms[i]), 0);
	cd_run(dr);
	assert_int_equal(dr->nd, nexp);
	for (int i = 0; i < nexp; i++) {
		if (dr->d[i].now != sym_ms(want_ms[i]))
			fail_msg("%s: dispatch %d at %.6f ms, expected %.6f", policy, i, sym_to_ms(dr->d[i].now), want_ms[i]);
		assert_int_equal(dr->d[i].size, size[i]);
	}
	cd_free(dr);
	sym_profile_finish(&prof);
}

/* The gain rule. BERT on an A100, l(b) = 7.353 b + 0.222 ms, SLO 59 ms,
 * 100 req/s: a request at 0 could wait for its frontrun moment,
 * 59 - l(2) = 44.072 ms, by when 4.4 more are expected, a batch of 5; but
 * l(5)/5 = 7.397 ms a request against l(1) = 7.575 now: 2.4% less, under the
 * 5% gain: it goes at once. gain=0 (and the paper's rule) wait to 44.072. */
static void test_symphony_gain(void **state)
{
	(void)state;
	const double at[1] = { 0 };
	one_model_run("symphony", 7.353, 0.222, 59, 100, 1, at, 1, (double[]){ 0 }, (int[]){ 1 });
	one_model_run("symphony:gain=0", 7.353, 0.222, 59, 100, 1, at, 1, (double[]){ 44.072 }, (int[]){ 1 });
	one_model_run("symphony:lookahead=off", 7.353, 0.222, 59, 100, 1, at, 1, (double[]){ 44.072 }, (int[]){ 1 });
	/* ResNet50-like (l(b) = b + 5): waiting for 4 more would save 39% a request: it waits */
	one_model_run("symphony:gain=0.05", 1, 5, 59, 100, 1, at, 1, (double[]){ 52 }, (int[]){ 1 });
}

/* The guard, by how far a model's load spreads. l(b) = 0.5 b + 5 ms, SLO
 * 30 ms, 10 req/s (its load keeps 0.06 GPUs busy: under stagger=2), three
 * requests at 0: the frontrun moment is 30 - l(4) = 23 ms. A model spread
 * over fewer than `stagger` GPUs is due by latest - wait_safe = 30 - l(3) -
 * 1 ms (the estimate's start) = 22.5; with stagger=0 every model guards its
 * head instead, d - l(1) - wait = 23.5, later than the frontrun: 23, as the
 * paper's rule and guard=off. guard=5 (fixed, 5 ms): 30 - 6.5 - 5 = 18.5. */
static void test_symphony_guard(void **state)
{
	(void)state;
	const double at[3] = { 0, 0, 0 };
	one_model_run("symphony", 0.5, 5, 30, 10, 3, at, 1, (double[]){ 22.5 }, (int[]){ 3 });
	one_model_run("symphony:stagger=0", 0.5, 5, 30, 10, 3, at, 1, (double[]){ 23 }, (int[]){ 3 });
	one_model_run("symphony:guard=off", 0.5, 5, 30, 10, 3, at, 1, (double[]){ 23 }, (int[]){ 3 });
	one_model_run("symphony:lookahead=off", 0.5, 5, 30, 10, 3, at, 1, (double[]){ 23 }, (int[]){ 3 });
	one_model_run("symphony:guard=5", 0.5, 5, 30, 10, 3, at, 1, (double[]){ 18.5 }, (int[]){ 3 });
}

static void test_heterogeneous_candidates(void **state)
{
	(void)state;
	struct sym_profile fast, slow;
	assert_int_equal(sym_profile_init_linear(&fast, "f", 1, 5, 20), 0);
	assert_int_equal(sym_profile_init_linear(&slow, "s", 2, 10, 20), 0);
	struct sym_kind kinds[2] = { { "fast", false, 0 }, { "slow", false, 0 } };
	int gpu_kind[2] = { 0, 1 };
	for (int v = 0; v < 2; v++) {
		struct sym_model_cfg mc = { &fast, (v ? 11 : 30) * SYM_MS, 0, "m", { NULL, &slow }, 0, 0 };
		struct sym_core_cfg cfg = { .nmodels = 1, .models = &mc, .ngpus = 2, .nkinds = 2, .kinds = kinds,
					    .gpu_kind = gpu_kind };
		char err[256];
		assert_int_equal(sym_policy_parse("symphony", &cfg.policy, err, sizeof(err)), 0);
		assert_int_equal(sym_gather_parse("lazy", &cfg.gather), 0);
		struct cd_driver *dr = cd_new();
		cd_start(dr, &cfg);
		cd_arrive(dr, 0, 0);
		cd_run(dr);
		assert_int_equal(dr->nd, 1);
		assert_int_equal(dr->d[0].gpu, v ? 0 : 1);
		assert_int_equal(dr->d[0].kind, v ? 0 : 1);
		assert_int_equal(dr->d[0].now, v ? 4 * SYM_MS : 16 * SYM_MS);
		assert_int_equal(dr->d[0].finish, v ? 10 * SYM_MS : 28 * SYM_MS);
		assert_int_equal(dr->nlate, 0);
		cd_free(dr);
	}
	struct sym_model_cfg mc2[2] = { { &fast, 30 * SYM_MS, 0, "a", { NULL, &slow }, 0, 0 },
					 { &fast, 40 * SYM_MS, 0, "b", { NULL, &slow }, 0, 0 } };
	struct sym_core_cfg cfg = { .nmodels = 2, .models = mc2, .ngpus = 2, .nkinds = 2, .kinds = kinds,
				    .gpu_kind = gpu_kind };
	char err[256];
	assert_int_equal(sym_policy_parse("eager", &cfg.policy, err, sizeof(err)), 0);
	assert_int_equal(sym_gather_parse("lazy", &cfg.gather), 0);
	struct cd_driver *dr = cd_new();
	cd_start(dr, &cfg);
	/* eager: model b's request at 0 takes a free GPU at once: both kinds
	 * are free and due; the same batch size on both, the fast one finishes
	 * first, so GPU 0. Then model a's request at 1 ms takes the slow GPU 1
	 * (the only free one; 1 + 12 <= 31). */
	cd_arrive(dr, 0, 1);
	cd_arrive(dr, 1 * SYM_MS, 0);
	cd_run(dr);
	assert_int_equal(dr->nd, 2);
	assert_int_equal(dr->d[0].model, 1);
	assert_int_equal(dr->d[0].gpu, 0);
	assert_int_equal(dr->d[1].model, 0);
	assert_int_equal(dr->d[1].gpu, 1);
	assert_int_equal(dr->d[1].finish, 13 * SYM_MS);
	cd_free(dr);
	sym_profile_finish(&fast);
	sym_profile_finish(&slow);
}

/* Sub-clusters as kinds (the runtime's ranker threads): a model restricted
 * to its kind (kinds_off) never takes a GPU of another, even an idle faster
 * one; on no kind it is held; scheduler policies, which schedule every
 * model everywhere, refuse such models, and a model configured to run on
 * no kind is refused. */
static void test_kinds_off(void **state)
{
	(void)state;
	struct sym_profile fast, slow;
	assert_int_equal(sym_profile_init_linear(&fast, "f", 1, 5, 20), 0);
	assert_int_equal(sym_profile_init_linear(&slow, "s", 2, 10, 20), 0);
	struct sym_kind kinds[2] = { { "part0", false, 0 }, { "part1", false, 0 } };
	int gpu_kind[4] = { 0, 0, 1, 1 };
	/* a on part 1 only (slow profile there), b on part 0 only */
	struct sym_model_cfg mc[2] = { { &fast, 40 * SYM_MS, 0, "a", { NULL, &slow }, 1u << 0, 0 },
				       { &fast, 40 * SYM_MS, 0, "b", { NULL, &slow }, 1u << 1, 0 } };
	struct sym_core_cfg cfg = { .nmodels = 2, .models = mc, .ngpus = 4, .nkinds = 2, .kinds = kinds,
				    .gpu_kind = gpu_kind };
	char err[256];
	assert_int_equal(sym_policy_parse("eager", &cfg.policy, err, sizeof(err)), 0);
	assert_int_equal(sym_gather_parse("lazy", &cfg.gather), 0);
	struct cd_driver *dr = cd_new();
	cd_start(dr, &cfg);
	for (int i = 0; i < 40; i++)
		cd_arrive(dr, i * SYM_MS / 2, i % 2);
	cd_run(dr);
	assert_true(dr->nd >= 10);
	for (int i = 0; i < dr->nd; i++) {
		/* eager would take the fast, idle GPU 0 for a; kinds_off keeps it on 2 and 3 */
		assert_int_equal(dr->d[i].kind, dr->d[i].model == 0 ? 1 : 0);
		assert_int_equal(gpu_kind[dr->d[i].gpu], dr->d[i].kind);
	}
	assert_int_equal(dr->nlate, 0);
	cd_free(dr);
	/* a moves to part 0 half-way (an epoch's move): its batches before the move ran on part
	 * 1, those after on part 0, its queue kept (every request ends once: cd_run) */
	dr = cd_new();
	cd_start(dr, &cfg);
	for (int i = 0; i < 80; i++)
		cd_arrive(dr, i * SYM_MS / 2, i % 2);
	cd_run_until(dr, 20 * SYM_MS);
	int before = dr->nd;
	assert_true(before >= 2);
	assert_int_equal(sym_core_set_kinds_off(dr->core, 0, 1u << 1, 20 * SYM_MS), 0);
	int at = dr->nd; /* (a batch of a may have been dispatched on part 1 by then, no later) */
	cd_run(dr);
	int a_after = 0;
	for (int i = 0; i < dr->nd; i++) {
		if (dr->d[i].model != 0)
			continue;
		assert_int_equal(dr->d[i].kind, i < at ? 1 : 0);
		a_after += i >= at;
	}
	assert_true(a_after >= 2);
	assert_int_equal(sym_core_set_kinds_off(dr->core, 2, 0, 40 * SYM_MS), -EINVAL); /* no model 2 */
	cd_free(dr);
	/* on no kind, a is held: its requests wait (no batch) until a kind is back, then go */
	dr = cd_new();
	cd_start(dr, &cfg);
	assert_int_equal(sym_core_set_kinds_off(dr->core, 0, 3, 0), 0);
	for (int i = 0; i < 4; i++)
		cd_arrive(dr, i * SYM_MS, 0);
	cd_run_until(dr, 10 * SYM_MS);
	assert_int_equal(dr->nd, 0);
	assert_int_equal(sym_core_queued(dr->core), 4);
	assert_int_equal(sym_core_set_kinds_off(dr->core, 0, 1u << 1, 10 * SYM_MS), 0);
	cd_run(dr);
	assert_true(dr->nd >= 1);
	for (int i = 0; i < dr->nd; i++)
		assert_int_equal(dr->d[i].kind, 0);
	assert_int_equal(dr->nlate, 0);
	cd_free(dr);
	struct sym_core *c = NULL;
	struct sym_sink sink = { NULL, cd_on_dispatch, cd_on_drop, NULL };
	assert_int_equal(sym_policy_parse("fcfs", &cfg.policy, err, sizeof(err)), 0);
	assert_int_equal(sym_core_create_err(&c, &cfg, &sink, err, sizeof(err)), -EINVAL);
	assert_contains(err, "candidate policy");
	assert_int_equal(sym_policy_parse("symphony", &cfg.policy, err, sizeof(err)), 0);
	mc[0].kinds_off = 3;
	assert_int_equal(sym_core_create_err(&c, &cfg, &sink, err, sizeof(err)), -EINVAL);
	assert_contains(err, "runs on no kind");
	assert_null(c);
	sym_profile_finish(&fast);
	sym_profile_finish(&slow);
}

/* Bad heterogeneous configurations are refused with a reason. */
static void test_core_config_errors(void **state)
{
	(void)state;
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "m", 1, 5, 7), 0);
	struct sym_model_cfg mc = { &p, 12 * SYM_MS, 0, "m", { NULL }, 0, 0 };
	struct sym_kind kinds[2] = { { "a", false, 0 }, { "b", false, 0 } };
	int bad_kind[2] = { 0, 2 };
	struct sym_core_cfg cfg = { .nmodels = 1, .models = &mc, .ngpus = 2, .nkinds = 2, .kinds = kinds,
				    .gpu_kind = bad_kind };
	char err[256];
	assert_int_equal(sym_policy_parse("symphony", &cfg.policy, err, sizeof(err)), 0);
	assert_int_equal(sym_gather_parse("lazy", &cfg.gather), 0);
	struct sym_core *c = NULL;
	struct sym_sink sink = { NULL, cd_on_dispatch, cd_on_drop, NULL };
	assert_int_equal(sym_core_create_err(&c, &cfg, &sink, err, sizeof(err)), -EINVAL);
	assert_null(c);
	assert_contains(err, "kind");
	cfg.gpu_kind = NULL; /* several kinds need a GPU-to-kind map */
	assert_int_equal(sym_core_create_err(&c, &cfg, &sink, err, sizeof(err)), -EINVAL);
	cfg.nkinds = SYM_MAX_KINDS + 1;
	assert_int_equal(sym_core_create_err(&c, &cfg, &sink, err, sizeof(err)), -EINVAL);
	sym_profile_finish(&p);
}

static void test_queue_requeue(void **state)
{
	(void)state;
	struct sym_queue q;
	sym_queue_init(&q);
	struct sym_request r[8];
	for (int i = 0; i < 8; i++)
		r[i] = (struct sym_request){ .id = (uint64_t)i, .deadline = 10 * (i + 1) };
	for (int i = 3; i < 6; i++)
		assert_int_equal(sym_queue_push(&q, &r[i]), 0);
	/* a cancelled batch of the three earliest goes back in front */
	struct sym_request *back[3] = { &r[0], &r[1], &r[2] };
	assert_int_equal(sym_queue_requeue(&q, back, 3), 0);
	/* one whose deadline falls inside the queue goes into its place */
	r[6].deadline = 45;
	struct sym_request *mid[1] = { &r[6] };
	assert_int_equal(sym_queue_requeue(&q, mid, 1), 0);
	uint64_t want[] = { 0, 1, 2, 3, 6, 4, 5 };
	assert_int_equal(sym_queue_len(&q), 7);
	for (size_t i = 0; i < 7; i++)
		assert_int_equal(sym_queue_at(&q, i)->id, want[i]);
	/* growing while requeueing keeps the order */
	struct sym_queue q2;
	sym_queue_init(&q2);
	struct sym_request many[200], *ptr[200];
	for (int i = 0; i < 200; i++) {
		many[i] = (struct sym_request){ .id = (uint64_t)i, .deadline = i };
		ptr[i] = &many[i];
	}
	for (int i = 100; i < 200; i++)
		assert_int_equal(sym_queue_push(&q2, &many[i]), 0);
	assert_int_equal(sym_queue_requeue(&q2, ptr, 100), 0);
	for (size_t i = 0; i < 200; i++)
		assert_int_equal(sym_queue_at(&q2, i)->id, i);
	sym_queue_finish(&q);
	sym_queue_finish(&q2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry_round_trip),
		cmocka_unit_test(test_kv_next),
		cmocka_unit_test(test_betalambda_params),
		cmocka_unit_test(test_betalambda_worked_example),
		cmocka_unit_test(test_symphony_reserve),
		cmocka_unit_test(test_symphony_gain),
		cmocka_unit_test(test_symphony_guard),
		cmocka_unit_test(test_heterogeneous_candidates),
		cmocka_unit_test(test_kinds_off),
		cmocka_unit_test(test_core_config_errors),
		cmocka_unit_test(test_queue_requeue),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
