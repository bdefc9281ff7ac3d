/* Simulator tests: conservation for every policy, gathering rule and arrival
 * process; determinism; warm-up accounting; timeline consistency; jitter;
 * scale (thousands of GPUs, hundreds of models); lowest-id packing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/config.h"
#include "sim/engine.h"
#include "sim/goodput.h"

static void flag(struct sym_experiment *e, const char *f, const char *v)
{
	char err[512];
	int rc = sym_experiment_apply_flag(e, f, v, err, sizeof(err));
	if (rc)
		fail_msg("--%s %s: %s", f, v, err);
}

static void resolve(struct sym_experiment *e)
{
	char err[512];
	if (sym_experiment_resolve(e, err, sizeof(err)))
		fail_msg("resolve: %s", err);
}

static void run(const struct sym_experiment *e, double rate, struct sym_run_result *r)
{
	char err[512];
	struct sym_run_opts o = { .rate = rate };
	int rc = sym_sim_run(e, &o, r, err, sizeof(err));
	if (rc)
		fail_msg("run: %s", err);
}

static void check_invariants(const struct sym_experiment *e, const struct sym_run_result *r)
{
	const struct sym_model_result *t = &r->total;
	assert_int_equal(t->offered, t->served + t->late + t->dropped);
	uint64_t by = 0;
	for (int k = 0; k < SYM_DROP_NREASONS; k++)
		by += t->dropped_by[k];
	assert_int_equal(by, t->dropped);
	for (size_t m = 0; m < r->nmodels; m++) {
		const struct sym_model_result *mr = &r->models[m];
		assert_int_equal(mr->offered, mr->served + mr->late + mr->dropped);
		uint64_t sum = 0, n = 0;
		for (int b = 1; b <= mr->max_batch; b++) {
			sum += (uint64_t)b * mr->batch_counts[b];
			n += mr->batch_counts[b];
		}
		assert_int_equal(n, mr->batches);
		assert_int_equal(sum, mr->batched);
	}
	assert_int_equal(t->latency.n, t->served + t->late);
	assert_true(r->gpu_busy_fraction >= 0 && r->gpu_busy_fraction <= 1 + 1e-9);
	assert_true(r->gpus_used >= 0 && r->gpus_used <= e->gpus);
	uint64_t offered = 0, ended = 0;
	for (size_t s = 0; s < r->nintervals; s++) {
		offered += r->timeline[s].offered;
		ended += r->timeline[s].good + r->timeline[s].bad;
		assert_true(r->timeline[s].busy_gpu_s <= e->gpus * r->interval_s + 1e-6);
		assert_true(r->timeline[s].gpus_used <= (uint32_t)e->gpus);
		/* busy time only on GPUs counted in use */
		assert_true(r->timeline[s].busy_gpu_s <= r->timeline[s].gpus_used * r->interval_s + 1e-6);
	}
	assert_int_equal(offered, r->simulated_requests);
	assert_int_equal(ended, r->simulated_requests);
}

static void test_conservation_matrix(void **state)
{
	(void)state;
	const char *policies[] = { "symphony", "eager", "timeout:2", "timeout:30%" };
	const char *drops[] = { "lazy", "early", "early:8" };
	const char *arrivals[] = { "poisson", "gamma:0.2", "uniform" };
	for (int p = 0; p < 4; p++)
		for (int d = 0; d < 3; d++)
			for (int a = 0; a < 3; a++) {
				struct sym_experiment e;
				sym_experiment_init(&e);
				flag(&e, "models", "ResNet50,VGG16,BERT,MobileNet");
				flag(&e, "popularity", "zipf:1");
				flag(&e, "gpus", "6");
				flag(&e, "policy", policies[p]);
				flag(&e, "drop", drops[d]);
				flag(&e, "arrival", arrivals[a]);
				flag(&e, "duration", "3");
				flag(&e, "warmup", "0.5");
				flag(&e, "ctrl-ms", "0.2");
				flag(&e, "data-ms", "0.01");
				flag(&e, "resp-ms", "0.1");
				resolve(&e);
				struct sym_run_result r;
				run(&e, 3000, &r); /* overloaded for some models: drops happen */
				check_invariants(&e, &r);
				assert_true(r.total.offered > 5000);
				/* without jitter nothing dispatched is ever late */
				assert_int_equal(r.total.late, 0);
				sym_run_result_finish(&r);
				sym_experiment_finish(&e);
			}
}

static void test_determinism(void **state)
{
	(void)state;
	struct sym_experiment e;
	sym_experiment_init(&e);
	flag(&e, "models", "all");
	flag(&e, "gpus", "32");
	flag(&e, "arrival", "gamma:0.5");
	flag(&e, "jitter", "0.1");
	flag(&e, "duration", "4");
	flag(&e, "warmup", "1");
	resolve(&e);
	struct sym_run_result a, b;
	run(&e, 9000, &a);
	run(&e, 9000, &b);
	assert_int_equal(a.simulated_requests, b.simulated_requests);
	assert_int_equal(a.events, b.events);
	assert_memory_equal(a.total.batch_counts, b.total.batch_counts,
			    ((size_t)a.total.max_batch + 1) * sizeof(uint64_t));
	assert_memory_equal(a.total.latency.counts, b.total.latency.counts, SYM_HIST_BUCKETS * sizeof(uint32_t));
	assert_true(a.gpu_busy_fraction == b.gpu_busy_fraction);
	for (size_t m = 0; m < a.nmodels; m++) {
		assert_int_equal(a.models[m].served, b.models[m].served);
		assert_int_equal(a.models[m].dropped, b.models[m].dropped);
	}
	/* a different seed gives a different run */
	e.seed = 2;
	struct sym_run_result c;
	run(&e, 9000, &c);
	assert_true(c.simulated_requests != a.simulated_requests || c.events != a.events);
	sym_run_result_finish(&a);
	sym_run_result_finish(&b);
	sym_run_result_finish(&c);
	sym_experiment_finish(&e);
}

/* Runs every registered policy (with its defaults and a few parameter
 * variants) on a bursty mixed-zoo workload, on a homogeneous and on a
 * heterogeneous cluster: invariants hold, a second run is identical, and
 * policies that only dispatch feasible batches are never late. */
static void policy_run(const char *policy, const char *cluster, struct sym_run_result *r, double rate)
{
	struct sym_experiment e;
	sym_experiment_init(&e);
	flag(&e, "models", "ResNet50,VGG16,BERT,MobileNet,DenseNet121,InceptionV3");
	flag(&e, "popularity", "zipf:1");
	if (cluster)
		flag(&e, "cluster", cluster);
	else
		flag(&e, "gpus", "8");
	flag(&e, "policy", policy);
	flag(&e, "arrival", "gamma:0.3");
	flag(&e, "duration", "4");
	flag(&e, "warmup", "0.5");
	flag(&e, "ctrl-ms", "0.2");
	flag(&e, "data-ms", "0.01");
	flag(&e, "resp-ms", "0.1");
	resolve(&e);
	char err[512];
	if (sym_sim_check(&e, err, sizeof(err)))
		fail_msg("%s: %s", policy, err);
	run(&e, rate, r);
	check_invariants(&e, r);
	sym_experiment_finish(&e);
}

static void test_every_policy(void **state)
{
	(void)state;
	size_t n;
	const struct sym_policy_ops *const *list = sym_policy_list(&n);
	const char *variants[] = { "timeout:30%", "betalambda:beta=2", "clockwork:legacy", "clockwork:sizes=all", "shepherd:lambda=1.5",
				   "nexus:frontends=8", "nexus:drop=lazy,epoch=1", "urgency:shape=linear",
				   "urgency:shape=exp,max=4" };
	const char *clusters[] = { NULL, "a100:5,gtx1080ti:3,cpu:2:x15" };
	size_t total = n + sizeof(variants) / sizeof(variants[0]);
	for (size_t i = 0; i < total; i++) {
		const char *pol = i < n ? list[i]->name : variants[i - n];
		if (!strcmp(pol, "timeout"))
			pol = "timeout:5";
		for (int c = 0; c < 2; c++) {
			for (int load = 0; load < 2; load++) {
				double rate = load ? 12000 : 2500; /* overload and moderate load */
				struct sym_run_result a, b;
				policy_run(pol, clusters[c], &a, rate);
				policy_run(pol, clusters[c], &b, rate);
				if (a.total.served + a.total.late < a.total.offered / 20)
					fail_msg("%s on %s at %g: served only %llu of %llu", pol, clusters[c] ? clusters[c] : "8 GPUs",
						 rate, (unsigned long long)(a.total.served + a.total.late),
						 (unsigned long long)a.total.offered);
				assert_int_equal(a.events, b.events);
				assert_int_equal(a.total.served, b.total.served);
				assert_int_equal(a.total.dropped, b.total.dropped);
				assert_int_equal(a.preemptions, b.preemptions);
				assert_memory_equal(a.total.batch_counts, b.total.batch_counts,
						    ((size_t)a.total.max_batch + 1) * sizeof(uint64_t));
				bool feasible_only = strncmp(pol, "fcfs", 4) && strncmp(pol, "edf", 3) &&
						     strncmp(pol, "urgency", 7);
				if (feasible_only && a.total.late)
					fail_msg("%s on %s at %g: %llu late without jitter", pol,
						 clusters[c] ? clusters[c] : "8 GPUs", rate, (unsigned long long)a.total.late);
				sym_run_result_finish(&a);
				sym_run_result_finish(&b);
			}
		}
	}
}

static void test_warmup_and_rate(void **state)
{
	(void)state;
	struct sym_experiment e;
	sym_experiment_init(&e);
	flag(&e, "profile", "1.053,5.072");
	flag(&e, "slo", "25");
	flag(&e, "arrival", "uniform");
	flag(&e, "duration", "10");
	flag(&e, "warmup", "4");
	resolve(&e);
	struct sym_run_result r;
	run(&e, 1000, &r);
	/* uniform 1000/s: 10000 arrivals in all, 6000 counted */
	assert_true(llabs((long long)r.simulated_requests - 10000) <= 1);
	assert_true(llabs((long long)r.total.offered - 6000) <= 1);
	assert_int_equal(r.total.dropped, 0);
	assert_true(fabs(r.window_s - 6) < 1e-9);
	/* each request waits for its batch: latency <= SLO, queueing < SLO */
	assert_true(r.total.latency.max <= 25 * SYM_MS);
	assert_true(sym_hist_quantile(&r.total.queueing, 0.99) < 25 * SYM_MS);
	check_invariants(&e, &r);
	sym_run_result_finish(&r);
	sym_experiment_finish(&e);
}

static void test_jitter_makes_late(void **state)
{
	(void)state;
	struct sym_experiment e;
	sym_experiment_init(&e);
	flag(&e, "profile", "1.053,5.072");
	flag(&e, "slo", "25");
	flag(&e, "jitter", "0.2");
	flag(&e, "duration", "5");
	flag(&e, "warmup", "1");
	resolve(&e);
	struct sym_run_result r;
	run(&e, 4000, &r);
	/* symphony runs batches close to their deadline: +-20% GPU time makes some late */
	assert_true(r.total.late > 0);
	check_invariants(&e, &r);
	sym_run_result_finish(&r);
	sym_experiment_finish(&e);
}

static void test_network_tail(void **state)
{
	(void)state;
	/* 1 ms planned control delay; the actual delay is exponential */
	uint64_t late[3];
	const char *tails[3] = { "0", "0.1", "1" };
	for (int i = 0; i < 3; i++) {
		struct sym_experiment e;
		sym_experiment_init(&e);
		flag(&e, "profile", "1.053,5.072");
		flag(&e, "slo", "25");
		flag(&e, "ctrl-ms", "1");
		flag(&e, "tail-ms", tails[i]);
		flag(&e, "duration", "5");
		flag(&e, "warmup", "1");
		resolve(&e);
		struct sym_run_result r;
		run(&e, 4000, &r);
		late[i] = r.total.late;
		check_invariants(&e, &r);
		sym_run_result_finish(&r);
		sym_experiment_finish(&e);
	}
	/* none late when the network keeps to the plan; a mean of 0.1 ms against 1 ms planned is
	 * rarely late (P = e^-10 per batch); a mean of 1 ms often is */
	assert_int_equal(late[0], 0);
	assert_true(late[1] <= 20);
	assert_true(late[2] > 100);
}

static void test_completion_delay(void **state)
{
	(void)state;
	/* one GPU busy all the time with 10 ms batches (eager, constant rate far
	 * above what it serves): 4 measured seconds hold 400 batches when the GPU
	 * is free at once, 4000 / (10 + 5) = 266.7 when the scheduler hears of
	 * each completion 5 ms later and only then plans the next batch; with
	 * send-ahead the next batch is planned from the predicted free time and
	 * the delay costs nothing: 400 again */
	uint64_t batches[3];
	const char *done[3] = { "0", "5", "5" };
	const char *ahead[3] = { "false", "false", "true" };
	for (int i = 0; i < 3; i++) {
		struct sym_experiment e;
		sym_experiment_init(&e);
		flag(&e, "profile", "0,10");
		flag(&e, "slo", "1000");
		flag(&e, "gpus", "1");
		flag(&e, "policy", "eager");
		flag(&e, "arrival", "uniform");
		flag(&e, "done-ms", done[i]);
		flag(&e, "send-ahead", ahead[i]);
		flag(&e, "duration", "5");
		flag(&e, "warmup", "1");
		resolve(&e);
		struct sym_run_result r;
		run(&e, 2000, &r);
		batches[i] = r.total.batches;
		check_invariants(&e, &r);
		sym_run_result_finish(&r);
		sym_experiment_finish(&e);
	}
	assert_in_range(batches[0], 399, 401);
	assert_in_range(batches[1], 265, 268);
	assert_in_range(batches[2], 399, 401);
	/* a batch that ended but whose GPU is not yet free cannot be preempted */
	struct sym_experiment e;
	sym_experiment_init(&e);
	flag(&e, "profile", "1,5");
	flag(&e, "policy", "shepherd");
	flag(&e, "slo", "25");
	flag(&e, "done-ms", "0.2");
	flag(&e, "duration", "2");
	flag(&e, "warmup", "1");
	resolve(&e);
	struct sym_run_result r;
	char err[512];
	struct sym_run_opts o = { .rate = 100 };
	assert_int_not_equal(sym_sim_run(&e, &o, &r, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "cancel running batches"));
	sym_run_result_finish(&r);
	sym_experiment_finish(&e);
}

static void test_light_load_packs_low_ids(void **state)
{
	(void)state;
	struct sym_experiment e;
	sym_experiment_init(&e);
	flag(&e, "profile", "1.053,5.072");
	flag(&e, "slo", "25");
	flag(&e, "gpus", "64");
	flag(&e, "duration", "5");
	resolve(&e);
	struct sym_run_result r;
	/* ~700 req/s needs about one GPU's worth with batches of ~16 */
	run(&e, 700, &r);
	assert_true(r.gpus_used <= 6);
	assert_true(r.gpu_busy_fraction < 0.05);
	assert_int_equal(r.total.dropped, 0);
	sym_run_result_finish(&r);
	sym_experiment_finish(&e);
}

static void test_segments_follow_schedule(void **state)
{
	(void)state;
	struct sym_experiment e;
	sym_experiment_init(&e);
	flag(&e, "profile", "1.053,5.072");
	flag(&e, "slo", "25");
	flag(&e, "gpus", "16");
	flag(&e, "segments", "2:1000,2:4000,2:0");
	flag(&e, "warmup", "0");
	resolve(&e);
	assert_true(fabs(sym_experiment_duration(&e) - 6) < 1e-9);
	struct sym_run_result r;
	run(&e, 1, &r);
	assert_int_equal(r.nintervals, 6);
	assert_true(r.timeline[0].offered > 900 && r.timeline[0].offered < 1100);
	assert_true(r.timeline[3].offered > 3700 && r.timeline[3].offered < 4300);
	assert_int_equal(r.timeline[5].offered, 0);
	/* busy GPUs follow the load, and so do the GPUs in use (lowest ids first) */
	assert_true(r.timeline[3].busy_gpu_s > 2 * r.timeline[0].busy_gpu_s);
	assert_true(r.timeline[3].gpus_used > r.timeline[0].gpus_used);
	assert_int_equal(r.timeline[5].gpus_used, 0);
	check_invariants(&e, &r);
	sym_run_result_finish(&r);
	/* half-second intervals: twice as many rows, the same totals */
	flag(&e, "interval", "0.5");
	resolve(&e);
	struct sym_run_result h;
	run(&e, 1, &h);
	assert_int_equal(h.nintervals, 12);
	assert_true(h.interval_s == 0.5);
	check_invariants(&e, &h);
	sym_run_result_finish(&h);
	sym_experiment_finish(&e);
}

static void test_scale(void **state)
{
	(void)state;
	/* 300 models and 2000 GPUs in one run */
	struct sym_experiment e;
	sym_experiment_init(&e);
	cJSON *models = cJSON_CreateArray();
	for (int i = 0; i < 300; i++) {
		cJSON *m = cJSON_CreateObject();
		char name[32];
		snprintf(name, sizeof(name), "m%d", i);
		cJSON_AddStringToObject(m, "name", name);
		cJSON_AddNumberToObject(m, "alpha_ms", 0.5 + (i % 7) * 0.3);
		cJSON_AddNumberToObject(m, "beta_ms", 3 + (i % 5));
		cJSON_AddNumberToObject(m, "slo_ms", 40);
		cJSON_AddItemToArray(models, m);
	}
	cJSON *cfg = cJSON_CreateObject();
	cJSON_AddItemToObject(cfg, "models", models);
	cJSON_AddNumberToObject(cfg, "gpus", 2000);
	cJSON_AddNumberToObject(cfg, "duration_s", 2);
	cJSON_AddNumberToObject(cfg, "warmup_s", 0.5);
	cJSON_AddStringToObject(cfg, "popularity", "zipf:0.9");
	char err[512];
	assert_int_equal(sym_experiment_apply_json(&e, cfg, "test", err, sizeof(err)), 0);
	cJSON_Delete(cfg);
	resolve(&e);
	assert_int_equal(e.nmodels, 300);
	struct sym_run_result r;
	run(&e, 300000, &r);
	check_invariants(&e, &r);
	assert_true(r.total.offered > 400000);
	assert_true(sym_bad_rate(&r.total) < 0.01);
	assert_true(r.gpus_used > 100);
	sym_run_result_finish(&r);
	sym_experiment_finish(&e);
}

static void test_goodput_bracket(void **state)
{
	(void)state;
	struct sym_experiment e;
	sym_experiment_init(&e);
	flag(&e, "profile", "1.053,5.072");
	flag(&e, "slo", "25");
	flag(&e, "gpus", "8");
	flag(&e, "duration", "10");
	flag(&e, "drop", "early");
	resolve(&e);
	struct sym_goodput g;
	char err[512];
	assert_int_equal(sym_goodput_search(&e, false, &g, err, sizeof(err)), 0);
	/* below the staggered bound (5839), above the uncoordinated one */
	assert_true(g.goodput_rps > 4500 && g.goodput_rps < 5839);
	assert_true(g.upper_bound_rps > g.goodput_rps);
	/* the last passing step is the goodput and every failing step is above it */
	for (size_t i = 0; i < g.nsteps; i++) {
		if (g.steps[i].ok)
			assert_true(g.steps[i].rate <= g.goodput_rps + 1e-6);
		else
			assert_true(g.steps[i].rate > g.goodput_rps);
		assert_false(g.steps[i].stopped_early && g.steps[i].ok);
	}
	/* a step well above capacity stops early (here the third, at 5619 r/s) */
	size_t early = 0;
	for (size_t i = 0; i < g.nsteps; i++)
		early += g.steps[i].stopped_early;
	assert_true(early >= 1);
	/* the kept run is the complete run at the goodput, identical to a fresh one */
	assert_true(g.have_run);
	assert_false(g.run.stopped_early);
	struct sym_run_opts o = { .rate = g.scale };
	struct sym_run_result r;
	assert_int_equal(sym_sim_run(&e, &o, &r, err, sizeof(err)), 0);
	assert_int_equal(r.total.offered, g.run.total.offered);
	assert_int_equal(r.total.late + r.total.dropped, g.run.total.late + g.run.total.dropped);
	assert_true(sym_bad_rate(&g.run.total) <= e.max_bad_rate);
	sym_run_result_finish(&r);
	/* a step stopped early ran only part of the arrivals */
	o.rate = 2 * g.scale;
	o.stop_after_bad = 100;
	assert_int_equal(sym_sim_run(&e, &o, &r, err, sizeof(err)), 0);
	assert_true(r.stopped_early);
	assert_int_equal(r.total.late + r.total.dropped, 100);
	sym_run_result_finish(&r);
	sym_goodput_finish(&g);
	sym_experiment_finish(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conservation_matrix),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_every_policy),
		cmocka_unit_test(test_warmup_and_rate),
		cmocka_unit_test(test_jitter_makes_late),
		cmocka_unit_test(test_network_tail),
		cmocka_unit_test(test_completion_delay),
		cmocka_unit_test(test_light_load_packs_low_ids),
		cmocka_unit_test(test_segments_follow_schedule),
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_goodput_bracket),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
