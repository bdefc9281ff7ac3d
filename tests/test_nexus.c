/* Nexus tests: the squishy bin packing planner on the reference example
 * (exact batches, duty cycles, sharing and GPU count), its saturate step, its
 * memory and whole-GPU rules and its input checks; the policy's parameters;
 * worked examples of the policy (two models cycling on one GPU, frontends
 * routing by weighted round robin) with exact dispatches; and conservation on
 * overloaded multi-model workloads with re-plans, on one and two GPU kinds. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/nexus_plan.h"
#include "coredriver.h"
#include "testutil.h"

/* ---- the reference profiles ----
 *
 * Published points (batch, ms): A (4, 50) (8, 75) (16, 100); B (4, 50)
 * (8, 90) (16, 125); C (4, 60) (8, 95) (16, 125). Tables for b = 1..16 are
 * piecewise linear through them (below 4, the 4..8 slope continued). */
static struct sym_profile prof_a, prof_b, prof_c;

static void init_ref(struct sym_profile *p, const char *name, double l4, double l8, double l16)
{
	double t[16];
	for (int b = 1; b <= 16; b++)
		t[b - 1] = b <= 8 ? l4 + (l8 - l4) / 4 * (b - 4) : l8 + (l16 - l8) / 8 * (b - 8);
	assert_int_equal(sym_profile_init_table(p, name, t, 16), 0);
}

static int setup(void **state)
{
	(void)state;
	init_ref(&prof_a, "A", 50, 75, 100);
	init_ref(&prof_b, "B", 50, 90, 125);
	init_ref(&prof_c, "C", 60, 95, 125);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sym_profile_finish(&prof_a);
	sym_profile_finish(&prof_b);
	sym_profile_finish(&prof_c);
	return 0;
}

static struct sym_nexus_model pmodel(const struct sym_profile *p, double rate, double slo_ms)
{
	return (struct sym_nexus_model){
		.rate = rate,
		.slo = sym_ms(slo_ms),
		.lat = p->lat,
		.max_batch = p->max_batch,
		.delay = 0,
		.static_mb = -1,
		.dynamic_mb = -1,
	};
}

static void assert_session(const struct sym_nexus_plan *pl, int g, int i, int model, int batch, double rate)
{
	assert_true(g < pl->ngpus && i < pl->gpus[g].nsessions);
	const struct sym_nexus_session *s = sym_nexus_plan_session(pl, g, i);
	assert_int_equal(s->model, model);
	assert_int_equal(s->batch, batch);
	assert_near(s->rate, rate, 1e-9, "session rate");
}

/* ---- planner ---- */

/* Every GPU of a plan keeps Nexus's two rules: duty + l(b) + delay <= SLO
 * for each session, and the batches fit the cycle. */
static void check_plan_rules(const struct sym_nexus_plan *pl, const struct sym_nexus_model *m)
{
	for (int g = 0; g < pl->ngpus; g++) {
		sym_time busy = 0;
		for (int i = 0; i < pl->gpus[g].nsessions; i++) {
			const struct sym_nexus_session *s = sym_nexus_plan_session(pl, g, i);
			busy += m[s->model].lat[s->batch];
			if (!pl->gpus[g].saturated)
				assert_true(pl->gpus[g].duty + m[s->model].lat[s->batch] + m[s->model].delay <= m[s->model].slo);
			/* a batch per cycle keeps up with the session's rate */
			assert_true((double)s->batch >= (double)pl->gpus[g].duty / 1e9 * s->rate - 1e-6);
		}
		assert_true(busy <= pl->gpus[g].duty);
		assert_int_equal(busy, pl->gpus[g].busy);
	}
}

/* The incremental epoch (Section 6.1): from the reference plan (GPU 0: A
 * and B, GPU 1: C), the same rates keep it as it is; B growing to 48 r/s
 * overloads GPU 0, which evicts its cheapest session (B: A's batch of 8
 * fills 60% of its cycle) and keeps A as it was; B is placed again and every
 * model is planned at its new rate; halving every rate leaves GPU 1 under
 * half busy, and C moves beside A and B: one GPU is released. A plan naming
 * a model out of range is refused. */
static void test_plan_incremental(void **state)
{
	(void)state;
	struct sym_nexus_model m[3] = { pmodel(&prof_a, 64, 200), pmodel(&prof_b, 32, 250),
					pmodel(&prof_c, 32, 250) };
	struct sym_nexus_plan prev, pl;
	sym_nexus_plan_init(&prev);
	sym_nexus_plan_init(&pl);
	assert_int_equal(sym_nexus_plan_compute(&prev, m, 3, 0, 0), 0);
	int ev, rel;
	assert_int_equal(sym_nexus_plan_incremental(&pl, &prev, m, 3, 0, 0, &ev, &rel), 0);
	assert_int_equal(ev, 0);
	assert_int_equal(rel, 0);
	assert_int_equal(pl.ngpus, 2);
	assert_session(&pl, 0, 0, 0, 8, 64);
	assert_session(&pl, 0, 1, 1, 4, 32);
	assert_session(&pl, 1, 0, 2, 5, 32);
	check_plan_rules(&pl, m);

	m[1].rate = 48;
	assert_int_equal(sym_nexus_plan_incremental(&pl, &prev, m, 3, 0, 0, &ev, &rel), 0);
	assert_int_equal(ev, 1);
	assert_session(&pl, 0, 0, 0, 8, 64); /* A stays as it was */
	for (int k = 0; k < 3; k++)
		assert_near(sym_nexus_plan_rate(&pl, k), m[k].rate, 1e-6, "planned rate");
	check_plan_rules(&pl, m);
	print_message("B at 48 r/s: %d GPUs (from scratch: ", pl.ngpus);
	struct sym_nexus_plan full;
	sym_nexus_plan_init(&full);
	assert_int_equal(sym_nexus_plan_compute(&full, m, 3, 0, 0), 0);
	print_message("%d)\n", full.ngpus);

	for (int k = 0; k < 3; k++)
		m[k].rate = (k ? 32 : 64) / 2.0;
	assert_int_equal(sym_nexus_plan_incremental(&pl, &prev, m, 3, 0, 0, &ev, &rel), 0);
	assert_int_equal(ev, 0);
	assert_int_equal(rel, 1);
	assert_int_equal(pl.ngpus, 1);
	for (int k = 0; k < 3; k++)
		assert_near(sym_nexus_plan_rate(&pl, k), m[k].rate, 1e-6, "planned rate");
	check_plan_rules(&pl, m);
	/* the cap, and a bad previous plan */
	m[1].rate = 200;
	assert_int_equal(sym_nexus_plan_incremental(&pl, &prev, m, 3, 0, 2, &ev, &rel), -ENOSPC);
	assert_int_equal(sym_nexus_plan_incremental(&pl, &prev, m, 2, 0, 0, &ev, &rel), -EINVAL);
	sym_nexus_plan_finish(&full);
	sym_nexus_plan_finish(&pl);
	sym_nexus_plan_finish(&prev);
}


/* A 64 r/s, B and C 32 r/s: A (batch 8, duty 125 ms) shares a GPU with B
 * (batch 4: 75 + 50 = 125 ms); C (batch 4 would cost 60 ms beside A's 75) gets
 * its own GPU, where it runs batch 5 every 156.25 ms (68.75 + 156.25 <= 250). */
static void test_plan_reference(void **state)
{
	(void)state;
	struct sym_nexus_model m[3] = { pmodel(&prof_a, 64, 200), pmodel(&prof_b, 32, 250),
					pmodel(&prof_c, 32, 250) };
	struct sym_nexus_plan pl;
	sym_nexus_plan_init(&pl);
	assert_int_equal(sym_nexus_plan_compute(&pl, m, 3, 0, 0), 0);
	assert_int_equal(pl.ngpus, 2);
	assert_int_equal(pl.nsessions, 3);
	assert_int_equal(pl.gpus[0].duty, 125 * SYM_MS);
	assert_int_equal(pl.gpus[0].busy, 125 * SYM_MS);
	assert_false(pl.gpus[0].saturated);
	assert_int_equal(pl.gpus[0].nsessions, 2);
	assert_session(&pl, 0, 0, 0, 8, 64);
	assert_session(&pl, 0, 1, 1, 4, 32);
	assert_int_equal(pl.gpus[1].duty, 156250 * SYM_US);
	assert_int_equal(pl.gpus[1].busy, 68750 * SYM_US);
	assert_int_equal(pl.gpus[1].nsessions, 1);
	assert_session(&pl, 1, 0, 2, 5, 32);
	assert_near(sym_nexus_plan_rate(&pl, 0), 64, 1e-9, "rate A");

	/* A and C alone: C does not fit beside A, two GPUs */
	struct sym_nexus_model ac[2] = { m[0], m[2] };
	assert_int_equal(sym_nexus_plan_compute(&pl, ac, 2, 0, 0), 0);
	assert_int_equal(pl.ngpus, 2);
	assert_int_equal(pl.gpus[0].nsessions, 1);
	assert_int_equal(pl.gpus[1].nsessions, 1);
	/* the cap: two GPUs are needed */
	assert_int_equal(sym_nexus_plan_compute(&pl, m, 3, 0, 1), -ENOSPC);
	assert_int_equal(pl.ngpus, 0);
	assert_int_equal(sym_nexus_plan_compute(&pl, m, 3, 0, 2), 0);
	assert_int_equal(pl.ngpus, 2);
	sym_nexus_plan_finish(&pl);
}

/* A at 400 r/s: the largest batch with 2*l(B) <= 200 ms is 16 (100 ms), 160
 * r/s per GPU: two whole GPUs, and the residual 80 r/s runs batch 9 every
 * 112.5 ms (78.125 + 112.5 <= 200; batch 10: 81.25 + 125 > 200). */
static void test_plan_saturate(void **state)
{
	(void)state;
	struct sym_nexus_model m = pmodel(&prof_a, 400, 200);
	struct sym_nexus_plan pl;
	sym_nexus_plan_init(&pl);
	assert_int_equal(sym_nexus_plan_compute(&pl, &m, 1, 0, 0), 0);
	assert_int_equal(pl.ngpus, 3);
	for (int g = 0; g < 2; g++) {
		assert_true(pl.gpus[g].saturated);
		assert_int_equal(pl.gpus[g].duty, 100 * SYM_MS);
		assert_session(&pl, g, 0, 0, 16, 160);
	}
	assert_false(pl.gpus[2].saturated);
	assert_int_equal(pl.gpus[2].duty, 112500 * SYM_US);
	assert_session(&pl, 2, 0, 0, 9, 80);
	assert_near(sym_nexus_plan_rate(&pl, 0), 400, 1e-9, "rate");
	/* capped below the whole GPUs: refused before packing */
	assert_int_equal(sym_nexus_plan_compute(&pl, &m, 1, 0, 1), -ENOSPC);
	assert_int_equal(sym_nexus_plan_compute(&pl, &m, 1, 0, 2), -ENOSPC);
	assert_int_equal(sym_nexus_plan_compute(&pl, &m, 1, 0, 3), 0);

	/* l(b) = 2b + 4 ms, SLO 40: B = 8 (2 * 20 <= 40), 400 r/s per GPU. 800 r/s
	 * is exactly two whole GPUs, no residual. 399 r/s has no residual batch
	 * within both its SLO and one GPU (batch 8: 20 + 20.05 > 40; batch 7:
	 * l = 18 > 7/399 s), so it gets a whole GPU. */
	struct sym_profile lin;
	assert_int_equal(sym_profile_init_linear(&lin, "lin", 2, 4, 16), 0);
	struct sym_nexus_model x = pmodel(&lin, 800, 40);
	assert_int_equal(sym_nexus_plan_compute(&pl, &x, 1, 0, 0), 0);
	assert_int_equal(pl.ngpus, 2);
	assert_session(&pl, 1, 0, 0, 8, 400);
	x.rate = 399;
	assert_int_equal(sym_nexus_plan_compute(&pl, &x, 1, 0, 0), 0);
	assert_int_equal(pl.ngpus, 1);
	assert_true(pl.gpus[0].saturated);
	assert_int_equal(pl.gpus[0].duty, 20 * SYM_MS);
	assert_session(&pl, 0, 0, 0, 8, 399);
	/* a low rate: one request per 10 s cannot be waited for; batch 1 and the
	 * longest cycle the SLO allows, 40 - 6 - 6 = 28 ms (here with 6 ms of
	 * response delay) */
	x.rate = 0.1;
	x.delay = 6 * SYM_MS;
	assert_int_equal(sym_nexus_plan_compute(&pl, &x, 1, 0, 0), 0);
	assert_int_equal(pl.ngpus, 1);
	assert_int_equal(pl.gpus[0].duty, 28 * SYM_MS);
	assert_session(&pl, 0, 0, 0, 1, 0.1);
	sym_profile_finish(&lin);
	sym_nexus_plan_finish(&pl);
}

/* Memory: static 3000 MB and dynamic 1000 MB each. A and B together need
 * 3000 + 3000 + max(1000, 1000) = 7000 MB: they share a 7000 MB GPU, not a
 * 6999 MB one (then B cannot join C either, and three GPUs are needed). */
static void test_plan_memory(void **state)
{
	(void)state;
	struct sym_nexus_model m[3] = { pmodel(&prof_a, 64, 200), pmodel(&prof_b, 32, 250),
					pmodel(&prof_c, 32, 250) };
	for (int i = 0; i < 3; i++) {
		m[i].static_mb = 3000;
		m[i].dynamic_mb = 1000;
	}
	struct sym_nexus_plan pl;
	sym_nexus_plan_init(&pl);
	assert_int_equal(sym_nexus_plan_compute(&pl, m, 3, 7000, 0), 0);
	assert_int_equal(pl.ngpus, 2);
	assert_int_equal(pl.gpus[0].nsessions, 2);
	assert_near(pl.gpus[0].memory_mb, 7000, 1e-9, "memory");
	assert_int_equal(sym_nexus_plan_compute(&pl, m, 3, 6999, 0), 0);
	assert_int_equal(pl.ngpus, 3);
	for (int g = 0; g < 3; g++)
		assert_int_equal(pl.gpus[g].nsessions, 1);
	/* B's memory unknown: counted as 0, so it fits again */
	m[1].static_mb = -1;
	m[1].dynamic_mb = -1;
	assert_int_equal(sym_nexus_plan_compute(&pl, m, 3, 6999, 0), 0);
	assert_int_equal(pl.ngpus, 2);
	/* unknown GPU memory: nothing is checked */
	m[1].static_mb = 1e6;
	assert_int_equal(sym_nexus_plan_compute(&pl, m, 3, 0, 0), 0);
	assert_int_equal(pl.ngpus, 2);
	sym_nexus_plan_finish(&pl);
}

static void test_plan_bad_and_empty(void **state)
{
	(void)state;
	struct sym_nexus_model m = pmodel(&prof_a, 64, 200);
	struct sym_nexus_plan pl;
	sym_nexus_plan_init(&pl);
	/* unservable (l(1) = 31.25 ms > 30 ms) and zero-rate models get nothing */
	m.slo = 30 * SYM_MS;
	assert_int_equal(sym_nexus_plan_compute(&pl, &m, 1, 0, 0), 0);
	assert_int_equal(pl.ngpus, 0);
	m.slo = 200 * SYM_MS;
	m.rate = 0;
	assert_int_equal(sym_nexus_plan_compute(&pl, &m, 1, 0, 0), 0);
	assert_int_equal(pl.ngpus, 0);
	assert_int_equal(sym_nexus_plan_compute(&pl, NULL, 0, 0, 0), 0);
	/* bad input */
	m.rate = -1;
	assert_int_equal(sym_nexus_plan_compute(&pl, &m, 1, 0, 0), -EINVAL);
	m.rate = NAN;
	assert_int_equal(sym_nexus_plan_compute(&pl, &m, 1, 0, 0), -EINVAL);
	m.rate = 1;
	m.slo = 0;
	assert_int_equal(sym_nexus_plan_compute(&pl, &m, 1, 0, 0), -EINVAL);
	m.slo = SYM_S;
	sym_time bad[3] = { 0, 5, 4 };
	m.lat = bad;
	m.max_batch = 2;
	assert_int_equal(sym_nexus_plan_compute(&pl, &m, 1, 0, 0), -EINVAL);
	assert_int_equal(sym_nexus_plan_compute(&pl, NULL, 1, 0, 0), -EINVAL);
	/* a vast rate overflows the GPU limit */
	m = pmodel(&prof_a, 1e300, 200);
	assert_int_equal(sym_nexus_plan_compute(&pl, &m, 1, 0, 0), -EOVERFLOW);
	assert_int_equal(pl.ngpus, 0);
	sym_nexus_plan_finish(&pl);
	sym_nexus_plan_finish(&pl);
}

/* ---- parameters ---- */

static void check_round_trip(const char *spec, const char *canonical)
{
	struct sym_policy p, q;
	char err[256] = "", buf[128], buf2[128];
	assert_int_equal(sym_policy_parse(spec, &p, err, sizeof(err)), 0);
	sym_policy_format(&p, buf, sizeof(buf));
	assert_string_equal(buf, canonical);
	assert_int_equal(sym_policy_parse(buf, &q, err, sizeof(err)), 0);
	assert_string_equal(sym_policy_format(&q, buf2, sizeof(buf2)), canonical);
	assert_true(sym_policy_equal(&q, &p));
}

static void check_bad(const char *spec, const char *needle)
{
	struct sym_policy p;
	char err[256] = "";
	assert_int_equal(sym_policy_parse(spec, &p, err, sizeof(err)), -EINVAL);
	assert_contains(err, needle);
}

static void test_params(void **state)
{
	(void)state;
	struct sym_policy p;
	char err[256] = "";
	assert_int_equal(sym_policy_parse("nexus", &p, err, sizeof(err)), 0);
	assert_true(cd_param(&p, "frontends") == 1);
	assert_true(cd_param(&p, "epoch") == 30);
	assert_string_equal(cd_param_text(&p, "drop"), "early");
	assert_true(sym_policy_is_scheduler(&p));
	check_round_trip("nexus", "nexus");
	check_round_trip("nexus:frontends=8", "nexus:frontends=8");
	check_round_trip("nexus:drop=lazy,epoch=0.5,frontends=2", "nexus:frontends=2,epoch=0.5,drop=lazy");
	check_round_trip("nexus:frontends=1,epoch=30,drop=early", "nexus");
	check_round_trip("nexus:epoch=12.25", "nexus:epoch=12.25");
	check_round_trip("nexus:spare=idle,drop=lazy", "nexus:drop=lazy,spare=idle");
	check_round_trip("nexus:spare=use", "nexus");
	check_bad("nexus:spare=some", "spare must be use or idle");
	check_bad("nexus:frontends=0", "frontends must be an integer");
	check_bad("nexus:frontends=1.5", "frontends must be an integer");
	check_bad("nexus:frontends=99999", "frontends");
	check_bad("nexus:epoch=0", "epoch must be a time in seconds");
	check_bad("nexus:epoch=-3", "epoch");
	check_bad("nexus:epoch=soon", "epoch");
	check_bad("nexus:drop=late", "drop must be early or lazy");
	check_bad("nexus:batch=4", "unknown parameter 'batch'");
	check_bad("nexus:4", "expected key=value");
	check_bad("nexus:frontends=2,", "trailing comma");
	check_bad("nexus:", "empty parameters");
}

/* ---- the policy ---- */

static struct sym_core_cfg nexus_cfg(const char *policy, const struct sym_model_cfg *mc, int nmodels, int ngpus)
{
	struct sym_core_cfg cfg = { .nmodels = nmodels, .models = mc, .ngpus = ngpus };
	char err[256] = "";
	assert_int_equal(sym_policy_parse(policy, &cfg.policy, err, sizeof(err)), 0);
	return cfg;
}

static void assert_dispatch(const struct cd_driver *dr, int i, int gpu, int model, int size, sym_time now)
{
	assert_true(i < dr->nd);
	const struct cd_dispatch *d = &dr->d[i];
	if (d->gpu != gpu || d->model != model || d->size != size || d->now != now)
		print_error("dispatch %d: gpu %d model %d size %d at %lld; want gpu %d model %d size %d at %lld\n", i,
			    d->gpu, d->model, d->size, (long long)d->now, gpu, model, size, (long long)now);
	assert_int_equal(d->gpu, gpu);
	assert_int_equal(d->model, model);
	assert_int_equal(d->size, size);
	assert_int_equal(d->now, now);
}

/* A (64 r/s, SLO 200 ms) and B (32 r/s, SLO 250 ms) share the one GPU: duty
 * cycle 125 ms, A's slot at offset 0 (batch 8, 75 ms), B's at 75 ms (batch 4,
 * 50 ms). A request arrives every 15.625 ms for A and 31.25 ms for B, from 0
 * to just under 1 s. The grid starts with the first request (t = 0): A runs
 * it alone; B's slot at 75 ms takes the 3 B requests so far (0, 31.25, 62.5);
 * A's at 125 ms the 7 in (0, 125) (the one arriving at 125 comes after the
 * slot); from then on A runs 8 at 125i and B 4 at 75 + 125i, until B's last
 * request goes alone at 1075 ms. Nothing is dropped or late. */
static void test_policy_cycles(void **state)
{
	(void)state;
	const char *specs[2] = { "nexus", "nexus:drop=lazy" };
	for (int v = 0; v < 2; v++) {
		struct sym_model_cfg mc[2] = {
			{ .profile = &prof_a, .slo = 200 * SYM_MS, .rate_hint = 64, .name = "A" },
			{ .profile = &prof_b, .slo = 250 * SYM_MS, .rate_hint = 32, .name = "B" },
		};
		struct sym_core_cfg cfg = nexus_cfg(specs[v], mc, 2, 1);
		struct cd_driver *dr = cd_new();
		cd_start(dr, &cfg);
		for (int k = 0; k < 64; k++) {
			cd_arrive(dr, k * 15625 * SYM_US, 0);
			if (k % 2 == 0)
				cd_arrive(dr, k * 15625 * SYM_US, 1);
		}
		cd_run(dr);
		assert_int_equal(dr->ndrops, 0);
		assert_int_equal(dr->nlate, 0);
		assert_int_equal(dr->nd, 18);
		for (int i = 0; i <= 8; i++) {
			int a = i == 0 ? 1 : i == 1 ? 7 : 8;
			int b = i == 0 ? 3 : i == 8 ? 1 : 4;
			assert_dispatch(dr, 2 * i, 0, 0, a, i * 125 * SYM_MS);
			assert_dispatch(dr, 2 * i + 1, 0, 1, b, 75 * SYM_MS + i * 125 * SYM_MS);
		}
		/* A's batch at 250 ms: the requests that arrived at 125 .. 234.375 ms */
		assert_int_equal(dr->req[dr->d[4].ids[0]].arrival, 125 * SYM_MS);
		assert_int_equal(dr->req[dr->d[4].ids[7]].arrival, 234375 * SYM_US);
		cd_free(dr);
	}
}

/* Spare GPUs. One model, l(b) = 2b + 4 ms, SLO 40 ms, 100 r/s on 4 GPUs:
 * the plan for 100 r/s needs one GPU. spare=idle leaves the other three idle
 * (every batch on GPU 0); spare=use plans for the largest scaled rate that
 * fits 4 GPUs, so the load spreads over several of them with headroom, and
 * the batches are smaller. A request every 10 ms for 2 s. */
static void test_policy_spare(void **state)
{
	(void)state;
	struct sym_profile lin;
	assert_int_equal(sym_profile_init_linear(&lin, "lin", 2, 4, 18), 0);
	int used[2] = { 0, 0 };
	double mean[2] = { 0, 0 };
	const char *specs[2] = { "nexus:spare=idle", "nexus" };
	for (int v = 0; v < 2; v++) {
		struct sym_model_cfg mc = { .profile = &lin, .slo = 40 * SYM_MS, .rate_hint = 100, .name = "m" };
		struct sym_core_cfg cfg = nexus_cfg(specs[v], &mc, 1, 4);
		struct cd_driver *dr = cd_new();
		cd_start(dr, &cfg);
		for (int k = 0; k < 200; k++)
			cd_arrive(dr, k * 10 * SYM_MS, 0);
		cd_run(dr);
		bool seen[4] = { false, false, false, false };
		int total = 0;
		for (int i = 0; i < dr->nd; i++) {
			seen[dr->d[i].gpu] = true;
			total += dr->d[i].size;
		}
		for (int g = 0; g < 4; g++)
			used[v] += seen[g];
		mean[v] = (double)total / dr->nd;
		assert_int_equal(dr->nlate, 0);
		cd_free(dr);
	}
	assert_int_equal(used[0], 1);
	assert_true(used[1] >= 3);
	assert_true(mean[1] < mean[0]);
	sym_profile_finish(&lin);
}

/* One model, l(b) = 2b + 4 ms, SLO 40 ms, 800 r/s: two whole GPUs (batch 8,
 * duty 20 ms), equal weights. Eight requests at t = 0. With one frontend the
 * choices alternate: 0, 2, 4, 6 on GPU 0 and 1, 3, 5, 7 on GPU 1. With two,
 * frontend 0 (even ids) and frontend 1 (odd ids) alternate each on its own,
 * frontend 1 starting half a round in (GPU 1 first): 0, 3, 4, 7 on GPU 0 and
 * 1, 2, 5, 6 on GPU 1. In lockstep both would send their first request to
 * GPU 0 (0, 1, 4, 5 there). Each GPU runs its first
 * request at once (its grid starts there) and the other three at its next
 * slot, 20 ms. */
static void test_policy_frontends(void **state)
{
	(void)state;
	struct sym_profile lin;
	assert_int_equal(sym_profile_init_linear(&lin, "lin", 2, 4, 16), 0);
	struct sym_model_cfg mc[1] = { { .profile = &lin, .slo = 40 * SYM_MS, .rate_hint = 800 } };
	const char *specs[2] = { "nexus", "nexus:frontends=2" };
	const uint64_t want[2][4][3] = {
		{ { 0 }, { 1 }, { 2, 4, 6 }, { 3, 5, 7 } },
		{ { 0 }, { 1 }, { 3, 4, 7 }, { 2, 5, 6 } },
	};
	for (int v = 0; v < 2; v++) {
		struct sym_core_cfg cfg = nexus_cfg(specs[v], mc, 1, 2);
		struct cd_driver *dr = cd_new();
		cd_start(dr, &cfg);
		for (int i = 0; i < 8; i++)
			cd_arrive(dr, 0, 0);
		cd_run(dr);
		assert_int_equal(dr->ndrops, 0);
		assert_int_equal(dr->nlate, 0);
		assert_int_equal(dr->nd, 4);
		for (int i = 0; i < 4; i++) {
			int size = i < 2 ? 1 : 3;
			assert_dispatch(dr, i, i % 2, 0, size, i < 2 ? 0 : 20 * SYM_MS);
			for (int j = 0; j < size; j++)
				assert_int_equal(dr->d[i].ids[j], want[v][i][j]);
		}
		cd_free(dr);
	}
	sym_profile_finish(&lin);
}

/* A model whose SLO no batch meets has no backend: its requests are dropped
 * at once, as expired. */
static void test_policy_unservable(void **state)
{
	(void)state;
	struct sym_model_cfg mc[2] = {
		{ .profile = &prof_a, .slo = 20 * SYM_MS, .rate_hint = 10 },
		{ .profile = &prof_b, .slo = 250 * SYM_MS, .rate_hint = 10 },
	};
	struct sym_core_cfg cfg = nexus_cfg("nexus", mc, 2, 1);
	struct cd_driver *dr = cd_new();
	cd_start(dr, &cfg);
	cd_arrive(dr, 0, 0);
	cd_arrive(dr, 0, 1);
	cd_run(dr);
	assert_int_equal(dr->ndrops, 1);
	assert_int_equal(dr->drops[0].id, 0);
	assert_int_equal(dr->drops[0].why, SYM_DROP_EXPIRED);
	assert_int_equal(dr->nd, 1);
	assert_int_equal(dr->d[0].model, 1);
	cd_free(dr);
}

/* ---- conservation under overload, with re-plans ---- */

static uint64_t lcg_state;

static double lcg_uniform(void)
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return ((double)(lcg_state >> 11) + 0.5) / 9007199254740992.0;
}

/* Poisson arrivals over [t0, t1) at the given per-model rates. */
static sym_time add_phase(struct cd_driver *dr, sym_time t0, sym_time t1, const double *rate, int nm)
{
	double total = 0;
	for (int m = 0; m < nm; m++)
		total += rate[m];
	sym_time t = t0;
	for (;;) {
		t += (sym_time)(-log(lcg_uniform()) / total * 1e9);
		if (t >= t1)
			return t1;
		double u = lcg_uniform() * total;
		int m = 0;
		while (m < nm - 1 && u >= rate[m])
			u -= rate[m++];
		cd_arrive(dr, t, m);
	}
}

struct mixed_run {
	int nd, ndrops, nreq;
	uint64_t hash;
	int gpus_m2[2]; /* GPUs model 2 ran on, before 1 s and after 2 s */
};

static void run_mixed(const char *policy, int kinds, struct mixed_run *out)
{
	struct sym_profile p[3], slow[3];
	assert_int_equal(sym_profile_init_linear(&p[0], "m0", 1, 5, 16), 0);
	assert_int_equal(sym_profile_init_linear(&p[1], "m1", 2, 8, 16), 0);
	assert_int_equal(sym_profile_init_linear(&p[2], "m2", 0.5, 3, 16), 0);
	assert_int_equal(sym_profile_init_linear(&slow[0], "m0s", 1.5, 6, 12), 0);
	assert_int_equal(sym_profile_init_linear(&slow[1], "m1s", 3, 9, 12), 0);
	assert_int_equal(sym_profile_init_linear(&slow[2], "m2s", 0.8, 3.5, 12), 0);
	double phase1[3] = { 1500, 300, 200 }, phase2[3] = { 200, 300, 3000 };
	struct sym_model_cfg mc[3];
	const double slo_ms[3] = { 25, 50, 15 };
	for (int m = 0; m < 3; m++) {
		mc[m] = (struct sym_model_cfg){ .profile = &p[m], .slo = sym_ms(slo_ms[m]), .rate_hint = phase1[m] };
		mc[m].by_kind[1] = &slow[m];
	}
	struct sym_core_cfg cfg = nexus_cfg(policy, mc, 3, 3);
	struct sym_kind kd[2] = { { .name = "fast", .memory_mb = 0 }, { .name = "slow", .memory_mb = 0 } };
	int gk[3] = { 0, 0, 1 };
	if (kinds == 2) {
		cfg.nkinds = 2;
		cfg.kinds = kd;
		cfg.gpu_kind = gk;
	}
	cfg.net = (struct sym_net){ .ctrl = 100 * SYM_US, .data = 10 * SYM_US, .resp = 200 * SYM_US };
	struct cd_driver *dr = cd_new();
	cd_start(dr, &cfg);
	lcg_state = 12345;
	add_phase(dr, 0, 1500 * SYM_MS, phase1, 3);
	add_phase(dr, 1500 * SYM_MS, 3 * SYM_S, phase2, 3);
	cd_run(dr);
	assert_int_equal(dr->nlate, 0); /* every dispatched batch meets its head's deadline */
	memset(out, 0, sizeof(*out));
	out->nd = dr->nd;
	out->ndrops = dr->ndrops;
	out->nreq = dr->nreq;
	out->hash = 1469598103934665603ULL;
	bool used[2][3] = { { false } };
	for (int i = 0; i < dr->nd; i++) {
		const struct cd_dispatch *d = &dr->d[i];
		uint64_t v[4] = { (uint64_t)d->gpu, (uint64_t)d->size, (uint64_t)d->now, d->ids[0] };
		for (int j = 0; j < 4; j++)
			out->hash = (out->hash ^ v[j]) * 1099511628211ULL;
		if (d->model == 2 && d->now < SYM_S)
			used[0][d->gpu] = true;
		if (d->model == 2 && d->now > 2 * SYM_S)
			used[1][d->gpu] = true;
	}
	for (int h = 0; h < 2; h++)
		for (int g = 0; g < 3; g++)
			out->gpus_m2[h] += used[h][g];
	cd_free(dr);
	for (int m = 0; m < 3; m++) {
		sym_profile_finish(&p[m]);
		sym_profile_finish(&slow[m]);
	}
}

/* Three models on three GPUs, rates shifting at 1.5 s from model 0 to model 2
 * (both phases overload the cluster), epochs of 0.25 s: every request ends
 * once (cd_run), none is served late, requests are shed, the re-plans move
 * model 2 onto more GPUs, and the run is deterministic. Also with lazy drop
 * and three frontends, and with one of the GPUs of a slower second kind. */
static void test_policy_conservation(void **state)
{
	(void)state;
	const char *specs[3] = { "nexus:epoch=0.25", "nexus:epoch=0.25,drop=lazy,frontends=3",
				 "nexus:epoch=0.25,frontends=2" };
	for (int v = 0; v < 3; v++) {
		struct mixed_run a, b;
		int kinds = v == 2 ? 2 : 1;
		run_mixed(specs[v], kinds, &a);
		assert_true(a.nreq > 5000);
		assert_true(a.ndrops > 0);
		assert_true(a.nd > 100);
		assert_true(a.gpus_m2[1] > a.gpus_m2[0]);
		run_mixed(specs[v], kinds, &b);
		assert_int_equal(a.nd, b.nd);
		assert_int_equal(a.ndrops, b.ndrops);
		assert_true(a.hash == b.hash);
	}
}

/* Epochs triggered by change (trigger=F): with epochs of 100 s nothing re-plans in the 3 s of
 * run_mixed, so model 2 keeps the GPUs it had when its rate grows 15x at 1.5 s; with
 * trigger=0.5 (at least 0.2 s between plans) its arrivals start a new epoch and it moves onto
 * more GPUs. Deterministic, no request late (run_mixed), each ends once (cd_run). */
static void test_policy_trigger(void **state)
{
	(void)state;
	struct mixed_run fixed, trig, again;
	run_mixed("nexus:epoch=100", 1, &fixed);
	run_mixed("nexus:epoch=100,trigger=0.5,min_epoch=0.2", 1, &trig);
	run_mixed("nexus:epoch=100,trigger=0.5,min_epoch=0.2", 1, &again);
	print_message("GPUs of model 2 before/after the shift: fixed %d/%d, triggered %d/%d; drops %llu vs %llu\n",
		      fixed.gpus_m2[0], fixed.gpus_m2[1], trig.gpus_m2[0], trig.gpus_m2[1],
		      (unsigned long long)fixed.ndrops, (unsigned long long)trig.ndrops);
	assert_int_equal(fixed.gpus_m2[1], fixed.gpus_m2[0]);
	assert_true(trig.gpus_m2[1] > trig.gpus_m2[0]);
	assert_true(trig.ndrops < fixed.ndrops);
	assert_true(trig.hash == again.hash && trig.nd == again.nd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_reference),
		cmocka_unit_test(test_plan_saturate),
		cmocka_unit_test(test_plan_memory),
		cmocka_unit_test(test_plan_bad_and_empty),
		cmocka_unit_test(test_plan_incremental),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_policy_cycles),
		cmocka_unit_test(test_policy_spare),
		cmocka_unit_test(test_policy_frontends),
		cmocka_unit_test(test_policy_unservable),
		cmocka_unit_test(test_policy_conservation),
		cmocka_unit_test(test_policy_trigger),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
