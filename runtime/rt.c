/* runtime/rt.c - what the runtime's processes share (runtime/rt.h): the log, the
 * signals, the loop, the HTTP endpoints and the sending of messages. */
#include "runtime/rt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "runtime/auth.h"
#include "runtime/executor.h"
#include "runtime/fabric.h"
#include "runtime/http.h"
#include "runtime/loop.h"
#include "runtime/prom.h"
#include "sym_version.h"

#include <cjson/cJSON.h>
#include <sodium.h>

volatile sig_atomic_t sym_rt_stop;
static volatile sig_atomic_t rt_reload;
static int stop_fd = -1; /* an eventfd the handler writes: it wakes the process's loop */
static const char *rt_who; /* the process's name in its log (sym_rt_loop) */
static void (*reload_fn)(void *ctx);
static void *reload_ctx;
static void (*volatile drain_fn)(void *ctx);
static void *drain_ctx;
static volatile sig_atomic_t rt_term; /* SIGTERM/SIGINT seen: 1 draining, 2 drain started */

void sym_rt_on_term(void (*drain)(void *ctx), void *ctx)
{
	drain_ctx = ctx;
	drain_fn = drain;
}

void sym_rt_on_reload(void (*reload)(void *ctx), void *ctx)
{
	reload_fn = reload;
	reload_ctx = ctx;
}

static void on_signal(int sig)
{
	int saved = errno;
	if (sig == SIGHUP)
		rt_reload = 1;
	else if (drain_fn && !rt_term)
		rt_term = 1; /* the loop drains; a second signal stops it */
	else
		sym_rt_stop = 1;
	uint64_t one = 1;
	if (stop_fd >= 0 && write(stop_fd, &one, sizeof(one)) < 0)
		one = 0; /* full: the loop is woken already */
	errno = saved;
}

void sym_rt_signals(void)
{
	if (stop_fd < 0) /* lives as long as the process: a handler may run on any thread */
		stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* The log (sym_rt_log_setup): its format, its least level, and who the process is. */
static bool log_json;
enum sym_log_level sym_rt_log_min = SYM_LOG_INFO;
static char log_role[16];
static int log_id = -1;

static const char *const level_names[] = { "debug", "info", "warn", "error" };

int sym_rt_log_setup(const char *format, const char *level, char *err, size_t len)
{
	if (format && strcmp(format, "text") && strcmp(format, "json"))
		return snprintf(err, len, "--log-format '%s': json or text", format), -EINVAL;
	int lv = -1;
	for (int i = 0; level && i < 4; i++)
		if (!strcmp(level, level_names[i]))
			lv = i;
	if (level && lv < 0)
		return snprintf(err, len, "--log-level '%s': debug, info, warn or error", level), -EINVAL;
	log_json = format && !strcmp(format, "json");
	if (level)
		sym_rt_log_min = (enum sym_log_level)lv;
	return 0;
}

void sym_rt_log_identity(const char *role, int id)
{
	snprintf(log_role, sizeof(log_role), "%s", role);
	log_id = id;
}

/* RFC 3339, UTC, microseconds: 2026-11-27T20:37:23.123456Z. */
static void log_time(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%06ldZ", ts.tv_nsec / 1000);
}

void sym_rt_request_name(uint32_t frontend, uint64_t req_id, char *buf, size_t len)
{
	snprintf(buf, len, "f%" PRIu32 "-%" PRIu64, frontend, req_id);
}

/* One line on stderr: text "TIME LEVEL who: msg", or one JSON object with the
 * fields of f (NULL: none). */
static void log_line(enum sym_log_level lv, const char *who, const struct sym_log_fields *f, const char *msg)
{
	char t[40];
	log_time(t, sizeof(t));
	if (!log_json) {
		fprintf(stderr, "%s %-5s %s: %s\n", t, level_names[lv], who, msg);
		return;
	}
	cJSON *o = cJSON_CreateObject();
	bool ok = o && cJSON_AddStringToObject(o, "time", t) && cJSON_AddStringToObject(o, "level", level_names[lv]) &&
		  cJSON_AddStringToObject(o, "role", log_role[0] ? log_role : who) &&
		  (log_id < 0 || cJSON_AddNumberToObject(o, "id", log_id)) && cJSON_AddStringToObject(o, "msg", msg);
	if (ok && f && f->request)
		ok = cJSON_AddStringToObject(o, "request", f->request) != NULL;
	if (ok && f && f->client_id)
		ok = cJSON_AddStringToObject(o, "client_id", f->client_id) != NULL;
	if (ok && f && f->batch >= 0)
		ok = cJSON_AddNumberToObject(o, "batch", (double)f->batch) != NULL;
	if (ok && f && f->ninputs) {
		cJSON *a = cJSON_AddArrayToObject(o, "requests");
		for (size_t i = 0; ok && i < f->ninputs; i++) {
			char r[40];
			sym_rt_request_name(f->inputs[i].frontend, f->inputs[i].req_id, r, sizeof(r));
			cJSON *s = cJSON_CreateString(r);
			ok = a && s && cJSON_AddItemToArray(a, s);
		}
	}
	char *line = ok ? cJSON_PrintUnformatted(o) : NULL;
	if (line)
		fprintf(stderr, "%s\n", line);
	else /* out of memory: the message still goes out, as text */
		fprintf(stderr, "%s %-5s %s: %s\n", t, level_names[lv], who, msg);
	cJSON_free(line);
	cJSON_Delete(o);
}

static void log_v(enum sym_log_level lv, const char *who, const struct sym_log_fields *f, const char *fmt, va_list ap)
{
	if (lv < sym_rt_log_min)
		return;
	char msg[1024];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_line(lv, who, f, msg);
}

void sym_rt_log(const char *who, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_v(SYM_LOG_INFO, who, NULL, fmt, ap);
	va_end(ap);
}

void sym_rt_warn(const char *who, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_v(SYM_LOG_WARN, who, NULL, fmt, ap);
	va_end(ap);
}

void sym_rt_error(const char *who, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_v(SYM_LOG_ERROR, who, NULL, fmt, ap);
	va_end(ap);
}

void sym_rt_trace(const char *who, const struct sym_log_fields *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_v(SYM_LOG_DEBUG, who, f, fmt, ap);
	va_end(ap);
}

void sym_rt_log_limited(struct sym_rt_ratelog *rl, const char *who, const char *fmt, ...)
{
	sym_time now = sym_monotonic_ns();
	if (rl->last && now - rl->last < 1000000000LL) {
		rl->held++;
		return;
	}
	char line[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (rl->held)
		sym_rt_warn(who, "%s (%" PRIu64 " earlier line%s of this kind held back in the last second)", line,
			     rl->held, rl->held == 1 ? "" : "s");
	else
		sym_rt_warn(who, "%s", line);
	rl->last = now;
	rl->held = 0;
}

int sym_rt_send(const char *who, struct sym_fab_conn *conn, const struct sym_msg *m,
		const struct sym_wire_input *inputs, const uint16_t *models)
{
	uint8_t buf[SYM_FAB_MSG_MAX];
	size_t n = sym_wire_encode(m, inputs, models, buf, sizeof(buf));
	if (!n) {
		sym_rt_error(who, "cannot encode a %s message (out of bounds)", sym_wire_type_name(m->type));
		return -EINVAL;
	}
	int rc = sym_fab_send(conn, buf, n);
	if (rc && rc != -ENOTCONN)
		sym_rt_error(who, "sending a %s message failed: %s", sym_wire_type_name(m->type), strerror(-rc));
	return rc;
}

/* The process's fabric and who it is, for the refusal log and the metrics (one per process). */
static struct sym_fab *rt_fab;
static uint64_t rt_refused_logged;
static char rt_revoked_path[1100]; /* read again on SIGHUP, or "" */

void sym_rt_set_revocation(const char *path)
{
	snprintf(rt_revoked_path, sizeof(rt_revoked_path), "%s", path ? path : "");
}

/* SIGHUP: the revoked serials read again; the connections of members now
 * revoked close. A bad file keeps the list in use. */
static void reload_revoked(void)
{
	if (!rt_fab || !rt_revoked_path[0])
		return;
	const char *who = rt_who ? rt_who : "symphony";
	struct sym_revoked r;
	char err[1400];
	if (sym_revoked_load(rt_revoked_path, true, &r, err, sizeof(err))) {
		sym_rt_warn(who, "SIGHUP: %s; the revoked serials in use stay", err);
		return;
	}
	int closed = sym_fab_set_revoked(rt_fab, &r);
	if (closed < 0)
		sym_rt_error(who, "SIGHUP: out of memory for the revoked serials; the ones in use stay");
	else
		sym_rt_log(who, "SIGHUP: %zu revoked serial%s from %s; %d connection%s closed", r.n, r.n == 1 ? "" : "s",
			   rt_revoked_path, closed, closed == 1 ? "" : "s");
	sym_revoked_free(&r);
}

static void on_stop_fd(struct sym_loop_io *io, uint32_t events, void *ctx)
{
	(void)events, (void)ctx;
	uint64_t v;
	if (read(sym_loop_io_fd(io), &v, sizeof(v)) < 0)
		v = 0; /* drained already */
	if (rt_term == 1 && !sym_rt_stop) {
		rt_term = 2;
		drain_fn(drain_ctx);
	}
	if (rt_reload) {
		rt_reload = 0;
		reload_revoked();
		if (reload_fn)
			reload_fn(reload_ctx);
		else if (!rt_fab || !rt_revoked_path[0])
			sym_rt_log(rt_who ? rt_who : "symphony", "SIGHUP: nothing to reload in this process; ignored");
	}
}

static struct sym_http *rt_metrics_srv; /* the metrics listener, or NULL: /metrics on the API port */
static char rt_metrics_port[16];
static void (*rt_metrics_write)(void *ctx, struct sym_buf *b);
static void *rt_metrics_ctx;
static bool (*rt_ready)(void *ctx, char *why, size_t len); /* sym_rt_set_ready, or NULL */
static void *rt_ready_ctx;

void sym_rt_set_ready(bool (*ready)(void *ctx, char *why, size_t len), void *ctx)
{
	rt_ready = ready;
	rt_ready_ctx = ctx;
}

static void serve_metrics(struct sym_http_req *r, void (*write)(void *ctx, struct sym_buf *b), void *ctx, bool here);

static void (*rt_admin)(void *ctx, struct sym_http_req *r); /* sym_rt_set_admin, or NULL */
static void *rt_admin_ctx;

void sym_rt_set_admin(void (*admin)(void *ctx, struct sym_http_req *r), void *ctx)
{
	rt_admin = admin;
	rt_admin_ctx = ctx;
}

static void on_metrics_http(void *ctx, struct sym_http_req *r)
{
	(void)ctx;
	if (rt_admin && !strncmp(sym_http_path(r), "/v2/admin/", 10))
		rt_admin(rt_admin_ctx, r);
	else
		serve_metrics(r, rt_metrics_write, rt_metrics_ctx, true);
}

int sym_rt_metrics_start(const struct sym_cluster *c, int role, int id, const char *host,
			 void (*write)(void *ctx, struct sym_buf *b), void *ctx, char *err, size_t errlen)
{
	if (!sym_cluster_metrics_port(c, role, id, rt_metrics_port, sizeof(rt_metrics_port)))
		return 0;
	rt_metrics_write = write;
	rt_metrics_ctx = ctx;
	/* metrics are scraped by a few collectors: a small connection limit of their own, plain HTTP */
	struct sym_http_cfg hc = { .host = host, .port = rt_metrics_port, .body_max = 4096, .handler = on_metrics_http,
				   .conn_max = 64, .timeout_s = (unsigned)(c->http_timeout_s + 0.5),
				   .min_rate = (unsigned)c->client_min_rate };
	return sym_http_start(&rt_metrics_srv, &hc, err, errlen);
}

/* Once a second: peers the fabric refused since the last look, in one line
 * (a flood of them is one line a second, not one each). */
static void on_guard(struct sym_loop_timer *t, void *ctx)
{
	(void)t, (void)ctx;
	char last[200];
	uint64_t n = sym_fab_refused(rt_fab, last, sizeof(last));
	if (n == rt_refused_logged)
		return;
	sym_rt_warn(rt_who, "refused %" PRIu64 " fabric peer%s in the last second (%" PRIu64 " in all); the last: %s",
		    n - rt_refused_logged, n - rt_refused_logged == 1 ? "" : "s", n, last);
	rt_refused_logged = n;
}

int sym_rt_loop(struct sym_loop **out, const char *who, struct sym_fab *fab,
		void (*on_fab)(void *ctx, const struct sym_fab_event *ev), struct sym_http *http, void *ctx)
{
	char err[256];
	int rc = sym_loop_create(out, err, sizeof(err));
	if (rc) {
		sym_rt_error(who, "%s", err);
		return rc;
	}
	sym_loop_stop_on(*out, &sym_rt_stop);
	rt_who = who;
	struct sym_loop_io *io;
	if ((stop_fd >= 0 && (rc = sym_loop_io_start(*out, stop_fd, EPOLLIN, on_stop_fd, NULL, &io))) ||
	    (fab && (rc = sym_loop_fab(*out, fab, on_fab, ctx))) || (http && (rc = sym_loop_http(*out, http))) ||
	    (rt_metrics_srv && (rc = sym_loop_http(*out, rt_metrics_srv)))) {
		sym_rt_error(who, "event loop: %s", strerror(-rc));
		sym_loop_destroy(*out);
		*out = NULL;
		return rc;
	}
	struct sym_loop_timer *guard;
	if (fab && !(rc = sym_loop_timer_new(*out, on_guard, NULL, &guard))) {
		rt_fab = fab;
		sym_loop_timer_set(guard, sym_monotonic_ns() + 1000000000LL, 1000000000LL);
	}
	if (rc) {
		sym_rt_error(who, "event loop: %s", strerror(-rc));
		sym_loop_destroy(*out);
		*out = NULL;
	}
	return rc;
}

int sym_rt_beat(const char *who, const struct sym_cluster *c, struct sym_fab_conn *conn, int id, uint32_t term,
		uint64_t *seq, sym_time heard, sym_time polled, char *why, size_t len)
{
	sym_time quiet = polled - heard;
	if (quiet > sym_rt_schedd_silence(c))
		return snprintf(why, len, "silent for %.1f ms", (double)quiet / 1e6), -1;
	if (sym_rt_heartbeat(who, conn, id, term, seq))
		return snprintf(why, len, "heartbeat not sent"), -1;
	return 0;
}

int sym_rt_http_start(struct sym_http **out, const struct sym_cluster *c, const char *host, const char *port,
		      size_t body_max, void (*handler)(void *ctx, struct sym_http_req *r), void *ctx, char *err,
		      size_t errlen)
{
	struct sym_http_cfg hc = { .host = host, .port = port, .body_max = body_max, .handler = handler, .ctx = ctx,
				   .conn_max = (unsigned)c->http_conn_max, .timeout_s = (unsigned)(c->http_timeout_s + 0.5),
				   .per_ip_max = (unsigned)c->http_per_ip_max, .min_rate = (unsigned)c->client_min_rate,
				   .body_budget = c->http_body_budget };
	char *cert = NULL, *key = NULL;
	long rc = 0;
	if (c->http_tls_cert[0] && (rc = sym_file_read(c->http_tls_cert, 1 << 20, false, &cert, err, errlen)) >= 0)
		rc = sym_file_read(c->http_tls_key, 1 << 20, true, &key, err, errlen);
	if (rc >= 0) {
		hc.tls_cert = cert;
		hc.tls_key = key;
		rc = sym_http_start(out, &hc, err, errlen);
	}
	if (key)
		sodium_memzero(key, strlen(key));
	free(cert);
	free(key);
	return (int)rc;
}

int sym_rt_heartbeat(const char *who, struct sym_fab_conn *conn, int id, uint32_t term, uint64_t *seq)
{
	struct sym_msg h = { .type = SYM_MSG_HEARTBEAT, .term = term };
	h.u.heartbeat.id = (uint32_t)id;
	h.u.heartbeat.seq = ++*seq;
	return sym_rt_send(who, conn, &h, NULL, NULL);
}

void sym_rt_metrics_close(void)
{
	sym_http_stop(rt_metrics_srv);
	rt_metrics_srv = NULL;
}

/* The process_* metrics of the Prometheus client libraries (from /proc),
 * and the fabric's refusals. */
static void process_metrics(struct sym_buf *b)
{
	long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	char stat[1024] = "";
	FILE *f = fopen("/proc/self/stat", "r");
	if (f) {
		if (!fgets(stat, sizeof(stat), f))
			stat[0] = '\0';
		fclose(f);
	}
	/* the fields after the command, which may hold spaces: state is field 3 */
	const char *p = strrchr(stat, ')');
	unsigned long long utime = 0, stime = 0, start = 0, vsize = 0;
	long long rss = 0;
	if (p && tick > 0 &&
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu %llu %lld",
		   &utime, &stime, &start, &vsize, &rss) == 5) {
		struct timespec rt, mono;
		clock_gettime(CLOCK_REALTIME, &rt);
		clock_gettime(CLOCK_BOOTTIME, &mono);
		double boot = (double)rt.tv_sec + rt.tv_nsec / 1e9 - ((double)mono.tv_sec + mono.tv_nsec / 1e9);
		sym_prom_family(b, "process_cpu_seconds_total", "counter", "User and system CPU time spent in seconds");
		sym_prom_sample(b, "process_cpu_seconds_total", NULL, (double)(utime + stime) / (double)tick);
		sym_prom_family(b, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes");
		sym_prom_sample(b, "process_resident_memory_bytes", NULL, (double)rss * (double)page);
		sym_prom_family(b, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes");
		sym_prom_sample(b, "process_virtual_memory_bytes", NULL, (double)vsize);
		sym_prom_family(b, "process_start_time_seconds", "gauge",
				"Start time of the process since the Unix epoch in seconds");
		sym_prom_sample(b, "process_start_time_seconds", NULL, boot + (double)start / (double)tick);
	}
	DIR *d = opendir("/proc/self/fd");
	if (d) {
		long n = -1; /* the directory's own descriptor */
		while (readdir(d))
			n++;
		closedir(d);
		sym_prom_family(b, "process_open_fds", "gauge", "Number of open file descriptors");
		sym_prom_sample(b, "process_open_fds", NULL, (double)(n - 2)); /* less . and .. */
	}
	struct rlimit rl;
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		sym_prom_family(b, "process_max_fds", "gauge", "Maximum number of open file descriptors");
		sym_prom_sample(b, "process_max_fds", NULL, rl.rlim_cur == RLIM_INFINITY ? -1 : (double)rl.rlim_cur);
	}
	if (rt_fab) {
		sym_prom_family(b, "symphony_fabric_refused_peers_total", "counter",
				"Fabric peers refused, by reason: protocol (not the handshake), credential (not signed by "
				"the cluster's CA, a wrong signature), identity (another role or id than meant: a relay), "
				"revoked, timeout, flood (too many authenticating from one address or in all), message "
				"(a message after the handshake failed authentication)");
		uint64_t counts[SYM_FAB_REFUSE_N];
		sym_fab_refusals(rt_fab, counts);
		for (int i = 0; i < SYM_FAB_REFUSE_N; i++) {
			const char *l[] = { "reason", sym_fab_refusal_name(i), NULL };
			sym_prom_sample(b, "symphony_fabric_refused_peers_total", l, (double)counts[i]);
		}
	}
}

void sym_rt_serve_metrics(struct sym_http_req *r, void (*write)(void *ctx, struct sym_buf *b), void *ctx)
{
	serve_metrics(r, write, ctx, !rt_metrics_srv);
}

static void serve_metrics(struct sym_http_req *r, void (*write)(void *ctx, struct sym_buf *b), void *ctx, bool here)
{
	const char *path = sym_http_path(r), *meth = sym_http_method(r);
	bool get = !strcmp(meth, "GET") || !strcmp(meth, "HEAD");
	if (!here && !strcmp(path, "/metrics")) {
		sym_http_reply_error(r, 404, "/metrics is served on port %s (metrics_base)", rt_metrics_port);
		return;
	}
	bool ready = rt_ready && !strcmp(path, "/v2/health/ready");
	if (strcmp(path, "/metrics") && strcmp(path, "/v2/health/live") && !ready) {
		sym_http_reply_error(r, 404, "no such endpoint: %s %s (this process serves /metrics, /v2/health/live%s)",
				     meth, path, rt_ready ? ", /v2/health/ready" : "");
		return;
	}
	if (!get) {
		sym_http_reply_method(r, "GET, HEAD");
		return;
	}
	if (!strcmp(path, "/v2/health/live")) {
		static const char live[] = "{\"live\":true}";
		sym_http_reply(r, 200, "application/json", live, sizeof(live) - 1, NULL);
		return;
	}
	if (ready) {
		char why[256] = "";
		bool ok = rt_ready(rt_ready_ctx, why, sizeof(why));
		cJSON *o = cJSON_CreateObject();
		cJSON_AddBoolToObject(o, "ready", ok);
		if (!ok)
			cJSON_AddStringToObject(o, "reason", why);
		sym_http_reply_json(r, ok ? 200 : 503, o);
		return;
	}
	struct sym_buf b = { 0 };
	write(ctx, &b);
	process_metrics(&b);
	if (b.oom)
		sym_http_reply_error(r, 500, "out of memory");
	else
		sym_http_reply(r, 200, "text/plain; version=0.0.4; charset=utf-8", b.p, b.len, NULL);
	sym_buf_free(&b);
}

int sym_rt_reload_cluster(struct sym_cluster *c, const struct sym_rt_opts *o, char *done, size_t donelen, char *err,
			  size_t errlen)
{
	done[0] = '\0';
	if (!o->config_path || !strcmp(o->config_path, "-"))
		return snprintf(err, errlen, "the cluster was read from %s: nothing to read again",
				o->config_path ? "standard input" : "flags only"), -EINVAL;
	struct sym_cluster fresh;
	if (sym_cluster_init(&fresh))
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	char e2[1024];
	int rc = sym_cluster_load_file(&fresh, o->config_path, e2, sizeof(e2));
	for (size_t i = 0; !rc && i < o->nflags; i++)
		if ((rc = sym_cluster_apply_flag(&fresh, o->flag_name[i], o->flag_val[i], e2, sizeof(e2))) == 1)
			rc = 0; /* (not a cluster flag: the process's own) */
	if (!rc)
		rc = sym_cluster_resolve(&fresh, e2, sizeof(e2));
	if (rc)
		snprintf(err, errlen, "%s", e2);
	else
		rc = sym_cluster_reload(c, &fresh, done, donelen, err, errlen);
	sym_cluster_finish(&fresh);
	if (rc > 0)
		sym_http_set_limits(rt_metrics_srv, 0, c->http_body_budget, (unsigned)c->client_min_rate);
	return rc < 0 ? -EINVAL : rc;
}
