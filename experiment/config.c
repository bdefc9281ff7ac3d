#include "experiment/config.h"
#include "experiment/repository.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/memory.h"
#include "core/suggest.h"

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

/* ---- value checks shared by files and flags ---- */

static const char *got(const cJSON *v, char *buf, size_t len)
{
	if (cJSON_IsNumber(v))
		snprintf(buf, len, "%g", v->valuedouble);
	else if (cJSON_IsString(v))
		snprintf(buf, len, "'%.60s'", v->valuestring);
	else
		snprintf(buf, len, "%s", sym_json_type(v));
	return buf;
}

static int get_num(const cJSON *v, const char *where, double lo, bool lo_strict, double hi, double *out,
		   char *err, size_t errlen)
{
	char g[96];
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
	    (lo_strict ? v->valuedouble <= lo : v->valuedouble < lo) || v->valuedouble > hi) {
		if (isinf(hi))
			return ERR("%s: expected a number %s %g, got %s", where, lo_strict ? ">" : ">=", lo,
				   got(v, g, sizeof(g)));
		if (lo_strict)
			return ERR("%s: expected a number > %g and <= %g, got %s", where, lo, hi, got(v, g, sizeof(g)));
		return ERR("%s: expected a number from %g to %g, got %s", where, lo, hi, got(v, g, sizeof(g)));
	}
	*out = v->valuedouble;
	return 0;
}

static int get_int(const cJSON *v, const char *where, double lo, double hi, double *out, char *err,
		   size_t errlen)
{
	char g[96];
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo ||
	    v->valuedouble > hi)
		return ERR("%s: expected an integer from %.0f to %.0f, got %s", where, lo, hi, got(v, g, sizeof(g)));
	*out = v->valuedouble;
	return 0;
}

static int get_str(const cJSON *v, const char *where, const char *what, const char **out, char *err,
		   size_t errlen)
{
	char g[96];
	if (!cJSON_IsString(v) || !v->valuestring[0])
		return ERR("%s: expected %s, got %s", where, what, got(v, g, sizeof(g)));
	*out = v->valuestring;
	return 0;
}

/* ---- setters: one per key ---- */

typedef int (*setter)(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen);

static int set_zoo(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	const char *s;
	if (get_str(v, where, "a100, gtx1080ti or a profile file path", &s, err, errlen))
		return -EINVAL;
	if (strlen(s) >= sizeof(e->zoo))
		return ERR("%s: path too long", where);
	snprintf(e->zoo, sizeof(e->zoo), "%s", s);
	return 0;
}

static bool zoo_object(const cJSON *it);

static int set_models(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	char g[96];
	if (cJSON_IsString(v) && !strcmp(v->valuestring, "all")) {
		/* fine */
	} else if (cJSON_IsArray(v) && cJSON_GetArraySize(v) > 0) {
		int i = 0;
		for (const cJSON *it = v->child; it; it = it->next, i++) {
			if (cJSON_IsString(it) && it->valuestring[0])
				continue;
			if (zoo_object(it))
				continue; /* a zoo model with keys of its own: read at resolve, with the zoo */
			if (cJSON_IsObject(it)) {
				struct sym_model_spec tmp;
				char w[600];
				snprintf(w, sizeof(w), "%s[%d]", where, i);
				int rc = sym_model_spec_from_json(it, w, &tmp, err, errlen);
				sym_model_spec_finish(&tmp);
				if (rc)
					return rc;
				continue;
			}
			return ERR("%s[%d]: expected a model name or a model object, got %s", where, i,
				   got(it, g, sizeof(g)));
		}
	} else {
		return ERR("%s: expected \"all\" or a non-empty array of model names and model objects, got %s",
			   where, got(v, g, sizeof(g)));
	}
	cJSON *dup = cJSON_Duplicate(v, true);
	if (!dup)
		return -ENOMEM;
	cJSON_Delete(e->models_json);
	e->models_json = dup;
	e->models_given = true;
	return 0;
}

static int set_model_repository(struct sym_experiment *e, const cJSON *v, const char *where, char *err,
				size_t errlen)
{
	if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= sizeof(e->model_repository))
		return ERR("%s: expected a directory path of 1 to %zu characters", where, sizeof(e->model_repository) - 1);
	snprintf(e->model_repository, sizeof(e->model_repository), "%s", v->valuestring);
	return 0;
}

/* The longest SLO (ms): latencies are measured to 2^42 ns (73 min; core/hist.h), and a request's whole
 * life must fit well inside. */
#define SLO_MAX_MS 1e6

static int set_slo(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return get_num(v, where, 0, true, SLO_MAX_MS, &e->slo_ms, err, errlen);
}

static int set_slo_mode(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	const char *s;
	if (get_str(v, where, "all or at-least", &s, err, errlen))
		return -EINVAL;
	if (!strcmp(s, "all"))
		e->slo_at_least = false;
	else if (!strcmp(s, "at-least"))
		e->slo_at_least = true;
	else
		return ERR("%s: expected all (slo_ms is every model's SLO) or at-least (each model's SLO is the larger of "
			   "slo_ms and its own), got '%s'", where, s);
	return 0;
}

static int set_gpus(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	double d = 0;
	if (get_int(v, where, 1, 1000000, &d, err, errlen))
		return -EINVAL;
	if (e->ngroups > 1)
		return ERR("%s: the cluster has %zu device groups; set their counts in \"cluster\" instead", where,
			   e->ngroups);
	if (e->ngroups == 1)
		e->groups[0].count = (int)d;
	e->gpus = (int)d;
	e->gpus_per_model = 0; /* the last setting wins */
	return 0;
}

static int set_num_models(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	double d = 0;
	if (get_int(v, where, 0, 100000, &d, err, errlen))
		return -EINVAL;
	e->num_models = (int)d;
	return 0;
}

static int set_gpus_per_model(struct sym_experiment *e, const cJSON *v, const char *where, char *err,
			      size_t errlen)
{
	if (get_num(v, where, 0, false, 10000, &e->gpus_per_model, err, errlen))
		return -EINVAL;
	if (e->gpus_per_model > 0 && e->ngroups > 1)
		return ERR("%s: the cluster has %zu device groups; gpus_per_model needs a single kind", where,
			   e->ngroups);
	return 0;
}

static bool builtin_kind(const char *name, double *memory_mb)
{
	/* Device memory of the built-in GPU kinds (A100 40 GB, GTX 1080 Ti 11 GB). */
	if (!strcmp(name, "a100"))
		return *memory_mb = 40960, true;
	if (!strcmp(name, "gtx1080ti"))
		return *memory_mb = 11264, true;
	return false;
}

static int set_cluster(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	char g[96];
	if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 0) {
		free(e->groups);
		e->groups = NULL;
		e->ngroups = 0;
		return 0;
	}
	const char *shape = "an array of {\"kind\": NAME, \"count\": N} objects (optional keys: zoo, scale, "
			    "memory_mb, cpu)";
	if (!cJSON_IsArray(v))
		return ERR("%s: expected %s, got %s", where, shape, got(v, g, sizeof(g)));
	size_t n = (size_t)cJSON_GetArraySize(v);
	if (n > SYM_MAX_DEVICE_KINDS)
		return ERR("%s: at most %d device kinds, got %zu", where, SYM_MAX_DEVICE_KINDS, n);
	struct sym_gpu_group *gr = calloc(n, sizeof(*gr));
	if (!gr)
		return -ENOMEM;
	size_t i = 0;
	double total = 0;
	int rc = 0;
	for (const cJSON *it = v->child; it && !rc; it = it->next, i++) {
		char w[600];
		snprintf(w, sizeof(w), "%s[%zu]", where, i);
		if (!cJSON_IsObject(it)) {
			rc = ERR("%s: expected {\"kind\": NAME, \"count\": N}, got %s", w, got(it, g, sizeof(g)));
			break;
		}
		gr[i].cpu = -1;
		bool has_kind = false, has_count = false;
		for (const cJSON *f = it->child; f && !rc; f = f->next) {
			char wf[700];
			snprintf(wf, sizeof(wf), "%s.%s", w, f->string);
			const char *str;
			double d = 0;
			if (!strcmp(f->string, "kind")) {
				if (!(rc = get_str(f, wf, "a device kind name", &str, err, errlen))) {
					if (strlen(str) >= sizeof(gr[i].kind))
						rc = ERR("%s: name too long (at most %zu characters)", wf, sizeof(gr[i].kind) - 1);
					snprintf(gr[i].kind, sizeof(gr[i].kind), "%s", str);
					has_kind = true;
				}
			} else if (!strcmp(f->string, "count")) {
				if (!(rc = get_int(f, wf, 1, 1000000, &d, err, errlen))) {
					gr[i].count = (int)d;
					has_count = true;
				}
			} else if (!strcmp(f->string, "zoo")) {
				if (!(rc = get_str(f, wf, "a100, gtx1080ti or a profile file path", &str, err, errlen))) {
					if (strlen(str) >= sizeof(gr[i].zoo))
						rc = ERR("%s: path too long", wf);
					snprintf(gr[i].zoo, sizeof(gr[i].zoo), "%s", str);
				}
			} else if (!strcmp(f->string, "scale")) {
				rc = get_num(f, wf, 0, true, 1e6, &gr[i].scale, err, errlen);
			} else if (!strcmp(f->string, "memory_mb")) {
				rc = get_num(f, wf, 0, false, 1e9, &gr[i].memory_mb, err, errlen);
			} else if (!strcmp(f->string, "cpu")) {
				if (!cJSON_IsBool(f))
					rc = ERR("%s: expected true or false, got %s", wf, got(f, g, sizeof(g)));
				else
					gr[i].cpu = cJSON_IsTrue(f);
			} else {
				rc = ERR("%s: unknown key (expected kind, count, zoo, scale, memory_mb, cpu)", wf);
			}
		}
		if (!rc && (!has_kind || !has_count))
			rc = ERR("%s: needs both \"kind\" and \"count\"", w);
		if (!rc && gr[i].zoo[0] && gr[i].scale > 0)
			rc = ERR("%s: give either \"zoo\" or \"scale\", not both", w);
		for (size_t j = 0; !rc && j < i; j++)
			if (!strcmp(gr[j].kind, gr[i].kind))
				rc = ERR("%s: kind '%s' is listed twice", w, gr[i].kind);
		total += gr[i].count;
	}
	if (!rc && total > 1000000)
		rc = ERR("%s: %g devices in all; at most 1000000", where, total);
	if (rc) {
		free(gr);
		return rc;
	}
	free(e->groups);
	e->groups = gr;
	e->ngroups = n;
	e->gpus = (int)total;
	e->gpus_per_model = 0; /* the last setting wins */
	return 0;
}

static int set_rate_scale(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return get_num(v, where, 0, true, 1e12, &e->rate_scale, err, errlen);
}

static int set_rate(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	int rc = get_num(v, where, 0, true, SYM_RATE_MAX, &e->rate, err, errlen);
	e->rate_given |= rc == 0;
	return rc;
}

static int set_arrival(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	const char *s;
	const char *what = "poisson, uniform or gamma:K (0.001 <= K <= 1e6)";
	if (get_str(v, where, what, &s, err, errlen))
		return -EINVAL;
	if (!sym_arrival_parse(s, &e->arrival))
		return 0;
	char *end = NULL;
	double k = !strncmp(s, "gamma:", 6) ? strtod(s + 6, &end) : NAN;
	bool number = !isnan(k) && end != s + 6 && !*end;
	if (number && k > 0 && k < SYM_GAMMA_SHAPE_MIN)
		return ERR("%s: expected %s, got '%s': gamma gaps of shape K come in bursts of about 1/K requests at one "
			   "instant, so below %g a run holds too few bursts for its offered load to mean anything (its "
			   "request count is mostly chance), and the sampler returns gaps of exactly 0 (gamma:1e-300 puts a "
			   "whole run in one instant)", where, what, s, SYM_GAMMA_SHAPE_MIN);
	if (number && k > SYM_GAMMA_SHAPE_MAX)
		return ERR("%s: expected %s, got '%s': above %g the gaps differ from uniform by less than 0.1%%; use "
			   "uniform", where, what, s, SYM_GAMMA_SHAPE_MAX);
	return ERR("%s: expected %s, got '%s'", where, what, s);
}

static int set_popularity(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	const char *s;
	const char *what = "equal or zipf:S (0 <= S <= 100)";
	if (get_str(v, where, what, &s, err, errlen))
		return -EINVAL;
	if (sym_popularity_parse(s, &e->popularity))
		return ERR("%s: expected %s, got '%s'", where, what, s);
	return 0;
}

#define SEGMENTS_MAX 1000000
/* The shortest and longest run (s): below a millisecond no batch completes; above, about 4 months. */
#define DURATION_MIN_S 0.001
#define DURATION_MAX_S 1e7

static int set_segments(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	char g[96];
	if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 0) {
		free(e->segments);
		e->segments = NULL;
		e->nseg = 0;
		return 0;
	}
	if (!cJSON_IsArray(v))
		return ERR("%s: expected an array of {\"duration_s\": S, \"rate\": R} objects, got %s", where,
			   got(v, g, sizeof(g)));
	size_t n = (size_t)cJSON_GetArraySize(v);
	if (n > SEGMENTS_MAX)
		return ERR("%s: expected at most %d segments, got %zu (each model keeps a copy; use rate_csv for a long "
			   "trace)", where, SEGMENTS_MAX, n);
	struct sym_rate_segment *seg = calloc(n, sizeof(*seg));
	if (!seg)
		return -ENOMEM;
	size_t i = 0;
	double total = 0;
	for (const cJSON *it = v->child; it; it = it->next, i++) {
		char w[600];
		snprintf(w, sizeof(w), "%s[%zu]", where, i);
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(it, "duration_s");
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(it, "rate");
		double dd = 0, rr = 0;
		if (!cJSON_IsObject(it) || cJSON_GetArraySize(it) != 2 || !d || !r) {
			free(seg);
			return ERR("%s: expected {\"duration_s\": S, \"rate\": R}, got %s", w, got(it, g, sizeof(g)));
		}
		char wd[640], wr[640];
		snprintf(wd, sizeof(wd), "%s.duration_s", w);
		snprintf(wr, sizeof(wr), "%s.rate", w);
		if (get_num(d, wd, 0, true, DURATION_MAX_S, &dd, err, errlen) ||
		    get_num(r, wr, 0, false, SYM_RATE_MAX, &rr, err, errlen)) {
			free(seg);
			return -EINVAL;
		}
		seg[i].duration = sym_s(dd);
		seg[i].rate = rr;
		total += dd;
	}
	if (total > DURATION_MAX_S) {
		free(seg);
		return ERR("%s: the segments last %g s in all; at most %g", where, total, DURATION_MAX_S);
	}
	free(e->segments);
	e->segments = seg;
	e->nseg = n;
	return 0;
}

/* A file path into buf[512] ("" unsets it). */
static int set_path(char *buf, const cJSON *v, const char *where, char *err, size_t errlen)
{
	if (cJSON_IsString(v) && !v->valuestring[0]) {
		buf[0] = '\0';
		return 0;
	}
	const char *s;
	if (get_str(v, where, "a CSV file path", &s, err, errlen))
		return -EINVAL;
	if (strlen(s) >= 512)
		return ERR("%s: path too long", where);
	snprintf(buf, 512, "%s", s);
	return 0;
}

static int set_rate_csv(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return set_path(e->rate_csv, v, where, err, errlen);
}

static int set_arrival_trace(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return set_path(e->arrival_trace, v, where, err, errlen);
}

static int set_policy(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	const char *s;
	if (get_str(v, where, "a policy such as symphony, eager or timeout:30%", &s, err, errlen))
		return -EINVAL;
	char msg[400];
	if (sym_policy_parse(s, &e->policy, msg, sizeof(msg)))
		return ERR("%s: %s", where, msg);
	return 0;
}

static int set_drop(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	const char *s;
	const char *what = "lazy, early (= early:auto), early:auto:K (K >= 0 sigmas of margin) or early:N (N >= 1)";
	if (get_str(v, where, what, &s, err, errlen))
		return -EINVAL;
	if (sym_gather_parse(s, &e->gather))
		return ERR("%s: expected %s, got '%s'", where, what, s);
	return 0;
}

static int set_ctrl(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return get_num(v, where, 0, false, 1e6, &e->ctrl_ms, err, errlen);
}

static int set_data(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return get_num(v, where, 0, false, 1e6, &e->data_ms, err, errlen);
}

static int set_resp(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return get_num(v, where, 0, false, 1e6, &e->resp_ms, err, errlen);
}

static int set_done(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return get_num(v, where, 0, false, 1e6, &e->done_ms, err, errlen);
}

static int set_tail(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return get_num(v, where, 0, false, 1e6, &e->tail_ms, err, errlen);
}

static int set_network(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	char g[96];
	if (!cJSON_IsObject(v))
		return ERR("%s: expected an object with ctrl_ms, data_ms, resp_ms, done_ms, tail_ms, got %s", where,
			   got(v, g, sizeof(g)));
	for (const cJSON *it = v->child; it; it = it->next) {
		char w[600];
		snprintf(w, sizeof(w), "%s.%s", where, it->string);
		int rc;
		if (!strcmp(it->string, "ctrl_ms"))
			rc = set_ctrl(e, it, w, err, errlen);
		else if (!strcmp(it->string, "data_ms"))
			rc = set_data(e, it, w, err, errlen);
		else if (!strcmp(it->string, "resp_ms"))
			rc = set_resp(e, it, w, err, errlen);
		else if (!strcmp(it->string, "done_ms"))
			rc = set_done(e, it, w, err, errlen);
		else if (!strcmp(it->string, "tail_ms"))
			rc = set_tail(e, it, w, err, errlen);
		else
			return ERR("%s: unknown key (expected ctrl_ms, data_ms, resp_ms, done_ms, tail_ms)", w);
		if (rc)
			return rc;
	}
	return 0;
}

static int set_send_ahead(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	char g[96];
	if (cJSON_IsBool(v)) {
		e->send_ahead = cJSON_IsTrue(v);
		return 0;
	}
	if (cJSON_IsNumber(v) && (v->valuedouble == 0 || v->valuedouble == 1)) {
		e->send_ahead = v->valuedouble == 1;
		return 0;
	}
	if (cJSON_IsString(v) && (!strcmp(v->valuestring, "true") || !strcmp(v->valuestring, "false"))) {
		e->send_ahead = !strcmp(v->valuestring, "true");
		return 0;
	}
	return ERR("%s: expected true or false (or 1 or 0), got %s", where, got(v, g, sizeof(g)));
}

static int set_memory_check(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	char g[96];
	if (cJSON_IsBool(v) || (cJSON_IsString(v) && (!strcmp(v->valuestring, "true") || !strcmp(v->valuestring, "false")))) {
		e->memory_check = cJSON_IsTrue(v) || (cJSON_IsString(v) && !strcmp(v->valuestring, "true"));
		return 0;
	}
	return ERR("%s: expected true or false, got %s", where, got(v, g, sizeof(g)));
}

#define PARTITION_KEYS \
	"subclusters, r_max, s_max, w, time_limit_s, epoch_s, phase_s, c_max, noise_sigmas, load_mbps, load_ms, assign"

/* "partition": a number (the sub-cluster count) or an object of PARTITION_KEYS. */
static int set_partition(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	char g[96];
	struct sym_partition_cfg *p = &e->partition;
	double d = 0;
	int rc;
	if (cJSON_IsNumber(v)) {
		if ((rc = get_int(v, where, 0, 4096, &d, err, errlen)))
			return rc;
		p->subclusters = (int)d;
		return 0;
	}
	if (cJSON_IsString(v) && v->valuestring[0] == '{') { /* --partition '{"subclusters": 4, ...}' */
		cJSON *o = cJSON_Parse(v->valuestring);
		if (!o)
			return ERR("%s: malformed JSON object '%s'", where, v->valuestring);
		rc = cJSON_IsObject(o) ? set_partition(e, o, where, err, errlen) : -EINVAL;
		cJSON_Delete(o);
		if (rc == -EINVAL && !err[0])
			return ERR("%s: expected an object", where);
		return rc;
	}
	if (!cJSON_IsObject(v))
		return ERR("%s: expected a sub-cluster count or an object with " PARTITION_KEYS ", got %s", where,
			   got(v, g, sizeof(g)));
	for (const cJSON *it = v->child; it; it = it->next) {
		char w[600];
		snprintf(w, sizeof(w), "%s.%s", where, it->string);
		if (!strcmp(it->string, "subclusters")) {
			rc = get_int(it, w, 0, 4096, &d, err, errlen);
			p->subclusters = (int)d;
		} else if (!strcmp(it->string, "r_max")) {
			rc = get_num(it, w, 0, false, 1e12, &p->r_max, err, errlen);
		} else if (!strcmp(it->string, "s_max")) {
			rc = get_num(it, w, 0, false, 1e12, &p->s_max, err, errlen);
		} else if (!strcmp(it->string, "w")) {
			rc = get_num(it, w, 0, false, 1e12, &p->w, err, errlen);
		} else if (!strcmp(it->string, "time_limit_s")) {
			rc = get_num(it, w, 0, true, 86400, &p->time_limit_s, err, errlen);
		} else if (!strcmp(it->string, "epoch_s")) {
			rc = get_num(it, w, 0, false, 1e7, &p->epoch_s, err, errlen);
			if (!rc && p->epoch_s > 0 && p->epoch_s < 0.01)
				return ERR("%s: expected 0 (no epochs) or at least 0.01 s, got %g", w, p->epoch_s);
		} else if (!strcmp(it->string, "phase_s")) {
			rc = get_num(it, w, 0, false, 1e7, &p->phase_s, err, errlen);
		} else if (!strcmp(it->string, "c_max")) {
			rc = get_num(it, w, -1, false, 1e12, &p->c_max, err, errlen);
		} else if (!strcmp(it->string, "noise_sigmas")) {
			rc = get_num(it, w, 0, false, 100, &p->noise_sigmas, err, errlen);
		} else if (!strcmp(it->string, "load_mbps")) {
			rc = get_num(it, w, 0, true, 1e9, &p->load_mbps, err, errlen);
		} else if (!strcmp(it->string, "load_ms")) {
			rc = get_num(it, w, 0, false, 1e6, &p->load_ms, err, errlen);
		} else if (!strcmp(it->string, "assign")) {
			int n = cJSON_GetArraySize(it);
			if (!cJSON_IsArray(it) || n < 1 || n > 10000000)
				return ERR("%s: expected an array with one sub-cluster (0, 1, ...) per model, got %s", w,
					   got(it, g, sizeof(g)));
			int *a = malloc((size_t)n * sizeof(int));
			if (!a)
				return -ENOMEM;
			int i = 0;
			rc = 0;
			for (const cJSON *x = it->child; x && !rc; x = x->next, i++) {
				char wx[640];
				snprintf(wx, sizeof(wx), "%s[%d]", w, i);
				rc = get_int(x, wx, 0, 4095, &d, err, errlen);
				a[i] = (int)d;
			}
			if (rc) {
				free(a);
				return rc;
			}
			free(p->assign);
			p->assign = a;
			p->nassign = (size_t)n;
		} else {
			return ERR("%s: unknown key (expected " PARTITION_KEYS ")", w);
		}
		if (rc)
			return rc;
	}
	return 0;
}

#define AUTOSCALE_KEYS \
	"interval_s, threshold, provision_s, min_gpus, max_gpus, start_gpus, cooldown_s, policy (papers|target), target, " \
	"release_fraction, phase_s"

/* "autoscale": true (the defaults), false, or an object of AUTOSCALE_KEYS. */
static int set_autoscale(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	char g[96];
	struct sym_autoscale_cfg *a = &e->autoscale;
	double d = 0;
	int rc = 0;
	if (cJSON_IsBool(v) || (cJSON_IsString(v) && (!strcmp(v->valuestring, "true") || !strcmp(v->valuestring, "false")))) {
		a->on = cJSON_IsTrue(v) || (cJSON_IsString(v) && !strcmp(v->valuestring, "true"));
		return 0;
	}
	if (cJSON_IsString(v) && v->valuestring[0] == '{') { /* --autoscale '{"interval_s": 30, ...}' */
		cJSON *o = cJSON_Parse(v->valuestring);
		if (!o)
			return ERR("%s: malformed JSON object '%s'", where, v->valuestring);
		rc = cJSON_IsObject(o) ? set_autoscale(e, o, where, err, errlen) : -EINVAL;
		cJSON_Delete(o);
		if (rc == -EINVAL && !err[0])
			return ERR("%s: expected an object", where);
		return rc;
	}
	if (!cJSON_IsObject(v))
		return ERR("%s: expected true, false or an object with " AUTOSCALE_KEYS ", got %s", where,
			   got(v, g, sizeof(g)));
	a->on = true;
	for (const cJSON *it = v->child; it && !rc; it = it->next) {
		char w[600];
		snprintf(w, sizeof(w), "%s.%s", where, it->string);
		if (!strcmp(it->string, "interval_s")) {
			rc = get_num(it, w, 0.001, false, 1e6, &a->interval_s, err, errlen);
		} else if (!strcmp(it->string, "threshold")) {
			rc = get_num(it, w, 0, false, 0.99, &a->threshold, err, errlen);
		} else if (!strcmp(it->string, "provision_s")) {
			rc = get_num(it, w, 0, false, 1e6, &a->provision_s, err, errlen);
		} else if (!strcmp(it->string, "cooldown_s")) {
			rc = get_num(it, w, 0, false, 1e7, &a->cooldown_s, err, errlen);
		} else if (!strcmp(it->string, "target")) {
			rc = get_num(it, w, 0.01, false, 1, &a->target, err, errlen);
		} else if (!strcmp(it->string, "release_fraction")) {
			rc = get_num(it, w, 0, false, 1, &a->release_fraction, err, errlen);
		} else if (!strcmp(it->string, "phase_s")) {
			rc = get_num(it, w, 0, false, 1e6, &a->phase_s, err, errlen);
		} else if (!strcmp(it->string, "min_gpus") || !strcmp(it->string, "max_gpus") ||
			   !strcmp(it->string, "start_gpus")) {
			rc = get_int(it, w, 1, 1000000, &d, err, errlen);
			*(it->string[1] == 'i' ? &a->min_gpus : it->string[1] == 'a' ? &a->max_gpus : &a->start_gpus) = (int)d;
		} else if (!strcmp(it->string, "policy")) {
			if (!cJSON_IsString(it) || sym_scale_rule_parse(it->valuestring, &a->policy))
				return ERR("%s: expected papers or target, got %s", w, got(it, g, sizeof(g)));
		} else {
			return ERR("%s: unknown key (expected " AUTOSCALE_KEYS ")", w);
		}
	}
	return rc;
}

static int set_jitter(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return get_num(v, where, 0, false, 0.99, &e->jitter, err, errlen);
}

/* [P50_MS, P99_MS]: both 0 (batches begin on time), or 0 < P50 <= P99 */
static int set_start_late(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	char g[96], w[160];
	double a = 0, b = 0;
	int rc;
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2)
		return ERR("%s: expected [P50_MS, P99_MS] (the median and 99th percentile of a batch's start "
			   "lateness), got %s", where, got(v, g, sizeof(g)));
	snprintf(w, sizeof(w), "%s[0]", where);
	if ((rc = get_num(cJSON_GetArrayItem(v, 0), w, 0, false, 1e4, &a, err, errlen)))
		return rc;
	snprintf(w, sizeof(w), "%s[1]", where);
	if ((rc = get_num(cJSON_GetArrayItem(v, 1), w, 0, false, 1e4, &b, err, errlen)))
		return rc;
	if (b < a || (a == 0) != (b == 0))
		return ERR("%s: expected 0 < P50 <= P99 (or both 0: batches begin on time), got %g and %g", where, a, b);
	e->late_p50_ms = a;
	e->late_p99_ms = b;
	return 0;
}

static int set_size_cv(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return get_num(v, where, 0, false, SYM_SIZE_CV_MAX, &e->size_cv, err, errlen);
}

static int set_duration(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return get_num(v, where, DURATION_MIN_S, false, DURATION_MAX_S, &e->duration_s, err, errlen);
}

static int set_warmup(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return get_num(v, where, 0, false, DURATION_MAX_S, &e->warmup_s, err, errlen);
}

static int set_seed(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	double d = 0;
	if (get_int(v, where, 0, 9007199254740991.0, &d, err, errlen))
		return -EINVAL;
	e->seed = (uint64_t)d;
	return 0;
}

static int set_interval(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return get_num(v, where, 0.001, false, 86400, &e->interval_s, err, errlen);
}

static int set_advice_threshold(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return get_num(v, where, 0, false, 0.99, &e->advice_threshold, err, errlen);
}

/* max_bad_rate: a model needs 1/max_bad_rate measured requests for the rate to mean anything (a
 * million at the bound). tolerance: the goodput search halves its bracket until within it (20 steps at
 * the bound; finer is below any run's noise). */
static int set_max_bad(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return get_num(v, where, 1e-6, false, 0.5, &e->max_bad_rate, err, errlen);
}

static int set_tolerance(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	return get_num(v, where, 1e-6, false, 0.5, &e->tolerance, err, errlen);
}

static int set_criterion(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	const char *s;
	const char *what = "per-model (every model's bad rate within max_bad_rate) or aggregate (all requests "
			   "together)";
	if (get_str(v, where, what, &s, err, errlen))
		return -EINVAL;
	if (!strcmp(s, "per-model"))
		e->criterion = SYM_CRITERION_PER_MODEL;
	else if (!strcmp(s, "aggregate"))
		e->criterion = SYM_CRITERION_AGGREGATE;
	else
		return ERR("%s: expected %s, got '%s'", where, what, s);
	return 0;
}

static int set_replications(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	double d = 0;
	if (get_int(v, where, 1, 1000, &d, err, errlen))
		return -EINVAL;
	e->replications = (int)d;
	return 0;
}

const char *sym_criterion_name(enum sym_criterion c)
{
	return c == SYM_CRITERION_AGGREGATE ? "aggregate" : "per-model";
}

/* ---- complex queries ---- */

double sym_query_gamma_at(const struct sym_query *q, int v, double t_s)
{
	double g = q->gamma[v];
	for (int i = 0; i < q->ngsteps[v] && q->gsteps[q->gfirst[v] + i].t_s <= t_s; i++)
		g = q->gsteps[q->gfirst[v] + i].gamma;
	return g;
}

const char *sym_split_name(enum sym_split s)
{
	return s == SYM_SPLIT_EVEN ? "even" : s == SYM_SPLIT_NEXUS ? "nexus" : "none";
}

const char *sym_rate_unit(const struct sym_experiment *e)
{
	return e->nqueries ? "queries/s" : "req/s";
}

const char *sym_unit_name(const struct sym_experiment *e, int i)
{
	if (i < 0)
		return "-";
	return e->nqueries ? e->queries[i].name : e->models[i].name;
}

static int parse_split(const char *s, enum sym_split *out)
{
	if (!strcmp(s, "none"))
		*out = SYM_SPLIT_NONE;
	else if (!strcmp(s, "even"))
		*out = SYM_SPLIT_EVEN;
	else if (!strcmp(s, "nexus"))
		*out = SYM_SPLIT_NEXUS;
	else
		return -EINVAL;
	return 0;
}

#define QUERY_KEYS "name, slo_ms, share, split (none|even|nexus), budget (batch|session), eps_ms, replan_s, stages"
#define STAGE_KEYS "model, parent, gamma, gamma_after"

/* Checks one query object's form (the models are checked at resolve). */
static int check_query(const cJSON *q, const char *where, char *err, size_t errlen)
{
	if (!cJSON_IsObject(q))
		return ERR("%s: expected an object with " QUERY_KEYS ", got %s", where, sym_json_type(q));
	for (const cJSON *it = q->child; it; it = it->next) {
		static const char *known[] = { "name", "slo_ms", "share", "split", "budget", "eps_ms", "replan_s", "stages" };
		bool ok = false;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			ok |= !strcmp(it->string, known[i]);
		if (!ok)
			return ERR("%s: unknown key '%s' (expected " QUERY_KEYS ")", where, it->string);
	}
	char w[800];
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(q, "name");
	if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= 64)
		return ERR("%s: 'name' must be a string of 1 to 63 characters", where);
	double d = 0;
	snprintf(w, sizeof(w), "%s: 'slo_ms'", where);
	if (get_num(cJSON_GetObjectItemCaseSensitive(q, "slo_ms"), w, 0, true, 1e7, &d, err, errlen))
		return -EINVAL;
	if ((v = cJSON_GetObjectItemCaseSensitive(q, "share"))) {
		snprintf(w, sizeof(w), "%s: 'share'", where);
		if (get_num(v, w, 0, true, 1e9, &d, err, errlen))
			return -EINVAL;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(q, "eps_ms"))) {
		snprintf(w, sizeof(w), "%s: 'eps_ms'", where);
		if (get_num(v, w, 0, true, 1e7, &d, err, errlen))
			return -EINVAL;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(q, "replan_s"))) {
		snprintf(w, sizeof(w), "%s: 'replan_s'", where);
		if (get_num(v, w, 0, false, 1e7, &d, err, errlen))
			return -EINVAL;
		const cJSON *sp = cJSON_GetObjectItemCaseSensitive(q, "split");
		if (d > 0 && !(cJSON_IsString(sp) && !strcmp(sp->valuestring, "nexus")))
			return ERR("%s: 'replan_s' re-plans Nexus's split: it needs \"split\": \"nexus\"", where);
	}
	enum sym_split sp;
	if ((v = cJSON_GetObjectItemCaseSensitive(q, "split")) && (!cJSON_IsString(v) || parse_split(v->valuestring, &sp)))
		return ERR("%s: 'split' must be none, even or nexus", where);
	if ((v = cJSON_GetObjectItemCaseSensitive(q, "budget")) &&
	    (!cJSON_IsString(v) || (strcmp(v->valuestring, "batch") && strcmp(v->valuestring, "session"))))
		return ERR("%s: 'budget' must be batch (a stage's batch latency within its budget, as Nexus's Figure 4) "
			   "or session (twice it: a Nexus session's worst case)", where);
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(q, "stages");
	int n = cJSON_IsArray(st) ? cJSON_GetArraySize(st) : 0;
	if (n < 1 || n > SYM_QUERY_MAX_STAGES)
		return ERR("%s: 'stages' must be an array of 1 to %d stages (objects with " STAGE_KEYS ")", where,
			   SYM_QUERY_MAX_STAGES);
	int i = 0;
	for (const cJSON *x = st->child; x; x = x->next, i++) {
		char sw[500];
		snprintf(sw, sizeof(sw), "%.400s: stages[%d]", where, i);
		if (!cJSON_IsObject(x))
			return ERR("%s: expected an object with " STAGE_KEYS ", got %s", sw, sym_json_type(x));
		for (const cJSON *it = x->child; it; it = it->next)
			if (strcmp(it->string, "model") && strcmp(it->string, "parent") && strcmp(it->string, "gamma") &&
			    strcmp(it->string, "gamma_after"))
				return ERR("%s: unknown key '%s' (expected " STAGE_KEYS ")", sw, it->string);
		const cJSON *ga = cJSON_GetObjectItemCaseSensitive(x, "gamma_after");
		if (ga) {
			int ns = cJSON_IsArray(ga) ? cJSON_GetArraySize(ga) : 0;
			if (i == 0 || ns < 1 || ns > 1000)
				return ERR("%s: 'gamma_after' (not for the root) must be an array of 1 to 1000 steps "
					   "{\"t_s\": seconds, \"gamma\": fan-out}", sw);
			double prev = -1;
			int k = 0;
			for (const cJSON *st2 = ga->child; st2; st2 = st2->next, k++) {
				const cJSON *t = cJSON_GetObjectItemCaseSensitive(st2, "t_s"),
					    *g = cJSON_GetObjectItemCaseSensitive(st2, "gamma");
				if (!cJSON_IsObject(st2) || cJSON_GetArraySize(st2) != 2 || !cJSON_IsNumber(t) ||
				    !cJSON_IsNumber(g) || !(t->valuedouble >= 0) || t->valuedouble > 1e7 ||
				    t->valuedouble <= prev || !(g->valuedouble > 0) || g->valuedouble > 1000)
					return ERR("%s: gamma_after[%d] must be {\"t_s\": seconds (increasing, >= 0), "
						   "\"gamma\": 0 < fan-out <= 1000}", sw, k);
				prev = t->valuedouble;
			}
		}
		v = cJSON_GetObjectItemCaseSensitive(x, "model");
		if (!cJSON_IsString(v) || !v->valuestring[0])
			return ERR("%s: 'model' must name one of the experiment's models", sw);
		v = cJSON_GetObjectItemCaseSensitive(x, "parent");
		double par = i ? 0 : -1;
		if (v) {
			snprintf(w, sizeof(w), "%s: 'parent'", sw);
			if (get_int(v, w, -1, i - 1, &par, err, errlen))
				return -EINVAL;
		}
		if ((i == 0) != (par < 0))
			return ERR("%s: 'parent' must be -1 for stage 0 (the root) and an earlier stage (0..%d) for "
				   "the others", sw, i - 1);
		if ((v = cJSON_GetObjectItemCaseSensitive(x, "gamma"))) {
			snprintf(w, sizeof(w), "%s: 'gamma'", sw);
			if (get_num(v, w, 0, true, 1000, &d, err, errlen))
				return -EINVAL;
			if (i == 0 && d != 1)
				return ERR("%s: the root's 'gamma' is 1 (a query arrival is one root request)", sw);
		}
	}
	return 0;
}

/* "queries": an array of query objects, an object {"queries": [...]}, or
 * (a string) a JSON file holding either. */
static int set_queries(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	cJSON *file = NULL;
	if (cJSON_IsString(v)) {
		/* inline JSON text, else a file */
		const char *name = v->valuestring;
		char msg[600] = "";
		if (name[0] == '[' || name[0] == '{') {
			file = sym_json_parse(name, "the inline queries", msg, sizeof(msg));
		} else {
			char *text = NULL;
			int rc = sym_read_file(name, &text);
			if (rc)
				return ERR("%s: cannot read %s: %s", where, name,
					   rc == -ENOENT ? "no such file" : rc == -EISDIR ? "a directory" : sym_strerror(rc));
			file = sym_json_parse(text, name, msg, sizeof(msg));
			free(text);
		}
		if (!file)
			return ERR("%s: %s", where, msg);
		v = file;
	}
	if (cJSON_IsObject(v) && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(v, "queries")))
		v = cJSON_GetObjectItemCaseSensitive(v, "queries");
	int rc = 0;
	if (!cJSON_IsArray(v)) {
		rc = ERR("%s: expected an array of queries (objects with " QUERY_KEYS "), or a JSON file of one", where);
	} else {
		int i = 0;
		for (const cJSON *q = v->child; q && !rc; q = q->next, i++) {
			char w[500];
			snprintf(w, sizeof(w), "%s: queries[%d]", where, i);
			rc = check_query(q, w, err, errlen);
		}
	}
	if (!rc) {
		cJSON *dup = cJSON_GetArraySize(v) ? cJSON_Duplicate(v, true) : NULL;
		if (cJSON_GetArraySize(v) && !dup)
			rc = ERR("out of memory");
		else {
			cJSON_Delete(e->queries_json);
			e->queries_json = dup;
		}
	}
	cJSON_Delete(file);
	return rc;
}

/* ---- prefix models (nexus.md, Section 6.3, prefix batching) ---- */

#define PREFIX_KEYS "name, prefix {alpha_ms, beta_ms, static_mb, dynamic_mb}, suffix {alpha_ms, beta_ms, static_mb}, variants, slo_ms"

static int check_part(const cJSON *o, const char *where, bool suffix, char *err, size_t errlen)
{
	if (!cJSON_IsObject(o))
		return ERR("%s: expected an object with alpha_ms, beta_ms and static_mb", where);
	for (const cJSON *it = o->child; it; it = it->next)
		if (strcmp(it->string, "alpha_ms") && strcmp(it->string, "beta_ms") && strcmp(it->string, "static_mb") &&
		    (suffix || strcmp(it->string, "dynamic_mb")))
			return ERR("%s: unknown key '%s' (expected alpha_ms, beta_ms, static_mb%s)", where, it->string,
				   suffix ? "" : ", dynamic_mb");
	double d = 0;
	char w[600];
	static const char *keys[] = { "alpha_ms", "beta_ms", "static_mb", "dynamic_mb" };
	for (int k = 0; k < 4; k++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, keys[k]);
		if (!v && k < 2)
			return ERR("%s: '%s' is missing", where, keys[k]);
		snprintf(w, sizeof(w), "%s: '%s'", where, keys[k]);
		if (v && get_num(v, w, 0, false, k < 2 ? 1e6 : 1e7, &d, err, errlen))
			return -EINVAL;
	}
	return 0;
}

static int check_prefix_models(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen);

static int set_prefix_models(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	if (!cJSON_IsString(v))
		return check_prefix_models(e, v, where, err, errlen);
	/* the command line's JSON text */
	char msg[400] = "";
	cJSON *p = sym_json_parse(v->valuestring, "the prefix models", msg, sizeof(msg));
	if (!p)
		return ERR("%s: %s", where, msg);
	int rc = check_prefix_models(e, p, where, err, errlen);
	cJSON_Delete(p);
	return rc;
}

static int check_prefix_models(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	if (!cJSON_IsArray(v))
		return ERR("%s: expected an array of prefix models (objects with " PREFIX_KEYS ")", where);
	int i = 0;
	for (const cJSON *q = v->child; q; q = q->next, i++) {
		char w[600], w2[700];
		snprintf(w, sizeof(w), "%s[%d]", where, i);
		if (!cJSON_IsObject(q))
			return ERR("%s: expected an object with " PREFIX_KEYS, w);
		for (const cJSON *it = q->child; it; it = it->next)
			if (strcmp(it->string, "name") && strcmp(it->string, "prefix") && strcmp(it->string, "suffix") &&
			    strcmp(it->string, "variants") && strcmp(it->string, "slo_ms"))
				return ERR("%s: unknown key '%s' (expected " PREFIX_KEYS ")", w, it->string);
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(q, "name");
		if (!cJSON_IsString(n) || !n->valuestring[0] || strlen(n->valuestring) > 40)
			return ERR("%s: 'name' must be a string of 1 to 40 characters", w);
		snprintf(w2, sizeof(w2), "%s: 'prefix'", w);
		if (check_part(cJSON_GetObjectItemCaseSensitive(q, "prefix"), w2, false, err, errlen))
			return -EINVAL;
		snprintf(w2, sizeof(w2), "%s: 'suffix'", w);
		if (check_part(cJSON_GetObjectItemCaseSensitive(q, "suffix"), w2, true, err, errlen))
			return -EINVAL;
		double d = 0;
		snprintf(w2, sizeof(w2), "%s: 'variants'", w);
		if (get_int(cJSON_GetObjectItemCaseSensitive(q, "variants"), w2, 1, 4096, &d, err, errlen))
			return -EINVAL;
		const cJSON *slo = cJSON_GetObjectItemCaseSensitive(q, "slo_ms");
		snprintf(w2, sizeof(w2), "%s: 'slo_ms'", w);
		if (slo && get_num(slo, w2, 0, true, 1e6, &d, err, errlen))
			return -EINVAL;
	}
	cJSON *dup = cJSON_GetArraySize(v) ? cJSON_Duplicate(v, true) : NULL;
	if (cJSON_GetArraySize(v) && !dup)
		return -ENOMEM;
	cJSON_Delete(e->prefix_json);
	e->prefix_json = dup;
	return 0;
}

static int set_prefix_batching(struct sym_experiment *e, const cJSON *v, const char *where, char *err, size_t errlen)
{
	if (cJSON_IsBool(v))
		e->prefix_batching = cJSON_IsTrue(v);
	else if (cJSON_IsString(v) && (!strcmp(v->valuestring, "true") || !strcmp(v->valuestring, "false")))
		e->prefix_batching = !strcmp(v->valuestring, "true");
	else
		return ERR("%s: expected true or false", where);
	return 0;
}

struct key {
	const char *key;  /* JSON key */
	const char *flag; /* command-line flag */
	const char *arg;
	const char *help;
	setter set;
	bool text; /* the value is always a string, even when it looks like a number */
};

static const struct key keys[] = {
	{ "zoo", "zoo", "a100|gtx1080ti|FILE", "profile set the models come from (default a100)", set_zoo, true },
	{ "models", "models", "NAME,...|all", "models to serve (default all)", set_models, false },
	{ "model_repository", "model-repository", "DIR", "serve the models of a repository too: DIR/NAME/config.json (tensors, max_batch_size, slo_ms, profile) and DIR/NAME/VERSION/model.pt (see docs/runtime.md, Model repository); with no \"models\" they replace the zoo's", set_model_repository, true },
	{ NULL, "profile", "ALPHA_MS,BETA_MS", "one inline linear model l(b) = alpha*b + beta, named 'model'", NULL, false },
	{ "slo_ms", "slo", "MS", "latency SLO for every model (default: each model's own)", set_slo, false },
	{ "slo_mode", "slo-mode", "all|at-least", "how slo_ms applies: to every model (all, the default), or as a floor under each model's own SLO (at-least: a model whose own SLO is longer keeps it)", set_slo_mode, true },
	{ "gpus", "gpus", "N", "number of GPUs (default 8)", set_gpus, false },
	{ "num_models", "num-models", "N", "serve exactly N models: the first N of the list, or the list repeated (copies named NAME#2, NAME#3, ...)", set_num_models, false },
	{ "gpus_per_model", "gpus-per-model", "G", "GPUs = round(G * number of models), replacing --gpus (0: unset)", set_gpus_per_model, false },
	{ "cluster", "cluster", "KIND:N[:xS],...", "devices by kind (replaces --gpus), e.g. a100:8,cpu:4:x20 (:xS = base latencies times S)", set_cluster, false },
	{ "rate", "rate", "RPS", "total offered requests per second (default 1000)", set_rate, false },
	{ "arrival", "arrival", "poisson|uniform|gamma:K", "arrival process per model (default poisson; gamma:K bursty below 1, 0.001 <= K <= 1e6)", set_arrival, true },
	{ "popularity", "popularity", "equal|zipf:S", "split of the total rate across models (default equal; 0 <= S <= 100)", set_popularity, true },
	{ "segments", "segments", "S:RPS,...", "piecewise total rate: S seconds at RPS, ... (replaces --rate)", set_segments, false },
	{ "rate_csv", "rate-csv", "FILE", "replay per-second per-model rates from CSV (replaces --rate)", set_rate_csv, true },
	{ "arrival_trace", "arrival-trace", "FILE", "replay a per-request arrival trace from CSV, time_s,model[,size], request by request (replaces --rate and --arrival; see docs/formats.md)", set_arrival_trace, true },
	{ "rate_scale", "rate-scale", "X", "multiply the rate schedule (segments, rate_csv, arrival_trace: each request X times, a fraction thinned by the seed, its times kept): a what-if (default 1)", set_rate_scale, false },
	{ "policy", "policy", "NAME[:K=V,...]", "scheduling policy and its parameters (default symphony; see `symphony policies`)", set_policy, true },
	{ "drop", "drop", "lazy|early[:N|:auto:K]", "batch gathering: lazy drop, or early drop with target N or auto (default early = early:auto:3)", set_drop, true },
	{ "network.ctrl_ms", "ctrl-ms", "MS", "control delay scheduler -> GPU (default 0)", set_ctrl, false },
	{ "network.data_ms", "data-ms", "MS", "input transfer delay per request of a batch (default 0)", set_data, false },
	{ "network.resp_ms", "resp-ms", "MS", "response delay back to the client (default 0)", set_resp, false },
	{ "network.done_ms", "done-ms", "MS", "completion delay: a GPU takes its next batch this long after it finishes, when the scheduler hears of it (default 0; preempting policies need 0)", set_done, false },
	{ "network.tail_ms", "tail-ms", "MS", "actual delay of a batch's plan and inputs: exponential, this mean (a long-tailed network; the scheduler plans with ctrl+data; default 0: exactly as planned)", set_tail, false },
	{ "send_ahead", "send-ahead", "true|false", "candidate policies: plan a GPU's next batch so that its plan and inputs arrive as it frees (default true; false: only once its end is reported)", set_send_ahead, false },
	{ "memory_check", "memory-check", "true|false", "refuse models that do not fit the GPUs' memory (static + dynamic, per kind's memory_mb; default true; false: memory is not modelled)", set_memory_check, false },
	{ "partition", "partition", "L", "sub-clusters: split the models into L parts, each with its own GPUs and ranker (Appendix A's MILP; or an object with " PARTITION_KEYS "; default 0: every GPU holds every model)", set_partition, false },
	{ "autoscale", "autoscale", "A", "sim: an autoscaler adds and releases GPUs as the run goes (true for the defaults, or an object with " AUTOSCALE_KEYS "; default false: a fixed GPU count)", set_autoscale, false },
	{ "jitter", "jitter", "J", "GPU time = l(b) * uniform[1-J, 1+J] (default 0)", set_jitter, false },
	{ "start_late_ms", "start-late", "P50,P99", "each batch begins late past the moment it could (its planned start, or the end of the batch before it): lognormal with this median and 99th percentile in ms, the start lateness a runtime backend measures (default 0,0: on time)", set_start_late, false },
	{ "size_cv", "size-cv", "CV", "requests carry a data size, gamma with mean 1 and this coefficient of variation; a batch takes beta + alpha * (its summed size) (default 0: every request the mean size; a model's own size_cv replaces it)", set_size_cv, false },
	{ "duration_s", "duration", "S", "simulated seconds of arrivals (default 30, or the schedule's length)", set_duration, false },
	{ "warmup_s", "warmup", "S", "seconds at the start not counted in metrics (default 3)", set_warmup, false },
	{ "seed", "seed", "N", "random seed (default 1)", set_seed, false },
	{ "interval_s", "interval", "S", "timeline and autoscaling-signal interval (default 1)", set_interval, false },
	{ "advice_threshold", "advice-threshold", "R", "bad rate above which the advice is to add GPUs (default 0.01)", set_advice_threshold, false },
	{ "max_bad_rate", "max-bad-rate", "R", "goodput: highest acceptable bad rate (default 0.01)", set_max_bad, false },
	{ "tolerance", "tolerance", "T", "goodput: relative search tolerance (default 0.005)", set_tolerance, false },
	{ "criterion", "criterion", "per-model|aggregate", "how a rate is judged: every model's bad rate <= R (default), or all requests together", set_criterion, true },
	{ "queries", "queries", "FILE|JSON", "complex queries (Nexus): an array of {" QUERY_KEYS "}, stages of {" STAGE_KEYS "}; arrivals are per query at --rate in all (see docs/queries.md; default: none, requests per model)", set_queries, true },
	{ "prefix_models", "prefix-models", "JSON", "model variants that share all but their last layers (Nexus's prefix batching): an array of {" PREFIX_KEYS "}; each serves `variants` models NAME/1, NAME/2, ... of latency prefix + suffix (see docs/simulator.md)", set_prefix_models, true },
	{ "prefix_batching", "prefix-batching", "true|false", "batch a prefix model's variants together through their shared prefix: one queue, latency prefix(b) + suffix alpha b + suffix beta per variant present, memory prefix once (default false)", set_prefix_batching, false },
	{ "replications", "seeds", "N", "goodput, plan, loadcurve, sweep: run seeds seed..seed+N-1, report the mean and its 95% interval (default 1)", set_replications, false },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

bool sym_experiment_flag_at(size_t i, struct sym_flag_info *out)
{
	/* the inline --profile has no key of its own (it sets "models") */
	if (i >= NKEYS)
		return false;
	*out = (struct sym_flag_info){ keys[i].key, keys[i].flag, keys[i].arg, keys[i].help };
	return true;
}

int sym_experiment_init(struct sym_experiment *e)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->zoo, sizeof(e->zoo), "a100");
	e->models_json = cJSON_CreateString("all");
	if (!e->models_json)
		return -ENOMEM;
	e->gpus = 8;
	e->rate = 1000;
	e->rate_scale = 1;
	e->send_ahead = true;
	e->arrival = (struct sym_arrival_spec){ SYM_ARRIVAL_POISSON, 1 };
	e->popularity = (struct sym_popularity){ SYM_POP_EQUAL, 0 };
	char msg[64];
	sym_policy_parse("symphony", &e->policy, msg, sizeof(msg));
	e->gather = (struct sym_gather){ SYM_GATHER_EARLY, 0, SYM_TARGET_SIGMAS }; /* measured best: see docs/policies.md */
	e->warmup_s = 3;
	e->seed = 1;
	e->max_bad_rate = 0.01;
	e->tolerance = 0.005;
	e->criterion = SYM_CRITERION_PER_MODEL;
	e->replications = 1;
	e->memory_check = true;
	e->partition.time_limit_s = 10;
	e->partition.epoch_s = 300;
	e->partition.c_max = -1;
	e->partition.noise_sigmas = 2;
	e->partition.load_mbps = 12000;
	e->partition.load_ms = 10;
	e->autoscale = (struct sym_autoscale_cfg){ .interval_s = 30, .threshold = -1, .provision_s = 60, .min_gpus = 1,
						   .cooldown_s = -1, .target = 0.7,
						   .release_fraction = 1 };
	e->interval_s = 1;
	e->advice_threshold = 0.01;
	return 0;
}

static void queries_free(struct sym_experiment *e);

/* A loaded arrival trace, shared by an experiment and its copies (a plan's
 * and a sweep's runs): read once, freed with the last of them. */
struct sym_trace_share {
	struct sym_trace t;
	atomic_int refs;
	char path[512];
};

static void trace_release(struct sym_experiment *e)
{
	if (e->trace_share && atomic_fetch_sub(&e->trace_share->refs, 1) == 1) {
		sym_trace_finish(&e->trace_share->t);
		free(e->trace_share);
	}
	e->trace_share = NULL;
	e->trace = NULL;
}

static void unresolve(struct sym_experiment *e)
{
	for (size_t i = 0; i < e->nmodels; i++)
		sym_model_spec_finish(&e->models[i]);
	for (size_t i = 0; e->profiles && i < e->nmodels * (size_t)(e->nkinds ? e->nkinds : 1); i++)
		sym_profile_finish(&e->profiles[i]);
	free(e->gpu_kind);
	e->gpu_kind = NULL;
	e->nkinds = 0;
	free(e->models);
	free(e->profiles);
	free(e->model_slo_ms);
	free(e->shares);
	free(e->table_col);
	sym_rate_table_finish(&e->table);
	free(e->trace_col);
	e->trace_col = NULL; /* the trace itself stays: it is read once (trace_release) */
	e->models = NULL;
	e->profiles = NULL;
	e->model_slo_ms = e->shares = NULL;
	e->table_col = NULL;
	free(e->pfx_n);
	free(e->pfx_sbeta_ms);
	e->pfx_n = NULL;
	e->pfx_sbeta_ms = NULL;
	queries_free(e);
	e->nmodels = e->slot0 = 0;
	e->resolved = false;
}

void sym_experiment_finish(struct sym_experiment *e)
{
	if (!e)
		return;
	unresolve(e);
	trace_release(e);
	cJSON_Delete(e->models_json);
	cJSON_Delete(e->queries_json);
	cJSON_Delete(e->prefix_json);
	free(e->segments);
	free(e->groups);
	free(e->partition.assign);
	memset(e, 0, sizeof(*e));
}

int sym_experiment_apply_json(struct sym_experiment *e, const cJSON *obj, const char *origin, char *err,
			      size_t errlen)
{
	if (!cJSON_IsObject(obj))
		return ERR("%s: expected a JSON object of configuration keys, got %s", origin, sym_json_type(obj));
	for (const cJSON *it = obj->child; it; it = it->next) {
		char where[700];
		snprintf(where, sizeof(where), "%s: key '%s'", origin, it->string);
		setter set = NULL;
		if (!strcmp(it->string, "runtime"))
			continue; /* the runtime processes' own section (runtime/cluster.h); no effect here */
		if (!strcmp(it->string, "network"))
			set = set_network;
		for (size_t i = 0; !set && i < NKEYS; i++)
			if (keys[i].key && !strcmp(keys[i].key, it->string))
				set = keys[i].set;
		if (!set || strchr(it->string, '.'))
			return ERR("%s: unknown key '%s' (see `symphony help config`)", origin, it->string);
		int rc = set(e, it, where, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

const cJSON *sym_experiment_config_of(const cJSON *root)
{
	const cJSON *inner = cJSON_GetObjectItemCaseSensitive(root, "config");
	if (cJSON_IsObject(inner) && (cJSON_GetObjectItemCaseSensitive(root, "program") ||
				      cJSON_GetObjectItemCaseSensitive(root, "version")))
		return inner;
	return root;
}

int sym_experiment_load_json(struct sym_experiment *e, const cJSON *root, const char *path, char *err, size_t errlen)
{
	const cJSON *cfg = sym_experiment_config_of(root);
	char origin[600];
	snprintf(origin, sizeof(origin), cfg == root ? "%s" : "%s: config", path);
	return sym_experiment_apply_json(e, cfg, origin, err, errlen);
}

cJSON *sym_experiment_read_json(const char *path, int *rcp, char *err, size_t errlen)
{
	char *text = NULL;
	int rc = sym_read_file(path, &text);
	*rcp = rc ? rc : -EINVAL; /* the code when NULL is returned */
	if (rc) {
		snprintf(err, errlen, "%s: cannot read the configuration: %s", !strcmp(path, "-") ? "standard input" : path,
			 rc == -ENOENT ? "no such file" : rc == -EISDIR ? "a directory" : sym_strerror(rc));
		return NULL;
	}
	cJSON *root = sym_json_parse(text, !strcmp(path, "-") ? "standard input" : path, err, errlen);
	free(text);
	if (root && !cJSON_IsObject(root)) {
		snprintf(err, errlen, "%s: expected a JSON object, got %s", !strcmp(path, "-") ? "standard input" : path,
			 sym_json_type(root));
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

int sym_experiment_load_file(struct sym_experiment *e, const char *path, char *err, size_t errlen)
{
	int rc;
	cJSON *root = sym_experiment_read_json(path, &rc, err, errlen);
	if (!root)
		return rc;
	rc = sym_experiment_load_json(e, root, !strcmp(path, "-") ? "standard input" : path, err, errlen);
	cJSON_Delete(root);
	return rc;
}

static int split_list(const char *s, cJSON *arr)
{
	const char *p = s;
	for (;;) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		char *item = strndup(p, n);
		if (!item)
			return -ENOMEM;
		cJSON_AddItemToArray(arr, cJSON_CreateString(item));
		free(item);
		if (!c)
			return 0;
		p = c + 1;
	}
}

static bool parse_double(const char *s, double *out)
{
	char *end = NULL;
	errno = 0;
	double d = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(d))
		return false;
	*out = d;
	return true;
}

int sym_experiment_apply_flag(struct sym_experiment *e, const char *flag, const char *value, char *err,
			      size_t errlen)
{
	char where[128];
	snprintf(where, sizeof(where), "option --%s", flag);
	const struct key *k = NULL;
	for (size_t i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].flag, flag))
			k = &keys[i];
	if (!k)
		return 1;
	cJSON *v = NULL;
	double a = 0, b = 0;
	int rc;
	if (!value)
		return ERR("%s: missing value", where);
	if (!strcmp(flag, "profile")) {
		const char *comma = value ? strchr(value, ',') : NULL;
		char *first = comma ? strndup(value, (size_t)(comma - value)) : NULL;
		bool ok = comma && first && parse_double(first, &a) && parse_double(comma + 1, &b);
		free(first);
		if (!ok)
			return ERR("%s: expected ALPHA_MS,BETA_MS (two numbers, e.g. 1.053,5.072), got '%s'", where,
				   value ? value : "");
		v = cJSON_CreateArray();
		cJSON *m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "name", "model");
		cJSON_AddNumberToObject(m, "alpha_ms", a);
		cJSON_AddNumberToObject(m, "beta_ms", b);
		cJSON_AddItemToArray(v, m);
		rc = set_models(e, v, where, err, errlen);
	} else if (!strcmp(flag, "models")) {
		if (!strcmp(value, "all")) {
			v = cJSON_CreateString("all");
		} else {
			v = cJSON_CreateArray();
			split_list(value, v);
		}
		rc = set_models(e, v, where, err, errlen);
	} else if (!strcmp(flag, "cluster")) {
		v = cJSON_CreateArray();
		cJSON *items = cJSON_CreateArray();
		split_list(value, items);
		rc = 0;
		for (const cJSON *it = items->child; it && !rc; it = it->next) {
			char kind[64] = "", extra[64] = "";
			int count = 0, used = 0;
			const char *t = it->valuestring;
			cJSON *grp = cJSON_CreateObject();
			if (sscanf(t, "%63[^:]:%d%n", kind, &count, &used) < 2 || (t[used] && sscanf(t + used, ":x%63s", extra) != 1)) {
				rc = ERR("%s: expected KIND:N or KIND:N:xSCALE, ... (e.g. a100:8,cpu:16:x20), got '%s'", where, t);
			} else {
				cJSON_AddStringToObject(grp, "kind", kind);
				cJSON_AddNumberToObject(grp, "count", count);
				if (extra[0]) {
					if (!parse_double(extra, &a))
						rc = ERR("%s: bad scale in '%s' (expected :xS, S > 0)", where, t);
					cJSON_AddNumberToObject(grp, "scale", a);
				}
			}
			cJSON_AddItemToArray(v, grp);
		}
		cJSON_Delete(items);
		if (!rc)
			rc = set_cluster(e, v, where, err, errlen);
	} else if (!strcmp(flag, "start-late")) {
		const char *comma = strchr(value, ',');
		char *first = comma ? strndup(value, (size_t)(comma - value)) : NULL;
		bool ok = comma && first && parse_double(first, &a) && parse_double(comma + 1, &b);
		free(first);
		if (!ok)
			return ERR("%s: expected P50_MS,P99_MS (two numbers, e.g. 0.05,1.5), got '%s'", where, value);
		v = cJSON_CreateArray();
		cJSON_AddItemToArray(v, cJSON_CreateNumber(a));
		cJSON_AddItemToArray(v, cJSON_CreateNumber(b));
		rc = set_start_late(e, v, where, err, errlen);
	} else if (!strcmp(flag, "segments")) {
		v = cJSON_CreateArray();
		cJSON *names = cJSON_CreateArray();
		split_list(value, names);
		rc = 0;
		for (const cJSON *it = names->child; it; it = it->next) {
			const char *colon = strchr(it->valuestring, ':');
			char *first = colon ? strndup(it->valuestring, (size_t)(colon - it->valuestring)) : NULL;
			bool ok = colon && first && parse_double(first, &a) && parse_double(colon + 1, &b);
			free(first);
			if (!ok) {
				rc = ERR("%s: expected SECONDS:RPS,... (e.g. 10:1000,10:4000), got '%s'", where,
					 it->valuestring);
				break;
			}
			cJSON *seg = cJSON_CreateObject();
			cJSON_AddNumberToObject(seg, "duration_s", a);
			cJSON_AddNumberToObject(seg, "rate", b);
			cJSON_AddItemToArray(v, seg);
		}
		cJSON_Delete(names);
		if (!rc)
			rc = set_segments(e, v, where, err, errlen);
	} else {
		if (!value)
			return ERR("%s: missing value", where);
		v = !k->text && parse_double(value, &a) ? cJSON_CreateNumber(a) : cJSON_CreateString(value);
		rc = k->set(e, v, where, err, errlen);
	}
	cJSON_Delete(v);
	return rc;
}

double sym_experiment_duration(const struct sym_experiment *e)
{
	if (e->duration_s > 0)
		return e->duration_s;
	if (e->rate_csv[0] && e->resolved)
		return (double)e->table.nrows;
	if (e->arrival_trace[0] && e->resolved)
		return sym_to_s(e->trace->length);
	if (e->nseg) {
		double s = 0;
		for (size_t i = 0; i < e->nseg; i++)
			s += sym_to_s(e->segments[i].duration);
		return s;
	}
	return 30;
}

double sym_experiment_share(const struct sym_experiment *e, size_t m)
{
	if (e->query_of && e->query_of[m] >= 0) {
		const struct sym_query *q = &e->queries[e->query_of[m]];
		return e->shares[q->model[0]] * q->mult[e->stage_of[m]];
	}
	return e->shares[m];
}

double sym_experiment_model_rate(const struct sym_experiment *e, size_t m)
{
	if (e->query_of && e->query_of[m] >= 0 && e->stage_of[m] > 0) {
		/* a later stage: its root's rate times the gammas on its path */
		const struct sym_query *q = &e->queries[e->query_of[m]];
		return sym_experiment_model_rate(e, (size_t)q->model[0]) * q->mult[e->stage_of[m]];
	}
	if (e->rate_csv[0]) {
		double sum = 0;
		for (size_t r = 0; r < e->table.nrows; r++)
			sum += e->table.rates[r * e->table.ncols + (size_t)e->table_col[m]];
		return e->table.nrows ? sum / (double)e->table.nrows : 0;
	}
	if (e->arrival_trace[0]) /* its requests over its length (a run longer than the trace repeats it) */
		return (double)e->trace->count[e->trace_col[m]] / sym_to_s(e->trace->length);
	if (e->nseg) {
		double sum = 0, len = 0;
		for (size_t i = 0; i < e->nseg; i++) {
			sum += e->segments[i].rate * sym_to_s(e->segments[i].duration);
			len += sym_to_s(e->segments[i].duration);
		}
		return e->shares[m] * (len > 0 ? sum / len : 0);
	}
	return e->shares[m];
}

bool sym_experiment_has_schedule(const struct sym_experiment *e)
{
	return e->rate_csv[0] || e->nseg || e->arrival_trace[0];
}

const char *sym_experiment_schedule_name(const struct sym_experiment *e)
{
	return e->rate_csv[0] ? e->rate_csv : e->arrival_trace[0] ? e->arrival_trace : e->nseg ? "segments" : "";
}

double sym_experiment_scale(const struct sym_experiment *e)
{
	return sym_experiment_has_schedule(e) ? e->rate_scale : e->rate;
}

double sym_experiment_model_rps(const struct sym_experiment *e, size_t m)
{
	return sym_experiment_scale(e) * sym_experiment_model_rate(e, m);
}

static int add_model(struct sym_experiment *e, const struct sym_model_spec *spec, char *err, size_t errlen)
{
	for (size_t i = 0; i < e->nmodels; i++)
		if (!strcmp(e->models[i].name, spec->name))
			return ERR("models: model '%s' is listed twice", spec->name);
	int rc = sym_model_spec_copy(&e->models[e->nmodels], spec);
	if (rc)
		return rc;
	e->nmodels++;
	return 0;
}

/* num_models: the first N models, or the list repeated; the k-th copy of a
 * model (k >= 2) is named NAME#k so that every model has its own name. */
static int cycle_models(struct sym_experiment *e)
{
	size_t n0 = e->nmodels, n = (size_t)e->num_models;
	if (n == n0)
		return 0;
	if (n < n0) {
		for (size_t i = n; i < n0; i++)
			sym_model_spec_finish(&e->models[i]);
		e->nmodels = n;
		return 0;
	}
	struct sym_model_spec *m = realloc(e->models, n * sizeof(*m));
	if (!m)
		return -ENOMEM;
	e->models = m;
	for (size_t i = n0; i < n; i++) {
		int rc = sym_model_spec_copy(&m[i], &m[i % n0]);
		if (rc)
			return rc;
		e->nmodels = i + 1;
		char base[64];
		snprintf(base, sizeof(base), "%s", m[i % n0].name);
		snprintf(m[i].name, sizeof(m[i].name), "%.50s#%u", base, (unsigned)(i / n0 + 1)); /* n <= 100000 */
		/* distinct from the listed names; among the copies only a cut name can repeat */
		for (size_t j = 0; j < (strlen(base) > 50 ? i : n0); j++)
			if (!strcmp(m[j].name, m[i].name))
				return -EEXIST;
	}
	return 0;
}

/* A model's profile on a kind whose latencies are `scale` times the base. A
 * model that cannot meet its SLO there even alone gets a one-entry profile
 * (l(1) above the SLO): every policy then leaves that kind to others. */
static int scaled_profile(const struct sym_model_spec *s, double scale, double slo_ms, struct sym_profile *out,
			  char *err, size_t errlen)
{
	struct sym_model_spec t;
	int rc = sym_model_spec_copy(&t, s);
	if (rc)
		return rc;
	t.alpha_ms *= scale;
	t.beta_ms *= scale;
	for (int b = 0; b < t.ntable; b++)
		t.table_ms[b] *= scale;
	rc = sym_model_spec_profile(&t, slo_ms, out, err, errlen);
	if (rc == -ERANGE) {
		double l1 = t.table_ms ? t.table_ms[0] : t.alpha_ms + t.beta_ms;
		rc = sym_profile_init_table(out, t.name, &l1, 1);
	}
	sym_model_spec_finish(&t);
	return rc;
}

/* Kind ki's profiles of models m0..m1-1: from its group's zoo, from the base
 * profiles scaled, from the built-in zoo of its name, or (first group only)
 * the base profiles themselves (left as they are). */
static int group_profiles(struct sym_experiment *e, size_t ki, size_t m0, size_t m1, double net1, char *err,
			  size_t errlen)
{
	size_t n = e->nmodels;
	const struct sym_gpu_group *gr = &e->groups[ki];
	double known = 0;
	bool builtin = builtin_kind(gr->kind, &known);
	if (ki == 0 && !gr->zoo[0] && !(gr->scale > 0)) {
		/* the base profiles, when the kind is their device (or a generic "gpu") */
		bool base = !strcmp(gr->kind, e->zoo) || !strcmp(gr->kind, "gpu") || !builtin_kind(e->zoo, &known);
		if (base && !(builtin && strcmp(gr->kind, e->zoo)))
			return 0;
		if (!builtin)
			return ERR("cluster[0]: kind '%s' is not the device of the profiles (zoo %s): name the kind "
				   "%s, or give it \"zoo\" (its profiles) or \"scale\" (its speed relative to %s)",
				   gr->kind, e->zoo, e->zoo, e->zoo);
	}
	const char *zname = gr->zoo[0] ? gr->zoo : (builtin ? gr->kind : NULL);
	if (!zname && !(gr->scale > 0))
		return ERR("cluster[%zu]: kind '%s' needs \"zoo\" (its profiles) or \"scale\" (its speed "
			   "relative to the first kind)", ki, gr->kind);
	struct sym_zoo zoo = { 0 };
	int rc = 0;
	if (!(gr->scale > 0) && (rc = sym_zoo_load(zname, &zoo, err, errlen)))
		return rc;
	for (size_t m = m0; m < m1 && !rc; m++) {
		struct sym_profile *out = &e->profiles[ki * n + m];
		sym_profile_finish(out); /* kind 0: replaces the base profile */
		if (gr->scale > 0) {
			rc = scaled_profile(&e->models[m], gr->scale, e->model_slo_ms[m] - net1, out, err, errlen);
			continue;
		}
		/* a copy NAME#k (num_models) has the profile of the model it copies */
		const char *name = e->models[m >= e->slot0 ? m : m % e->nlisted].name;
		const struct sym_model_spec *s = sym_zoo_find(&zoo, name);
		if (!s) {
			rc = ERR("cluster[%zu]: zoo '%s' has no profile for model '%s' (give the kind a \"scale\" "
				 "instead)", ki, zname, name);
			break;
		}
		rc = scaled_profile(s, 1, e->model_slo_ms[m] - net1, out, err, errlen);
	}
	sym_zoo_finish(&zoo);
	return rc;
}

/* Device kinds, and each kind's profiles (group_profiles). */
static int resolve_kinds(struct sym_experiment *e, double net1, char *err, size_t errlen)
{
	e->gpu_kind = calloc((size_t)e->gpus, sizeof(int));
	if (!e->gpu_kind)
		return -ENOMEM;
	if (!e->ngroups) {
		struct sym_kind *k = &e->kinds[0];
		memset(k, 0, sizeof(*k));
		snprintf(k->name, sizeof(k->name), "%.31s", builtin_kind(e->zoo, &k->memory_mb) ? e->zoo : "gpu");
		return 0;
	}
	int g = 0;
	for (size_t ki = 0; ki < e->ngroups; ki++) {
		const struct sym_gpu_group *gr = &e->groups[ki];
		struct sym_kind *k = &e->kinds[ki];
		memset(k, 0, sizeof(*k));
		snprintf(k->name, sizeof(k->name), "%s", gr->kind);
		double known = 0;
		builtin_kind(gr->kind, &known);
		k->memory_mb = gr->memory_mb > 0 ? gr->memory_mb : known;
		k->cpu = gr->cpu >= 0 ? gr->cpu : !strcmp(gr->kind, "cpu");
		for (int c = 0; c < gr->count; c++)
			e->gpu_kind[g++] = (int)ki;
		int rc = group_profiles(e, ki, 0, e->nmodels, net1, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

double sym_experiment_size_cv(const struct sym_experiment *e, size_t i)
{
	return e->models[i].size_cv > 0 ? e->models[i].size_cv : e->size_cv;
}

double sym_experiment_model_memory(const struct sym_experiment *e, int k, size_t i)
{
	const struct sym_profile *p = &e->profiles[(size_t)k * e->nmodels + i];
	return sym_mem_model(p->static_mb, p->dynamic_mb);
}

/* The autoscaler's defaults that follow other keys, and its bounds. */
static int check_autoscale(struct sym_experiment *e, char *err, size_t errlen)
{
	struct sym_autoscale_cfg *a = &e->autoscale;
	if (a->threshold < 0)
		a->threshold = e->advice_threshold;
	if (a->cooldown_s < 0)
		a->cooldown_s = a->interval_s;
	if (!a->on)
		return 0;
	if (a->phase_s >= a->interval_s)
		return ERR("autoscale.phase_s: %g s, but it must be below interval_s (%g s)", a->phase_s, a->interval_s);
	if (!a->max_gpus)
		a->max_gpus = e->gpus;
	if (a->max_gpus > e->gpus)
		return ERR("autoscale.max_gpus: %d, but the cluster has %d GPUs (gpus is the pool it draws from)",
			   a->max_gpus, e->gpus);
	if (a->min_gpus > a->max_gpus)
		return ERR("autoscale: min_gpus %d is above max_gpus %d", a->min_gpus, a->max_gpus);
	if (!a->start_gpus)
		a->start_gpus = a->max_gpus;
	if (a->start_gpus < a->min_gpus || a->start_gpus > a->max_gpus)
		return ERR("autoscale.start_gpus: %d is outside min_gpus..max_gpus (%d..%d)", a->start_gpus, a->min_gpus,
			   a->max_gpus);
	if (e->partition.subclusters > a->start_gpus)
		return ERR("autoscale.start_gpus: %d, but %d sub-clusters need at least one GPU each at the start",
			   a->start_gpus, e->partition.subclusters);
	const char *pol = sym_policy_name(&e->policy);
	if (!strcmp(pol, "nexus") || !strcmp(pol, "shepherd"))
		return ERR("autoscale: policy '%s' cannot run with GPUs coming and going (%s)", pol,
			   !strcmp(pol, "nexus") ? "it packs models onto every GPU of its plan" : "it preempts batches");
	return 0;
}

static int check_partition(struct sym_experiment *e, char *err, size_t errlen)
{
	const struct sym_partition_cfg *p = &e->partition;
	if (p->subclusters > e->gpus)
		return ERR("partition: %d sub-clusters need at least one GPU each; the cluster has %d", p->subclusters,
			   e->gpus);
	if (p->phase_s > 0 && p->phase_s >= p->epoch_s)
		return ERR("partition.phase_s: %g s, but it must be below epoch_s (%g s)", p->phase_s, p->epoch_s);
	if (!p->assign)
		return 0;
	if (!p->subclusters)
		return ERR("partition.assign: give subclusters as well");
	if (p->nassign != e->nmodels)
		return ERR("partition.assign: %zu entries for %zu models (one sub-cluster per model, in the models' "
			   "order)", p->nassign, e->nmodels);
	for (size_t i = 0; i < p->nassign; i++)
		if (p->assign[i] >= p->subclusters)
			return ERR("partition.assign[%zu]: sub-cluster %d of model '%s' is not below subclusters (%d)", i,
				   p->assign[i], e->models[i].name, p->subclusters);
	return 0;
}

/* The fewest parts a first-fit packing (largest dynamic memory first) puts
 * the models into on kind k, each part within cap by the memory rule
 * (core/memory.h); -1 when a model alone does not fit. */
static int first_fit_parts(const struct sym_experiment *e, int k, double cap)
{
	size_t n = e->nmodels;
	size_t *order = malloc(n * sizeof(size_t));
	struct sym_mem *part = calloc(n, sizeof(*part));
	int parts = 0;
	if (!order || !part) {
		parts = -1;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	const struct sym_profile *pr = &e->profiles[(size_t)k * n];
	/* insertion sort by dynamic memory, descending (n is small: the models of one experiment) */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && pr[order[j]].dynamic_mb > pr[order[j - 1]].dynamic_mb; j--) {
			size_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (size_t x = 0; x < n; x++) {
		const struct sym_profile *p = &pr[order[x]];
		int j = 0;
		while (j < parts && sym_mem_need_with(&part[j], p->static_mb, p->dynamic_mb) > cap)
			j++;
		if (j == parts) {
			if (sym_mem_model(p->static_mb, p->dynamic_mb) > cap) {
				parts = -1;
				goto out;
			}
			parts++;
		}
		sym_mem_add_profile(&part[j], p);
	}
out:
	free(order);
	free(part);
	return parts;
}

int sym_experiment_min_subclusters(const struct sym_experiment *e)
{
	int most = 1;
	for (int k = 0; e->memory_check && k < e->nkinds; k++) {
		if (!(e->kinds[k].memory_mb > 0))
			continue;
		int parts = first_fit_parts(e, k, e->kinds[k].memory_mb);
		if (parts < 0)
			return -1;
		if (parts > most)
			most = parts;
	}
	return most;
}

int sym_experiment_check_memory(const struct sym_experiment *e, const int *assign, char *err, size_t errlen)
{
	if (!e->memory_check)
		return 0;
	size_t n = e->nmodels;
	int L = e->partition.subclusters > 0 ? e->partition.subclusters : 1;
	if (!assign)
		assign = e->partition.assign;
	bool parted = e->partition.subclusters > 0;
	struct sym_mem *use = calloc((size_t)L, sizeof(*use));
	int rc = 0;
	if (!use) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	for (int k = 0; k < e->nkinds && !rc; k++) {
		double cap = e->kinds[k].memory_mb;
		if (!(cap > 0))
			continue;
		const struct sym_profile *pr = &e->profiles[(size_t)k * n];
		for (size_t i = 0; i < n; i++)
			if (sym_experiment_model_memory(e, k, i) > cap) {
				rc = ERR("memory: model '%s' needs %.0f MB (static %.0f + dynamic %.0f), more than a %s holds "
					 "(memory_mb %.0f); serve it on a larger device or set memory_check false",
					 e->models[i].name, sym_experiment_model_memory(e, k, i), pr[i].static_mb,
					 pr[i].dynamic_mb, e->kinds[k].name, cap);
				goto out;
			}
		if (parted && !assign)
			continue; /* the partition is solved with this limit when a run starts */
		memset(use, 0, (size_t)L * sizeof(*use));
		for (size_t i = 0; i < n; i++)
			sym_mem_add_profile(&use[parted ? assign[i] : 0], &pr[i]);
		for (int j = 0; j < L; j++) {
			double st = use[j].static_mb, dy = use[j].dynamic_mb;
			if (sym_mem_need(&use[j]) <= cap)
				continue;
			if (parted) {
				rc = ERR("memory: sub-cluster %d's models need %.0f MB on each of its GPUs (static %.0f + the "
					 "largest dynamic %.0f), more than a %s holds (memory_mb %.0f)", j, st + dy, st, dy,
					 e->kinds[k].name, cap);
			} else {
				int parts = first_fit_parts(e, k, cap);
				rc = ERR("memory: the %zu models need %.0f MB on every GPU (static %.0f + the largest "
					 "dynamic %.0f), more than a %s holds (memory_mb %.0f): split them into sub-clusters "
					 "with their own GPUs (\"partition\": %d or more, or --partition %d; a first-fit packing "
					 "needs %d), serve fewer models, or set memory_check false to ignore memory",
					 n, st + dy, st, dy, e->kinds[k].name, cap, parts, parts, parts);
			}
			goto out;
		}
	}
out:
	free(use);
	return rc;
}

/* prefix_models: each expands to its variants NAME/1..NAME/N, plain models
 * of latency prefix + suffix and memory prefix + suffix; with prefix
 * batching, to one model NAME that serves them all: a table of l(b) =
 * (prefix alpha + suffix alpha) b + prefix beta + suffix beta min(b, N) (the
 * most a batch can take: every request of another variant; the simulator
 * charges the variants a batch really holds), memory prefix + N suffixes. */
static int add_prefix_models(struct sym_experiment *e, char *err, size_t errlen)
{
	if (e->num_models > 0)
		return ERR("prefix_models: num_models cannot repeat prefix models (give their variants instead)");
	for (const cJSON *p = e->prefix_json->child; p; p = p->next) {
		const char *name = cJSON_GetObjectItemCaseSensitive(p, "name")->valuestring;
		const cJSON *pre = cJSON_GetObjectItemCaseSensitive(p, "prefix"), *suf = cJSON_GetObjectItemCaseSensitive(p, "suffix");
		int nv = cJSON_GetObjectItemCaseSensitive(p, "variants")->valueint;
#define PART(o, k, def) (cJSON_GetObjectItemCaseSensitive(o, k) ? cJSON_GetObjectItemCaseSensitive(o, k)->valuedouble : (def))
		double pa = PART(pre, "alpha_ms", 0), pb = PART(pre, "beta_ms", 0), pm = PART(pre, "static_mb", -1);
		double pd = PART(pre, "dynamic_mb", -1), sa = PART(suf, "alpha_ms", 0), sb = PART(suf, "beta_ms", 0);
		double sm = PART(suf, "static_mb", -1), slo = PART(p, "slo_ms", 0);
#undef PART
		if (e->slo_ms > 0)
			slo = e->slo_ms;
		struct sym_model_spec spec = { .alpha_ms = pa + sa, .beta_ms = pb + sb, .slo_ms = slo,
					       .static_mb = pm >= 0 && sm >= 0 ? pm + sm : -1, .dynamic_mb = pd, .file_mb = -1 };
		if (!(pa + sa + pb + sb >= SYM_LATENCY_MIN_MS))
			return ERR("prefix_models: '%s': l(1) = %g ms (at least %g)", name, pa + sa + pb + sb, SYM_LATENCY_MIN_MS);
		int rc;
		if (!e->prefix_batching) {
			for (int k = 1; k <= nv; k++) {
				snprintf(spec.name, sizeof(spec.name), "%s/%d", name, k);
				if ((rc = add_model(e, &spec, err, errlen)))
					return rc;
			}
			continue;
		}
		if (!(slo > 0))
			return ERR("prefix_models: '%s' needs an SLO for its batches' table (slo_ms, or the experiment's)", name);
		double table[SYM_PROFILE_BATCH_LIMIT];
		int nt = 0;
		for (int b = 1; b <= SYM_PROFILE_BATCH_LIMIT; b++) {
			double l = (pa + sa) * b + pb + sb * (b < nv ? b : nv);
			if (b > 1 && l > slo)
				break;
			table[nt++] = l;
		}
		snprintf(spec.name, sizeof(spec.name), "%s", name);
		spec.alpha_ms = spec.beta_ms = NAN;
		spec.table_ms = table;
		spec.ntable = nt;
		spec.static_mb = pm >= 0 && sm >= 0 ? pm + nv * sm : -1;
		if ((rc = add_model(e, &spec, err, errlen)))
			return rc;
		if (!e->pfx_n) {
			e->pfx_n = calloc(e->nmodels + (size_t)cJSON_GetArraySize(e->prefix_json), sizeof(int));
			e->pfx_sbeta_ms = calloc(e->nmodels + (size_t)cJSON_GetArraySize(e->prefix_json), sizeof(double));
			if (!e->pfx_n || !e->pfx_sbeta_ms)
				return -ENOMEM;
		}
		e->pfx_n[e->nmodels - 1] = nv;
		e->pfx_sbeta_ms[e->nmodels - 1] = sb;
	}
	return 0;
}

static void queries_free(struct sym_experiment *e)
{
	for (size_t i = 0; e->queries && i < e->nqueries; i++) {
		struct sym_query *q = &e->queries[i];
		free(q->model);
		free(q->parent);
		free(q->gamma);
		free(q->mult);
		free(q->deadline_ms);
		free(q->plan);
		free(q->gsteps);
		free(q->gfirst);
		free(q->ngsteps);
	}
	free(e->queries);
	free(e->query_of);
	free(e->stage_of);
	e->queries = NULL;
	e->query_of = e->stage_of = NULL;
	e->nqueries = 0;
}

/* The queries' stages against the resolved models: each stage a model of
 * the list, no model in two stages. */
static int resolve_queries(struct sym_experiment *e, char *err, size_t errlen)
{
	size_t n = cJSON_GetArraySize(e->queries_json);
	e->queries = calloc(n, sizeof(*e->queries));
	e->query_of = malloc(e->nmodels * sizeof(int));
	e->stage_of = malloc(e->nmodels * sizeof(int));
	if (!e->queries || !e->query_of || !e->stage_of)
		return -ENOMEM;
	for (size_t m = 0; m < e->nmodels; m++)
		e->query_of[m] = e->stage_of[m] = -1;
	double total = 0;
	for (const cJSON *qj = e->queries_json->child; qj; qj = qj->next) {
		/* counted at once, so that an error below still frees what it has */
		size_t qi = e->nqueries++;
		struct sym_query *q = &e->queries[qi];
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(qj, "name");
		snprintf(q->name, sizeof(q->name), "%s", v->valuestring);
		for (size_t j = 0; j < qi; j++)
			if (!strcmp(e->queries[j].name, q->name))
				return ERR("queries: two queries are named '%s'", q->name);
		q->slo_ms = cJSON_GetObjectItemCaseSensitive(qj, "slo_ms")->valuedouble;
		v = cJSON_GetObjectItemCaseSensitive(qj, "share");
		q->share = v ? v->valuedouble : 1;
		total += q->share;
		v = cJSON_GetObjectItemCaseSensitive(qj, "split");
		q->split = SYM_SPLIT_NONE;
		if (v)
			parse_split(v->valuestring, &q->split);
		v = cJSON_GetObjectItemCaseSensitive(qj, "eps_ms");
		q->eps_ms = v ? v->valuedouble : q->slo_ms / 500;
		v = cJSON_GetObjectItemCaseSensitive(qj, "budget");
		q->lat_factor = v && !strcmp(v->valuestring, "session") ? 2 : 1;
		v = cJSON_GetObjectItemCaseSensitive(qj, "replan_s");
		q->replan_s = v ? v->valuedouble : 0;
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(qj, "stages");
		int ns = cJSON_GetArraySize(st);
		q->model = malloc((size_t)ns * sizeof(int));
		q->parent = malloc((size_t)ns * sizeof(int));
		q->gamma = malloc((size_t)ns * sizeof(double));
		q->mult = malloc((size_t)ns * sizeof(double));
		q->deadline_ms = malloc((size_t)ns * sizeof(double));
		q->plan = calloc((size_t)ns, sizeof(*q->plan));
		q->gfirst = calloc((size_t)ns, sizeof(int));
		q->ngsteps = calloc((size_t)ns, sizeof(int));
		if (!q->model || !q->parent || !q->gamma || !q->mult || !q->deadline_ms || !q->plan || !q->gfirst ||
		    !q->ngsteps)
			return -ENOMEM;
		int nsteps = 0;
		for (const cJSON *x = st->child; x; x = x->next)
			nsteps += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(x, "gamma_after"));
		if (nsteps && !(q->gsteps = calloc((size_t)nsteps, sizeof(*q->gsteps))))
			return -ENOMEM;
		for (const cJSON *x = st->child; x; x = x->next, q->nstages++) {
			int i = q->nstages;
			const char *name = cJSON_GetObjectItemCaseSensitive(x, "model")->valuestring;
			int m = -1;
			for (size_t k = 0; k < e->nmodels && m < 0; k++)
				if (!strcmp(e->models[k].name, name))
					m = (int)k;
			if (m < 0)
				return ERR("queries: query '%s' stage %d: model '%s' is not one of the experiment's "
					   "models (list it in \"models\")", q->name, i, name);
			if (e->query_of[m] >= 0)
				return ERR("queries: model '%s' is a stage of query '%s' and again of query '%s' (each "
					   "stage needs a model of its own; use num_models or a copy under another name)",
					   name, e->queries[e->query_of[m]].name, q->name);
			e->query_of[m] = (int)qi;
			e->stage_of[m] = i;
			q->model[i] = m;
			v = cJSON_GetObjectItemCaseSensitive(x, "parent");
			q->parent[i] = v ? v->valueint : (i ? 0 : -1);
			v = cJSON_GetObjectItemCaseSensitive(x, "gamma");
			q->gamma[i] = v ? v->valuedouble : 1;
			q->mult[i] = i ? q->mult[q->parent[i]] * q->gamma[i] : 1;
			const cJSON *ga = cJSON_GetObjectItemCaseSensitive(x, "gamma_after");
			q->gfirst[i] = i ? q->gfirst[i - 1] + q->ngsteps[i - 1] : 0;
			for (const cJSON *g = ga ? ga->child : NULL; g; g = g->next)
				q->gsteps[q->gfirst[i] + q->ngsteps[i]++] = (struct sym_gamma_step){
					cJSON_GetObjectItemCaseSensitive(g, "t_s")->valuedouble,
					cJSON_GetObjectItemCaseSensitive(g, "gamma")->valuedouble };
		}
	}
	for (size_t i = 0; i < e->nqueries; i++)
		e->queries[i].share /= total;
	return 0;
}

/* Each query's split (on kind 0's profiles), its stage deadlines, and the
 * stage models' SLOs (their budgets: what their policy plans with). */
static int plan_queries(struct sym_experiment *e, char *err, size_t errlen)
{
	for (size_t i = 0; i < e->nqueries; i++) {
		struct sym_query *q = &e->queries[i];
		struct sym_query_stage st[SYM_QUERY_MAX_STAGES];
		for (int v = 0; v < q->nstages; v++)
			st[v] = (struct sym_query_stage){ .name = e->models[q->model[v]].name,
							  .profile = &e->profiles[q->model[v]],
							  .parent = q->parent[v], .gamma = v ? q->gamma[v] : 1,
							  .lat_factor = q->lat_factor };
		double rate = e->rate * q->share;
		if (!(rate > 0))
			rate = 1; /* the split does not depend on the rate (fractional GPUs), only the GPU counts do */
		char msg[400];
		int rc = 0;
		if (q->split == SYM_SPLIT_NEXUS)
			rc = sym_query_split(st, q->nstages, rate, q->slo_ms, q->eps_ms, q->plan, &q->plan_gpus, msg,
					     sizeof(msg));
		else
			rc = sym_query_even(st, q->nstages, rate, q->slo_ms, q->plan, &q->plan_gpus, msg, sizeof(msg));
		if (rc == -ENOMEM)
			return rc;
		if (rc)
			return ERR("queries: query '%s' (split %s): %s", q->name, sym_split_name(q->split), msg);
		if (q->split == SYM_SPLIT_NONE) {
			/* every stage has the whole SLO: its deadline is the query's */
			struct sym_query_stage one;
			q->plan_gpus = 0;
			for (int v = 0; v < q->nstages; v++) {
				one = st[v];
				one.parent = -1;
				one.gamma = 1;
				double g;
				if ((rc = sym_query_even(&one, 1, rate * q->mult[v], q->slo_ms, &q->plan[v], &g, msg,
							 sizeof(msg))))
					return rc == -ENOMEM ? rc : ERR("queries: query '%s': %s", q->name, msg);
				q->plan_gpus += g;
			}
		}
		for (int v = 0; v < q->nstages; v++) {
			int m = q->model[v];
			q->deadline_ms[v] = q->split == SYM_SPLIT_NONE ? q->slo_ms
								 : (v ? q->deadline_ms[q->parent[v]] : 0) + q->plan[v].budget_ms;
			e->model_slo_ms[m] = q->plan[v].budget_ms;
		}
	}
	return 0;
}

static int resolve_list(struct sym_experiment *e, char *err, size_t errlen);

/* Per-model rates (a model object's "rate", req/s): when the models carry
 * them, they split the load (the shares) and their sum is the total rate,
 * unless "rate" is given too, which then scales them all to that total
 * (a what-if). Every model needs one then, and neither popularity, a rate
 * schedule nor queries may split the load as well. */
static int model_rates(struct sym_experiment *e, char *err, size_t errlen)
{
	size_t n = e->nmodels, with = 0, shared = 0;
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		if (e->models[i].rate > 0 && e->models[i].share > 0)
			return ERR("models: '%s' has a \"rate\" and a \"share\": give one", e->models[i].name);
		with += e->models[i].rate > 0;
		shared += e->models[i].share > 0;
		sum += e->models[i].rate + e->models[i].share;
	}
	if (!with && !shared)
		return 0;
	const char *key = with ? "rate" : "share";
	if (with && shared)
		return ERR("models: %zu models have a \"rate\" (req/s) and %zu a \"share\" (a weight): give every model "
			   "the same one", with, shared);
	if (with + shared < n) {
		size_t i = 0;
		while (with ? e->models[i].rate > 0 : e->models[i].share > 0)
			i++;
		return ERR("models: %zu of the %zu models have a \"%s\", '%s' has none: give every model one (%s), "
			   "or none (the popularity splits --rate)", with ? with : shared, n, key, e->models[i].name,
			   with ? "req/s" : "a weight");
	}
	if (e->popularity.kind != SYM_POP_EQUAL)
		return ERR("popularity: the models carry their own %ss; a popularity would split the load again", key);
	if (e->rate_csv[0] || e->nseg || e->arrival_trace[0] || e->nqueries || e->pfx_n)
		return ERR("models: per-model %ss with %s: give the load one way", key, e->rate_csv[0] ? "rate_csv"
								  : e->nseg ? "segments"
								  : e->arrival_trace[0] ? "arrival_trace"
								  : e->nqueries ? "queries"
										: "prefix models");
	for (size_t i = 0; i < n; i++)
		e->shares[i] = (e->models[i].rate + e->models[i].share) / sum;
	if (!e->rate_given && with)
		e->rate = sum; /* shares split --rate (default 1000 req/s) */
	return 0;
}

/* The model list a resolve reads: "models", with a repository's models
 * after it (instead of the zoo's when "models" was not given). NULL with rc
 * set on an error; *owned says whether the caller frees it. */
static const cJSON *model_list(const struct sym_experiment *e, bool *owned, int *rc, char *err, size_t errlen)
{
	*owned = false;
	*rc = 0;
	if (!e->model_repository[0])
		return e->models_json;
	if (e->models_given && !cJSON_IsArray(e->models_json)) {
		*rc = ERR("models: \"all\" with model_repository %s: list the zoo's models you want by name",
			  e->model_repository);
		return NULL;
	}
	cJSON *list = e->models_given ? cJSON_Duplicate(e->models_json, true) : cJSON_CreateArray();
	if (!list) {
		*rc = ERR("out of memory");
		return NULL;
	}
	int n = sym_repo_read(e->model_repository, e->repo_unprofiled_ok, list, NULL, err, errlen);
	if (n < 0) {
		cJSON_Delete(list);
		*rc = n;
		return NULL;
	}
	*owned = true;
	return list;
}

static int resolve(struct sym_experiment *e, char *err, size_t errlen)
{
	unresolve(e);
	bool owned;
	int rc;
	const cJSON *list = model_list(e, &owned, &rc, err, errlen);
	if (!list)
		return rc;
	cJSON *saved = e->models_json; /* the list stands in for "models" while it is read */
	bool given = e->models_given;
	if (owned) {
		e->models_json = (cJSON *)list;
		e->models_given = true;
	}
	rc = resolve_list(e, err, errlen);
	if (owned) {
		e->models_json = saved;
		e->models_given = given;
		cJSON_Delete((cJSON *)list);
	}
	return rc;
}

/* The message for a model name the zoo does not have, with the nearest name. */
static int not_in_zoo(const struct sym_zoo *zoo, const char *name, const char *zoo_name, const char *where,
		      const char *what, char *err, size_t errlen)
{
	struct sym_suggest sg;
	sym_suggest_init(&sg, name);
	for (size_t k = 0; k < zoo->n; k++)
		sym_suggest_consider(&sg, zoo->models[k].name);
	char dym[96] = "";
	if (sg.best)
		snprintf(dym, sizeof(dym), ": did you mean '%s'?", sg.best);
	return ERR("%s: unknown model '%s'%s in zoo '%s'%s (%zu models; see `symphony models --zoo %s`)", where, name,
		   what, zoo_name, dym, zoo->n, zoo_name);
}

/* A model object without a profile (no alpha_ms, beta_ms or latency_ms):
 * the zoo's model of that name, with the object's keys over it (a rate, an
 * SLO of its own). */
static bool zoo_object(const cJSON *it)
{
	return cJSON_IsObject(it) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(it, "name")) &&
	       !cJSON_GetObjectItemCaseSensitive(it, "alpha_ms") && !cJSON_GetObjectItemCaseSensitive(it, "beta_ms") &&
	       !cJSON_GetObjectItemCaseSensitive(it, "latency_ms");
}

static cJSON *zoo_merge(const struct sym_zoo *zoo, const cJSON *it, const char *zoo_name, const char *where, int *rc,
			char *err, size_t errlen)
{
	const char *name = cJSON_GetObjectItemCaseSensitive(it, "name")->valuestring;
	const struct sym_model_spec *s = sym_zoo_find(zoo, name);
	if (!s) {
		*rc = not_in_zoo(zoo, name, zoo_name, where, " (a model object without a profile: alpha_ms and beta_ms, "
			"or latency_ms)", err, errlen);
		return NULL;
	}
	cJSON *m = sym_model_spec_to_json(s);
	for (const cJSON *k = m ? it->child : NULL; k; k = k->next) {
		cJSON *v = cJSON_Duplicate(k, true);
		bool ok = v && (cJSON_GetObjectItemCaseSensitive(m, k->string)
					? cJSON_ReplaceItemInObjectCaseSensitive(m, k->string, v)
					: cJSON_AddItemToObject(m, k->string, v));
		if (!ok) {
			cJSON_Delete(v);
			cJSON_Delete(m);
			m = NULL;
			break;
		}
	}
	if (!m)
		*rc = ERR("out of memory");
	return m;
}

/* Loads the arrival trace and finds each served model's requests in it. */
static int resolve_trace(struct sym_experiment *e, char *err, size_t errlen)
{
	if (e->rate_csv[0] || e->nseg)
		return ERR("arrival_trace: a trace replaces the rate schedule; give one of arrival_trace, %s",
			   e->rate_csv[0] ? "rate_csv" : "segments");
	if (!e->trace_share || strcmp(e->trace_share->path, e->arrival_trace)) { /* read once per file */
		trace_release(e);
		struct sym_trace_share *sh = calloc(1, sizeof(*sh));
		if (!sh)
			return ERR("out of memory");
		int rc = sym_trace_load(e->arrival_trace, &sh->t, err, errlen);
		if (rc) {
			free(sh);
			return rc;
		}
		snprintf(sh->path, sizeof(sh->path), "%s", e->arrival_trace);
		atomic_init(&sh->refs, 1);
		e->trace_share = sh;
	}
	e->trace = &e->trace_share->t;
	if (!(e->trace_col = calloc(e->nmodels, sizeof(int))))
		return ERR("out of memory");
	for (size_t i = 0; i < e->nmodels; i++) {
		if ((e->trace_col[i] = sym_trace_find(e->trace, e->models[i].name)) >= 0)
			continue;
		struct sym_suggest sg;
		sym_suggest_init(&sg, e->models[i].name);
		for (size_t k = 0; k < e->trace->nmodels; k++)
			sym_suggest_consider(&sg, e->trace->names[k]);
		return ERR("%s: no request for model '%s' (every served model needs one%s%s%s)", e->arrival_trace,
			   e->models[i].name, sg.best ? "; the trace has '" : "", sg.best ? sg.best : "",
			   sg.best ? "'" : "");
	}
	double total = 0; /* the popularity: each model's share of the served requests */
	for (size_t i = 0; i < e->nmodels; i++)
		total += (double)e->trace->count[e->trace_col[i]];
	for (size_t i = 0; i < e->nmodels; i++)
		e->shares[i] = (double)e->trace->count[e->trace_col[i]] / total;
	return 0;
}

/* A model's SLO: the experiment's, or its own (the larger with slo_mode
 * at-least). */
static double spec_slo(const struct sym_experiment *e, const struct sym_model_spec *s)
{
	double slo = e->slo_ms > 0 ? e->slo_ms : s->slo_ms;
	if (e->slo_ms > 0 && e->slo_at_least && s->slo_ms > slo)
		slo = s->slo_ms;
	return slo;
}

/* An empty spare slot's profile on every kind: l(b) = b ms up to
 * slot_batch, no memory. Never run: it only gives the slot valid books. */
static int slot_placeholder(struct sym_experiment *e, size_t m)
{
	size_t n = e->nmodels;
	sym_model_spec_finish(&e->models[m]);
	memset(&e->models[m], 0, sizeof(e->models[m]));
	e->models[m].alpha_ms = 1;
	e->models[m].static_mb = e->models[m].dynamic_mb = 0;
	e->shares[m] = 0;
	e->model_slo_ms[m] = (double)e->slot_batch + 1;
	for (int k = 0; k < e->nkinds; k++) {
		struct sym_profile *p = &e->profiles[(size_t)k * n + m];
		sym_profile_finish(p);
		int rc = sym_profile_init_linear(p, "", 1, 0, e->slot_batch);
		if (rc)
			return rc;
		p->static_mb = p->dynamic_mb = 0;
	}
	return 0;
}

/* The runtime's spare model slots (model_slots), appended empty after the
 * models once everything else resolved: a model added to the repository
 * later fills one (sym_experiment_fill_slot). The workload features that
 * name every model (queries, prefix models, a rate table, a trace, a fixed
 * partition) do not take them. */
static int add_slots(struct sym_experiment *e, char *err, size_t errlen)
{
	if (e->queries_json || e->prefix_json || e->rate_csv[0] || e->arrival_trace[0] || e->partition.assign)
		return ERR("runtime.repository_slots: spare model slots do not go with %s; set repository_slots 0",
			   e->queries_json ? "queries" : e->prefix_json ? "prefix_models" : e->rate_csv[0] ? "rate_csv"
			   : e->arrival_trace[0] ? "arrival_trace" : "a partition's fixed assignment");
	size_t n0 = e->nmodels, k = (size_t)e->model_slots, n = n0 + k;
	int nk = e->nkinds;
	e->slot_batch = 1;
	for (size_t i = 0; i < n0 * (size_t)nk; i++)
		if (e->profiles[i].max_batch > e->slot_batch)
			e->slot_batch = e->profiles[i].max_batch;
	struct sym_model_spec *models = realloc(e->models, n * sizeof(*models));
	if (models)
		e->models = models;
	double *slo = realloc(e->model_slo_ms, n * sizeof(double));
	if (slo)
		e->model_slo_ms = slo;
	double *shares = realloc(e->shares, n * sizeof(double));
	if (shares)
		e->shares = shares;
	struct sym_profile *prof = calloc(n * (size_t)nk, sizeof(*prof));
	if (!models || !slo || !shares || !prof) {
		free(prof);
		return ERR("out of memory");
	}
	for (int j = 0; j < nk; j++) /* kind-major: each kind's block grows by k */
		memcpy(&prof[(size_t)j * n], &e->profiles[(size_t)j * n0], n0 * sizeof(*prof));
	free(e->profiles);
	e->profiles = prof;
	memset(&e->models[n0], 0, k * sizeof(*e->models));
	e->nmodels = n;
	e->slot0 = n0;
	for (size_t m = n0; m < n; m++)
		if (slot_placeholder(e, m))
			return ERR("out of memory");
	return 0;
}

void sym_experiment_clear_slot(struct sym_experiment *e, size_t m)
{
	if (m >= e->slot0 && m < e->nmodels)
		slot_placeholder(e, m); /* (the placeholder's table is small: -ENOMEM leaves max_batch 0) */
}

bool sym_experiment_slot_empty(const struct sym_experiment *e, size_t m)
{
	return m >= e->slot0 && m < e->nmodels && !e->models[m].name[0];
}

int sym_experiment_fill_slot(struct sym_experiment *e, size_t m, const cJSON *obj, bool *capped, char *err,
			     size_t errlen)
{
	*capped = false;
	if (!sym_experiment_slot_empty(e, m))
		return ERR("model slot %zu is not an empty spare slot", m);
	struct sym_model_spec spec;
	const cJSON *nm = cJSON_GetObjectItemCaseSensitive(obj, "name");
	char where[96];
	snprintf(where, sizeof(where), "model '%.60s'", cJSON_IsString(nm) ? nm->valuestring : "?");
	int rc = sym_model_spec_from_json(obj, where, &spec, err, errlen);
	if (rc)
		return rc;
	for (size_t i = 0; i < e->nmodels; i++)
		if (!strcmp(e->models[i].name, spec.name)) {
			sym_model_spec_finish(&spec);
			return ERR("%s: a model of that name is served already", where);
		}
	size_t n = e->nmodels;
	double net1 = e->ctrl_ms + e->data_ms + e->resp_ms, slo = spec_slo(e, &spec);
	if (slo <= 0) {
		sym_model_spec_finish(&spec);
		return ERR("%s has no SLO: give it \"slo_ms\" in its config.json (or start the runtime with --slo)", where);
	}
	struct sym_profile base;
	rc = sym_model_spec_profile(&spec, slo - net1, &base, err, errlen);
	if (rc == -ERANGE)
		rc = ERR("%s: its SLO (%g ms) is shorter than l(1) = %g ms%s", where, slo,
			 spec.table_ms ? spec.table_ms[0] : spec.alpha_ms + spec.beta_ms,
			 net1 > 0 ? " plus the network delays (ctrl+data+resp)" : "");
	if (rc) {
		sym_model_spec_finish(&spec);
		return rc;
	}
	sym_model_spec_finish(&e->models[m]);
	e->models[m] = spec; /* the slot's from here on (freed with the experiment) */
	e->model_slo_ms[m] = slo;
	sym_profile_finish(&e->profiles[m]);
	e->profiles[m] = base;
	for (size_t ki = 0; !rc && ki < e->ngroups; ki++)
		rc = group_profiles(e, ki, m, m + 1, net1, err, errlen);
	for (int k = 0; !rc && k < e->nkinds; k++) {
		struct sym_profile *p = &e->profiles[(size_t)k * n + m];
		if (!p->max_batch || !p->lat) {
			rc = ERR("%s: no profile on kind %s", where, e->kinds[k].name);
		} else if (p->max_batch > e->slot_batch) {
			p->max_batch = e->slot_batch; /* (its table runs further: unread) */
			*capped = true;
		}
	}
	if (!rc)
		rc = sym_experiment_check_memory(e, NULL, err, errlen);
	if (rc) {
		int prc = slot_placeholder(e, m);
		return prc ? prc : rc;
	}
	return 0;
}

static int resolve_list(struct sym_experiment *e, char *err, size_t errlen)
{
	struct sym_zoo zoo = { 0 };
	bool plain = !(e->prefix_json && !e->models_given); /* prefix models alone: no "all" */
	bool need_zoo = plain && cJSON_IsString(e->models_json);
	for (const cJSON *it = cJSON_IsArray(e->models_json) ? e->models_json->child : NULL; it; it = it->next)
		need_zoo |= cJSON_IsString(it) || zoo_object(it);
	int rc;
	if (need_zoo && (rc = sym_zoo_load(e->zoo, &zoo, err, errlen)))
		return rc;
	size_t cap = need_zoo ? zoo.n : 0;
	cap += cJSON_IsArray(e->models_json) ? (size_t)cJSON_GetArraySize(e->models_json) : 0;
	for (const cJSON *p = e->prefix_json ? e->prefix_json->child : NULL; p; p = p->next)
		cap += (size_t)cJSON_GetObjectItemCaseSensitive(p, "variants")->valueint;
	e->models = calloc(cap ? cap : 1, sizeof(*e->models));
	rc = -ENOMEM;
	if (!e->models)
		goto fail;
	if (!plain) {
		/* only the prefix models */
	} else if (cJSON_IsString(e->models_json)) {
		for (size_t i = 0; i < zoo.n; i++)
			if ((rc = add_model(e, &zoo.models[i], err, errlen)))
				goto fail;
	} else {
		int i = 0;
		for (const cJSON *it = e->models_json->child; it; it = it->next, i++) {
			struct sym_model_spec tmp;
			if (cJSON_IsString(it)) {
				const struct sym_model_spec *s = sym_zoo_find(&zoo, it->valuestring);
				if (!s) {
					rc = not_in_zoo(&zoo, it->valuestring, e->zoo, "models", "", err, errlen);
					goto fail;
				}
				rc = add_model(e, s, err, errlen);
			} else {
				char w[64];
				snprintf(w, sizeof(w), "models[%d]", i);
				cJSON *merged = NULL;
				if (zoo_object(it) && !(merged = zoo_merge(&zoo, it, e->zoo, w, &rc, err, errlen)))
					goto fail;
				rc = sym_model_spec_from_json(merged ? merged : it, w, &tmp, err, errlen);
				cJSON_Delete(merged);
				if (!rc)
					rc = add_model(e, &tmp, err, errlen);
				sym_model_spec_finish(&tmp);
			}
			if (rc)
				goto fail;
		}
	}
	e->nlisted = e->nmodels < (size_t)e->num_models || !e->num_models ? e->nmodels : (size_t)e->num_models;
	if (e->prefix_json && (rc = add_prefix_models(e, err, errlen)))
		goto fail;
	if (!e->nmodels) {
		rc = ERR("models: no model to serve (list some, or give prefix_models)");
		goto fail;
	}
	if (e->num_models > 0 && (rc = cycle_models(e))) {
		if (rc == -EEXIST)
			rc = ERR("num_models: a copy's name NAME#k is already the name of a listed model (or two "
				 "names share their first 50 characters); rename the model");
		goto fail;
	}
	size_t n = e->nmodels;
	e->slot0 = n; /* (add_slots appends the spare ones at the end) */
	if (e->gpus_per_model > 0) {
		if (e->ngroups > 1) {
			rc = ERR("gpus_per_model: the cluster has %zu device groups; set their counts instead", e->ngroups);
			goto fail;
		}
		long g = lround(e->gpus_per_model * (double)n);
		if (g > 1000000) {
			rc = ERR("gpus_per_model: %g GPUs per model x %zu models is %ld GPUs; at most 1000000", e->gpus_per_model,
				 n, g);
			goto fail;
		}
		e->gpus = g < 1 ? 1 : (int)g;
		if (e->ngroups == 1)
			e->groups[0].count = e->gpus;
	}
	int nk = e->ngroups ? (int)e->ngroups : 1;
	e->nkinds = nk;
	e->profiles = calloc(n * (size_t)nk, sizeof(*e->profiles));
	e->model_slo_ms = calloc(n, sizeof(double));
	e->shares = calloc(n, sizeof(double));
	rc = -ENOMEM;
	if (!e->profiles || !e->model_slo_ms || !e->shares)
		goto fail;
	double net1 = e->ctrl_ms + e->data_ms + e->resp_ms;
	if (e->queries_json) {
		if (e->rate_csv[0] || e->arrival_trace[0]) {
			rc = ERR("queries: a %s gives requests per model; with queries, give the total query rate "
				 "(rate or segments) and each query's share", e->rate_csv[0] ? "rate table (rate_csv)"
											: "trace (arrival_trace)");
			goto fail;
		}
		if ((rc = resolve_queries(e, err, errlen)))
			goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		struct sym_model_spec *s = &e->models[i];
		double slo = spec_slo(e, s);
		if (e->query_of && e->query_of[i] >= 0)
			slo = e->queries[e->query_of[i]].slo_ms; /* a stage: the query's (then its budget) */
		if (slo <= 0) {
			rc = ERR("model '%s' has no SLO: give one with --slo MS (or \"slo_ms\")", s->name);
			goto fail;
		}
		e->model_slo_ms[i] = slo;
		/* The table must cover every batch that can meet the SLO. */
		rc = sym_model_spec_profile(s, slo - net1, &e->profiles[i], err, errlen);
		if (rc == -ERANGE) {
			double l1 = s->table_ms ? s->table_ms[0] : s->alpha_ms + s->beta_ms;
			rc = ERR("slo_ms: the SLO of model '%s' (%g ms) is shorter than l(1) = %g ms%s%s", s->name, slo,
				 l1, net1 > 0 ? " plus the network delays " : "", net1 > 0 ? "(ctrl+data+resp)" : "");
		}
		if (rc)
			goto fail;
	}
	if ((rc = resolve_kinds(e, net1, err, errlen)))
		goto fail;
	if ((rc = check_partition(e, err, errlen)) || (rc = check_autoscale(e, err, errlen)) ||
	    (rc = sym_experiment_check_memory(e, NULL, err, errlen)))
		goto fail;
	if (e->pfx_n) {
		/* the popularity is over the variants: a merged prefix model gets its variants' shares */
		size_t nv = 0;
		for (size_t i = 0; i < n; i++)
			nv += e->pfx_n[i] ? (size_t)e->pfx_n[i] : 1;
		double *v = malloc(nv * sizeof(double));
		rc = -ENOMEM;
		if (!v)
			goto fail;
		sym_popularity_shares(&e->popularity, nv, v);
		for (size_t i = 0, k = 0; i < n; i++) {
			e->shares[i] = 0;
			for (int j = 0; j < (e->pfx_n[i] ? e->pfx_n[i] : 1); j++)
				e->shares[i] += v[k++];
		}
		free(v);
	} else {
		sym_popularity_shares(&e->popularity, n, e->shares);
	}
	if ((rc = model_rates(e, err, errlen)))
		goto fail;
	if (e->nqueries) {
		/* arrivals are the queries' roots'; the other stages' come from their parents */
		for (size_t i = 0; i < n; i++)
			e->shares[i] = 0;
		for (size_t i = 0; i < e->nqueries; i++)
			e->shares[e->queries[i].model[0]] = e->queries[i].share;
		if ((rc = plan_queries(e, err, errlen)))
			goto fail;
	}
	if (e->rate_csv[0]) {
		if ((rc = sym_rate_table_load(e->rate_csv, &e->table, err, errlen)))
			goto fail;
		e->table_col = calloc(n, sizeof(int));
		rc = -ENOMEM;
		if (!e->table_col)
			goto fail;
		for (size_t i = 0; i < n; i++) {
			e->table_col[i] = sym_rate_table_find(&e->table, e->models[i].name);
			if (e->table_col[i] < 0) {
				rc = ERR("%s: no column for model '%s' (every served model needs one)", e->rate_csv,
					 e->models[i].name);
				goto fail;
			}
		}
	}
	if (e->arrival_trace[0] && (rc = resolve_trace(e, err, errlen)))
		goto fail;
	if (e->rate_scale != 1 && !sym_experiment_has_schedule(e)) {
		rc = ERR("rate_scale: scales a rate schedule (segments, rate_csv, arrival_trace); a constant rate is "
			 "set by rate (--rate)");
		goto fail;
	}
	if (e->rate_scale != 1) { /* what a search found may be large; the load it makes is what is bounded */
		double total = 0;
		for (size_t i = 0; i < n; i++)
			total += sym_experiment_model_rate(e, i);
		if (total * e->rate_scale > SYM_RATE_MAX) {
			rc = ERR("rate_scale: %g times the schedule's mean (%g req/s) is %g req/s; at most %g", e->rate_scale,
				 total, total * e->rate_scale, SYM_RATE_MAX);
			goto fail;
		}
	}
	e->resolved = true; /* the duration may come from the rate table or the trace */
	if (e->warmup_s >= sym_experiment_duration(e)) {
		rc = ERR("warmup_s: the warm-up (%g s) must be shorter than the duration (%g s)", e->warmup_s,
			 sym_experiment_duration(e));
		goto fail;
	}
	if (e->rate_csv[0] || e->nseg) { /* (a trace gives every model a request) */
		double offered = 0;
		for (size_t i = 0; i < e->nseg; i++)
			offered += e->segments[i].rate;
		for (size_t r = 0; e->rate_csv[0] && r < e->table.nrows; r++)
			for (size_t m = 0; m < n; m++)
				offered += e->table.rates[r * e->table.ncols + (size_t)e->table_col[m]];
		if (!(offered > 0)) {
			rc = ERR("%s: the rate schedule offers no requests (every rate is 0)",
				 e->rate_csv[0] ? e->rate_csv : "segments");
			goto fail;
		}
	}
	if (e->model_slots > 0 && (rc = add_slots(e, err, errlen)))
		goto fail;
	sym_zoo_finish(&zoo);
	e->resolved = true;
	return 0;
fail:
	sym_zoo_finish(&zoo);
	unresolve(e);
	return rc;
}

/* Resolving parses JSON (zoo files), and cJSON keeps its last parse error in
 * a global: one experiment at a time resolves. */
static pthread_mutex_t resolve_mu = PTHREAD_MUTEX_INITIALIZER;

int sym_experiment_resolve(struct sym_experiment *e, char *err, size_t errlen)
{
	pthread_mutex_lock(&resolve_mu);
	int rc = resolve(e, err, errlen);
	pthread_mutex_unlock(&resolve_mu);
	return rc;
}

int sym_experiment_copy(struct sym_experiment *dst, const struct sym_experiment *src, char *err, size_t errlen)
{
	*dst = *src; /* the values; then the owned parts of their own */
	dst->models_json = NULL;
	dst->groups = NULL;
	dst->segments = NULL;
	dst->resolved = false;
	dst->nmodels = dst->nlisted = 0;
	dst->models = NULL;
	dst->nkinds = 0;
	dst->gpu_kind = NULL;
	dst->profiles = NULL;
	dst->model_slo_ms = dst->shares = NULL;
	memset(&dst->table, 0, sizeof(dst->table));
	dst->table_col = NULL;
	dst->trace_col = NULL; /* the trace is shared, read-only */
	if (dst->trace_share)
		atomic_fetch_add(&dst->trace_share->refs, 1);
	dst->nqueries = 0;
	dst->queries = NULL;
	dst->query_of = dst->stage_of = NULL;
	dst->partition.assign = NULL;
	dst->queries_json = NULL;
	dst->prefix_json = NULL;
	dst->pfx_n = NULL;
	dst->pfx_sbeta_ms = NULL;
	if ((src->queries_json && !(dst->queries_json = cJSON_Duplicate(src->queries_json, true))) ||
	    (src->prefix_json && !(dst->prefix_json = cJSON_Duplicate(src->prefix_json, true))))
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	dst->models_json = cJSON_Duplicate(src->models_json, true);
	if (src->partition.assign) {
		dst->partition.assign = malloc(src->partition.nassign * sizeof(int));
		if (!dst->partition.assign)
			return snprintf(err, errlen, "out of memory"), -ENOMEM;
		memcpy(dst->partition.assign, src->partition.assign, src->partition.nassign * sizeof(int));
	}
	if (src->ngroups)
		dst->groups = malloc(src->ngroups * sizeof(*dst->groups));
	if (src->nseg)
		dst->segments = malloc(src->nseg * sizeof(*dst->segments));
	if (!dst->models_json || (src->ngroups && !dst->groups) || (src->nseg && !dst->segments))
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	if (src->ngroups)
		memcpy(dst->groups, src->groups, src->ngroups * sizeof(*dst->groups));
	if (src->nseg)
		memcpy(dst->segments, src->segments, src->nseg * sizeof(*dst->segments));
	return src->resolved ? sym_experiment_resolve(dst, err, errlen) : 0;
}

cJSON *sym_experiment_to_json(const struct sym_experiment *e)
{
	char buf[128];
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "zoo", e->zoo);
	/* with num_models, the list before repetition: the copies follow from it; the prefix models' own
	 * entries follow from prefix_models */
	size_t nout = e->num_models > 0 || e->prefix_json ? e->nlisted : e->slot0; /* (no spare slot) */
	cJSON *models = nout || !e->prefix_json ? cJSON_AddArrayToObject(o, "models") : NULL;
	for (size_t i = 0; i < nout; i++) {
		cJSON *m = sym_model_spec_to_json(&e->models[i]);
		cJSON_DeleteItemFromObjectCaseSensitive(m, "slo_ms");
		cJSON_AddNumberToObject(m, "slo_ms", e->model_slo_ms[i]);
		cJSON_AddItemToArray(models, m);
	}
	if (e->slo_ms > 0)
		cJSON_AddNumberToObject(o, "slo_ms", e->slo_ms);
	if (e->slo_at_least)
		cJSON_AddStringToObject(o, "slo_mode", "at-least");
	cJSON_AddNumberToObject(o, "gpus", e->gpus);
	if (e->num_models > 0)
		cJSON_AddNumberToObject(o, "num_models", e->num_models);
	if (e->gpus_per_model > 0)
		cJSON_AddNumberToObject(o, "gpus_per_model", e->gpus_per_model);
	if (e->ngroups) {
		cJSON *cl = cJSON_AddArrayToObject(o, "cluster");
		for (size_t i = 0; i < e->ngroups; i++) {
			const struct sym_gpu_group *gr = &e->groups[i];
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "kind", gr->kind);
			cJSON_AddNumberToObject(x, "count", gr->count);
			if (gr->zoo[0])
				cJSON_AddStringToObject(x, "zoo", gr->zoo);
			if (gr->scale > 0)
				cJSON_AddNumberToObject(x, "scale", gr->scale);
			if (gr->memory_mb > 0)
				cJSON_AddNumberToObject(x, "memory_mb", gr->memory_mb);
			if (gr->cpu >= 0)
				cJSON_AddBoolToObject(x, "cpu", gr->cpu);
			cJSON_AddItemToArray(cl, x);
		}
	}
	cJSON_AddNumberToObject(o, "rate", e->rate);
	cJSON_AddStringToObject(o, "arrival", sym_arrival_format(&e->arrival, buf, sizeof(buf)));
	cJSON_AddStringToObject(o, "popularity", sym_popularity_format(&e->popularity, buf, sizeof(buf)));
	cJSON *segs = cJSON_AddArrayToObject(o, "segments");
	for (size_t i = 0; i < e->nseg; i++) {
		cJSON *s = cJSON_CreateObject();
		cJSON_AddNumberToObject(s, "duration_s", sym_to_s(e->segments[i].duration));
		cJSON_AddNumberToObject(s, "rate", e->segments[i].rate);
		cJSON_AddItemToArray(segs, s);
	}
	cJSON_AddStringToObject(o, "rate_csv", e->rate_csv);
	if (e->arrival_trace[0])
		cJSON_AddStringToObject(o, "arrival_trace", e->arrival_trace);
	if (e->rate_scale != 1)
		cJSON_AddNumberToObject(o, "rate_scale", e->rate_scale);
	cJSON_AddStringToObject(o, "policy", sym_policy_format(&e->policy, buf, sizeof(buf)));
	cJSON_AddStringToObject(o, "drop", sym_gather_format(&e->gather, buf, sizeof(buf)));
	cJSON *net = cJSON_AddObjectToObject(o, "network");
	cJSON_AddNumberToObject(net, "ctrl_ms", e->ctrl_ms);
	cJSON_AddNumberToObject(net, "data_ms", e->data_ms);
	cJSON_AddNumberToObject(net, "resp_ms", e->resp_ms);
	if (e->done_ms > 0)
		cJSON_AddNumberToObject(net, "done_ms", e->done_ms);
	if (e->tail_ms > 0)
		cJSON_AddNumberToObject(net, "tail_ms", e->tail_ms);
	cJSON_AddBoolToObject(o, "send_ahead", e->send_ahead);
	cJSON_AddNumberToObject(o, "jitter", e->jitter);
	if (e->late_p99_ms > 0) {
		cJSON *late = cJSON_AddArrayToObject(o, "start_late_ms");
		cJSON_AddItemToArray(late, cJSON_CreateNumber(e->late_p50_ms));
		cJSON_AddItemToArray(late, cJSON_CreateNumber(e->late_p99_ms));
	}
	if (e->size_cv > 0)
		cJSON_AddNumberToObject(o, "size_cv", e->size_cv);
	cJSON_AddNumberToObject(o, "duration_s", sym_experiment_duration(e));
	cJSON_AddNumberToObject(o, "warmup_s", e->warmup_s);
	cJSON_AddNumberToObject(o, "seed", (double)e->seed);
	cJSON_AddNumberToObject(o, "interval_s", e->interval_s);
	cJSON_AddNumberToObject(o, "advice_threshold", e->advice_threshold);
	cJSON_AddNumberToObject(o, "max_bad_rate", e->max_bad_rate);
	cJSON_AddNumberToObject(o, "tolerance", e->tolerance);
	cJSON_AddStringToObject(o, "criterion", sym_criterion_name(e->criterion));
	cJSON_AddNumberToObject(o, "replications", e->replications);
	cJSON_AddBoolToObject(o, "memory_check", e->memory_check);
	if (e->queries_json)
		cJSON_AddItemToObject(o, "queries", cJSON_Duplicate(e->queries_json, true));
	if (e->prefix_json) {
		cJSON_AddItemToObject(o, "prefix_models", cJSON_Duplicate(e->prefix_json, true));
		cJSON_AddBoolToObject(o, "prefix_batching", e->prefix_batching);
	}
	const struct sym_partition_cfg *p = &e->partition;
	if (p->subclusters > 0) {
		cJSON *x = cJSON_AddObjectToObject(o, "partition");
		cJSON_AddNumberToObject(x, "subclusters", p->subclusters);
		if (p->r_max > 0)
			cJSON_AddNumberToObject(x, "r_max", p->r_max);
		if (p->s_max > 0)
			cJSON_AddNumberToObject(x, "s_max", p->s_max);
		if (p->w > 0)
			cJSON_AddNumberToObject(x, "w", p->w);
		cJSON_AddNumberToObject(x, "time_limit_s", p->time_limit_s);
		cJSON_AddNumberToObject(x, "epoch_s", p->epoch_s);
		if (p->phase_s > 0)
			cJSON_AddNumberToObject(x, "phase_s", p->phase_s);
		if (p->c_max >= 0)
			cJSON_AddNumberToObject(x, "c_max", p->c_max);
		cJSON_AddNumberToObject(x, "noise_sigmas", p->noise_sigmas);
		cJSON_AddNumberToObject(x, "load_mbps", p->load_mbps);
		cJSON_AddNumberToObject(x, "load_ms", p->load_ms);
		if (p->assign)
			cJSON_AddItemToObject(x, "assign", cJSON_CreateIntArray(p->assign, (int)p->nassign));
	}
	const struct sym_autoscale_cfg *a = &e->autoscale;
	if (a->on) {
		cJSON *x = cJSON_AddObjectToObject(o, "autoscale");
		cJSON_AddNumberToObject(x, "interval_s", a->interval_s);
		cJSON_AddNumberToObject(x, "threshold", a->threshold);
		cJSON_AddNumberToObject(x, "provision_s", a->provision_s);
		cJSON_AddNumberToObject(x, "min_gpus", a->min_gpus);
		cJSON_AddNumberToObject(x, "max_gpus", a->max_gpus);
		cJSON_AddNumberToObject(x, "start_gpus", a->start_gpus);
		cJSON_AddNumberToObject(x, "cooldown_s", a->cooldown_s);
		cJSON_AddStringToObject(x, "policy", sym_scale_rule_name(a->policy));
		cJSON_AddNumberToObject(x, "target", a->target);
		cJSON_AddNumberToObject(x, "release_fraction", a->release_fraction);
		cJSON_AddNumberToObject(x, "phase_s", a->phase_s);
	}
	return o;
}

int sym_experiment_arrivals(const struct sym_experiment *e, double rate, struct sym_arrivals *arr)
{
	for (size_t m = 0; m < e->nmodels; m++) {
		int rc;
		uint64_t stream = m;
		if (e->arrival_trace[0]) {
			const struct sym_trace *t = e->trace;
			int c = e->trace_col[m];
			rc = sym_arrivals_init_replay(&arr[m], t->times[c], t->sizes ? t->sizes[c] : NULL, t->count[c],
						      t->length, rate, e->seed, stream);
		} else if (e->rate_csv[0]) {
			struct sym_rate_segment *seg = NULL;
			size_t nseg = 0;
			rc = sym_rate_table_segments(&e->table, (size_t)e->table_col[m], &seg, &nseg);
			if (!rc)
				rc = sym_arrivals_init(&arr[m], &e->arrival, rate, seg, nseg, e->seed, stream);
			free(seg);
		} else if (e->nseg) {
			rc = sym_arrivals_init(&arr[m], &e->arrival, rate * e->shares[m], e->segments, e->nseg,
					       e->seed, stream);
		} else {
			rc = sym_arrivals_init(&arr[m], &e->arrival, rate * e->shares[m], NULL, 0, e->seed, stream);
		}
		if (rc)
			return rc;
	}
	return 0;
}
