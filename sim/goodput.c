#include "sim/goodput.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

double sym_schedule_mean_rate(const struct sym_experiment *e)
{
	double sum = 0;
	for (size_t m = 0; m < e->nmodels; m++)
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
	for (size_t i = 0; i < e->nseg; i++)
		peak = e->segments[i].rate > peak ? e->segments[i].rate : peak;
	return e->nseg ? peak : 1;
}

int sym_goodput_search(const struct sym_experiment *e, bool progress, struct sym_goodput *out, char *err,
		       size_t errlen)
{
	memset(out, 0, sizeof(*out));
	double mean = sym_schedule_mean_rate(e);
	if (!(mean > 0))
		return snprintf(err, errlen, "goodput: the rate schedule offers no requests"), -EINVAL;
	/* Upper bound: every GPU busy with maximum batches, in proportion; with
	 * several kinds, their capacities add (a kind too slow for a model
	 * leaves that model out of its cost, which only raises the bound). */
	double hi_rate = 0;
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
	out->upper_bound_rps = hi_rate;
	double lo = 0, hi = hi_rate / mean; /* in scale units */
	double window = sym_experiment_duration(e) - e->warmup_s;
	double peak = schedule_peak_rate(e); /* at scale 1: bounds the measured arrivals' expectation */
	while (hi - lo > e->tolerance * hi && out->nsteps < sizeof(out->steps) / sizeof(out->steps[0])) {
		double mid = lo == 0 && out->nsteps == 0 ? hi * 0.75 : (lo + hi) / 2;
		double expected = mid * peak * window;
		struct sym_run_opts o = { .rate = mid, .stop_after_bad = (uint64_t)(1.5 * e->max_bad_rate * expected) + 20 };
		struct sym_run_result r;
		int rc = sym_sim_run(e, &o, &r, err, errlen);
		if (rc) {
			sym_run_result_finish(&r);
			return rc;
		}
		double bad = sym_bad_rate(&r.total);
		bool ok = !r.stopped_early && bad <= e->max_bad_rate && r.total.offered > 0;
		out->steps[out->nsteps++] = (struct sym_goodput_step){ mid * mean, bad, ok, r.stopped_early };
		if (progress)
			fprintf(stderr, "  goodput search: %10.1f req/s  bad rate %7.3f%%  %s  (%.2f s)\n", mid * mean,
				100 * bad, ok ? "ok" : r.stopped_early ? "too bad (stopped early)" : "too bad",
				r.wall_seconds);
		if (ok) {
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
	out->scale = lo;
	out->goodput_rps = lo * mean;
	return 0;
}

void sym_goodput_finish(struct sym_goodput *g)
{
	if (g && g->have_run) {
		sym_run_result_finish(&g->run);
		g->have_run = false;
	}
}
