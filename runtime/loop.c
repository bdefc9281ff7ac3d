/* runtime/loop.c - the runtime processes' event loop (see loop.h). */
#define _GNU_SOURCE
#include "runtime/loop.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "runtime/executor.h"
#include "runtime/fabric.h"
#include "runtime/http.h"

#define MAX_EVENTS 64 /* epoll events per wait */
#define FAB_BATCH 64  /* fabric events per poll */

/* What an epoll event's data.ptr points at. */
enum kind { K_IO, K_TIMER, K_TIMERFD, K_FAB, K_HTTP };
#define LOOP_HTTP_MAX 2 /* HTTP servers on one loop: the API, and /metrics on a listener of its own */

struct handle {
	enum kind kind;
	bool closing;
	struct handle *next_closing;
	struct handle *prev, *next; /* every open or closing io and timer, for destroy */
	sym_loop_close_cb close_cb;
	void *close_ctx;
};

struct sym_loop_io {
	struct handle h;
	struct sym_loop *l;
	int fd;
	uint32_t events;
	sym_loop_io_cb cb;
	void *ctx;
};

struct sym_loop_timer {
	struct handle h;
	struct sym_loop *l;
	sym_time due, period;
	uint64_t seq;  /* when it was set: orders equal due times */
	int idx;       /* in the heap, -1 when not set */
	bool firing;   /* due in this turn's timer phase, not yet fired */
	struct sym_loop_timer *next_fire;
	sym_loop_timer_cb cb;
	void *ctx;
};

struct fab_closing {
	struct sym_fab_conn *c;
	sym_loop_close_cb cb;
	void *ctx;
};

struct sym_loop {
	int ep, tfd;
	sym_time now;
	sym_time armed; /* the timerfd's expiry, -1: none */
	bool stop;
	volatile sig_atomic_t *stop_flag;
	int err;
	char errmsg[256];
	struct handle all;          /* list head of every io and timer */
	struct handle *closing;     /* io and timers closed in this turn */
	struct handle tfd_h, fab_h, http_h[LOOP_HTTP_MAX];
	/* timers: a binary heap on (due, seq) */
	struct sym_loop_timer **heap; /* room for every timer: setting one never fails */
	int nheap, capheap, ntimers;
	uint64_t seq;
	/* the fabric */
	struct sym_fab *fab;
	sym_loop_fab_cb fab_cb;
	void *fab_ctx;
	struct sym_fab_event *fev;
	sym_time fab_at;            /* when its last poll began */
	struct fab_closing *fclose; /* connections closed in this turn */
	int nfclose, capfclose;
	bool fab_dropped;           /* out of memory: the fabric's events of this turn are dropped */
	/* the HTTP servers (an API and a metrics listener) */
	struct sym_http *http[LOOP_HTTP_MAX];
	int nhttp;
	sym_time http_due[LOOP_HTTP_MAX];
};

static int fail(struct sym_loop *l, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct sym_loop *l, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->errmsg, sizeof(l->errmsg), fmt, ap);
	va_end(ap);
	l->err = rc;
	return rc;
}

int sym_loop_create(struct sym_loop **out, char *err, size_t errlen)
{
	*out = NULL;
	struct sym_loop *l = calloc(1, sizeof(*l));
	if (!l)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	l->all.next = l->all.prev = &l->all;
	l->tfd_h.kind = K_TIMERFD;
	l->fab_h.kind = K_FAB;
	for (int i = 0; i < LOOP_HTTP_MAX; i++) {
		l->http_h[i].kind = K_HTTP;
		l->http_due[i] = SYM_TIME_NEVER;
	}
	l->armed = -1;
	l->now = sym_monotonic_ns();
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &l->tfd_h };
	if (l->ep < 0 || l->tfd < 0 || epoll_ctl(l->ep, EPOLL_CTL_ADD, l->tfd, &ev)) {
		int rc = -errno;
		snprintf(err, errlen, "event loop: %s", strerror(errno));
		if (l->ep >= 0)
			close(l->ep);
		if (l->tfd >= 0)
			close(l->tfd);
		free(l);
		return rc;
	}
	*out = l;
	return 0;
}

static void link_handle(struct sym_loop *l, struct handle *h, enum kind kind)
{
	h->kind = kind;
	h->next = l->all.next;
	h->prev = &l->all;
	l->all.next->prev = h;
	l->all.next = h;
}

static void free_handle(struct sym_loop *l, struct handle *h)
{
	if (h->kind == K_TIMER)
		l->ntimers--;
	h->prev->next = h->next;
	h->next->prev = h->prev;
	free(h);
}

static void mark_closing(struct sym_loop *l, struct handle *h, sym_loop_close_cb cb, void *ctx)
{
	h->closing = true;
	h->close_cb = cb;
	h->close_ctx = ctx;
	h->next_closing = l->closing;
	l->closing = h;
}

/* ---- the timer heap ---- */

static bool before(const struct sym_loop_timer *a, const struct sym_loop_timer *b)
{
	return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void heap_put(struct sym_loop *l, int i, struct sym_loop_timer *t)
{
	l->heap[i] = t;
	t->idx = i;
}

static void sift_up(struct sym_loop *l, int i)
{
	struct sym_loop_timer *t = l->heap[i];
	while (i > 0 && before(t, l->heap[(i - 1) / 2])) {
		heap_put(l, i, l->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_put(l, i, t);
}

static void sift_down(struct sym_loop *l, int i)
{
	struct sym_loop_timer *t = l->heap[i];
	for (;;) {
		int c = 2 * i + 1;
		if (c >= l->nheap)
			break;
		if (c + 1 < l->nheap && before(l->heap[c + 1], l->heap[c]))
			c++;
		if (!before(l->heap[c], t))
			break;
		heap_put(l, i, l->heap[c]);
		i = c;
	}
	heap_put(l, i, t);
}

static void heap_remove(struct sym_loop *l, struct sym_loop_timer *t)
{
	int i = t->idx;
	if (i < 0)
		return;
	t->idx = -1;
	struct sym_loop_timer *last = l->heap[--l->nheap];
	if (i == l->nheap)
		return;
	heap_put(l, i, last);
	sift_up(l, i);
	sift_down(l, last->idx);
}

int sym_loop_timer_new(struct sym_loop *l, sym_loop_timer_cb cb, void *ctx, struct sym_loop_timer **out)
{
	*out = NULL;
	if (l->ntimers == l->capheap) {
		int cap = l->capheap ? 2 * l->capheap : 16;
		struct sym_loop_timer **h = realloc(l->heap, (size_t)cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		l->heap = h;
		l->capheap = cap;
	}
	struct sym_loop_timer *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->l = l;
	t->idx = -1;
	t->due = SYM_TIME_NEVER;
	t->cb = cb;
	t->ctx = ctx;
	link_handle(l, &t->h, K_TIMER);
	l->ntimers++;
	*out = t;
	return 0;
}

void sym_loop_timer_stop(struct sym_loop_timer *t)
{
	heap_remove(t->l, t);
	t->firing = false;
	t->due = SYM_TIME_NEVER;
}

void sym_loop_timer_set(struct sym_loop_timer *t, sym_time due, sym_time period)
{
	struct sym_loop *l = t->l;
	if (t->h.closing)
		return;
	heap_remove(l, t);
	t->firing = false;
	t->due = due;
	t->period = period > 0 ? period : 0;
	t->seq = ++l->seq;
	heap_put(l, l->nheap++, t);
	sift_up(l, t->idx);
}

bool sym_loop_timer_armed(const struct sym_loop_timer *t)
{
	return t->idx >= 0 || t->firing;
}

sym_time sym_loop_timer_due(const struct sym_loop_timer *t)
{
	return sym_loop_timer_armed(t) ? t->due : SYM_TIME_NEVER;
}

void sym_loop_timer_close(struct sym_loop_timer *t, sym_loop_close_cb close_cb, void *close_ctx)
{
	if (t->h.closing)
		return;
	sym_loop_timer_stop(t);
	mark_closing(t->l, &t->h, close_cb, close_ctx);
}

/* Fires the timers due now, earliest first. Those set again by a callback
 * (a repeating one included) wait for the next turn. */
static void run_timers(struct sym_loop *l)
{
	l->now = sym_monotonic_ns();
	struct sym_loop_timer *first = NULL, **tail = &first;
	while (l->nheap && l->heap[0]->due <= l->now) {
		struct sym_loop_timer *t = l->heap[0];
		heap_remove(l, t);
		t->firing = true;
		t->next_fire = NULL;
		*tail = t;
		tail = &t->next_fire;
	}
	for (struct sym_loop_timer *t = first; t; t = t->next_fire) {
		if (!t->firing) /* stopped, set again or closed by an earlier callback */
			continue;
		t->firing = false;
		if (t->period) {
			sym_time next = t->due + t->period;
			sym_loop_timer_set(t, next > l->now ? next : l->now + t->period, t->period);
		} else {
			t->due = SYM_TIME_NEVER;
		}
		t->cb(t, t->ctx);
	}
}

/* Arms the timerfd for the nearest timer; returns that time. */
static sym_time arm_timerfd(struct sym_loop *l)
{
	sym_time due = l->nheap ? l->heap[0]->due : SYM_TIME_NEVER;
	if (due == l->armed || due <= l->now || due == SYM_TIME_NEVER)
		return due; /* already armed, due (no sleep), or none (a stale expiry only wakes the loop once) */
	struct itimerspec its = { 0 };
	its.it_value.tv_sec = due / SYM_S;
	its.it_value.tv_nsec = due % SYM_S;
	if (timerfd_settime(l->tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		l->armed = due;
	return due;
}

/* ---- descriptors ---- */

int sym_loop_io_start(struct sym_loop *l, int fd, uint32_t events, sym_loop_io_cb cb, void *ctx,
		      struct sym_loop_io **out)
{
	*out = NULL;
	struct sym_loop_io *io = calloc(1, sizeof(*io));
	if (!io)
		return -ENOMEM;
	io->l = l;
	io->fd = fd;
	io->events = events;
	io->cb = cb;
	io->ctx = ctx;
	struct epoll_event ev = { .events = events, .data.ptr = io };
	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev)) {
		int rc = -errno;
		free(io);
		return rc;
	}
	link_handle(l, &io->h, K_IO);
	*out = io;
	return 0;
}

int sym_loop_io_modify(struct sym_loop_io *io, uint32_t events)
{
	if (io->h.closing || io->events == events)
		return 0;
	struct epoll_event ev = { .events = events, .data.ptr = io };
	if (epoll_ctl(io->l->ep, EPOLL_CTL_MOD, io->fd, &ev))
		return -errno;
	io->events = events;
	return 0;
}

uint32_t sym_loop_io_events(const struct sym_loop_io *io)
{
	return io->events;
}

int sym_loop_io_fd(const struct sym_loop_io *io)
{
	return io->fd;
}

void sym_loop_io_close(struct sym_loop_io *io, sym_loop_close_cb close_cb, void *close_ctx)
{
	if (io->h.closing)
		return;
	epoll_ctl(io->l->ep, EPOLL_CTL_DEL, io->fd, NULL);
	mark_closing(io->l, &io->h, close_cb, close_ctx);
}

/* ---- the fabric ---- */

int sym_loop_fab(struct sym_loop *l, struct sym_fab *f, sym_loop_fab_cb cb, void *ctx)
{
	if (l->fab)
		return -EBUSY;
	l->fev = calloc(FAB_BATCH, sizeof(*l->fev));
	if (!l->fev)
		return -ENOMEM;
	int fd = sym_fab_fd(f);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &l->fab_h };
	if (fd >= 0 && epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev)) {
		int rc = -errno;
		free(l->fev);
		l->fev = NULL;
		return rc;
	}
	l->fab = f;
	l->fab_cb = cb;
	l->fab_ctx = ctx;
	return 0;
}

static bool conn_closing(const struct sym_loop *l, const struct sym_fab_conn *c)
{
	for (int i = 0; i < l->nfclose; i++)
		if (l->fclose[i].c == c)
			return true;
	return false;
}

void sym_loop_fab_close(struct sym_loop *l, struct sym_fab_conn *c, sym_loop_close_cb close_cb, void *close_ctx)
{
	if (conn_closing(l, c))
		return;
	if (l->nfclose == l->capfclose) {
		int cap = l->capfclose ? 2 * l->capfclose : 16;
		struct fab_closing *fc = realloc(l->fclose, (size_t)cap * sizeof(*fc));
		if (!fc) {
			sym_fab_close(c);
			l->fab_dropped = true;
			fail(l, -ENOMEM, "out of memory while closing a connection");
			if (close_cb)
				close_cb(close_ctx);
			return;
		}
		l->fclose = fc;
		l->capfclose = cap;
	}
	l->fclose[l->nfclose++] = (struct fab_closing){ c, close_cb, close_ctx };
}

/* Polls the fabric until it has no more events and delivers them. */
static int fab_events(struct sym_loop *l)
{
	int n;
	l->fab_at = sym_monotonic_ns();
	do {
		n = sym_fab_poll(l->fab, l->fev, FAB_BATCH);
		if (n < 0)
			return fail(l, n, "fabric failure: %s", sym_fab_last_error(l->fab));
		for (int i = 0; i < n && !l->fab_dropped; i++)
			if (!l->nfclose || !conn_closing(l, l->fev[i].conn))
				l->fab_cb(l->fab_ctx, &l->fev[i]);
	} while (n == FAB_BATCH && !l->fab_dropped);
	return 0;
}

/* ---- the HTTP server ---- */

int sym_loop_http(struct sym_loop *l, struct sym_http *h)
{
	for (int i = 0; i < l->nhttp; i++)
		if (l->http[i] == h)
			return -EEXIST;
	if (l->nhttp == LOOP_HTTP_MAX)
		return -EBUSY;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &l->http_h[l->nhttp] };
	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, sym_http_fd(h), &ev))
		return -errno;
	l->http[l->nhttp++] = h;
	return 0;
}

/* ---- turns ---- */

static void run_closing(struct sym_loop *l)
{
	while (l->closing || l->nfclose) {
		for (int i = 0; i < l->nfclose; i++) { /* a close callback may append */
			struct fab_closing fc = l->fclose[i];
			sym_fab_close(fc.c);
			if (fc.cb)
				fc.cb(fc.ctx);
		}
		l->nfclose = 0;
		while (l->closing) {
			struct handle *h = l->closing;
			l->closing = h->next_closing;
			if (h->close_cb)
				h->close_cb(h->close_ctx);
			free_handle(l, h);
		}
	}
	l->fab_dropped = false;
}

static bool stopping(const struct sym_loop *l)
{
	return l->stop || (l->stop_flag && *l->stop_flag);
}

static int min_ms(int a, int b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

/* How long the next wait may sleep (ms, -1: until an event). */
static int wait_ms(struct sym_loop *l)
{
	l->now = sym_monotonic_ns();
	sym_time due = arm_timerfd(l);
	int ms = due <= l->now ? 0 : -1; /* else the timerfd wakes us */
	for (int i = 0; i < l->nhttp; i++) {
		l->http_due[i] = SYM_TIME_NEVER;
		int ht = sym_http_timeout_ms(l->http[i]);
		if (ht >= 0)
			l->http_due[i] = l->now + ht * SYM_MS;
		ms = min_ms(ms, ht);
	}
	if (ms && l->fab) /* last: nothing may touch the fabric between trywait and the wait */
		ms = sym_fab_fd(l->fab) < 0 ? min_ms(ms, 1) : sym_fab_trywait(l->fab) ? ms : 0;
	return ms;
}

static void dispatch(struct sym_loop *l, const struct epoll_event *ev, bool *http_ready /* [LOOP_HTTP_MAX] */)
{
	struct handle *h = ev->data.ptr;
	switch (h->kind) {
	case K_IO: {
		struct sym_loop_io *io = (struct sym_loop_io *)h;
		if (!h->closing)
			io->cb(io, ev->events, io->ctx);
		break;
	}
	case K_TIMERFD: {
		uint64_t v;
		if (read(l->tfd, &v, sizeof(v)) < 0) /* EAGAIN: set again since it expired */
			v = 0;
		l->armed = -1; /* expired: it does not fire again for the same time */
		break;
	}
	case K_HTTP:
		http_ready[h - l->http_h] = true;
		break;
	default: /* the fabric: polled every turn */
		break;
	}
}

static int turn(struct sym_loop *l)
{
	run_closing(l); /* what was closed between runs */
	int timeout = wait_ms(l);
	struct epoll_event evs[MAX_EVENTS];
	int n = epoll_wait(l->ep, evs, MAX_EVENTS, timeout);
	if (n < 0 && errno != EINTR)
		return fail(l, -errno, "epoll_wait: %s", strerror(errno));
	l->now = sym_monotonic_ns();
	bool http_ready[LOOP_HTTP_MAX] = { false };
	for (int i = 0; i < n; i++)
		dispatch(l, &evs[i], http_ready);
	int rc = l->fab ? fab_events(l) : 0;
	for (int i = 0; !rc && i < l->nhttp; i++)
		if (http_ready[i] || l->now >= l->http_due[i])
			sym_http_run(l->http[i]);
	if (!rc)
		run_timers(l);
	run_closing(l);
	return rc ? rc : l->err;
}

int sym_loop_run(struct sym_loop *l)
{
	l->err = 0;
	while (!stopping(l)) {
		int rc = turn(l);
		if (rc)
			return rc;
	}
	l->stop = false;
	return 0;
}

void sym_loop_stop(struct sym_loop *l)
{
	l->stop = true;
}

void sym_loop_stop_on(struct sym_loop *l, volatile sig_atomic_t *flag)
{
	l->stop_flag = flag;
}

sym_time sym_loop_now(const struct sym_loop *l)
{
	return l->now;
}

sym_time sym_loop_fab_time(const struct sym_loop *l)
{
	return l->fab_at ? l->fab_at : l->now;
}

const char *sym_loop_error(const struct sym_loop *l)
{
	return l->errmsg;
}

void sym_loop_destroy(struct sym_loop *l)
{
	if (!l)
		return;
	run_closing(l);
	while (l->all.next != &l->all)
		free_handle(l, l->all.next);
	free(l->heap);
	free(l->fev);
	free(l->fclose);
	close(l->tfd);
	close(l->ep);
	free(l);
}
