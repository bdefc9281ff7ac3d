/* Integration tests of the runtime: schedd, 2 frontends and 4 emulated
 * backends as real processes on loopback, driven by loadgen.
 *
 * argv[1] is the symphony binary. Every process writes its log into a
 * temporary directory, which is printed (and kept) when a test fails. Ports
 * come from the test's pid so that parallel runs do not collide. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "runtime/fabric.h"
#include "runtime/net.h"
#include "runtime/wire.h"

static const char *bin;
static char dir[256];
static char cfg[300];
static char port[16];
static bool passed; /* set at the end of a test: its logs are removed */
/* Late or dropped requests allowed at low load: none, except in a ThreadSanitizer build
 * (SYM_TEST_TIMING=loose, set by scripts/test), whose instrumented processes run many times
 * slower: there 1% (the races are what that build checks). */
static double low_load_bad_allowed;

#define NFE 2
#define NBE 4

struct cluster {
	pid_t schedd, fe[NFE], be[NBE];
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Starts `symphony ARGS...` with stderr (and stdout) into dir/log. */
static pid_t spawn(const char *log, const char *const *args)
{
	pid_t pid = fork();
	if (pid == 0) {
		char path[400];
		snprintf(path, sizeof(path), "%s/%s", dir, log);
		int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		const char *argv[32];
		int n = 0;
		argv[n++] = bin;
		for (int i = 0; args[i] && n < 31; i++)
			argv[n++] = args[i];
		argv[n] = NULL;
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static char *slurp(const char *name)
{
	char path[400];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return strdup(buf);
}

static int count_in(const char *name, const char *pat)
{
	char *s = slurp(name);
	int n = 0;
	for (char *p = s; p && (p = strstr(p, pat)); p += strlen(pat))
		n++;
	free(s);
	return n;
}

/* Waits for a process with a deadline; kills it past the deadline. Returns its exit status or -1. */
static int wait_for(pid_t pid, double timeout_s)
{
	double end = now_s() + timeout_s;
	int st;
	while (now_s() < end) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		sleep_ms(20);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

static void cluster_start(struct cluster *c)
{
	const char *sa[] = { "schedd", cfg, "--json", "schedd.json", NULL };
	char sjson[400];
	snprintf(sjson, sizeof(sjson), "%s/schedd.json", dir);
	sa[3] = sjson;
	c->schedd = spawn("schedd.log", sa);
	for (int i = 0; i < NFE; i++) {
		char id[8], log[32];
		snprintf(id, sizeof(id), "%d", i);
		snprintf(log, sizeof(log), "frontend%d.log", i);
		const char *a[] = { "frontend", cfg, "--id", id, NULL };
		c->fe[i] = spawn(log, a);
	}
	for (int i = 0; i < NBE; i++) {
		char id[8], log[32];
		snprintf(id, sizeof(id), "%d", i);
		snprintf(log, sizeof(log), "backend%d.log", i);
		const char *a[] = { "backend", cfg, "--id", id, NULL };
		c->be[i] = spawn(log, a);
	}
	double end = now_s() + 20;
	while (now_s() < end && (count_in("schedd.log", "registered: GPU") < NBE ||
				 count_in("schedd.log", "frontend 1 registered") + count_in("schedd.log", "frontend 0 registered") < NFE))
		sleep_ms(50);
	assert_int_equal(count_in("schedd.log", "registered: GPU"), NBE);
}

/* Stops everything (SIGTERM, then SIGKILL), schedd first so that its
 * counters do not include the others leaving; returns schedd's exit status. */
static int cluster_stop(struct cluster *c)
{
	kill(c->schedd, SIGTERM);
	int st = wait_for(c->schedd, 10);
	for (int i = 0; i < NBE; i++)
		if (c->be[i] > 0)
			kill(c->be[i], SIGTERM);
	for (int i = 0; i < NFE; i++)
		kill(c->fe[i], SIGTERM);
	for (int i = 0; i < NBE; i++)
		if (c->be[i] > 0)
			wait_for(c->be[i], 10);
	for (int i = 0; i < NFE; i++)
		wait_for(c->fe[i], 10);
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
static pid_t loadgen_start(const char *name, const char *rate, const char *duration)
{
	char out[400];
	snprintf(out, sizeof(out), "%s/%s", dir, name);
	const char *a[] = { "loadgen", cfg, "--rate", rate, "--duration", duration, "--warmup", "0.5",
			    "--json", out, "--quiet", NULL };
	return spawn("loadgen.log", a);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/symphony-rt-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(port, sizeof(port), "%d", 20000 + (int)(getpid() % 1500) * 20);
	snprintf(cfg, sizeof(cfg), "%s/cluster.json", dir);
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
		   " \"runtime\": {\"frontends\": %d, \"backends\": %d, \"port_base\": %s, \"heartbeat_ms\": 10,\n"
		   "             \"failure_ms\": 50, \"pool_slots\": 512, \"input_max\": 4096, \"input_bytes\": 1000}}\n",
		NFE, NBE, port);
	fclose(f);
	return 0;
}

static int teardown_dir(void **state)
{
	(void)state;
	if (!passed) {
		fprintf(stderr, "logs kept in %s\n", dir);
		return 0;
	}
	passed = false;
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Low load: every request answered exactly once, none bad. */
static void test_low_load(void **state)
{
	(void)state;
	/* A run counts only if the machine did not stall it: on a shared machine a process
	 * is sometimes not scheduled for several ms, which shows as loadgen sending late or
	 * schedd's timers firing late (at this load neither should pass 2 ms); a bad request
	 * in such a run is the machine's, and the run is repeated (at most 3 times). A bad
	 * request in a run without a stall fails the test. */
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
		assert_int_equal((int)num(j, "checks.answered"), (int)req);
		assert_int_equal((int)num(j, "checks.unanswered"), 0);
		assert_int_equal((int)num(j, "checks.duplicate_answers"), 0);
		assert_int_equal((int)num(j, "checks.wrong_outputs"), 0);
		assert_true(num(j, "served") > 0);
		assert_true(num(j, "batch_size.mean") >= 1);
		assert_int_equal((int)num(s, "requests"), (int)req);
		assert_int_equal((int)num(s, "backend_failures"), 0);
		assert_int_equal((int)num(s, "rejected_messages"), 0);
		double bad = num(j, "late") + num(j, "dropped");
		double lag_ms = num(j, "checks.send_lag_max_ms");
		double sched_lag_ms = num(s, "scheduler_lag_max_us") / 1e3;
		cJSON_Delete(j);
		cJSON_Delete(s);
		if (bad <= low_load_bad_allowed * req)
			break;
		bool stalled = lag_ms > 2 || sched_lag_ms > 2;
		fprintf(stderr, "attempt %d: %.0f bad of %.0f; loadgen sent up to %.2f ms late, schedd's timers fired up to "
				"%.2f ms late%s\n", attempt, bad, req, lag_ms, sched_lag_ms,
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
	/* measured from 0.5 s; the kill at about 1.8 s */
	assert_int_equal((int)num(j, "checks.failed_by_status.backend failed"), (int)failed);
	/* the run went on: most requests were served on time */
	assert_true(num(j, "served") > 0.8 * num(j, "offered"));
	cJSON_Delete(j);
	passed = true;
}

/* Garbage from a fake peer: schedd closes that connection, logs why, and
 * keeps serving; a frontend does the same with a garbage client. */
static void test_garbage_peer(void **state)
{
	(void)state;
	struct cluster c;
	cluster_start(&c);
	/* a fabric peer sending garbage to schedd */
	struct sym_fab *f;
	char err[512];
	assert_int_equal(sym_fab_open(&f, &(struct sym_fab_cfg){ .provider = "tcp" }, err, sizeof(err)), 0);
	struct sym_fab_conn *conn;
	assert_int_equal(sym_fab_connect(f, "127.0.0.1", port, &conn, err, sizeof(err)), 0);
	bool closed = false, sent = false;
	double end = now_s() + 10;
	while (!closed && now_s() < end) {
		struct sym_fab_event ev[8];
		int n = sym_fab_poll(f, ev, 8);
		for (int i = 0; i < n; i++) {
			if (ev[i].type == SYM_FAB_CONNECTED && !sent) {
				uint8_t junk[64];
				for (size_t k = 0; k < sizeof(junk); k++)
					junk[k] = (uint8_t)(k * 37 + 11);
				assert_int_equal(sym_fab_send(conn, junk, sizeof(junk)), 0);
				sent = true;
			}
			if (ev[i].type == SYM_FAB_CLOSED)
				closed = true;
		}
		if (!n)
			sym_fab_wait(f, 10);
	}
	assert_true(sent);
	assert_true(closed);
	sym_fab_close(conn);
	sym_fab_destroy(f);
	/* a TCP client sending garbage to frontend 0 */
	char cport[16];
	snprintf(cport, sizeof(cport), "%d", atoi(port) + 2);
	int fd = sym_tcp_connect("127.0.0.1", cport, 2000, err, sizeof(err));
	assert_true(fd >= 0);
	const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	assert_int_equal(write(fd, junk, sizeof(junk) - 1), (ssize_t)(sizeof(junk) - 1));
	char b[16];
	end = now_s() + 5;
	ssize_t r = -1;
	while (now_s() < end && (r = read(fd, b, sizeof(b))) < 0 && errno == EAGAIN)
		sleep_ms(10);
	assert_int_equal(r, 0); /* closed by the frontend */
	close(fd);
	/* still serving */
	pid_t lg = loadgen_start("after.json", "300", "2");
	int st = wait_for(lg, 30);
	int sst = cluster_stop(&c);
	assert_int_equal(st, 0);
	assert_int_equal(sst, 0);
	cJSON *j = load_json("after.json");
	assert_true(num(j, "late") + num(j, "dropped") <= 0.01 * num(j, "offered")); /* serving: timing is test_low_load's */
	assert_int_equal((int)num(j, "checks.unanswered"), 0);
	cJSON_Delete(j);
	cJSON *s = load_json("schedd.json");
	assert_true(num(s, "rejected_messages") >= 1);
	assert_int_equal((int)num(s, "backend_failures"), 0);
	cJSON_Delete(s);
	assert_true(count_in("schedd.log", "malformed message") >= 1);
	assert_true(count_in("frontend0.log", "malformed message") >= 1);
	passed = true;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_runtime SYMPHONY\n");
		return 2;
	}
	bin = argv[1];
	const char *timing = getenv("SYM_TEST_TIMING");
	low_load_bad_allowed = timing && !strcmp(timing, "loose") ? 0.01 : 0;
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_low_load, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_kill_backend, setup, teardown_dir),
		cmocka_unit_test_setup_teardown(test_garbage_peer, setup, teardown_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
