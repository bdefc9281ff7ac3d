/* cli/commands.c - the command table: every command's description, options
 * and help in one place (cli/cli.h), and main(). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "cli/cli.h"
#include "core/suggest.h"
#include "experiment/interrupt.h"
#include "experiment/result.h"
#include "core/profile.h"
#include "sym_version.h"

/* The tables below leave an option's trailing fields (default, range,
 * choices) out when it has none: they are zero. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* ---- options shared by several commands ---- */

static const struct cli_opt o_json = { "json", 0, CLI_OUT, "FILE|-", "write the result as JSON (- for stdout)" };
static const struct cli_opt o_trace = { "trace", 0, CLI_OUT, "FILE|-", "CSV, one row per batch (- for stdout)" };
static const struct cli_opt o_trace_g = { "trace", 0, CLI_OUT, "FILE|-",
					  "CSV, one row per batch, of the run at the goodput (- for stdout)" };
static const struct cli_opt o_timeline = { "timeline", 0, CLI_OUT, "FILE|-",
					   "CSV per interval: offered, good, bad, busy GPUs, autoscaling advice" };
static const struct cli_opt o_model_timeline = { "model-timeline", 0, CLI_OUT, "FILE|-",
						 "CSV per interval and model: offered, good, bad" };
static const struct cli_opt o_quiet = { "quiet", 0, CLI_FLAG, NULL, "no table and no progress on stderr" };
static const struct cli_opt o_jobs = { "jobs", 'j', CLI_INT, "N", "simulations in parallel (default: every core)",
				       NULL, 1, 4096 };
static const struct cli_opt o_policies = { "policies", 0, CLI_TEXT, "P1;P2;...",
					   "policies, ';'-separated (parameters use ','; default: the experiment's "
					   "--policy)" };

static const struct cli_opt o_config = { "config", 0, CLI_TEXT, "FILE|-",
					 "the experiment file (also the first argument; - reads standard input)" };
static const struct cli_opt o_cluster_config = { "config", 0, CLI_TEXT, "FILE|-",
						 "the cluster file (also the first argument; - reads standard input)" };

/* ---- the simulator ---- */

static const struct cli_opt *const sim_opts[] = { &o_config, &o_json, &o_trace, &o_timeline, &o_model_timeline, &o_quiet,
						  NULL };
static const struct cli_opt *const goodput_opts[] = { &o_config, &o_json, &o_trace_g, &o_timeline, &o_model_timeline,
						      &o_jobs, &o_quiet, NULL };

/* how every output option writes (experiment/output.h) */
#define OUTPUTS_TEXT                                                                                          \
	"Outputs: a file is replaced whole when complete (through a symbolic link, the link's target; the link "   \
	"stays); a device or FIFO is written as it is; - is standard output (the table then goes to stderr), "   \
	"for one output at most; a directory is refused before anything runs. A CSV has one header line; its "  \
	"provenance and configuration go to the sidecar FILE.meta.json beside it (none on stdout or a device). " \
	"Every JSON result has a provenance object: version, commit, modified, build_type, date. Ctrl-C or "      \
	"SIGTERM removes the partial files and exits 130 (143)."

static const char sim_text[] =
	"Simulates the experiment at the offered rate: arrivals for --duration seconds, then the queues drain; "
	"metrics count requests arriving after --warmup. Prints a table per model; --json writes every metric "
	"with the resolved configuration, so that `symphony sim RESULT.json` repeats the run. One run, one seed "
	"(replications apply to goodput, plan, loadcurve and sweep).\n\n"
	OUTPUTS_TEXT;

static const char goodput_text[] =
	"Finds the highest total offered rate that passes the criterion, by bisection between 0 and the rate at "
	"which every GPU would be busy with maximum-size batches, to within --tolerance (relative). Every step "
	"reuses the seed. Prints the steps, then the run at the goodput.\n\n"
	"--criterion per-model (default; the papers' goodput): every model's bad count (late + dropped, of its "
	"requests measured after the warm-up) is at most max(--max-bad-rate x its offered, 1), and a model whose "
	"measured requests are all bad fails however few they are. --criterion aggregate: (late + dropped) / "
	"offered of all requests together <= --max-bad-rate. Results name the worst model (worst_model, "
	"worst_model_bad_rate) and warn when a model had fewer than 1/--max-bad-rate measured requests.\n\n"
	"--seeds N: N searches, seeds --seed, --seed + 1, ..., --seed + N - 1, in parallel; goodput_rps is their "
	"mean, goodput_by_seed the N goodputs, goodput_bracket_by_seed each search's last bracket (its highest "
	"passing and lowest failing rate), and goodput_ci95 the 95% interval: from the low end of the Student t "
	"interval over the passing rates to the high end of the one over the failing rates, so that it holds the "
	"search's resolution as well as the seeds' spread (null for N = 1). The "
	"metrics and the config (its rate: that goodput) are of the first seed's run at its own goodput, so "
	"`symphony sim RESULT.json` repeats that run (metrics_from names it); at_goodput has, per seed and as mean "
	"and interval, each seed's run at its goodput: median and mean batch, queueing p50/p99/max (ms), GPU busy "
	"fraction.\n\n"
	"When even the lowest rate tried fails, there is no goodput: the command says so, goodput_rps is 0 and "
	"meets_criterion false, and the exit status is 0 (the answer is a measurement, not an error).\n\n"
	OUTPUTS_TEXT;

static const struct cli_opt o_target = { "target-rate", 0, CLI_NUM, "R",
					 "total offered requests per second to serve (required unless every model has a "
					 "\"rate\" of its own: then their sum, which this scales)", NULL, 1e-6, 1e9 };
static const struct cli_opt o_max_gpus = { "max-gpus", 0, CLI_INT, "N",
					   "give up above N GPUs (reported as none meeting the target)", "100000", 1,
					   1000000 };
static const struct cli_opt o_emit = { "emit-cluster", 0, CLI_OUT, "FILE",
				       "write a runtime cluster file for the first policy's answer: the experiment (models, "
				       "profiles, SLOs, policy, the target rate) on that many GPUs, with one frontend and a "
				       "backend per GPU (and the sub-clusters memory needs), which scripts/cluster-local FILE "
				       "and symphony schedd FILE start as it is" };
static const struct cli_opt *const plan_opts[] = { &o_config, &o_target, &o_policies, &o_max_gpus, &o_jobs, &o_json,
						   &o_emit, &o_quiet, NULL };

static const struct cli_opt o_pa_sub = { "subclusters", 0, CLI_INT, "L", "sub-clusters (parts) to divide the models into",
					  "2", 1, 100000 };
static const struct cli_opt o_pa_rmax = { "r-max", 0, CLI_NUM, "REQ/S",
					  "R_max: the most request rate one sub-cluster's ranker takes (default: no limit)",
					  NULL, 1e-9, 1e12 };
static const struct cli_opt o_pa_smax = { "s-max", 0, CLI_NUM, "MB",
					  "S_max: the memory every GPU of a sub-cluster has for its models (default: the "
					  "GPU kind's memory_mb)", NULL, 1e-9, 1e12 };
static const struct cli_opt o_pa_w = { "weight", 0, CLI_NUM, "W",
				       "w of the objective dR + w dS (default: the average rate over the average static "
				       "memory, so that relative imbalances weigh the same)", NULL, 1e-12, 1e12 };
static const struct cli_opt o_pa_time = { "time-limit", 0, CLI_NUM, "S", "the solver's time limit, seconds", "10",
					  0.01, 86400 };
static const struct cli_opt o_pa_random = { "random", 0, CLI_FLAG, NULL,
					    "also run the paper's random baseline for the same time" };
static const struct cli_opt o_pa_variants = { "variants", 0, CLI_INT, "K",
					      "each model K times (the paper's variants of zoo models)", "1", 1, 10000 };
static const struct cli_opt o_pa_rates = { "rates", 0, CLI_TEXT, "config|exponential",
					   "the models' rates: the experiment's, or drawn from an exponential distribution "
					   "with that mean (seeded by --seed)", "config" };
static const struct cli_opt o_pa_configs = { "configs", 0, CLI_INT, "N",
					     "a study (Figure 15 of the paper): N configurations, each --sample models drawn "
					     "from the experiment's with exponential rates (seeds seed, seed+1, ...), solved by "
					     "the MILP and by the random baseline; prints the imbalance factors' distribution "
					     "(0: one problem, the experiment's models)", "0", 0, 100000 };
static const struct cli_opt o_pa_sample = { "sample", 0, CLI_INT, "M",
					    "with --configs: models per configuration, drawn with replacement (variants)",
					    "800", 1, 1000000 };
static const struct cli_opt o_pa_clusters = { "clusters", 0, CLI_INT, "C",
					      "two levels: first split the models among C clusters (schedulers) by the same "
					      "MILP (rate and static memory balanced, no memory limit), then each cluster's "
					      "models among --subclusters (1: one level)", "1", 1, 10000 };
static const struct cli_opt o_pa_crmax = { "cluster-r-max", 0, CLI_NUM, "REQ/S",
					   "with --clusters: the most request rate one scheduler takes (default: no limit)",
					   NULL, 1e-9, 1e12 };
static const struct cli_opt *const partition_opts[] = { &o_config, &o_pa_sub, &o_pa_rmax, &o_pa_smax, &o_pa_w,
							&o_pa_time, &o_pa_random, &o_pa_variants, &o_pa_rates, &o_pa_configs,
							&o_pa_sample, &o_pa_clusters, &o_pa_crmax, &o_json, &o_quiet, NULL };

static const char partition_text[] =
	"Divides the experiment's models among L sub-clusters as the orchestration paper's Appendix A "
	"(symphony-centralized-orchestration.md, Section 4.7): a mixed integer linear program over which "
	"sub-cluster serves each model, minimising dR + w dS, the largest distance of a sub-cluster's request rate "
	"(dR) and static memory (dS) from their averages, such that each sub-cluster's rate is at most R_max and "
	"its static memory plus the largest dynamic memory of its models is at most S_max (every GPU of it holds "
	"all its models). Solved with COIN-OR CBC within --time-limit, from a start found by a greedy assignment "
	"and a local search (the best solution found is printed, with its status: optimal when proven). Prints "
	"each sub-cluster's rate and memory and the imbalance factors (max - min) / average of rate and of "
	"static memory; --random adds the paper's baseline (random assignments, checked and scored, the best "
	"kept) for the same time. A model's rate is its share of --rate; models with unknown memory count 0. "
	"With --configs N it runs the paper's Figure 15 study instead: N random configurations of --sample "
	"models each (drawn from the experiment's models with replacement, rates exponential with mean --rate / "
	"M), each solved by both methods within --time-limit, and prints the quantiles of the rate and memory "
	"imbalance factors of each (--json: every configuration's, for a CDF).";

static const char plan_text[] =
	"For each policy (default: the experiment's --policy), the smallest number of GPUs whose simulation at R "
	"req/s in total passes the criterion (--criterion per-model, the default: every model's bad rate <= "
	"--max-bad-rate; see symphony help goodput): doubling from 1 GPU, then bisection, one simulation per step "
	"with the same seed; a failing step stops early. Beside them, two analytic estimates: staggered execution "
	"(per model the smallest N with (1 + 1/N) l(b) <= SLO and N b / l(b) >= its rate, summed over the models) "
	"and the Nexus squishy-packing plan of the whole workload. Mixed-model workloads are simulated as a whole, "
	"with their popularity split of R (or each model's own \"rate\"). One device kind only.\n\n"
	"A rate schedule (segments, rate_csv, arrival_trace): the plan is for the schedule as written (R is its mean total rate), "
	"or scaled so that its mean is --target-rate; every simulation runs the whole schedule, so its peaks are "
	"what the count must serve. The analytic estimates take each model's mean rate.\n\n"
	"When no count up to --max-gpus serves R, the answer says so plainly (gpus null, meets_criterion false) "
	"and reports what was measured at --max-gpus: its bad rate and worst model.\n\n"
	"--seeds N: one search per seed (--seed, ..., --seed + N - 1, in parallel). The answer (gpus) is the "
	"largest count, the one that served R under every seed; beside it the count per seed (gpus_by_seed), "
	"their range and mean with its 95% interval. The bad rate and worst_model are the first seed's at its "
	"count (metrics_from); worst_at_answer is measured at the answer's count under every seed (each seed's "
	"worst model there, and the worst of them), which the table shows. Each answer carries its headroom (the "
	"goodput there, every seed), its margin (the model that fails first at one GPU fewer) and, with "
	"sub-clusters, one pool's goodput on the same GPUs.";

static const struct cli_opt o_loads = { "loads", 0, CLI_TEXT, "F1,F2,...",
					"fractions of the reference (default 0.1,0.2,...,2.0)" };
static const struct cli_opt o_reference = { "reference", 0, CLI_NUM, "R",
					    "the rate that is load 1 (default: the first policy's goodput)", NULL,
					    1e-6, 1e9 };
static const struct cli_opt o_csv = { "csv", 0, CLI_OUT, "FILE|-", "one row per (policy, load)" };
static const struct cli_opt *const loadcurve_opts[] = { &o_config, &o_policies, &o_loads, &o_reference, &o_jobs, &o_json,
							&o_csv, &o_quiet, NULL };

static const char loadcurve_text[] =
	"Offered load from light to well past capacity, one simulation per (policy, load): the rate served within "
	"the SLO (goodput), the bad rate, the GPU busy fraction and the GPUs in use. Loads are fractions of a "
	"reference rate: --reference R req/s, else the goodput of the first policy (found by search, under "
	"--criterion). A flat top (goodput holding near its peak past capacity) and busy GPUs following the load "
	"are what a good policy shows. Each point names its worst model, over the models' requests pooled across "
	"the seeds. A rate schedule (segments, rate_csv, arrival_trace) is scaled so that its mean total is each "
	"load's rate.\n\n"
	"--seeds N: every point runs seeds --seed ... --seed + N - 1 (and the reference is the mean of N "
	"goodputs); points show the mean and 95% interval of goodput and bad rate (goodput_ci95, bad_rate_ci95), "
	"and the other columns the mean.";

static const struct cli_opt o_out_dir = { "out", 0, CLI_TEXT, "DIR",
					  "output directory (default sweep-NAME, or sweep-NAME/shard-I-of-N)" };
static const struct cli_opt o_resume = { "resume", 0, CLI_FLAG, NULL,
					 "skip points already in DIR/results.jsonl (else an existing file is refused)" };
static const struct cli_opt o_list = { "list", 0, CLI_FLAG, NULL,
				       "print the manifest (index, key) of the shard, run nothing" };
static const struct cli_opt o_shard = { "shard", 0, CLI_TEXT, "I/N",
					"run points with index % N == I (0 <= I < N); default from Slurm's "
					"SLURM_ARRAY_TASK_ID/_COUNT/_MIN" };
static const struct cli_opt o_seeds = { "seeds", 0, CLI_INT, "N",
					"replications for every point (the key \"replications\"; after the axes)", NULL,
					1, 1000 };
static const struct cli_opt o_criterion = { "criterion", 0, CLI_CHOICE, "per-model|aggregate",
					    "the criterion of every point (after the axes)", NULL, 0, 0,
					    "per-model|aggregate" };
static const struct cli_opt o_per_model = { "per-model", 0, CLI_FLAG, NULL,
					    "keep per-model results in each line (larger files)" };
static const struct cli_opt o_quiet_sweep = { "quiet", 0, CLI_FLAG, NULL, "no progress lines" };
static const struct cli_opt o_jobs_sweep = { "jobs", 'j', CLI_INT, "N", "points run in parallel (default: every core)",
					     NULL, 1, 4096 };
static const struct cli_opt *const sweep_opts[] = { &o_out_dir, &o_jobs_sweep, &o_resume, &o_list, &o_shard,
						    &o_seeds, &o_criterion, &o_per_model, &o_quiet_sweep, NULL };

static const char sweep_text[] =
	"Runs every point of a grid: a base experiment and the axes to vary, e.g.\n\n"
	"  {\"name\": \"slo-burst\", \"compute\": \"goodput\",\n"
	"   \"base\": {\"zoo\": \"gtx1080ti\", \"models\": [\"ResNet50V2\"], \"gpus\": 8},\n"
	"   \"axes\": {\"slo_ms\": [20, 50], \"arrival\": [\"poisson\", \"gamma:0.1\"],\n"
	"            \"policy\": [\"symphony\", \"eager\"],\n"
	"            \"@load\": [{\"num_models\": 8, \"gpus_per_model\": 2}, {\"rate\": 900}]}}\n\n"
	"Any configuration key can be an axis (symphony help config); an axis named @LABEL takes objects of keys "
	"set together (and an optional \"label\"). \"base\" may also be a config file path (relative to the grid "
	"file). compute: \"goodput\" (the goodput search, default) or \"sim\" (one run at the configured rate). "
	"The points are the product of the axes, the last varying fastest.\n\n"
	"Each point's result (grid, point index, key, version, seed, full resolved config and metrics) is "
	"appended as one JSON line to DIR/results.jsonl as soon as it finishes.\n\n"
	"With replications (key \"replications\", or --seeds N) a point runs seeds seed..seed+N-1 one after the "
	"other; its line has the mean (goodput_rps), the 95% interval (goodput_ci95, null for one seed) and the "
	"per-seed values (goodput_by_seed), and the metrics of the first seed's run (metrics_from); \"sim\" lines "
	"have the mean, interval and per-seed values of bad_rate and goodput_served_rps (bad_rate_mean, "
	"bad_rate_ci95, bad_rate_by_seed, ...). Every line names the worst model (worst_model, "
	"worst_model_bad_rate) under the criterion (\"criterion\", --criterion).\n\n"
	"Every point is checked before any runs. A point's line is the same whichever shard, thread or machine "
	"runs it. Interrupted (Ctrl-C), a sweep keeps the lines written so far: --resume continues it.";

static const struct cli_opt o_out_merge = { "out", 0, CLI_TEXT, "DIR",
					    "write DIR/results.jsonl (default: standard output)" };
static const struct cli_opt *const merge_opts[] = { &o_out_merge, NULL };

static const char merge_text[] =
	"Combines the results.jsonl of shard directories (or results files) into one, sorted by point index. "
	"Refuses, naming the file and line: lines of different symphony versions or grids, a point present twice, "
	"an incomplete last line. Reports how many of the grid's points are present.";

/* ---- information ---- */

static const struct cli_opt o_zoo = { "zoo", 0, CLI_TEXT, "a100|gtx1080ti|FILE", "the profile zoo", "a100" };
static const struct cli_opt o_json_list = { "json", 0, CLI_FLAG, NULL, "print JSON instead of the table" };
static const struct cli_opt *const models_opts[] = { &o_zoo, &o_json_list, NULL };
static const struct cli_opt *const policies_opts[] = { &o_json_list, NULL };
static const struct cli_opt o_markdown = { "markdown", 0, CLI_FLAG, NULL,
					   "print the whole command-line reference (docs/cli.md) in Markdown" };
static const struct cli_opt *const help_opts[] = { &o_markdown, NULL };

static const char models_text[] =
	"Lists the models of a zoo with alpha, beta, SLO and the largest batch: the one the profile declares "
	"(max_batch, or the length of its latency table), else the largest b with l(b) <= its SLO.";

/* ---- the runtime ---- */

static const struct cli_opt o_id = { "id", 0, CLI_INT, "I", "this frontend's or backend's index in the cluster",
				     NULL, 0, 65535 };
static const struct cli_opt o_json_rt = { "json", 0, CLI_OUT, "FILE|-",
					  "(schedd, loadgen) the result object, - for stdout" };
static const struct cli_opt o_quiet_rt = { "quiet", 0, CLI_FLAG, NULL, "no informational lines" };
static const struct cli_opt o_verbose = { "verbose", 0, CLI_FLAG, NULL, "log every connection event" };
static const struct cli_opt o_check = { "check", 0, CLI_FLAG, NULL, "check the configuration and exit" };
static const struct cli_opt o_log_format = { "log-format", 0, CLI_CHOICE, "text|json",
					     "text lines, or one JSON object a line (time, level, role, id, msg, and a "
					     "request's trace fields)", "text", 0, 0, "text|json" };
static const struct cli_opt o_log_level = { "log-level", 0, CLI_CHOICE, "debug|info|warn|error",
					    "the least level logged; debug also traces every request and batch by id",
					    "info", 0, 0, "debug|info|warn|error" };
static const struct cli_opt *const process_opts[] = { &o_cluster_config, &o_id, &o_json_rt, &o_quiet_rt, &o_verbose,
						      &o_log_format, &o_log_level, &o_check, NULL };
static const struct cli_opt o_subcluster = { "subcluster", 0, CLI_INT, "J",
					     "the sub-cluster this backend joins when it first registers, whatever its "
					     "GPU's was (default: $SYMPHONY_SUBCLUSTER when set, as in `symphony autoscale`'s "
					     "add command; else its GPU's)", NULL, 0, 31 };
static const struct cli_opt *const backend_opts[] = { &o_cluster_config, &o_id, &o_subcluster, &o_json_rt, &o_quiet_rt, &o_verbose,
						      &o_log_format, &o_log_level, &o_check, NULL };
static const struct cli_opt o_standby = { "standby", 0, CLI_FLAG, NULL,
					  "be the hot standby: listen on the second address of runtime.schedd, watch the "
					  "active scheduler, and take over when it fails" };
static const struct cli_opt *const schedd_opts[] = { &o_cluster_config, &o_json_rt, &o_quiet_rt, &o_verbose,
						     &o_log_format, &o_log_level, &o_check, &o_standby, NULL };

static const char schedd_text[] =
	"Listens on the cluster's scheduler address. Frontends send request metadata; schedd runs the scheduling "
	"core (the policy of the configuration) on --threads threads and sends each batch plan to its backend and "
	"each drop notice to its frontend. A backend or frontend silent for failure_ms is removed: the requests "
	"of a failed backend's running batch are answered with an error, a lost frontend's queued requests are "
	"dropped. --json writes its counters at exit (SIGINT/SIGTERM).\n\n"
	"With two addresses in runtime.schedd, a second schedd started with --standby listens on the second, "
	"heartbeats the active one and takes over when it has been silent for failure_ms or its connection "
	"closes; frontends and backends then register with it, the frontends send again the requests they "
	"hold, and every request is still answered exactly once (docs/runtime.md, \"Failover\").";
static const char frontend_text[] =
	"Frontend I accepts clients on its client address (the native protocol: wire-format messages over TCP, a "
	"client's HELLO with the bearer token of http_token_file when it has one, then REQUESTs, each answered "
	"with an ANSWER) and HTTP (the KServe v2 API), holding each client to the bounds of docs/runtime.md "
	"(timeouts, a minimum rate, per-address and total connection caps, a budget of request bodies), keeps each input in a registered pool that backends read with one-sided RMA reads, "
	"sends the metadata to schedd, and answers each request exactly once: its output, or why there is none "
	"(dropped, backend failed, overloaded, scheduler unreachable).";
static const char backend_text[] =
	"Backend I is GPU I of the cluster (its kind and profiles). It registers with schedd; for each plan it "
	"reads every input from its frontend with an RMA read, runs the batch on its executor at the planned "
	"start (emulated: l(b) from the profile), sends each output to its frontend and reports completion to "
	"schedd.";
static const char loadgen_text[] =
	"Sends the workload of the configuration (models, rate, arrival process, popularity, rate segments, seed: "
	"the arrival times `symphony sim` draws) to the frontends in turn, checks every output, and reports the "
	"metrics and JSON schema of `symphony sim` (latency measured at the client; queueing delay is not "
	"observed). Exits 1 when a request got no answer or a wrong one.";

static const struct cli_opt o_bs_models = { "models", 0, CLI_INT, "M", "models", "64", 1, 65535 };
static const struct cli_opt o_bs_gpus = { "gpus", 0, CLI_INT, "G", "emulated GPUs", "1024", 1, 1 << 20 };
static const struct cli_opt o_bs_threads = { "threads", 0, CLI_TEXT, "LIST",
					     "scheduler thread counts, comma-separated, each 1 to 64", "1,2" };
static const struct cli_opt o_bs_alpha = { "alpha", 0, CLI_NUM, "MS", "linear profile slope, ms per request", "0.05",
					   0, 1e4 };
static const struct cli_opt o_bs_beta = { "beta", 0, CLI_NUM, "MS", "linear profile intercept, ms", "1.0", 0, 1e4 };
static const struct cli_opt o_bs_slo = { "slo", 0, CLI_NUM, "MS", "every model's SLO, ms", "25", 0.001, 1e6 };
static const struct cli_opt o_bs_ctrl = { "ctrl", 0, CLI_NUM, "US",
					  "control delay the core plans with (its d_ctrl, us): a margin for the "
					  "scheduler's own latency", "0", 0, 1e6 };
static const struct cli_opt o_bs_max_batch = { "max-batch", 0, CLI_INT, "B", "largest batch", "32", 1,
					       SYM_PROFILE_BATCH_LIMIT };
static const struct cli_opt o_bs_duration = { "duration", 0, CLI_NUM, "S", "seconds per trial", "1", 0.01, 3600 };
static const struct cli_opt o_bs_policy = { "policy", 0, CLI_TEXT, "SPEC",
					    "scheduling policy (scheduler policies such as clockwork run with one "
					    "thread only)", "symphony" };
static const struct cli_opt o_bs_arrivals = { "arrivals", 0, CLI_CHOICE, "poisson|uniform", "arrival process",
					      "poisson", 0, 0, "poisson|uniform" };
static const struct cli_opt o_bs_start = { "start-rate", 0, CLI_NUM, "R", "first rate tried, requests/s", "100000",
					   1, 1e9 };
static const struct cli_opt o_bs_max_rate = { "max-rate", 0, CLI_NUM, "R", "stop doubling here", "64000000", 1,
					      1e9 };
static const struct cli_opt o_bs_precision = { "precision", 0, CLI_NUM, "P",
					       "bisect until (fail - pass) / pass < P", "0.05", 0.001, 1 };
static const struct cli_opt o_bs_late = { "late-limit", 0, CLI_NUM, "US", "generator lateness p99 limit, us",
					  "1000", 1, 1e7 };
static const struct cli_opt o_bs_lag = { "lag-limit", 0, CLI_NUM, "US", "scheduler timer lateness p99 limit, us",
					 "1000", 1, 1e7 };
static const struct cli_opt o_bs_drop = { "max-drop", 0, CLI_NUM, "F", "largest dropped fraction of a passing trial",
					  "0.01", 0, 1 };
static const struct cli_opt o_bs_retries = { "retries", 0, CLI_INT, "N",
					     "run a failing rate again up to N times; it passes if any run passes (a "
					     "shared machine has hiccups)", "1", 0, 10 };
static const struct cli_opt o_bs_seed = { "seed", 0, CLI_INT, "N", "arrival seed", "1", 0, 9.2e18 };
static const struct cli_opt o_bs_json = { "json", 0, CLI_OUT, "FILE|-", "write {\"results\": [...]} (- for stdout)" };
static const struct cli_opt o_bs_quiet = { "quiet", 0, CLI_FLAG, NULL, "no progress lines on stderr" };
static const struct cli_opt *const bench_sched_opts[] = {
	&o_bs_models, &o_bs_gpus, &o_bs_threads, &o_bs_alpha, &o_bs_beta, &o_bs_slo, &o_bs_ctrl, &o_bs_max_batch,
	&o_bs_duration, &o_bs_policy, &o_bs_arrivals, &o_bs_start, &o_bs_max_rate, &o_bs_precision, &o_bs_late,
	&o_bs_lag, &o_bs_drop, &o_bs_retries, &o_bs_seed, &o_bs_json, &o_bs_quiet, NULL
};

static const char bench_sched_text[] =
	"The scheduler scalability benchmark: the largest request rate the threaded scheduler sustains in real "
	"time, for each scheduler thread count. One process, no network: the calling thread generates requests in "
	"real time (spread over the models with equal popularity), polls the decisions and emulates the GPUs (busy "
	"until the planned finish). It needs a core of its own: with T scheduler threads (plus a ranker thread "
	"when T >= 2) the process wants T + 1 (T + 2) cores; fewer are oversubscribed and the numbers say so.\n\n"
	"A trial passes when no submission was refused (queue full), the generator's submission lateness p99 < "
	"--late-limit, the scheduler's timer lateness p99 < --lag-limit, the requests not decided at the end are "
	"at most rate * (SLO + 5 ms) and all are decided within SLO + 100 ms, and at most --max-drop of them were "
	"dropped. The rate doubles from --start-rate until a trial fails, then bisects.";

static const struct cli_opt o_fb_provider = { "provider", 0, CLI_TEXT, "NAME", "libfabric provider", "tcp" };
static const struct cli_opt o_fb_iters = { "iters", 0, CLI_INT, "N", "round trips; reads: N/4, at least 1", "20000", 1,
					   10000000 };
static const struct cli_opt o_fb_size = { "size", 0, CLI_INT, "BYTES", "bytes per read", "153600", 1, 1 << 30 };
static const struct cli_opt o_fb_json = { "json", 0, CLI_OUT, "FILE|-", "also write the results as JSON; - for stdout "
					  "(and no text)" };
static const struct cli_opt o_fb_auth = { "auth", 0, CLI_CHOICE, "on|off",
					  "on: both sides authenticate with credentials (a CA in memory), every message is "
					  "sealed and the region read is a sealed input, opened after each read, as in a cluster "
					  "(and the seal's CPU cost is timed on its own); off: none of it (to measure what it "
					  "costs)", "on", 0, 0, "on|off" };
static const struct cli_opt *const fabbench_opts[] = { &o_fb_provider, &o_fb_iters, &o_fb_size, &o_fb_auth, &o_fb_json,
							NULL };

static const struct cli_opt o_as_add = { "add-cmd", 0, CLI_TEXT, "CMD",
					 "shell command that starts a backend (it should return at once: start the backend "
					 "in the background); $SYMPHONY_BACKEND_ID and $SYMPHONY_SUBCLUSTER say which (the "
					 "backend reads SYMPHONY_SUBCLUSTER from its environment)" };
static const struct cli_opt o_as_remove = { "remove-cmd", 0, CLI_TEXT, "CMD",
					    "shell command that stops backend $SYMPHONY_BACKEND_ID gracefully (SIGTERM: it "
					    "finishes its batches and leaves)" };
static const struct cli_opt o_as_url = { "url", 0, CLI_TEXT, "URL",
					 "schedd's /metrics (default: from the cluster file: schedd's metrics or HTTP port, "
					 "https when http_tls_cert is set)" };
static const struct cli_opt o_as_cacert = { "cacert", 0, CLI_TEXT, "FILE",
					    "PEM certificate(s) to check an HTTPS schedd with (default: the cluster's "
					    "http_tls_cert, for a self-signed one)" };
static const struct cli_opt o_as_interval = { "interval", 0, CLI_NUM, "S", "seconds between reads of the advice",
					      "5", 0.01, 3600 };
static const struct cli_opt o_as_cooldown = { "cooldown", 0, CLI_NUM, "S",
					      "no action sooner than this after the last", "30", 0, 86400 };
static const struct cli_opt o_as_min = { "min", 0, CLI_INT, "N", "fewest backends serving it keeps", "1", 1, 4096 };
static const struct cli_opt o_as_max = { "max", 0, CLI_INT, "N",
					 "most backends serving or coming up (0: the cluster's backends_max)", "0", 0, 4096 };
static const struct cli_opt o_as_start_timeout = { "start-timeout", 0, CLI_NUM, "S",
						   "a backend started that does not serve by then is no longer awaited",
						   "60", 0.1, 86400 };
static const struct cli_opt o_as_release = { "release-fraction", 0, CLI_NUM, "F",
					     "release this fraction of the advised GPUs (1: the papers' rule; less keeps "
					     "headroom, see docs/simulator.md)", "1", 0, 1 };
static const struct cli_opt o_as_rule = { "rule", 0, CLI_CHOICE, "papers|target",
					  "papers: add N r/(1-r), release N f (as published); target: Kubernetes HPA's "
					  "rule on the busy fraction (--target)", "papers", 0, 0, "papers|target" };
static const struct cli_opt o_as_target = { "target", 0, CLI_NUM, "F",
					    "--rule target: the busy fraction aimed at (no change within 10%)", "0.7",
					    0.01, 1 };
static const struct cli_opt o_as_duration = { "duration", 0, CLI_NUM, "S", "stop after S seconds (0: at SIGTERM)",
					      "0", 0, 1e7 };
static const struct cli_opt o_as_cmd_timeout = { "cmd-timeout", 0, CLI_NUM, "S",
						 "a command still running after S seconds is killed", "30", 0.1, 3600 };
static const struct cli_opt *const autoscale_opts[] = { &o_cluster_config, &o_as_add, &o_as_remove, &o_as_url,
							 &o_as_cacert, &o_as_interval, &o_as_cooldown, &o_as_min,
							 &o_as_max, &o_as_start_timeout, &o_as_rule, &o_as_target,
							 &o_as_release, &o_as_duration,
							 &o_as_cmd_timeout, &o_quiet_rt, &o_log_format, &o_log_level, NULL };

static const char autoscale_text[] =
	"A small controller that lets the cluster follow its load: every --interval, and as each new advice comes "
	"(20 ms after schedd's interval closes), it reads schedd's autoscaling "
	"advice from its /metrics (per sub-cluster: add N r/(1-r) GPUs when the bad rate r of the GPUs serving is "
	"above advice_threshold, else release N f, f their idle fraction: the papers' rule) and which backend ids "
	"serve, and runs --add-cmd for the lowest free ids of the sub-cluster that asks (then the lowest free ids "
	"of the others, as the simulator does), or --remove-cmd for the highest serving ones, with "
	"SYMPHONY_BACKEND_ID, SYMPHONY_SUBCLUSTER and SYMPHONY_ACTION in the command's environment (a backend "
	"started with SYMPHONY_SUBCLUSTER in its environment, or --subcluster, joins that sub-cluster). It waits --cooldown between actions, awaits a started backend until it serves "
	"(or --start-timeout), releases nothing while one comes up, keeps --min to --max backends and one per "
	"sub-cluster, and logs every action. --rule target follows Kubernetes' HPA rule on the busy fraction "
	"instead. The decision is the simulator's (autoscale in an experiment: docs/simulator.md). On Kubernetes, deploy/ has the same loop as a HorizontalPodAutoscaler "
	"on schedd's metrics instead (docs/runtime.md, \"Autoscaling\").";

static const struct cli_opt o_kg_quiet = { "quiet", 0, CLI_FLAG, NULL, "no line on stderr" };
static const struct cli_opt o_kg_frontends = { "frontends", 0, CLI_INT, "N", "cluster: frontends 0..N-1", "1", 0,
					       4096 };
static const struct cli_opt o_kg_backends = { "backends", 0, CLI_INT, "N", "cluster: backends 0..N-1 (as many as "
					      "backends_max)", "2", 0, 65536 };
static const struct cli_opt o_kg_standby = { "standby", 0, CLI_FLAG, NULL, "cluster: also schedd 1, the hot standby" };
static const struct cli_opt o_kg_replace = { "replace", 0, CLI_FLAG, NULL,
					     "issue: a new key and serial for a member that has one (the old serial is "
					     "revoked)" };
static const struct cli_opt *const keygen_opts[] = { &o_kg_frontends, &o_kg_backends, &o_kg_standby, &o_kg_replace,
						      &o_kg_quiet, NULL };

static const char keygen_text[] =
	"The cluster's keys (docs/runtime.md, \"Security\"). A cluster has a certificate authority (CA): an Ed25519 "
	"key pair in DIR/ca.key (mode 0600; only keygen reads it) and DIR/ca.pub. Each schedd, frontend and "
	"backend has a key pair of its own and a credential the CA signed, naming its role and id: "
	"DIR/ROLE-ID.cred (mode 0600; schedd-0 the scheduler, schedd-1 its standby, frontend-N, backend-N). A "
	"member shows its credential in every fabric handshake and proves it holds the key; peers check the CA's "
	"signature, that the role and id are the ones they meant, and that the serial is not revoked.\n\n"
	"ACTION is one of: cluster DIR (the CA when DIR has none, then a credential for every member --frontends, "
	"--backends and --standby name that has none yet); ca DIR (only the CA; an existing one is refused, never "
	"overwritten); issue DIR ROLE ID (one member's credential; --replace gives a member a new key and serial "
	"and revokes the old); revoke DIR SERIAL|ROLE-ID (adds it to DIR/revoked.json: copy that file where the "
	"members read it and send them SIGHUP, and they close the member's connections and refuse it from then "
	"on); list DIR (what the CA issued, and which are revoked).\n\n"
	"Give each member DIR/ca.pub, DIR/revoked.json and its own credential only: runtime.keys_dir names the "
	"directory (--keys-dir), and --credential FILE a credential elsewhere.";

static const char fabbench_text[] =
	"Two threads, each with its own libfabric endpoint, over 127.0.0.1: the 64-byte message round trip (N "
	"times) and an RMA read of BYTES (N/4 times), polling without blocking.";

static const struct cli_opt o_pr_model = { "model", 0, CLI_TEXT, "NAME",
					   "the model of the experiment to profile (may be left out when the experiment "
					   "has one model)" };
static const struct cli_opt o_pr_batches = { "batches", 0, CLI_TEXT, "SPEC",
					     "batch sizes: N, A..B, A..B:S (A, A+S, ..., and B), comma-separated, e.g. "
					     "1..64, 1,2,4,8 or 1..64:8 (default 1..max_batch, at most 1..64). A size "
					     "above the model's max_batch is refused: raise it with --slo MS, or "
					     "\"max_batch\" in the model's object of the configuration" };
static const struct cli_opt o_pr_repeats = { "repeats", 0, CLI_INT, "N", "timed runs per batch size", "20", 1,
					     10000 };
static const struct cli_opt o_pr_warmup = { "warmup", 0, CLI_INT, "N",
					    "untimed runs per batch size before them (not the experiment's warmup_s)",
					    "3", 0, 10000 };
static const struct cli_opt o_pr_out = { "out", 0, CLI_OUT, "FILE|-",
					 "the linear profile: alpha_ms, beta_ms, max_batch (the largest batch measured), "
					 "slo_ms, static_mb and dynamic_mb (a batch's, at the largest batch) where known (default "
					 "profile-NAME.json)" };
static const struct cli_opt o_pr_table = { "table-out", 0, CLI_OUT, "FILE|-",
					   "the table profile: latency_ms = the medians for b = 1 .. the largest batch "
					   "measured, gaps interpolated, made non-decreasing (default: --out with "
					   ".table.json for .json; profile-NAME.table.json when --out is -)" };
static const struct cli_opt o_pr_json = { "json", 0, CLI_OUT, "FILE|-",
					  "the result object (the record plus both profiles); - for stdout" };
static const struct cli_opt o_pr_quiet = { "quiet", 0, CLI_FLAG, NULL,
					   "no progress on stderr (a line a second) and no table" };
static const struct cli_opt o_pr_write = { "write", 0, CLI_FLAG, NULL,
					   "also write the profile into the model repository's DIR/NAME/config.json "
					   "(--model-repository DIR): alpha_ms and beta_ms when l(b) is linear with both "
					   ">= 0, else the measured medians as latency_ms; with the fit and the measurement" };
static const struct cli_opt *const profile_opts[] = { &o_cluster_config, &o_pr_model, &o_pr_batches, &o_pr_repeats, &o_pr_warmup,
						      &o_pr_out, &o_pr_table, &o_pr_json, &o_pr_write, &o_pr_quiet, NULL };

static const char profile_text[] =
	"Measures a model's batch latency on an executor (--executor emulated, the default: holds l(b) of the "
	"model's configured profile; or cuda, with --device N and --model-lib PATH; or torch, the TorchScript "
	"files of the models' executor specs): for each batch size, --warmup untimed runs, then --repeats timed "
	"runs (each started at once; latency = end - begin as the executor reports it), in rounds of one run of "
	"every size so that a burst of interference on a busy machine does not shift one size's median. Keeps "
	"the median, mean, min, p10, p90, max and MAD, and the executor's memory for each size. Fits "
	"l(b) = alpha*b + beta to the medians by least squares (GSL), with standard errors, r2 and the largest "
	"relative residual, and warns when the model is not linear (r2 < 0.98 or a residual above 5%). Writes "
	"two profile files of the zoo form (profiles/zoo.h), which `symphony sim --zoo FILE --models NAME` and "
	"the runtime read directly; both carry the whole measurement record as their \"source\" object.\n\n"
	"The model, its SLO and its signatures come from the configuration (the file and the flags: --zoo, "
	"--models, --profile A,B, --slo, --model-lib, --device, ...); without one, the a100 zoo. Network delays "
	"play no part here.";

static const struct cli_opt o_split_json = { "json", 0, CLI_OUT, "FILE|-", "write the splits as JSON (- for stdout)" };
static const struct cli_opt o_split_file = { "config", 0, CLI_TEXT, "FILE|-",
					     "the query file (also the first argument; - reads standard input)" };
static const struct cli_opt *const split_opts[] = { &o_split_file, &o_split_json, &o_quiet, NULL };

static const char split_text[] =
	"Nexus's query analysis (nexus.md, Section 6.2) on its own: for a query (a tree of stages, each with "
	"a fan-out gamma from its parent) and its end-to-end SLO, the split of the SLO over the stages that "
	"needs the fewest GPUs (the dynamic program on a grid of eps_ms), beside the even split (Nexus's "
	"baseline) and any fixed plans, each as GPUs at `rate` queries/s and queries/s per GPU (rate / GPUs: "
	"Figure 4's average throughput). A stage's throughput within a budget k is the best of its batches "
	"with l(b) <= k (b / l(b)), or of its (latency, throughput) points with latency <= k.\n\n"
	"The file: {\"slo_ms\": L, \"stages\": [{\"name\", \"parent\" (-1 for stage 0, the root; default 0), "
	"\"gamma\" (default 1), and \"points\": [[ms, req/s], ...] or \"model\": a zoo name (with "
	"\"zoo\") or an inline model object}], \"eps_ms\" (default L/500), \"rate\" (default 1), \"zoo\", "
	"\"gammas\": [g, ...] (each replaces every non-root stage's gamma in turn), \"plans\": [[budget ms per "
	"stage], ...], \"budget\": \"batch\" (default) or \"session\" (a batch fits a budget k when 2 l(b) <= k, a "
	"Nexus session's worst case)}; or a study file whose \"query\" is that object. The simulator runs queries with the key \"queries\" (docs/queries.md).";

#if SYM_HAVE_RUNTIME
#define RT(f) f
#else
#define RT(f) NULL
#endif

static const struct cli_cmd commands[] = {
	{ "sim", "simulator", "simulate one run at a given offered rate", "[CONFIG.json|-]", 0, 1, sim_text, sim_opts,
	  CLI_EXPERIMENT, cli_cmd_sim,
	  "  symphony sim --profile 1.053,5.072 --slo 25 --gpus 8 --rate 5000 --arrival poisson\n"
	  "  symphony sim experiments/demo.json --json result.json --timeline timeline.csv\n" },
	{ "goodput", "simulator", "the highest rate that passes the criterion (by default every model late or dropped <= 1%), by bisection",
	  "[CONFIG.json|-]", 0, 1, goodput_text, goodput_opts, CLI_EXPERIMENT, cli_cmd_goodput,
	  "  symphony goodput --zoo a100 --models all --gpus 64 --seeds 5 --json -\n" },
	{ "plan", "simulator", "the fewest GPUs that serve a target rate, per policy, beside analytic estimates",
	  "[CONFIG.json|-]", 0, 1, plan_text, plan_opts, CLI_EXPERIMENT, cli_cmd_plan,
	  "  symphony plan --zoo a100 --models ResNet50 --slo 25 --target-rate 20000 --policies 'symphony;eager'\n" },
	{ "split", "simulator", "split a query's SLO over its stages: Nexus's query analysis beside the even split and fixed plans",
	  "[QUERY.json|-]", 0, 1, split_text, split_opts, 0, cli_cmd_split,
	  "  symphony split experiments/nexus-fig4.json --json -\n" },
	{ "partition", "simulator", "divide the models among sub-clusters: Appendix A's MILP (CBC), balancing rate and memory",
	  "[CONFIG.json|-]", 0, 1, partition_text, partition_opts, CLI_EXPERIMENT, cli_cmd_partition,
	  "  symphony partition --zoo a100 --models all --rate 20000 --subclusters 4 --random\n" },
	{ "loadcurve", "simulator", "goodput, bad rate and GPU use from light load to well past capacity, per policy",
	  "[CONFIG.json|-]", 0, 1, loadcurve_text, loadcurve_opts, CLI_EXPERIMENT, cli_cmd_loadcurve,
	  "  symphony loadcurve --profile 1.053,5.072 --slo 25 --gpus 8 --policies 'symphony;eager' --csv lc.csv\n" },
	{ "sweep", "simulator", "run every point of a grid file (parallel, resumable, shardable) into results.jsonl",
	  "GRID.json", 1, 1, sweep_text, sweep_opts, 0, cli_cmd_sweep,
	  "  symphony sweep experiments/table2.json --out results/table2 -j 2 --resume\n" },
	{ "merge", "simulator", "combine the results of sweep shards into one file", "DIR|FILE...", 1, -1, merge_text,
	  merge_opts, 0, cli_cmd_merge, "  symphony merge sweep-out/shard-* --out sweep-out\n" },
	{ "schedd", "runtime", "the scheduler daemon: the core on the monotonic clock, plans to backends",
	  "[CLUSTER.json|-]", 0, 1, schedd_text, schedd_opts, CLI_CLUSTER, RT(cli_cmd_runtime), NULL },
	{ "frontend", "runtime", "holds request inputs in registered memory, answers clients exactly once",
	  "[CLUSTER.json|-]", 0, 1, frontend_text, process_opts, CLI_CLUSTER, RT(cli_cmd_runtime), NULL },
	{ "backend", "runtime", "one emulated GPU: reads a plan's inputs with RMA, runs it, returns outputs",
	  "[CLUSTER.json|-]", 0, 1, backend_text, backend_opts, CLI_CLUSTER, RT(cli_cmd_runtime), NULL },
	{ "loadgen", "runtime", "an open-loop client: the simulator's workload, in real time, against frontends",
	  "[CLUSTER.json|-]", 0, 1, loadgen_text, process_opts, CLI_CLUSTER, RT(cli_cmd_runtime),
	  "  symphony loadgen --models ResNet50 --slo 25 --frontends 2 --backends 4 --rate 1500 --duration 10\n" },
	{ "profile", "runtime", "measure a model's batch latency on an executor, fit l(b) = alpha*b + beta, write profiles",
	  "[CLUSTER.json|-]", 0, 1, profile_text, profile_opts, CLI_CLUSTER, RT(cli_cmd_runtime),
	  "  symphony profile --model ResNet50 --batches 1..32\n" },
	{ "bench-sched", "runtime", "the scheduler's capacity: requests/s it sustains in real time, 1..N threads", "", 0,
	  0, bench_sched_text, bench_sched_opts, 0, RT(cli_cmd_runtime), NULL },
	{ "autoscale", "runtime", "a controller that adds and removes backends on schedd's autoscaling advice",
	  "[CLUSTER.json|-]", 0, 1, autoscale_text, autoscale_opts, CLI_CLUSTER, RT(cli_cmd_runtime),
	  "  symphony autoscale cluster.json \\\n"
	  "      --add-cmd 'symphony backend cluster.json --id $SYMPHONY_BACKEND_ID & echo $! > be$SYMPHONY_BACKEND_ID.pid' \\\n"
	  "      --remove-cmd 'kill -TERM $(cat be$SYMPHONY_BACKEND_ID.pid)'\n" },
	{ "keygen", "runtime", "the cluster's CA and members' credentials: make, issue, revoke, list",
	  "ACTION DIR [ROLE ID | SERIAL]", 2, 4, keygen_text, keygen_opts, 0, RT(cli_cmd_runtime),
	  "  symphony keygen cluster keys --frontends 2 --backends 4\n"
	  "  symphony keygen issue keys backend 4\n"
	  "  symphony keygen revoke keys backend-4\n"
	  "  symphony keygen list keys\n" },
	{ "fabbench", "runtime", "the transport's control round trip and 150 KB RMA read latency on loopback", "", 0, 0,
	  fabbench_text, fabbench_opts, 0, RT(cli_cmd_runtime), NULL },
	{ "models", "information", "list the models of a profile zoo", "", 0, 0, models_text, models_opts, 0,
	  cli_cmd_models, NULL },
	{ "policies", "information", "list the scheduling policies and their parameters", "", 0, 0, NULL,
	  policies_opts, 0, cli_cmd_policies, NULL },
	{ "help", "information", "help on a command (symphony help COMMAND), the experiment file (help config)",
	  "[COMMAND|config]", 0, 1, NULL, help_opts, 0, cli_cmd_help, NULL },
	{ "version", "information", "print the version, the commit and the build", "", 0, 0, NULL, NULL, 0,
	  cli_cmd_version, NULL },
};

const struct cli_cmd *cli_commands(size_t *n)
{
	*n = sizeof(commands) / sizeof(commands[0]);
	return commands;
}

const struct cli_cmd *cli_find(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	gsl_set_error_handler_off();
	if (argc < 2) {
		cli_print_usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h"))
		name = "help";
	else if (!strcmp(name, "--version"))
		name = "version";
	const struct cli_cmd *cmd = cli_find(name);
	if (!cmd) {
		struct sym_suggest s;
		sym_suggest_init(&s, name);
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			sym_suggest_consider(&s, commands[i].name);
		if (s.best)
			fprintf(stderr, "symphony: unknown command '%s': did you mean '%s'?\n\n", argv[1], s.best);
		else
			fprintf(stderr, "symphony: unknown command '%s'\n\n", argv[1]);
		cli_print_usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(cmd->section, "runtime")) {
		/* results are dated when the command starts; a signal removes its temporary files and
		 * exits 130/143 (experiment/interrupt.h). The runtime's processes shut down on their own. */
		sym_provenance_begin();
		sym_interrupt_install(cmd->name);
	}
	struct cli c;
	int rc = cli_parse(cmd, argc - 2, argv + 2, &c);
	if (!rc && !cmd->run)
		rc = cli_fail(&c, EXIT_USAGE,
			      "this symphony was built without the runtime, which needs %s; install it and rebuild "
			      "(scripts/setup)", SYM_RUNTIME_MISSING);
	else if (!rc)
		rc = cmd->run(&c);
	cli_free(&c);
	return rc < 0 ? 0 : rc;
}
