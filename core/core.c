#include "core/core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/models.h"
#include "core/parts.h"
#include "core/policy_api.h"
#include "core/ranker.h"

/* The core: what scheduler policies read (struct sym_core, in
 * core/policy_api.h), then the books only this file touches. Drivers see
 * neither (core/core.h). */
struct core {
	struct sym_core pub;
	struct sym_iheap timers;     /* candidate policies: models 0..nmodels-1, then one per ranker;
				      * schedulers: their own ids */
	bool send_ahead;
	const struct sym_sched_ops *sched; /* NULL for candidate policies */
	struct sym_sink sink;
	struct sym_request **scratch; /* one batch (maxb entries) */
	/* candidate policies: the exchange */
	struct sym_models models;
	struct sym_ranker *rankers;  /* one per kind */
	struct sym_xmsg *xq;         /* messages in flight: a ring of xq_cap */
	int *xq_dest;                /* per slot: the ranker's kind, or -1 for the model side */
	size_t xq_head, xq_len, xq_cap;
	uint32_t dirty;              /* rankers with news since they last matched (bit per kind) */
	bool delivering;
	struct sym_core_stats stats;
	int nparts, pkinds;          /* sub-clusters (core/parts.h): parts and GPU kinds; 0, 0 without */
};

/* The whole core behind a struct sym_core (its first member). */
static inline struct core *impl(struct sym_core *c)
{
	return (struct core *)c;
}

static inline const struct core *cimpl(const struct sym_core *c)
{
	return (const struct core *)c;
}

static int fail_msg(char *err, size_t errlen, int rc, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
	return rc;
}

/* ---- the exchange, delivered in place (candidate policies) ----
 *
 * Grants go into one FIFO ring; deliver() hands them out in order and,
 * whenever the ring runs dry, lets every ranker that received news match
 * (lowest kind first), which may send grants, and so on until nothing moves.
 * The rankers' timers then sit in the core's timer heap after the models'. */

static int xq_push(struct core *c, int dest, const struct sym_xmsg *m)
{
	if (c->xq_len == c->xq_cap) {
		size_t cap = c->xq_cap ? 2 * c->xq_cap : 64;
		struct sym_xmsg *q = malloc(cap * sizeof(*q));
		int *d = malloc(cap * sizeof(*d));
		if (!q || !d) {
			free(q);
			free(d);
			return -ENOMEM;
		}
		for (size_t i = 0; i < c->xq_len; i++) {
			size_t j = (c->xq_head + i) % c->xq_cap;
			q[i] = c->xq[j];
			d[i] = c->xq_dest[j];
		}
		free(c->xq);
		free(c->xq_dest);
		c->xq = q;
		c->xq_dest = d;
		c->xq_head = 0;
		c->xq_cap = cap;
	}
	size_t j = c->xq_head + c->xq_len;
	if (j >= c->xq_cap)
		j -= c->xq_cap;
	c->xq[j] = *m;
	c->xq_dest[j] = dest;
	c->xq_len++;
	return 0;
}

/* A message that cannot be queued (no memory) is lost; the ring starts with
 * room for a burst and only grows in a pathological cascade, so this is an
 * abort-worthy state rather than a recoverable one. */
static void xq_put(struct core *c, int dest, const struct sym_xmsg *m)
{
	if (xq_push(c, dest, m)) {
		fprintf(stderr, "symphony core: out of memory for the exchange\n");
		abort();
	}
}

/* A message to a ranker is applied at once: rankers only act on what they
 * heard when they match, at the end of the round, so this is the same as
 * queueing it (and cheaper). Grants, which the model side acts on, queue. */
static void to_ranker(void *ctx, int k, const struct sym_xmsg *m)
{
	struct core *c = ctx;
	sym_ranker_recv(&c->rankers[k], m);
	c->dirty |= 1u << k;
}

static void to_models(void *ctx, const struct sym_xmsg *m)
{
	xq_put(ctx, -1, m);
}

static void gpu_took(struct core *c, int g, int m, int size, sym_time start, sym_time finish)
{
	struct sym_gpu_state *gs = &c->pub.gpus[g];
	if (!gs->busy) {
		c->pub.nfree--;
		c->pub.nfree_kind[gs->kind]--;
	}
	gs->busy = true;
	gs->nout++;
	gs->model = m;
	gs->size = size;
	gs->start = start;
	gs->finish = finish;
	gs->free_at = finish;
	c->stats.dispatches++;
}

static void models_dispatch(void *ctx, const struct sym_dispatch *d)
{
	struct core *c = ctx;
	gpu_took(c, d->gpu, d->model, d->size, d->start, d->finish);
	c->sink.dispatch(c->sink.ctx, d);
}

static void models_drop(void *ctx, struct sym_request *r, enum sym_drop_reason why, sym_time now)
{
	struct core *c = ctx;
	sym_core_drop(&c->pub, r, why, now);
}

static void deliver(struct core *c, sym_time now)
{
	if (c->delivering || (!c->xq_len && !c->dirty))
		return;
	c->delivering = true;
	uint32_t touched = 0;
	const int nkinds = c->pub.nkinds;
	for (;;) {
		while (c->xq_len) {
			struct sym_xmsg m = c->xq[c->xq_head];
			int dest = c->xq_dest[c->xq_head];
			c->xq_head = c->xq_head + 1 == c->xq_cap ? 0 : c->xq_head + 1;
			c->xq_len--;
			if (dest < 0) {
				sym_models_recv(&c->models, &m, now);
			} else {
				sym_ranker_recv(&c->rankers[dest], &m);
				c->dirty |= 1u << dest;
			}
		}
		if (c->dirty) {
			uint32_t dirty = c->dirty;
			touched |= dirty;
			c->dirty = 0;
			for (int k = 0; k < nkinds; k++)
				if (dirty & (1u << k))
					sym_ranker_match(&c->rankers[k], now);
			if (c->xq_len)
				continue;
		}
		/* settled: look-ahead plans on what everything led to (what a plan
		 * sends is delivered, matched and settled again) */
		int k = 0;
		while (k < nkinds && !(sym_ranker_unsettled(&c->rankers[k]) && sym_ranker_settle(&c->rankers[k], now)))
			k++;
		if (k == nkinds)
			break;
		touched |= 1u << k;
	}
	/* only a ranker that heard something or matched can have moved its timer */
	for (int k = 0; k < nkinds; k++) {
		if (!(touched & (1u << k)))
			continue;
		sym_time t = sym_ranker_next_wakeup(&c->rankers[k]);
		if (t == SYM_TIME_NEVER)
			sym_iheap_remove(&c->timers, c->pub.nmodels + k);
		else
			sym_iheap_set(&c->timers, c->pub.nmodels + k, t);
	}
	c->delivering = false;
}

static int exchange_init(struct core *c, const struct sym_core_cfg *cfg)
{
	int rc;
	struct sym_core *p = &c->pub;
	for (int k = 0; k < p->nkinds; k++)
		if ((rc = sym_ranker_init(&c->rankers[k], k, p->ngpus, cfg->gpu_kind, p->nmodels, c->send_ahead,
					  to_models, c)))
			return rc;
	struct sym_models_out out = { c, to_ranker, models_dispatch, models_drop };
	if ((rc = sym_models_init(&c->models, p->shards, p->nmodels, 1, 0, p->nkinds, &p->policy, &c->timers, &out)))
		return rc;
	struct sym_lookahead la;
	sym_policy_lookahead(&p->policy, &la);
	for (int k = 0; k < p->nkinds && (la.plan || la.wait); k++)
		if ((rc = sym_ranker_set_lookahead(&c->rankers[k], &la)))
			return rc;
	return sym_models_set_lookahead(&c->models, &la);
}

/* ---- create / destroy ---- */

int sym_core_create(struct sym_core **out, const struct sym_core_cfg *cfg, const struct sym_sink *sink)
{
	return sym_core_create_err(out, cfg, sink, NULL, 0);
}

static int check_cfg(const struct sym_core_cfg *cfg, const struct sym_sink *sink, char *err, size_t errlen)
{
	int nkinds = cfg->nkinds ? cfg->nkinds : 1;
	if (cfg->nmodels < 1 || cfg->ngpus < 1 || !cfg->models || !cfg->policy.ops || !sink ||
	    !sink->dispatch || !sink->drop || nkinds < 1 || nkinds > SYM_MAX_KINDS ||
	    (nkinds > 1 && (!cfg->kinds || !cfg->gpu_kind)))
		return fail_msg(err, errlen, -EINVAL, "invalid core configuration");
	if (cfg->gpu_kind)
		for (int g = 0; g < cfg->ngpus; g++)
			if (cfg->gpu_kind[g] < 0 || cfg->gpu_kind[g] >= nkinds)
				return fail_msg(err, errlen, -EINVAL, "GPU kind out of range");
	if (cfg->max_ahead < 0 || cfg->max_ahead >= SYM_GPU_MAX_OUTSTANDING)
		return fail_msg(err, errlen, -EINVAL, "max_ahead out of range");
	for (int m = 0; m < cfg->nmodels; m++) {
		uint32_t all = sym_kinds_all(nkinds);
		if ((cfg->models[m].kinds_off & all) == all)
			return fail_msg(err, errlen, -EINVAL, "a model runs on no kind (kinds_off)");
		if (cfg->models[m].kinds_off && cfg->policy.ops->sched)
			return fail_msg(err, errlen, -EINVAL, "this policy schedules every model on every kind: models "
					"restricted to some kinds (sub-clusters as kinds) need a candidate policy");
	}
	return 0;
}

/* The parts of the core that are the same for both shapes of policy: kinds,
 * GPUs, shards, the scratch batch and the timer heap. */
static int setup(struct core *k, const struct sym_core_cfg *cfg, char *err, size_t errlen)
{
	struct sym_core *c = &k->pub;
	for (int i = 0; i < c->nkinds; i++) {
		if (cfg->kinds)
			c->kinds[i] = cfg->kinds[i];
		else
			snprintf(c->kinds[i].name, sizeof(c->kinds[i].name), "gpu");
	}
	c->shards = calloc((size_t)cfg->nmodels, sizeof(*c->shards));
	c->gpus = calloc((size_t)cfg->ngpus, sizeof(*c->gpus));
	k->rankers = calloc((size_t)c->nkinds, sizeof(*k->rankers));
	if (!c->shards || !c->gpus || !k->rankers)
		return fail_msg(err, errlen, -ENOMEM, "out of memory");
	for (int g = 0; g < cfg->ngpus; g++) {
		c->gpus[g].kind = cfg->gpu_kind ? cfg->gpu_kind[g] : 0;
		c->nfree_kind[c->gpus[g].kind]++;
	}
	c->nfree = cfg->ngpus;
	c->maxb = 1;
	for (int m = 0; m < cfg->nmodels; m++) {
		int rc = sym_shard_init_kinds(&c->shards[m], m, &cfg->models[m], c->nkinds, &cfg->gather, &cfg->net);
		if (rc) {
			if (err && errlen)
				snprintf(err, errlen, "model %d: %s", m,
					 rc == -EINVAL ? "invalid profile, SLO, rate or gathering rule" : "out of memory");
			return rc;
		}
		if (c->shards[m].max_batch > c->maxb)
			c->maxb = c->shards[m].max_batch;
	}
	k->scratch = malloc((size_t)c->maxb * sizeof(*k->scratch));
	if (!k->scratch || sym_iheap_init(&k->timers, cfg->nmodels + (k->sched ? 0 : c->nkinds)))
		return fail_msg(err, errlen, -ENOMEM, "out of memory");
	return 0;
}

int sym_core_create_err(struct sym_core **out, const struct sym_core_cfg *cfg, const struct sym_sink *sink,
			char *err, size_t errlen)
{
	*out = NULL;
	int rc;
	if (cfg->nparts > 1) { /* the parts become kinds (core/parts.h) */
		struct sym_parts px;
		if ((rc = sym_parts_expand(cfg, &px, err, errlen)))
			return rc;
		rc = sym_core_create_err(out, &px.cfg, sink, err, errlen);
		sym_parts_finish(&px);
		if (!rc) {
			impl(*out)->nparts = cfg->nparts;
			impl(*out)->pkinds = cfg->nkinds > 1 ? cfg->nkinds : 1;
		}
		return rc;
	}
	if (cfg->nparts < 0)
		return fail_msg(err, errlen, -EINVAL, "invalid core configuration (nparts)");
	if ((rc = check_cfg(cfg, sink, err, errlen)))
		return rc;
	struct core *k = calloc(1, sizeof(*k));
	if (!k)
		return fail_msg(err, errlen, -ENOMEM, "out of memory");
	struct sym_core *c = &k->pub;
	c->nmodels = cfg->nmodels;
	c->ngpus = cfg->ngpus;
	c->nkinds = cfg->nkinds ? cfg->nkinds : 1;
	c->policy = cfg->policy;
	k->sched = cfg->policy.ops->sched;
	k->send_ahead = cfg->send_ahead && !k->sched;
	if (k->sched)
		c->max_outstanding = 1 + (cfg->max_ahead ? cfg->max_ahead : SYM_GPU_MAX_OUTSTANDING - 1);
	else
		c->max_outstanding = k->send_ahead ? 2 : 1;
	k->sink = *sink;
	if ((rc = setup(k, cfg, err, errlen)))
		goto fail;
	if (!k->sched && (rc = exchange_init(k, cfg))) {
		fail_msg(err, errlen, rc, rc == -ENOMEM ? "out of memory" : "invalid core configuration");
		goto fail;
	}
	if (k->sched && k->sched->init) {
		char msg[256] = "";
		rc = k->sched->init(c, msg, sizeof(msg));
		if (rc) {
			if (err && errlen)
				snprintf(err, errlen, "policy '%s': %s", sym_policy_name(&c->policy),
					 msg[0] ? msg : sym_strerror(rc));
			goto fail;
		}
	}
	*out = c;
	return 0;
fail:
	sym_core_destroy(c);
	return rc;
}

void sym_core_destroy(struct sym_core *c)
{
	if (!c)
		return;
	struct core *k = impl(c);
	if (k->sched && c->sched_state && k->sched->finish)
		k->sched->finish(c);
	if (c->shards)
		for (int m = 0; m < c->nmodels; m++)
			sym_shard_finish(&c->shards[m]);
	free(c->shards);
	if (c->gpus)
		for (int g = 0; g < c->ngpus; g++)
			free(c->gpus[g].reqs);
	free(c->gpus);
	free(k->scratch);
	if (k->rankers)
		for (int i = 0; i < c->nkinds; i++)
			sym_ranker_finish(&k->rankers[i]);
	free(k->rankers);
	sym_models_finish(&k->models);
	free(k->xq);
	free(k->xq_dest);
	sym_iheap_finish(&k->timers);
	free(k);
}

/* ---- services ---- */

int sym_core_timers_reserve(struct sym_core *c, int n)
{
	struct sym_iheap h;
	int rc = sym_iheap_init(&h, n);
	if (rc)
		return rc;
	sym_iheap_finish(&impl(c)->timers);
	impl(c)->timers = h;
	return 0;
}

void sym_core_timer_set(struct sym_core *c, int id, sym_time t)
{
	sym_iheap_set(&impl(c)->timers, id, t);
}

void sym_core_timer_clear(struct sym_core *c, int id)
{
	sym_iheap_remove(&impl(c)->timers, id);
}

int sym_core_track_running(struct sym_core *c)
{
	for (int g = 0; g < c->ngpus; g++) {
		if (c->gpus[g].reqs)
			continue;
		c->gpus[g].reqs = malloc((size_t)c->maxb * sizeof(*c->gpus[g].reqs));
		if (!c->gpus[g].reqs)
			return -ENOMEM;
	}
	return 0;
}

bool sym_core_can_cancel(const struct sym_core *c)
{
	return cimpl(c)->sink.cancel != NULL;
}

void sym_core_drop(struct sym_core *c, struct sym_request *r, enum sym_drop_reason why, sym_time now)
{
	struct core *k = impl(c);
	k->stats.drops++;
	k->sink.drop(k->sink.ctx, r, why, now);
}

size_t sym_core_expire(struct sym_core *c, int m, sym_time now)
{
	struct sym_shard *s = &c->shards[m];
	struct sym_queue *q = &s->queue;
	while (sym_queue_len(q) && now + s->le[1] > sym_queue_at(q, 0)->deadline) {
		struct sym_request *r = sym_queue_pop(q);
		s->dropped_since_batch++;
		sym_core_drop(c, r, SYM_DROP_EXPIRED, now);
	}
	return sym_queue_len(q);
}

sym_time sym_core_next_expiry(struct sym_core *c, sym_time now)
{
	sym_time t = SYM_TIME_NEVER;
	for (int m = 0; m < c->nmodels; m++) {
		if (!sym_core_expire(c, m, now))
			continue;
		const struct sym_shard *s = &c->shards[m];
		sym_time e = sym_queue_at(&s->queue, 0)->deadline - s->le[1] + 1;
		if (e < t)
			t = e;
	}
	return t;
}

void sym_core_fill(struct sym_core *c, sym_core_pick_fn pick, int timer_id, sym_time now)
{
	bool again = true;
	while (again && c->nfree > 0) {
		again = false;
		bool none[SYM_MAX_KINDS] = { false };
		bool missed = false;
		for (int g = 0; g < c->ngpus && c->nfree > 0; g++) {
			const struct sym_gpu_state *gs = &c->gpus[g];
			if (gs->busy || none[gs->kind])
				continue;
			int b = 0;
			int m = pick(c, gs->kind, now, &b);
			if (m < 0) {
				none[gs->kind] = missed = true;
				continue;
			}
			sym_core_dispatch_queue(c, m, g, b, now);
			if (missed)
				again = true;
		}
	}
	sym_time t = c->nfree > 0 ? sym_core_next_expiry(c, now) : SYM_TIME_NEVER;
	if (t == SYM_TIME_NEVER)
		sym_core_timer_clear(c, timer_id);
	else
		sym_core_timer_set(c, timer_id, t);
}

static void dispatch_reqs(struct core *k, int m, int gpu, struct sym_request **reqs, int size,
			  uint32_t dropped_before, sym_time now, sym_time start, sym_time reject_after)
{
	struct sym_shard *s = &k->pub.shards[m];
	struct sym_gpu_state *g = &k->pub.gpus[gpu];
	int kind = g->kind;
	sym_time earliest = now + s->net.ctrl + s->net.data * size;
	if (start < earliest)
		start = earliest;
	if (g->nout > 0 && start < g->free_at)
		start = g->free_at;
	struct sym_dispatch d = {
		.model = m,
		.gpu = gpu,
		.kind = kind,
		.size = size,
		.now = now,
		.start = start,
		.finish = start + s->prof_k[kind]->lat[size],
		.reject_after = reject_after,
		.dropped_before = dropped_before,
		.epoch = g->epoch,
		.reqs = reqs,
	};
	for (int i = 0; i < size; i++)
		reqs[i]->start = d.start;
	gpu_took(k, gpu, m, size, d.start, d.finish);
	if (g->reqs && g->reqs != reqs)
		memcpy(g->reqs, reqs, (size_t)size * sizeof(*reqs));
	k->sink.dispatch(k->sink.ctx, &d);
}

void sym_core_dispatch(struct sym_core *c, int m, int g, struct sym_request **reqs, int size, sym_time now)
{
	dispatch_reqs(impl(c), m, g, reqs, size, 0, now, now, SYM_TIME_NEVER);
}

sym_time sym_core_dispatch_ahead(struct sym_core *c, int m, int g, struct sym_request **reqs, int size, sym_time now,
				 sym_time start, sym_time reject_after)
{
	dispatch_reqs(impl(c), m, g, reqs, size, 0, now, start, reject_after);
	return c->gpus[g].start;
}

void sym_core_dispatch_queue(struct sym_core *c, int m, int g, int size, sym_time now)
{
	struct core *k = impl(c);
	struct sym_shard *s = &c->shards[m];
	uint32_t dropped = s->dropped_since_batch;
	sym_shard_take(s, size, k->scratch);
	dispatch_reqs(k, m, g, k->scratch, size, dropped, now, now, SYM_TIME_NEVER);
}

/* GPU g has nothing outstanding any more (a batch ended or it came back
 * online): it counts as free again. */
static void gpu_idle(struct sym_core *c, struct sym_gpu_state *gs)
{
	if (gs->busy) {
		c->nfree++;
		c->nfree_kind[gs->kind]++;
	}
	gs->busy = false;
	gs->nout = 0;
	gs->size = 0;
}

int sym_core_cancel(struct sym_core *c, int gi, sym_time now, struct sym_request **out)
{
	struct core *k = impl(c);
	struct sym_gpu_state *g = &c->gpus[gi];
	if (!g->busy || g->off || !g->reqs || !k->sink.cancel)
		return 0;
	int n = g->size;
	memcpy(out, g->reqs, (size_t)n * sizeof(*out));
	gpu_idle(c, g);
	k->stats.cancels++;
	k->sink.cancel(k->sink.ctx, gi, now);
	return n;
}

/* ---- entry points ---- */

sym_time sym_core_next_wakeup(const struct sym_core *c)
{
	const struct sym_iheap *t = &cimpl(c)->timers;
	return sym_iheap_empty(t) ? SYM_TIME_NEVER : sym_iheap_top_key(t);
}

void sym_core_advance(struct sym_core *c, sym_time now)
{
	struct core *k = impl(c);
	while (!sym_iheap_empty(&k->timers) && sym_iheap_top_key(&k->timers) <= now) {
		int id = sym_iheap_pop(&k->timers);
		k->stats.wakeups++;
		if (k->sched) {
			k->sched->react(c, SYM_SCHED_TIMER, id, now);
			continue;
		}
		/* every timer due now, then the exchange once (as the threaded
		 * scheduler's workers do: the rankers hear all of them before they
		 * match, so simultaneous candidates go by urgency) */
		for (;;) {
			if (id < c->nmodels)
				sym_models_timer(&k->models, id, now);
			else
				k->dirty |= 1u << (id - c->nmodels);
			if (sym_iheap_empty(&k->timers) || sym_iheap_top_key(&k->timers) > now)
				break;
			id = sym_iheap_pop(&k->timers);
			k->stats.wakeups++;
		}
		deliver(k, now);
	}
}

int sym_core_arrive(struct sym_core *c, struct sym_request *r, sym_time now)
{
	struct core *k = impl(c);
	if (r->model < 0 || r->model >= c->nmodels)
		return -EINVAL;
	if (sym_core_next_wakeup(c) <= now)
		sym_core_advance(c, now);
	int err;
	if (k->sched && k->sched->arrive) {
		err = k->sched->arrive(c, r, now);
		if (err)
			return err;
		k->stats.arrivals++;
		return 0;
	}
	if (!k->sched) {
		err = sym_models_arrive(&k->models, r, now);
		if (err)
			return err;
		k->stats.arrivals++;
		deliver(k, now);
		return 0;
	}
	err = sym_shard_push(&c->shards[r->model], r, now);
	if (err)
		return err;
	k->stats.arrivals++;
	k->sched->react(c, SYM_SCHED_ARRIVED, r->model, now);
	return 0;
}

void sym_core_gpu_done(struct sym_core *c, int gpu, sym_time now, const struct sym_batch_end *e)
{
	struct core *k = impl(c);
	if (sym_core_next_wakeup(c) <= now)
		sym_core_advance(c, now);
	struct sym_gpu_state *gs = &c->gpus[gpu];
	if (gs->off || gs->nout <= 0)
		return; /* an end the core has no batch for (offline, or a driver's mistake) */
	gs->last_end = *e;
	if (--gs->nout == 0) {
		gpu_idle(c, gs);
	} else if (gs->nout == 1) {
		/* the batch planned after it starts at its planned start, or now
		 * if this one ended late */
		sym_time start = gs->start > e->end ? gs->start : e->end;
		gs->free_at = start + (gs->finish - gs->start);
	}
	if (k->sched) {
		k->sched->react(c, SYM_SCHED_GPU_FREE, gpu, now);
		return;
	}
	sym_ranker_gpu_done(&k->rankers[gs->kind], gpu, e->end);
	k->dirty |= 1u << gs->kind;
	deliver(k, now);
}

void sym_core_gpu_free(struct sym_core *c, int gpu, sym_time now)
{
	const struct sym_gpu_state *gs = &c->gpus[gpu];
	struct sym_batch_end e = { gs->nout == 1 ? gs->start : now, now, false };
	if (e.start > now)
		e.start = now;
	sym_core_gpu_done(c, gpu, now, &e);
}

int sym_core_gpu_offline(struct sym_core *c, int gpu, uint32_t epoch, sym_time now)
{
	struct core *k = impl(c);
	if (gpu < 0 || gpu >= c->ngpus)
		return -EINVAL;
	struct sym_gpu_state *gs = &c->gpus[gpu];
	if (gs->reqs)
		return -ENOTSUP;
	sym_core_advance(c, now);
	gs->epoch = epoch;
	if (gs->off)
		return 0;
	if (!gs->busy) {
		c->nfree--;
		c->nfree_kind[gs->kind]--;
	}
	/* out of service counts as busy: scheduler policies skip busy GPUs */
	gs->off = gs->busy = true;
	gs->nout = 0;
	gs->size = 0;
	if (!k->sched) {
		sym_ranker_gpu_offline(&k->rankers[gs->kind], gpu, epoch);
		deliver(k, now);
	}
	return 0;
}

int sym_core_gpu_online(struct sym_core *c, int gpu, uint32_t epoch, sym_time now)
{
	struct core *k = impl(c);
	if (gpu < 0 || gpu >= c->ngpus)
		return -EINVAL;
	struct sym_gpu_state *gs = &c->gpus[gpu];
	sym_core_advance(c, now);
	gs->epoch = epoch;
	if (!gs->off)
		return 0;
	gs->off = false;
	gpu_idle(c, gs);
	gs->free_at = now;
	gs->last_end = (struct sym_batch_end){ now, now, false };
	if (k->sched) {
		k->sched->react(c, SYM_SCHED_GPU_FREE, gpu, now);
		return 0;
	}
	sym_ranker_gpu_online(&k->rankers[gs->kind], gpu, epoch, now);
	k->dirty |= 1u << gs->kind;
	deliver(k, now);
	return 0;
}

int sym_core_gpu_set_kind(struct sym_core *c, int gpu, int kind)
{
	if (gpu < 0 || gpu >= c->ngpus || kind < 0 || kind >= c->nkinds)
		return -EINVAL;
	struct sym_gpu_state *gs = &c->gpus[gpu];
	if (!gs->off)
		return -EBUSY;
	gs->kind = kind; /* (the old kind's ranker keeps it offline; the new one's takes it at online) */
	return 0;
}

int sym_core_set_kinds_off(struct sym_core *c, int m, uint32_t kinds_off, sym_time now)
{
	struct core *k = impl(c);
	if (m < 0 || m >= c->nmodels)
		return -EINVAL;
	if (k->sched)
		return -ENOTSUP;
	if (sym_core_next_wakeup(c) <= now)
		sym_core_advance(c, now);
	int rc = sym_models_set_kinds_off(&k->models, m, kinds_off, now);
	if (!rc)
		deliver(k, now);
	return rc;
}

int sym_core_set_part(struct sym_core *c, int m, int part, sym_time now)
{
	const struct core *k = impl(c);
	if (!k->nparts || part < -1 || part >= k->nparts)
		return -EINVAL;
	return sym_core_set_kinds_off(c, m, sym_parts_kinds_off(k->nparts, k->pkinds, part), now);
}

int sym_core_gpu_set_part(struct sym_core *c, int g, int part)
{
	const struct core *k = impl(c);
	if (!k->nparts || part < 0 || part >= k->nparts || g < 0 || g >= c->ngpus)
		return -EINVAL;
	return sym_core_gpu_set_kind(c, g, sym_parts_slot(k->pkinds, part, c->gpus[g].kind % k->pkinds));
}

int sym_core_restart_arrivals(struct sym_core *c, int m)
{
	struct core *k = impl(c);
	if (m < 0 || m >= c->nmodels)
		return -EINVAL;
	if (k->sched)
		return -ENOTSUP;
	sym_models_restart_arrivals(&k->models, m);
	return 0;
}

uint64_t sym_core_queued(const struct sym_core *c)
{
	const struct core *k = cimpl(c);
	uint64_t n = 0;
	for (int m = 0; m < c->nmodels; m++)
		n += sym_queue_len(&c->shards[m].queue);
	if (k->sched && k->sched->held)
		n += k->sched->held(c);
	return n;
}

/* ---- what drivers read ---- */

const struct sym_core_stats *sym_core_stats(const struct sym_core *c)
{
	return &cimpl(c)->stats;
}

void sym_core_waits(const struct sym_core *c, int m, int k, sym_time *wait, sym_time *safe)
{
	const struct core *x = cimpl(c);
	struct sym_waits w = { 0, 0 };
	if (!x->sched && m >= 0 && m < c->nmodels && k >= 0 && k < c->nkinds)
		w = sym_models_waits(&x->models, m, k);
	*wait = w.wait;
	*safe = w.safe;
}

int sym_core_set_model(struct sym_core *c, int m, const struct sym_model_cfg *cfg)
{
	struct core *k = impl(c);
	if (m < 0 || m >= c->nmodels || !cfg)
		return -EINVAL;
	if (k->sched)
		return -ENOTSUP;
	struct sym_model_cfg x;
	if (k->nparts && sym_parts_model(cfg, k->nparts, k->pkinds, &x))
		return -EINVAL;
	return sym_models_set_model(&k->models, m, k->nparts ? &x : cfg);
}

int sym_core_set_slo(struct sym_core *c, int m, sym_time slo)
{
	if (!c || m < 0 || m >= c->nmodels || slo <= 0)
		return -EINVAL;
	c->shards[m].slo = slo;
	return 0;
}

int sym_core_max_outstanding(const struct sym_core *c)
{
	return c->max_outstanding;
}

int sym_core_largest_batch(const struct sym_core *c)
{
	return c->maxb;
}

int sym_core_idle_gpus(const struct sym_core *c)
{
	return c->nfree;
}

const sym_time *sym_core_le(const struct sym_core *c, int m, int k)
{
	return c->shards[m].lek[k];
}

const sym_time *sym_core_le_min(const struct sym_core *c, int m)
{
	return c->shards[m].le;
}

int sym_core_max_batch(const struct sym_core *c, int m, int k)
{
	return c->shards[m].maxb_k[k];
}

const struct sym_net *sym_core_net(const struct sym_core *c)
{
	return &c->shards[0].net;
}
