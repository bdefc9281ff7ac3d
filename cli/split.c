/* cli/split.c - `symphony split`: Nexus's query analysis (nexus.md,
 * Sections 4.2 and 6.2) on its own: the split of a query's SLO over its
 * stages that needs the fewest GPUs, beside the even split and any fixed
 * plans, for a list of fan-outs (the form of Nexus's Figure 4). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/query.h"
#include "experiment/config.h"
#include "experiment/output.h"
#include "experiment/result.h"
#include "profiles/zoo.h"

struct split_input {
	double slo_ms, eps_ms, rate;
	int n;
	struct sym_query_stage st[SYM_QUERY_MAX_STAGES];
	char names[SYM_QUERY_MAX_STAGES][64];
	double *lat[SYM_QUERY_MAX_STAGES], *tput[SYM_QUERY_MAX_STAGES];
	struct sym_profile prof[SYM_QUERY_MAX_STAGES];
	bool has_prof[SYM_QUERY_MAX_STAGES];
	double gammas[64];
	int ngammas;              /* 0: the stages' own */
	double plans[16][SYM_QUERY_MAX_STAGES];
	int nplans;
};

static void input_finish(struct split_input *in)
{
	for (int v = 0; v < SYM_QUERY_MAX_STAGES; v++) {
		free(in->lat[v]);
		free(in->tput[v]);
		if (in->has_prof[v])
			sym_profile_finish(&in->prof[v]);
	}
}

#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

static int num(const cJSON *o, const char *key, double lo, double hi, double def, double *out, char *err,
	       size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!v) {
		if (isnan(def))
			return BAD("'%s' is missing (a number from %g to %g)", key, lo, hi);
		*out = def;
		return 0;
	}
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
		return BAD("'%s' must be a number from %g to %g", key, lo, hi);
	*out = v->valuedouble;
	return 0;
}

/* One stage: points [[lat_ms, req/s], ...], or a model (a zoo name, or an
 * inline model object as in the experiment's "models"). */
static int read_stage(struct split_input *in, int v, const cJSON *s, const struct sym_zoo *zoo, const char *zoo_name,
		      char *err, size_t errlen)
{
	struct sym_query_stage *st = &in->st[v];
	char msg[512];
	if (!cJSON_IsObject(s))
		return BAD("stages[%d]: expected an object with name, parent, gamma and points or model", v);
	for (const cJSON *it = s->child; it; it = it->next)
		if (strcmp(it->string, "name") && strcmp(it->string, "parent") && strcmp(it->string, "gamma") &&
		    strcmp(it->string, "points") && strcmp(it->string, "model"))
			return BAD("stages[%d]: unknown key '%s' (expected name, parent, gamma, points, model)", v,
				   it->string);
	double parent, gamma;
	snprintf(msg, sizeof(msg), "stages[%d]", v);
	if (num(s, "parent", -1, v - 1, v ? 0 : -1, &parent, err, errlen) ||
	    num(s, "gamma", 0, 1000, 1, &gamma, err, errlen)) {
		snprintf(msg, sizeof(msg), "%.500s", err);
		return BAD("stages[%d]: %s", v, msg);
	}
	if ((v == 0) != (parent < 0))
		return BAD("stages[%d]: 'parent' must be -1 for the root (stage 0) and an earlier stage otherwise", v);
	st->parent = (int)parent;
	st->gamma = v ? gamma : 1;
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(s, "name"), *pts = cJSON_GetObjectItemCaseSensitive(s, "points"),
		    *model = cJSON_GetObjectItemCaseSensitive(s, "model");
	if (!pts == !model)
		return BAD("stages[%d]: give either 'points' ([[latency ms, requests/s], ...]) or 'model'", v);
	if (pts) {
		int np = cJSON_IsArray(pts) ? cJSON_GetArraySize(pts) : 0;
		if (np < 1 || np > 10000)
			return BAD("stages[%d]: 'points' must be an array of 1 to 10000 [latency ms, requests/s] pairs", v);
		if (!(in->lat[v] = malloc((size_t)np * sizeof(double))) || !(in->tput[v] = malloc((size_t)np * sizeof(double))))
			return snprintf(err, errlen, "out of memory"), -ENOMEM;
		int i = 0;
		for (const cJSON *p = pts->child; p; p = p->next, i++) {
			const cJSON *a = cJSON_GetArrayItem(p, 0), *b = cJSON_GetArrayItem(p, 1);
			if (!cJSON_IsArray(p) || cJSON_GetArraySize(p) != 2 || !cJSON_IsNumber(a) || !cJSON_IsNumber(b) ||
			    !(a->valuedouble > 0) || !(b->valuedouble > 0) || !isfinite(a->valuedouble) ||
			    !isfinite(b->valuedouble))
				return BAD("stages[%d]: points[%d] must be [latency ms > 0, requests/s > 0]", v, i);
			in->lat[v][i] = a->valuedouble;
			in->tput[v][i] = b->valuedouble;
		}
		st->npoints = np;
		st->lat_ms = in->lat[v];
		st->tput = in->tput[v];
		snprintf(in->names[v], sizeof(in->names[v]), "%s", cJSON_IsString(name) ? name->valuestring : "");
	} else {
		struct sym_model_spec spec;
		const struct sym_model_spec *use = NULL;
		int rc;
		if (cJSON_IsString(model)) {
			if (!zoo_name)
				return BAD("stages[%d]: model '%s' by name needs a \"zoo\"", v, model->valuestring);
			if (!(use = sym_zoo_find(zoo, model->valuestring)))
				return BAD("stages[%d]: no model '%s' in zoo '%s'", v, model->valuestring, zoo_name);
			rc = sym_model_spec_profile(use, in->slo_ms, &in->prof[v], msg, sizeof(msg));
		} else {
			snprintf(msg, sizeof(msg), "stages[%d].model", v);
			if ((rc = sym_model_spec_from_json(model, msg, &spec, err, errlen)))
				return rc;
			use = &spec;
			rc = sym_model_spec_profile(use, in->slo_ms, &in->prof[v], msg, sizeof(msg));
		}
		snprintf(in->names[v], sizeof(in->names[v]), "%s", cJSON_IsString(name) ? name->valuestring : use->name);
		if (!cJSON_IsString(model))
			sym_model_spec_finish(&spec);
		if (rc == -ERANGE)
			return BAD("stages[%d]: the model cannot run a batch of 1 within the SLO (%g ms)", v, in->slo_ms);
		if (rc)
			return BAD("stages[%d]: %s", v, msg);
		in->has_prof[v] = true;
		st->profile = &in->prof[v];
	}
	if (!in->names[v][0])
		snprintf(in->names[v], sizeof(in->names[v]), "stage %d", v);
	st->name = in->names[v];
	return 0;
}

static int read_input(const cJSON *j, struct split_input *in, char *err, size_t errlen)
{
	if (!cJSON_IsObject(j))
		return BAD("expected an object with slo_ms, stages and optionally eps_ms, rate, zoo, gammas, plans");
	for (const cJSON *it = j->child; it; it = it->next) {
		static const char *known[] = { "slo_ms", "eps_ms", "rate", "zoo", "stages", "gammas", "plans", "budget",
					       "description" };
		bool ok = false;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			ok |= !strcmp(it->string, known[i]);
		if (!ok)
			return BAD("unknown key '%s' (expected slo_ms, stages, eps_ms, rate, zoo, gammas, plans, budget, "
				   "description)", it->string);
	}
	if (num(j, "slo_ms", 1e-3, 1e7, NAN, &in->slo_ms, err, errlen) ||
	    num(j, "eps_ms", 1e-6, 1e7, in->slo_ms / 500, &in->eps_ms, err, errlen) ||
	    num(j, "rate", 1e-9, 1e12, 1, &in->rate, err, errlen))
		return -EINVAL;
	const cJSON *zj = cJSON_GetObjectItemCaseSensitive(j, "zoo");
	if (zj && !cJSON_IsString(zj))
		return BAD("'zoo' must be a zoo name or file (a100, gtx1080ti, FILE)");
	struct sym_zoo zoo = { 0 };
	int rc = 0;
	if (zj && (rc = sym_zoo_load(zj->valuestring, &zoo, err, errlen)))
		return rc;
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "stages");
	in->n = cJSON_IsArray(st) ? cJSON_GetArraySize(st) : 0;
	if (in->n < 1 || in->n > SYM_QUERY_MAX_STAGES)
		rc = BAD("'stages' must be an array of 1 to %d stages", SYM_QUERY_MAX_STAGES);
	int v = 0;
	for (const cJSON *s = st ? st->child : NULL; s && !rc; s = s->next, v++)
		rc = read_stage(in, v, s, &zoo, zj ? zj->valuestring : NULL, err, errlen);
	if (zj)
		sym_zoo_finish(&zoo);
	if (rc)
		return rc;
	const cJSON *bj = cJSON_GetObjectItemCaseSensitive(j, "budget");
	if (bj && (!cJSON_IsString(bj) || (strcmp(bj->valuestring, "batch") && strcmp(bj->valuestring, "session"))))
		return BAD("'budget' must be batch (l(b) within the budget, default) or session (2 l(b): a Nexus session's "
			   "worst case)");
	for (v = 0; bj && !strcmp(bj->valuestring, "session") && v < in->n; v++)
		in->st[v].lat_factor = 2;
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(j, "gammas");
	if (g) {
		in->ngammas = cJSON_IsArray(g) ? cJSON_GetArraySize(g) : 0;
		if (in->ngammas < 1 || in->ngammas > 64)
			return BAD("'gammas' must be an array of 1 to 64 fan-outs (each replaces every non-root stage's)");
		int i = 0;
		for (const cJSON *x = g->child; x; x = x->next, i++) {
			if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0) || x->valuedouble > 1000)
				return BAD("gammas[%d] must be a number from 0 to 1000", i);
			in->gammas[i] = x->valuedouble;
		}
	}
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "plans");
	if (p) {
		in->nplans = cJSON_IsArray(p) ? cJSON_GetArraySize(p) : 0;
		if (in->nplans < 1 || in->nplans > 16)
			return BAD("'plans' must be an array of 1 to 16 plans, each the budgets (ms) of the %d stages", in->n);
		int i = 0;
		for (const cJSON *x = p->child; x; x = x->next, i++) {
			if (!cJSON_IsArray(x) || cJSON_GetArraySize(x) != in->n)
				return BAD("plans[%d] must be an array of %d budgets (ms), one per stage", i, in->n);
			int k = 0;
			for (const cJSON *b = x->child; b; b = b->next, k++) {
				if (!cJSON_IsNumber(b) || !(b->valuedouble > 0) || !isfinite(b->valuedouble))
					return BAD("plans[%d][%d] must be a budget in ms > 0", i, k);
				in->plans[i][k] = b->valuedouble;
			}
		}
	}
	return 0;
}

/* One split's row: its object (name, budgets, stages, GPUs, queries/s per
 * GPU) or, when it cannot run, its reason. */
static cJSON *split_json(const struct split_input *in, const char *name, int rc, const char *why,
			 const struct sym_query_split *out, double gpus)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "split", name);
	if (rc) {
		cJSON_AddNullToObject(o, "throughput_per_gpu");
		cJSON_AddStringToObject(o, "infeasible", why);
		return o;
	}
	cJSON_AddNumberToObject(o, "gpus", gpus);
	cJSON_AddNumberToObject(o, "throughput_per_gpu", in->rate / gpus);
	cJSON *a = cJSON_AddArrayToObject(o, "stages");
	for (int v = 0; v < in->n; v++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "name", in->st[v].name);
		cJSON_AddNumberToObject(x, "budget_ms", out[v].budget_ms);
		cJSON_AddNumberToObject(x, "batch", out[v].batch);
		cJSON_AddNumberToObject(x, "latency_ms", out[v].lat_ms);
		cJSON_AddNumberToObject(x, "rate", out[v].rate);
		cJSON_AddNumberToObject(x, "throughput", out[v].tput);
		cJSON_AddNumberToObject(x, "gpus", out[v].gpus);
		cJSON_AddItemToArray(a, x);
	}
	return o;
}

int cli_cmd_split(struct cli *c)
{
	const char *path = cli_config_path(c);
	if (!path)
		return cli_usage_error(c, "give the query file (symphony help split)");
	char err[1024];
	int rc;
	cJSON *j = sym_experiment_read_json(path, &rc, err, sizeof(err));
	if (!j)
		return cli_usage_error(c, "%s", err);
	struct split_input *in = calloc(1, sizeof(*in));
	if (!in) {
		cJSON_Delete(j);
		return cli_fail(c, 1, "out of memory");
	}
	char msg[900];
	/* a study file (experiments/NAME.json, "run": "split") holds its query as "query" */
	const cJSON *qj = cJSON_GetObjectItemCaseSensitive(j, "query");
	if (cJSON_IsObject(qj) && cJSON_GetObjectItemCaseSensitive(j, "run")) {
		cJSON *inner = cJSON_DetachItemViaPointer(j, (cJSON *)qj);
		cJSON_Delete(j);
		j = inner;
	}
	if ((rc = read_input(j, in, msg, sizeof(msg)))) {
		snprintf(err, sizeof(err), "%s: %s", path, msg);
		input_finish(in);
		free(in);
		cJSON_Delete(j);
		return rc == -ENOMEM ? cli_fail(c, 1, "out of memory") : cli_usage_error(c, "%s", err);
	}
	cJSON *doc = sym_result_head("split"), *res = cJSON_AddArrayToObject(doc, "results");
	cJSON_AddItemToObject(doc, "config", cJSON_Duplicate(j, true));
	bool quiet = cli_flag(c, "quiet");
	FILE *f = cli_table_stream(c);
	if (!quiet)
		fprintf(f, "symphony split: SLO %g ms over %d stages, grid %g ms, %g queries/s\n", in->slo_ms, in->n,
			in->eps_ms, in->rate);
	int ng = in->ngammas ? in->ngammas : 1;
	for (int g = 0; g < ng; g++) {
		if (in->ngammas)
			for (int v = 1; v < in->n; v++)
				in->st[v].gamma = in->gammas[g];
		cJSON *row = cJSON_CreateObject();
		if (in->ngammas)
			cJSON_AddNumberToObject(row, "gamma", in->gammas[g]);
		cJSON *splits = cJSON_AddArrayToObject(row, "splits");
		if (!quiet) {
			if (in->ngammas)
				fprintf(f, "\ngamma %g\n", in->gammas[g]);
			fprintf(f, "%s%-10s %10s %10s  %s\n", in->ngammas ? "" : "\n", "split", "GPUs", "q/s/GPU",
				"budgets ms (batch)");
		}
		for (int p = -2; p < in->nplans; p++) {
			struct sym_query_split out[SYM_QUERY_MAX_STAGES];
			double gpus = 0;
			char name[32];
			msg[0] = 0;
			if (p == -2) {
				snprintf(name, sizeof(name), "nexus");
				rc = sym_query_split(in->st, in->n, in->rate, in->slo_ms, in->eps_ms, out, &gpus, msg, sizeof(msg));
			} else if (p == -1) {
				snprintf(name, sizeof(name), "even");
				rc = sym_query_even(in->st, in->n, in->rate, in->slo_ms, out, &gpus, msg, sizeof(msg));
			} else {
				snprintf(name, sizeof(name), "plan %d", p + 1);
				rc = sym_query_eval(in->st, in->n, in->rate, in->slo_ms, in->plans[p], out, &gpus, msg,
						    sizeof(msg));
			}
			if (rc == -ENOMEM || rc == -EINVAL) {
				cJSON_Delete(row);
				cJSON_Delete(doc);
				input_finish(in);
				free(in);
				cJSON_Delete(j);
				return rc == -ENOMEM ? cli_fail(c, 1, "out of memory") : cli_usage_error(c, "%s: %s", path, msg);
			}
			cJSON_AddItemToArray(splits, split_json(in, name, rc, msg, out, gpus));
			if (quiet)
				continue;
			if (rc) {
				fprintf(f, "%-10s %10s %10s  %s\n", name, "-", "-", msg);
				continue;
			}
			fprintf(f, "%-10s %10.3f %10.1f ", name, gpus, in->rate / gpus);
			for (int v = 0; v < in->n; v++) {
				if (out[v].batch)
					fprintf(f, " %s %g (%d)", in->st[v].name, out[v].budget_ms, out[v].batch);
				else
					fprintf(f, " %s %g", in->st[v].name, out[v].budget_ms);
			}
			fprintf(f, "\n");
		}
		cJSON_AddItemToArray(res, row);
	}
	rc = 0;
	if (cli_str(c, "json") && sym_write_json(cli_str(c, "json"), doc, err, sizeof(err)))
		rc = cli_fail(c, 1, "%s", err);
	cJSON_Delete(doc);
	input_finish(in);
	free(in);
	cJSON_Delete(j);
	return rc;
}
