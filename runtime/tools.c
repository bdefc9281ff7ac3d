#include "runtime/rt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "experiment/output.h"
#include "runtime/benchsched.h"
#include "runtime/executor.h"
#include "runtime/fabbench.h"
#include "runtime/fabric.h"
#include "runtime/http.h"
#include "runtime/prom.h"
#include "sym_version.h"

volatile sig_atomic_t sym_rt_stop;

static void on_signal(int sig)
{
	(void)sig;
	sym_rt_stop = 1;
}

void sym_rt_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static sym_time log_t0;

void sym_rt_log(const char *who, const char *fmt, ...)
{
	sym_time now = sym_monotonic_ns();
	if (!log_t0)
		log_t0 = now;
	char line[1024];
	int n = snprintf(line, sizeof(line), "[%11.6f] %s: ", (double)(now - log_t0) / 1e9, who);
	va_list ap;
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", line);
}

int sym_rt_send(const char *who, struct sym_fab_conn *conn, const struct sym_msg *m,
		const struct sym_wire_input *inputs, const uint16_t *models)
{
	uint8_t buf[SYM_FAB_MSG_MAX];
	size_t n = sym_wire_encode(m, inputs, models, buf, sizeof(buf));
	if (!n) {
		sym_rt_log(who, "cannot encode a %s message (out of bounds)", sym_wire_type_name(m->type));
		return -EINVAL;
	}
	int rc = sym_fab_send(conn, buf, n);
	if (rc && rc != -ENOTCONN)
		sym_rt_log(who, "sending a %s message failed: %s", sym_wire_type_name(m->type), strerror(-rc));
	return rc;
}

void sym_rt_close(struct sym_rt_closed *cl, struct sym_fab_conn *c)
{
	if (cl->n < (int)(sizeof(cl->c) / sizeof(cl->c[0])))
		cl->c[cl->n++] = c;
	else
		cl->overflow = true;
	sym_fab_close(c);
}

bool sym_rt_was_closed(const struct sym_rt_closed *cl, const struct sym_fab_conn *c)
{
	if (cl->overflow)
		return true;
	for (int i = 0; i < cl->n; i++)
		if (cl->c[i] == c)
			return true;
	return false;
}

static const struct {
	const char *name, *summary, *usage, *more;
} cmds[] = {
	{ "schedd", "the scheduler daemon: the core on the monotonic clock, plans to backends",
	  "symphony schedd [CLUSTER.json] [--threads N] [--json STATS] [FLAGS]",
	  "Listens on the cluster's scheduler address. Frontends send request metadata; schedd runs the\n"
	  "scheduling core (the policy of the configuration) on --threads threads and sends each batch plan\n"
	  "to its backend and each drop notice to its frontend. A backend or frontend silent for failure_ms\n"
	  "is removed: the requests of a failed backend's running batch are answered with an error, a lost\n"
	  "frontend's queued requests are dropped. --json writes its counters at exit (SIGINT/SIGTERM).\n" },
	{ "frontend", "holds request inputs in registered memory, answers clients exactly once",
	  "symphony frontend [CLUSTER.json] --id I [FLAGS]",
	  "Frontend I accepts clients on its client address (the native protocol: wire-format REQUEST\n"
	  "and ANSWER messages over TCP), keeps each input in a registered pool that backends read with\n"
	  "one-sided RMA reads, sends the metadata to schedd, and answers each request exactly once: its\n"
	  "output, or why there is none (dropped, backend failed, overloaded, scheduler unreachable).\n" },
	{ "backend", "one emulated GPU: reads a plan's inputs with RMA, runs it, returns outputs",
	  "symphony backend [CLUSTER.json] --id I [FLAGS]",
	  "Backend I is GPU I of the cluster (its kind and profiles). It registers with schedd; for each\n"
	  "plan it reads every input from its frontend with an RMA read, runs the batch on its executor at\n"
	  "the planned start (emulated: l(b) from the profile), sends each output to its frontend and\n"
	  "reports completion to schedd.\n" },
	{ "loadgen", "an open-loop client: the simulator's workload, in real time, against frontends",
	  "symphony loadgen [CLUSTER.json] [--rate R] [--duration S] [--json FILE] [FLAGS]",
	  "Sends the workload of the configuration (models, rate, arrival process, popularity, rate\n"
	  "segments, seed: the arrival times `symphony sim` draws) to the frontends in turn, checks every\n"
	  "output, and reports the metrics and JSON schema of `symphony sim` (latency measured at the\n"
	  "client; queueing delay is not observed). Exits 1 when a request got no answer or a wrong one.\n" },
	{ "bench-sched", "the scheduler's capacity: requests/s it sustains in real time, 1..N threads",
	  "symphony bench-sched [--threads LIST] [--models M] [--gpus G] [--json FILE]", NULL },
	{ "fabbench", "the transport's control round trip and 150 KB RMA read latency on loopback",
	  "symphony fabbench [--provider NAME] [--iters N] [--size BYTES] [--json FILE]", NULL },
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

bool sym_rt_is_command(const char *cmd)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (!strcmp(cmds[i].name, cmd))
			return true;
	return false;
}

void sym_rt_usage(FILE *f, const char *cmd)
{
	if (!cmd) {
		for (size_t i = 0; i < NCMDS; i++)
			fprintf(f, "  %-11s %s\n", cmds[i].name, cmds[i].summary);
		return;
	}
	for (size_t i = 0; i < NCMDS; i++) {
		if (strcmp(cmds[i].name, cmd))
			continue;
		if (cmds[i].more)
			fprintf(f, "usage: %s\n\n%s - %s\n", cmds[i].usage, cmds[i].name, cmds[i].summary);
		if (!cmds[i].more) { /* these two parse their own options */
			char *av[] = { (char *)cmd, (char *)"--help", NULL };
			fflush(f);
			if (!strcmp(cmd, "bench-sched"))
				sym_benchsched_main(2, av);
			else
				sym_fabbench_main(2, av);
			return;
		}
		fprintf(f, "\n%s\n", cmds[i].more);
		fprintf(f, "process options:\n"
			   "  --id I                   this frontend's or backend's index in the cluster\n"
			   "  --json FILE              (schedd, loadgen) the result object, \"-\" for stdout\n"
			   "  --quiet                  no informational lines\n"
			   "  --verbose                log every connection event\n"
			   "  --check                  check the configuration and exit\n"
			   "cluster options (also the \"runtime\" object of the file):\n");
		sym_cluster_print_flags(f);
		fprintf(f, "and every configuration flag of `symphony help config` (models, slo, policy, rate, ...).\n");
	}
}

int sym_rt_main(int argc, char **argv)
{
	const char *cmd = argv[0];
	if (!strcmp(cmd, "bench-sched"))
		return sym_benchsched_main(argc, argv);
	if (!strcmp(cmd, "fabbench"))
		return sym_fabbench_main(argc, argv);
	struct sym_rt_opts o = { .cmd = cmd, .id = -1 };
	struct sym_cluster c;
	if (sym_cluster_init(&c)) {
		fprintf(stderr, "symphony %s: out of memory\n", cmd);
		return 1;
	}
	char err[1024] = "";
	int rc = 0;
	/* The file first, then the flags over it, wherever they stand. */
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1] == '-') {
			if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "--verbose") || !strcmp(argv[i], "--help") ||
			    !strcmp(argv[i], "--check"))
				continue;
			i++;
			continue;
		}
		if (o.config) {
			fprintf(stderr, "symphony %s: more than one cluster file ('%s' and '%s')\n", cmd, o.config, argv[i]);
			rc = 2;
			goto out;
		}
		o.config = argv[i];
	}
	if (o.config && sym_cluster_load_file(&c, o.config, err, sizeof(err))) {
		fprintf(stderr, "symphony %s: %s\n", cmd, err);
		rc = 2;
		goto out;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || a[1] != '-')
			continue;
		if (!strcmp(a, "--help")) {
			sym_rt_usage(stdout, cmd);
			goto out;
		}
		if (!strcmp(a, "--quiet")) {
			o.quiet = true;
			continue;
		}
		if (!strcmp(a, "--verbose")) {
			o.verbose = true;
			continue;
		}
		if (!strcmp(a, "--check")) {
			o.check = true;
			continue;
		}
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v) {
			fprintf(stderr, "symphony %s: option %s needs a value\n", cmd, a);
			rc = 2;
			goto out;
		}
		i++;
		if (!strcmp(a, "--id")) {
			char *end;
			errno = 0;
			long id = strtol(v, &end, 10);
			if (*end || errno || id < 0 || id > 65535 || end == v) {
				fprintf(stderr, "symphony %s: option --id: expected an index from 0, got '%s'\n", cmd, v);
				rc = 2;
				goto out;
			}
			o.id = (int)id;
			continue;
		}
		if (!strcmp(a, "--json")) {
			o.json = v;
			if (sym_output_check("option --json", v, err, sizeof(err))) { /* before running, not at exit */
				fprintf(stderr, "symphony %s: %s\n", cmd, err);
				rc = 2;
				goto out;
			}
			continue;
		}
		int r = sym_cluster_apply_flag(&c, a + 2, v, err, sizeof(err));
		if (r == 1) {
			fprintf(stderr, "symphony %s: unknown option %s (see symphony help %s)\n", cmd, a, cmd);
			rc = 2;
			goto out;
		}
		if (r) {
			fprintf(stderr, "symphony %s: %s\n", cmd, err);
			rc = 2;
			goto out;
		}
	}
	if (sym_cluster_resolve(&c, err, sizeof(err))) {
		fprintf(stderr, "symphony %s: %s\n", cmd, err);
		rc = 2;
		goto out;
	}
	bool needs_id = !strcmp(cmd, "frontend") || !strcmp(cmd, "backend");
	int nid = !strcmp(cmd, "frontend") ? c.nfrontends : c.nbackends;
	if (needs_id && (o.id < 0 || o.id >= nid)) {
		fprintf(stderr, "symphony %s: --id must be given, from 0 to %d (the cluster has %d %ss)\n", cmd,
			nid - 1, nid, cmd);
		rc = 2;
		goto out;
	}
	if (o.check) {
		printf("%s: the configuration is valid (%zu models, %d frontends, %d backends, schedd at %s:%s)\n", cmd,
		       c.exp.nmodels, c.nfrontends, c.nbackends, c.schedd.host, c.schedd.port);
		goto out;
	}
	sym_rt_signals();
	/* Timers to the microsecond (the default slack is 50 us): deferred
	 * batches have only alpha of slack, and precise sleeps let the emulated
	 * executor spin less. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	if (!strcmp(cmd, "schedd"))
		rc = sym_schedd_run(&c, &o);
	else if (!strcmp(cmd, "frontend"))
		rc = sym_frontend_run(&c, &o);
	else if (!strcmp(cmd, "backend"))
		rc = sym_backend_run(&c, &o);
	else if (!strcmp(cmd, "loadgen"))
		rc = sym_loadgen_run(&c, &o);
	else {
		fprintf(stderr, "symphony: unknown runtime command '%s'\n", cmd);
		rc = 2;
	}
out:
	sym_cluster_finish(&c);
	return rc;
}

void sym_rt_serve_metrics(struct sym_http_req *r, void (*write)(void *ctx, struct sym_buf *b), void *ctx)
{
	const char *path = sym_http_path(r), *meth = sym_http_method(r);
	bool get = !strcmp(meth, "GET") || !strcmp(meth, "HEAD");
	if (strcmp(path, "/metrics") && strcmp(path, "/v2/health/live")) {
		sym_http_reply_error(r, 404, "no such endpoint: %s %s (this process serves /metrics)", meth, path);
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
	struct sym_buf b = { 0 };
	write(ctx, &b);
	if (b.oom)
		sym_http_reply_error(r, 500, "out of memory");
	else
		sym_http_reply(r, 200, "text/plain; version=0.0.4; charset=utf-8", b.p, b.len, NULL);
	sym_buf_free(&b);
}
