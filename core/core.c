#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static int fail_msg(char *err, size_t errlen, int rc, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
	return rc;
}

int sym_core_create(struct sym_core **out, const struct sym_core_cfg *cfg, const struct sym_sink *sink)
{
	return sym_core_create_err(out, cfg, sink, NULL, 0);
}

int sym_core_create_err(struct sym_core **out, const struct sym_core_cfg *cfg, const struct sym_sink *sink,
			char *err, size_t errlen)
{
	*out = NULL;
	int nkinds = cfg->nkinds ? cfg->nkinds : 1;
	if (cfg->nmodels < 1 || cfg->ngpus < 1 || !cfg->models || !cfg->policy.ops || !sink ||
	    !sink->dispatch || !sink->drop || nkinds < 1 || nkinds > SYM_MAX_KINDS ||
	    (nkinds > 1 && (!cfg->kinds || !cfg->gpu_kind)))
		return fail_msg(err, errlen, -EINVAL, "invalid core configuration");
	if (cfg->gpu_kind)
		for (int g = 0; g < cfg->ngpus; g++)
			if (cfg->gpu_kind[g] < 0 || cfg->gpu_kind[g] >= nkinds)
				return fail_msg(err, errlen, -EINVAL, "GPU kind out of range");
	struct sym_core *c = calloc(1, sizeof(*c));
	if (!c)
		return fail_msg(err, errlen, -ENOMEM, "out of memory");
	c->nmodels = cfg->nmodels;
	c->ngpus = cfg->ngpus;
	c->nkinds = nkinds;
	for (int k = 0; k < nkinds; k++) {
		if (cfg->kinds)
			c->kinds[k] = cfg->kinds[k];
		else
			snprintf(c->kinds[k].name, sizeof(c->kinds[k].name), "gpu");
	}
	c->policy = cfg->policy;
	c->sched = cfg->policy.ops->sched;
	c->sink = *sink;
	int rc = -ENOMEM;
	c->shards = calloc((size_t)cfg->nmodels, sizeof(*c->shards));
	c->gpus = calloc((size_t)cfg->ngpus, sizeof(*c->gpus));
	c->rankers = calloc((size_t)nkinds, sizeof(*c->rankers));
	if (!c->shards || !c->gpus || !c->rankers)
		goto fail;
	for (int g = 0; g < cfg->ngpus; g++) {
		c->gpus[g].kind = cfg->gpu_kind ? cfg->gpu_kind[g] : 0;
		c->nfree_kind[c->gpus[g].kind]++;
	}
	c->nfree = cfg->ngpus;
	c->maxb = 1;
	for (int m = 0; m < cfg->nmodels; m++) {
		rc = sym_shard_init_kinds(&c->shards[m], m, &cfg->models[m], nkinds, &cfg->gather, &cfg->net);
		if (rc) {
			if (err && errlen)
				snprintf(err, errlen, "model %d: %s", m,
					 rc == -EINVAL ? "invalid profile, SLO, rate or gathering rule" : "out of memory");
			goto fail_quiet;
		}
		if (c->shards[m].max_batch > c->maxb)
			c->maxb = c->shards[m].max_batch;
	}
	rc = -ENOMEM;
	c->scratch = malloc((size_t)c->maxb * sizeof(*c->scratch));
	if (!c->scratch)
		goto fail;
	for (int k = 0; k < nkinds; k++) {
		if ((rc = sym_ranker_init(&c->rankers[k], cfg->ngpus, cfg->nmodels)))
			goto fail;
		for (int g = 0; g < cfg->ngpus; g++)
			if (c->gpus[g].kind != k)
				sym_iheap_remove(&c->rankers[k].free_gpus, g);
	}
	if ((rc = sym_iheap_init(&c->timers, cfg->nmodels)))
		goto fail;
	if (c->sched && c->sched->init) {
		char msg[256] = "";
		rc = c->sched->init(c, msg, sizeof(msg));
		if (rc) {
			if (err && errlen)
				snprintf(err, errlen, "policy '%s': %s", c->policy.ops->name,
					 msg[0] ? msg : sym_strerror(rc));
			goto fail_quiet;
		}
	}
	*out = c;
	return 0;
fail:
	fail_msg(err, errlen, rc, rc == -ENOMEM ? "out of memory" : "invalid core configuration");
fail_quiet:
	sym_core_destroy(c);
	return rc;
}

void sym_core_destroy(struct sym_core *c)
{
	if (!c)
		return;
	if (c->sched && c->sched_state && c->sched->finish)
		c->sched->finish(c);
	if (c->shards)
		for (int m = 0; m < c->nmodels; m++)
			sym_shard_finish(&c->shards[m]);
	free(c->shards);
	if (c->gpus)
		for (int g = 0; g < c->ngpus; g++)
			free(c->gpus[g].reqs);
	free(c->gpus);
	free(c->scratch);
	if (c->rankers)
		for (int k = 0; k < c->nkinds; k++)
			sym_ranker_finish(&c->rankers[k]);
	free(c->rankers);
	sym_iheap_finish(&c->timers);
	free(c);
}

/* ---- services ---- */

int sym_core_timers_reserve(struct sym_core *c, int n)
{
	struct sym_iheap h;
	int rc = sym_iheap_init(&h, n);
	if (rc)
		return rc;
	sym_iheap_finish(&c->timers);
	c->timers = h;
	return 0;
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

void sym_core_drop(struct sym_core *c, struct sym_request *r, enum sym_drop_reason why, sym_time now)
{
	c->stats.drops++;
	c->sink.drop(c->sink.ctx, r, why, now);
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

static void on_drop(void *ctx, struct sym_request *r, enum sym_drop_reason why, sym_time now)
{
	sym_core_drop(ctx, r, why, now);
}

static void dispatch_reqs(struct sym_core *c, int m, int gpu, struct sym_request **reqs, int size,
			  uint32_t dropped_before, sym_time now)
{
	struct sym_shard *s = &c->shards[m];
	struct sym_gpu_state *g = &c->gpus[gpu];
	int k = g->kind;
	struct sym_dispatch d = {
		.model = m,
		.gpu = gpu,
		.kind = k,
		.size = size,
		.now = now,
		.start = now + s->net.ctrl + s->net.data * size,
		.dropped_before = dropped_before,
		.reqs = reqs,
	};
	d.finish = d.start + s->prof_k[k]->lat[size];
	for (int i = 0; i < size; i++)
		reqs[i]->start = d.start;
	if (!g->busy) {
		c->nfree--;
		c->nfree_kind[k]--;
	}
	g->busy = true;
	g->model = m;
	g->size = size;
	g->start = d.start;
	g->finish = d.finish;
	if (g->reqs && g->reqs != reqs)
		memcpy(g->reqs, reqs, (size_t)size * sizeof(*reqs));
	c->stats.dispatches++;
	c->sink.dispatch(c->sink.ctx, &d);
}

void sym_core_dispatch(struct sym_core *c, int m, int g, struct sym_request **reqs, int size, sym_time now)
{
	dispatch_reqs(c, m, g, reqs, size, 0, now);
}

void sym_core_dispatch_queue(struct sym_core *c, int m, int g, int size, sym_time now)
{
	struct sym_shard *s = &c->shards[m];
	uint32_t dropped = s->dropped_since_batch;
	sym_shard_take(s, size, c->scratch);
	dispatch_reqs(c, m, g, c->scratch, size, dropped, now);
}

int sym_core_cancel(struct sym_core *c, int gi, sym_time now, struct sym_request **out)
{
	struct sym_gpu_state *g = &c->gpus[gi];
	if (!g->busy || !g->reqs || !c->sink.cancel)
		return 0;
	int n = g->size;
	memcpy(out, g->reqs, (size_t)n * sizeof(*out));
	g->busy = false;
	c->nfree++;
	c->nfree_kind[g->kind]++;
	g->size = 0;
	c->stats.cancels++;
	c->sink.cancel(c->sink.ctx, gi, now);
	return n;
}

/* ---- candidate policies: shards plus one ranker per kind ---- */

static void unready_all(struct sym_core *c, int m)
{
	for (int k = 0; k < c->nkinds; k++)
		sym_ranker_unready(&c->rankers[k], m);
}

/* One kind (the common case): recomputes model m's candidate at `now` and
 * acts on it (the shard-to-ranker message): dispatch it on the lowest free
 * GPU if it is due and one is free, else wait in the ranker's ready set until
 * `latest`, else sleep until exec. */
static void update1(struct sym_core *c, int m, sym_time now)
{
	struct sym_shard *s = &c->shards[m];
	struct sym_ranker *rk = &c->rankers[0];
	for (;;) {
		struct sym_cand cd;
		sym_shard_candidate(s, now, &c->policy, on_drop, c, &cd);
		if (!cd.size) {
			sym_ranker_unready(rk, m);
			sym_iheap_remove(&c->timers, m);
			return;
		}
		if (cd.exec > now) {
			sym_ranker_unready(rk, m);
			sym_iheap_set(&c->timers, m, cd.exec);
			return;
		}
		int g = sym_ranker_take_gpu(rk);
		if (g < 0) {
			/* Wait for a GPU; when latest passes, shrink (timer at latest + 1). */
			sym_ranker_ready(rk, m, cd.latest);
			sym_iheap_set(&c->timers, m, cd.latest + 1);
			return;
		}
		sym_ranker_unready(rk, m);
		sym_core_dispatch_queue(c, m, g, cd.size, now);
	}
}

/* Several kinds: one candidate per kind. A kind whose candidate is due and
 * has a free GPU takes the batch (the largest batch, then the earliest
 * finish, then the lower kind); a due candidate without a free GPU of its
 * kind waits in that kind's ranker until its latest; the model sleeps until
 * the earliest exec or latest of its kinds. */
static void update_kinds(struct sym_core *c, int m, sym_time now)
{
	struct sym_shard *s = &c->shards[m];
	for (;;) {
		if (!sym_shard_gather(s, now, on_drop, c)) {
			unready_all(c, m);
			sym_iheap_remove(&c->timers, m);
			return;
		}
		sym_time wake = SYM_TIME_NEVER;
		int best = -1, best_size = 0;
		sym_time best_le = 0;
		for (int k = 0; k < c->nkinds; k++) {
			struct sym_cand cd;
			sym_shard_cand_kind(s, now, &c->policy, k, &cd);
			struct sym_ranker *rk = &c->rankers[k];
			if (!cd.size) {
				sym_ranker_unready(rk, m);
				continue;
			}
			if (cd.exec > now) {
				sym_ranker_unready(rk, m);
				if (cd.exec < wake)
					wake = cd.exec;
				continue;
			}
			if (sym_ranker_free_count(rk) > 0) {
				sym_time le = s->lek[k][cd.size];
				if (cd.size > best_size || (cd.size == best_size && le < best_le)) {
					best = k;
					best_size = cd.size;
					best_le = le;
				}
				continue;
			}
			sym_ranker_ready(rk, m, cd.latest);
			if (cd.latest + 1 < wake)
				wake = cd.latest + 1;
		}
		if (best < 0) {
			if (wake == SYM_TIME_NEVER)
				sym_iheap_remove(&c->timers, m);
			else
				sym_iheap_set(&c->timers, m, wake);
			return;
		}
		unready_all(c, m);
		int g = sym_ranker_take_gpu(&c->rankers[best]);
		sym_core_dispatch_queue(c, m, g, best_size, now);
	}
}

static void update(struct sym_core *c, int m, sym_time now)
{
	if (c->nkinds == 1)
		update1(c, m, now);
	else
		update_kinds(c, m, now);
}

/* ---- entry points ---- */

void sym_core_advance(struct sym_core *c, sym_time now)
{
	while (!sym_iheap_empty(&c->timers) && sym_iheap_top_key(&c->timers) <= now) {
		int id = sym_iheap_pop(&c->timers);
		c->stats.wakeups++;
		if (c->sched)
			c->sched->timer(c, id, now);
		else
			update(c, id, now);
	}
}

int sym_core_arrive(struct sym_core *c, struct sym_request *r, sym_time now)
{
	if (r->model < 0 || r->model >= c->nmodels)
		return -EINVAL;
	sym_core_advance(c, now);
	int err;
	if (c->sched && c->sched->arrive) {
		err = c->sched->arrive(c, r, now);
		if (err)
			return err;
		c->stats.arrivals++;
		return 0;
	}
	err = sym_shard_push(&c->shards[r->model], r, now);
	if (err)
		return err;
	c->stats.arrivals++;
	if (c->sched)
		c->sched->poke(c, r->model, now);
	else
		update(c, r->model, now);
	return 0;
}

void sym_core_gpu_free(struct sym_core *c, int gpu, sym_time now)
{
	sym_core_advance(c, now);
	struct sym_gpu_state *gs = &c->gpus[gpu];
	if (gs->busy) {
		c->nfree++;
		c->nfree_kind[gs->kind]++;
	}
	gs->busy = false;
	gs->size = 0;
	if (c->sched) {
		c->sched->gpu_free(c, gpu, now);
		return;
	}
	struct sym_ranker *rk = &c->rankers[gs->kind];
	sym_ranker_put_gpu(rk, gpu);
	/* Grant the ready candidate with the smallest latest; update() takes the
	 * lowest free GPU of the kind, which is this one (no GPU of a kind is
	 * free while a candidate is ready on it). */
	while (sym_ranker_free_count(rk) > 0) {
		int m = sym_ranker_grant(rk);
		if (m < 0)
			break;
		update(c, m, now);
	}
}

int sym_core_gpu_hold(struct sym_core *c, int gpu, sym_time now)
{
	if (gpu < 0 || gpu >= c->ngpus)
		return -EINVAL;
	struct sym_gpu_state *gs = &c->gpus[gpu];
	if (gs->reqs)
		return -ENOTSUP;
	sym_core_advance(c, now);
	if (gs->busy)
		return -EBUSY;
	/* Busy with nothing: scheduler policies skip busy GPUs, and the GPU
	 * leaves its kind's free set so that no candidate is granted it. */
	gs->busy = true;
	gs->model = 0;
	gs->size = 0;
	gs->start = gs->finish = now;
	c->nfree--;
	c->nfree_kind[gs->kind]--;
	if (!c->sched)
		sym_iheap_remove(&c->rankers[gs->kind].free_gpus, gpu);
	return 0;
}

uint64_t sym_core_queued(const struct sym_core *c)
{
	uint64_t n = 0;
	for (int m = 0; m < c->nmodels; m++)
		n += sym_queue_len(&c->shards[m].queue);
	if (c->sched && c->sched->held)
		n += c->sched->held(c);
	return n;
}
