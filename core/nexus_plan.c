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
 *    merge fits when sum lat(b_i) <= D' and the memory fits (the one rule of
 *    core/memory.h: the static memory of every model on the GPU plus the
 *    largest dynamic memory within the GPU's memory). "Best" is the highest resulting occupancy
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
#include "core/memory.h"

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
static bool add_session(const struct packing *pk, int i, sym_time D, sym_time *busy, struct sym_mem *mem)
{
	const struct sym_nexus_model *m = &pk->models[pk->res[i].model];
	int b = batch_for(D, pk->res[i].rate, m->max_batch);
	if (D + m->lat[b] + m->delay > m->slo)
		return false;
	*busy += m->lat[b];
	sym_mem_add(mem, m->static_mb, m->dynamic_mb);
	return true;
}

/* Step 3: would residual j fit on bin bn? If so, the merged cycle, busy time
 * and memory. */
static bool try_merge(const struct packing *pk, const struct bin *bn, int j, struct bin *out)
{
	sym_time D = bn->duty < pk->res[j].duty ? bn->duty : pk->res[j].duty;
	sym_time busy = 0;
	struct sym_mem mem = { 0, 0 };
	for (int i = bn->head; i >= 0; i = pk->next[i])
		if (!add_session(pk, i, D, &busy, &mem))
			return false;
	if (!add_session(pk, j, D, &busy, &mem))
		return false;
	if (busy > D || (pk->cap > 0 && sym_mem_need(&mem) > pk->cap))
		return false;
	*out = *bn;
	out->duty = D;
	out->busy = busy;
	out->mem = sym_mem_need(&mem);
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
			.mem = sym_mem_model(md->static_mb, md->dynamic_mb),
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
		double mem = sym_mem_model(md->static_mb, md->dynamic_mb);
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

/* ---- incremental re-planning (Section 6.1, its last paragraph) ---- */

/* Sessions (mod[i], rate[i]) on one GPU: whether they fit it, and then its
 * cycle, busy time, memory and each session's batch. One session may run
 * saturated (back to back at its largest SLO-safe batch, up to its
 * throughput); several share a cycle as in step 3. */
static bool gpu_fit(const struct sym_nexus_model *models, const int *mod, const double *rate, int n, double cap,
		    sym_time *duty, sym_time *busy, double *mem, int *batch)
{
	sym_time D = 0;
	if (n == 1) {
		const struct sym_nexus_model *md = &models[mod[0]];
		int B = sat_batch(md);
		if (rate[0] > (double)B * 1e9 / (double)md->lat[B] * (1 + 1e-9))
			return false;
		if (!resid_choose(md, rate[0], &batch[0], &D)) {
			batch[0] = B;
			D = md->lat[B];
		}
		*duty = D;
		*busy = md->lat[batch[0]];
		*mem = sym_mem_model(md->static_mb, md->dynamic_mb);
		return true;
	}
	for (int i = 0; i < n; i++) {
		int b;
		sym_time d;
		if (!resid_choose(&models[mod[i]], rate[i], &b, &d))
			return false; /* needs a GPU of its own */
		D = i == 0 || d < D ? d : D;
	}
	sym_time bz = 0;
	struct sym_mem use = { 0, 0 };
	for (int i = 0; i < n; i++) {
		const struct sym_nexus_model *md = &models[mod[i]];
		batch[i] = batch_for(D, rate[i], md->max_batch);
		if (D + md->lat[batch[i]] + md->delay > md->slo)
			return false;
		bz += md->lat[batch[i]];
		sym_mem_add(&use, md->static_mb, md->dynamic_mb);
	}
	if (bz > D || (cap > 0 && sym_mem_need(&use) > cap))
		return false;
	*duty = D;
	*busy = bz;
	*mem = sym_mem_need(&use);
	return true;
}

struct igpu {
	int n;
	int *mod;    /* nmodels slots */
	double *rate;
	int *batch;
	sym_time duty, busy;
	double mem;
	bool gone;
};

static bool igpu_refit(const struct sym_nexus_model *models, struct igpu *x, double cap)
{
	return x->n > 0 && gpu_fit(models, x->mod, x->rate, x->n, cap, &x->duty, &x->busy, &x->mem, x->batch);
}

int sym_nexus_plan_incremental(struct sym_nexus_plan *plan, const struct sym_nexus_plan *prev,
			       const struct sym_nexus_model *models, int nmodels, double gpu_memory_mb, int max_gpus,
			       int *evicted, int *released)
{
	sym_nexus_plan_finish(plan);
	*evicted = *released = 0;
	if (!prev || nmodels < 1 || !models || isnan(gpu_memory_mb))
		return -EINVAL;
	for (int m = 0; m < nmodels; m++)
		if (!model_ok(&models[m]))
			return -EINVAL;
	for (int i = 0; i < prev->nsessions; i++)
		if (prev->sessions[i].model < 0 || prev->sessions[i].model >= nmodels)
			return -EINVAL;
	int P = prev->ngpus, rc = -ENOMEM;
	double *old = calloc((size_t)nmodels, sizeof(double)), *kept = calloc((size_t)nmodels, sizeof(double));
	struct igpu *gp = calloc(P ? (size_t)P : 1, sizeof(*gp));
	int *slots = calloc((size_t)(P ? P : 1) * (size_t)nmodels * 2, sizeof(int));
	double *rates = calloc((size_t)(P ? P : 1) * (size_t)nmodels, sizeof(double));
	struct sym_nexus_model *resid = malloc((size_t)nmodels * sizeof(*resid));
	struct sym_nexus_plan extra;
	sym_nexus_plan_init(&extra);
	if (!old || !kept || !gp || !slots || !rates || !resid)
		goto out;
	double old_total = 0, new_total = 0;
	for (int m = 0; m < nmodels; m++) {
		old[m] = sym_nexus_plan_rate(prev, m);
		old_total += old[m];
		new_total += models[m].rate;
	}
	/* the previous GPUs with their sessions' rates scaled to the new rates (a saturated GPU keeps its
	 * throughput when its model grew: the growth is left to the residual) */
	for (int p = 0; p < P; p++) {
		struct igpu *x = &gp[p];
		x->mod = slots + (size_t)p * (size_t)nmodels * 2;
		x->batch = x->mod + nmodels;
		x->rate = rates + (size_t)p * (size_t)nmodels;
		for (int i = 0; i < prev->gpus[p].nsessions; i++) {
			const struct sym_nexus_session *s = sym_nexus_plan_session(prev, p, i);
			double f = old[s->model] > 0 ? models[s->model].rate / old[s->model] : 0;
			double r = prev->gpus[p].saturated && f > 1 ? s->rate : s->rate * f;
			if (r <= RESID_EPS || models[s->model].lat[1] + models[s->model].delay > models[s->model].slo)
				continue;
			x->mod[x->n] = s->model;
			x->rate[x->n++] = r;
		}
		/* overloaded: evict the cheapest session (the least occupancy alone) until it fits */
		while (x->n > 0 && !igpu_refit(models, x, gpu_memory_mb)) {
			int cheap = 0;
			double best = INFINITY;
			for (int i = 0; i < x->n; i++) {
				const struct sym_nexus_model *md = &models[x->mod[i]];
				int b;
				sym_time d;
				double occ = resid_choose(md, x->rate[i], &b, &d) ? (double)md->lat[b] / (double)d : 1;
				if (occ < best) {
					best = occ;
					cheap = i;
				}
			}
			x->mod[cheap] = x->mod[x->n - 1];
			x->rate[cheap] = x->rate[x->n - 1];
			x->n--;
			(*evicted)++;
		}
		x->gone = x->n == 0;
	}
	/* less load: move the sessions of the least utilised GPUs (under half busy) onto the others */
	while (new_total < old_total) {
		int lo = -1;
		for (int p = 0; p < P; p++)
			if (!gp[p].gone && (double)gp[p].busy < 0.5 * (double)gp[p].duty &&
			    (lo < 0 || (double)gp[p].busy / (double)gp[p].duty < (double)gp[lo].busy / (double)gp[lo].duty))
				lo = p;
		if (lo < 0)
			break;
		struct igpu *x = &gp[lo];
		x->gone = true; /* tentatively: its sessions try the others */
		int moved = 0;
		for (int i = 0; i < x->n; i++) {
			int dst = -1;
			for (int p = 0; p < P && dst < 0; p++) {
				struct igpu *y = &gp[p];
				if (y->gone || y->n >= nmodels)
					continue;
				bool dup = false;
				for (int j = 0; j < y->n; j++)
					dup |= y->mod[j] == x->mod[i];
				if (dup)
					continue;
				y->mod[y->n] = x->mod[i];
				y->rate[y->n++] = x->rate[i];
				if (igpu_refit(models, y, gpu_memory_mb))
					dst = p;
				else
					y->n--;
			}
			if (dst < 0)
				break;
			moved++;
		}
		if (moved < x->n) {
			/* undo: take the moved sessions back off their new GPUs, and stop */
			for (int i = 0; i < moved; i++)
				for (int p = 0; p < P; p++) {
					struct igpu *y = &gp[p];
					if (y->gone)
						continue;
					for (int j = 0; j < y->n; j++)
						if (y->mod[j] == x->mod[i] && y->rate[j] == x->rate[i]) {
							y->mod[j] = y->mod[y->n - 1];
							y->rate[j] = y->rate[y->n - 1];
							y->n--;
							igpu_refit(models, y, gpu_memory_mb);
							p = P;
							break;
						}
				}
			x->gone = false;
			break;
		}
		(*released)++;
	}
	/* what the kept GPUs do not carry goes to the bin packing of steps 1-3 */
	int nkept = 0, nsess = 0;
	for (int p = 0; p < P; p++) {
		if (gp[p].gone)
			continue;
		if (!igpu_refit(models, &gp[p], gpu_memory_mb)) {
			rc = -EINVAL; /* cannot happen: every kept GPU fits */
			goto out;
		}
		nkept++;
		nsess += gp[p].n;
		for (int i = 0; i < gp[p].n; i++)
			kept[gp[p].mod[i]] += gp[p].rate[i];
	}
	for (int m = 0; m < nmodels; m++) {
		resid[m] = models[m];
		double r = models[m].rate - kept[m];
		resid[m].rate = r > RESID_EPS * (models[m].rate > 1 ? models[m].rate : 1) ? r : 0;
		/* relocate it onto a kept GPU that has room for it (the fullest such), else leave it to the packing */
		if (resid[m].rate > 0 && models[m].lat[1] + models[m].delay <= models[m].slo) {
			int dst = -1;
			double occ = -1;
			for (int p = 0; p < P; p++) {
				struct igpu *y = &gp[p];
				bool dup = false;
				for (int j = 0; j < y->n; j++)
					dup |= y->mod[j] == m;
				if (y->gone || dup || y->n >= nmodels)
					continue;
				y->mod[y->n] = m;
				y->rate[y->n++] = resid[m].rate;
				if (igpu_refit(models, y, gpu_memory_mb) && (double)y->busy / (double)y->duty > occ) {
					occ = (double)y->busy / (double)y->duty;
					dst = p;
				}
				y->n--;
				igpu_refit(models, y, gpu_memory_mb);
			}
			if (dst >= 0) {
				struct igpu *y = &gp[dst];
				y->mod[y->n] = m;
				y->rate[y->n++] = resid[m].rate;
				igpu_refit(models, y, gpu_memory_mb);
				nsess++;
				resid[m].rate = 0;
			}
		}
	}
	int left = max_gpus > 0 ? max_gpus - nkept : 0;
	if (max_gpus > 0 && left < 0) {
		rc = -ENOSPC;
		goto out;
	}
	bool any = false;
	for (int m = 0; m < nmodels; m++)
		any |= resid[m].rate > 0;
	if (any && (rc = sym_nexus_plan_compute(&extra, resid, nmodels, gpu_memory_mb, max_gpus > 0 ? (left ? left : -1) : 0)))
		goto out;
	if (any && max_gpus > 0 && left == 0 && extra.ngpus > 0) {
		rc = -ENOSPC;
		goto out;
	}
	int ng = nkept + extra.ngpus, ns = nsess + extra.nsessions;
	plan->gpus = calloc(ng ? (size_t)ng : 1, sizeof(*plan->gpus));
	plan->sessions = calloc(ns ? (size_t)ns : 1, sizeof(*plan->sessions));
	if (!plan->gpus || !plan->sessions) {
		sym_nexus_plan_finish(plan);
		rc = -ENOMEM;
		goto out;
	}
	int g = 0, s = 0;
	for (int p = 0; p < P; p++) {
		const struct igpu *x = &gp[p];
		if (x->gone)
			continue;
		const struct sym_nexus_model *md = &models[x->mod[0]];
		plan->gpus[g++] = (struct sym_nexus_gpu){
			.duty = x->duty, .busy = x->busy, .memory_mb = x->mem, .first = s, .nsessions = x->n,
			.saturated = x->n == 1 && x->batch[0] == sat_batch(md) && x->duty == md->lat[x->batch[0]] };
		for (int i = 0; i < x->n; i++)
			plan->sessions[s++] = (struct sym_nexus_session){ .model = x->mod[i], .batch = x->batch[i],
									  .rate = x->rate[i] };
	}
	for (int p = 0; p < extra.ngpus; p++) {
		plan->gpus[g] = extra.gpus[p];
		plan->gpus[g++].first = s;
		for (int i = 0; i < extra.gpus[p].nsessions; i++)
			plan->sessions[s++] = *sym_nexus_plan_session(&extra, p, i);
	}
	plan->ngpus = g;
	plan->nsessions = s;
	rc = 0;
out:
	sym_nexus_plan_finish(&extra);
	free(old);
	free(kept);
	free(gp);
	free(slots);
	free(rates);
	free(resid);
	return rc;
}
