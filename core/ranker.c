#include "core/ranker.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/policy.h"

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

int sym_ranker_set_lookahead(struct sym_ranker *r, const struct sym_lookahead *la)
{
	if (!(la->margin >= 0 && la->margin <= 1000) || !(la->replan >= 0 && la->replan <= 1000) ||
	    (la->wait && !(la->wait_quantile > 0 && la->wait_quantile < 1)))
		return -EINVAL;
	r->margin = la->margin;
	r->idle_go = la->idle && la->plan;
	r->measure = la->wait;
	r->quantile = la->wait_quantile;
	r->wait = r->wait_safe = SYM_WAIT_START;
	if (r->lookahead || !la->plan)
		return 0;
	size_t M = (size_t)r->nmodels, G = (size_t)r->ngpus;
	r->cand = calloc(M, sizeof(*r->cand));
	r->ord = malloc(M * sizeof(*r->ord));
	r->opos = malloc(M * sizeof(*r->opos));
	r->gkey = malloc(G * sizeof(*r->gkey));
	r->ggpu = malloc(G * sizeof(*r->ggpu));
	r->gpos = malloc(G * sizeof(*r->gpos));
	r->stamp = calloc(G, sizeof(*r->stamp));
	r->mplan = malloc(G * sizeof(*r->mplan));
	r->touched = malloc(G * sizeof(*r->touched));
	r->left = malloc(G * sizeof(*r->left));
	r->skey = malloc(G * sizeof(*r->skey));
	r->sgpu = malloc(G * sizeof(*r->sgpu));
	r->sord = malloc(M * sizeof(*r->sord));
	if (!r->cand || !r->ord || !r->opos || !r->gkey || !r->ggpu || !r->gpos || !r->stamp || !r->mplan ||
	    !r->touched || !r->left || !r->skey || !r->sgpu || !r->sord)
		return -ENOMEM;
	for (int m = 0; m < r->nmodels; m++) {
		r->opos[m] = -1;
		r->cand[m].cap = SYM_TIME_NEVER;
	}
	r->lookahead = true;
	r->qfrac = la->replan;
	for (int g = 0; g < r->ngpus; g++)
		r->gpos[g] = -1;
	return 0;
}

void sym_ranker_finish(struct sym_ranker *r)
{
	if (!r)
		return;
	free(r->cand);
	free(r->ord);
	free(r->opos);
	free(r->gkey);
	free(r->ggpu);
	free(r->gpos);
	free(r->stamp);
	free(r->mplan);
	free(r->touched);
	free(r->left);
	free(r->skey);
	free(r->sgpu);
	free(r->sord);
	r->left = r->sgpu = r->sord = NULL;
	r->skey = NULL;

	r->cand = NULL;
	r->ord = r->opos = r->ggpu = r->gpos = r->touched = NULL;
	r->gkey = r->mplan = NULL;
	r->stamp = NULL;
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

/* ---- look-ahead: the GPUs by free time ---- */

/* The first place in the set whose key is above t (binary search). */
static int gset_upper(const struct sym_ranker *r, sym_time t)
{
	int lo = 0, hi = r->nset;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (r->gkey[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The GPUs in service and not granted, ordered by predicted free time (ties:
 * the lower id), made at plan time from the last plan's order (an insertion
 * sort: between two plans few GPUs move). */
static void gset_build(struct sym_ranker *r)
{
	/* those of the last order whose free time did not change stay in order;
	 * the others, and those that came back, are sorted apart and merged in */
	int n = 0, nm = 0;
	for (int i = 0; i < r->nset; i++) {
		int g = r->ggpu[i];
		const struct sym_ranker_gpu *x = &r->g[g];
		if (x->off || x->granted) {
			r->gpos[g] = -1;
		} else if (x->free_at == r->gkey[i]) {
			r->ggpu[n] = g;
			r->gkey[n++] = x->free_at;
		} else {
			r->sgpu[nm++] = g;
		}
	}
	for (int g = 0; g < r->ngpus; g++) {
		const struct sym_ranker_gpu *x = &r->g[g];
		if (r->gpos[g] < 0 && !x->off && !x->granted) {
			r->sgpu[nm++] = g;
			r->gpos[g] = 0;
		}
	}
	for (int i = 0; i < nm; i++) {
		int g = r->sgpu[i], j = i;
		sym_time k = r->g[g].free_at;
		while (j > 0 && (r->skey[j - 1] > k || (r->skey[j - 1] == k && r->sgpu[j - 1] > g))) {
			r->skey[j] = r->skey[j - 1];
			r->sgpu[j] = r->sgpu[j - 1];
			j--;
		}
		r->skey[j] = k;
		r->sgpu[j] = g;
	}
	/* merge from the back */
	int i = n - 1, j = nm - 1, o = n + nm - 1;
	while (j >= 0) {
		if (i >= 0 && (r->gkey[i] > r->skey[j] || (r->gkey[i] == r->skey[j] && r->ggpu[i] > r->sgpu[j]))) {
			r->gkey[o] = r->gkey[i];
			r->ggpu[o--] = r->ggpu[i--];
		} else {
			r->gkey[o] = r->skey[j];
			r->ggpu[o--] = r->sgpu[j--];
		}
	}
	r->nset = n + nm;
	for (int k = 0; k < r->nset; k++)
		r->gpos[r->ggpu[k]] = k;
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

/* ---- the measured wait ---- */

/* Model m reports a wait w from due to a grant, or (lost) a head lost after
 * waiting w. Counted against the estimates as they stand; the estimates move
 * at the next settle (so the order in which models' reports arrived does
 * not matter). */
static void wait_sample(struct sym_ranker *r, int m, sym_time w, bool lost)
{
	(void)m;
	if ((double)w > r->wait)
		r->w_above++;
	else
		r->w_below++;
	if (lost)
		r->s_lost++;
	else if ((double)w > r->wait_safe)
		r->s_above++;
	else
		r->s_below++;
}

/* The Robbins-Monro steps of estimate *x towards quantile q for `above`
 * samples above it and `below` at or under it: each a step of a twentieth of
 * the estimate (at least SYM_WAIT_MIN_STEP), up by q or down by 1 - q. */
static void quantile_steps(double *x, double q, uint32_t above, uint32_t below)
{
	double step = *x / 20 > SYM_WAIT_MIN_STEP ? *x / 20 : SYM_WAIT_MIN_STEP;
	*x += step * (q * above - (1 - q) * below);
	if (*x < 0)
		*x = 0;
	if (*x > SYM_WAIT_MAX) /* (a lost head counts as longer than any: bounded here) */
		*x = SYM_WAIT_MAX;
}

static void wait_apply(struct sym_ranker *r)
{
	quantile_steps(&r->wait, r->quantile, r->w_above, r->w_below);
	quantile_steps(&r->wait_safe, r->quantile, r->s_above + 4 * r->s_lost + r->s_full, r->s_below + r->s_free);
	r->w_above = r->w_below = r->s_above = r->s_below = r->s_lost = r->s_full = r->s_free = 0;
}

/* What a model reports of its lost heads with READY, DEFER and UNREADY: n,
 * the last after waiting w. */
static void lost_heads(struct sym_ranker *r, int m, uint32_t n, sym_time w)
{
	for (uint32_t i = 0; i < n && r->measure; i++)
		wait_sample(r, m, w, true);
}

/* ---- look-ahead: the candidates the plan sees ---- */

static void activate(struct sym_ranker *r, int m)
{
	if (r->opos[m] >= 0)
		return;
	r->opos[m] = r->nactive;
	r->ord[r->nactive++] = m;
}

/* Model m has no candidate here any more (neither deferred nor ready). */
static void deactivate(struct sym_ranker *r, int m)
{
	int i = r->opos[m];
	if (i < 0)
		return;
	memmove(&r->ord[i], &r->ord[i + 1], (size_t)(r->nactive - i - 1) * sizeof(*r->ord));
	r->nactive--;
	for (int j = i; j < r->nactive; j++)
		r->opos[r->ord[j]] = j;
	r->opos[m] = -1;
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

/* Model m's candidate now has deadline d: a new one, or a new head, may need
 * GPU time that the plan gave to others (a cap may have to come earlier). */
static void cand_deadline(struct sym_ranker *r, int m, sym_time d)
{
	if (r->opos[m] < 0 || r->cand[m].d != d)
		r->replan = r->cand[m].moved = true; /* (its place in the plan's order too) */
	r->cand[m].d = d;
	activate(r, m);
}

void sym_ranker_recv(struct sym_ranker *r, const struct sym_xmsg *m)
{

	switch (m->type) {
	case SYM_X_READY:
		lost_heads(r, m->model, m->epoch, m->t4);
		if (r->measure && m->gpu == 1)
			r->fresh++;
		sym_iheap_set(&r->ready, m->model, m->t1);
		r->delay[m->model] = m->t2;
		r->seq[m->model] = m->seq;
		if (r->lookahead) {
			undefer(r, m->model);
			cand_deadline(r, m->model, m->t1 + m->t3);
			r->cand[m->model].p = m->t3;
		}
		break;
	case SYM_X_UNREADY:
		lost_heads(r, m->model, m->epoch, m->t4);
		sym_iheap_remove(&r->ready, m->model);
		if (r->lookahead) {
			undefer(r, m->model);
			deactivate(r, m->model);
		}
		break;
	case SYM_X_DEFER: {
		lost_heads(r, m->model, m->epoch, m->t4);
		if (!r->lookahead)
			break;
		sym_iheap_remove(&r->ready, m->model);
		undefer(r, m->model);
		cand_deadline(r, m->model, m->t1);
		struct sym_ranker_cand *c = &r->cand[m->model];
		c->state = 1;
		c->seq = m->seq;
		c->f = m->t2;
		c->p = m->t3;
		break;
	}
	case SYM_X_TAKEN: {
		struct sym_ranker_gpu *x = &r->g[m->gpu];
		if (!x->granted)
			break;
		x->granted = false;
		r->ngranted--;
		if (r->measure && m->t3 >= 0)
			wait_sample(r, m->model, m->t3, false);
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
			r->replan = true;
		}
		place(r, m->gpu);
		break;
	}
	case SYM_X_GIVEBACK: {
		struct sym_ranker_gpu *x = &r->g[m->gpu];
		if (!x->granted)
			break;
		x->granted = x->lost = false;
		r->ngranted--;
		place(r, m->gpu);
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
	sym_time was = x->free_at;
	x->nout--;
	if (x->nout == 1) {
		/* the planned batch starts at its planned start, or now if the one
		 * before it ended late */
		sym_time start = x->plan_start > end ? x->plan_start : end;
		x->free_at = start + x->plan_len;
	} else if (x->nout <= 0) {
		x->free_at = end;
	}
	if (x->free_at > was || (r->idle_go && x->nout <= 0))
		r->replan = true; /* it frees later than the plan thought (or, idle_go, it is idle now) */
	place(r, g);
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
	if (r->idle_go)
		r->replan = true; /* an idle GPU more: a deferred candidate may go */
	place(r, g);
}

static void grant(struct sym_ranker *r, int m, int g, sym_time now)
{
	struct sym_ranker_gpu *x = &r->g[g];
	sym_iheap_remove(&r->ready, m);
	idle_clear(r, g);
	sym_iheap_remove(&r->pend, g);
	x->granted = true;
	r->ngranted++;
	if (r->lookahead) {
		if (r->cand[m].state != 1)
			deactivate(r, m);
	}
	struct sym_xmsg msg = { .type = SYM_X_GRANT, .model = m, .gpu = g, .kind = r->kind, .seq = r->seq[m],
				.epoch = x->epoch, .t1 = x->nout > 0 ? x->free_at : now,
				.t2 = r->measure ? (sym_time)r->wait : -1, .t3 = r->measure ? (sym_time)r->wait_safe : -1 };
	r->send(r->ctx, &msg);
}

/* ---- look-ahead: the plan ---- */

static void send_cap(struct sym_ranker *r, int m, sym_time cap, sym_time now)
{
	struct sym_ranker_cand *c = &r->cand[m];
	if (c->cap == cap)
		return;
	/* pulled to a moment already past: it is due (and stays due for this head) */
	if (c->cap <= now && cap >= c->cap)
		return;
	/* a cap that moves by less than an eighth of its batch stays as it was */
	if (c->cap != SYM_TIME_NEVER && cap != SYM_TIME_NEVER && cap > c->cap - c->p / 8 && cap < c->cap + c->p / 8)
		return;
	if (c->cap == SYM_TIME_NEVER)
		r->ncapped++;
	else if (cap == SYM_TIME_NEVER)
		r->ncapped--;
	c->cap = cap;
	r->pstats.moved++;
	if (cap != SYM_TIME_NEVER)
		r->pstats.pulls++;
	struct sym_xmsg msg = { .type = SYM_X_PULL, .model = m, .kind = r->kind, .seq = c->seq, .t1 = cap,
				.t2 = r->measure ? (sym_time)r->wait : -1, .t3 = r->measure ? (sym_time)r->wait_safe : -1 };
	r->send(r->ctx, &msg);
}

/* No cap binds: every deferred candidate's cap goes. */
static void clear_caps(struct sym_ranker *r, sym_time now)
{
	for (int i = 0; i < r->nactive && r->ncapped; i++) {
		int m = r->ord[i];
		if (r->cand[m].state == 1)
			send_cap(r, m, SYM_TIME_NEVER, now);
	}
}

/* Plan order: the latest deadline first (ties: the lower model). */
static inline bool plan_before(const struct sym_ranker *r, int a, int b)
{
	sym_time da = r->cand[a].d, db = r->cand[b].d;
	return da != db ? da > db : a < b;
}

/* When GPU g is free for the plan (now when idle or late). */
static inline sym_time avail_of(const struct sym_ranker *r, int g, sym_time now)
{
	const struct sym_ranker_gpu *x = &r->g[g];
	return x->nout <= 0 || x->free_at < now ? now : x->free_at;
}

/* The place at or left of i (in the set) of a GPU not used by this plan yet,
 * or -1. */
static int unused_at_or_left(struct sym_ranker *r, int i)
{
	int root = i;
	while (root >= 0 && r->stamp[r->ggpu[root]] == r->plan_id)
		root = r->left[root];
	while (i >= 0 && i != root && r->stamp[r->ggpu[i]] == r->plan_id) { /* path compression */
		int next = r->left[i];
		r->left[i] = root;
		i = next;
	}
	return root;
}

/* The GPU not used by this plan yet that is free latest by t (best fit), or
 * -1. */
static int untouched_by(struct sym_ranker *r, sym_time t)
{
	int i = unused_at_or_left(r, gset_upper(r, t) - 1);
	return i < 0 ? -1 : r->ggpu[i];
}

static void touch(struct sym_ranker *r, int g, sym_time start)
{
	if (r->stamp[g] != r->plan_id) {
		r->stamp[g] = r->plan_id;
		r->touched[r->ntouched++] = g;
		if (r->gpos[g] >= 0)
			r->left[r->gpos[g]] = r->gpos[g] - 1;
	}
	r->mplan[g] = start;
}

static void plan(struct sym_ranker *r, sym_time now)
{
	r->replan = false;
	int n = r->nactive;
	if (n <= r->nidle) {
		/* each candidate can have an idle GPU of its own: nothing collides */
		r->pstats.fast++;
		clear_caps(r, now);
		/* idle_go: no other candidate needs this one's GPU either, so a deferred one goes now
		 * where that costs its own later requests nothing: another GPU stays idle for them, or
		 * its batch (as long as the one it expects) ends by the moment it expects to be due,
		 * when the GPU is back (near saturation a GPU frees when the batch is nearly full,
		 * and it waits as before) */
		for (int i = 0; r->idle_go && i < n; i++) {
			const struct sym_ranker_cand *c = &r->cand[r->ord[i]];
			if (c->state == 1 && (n < r->nidle || c->f - now >= c->p))
				send_cap(r, r->ord[i], now, now);
		}
		if (r->idle_go)
			r->min_p = 0; /* nothing planned: no throttle on the next plan (a new head goes at once) */
		return;
	}
	/* the candidates, latest deadline first: those whose deadline did not
	 * change since the last plan are in order; the others are sorted apart
	 * and merged in */
	int last = -1, kept = 0, nm = 0;
	for (int i = 0; i < n; i++) {
		int m = r->ord[i];
		if (r->cand[m].moved) {
			r->cand[m].moved = false;
			int j = nm++;
			for (; j > 0 && plan_before(r, m, r->sord[j - 1]); j--)
				r->sord[j] = r->sord[j - 1];
			r->sord[j] = m;
		} else {
			r->ord[kept++] = m;
		}
	}
	for (int i = kept - 1, j = nm - 1, o = n - 1; j >= 0; o--)
		r->ord[o] = i >= 0 && plan_before(r, r->sord[j], r->ord[i]) ? r->ord[i--] : r->sord[j--];
	for (int i = 0; i < n; i++)
		r->opos[r->ord[i]] = i;
	for (int i = 0; i < n; i++)
		if (r->cand[r->ord[i]].state == 1)
			last = i;
	if (last < 0)
		return; /* nothing deferred: nothing to cap */
	r->pstats.plans++;
	gset_build(r);
	r->plan_id++;
	r->min_p = SYM_TIME_NEVER;
	for (int i = 0; i < n; i++)
		if (r->cand[r->ord[i]].p < r->min_p)
			r->min_p = r->cand[r->ord[i]].p;
	r->ntouched = 0;
	for (int i = 0; i <= last; i++) {
		int m = r->ord[i];
		const struct sym_ranker_cand *c = &r->cand[m];
		bool deferred = c->state == 1;
		sym_time f = deferred && c->f > now ? c->f : now;
		sym_time p = c->p, keep = (sym_time)(r->margin * (double)p), lat = c->d - p;
		sym_time eu = f < lat ? f : lat; /* the start on a GPU nothing else is planned on */
		int best = -1;
		sym_time be = 0, bav = 0;
		bool bon = false;
		/* a GPU the plan has not used, free by eu (on time): as late a one as can be */
		int g = eu >= now ? untouched_by(r, eu) : -1;
		if (g >= 0) {
			best = g, be = eu, bon = true, bav = avail_of(r, g, now);
		} else {
			/* one free by the latest start (late), or a GPU the plan used, before its batch */
			g = lat >= now ? untouched_by(r, lat) : -1;
			if (g >= 0)
				best = g, be = eu, bon = false, bav = avail_of(r, g, now);
			for (int t = 0; t < r->ntouched; t++) {
				int h = r->touched[t];
				sym_time fin = r->mplan[h] - keep < c->d ? r->mplan[h] - keep : c->d;
				sym_time st = fin - p, av = avail_of(r, h, now);
				if (st < av)
					continue;
				sym_time e = f < st ? f : st;
				bool on = av <= e;
				if (best < 0 || e > be || (e == be && on && !bon) || (e == be && on == bon && av > bav))
					best = h, be = e, bon = on, bav = av;
			}
		}
		sym_time cap = SYM_TIME_NEVER;
		if (best >= 0) {
			touch(r, best, be > bav ? be : bav);
			if (be < f)
				cap = be;
		} else {
			/* it fits nowhere: as soon as it can, on the GPU that frees first (not used by the
			 * plan), else on the used one it overruns least */
			for (int k = 0; k < r->nset && best < 0; k++)
				if (r->stamp[r->ggpu[k]] != r->plan_id)
					best = r->ggpu[k];
			sym_time bs = 0;
			for (int t = 0; best < 0 && t < r->ntouched; t++) {
				int h = r->touched[t];
				sym_time fin = r->mplan[h] < c->d ? r->mplan[h] : c->d;
				sym_time sl = fin - p - avail_of(r, h, now);
				if (t == 0 || sl > bs)
					g = h, bs = sl;
				if (t == r->ntouched - 1)
					best = g;
			}
			if (best >= 0)
				touch(r, best, avail_of(r, best, now));
			cap = now;
			r->pstats.asap++;
		}
		if (deferred)
			send_cap(r, m, cap, now);
	}
}

void sym_ranker_match(struct sym_ranker *r, sym_time now)
{
	if (r->fresh) {
		if (r->nidle)
			r->s_free += r->fresh;
		else
			r->s_full += r->fresh;
		r->fresh = 0;
	}
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
}

bool sym_ranker_settle(struct sym_ranker *r, sym_time now)
{
	if (r->w_above | r->w_below | r->s_above | r->s_below | r->s_full | r->s_free | r->s_lost)
		wait_apply(r);
	/* (idle_go: the fast path, cheap, is not throttled, so that a head goes while GPUs idle) */
	bool wait = now < r->next_plan && !(r->idle_go && r->nactive <= r->nidle);
	r->plan_waits = r->lookahead && r->replan && wait;
	if (!r->lookahead || !r->replan || r->ngranted || wait)
		return false;
	uint64_t moved = r->pstats.moved;
	plan(r, now);
	/* the next plan no sooner than a fraction of the shortest batch planned */
	r->next_plan = now + (sym_time)(r->qfrac * (double)r->min_p);
	return r->pstats.moved != moved;
}

sym_time sym_ranker_match_due(const struct sym_ranker *r)
{
	if (sym_iheap_empty(&r->ready) || r->nidle || sym_iheap_empty(&r->pend))
		return SYM_TIME_NEVER;
	int m = sym_iheap_top(&r->ready);
	return sym_iheap_top_key(&r->pend) - r->delay[m] + 1;
}

sym_time sym_ranker_next_wakeup(const struct sym_ranker *r)
{
	sym_time t = sym_ranker_match_due(r);
	return r->plan_waits && r->next_plan < t ? r->next_plan : t;
}
