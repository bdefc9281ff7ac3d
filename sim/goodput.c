#include "sim/goodput.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "core/capacity.h"
#include "core/error.h"
#include "sim/parallel.h"

double sym_schedule_mean_rate(const struct sym_experiment *e)
{
	double sum = 0;
	for (size_t m = 0; m < e->nmodels; m++)
		if (!e->nqueries || e->stage_of[m] == 0) /* with queries: queries per second (their roots') */
			sum += sym_experiment_model_rate(e, m);
	return sum;
}

/* The highest total rate of the schedule at scale 1 (for a constant rate:
 * 1, the scale is the rate). */
static double schedule_peak_rate(const struct sym_experiment *e)
{
	double peak = 0;
	if (e->rate_csv[0]) {
		for (size_t r = 0; r < e->table.nrows; r++) {
			double sum = 0;
			for (size_t m = 0; m < e->nmodels; m++)
				sum += e->table.rates[r * e->table.ncols + (size_t)e->table_col[m]];
			peak = sum > peak ? sum : peak;
		}
		return peak;
	}
	if (e->arrival_trace[0])
		return e->trace->peak_total;
	for (size_t i = 0; i < e->nseg; i++)
		peak = e->segments[i].rate > peak ? e->segments[i].rate : peak;
	return e->nseg ? peak : 1;
}

/* Model m's highest rate at schedule scale 1 (for a constant rate, its share). */
static double model_peak_rate(const struct sym_experiment *e, size_t m, double schedule_peak)
{
	if (e->arrival_trace[0])
		return e->trace->peak[e->trace_col[m]];
	if (!e->rate_csv[0])
		return e->shares[m] * schedule_peak;
	double peak = 0;
	for (size_t r = 0; r < e->table.nrows; r++) {
		double x = e->table.rates[r * e->table.ncols + (size_t)e->table_col[m]];
		peak = x > peak ? x : peak;
	}
	return peak;
}

void sym_stop_limits(const struct sym_experiment *e, double scale, uint64_t *total, uint64_t *per_model)
{
	double window = sym_experiment_duration(e) - e->warmup_s;
	double peak = schedule_peak_rate(e); /* at scale 1: bounds the measured arrivals' expectation */
	double expected = scale * peak * window;
	bool per = e->criterion == SYM_CRITERION_PER_MODEL;
	/* Under the per-model criterion the models' allowances add up to at most the total's plus one
	 * request per model, so the total's slack grows by that. */
	*total = (uint64_t)(1.5 * e->max_bad_rate * expected) + 20 + (per ? e->nmodels : 0);
	for (size_t m = 0; per && per_model && m < e->nmodels; m++) {
		double allowed = e->max_bad_rate * scale * model_peak_rate(e, m, peak) * window;
		per_model[m] = (uint64_t)(1.5 * (allowed > 1 ? allowed : 1)) + 20;
	}
}

double sym_goodput_upper_bound(const struct sym_experiment *e)
{
	/* Every GPU busy with maximum batches, in proportion; with several
	 * kinds, their capacities add (a kind too slow for a model leaves that
	 * model out of its cost, which only raises the bound). */
	double mean = sym_schedule_mean_rate(e), hi_rate = 0;
	if (!(mean > 0))
		return 0;
	for (int k = 0; k < e->nkinds; k++) {
		double gpu_s_per_req = 0;
		for (size_t m = 0; m < e->nmodels; m++) {
			const struct sym_profile *p = &e->profiles[(size_t)k * e->nmodels + m];
			if (sym_to_ms(p->lat[1]) > e->model_slo_ms[m])
				continue;
			double share = sym_experiment_model_rate(e, m) / mean;
			gpu_s_per_req += share * sym_to_s(p->lat[p->max_batch]) / p->max_batch;
		}
		int count = e->ngroups ? e->groups[k].count : e->gpus;
		if (gpu_s_per_req > 0)
			hi_rate += count / gpu_s_per_req;
	}
	return hi_rate;
}

double sym_goodput_bound(const struct sym_experiment *e)
{
	double mean = sym_schedule_mean_rate(e);
	size_t n = e->nmodels;
	if (!(mean > 0) || e->nqueries || e->nkinds > SYM_BOUND_KINDS)
		return -1;
	struct sym_bound_model *bm = calloc(n ? n : 1, sizeof(*bm));
	sym_time **le = calloc(n * (size_t)e->nkinds + 1, sizeof(*le));
	double bound = -1;
	if (!bm || !le)
		goto out;
	sym_time fixed = sym_ms(e->ctrl_ms + e->resp_ms), data = sym_ms(e->data_ms);
	for (size_t m = 0; m < n; m++) {
		bm[m].nkinds = e->nkinds;
		bm[m].slo = sym_ms(e->model_slo_ms[m]);
		bm[m].share = sym_experiment_model_rate(e, m) / mean;
		for (int k = 0; k < e->nkinds; k++) {
			const struct sym_profile *p = &e->profiles[(size_t)k * n + m];
			sym_time *x = le[m * (size_t)e->nkinds + (size_t)k] = malloc(((size_t)p->max_batch + 1) * sizeof(*x));
			if (!x)
				goto out;
			for (int b = 0; b <= p->max_batch; b++)
				x[b] = p->lat[b] + fixed + data * b;
			bm[m].lat[k] = p->lat;
			bm[m].le[k] = x;
			bm[m].max_batch[k] = p->max_batch;
		}
	}
	bound = sym_multi_bound(bm, (int)n, (double)e->gpus);
out:
	for (size_t i = 0; le && i < n * (size_t)e->nkinds; i++)
		free(le[i]);
	free(le);
	free(bm);
	return bound;
}

int sym_goodput_search(const struct sym_experiment *e, bool progress, struct sym_goodput *out, char *err,
		       size_t errlen)
{
	memset(out, 0, sizeof(*out));
	double mean = sym_schedule_mean_rate(e);
	if (!(mean > 0))
		return snprintf(err, errlen, "goodput: the rate schedule offers no requests"), -EINVAL;
	double hi_rate = sym_goodput_upper_bound(e);
	out->upper_bound_rps = hi_rate;
	double lo = 0, hi = hi_rate / mean; /* in scale units */
	uint64_t *limits = NULL;
	if (e->criterion == SYM_CRITERION_PER_MODEL && !(limits = calloc(e->nmodels, sizeof(*limits))))
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	int rc = 0;
	/* Below `floor` some model would get fewer measured requests than a bad
	 * rate of max_bad_rate can be judged on (sym_min_requests): a run there
	 * would pass on a handful of requests, so the search does not go there. */
	double window = sym_experiment_duration(e) - e->warmup_s, least = INFINITY;
	for (size_t m = 0; m < e->nmodels; m++) {
		double r = sym_experiment_model_rate(e, m);
		if (e->nqueries && e->stage_of[m] != 0)
			continue; /* queries are judged: their roots' rates */
		if (r > 0 && r < least)
			least = r;
	}
	double floor = (double)sym_min_requests(e->max_bad_rate) / (least * window);
	out->floor_rps = floor * mean;
	while (hi - lo > e->tolerance * hi && out->nsteps < sizeof(out->steps) / sizeof(out->steps[0])) {
		double mid = lo == 0 && out->nsteps == 0 ? hi * 0.75 : (lo + hi) / 2;
		if (mid < floor) {
			out->hit_floor = true;
			break;
		}
		struct sym_run_opts o = { .rate = mid, .stop_model_bad = limits };
		sym_stop_limits(e, mid, &o.stop_after_bad, limits);
		struct sym_run_result r;
		rc = sym_sim_run(e, &o, &r, err, errlen);
		if (rc) {
			sym_run_result_finish(&r);
			break;
		}
		struct sym_verdict v;
		sym_judge(e, &r, &v);
		double bad = sym_run_bad_rate(&r);
		out->steps[out->nsteps++] = (struct sym_goodput_step){ mid * mean, bad, v.worst, v.worst_bad_rate, v.ok,
								       r.stopped_early };
		if (progress)
			fprintf(stderr, "  goodput search: %10.1f %-9s bad rate %7.3f%%, worst %-16.16s %7.3f%%  %s  "
				"(%.2f s)\n", mid * mean, sym_rate_unit(e), 100 * bad, v.worst >= 0 ? sym_unit_name(e, v.worst) : "-",
				100 * v.worst_bad_rate, v.ok ? "ok" : r.stopped_early ? "too bad (stopped early)" : "too bad",
				r.wall_seconds);
		if (v.ok) {
			lo = mid;
			if (out->have_run)
				sym_run_result_finish(&out->run);
			out->run = r;
			out->have_run = true;
		} else {
			hi = mid;
			sym_run_result_finish(&r);
		}
	}
	free(limits);
	out->scale = lo;
	out->goodput_rps = lo * mean;
	out->fail_rps = hi * mean;
	return rc;
}

bool sym_goodput_interval(const double *pass, const double *fail, size_t n, double *lo, double *hi)
{
	double m, a, b;
	if (!sym_mean_ci95(pass, n, &m, lo, &a) || !sym_mean_ci95(fail, n, &m, &b, hi))
		return false;
	return true;
}

void sym_goodput_finish(struct sym_goodput *g)
{
	if (g && g->have_run) {
		sym_run_result_finish(&g->run);
		g->have_run = false;
	}
}

struct reps_job {
	const struct sym_experiment *e;
	struct sym_goodput_reps *out;
	bool progress; /* the steps of a single search */
	int *rc;
	char (*err)[1024];
};

static int reps_one(void *ctx, size_t i)
{
	struct reps_job *J = ctx;
	struct sym_experiment e = *J->e; /* shares the resolved parts, read-only; only the seed differs */
	e.seed = J->out->seed + i;
	struct sym_goodput *g = &J->out->by_seed[i];
	int rc = sym_goodput_search(&e, J->progress, g, J->err[i], sizeof(J->err[i]));
	if (!rc && i == 0 && !g->have_run) {
		/* goodput 0: the detailed metrics come from a complete run at the lowest rate tried */
		double scale = (g->nsteps ? g->steps[g->nsteps - 1].rate : g->floor_rps) / sym_schedule_mean_rate(&e);
		struct sym_run_opts o = { .rate = scale };
		rc = sym_sim_run(&e, &o, &g->run, J->err[i], sizeof(J->err[i]));
		g->have_run = true;
	}
	if (!rc && g->have_run) {
		const struct sym_model_result *t = &g->run.total;
		g->at_batch_p50 = sym_batch_quantile(t, 0.5);
		g->at_batch_mean = t->batches ? (double)t->batched / (double)t->batches : 0;
		g->at_queue_p50_ms = (double)sym_hist_quantile(&t->queueing, 0.5) / 1e6;
		g->at_queue_p99_ms = (double)sym_hist_quantile(&t->queueing, 0.99) / 1e6;
		g->at_queue_max_ms = (double)t->queueing.max / 1e6;
		g->at_busy = g->run.gpu_busy_fraction;
	}
	if (i > 0)
		sym_goodput_finish(g); /* only the first seed's run is reported */
	J->rc[i] = rc;
	return 0; /* the other seeds run on: the first failure by seed is reported, whichever thread saw it */
}

int sym_goodput_replicate(const struct sym_experiment *e, int jobs, bool progress, struct sym_goodput_reps *out,
			  char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	size_t n = e->replications > 1 ? (size_t)e->replications : 1;
	out->n = n;
	out->seed = e->seed;
	out->by_seed = calloc(n, sizeof(*out->by_seed));
	int *rcs = calloc(n, sizeof(*rcs));
	char (*errs)[1024] = calloc(n, sizeof(*errs));
	double *x = calloc(n, sizeof(*x));
	int rc = 0;
	if (!out->by_seed || !rcs || !errs || !x) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	struct reps_job J = { e, out, progress && n == 1, rcs, errs };
	sym_parallel_for(n, jobs, reps_one, &J);
	for (size_t i = 0; i < n && !rc; i++) {
		if ((rc = rcs[i]) && n > 1)
			snprintf(err, errlen, "seed %llu: %s", (unsigned long long)(out->seed + i), errs[i]);
		else if (rc)
			snprintf(err, errlen, "%s", errs[i]);
	}
	if (rc)
		goto done;
	double *y = calloc(n, sizeof(*y));
	if (!y) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		x[i] = out->by_seed[i].goodput_rps;
		y[i] = out->by_seed[i].fail_rps;
	}
	double lo, hi;
	sym_mean_ci95(x, n, &out->mean, &lo, &hi);
	out->have_ci = sym_goodput_interval(x, y, n, &out->ci_lo, &out->ci_hi);
	free(y);
	out->run_scale = out->by_seed[0].run.rate;
	if (progress && n > 1) {
		for (size_t i = 0; i < n; i++) {
			const struct sym_goodput *g = &out->by_seed[i];
			fprintf(stderr, "  seed %llu: goodput %10.1f %s (%zu steps)\n",
				(unsigned long long)(out->seed + i), g->goodput_rps, sym_rate_unit(e), g->nsteps);
		}
	}
done:
	free(rcs);
	free(errs);
	free(x);
	return rc;
}

void sym_goodput_reps_finish(struct sym_goodput_reps *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->by_seed && i < r->n; i++)
		sym_goodput_finish(&r->by_seed[i]);
	free(r->by_seed);
	memset(r, 0, sizeof(*r));
}

static cJSON *numbers_json(const double *x, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(x[i]));
	return a;
}

cJSON *sym_goodput_result_json(const struct sym_experiment *e, const struct sym_goodput_reps *g,
			       const struct sym_run_result *r)
{
	/* the config of the kept run: the first seed at its rate */
	struct sym_experiment c = *e;
	c.seed = g->seed;
	struct sym_rate_segment *seg = NULL;
	if (e->nseg) {
		if (!(seg = malloc(e->nseg * sizeof(*seg))))
			return NULL;
		for (size_t i = 0; i < e->nseg; i++)
			seg[i] = (struct sym_rate_segment){ e->segments[i].duration, e->segments[i].rate * g->run_scale };
		c.segments = seg;
		c.rate_scale = 1;
	} else if (sym_experiment_has_schedule(e)) { /* a rate table or a trace: echoed with its scale */
		c.rate_scale = g->run_scale;
	} else {
		c.rate = g->run_scale;
	}
	cJSON *o = sym_result_json("goodput", &c, r);
	free(seg);
	double *x = malloc(g->n * sizeof(*x));
	if (!o || !x) {
		free(x);
		cJSON_Delete(o);
		return NULL;
	}
	for (size_t i = 0; i < g->n; i++)
		x[i] = g->by_seed[i].goodput_rps;
	cJSON_ReplaceItemInObjectCaseSensitive(o, "replications", cJSON_CreateNumber((double)g->n));
	cJSON_AddNumberToObject(o, "goodput_rps", g->mean);
	cJSON_AddItemToObject(o, "goodput_ci95", sym_interval_json(g->have_ci, g->ci_lo, g->ci_hi));
	cJSON_AddItemToObject(o, "goodput_by_seed", numbers_json(x, g->n));
	cJSON *br = cJSON_AddArrayToObject(o, "goodput_bracket_by_seed"); /* [highest passing, lowest failing] */
	for (size_t i = 0; i < g->n; i++) {
		const double b[2] = { g->by_seed[i].goodput_rps, g->by_seed[i].fail_rps };
		cJSON_AddItemToArray(br, numbers_json(b, 2));
	}
	/* each seed's run at its own goodput: the metrics beside a goodput (the
	 * median batch, the queueing delay, the GPU busy fraction), with their
	 * intervals; the detailed metrics above are the first seed's */
	static const char *const keys[] = { "batch_p50", "batch_mean", "queueing_p50_ms", "queueing_p99_ms",
					     "queueing_max_ms", "gpu_busy_fraction" };
	cJSON *at = cJSON_AddObjectToObject(o, "at_goodput");
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		for (size_t i = 0; i < g->n; i++) {
			const struct sym_goodput *gi = &g->by_seed[i];
			const double v[] = { gi->at_batch_p50, gi->at_batch_mean, gi->at_queue_p50_ms, gi->at_queue_p99_ms,
					     gi->at_queue_max_ms, gi->at_busy };
			x[i] = v[k];
		}
		double mean = 0, lo, hi;
		sym_mean_ci95(x, g->n, &mean, &lo, &hi);
		cJSON *kv = cJSON_AddObjectToObject(at, keys[k]);
		cJSON_AddNumberToObject(kv, "mean", mean);
		cJSON_AddItemToObject(kv, "ci95", sym_ci95_json(x, g->n));
		cJSON_AddItemToObject(kv, "by_seed", numbers_json(x, g->n));
	}
	free(x);
	cJSON *from = cJSON_AddObjectToObject(o, "metrics_from");
	cJSON_AddNumberToObject(from, "seed", (double)g->seed);
	cJSON_AddNumberToObject(from, "rate_rps", g->run_scale * sym_schedule_mean_rate(e));
	cJSON_AddNumberToObject(o, "rate_scale", g->run_scale);
	const struct sym_goodput *g0 = &g->by_seed[0];
	cJSON_AddNumberToObject(o, "upper_bound_rps", g0->upper_bound_rps);
	double bound = sym_goodput_bound(e);
	if (bound >= 0) {
		double mean = 0;
		for (size_t i = 0; i < g->n; i++)
			mean += g->by_seed[i].goodput_rps / (double)g->n;
		cJSON_AddNumberToObject(o, "bound_rps", bound);
		cJSON_AddNumberToObject(o, "goodput_of_bound", bound > 0 ? mean / bound : 0);
	}
	/* the lowest rate judged: below it too few requests are measured; a goodput of 0 with
	 * search_floor_reached means every rate from the bound down to it failed */
	cJSON_AddNumberToObject(o, "search_floor_rps", g0->floor_rps);
	cJSON_AddBoolToObject(o, "search_floor_reached", g0->hit_floor);
	cJSON *steps = cJSON_AddArrayToObject(o, "search");
	for (size_t i = 0; i < g0->nsteps; i++) {
		const struct sym_goodput_step *st = &g0->steps[i];
		cJSON *s = cJSON_CreateObject();
		cJSON_AddNumberToObject(s, "rate", st->rate);
		cJSON_AddNumberToObject(s, "bad_rate", st->bad_rate);
		if (st->worst >= 0)
			cJSON_AddStringToObject(s, "worst_model", sym_unit_name(e, st->worst));
		cJSON_AddNumberToObject(s, "worst_model_bad_rate", st->worst_bad_rate);
		cJSON_AddBoolToObject(s, "ok", st->ok);
		if (st->stopped_early)
			cJSON_AddBoolToObject(s, "stopped_early", true);
		cJSON_AddItemToArray(steps, s);
	}
	return o;
}
