/* core/parts.c - sub-clusters as parts of one core (see core/parts.h). */
#include "core/parts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy.h"

uint32_t sym_parts_kinds_off(int nparts, int nkinds, int part)
{
	uint32_t mine = part < 0 ? 0 : sym_kinds_all(nkinds) << (part * nkinds);
	return sym_kinds_all(nparts * nkinds) & ~mine;
}

int sym_parts_model(const struct sym_model_cfg *cfg, int nparts, int nkinds, struct sym_model_cfg *out)
{
	if (cfg->part < 0 || cfg->part >= nparts || nparts * nkinds > SYM_MAX_KINDS)
		return -EINVAL;
	struct sym_model_cfg m = *cfg;
	for (int j = 0; j < nparts; j++)
		for (int k = 0; k < nkinds; k++)
			if (j || k) /* (slot 0 is kind 0's: the profile itself) */
				m.by_kind[sym_parts_slot(nkinds, j, k)] = k ? cfg->by_kind[k] : NULL;
	m.kinds_off = sym_parts_kinds_off(nparts, nkinds, cfg->part);
	*out = m;
	return 0;
}

void sym_parts_finish(struct sym_parts *p)
{
	free(p->gpu_kind);
	free(p->models);
	p->gpu_kind = NULL;
	p->models = NULL;
}

static int fail(char *err, size_t errlen, int rc, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
	return rc;
}

int sym_parts_expand(const struct sym_core_cfg *in, struct sym_parts *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	int P = in->nparts, K = in->nkinds > 1 ? in->nkinds : 1;
	char msg[200];
	if (P < 2 || in->ngpus < 1 || in->nmodels < 1 || !in->models || !in->gpu_part || !in->policy.ops)
		return fail(err, errlen, -EINVAL, "invalid core configuration (parts)");
	if (sym_policy_is_scheduler(&in->policy)) {
		snprintf(msg, sizeof(msg), "policy '%s' schedules every model on every GPU: sub-clusters need a "
			 "candidate policy (symphony, eager, timeout, betalambda)", sym_policy_name(&in->policy));
		return fail(err, errlen, -EINVAL, msg);
	}
	if (P * K > SYM_MAX_KINDS) {
		snprintf(msg, sizeof(msg), "at most %d rankers, one per sub-cluster and GPU kind: %d sub-clusters of %d "
			 "kind%s make %d", SYM_MAX_KINDS, P, K, K > 1 ? "s" : "", P * K);
		return fail(err, errlen, -EINVAL, msg);
	}
	if (K > 1 && (!in->kinds || !in->gpu_kind))
		return fail(err, errlen, -EINVAL, "invalid core configuration (kinds)");
	out->nparts = P;
	out->nkinds = K;
	out->gpu_kind = malloc((size_t)in->ngpus * sizeof(int));
	out->models = malloc((size_t)in->nmodels * sizeof(*out->models));
	if (!out->gpu_kind || !out->models) {
		sym_parts_finish(out);
		return fail(err, errlen, -ENOMEM, "out of memory");
	}
	for (int j = 0; j < P; j++)
		for (int k = 0; k < K; k++) {
			struct sym_kind *x = &out->kinds[sym_parts_slot(K, j, k)];
			if (in->kinds)
				*x = in->kinds[k];
			else
				*x = (struct sym_kind){ .name = "gpu" };
			char base[24];
			snprintf(base, sizeof(base), "%.20s", x->name);
			snprintf(x->name, sizeof(x->name), "%s/sub%d", base, j % 100);
		}
	for (int g = 0; g < in->ngpus; g++) {
		int j = in->gpu_part[g], k = in->gpu_kind ? in->gpu_kind[g] : 0;
		if (j < -1 || j >= P || k < 0 || k >= K) {
			sym_parts_finish(out);
			snprintf(msg, sizeof(msg), "GPU %d: part %d or kind %d out of range", g, j, k);
			return fail(err, errlen, -EINVAL, msg);
		}
		out->gpu_kind[g] = sym_parts_slot(K, j < 0 ? 0 : j, k); /* (no part: the driver keeps it offline) */
	}
	for (int m = 0; m < in->nmodels; m++)
		if (sym_parts_model(&in->models[m], P, K, &out->models[m])) {
			sym_parts_finish(out);
			snprintf(msg, sizeof(msg), "model %d: part %d out of range (0..%d)", m, in->models[m].part, P - 1);
			return fail(err, errlen, -EINVAL, msg);
		}
	out->cfg = *in;
	out->cfg.nparts = 0;
	out->cfg.gpu_part = NULL;
	out->cfg.nkinds = P * K;
	out->cfg.kinds = out->kinds;
	out->cfg.gpu_kind = out->gpu_kind;
	out->cfg.models = out->models;
	return 0;
}
