/* cli/partition.c - symphony partition: the experiment's models into
 * sub-clusters by Appendix A's MILP (partition/partition.h), beside the
 * paper's random baseline under the same time limit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/build.h"
#include "experiment/output.h"
#include "experiment/result.h"
#include "partition/partition.h"
#include "sym_version.h"

/* The models as the MILP sees them: rates from the experiment (or, with
 * --rates exponential, drawn with the experiment's mean rate per model),
 * static and dynamic memory from the profiles (unknown: 0, counted), each
 * model --variants times (the paper's variants of zoo models). */
static struct sym_part_model *part_models(const struct cli *c, const struct sym_experiment *e, int variants,
					   int *n, int *unknown)
{
	*n = (int)e->nmodels * variants;
	*unknown = 0;
	struct sym_part_model *m = calloc((size_t)*n, sizeof(*m));
	if (!m)
		return NULL;
	bool expo = !strcmp(cli_str(c, "rates"), "exponential");
	uint64_t x = e->seed * 0x9e3779b97f4a7c15ull + 1;
	for (int v = 0; v < variants; v++)
		for (size_t k = 0; k < e->nmodels; k++) {
			struct sym_part_model *p = &m[(size_t)v * e->nmodels + k];
			const struct sym_profile *pr = &e->profiles[k];
			double mean = sym_experiment_model_rps(e, k);
			if (expo) { /* splitmix64 -> (0, 1) -> exponential with that mean */
				uint64_t z = (x += 0x9e3779b97f4a7c15ull);
				z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
				z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
				z ^= z >> 31;
				mean *= -log(((double)(z >> 11) + 0.5) / 9007199254740992.0);
			}
			p->rate = mean;
			p->static_mb = pr->static_mb >= 0 ? pr->static_mb : 0;
			p->dynamic_mb = pr->dynamic_mb >= 0 ? pr->dynamic_mb : 0;
			p->current = -1;
			*unknown += pr->static_mb < 0 || pr->dynamic_mb < 0;
		}
	return m;
}

static cJSON *result_json(const struct sym_part_result *r, const struct sym_part_problem *p, bool with_assign)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "status", sym_part_status_name(r->status));
	cJSON_AddNumberToObject(o, "seconds", r->seconds);
	if (r->assign) {
		cJSON_AddNumberToObject(o, "objective", r->objective);
		cJSON_AddNumberToObject(o, "delta_rate", r->dr);
		cJSON_AddNumberToObject(o, "delta_static_mb", r->ds);
		cJSON_AddNumberToObject(o, "rate_imbalance", r->rate_imbalance);
		cJSON_AddNumberToObject(o, "memory_imbalance", r->mem_imbalance);
	}
	if (r->tries) {
		cJSON_AddNumberToObject(o, "tries", (double)r->tries);
		cJSON_AddNumberToObject(o, "feasible_tries", (double)r->feasible);
	} else {
		cJSON_AddNumberToObject(o, "lower_bound", r->bound);
		cJSON_AddBoolToObject(o, "solver_stopped", r->solver_stopped);
	}
	if (with_assign && r->assign) {
		cJSON *a = cJSON_AddArrayToObject(o, "assignment");
		for (int i = 0; i < p->nmodels; i++)
			cJSON_AddItemToArray(a, cJSON_CreateNumber(r->assign[i]));
	}
	return o;
}

/* Each part's rate, static memory and models, as a table. */
static void print_parts(FILE *f, const struct sym_experiment *e, const struct sym_part_problem *p,
			const struct sym_part_result *r, int variants)
{
	for (int j = 0; j < p->nparts; j++) {
		double R = 0, S = 0, D = 0;
		int n = 0;
		for (int i = 0; i < p->nmodels; i++)
			if (r->assign[i] == j) {
				R += p->models[i].rate, S += p->models[i].static_mb, n++;
				D = fmax(D, p->models[i].dynamic_mb);
			}
		fprintf(f, "  sub-cluster %-3d %10.1f req/s %10.0f MB static (+%6.0f MB dynamic)  %4d model%s", j, R, S, D,
			n, n == 1 ? "" : "s");
		if (variants == 1 && n <= 8) {
			const char *sep = ": ";
			for (int i = 0; i < p->nmodels; i++)
				if (r->assign[i] == j) {
					fprintf(f, "%s%s", sep, e->profiles[i].name);
					sep = ", ";
				}
		}
		fputc('\n', f);
	}
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The q-quantile of n sorted values (nearest rank). */
static double quantile(const double *v, int n, double q)
{
	int i = (int)ceil(q * n) - 1;
	return n ? v[i < 0 ? 0 : i >= n ? n - 1 : i] : NAN;
}

/* The paper's Figure 15 (Appendix A.2): --configs random configurations of
 * --sample models each, MILP against random within the same time limit. */
static int partition_study(struct cli *c, struct sym_experiment *e, const struct sym_part_problem *base)
{
	int nc = (int)cli_int(c, "configs"), ms = (int)cli_int(c, "sample");
	bool quiet = cli_flag(c, "quiet");
	FILE *f = cli_table_stream(c);
	struct sym_part_model *m = calloc((size_t)ms, sizeof(*m));
	double *v[4];
	for (int k = 0; k < 4; k++)
		v[k] = calloc((size_t)nc, sizeof(double));
	int *status = calloc((size_t)nc, sizeof(int)), stopped = 0;
	double *secs = calloc((size_t)nc, sizeof(double));
	int rc = 0;
	if (!m || !v[0] || !v[1] || !v[2] || !v[3] || !status || !secs)
		rc = cli_fail(c, 1, "out of memory");
	double mean = e->rate / ms;
	if (!rc && !quiet)
		fprintf(f, "symphony %s partition study: %d configurations of %d models (from %zu, with replacement), "
			   "exponential rates with mean %.3g req/s, %d sub-clusters, S_max %.0f MB, time limit %g s each "
			   "method\n", SYM_VERSION, nc, ms, e->nmodels, mean, base->nparts, base->s_max, base->time_limit_s);
	int done = 0;
	for (int ci = 0; ci < nc && !rc; ci++) {
		uint64_t x = (e->seed + (uint64_t)ci) * 0x2545f4914f6cdd1dull + 7;
		for (int i = 0; i < ms; i++) {
			size_t k = (size_t)(splitmix(&x) % e->nmodels);
			const struct sym_profile *pr = &e->profiles[k];
			double u = ((double)(splitmix(&x) >> 11) + 0.5) / 9007199254740992.0;
			m[i] = (struct sym_part_model){ .rate = -mean * log(u), .static_mb = fmax(pr->static_mb, 0),
							.dynamic_mb = fmax(pr->dynamic_mb, 0), .current = -1 };
		}
		struct sym_part_problem p = *base;
		p.models = m;
		p.nmodels = ms;
		p.seed = e->seed + (uint64_t)ci;
		struct sym_part_result a = { 0 }, b = { 0 };
		char err[512];
		if (sym_partition_milp(&p, &a, err, sizeof(err)) || sym_partition_random(&p, &b, err, sizeof(err))) {
			rc = cli_usage_error(c, "%s", err);
		} else if (!a.assign) {
			rc = cli_fail(c, 1, "configuration %d: the MILP found no assignment (%s): raise --subclusters, "
				      "--s-max or --time-limit", ci, sym_part_status_name(a.status));
		} else {
			/* the random baseline's best may be infeasible-free yet absent: count it as not found */
			v[0][done] = a.rate_imbalance, v[1][done] = a.mem_imbalance;
			v[2][done] = b.assign ? b.rate_imbalance : NAN;
			v[3][done] = b.assign ? b.mem_imbalance : NAN;
			status[done] = (int)a.status;
			stopped += a.solver_stopped;
			secs[done] = a.seconds;
			done++;
			if (!quiet)
				fprintf(stderr, "  config %d: MILP %s in %.1f s, imbalance rate %.4f memory %.4f; random "
						"(%llu tries) rate %.4f memory %.4f\n", ci, sym_part_status_name(a.status),
					a.seconds, a.rate_imbalance, a.mem_imbalance, (unsigned long long)b.tries,
					b.assign ? b.rate_imbalance : NAN, b.assign ? b.mem_imbalance : NAN);
		}
		sym_part_result_free(&a);
		sym_part_result_free(&b);
	}
	cJSON *doc = NULL;
	if (!rc) {
		doc = sym_result_head("partition-study");
		cJSON_AddItemToObject(doc, "config", sym_experiment_to_json(e));
		cJSON *pr = cJSON_AddObjectToObject(doc, "study");
		cJSON_AddNumberToObject(pr, "configurations", nc);
		cJSON_AddNumberToObject(pr, "models", ms);
		cJSON_AddNumberToObject(pr, "subclusters", base->nparts);
		cJSON_AddNumberToObject(pr, "s_max_mb", base->s_max);
		cJSON_AddNumberToObject(pr, "r_max", base->r_max);
		cJSON_AddNumberToObject(pr, "time_limit_s", base->time_limit_s);
		cJSON_AddNumberToObject(pr, "mean_rate", mean);
		const char *names[4] = { "milp_rate_imbalance", "milp_memory_imbalance", "random_rate_imbalance",
					 "random_memory_imbalance" };
		int optimal = 0;
		for (int i = 0; i < done; i++)
			optimal += status[i] == SYM_PART_OPTIMAL;
		cJSON_AddNumberToObject(pr, "milp_proven_optimal", optimal);
		cJSON_AddNumberToObject(pr, "milp_solver_stopped", stopped);
		cJSON_AddItemToObject(pr, "milp_seconds", cJSON_CreateDoubleArray(secs, done));
		if (!quiet)
			fprintf(f, "\n%-26s %10s %10s %10s %10s\n", "imbalance factor", "p10", "median", "p90", "max");
		for (int k = 0; k < 4; k++) {
			cJSON *arr = cJSON_AddArrayToObject(pr, names[k]);
			int n = 0;
			for (int i = 0; i < done; i++) {
				cJSON_AddItemToArray(arr, isnan(v[k][i]) ? cJSON_CreateNull() : cJSON_CreateNumber(v[k][i]));
				if (!isnan(v[k][i]))
					v[k][n++] = v[k][i];
			}
			qsort(v[k], (size_t)n, sizeof(double), cmp_double);
			char med[64];
			snprintf(med, sizeof(med), "%s_median", names[k]);
			cJSON_AddNumberToObject(pr, med, n ? quantile(v[k], n, 0.5) : -1);
			if (!quiet)
				fprintf(f, "%-26s %10.4f %10.4f %10.4f %10.4f%s\n", names[k], quantile(v[k], n, 0.1),
					quantile(v[k], n, 0.5), quantile(v[k], n, 0.9), n ? v[k][n - 1] : NAN,
					n < done ? " (no feasible random assignment in some)" : "");
		}
		if (!quiet)
			fprintf(f, "MILP proven optimal in %d of %d configurations; CBC stopped at the time limit (the "
				   "greedy and local-search start stands) in %d\n", optimal, done, stopped);
		const char *json = cli_str(c, "json");
		char err[512];
		if (json && sym_write_json(json, doc, err, sizeof(err)))
			rc = cli_fail(c, 1, "%s", err);
	}
	cJSON_Delete(doc);
	for (int k = 0; k < 4; k++)
		free(v[k]);
	free(status);
	free(secs);
	free(m);
	return rc;
}

/* The top level (Section 4.7: several schedulers, each with its sub-clusters):
 * the same MILP splits the models into --clusters parts, balancing rate and
 * static memory, with --cluster-r-max the rate one scheduler takes and no
 * memory limit (a cluster's GPUs hold only their sub-cluster's models); then
 * each cluster's models into --subclusters parts under S_max and R_max. */
static int partition_two_levels(struct cli *c, const struct sym_experiment *e, const struct sym_part_problem *base)
{
	int C = (int)cli_int(c, "clusters"), n = base->nmodels;
	bool quiet = cli_flag(c, "quiet");
	FILE *f = cli_table_stream(c);
	struct sym_part_problem top = *base;
	top.nparts = C;
	top.s_max = 0;
	top.r_max = cli_given(c, "cluster-r-max") ? cli_num(c, "cluster-r-max") : 0;
	struct sym_part_result tr = { 0 };
	char err[512];
	int rc = sym_partition_milp(&top, &tr, err, sizeof(err));
	if (rc)
		return rc == -ENOMEM ? cli_fail(c, 1, "out of memory") : cli_usage_error(c, "%s", err);
	if (!tr.assign) {
		sym_part_result_free(&tr);
		return cli_fail(c, 1, "no split of the %d models into %d clusters meets --cluster-r-max", n, C);
	}
	struct sym_part_model *sub = calloc((size_t)n, sizeof(*sub));
	cJSON *doc = sym_result_head("partition");
	cJSON_AddItemToObject(doc, "config", sym_experiment_to_json(e));
	cJSON *cl = cJSON_AddObjectToObject(doc, "clusters");
	cJSON_AddItemToObject(cl, "milp", result_json(&tr, &top, true));
	cJSON *arr = cJSON_AddArrayToObject(cl, "each");
	if (!quiet)
		fprintf(f, "symphony %s partition: %d models into %d clusters (schedulers), then %d sub-clusters each; "
			   "time limit %g s per solve\n\nclusters: %s in %.2f s, imbalance rate %.4f, static memory %.4f\n",
			SYM_VERSION, n, C, base->nparts, base->time_limit_s, sym_part_status_name(tr.status), tr.seconds,
			tr.rate_imbalance, tr.mem_imbalance);
	for (int k = 0; k < C && !rc; k++) {
		int m = 0;
		double R = 0, S = 0;
		for (int i = 0; i < n; i++)
			if (tr.assign[i] == k) {
				sub[m++] = base->models[i];
				R += base->models[i].rate, S += base->models[i].static_mb;
			}
		struct sym_part_problem p = *base;
		p.models = sub;
		p.nmodels = m;
		struct sym_part_result r = { 0 };
		cJSON *co = cJSON_CreateObject();
		cJSON_AddNumberToObject(co, "models", m);
		cJSON_AddNumberToObject(co, "rate", R);
		cJSON_AddNumberToObject(co, "static_mb", S);
		if (!m) {
			cJSON_AddItemToArray(arr, co);
			continue;
		}
		if ((rc = sym_partition_milp(&p, &r, err, sizeof(err)))) {
			cJSON_Delete(co);
			rc = rc == -ENOMEM ? cli_fail(c, 1, "out of memory") : cli_usage_error(c, "%s", err);
			break;
		}
		cJSON_AddItemToObject(co, "subclusters", result_json(&r, &p, true));
		cJSON_AddItemToArray(arr, co);
		if (!quiet) {
			fprintf(f, "  cluster %-3d %5d models %10.1f req/s %10.0f MB static: sub-clusters %s in %.2f s, "
				   "imbalance rate %.4f, static memory %.4f\n", k, m, R, S, sym_part_status_name(r.status),
				r.seconds, r.rate_imbalance, r.mem_imbalance);
			if (r.assign)
				print_parts(f, e, &p, &r, 2); /* (indices are the cluster's: no names) */
		}
		if (!r.assign)
			rc = cli_fail(c, 1, "cluster %d: no split of its %d models into %d sub-clusters fits S_max %.0f MB "
				      "and R_max (%s)", k, m, base->nparts, base->s_max, sym_part_status_name(r.status));
		sym_part_result_free(&r);
	}
	const char *json = cli_str(c, "json");
	if (!rc && json && sym_write_json(json, doc, err, sizeof(err)))
		rc = cli_fail(c, 1, "%s", err);
	cJSON_Delete(doc);
	free(sub);
	sym_part_result_free(&tr);
	return rc;
}

int cli_cmd_partition(struct cli *c)
{
	struct sym_experiment e;
	int rc = cli_experiment(c, &e, false);
	if (rc)
		return rc;
	/* the models need not fit one GPU together (splitting them is the point),
	 * but each must fit alone */
	char err[512];
	bool check = e.memory_check;
	e.memory_check = false;
	e.partition.subclusters = 0;
	if (!(rc = sym_experiment_resolve(&e, err, sizeof(err)))) {
		e.memory_check = check;
		e.partition.subclusters = (int)cli_int(c, "subclusters");
		rc = sym_experiment_check_memory(&e, NULL, err, sizeof(err));
	}
	if (rc) {
		sym_experiment_finish(&e);
		return rc == -ENOMEM ? cli_fail(c, 1, "out of memory") : cli_usage_error(c, "%s", err);
	}
	int variants = (int)cli_int(c, "variants"), n, unknown;
	struct sym_part_model *models = part_models(c, &e, variants, &n, &unknown);
	if (!models) {
		sym_experiment_finish(&e);
		return cli_fail(c, 1, "out of memory");
	}
	double s_max = cli_given(c, "s-max") ? cli_num(c, "s-max") : e.kinds[0].memory_mb;
	struct sym_part_problem p = { .nmodels = n, .models = models, .nparts = (int)cli_int(c, "subclusters"),
				      .r_max = cli_given(c, "r-max") ? cli_num(c, "r-max") : 0,
				      .s_max = s_max > 0 ? s_max : 0, .w = cli_given(c, "weight") ? cli_num(c, "weight") : 0,
				      .c_max = -1, .time_limit_s = cli_num(c, "time-limit"), .seed = e.seed };
	if (cli_int(c, "clusters") > 1) {
		rc = partition_two_levels(c, &e, &p);
		free(models);
		sym_experiment_finish(&e);
		return rc;
	}
	if (cli_int(c, "configs") > 0) {
		rc = partition_study(c, &e, &p);
		free(models);
		sym_experiment_finish(&e);
		return rc;
	}
	bool quiet = cli_flag(c, "quiet"), random = cli_flag(c, "random");
	FILE *f = cli_table_stream(c);
	if (!quiet)
		fprintf(f, "symphony %s partition: %d models (%zu x %d variant%s), %d sub-clusters, R_max %s, S_max %.0f MB "
			   "(%s), time limit %g s%s\n", SYM_VERSION, n, e.nmodels, variants, variants == 1 ? "" : "s",
			p.nparts, p.r_max > 0 ? cli_str(c, "r-max") : "none", p.s_max, cli_given(c, "s-max") ? "--s-max" : "the GPU's memory",
			p.time_limit_s, "");
	if (unknown && !quiet)
		fprintf(f, "  (%d model(s) with unknown static or dynamic memory: counted as 0)\n", unknown);
	struct sym_part_result milp = { 0 }, rnd = { 0 };
	if ((rc = sym_partition_milp(&p, &milp, err, sizeof(err))))
		rc = cli_usage_error(c, "%s", err);
	if (!rc && random && (rc = sym_partition_random(&p, &rnd, err, sizeof(err))))
		rc = cli_usage_error(c, "%s", err);
	if (!rc && milp.status == SYM_PART_INFEASIBLE)
		rc = cli_fail(c, 1, "no assignment fits: a sub-cluster's models must fit in S_max %.0f MB (static plus the "
			      "largest dynamic) and stay under R_max; raise --subclusters or the limits", p.s_max);
	if (!rc && milp.status == SYM_PART_UNKNOWN)
		rc = cli_fail(c, 1, "no assignment found within %g s (none proven impossible either): raise --time-limit",
			      p.time_limit_s);
	if (!rc && !quiet) {
		fprintf(f, "\nMILP (CBC): %s in %.2f s, objective %.4g (dR %.4g req/s + w %.4g x dS %.4g MB; lower bound %.4g)\n",
			sym_part_status_name(milp.status), milp.seconds, milp.objective, milp.dr, milp.w, milp.ds, milp.bound);
		fprintf(f, "  imbalance (max - min) / avg: rate %.4f, static memory %.4f\n", milp.rate_imbalance,
			milp.mem_imbalance);
		if (milp.solver_stopped)
			fprintf(f, "  (CBC was stopped at the time limit, its root processing unfinished: this is the start, a "
				   "greedy assignment improved by local search)\n");
		print_parts(f, &e, &p, &milp, variants);
		if (random && rnd.assign)
			fprintf(f, "\nrandom baseline: %llu assignments in %.2f s (%llu feasible), best objective %.4g, "
				   "imbalance rate %.4f, static memory %.4f\n", (unsigned long long)rnd.tries, rnd.seconds,
				(unsigned long long)rnd.feasible, rnd.objective, rnd.rate_imbalance, rnd.mem_imbalance);
		else if (random)
			fprintf(f, "\nrandom baseline: no feasible assignment in %llu tries\n", (unsigned long long)rnd.tries);
	}
	const char *json = cli_str(c, "json");
	if (!rc && json) {
		cJSON *doc = sym_result_head("partition");
		cJSON_AddItemToObject(doc, "config", sym_experiment_to_json(&e));
		cJSON *pr = cJSON_AddObjectToObject(doc, "problem");
		cJSON_AddNumberToObject(pr, "models", n);
		cJSON_AddNumberToObject(pr, "variants", variants);
		cJSON_AddStringToObject(pr, "rates", cli_str(c, "rates"));
		cJSON_AddNumberToObject(pr, "subclusters", p.nparts);
		cJSON_AddNumberToObject(pr, "r_max", p.r_max);
		cJSON_AddNumberToObject(pr, "s_max_mb", p.s_max);
		cJSON_AddNumberToObject(pr, "weight", milp.w);
		cJSON_AddNumberToObject(pr, "time_limit_s", p.time_limit_s);
		cJSON_AddNumberToObject(pr, "unknown_memory_models", unknown);
		cJSON_AddItemToObject(doc, "milp", result_json(&milp, &p, true));
		if (random)
			cJSON_AddItemToObject(doc, "random", result_json(&rnd, &p, false));
		if (sym_write_json(json, doc, err, sizeof(err)))
			rc = cli_fail(c, 1, "%s", err);
		cJSON_Delete(doc);
	}
	sym_part_result_free(&milp);
	sym_part_result_free(&rnd);
	free(models);
	sym_experiment_finish(&e);
	return rc;
}
