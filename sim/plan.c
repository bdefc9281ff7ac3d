#include "sim/plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/capacity.h"
#include "core/error.h"
#include "core/nexus_plan.h"
#include "sim/engine.h"
#include "sim/goodput.h"
#include "sim/parallel.h"

/* The count searched: the one group's (a cluster of one device kind keeps
 * its kind's memory_mb and scale), else --gpus. */
/* The count the next run has: this one (not gpus_per_model's, which
 * resolving would apply again). */
static void set_gpus(struct sym_experiment *e, int gpus)
{
	e->gpus = gpus;
	e->gpus_per_model = 0;
	if (e->ngroups == 1)
		e->groups[0].count = gpus;
}

/* One simulation at `gpus` GPUs: whether it serves the rate (v). A failing
 * step may stop early (sim/goodput.h). */
static int try_gpus(struct sym_experiment *e, double rate, int gpus, bool progress, struct sym_plan_result *out,
		    struct sym_verdict *v, double *bad, char *err, size_t errlen)
{
	set_gpus(e, gpus);
	int rc = sym_experiment_resolve(e, err, errlen);
	if (rc)
		return rc;
	uint64_t *limits = calloc(e->nmodels, sizeof(*limits));
	if (!limits)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	struct sym_run_result r;
	struct sym_run_opts o = { .rate = rate, .stop_model_bad = limits };
	sym_stop_limits(e, rate, &o.stop_after_bad, limits);
	rc = sym_sim_run(e, &o, &r, err, errlen);
	free(limits);
	if (rc) {
		sym_run_result_finish(&r);
		return rc;
	}
	sym_judge(e, &r, v);
	*bad = sym_run_bad_rate(&r);
	out->steps++;
	if (!v->ok && gpus > out->below_gpus) { /* the highest failing count so far: the answer's margin */
		out->below_gpus = gpus;
		out->below_bad_rate = *bad;
		out->below_worst = v->worst;
		out->below_worst_bad_rate = v->worst_bad_rate;
		out->below_stopped_early = r.stopped_early;
	}
	if (progress) {
		char pol[128];
		fprintf(stderr, "  plan %-20s %6d GPUs: bad rate %7.3f%%, worst %-16.16s %7.3f%%  %s  (%.2f s)\n",
			sym_policy_format(&e->policy, pol, sizeof(pol)), gpus, 100 * *bad,
			v->worst >= 0 ? sym_unit_name(e, v->worst) : "-", 100 * v->worst_bad_rate,
			v->ok ? "ok" : r.stopped_early ? "too bad (stopped early)" : "too bad", r.wall_seconds);
	}
	sym_run_result_finish(&r);
	return 0;
}

/* A complete run (not stopped early) at `gpus`: its bad rate and worst
 * model into out (at_gpus), for an answer that no count serves the rate. */
static int measure_at(struct sym_experiment *e, double rate, int gpus, struct sym_plan_result *out, char *err,
		      size_t errlen)
{
	set_gpus(e, gpus);
	int rc = sym_experiment_resolve(e, err, errlen);
	if (rc)
		return rc;
	struct sym_run_result r;
	struct sym_run_opts o = { .rate = rate };
	rc = sym_sim_run(e, &o, &r, err, errlen);
	if (!rc) {
		struct sym_verdict v;
		sym_judge(e, &r, &v);
		out->at_gpus = gpus;
		out->bad_rate = sym_run_bad_rate(&r);
		out->worst = v.worst;
		out->worst_bad_rate = v.worst_bad_rate;
		out->few = v.few;
		out->steps++;
	}
	sym_run_result_finish(&r);
	return rc;
}

int sym_plan_goodput_at(struct sym_experiment *e, int gpus, int jobs, struct sym_goodput_reps *out, char *err,
			size_t errlen)
{
	int saved = e->gpus;
	set_gpus(e, gpus);
	int rc = sym_experiment_resolve(e, err, errlen);
	if (!rc)
		rc = sym_goodput_replicate(e, jobs, false, out, err, errlen);
	set_gpus(e, saved);
	int rc2 = sym_experiment_resolve(e, err, errlen);
	return rc ? rc : rc2;
}

int sym_plan_search(struct sym_experiment *e, double rate, int max_gpus, bool progress, struct sym_plan_result *out,
		    char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->gpus = -1;
	out->worst = -1;
	out->below_gpus = -1;
	out->below_worst = -1;
	if (e->ngroups > 1)
		return snprintf(err, errlen, "plan: a cluster of several device kinds cannot be searched by count; "
			       "give one kind (--gpus)"), -EINVAL;
	int saved = e->gpus;
	struct sym_verdict v = { 0 }, good = { 0 };
	double bad = 0, good_bad = 0;
	/* sub-clusters need a GPU each: the search starts there */
	int floor = e->partition.subclusters > 1 ? e->partition.subclusters : 1;
	int lo = floor - 1, hi = floor, rc = 0;
	if (floor > max_gpus) {
		rc = -EINVAL;
		snprintf(err, errlen, "plan: the %d sub-clusters need %d GPUs, more than --max-gpus %d", floor, floor,
			 max_gpus);
		goto done;
	}
	/* double until a count serves the rate (lo never does, hi does) */
	for (;;) {
		if ((rc = try_gpus(e, rate, hi, progress, out, &v, &bad, err, errlen)))
			goto done;
		if (v.ok) {
			good_bad = bad;
			good = v;
			break;
		}
		if (hi >= max_gpus) {
			/* none serves the rate: report what a complete run at max_gpus measured */
			rc = measure_at(e, rate, max_gpus, out, err, errlen);
			goto done;
		}
		lo = hi;
		hi = hi > max_gpus / 2 ? max_gpus : hi * 2;
	}
	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2;
		if ((rc = try_gpus(e, rate, mid, progress, out, &v, &bad, err, errlen)))
			goto done;
		if (v.ok) {
			hi = mid;
			good_bad = bad;
			good = v;
		} else {
			lo = mid;
		}
	}
	out->gpus = hi;
	out->at_gpus = hi;
	if (out->below_gpus != hi - 1)
		out->below_gpus = -1; /* (hi - 1 was never run: the first count tried served R) */
	out->bad_rate = good_bad;
	out->worst = good.worst;
	out->worst_bad_rate = good.worst_bad_rate;
	out->few = good.few;
done:
	set_gpus(e, saved);
	if (!rc)
		rc = sym_experiment_resolve(e, err, errlen);
	return rc;
}

struct plan_job {
	const struct sym_experiment *e;
	double rate;
	int max_gpus;
	int at;           /* > 0: measure every seed at this count (no search) */
	bool progress;
	struct sym_plan_result *by_seed;
	int *rc;
	char (*err)[1024];
};

static int plan_one(void *ctx, size_t i)
{
	struct plan_job *J = ctx;
	struct sym_experiment e;
	int rc = sym_experiment_copy(&e, J->e, J->err[i], sizeof(J->err[i]));
	if (!rc) {
		e.seed = J->e->seed + i;
		if (J->at > 0) {
			memset(&J->by_seed[i], 0, sizeof(J->by_seed[i]));
			J->by_seed[i].gpus = J->by_seed[i].below_gpus = J->by_seed[i].below_worst = -1;
			rc = measure_at(&e, J->rate, J->at, &J->by_seed[i], J->err[i], sizeof(J->err[i]));
		} else {
			rc = sym_plan_search(&e, J->rate, J->max_gpus, J->progress, &J->by_seed[i], J->err[i],
					     sizeof(J->err[i]));
		}
	}
	sym_experiment_finish(&e);
	J->rc[i] = rc;
	return 0; /* the first failure by seed is reported */
}

static int replicate(const struct sym_experiment *e, double rate, int max_gpus, int at, int jobs, bool progress,
		     struct sym_plan_result *by_seed, char *err, size_t errlen)
{
	size_t n = e->replications > 1 ? (size_t)e->replications : 1;
	int *rcs = calloc(n, sizeof(*rcs));
	char (*errs)[1024] = calloc(n, sizeof(*errs));
	if (!rcs || !errs) {
		free(rcs);
		free(errs);
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	}
	struct plan_job J = { e, rate, max_gpus, at, progress && n == 1, by_seed, rcs, errs };
	sym_parallel_for(n, jobs, plan_one, &J);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		if ((rc = rcs[i]) && n > 1)
			snprintf(err, errlen, "seed %llu: %s", (unsigned long long)(e->seed + i), errs[i]);
		else if (rc)
			snprintf(err, errlen, "%s", errs[i]);
	}
	free(rcs);
	free(errs);
	return rc;
}

int sym_plan_replicate(const struct sym_experiment *e, double rate, int max_gpus, int jobs, bool progress,
		       struct sym_plan_result *by_seed, char *err, size_t errlen)
{
	return replicate(e, rate, max_gpus, 0, jobs, progress, by_seed, err, errlen);
}

int sym_plan_measure(const struct sym_experiment *e, double rate, int gpus, int jobs, struct sym_plan_result *by_seed,
		     char *err, size_t errlen)
{
	return replicate(e, rate, 0, gpus, jobs, false, by_seed, err, errlen);
}

void sym_plan_analytic(const struct sym_experiment *e, double rate, int max_gpus, struct sym_plan_analytic *out)
{
	out->staggered = out->nexus = -1;
	size_t n = e->nmodels;
	struct sym_nexus_model *nm = calloc(n, sizeof(*nm));
	sym_time **lat = calloc(n, sizeof(*lat));
	for (size_t m = 0; nm && lat && m < n; m++)
		lat[m] = malloc(((size_t)e->profiles[m].max_batch + 1) * sizeof(**lat));
	for (size_t m = 0; lat && m < n; m++)
		if (!lat[m])
			goto done;
	if (!nm || !lat)
		goto done;
	double mean = sym_schedule_mean_rate(e); /* with queries: queries/s */
	sym_time fixed = sym_ms(e->ctrl_ms + e->resp_ms);
	int staggered = 0;
	for (size_t m = 0; m < n; m++) {
		const struct sym_profile *p = &e->profiles[m];
		double r = mean > 0 ? rate * sym_experiment_model_rate(e, m) / mean : 0;
		sym_time slo = sym_ms(e->model_slo_ms[m]);
		/* l plus the per-request transfer: the core's le without the fixed terms */
		lat[m][0] = 0;
		for (int b = 1; b <= p->max_batch; b++)
			lat[m][b] = p->lat[b] + sym_ms(e->data_ms) * b;
		int b = 0;
		int g = r > 0 ? sym_staggered_min_gpus(lat[m], p->max_batch, slo - fixed, r, max_gpus, &b) : 0;
		staggered = g < 0 || staggered < 0 || staggered + g > max_gpus ? -1 : staggered + g;
		nm[m] = (struct sym_nexus_model){ .rate = r, .slo = slo, .lat = lat[m], .max_batch = p->max_batch,
						  .delay = fixed, .static_mb = p->static_mb, .dynamic_mb = p->dynamic_mb };
	}
	out->staggered = staggered;
	struct sym_nexus_plan plan;
	sym_nexus_plan_init(&plan);
	if (!sym_nexus_plan_compute(&plan, nm, (int)n, e->kinds[0].memory_mb, max_gpus))
		out->nexus = plan.ngpus;
	sym_nexus_plan_finish(&plan);
done:
	for (size_t m = 0; lat && m < n; m++)
		free(lat[m]);
	free(lat);
	free(nm);
}
