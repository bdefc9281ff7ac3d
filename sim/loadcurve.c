/* sim/loadcurve.c - the load curve (sim/loadcurve.h). */
#include "sim/loadcurve.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "sim/engine.h"
#include "sim/goodput.h"
#include "sim/parallel.h"

struct lc_job {
	const struct sym_experiment *e;
	struct sym_loadcurve *L;
	pthread_mutex_t mu;
	char err[1024];
	size_t err_run; /* the run whose error is reported: the first by index */
	int rc;
};

static void keep_run(struct sym_loadcurve *L, size_t k, const struct sym_experiment *e, const struct sym_run_result *r)
{
	struct sym_lc_run *x = &L->runs[k];
	x->offered_rps = r->total.offered / r->window_s;
	x->good_rps = r->total.served / r->window_s;
	if (r->nqueries) { /* queries: queries per second */
		uint64_t off = 0, good = 0;
		for (size_t q = 0; q < r->nqueries; q++) {
			off += r->queries[q].offered;
			good += r->queries[q].good;
		}
		x->offered_rps = (double)off / r->window_s;
		x->good_rps = (double)good / r->window_s;
	}
	x->bad_rate = sym_run_bad_rate(r);
	x->busy = r->gpu_busy_fraction;
	x->gpus_used = r->gpus_used;
	x->batch_p50 = sym_batch_quantile(&r->total, 0.5);
	struct sym_verdict v;
	sym_judge(e, r, &v);
	x->few = v.few;
	/* the units judged: the models, or the queries (never more than the models) in the first slots */
	for (size_t m = 0; m < r->nmodels; m++) {
		bool q = m < r->nqueries;
		L->counts[(k * r->nmodels + m) * 2] = r->nqueries ? (q ? r->queries[m].offered : 0) : r->models[m].offered;
		L->counts[(k * r->nmodels + m) * 2 + 1] = r->nqueries ? (q ? r->queries[m].late + r->queries[m].dropped : 0)
							    : r->models[m].late + r->models[m].dropped;
	}
}

static int lc_one(void *ctx, size_t k)
{
	struct lc_job *J = ctx;
	struct sym_loadcurve *L = J->L;
	struct sym_experiment e = *J->e; /* shares the resolved parts, read-only; policy and seed differ */
	size_t pt = k / L->nrep;
	e.policy = L->pols[pt / L->nloads];
	e.seed = J->e->seed + k % L->nrep;
	/* the load in req/s as the schedule's scale (a constant rate's mean at scale 1 is 1) */
	struct sym_run_opts o = { .rate = L->loads[pt % L->nloads] * L->ref / sym_schedule_mean_rate(&e) };
	struct sym_run_result r;
	char err[1024];
	int rc = sym_sim_run(&e, &o, &r, err, sizeof(err));
	if (!rc) {
		keep_run(L, k, &e, &r);
	} else {
		pthread_mutex_lock(&J->mu);
		if (!J->rc || k < J->err_run) {
			snprintf(J->err, sizeof(J->err), "%s", err);
			J->rc = rc;
			J->err_run = k;
		}
		pthread_mutex_unlock(&J->mu);
	}
	sym_run_result_finish(&r);
	return rc ? 1 : 0;
}

/* Point pt from its runs: the means, and the verdict on the models' counts
 * pooled over the seeds. Returns 0 or -ENOMEM. */
static int point_make(const struct sym_experiment *e, struct sym_loadcurve *L, size_t pt)
{
	size_t n = L->nrep, nm = e->nmodels;
	struct sym_lc_point *out = &L->pts[pt];
	memset(out, 0, sizeof(*out));
	out->policy = (int)(pt / L->nloads);
	out->load = L->loads[pt % L->nloads];
	for (size_t s = 0; s < n; s++) {
		const struct sym_lc_run *x = &L->runs[pt * n + s];
		out->offered_rps += x->offered_rps / (double)n;
		out->good_rps += x->good_rps / (double)n;
		out->bad_rate += x->bad_rate / (double)n;
		out->busy += x->busy / (double)n;
		out->gpus_used += x->gpus_used / (double)n;
		out->batch_p50 += x->batch_p50 / (double)n;
		out->few = x->few > out->few ? x->few : out->few;
	}
	struct sym_run_result pooled = { .nmodels = nm, .nqueries = e->nqueries };
	pooled.models = calloc(nm, sizeof(*pooled.models));
	pooled.queries = e->nqueries ? calloc(e->nqueries, sizeof(*pooled.queries)) : NULL;
	if (!pooled.models || (e->nqueries && !pooled.queries)) {
		free(pooled.models);
		free(pooled.queries);
		return -ENOMEM;
	}
	for (size_t s = 0; s < n; s++) {
		for (size_t m = 0; m < nm; m++) {
			const uint64_t *c = &L->counts[((pt * n + s) * nm + m) * 2];
			if (e->nqueries && m < e->nqueries) {
				pooled.queries[m].offered += c[0];
				pooled.queries[m].late += c[1];
			} else if (!e->nqueries) {
				pooled.models[m].offered += c[0];
				pooled.models[m].late += c[1];
			}
			pooled.total.offered += c[0];
			pooled.total.late += c[1];
		}
	}
	struct sym_experiment pe = *e;
	pe.policy = L->pols[out->policy];
	sym_judge(&pe, &pooled, &out->v);
	free(pooled.models);
	free(pooled.queries);
	return 0;
}

int sym_loadcurve_run(const struct sym_experiment *e, const struct sym_policy *pols, size_t npol, const double *loads,
		      size_t nloads, double ref, int jobs, struct sym_loadcurve *L, char *err, size_t errlen)
{
	memset(L, 0, sizeof(*L));
	L->pols = pols;
	L->npol = npol;
	L->loads = loads;
	L->nloads = nloads;
	L->nrep = e->replications > 1 ? (size_t)e->replications : 1;
	L->ref = ref;
	L->npts = npol * nloads;
	size_t nruns = L->npts * L->nrep;
	L->runs = calloc(nruns, sizeof(*L->runs));
	L->counts = calloc(nruns * e->nmodels * 2, sizeof(*L->counts));
	L->pts = calloc(L->npts, sizeof(*L->pts));
	if (!L->runs || !L->counts || !L->pts)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	struct lc_job J = { .e = e, .L = L };
	pthread_mutex_init(&J.mu, NULL);
	sym_parallel_for(nruns, jobs, lc_one, &J);
	pthread_mutex_destroy(&J.mu);
	if (J.rc)
		return snprintf(err, errlen, "%s", J.err), J.rc;
	for (size_t k = 0; k < L->npts; k++)
		if (point_make(e, L, k))
			return snprintf(err, errlen, "out of memory"), -ENOMEM;
	return 0;
}

void sym_loadcurve_finish(struct sym_loadcurve *L)
{
	free(L->runs);
	free(L->counts);
	free(L->pts);
	memset(L, 0, sizeof(*L));
}

void sym_loadcurve_seeds(const struct sym_loadcurve *L, size_t p, int metric, double *x)
{
	for (size_t s = 0; s < L->nrep; s++) {
		const struct sym_lc_run *r = &L->runs[p * L->nrep + s];
		x[s] = metric == 0 ? r->good_rps : metric == 1 ? r->bad_rate : metric == 2 ? r->busy : r->batch_p50;
	}
}

static cJSON *point_json(const struct sym_experiment *e, const struct sym_loadcurve *L, size_t k, double *x)
{
	static const char *const names[] = { "goodput", "bad_rate", "gpu_busy_fraction", "batch_p50" };
	const struct sym_lc_point *pt = &L->pts[k];
	char pname[128];
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "policy", sym_policy_format(&L->pols[pt->policy], pname, sizeof(pname)));
	cJSON_AddNumberToObject(o, "load", pt->load);
	cJSON_AddNumberToObject(o, "offered_rps", pt->offered_rps);
	const double means[] = { pt->good_rps, pt->bad_rate, pt->busy, pt->batch_p50 };
	for (int m = 0; m < 4; m++) {
		char key[64];
		sym_loadcurve_seeds(L, k, m, x);
		cJSON_AddNumberToObject(o, m == 0 ? "goodput_rps" : names[m], means[m]);
		snprintf(key, sizeof(key), "%s_ci95", names[m]);
		cJSON_AddItemToObject(o, key, sym_ci95_json(x, L->nrep));
		snprintf(key, sizeof(key), "%s_by_seed", names[m]);
		cJSON *a = cJSON_AddArrayToObject(o, key);
		for (size_t s = 0; s < L->nrep; s++)
			cJSON_AddItemToArray(a, cJSON_CreateNumber(x[s]));
	}
	cJSON_AddNumberToObject(o, "gpus_used", pt->gpus_used);
	cJSON_AddBoolToObject(o, "meets_criterion", pt->v.ok);
	if (pt->v.worst >= 0)
		cJSON_AddStringToObject(o, "worst_model", sym_unit_name(e, pt->v.worst));
	else
		cJSON_AddNullToObject(o, "worst_model");
	cJSON_AddNumberToObject(o, "worst_model_bad_rate", pt->v.worst_bad_rate);
	cJSON_AddNumberToObject(o, "few_request_models", (double)pt->few);
	return o;
}

cJSON *sym_loadcurve_points_json(const struct sym_experiment *e, const struct sym_loadcurve *L)
{
	cJSON *arr = cJSON_CreateArray();
	double *x = calloc(L->nrep, sizeof(*x));
	if (!arr || !x) {
		cJSON_Delete(arr);
		free(x);
		return NULL;
	}
	for (size_t k = 0; k < L->npts; k++)
		cJSON_AddItemToArray(arr, point_json(e, L, k, x));
	free(x);
	return arr;
}
