/* runtime/profiler.c - `symphony profile` (see profiler.h). */
#include "runtime/profiler.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "core/build.h"
#include "core/policy.h"
#include "experiment/output.h"
#include "experiment/repository.h"
#include "experiment/result.h"
#include "profiles/zoo.h"
#include "runtime/cluster.h"
#include "runtime/rt.h"
#include "runtime/wire.h"
#include "sym_version.h"

#define WHO "symphony profile"
#define DEFAULT_MAX_SIZE 64 /* the default --batches is 1..min(max_batch, this) */

/* ---- batch sizes ---- */

/* Reads the digits at *p (at least one) into v, capped at LONG_MAX / 10. */
static bool digits(const char **p, long *v)
{
	const char *q = *p;
	for (*v = 0; *q >= '0' && *q <= '9'; q++)
		*v = *v >= LONG_MAX / 100 ? LONG_MAX / 10 : *v * 10 + (*q - '0');
	bool ok = q != *p;
	*p = q;
	return ok;
}

/* One item: N, A..B or A..B:S. */
static int batch_item(const char *spec, const char *item, int limit, bool *on, char *err, size_t errlen)
{
	long a, b, s = 1;
	const char *p = item;
	bool ok = digits(&p, &a);
	b = a;
	if (ok && !strncmp(p, "..", 2)) {
		p += 2;
		ok = digits(&p, &b);
		if (ok && *p == ':') {
			p++;
			ok = digits(&p, &s);
		}
	}
	if (!ok || *p)
		return snprintf(err, errlen, "--batches '%s': expected batch sizes such as 1..64, 1,2,4,8 or 1..64:8, "
				"got '%s'", spec, item), -EINVAL;
	if (s < 1)
		return snprintf(err, errlen, "--batches '%s': the step of '%s' must be at least 1", spec, item),
		       -EINVAL;
	if (a < 1 || b < 1)
		return snprintf(err, errlen, "--batches '%s': batch sizes start at 1, got %ld", spec, a < 1 ? a : b),
		       -EINVAL;
	if (a > b)
		return snprintf(err, errlen, "--batches '%s': the range %ld..%ld is empty (its start is above its end)",
				spec, a, b), -EINVAL;
	if (b > limit)
		return snprintf(err, errlen, "--batches '%s': batch sizes are at most %d, got '%s'", spec, limit, item),
		       -EINVAL;
	for (long v = a; v <= b; v += s)
		on[v] = true;
	on[b] = true;
	return 0;
}

int sym_profiler_parse_batches(const char *spec, int limit, int *out, char *err, size_t errlen)
{
	bool *on = calloc((size_t)limit + 1, sizeof(bool));
	char *copy = strdup(spec);
	int rc = on && copy ? 0 : -ENOMEM;
	if (rc)
		snprintf(err, errlen, "out of memory");
	const char *p = copy;
	while (!rc) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		rc = batch_item(spec, p, limit, on, err, errlen);
		if (!comma)
			break;
		p = comma + 1;
	}
	int n = 0;
	for (int b = 1; !rc && b <= limit; b++)
		if (on[b])
			out[n++] = b;
	free(on);
	free(copy);
	return rc ? rc : n;
}

/* ---- measuring ---- */

/* Valid small values of the datatype, different per input. */
static void fill_input(unsigned char *buf, size_t bytes, enum sym_dtype t, size_t seed)
{
	static const uint16_t halves[4] = { 0x0000, 0x3400, 0x3800, 0x3c00 }; /* 0, 0.25, 0.5, 1 */
	size_t es = sym_dtype_size(t) ? sym_dtype_size(t) : 1;
	memset(buf, 0, bytes);
	for (size_t i = 0; i + es <= bytes; i += es) {
		unsigned v = (unsigned)((i / es * 7 + seed * 13) % 100);
		if (t == SYM_DT_FP32) {
			float f = (float)v / 100.0f;
			memcpy(buf + i, &f, sizeof(f));
		} else if (t == SYM_DT_FP64) {
			double d = v / 100.0;
			memcpy(buf + i, &d, sizeof(d));
		} else if (t == SYM_DT_FP16) {
			memcpy(buf + i, &halves[v % 4], sizeof(uint16_t));
		} else {
			buf[i] = (unsigned char)(t == SYM_DT_BOOL ? v & 1 : v); /* little-endian integers < 100 */
		}
	}
}

static void point_stats(double *v, double *dev, int n, struct sym_profiler_point *p)
{
	gsl_sort(v, 1, (size_t)n);
	p->runs = n;
	p->median_ms = gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
	p->mean_ms = gsl_stats_mean(v, 1, (size_t)n);
	p->min_ms = v[0];
	p->max_ms = v[n - 1];
	p->p10_ms = gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, 0.10);
	p->p90_ms = gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, 0.90);
	for (int i = 0; i < n; i++)
		dev[i] = fabs(v[i] - p->median_ms);
	gsl_sort(dev, 1, (size_t)n);
	p->mad_ms = gsl_stats_median_from_sorted_data(dev, 1, (size_t)n);
}

/* One run of a batch of b, started at once; its latency in ms. */
static int run_once(struct sym_executor *x, int id, struct sym_batch_io io, int b, const struct sym_profiler_opts *o,
		    double *ms, char *err, size_t errlen)
{
	if (o->stop && *o->stop)
		return snprintf(err, errlen, "interrupted"), -EINTR;
	sym_time began = 0, ended = 0;
	io.n = b;
	int rc = x->ops->run(x, id, &io, sym_monotonic_ns(), &began, &ended, err, errlen);
	*ms = (double)(ended - began) / 1e6;
	return rc;
}

/* Interference on a shared machine comes in bursts (another process's time
 * slice, a compile job) that last longer than a batch. Measured size by
 * size, one burst can shift every run of a size and so the median; so the
 * timed runs go in rounds instead, each round one run of every size
 * (alternately upwards and downwards), which spreads a burst over all sizes
 * as one outlier each. The warm-up runs of every size come first. */
int sym_profiler_measure(struct sym_executor *x, int id, const struct sym_model_desc *m, const int *batches,
			 int nb, const struct sym_profiler_opts *o, struct sym_profiler_point *out, char *err,
			 size_t errlen)
{
	int maxb = 0;
	for (int k = 0; k < nb; k++)
		maxb = batches[k] > maxb ? batches[k] : maxb;
	size_t in_bytes = sym_tensor_bytes(&m->input), out_bytes = sym_tensor_bytes(&m->output);
	if (maxb < 1 || o->repeats < 1 || o->warmup < 0 || in_bytes > UINT32_MAX || out_bytes > UINT32_MAX)
		return snprintf(err, errlen, "profile: bad arguments (batch sizes, repeats, or tensors over 4 GB)"),
		       -EINVAL;
	size_t nmax = (size_t)maxb, nrep = (size_t)o->repeats;
	unsigned char *in = malloc(nmax * (in_bytes ? in_bytes : 1));
	unsigned char *outb = malloc(nmax * (out_bytes ? out_bytes : 1));
	const void **inputs = malloc(nmax * sizeof(*inputs));
	void **outputs = malloc(nmax * sizeof(*outputs));
	uint32_t *lens = malloc(nmax * sizeof(*lens)), *out_lens = malloc(nmax * sizeof(*out_lens));
	double *lat = malloc((size_t)nb * nrep * sizeof(double)), *dev = malloc(nrep * sizeof(double));
	int rc = 0;
	if (!in || !outb || !inputs || !outputs || !lens || !out_lens || !lat || !dev) {
		snprintf(err, errlen, "out of memory for %d inputs of %zu bytes and %d x %d latencies", maxb, in_bytes,
			 nb, o->repeats);
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nmax; i++) {
		fill_input(in + i * in_bytes, in_bytes, m->input.dtype, i);
		inputs[i] = in + i * in_bytes;
		lens[i] = (uint32_t)in_bytes;
		outputs[i] = outb + i * out_bytes;
	}
	struct sym_batch_io io = { 1, inputs, lens, outputs, (uint32_t)out_bytes, out_lens };
	double ms;
	for (int k = 0; k < nb && !rc; k++)
		for (int r = 0; r < o->warmup && !rc; r++)
			rc = run_once(x, id, io, batches[k], o, &ms, err, errlen);
	sym_time t0 = sym_monotonic_ns(), shown = t0;
	for (size_t r = 0; r < nrep && !rc; r++) {
		for (int i = 0; i < nb && !rc; i++) {
			int k = r % 2 ? nb - 1 - i : i;
			rc = run_once(x, id, io, batches[k], o, &lat[(size_t)k * nrep + r], err, errlen);
		}
		sym_time now = sym_monotonic_ns();
		if (!rc && o->progress && (now - shown >= SYM_S || r + 1 == nrep)) {
			fprintf(o->progress, "%s: %s: %zu of %zu rounds of %d batch sizes (%.1f s)\n", WHO,
				m->name ? m->name : "", r + 1, nrep, nb, (double)(now - t0) / 1e9);
			shown = now;
		}
	}
	for (int k = 0; k < nb && !rc; k++) {
		struct sym_profiler_point *p = &out[k];
		memset(p, 0, sizeof(*p));
		p->batch = batches[k];
		point_stats(&lat[(size_t)k * nrep], dev, o->repeats, p);
		struct sym_model_memory mem;
		if (x->ops->memory(x, id, batches[k], &mem))
			mem = (struct sym_model_memory){ -1, -1 };
		p->static_mb = mem.static_mb;
		p->dynamic_mb = mem.dynamic_mb;
	}
out:
	free(in);
	free(outb);
	free(inputs);
	free(outputs);
	free(lens);
	free(out_lens);
	free(lat);
	free(dev);
	return rc;
}

/* ---- fit and table ---- */

int sym_profiler_fit(const struct sym_profiler_point *pts, int n, struct sym_profiler_fit *fit)
{
	memset(fit, 0, sizeof(*fit));
	if (n < 2)
		return -EINVAL;
	double *x = malloc((size_t)n * sizeof(double)), *y = malloc((size_t)n * sizeof(double));
	if (!x || !y) {
		free(x);
		free(y);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		x[i] = pts[i].batch;
		y[i] = pts[i].median_ms;
	}
	double c0, c1, cov00, cov01, cov11, sumsq;
	gsl_fit_linear(x, 1, y, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
	fit->beta_ms = c0;
	fit->alpha_ms = c1;
	/* the covariance is scaled by the residual variance sumsq / (n - 2) */
	fit->beta_se_ms = n > 2 ? sqrt(cov00) : NAN;
	fit->alpha_se_ms = n > 2 ? sqrt(cov11) : NAN;
	double mean = gsl_stats_mean(y, 1, (size_t)n), tss = 0;
	for (int i = 0; i < n; i++) {
		tss += (y[i] - mean) * (y[i] - mean);
		double rel = fabs(y[i] - (c1 * x[i] + c0)) / y[i];
		if (rel > fit->max_rel_residual || i == 0) {
			fit->max_rel_residual = rel;
			fit->worst_batch = pts[i].batch;
		}
	}
	fit->r2 = tss > 0 ? 1 - sumsq / tss : sumsq > 0 ? 0 : 1;
	fit->linear = fit->r2 >= SYM_PROFILER_MIN_R2 && fit->max_rel_residual <= SYM_PROFILER_MAX_RESIDUAL;
	free(x);
	free(y);
	return 0;
}

static double round_ns(double ms) { return round(ms * 1e6) / 1e6; }

void sym_profiler_table(const struct sym_profiler_point *pts, int n, double *table_ms)
{
	int last = pts[n - 1].batch, j = 0;
	for (int b = 1; b <= last; b++) {
		while (pts[j].batch < b)
			j++;
		double v = pts[j].median_ms;
		if (pts[j].batch != b && j > 0) { /* between two sizes measured */
			const struct sym_profiler_point *lo = &pts[j - 1], *hi = &pts[j];
			v = lo->median_ms + (hi->median_ms - lo->median_ms) * (b - lo->batch) / (hi->batch - lo->batch);
		}
		v = fmax(round_ns(v), 1e-6);
		table_ms[b - 1] = b > 1 && table_ms[b - 2] > v ? table_ms[b - 2] : v;
	}
}

/* ---- the command ---- */

/* "NAME, NAME, ... and N more": a few of the experiment's models. */
static void some_models(const struct sym_cluster *c, char *buf, size_t len)
{
	buf[0] = '\0';
	size_t n = c->exp.nmodels, shown = n < 8 ? n : 8;
	for (size_t m = 0; m < shown; m++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", m ? ", " : "", c->models[m].name);
	if (n > shown)
		snprintf(buf + strlen(buf), len - strlen(buf), " and %zu more", n - shown);
}

static int find_model(const struct sym_profiler_cmd *o, const struct sym_cluster *c)
{
	char list[600];
	some_models(c, list, sizeof(list));
	if (!o->model) {
		if (c->exp.nmodels == 1)
			return 0;
		fprintf(stderr, "%s: --model NAME is required: the experiment has %zu models (%s)\n", WHO, c->exp.nmodels,
			list);
		return -1;
	}
	for (size_t m = 0; m < c->exp.nmodels; m++)
		if (!strcmp(c->models[m].name, o->model))
			return (int)m;
	fprintf(stderr, "%s: --model '%s': no such model in the experiment (zoo %s; models: %s)\n", WHO, o->model,
		c->exp.zoo, list);
	return -1;
}

/* The output names: the model's name made safe for a file name. */
static void default_paths(struct sym_profiler_cmd *o, const char *model)
{
	char safe[80];
	size_t i = 0;
	for (; model[i] && i + 1 < sizeof(safe); i++) {
		char ch = model[i];
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
			  ch == '-' || ch == '_';
		safe[i] = ok ? ch : '_';
	}
	safe[i] = '\0';
	if (!o->out) {
		snprintf(o->out_buf, sizeof(o->out_buf), "profile-%s.json", safe);
		o->out = o->out_buf;
	}
	if (!o->table_out && sym_output_is_stdout(o->out)) { /* the linear profile on stdout: the table in its own file */
		snprintf(o->table_buf, sizeof(o->table_buf), "profile-%s.table.json", safe);
		o->table_out = o->table_buf;
	} else if (!o->table_out) {
		size_t n = strlen(o->out);
		if (n > 5 && !strcmp(o->out + n - 5, ".json"))
			n -= 5;
		snprintf(o->table_buf, sizeof(o->table_buf), "%.*s.table.json", (int)n, o->out);
		o->table_out = o->table_buf;
	}
}

static bool is_noisy(const struct sym_profiler_point *p) { return p->p90_ms > (1 + SYM_PROFILER_NOISE) * p->median_ms; }

static cJSON *number_or_null(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

static cJSON *point_json(const struct sym_profiler_point *p, double fit_ms)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddNumberToObject(j, "batch", p->batch);
	cJSON_AddNumberToObject(j, "runs", p->runs);
	const char *keys[] = { "median_ms", "mean_ms", "min_ms", "p10_ms", "p90_ms", "max_ms", "mad_ms" };
	const double vals[] = { p->median_ms, p->mean_ms, p->min_ms, p->p10_ms, p->p90_ms, p->max_ms, p->mad_ms };
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		cJSON_AddNumberToObject(j, keys[i], round_ns(vals[i]));
	cJSON_AddNumberToObject(j, "fit_ms", round_ns(fit_ms));
	cJSON_AddItemToObject(j, "static_mb", number_or_null(p->static_mb >= 0 ? p->static_mb : NAN));
	cJSON_AddItemToObject(j, "dynamic_mb", number_or_null(p->dynamic_mb >= 0 ? p->dynamic_mb : NAN));
	return j;
}

/* Everything a profile run produced, for its files and its JSON. */
struct record {
	const struct sym_cluster *c;
	size_t m;
	const struct sym_profiler_cmd *o;
	const char *spec;
	const int *batches;
	int nb;
	const struct sym_profiler_point *pts;
	struct sym_profiler_fit fit;
	struct sym_model_spec linear, table; /* the two profiles */
	double wall_s;
	char date[32];
};

/* The fit's figures into object f. */
static void fit_json(cJSON *f, const struct sym_profiler_fit *fit)
{
	cJSON_AddStringToObject(f, "method", "least squares on the medians (gsl_fit_linear)");
	cJSON_AddNumberToObject(f, "alpha_ms", round_ns(fit->alpha_ms));
	cJSON_AddNumberToObject(f, "beta_ms", round_ns(fit->beta_ms));
	cJSON_AddItemToObject(f, "alpha_se_ms", number_or_null(fit->alpha_se_ms));
	cJSON_AddItemToObject(f, "beta_se_ms", number_or_null(fit->beta_se_ms));
	cJSON_AddNumberToObject(f, "r2", fit->r2);
	cJSON_AddNumberToObject(f, "max_rel_residual", fit->max_rel_residual);
	cJSON_AddNumberToObject(f, "max_residual_batch", fit->worst_batch);
	cJSON_AddBoolToObject(f, "linear", fit->linear);
}

static cJSON *record_json(const struct record *r)
{
	const struct sym_cluster *c = r->c;
	const struct sym_profile *ref = c->models[r->m].profile;
	cJSON *j = cJSON_CreateObject();
	char dev[64];
	if (!strcmp(c->executor, "cuda") || (!strcmp(c->executor, "torch") && !strcmp(c->torch_device, "cuda")))
		snprintf(dev, sizeof(dev), "cuda:%d", c->device);
	else if (!strcmp(c->executor, "torch"))
		snprintf(dev, sizeof(dev), "cpu (%d intra-op thread%s)", c->torch_threads, c->torch_threads == 1 ? "" : "s");
	else
		snprintf(dev, sizeof(dev), "%s (no device)", c->executor);
	cJSON_AddStringToObject(j, "program", "symphony");
	cJSON_AddStringToObject(j, "version", SYM_VERSION);
	cJSON_AddStringToObject(j, "commit", sym_build_commit());
	cJSON_AddItemToObject(j, "provenance", sym_provenance_json(true));
	cJSON_AddStringToObject(j, "command", "profile");
	cJSON_AddStringToObject(j, "date", r->date);
	cJSON_AddStringToObject(j, "model", r->linear.name);
	cJSON_AddStringToObject(j, "executor", c->executor);
	cJSON_AddStringToObject(j, "device", dev);
	cJSON_AddStringToObject(j, "gpu", c->exp.kinds[0].name);
	cJSON_AddItemToObject(j, "input", sym_tensor_sig_to_json(&c->models[r->m].input));
	cJSON_AddItemToObject(j, "output", sym_tensor_sig_to_json(&c->models[r->m].output));
	cJSON_AddStringToObject(j, "batch_spec", r->spec);
	cJSON_AddItemToObject(j, "batches", cJSON_CreateIntArray(r->batches, r->nb));
	cJSON_AddNumberToObject(j, "warmup", r->o->warmup);
	cJSON_AddNumberToObject(j, "repeats", r->o->repeats);
	cJSON_AddNumberToObject(j, "wall_s", round(r->wall_s * 1000) / 1000);
	fit_json(cJSON_AddObjectToObject(j, "fit"), &r->fit);
	cJSON *noisy = cJSON_AddArrayToObject(j, "noisy_batches"); /* p90 > (1 + SYM_PROFILER_NOISE) median */
	for (int k = 0; k < r->nb; k++)
		if (is_noisy(&r->pts[k]))
			cJSON_AddItemToArray(noisy, cJSON_CreateNumber(r->pts[k].batch));
	if (!strcmp(c->executor, "emulated")) { /* what the measurement should find */
		cJSON *e = cJSON_AddObjectToObject(j, "emulated_profile");
		cJSON_AddBoolToObject(e, "linear", ref->linear);
		cJSON_AddNumberToObject(e, "alpha_ms", ref->alpha_ms);
		cJSON_AddNumberToObject(e, "beta_ms", ref->beta_ms);
		cJSON_AddNumberToObject(e, "max_batch", ref->max_batch);
	}
	cJSON *pts = cJSON_AddArrayToObject(j, "measurements");
	for (int k = 0; k < r->nb; k++)
		cJSON_AddItemToArray(pts, point_json(&r->pts[k], r->fit.alpha_ms * r->pts[k].batch + r->fit.beta_ms));
	cJSON *files = cJSON_AddObjectToObject(j, "files");
	cJSON_AddStringToObject(files, "linear", r->o->out);
	cJSON_AddStringToObject(files, "table", r->o->table_out);
	/* the configuration, with the profiled model only (the file reruns this profile) */
	cJSON *cfg = sym_experiment_to_json(&c->exp);
	cJSON *models = cJSON_GetObjectItemCaseSensitive(cfg, "models");
	if (c->exp.num_models <= 0)
		for (cJSON *it = models ? models->child : NULL, *next; it; it = next) {
			next = it->next;
			const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "name");
			if (!cJSON_IsString(nm) || strcmp(nm->valuestring, r->linear.name))
				cJSON_Delete(cJSON_DetachItemViaPointer(models, it));
		}
	cJSON_AddItemToObject(j, "config", cfg);
	cJSON_AddItemToObject(j, "runtime", sym_cluster_runtime_json(c));
	return j;
}

/* A zoo file of one model, the record as its source. */
static cJSON *zoo_json(const struct record *r, const cJSON *rec, const struct sym_model_spec *s)
{
	cJSON *z = cJSON_CreateObject();
	cJSON_AddStringToObject(z, "gpu", r->c->exp.kinds[0].name);
	cJSON_AddItemToObject(z, "source", cJSON_Duplicate(rec, true));
	cJSON *models = cJSON_AddArrayToObject(z, "models");
	cJSON_AddItemToArray(models, sym_model_spec_to_json(s));
	return z;
}

static int put_json(struct sym_outfile *f, const cJSON *doc)
{
	char *text = cJSON_Print(doc);
	if (!text)
		return -ENOMEM;
	fputs(text, f->f);
	fputc('\n', f->f);
	free(text);
	return 0;
}

/* Builds the two profiles from the measurement. */
static int make_profiles(struct record *r)
{
	const struct sym_profiler_point *p = r->pts;
	int nb = r->nb, last = p[nb - 1].batch;
	struct sym_model_spec *l = &r->linear, *t = &r->table;
	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", r->c->models[r->m].name);
	l->alpha_ms = fmax(round_ns(r->fit.alpha_ms), 0);
	l->beta_ms = fmax(round_ns(r->fit.beta_ms), 0);
	l->max_batch = last;
	l->slo_ms = r->c->exp.model_slo_ms[r->m];
	l->static_mb = l->dynamic_mb = l->file_mb = -1;
	/* Memory as the one rule takes it (core/memory.h): the static memory, and
	 * the dynamic memory of a batch at its largest (the most any batch asks) */
	bool mem = true;
	for (int k = 0; k < nb; k++) {
		mem &= p[k].static_mb >= 0 && p[k].dynamic_mb >= 0;
		l->static_mb = fmax(l->static_mb, p[k].static_mb);
		l->dynamic_mb = fmax(l->dynamic_mb, p[k].dynamic_mb);
	}
	if (!mem)
		l->static_mb = l->dynamic_mb = -1;
	else
		l->dynamic_mb = round(l->dynamic_mb * 1000) / 1000;
	*t = *l;
	t->alpha_ms = t->beta_ms = NAN;
	t->max_batch = 0;
	t->ntable = last;
	t->table_ms = malloc((size_t)last * sizeof(double));
	if (!t->table_ms)
		return -ENOMEM;
	sym_profiler_table(p, nb, t->table_ms);
	return 0;
}

static void print_table(FILE *f, const struct record *r)
{
	const struct sym_cluster *c = r->c;
	fprintf(f, "%s on the %s executor (%s), %d batch sizes x %d runs after %d warm-up runs, %.1f s:\n",
		r->linear.name, c->executor, c->exp.kinds[0].name, r->nb, r->o->repeats, r->o->warmup, r->wall_s);
	fprintf(f, "%6s %10s %10s %10s %9s %10s %8s %10s\n", "batch", "median ms", "p10 ms", "p90 ms", "MAD us",
		"fit ms", "resid %", "memory MB");
	for (int k = 0; k < r->nb; k++) {
		const struct sym_profiler_point *p = &r->pts[k];
		double fit = r->fit.alpha_ms * p->batch + r->fit.beta_ms;
		char mem[32] = "-";
		if (p->static_mb >= 0 && p->dynamic_mb >= 0)
			snprintf(mem, sizeof(mem), "%.0f", p->static_mb + p->dynamic_mb);
		double resid = 100 * (p->median_ms - fit) / p->median_ms;
		fprintf(f, "%6d %10.3f %10.3f %10.3f %9.1f %10.3f %8.2f %10s\n", p->batch, p->median_ms, p->p10_ms,
			p->p90_ms, p->mad_ms * 1000, fit, fabs(resid) < 0.005 ? 0 : resid, mem);
	}
	fprintf(f, "fit: l(b) = %.5f b + %.5f ms (standard errors %.2g, %.2g), r2 %.6f, largest residual %.2f%% "
		   "at b = %d\n",
		r->fit.alpha_ms, r->fit.beta_ms, r->fit.alpha_se_ms, r->fit.beta_se_ms, r->fit.r2,
		100 * r->fit.max_rel_residual, r->fit.worst_batch);
	const struct sym_profile *ref = c->models[r->m].profile;
	if (!strcmp(c->executor, "emulated"))
		fprintf(f, "emulated %s profile: l(b) = %.5f b + %.5f ms (alpha %+.2f%%, beta %+.2f%%)\n",
			ref->linear ? "linear" : "table (its least-squares line)", ref->alpha_ms, ref->beta_ms,
			ref->alpha_ms > 0 ? 100 * (r->fit.alpha_ms / ref->alpha_ms - 1) : 0,
			ref->beta_ms > 0 ? 100 * (r->fit.beta_ms / ref->beta_ms - 1) : 0);
	fprintf(f, "wrote %s (linear) and %s (table)\n", r->o->out, r->o->table_out);
}

static void warn_fit(const struct record *r)
{
	int n = 0, worst = 0;
	double spread = 0; /* the worst p90 / median - 1 */
	for (int k = 0; k < r->nb; k++) {
		double sp = r->pts[k].p90_ms / r->pts[k].median_ms - 1;
		n += is_noisy(&r->pts[k]);
		if (is_noisy(&r->pts[k]) && sp > spread) {
			spread = sp;
			worst = r->pts[k].batch;
		}
	}
	if (n)
		fprintf(stderr,
			"%s: warning: noisy measurements: at %d of %d batch sizes the p90 is more than %.0f%% above the "
			"median (b = %d: +%.1f%%); the machine may be busy: profile on a quiet one, or with more --repeats\n",
			WHO, n, r->nb, 100 * SYM_PROFILER_NOISE, worst, 100 * spread);
	if (!r->fit.linear)
		fprintf(stderr,
			"%s: warning: the model is not linear (r2 %.4f, largest residual %.1f%% at b = %d; want r2 >= "
			"%.2f and <= %.0f%%): use the table profile %s\n",
			WHO, r->fit.r2, 100 * r->fit.max_rel_residual, r->fit.worst_batch, SYM_PROFILER_MIN_R2,
			100 * SYM_PROFILER_MAX_RESIDUAL, r->o->table_out);
	if (r->fit.alpha_ms < 0 || r->fit.beta_ms < 0)
		fprintf(stderr, "%s: warning: the fitted %s is negative (%.6f ms); the linear profile has 0\n", WHO,
			r->fit.alpha_ms < 0 ? "alpha" : "beta", r->fit.alpha_ms < 0 ? r->fit.alpha_ms : r->fit.beta_ms);
}

/* --write: the measured profile into the repository's DIR/NAME/config.json
 * (experiment/repository.h), so that the simulator, the planner and the
 * runtime read it: alpha_ms and beta_ms when l(b) is linear with both >= 0,
 * else the measured curve (latency_ms, b = 1 .. the largest batch
 * measured); static_mb and dynamic_mb where the executor knows them; and
 * the fit and the measurement, kept for whoever reads the file. */
static int write_repository(const struct record *r, char *err, size_t errlen)
{
	const struct sym_cluster *c = r->c;
	bool line = r->fit.linear && r->fit.alpha_ms >= 0 && r->fit.beta_ms >= 0;
	cJSON *p = cJSON_CreateObject();
	if (!p)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	if (line) {
		cJSON_AddNumberToObject(p, "alpha_ms", round_ns(r->fit.alpha_ms));
		cJSON_AddNumberToObject(p, "beta_ms", round_ns(r->fit.beta_ms));
	} else {
		cJSON_AddItemToObject(p, "latency_ms", cJSON_CreateDoubleArray(r->table.table_ms, r->table.ntable));
	}
	if (r->linear.static_mb >= 0)
		cJSON_AddNumberToObject(p, "static_mb", r->linear.static_mb);
	if (r->linear.dynamic_mb >= 0)
		cJSON_AddNumberToObject(p, "dynamic_mb", r->linear.dynamic_mb);
	cJSON *f = cJSON_AddObjectToObject(p, "fit");
	fit_json(f, &r->fit);
	cJSON_AddStringToObject(f, "used", line ? "alpha_ms and beta_ms" : "latency_ms (the measured medians)");
	cJSON *ms = cJSON_AddObjectToObject(p, "measured");
	cJSON_AddStringToObject(ms, "date", r->date);
	cJSON_AddStringToObject(ms, "executor", c->executor);
	if (!strcmp(c->executor, "torch"))
		cJSON_AddNumberToObject(ms, "torch_threads", c->torch_threads);
	cJSON_AddStringToObject(ms, "symphony", SYM_VERSION);
	cJSON_AddStringToObject(ms, "commit", sym_build_commit());
	cJSON_AddItemToObject(ms, "batches", cJSON_CreateIntArray(r->batches, r->nb));
	cJSON *med = cJSON_AddArrayToObject(ms, "median_ms");
	for (int k = 0; k < r->nb; k++)
		cJSON_AddItemToArray(med, cJSON_CreateNumber(round_ns(r->pts[k].median_ms)));
	cJSON_AddNumberToObject(ms, "repeats", r->o->repeats);
	int rc = sym_repo_write_profile(c->exp.model_repository, r->linear.name, p, err, errlen);
	cJSON_Delete(p);
	if (!rc && !r->o->quiet)
		fprintf(stderr, "%s: wrote the profile (%s) into %s/%s/config.json\n", WHO,
			line ? "alpha_ms, beta_ms" : "latency_ms: l(b) is not linear with both terms >= 0", c->exp.model_repository,
			r->linear.name);
	return rc;
}

/* Checks the sizes against the model's largest batch. */
static int check_batches(const struct sym_profiler_cmd *o, const struct sym_cluster *c, size_t m, const int *b, int nb)
{
	const struct sym_profile *p = c->models[m].profile;
	const struct sym_model_spec *s = &c->exp.models[m];
	if (nb < 2) {
		fprintf(stderr, "%s: --batches '%s': at least 2 batch sizes are needed to fit l(b) = alpha*b + beta\n",
			WHO, o->batches);
		return -1;
	}
	if (b[nb - 1] <= p->max_batch)
		return 0;
	char why[160];
	if (s->table_ms)
		snprintf(why, sizeof(why), "the length of its latency table");
	else if (s->max_batch)
		snprintf(why, sizeof(why), "its max_batch");
	else
		snprintf(why, sizeof(why), "the largest b with l(b) <= its SLO of %g ms", c->exp.model_slo_ms[m]);
	fprintf(stderr,
		"%s: --batches '%s': batch %d is above the largest batch of model '%s', %d (%s); raise it with --slo MS "
		"or \"max_batch\" in the model's object, or lower --batches\n",
		WHO, o->batches, b[nb - 1], p->name, p->max_batch, why);
	return -1;
}

static void abort_all(struct sym_outfile *f, int n)
{
	for (int i = 0; i < n; i++)
		sym_outfile_abort(&f[i]);
}

/* Opens the outputs (temporary files, renamed at the end); 0 or 1 after a message. */
static int open_outputs(const struct sym_profiler_cmd *o, struct sym_outfile *f, int *nf)
{
	const char *paths[3] = { o->out, o->table_out, o->json && !sym_output_is_stdout(o->json) ? o->json : NULL };
	char err[1200];
	*nf = 0;
	for (int i = 0; i < 3 && paths[i]; i++) {
		if (sym_outfile_open(&f[i], paths[i], err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", WHO, err);
			abort_all(f, *nf);
			return 1;
		}
		++*nf;
	}
	return 0;
}

static int run(struct sym_profiler_cmd *o, struct sym_cluster *c, size_t m, const int *batches, int nb)
{
	char err[1024];
	const struct sym_model_desc *d = &c->models[m];
	struct sym_executor_opts xo = { .device = c->device, .model_lib = c->model_lib[0] ? c->model_lib : NULL,
					.torch_threads = c->torch_threads, .torch_device = c->torch_device };
	struct sym_executor *x = sym_executor_open(c->executor, &xo, err, sizeof(err));
	if (!x) {
		fprintf(stderr, "%s: %s\n", WHO, err);
		return 2;
	}
	int rc = 0;
	struct sym_outfile files[3];
	int nf = 0;
	struct sym_profiler_point *pts = calloc((size_t)nb, sizeof(*pts));
	struct record r = { .c = c, .m = m, .o = o, .spec = o->batches, .batches = batches, .nb = nb, .pts = pts };
	cJSON *rec = NULL, *docs[3] = { NULL, NULL, NULL };
	if (!pts) {
		fprintf(stderr, "%s: out of memory\n", WHO);
		rc = 1;
		goto out;
	}
	if (x->ops->load(x, 0, d, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", WHO, err);
		rc = 2;
		goto out;
	}
	if ((rc = open_outputs(o, files, &nf)))
		goto out;
	time_t now = time(NULL);
	struct tm tm;
	strftime(r.date, sizeof(r.date), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	sym_rt_signals();
	/* precise sleeps: the emulated executor spins only the last 200 us */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	struct sym_profiler_opts po = { o->warmup, o->repeats, o->quiet ? NULL : stderr, &sym_rt_stop };
	sym_time t0 = sym_monotonic_ns();
	int e = sym_profiler_measure(x, 0, d, batches, nb, &po, pts, err, sizeof(err));
	r.wall_s = (double)(sym_monotonic_ns() - t0) / 1e9;
	if (e) {
		fprintf(stderr, "%s: %s%s\n", WHO, err, e == -EINTR ? "; nothing written" : "");
		rc = 1;
		goto out;
	}
	if (sym_profiler_fit(pts, nb, &r.fit) || make_profiles(&r)) {
		fprintf(stderr, "%s: out of memory\n", WHO);
		rc = 1;
		goto out;
	}
	rec = record_json(&r);
	docs[0] = zoo_json(&r, rec, &r.linear);
	docs[1] = zoo_json(&r, rec, &r.table);
	docs[2] = cJSON_Duplicate(rec, true);
	cJSON_AddItemToObject(docs[2], "profile", sym_model_spec_to_json(&r.linear));
	cJSON_AddItemToObject(docs[2], "table_profile", sym_model_spec_to_json(&r.table));
	for (int i = 0; i < nf && !rc; i++)
		rc = put_json(&files[i], docs[i]) ? 1 : 0;
	for (int i = 0; i < nf && !rc; i++) {
		if (sym_outfile_commit(&files[i], err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", WHO, err);
			for (int k = 0; k < i; k++) /* all or nothing (what went to stdout or a device stays) */
				if (files[k].kind == SYM_OUT_ATOMIC)
					unlink(files[k].target);
			rc = 1;
		}
	}
	if (rc)
		goto out; /* the temporary files not committed are removed there */
	bool json_stdout = o->json && !strcmp(o->json, "-");
	if (json_stdout && sym_write_json("-", docs[2], err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", WHO, err);
		rc = 1;
	}
	if (!o->quiet)
		print_table(json_stdout || sym_output_is_stdout(o->out) || sym_output_is_stdout(o->table_out) ? stderr : stdout,
			    &r);
	warn_fit(&r);
	if (o->write && write_repository(&r, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", WHO, err);
		rc = 1;
	}
out:
	abort_all(files, nf);
	for (int i = 0; i < 3; i++)
		cJSON_Delete(docs[i]);
	cJSON_Delete(rec);
	sym_model_spec_finish(&r.table);
	free(pts);
	x->ops->destroy(x);
	return rc;
}

int sym_profiler_run(struct sym_cluster *c, struct sym_profiler_cmd *op)
{
	struct sym_profiler_cmd o = *op;
	char err[1024], spec[32];
	int *batches = NULL, rc;
	rc = 2;
	c->net_set = true; /* no network here: a model's max_batch comes from its SLO alone */
	c->exp.repo_unprofiled_ok = true; /* a repository's model without a profile yet: what this measures */
	c->input_max = SYM_WIRE_MAX_PAYLOAD; /* no frontend pool here: any input a message carries */
	c->repository_slots = 0;             /* (the spare slots are the running cluster's) */
	if (o.write && !c->exp.model_repository[0]) {
		fprintf(stderr, "%s: --write writes the profile into a model repository's config.json: give "
				"--model-repository DIR (or model_repository in the file)\n", WHO);
		goto out;
	}
	if (sym_cluster_resolve(c, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", WHO, err);
		goto out;
	}
	int m = find_model(&o, c);
	if (m < 0)
		goto out;
	if (o.write) { /* the model must be one of the repository's */
		char path[1200];
		snprintf(path, sizeof(path), "%s/%s/config.json", c->exp.model_repository, c->models[m].name);
		if (access(path, F_OK)) {
			fprintf(stderr, "%s: --write: model '%s' is not one of repository %s's (no %s)\n", WHO,
				c->models[m].name, c->exp.model_repository, path);
			goto out;
		}
	}
	const struct sym_profile *p = c->models[m].profile;
	if (!o.batches) {
		snprintf(spec, sizeof(spec), "1..%d", p->max_batch < DEFAULT_MAX_SIZE ? p->max_batch : DEFAULT_MAX_SIZE);
		o.batches = spec;
	}
	batches = malloc(SYM_PROFILE_BATCH_LIMIT * sizeof(int));
	int nb = batches ? sym_profiler_parse_batches(o.batches, SYM_PROFILE_BATCH_LIMIT, batches, err, sizeof(err))
			 : -ENOMEM;
	if (nb < 0) {
		fprintf(stderr, "%s: %s\n", WHO, batches ? err : "out of memory");
		goto out;
	}
	if (check_batches(&o, c, (size_t)m, batches, nb))
		goto out;
	default_paths(&o, c->models[m].name);
	const char *const out_names[] = { "--out", "--table-out", "--json" };
	const char *const outs[] = { o.out, o.table_out, o.json };
	if (sym_outputs_check(out_names, outs, 3, err, sizeof(err))) {
		fprintf(stderr, "%s: %s (--out, --table-out and --json must name different files)\n", WHO, err);
		goto out;
	}
	rc = run(&o, c, (size_t)m, batches, nb);
out:
	free(batches);
	return rc < 0 ? 0 : rc;
}
