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

#include "core/build.h"
#include "core/error.h"
#include "experiment/config.h"
#include "experiment/estimate.h"
#include "experiment/interrupt.h"
#include "experiment/output.h"
#include "experiment/result.h"
#include "profiles/zoo.h"
#include "sim/engine.h"
#include "sim/goodput.h"
#include "sim/plan.h"
#include "sim/sweep.h"
#include "sym_version.h"
#include "cli/rtmodule.h" /* the runtime's commands, loaded when one runs */

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
		"  goodput   find the highest rate at which every model has bad rate <= 1%% (bisection)\n"
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
		"--trace FILE|-", goodput ? "CSV, one row per batch, of the run at the goodput" : "CSV, one row per batch",
		"--timeline FILE|-", "CSV per interval: offered, good, bad, busy GPUs, autoscaling advice",
		"--model-timeline FILE|-", "CSV per interval and model: offered, good, bad",
		"--quiet", "no table and no progress on stderr");
	fprintf(f,
		"  A CSV has one header line; its provenance and configuration go to FILE.meta.json beside it\n"
		"  (none when written to stdout or a device). - is stdout (the table then goes to stderr), for\n"
		"  one output at most. A file is replaced whole when complete (through a link, the link's\n"
		"  target); a device or FIFO is written as it is. Ctrl-C removes the partial files (exit 130).\n");
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
				"Finds the highest total offered rate that passes the criterion, by bisection\n"
				"between 0 and the rate at which every GPU would be busy with maximum-size batches,\n"
				"to within --tolerance (relative). Every step reuses the seed. Prints the steps,\n"
				"then the run at the goodput.\n\n"
				"--criterion per-model (default; the papers' goodput): every model's bad count\n"
				"(late + dropped, of its requests measured after the warm-up) is at most\n"
				"max(--max-bad-rate x its offered, 1), and a model whose measured requests are all\n"
				"bad fails however few they are. --criterion aggregate: (late + dropped) / offered\n"
				"of all requests together <= --max-bad-rate. Results name the worst model\n"
				"(worst_model, worst_model_bad_rate) and warn when a model had fewer than\n"
				"1/--max-bad-rate measured requests.\n\n"
				"--seeds N: N searches, seeds --seed, --seed + 1, ..., --seed + N - 1, in parallel;\n"
				"goodput_rps is their mean, goodput_ci95 its 95%% interval (Student t; null for\n"
				"N = 1), goodput_by_seed the N goodputs. The metrics and the config (its rate: that\n"
				"goodput) are of the first seed's run at its own goodput, so `symphony sim\n"
				"RESULT.json` repeats that run (metrics_from names it); at_goodput has, per seed\n"
				"and as mean and interval, each seed's run at its goodput: median and mean batch,\n"
				"queueing p50/p99/max (ms), GPU busy fraction. -j N (--jobs N): searches in\n"
				"parallel (default: every core).\n\n");
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
			"whose simulation at R req/s in total passes the criterion (--criterion per-model,\n"
			"the default: every model's bad rate <= --max-bad-rate; see symphony help goodput):\n"
			"doubling from 1 GPU, then bisection, one simulation per step with the same seed; a\n"
			"failing step stops early. Beside them, two analytic estimates: staggered execution\n"
			"(per model the smallest N with (1 + 1/N) l(b) <= SLO and N b / l(b) >= its rate,\n"
			"summed over the models) and the Nexus squishy-packing plan of the whole workload.\n"
			"Mixed-model workloads are simulated as a whole, with their popularity split of R.\n"
			"One device kind only.\n\n"
			"--seeds N: one search per seed (--seed, ..., --seed + N - 1, in parallel). The\n"
			"answer (gpus) is the largest count, the one that served R under every seed; beside\n"
			"it the count per seed (gpus_by_seed), their range and mean with its 95%% interval.\n"
			"The bad rate and worst model are the first seed's at its count (metrics_from).\n"
			"-j N (--jobs N): searches in parallel (default: every core).\n\n"
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
			"goodput of the first policy (found by search, under --criterion). A flat top\n"
			"(goodput holding near its peak past capacity) and busy GPUs following the load are\n"
			"what a good policy shows. Each point names its worst model, over the models'\n"
			"requests pooled across the seeds. --seeds N: every point runs seeds --seed ...\n"
			"--seed + N - 1 (and the reference is the mean of N goodputs); points show the mean\n"
			"and 95%% interval of goodput and bad rate (goodput_ci95, bad_rate_ci95), and the\n"
			"other columns the mean.\n\n"
			"  %-30s %s\n  %-30s %s\n  %-30s %s\n  %-30s %s\n  %-30s %s\n\n",
			"--policies P1;P2;...", "policies, ';'-separated (default: the experiment's --policy)",
			"--loads F1,F2,...", "fractions of the reference (default 0.1,0.2,...,2.0)",
			"--reference R", "the rate that is load 1 (default: the first policy's goodput)",
			"-j N, --jobs N", "simulations in parallel (default: every core)",
			"--csv FILE|-", "one row per (policy, load); its sidecar FILE.meta.json has the reference");
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
			"  \"arrival\": \"poisson\",          poisson | uniform | gamma:K (0.001 <= K <= 1e6)\n"
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
			"  \"max_bad_rate\": 0.01, \"tolerance\": 0.005,\n"
			"  \"criterion\": \"per-model\",        per-model: every model's bad rate <= max_bad_rate\n"
			"                                   (default) | aggregate: all requests together\n"
			"  \"replications\": 1                goodput, plan, loadcurve, sweep: seeds seed ..\n"
			"                                   seed+N-1, reported as mean and 95%% interval (--seeds)\n"
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
/* --jobs N (-j N) of goodput and plan: N > 0, default every core; -1 (with a
 * message) when malformed. */
static int cli_jobs(const struct cli *cli)
{
	if (!cli->jobs)
		return sym_ncpus();
	char *end;
	long j = strtol(cli->jobs, &end, 10);
	if (!*cli->jobs || *end || j < 1 || j > 4096) {
		fprintf(stderr, "symphony %s: --jobs: expected 1 to 4096, got '%s'\n", cli->cmd, cli->jobs);
		return -1;
	}
	return (int)j;
}

static int parse_args(int argc, char **argv, struct cli *cli, struct sym_experiment *e)
{
	char err[1024];
	/* -j N is --jobs N (goodput, plan, loadcurve) */
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "-j"))
			argv[i] = (char *)"--jobs";
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
		if ((!strcmp(cli->cmd, "goodput") || !strcmp(cli->cmd, "plan")) && !strcmp(name, "jobs")) {
			cli->jobs = val;
			continue;
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
	const char *outs[] = { cli->json, cli->trace, cli->timeline, cli->model_timeline, cli->csv };
	const char *const out_names[] = { "--json", "--trace", "--timeline", "--model-timeline", "--csv" };
	if (sym_outputs_check(out_names, outs, sizeof(outs) / sizeof(outs[0]), err, sizeof(err))) {
		fprintf(stderr, "symphony %s: %s\n", cli->cmd, err);
		return EXIT_USAGE;
	}
	if (sym_experiment_resolve(e, err, sizeof(err)) || sym_sim_check(e, err, sizeof(err))) {
		fprintf(stderr, "symphony: %s\n", err);
		return EXIT_USAGE;
	}
	return 0;
}

#define TRACE_DESCRIPTION                                                                                     \
	"one row per batch dispatched: the GPU (index and kind), the model, the batch size, its start and "   \
	"finish (ms of simulated time) and the requests of its queue dropped just before it"

/* Runs one simulation with the requested outputs at rate option `rate`;
 * with g (goodput searches) the run is g's kept run, which is reported as it
 * is unless a trace or per-model timeline asks for it to run again. */
static int run_outputs(const struct cli *cli, const struct sym_experiment *e, double rate, const char *command,
		       const struct sym_goodput_reps *g)
{
	char err[1024];
	struct sym_outfile trace = { 0 };
	if (cli->trace) {
		if (sym_outfile_open(&trace, cli->trace, err, sizeof(err))) {
			fprintf(stderr, "symphony: %s\n", err);
			return 1;
		}
		fprintf(trace.f, "gpu,kind,model,batch_size,start_ms,finish_ms,dropped_before\n");
	}
	struct sym_run_opts o = { .rate = rate, .trace = trace.f, .progress = !cli->quiet && isatty(2),
				  .model_timeline = cli->model_timeline != NULL };
	struct sym_run_result own = { 0 };
	const struct sym_run_result *rp = &own;
	if (g && !cli->trace && !cli->model_timeline) {
		rp = &g->by_seed[0].run;
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
	if (cli->trace && sym_csv_commit(&trace, sym_csv_meta(command, "trace", TRACE_DESCRIPTION, e), err, sizeof(err))) {
		fprintf(stderr, "symphony: %s\n", err);
		status = 1;
	}
	if (cli->timeline && sym_write_timeline(cli->timeline, command, e, &r, err, sizeof(err))) {
		fprintf(stderr, "symphony: %s\n", err);
		status = 1;
	}
	if (cli->model_timeline && sym_write_model_timeline(cli->model_timeline, command, e, &r, err, sizeof(err))) {
		fprintf(stderr, "symphony: %s\n", err);
		status = 1;
	}
	/* the table moves to stderr when an output takes stdout */
	bool any_stdout = sym_output_is_stdout(cli->json) || sym_output_is_stdout(cli->trace) ||
			  sym_output_is_stdout(cli->timeline) || sym_output_is_stdout(cli->model_timeline);
	if (!cli->quiet) {
		FILE *f = any_stdout ? stderr : stdout;
		sym_result_print(f, command, e, &r);
		if (g) {
			double *x = malloc(g->n * sizeof(*x));
			for (size_t i = 0; x && i < g->n; i++)
				x[i] = g->by_seed[i].goodput_rps;
			char pm[128];
			fprintf(f, "goodput: %s req/s (%s criterion, bad rate <= %g%%, tolerance %g%%)\n",
				x ? sym_format_pm(pm, sizeof(pm), "%.1f", x, g->n) : "?", sym_criterion_name(e->criterion),
				100 * e->max_bad_rate, 100 * e->tolerance);
			if (x && g->n > 1)
				fprintf(f, "  the mean of %zu seeds (%llu to %llu) with its 95%% interval; the table is seed %llu's "
					   "run at its goodput, %.1f req/s\n", g->n, (unsigned long long)g->seed,
					(unsigned long long)(g->seed + g->n - 1), (unsigned long long)g->seed, x[0]);
			free(x);
		}
	}
	sym_warn_few_requests(stderr, g ? "at the goodput" : "", e, &r);
	if (cli->json) {
		cJSON *doc = g ? sym_goodput_result_json(e, g, &r) : sym_result_json(command, e, &r);
		if (!doc) {
			fprintf(stderr, "symphony: out of memory\n");
			status = 1;
		} else if (sym_write_json(cli->json, doc, err, sizeof(err))) {
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
	char err[1024];
	if (!strcmp(cmd, "sim")) {
		double rate = (e.rate_csv[0] || e.nseg) ? 1 : e.rate;
		if (sym_estimate_check(&e, rate, 0, cli.model_timeline != NULL, 1, err, sizeof(err))) {
			fprintf(stderr, "symphony sim: %s\n", err);
			sym_experiment_finish(&e);
			return EXIT_USAGE;
		}
		if (e.replications > 1 && !cli.quiet)
			fprintf(stderr, "symphony sim: one run, seed %llu (replications apply to goodput, plan, loadcurve and "
					"sweep)\n", (unsigned long long)e.seed);
		rc = run_outputs(&cli, &e, rate, "sim", NULL);
	} else {
		struct sym_goodput_reps g;
		memset(&g, 0, sizeof(g));
		bool progress = !cli.quiet;
		int jobs = cli_jobs(&cli);
		if (jobs < 0) {
			rc = EXIT_USAGE; /* the message is out */
		} else if (sym_estimate_check(&e, sym_goodput_upper_bound(&e) / sym_schedule_mean_rate(&e), 0,
					      cli.model_timeline != NULL, jobs < e.replications ? jobs : e.replications,
					      err, sizeof(err))) {
			fprintf(stderr, "symphony goodput: %s (at the search's upper bound)\n", err);
			rc = EXIT_USAGE;
			jobs = -1; /* nothing ran */
		} else {
			if (progress)
				fprintf(stderr, "goodput search (%s criterion%s), upper bound from maximum batches on every "
						"GPU:\n", sym_criterion_name(e.criterion),
					e.replications > 1 ? ", one search per seed" : "");
			rc = sym_goodput_replicate(&e, jobs, progress, &g, err, sizeof(err));
		}
		if (jobs < 0) {
			/* nothing ran */
		} else if (rc) {
			fprintf(stderr, "symphony: %s\n", err);
			rc = rc == -EPROTO ? EXIT_INTERNAL : rc == -EINVAL ? EXIT_USAGE : 1;
		} else {
			const struct sym_goodput *g0 = &g.by_seed[0];
			if (!(g0->goodput_rps > 0))
				fprintf(stderr, "symphony: goodput is 0%s: even %.1f req/s fails the %s criterion (bad rate <= "
						"%g%%)\n", g.n > 1 ? " for the first seed" : "",
					g0->nsteps ? g0->steps[g0->nsteps - 1].rate : 0, sym_criterion_name(e.criterion),
					100 * e.max_bad_rate);
			rc = run_outputs(&cli, &e, g.run_scale, "goodput", &g);
		}
		sym_goodput_reps_finish(&g);
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
	int jobs = rc ? 1 : cli_jobs(&cli);
	if (jobs < 0)
		rc = EXIT_USAGE;
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
	/* the search doubles its GPU count past the answer: about twice the larger estimate */
	int est = an.staggered > an.nexus ? an.staggered : an.nexus;
	int top_gpus = est < 0 || 2.0 * est > max_gpus ? max_gpus : 2 * est + 1;
	if (sym_estimate_check(&e, rate, top_gpus, false, jobs < e.replications ? jobs : e.replications, err,
			       sizeof(err))) {
		fprintf(stderr, "symphony plan: %s (at up to %d GPUs)\n", err, top_gpus);
		sym_experiment_finish(&e);
		return EXIT_USAGE;
	}
	cJSON *doc = sym_result_head("plan");
	cJSON_AddNumberToObject(doc, "seed", (double)e.seed);
	cJSON_AddNumberToObject(doc, "replications", e.replications);
	cJSON_AddStringToObject(doc, "criterion", sym_criterion_name(e.criterion));
	cJSON_AddNumberToObject(doc, "target_rate", rate);
	cJSON_AddNumberToObject(doc, "max_gpus", max_gpus);
	cJSON_AddItemToObject(doc, "config", sym_experiment_to_json(&e));
	cJSON *ana = cJSON_AddObjectToObject(doc, "analytic");
	cJSON_AddNumberToObject(ana, "staggered_gpus", an.staggered);
	cJSON_AddNumberToObject(ana, "nexus_gpus", an.nexus);
	cJSON *arr = cJSON_AddArrayToObject(doc, "policies");
	FILE *f = cli.json && !strcmp(cli.json, "-") ? stderr : stdout;
	if (!cli.quiet) {
		char seeds[64];
		snprintf(seeds, sizeof(seeds), e.replications > 1 ? "seeds %llu..%llu" : "seed %llu",
			 (unsigned long long)e.seed, (unsigned long long)(e.seed + (uint64_t)e.replications - 1));
		fprintf(f, "symphony %s plan: %zu model(s), %.1f req/s, bad rate <= %g%% (%s criterion), %s\n", SYM_VERSION,
			e.nmodels, rate, 100 * e.max_bad_rate, sym_criterion_name(e.criterion), seeds);
	}
	size_t nrep = e.replications > 1 ? (size_t)e.replications : 1;
	struct sym_plan_result *prs = calloc(nrep, sizeof(*prs));
	double *x = calloc(nrep, sizeof(*x));
	if (!prs || !x) {
		fprintf(stderr, "symphony: out of memory\n");
		rc = 1;
	}
	char lines[MAX_POLICIES][400];
	for (int i = 0; i < npol && !rc; i++) {
		e.policy = pols[i];
		if ((rc = sym_sim_check(&e, err, sizeof(err))) ||
		    (rc = sym_plan_replicate(&e, rate, max_gpus, jobs, !cli.quiet, prs, err, sizeof(err)))) {
			fprintf(stderr, "symphony: %s\n", err);
			rc = rc == -EPROTO ? EXIT_INTERNAL : rc == -EINVAL ? EXIT_USAGE : 1;
			break;
		}
		/* the answer serves the rate under every seed: the largest count (-1 when one is above max) */
		int gmax = 0, gmin = -1, steps = 0;
		bool over = false;
		for (size_t k = 0; k < nrep; k++) {
			over |= prs[k].gpus < 0;
			if (prs[k].gpus >= 0 && (gmin < 0 || prs[k].gpus < gmin))
				gmin = prs[k].gpus;
			if (prs[k].gpus > gmax)
				gmax = prs[k].gpus;
			x[k] = prs[k].gpus;
			steps += prs[k].steps;
		}
		if (over)
			gmax = -1;
		const struct sym_plan_result *p0 = &prs[0];
		char name[128];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "policy", sym_policy_format(&pols[i], name, sizeof(name)));
		cJSON_AddNumberToObject(o, "gpus", gmax);
		cJSON_AddNumberToObject(o, "replications", (double)nrep);
		cJSON *by = cJSON_AddArrayToObject(o, "gpus_by_seed");
		for (size_t k = 0; k < nrep; k++)
			cJSON_AddItemToArray(by, cJSON_CreateNumber(prs[k].gpus));
		cJSON_AddNumberToObject(o, "gpus_min", gmin);
		cJSON_AddNumberToObject(o, "gpus_max", gmax);
		double mean = 0, lo, hi;
		sym_mean_ci95(x, nrep, &mean, &lo, &hi);
		if (over) {
			cJSON_AddNullToObject(o, "gpus_mean");
			cJSON_AddNullToObject(o, "gpus_ci95");
		} else {
			cJSON_AddNumberToObject(o, "gpus_mean", mean);
			cJSON_AddItemToObject(o, "gpus_ci95", sym_ci95_json(x, nrep));
		}
		cJSON *from = cJSON_AddObjectToObject(o, "metrics_from");
		cJSON_AddNumberToObject(from, "seed", (double)e.seed);
		cJSON_AddNumberToObject(from, "gpus", p0->gpus);
		cJSON_AddNumberToObject(o, "bad_rate", p0->bad_rate);
		if (p0->worst >= 0)
			cJSON_AddStringToObject(o, "worst_model", e.models[p0->worst].name);
		else
			cJSON_AddNullToObject(o, "worst_model");
		cJSON_AddNumberToObject(o, "worst_model_bad_rate", p0->worst_bad_rate);
		cJSON_AddNumberToObject(o, "few_request_models", (double)p0->few);
		cJSON_AddNumberToObject(o, "simulations", steps);
		cJSON_AddItemToArray(arr, o);
		if (p0->few)
			fprintf(stderr, "symphony: warning: %s at %d GPUs: %zu model%s had fewer than %llu measured requests, "
					"too few for a bad rate of %g%% to mean much\n", name, p0->gpus, p0->few,
				p0->few == 1 ? "" : "s", (unsigned long long)sym_min_requests(e.max_bad_rate),
				100 * e.max_bad_rate);
		if (cli.quiet)
			continue;
		char label[160], gp[32], worst[160] = "-", seeds[160] = "", pm[96];
		snprintf(label, sizeof(label), "simulated: %s", name);
		snprintf(gp, sizeof(gp), gmax < 0 ? "> max" : "%d", gmax);
		if (p0->gpus >= 0 && p0->worst >= 0)
			snprintf(worst, sizeof(worst), "%.20s (%.2f%%)", e.models[p0->worst].name, 100 * p0->worst_bad_rate);
		if (nrep > 1 && !over)
			snprintf(seeds, sizeof(seeds), "%d..%d, mean %s", gmin, gmax,
				 sym_format_pm(pm, sizeof(pm), "%.1f", x, nrep));
		else if (nrep > 1)
			snprintf(seeds, sizeof(seeds), gmin < 0 ? "> max for every seed" : "%d..> max", gmin);
		if (nrep > 1)
			snprintf(lines[i], sizeof(lines[i]), "%-28.28s %10s  %-32s %s", label, gp, worst, seeds);
		else
			snprintf(lines[i], sizeof(lines[i]), "%-28.28s %10s  %s", label, gp, worst);
	}
	if (!rc && !cli.quiet) {
		if (nrep > 1)
			fprintf(f, "\n%-28s %10s  %-32s %s\n", "method", "GPUs", "worst model there (bad rate)",
				"GPUs over the seeds");
		else
			fprintf(f, "\n%-28s %10s  %s\n", "method", "GPUs", "worst model there (bad rate)");
		for (int i = 0; i < npol; i++)
			fprintf(f, "%s\n", lines[i]);
	}
	free(prs);
	free(x);
	if (!rc && !cli.quiet) {
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
		if (nrep > 1)
			fprintf(f, "GPUs: the most any of the %zu seeds (%llu to %llu) needed; the worst model is seed %llu's, at "
				   "its count\n", nrep, (unsigned long long)e.seed, (unsigned long long)(e.seed + nrep - 1),
				(unsigned long long)e.seed);
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
 * load to well past capacity. One simulation per (policy, load, seed): run k
 * is point k / nrep's seed k % nrep. */
struct lc_run {
	double offered_rps, good_rps, bad_rate, busy, gpus_used, batch_p50;
	size_t few;
};

/* A point: the mean over its seeds (their values in x_*), the models pooled
 * over the seeds for the worst model. */
struct lc_point {
	int policy;
	double load, offered_rps, good_rps, bad_rate, busy, gpus_used, batch_p50;
	size_t few;           /* the most models with few requests in one seed's run */
	struct sym_verdict v; /* of the pooled counts */
};

struct lc {
	const struct sym_experiment *e;
	const struct sym_policy *pols;
	const double *loads;
	size_t nloads;
	size_t nrep;
	double ref;
	struct lc_run *runs;   /* npol * nloads * nrep */
	uint64_t *counts;      /* per run and model: offered, bad ([(k * nmodels + m) * 2 + 0..1]) */
	pthread_mutex_t mu;
	char err[1024];
	size_t err_run;        /* the run whose error is reported: the first by index */
	int status;
};

static int lc_one(void *ctx, size_t k)
{
	struct lc *L = ctx;
	struct sym_experiment e = *L->e; /* shares the resolved parts, read-only; policy and seed differ */
	size_t pt = k / L->nrep;
	e.policy = L->pols[pt / L->nloads];
	e.seed = L->e->seed + k % L->nrep;
	double load = L->loads[pt % L->nloads];
	struct sym_run_opts o = { .rate = load * L->ref };
	struct sym_run_result r;
	char err[1024];
	int rc = sym_sim_run(&e, &o, &r, err, sizeof(err));
	if (!rc) {
		struct lc_run *x = &L->runs[k];
		x->offered_rps = r.total.offered / r.window_s;
		x->good_rps = r.total.served / r.window_s;
		x->bad_rate = sym_bad_rate(&r.total);
		x->busy = r.gpu_busy_fraction;
		x->gpus_used = r.gpus_used;
		x->batch_p50 = sym_batch_quantile(&r.total, 0.5);
		struct sym_verdict v;
		sym_judge(&e, &r, &v);
		x->few = v.few;
		for (size_t m = 0; m < r.nmodels; m++) {
			L->counts[(k * r.nmodels + m) * 2] = r.models[m].offered;
			L->counts[(k * r.nmodels + m) * 2 + 1] = r.models[m].late + r.models[m].dropped;
		}
	} else {
		pthread_mutex_lock(&L->mu);
		if (!L->status || k < L->err_run) {
			snprintf(L->err, sizeof(L->err), "%s", err);
			L->status = rc == -EPROTO ? EXIT_INTERNAL : rc == -EINVAL ? EXIT_USAGE : 1;
			L->err_run = k;
		}
		pthread_mutex_unlock(&L->mu);
	}
	sym_run_result_finish(&r);
	return rc ? 1 : 0;
}

/* Point pt from its runs: the means, and the verdict on the models' counts
 * pooled over the seeds. Returns 0 or -ENOMEM. */
static int lc_point_make(const struct lc *L, size_t pt, struct lc_point *out)
{
	const struct sym_experiment *e = L->e;
	size_t n = L->nrep, nm = e->nmodels;
	memset(out, 0, sizeof(*out));
	out->policy = (int)(pt / L->nloads);
	out->load = L->loads[pt % L->nloads];
	for (size_t s = 0; s < n; s++) {
		const struct lc_run *x = &L->runs[pt * n + s];
		out->offered_rps += x->offered_rps / (double)n;
		out->good_rps += x->good_rps / (double)n;
		out->bad_rate += x->bad_rate / (double)n;
		out->busy += x->busy / (double)n;
		out->gpus_used += x->gpus_used / (double)n;
		out->batch_p50 += x->batch_p50 / (double)n;
		out->few = x->few > out->few ? x->few : out->few;
	}
	struct sym_run_result pooled = { .nmodels = nm };
	pooled.models = calloc(nm, sizeof(*pooled.models));
	if (!pooled.models)
		return -ENOMEM;
	for (size_t s = 0; s < n; s++) {
		for (size_t m = 0; m < nm; m++) {
			const uint64_t *c = &L->counts[((pt * n + s) * nm + m) * 2];
			pooled.models[m].offered += c[0];
			pooled.models[m].late += c[1];
			pooled.total.offered += c[0];
			pooled.total.late += c[1];
		}
	}
	struct sym_experiment pe = *e;
	pe.policy = L->pols[out->policy];
	sym_judge(&pe, &pooled, &out->v);
	free(pooled.models);
	return 0;
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
	FILE *f = sym_output_is_stdout(cli.json) || sym_output_is_stdout(cli.csv) ? stderr : stdout;
	const char *ref_from = "--reference";
	size_t nrep = e.replications > 1 ? (size_t)e.replications : 1;
	cJSON *ref_by_seed = NULL, *ref_ci = NULL;
	if (!(ref > 0)) {
		e.policy = pols[0];
		if (sym_estimate_check(&e, sym_goodput_upper_bound(&e), 0, false, jobs < (int)nrep ? jobs : (int)nrep, err,
				       sizeof(err))) {
			fprintf(stderr, "symphony loadcurve: %s (the reference's goodput search, at its upper bound)\n", err);
			sym_experiment_finish(&e);
			return EXIT_USAGE;
		}
		struct sym_goodput_reps g;
		if (!cli.quiet)
			fprintf(stderr, "reference: the goodput of %s (%s criterion%s) ...\n",
				sym_policy_format(&pols[0], pname, sizeof(pname)), sym_criterion_name(e.criterion),
				nrep > 1 ? ", the mean over the seeds" : "");
		rc = sym_goodput_replicate(&e, jobs, false, &g, err, sizeof(err));
		if (!rc) {
			ref = g.mean > 0 ? g.mean : g.by_seed[0].upper_bound_rps / 10;
			ref_from = g.mean > 0 ? "goodput of the first policy"
					      : "a tenth of the capacity bound: the first policy's goodput is 0";
			double *x = malloc(nrep * sizeof(*x));
			ref_by_seed = cJSON_CreateArray();
			for (size_t i = 0; x && i < nrep; i++) {
				x[i] = g.by_seed[i].goodput_rps;
				cJSON_AddItemToArray(ref_by_seed, cJSON_CreateNumber(x[i]));
			}
			ref_ci = x ? sym_ci95_json(x, nrep) : NULL;
			free(x);
		}
		sym_goodput_reps_finish(&g);
		if (rc) {
			fprintf(stderr, "symphony: %s\n", err);
			sym_experiment_finish(&e);
			return rc == -EPROTO ? EXIT_INTERNAL : rc == -EINVAL ? EXIT_USAGE : 1;
		}
	}
	size_t npts = (size_t)npol * nloads, nruns = npts * nrep;
	double top = 0;
	for (size_t i = 0; i < nloads; i++)
		top = loads[i] > top ? loads[i] : top;
	if (sym_estimate_check(&e, top * ref, 0, false, (size_t)jobs < nruns ? jobs : (int)nruns, err, sizeof(err))) {
		fprintf(stderr, "symphony loadcurve: %s (at load %g)\n", err, top);
		cJSON_Delete(ref_by_seed);
		cJSON_Delete(ref_ci);
		sym_experiment_finish(&e);
		return EXIT_USAGE;
	}
	struct lc L = { .e = &e, .pols = pols, .loads = loads, .nloads = nloads, .nrep = nrep, .ref = ref };
	L.runs = calloc(nruns, sizeof(*L.runs));
	L.counts = calloc(nruns * e.nmodels * 2, sizeof(*L.counts));
	struct lc_point *pts = calloc(npts, sizeof(*pts));
	if (!L.runs || !L.counts || !pts) {
		fprintf(stderr, "symphony: out of memory\n");
		free(L.runs);
		free(L.counts);
		free(pts);
		cJSON_Delete(ref_by_seed);
		cJSON_Delete(ref_ci);
		sym_experiment_finish(&e);
		return 1;
	}
	pthread_mutex_init(&L.mu, NULL);
	if (!cli.quiet)
		fprintf(stderr, "loadcurve: %d polic%s x %zu loads of %.1f req/s%s, %d at a time\n", npol,
			npol == 1 ? "y" : "ies", nloads, ref, nrep > 1 ? " x seeds" : "", jobs);
	sym_parallel_for(nruns, jobs, lc_one, &L);
	pthread_mutex_destroy(&L.mu);
	int status = L.status;
	if (status)
		fprintf(stderr, "symphony: %s\n", L.err);
	for (size_t k = 0; k < npts && !status; k++) {
		if (lc_point_make(&L, k, &pts[k])) {
			fprintf(stderr, "symphony: out of memory\n");
			status = 1;
		}
	}
	if (status) {
		free(L.runs);
		free(L.counts);
		free(pts);
		cJSON_Delete(ref_by_seed);
		cJSON_Delete(ref_ci);
		sym_experiment_finish(&e);
		return status;
	}
	cJSON *doc = sym_result_head("loadcurve");
	cJSON_AddNumberToObject(doc, "seed", (double)e.seed);
	cJSON_AddNumberToObject(doc, "replications", (double)nrep);
	cJSON_AddStringToObject(doc, "criterion", sym_criterion_name(e.criterion));
	cJSON_AddNumberToObject(doc, "reference_rps", ref);
	cJSON_AddStringToObject(doc, "reference", ref_from);
	if (ref_by_seed) {
		cJSON_AddItemToObject(doc, "reference_ci95", ref_ci ? ref_ci : cJSON_CreateNull());
		cJSON_AddItemToObject(doc, "reference_by_seed", ref_by_seed);
	}
	e.policy = pols[0];
	cJSON_AddItemToObject(doc, "config", sym_experiment_to_json(&e));
	cJSON *arr = cJSON_AddArrayToObject(doc, "points");
	double *gx = calloc(nrep, sizeof(*gx)), *bx = calloc(nrep, sizeof(*bx));
	double *ux = calloc(nrep, sizeof(*ux)), *px = calloc(nrep, sizeof(*px));
	size_t nfew = 0;
	for (size_t k = 0; gx && bx && ux && px && k < npts; k++) {
		const struct lc_point *pt = &pts[k];
		for (size_t s = 0; s < nrep; s++) {
			gx[s] = L.runs[k * nrep + s].good_rps;
			bx[s] = L.runs[k * nrep + s].bad_rate;
			ux[s] = L.runs[k * nrep + s].busy;
			px[s] = L.runs[k * nrep + s].batch_p50;
		}
		nfew += pt->few > 0;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "policy", sym_policy_format(&pols[pt->policy], pname, sizeof(pname)));
		cJSON_AddNumberToObject(o, "load", pt->load);
		cJSON_AddNumberToObject(o, "offered_rps", pt->offered_rps);
		cJSON_AddNumberToObject(o, "goodput_rps", pt->good_rps);
		cJSON_AddItemToObject(o, "goodput_ci95", sym_ci95_json(gx, nrep));
		cJSON_AddNumberToObject(o, "bad_rate", pt->bad_rate);
		cJSON_AddItemToObject(o, "bad_rate_ci95", sym_ci95_json(bx, nrep));
		cJSON_AddNumberToObject(o, "gpu_busy_fraction", pt->busy);
		cJSON_AddItemToObject(o, "gpu_busy_fraction_ci95", sym_ci95_json(ux, nrep));
		cJSON_AddNumberToObject(o, "gpus_used", pt->gpus_used);
		cJSON_AddNumberToObject(o, "batch_p50", pt->batch_p50);
		cJSON_AddItemToObject(o, "batch_p50_ci95", sym_ci95_json(px, nrep));
		cJSON_AddBoolToObject(o, "meets_criterion", pt->v.ok);
		if (pt->v.worst >= 0)
			cJSON_AddStringToObject(o, "worst_model", e.models[pt->v.worst].name);
		else
			cJSON_AddNullToObject(o, "worst_model");
		cJSON_AddNumberToObject(o, "worst_model_bad_rate", pt->v.worst_bad_rate);
		cJSON_AddNumberToObject(o, "few_request_models", (double)pt->few);
		cJSON *gs = cJSON_AddArrayToObject(o, "goodput_by_seed");
		cJSON *bs = cJSON_AddArrayToObject(o, "bad_rate_by_seed");
		cJSON *us = cJSON_AddArrayToObject(o, "gpu_busy_fraction_by_seed");
		cJSON *ps = cJSON_AddArrayToObject(o, "batch_p50_by_seed");
		for (size_t s = 0; s < nrep; s++) {
			cJSON_AddItemToArray(gs, cJSON_CreateNumber(gx[s]));
			cJSON_AddItemToArray(bs, cJSON_CreateNumber(bx[s]));
			cJSON_AddItemToArray(us, cJSON_CreateNumber(ux[s]));
			cJSON_AddItemToArray(ps, cJSON_CreateNumber(px[s]));
		}
		cJSON_AddItemToArray(arr, o);
	}
	if (nfew)
		fprintf(stderr, "symphony: warning: at %zu of %zu points some model had fewer than %llu measured requests, "
				"too few for a bad rate of %g%% to mean much (few_request_models)\n", nfew, npts,
			(unsigned long long)sym_min_requests(e.max_bad_rate), 100 * e.max_bad_rate);
	if (!cli.quiet && gx && bx) {
		char seeds[96];
		snprintf(seeds, sizeof(seeds), nrep > 1 ? "seeds %llu..%llu (mean \u00b1 95%% interval)" : "seed %llu",
			 (unsigned long long)e.seed, (unsigned long long)(e.seed + nrep - 1));
		fprintf(f, "symphony %s loadcurve: %zu model(s), %d GPUs, %s criterion, %s; load 1 = %.1f req/s (%s)\n",
			SYM_VERSION, e.nmodels, e.gpus, sym_criterion_name(e.criterion), seeds, ref, ref_from);
		for (int p = 0; p < npol; p++) {
			fprintf(f, "\n%s\n%6s %12s %16s %16s %9s %7s %6s  %s\n",
				sym_policy_format(&pols[p], pname, sizeof(pname)), "load", "offered r/s", "goodput r/s",
				"bad rate %", "GPU busy", "in use", "batch", "worst model (bad rate)");
			for (size_t i = 0; i < nloads; i++) {
				size_t k = (size_t)p * nloads + i;
				const struct lc_point *pt = &pts[k];
				for (size_t s = 0; s < nrep; s++) {
					gx[s] = L.runs[k * nrep + s].good_rps;
					bx[s] = 100 * L.runs[k * nrep + s].bad_rate;
				}
				char g[64], b[64], w[96] = "-";
				if (pt->v.worst >= 0)
					snprintf(w, sizeof(w), "%.24s (%.2f%%)", e.models[pt->v.worst].name, 100 * pt->v.worst_bad_rate);
				sym_format_pm(g, sizeof(g), "%.0f", gx, nrep);
				sym_format_pm(b, sizeof(b), "%.2f", bx, nrep);
				/* the width counts bytes: one more for the two of a UTF-8 "±" */
				fprintf(f, "%6.2f %12.1f %*s %*s %8.0f%% %7.0f %6.0f  %s\n", pt->load, pt->offered_rps,
					16 + (nrep > 1), g, 16 + (nrep > 1), b, 100 * pt->busy, pt->gpus_used, pt->batch_p50, w);
			}
		}
	}
	if (cli.csv) {
		struct sym_outfile of = { 0 };
		if (sym_outfile_open(&of, cli.csv, err, sizeof(err))) {
			fprintf(stderr, "symphony: %s\n", err);
			status = 1;
		} else {
			fprintf(of.f, "policy,load,offered_rps,goodput_rps,bad_rate,gpu_busy_fraction,gpus_used,batch_p50,"
				      "goodput_ci95_low,goodput_ci95_high,bad_rate_ci95_low,bad_rate_ci95_high,worst_model,"
				      "worst_model_bad_rate\n");
			for (size_t k = 0; gx && bx && k < npts; k++) {
				const struct lc_point *pt = &pts[k];
				for (size_t s = 0; s < nrep; s++) {
					gx[s] = L.runs[k * nrep + s].good_rps;
					bx[s] = L.runs[k * nrep + s].bad_rate;
				}
				double m, glo, ghi, blo, bhi;
				bool ci = sym_mean_ci95(gx, nrep, &m, &glo, &ghi);
				sym_mean_ci95(bx, nrep, &m, &blo, &bhi);
				fprintf(of.f, "\"%s\",%g,%.3f,%.3f,%.6f,%.6f,%g,%g,",
					sym_policy_format(&pols[pt->policy], pname, sizeof(pname)), pt->load, pt->offered_rps,
					pt->good_rps, pt->bad_rate, pt->busy, pt->gpus_used, pt->batch_p50);
				if (ci)
					fprintf(of.f, "%.3f,%.3f,%.6f,%.6f,", glo, ghi, blo, bhi);
				else
					fprintf(of.f, ",,,,");
				fprintf(of.f, "\"%s\",%.6f\n", pt->v.worst >= 0 ? e.models[pt->v.worst].name : "",
					pt->v.worst_bad_rate);
			}
			cJSON *meta = sym_csv_meta("loadcurve", "loadcurve", "one row per (policy, load): the offered rate, the "
						   "goodput (served within the SLO), the bad rate, the GPU busy fraction, "
						   "the GPUs in use and the median batch (means over the seeds), the 95% "
						   "intervals of goodput and bad rate (empty for one seed) and the worst "
						   "model", &e);
			cJSON_AddNumberToObject(meta, "replications", (double)nrep);
			cJSON_AddStringToObject(meta, "criterion", sym_criterion_name(e.criterion));
			cJSON_AddNumberToObject(meta, "reference_rps", ref);
			cJSON_AddStringToObject(meta, "reference", ref_from);
			if (sym_csv_commit(&of, meta, err, sizeof(err))) {
				fprintf(stderr, "symphony: %s\n", err);
				status = 1;
			}
		}
	}
	free(gx);
	free(bx);
	free(ux);
	free(px);
	if (cli.json && sym_write_json(cli.json, doc, err, sizeof(err))) {
		fprintf(stderr, "symphony: %s\n", err);
		status = 1;
	}
	cJSON_Delete(doc);
	free(L.runs);
	free(L.counts);
	free(pts);
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
		printf("symphony %s (commit %s)\n", SYM_VERSION, sym_build_commit());
		return 0;
	}
	if (sym_rt_is_command(cmd))
		return sym_rt_main(argc - 1, argv + 1);
	/* the simulator's commands: a signal removes their temporary files (experiment/interrupt.h) */
	sym_provenance_begin();
	sym_interrupt_install(cmd);
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
