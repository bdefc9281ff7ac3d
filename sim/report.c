#include "sim/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/build.h"
#include "core/autoscale.h"
#include "core/error.h"
#include "sym_version.h"

static double ms(int64_t ns) { return (double)ns / 1e6; }

static void add_metrics(cJSON *o, const struct sym_model_result *m, double window_s)
{
	cJSON_AddNumberToObject(o, "offered", (double)m->offered);
	cJSON_AddNumberToObject(o, "offered_rps", window_s > 0 ? (double)m->offered / window_s : 0);
	cJSON_AddNumberToObject(o, "served", (double)m->served);
	cJSON_AddNumberToObject(o, "late", (double)m->late);
	cJSON_AddNumberToObject(o, "dropped", (double)m->dropped);
	cJSON *by = cJSON_AddObjectToObject(o, "dropped_by_reason");
	for (int k = 0; k < SYM_DROP_NREASONS; k++)
		cJSON_AddNumberToObject(by, sym_drop_reason_name((enum sym_drop_reason)k), (double)m->dropped_by[k]);
	cJSON_AddNumberToObject(o, "bad_rate", sym_bad_rate(m));
	cJSON_AddNumberToObject(o, "goodput_served_rps", window_s > 0 ? (double)m->served / window_s : 0);
	cJSON *lat = cJSON_AddObjectToObject(o, "latency_ms");
	cJSON_AddNumberToObject(lat, "p50", ms(sym_hist_quantile(&m->latency, 0.5)));
	cJSON_AddNumberToObject(lat, "p99", ms(sym_hist_quantile(&m->latency, 0.99)));
	cJSON_AddNumberToObject(lat, "p999", ms(sym_hist_quantile(&m->latency, 0.999)));
	cJSON_AddNumberToObject(lat, "mean", sym_hist_mean(&m->latency) / 1e6);
	cJSON_AddNumberToObject(lat, "max", ms(m->latency.max));
	cJSON *q = cJSON_AddObjectToObject(o, "queueing_ms");
	cJSON_AddNumberToObject(q, "p50", ms(sym_hist_quantile(&m->queueing, 0.5)));
	cJSON_AddNumberToObject(q, "p99", ms(sym_hist_quantile(&m->queueing, 0.99)));
	cJSON_AddNumberToObject(q, "max", ms(m->queueing.max));
	cJSON *b = cJSON_AddObjectToObject(o, "batch_size");
	cJSON_AddNumberToObject(b, "batches", (double)m->batches);
	cJSON_AddNumberToObject(b, "mean", m->batches ? (double)m->batched / (double)m->batches : 0);
	cJSON_AddNumberToObject(b, "p50", sym_batch_quantile(m, 0.5));
	cJSON_AddNumberToObject(b, "p99", sym_batch_quantile(m, 0.99));
	cJSON_AddNumberToObject(b, "max_batch", m->max_batch);
	cJSON *hist = cJSON_AddObjectToObject(b, "histogram");
	for (int k = 1; k <= m->max_batch; k++) {
		if (!m->batch_counts[k])
			continue;
		char key[16];
		snprintf(key, sizeof(key), "%d", k);
		cJSON_AddNumberToObject(hist, key, (double)m->batch_counts[k]);
	}
}

/* The autoscaling signals per interval, summarised over the intervals that
 * start after the warm-up (see core/autoscale.h and the timeline CSV). */
static cJSON *autoscale_json(const struct sym_experiment *e, const struct sym_run_result *r)
{
	double dur = sym_experiment_duration(e);
	size_t n = 0, bad = 0, idle = 0;
	double in_use = 0, idle_f = 0, add = 0, rel = 0;
	int in_use_max = 0, add_max = 0;
	for (size_t i = 0; i < r->nintervals; i++) {
		if ((double)i * r->interval_s < e->warmup_s)
			continue;
		const struct sym_timeline_row *t = &r->timeline[i];
		struct sym_autoscale a;
		sym_autoscale_advice(t->good, t->bad, t->busy_gpu_s, sym_timeline_interval_len(r, dur, i), e->gpus,
				     e->advice_threshold, &a);
		n++;
		bad += a.add > 0;
		idle += a.release > 0;
		in_use += t->gpus_used;
		if ((int)t->gpus_used > in_use_max)
			in_use_max = (int)t->gpus_used;
		idle_f += a.idle_fraction;
		add += a.add;
		rel += a.release;
		if (a.add > add_max)
			add_max = a.add;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "interval_s", r->interval_s);
	cJSON_AddNumberToObject(o, "threshold", e->advice_threshold);
	cJSON_AddNumberToObject(o, "intervals", (double)n);
	cJSON_AddNumberToObject(o, "intervals_add", (double)bad);
	cJSON_AddNumberToObject(o, "intervals_release", (double)idle);
	cJSON_AddNumberToObject(o, "gpus_in_use_mean", n ? in_use / (double)n : 0);
	cJSON_AddNumberToObject(o, "gpus_in_use_max", in_use_max);
	cJSON_AddNumberToObject(o, "idle_fraction_mean", n ? idle_f / (double)n : 0);
	cJSON_AddNumberToObject(o, "advice_add_mean", n ? add / (double)n : 0);
	cJSON_AddNumberToObject(o, "advice_add_max", add_max);
	cJSON_AddNumberToObject(o, "advice_release_mean", n ? rel / (double)n : 0);
	return o;
}

cJSON *sym_result_json(const char *command, const struct sym_experiment *e, const struct sym_run_result *r)
{
	char buf[128];
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "program", "symphony");
	cJSON_AddStringToObject(o, "version", SYM_VERSION);
	cJSON_AddStringToObject(o, "commit", sym_build_commit());
	cJSON_AddStringToObject(o, "command", command);
	cJSON_AddNumberToObject(o, "seed", (double)e->seed);
	cJSON_AddNumberToObject(o, "replications", 1);
	cJSON_AddStringToObject(o, "policy", sym_policy_format(&e->policy, buf, sizeof(buf)));
	cJSON_AddStringToObject(o, "drop", sym_gather_format(&e->gather, buf, sizeof(buf)));
	cJSON_AddItemToObject(o, "config", sym_experiment_to_json(e));
	cJSON_AddNumberToObject(o, "measured_seconds", r->window_s);
	add_metrics(o, &r->total, r->window_s);
	struct sym_verdict v;
	sym_judge(e, r, &v);
	cJSON_AddStringToObject(o, "criterion", sym_criterion_name(e->criterion));
	cJSON_AddBoolToObject(o, "meets_criterion", v.ok);
	if (v.worst >= 0)
		cJSON_AddStringToObject(o, "worst_model", e->models[v.worst].name);
	else
		cJSON_AddNullToObject(o, "worst_model");
	cJSON_AddNumberToObject(o, "worst_model_bad_rate", v.worst_bad_rate);
	cJSON_AddNumberToObject(o, "failing_models", (double)v.failing);
	cJSON_AddNumberToObject(o, "few_request_models", (double)v.few);
	cJSON_AddNumberToObject(o, "gpus", e->gpus);
	cJSON_AddNumberToObject(o, "gpu_busy_fraction", r->gpu_busy_fraction);
	cJSON_AddNumberToObject(o, "gpus_used", r->gpus_used);
	cJSON_AddNumberToObject(o, "preemptions", (double)r->preemptions);
	cJSON_AddNumberToObject(o, "preempted_gpu_seconds", r->preempted_gpu_seconds);
	cJSON_AddItemToObject(o, "autoscale", autoscale_json(e, r));
	cJSON *models = cJSON_AddArrayToObject(o, "models");
	for (size_t m = 0; m < r->nmodels; m++) {
		cJSON *mo = cJSON_CreateObject();
		cJSON_AddStringToObject(mo, "name", e->models[m].name);
		cJSON_AddNumberToObject(mo, "slo_ms", e->model_slo_ms[m]);
		add_metrics(mo, &r->models[m], r->window_s);
		cJSON_AddItemToArray(models, mo);
	}
	cJSON_AddNumberToObject(o, "simulated_requests", (double)r->simulated_requests);
	cJSON_AddNumberToObject(o, "wall_seconds", r->wall_seconds);
	return o;
}

void sym_result_print(FILE *f, const char *command, const struct sym_experiment *e,
		      const struct sym_run_result *r)
{
	char pol[128], drop[64], arr[64];
	fprintf(f, "symphony %s %s: policy %s, %s drop, %d GPUs, %s arrivals, seed %llu\n", SYM_VERSION, command,
		sym_policy_format(&e->policy, pol, sizeof(pol)), sym_gather_format(&e->gather, drop, sizeof(drop)),
		e->gpus, sym_arrival_format(&e->arrival, arr, sizeof(arr)), (unsigned long long)e->seed);
	fprintf(f, "offered %.1f req/s, measured over %.1f s after %.1f s warm-up\n\n",
		r->window_s > 0 ? (double)r->total.offered / r->window_s : 0, r->window_s, e->warmup_s);
	fprintf(f, "%-20s %10s %10s %8s %8s %8s %8s %8s %6s %6s\n", "model", "offered", "good", "late", "dropped",
		"bad%", "p50 ms", "p99 ms", "batch", "mean");
	size_t shown = r->nmodels > 40 ? 40 : r->nmodels;
	for (size_t i = 0; i <= shown; i++) {
		const struct sym_model_result *m = i < shown ? &r->models[i] : &r->total;
		const char *name = i < shown ? e->models[i].name : "all";
		if (i == shown && r->nmodels == 1)
			break;
		if (i == shown && r->nmodels > shown)
			fprintf(f, "... %zu more models (see --json)\n", r->nmodels - shown);
		fprintf(f, "%-20.20s %10llu %10llu %8llu %8llu %7.2f%% %8.2f %8.2f %6d %6.1f\n", name,
			(unsigned long long)m->offered, (unsigned long long)m->served, (unsigned long long)m->late,
			(unsigned long long)m->dropped, 100 * sym_bad_rate(m), ms(sym_hist_quantile(&m->latency, 0.5)),
			ms(sym_hist_quantile(&m->latency, 0.99)), sym_batch_quantile(m, 0.5),
			m->batches ? (double)m->batched / (double)m->batches : 0);
	}
	struct sym_verdict v;
	sym_judge(e, r, &v);
	if (v.worst >= 0)
		fprintf(f, "\nworst model %s: %.2f%% bad; %zu of %zu models over %g%% (%s criterion: %s)\n",
			e->models[v.worst].name, 100 * v.worst_bad_rate, v.failing, r->nmodels, 100 * e->max_bad_rate,
			sym_criterion_name(e->criterion), v.ok ? "passes" : "fails");
	if (!strcmp(command, "loadgen")) { /* measured at the client: no view of the GPUs */
		fprintf(f, "\n%llu requests sent to %d GPUs in %.2f s\n", (unsigned long long)r->simulated_requests,
			e->gpus, r->wall_seconds);
		return;
	}
	fprintf(f, "\nGPU busy %.1f%%, %d of %d GPUs used; %llu requests simulated in %.2f s (%.2f M/s)\n",
		100 * r->gpu_busy_fraction, r->gpus_used, e->gpus, (unsigned long long)r->simulated_requests,
		r->wall_seconds, r->wall_seconds > 0 ? (double)r->simulated_requests / r->wall_seconds / 1e6 : 0);
	if (r->preemptions)
		fprintf(f, "%llu batches preempted, %.3f GPU-seconds lost\n", (unsigned long long)r->preemptions,
			r->preempted_gpu_seconds);
}

int sym_outfile_open(struct sym_outfile *o, const char *path, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	if (strlen(path) >= sizeof(o->path))
		return snprintf(err, errlen, "%s: path too long", path), -EINVAL;
	snprintf(o->path, sizeof(o->path), "%s", path);
	snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.%ld", path, (long)getpid());
	o->f = fopen(o->tmp, "w");
	if (!o->f) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot create: %s", path, strerror(e));
		return -e;
	}
	return 0;
}

int sym_outfile_commit(struct sym_outfile *o, char *err, size_t errlen)
{
	int bad = ferror(o->f);
	bad |= fclose(o->f) != 0;
	o->f = NULL;
	if (bad || rename(o->tmp, o->path)) {
		int e = errno ? errno : EIO;
		unlink(o->tmp);
		snprintf(err, errlen, "%s: cannot write: %s", o->path, strerror(e));
		return -e;
	}
	return 0;
}

void sym_outfile_abort(struct sym_outfile *o)
{
	if (o->f) {
		fclose(o->f);
		o->f = NULL;
		unlink(o->tmp);
	}
}

cJSON *sym_ci95_json(const double *x, size_t n)
{
	double mean, lo, hi;
	if (!sym_mean_ci95(x, n, &mean, &lo, &hi))
		return cJSON_CreateNull();
	cJSON *a = cJSON_CreateArray();
	cJSON_AddItemToArray(a, cJSON_CreateNumber(lo));
	cJSON_AddItemToArray(a, cJSON_CreateNumber(hi));
	return a;
}

const char *sym_format_pm(char *buf, size_t len, const char *fmt, const double *x, size_t n)
{
	double mean, lo, hi;
	bool ci = sym_mean_ci95(x, n, &mean, &lo, &hi);
	char a[64], b[64];
	snprintf(a, sizeof(a), fmt, mean);
	if (!ci)
		snprintf(buf, len, "%s", a);
	else
		snprintf(b, sizeof(b), fmt, (hi - lo) / 2), snprintf(buf, len, "%s \u00b1 %s", a, b);
	return buf;
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
	} else if (!e->rate_csv[0]) {
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
	cJSON_AddItemToObject(o, "goodput_ci95", sym_ci95_json(x, g->n));
	cJSON_AddItemToObject(o, "goodput_by_seed", numbers_json(x, g->n));
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
	cJSON *steps = cJSON_AddArrayToObject(o, "search");
	for (size_t i = 0; i < g0->nsteps; i++) {
		const struct sym_goodput_step *st = &g0->steps[i];
		cJSON *s = cJSON_CreateObject();
		cJSON_AddNumberToObject(s, "rate", st->rate);
		cJSON_AddNumberToObject(s, "bad_rate", st->bad_rate);
		if (st->worst >= 0)
			cJSON_AddStringToObject(s, "worst_model", e->models[st->worst].name);
		cJSON_AddNumberToObject(s, "worst_model_bad_rate", st->worst_bad_rate);
		cJSON_AddBoolToObject(s, "ok", st->ok);
		if (st->stopped_early)
			cJSON_AddBoolToObject(s, "stopped_early", true);
		cJSON_AddItemToArray(steps, s);
	}
	return o;
}

size_t sym_warn_few_requests(FILE *f, const char *what, const struct sym_experiment *e,
			     const struct sym_run_result *r)
{
	uint64_t few = sym_min_requests(e->max_bad_rate);
	size_t n = 0;
	char names[300] = "";
	for (size_t m = 0; m < r->nmodels; m++) {
		if (r->models[m].offered >= few)
			continue;
		if (n < 5) {
			size_t l = strlen(names);
			snprintf(names + l, sizeof(names) - l, "%s%s %llu", n ? ", " : "", e->models[m].name,
				 (unsigned long long)r->models[m].offered);
		}
		n++;
	}
	if (n)
		fprintf(f, "symphony: warning%s%s: %zu model%s had fewer than %llu measured requests (%s%s), too few for a "
			   "bad rate of %g%% to mean much; run longer or at a higher rate\n", what[0] ? " " : "", what, n,
			n == 1 ? "" : "s", (unsigned long long)few, names, n > 5 ? ", ..." : "", 100 * e->max_bad_rate);
	return n;
}

int sym_write_json(const char *path, const cJSON *doc, char *err, size_t errlen)
{
	char *text = cJSON_Print(doc);
	if (!text)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	int rc = 0;
	if (!strcmp(path, "-")) {
		fputs(text, stdout);
		fputc('\n', stdout);
		fflush(stdout);
	} else {
		struct sym_outfile o;
		rc = sym_outfile_open(&o, path, err, errlen);
		if (!rc) {
			fputs(text, o.f);
			fputc('\n', o.f);
			rc = sym_outfile_commit(&o, err, errlen);
		}
	}
	free(text);
	return rc;
}

int sym_write_model_timeline(const char *path, const struct sym_experiment *e, const struct sym_run_result *r,
			     char *err, size_t errlen)
{
	if (!r->model_timeline)
		return snprintf(err, errlen, "internal error: the run did not count a per-model timeline"), -EINVAL;
	struct sym_outfile o;
	int rc = sym_outfile_open(&o, path, err, errlen);
	if (rc)
		return rc;
	char pol[128];
	fprintf(o.f, "# symphony %s per-model timeline, policy %s, seed %llu, %d GPUs; interval %g s; requests "
		     "counted in the interval they arrived in\n", SYM_VERSION,
		sym_policy_format(&e->policy, pol, sizeof(pol)), (unsigned long long)e->seed, e->gpus, r->interval_s);
	fprintf(o.f, "t_s,model,offered,good,bad\n");
	for (size_t i = 0; i < r->nintervals; i++)
		for (size_t m = 0; m < r->nmodels; m++) {
			const uint64_t *c = &r->model_timeline[(i * r->nmodels + m) * 3];
			fprintf(o.f, "%g,%s,%llu,%llu,%llu\n", (double)i * r->interval_s, e->models[m].name,
				(unsigned long long)c[0], (unsigned long long)c[1], (unsigned long long)c[2]);
		}
	return sym_outfile_commit(&o, err, errlen);
}

int sym_write_timeline(const char *path, const struct sym_experiment *e, const struct sym_run_result *r,
		       char *err, size_t errlen)
{
	struct sym_outfile o;
	int rc = sym_outfile_open(&o, path, err, errlen);
	if (rc)
		return rc;
	char pol[128];
	fprintf(o.f, "# symphony %s timeline, policy %s, seed %llu, %d GPUs\n", SYM_VERSION,
		sym_policy_format(&e->policy, pol, sizeof(pol)), (unsigned long long)e->seed, e->gpus);
	fprintf(o.f, "# interval %g s; advice: add N*r/(1-r) GPUs when the bad rate r > %g, else release N*f "
		     "(f: idle fraction of the N = %d GPUs)\n", r->interval_s, e->advice_threshold, e->gpus);
	fprintf(o.f, "t_s,offered,good,bad,bad_rate,busy_gpus,gpus_in_use,idle_fraction,advice_add,advice_release\n");
	double dur = sym_experiment_duration(e);
	for (size_t i = 0; i < r->nintervals; i++) {
		const struct sym_timeline_row *t = &r->timeline[i];
		double len = sym_timeline_interval_len(r, dur, i);
		struct sym_autoscale a;
		sym_autoscale_advice(t->good, t->bad, t->busy_gpu_s, len, e->gpus, e->advice_threshold, &a);
		fprintf(o.f, "%g,%llu,%llu,%llu,%.6f,%.4f,%u,%.4f,%d,%d\n", (double)i * r->interval_s,
			(unsigned long long)t->offered, (unsigned long long)t->good, (unsigned long long)t->bad,
			a.bad_rate, t->busy_gpu_s / len, t->gpus_used, a.idle_fraction, a.add, a.release);
	}
	return sym_outfile_commit(&o, err, errlen);
}
