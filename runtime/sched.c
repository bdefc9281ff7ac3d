/* runtime/sched.c - the scheduling core on threads (see sched.h).
 *
 * Threads and queues (every arrow one SPSC queue of value messages):
 *
 *   threads == 1:   driver --in--> solo --out--> driver
 *   threads >= 2:   driver --in[w]--> worker w --out[w]--> driver
 *                   worker w --up[w]--> ranker --down[w]--> worker w
 *                   driver --gpu--> ranker
 *
 * Sleeping. A consumer that finds nothing to do polls its queues for a
 * moment (see thr_wait), then sets its `sleeping` flag, looks at its queues
 * once more and only then blocks in poll() on its eventfd (and timerfd). A
 * producer pushes, then reads the flag; only when it is set does it take it
 * (exchange, so that one of several producers pays) and write the eventfd.
 * Both sides put a seq_cst fence between their store and their load (the
 * Dekker pattern), so either the consumer sees the element or the producer
 * sees the flag: no lost wake-up, and no system call while the consumer is
 * busy.
 *
 * The driver's eventfd works the same way from the other side: the
 * scheduler threads write it (at most once per loop iteration, and only
 * while `drv_armed` is set); sym_sched_poll re-arms it when it has drained
 * every decision queue.
 *
 * Nothing blocks on a full queue inside the core: a decision or message that
 * does not fit goes to the producer's private backlog (in order, counted as
 * queue_full) and is pushed on a later iteration.
 */
#define _GNU_SOURCE
#include "runtime/sched.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/grow.h"
#include "core/hist.h"
#include "core/models.h"
#include "core/parts.h"
#include "core/ranker.h"
#include "runtime/executor.h"
#include "runtime/spsc.h"

#define MAX_THREADS 256
#define DEFAULT_CAP 65536
/* Messages one thread takes from one queue per loop iteration, so that
 * timers and the other queues get their turn. */
#define BATCH 1024
/* The clock is read again (and due timers run) every this many requests. */
#define CLOCK_EVERY 16
/* Defaults: a thread out of work polls its queues this long before it
 * sleeps; a sleeping thread's timer wakes it this early, and it polls the
 * rest (sym_sched_cfg can change both). */
#define IDLE_SPIN_NS (50 * SYM_US)
#define WAKE_EARLY_NS (100 * SYM_US)
/* While a backlog waits for room, sleep at most this long between tries. */
#define BACKLOG_RETRY_MS 1
#define POOL_CHUNK 4096

/* ---- messages ---- */

enum { IN_REQ, IN_GPU_FREE, IN_GPU_OFFLINE, IN_GPU_ONLINE, IN_MODEL_KINDS, IN_MODEL_RESTART, IN_MODEL_SET, IN_MODEL_SLO };

/* driver -> solo / worker / ranker */
struct in_msg {
	uint64_t id;   /* request id, or the GPU, or (MODEL_KINDS) the model's new kinds_off, or (MODEL_SET)
			* its new struct sym_model_cfg's address */
	int32_t model; /* request model, or the GPU's new epoch */
	int32_t type;
	sym_time arrival;  /* GPU_FREE: when its batch started */
	sym_time deadline; /* GPU_FREE: when its batch ended */
};

enum { OUT_DISPATCH = 1, OUT_DROP, OUT_MOVED };

struct out_head {
	int32_t type;
	int32_t model;
	int32_t gpu;
	int32_t size;  /* dispatch: ids follow in ceil(size/SYM_SCHED_IDS) elements */
	sym_time now, start, finish, reject_after;
	uint64_t id;   /* drop: the request; dispatch: the GPU's dispatch sequence number */
	uint32_t epoch; /* dispatch: the GPU's epoch when it was granted */
	int32_t why;   /* drop; moved: 0, or the -errno of the change */
};

/* scheduler -> driver */
union out_elem {
	struct out_head h;
	uint64_t ids[SYM_SCHED_IDS];
};
_Static_assert(sizeof(union out_elem) == 64, "decision elements are one cache line");

/* worker <-> ranker: the core's exchange messages (core/ranker.h) */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* ---- pieces every scheduler thread has ---- */

/* A producer's queue with its private backlog (elements that found the
 * queue full, pushed in order before anything newer). */
struct outq {
	struct sym_spsc *q;
	size_t elem;
	unsigned char *buf;
	size_t head, len, cap; /* backlog: elements head..len-1 of buf */
	bool pushed;           /* something reached the queue since the last wake */
};

/* Counters of one scheduler thread: written by it alone (relaxed
 * load-and-store, no locked instruction), read by the driver. */
struct ctr {
	_Alignas(64) atomic_uint_fast64_t dispatches;
	atomic_uint_fast64_t reqs;
	atomic_uint_fast64_t drops;
	atomic_uint_fast64_t queue_full;
	atomic_int_fast64_t lag_max;
	_Atomic uint32_t *lag; /* SYM_HIST_BUCKETS counts (sym_hist_bucket), or NULL */
};

static inline void bump(atomic_uint_fast64_t *x, uint64_t d)
{
	atomic_store_explicit(x, atomic_load_explicit(x, memory_order_relaxed) + d, memory_order_relaxed);
}

struct pool_chunk {
	struct pool_chunk *next;
	struct sym_request r[POOL_CHUNK];
};

/* Requests held by the core of one thread: copies of what was submitted. */
struct pool {
	struct pool_chunk *chunks;
	struct sym_request **free;
	size_t nfree, cap;
};

struct thr {
	struct sym_sched *s;
	pthread_t tid;
	bool started;
	int efd;          /* wakes it */
	int tfd;          /* its timer, or -1 */
	sym_time armed;   /* the timerfd's expiry, SYM_TIME_NEVER when disarmed */
	char name[16];
	_Alignas(64) atomic_int sleeping;
};

/* What a thread running shards needs to report decisions. */
struct emitter {
	struct sym_sched *s;
	struct outq out;  /* to the driver */
	struct pool pool;
	struct ctr ctr;
};

struct solo {
	struct thr t;
	struct emitter em;
	struct sym_core *core;
	struct sym_spsc *in;
	bool *off;        /* per GPU: offline */
	uint32_t *epoch;  /* per GPU */
};

struct worker {
	struct thr t;
	struct emitter em;
	int w;
	int nm;                  /* local models: m = li * threads + w */
	struct sym_shard *shards;
	struct sym_models ms;    /* the core's model side over them */
	struct sym_iheap timers; /* by local index */
	int nkinds;
	struct sym_spsc *in;                    /* from the driver */
	struct sym_spsc *down[SYM_MAX_KINDS];   /* from each kind's ranker (its outq) */
	struct outq up[SYM_MAX_KINDS];          /* to each kind's ranker */
};

struct ranker {
	struct thr t;
	int kind;              /* it owns the GPUs of this kind */
	struct sym_ranker rk;  /* the core's ranker side */
	struct sym_spsc *gpu;  /* from the driver */
	struct outq *down;     /* per worker (the ranker owns these queues) */
	_Alignas(64) atomic_uint_fast64_t queue_full;
};

/* The driver's view of one decision queue: a dispatch whose ids are not all
 * there yet waits here until a later poll. */
struct reader {
	struct sym_spsc *q;
	bool partial;
	struct out_head h;
	int got;
	uint64_t *ids;
};

struct sym_sched {
	int threads;
	bool manual;             /* no threads: the driver steps them (sym_sched_step) */
	sym_time idle_poll, wake_early; /* see sym_sched_cfg */
	int nmodels, ngpus, maxb;
	atomic_bool stop;
	struct solo *solo;
	struct worker **workers;
	struct ranker **rankers; /* split: one per GPU kind */
	int nkinds;
	int *gpu_kind;           /* split: the kind (ranker) of each GPU */
	/* sub-clusters (cfg.core.nparts >= 2): the configuration with its parts as kinds (core/parts.h),
	 * which the threads are built from; each GPU's own kind; models filled later (set_model) */
	struct sym_parts parts;
	int *base_kind;
	/* driver side */
	int drv_efd;
	_Alignas(64) atomic_int drv_armed;
	_Alignas(64) uint64_t submitted;
	uint64_t drv_full;
	uint64_t lost_batches, lost_reqs;
	int *model_worker;   /* the worker of each model */
	struct thr **model_thr; /* the thread to wake for each model's requests */
	bool *off;
	uint32_t *epoch;
	struct reader *rd;
	int nrd, rd_next;
	/* A GPU's dispatches are numbered as they are decided (gpu_seq, by the
	 * scheduler threads) and delivered in that order (next_seq, the
	 * driver's): with several threads, a GPU's batch and the one planned
	 * after it by another thread sit in different queues, and the backend
	 * runs its batches in the order they come. */
	atomic_uint_fast64_t *gpu_seq;
	uint64_t *next_seq;
};

/* ---- small helpers ---- */

static int fail(char *err, size_t errlen, int rc, const char *fmt, const char *arg)
{
	if (err && errlen)
		snprintf(err, errlen, fmt, arg);
	return rc;
}

static void *alloc_aligned(size_t size)
{
	size = (size + 63) & ~(size_t)63;
	void *p = aligned_alloc(64, size);
	if (p)
		memset(p, 0, size);
	return p;
}

static int outq_init(struct outq *o, size_t cap, size_t elem)
{
	memset(o, 0, sizeof(*o));
	o->elem = elem;
	o->q = sym_spsc_create(cap, elem);
	return o->q ? 0 : -ENOMEM;
}

static void outq_finish(struct outq *o)
{
	sym_spsc_destroy(o->q);
	free(o->buf);
	memset(o, 0, sizeof(*o));
}

static inline bool outq_idle(const struct outq *o) { return o->head == o->len; }

/* Pushes the backlog while the queue takes it. Returns whether it is empty. */
static bool outq_flush(struct outq *o)
{
	while (o->head < o->len) {
		if (!sym_spsc_push(o->q, o->buf + o->head * o->elem))
			return false;
		o->pushed = true;
		o->head++;
	}
	o->head = o->len = 0;
	return true;
}

static void outq_put(struct outq *o, const void *e, atomic_uint_fast64_t *full, const atomic_bool *stop)
{
	if (o->head == o->len && sym_spsc_push(o->q, e)) {
		o->pushed = true;
		return;
	}
	bump(full, 1);
	if (o->len == o->cap && o->head > 0) {
		memmove(o->buf, o->buf + o->head * o->elem, (o->len - o->head) * o->elem);
		o->len -= o->head;
		o->head = 0;
	}
	if (o->len == o->cap && sym_grow(&o->buf, &o->cap, o->len + 1, o->elem, 1024)) {
		/* No memory for the backlog: wait for room instead (never lose a
		 * decision). */
		while (!outq_flush(o) && !atomic_load_explicit(stop, memory_order_relaxed))
			sched_yield();
		while (!sym_spsc_push(o->q, e) && !atomic_load_explicit(stop, memory_order_relaxed))
			sched_yield();
		o->pushed = true;
		return;
	}
	memcpy(o->buf + o->len * o->elem, e, o->elem);
	o->len++;
}

static int pool_grow(struct pool *p)
{
	struct pool_chunk *c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	struct sym_request **f = realloc(p->free, (p->cap + POOL_CHUNK) * sizeof(*f));
	if (!f) {
		free(c);
		return -ENOMEM;
	}
	c->next = p->chunks;
	p->chunks = c;
	p->free = f;
	p->cap += POOL_CHUNK;
	for (int i = POOL_CHUNK - 1; i >= 0; i--)
		p->free[p->nfree++] = &c->r[i];
	return 0;
}

static inline struct sym_request *pool_get(struct pool *p)
{
	if (!p->nfree && pool_grow(p))
		return NULL;
	return p->free[--p->nfree];
}

/* The pool's free stack has room for every request it ever made. */
static inline void pool_put(struct pool *p, struct sym_request *r) { p->free[p->nfree++] = r; }

static void pool_finish(struct pool *p)
{
	while (p->chunks) {
		struct pool_chunk *c = p->chunks;
		p->chunks = c->next;
		free(c);
	}
	free(p->free);
	memset(p, 0, sizeof(*p));
}

static void lag_record(struct ctr *c, sym_time lag)
{
	if (lag < 0)
		lag = 0;
	int b = sym_hist_bucket(lag);
	atomic_store_explicit(&c->lag[b], atomic_load_explicit(&c->lag[b], memory_order_relaxed) + 1,
			      memory_order_relaxed);
	if (lag > atomic_load_explicit(&c->lag_max, memory_order_relaxed))
		atomic_store_explicit(&c->lag_max, lag, memory_order_relaxed);
}

/* ---- waking and sleeping ---- */

static void efd_write(int fd)
{
	uint64_t one = 1;
	ssize_t n = write(fd, &one, sizeof(one));
	(void)n; /* EAGAIN: the counter is saturated, it is readable anyway */
}

static void efd_drain(int fd)
{
	uint64_t v;
	ssize_t n = read(fd, &v, sizeof(v));
	(void)n; /* EAGAIN: nothing was written */
}

#if defined(__SANITIZE_THREAD__)
#define SYM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SYM_TSAN 1
#endif
#endif

/* The store-load barrier of the sleeping protocol. ThreadSanitizer does not
 * model fences (GCC warns); a seq_cst read-modify-write is the same full
 * barrier on the hardware it runs on, and TSan understands it. */
static inline void full_fence(void)
{
#ifdef SYM_TSAN
	static _Thread_local atomic_int dummy;
	atomic_fetch_add_explicit(&dummy, 0, memory_order_seq_cst);
#else
	atomic_thread_fence(memory_order_seq_cst);
#endif
}

/* Producer side: after pushing to t's queues. */
static inline void wake(struct thr *t)
{
	full_fence();
	if (atomic_load_explicit(&t->sleeping, memory_order_relaxed) &&
	    atomic_exchange_explicit(&t->sleeping, 0, memory_order_relaxed))
		efd_write(t->efd);
}

/* Scheduler side: decisions were pushed; wake the driver if it waits. */
static inline void wake_driver(struct sym_sched *s)
{
	full_fence();
	if (atomic_load_explicit(&s->drv_armed, memory_order_relaxed) &&
	    atomic_exchange_explicit(&s->drv_armed, 0, memory_order_relaxed))
		efd_write(s->drv_efd);
}

static void arm_timer(struct thr *t, sym_time at)
{
	if (t->tfd < 0 || at == t->armed)
		return;
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	if (at != SYM_TIME_NEVER) {
		if (at < 1)
			at = 1; /* an all-zero it_value would disarm */
		its.it_value.tv_sec = (time_t)(at / SYM_S);
		its.it_value.tv_nsec = (long)(at % SYM_S);
	}
	if (timerfd_settime(t->tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		t->armed = at;
}

/* Waits for work, for `until` (monotonic: the thread's next timer) or,
 * with `retry`, for a short while (a backlog waits for room). It polls its
 * queues (has_work) for a while first: after work, since wake-ups under
 * load come back at once; and through the last WAKE_EARLY_NS before a
 * timer, since a timerfd wakes its thread tens of microseconds late and a
 * deferred batch has only l(B+1) - l(B) of slack. Otherwise it sleeps on
 * its eventfd and timerfd (the timer set WAKE_EARLY_NS early). */
static void thr_wait(struct thr *t, sym_time until, bool retry, bool (*has_work)(void *), void *arg)
{
	sym_time now = sym_monotonic_ns();
	sym_time wake = until == SYM_TIME_NEVER ? SYM_TIME_NEVER : until - t->s->wake_early;
	sym_time end = now + t->s->idle_poll;
	if (wake <= end)
		end = until;
	for (int k = 1; now < end; now = sym_monotonic_ns(), k++) {
		for (int i = 0; i < 32; i++)
			cpu_relax();
		if (has_work(arg))
			return;
		if (k % 16 == 0)
			sched_yield(); /* an oversubscribed core: let the others run */
	}
	if (wake <= now)
		return; /* the timer is due, or close enough to poll for */
	arm_timer(t, wake);
	atomic_store_explicit(&t->sleeping, 1, memory_order_relaxed);
	full_fence();
	if (has_work(arg) || atomic_load_explicit(&t->s->stop, memory_order_relaxed)) {
		atomic_store_explicit(&t->sleeping, 0, memory_order_relaxed);
		return;
	}
	struct pollfd pf[2] = { { t->efd, POLLIN, 0 }, { t->tfd, POLLIN, 0 } };
	int n = poll(pf, t->tfd >= 0 ? 2 : 1, retry ? BACKLOG_RETRY_MS : -1);
	atomic_store_explicit(&t->sleeping, 0, memory_order_relaxed);
	if (n <= 0)
		return;
	if (pf[0].revents & POLLIN)
		efd_drain(t->efd);
	if (t->tfd >= 0 && (pf[1].revents & POLLIN)) {
		efd_drain(t->tfd); /* a timerfd reads like an eventfd: 8 bytes */
		t->armed = SYM_TIME_NEVER;
	}
}

static void thr_setup(struct thr *t)
{
	pthread_setname_np(pthread_self(), t->name);
	/* Timer wake-ups to the nanosecond rather than the default 50 us slack:
	 * lateness is what the scheduler is measured by. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
}

static int thr_init(struct thr *t, struct sym_sched *s, bool timer, const char *name)
{
	t->s = s;
	t->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	t->tfd = timer ? timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC) : -1;
	t->armed = SYM_TIME_NEVER;
	snprintf(t->name, sizeof(t->name), "%s", name);
	atomic_init(&t->sleeping, 0);
	if (t->efd < 0 || (timer && t->tfd < 0))
		return -errno;
	return 0;
}

static void thr_close(struct thr *t)
{
	if (t->efd >= 0)
		close(t->efd);
	if (t->tfd >= 0)
		close(t->tfd);
	t->efd = t->tfd = -1;
}

/* ---- decisions out ---- */

static void emit_drop(struct emitter *em, uint64_t id, int model, enum sym_drop_reason why, sym_time now)
{
	union out_elem e;
	memset(&e, 0, sizeof(e));
	e.h = (struct out_head){ .type = OUT_DROP, .model = model, .id = id, .why = (int32_t)why, .now = now };
	outq_put(&em->out, &e, &em->ctr.queue_full, &em->s->stop);
	bump(&em->ctr.drops, 1);
}

/* Model m's kinds changed (or not: why < 0): after every dispatch of it
 * decided before, on the same queue. */
static void emit_moved(struct emitter *em, int model, int why, sym_time now)
{
	union out_elem e;
	memset(&e, 0, sizeof(e));
	e.h = (struct out_head){ .type = OUT_MOVED, .model = model, .why = why, .now = now };
	outq_put(&em->out, &e, &em->ctr.queue_full, &em->s->stop);
}

/* A dispatch: the header, then the ids; the requests go back to the pool. */
static void emit_dispatch(struct emitter *em, const struct sym_dispatch *d, struct sym_request *const *reqs)
{
	union out_elem e;
	memset(&e, 0, sizeof(e));
	/* numbered before it is queued, and before the ranker can hear of it and plan the GPU's
	 * next batch on another thread (seq_cst: one order over every GPU's numbers) */
	uint64_t seq = atomic_fetch_add(&em->s->gpu_seq[d->gpu], 1);
	e.h = (struct out_head){ .type = OUT_DISPATCH, .model = d->model, .gpu = d->gpu, .size = d->size, .now = d->now,
				 .start = d->start, .finish = d->finish, .reject_after = d->reject_after,
				 .id = seq, .epoch = d->epoch };
	outq_put(&em->out, &e, &em->ctr.queue_full, &em->s->stop);
	for (int i = 0; i < d->size; i += SYM_SCHED_IDS) {
		int n = d->size - i < SYM_SCHED_IDS ? d->size - i : SYM_SCHED_IDS;
		for (int j = 0; j < n; j++) {
			e.ids[j] = reqs[i + j]->id;
			pool_put(&em->pool, reqs[i + j]);
		}
		outq_put(&em->out, &e, &em->ctr.queue_full, &em->s->stop);
	}
	bump(&em->ctr.dispatches, 1);
	bump(&em->ctr.reqs, (uint64_t)d->size);
}

/* A request the thread cannot hold (no memory) is dropped at once, so that
 * it is still decided exactly once. */
static struct sym_request *take_request(struct emitter *em, const struct in_msg *m, sym_time now)
{
	struct sym_request *r = pool_get(&em->pool);
	if (!r) {
		emit_drop(em, m->id, m->model, SYM_DROP_EXPIRED, now);
		return NULL;
	}
	*r = (struct sym_request){ .id = m->id, .arrival = m->arrival, .deadline = m->deadline, .model = m->model };
	return r;
}

static int emitter_init(struct emitter *em, struct sym_sched *s, size_t cap, bool lag)
{
	em->s = s;
	if (outq_init(&em->out, cap, sizeof(union out_elem)))
		return -ENOMEM;
	if (lag) {
		em->ctr.lag = calloc(SYM_HIST_BUCKETS, sizeof(*em->ctr.lag));
		if (!em->ctr.lag)
			return -ENOMEM;
	}
	return 0;
}

static void emitter_finish(struct emitter *em)
{
	outq_finish(&em->out);
	pool_finish(&em->pool);
	free((void *)em->ctr.lag);
	em->ctr.lag = NULL;
}

/* ---- threads == 1: the whole core on one thread ---- */

static void solo_dispatch(void *ctx, const struct sym_dispatch *d)
{
	struct solo *so = ctx;
	emit_dispatch(&so->em, d, d->reqs);
}

static void solo_drop(void *ctx, struct sym_request *r, enum sym_drop_reason why, sym_time now)
{
	struct solo *so = ctx;
	emit_drop(&so->em, r->id, r->model, why, now);
	pool_put(&so->em.pool, r);
}

/* Runs the core's timers due at now, recording how late the first was. */
static inline void solo_timers(struct solo *so, sym_time now)
{
	sym_time due = sym_core_next_wakeup(so->core);
	if (due <= now) {
		lag_record(&so->em.ctr, now - due);
		sym_core_advance(so->core, now);
	}
}

/* A spare slot's model the core could not take: the driver checked what
 * it could (an empty slot, a batch within the largest), so this is memory
 * or a bug; the slot keeps its placeholder and its requests are dropped. */
static void model_set_failed(const struct in_msg *m, int rc)
{
	if (rc)
		fprintf(stderr, "scheduler: model %d could not take its new profile: %s\n", m->model, strerror(-rc));
}

static void solo_msg(struct solo *so, const struct in_msg *m, sym_time now)
{
	struct sym_core *c = so->core;
	if (m->type == IN_MODEL_KINDS) {
		emit_moved(&so->em, m->model, sym_core_set_kinds_off(c, m->model, (uint32_t)m->id, now), now);
		return;
	}
	if (m->type == IN_MODEL_RESTART) {
		sym_core_restart_arrivals(c, m->model); /* (a scheduler policy has no statistics to restart) */
		return;
	}
	if (m->type == IN_MODEL_SET) {
		model_set_failed(m, sym_core_set_model(c, m->model, (const struct sym_model_cfg *)(uintptr_t)m->id));
		return;
	}
	if (m->type == IN_MODEL_SLO) {
		sym_core_set_slo(c, m->model, (sym_time)m->id); /* (checked > 0 by sym_sched_set_slo) */
		return;
	}
	if (m->type == IN_REQ) {
		struct sym_request *r = take_request(&so->em, m, now);
		if (r && sym_core_arrive(c, r, now)) {
			pool_put(&so->em.pool, r);
			emit_drop(&so->em, m->id, m->model, SYM_DROP_EXPIRED, now);
		}
		return;
	}
	int g = (int)m->id;
	switch (m->type) {
	case IN_GPU_FREE: {
		/* an end for an offline GPU (or one with nothing outstanding)
		 * changes nothing: the core ignores it */
		struct sym_batch_end e = { m->arrival, m->deadline < now ? m->deadline : now, m->model != 0 };
		sym_core_gpu_done(c, g, now, &e);
		break;
	}
	case IN_GPU_OFFLINE:
		sym_core_gpu_offline(c, g, (uint32_t)m->model, now);
		break;
	case IN_GPU_ONLINE:
		if (m->arrival) /* (a GPU moving to another kind: sym_sched_gpu_online_kind) */
			sym_core_gpu_set_kind(c, g, (int)m->arrival - 1);
		sym_core_gpu_online(c, g, (uint32_t)m->model, now);
		break;
	}
}

static bool solo_has_work(void *arg)
{
	struct solo *so = arg;
	return sym_spsc_size(so->in) > 0 || !outq_idle(&so->em.out);
}

/* One pass of the solo thread's loop at now: timers, then the driver's
 * messages. Returns how much it did (0: idle). */
static int solo_step(struct solo *so, sym_time now, bool clock)
{
	struct sym_sched *s = so->t.s;
	outq_flush(&so->em.out);
	sym_time due = sym_core_next_wakeup(so->core);
	int n = due <= now;
	solo_timers(so, now);
	struct in_msg m;
	for (int k = 0; k < BATCH && sym_spsc_pop(so->in, &m); k++, n++) {
		if (clock && k % CLOCK_EVERY == CLOCK_EVERY - 1) {
			now = sym_monotonic_ns();
			solo_timers(so, now);
		}
		solo_msg(so, &m, now);
	}
	if (so->em.out.pushed) {
		so->em.out.pushed = false;
		wake_driver(s);
	}
	return n;
}

static void *solo_main(void *arg)
{
	struct solo *so = arg;
	struct sym_sched *s = so->t.s;
	thr_setup(&so->t);
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		if (solo_step(so, sym_monotonic_ns(), true))
			continue;
		thr_wait(&so->t, sym_core_next_wakeup(so->core), !outq_idle(&so->em.out), solo_has_work, so);
	}
	return NULL;
}

/* ---- threads >= 2: workers ----
 *
 * A worker runs the core's model side (core/models.h) over its models; its
 * messages to a kind's ranker go up that ranker's queue, the grants come
 * down another. All of the matching logic is the core's. */

static void wk_send(void *ctx, int k, const struct sym_xmsg *m)
{
	struct worker *wk = ctx;
	outq_put(&wk->up[k], m, &wk->em.ctr.queue_full, &wk->t.s->stop);
}

static void wk_dispatch(void *ctx, const struct sym_dispatch *d)
{
	struct worker *wk = ctx;
	emit_dispatch(&wk->em, d, d->reqs);
}

static void wk_drop(void *ctx, struct sym_request *r, enum sym_drop_reason why, sym_time now)
{
	struct worker *wk = ctx;
	emit_drop(&wk->em, r->id, r->model, why, now);
	pool_put(&wk->em.pool, r);
}

static int wk_timers(struct worker *wk, sym_time now)
{
	if (sym_iheap_empty(&wk->timers) || sym_iheap_top_key(&wk->timers) > now)
		return 0;
	lag_record(&wk->em.ctr, now - sym_iheap_top_key(&wk->timers));
	int n = 0;
	while (!sym_iheap_empty(&wk->timers) && sym_iheap_top_key(&wk->timers) <= now) {
		int li = sym_iheap_pop(&wk->timers);
		sym_models_timer(&wk->ms, li, now);
		n++;
	}
	return n;
}

static void wk_arrive(struct worker *wk, const struct in_msg *m, sym_time now)
{
	if (m->type == IN_MODEL_KINDS) {
		emit_moved(&wk->em, m->model, sym_models_set_kinds_off(&wk->ms, m->model, (uint32_t)m->id, now), now);
		return;
	}
	if (m->type == IN_MODEL_RESTART) {
		sym_models_restart_arrivals(&wk->ms, m->model);
		return;
	}
	if (m->type == IN_MODEL_SET) {
		model_set_failed(m, sym_models_set_model(&wk->ms, m->model, (const struct sym_model_cfg *)(uintptr_t)m->id));
		return;
	}
	if (m->type == IN_MODEL_SLO) {
		sym_models_set_slo(&wk->ms, m->model, (sym_time)m->id);
		return;
	}
	struct sym_request *r = take_request(&wk->em, m, now);
	if (!r)
		return;
	if (sym_models_arrive(&wk->ms, r, now)) {
		pool_put(&wk->em.pool, r);
		emit_drop(&wk->em, m->id, m->model, SYM_DROP_EXPIRED, now);
	}
}

static bool wk_has_work(void *arg)
{
	struct worker *wk = arg;
	if (sym_spsc_size(wk->in) > 0 || !outq_idle(&wk->em.out))
		return true;
	for (int k = 0; k < wk->nkinds; k++)
		if (sym_spsc_size(wk->down[k]) > 0 || !outq_idle(&wk->up[k]))
			return true;
	return false;
}

static bool wk_up_idle(const struct worker *wk)
{
	for (int k = 0; k < wk->nkinds; k++)
		if (!outq_idle(&wk->up[k]))
			return false;
	return true;
}

/* One pass of a worker's loop at now: timers, grants, then requests.
 * Returns how much it did (0: idle). */
static int worker_step(struct worker *wk, sym_time now, bool clock)
{
	struct sym_sched *s = wk->t.s;
	outq_flush(&wk->em.out);
	for (int k = 0; k < wk->nkinds; k++)
		outq_flush(&wk->up[k]);
	int n = wk_timers(wk, now);
	struct sym_xmsg g;
	for (int k = 0; k < wk->nkinds; k++)
		for (int j = 0; j < BATCH && sym_spsc_pop(wk->down[k], &g); j++, n++)
			sym_models_recv(&wk->ms, &g, now);
	struct in_msg m;
	for (int k = 0; k < BATCH && sym_spsc_pop(wk->in, &m); k++, n++) {
		if (clock && k % CLOCK_EVERY == CLOCK_EVERY - 1) {
			now = sym_monotonic_ns();
			wk_timers(wk, now);
		}
		wk_arrive(wk, &m, now);
	}
	for (int k = 0; k < wk->nkinds; k++) {
		if (wk->up[k].pushed) {
			wk->up[k].pushed = false;
			wake(&s->rankers[k]->t);
		}
	}
	if (wk->em.out.pushed) {
		wk->em.out.pushed = false;
		wake_driver(s);
	}
	return n;
}

static sym_time wk_next_wakeup(const struct worker *wk)
{
	return sym_iheap_empty(&wk->timers) ? SYM_TIME_NEVER : sym_iheap_top_key(&wk->timers);
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct sym_sched *s = wk->t.s;
	thr_setup(&wk->t);
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		if (worker_step(wk, sym_monotonic_ns(), true))
			continue;
		thr_wait(&wk->t, wk_next_wakeup(wk), !outq_idle(&wk->em.out) || !wk_up_idle(wk), wk_has_work, wk);
	}
	return NULL;
}

/* ---- threads >= 2: the ranker ----
 *
 * It runs the core's ranker side (core/ranker.h) for its kind: the workers'
 * messages and the driver's GPU ends, offlines and onlines go in, then it
 * matches; its timer is the send-ahead moment of its earliest pending GPU. */

static void rk_send(void *ctx, const struct sym_xmsg *m)
{
	struct ranker *r = ctx;
	outq_put(&r->down[m->model % r->t.s->threads], m, &r->queue_full, &r->t.s->stop);
}

static void rk_driver_msg(struct ranker *r, const struct in_msg *m, sym_time now)
{
	int g = (int)m->id;
	switch (m->type) {
	case IN_GPU_FREE:
		sym_ranker_gpu_done(&r->rk, g, m->deadline < now ? m->deadline : now);
		break;
	case IN_GPU_OFFLINE:
		sym_ranker_gpu_offline(&r->rk, g, (uint32_t)m->model);
		break;
	case IN_GPU_ONLINE:
		sym_ranker_gpu_online(&r->rk, g, (uint32_t)m->model, now);
		break;
	}
}

static bool rk_has_work(void *arg)
{
	struct ranker *r = arg;
	struct sym_sched *s = r->t.s;
	if (sym_spsc_size(r->gpu) > 0)
		return true;
	for (int w = 0; w < s->threads; w++)
		if (sym_spsc_size(s->workers[w]->up[r->kind].q) > 0 || !outq_idle(&r->down[w]))
			return true;
	return false;
}

/* One pass of a ranker's loop: the workers' messages, then the driver's,
 * then matching at now (the clock is read after the workers' messages when
 * `clock`). Returns how much it did (0: idle); *backlog says whether a
 * queue to a worker was full. */
static int ranker_step(struct ranker *r, sym_time now, bool clock, bool *backlog)
{
	struct sym_sched *s = r->t.s;
	int n = 0;
	*backlog = false;
	for (int w = 0; w < s->threads; w++)
		*backlog |= !outq_flush(&r->down[w]);
	/* Workers first, then the driver: whatever the driver sent before
	 * the requests behind a READY (an OFFLINE, say) is visible by then,
	 * so it is applied before that READY can be granted a GPU. */
	for (int w = 0; w < s->threads; w++) {
		struct sym_xmsg m;
		for (int k = 0; k < BATCH && sym_spsc_pop(s->workers[w]->up[r->kind].q, &m); k++, n++)
			sym_ranker_recv(&r->rk, &m);
	}
	if (clock)
		now = sym_monotonic_ns();
	struct in_msg g;
	while (sym_spsc_pop(r->gpu, &g)) {
		rk_driver_msg(r, &g, now);
		n++;
	}
	sym_time due = sym_ranker_match_due(&r->rk);
	if (due <= now)
		n++;
	sym_ranker_match(&r->rk, now);
	for (int w = 0; w < s->threads; w++) {
		if (r->down[w].pushed) {
			r->down[w].pushed = false;
			wake(&s->workers[w]->t);
		}
	}
	return n;
}

/* Look-ahead once the ranker has nothing at hand (sym_ranker_settle): what
 * it sends goes down at once. Returns whether it sent anything. */
static bool ranker_settle(struct ranker *r, sym_time now)
{
	struct sym_sched *s = r->t.s;
	if (!sym_ranker_settle(&r->rk, now))
		return false;
	for (int w = 0; w < s->threads; w++) {
		outq_flush(&r->down[w]);
		if (r->down[w].pushed) {
			r->down[w].pushed = false;
			wake(&s->workers[w]->t);
		}
	}
	return true;
}

static void *ranker_main(void *arg)
{
	struct ranker *r = arg;
	struct sym_sched *s = r->t.s;
	thr_setup(&r->t);
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		bool backlog;
		if (ranker_step(r, 0, true, &backlog) || ranker_settle(r, sym_monotonic_ns()))
			continue;
		thr_wait(&r->t, sym_ranker_next_wakeup(&r->rk), backlog, rk_has_work, r);
	}
	return NULL;
}

/* ---- create / destroy ---- */

static void worker_free(struct worker *wk)
{
	if (!wk)
		return;
	thr_close(&wk->t);
	emitter_finish(&wk->em);
	if (wk->shards)
		for (int li = 0; li < wk->nm; li++)
			sym_shard_finish(&wk->shards[li]);
	free(wk->shards);
	sym_models_finish(&wk->ms);
	sym_iheap_finish(&wk->timers);
	sym_spsc_destroy(wk->in);
	for (int k = 0; k < SYM_MAX_KINDS; k++)
		outq_finish(&wk->up[k]);
	free(wk);
}

static void ranker_free(struct ranker *r, int threads)
{
	if (!r)
		return;
	thr_close(&r->t);
	sym_ranker_finish(&r->rk);
	sym_spsc_destroy(r->gpu);
	if (r->down)
		for (int w = 0; w < threads; w++)
			outq_finish(&r->down[w]);
	free(r->down);
	free(r);
}

static void solo_free(struct solo *so)
{
	if (!so)
		return;
	thr_close(&so->t);
	sym_core_destroy(so->core);
	emitter_finish(&so->em);
	sym_spsc_destroy(so->in);
	free(so->off);
	free(so->epoch);
	free(so);
}

static int make_solo(struct sym_sched *s, const struct sym_sched_cfg *cfg, size_t cap, char *err, size_t errlen)
{
	struct solo *so = alloc_aligned(sizeof(*so));
	if (!so)
		return fail(err, errlen, -ENOMEM, "%s", "out of memory");
	s->solo = so;
	s->nkinds = cfg->core.nkinds > 1 ? cfg->core.nkinds : 1;
	so->t.efd = so->t.tfd = -1;
	int rc = thr_init(&so->t, s, true, "sym-sched");
	if (rc)
		return fail(err, errlen, rc, "eventfd/timerfd: %s", strerror(-rc));
	struct sym_sink sink = { so, solo_dispatch, solo_drop, NULL };
	rc = sym_core_create_err(&so->core, &cfg->core, &sink, err, errlen);
	if (rc)
		return rc;
	so->in = sym_spsc_create(cap, sizeof(struct in_msg));
	so->off = calloc((size_t)s->ngpus, sizeof(*so->off));
	so->epoch = calloc((size_t)s->ngpus, sizeof(*so->epoch));
	if (!so->in || !so->off || !so->epoch || emitter_init(&so->em, s, cap, true))
		return fail(err, errlen, -ENOMEM, "%s", "out of memory");
	for (int g = 0; g < s->ngpus && cfg->gpus_offline; g++)
		sym_core_gpu_offline(so->core, g, 1, 0);
	s->maxb = sym_core_largest_batch(so->core);
	for (int m = 0; m < s->nmodels; m++)
		s->model_thr[m] = &so->t;
	s->nrd = 1;
	s->rd = calloc(1, sizeof(*s->rd));
	if (!s->rd)
		return fail(err, errlen, -ENOMEM, "%s", "out of memory");
	s->rd[0].q = so->em.out.q;
	return 0;
}

static int make_split(struct sym_sched *s, const struct sym_sched_cfg *cfg, size_t cap, char *err, size_t errlen)
{
	const struct sym_core_cfg *cc = &cfg->core;
	int T = s->threads;
	if (sym_policy_is_scheduler(&cc->policy))
		return fail(err, errlen, -EINVAL,
			    "policy '%s' is a scheduler policy: it runs on one thread only (--threads 1); "
			    "--threads >= 2 needs a candidate policy (symphony, eager, timeout, betalambda)",
			    sym_policy_name(&cc->policy));
	/* The core checks the configuration and says what is wrong. */
	struct sym_core *probe;
	struct sym_sink sink = { NULL, solo_dispatch, solo_drop, NULL };
	int rc = sym_core_create_err(&probe, cc, &sink, err, errlen);
	if (rc)
		return rc;
	s->maxb = sym_core_largest_batch(probe);
	sym_core_destroy(probe);
	const struct sym_net *net = &cc->net;
	int K = s->nkinds = cc->nkinds > 1 ? cc->nkinds : 1;
	s->workers = calloc((size_t)T, sizeof(*s->workers));
	s->rankers = calloc((size_t)K, sizeof(*s->rankers));
	s->gpu_kind = calloc((size_t)s->ngpus, sizeof(*s->gpu_kind));
	if (!s->workers || !s->rankers || !s->gpu_kind)
		return fail(err, errlen, -ENOMEM, "%s", "out of memory");
	for (int g = 0; g < s->ngpus; g++)
		s->gpu_kind[g] = cc->gpu_kind ? cc->gpu_kind[g] : 0;
	/* One ranker per kind (sub-cluster): the core's ranker side, over every
	 * GPU id, owning its kind's. */
	struct sym_lookahead la;
	sym_policy_lookahead(&cc->policy, &la);
	for (int k = 0; k < K; k++) {
		struct ranker *r = s->rankers[k] = alloc_aligned(sizeof(*r));
		if (!r)
			return fail(err, errlen, -ENOMEM, "%s", "out of memory");
		r->kind = k;
		r->t.efd = r->t.tfd = -1;
		char name[16];
		snprintf(name, sizeof(name), "sym-ranker%d", k % SYM_MAX_KINDS);
		if ((rc = thr_init(&r->t, s, true, name)))
			return fail(err, errlen, rc, "eventfd/timerfd: %s", strerror(-rc));
		r->down = calloc((size_t)T, sizeof(*r->down));
		r->gpu = sym_spsc_create(cap, sizeof(struct in_msg));
		if (!r->down || !r->gpu ||
		    sym_ranker_init(&r->rk, k, s->ngpus, s->gpu_kind, s->nmodels, cc->send_ahead, rk_send, r) ||
		    ((la.plan || la.wait) && sym_ranker_set_lookahead(&r->rk, &la)))
			return fail(err, errlen, -ENOMEM, "%s", "out of memory");
		for (int g = 0; g < s->ngpus && cfg->gpus_offline; g++)
			if (s->gpu_kind[g] == k)
				sym_ranker_gpu_offline(&r->rk, g, 1);
		for (int w = 0; w < T; w++)
			if (outq_init(&r->down[w], cap, sizeof(struct sym_xmsg)))
				return fail(err, errlen, -ENOMEM, "%s", "out of memory");
	}
	for (int w = 0; w < T; w++) {
		struct worker *wk = s->workers[w] = alloc_aligned(sizeof(*wk));
		if (!wk)
			return fail(err, errlen, -ENOMEM, "%s", "out of memory");
		wk->t.efd = wk->t.tfd = -1;
		char name[16];
		snprintf(name, sizeof(name), "sym-worker%d", w % 1000);
		if ((rc = thr_init(&wk->t, s, true, name)))
			return fail(err, errlen, rc, "eventfd/timerfd: %s", strerror(-rc));
		wk->w = w;
		wk->nm = s->nmodels > w ? (s->nmodels - w + T - 1) / T : 0;
		wk->shards = calloc(wk->nm ? (size_t)wk->nm : 1, sizeof(*wk->shards));
		wk->in = sym_spsc_create(cap, sizeof(struct in_msg));
		wk->nkinds = K;
		if (!wk->shards || !wk->in || sym_iheap_init(&wk->timers, wk->nm) || emitter_init(&wk->em, s, cap, true))
			return fail(err, errlen, -ENOMEM, "%s", "out of memory");
		for (int k = 0; k < K; k++) {
			wk->down[k] = s->rankers[k]->down[w].q;
			if (outq_init(&wk->up[k], cap, sizeof(struct sym_xmsg)))
				return fail(err, errlen, -ENOMEM, "%s", "out of memory");
		}
		for (int li = 0; li < wk->nm; li++) {
			int m = li * T + w;
			if ((rc = sym_shard_init_kinds(&wk->shards[li], m, &cc->models[m], K, &cc->gather, net)))
				return fail(err, errlen, rc, "model %s: cannot set up its shard", cc->models[m].name ? cc->models[m].name : "?");
			s->model_thr[m] = &wk->t;
		}
		struct sym_models_out mo = { wk, wk_send, wk_dispatch, wk_drop };
		if ((rc = sym_models_init(&wk->ms, wk->shards, wk->nm, T, w, K, &cc->policy, &wk->timers, &mo)) ||
		    (rc = sym_models_set_lookahead(&wk->ms, &la)))
			return fail(err, errlen, rc, "%s", "out of memory");
	}
	s->nrd = T;
	s->rd = calloc((size_t)T, sizeof(*s->rd));
	if (!s->rd)
		return fail(err, errlen, -ENOMEM, "%s", "out of memory");
	for (int w = 0; w < T; w++)
		s->rd[w].q = s->workers[w]->em.out.q;
	return 0;
}

int sym_sched_create(struct sym_sched **out, const struct sym_sched_cfg *cfg, char *err, size_t errlen)
{
	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (cfg->threads < 1 || cfg->threads > MAX_THREADS) {
		if (err && errlen)
			snprintf(err, errlen, "threads must be 1..%d (got %d)", MAX_THREADS, cfg->threads);
		return -EINVAL;
	}
	if (cfg->core.nmodels < 1 || cfg->core.ngpus < 1 || !cfg->core.models || !cfg->core.policy.ops)
		return fail(err, errlen, -EINVAL, "%s", "invalid configuration: needs models, GPUs and a policy");
	size_t cap = cfg->queue_cap ? cfg->queue_cap : DEFAULT_CAP;
	if (cap < 2 || cap > ((size_t)1 << 30))
		return fail(err, errlen, -EINVAL, "%s", "queue_cap must be 2..2^30 elements");
	struct sym_sched *s = alloc_aligned(sizeof(*s));
	if (!s)
		return fail(err, errlen, -ENOMEM, "%s", "out of memory");
	s->threads = cfg->threads;
	s->idle_poll = cfg->idle_poll_ns < 0 ? 0 : cfg->idle_poll_ns ? cfg->idle_poll_ns : IDLE_SPIN_NS;
	s->wake_early = cfg->wake_early_ns < 0 ? 0 : cfg->wake_early_ns ? cfg->wake_early_ns : WAKE_EARLY_NS;
	s->nmodels = cfg->core.nmodels;
	s->ngpus = cfg->core.ngpus;
	s->drv_efd = -1;
	atomic_init(&s->stop, false);
	atomic_init(&s->drv_armed, 1);
	int rc = -ENOMEM;
	s->drv_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->model_worker = calloc((size_t)s->nmodels, sizeof(*s->model_worker));
	s->model_thr = calloc((size_t)s->nmodels, sizeof(*s->model_thr));
	s->off = calloc((size_t)s->ngpus, sizeof(*s->off));
	s->epoch = calloc((size_t)s->ngpus, sizeof(*s->epoch));
	s->gpu_seq = calloc((size_t)s->ngpus, sizeof(*s->gpu_seq));
	s->next_seq = calloc((size_t)s->ngpus, sizeof(*s->next_seq));
	for (int g = 0; s->gpu_seq && g < s->ngpus; g++)
		atomic_init(&s->gpu_seq[g], 0);
	if (s->drv_efd < 0) {
		rc = fail(err, errlen, -errno, "eventfd: %s", strerror(errno));
		goto fail;
	}
	if (!s->model_worker || !s->model_thr || !s->off || !s->epoch || !s->gpu_seq || !s->next_seq) {
		fail(err, errlen, rc, "%s", "out of memory");
		goto fail;
	}
	for (int m = 0; m < s->nmodels; m++)
		s->model_worker[m] = m % s->threads;
	for (int g = 0; g < s->ngpus && cfg->gpus_offline; g++) {
		s->off[g] = true;
		s->epoch[g] = 1;
	}
	struct sym_sched_cfg pcfg;
	if (cfg->core.nparts > 1) { /* the threads see the parts as kinds, as the core does */
		if ((rc = sym_parts_expand(&cfg->core, &s->parts, err, errlen)))
			goto fail;
		if (!(s->base_kind = calloc((size_t)s->ngpus, sizeof(int)))) {
			rc = fail(err, errlen, -ENOMEM, "%s", "out of memory");
			goto fail;
		}
		for (int g = 0; g < s->ngpus; g++)
			s->base_kind[g] = cfg->core.gpu_kind ? cfg->core.gpu_kind[g] : 0;
		pcfg = *cfg;
		pcfg.core = s->parts.cfg;
		cfg = &pcfg;
	}
	rc = s->threads == 1 ? make_solo(s, cfg, cap, err, errlen) : make_split(s, cfg, cap, err, errlen);
	if (rc)
		goto fail;
	for (int i = 0; i < s->nrd; i++) {
		s->rd[i].ids = malloc((size_t)s->maxb * sizeof(uint64_t));
		if (!s->rd[i].ids) {
			rc = fail(err, errlen, -ENOMEM, "%s", "out of memory");
			goto fail;
		}
	}
	s->manual = cfg->manual;
	if (s->manual) {
		*out = s;
		return 0;
	}
	/* Start the threads last: everything they touch exists. */
	struct thr *ts[MAX_THREADS + SYM_MAX_KINDS];
	void *(*fn[MAX_THREADS + SYM_MAX_KINDS])(void *);
	int nt = 0;
	if (s->solo) {
		ts[nt] = &s->solo->t;
		fn[nt++] = solo_main;
	} else {
		for (int k = 0; k < s->nkinds; k++) {
			ts[nt] = &s->rankers[k]->t;
			fn[nt++] = ranker_main;
		}
		for (int w = 0; w < s->threads; w++) {
			ts[nt] = &s->workers[w]->t;
			fn[nt++] = worker_main;
		}
	}
	for (int i = 0; i < nt; i++) {
		void *arg = ts[i]; /* struct thr is the first member of each thread's struct */
		int e = pthread_create(&ts[i]->tid, NULL, fn[i], arg);
		if (e) {
			rc = fail(err, errlen, -e, "pthread_create: %s", strerror(e));
			goto fail;
		}
		ts[i]->started = true;
	}
	*out = s;
	return 0;
fail:
	sym_sched_destroy(s);
	return rc;
}

static void stop_join(struct thr *t)
{
	if (!t || !t->started)
		return;
	efd_write(t->efd);
	pthread_join(t->tid, NULL);
	t->started = false;
}

void sym_sched_destroy(struct sym_sched *s)
{
	if (!s)
		return;
	atomic_store(&s->stop, true);
	if (s->solo)
		stop_join(&s->solo->t);
	if (s->rankers)
		for (int k = 0; k < s->nkinds; k++)
			stop_join(s->rankers[k] ? &s->rankers[k]->t : NULL);
	if (s->workers)
		for (int w = 0; w < s->threads; w++)
			stop_join(s->workers[w] ? &s->workers[w]->t : NULL);
	solo_free(s->solo);
	if (s->workers)
		for (int w = 0; w < s->threads; w++)
			worker_free(s->workers[w]);
	free(s->workers);
	if (s->rankers)
		for (int k = 0; k < s->nkinds; k++)
			ranker_free(s->rankers[k], s->threads);
	free(s->rankers);
	free(s->gpu_kind);
	free(s->base_kind);
	sym_parts_finish(&s->parts);
	if (s->rd)
		for (int i = 0; i < s->nrd; i++)
			free(s->rd[i].ids);
	free(s->rd);
	if (s->drv_efd >= 0)
		close(s->drv_efd);
	free(s->model_worker);
	free(s->model_thr);
	free(s->off);
	free(s->epoch);
	free(s->gpu_seq);
	free(s->next_seq);
	free(s);
}

/* ---- the driver's side ---- */

static struct sym_spsc *in_queue(const struct sym_sched *s, int model)
{
	return s->solo ? s->solo->in : s->workers[s->model_worker[model]]->in;
}

int sym_sched_submit(struct sym_sched *s, const struct sym_sched_req *r)
{
	if (r->model < 0 || r->model >= s->nmodels)
		return -EINVAL;
	struct in_msg m = { .id = r->id, .model = r->model, .type = IN_REQ, .arrival = r->arrival,
			    .deadline = r->deadline };
	if (!sym_spsc_push(in_queue(s, r->model), &m)) {
		s->drv_full++;
		return -EAGAIN;
	}
	s->submitted++;
	wake(s->model_thr[r->model]);
	return 0;
}

int sym_sched_set_kinds_off(struct sym_sched *s, int model, uint32_t kinds_off)
{
	if (model < 0 || model >= s->nmodels)
		return -EINVAL;
	struct in_msg m = { .id = kinds_off, .model = model, .type = IN_MODEL_KINDS };
	if (!sym_spsc_push(in_queue(s, model), &m)) {
		s->drv_full++;
		return -EAGAIN;
	}
	wake(s->model_thr[model]);
	return 0;
}

int sym_sched_set_part(struct sym_sched *s, int model, int part)
{
	if (!s->parts.nparts || part < -1 || part >= s->parts.nparts)
		return -EINVAL;
	return sym_sched_set_kinds_off(s, model, sym_parts_kinds_off(s->parts.nparts, s->parts.nkinds, part));
}

int sym_sched_set_model(struct sym_sched *s, int model, const struct sym_model_cfg *cfg)
{
	if (model < 0 || model >= s->nmodels || !cfg)
		return -EINVAL;
	if (s->parts.nparts) { /* (its slots' profiles and kinds_off, kept here until the thread reads them) */
		if (sym_parts_model(cfg, s->parts.nparts, s->parts.nkinds, &s->parts.models[model]))
			return -EINVAL;
		cfg = &s->parts.models[model];
	}
	struct in_msg m = { .id = (uint64_t)(uintptr_t)cfg, .model = model, .type = IN_MODEL_SET };
	if (!sym_spsc_push(in_queue(s, model), &m)) {
		s->drv_full++;
		return -EAGAIN;
	}
	wake(s->model_thr[model]);
	return 0;
}

int sym_sched_set_slo(struct sym_sched *s, int model, sym_time slo)
{
	if (model < 0 || model >= s->nmodels || slo <= 0)
		return -EINVAL;
	struct in_msg m = { .id = (uint64_t)slo, .model = model, .type = IN_MODEL_SLO };
	if (!sym_spsc_push(in_queue(s, model), &m)) {
		s->drv_full++;
		return -EAGAIN;
	}
	wake(s->model_thr[model]);
	return 0;
}

int sym_sched_restart_arrivals(struct sym_sched *s, int model)
{
	if (model < 0 || model >= s->nmodels)
		return -EINVAL;
	struct in_msg m = { .model = model, .type = IN_MODEL_RESTART };
	if (!sym_spsc_push(in_queue(s, model), &m)) {
		s->drv_full++;
		return -EAGAIN;
	}
	wake(s->model_thr[model]);
	return 0;
}

static int gpu_msg(struct sym_sched *s, int g, int type, uint32_t epoch, sym_time start, sym_time end)
{
	struct in_msg m = { .id = (uint64_t)g, .model = (int32_t)epoch, .type = type, .arrival = start, .deadline = end };
	struct ranker *r = s->solo ? NULL : s->rankers[s->gpu_kind[g]];
	struct sym_spsc *q = s->solo ? s->solo->in : r->gpu;
	if (!sym_spsc_push(q, &m)) {
		s->drv_full++;
		return -EAGAIN;
	}
	wake(s->solo ? &s->solo->t : &r->t);
	return 0;
}

int sym_sched_gpu_done(struct sym_sched *s, int g, sym_time start, sym_time end, bool rejected)
{
	if (g < 0 || g >= s->ngpus)
		return -EINVAL;
	if (s->off[g])
		return 0;
	return gpu_msg(s, g, IN_GPU_FREE, rejected, start, end);
}

int sym_sched_gpu_free(struct sym_sched *s, int g)
{
	sym_time now = sym_monotonic_ns();
	return sym_sched_gpu_done(s, g, now, now, false);
}

/* kind >= 0: an offline GPU comes online as one of that kind's (the new
 * kind's ranker gets the ONLINE; the old one's keeps it offline). */
static int gpu_state(struct sym_sched *s, int g, bool off, int kind)
{
	if (g < 0 || g >= s->ngpus || kind >= s->nkinds)
		return -EINVAL;
	if (s->off[g] == off)
		return kind >= 0 ? -EBUSY : 0;
	/* (split: the driver's own map, which gpu_msg routes by; solo: the core's, changed on its
	 * thread with the ONLINE) */
	int old = s->solo ? 0 : s->gpu_kind[g];
	if (kind >= 0 && !s->solo)
		s->gpu_kind[g] = kind;
	int rc = gpu_msg(s, g, off ? IN_GPU_OFFLINE : IN_GPU_ONLINE, s->epoch[g] + 1, kind + 1, 0);
	if (rc) {
		if (!s->solo)
			s->gpu_kind[g] = old;
		return rc;
	}
	s->off[g] = off;
	s->epoch[g]++;
	return 0;
}

int sym_sched_gpu_offline(struct sym_sched *s, int g) { return gpu_state(s, g, true, -1); }

int sym_sched_gpu_online(struct sym_sched *s, int g) { return gpu_state(s, g, false, -1); }

int sym_sched_gpu_online_kind(struct sym_sched *s, int g, int kind)
{
	return kind < 0 ? -EINVAL : gpu_state(s, g, false, kind);
}

int sym_sched_gpu_online_part(struct sym_sched *s, int g, int part)
{
	if (!s->parts.nparts || part < 0 || part >= s->parts.nparts || g < 0 || g >= s->ngpus)
		return -EINVAL;
	return gpu_state(s, g, false, sym_parts_slot(s->parts.nkinds, part, s->base_kind[g]));
}

/* Delivers a complete dispatch (or its requests as drops when it was
 * decided before the driver's latest offline/online of its GPU). */
static void deliver(struct sym_sched *s, struct reader *rd, const struct sym_sched_out *out)
{
	const struct out_head *h = &rd->h;
	if (h->epoch != s->epoch[h->gpu]) {
		s->lost_batches++;
		s->lost_reqs += (uint64_t)h->size;
		if (out->drop)
			for (int i = 0; i < h->size; i++)
				out->drop(out->ctx, rd->ids[i], h->model, SYM_DROP_EXPIRED, h->now);
		return;
	}
	if (!out->dispatch)
		return;
	struct sym_sched_dispatch d = { .model = h->model, .gpu = h->gpu, .size = h->size, .now = h->now,
					.start = h->start, .finish = h->finish, .reject_after = h->reject_after,
					.ids = rd->ids };
	out->dispatch(out->ctx, &d);
}

/* Takes the ids of rd's partial dispatch. Returns whether all are there. */
static bool read_ids(struct reader *rd)
{
	union out_elem e;
	while (rd->got < rd->h.size) {
		if (!sym_spsc_pop(rd->q, &e))
			return false;
		int n = rd->h.size - rd->got < SYM_SCHED_IDS ? rd->h.size - rd->got : SYM_SCHED_IDS;
		memcpy(rd->ids + rd->got, e.ids, (size_t)n * sizeof(uint64_t));
		rd->got += n;
	}
	return true;
}

/* Delivers up to max of rd's decisions; a complete dispatch whose GPU has an
 * earlier dispatch not yet delivered stays in rd until it has (and sets
 * *held). Returns how many were delivered. */
static size_t drain(struct sym_sched *s, struct reader *rd, const struct sym_sched_out *out, size_t max,
		    bool *held)
{
	size_t done = 0;
	while (done < max) {
		if (rd->partial) {
			if (!read_ids(rd))
				break; /* the rest is on its way */
			if (rd->h.id != s->next_seq[rd->h.gpu]) {
				*held = true; /* the GPU's earlier batch is in another queue */
				break;
			}
			s->next_seq[rd->h.gpu]++;
			rd->partial = false;
			deliver(s, rd, out);
			done++;
			continue;
		}
		union out_elem e;
		if (!sym_spsc_pop(rd->q, &e))
			break;
		if (e.h.type == OUT_MOVED) {
			if (out->moved)
				out->moved(out->ctx, e.h.model, e.h.why);
			done++;
			continue;
		}
		if (e.h.type == OUT_DROP) {
			if (out->drop)
				out->drop(out->ctx, e.h.id, e.h.model, (enum sym_drop_reason)e.h.why, e.h.now);
			done++;
			continue;
		}
		rd->h = e.h;
		rd->got = 0;
		rd->partial = true;
	}
	return done;
}

static bool queues_empty(const struct sym_sched *s)
{
	for (int i = 0; i < s->nrd; i++)
		if (sym_spsc_size(s->rd[i].q) > 0)
			return false;
	return true;
}

size_t sym_sched_poll(struct sym_sched *s, const struct sym_sched_out *out, size_t max)
{
	size_t done = 0;
	/* again while a pass held a dispatch and delivered something: the dispatch held for its
	 * GPU's earlier one (in another queue, later in the pass) goes out in the same poll */
	bool held = true;
	for (size_t before = SIZE_MAX; held && done < max && done != before;) {
		before = done;
		held = false;
		for (int i = 0; i < s->nrd && done < max; i++)
			done += drain(s, &s->rd[(s->rd_next + i) % s->nrd], out, max - done, &held);
	}
	s->rd_next = s->nrd > 1 ? (s->rd_next + 1) % s->nrd : 0;
	if (done < max && !atomic_load_explicit(&s->drv_armed, memory_order_relaxed)) {
		/* Everything is drained and a scheduler thread signalled since the
		 * last arming: clear the eventfd and arm again. A decision that
		 * came in between re-signals itself. */
		efd_drain(s->drv_efd);
		atomic_store_explicit(&s->drv_armed, 1, memory_order_relaxed);
		full_fence();
		if (!queues_empty(s) && atomic_exchange_explicit(&s->drv_armed, 0, memory_order_relaxed))
			efd_write(s->drv_efd);
	}
	return done;
}

int sym_sched_fd(const struct sym_sched *s) { return s->drv_efd; }

void sym_sched_step(struct sym_sched *s, sym_time now)
{
	if (!s->manual)
		return;
	for (;;) {
		int n;
		do {
			n = 0;
			if (s->solo)
				n += solo_step(s->solo, now, false);
			for (int w = 0; s->workers && w < s->threads; w++)
				n += worker_step(s->workers[w], now, false);
			for (int k = 0; s->rankers && k < s->nkinds; k++) {
				bool backlog;
				n += ranker_step(s->rankers[k], now, false, &backlog);
			}
		} while (n);
		/* settled: look-ahead plans (as the single-threaded core does) */
		int k = 0;
		while (s->rankers && k < s->nkinds && !ranker_settle(s->rankers[k], now))
			k++;
		if (!s->rankers || k == s->nkinds)
			break;
	}
}

sym_time sym_sched_next_wakeup(const struct sym_sched *s)
{
	sym_time t = SYM_TIME_NEVER;
	if (s->solo)
		t = sym_core_next_wakeup(s->solo->core);
	for (int w = 0; s->workers && w < s->threads; w++) {
		sym_time x = wk_next_wakeup(s->workers[w]);
		t = x < t ? x : t;
	}
	for (int k = 0; s->rankers && k < s->nkinds; k++) {
		sym_time x = sym_ranker_next_wakeup(&s->rankers[k]->rk);
		t = x < t ? x : t;
	}
	return t;
}

static uint64_t sum(const struct sym_sched *s, size_t off)
{
	uint64_t n = 0;
	if (s->solo)
		n += atomic_load_explicit((atomic_uint_fast64_t *)((char *)&s->solo->em.ctr + off), memory_order_relaxed);
	for (int w = 0; s->workers && w < s->threads; w++)
		n += atomic_load_explicit((atomic_uint_fast64_t *)((char *)&s->workers[w]->em.ctr + off),
					  memory_order_relaxed);
	return n;
}

uint64_t sym_sched_pending(const struct sym_sched *s)
{
	uint64_t decided = sum(s, offsetof(struct ctr, reqs)) + sum(s, offsetof(struct ctr, drops));
	return s->submitted > decided ? s->submitted - decided : 0;
}

void sym_sched_stats(const struct sym_sched *s, struct sym_sched_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->submitted = s->submitted;
	out->dispatches = sum(s, offsetof(struct ctr, dispatches)) - s->lost_batches;
	out->dispatched_reqs = sum(s, offsetof(struct ctr, reqs)) - s->lost_reqs;
	out->drops = sum(s, offsetof(struct ctr, drops)) + s->lost_reqs;
	out->queue_full = s->drv_full + sum(s, offsetof(struct ctr, queue_full));
	for (int k = 0; s->rankers && k < s->nkinds; k++)
		out->queue_full += atomic_load_explicit(&s->rankers[k]->queue_full, memory_order_relaxed);
	/* The lag histograms of the timer threads, merged. */
	struct sym_hist h;
	sym_hist_init(&h);
	h.counts = calloc(SYM_HIST_BUCKETS, sizeof(*h.counts));
	const struct ctr *cs[MAX_THREADS];
	int nc = 0;
	if (s->solo)
		cs[nc++] = &s->solo->em.ctr;
	for (int w = 0; s->workers && w < s->threads; w++)
		cs[nc++] = &s->workers[w]->em.ctr;
	for (int i = 0; i < nc; i++) {
		sym_time mx = atomic_load_explicit(&cs[i]->lag_max, memory_order_relaxed);
		if (mx > h.max)
			h.max = mx;
		for (int b = 0; h.counts && b < SYM_HIST_BUCKETS; b++) {
			uint32_t v = atomic_load_explicit(&cs[i]->lag[b], memory_order_relaxed);
			h.counts[b] += v;
			h.n += v;
		}
	}
	out->lag_max = h.max;
	out->lag_p99 = h.counts ? sym_hist_quantile(&h, 0.99) : 0;
	sym_hist_finish(&h);
}
