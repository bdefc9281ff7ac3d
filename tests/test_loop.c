/* tests/test_loop.c - the runtime's event loop (runtime/loop.h).
 *
 *   - timers fire in order of their times (equal times in the order set), not before their
 *     time and not much after; a repeating timer keeps its period; stopping, setting again
 *     and closing a timer from a callback, also one due in the same turn;
 *   - descriptors: a pipe and an eventfd wake the loop with EPOLLIN, EPOLLOUT after a modify;
 *   - deferred close: a callback that closes another handle ready in the same turn means that
 *     handle's callback never runs; each close callback runs exactly once (closing twice, from
 *     its own callback, from a close callback); the loop never closes a descriptor;
 *   - the fabric: events of a connection closed by a callback are not delivered, even those of
 *     the same poll, and its close callback runs once;
 *   - HTTP: a POST of 220 KB (read by libmicrohttpd over several passes, the later ones asked for
 *     only by its timeout) is answered at once, and the loop idles at low CPU;
 *   - stop: sym_loop_stop from a callback, and the stop flag; the loop runs again after.
 * Every wait is bounded by a deadline timer, so nothing can hang.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/executor.h"
#include "runtime/fabric.h"
#include "runtime/http.h"
#include "runtime/loop.h"
#include "tests/testutil.h"

#define DEADLINE (5 * SYM_S)
/* how late a timer may fire on a busy shared machine, which stalls processes for tens of ms
 * (idle, they fire within microseconds) */
#define LATE_MAX (100 * SYM_MS)

static struct sym_loop *new_loop(void)
{
	struct sym_loop *l;
	char err[256];
	int rc = sym_loop_create(&l, err, sizeof(err));
	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	return l;
}

/* ---- timers ---- */

struct fired {
	struct sym_loop *l;
	int order[16];
	sym_time at[16];
	int n, stop_after;
};

struct tctx {
	struct fired *f;
	int id;
};

static void on_timer(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	struct tctx *c = ctx;
	struct fired *f = c->f;
	if (f->n < 16) {
		f->order[f->n] = c->id;
		f->at[f->n] = sym_monotonic_ns();
	}
	if (++f->n == f->stop_after)
		sym_loop_stop(f->l);
}

static struct sym_loop_timer *new_timer(struct sym_loop *l, sym_loop_timer_cb cb, void *ctx)
{
	struct sym_loop_timer *t;
	assert_int_equal(sym_loop_timer_new(l, cb, ctx, &t), 0);
	assert_false(sym_loop_timer_armed(t));
	return t;
}

static void stop_loop(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	sym_loop_stop(ctx);
}

/* A timer at now + DEADLINE that stops the loop: the test's bound. */
static struct sym_loop_timer *deadline(struct sym_loop *l)
{
	struct sym_loop_timer *t = new_timer(l, stop_loop, l);
	sym_loop_timer_set(t, sym_monotonic_ns() + DEADLINE, 0);
	return t;
}

static void test_timers_in_order(void **state)
{
	(void)state;
	struct sym_loop *l = new_loop();
	struct fired f = { .l = l, .stop_after = 5 };
	struct tctx c[5];
	/* due in ms: 30, 10, 20, 10 (set after the other 10: fires after it), 0 (already due) */
	const int due_ms[5] = { 30, 10, 20, 10, 0 }, want[5] = { 4, 1, 3, 2, 0 };
	sym_time t0 = sym_monotonic_ns();
	for (int i = 0; i < 5; i++) {
		c[i] = (struct tctx){ &f, i };
		struct sym_loop_timer *t = new_timer(l, on_timer, &c[i]);
		sym_loop_timer_set(t, t0 + due_ms[i] * SYM_MS, 0);
		assert_true(sym_loop_timer_armed(t));
		assert_int_equal(sym_loop_timer_due(t), t0 + due_ms[i] * SYM_MS);
	}
	deadline(l);
	assert_int_equal(sym_loop_run(l), 0);
	assert_int_equal(f.n, 5);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(f.order[i], want[i]);
		sym_time due = t0 + due_ms[want[i]] * SYM_MS, late = f.at[i] - due;
		if (late < 0 || late > LATE_MAX)
			fail_msg("timer %d (due at +%d ms) fired %.3f ms after its time", want[i], due_ms[want[i]],
				 sym_to_ms(late));
	}
	sym_loop_destroy(l);
}

struct rep {
	struct sym_loop *l;
	struct sym_loop_timer *other; /* stopped by the 1st firing */
	int n;
	sym_time t0;
	sym_time early; /* the earliest a firing came before its time (0: none) */
	sym_time last;
};

static void on_repeat(struct sym_loop_timer *t, void *ctx)
{
	struct rep *r = ctx;
	sym_time now = sym_monotonic_ns();
	r->n++;
	if (r->t0 + r->n * 5 * SYM_MS - now > r->early) /* firing n is due at t0 + 5n ms */
		r->early = r->t0 + r->n * 5 * SYM_MS - now;
	r->last = now;
	assert_true(sym_loop_timer_armed(t)); /* set again before its callback */
	if (r->n == 1)
		sym_loop_timer_stop(r->other);
	if (r->n == 20) {
		sym_loop_timer_stop(t);
		sym_loop_stop(r->l);
	}
}

static void must_not_fire(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	(void)ctx;
	fail_msg("a stopped or closed timer fired");
}

/* A 5 ms period: 20 firings, at 5, 10, ..., 100 ms; a timer stopped by a callback does not fire. */
static void test_repeating(void **state)
{
	(void)state;
	struct sym_loop *l = new_loop();
	struct rep r = { .l = l };
	struct sym_loop_timer *t = new_timer(l, on_repeat, &r);
	r.other = new_timer(l, must_not_fire, NULL);
	sym_time t0 = r.t0 = sym_monotonic_ns();
	sym_loop_timer_set(t, t0 + 5 * SYM_MS, 5 * SYM_MS);
	/* after the 1st firing at 5 ms: it does not fire even when the machine stalls the loop
	 * past both times (they fire in one turn, in order of their times) */
	sym_loop_timer_set(r.other, t0 + 7 * SYM_MS, 0);
	deadline(l);
	assert_int_equal(sym_loop_run(l), 0);
	assert_int_equal(r.n, 20);
	assert_false(sym_loop_timer_armed(t));
	assert_false(sym_loop_timer_armed(r.other));
	/* none early; periods are kept from the first due time, so the 20th is due at 100 ms */
	if (r.early > 0)
		fail_msg("a firing came %.3f ms before its time", sym_to_ms(r.early));
	if (r.last - t0 > 100 * SYM_MS + LATE_MAX)
		fail_msg("the 20th firing, due at 100 ms, came at %.3f ms", sym_to_ms(r.last - t0));
	sym_loop_destroy(l);
}

/* Timers due in the same turn: the first stops one, sets one later, and closes one; only the
 * closed one's close callback runs, once. */
struct same_turn {
	struct sym_loop *l;
	struct sym_loop_timer *stopped, *later, *closed;
	int fired_first, fired_later, closes;
};

static void count_close(void *ctx)
{
	(*(int *)ctx)++;
}

static void on_first(struct sym_loop_timer *t, void *ctx)
{
	struct same_turn *s = ctx;
	s->fired_first++;
	sym_loop_timer_stop(s->stopped);
	sym_loop_timer_set(s->later, sym_monotonic_ns() + 10 * SYM_MS, 0);
	sym_loop_timer_close(s->closed, count_close, &s->closes);
	sym_loop_timer_close(s->closed, count_close, &s->closes); /* twice: nothing more */
	assert_false(sym_loop_timer_armed(s->closed));
	(void)t;
}

static void on_later(struct sym_loop_timer *t, void *ctx)
{
	struct same_turn *s = ctx;
	s->fired_later++;
	sym_loop_timer_close(t, count_close, &s->closes); /* itself */
	sym_loop_stop(s->l);
}

static void test_timers_same_turn(void **state)
{
	(void)state;
	struct sym_loop *l = new_loop();
	struct same_turn s = { .l = l };
	struct sym_loop_timer *first = new_timer(l, on_first, &s);
	s.stopped = new_timer(l, must_not_fire, NULL);
	s.later = new_timer(l, on_later, &s);
	s.closed = new_timer(l, must_not_fire, NULL);
	sym_time due = sym_monotonic_ns() + 5 * SYM_MS;
	sym_loop_timer_set(first, due, 0); /* set first: fires first */
	sym_loop_timer_set(s.stopped, due, 0);
	sym_loop_timer_set(s.later, due, 0);
	sym_loop_timer_set(s.closed, due, 0);
	deadline(l);
	assert_int_equal(sym_loop_run(l), 0);
	assert_int_equal(s.fired_first, 1);
	assert_int_equal(s.fired_later, 1);
	assert_int_equal(s.closes, 2); /* s.closed and s.later, once each */
	assert_false(sym_loop_timer_armed(s.stopped));
	sym_loop_destroy(l);
}

/* ---- descriptors ---- */

struct pipe_io {
	struct sym_loop *l;
	struct sym_loop_io *io, *other;
	int fds[2];
	int calls, closes;
	uint32_t events[4];
	int *close_other; /* counter for the other's close */
	bool close_peer;  /* close `other` when called */
};

static void on_pipe(struct sym_loop_io *io, uint32_t events, void *ctx)
{
	struct pipe_io *p = ctx;
	assert_ptr_equal(io, p->io);
	if (p->calls < 4)
		p->events[p->calls] = events;
	p->calls++;
	if (events & EPOLLIN) {
		char b[16];
		assert_true(read(p->fds[0], b, sizeof(b)) > 0);
	}
	if (p->close_peer) {
		sym_loop_io_close(p->other, count_close, p->close_other);
		sym_loop_io_close(io, count_close, &p->closes); /* and itself */
		sym_loop_stop(p->l);
		return;
	}
	if (p->calls == 1) /* readable: now ask for writable */
		assert_int_equal(sym_loop_io_modify(io, EPOLLOUT), 0);
	else
		sym_loop_stop(p->l);
}

static void open_pipe(struct pipe_io *p)
{
	assert_int_equal(pipe2(p->fds, O_NONBLOCK | O_CLOEXEC), 0);
}

static void close_pipe(struct pipe_io *p)
{
	close(p->fds[0]);
	close(p->fds[1]);
}

/* A socket: readable once written to (EPOLLIN), then writable after a modify (EPOLLOUT). */
static void test_fd_ready(void **state)
{
	(void)state;
	struct sym_loop *l = new_loop();
	struct pipe_io p = { .l = l };
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, p.fds), 0);
	assert_int_equal(sym_loop_io_start(l, p.fds[0], EPOLLIN, on_pipe, &p, &p.io), 0);
	assert_int_equal(sym_loop_io_events(p.io), EPOLLIN);
	assert_int_equal(sym_loop_io_fd(p.io), p.fds[0]);
	/* nothing to read: the loop sleeps until the deadline-free stop below */
	struct sym_loop_timer *t = new_timer(l, stop_loop, l);
	sym_loop_timer_set(t, sym_monotonic_ns() + 20 * SYM_MS, 0);
	assert_int_equal(sym_loop_run(l), 0);
	assert_int_equal(p.calls, 0);
	assert_int_equal(write(p.fds[1], "x", 1), 1);
	deadline(l);
	assert_int_equal(sym_loop_run(l), 0);
	assert_int_equal(p.calls, 2);
	assert_true(p.events[0] & EPOLLIN);
	assert_false(p.events[0] & EPOLLOUT);
	assert_true(p.events[1] & EPOLLOUT);
	assert_int_equal(sym_loop_io_events(p.io), EPOLLOUT);
	sym_loop_io_close(p.io, count_close, &p.closes);
	sym_loop_destroy(l); /* runs the pending close */
	assert_int_equal(p.closes, 1);
	/* the loop never closes a descriptor */
	assert_true(fcntl(p.fds[0], F_GETFD) >= 0);
	close_pipe(&p);
}

struct counter {
	struct sym_loop *l;
	uint64_t got;
};

static void on_eventfd(struct sym_loop_io *io, uint32_t events, void *ctx)
{
	struct counter *c = ctx;
	uint64_t v;
	assert_true(events & EPOLLIN);
	assert_int_equal(read(sym_loop_io_fd(io), &v, sizeof(v)), sizeof(v));
	c->got += v;
	sym_loop_stop(c->l);
}

/* Two pipes ready in the same turn; whichever is called first closes the other (and itself):
 * the other is never called, and each close callback runs once. */
static void test_deferred_close(void **state)
{
	(void)state;
	struct sym_loop *l = new_loop();
	struct pipe_io a = { .l = l, .close_peer = true }, b = { .l = l, .close_peer = true };
	open_pipe(&a);
	open_pipe(&b);
	assert_int_equal(sym_loop_io_start(l, a.fds[0], EPOLLIN, on_pipe, &a, &a.io), 0);
	assert_int_equal(sym_loop_io_start(l, b.fds[0], EPOLLIN, on_pipe, &b, &b.io), 0);
	a.other = b.io, a.close_other = &b.closes;
	b.other = a.io, b.close_other = &a.closes;
	assert_int_equal(write(a.fds[1], "x", 1), 1);
	assert_int_equal(write(b.fds[1], "x", 1), 1);
	deadline(l);
	assert_int_equal(sym_loop_run(l), 0);
	assert_int_equal(a.calls + b.calls, 1);
	assert_int_equal(a.closes, 1);
	assert_int_equal(b.closes, 1);
	/* both descriptors are still open, and no longer watched: more data wakes nothing */
	assert_int_equal(write(a.fds[1], "y", 1), 1);
	struct sym_loop_timer *t = new_timer(l, stop_loop, l);
	sym_loop_timer_set(t, sym_monotonic_ns() + 20 * SYM_MS, 0);
	assert_int_equal(sym_loop_run(l), 0);
	assert_int_equal(a.calls + b.calls, 1);
	sym_loop_destroy(l);
	close_pipe(&a);
	close_pipe(&b);
}

/* A close callback that closes another handle: both close in the same turn, once each. */
struct chain {
	struct sym_loop_timer *next;
	int *closes;
};

static void close_next(void *ctx)
{
	struct chain *c = ctx;
	(*c->closes)++;
	sym_loop_timer_close(c->next, count_close, c->closes);
}

static void test_close_from_close_callback(void **state)
{
	(void)state;
	struct sym_loop *l = new_loop();
	int closes = 0;
	struct sym_loop_timer *a = new_timer(l, must_not_fire, NULL), *b = new_timer(l, must_not_fire, NULL);
	sym_loop_timer_set(b, sym_monotonic_ns() + 5 * SYM_MS, 0);
	struct chain c = { b, &closes };
	sym_loop_timer_close(a, close_next, &c);
	struct sym_loop_timer *t = new_timer(l, stop_loop, l);
	sym_loop_timer_set(t, sym_monotonic_ns() + 20 * SYM_MS, 0);
	assert_int_equal(sym_loop_run(l), 0);
	assert_int_equal(closes, 2);
	sym_loop_destroy(l);
}

/* Runs l for 300 ms with nothing to do: it must use well under a core (30%). */
static void assert_idle(struct sym_loop *l)
{
	const int ms = 300;
	struct sym_loop_timer *t = new_timer(l, stop_loop, l);
	struct timespec c0, c1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	sym_time t0 = sym_monotonic_ns();
	sym_loop_timer_set(t, t0 + ms * SYM_MS, 0);
	assert_int_equal(sym_loop_run(l), 0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	sym_loop_timer_close(t, NULL, NULL);
	double cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
	double share = cpu / sym_to_s(sym_monotonic_ns() - t0);
	if (share > 0.3)
		fail_msg("the loop used %.0f%% of a core while idle", 100 * share);
}

/* ---- the fabric ---- */

#define NMSG 8

struct fab_test {
	struct sym_loop *l;
	struct sym_fab *client;        /* polled by a 1 ms timer */
	struct sym_fab_conn *cx[2];    /* the client's ends */
	int connected;
	bool sent;
	struct sym_fab_conn *acc[2];   /* the loop's ends */
	int accepted;
	struct sym_fab_conn *closed;   /* the loop's end closed by the first message's callback */
	struct sym_fab_conn *kept;
	int kept_msgs, closes;
};

static void on_fab(void *ctx, const struct sym_fab_event *ev)
{
	struct fab_test *t = ctx;
	if (t->closed && ev->conn == t->closed)
		fail_msg("an event (type %d) of a closed connection was delivered", (int)ev->type);
	if (ev->type == SYM_FAB_ACCEPTED) {
		assert_true(t->accepted < 2);
		t->acc[t->accepted++] = ev->conn;
		return;
	}
	assert_int_equal(ev->type, SYM_FAB_MSG);
	assert_int_equal(ev->len, 1);
	if (!t->closed) { /* the first message: close the other connection, whose messages are on the way */
		t->kept = ev->conn;
		t->closed = ev->conn == t->acc[0] ? t->acc[1] : t->acc[0];
		sym_loop_fab_close(t->l, t->closed, count_close, &t->closes);
		sym_loop_fab_close(t->l, t->closed, count_close, &t->closes); /* twice: nothing more */
	}
	assert_ptr_equal(ev->conn, t->kept);
	if (++t->kept_msgs == NMSG)
		sym_loop_stop(t->l);
}

static void on_client_tick(struct sym_loop_timer *tm, void *ctx)
{
	(void)tm;
	struct fab_test *t = ctx;
	struct sym_fab_event ev[16];
	int n = sym_fab_poll(t->client, ev, 16);
	assert_true(n >= 0);
	for (int i = 0; i < n; i++)
		if (ev[i].type == SYM_FAB_CONNECTED)
			t->connected++;
	if (t->connected < 2 || t->accepted < 2 || t->sent)
		return;
	/* both connections up on both sides: messages on each, interleaved, at once */
	for (int k = 0; k < NMSG; k++)
		for (int c = 0; c < 2; c++) {
			uint8_t b = (uint8_t)(c * 100 + k);
			assert_int_equal(sym_fab_send(t->cx[c], &b, 1), 0);
		}
	t->sent = true;
}

static void test_fabric_close(void **state)
{
	(void)state;
	char err[256], port[16];
	struct sym_fab *server;
	struct fab_test t = { 0 };
	assert_int_equal(sym_fab_open(&server, &(struct sym_fab_cfg){ .provider = "tcp" }, err, sizeof(err)), 0);
	assert_int_equal(sym_fab_open(&t.client, &(struct sym_fab_cfg){ .provider = "tcp" }, err, sizeof(err)), 0);
	assert_int_equal(sym_fab_listen(server, "127.0.0.1", "0", err, sizeof(err)), 0);
	snprintf(port, sizeof(port), "%d", sym_fab_listen_port(server));
	for (int c = 0; c < 2; c++)
		assert_int_equal(sym_fab_connect(t.client, "127.0.0.1", port, NULL, &t.cx[c], err, sizeof(err)), 0);
	struct sym_loop *l = t.l = new_loop();
	assert_int_equal(sym_loop_fab(l, server, on_fab, &t), 0);
	assert_int_equal(sym_loop_fab(l, server, on_fab, &t), -EBUSY);
	struct sym_loop_timer *tick = new_timer(l, on_client_tick, &t);
	sym_loop_timer_set(tick, sym_monotonic_ns(), SYM_MS);
	struct sym_loop_timer *d = deadline(l);
	assert_int_equal(sym_loop_run(l), 0);
	assert_true(sym_loop_timer_armed(d)); /* done before the deadline */
	assert_true(t.sent);
	assert_int_equal(t.kept_msgs, NMSG);
	assert_int_equal(t.closes, 1);
	/* idle with the fabric watched (its wait fd, trywait): little CPU, and still no event
	 * of the closed connection */
	sym_loop_timer_stop(tick);
	assert_idle(l);
	sym_loop_destroy(l);
	sym_fab_destroy(server);
	sym_fab_destroy(t.client);
}

/* sym_loop_fab_time: the moment the turn began polling the fabric, which the turn's own work
 * (30 ms spent in a timer, as an 8 MB HTTP body would) does not move; the next turn's poll is
 * after that work. */
struct fab_time {
	struct sym_loop *l;
	int calls;
	sym_time polled[2], before[2], after_work;
};

static void on_fab_time(struct sym_loop_timer *t, void *ctx)
{
	struct fab_time *ft = ctx;
	sym_time now = sym_monotonic_ns();
	ft->polled[ft->calls] = sym_loop_fab_time(ft->l);
	ft->before[ft->calls] = now;
	if (ft->calls++ == 0) {
		while (sym_monotonic_ns() - now < 30 * SYM_MS)
			;
		ft->after_work = sym_monotonic_ns();
		assert_true(sym_loop_fab_time(ft->l) == ft->polled[0]); /* the work does not move it */
		return;
	}
	sym_loop_timer_stop(t);
	sym_loop_stop(ft->l);
}

static void on_no_fab(void *ctx, const struct sym_fab_event *ev)
{
	(void)ctx, (void)ev;
}

static void test_fab_time(void **state)
{
	(void)state;
	char err[256];
	struct sym_fab *f;
	assert_int_equal(sym_fab_open(&f, &(struct sym_fab_cfg){ .provider = "tcp" }, err, sizeof(err)), 0);
	assert_int_equal(sym_fab_listen(f, "127.0.0.1", "0", err, sizeof(err)), 0);
	struct fab_time ft = { .l = new_loop() };
	assert_int_equal(sym_loop_fab(ft.l, f, on_no_fab, NULL), 0);
	struct sym_loop_timer *t = new_timer(ft.l, on_fab_time, &ft);
	sym_loop_timer_set(t, sym_monotonic_ns(), SYM_MS);
	struct sym_loop_timer *d = deadline(ft.l);
	assert_int_equal(sym_loop_run(ft.l), 0);
	assert_true(sym_loop_timer_armed(d));
	assert_int_equal(ft.calls, 2);
	assert_true(ft.polled[0] > 0 && ft.polled[0] <= ft.before[0]);
	assert_true(ft.polled[1] >= ft.after_work && ft.polled[1] <= ft.before[1]);
	sym_loop_destroy(ft.l);
	sym_fab_destroy(f);
}

/* ---- HTTP ---- */

#define POST_BYTES 220000

static void on_http_req(void *ctx, struct sym_http_req *r)
{
	(void)ctx;
	size_t len;
	sym_http_body(r, &len);
	char msg[64];
	int n = snprintf(msg, sizeof(msg), "got %zu bytes", len);
	sym_http_reply(r, 200, "text/plain", msg, (size_t)n, NULL);
}

/* A free TCP port on 127.0.0.1. */
static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* The child: POSTs POST_BYTES to the port and exits 0 if the answer is 200 with the count. */
static void post_child(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		_exit(2);
	static char buf[POST_BYTES + 256];
	int h = snprintf(buf, 256, "POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nConnection: close\r\n\r\n",
			 POST_BYTES);
	memset(buf + h, 'a', POST_BYTES);
	for (size_t off = 0, len = (size_t)h + POST_BYTES; off < len;) {
		ssize_t n = write(fd, buf + off, len - off);
		if (n <= 0)
			_exit(3);
		off += (size_t)n;
	}
	size_t got = 0;
	ssize_t n;
	while (got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = 0;
	char want[64];
	snprintf(want, sizeof(want), "got %d bytes", POST_BYTES);
	_exit(!strncmp(buf, "HTTP/1.1 200", 12) && strstr(buf, want) ? 0 : 4);
}

struct child {
	struct sym_loop *l;
	pid_t pid;
	int status; /* -1 until it exits */
};

static void on_child_tick(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	struct child *c = ctx;
	int st;
	if (waitpid(c->pid, &st, WNOHANG) != c->pid)
		return;
	c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	sym_loop_stop(c->l);
}

static void test_http_large_post(void **state)
{
	(void)state;
	char err[256], port[16];
	snprintf(port, sizeof(port), "%d", free_port());
	struct sym_http *h;
	struct sym_http_cfg hc = { .host = "127.0.0.1", .port = port, .body_max = 1 << 20, .handler = on_http_req };
	if (sym_http_start(&h, &hc, err, sizeof(err)))
		fail_msg("%s", err);
	struct sym_loop *l = new_loop();
	assert_int_equal(sym_loop_http(l, h), 0);
	assert_int_equal(sym_loop_http(l, h), -EEXIST);
	struct child c = { .l = l, .status = -1 };
	sym_time t0 = sym_monotonic_ns();
	c.pid = fork();
	assert_true(c.pid >= 0);
	if (c.pid == 0)
		post_child(atoi(port));
	struct sym_loop_timer *tick = new_timer(l, on_child_tick, &c);
	sym_loop_timer_set(tick, t0, 2 * SYM_MS);
	deadline(l);
	assert_int_equal(sym_loop_run(l), 0);
	sym_time took = sym_monotonic_ns() - t0;
	if (c.status == -1) {
		kill(c.pid, SIGKILL);
		waitpid(c.pid, NULL, 0);
		fail_msg("a POST of %d bytes got no answer in %.1f s", POST_BYTES, sym_to_s(took));
	}
	assert_int_equal(c.status, 0);
	if (took > 2 * SYM_S)
		fail_msg("a POST of %d bytes took %.3f s", POST_BYTES, sym_to_s(took));
	struct sym_http_stats st;
	sym_http_stats(h, &st);
	assert_int_equal(st.s2xx, 1);
	sym_loop_timer_stop(tick);
	assert_idle(l);
	sym_loop_destroy(l);
	sym_http_stop(h);
}

/* ---- stop ---- */

static void set_flag(struct sym_loop_timer *t, void *ctx)
{
	(void)t;
	*(volatile sig_atomic_t *)ctx = 1;
}

static void test_stop(void **state)
{
	(void)state;
	struct sym_loop *l = new_loop();
	/* sym_loop_stop from a callback ends the run after that turn; it runs again after */
	for (int i = 0; i < 2; i++) {
		struct sym_loop_timer *t = new_timer(l, stop_loop, l);
		sym_time t0 = sym_monotonic_ns();
		sym_loop_timer_set(t, t0 + 5 * SYM_MS, 0);
		assert_int_equal(sym_loop_run(l), 0);
		assert_true(sym_monotonic_ns() - t0 >= 5 * SYM_MS);
		sym_loop_timer_close(t, NULL, NULL);
	}
	/* the stop flag: set by a callback (as a signal handler would), seen before the next turn */
	static volatile sig_atomic_t flag;
	sym_loop_stop_on(l, &flag);
	struct sym_loop_timer *t = new_timer(l, set_flag, (void *)&flag);
	sym_loop_timer_set(t, sym_monotonic_ns() + 5 * SYM_MS, 0);
	struct sym_loop_timer *d = deadline(l);
	assert_int_equal(sym_loop_run(l), 0);
	assert_int_equal(flag, 1);
	assert_true(sym_loop_timer_armed(d)); /* stopped by the flag, not by the deadline */
	/* already set: no turn at all */
	assert_int_equal(sym_loop_run(l), 0);
	/* an eventfd wakes it; a handle closed before the loop ran is never called */
	flag = 0;
	struct counter c = { l, 0 };
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct sym_loop_io *io;
	assert_int_equal(sym_loop_io_start(l, efd, EPOLLIN, on_eventfd, &c, &io), 0);
	sym_loop_io_close(io, NULL, NULL);
	assert_int_equal(sym_loop_io_start(l, efd, EPOLLIN, on_eventfd, &c, &io), 0);
	uint64_t five = 5;
	assert_int_equal(write(efd, &five, sizeof(five)), sizeof(five));
	assert_int_equal(sym_loop_run(l), 0);
	assert_int_equal(c.got, 5);
	sym_loop_destroy(l);
	close(efd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timers_in_order),
		cmocka_unit_test(test_repeating),
		cmocka_unit_test(test_timers_same_turn),
		cmocka_unit_test(test_fd_ready),
		cmocka_unit_test(test_deferred_close),
		cmocka_unit_test(test_close_from_close_callback),
		cmocka_unit_test(test_fabric_close),
		cmocka_unit_test(test_fab_time),
		cmocka_unit_test(test_http_large_post),
		cmocka_unit_test(test_stop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
