/* runtime/loop.h - the runtime processes' event loop.
 *
 * One thread, one loop: schedd, frontends, backends and loadgen each run
 * everything they do (sockets, eventfds, timers, the fabric, the HTTP
 * server) as callbacks of one `struct sym_loop`, over epoll.
 *
 * A turn of the loop:
 *   1. Sleep in epoll_wait until a watched descriptor is ready, the nearest
 *      timer is due (a timerfd armed to the nanosecond), or the HTTP
 *      server's own timeout passes. It does not sleep at all when the
 *      fabric has work pending (sym_fab_trywait says so), when the HTTP
 *      server has answers to send, or when a timer is already due.
 *   2. Call the callbacks of the ready descriptors.
 *   3. Poll the fabric (sym_fab_poll, until it has no more events) and hand
 *      each event to the fabric callback.
 *   4. Run the HTTP server (sym_http_run) if its descriptor was ready or
 *      its timeout passed. libmicrohttpd reads a large body over several
 *      passes, the later ones asked for only by its timeout: both count.
 *   5. Fire the timers that are due, earliest first (equal times in the
 *      order they were set); a repeating timer is set again before its
 *      callback runs.
 *   6. Close what was closed during the turn (below).
 * The loop stops before a turn when sym_loop_stop was called or the stop
 * flag given to sym_loop_stop_on is set. A signal handler that sets that
 * flag should also make a watched descriptor readable (runtime/rt.h's
 * sym_rt_loop does), so that the loop notices at once.
 *
 * Closing is deferred, like libuv's uv_close. sym_loop_io_close,
 * sym_loop_timer_close and sym_loop_fab_close only mark the handle (a
 * watched descriptor, a timer, a fabric connection) as closing: from then
 * on no callback and no fabric event is delivered for it, even one that is
 * already ready in this turn, and at the end of the turn it is freed (the
 * connection with sym_fab_close) and its close callback runs, exactly once.
 * So a callback may close any handle, its own included, and no callback
 * ever sees a handle freed under it (a handle closed outside sym_loop_run
 * is freed at the start of the next turn, or by sym_loop_destroy). Closing
 * a handle already closing does nothing. A close callback may close further handles; they are freed in
 * the same turn.
 *
 * A descriptor stops being watched at once when its handle is closed; the
 * loop never closes it: its owner does, at the earliest after
 * sym_loop_io_close (in the close callback is simplest).
 *
 * Not thread-safe: one thread creates, runs and changes a loop.
 */
#ifndef SYM_LOOP_H
#define SYM_LOOP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "core/time.h"

struct sym_loop;
struct sym_loop_io;
struct sym_loop_timer;
struct sym_fab;
struct sym_fab_conn;
struct sym_fab_event;
struct sym_http;

/* events: EPOLLIN, EPOLLOUT, with EPOLLHUP and EPOLLERR when they happen. */
typedef void (*sym_loop_io_cb)(struct sym_loop_io *io, uint32_t events, void *ctx);
typedef void (*sym_loop_timer_cb)(struct sym_loop_timer *t, void *ctx);
typedef void (*sym_loop_fab_cb)(void *ctx, const struct sym_fab_event *ev);
typedef void (*sym_loop_close_cb)(void *ctx);

/* Returns 0, or -errno with a message. */
int sym_loop_create(struct sym_loop **out, char *err, size_t errlen);

/* Finishes the closes still pending (their callbacks run), then frees every
 * handle still open without calling anything. A fabric and an HTTP server
 * given to the loop must still exist; the loop does not free them. Accepts
 * NULL. */
void sym_loop_destroy(struct sym_loop *l);

/* Runs turns until sym_loop_stop or the stop flag. Returns 0, or -errno
 * when epoll or the fabric failed (sym_loop_error says how); the loop can
 * be run again after. */
int sym_loop_run(struct sym_loop *l);

/* Makes sym_loop_run return before its next turn (from a callback: once
 * the current turn has finished). */
void sym_loop_stop(struct sym_loop *l);

/* Also stop when *flag is nonzero (checked before every turn). */
void sym_loop_stop_on(struct sym_loop *l, volatile sig_atomic_t *flag);

/* The monotonic time the current turn woke up at (updated before timers
 * fire); before the first turn, when the loop was created. */
sym_time sym_loop_now(const struct sym_loop *l);

/* When the loop last began to poll the fabric (every turn, after the ready
 * descriptors and before HTTP and the timers); before the first poll,
 * sym_loop_now. A peer's silence judged as of this moment counts only time
 * in which the loop could have heard it: not the work of this turn since
 * (a long HTTP body decoded), whose messages wait for the next poll. */
sym_time sym_loop_fab_time(const struct sym_loop *l);

/* Why sym_loop_run failed, for the log ("" before any failure). */
const char *sym_loop_error(const struct sym_loop *l);

/* ---- descriptors ---- */

/* Watches fd for events (EPOLLIN and/or EPOLLOUT, level-triggered); cb
 * runs with what is ready. Returns 0 with *out set, or -errno. */
int sym_loop_io_start(struct sym_loop *l, int fd, uint32_t events, sym_loop_io_cb cb, void *ctx,
		      struct sym_loop_io **out);

/* Changes the events watched. Returns 0 or -errno (0 on a closing handle). */
int sym_loop_io_modify(struct sym_loop_io *io, uint32_t events);

/* The events watched, and the descriptor. */
uint32_t sym_loop_io_events(const struct sym_loop_io *io);
int sym_loop_io_fd(const struct sym_loop_io *io);

/* Stops watching at once, and closes the handle at the end of the turn
 * (see above): then close_cb(close_ctx) runs if not NULL. */
void sym_loop_io_close(struct sym_loop_io *io, sym_loop_close_cb close_cb, void *close_ctx);

/* ---- timers (CLOCK_MONOTONIC, to the nanosecond) ---- */

/* A timer, not set. Returns 0 with *out set, or -ENOMEM. */
int sym_loop_timer_new(struct sym_loop *l, sym_loop_timer_cb cb, void *ctx, struct sym_loop_timer **out);

/* Sets t to fire at `due` (monotonic; a time already past fires in this or
 * the next turn), then every `period` after it if period > 0; setting it
 * again replaces what it was set to. A repeating timer that falls behind
 * skips the periods it missed, so it fires at most once per turn. */
void sym_loop_timer_set(struct sym_loop_timer *t, sym_time due, sym_time period);

/* Unsets t (it does not fire, even if due in this turn). */
void sym_loop_timer_stop(struct sym_loop_timer *t);

/* Whether t is set, and when it fires next (SYM_TIME_NEVER: not set). */
bool sym_loop_timer_armed(const struct sym_loop_timer *t);
sym_time sym_loop_timer_due(const struct sym_loop_timer *t);

/* Unsets t and closes it at the end of the turn (see above). */
void sym_loop_timer_close(struct sym_loop_timer *t, sym_loop_close_cb close_cb, void *close_ctx);

/* ---- the fabric and the HTTP server ---- */

/* Progresses f every turn and hands each of its events to cb, except the
 * events of connections closed with sym_loop_fab_close. Its wait fd is
 * watched, with sym_fab_trywait before sleeping; without wait fds the loop
 * sleeps at most 1 ms at a time. One fabric per loop: -EBUSY for a second. */
int sym_loop_fab(struct sym_loop *l, struct sym_fab *f, sym_loop_fab_cb cb, void *ctx);

/* Closes a connection of the loop's fabric at the end of the turn (see
 * above): sym_fab_close(c), then close_cb(close_ctx). Returns at once; the
 * connection must not be used after (sends on it included). If the loop
 * cannot remember it (out of memory), it is closed at once, the fabric's
 * remaining events of this turn are dropped, and sym_loop_run returns
 * -ENOMEM at the end of the turn. */
void sym_loop_fab_close(struct sym_loop *l, struct sym_fab_conn *c, sym_loop_close_cb close_cb, void *close_ctx);

/* Runs h in the loop (runtime/http.h): when its descriptor is ready, when
 * its timeout passes, and before sleeping when an answer waits to be sent.
 * Two per loop (an API and a metrics listener): -EBUSY for a third, -EEXIST
 * for one already there. */
int sym_loop_http(struct sym_loop *l, struct sym_http *h);

#endif
