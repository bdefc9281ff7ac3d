/* symphony - command-line entry point.
 *
 * Exit status: 0 success; 2 bad input (usage, configuration, profile) with
 * no output file created; 1 a run-time failure (an output cannot be
 * written); 70 an internal error (conservation violated). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>

#include "core/error.h"
#include "profiles/zoo.h"
#include "runtime/profiler.h"
#include "runtime/rt.h"
#include "sim/config.h"
#include "sim/engine.h"
#include "sim/goodput.h"
#include "sim/plan.h"
#include "sim/report.h"
#include "sim/sweep.h"
#include "sym_version.h"

#define EXIT_USAGE 2
#define EXIT_INTERNAL 70

struct cli {
	const char *cmd;
	const char *config;
	const char *json;
	const char *trace;
	const char *timeline;
	const char *model_timeline;
	bool quiet;
	/* plan */
	const char *target_rate;
	const char *policies;
	const char *max_gpus;
	/* loadcurve */
	const char *loads;
	const char *reference;
	const char *csv;
	const char *jobs;
};

static void usage(FILE *f)
{
	fprintf(f,
		"symphony %s - deferred batch scheduling for DNN inference on GPU clusters\n\n"
		"usage: symphony COMMAND [CONFIG.json] [OPTIONS]\n\n"
		"commands:\n"
		"  sim       simulate one run at a given offered rate\n"
		"  goodput   find the highest rate served with bad rate <= 1%% (bisection)\n"
		"  plan      the fewest GPUs that serve a target rate, per policy, beside analytic estimates\n"
		"  loadcurve goodput, bad rate and GPU use from light load to well past capacity, per policy\n"
		"  sweep     run every point of a grid file (parallel, resumable, shardable) into results.jsonl\n"
		"  merge     combine the results of sweep shards into one file\n"
		"  models    list the models of a profile zoo\n"
		"  policies  list the scheduling policies\n"
		"  profile   measure a model's batch latency on an executor, fit l(b) = alpha*b + beta, write profiles\n"
		"  help      help on a command: symphony help COMMAND, or help config\n"
		"  version   print the version\n\n"
		"examples:\n"
		"  symphony sim --profile 1.053,5.072 --slo 25 --gpus 8 --rate 5000 --arrival poisson\n"
		"  symphony goodput --zoo a100 --models all --gpus 64 --policy eager --json -\n",
		SYM_VERSION);
	fprintf(f, "\nruntime commands (a real cluster on the monotonic clock; see runtime/README.md):\n");
	sym_rt_usage(f, NULL);
}

static void print_policies(FILE *f, const char *indent)
{
	size_t n;
	const struct sym_policy_ops *const *list = sym_policy_list(&n);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s%-11s %s\n", indent, list[i]->name, list[i]->summary);
		if (list[i]->params_help)
			fprintf(f, "%s%-11s   %s\n", indent, "", list[i]->params_help);
	}
}

static void help_output_flags(FILE *f, bool goodput)
{
	fprintf(f,
		"output:\n"
		"  %-30s %s\n  %-30s %s\n  %-30s %s\n  %-30s %s\n  %-30s %s\n  %-30s %s\n",
		"--config FILE", "experiment file (also the first non-option argument)",
		"--json FILE|-", "write the result as JSON (- for stdout)",
		"--trace FILE", goodput ? "CSV, one row per batch, of the run at the goodput" : "CSV, one row per batch",
		"--timeline FILE", "CSV per interval: offered, good, bad, busy GPUs, autoscaling advice",
		"--model-timeline FILE", "CSV per interval and model: offered, good, bad",
		"--quiet", "no table and no progress on stderr");
}

static int help(const char *topic)
{
	FILE *f = stdout;
	if (!topic) {
		usage(f);
		return 0;
	}
	if (sym_rt_is_command(topic)) {
		sym_rt_usage(f, topic);
		return 0;
	}
	if (!strcmp(topic, "sim") || !strcmp(topic, "goodput")) {
		bool g = !strcmp(topic, "goodput");
		fprintf(f, "usage: symphony %s [CONFIG.json] [OPTIONS]\n\n", topic);
		if (g)
			fprintf(f,
				"Finds the highest total offered rate whose bad rate ((late + dropped) / offered)\n"
				"is at most --max-bad-rate, by bisection between 0 and the rate at which every GPU\n"
				"would be busy with maximum-size batches, to within --tolerance (relative). Every\n"
				"step reuses the seed. Prints the steps, then the run at the goodput.\n\n");
		else
			fprintf(f,
				"Simulates the experiment at the offered rate: arrivals for --duration seconds,\n"
				"then the queues drain; metrics count requests arriving after --warmup. Prints a\n"
				"table per model; --json writes every metric with the resolved configuration.\n\n");
		fprintf(f, "configuration (each also a key of the experiment file; options override it):\n");
		sym_experiment_print_flags(f);
		help_output_flags(f, g);
		fprintf(f, "\npolicies (--policy NAME or NAME:key=value,...):\n");
		print_policies(f, "  ");
		return 0;
	}
	if (!strcmp(topic, "plan")) {
		fprintf(f,
			"usage: symphony plan [CONFIG.json] --target-rate R [--policies P1;P2;...] [--max-gpus N]\n"
			"                     [OPTIONS] [--json FILE|-] [--quiet]\n\n"
			"For each policy (default: the experiment's --policy), the smallest number of GPUs\n"
			"whose simulation at R req/s in total has a bad rate <= --max-bad-rate: doubling from\n"
			"1 GPU, then bisection, one simulation per step with the same seed. Beside them, two\n"
			"analytic estimates: staggered execution (per model the smallest N with\n"
			"(1 + 1/N) l(b) <= SLO and N b / l(b) >= its rate, summed over the models) and the\n"
			"Nexus squishy-packing plan of the whole workload. Mixed-model workloads are\n"
			"simulated as a whole, with their popularity split of R. One device kind only.\n\n"
			"  %-30s %s\n  %-30s %s\n  %-30s %s\n\n",
			"--target-rate R", "total offered requests per second to serve (required)",
			"--policies P1;P2;...", "policies to plan for, ';'-separated (parameters use ',')",
			"--max-gpus N", "give up above N GPUs (default 100000; reported as > max)");
		fprintf(f, "configuration: as for sim (symphony help sim); the search sets --gpus and the rate; a rate\nschedule (segments, rate_csv) or a cluster of several kinds is refused.\n");
		return 0;
	}
	if (!strcmp(topic, "sweep")) {
		sym_help_sweep(f);
		return 0;
	}
	if (!strcmp(topic, "merge")) {
		sym_help_merge(f);
		return 0;
	}
	if (!strcmp(topic, "loadcurve")) {
		fprintf(f,
			"usage: symphony loadcurve [CONFIG.json] [--policies P1;P2;...] [--loads F1,F2,...]\n"
			"                          [--reference R] [-j N] [OPTIONS] [--json FILE|-] [--csv FILE] [--quiet]\n\n"
			"Offered load from light to well past capacity, one simulation per (policy, load):\n"
			"the rate served within the SLO (goodput), the bad rate, the GPU busy fraction and the\n"
			"GPUs in use. Loads are fractions of a reference rate: --reference R req/s, else the\n"
			"goodput of the first policy (found by search). A flat top (goodput holding near its\n"
			"peak past capacity) and busy GPUs following the load are what a good policy shows.\n\n"
			"  %-30s %s\n  %-30s %s\n  %-30s %s\n  %-30s %s\n  %-30s %s\n\n",
			"--policies P1;P2;...", "policies, ';'-separated (default: the experiment's --policy)",
			"--loads F1,F2,...", "fractions of the reference (default 0.1,0.2,...,2.0)",
			"--reference R", "the rate that is load 1 (default: the first policy's goodput)",
			"-j N, --jobs N", "simulations in parallel (default: every core)",
			"--csv FILE", "one row per (policy, load)");
		fprintf(f, "configuration: as for sim (symphony help sim); a rate schedule is refused.\n");
		return 0;
	}
	if (!strcmp(topic, "config")) {
		fprintf(f,
			"An experiment file is a JSON object; every key is optional:\n\n"
			"{\n"
			"  \"zoo\": \"a100\",                 built-in a100 | gtx1080ti, or a profile file\n"
			"  \"models\": \"all\",               or [\"ResNet50\", {\"name\": \"m\", \"alpha_ms\": 1, \"beta_ms\": 5}]\n"
			"  \"slo_ms\": 25,                   one SLO for every model (else each model's own)\n"
			"  \"gpus\": 8,\n"
			"  \"num_models\": 16,               serve 16 models: the list cut or repeated (NAME#2, ...)\n"
			"  \"gpus_per_model\": 2.5,          GPUs = round(2.5 * models), replacing gpus\n"
			"  \"cluster\": [{\"kind\": \"a100\", \"count\": 8}, {\"kind\": \"cpu\", \"count\": 4, \"scale\": 20}],\n"
			"                                   devices by kind (replaces gpus); a kind's profiles come\n"
			"                                   from \"zoo\", or \"scale\" times the base latencies, or\n"
			"                                   the built-in zoo of its name; optional memory_mb, cpu\n"
			"  \"rate\": 5000,                   total offered req/s\n"
			"  \"arrival\": \"poisson\",          poisson | uniform | gamma:K\n"
			"  \"popularity\": \"equal\",         equal | zipf:S\n"
			"  \"segments\": [{\"duration_s\": 10, \"rate\": 2000}],   piecewise total rate\n"
			"  \"rate_csv\": \"rates.csv\",       per-second rates per model (header: model names)\n"
			"  \"policy\": \"symphony\",          NAME or NAME:key=value,... (see symphony policies)\n"
			"  \"drop\": \"early\",               early (= early:auto:3, default) | early:auto:K | early:N | lazy\n"
			"  \"network\": {\"ctrl_ms\": 0, \"data_ms\": 0, \"resp_ms\": 0, \"done_ms\": 0, \"tail_ms\": 0},\n"
			"                                   planned delays; done_ms: completion notice delay\n"
			"                                   (GPU busy that much longer); tail_ms: actual plan+input delay\n"
			"                                   exponential with this mean (long tail)\n"
			"  \"jitter\": 0,                    GPU time factor uniform in [1-J, 1+J]\n"
			"  \"duration_s\": 30, \"warmup_s\": 3, \"seed\": 1,\n"
			"  \"interval_s\": 1, \"advice_threshold\": 0.01,   timeline / autoscaling advice\n"
			"  \"max_bad_rate\": 0.01, \"tolerance\": 0.005\n"
			"}\n\n"
			"A model object takes name, alpha_ms and beta_ms (linear) or latency_ms (a table\n"
			"l(1), l(2), ...), and optionally max_batch, slo_ms, static_mb, dynamic_mb, file_mb.\n"
			"The \"config\" object of a result file is itself a complete experiment file, and a\n"
			"result file can be given as CONFIG directly to repeat the run.\n");
		return 0;
	}
	if (!strcmp(topic, "models")) {
		fprintf(f, "usage: symphony models [--zoo a100|gtx1080ti|FILE]\n\nLists the models of a zoo "
			   "with alpha, beta, SLO and the largest batch that fits the SLO.\n");
		return 0;
	}
	if (!strcmp(topic, "profile")) {
		sym_profiler_usage(f);
		return 0;
	}
	if (!strcmp(topic, "policies")) {
		fprintf(f, "usage: symphony policies\n\nLists the scheduling policies and their parameters.\n");
		return 0;
	}
	fprintf(stderr, "symphony: no help on '%s' (try: symphony help)\n", topic);
	return EXIT_USAGE;
}

static int cmd_models(int argc, char **argv)
{
	const char *zoo = "a100";
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--zoo") && i + 1 < argc)
			zoo = argv[++i];
		else if (!strncmp(argv[i], "--zoo=", 6))
			zoo = argv[i] + 6;
		else {
			fprintf(stderr, "symphony models: unknown argument '%s' (usage: symphony models --zoo NAME)\n",
				argv[i]);
			return EXIT_USAGE;
		}
	}
	struct sym_zoo z;
	char err[1024];
	if (sym_zoo_load(zoo, &z, err, sizeof(err))) {
		fprintf(stderr, "symphony: %s\n", err);
		return EXIT_USAGE;
	}
	printf("zoo %s (%s): %zu models\n%-22s %9s %9s %8s %9s\n", zoo, z.gpu, z.n, "model", "alpha ms", "beta ms",
	       "SLO ms", "max batch");
	for (size_t i = 0; i < z.n; i++) {
		const struct sym_model_spec *m = &z.models[i];
		int maxb = m->table_ms ? m->ntable
				       : sym_profile_linear_batch_limit(m->alpha_ms, m->beta_ms, m->slo_ms);
		printf("%-22s %9.3f %9.3f %8g %9d\n", m->name, m->alpha_ms, m->beta_ms, m->slo_ms, maxb);
	}
	sym_zoo_finish(&z);
	return 0;
}

static int cmd_policies(void)
{
	print_policies(stdout, "");
	return 0;
}

/* Parses argv into cli and e. Returns 0 or EXIT_USAGE after printing why. */
static int parse_args(int argc, char **argv, struct cli *cli, struct sym_experiment *e)
{
	char err[1024];
	/* First pass: the config file, so that options override it. */
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			cli->config = argv[++i];
		} else if (!strncmp(argv[i], "--config=", 9)) {
			cli->config = argv[i] + 9;
		} else if (argv[i][0] != '-' || !argv[i][1]) {
			if (cli->config) {
				fprintf(stderr, "symphony %s: unexpected argument '%s' (one config file only)\n", cli->cmd,
					argv[i]);
				return EXIT_USAGE;
			}
			cli->config = argv[i];
		} else if (argv[i][1] == '-' && !strchr(argv[i], '=') && strcmp(argv[i], "--quiet")) {
			if (i + 1 < argc && strncmp(argv[i + 1], "--", 2))
				i++; /* skip the value */
		}
	}
	if (cli->config && sym_experiment_load_file(e, cli->config, err, sizeof(err))) {
		fprintf(stderr, "symphony: %s\n", err);
		return EXIT_USAGE;
	}
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || !a[1])
			continue;
		if (strncmp(a, "--", 2)) {
			fprintf(stderr, "symphony %s: unknown option '%s' (see symphony help %s)\n", cli->cmd, a, cli->cmd);
			return EXIT_USAGE;
		}
		char name[64];
		const char *val = NULL;
		const char *eq = strchr(a + 2, '=');
		size_t nlen = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		if (nlen >= sizeof(name)) {
			fprintf(stderr, "symphony %s: unknown option '%s'\n", cli->cmd, a);
			return EXIT_USAGE;
		}
		memcpy(name, a + 2, nlen);
		name[nlen] = '\0';
		if (!strcmp(name, "quiet")) {
			cli->quiet = true;
			continue;
		}
		if (eq) {
			val = eq + 1;
		} else {
			if (i + 1 >= argc || !strncmp(argv[i + 1], "--", 2)) {
				fprintf(stderr, "symphony %s: option --%s needs a value (see symphony help %s)\n", cli->cmd,
					name, cli->cmd);
				return EXIT_USAGE;
			}
			val = argv[++i];
		}
		if (!strcmp(name, "config"))
			continue;
		if (!strcmp(name, "json")) {
			cli->json = val;
			continue;
		}
		if (!strcmp(name, "trace")) {
			cli->trace = val;
			continue;
		}
		if (!strcmp(name, "model-timeline")) {
			cli->model_timeline = val;
			continue;
		}
		if (!strcmp(name, "timeline")) {
			cli->timeline = val;
			continue;
		}
		if (!strcmp(cli->cmd, "loadcurve")) {
			const char **slot = !strcmp(name, "policies")	 ? &cli->policies
					    : !strcmp(name, "loads")	 ? &cli->loads
					    : !strcmp(name, "reference") ? &cli->reference
					    : !strcmp(name, "csv")	 ? &cli->csv
					    : !strcmp(name, "jobs")	 ? &cli->jobs
									 : NULL;
			if (slot) {
				*slot = val;
				continue;
			}
		}
		if (!strcmp(cli->cmd, "plan")) {
			const char **slot = !strcmp(name, "target-rate") ? &cli->target_rate
					    : !strcmp(name, "policies")  ? &cli->policies
					    : !strcmp(name, "max-gpus")  ? &cli->max_gpus
									 : NULL;
			if (slot) {
				*slot = val;
				continue;
			}
		}
		int rc = sym_experiment_apply_flag(e, name, val, err, sizeof(err));
		if (rc > 0) {
			fprintf(stderr, "symphony %s: unknown option '--%s' (see symphony help %s)\n", cli->cmd, name,
				cli->cmd);
			return EXIT_USAGE;
		}
		if (rc < 0) {
			fprintf(stderr, "symphony: %s\n", err);
			return EXIT_USAGE;
		}
	}
	const char *outs[] = { cli->json, cli->trace, cli->timeline, cli->model_timeline };
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		if (outs[i] && !outs[i][0]) {
			fprintf(stderr, "symphony %s: option --%s: the output file name is empty\n", cli->cmd,
				(const char *[]){ "json", "trace", "timeline", "model-timeline" }[i]);
			return EXIT_USAGE;
		}
	}
	if (sym_experiment_resolve(e, err, sizeof(err)) || sym_sim_check(e, err, sizeof(err))) {
		fprintf(stderr, "symphony: %s\n", err);
		return EXIT_USAGE;
	}
	return 0;
}

/* Runs one simulation with the requested outputs; with `done` (a complete
 * run at that rate) and no trace requested, reports it instead of running. */
static int run_outputs(const struct cli *cli, const struct sym_experiment *e, double rate, const char *command,
		       cJSON *extra, const struct sym_run_result *done)
{
	char err[1024];
	struct sym_outfile trace = { 0 };
	if (cli->trace) {
		if (sym_outfile_open(&trace, cli->trace, err, sizeof(err))) {
			fprintf(stderr, "symphony: %s\n", err);
			return 1;
		}
		char pol[128];
		fprintf(trace.f, "# symphony %s trace, policy %s, seed %llu, %d GPUs; times in ms\n", SYM_VERSION,
			sym_policy_format(&e->policy, pol, sizeof(pol)), (unsigned long long)e->seed, e->gpus);
		fprintf(trace.f, "gpu,kind,model,batch_size,start_ms,finish_ms,dropped_before\n");
	}
	struct sym_run_opts o = { .rate = rate, .trace = trace.f, .progress = !cli->quiet && isatty(2),
				  .model_timeline = cli->model_timeline != NULL };
	struct sym_run_result own = { 0 };
	const struct sym_run_result *rp = &own;
	if (done && !cli->trace && !cli->model_timeline) {
		rp = done;
	} else {
		int rc = sym_sim_run(e, &o, &own, err, sizeof(err));
		if (rc) {
			sym_outfile_abort(&trace);
			sym_run_result_finish(&own);
			fprintf(stderr, "symphony: %s\n", err);
			return rc == -EPROTO ? EXIT_INTERNAL : rc == -EINVAL ? EXIT_USAGE : 1;
		}
	}
	const struct sym_run_result r = *rp;
	int status = 0;
	if (cli->trace && sym_outfile_commit(&trace, err, sizeof(err))) {
		fprintf(stderr, "symphony: %s\n", err);
		status = 1;
	}
	if (cli->timeline && sym_write_timeline(cli->timeline, e, &r, err, sizeof(err))) {
		fprintf(stderr, "symphony: %s\n", err);
		status = 1;
	}
	if (cli->model_timeline && sym_write_model_timeline(cli->model_timeline, e, &r, err, sizeof(err))) {
		fprintf(stderr, "symphony: %s\n", err);
		status = 1;
	}
	bool json_stdout = cli->json && !strcmp(cli->json, "-");
	if (!cli->quiet) {
		FILE *f = json_stdout ? stderr : stdout;
		sym_result_print(f, command, e, &r);
		if (extra) {
			const cJSON *g = cJSON_GetObjectItem(extra, "goodput_rps");
			fprintf(f, "goodput: %.1f req/s (bad rate <= %g%%, tolerance %g%%)\n", g ? g->valuedouble : 0,
				100 * e->max_bad_rate, 100 * e->tolerance);
		}
	}
	if (cli->json) {
		cJSON *doc = sym_result_json(command, e, &r);
		if (extra)
			for (cJSON *it = extra->child; it; it = it->next)
				cJSON_AddItemToObject(doc, it->string, cJSON_Duplicate(it, true));
		if (sym_write_json(cli->json, doc, err, sizeof(err))) {
			fprintf(stderr, "symphony: %s\n", err);
			status = 1;
		}
		cJSON_Delete(doc);
	}
	sym_run_result_finish(&own);
	return status;
}

static int cmd_run(const char *cmd, int argc, char **argv)
{
	struct cli cli = { .cmd = cmd };
	struct sym_experiment e;
	if (sym_experiment_init(&e)) {
		fprintf(stderr, "symphony: out of memory\n");
		return 1;
	}
	int rc = parse_args(argc, argv, &cli, &e);
	if (rc) {
		sym_experiment_finish(&e);
		return rc;
	}
	if (!strcmp(cmd, "sim")) {
		double rate = (e.rate_csv[0] || e.nseg) ? 1 : e.rate;
		rc = run_outputs(&cli, &e, rate, "sim", NULL, NULL);
	} else {
		struct sym_goodput g;
		char err[1024];
		bool progress = !cli.quiet;
		if (progress)
			fprintf(stderr, "goodput search, upper bound from maximum batches on every GPU:\n");
		rc = sym_goodput_search(&e, progress, &g, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "symphony: %s\n", err);
			rc = rc == -EPROTO ? EXIT_INTERNAL : rc == -EINVAL ? EXIT_USAGE : 1;
		} else {
			cJSON *extra = cJSON_CreateObject();
			sym_goodput_add_json(extra, &g);
			if (g.scale > 0) {
				rc = run_outputs(&cli, &e, g.scale, "goodput", extra, g.have_run ? &g.run : NULL);
			} else {
				fprintf(stderr, "symphony: goodput is 0: even %.1f req/s has a bad rate above %g%%\n",
					g.nsteps ? g.steps[g.nsteps - 1].rate : 0, 100 * e.max_bad_rate);
				rc = run_outputs(&cli, &e, g.nsteps ? g.steps[g.nsteps - 1].rate / sym_schedule_mean_rate(&e) : 1,
						 "goodput", extra, NULL);
			}
			cJSON_Delete(extra);
		}
		sym_goodput_finish(&g);
	}
	sym_experiment_finish(&e);
	return rc;
}

#define MAX_POLICIES 16

/* The policies of --policies (';'-separated), else the experiment's.
 * Returns 0 or EXIT_USAGE after printing why. */
static int policy_list(const struct cli *cli, const struct sym_experiment *e, struct sym_policy *pols, int *npol)
{
	*npol = 0;
	if (!cli->policies) {
		pols[(*npol)++] = e->policy;
		return 0;
	}
	char err[512];
	char *list = strdup(cli->policies), *save = NULL;
	int rc = list ? 0 : 1;
	for (char *t = list ? strtok_r(list, ";", &save) : NULL; t && !rc; t = strtok_r(NULL, ";", &save)) {
		if (*npol == MAX_POLICIES || sym_policy_parse(t, &pols[*npol], err, sizeof(err))) {
			fprintf(stderr, "symphony %s: --policies: %s\n", cli->cmd,
				*npol == MAX_POLICIES ? "at most 16 policies" : err);
			rc = EXIT_USAGE;
		}
		++*npol;
	}
	if (!rc && !*npol) {
		fprintf(stderr, "symphony %s: --policies: no policy given\n", cli->cmd);
		rc = EXIT_USAGE;
	}
	free(list);
	return rc;
}

/* symphony plan: the smallest GPU count per policy for a target rate, beside
 * the analytic estimates. */
static int cmd_plan(int argc, char **argv)
{
	struct cli cli = { .cmd = "plan" };
	struct sym_experiment e;
	if (sym_experiment_init(&e)) {
		fprintf(stderr, "symphony: out of memory\n");
		return 1;
	}
	int rc = parse_args(argc, argv, &cli, &e);
	char err[1024];
	double rate = 0;
	int max_gpus = 100000;
	char *end = NULL;
	if (!rc && (cli.trace || cli.timeline || cli.model_timeline)) {
		fprintf(stderr, "symphony plan: --trace, --timeline and --model-timeline are not plan options (see symphony help plan)\n");
		rc = EXIT_USAGE;
	}
	if (!rc && !cli.target_rate) {
		fprintf(stderr, "symphony plan: --target-rate R is required (total requests per second)\n");
		rc = EXIT_USAGE;
	}
	if (!rc && (rate = strtod(cli.target_rate, &end), !*cli.target_rate || *end || !(rate > 0) || rate > 1e9)) {
		fprintf(stderr, "symphony plan: --target-rate: expected a rate > 0 req/s, got '%s'\n", cli.target_rate);
		rc = EXIT_USAGE;
	}
	if (!rc && cli.max_gpus &&
	    (max_gpus = (int)strtol(cli.max_gpus, &end, 10), !*cli.max_gpus || *end || max_gpus < 1 || max_gpus > 1000000)) {
		fprintf(stderr, "symphony plan: --max-gpus: expected an integer from 1 to 1000000, got '%s'\n",
			cli.max_gpus);
		rc = EXIT_USAGE;
	}
	if (!rc && (e.rate_csv[0] || e.nseg)) {
		fprintf(stderr, "symphony plan: plans for a constant --target-rate; remove the rate schedule "
				"(segments / rate_csv)\n");
		rc = EXIT_USAGE;
	}
	if (!rc && e.ngroups > 1) {
		fprintf(stderr, "symphony plan: plans a cluster of one device kind; give --gpus, not a cluster of "
				"%zu kinds\n", e.ngroups);
		rc = EXIT_USAGE;
	}
	struct sym_policy pols[MAX_POLICIES];
	int npol = 0;
	if (!rc)
		rc = policy_list(&cli, &e, pols, &npol);
	if (rc) {
		sym_experiment_finish(&e);
		return rc;
	}
	e.rate = rate;
	struct sym_plan_analytic an;
	sym_plan_analytic(&e, rate, max_gpus, &an);
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "program", "symphony");
	cJSON_AddStringToObject(doc, "version", SYM_VERSION);
	cJSON_AddStringToObject(doc, "command", "plan");
	cJSON_AddNumberToObject(doc, "seed", (double)e.seed);
	cJSON_AddNumberToObject(doc, "target_rate", rate);
	cJSON_AddNumberToObject(doc, "max_gpus", max_gpus);
	cJSON_AddItemToObject(doc, "config", sym_experiment_to_json(&e));
	cJSON *ana = cJSON_AddObjectToObject(doc, "analytic");
	cJSON_AddNumberToObject(ana, "staggered_gpus", an.staggered);
	cJSON_AddNumberToObject(ana, "nexus_gpus", an.nexus);
	cJSON *arr = cJSON_AddArrayToObject(doc, "policies");
	FILE *f = cli.json && !strcmp(cli.json, "-") ? stderr : stdout;
	if (!cli.quiet)
		fprintf(f, "symphony %s plan: %zu model(s), %.1f req/s, bad rate <= %g%%, seed %llu\n", SYM_VERSION,
			e.nmodels, rate, 100 * e.max_bad_rate, (unsigned long long)e.seed);
	for (int i = 0; i < npol && !rc; i++) {
		e.policy = pols[i];
		struct sym_plan_result pr;
		if ((rc = sym_sim_check(&e, err, sizeof(err))) ||
		    (rc = sym_plan_search(&e, rate, max_gpus, !cli.quiet, &pr, err, sizeof(err)))) {
			fprintf(stderr, "symphony: %s\n", err);
			rc = rc == -EPROTO ? EXIT_INTERNAL : rc == -EINVAL ? EXIT_USAGE : 1;
			break;
		}
		char name[128];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "policy", sym_policy_format(&pols[i], name, sizeof(name)));
		cJSON_AddNumberToObject(o, "gpus", pr.gpus);
		cJSON_AddNumberToObject(o, "bad_rate", pr.bad_rate);
		cJSON_AddNumberToObject(o, "simulations", pr.steps);
		cJSON_AddItemToArray(arr, o);
	}
	if (!rc && !cli.quiet) {
		fprintf(f, "\n%-28s %10s\n", "method", "GPUs");
		for (const cJSON *o = arr->child; o; o = o->next) {
			char label[160];
			snprintf(label, sizeof(label), "simulated: %s", cJSON_GetObjectItem(o, "policy")->valuestring);
			int g = (int)cJSON_GetObjectItem(o, "gpus")->valuedouble;
			if (g < 0)
				fprintf(f, "%-28.28s %10s\n", label, "> max");
			else
				fprintf(f, "%-28.28s %10d\n", label, g);
		}
		const struct {
			const char *label;
			int gpus;
		} rows[2] = { { "analytic: staggered", an.staggered }, { "analytic: nexus packing", an.nexus } };
		for (int i = 0; i < 2; i++) {
			if (rows[i].gpus < 0)
				fprintf(f, "%-28s %10s\n", rows[i].label, "> max");
			else
				fprintf(f, "%-28s %10d\n", rows[i].label, rows[i].gpus);
		}
	}
	if (!rc && cli.json && sym_write_json(cli.json, doc, err, sizeof(err))) {
		fprintf(stderr, "symphony: %s\n", err);
		rc = 1;
	}
	cJSON_Delete(doc);
	sym_experiment_finish(&e);
	return rc;
}

/* symphony loadcurve: goodput, bad rate and GPU use per policy from light
 * load to well past capacity. */
struct lc_point {
	int policy;
	double load, offered_rps, good_rps, bad_rate, busy, gpus_used, batch_p50;
};

struct lc {
	const struct sym_experiment *e;
	const struct sym_policy *pols;
	const double *loads;
	size_t nloads;
	double ref;
	struct lc_point *pts;
	pthread_mutex_t mu;
	char err[1024];
	int status;
};

static int lc_one(void *ctx, size_t k)
{
	struct lc *L = ctx;
	struct sym_experiment e = *L->e; /* shares the resolved parts, read-only; only the policy differs */
	int p = (int)(k / L->nloads);
	e.policy = L->pols[p];
	double load = L->loads[k % L->nloads];
	struct sym_run_opts o = { .rate = load * L->ref };
	struct sym_run_result r;
	char err[1024];
	int rc = sym_sim_run(&e, &o, &r, err, sizeof(err));
	if (!rc) {
		struct lc_point *pt = &L->pts[k];
		pt->policy = p;
		pt->load = load;
		pt->offered_rps = r.total.offered / r.window_s;
		pt->good_rps = r.total.served / r.window_s;
		pt->bad_rate = sym_bad_rate(&r.total);
		pt->busy = r.gpu_busy_fraction;
		pt->gpus_used = r.gpus_used;
		pt->batch_p50 = sym_batch_quantile(&r.total, 0.5);
	} else {
		pthread_mutex_lock(&L->mu);
		if (!L->status) {
			snprintf(L->err, sizeof(L->err), "%s", err);
			L->status = rc == -EPROTO ? EXIT_INTERNAL : rc == -EINVAL ? EXIT_USAGE : 1;
		}
		pthread_mutex_unlock(&L->mu);
	}
	sym_run_result_finish(&r);
	return rc ? 1 : 0;
}

static int cmd_loadcurve(int argc, char **argv)
{
	/* -j N is --jobs N */
	char **args = calloc((size_t)argc + 1, sizeof(char *));
	if (!args) {
		fprintf(stderr, "symphony: out of memory\n");
		return 1;
	}
	for (int i = 0; i < argc; i++)
		args[i] = !strcmp(argv[i], "-j") ? "--jobs" : argv[i];
	struct cli cli = { .cmd = "loadcurve" };
	struct sym_experiment e;
	if (sym_experiment_init(&e)) {
		free(args);
		fprintf(stderr, "symphony: out of memory\n");
		return 1;
	}
	int rc = parse_args(argc, args, &cli, &e);
	free(args);
	char err[1024], *end;
	double loads[256];
	size_t nloads = 0;
	double ref = 0;
	int jobs = sym_ncpus();
	if (!rc && (cli.trace || cli.timeline || cli.model_timeline)) {
		fprintf(stderr, "symphony loadcurve: --trace, --timeline and --model-timeline are not loadcurve options\n");
		rc = EXIT_USAGE;
	}
	if (!rc && (e.rate_csv[0] || e.nseg)) {
		fprintf(stderr, "symphony loadcurve: sweeps a constant rate; remove the rate schedule (segments / "
				"rate_csv)\n");
		rc = EXIT_USAGE;
	}
	if (!rc && cli.loads) {
		char *list = strdup(cli.loads), *save = NULL;
		for (char *t = list ? strtok_r(list, ",", &save) : NULL; t && !rc; t = strtok_r(NULL, ",", &save)) {
			double x = strtod(t, &end);
			if (nloads == 256) {
				fprintf(stderr, "symphony loadcurve: --loads: at most 256 loads\n");
				rc = EXIT_USAGE;
			} else if (*end || !(x > 0) || x > 100) {
				fprintf(stderr, "symphony loadcurve: --loads: expected fractions of the reference from 0 "
						"(excluded) to 100 (e.g. 0.5,1,1.5), got '%s'\n", t);
				rc = EXIT_USAGE;
			} else {
				loads[nloads++] = x;
			}
		}
		free(list);
		if (!rc && !nloads) {
			fprintf(stderr, "symphony loadcurve: --loads: no load given\n");
			rc = EXIT_USAGE;
		}
	} else if (!rc) {
		for (int i = 1; i <= 20; i++)
			loads[nloads++] = 0.1 * i;
	}
	if (!rc && cli.reference &&
	    (ref = strtod(cli.reference, &end), !*cli.reference || *end || !(ref > 0) || ref > 1e9)) {
		fprintf(stderr, "symphony loadcurve: --reference: expected a rate > 0 req/s, got '%s'\n", cli.reference);
		rc = EXIT_USAGE;
	}
	if (!rc && cli.jobs) {
		long j = strtol(cli.jobs, &end, 10);
		if (!*cli.jobs || *end || j < 1 || j > 4096) {
			fprintf(stderr, "symphony loadcurve: --jobs: expected 1 to 4096, got '%s'\n", cli.jobs);
			rc = EXIT_USAGE;
		}
		jobs = (int)j;
	}
	struct sym_policy pols[MAX_POLICIES];
	int npol = 0;
	if (!rc)
		rc = policy_list(&cli, &e, pols, &npol);
	for (int i = 0; i < npol && !rc; i++) {
		e.policy = pols[i];
		if (sym_sim_check(&e, err, sizeof(err))) {
			fprintf(stderr, "symphony: %s\n", err);
			rc = EXIT_USAGE;
		}
	}
	if (rc) {
		sym_experiment_finish(&e);
		return rc;
	}
	char pname[128];
	FILE *f = cli.json && !strcmp(cli.json, "-") ? stderr : stdout;
	const char *ref_from = "--reference";
	if (!(ref > 0)) {
		e.policy = pols[0];
		struct sym_goodput g;
		if (!cli.quiet)
			fprintf(stderr, "reference: the goodput of %s ...\n", sym_policy_format(&pols[0], pname, sizeof(pname)));
		rc = sym_goodput_search(&e, false, &g, err, sizeof(err));
		ref = g.goodput_rps > 0 ? g.goodput_rps : g.upper_bound_rps / 10;
		ref_from = g.goodput_rps > 0 ? "goodput of the first policy"
					     : "a tenth of the capacity bound: the first policy's goodput is 0";
		sym_goodput_finish(&g);
		if (rc) {
			fprintf(stderr, "symphony: %s\n", err);
			sym_experiment_finish(&e);
			return rc == -EPROTO ? EXIT_INTERNAL : rc == -EINVAL ? EXIT_USAGE : 1;
		}
	}
	struct lc L = { .e = &e, .pols = pols, .loads = loads, .nloads = nloads, .ref = ref };
	L.pts = calloc((size_t)npol * nloads, sizeof(*L.pts));
	if (!L.pts) {
		fprintf(stderr, "symphony: out of memory\n");
		sym_experiment_finish(&e);
		return 1;
	}
	pthread_mutex_init(&L.mu, NULL);
	if (!cli.quiet)
		fprintf(stderr, "loadcurve: %d polic%s x %zu loads of %.1f req/s, %d at a time\n", npol,
			npol == 1 ? "y" : "ies", nloads, ref, jobs);
	sym_parallel_for((size_t)npol * nloads, jobs, lc_one, &L);
	pthread_mutex_destroy(&L.mu);
	if (L.status) {
		fprintf(stderr, "symphony: %s\n", L.err);
		free(L.pts);
		sym_experiment_finish(&e);
		return L.status;
	}
	size_t npts = (size_t)npol * nloads;
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "program", "symphony");
	cJSON_AddStringToObject(doc, "version", SYM_VERSION);
	cJSON_AddStringToObject(doc, "command", "loadcurve");
	cJSON_AddNumberToObject(doc, "seed", (double)e.seed);
	cJSON_AddNumberToObject(doc, "reference_rps", ref);
	cJSON_AddStringToObject(doc, "reference", ref_from);
	e.policy = pols[0];
	cJSON_AddItemToObject(doc, "config", sym_experiment_to_json(&e));
	cJSON *arr = cJSON_AddArrayToObject(doc, "points");
	for (size_t k = 0; k < npts; k++) {
		const struct lc_point *pt = &L.pts[k];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "policy", sym_policy_format(&pols[pt->policy], pname, sizeof(pname)));
		cJSON_AddNumberToObject(o, "load", pt->load);
		cJSON_AddNumberToObject(o, "offered_rps", pt->offered_rps);
		cJSON_AddNumberToObject(o, "goodput_rps", pt->good_rps);
		cJSON_AddNumberToObject(o, "bad_rate", pt->bad_rate);
		cJSON_AddNumberToObject(o, "gpu_busy_fraction", pt->busy);
		cJSON_AddNumberToObject(o, "gpus_used", pt->gpus_used);
		cJSON_AddNumberToObject(o, "batch_p50", pt->batch_p50);
		cJSON_AddItemToArray(arr, o);
	}
	if (!cli.quiet) {
		fprintf(f, "symphony %s loadcurve: %zu model(s), %d GPUs, seed %llu; load 1 = %.1f req/s (%s)\n",
			SYM_VERSION, e.nmodels, e.gpus, (unsigned long long)e.seed, ref, ref_from);
		for (int p = 0; p < npol; p++) {
			fprintf(f, "\n%s\n%6s %12s %12s %9s %9s %9s %7s\n", sym_policy_format(&pols[p], pname, sizeof(pname)),
				"load", "offered r/s", "goodput r/s", "bad rate", "GPU busy", "in use", "batch");
			for (size_t i = 0; i < nloads; i++) {
				const struct lc_point *pt = &L.pts[(size_t)p * nloads + i];
				fprintf(f, "%6.2f %12.1f %12.1f %8.2f%% %8.0f%% %9.0f %7.0f\n", pt->load, pt->offered_rps,
					pt->good_rps, 100 * pt->bad_rate, 100 * pt->busy, pt->gpus_used, pt->batch_p50);
			}
		}
	}
	int status = 0;
	if (cli.csv) {
		struct sym_outfile of = { 0 };
		if (sym_outfile_open(&of, cli.csv, err, sizeof(err))) {
			fprintf(stderr, "symphony: %s\n", err);
			status = 1;
		} else {
			fprintf(of.f, "# symphony %s loadcurve, seed %llu, reference %.3f req/s\n", SYM_VERSION,
				(unsigned long long)e.seed, ref);
			fprintf(of.f, "policy,load,offered_rps,goodput_rps,bad_rate,gpu_busy_fraction,gpus_used,batch_p50\n");
			for (size_t k = 0; k < npts; k++) {
				const struct lc_point *pt = &L.pts[k];
				fprintf(of.f, "\"%s\",%g,%.3f,%.3f,%.6f,%.6f,%.0f,%.0f\n",
					sym_policy_format(&pols[pt->policy], pname, sizeof(pname)), pt->load, pt->offered_rps,
					pt->good_rps, pt->bad_rate, pt->busy, pt->gpus_used, pt->batch_p50);
			}
			if (sym_outfile_commit(&of, err, sizeof(err))) {
				fprintf(stderr, "symphony: %s\n", err);
				status = 1;
			}
		}
	}
	if (cli.json && sym_write_json(cli.json, doc, err, sizeof(err))) {
		fprintf(stderr, "symphony: %s\n", err);
		status = 1;
	}
	cJSON_Delete(doc);
	free(L.pts);
	sym_experiment_finish(&e);
	return status;
}

int main(int argc, char **argv)
{
	gsl_set_error_handler_off();
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h"))
		return help(argc > 2 ? argv[2] : NULL);
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		printf("symphony %s\n", SYM_VERSION);
		return 0;
	}
	if (sym_rt_is_command(cmd))
		return sym_rt_main(argc - 1, argv + 1);
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return help(cmd);
	if (!strcmp(cmd, "sim") || !strcmp(cmd, "goodput"))
		return cmd_run(cmd, argc - 2, argv + 2);
	if (!strcmp(cmd, "models"))
		return cmd_models(argc - 2, argv + 2);
	if (!strcmp(cmd, "policies"))
		return cmd_policies();
	if (!strcmp(cmd, "profile"))
		return sym_profiler_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "plan"))
		return cmd_plan(argc - 2, argv + 2);
	if (!strcmp(cmd, "loadcurve"))
		return cmd_loadcurve(argc - 2, argv + 2);
	if (!strcmp(cmd, "sweep"))
		return sym_cmd_sweep(argc - 2, argv + 2);
	if (!strcmp(cmd, "merge"))
		return sym_cmd_merge(argc - 2, argv + 2);
	fprintf(stderr, "symphony: unknown command '%s'\n\n", cmd);
	usage(stderr);
	return EXIT_USAGE;
}
