/* tests/test_profiler.c - `symphony profile` (runtime/profiler.h).
 *
 *   - on the emulated executor, a linear model (alpha 0.5 ms, beta 2 ms, batches 1..16) is
 *     recovered within 2% with r2 > 0.99, and the table profile is the medians, non-decreasing
 *     (a measurement in which the machine visibly stalled, a run 1 ms over l(b), is repeated,
 *     at most 3 times, as in the runtime test);
 *   - the batch-size parser, the fit (exact, curved, two points, flat) and the table (gaps,
 *     sizes below the smallest measured, a noisy dip) on hand-made numbers;
 *   - the command (argv[1] is the symphony binary): its two files load with sym_zoo_load and
 *     give back what it measured, `symphony sim --zoo FILE` runs both, memory figures reach the
 *     linear profile, a curved model gets the "not linear" warning;
 *   - bad input (unknown model, batch specs, sizes above max_batch, unknown executor, cuda
 *     without a GPU, ...) exits 2 with its message and writes nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "profiles/zoo.h"
#include "runtime/executor.h"
#include "runtime/profiler.h"
#include "testutil.h"

static const char *bin;     /* the symphony binary */
static char base[256];      /* fresh per test: base/work is the command's directory */
static char work[300];

/* ---- in-process ---- */

/* True when a run held the emulated executor visibly longer than l(b) =
 * alpha*b + beta (by more than 1 ms; on a quiet machine it overshoots by
 * tens of microseconds): the machine did not wake it on time. */
static bool stalled(const struct sym_profiler_point *pts, int n, double alpha, double beta)
{
	for (int k = 0; k < n; k++)
		if (pts[k].max_ms > alpha * pts[k].batch + beta + 1.0) {
			print_message("the machine stalled: a batch of %d took %.3f ms, l(b) = %.3f ms\n", pts[k].batch,
				      pts[k].max_ms, alpha * pts[k].batch + beta);
			return true;
		}
	return false;
}

static bool within(double got, double want, double rel) { return fabs(got - want) <= rel * want; }

/* Profiles l(b) = 0.5 b + 2 ms at batches 1..16 on the emulated executor.
 * As in the runtime test, a measurement in which the machine visibly
 * stalled is repeated, at most 3 times. */
static void test_emulated_fit(void **state)
{
	(void)state;
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "m", 0.5, 2.0, 16), 0);
	char err[256];
	struct sym_executor *x = sym_executor_open("emulated", NULL, err, sizeof(err));
	assert_non_null(x);
	struct sym_model_desc md;
	sym_model_desc_default(&md, "m", &p, 1024);
	assert_int_equal(x->ops->load(x, 0, &md, err, sizeof(err)), 0);
	int batches[16];
	assert_int_equal(sym_profiler_parse_batches("1..16", SYM_PROFILE_BATCH_LIMIT, batches, err, sizeof(err)), 16);
	struct sym_profiler_point pts[16];
	struct sym_profiler_opts o = { .warmup = 2, .repeats = 11 };
	struct sym_profiler_fit f;
	for (int attempt = 1; attempt <= 3; attempt++) {
		sym_time t0 = sym_monotonic_ns();
		assert_int_equal(sym_profiler_measure(x, 0, &md, batches, 16, &o, pts, err, sizeof(err)), 0);
		double wall = (double)(sym_monotonic_ns() - t0) / 1e9;
		assert_int_equal(sym_profiler_fit(pts, 16, &f), 0);
		print_message("fit: alpha %.6f (se %.2g) beta %.6f (se %.2g) ms, r2 %.8f, max residual %.4f%% at b=%d, "
			      "%.2f s\n", f.alpha_ms, f.alpha_se_ms, f.beta_ms, f.beta_se_ms, f.r2,
			      100 * f.max_rel_residual, f.worst_batch, wall);
		bool ok = within(f.alpha_ms, 0.5, 0.02) && within(f.beta_ms, 2.0, 0.02) && f.r2 > 0.99;
		if (ok || !stalled(pts, 16, 0.5, 2.0))
			break;
	}
	assert_near(f.alpha_ms, 0.5, 0.02 * 0.5, "alpha");
	assert_near(f.beta_ms, 2.0, 0.02 * 2.0, "beta");
	assert_true(f.r2 > 0.99);
	assert_true(f.linear);
	assert_true(f.alpha_se_ms >= 0 && f.beta_se_ms >= 0);
	for (int k = 0; k < 16; k++) {
		assert_int_equal(pts[k].batch, k + 1);
		assert_int_equal(pts[k].runs, 11);
		assert_true(pts[k].min_ms <= pts[k].p10_ms && pts[k].p10_ms <= pts[k].median_ms);
		assert_true(pts[k].median_ms <= pts[k].p90_ms && pts[k].p90_ms <= pts[k].max_ms);
		assert_true(pts[k].min_ms >= 0.5 * (k + 1) + 2 - 1e-9); /* never shorter than l(b) */
		assert_true(pts[k].static_mb < 0 && pts[k].dynamic_mb < 0); /* the profile knows none */
	}
	double table[16];
	sym_profiler_table(pts, 16, table);
	for (int b = 1; b <= 16; b++) {
		assert_near(table[b - 1], pts[b - 1].median_ms, 1e-6, "table entry");
		if (b > 1)
			assert_true(table[b - 1] >= table[b - 2]);
	}
	/* a batch above the profile's max_batch is the executor's error */
	int big[2] = { 1, 17 };
	assert_int_equal(sym_profiler_measure(x, 0, &md, big, 2, &o, pts, err, sizeof(err)), -EINVAL);
	assert_contains(err, "batch of 17");
	x->ops->destroy(x);
	sym_profile_finish(&p);
}

static void test_parse_batches(void **state)
{
	(void)state;
	int b[SYM_PROFILE_BATCH_LIMIT];
	char err[256];
	assert_int_equal(sym_profiler_parse_batches("1..8:3", 64, b, err, sizeof(err)), 4);
	assert_int_equal(b[0], 1);
	assert_int_equal(b[1], 4);
	assert_int_equal(b[2], 7);
	assert_int_equal(b[3], 8); /* the end is always in */
	assert_int_equal(sym_profiler_parse_batches("8,1,2,4,2", 64, b, err, sizeof(err)), 4);
	assert_int_equal(b[0], 1);
	assert_int_equal(b[3], 8);
	assert_int_equal(sym_profiler_parse_batches("1..64", 64, b, err, sizeof(err)), 64);
	assert_int_equal(sym_profiler_parse_batches("5", 64, b, err, sizeof(err)), 1);
	static const struct {
		const char *spec, *msg;
	} bad[] = {
		{ "0..4", "start at 1, got 0" },
		{ "8..2", "the range 8..2 is empty" },
		{ "abc", "expected batch sizes such as 1..64" },
		{ "", "expected batch sizes" },
		{ "1,,2", "got ''" },
		{ "-1", "got '-1'" },
		{ "1..4:0", "step of '1..4:0' must be at least 1" },
		{ "1..4:+2", "got '1..4:+2'" },
		{ "1.. 4", "got '1.. 4'" },
		{ "1..65", "at most 64, got '1..65'" },
		{ "1..99999999999999999999999", "at most 64" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(sym_profiler_parse_batches(bad[i].spec, 64, b, err, sizeof(err)), -EINVAL);
		assert_contains(err, "--batches '");
		assert_contains(err, bad[i].msg);
	}
}

static void set_points(struct sym_profiler_point *p, const int *b, const double *ms, int n)
{
	memset(p, 0, (size_t)n * sizeof(*p));
	for (int i = 0; i < n; i++) {
		p[i].batch = b[i];
		p[i].median_ms = ms[i];
	}
}

static void test_fit_and_table(void **state)
{
	(void)state;
	struct sym_profiler_point p[8];
	struct sym_profiler_fit f;
	int b[8] = { 1, 2, 4, 8, 16, 32, 48, 64 };
	double y[8];
	for (int i = 0; i < 8; i++)
		y[i] = 0.25 * b[i] + 3;
	set_points(p, b, y, 8);
	assert_int_equal(sym_profiler_fit(p, 8, &f), 0);
	assert_near(f.alpha_ms, 0.25, 1e-12, "exact alpha");
	assert_near(f.beta_ms, 3, 1e-12, "exact beta");
	assert_near(f.r2, 1, 1e-12, "exact r2");
	assert_near(f.alpha_se_ms, 0, 1e-9, "exact alpha se");
	assert_true(f.linear);
	for (int i = 0; i < 8; i++) /* curved: 1 + b^2 / 100 */
		y[i] = 1 + b[i] * b[i] / 100.0;
	set_points(p, b, y, 8);
	assert_int_equal(sym_profiler_fit(p, 8, &f), 0);
	assert_false(f.linear);
	assert_true(f.max_rel_residual > SYM_PROFILER_MAX_RESIDUAL);
	assert_true(f.alpha_se_ms > 0);
	set_points(p, b, y, 2); /* two points: a line through both, no standard errors */
	assert_int_equal(sym_profiler_fit(p, 2, &f), 0);
	assert_near(f.alpha_ms, 0.03, 1e-12, "two-point alpha");
	assert_true(isnan(f.alpha_se_ms) && isnan(f.beta_se_ms));
	assert_near(f.r2, 1, 1e-12, "two-point r2");
	double flat[3] = { 5, 5, 5 };
	set_points(p, b, flat, 3);
	assert_int_equal(sym_profiler_fit(p, 3, &f), 0);
	assert_near(f.alpha_ms, 0, 1e-12, "flat alpha");
	assert_near(f.r2, 1, 1e-12, "flat r2");
	assert_int_equal(sym_profiler_fit(p, 1, &f), -EINVAL);
	/* the table: 3 and 4 below the first size, 6 between 4 and 8, the dip at 8 evened out */
	int tb[3] = { 3, 4, 8 };
	double ty[3] = { 2.0, 3.0, 2.5 };
	set_points(p, tb, ty, 3);
	double t[8];
	sym_profiler_table(p, 3, t);
	const double want[8] = { 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0, 3.0 };
	for (int i = 0; i < 8; i++)
		assert_near(t[i], want[i], 1e-12, "table with a dip");
	double ty2[3] = { 2.0, 3.0, 5.0 };
	set_points(p, tb, ty2, 3);
	sym_profiler_table(p, 3, t);
	assert_near(t[5], 4.0, 1e-12, "interpolated l(6)");
	assert_near(t[7], 5.0, 1e-12, "l(8)");
}

/* ---- the command ---- */

static int setup(void **state)
{
	(void)state;
	const char *dir = getenv("TMPDIR");
	snprintf(base, sizeof(base), "%s/symphony-test-profile-XXXXXX", dir && dir[0] ? dir : "/tmp");
	assert_non_null(mkdtemp(base));
	snprintf(work, sizeof(work), "%s/work", base);
	assert_int_equal(mkdir(work, 0700), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static char *read_all(const char *path)
{
	char *text = NULL;
	return sym_read_file(path, &text) ? NULL : text;
}

/* The result of one command: exit status, stdout, stderr. */
struct out {
	int status;
	char *o, *e;
};

static void out_free(struct out *r)
{
	free(r->o);
	free(r->e);
}

/* Runs symphony with args (NULL-terminated) in work/, stdout and stderr into base/. */
static struct out run_args(const char *const *args)
{
	const char *argv[48] = { bin };
	int n = 1;
	while (n < 47 && args[n - 1]) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	char po[320], pe[320];
	snprintf(po, sizeof(po), "%s/stdout", base);
	snprintf(pe, sizeof(pe), "%s/stderr", base);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0 || chdir(work))
			_exit(126);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	struct out r = { WIFEXITED(st) ? WEXITSTATUS(st) : 128, read_all(po), read_all(pe) };
	assert_non_null(r.o);
	assert_non_null(r.e);
	return r;
}

#define SYMPHONY(...) run_args((const char *const[]){ __VA_ARGS__, NULL })

static const char *at(const char *name)
{
	static char ring[8][400];
	static int next;
	char *p = ring[next++ % 8];
	snprintf(p, sizeof(ring[0]), "%s/%s", work, name);
	return p;
}

static const char *at_base(const char *name)
{
	static char p[400];
	snprintf(p, sizeof(p), "%s/%s", base, name);
	return p;
}

static int files_in_work(void)
{
	DIR *d = opendir(work);
	assert_non_null(d);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(v)) {
		print_error("key '%s' is not a number\n", key);
		fail();
	}
	return v->valuedouble;
}

/* stalled() on the measurements of a result object. */
static bool doc_stalled(const cJSON *doc, double alpha, double beta)
{
	struct sym_profiler_point pts[64];
	int n = 0;
	for (const cJSON *it = cJSON_GetObjectItem(doc, "measurements")->child; it && n < 64; it = it->next, n++) {
		pts[n].batch = (int)num(it, "batch");
		pts[n].max_ms = num(it, "max_ms");
	}
	return stalled(pts, n, alpha, beta);
}

static void test_command(void **state)
{
	(void)state;
	struct out r;
	cJSON *doc;
	for (int attempt = 1;; attempt++) { /* repeated when the machine visibly stalled, as above */
		r = SYMPHONY("profile", "--profile", "0.5,2", "--slo", "20", "--model", "model", "--batches", "1..16",
			     "--repeats", "9", "--warmup", "2", "--out", at("lin.json"), "--json", "-");
		assert_int_equal(r.status, 0);
		doc = cJSON_Parse(r.o);
		assert_non_null(doc);
		const cJSON *fit = cJSON_GetObjectItem(doc, "fit");
		if ((within(num(fit, "alpha_ms"), 0.5, 0.02) && within(num(fit, "beta_ms"), 2, 0.02)) || attempt == 3 ||
		    !doc_stalled(doc, 0.5, 2))
			break;
		cJSON_Delete(doc);
		out_free(&r);
	}
	assert_contains(r.e, "fit: l(b) = 0."); /* the table goes to stderr beside --json - */
	assert_string_equal(cJSON_GetObjectItem(doc, "program")->valuestring, "symphony");
	assert_non_null(cJSON_GetObjectItem(doc, "version"));
	assert_string_equal(cJSON_GetObjectItem(doc, "executor")->valuestring, "emulated");
	assert_int_equal((int)num(doc, "repeats"), 9);
	assert_int_equal((int)num(doc, "warmup"), 2);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "batches")), 16);
	assert_non_null(cJSON_GetObjectItem(doc, "config"));
	const cJSON *fit = cJSON_GetObjectItem(doc, "fit");
	assert_near(num(fit, "alpha_ms"), 0.5, 0.01, "alpha (command)");
	assert_near(num(fit, "beta_ms"), 2, 0.04, "beta (command)");
	assert_true(num(fit, "r2") > 0.99);
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(fit, "alpha_se_ms")));
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "files"), "table")->valuestring,
			    at("lin.table.json"));
	/* the linear file: the fit as the zoo reads it */
	struct sym_zoo z;
	char err[512];
	assert_int_equal(sym_zoo_load(at("lin.json"), &z, err, sizeof(err)), 0);
	assert_int_equal((int)z.n, 1);
	assert_string_equal(z.gpu, "a100");
	assert_string_equal(z.models[0].name, "model");
	assert_near(z.models[0].alpha_ms, num(fit, "alpha_ms"), 1e-6, "file alpha");
	assert_near(z.models[0].beta_ms, num(fit, "beta_ms"), 1e-6, "file beta");
	assert_int_equal(z.models[0].max_batch, 16);
	assert_near(z.models[0].slo_ms, 20, 0, "file SLO");
	sym_zoo_finish(&z);
	/* the table file: the medians */
	assert_int_equal(sym_zoo_load(at("lin.table.json"), &z, err, sizeof(err)), 0);
	assert_int_equal(z.models[0].ntable, 16);
	const cJSON *ms = cJSON_GetObjectItem(doc, "measurements");
	for (int b = 1; b <= 16; b++) {
		const cJSON *pt = cJSON_GetArrayItem(ms, b - 1);
		assert_int_equal((int)num(pt, "batch"), b);
		assert_near(z.models[0].table_ms[b - 1], num(pt, "median_ms"), 1e-9, "table = median");
		assert_true(num(pt, "p10_ms") <= num(pt, "median_ms") && num(pt, "median_ms") <= num(pt, "p90_ms"));
		assert_true(num(pt, "mad_ms") >= 0);
		if (b > 1)
			assert_true(z.models[0].table_ms[b - 1] >= z.models[0].table_ms[b - 2]);
	}
	sym_zoo_finish(&z);
	/* both files carry the record */
	char *text = read_all(at("lin.table.json"));
	cJSON *tf = cJSON_Parse(text);
	const cJSON *src = cJSON_GetObjectItem(tf, "source");
	assert_string_equal(cJSON_GetObjectItem(src, "version")->valuestring,
			    cJSON_GetObjectItem(doc, "version")->valuestring);
	assert_near(num(cJSON_GetObjectItem(src, "fit"), "alpha_ms"), num(fit, "alpha_ms"), 0, "record");
	cJSON_Delete(tf);
	free(text);
	cJSON_Delete(doc);
	out_free(&r);
	/* the simulator runs both files */
	const char *files[2] = { at("lin.json"), at("lin.table.json") };
	for (int i = 0; i < 2; i++) {
		r = SYMPHONY("sim", "--zoo", files[i], "--models", "model", "--gpus", "4", "--rate", "500", "--duration",
			     "3", "--warmup", "1", "--json", "-", "--quiet");
		assert_int_equal(r.status, 0);
		doc = cJSON_Parse(r.o);
		assert_non_null(doc);
		assert_true(num(doc, "served") > 0);
		assert_near(num(doc, "bad_rate"), 0, 0.01, "bad rate at low load");
		cJSON_Delete(doc);
		out_free(&r);
	}
}

/* A configuration with memory figures and a curved model. */
static void test_config_models(void **state)
{
	(void)state;
	FILE *f = fopen(at("cluster.json"), "w");
	assert_non_null(f);
	fputs("{\"models\": [{\"name\": \"mem\", \"alpha_ms\": 0.3, \"beta_ms\": 1.5, \"max_batch\": 8,\n"
	      "              \"static_mb\": 120, \"dynamic_mb\": 15},\n"
	      "             {\"name\": \"curvy\", \"latency_ms\": [1, 1.1, 1.3, 1.7, 2.4, 3.4, 4.8, 6.6]}],\n"
	      " \"slo_ms\": 30, \"runtime\": {\"input_bytes\": 64}}\n", f);
	assert_int_equal(fclose(f), 0);
	struct out r = SYMPHONY("profile", at("cluster.json"), "--model", "mem", "--repeats", "5", "--warmup", "1",
				"--quiet");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.o, ""); /* --quiet: no table */
	struct sym_zoo z;
	char err[512];
	assert_int_equal(sym_zoo_load(at("profile-mem.json"), &z, err, sizeof(err)), 0);
	assert_int_equal(z.models[0].max_batch, 8); /* the default: 1..max_batch */
	assert_near(z.models[0].static_mb, 120, 0, "static_mb");
	assert_near(z.models[0].dynamic_mb, 15, 1e-9, "dynamic_mb: a batch's (core/memory.h)");
	sym_zoo_finish(&z);
	out_free(&r);
	r = SYMPHONY("profile", at("cluster.json"), "--model", "curvy", "--batches", "1..8", "--repeats", "5", "--warmup",
		     "1", "--out", "c.json", "--table-out", "ct.json");
	assert_int_equal(r.status, 0);
	assert_contains(r.e, "warning: the model is not linear");
	assert_contains(r.e, "use the table profile ct.json");
	assert_contains(r.o, "wrote c.json (linear) and ct.json (table)");
	assert_int_equal(sym_zoo_load(at("ct.json"), &z, err, sizeof(err)), 0);
	char *text = read_all(at("ct.json"));
	cJSON *doc = cJSON_Parse(text);
	const cJSON *ms = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "source"), "measurements");
	double prev = 0;
	for (int i = 0; i < 8; i++) { /* the medians, made non-decreasing */
		double med = num(cJSON_GetArrayItem(ms, i), "median_ms");
		prev = med > prev ? med : prev;
		assert_near(z.models[0].table_ms[i], prev, 1e-9, "curvy table");
	}
	assert_false(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "source"), "fit"),
						      "linear")));
	cJSON_Delete(doc);
	free(text);
	sym_zoo_finish(&z);
	out_free(&r);
}

/* `symphony profile ARGS` exits 2 with msg on stderr, and writes nothing. */
static void refused(const char *msg, const char *const *args)
{
	assert_int_equal(files_in_work(), 0);
	struct out r = run_args(args);
	if (r.status != 2 || !strstr(r.e, msg)) {
		print_error("profile %s ...: status %d, stderr: %s(want 2 and '%s')\n", args[1] ? args[1] : "", r.status,
			    r.e, msg);
		fail();
	}
	assert_int_equal(files_in_work(), 0); /* nothing written, not even a temporary */
	out_free(&r);
}

#define REFUSED(msg, ...) refused(msg, (const char *const[]){ "profile", __VA_ARGS__, NULL })

static void test_refusals(void **state)
{
	(void)state;
	REFUSED("--model 'Nope': no such model in the experiment (zoo a100; models: DenseNet121", "--model",
		       "Nope");
	REFUSED("--model NAME is required: the experiment has 37 models", "--batches", "1..4");
	REFUSED("batch sizes start at 1, got 0", "--model", "ResNet50", "--batches", "0..4");
	REFUSED("the range 8..2 is empty", "--model", "ResNet50", "--batches", "8..2");
	REFUSED("expected batch sizes such as 1..64", "--model", "ResNet50", "--batches", "abc");
	REFUSED("batch 64 is above the largest batch of model 'ResNet50', 55 (the largest b with l(b) <= its SLO "
		       "of 20 ms); raise it with --slo MS", "--model", "ResNet50", "--batches", "1..64");
	REFUSED("batch 9 is above the largest batch of model 'model', 8 (the largest b with l(b) <= its SLO of 6 "
		       "ms)", "--profile", "0.5,2", "--slo", "6", "--batches",
		"1..8,9");
	FILE *f = fopen(at_base("mb.json"), "w");
	assert_non_null(f);
	fputs("{\"models\": [{\"name\": \"m\", \"alpha_ms\": 0.5, \"beta_ms\": 2, \"max_batch\": 4}], \"slo_ms\": 20}", f);
	assert_int_equal(fclose(f), 0);
	REFUSED("batch 5 is above the largest batch of model 'm', 4 (its max_batch)", at_base("mb.json"), "--batches",
		"1..5");
	REFUSED("at least 2 batch sizes are needed", "--model", "ResNet50", "--batches", "4");
	REFUSED("option --executor: expected emulated, cuda or torch, got 'tpu'", "--model", "ResNet50", "--executor",
		       "tpu");
	REFUSED("--repeats: expected an integer from 1", "--model", "ResNet50", "--repeats", "0");
	REFUSED("options --out and --json both write to standard output", "--model", "ResNet50", "--out", "-", "--json",
		"-");
	REFUSED("must name different files", "--model", "ResNet50", "--json", "profile-ResNet50.json");
	REFUSED("option --table-out: . is a directory", "--model", "ResNet50", "--table-out", ".");
	REFUSED("unknown option '--bogus'", "--model", "ResNet50", "--bogus", "1");
	REFUSED("option --model needs a value", "--model");
	REFUSED("cannot read", "nonexistent.json", "--model", "x");
	/* cuda: where it cannot open (no GPU, or no CUDA in this build), its message and status 2 */
	char err[512] = "";
	struct sym_executor_opts xo = { 0 };
	struct sym_executor *x = sym_executor_open("cuda", &xo, err, sizeof(err));
	if (x) {
		x->ops->destroy(x);
		print_message("a CUDA device is present: the no-GPU refusal is not tested here\n");
	} else {
		assert_contains(err, "cuda");
		REFUSED(err, "--model", "ResNet50", "--executor", "cuda");
	}
}

static void test_help_and_output_errors(void **state)
{
	(void)state;
	struct out r = SYMPHONY("help", "profile");
	assert_int_equal(r.status, 0);
	assert_contains(r.o, "usage: symphony profile");
	assert_contains(r.o, "--table-out FILE");
	out_free(&r);
	r = SYMPHONY("profile", "--help");
	assert_int_equal(r.status, 0);
	assert_contains(r.o, "--batches SPEC");
	out_free(&r);
	r = SYMPHONY("help");
	assert_contains(r.o, "profile     measure a model's batch latency");
	out_free(&r);
	/* an output that cannot be created: status 2 before measuring, nothing left behind */
	r = SYMPHONY("profile", "--profile", "0.5,2", "--slo", "20", "--batches", "1,2", "--out", "no/such/dir.json");
	assert_int_equal(r.status, 2);
	assert_contains(r.e, "option --out: cannot write no/such/dir.json: no directory no/such");
	assert_int_equal(files_in_work(), 0);
	out_free(&r);
	/* "-": the linear profile on standard output, the table beside (its default name), the fit on stderr */
	r = SYMPHONY("profile", "--profile", "0.5,2", "--slo", "20", "--batches", "1,2", "--repeats", "2", "--out", "-",
		     "--quiet");
	assert_int_equal(r.status, 0);
	cJSON *doc = cJSON_Parse(r.o);
	assert_non_null(doc);
	assert_non_null(cJSON_GetObjectItem(doc, "models"));
	cJSON_Delete(doc);
	assert_int_equal(access(at("profile-model.table.json"), F_OK), 0);
	out_free(&r);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_profiler SYMPHONY\n");
		return 2;
	}
	static char abs[4096], cwd[2048];
	bin = argv[1];
	if (bin[0] != '/' && getcwd(cwd, sizeof(cwd))) { /* the command runs in another directory */
		snprintf(abs, sizeof(abs), "%s/%s", cwd, argv[1]);
		bin = abs;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emulated_fit),
		cmocka_unit_test(test_parse_batches),
		cmocka_unit_test(test_fit_and_table),
		cmocka_unit_test_setup_teardown(test_command, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config_models, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_help_and_output_errors, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
