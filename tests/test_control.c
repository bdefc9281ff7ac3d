/* tests/test_control.c - control/scale.h, the one autoscaling decision of
 * both drivers: worked examples of each rule and bound, then the module alone
 * in virtual time, closing the loop over a toy cluster whose load steps up and
 * down. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "control/epoch.h"
#include "control/moves.h"
#include "control/scale.h"

static struct sym_scale_part part(int serving, int pending, uint64_t good, uint64_t bad, double busy)
{
	struct sym_scale_part p = { .serving = serving, .pending = pending, .busy_fraction = busy };
	sym_autoscale_advice(good, bad, busy * serving * 10, 10, serving > 0 ? serving : 1, 0.01, &p.advice);
	return p;
}

static const struct sym_scale_cfg PAPERS = { .rule = SYM_SCALE_PAPERS, .release_fraction = 1, .min_gpus = 1,
					     .max_gpus = 100, .cooldown_s = 30 };

/* The papers' rule: N r / (1 - r) added less what comes up; N f released, or
 * a fraction of it; cooldown to the nanosecond. */
static void test_papers(void **state)
{
	(void)state;
	struct sym_scale_state st = { 0 };
	/* 4 serving, 20% bad: ceil(4 * 0.25) = 1 more; with 1 already coming up, none */
	struct sym_scale_part p = part(4, 0, 80, 20, 1);
	assert_int_equal(p.advice.add, 1);
	assert_int_equal(sym_scale_decide(&PAPERS, &st, &p, 1, 0), 1);
	assert_int_equal(p.delta, 1);
	assert_true(st.acted && st.last_s == 0);
	struct sym_scale_state st2 = { 0 };
	p.pending = 1;
	assert_int_equal(sym_scale_decide(&PAPERS, &st2, &p, 1, 0), 0);
	assert_int_equal(p.delta, 0);
	assert_false(st2.acted);
	/* 8 serving, no bad, 50% idle: release 4; not within the cooldown (30 s after 0) */
	p = part(8, 0, 100, 0, 0.5);
	assert_int_equal(sym_scale_decide(&PAPERS, &st, &p, 1, 29.999999), 0);
	assert_int_equal(p.delta, 0);
	/* 30 s in nanoseconds' floating-point rounding is 30 s */
	assert_int_equal(sym_scale_decide(&PAPERS, &st, &p, 1, 0.3 - 0.2 + 29.9), 1);
	assert_int_equal(p.delta, -4);
	/* release_fraction 0.3: floor(8 * 0.5 * 0.3) = 1 */
	struct sym_scale_cfg c = PAPERS;
	c.release_fraction = 0.3;
	c.cooldown_s = 0;
	assert_int_equal(sym_scale_decide(&c, &st, &p, 1, 100), 1);
	assert_int_equal(p.delta, -1);
	/* nothing leaves while a GPU comes up */
	p.pending = 1;
	assert_int_equal(sym_scale_decide(&c, &st, &p, 1, 200), 0);
}

/* Kubernetes' HPA rule: ceil(N busy / target), 10% tolerance, pending GPUs
 * counted in an increase, no decrease while one comes up. */
static void test_target(void **state)
{
	(void)state;
	struct sym_scale_cfg c = { .rule = SYM_SCALE_TARGET, .target = 0.5, .release_fraction = 1, .min_gpus = 1,
				   .max_gpus = 100 };
	struct sym_scale_state st = { 0 };
	struct sym_scale_part p = part(4, 0, 100, 0, 0.9); /* ratio 1.8: ceil(7.2) = 8, 4 more */
	assert_int_equal(sym_scale_decide(&c, &st, &p, 1, 0), 1);
	assert_int_equal(p.delta, 4);
	p.pending = 3;
	assert_int_equal(sym_scale_decide(&c, &st, &p, 1, 1), 1);
	assert_int_equal(p.delta, 1);
	p.pending = 0;
	p.busy_fraction = 0.54; /* ratio 1.08: within 10% */
	assert_int_equal(sym_scale_decide(&c, &st, &p, 1, 2), 0);
	p.busy_fraction = 0.46; /* ratio 0.92 */
	assert_int_equal(sym_scale_decide(&c, &st, &p, 1, 3), 0);
	p.busy_fraction = 0.2; /* ratio 0.4: ceil(1.6) = 2, 2 fewer */
	assert_int_equal(sym_scale_decide(&c, &st, &p, 1, 4), 1);
	assert_int_equal(p.delta, -2);
	p.pending = 1;
	assert_int_equal(sym_scale_decide(&c, &st, &p, 1, 5), 0);
}

/* The cluster's bounds over several parts: max counts serving and coming up,
 * parts asking first get first; no part releases while another grows; min
 * over the cluster; a part keeps one. */
static void test_bounds(void **state)
{
	(void)state;
	struct sym_scale_cfg c = PAPERS;
	c.cooldown_s = 0;
	c.max_gpus = 11;
	struct sym_scale_state st = { 0 };
	/* 3 + 2 + 1 serving, 1 coming up in part 1; parts ask for 3 and 197 more: 4 fit, 3 then 1 */
	struct sym_scale_part p[3] = { part(3, 0, 50, 50, 1), part(2, 1, 0, 100, 1), part(1, 0, 100, 0, 0) };
	assert_int_equal(p[0].advice.add, 3);
	assert_int_equal(p[1].advice.add, 198); /* r capped at 0.99: 99 N */
	assert_int_equal(sym_scale_decide(&c, &st, p, 3, 0), 2);
	assert_true(p[0].delta == 3 && p[1].delta == 1 && p[2].delta == 0); /* part 2 is idle, but parts grow */
	/* part 2 idle with 4 GPUs, part 0 growing (2 fit): part 2 waits */
	p[1] = part(2, 0, 100, 0, 1);
	p[2] = part(4, 0, 100, 0, 0);
	assert_int_equal(p[2].advice.release, 4);
	assert_int_equal(sym_scale_decide(&c, &st, p, 3, 1), 1);
	assert_true(p[0].delta == 2 && p[2].delta == 0);
	/* nothing grows: part 2 gives back 3 of 4 (it keeps one) */
	p[0] = part(3, 0, 100, 0, 1);
	assert_int_equal(sym_scale_decide(&c, &st, p, 3, 2), 1);
	assert_int_equal(p[2].delta, -3);
	/* min 8 over 9 serving: one release in all, the first part to release takes it */
	c.min_gpus = 8;
	p[0] = part(3, 0, 100, 0, 0.5);
	assert_int_equal(p[0].advice.release, 1);
	assert_int_equal(sym_scale_decide(&c, &st, p, 3, 3), 1);
	assert_true(p[0].delta == -1 && p[1].delta == 0 && p[2].delta == 0);
	/* at max, an add is cut to nothing (no action) */
	c.min_gpus = 1;
	c.max_gpus = 9;
	p[0] = part(3, 0, 50, 50, 1);
	p[2] = part(4, 0, 100, 0, 1);
	assert_int_equal(sym_scale_decide(&c, &st, p, 3, 4), 0);
}

/* An epoch's change against the counts' noise (control/epoch.h), worked by hand. */
static void test_epoch_rules(void **state)
{
	(void)state;
	/* 100 req/s counted over 1 s: sd 10; 2 sd = 20 */
	assert_false(sym_epoch_assign_pays(19.9, 100, 1, 2));
	assert_true(sym_epoch_assign_pays(20, 100, 1, 2));
	assert_false(sym_epoch_assign_pays(9, 100, 4, 2)); /* over 4 s: sd 5, 2 sd = 10 */
	assert_true(sym_epoch_assign_pays(10, 100, 4, 2));
	assert_true(sym_epoch_assign_pays(0.1, 100, 1, 0));   /* k 0: any gain, as published */
	assert_true(sym_epoch_assign_pays(0.1, 100, 0, 2));   /* nothing counted: no bound */
	/* two parts of 60 req/s on three GPUs: which one has the odd GPU is no gain */
	assert_false(sym_epoch_split_pays(0.3, 60, 0.3, 1, 2));
	/* a part 33% busy at 60 req/s (relative sd 1/sqrt(60) = 12.9%: 2 sd = 0.086) against 30%: noise */
	assert_false(sym_epoch_split_pays(0.33, 60, 0.30, 1, 2));
	assert_true(sym_epoch_split_pays(0.33, 60, 0.30, 1, 0));
	/* 60% busy at 500 req/s against 20%: taken; worse or equal never is */
	assert_true(sym_epoch_split_pays(0.6, 500, 0.2, 1, 2));
	assert_false(sym_epoch_split_pays(0.2, 500, 0.6, 1, 0));
	/* a part that cannot meet its SLO takes any split that can; none counted: no bound */
	assert_true(sym_epoch_split_pays(HUGE_VAL, 0, 0.99, 1, 2));
	assert_false(sym_epoch_split_pays(HUGE_VAL, 0, HUGE_VAL, 1, 2));
	assert_true(sym_epoch_split_pays(0.33, 60, 0.30, 0, 2));
	assert_false(sym_epoch_split_pays(0.33, 0, 0.30, 1, 2)); /* (a busiest part with no requests) */
}

/* Which GPU joins a part: its own free ids first, lowest first; then the
 * lowest free id of any part (one of no part yet included); none free: -1. */
static void test_pick(void **state)
{
	(void)state;
	struct sym_scale_gpu g[6] = { { SYM_SCALE_SERVING, 0 }, { SYM_SCALE_OFF, 1 }, { SYM_SCALE_OFF, 0 },
				      { SYM_SCALE_COMING, 1 }, { SYM_SCALE_OFF, -1 }, { SYM_SCALE_OFF, 1 } };
	assert_int_equal(sym_scale_pick(g, 6, 0), 2);
	assert_int_equal(sym_scale_pick(g, 6, 1), 1);
	g[1].state = g[5].state = SYM_SCALE_LEAVING;
	assert_int_equal(sym_scale_pick(g, 6, 1), 2); /* part 0's, the lowest off */
	g[2].state = SYM_SCALE_MOVING;
	assert_int_equal(sym_scale_pick(g, 6, 1), 4); /* one of no part */
	assert_int_equal(sym_scale_pick(g, 6, 2), 4);
	g[4].state = SYM_SCALE_COMING;
	assert_int_equal(sym_scale_pick(g, 6, 0), -1);
	assert_int_equal(sym_scale_pick(g, 0, 0), -1);
}

/* The whole step, worked by hand: GPUs' states counted into the parts, the
 * decision, which ids join and leave, the states after, the next wake-up. */
static void test_step(void **state)
{
	(void)state;
	/* ids 0-7: part 0 serves on 0 and 1, part 1 on 2, 3 (moving to part 0: counts there) and 4;
	 * 5 leaves (counts nowhere); 6 is off (part 1's last), 7 off (none) */
	struct sym_scale_gpu g[8] = { { SYM_SCALE_SERVING, 0 }, { SYM_SCALE_SERVING, 0 }, { SYM_SCALE_SERVING, 1 }, { SYM_SCALE_MOVING, 0 },
				      { SYM_SCALE_SERVING, 1 }, { SYM_SCALE_LEAVING, 1 }, { SYM_SCALE_OFF, 1 }, { SYM_SCALE_OFF, -1 } };
	struct sym_scale_cfg c = PAPERS;
	c.cooldown_s = 0;
	c.interval_s = 10;
	struct sym_scale_state st = { 0 };
	struct sym_scale_part p[2] = { part(3, 0, 50, 50, 1), part(2, 0, 100, 0, 0.5) };
	struct sym_scale_action a[8];
	double wake = 0;
	/* part 0 (3 serving, 50% bad: 3 more) grows; part 1 (2 serving, idle) waits */
	int n = sym_scale_step(&c, &st, p, 2, g, 8, 100, a, 8, &wake);
	assert_true(wake == 110);
	assert_true(p[0].serving == 3 && p[0].pending == 0 && p[1].serving == 2 && p[1].pending == 0);
	assert_true(p[0].delta == 3 && p[1].delta == 0);
	/* part 0 has no free id of its own: the lowest free of any part, 6 (part 1's last), then 7
	 * (none yet); 3 wanted, 2 free */
	assert_int_equal(n, 2);
	assert_true(a[0].gpu == 6 && a[0].part == 0 && a[0].delta == 1);
	assert_true(a[1].gpu == 7 && a[1].part == 0 && a[1].delta == 1);
	assert_true(g[6].state == SYM_SCALE_COMING && g[6].part == 0 && g[7].state == SYM_SCALE_COMING && g[7].part == 0);
	/* next step: the two count as coming up in part 0, which asks for 3 again: 1 more, but no id
	 * is free; part 1 still waits (something comes up) */
	n = sym_scale_step(&c, &st, p, 2, g, 8, 110, a, 8, &wake);
	assert_true(p[0].pending == 2 && p[0].delta == 1 && p[1].delta == 0);
	assert_int_equal(n, 0);
	/* they serve and part 0 is content: part 1 releases 1 of 2 idle (keeps one): its highest
	 * serving id, 4 (5 is leaving already, and 3, moving, is part 0's and never released) */
	g[6].state = g[7].state = SYM_SCALE_SERVING;
	p[0] = part(5, 0, 100, 0, 1);
	n = sym_scale_step(&c, &st, p, 2, g, 8, 120, a, 8, &wake);
	assert_int_equal(n, 1);
	assert_true(a[0].gpu == 4 && a[0].part == 1 && a[0].delta == -1 && g[4].state == SYM_SCALE_LEAVING);
	/* part 0 idle: 5 serving (0, 1, 3 moving, 6, 7), release all but one: 7, 6, 1, 0 (not 3) */
	p[0] = part(5, 0, 100, 0, 0);
	p[1] = part(1, 0, 100, 0, 1);
	n = sym_scale_step(&c, &st, p, 2, g, 8, 130, a, 8, &wake);
	assert_true(p[0].serving == 5 && p[0].delta == -4);
	assert_int_equal(n, 4);
	assert_true(a[0].gpu == 7 && a[1].gpu == 6 && a[2].gpu == 1 && a[3].gpu == 0);
	assert_true(g[3].state == SYM_SCALE_MOVING);
	/* cap: at most cap actions */
	struct sym_scale_gpu h[4] = { { SYM_SCALE_SERVING, 0 }, { SYM_SCALE_OFF, 0 }, { SYM_SCALE_OFF, 0 }, { SYM_SCALE_OFF, 0 } };
	p[0] = part(1, 0, 0, 100, 1);
	assert_int_equal(sym_scale_step(&c, &st, p, 1, h, 4, 140, a, 2, &wake), 2);
	assert_true(a[0].gpu == 1 && a[1].gpu == 2 && h[3].state == SYM_SCALE_OFF);
}

/* The module alone in virtual time: two parts of a toy cluster whose load (in
 * GPUs' worth of work) steps up then down; an added GPU serves 60 s after the
 * decision; each 30-s interval's bad rate and idle fraction follow from load
 * over GPUs. The loop tracks the load (ceil of it within two intervals of a
 * step, in both directions), never leaves min..max, and is the same on a rerun. */
static int run_loop(enum sym_scale_rule rule, int *trace, int ntrace)
{
	struct sym_scale_cfg c = { .rule = rule, .target = 0.8, .release_fraction = 1, .min_gpus = 2, .max_gpus = 40,
				   .cooldown_s = 30 };
	struct sym_scale_state st = { 0 };
	int serving[2] = { 4, 4 }, n = 0;
	double up_at[2][64];
	int nup[2] = { 0, 0 };
	for (int k = 1; k <= ntrace / 2; k++) {
		double t = 30.0 * k;
		double load[2] = { t < 900 ? 3.5 : t < 1800 ? 11.2 : 2.5, t < 1200 ? 6.0 : 1.2 };
		struct sym_scale_part p[2];
		for (int j = 0; j < 2; j++) {
			/* GPUs whose provisioning ended */
			int still = 0;
			for (int i = 0; i < nup[j]; i++)
				if (up_at[j][i] <= t)
					serving[j]++;
				else
					up_at[j][still++] = up_at[j][i];
			nup[j] = still;
			double served = load[j] < serving[j] ? load[j] : serving[j];
			uint64_t total = 10000, bad = (uint64_t)llround(total * (1 - served / load[j]));
			p[j] = (struct sym_scale_part){ .serving = serving[j], .pending = nup[j],
							.busy_fraction = served / serving[j] };
			sym_autoscale_advice(total - bad, bad, served * 30, 30, serving[j], 0.01, &p[j].advice);
		}
		sym_scale_decide(&c, &st, p, 2, t);
		for (int j = 0; j < 2; j++) {
			for (int i = 0; i < p[j].delta; i++)
				up_at[j][nup[j]++] = t + 60;
			if (p[j].delta < 0)
				serving[j] += p[j].delta;
			assert_true(serving[0] + serving[1] + nup[0] + nup[1] <= c.max_gpus);
			assert_true(serving[0] + serving[1] >= c.min_gpus && serving[j] >= 1);
			trace[n++] = serving[j];
		}
	}
	return n;
}

static void test_virtual_time(void **state)
{
	(void)state;
	int a[160], b[160];
	int n = run_loop(SYM_SCALE_PAPERS, a, 160);
	assert_int_equal(n, 160);
	assert_int_equal(run_loop(SYM_SCALE_PAPERS, b, 160), n);
	assert_memory_equal(a, b, sizeof(a));
	/* the papers' rule: at the end of each phase (30 s intervals; trace[2k + j]: part j after decision k + 1) */
	assert_int_equal(a[2 * 28 + 0], 4); /* t = 870: 3.5 GPUs of load, no bad, 4 serving (idle 12%: floor 0.5) */
	assert_int_equal(a[2 * 58 + 0], 12); /* t = 1770: 11.2 of load: 12 */
	assert_int_equal(a[2 * 79 + 0], 3);  /* t = 2400: 2.5 of load: 3 */
	assert_int_equal(a[2 * 38 + 1], 6);  /* t = 1170: 6 of load */
	assert_int_equal(a[2 * 79 + 1], 2);  /* t = 2400: 1.2 of load: 2 */
	/* HPA at 0.8: ceil(load / 0.8) */
	run_loop(SYM_SCALE_TARGET, a, 160);
	assert_int_equal(a[2 * 58 + 0], 14); /* ceil(11.2 / 0.8) = 14 */
	/* part 1 climbs 4, 5, 7 and stays: at 7, busy 6/7 is within 10% of 0.8 (HPA's tolerance) */
	assert_int_equal(a[2 * 38 + 1], 7);
	assert_int_equal(a[2 * 79 + 1], 2);  /* ceil(1.2 / 0.8) = 2 */
}

/* An epoch's moves by memory (control/moves.h), worked by hand: GPUs of 100
 * MB, three parts. Part 0 holds m0 (40) and m2 (50), part 1 m1 (40), m3 (50)
 * and m4 (10), part 2 m5 (20); m6 is unloaded (fixed). m0 and m1 swap parts,
 * m4 goes to part 2. m4 fits beside m5 (smooth). m0 does not fit in part 1
 * even once m4 has left (90 + 40), so it is unloaded first (stalled); m1 fits
 * in part 0 once m0 has left (50 + 40: deferred). Then the same with dynamic
 * memory (the largest after the moves counts), unchecked memory, bad input. */
static void test_moves(void **state)
{
	(void)state;
	int from[7] = { 0, 1, 0, 1, 1, 2, 0 }, to[7] = { 1, 0, 0, 1, 2, 2, 2 };
	bool fixed[7] = { false, false, false, false, false, false, true };
	double st[7] = { 40, 40, 50, 50, 10, 20, 99 }, dy[7] = { 0 };
	struct sym_moves_in in = { .nmodels = 7, .nparts = 3, .from = from, .to = to, .fixed = fixed, .static_mb = st,
				   .dynamic_mb = dy, .cap_mb = 100 };
	double held[3] = { 90, 100, 20 };
	enum sym_move mv[7];
	assert_int_equal(sym_moves_plan(&in, held, mv), 3);
	enum sym_move want[7] = { SYM_MOVE_STALLED, SYM_MOVE_DEFERRED, SYM_MOVE_NONE, SYM_MOVE_NONE,
				  SYM_MOVE_SMOOTH,  SYM_MOVE_NONE,     SYM_MOVE_NONE };
	for (int m = 0; m < 7; m++)
		assert_int_equal(mv[m], want[m]);
	/* each part's memory with the models moving in (those moving out still counted) */
	assert_true(held[0] == 130 && held[1] == 140 && held[2] == 30);
	assert_string_equal(sym_move_name(mv[0]), "stalled");
	assert_string_equal(sym_move_name(mv[1]), "deferred");
	assert_string_equal(sym_move_name(mv[4]), "smooth");
	assert_string_equal(sym_move_name(mv[2]), "none");
	/* memory unchecked: every move smooth */
	double held2[3] = { 90, 100, 20 };
	in.cap_mb = 0;
	assert_int_equal(sym_moves_plan(&in, held2, mv), 3);
	assert_true(mv[0] == SYM_MOVE_SMOOTH && mv[1] == SYM_MOVE_SMOOTH && mv[4] == SYM_MOVE_SMOOTH);
	/* dynamic memory: the largest of the part's models after the moves, once */
	int f2[2] = { 0, 1 }, t2[2] = { 1, 1 };
	double s2[2] = { 10, 45 }, d2[2] = { 40, 0 };
	struct sym_moves_in in2 = { .nmodels = 2, .nparts = 2, .from = f2, .to = t2, .static_mb = s2, .dynamic_mb = d2,
				    .cap_mb = 100 };
	double h2[2] = { 10, 45 };
	assert_int_equal(sym_moves_plan(&in2, h2, mv), 1);
	assert_int_equal(mv[0], SYM_MOVE_SMOOTH); /* 45 + 10 + 40 = 95 */
	d2[0] = 50;
	double h3[2] = { 10, 45 };
	assert_int_equal(sym_moves_plan(&in2, h3, mv), 1);
	assert_int_equal(mv[0], SYM_MOVE_STALLED); /* 105, and nothing leaves part 1 */
	/* parts of one core only */
	in2.nparts = 0;
	assert_int_equal(sym_moves_plan(&in2, h3, mv), -EINVAL);
	in2.nparts = 33;
	assert_int_equal(sym_moves_plan(&in2, h3, mv), -EINVAL);
}

static void test_rule_names(void **state)
{
	(void)state;
	enum sym_scale_rule r;
	assert_int_equal(sym_scale_rule_parse("target", &r), 0);
	assert_int_equal(r, SYM_SCALE_TARGET);
	assert_string_equal(sym_scale_rule_name(r), "target");
	assert_int_equal(sym_scale_rule_parse("papers", &r), 0);
	assert_string_equal(sym_scale_rule_name(r), "papers");
	assert_int_equal(sym_scale_rule_parse("hpa", &r), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_papers),
		cmocka_unit_test(test_target),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_step),
		cmocka_unit_test(test_epoch_rules),
		cmocka_unit_test(test_virtual_time),
		cmocka_unit_test(test_rule_names),
		cmocka_unit_test(test_moves),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
