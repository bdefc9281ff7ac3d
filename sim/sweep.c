#include "sim/sweep.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/grow.h"
#include "experiment/output.h"
#include "experiment/result.h"
#include "sim/engine.h"
#include "sim/goodput.h"
#include "sym_version.h"

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

void sym_grid_finish(struct sym_grid *g)
{
	if (!g)
		return;
	cJSON_Delete(g->base);
	cJSON_Delete(g->over);
	for (size_t a = 0; a < g->naxes; a++) {
		free(g->axes[a].key);
		cJSON_Delete(g->axes[a].values);
	}
	free(g->axes);
	memset(g, 0, sizeof(*g));
}

/* g->id: FNV-1a over the canonical text of base, compute, axes and (when
 * set) the command line's keys. Returns 0 or -ENOMEM (g finished). */
static int fingerprint(struct sym_grid *g)
{
	cJSON *canon = cJSON_CreateObject();
	cJSON *axes = cJSON_CreateObject();
	char *text = NULL;
	for (size_t a = 0; axes && a < g->naxes; a++)
		cJSON_AddItemToObject(axes, g->axes[a].key, cJSON_Duplicate(g->axes[a].values, true));
	if (canon && axes) {
		cJSON_AddItemToObject(canon, "base", cJSON_Duplicate(g->base, true));
		cJSON_AddNumberToObject(canon, "compute", g->compute);
		cJSON_AddItemToObject(canon, "axes", axes);
		axes = NULL;
		if (g->over && g->over->child)
			cJSON_AddItemToObject(canon, "options", cJSON_Duplicate(g->over, true));
		text = cJSON_PrintUnformatted(canon);
	}
	cJSON_Delete(canon);
	cJSON_Delete(axes);
	if (!text) {
		sym_grid_finish(g);
		return -ENOMEM;
	}
	uint64_t h = 0xcbf29ce484222325ull;
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	free(text);
	snprintf(g->id, sizeof(g->id), "%016llx", (unsigned long long)h);
	return 0;
}

int sym_grid_parse(const cJSON *root, const char *origin, const char *default_name, struct sym_grid *g,
		   char *err, size_t errlen)
{
	memset(g, 0, sizeof(*g));
	if (!cJSON_IsObject(root))
		return ERR("%s: expected a grid object {\"base\": ..., \"axes\": ...}, got %s", origin,
			   sym_json_type(root));
	for (const cJSON *it = root->child; it; it = it->next)
		if (strcmp(it->string, "name") && strcmp(it->string, "base") && strcmp(it->string, "compute") &&
		    strcmp(it->string, "axes") && strcmp(it->string, "description"))
			return ERR("%s: unknown key '%s' (a grid has name, description, base, compute and axes)",
				   origin, it->string);
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
	if (name && (!cJSON_IsString(name) || !name->valuestring[0] || strlen(name->valuestring) >= sizeof(g->name)))
		return ERR("%s: key 'name': expected a non-empty string of at most %zu characters", origin,
			   sizeof(g->name) - 1);
	snprintf(g->name, sizeof(g->name), "%s", name ? name->valuestring : default_name);
	if (strchr(g->name, '/') || !strcmp(g->name, ".") || !strcmp(g->name, ".."))
		return ERR("%s: key 'name': '%s' names output directories: no '/', '.' or '..'", origin, g->name);
	const cJSON *base = cJSON_GetObjectItemCaseSensitive(root, "base");
	if (base && !cJSON_IsObject(base))
		return ERR("%s: key 'base': expected an object of configuration keys (or a config file path), got %s",
			   origin, sym_json_type(base));
	g->base = base ? cJSON_Duplicate(base, true) : cJSON_CreateObject();
	if (!g->base)
		return -ENOMEM;
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "compute");
	if (!c || (cJSON_IsString(c) && !strcmp(c->valuestring, "goodput"))) {
		g->compute = SYM_COMPUTE_GOODPUT;
	} else if (cJSON_IsString(c) && !strcmp(c->valuestring, "sim")) {
		g->compute = SYM_COMPUTE_SIM;
	} else {
		sym_grid_finish(g);
		return ERR("%s: key 'compute': expected \"goodput\" (the goodput search) or \"sim\" (one run at the "
			   "configured rate)", origin);
	}
	const cJSON *axes = cJSON_GetObjectItemCaseSensitive(root, "axes");
	if (axes && !cJSON_IsObject(axes)) {
		sym_grid_finish(g);
		return ERR("%s: key 'axes': expected an object {KEY: [values...], ...}, got %s", origin,
			   sym_json_type(axes));
	}
	size_t n = axes ? (size_t)cJSON_GetArraySize(axes) : 0;
	g->axes = calloc(n ? n : 1, sizeof(*g->axes));
	if (!g->axes) {
		sym_grid_finish(g);
		return -ENOMEM;
	}
	g->npoints = 1;
	for (const cJSON *it = axes ? axes->child : NULL; it; it = it->next) {
		int rc = 0;
		int nv = cJSON_GetArraySize(it);
		if (!cJSON_IsArray(it) || nv == 0) {
			rc = ERR("%s: axis '%s': expected a non-empty array of values, got %s", origin, it->string,
				 cJSON_IsArray(it) ? "an empty array" : sym_json_type(it));
		} else if (it->string[0] == '@') {
			int j = 0;
			for (const cJSON *v = it->child; v && !rc; v = v->next, j++)
				if (!cJSON_IsObject(v))
					rc = ERR("%s: axis '%s' value %d: a '@' axis takes objects of configuration keys, "
						 "got %s", origin, it->string, j, sym_json_type(v));
		}
		for (size_t a = 0; a < g->naxes && !rc; a++)
			if (!strcmp(g->axes[a].key, it->string))
				rc = ERR("%s: axis '%s' is given twice", origin, it->string);
		if (!rc && g->npoints > SYM_GRID_MAX_POINTS / (size_t)nv)
			rc = ERR("%s: the grid has more than %d points", origin, SYM_GRID_MAX_POINTS);
		if (rc) {
			sym_grid_finish(g);
			return rc;
		}
		struct sym_axis *ax = &g->axes[g->naxes++];
		ax->key = strdup(it->string);
		ax->values = cJSON_Duplicate(it, true);
		ax->n = (size_t)nv;
		if (!ax->key || !ax->values) {
			sym_grid_finish(g);
			return -ENOMEM;
		}
		g->npoints *= ax->n;
	}
	return fingerprint(g);
}

int sym_grid_override(struct sym_grid *g, const char *key, cJSON *value)
{
	if (!value || (!g->over && !(g->over = cJSON_CreateObject()))) {
		cJSON_Delete(value);
		return -ENOMEM;
	}
	if (cJSON_GetObjectItemCaseSensitive(g->over, key))
		cJSON_ReplaceItemInObjectCaseSensitive(g->over, key, value);
	else
		cJSON_AddItemToObject(g->over, key, value);
	return fingerprint(g);
}

int sym_grid_load(const char *path, struct sym_grid *g, char *err, size_t errlen)
{
	memset(g, 0, sizeof(*g));
	char *text = NULL;
	int rc = sym_read_file(path, &text);
	if (rc)
		return snprintf(err, errlen, "%s: cannot read grid file: %s", path,
				rc == -ENOENT ? "no such file" : sym_strerror(rc)), rc;
	cJSON *root = sym_json_parse(text, path, err, errlen);
	free(text);
	if (!root)
		return -EINVAL;
	/* the default name: the file's base name without its extension */
	char name[128];
	const char *slash = strrchr(path, '/');
	snprintf(name, sizeof(name), "%s", slash ? slash + 1 : path);
	char *dot = strrchr(name, '.');
	if (dot && dot != name)
		*dot = 0;
	/* a base given as a path: that config file, relative to the grid file */
	cJSON *base = cJSON_GetObjectItemCaseSensitive(root, "base");
	if (cJSON_IsString(base)) {
		char bpath[2048];
		if (base->valuestring[0] == '/' || !slash)
			snprintf(bpath, sizeof(bpath), "%s", base->valuestring);
		else
			snprintf(bpath, sizeof(bpath), "%.*s/%s", (int)(slash - path), path, base->valuestring);
		char *btext = NULL;
		rc = sym_read_file(bpath, &btext);
		if (rc) {
			cJSON_Delete(root);
			return snprintf(err, errlen, "%s: key 'base': cannot read config file %s: %s", path, bpath,
					rc == -ENOENT ? "no such file" : sym_strerror(rc)), rc;
		}
		cJSON *b = sym_json_parse(btext, bpath, err, errlen);
		free(btext);
		if (!b) {
			cJSON_Delete(root);
			return -EINVAL;
		}
		cJSON_ReplaceItemInObjectCaseSensitive(root, "base", b);
	}
	rc = sym_grid_parse(root, path, name, g, err, errlen);
	cJSON_Delete(root);
	return rc;
}

/* The value index of axis a at point i (the last axis varies fastest). */
static size_t axis_index(const struct sym_grid *g, size_t a, size_t i)
{
	size_t stride = 1;
	for (size_t b = a + 1; b < g->naxes; b++)
		stride *= g->axes[b].n;
	return (i / stride) % g->axes[a].n;
}

cJSON *sym_grid_point_key(const struct sym_grid *g, size_t i)
{
	cJSON *key = cJSON_CreateObject();
	for (size_t a = 0; key && a < g->naxes; a++) {
		cJSON *v = cJSON_Duplicate(cJSON_GetArrayItem(g->axes[a].values, (int)axis_index(g, a, i)), true);
		if (!v) {
			cJSON_Delete(key);
			return NULL;
		}
		cJSON_AddItemToObject(key, g->axes[a].key, v);
	}
	return key;
}

char *sym_grid_point_id(const struct sym_grid *g, size_t i)
{
	cJSON *key = sym_grid_point_key(g, i);
	char *s = key ? cJSON_PrintUnformatted(key) : NULL;
	cJSON_Delete(key);
	return s;
}

int sym_grid_point_experiment(const struct sym_grid *g, size_t i, struct sym_experiment *e, char *err,
			      size_t errlen)
{
	char msg[1024] = "out of memory";
	int rc = sym_experiment_init(e);
	if (rc)
		return snprintf(err, errlen, "out of memory"), rc;
	char origin[300];
	snprintf(origin, sizeof(origin), "grid '%s': base", g->name);
	if ((rc = sym_experiment_apply_json(e, g->base, origin, msg, sizeof(msg))))
		goto fail;
	for (size_t a = 0; a < g->naxes; a++) {
		size_t j = axis_index(g, a, i);
		const cJSON *v = cJSON_GetArrayItem(g->axes[a].values, (int)j);
		snprintf(origin, sizeof(origin), "grid '%s': axis '%s' value %zu", g->name, g->axes[a].key, j);
		if (g->axes[a].key[0] == '@') {
			/* its "label" names the value in the key and is not a configuration key */
			cJSON *o = cJSON_Duplicate(v, true);
			if (!o) {
				rc = -ENOMEM;
				snprintf(msg, sizeof(msg), "out of memory");
				goto fail;
			}
			cJSON_DeleteItemFromObjectCaseSensitive(o, "label");
			rc = sym_experiment_apply_json(e, o, origin, msg, sizeof(msg));
			cJSON_Delete(o);
		} else {
			cJSON *o = cJSON_CreateObject();
			cJSON *d = cJSON_Duplicate(v, true);
			if (!o || !d) {
				cJSON_Delete(o);
				cJSON_Delete(d);
				rc = -ENOMEM;
				snprintf(msg, sizeof(msg), "out of memory");
				goto fail;
			}
			cJSON_AddItemToObject(o, g->axes[a].key, d);
			rc = sym_experiment_apply_json(e, o, origin, msg, sizeof(msg));
			cJSON_Delete(o);
		}
		if (rc)
			goto fail;
	}
	if (g->over) {
		snprintf(origin, sizeof(origin), "grid '%s': command-line options", g->name);
		if ((rc = sym_experiment_apply_json(e, g->over, origin, msg, sizeof(msg))))
			goto fail;
	}
	if ((rc = sym_experiment_resolve(e, msg, sizeof(msg))) || (rc = sym_sim_check(e, msg, sizeof(msg))))
		goto fail;
	return 0;
fail:;
	char *id = sym_grid_point_id(g, i);
	snprintf(err, errlen, "point %zu %s: %s", i, id ? id : "", msg);
	free(id);
	return rc;
}

/* Building an experiment parses JSON (zoo files), and cJSON keeps its last
 * parse error in a global: one thread at a time. The simulation runs free. */
static pthread_mutex_t build_mu = PTHREAD_MUTEX_INITIALIZER;

/* A sim point: the first seed's run, with the mean, interval and per-seed
 * values of its bad rate and served rate over the replications. */
static int sim_point(const struct sym_experiment *e0, cJSON **doc, char *err, size_t errlen)
{
	size_t n = e0->replications > 1 ? (size_t)e0->replications : 1;
	double *bad = calloc(n, sizeof(*bad)), *good = calloc(n, sizeof(*good));
	int rc = bad && good ? 0 : -ENOMEM;
	struct sym_experiment e = *e0; /* only the seed differs */
	for (size_t s = 0; s < n && !rc; s++) {
		e.seed = e0->seed + s;
		struct sym_run_opts o = { .rate = sym_experiment_scale(&e) };
		struct sym_run_result r;
		rc = sym_sim_run(&e, &o, &r, err, errlen);
		if (!rc) {
			bad[s] = sym_run_bad_rate(&r);
			double served = r.nqueries ? 0 : (double)r.total.served; /* queries: good queries */
			for (size_t q = 0; q < r.nqueries; q++)
				served += (double)r.queries[q].good;
			good[s] = r.window_s > 0 ? served / r.window_s : 0;
			if (s == 0 && !(*doc = sym_result_json("sim", e0, &r)))
				rc = -ENOMEM;
		}
		sym_run_result_finish(&r);
	}
	if (!rc) {
		const struct {
			const char *key;
			const double *x;
		} series[] = { { "bad_rate", bad }, { "goodput_served_rps", good } };
		cJSON_ReplaceItemInObjectCaseSensitive(*doc, "replications", cJSON_CreateNumber((double)n));
		for (size_t k = 0; k < 2; k++) {
			char key[64];
			double mean, lo, hi;
			sym_mean_ci95(series[k].x, n, &mean, &lo, &hi);
			snprintf(key, sizeof(key), "%s_mean", series[k].key);
			cJSON_AddNumberToObject(*doc, key, mean);
			snprintf(key, sizeof(key), "%s_ci95", series[k].key);
			cJSON_AddItemToObject(*doc, key, sym_ci95_json(series[k].x, n));
			snprintf(key, sizeof(key), "%s_by_seed", series[k].key);
			cJSON *a = cJSON_AddArrayToObject(*doc, key);
			for (size_t s = 0; s < n; s++)
				cJSON_AddItemToArray(a, cJSON_CreateNumber(series[k].x[s]));
		}
		cJSON *from = cJSON_AddObjectToObject(*doc, "metrics_from");
		cJSON_AddNumberToObject(from, "seed", (double)e0->seed);
	} else if (rc == -ENOMEM) {
		snprintf(err, errlen, "out of memory");
	}
	if (rc) {
		cJSON_Delete(*doc);
		*doc = NULL;
	}
	free(bad);
	free(good);
	return rc;
}

int sym_grid_run_point(const struct sym_grid *g, size_t i, bool per_model, cJSON **line, char *err,
		       size_t errlen)
{
	*line = NULL;
	struct sym_experiment e;
	pthread_mutex_lock(&build_mu);
	int rc = sym_grid_point_experiment(g, i, &e, err, errlen);
	pthread_mutex_unlock(&build_mu);
	if (rc) {
		sym_experiment_finish(&e);
		return rc;
	}
	char msg[1024] = "out of memory";
	cJSON *doc = NULL;
	if (g->compute == SYM_COMPUTE_SIM) {
		rc = sim_point(&e, &doc, msg, sizeof(msg));
	} else {
		struct sym_goodput_reps gp;
		rc = sym_goodput_replicate(&e, 1, false, &gp, msg, sizeof(msg));
		if (!rc && !(doc = sym_goodput_result_json(&e, &gp, &gp.by_seed[0].run)))
			rc = -ENOMEM;
		sym_goodput_reps_finish(&gp);
	}
	if (rc) {
		char *id = sym_grid_point_id(g, i);
		snprintf(err, errlen, "point %zu %s: %s", i, id ? id : "", msg);
		free(id);
		sym_experiment_finish(&e);
		return rc;
	}
	sym_experiment_finish(&e);
	cJSON *key = sym_grid_point_key(g, i);
	cJSON *out = cJSON_CreateObject();
	if (!doc || !key || !out) {
		cJSON_Delete(doc);
		cJSON_Delete(key);
		cJSON_Delete(out);
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	}
	cJSON_AddStringToObject(out, "grid", g->name);
	cJSON_AddStringToObject(out, "grid_id", g->id);
	/* the command line's overrides (--seeds, --criterion): a resume names them when they differ */
	cJSON_AddItemToObject(out, "grid_over", g->over ? cJSON_Duplicate(g->over, true) : cJSON_CreateObject());
	cJSON_AddNumberToObject(out, "point", (double)i);
	cJSON_AddNumberToObject(out, "npoints", (double)g->npoints);
	cJSON_AddItemToObject(out, "key", key);
	/* the result, less what would make the line differ between machines */
	cJSON_DeleteItemFromObjectCaseSensitive(doc, "wall_seconds");
	cJSON_ReplaceItemInObjectCaseSensitive(doc, "provenance", sym_provenance_json(false)); /* no date */
	if (!per_model)
		cJSON_DeleteItemFromObjectCaseSensitive(doc, "models");
	while (doc->child) {
		cJSON *it = cJSON_DetachItemViaPointer(doc, doc->child);
		cJSON_AddItemToObject(out, it->string, it);
	}
	cJSON_Delete(doc);
	*line = out;
	return 0;
}

int sym_slice_parse(const char *s, int *index, int *count, char *err, size_t errlen)
{
	char *end;
	long i = strtol(s, &end, 10);
	if (end == s || *end != '/')
		return ERR("--shard: expected I/N (shard I of N, 0 <= I < N), got '%s'", s);
	const char *p = end + 1;
	long n = strtol(p, &end, 10);
	if (end == p || *end || n < 1 || n > 1000000 || i < 0 || i >= n)
		return ERR("--shard: expected I/N with 0 <= I < N <= 1000000, got '%s'", s);
	*index = (int)i;
	*count = (int)n;
	return 0;
}

static int env_int(const char *name, long *out, char *err, size_t errlen)
{
	const char *v = getenv(name);
	if (!v)
		return 0;
	char *end;
	long x = strtol(v, &end, 10);
	if (end == v || *end || x < 0 || x > 100000000)
		return ERR("environment variable %s: expected a non-negative integer, got '%s'", name, v);
	*out = x;
	return 1;
}

int sym_slice_from_env(int *index, int *count, char *err, size_t errlen)
{
	long id = 0, n = 0, min = 0, step = 1;
	int a = env_int("SLURM_ARRAY_TASK_ID", &id, err, errlen);
	int b = a >= 0 ? env_int("SLURM_ARRAY_TASK_COUNT", &n, err, errlen) : 0;
	int c = b >= 0 ? env_int("SLURM_ARRAY_TASK_MIN", &min, err, errlen) : 0;
	int d = c >= 0 ? env_int("SLURM_ARRAY_TASK_STEP", &step, err, errlen) : 0;
	if (a < 0 || b < 0 || c < 0 || d < 0)
		return -EINVAL;
	if (!a)
		return 0;
	if (!b)
		return ERR("Slurm array: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not; give --shard "
			   "I/N instead");
	if (step < 1)
		step = 1;
	/* --array=MIN-MAX:STEP: task ids MIN, MIN+STEP, ... */
	if (n < 1 || id < min || (id - min) % step || (id - min) / step >= n)
		return ERR("Slurm array: task id %ld is not one of the %ld ids from %ld in steps of %ld "
			   "(SLURM_ARRAY_TASK_MIN, _COUNT, _STEP); give --shard I/N instead", id, n, min, step);
	*index = (int)((id - min) / step);
	*count = (int)n;
	return 1;
}

/* ---- results lines and merge ---- */

int sym_result_line_parse(const char *text, struct sym_result_line *l)
{
	memset(l, 0, sizeof(*l));
	cJSON *o = cJSON_Parse(text);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "version");
	const cJSON *gr = cJSON_GetObjectItemCaseSensitive(o, "grid");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "grid_id");
	const cJSON *pt = cJSON_GetObjectItemCaseSensitive(o, "point");
	const cJSON *np = cJSON_GetObjectItemCaseSensitive(o, "npoints");
	const cJSON *key = cJSON_GetObjectItemCaseSensitive(o, "key");
	if (!cJSON_IsObject(o) || !cJSON_IsString(v) || !cJSON_IsString(gr) || (id && !cJSON_IsString(id)) ||
	    !cJSON_IsNumber(pt) || !(pt->valuedouble >= 0 && pt->valuedouble < SYM_GRID_MAX_POINTS) ||
	    !cJSON_IsObject(key) ||
	    (np && !(cJSON_IsNumber(np) && np->valuedouble >= 1 && np->valuedouble <= SYM_GRID_MAX_POINTS))) {
		cJSON_Delete(o);
		return -EINVAL;
	}
	*l = (struct sym_result_line){ o, v->valuestring, gr->valuestring, id ? id->valuestring : NULL,
				       (size_t)pt->valuedouble, np ? (size_t)np->valuedouble : 0, key };
	return 0;
}

struct mline {
	cJSON *obj;
	size_t point;
	const char *file;
	size_t lineno;
	char *id;
};

static int cmp_mline(const void *a, const void *b)
{
	const struct mline *x = a, *y = b;
	if (x->point != y->point)
		return x->point < y->point ? -1 : 1;
	/* equal points: keep file order (stable by file, then line) */
	int c = strcmp(x->file, y->file);
	return c ? c : (x->lineno > y->lineno) - (x->lineno < y->lineno);
}

int sym_results_merge(const char *const *paths, size_t npaths, cJSON **out, size_t *npoints, char *err,
		      size_t errlen)
{
	*out = NULL;
	*npoints = 0;
	struct mline *ls = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	char version[64] = "", vfrom[1100] = "", grid[128] = "", gfrom[1100] = "", gid[32] = "", idfrom[1100] = "";
	char npfrom[1100] = "";
	for (size_t f = 0; f < npaths && !rc; f++) {
		char *text = NULL;
		if ((rc = sym_read_file(paths[f], &text))) {
			rc = ERR("%s: cannot read: %s", paths[f], rc == -ENOENT ? "no such file" : sym_strerror(rc));
			break;
		}
		size_t lineno = 0;
		for (char *p = text, *nl; *p && !rc; p = nl + 1) {
			lineno++;
			nl = strchr(p, '\n');
			if (!nl) {
				rc = ERR("%s:%zu: the last line is incomplete (an interrupted sweep: run that shard again "
					 "with --resume first)", paths[f], lineno);
				break;
			}
			*nl = 0;
			if (!*p)
				continue;
			struct sym_result_line l;
			if (sym_result_line_parse(p, &l)) {
				rc = ERR("%s:%zu: not a sweep result line (JSON with version, grid, point and key)",
					 paths[f], lineno);
				break;
			}
			cJSON *o = l.obj;
			char here[1100];
			snprintf(here, sizeof(here), "%s:%zu", paths[f], lineno);
			if (!version[0]) {
				snprintf(version, sizeof(version), "%s", l.version);
				snprintf(vfrom, sizeof(vfrom), "%s", here);
			} else if (strcmp(version, l.version)) {
				rc = ERR("mixed versions: %s was written by symphony %s, %s by symphony %s; rerun the "
					 "older shards with one version", here, l.version, vfrom, version);
			}
			if (!grid[0]) {
				snprintf(grid, sizeof(grid), "%s", l.grid);
				snprintf(gfrom, sizeof(gfrom), "%s", here);
			} else if (!rc && strcmp(grid, l.grid)) {
				rc = ERR("mixed grids: %s is a point of grid '%s', %s of grid '%s'", here, l.grid, gfrom, grid);
			}
			if (!rc && l.grid_id) { /* lines written before grid ids existed have none */
				if (!gid[0]) {
					snprintf(gid, sizeof(gid), "%s", l.grid_id);
					snprintf(idfrom, sizeof(idfrom), "%s", here);
				} else if (strcmp(gid, l.grid_id)) {
					rc = ERR("mixed grids: %s and %s come from different versions of grid '%s' (its base, "
						 "compute or axes changed); rerun the older shards", here, idfrom, grid);
				}
			}
			if (!rc && l.npoints) {
				if (!*npoints) {
					*npoints = l.npoints;
					snprintf(npfrom, sizeof(npfrom), "%s", here);
				} else if (*npoints != l.npoints) {
					rc = ERR("mixed grids: %s is one of %zu points, %s one of %zu", here, l.npoints, npfrom,
						 *npoints);
				}
			}
			if (!rc && sym_grow(&ls, &cap, n + 1, sizeof(*ls), 256))
				rc = -ENOMEM;
			if (rc) {
				cJSON_Delete(o);
				break;
			}
			ls[n] = (struct mline){ o, l.point, paths[f], lineno, cJSON_PrintUnformatted(l.key) };
			if (!ls[n].id) {
				cJSON_Delete(o);
				rc = -ENOMEM;
				break;
			}
			n++;
		}
		free(text);
	}
	if (!rc) {
		qsort(ls, n, sizeof(*ls), cmp_mline);
		for (size_t i = 1; i < n && !rc; i++) {
			if (ls[i].point != ls[i - 1].point)
				continue;
			if (!strcmp(ls[i].id, ls[i - 1].id))
				rc = ERR("duplicate point %zu %s: in %s:%zu and in %s:%zu (overlapping shards, or a shard "
					 "run twice)", ls[i].point, ls[i].id, ls[i - 1].file, ls[i - 1].lineno, ls[i].file,
					 ls[i].lineno);
			else
				rc = ERR("point %zu is %s in %s:%zu but %s in %s:%zu: the grid changed between shards",
					 ls[i].point, ls[i - 1].id, ls[i - 1].file, ls[i - 1].lineno, ls[i].id, ls[i].file,
					 ls[i].lineno);
		}
	}
	cJSON *arr = rc ? NULL : cJSON_CreateArray();
	if (!rc && !arr)
		rc = -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		free(ls[i].id);
		if (arr)
			cJSON_AddItemToArray(arr, ls[i].obj);
		else
			cJSON_Delete(ls[i].obj);
	}
	free(ls);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	*out = arr;
	return rc;
}
