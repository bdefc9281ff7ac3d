/* cli/run.c - symphony sim and symphony goodput. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "experiment/estimate.h"
#include "experiment/output.h"
#include "experiment/result.h"
#include "sim/engine.h"
#include "sim/goodput.h"
#include "sym_version.h"

#define TRACE_DESCRIPTION                                                                                     \
	"one row per batch dispatched: the GPU (index and kind), the model, the batch size, its start and "   \
	"finish (ms of simulated time) and the requests of its queue dropped just before it"

FILE *cli_table_stream(const struct cli *c)
{
	for (size_t i = 0; c->cmd->opts && c->cmd->opts[i]; i++)
		if (c->cmd->opts[i]->type == CLI_OUT && c->val[i] && !strcmp(c->val[i], "-"))
			return stderr;
	return stdout;
}

static int open_trace(const struct cli *c, struct sym_outfile *trace)
{
	const char *path = cli_str(c, "trace");
	char err[1024];
	if (!path)
		return 0;
	if (sym_outfile_open(trace, path, err, sizeof(err)))
		return cli_fail(c, 1, "%s", err);
	fprintf(trace->f, "gpu,kind,model,batch_size,start_ms,finish_ms,dropped_before\n");
	return 0;
}

static void print_goodput_line(FILE *f, const struct sym_experiment *e, const struct sym_goodput_reps *g)
{
	double *x = malloc(g->n * sizeof(*x));
	if (!x)
		return;
	for (size_t i = 0; i < g->n; i++)
		x[i] = g->by_seed[i].goodput_rps;
	char ci[96] = "";
	if (g->have_ci)
		snprintf(ci, sizeof(ci), ", 95%% interval %.1f to %.1f", g->ci_lo, g->ci_hi);
	fprintf(f, "goodput: %.1f %s%s (%s criterion, bad rate <= %g%%, tolerance %g%%)\n", g->mean, sym_rate_unit(e), ci,
		sym_criterion_name(e->criterion), 100 * e->max_bad_rate, 100 * e->tolerance);
	if (g->n > 1)
		fprintf(f, "  the mean of %zu seeds (%llu to %llu); the interval runs from the seeds' highest passing rates "
			   "to their lowest failing ones (Student t on each), so it holds the search's resolution as well as "
			   "the seeds' spread; the table is seed %llu's run at its goodput, %.1f %s\n", g->n,
			(unsigned long long)g->seed, (unsigned long long)(g->seed + g->n - 1), (unsigned long long)g->seed, x[0],
			sym_rate_unit(e));
	double bound = sym_goodput_bound(e), mean = 0;
	for (size_t i = 0; i < g->n; i++)
		mean += x[i] / (double)g->n;
	if (bound > 0)
		fprintf(f, "  the multi-model bound (no scheduler serves these models at these shares on %d GPUs any "
			   "faster): %.1f %s; the goodput is %.1f%% of it\n", e->gpus, bound, sym_rate_unit(e),
			100 * mean / bound);
	free(x);
}

/* The outputs of run r (JSON, timelines) and the table. */
static int write_outputs(const struct cli *c, const struct sym_experiment *e, const struct sym_run_result *r,
			 const struct sym_goodput_reps *g)
{
	char err[1024];
	int status = 0;
	const char *timeline = cli_str(c, "timeline"), *mtimeline = cli_str(c, "model-timeline");
	const char *json = cli_str(c, "json");
	if (timeline && sym_write_timeline(timeline, c->cmd->name, e, r, err, sizeof(err)))
		status = cli_fail(c, 1, "%s", err);
	if (mtimeline && sym_write_model_timeline(mtimeline, c->cmd->name, e, r, err, sizeof(err)))
		status = cli_fail(c, 1, "%s", err);
	if (!cli_flag(c, "quiet")) {
		FILE *f = cli_table_stream(c);
		sym_result_print(f, g ? "goodput" : "sim", e, r);
		if (g)
			print_goodput_line(f, e, g);
	}
	sym_warn_few_requests(stderr, g ? "at the goodput" : "", e, r);
	if (json) {
		cJSON *doc = g ? sym_goodput_result_json(e, g, r) : sym_result_json("sim", e, r);
		if (!doc)
			status = cli_fail(c, 1, "out of memory");
		else if (sym_write_json(json, doc, err, sizeof(err)))
			status = cli_fail(c, 1, "%s", err);
		cJSON_Delete(doc);
	}
	return status;
}

/* Runs one simulation with the requested outputs at rate option `rate`;
 * with g (goodput searches) the run is g's kept run, reported as it is
 * unless a trace or per-model timeline asks for it to run again. */
static int run_outputs(const struct cli *c, const struct sym_experiment *e, double rate,
		       const struct sym_goodput_reps *g)
{
	char err[1024];
	struct sym_outfile trace = { 0 };
	int status = open_trace(c, &trace);
	if (status)
		return status;
	struct sym_run_result own = { 0 };
	const struct sym_run_result *rp = &own;
	if (g && !trace.f && !cli_given(c, "model-timeline")) {
		rp = &g->by_seed[0].run;
	} else {
		struct sym_run_opts o = { .rate = rate, .trace = trace.f, .model_timeline = cli_given(c, "model-timeline") };
		struct cli_progress *p = cli_progress_start(g ? "the run at the goodput" : "sim", sym_experiment_duration(e),
							    !cli_flag(c, "quiet"));
		int rc = sym_sim_run(e, &o, &own, err, sizeof(err));
		cli_progress_stop(p);
		if (rc) {
			sym_outfile_abort(&trace);
			sym_run_result_finish(&own);
			return cli_fail(c, cli_status(rc), "%s", err);
		}
	}
	if (trace.f && sym_csv_commit(&trace, sym_csv_meta(c->cmd->name, "trace", TRACE_DESCRIPTION, e), err, sizeof(err)))
		status = cli_fail(c, 1, "%s", err);
	int st = write_outputs(c, e, rp, g);
	sym_run_result_finish(&own);
	return status ? status : st;
}

/* The experiment of sim and goodput: resolved and checked. */
static int setup(struct cli *c, struct sym_experiment *e)
{
	int rc = cli_experiment(c, e, true);
	char err[1024];
	if (!rc && sym_sim_check(e, err, sizeof(err)))
		rc = cli_usage_error(c, "%s", err);
	return rc;
}

int cli_cmd_sim(struct cli *c)
{
	struct sym_experiment e;
	int rc = setup(c, &e);
	double rate = sym_experiment_scale(&e);
	char err[1024];
	if (!rc && sym_estimate_check(&e, rate, 0, cli_given(c, "model-timeline"), 1, err, sizeof(err)))
		rc = cli_usage_error(c, "%s", err);
	if (!rc) {
		if (e.replications > 1 && !cli_flag(c, "quiet"))
			fprintf(stderr, "symphony sim: one run, seed %llu (replications apply to goodput, plan, loadcurve and "
					"sweep)\n", (unsigned long long)e.seed);
		rc = run_outputs(c, &e, rate, NULL);
	}
	sym_experiment_finish(&e);
	return rc;
}

/* The simulated seconds a goodput search is expected to run: its bisection
 * steps (log2 of 1/tolerance, and two more) of the whole duration each. */
static double search_seconds(const struct sym_experiment *e)
{
	double steps = ceil(log2(1 / (e->tolerance > 0 ? e->tolerance : 0.005))) + 2;
	return steps * sym_experiment_duration(e) * (e->replications > 1 ? e->replications : 1);
}

/* Says plainly that no rate met the criterion, and why the search stopped. */
static void say_no_goodput(const struct cli *c, const struct sym_experiment *e, const struct sym_goodput_reps *g)
{
	const struct sym_goodput *g0 = &g->by_seed[0];
	double lowest = g0->nsteps ? g0->steps[g0->nsteps - 1].rate : g0->floor_rps;
	fprintf(stderr, "%s: no rate meets the %s criterion (bad rate <= %g%%)%s: every rate tried failed, down to "
			"%.1f %s\n", c->who, sym_criterion_name(e->criterion), 100 * e->max_bad_rate,
		g->n > 1 ? " for the first seed" : "", lowest, sym_rate_unit(e));
	if (g0->hit_floor)
		fprintf(stderr, "%s: below %.1f %s some %s gets fewer than %llu measured requests in the %.0f s "
				"measured, too few to judge; the table is the run at %.1f\n", c->who, g0->floor_rps,
			sym_rate_unit(e), e->nqueries ? "query" : "model",
			(unsigned long long)sym_min_requests(e->max_bad_rate),
			sym_experiment_duration(e) - e->warmup_s, lowest);
}

int cli_cmd_goodput(struct cli *c)
{
	struct sym_experiment e;
	int rc = setup(c, &e);
	if (rc) {
		sym_experiment_finish(&e);
		return rc;
	}
	bool quiet = cli_flag(c, "quiet"), tty = isatty(2);
	struct sym_goodput_reps g;
	char err[1024];
	int jobs = cli_jobs(c);
	if (sym_estimate_check(&e, sym_goodput_upper_bound(&e) / sym_schedule_mean_rate(&e), 0,
			       cli_given(c, "model-timeline"), jobs < e.replications ? jobs : e.replications, err,
			       sizeof(err))) {
		sym_experiment_finish(&e);
		return cli_usage_error(c, "%s (at the search's upper bound)", err);
	}
	if (!quiet && !tty)
		fprintf(stderr, "goodput search (%s criterion%s), upper bound from maximum batches on every GPU:\n",
			sym_criterion_name(e.criterion), e.replications > 1 ? ", one search per seed" : "");
	struct cli_progress *p = cli_progress_start("goodput search", search_seconds(&e), !quiet);
	rc = sym_goodput_replicate(&e, jobs, !quiet && !tty, &g, err, sizeof(err));
	cli_progress_stop(p);
	if (rc) {
		rc = cli_fail(c, cli_status(rc), "%s", err);
	} else {
		if (!(g.by_seed[0].goodput_rps > 0))
			say_no_goodput(c, &e, &g);
		rc = run_outputs(c, &e, g.run_scale, &g);
	}
	sym_goodput_reps_finish(&g);
	sym_experiment_finish(&e);
	return rc;
}
