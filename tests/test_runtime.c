/* Integration tests of the runtime: schedd, 2 frontends and 4 emulated
 * backends as real processes on loopback, driven by loadgen.
 *
 * argv[1] is the symphony binary. Every process writes its log into a
 * temporary directory, which is printed (and kept) when a test fails. Ports
 * come from the test's pid so that parallel runs do not collide. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "runtime/auth.h"
#include "runtime/cred.h"
#include "runtime/executor.h"
#include "runtime/fabric.h"
#include "runtime/net.h"
#include "runtime/wire.h"

static const char *bin;
static char dir[256];
static char cfg[300];
static char keys[300]; /* the cluster's keys (symphony keygen cluster) */
static char port[16];
static bool passed; /* set at the end of a test: its logs are removed */
static const char *scheme = "http"; /* curl's: https when a test turns TLS on */
/* Late or dropped requests allowed at low load: none, except in a ThreadSanitizer build
 * (SYM_TEST_TIMING=loose, set by scripts/test), whose instrumented processes run many times
 * slower: there 1% (the races are what that build checks). */
static double low_load_bad_allowed;

#define NFE 2
#define NBE 4
static int start_backends = NBE; /* backends cluster_start starts (ids 0..start_backends-1) */

struct cluster {
	pid_t schedd, fe[NFE], be[NBE];
};

#include "tests/rtutil.h"

/* The number written just before the last occurrence of pat in the file
 * ("..., 3 answered by the safety net"); fails the test when there is none. */
static double log_count_before(const char *name, const char *pat)
{
	char *s = slurp(name), *at = NULL;
	for (char *p = s; p && (p = strstr(p, pat)); p += strlen(pat))
		at = p;
	assert_non_null(at);
	char *b = at;
	while (b > s && (isdigit((unsigned char)b[-1])))
		b--;
	assert_true(b < at);
	double v = strtod(b, NULL);
	free(s);
	return v;
}

/* The number written just after the first occurrence of pat in the file (a metric's value,
 * pat ending with its labels and the space); fails the test when there is none. */
static int metric_value(const char *name, const char *pat)
{
	char *s = slurp(name);
	char *at = s ? strstr(s, pat) : NULL;
	if (!at)
		fail_msg("no '%s' in %s", pat, name);
	int v = atoi(at + strlen(pat));
	free(s);
	return v;
}

static int infer_retried[8][2]; /* curl_infer's retries by port offset: [0] 503s, [1] 504s (reset by setup) */
static struct cluster running;  /* the last cluster started, stopped by the teardown when a test failed */
static bool is_running;
static pid_t standby_pid = -1;  /* a standby scheduler not (yet) in `running`: killed by the teardown */
static int cluster_stop(struct cluster *c);

/* Options cluster_start gives every process besides its own (NULL-terminated; test_json_logs). */
static const char *proc_extra[5];

/* a[] (NULL-terminated, room for 5 more) with proc_extra appended. */
static const char **with_extra(const char **a)
{
	int n = 0;
	while (a[n])
		n++;
	for (int i = 0; proc_extra[i]; i++)
		a[n++] = proc_extra[i];
	a[n] = NULL;
	return a;
}

static void cluster_start(struct cluster *c)
{
	/* fresh logs: the start is judged by what schedd.log says (a repeated run appended to the
	 * old one would look up at once) */
	const char *logs[] = { "schedd.log", "frontend0.log", "frontend1.log", "backend0.log", "backend1.log",
			       "backend2.log", "backend3.log" };
	for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		char path[640];
		snprintf(path, sizeof(path), "%s/%s", dir, logs[i]);
		unlink(path);
	}
	const char *sa[10] = { "schedd", cfg, "--json", "schedd.json", NULL };
	char sjson[400];
	snprintf(sjson, sizeof(sjson), "%s/schedd.json", dir);
	sa[3] = sjson;
	c->schedd = spawn("schedd.log", with_extra(sa));
	for (int i = 0; i < NFE; i++) {
		char id[8], log[32];
		snprintf(id, sizeof(id), "%d", i);
		snprintf(log, sizeof(log), "frontend%d.log", i);
		const char *a[10] = { "frontend", cfg, "--id", id, NULL };
		c->fe[i] = spawn(log, with_extra(a));
	}
	for (int i = 0; i < NBE; i++) {
		char id[8], log[32];
		snprintf(id, sizeof(id), "%d", i);
		snprintf(log, sizeof(log), "backend%d.log", i);
		const char *a[10] = { "backend", cfg, "--id", id, NULL };
		c->be[i] = i < start_backends ? spawn(log, with_extra(a)) : -1;
	}
	double end = now_s() + 20;
	/* (with sub-clusters a backend's GPU goes online once it loaded its models) */
#define ONLINE() (count_in("schedd.log", "registered: GPU") + count_in("schedd.log", "loaded the models of sub-cluster"))
	while (now_s() < end && (ONLINE() < start_backends ||
				 count_in("schedd.log", "frontend 1 registered") + count_in("schedd.log", "frontend 0 registered") < NFE))
		sleep_ms(50);
	running = *c;
	is_running = true;
	assert_int_equal(ONLINE(), start_backends);
#undef ONLINE
}

/* Fails if a process's log holds a report of AddressSanitizer, LeakSanitizer or
 * UndefinedBehaviorSanitizer (in a sanitizer build, the processes are instrumented too). */
static void assert_no_sanitizer_reports(void)
{
	const char *logs[] = { "schedd.log", "frontend0.log", "frontend1.log", "backend0.log", "backend1.log",
			       "backend2.log", "backend3.log", "loadgen.log", "autoscale.log" };
	const char *pats[] = { "ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:" };
	for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++)
		for (size_t k = 0; k < sizeof(pats) / sizeof(pats[0]); k++)
			if (count_in(logs[i], pats[k]))
				fail_msg("%s/%s reports '%s'", dir, logs[i], pats[k]);
}

/* Stops everything (SIGTERM, then SIGKILL), schedd first so that its
 * counters do not include the others leaving; returns schedd's exit status. */
static int cluster_stop(struct cluster *c)
{
	is_running = false;
	kill(c->schedd, SIGTERM);
	int st = wait_for(c->schedd, 10);
	for (int i = 0; i < NBE; i++)
		if (c->be[i] > 0)
			kill(c->be[i], SIGTERM);
	for (int i = 0; i < NFE; i++)
		if (c->fe[i] > 0)
			kill(c->fe[i], SIGTERM);
	for (int i = 0; i < NBE; i++)
		if (c->be[i] > 0)
			wait_for(c->be[i], 10);
	for (int i = 0; i < NFE; i++)
		if (c->fe[i] > 0)
			wait_for(c->fe[i], 10);
	assert_no_sanitizer_reports();
	if (st != 0) { /* say why here: CI shows this output, not the logs kept */
		char *log = slurp("schedd.log");
		size_t n = log ? strlen(log) : 0;
		fprintf(stderr, "schedd exited with status %d; the end of its log:\n%s\n", st,
			log ? log + (n > 3000 ? n - 3000 : 0) : "(none)");
		free(log);
	}
	return st;
}

static cJSON *load_json(const char *name)
{
	char *s = slurp(name);
	assert_non_null(s);
	cJSON *j = cJSON_Parse(s);
	free(s);
	assert_non_null(j);
	return j;
}

static double num(const cJSON *o, const char *path)
{
	char buf[200];
	snprintf(buf, sizeof(buf), "%s", path);
	const cJSON *cur = o;
	for (char *tok = strtok(buf, "."); tok && cur; tok = strtok(NULL, "."))
		cur = cJSON_GetObjectItemCaseSensitive(cur, tok);
	if (!cJSON_IsNumber(cur))
		fail_msg("no number at %s", path);
	return cur->valuedouble;
}

/* Runs loadgen at rate for duration seconds into name (JSON); returns its exit status. */
/* loadgen writing DIR/name; quiet: without its start line ("N s at R req/s over M models ...") */
static pid_t loadgen_spawn(const char *name, const char *rate, const char *duration, const char *warmup, bool quiet)
{
	char out[400];
	snprintf(out, sizeof(out), "%s/%s", dir, name);
	const char *a[] = { "loadgen", cfg, "--rate", rate, "--duration", duration, "--warmup", warmup,
			    "--json", out, quiet ? "--quiet" : NULL, NULL };
	return spawn("loadgen.log", a);
}

static pid_t loadgen_start_warm(const char *name, const char *rate, const char *duration, const char *warmup)
{
	return loadgen_spawn(name, rate, duration, warmup, true);
}

static pid_t loadgen_start(const char *name, const char *rate, const char *duration)
{
	return loadgen_start_warm(name, rate, duration, "0.5");
}

static int setup(void **state)
{
	(void)state;
	scheme = "http"; /* a failed TLS test must not leave its scheme to the next */
	memset(infer_retried, 0, sizeof(infer_retried));
	start_backends = NBE;
	snprintf(dir, sizeof(dir), "/tmp/symphony-rt-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	/* below the kernel's ephemeral range (32768 and up): a client's outgoing connection never
	 * holds a port a process of the test then listens on (backend 4's HTTP port once did) */
	snprintf(port, sizeof(port), "%d", 10000 + (int)(getpid() % 1000) * 20);
	snprintf(cfg, sizeof(cfg), "%s/cluster.json", dir);
	snprintf(keys, sizeof(keys), "%s/keys", dir);
	/* backends up to 7: tests add backends and members of their own */
	const char *kg[] = { "keygen", "cluster", keys, "--frontends", "2", "--backends", "8", "--standby", "--quiet", NULL };
	if (wait_for(spawn("keygen.log", kg), 10) != 0)
		return -1;
	FILE *f = fopen(cfg, "w");
	if (!f)
		return -1;
	/* A model with l(b) = 2.5 b + 2.5 ms on 4 emulated GPUs, SLO 40 ms: about 1,400 req/s of
	 * capacity. A deferred batch's window (frontrun to latest) is alpha = 2.5 ms, wider
	 * than the scheduler's wake-up lag on a busy machine under ThreadSanitizer. */
	fprintf(f, "{\"models\": [{\"name\": \"m\", \"alpha_ms\": 2.5, \"beta_ms\": 2.5}],\n"
		   " \"slo_ms\": 40, \"arrival\": \"poisson\", \"seed\": 7,\n"
		   /* Planning delays with room for the stalls of a shared CI machine (and of
		    * sanitizer builds), a few ms here: symphony defers each batch to its last
		    * moment, so without a margin one stall makes a request late. These tests
		    * check behaviour; scripts/fidelity checks timing with the measured defaults. */
		   " \"network\": {\"ctrl_ms\": 2, \"data_ms\": 0.05, \"resp_ms\": 4},\n"
		   " \"runtime\": {\"keys_dir\": \"%s\", \"frontends\": %d, \"backends\": %d, \"port_base\": %s,\n"
		   "             \"heartbeat_ms\": 10,\n"
		   "             \"failure_ms\": 50, \"pool_slots\": 512, \"input_max\": 4096, \"input_bytes\": 1000,\n"
		   "             \"http_body_max\": 65536, \"deadline_max_ms\": 1000, \"late_status\": 504}}\n",
		keys, NFE, NBE, port);
	fclose(f);
	return 0;
}

static void flood_stop(void);

static int teardown_dir(void **state)
{
	(void)state;
	flood_stop(); /* (a fabric flood a failed test left running) */
	if (is_running)
		cluster_stop(&running);
	if (standby_pid > 0) { /* a failed test's standby, which would hold its port in the next test */
		kill(standby_pid, SIGKILL);
		waitpid(standby_pid, NULL, 0);
	}
	standby_pid = -1;
	if (!passed) {
		fprintf(stderr, "logs kept in %s\n", dir);
		return 0;
	}
	passed = false;
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The stall rule of these tests: did the machine visibly stall a run? Yes when
 * loadgen sent (lg: its result, or NULL), schedd's timers fired or a backend's
 * completion came more than 2 ms late. Writes what it saw into why. */
static bool machine_stalled(const cJSON *lg, const cJSON *sd, char *why, size_t len)
{
	double send_ms = lg ? num(lg, "checks.send_lag_max_ms") : 0;
	double sched_ms = num(sd, "scheduler_lag_max_us") / 1e3, done_ms = num(sd, "completion_lag_max_us") / 1e3;
	snprintf(why, len, "loadgen sent up to %.2f ms late, schedd's timers fired up to %.2f ms late, batches "
		 "completed up to %.2f ms late", send_ms, sched_ms, done_ms);
	return send_ms > 2 || sched_ms > 2 || done_ms > 2;
}

static void config_replace(const char *from, const char *to);

/* Low load: every request answered exactly once, none bad. */
static void test_low_load(void **state)
{
	(void)state;
	/* A run counts only if the machine did not stall it: on a shared machine a process
	 * is sometimes not scheduled for several ms, which shows as loadgen sending late,
	 * schedd's timers firing late or a backend's completion coming late (at this load
	 * none should pass 2 ms); a bad request
	 * in such a run is the machine's, and the run is repeated (at most 3 times). A bad
	 * request in a run without a stall fails the test. Under ThreadSanitizer
	 * (low_load_bad_allowed > 0) a peer silent for failure_ms (50 ms) was removed in 8 of 10
	 * attempts in one half hour on this 2-core machine (a frontend, "silent for 50.5 ms"), 1-2 of
	 * 7 in the next: there failure_ms is 1 s, so that a stall shows as lateness, not removal. */
	if (low_load_bad_allowed > 0)
		config_replace("\"failure_ms\": 50,", "\"failure_ms\": 1000,");
	for (int attempt = 1;; attempt++) {
		struct cluster c;
		cluster_start(&c);
		pid_t lg = loadgen_start("low.json", "300", "3");
		int st = wait_for(lg, 30);
		int sst = cluster_stop(&c);
		assert_int_equal(st, 0);
		assert_int_equal(sst, 0);
		cJSON *j = load_json("low.json");
		cJSON *s = load_json("schedd.json");
		double req = num(j, "checks.requests");
		assert_true(req > 600 && req < 1200); /* Poisson, 300/s for 3 s */
		assert_int_equal((int)num(j, "checks.unanswered"), 0);
		/* a stall of failure_ms (50 ms) makes schedd remove a peer: a machine's stall too */
		double removed = num(s, "frontend_failures") + num(s, "backend_failures");
		if (removed > 0) {
			fprintf(stderr, "attempt %d: the machine stalled a process for over 50 ms (%.0f peers "
					"removed), again\n", attempt, removed);
			cJSON_Delete(j);
			cJSON_Delete(s);
			assert_true(attempt < 3);
			continue;
		}
		assert_int_equal((int)num(j, "checks.answered"), (int)req);
		assert_int_equal((int)num(j, "checks.unanswered"), 0);
		assert_int_equal((int)num(j, "checks.duplicate_answers"), 0);
		assert_int_equal((int)num(j, "checks.wrong_outputs"), 0);
		assert_true(num(j, "served") > 0);
		assert_true(num(j, "batch_size.mean") >= 1);
		assert_int_equal((int)num(s, "requests"), (int)req);
		assert_int_equal((int)num(s, "backend_failures"), 0);
		assert_int_equal((int)num(s, "rejected_messages"), 0);
		/* send-ahead: load packs onto the low GPU ids, so a due batch often goes to a GPU
		 * that is about to free (within the 2 ms control delay): its plan and inputs wait
		 * at the backend while the batch before it runs (about 1 in 8 batches here) */
		assert_true(num(s, "batches_planned_ahead") > 0);
		double bad = num(j, "late") + num(j, "dropped");
		char why[200];
		bool stalled = machine_stalled(j, s, why, sizeof(why));
		cJSON_Delete(j);
		cJSON_Delete(s);
		if (bad <= low_load_bad_allowed * req)
			break;
		fprintf(stderr, "attempt %d: %.0f bad of %.0f; %s%s\n", attempt, bad, req, why,
			stalled ? ": the machine stalled, again" : "");
		assert_true(stalled);
		assert_true(attempt < 3);
	}
	passed = true;
}

/* A backend killed mid-run: the requests of its batch are answered with an
 * error (exactly the ones schedd reports), every request is answered once,
 * and the other backends keep serving. */
static void test_kill_backend(void **state)
{
	(void)state;
	struct cluster c;
	cluster_start(&c);
	pid_t lg = loadgen_start("kill.json", "700", "4");
	sleep_ms(1800);
	kill(c.be[1], SIGKILL);
	waitpid(c.be[1], NULL, 0);
	c.be[1] = -1;
	int st = wait_for(lg, 40);
	int sst = cluster_stop(&c);
	assert_int_equal(st, 0);
	assert_int_equal(sst, 0);
	cJSON *s = load_json("schedd.json");
	assert_int_equal((int)num(s, "backend_failures"), 1);
	double failed = num(s, "failed_requests");
	cJSON_Delete(s);
	assert_true(count_in("schedd.log", "backend 1 removed") == 1);
	cJSON *j = load_json("kill.json");
	double req = num(j, "checks.requests");
	assert_int_equal((int)num(j, "checks.answered"), (int)req);
	assert_int_equal((int)num(j, "checks.duplicate_answers"), 0);
	assert_int_equal((int)num(j, "checks.wrong_outputs"), 0);
	/* measured from 0.5 s; the kill at about 1.8 s. 'backend failed' comes from schedd
	 * (the batches it had outstanding on the backend) or from a frontend's safety net:
	 * a batch whose completion reached schedd but whose outputs died with the backend
	 * (it reports the completion first) */
	double net = 0;
	for (int i = 0; i < 2; i++) {
		char name[32];
		snprintf(name, sizeof(name), "frontend%d.log", i);
		net += log_count_before(name, " answered by the safety net");
	}
	assert_int_equal((int)num(j, "checks.failed_by_status.backend failed"), (int)(failed + net));
	/* the run went on: most requests were served on time */
	assert_true(num(j, "served") > 0.8 * num(j, "offered"));
	cJSON_Delete(j);
	passed = true;
}

/* Replaces text `from` (which must be there) by `to` in the cluster file. */
static void config_replace(const char *from, const char *to)
{
	char *conf = slurp("cluster.json");
	char *at = conf ? strstr(conf, from) : NULL;
	assert_non_null(at);
	FILE *cf = fopen(cfg, "w");
	assert_non_null(cf);
	fprintf(cf, "%.*s%s%s", (int)(at - conf), conf, to, at + strlen(from));
	fclose(cf);
	free(conf);
}

/* What a fake fabric peer did: connected (its side), then what it saw. */
struct fake {
	bool connected, closed;
	int reads_ok, reads_failed;
	char reason[160];
};

/* A member's credential from the cluster's keys (issued by setup's keygen). */
static struct sym_cred member_cred(int role, uint32_t id)
{
	char ca[400], path[400], err[512];
	uint8_t pk[SYM_CRED_PK];
	struct sym_cred c = { 0 };
	snprintf(ca, sizeof(ca), "%s/ca.pub", keys);
	sym_cred_path(keys, role, id, path, sizeof(path));
	int rc = sym_ca_load(ca, pk, err, sizeof(err));
	if (!rc)
		rc = sym_cred_load(path, pk, &c, err, sizeof(err));
	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	return c;
}

/* A credential for role/id from a CA of its own (it believes the cluster's). */
static struct sym_cred foreign_cred(int role, uint32_t id)
{
	uint8_t pk[SYM_CRED_PK], sk[SYM_CRED_SK];
	struct sym_cred c, real = member_cred(SYM_CRED_SCHEDD, 0);
	sym_ca_mem(pk, sk);
	sym_cred_mem(pk, sk, role, id, 1, &c);
	memcpy(c.ca_pk, real.ca_pk, SYM_CRED_PK);
	return c;
}

/* A fake fabric peer: connects to 127.0.0.1:fport with credential `cred` (NULL: none),
 * wanting `want` (with a credential), sends
 * msg (len bytes) once connected, and, when nreads > 0, posts that many RMA reads of 64
 * bytes at offset 0 with keys 0, 1, 2, ... (the frontend's pool starts at offset 0 of its
 * registration). Waits until the connection closes or 5 s pass. */
static struct fake fake_peer(const char *fport, const struct sym_cred *cred, const struct sym_fab_peer *want,
			     const void *msg, size_t len, int nreads)
{
	struct fake r = { 0 };
	struct sym_fab *f;
	char err[512];
	assert_int_equal(sym_fab_open(&f, &(struct sym_fab_cfg){ .provider = "tcp", .cred = cred }, err, sizeof(err)),
			 0);
	static uint8_t buf[4096];
	struct sym_fab_mr *mr;
	assert_int_equal(sym_fab_mr_reg(f, buf, sizeof(buf), SYM_FAB_LOCAL_READ_TARGET, &mr, err, sizeof(err)), 0);
	struct sym_fab_conn *conn;
	assert_int_equal(sym_fab_connect(f, "127.0.0.1", fport, cred ? want : NULL, &conn, err, sizeof(err)), 0);
	double end = now_s() + 5;
	while (!r.closed && now_s() < end) {
		struct sym_fab_event ev[8];
		int n = sym_fab_poll(f, ev, 8);
		for (int i = 0; i < n; i++) {
			if (ev[i].type == SYM_FAB_CONNECTED) {
				r.connected = true;
				/* one fabric message per wire message it holds (the rest, garbage, as one) */
				for (size_t off = 0; off < len;) {
					struct sym_msg d;
					char why[128];
					long k = sym_wire_decode((const uint8_t *)msg + off, len - off, &d, why, sizeof(why));
					size_t part = k > 0 ? (size_t)k : len - off;
					assert_int_equal(sym_fab_send(conn, (const uint8_t *)msg + off, part), 0);
					off += part;
				}
				for (int k = 0; k < nreads; k++)
					assert_int_equal(sym_fab_read(conn, buf + 64 * k, 64, mr, 0, (uint64_t)k, NULL), 0);
			}
			if (ev[i].type == SYM_FAB_READ && ev[i].status == 0)
				r.reads_ok++;
			else if (ev[i].type == SYM_FAB_READ)
				r.reads_failed++;
			if (ev[i].type == SYM_FAB_CLOSED) {
				r.closed = true;
				snprintf(r.reason, sizeof(r.reason), "%s", ev[i].reason);
			}
		}
		if (!n)
			sym_fab_wait(f, 10);
	}
	sym_fab_close(conn);
	sym_fab_mr_close(mr);
	sym_fab_destroy(f);
	return r;
}

/* A member with credential `cred` connecting to frontend 0's fabric port as a backend would:
 * the key the frontend grants it (0: none within 5 s), and how many of its RMA reads with
 * key `use` (0: the granted one) succeed. */
static uint64_t member_reads(const char *fport, const struct sym_cred *cred, uint64_t use, int *reads_ok)
{
	struct sym_fab *f;
	char err[512];
	assert_int_equal(sym_fab_open(&f, &(struct sym_fab_cfg){ .provider = "tcp", .cred = cred }, err, sizeof(err)),
			 0);
	static uint8_t buf[1024];
	struct sym_fab_mr *mr;
	assert_int_equal(sym_fab_mr_reg(f, buf, sizeof(buf), SYM_FAB_LOCAL_READ_TARGET, &mr, err, sizeof(err)), 0);
	struct sym_fab_conn *conn;
	const struct sym_fab_peer fe0 = { SYM_CRED_FRONTEND, 0 };
	assert_int_equal(sym_fab_connect(f, "127.0.0.1", fport, &fe0, &conn, err, sizeof(err)), 0);
	uint64_t granted = 0;
	int done = 0, posted = 0;
	*reads_ok = 0;
	double end = now_s() + 5;
	while (now_s() < end && (posted == 0 || done < posted)) {
		struct sym_fab_event ev[8];
		int n = sym_fab_poll(f, ev, 8);
		for (int i = 0; i < n; i++) {
			struct sym_msg m;
			if (ev[i].type == SYM_FAB_MSG && sym_wire_decode(ev[i].data, ev[i].len, &m, err, sizeof(err)) > 0 &&
			    m.type == SYM_MSG_GRANT && !posted) {
				granted = m.u.grant.key;
				for (int k = 0; k < 4; k++) /* offset 0 of the pool, with the key to try */
					assert_int_equal(sym_fab_read(conn, buf + 64 * k, 64, mr, 0, use ? use : granted, NULL),
							 0);
				posted = 4;
			}
			if (ev[i].type == SYM_FAB_READ) {
				done++;
				*reads_ok += ev[i].status == 0;
			}
			if (ev[i].type == SYM_FAB_CLOSED)
				end = 0;
		}
		if (!n)
			sym_fab_wait(f, 10);
	}
	sym_fab_close(conn);
	sym_fab_mr_close(mr);
	sym_fab_destroy(f);
	return granted;
}

/* Two members on frontend 0's fabric port at once: each is granted a key; b then reads the
 * pool four times with a's key (through its own connection), and a with its own. Returns
 * how many of b's reads succeeded; *own_ok how many of a's. */
static int cross_reads(const char *fport, const struct sym_cred *ca_, const struct sym_cred *cb_, int *own_ok)
{
	struct sym_fab *f[2];
	struct sym_fab_conn *conn[2];
	struct sym_fab_mr *mr[2];
	static uint8_t buf[2][1024];
	uint64_t key[2] = { 0, 0 };
	int ok[2] = { 0, 0 }, done[2] = { 0, 0 }, posted[2] = { 0, 0 };
	char err[512];
	const struct sym_fab_peer fe0 = { SYM_CRED_FRONTEND, 0 };
	for (int k = 0; k < 2; k++) {
		assert_int_equal(sym_fab_open(&f[k], &(struct sym_fab_cfg){ .provider = "tcp", .cred = k ? cb_ : ca_ }, err,
					      sizeof(err)), 0);
		assert_int_equal(
			sym_fab_mr_reg(f[k], buf[k], sizeof(buf[k]), SYM_FAB_LOCAL_READ_TARGET, &mr[k], err, sizeof(err)), 0);
		assert_int_equal(sym_fab_connect(f[k], "127.0.0.1", fport, &fe0, &conn[k], err, sizeof(err)), 0);
	}
	double end = now_s() + 5;
	while (now_s() < end && (done[0] < 4 || done[1] < 4)) {
		for (int k = 0; k < 2; k++) {
			struct sym_fab_event ev[8];
			int n = sym_fab_poll(f[k], ev, 8);
			for (int i = 0; i < n; i++) {
				struct sym_msg m;
				if (ev[i].type == SYM_FAB_MSG && sym_wire_decode(ev[i].data, ev[i].len, &m, err, sizeof(err)) > 0 &&
				    m.type == SYM_MSG_GRANT)
					key[k] = m.u.grant.key;
				if (ev[i].type == SYM_FAB_READ) {
					done[k]++;
					ok[k] += ev[i].status == 0;
				}
				if (ev[i].type == SYM_FAB_CLOSED)
					done[k] = 4; /* the provider closes a connection that read with a bad key */
			}
		}
		/* once both are granted: a reads with its own key, b with a's */
		for (int k = 0; k < 2; k++)
			if (key[0] && key[1] && !posted[k] && sym_fab_conn_up(conn[k])) {
				for (int r = 0; r < 4; r++)
					assert_int_equal(sym_fab_read(conn[k], buf[k] + 64 * r, 64, mr[k], 0, key[0], NULL), 0);
				posted[k] = 4;
			}
	}
	assert_true(key[0] != 0 && key[1] != 0 && key[0] != key[1]);
	for (int k = 0; k < 2; k++) {
		sym_fab_close(conn[k]);
		sym_fab_mr_close(mr[k]);
		sym_fab_destroy(f[k]);
	}
	*own_ok = ok[0];
	return ok[1];
}

/* A HELLO as backend `id` of the cluster's kind with one model, encoded into buf. */
static size_t hello_as_backend(uint8_t *buf, size_t cap, uint32_t id, uint8_t part)
{
	struct sym_msg h = { .type = SYM_MSG_HELLO };
	h.u.hello.role = SYM_ROLE_BACKEND;
	h.u.hello.id = id;
	h.u.hello.part = part;
	snprintf(h.u.hello.kind, sizeof(h.u.hello.kind), "%s", "a100"); /* the default zoo's kind */
	h.u.hello.nmodels = 1;
	const uint16_t models[] = { 0 };
	size_t n = sym_wire_encode(&h, NULL, models, buf, cap);
	assert_true(n > 0);
	return n;
}

static cJSON *assert_exactly_once(const char *name);
static int wait_log(const char *log, const char *pat, int n);

/* A flood of fabric connections that never authenticate, on a thread of its own: n of them
 * to 127.0.0.1:port, each dialed again as soon as it is closed (the harshest a single
 * address can be). */
struct flood {
	char port[16];
	int n;
	bool redial; /* dial a closed one again at once */
	atomic_bool stop, started;
	atomic_ulong dialed;
	pthread_t th;
};

static struct flood flood; /* (stopped by teardown_dir when a test failed with it running) */

static void flood_stop(void)
{
	if (!atomic_load(&flood.started))
		return;
	atomic_store(&flood.stop, true);
	pthread_join(flood.th, NULL);
	atomic_store(&flood.started, false);
}

static void *flood_main(void *arg)
{
	struct flood *fl = arg;
	struct sym_fab *f;
	char err[512];
	if (sym_fab_open(&f, &(struct sym_fab_cfg){ .provider = "tcp", .msg_max = 1024, .rx_depth = 2, .tx_depth = 2 },
			 err, sizeof(err)))
		return NULL;
	struct sym_fab_conn **c = calloc((size_t)fl->n, sizeof(*c));
	for (int i = 0; c && i < fl->n; i++)
		if (!sym_fab_connect(f, "127.0.0.1", fl->port, NULL, &c[i], err, sizeof(err))) {
			sym_fab_conn_set_user(c[i], (void *)(intptr_t)(i + 1));
			atomic_fetch_add(&fl->dialed, 1);
		}
	atomic_store(&fl->started, true);
	while (c && !atomic_load(&fl->stop)) {
		struct sym_fab_event ev[64];
		int n = sym_fab_poll(f, ev, 64);
		for (int k = 0; k < n; k++) {
			if (ev[k].type != SYM_FAB_CLOSED)
				continue;
			int i = (int)(intptr_t)sym_fab_conn_user(ev[k].conn) - 1;
			sym_fab_close(ev[k].conn);
			c[i] = NULL;
			if (fl->redial && !sym_fab_connect(f, "127.0.0.1", fl->port, NULL, &c[i], err, sizeof(err))) {
				sym_fab_conn_set_user(c[i], (void *)(intptr_t)(i + 1));
				atomic_fetch_add(&fl->dialed, 1);
			}
		}
		if (n <= 0)
			sym_fab_wait(f, 5);
	}
	free(c);
	sym_fab_destroy(f); /* (closes the rest) */
	return NULL;
}

/* Kills backend id (SIGKILL), waits for schedd to remove it, starts it again: the seconds
 * from its start to schedd's registration of it (10 if it did not register). */
static double restart_backend(struct cluster *c, int id)
{
	char ids[8], log[40], removed[40], reg[48];
	snprintf(ids, sizeof(ids), "%d", id);
	snprintf(log, sizeof(log), "backend%d-again.log", id);
	snprintf(removed, sizeof(removed), "backend %d removed", id);
	snprintf(reg, sizeof(reg), "backend %d (a100) registered", id);
	kill(c->be[id], SIGKILL);
	wait_for(c->be[id], 5);
	assert_int_equal(wait_log("schedd.log", removed, 1), 1);
	const char *a[] = { "backend", cfg, "--id", ids, NULL };
	double t0 = now_s(), end = t0 + 10;
	c->be[id] = spawn(log, a);
	running.be[id] = c->be[id];
	while (now_s() < end && count_in("schedd.log", reg) < 2)
		sleep_ms(5);
	return count_in("schedd.log", reg) < 2 ? 10 : now_s() - t0;
}

/* 1,000 fabric connections to schedd that never authenticate (SYM_TEST_FLOOD_REDIAL=1: redialed
 * as soon as schedd closes them), from the members' own address: a backend killed and started again registers
 * within 1 s (printed beside the same restart without the flood; the bound asserted is 3 s,
 * for a loaded CI machine), every request of a
 * run during the flood is answered exactly once, and schedd closed the flood's connections
 * (counted as flood and timeout refusals) without ever holding more than its bound. */
static void test_fabric_flood(void **state)
{
	(void)state;
	/* (it failed in every whole-suite run until the connections' buffers came from mmap: meson
	 * test sets MALLOC_PERTURB_, and glibc wrote the 20 MB of each pending connection twice) */
	struct rlimit rl;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max && rl.rlim_cur < 8192) {
		rl.rlim_cur = rl.rlim_max < 8192 ? rl.rlim_max : 8192;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* (a killed backend is seen at once: its connection closes) */
	config_replace("\"failure_ms\": 50,", "\"failure_ms\": 1000,");
	struct cluster c;
	cluster_start(&c);
	double base = restart_backend(&c, 1); /* the same, without the flood */
	memset(&flood, 0, sizeof(flood));
	snprintf(flood.port, sizeof(flood.port), "%s", port);
	flood.n = 1000;
	/* SYM_TEST_FLOOD_REDIAL=1: each one dialed again the moment it is closed (not in the suite:
	 * the member can take over 3 s to get in; docs/runtime.md, "Security") */
	flood.redial = getenv("SYM_TEST_FLOOD_REDIAL") != NULL;
	assert_int_equal(pthread_create(&flood.th, NULL, flood_main, &flood), 0);
	double end = now_s() + 10;
	while (!atomic_load(&flood.started) && now_s() < end)
		sleep_ms(10);
	assert_true(atomic_load(&flood.started));
	sleep_ms(300);
	double took = restart_backend(&c, 0);
	unsigned long dialed = atomic_load(&flood.dialed);
	fprintf(stderr, "fabric flood: backend 0 registered %.0f ms after it was started again, beside %d connections "
		"that never authenticate (%lu dialed so far); backend 1, before the flood: %.0f ms\n", 1000 * took, flood.n,
		dialed, 1000 * base);
	/* (3 s; 6 in the thread-sanitizer build, whose processes run several times slower: 2.8 and
	 * 3.2 s there on 2026-11-28, against 0.6 s for the same restart without the flood) */
	assert_true(took < (low_load_bad_allowed > 0 ? 6.0 : 3.0));
	pid_t lg = loadgen_start("flood.json", "300", "2");
	int st = wait_for(lg, 30);
	flood_stop();
	int sst = cluster_stop(&c);
	assert_int_equal(st, 0);
	assert_int_equal(sst, 0);
	cJSON *j = assert_exactly_once("flood.json");
	assert_true(num(j, "served") > 0);
	cJSON_Delete(j);
	cJSON *s = load_json("schedd.json");
	assert_true(num(s, "refused_fabric_peers") >= 900);
	cJSON_Delete(s);
	passed = true;
}

/* Revocation on SIGHUP: backend 3's serial revoked (symphony keygen revoke), schedd and both
 * frontends told: each closes backend 3's connection at once and refuses it from then on
 * (counted as revoked while it keeps retrying); the cluster serves on with backends 0-2 and
 * every request is answered exactly once. */
static void test_revocation(void **state)
{
	(void)state;
	config_replace("\"failure_ms\": 50,", "\"failure_ms\": 3000,");
	struct cluster c;
	cluster_start(&c);
	const char *rv[] = { "keygen", "revoke", keys, "backend-3", "--quiet", NULL };
	assert_int_equal(wait_for(spawn("revoke.log", rv), 10), 0);
	kill(c.schedd, SIGHUP);
	for (int i = 0; i < NFE; i++)
		kill(c.fe[i], SIGHUP);
	double end = now_s() + 5;
	while (now_s() < end && (!count_in("schedd.log", "SIGHUP: 1 revoked serial from") ||
				 !count_in("frontend0.log", "SIGHUP: 1 revoked serial from") ||
				 !count_in("frontend1.log", "SIGHUP: 1 revoked serial from")))
		sleep_ms(20);
	assert_int_equal(count_in("schedd.log", "SIGHUP: 1 revoked serial from"), 1);
	assert_int_equal(count_in("schedd.log", "1 connection closed"), 1);
	assert_int_equal(count_in("frontend0.log", "1 connection closed"), 1);
	assert_int_equal(count_in("frontend1.log", "1 connection closed"), 1);
	pid_t lg = loadgen_start("revoked.json", "300", "2");
	int st = wait_for(lg, 30);
	int sst = cluster_stop(&c);
	assert_int_equal(st, 0);
	assert_int_equal(sst, 0);
	cJSON *j = assert_exactly_once("revoked.json");
	assert_true(num(j, "served") > 0);
	cJSON_Delete(j);
	/* backend 3 kept dialing and was refused as revoked (a line a second at most) */
	assert_true(count_in("schedd.log", "is revoked") >= 1);
	assert_true(count_in("schedd.log", "backend 3 removed") + count_in("schedd.log", "backend 3 left") >= 1);
	passed = true;
}

/* Attacks from the fabric side: peers without a credential of the cluster's CA
 * are refused before they are heard (an impostor's HELLO as a live backend, RMA
 * reads of a frontend's pool with guessed keys); a member speaking as another
 * role or id than its credential's (frontend 1 or backend 5 saying HELLO as
 * backend 0), or connecting where its role does not (a frontend on a frontend's
 * fabric port), is refused; a HELLO for a connected identity is refused, not a
 * replacement; a member's garbage closes its connection. The
 * cluster keeps serving with all its backends. A frontend closes a garbage client. */
static void test_garbage_peer(void **state)
{
	(void)state;
	/* garbage, not failure detection: a stall of the machine over 50 ms (seen at the start of
	 * the thread-sanitizer build's seven processes) removed peers, and backend_failures was 1 */
	config_replace("\"failure_ms\": 50,", "\"failure_ms\": 3000, \"backends_max\": 8,");
	struct cluster c;
	cluster_start(&c);
	char err[512];
	struct sym_cred be0 = member_cred(SYM_CRED_BACKEND, 0), be5 = member_cred(SYM_CRED_BACKEND, 5),
			fe1 = member_cred(SYM_CRED_FRONTEND, 1), fake = foreign_cred(SYM_CRED_BACKEND, 5);
	const struct sym_fab_peer sd = { SYM_CRED_SCHEDD, 0 };
	uint8_t hello[256];
	size_t hlen = hello_as_backend(hello, sizeof(hello), 0, 0);
	char feport[16];
	snprintf(feport, sizeof(feport), "%d", atoi(port) + 1); /* frontend 0's fabric port */

	/* an impostor without a credential: its HELLO as backend 0 is never heard */
	struct fake r = fake_peer(port, NULL, NULL, hello, hlen, 0);
	assert_true(r.connected && r.closed);
	/* a credential another CA signed: refused in the handshake, never up on its side */
	r = fake_peer(port, &fake, &sd, hello, hlen, 0);
	assert_false(r.connected);
	assert_true(r.closed);
	/* reads of frontend 0's pool without a credential, with the keys of the old scheme: none succeeds */
	r = fake_peer(feport, NULL, NULL, NULL, 0, 4);
	assert_int_equal(r.reads_ok, 0);
	/* backend 5's connection to frontend 0 gets a key of its own, which reads the pool; once that
	 * connection is closed, the key reads nothing (the registration went with it) */
	int ok = 0;
	uint64_t k1 = member_reads(feport, &be5, 0, &ok);
	assert_true(k1 != 0);
	assert_int_equal(ok, 4);
	uint64_t k2 = member_reads(feport, &be5, k1, &ok);
	assert_true(k2 != 0 && k2 != k1);
	assert_int_equal(ok, 0);
	/* a key granted to backend 5's connection, used by backend 6 through its own while backend 5's
	 * is open: nothing read (each connection's registration is in a domain of its own) */
	struct sym_cred be6 = member_cred(SYM_CRED_BACKEND, 6);
	int own = 0;
	assert_int_equal(cross_reads(feport, &be5, &be6, &own), 0);
	assert_int_equal(own, 4);
	/* frontend 1's credential on frontend 0's fabric port, where only backends connect: no key */
	assert_true(member_reads(feport, &fe1, 0, &ok) == 0);
	/* members speaking as another role or id than their credential's: frontend 1, and backend 5,
	 * each saying HELLO as backend 0: refused */
	r = fake_peer(port, &fe1, &sd, hello, hlen, 0);
	assert_true(r.connected && r.closed);
	r = fake_peer(port, &be5, &sd, hello, hlen, 0);
	assert_true(r.connected && r.closed);
	/* backend 0's own credential while backend 0 is connected: refused, not a replacement */
	r = fake_peer(port, &be0, &sd, hello, hlen, 0);
	assert_true(r.connected && r.closed);
	/* a member sending garbage */
	uint8_t junk[64];
	for (size_t k = 0; k < sizeof(junk); k++)
		junk[k] = (uint8_t)(k * 37 + 11);
	r = fake_peer(port, &be5, &sd, junk, sizeof(junk), 0);
	assert_true(r.connected && r.closed);
	/* a TCP client sending garbage to frontend 0 */
	char cport[16];
	snprintf(cport, sizeof(cport), "%d", atoi(port) + 2);
	int fd = sym_tcp_connect("127.0.0.1", cport, 2000, err, sizeof(err));
	assert_true(fd >= 0);
	const char get[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	assert_int_equal(write(fd, get, sizeof(get) - 1), (ssize_t)(sizeof(get) - 1));
	char b[16];
	double end = now_s() + 5;
	ssize_t got = -1;
	while (now_s() < end && (got = read(fd, b, sizeof(b))) < 0 && errno == EAGAIN)
		sleep_ms(10);
	assert_int_equal(got, 0); /* closed by the frontend */
	close(fd);
	/* still serving */
	pid_t lg = loadgen_start("after.json", "300", "2");
	int st = wait_for(lg, 30);
	int sst = cluster_stop(&c);
	assert_int_equal(st, 0);
	assert_int_equal(sst, 0);
	cJSON *j = load_json("after.json");
	cJSON *s = load_json("schedd.json");
	/* serving (timing is test_low_load's): at most 1% bad, unless the machine stalled the
	 * run (machine_stalled) */
	double bad = num(j, "late") + num(j, "dropped");
	char why[200];
	bool stalled = machine_stalled(j, s, why, sizeof(why));
	if (bad > 0.01 * num(j, "offered") && stalled)
		fprintf(stderr, "%.0f bad of %.0f after the garbage, in a run the machine stalled: %s\n", bad,
			num(j, "offered"), why);
	assert_true(bad <= 0.01 * num(j, "offered") || stalled);
	assert_true(num(j, "served") > 0.5 * num(j, "offered"));
	assert_int_equal((int)num(j, "checks.unanswered"), 0);
	cJSON_Delete(j);
	assert_true(num(s, "rejected_messages") >= 2);
	assert_int_equal((int)num(s, "refused_hellos"), 3);
	assert_true(num(s, "refused_fabric_peers") >= 2);
	assert_int_equal((int)num(s, "backend_failures"), 0);
	cJSON_Delete(s);
	assert_true(count_in("schedd.log", "malformed message") >= 1);
	/* the first refused hello is logged; the two after it within the second are counted (the
	 * log takes a line a second) */
	assert_int_equal(count_in("schedd.log", "refused a hello as backend 0 from frontend 1"), 1);
	assert_int_equal(count_in("frontend0.log", "refused frontend 1 on the fabric port"), 1);
	assert_true(count_in("schedd.log", "fabric peer") >= 1);         /* the refusals, logged */
	assert_true(count_in("frontend0.log", "fabric peer") >= 1);
	assert_int_equal(count_in("schedd.log", "backend 0 removed"), 0); /* backend 0 was never replaced */
	assert_true(count_in("frontend0.log", "malformed message") >= 1);
	passed = true;
}


/* ---- the HTTP API (KServe v2) and /metrics, driven by curl ---- */

static int http_port(int off)
{
	return atoi(port) + 1000 + off; /* http_base: schedd +0, frontend i +1+i, backend i +512+i */
}

/* Runs curl; the body goes to dir/NAME, the status is returned (0: no answer).
 * extra: more curl arguments (quoted by the caller), or "". */
static int curl_at(const char *name, const char *method, const char *sch, int hport, const char *path,
		   const char *extra)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "curl -sS -k -m 10 -o '%s/%s' -w '%%{http_code}' -X %s %s '%s://127.0.0.1:%d%s' "
		 "2>'%s/%s.curl'", dir, name, method, extra, sch, hport, path, dir, name);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	int code = 0;
	if (fscanf(p, "%d", &code) != 1)
		code = 0;
	int st = pclose(p);
	if (!code) { /* no answer: say why (curl's own message) */
		char ename[300];
		snprintf(ename, sizeof(ename), "%s.curl", name);
		char *msg = slurp(ename);
		fprintf(stderr, "curl %s %s on port %d: no HTTP answer (curl status %d): %s\n", method, path, hport,
			WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg ? msg : "");
		free(msg);
	}
	return code;
}

/* curl_at on the HTTP port of process `off` (http_base + off), in the test's scheme. */
static int curl(const char *name, const char *method, int off, const char *path, const char *extra)
{
	return curl_at(name, method, scheme, http_port(off), path, extra);
}

/* curl for an inference whose answer, not its timing, is under test: a 503 (the scheduler
 * dropped the request to protect its SLO) or a 504 (answered after its deadline), on a machine
 * stalled by other tests, is tried again, twice at most; any other status is returned at once.
 * (A lone request is deferred to its latest start, so a few ms of stall make it late: an ASan
 * CI run answered one 504.) */
static int curl_infer(const char *name, int off, const char *extra)
{
	/* (under the thread sanitizer, loose timing, a cold cluster dropped three tries in a row in a
	 * CI run of test_reload: there ten tries, 200 ms apart) */
	int code = 0, tries = low_load_bad_allowed > 0 ? 10 : 3;
	for (int k = 0; k < tries && ((code = curl(name, "POST", off, "/v2/models/m/infer", extra)) == 503 || code == 504);
	     k++) {
		fprintf(stderr, "%s: %d (%s), tried again\n", name, code,
			code == 503 ? "dropped to protect the SLO" : "answered after its deadline");
		if (off >= 0 && off < 8)
			infer_retried[off][code == 504]++;
		if (low_load_bad_allowed > 0)
			sleep_ms(200);
	}
	return code;
}

static void write_file(const char *name, const void *data, size_t len)
{
	char path[640];
	snprintf(path, sizeof(path), "%s/%.300s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

#define IN_BYTES 1000 /* the model's input: UINT8 [1000] (input_bytes) */

/* An inference body with data[i] = (i * 7 + seed) % 256, shape [1, 1000]. */
static void infer_body(const char *name, int seed, const char *dtype, int n)
{
	char *s = malloc(16 * (size_t)n + 512);
	int o = sprintf(s, "{\"id\": \"req-%d\", \"inputs\": [{\"name\": \"INPUT0\", \"datatype\": \"%s\", "
			   "\"shape\": [1, %d], \"data\": [", seed, dtype, n);
	for (int i = 0; i < n; i++)
		o += sprintf(s + o, "%s%d", i ? "," : "", (i * 7 + seed) % 256);
	o += sprintf(s + o, "]}]}");
	write_file(name, s, (size_t)o);
	free(s);
}

/* The emulated executor's output for infer_body's input of n bytes. */
static uint64_t expected_digest_n(int seed, int n)
{
	uint8_t *in = malloc((size_t)n);
	assert_non_null(in);
	for (int i = 0; i < n; i++)
		in[i] = (uint8_t)((i * 7 + seed) % 256);
	uint64_t d = sym_exec_digest(in, (size_t)n);
	free(in);
	return d;
}

static uint64_t expected_digest(int seed)
{
	return expected_digest_n(seed, IN_BYTES);
}

static void test_http_api(void **state)
{
	(void)state;
	/* frontend 0 is stopped for 500 ms below: it must not be taken for failed */
	config_replace("\"failure_ms\": 50,", "\"failure_ms\": 3000,");
	/* the API's answers, not timing: in the thread-sanitizer build (low_load_bad_allowed > 0) an
	 * inference took 42 ms against the 40 ms SLO and was answered 504. A lone request is deferred to
	 * its latest start whatever the SLO (with 200 ms, one was still 9.5 ms late on a loaded machine):
	 * what absorbs a slow machine is the planned response delay, 40 ms here instead of 4 */
	if (low_load_bad_allowed > 0) {
		config_replace("\"slo_ms\": 40,", "\"slo_ms\": 200,");
		config_replace("\"resp_ms\": 4", "\"resp_ms\": 40");
	}
	struct cluster c;
	cluster_start(&c);
	/* health, metadata */
	assert_int_equal(curl("b", "GET", 1, "/v2/health/live", ""), 200);
	assert_int_equal(count_in("b", "\"live\":true"), 1);
	double end = now_s() + 5;
	int ready;
	while ((ready = curl("b", "GET", 1, "/v2/health/ready", "")) != 200 && now_s() < end)
		sleep_ms(50);
	assert_int_equal(ready, 200);
	assert_int_equal(curl("b", "GET", 1, "/v2/models/m", ""), 200);
	assert_int_equal(count_in("b", "{\"name\":\"INPUT0\",\"datatype\":\"UINT8\",\"shape\":[1000]}"), 1);
	assert_int_equal(count_in("b", "{\"name\":\"OUTPUT0\",\"datatype\":\"UINT64\",\"shape\":[1]}"), 1);
	assert_int_equal(curl("b", "GET", 1, "/v2/models/m/ready", ""), 200);
	assert_int_equal(curl("b", "GET", 1, "/v2/models/m/versions/1/ready", ""), 200);
	assert_int_equal(curl("b", "GET", 1, "/v2/models/m/versions/2", ""), 404);
	assert_int_equal(curl("b", "GET", 1, "/v2/models/nope", ""), 404);
	assert_int_equal(count_in("b", "unknown model 'nope'"), 1);
	assert_int_equal(curl("b", "GET", 1, "/v2/nothing", ""), 404);
	assert_int_equal(curl("b", "GET", 1, "/v2/models/m/infer", ""), 405);
	assert_int_equal(curl("b", "POST", 1, "/v2/health/live", ""), 405);
	/* an inference, JSON in and out, on each frontend: the output is the input's digest, exactly */
	for (int fe = 0; fe < NFE; fe++) {
		infer_body("req.json", 3 + fe, "UINT8", IN_BYTES);
		char path[640];
		snprintf(path, sizeof(path), "--data-binary @%s/req.json", dir);
		assert_int_equal(curl_infer("b", 1 + fe, path), 200);
		char want[200];
		snprintf(want, sizeof(want), "\"id\":\"req-%d\",\"outputs\":[{\"name\":\"OUTPUT0\",\"datatype\":\"UINT64\","
			 "\"shape\":[1,1],\"data\":[%llu]}]", 3 + fe, (unsigned long long)expected_digest(3 + fe));
		assert_int_equal(count_in("b", want), 1);
	}
	/* the binary tensor extension, both ways */
	{
		const char hdr[] = "{\"inputs\": [{\"name\": \"INPUT0\", \"datatype\": \"UINT8\", \"shape\": [1000], "
				   "\"parameters\": {\"binary_data_size\": 1000}}], "
				   "\"outputs\": [{\"name\": \"OUTPUT0\", \"parameters\": {\"binary_data\": true}}]}";
		uint8_t body[sizeof(hdr) - 1 + IN_BYTES];
		memcpy(body, hdr, sizeof(hdr) - 1);
		for (int i = 0; i < IN_BYTES; i++)
			body[sizeof(hdr) - 1 + i] = (uint8_t)((i * 7 + 9) % 256);
		write_file("req.bin", body, sizeof(body));
		char args[500];
		snprintf(args, sizeof(args), "-H 'Inference-Header-Content-Length: %zu' --data-binary @%s/req.bin",
			 sizeof(hdr) - 1, dir);
		assert_int_equal(curl("b", "POST", 1, "/v2/models/m/infer", args), 200);
		char path[640];
		snprintf(path, sizeof(path), "%s/b", dir);
		FILE *f = fopen(path, "rb");
		assert_non_null(f);
		unsigned char out[4096];
		size_t n = fread(out, 1, sizeof(out), f);
		fclose(f);
		assert_true(n > 8);
		uint64_t got = 0;
		for (int k = 0; k < 8; k++)
			got |= (uint64_t)out[n - 8 + (size_t)k] << (8 * k);
		assert_true(got == expected_digest(9));
		assert_non_null(memmem(out, n - 8, "\"binary_data_size\":8", 20));
	}
	/* bad requests name the field */
	struct {
		const char *body, *want;
		int code;
	} bad[] = {
		{ "{\"inputs\": [", "malformed JSON", 400 },
		{ "{\"inputs\": [{\"name\": \"X\", \"datatype\": \"UINT8\", \"shape\": [1000], \"data\": []}]}",
		  "inputs[0].name", 400 },
		{ "{\"inputs\": [{\"name\": \"INPUT0\", \"datatype\": \"FP32\", \"shape\": [1000], \"data\": []}]}",
		  "inputs[0].datatype", 400 },
		{ "{\"inputs\": [{\"name\": \"INPUT0\", \"datatype\": \"UINT8\", \"shape\": [999], \"data\": []}]}",
		  "inputs[0].shape", 400 },
		{ "{\"inputs\": [{\"name\": \"INPUT0\", \"datatype\": \"UINT8\", \"shape\": [1000], \"data\": [1, 2]}]}",
		  "inputs[0].data: 2 elements", 400 },
		{ "{\"inputs\": [{\"name\": \"INPUT0\", \"datatype\": \"UINT8\", \"shape\": [1000], \"data\": [256]}]}",
		  "is not a UINT8", 400 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file("bad.json", bad[i].body, strlen(bad[i].body));
		char args[400];
		snprintf(args, sizeof(args), "--data-binary @%s/bad.json", dir);
		assert_int_equal(curl("b", "POST", 1, "/v2/models/m/infer", args), bad[i].code);
		if (count_in("b", bad[i].want) != 1)
			fail_msg("bad request %zu: no '%s' in %s", i, bad[i].want, slurp("b"));
	}
	/* 413 above http_body_max (65536 here) */
	infer_body("big.json", 1, "UINT8", 30000);
	char args[600];
	snprintf(args, sizeof(args), "--data-binary @%s/big.json", dir);
	assert_int_equal(curl("b", "POST", 1, "/v2/models/m/infer", args), 413);
	/* deadline override: too long is refused, too short is dropped (503 with the reason) */
	snprintf(args, sizeof(args), "-H 'Symphony-Deadline-Ms: 100000' --data-binary @%s/req.json", dir);
	assert_int_equal(curl("b", "POST", 1, "/v2/models/m/infer", args), 400);
	assert_int_equal(count_in("b", "deadline_max_ms"), 1);
	snprintf(args, sizeof(args), "-H 'Symphony-Deadline-Ms: 1' --data-binary @%s/req.json", dir);
	assert_int_equal(curl("b", "POST", 1, "/v2/models/m/infer", args), 503);
	assert_int_equal(count_in("b", "dropped to protect the SLO"), 1);
	/* late_status 504: frontend 0 is stopped while its request's result comes back */
	int got504 = 0, missed[2] = { 0, 0 }; /* attempts answered 200 on time, and 503 (dropped) */
	for (int attempt = 0; attempt < 5 && !got504; attempt++) {
		char cmd[1200];
		/* deferred to its last moment, the batch ends about 296 ms after the request came in;
		 * the frontend sleeps from 150 ms to 650 ms */
		snprintf(cmd, sizeof(cmd), "curl -s -m 10 -o '%s/late' -w '%%{http_code}' -X POST -H "
			 "'Symphony-Deadline-Ms: 300' --data-binary @%s/req.json 'http://127.0.0.1:%d/v2/models/m/infer'",
			 dir, dir, http_port(1));
		FILE *p = popen(cmd, "r");
		sleep_ms(150);
		kill(c.fe[0], SIGSTOP);
		sleep_ms(500);
		kill(c.fe[0], SIGCONT);
		int code = 0;
		if (fscanf(p, "%d", &code) != 1)
			code = 0;
		pclose(p);
		got504 = code == 504 && count_in("late", "after its deadline") == 1;
		missed[0] += code == 200;
		missed[1] += code == 503;
	}
	assert_true(got504);
	/* metrics: every process's parses (promtool), and counts what happened */
	int offs[3] = { 0, 1, 512 };
	for (int i = 0; i < 3; i++) {
		assert_int_equal(curl("metrics.txt", "GET", offs[i], "/metrics", ""), 200);
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s/metrics.txt' > '%s/promtool.log' 2>&1", dir, dir);
		if (system(cmd) != 0)
			fail_msg("promtool rejects the metrics of port %d: %s", http_port(offs[i]), slurp("promtool.log"));
		if (i == 1) {
			/* (and the 504 attempts a loaded machine answered otherwise, and the inferences
			 * curl_infer sent again: an ASan run answered the first on frontend 0 late) */
			char want[120];
			snprintf(want, sizeof(want), "symphony_requests_total{frontend=\"0\",model=\"m\",outcome=\"ok\"} %d\n",
				 2 + missed[0]);
			assert_int_equal(count_in("metrics.txt", want), 1);
			int late = metric_value("metrics.txt", "outcome=\"late\"} ");
			if (late != 1 + infer_retried[1][1])
				fail_msg("frontend 0 answered %d late, want %d: %s", late, 1 + infer_retried[1][1],
					 slurp("metrics.txt"));
			/* a retried 503 was dropped expired or early: the two together */
			int dropped = metric_value("metrics.txt", "outcome=\"dropped_expired\"} ") +
				      metric_value("metrics.txt", "outcome=\"dropped_early\"} ");
			if (dropped != 1 + missed[1] + infer_retried[1][0])
				fail_msg("frontend 0 dropped %d, want %d: %s", dropped, 1 + missed[1] + infer_retried[1][0],
					 slurp("metrics.txt"));
		}
		if (i == 0) {
			assert_int_equal(count_in("metrics.txt", "symphony_gpus_online 4\n"), 1);
			assert_int_equal(count_in("metrics.txt", "symphony_autoscale_add_gpus"), 3);
		}
		char keep[600];
		snprintf(keep, sizeof(keep), "cp '%s/metrics.txt' '%s/metrics-%d.txt'", dir, dir, offs[i]);
		assert_int_equal(system(keep), 0);
	}
	/* deploy/'s alert rules and dashboard name only metrics (and labels) these processes export */
	char chk[1500];
	snprintf(chk, sizeof(chk), "python3 '%s/tests/check_dashboards.py' '%s' '%s/metrics-0.txt' '%s/metrics-1.txt' "
		 "'%s/metrics-512.txt' > '%s/dash.log' 2>&1", SYM_SOURCE_ROOT, SYM_SOURCE_ROOT, dir, dir, dir, dir);
	if (system(chk) != 0)
		fail_msg("%s", slurp("dash.log"));
	assert_int_equal(cluster_stop(&c), 0);
	passed = true;
}

/* Models with their own signatures: one takes a built-in's (its executor spec), one is given
 * in the file. Metadata shows them; loadgen sends each model inputs of its size and checks
 * every output's size and bytes (the emulated executor's digest, repeated). */
static void test_signatures(void **state)
{
	(void)state;
	config_replace("{\"name\": \"m\", \"alpha_ms\": 2.5, \"beta_ms\": 2.5}]",
		       "{\"name\": \"m\", \"alpha_ms\": 2.5, \"beta_ms\": 2.5},"
		       " {\"name\": \"v\", \"alpha_ms\": 2.5, \"beta_ms\": 2.5}]");
	config_replace("\"late_status\": 504}", "\"late_status\": 504, \"models\": {"
		       "\"m\": {\"executor\": {\"builtin\": \"mlp\", \"layers\": [8, 16, 4]}},"
		       "\"v\": {\"input\": {\"datatype\": \"FP16\", \"shape\": [2, 3]},"
		       " \"output\": {\"datatype\": \"INT32\", \"shape\": [5]}}}}");
	struct cluster c;
	cluster_start(&c);
	assert_int_equal(curl("b", "GET", 1, "/v2/models/m", ""), 200);
	assert_int_equal(count_in("b", "\"inputs\":[{\"name\":\"INPUT0\",\"datatype\":\"FP32\",\"shape\":[8]}]"), 1);
	assert_int_equal(count_in("b", "\"outputs\":[{\"name\":\"OUTPUT0\",\"datatype\":\"FP32\",\"shape\":[4]}]"), 1);
	assert_int_equal(curl("b", "GET", 2, "/v2/models/v", ""), 200);
	assert_int_equal(count_in("b", "{\"name\":\"INPUT0\",\"datatype\":\"FP16\",\"shape\":[2,3]}"), 1);
	pid_t lg = loadgen_start("sig.json", "200", "2");
	assert_int_equal(wait_for(lg, 30), 0);
	assert_int_equal(cluster_stop(&c), 0);
	cJSON *j = load_json("sig.json");
	double req = num(j, "checks.requests");
	assert_true(req > 200);
	assert_int_equal((int)num(j, "checks.answered"), (int)req);
	assert_int_equal((int)num(j, "checks.wrong_outputs"), 0);
	assert_int_equal((int)num(j, "checks.failed_by_status.bad request"), 0);
	assert_true(num(j, "served") > req / 2); /* all, unless the machine stalls */
	const cJSON *ms = cJSON_GetObjectItemCaseSensitive(j, "models");
	assert_int_equal(cJSON_GetArraySize(ms), 2);
	for (int i = 0; i < 2; i++)
		assert_true(num(cJSON_GetArrayItem(ms, i), "served") > 0);
	cJSON_Delete(j);
	passed = true;
}

/* Clockwork as published on the runtime: schedd plans at most one batch
 * ahead of the running one, so Clockwork's schedule-ahead reaches the
 * backends, which hold two batches. With reject=0 a batch must start by its
 * planned start: one planned behind a batch that ends even a little late is
 * rejected by its backend, and its requests are answered "rejected". Every
 * request is answered exactly once, and loadgen and schedd count the same
 * rejections. */
static void test_clockwork_rejects(void **state)
{
	(void)state;
	config_replace("\"seed\": 7", "\"seed\": 7, \"policy\": \"clockwork:reject=0\"");
	/* the backends are stopped for 100 ms below: they must not be taken for failed */
	config_replace("\"failure_ms\": 50,", "\"failure_ms\": 3000,");
	struct cluster c;
	cluster_start(&c);
	pid_t lg = loadgen_start("cw.json", "1200", "2");
	/* With reject=0 a batch is rejected unless it begins by its planned start. Near the four
	 * GPUs' capacity (about 1,400 req/s) a busy backend holds a batch planned ahead, due the
	 * moment the one running ends, and begins it a few us late (unstalled: 799 of 2,440
	 * rejected); at 400 req/s a backend that keeps up begins every one on time (0 rejected).
	 * Three stalls of every backend inside loadgen's measured window (after its 0.5 s warm-up)
	 * make it certain: the batch in hand, not begun, is past its latest start when the backend
	 * runs again. */
	sleep_ms(700);
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < NBE; i++)
			kill(c.be[i], SIGSTOP);
		sleep_ms(100);
		for (int i = 0; i < NBE; i++)
			kill(c.be[i], SIGCONT);
		sleep_ms(300);
	}
	assert_int_equal(wait_for(lg, 30), 0);
	assert_int_equal(cluster_stop(&c), 0);
	cJSON *j = load_json("cw.json");
	cJSON *s = load_json("schedd.json");
	double req = num(j, "checks.requests");
	assert_true(req > 400);
	assert_int_equal((int)num(j, "checks.answered"), (int)req);
	assert_int_equal((int)num(j, "checks.duplicate_answers"), 0);
	assert_int_equal((int)num(j, "checks.wrong_outputs"), 0);
	assert_true(num(s, "batches_planned_ahead") > 0);
	double rej_lg = num(j, "dropped_by_reason.rejected"), rej_sd = num(s, "dropped_by_reason.rejected");
	fprintf(stderr, "clockwork:reject=0: %.0f requests, %.0f batches (%.0f planned ahead), %.0f rejected\n", req,
		num(s, "batches"), num(s, "batches_planned_ahead"), rej_sd);
	/* loadgen counts the measured window (after its 0.5 s warm-up), schedd all */
	assert_true(rej_sd > 0);
	assert_true(rej_lg <= rej_sd);
	assert_true(num(j, "served") > 0);
	cJSON_Delete(j);
	cJSON_Delete(s);
	passed = true;
}

/* The CPU time (user + system) process pid has used, in seconds, from /proc/PID/stat. */
static double cpu_seconds(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* after "pid (comm)": state is field 3, utime and stime are fields 14 and 15 */
	const char *p = strrchr(buf, ')');
	assert_non_null(p);
	unsigned long long ut = 0, st = 0;
	assert_int_equal(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st), 2);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The share of one core each of the cluster's processes used over the next second (nothing sent). */
static void assert_idle(const struct cluster *c, const char *when)
{
	pid_t pids[1 + NFE + NBE] = { c->schedd, c->fe[0], c->fe[1], c->be[0], c->be[1], c->be[2], c->be[3] };
	double before[1 + NFE + NBE];
	for (int i = 0; i < 1 + NFE + NBE; i++)
		before[i] = cpu_seconds(pids[i]);
	double t0 = now_s();
	sleep_ms(1000);
	double wall = now_s() - t0;
	for (int i = 0; i < 1 + NFE + NBE; i++) {
		double share = (cpu_seconds(pids[i]) - before[i]) / wall;
		if (share >= 0.3)
			fail_msg("%s: process %d of the cluster (pid %d) used %.0f%% of a core while idle", when, i,
				 (int)pids[i], 100 * share);
	}
}

/* A POST of about 220 KB (KServe v2 JSON; libmicrohttpd reads it over several passes, the last
 * ones asked for by its timeout rather than by its descriptor) is answered promptly with the
 * right output, and every process idles at low CPU before and after. */
static void test_http_large_post(void **state)
{
	(void)state;
	enum { N = 60000 };
	config_replace("\"input_max\": 4096, \"input_bytes\": 1000,", "\"input_max\": 65536, \"input_bytes\": 60000,");
	config_replace("\"http_body_max\": 65536", "\"http_body_max\": 1048576");
	/* decoding 60,000 JSON numbers takes the frontend a few ms of the request's deadline (schedd
	 * gets what is left): a late output is still the answer this test wants (and the deadline
	 * is 300 ms, so that a stall of a busy machine does not drop it) */
	config_replace("\"late_status\": 504", "\"late_status\": 200");
	/* the frontend decodes a body on its loop: in a sanitizer build 60,000 numbers take longer
	 * than the 50 ms of silence after which schedd removes a peer (the POST was then answered
	 * 'the scheduler is unreachable'); failure_ms must exceed the decoding of the largest body */
	config_replace("\"failure_ms\": 50,", "\"failure_ms\": 3000,");
	struct cluster c;
	cluster_start(&c);
	double end = now_s() + 5;
	int ready;
	while ((ready = curl("b", "GET", 1, "/v2/health/ready", "")) != 200 && now_s() < end)
		sleep_ms(50);
	assert_int_equal(ready, 200);
	assert_idle(&c, "before the POST");
	infer_body("big.json", 11, "UINT8", N);
	struct stat sb;
	char path[640];
	snprintf(path, sizeof(path), "%s/big.json", dir);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(sb.st_size > 200000);
	char args[500];
	snprintf(args, sizeof(args), "-H 'Symphony-Deadline-Ms: 300' --data-binary @%s/big.json", dir);
	for (int fe = 0; fe < NFE; fe++) {
		double t0 = now_s();
		int code = curl("b", "POST", 1 + fe, "/v2/models/m/infer", args);
		double took = now_s() - t0;
		if (code != 200 || took > 2) {
			char *answer = slurp("b");
			fail_msg("frontend %d: a POST of %lld bytes got %d after %.2f s: %.300s", fe, (long long)sb.st_size,
				 code, took, answer ? answer : "(no body)");
		}
		char want[200];
		snprintf(want, sizeof(want), "\"data\":[%llu]}]", (unsigned long long)expected_digest_n(11, N));
		assert_int_equal(count_in("b", want), 1);
	}
	assert_idle(&c, "after the POSTs");
	assert_int_equal(cluster_stop(&c), 0);
	passed = true;
}

/* HTTP clients flooding a frontend with 8 MB bodies (KServe v2 JSON of a 1 MiB input, each
 * number padded to 8 bytes), six back to back for 5 s (SYM_TEST_HTTP_FLOOD_S=30: the issue's
 * 30 s): the frontend's loop spends much of its
 * time decoding them (about 0.1 s each in a debug build, more on a loaded machine), and the
 * scheduler link holds. With heartbeat_ms 2 and failure_ms 1000, schedd answered one heartbeat
 * in 125 before issue 28, and this flood cut the link within the 5 s ("silent for 2019 ms"),
 * answering the waiting POSTs 'the scheduler is unreachable' (every run of three, with the code
 * before); schedd now heartbeats each peer on its own timer, and the frontend also heartbeats
 * after each body it decodes. Every POST is answered with its output, none 'unreachable', the
 * frontend never gives schedd up and schedd removes no frontend. */
static void test_http_flood(void **state)
{
	(void)state;
	enum { N = 1024 * 1024, PAD = 8, CLIENTS = 6 };
	const char *secs_env = getenv("SYM_TEST_HTTP_FLOOD_S");
	int secs = secs_env && atoi(secs_env) > 0 ? atoi(secs_env) : 5;
	/* under ThreadSanitizer (SYM_TEST_TIMING=loose) or AddressSanitizer a body takes seconds to
	 * decode: there the silence allowed and the deadline are longer, the races and memory are what
	 * those builds check. (The deadline is also how long a lone request waits: the scheduler
	 * defers its batch.) */
	bool loose = low_load_bad_allowed > 0;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	loose = true;
#endif
	config_replace("\"heartbeat_ms\": 10,", "\"heartbeat_ms\": 2,");
	config_replace("\"failure_ms\": 50, \"pool_slots\": 512, \"input_max\": 4096, \"input_bytes\": 1000,",
		       loose ? "\"failure_ms\": 10000, \"pool_slots\": 16, \"input_max\": 1048576, \"input_bytes\": 1048576,"
			     : "\"failure_ms\": 1000, \"pool_slots\": 16, \"input_max\": 1048576, \"input_bytes\": 1048576,");
	config_replace("\"http_body_max\": 65536", "\"http_body_max\": 8650752");
	config_replace("\"deadline_max_ms\": 1000, \"late_status\": 504", "\"deadline_max_ms\": 10000, \"late_status\": 200");
	char *s = malloc((size_t)N * PAD + 512);
	assert_non_null(s);
	int o = sprintf(s, "{\"inputs\": [{\"name\": \"INPUT0\", \"datatype\": \"UINT8\", \"shape\": [%d], \"data\": [", N);
	for (int i = 0; i < N; i++)
		o += sprintf(s + o, "%s%*d", i ? "," : "", PAD - 1, (i * 7 + 3) % 256);
	o += sprintf(s + o, "]}]}");
	write_file("flood.json", s, (size_t)o);
	free(s);
	assert_true(o > 8000000);
	/* The frontend's own stall (its loop held by one body for failure_ms, on a machine loaded many
	 * times over: schedd removes it, "frontend 0 removed: silent for") is not what this checks: such
	 * a run is repeated. The link given up by the frontend ("scheduler lost (silent for") never is. */
	for (int attempt = 1;; attempt++) {
		struct cluster c;
		cluster_start(&c);
		double end = now_s() + 5;
		int ready;
		while ((ready = curl("r", "GET", 1, "/v2/health/ready", "")) != 200 && now_s() < end)
			sleep_ms(50);
		assert_int_equal(ready, 200);
		/* each client posts the next body as soon as the last is answered ('Expect:': no wait
		 * for a "100 Continue") */
		char cmd[1600];
		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && for k in $(seq %d); do (end=$(($(date +%%s) + %d)); while [ $(date +%%s) -lt $end ]; do "
			 "curl -sS -m 60 -o - -w ' HTTP%%{http_code}\\n' -H 'Expect:' -H 'Symphony-Deadline-Ms: %d' "
			 "--data-binary @flood.json 'http://127.0.0.1:%d/v2/models/m/infer'; done > flood$k.txt 2>&1) & done; "
			 "wait", dir, CLIENTS, secs, loose ? 3000 : 1000, http_port(1));
		assert_int_equal(system(cmd), 0);
		char want[200];
		snprintf(want, sizeof(want), "\"data\":[%llu]}]", (unsigned long long)expected_digest_n(3, N));
		int all = 0, ok = 0, right = 0, unreachable = 0, shed = 0;
		for (int k = 1; k <= CLIENTS; k++) {
			char name[32];
			snprintf(name, sizeof(name), "flood%d.txt", k);
			all += count_in(name, " HTTP");
			ok += count_in(name, " HTTP200");
			right += count_in(name, want);
			unreachable += count_in(name, "unreachable");
			shed += count_in(name, "dropped to protect the SLO");
		}
		int gave_up = count_in("frontend0.log", "scheduler lost (silent for");
		int removed = count_in("schedd.log", "frontend 0 removed: silent for");
		fprintf(stderr, "flood: %d POSTs of %d bytes in %d s, %d answered 200 (%d with the right output), %d "
			"dropped to protect the SLO, %d 'the scheduler is unreachable'; frontend 0 gave schedd up %d times, "
			"schedd removed it %d times\n", all, o, secs, ok, right, shed, unreachable, gave_up, removed);
		assert_int_equal(gave_up, 0);
		assert_int_equal(cluster_stop(&c), 0);
		if (removed && attempt < 3) {
			fprintf(stderr, "attempt %d: frontend 0 stalled for failure_ms on its own (a loaded machine); again\n",
				attempt);
			continue;
		}
		assert_int_equal(removed, 0);
		assert_int_equal(unreachable, 0);
		assert_true(all >= CLIENTS);
		/* every POST answered with its output, or (a machine so loaded that a body's decoding took
		 * its deadline) dropped to protect the SLO */
		assert_int_equal(ok + shed, all);
		assert_int_equal(right, ok);
		assert_true(ok > 0);
		cJSON *j = load_json("schedd.json");
		assert_int_equal((int)num(j, "frontend_failures"), 0);
		cJSON_Delete(j);
		break;
	}
	passed = true;
}

/* wrk (closed loop, 4 connections) against the infer endpoint: no errors. */
static void test_http_load(void **state)
{
	(void)state;
	/* a request made late by a stall of the machine (a batch starting ms late) is still
	 * answered with its output: errors here are drops, failures and HTTP faults */
	config_replace("\"late_status\": 504", "\"late_status\": 200");
	infer_body("req.json", 5, "UINT8", IN_BYTES);
	char *body = slurp("req.json");
	assert_non_null(body);
	char lua[16384];
	snprintf(lua, sizeof(lua), "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n"
		 "wrk.body = '%s'\n", body);
	free(body);
	write_file("post.lua", lua, strlen(lua));
	/* Non-2xx answers are 503s of requests schedd dropped to protect the SLO: they are
	 * excused only in a run the machine visibly stalled (machine_stalled, or a stall so
	 * long that schedd removed peers), which is repeated. */
	for (int attempt = 1;; attempt++) {
		struct cluster c;
		cluster_start(&c);
		sleep_ms(200);
		char cmd[800];
		snprintf(cmd, sizeof(cmd),
			 "wrk -t1 -c4 -d3s --timeout 2s -s '%s/post.lua' 'http://127.0.0.1:%d/v2/models/m/infer' "
			 "> '%s/wrk.txt' 2>&1", dir, http_port(1), dir);
		assert_int_equal(system(cmd), 0);
		assert_int_equal(cluster_stop(&c), 0);
		char *out = slurp("wrk.txt");
		assert_non_null(out);
		long n = 0, non2xx = 0;
		const char *reqs = strstr(out, " requests in "), *bad = strstr(out, "Non-2xx or 3xx responses:");
		while (reqs && reqs > out && reqs[-1] >= '0' && reqs[-1] <= '9')
			reqs--;
		if (reqs)
			n = strtol(reqs, NULL, 10);
		if (bad)
			non2xx = strtol(bad + strlen("Non-2xx or 3xx responses:"), NULL, 10);
		if (n < 100 || strstr(out, "Socket errors") || (bad && non2xx < 1))
			fail_msg("wrk: %ld requests, or errors:\n%s", n, out);
		free(out);
		if (!non2xx)
			break;
		cJSON *s = load_json("schedd.json");
		double drops = num(s, "dropped_by_reason.expired") + num(s, "dropped_by_reason.early");
		/* a stall of failure_ms (50 ms) makes schedd remove peers: the frontends then
		 * answer 503 (scheduler unreachable) until they are back */
		double removed = num(s, "frontend_failures") + num(s, "backend_failures");
		char why[200];
		bool stalled = machine_stalled(NULL, s, why, sizeof(why));
		cJSON_Delete(s);
		fprintf(stderr, "attempt %d: %ld of %ld answers not 2xx, %.0f drops at schedd, %.0f peers removed; %s\n",
			attempt, non2xx, n, drops, removed, why);
		if (!removed) {
			assert_true(non2xx <= drops); /* every error is a drop, no HTTP fault */
			assert_true(stalled);
		}
		assert_true(attempt < 3);
	}
	passed = true;
}

/* An operator's HTTP settings: HTTPS (a self-signed certificate; TLS 1.2 and up), bearer tokens for
 * inference (401 without; SIGHUP rereads them), malformed deadlines 400, a native
 * request's budget capped, native clients and HTTP connections bounded, idle HTTP
 * connections closed after http_timeout_s so that they cannot block others for good. */
static void test_http_hardening(void **state)
{
	(void)state;
	char cmd[1400], path[400];
	snprintf(cmd, sizeof(cmd), "cd '%s' && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
		 "-keyout tls.key -out tls.crt -days 2 -subj /CN=127.0.0.1 >/dev/null 2>&1 && chmod 600 tls.key", dir);
	if (system(cmd) != 0) {
		passed = true;
		skip(); /* no openssl: scripts/setup installs it */
	}
	write_file("tokens", "# inference tokens\nfirst-token-0123456789\n", 41);
	snprintf(path, sizeof(path), "%s/tokens", dir);
	chmod(path, 0600);
	char extra[1600];
	snprintf(extra, sizeof(extra), "\"failure_ms\": 3000, \"http_tls_cert\": \"%s/tls.crt\", \"http_tls_key\": "
		 "\"%s/tls.key\", \"http_token_file\": \"%s\", \"clients_max\": 4, \"http_conn_max\": 8, "
		 "\"http_timeout_s\": 1, \"metrics_base\": %d,", dir, dir, path, atoi(port) + 2000);
	config_replace("\"failure_ms\": 50,", extra);
	/* answers, not timing: a lone request's batch is deferred to its latest start (d - l(b) less the
	 * planned network delays), so a hiccup of a few ms makes it late; under the thread sanitizer on a
	 * loaded machine one finished 3.4 ms (and, with a 200-ms SLO, 9.5 ms) late and was answered 504
	 * where the test wanted 200. Late answers carry their output here (late_status 200). */
	config_replace("\"late_status\": 504", "\"late_status\": 200");
	scheme = "https";
	struct cluster c;
	cluster_start(&c);
	assert_int_equal(curl("ready", "GET", 1, "/v2/health/ready", ""), 200); /* over TLS */
	/* TLS 1.2 and 1.3 only: a client offering TLS 1.1 alone (OpenSSL allows it at security
	 * level 0) gets no session; one offering 1.2 gets one */
	char tcmd[1200];
	snprintf(tcmd, sizeof(tcmd), "openssl s_client -connect 127.0.0.1:%d -tls1_1 -cipher 'DEFAULT@SECLEVEL=0' "
		 "</dev/null >'%s/tls11.txt' 2>&1; openssl s_client -connect 127.0.0.1:%d -tls1_2 </dev/null "
		 ">'%s/tls12.txt' 2>&1", http_port(1), dir, http_port(1), dir);
	assert_true(system(tcmd) != -1);
	assert_true(count_in("tls12.txt", "Protocol  : TLSv1.2") == 1);
	assert_true(count_in("tls11.txt", "Cipher is (NONE)") == 1);
	assert_int_equal(count_in("tls11.txt", "Cipher    : ECDHE"), 0);
	/* /metrics on a listener of its own (plain HTTP, metrics_base), not on the API port */
	assert_int_equal(curl("m404", "GET", 1, "/metrics", ""), 404);
	assert_int_equal(curl_at("metrics.txt", "GET", "http", atoi(port) + 2001, "/metrics", ""), 200);
	assert_true(count_in("metrics.txt", "process_resident_memory_bytes") >= 1);
	assert_true(count_in("metrics.txt", "symphony_frontend_refusals_total") >= 1);
	assert_true(count_in("metrics.txt", "symphony_fabric_refused_peers_total") >= 1);
	infer_body("body", 3, "UINT8", IN_BYTES);
	char data[600];
	snprintf(data, sizeof(data), "--data-binary @'%s/body'", dir);
	assert_int_equal(curl("r1", "POST", 1, "/v2/models/m/infer", data), 401);
	snprintf(extra, sizeof(extra), "%s -H 'Authorization: Bearer wrong-token-0123456789'", data);
	assert_int_equal(curl("r2", "POST", 1, "/v2/models/m/infer", extra), 401);
	snprintf(extra, sizeof(extra), "%s -H 'Authorization: Bearer first-token-0123456789'", data);
	assert_int_equal(curl_infer("r3", 1, extra), 200);
	/* malformed deadlines: 400 for that request alone */
	const char *bad[] = { ": 0x10", ";", ": inf", ": 1e400", ": -3", ": 5ms" }; /* ";": curl's empty header */
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		char e2[1800];
		snprintf(e2, sizeof(e2), "%s -H 'Symphony-Deadline-Ms%s'", extra, bad[k]);
		int code = curl("r4", "POST", 1, "/v2/models/m/infer", e2);
		if (code != 400) {
			fprintf(stderr, "deadline header '%s': status %d\n", bad[k], code);
			fail();
		}
	}
	/* a 100 KB header: 431 at once; 64 KB of garbage as the body: 400; the frontend serves on */
	char *big = malloc(100001);
	assert_non_null(big);
	memset(big, 'x', 100000);
	big[100000] = '\0';
	write_file("bighdr", "X-Big: ", 7);
	char hpath[400];
	snprintf(hpath, sizeof(hpath), "%s/bighdr", dir);
	FILE *hf = fopen(hpath, "a");
	assert_non_null(hf);
	fputs(big, hf);
	fclose(hf);
	free(big);
	char e3[1800];
	snprintf(e3, sizeof(e3), "-H @'%s'", hpath);
	/* refused with 431; or, when the server's answer and close beat curl's sending of the
	 * 100 KB, curl sees the connection close under it (55: send failure, 56: reset) */
	int c431 = curl("r7", "GET", 1, "/v2/health/ready", e3);
	if (c431 != 431) {
		char *why = slurp("r7.curl");
		assert_non_null(why);
		assert_true(strstr(why, "(55)") || strstr(why, "(56)"));
		free(why);
		assert_int_equal(curl("r7b", "GET", 1, "/v2/health/ready", ""), 200); /* and it still serves */
	}
	uint8_t *junk = malloc(65536);
	assert_non_null(junk);
	for (size_t k = 0; k < 65536; k++)
		junk[k] = (uint8_t)(k * 131 + 7);
	write_file("junk", junk, 65536);
	free(junk);
	snprintf(e3, sizeof(e3), "--data-binary @'%s/junk' -H 'Authorization: Bearer first-token-0123456789'", dir);
	assert_int_equal(curl("r8", "POST", 1, "/v2/models/m/infer", e3), 400);
	assert_int_equal(curl_infer("r9", 1, extra), 200);
	/* SIGHUP: a new token replaces the old one; schedd ignores the signal, saying so */
	write_file("tokens", "second-token-0123456789\n", 24);
	kill(c.fe[0], SIGHUP);
	kill(c.schedd, SIGHUP);
	double end = now_s() + 5;
	while (now_s() < end && !count_in("frontend0.log", "SIGHUP: 1 bearer tokens"))
		sleep_ms(20);
	assert_int_equal(curl("r5", "POST", 1, "/v2/models/m/infer", extra), 401);
	snprintf(extra, sizeof(extra), "%s -H 'Authorization: Bearer second-token-0123456789'", data);
	assert_int_equal(curl_infer("r6", 1, extra), 200);
	end = now_s() + 5;
	while (now_s() < end && !count_in("schedd.log", "SIGHUP"))
		sleep_ms(20);
	/* schedd has no tokens: it rereads the revoked credentials, none */
	assert_int_equal(count_in("schedd.log", "SIGHUP: 0 revoked serials from"), 1);
	assert_int_equal(kill(c.schedd, 0), 0);
	/* a native request asking for an hour: refused at once (after the HELLO with the token) */
	char cport[16], err[256];
	snprintf(cport, sizeof(cport), "%d", atoi(port) + 2);
	int fd = sym_tcp_connect("127.0.0.1", cport, 2000, err, sizeof(err));
	assert_true(fd >= 0);
	struct sym_stream st;
	sym_stream_init(&st, fd);
	struct sym_msg hello = { .type = SYM_MSG_HELLO };
	hello.u.hello.role = SYM_ROLE_CLIENT;
	hello.u.hello.token = "second-token-0123456789";
	hello.u.hello.token_len = (uint8_t)strlen(hello.u.hello.token);
	assert_int_equal(sym_stream_send(&st, &hello, 1 << 20), 0);
	static uint8_t in[IN_BYTES];
	struct sym_msg q = { .type = SYM_MSG_REQUEST };
	q.u.request.req_id = 1;
	q.u.request.budget_ns = 3600LL * 1000000000LL;
	q.u.request.len = IN_BYTES;
	q.u.request.data = in;
	assert_int_equal(sym_stream_send(&st, &q, 1 << 20), 0);
	struct sym_msg a;
	long got = 0;
	end = now_s() + 5;
	while (now_s() < end && (got = sym_stream_next(&st, &a, err, sizeof(err))) == 0) {
		sym_stream_read(&st);
		sleep_ms(5);
	}
	assert_true(got > 0);
	assert_int_equal(a.type, SYM_MSG_ANSWER);
	assert_int_equal(a.u.answer.status, SYM_WIRE_BAD_REQUEST);
	/* clients_max 4: with this one and 3 more connected (silent: no HELLO yet), a fifth
	 * takes the place of the oldest silent one, which is closed */
	int more[4];
	for (int k = 0; k < 4; k++) {
		more[k] = sym_tcp_connect("127.0.0.1", cport, 2000, err, sizeof(err));
		assert_true(more[k] >= 0);
		sleep_ms(20); /* in this order */
	}
	char b;
	ssize_t r = -1;
	end = now_s() + 5;
	while (now_s() < end && (r = read(more[0], &b, 1)) < 0 && errno == EAGAIN)
		sleep_ms(10);
	assert_int_equal(r, 0);
	assert_true(read(more[3], &b, 1) < 0 && errno == EAGAIN); /* the newest is in */
	for (int k = 0; k < 4; k++)
		close(more[k]);
	sym_stream_close(&st);
	/* 8 idle HTTP connections fill http_conn_max: a request still gets in (the oldest idle
	 * one makes room), and the others are closed after http_timeout_s (1 s) */
	char hport[16];
	snprintf(hport, sizeof(hport), "%d", http_port(1));
	int idle[8];
	for (int k = 0; k < 8; k++) {
		idle[k] = sym_tcp_connect("127.0.0.1", hport, 2000, err, sizeof(err));
		assert_true(idle[k] >= 0);
	}
	sleep_ms(200);
	double t0 = now_s();
	int code = curl("ready2", "GET", 1, "/v2/health/ready", "");
	assert_int_equal(code, 200);
	assert_true(now_s() - t0 < 1);
	end = now_s() + 5;
	r = -1;
	while (now_s() < end && (r = read(idle[7], &b, 1)) < 0 && errno == EAGAIN)
		sleep_ms(20);
	assert_int_equal(r, 0);
	for (int k = 0; k < 8; k++)
		close(idle[k]);
	int sst = cluster_stop(&c);
	assert_int_equal(sst, 0);
	scheme = "http";
	passed = true;
}

/* Waits until the log holds pat at least n times (or 10 s pass); returns the count. */
static int wait_log(const char *log, const char *pat, int n)
{
	double end = now_s() + 10;
	int k;
	while ((k = count_in(log, pat)) < n && now_s() < end)
		sleep_ms(20);
	return k;
}

/* The cluster with failure_ms 300 and a standby scheduler (on the address after the frontends'),
 * watching the active one when this returns; the standby's pid. */
static pid_t cluster_start_with_standby(struct cluster *c)
{
	char sched2[200];
	snprintf(sched2, sizeof(sched2), "\"schedd\": [\"127.0.0.1:%s\", \"127.0.0.1:%d\"], \"failure_ms\": 300,", port,
		 atoi(port) + 2 * NFE + 1);
	config_replace("\"failure_ms\": 50,", sched2);
	cluster_start(c);
	char sjson[400];
	snprintf(sjson, sizeof(sjson), "%s/standby.json", dir);
	const char *sa[] = { "schedd", cfg, "--standby", "--json", sjson, NULL };
	pid_t standby = standby_pid = spawn("standby.log", sa);
	assert_int_equal(wait_log("schedd.log", "the standby scheduler is watching", 1), 1);
	return standby;
}

/* kill -9 of the active scheduler; the standby (pid standby) takes over and is the cluster's from then on. */
static void kill_active(struct cluster *c, pid_t standby)
{
	kill(c->schedd, SIGKILL);
	waitpid(c->schedd, NULL, 0);
	c->schedd = standby;
	running.schedd = standby;
	standby_pid = -1;
	assert_int_equal(wait_log("standby.log", "took over:", 1), 1);
}

/* Every request loadgen sent (into name) was answered exactly once, with the right output. */
static cJSON *assert_exactly_once(const char *name)
{
	cJSON *j = load_json(name);
	assert_int_equal((int)num(j, "checks.answered"), (int)num(j, "checks.requests"));
	assert_int_equal((int)num(j, "checks.unanswered"), 0);
	assert_int_equal((int)num(j, "checks.duplicate_answers"), 0);
	assert_int_equal((int)num(j, "checks.wrong_outputs"), 0);
	return j;
}


/* ---- the model repository (experiment/repository.h) and its API on schedd ---- */

static void repo_model(const char *name, int version, const char *extra)
{
	char path[640], conf[1200];
	snprintf(path, sizeof(path), "%s/repo/%s/%d", dir, name, version);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "repo/%s/%d/model.pt", name, version);
	write_file(path, "not read by the emulated executor", 33);
	snprintf(conf, sizeof(conf),
		 "{\"name\": \"%s\", \"max_batch_size\": 16,\n"
		 " \"input\": [{\"name\": \"INPUT0\", \"data_type\": \"TYPE_UINT8\", \"dims\": [1000]}],\n"
		 " \"output\": [{\"name\": \"OUTPUT0\", \"data_type\": \"TYPE_UINT64\", \"dims\": [1]}],\n"
		 " \"slo_ms\": 40, \"profile\": {\"alpha_ms\": 2.5, \"beta_ms\": 2.5}%s}\n",
		 name, extra);
	snprintf(path, sizeof(path), "repo/%s/config.json", name);
	write_file(path, conf, strlen(conf));
}

/* The cluster serves the repository's models (no file models), with the repository API's
 * token file; runtime_keys (e.g. "\"repository_slots\": 2, ") join runtime. */
static void repo_config(const char *runtime_keys)
{
	write_file("admin.tokens", "admin-token-0123456789\n", 23);
	char tokens[400];
	snprintf(tokens, sizeof(tokens), "%s/admin.tokens", dir);
	assert_int_equal(chmod(tokens, 0600), 0);
	char repl[800];
	snprintf(repl, sizeof(repl), "{\"model_repository\": \"%s/repo\", \"slo_ms\": 40,", dir);
	config_replace("{\"models\": [{\"name\": \"m\", \"alpha_ms\": 2.5, \"beta_ms\": 2.5}],\n \"slo_ms\": 40,", repl);
	snprintf(repl, sizeof(repl), "\"runtime\": {\"repository_token_file\": \"%s\", %s\"keys_dir\"", tokens,
		 runtime_keys);
	config_replace("\"runtime\": {\"keys_dir\"", repl);
	if (low_load_bad_allowed > 0) /* (the thread-sanitizer build: the answers, not timing) */
		config_replace("\"slo_ms\": 40,", "\"slo_ms\": 200,");
}

/* Waits (5 s at most) until frontend 0 answers GET /v2/models/NAME/ready with want; returns the last code. */
static int wait_ready(const char *name, int want)
{
	char path[200];
	snprintf(path, sizeof(path), "/v2/models/%s/ready", name);
	int code = 0;
	double end = now_s() + 5;
	while (now_s() < end && (code = curl("rd", "GET", 1, path, "")) != want)
		sleep_ms(20);
	return code;
}

/* schedd, the frontends and the backends serve the models of a repository (model b at its
 * highest version, 2); under load, b is unloaded and loaded again through schedd's
 * repository API, and every request is answered exactly once: served, or refused "model not
 * loaded" while b is out (a's are all served). The API's refusals: no token, a wrong one, an
 * unknown model, a GET; HTTP inference on an unloaded model is 404 naming it. */
static void test_repository(void **state)
{
	(void)state;
	repo_model("a", 1, "");
	repo_model("b", 1, "");
	repo_model("b", 2, "");
	repo_config("");
	struct cluster c;
	cluster_start(&c);
	assert_int_equal(curl("meta", "GET", 1, "/v2/models/b", ""), 200);
	assert_int_equal(count_in("meta", "\"versions\":[\"2\"]"), 1);
	assert_int_equal(curl("meta", "GET", 1, "/v2/models/b/versions/1", ""), 404);
	assert_int_equal(count_in("meta", "serves version 2 only"), 1);
	assert_int_equal(curl("idx", "POST", 0, "/v2/repository/index", ""), 200);
	assert_int_equal(count_in("idx", "{\"name\":\"a\",\"version\":\"1\",\"state\":\"READY\"}"), 1);
	assert_int_equal(count_in("idx", "{\"name\":\"b\",\"version\":\"2\",\"state\":\"READY\"}"), 1);
	/* refusals */
	const char *tok = "-H 'Authorization: Bearer admin-token-0123456789'";
	assert_int_equal(curl("r", "POST", 0, "/v2/repository/models/b/unload", ""), 401);
	assert_int_equal(curl("r", "POST", 0, "/v2/repository/models/b/unload",
			      "-H 'Authorization: Bearer admin-token-0123456780'"), 401);
	assert_int_equal(curl("r", "POST", 0, "/v2/repository/models/zz/unload", tok), 404);
	assert_int_equal(count_in("r", "unknown model 'zz'"), 1);
	assert_int_equal(curl("r", "GET", 0, "/v2/repository/index", ""), 405);
	assert_int_equal(curl("r", "POST", 1, "/v2/repository/index", ""), 404); /* a frontend: schedd's API */
	assert_int_equal(count_in("r", "is schedd's"), 1);
	/* under load: b out, then back */
	pid_t lg = loadgen_start("lg.json", "200", "4");
	sleep_ms(1000);
	double t0 = now_s();
	assert_int_equal(curl("u", "POST", 0, "/v2/repository/models/b/unload", tok), 200);
	print_message("unload answered in %.3f s\n", now_s() - t0);
	assert_int_equal(curl("idx", "POST", 0, "/v2/repository/index", ""), 200);
	assert_int_equal(count_in("idx", "{\"name\":\"b\",\"version\":\"2\",\"state\":\"UNAVAILABLE\",\"reason\":\"unloaded\"}"), 1);
	/* the frontends hear it from schedd's STATUS, which the unload's answer waited on */
	assert_int_equal(wait_ready("b", 503), 503);
	infer_body("req.json", 5, "UINT8", IN_BYTES);
	char body[400];
	snprintf(body, sizeof(body), "--data-binary @%s/req.json", dir);
	assert_int_equal(curl("inf", "POST", 1, "/v2/models/b/infer", body), 404);
	assert_int_equal(count_in("inf", "model 'b': the model is not loaded"), 1);
	assert_int_equal(curl("inf", "POST", 1, "/v2/models/a/infer", body), 200);
	assert_int_equal(curl("u", "POST", 0, "/v2/repository/models/b/unload", tok), 200); /* it is so already */
	sleep_ms(800);
	t0 = now_s();
	assert_int_equal(curl("l", "POST", 0, "/v2/repository/models/b/load", tok), 200);
	print_message("load answered in %.3f s\n", now_s() - t0);
	assert_int_equal(curl("idx", "POST", 0, "/v2/repository/index", ""), 200);
	assert_int_equal(count_in("idx", "{\"name\":\"b\",\"version\":\"2\",\"state\":\"READY\"}"), 1);
	assert_int_equal(wait_ready("b", 200), 200);
	assert_int_equal(wait_for(lg, 30), 0);
	cJSON *j = assert_exactly_once("lg.json");
	double refused = num(j, "checks.failed_by_status.model not loaded");
	print_message("loadgen: %g requests, %g refused 'model not loaded'\n", num(j, "checks.requests"), refused);
	assert_true(refused > 0);
	assert_true(refused < num(j, "checks.requests") / 2);
	cJSON_Delete(j);
	assert_int_equal(curl("metrics", "GET", 0, "/metrics", ""), 200);
	assert_int_equal(count_in("metrics", "symphony_repository_calls_total{call=\"unload\"} 1"), 1);
	assert_int_equal(count_in("metrics", "symphony_repository_calls_total{call=\"load\"} 1"), 1);
	assert_int_equal(count_in("metrics", "symphony_repository_calls_total{call=\"refused\"} 2"), 1);
	assert_int_equal(count_in("metrics", "symphony_model_ready{model=\"b\"} 1"), 1);
	assert_int_equal(cluster_stop(&c), 0);
	passed = true;
}

/* A model added to the repository after the cluster started (issue 29): schedd's load of its
 * name takes a spare slot (repository_slots 2), the frontends and backends read it from their
 * repository on schedd's MODEL, and it serves, while model a's load runs on with every
 * request answered once. A load of a name not in the repository is 404, a model whose
 * config.json is malformed 400 naming the file (its slot stays free), and a load past the
 * slots 409. An added model unloads and loads again like any other. */
static void test_repository_add(void **state)
{
	(void)state;
	repo_model("a", 1, "");
	repo_config("\"repository_slots\": 2, ");
	struct cluster c;
	cluster_start(&c);
	const char *tok = "-H 'Authorization: Bearer admin-token-0123456789'";
	assert_int_equal(curl("idx", "POST", 0, "/v2/repository/index", ""), 200);
	assert_int_equal(count_in("idx", "\"name\""), 1); /* a only: the empty slots are not models */
	assert_int_equal(curl("r", "POST", 0, "/v2/repository/models/c/load", tok), 404);
	assert_int_equal(count_in("r", "model 'c' is not in repository"), 1);
	/* loadgen reads the models from the configuration and its repository as it starts: c is added
	 * once it has said it loads model a alone (under the thread sanitizer it once started more
	 * than 0.5 s late, took c in too, and c's unload below refused 20 of its requests) */
	pid_t lg = loadgen_spawn("lg.json", "200", "4", "0.5", false);
	assert_int_equal(wait_log("loadgen.log", "req/s over 1 models", 1), 1);
	sleep_ms(500);
	repo_model("c", 3, "");
	double t0 = now_s();
	assert_int_equal(curl("l", "POST", 0, "/v2/repository/models/c/load", tok), 200);
	print_message("load of an added model answered in %.3f s\n", now_s() - t0);
	assert_int_equal(curl("idx", "POST", 0, "/v2/repository/index", ""), 200);
	assert_int_equal(count_in("idx", "{\"name\":\"c\",\"version\":\"3\",\"state\":\"READY\"}"), 1);
	assert_int_equal(wait_ready("c", 200), 200);
	assert_int_equal(curl("meta", "GET", 1, "/v2/models/c", ""), 200);
	assert_int_equal(count_in("meta", "\"versions\":[\"3\"]"), 1);
	infer_body("req.json", 5, "UINT8", IN_BYTES);
	char body[400];
	snprintf(body, sizeof(body), "--data-binary @%s/req.json", dir);
	int code = 0;
	for (int k = 0; k < 3 && (code = curl("inf", "POST", 1, "/v2/models/c/infer", body)) == 503; k++)
		sleep_ms(50);
	assert_int_equal(code, 200);
	assert_int_equal(count_in("inf", "\"model_name\":\"c\""), 1);
	/* a malformed config.json: refused naming it, its slot stays free */
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/repo/bad/1' && printf '{\"max_batch_size\": ' > '%s/repo/bad/config.json'",
		 dir, dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(curl("r", "POST", 0, "/v2/repository/models/bad/load", tok), 400);
	assert_int_equal(count_in("r", "bad/config.json"), 1);
	repo_model("d", 1, "");
	repo_model("e", 1, "");
	assert_int_equal(curl("r", "POST", 0, "/v2/repository/models/d/load", tok), 200);
	assert_int_equal(curl("r", "POST", 0, "/v2/repository/models/e/load", tok), 409);
	assert_int_equal(count_in("r", "every spare model slot is taken (runtime.repository_slots 2)"), 1);
	/* an added model unloads and loads again in its slot */
	assert_int_equal(curl("u", "POST", 0, "/v2/repository/models/c/unload", tok), 200);
	assert_int_equal(curl("l", "POST", 0, "/v2/repository/models/c/load", tok), 200);
	assert_int_equal(wait_for(lg, 30), 0);
	cJSON *j = assert_exactly_once("lg.json");
	assert_int_equal((int)num(j, "checks.failed_by_status.model not loaded"), 0);
	cJSON_Delete(j);
	assert_int_equal(curl("metrics", "GET", 0, "/metrics", ""), 200);
	assert_int_equal(count_in("metrics", "symphony_model_ready{model=\"c\"} 1"), 1);
	assert_int_equal(count_in("metrics", "symphony_model_ready{model=\"d\"} 1"), 1);
	assert_int_equal(count_in("metrics", "symphony_model_ready{model=\"\"}"), 0);
	assert_int_equal(cluster_stop(&c), 0);
	assert_int_equal(count_in("schedd.log", "repository: model c takes spare slot 0 (1 of 2 left)"), 1);
	for (int b = 0; b < 2; b++) { /* each backend loaded c twice and d once, from its own reading */
		char log[32];
		snprintf(log, sizeof(log), "backend%d.log", b);
		assert_int_equal(count_in(log, "could not load"), 0);
	}
	passed = true;
}

/* Spare slots across a takeover: model c, added and loaded through the active scheduler, is not
 * the standby's (its slots start empty): when the standby takes over, the backends register with
 * it holding nothing of their slots (each unloads what it held there itself), its index has a
 * only, and a load of c through it fills its slot again, announced and served. */
static void test_repository_takeover(void **state)
{
	(void)state;
	repo_model("a", 1, "");
	repo_config("\"repository_slots\": 2, ");
	struct cluster c;
	pid_t standby = cluster_start_with_standby(&c);
	const char *tok = "-H 'Authorization: Bearer admin-token-0123456789'";
	repo_model("c", 1, "");
	assert_int_equal(curl("l", "POST", 0, "/v2/repository/models/c/load", tok), 200);
	assert_int_equal(wait_ready("c", 200), 200);
	assert_int_equal(curl("bm", "GET", 512, "/metrics", ""), 200);
	assert_int_equal(count_in("bm", "symphony_backend_models_loaded{backend=\"0\"} 2\n"), 1);
	kill_active(&c, standby);
	assert_int_equal(wait_log("standby.log", "registered: GPU", NBE), NBE);
	assert_int_equal(curl("idx", "POST", 511, "/v2/repository/index", ""), 200);
	assert_int_equal(count_in("idx", "\"name\":\"a\""), 1);
	assert_int_equal(count_in("idx", "\"name\":\"c\""), 0);
	int code = 0; /* each backend gave up its slot's model (its own unload) */
	for (int k = 0; k < 100; k++) {
		code = curl("bm", "GET", 512, "/metrics", "");
		if (code == 200 && count_in("bm", "symphony_backend_models_loaded{backend=\"0\"} 1\n") == 1)
			break;
		sleep_ms(50);
	}
	assert_int_equal(count_in("bm", "symphony_backend_models_loaded{backend=\"0\"} 1\n"), 1);
	assert_int_equal(wait_ready("c", 503), 503); /* known to the frontend, not loaded */
	assert_int_equal(curl("l", "POST", 511, "/v2/repository/models/c/load", tok), 200);
	assert_int_equal(wait_ready("c", 200), 200);
	infer_body("req.json", 5, "UINT8", IN_BYTES);
	char body[400];
	snprintf(body, sizeof(body), "--data-binary @%s/req.json", dir);
	for (int k = 0; k < 3 && (code = curl("inf", "POST", 1, "/v2/models/c/infer", body)) == 503; k++)
		sleep_ms(50);
	assert_int_equal(code, 200);
	assert_int_equal(count_in("standby.log", "repository: model c takes spare slot 0 (1 of 2 left)"), 1);
	assert_int_equal(cluster_stop(&c), 0);
	passed = true;
}

/* Sub-clusters in the runtime: four models in two parts (given), schedd on two scheduler
 * threads runs one ranker thread per part, each with its two GPUs; the loaded run answers
 * every request once, every model is served, and schedd reports the split. Then the same
 * cluster with the assignment left to the MILP. */
static void test_subclusters(void **state)
{
	(void)state;
	config_replace("\"slo_ms\": 40,", "\"slo_ms\": 40, \"num_models\": 4, "
		       "\"partition\": {\"subclusters\": 2, \"assign\": [0, 0, 1, 1], \"load_ms\": 30},");
	config_replace("\"heartbeat_ms\": 10,", "\"heartbeat_ms\": 10, \"threads\": 2,");
	config_replace("\"failure_ms\": 50,", "\"failure_ms\": 3000, \"backends_max\": 5,");
	struct cluster c;
	cluster_start(&c);
	/* a member registering as backend 4 (holding model 0) is told what to load and unload; it
	 * then reports an unload nobody asked for, and is closed */
	uint8_t msg[512];
	struct sym_cred be4 = member_cred(SYM_CRED_BACKEND, 4);
	const struct sym_fab_peer sd = { SYM_CRED_SCHEDD, 0 };
	/* asking to join sub-cluster 2 (the HELLO's part 3), of two: refused, saying so */
	size_t len = hello_as_backend(msg, sizeof(msg), 4, 3);
	struct fake r0 = fake_peer(port, &be4, &sd, msg, len, 0);
	assert_true(r0.connected && r0.closed);
	assert_int_equal(wait_log("schedd.log", "backend 4 asks for sub-cluster 2, the cluster has 2", 1), 1);
	len = hello_as_backend(msg, sizeof(msg), 4, 0);
	struct sym_msg ld = { .type = SYM_MSG_LOADED };
	ld.u.loaded.model = 1;
	ld.u.loaded.op = SYM_WIRE_UNLOAD;
	ld.u.loaded.status = SYM_WIRE_OK;
	size_t n2 = sym_wire_encode(&ld, NULL, NULL, msg + len, sizeof(msg) - len);
	assert_true(n2 > 0);
	struct fake r = fake_peer(port, &be4, &sd, msg, len + n2, 0);
	assert_true(r.connected && r.closed);
	pid_t lg = loadgen_start("sub.json", "300", "3");
	int st = wait_for(lg, 40);
	int sst = cluster_stop(&c);
	assert_int_equal(st, 0);
	assert_int_equal(sst, 0);
	cJSON *j = assert_exactly_once("sub.json");
	const cJSON *models = cJSON_GetObjectItem(j, "models");
	assert_int_equal(cJSON_GetArraySize(models), 4);
	for (int m = 0; m < 4; m++) /* (timing depends on the machine's load: served on time is not checked) */
		assert_true(num(cJSON_GetArrayItem(models, m), "served") > 0);
	cJSON_Delete(j);
	cJSON *s = load_json("schedd.json");
	const cJSON *subs = cJSON_GetObjectItem(s, "subclusters");
	assert_int_equal(cJSON_GetArraySize(subs), 2);
	int gpus = 0;
	for (int p = 0; p < 2; p++) {
		const cJSON *x = cJSON_GetArrayItem(subs, p);
		assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(x, "models")), 2);
		gpus += cJSON_GetArraySize(cJSON_GetObjectItem(x, "gpus"));
		assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(x, "models"), 0)->valueint, 2 * p);
	}
	assert_int_equal(gpus, 5); /* backends_max: the fifth is split too */
	/* the four backends started empty and loaded their sub-cluster's two models each on
	 * schedd's command (30 ms each on the emulated executor), then went online */
	assert_true(num(s, "model_loading.loads") >= 8);
	assert_true(num(s, "model_loading.load_seconds") >= 8 * 0.030);
	assert_int_equal((int)num(s, "model_loading.failures"), 0);
	assert_true(num(s, "rejected_messages") >= 1);
	cJSON_Delete(s);
	assert_int_equal(count_in("schedd.log", "loaded the models of sub-cluster"), 4);
	assert_int_equal(count_in("schedd.log", "backend 4 (a100) registered: loading"), 1);
	assert_int_equal(count_in("schedd.log", "a report of a model unload (model 1) that was not asked for"), 1);
	for (int b = 0; b < 4; b++) {
		char log[32];
		snprintf(log, sizeof(log), "backend%d.log", b);
		assert_int_equal(count_in(log, "registered with schedd (a100, 0 of the 4 models loaded)"), 1);
	}
	passed = true;
}

/* A cluster with sub-clusters (exp: the experiment's keys, in place of `"slo_ms": 40,`; two scheduler
 * threads) under loadgen at rate req/s for secs s into out: every process exits 0, every request is
 * answered exactly once; returns loadgen's result. */
static cJSON *parts_run_warm(const char *exp, const char *out, const char *rate, const char *secs, const char *warmup)
{
	config_replace("\"slo_ms\": 40,", exp);
	config_replace("\"heartbeat_ms\": 10,", "\"heartbeat_ms\": 10, \"threads\": 2,");
	config_replace("\"failure_ms\": 50,", "\"failure_ms\": 3000,");
	struct cluster c;
	cluster_start(&c);
	pid_t lg = loadgen_start_warm(out, rate, secs, warmup);
	int st = wait_for(lg, 40);
	int sst = cluster_stop(&c);
	assert_int_equal(st, 0);
	assert_int_equal(sst, 0);
	return assert_exactly_once(out);
}

static cJSON *parts_run(const char *exp, const char *out, const char *rate, const char *secs)
{
	return parts_run_warm(exp, out, rate, secs, "0.5");
}

/* Sub-clusters on a heterogeneous cluster (issue 31): two a100 GPUs and two "slow" ones (twice
 * the latencies), two sub-clusters of two models; each pair of sub-cluster and kind is a ranker
 * of its own, each sub-cluster gets GPUs of both kinds, and every request is answered once. */
static void test_subclusters_kinds(void **state)
{
	(void)state;
	cJSON *j = parts_run("\"slo_ms\": 60, \"num_models\": 4, \"cluster\": [{\"kind\": \"a100\", \"count\": 2}, "
			     "{\"kind\": \"slow\", \"count\": 2, \"scale\": 2}], \"partition\": {\"subclusters\": 2, "
			     "\"assign\": [0, 0, 1, 1], \"load_ms\": 30},", "kinds.json", "200", "2");
	const cJSON *models = cJSON_GetObjectItem(j, "models");
	for (int m = 0; m < 4; m++)
		assert_true(num(cJSON_GetArrayItem(models, m), "served") > 0);
	cJSON_Delete(j);
	/* the a100s split one to each part (kind 0 first), then the slow ones one each */
	cJSON *s = load_json("schedd.json");
	const cJSON *subs = cJSON_GetObjectItem(s, "subclusters");
	assert_int_equal(cJSON_GetArraySize(subs), 2);
	for (int p = 0; p < 2; p++) {
		const cJSON *gpus = cJSON_GetObjectItem(cJSON_GetArrayItem(subs, p), "gpus");
		assert_int_equal(cJSON_GetArraySize(gpus), 2);
		assert_true(cJSON_GetArrayItem(gpus, 0)->valueint < 2 && cJSON_GetArrayItem(gpus, 1)->valueint >= 2);
	}
	cJSON_Delete(s);
	assert_int_equal(count_in("schedd.log", "loaded the models of sub-cluster"), 4);
	assert_int_equal(count_in("backend2.log", "registered with schedd (slow, 0 of the 4 models loaded)"), 1);
	/* 11 sub-clusters of 3 kinds would be 33 rankers (core/parts.h): refused, saying so */
	config_replace("\"num_models\": 4", "\"num_models\": 12");
	config_replace("\"subclusters\": 2, \"assign\": [0, 0, 1, 1]",
		       "\"subclusters\": 11, \"assign\": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10]");
	config_replace("\"count\": 2}", "\"count\": 11}");
	config_replace("\"count\": 2, \"scale\": 2}]", "\"count\": 11, \"scale\": 2}, {\"kind\": \"x\", \"count\": 11, \"scale\": 3}]");
	config_replace("\"failure_ms\": 3000,", "\"failure_ms\": 3000, \"backends_max\": 33,");
	const char *a[] = { "schedd", cfg, NULL };
	assert_int_equal(wait_for(spawn("schedd9.log", a), 20), 2);
	assert_int_equal(count_in("schedd9.log", "at most 32 rankers, one per sub-cluster and GPU kind: 11 sub-clusters "
				  "of 3 kinds make 33"), 1);
	passed = true;
}

/* Epochs in the runtime: four models of equal rates start three in sub-cluster 0 and one in
 * sub-cluster 1 (three GPUs and one); every second schedd re-partitions from the measured rates
 * and moves a model to sub-cluster 1: loaded there, switched, unloaded from sub-cluster 0's
 * GPUs, while the load goes on; then a GPU of sub-cluster 0 moves to sub-cluster 1 (issue 31).
 * Every request is answered exactly once, none lost to the moves. */
static void test_epochs(void **state)
{
	(void)state;
	cJSON *j = parts_run("\"slo_ms\": 40, \"num_models\": 4, \"partition\": {\"subclusters\": 2, "
			     "\"assign\": [0, 0, 0, 1], \"load_ms\": 30, \"epoch_s\": 1},", "epochs.json", "300", "4");
	assert_int_equal((int)num(j, "checks.failed_by_status.backend failed"), 0);
	const cJSON *models = cJSON_GetObjectItem(j, "models");
	for (int m = 0; m < 4; m++)
		assert_true(num(cJSON_GetArrayItem(models, m), "served") > 0);
	cJSON_Delete(j);
	cJSON *s = load_json("schedd.json");
	assert_true(num(s, "epochs.epochs") >= 2);
	assert_true(num(s, "epochs.moves_done") >= 1);
	assert_int_equal((int)num(s, "epochs.moves_failed"), 0);
	assert_int_equal((int)num(s, "failed_requests"), 0);
	/* the moved model left every GPU of sub-cluster 0 */
	const cJSON *subs = cJSON_GetObjectItem(s, "subclusters");
	int p0_gpus = cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(subs, 0), "gpus"));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(subs, 1), "models")), 2);
	assert_true(num(s, "model_loading.unloads") >= p0_gpus);
	/* then a GPU moved (the split for two models each is two GPUs each): offline, its batches
	 * done, its old part's models unloaded, the new part's loaded, online in its new part */
	assert_true(num(s, "epochs.gpus_moved") >= 1);
	int p1_gpus = cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(subs, 1), "gpus"));
	assert_int_equal(p0_gpus + p1_gpus, 4);
	assert_true(p1_gpus >= 2);
	cJSON_Delete(s);
	assert_true(count_in("schedd.log", "models move") >= 1);
	assert_true(count_in("schedd.log", "moves from sub-cluster 0 to 1") >= 1);
	assert_true(count_in("schedd.log", "loaded the models of sub-cluster 1") >= 2); /* backend 3's, the moved one's */
	/* control fidelity (issue 31): the simulator, on the same configuration and load, takes the same
	 * first epoch's actions (a model to sub-cluster 1, then a GPU), and both serve it well */
	char sim_json[400];
	snprintf(sim_json, sizeof(sim_json), "%s/sim.json", dir);
	const char *sa[] = { "sim", cfg, "--gpus", "4", "--rate", "300", "--duration", "4.5", "--warmup", "0.5",
			     "--json", sim_json, "--quiet", NULL };
	assert_int_equal(wait_for(spawn("sim.log", sa), 60), 0);
	cJSON *sim = load_json("sim.json");
	const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(sim, "epochs"), 0);
	assert_non_null(first);
	assert_int_equal((int)num(first, "models_moved"), 1);
	assert_int_equal((int)num(first, "gpus_moved"), 1);
	char *slog = slurp("schedd.log");
	assert_non_null(slog);
	/* the first epoch that moved a model moves one, as the simulator's first does; GPUs moved
	 * (asserted above). (A slow start, under a sanitizer, can leave epoch 1 without requests, "no
	 * requests measured; the models and GPUs stay", or with a part of a second's: then the noise
	 * bound keeps the models where they are while the split already moves a GPU, and the model
	 * moves at epoch 2: the same actions, in two epochs. That epoch's rates are not the
	 * simulator's first's, and its search may also swap two equal models, relabelling the parts
	 * for a gain of noise: 3 models moved once in an ASan CI run; the split is still two and two,
	 * asserted above.) */
	const char *e1 = strstr(slog, ": rates over"), *nl = e1 ? strchr(e1, '\n') : NULL;
	bool later = false;
	while (e1 && nl) {
		const char *none = strstr(e1, "; 0 models move,");
		if (!none || none > nl)
			break;
		e1 = strstr(nl, ": rates over");
		nl = e1 ? strchr(e1, '\n') : NULL;
		later = true;
	}
	assert_true(e1 && nl);
	/* (an epoch before it measured no requests: its moves are epoch 2's, as above) */
	if (!(e1 - slog >= 8 && !strncmp(e1 - 8, " epoch 1", 8)))
		later = true;
	int moved = 0;
	const char *acts = strstr(e1, " models move, then ");
	assert_true(acts && acts < nl);
	while (acts > e1 && acts[-1] >= '0' && acts[-1] <= '9')
		acts--;
	moved = atoi(acts);
	if (later)
		assert_true(moved >= 1);
	else
		assert_int_equal(moved, 1);
	free(slog);
	print_message("epochs, simulator: bad rate %.4f; one model and one GPU moved in both drivers\n",
		      num(sim, "bad_rate"));
	assert_true(num(sim, "bad_rate") < 0.01);
	cJSON_Delete(sim);
	passed = getenv("SYM_TEST_KEEP") == NULL;
}

/* A stalled move in the runtime (control/moves.h, issue 31): four models of 400 MB on GPUs of
 * 850 MB, two to a sub-cluster; A and B are popular, C and D not, so the first epoch swaps one of
 * A and B with one of C and D. Neither fits beside its new part's two models: the one leaving
 * part 0 stalls (the core holds its requests while part 0 unloads it and part 1 loads it), the
 * other is deferred until part 0 has room. Every request is answered exactly once; the simulator,
 * on the same file, takes the same first epoch (two moves, one stalled). */
static void test_epochs_stall(void **state)
{
	(void)state;
	char csv[400];
	snprintf(csv, sizeof(csv), "%s/rates.csv", dir);
	FILE *f = fopen(csv, "w");
	assert_non_null(f);
	fprintf(f, "second,A,B,C,D\n");
	for (int t = 0; t < 10; t++)
		fprintf(f, "%d,300,300,40,40\n", t);
	fclose(f);
	config_replace("[{\"name\": \"m\", \"alpha_ms\": 2.5, \"beta_ms\": 2.5}]",
		       "[{\"name\": \"A\", \"alpha_ms\": 2.5, \"beta_ms\": 2.5, \"static_mb\": 400, \"dynamic_mb\": 10}, "
		       "{\"name\": \"B\", \"alpha_ms\": 2.5, \"beta_ms\": 2.5, \"static_mb\": 400, \"dynamic_mb\": 10}, "
		       "{\"name\": \"C\", \"alpha_ms\": 2.5, \"beta_ms\": 2.5, \"static_mb\": 400, \"dynamic_mb\": 10}, "
		       "{\"name\": \"D\", \"alpha_ms\": 2.5, \"beta_ms\": 2.5, \"static_mb\": 400, \"dynamic_mb\": 10}]");
	char exp[600];
	snprintf(exp, sizeof(exp), "\"slo_ms\": 40, \"rate_csv\": \"%s\", \"cluster\": [{\"kind\": \"gpu\", \"count\": 4, "
		 "\"memory_mb\": 850}], \"partition\": {\"subclusters\": 2, \"assign\": [0, 0, 1, 1], \"load_ms\": 30, "
		 "\"epoch_s\": 1},", csv);
	/* (no warm-up, in either driver: the runtime's first epoch comes 1 s after schedd starts, which
	 * is earlier in the load than the simulator's, and must not fall in a warm-up either way) */
	cJSON *j = parts_run_warm(exp, "stall.json", "300", "4", "0");
	const cJSON *models = cJSON_GetObjectItem(j, "models");
	for (int m = 0; m < 4; m++)
		assert_true(num(cJSON_GetArrayItem(models, m), "served") > 0);
	double rt_bad = num(j, "bad_rate");
	cJSON_Delete(j);
	cJSON *s = load_json("schedd.json");
	int rt_stalls = (int)num(s, "epochs.moves_stalled");
	assert_true(rt_stalls >= 1);
	assert_true(num(s, "epochs.moves_deferred") >= 1);
	assert_true(num(s, "epochs.moves_done") >= 2);
	assert_int_equal((int)num(s, "epochs.moves_failed"), 0);
	assert_int_equal((int)num(s, "failed_requests"), 0);
	/* afterwards each part holds one popular model and one not */
	const cJSON *subs = cJSON_GetObjectItem(s, "subclusters");
	for (int p = 0; p < 2; p++) {
		const cJSON *pm = cJSON_GetObjectItem(cJSON_GetArrayItem(subs, p), "models");
		assert_int_equal(cJSON_GetArraySize(pm), 2);
		int popular = 0;
		for (int i = 0; i < 2; i++)
			popular += cJSON_GetArrayItem(pm, i)->valueint < 2;
		assert_int_equal(popular, 1);
	}
	cJSON_Delete(s);
	assert_true(count_in("schedd.log", "is stalled (memory): after the others") >= 1);
	assert_true(count_in("schedd.log", "is deferred (memory): after the others") >= 1);
	assert_true(count_in("schedd.log", "its requests wait while sub-cluster 0 unloads it and 1 loads it") >= 1);
	/* the simulator's first epoch: the same two moves, one of them stalled */
	char sim_json[400];
	snprintf(sim_json, sizeof(sim_json), "%s/sim.json", dir);
	const char *sa[] = { "sim", cfg, "--gpus", "4", "--duration", "4", "--warmup", "0", "--json", sim_json,
			     "--quiet", NULL };
	assert_int_equal(wait_for(spawn("sim.log", sa), 60), 0);
	cJSON *sim = load_json("sim.json");
	const cJSON *epochs = cJSON_GetObjectItem(sim, "epochs"), *first = cJSON_GetArrayItem(epochs, 0);
	assert_non_null(first);
	assert_int_equal((int)num(first, "models_moved"), 2);
	assert_int_equal((int)num(first, "stalled_moves"), 1);
	int sim_stalls = 0;
	for (int i = 0; i < cJSON_GetArraySize(epochs); i++)
		sim_stalls += (int)num(cJSON_GetArrayItem(epochs, i), "stalled_moves");
	assert_int_equal((int)num(first, "gpus_moved"), 1);
	assert_true(count_in("schedd.log", "; 2 models move, then 1 GPUs;") >= 1);
	/* the stall's cost (the held model's requests that expire while it loads, and the deferred
	 * one's) agrees within 1.5 percentage points of all requests, per stalled move: two moves
	 * equally good at the rates set (A's or B's, C's or D's) can look better than the current
	 * one by the noise of a measured second, so a later epoch may swap them back in either
	 * driver (the search moves on any gain, as published) */
	double sim_bad = num(sim, "bad_rate"), rt_per = rt_bad / rt_stalls, sim_per = sim_bad / (sim_stalls ? sim_stalls : 1);
	print_message("stalled moves: bad rate runtime %.4f (%d stalled), simulator %.4f (%d)\n", rt_bad, rt_stalls,
		      sim_bad, sim_stalls);
	assert_true(sim_stalls >= 1 && sim_per > 0.005);
	/* within 1.5 points: the runtime's stalled model loses ~13 requests more than the simulator's
	 * (58 against 45: the stall's messages and loads, which the simulator does not time), runtime
	 * 2.0-2.8% against 1.75% in ten runs and three CIs, up to 1.06 points apart (a CI run at
	 * 85ccf91) (not in the thread-sanitizer build, loose timing: its slower processes lose more to
	 * a stall; one run there: runtime 3.4%, simulator 1.75%) */
	if (low_load_bad_allowed == 0)
		assert_true((rt_per > sim_per ? rt_per - sim_per : sim_per - rt_per) <= 0.015);
	cJSON_Delete(sim);
	passed = getenv("SYM_TEST_KEEP") == NULL;
}

/* Epochs with no load: nothing is measured, so nothing moves (at zero rates every split looks as
 * good, and the split's tie-break would give sub-cluster 0, one model of four, three GPUs of four). */
static void test_epochs_idle(void **state)
{
	(void)state;
	config_replace("\"slo_ms\": 40,", "\"slo_ms\": 40, \"num_models\": 4, "
		       "\"partition\": {\"subclusters\": 2, \"assign\": [0, 1, 1, 1], \"load_ms\": 30, "
		       "\"epoch_s\": 0.5},");
	config_replace("\"failure_ms\": 50,", "\"failure_ms\": 3000,");
	struct cluster c;
	cluster_start(&c);
	assert_true(wait_log("schedd.log", "no requests measured; the models and GPUs stay", 2) >= 2);
	assert_int_equal(cluster_stop(&c), 0);
	cJSON *s = load_json("schedd.json");
	assert_int_equal((int)num(s, "epochs.moves_started"), 0);
	assert_int_equal((int)num(s, "epochs.gpus_moved"), 0);
	cJSON_Delete(s);
	passed = true;
}

/* The pid in DIR/NAME (written by the autoscaler's add command), or -1. */
static pid_t pid_in(const char *name)
{
	char *t = slurp(name);
	pid_t p = t ? (pid_t)atoi(t) : -1;
	free(t);
	return p > 0 ? p : -1;
}

/* test_autoscale's and test_control_shift's run: the cluster (start_backends of its backends),
 * `symphony autoscale` (each advice as it comes, and every 0.3 s; cooldown 1 s) starting backends
 * in the background (each reads SYMPHONY_SUBCLUSTER from the add command's environment) and
 * stopping them with SIGTERM (they drain; --release-fraction release_fraction), and loadgen with
 * lg_flags (its load begun so that the advice intervals close advice_phase s into each of its
 * seconds; < 0: whenever); then the
 * backends it started and did not stop, and the cluster. Every process exits 0; returns loadgen's
 * result (DIR/out), every request answered exactly once. */
static cJSON *autoscaled_run(const char *out, const char *const *lg_flags, double advice_phase,
			     const char *release_fraction)
{
	struct cluster c;
	cluster_start(&c);
	char add[1200], rm[600];
	snprintf(add, sizeof(add), "%s backend %s --id $SYMPHONY_BACKEND_ID >> %s/backend$SYMPHONY_BACKEND_ID.log 2>&1 & "
		 "echo $! > %s/be$SYMPHONY_BACKEND_ID.pid", bin, cfg, dir, dir);
	snprintf(rm, sizeof(rm), "kill -TERM $(cat %s/be$SYMPHONY_BACKEND_ID.pid)", dir);
	const char *aa[] = { "autoscale", cfg, "--add-cmd", add, "--remove-cmd", rm, "--interval", "0.3", "--cooldown",
			     "1", "--start-timeout", "10", "--release-fraction", release_fraction, NULL };
	pid_t ctl = spawn("autoscale.log", aa);
	assert_int_equal(wait_log("autoscale.log", "following http", 1), 1);
	if (advice_phase >= 0) {
		/* the load started so that schedd's advice intervals close advice_phase s after each of
		 * its seconds (their grid runs from schedd's start: /metrics'
		 * symphony_autoscale_next_advice_seconds; 1 s intervals here): loadgen's time 0 comes
		 * about 0.3 s after its start (0.37 under ASan: its connections, then 50 ms); the phase
		 * it got is measured from schedd.json after the run */
		assert_int_equal(curl("grid.txt", "GET", 0, "/metrics", ""), 200);
		double now = (double)sym_monotonic_ns() / 1e9;
		char *m = slurp("grid.txt");
		const char *at = m ? strstr(m, "\nsymphony_autoscale_next_advice_seconds ") : NULL;
		assert_non_null(at);
		double start = now + strtod(at + strlen("\nsymphony_autoscale_next_advice_seconds "), NULL) -
			       advice_phase - 0.3;
		free(m);
		while (start < now + 0.05)
			start += 1;
		sleep_ms((int)((start - now) * 1000));
	}
	char path[640];
	snprintf(path, sizeof(path), "%s/%s", dir, out);
	const char *la[16] = { "loadgen", cfg };
	int n = 2;
	for (int i = 0; lg_flags[i] && n < 12; i++)
		la[n++] = lg_flags[i];
	la[n++] = "--json";
	la[n++] = path;
	la[n++] = "--quiet";
	la[n] = NULL;
	int st = wait_for(spawn("loadgen.log", la), 60);
	kill(ctl, SIGTERM);
	int cst = wait_for(ctl, 10);
	for (int i = start_backends; i < NBE; i++) {
		char name[32];
		snprintf(name, sizeof(name), "be%d.pid", i);
		pid_t p = pid_in(name);
		if (p > 0 && kill(p, SIGTERM) == 0)
			for (int k = 0; k < 200 && kill(p, 0) == 0; k++)
				sleep_ms(50);
	}
	int sst = cluster_stop(&c);
	assert_int_equal(st, 0);
	assert_int_equal(cst, 0);
	assert_int_equal(sst, 0);
	return assert_exactly_once(out);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* How late the backends began their batches: the medians, over every backend's stop line in
 * its log ("batches began after their planned start by P50 ms (p50), P99 (p99)"), of their p50s
 * and p99s, as "P50,P99" for the simulator's --start-late (docs/simulator.md); false when no
 * backend said (or its lateness was 0). */
static bool backends_start_late(char *buf, size_t len)
{
	double p50[64], p99[64];
	int n = 0;
	for (int b = 0; b < NBE; b++) {
		char name[32];
		snprintf(name, sizeof(name), "backend%d.log", b);
		char *log = slurp(name);
		for (const char *l = log ? strstr(log, "began after their planned start by ") : NULL; l && n < 64;
		     l = strstr(l + 1, "began after their planned start by "))
			if (sscanf(l, "began after their planned start by %lf ms (p50), %lf (p99)", &p50[n], &p99[n]) == 2)
				n++;
		free(log);
	}
	if (!n)
		return false;
	qsort(p50, (size_t)n, sizeof(double), cmp_double);
	qsort(p99, (size_t)n, sizeof(double), cmp_double);
	double a = n % 2 ? p50[n / 2] : (p50[n / 2 - 1] + p50[n / 2]) / 2,
	       b = n % 2 ? p99[n / 2] : (p99[n / 2 - 1] + p99[n / 2]) / 2;
	if (!(a > 0 && b >= a))
		return false;
	snprintf(buf, len, "%g,%g", a, b);
	return true;
}

/* The provisioning measured in schedd.json s (times against t0, ns): for each backend that joined
 * after the load began, from the advice interval whose advice the controller acted on when it
 * started it (the last to close before autoscale.log's "adding backend N" for it, that line's
 * wall-clock time put on the monotonic clock) to its registration (the controller's read of the
 * advice, the backend's start and registration); their mean, the simulator's provision_s, or -1
 * when none. (Not the first GPU's alone: backends started together come up more slowly, on this
 * 2-core machine 0.54 s against 0.35 s for one alone, under ASan 0.9-1.1 s for three.) */
static double measured_provision(const cJSON *s, double t0, int *count)
{
	struct timespec rt, mt;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	double offset = ((double)rt.tv_sec - (double)mt.tv_sec) * 1e9 + (double)(rt.tv_nsec - mt.tv_nsec);
	/* the controller's starts: backend id, when (monotonic ns) */
	int ids[256], nstarts = 0;
	double at[256];
	char *log = slurp("autoscale.log");
	for (const char *l = log; l && *l && nstarts < 256; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "") {
		const char *add = strstr(l, "adding backend "), *eol = strchr(l, '\n');
		struct tm tm = { 0 };
		int us = 0;
		if (!add || (eol && add > eol) || sscanf(l, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
							 &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &us) != 7)
			continue;
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
		ids[nstarts] = atoi(add + strlen("adding backend "));
		at[nstarts++] = ((double)timegm(&tm) * 1e9 + us * 1e3) - offset;
	}
	free(log);
	const cJSON *rolls = cJSON_GetObjectItem(s, "advice_intervals_closed_ns"), *a;
	double sum = 0;
	int n = 0;
	cJSON_ArrayForEach(a, cJSON_GetObjectItem(s, "control_actions")) {
		double t = num(a, "t_ns");
		if (t <= t0 || strcmp(cJSON_GetObjectItem(a, "action")->valuestring, "backend_joined"))
			continue;
		double started = -1, decided = -1;
		for (int i = 0; i < nstarts; i++) /* its start: the last of its id before it joined */
			if (ids[i] == (int)num(a, "backend") && at[i] <= t)
				started = at[i];
		for (int i = 0; started > 0 && i < cJSON_GetArraySize(rolls); i++) {
			double c = cJSON_GetArrayItem(rolls, i)->valuedouble;
			if (c <= started)
				decided = c;
		}
		if (decided > 0 && started - decided < 2e9) {
			sum += (t - decided) / 1e9;
			n++;
		}
	}
	*count = n;
	return n ? sum / n : -1;
}


/* schedd's GPU-seconds in service per interval and part (advice_intervals_parts' serving_gpu_s,
 * the busy fraction's denominator) against its actions on the same clock: where nothing happened
 * to part p within 0.1 s of the interval, the GPUs serving at its end times its length; where
 * one backend joined p in it (and nothing else), those serving at the last interval's end for the
 * whole interval and the joined one from its registration to the end, less its models' loading
 * (under 0.1 s). (Counted only on schedd's heartbeats, every failure_ms / 8 when that is longer,
 * a joining GPU was in service up to 0.37 s early, and its part read 0.75 busy where the simulator
 * read 0.95.) Not checked when a backend turned suspect (out of service, not an action). Returns
 * the joins checked. */
static int check_serving(const cJSON *s0)
{
	if (num(s0, "suspect_backends") > 0) {
		print_message("GPU-seconds in service not checked: %d backends turned suspect\n",
			      (int)num(s0, "suspect_backends"));
		return -1;
	}
	const cJSON *rolls = cJSON_GetObjectItem(s0, "advice_intervals_closed_ns"),
		    *parts = cJSON_GetObjectItem(s0, "advice_intervals_parts"), *acts = cJSON_GetObjectItem(s0, "control_actions"),
		    *a;
	int nroll = cJSON_GetArraySize(rolls), joins = 0;
	assert_int_equal(cJSON_GetArraySize(parts), nroll);
	for (int i = 1; i < nroll; i++) {
		double lo = cJSON_GetArrayItem(rolls, i - 1)->valuedouble, hi = cJSON_GetArrayItem(rolls, i)->valuedouble,
		       len = (hi - lo) / 1e9;
		const cJSON *x = cJSON_GetArrayItem(parts, i), *on = cJSON_GetObjectItem(x, "gpus_serving"),
			    *gs = cJSON_GetObjectItem(x, "serving_gpu_s"),
			    *was = cJSON_GetObjectItem(cJSON_GetArrayItem(parts, i - 1), "gpus_serving");
		assert_non_null(gs);
		for (int p = 0; p < cJSON_GetArraySize(on); p++) {
			int nact = 0, n = cJSON_GetArrayItem(on, p)->valueint;
			double joined = -1, got = cJSON_GetArrayItem(gs, p)->valuedouble, want;
			cJSON_ArrayForEach(a, acts) {
				double t = num(a, "t_ns");
				if (t > lo - 1e8 && t < hi + 1e8 && ((int)num(a, "to") == p || (int)num(a, "from") == p)) {
					nact++;
					if (!strcmp(cJSON_GetObjectItem(a, "action")->valuestring, "backend_joined"))
						joined = t;
				}
			}
			if (nact == 0) {
				want = n * len;
				if (fabs(got - want) > 0.02)
					fail_msg("interval %d, part %d: %.3f GPU-s in service, %d GPUs for %.3f s", i, p, got, n, len);
			} else if (nact == 1 && joined > lo + 1e8 && joined < hi - 1e8) {
				int before = cJSON_GetArrayItem(was, p)->valueint;
				assert_int_equal(n, before + 1);
				want = before * len + (hi - joined) / 1e9;
				if (got < want - 0.1 || got > want + 0.02)
					fail_msg("interval %d, part %d: %.3f GPU-s in service, %d GPUs for %.3f s and one joined "
						 "%.3f s before its end: %.3f", i, p, got, before, len, (hi - joined) / 1e9, want);
				joins++;
			}
		}
	}
	return joins;
}
/* The advice intervals' signals of one driver as text, an interval a group: "t: n/busy/bad ..." per
 * sub-cluster. Runtime: schedd.json's advice_intervals_parts with its closing times `closed` (ns,
 * against t0); simulator: autoscaler.decisions (closed NULL). */
static void shift_signals(const cJSON *ivs, const cJSON *closed, double t0, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; ivs && i < cJSON_GetArraySize(ivs) && o < len; i++) {
		const cJSON *x = cJSON_GetArrayItem(ivs, i);
		const cJSON *n = cJSON_GetObjectItem(x, closed ? "gpus_serving" : "subcluster_gpus_in_service"),
			    *busy = cJSON_GetObjectItem(x, closed ? "busy_fraction" : "subcluster_busy_fraction"),
			    *bad = cJSON_GetObjectItem(x, closed ? "bad_rate" : "subcluster_bad_rate");
		double t = closed ? (cJSON_GetArrayItem(closed, i)->valuedouble - t0) / 1e9 : num(x, "t_s");
		if (t <= 0)
			continue;
		o += (size_t)snprintf(buf + o, len - o, "%s%.2f:", o ? "; " : "", t);
		if (!closed && !n) /* (the simulator without sub-clusters: the whole cluster's) */
			o += (size_t)snprintf(buf + o, len - o, " %d/%.2f/%.3f", (int)num(x, "gpus_in_service"),
					      num(x, "busy_fraction"), num(x, "bad_rate"));
		for (int j = 0; n && busy && bad && j < cJSON_GetArraySize(n) && o < len; j++)
			o += (size_t)snprintf(buf + o, len - o, " %d/%.2f/%.3f", cJSON_GetArrayItem(n, j)->valueint,
					      cJSON_GetArrayItem(busy, j)->valuedouble,
					      cJSON_GetArrayItem(bad, j)->valuedouble);
	}
}

/* `symphony autoscale` following a step in load: the cluster starts with backend 0 of up to 4
 * (backends_max); loadgen offers 100 req/s, then 1,000 (about three GPUs' worth), then 100
 * again. The controller, reading schedd's advice every 0.3 s, starts backends with its add
 * command at the step and stops them (SIGTERM: they drain) with its remove command after it.
 * Every request is answered exactly once, none for a failed backend. */
static void test_autoscale(void **state)
{
	(void)state;
	start_backends = 1;
	config_replace("\"failure_ms\": 50,", "\"failure_ms\": 3000, \"backends_max\": 4,");
	config_replace("\"backends\": 4,", "\"backends\": 1,");
	const char *lg[] = { "--segments", "4:100,6:1000,8:100", "--warmup", "0.5", NULL };
	/* the load started so that the advice intervals close 0.28 s into each of its seconds (0.18-0.28
	 * measured, the lower under ASan): the first decision after the step reads enough of it to add
	 * two GPUs at once, and the overload lasts least (the simulator over phases 0.1-0.9: 12.5%
	 * bad at 0.1, where the first adds one; 8.7-9.7% at 0.2-0.3; 10.4-15.1% at 0.4-0.9, the first
	 * decision later). A CI run under ASan at phase 0.92 spent two seconds overloaded on one GPU
	 * and ended 5.7 points apart (25.0% against 19.3%) */
	cJSON *j2 = autoscaled_run("step.json", lg, 0.28, "1");
	int adds = count_in("autoscale.log", "adding backend"), removes = count_in("autoscale.log", "removing backend");
	assert_true(adds >= 1);
	assert_true(removes >= 1);
	assert_int_equal(count_in("autoscale.log", "command exited 0"), adds + removes);
	assert_int_equal(count_in("autoscale.log", "adding backend 0"), 0); /* it serves: never started again */
	assert_int_equal((int)num(j2, "checks.failed_by_status.backend failed"), 0);
	cJSON *s = load_json("schedd.json");
	assert_int_equal((int)num(s, "backend_failures"), 0);
	assert_int_equal((int)num(s, "failed_requests"), 0);
	assert_true(num(s, "peers_left") >= removes); /* each removed backend said bye and drained */
	if (low_load_bad_allowed == 0)
		check_serving(s);
	/* where schedd's advice intervals fell against the load (both on the host's monotonic clock),
	 * and that one after the step asked for GPUs */
	double t0 = num(j2, "checks.t0_monotonic_ns"), phase = -1, decided = -1;
	const cJSON *rolls = cJSON_GetObjectItem(s, "advice_intervals_closed_ns"), *roll;
	const cJSON *radds = cJSON_GetObjectItem(s, "advice_intervals_add_gpus");
	int ri = 0;
	cJSON_ArrayForEach(roll, rolls) {
		double after = (roll->valuedouble - t0) / 1e9;
		if (phase < 0 && after > 0)
			phase = after - (double)(long)after;
		if (decided < 0 && after > 4 && cJSON_GetArrayItem(radds, ri)->valueint > 0)
			decided = roll->valuedouble;
		ri++;
	}
	assert_true(phase >= 0 && phase < 1 && decided > 0);
	/* and how long a GPU it added took to serve: the simulator's provision_s */
	int nprov;
	double provision = measured_provision(s, t0, &nprov);
	if (low_load_bad_allowed > 0 && !(provision > 0 && provision < 5)) {
		/* (the thread-sanitizer build; the actions are asserted above, the timing is not) */
		print_message("autoscaling on a step: provision %.3f s (loose timing): no simulator comparison\n",
			      provision);
		cJSON_Delete(s);
		cJSON_Delete(j2);
		passed = getenv("SYM_TEST_KEEP") == NULL;
		return;
	}
	assert_true(provision > 0 && provision < 5);
	char rt_sig[2400];
	shift_signals(cJSON_GetObjectItem(s, "advice_intervals_parts"), rolls, t0, rt_sig, sizeof(rt_sig));
	cJSON_Delete(s);
	/* control fidelity (issue 31): the simulator's autoscaler, the same decision (control/scale.h)
	 * on the same cluster and step (advice interval 1 s, cooldown 1 s, a backend serving about 0.3 s
	 * after its start), with its decisions where schedd's fell (phase_s), adds GPUs at the step and
	 * releases back to one after it, about as many, and the bad rates agree */
	char sim_json[400], as[200];
	snprintf(sim_json, sizeof(sim_json), "%s/as-sim.json", dir);
	snprintf(as, sizeof(as), "{\"interval_s\": 1, \"cooldown_s\": 1, \"provision_s\": %.3f, \"start_gpus\": 1, "
		 "\"phase_s\": %.3f}", provision, phase < 0.9995 ? phase : 0); /* (as printed: below 1) */
	const char *sa[] = { "sim", cfg, "--gpus", "4", "--segments", "4:100,6:1000,8:100", "--warmup", "0.5",
			     "--autoscale", as, "--json", sim_json, "--quiet", NULL };
	assert_int_equal(wait_for(spawn("as-sim.log", sa), 60), 0);
	cJSON *sim = load_json("as-sim.json");
	int sim_added = (int)num(sim, "autoscaler.gpus_added"), sim_released = (int)num(sim, "autoscaler.gpus_released");
	double rt_bad = num(j2, "bad_rate");
	char sim_sig[2400];
	shift_signals(cJSON_GetObjectItem(cJSON_GetObjectItem(sim, "autoscaler"), "decisions"), NULL, 0, sim_sig,
		      sizeof(sim_sig));
	print_message("advice per interval (t: GPUs serving/busy fraction/bad rate):\n");
	print_message("runtime   %s\n", rt_sig);
	print_message("simulator %s\n", sim_sig);
	print_message("autoscaling on a step: runtime added %d, released %d, bad rate %.4f; simulator (phase %.3f s, "
		      "provision %.3f s) added %d, released %d, bad rate %.4f\n", adds, removes, rt_bad, phase, provision,
		      sim_added, sim_released, num(sim, "bad_rate"));
	char late[64]; /* the simulator given the backends' start lateness (printed; see below) */
	if (backends_start_late(late, sizeof(late))) {
		char late_json[400];
		snprintf(late_json, sizeof(late_json), "%s/as-sim-late.json", dir);
		const char *sl[] = { "sim", cfg, "--gpus", "4", "--segments", "4:100,6:1000,8:100", "--warmup", "0.5",
				     "--autoscale", as, "--start-late", late, "--json", late_json, "--quiet", NULL };
		assert_int_equal(wait_for(spawn("as-sim-late.log", sl), 60), 0);
		cJSON *lj = load_json("as-sim-late.json");
		print_message("simulator given the backends' start lateness (--start-late %s ms): bad rate %.4f\n", late,
			      num(lj, "bad_rate"));
		cJSON_Delete(lj);
	}
	assert_true(sim_added >= 2 && sim_added == sim_released); /* back to the one it started with */
	assert_true(abs(sim_added - adds) <= 2);
	/* bad rates within 5 points: with schedd's advice on a fixed grid, the controller reading
	 * each advice as it comes and the mean provisioning, 0.5 to 2.5 in twelve runs (median 1.6;
	 * before, 1.2 to 4.9; docs/runtime.md), the runtime the worse each time: its backends begin
	 * batches late (p99 1-2 ms, 3-4.5 under ASan), the simulator's GPUs on time, and the interval
	 * after the step's second add reads 16-25% bad in the runtime against 14-16% (the two or three
	 * backends it starts at once come up at different moments, the simulator's after one
	 * provisioning). The simulator given the lateness (printed above) came within 0.2-1.2 points
	 * in seven runs of eight, but not as a bound: the lateness moves its decisions on this sharp
	 * step (a run: 10.1% against the runtime's 16.6% and 13.7% on time). Not in the
	 * thread-sanitizer build (loose timing: the actions, not timing): its processes run several
	 * times slower than the profile the simulator is given */
	double sim_bad = num(sim, "bad_rate");
	if (low_load_bad_allowed == 0)
		assert_true(fabs(rt_bad - sim_bad) <= 0.05);
	cJSON_Delete(sim);
	cJSON_Delete(j2);
	passed = getenv("SYM_TEST_KEEP") == NULL;
}

/* test_control_shift's actions of one driver: when (s), what (a add, r release, g GPU moved, m
 * model moved), the sub-cluster (added to, released from, moved to; -1: not said) and how many. */
struct shift_acts {
	int n;
	struct {
		double t;
		char kind;
		int part, count;
	} a[64];
};

static void shift_note(struct shift_acts *x, double t, char kind, int part, int count)
{
	assert_true(x->n < 64);
	x->a[x->n].t = t;
	x->a[x->n].kind = kind;
	x->a[x->n].part = part;
	x->a[x->n++].count = count;
}

/* Actions of `kind` (0: any) in [from, to) s, in sub-cluster `part` (-1: any). */
static int shift_count(const struct shift_acts *x, double from, double to, char kind, int part)
{
	int n = 0;
	for (int i = 0; i < x->n; i++)
		if (x->a[i].t >= from && x->a[i].t < to && (!kind || x->a[i].kind == kind) &&
		    (part < 0 || x->a[i].part == part))
			n += x->a[i].count;
	return n;
}

/* Matches each GPU of an action of x with one of y of the same kind and part (the simulator's
 * GPU moves name no part: any) within tol seconds, greedily in x's order, nearest first; the
 * GPUs left in each: unmatched[0] (x), unmatched[1] (y). */
static void shift_match(const struct shift_acts *x, const struct shift_acts *y, double tol, int *unmatched)
{
	int left_y[64], nx = 0;
	for (int i = 0; i < y->n; i++)
		left_y[i] = y->a[i].count;
	for (int i = 0; i < x->n; i++)
		for (int c = 0; c < x->a[i].count; c++) {
			int best = -1;
			for (int k = 0; k < y->n; k++)
				if (left_y[k] && y->a[k].kind == x->a[i].kind &&
				    (x->a[i].part == y->a[k].part || x->a[i].part < 0 || y->a[k].part < 0) &&
				    fabs(y->a[k].t - x->a[i].t) <= tol &&
				    (best < 0 || fabs(y->a[k].t - x->a[i].t) < fabs(y->a[best].t - x->a[i].t)))
					best = k;
			if (best >= 0)
				left_y[best]--;
			else
				nx++;
		}
	unmatched[0] = nx;
	unmatched[1] = 0;
	for (int k = 0; k < y->n; k++)
		unmatched[1] += left_y[k];
}

static char *shift_format(const struct shift_acts *x, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; i < x->n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%.2f %c%d p%d", i ? ", " : "", x->a[i].t, x->a[i].kind,
				      x->a[i].count, x->a[i].part);
	return buf;
}

/* One control plane on loopback (issue 31): two models, each a sub-cluster of its own, on two of
 * up to four GPUs (backends 0 and 1; 1 s epochs), under a shift of load: 60 req/s each for 3 s,
 * then model 0 at 500 for 5 s, then model 1 at 500 for 6 s, then 60 each for 4 s (the
 * configuration's rate_csv). `symphony autoscale` (each advice as it comes, cooldown 1 s) adds GPUs to
 * sub-cluster 0 at the first shift, starting each backend for it (--subcluster: an id of the other
 * part joins too, control/scale.h's sym_scale_pick); after the second shift an epoch moves a GPU
 * from sub-cluster 0 to 1; at the end GPUs are released. Every request is answered once. The
 * simulator, run on the same file with the same autoscaler (its decisions where schedd's fell,
 * the measured provisioning), takes the same actions, each within 1.5 s of the runtime's, and
 * its bad rate is within a point. Both release 0.8 of the GPUs the papers' rule advises, and the
 * load is started at phase 0.45 of schedd's advice intervals: away from the rule's edges (below). */
static void test_control_shift(void **state)
{
	(void)state;
	char csv[400];
	snprintf(csv, sizeof(csv), "%s/shift.csv", dir);
	FILE *f = fopen(csv, "w");
	assert_non_null(f);
	fprintf(f, "second,m,m#2\n");
	for (int t = 0; t < 18; t++)
		fprintf(f, "%d,%d,%d\n", t, t >= 3 && t < 8 ? 500 : 60, t >= 8 && t < 14 ? 500 : 60);
	fclose(f);
	char exp[800];
	snprintf(exp, sizeof(exp), "\"slo_ms\": 40, \"num_models\": 2, \"rate_csv\": \"%s\", \"partition\": "
		 "{\"subclusters\": 2, \"assign\": [0, 1], \"load_ms\": 30, \"epoch_s\": 1},", csv);
	config_replace("\"slo_ms\": 40,", exp);
	config_replace("\"heartbeat_ms\": 10,", "\"heartbeat_ms\": 10, \"threads\": 2,");
	config_replace("\"failure_ms\": 50,", "\"failure_ms\": 3000, \"backends_max\": 4,");
	config_replace("\"backends\": 4,", "\"backends\": 2,");
	/* a sub-cluster the cluster lacks is refused, from the flag or from the environment */
	const char *bad[] = { "backend", cfg, "--id", "3", "--subcluster", "2", "--check", NULL };
	assert_int_equal(wait_for(spawn("badpart.log", bad), 10), 2);
	assert_int_equal(count_in("badpart.log", "sub-cluster 2 (--subcluster): the cluster has 2"), 1);
	setenv("SYMPHONY_SUBCLUSTER", "1x", 1);
	const char *bad2[] = { "backend", cfg, "--id", "3", "--check", NULL };
	assert_int_equal(wait_for(spawn("badpart2.log", bad2), 10), 2);
	unsetenv("SYMPHONY_SUBCLUSTER");
	assert_int_equal(count_in("badpart2.log", "SYMPHONY_SUBCLUSTER='1x' in the environment"), 1);
	start_backends = 2;
	const char *lg[] = { "--warmup", "0.5", NULL }; /* (the load: rate_csv) */
	cJSON *j = autoscaled_run("shift.json", lg, 0.45, "0.8");
	assert_int_equal((int)num(j, "checks.failed_by_status.backend failed"), 0);
	cJSON *s0 = load_json("schedd.json");
	assert_int_equal((int)num(s0, "backend_failures"), 0);
	assert_int_equal((int)num(s0, "failed_requests"), 0);
	/* the runtime's actions against the load (the host's monotonic clock): a GPU added (its backend
	 * registered, after the provisioning measured below), released (its backend left), moved */
	double t0 = num(j, "checks.t0_monotonic_ns");
	struct shift_acts rt = { 0 }, sim = { 0 };
	const cJSON *acts = cJSON_GetObjectItem(s0, "control_actions"), *a;
	/* the provisioning (measured_provision), and the phase of schedd's advice intervals against the
	 * load */
	int nprov;
	double provision = measured_provision(s0, t0, &nprov);
	if (low_load_bad_allowed == 0) { /* (an add at the first shift at least; timing: not under TSan) */
		int joins = check_serving(s0);
		assert_true(joins < 0 || joins >= 1);
	}
	double phase = -1;
	const cJSON *rolls = cJSON_GetObjectItem(s0, "advice_intervals_closed_ns"), *roll;
	cJSON_ArrayForEach(roll, rolls) {
		double t = (roll->valuedouble - t0) / 1e9;
		if (t > 0 && phase < 0)
			phase = t - (double)(long)t;
	}
	assert_true(nprov >= 1 && phase >= 0 && phase < 1 && provision > 0 && provision < 5);
	cJSON_ArrayForEach(a, acts) {
		double t = (num(a, "t_ns") - t0) / 1e9;
		const char *what = cJSON_GetObjectItem(a, "action")->valuestring;
		if (t <= 0)
			continue;
		if (!strcmp(what, "backend_joined"))
			shift_note(&rt, t - provision, 'a', (int)num(a, "to"), 1);
		else if (!strcmp(what, "backend_left"))
			shift_note(&rt, t, 'r', (int)num(a, "from"), 1);
		else if (!strcmp(what, "gpu_moved"))
			shift_note(&rt, t, 'g', (int)num(a, "to"), 1);
		else if (!strcmp(what, "model_moved"))
			shift_note(&rt, t, 'm', (int)num(a, "to"), 1);
		else
			fail_msg("runtime action %s", what);
	}
	/* the split of the four ids at the start: backends 0 and 1 (those the cluster starts with) one
	 * part each, 2 and 3 one each too; each backend the controller started joined the sub-cluster
	 * it was started for (the n-th registration of an id after its n-th start), 3 or 2 then
	 * joining the other part's when a part asked for two */
	assert_int_equal(count_in("schedd.log", "backend 0 (a100) registered: loading or unloading 1 models (sub-cluster 0;"), 1);
	assert_int_equal(count_in("schedd.log", "backend 1 (a100) registered: loading or unloading 1 models (sub-cluster 1;"), 1);
	char *alog = slurp("autoscale.log");
	assert_non_null(alog);
	int starts[NBE] = { 0 };
	cJSON_ArrayForEach(a, acts) {
		if (strcmp(cJSON_GetObjectItem(a, "action")->valuestring, "backend_joined") || num(a, "t_ns") < t0)
			continue;
		int id = (int)num(a, "backend"), want = -1, k = 0;
		assert_true(id >= 2 && id < NBE);
		for (const char *l = strstr(alog, "sub-cluster "); l; l = strstr(l + 1, "sub-cluster ")) {
			int part, bid;
			if (sscanf(l, "sub-cluster %d: advice %*[^:]: adding backend %d", &part, &bid) == 2 && bid == id &&
			    k++ == starts[id])
				want = part;
		}
		starts[id]++;
		assert_int_equal((int)num(a, "to"), want);
	}
	free(alog);
	double rt_bad = num(j, "bad_rate");
	/* each advice interval's signals per sub-cluster, for the log beside the simulator's below */
	char rt_sig[2400];
	shift_signals(cJSON_GetObjectItem(s0, "advice_intervals_parts"), rolls, t0, rt_sig, sizeof(rt_sig));
	/* schedd's epochs against the load: their timer started with schedd, before the load */
	double ep = (num(s0, "epochs.first_epoch_ns") - t0) / 1e9, ep_phase = ep - floor(ep);
	/* and the longest the machine held schedd (its timers, a batch's completion), ms */
	double held_ms = fmax(num(s0, "scheduler_lag_max_us"), num(s0, "completion_lag_max_us")) / 1e3;
	cJSON_Delete(s0);
	cJSON_Delete(j);
	/* the simulator on the same file: the autoscaler's decisions at schedd's phase, each GPU
	 * serving `provision` after it (and its models' loading), epochs every second at schedd's
	 * epochs' phase */
	char sim_json[400], as[200], part[200];
	snprintf(sim_json, sizeof(sim_json), "%s/shift-sim.json", dir);
	snprintf(as, sizeof(as), "{\"interval_s\": 1, \"cooldown_s\": 1, \"provision_s\": %.3f, \"start_gpus\": 2, "
		 "\"phase_s\": %.3f, \"release_fraction\": 0.8}", provision, phase < 0.9995 ? phase : 0); /* (below 1) */
	snprintf(part, sizeof(part), "{\"subclusters\": 2, \"assign\": [0, 1], \"load_ms\": 30, \"epoch_s\": 1, "
		 "\"phase_s\": %.3f}", ep_phase < 0.9995 ? ep_phase : 0);
	const char *sa[] = { "sim", cfg, "--gpus", "4", "--warmup", "0.5", "--autoscale", as, "--partition", part, "--json",
			     sim_json, "--quiet", NULL };
	assert_int_equal(wait_for(spawn("shift-sim.log", sa), 60), 0);
	cJSON *sj = load_json("shift-sim.json");
	const cJSON *d;
	cJSON_ArrayForEach(d, cJSON_GetObjectItem(cJSON_GetObjectItem(sj, "autoscaler"), "decisions")) {
		const cJSON *deltas = cJSON_GetObjectItem(d, "subcluster_delta");
		for (int p = 0; p < cJSON_GetArraySize(deltas); p++) {
			int k = cJSON_GetArrayItem(deltas, p)->valueint;
			if (k)
				shift_note(&sim, num(d, "t_s"), k > 0 ? 'a' : 'r', p, k > 0 ? k : -k);
		}
	}
	cJSON_ArrayForEach(d, cJSON_GetObjectItem(sj, "epochs")) {
		if (num(d, "gpus_moved") > 0)
			shift_note(&sim, num(d, "t_s"), 'g', -1, (int)num(d, "gpus_moved"));
		if (num(d, "models_moved") > 0)
			shift_note(&sim, num(d, "t_s"), 'm', -1, (int)num(d, "models_moved"));
	}
	double sim_bad = num(sj, "bad_rate"), late_bad = -1;
	char sim_sig[2400];
	shift_signals(cJSON_GetObjectItem(cJSON_GetObjectItem(sj, "autoscaler"), "decisions"), NULL, 0, sim_sig,
		      sizeof(sim_sig));
	/* and the simulator given the backends' start lateness (printed: see below) */
	char late[64];
	if (backends_start_late(late, sizeof(late))) {
		char late_json[400];
		snprintf(late_json, sizeof(late_json), "%s/shift-sim-late.json", dir);
		const char *sl[] = { "sim", cfg, "--gpus", "4", "--warmup", "0.5", "--autoscale", as, "--partition", part,
				     "--start-late", late, "--json", late_json, "--quiet", NULL };
		assert_int_equal(wait_for(spawn("shift-sim-late.log", sl), 60), 0);
		cJSON *lj = load_json("shift-sim-late.json");
		late_bad = num(lj, "bad_rate");
		cJSON_Delete(lj);
	}
	cJSON_Delete(sj);
	char rts[600], sims[600];
	print_message("advice per interval (t: GPUs serving/busy fraction/bad rate per sub-cluster):\n");
	print_message("runtime   %s\n", rt_sig);
	print_message("simulator %s\n", sim_sig);
	print_message("control actions on a shift of load, runtime (bad rate %.4f; provision %.3f s, phases %.3f s, "
		      "epochs %.3f s): %s\nsimulator (bad rate %.4f): %s\n", rt_bad, provision, phase, ep_phase,
		      shift_format(&rt, rts, sizeof(rts)), sim_bad, shift_format(&sim, sims, sizeof(sims)));
	if (late_bad >= 0)
		print_message("simulator given the backends' start lateness (--start-late %s ms): bad rate %.4f\n", late,
			      late_bad);
	/* The same actions: each GPU added, released or moved in one driver is matched with one of the
	 * same kind and sub-cluster in the other within 1.5 s (the advice interval, the epochs'
	 * phases). The decisions must not sit at the papers' rule's edges (an add of ceil(N r/(1-r)) at
	 * r near 0.5; a release of floor(N f) at 3 GPUs near 66.7% busy, where this load holds three
	 * GPUs at 67-72%), where the drivers' few hundredths apart go different ways (a CI run at
	 * phase 0.85: 2 and 1 unmatched, 3.2 points apart; one at phase 0.41 with the whole advice
	 * released: the runtime read 66% busy on three GPUs after an add, the simulator 78%, and
	 * released one). Releasing 0.8 of the advice moves that edge to 58.3%, and at phases 0.35-0.55
	 * a scan of the simulator keeps every decision 0.069 or more (in busy fraction) from an edge
	 * (docs/runtime.md). At most 1 unmatched in either driver. Not in the
	 * thread-sanitizer build (loose timing: the answers, not timing), whose processes run several
	 * times slower than the profile the simulator is given: there a low load is already bad. */
	int unmatched[2];
	struct shift_acts rt_load = { 0 }; /* (the runtime's warm-up, if any, is checked below) */
	for (int i = 0; i < rt.n; i++)
		if (rt.a[i].t >= 2.9)
			rt_load.a[rt_load.n++] = rt.a[i];
	shift_match(&rt_load, &sim, 1.5, unmatched);
	print_message("unmatched: runtime %d, simulator %d\n", unmatched[0], unmatched[1]);
	for (int which = 0; which < 2; which++)
		assert_int_equal(shift_count(which ? &sim : &rt, 0, 100, 'm', -1), 0); /* one model a part */
	if (low_load_bad_allowed > 0) {
		passed = getenv("SYM_TEST_KEEP") == NULL;
		return;
	}
	assert_true(unmatched[0] <= 1 && unmatched[1] <= 1);
	/* and in both: nothing before the first shift, GPUs added to sub-cluster 0 after it (none to 1
	 * before the second), a GPU moved after the second, GPUs of sub-cluster 1 released after the
	 * last. (But the runtime's warm-up: a cold cluster can drop one of its first requests, 1 bad of
	 * 7 to 60 in the first interval, 1.5-14%; the advice then asks for a GPU, released a cooldown
	 * later, before the shift: 2 runs in 10. At most that one add and its release.) */
	int warm_adds = shift_count(&rt, 0, 2.9, 'a', -1);
	assert_true(warm_adds <= 1);
	assert_int_equal(shift_count(&rt, 0, 2.9, 'r', -1), warm_adds);
	assert_int_equal(shift_count(&rt, 0, 2.9, 'g', -1) + shift_count(&rt, 0, 2.9, 'm', -1), 0);
	for (int which = 0; which < 2; which++) {
		struct shift_acts *x = which ? &sim : &rt;
		if (which)
			assert_int_equal(shift_count(x, 0, 2.9, 0, -1), 0);
		assert_true(shift_count(x, 2.9, 9.5, 'a', 0) >= 1);
		assert_int_equal(shift_count(x, which ? 0 : 2.9, 7.5, 'a', 1), 0);
		assert_true(shift_count(x, 8, 15.5, 'g', -1) >= 1);
		assert_true(shift_count(x, 14, 100, 'r', 1) >= 1);
	}
	/* and both serve it alike, within a point: 0.2 to 0.5 points apart in 15 of 16 runs with the
	 * load at phase 0.33-0.43 (the runtime the worse each time; docs/runtime.md), unless the
	 * machine held schedd for over 20 ms, which the simulator does not model (a run held 116 ms:
	 * 1.3 points, 60 requests more dropped); then within 2.5. Under AddressSanitizer within 2:
	 * its instrumented backends begin batches later (start lateness p99 1.1-2.4 ms against 0.6-1.2
	 * in release runs; the simulator's GPUs on time), 0.30-1.27 points apart in 11 runs. The
	 * simulator given that lateness (printed above, --start-late) came within 0.01-0.55 in four
	 * ASan runs and 0.00-0.46 in four release runs, but it is no bound: with another cluster running
	 * beside it (p99 3.2 ms) the lateness moved its decisions (3.7% against the runtime's 6.7%). Not in the
	 * thread-sanitizer build (test_autoscale). */
	double gap = fabs(rt_bad - sim_bad), bound = held_ms > 20 ? 0.025 : 0.01;
#if defined(__SANITIZE_ADDRESS__)
	bound = fmax(bound, 0.02);
#endif
	print_message("bad rates %.2f points apart (at most %.1f); the machine held schedd up to %.1f ms\n", 100 * gap,
		      100 * bound, held_ms);
	if (low_load_bad_allowed == 0)
		assert_true(gap <= bound);
	passed = getenv("SYM_TEST_KEEP") == NULL;
}

/* A running cluster's membership, under load: a fifth backend joins (backends_max 5) and
 * later leaves on SIGTERM, a backend stalled for 200 ms (SIGSTOP) is only suspect (no new
 * plans, nothing failed) and serves again, and frontend 1 leaves on SIGTERM after answering
 * all it held, while loadgen goes on with frontend 0. Every request is answered exactly
 * once, none "backend failed" or "frontend gone", and every process left exits 0. */
static void test_membership(void **state)
{
	(void)state;
	config_replace("\"failure_ms\": 50,", "\"failure_ms\": 1000, \"backends_max\": 5,");
	struct cluster c;
	cluster_start(&c);
	assert_int_equal(curl("ready0", "GET", 1, "/v2/health/ready", ""), 200);
	pid_t lg = loadgen_start("members.json", "400", "7");
	sleep_ms(1000);
	const char *a[] = { "backend", cfg, "--id", "4", NULL };
	pid_t b4 = spawn("backend4.log", a);
	assert_int_equal(wait_log("schedd.log", "backend 4 (", 1), 1); /* joined */
	sleep_ms(700);
	kill(c.be[1], SIGSTOP);
	sleep_ms(200);
	kill(c.be[1], SIGCONT);
	/* (the log of suspects heard again is rate-limited: schedd.json's counts are checked below) */
	sleep_ms(700);
	kill(b4, SIGTERM);
	assert_int_equal(wait_for(b4, 12), 0);
	sleep_ms(500);
	kill(c.fe[1], SIGTERM);
	assert_int_equal(wait_for(c.fe[1], 12), 0);
	c.fe[1] = -1;
	running.fe[1] = -1;
	int st = wait_for(lg, 40);
	int sst = cluster_stop(&c);
	assert_int_equal(st, 0);
	assert_int_equal(sst, 0);
	cJSON *s = load_json("schedd.json");
	assert_int_equal((int)num(s, "backend_failures"), 0);
	assert_int_equal((int)num(s, "frontend_failures"), 0);
	assert_int_equal((int)num(s, "failed_requests"), 0);
	assert_true(num(s, "suspect_backends") >= 1);
	/* every suspect came back (backend 1 after its stall; a backend slow to beat under load too) */
	assert_int_equal((int)num(s, "suspects_back_online"), (int)num(s, "suspect_backends"));
	assert_true(num(s, "peers_left") >= 2);
	cJSON_Delete(s);
	assert_int_equal(count_in("schedd.log", "backend 4 left"), 1);
	assert_int_equal(count_in("schedd.log", "frontend 1 left"), 1);
	assert_int_equal(count_in("backend4.log", "left: every batch in hand is done"), 1);
	assert_int_equal(count_in("frontend1.log", "drained: every request held was answered"), 1);
	cJSON *j = assert_exactly_once("members.json");
	assert_int_equal((int)num(j, "checks.frontends_lost"), 1);
	assert_int_equal((int)num(j, "checks.failed_by_status.backend failed"), 0);
	assert_int_equal((int)num(j, "checks.failed_by_status.frontend gone"), 0);
	/* the run went on (on time for most: 79.6% once on a CI machine shared with a CPU-heavy job,
	 * where backends stalled past suspect_ms three times) */
	assert_true(num(j, "served") > 0.6 * num(j, "offered"));
	cJSON_Delete(j);
	passed = true;
}

/* SIGTERM of schedd under load: it tells the frontends (they take no new request and turn
 * not ready), serves what it holds, and exits 0; every request is answered exactly once.
 * Restarted, it takes the backends back (ready again); with every backend gone (SIGTERM:
 * each leaves), the frontends are not ready: no GPU can run the model. */
static void test_schedd_sigterm(void **state)
{
	(void)state;
	config_replace("\"failure_ms\": 50,", "\"failure_ms\": 1000,");
	struct cluster c;
	cluster_start(&c);
	pid_t lg = loadgen_start("term.json", "400", "4");
	sleep_ms(2000);
	kill(c.schedd, SIGTERM);
	assert_int_equal(wait_for(c.schedd, 12), 0);
	assert_int_equal(count_in("schedd.log", "drained: every request held was served or dropped"), 1);
	int st = wait_for(lg, 40);
	assert_int_equal(st, 0);
	cJSON *j = assert_exactly_once("term.json");
	assert_int_equal((int)num(j, "checks.failed_by_status.backend failed"), 0);
	cJSON_Delete(j);
	assert_int_equal(curl("ready1", "GET", 1, "/v2/health/ready", ""), 503);
	/* schedd again: the backends and frontends come back to it */
	char sjson[400];
	snprintf(sjson, sizeof(sjson), "%s/schedd2.json", dir);
	const char *sa[] = { "schedd", cfg, "--json", sjson, NULL };
	c.schedd = spawn("schedd2.log", sa);
	running.schedd = c.schedd;
	assert_int_equal(wait_log("schedd2.log", "registered: GPU", NBE), NBE);
	double end = now_s() + 5;
	int code = 0;
	while (now_s() < end && (code = curl("ready2", "GET", 1, "/v2/health/ready", "")) != 200)
		sleep_ms(50);
	assert_int_equal(code, 200);
	for (int i = 0; i < NBE; i++) {
		kill(c.be[i], SIGTERM);
		assert_int_equal(wait_for(c.be[i], 12), 0);
		c.be[i] = running.be[i] = -1;
	}
	end = now_s() + 5;
	while (now_s() < end && (code = curl("ready3", "GET", 1, "/v2/models/m/ready", "")) != 503)
		sleep_ms(50);
	assert_int_equal(code, 503);
	assert_int_equal(cluster_stop(&c), 0);
	passed = true;
}

/* A hot standby scheduler: kill -9 of the active one under load. The standby notices (its
 * connection to the active one closes), takes over, the frontends and backends register
 * with it, and the frontends send it the requests they hold; every request is answered
 * exactly once. Prints the detection and takeover times and the bad rate of the run. */
static void test_failover(void **state)
{
	(void)state;
	struct cluster c;
	pid_t standby = cluster_start_with_standby(&c);
	/* readiness: the active scheduler is ready, the standby live but not ready */
	assert_int_equal(curl("ready", "GET", 0, "/v2/health/ready", ""), 200);
	assert_int_equal(curl("sready", "GET", 511, "/v2/health/ready", ""), 503);
	assert_int_equal(count_in("sready", "\"reason\":\"this scheduler stands by (the active one is at 127.0.0.1:"), 1);
	assert_int_equal(curl("slive", "GET", 511, "/v2/health/live", ""), 200);
	pid_t lg = loadgen_start("failover.json", "400", "5");
	sleep_ms(2500);
	kill_active(&c, standby);
	int st = wait_for(lg, 40);
	int code = 0; /* the one that took over is ready once a GPU registered with it */
	for (int k = 0; k < 100 && (code = curl("sready", "GET", 511, "/v2/health/ready", "")) != 200; k++)
		sleep_ms(50);
	assert_int_equal(code, 200);
	int sst = cluster_stop(&c);
	assert_int_equal(st, 0);
	assert_int_equal(sst, 0);
	cJSON *s = load_json("standby.json");
	double detect = num(s, "failover.detected_after_ms"), reg = num(s, "failover.all_registered_after_ms");
	assert_true(detect >= 0 && detect < 300);
	assert_true(reg > 0 && reg < 2000);
	cJSON_Delete(s);
	cJSON *j = assert_exactly_once("failover.json");
	double bad = num(j, "late") + num(j, "dropped");
	fprintf(stderr, "failover: detected %.1f ms after the active scheduler was last heard, every peer registered "
		"%.1f ms after the takeover; %.0f of %.0f requests late or dropped (%.2f%%)\n",
		detect, reg, bad, num(j, "offered"), 100 * bad / num(j, "offered"));
	assert_true(num(j, "served") > 0.8 * num(j, "offered"));
	cJSON_Delete(j);
	passed = true;
}

/* A backend that cannot reach one frontend still serves the others: with frontend 1 not
 * started, the backends register after their 2 s grace, saying which frontend they lack,
 * and inference through frontend 0 works; frontend 1, started later, is reached and serves. */
static void test_partial_frontends(void **state)
{
	(void)state;
	struct cluster c;
	memset(&c, 0, sizeof(c));
	char sjson[400];
	snprintf(sjson, sizeof(sjson), "%s/schedd.json", dir);
	const char *sa[] = { "schedd", cfg, "--json", sjson, NULL };
	c.schedd = spawn("schedd.log", sa);
	const char *fa[] = { "frontend", cfg, "--id", "0", NULL };
	c.fe[0] = spawn("frontend0.log", fa);
	c.fe[1] = -1;
	for (int i = 0; i < NBE; i++) {
		char id[8], log[32];
		snprintf(id, sizeof(id), "%d", i);
		snprintf(log, sizeof(log), "backend%d.log", i);
		const char *a[] = { "backend", cfg, "--id", id, NULL };
		c.be[i] = spawn(log, a);
	}
	running = c;
	is_running = true;
	/* schedd's readiness (GET /v2/health/ready): live, not ready while no GPU is online (the
	 * backends wait 2 s for frontend 1 before they register), then ready */
	double end = now_s() + 5;
	int code = 0;
	while (now_s() < end && (code = curl("ready", "GET", 0, "/v2/health/ready", "")) == 0)
		sleep_ms(20);
	assert_int_equal(code, 503);
	assert_int_equal(count_in("ready", "{\"ready\":false,\"reason\":\"no GPU online (of 4 backends)\"}"), 1);
	assert_int_equal(curl("live", "GET", 0, "/v2/health/live", ""), 200);
	/* a backend's readiness: 503 with why until it registered (it waits for frontend 1), then 200 */
	end = now_s() + 5;
	while (now_s() < end && (code = curl("bready", "GET", 512, "/v2/health/ready", "")) == 0)
		sleep_ms(20);
	if (code == 503)
		assert_int_equal(count_in("bready", "not registered with the scheduler yet") +
					 count_in("bready", "no scheduler reached"),
				 1);
	else
		assert_int_equal(code, 200);
	assert_int_equal(wait_log("schedd.log", "registered: GPU", NBE), NBE);
	assert_int_equal(curl("ready", "GET", 0, "/v2/health/ready", ""), 200);
	assert_int_equal(count_in("ready", "{\"ready\":true}"), 1);
	assert_int_equal(curl("bready", "GET", 512, "/v2/health/ready", ""), 200);
	assert_int_equal(curl("ready", "POST", 0, "/v2/health/ready", ""), 405);
	assert_int_equal(count_in("backend0.log", "registering without frontend(s) 1"), 1);
	infer_body("body", 5, "UINT8", IN_BYTES);
	char data[600];
	snprintf(data, sizeof(data), "--data-binary @'%s/body'", dir);
	end = now_s() + 5;
	while (now_s() < end && (code = curl("r0", "POST", 1, "/v2/models/m/infer", data)) != 200)
		sleep_ms(50);
	assert_int_equal(code, 200);
	const char *fb[] = { "frontend", cfg, "--id", "1", NULL };
	c.fe[1] = running.fe[1] = spawn("frontend1.log", fb);
	end = now_s() + 10;
	while (now_s() < end && (code = curl("r1", "POST", 2, "/v2/models/m/infer", data)) != 200)
		sleep_ms(100);
	assert_int_equal(code, 200);
	assert_int_equal(cluster_stop(&c), 0);
	passed = true;
}

/* A reload: the cluster file edited under a running cluster; schedd's POST /v2/admin/reload
 * (bearer token of repository_token_file) and a frontend's SIGHUP take on a new deadline
 * limit and SLO, and refuse a membership change with nothing changed; the cluster serves
 * throughout. */
static void test_reload(void **state)
{
	(void)state;
	write_file("admin.tokens", "admin-token-0123456789\n", 23);
	char repl[600];
	snprintf(repl, sizeof(repl), "\"runtime\": {\"repository_token_file\": \"%s/admin.tokens\", \"keys_dir\"", dir);
	char tokens[400];
	snprintf(tokens, sizeof(tokens), "%s/admin.tokens", dir);
	assert_int_equal(chmod(tokens, 0600), 0);
	config_replace("\"runtime\": {\"keys_dir\"", repl);
	/* (answers, not timing: under the thread sanitizer its 900 ms request, deferred to its latest
	 * start, came back late in a CI run; there it is dispatched at once, by the eager policy) */
	if (low_load_bad_allowed > 0)
		config_replace("\"slo_ms\": 40,", "\"slo_ms\": 40, \"policy\": \"eager\",");
	struct cluster c;
	cluster_start(&c);
	infer_body("body", 4, "UINT8", IN_BYTES);
	char data[700];
	snprintf(data, sizeof(data), "-H 'Symphony-Deadline-Ms: 900' --data-binary @'%s/body'", dir);
	assert_int_equal(curl_infer("r0", 1, data), 200);
	/* the same file: no change */
	const char *tok = "-H 'Authorization: Bearer admin-token-0123456789'";
	assert_int_equal(curl("rl", "POST", 0, "/v2/admin/reload", tok), 200);
	assert_int_equal(count_in("rl", "{\"reloaded\":true,\"changes\":\"\"}"), 1);
	/* deadlines up to 500 ms, an SLO of 60 ms */
	config_replace("\"deadline_max_ms\": 1000", "\"deadline_max_ms\": 500");
	config_replace("\"slo_ms\": 40,", "\"slo_ms\": 60,");
	assert_int_equal(curl("rl", "POST", 0, "/v2/admin/reload", ""), 401);
	assert_int_equal(curl("rl", "POST", 0, "/v2/admin/reload", "-H 'Authorization: Bearer admin-token-0123456780'"),
			 401);
	assert_int_equal(curl("rl", "GET", 0, "/v2/admin/reload", tok), 405);
	assert_int_equal(curl("rl", "POST", 0, "/v2/admin/reload", tok), 200);
	assert_int_equal(count_in("rl", "deadline_max_ms 1000 -> 500"), 1);
	assert_int_equal(count_in("rl", "slo_ms of m 40 -> 60"), 1);
	assert_int_equal(wait_log("schedd.log", "admin: reloaded", 2), 2);
	kill(c.fe[0], SIGHUP);
	assert_int_equal(wait_log("frontend0.log", "SIGHUP: reloaded", 1), 1);
	assert_int_equal(count_in("frontend0.log", "deadline_max_ms 1000 -> 500"), 1);
	assert_int_equal(curl("r1", "POST", 1, "/v2/models/m/infer", data), 400);
	assert_int_equal(count_in("r1", "above the limit of 500 ms (deadline_max_ms)"), 1);
	assert_int_equal(curl("r1", "POST", 2, "/v2/models/m/infer", data) == 200 ||
				 count_in("r1", "dropped") == 1,
			 1); /* frontend 1 was not told: its limit is still 1000 ms */
	/* a membership change needs a restart: refused, nothing changed, still serving */
	config_replace("\"deadline_max_ms\": 500", "\"backends_max\": 8, \"deadline_max_ms\": 2000");
	assert_int_equal(curl("rl", "POST", 0, "/v2/admin/reload", tok), 409);
	assert_int_equal(count_in("rl", "backends_max 4 -> 8"), 1);
	kill(c.fe[0], SIGHUP);
	kill(c.be[0], SIGHUP);
	assert_int_equal(wait_log("frontend0.log", "SIGHUP: reload refused, nothing changed", 1), 1);
	assert_int_equal(wait_log("backend0.log", "SIGHUP: reload refused, nothing changed", 1), 1);
	assert_int_equal(count_in("backend0.log", "backends_max 4 -> 8"), 1);
	assert_int_equal(curl("r2", "POST", 1, "/v2/models/m/infer", data), 400); /* still 500 ms */
	snprintf(data, sizeof(data), "--data-binary @'%s/body'", dir);
	assert_int_equal(curl_infer("r3", 1, data), 200);
	assert_int_equal(cluster_stop(&c), 0);
	passed = true;
}

/* The lines of a process's JSON log, each checked: one object with an RFC 3339
 * time within ten minutes of now, a level, its role and id (-1: none), a message. */
static cJSON *json_log(const char *name, const char *role, int id)
{
	char *text = slurp(name);
	assert_non_null(text);
	cJSON *lines = cJSON_CreateArray();
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		cJSON *o = cJSON_Parse(l);
		if (!o)
			fail_msg("%s: not a JSON object: %s", name, l);
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItem(o, "time"));
		const char *lv = cJSON_GetStringValue(cJSON_GetObjectItem(o, "level"));
		const char *r = cJSON_GetStringValue(cJSON_GetObjectItem(o, "role"));
		const cJSON *i = cJSON_GetObjectItem(o, "id");
		assert_non_null(t);
		struct tm tm;
		memset(&tm, 0, sizeof(tm));
		const char *end = strptime(t, "%Y-%m-%dT%H:%M:%S", &tm);
		assert_non_null(end);
		assert_true(strlen(t) == 27 && end - t == 19 && end[0] == '.' && end[7] == 'Z');
		for (int k = 1; k < 7; k++)
			assert_true(isdigit((unsigned char)end[k]));
		double age = difftime(time(NULL), timegm(&tm));
		assert_true(age > -600 && age < 600);
		assert_true(lv && (!strcmp(lv, "debug") || !strcmp(lv, "info") || !strcmp(lv, "warn") || !strcmp(lv, "error")));
		assert_string_equal(r, role);
		if (id < 0)
			assert_null(i);
		else
			assert_true(cJSON_IsNumber(i) && i->valueint == id);
		assert_non_null(cJSON_GetStringValue(cJSON_GetObjectItem(o, "msg")));
		cJSON_AddItemToArray(lines, o);
	}
	free(text);
	return lines;
}

static const char *jstr(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
}

/* --log-format json --log-level debug: every line of every process's log is a
 * JSON object with the wall-clock time, level, role and id; one request is
 * followed by its client's id to its name at the frontend, to the batch
 * schedd planned it in, to the backend that ran that batch, and back to its
 * answer at the frontend. */
static void test_json_logs(void **state)
{
	(void)state;
	const char *extra[] = { "--log-format", "json", "--log-level", "debug", NULL };
	memcpy(proc_extra, extra, sizeof(extra));
	/* (the logs, not timing: under the thread sanitizer, with debug logs, its one request deferred
	 * to its latest start came back 3.9 ms late in a CI run, and dropped in a rerun with a larger
	 * response delay; there it is dispatched at once, by the eager policy) */
	if (low_load_bad_allowed > 0)
		config_replace("\"slo_ms\": 40,", "\"slo_ms\": 40, \"policy\": \"eager\",");
	struct cluster c;
	cluster_start(&c);
	proc_extra[0] = NULL;
	infer_body("body", 7, "UINT8", IN_BYTES); /* its "id" is req-7 */
	char data[600];
	snprintf(data, sizeof(data), "--data-binary @'%s/body'", dir);
	assert_int_equal(curl_infer("r", 1, data), 200);
	assert_int_equal(cluster_stop(&c), 0);

	cJSON *fe = json_log("frontend0.log", "frontend", 0), *sd = json_log("schedd.log", "schedd", -1);
	cJSON *fe1 = json_log("frontend1.log", "frontend", 1);
	/* the frontend: the client's id, the request's name, then its answer by a batch */
	char req[48] = "";
	double batch = -1;
	const cJSON *o;
	cJSON_ArrayForEach(o, fe) {
		const char *cid = jstr(o, "client_id"), *r = jstr(o, "request");
		if (cid && !strcmp(cid, "req-7")) {
			assert_non_null(r);
			assert_string_equal(jstr(o, "level"), "debug");
			snprintf(req, sizeof(req), "%s", r); /* (a retry after a 503: the last) */
		}
		if (r && !strcmp(r, req) && strstr(jstr(o, "msg"), "answered ok by batch"))
			batch = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "batch"));
	}
	assert_true(!strncmp(req, "f0-", 3));
	assert_true(batch > 0);
	/* schedd: the plan of that batch names the request */
	int plans = 0;
	cJSON_ArrayForEach(o, sd) {
		const cJSON *b = cJSON_GetObjectItem(o, "batch"), *rs = cJSON_GetObjectItem(o, "requests");
		if (!b || cJSON_GetNumberValue(b) != batch)
			continue;
		plans++;
		int has = 0;
		const cJSON *x;
		cJSON_ArrayForEach(x, rs)
			has += !strcmp(cJSON_GetStringValue(x), req);
		assert_int_equal(has, 1);
	}
	assert_int_equal(plans, 1);
	/* one backend ran it */
	int ran = 0;
	for (int i = 0; i < NBE; i++) {
		char name[32];
		snprintf(name, sizeof(name), "backend%d.log", i);
		cJSON *be = json_log(name, "backend", i);
		cJSON_ArrayForEach(o, be) {
			const cJSON *b = cJSON_GetObjectItem(o, "batch");
			if (b && cJSON_GetNumberValue(b) == batch && strstr(jstr(o, "msg"), " ran "))
				ran++;
		}
		cJSON_Delete(be);
	}
	assert_int_equal(ran, 1);
	cJSON_Delete(fe);
	cJSON_Delete(fe1);
	cJSON_Delete(sd);
	passed = true;
}

/* The active scheduler hangs (SIGSTOP) under load: the standby takes over once it has been silent
 * for failure_ms, the frontends and backends give it up after twice that and register with the
 * standby, and every request is still answered exactly once. The old one, let go on (SIGCONT),
 * has lost its peers. */
static void test_failover_hung(void **state)
{
	(void)state;
	struct cluster c;
	pid_t standby = cluster_start_with_standby(&c);
	pid_t lg = loadgen_start("hung.json", "300", "5");
	sleep_ms(2000);
	pid_t old = c.schedd;
	kill(old, SIGSTOP);
	assert_int_equal(wait_log("standby.log", "took over:", 1), 1);
	kill(old, SIGCONT);
	kill(old, SIGKILL);
	waitpid(old, NULL, 0);
	c.schedd = running.schedd = standby;
	standby_pid = -1;
	int st = wait_for(lg, 40);
	int sst = cluster_stop(&c);
	assert_int_equal(st, 0);
	assert_int_equal(sst, 0);
	cJSON *s = load_json("standby.json");
	double detect = num(s, "failover.detected_after_ms"), reg = num(s, "failover.all_registered_after_ms");
	assert_true(detect >= 300 && detect < 1000);
	cJSON_Delete(s);
	assert_true(count_in("standby.log", "was silent for") == 1);
	cJSON *j = assert_exactly_once("hung.json");
	double bad = num(j, "late") + num(j, "dropped");
	fprintf(stderr, "hung scheduler: taken over %.1f ms after it was last heard, every peer registered %.1f ms after; "
		"%.0f of %.0f requests late or dropped\n", detect, reg, bad, num(j, "offered"));
	cJSON_Delete(j);
	passed = true;
}

/* The spans a scheduler's JSON (name) says it was the confirmed active one: into from/to
 * (CLOCK_MONOTONIC seconds), at most max; returns how many. */
static int active_spans(const char *name, double *from, double *to, int max)
{
	cJSON *j = load_json(name);
	const cJSON *fe = cJSON_GetObjectItemCaseSensitive(j, "fencing");
	const cJSON *sp = cJSON_GetObjectItemCaseSensitive(fe, "active_spans_s");
	assert_true(cJSON_IsArray(sp));
	int n = 0;
	const cJSON *x;
	cJSON_ArrayForEach(x, sp) {
		assert_true(n < max);
		from[n] = cJSON_GetArrayItem(x, 0)->valuedouble;
		to[n++] = cJSON_GetArrayItem(x, 1)->valuedouble;
	}
	cJSON_Delete(j);
	return n;
}

/* Issue 28's split brain, fenced: under load, the active scheduler hangs (SIGSTOP) for 3 s; the
 * standby takes over (term 2) and the frontends and backends register with it; the old one goes
 * on (SIGCONT), finds it stalled, learns term 2 from the new one and steps down. Then a routine
 * restart of backend 3 and frontend 1 (SIGTERM, started again): they try the old scheduler's
 * address first, are refused (it stands by) and register with the new one; the old one takes
 * no registration after it resumed. Never two active schedulers: polling both schedulers'
 * symphony_scheduler_active every 50 ms (the new one first) never finds both 1, and the spans
 * each one's JSON gives of being the confirmed active one (on the host's monotonic clock) do
 * not overlap. Every request is answered exactly once, and the frontends end at term 2. */
static void test_failover_fencing(void **state)
{
	(void)state;
	struct cluster c;
	pid_t standby = cluster_start_with_standby(&c);
	pid_t old = c.schedd;
	/* both schedulers' symphony_scheduler_active, the standby's (HTTP at http_base + 511) first */
	char cmd[1600];
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && (while [ ! -e poll.stop ]; do "
		 "b=$(curl -s -m 0.3 http://127.0.0.1:%d/metrics | sed -n 's/^symphony_scheduler_active //p'); "
		 "a=$(curl -s -m 0.3 http://127.0.0.1:%d/metrics | sed -n 's/^symphony_scheduler_active //p'); "
		 "echo \"new=${b:--} old=${a:--}\" >> active.txt; sleep 0.05; done) > /dev/null 2>&1 &",
		 dir, http_port(511), http_port(0));
	assert_int_equal(system(cmd), 0);
	pid_t lg = loadgen_start("fenced.json", "300", "8");
	sleep_ms(1500);
	kill(old, SIGSTOP);
	double stopped = now_s();
	assert_int_equal(wait_log("standby.log", "took over:", 1), 1);
	double hold = 3 - (now_s() - stopped);
	if (hold > 0)
		sleep_ms((int)(hold * 1000));
	int old_registered = count_in("schedd.log", "registered");
	kill(old, SIGCONT);
	assert_int_equal(wait_log("schedd.log", "stepping down: the scheduler at", 1), 1);
	/* a routine restart of backend 3 and frontend 1 */
	kill(c.be[3], SIGTERM);
	assert_int_equal(wait_for(c.be[3], 12), 0);
	const char *ba[] = { "backend", cfg, "--id", "3", NULL };
	c.be[3] = running.be[3] = spawn("backend3.log", ba);
	kill(c.fe[1], SIGTERM);
	assert_int_equal(wait_for(c.fe[1], 12), 0);
	const char *fa[] = { "frontend", cfg, "--id", "1", NULL };
	c.fe[1] = running.fe[1] = spawn("frontend1.log", fa);
	assert_int_equal(wait_log("standby.log", "backend 3 (a100) registered", 2), 2);
	assert_int_equal(wait_log("standby.log", "frontend 1 registered", 2), 2);
	int st = wait_for(lg, 40);
	assert_int_equal(curl("m0", "GET", 1, "/metrics", ""), 200);
	assert_int_equal(count_in("m0", "symphony_frontend_scheduler_term{frontend=\"0\"} 2"), 1);
	assert_int_equal(curl("m1", "GET", 2, "/metrics", ""), 200);
	assert_int_equal(count_in("m1", "symphony_frontend_scheduler_term{frontend=\"1\"} 2"), 1);
	write_file("poll.stop", "", 0);
	/* the old one (standing by) first, then the cluster with the new one as its scheduler */
	kill(old, SIGTERM);
	assert_int_equal(wait_for(old, 12), 0);
	c.schedd = running.schedd = standby;
	standby_pid = -1;
	int sst = cluster_stop(&c);
	sleep_ms(400); /* the poller's last round */
	assert_int_equal(st, 0);
	assert_int_equal(sst, 0);
	/* the old one: no registration after it resumed, one step-down, term 2 */
	assert_int_equal(count_in("schedd.log", "registered"), old_registered);
	assert_int_equal(count_in("schedd.log", "stepping down"), 1);
	assert_true(count_in("backend3.log", "scheduler lost") >= 1);
	cJSON *a = load_json("schedd.json"), *b = load_json("standby.json");
	assert_int_equal((int)num(a, "fencing.term"), 2);
	assert_int_equal((int)num(a, "fencing.step_downs"), 1);
	assert_int_equal((int)num(b, "fencing.term"), 2);
	assert_int_equal((int)num(b, "fencing.takeovers"), 1);
	assert_int_equal((int)num(b, "fencing.step_downs"), 0);
	cJSON_Delete(a);
	cJSON_Delete(b);
	double af[16], at[16], bf[16], bt[16];
	int na = active_spans("schedd.json", af, at, 16), nb = active_spans("standby.json", bf, bt, 16);
	/* the old one: from its start until it stalled; the new one: from its confirmation after the
	 * takeover until it stopped (more spans where a slow machine stalls a loop for failure_ms / 2:
	 * each a scheduler that unconfirmed itself and confirmed itself again through the other) */
	assert_true(na >= 1 && nb >= 1);
	for (int i = 0; i < na; i++)
		for (int k = 0; k < nb; k++)
			if (!(at[i] <= bf[k] || bt[k] <= af[i]))
				fail_msg("two active schedulers: the old one from %.6f to %.6f s, the new one from %.6f to %.6f s",
					 af[i], at[i], bf[k], bt[k]);
	int both = count_in("active.txt", "new=1 old=1"), newly = count_in("active.txt", "new=1 old="),
	    olds = count_in("active.txt", "new=0 old=1");
	fprintf(stderr, "fencing: the old scheduler active %.3f s to %.3f s, the new one from %.3f s (gap %.0f ms); "
		"polls: %d with the old one active, %d with the new one, %d with both\n", 0.0, at[na - 1] - af[0],
		bf[0] - af[0], 1e3 * (bf[0] - at[na - 1]), olds, newly, both);
	assert_int_equal(both, 0);
	assert_true(olds > 0 && newly > 0);
	cJSON *j = assert_exactly_once("fenced.json");
	cJSON_Delete(j);
	passed = getenv("SYM_TEST_KEEP") == NULL;
}

/* Sends m (no plan inputs, no hello models) with `term` on a fake peer's connection. */
static void fake_send(struct sym_fab_conn *conn, struct sym_msg *m, uint32_t term)
{
	uint8_t buf[256];
	m->term = term;
	size_t n = sym_wire_encode(m, NULL, NULL, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(sym_fab_send(conn, buf, n), 0);
}

/* The term a frontend or backend carries, both ways. (1) Frontend 0 alone, its scheduler a fake
 * (this test, on schedd's address): the frontend says hello with term 0, takes a status of term
 * 2, then refuses one of term 1: it sends a heartbeat with term 2, closes the connection, logs it
 * once and counts it (symphony_frontend_stale_scheduler_messages_total 1), and says hello again
 * with term 2. (2) A cluster whose standby address has no scheduler: a fake frontend's hello
 * saying term 7 makes schedd step down (it closes every peer); standing by, its attempt at the
 * other address finds nobody, so it takes over with term 8, confirmed (nobody there), and the
 * frontends and backends register again and are served at term 8. */
static void test_fencing_terms(void **state)
{
	(void)state;
	char err[512];
	struct sym_cred sd0 = member_cred(SYM_CRED_SCHEDD, 0), fe0 = member_cred(SYM_CRED_FRONTEND, 0);
	const struct sym_fab_peer to_sd = { SYM_CRED_SCHEDD, 0 };
	struct sym_fab *f;
	assert_int_equal(sym_fab_open(&f, &(struct sym_fab_cfg){ .provider = "tcp", .cred = &sd0 }, err, sizeof(err)), 0);
	assert_int_equal(sym_fab_listen(f, "127.0.0.1", port, err, sizeof(err)), 0);
	const char *fa[] = { "frontend", cfg, "--id", "0", NULL };
	pid_t fe = spawn("frontend0.log", fa);
	uint32_t hello_terms[2] = { 99, 99 }, beat_term = 99;
	int hellos = 0, closed = 0;
	struct sym_fab_conn *conn = NULL;
	double end = now_s() + 10;
	while (now_s() < end && hellos < 2) {
		struct sym_fab_event ev[8];
		int n = sym_fab_poll(f, ev, 8);
		for (int i = 0; i < n; i++) {
			struct sym_msg m;
			if (ev[i].type == SYM_FAB_ACCEPTED)
				conn = ev[i].conn;
			if (ev[i].type == SYM_FAB_CLOSED) {
				closed++;
				sym_fab_close(ev[i].conn);
				conn = NULL;
				continue;
			}
			if (ev[i].type != SYM_FAB_MSG || sym_wire_decode(ev[i].data, ev[i].len, &m, err, sizeof(err)) <= 0)
				continue;
			if (m.type == SYM_MSG_HELLO) {
				hello_terms[hellos++] = m.term;
				if (hellos == 1) { /* term 2, then term 1 */
					struct sym_msg st = { .type = SYM_MSG_STATUS };
					st.u.status.gpus_online = 1;
					st.u.status.gpus_max = 4;
					fake_send(ev[i].conn, &st, 2);
					fake_send(ev[i].conn, &st, 1);
				}
			}
			if (m.type == SYM_MSG_HEARTBEAT && hellos == 1 && m.term == 2)
				beat_term = m.term; /* the refusal's (its regular ones before the status carry 0) */
		}
		if (!n)
			sym_fab_wait(f, 10);
	}
	assert_int_equal(hellos, 2);
	assert_int_equal(hello_terms[0], 0);
	assert_int_equal(beat_term, 2); /* the refusal tells the stale scheduler the term seen */
	assert_true(closed >= 1);
	assert_int_equal(hello_terms[1], 2); /* remembered */
	assert_int_equal(curl("m", "GET", 1, "/metrics", ""), 200);
	assert_int_equal(count_in("m", "symphony_frontend_stale_scheduler_messages_total{frontend=\"0\"} 1"), 1);
	assert_int_equal(count_in("m", "symphony_frontend_scheduler_term{frontend=\"0\"} 2"), 1);
	assert_int_equal(count_in("frontend0.log", "refused a status message of scheduler term 1"), 1);
	kill(fe, SIGKILL);
	waitpid(fe, NULL, 0);
	if (conn)
		sym_fab_close(conn);
	sym_fab_destroy(f);

	/* (2) a schedd told of a higher term by a frontend */
	char sched2[200];
	snprintf(sched2, sizeof(sched2), "\"schedd\": [\"127.0.0.1:%s\", \"127.0.0.1:%d\"], \"failure_ms\": 300,", port,
		 atoi(port) + 2 * NFE + 1);
	config_replace("\"failure_ms\": 50,", sched2);
	struct cluster c;
	cluster_start(&c);
	/* (once, or again after a stall of a loaded machine: it unconfirms itself and finds nobody again) */
	assert_true(count_in("schedd.log", "confirmed as the active scheduler, term 1 (no scheduler answers") >= 1);
	struct sym_msg h = { .type = SYM_MSG_HELLO, .term = 7 };
	h.u.hello.role = SYM_ROLE_FRONTEND;
	h.u.hello.id = 0;
	uint8_t hb[64];
	size_t hl = sym_wire_encode(&h, NULL, NULL, hb, sizeof(hb));
	assert_true(hl > 0);
	struct fake r = fake_peer(port, &fe0, &to_sd, hb, hl, 0);
	assert_true(r.connected && r.closed);
	assert_int_equal(wait_log("schedd.log", "stepping down: a frontend's hello says it has seen term 7", 1), 1);
	assert_int_equal(wait_log("schedd.log", "taking over as the active scheduler with term 8", 1), 1);
	assert_int_equal(wait_log("schedd.log", "took over:", 1), 1);
	pid_t lg = loadgen_start("terms.json", "200", "1");
	int st = wait_for(lg, 30);
	assert_int_equal(curl("m", "GET", 1, "/metrics", ""), 200);
	assert_int_equal(count_in("m", "symphony_frontend_scheduler_term{frontend=\"0\"} 8"), 1);
	assert_int_equal(cluster_stop(&c), 0);
	assert_int_equal(st, 0);
	cJSON *j = assert_exactly_once("terms.json");
	assert_true(num(j, "served") > 0);
	cJSON_Delete(j);
	cJSON *s = load_json("schedd.json");
	assert_int_equal((int)num(s, "fencing.term"), 8);
	assert_int_equal((int)num(s, "fencing.step_downs"), 1);
	assert_int_equal((int)num(s, "fencing.takeovers"), 1);
	cJSON_Delete(s);
	passed = true;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_runtime SYMPHONY [TEST-PATTERN]\n");
		return 2;
	}
	bin = argv[1];
	const char *timing = getenv("SYM_TEST_TIMING");
	low_load_bad_allowed = timing && !strcmp(timing, "loose") ? 0.01 : 0;
	signal(SIGPIPE, SIG_IGN);
	if (argc > 2)
		cmocka_set_test_filter(argv[2]); /* e.g. "test_http_*" */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_low_load, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_kill_backend, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_garbage_peer, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_revocation, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_fabric_flood, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_http_api, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_repository, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_repository_add, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_repository_takeover, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_http_large_post, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_http_flood, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_http_load, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_signatures, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_clockwork_rejects, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_http_hardening, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_membership, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_schedd_sigterm, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_failover, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_failover_hung, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_failover_fencing, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_fencing_terms, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_partial_frontends, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_json_logs, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_reload, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_epochs, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_epochs_idle, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_autoscale, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_control_shift, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_subclusters, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_subclusters_kinds, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_epochs_stall, setup, teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
