/* sim/loadcurve.h - goodput, bad rate and GPU use per policy from light load
 * to well past capacity: one simulation per (policy, load, seed), loads as
 * fractions of a reference rate.
 *
 * Run k is point k / nrep's seed e->seed + k % nrep; point p is policy
 * p / nloads at load p % nloads. A point is the mean over its seeds, and its
 * worst model is judged on the models' counts pooled over the seeds.
 */
#ifndef SYM_LOADCURVE_H
#define SYM_LOADCURVE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "experiment/config.h"
#include "experiment/result.h"

struct sym_lc_run {
	double offered_rps, good_rps, bad_rate, busy, gpus_used, batch_p50;
	size_t few;
};

struct sym_lc_point {
	int policy;
	double load, offered_rps, good_rps, bad_rate, busy, gpus_used, batch_p50;
	size_t few;           /* the most models with few requests in one seed's run */
	struct sym_verdict v; /* of the counts pooled over the seeds */
};

struct sym_loadcurve {
	const struct sym_policy *pols;
	size_t npol, nloads, nrep, npts;
	const double *loads;
	double ref;                /* the rate of load 1 */
	struct sym_lc_run *runs;   /* npts * nrep */
	uint64_t *counts;          /* per run and model: offered, bad ([(k * nmodels + m) * 2 + 0..1]) */
	struct sym_lc_point *pts;  /* npts */
};

/* Runs every (policy, load, seed) of e on `jobs` threads (the loads and
 * policies arrays must outlive L). Returns 0, or the first failing run's
 * error (-EINVAL, -EPROTO, -ENOMEM) with a message in err; release L with
 * sym_loadcurve_finish either way. */
int sym_loadcurve_run(const struct sym_experiment *e, const struct sym_policy *pols, size_t npol, const double *loads,
		      size_t nloads, double ref, int jobs, struct sym_loadcurve *L, char *err, size_t errlen);

void sym_loadcurve_finish(struct sym_loadcurve *L);

/* The values of point p's seeds of one metric (0 goodput, 1 bad rate, 2 GPU
 * busy fraction, 3 median batch) into x[0..nrep). */
void sym_loadcurve_seeds(const struct sym_loadcurve *L, size_t p, int metric, double *x);

/* The "points" array of the result (NULL on ENOMEM). */
cJSON *sym_loadcurve_points_json(const struct sym_experiment *e, const struct sym_loadcurve *L);

#endif
