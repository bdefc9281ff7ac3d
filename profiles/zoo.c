#include "profiles/zoo.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"

const char *sym_json_type(const cJSON *v)
{
	if (!v)
		return "nothing";
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsArray(v))
		return "an array";
	if (cJSON_IsObject(v))
		return "an object";
	return "an invalid value";
}

cJSON *sym_json_parse(const char *text, const char *origin, char *err, size_t errlen)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithOpts(text, &end, true);
	if (!root) {
		size_t off = end ? (size_t)(end - text) : 0;
		int line = 1;
		for (size_t i = 0; i < off && text[i]; i++)
			line += text[i] == '\n';
		snprintf(err, errlen, "%s:%d: malformed JSON near byte %zu", origin, line, off);
	}
	return root;
}

int sym_read_file(const char *path, char **out)
{
	*out = NULL;
	bool in = !strcmp(path, "-");
	FILE *f = in ? stdin : fopen(path, "rb");
	if (!f)
		return errno == ENOENT ? -ENOENT : errno == EACCES ? -EACCES : -EIO;
	struct stat st;
	if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
		if (!in)
			fclose(f);
		return -EISDIR;
	}
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	int rc = buf ? 0 : -ENOMEM;
	size_t got;
	while (!rc && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (cap - len - 1 > 0)
			continue;
		char *nb = cap >= SYM_READ_FILE_MAX ? NULL : realloc(buf, cap * 2);
		if (!nb)
			rc = cap >= SYM_READ_FILE_MAX ? -EFBIG : -ENOMEM;
		else
			buf = nb, cap *= 2;
	}
	if (!rc && ferror(f))
		rc = -EIO;
	if (!in)
		fclose(f);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

static int num(const cJSON *obj, const char *key, const char *where, double min, bool strict_min, double max,
	       double *out, char *err, size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!v)
		return 1; /* absent */
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
	    (strict_min ? v->valuedouble <= min : v->valuedouble < min) || v->valuedouble > max) {
		char got[64];
		if (cJSON_IsNumber(v))
			snprintf(got, sizeof(got), "%g", v->valuedouble);
		else
			snprintf(got, sizeof(got), "%s", sym_json_type(v));
		snprintf(err, errlen, "%s: key '%s': expected a number %s %g and <= %g, got %s", where, key,
			 strict_min ? ">" : ">=", min, max, got);
		return -EINVAL;
	}
	*out = v->valuedouble;
	return 0;
}

static const char *const model_keys[] = {
	"name", "alpha_ms", "beta_ms", "latency_ms", "max_batch", "slo_ms",
	"static_mb", "dynamic_mb", "file_mb", "size_cv", "rate", "share", NULL,
};

int sym_model_spec_from_json(const cJSON *obj, const char *where, struct sym_model_spec *out,
			     char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->alpha_ms = out->beta_ms = NAN;
	out->static_mb = out->dynamic_mb = out->file_mb = -1;
	if (!cJSON_IsObject(obj)) {
		snprintf(err, errlen, "%s: expected a model object, got %s", where, sym_json_type(obj));
		return -EINVAL;
	}
	for (const cJSON *it = obj->child; it; it = it->next) {
		bool known = false;
		for (int i = 0; model_keys[i]; i++)
			known |= !strcmp(it->string, model_keys[i]);
		if (!known) {
			snprintf(err, errlen,
				 "%s: unknown key '%s' (expected name, alpha_ms, beta_ms, latency_ms, "
				 "max_batch, slo_ms, static_mb, dynamic_mb, file_mb, size_cv, rate, share)", where, it->string);
			return -EINVAL;
		}
	}
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "name");
	if (!cJSON_IsString(name) || !name->valuestring[0] ||
	    strlen(name->valuestring) >= sizeof(out->name)) {
		snprintf(err, errlen, "%s: key 'name': expected a non-empty string of at most %zu characters, got %s",
			 where, sizeof(out->name) - 1, sym_json_type(name));
		return -EINVAL;
	}
	snprintf(out->name, sizeof(out->name), "%s", name->valuestring);
	int e;
	const cJSON *table = cJSON_GetObjectItemCaseSensitive(obj, "latency_ms");
	if (table) {
		if (cJSON_GetObjectItemCaseSensitive(obj, "alpha_ms") ||
		    cJSON_GetObjectItemCaseSensitive(obj, "beta_ms") ||
		    cJSON_GetObjectItemCaseSensitive(obj, "max_batch")) {
			snprintf(err, errlen, "%s: key 'latency_ms': a table profile takes no alpha_ms, beta_ms or max_batch "
				 "(its length is the maximum batch)", where);
			return -EINVAL;
		}
		int n = cJSON_GetArraySize(table);
		if (!cJSON_IsArray(table) || n < 1 || n > SYM_PROFILE_BATCH_LIMIT) {
			snprintf(err, errlen, "%s: key 'latency_ms': expected an array of 1 to %d latencies "
				 "(ms, l(1), l(2), ...), got %s", where, SYM_PROFILE_BATCH_LIMIT, sym_json_type(table));
			return -EINVAL;
		}
		out->table_ms = malloc((size_t)n * sizeof(double));
		if (!out->table_ms)
			return -ENOMEM;
		out->ntable = n;
		int i = 0;
		for (const cJSON *it = table->child; it; it = it->next, i++) {
			if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble < SYM_LATENCY_MIN_MS ||
			    it->valuedouble > SYM_LATENCY_MAX_MS || (i > 0 && it->valuedouble < out->table_ms[i - 1])) {
				snprintf(err, errlen, "%s: key 'latency_ms[%d]': expected a number from %g to %g ms and >= the "
					 "previous entry (latency must not decrease with batch size)", where, i,
					 SYM_LATENCY_MIN_MS, SYM_LATENCY_MAX_MS);
				sym_model_spec_finish(out);
				return -EINVAL;
			}
			out->table_ms[i] = it->valuedouble;
		}
	} else {
		double a = NAN, b = NAN;
		e = num(obj, "alpha_ms", where, 0, false, SYM_LATENCY_MAX_MS, &a, err, errlen);
		if (e < 0)
			return e;
		if (e > 0) {
			snprintf(err, errlen, "%s: key 'alpha_ms' is missing (a model needs alpha_ms and beta_ms, "
				 "or latency_ms)", where);
			return -EINVAL;
		}
		e = num(obj, "beta_ms", where, 0, false, SYM_LATENCY_MAX_MS, &b, err, errlen);
		if (e < 0)
			return e;
		if (e > 0) {
			snprintf(err, errlen, "%s: key 'beta_ms' is missing (a model needs alpha_ms and beta_ms, "
				 "or latency_ms)", where);
			return -EINVAL;
		}
		if (!(a + b >= SYM_LATENCY_MIN_MS)) {
			snprintf(err, errlen, "%s: keys 'alpha_ms' and 'beta_ms': l(1) = alpha + beta must be >= %g ms (the "
				 "simulator counts nanoseconds; a batch taking no time would make capacity infinite), got %g",
				 where, SYM_LATENCY_MIN_MS, a + b);
			return -EINVAL;
		}
		out->alpha_ms = a;
		out->beta_ms = b;
		double mb = 0;
		e = num(obj, "max_batch", where, 1, false, SYM_PROFILE_BATCH_LIMIT, &mb, err, errlen);
		if (e < 0)
			return e;
		if (!e && (mb != floor(mb) || mb > SYM_PROFILE_BATCH_LIMIT)) {
			snprintf(err, errlen, "%s: key 'max_batch': expected an integer from 1 to %d, got %g", where,
				 SYM_PROFILE_BATCH_LIMIT, mb);
			return -EINVAL;
		}
		out->max_batch = (int)mb;
	}
	const char *opt[] = { "slo_ms", "static_mb", "dynamic_mb", "file_mb", "size_cv", "rate", "share" };
	double *dst[] = { &out->slo_ms,	 &out->static_mb, &out->dynamic_mb, &out->file_mb,
			  &out->size_cv, &out->rate,	  &out->share };
	const double hi[] = { SYM_LATENCY_MAX_MS, 1e9, 1e9, 1e9, SYM_SIZE_CV_MAX, 1e9, 1e9 };
	for (int i = 0; i < 7; i++) {
		e = num(obj, opt[i], where, 0, i == 0 || i >= 5, hi[i], dst[i], err, errlen);
		if (e < 0) {
			sym_model_spec_finish(out);
			return e;
		}
	}
	return 0;
}

cJSON *sym_model_spec_to_json(const struct sym_model_spec *s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", s->name);
	if (s->table_ms) {
		cJSON_AddItemToObject(o, "latency_ms", cJSON_CreateDoubleArray(s->table_ms, s->ntable));
	} else {
		cJSON_AddNumberToObject(o, "alpha_ms", s->alpha_ms);
		cJSON_AddNumberToObject(o, "beta_ms", s->beta_ms);
		if (s->max_batch)
			cJSON_AddNumberToObject(o, "max_batch", s->max_batch);
	}
	if (s->slo_ms > 0)
		cJSON_AddNumberToObject(o, "slo_ms", s->slo_ms);
	if (s->static_mb >= 0)
		cJSON_AddNumberToObject(o, "static_mb", s->static_mb);
	if (s->dynamic_mb >= 0)
		cJSON_AddNumberToObject(o, "dynamic_mb", s->dynamic_mb);
	if (s->file_mb >= 0)
		cJSON_AddNumberToObject(o, "file_mb", s->file_mb);
	if (s->size_cv > 0)
		cJSON_AddNumberToObject(o, "size_cv", s->size_cv);
	if (s->rate > 0)
		cJSON_AddNumberToObject(o, "rate", s->rate);
	if (s->share > 0)
		cJSON_AddNumberToObject(o, "share", s->share);
	return o;
}

int sym_model_spec_copy(struct sym_model_spec *dst, const struct sym_model_spec *src)
{
	*dst = *src;
	if (src->table_ms) {
		dst->table_ms = malloc((size_t)src->ntable * sizeof(double));
		if (!dst->table_ms)
			return -ENOMEM;
		memcpy(dst->table_ms, src->table_ms, (size_t)src->ntable * sizeof(double));
	}
	return 0;
}

void sym_model_spec_finish(struct sym_model_spec *s)
{
	if (!s)
		return;
	free(s->table_ms);
	s->table_ms = NULL;
}

int sym_model_spec_profile(const struct sym_model_spec *s, double slo_ms, struct sym_profile *out,
			   char *err, size_t errlen)
{
	int e;
	if (s->table_ms) {
		if (s->table_ms[0] > slo_ms) {
			snprintf(err, errlen, "model '%s': SLO %g ms is shorter than l(1) = %g ms", s->name, slo_ms,
				 s->table_ms[0]);
			return -ERANGE;
		}
		e = sym_profile_init_table(out, s->name, s->table_ms, s->ntable);
	} else {
		int limit = sym_profile_linear_batch_limit(s->alpha_ms, s->beta_ms, slo_ms);
		if (limit < 1) {
			snprintf(err, errlen, "model '%s': SLO %g ms is shorter than l(1) = %g ms", s->name, slo_ms,
				 s->alpha_ms + s->beta_ms);
			return -ERANGE;
		}
		e = sym_profile_init_linear(out, s->name, s->alpha_ms, s->beta_ms, s->max_batch ? s->max_batch : limit);
	}
	if (e) {
		snprintf(err, errlen, "model '%s': %s", s->name, sym_strerror(e));
		return e;
	}
	out->slo_ms = s->slo_ms;
	out->static_mb = s->static_mb;
	out->dynamic_mb = s->dynamic_mb;
	return 0;
}

int sym_zoo_parse(const char *text, const char *origin, struct sym_zoo *z, char *err, size_t errlen)
{
	memset(z, 0, sizeof(*z));
	cJSON *root = sym_json_parse(text, origin, err, errlen);
	if (!root)
		return -EINVAL;
	int rc = -EINVAL;
	if (!cJSON_IsObject(root)) {
		snprintf(err, errlen, "%s: expected a JSON object with \"gpu\" and \"models\", got %s", origin,
			 sym_json_type(root));
		goto out;
	}
	for (const cJSON *it = root->child; it; it = it->next) {
		if (strcmp(it->string, "gpu") && strcmp(it->string, "source") && strcmp(it->string, "models")) {
			snprintf(err, errlen, "%s: unknown key '%s' (expected gpu, source, models)", origin, it->string);
			goto out;
		}
	}
	const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(root, "gpu");
	if (gpu && (!cJSON_IsString(gpu) || strlen(gpu->valuestring) >= sizeof(z->gpu))) {
		snprintf(err, errlen, "%s: key 'gpu': expected a short string, got %s", origin, sym_json_type(gpu));
		goto out;
	}
	if (gpu)
		snprintf(z->gpu, sizeof(z->gpu), "%s", gpu->valuestring);
	const cJSON *models = cJSON_GetObjectItemCaseSensitive(root, "models");
	if (!cJSON_IsArray(models) || cJSON_GetArraySize(models) < 1) {
		snprintf(err, errlen, "%s: key 'models': expected a non-empty array of model objects, got %s",
			 origin, sym_json_type(models));
		goto out;
	}
	size_t n = (size_t)cJSON_GetArraySize(models);
	z->models = calloc(n, sizeof(*z->models));
	if (!z->models) {
		rc = -ENOMEM;
		goto out;
	}
	for (const cJSON *it = models->child; it; it = it->next) {
		char where[512];
		snprintf(where, sizeof(where), "%s: models[%zu]", origin, z->n);
		rc = sym_model_spec_from_json(it, where, &z->models[z->n], err, errlen);
		if (rc)
			goto out;
		if (sym_zoo_find(z, z->models[z->n].name)) {
			snprintf(err, errlen, "%s: model '%s' appears twice", where, z->models[z->n].name);
			sym_model_spec_finish(&z->models[z->n]);
			rc = -EINVAL;
			goto out;
		}
		z->n++;
	}
	rc = 0;
out:
	cJSON_Delete(root);
	if (rc)
		sym_zoo_finish(z);
	return rc;
}

int sym_zoo_load(const char *name_or_path, struct sym_zoo *z, char *err, size_t errlen)
{
	for (int i = 0; sym_zoo_builtins[i].name; i++)
		if (!strcmp(sym_zoo_builtins[i].name, name_or_path))
			return sym_zoo_parse(sym_zoo_builtins[i].json, name_or_path, z, err, errlen);
	char *text = NULL;
	int e = sym_read_file(name_or_path, &text);
	if (e) {
		memset(z, 0, sizeof(*z));
		snprintf(err, errlen, "%s: cannot read profile file: %s (built-in zoos: a100, gtx1080ti)",
			 name_or_path, e == -ENOENT ? "no such file" : sym_strerror(e));
		return e;
	}
	e = sym_zoo_parse(text, name_or_path, z, err, errlen);
	free(text);
	return e;
}

const struct sym_model_spec *sym_zoo_find(const struct sym_zoo *z, const char *name)
{
	for (size_t i = 0; i < z->n; i++)
		if (!strcmp(z->models[i].name, name))
			return &z->models[i];
	return NULL;
}

void sym_zoo_finish(struct sym_zoo *z)
{
	if (!z)
		return;
	for (size_t i = 0; i < z->n; i++)
		sym_model_spec_finish(&z->models[i]);
	free(z->models);
	memset(z, 0, sizeof(*z));
}
