/* tests/test_autoscaler.c - `symphony autoscale`'s reading of schedd's
 * metrics and its decisions (runtime/autoscaler.h), without a cluster: the
 * process itself is driven by test_runtime's test_autoscale. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/autoscaler.h"

static void assert_contains(const char *s, const char *sub)
{
	if (!strstr(s, sub))
		fail_msg("'%s' does not contain '%s'", s, sub);
}

/* What schedd writes (runtime/schedd.c write_metrics), two sub-clusters of 3 ids each. */
static const char METRICS[] =
	"# HELP symphony_autoscale_add_gpus Advice from the last interval: GPUs to add\n"
	"# TYPE symphony_autoscale_add_gpus gauge\n"
	"symphony_autoscale_add_gpus 2\n"
	"# HELP symphony_subcluster_autoscale_add_gpus Advice per sub-cluster: GPUs to add\n"
	"# TYPE symphony_subcluster_autoscale_add_gpus gauge\n"
	"symphony_subcluster_autoscale_add_gpus{subcluster=\"0\"} 2\n"
	"symphony_subcluster_autoscale_add_gpus{subcluster=\"1\"} 0\n"
	"symphony_subcluster_autoscale_release_gpus{subcluster=\"0\"} 0\n"
	"symphony_subcluster_autoscale_release_gpus{subcluster=\"1\"} 1\n"
	"symphony_subcluster_autoscale_bad_rate{subcluster=\"0\"} 0.25\n"
	"symphony_subcluster_autoscale_bad_rate{subcluster=\"1\"} 0\n"
	"symphony_subcluster_autoscale_idle_fraction{subcluster=\"0\"} 0\n"
	"symphony_subcluster_autoscale_idle_fraction{subcluster=\"1\"} 0.6\n"
	"# TYPE symphony_backend_serving gauge\n"
	"symphony_backend_serving{backend=\"0\",subcluster=\"0\"} 1\n"
	"symphony_backend_serving{backend=\"1\",subcluster=\"0\"} 0\n"
	"symphony_backend_serving{backend=\"2\",subcluster=\"0\"} 0\n"
	"symphony_backend_serving{backend=\"3\",subcluster=\"1\"} 1\n"
	"symphony_backend_serving{backend=\"4\",subcluster=\"1\"} 1\n"
	"symphony_backend_serving{backend=\"5\",subcluster=\"1\"} 0\n"
	"symphony_autoscale_interval_seconds 1\n"
	"symphony_autoscale_next_advice_seconds 0.25\n"
	"symphony_requests_total{model=\"m\",outcome=\"served\"} 17\n";

static void test_parse(void **state)
{
	(void)state;
	struct sym_ctl_metrics *m = malloc(sizeof(*m));
	char err[256];
	assert_int_equal(sym_ctl_parse(METRICS, strlen(METRICS), m, err, sizeof(err)), 0);
	assert_int_equal(m->nparts, 2);
	assert_int_equal(m->nbackends, 6);
	assert_true(m->add[0] == 2 && m->add[1] == 0 && m->release[1] == 1);
	assert_true(m->bad_rate[0] == 0.25 && m->idle_fraction[1] == 0.6);
	const int serving[] = { 1, 0, 0, 1, 1, 0 }, part[] = { 0, 0, 0, 1, 1, 1 };
	for (int i = 0; i < 6; i++) {
		assert_int_equal(m->serving[i], serving[i]);
		assert_int_equal(m->part[i], part[i]);
	}
	assert_int_equal(m->serving[6], -1);
	/* the advice's timing: given 0.75 s ago (its interval closed then), the next in 0.25 s, read
	 * 20 ms after it unless the controller's own wake-up comes first */
	assert_true(m->interval_s == 1 && m->next_advice_s == 0.25);
	struct sym_ctl_state *g = malloc(sizeof(*g));
	sym_ctl_state_init(g);
	assert_true(sym_ctl_advice_at(g, m, 0.5) == 0); /* (before the controller's start: its start) */
	sym_ctl_state_init(g);
	assert_true(fabs(sym_ctl_advice_at(g, m, 10) - 9.25) < 1e-12);
	/* later reads, each late by a few ms, fall on that grid: whole intervals apart */
	assert_true(sym_ctl_advice_at(g, m, 11.003) == 10.25);
	assert_true(sym_ctl_advice_at(g, m, 10.998) == 10.25);
	m->next_advice_s = 0.55; /* the same advice read again 0.3 s later */
	assert_true(sym_ctl_advice_at(g, m, 10.7) == 10.25);
	assert_true(fabs(sym_ctl_advice_at(g, m, 12.3) - 11.85) < 1e-12); /* a moved grid: taken anew */
	assert_true(fabs(sym_ctl_advice_at(g, m, 13.295) - 12.85) < 1e-12);
	m->next_advice_s = 0.25;
	free(g);
	assert_true(fabs(sym_ctl_next_read(m, 10, 15) - 10.27) < 1e-12);
	assert_true(sym_ctl_next_read(m, 10, 10.1) == 10.1);
	struct sym_ctl_metrics *old = malloc(sizeof(*old)); /* a schedd that does not say: now, the wake-up */
	struct sym_ctl_state *og = malloc(sizeof(*og));
	sym_ctl_state_init(og);
	const char one[] = "symphony_backend_serving{backend=\"0\",subcluster=\"0\"} 1\n";
	assert_int_equal(sym_ctl_parse(one, strlen(one), old, err, sizeof(err)), 0);
	assert_true(old->next_advice_s < 0 && old->interval_s < 0);
	assert_true(sym_ctl_advice_at(og, old, 10) == 10 && sym_ctl_next_read(old, 10, 15) == 15);
	free(og);
	free(old);
	/* not schedd's metrics, a malformed sample, ids out of range, a negative advice */
	const struct {
		const char *text, *want;
	} bad[] = {
		{ "node_cpu_seconds_total 5\n", "no symphony_backend_serving sample" },
		{ "symphony_backend_serving{backend=\"0\",subcluster=\"0\"}\n", "line 1: not a sample" },
		{ "symphony_backend_serving{backend=\"0,subcluster=\"0\"} 1\n", "line 1: not a sample" },
		{ "symphony_backend_serving{backend=\"0\",subcluster=\"0\"} x1\n", "not a sample" },
		{ "symphony_backend_serving{backend=\"99999\",subcluster=\"0\"} 1\n", "backend 99999" },
		{ "symphony_backend_serving{backend=\"a\",subcluster=\"0\"} 1\n", "out of range" },
		{ "symphony_backend_serving{backend=\"0\",subcluster=\"0\"} 1\n"
		  "symphony_subcluster_autoscale_add_gpus{subcluster=\"0\"} -3\n", "line 2: sub-cluster 0, value -3" },
		{ "symphony_autoscale_next_advice_seconds -1\n", "line 1: symphony_autoscale_next_advice_seconds -1 s out" },
		{ "symphony_autoscale_interval_seconds nan\n", "symphony_autoscale_interval_seconds nan s out of range" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(sym_ctl_parse(bad[i].text, strlen(bad[i].text), m, err, sizeof(err)), -EPROTO);
		assert_contains(err, bad[i].want);
	}
	free(m);
}

/* The decisions on a worked sequence: adds at the lowest free ids of the part
 * that asks, a cooldown, the started backends awaited (no release meanwhile),
 * releases at the highest ids, never the last of a part nor below --min,
 * never above --max, and a start given up after its timeout. */
static void test_decide(void **state)
{
	(void)state;
	struct sym_ctl_metrics *m = malloc(sizeof(*m));
	struct sym_ctl_state *st = malloc(sizeof(*st));
	char err[256];
	assert_int_equal(sym_ctl_parse(METRICS, strlen(METRICS), m, err, sizeof(err)), 0);
	sym_ctl_state_init(st);
	struct sym_ctl_cfg c = { .scale = { .cooldown_s = 10, .min_gpus = 1, .max_gpus = 6, .release_fraction = 1 },
				 .start_timeout_s = 30 };
	struct sym_scale_action a[8];
	/* t=0: part 0 asks for 2: ids 1 and 2; part 1's release waits (something comes up) */
	int n = sym_ctl_decide(&c, st, m, 0, a, 8);
	assert_int_equal(n, 2);
	assert_true(a[0].delta > 0 && a[0].gpu == 1 && a[0].part == 0);
	assert_true(a[1].delta > 0 && a[1].gpu == 2 && a[1].part == 0);
	/* t=5: the same advice, within the cooldown: nothing */
	assert_int_equal(sym_ctl_decide(&c, st, m, 5, a, 8), 0);
	/* t=12: still asking, but both are coming up: nothing more to add; no release while they come up */
	assert_int_equal(sym_ctl_decide(&c, st, m, 12, a, 8), 0);
	/* t=20: they serve; part 0 is content, part 1 may release 1: the highest serving id, 4 */
	m->serving[1] = m->serving[2] = 1;
	m->add[0] = 0;
	n = sym_ctl_decide(&c, st, m, 20, a, 8);
	assert_int_equal(n, 1);
	assert_true(a[0].delta < 0 && a[0].gpu == 4 && a[0].part == 1);
	/* t=40: 4 still serving (draining): not released twice; part 1 would release 3 more, but 3 is its last */
	m->release[1] = 3;
	assert_int_equal(sym_ctl_decide(&c, st, m, 40, a, 8), 0);
	/* t=60: 4 is gone; part 0 may release 3 of 3: two go (2 and 1), the last stays */
	m->serving[4] = 0;
	m->release[1] = 0;
	m->release[0] = 3;
	n = sym_ctl_decide(&c, st, m, 60, a, 8);
	assert_int_equal(n, 2);
	assert_true(a[0].gpu == 2 && a[1].gpu == 1 && a[0].delta < 0 && a[1].delta < 0);
	/* --min: with 2 serving (0 and 3) and min 2, nothing is released */
	m->serving[1] = m->serving[2] = 0;
	c.scale.min_gpus = 2;
	m->release[0] = m->release[1] = 1;
	assert_int_equal(sym_ctl_decide(&c, st, m, 80, a, 8), 0);
	/* --max: 2 serving, max 3, part 1 asks for 4: one start (id 4) */
	c.scale.max_gpus = 3;
	m->release[0] = m->release[1] = 0;
	m->add[1] = 4;
	n = sym_ctl_decide(&c, st, m, 100, a, 8);
	assert_int_equal(n, 1);
	assert_true(a[0].delta > 0 && a[0].gpu == 4);
	/* it never serves: after the start timeout it is given up (counted) and may be tried again */
	m->add[1] = 0;
	assert_int_equal(sym_ctl_decide(&c, st, m, 131, a, 8), 0);
	assert_int_equal(st->expired, 1);
	m->add[1] = 1;
	n = sym_ctl_decide(&c, st, m, 132, a, 8);
	assert_int_equal(n, 1);
	assert_true(a[0].delta > 0 && a[0].gpu == 4);
	/* release_fraction 0.5: of an advice of 3 (3 GPUs idle), one is released */
	sym_ctl_state_init(st);
	for (int i = 0; i < 6; i++)
		m->serving[i] = 1;
	m->add[0] = m->add[1] = 0;
	m->release[0] = 3;
	m->idle_fraction[0] = 1; /* (floor(3 serving * 1 idle * 0.5): control/scale.h) */
	c = (struct sym_ctl_cfg){ .scale = { .cooldown_s = 0, .min_gpus = 1, .max_gpus = 6, .release_fraction = 0.5 },
				  .start_timeout_s = 30 };
	n = sym_ctl_decide(&c, st, m, 0, a, 8);
	assert_int_equal(n, 1);
	assert_int_equal(a[0].gpu, 2);
	/* --rule target 0.5: part 1 (ids 3-5 serving) 90% busy wants ceil(3 * 1.8) = 6, 3 more, but has no
	 * free id (nothing to do); its growing still holds part 0's release back (10% busy: 1 of 3 would do) */
	sym_ctl_state_init(st);
	c.scale.rule = SYM_SCALE_TARGET;
	c.scale.target = 0.5;
	m->idle_fraction[0] = 0.9;
	m->idle_fraction[1] = 0.1;
	assert_int_equal(sym_ctl_decide(&c, st, m, 0, a, 8), 0);
	/* part 1 calm (50% busy): part 0 releases 2, the highest ids first */
	m->idle_fraction[1] = 0.5;
	n = sym_ctl_decide(&c, st, m, 1, a, 8);
	assert_int_equal(n, 2);
	assert_true(a[0].delta < 0 && a[0].gpu == 2 && a[1].delta < 0 && a[1].gpu == 1);
	/* part 0 down to one (id 0) and 100% busy: ceil(2) = 2, one more: id 1 */
	m->serving[1] = m->serving[2] = 0;
	m->idle_fraction[0] = 0;
	n = sym_ctl_decide(&c, st, m, 2, a, 8);
	assert_int_equal(n, 1);
	assert_true(a[0].delta > 0 && a[0].gpu == 1 && a[0].part == 0);
	/* a part that asks for more than its free ids (control/scale.h's sym_scale_pick): part 0 asks for
	 * 3 and has 1 and 2 free; the third is part 1's free id 5, started for part 0 (the add command's
	 * $SYMPHONY_SUBCLUSTER is 0) */
	assert_int_equal(sym_ctl_parse(METRICS, strlen(METRICS), m, err, sizeof(err)), 0);
	sym_ctl_state_init(st);
	c = (struct sym_ctl_cfg){ .scale = { .cooldown_s = 0, .min_gpus = 1, .max_gpus = 6, .release_fraction = 1 },
				  .start_timeout_s = 30 };
	m->add[0] = 3;
	n = sym_ctl_decide(&c, st, m, 0, a, 8);
	assert_int_equal(n, 3);
	assert_true(a[0].delta > 0 && a[0].gpu == 1 && a[0].part == 0);
	assert_true(a[1].delta > 0 && a[1].gpu == 2 && a[1].part == 0);
	assert_true(a[2].delta > 0 && a[2].gpu == 5 && a[2].part == 0);
	/* coming up, 5 counts in part 0 (not in its id's part 1, which would then release nothing
	 * anyway): part 0 asks for 3 again and gets none; part 1's release waits for them */
	n = sym_ctl_decide(&c, st, m, 1, a, 8);
	assert_int_equal(n, 0);
	/* they serve, 5 in part 0 now (schedd's label): part 1's release is its highest serving id, 4 */
	m->serving[1] = m->serving[2] = m->serving[5] = 1;
	m->part[5] = 0;
	m->add[0] = 0;
	n = sym_ctl_decide(&c, st, m, 2, a, 8);
	assert_int_equal(n, 1);
	assert_true(a[0].delta < 0 && a[0].gpu == 4 && a[0].part == 1);
	free(m);
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_decide),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
