#include "experiment/result.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_cdf.h>

#include "core/autoscale.h"
#include "core/build.h"
#include "core/error.h"
#include "core/memory.h"
#include "experiment/output.h"
#include "sym_version.h"

static time_t started;

void sym_provenance_begin(void)
{
	if (!started)
		started = time(NULL);
}

cJSON *sym_provenance_json(bool with_date)
{
	const char *commit = sym_build_commit();
	size_t n = strlen(commit);
	bool dirty = n > 6 && !strcmp(commit + n - 6, "-dirty");
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "version", SYM_VERSION);
	char bare[128];
	snprintf(bare, sizeof(bare), "%.*s", (int)(dirty ? n - 6 : n), commit);
	cJSON_AddStringToObject(o, "commit", bare);
	if (!strcmp(commit, "unknown"))
		cJSON_AddNullToObject(o, "modified");
	else
		cJSON_AddBoolToObject(o, "modified", dirty);
	cJSON_AddStringToObject(o, "build_type", sym_build_type());
	if (with_date) {
		time_t t = started ? started : time(NULL);
		struct tm tm;
		char date[32];
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
		cJSON_AddStringToObject(o, "date", date);
	}
	return o;
}

cJSON *sym_result_head(const char *command)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "program", "symphony");
	cJSON_AddStringToObject(o, "version", SYM_VERSION);
	cJSON_AddStringToObject(o, "commit", sym_build_commit());
	cJSON_AddItemToObject(o, "provenance", sym_provenance_json(true));
	cJSON_AddStringToObject(o, "command", command);
	return o;
}

int sym_run_result_alloc(struct sym_run_result *r, const struct sym_experiment *e, sym_time end, sym_time interval)
{
	size_t nmodels = e->nmodels;
	r->nmodels = nmodels;
	r->models = calloc(nmodels, sizeof(*r->models));
	if (!r->models)
		return -ENOMEM;
	int maxb = 1;
	for (size_t m = 0; m < nmodels; m++) {
		struct sym_model_result *mr = &r->models[m];
		sym_hist_init(&mr->latency);
		sym_hist_init(&mr->queueing);
		mr->max_batch = 1;
		for (int k = 0; k < e->nkinds; k++) {
			int b = e->profiles[(size_t)k * nmodels + m].max_batch;
			if (b > mr->max_batch)
				mr->max_batch = b;
		}
		if (mr->max_batch > maxb)
			maxb = mr->max_batch;
		mr->batch_counts = calloc((size_t)mr->max_batch + 1, sizeof(uint64_t));
		if (!mr->batch_counts)
			return -ENOMEM;
	}
	sym_hist_init(&r->total.latency);
	sym_hist_init(&r->total.queueing);
	r->total.max_batch = maxb;
	r->total.batch_counts = calloc((size_t)maxb + 1, sizeof(uint64_t));
	if (e->nqueries) {
		r->queries = calloc(e->nqueries, sizeof(*r->queries));
		if (!r->queries)
			return -ENOMEM;
		r->nqueries = e->nqueries;
		for (size_t i = 0; i < e->nqueries; i++)
			sym_hist_init(&r->queries[i].latency);
	}
	r->interval_s = sym_to_s(interval);
	r->nintervals = (size_t)((end + interval - 1) / interval);
	r->timeline = calloc(r->nintervals ? r->nintervals : 1, sizeof(*r->timeline));
	if (!r->total.batch_counts || !r->timeline)
		return -ENOMEM;
	return 0;
}

static void model_result_finish(struct sym_model_result *m)
{
	sym_hist_finish(&m->latency);
	sym_hist_finish(&m->queueing);
	free(m->batch_counts);
	m->batch_counts = NULL;
}

struct sub_summary {
	int models;
	uint64_t offered, bad;
	struct sym_mem mem; /* its models' memory on a GPU of kind 0 */
};

static void sub_summary(const struct sym_experiment *e, const struct sym_run_result *r, int j, struct sub_summary *x)
{
	memset(x, 0, sizeof(*x));
	for (size_t m = 0; m < r->nmodels; m++) {
		if (r->model_part[m] != j)
			continue;
		const struct sym_profile *p = &e->profiles[m];
		x->models++;
		x->offered += r->models[m].offered;
		x->bad += r->models[m].late + r->models[m].dropped;
		sym_mem_add_profile(&x->mem, p);
	}
}

void sym_run_result_finish(struct sym_run_result *r)
{
	if (!r)
		return;
	for (size_t m = 0; m < r->nmodels && r->models; m++)
		model_result_finish(&r->models[m]);
	free(r->models);
	model_result_finish(&r->total);
	for (size_t i = 0; i < r->nqueries && r->queries; i++)
		sym_hist_finish(&r->queries[i].latency);
	free(r->queries);
	free(r->replans);
	free(r->timeline);
	free(r->model_timeline);
	free(r->model_part);
	free(r->epochs);
	free(r->as.decisions);
	free(r->as.part_in_service);
	free(r->as.part_delta);
	free(r->as.part_busy);
	free(r->as.part_bad);
	free(r->sub_gpus);
	free(r->sub_gpus_kind);
	free(r->sub_need);
	memset(r, 0, sizeof(*r));
}

double sym_timeline_interval_len(const struct sym_run_result *r, double duration_s, size_t i)
{
	double start = (double)i * r->interval_s;
	double len = duration_s - start;
	return len < r->interval_s ? len : r->interval_s;
}

int sym_batch_quantile(const struct sym_model_result *m, double q)
{
	if (!m->batches)
		return 0;
	uint64_t rank = (uint64_t)ceil(q * (double)m->batches);
	if (rank < 1)
		rank = 1;
	uint64_t seen = 0;
	for (int b = 1; b <= m->max_batch; b++) {
		seen += m->batch_counts[b];
		if (seen >= rank)
			return b;
	}
	return m->max_batch;
}

bool sym_model_within(uint64_t offered, uint64_t bad, double max_bad_rate)
{
	if (!offered)
		return true;
	if (bad >= offered)
		return false; /* starved: every measured request late or dropped, however few */
	/* bad <= max(max_bad_rate * offered, 1), with the rate compared as the aggregate rule compares it */
	return bad <= 1 || (double)bad / (double)offered <= max_bad_rate;
}

uint64_t sym_min_requests(double max_bad_rate)
{
	return (uint64_t)ceil(1 / max_bad_rate - 1e-9);
}

double sym_run_bad_rate(const struct sym_run_result *r)
{
	if (!r->nqueries)
		return sym_bad_rate(&r->total);
	uint64_t off = 0, bad = 0;
	for (size_t i = 0; i < r->nqueries; i++) {
		off += r->queries[i].offered;
		bad += r->queries[i].late + r->queries[i].dropped;
	}
	return off ? (double)bad / (double)off : 0;
}

void sym_judge(const struct sym_experiment *e, const struct sym_run_result *r, struct sym_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->worst = -1;
	uint64_t few = sym_min_requests(e->max_bad_rate);
	bool worst_fails = false;
	size_t units = r->nqueries ? r->nqueries : r->nmodels;
	for (size_t m = 0; m < units; m++) {
		uint64_t offered, nbad;
		if (r->nqueries) {
			offered = r->queries[m].offered;
			nbad = r->queries[m].late + r->queries[m].dropped;
		} else {
			offered = r->models[m].offered;
			nbad = r->models[m].late + r->models[m].dropped;
		}
		v->few += offered < few;
		if (!offered)
			continue;
		bool fails = !sym_model_within(offered, nbad, e->max_bad_rate);
		v->failing += fails;
		double bad = (double)nbad / (double)offered;
		/* a failing model outranks any passing one; then the higher bad rate */
		if (v->worst < 0 || (fails && !worst_fails) || (fails == worst_fails && bad > v->worst_bad_rate)) {
			v->worst = (int)m;
			v->worst_bad_rate = bad;
			worst_fails = fails;
		}
	}
	bool pass = e->criterion == SYM_CRITERION_AGGREGATE ? sym_run_bad_rate(r) <= e->max_bad_rate
							     : v->failing == 0;
	v->ok = !r->stopped_early && r->total.offered > 0 && pass;
}

bool sym_mean_ci95(const double *x, size_t n, double *mean, double *lo, double *hi)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	*mean = n ? sum / (double)n : 0;
	*lo = *hi = *mean;
	if (n < 2)
		return false;
	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - *mean) * (x[i] - *mean);
	double half = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * sqrt(ss / (double)(n - 1)) / sqrt((double)n);
	*lo = *mean - half;
	*hi = *mean + half;
	return true;
}

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
	cJSON *o = sym_result_head(command);
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
	if (r->nqueries)
		cJSON_AddStringToObject(o, "judged_by", "queries"); /* worst_model, failing_models, ...: queries */
	if (v.worst >= 0)
		cJSON_AddStringToObject(o, "worst_model", sym_unit_name(e, v.worst));
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
	if (r->nsub > 0) {
		cJSON *subs = cJSON_AddArrayToObject(o, "subclusters");
		for (int j = 0; j < r->nsub; j++) {
			struct sub_summary x;
			sub_summary(e, r, j, &x);
			cJSON *so = cJSON_CreateObject();
			cJSON_AddNumberToObject(so, "models", x.models);
			cJSON_AddNumberToObject(so, "gpus", r->sub_gpus[j]);
			if (r->sub_gpus_kind) {
				cJSON *bk = cJSON_AddObjectToObject(so, "gpus_by_kind");
				for (int k = 0; k < e->nkinds; k++)
					cJSON_AddNumberToObject(bk, e->kinds[k].name,
								r->sub_gpus_kind[(size_t)j * (size_t)e->nkinds + (size_t)k]);
			}
			cJSON_AddNumberToObject(so, "gpus_needed", r->sub_need[j]);
			cJSON_AddNumberToObject(so, "offered_rate", r->window_s > 0 ? (double)x.offered / r->window_s : 0);
			cJSON_AddNumberToObject(so, "static_mb", x.mem.static_mb);
			cJSON_AddNumberToObject(so, "max_dynamic_mb", x.mem.dynamic_mb);
			cJSON_AddNumberToObject(so, "bad_rate", x.offered ? (double)x.bad / (double)x.offered : 0);
			cJSON_AddItemToArray(subs, so);
		}
	}
	if (r->nepochs) {
		cJSON *eps = cJSON_AddArrayToObject(o, "epochs");
		for (size_t i = 0; i < r->nepochs; i++) {
			const struct sym_epoch_result *x = &r->epochs[i];
			cJSON *eo = cJSON_CreateObject();
			cJSON_AddNumberToObject(eo, "t_s", x->t_s);
			cJSON_AddBoolToObject(eo, "repartitioned", x->repartitioned);
			cJSON_AddNumberToObject(eo, "models_moved", x->models_moved);
			cJSON_AddNumberToObject(eo, "stalled_moves", x->stalled);
			cJSON_AddNumberToObject(eo, "gpus_moved", x->gpus_moved);
			cJSON_AddNumberToObject(eo, "load_gpu_seconds", x->load_gpu_s);
			cJSON_AddNumberToObject(eo, "held_requests", (double)x->held);
			cJSON_AddNumberToObject(eo, "moved_requests", (double)x->moved_requests);
			cJSON_AddNumberToObject(eo, "moved_bad", (double)x->moved_bad);
			cJSON_AddNumberToObject(eo, "rate_imbalance", x->rate_imbalance);
			cJSON_AddNumberToObject(eo, "memory_imbalance", x->mem_imbalance);
			cJSON_AddItemToArray(eps, eo);
		}
	}
	if (r->as.on) {
		cJSON *ao = cJSON_AddObjectToObject(o, "autoscaler"); /* (the advice summary is "autoscale") */
		cJSON_AddNumberToObject(ao, "gpu_hours", r->as.gpu_hours);
		cJSON_AddNumberToObject(ao, "mean_gpus", r->as.mean_gpus);
		cJSON_AddNumberToObject(ao, "peak_gpus", r->as.peak_gpus);
		cJSON_AddNumberToObject(ao, "adds", r->as.adds);
		cJSON_AddNumberToObject(ao, "releases", r->as.releases);
		cJSON_AddNumberToObject(ao, "gpus_added", r->as.gpus_added);
		cJSON_AddNumberToObject(ao, "gpus_released", r->as.gpus_released);
		cJSON *ds = cJSON_AddArrayToObject(ao, "decisions");
		for (size_t i = 0; i < r->as.ndecisions; i++) {
			const struct sym_as_decision *x = &r->as.decisions[i];
			cJSON *d = cJSON_CreateObject();
			cJSON_AddNumberToObject(d, "t_s", x->t_s);
			cJSON_AddNumberToObject(d, "gpus_in_service", x->in_service);
			cJSON_AddNumberToObject(d, "gpus_provisioned", x->provisioned);
			cJSON_AddNumberToObject(d, "busy_fraction", x->busy_fraction);
			cJSON_AddNumberToObject(d, "bad_rate", x->bad_rate);
			cJSON_AddNumberToObject(d, "delta", x->delta);
			if (x->delta)
				cJSON_AddNumberToObject(d, "bad_rate_next", x->bad_rate_next);
			if (r->as.nparts > 1) { /* per sub-cluster */
				size_t at = i * (size_t)r->as.nparts;
				cJSON_AddItemToObject(d, "subcluster_gpus_in_service",
						      cJSON_CreateIntArray(&r->as.part_in_service[at], r->as.nparts));
				cJSON_AddItemToObject(d, "subcluster_delta",
						      cJSON_CreateIntArray(&r->as.part_delta[at], r->as.nparts));
				cJSON_AddItemToObject(d, "subcluster_busy_fraction",
						      cJSON_CreateDoubleArray(&r->as.part_busy[at], r->as.nparts));
				cJSON_AddItemToObject(d, "subcluster_bad_rate",
						      cJSON_CreateDoubleArray(&r->as.part_bad[at], r->as.nparts));
			}
			cJSON_AddItemToArray(ds, d);
		}
	}
	cJSON *models = cJSON_AddArrayToObject(o, "models");
	for (size_t m = 0; m < r->nmodels; m++) {
		cJSON *mo = cJSON_CreateObject();
		cJSON_AddStringToObject(mo, "name", e->models[m].name);
		cJSON_AddNumberToObject(mo, "slo_ms", e->model_slo_ms[m]);
		add_metrics(mo, &r->models[m], r->window_s);
		cJSON_AddItemToArray(models, mo);
	}
	if (r->nqueries)
		cJSON_AddItemToObject(o, "queries", sym_queries_json(e, r));
	if (r->nreplans) {
		cJSON *a = cJSON_AddArrayToObject(o, "replans");
		for (size_t i = 0; i < r->nreplans; i++) {
			const struct sym_replan *x = &r->replans[i];
			cJSON *ro = cJSON_CreateObject();
			cJSON_AddNumberToObject(ro, "t_s", x->t_s);
			cJSON_AddStringToObject(ro, "query", e->queries[x->query].name);
			cJSON_AddItemToObject(ro, "gammas", cJSON_CreateDoubleArray(x->gamma, x->nstages));
			cJSON_AddItemToObject(ro, "budgets_ms", cJSON_CreateDoubleArray(x->budget_ms, x->nstages));
			cJSON_AddItemToArray(a, ro);
		}
	}
	cJSON_AddNumberToObject(o, "simulated_requests", (double)r->simulated_requests);
	cJSON_AddNumberToObject(o, "wall_seconds", r->wall_seconds);
	return o;
}

cJSON *sym_query_plan_json(const struct sym_experiment *e, size_t i)
{
	const struct sym_query *q = &e->queries[i];
	cJSON *a = cJSON_CreateArray();
	for (int v = 0; v < q->nstages; v++) {
		const struct sym_query_split *p = &q->plan[v];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "model", e->models[q->model[v]].name);
		cJSON_AddNumberToObject(x, "parent", q->parent[v]);
		cJSON_AddNumberToObject(x, "gamma", q->gamma[v]);
		cJSON_AddNumberToObject(x, "requests_per_query", q->mult[v]);
		cJSON_AddNumberToObject(x, "budget_ms", p->budget_ms);
		cJSON_AddNumberToObject(x, "deadline_ms", q->deadline_ms[v]);
		cJSON_AddNumberToObject(x, "batch", p->batch);
		cJSON_AddNumberToObject(x, "batch_latency_ms", p->lat_ms);
		cJSON_AddNumberToObject(x, "rate", p->rate);
		cJSON_AddNumberToObject(x, "throughput_per_gpu", p->tput);
		cJSON_AddNumberToObject(x, "gpus", p->gpus);
		cJSON_AddItemToArray(a, x);
	}
	return a;
}

cJSON *sym_queries_json(const struct sym_experiment *e, const struct sym_run_result *r)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < e->nqueries; i++) {
		const struct sym_query *q = &e->queries[i];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "name", q->name);
		cJSON_AddNumberToObject(x, "slo_ms", q->slo_ms);
		cJSON_AddNumberToObject(x, "share", q->share);
		cJSON_AddStringToObject(x, "split", sym_split_name(q->split));
		if (r && i < r->nqueries) {
			const struct sym_query_result *qr = &r->queries[i];
			cJSON_AddNumberToObject(x, "offered", (double)qr->offered);
			cJSON_AddNumberToObject(x, "offered_rate", r->window_s > 0 ? (double)qr->offered / r->window_s : 0);
			cJSON_AddNumberToObject(x, "good", (double)qr->good);
			cJSON_AddNumberToObject(x, "late", (double)qr->late);
			cJSON_AddNumberToObject(x, "dropped", (double)qr->dropped);
			cJSON_AddNumberToObject(x, "bad_rate", sym_query_bad_rate(qr));
			cJSON_AddNumberToObject(x, "goodput_rate", r->window_s > 0 ? (double)qr->good / r->window_s : 0);
			cJSON_AddNumberToObject(x, "stage_requests_per_query",
						qr->offered ? (double)qr->stage_requests / (double)qr->offered : 0);
			cJSON_AddNumberToObject(x, "latency_p50_ms", ms(sym_hist_quantile(&qr->latency, 0.5)));
			cJSON_AddNumberToObject(x, "latency_p99_ms", ms(sym_hist_quantile(&qr->latency, 0.99)));
		}
		cJSON_AddNumberToObject(x, "split_gpus", q->plan_gpus);
		cJSON_AddItemToObject(x, "stages", sym_query_plan_json(e, i));
		cJSON_AddItemToArray(a, x);
	}
	return a;
}

void sym_queries_print(FILE *f, const struct sym_experiment *e, const struct sym_run_result *r)
{
	for (size_t i = 0; i < e->nqueries; i++) {
		const struct sym_query *q = &e->queries[i];
		fprintf(f, "\nquery %s: SLO %g ms, %.1f%% of the rate, split %s (%.2f GPUs at %.1f queries/s by the "
			"split's count)\n", q->name, q->slo_ms, 100 * q->share, sym_split_name(q->split), q->plan_gpus,
			q->plan[0].rate);
		if (r && i < r->nqueries) {
			const struct sym_query_result *qr = &r->queries[i];
			fprintf(f, "  %llu queries, %llu good, %llu late, %llu dropped: %.2f%% bad; %.2f stage requests "
				"each; latency p50 %.2f ms, p99 %.2f ms\n", (unsigned long long)qr->offered,
				(unsigned long long)qr->good, (unsigned long long)qr->late, (unsigned long long)qr->dropped,
				100 * sym_query_bad_rate(qr),
				qr->offered ? (double)qr->stage_requests / (double)qr->offered : 0,
				ms(sym_hist_quantile(&qr->latency, 0.5)), ms(sym_hist_quantile(&qr->latency, 0.99)));
		}
		fprintf(f, "  %-5s %-20s %6s %7s %9s %10s %6s %9s %7s\n", "stage", "model", "parent", "gamma", "budget",
			"deadline", "batch", "req/s", "GPUs");
		for (int v = 0; v < q->nstages; v++) {
			const struct sym_query_split *p = &q->plan[v];
			fprintf(f, "  %-5d %-20.20s %6d %7.3g %6.1f ms %7.1f ms %6d %9.1f %7.2f\n", v,
				e->models[q->model[v]].name, q->parent[v], q->gamma[v], p->budget_ms, q->deadline_ms[v],
				p->batch, p->rate, p->gpus);
		}
	}
}

void sym_result_print(FILE *f, const char *command, const struct sym_experiment *e,
		      const struct sym_run_result *r)
{
	char pol[128], drop[64], arr[600];
	if (e->arrival_trace[0]) /* a trace's arrivals are its own */
		snprintf(arr, sizeof(arr), "the trace %.500s's", e->arrival_trace);
	else
		sym_arrival_format(&e->arrival, arr, sizeof(arr));
	fprintf(f, "symphony %s %s: policy %s, %s drop, %d GPUs, %s arrivals, seed %llu\n", SYM_VERSION, command,
		sym_policy_format(&e->policy, pol, sizeof(pol)), sym_gather_format(&e->gather, drop, sizeof(drop)),
		e->gpus, arr, (unsigned long long)e->seed);
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
	sym_queries_print(f, e, r);
	if (v.worst >= 0)
		fprintf(f, "\nworst %s %s: %.2f%% bad; %zu of %zu %s over %g%% (%s criterion: %s)\n",
			r->nqueries ? "query" : "model", sym_unit_name(e, v.worst), 100 * v.worst_bad_rate, v.failing,
			r->nqueries ? r->nqueries : r->nmodels, r->nqueries ? "queries" : "models", 100 * e->max_bad_rate,
			sym_criterion_name(e->criterion), v.ok ? "passes" : "fails");
	if (!strcmp(command, "loadgen")) { /* measured at the client: no view of the GPUs */
		fprintf(f, "\n%llu requests sent to %d GPUs in %.2f s\n", (unsigned long long)r->simulated_requests,
			e->gpus, r->wall_seconds);
		return;
	}
	if (r->nsub > 0) {
		fprintf(f, "\n%-11s %6s %6s %8s %12s %10s %10s %8s\n", "sub-cluster", "models", "GPUs", "needed",
			"offered r/s", "static MB", "dynamic MB", "bad%");
		for (int j = 0; j < r->nsub; j++) {
			struct sub_summary x;
			sub_summary(e, r, j, &x);
			fprintf(f, "%-11d %6d %6d %8.2f %12.1f %10.0f %10.0f %7.2f%%\n", j, x.models, r->sub_gpus[j],
				r->sub_need[j], r->window_s > 0 ? (double)x.offered / r->window_s : 0, x.mem.static_mb,
				x.mem.dynamic_mb, x.offered ? 100.0 * (double)x.bad / (double)x.offered : 0);
		}
		for (int j = 0; r->sub_gpus_kind && j < r->nsub; j++) {
			fprintf(f, "%s%d:", j ? "; " : "GPUs by kind: ", j);
			for (int k = 0, c = 0; k < e->nkinds; k++) {
				int n = r->sub_gpus_kind[(size_t)j * (size_t)e->nkinds + (size_t)k];
				if (n)
					fprintf(f, "%s %s %d", c++ ? "," : "", e->kinds[k].name, n);
			}
			if (j == r->nsub - 1)
				fputc('\n', f);
		}
	}
	if (r->nepochs) {
		int moved = 0, stalled = 0, gmoved = 0;
		double load = 0;
		uint64_t held = 0, mreq = 0, mbad = 0;
		for (size_t i = 0; i < r->nepochs; i++) {
			mreq += r->epochs[i].moved_requests;
			mbad += r->epochs[i].moved_bad;
			moved += r->epochs[i].models_moved;
			stalled += r->epochs[i].stalled;
			gmoved += r->epochs[i].gpus_moved;
			load += r->epochs[i].load_gpu_s;
			held += r->epochs[i].held;
		}
		fprintf(f, "%zu epochs: %d model moves (%d stalled for memory, %llu requests waited), %d GPU moves, %.1f "
			   "GPU-seconds loading; %llu requests arrived during their model's move, %llu of them late or "
			   "dropped\n", r->nepochs, moved, stalled, (unsigned long long)held, gmoved, load,
			(unsigned long long)mreq, (unsigned long long)mbad);
	}
	if (r->as.on) {
		double after = 0;
		int n = 0;
		for (size_t i = 0; i < r->as.ndecisions; i++)
			if (r->as.decisions[i].delta && r->as.decisions[i].bad_rate_next >= 0) {
				after += r->as.decisions[i].bad_rate_next;
				n++;
			}
		fprintf(f, "autoscale (%s): %.2f GPU-hours, %.1f GPUs on average, %d at most; %d adds (%d GPUs), %d "
			   "releases (%d GPUs); bad rate in the interval after an action %.2f%% on average\n",
			sym_scale_rule_name(e->autoscale.policy), r->as.gpu_hours, r->as.mean_gpus,
			r->as.peak_gpus, r->as.adds, r->as.gpus_added, r->as.releases, r->as.gpus_released,
			n ? 100 * after / n : 0);
	}
	fprintf(f, "\nGPU busy %.1f%%, %d of %d GPUs used; %llu requests simulated in %.2f s (%.2f M/s)\n",
		100 * r->gpu_busy_fraction, r->gpus_used, e->gpus, (unsigned long long)r->simulated_requests,
		r->wall_seconds, r->wall_seconds > 0 ? (double)r->simulated_requests / r->wall_seconds / 1e6 : 0);
	if (r->preemptions)
		fprintf(f, "%llu batches preempted, %.3f GPU-seconds lost\n", (unsigned long long)r->preemptions,
			r->preempted_gpu_seconds);
}

cJSON *sym_interval_json(bool have, double lo, double hi)
{
	if (!have)
		return cJSON_CreateNull();
	cJSON *a = cJSON_CreateArray();
	cJSON_AddItemToArray(a, cJSON_CreateNumber(lo));
	cJSON_AddItemToArray(a, cJSON_CreateNumber(hi));
	return a;
}

cJSON *sym_ci95_json(const double *x, size_t n)
{
	double mean, lo, hi;
	bool have = sym_mean_ci95(x, n, &mean, &lo, &hi);
	return sym_interval_json(have, lo, hi);
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

size_t sym_warn_few_requests(FILE *f, const char *what, const struct sym_experiment *e,
			     const struct sym_run_result *r)
{
	uint64_t few = sym_min_requests(e->max_bad_rate);
	size_t n = 0;
	char names[300] = "";
	size_t units = r->nqueries ? r->nqueries : r->nmodels;
	for (size_t m = 0; m < units; m++) {
		uint64_t off = r->nqueries ? r->queries[m].offered : r->models[m].offered;
		if (off >= few)
			continue;
		if (n < 5) {
			size_t l = strlen(names);
			snprintf(names + l, sizeof(names) - l, "%s%s %llu", n ? ", " : "", sym_unit_name(e, (int)m),
				 (unsigned long long)off);
		}
		n++;
	}
	const char *unit = r->nqueries ? "quer" : "model", *pl = r->nqueries ? (n == 1 ? "y" : "ies") : (n == 1 ? "" : "s");
	if (n)
		fprintf(f, "symphony: warning%s%s: %zu %s%s had fewer than %llu measured %s (%s%s), too few for a "
			   "bad rate of %g%% to mean much; run longer or at a higher rate\n", what[0] ? " " : "", what, n,
			unit, pl, (unsigned long long)few, r->nqueries ? "queries" : "requests", names, n > 5 ? ", ..." : "",
			100 * e->max_bad_rate);
	return n;
}

cJSON *sym_csv_meta(const char *command, const char *csv, const char *description, const struct sym_experiment *e)
{
	char buf[128];
	cJSON *o = sym_result_head(command);
	cJSON_AddStringToObject(o, "csv", csv);
	cJSON_AddStringToObject(o, "description", description);
	cJSON_AddNumberToObject(o, "seed", (double)e->seed);
	cJSON_AddStringToObject(o, "policy", sym_policy_format(&e->policy, buf, sizeof(buf)));
	cJSON_AddNumberToObject(o, "gpus", e->gpus);
	cJSON_AddItemToObject(o, "config", sym_experiment_to_json(e));
	return o;
}

int sym_csv_commit(struct sym_outfile *csv, cJSON *meta, char *err, size_t errlen)
{
	if (!meta) {
		sym_outfile_abort(csv);
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	}
	int rc = sym_outfile_commit(csv, err, errlen);
	if (!rc)
		rc = sym_write_sidecar(csv, meta, err, errlen);
	cJSON_Delete(meta);
	return rc;
}

int sym_write_model_timeline(const char *path, const char *command, const struct sym_experiment *e,
			     const struct sym_run_result *r, char *err, size_t errlen)
{
	if (!r->model_timeline)
		return snprintf(err, errlen, "internal error: the run did not count a per-model timeline"), -EINVAL;
	struct sym_outfile o;
	int rc = sym_outfile_open(&o, path, err, errlen);
	if (rc)
		return rc;
	fprintf(o.f, "t_s,model,offered,good,bad\n");
	for (size_t i = 0; i < r->nintervals; i++)
		for (size_t m = 0; m < r->nmodels; m++) {
			const uint64_t *c = &r->model_timeline[(i * r->nmodels + m) * 3];
			fprintf(o.f, "%g,%s,%llu,%llu,%llu\n", (double)i * r->interval_s, e->models[m].name,
				(unsigned long long)c[0], (unsigned long long)c[1], (unsigned long long)c[2]);
		}
	cJSON *meta = sym_csv_meta(command, "model-timeline",
				   "per interval and model: requests offered, good (served within the SLO) and bad "
				   "(late or dropped), counted in the interval they arrived in; t_s: the interval's "
				   "start (s)", e);
	cJSON_AddNumberToObject(meta, "interval_s", r->interval_s);
	return sym_csv_commit(&o, meta, err, errlen);
}

int sym_write_timeline(const char *path, const char *command, const struct sym_experiment *e,
		       const struct sym_run_result *r, char *err, size_t errlen)
{
	struct sym_outfile o;
	int rc = sym_outfile_open(&o, path, err, errlen);
	if (rc)
		return rc;
	bool as = r->as.on; /* the autoscaler's GPUs: paid for and in service (averages), the advice over the latter */
	fprintf(o.f, "t_s,offered,good,bad,bad_rate,busy_gpus,gpus_in_use,idle_fraction,advice_add,advice_release%s\n",
		as ? ",gpus_paid,gpus_serving" : "");
	double dur = sym_experiment_duration(e);
	for (size_t i = 0; i < r->nintervals; i++) {
		const struct sym_timeline_row *t = &r->timeline[i];
		double len = sym_timeline_interval_len(r, dur, i);
		int n = as ? (int)lround(t->serving_gpu_s / len) : e->gpus;
		struct sym_autoscale a;
		sym_autoscale_advice(t->good, t->bad, t->busy_gpu_s, len, n > 0 ? n : 1, e->advice_threshold, &a);
		fprintf(o.f, "%g,%llu,%llu,%llu,%.6f,%.4f,%u,%.4f,%d,%d", (double)i * r->interval_s,
			(unsigned long long)t->offered, (unsigned long long)t->good, (unsigned long long)t->bad,
			a.bad_rate, t->busy_gpu_s / len, t->gpus_used, a.idle_fraction, a.add, a.release);
		if (as)
			fprintf(o.f, ",%.2f,%.2f", t->paid_gpu_s / len, t->serving_gpu_s / len);
		fputc('\n', o.f);
	}
	cJSON *meta = sym_csv_meta(command, "timeline",
				   "per interval: requests offered, good and bad (counted in the interval they "
				   "arrived in), their bad rate, busy GPUs (GPU-seconds busy / interval), GPUs in use, "
				   "the idle fraction and the autoscaling advice; t_s: the interval's start (s)", e);
	cJSON_AddNumberToObject(meta, "interval_s", r->interval_s);
	cJSON_AddNumberToObject(meta, "advice_threshold", e->advice_threshold);
	char rule[400];
	snprintf(rule, sizeof(rule), "advice_add = N*r/(1-r) GPUs when the bad rate r > %g, else advice_release = N*f "
		 "(f: the idle fraction of the N = %d GPUs%s)", e->advice_threshold, e->gpus,
		 r->as.on ? "; with the autoscaler, N = the GPUs in service that interval (gpus_serving), and gpus_paid "
			    "counts those coming up and draining too" : "");
	cJSON_AddStringToObject(meta, "advice", rule);
	return sym_csv_commit(&o, meta, err, errlen);
}
