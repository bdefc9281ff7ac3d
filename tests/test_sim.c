/* Simulator tests: conservation for every policy, gathering rule and arrival
 * process; determinism; warm-up accounting; timeline consistency; jitter;
 * scale (thousands of GPUs, hundreds of models); lowest-id packing; the
 * goodput criterion (per-model and aggregate) with its few-request edges,
 * the early stop per model, replications, and sub-clusters. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiment/config.h"
#include "sim/engine.h"
#include "sim/goodput.h"
#include "experiment/subcluster.h"

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
				   "nexus:frontends=8", "nexus:drop=lazy,epoch=1", "nexus:plan=incremental,epoch=1", "urgency:shape=linear",
				   "urgency:shape=exp,max=4" };
	const char *clusters[] = { NULL, "a100:5,gtx1080ti:3,cpu:2:x15" };
	size_t total = n + sizeof(variants) / sizeof(variants[0]);
	for (size_t i = 0; i < total; i++) {
		const char *pol = i < n ? sym_policy_ops_name(list[i]) : variants[i - n];
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

/* A backend's start lateness (start_late_ms): with P50 = P99 every batch begins exactly that
 * late. One GPU, eager, one request every 10 ms (uniform), l(1) = 5 ms: each request is served
 * in 5 ms on time and in 6.5 ms at 1.5 ms late, a latency it keeps to the microsecond; a lognormal
 * lateness (median 0.1, p99 2 ms) makes latencies vary about 5.1 and 7 ms (900 requests; one
 * behind a very late one waits), and repeats with the seed. */
static void test_start_late(void **state)
{
	(void)state;
	double p50[3], p99[3];
	const char *late[3] = { NULL, "1.5,1.5", "0.1,2" };
	for (int i = 0; i < 3; i++) {
		struct sym_experiment e;
		sym_experiment_init(&e);
		flag(&e, "profile", "1,4");
		flag(&e, "slo", "100");
		flag(&e, "gpus", "1");
		flag(&e, "policy", "eager");
		flag(&e, "arrival", "uniform");
		flag(&e, "duration", "10");
		flag(&e, "warmup", "1");
		if (late[i])
			flag(&e, "start-late", late[i]);
		resolve(&e);
		struct sym_run_result r;
		run(&e, 100, &r);
		check_invariants(&e, &r);
		assert_int_equal(r.total.late + r.total.dropped, 0);
		p50[i] = sym_hist_quantile(&r.total.latency, 0.5);
		p99[i] = sym_hist_quantile(&r.total.latency, 0.99);
		if (i == 2) { /* the same seed, the same draws */
			struct sym_run_result r2;
			run(&e, 100, &r2);
			assert_int_equal(sym_hist_quantile(&r2.total.latency, 0.99), p99[i]);
			sym_run_result_finish(&r2);
		}
		sym_run_result_finish(&r);
		sym_experiment_finish(&e);
	}
	print_message("latency p50 / p99: %.3f / %.3f, %.3f / %.3f, %.3f / %.3f ms\n", p50[0] / 1e6, p99[0] / 1e6,
		      p50[1] / 1e6, p99[1] / 1e6, p50[2] / 1e6, p99[2] / 1e6);
	assert_true(fabs(p50[0] / 1e6 - 5) < 0.01 && fabs(p99[0] / 1e6 - 5) < 0.01);
	assert_true(fabs(p50[1] / 1e6 - 6.5) < 0.01 && fabs(p99[1] / 1e6 - 6.5) < 0.01);
	assert_true(p50[2] / 1e6 > 5.05 && p50[2] / 1e6 < 5.2); /* 5 + about 0.1 */
	assert_true(p99[2] / 1e6 > 6.3 && p99[2] / 1e6 < 8);
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

/* Reads a whole stream (rewound) into a malloc'd string. */
static char *slurp(FILE *f)
{
	long n = ftell(f);
	rewind(f);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	return buf;
}

/* Eager differs from symphony only in when it may send a batch: now,
 * instead of the frontrun moment d - le(B+1). Where every batch is already
 * the model's largest (SLO 12 ms, l(1) = 9 and l(2) = 13: one request per
 * batch), symphony sends at once too, and then everything else is the same
 * code: gathering, the early-drop rule and its target estimate, send-ahead
 * with network delays and a late-ending GPU (jitter, completion delay). The
 * two runs are identical, batch by batch; with a batch that can grow (SLO
 * 30 ms) they differ. */
static void test_eager_is_symphony_sending_now(void **state)
{
	(void)state;
	const char *slo[2] = { "12", "30" };
	for (int v = 0; v < 2; v++) {
		char *trace[2];
		uint64_t bad[2], batches[2];
		const char *pol[2] = { "symphony", "eager" };
		for (int i = 0; i < 2; i++) {
			struct sym_experiment e;
			sym_experiment_init(&e);
			flag(&e, "profile", "4,5");
			flag(&e, "slo", slo[v]);
			flag(&e, "gpus", "3");
			flag(&e, "policy", pol[i]);
			flag(&e, "arrival", "gamma:0.3");
			flag(&e, "ctrl-ms", "0.5");
			flag(&e, "data-ms", "0.1");
			flag(&e, "resp-ms", "0.5");
			flag(&e, "done-ms", "0.3");
			flag(&e, "jitter", "0.05");
			flag(&e, "duration", "4");
			flag(&e, "warmup", "1");
			resolve(&e);
			if (!v)
				assert_int_equal(e.profiles[0].max_batch, 1);
			FILE *f = tmpfile();
			assert_non_null(f);
			char err[512];
			struct sym_run_result r;
			struct sym_run_opts o = { .rate = 300, .trace = f };
			if (sym_sim_run(&e, &o, &r, err, sizeof(err)))
				fail_msg("run: %s", err);
			check_invariants(&e, &r);
			trace[i] = slurp(f);
			fclose(f);
			bad[i] = r.total.late + r.total.dropped;
			batches[i] = r.total.batches;
			assert_true(r.total.batches > 100);
			sym_run_result_finish(&r);
			sym_experiment_finish(&e);
		}
		if (!v) {
			assert_string_equal(trace[0], trace[1]);
			assert_int_equal(bad[0], bad[1]);
			assert_int_equal(batches[0], batches[1]);
		} else {
			assert_true(strcmp(trace[0], trace[1]) != 0);
			assert_true(batches[0] < batches[1]); /* symphony defers: fewer, larger batches */
		}
		free(trace[0]);
		free(trace[1]);
	}
}

/* Six models in three sub-clusters (a given assignment): every batch runs on a
 * GPU of its model's sub-cluster, every request ends once, a seed repeats the
 * run, one sub-cluster is the plain cluster, and the GPUs go to the parts by
 * need. */
static struct sym_run_result sub_run(const char *policy, const char *partition, char **trace, int *rc)
{
	struct sym_experiment e;
	sym_experiment_init(&e);
	flag(&e, "models", "ResNet50,VGG16,BERT,MobileNet,DenseNet121,InceptionV3");
	flag(&e, "popularity", "zipf:1");
	flag(&e, "gpus", "8");
	flag(&e, "policy", policy);
	flag(&e, "arrival", "gamma:0.5");
	flag(&e, "duration", "4");
	flag(&e, "warmup", "0.5");
	flag(&e, "ctrl-ms", "0.2");
	if (partition) {
		cJSON *o = cJSON_Parse(partition);
		char err[512];
		assert_non_null(o);
		if (sym_experiment_apply_json(&e, o, "t", err, sizeof(err)))
			fail_msg("%s", err);
		cJSON_Delete(o);
	}
	resolve(&e);
	FILE *f = tmpfile();
	char err[512];
	struct sym_run_result r;
	struct sym_run_opts o = { .rate = 3000, .trace = f };
	*rc = sym_sim_run(&e, &o, &r, err, sizeof(err));
	*trace = NULL;
	if (*rc) {
		assert_contains(err, "cannot run sub-clusters");
		assert_contains(err, "need a candidate policy");
	} else {
		check_invariants(&e, &r);
		*trace = slurp(f);
		if (e.partition.subclusters > 1) {
			struct sym_subclusters sc;
			assert_int_equal(sym_subclusters_build(&e, 3000, e.gpus, &sc, err, sizeof(err)), 0);
			int gpus = 0;
			for (int j = 0; j < sc.n; j++) {
				gpus += r.sub_gpus[j];
				assert_true(r.sub_gpus[j] >= 1);
			}
			assert_int_equal(gpus, 8);
			/* each batch on a GPU of its model's part (trace: gpu,kind,model,...) */
			int rows = 0;
			for (char *line = strchr(*trace, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
				int g;
				char model[64];
				if (sscanf(line + 1, "%d,%*[^,],%63[^,],", &g, model) != 2)
					continue;
				size_t m = 0;
				while (m < e.nmodels && strcmp(e.models[m].name, model))
					m++;
				assert_true(m < e.nmodels);
				assert_int_equal(sc.gpu_part[g], sc.model_part[m]);
				assert_int_equal(r.model_part[m], sc.model_part[m]);
				rows++;
			}
			assert_true(rows > 100);
			sym_subclusters_finish(&sc);
		}
	}
	fclose(f);
	sym_experiment_finish(&e);
	return r;
}

static void test_subclusters(void **state)
{
	(void)state;
	static const char *const three = "{\"partition\": {\"subclusters\": 3, \"assign\": [0, 0, 1, 1, 2, 2]}}";
	char *t1, *t2, *t0, *t3;
	int rc;
	struct sym_run_result a = sub_run("symphony", three, &t1, &rc), b = sub_run("symphony", three, &t2, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(a.nsub, 3);
	assert_string_equal(t1, t2); /* a seed repeats the run */
	assert_int_equal(a.total.served, b.total.served);
	/* GPUs follow the need: a part that needs more GPU time never has fewer GPUs */
	for (int j = 0; j < 3; j++)
		for (int k = 0; k < 3; k++)
			if (a.sub_need[j] > a.sub_need[k])
				assert_true(a.sub_gpus[j] >= a.sub_gpus[k]);
	assert_true(a.sub_need[0] > 0 && a.sub_need[1] > 0 && a.sub_need[2] > 0);
	sym_run_result_finish(&a);
	sym_run_result_finish(&b);
	/* one sub-cluster is the cluster without a partition, batch for batch */
	struct sym_run_result c = sub_run("symphony", NULL, &t0, &rc), d = sub_run("symphony", "{\"partition\": 1}", &t3, &rc);
	assert_int_equal(c.nsub, 0);
	assert_int_equal(d.nsub, 0);
	assert_string_equal(t0, t3);
	assert_true(strcmp(t0, t1) != 0);
	sym_run_result_finish(&c);
	sym_run_result_finish(&d);
	free(t0), free(t1), free(t2), free(t3);
	/* sub-clusters are parts of one core (core/parts.h), as in schedd: every candidate policy runs
	 * them; scheduler policies, which place every model on every GPU themselves, are refused */
	const char *pols[] = { "eager", "timeout:timeout=5", "betalambda", "clockwork", "nexus", "fcfs", "edf", "urgency",
			       "shepherd" };
	for (size_t i = 0; i < sizeof(pols) / sizeof(pols[0]); i++) {
		char *t;
		struct sym_run_result r = sub_run(pols[i], three, &t, &rc);
		bool refused = i >= 3;
		assert_int_equal(rc != 0, refused);
		sym_run_result_finish(&r); /* either way (sim/engine.h) */
		free(t);
	}
	/* without an assignment the MILP splits them (and each part fits memory) */
	char *t;
	struct sym_run_result r = sub_run("symphony", "{\"partition\": {\"subclusters\": 2, \"time_limit_s\": 2}}", &t, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(r.nsub, 2);
	sym_run_result_finish(&r);
	free(t);
}

/* Epochs: eight models whose popular half swaps every 120 s, four sub-clusters
 * re-partitioned every 60 s from the measured rates. Models and GPUs move; a
 * moving model is served by its old part until its new one has loaded it, so
 * no request that arrived during a move is lost when the new part had room;
 * every request ends once; a seed repeats the run. With memory so tight that
 * a move has no room beside the new part's models, the move stalls: its
 * arrivals wait for the load, and are counted. */
static void epoch_run(const char *partition, const char *csv, const char *zoo, struct sym_run_result *r)
{
	struct sym_experiment e;
	sym_experiment_init(&e);
	flag(&e, "zoo", zoo);
	flag(&e, "models", "ResNet50,VGG16,MobileNet,DenseNet121,InceptionV3,EfficientNetB0,ResNet101,Xception");
	flag(&e, "rate-csv", csv);
	flag(&e, "gpus", "12");
	flag(&e, "warmup", "1");
	flag(&e, "partition", partition);
	resolve(&e);
	run(&e, 1, r);
	check_invariants(&e, r);
	sym_experiment_finish(&e);
}

/* Epochs at the noise of the counts (control's noise_sigmas): four models of equal rate, two
 * to a sub-cluster (balanced), 1 s epochs for 30 s. With the published rule (noise_sigmas 0)
 * the search moves models back and forth on the noise of each second's counts; by default it
 * keeps the assignment: a gain within two standard deviations of sqrt(R / T) is not taken. */
static int noise_moves(const char *sigmas)
{
	struct sym_experiment e;
	sym_experiment_init(&e);
	flag(&e, "profile", "2.5,2.5");
	flag(&e, "slo", "40");
	flag(&e, "num-models", "4");
	flag(&e, "gpus", "4");
	flag(&e, "duration", "30");
	flag(&e, "warmup", "1");
	char part[200];
	snprintf(part, sizeof(part), "{\"subclusters\": 2, \"assign\": [0, 0, 1, 1], \"epoch_s\": 1%s%s}",
		 sigmas ? ", \"noise_sigmas\": " : "", sigmas ? sigmas : "");
	flag(&e, "partition", part);
	resolve(&e);
	struct sym_run_result r;
	run(&e, 800, &r);
	check_invariants(&e, &r);
	int moved = 0;
	for (size_t i = 0; i < r.nepochs; i++)
		moved += r.epochs[i].models_moved;
	assert_true(r.nepochs >= 28);
	sym_run_result_finish(&r);
	sym_experiment_finish(&e);
	return moved;
}

static void test_epochs_noise(void **state)
{
	(void)state;
	int published = noise_moves("0"), dflt = noise_moves(NULL), one = noise_moves("1");
	print_message("model moves at equal rates: noise_sigmas 0: %d, 1: %d, 2 (default): %d\n", published, one, dflt);
	assert_true(published >= 10);
	assert_int_equal(dflt, 0);
	assert_true(one <= published);
}

static void as_run(const char *autoscale, const char *policy, struct sym_run_result *r)
{
	struct sym_experiment e;
	sym_experiment_init(&e);
	flag(&e, "zoo", "a100");
	flag(&e, "models", "ResNet50,VGG16,InceptionV3,MobileNet");
	flag(&e, "segments", "60:2000,60:8000,60:3000");
	flag(&e, "gpus", "32");
	flag(&e, "policy", policy);
	flag(&e, "autoscale", autoscale);
	resolve(&e);
	run(&e, 1, r);
	check_invariants(&e, r);
	sym_experiment_finish(&e);
}

/* The simulated autoscaler on a step up and down (2000, 8000, 3000 req/s for
 * a minute each, 32 GPUs at most): it releases at low load and adds at the
 * step, within its limits; GPUs added serve only after provisioning and
 * loading; the GPU-hours are the integral of the GPUs paid for; a seed
 * repeats the run; each decision sees the GPUs of the one before, changed by
 * its action. */
static void test_autoscale(void **state)
{
	(void)state;
	static const char *cfg = "{\"interval_s\": 10, \"provision_s\": 20, \"min_gpus\": 2, \"max_gpus\": 24}";
	struct sym_run_result a, b;
	as_run(cfg, "symphony", &a);
	as_run(cfg, "symphony", &b);
	assert_true(a.as.on);
	assert_int_equal(a.as.ndecisions, 17); /* every 10 s of 180, the last before the end */
	assert_true(a.as.adds >= 1 && a.as.releases >= 1);
	assert_int_equal(a.as.peak_gpus, 24); /* start_gpus: max_gpus */
	double gpu_s = 0;
	int prov = 24;
	for (size_t i = 0; i < a.as.ndecisions; i++) {
		const struct sym_as_decision *x = &a.as.decisions[i];
		assert_true(x->in_service >= 2 && x->provisioned <= 24 && x->in_service <= x->provisioned);
		assert_int_equal(x->provisioned, prov); /* the last action's */
		assert_true(x->busy_fraction >= 0 && x->busy_fraction <= 1 + 1e-9);
		if (i == 0)
			assert_true(x->delta < 0); /* 24 GPUs for 2000 req/s: mostly idle */
		gpu_s += 10.0 * prov;
		prov += x->delta;
		/* an action waits for the cooldown (10 s: the next decision may act again) */
		assert_true(x->bad_rate >= 0 && x->bad_rate <= 1);
		assert_true(b.as.decisions[i].delta == x->delta && b.as.decisions[i].t_s == x->t_s);
	}
	/* GPUs paid for: the decisions' counts over their 10 s, the last 10 s at the final count (a
	 * released GPU stops counting when its batches have run out, a few ms after the decision) */
	gpu_s += 10.0 * prov;
	assert_true(fabs(a.as.gpu_hours * 3600 - gpu_s) < 0.01 * gpu_s);
	assert_true(fabs(a.as.mean_gpus - gpu_s / 180) < 0.01 * gpu_s / 180);
	assert_true(a.as.gpu_hours < 24.0 * 180 / 3600 * 0.6); /* well below fixed provisioning */
	/* the timeline holds the same GPU-seconds, interval by interval; in service never above paid */
	double paid = 0, serving = 0;
	for (size_t i = 0; i < a.nintervals; i++) {
		paid += a.timeline[i].paid_gpu_s;
		serving += a.timeline[i].serving_gpu_s;
		assert_true(a.timeline[i].serving_gpu_s <= a.timeline[i].paid_gpu_s + 1e-6);
	}
	assert_true(fabs(paid - a.as.gpu_hours * 3600) < 1e-6 * paid);
	assert_true(serving > 0.5 * paid);
	assert_int_equal(a.total.served, b.total.served);
	/* at the step up GPUs are added, and the first decision after it sees the bad rate */
	bool added_at_step = false;
	for (size_t i = 0; i < a.as.ndecisions; i++)
		added_at_step |= a.as.decisions[i].t_s > 60 && a.as.decisions[i].t_s <= 90 && a.as.decisions[i].delta > 0;
	assert_true(added_at_step);
	sym_run_result_finish(&b);
	/* releasing half of N f (an ablation: headroom) releases fewer at the first decision */
	as_run("{\"interval_s\": 10, \"provision_s\": 20, \"min_gpus\": 2, \"max_gpus\": 24, \"release_fraction\": 0.5}",
	       "symphony", &b);
	assert_true(b.as.decisions[0].delta < 0 && b.as.decisions[0].delta > a.as.decisions[0].delta);
	sym_run_result_finish(&a);
	sym_run_result_finish(&b);
	/* the target-utilisation rule (HPA) runs too, and so does eager */
	as_run("{\"interval_s\": 10, \"policy\": \"target\", \"target\": 0.6}", "symphony", &a);
	assert_true(a.as.releases >= 1);
	sym_run_result_finish(&a);
	as_run("{\"interval_s\": 10}", "eager", &a);
	assert_true(a.as.ndecisions == 17);
	sym_run_result_finish(&a);
	/* phase_s puts the decisions 4 s later in each interval (17 of them still: 14, 24, ..., 174) */
	as_run("{\"interval_s\": 10, \"phase_s\": 4}", "symphony", &a);
	assert_int_equal((int)a.as.ndecisions, 17);
	assert_true(a.as.decisions[0].t_s == 14 && a.as.decisions[16].t_s == 174);
	sym_run_result_finish(&a);
	/* bad configurations, each named */
	const struct {
		const char *cfg, *policy, *want;
	} bad[] = {
		{ "{\"max_gpus\": 40}", "symphony", "max_gpus: 40, but the cluster has 32" },
		{ "{\"min_gpus\": 8, \"max_gpus\": 4}", "symphony", "min_gpus 8 is above max_gpus 4" },
		{ "{\"start_gpus\": 1, \"min_gpus\": 2}", "symphony", "start_gpus: 1 is outside" },
		{ "true", "nexus", "policy 'nexus' cannot run with GPUs coming and going" },
		{ "{\"policy\": \"hpa\"}", "symphony", "expected papers or target" },
		{ "{\"interval\": 5}", "symphony", "unknown key" },
		{ "{\"interval_s\": 0}", "symphony", "interval_s" },
		{ "{\"interval_s\": 10, \"phase_s\": 10}", "symphony", "phase_s: 10 s, but it must be below interval_s" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sym_experiment e;
		sym_experiment_init(&e);
		flag(&e, "gpus", "32");
		flag(&e, "policy", bad[i].policy);
		char err[512] = "";
		int rc = sym_experiment_apply_flag(&e, "autoscale", bad[i].cfg, err, sizeof(err));
		if (!rc)
			rc = sym_experiment_resolve(&e, err, sizeof(err));
		if (rc != -EINVAL || !strstr(err, bad[i].want))
			fail_msg("autoscale %s: got %d '%s', want '%s'", bad[i].cfg, rc, err, bad[i].want);
		sym_experiment_finish(&e);
	}
}

/* The autoscaler with sub-clusters: each part gains and gives
 * back GPUs on its own signals, by the decision the runtime makes too
 * (control/scale.h); the GPUs in service at the start are split between the
 * parts, the rest join the part that asks; every request ends once; each
 * decision's parts add up to it and keep a GPU each; a seed repeats it. */
static void as_parts_run_on(const char *cluster, const char *autoscale, const char *partition,
			    struct sym_run_result *r)
{
	struct sym_experiment e;
	sym_experiment_init(&e);
	flag(&e, "zoo", "a100");
	flag(&e, "models", "ResNet50,VGG16,InceptionV3,MobileNet,DenseNet121,BERT");
	flag(&e, "segments", "60:2000,60:8000,60:3000");
	flag(&e, cluster ? "cluster" : "gpus", cluster ? cluster : "32");
	flag(&e, "partition", partition);
	flag(&e, "autoscale", autoscale);
	resolve(&e);
	run(&e, 1, r);
	check_invariants(&e, r);
	sym_experiment_finish(&e);
}

static void as_parts_run(const char *autoscale, const char *partition, struct sym_run_result *r)
{
	as_parts_run_on(NULL, autoscale, partition, r);
}

/* Two runs of one seed, two parts: each decision's parts keep a GPU each, add up to it and
 * repeat, as does the count served. */
static void parts_add_up(const struct sym_run_result *a, const struct sym_run_result *b)
{
	for (size_t i = 0; i < a->as.ndecisions; i++) {
		int sum = 0;
		for (int j = 0; j < 2; j++) {
			assert_true(a->as.part_in_service[i * 2 + (size_t)j] >= 1);
			sum += a->as.part_delta[i * 2 + (size_t)j];
			assert_int_equal(a->as.part_delta[i * 2 + (size_t)j], b->as.part_delta[i * 2 + (size_t)j]);
		}
		assert_int_equal(sum, a->as.decisions[i].delta);
	}
	assert_int_equal(a->total.served, b->total.served);
}

static void test_autoscale_subclusters(void **state)
{
	(void)state;
	static const char *cfg = "{\"interval_s\": 10, \"provision_s\": 20, \"min_gpus\": 3, \"max_gpus\": 28, "
				 "\"start_gpus\": 12}";
	static const char *part = "{\"subclusters\": 2, \"epoch_s\": 0}";
	struct sym_run_result a, b;
	as_parts_run(cfg, part, &a);
	as_parts_run(cfg, part, &b);
	assert_int_equal(a.as.nparts, 2);
	assert_int_equal(a.as.ndecisions, 17);
	int grew[2] = { 0, 0 }, shrank[2] = { 0, 0 };
	for (size_t i = 0; i < a.as.ndecisions; i++) {
		const struct sym_as_decision *x = &a.as.decisions[i];
		int sum = 0, serving = 0;
		for (int j = 0; j < 2; j++) {
			int d = a.as.part_delta[i * 2 + (size_t)j], n = a.as.part_in_service[i * 2 + (size_t)j];
			assert_true(n >= 1);
			assert_true(n + d >= 1); /* a part keeps one */
			grew[j] += d > 0;
			shrank[j] += d < 0;
			sum += d;
			serving += n;
			assert_int_equal(d, b.as.part_delta[i * 2 + (size_t)j]);
		}
		assert_int_equal(sum, x->delta);
		assert_int_equal(serving, x->in_service);
		assert_true(x->provisioned <= 28 && x->in_service >= 3);
	}
	/* both parts release at low load and the busier one grows at the step */
	assert_true(shrank[0] + shrank[1] >= 1);
	assert_true(grew[0] + grew[1] >= 1);
	assert_true(a.as.peak_gpus > 12); /* GPUs beyond those at the start joined a part */
	assert_int_equal(a.total.served, b.total.served);
	/* the parts' GPUs at the end are those in service then */
	assert_int_equal(a.nsub, 2);
	const struct sym_as_decision *last = &a.as.decisions[a.as.ndecisions - 1];
	assert_true(a.sub_gpus[0] + a.sub_gpus[1] >= last->in_service - 2 &&
		    a.sub_gpus[0] + a.sub_gpus[1] <= last->provisioned + last->delta);
	sym_run_result_finish(&a);
	sym_run_result_finish(&b);
	/* with epochs every 30 s: GPUs in service move between the parts as well (the autoscaler's
	 * GPUs keep their part), every request ends once, the parts still add up, a seed repeats it */
	static const char *epart = "{\"subclusters\": 2, \"epoch_s\": 30}";
	as_parts_run(cfg, epart, &a);
	as_parts_run(cfg, epart, &b);
	assert_int_equal(a.nepochs, 5);
	int gmoved = 0;
	for (size_t i = 0; i < a.nepochs; i++)
		gmoved += a.epochs[i].gpus_moved;
	assert_true(gmoved >= 1);
	parts_add_up(&a, &b);
	sym_run_result_finish(&a);
	sym_run_result_finish(&b);
	/* a heterogeneous cluster (16 A100s, ids 0-15, and 16 GPUs three times slower): the same
	 * decisions, GPUs joining by sym_scale_pick's ids whatever their kind; the 12 at the start
	 * are A100s, and at the peak more than 16 are paid for, so slow GPUs joined too; the parts'
	 * GPUs by kind add up to theirs; a seed repeats it */
	static const char *het = "a100:16,slow:16:x3";
	as_parts_run_on(het, cfg, epart, &a);
	as_parts_run_on(het, cfg, epart, &b);
	assert_int_equal(a.as.nparts, 2);
	assert_true(a.as.peak_gpus > 16);
	assert_true(a.as.adds >= 1 && a.as.releases >= 1);
	assert_non_null(a.sub_gpus_kind);
	for (int j = 0; j < 2; j++) {
		assert_int_equal(a.sub_gpus_kind[j * 2] + a.sub_gpus_kind[j * 2 + 1], a.sub_gpus[j]);
		assert_true(a.sub_gpus[j] >= 1);
	}
	parts_add_up(&a, &b);
	sym_run_result_finish(&a);
	sym_run_result_finish(&b);
	/* refused: fewer GPUs at the start than parts */
	const struct {
		const char *as, *part, *want;
	} bad[] = {
		{ "{\"start_gpus\": 2}", "{\"subclusters\": 3, \"epoch_s\": 0}",
		  "start_gpus: 2, but 3 sub-clusters need at least one GPU each" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sym_experiment e;
		sym_experiment_init(&e);
		flag(&e, "gpus", "32");
		flag(&e, "duration", "180");
		flag(&e, "partition", bad[i].part);
		char err[512] = "";
		int rc = sym_experiment_apply_flag(&e, "autoscale", bad[i].as, err, sizeof(err));
		if (!rc)
			rc = sym_experiment_resolve(&e, err, sizeof(err));
		if (rc != -EINVAL || !strstr(err, bad[i].want))
			fail_msg("autoscale %s, partition %s: got %d '%s', want '%s'", bad[i].as, bad[i].part, rc, err,
				 bad[i].want);
		sym_experiment_finish(&e);
	}
}

static void test_epochs(void **state)
{
	(void)state;
	char csv[] = "/tmp/symphony-epochs-XXXXXX";
	int fd = mkstemp(csv);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fprintf(f, "second,ResNet50,VGG16,MobileNet,DenseNet121,InceptionV3,EfficientNetB0,ResNet101,Xception\n");
	for (int t = 0; t < 600; t++) {
		fprintf(f, "%d", t);
		for (int i = 0; i < 8; i++)
			fprintf(f, ",%d", (i < 4) == ((t / 120) % 2 == 0) ? 300 : 40);
		fprintf(f, "\n");
	}
	fclose(f);
	struct sym_run_result a, b;
	epoch_run("{\"subclusters\": 4, \"epoch_s\": 60}", csv, "a100", &a);
	epoch_run("{\"subclusters\": 4, \"epoch_s\": 60}", csv, "a100", &b);
	assert_int_equal(a.nepochs, 9);
	int moved = 0, gmoved = 0;
	uint64_t mreq = 0, mbad = 0;
	for (size_t i = 0; i < a.nepochs; i++) {
		assert_near(a.epochs[i].t_s, 60.0 * (double)(i + 1), 1e-9, "epoch time");
		moved += a.epochs[i].models_moved;
		gmoved += a.epochs[i].gpus_moved;
		mreq += a.epochs[i].moved_requests;
		mbad += a.epochs[i].moved_bad;
		assert_int_equal(a.epochs[i].stalled, 0); /* 40 GB: always room */
		assert_int_equal(a.epochs[i].held, 0);
		assert_int_equal(a.epochs[i].models_moved, b.epochs[i].models_moved); /* a seed repeats it */
		assert_int_equal(a.epochs[i].gpus_moved, b.epochs[i].gpus_moved);
	}
	assert_true(moved >= 4 && gmoved >= 1);
	assert_true(mreq > 0);
	/* no request lost to a move that had room: a moved request is no likelier to end bad than
	 * any other (at most twice the run's bad rate of them, and one for luck: 1 of 79 at this
	 * commit, the run 0.34% bad) */
	double run_bad = (double)(a.total.late + a.total.dropped) / (double)a.total.offered;
	assert_true((double)mbad <= 1 + 2 * run_bad * (double)mreq);
	assert_int_equal(a.total.served, b.total.served);
	assert_int_equal(a.total.dropped, b.total.dropped);
	sym_run_result_finish(&a);
	sym_run_result_finish(&b);
	/* phase_s: the epochs at phase_s + k epoch_s (the first phase_s longer: a running cluster's
	 * timing replayed), rates still per second of each epoch's own length (test_config: below
	 * epoch_s only) */
	epoch_run("{\"subclusters\": 4, \"epoch_s\": 60, \"phase_s\": 30}", csv, "a100", &a);
	assert_int_equal(a.nepochs, 9);
	assert_true(a.epochs[0].t_s == 90 && a.epochs[1].t_s == 150 && a.epochs[8].t_s == 570);
	sym_run_result_finish(&a);
	unlink(csv);
	/* Four copies of VGG16 (822 MB static, 6,200 dynamic) in two parts that hold two each
	 * (S_max 7,900 MB), the two busy copies together: balancing swaps a busy and an idle
	 * one, and neither part has room until the other's model has left. The swap stalls:
	 * the arrivals of the stalled model wait for its load (counted), the others move
	 * smoothly after it. */
	snprintf(csv, sizeof(csv), "/tmp/symphony-epochs-XXXXXX");
	int fd2 = mkstemp(csv);
	assert_true(fd2 >= 0);
	f = fdopen(fd2, "w");
	fprintf(f, "second,VGG16,VGG16#2,VGG16#3,VGG16#4\n");
	for (int t = 0; t < 120; t++)
		fprintf(f, "%d,300,300,20,20\n", t);
	fclose(f);
	struct sym_experiment e;
	sym_experiment_init(&e);
	flag(&e, "zoo", "a100");
	flag(&e, "models", "VGG16");
	flag(&e, "num-models", "4");
	flag(&e, "rate-csv", csv);
	flag(&e, "gpus", "4");
	flag(&e, "warmup", "1");
	flag(&e, "partition", "{\"subclusters\": 2, \"epoch_s\": 60, \"s_max\": 7900, \"assign\": [0, 0, 1, 1]}");
	resolve(&e);
	run(&e, 1, &a);
	check_invariants(&e, &a);
	sym_experiment_finish(&e);
	unlink(csv);
	assert_int_equal(a.nepochs, 1);
	assert_int_equal(a.epochs[0].models_moved, 2);
	assert_int_equal(a.epochs[0].stalled, 1);
	assert_true(a.epochs[0].held >= 1);
	assert_true(a.epochs[0].moved_bad <= a.epochs[0].held); /* only requests that waited can be lost */
	assert_true(a.epochs[0].rate_imbalance < 0.05); /* balanced after the swap (measured rates) */
	sym_run_result_finish(&a);
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

/* An arrival trace is replayed request by request: every request of it once
 * at scale 1 (the same whatever the seed), twice as many at --rate-scale 2,
 * and its size column weighs on the batches. */
static void test_trace_replayed(void **state)
{
	(void)state;
	char text[8192] = "time_s,model,size\n", path[64], path3[64];
	size_t len = strlen(text);
	for (int i = 0; i < 200; i++) /* 200 requests over 4 s, two models, irregular gaps */
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%.6f,%s,1\n", 0.019 * i + 0.0007 * (i % 7),
					i % 3 ? "A" : "B");
	write_temp_bytes("trace", text, len, path, sizeof(path));
	for (char *p = text; (p = strstr(p, ",1\n")); p += 3)
		p[1] = '3'; /* the same requests, three times the size */
	write_temp_bytes("trace3", text, len, path3, sizeof(path3));
	double busy[2];
	for (int k = 0; k < 2; k++) {
		struct sym_run_result r[2];
		for (int seed = 0; seed < 2; seed++) {
			struct sym_experiment e;
			sym_experiment_init(&e);
			char err[512];
			cJSON *cfg = cJSON_Parse("{\"models\": [{\"name\": \"A\", \"alpha_ms\": 2, \"beta_ms\": 5, "
						 "\"slo_ms\": 100}, {\"name\": \"B\", \"alpha_ms\": 2, \"beta_ms\": 5, "
						 "\"slo_ms\": 100}], \"gpus\": 2, \"warmup_s\": 0}");
			assert_non_null(cfg);
			if (sym_experiment_apply_json(&e, cfg, "trace-test", err, sizeof(err)))
				fail_msg("%s", err);
			cJSON_Delete(cfg);
			flag(&e, "arrival-trace", k ? path3 : path);
			flag(&e, "seed", seed ? "7" : "1");
			resolve(&e);
			assert_true(fabs(sym_experiment_duration(&e) - 4) < 1e-9);
			run(&e, 1, &r[seed]);
			check_invariants(&e, &r[seed]);
			assert_int_equal(r[seed].simulated_requests, 200);
			assert_int_equal(r[seed].total.offered, 200);
			assert_int_equal(r[seed].models[1].offered, 67); /* i % 3 == 0 */
			if (!k && !seed) { /* --rate-scale 2: each request twice, in the same 4 s */
				struct sym_run_result r2;
				run(&e, 2, &r2);
				assert_int_equal(r2.simulated_requests, 400);
				sym_run_result_finish(&r2);
			}
			sym_experiment_finish(&e);
		}
		/* no randomness in the arrivals: the seed changes nothing */
		assert_int_equal(r[0].total.served, r[1].total.served);
		assert_true(r[0].gpu_busy_fraction == r[1].gpu_busy_fraction);
		busy[k] = r[0].gpu_busy_fraction;
		sym_run_result_finish(&r[0]);
		sym_run_result_finish(&r[1]);
	}
	assert_true(busy[1] > 1.5 * busy[0]); /* requests of size 3 take alpha x 3 each */
	unlink(path);
	unlink(path3);
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


/* ---- the criterion -------------------------------------------------------- */

/* A result of three models with the given measured (offered, bad) counts. */
static void fake_result(struct sym_run_result *r, struct sym_model_result *ms, const uint64_t c[3][2])
{
	memset(r, 0, sizeof(*r));
	memset(ms, 0, 3 * sizeof(*ms));
	r->nmodels = 3;
	r->models = ms;
	for (int m = 0; m < 3; m++) {
		ms[m].offered = c[m][0];
		ms[m].late = c[m][1] / 2;
		ms[m].dropped = c[m][1] - c[m][1] / 2;
		ms[m].served = c[m][0] - c[m][1];
		r->total.offered += ms[m].offered;
		r->total.late += ms[m].late;
		r->total.dropped += ms[m].dropped;
		r->total.served += ms[m].served;
	}
}

static void judge3(const struct sym_experiment *e, const uint64_t c[3][2], struct sym_verdict *v)
{
	struct sym_run_result r;
	struct sym_model_result ms[3];
	fake_result(&r, ms, c);
	sym_judge(e, &r, v);
}

static void test_criterion_rule(void **state)
{
	(void)state;
	/* the per-model allowance: max(1% of offered, 1), all bad fails */
	assert_true(sym_model_within(0, 0, 0.01));
	assert_false(sym_model_within(1, 1, 0.01));  /* a model's only request, bad: starved */
	assert_false(sym_model_within(3, 3, 0.01));  /* all 3 dropped: starved, however few */
	assert_true(sym_model_within(3, 0, 0.01));
	assert_true(sym_model_within(50, 1, 0.01));  /* one unlucky request of 50 */
	assert_false(sym_model_within(50, 2, 0.01));
	assert_true(sym_model_within(2, 1, 0.01));
	assert_true(sym_model_within(100, 1, 0.01));
	assert_false(sym_model_within(100, 2, 0.01));
	assert_true(sym_model_within(300, 3, 0.01)); /* exactly 1% */
	assert_false(sym_model_within(300, 4, 0.01));
	assert_true(sym_model_within(1000000, 10000, 0.01));
	assert_false(sym_model_within(1000000, 10001, 0.01));
	assert_true(sym_model_within(100, 5, 0.05));
	assert_false(sym_model_within(100, 6, 0.05));
	assert_int_equal(sym_min_requests(0.01), 100);
	assert_int_equal(sym_min_requests(0.03), 34);
	assert_int_equal(sym_min_requests(0.5), 2);

	struct sym_experiment e;
	sym_experiment_init(&e);
	flag(&e, "models", "ResNet50,VGG16,BERT");
	resolve(&e);
	struct sym_verdict v;
	/* a starved model with 3 requests fails the rate; the aggregate hides it */
	const uint64_t starved[3][2] = { { 10000, 50 }, { 3, 3 }, { 10000, 0 } };
	judge3(&e, starved, &v);
	assert_false(v.ok);
	assert_int_equal(v.failing, 1);
	assert_int_equal(v.worst, 1);
	assert_true(v.worst_bad_rate == 1);
	assert_int_equal(v.few, 1);
	flag(&e, "criterion", "aggregate");
	judge3(&e, starved, &v);
	assert_true(v.ok); /* 53 of 20003 */
	assert_int_equal(v.failing, 1);
	assert_int_equal(v.worst, 1);
	flag(&e, "criterion", "per-model");
	/* one bad request of 50 passes; two do not */
	const uint64_t one_of_50[3][2] = { { 10000, 50 }, { 50, 1 }, { 10000, 0 } };
	judge3(&e, one_of_50, &v);
	assert_true(v.ok);
	assert_int_equal(v.failing, 0);
	assert_int_equal(v.worst, 1); /* 2% is the highest bad rate */
	assert_true(fabs(v.worst_bad_rate - 0.02) < 1e-12);
	assert_int_equal(v.few, 1);
	const uint64_t two_of_50[3][2] = { { 10000, 50 }, { 50, 2 }, { 10000, 0 } };
	judge3(&e, two_of_50, &v);
	assert_false(v.ok);
	assert_int_equal(v.failing, 1);
	/* a failing model is the worst even beside a passing one with a higher bad rate */
	const uint64_t failing_first[3][2] = { { 10000, 150 }, { 50, 1 }, { 10000, 0 } };
	judge3(&e, failing_first, &v);
	assert_false(v.ok);
	assert_int_equal(v.worst, 0);
	assert_true(fabs(v.worst_bad_rate - 0.015) < 1e-12);
	/* the aggregate rule passes 1% overall even when a model is at 2% */
	const uint64_t one_hot[3][2] = { { 10000, 200 }, { 10000, 50 }, { 10000, 50 } };
	judge3(&e, one_hot, &v);
	assert_false(v.ok);
	assert_int_equal(v.worst, 0);
	flag(&e, "criterion", "aggregate");
	judge3(&e, one_hot, &v);
	assert_true(v.ok);
	flag(&e, "criterion", "per-model");
	/* a model with no measured request passes and is counted as few; none at all fails the run */
	const uint64_t silent[3][2] = { { 10000, 10 }, { 0, 0 }, { 10000, 20 } };
	judge3(&e, silent, &v);
	assert_true(v.ok);
	assert_int_equal(v.few, 1);
	assert_int_equal(v.worst, 2);
	const uint64_t none[3][2] = { { 0, 0 }, { 0, 0 }, { 0, 0 } };
	judge3(&e, none, &v);
	assert_false(v.ok);
	assert_int_equal(v.worst, -1);
	assert_int_equal(v.few, 3);
	/* a run stopped early fails whatever its counts */
	struct sym_run_result r;
	struct sym_model_result ms[3];
	const uint64_t clean[3][2] = { { 1000, 0 }, { 1000, 0 }, { 1000, 0 } };
	fake_result(&r, ms, clean);
	sym_judge(&e, &r, &v);
	assert_true(v.ok);
	r.stopped_early = true;
	sym_judge(&e, &r, &v);
	assert_false(v.ok);
	sym_experiment_finish(&e);
}

static void test_mean_ci95(void **state)
{
	(void)state;
	double mean, lo, hi;
	const double x[] = { 1, 2, 3, 4, 5 };
	assert_true(sym_mean_ci95(x, 5, &mean, &lo, &hi));
	/* t(0.975, 4) = 2.7764451, s = sqrt(2.5): half-width 2.7764451 * sqrt(2.5) / sqrt(5) */
	assert_true(fabs(mean - 3) < 1e-12);
	assert_true(fabs((hi - lo) / 2 - 2.7764451052 * sqrt(0.5)) < 1e-8);
	assert_true(fabs((hi + lo) / 2 - 3) < 1e-12);
	const double y[] = { 10, 12 };
	assert_true(sym_mean_ci95(y, 2, &mean, &lo, &hi)); /* t(0.975, 1) = 12.7062047 */
	assert_true(fabs(hi - (11 + 12.7062047362)) < 1e-8 && fabs(lo - (11 - 12.7062047362)) < 1e-8);
	assert_false(sym_mean_ci95(y, 1, &mean, &lo, &hi)); /* one seed: no interval */
	assert_true(mean == 10 && lo == 10 && hi == 10);
	const double z[] = { 7, 7, 7 };
	assert_true(sym_mean_ci95(z, 3, &mean, &lo, &hi));
	assert_true(lo == 7 && hi == 7);
}

/* Four A100 models on 8 GPUs: the aggregate goodput leaves DenseNet121 above
 * 1% bad; the per-model goodput is lower and every model passes. */
static void four_models(struct sym_experiment *e, const char *criterion)
{
	sym_experiment_init(e);
	/* the paper's rule: its models differ (look-ahead brings them together: see below) */
	flag(e, "policy", "symphony:lookahead=off");
	flag(e, "models", "ResNet50,DenseNet121,EfficientNetB0,VGG16");
	flag(e, "gpus", "8");
	flag(e, "duration", "10");
	flag(e, "warmup", "1");
	flag(e, "criterion", criterion);
	resolve(e);
}

static void test_stop_limits(void **state)
{
	(void)state;
	struct sym_experiment e;
	four_models(&e, "per-model");
	uint64_t total = 0, per[4] = { 0 };
	/* 4000 r/s over the 9 s window: 36000 expected, 9000 per model */
	sym_stop_limits(&e, 4000, &total, per);
	assert_int_equal(total, 540 + 20 + 4);
	for (int m = 0; m < 4; m++)
		assert_int_equal(per[m], 135 + 20);
	/* a model expecting fewer than 100 requests: 1.5 times an allowance of one, plus 20 */
	sym_stop_limits(&e, 20, &total, per);
	assert_int_equal(per[0], 21);
	flag(&e, "criterion", "aggregate");
	resolve(&e);
	per[0] = 7;
	sym_stop_limits(&e, 4000, &total, per);
	assert_int_equal(total, 540 + 20);
	assert_int_equal(per[0], 7); /* untouched */
	/* the engine stops once one model reaches its limit, whatever the others do */
	uint64_t lim[4] = { 0, 40, 0, 0 };
	struct sym_run_opts o = { .rate = 40000, .stop_model_bad = lim };
	struct sym_run_result r;
	char err[512];
	assert_int_equal(sym_sim_run(&e, &o, &r, err, sizeof(err)), 0);
	assert_true(r.stopped_early);
	uint64_t bad1 = r.models[1].late + r.models[1].dropped;
	assert_true(bad1 >= 40 && bad1 < 40 + 64);
	assert_true(r.total.offered < 40000 * 9 / 2);
	sym_run_result_finish(&r);
	/* without limits the same run goes to the end */
	o.stop_model_bad = NULL;
	assert_int_equal(sym_sim_run(&e, &o, &r, err, sizeof(err)), 0);
	assert_false(r.stopped_early);
	sym_run_result_finish(&r);
	sym_experiment_finish(&e);
}

static void test_goodput_per_model(void **state)
{
	(void)state;
	struct sym_experiment pm, ag;
	four_models(&pm, "per-model");
	four_models(&ag, "aggregate");
	struct sym_goodput gp, ga;
	char err[512];
	assert_int_equal(sym_goodput_search(&pm, false, &gp, err, sizeof(err)), 0);
	assert_int_equal(sym_goodput_search(&ag, false, &ga, err, sizeof(err)), 0);
	assert_true(gp.have_run && ga.have_run);
	assert_true(gp.goodput_rps > 0.8 * ga.goodput_rps && gp.goodput_rps < ga.goodput_rps);
	struct sym_verdict v;
	/* at the per-model goodput every model passes */
	sym_judge(&pm, &gp.run, &v);
	assert_true(v.ok);
	assert_int_equal(v.failing, 0);
	for (size_t m = 0; m < 4; m++)
		assert_true(sym_bad_rate(&gp.run.models[m]) <= 0.01);
	/* at the aggregate one the total passes but a model does not */
	assert_true(sym_bad_rate(&ga.run.total) <= 0.01);
	sym_judge(&pm, &ga.run, &v);
	assert_false(v.ok);
	assert_true(v.failing >= 1);
	assert_true(v.worst_bad_rate > 0.01);
	sym_goodput_finish(&gp);
	sym_goodput_finish(&ga);
	/* look-ahead: per model never above the aggregate */
	flag(&pm, "policy", "symphony");
	flag(&ag, "policy", "symphony");
	resolve(&pm);
	resolve(&ag);
	assert_int_equal(sym_goodput_search(&pm, false, &gp, err, sizeof(err)), 0);
	assert_int_equal(sym_goodput_search(&ag, false, &ga, err, sizeof(err)), 0);
	print_message("look-ahead: per-model goodput %.0f, aggregate %.0f\n", gp.goodput_rps, ga.goodput_rps);
	assert_true(gp.goodput_rps <= ga.goodput_rps);
	/* every failing per-model step failed a model, every ok step passed them all */
	for (size_t i = 0; i < gp.nsteps; i++) {
		if (gp.steps[i].ok)
			assert_true(gp.steps[i].rate <= gp.goodput_rps + 1e-6 && gp.steps[i].worst_bad_rate <= 0.01);
		else
			assert_true(gp.steps[i].rate > gp.goodput_rps);
	}
	sym_goodput_finish(&gp);
	sym_goodput_finish(&ga);
	sym_experiment_finish(&pm);
	sym_experiment_finish(&ag);
}

static void test_replications(void **state)
{
	(void)state;
	struct sym_experiment e;
	sym_experiment_init(&e);
	flag(&e, "profile", "1.053,5.072");
	flag(&e, "slo", "25");
	flag(&e, "gpus", "8");
	flag(&e, "duration", "5");
	flag(&e, "warmup", "1");
	flag(&e, "seed", "4");
	flag(&e, "seeds", "3");
	resolve(&e);
	char err[512];
	struct sym_goodput_reps par, ser;
	assert_int_equal(sym_goodput_replicate(&e, 3, false, &par, err, sizeof(err)), 0);
	assert_int_equal(sym_goodput_replicate(&e, 1, false, &ser, err, sizeof(err)), 0);
	assert_int_equal(par.n, 3);
	assert_int_equal(par.seed, 4);
	/* search i is the search of seed 4 + i alone, on any number of threads */
	for (size_t i = 0; i < 3; i++) {
		struct sym_experiment one = e;
		one.seed = 4 + i;
		struct sym_goodput g;
		assert_int_equal(sym_goodput_search(&one, false, &g, err, sizeof(err)), 0);
		assert_true(g.goodput_rps == par.by_seed[i].goodput_rps);
		assert_true(g.goodput_rps == ser.by_seed[i].goodput_rps);
		assert_int_equal(g.nsteps, par.by_seed[i].nsteps);
		assert_true(par.by_seed[i].have_run == (i == 0)); /* only the first seed's run is kept */
		sym_goodput_finish(&g);
	}
	double x[3] = { par.by_seed[0].goodput_rps, par.by_seed[1].goodput_rps, par.by_seed[2].goodput_rps };
	assert_true(fabs(par.mean - (x[0] + x[1] + x[2]) / 3) < 1e-9);
	assert_true(par.have_ci && par.ci_lo <= par.mean && par.mean <= par.ci_hi);
	/* the interval spans at least the searches' resolution, even when every seed stops on the same
	 * probe: the bracket above each goodput is one tolerance step or more */
	for (int i = 0; i < 3; i++)
		assert_true(par.by_seed[i].fail_rps > par.by_seed[i].goodput_rps);
	assert_true(par.ci_hi - par.ci_lo >= e.tolerance * par.mean * 0.5);
	double pass[3] = { 100, 100, 100 }, fail[3] = { 101, 101, 101 }, lo, hi;
	assert_true(sym_goodput_interval(pass, fail, 3, &lo, &hi));
	assert_true(lo == 100 && hi == 101); /* the same probe for every seed: the bracket, not 0 */
	assert_false(sym_goodput_interval(pass, fail, 1, &lo, &hi));
	assert_true(par.run_scale == par.by_seed[0].scale);
	assert_false(par.by_seed[0].run.stopped_early);
	assert_true(par.by_seed[0].run.rate == par.run_scale);
	sym_goodput_reps_finish(&par);
	sym_goodput_reps_finish(&ser);
	sym_goodput_reps_finish(NULL);
	/* one replication: no interval */
	flag(&e, "seeds", "1");
	assert_int_equal(sym_goodput_replicate(&e, 2, false, &par, err, sizeof(err)), 0);
	assert_false(par.have_ci);
	assert_true(par.mean == par.by_seed[0].goodput_rps);
	sym_goodput_reps_finish(&par);
	/* goodput 0 (the only kind is too slow for the SLO): the run is at the lowest rate tried */
	flag(&e, "cluster", "gpu:2:x20");
	resolve(&e);
	assert_int_equal(sym_goodput_replicate(&e, 1, false, &par, err, sizeof(err)), 0);
	assert_true(par.mean == 0);
	assert_true(par.by_seed[0].have_run);
	assert_true(par.run_scale > 0 && par.by_seed[0].run.rate == par.run_scale);
	sym_goodput_reps_finish(&par);
	sym_experiment_finish(&e);
}

/* ---- complex queries (Nexus, nexus.md Sections 2 and 6.2) ---- */

/* A fresh experiment with the JSON object text applied. */
static void exp_json(struct sym_experiment *e, const char *text)
{
	char err[512];
	cJSON *j = cJSON_Parse(text);
	assert_non_null(j);
	sym_experiment_init(e);
	if (sym_experiment_apply_json(e, j, "test", err, sizeof(err)))
		fail_msg("%s", err);
	cJSON_Delete(j);
}

/* A two-model experiment, A (l = 1 b + 5 ms) and B (l = 2 b + 3 ms), with
 * the queries given (JSON text) and `extra` keys. */
static void qexp(struct sym_experiment *e, const char *queries, const char *extra)
{
	char buf[2048];
	snprintf(buf, sizeof(buf),
		 "{\"models\": [{\"name\": \"A\", \"alpha_ms\": 1, \"beta_ms\": 5, \"slo_ms\": 100},"
		 " {\"name\": \"B\", \"alpha_ms\": 2, \"beta_ms\": 3, \"slo_ms\": 100},"
		 " {\"name\": \"C\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 100}],"
		 " \"queries\": %s%s%s}", queries, extra[0] ? ", " : "", extra);
	exp_json(e, buf);
}

/* Applying json (an object; or, with key, the value of that key) to a fresh
 * experiment fails with -EINVAL and a message containing want. */
static void apply_fails(const char *key, const char *json, const char *want)
{
	struct sym_experiment e;
	sym_experiment_init(&e);
	char err[512] = "";
	cJSON *v = cJSON_Parse(json), *o = v;
	assert_non_null(v);
	if (key) {
		o = cJSON_CreateObject();
		cJSON_AddItemToObject(o, key, v);
	}
	assert_int_equal(sym_experiment_apply_json(&e, o, "t", err, sizeof(err)), -EINVAL);
	if (!strstr(err, want))
		fail_msg("%s: '%s' lacks '%s'", json, err, want);
	cJSON_Delete(o);
	sym_experiment_finish(&e);
}

/* A model with alpha 2, beta 3 ms and an SLO of 1 s on one GPU under
 * eager at 5 r/s: mostly batches of one. Without data sizes no request
 * takes less than 5 ms; with size_cv 0.5 a batch takes 3 + 2 size ms, the size gamma with
 * mean 1, so latencies spread (min below 5, max above) while the mean
 * stays near 5 ms; the same seed gives the same run; the model's own
 * size_cv replaces the experiment's; bad values are refused by name. */
static void sized(struct sym_experiment *e, const char *model_extra, const char *cv)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "{\"models\": [{\"name\": \"m\", \"alpha_ms\": 2, \"beta_ms\": 3, \"slo_ms\": 1000%s}], "
		 "\"gpus\": 1, \"policy\": \"eager\", \"duration_s\": 200, \"warmup_s\": 1, \"size_cv\": %s}",
		 model_extra, cv);
	exp_json(e, buf);
	resolve(e);
}

static void test_data_sizes(void **state)
{
	(void)state;
	struct sym_experiment e;
	struct sym_run_result plain, a, b, c;
	sized(&e, "", "0");
	assert_true(sym_experiment_size_cv(&e, 0) == 0);
	run(&e, 5, &plain);
	sym_experiment_finish(&e);
	sized(&e, "", "0.5");
	assert_true(sym_experiment_size_cv(&e, 0) == 0.5);
	run(&e, 5, &a);
	check_invariants(&e, &a);
	run(&e, 5, &b);
	cJSON *j = sym_experiment_to_json(&e);
	assert_true(cJSON_GetObjectItemCaseSensitive(j, "size_cv")->valuedouble == 0.5);
	cJSON_Delete(j);
	sym_experiment_finish(&e);
	sized(&e, ", \"size_cv\": 0.5", "0");
	assert_true(sym_experiment_size_cv(&e, 0) == 0.5);
	run(&e, 5, &c);
	sym_experiment_finish(&e);
	const struct sym_hist *hp = &plain.total.latency, *ha = &a.total.latency;
	assert_true(sym_to_ms(sym_hist_quantile(hp, 0)) >= 5 - 1e-6); /* nothing is faster than l(1) */
	assert_true(sym_to_ms(sym_hist_quantile(ha, 0.01)) < 4 && sym_to_ms(sym_hist_quantile(ha, 0.99)) > 6);
	double mp = sym_to_ms((sym_time)sym_hist_mean(hp)), ma = sym_to_ms((sym_time)sym_hist_mean(ha));
	if (fabs(ma - mp) > 0.1)
		fail_msg("mean latency %g ms with sizes, %g without", ma, mp);
	/* determinism, and the model's own size_cv acts as the experiment's */
	assert_int_equal(a.total.served, b.total.served);
	assert_true(sym_hist_mean(&a.total.latency) == sym_hist_mean(&b.total.latency));
	assert_true(sym_hist_mean(&a.total.latency) == sym_hist_mean(&c.total.latency));
	sym_run_result_finish(&plain);
	sym_run_result_finish(&a);
	sym_run_result_finish(&b);
	sym_run_result_finish(&c);
	apply_fails("size_cv", "-1", "size_cv");
	apply_fails("size_cv", "11", "size_cv");
	apply_fails("size_cv", "\"x\"", "size_cv");
	apply_fails("models", "[{\"name\": \"m\", \"alpha_ms\": 1, \"beta_ms\": 1, \"size_cv\": -0.5}]", "'size_cv'");
}

static void check_query_invariants(const struct sym_run_result *r)
{
	assert_true(r->nqueries > 0);
	for (size_t i = 0; i < r->nqueries; i++) {
		const struct sym_query_result *q = &r->queries[i];
		assert_int_equal(q->offered, q->good + q->late + q->dropped);
		assert_int_equal(q->latency.n, q->good + q->late);
		assert_true(q->stage_requests >= q->offered); /* the root at least */
	}
}

/* One query, A then two B per A (gamma 2): the trace shows A's batch, then
 * B's requests arriving when A's response is back (finish + resp_ms) with
 * the query's deadline; the query is good; models in no stage get nothing. */
static void test_query_worked_example(void **state)
{
	(void)state;
	struct sym_experiment e;
	qexp(&e, "[{\"name\": \"q\", \"slo_ms\": 100, \"stages\": [{\"model\": \"A\"}, {\"model\": \"B\", \"gamma\": 2}]}]",
	     "\"gpus\": 1, \"arrival\": \"uniform\", \"rate\": 1, \"duration_s\": 1.5, \"warmup_s\": 0, "
	     "\"policy\": \"eager\", \"network\": {\"resp_ms\": 0.5}");
	resolve(&e);
	assert_int_equal(e.nqueries, 1);
	assert_int_equal(e.query_of[2], -1);
	assert_int_equal(e.stage_of[1], 1);
	assert_true(sym_experiment_model_rate(&e, 1) == 2 * sym_experiment_model_rate(&e, 0));
	FILE *tr = tmpfile();
	assert_non_null(tr);
	struct sym_run_result r;
	char err[512];
	struct sym_run_opts o = { .rate = 1, .trace = tr };
	if (sym_sim_run(&e, &o, &r, err, sizeof(err)))
		fail_msg("%s", err);
	char *t = slurp(tr);
	fclose(tr);
	/* rows: gpu,kind,model,size,start,finish,dropped_before */
	double a_start, a_fin, b_start, b_fin;
	int na, nb;
	char *line2 = strchr(t, '\n');
	assert_non_null(line2);
	assert_int_equal(sscanf(t, "0,%*[^,],A,%d,%lf,%lf,", &na, &a_start, &a_fin), 3);
	assert_int_equal(na, 1);
	assert_true(fabs(a_fin - a_start - 6) < 1e-6); /* l_A(1) = 6 ms */
	assert_int_equal(sscanf(line2 + 1, "0,%*[^,],B,%d,%lf,%lf,", &nb, &b_start, &b_fin), 3);
	int total_b = nb;
	if (nb == 1) { /* eager may send the first B alone: the second follows it */
		char *line3 = strchr(line2 + 1, '\n');
		int nb2;
		assert_non_null(line3);
		assert_int_equal(sscanf(line3 + 1, "0,%*[^,],B,%d,", &nb2), 1);
		total_b += nb2;
	}
	assert_int_equal(total_b, 2);
	assert_true(b_start >= a_fin + 0.5 - 1e-6); /* B arrives when A's response is back */
	free(t);
	assert_int_equal(r.nqueries, 1);
	assert_int_equal(r.queries[0].offered, 1);
	assert_int_equal(r.queries[0].good, 1);
	assert_int_equal(r.queries[0].stage_requests, 3);
	assert_int_equal(r.models[0].offered, 1);
	assert_int_equal(r.models[1].offered, 2);
	assert_int_equal(r.models[2].offered, 0);
	check_query_invariants(&r);
	sym_run_result_finish(&r);
	sym_experiment_finish(&e);
}

/* Fan-out: gamma 0.5 makes half a B per A on average, gamma 3 exactly three;
 * a seed repeats a run bit for bit; every query ends exactly once (the
 * engine checks it); the result names the queries and their split. */
static void test_query_fanout_and_determinism(void **state)
{
	(void)state;
	struct sym_experiment e;
	qexp(&e, "[{\"name\": \"half\", \"slo_ms\": 100, \"stages\": [{\"model\": \"A\"}, {\"model\": \"B\", \"gamma\": 0.5}]},"
		 " {\"name\": \"three\", \"slo_ms\": 80, \"share\": 3, \"split\": \"nexus\", \"stages\": [{\"model\": \"C\"}]}]",
	     "\"gpus\": 4, \"duration_s\": 20, \"warmup_s\": 2");
	resolve(&e);
	assert_true(fabs(e.queries[0].share - 0.25) < 1e-12);
	assert_true(fabs(e.queries[1].share - 0.75) < 1e-12);
	struct sym_run_result a, b;
	run(&e, 400, &a);
	run(&e, 400, &b);
	check_query_invariants(&a);
	const struct sym_query_result *h = &a.queries[0];
	double per = (double)h->stage_requests / (double)h->offered; /* 1.5 on average */
	double sd = sqrt(0.25 / (double)h->offered);
	assert_true(fabs(per - 1.5) < 4 * sd);
	assert_int_equal(a.queries[1].stage_requests, a.queries[1].offered);
	/* the measured query rate follows the shares */
	assert_true(fabs((double)a.queries[1].offered / (double)(a.queries[0].offered + a.queries[1].offered) - 0.75) < 0.03);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(a.queries[i].offered, b.queries[i].offered);
		assert_int_equal(a.queries[i].good, b.queries[i].good);
		assert_int_equal(a.queries[i].stage_requests, b.queries[i].stage_requests);
		assert_memory_equal(a.queries[i].latency.counts, b.queries[i].latency.counts,
				    SYM_HIST_BUCKETS * sizeof(uint32_t));
	}
	cJSON *j = sym_result_json("sim", &e, &a);
	const cJSON *qs = cJSON_GetObjectItemCaseSensitive(j, "queries");
	assert_int_equal(cJSON_GetArraySize(qs), 2);
	const cJSON *q0 = cJSON_GetArrayItem(qs, 0);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(q0, "name")->valuestring, "half");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(q0, "stages")), 2);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "judged_by")->valuestring, "queries");
	/* the config echoed reproduces the run */
	struct sym_experiment e2;
	sym_experiment_init(&e2);
	char err[512];
	if (sym_experiment_load_json(&e2, j, "result", err, sizeof(err)) || sym_experiment_resolve(&e2, err, sizeof(err)))
		fail_msg("%s", err);
	struct sym_run_result c;
	run(&e2, 400, &c);
	assert_int_equal(c.queries[0].good, a.queries[0].good);
	assert_int_equal(c.queries[1].stage_requests, a.queries[1].stage_requests);
	sym_run_result_finish(&c);
	sym_experiment_finish(&e2);
	cJSON_Delete(j);
	sym_run_result_finish(&a);
	sym_run_result_finish(&b);
	sym_experiment_finish(&e);
}

/* Deadlines: with no split every stage has the query's deadline, so a
 * deferring scheduler (the paper's rule, symphony:lookahead=off) sends the
 * root as late as its batch allows and its children often have no time left:
 * many queries fail; with a split (even or Nexus's) the root's deadline is its
 * budget and the queries are good. A dropped stage fails its query and its
 * children never run. */
static void test_query_split_deadlines(void **state)
{
	(void)state;
	const char *q = "[{\"name\": \"q\", \"slo_ms\": 60, \"split\": \"%s\", \"stages\": [{\"model\": \"A\"}, "
			"{\"model\": \"B\", \"gamma\": 1}]}]";
	double bad[3];
	const char *splits[3] = { "none", "even", "nexus" };
	for (int i = 0; i < 3; i++) {
		char buf[300];
		snprintf(buf, sizeof(buf), q, splits[i]);
		struct sym_experiment e;
		qexp(&e, buf, "\"gpus\": 4, \"duration_s\": 10, \"warmup_s\": 1, \"policy\": \"symphony:lookahead=off\"");
		resolve(&e);
		const struct sym_query *x = &e.queries[0];
		if (i == 0) {
			assert_true(x->deadline_ms[0] == 60 && x->deadline_ms[1] == 60);
		} else {
			assert_true(fabs(x->deadline_ms[1] - 60) < 1e-9); /* the leaf's deadline is the query's */
			assert_true(x->deadline_ms[0] < 60);
			assert_true(fabs(x->plan[0].budget_ms + x->plan[1].budget_ms - 60) < 1e-6 ||
				    x->plan[0].budget_ms + x->plan[1].budget_ms < 60);
			assert_true(e.model_slo_ms[0] == x->plan[0].budget_ms); /* the stage's policy plans with it */
		}
		if (i == 1)
			assert_true(fabs(x->plan[0].budget_ms - 30) < 1e-9);
		struct sym_run_result r;
		run(&e, 200, &r);
		check_query_invariants(&r);
		bad[i] = sym_query_bad_rate(&r.queries[0]);
		/* a child never runs for a query already failed by its root */
		assert_true(r.models[1].offered <= r.models[0].served + 1);
		sym_run_result_finish(&r);
		sym_experiment_finish(&e);
	}
	print_message("query bad rate by split: none %.4f even %.4f nexus %.4f\n", bad[0], bad[1], bad[2]);
	assert_true(bad[0] > 0.1); /* 18% at this commit */
	assert_true(bad[1] < 0.01);
	assert_true(bad[2] < 0.01);
}

/* Goodput and its judge count queries: the search's rate is queries/s and a
 * run passes when every query's bad rate is within the allowance. */
static void test_query_goodput(void **state)
{
	(void)state;
	struct sym_experiment e;
	qexp(&e, "[{\"name\": \"q\", \"slo_ms\": 60, \"split\": \"nexus\", \"stages\": [{\"model\": \"A\"}, "
		 "{\"model\": \"B\", \"gamma\": 2}]}]", "\"gpus\": 2, \"duration_s\": 10, \"warmup_s\": 1");
	resolve(&e);
	assert_true(fabs(sym_schedule_mean_rate(&e) - 1) < 1e-12); /* one query per unit of rate */
	struct sym_goodput g;
	char err[512];
	if (sym_goodput_search(&e, false, &g, err, sizeof(err)))
		fail_msg("%s", err);
	/* A at its largest batch within its budget and B twice per query bound the rate */
	assert_true(g.goodput_rps > 0 && g.goodput_rps < g.upper_bound_rps);
	struct sym_run_result r;
	run(&e, g.goodput_rps, &r);
	struct sym_verdict v;
	sym_judge(&e, &r, &v);
	assert_true(v.ok);
	assert_int_equal(v.worst, 0);
	assert_string_equal(sym_unit_name(&e, v.worst), "q");
	sym_run_result_finish(&r);
	run(&e, 1.3 * g.goodput_rps, &r);
	sym_judge(&e, &r, &v);
	assert_false(v.ok);
	sym_run_result_finish(&r);
	sym_goodput_finish(&g);
	sym_experiment_finish(&e);
}

/* Every malformed query is refused with a message naming what is wrong. */
static void test_query_errors(void **state)
{
	(void)state;
	static const struct {
		const char *queries, *extra, *want;
	} cases[] = {
		{ "[{\"name\": \"q\", \"slo_ms\": 60, \"stages\": [{\"model\": \"Z\"}]}]", "", "model 'Z' is not one" },
		{ "[{\"name\": \"q\", \"slo_ms\": 60, \"stages\": [{\"model\": \"A\"}, {\"model\": \"A\"}]}]", "", "again" },
		{ "[{\"name\": \"q\", \"slo_ms\": 60, \"stages\": [{\"model\": \"A\"}]}, {\"name\": \"q\", \"slo_ms\": 60, "
		  "\"stages\": [{\"model\": \"B\"}]}]", "", "two queries are named 'q'" },
		{ "[{\"name\": \"q\", \"slo_ms\": 7, \"split\": \"nexus\", \"stages\": [{\"model\": \"A\"}, {\"model\": \"B\"}]}]",
		  "", "query 'q' (split nexus)" },
		{ "[{\"name\": \"q\", \"slo_ms\": 60, \"stages\": [{\"model\": \"A\"}]}]", "\"rate_csv\": \"x.csv\"",
		  "rate_csv" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sym_experiment e;
		qexp(&e, cases[i].queries, cases[i].extra);
		char err[512] = "";
		assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), -EINVAL);
		if (!strstr(err, cases[i].want))
			fail_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].want);
		sym_experiment_finish(&e);
	}
	/* the form is checked when the key is set */
	static const struct {
		const char *queries, *want;
	} forms[] = {
		{ "{}", "expected an array of queries" },
		{ "[1]", "expected an object" },
		{ "[{\"name\": \"q\", \"slo_ms\": 60, \"stages\": []}]", "'stages' must be" },
		{ "[{\"name\": \"q\", \"slo_ms\": -1, \"stages\": [{\"model\": \"A\"}]}]", "slo_ms" },
		{ "[{\"name\": \"q\", \"slo_ms\": 60, \"split\": \"fast\", \"stages\": [{\"model\": \"A\"}]}]", "'split'" },
		{ "[{\"name\": \"q\", \"slo_ms\": 60, \"stages\": [{\"model\": \"A\"}, {\"model\": \"B\", \"parent\": 1}]}]",
		  "'parent'" },
		{ "[{\"name\": \"q\", \"slo_ms\": 60, \"stages\": [{\"model\": \"A\", \"gamma\": 2}]}]", "root's 'gamma'" },
		{ "[{\"name\": \"q\", \"slo_ms\": 60, \"stages\": [{\"model\": \"A\"}, {\"model\": \"B\", \"gamma\": 0}]}]",
		  "'gamma'" },
		{ "[{\"name\": \"q\", \"slo_ms\": 60, \"stages\": [{\"model\": \"A\", \"fanout\": 1}]}]", "unknown key 'fanout'" },
		{ "[{\"name\": \"q\", \"slo\": 60, \"stages\": [{\"model\": \"A\"}]}]", "unknown key 'slo'" },
	};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
		apply_fails("queries", forms[i].queries, forms[i].want);
	/* --queries FILE: a missing file is named */
	struct sym_experiment e;
	sym_experiment_init(&e);
	char err[512] = "";
	assert_int_equal(sym_experiment_apply_flag(&e, "queries", "/nonexistent/q.json", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "/nonexistent/q.json"));
	sym_experiment_finish(&e);
}

/* Nexus re-plans the split every epoch from the measured fan-out (nexus.md,
 * Sections 4.2 and 6.2): B's fan-out goes from 0.1 to 10 at 5 s; re-planned
 * every 2 s, the splits after the change are the split for gamma 10 exactly
 * (a whole fan-out: every eligible request of A spawns 10), the earlier ones
 * are planned for about 0.1, and they differ; the result lists them. */
static void test_query_replan(void **state)
{
	(void)state;
	struct sym_experiment e;
	qexp(&e, "[{\"name\": \"q\", \"slo_ms\": 60, \"split\": \"nexus\", \"replan_s\": 2, \"eps_ms\": 0.5, \"stages\": "
		 "[{\"model\": \"A\"}, {\"model\": \"B\", \"gamma\": 0.1, \"gamma_after\": [{\"t_s\": 5, \"gamma\": 10}]}]}]",
	     "\"gpus\": 16, \"duration_s\": 11, \"warmup_s\": 1");
	resolve(&e);
	struct sym_run_result r;
	run(&e, 200, &r);
	check_query_invariants(&r);
	assert_int_equal(r.nreplans, 5); /* at 2, 4, 6, 8, 10 s */
	struct sym_query_stage st[2] = {
		{ .profile = &e.profiles[0], .parent = -1, .gamma = 1, .lat_factor = 1 },
		{ .profile = &e.profiles[1], .parent = 0, .gamma = 10, .lat_factor = 1 },
	};
	struct sym_query_split out[2];
	double g;
	char err[256];
	assert_int_equal(sym_query_split(st, 2, 200, 60, 0.5, out, &g, err, sizeof(err)), 0);
	for (int i = 3; i < 5; i++) {
		assert_true(r.replans[i].gamma[1] == 10);
		assert_true(fabs(r.replans[i].budget_ms[0] - out[0].budget_ms) < 1e-9);
		assert_true(fabs(r.replans[i].budget_ms[1] - out[1].budget_ms) < 1e-9);
	}
	for (int i = 0; i < 2; i++)
		assert_true(r.replans[i].gamma[1] > 0.03 && r.replans[i].gamma[1] < 0.3);
	assert_true(r.replans[0].budget_ms[0] != r.replans[4].budget_ms[0]);
	cJSON *j = sym_result_json("sim", &e, &r);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "replans")), 5);
	cJSON_Delete(j);
	sym_run_result_finish(&r);
	sym_experiment_finish(&e);
	/* bad input */
	static const struct {
		const char *q, *want;
	} bad[] = {
		{ "[{\"name\": \"q\", \"slo_ms\": 60, \"replan_s\": 2, \"stages\": [{\"model\": \"A\"}]}]", "needs \"split\": \"nexus\"" },
		{ "[{\"name\": \"q\", \"slo_ms\": 60, \"stages\": [{\"model\": \"A\", \"gamma_after\": [{\"t_s\": 1, \"gamma\": 2}]}]}]",
		  "not for the root" },
		{ "[{\"name\": \"q\", \"slo_ms\": 60, \"stages\": [{\"model\": \"A\"}, {\"model\": \"B\", \"gamma_after\": "
		  "[{\"t_s\": 3, \"gamma\": 2}, {\"t_s\": 3, \"gamma\": 1}]}]}]", "gamma_after[1]" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		apply_fails("queries", bad[i].q, bad[i].want);
}

/* ---- prefix batching (nexus.md, Section 6.3) ---- */

static void pexp(struct sym_experiment *e, int variants, bool batching, const char *extra)
{
	char buf[1024], err[512];
	snprintf(buf, sizeof(buf),
		 "{\"prefix_models\": [{\"name\": \"R\", \"variants\": %d, \"slo_ms\": 60, "
		 "\"prefix\": {\"alpha_ms\": 1, \"beta_ms\": 4, \"static_mb\": 90}, "
		 "\"suffix\": {\"alpha_ms\": 0.5, \"beta_ms\": 2, \"static_mb\": 8}}], \"prefix_batching\": %s%s%s}",
		 variants, batching ? "true" : "false", extra[0] ? ", " : "", extra);
	cJSON *j = cJSON_Parse(buf);
	assert_non_null(j);
	sym_experiment_init(e);
	if (sym_experiment_apply_json(e, j, "test", err, sizeof(err)))
		fail_msg("%s", err);
	cJSON_Delete(j);
}

/* Without prefix batching the variants are models of their own (prefix +
 * suffix latency and memory); with it, one model whose batch pays the prefix
 * once and the suffix beta once per variant it holds (planned: every
 * request another variant), memory the prefix once. The config echoed
 * reproduces either. */
static void test_prefix_models(void **state)
{
	(void)state;
	struct sym_experiment e;
	pexp(&e, 3, false, "");
	resolve(&e);
	assert_int_equal(e.nmodels, 3);
	assert_string_equal(e.models[2].name, "R/3");
	assert_true(e.models[0].alpha_ms == 1.5 && e.models[0].beta_ms == 6 && e.models[0].static_mb == 98);
	assert_true(fabs(e.shares[1] - 1.0 / 3) < 1e-12);
	assert_null(e.pfx_n);
	sym_experiment_finish(&e);
	pexp(&e, 3, true, "");
	resolve(&e);
	assert_int_equal(e.nmodels, 1);
	assert_string_equal(e.models[0].name, "R");
	/* l(b) = 1.5 b + 4 + 2 min(b, 3) */
	assert_true(e.models[0].table_ms[0] == 7.5 && e.models[0].table_ms[1] == 11 && e.models[0].table_ms[3] == 16);
	assert_true(e.models[0].static_mb == 90 + 3 * 8);
	assert_int_equal(e.pfx_n[0], 3);
	assert_true(e.shares[0] == 1);
	cJSON *j = sym_experiment_to_json(&e);
	assert_null(cJSON_GetObjectItemCaseSensitive(j, "models"));
	struct sym_experiment e2;
	sym_experiment_init(&e2);
	char err[512];
	if (sym_experiment_load_json(&e2, j, "echo", err, sizeof(err)))
		fail_msg("%s", err);
	resolve(&e2);
	assert_int_equal(e2.nmodels, 1);
	assert_int_equal(e2.pfx_n[0], 3);
	cJSON_Delete(j);
	sym_experiment_finish(&e2);
	sym_experiment_finish(&e);
	/* bad input */
	static const struct {
		const char *json, *want;
	} bad[] = {
		{ "{\"prefix_models\": [{\"name\": \"R\", \"variants\": 0, \"prefix\": {\"alpha_ms\": 1, \"beta_ms\": 1}, "
		  "\"suffix\": {\"alpha_ms\": 1, \"beta_ms\": 1}}]}", "'variants'" },
		{ "{\"prefix_models\": [{\"name\": \"R\", \"variants\": 2, \"suffix\": {\"alpha_ms\": 1, \"beta_ms\": 1}}]}",
		  "'prefix'" },
		{ "{\"prefix_models\": [{\"name\": \"R\", \"variants\": 2, \"prefix\": {\"alpha_ms\": 1}, "
		  "\"suffix\": {\"alpha_ms\": 1, \"beta_ms\": 1}}]}", "'beta_ms' is missing" },
		{ "{\"prefix_models\": [{\"name\": \"R\", \"variants\": 2, \"layers\": 3, \"prefix\": {\"alpha_ms\": 1, "
		  "\"beta_ms\": 1}, \"suffix\": {\"alpha_ms\": 1, \"beta_ms\": 1}}]}", "unknown key 'layers'" },
		{ "{\"prefix_models\": {}}", "expected an array" },
		{ "{\"prefix_batching\": 2}", "true or false" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		apply_fails(NULL, bad[i].json, bad[i].want);
	pexp(&e, 2, false, "\"num_models\": 4");
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "num_models"));
	sym_experiment_finish(&e);
}

/* In a run, a merged batch of b requests takes exactly (1.5 b + 4) ms plus
 * 2 ms per distinct variant in it: from 1 to min(b, N); batches of two
 * variants or more sometimes hold fewer; and prefix batching serves more
 * than the variants apart on one GPU. */
static void test_prefix_batching_run(void **state)
{
	(void)state;
	struct sym_experiment e;
	pexp(&e, 4, true, "\"gpus\": 1, \"duration_s\": 10, \"warmup_s\": 1, \"policy\": \"eager\"");
	resolve(&e);
	FILE *tr = tmpfile();
	assert_non_null(tr);
	struct sym_run_opts o = { .rate = 300, .trace = tr };
	struct sym_run_result r;
	char err[512];
	if (sym_sim_run(&e, &o, &r, err, sizeof(err)))
		fail_msg("%s", err);
	char *t = slurp(tr);
	fclose(tr);
	int fewer = 0, multi = 0;
	for (char *line = t; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		int size;
		double a, b;
		if (sscanf(line, "%*d,%*[^,],R,%d,%lf,%lf,", &size, &a, &b) != 3 || size <= 0)
			continue;
		double k = (b - a - 1.5 * size - 4) / 2;
		int bound = size < 4 ? size : 4;
		assert_true(fabs(k - round(k)) < 1e-6);
		assert_true(k >= 1 - 1e-9 && k <= bound + 1e-9);
		multi += size >= 2;
		fewer += size >= 2 && round(k) < bound;
	}
	free(t);
	assert_true(multi > 10);
	assert_true(fewer > 0);
	sym_run_result_finish(&r);
	struct sym_goodput g1, g2;
	if (sym_goodput_search(&e, false, &g1, err, sizeof(err)))
		fail_msg("%s", err);
	sym_experiment_finish(&e);
	pexp(&e, 4, false, "\"gpus\": 1, \"duration_s\": 10, \"warmup_s\": 1, \"policy\": \"eager\"");
	resolve(&e);
	if (sym_goodput_search(&e, false, &g2, err, sizeof(err)))
		fail_msg("%s", err);
	print_message("4 variants on one GPU: %.1f req/s with prefix batching, %.1f without\n", g1.goodput_rps,
		      g2.goodput_rps);
	assert_true(g1.goodput_rps > 1.2 * g2.goodput_rps);
	sym_goodput_finish(&g1);
	sym_goodput_finish(&g2);
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
		cmocka_unit_test(test_data_sizes),
		cmocka_unit_test(test_network_tail),
		cmocka_unit_test(test_start_late),
		cmocka_unit_test(test_completion_delay),
		cmocka_unit_test(test_eager_is_symphony_sending_now),
		cmocka_unit_test(test_light_load_packs_low_ids),
		cmocka_unit_test(test_subclusters),
		cmocka_unit_test(test_epochs),
		cmocka_unit_test(test_epochs_noise),
		cmocka_unit_test(test_autoscale),
		cmocka_unit_test(test_autoscale_subclusters),
		cmocka_unit_test(test_segments_follow_schedule),
		cmocka_unit_test(test_trace_replayed),
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_goodput_bracket),
		cmocka_unit_test(test_criterion_rule),
		cmocka_unit_test(test_mean_ci95),
		cmocka_unit_test(test_stop_limits),
		cmocka_unit_test(test_goodput_per_model),
		cmocka_unit_test(test_replications),
		cmocka_unit_test(test_query_worked_example),
		cmocka_unit_test(test_query_fanout_and_determinism),
		cmocka_unit_test(test_query_split_deadlines),
		cmocka_unit_test(test_query_goodput),
		cmocka_unit_test(test_query_errors),
		cmocka_unit_test(test_query_replan),
		cmocka_unit_test(test_prefix_models),
		cmocka_unit_test(test_prefix_batching_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
