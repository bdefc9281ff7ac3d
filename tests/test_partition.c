/* tests/test_partition.c - the partitioning MILP (partition/partition.h) on
 * small instances with known optima, its constraints one at a time, the
 * change bound (11), the random baseline, and every refused problem. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "partition/partition.h"
#include "tests/testutil.h"

/* rates 4, 3, 2, 1 with 1 MB each, into 2 parts */
static struct sym_part_model four[4] = {
	{ 4, 1, 0, 1, -1 }, { 3, 1, 0, 1, -1 }, { 2, 1, 0, 1, -1 }, { 1, 1, 0, 1, -1 } };

static struct sym_part_problem problem(struct sym_part_model *m, int n, int parts)
{
	return (struct sym_part_problem){ .nmodels = n, .models = m, .nparts = parts, .c_max = -1,
					  .time_limit_s = 5, .seed = 1 };
}

/* {4, 1} and {3, 2}: both parts at rate 5 and 2 MB, objective 0, proven optimal. */
static void test_balanced_optimum(void **state)
{
	(void)state;
	struct sym_part_problem p = problem(four, 4, 2);
	struct sym_part_result r;
	char err[256];
	assert_int_equal(sym_partition_milp(&p, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, SYM_PART_OPTIMAL);
	assert_true(fabs(r.objective) < 1e-6);
	assert_int_equal(r.assign[0], r.assign[3]);
	assert_int_equal(r.assign[1], r.assign[2]);
	assert_true(r.assign[0] != r.assign[1]);
	assert_true(r.rate_imbalance < 1e-9 && r.mem_imbalance < 1e-9);
	assert_true(fabs(r.w - 2.5) < 1e-9); /* R / S = 5 / 2 */
	sym_part_result_free(&r);
}

/* Memory binds: two 6 MB models with 3 MB of dynamic memory each cannot share a 10 MB part. */
static void test_memory_binds(void **state)
{
	(void)state;
	struct sym_part_model m[3] = { { 10, 6, 3, 0, -1 }, { 1, 6, 3, 0, -1 }, { 1, 1, 0, 0, -1 } };
	struct sym_part_problem p = problem(m, 3, 2);
	p.s_max = 10;
	p.w = 100; /* memory balance weighs most... */
	struct sym_part_result r;
	char err[256];
	assert_int_equal(sym_partition_milp(&p, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, SYM_PART_OPTIMAL);
	assert_true(r.assign[0] != r.assign[1]); /* ...but the two big ones never share: 6 + 6 + 3 > 10 */
	sym_part_result_free(&r);
	/* a model larger than a GPU: no assignment at all */
	m[0].static_mb = 20;
	assert_int_equal(sym_partition_milp(&p, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, SYM_PART_INFEASIBLE);
	assert_null(r.assign);
	sym_part_result_free(&r);
}

/* 30 copies of VGG16 (822 MB static, 6,200 dynamic) on 1080 Ti parts (11,264
 * MB): six fit a part, so four parts are impossible (the totals say so at
 * once, where CBC alone could not prove it: the copies are symmetric) and
 * five parts take six each. Likewise a total rate above l * R_max. */
static void test_totals_bound(void **state)
{
	(void)state;
	struct sym_part_model m[30];
	for (int i = 0; i < 30; i++)
		m[i] = (struct sym_part_model){ 5, 822, 6200, 0, -1 };
	struct sym_part_problem p = problem(m, 30, 4);
	p.s_max = 11264;
	p.time_limit_s = 5;
	struct sym_part_result r;
	char err[256];
	assert_int_equal(sym_partition_milp(&p, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, SYM_PART_INFEASIBLE);
	assert_true(r.seconds < 0.5);
	sym_part_result_free(&r);
	p.nparts = 5;
	assert_int_equal(sym_partition_milp(&p, &r, err, sizeof(err)), 0);
	assert_true(r.status == SYM_PART_OPTIMAL || r.status == SYM_PART_FEASIBLE);
	int count[5] = { 0 };
	for (int i = 0; i < 30; i++)
		count[r.assign[i]]++;
	for (int j = 0; j < 5; j++)
		assert_int_equal(count[j], 6);
	sym_part_result_free(&r);
	p.s_max = 0;
	p.r_max = 29.9; /* 150 requests/s over five parts */
	assert_int_equal(sym_partition_milp(&p, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, SYM_PART_INFEASIBLE);
	sym_part_result_free(&r);
}

/* A ranker's limit binds: R_max 5 forces 4 and 1 apart from 3 and 2 even when memory would
 * rather have them otherwise. */
static void test_rate_binds(void **state)
{
	(void)state;
	struct sym_part_model m[4] = { { 4, 10, 0, 0, -1 }, { 3, 0, 0, 0, -1 }, { 2, 0, 0, 0, -1 }, { 1, 10, 0, 0, -1 } };
	struct sym_part_problem p = problem(m, 4, 2);
	p.r_max = 5;
	p.w = 1000;
	struct sym_part_result r;
	char err[256];
	assert_int_equal(sym_partition_milp(&p, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, SYM_PART_OPTIMAL);
	double R[2] = { 0, 0 };
	for (int i = 0; i < 4; i++)
		R[r.assign[i]] += m[i].rate;
	assert_true(R[0] <= 5 + 1e-9 && R[1] <= 5 + 1e-9);
	sym_part_result_free(&r);
}

/* The change bound (11): everything in part 0 now, moves cost 1 each way, C_max 2 lets exactly
 * one model move, and the best one to move is the rate-4 model: parts at 6 and 4 req/s. */
static void test_change_bound(void **state)
{
	(void)state;
	struct sym_part_model m[4];
	memcpy(m, four, sizeof(m));
	for (int i = 0; i < 4; i++)
		m[i].current = 0;
	struct sym_part_problem p = problem(m, 4, 2);
	p.c_max = 2;
	struct sym_part_result r;
	char err[256];
	assert_int_equal(sym_partition_milp(&p, &r, err, sizeof(err)), 0);
	assert_int_equal(r.status, SYM_PART_OPTIMAL);
	assert_int_equal(r.assign[0], 1);
	assert_int_equal(r.assign[1], 0);
	assert_int_equal(r.assign[2], 0);
	assert_int_equal(r.assign[3], 0);
	assert_true(fabs(r.change_cost - 2) < 1e-9);
	assert_true(fabs(r.dr - 1) < 1e-9);
	sym_part_result_free(&r);
	/* no change allowed: the current assignment stands */
	p.c_max = 0;
	assert_int_equal(sym_partition_milp(&p, &r, err, sizeof(err)), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(r.assign[i], 0);
	sym_part_result_free(&r);
}

/* 60 models into 4 parts: the MILP (1 s) is never worse than the random baseline (1 s). */
static void test_random_baseline(void **state)
{
	(void)state;
	struct sym_part_model m[60];
	for (int i = 0; i < 60; i++)
		m[i] = (struct sym_part_model){ 1 + (i * 37 % 23), 50 + (i * 53 % 97) * 10, 100 + (i * 17 % 11) * 50, 0,
						-1 };
	struct sym_part_problem p = problem(m, 60, 4);
	p.time_limit_s = 1;
	p.s_max = 20000;
	struct sym_part_result a, b;
	char err[256];
	assert_int_equal(sym_partition_milp(&p, &a, err, sizeof(err)), 0);
	assert_int_equal(sym_partition_random(&p, &b, err, sizeof(err)), 0);
	assert_true(a.status == SYM_PART_OPTIMAL || a.status == SYM_PART_FEASIBLE);
	assert_int_equal(b.status, SYM_PART_FEASIBLE);
	assert_true(b.tries > 1000 && b.feasible > 0);
	if (a.objective > b.objective + 1e-6)
		print_error("MILP %s %.4f, random %.4f\n", sym_part_status_name(a.status), a.objective, b.objective);
	assert_true(a.objective <= b.objective + 1e-6);
	/* the scores are what sym_partition_score says of the assignments */
	struct sym_part_result s = { 0 };
	assert_int_equal(sym_partition_score(&p, a.assign, &s), 1);
	assert_true(fabs(s.objective - a.objective) < 1e-9);
	print_message("60 models, 4 parts: MILP %s objective %.3f (rate imbalance %.3f, memory %.3f) in %.2f s; "
		      "random %.3f (%.3f, %.3f) from %llu tries\n", sym_part_status_name(a.status), a.objective,
		      a.rate_imbalance, a.mem_imbalance, a.seconds, b.objective, b.rate_imbalance, b.mem_imbalance,
		      (unsigned long long)b.tries);
	sym_part_result_free(&s);
	sym_part_result_free(&a);
	sym_part_result_free(&b);
}

static void test_bad_problems(void **state)
{
	(void)state;
	struct sym_part_model m[2] = { { 1, 1, 0, 0, -1 }, { 1, 1, 0, 0, -1 } };
	struct sym_part_result r;
	char err[256];
	struct sym_part_problem p = problem(m, 2, 0);
	assert_int_equal(sym_partition_milp(&p, &r, err, sizeof(err)), -EINVAL);
	assert_contains(err, "0 parts");
	p = problem(m, 0, 2);
	assert_int_equal(sym_partition_random(&p, &r, err, sizeof(err)), -EINVAL);
	assert_contains(err, "no models");
	m[1].rate = -1;
	p = problem(m, 2, 2);
	assert_int_equal(sym_partition_milp(&p, &r, err, sizeof(err)), -EINVAL);
	assert_contains(err, "model 1");
	m[1].rate = NAN;
	assert_int_equal(sym_partition_milp(&p, &r, err, sizeof(err)), -EINVAL);
	m[1].rate = 1;
	m[0].current = 2;
	assert_int_equal(sym_partition_milp(&p, &r, err, sizeof(err)), -EINVAL);
	assert_contains(err, "part 2, of 2");
	m[0].current = -1;
	p.r_max = INFINITY;
	assert_int_equal(sym_partition_milp(&p, &r, err, sizeof(err)), -EINVAL);
	assert_contains(err, "finite");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_balanced_optimum),
		cmocka_unit_test(test_memory_binds),
		cmocka_unit_test(test_rate_binds),
		cmocka_unit_test(test_totals_bound),
		cmocka_unit_test(test_change_bound),
		cmocka_unit_test(test_random_baseline),
		cmocka_unit_test(test_bad_problems),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
