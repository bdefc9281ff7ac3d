/* runtime/rt.h - what the runtime's processes share: their options, the
 * log, the stop signal, and their entry points.
 *
 * Each process is a `symphony` subcommand that takes the cluster file plus
 * its identity and flags (runtime/cluster.h), and runs everything on one
 * event loop (runtime/loop.h) until SIGINT or SIGTERM.
 */
#ifndef SYM_RT_H
#define SYM_RT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/time.h"
#include "runtime/cluster.h"
#include "runtime/cred.h"
#include "runtime/wire.h"

struct sym_rt_opts {
	const char *cmd;    /* schedd, frontend, backend, loadgen */
	int id;             /* frontend/backend identity, -1 when not given */
	int subcluster;     /* backend: the sub-cluster it joins at its first registration (the
			     * autoscaler's choice); -1: its GPU's own */
	const char *json;   /* schedd, loadgen: write the result object here ("-": stdout) */
	bool quiet;         /* no progress or informational log lines */
	bool verbose;       /* also log every peer event */
	bool check;         /* only check the configuration */
	const struct sym_cred *cred; /* schedd, frontend, backend: this member's credential (runtime/cred.h) */
	const struct sym_revoked *revoked; /* the serials refused at start */
	const char *revoked_path; /* where they are read again on SIGHUP ("" or NULL: nowhere) */
	bool standby;       /* schedd: the hot standby (the second address of runtime.schedd) */
	/* what the cluster was read from, for a reload: the file (NULL: none; "-": standard input,
	 * which cannot be read again) and the flags given over it, in order */
	const char *config_path;
	const char *const *flag_name, *const *flag_val;
	size_t nflags;
};

/* A reload of the cluster (SIGHUP; schedd's POST /v2/admin/reload): the file
 * read again with the start's flags and resolved, then sym_cluster_reload
 * into c; the metrics listener takes the HTTP limits. Returns the number of
 * changes (done lists them) or a negative errno (err says why, nothing
 * changed); the process applies the rest (its HTTP server's limits, tokens,
 * the scheduler's SLOs). */
int sym_rt_reload_cluster(struct sym_cluster *c, const struct sym_rt_opts *o, char *done, size_t donelen, char *err,
			  size_t errlen);

/* The file of revoked serials read again on SIGHUP (runtime/cred.h); the
 * process's fabric then closes the connections of members revoked. */
void sym_rt_set_revocation(const char *path);

/* Set by SIGINT/SIGTERM (once sym_rt_signals has installed the handler). */
extern volatile sig_atomic_t sym_rt_stop;
void sym_rt_signals(void);

/* SIGTERM or SIGINT, the first time: drain(ctx) runs on the process's loop,
 * which must stop the loop itself (sym_loop_stop) once it has finished what
 * it holds, and within a bound of its own. A second SIGTERM or SIGINT stops
 * the loop at once; so does the first when a process sets no drain. */
void sym_rt_on_term(void (*drain)(void *ctx), void *ctx);

/* SIGHUP: reload(ctx) runs on the process's loop (after sym_rt_loop); a
 * process that sets none logs that it ignores the signal. */
void sym_rt_on_reload(void (*reload)(void *ctx), void *ctx);

/* A process's event loop: it stops when sym_rt_stop is set, and SIGINT and
 * SIGTERM wake it at once; the process's fabric (events to on_fab(ctx, ...))
 * and its HTTP server run on it (each NULL: none). Returns 0, or -errno logged as `who`. */
struct sym_loop;
struct sym_fab;
struct sym_fab_event;
struct sym_http;
int sym_rt_loop(struct sym_loop **out, const char *who, struct sym_fab *fab,
		void (*on_fab)(void *ctx, const struct sym_fab_event *ev), struct sym_http *http, void *ctx);

/* The process's log, on stderr, one line per event: text "TIME LEVEL who:
 * message", or (--log-format json) one JSON object a line with "time",
 * "level", "role", "id" (frontends and backends), "msg", and the fields of a
 * request's trace. TIME is the wall clock in RFC 3339 (UTC, microseconds).
 * Lines below the least level (--log-level; info unless set) are not written. */
enum sym_log_level { SYM_LOG_DEBUG, SYM_LOG_INFO, SYM_LOG_WARN, SYM_LOG_ERROR };
extern enum sym_log_level sym_rt_log_min;

/* format "json" or "text", level "debug", "info", "warn" or "error" (each
 * NULL: as it is). Returns 0, or -EINVAL naming the bad value in err. */
int sym_rt_log_setup(const char *format, const char *level, char *err, size_t len);
/* Who the process is in JSON lines: its role and id (-1: none). */
void sym_rt_log_identity(const char *role, int id);

/* info, warn and error lines. */
void sym_rt_log(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sym_rt_warn(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sym_rt_error(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A request's trace at the debug level (check sym_rt_tracing() before
 * building one): a request is named "fF-R", its frontend F and that
 * frontend's request id R, the same in the three processes; a batch by its
 * id, from schedd's plan to the backend's results and the frontend's answer. */
struct sym_log_fields {
	const char *request;      /* "fF-R", or NULL */
	const char *client_id;    /* the client's own id for it (KServe's "id"), or NULL */
	int64_t batch;            /* a batch id, or -1 */
	const struct sym_wire_input *inputs; /* a batch's requests, as planned */
	size_t ninputs;
};
static inline bool sym_rt_tracing(void)
{
	return sym_rt_log_min == SYM_LOG_DEBUG;
}
void sym_rt_trace(const char *who, const struct sym_log_fields *f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void sym_rt_request_name(uint32_t frontend, uint64_t req_id, char *buf, size_t len);

/* A warning that a peer can provoke at will: at most one line a second per
 * limiter; the next line printed says how many were held back. */
struct sym_rt_ratelog {
	sym_time last;
	uint64_t held;
};
void sym_rt_log_limited(struct sym_rt_ratelog *rl, const char *who, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The HTTP endpoints of schedd and backends: GET /metrics (write() fills
 * the Prometheus text), GET /v2/health/live, and GET /v2/health/ready where
 * the process gave a readiness (sym_rt_set_ready); anything else 404 or 405.
 * The same on the metrics listener (metrics_base) where there is one. */
struct sym_http_req;
struct sym_buf;
void sym_rt_serve_metrics(struct sym_http_req *r, void (*write)(void *ctx, struct sym_buf *b), void *ctx);

/* The process's readiness for GET /v2/health/ready: ready(ctx, why, len)
 * true for 200 {"ready": true}, false for 503 {"ready": false, "reason":
 * why}. Called on the event loop's thread. */
void sym_rt_set_ready(bool (*ready)(void *ctx, char *why, size_t len), void *ctx);

/* The process's admin API (schedd: POST /v2/admin/reload): the metrics
 * listener hands it every /v2/admin/ request, as the process's own HTTP
 * port does. */
void sym_rt_set_admin(void (*admin)(void *ctx, struct sym_http_req *r), void *ctx);

/* Closes the process's metrics listener (runtime.metrics_port), if it has one:
 * its loop is gone with the process's. */
void sym_rt_metrics_close(void);

/* Encodes m (plan inputs / hello models as sym_wire_encode takes them) and
 * sends it on a fabric connection; logs and returns the error. */
struct sym_fab_conn;
int sym_rt_send(const char *who, struct sym_fab_conn *conn, const struct sym_msg *m,
		const struct sym_wire_input *inputs, const uint16_t *models);

/* Starts a process's HTTP server on host:port with the cluster's limits
 * (http_conn_max, http_timeout_s, http_per_ip_max) and, when it names them,
 * its TLS certificate and key (HTTPS). Returns 0 or -errno with a message. */
struct sym_http;
struct sym_http_req;
int sym_rt_http_start(struct sym_http **out, const struct sym_cluster *c, const char *host, const char *port,
		      size_t body_max, void (*handler)(void *ctx, struct sym_http_req *r), void *ctx, char *err,
		      size_t errlen);

/* /metrics on a listener of its own when the cluster sets metrics_base: the
 * process (role, id: as sym_cluster_metrics_port) serves /metrics (write()
 * fills it) and /v2/health/live there, on host, and its API port answers
 * /metrics with 404 naming that port. Call before sym_rt_loop, which runs it.
 * Returns 0 (also when there is none) or -errno with a message. */
int sym_rt_metrics_start(const struct sym_cluster *c, int role, int id, const char *host,
			 void (*write)(void *ctx, struct sym_buf *b), void *ctx, char *err, size_t errlen);

/* How long a frontend or backend waits for a word from schedd before it
 * gives it up: twice failure_ms, and at least 500 ms (losing the scheduler
 * costs more than losing a peer, and a loaded machine's stalls at startup
 * must not look like a dead scheduler; a crashed one is noticed at once, by
 * its connection closing). */
static inline sym_time sym_rt_schedd_silence(const struct sym_cluster *c)
{
	sym_time t = 2 * sym_ms(c->failure_ms);
	return t > 500 * SYM_MS ? t : 500 * SYM_MS;
}

/* How long a frontend or backend waits for an attempt to reach schedd (to
 * connect and authenticate) before it gives it up and tries the other
 * address: sym_rt_schedd_silence, and at least 5 s (a loaded machine may take
 * a second; a stopped process, SIGSTOP, never answers). */
static inline sym_time sym_rt_connect_timeout(const struct sym_cluster *c)
{
	sym_time t = sym_rt_schedd_silence(c);
	return t > 5 * SYM_S ? t : 5 * SYM_S;
}

/* How often schedd heartbeats each registered frontend and backend, on its
 * own timer: every heartbeat_ms, or failure_ms / 8 when that is longer (a
 * peer gives schedd up after sym_rt_schedd_silence, at least 16 of them). */
static inline sym_time sym_rt_beat_period(const struct sym_cluster *c)
{
	sym_time hb = sym_ms(c->heartbeat_ms), f8 = sym_ms(c->failure_ms) / 8;
	return hb > f8 ? hb : f8;
}

/* Sends the heartbeat of frontend or backend `id` (++*seq) to schedd on conn,
 * with `term`, the highest scheduler term the sender has seen (wire.h). */
int sym_rt_heartbeat(const char *who, struct sym_fab_conn *conn, int id, uint32_t term, uint64_t *seq);

/* A frontend's or backend's heartbeat turn: the heartbeat, unless schedd had
 * been silent since `heard` for longer than sym_rt_schedd_silence when the
 * loop last polled the fabric (`polled`: sym_loop_fab_time), so that a turn
 * busy with other work (an 8 MB HTTP body) is not counted as schedd's
 * silence: its messages wait for the next poll, and schedd heartbeats every
 * peer on a timer of its own. Returns 0, or -1 with why in why (the caller
 * gives schedd up). */
int sym_rt_beat(const char *who, const struct sym_cluster *c, struct sym_fab_conn *conn, int id, uint32_t term,
		uint64_t *seq, sym_time heard, sym_time polled, char *why, size_t len);

#endif
