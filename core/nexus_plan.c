/* core/nexus_plan.c - squishy bin packing (Nexus, SOSP'19), as a pure function.
 *
 * Notation, per model: rate r (requests/s), SLO L, lat(b) the time a batch of
 * b holds the GPU, delay the latency after that (the response's trip back).
 * A GPU with duty cycle D runs each of its sessions' batches once per D, so a
 * request waits at most D for its batch and the worst-case latency of a
 * session with batch b is D + lat(b) + delay. Every rule below keeps
 *
 *     D + lat(b) + delay <= L  for every session,    sum of lat(b) <= D.
 *
 * 1. Saturate. A GPU given to one model alone runs batch B back to back:
 *    D = lat(B), so the latency bound reads 2*lat(B) + delay <= L. B is the
 *    largest such batch (1 when none is: the model is then served at its
 *    fastest, past its SLO under full load) and the GPU's throughput is
 *    T = B / lat(B). The model gets floor(r / T) such whole GPUs.
 * 2. Residual. What is left, r' = r - floor(r/T) * T < T, is served by a
 *    share of a GPU: the largest b with lat(b) + b/r' + delay <= L (waiting
 *    for b arrivals takes b/r', the duty cycle D = b/r') and lat(b) <= b/r'
 *    (the occupancy lat(b)/D must not exceed 1). A rate too low for even one
 *    request per b/r' (1/r' > L - lat(1) - delay) gets b = 1 and the longest
 *    cycle its SLO allows, D = L - lat(1) - delay (then D*r' <= 1, so batches
 *    of 1 keep up). A residual that no batch serves within both limits gets a
 *    whole GPU at batch B, as in step 1 (it needs nearly one anyway).
 * 3. Pack. Residuals are taken by occupancy lat(b)/D, largest first (ties:
 *    lower model index). Each joins the open GPU where it fits best, else
 *    opens a new one. Merging a session with cycle d into a GPU with cycle D
 *    gives the cycle D' = min(D, d); every session on it then runs
 *    b_i = ceil(D' * r_i) (at least 1) per cycle, enough to keep up with its
 *    rate. Since D' <= d_i = b_i0 / r_i, the new batch is no larger than the
 *    session's own, so its latency bound still holds (checked anyway). The
 *    merge fits when sum lat(b_i) <= D' and the memory fits: the known static
 *    memory of every model on the GPU plus the largest dynamic memory (one
 *    batch runs at a time and releases its dynamic memory when done) must not
 *    exceed the GPU's memory. "Best" is the highest resulting occupancy
 *    sum lat(b_i) / D' (ties: the GPU opened first): it fills GPUs tightly and
 *    leaves the emptier ones for residuals that need room.
 *
 * Memory does not stop a model from being placed alone: a model too large for
 * the GPU still gets its GPUs (the core does not model memory), it only never
 * shares one. Durations are whole nanoseconds: D = b/r' is rounded to the
 * nearest ns and batches take a relative slack of 1e-6 (ceil(x - 1e-6)) so
 * that rounding never adds a request to a batch.
 *
 * The reference example (lat in ms, interpolated between the published
 * points): A (64 r/s, L 200) has T = 16/100ms = 160 r/s, no whole GPU, residual
 * b = 8 (75 + 125 = 200 <= 200), D = 125 ms, occupancy 0.6. B (32 r/s, L 250)
 * gets b = 5 (60 + 156.25 <= 250), occupancy 0.384; C (32 r/s, L 250) b = 5
 * (68.75 + 156.25 <= 250), occupancy 0.44. Order A, C, B. C beside A: D' = 125,
 * C runs ceil(0.125*32) = 4 (60 ms), 75 + 60 > 125: a new GPU. B beside A:
 * D' = 125, B runs 4 (50 ms), 75 + 50 = 125 fits, occupancy 1.0; beside C:
 * 68.75 + 60 = 128.75 <= 156.25, occupancy 0.82; A's GPU wins. Two GPUs.
 */
#include "core/nexus_plan.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_SLACK 1e-6
/* A residual below this fraction of the rate is rounding, not load. */
#define RESID_EPS 1e-9

struct resid {
	int model;
	double rate;
	int batch;
	sym_time duty;
	double occ;
};

struct bin {
	sym_time duty;
	sym_time busy;
	double mem;
	int head, tail; /* members, indices into the residuals, linked by next[] */
};

void sym_nexus_plan_init(struct sym_nexus_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
}

void sym_nexus_plan_finish(struct sym_nexus_plan *plan)
{
	if (!plan)
		return;
	free(plan->gpus);
	free(plan->sessions);
	memset(plan, 0, sizeof(*plan));
}

double sym_nexus_plan_rate(const struct sym_nexus_plan *plan, int m)
{
	double r = 0;
	for (int i = 0; i < plan->nsessions; i++)
		if (plan->sessions[i].model == m)
			r += plan->sessions[i].rate;
	return r;
}

static bool model_ok(const struct sym_nexus_model *m)
{
	if (!isfinite(m->rate) || m->rate < 0 || m->slo <= 0 || !m->lat || m->max_batch < 1 || m->delay < 0 ||
	    isnan(m->static_mb) || isnan(m->dynamic_mb))
		return false;
	for (int b = 1; b <= m->max_batch; b++)
		if (m->lat[b] <= 0 || (b > 1 && m->lat[b] < m->lat[b - 1]))
			return false;
	return true;
}

static double known(double mb)
{
	return mb > 0 ? mb : 0;
}

/* The batch a session of `rate` runs per cycle of `duty`: ceil(duty * rate),
 * at least 1, at most maxb. */
static int batch_for(sym_time duty, double rate, int maxb)
{
	double c = ceil((double)duty / 1e9 * rate - BATCH_SLACK);
	if (c < 1)
		return 1;
	return c > maxb ? maxb : (int)c;
}

/* Step 1: the largest B with 2*lat(B) + delay <= L, else 1. */
static int sat_batch(const struct sym_nexus_model *m)
{
	for (int b = m->max_batch; b > 1; b--)
		if (2 * m->lat[b] + m->delay <= m->slo)
			return b;
	return 1;
}

/* Step 2: the residual's batch and duty cycle; false when it needs a whole GPU. */
static bool resid_choose(const struct sym_nexus_model *m, double r, int *batch, sym_time *duty)
{
	for (int b = m->max_batch; b >= 1; b--) {
		double d = (double)b * 1e9 / r;
		if (d > (double)m->slo)
			continue;
		sym_time dn = (sym_time)llround(d);
		if (m->lat[b] + dn + m->delay <= m->slo && m->lat[b] <= dn) {
			*batch = b;
			*duty = dn;
			return true;
		}
	}
	sym_time dn = m->slo - m->lat[1] - m->delay;
	if (m->lat[1] <= dn && (double)dn / 1e9 * r <= 1 + BATCH_SLACK) {
		*batch = 1;
		*duty = dn;
		return true;
	}
	return false;
}

struct packing {
	const struct sym_nexus_model *models;
	const struct resid *res;
	const int *next;
	double cap;
};

/* Adds residual i to a GPU of cycle D being checked; false when it breaks its
 * latency bound. */
static bool add_session(const struct packing *pk, int i, sym_time D, sym_time *busy, double *stat, double *dyn)
{
	const struct sym_nexus_model *m = &pk->models[pk->res[i].model];
	int b = batch_for(D, pk->res[i].rate, m->max_batch);
	if (D + m->lat[b] + m->delay > m->slo)
		return false;
	*busy += m->lat[b];
	*stat += known(m->static_mb);
	if (known(m->dynamic_mb) > *dyn)
		*dyn = known(m->dynamic_mb);
	return true;
}

/* Step 3: would residual j fit on bin bn? If so, the merged cycle, busy time
 * and memory. */
static bool try_merge(const struct packing *pk, const struct bin *bn, int j, struct bin *out)
{
	sym_time D = bn->duty < pk->res[j].duty ? bn->duty : pk->res[j].duty;
	sym_time busy = 0;
	double stat = 0, dyn = 0;
	for (int i = bn->head; i >= 0; i = pk->next[i])
		if (!add_session(pk, i, D, &busy, &stat, &dyn))
			return false;
	if (!add_session(pk, j, D, &busy, &stat, &dyn))
		return false;
	if (busy > D || (pk->cap > 0 && stat + dyn > pk->cap))
		return false;
	*out = *bn;
	out->duty = D;
	out->busy = busy;
	out->mem = stat + dyn;
	return true;
}

static int cmp_resid(const void *a, const void *b)
{
	const struct resid *x = a, *y = b;
	if (x->occ != y->occ)
		return x->occ > y->occ ? -1 : 1;
	return (x->model > y->model) - (x->model < y->model);
}

int sym_nexus_plan_compute(struct sym_nexus_plan *plan, const struct sym_nexus_model *models, int nmodels,
			   double gpu_memory_mb, int max_gpus)
{
	sym_nexus_plan_finish(plan);
	if (nmodels < 0 || (nmodels && !models) || isnan(gpu_memory_mb))
		return -EINVAL;
	for (int m = 0; m < nmodels; m++)
		if (!model_ok(&models[m]))
			return -EINVAL;
	if (!nmodels)
		return 0;
	int rc = -ENOMEM;
	int *nsat = calloc((size_t)nmodels, sizeof(*nsat));
	int *satb = calloc((size_t)nmodels, sizeof(*satb));
	double *whole = calloc((size_t)nmodels, sizeof(*whole)); /* a residual promoted to a whole GPU */
	struct resid *res = calloc((size_t)nmodels, sizeof(*res));
	int *next = calloc((size_t)nmodels, sizeof(*next));
	struct bin *bins = calloc((size_t)nmodels, sizeof(*bins));
	if (!nsat || !satb || !whole || !res || !next || !bins)
		goto out;
	double limit = max_gpus > 0 ? max_gpus : SYM_NEXUS_MAX_GPUS;
	int limit_rc = max_gpus > 0 && max_gpus <= SYM_NEXUS_MAX_GPUS ? -ENOSPC : -EOVERFLOW;
	double need = 0; /* whole GPUs */
	int nres = 0;
	for (int m = 0; m < nmodels; m++) {
		const struct sym_nexus_model *md = &models[m];
		if (md->rate <= 0 || md->lat[1] + md->delay > md->slo)
			continue;
		int B = sat_batch(md);
		double T = (double)B * 1e9 / (double)md->lat[B];
		double k = floor(md->rate / T + RESID_EPS);
		need += k;
		if (need > limit) {
			rc = limit_rc;
			goto out;
		}
		satb[m] = B;
		nsat[m] = (int)k;
		double r = md->rate - k * T;
		if (r <= RESID_EPS * md->rate)
			continue;
		struct resid *x = &res[nres];
		if (resid_choose(md, r, &x->batch, &x->duty)) {
			x->model = m;
			x->rate = r;
			x->occ = (double)md->lat[x->batch] / (double)x->duty;
			nres++;
		} else {
			whole[m] = r;
			if (++need > limit) {
				rc = limit_rc;
				goto out;
			}
		}
	}
	qsort(res, (size_t)nres, sizeof(*res), cmp_resid);
	struct packing pk = { .models = models, .res = res, .next = next, .cap = gpu_memory_mb };
	int nbins = 0;
	for (int j = 0; j < nres; j++) {
		next[j] = -1;
		int best = -1;
		struct bin bb = { 0 };
		for (int i = 0; i < nbins; i++) {
			struct bin t;
			if (!try_merge(&pk, &bins[i], j, &t))
				continue;
			double occ = (double)t.busy / (double)t.duty;
			if (best < 0 || occ > (double)bb.busy / (double)bb.duty) {
				best = i;
				bb = t;
			}
		}
		if (best >= 0) {
			bb.tail = next[bb.tail] = j;
			bins[best] = bb;
			continue;
		}
		if (need + nbins + 1 > limit) {
			rc = limit_rc;
			goto out;
		}
		const struct sym_nexus_model *md = &models[res[j].model];
		bins[nbins++] = (struct bin){
			.duty = res[j].duty,
			.busy = md->lat[res[j].batch],
			.mem = known(md->static_mb) + known(md->dynamic_mb),
			.head = j,
			.tail = j,
		};
	}
	int ngpus = (int)need + nbins;
	int nsess = (int)need + nres;
	plan->gpus = calloc((size_t)ngpus ? (size_t)ngpus : 1, sizeof(*plan->gpus));
	plan->sessions = calloc((size_t)nsess ? (size_t)nsess : 1, sizeof(*plan->sessions));
	if (!plan->gpus || !plan->sessions) {
		sym_nexus_plan_finish(plan);
		goto out;
	}
	int g = 0, s = 0;
	for (int m = 0; m < nmodels; m++) {
		const struct sym_nexus_model *md = &models[m];
		int B = satb[m];
		double mem = known(md->static_mb) + known(md->dynamic_mb);
		for (int i = 0; i < nsat[m] + (whole[m] > 0); i++) {
			plan->gpus[g++] = (struct sym_nexus_gpu){ .duty = md->lat[B], .busy = md->lat[B], .saturated = true,
								  .memory_mb = mem, .first = s, .nsessions = 1 };
			double rate = i < nsat[m] ? (double)B * 1e9 / (double)md->lat[B] : whole[m];
			plan->sessions[s++] = (struct sym_nexus_session){ .model = m, .batch = B, .rate = rate };
		}
	}
	for (int i = 0; i < nbins; i++) {
		struct sym_nexus_gpu *x = &plan->gpus[g++];
		*x = (struct sym_nexus_gpu){ .duty = bins[i].duty, .memory_mb = bins[i].mem, .first = s };
		for (int j = bins[i].head; j >= 0; j = next[j]) {
			const struct sym_nexus_model *md = &models[res[j].model];
			int b = batch_for(bins[i].duty, res[j].rate, md->max_batch);
			x->busy += md->lat[b];
			x->nsessions++;
			plan->sessions[s++] = (struct sym_nexus_session){ .model = res[j].model, .batch = b,
									  .rate = res[j].rate };
		}
	}
	plan->ngpus = g;
	plan->nsessions = s;
	rc = 0;
out:
	free(nsat);
	free(satb);
	free(whole);
	free(res);
	free(next);
	free(bins);
	return rc;
}
