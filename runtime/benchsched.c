/* runtime/benchsched.c - `symphony bench-sched` (see benchsched.h).
 *
 * One trial runs the threaded scheduler for --duration seconds at a fixed
 * request rate. The calling thread is the driver: it plays precomputed
 * arrivals in real time (every request due is submitted at once, in a loop),
 * polls the decisions in bulk and emulates the GPUs (a dispatched GPU is busy
 * until the planned finish; a heap of finish times frees it then). A trial
 * passes when the scheduler kept up with real time:
 *   - no submission was refused (the driver's queue to a scheduler thread
 *     never filled: 65536 requests of slack);
 *   - the driver submitted on time: the p99 of (submission - arrival) is
 *     under --late-limit (the generator itself keeps up);
 *   - the scheduler's timers ran on time: the p99 of their lateness (now -
 *     due, sym_sched_stats) is under --lag-limit;
 *   - the backlog stayed bounded: at the end of the arrivals the requests
 *     not yet decided are at most rate * (SLO + 5 ms) (no request waits
 *     longer than its SLO), and all of them are decided within SLO + 100 ms;
 *   - at most --max-drop of the requests were dropped (a scheduler that
 *     falls behind drops requests whose timers came too late).
 * A failing rate is run again up to --retries times (a shared machine has
 * hiccups); it passes if any run passes. The search doubles the rate from
 * --start-rate until a rate fails, then bisects between the last pass and
 * the first failure down to --precision.
 *
 * The driver costs a core of its own at high rates (about 10 million
 * requests/s take one): on a small machine the result is the machine's, not
 * only the scheduler's; the summary says which criterion failed.
 */
#define _GNU_SOURCE
#include "runtime/benchsched.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "core/build.h"
#include "core/core.h"
#include "core/hist.h"
#include "core/iheap.h"
#include "core/profile.h"
#include "experiment/output.h"
#include "experiment/result.h"
#include "runtime/executor.h"
#include "runtime/sched.h"
#include "sym_version.h"

#define MAX_REQUESTS_PER_TRIAL 200000000.0

/* The checks across options (each option's own range is the command line's). */
static int check_opts(const struct sym_benchsched_opts *o)
{
	if (o->alpha_ms + o->beta_ms <= 0) {
		fprintf(stderr, "bench-sched: --alpha + --beta must be > 0\n");
		return -1;
	}
	if (o->start_rate > o->max_rate) {
		fprintf(stderr, "bench-sched: --start-rate (%g) is above --max-rate (%g)\n", o->start_rate,
			o->max_rate);
		return -1;
	}
	if (o->alpha_ms * o->max_batch + o->beta_ms + o->ctrl_us / 1e3 > o->slo_ms) {
		fprintf(stderr,
			"bench-sched: a batch of --max-batch %d takes %g ms (with --ctrl), more than the --slo of %g ms: "
			"lower --max-batch\n",
			o->max_batch, o->alpha_ms * o->max_batch + o->beta_ms + o->ctrl_us / 1e3, o->slo_ms);
		return -1;
	}
	return 0;
}

/* ---- one trial ---- */

struct arrivals {
	sym_time *t;      /* offsets from the trial's start */
	uint16_t *model;
	size_t n, cap;
};

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double unit(uint64_t *s) { return (double)(splitmix(s) >> 11) / 9007199254740992.0; }

/* Precomputes the arrivals of one trial, so that the driver's real-time
 * loop only reads them. */
static int make_arrivals(struct arrivals *a, const struct sym_benchsched_opts *o, double rate, uint64_t seed)
{
	double end = o->duration_s * 1e9;
	size_t want = (size_t)(rate * o->duration_s * 1.1) + 1024;
	if (want > a->cap) {
		sym_time *t = realloc(a->t, want * sizeof(*t));
		if (!t)
			return -ENOMEM;
		a->t = t;
		uint16_t *m = realloc(a->model, want * sizeof(*m));
		if (!m)
			return -ENOMEM;
		a->model = m;
		a->cap = want;
	}
	uint64_t s = seed;
	double at = 0, gap = 1e9 / rate;
	a->n = 0;
	for (;;) {
		at += o->poisson ? -log(1 - unit(&s)) * gap : gap;
		if (at >= end || a->n == a->cap)
			break;
		a->t[a->n] = (sym_time)at;
		a->model[a->n] = (uint16_t)(o->poisson ? splitmix(&s) % (uint64_t)o->models : a->n % (size_t)o->models);
		a->n++;
	}
	return 0;
}

struct trial {
	double rate;
	bool pass, bug;
	char why[160];
	uint64_t n, refused, drops, dispatches, dispatched, pending_end;
	sym_time late_p99, lag_p99, lag_max, drain;
	double mean_batch;
};

struct drv {
	struct sym_iheap busy; /* GPU -> planned finish */
	uint64_t dispatches, dispatched, drops, double_booked;
};

static void on_dispatch(void *ctx, const struct sym_sched_dispatch *d)
{
	struct drv *v = ctx;
	if (sym_iheap_contains(&v->busy, d->gpu))
		v->double_booked++;
	sym_iheap_set(&v->busy, d->gpu, d->finish);
	v->dispatches++;
	v->dispatched += (uint64_t)d->size;
}

static void on_drop(void *ctx, uint64_t id, int model, enum sym_drop_reason why, sym_time now)
{
	(void)id;
	(void)model;
	(void)why;
	(void)now;
	((struct drv *)ctx)->drops++;
}

/* Frees the GPUs whose batch is over; returns the next finish. */
static sym_time free_gpus(struct sym_sched *s, struct drv *v, sym_time now)
{
	while (!sym_iheap_empty(&v->busy) && sym_iheap_top_key(&v->busy) <= now) {
		int g = sym_iheap_top(&v->busy);
		if (sym_sched_gpu_free(s, g))
			break; /* queue full: again on the next round */
		sym_iheap_remove(&v->busy, g);
	}
	return sym_iheap_empty(&v->busy) ? SYM_TIME_NEVER : sym_iheap_top_key(&v->busy);
}

/* The driver sleeps in ticks of at least this: it submits every request
 * due at each wake-up in one go, so that it leaves the CPU to the scheduler
 * between ticks (a spinning driver would steal it on a small machine) at the
 * price of up to a tick of submission lateness, well under --late-limit. */
#define DRIVER_TICK (100 * SYM_US)

/* Sleeps until `until`, at least a tick. Not on the decision fd: the
 * driver needs the decisions by the emulated GPUs' finish times only, so
 * waking for each of them would cost a context switch for nothing. */
static void wait_until(sym_time until)
{
	sym_time now = sym_monotonic_ns();
	if (until <= now)
		return;
	if (until - now < DRIVER_TICK)
		until = now + DRIVER_TICK;
	struct timespec ts = { (time_t)(until / SYM_S), (long)(until % SYM_S) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int run_trial(const struct sym_benchsched_opts *o, int threads, const struct sym_sched_cfg *base, const struct arrivals *a,
		     double rate, struct trial *tr, char *err, size_t errlen)
{
	memset(tr, 0, sizeof(*tr));
	tr->rate = rate;
	tr->n = a->n;
	struct sym_sched_cfg cfg = *base;
	cfg.threads = threads;
	struct sym_sched *s;
	int rc = sym_sched_create(&s, &cfg, err, errlen);
	if (rc)
		return rc;
	struct drv v = { 0 };
	if ((rc = sym_iheap_init(&v.busy, o->gpus))) {
		sym_sched_destroy(s);
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	struct sym_hist late;
	sym_hist_init(&late);
	const struct sym_sched_out out = { &v, on_dispatch, on_drop, NULL };
	sym_time slo = sym_ms(o->slo_ms);
	sym_time t0 = sym_monotonic_ns() + 2 * SYM_MS;
	sym_time end = t0 + sym_s(o->duration_s);
	sym_time drain_limit = end + slo + 100 * SYM_MS;
	size_t i = 0;
	bool drained = false, ended = false;
	for (;;) {
		sym_time now = sym_monotonic_ns();
		/* every request due now, in one go */
		while (i < a->n) {
			sym_time at = t0 + a->t[i];
			if (at > now)
				break;
			struct sym_sched_req r = { i, a->model[i], at, at + slo };
			if (sym_sched_submit(s, &r)) {
				tr->refused++;
				break;
			}
			sym_hist_record(&late, now - at);
			i++;
		}
		sym_time next_free = free_gpus(s, &v, now);
		while (sym_sched_poll(s, &out, 4096) == 4096)
			;
		if (i == a->n) {
			if (!ended && now >= end) {
				tr->pending_end = sym_sched_pending(s);
				ended = true;
			}
			if (now >= end && sym_sched_pending(s) == 0) {
				while (sym_sched_poll(s, &out, 4096))
					;
				tr->drain = now - end;
				drained = true;
				break;
			}
			if (now > drain_limit)
				break;
		}
		sym_time next = i < a->n ? t0 + a->t[i] : now + SYM_MS;
		if (next_free < next)
			next = next_free;
		wait_until(next);
	}
	struct sym_sched_stats st;
	sym_sched_stats(s, &st);
	sym_sched_destroy(s);
	sym_iheap_finish(&v.busy);
	tr->late_p99 = sym_hist_quantile(&late, 0.99);
	sym_hist_finish(&late);
	tr->lag_p99 = st.lag_p99;
	tr->lag_max = st.lag_max;
	tr->drops = v.drops;
	tr->dispatches = v.dispatches;
	tr->dispatched = v.dispatched;
	tr->mean_batch = v.dispatches ? (double)v.dispatched / (double)v.dispatches : 0;
	/* the verdict, first failure named */
	double bound = rate * (o->slo_ms + 5) / 1e3;
	tr->bug = v.double_booked > 0;
	if (v.double_booked)
		snprintf(tr->why, sizeof(tr->why), "BUG: %" PRIu64 " dispatches to a busy GPU", v.double_booked);
	else if (tr->refused)
		snprintf(tr->why, sizeof(tr->why), "submit queue full (%" PRIu64 " refusals)", tr->refused);
	else if (!drained)
		snprintf(tr->why, sizeof(tr->why), "backlog not drained within SLO + 100 ms");
	else if ((double)tr->late_p99 > o->late_limit_us * 1e3)
		snprintf(tr->why, sizeof(tr->why), "generator late: p99 %.0f us", (double)tr->late_p99 / 1e3);
	else if ((double)tr->lag_p99 > o->lag_limit_us * 1e3)
		snprintf(tr->why, sizeof(tr->why), "timer lag p99 %.0f us", (double)tr->lag_p99 / 1e3);
	else if ((double)tr->pending_end > bound)
		snprintf(tr->why, sizeof(tr->why), "backlog %" PRIu64 " > %.0f", tr->pending_end, bound);
	else if ((double)tr->drops > o->max_drop * (double)tr->n)
		snprintf(tr->why, sizeof(tr->why), "dropped %.2f%%", 100.0 * (double)tr->drops / (double)tr->n);
	else
		tr->pass = true;
	return 0;
}

/* ---- the search ---- */

struct result {
	int threads;
	double max_rate; /* 0: not even 1000 requests/s passed */
	struct trial best;
	int trials;
	bool capped;
};

static int trial1(const struct sym_benchsched_opts *o, int threads, const struct sym_sched_cfg *cfg, struct arrivals *a,
		  double rate, struct result *res, struct trial *tr);

/* One rate, tried up to 1 + retries times until a trial passes; a nonzero
 * return is fatal (message printed). */
static int trial(const struct sym_benchsched_opts *o, int threads, const struct sym_sched_cfg *cfg, struct arrivals *a,
		 double rate, struct result *res, struct trial *tr)
{
	for (int k = 0; k <= o->retries; k++) {
		int rc = trial1(o, threads, cfg, a, rate, res, tr);
		if (rc || tr->pass)
			return rc;
	}
	return 0;
}

static int trial1(const struct sym_benchsched_opts *o, int threads, const struct sym_sched_cfg *cfg, struct arrivals *a,
		  double rate, struct result *res, struct trial *tr)
{
	char err[256] = "";
	if (make_arrivals(a, o, rate, o->seed + (uint64_t)res->trials)) {
		fprintf(stderr, "bench-sched: out of memory for %.0f arrivals\n", rate * o->duration_s);
		return -1;
	}
	int rc = run_trial(o, threads, cfg, a, rate, tr, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "bench-sched: %s\n", err[0] ? err : "cannot start the scheduler");
		return -1;
	}
	res->trials++;
	if (!o->quiet)
		fprintf(stderr,
			"bench-sched: threads %d, %.0f requests/s: %s%s%s (late p99 %.1f us, lag p99 %.1f us, max "
			"%.1f us, backlog %" PRIu64 ", drain %.1f ms, drops %.3f%%, mean batch %.1f)\n",
			threads, rate, tr->pass ? "pass" : "FAIL", tr->pass ? "" : ": ", tr->pass ? "" : tr->why,
			(double)tr->late_p99 / 1e3, (double)tr->lag_p99 / 1e3, (double)tr->lag_max / 1e3,
			tr->pending_end, (double)tr->drain / 1e6, tr->n ? 100.0 * (double)tr->drops / (double)tr->n : 0.0,
			tr->mean_batch);
	if (tr->bug) {
		fprintf(stderr, "bench-sched: %s\n", tr->why);
		return -1;
	}
	if (tr->pass && rate > res->max_rate) {
		res->max_rate = rate;
		res->best = *tr;
	}
	return 0;
}

/* Doubling from the start rate to the first failure (or halving down to
 * the first pass), then bisection. */
static int search(const struct sym_benchsched_opts *o, int threads, const struct sym_sched_cfg *cfg, struct arrivals *a,
		  struct result *res)
{
	memset(res, 0, sizeof(*res));
	res->threads = threads;
	struct trial tr;
	double lo = 0, hi = 0, rate = o->start_rate;
	for (;;) {
		if (rate * o->duration_s > MAX_REQUESTS_PER_TRIAL) {
			res->capped = true;
			return 0;
		}
		if (trial(o, threads, cfg, a, rate, res, &tr))
			return -1;
		if (tr.pass)
			lo = rate;
		else
			hi = rate;
		if (lo && hi)
			break;
		if (tr.pass) {
			if (rate >= o->max_rate) {
				res->capped = true;
				return 0;
			}
			rate = fmin(rate * 2, o->max_rate);
		} else {
			if (rate / 2 < 1000)
				return 0; /* not even 1000 requests/s */
			rate /= 2;
		}
	}
	while ((hi - lo) / lo >= o->precision) {
		rate = floor((lo + hi) / 2);
		if (trial(o, threads, cfg, a, rate, res, &tr))
			return -1;
		if (tr.pass)
			lo = rate;
		else
			hi = rate;
	}
	return 0;
}

static cJSON *result_json(const struct sym_benchsched_opts *o, const struct result *r)
{
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return NULL;
	cJSON_AddNumberToObject(j, "threads", r->threads);
	cJSON_AddNumberToObject(j, "models", o->models);
	cJSON_AddNumberToObject(j, "gpus", o->gpus);
	cJSON_AddNumberToObject(j, "max_requests_per_s", r->max_rate);
	cJSON_AddBoolToObject(j, "capped", r->capped);
	cJSON_AddNumberToObject(j, "trials", r->trials);
	cJSON_AddNumberToObject(j, "late_p99_us", (double)r->best.late_p99 / 1e3);
	cJSON_AddNumberToObject(j, "lag_p99_us", (double)r->best.lag_p99 / 1e3);
	cJSON_AddNumberToObject(j, "lag_max_us", (double)r->best.lag_max / 1e3);
	cJSON_AddNumberToObject(j, "drop_fraction", r->best.n ? (double)r->best.drops / (double)r->best.n : 0);
	cJSON_AddNumberToObject(j, "mean_batch", r->best.mean_batch);
	cJSON_AddStringToObject(j, "policy", o->policy);
	cJSON_AddStringToObject(j, "arrivals", o->poisson ? "poisson" : "uniform");
	cJSON_AddNumberToObject(j, "alpha_ms", o->alpha_ms);
	cJSON_AddNumberToObject(j, "beta_ms", o->beta_ms);
	cJSON_AddNumberToObject(j, "slo_ms", o->slo_ms);
	cJSON_AddNumberToObject(j, "ctrl_us", o->ctrl_us);
	cJSON_AddNumberToObject(j, "max_batch", o->max_batch);
	cJSON_AddNumberToObject(j, "duration_s", o->duration_s);
	cJSON_AddNumberToObject(j, "late_limit_us", o->late_limit_us);
	cJSON_AddNumberToObject(j, "lag_limit_us", o->lag_limit_us);
	cJSON_AddNumberToObject(j, "max_drop", o->max_drop);
	cJSON_AddNumberToObject(j, "seed", (double)o->seed);
	cJSON_AddStringToObject(j, "version", SYM_VERSION);
	cJSON_AddStringToObject(j, "commit", sym_build_commit());
	return j;
}

static int write_json(const struct sym_benchsched_opts *o, const struct result *res, int n)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(root, "results");
	if (!root || !arr) {
		cJSON_Delete(root);
		return -1;
	}
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, result_json(o, &res[i]));
	cJSON_AddItemToObject(root, "provenance", sym_provenance_json(true));
	char err[1200];
	int rc = sym_write_json(o->json, root, err, sizeof(err));
	if (rc)
		fprintf(stderr, "bench-sched: %s\n", err);
	cJSON_Delete(root);
	return rc ? -1 : 0;
}

int sym_benchsched_run(const struct sym_benchsched_opts *op)
{
	const struct sym_benchsched_opts o = *op;
	int rc = check_opts(&o);
	if (rc)
		return 2;
	struct sym_policy pol;
	char err[256] = "";
	if (sym_policy_parse(o.policy, &pol, err, sizeof(err))) {
		fprintf(stderr, "bench-sched: --policy: %s\n", err);
		return 2;
	}
	for (int i = 0; i < o.nthreads; i++) {
		if (o.threads[i] >= 2 && sym_policy_is_scheduler(&pol)) {
			fprintf(stderr,
				"bench-sched: --threads %d: policy '%s' is a scheduler policy and runs on one thread "
				"only\n",
				o.threads[i], sym_policy_name(&pol));
			return 2;
		}
	}
	struct sym_profile prof;
	if (sym_profile_init_linear(&prof, "bench", o.alpha_ms, o.beta_ms, o.max_batch)) {
		fprintf(stderr, "bench-sched: invalid profile (alpha %g, beta %g, max batch %d)\n", o.alpha_ms,
			o.beta_ms, o.max_batch);
		return 2;
	}
	struct sym_model_cfg *mc = calloc((size_t)o.models, sizeof(*mc));
	struct result *res = calloc((size_t)o.nthreads, sizeof(*res));
	struct arrivals a = { 0 };
	int status = 0, slack = -1;
	if (!mc || !res) {
		fprintf(stderr, "bench-sched: out of memory\n");
		status = 1;
		goto out;
	}
	for (int m = 0; m < o.models; m++)
		mc[m] = (struct sym_model_cfg){ .profile = &prof, .slo = sym_ms(o.slo_ms),
						.rate_hint = o.start_rate / o.models };
	struct sym_sched_cfg cfg = { .core = { .nmodels = o.models, .models = mc, .ngpus = o.gpus, .policy = pol,
					       .net = { .ctrl = (sym_time)(o.ctrl_us * 1e3 + 0.5) } } };
	sym_gather_parse("lazy", &cfg.core.gather);
	/* The driver's sleeps to the microsecond, not the default 50 us slack
	 * (restored at the end). */
	slack = prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
	prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	for (int i = 0; i < o.nthreads; i++) {
		rc = search(&o, o.threads[i], &cfg, &a, &res[i]);
		if (rc) {
			status = rc == 2 ? 2 : 1;
			goto out;
		}
		const struct result *r = &res[i];
		/* the summary lines go to stderr when the JSON takes stdout */
		FILE *f = o.json && !strcmp(o.json, "-") ? stderr : stdout;
		fprintf(f,
			"bench-sched: threads %d, models %d, gpus %d, %s: max %.0f requests/s%s (lag p99 %.1f us, "
			"late p99 %.1f us, mean batch %.1f, %d trials)\n",
			r->threads, o.models, o.gpus, o.policy, r->max_rate, r->capped ? " (search capped)" : "",
			(double)r->best.lag_p99 / 1e3, (double)r->best.late_p99 / 1e3, r->best.mean_batch, r->trials);
		fflush(f);
	}
	if (o.json && write_json(&o, res, o.nthreads))
		status = 1;
out:
	if (slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0UL, 0UL, 0UL);
	free(a.t);
	free(a.model);
	free(mc);
	free(res);
	sym_profile_finish(&prof);
	return status;
}
