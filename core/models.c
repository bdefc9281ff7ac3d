#include "core/models.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

int sym_models_init(struct sym_models *ms, struct sym_shard *shards, int n, int stride, int offset, int nkinds,
		    const struct sym_policy *policy, struct sym_iheap *timers, const struct sym_models_out *out)
{
	memset(ms, 0, sizeof(*ms));
	if (n < 0 || stride < 1 || offset < 0 || nkinds < 1 || nkinds > SYM_MAX_KINDS || !timers ||
	    timers->capacity < n || !out || !out->send || !out->dispatch || !out->drop)
		return -EINVAL;
	ms->n = n;
	ms->stride = stride;
	ms->offset = offset;
	ms->nkinds = nkinds;
	ms->shards = shards;
	ms->timers = timers;
	ms->policy = *policy;
	ms->out = *out;
	int maxb = 1;
	for (int li = 0; li < n; li++)
		if (shards[li].max_batch > maxb)
			maxb = shards[li].max_batch;
	ms->stand = calloc((size_t)(n ? n : 1) * (size_t)nkinds, sizeof(*ms->stand));
	ms->maxb = maxb;
	ms->scratch = malloc((size_t)maxb * sizeof(*ms->scratch));
	if (!ms->stand || !ms->scratch) {
		sym_models_finish(ms);
		return -ENOMEM;
	}
	for (int i = 0; i < (n ? n : 1) * nkinds; i++) {
		ms->stand[i].cand_now = -1; /* nothing remembered */
		ms->stand[i].cap = SYM_TIME_NEVER;
		ms->stand[i].due_plan = ms->stand[i].due_plan_d = SYM_TIME_NEVER;
	}
	return 0;
}

int sym_models_set_lookahead(struct sym_models *ms, const struct sym_lookahead *la)
{
	if (la->wait && !(la->wait_quantile > 0 && la->wait_quantile < 1))
		return -EINVAL;
	ms->plan = la->plan;
	ms->measure = la->wait;
	for (int i = 0; i < (ms->n ? ms->n : 1) * ms->nkinds; i++)
		ms->stand[i].wait = ms->stand[i].wait_safe = la->wait ? SYM_WAIT_START : 0;
	return 0;
}

void sym_models_finish(struct sym_models *ms)
{
	if (!ms)
		return;
	free(ms->stand);
	free(ms->scratch);
	ms->stand = NULL;
	ms->scratch = NULL;
}

static inline int global_id(const struct sym_models *ms, int li) { return li * ms->stride + ms->offset; }

static inline int local_id(const struct sym_models *ms, int m)
{
	return ms->stride == 1 ? m - ms->offset : (m - ms->offset) / ms->stride;
}

static inline sym_time delay_of(const struct sym_shard *s, int size) { return s->net.ctrl + s->net.data * size; }

static inline struct sym_waits waits(const struct sym_models *ms, int li, int k)
{
	const struct sym_mstand *x = &ms->stand[li * ms->nkinds + k];
	return (struct sym_waits){ (sym_time)x->wait, (sym_time)x->wait_safe };
}

struct sym_waits sym_models_waits(const struct sym_models *ms, int m, int k)
{
	return waits(ms, local_id(ms, m), k);
}

/* The ranker of kind k is told the model has no candidate there. */
static void unready(struct sym_models *ms, int li, int k)
{
	struct sym_mstand *x = &ms->stand[li * ms->nkinds + k];
	if (!x->ready && !x->deferred)
		return;
	x->ready = x->deferred = false;
	struct sym_xmsg m = { .type = SYM_X_UNREADY, .model = global_id(ms, li), .kind = k, .epoch = x->lost,
			      .t4 = x->lost_wait };
	x->lost = 0;
	ms->out.send(ms->out.ctx, k, &m);
}

static void ready(struct sym_models *ms, int li, int k, const struct sym_cand *cd, sym_time now)
{
	struct sym_mstand *x = &ms->stand[li * ms->nkinds + k];
	const struct sym_shard *s = &ms->shards[li];
	sym_time delay = delay_of(s, cd->size);
	if (x->ready && x->latest == cd->latest && x->delay == delay)
		return;
	bool fresh = !x->ready || x->rd != cd->deadline;
	if (ms->measure && fresh) {
		/* due from now, or from its frontrun moment when pulled before it; from the moment its timer
		 * was set for when it fired late (a driver whose clock is real: the wake-up's lateness is part
		 * of the wait, which the guard then covers; a simulator's timers fire on time) */
		sym_time f0 = cd->size < s->maxb_k[k] ? cd->deadline - s->lek[k][cd->size + 1] : now;
		sym_time since = x->due_plan_d == cd->deadline && x->due_plan < now ? x->due_plan : now;
		x->due_since = f0 > since ? f0 : since;
	}
	x->seq++;
	x->ready = true;
	x->deferred = false;
	x->latest = cd->latest;
	x->delay = delay;
	x->rd = cd->deadline;
	struct sym_xmsg m = { .type = SYM_X_READY, .model = global_id(ms, li), .kind = k, .seq = x->seq,
			      .gpu = fresh, .epoch = x->lost, .t1 = cd->latest, .t2 = delay, .t3 = s->lek[k][cd->size],
			      .t4 = x->lost_wait };
	x->lost = 0;
	ms->out.send(ms->out.ctx, k, &m);
}

/* Look-ahead: tells the ranker of kind k that cd is held back, and where it
 * is heading (a new DEFER only when that changed; it drops the old cap). */
static void defer(struct sym_models *ms, int li, int k, const struct sym_cand *cd, sym_time now)
{
	struct sym_mstand *x = &ms->stand[li * ms->nkinds + k];
	/* the projection assumes the arrivals to come: made once per head, it
	 * stands while they come as expected (more make the candidate due
	 * sooner, which its READY tells; fewer leave the plan a little early) */
	if (x->deferred && x->dd == cd->deadline)
		return;
	sym_time f, p;
	struct sym_waits w = waits(ms, li, k);
	sym_shard_project(&ms->shards[li], now, &ms->policy, k, &w, cd, &f, &p);
	x->seq++;
	x->deferred = true;
	x->ready = false;
	x->dd = cd->deadline;
	x->df = f;
	x->dp = p;
	x->cap = SYM_TIME_NEVER;
	struct sym_xmsg m = { .type = SYM_X_DEFER, .model = global_id(ms, li), .kind = k, .seq = x->seq,
			      .epoch = x->lost, .t1 = cd->deadline, .t2 = f, .t3 = p, .t4 = x->lost_wait };
	x->lost = 0;
	ms->out.send(ms->out.ctx, k, &m);
}

/* Measured wait: a head that was due and is gone without a grant (dropped)
 * waited this long at least. */
static void lost_head(struct sym_models *ms, int li, int k, const struct sym_cand *cd, sym_time now)
{
	struct sym_mstand *x = &ms->stand[li * ms->nkinds + k];
	if (ms->measure && x->ready && (!cd->size || x->rd != cd->deadline)) {
		x->lost++; /* told with the next message to the ranker */
		x->lost_wait = now - x->due_since;
		x->due_since = now;
	}
}

/* When candidate cd on kind k is due (<= now: now), look-ahead included: a
 * cap pulls it earlier, and one that was due stays due for as long as its
 * head is the same (a later arrival or a shorter measured wait does not take
 * it back). Sends DEFER for one that is not due yet. */
static sym_time due_at(struct sym_models *ms, int li, int k, const struct sym_cand *cd, sym_time now)
{
	if (cd->exec <= now)
		return now;
	struct sym_mstand *x = &ms->stand[li * ms->nkinds + k];
	if (x->ready && x->rd == cd->deadline && (ms->plan || ms->measure))
		return now;
	if (!ms->plan)
		return cd->exec;
	defer(ms, li, k, cd, now);
	return x->cap < cd->exec ? (x->cap > now ? x->cap : now) : cd->exec;
}

/* Preference between two due kinds: the larger batch, then the earlier
 * finish (planned start plus l), then the lower kind. */
static bool better(const struct sym_shard *s, const struct sym_cand *a, int ka, const struct sym_cand *b, int kb)
{
	if (a->size != b->size)
		return a->size > b->size;
	sym_time la = s->lek[ka][a->size], lb = s->lek[kb][b->size];
	if (la != lb)
		return la < lb;
	return ka < kb;
}

/* Measured wait: candidate cd on kind k is due at `due` (its timer). */
static inline void plan_due(struct sym_models *ms, int li, int k, const struct sym_cand *cd, sym_time due)
{
	struct sym_mstand *x = &ms->stand[li * ms->nkinds + k];
	x->due_plan = due;
	x->due_plan_d = cd->size ? cd->deadline : SYM_TIME_NEVER;
}

/* One kind (the common case): the candidate, READY or UNREADY, the timer. */
static void remember(struct sym_models *ms, int li, int k, const struct sym_cand *cd, sym_time now)
{
	struct sym_mstand *x = &ms->stand[li * ms->nkinds + k];
	x->cand = *cd;
	x->cand_now = now;
	x->cand_version = ms->shards[li].version;
}

static void update1(struct sym_models *ms, int li, sym_time now)
{
	struct sym_shard *s = &ms->shards[li];
	struct sym_cand cd;
	sym_shard_gather(s, now, ms->out.drop, ms->out.ctx);
	struct sym_waits w = waits(ms, li, 0);
	sym_shard_cand_kind(s, now, &ms->policy, 0, &w, &cd);
	remember(ms, li, 0, &cd, now);
	lost_head(ms, li, 0, &cd, now);
	if (!cd.size) {
		unready(ms, li, 0);
		sym_iheap_remove(ms->timers, li);
		return;
	}
	sym_time due = due_at(ms, li, 0, &cd, now);
	if (due > now) {
		if (!ms->plan)
			unready(ms, li, 0);
		sym_iheap_set(ms->timers, li, due);
		plan_due(ms, li, 0, &cd, due);
	} else {
		ready(ms, li, 0, &cd, now);
		sym_iheap_set(ms->timers, li, cd.latest + 1);
	}
}

static void update(struct sym_models *ms, int li, sym_time now)
{
	if (ms->nkinds == 1) {
		update1(ms, li, now);
		return;
	}
	struct sym_shard *s = &ms->shards[li];
	int nk = ms->nkinds;
	struct sym_cand cd[SYM_MAX_KINDS];
	bool any = sym_shard_gather(s, now, ms->out.drop, ms->out.ctx) > 0;
	sym_time wake = SYM_TIME_NEVER;
	int order[SYM_MAX_KINDS], ndue = 0;
	for (int k = 0; k < nk; k++) {
		cd[k] = (struct sym_cand){ 0, SYM_TIME_NEVER, SYM_TIME_NEVER, SYM_TIME_NEVER };
		struct sym_waits w = waits(ms, li, k);
		if (any)
			sym_shard_cand_kind(s, now, &ms->policy, k, &w, &cd[k]);
		remember(ms, li, k, &cd[k], now);
		lost_head(ms, li, k, &cd[k], now);
		sym_time due = cd[k].size ? due_at(ms, li, k, &cd[k], now) : SYM_TIME_NEVER;
		if (due > now) {
			if (!cd[k].size || !ms->plan)
				unready(ms, li, k);
			plan_due(ms, li, k, &cd[k], due);
			if (due < wake)
				wake = due;
			continue;
		}
		/* insertion sort by preference (at most SYM_MAX_KINDS) */
		int i = ndue++;
		while (i > 0 && better(s, &cd[k], k, &cd[order[i - 1]], order[i - 1])) {
			order[i] = order[i - 1];
			i--;
		}
		order[i] = k;
		if (cd[k].latest + 1 < wake)
			wake = cd[k].latest + 1;
	}
	for (int i = 0; i < ndue; i++)
		ready(ms, li, order[i], &cd[order[i]], now);
	if (wake == SYM_TIME_NEVER)
		sym_iheap_remove(ms->timers, li);
	else
		sym_iheap_set(ms->timers, li, wake);
}

int sym_models_arrive(struct sym_models *ms, struct sym_request *r, sym_time now)
{
	int li = local_id(ms, r->model);
	int err = sym_shard_push(&ms->shards[li], r, now);
	if (err)
		return err;
	update(ms, li, now);
	return 0;
}

void sym_models_timer(struct sym_models *ms, int li, sym_time now)
{
	update(ms, li, now);
}

static void grant(struct sym_models *ms, const struct sym_xmsg *m, sym_time now)
{
	int li = local_id(ms, m->model);
	int k = m->kind;
	struct sym_mstand *x = &ms->stand[li * ms->nkinds + k];
	/* The ranker took our READY out of its ready set; if it was the last one
	 * we sent, we are no longer ready there. */
	bool current = x->ready && m->seq == x->seq;
	if (current)
		x->ready = false;
	struct sym_shard *s = &ms->shards[li];
	struct sym_cand cd = { 0, SYM_TIME_NEVER, SYM_TIME_NEVER, SYM_TIME_NEVER };
	if (x->cand_now == now && x->cand_version == s->version)
		cd = x->cand; /* computed at this moment, on this queue: the same */
	else if (sym_shard_gather(s, now, ms->out.drop, ms->out.ctx)) {
		struct sym_waits w = waits(ms, li, k);
		sym_shard_cand_kind(s, now, &ms->policy, k, &w, &cd);
	}
	sym_time start = now + delay_of(s, cd.size);
	/* due: as computed now, or (look-ahead) still the READY this grant answers */
	bool due = cd.exec <= now || (current && cd.deadline == x->rd && (ms->plan || ms->measure));
	if (cd.size && due && (m->t1 <= now || m->t1 < start)) {
		struct sym_dispatch d = {
			.model = m->model,
			.gpu = m->gpu,
			.kind = k,
			.size = cd.size,
			.now = now,
			.start = start,
			.finish = start + s->prof_k[k]->lat[cd.size],
			.reject_after = SYM_TIME_NEVER,
			.dropped_before = s->dropped_since_batch,
			.epoch = m->epoch,
			.reqs = ms->scratch,
		};
		sym_shard_take(s, cd.size, ms->scratch);
		for (int i = 0; i < cd.size; i++)
			ms->scratch[i]->start = start;
		struct sym_xmsg t = { .type = SYM_X_TAKEN, .model = m->model, .gpu = m->gpu, .kind = k,
				      .t1 = d.start, .t2 = d.finish,
				      .t3 = ms->measure && current ? now - x->due_since : -1 };
		ms->out.send(ms->out.ctx, k, &t);
		ms->out.dispatch(ms->out.ctx, &d);
	} else {
		struct sym_xmsg b = { .type = SYM_X_GIVEBACK, .model = m->model, .gpu = m->gpu, .kind = k };
		ms->out.send(ms->out.ctx, k, &b);
	}
	update(ms, li, now);
}

void sym_models_recv(struct sym_models *ms, const struct sym_xmsg *m, sym_time now)
{
	int li = local_id(ms, m->model);
	struct sym_mstand *x = &ms->stand[li * ms->nkinds + m->kind];
	if (ms->measure && (m->type == SYM_X_GRANT || m->type == SYM_X_PULL)) {
		x->wait = m->t2 < 0 ? 0 : m->t2; /* the kind's estimates, as they stand */
		x->wait_safe = m->t3 < 0 ? 0 : m->t3;
	}
	if (m->type == SYM_X_GRANT) {
		grant(ms, m, now);
		return;
	}
	if (m->type != SYM_X_PULL)
		return;
	if (!x->deferred || m->seq != x->seq || x->cap == m->t1)
		return; /* for an older DEFER, or nothing new */
	x->cap = m->t1;
	update(ms, li, now);
}

int sym_models_set_kinds_off(struct sym_models *ms, int m, uint32_t kinds_off, sym_time now)
{
	int li = local_id(ms, m);
	int rc = sym_shard_set_kinds_off(&ms->shards[li], kinds_off);
	if (!rc)
		update(ms, li, now); /* unready where it may no longer run, ready where it now may */
	return rc;
}

int sym_models_set_slo(struct sym_models *ms, int m, sym_time slo)
{
	if (slo <= 0)
		return -EINVAL;
	ms->shards[local_id(ms, m)].slo = slo;
	return 0;
}

int sym_models_set_model(struct sym_models *ms, int m, const struct sym_model_cfg *cfg)
{
	int li = local_id(ms, m);
	struct sym_shard *s = &ms->shards[li];
	struct sym_mstand *st = &ms->stand[(size_t)li * (size_t)ms->nkinds];
	if (sym_queue_len(&s->queue))
		return -EBUSY;
	for (int k = 0; k < ms->nkinds; k++)
		if (st[k].ready || st[k].deferred)
			return -EBUSY;
	struct sym_shard next;
	int rc = sym_shard_init_kinds(&next, s->id, cfg, s->nkinds, &s->gather, &s->net);
	if (rc)
		return rc;
	if (next.max_batch > ms->maxb) {
		sym_shard_finish(&next);
		return -EINVAL;
	}
	sym_shard_finish(s);
	*s = next;
	for (int k = 0; k < ms->nkinds; k++) {
		memset(&st[k], 0, sizeof(st[k]));
		st[k].cand_now = -1;
		st[k].cap = SYM_TIME_NEVER;
		st[k].wait = st[k].wait_safe = ms->measure ? SYM_WAIT_START : 0;
	}
	return 0;
}

void sym_models_restart_arrivals(struct sym_models *ms, int m)
{
	sym_shard_restart_arrivals(&ms->shards[local_id(ms, m)]);
}

uint64_t sym_models_queued(const struct sym_models *ms)
{
	uint64_t n = 0;
	for (int li = 0; li < ms->n; li++)
		n += sym_queue_len(&ms->shards[li].queue);
	return n;
}
