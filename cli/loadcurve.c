/* cli/loadcurve.c - symphony loadcurve (the computation: sim/loadcurve.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "core/build.h"
#include "experiment/estimate.h"
#include "experiment/output.h"
#include "experiment/result.h"
#include "sim/engine.h"
#include "sim/goodput.h"
#include "sim/loadcurve.h"
#include "sym_version.h"

#define MAX_LOADS 256

static int parse_loads(const struct cli *c, double *loads, size_t *n)
{
	const char *spec = cli_str(c, "loads");
	*n = 0;
	if (!spec) {
		for (int i = 1; i <= 20; i++)
			loads[(*n)++] = 0.1 * i;
		return 0;
	}
	char *list = strdup(spec), *save = NULL, *end;
	if (!list)
		return cli_fail(c, 1, "out of memory");
	int rc = 0;
	for (char *t = strtok_r(list, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
		double x = strtod(t, &end);
		if (*n == MAX_LOADS)
			rc = cli_usage_error(c, "--loads: at most %d loads", MAX_LOADS);
		else if (*end || !(x > 0) || x > 100)
			rc = cli_usage_error(c, "--loads: expected fractions of the reference from 0 (excluded) to 100 (e.g. "
						"0.5,1,1.5), got '%s'", t);
		else
			loads[(*n)++] = x;
	}
	free(list);
	if (!rc && !*n)
		rc = cli_usage_error(c, "--loads: no load given");
	return rc;
}

struct reference {
	double rps;
	const char *from;
	cJSON *by_seed, *ci;
};

/* The reference: --reference, else the first policy's goodput (mean over the seeds). */
static int find_reference(const struct cli *c, struct sym_experiment *e, const struct sym_policy *pol,
			  struct reference *ref)
{
	memset(ref, 0, sizeof(*ref));
	if (cli_given(c, "reference")) {
		ref->rps = cli_num(c, "reference");
		ref->from = "--reference";
		return 0;
	}
	char pname[128], err[1024];
	e->policy = *pol;
	size_t nrep = e->replications > 1 ? (size_t)e->replications : 1;
	if (!cli_flag(c, "quiet"))
		fprintf(stderr, "reference: the goodput of %s (%s criterion%s) ...\n",
			sym_policy_format(pol, pname, sizeof(pname)), sym_criterion_name(e->criterion),
			nrep > 1 ? ", the mean over the seeds" : "");
	struct sym_goodput_reps g;
	int rc = sym_goodput_replicate(e, cli_jobs(c), false, &g, err, sizeof(err));
	if (!rc) {
		ref->rps = g.mean > 0 ? g.mean : g.by_seed[0].upper_bound_rps / 10;
		ref->from = g.mean > 0 ? "goodput of the first policy"
				       : "a tenth of the capacity bound: the first policy's goodput is 0";
		double *x = malloc(nrep * sizeof(*x));
		ref->by_seed = cJSON_CreateArray();
		for (size_t i = 0; x && i < nrep; i++) {
			x[i] = g.by_seed[i].goodput_rps;
			cJSON_AddItemToArray(ref->by_seed, cJSON_CreateNumber(x[i]));
		}
		ref->ci = x ? sym_ci95_json(x, nrep) : NULL;
		free(x);
	}
	sym_goodput_reps_finish(&g);
	return rc ? cli_fail(c, cli_status(rc), "%s", err) : 0;
}

static cJSON *lc_doc(const struct sym_experiment *e, const struct sym_loadcurve *L, struct reference *ref)
{
	cJSON *doc = sym_result_head("loadcurve");
	cJSON_AddNumberToObject(doc, "seed", (double)e->seed);
	cJSON_AddNumberToObject(doc, "replications", (double)L->nrep);
	cJSON_AddStringToObject(doc, "criterion", sym_criterion_name(e->criterion));
	cJSON_AddNumberToObject(doc, "reference_rps", ref->rps);
	cJSON_AddStringToObject(doc, "reference", ref->from);
	if (ref->by_seed) {
		cJSON_AddItemToObject(doc, "reference_ci95", ref->ci ? ref->ci : cJSON_CreateNull());
		cJSON_AddItemToObject(doc, "reference_by_seed", ref->by_seed);
		ref->ci = ref->by_seed = NULL;
	}
	cJSON_AddItemToObject(doc, "config", sym_experiment_to_json(e));
	cJSON_AddItemToObject(doc, "points", sym_loadcurve_points_json(e, L));
	return doc;
}

static void print_table(FILE *f, const struct sym_experiment *e, const struct sym_loadcurve *L,
			const struct reference *ref)
{
	size_t nrep = L->nrep;
	double *gx = calloc(nrep, sizeof(*gx)), *bx = calloc(nrep, sizeof(*bx));
	char seeds[96], pname[128];
	snprintf(seeds, sizeof(seeds), nrep > 1 ? "seeds %llu..%llu (mean \u00b1 95%% interval)" : "seed %llu",
		 (unsigned long long)e->seed, (unsigned long long)(e->seed + nrep - 1));
	fprintf(f, "symphony %s loadcurve: %zu model(s), %d GPUs, %s criterion, %s; load 1 = %.1f req/s (%s)\n",
		SYM_VERSION, e->nmodels, e->gpus, sym_criterion_name(e->criterion), seeds, ref->rps, ref->from);
	for (size_t p = 0; gx && bx && p < L->npol; p++) {
		fprintf(f, "\n%s\n%6s %12s %16s %16s %9s %7s %6s  %s\n", sym_policy_format(&L->pols[p], pname, sizeof(pname)),
			"load", "offered r/s", "goodput r/s", "bad rate %", "GPU busy", "in use", "batch",
			"worst model (bad rate)");
		for (size_t i = 0; i < L->nloads; i++) {
			size_t k = p * L->nloads + i;
			const struct sym_lc_point *pt = &L->pts[k];
			sym_loadcurve_seeds(L, k, 0, gx);
			sym_loadcurve_seeds(L, k, 1, bx);
			for (size_t s = 0; s < nrep; s++)
				bx[s] *= 100;
			char g[64], b[64], w[96] = "-";
			if (pt->v.worst >= 0)
				snprintf(w, sizeof(w), "%.24s (%.2f%%)", sym_unit_name(e, pt->v.worst), 100 * pt->v.worst_bad_rate);
			sym_format_pm(g, sizeof(g), "%.0f", gx, nrep);
			sym_format_pm(b, sizeof(b), "%.2f", bx, nrep);
			/* the width counts bytes: one more for the two of a UTF-8 "±" */
			fprintf(f, "%6.2f %12.1f %*s %*s %8.0f%% %7.0f %6.0f  %s\n", pt->load, pt->offered_rps,
				16 + (nrep > 1), g, 16 + (nrep > 1), b, 100 * pt->busy, pt->gpus_used, pt->batch_p50, w);
		}
	}
	free(gx);
	free(bx);
}

static int write_csv(const struct cli *c, const struct sym_experiment *e, const struct sym_loadcurve *L,
		     const struct reference *ref)
{
	struct sym_outfile of = { 0 };
	char err[1024], pname[128];
	if (sym_outfile_open(&of, cli_str(c, "csv"), err, sizeof(err)))
		return cli_fail(c, 1, "%s", err);
	fprintf(of.f, "policy,load,offered_rps,goodput_rps,bad_rate,gpu_busy_fraction,gpus_used,batch_p50,"
		      "goodput_ci95_low,goodput_ci95_high,bad_rate_ci95_low,bad_rate_ci95_high,worst_model,"
		      "worst_model_bad_rate\n");
	double *gx = calloc(L->nrep, sizeof(*gx)), *bx = calloc(L->nrep, sizeof(*bx));
	for (size_t k = 0; gx && bx && k < L->npts; k++) {
		const struct sym_lc_point *pt = &L->pts[k];
		sym_loadcurve_seeds(L, k, 0, gx);
		sym_loadcurve_seeds(L, k, 1, bx);
		double m, glo, ghi, blo, bhi;
		bool ci = sym_mean_ci95(gx, L->nrep, &m, &glo, &ghi);
		sym_mean_ci95(bx, L->nrep, &m, &blo, &bhi);
		fprintf(of.f, "\"%s\",%g,%.3f,%.3f,%.6f,%.6f,%g,%g,", sym_policy_format(&L->pols[pt->policy], pname, sizeof(pname)),
			pt->load, pt->offered_rps, pt->good_rps, pt->bad_rate, pt->busy, pt->gpus_used, pt->batch_p50);
		if (ci)
			fprintf(of.f, "%.3f,%.3f,%.6f,%.6f,", glo, ghi, blo, bhi);
		else
			fprintf(of.f, ",,,,");
		fprintf(of.f, "\"%s\",%.6f\n", pt->v.worst >= 0 ? sym_unit_name(e, pt->v.worst) : "", pt->v.worst_bad_rate);
	}
	bool oom = !gx || !bx;
	free(gx);
	free(bx);
	if (oom) {
		sym_outfile_abort(&of);
		return cli_fail(c, 1, "out of memory");
	}
	cJSON *meta = sym_csv_meta("loadcurve", "loadcurve", "one row per (policy, load): the offered rate, the goodput "
				   "(served within the SLO), the bad rate, the GPU busy fraction, the GPUs in use and the "
				   "median batch (means over the seeds), the 95% intervals of goodput and bad rate (empty "
				   "for one seed) and the worst model", e);
	if (meta) {
		cJSON_AddNumberToObject(meta, "replications", (double)L->nrep);
		cJSON_AddStringToObject(meta, "criterion", sym_criterion_name(e->criterion));
		cJSON_AddNumberToObject(meta, "reference_rps", L->ref);
		cJSON_AddStringToObject(meta, "reference", ref->from);
	}
	return sym_csv_commit(&of, meta, err, sizeof(err)) ? cli_fail(c, 1, "%s", err) : 0;
}

static int lc_setup(struct cli *c, struct sym_experiment *e, struct sym_policy *pols, int *npol, double *loads,
		    size_t *nloads)
{
	int rc = cli_experiment(c, e, true);
	if (!rc)
		rc = parse_loads(c, loads, nloads);
	if (!rc)
		rc = cli_policy_list(c, e, pols, npol);
	char err[1024];
	for (int i = 0; i < *npol && !rc; i++) {
		e->policy = pols[i];
		if (sym_sim_check(e, err, sizeof(err)))
			rc = cli_usage_error(c, "%s", err);
	}
	return rc;
}

int cli_cmd_loadcurve(struct cli *c)
{
	struct sym_experiment e;
	struct sym_policy pols[MAX_POLICIES];
	int npol = 0;
	double loads[MAX_LOADS];
	size_t nloads = 0;
	int rc = lc_setup(c, &e, pols, &npol, loads, &nloads);
	struct reference ref = { 0 };
	bool quiet = cli_flag(c, "quiet");
	size_t nrep = e.replications > 1 ? (size_t)e.replications : 1;
	double total = (double)(npol * nloads * nrep) * sym_experiment_duration(&e);
	if (!cli_given(c, "reference"))
		total += (ceil(log2(1 / e.tolerance)) + 2) * sym_experiment_duration(&e) * (double)nrep;
	char err[1024];
	int jobs = cli_jobs(c);
	if (!rc && !cli_given(c, "reference") &&
	    sym_estimate_check(&e, sym_goodput_upper_bound(&e), 0, false, jobs < (int)nrep ? jobs : (int)nrep, err,
			       sizeof(err)))
		rc = cli_usage_error(c, "%s (the reference's goodput search, at its upper bound)", err);
	double top = 0;
	for (size_t i = 0; i < nloads; i++)
		top = loads[i] > top ? loads[i] : top;
	struct cli_progress *p = rc ? NULL : cli_progress_start("loadcurve", total, !quiet);
	if (!rc)
		rc = find_reference(c, &e, &pols[0], &ref);
	struct sym_loadcurve L = { 0 };
	size_t nruns = (size_t)npol * nloads * nrep;
	if (!rc && sym_estimate_check(&e, top * ref.rps, 0, false, (size_t)jobs < nruns ? jobs : (int)nruns, err,
				      sizeof(err)))
		rc = cli_usage_error(c, "%s (at load %g)", err, top);
	if (!rc && !quiet)
		fprintf(stderr, "loadcurve: %d polic%s x %zu loads of %.1f req/s%s, %d at a time\n", npol,
			npol == 1 ? "y" : "ies", nloads, ref.rps, nrep > 1 ? " x seeds" : "", cli_jobs(c));
	if (!rc && (rc = sym_loadcurve_run(&e, pols, (size_t)npol, loads, nloads, ref.rps, cli_jobs(c), &L, err,
					   sizeof(err))))
		rc = cli_fail(c, cli_status(rc), "%s", err);
	cli_progress_stop(p);
	if (!rc) {
		size_t nfew = 0;
		for (size_t k = 0; k < L.npts; k++)
			nfew += L.pts[k].few > 0;
		if (nfew)
			fprintf(stderr, "symphony: warning: at %zu of %zu points some model had fewer than %llu measured "
					"requests, too few for a bad rate of %g%% to mean much (few_request_models)\n", nfew,
				L.npts, (unsigned long long)sym_min_requests(e.max_bad_rate), 100 * e.max_bad_rate);
		const char *json = cli_str(c, "json");
		if (!quiet)
			print_table(cli_table_stream(c), &e, &L, &ref);
		if (cli_str(c, "csv"))
			rc = write_csv(c, &e, &L, &ref);
		e.policy = pols[0];
		cJSON *doc = json ? lc_doc(&e, &L, &ref) : NULL;
		if (json && (!doc || sym_write_json(json, doc, err, sizeof(err))))
			rc = cli_fail(c, 1, "%s", doc ? err : "out of memory");
		cJSON_Delete(doc);
	}
	cJSON_Delete(ref.by_seed);
	cJSON_Delete(ref.ci);
	sym_loadcurve_finish(&L);
	sym_experiment_finish(&e);
	return rc;
}
