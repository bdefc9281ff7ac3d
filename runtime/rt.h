/* runtime/rt.h - what the runtime's processes share: their options, the
 * log, the stop signal, and their entry points.
 *
 * Each process is a `symphony` subcommand that takes the cluster file plus
 * its identity and flags (runtime/cluster.h), and runs an event loop on
 * epoll until SIGINT or SIGTERM.
 */
#ifndef SYM_RT_H
#define SYM_RT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/time.h"
#include "runtime/cluster.h"
#include "runtime/wire.h"

struct sym_rt_opts {
	const char *cmd;    /* schedd, frontend, backend, loadgen */
	int id;             /* frontend/backend identity, -1 when not given */
	const char *json;   /* schedd, loadgen: write the result object here ("-": stdout) */
	bool quiet;         /* no progress or informational log lines */
	bool verbose;       /* also log every peer event */
	bool check;         /* only check the configuration */
};

/* Set by SIGINT/SIGTERM. */
extern volatile sig_atomic_t sym_rt_stop;
void sym_rt_signals(void);

/* "[   1.234567] schedd: ..." on stderr (seconds since the process began). */
void sym_rt_log(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Runs process o->cmd (schedd, frontend, backend, loadgen) of the resolved
 * cluster c until SIGINT or SIGTERM: installs the signal handlers and the
 * timer slack, then calls the process's entry below. Returns its status. */
int sym_rt_run(struct sym_cluster *c, const struct sym_rt_opts *o);

/* The processes (cluster resolved). Exit status: 0, 1 (run-time failure),
 * 2 (bad configuration). */
/* The HTTP endpoints of schedd and backends: GET /metrics (write() fills
 * the Prometheus text), GET /v2/health/live; anything else 404 or 405. */
struct sym_http_req;
struct sym_buf;
void sym_rt_serve_metrics(struct sym_http_req *r, void (*write)(void *ctx, struct sym_buf *b), void *ctx);

int sym_schedd_run(struct sym_cluster *c, const struct sym_rt_opts *o);
int sym_frontend_run(struct sym_cluster *c, const struct sym_rt_opts *o);
int sym_backend_run(struct sym_cluster *c, const struct sym_rt_opts *o);
int sym_loadgen_run(struct sym_cluster *c, const struct sym_rt_opts *o);

/* Connections closed while a batch of fabric events is handled: a later
 * event of the same batch that names one must be skipped (sym_fab_close
 * frees it). Reset before each batch. */
struct sym_fab_conn;
struct sym_rt_closed {
	struct sym_fab_conn *c[64];
	int n;
	bool overflow; /* more than 64: skip the rest of the batch */
};
void sym_rt_close(struct sym_rt_closed *cl, struct sym_fab_conn *c);
bool sym_rt_was_closed(const struct sym_rt_closed *cl, const struct sym_fab_conn *c);

/* Encodes m (plan inputs / hello models as sym_wire_encode takes them) and
 * sends it on a fabric connection; logs and returns the error. */
struct sym_fab_conn;
int sym_rt_send(const char *who, struct sym_fab_conn *conn, const struct sym_msg *m,
		const struct sym_wire_input *inputs, const uint16_t *models);

#endif
