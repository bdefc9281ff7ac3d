#include "core/core.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

int sym_core_create(struct sym_core **out, const struct sym_core_cfg *cfg, const struct sym_sink *sink)
{
	*out = NULL;
	if (cfg->nmodels < 1 || cfg->ngpus < 1 || !cfg->models || !cfg->policy.ops || !sink ||
	    !sink->dispatch || !sink->drop)
		return -EINVAL;
	struct sym_core *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->nmodels = cfg->nmodels;
	c->ngpus = cfg->ngpus;
	c->policy = cfg->policy;
	c->sink = *sink;
	int err = -ENOMEM;
	c->shards = calloc((size_t)cfg->nmodels, sizeof(*c->shards));
	if (!c->shards)
		goto fail;
	int maxb = 1;
	for (int m = 0; m < cfg->nmodels; m++) {
		err = sym_shard_init(&c->shards[m], m, &cfg->models[m], &cfg->gather, &cfg->net);
		if (err)
			goto fail;
		if (c->shards[m].max_batch > maxb)
			maxb = c->shards[m].max_batch;
	}
	err = -ENOMEM;
	c->scratch = malloc((size_t)maxb * sizeof(*c->scratch));
	if (!c->scratch)
		goto fail;
	err = sym_ranker_init(&c->ranker, cfg->ngpus, cfg->nmodels);
	if (err)
		goto fail;
	err = sym_iheap_init(&c->timers, cfg->nmodels);
	if (err)
		goto fail;
	*out = c;
	return 0;
fail:
	sym_core_destroy(c);
	return err;
}

void sym_core_destroy(struct sym_core *c)
{
	if (!c)
		return;
	if (c->shards)
		for (int m = 0; m < c->nmodels; m++)
			sym_shard_finish(&c->shards[m]);
	free(c->shards);
	free(c->scratch);
	sym_ranker_finish(&c->ranker);
	sym_iheap_finish(&c->timers);
	free(c);
}

static void on_drop(void *ctx, struct sym_request *r, enum sym_drop_reason why, sym_time now)
{
	struct sym_core *c = ctx;
	c->stats.drops++;
	c->sink.drop(c->sink.ctx, r, why, now);
}

static void dispatch(struct sym_core *c, struct sym_shard *s, int gpu, int size, sym_time now)
{
	struct sym_dispatch d = {
		.model = s->id,
		.gpu = gpu,
		.size = size,
		.now = now,
		.start = now + s->net.ctrl + s->net.data * size,
		.dropped_before = s->dropped_since_batch,
		.reqs = c->scratch,
	};
	d.finish = d.start + s->profile->lat[size];
	sym_shard_take(s, size, c->scratch);
	for (int i = 0; i < size; i++)
		c->scratch[i]->start = d.start;
	c->stats.dispatches++;
	c->sink.dispatch(c->sink.ctx, &d);
}

/* Recomputes model m's candidate at `now` and acts on it (the shard-to-ranker
 * message): dispatch it on the lowest free GPU if it is due and one is free,
 * else wait in the ranker's ready set until `latest`, else sleep until exec. */
static void update(struct sym_core *c, int m, sym_time now)
{
	struct sym_shard *s = &c->shards[m];
	for (;;) {
		struct sym_cand cd;
		sym_shard_candidate(s, now, &c->policy, on_drop, c, &cd);
		if (!cd.size) {
			sym_ranker_unready(&c->ranker, m);
			sym_iheap_remove(&c->timers, m);
			return;
		}
		if (cd.exec > now) {
			sym_ranker_unready(&c->ranker, m);
			sym_iheap_set(&c->timers, m, cd.exec);
			return;
		}
		int g = sym_ranker_take_gpu(&c->ranker);
		if (g < 0) {
			/* Wait for a GPU; when latest passes, shrink (timer at latest + 1). */
			sym_ranker_ready(&c->ranker, m, cd.latest);
			sym_iheap_set(&c->timers, m, cd.latest + 1);
			return;
		}
		sym_ranker_unready(&c->ranker, m);
		dispatch(c, s, g, cd.size, now);
	}
}

void sym_core_advance(struct sym_core *c, sym_time now)
{
	while (!sym_iheap_empty(&c->timers) && sym_iheap_top_key(&c->timers) <= now) {
		int m = sym_iheap_pop(&c->timers);
		c->stats.wakeups++;
		update(c, m, now);
	}
}

int sym_core_arrive(struct sym_core *c, struct sym_request *r, sym_time now)
{
	if (r->model < 0 || r->model >= c->nmodels)
		return -EINVAL;
	sym_core_advance(c, now);
	int err = sym_shard_push(&c->shards[r->model], r, now);
	if (err)
		return err;
	c->stats.arrivals++;
	update(c, r->model, now);
	return 0;
}

void sym_core_gpu_free(struct sym_core *c, int gpu, sym_time now)
{
	sym_core_advance(c, now);
	sym_ranker_put_gpu(&c->ranker, gpu);
	/* Grant the ready candidate with the smallest latest; update() takes the
	 * lowest free GPU, which is this one (no GPU is free while one is ready). */
	while (sym_ranker_free_count(&c->ranker) > 0) {
		int m = sym_ranker_grant(&c->ranker);
		if (m < 0)
			break;
		update(c, m, now);
	}
}

uint64_t sym_core_queued(const struct sym_core *c)
{
	uint64_t n = 0;
	for (int m = 0; m < c->nmodels; m++)
		n += sym_queue_len(&c->shards[m].queue);
	return n;
}
