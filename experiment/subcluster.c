/* experiment/subcluster.c - a run's sub-clusters: see subcluster.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/epoch.h"
#include "core/capacity.h"
#include "partition/partition.h"
#include "experiment/subcluster.h"

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

/* The largest memory every kind's GPUs hold (the smallest memory_mb), or 0. */
static double kinds_memory(const struct sym_experiment *e)
{
	double m = 0;
	for (int k = 0; k < e->nkinds; k++)
		if (e->kinds[k].memory_mb > 0 && (m == 0 || e->kinds[k].memory_mb < m))
			m = e->kinds[k].memory_mb;
	return m;
}

/* Solves the MILP for e's models at total rate `rate`; *assign (malloc'ed) on success. */
static int solve(const struct sym_experiment *e, double rate, int **assign, char *err, size_t errlen)
{
	size_t n = e->nmodels;
	const struct sym_partition_cfg *pc = &e->partition;
	struct sym_part_model *pm = calloc(n, sizeof(*pm));
	if (!pm)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	/* memory as the largest of the kinds (a model's part must hold it on every kind) */
	for (size_t i = 0; i < n; i++) {
		pm[i].rate = rate * sym_experiment_model_rate(e, i);
		pm[i].current = -1;
		for (int k = 0; k < e->nkinds; k++) {
			const struct sym_profile *p = &e->profiles[(size_t)k * n + i];
			if (p->static_mb > pm[i].static_mb)
				pm[i].static_mb = p->static_mb;
			if (p->dynamic_mb > pm[i].dynamic_mb)
				pm[i].dynamic_mb = p->dynamic_mb;
		}
	}
	double smax = pc->s_max > 0 ? pc->s_max : e->memory_check ? kinds_memory(e) : 0;
	struct sym_part_problem p = { .nmodels = (int)n, .models = pm, .nparts = pc->subclusters, .r_max = pc->r_max,
				      .s_max = smax, .w = pc->w, .c_max = -1, .time_limit_s = pc->time_limit_s,
				      .seed = e->seed };
	struct sym_part_result r = { 0 };
	char msg[400];
	int rc = sym_partition_milp(&p, &r, msg, sizeof(msg));
	if (rc == -EINVAL)
		rc = ERR("partition: %s", msg);
	else if (rc)
		snprintf(err, errlen, "out of memory");
	else if (r.status == SYM_PART_INFEASIBLE || r.status == SYM_PART_UNKNOWN)
		rc = ERR("partition: %s the %zu models into %d sub-clusters within S_max %.0f MB per GPU%s%s (the "
			 "solver: %s in %.1f s): use more sub-clusters, raise the limits, or a longer time_limit_s",
			 r.status == SYM_PART_INFEASIBLE ? "there is no way to split" : "found no way to split", n,
			 pc->subclusters, smax, pc->r_max > 0 ? " and R_max " : "", pc->r_max > 0 ? "per sub-cluster" : "",
			 sym_part_status_name(r.status), r.seconds);
	if (!rc) {
		*assign = r.assign;
		r.assign = NULL;
	}
	sym_part_result_free(&r);
	free(pm);
	return rc;
}

int sym_subclusters_solve(struct sym_experiment *e, double rate, char *err, size_t errlen)
{
	if (e->partition.subclusters < 1 || e->partition.assign)
		return 0;
	int *a = NULL;
	int rc = solve(e, rate, &a, err, errlen);
	if (rc)
		return rc;
	e->partition.assign = a;
	e->partition.nassign = e->nmodels;
	return sym_experiment_check_memory(e, a, err, errlen);
}

void sym_subclusters_finish(struct sym_subclusters *sc)
{
	free(sc->model_part);
	free(sc->gpu_part);
	free(sc->need);
	memset(sc, 0, sizeof(*sc));
}

/* GPUs of kind k that model i at `rate` keeps busy when its part has n GPUs:
 * rate * l(b) / b at its staggered batch for n (HUGE_VAL when no batch
 * meets the SLO with n GPUs). */
static double gpu_time(const struct sym_experiment *e, int k, size_t i, double rate, int n)
{
	const struct sym_profile *p = &e->profiles[(size_t)k * e->nmodels + i];
	if (!(rate > 0))
		return 0;
	double net = e->ctrl_ms + e->data_ms + e->resp_ms;
	int b = sym_staggered_batch(p->lat, p->max_batch, sym_ms(e->model_slo_ms[i] - net), n);
	return b < 1 ? HUGE_VAL : rate * sym_to_s(p->lat[b]) / b;
}

/* Part j's GPU time on kind k with n GPUs. */
static double part_time(const struct sym_experiment *e, const int *part, int j, int k, const double *rates, int n)
{
	double t = 0;
	for (size_t i = 0; i < e->nmodels; i++)
		if (part[i] == j)
			t += gpu_time(e, k, i, rates[i], n);
	return t;
}

int sym_subclusters_split(const struct sym_experiment *e, const double *rates, const int *model_part, int L,
			  const int *prev, int *gpu_part, double *need, char *err, size_t errlen)
{
	int *got = calloc((size_t)L, sizeof(int)), *total = calloc((size_t)L, sizeof(int));
	int rc = 0;
	if (!got || !total) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* Each kind's GPUs one at a time to the part whose models would keep
	 * its GPUs the busiest (water-filling): a part's batches shrink with
	 * fewer GPUs (the staggered batch), so a small part needs more than its
	 * share of GPU time at large batches. Kind 0 first gives every part one
	 * GPU. */
	for (int k = 0; k < e->nkinds; k++) {
		int cnt = 0;
		for (int g = 0; g < e->gpus; g++)
			cnt += e->gpu_kind[g] == k;
		memset(got, 0, (size_t)L * sizeof(int));
		int given = 0;
		if (k == 0) {
			if (cnt < L) {
				rc = ERR("partition: %d sub-clusters need at least one %s GPU each; the cluster has %d", L,
					 e->kinds[0].name, cnt);
				goto out;
			}
			for (int j = 0; j < L; j++)
				got[j] = 1;
			given = L;
		}
		while (given < cnt) {
			int best = 0;
			double bu = -1;
			for (int j = 0; j < L; j++) {
				int have = total[j] + got[j];
				double u = part_time(e, model_part, j, k, rates, have ? have : 1) / (have ? have : 0.5);
				if (u > bu) {
					bu = u;
					best = j;
				}
			}
			got[best]++;
			given++;
		}
		for (int j = 0; j < L; j++)
			total[j] += got[j];
		/* kind k's GPUs: with a previous split, each stays in its part while
		 * the part's count allows (fewest moves), the rest fill the parts
		 * short of GPUs in id order; else in id order, part 0's first */
		for (int g = 0; g < e->gpus; g++)
			if (e->gpu_kind[g] == k)
				gpu_part[g] = -1;
		for (int g = 0; prev && g < e->gpus; g++)
			if (e->gpu_kind[g] == k && prev[g] >= 0 && prev[g] < L && got[prev[g]] > 0) {
				gpu_part[g] = prev[g];
				got[prev[g]]--;
			}
		int j = 0;
		for (int g = 0; g < e->gpus; g++) {
			if (e->gpu_kind[g] != k || gpu_part[g] >= 0)
				continue;
			while (!got[j] && j + 1 < L)
				j++;
			gpu_part[g] = j;
			got[j]--;
		}
	}
	for (int j = 0; need && j < L; j++)
		need[j] = part_time(e, model_part, j, 0, rates, total[j]);
out:
	free(got);
	free(total);
	return rc;
}

int sym_subclusters_build(const struct sym_experiment *e, double rate, int pool, struct sym_subclusters *sc,
			  char *err, size_t errlen)
{
	memset(sc, 0, sizeof(*sc));
	size_t n = e->nmodels;
	int L = e->partition.subclusters > 0 ? e->partition.subclusters : 1;
	sc->n = L;
	sc->model_part = calloc(n ? n : 1, sizeof(int));
	sc->gpu_part = calloc((size_t)e->gpus, sizeof(int));
	sc->need = calloc((size_t)L, sizeof(double));
	int rc = 0;
	if (!sc->model_part || !sc->gpu_part || !sc->need) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (L == 1)
		goto out;
	if (e->partition.assign) {
		memcpy(sc->model_part, e->partition.assign, n * sizeof(int));
	} else {
		int *a = NULL;
		if ((rc = solve(e, rate, &a, err, errlen)) || (rc = sym_experiment_check_memory(e, a, err, errlen))) {
			free(a);
			goto out;
		}
		memcpy(sc->model_part, a, n * sizeof(int));
		free(a);
	}
	{
		double *rates = malloc((n ? n : 1) * sizeof(double));
		if (!rates) {
			rc = -ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			rates[i] = rate * sym_experiment_model_rate(e, i);
		/* the GPUs serving at the start are split; the others then take the parts of a split of
		 * them all, the first ones staying where they are */
		struct sym_experiment first = *e;
		first.gpus = pool > 0 && pool < e->gpus ? pool : e->gpus;
		for (int g = first.gpus; g < e->gpus; g++)
			sc->gpu_part[g] = -1;
		rc = sym_subclusters_split(&first, rates, sc->model_part, L, NULL, sc->gpu_part, sc->need, err, errlen);
		int *prev = first.gpus < e->gpus && !rc ? malloc((size_t)e->gpus * sizeof(int)) : NULL;
		if (prev) {
			memcpy(prev, sc->gpu_part, (size_t)e->gpus * sizeof(int));
			rc = sym_subclusters_split(e, rates, sc->model_part, L, prev, sc->gpu_part, NULL, err, errlen);
			free(prev);
		} else if (first.gpus < e->gpus && !rc) {
			rc = -ENOMEM;
			snprintf(err, errlen, "out of memory");
		}
		free(rates);
	}
out:
	if (rc)
		sym_subclusters_finish(sc);
	return rc;
}

static double max_over_kinds(const struct sym_experiment *e, size_t i, bool dynamic)
{
	double x = 0;
	for (int k = 0; k < e->nkinds; k++) {
		const struct sym_profile *pr = &e->profiles[(size_t)k * e->nmodels + i];
		x = fmax(x, dynamic ? pr->dynamic_mb : pr->static_mb);
	}
	return x;
}

void sym_subclusters_epoch_problem(const struct sym_experiment *e, const double *rates, const int *current,
				   struct sym_part_model *pm, struct sym_part_problem *p)
{
	double cap = e->partition.s_max;
	for (int k = 0; !(cap > 0) && e->memory_check && k < e->nkinds; k++)
		if (e->kinds[k].memory_mb > 0)
			cap = cap > 0 ? fmin(cap, e->kinds[k].memory_mb) : e->kinds[k].memory_mb;
	for (size_t i = 0; i < e->nmodels; i++) {
		double st = max_over_kinds(e, i, false);
		pm[i] = (struct sym_part_model){ .rate = rates[i], .static_mb = st,
						 .dynamic_mb = max_over_kinds(e, i, true),
						 .move_cost = e->models[i].file_mb >= 0 ? e->models[i].file_mb : st,
						 .current = current[i] };
	}
	*p = (struct sym_part_problem){ .nmodels = (int)e->nmodels, .models = pm, .nparts = e->partition.subclusters,
					.r_max = e->partition.r_max, .s_max = cap > 0 ? cap : 0, .w = e->partition.w,
					.c_max = e->partition.c_max, .time_limit_s = 1, .seed = e->seed };
}

/* The busiest part's busy fraction under split gpu_part (GPUs marked in
 * in_service, NULL: all), and that part's rate in *rate. A part's GPUs of
 * kind k each do 1 / T_k of its work per second, T_k the GPU time its models
 * need on kind k (part_time at its GPU count): busy 1 / sum_k (n_k / T_k),
 * T / n with one kind; infinite when none can meet the SLO (or it has no
 * GPU), 0 without requests. */
static double bottleneck(const struct sym_experiment *e, const double *rates, const int *model_part, int L,
			 const int *gpu_part, const bool *in_service, double *rate)
{
	double worst = -1;
	*rate = 0;
	for (int j = 0; j < L; j++) {
		int n = 0, nk[SYM_MAX_DEVICE_KINDS] = { 0 };
		for (int g = 0; g < e->gpus; g++)
			if (gpu_part[g] == j && (!in_service || in_service[g])) {
				n++;
				nk[e->gpu_kind ? e->gpu_kind[g] : 0]++;
			}
		double supply = 0, r = 0;
		bool idle = false;
		for (int k = 0; k < e->nkinds && k < SYM_MAX_DEVICE_KINDS; k++) {
			if (!nk[k])
				continue;
			double t = part_time(e, model_part, j, k, rates, n);
			idle |= t == 0;
			supply += isinf(t) ? 0 : nk[k] / t;
		}
		double u = idle ? 0 : supply > 0 ? 1 / supply : HUGE_VAL;
		for (size_t i = 0; i < e->nmodels; i++)
			r += model_part[i] == j ? rates[i] : 0;
		if (u > worst) {
			worst = u;
			*rate = r;
		}
	}
	return worst;
}

/* Whether the split gpu_new of the same models is worth its moves over
 * gpu_part (control/epoch.h: its busiest part's gain against that count's
 * noise). */
static bool split_pays(const struct sym_experiment *e, const double *rates, double secs, const int *model_part, int L,
		       const int *gpu_part, const int *gpu_new, const bool *in_service)
{
	double rc, rn;
	double cur = bottleneck(e, rates, model_part, L, gpu_part, in_service, &rc);
	double next = bottleneck(e, rates, model_part, L, gpu_new, in_service, &rn);
	return sym_epoch_split_pays(cur, rc, next, secs, e->partition.noise_sigmas);
}

/* The search and the GPU split of sym_subclusters_epoch: 0, 1 (nothing to
 * change, err says why) or -ENOMEM; r->assign and gpu_new filled on 0. */
static int epoch_search(const struct sym_experiment *e, const double *rates, double secs, const int *model_part,
			const int *gpu_part, const bool *in_service, struct sym_part_model *pm, double *cap,
			struct sym_part_result *r, int *gpu_new, char *err, size_t errlen)
{
	int L = e->partition.subclusters;
	struct sym_part_problem p;
	sym_subclusters_epoch_problem(e, rates, model_part, pm, &p);
	*cap = p.s_max;
	err[0] = '\0';
	int rc = sym_partition_local(&p, SYM_EPOCH_SEARCH_STEPS, r, err, errlen);
	if (rc == -ENOMEM)
		return rc;
	if (rc || r->status != SYM_PART_FEASIBLE) {
		if (!err[0])
			snprintf(err, errlen, "no partition meets the limits at the measured rates");
		return 1;
	}
	double total = 0;
	for (int i = 0; i < p.nmodels; i++)
		total += rates[i];
	if (e->partition.noise_sigmas > 0 && secs > 0) { /* a gain within the counts' noise: stay */
		struct sym_part_result cur = { 0 };
		int ok = sym_partition_score(&p, model_part, &cur);
		if (ok < 0) {
			sym_part_result_free(&cur);
			return ok;
		}
		if (ok == 1 && !sym_epoch_assign_pays(cur.objective - r->objective, total, secs, e->partition.noise_sigmas)) {
			cur.status = SYM_PART_FEASIBLE;
			sym_part_result_free(r);
			*r = cur;
		} else {
			sym_part_result_free(&cur);
		}
	}
	bool same = !memcmp(r->assign, model_part, e->nmodels * sizeof(int));
	if (!in_service) {
		rc = sym_subclusters_split(e, rates, r->assign, L, gpu_part, gpu_new, NULL, err, errlen);
		if (!rc && same && !split_pays(e, rates, secs, model_part, L, gpu_part, gpu_new, NULL))
			memcpy(gpu_new, gpu_part, (size_t)e->gpus * sizeof(int));
		return rc == -ENOMEM ? rc : rc ? 1 : 0;
	}
	int *ids = malloc((size_t)e->gpus * 4 * sizeof(int)), n = 0;
	if (!ids)
		return -ENOMEM;
	int *prev = ids + e->gpus, *got = prev + e->gpus, *kind = got + e->gpus;
	for (int g = 0; g < e->gpus; g++) {
		gpu_new[g] = gpu_part[g];
		if (in_service[g]) {
			prev[n] = gpu_part[g];
			kind[n] = e->gpu_kind ? e->gpu_kind[g] : 0;
			ids[n++] = g;
		}
	}
	struct sym_experiment pool = *e; /* the GPUs in service, in id order, with their kinds */
	pool.gpus = n;
	pool.gpu_kind = kind;
	rc = 1;
	if (n < L)
		snprintf(err, errlen, "%d GPUs in service for %d sub-clusters", n, L);
	else if (!(rc = sym_subclusters_split(&pool, rates, r->assign, L, prev, got, NULL, err, errlen)))
		for (int k = 0; k < n; k++)
			gpu_new[ids[k]] = got[k];
	if (!rc && same && !split_pays(e, rates, secs, model_part, L, gpu_part, gpu_new, in_service))
		memcpy(gpu_new, gpu_part, (size_t)e->gpus * sizeof(int));
	free(ids);
	return rc == -ENOMEM ? rc : rc ? 1 : 0;
}

int sym_subclusters_epoch(const struct sym_experiment *e, struct sym_epoch_step *x, char *err, size_t errlen)
{
	size_t n = e->nmodels;
	int L = e->partition.subclusters;
	x->models_moving = x->gpus_moving = 0;
	if (x->busy)
		return snprintf(err, errlen, "the last epoch's moves are still under way"), 1;
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += x->rates[i];
	if (!(total > 0))
		return snprintf(err, errlen, "no requests measured"), 1;
	struct sym_part_model *pm = calloc(n, sizeof(*pm));
	double *st = malloc(n * sizeof(double)), *dy = malloc(n * sizeof(double));
	struct sym_part_result r = { 0 };
	double cap;
	int rc = -ENOMEM;
	if (!pm || !st || !dy)
		goto out;
	rc = epoch_search(e, x->rates, x->secs, x->model_part, x->gpu_part, x->in_service, pm, &cap, &r, x->gpu_new, err,
			  errlen);
	if (rc)
		goto out;
	memcpy(x->assign, r.assign, n * sizeof(int));
	x->rate_imbalance = r.rate_imbalance;
	x->mem_imbalance = r.mem_imbalance;
	/* the moves by memory: what each part's GPUs hold now (the models in it, an unloaded one
	 * holding nothing), then each move's kind */
	for (int j = 0; j < L; j++)
		x->held_mb[j] = 0;
	for (size_t i = 0; i < n; i++) {
		st[i] = pm[i].static_mb;
		dy[i] = pm[i].dynamic_mb;
		if (!x->fixed || !x->fixed[i])
			x->held_mb[x->model_part[i]] += st[i];
	}
	struct sym_moves_in mi = { .nmodels = (int)n, .nparts = L, .from = x->model_part, .to = x->assign,
				   .fixed = x->fixed, .static_mb = st, .dynamic_mb = dy, .cap_mb = cap };
	int moving = sym_moves_plan(&mi, x->held_mb, x->move);
	if (moving < 0) {
		snprintf(err, errlen, "%d sub-clusters: more than one core's parts", L);
		rc = -EINVAL;
		goto out;
	}
	x->models_moving = moving;
	for (int g = 0; g < e->gpus; g++)
		x->gpus_moving += x->gpu_new[g] != x->gpu_part[g];
out:
	sym_part_result_free(&r);
	free(pm);
	free(st);
	free(dy);
	return rc;
}
