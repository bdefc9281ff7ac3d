/* tests/test_query.c - Nexus's query analysis (core/query.h): the paper's
 * worked example (nexus.md Section 4.2, Figures 3 and 4), the dynamic
 * program against brute force on trees, and every bad input. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/query.h"

static void assert_contains(const char *s, const char *sub)
{
	if (!strstr(s, sub))
		fail_msg("'%s' does not contain '%s'", s, sub);
}

/* Figure 3: X and Y at 40, 50 and 60 ms; X feeds Y with fan-out gamma; 100 ms in all. Figure 4
 * gives the average throughput (queries/s per GPU, R / GPUs) of the three splits; the analysis
 * must pick the best one for each gamma: (60, 40) at 0.1, (50, 50) at 1, (40, 60) at 10. */
static void test_figure4(void **state)
{
	(void)state;
	static const double lat[] = { 40, 50, 60 }, tx[] = { 200, 250, 300 }, ty[] = { 300, 400, 500 };
	const double gammas[] = { 0.1, 1, 10 };
	const double paper[3][3] = { { 192.3, 142.9, 40.0 }, { 235.3, 153.8, 34.5 }, { 272.7, 150.0, 27.3 } };
	const int best_plan[] = { 2, 1, 0 };
	char err[256];
	for (int g = 0; g < 3; g++) {
		struct sym_query_stage st[2] = {
			{ "X", NULL, 3, lat, tx, -1, 1, 1 },
			{ "Y", NULL, 3, lat, ty, 0, gammas[g], 1 },
		};
		struct sym_query_split out[2];
		double gpus;
		assert_int_equal(sym_query_split(st, 2, 1000, 100, 10, out, &gpus, err, sizeof(err)), 0);
		/* the paper's average throughput of each plan: 1 / (1/T_X + gamma/T_Y) */
		for (int p = 0; p < 3; p++) {
			double avg = 1 / (1 / tx[p] + gammas[g] / ty[2 - p]);
			assert_true(fabs(avg - paper[p][g]) < 0.06);
			const double plan[2] = { lat[p], lat[2 - p] };
			struct sym_query_split o2[2];
			double g2;
			assert_int_equal(sym_query_eval(st, 2, 1000, 100, plan, o2, &g2, err, sizeof(err)), 0);
			assert_true(fabs(1000 / g2 - paper[p][g]) < 0.06);
		}
		int b = best_plan[g];
		print_message("gamma %g: split X %g ms, Y %g ms; %.1f queries/s per GPU (paper's best %.1f)\n", gammas[g],
			      out[0].budget_ms, out[1].budget_ms, 1000 / gpus, paper[b][g]);
		assert_true(fabs(out[0].budget_ms - lat[b]) < 1e-9);
		assert_true(fabs(out[1].budget_ms - lat[2 - b]) < 1e-9);
		assert_true(fabs(1000 / gpus - paper[b][g]) < 0.06);
		assert_true(fabs(out[1].rate - 1000 * gammas[g]) < 1e-9);
		/* the even split is plan (b) */
		double even;
		assert_int_equal(sym_query_even(st, 2, 1000, 100, out, &even, err, sizeof(err)), 0);
		assert_true(fabs(1000 / even - paper[1][g]) < 0.06);
		assert_true(gpus <= even + 1e-9);
	}
}

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static double rnd(void)
{
	rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
	return (double)(rs >> 11) / 9007199254740992.0;
}

/* Brute force: every assignment of grid budgets to the stages whose paths fit. */
static double brute(const struct sym_query_stage *st, int n, double rate, double slo, double eps, int v, int *k,
		    int T)
{
	if (v == n) {
		int used[SYM_QUERY_MAX_STAGES];
		for (int u = 0; u < n; u++) {
			used[u] = k[u] + (u ? used[st[u].parent] : 0);
			if (used[u] > T)
				return INFINITY;
		}
		double total = 0, r[SYM_QUERY_MAX_STAGES];
		for (int u = 0; u < n; u++) {
			r[u] = (u ? r[st[u].parent] : rate) * st[u].gamma;
			struct sym_query_split o;
			double g;
			struct sym_query_stage one = st[u];
			one.parent = -1;
			one.gamma = 1;
			char e[128];
			if (r[u] == 0)
				continue;
			if (k[u] == 0 || sym_query_even(&one, 1, r[u], k[u] * eps, &o, &g, e, sizeof(e)))
				return INFINITY;
			total += g;
		}
		return total;
	}
	double best = INFINITY;
	for (int x = 0; x <= T; x++) {
		k[v] = x;
		double y = brute(st, n, rate, slo, eps, v + 1, k, T);
		best = y < best ? y : best;
	}
	return best;
}

/* On random trees of 1-4 stages with linear profiles, the dynamic program's GPUs equal brute
 * force's over the same grid, its budgets fit every path, and its GPUs never exceed the even
 * split's (when that exists). */
static void test_against_brute_force(void **state)
{
	(void)state;
	struct sym_profile prof[4];
	char err[256];
	for (int trial = 0; trial < 60; trial++) {
		int n = 1 + (int)(rnd() * 4);
		struct sym_query_stage st[4];
		for (int v = 0; v < n; v++) {
			assert_int_equal(sym_profile_init_linear(&prof[v], "m", 0.2 + 3 * rnd(), 1 + 10 * rnd(), 32), 0);
			st[v] = (struct sym_query_stage){ NULL, &prof[v], 0, NULL, NULL, v ? (int)(rnd() * v) : -1,
							  v ? 0.1 + 3 * rnd() : 1, rnd() < 0.5 ? 1 : 2 };
		}
		double slo = 40 + 80 * rnd(), eps = slo / 12, gpus;
		struct sym_query_split out[4];
		int k[4];
		double want = brute(st, n, 500, slo, eps, 0, k, 12);
		int rc = sym_query_split(st, n, 500, slo, eps, out, &gpus, err, sizeof(err));
		if (isinf(want)) {
			assert_int_equal(rc, -ERANGE);
		} else {
			assert_int_equal(rc, 0);
			if (fabs(gpus - want) > 1e-9 * want)
				fail_msg("trial %d: DP %g GPUs, brute force %g", trial, gpus, want);
			double used[4];
			for (int v = 0; v < n; v++) {
				used[v] = out[v].budget_ms + (v ? used[st[v].parent] : 0);
				assert_true(used[v] <= slo + 1e-9);
				assert_true(out[v].lat_ms <= out[v].budget_ms + 1e-9);
				assert_true(out[v].batch >= 1 && out[v].batch <= 32);
			}
			double even;
			if (!sym_query_even(st, n, 500, slo, out, &even, err, sizeof(err)))
				assert_true(gpus <= even * (1 + 1e-9)); /* (depth 1-4 divides the 12 steps: the even
									 * share is on the grid) */
		}
		for (int v = 0; v < n; v++)
			sym_profile_finish(&prof[v]);
	}
}

static void test_errors(void **state)
{
	(void)state;
	static const double lat[] = { 40 }, tp[] = { 200 }, bad_lat[] = { -1 };
	struct sym_query_stage ok[2] = { { "X", NULL, 1, lat, tp, -1, 1, 1 }, { "Y", NULL, 1, lat, tp, 0, 1, 1 } };
	struct sym_query_split out[2];
	double g;
	char err[256];
	const struct {
		int n;
		double rate, slo, eps;
		int parent1;
		const double *lat1;
		double gamma1;
		int want;
		const char *msg;
	} cases[] = {
		{ 0, 10, 100, 10, 0, lat, 1, -EINVAL, "0 stages" },
		{ 2, 0, 100, 10, 0, lat, 1, -EINVAL, "rate 0" },
		{ 2, 10, -5, 10, 0, lat, 1, -EINVAL, "SLO -5" },
		{ 2, 10, 100, 0, 0, lat, 1, -EINVAL, "grid step 0" },
		{ 2, 10, 100, 1e-4, 0, lat, 1, -EINVAL, "steps" },
		{ 2, 10, 100, 10, 1, lat, 1, -EINVAL, "Y: parent 1 is not a stage before it" },
		{ 2, 10, 100, 10, 0, lat, -1, -EINVAL, "Y: fan-out gamma -1" },
		{ 2, 10, 100, 10, 0, bad_lat, 1, -EINVAL, "Y: point 0 (-1 ms" },
		{ 2, 10, 70, 10, 0, lat, 1, -ERANGE, "no split of 70 ms" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sym_query_stage st[2] = { ok[0], ok[1] };
		st[1].parent = cases[i].parent1;
		st[1].lat_ms = cases[i].lat1;
		st[1].gamma = cases[i].gamma1;
		err[0] = 0;
		int rc = sym_query_split(st, cases[i].n, cases[i].rate, cases[i].slo, cases[i].eps, out, &g, err, sizeof(err));
		if (rc != cases[i].want || !strstr(err, cases[i].msg))
			fail_msg("case %zu: got %d '%s', want %d '%s'", i, rc, err, cases[i].want, cases[i].msg);
	}
	/* a Nexus session's worst case: a batch fits its budget when twice its latency does */
	struct sym_query_stage session[1] = { { "X", NULL, 1, lat, tp, -1, 1, 2 } };
	assert_int_equal(sym_query_split(session, 1, 10, 2 * lat[0] - 1, 1, out, &g, err, sizeof(err)), -ERANGE);
	assert_int_equal(sym_query_split(session, 1, 10, 2 * lat[0], 1, out, &g, err, sizeof(err)), 0);
	assert_true(fabs(out[0].budget_ms - 2 * lat[0]) < 1e-9 && out[0].lat_ms == lat[0]);
	session[0].lat_factor = -1;
	assert_int_equal(sym_query_split(session, 1, 10, 100, 1, out, &g, err, sizeof(err)), -EINVAL);
	assert_contains(err, "latency factor -1");
	struct sym_query_stage root_child[1] = { { "X", NULL, 1, lat, tp, 0, 1, 1 } };
	assert_int_equal(sym_query_split(root_child, 1, 10, 100, 10, out, &g, err, sizeof(err)), -EINVAL);
	assert_contains(err, "its parent must be -1");
	struct sym_query_stage none[1] = { { "X", NULL, 0, NULL, NULL, -1, 1, 1 } };
	assert_int_equal(sym_query_split(none, 1, 10, 100, 10, out, &g, err, sizeof(err)), -EINVAL);
	assert_contains(err, "neither a profile nor");
	/* the even split: 2 stages of 35 ms each cannot run X's 40 ms point */
	assert_int_equal(sym_query_even(ok, 2, 10, 70, out, &g, err, sizeof(err)), -ERANGE);
	assert_contains(err, "within its even share, 35 ms");
	/* a given split: budgets over the SLO on a path, a stage with no batch, a budget not positive */
	const double over[2] = { 40, 40 }, nobatch[2] = { 5, 60 }, zero[2] = { 0, 60 };
	assert_int_equal(sym_query_eval(ok, 2, 10, 70, over, out, &g, err, sizeof(err)), -ERANGE);
	assert_contains(err, "80 ms of budgets, over the SLO of 70 ms");
	assert_int_equal(sym_query_eval(ok, 2, 10, 70, nobatch, out, &g, err, sizeof(err)), -ERANGE);
	assert_contains(err, "within its budget, 5 ms");
	assert_int_equal(sym_query_eval(ok, 2, 10, 70, zero, out, &g, err, sizeof(err)), -EINVAL);
	assert_contains(err, "budget 0 ms");
	/* a stage no request reaches (gamma 0) needs nothing, whatever its budget */
	struct sym_query_stage filt[2] = { ok[0], ok[1] };
	filt[1].gamma = 0;
	assert_int_equal(sym_query_split(filt, 2, 10, 100, 10, out, &g, err, sizeof(err)), 0);
	assert_true(out[1].gpus == 0 && fabs(g - 10.0 / 200) < 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_figure4),
		cmocka_unit_test(test_against_brute_force),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
