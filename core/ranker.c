#include "core/ranker.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static inline void idle_set(struct sym_ranker *r, int g)
{
	uint64_t bit = (uint64_t)1 << (g & 63);
	if (!(r->idle[g >> 6] & bit)) {
		r->idle[g >> 6] |= bit;
		r->nidle++;
	}
}

static inline void idle_clear(struct sym_ranker *r, int g)
{
	uint64_t bit = (uint64_t)1 << (g & 63);
	if (r->idle[g >> 6] & bit) {
		r->idle[g >> 6] &= ~bit;
		r->nidle--;
	}
}

/* The lowest idle GPU, or -1. */
static inline int idle_lowest(const struct sym_ranker *r)
{
	if (!r->nidle)
		return -1;
	for (int w = 0;; w++)
		if (r->idle[w])
			return w * 64 + __builtin_ctzll(r->idle[w]);
}

int sym_ranker_init(struct sym_ranker *r, int kind, int ngpus, const int *gpu_kind, int nmodels, bool send_ahead,
		    sym_xsend_fn send, void *ctx)
{
	memset(r, 0, sizeof(*r));
	if (ngpus < 1 || nmodels < 1 || !send)
		return -EINVAL;
	r->kind = kind;
	r->ngpus = ngpus;
	r->nmodels = nmodels;
	r->send_ahead = send_ahead;
	r->send = send;
	r->ctx = ctx;
	r->idle_words = (ngpus + 63) / 64;
	r->idle = calloc((size_t)r->idle_words, sizeof(*r->idle));
	int err = r->idle ? sym_iheap_init(&r->pend, ngpus) : -ENOMEM;
	if (!err)
		err = sym_iheap_init(&r->ready, nmodels);
	r->delay = calloc((size_t)nmodels, sizeof(*r->delay));
	r->seq = calloc((size_t)nmodels, sizeof(*r->seq));
	r->g = calloc((size_t)ngpus, sizeof(*r->g));
	if (!err && (!r->delay || !r->seq || !r->g))
		err = -ENOMEM;
	if (err) {
		sym_ranker_finish(r);
		return err;
	}
	for (int g = 0; g < ngpus; g++) {
		if (gpu_kind && gpu_kind[g] != kind) {
			r->g[g].off = true; /* not ours: never placed */
			continue;
		}
		idle_set(r, g);
	}
	return 0;
}

int sym_ranker_set_lookahead(struct sym_ranker *r, double margin)
{
	if (!(margin >= 0 && margin <= 1000))
		return -EINVAL;
	r->margin = margin;
	if (r->lookahead)
		return 0;
	r->cand = calloc((size_t)r->nmodels, sizeof(*r->cand));
	r->active = malloc((size_t)r->nmodels * sizeof(*r->active));
	r->apos = malloc((size_t)r->nmodels * sizeof(*r->apos));
	r->order = malloc((size_t)r->nmodels * sizeof(*r->order));
	r->avail = malloc((size_t)r->ngpus * sizeof(*r->avail));
	r->mplan = malloc((size_t)r->ngpus * sizeof(*r->mplan));
	r->slot_gpu = malloc((size_t)r->ngpus * sizeof(*r->slot_gpu));
	if (!r->cand || !r->active || !r->apos || !r->order || !r->avail || !r->mplan || !r->slot_gpu)
		return -ENOMEM;
	for (int m = 0; m < r->nmodels; m++) {
		r->apos[m] = -1;
		r->cand[m].cap = SYM_TIME_NEVER;
	}
	r->lookahead = true;
	return 0;
}

void sym_ranker_finish(struct sym_ranker *r)
{
	if (!r)
		return;
	free(r->cand);
	free(r->active);
	free(r->apos);
	free(r->order);
	free(r->avail);
	free(r->mplan);
	free(r->slot_gpu);
	r->cand = NULL;
	r->active = r->apos = r->order = r->slot_gpu = NULL;
	r->avail = r->mplan = NULL;
	free(r->idle);
	r->idle = NULL;
	sym_iheap_finish(&r->pend);
	sym_iheap_finish(&r->ready);
	free(r->delay);
	free(r->seq);
	free(r->g);
	r->delay = NULL;
	r->seq = NULL;
	r->g = NULL;
}

/* Puts GPU g where its state says: idle, pending (send-ahead: one batch
 * outstanding) or neither (granted, offline, or a plan already ahead). */
static void place(struct sym_ranker *r, int g)
{
	const struct sym_ranker_gpu *x = &r->g[g];
	bool idle = false, pend = false;
	if (!x->off && !x->granted) {
		idle = x->nout <= 0;
		pend = x->nout == 1 && r->send_ahead;
	}
	if (idle)
		idle_set(r, g);
	else
		idle_clear(r, g);
	if (pend)
		sym_iheap_set(&r->pend, g, x->free_at);
	else
		sym_iheap_remove(&r->pend, g);
}

/* ---- look-ahead: the candidates the plan sees ---- */

static void activate(struct sym_ranker *r, int m)
{
	if (r->apos[m] >= 0)
		return;
	r->apos[m] = r->nactive;
	r->active[r->nactive++] = m;
}

/* Model m has no candidate here any more (neither deferred nor ready). */
static void deactivate(struct sym_ranker *r, int m)
{
	int i = r->apos[m];
	if (i < 0)
		return;
	int last = r->active[--r->nactive];
	r->active[i] = last;
	r->apos[last] = i;
	r->apos[m] = -1;
}

/* Model m's deferred candidate is gone (it is ready, gone, or replaced). */
static void undefer(struct sym_ranker *r, int m)
{
	struct sym_ranker_cand *c = &r->cand[m];
	if (c->state == 1 && c->cap != SYM_TIME_NEVER)
		r->ncapped--;
	c->state = 0;
	c->cap = SYM_TIME_NEVER;
}

void sym_ranker_recv(struct sym_ranker *r, const struct sym_xmsg *m)
{
	switch (m->type) {
	case SYM_X_READY:
		sym_iheap_set(&r->ready, m->model, m->t1);
		r->delay[m->model] = m->t2;
		r->seq[m->model] = m->seq;
		if (r->lookahead) {
			undefer(r, m->model);
			r->cand[m->model].d = m->t1 + m->t3;
			r->cand[m->model].p = m->t3;
			activate(r, m->model);
			r->replan = true;
		}
		break;
	case SYM_X_UNREADY:
		sym_iheap_remove(&r->ready, m->model);
		if (r->lookahead) {
			undefer(r, m->model);
			deactivate(r, m->model);
			r->replan = true;
		}
		break;
	case SYM_X_DEFER:
		if (!r->lookahead)
			break;
		sym_iheap_remove(&r->ready, m->model);
		undefer(r, m->model);
		r->cand[m->model] = (struct sym_ranker_cand){ .state = 1, .seq = m->seq, .d = m->t1, .f = m->t2,
							      .p = m->t3, .cap = SYM_TIME_NEVER };
		activate(r, m->model);
		r->replan = true;
		break;
	case SYM_X_TAKEN: {
		struct sym_ranker_gpu *x = &r->g[m->gpu];
		if (!x->granted)
			break;
		x->granted = false;
		if (x->lost) {
			/* granted before an offline or online: the driver drops its
			 * batch (older epoch), so it is as if given back */
			x->lost = false;
		} else {
			x->nout++;
			x->plan_start = m->t1;
			x->plan_len = m->t2 - m->t1;
			if (x->nout == 1 || m->t2 > x->free_at)
				x->free_at = m->t2;
		}
		place(r, m->gpu);
		r->replan = true;
		break;
	}
	case SYM_X_GIVEBACK: {
		struct sym_ranker_gpu *x = &r->g[m->gpu];
		if (!x->granted)
			break;
		x->granted = x->lost = false;
		place(r, m->gpu);
		r->replan = true;
		break;
	}
	default:
		break;
	}
}

void sym_ranker_gpu_done(struct sym_ranker *r, int g, sym_time end)
{
	struct sym_ranker_gpu *x = &r->g[g];
	if (x->off)
		return;
	x->nout--;
	if (x->nout == 1) {
		/* the planned batch starts at its planned start, or now if the one
		 * before it ended late */
		sym_time start = x->plan_start > end ? x->plan_start : end;
		x->free_at = start + x->plan_len;
	} else if (x->nout <= 0) {
		x->free_at = end;
	}
	place(r, g);
	r->replan = true;
}

void sym_ranker_gpu_offline(struct sym_ranker *r, int g, uint32_t epoch)
{
	struct sym_ranker_gpu *x = &r->g[g];
	x->epoch = epoch;
	if (x->off)
		return;
	x->off = true;
	x->nout = 0;
	if (x->granted)
		x->lost = true;
	place(r, g);
	r->replan = true;
}

void sym_ranker_gpu_online(struct sym_ranker *r, int g, uint32_t epoch, sym_time now)
{
	struct sym_ranker_gpu *x = &r->g[g];
	x->epoch = epoch;
	if (!x->off)
		return;
	x->off = false;
	x->nout = 0;
	x->free_at = now;
	if (x->granted)
		x->lost = true;
	place(r, g);
	r->replan = true;
}

static void grant(struct sym_ranker *r, int m, int g, sym_time now)
{
	struct sym_ranker_gpu *x = &r->g[g];
	sym_iheap_remove(&r->ready, m);
	if (r->lookahead) {
		if (r->cand[m].state != 1)
			deactivate(r, m);
		r->replan = true;
	}
	idle_clear(r, g);
	sym_iheap_remove(&r->pend, g);
	x->granted = true;
	struct sym_xmsg msg = { .type = SYM_X_GRANT, .model = m, .gpu = g, .kind = r->kind, .seq = r->seq[m],
				.epoch = x->epoch, .t1 = x->nout > 0 ? x->free_at : now };
	r->send(r->ctx, &msg);
}

/* ---- look-ahead: the plan ---- */

static void send_cap(struct sym_ranker *r, int m, sym_time cap)
{
	struct sym_ranker_cand *c = &r->cand[m];
	if (c->cap == cap)
		return;
	if (c->cap == SYM_TIME_NEVER)
		r->ncapped++;
	else if (cap == SYM_TIME_NEVER)
		r->ncapped--;
	c->cap = cap;
	if (cap != SYM_TIME_NEVER)
		r->pstats.pulls++;
	struct sym_xmsg msg = { .type = SYM_X_PULL, .model = m, .kind = r->kind, .seq = c->seq, .t1 = cap };
	r->send(r->ctx, &msg);
}

/* No cap binds: every deferred candidate's cap goes. */
static void clear_caps(struct sym_ranker *r)
{
	for (int i = 0; i < r->nactive && r->ncapped; i++) {
		int m = r->active[i];
		if (r->cand[m].state == 1)
			send_cap(r, m, SYM_TIME_NEVER);
	}
}

/* Plan order: the latest deadline first (ties: the lower model). */
static bool plan_before(const struct sym_ranker *r, int a, int b)
{
	sym_time da = r->cand[a].d, db = r->cand[b].d;
	return da != db ? da > db : a < b;
}

static void plan(struct sym_ranker *r, sym_time now)
{
	r->replan = false;
	int n = r->nactive;
	if (n <= r->nidle) {
		/* each candidate can have an idle GPU of its own: nothing collides */
		r->pstats.fast++;
		clear_caps(r);
		return;
	}
	r->pstats.plans++;
	/* the candidates, latest deadline first (insertion sort: a few dozen) */
	int *ord = r->order;
	for (int i = 0; i < n; i++) {
		int m = r->active[i], j = i;
		while (j > 0 && plan_before(r, m, ord[j - 1])) {
			ord[j] = ord[j - 1];
			j--;
		}
		ord[j] = m;
	}
	/* the GPUs in service, each free at its predicted time (now when idle);
	 * one granted but not yet taken is left out (what it will run is unknown) */
	int ns = 0;
	for (int g = 0; g < r->ngpus; g++) {
		const struct sym_ranker_gpu *x = &r->g[g];
		if (x->off || x->granted)
			continue;
		r->avail[ns] = x->nout <= 0 || x->free_at < now ? now : x->free_at;
		r->mplan[ns] = SYM_TIME_NEVER;
		r->slot_gpu[ns] = g;
		ns++;
	}
	for (int i = 0; i < n; i++) {
		int m = ord[i];
		const struct sym_ranker_cand *c = &r->cand[m];
		bool deferred = c->state == 1;
		sym_time f = deferred && c->f > now ? c->f : now;
		sym_time p = c->p, keep = (sym_time)(r->margin * (double)p);
		int best = -1;
		sym_time be = 0;
		bool bon = false;
		for (int j = 0; j < ns; j++) {
			sym_time fin = r->mplan[j] == SYM_TIME_NEVER ? c->d : r->mplan[j] - keep;
			if (fin > c->d)
				fin = c->d;
			sym_time st = fin - p;
			if (st < r->avail[j])
				continue;
			sym_time e = f < st ? f : st;
			bool on = r->avail[j] <= e;
			if (best < 0 || e > be || (e == be && on && !bon) ||
			    (e == be && on == bon && r->avail[j] > r->avail[best])) {
				best = j;
				be = e;
				bon = on;
			}
		}
		sym_time cap = SYM_TIME_NEVER;
		if (best >= 0) {
			r->mplan[best] = be > r->avail[best] ? be : r->avail[best];
			if (be < f)
				cap = be;
		} else if (ns > 0) {
			/* it fits nowhere: as soon as it can, on the GPU it overruns least */
			sym_time bs = 0;
			for (int j = 0; j < ns; j++) {
				sym_time fin = r->mplan[j] < c->d ? r->mplan[j] : c->d;
				sym_time sl = fin - p - r->avail[j];
				if (best < 0 || sl > bs) {
					best = j;
					bs = sl;
				}
			}
			r->mplan[best] = r->avail[best];
			cap = now;
			r->pstats.asap++;
		}
		if (deferred)
			send_cap(r, m, cap);
	}
}

void sym_ranker_match(struct sym_ranker *r, sym_time now)
{
	while (!sym_iheap_empty(&r->ready)) {
		int m = sym_iheap_top(&r->ready);
		int gi = idle_lowest(r);
		int gp = sym_iheap_top(&r->pend);
		if (gp >= 0 && !(r->g[gp].free_at < now + r->delay[m]))
			gp = -1;
		if (gi < 0 && gp < 0)
			break;
		/* the lowest id among the eligible (Algorithm 1, line 19) */
		int g = gi < 0 ? gp : gp < 0 ? gi : gi < gp ? gi : gp;
		grant(r, m, g, now);
	}
	if (r->lookahead && r->replan)
		plan(r, now);
}

sym_time sym_ranker_next_wakeup(const struct sym_ranker *r)
{
	if (sym_iheap_empty(&r->ready) || r->nidle || sym_iheap_empty(&r->pend))
		return SYM_TIME_NEVER;
	int m = sym_iheap_top(&r->ready);
	return sym_iheap_top_key(&r->pend) - r->delay[m] + 1;
}
