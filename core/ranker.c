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

void sym_ranker_finish(struct sym_ranker *r)
{
	if (!r)
		return;
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

void sym_ranker_recv(struct sym_ranker *r, const struct sym_xmsg *m)
{
	switch (m->type) {
	case SYM_X_READY:
		sym_iheap_set(&r->ready, m->model, m->t1);
		r->delay[m->model] = m->t2;
		r->seq[m->model] = m->seq;
		break;
	case SYM_X_UNREADY:
		sym_iheap_remove(&r->ready, m->model);
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
		break;
	}
	case SYM_X_GIVEBACK: {
		struct sym_ranker_gpu *x = &r->g[m->gpu];
		if (!x->granted)
			break;
		x->granted = x->lost = false;
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
}

static void grant(struct sym_ranker *r, int m, int g, sym_time now)
{
	struct sym_ranker_gpu *x = &r->g[g];
	sym_iheap_remove(&r->ready, m);
	idle_clear(r, g);
	sym_iheap_remove(&r->pend, g);
	x->granted = true;
	struct sym_xmsg msg = { .type = SYM_X_GRANT, .model = m, .gpu = g, .kind = r->kind, .seq = r->seq[m],
				.epoch = x->epoch, .t1 = x->nout > 0 ? x->free_at : now };
	r->send(r->ctx, &msg);
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
}

sym_time sym_ranker_next_wakeup(const struct sym_ranker *r)
{
	if (sym_iheap_empty(&r->ready) || r->nidle || sym_iheap_empty(&r->pend))
		return SYM_TIME_NEVER;
	int m = sym_iheap_top(&r->ready);
	return sym_iheap_top_key(&r->pend) - r->delay[m] + 1;
}
