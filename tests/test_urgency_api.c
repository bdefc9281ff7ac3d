/* libsymphony-urgency (urgency/symphony_urgency.h): the four calls of the
 * paper's Table I on a clock the test moves. Worked decisions (the more
 * urgent application issues, on the resource where it is least urgent, the
 * least loaded nodes), consolidation, the history table's fit against the
 * set's size, every bad argument, ids that cannot be completed twice, and
 * two threads per application: every request is issued and completed
 * exactly once. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "urgency/symphony_urgency.h"

static double clock_now;
static double fake_clock(void *ctx)
{
	(void)ctx;
	return clock_now;
}

static struct sym_urg *make(int nodes, int cpus, int gpus, const char *shape, bool signed_app)
{
	char err[256];
	struct sym_urg_config cfg = { .nodes = nodes, .cpus_per_node = cpus, .gpus_per_node = gpus, .shape = shape,
				      .signed_app = signed_app, .min_samples = 4, .clock_ms = fake_clock };
	struct sym_urg *u = sym_urg_create(&cfg, err, sizeof(err));
	if (!u)
		fail_msg("create: %s", err);
	return u;
}

static int reg(struct sym_urg *u, double resp, double load, const int *nodes, int n, int per, int cons)
{
	char err[256];
	int id = sym_urg_register(u, resp, load, nodes, n, per, cons, err, sizeof(err));
	if (id < 0)
		fail_msg("register: %s", err);
	return id;
}

/* Under the signed rule (signed_app): one node with a CPU and a GPU. A
 * (100 ms) and B (1000 ms) each get a request at t = 0: A has less slack,
 * so A issues first, on the GPU (no
 * history: EPT 0 on both, the GPU wins the tie); B is refused while A is
 * the more urgent, then issues on the CPU, the only resource left; with
 * both busy nobody issues; completions free them. */
static void test_worked_decisions(void **state)
{
	(void)state;
	clock_now = 0;
	struct sym_urg *u = make(1, 1, 1, NULL, true);
	const int n0[] = { 0 };
	int a = reg(u, 100, 10, n0, 1, 1, 4), b = reg(u, 1000, 10, n0, 1, 1, 4);
	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	assert_int_equal(sym_urg_notify(u, a, 1), 0);
	assert_int_equal(sym_urg_notify(u, b, 1), 0);
	int n, nodes[1], res[1];
	uint64_t ida, idb, x;
	assert_false(sym_urg_can_issue(u, b, &n, &idb, nodes, res));
	assert_true(sym_urg_can_issue(u, a, &n, &ida, nodes, res));
	assert_int_equal(n, 1);
	assert_int_equal(nodes[0], 0);
	assert_int_equal(res[0], SYM_URG_GPU);
	assert_true(sym_urg_can_issue(u, b, &n, &idb, nodes, res));
	assert_int_equal(res[0], SYM_URG_CPU);
	assert_int_equal(sym_urg_notify(u, a, 1), 0);
	assert_false(sym_urg_can_issue(u, a, &n, &x, nodes, res)); /* both resources busy */
	clock_now = 30;
	assert_int_equal(sym_urg_complete(u, ida), 0);
	assert_int_equal(sym_urg_complete(u, ida), -ENOENT); /* once */
	assert_true(sym_urg_can_issue(u, a, &n, &ida, nodes, res));
	assert_int_equal(res[0], SYM_URG_GPU);
	clock_now = 1200; /* B's request is past its deadline: counted late */
	assert_int_equal(sym_urg_complete(u, idb), 0);
	assert_int_equal(sym_urg_complete(u, ida), 0);
	struct sym_urg_stats sa, sb;
	assert_int_equal(sym_urg_stats(u, a, &sa), 0);
	assert_int_equal(sym_urg_stats(u, b, &sb), 0);
	assert_int_equal(sa.notified, 2);
	assert_int_equal(sa.completed, 2);
	assert_int_equal(sa.late, 1); /* the second: notified at 0, due at 100, done at 1200 */
	assert_int_equal(sb.late, 1);
	assert_int_equal(sb.pending, 0);
	assert_int_equal(sym_urg_complete(u, 12345), -ENOENT);
	sym_urg_destroy(u);
}

/* Load (Eq. 3) under the signed rule: A has 1 pending request, B 5, both
 * 100 ms from their deadline, 10 expected per second. As published (U * L
 * with U = -slack^3 < 0) the *less* loaded A is the more urgent: the quirk
 * docs/policies.md describes; with monotone (U / L while U < 0) the loaded
 * B is. Either way
 * consolidation issues min(consolidate, pending), oldest first. */
static void test_load_and_consolidation(void **state)
{
	(void)state;
	for (int mono = 0; mono < 2; mono++) {
		clock_now = 0;
		char err[256];
		struct sym_urg_config cfg = { .nodes = 1, .gpus_per_node = 1, .monotone = mono, .signed_app = true,
					      .clock_ms = fake_clock };
		struct sym_urg *u = sym_urg_create(&cfg, err, sizeof(err));
		assert_non_null(u);
		const int n0[] = { 0 };
		int a = reg(u, 100, 10, n0, 1, 1, 3), b = reg(u, 100, 10, n0, 1, 1, 3);
		assert_int_equal(sym_urg_notify(u, a, 1), 0);
		for (int i = 0; i < 5; i++)
			assert_int_equal(sym_urg_notify(u, b, 1), 0);
		int n, nodes[1], res[1];
		uint64_t id;
		int first = mono ? b : a, second = mono ? a : b;
		assert_false(sym_urg_can_issue(u, second, &n, &id, nodes, res));
		assert_true(sym_urg_can_issue(u, first, &n, &id, nodes, res));
		assert_int_equal(n, mono ? 3 : 1);
		assert_int_equal(sym_urg_complete(u, id), 0);
		assert_true(sym_urg_can_issue(u, b, &n, &id, nodes, res) || sym_urg_can_issue(u, a, &n, &id, nodes, res));
		struct sym_urg_stats s;
		sym_urg_stats(u, b, &s);
		assert_int_equal(s.issued + (uint64_t)s.pending, 5);
		sym_urg_destroy(u);
	}
}

/* Eq. 5 as printed (the default): U_A is the smallest |U_A,R|. One node
 * with a CPU and a GPU; A (100 ms) and B (1000 ms), 10 expected per second,
 * one request each at t = 0 (EPT 0): |U_A| = 100^3 / 10 = 1e5, |U_B| =
 * 1000^3 / 10 = 1e8, so B, the one with more slack, issues first (on the
 * GPU: equal urgency on both, the GPU wins), then A on the CPU. Both
 * complete at 20 and each gets a new request then; at t = 200 A's is 80 ms
 * overdue: U_A = +80^3 / 10 = 51200 against B's |-980^3 / 10| = 9.4e7, and
 * Eq. 5 still sends B first; the signed rule sends A (51200 > -9.4e7). */
static void test_eq5_default(void **state)
{
	(void)state;
	for (int sgn = 0; sgn < 2; sgn++) {
		clock_now = 0;
		struct sym_urg *u = make(1, 1, 1, NULL, sgn);
		const int n0[] = { 0 };
		int a = reg(u, 100, 10, n0, 1, 1, 4), b = reg(u, 1000, 10, n0, 1, 1, 4);
		int n, nodes[1], res[1];
		uint64_t ida, idb;
		assert_int_equal(sym_urg_notify(u, a, 1), 0);
		assert_int_equal(sym_urg_notify(u, b, 1), 0);
		int first = sgn ? a : b, second = sgn ? b : a;
		uint64_t *idf = sgn ? &ida : &idb, *ids = sgn ? &idb : &ida;
		assert_false(sym_urg_can_issue(u, second, &n, ids, nodes, res));
		assert_true(sym_urg_can_issue(u, first, &n, idf, nodes, res));
		assert_int_equal(res[0], SYM_URG_GPU);
		assert_true(sym_urg_can_issue(u, second, &n, ids, nodes, res));
		assert_int_equal(res[0], SYM_URG_CPU);
		clock_now = 20;
		assert_int_equal(sym_urg_complete(u, ida), 0);
		assert_int_equal(sym_urg_complete(u, idb), 0);
		assert_int_equal(sym_urg_notify(u, a, 1), 0);
		assert_int_equal(sym_urg_notify(u, b, 1), 0);
		clock_now = 200;
		assert_false(sym_urg_can_issue(u, second, &n, ids, nodes, res));
		assert_true(sym_urg_can_issue(u, first, &n, idf, nodes, res));
		sym_urg_destroy(u);
	}
}

/* The load balancer: nodes come least loaded first among the application's
 * own, num_nodes of them. */
static void test_nodes(void **state)
{
	(void)state;
	clock_now = 0;
	struct sym_urg *u = make(4, 0, 2, NULL, false);
	const int mine[] = { 3, 1, 2 };
	int a = reg(u, 100, 1, mine, 3, 2, 1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(sym_urg_notify(u, a, 1), 0);
	int n, nodes[2], res[2];
	uint64_t id;
	assert_true(sym_urg_can_issue(u, a, &n, &id, nodes, res));
	assert_int_equal(nodes[0], 1); /* all idle: the lower nodes */
	assert_int_equal(nodes[1], 2);
	assert_true(sym_urg_can_issue(u, a, &n, &id, nodes, res));
	assert_int_equal(nodes[0], 3); /* 1 and 2 are busy once each */
	assert_int_equal(nodes[1], 1);
	assert_true(sym_urg_can_issue(u, a, &n, &id, nodes, res));
	assert_int_equal(nodes[0], 2); /* 2 has a GPU free; 3 too; 1 none */
	assert_int_equal(nodes[1], 3);
	sym_urg_destroy(u);
}

/* The history table: sets of sizes 1..8 on the GPU taking 3 + 2*size ms
 * give EPT(size) = 3 + 2 size once min_samples (4) are in; before, 0 (the
 * CPU is busy meanwhile, so that every set goes to the GPU). The estimate then steers: with the GPU's EPT large and the
 * CPU's unknown (0), a tight application goes to the CPU, where its slack is
 * largest and so its urgency lowest. (hold: a tight application that takes
 * the GPU first, so that a's first set goes to the CPU and keeps it.) */
static void test_history_fit(void **state)
{
	(void)state;
	clock_now = 0;
	struct sym_urg *u = make(1, 1, 1, NULL, true);
	const int n0[] = { 0 };
	int hold = reg(u, 1, 1, n0, 1, 1, 1), a = reg(u, 1e6, 1, n0, 1, 1, 1);
	int n, nodes[1], res[1];
	uint64_t id, hold_id;
	assert_int_equal(sym_urg_notify(u, a, 1), 0);
	assert_int_equal(sym_urg_notify(u, hold, 1), 0);
	assert_true(sym_urg_can_issue(u, hold, &n, &hold_id, nodes, res)); /* the tighter: the GPU */
	assert_int_equal(res[0], SYM_URG_GPU);
	assert_true(sym_urg_can_issue(u, a, &n, &id, nodes, res)); /* a's first set: the CPU */
	assert_int_equal(res[0], SYM_URG_CPU);
	assert_int_equal(sym_urg_complete(u, hold_id), 0); /* the GPU is free, the CPU held by a's set */
	uint64_t cpu_id = id;
	for (int i = 1; i <= 8; i++) {
		assert_int_equal(sym_urg_notify(u, a, i), 0);
		assert_true(sym_urg_can_issue(u, a, &n, &id, nodes, res));
		assert_int_equal(res[0], SYM_URG_GPU);
		if (i <= 4)
			assert_true(sym_urg_estimate(u, a, SYM_URG_GPU, 5) == 0);
		clock_now += 3 + 2 * i;
		assert_int_equal(sym_urg_complete(u, id), 0);
	}
	assert_true(fabs(sym_urg_estimate(u, a, SYM_URG_GPU, 5) - 13) < 1e-9);
	assert_true(fabs(sym_urg_estimate(u, a, SYM_URG_GPU, 10) - 23) < 1e-9);
	assert_true(sym_urg_estimate(u, a, SYM_URG_CPU, 5) == 0);
	assert_true(sym_urg_estimate(u, a, 7, 5) == -1);
	assert_true(sym_urg_estimate(u, 9, SYM_URG_GPU, 5) == -1);
	struct sym_urg_stats s;
	sym_urg_stats(u, a, &s);
	assert_true(s.fitted[SYM_URG_GPU] && !s.fitted[SYM_URG_CPU]);
	assert_true(fabs(s.ept_ms[SYM_URG_GPU] - 5) < 1e-9);
	assert_int_equal(sym_urg_complete(u, cpu_id), 0); /* one CPU sample: no fit yet */
	assert_false(sym_urg_stats(u, a, &s) || s.fitted[SYM_URG_CPU]);
	/* a's next set of size 8: EPT 19 ms on the GPU, 0 on the CPU (no fit): more slack on the CPU */
	assert_int_equal(sym_urg_notify(u, a, 8), 0);
	assert_true(sym_urg_can_issue(u, a, &n, &id, nodes, res));
	assert_int_equal(res[0], SYM_URG_CPU);
	sym_urg_destroy(u);
}

/* Every bad argument is refused with a message naming it. */
static void test_bad_arguments(void **state)
{
	(void)state;
	char err[256];
	struct sym_urg_config bad[] = {
		{ .nodes = 0, .gpus_per_node = 1 },
		{ .nodes = 1 },
		{ .nodes = 1, .gpus_per_node = 1, .shape = "cubic" },
		{ .nodes = 1, .gpus_per_node = 1, .p = 20 },
		{ .nodes = 1, .gpus_per_node = 1, .min_samples = 1 },
	};
	const char *want[] = { "nodes: 0", "at least one", "shape: 'cubic'", "p: 20", "min_samples: 1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_null(sym_urg_create(&bad[i], err, sizeof(err)));
		if (!strstr(err, want[i]))
			fail_msg("config %zu: '%s' lacks '%s'", i, err, want[i]);
	}
	clock_now = 0;
	struct sym_urg *u = make(2, 1, 1, "exp", false);
	const int ok[] = { 0, 1 }, dup[] = { 1, 1 }, out[] = { 2 };
	struct {
		double resp, load;
		const int *nodes;
		int n, per, cons;
		const char *want;
	} cases[] = {
		{ 0, 1, ok, 2, 1, 1, "response_time: 0" },
		{ 10, -1, ok, 2, 1, 1, "average_load: -1" },
		{ 10, 1, NULL, 2, 1, 1, "nodelist" },
		{ 10, 1, ok, 3, 1, 1, "nodelist: 3 nodes" },
		{ 10, 1, ok, 2, 3, 1, "num_nodes: 3" },
		{ 10, 1, ok, 2, 1, 0, "consolidate: 0" },
		{ 10, 1, dup, 2, 1, 1, "node 1 twice" },
		{ 10, 1, out, 1, 1, 1, "node 2" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = 0;
		assert_int_equal(sym_urg_register(u, cases[i].resp, cases[i].load, cases[i].nodes, cases[i].n, cases[i].per,
						  cases[i].cons, err, sizeof(err)),
				 -EINVAL);
		if (!strstr(err, cases[i].want))
			fail_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].want);
	}
	assert_int_equal(sym_urg_notify(u, 0, 1), -ENOENT); /* nothing registered yet */
	int a = reg(u, 10, 1, ok, 2, 1, 1);
	assert_int_equal(sym_urg_notify(u, a, 0), -EINVAL);
	assert_int_equal(sym_urg_notify(u, a, NAN), -EINVAL);
	int n, nodes[1], res[1];
	uint64_t id;
	assert_false(sym_urg_can_issue(u, 5, &n, &id, nodes, res));
	assert_false(sym_urg_can_issue(u, a, &n, &id, nodes, res)); /* nothing pending */
	struct sym_urg_stats s;
	assert_int_equal(sym_urg_stats(u, -1, &s), -ENOENT);
	sym_urg_destroy(u);
	sym_urg_destroy(NULL);
}

/* Two applications, each with a notifying thread and an issuing thread
 * that completes at once, on the real clock: every request is issued and
 * completed exactly once. */
struct tapp {
	struct sym_urg *u;
	int id, total;
	atomic_int done_notifying;
};

static void *t_notify(void *p)
{
	struct tapp *t = p;
	for (int i = 0; i < t->total; i++)
		if (sym_urg_notify(t->u, t->id, 1 + i % 3))
			abort();
	atomic_store(&t->done_notifying, 1);
	return NULL;
}

static void *t_issue(void *p)
{
	struct tapp *t = p;
	int issued = 0;
	for (long spins = 0; issued < t->total && spins < 100000000; spins++) {
		int n, nodes[1], res[1];
		uint64_t id;
		if (!sym_urg_can_issue(t->u, t->id, &n, &id, nodes, res))
			continue;
		issued += n;
		if (sym_urg_complete(t->u, id))
			abort();
	}
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	char err[256];
	struct sym_urg_config cfg = { .nodes = 2, .cpus_per_node = 1, .gpus_per_node = 1 };
	struct sym_urg *u = sym_urg_create(&cfg, err, sizeof(err));
	assert_non_null(u);
	const int nodes[] = { 0, 1 };
	struct tapp apps[2];
	pthread_t th[4];
	for (int i = 0; i < 2; i++) {
		apps[i] = (struct tapp){ .u = u, .total = 20000 };
		apps[i].id = reg(u, 5 + 100 * i, 1000, nodes, 2, 1, 4 + i);
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(pthread_create(&th[2 * i], NULL, t_notify, &apps[i]), 0);
		assert_int_equal(pthread_create(&th[2 * i + 1], NULL, t_issue, &apps[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2; i++) {
		struct sym_urg_stats s;
		assert_int_equal(sym_urg_stats(u, apps[i].id, &s), 0);
		assert_int_equal(s.notified, 20000);
		assert_int_equal(s.issued, 20000);
		assert_int_equal(s.completed, 20000);
		assert_int_equal(s.pending, 0);
	}
	sym_urg_destroy(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_decisions), cmocka_unit_test(test_load_and_consolidation),
		cmocka_unit_test(test_eq5_default),
		cmocka_unit_test(test_nodes),            cmocka_unit_test(test_history_fit),
		cmocka_unit_test(test_bad_arguments),    cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
