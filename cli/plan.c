/* cli/plan.c - symphony plan: the smallest GPU count per policy for a target
 * rate, beside the analytic estimates. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "experiment/subcluster.h"
#include "cli/progress.h"
#include "core/build.h"
#include "experiment/estimate.h"
#include "experiment/output.h"
#include "experiment/result.h"
#include "sim/engine.h"
#include "core/memory.h"
#include "sim/goodput.h"
#include "sim/plan.h"
#include "sym_version.h"

int cli_policy_list(const struct cli *c, const struct sym_experiment *e, struct sym_policy *pols, int *npol)
{
	*npol = 0;
	const char *spec = cli_str(c, "policies");
	if (!spec) {
		pols[(*npol)++] = e->policy;
		return 0;
	}
	char err[512];
	char *list = strdup(spec), *save = NULL;
	if (!list)
		return cli_fail(c, 1, "out of memory");
	int rc = 0;
	for (char *t = strtok_r(list, ";", &save); t && !rc; t = strtok_r(NULL, ";", &save)) {
		if (*npol == MAX_POLICIES)
			rc = cli_usage_error(c, "--policies: at most %d policies", MAX_POLICIES);
		else if (sym_policy_parse(t, &pols[*npol], err, sizeof(err)))
			rc = cli_usage_error(c, "--policies: %s", err);
		else
			++*npol;
	}
	if (!rc && !*npol)
		rc = cli_usage_error(c, "--policies: no policy given");
	free(list);
	return rc;
}

/* A goodput search's answer on a fixed count: its mean and interval. */
struct gp_at {
	bool have, ci;
	double mean, lo, hi;
	double floor; /* > 0: a seed's search found no rate passing above this floor (runs too short to judge) */
};

struct plan_row {
	char name[128];
	int gmax, gmin;   /* the answer (the most any seed needed), the least; -1: none up to max */
	bool over;        /* some seed found no count up to max */
	double mean;
	char pm[96];      /* the mean with its interval, as text */
	struct sym_plan_result p0;
	struct gp_at at;   /* the goodput at the answer (gmax GPUs) */
	struct sym_plan_result *seeds_at; /* every seed's run at the answer (nrep), or NULL */
	int worst_seed;    /* the seed index whose run there has the worst model */
	struct gp_at pool; /* sub-clusters: the goodput of one pool on the same GPUs (memory set aside) */
};

/* The target. A constant rate: --target-rate, else the models' own rates'
 * sum (each model object's "rate"; --rate scales them), or --rate split by
 * their shares; the simulations run at that rate (*scale == *rate). A rate
 * schedule (segments, rate_csv, arrival_trace): the schedule as written (at
 * its rate_scale), or scaled so that its mean total is --target-rate; *rate
 * is the mean total (req/s) and *scale what the simulations run the
 * schedule at (sim/goodput.h). */
static int plan_checks(const struct cli *c, struct sym_experiment *e, double *rate, double *scale)
{
	if (e->ngroups > 1)
		return cli_usage_error(c, "plans a cluster of one device kind; give --gpus, not a cluster of %zu kinds",
				       e->ngroups);
	char err[1024];
	if (sym_experiment_has_schedule(e)) {
		if (sym_experiment_resolve(e, err, sizeof(err)))
			return cli_usage_error(c, "%s", err);
		double mean = sym_schedule_mean_rate(e);
		if (!(mean > 0))
			return cli_usage_error(c, "the rate schedule (%s) offers no request: nothing to plan for",
					       sym_experiment_schedule_name(e));
		*rate = cli_given(c, "target-rate") ? cli_num(c, "target-rate") : mean * e->rate_scale;
		*scale = *rate / mean;
		return 0;
	}
	if (cli_given(c, "target-rate")) {
		*rate = *scale = cli_num(c, "target-rate");
		return 0;
	}
	if (sym_experiment_resolve(e, err, sizeof(err)))
		return cli_usage_error(c, "%s", err);
	if (e->nmodels && (e->models[0].rate > 0 || (e->models[0].share > 0 && e->rate_given))) {
		*rate = *scale = e->rate; /* the models' rates (scaled by --rate), or --rate split by their shares */
		return 0;
	}
	return cli_usage_error(c, "--target-rate R is required (total requests per second), unless every model "
				  "has a \"rate\" of its own (or a \"share\" of --rate) or a rate schedule (rate_csv, "
				  "segments, arrival_trace) gives them");
}

/* The JSON object of one policy's row. */
static cJSON *row_json(const struct sym_experiment *e, const struct plan_row *r, const struct sym_plan_result *prs,
		       const double *x, size_t nrep, int max_gpus, double rate)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "policy", r->name);
	bool met = !r->over;
	if (met)
		cJSON_AddNumberToObject(o, "gpus", r->gmax);
	else
		cJSON_AddNullToObject(o, "gpus");
	cJSON_AddBoolToObject(o, "meets_criterion", met);
	cJSON_AddNumberToObject(o, "max_gpus", max_gpus);
	cJSON_AddNumberToObject(o, "replications", (double)nrep);
	cJSON *by = cJSON_AddArrayToObject(o, "gpus_by_seed");
	for (size_t k = 0; k < nrep; k++)
		cJSON_AddItemToArray(by, prs[k].gpus >= 0 ? cJSON_CreateNumber(prs[k].gpus) : cJSON_CreateNull());
	if (r->gmin >= 0)
		cJSON_AddNumberToObject(o, "gpus_min", r->gmin);
	else
		cJSON_AddNullToObject(o, "gpus_min");
	if (met) {
		cJSON_AddNumberToObject(o, "gpus_max", r->gmax);
		cJSON_AddNumberToObject(o, "gpus_mean", r->mean);
		cJSON_AddItemToObject(o, "gpus_ci95", sym_ci95_json(x, nrep));
	} else {
		cJSON_AddNullToObject(o, "gpus_max");
		cJSON_AddNullToObject(o, "gpus_mean");
		cJSON_AddNullToObject(o, "gpus_ci95");
	}
	cJSON *from = cJSON_AddObjectToObject(o, "metrics_from");
	cJSON_AddNumberToObject(from, "seed", (double)e->seed);
	cJSON_AddNumberToObject(from, "gpus", r->p0.at_gpus);
	cJSON_AddNumberToObject(o, "bad_rate", r->p0.bad_rate);
	if (r->p0.worst >= 0)
		cJSON_AddStringToObject(o, "worst_model", sym_unit_name(e, r->p0.worst));
	else
		cJSON_AddNullToObject(o, "worst_model");
	cJSON_AddNumberToObject(o, "worst_model_bad_rate", r->p0.worst_bad_rate);
	cJSON_AddNumberToObject(o, "few_request_models", (double)r->p0.few);
	if (r->seeds_at) { /* the worst model at the answer, measured there under every seed */
		const struct sym_plan_result *w = &r->seeds_at[r->worst_seed];
		cJSON *a = cJSON_AddObjectToObject(o, "worst_at_answer");
		cJSON_AddNumberToObject(a, "gpus", r->gmax);
		if (w->worst >= 0)
			cJSON_AddStringToObject(a, "model", sym_unit_name(e, w->worst));
		else
			cJSON_AddNullToObject(a, "model");
		cJSON_AddNumberToObject(a, "bad_rate", w->worst_bad_rate);
		cJSON_AddNumberToObject(a, "seed", (double)(e->seed + (uint64_t)r->worst_seed));
		cJSON *seeds = cJSON_AddArrayToObject(a, "by_seed");
		for (size_t k = 0; k < nrep; k++) {
			cJSON *one = cJSON_CreateObject();
			cJSON_AddNumberToObject(one, "seed", (double)(e->seed + k));
			if (r->seeds_at[k].worst >= 0)
				cJSON_AddStringToObject(one, "model", sym_unit_name(e, r->seeds_at[k].worst));
			cJSON_AddNumberToObject(one, "bad_rate", r->seeds_at[k].worst_bad_rate);
			cJSON_AddNumberToObject(one, "run_bad_rate", r->seeds_at[k].bad_rate);
			cJSON_AddItemToArray(seeds, one);
		}
	}
	/* the headroom: the goodput on the answer's GPUs (every seed), over the target */
	if (r->at.have) {
		cJSON *h = cJSON_AddObjectToObject(o, "at_answer");
		cJSON_AddNumberToObject(h, "gpus", r->gmax);
		cJSON_AddNumberToObject(h, "goodput_rps", r->at.mean);
		cJSON_AddItemToObject(h, "goodput_ci95", sym_interval_json(r->at.ci, r->at.lo, r->at.hi));
		if (r->at.floor > 0) /* a search ended at its floor: no goodput measured, no headroom */
			cJSON_AddNumberToObject(h, "below_search_floor_rps", r->at.floor);
		if (rate > 0 && r->at.mean > 0)
			cJSON_AddNumberToObject(h, "headroom", r->at.mean / rate - 1);
		else
			cJSON_AddNullToObject(h, "headroom");
	} else {
		cJSON_AddNullToObject(o, "at_answer");
	}
	/* the margin: at one GPU fewer (the first seed's search), the model that failed first */
	if (r->p0.gpus >= 0 && r->p0.below_gpus >= 0) {
		cJSON *b = cJSON_AddObjectToObject(o, "one_gpu_fewer");
		cJSON_AddNumberToObject(b, "gpus", r->p0.below_gpus);
		cJSON_AddNumberToObject(b, "bad_rate", r->p0.below_bad_rate);
		if (r->p0.below_worst >= 0)
			cJSON_AddStringToObject(b, "fails_first", sym_unit_name(e, r->p0.below_worst));
		cJSON_AddNumberToObject(b, "fails_first_bad_rate", r->p0.below_worst_bad_rate);
		cJSON_AddBoolToObject(b, "stopped_early", r->p0.below_stopped_early);
	} else {
		cJSON_AddNullToObject(o, "one_gpu_fewer");
	}
	if (r->pool.have) { /* partition against one pool at the same count */
		cJSON *p = cJSON_AddObjectToObject(o, "one_pool_at_answer");
		cJSON_AddNumberToObject(p, "gpus", r->gmax);
		cJSON_AddNumberToObject(p, "goodput_rps", r->pool.mean);
		cJSON_AddItemToObject(p, "goodput_ci95", sym_interval_json(r->pool.ci, r->pool.lo, r->pool.hi));
		if (r->pool.mean > 0 && r->at.mean > 0)
			cJSON_AddNumberToObject(p, "partition_over_pool", r->at.mean / r->pool.mean);
		else
			cJSON_AddNullToObject(p, "partition_over_pool");
		cJSON_AddBoolToObject(p, "memory_ignored", true);
	}
	int steps = 0;
	for (size_t k = 0; k < nrep; k++)
		steps += prs[k].steps;
	cJSON_AddNumberToObject(o, "simulations", steps);
	return o;
}

/* Folds the seeds' searches into r (x: the counts, for the interval). */
static void fold(struct plan_row *r, const struct sym_plan_result *prs, double *x, size_t nrep)
{
	r->gmax = 0, r->gmin = -1, r->over = false;
	for (size_t k = 0; k < nrep; k++) {
		r->over |= prs[k].gpus < 0;
		if (prs[k].gpus >= 0 && (r->gmin < 0 || prs[k].gpus < r->gmin))
			r->gmin = prs[k].gpus;
		if (prs[k].gpus > r->gmax)
			r->gmax = prs[k].gpus;
		x[k] = prs[k].gpus;
	}
	if (r->over)
		r->gmax = -1;
	double lo, hi;
	r->mean = 0;
	sym_mean_ci95(x, nrep, &r->mean, &lo, &hi);
	sym_format_pm(r->pm, sizeof(r->pm), "%.1f", x, nrep);
	r->p0 = prs[0];
}

static void print_row(FILE *f, const struct sym_experiment *e, const struct plan_row *r, size_t nrep, int max_gpus)
{
	char label[160], gp[48], worst[160] = "-", seeds[160] = "";
	snprintf(label, sizeof(label), "simulated: %s", r->name);
	snprintf(gp, sizeof(gp), r->over ? "none <= %d" : "%d", r->over ? max_gpus : r->gmax);
	const struct sym_plan_result *w = r->seeds_at ? &r->seeds_at[r->worst_seed] : &r->p0;
	if (w->worst >= 0)
		snprintf(worst, sizeof(worst), "%.20s (%.2f%%)%s", sym_unit_name(e, w->worst), 100 * w->worst_bad_rate,
			 r->p0.gpus < 0 ? " at max" : "");
	if (nrep > 1 && !r->over)
		snprintf(seeds, sizeof(seeds), "%d..%d, mean %s", r->gmin, r->gmax, r->pm);
	else if (nrep > 1)
		snprintf(seeds, sizeof(seeds), r->gmin < 0 ? "none for every seed" : "%d..none", r->gmin);
	fprintf(f, nrep > 1 ? "%-28.28s %12s  %-36s %s\n" : "%-28.28s %12s  %s%s\n", label, gp, worst, seeds);
}

static void print_analytic(FILE *f, const struct sym_plan_analytic *an, size_t nrep, const struct sym_experiment *e)
{
	const struct {
		const char *label;
		int gpus;
	} rows[2] = { { "analytic: staggered", an->staggered }, { "analytic: nexus packing", an->nexus } };
	for (int i = 0; i < 2; i++) {
		if (rows[i].gpus < 0)
			fprintf(f, "%-28s %12s\n", rows[i].label, "none <= max");
		else
			fprintf(f, "%-28s %12d\n", rows[i].label, rows[i].gpus);
	}
	if (nrep > 1)
		fprintf(f, "GPUs: the most any of the %zu seeds (%llu to %llu) needed; the worst model: the worst of every "
			   "seed's run at that count\n", nrep, (unsigned long long)e->seed,
			(unsigned long long)(e->seed + nrep - 1));
}

static cJSON *plan_doc(const struct sym_experiment *e, double rate, double scale, int max_gpus,
		       const struct sym_plan_analytic *an)
{
	cJSON *doc = sym_result_head("plan");
	cJSON_AddNumberToObject(doc, "seed", (double)e->seed);
	cJSON_AddNumberToObject(doc, "replications", e->replications);
	cJSON_AddStringToObject(doc, "criterion", sym_criterion_name(e->criterion));
	cJSON_AddNumberToObject(doc, "target_rate", rate);
	if (sym_experiment_has_schedule(e)) { /* the target is the schedule's mean, run at this scale */
		cJSON *sch = cJSON_AddObjectToObject(doc, "schedule");
		cJSON_AddStringToObject(sch, "kind", e->rate_csv[0] ? "rate_csv" : e->nseg ? "segments" : "arrival_trace");
		cJSON_AddNumberToObject(sch, "scale", scale);
		cJSON_AddNumberToObject(sch, "mean_rate", rate);
	}
	cJSON_AddNumberToObject(doc, "max_gpus", max_gpus);
	cJSON_AddItemToObject(doc, "config", sym_experiment_to_json(e));
	cJSON *ana = cJSON_AddObjectToObject(doc, "analytic");
	cJSON_AddNumberToObject(ana, "staggered_gpus", an->staggered);
	cJSON_AddNumberToObject(ana, "nexus_gpus", an->nexus);
	cJSON_AddArrayToObject(doc, "policies");
	return doc;
}

/* The simulated seconds the searches are expected to run: per policy and
 * seed, doubling to about the analytic count and bisecting back. */
static double plan_seconds(const struct sym_experiment *e, const struct sym_plan_analytic *an, int npol, size_t nrep)
{
	double guess = an->staggered > 0 ? an->staggered : 64;
	return npol * (double)nrep * (2 * ceil(log2(guess + 1)) + 1) * sym_experiment_duration(e);
}

/* The goodput search of e's policy on `gpus` GPUs, every seed, into *out. */
static int goodput_at(const struct cli *c, struct sym_experiment *e, int gpus, struct gp_at *out)
{
	char err[1024];
	struct sym_goodput_reps g;
	int rc = sym_plan_goodput_at(e, gpus, cli_jobs(c), &g, err, sizeof(err));
	if (!rc) {
		*out = (struct gp_at){ .have = true, .ci = g.have_ci, .mean = g.mean, .lo = g.ci_lo, .hi = g.ci_hi };
		for (size_t k = 0; k < g.n; k++)
			if (g.by_seed[k].hit_floor && g.by_seed[k].floor_rps > out->floor)
				out->floor = g.by_seed[k].floor_rps;
	}
	sym_goodput_reps_finish(&g);
	return rc ? cli_fail(c, cli_status(rc), "%s", err) : 0;
}

/* Sub-clusters against one pool: the goodput of the same GPUs with every GPU
 * holding every model, memory set aside (what the partition costs or gains;
 * with models that do not fit one GPU together, an upper bound the memory
 * rules out). */
static int pool_at(const struct cli *c, const struct sym_experiment *e, struct plan_row *r)
{
	char err[1024];
	struct sym_experiment one;
	int rc = sym_experiment_copy(&one, e, err, sizeof(err));
	if (rc)
		return cli_fail(c, cli_status(rc), "%s", err);
	one.partition.subclusters = 0;
	free(one.partition.assign);
	one.partition.assign = NULL;
	one.partition.nassign = 0;
	one.memory_check = false;
	rc = goodput_at(c, &one, r->gmax, &r->pool);
	sym_experiment_finish(&one);
	return rc;
}

static int plan_policy(const struct cli *c, struct sym_experiment *e, double rate, double scale, int max_gpus,
		       struct sym_plan_result *prs, double *x, size_t nrep, struct plan_row *r)
{
	char err[1024];
	bool progress = !cli_flag(c, "quiet") && !isatty(2);
	int rc = sym_sim_check(e, err, sizeof(err));
	if (rc)
		return cli_usage_error(c, "%s", err);
	if ((rc = sym_plan_replicate(e, scale, max_gpus, cli_jobs(c), progress, prs, err, sizeof(err))))
		return cli_fail(c, cli_status(rc), "%s", err);
	sym_policy_format(&e->policy, r->name, sizeof(r->name));
	fold(r, prs, x, nrep);
	if (!r->over && r->gmax > 0) { /* the worst model there, every seed; the headroom: the goodput there */
		if (!(r->seeds_at = calloc(nrep, sizeof(*r->seeds_at))))
			return cli_fail(c, 1, "out of memory");
		if ((rc = sym_plan_measure(e, scale, r->gmax, cli_jobs(c), r->seeds_at, err, sizeof(err))))
			return cli_fail(c, cli_status(rc), "%s", err);
		for (size_t k = 1; k < nrep; k++)
			if (r->seeds_at[k].worst_bad_rate > r->seeds_at[r->worst_seed].worst_bad_rate)
				r->worst_seed = (int)k;
		if ((rc = goodput_at(c, e, r->gmax, &r->at)))
			return rc;
		if (e->partition.subclusters > 1 && (rc = pool_at(c, e, r)))
			return rc;
	}
	if (r->p0.few)
		fprintf(stderr, "symphony: warning: %s at %d GPUs: %zu model%s had fewer than %llu measured requests, too "
				"few for a bad rate of %g%% to mean much\n", r->name, r->p0.at_gpus, r->p0.few,
			r->p0.few == 1 ? "" : "s", (unsigned long long)sym_min_requests(e->max_bad_rate),
			100 * e->max_bad_rate);
	if (r->over)
		fprintf(stderr, "%s: %s: no count up to --max-gpus %d serves %.1f %s%s: at %d GPUs the bad rate is %.2f%%\n",
			c->who, r->name, max_gpus, rate, sym_rate_unit(e), nrep > 1 ? " under every seed" : "", r->p0.at_gpus,
			100 * r->p0.bad_rate);
	return 0;
}

/* Memory: when the models do not fit one GPU together and the experiment
 * has no partition, the plan splits them into the fewest sub-clusters that
 * fit (each needs a GPU of its own), solving the partition once at the
 * target rate. *floor: the sub-clusters (1: memory does not bind). */
static int plan_memory(const struct cli *c, struct sym_experiment *e, double scale, int *floor)
{
	char err[1024];
	*floor = 1;
	if (!sym_experiment_has_schedule(e))
		e->rate = scale;
	int rc;
	if (!e->partition.subclusters) {
		bool check = e->memory_check;
		e->memory_check = false;
		if ((rc = sym_experiment_resolve(e, err, sizeof(err))))
			return cli_usage_error(c, "%s", err);
		e->memory_check = check;
		int k = sym_experiment_min_subclusters(e);
		if (k < 0) {
			sym_experiment_check_memory(e, NULL, err, sizeof(err));
			return cli_usage_error(c, "%s", err);
		}
		if (k > 1)
			e->partition.subclusters = k;
	}
	if (e->partition.subclusters > 1) {
		*floor = e->partition.subclusters;
		if (e->gpus < *floor)
			e->gpus = *floor; /* the search sets the count; resolving needs a GPU per part */
		e->gpus_per_model = 0;
	}
	if ((rc = sym_experiment_resolve(e, err, sizeof(err))))
		return cli_usage_error(c, "%s", err);
	if ((rc = sym_subclusters_solve(e, scale, err, sizeof(err))))
		return rc == -ENOMEM ? cli_fail(c, 1, "out of memory") : cli_usage_error(c, "%s", err);
	return 0;
}

/* Which constraint sets a policy's count: memory when it is the sub-cluster
 * floor and the staggered estimate for the rate alone is below it. */
static const char *binding(int gpus, int floor, const struct sym_plan_analytic *an)
{
	if (gpus < 0)
		return "none (no count serves the rate)";
	if (floor > 1 && gpus == floor)
		return an->staggered >= 0 && an->staggered >= floor ? "memory and rate" : "memory";
	if (floor > 1)
		return "rate and SLO, in the sub-clusters memory forces (compare memory_check false)";
	return "rate and SLO";
}

/* --emit-cluster FILE: the plan's answer as a runtime cluster file. */
static int emit_cluster(const struct cli *c, struct sym_experiment *e, const struct sym_policy *pol,
			const struct plan_row *row, double rate, double scale)
{
	if (row->over || row->gmax < 1)
		return cli_fail(c, 1, "--emit-cluster: %s serves %.1f req/s on no count up to --max-gpus; nothing written",
				row->name, rate);
	e->policy = *pol;
	if (!sym_experiment_has_schedule(e))
		e->rate = rate;
	else
		e->rate_scale = scale; /* the runtime's load generator replays the schedule at the plan's scale */
	e->gpus = row->gmax;
	if (e->ngroups == 1)
		e->groups[0].count = row->gmax;
	cJSON *cfg = sym_experiment_to_json(e), *rt = cfg ? cJSON_AddObjectToObject(cfg, "runtime") : NULL;
	if (!rt) {
		cJSON_Delete(cfg);
		return cli_fail(c, 1, "out of memory");
	}
	cJSON_AddNumberToObject(rt, "frontends", 1);
	cJSON_AddNumberToObject(rt, "backends", row->gmax);
	if (!(e->ctrl_ms > 0 || e->data_ms > 0 || e->resp_ms > 0 || e->done_ms > 0)) {
		/* planned without a network: the runtime would plan with zero delays too; without the key it
		 * plans with its provider's measured ones (runtime/cluster.h), which the plan did not see */
		cJSON_DeleteItemFromObjectCaseSensitive(cfg, "network");
		if (!cli_flag(c, "quiet"))
			fprintf(stderr, "%s: warning: the plan simulated no network delays; the runtime plans with its "
					"provider's (tcp: --ctrl-ms 0.3 --data-ms 0.05 --resp-ms 1 --done-ms 0.2): plan with "
					"them for an answer the runtime meets\n", c->who);
	}
	char err[1024];
	int rc = sym_write_json(cli_str(c, "emit-cluster"), cfg, err, sizeof(err));
	cJSON_Delete(cfg);
	if (rc)
		return cli_fail(c, 1, "%s", err);
	if (!cli_flag(c, "quiet"))
		fprintf(stderr, "%s: wrote %s: %s on %d GPUs at %.1f req/s (start it: scripts/cluster-local %s)\n", c->who,
			cli_str(c, "emit-cluster"), row->name, row->gmax, rate, cli_str(c, "emit-cluster"));
	return 0;
}

int cli_cmd_plan(struct cli *c)
{
	struct sym_experiment e;
	int floor = 1;
	double rate = 0, scale = 0;
	int rc = cli_experiment(c, &e, false);
	if (!rc)
		rc = plan_checks(c, &e, &rate, &scale);
	if (!rc && sym_experiment_has_schedule(&e))
		e.rate_scale = scale; /* the echoed configuration reloads to the planned load */
	if (!rc)
		rc = plan_memory(c, &e, scale, &floor);
	struct sym_policy pols[MAX_POLICIES];
	int npol = 0;
	if (!rc)
		rc = cli_policy_list(c, &e, pols, &npol);
	if (rc) {
		sym_experiment_finish(&e);
		return rc;
	}
	int max_gpus = (int)cli_int(c, "max-gpus");
	bool quiet = cli_flag(c, "quiet");
	if (!sym_experiment_has_schedule(&e))
		e.rate = rate;
	char err[1024];
	/* a query's split and its GPU counts come from the rate */
	if (e.queries_json && (rc = sym_experiment_resolve(&e, err, sizeof(err)))) {
		sym_experiment_finish(&e);
		return cli_usage_error(c, "%s", err);
	}
	struct sym_plan_analytic an;
	sym_plan_analytic(&e, rate, max_gpus, &an);
	/* the search doubles its GPU count past the answer: about twice the larger estimate */
	int est = an.staggered > an.nexus ? an.staggered : an.nexus, jobs = cli_jobs(c);
	int top_gpus = est < 0 || 2.0 * est > max_gpus ? max_gpus : 2 * est + 1;
	if (sym_estimate_check(&e, scale, top_gpus, false, jobs < e.replications ? jobs : e.replications, err,
			       sizeof(err))) {
		sym_experiment_finish(&e);
		return cli_usage_error(c, "%s (at up to %d GPUs)", err, top_gpus);
	}
	cJSON *doc = plan_doc(&e, rate, scale, max_gpus, &an), *arr = cJSON_GetObjectItemCaseSensitive(doc, "policies");
	cJSON *mem = cJSON_AddObjectToObject(doc, "memory");
	cJSON_AddNumberToObject(mem, "subclusters", floor);
	cJSON_AddNumberToObject(mem, "min_gpus", floor);
	cJSON_AddNumberToObject(mem, "gpu_memory_mb", e.kinds[0].memory_mb);
	struct sym_mem need = { 0, 0 }; /* what one GPU holding every model needs (core/memory.h) */
	for (size_t m = 0; m < e.nmodels && e.profiles; m++)
		sym_mem_add_profile(&need, &e.profiles[m]);
	cJSON_AddNumberToObject(mem, "one_pool_need_mb", sym_mem_need(&need));
	/* memory per GPU: what a GPU of each part holds (one pool: every model) */
	double per_gpu = sym_mem_need(&need);
	if (e.partition.subclusters > 1 && e.partition.assign && e.profiles) {
		cJSON *parts = cJSON_AddArrayToObject(mem, "parts");
		per_gpu = 0;
		for (int k = 0; k < e.partition.subclusters; k++) {
			struct sym_mem u = { 0, 0 };
			int nm = 0;
			for (size_t m = 0; m < e.nmodels; m++)
				if (e.partition.assign[m] == k) {
					sym_mem_add_profile(&u, &e.profiles[m]);
					nm++;
				}
			cJSON *pk = cJSON_CreateObject();
			cJSON_AddNumberToObject(pk, "models", nm);
			cJSON_AddNumberToObject(pk, "need_mb", sym_mem_need(&u));
			cJSON_AddItemToArray(parts, pk);
			per_gpu = sym_mem_need(&u) > per_gpu ? sym_mem_need(&u) : per_gpu;
		}
	}
	cJSON_AddNumberToObject(mem, "per_gpu_need_mb", per_gpu);
	cJSON_AddBoolToObject(mem, "checked", e.memory_check && e.kinds[0].memory_mb > 0);
	if (e.nqueries)
		cJSON_AddItemToObject(doc, "queries", sym_queries_json(&e, NULL));
	FILE *f = cli_table_stream(c);
	size_t nrep = e.replications > 1 ? (size_t)e.replications : 1;
	if (!quiet && sym_experiment_has_schedule(&e)) {
		char scaled[64] = "";
		if (scale != 1)
			snprintf(scaled, sizeof(scaled), ", the schedule scaled x%.4g", scale);
		fprintf(f, "target: the %s's mean, %.1f %s%s (the analytic estimates take each model's mean rate)\n",
			e.rate_csv[0] ? "rate table" : e.nseg ? "rate schedule" : "arrival trace", rate, sym_rate_unit(&e),
			scaled);
	}
	if (!quiet)
		fprintf(f, "symphony %s plan: %zu model(s), %.1f %s, bad rate <= %g%% (%s criterion), seeds %llu..%llu\n",
			SYM_VERSION, e.nmodels, rate, sym_rate_unit(&e), 100 * e.max_bad_rate, sym_criterion_name(e.criterion),
			(unsigned long long)e.seed, (unsigned long long)(e.seed + nrep - 1));
	struct sym_plan_result *prs = calloc(nrep, sizeof(*prs));
	double *x = calloc(nrep, sizeof(*x));
	struct plan_row *rows = calloc((size_t)npol, sizeof(*rows));
	if (!prs || !x || !rows)
		rc = cli_fail(c, 1, "out of memory");
	struct cli_progress *p = cli_progress_start("plan", plan_seconds(&e, &an, npol, nrep), !quiet);
	for (int i = 0; i < npol && !rc; i++) {
		e.policy = pols[i];
		if (!(rc = plan_policy(c, &e, rate, scale, max_gpus, prs, x, nrep, &rows[i]))) {
			cJSON *row = row_json(&e, &rows[i], prs, x, nrep, max_gpus, rate);
			cJSON_AddStringToObject(row, "binding", binding(rows[i].over ? -1 : rows[i].gmax, floor, &an));
			cJSON_AddItemToArray(arr, row);
		}
	}
	cli_progress_stop(p);
	if (!rc && !quiet) {
		fprintf(f, nrep > 1 ? "\n%-28s %12s  %-36s %s\n" : "\n%-28s %12s  %s\n", "method", "GPUs",
			"worst model there (bad rate)", "GPUs over the seeds");
		for (int i = 0; i < npol; i++)
			print_row(f, &e, &rows[i], nrep, max_gpus);
		print_analytic(f, &an, nrep, &e);
		sym_queries_print(f, &e, NULL);
		if (floor > 1)
			fprintf(f, "memory: the %zu models fit no %s together (%.0f MB): %d sub-clusters, each with GPUs of its "
				   "own: at least %d GPUs; a GPU holds at most %.0f MB of them\n", e.nmodels, e.kinds[0].name,
				e.kinds[0].memory_mb, floor, floor, per_gpu);
		else if (per_gpu > 0)
			fprintf(f, "memory: every GPU holds every model, %.0f MB of %.0f\n", per_gpu, e.kinds[0].memory_mb);
		else
			fprintf(f, "memory: the models give no memory figures (static_mb, dynamic_mb): not checked\n");
		for (int i = 0; i < npol; i++)
			fprintf(f, "binding constraint (%s): %s\n", rows[i].name,
				binding(rows[i].over ? -1 : rows[i].gmax, floor, &an));
		for (int i = 0; i < npol; i++) {
			const struct sym_plan_result *p0 = &rows[i].p0;
			if (p0->gpus < 0 || p0->below_gpus < 0 || p0->below_worst < 0)
				continue;
			fprintf(f, "margin (%s): at %d GPUs %s fails first, %.2f%% bad%s\n", rows[i].name, p0->below_gpus,
				sym_unit_name(&e, p0->below_worst), 100 * p0->below_worst_bad_rate,
				p0->below_stopped_early ? " when the run stopped early" : "");
		}
		for (int i = 0; i < npol; i++) {
			const struct plan_row *rw = &rows[i];
			if (!rw->at.have)
				continue;
			char ci[96] = "";
			if (rw->at.ci)
				snprintf(ci, sizeof(ci), " (95%% interval %.1f to %.1f)", rw->at.lo, rw->at.hi);
			if (rw->at.mean > 0)
				fprintf(f, "headroom (%s): at %d GPUs the goodput is %.1f %s%s, %+.1f%% over the target\n",
					rw->name, rw->gmax, rw->at.mean, sym_rate_unit(&e), ci, 100 * (rw->at.mean / rate - 1));
			if (rw->at.floor > 0)
				fprintf(f, "headroom (%s): at %d GPUs %s goodput search passed no rate above its floor, %.1f "
					   "%s (below it some model gets too few requests in the run to judge: a longer "
					   "duration_s measures it)\n", rw->name, rw->gmax, rw->at.mean > 0 ? "a seed's" : "the",
					rw->at.floor, sym_rate_unit(&e));
			if (rw->pool.have && rw->pool.mean > 0 && rw->at.mean > 0)
				fprintf(f, "one pool (%s): the same %d GPUs, each holding every model (%.0f MB; the GPU has "
					   "%.0f), would serve %.1f %s: the %d sub-clusters give %.2fx that%s\n", rw->name,
					rw->gmax, sym_mem_need(&need), e.kinds[0].memory_mb, rw->pool.mean, sym_rate_unit(&e),
					e.partition.subclusters, rw->at.mean / rw->pool.mean,
					e.kinds[0].memory_mb > 0 && sym_mem_need(&need) > e.kinds[0].memory_mb
						? " (one pool does not fit: an upper bound)"
						: "");
		}
	}
	if (!rc && cli_str(c, "json") && sym_write_json(cli_str(c, "json"), doc, err, sizeof(err)))
		rc = cli_fail(c, 1, "%s", err);
	if (!rc && cli_str(c, "emit-cluster"))
		rc = emit_cluster(c, &e, &pols[0], &rows[0], rate, scale);
	free(prs);
	free(x);
	for (int i = 0; rows && i < npol; i++)
		free(rows[i].seeds_at);
	free(rows);
	cJSON_Delete(doc);
	sym_experiment_finish(&e);
	return rc;
}
