/* tests/test_cli.c - end-to-end tests of the symphony command line.
 *
 * Runs the program (argv[1]: the symphony binary) with fork/execv, no shell,
 * in a fresh temporary directory, and checks its exit status, its messages
 * and the files it writes:
 *   - bad input exits 2, names what was wrong on stderr and creates none of
 *     the --json/--trace/--timeline outputs;
 *   - a seeded run is reproducible, and its result file reruns it;
 *   - the JSON result has the documented keys and conserves requests;
 *   - the goodput acceptance floor of the spec's one-liner;
 *   - the per-model criterion (every model within 1% at the goodput, the
 *     worst model named, the aggregate rule on request), few-request
 *     warnings, and replications (--seeds) in goodput, plan, loadcurve and
 *     sweep: deterministic, with the mean, its interval and the per-seed values;
 *   - trace and timeline CSVs; help, models, policies, version;
 *   - --flag=value, and options overriding the keys of a config file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "testutil.h"

#define MAX_ARGS 64

static const char *symphony; /* absolute path of the binary */
static char tmpdir[256];     /* fresh directory for inputs and outputs */

/* A small experiment that runs in milliseconds. */
#define SMALL "--profile", "1.053,5.072", "--slo", "25", "--gpus", "8", "--rate", "3000", "--duration", "3", \
	      "--warmup", "1"

/* ---- helpers ------------------------------------------------------------ */

/* tmpdir/name in a static ring of buffers (enough for one command line). */
static const char *tmp_path(const char *name)
{
	static char ring[MAX_ARGS][512];
	static unsigned next;
	char *p = ring[next++ % MAX_ARGS];
	snprintf(p, sizeof(ring[0]), "%s/%s", tmpdir, name);
	return p;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, len = 0, got;
	char *buf = malloc(cap);
	assert_non_null(buf);
	while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (len + 1 == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
}

static void write_text(const char *name, const char *text)
{
	FILE *f = fopen(tmp_path(name), "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

struct run {
	int status;  /* exit status, or 128 + signal */
	char *out;   /* captured stdout */
	char *err;   /* captured stderr */
	char cmd[2048];
};

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/* The file the next run reads as its standard input (tmpdir/NAME), or NULL:
 * /dev/null. Reset by each run. */
static const char *child_stdin;

/* Starts symphony with args (NULL-terminated; an argument "@NAME" stands for
 * tmpdir/NAME) in tmpdir, its stdout and stderr into tmpdir/out_name and
 * tmpdir/err_name; the command line, for messages, into cmd (when not NULL).
 * Returns its pid. */
static pid_t spawn(const char *const *args, const char *out_name, const char *err_name, char *cmd, size_t cmdlen)
{
	char *argv[MAX_ARGS + 2];
	size_t n = 0;
	argv[n++] = (char *)symphony;
	if (cmd)
		snprintf(cmd, cmdlen, "symphony");
	for (size_t i = 0; args[i]; i++) {
		assert_true(n < MAX_ARGS);
		const char *a = args[i][0] == '@' ? tmp_path(args[i] + 1) : args[i];
		argv[n++] = (char *)a;
		size_t l = cmd ? strlen(cmd) : 0;
		if (cmd)
			snprintf(cmd + l, cmdlen - l, " %s", a);
	}
	argv[n] = NULL;
	char outp[512], errp[512], inp[512];
	snprintf(inp, sizeof(inp), "%s", child_stdin ? tmp_path(child_stdin) : "/dev/null");
	child_stdin = NULL;
	snprintf(outp, sizeof(outp), "%s/%s", tmpdir, out_name);
	snprintf(errp, sizeof(errp), "%s/%s", tmpdir, err_name);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fo = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fi = open(inp, O_RDONLY);
		if (fo < 0 || fe < 0 || fi < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0 || dup2(fi, 0) < 0)
			_exit(126);
		close(fi);
		close(fo);
		close(fe);
		if (chdir(tmpdir))
			_exit(126);
		execv(symphony, argv);
		_exit(127);
	}
	return pid;
}

/* Runs symphony with args (as spawn), capturing stdout and stderr. */
static void run_argv(struct run *r, const char *const *args)
{
	pid_t pid = spawn(args, "cap_stdout.txt", "cap_stderr.txt", r->cmd, sizeof(r->cmd));
	int st;
	while (waitpid(pid, &st, 0) < 0)
		assert_int_equal(errno, EINTR);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	r->out = slurp(tmp_path("cap_stdout.txt"));
	r->err = slurp(tmp_path("cap_stderr.txt"));
	assert_non_null(r->out);
	assert_non_null(r->err);
	unlink(tmp_path("cap_stdout.txt"));
	unlink(tmp_path("cap_stderr.txt"));
}

#define RUN(r, ...)                                                      \
	do {                                                             \
		const char *const args_[] = { __VA_ARGS__, NULL };       \
		run_argv((r), args_);                                    \
	} while (0)

static void expect_status(const struct run *r, int want)
{
	if (r->status != want) {
		print_error("`%s`: exit status %d, want %d\n--- stderr:\n%s\n--- stdout (head):\n%.2000s\n", r->cmd,
			    r->status, want, r->err, r->out);
		fail();
	}
}

static void expect_contains(const char *hay, const char *needle, const char *what, const struct run *r)
{
	if (!hay || !strstr(hay, needle)) {
		print_error("`%s`: %s does not mention '%s':\n%s\n", r ? r->cmd : "", what, needle, hay ? hay : "(null)");
		fail();
	}
}

static cJSON *load_json(const char *path)
{
	char *text = slurp(path);
	if (!text) {
		print_error("%s: missing\n", path);
		fail();
	}
	cJSON *doc = cJSON_Parse(text);
	if (!doc) {
		print_error("%s: not valid JSON:\n%.2000s\n", path, text);
		free(text);
		fail();
	}
	free(text);
	return doc;
}

/* The result without "wall_seconds", printed unformatted. */
static char *canonical(const char *path)
{
	cJSON *doc = load_json(path);
	assert_non_null(cJSON_GetObjectItemCaseSensitive(doc, "wall_seconds"));
	cJSON_DeleteItemFromObjectCaseSensitive(doc, "wall_seconds");
	cJSON *prov = cJSON_GetObjectItemCaseSensitive(doc, "provenance"); /* and the date of the run */
	assert_non_null(cJSON_GetObjectItemCaseSensitive(prov, "date"));
	cJSON_DeleteItemFromObjectCaseSensitive(prov, "date");
	char *s = cJSON_PrintUnformatted(doc);
	assert_non_null(s);
	cJSON_Delete(doc);
	return s;
}

static const cJSON *get(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!v) {
		char *s = cJSON_PrintUnformatted(obj);
		print_error("key '%s' missing in %.1500s\n", key, s ? s : "?");
		free(s);
		fail();
	}
	return v;
}

static double num(const cJSON *obj, const char *key)
{
	const cJSON *v = get(obj, key);
	if (!cJSON_IsNumber(v)) {
		print_error("key '%s' is not a number\n", key);
		fail();
	}
	return v->valuedouble;
}

/* Checks a result's provenance: {version, commit, modified, build_type,
 * date (when with_date)}, beside the top-level version and commit it agrees
 * with (commit there ends in "-dirty" when modified). */
static void check_provenance(const cJSON *doc, bool with_date)
{
	const cJSON *prov = get(doc, "provenance");
	assert_string_equal(get(prov, "version")->valuestring, get(doc, "version")->valuestring);
	const char *commit = get(prov, "commit")->valuestring, *top = get(doc, "commit")->valuestring;
	const cJSON *mod = get(prov, "modified");
	assert_true(cJSON_IsBool(mod) || (cJSON_IsNull(mod) && !strcmp(commit, "unknown")));
	char want[160];
	snprintf(want, sizeof(want), "%s%s", commit, cJSON_IsTrue(mod) ? "-dirty" : "");
	assert_string_equal(top, want);
	assert_true(cJSON_IsString(get(prov, "build_type")) && get(prov, "build_type")->valuestring[0]);
	const cJSON *date = cJSON_GetObjectItemCaseSensitive(prov, "date");
	if (!with_date) {
		assert_null(date);
		return;
	}
	int y, mo, d, h, mi, sec;
	char z = 0;
	assert_true(cJSON_IsString(date));
	assert_int_equal(sscanf(date->valuestring, "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &sec, &z), 7);
	assert_int_equal(z, 'Z');
	assert_int_equal(strlen(date->valuestring), 20);
	assert_true(y >= 2024 && mo >= 1 && mo <= 12);
}

/* Checks the sidecar of a CSV written to a file, PATH.meta.json: the
 * provenance, the CSV's name and the configuration. */
static void check_sidecar(const char *csv_path, const char *csv)
{
	char meta[600];
	snprintf(meta, sizeof(meta), "%s.meta.json", csv_path);
	cJSON *doc = load_json(meta);
	check_provenance(doc, true);
	assert_string_equal(get(doc, "csv")->valuestring, csv);
	assert_true(cJSON_IsObject(get(doc, "config")));
	assert_true(cJSON_IsString(get(doc, "description")));
	cJSON_Delete(doc);
}

/* Names in tmpdir beginning with "out" (outputs and their temporaries). */
static int count_outputs(char *names, size_t len)
{
	DIR *d = opendir(tmpdir);
	assert_non_null(d);
	int n = 0;
	names[0] = '\0';
	for (struct dirent *de; (de = readdir(d));) {
		if (strncmp(de->d_name, "out", 3))
			continue;
		n++;
		size_t l = strlen(names);
		snprintf(names + l, len - l, " %s", de->d_name);
	}
	closedir(d);
	return n;
}

/* Removes path: a file or link, or a directory and everything under it. */
static void remove_path(const char *path)
{
	if (!unlink(path) || errno != EISDIR)
		return;
	DIR *d = opendir(path);
	if (d) {
		for (struct dirent *de; (de = readdir(d));) {
			char sub[1024];
			snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				remove_path(sub);
		}
		closedir(d);
	}
	if (rmdir(path))
		perror(path);
}

static void remove_outputs(void)
{
	DIR *d = opendir(tmpdir);
	assert_non_null(d);
	for (struct dirent *de; (de = readdir(d));)
		if (!strncmp(de->d_name, "out", 3))
			remove_path(tmp_path(de->d_name));
	closedir(d);
}

/* ---- fixtures ----------------------------------------------------------- */

static int group_setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/symphony-cli-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return -1;
	}
	struct {
		const char *name, *text;
	} files[] = {
		{ "malformed.json", "{\n  \"gpus\": 4,\n  \"rate\": \n" },
		{ "not_object.json", "[1, 2, 3]\n" },
		{ "unknown_key.json", "{\"gpuz\": 4}\n" },
		{ "unknown_model.json", "{\"models\": [\"ResNet50\", \"NoSuchModel\"]}\n" },
		{ "zero_gpus.json", "{\"gpus\": 0}\n" },
		{ "negative_gpus.json", "{\"gpus\": -1}\n" },
		{ "fraction_gpus.json", "{\"gpus\": 2.5}\n" },
		{ "string_gpus.json", "{\"gpus\": \"8\"}\n" },
		{ "zero_rate.json", "{\"rate\": 0}\n" },
		{ "negative_rate.json", "{\"rate\": -100}\n" },
		{ "bad_policy.json", "{\"policy\": \"nosuch\"}\n" },
		{ "bad_policy_params.json", "{\"policy\": \"eager:3\"}\n" },
		{ "bad_arrival.json", "{\"arrival\": \"gamma:0\"}\n" },
		{ "bad_popularity.json", "{\"popularity\": \"zipf:x\"}\n" },
		{ "bad_drop.json", "{\"drop\": \"early:-1\"}\n" },
		{ "bad_segments.json", "{\"segments\": [{\"duration_s\": 1}]}\n" },
		{ "bad_network.json", "{\"network\": {\"ctrl_ms\": 0, \"foo_ms\": 1}}\n" },
		{ "short_slo.json",
		  "{\"models\": [{\"name\": \"tiny\", \"alpha_ms\": 1, \"beta_ms\": 5, \"slo_ms\": 3}]}\n" },
		{ "warmup.json", "{\"duration_s\": 10, \"warmup_s\": 10}\n" },
		{ "bad_zoo_syntax.json", "{\"gpu\": \"x\", \"models\": [\n  {\"name\": \"m\", \"alpha_ms\": 1,,}\n" },
		{ "bad_zoo_empty.json", "{\"gpu\": \"x\", \"models\": []}\n" },
		{ "bad_zoo_model.json", "{\"gpu\": \"x\", \"models\": [{\"name\": \"m\", \"alpha_ms\": \"fast\"}]}\n" },
		{ "rates_bad.csv", "model\n100\n200\nlots\n" },
		{ "rates_header_only.csv", "model\n" },
		{ "rates_nocol.csv", "other\n100\n200\n300\n400\n" },
		{ "rates_3rows.csv", "model\n1000\n2000\n1000\n" },
		{ "rates_huge.csv", "model\n1000\n1e12\n" },
		{ "gpus4.json", "{\"gpus\": 4, \"rate\": 3000, \"seed\": 5}\n" },
		{ "bad_replications.json", "{\"replications\": -1}\n" },
		{ "bad_criterion.json", "{\"criterion\": \"median\"}\n" },
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f = fopen(tmp_path(files[i].name), "w");
		if (!f)
			return -1;
		fputs(files[i].text, f);
		fclose(f);
	}
	/* Config files that name other files take absolute paths. */
	char buf[1024];
	snprintf(buf, sizeof(buf), "{\"zoo\": \"%s\"}\n", tmp_path("no_such_zoo.json"));
	write_text("missing_zoo.json", buf);
	snprintf(buf, sizeof(buf), "{\"rate_csv\": \"%s\"}\n", tmp_path("no_such_rates.csv"));
	write_text("missing_csv.json", buf);
	snprintf(buf, sizeof(buf), "{\"rate_csv\": \"%s\"}\n", tmp_path("rates_bad.csv"));
	write_text("malformed_csv.json", buf);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (tmpdir[0])
		remove_path(tmpdir);
	return 0;
}

/* ---- 1. bad input ------------------------------------------------------- */

struct bad_case {
	const char *what;
	const char *args[24]; /* after COMMAND and the output options */
	const char *cmd;      /* sim (default), goodput, or a command under test */
	const char *expect;   /* substring of stderr */
	const char *expect2;  /* another one, or NULL */
};

#define B_PROFILE "--profile", "1.053,5.072", "--slo", "25", "--duration", "3", "--warmup", "1"

static const struct bad_case bad_cases[] = {
	/* config files */
	{ "malformed JSON config", { "@malformed.json", B_PROFILE }, NULL, "malformed.json", "malformed" },
	{ "config not an object", { "@not_object.json", B_PROFILE }, NULL, "not_object.json", NULL },
	{ "missing config file", { "--config", "@no_such_config.json" }, NULL, "no_such_config.json", NULL },
	{ "unknown config key", { "@unknown_key.json", B_PROFILE }, NULL, "gpuz", "unknown_key.json" },
	{ "unknown network key", { "@bad_network.json", B_PROFILE }, NULL, "foo_ms", "bad_network.json" },
	/* models */
	{ "unknown model (option)", { "--models", "NoSuchModel", "--duration", "3", "--warmup", "1" }, NULL,
	  "NoSuchModel", NULL },
	{ "unknown model (config)", { "@unknown_model.json", "--duration", "3", "--warmup", "1" }, NULL,
	  "NoSuchModel", NULL },
	{ "unknown model (goodput)", { "--models", "ResNet50,NoSuchModel" }, "goodput", "NoSuchModel", NULL },
	/* policy */
	{ "unknown policy", { B_PROFILE, "--policy", "nosuch" }, NULL, "nosuch", "policy" },
	{ "unknown policy (config)", { "@bad_policy.json", B_PROFILE }, NULL, "policy", "nosuch" },
	{ "unknown policy (goodput)", { B_PROFILE, "--policy", "lifo" }, "goodput", "lifo", "policy" },
	{ "timeout without a number", { B_PROFILE, "--policy", "timeout:abc" }, NULL, "policy", "abc" },
	{ "timeout without params", { B_PROFILE, "--policy", "timeout" }, NULL, "policy", NULL },
	{ "symphony with params", { B_PROFILE, "--policy", "symphony:xyz" }, NULL, "policy", "xyz" },
	{ "eager with params (config)", { "@bad_policy_params.json", B_PROFILE }, NULL, "policy", NULL },
	{ "shepherd lambda below 1", { B_PROFILE, "--policy", "shepherd:lambda=0.5" }, NULL, "lambda", "shepherd" },
	{ "nexus unknown parameter", { B_PROFILE, "--policy", "nexus:batch=3" }, "goodput", "batch", "nexus" },
	{ "urgency override of an unknown model", { B_PROFILE, "--policy", "urgency:max.nosuch=2" }, NULL, "nosuch",
	  "urgency" },
	{ "clockwork bad pow2", { B_PROFILE, "--policy", "clockwork:pow2=2" }, NULL, "pow2", NULL },
	{ "clockwork ahead not above future", { B_PROFILE, "--policy", "clockwork:ahead=1" }, NULL, "future", "clockwork" },
	{ "clockwork bad select", { B_PROFILE, "--policy", "clockwork:select=eager" }, "goodput", "select", "clockwork" },
	/* cluster */
	{ "cluster kind without profiles", { B_PROFILE, "--cluster", "a100:2,tpu:2" }, NULL, "tpu", "cluster" },
	{ "cluster bad item", { B_PROFILE, "--cluster", "a100" }, NULL, "--cluster", "KIND:N" },
	{ "cluster zero count", { B_PROFILE, "--cluster", "a100:0" }, "goodput", "count", NULL },
	{ "gpus with a two-group cluster", { B_PROFILE, "--cluster", "a100:1,gtx1080ti:1", "--gpus", "3" }, NULL,
	  "--gpus", "cluster" },
	/* rate */
	{ "zero rate", { B_PROFILE, "--rate", "0" }, NULL, "rate", NULL },
	{ "negative rate", { B_PROFILE, "--rate", "-5" }, NULL, "rate", NULL },
	{ "rate not a number", { B_PROFILE, "--rate", "fast" }, NULL, "rate", NULL },
	{ "zero rate (config)", { "@zero_rate.json", B_PROFILE }, NULL, "rate", "zero_rate.json" },
	{ "negative rate (config)", { "@negative_rate.json", B_PROFILE }, NULL, "rate", NULL },
	{ "zero rate (goodput)", { B_PROFILE, "--rate=0" }, "goodput", "rate", NULL },
	/* gpus */
	{ "zero gpus", { B_PROFILE, "--gpus", "0" }, NULL, "gpus", NULL },
	{ "negative gpus", { B_PROFILE, "--gpus", "-2" }, NULL, "gpus", NULL },
	{ "fractional gpus", { B_PROFILE, "--gpus", "2.5" }, NULL, "gpus", NULL },
	{ "gpus not a number", { B_PROFILE, "--gpus", "eight" }, NULL, "gpus", NULL },
	{ "zero gpus (config)", { "@zero_gpus.json", B_PROFILE }, NULL, "gpus", "zero_gpus.json" },
	{ "negative gpus (config)", { "@negative_gpus.json", B_PROFILE }, NULL, "gpus", NULL },
	{ "fractional gpus (config)", { "@fraction_gpus.json", B_PROFILE }, NULL, "gpus", NULL },
	{ "string gpus (config)", { "@string_gpus.json", B_PROFILE }, NULL, "gpus", NULL },
	{ "zero gpus (goodput)", { B_PROFILE, "--gpus", "0" }, "goodput", "gpus", NULL },
	/* SLO */
	{ "SLO below l(1)", { "--profile", "1.053,5.072", "--slo", "5", "--duration", "3", "--warmup", "1" }, NULL,
	  "slo", NULL },
	{ "SLO below l(1) + network", { B_PROFILE, "--slo", "7", "--ctrl-ms", "1", "--resp-ms", "1" }, NULL, "slo",
	  NULL },
	{ "model SLO below l(1) (config)", { "@short_slo.json", "--duration", "3", "--warmup", "1" }, NULL, "slo",
	  "tiny" },
	{ "zero SLO", { B_PROFILE, "--slo", "0" }, NULL, "slo", NULL },
	{ "SLO below l(1) (goodput)", { "--profile", "1.053,5.072", "--slo", "6" }, "goodput", "slo", NULL },
	/* zoo */
	{ "unknown zoo file", { "--zoo", "@no_such_zoo.json", "--duration", "3", "--warmup", "1" }, NULL,
	  "no_such_zoo.json", NULL },
	{ "unknown zoo file (config)", { "@missing_zoo.json", "--duration", "3", "--warmup", "1" }, NULL,
	  "no_such_zoo.json", NULL },
	{ "unknown zoo name", { "--zoo", "v100", "--duration", "3", "--warmup", "1" }, NULL, "v100", NULL },
	{ "malformed zoo file", { "--zoo", "@bad_zoo_syntax.json", "--slo", "30", "--duration", "3", "--warmup", "1" },
	  NULL, "bad_zoo_syntax.json", NULL },
	{ "zoo file without models", { "--zoo", "@bad_zoo_empty.json", "--duration", "3", "--warmup", "1" }, NULL,
	  "bad_zoo_empty.json", "models" },
	{ "zoo file with a bad model", { "--zoo", "@bad_zoo_model.json", "--slo", "30", "--duration", "3", "--warmup",
	  "1" }, NULL, "bad_zoo_model.json", "alpha_ms" },
	/* workload */
	{ "arrival gamma:0", { B_PROFILE, "--arrival", "gamma:0" }, NULL, "arrival", "gamma:0" },
	{ "arrival gamma:x", { B_PROFILE, "--arrival", "gamma:x" }, NULL, "arrival", "gamma:x" },
	{ "arrival gamma:-1", { B_PROFILE, "--arrival", "gamma:-1" }, NULL, "arrival", NULL },
	{ "unknown arrival", { B_PROFILE, "--arrival", "bursty" }, NULL, "arrival", "bursty" },
	{ "arrival gamma:0 (config)", { "@bad_arrival.json", B_PROFILE }, NULL, "arrival", "bad_arrival.json" },
	{ "popularity zipf:-1", { B_PROFILE, "--popularity", "zipf:-1" }, NULL, "popularity", NULL },
	{ "unknown popularity", { B_PROFILE, "--popularity", "skewed" }, NULL, "popularity", "skewed" },
	{ "popularity zipf:x (config)", { "@bad_popularity.json", B_PROFILE }, NULL, "popularity", NULL },
	{ "drop early:0", { B_PROFILE, "--drop", "early:0" }, NULL, "drop", NULL },
	{ "unknown drop", { B_PROFILE, "--drop", "never" }, NULL, "drop", "never" },
	{ "drop early:-1 (config)", { "@bad_drop.json", B_PROFILE }, NULL, "drop", NULL },
	{ "segments with a bad rate", { B_PROFILE, "--segments", "1:abc" }, NULL, "segments", NULL },
	{ "segments without a colon", { B_PROFILE, "--segments", "10" }, NULL, "segments", NULL },
	{ "segments of zero seconds", { B_PROFILE, "--segments", "0:1000" }, NULL, "segments", NULL },
	{ "segments with a negative rate", { B_PROFILE, "--segments", "5:-10" }, NULL, "segments", NULL },
	{ "segments missing rate (config)", { "@bad_segments.json", B_PROFILE }, NULL, "segments", NULL },
	{ "profile with one number", { "--profile", "1.053", "--slo", "25" }, NULL, "profile", NULL },
	{ "profile not numbers", { "--profile", "abc,def", "--slo", "25" }, NULL, "profile", NULL },
	{ "profile with l(1) = 0", { "--profile", "0,0", "--slo", "25" }, NULL, "profile", NULL },
	/* options */
	{ "missing value of --gpus", { B_PROFILE, "--gpus" }, NULL, "gpus", NULL },
	{ "missing value of --policy", { B_PROFILE, "--policy" }, NULL, "policy", NULL },
	{ "missing value of --config", { B_PROFILE, "--config" }, NULL, "config", NULL },
	{ "missing value of --rate (goodput)", { B_PROFILE, "--rate" }, "goodput", "rate", NULL },
	{ "unknown option", { B_PROFILE, "--bogus", "3" }, NULL, "--bogus", NULL },
	{ "unknown option with =", { B_PROFILE, "--bogus=3" }, NULL, "bogus", NULL },
	{ "unknown short option", { B_PROFILE, "-x" }, NULL, "-x", NULL },
	{ "unknown option (goodput)", { B_PROFILE, "--gpu", "8" }, "goodput", "--gpu", NULL },
	{ "two config files", { "@gpus4.json", "@gpus4.json", B_PROFILE }, NULL, "gpus4.json", NULL },
	{ "empty --json name", { B_PROFILE, "--json=" }, NULL, "output", NULL },
	{ "seed -1", { B_PROFILE, "--seed", "-1" }, NULL, "seed", NULL },
	{ "seed 1.5", { B_PROFILE, "--seed", "1.5" }, NULL, "seed", NULL },
	{ "jitter 1", { B_PROFILE, "--jitter", "1" }, NULL, "jitter", NULL },
	{ "zero duration", { B_PROFILE, "--duration", "0" }, NULL, "duration", NULL },
	/* criterion and replications */
	{ "seeds 0", { B_PROFILE, "--seeds", "0" }, "goodput", "--seeds", NULL },
	{ "seeds x", { B_PROFILE, "--seeds", "x" }, "goodput", "--seeds", "'x'" },
	{ "seeds 2.5", { B_PROFILE, "--seeds=2.5" }, "goodput", "--seeds", NULL },
	{ "seeds 0 (sim)", { B_PROFILE, "--seeds", "0" }, NULL, "--seeds", NULL },
	{ "seeds 0 (plan)", { B_PROFILE, "--target-rate", "1000", "--seeds", "0" }, "plan", "--seeds", NULL },
	{ "seeds x (loadcurve)", { B_PROFILE, "--seeds", "x" }, "loadcurve", "--seeds", NULL },
	{ "replications -1 (config)", { "@bad_replications.json", B_PROFILE }, "goodput", "replications",
	  "bad_replications.json" },
	{ "replications -1 (plan config)", { "@bad_replications.json", B_PROFILE, "--target-rate", "1000" }, "plan",
	  "replications", NULL },
	{ "criterion foo", { B_PROFILE, "--criterion", "foo" }, "goodput", "--criterion", "foo" },
	{ "criterion foo (sim)", { B_PROFILE, "--criterion", "foo" }, NULL, "--criterion", NULL },
	{ "criterion foo (plan)", { B_PROFILE, "--target-rate", "1000", "--criterion", "foo" }, "plan", "--criterion",
	  NULL },
	{ "criterion foo (loadcurve)", { B_PROFILE, "--criterion", "foo" }, "loadcurve", "--criterion", NULL },
	{ "criterion median (config)", { "@bad_criterion.json", B_PROFILE }, "goodput", "criterion",
	  "bad_criterion.json" },
	{ "unknown command", { B_PROFILE }, "simulate", "simulate", NULL },
	/* warm-up */
	{ "warmup == duration", { "--profile", "1.053,5.072", "--slo", "25", "--duration", "3", "--warmup", "3" }, NULL,
	  "warmup", NULL },
	{ "warmup > duration", { "--profile", "1.053,5.072", "--slo", "25", "--duration", "3", "--warmup", "5" }, NULL,
	  "warmup", NULL },
	{ "warmup == duration (config)", { "@warmup.json", "--profile", "1.053,5.072", "--slo", "25" }, NULL, "warmup",
	  NULL },
	{ "warmup > segments' length", { "--profile", "1.053,5.072", "--slo", "25", "--segments", "1:1000,1:2000" },
	  NULL, "warmup", NULL },
	{ "warmup == rate_csv's length", { "--profile", "1.053,5.072", "--slo", "25", "--rate-csv", "@rates_3rows.csv",
	  "--warmup", "3" }, NULL, "warmup", NULL },
	{ "warmup > rate_csv's length", { "--profile", "1.053,5.072", "--slo", "25", "--rate-csv", "@rates_3rows.csv",
	  "--warmup", "5" }, NULL, "warmup", NULL },
	{ "warmup > rate_csv's length (goodput)", { "--profile", "1.053,5.072", "--slo", "25", "--rate-csv",
	  "@rates_3rows.csv" }, "goodput", "warmup", NULL },
	/* rate_csv */
	{ "rate_csv missing", { B_PROFILE, "--rate-csv", "@no_such_rates.csv" }, NULL, "no_such_rates.csv", NULL },
	{ "rate_csv missing (config)", { "@missing_csv.json", B_PROFILE }, NULL, "no_such_rates.csv", NULL },
	{ "rate_csv malformed", { B_PROFILE, "--rate-csv", "@rates_bad.csv" }, NULL, "rates_bad.csv", NULL },
	{ "rate_csv malformed (config)", { "@malformed_csv.json", B_PROFILE }, NULL, "rates_bad.csv", NULL },
	{ "rate_csv without rows", { B_PROFILE, "--rate-csv", "@rates_header_only.csv" }, NULL,
	  "rates_header_only.csv", NULL },
	{ "rate_csv without the model's column", { B_PROFILE, "--rate-csv", "@rates_nocol.csv" }, NULL,
	  "rates_nocol.csv", "model" },
	{ "rate_csv without a model's column (goodput)", { "--profile", "1.053,5.072", "--slo", "25", "--rate-csv",
	  "@rates_nocol.csv", "--warmup", "1" }, "goodput", "rates_nocol.csv", NULL },
	/* jobs, send-ahead, slo mode */
	{ "goodput -j 0", { B_PROFILE, "-j", "0" }, "goodput", "--jobs", "1 to 4096" },
	{ "send-ahead not a boolean", { B_PROFILE, "--send-ahead", "maybe" }, NULL, "--send-ahead", "true or false" },
	{ "slo-mode unknown", { B_PROFILE, "--slo-mode", "most" }, NULL, "--slo-mode", "at-least" },
	/* unknown input is refused, named, and a near miss suggested */
	{ "misspelt option", { B_PROFILE, "--sed", "3" }, NULL, "unknown option '--sed'", "did you mean --seed?" },
	{ "misspelt command", { B_PROFILE }, "simm", "unknown command 'simm'", "did you mean 'sim'?" },
	{ "misspelt model (case)", { "--models", "resnet50", "--duration", "3", "--warmup", "1" }, NULL,
	  "unknown model 'resnet50'", "did you mean 'ResNet50'?" },
	{ "misspelt model", { "--models", "ResNet5", "--duration", "3", "--warmup", "1" }, NULL, "unknown model 'ResNet5'",
	  "did you mean 'ResNet50'?" },
	{ "an option of another command", { B_PROFILE, "--target-rate", "10" }, NULL, "'--target-rate'", NULL },
	{ "two config files", { "@malformed.json", "--config", "@not_object.json", B_PROFILE }, NULL,
	  "two configuration files", NULL },
	{ "a cluster kind without profiles", { B_PROFILE, "--cluster", "h100:8" }, NULL, "kind 'h100'", "\"zoo\"" },
	{ "a flag given a value", { B_PROFILE, "--quiet=yes" }, NULL, "--quiet takes no value", NULL },
	{ "plan given a trace", { B_PROFILE, "--target-rate", "10", "--trace", "@t.csv" }, "plan",
	  "unknown option '--trace'", NULL },
	/* what the simulator can honour: each key's range, and a run's size before it starts */
	{ "gamma shape below 0.001", { B_PROFILE, "--arrival", "gamma:1e-8" }, NULL, "gamma:1e-8", "below 0.001" },
	{ "gamma shape 1e-300", { B_PROFILE, "--arrival", "gamma:1e-300" }, "goodput", "--arrival", "bursts" },
	{ "gamma shape above 1e6", { B_PROFILE, "--arrival", "gamma:1e7" }, NULL, "--arrival", "uniform" },
	{ "zipf exponent above 100", { B_PROFILE, "--popularity", "zipf:1000" }, NULL, "--popularity", "100" },
	{ "SLO above 1e6 ms", { B_PROFILE, "--slo", "2e6" }, NULL, "--slo", "1e+06" },
	{ "duration below 1 ms", { B_PROFILE, "--duration", "0.0001" }, NULL, "--duration", "0.001" },
	{ "max-bad-rate below 1e-6", { B_PROFILE, "--max-bad-rate", "1e-9" }, "goodput", "--max-bad-rate", "1e-06" },
	{ "tolerance below 1e-6", { B_PROFILE, "--tolerance", "1e-12" }, "goodput", "--tolerance", "1e-06" },
	{ "l(1) below a microsecond", { "--profile", "0,1e-9", "--slo", "25" }, NULL, "l(1)", "0.001 ms" },
	{ "alpha above 1e6 ms", { "--profile", "2e6,1", "--slo", "25" }, NULL, "alpha_ms", "1e+06" },
	{ "latency table entry of 0", { "--models", "[{\"name\": \"t\", \"latency_ms\": [0, 1]}]", "--slo", "25" },
	  NULL, "models", NULL },
	{ "gpus_per_model beyond a million GPUs", { B_PROFILE, "--num-models", "1000", "--gpus-per-model", "10000" },
	  NULL, "gpus_per_model", "1000000" },
	{ "segments longer than 1e7 s", { B_PROFILE, "--segments", "6e6:10,6e6:10" }, NULL, "segments", "1e+07" },
	{ "rate_csv rate above 1e9", { B_PROFILE, "--rate-csv", "@rates_huge.csv" }, NULL, "rates_huge.csv", "1e+09" },
	{ "4e9 requests of one model", { B_PROFILE, "--rate", "1e9", "--duration", "10" }, NULL, "requests",
	  "duration_s" },
	{ "4e9 requests at goodput's upper bound", { B_PROFILE, "--duration", "1e6" }, "goodput", "requests",
	  "upper bound" },
	{ "a timeline beyond memory", { B_PROFILE, "--rate", "100", "--duration", "1e7", "--interval", "0.001" }, NULL,
	  "memory", "interval_s" },
	{ "a per-model timeline beyond memory", { B_PROFILE, "--num-models", "10000", "--rate", "1000", "--duration",
	  "1e7", "--model-timeline", "@out_mt.csv" }, NULL, "memory", "model-timeline" },
	/* outputs */
	{ "--timeline and --model-timeline both on stdout", { B_PROFILE, "--timeline", "-", "--model-timeline", "-" },
	  NULL, "--timeline and --model-timeline", "standard output" },
	{ "--trace twice under two names", { B_PROFILE, "--model-timeline", "@out_trace.csv" }, NULL, "--trace",
	  "--model-timeline" },
	{ "an output into a missing directory", { B_PROFILE, "--model-timeline", "@no_such_dir/mt.csv" }, NULL,
	  "--model-timeline", "no directory" },
	{ "a directory as the output", { B_PROFILE, "--model-timeline", "@" }, "goodput", "--model-timeline",
	  "is a directory" },
};

static void check_bad_case(const struct bad_case *c, int *failures)
{
	const char *args[MAX_ARGS];
	size_t n = 0;
	args[n++] = c->cmd ? c->cmd : "sim";
	/* The output options come first so that a case can end with an option
	 * missing its value. */
	const char *outs[] = { "--json", "@out.json", "--trace", "@out_trace.csv", "--timeline", "@out_timeline.csv" };
	bool run = !c->cmd || !strcmp(c->cmd, "sim") || !strcmp(c->cmd, "goodput"); /* these take the CSVs */
	for (size_t i = 0; i < (run ? 6u : 2u); i++)
		args[n++] = outs[i];
	for (size_t i = 0; c->args[i]; i++)
		args[n++] = c->args[i];
	args[n] = NULL;
	struct run r;
	run_argv(&r, args);
	char left[1024];
	int nleft = count_outputs(left, sizeof(left));
	bool ok = true;
	if (r.status != 2) {
		print_error("[%s] `%s`: exit status %d, want 2\n  stderr: %.600s\n", c->what, r.cmd, r.status, r.err);
		ok = false;
	}
	if (!strstr(r.err, c->expect) || (c->expect2 && !strstr(r.err, c->expect2))) {
		print_error("[%s] `%s`: stderr does not name '%s'%s%s\n  stderr: %.600s\n", c->what, r.cmd, c->expect,
			    c->expect2 ? " and '" : "", c->expect2 ? c->expect2 : "", r.err);
		ok = false;
	}
	if (nleft) {
		print_error("[%s] `%s`: output files created on bad input:%s\n", c->what, r.cmd, left);
		ok = false;
	}
	if (!ok)
		(*failures)++;
	remove_outputs();
	run_free(&r);
}

static void test_bad_input(void **state)
{
	(void)state;
	int failures = 0;
	size_t n = sizeof(bad_cases) / sizeof(bad_cases[0]);
	for (size_t i = 0; i < n; i++)
		check_bad_case(&bad_cases[i], &failures);
	if (failures) {
		print_error("%d of %zu bad-input cases failed\n", failures, n);
		fail();
	}
}

/* `symphony split` on Nexus's Figure 4 (its study file): the optimum per
 * gamma and the three plans' queries/s per GPU as the paper gives them; a
 * query workload in sim (--queries FILE) reports per-query outcomes and
 * its split; bad query files are refused naming what is wrong. */
static void test_split_and_queries(void **state)
{
	(void)state;
	char study[512];
	snprintf(study, sizeof(study), "%s/experiments/nexus-fig4.json", SYM_SOURCE_ROOT);
	struct run r;
	RUN(&r, "split", study, "--quiet", "--json", tmp_path("split.json"));
	expect_status(&r, 0);
	run_free(&r);
	cJSON *doc = load_json(tmp_path("split.json"));
	check_provenance(doc, true);
	const cJSON *res = get(doc, "results");
	const double paper[3][3] = { { 192.3, 142.9, 40.0 }, { 235.3, 153.8, 34.5 }, { 272.7, 150.0, 27.3 } };
	const double best[3] = { 272.7, 153.8, 40.0 };
	assert_int_equal(cJSON_GetArraySize(res), 3);
	for (int g = 0; g < 3; g++) {
		const cJSON *splits = get(cJSON_GetArrayItem(res, g), "splits");
		assert_int_equal(cJSON_GetArraySize(splits), 5); /* nexus, even, three plans */
		assert_string_equal(get(cJSON_GetArrayItem(splits, 0), "split")->valuestring, "nexus");
		assert_true(fabs(num(cJSON_GetArrayItem(splits, 0), "throughput_per_gpu") - best[g]) < 0.06);
		for (int p = 0; p < 3; p++)
			assert_true(fabs(num(cJSON_GetArrayItem(splits, 2 + p), "throughput_per_gpu") - paper[p][g]) < 0.06);
	}
	cJSON_Delete(doc);
	unlink(tmp_path("split.json"));
	write_text("q.json", "[{\"name\": \"q\", \"slo_ms\": 60, \"split\": \"nexus\", \"stages\": [{\"model\": \"A\"}, "
			     "{\"model\": \"B\", \"gamma\": 2}]}]");
	write_text("q-exp.json", "{\"models\": [{\"name\": \"A\", \"alpha_ms\": 1, \"beta_ms\": 5}, {\"name\": \"B\", "
				 "\"alpha_ms\": 2, \"beta_ms\": 3}], \"slo_ms\": 60}");
	RUN(&r, "sim", tmp_path("q-exp.json"), "--gpus", "4", "--rate", "100", "--duration", "3", "--warmup", "1",
	    "--queries", tmp_path("q.json"), "--json", tmp_path("q-result.json"));
	expect_status(&r, 0);
	expect_contains(r.out, "query q: SLO 60 ms", "the table", &r);
	expect_contains(r.out, "worst query q", "the table", &r);
	run_free(&r);
	doc = load_json(tmp_path("q-result.json"));
	const cJSON *q = cJSON_GetArrayItem(get(doc, "queries"), 0);
	assert_true(num(q, "offered") > 100);
	assert_true(fabs(num(q, "stage_requests_per_query") - 3) < 1e-9);
	assert_int_equal(cJSON_GetArraySize(get(q, "stages")), 2);
	assert_string_equal(get(doc, "judged_by")->valuestring, "queries");
	cJSON_Delete(doc);
	unlink(tmp_path("q-result.json"));
	/* loadcurve judges and counts queries too */
	RUN(&r, "loadcurve", tmp_path("q-exp.json"), "--gpus", "4", "--rate", "100", "--duration", "3", "--warmup", "1",
	    "--queries", tmp_path("q.json"), "--loads", "0.5,1", "--json", tmp_path("q-lc.json"));
	expect_status(&r, 0);
	run_free(&r);
	doc = load_json(tmp_path("q-lc.json"));
	char *text = cJSON_PrintUnformatted(doc);
	assert_non_null(text);
	if (!strstr(text, "\"worst_model\":\"q\""))
		fail_msg("loadcurve does not name the query as the worst unit: %.600s", text);
	free(text);
	cJSON_Delete(doc);
	unlink(tmp_path("q-lc.json"));
	/* prefix models from the command line (JSON text) */
	RUN(&r, "sim", "--zoo", "gtx1080ti", "--gpus", "1", "--slo", "100", "--rate", "100", "--duration", "3", "--warmup",
	    "1", "--prefix-batching", "true", "--prefix-models",
	    "[{\"name\": \"R\", \"variants\": 3, \"prefix\": {\"alpha_ms\": 2, \"beta_ms\": 5}, "
	    "\"suffix\": {\"alpha_ms\": 0.1, \"beta_ms\": 0.2}}]");
	expect_status(&r, 0);
	expect_contains(r.out, "R ", "the table", &r);
	run_free(&r);
	RUN(&r, "sim", "--zoo", "gtx1080ti", "--prefix-models", "[{\"name\": \"R\"");
	expect_status(&r, 2);
	expect_contains(r.err, "--prefix-models", "stderr", &r);
	run_free(&r);
	write_text("bad-split.json", "{\"slo_ms\": 100, \"stages\": [{\"points\": [[40, 200]], \"gamma\": -1}]}");
	RUN(&r, "split", tmp_path("bad-split.json"));
	expect_status(&r, 2);
	expect_contains(r.err, "stages[0]: 'gamma' must be a number from 0 to 1000", "stderr", &r);
	run_free(&r);
	write_text("bad-q.json", "[{\"name\": \"q\", \"slo_ms\": 60, \"stages\": [{\"model\": \"Z\"}]}]");
	RUN(&r, "sim", SMALL, "--queries", tmp_path("bad-q.json"));
	expect_status(&r, 2);
	expect_contains(r.err, "model 'Z' is not one of the experiment's models", "stderr", &r);
	run_free(&r);
	unlink(tmp_path("q.json"));
	unlink(tmp_path("q-exp.json"));
	unlink(tmp_path("bad-split.json"));
	unlink(tmp_path("bad-q.json"));
}

/* No arguments at all, and help on an unknown topic. */
static void test_usage_errors(void **state)
{
	(void)state;
	struct run r;
	const char *const none[] = { NULL };
	run_argv(&r, none);
	expect_status(&r, 2);
	expect_contains(r.err, "usage", "stderr", &r);
	run_free(&r);

	RUN(&r, "help", "nosuch");
	expect_status(&r, 2);
	expect_contains(r.err, "nosuch", "stderr", &r);
	run_free(&r);

	RUN(&r, "models", "--zoo", "@no_such_zoo.json");
	expect_status(&r, 2);
	expect_contains(r.err, "no_such_zoo.json", "stderr", &r);
	run_free(&r);

	RUN(&r, "models", "--zoo", "@bad_zoo_syntax.json");
	expect_status(&r, 2);
	expect_contains(r.err, "bad_zoo_syntax.json", "stderr", &r);
	run_free(&r);

	RUN(&r, "models", "--bogus");
	expect_status(&r, 2);
	expect_contains(r.err, "--bogus", "stderr", &r);
	run_free(&r);
}

/* ---- 2. determinism ----------------------------------------------------- */

static void test_determinism(void **state)
{
	(void)state;
	struct run r;
	RUN(&r, "sim", SMALL, "--seed", "7", "--json", "@out_a.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	RUN(&r, "sim", SMALL, "--seed", "7", "--json", "@out_b.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	RUN(&r, "sim", SMALL, "--seed", "8", "--json", "@out_c.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);

	char *a = canonical(tmp_path("out_a.json"));
	char *b = canonical(tmp_path("out_b.json"));
	char *c = canonical(tmp_path("out_c.json"));
	if (strcmp(a, b)) {
		print_error("same seed, different results:\n%.1500s\n%.1500s\n", a, b);
		fail();
	}
	assert_string_not_equal(a, c);
	/* ... and not merely in the echoed seed: the measured run differs. */
	cJSON *ja = load_json(tmp_path("out_a.json"));
	cJSON *jc = load_json(tmp_path("out_c.json"));
	assert_int_equal((int)num(ja, "seed"), 7);
	assert_int_equal((int)num(jc, "seed"), 8);
	assert_true(num(ja, "offered") != num(jc, "offered") ||
		    !cJSON_Compare(get(ja, "latency_ms"), get(jc, "latency_ms"), true));
	cJSON_Delete(ja);
	cJSON_Delete(jc);
	free(a);
	free(b);
	free(c);

	/* A multi-model run with every random element is reproducible too. */
	for (int i = 0; i < 2; i++) {
		RUN(&r, "sim", "--zoo", "gtx1080ti", "--models", "NASNetMobile,DenseNet121,MobileNetV3Small", "--popularity",
		    "zipf:1", "--arrival", "gamma:2", "--jitter", "0.1", "--drop", "early", "--rate", "1500", "--gpus", "4",
		    "--duration", "3", "--warmup", "1", "--seed", "11", "--json", i ? "@out_m2.json" : "@out_m1.json",
		    "--quiet");
		expect_status(&r, 0);
		run_free(&r);
	}
	a = canonical(tmp_path("out_m1.json"));
	b = canonical(tmp_path("out_m2.json"));
	assert_string_equal(a, b);
	free(a);
	free(b);
	remove_outputs();
}

/* ---- 3. a result file reruns its experiment ----------------------------- */

static void compare_rerun(const char *first, const char *second)
{
	cJSON *x = load_json(tmp_path(first));
	cJSON *y = load_json(tmp_path(second));
	const char *keys[] = { "offered", "served", "late", "dropped", "latency_ms", "batch_size", "config", "models" };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!cJSON_Compare(get(x, keys[i]), get(y, keys[i]), true)) {
			char *sx = cJSON_PrintUnformatted(get(x, keys[i]));
			char *sy = cJSON_PrintUnformatted(get(y, keys[i]));
			print_error("rerun of %s: '%s' differs:\n  %.1000s\n  %.1000s\n", first, keys[i], sx, sy);
			free(sx);
			free(sy);
			fail();
		}
	}
	cJSON_Delete(x);
	cJSON_Delete(y);
}

static void test_result_as_config(void **state)
{
	(void)state;
	struct run r;
	RUN(&r, "sim", SMALL, "--seed", "3", "--json", "@out_r1.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	RUN(&r, "sim", "@out_r1.json", "--json", "@out_r2.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	compare_rerun("out_r1.json", "out_r2.json");

	/* Zoo models, workload, policy, drop rule and network all round-trip. */
	RUN(&r, "sim", "--zoo", "gtx1080ti", "--models", "NASNetMobile,DenseNet121", "--popularity", "zipf:0.5",
	    "--arrival", "gamma:3", "--policy", "timeout:30%", "--drop", "early:4", "--ctrl-ms", "0.5", "--data-ms",
	    "0.01", "--resp-ms", "0.2", "--jitter", "0.05", "--rate", "800", "--gpus", "3", "--duration", "3",
	    "--warmup", "1", "--seed", "99", "--json", "@out_r3.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	RUN(&r, "sim", "--config", "@out_r3.json", "--json", "@out_r4.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	compare_rerun("out_r3.json", "out_r4.json");
	remove_outputs();
}

/* ---- 4. JSON schema and conservation ------------------------------------ */

static void check_metrics(const cJSON *o, const char *what)
{
	double offered = num(o, "offered"), served = num(o, "served"), late = num(o, "late"),
	       dropped = num(o, "dropped");
	if (offered != served + late + dropped) {
		print_error("%s: offered %.0f != served %.0f + late %.0f + dropped %.0f\n", what, offered, served, late,
			    dropped);
		fail();
	}
	assert_true(served >= 0 && late >= 0 && dropped >= 0);
	double bad = num(o, "bad_rate");
	assert_true(bad >= 0 && bad <= 1);
	if (offered > 0)
		assert_true(fabs(bad - (late + dropped) / offered) < 1e-9);
	const cJSON *lat = get(o, "latency_ms");
	assert_true(cJSON_IsObject(lat));
	double p50 = num(lat, "p50"), p99 = num(lat, "p99");
	assert_true(p50 >= 0 && p99 >= p50);
	const cJSON *b = get(o, "batch_size");
	assert_true(cJSON_IsObject(b));
	double mean = num(b, "mean"), bp50 = num(b, "p50");
	if (served > 0)
		assert_true(mean >= 1 && bp50 >= 1);
}

static void check_result(const char *path, bool goodput)
{
	cJSON *doc = load_json(path);
	assert_true(cJSON_IsString(get(doc, "version")));
	check_provenance(doc, true);
	assert_true(cJSON_IsNumber(get(doc, "seed")));
	assert_true(cJSON_IsString(get(doc, "policy")));
	assert_true(cJSON_IsObject(get(doc, "config")));
	assert_true(num(doc, "offered_rps") >= 0);
	double g = num(doc, "gpu_busy_fraction");
	assert_true(g >= 0 && g <= 1 + 1e-9);
	assert_true(num(doc, "wall_seconds") >= 0);
	assert_true(num(doc, "simulated_requests") >= num(doc, "offered"));
	assert_true(num(doc, "preemptions") >= 0);
	assert_true(num(doc, "preempted_gpu_seconds") >= 0);
	assert_true(num(doc, "replications") >= 1);
	assert_true(cJSON_IsString(get(doc, "criterion")));
	assert_true(cJSON_IsBool(get(doc, "meets_criterion")));
	assert_true(cJSON_IsString(get(doc, "worst_model")) || cJSON_IsNull(get(doc, "worst_model")));
	assert_true(num(doc, "worst_model_bad_rate") >= 0 && num(doc, "worst_model_bad_rate") <= 1);
	assert_true(num(doc, "failing_models") >= 0 && num(doc, "few_request_models") >= 0);
	check_metrics(doc, path);

	const cJSON *models = get(doc, "models");
	assert_true(cJSON_IsArray(models));
	const cJSON *cfg_models = get(get(doc, "config"), "models");
	assert_int_equal(cJSON_GetArraySize(models), cJSON_GetArraySize(cfg_models));
	assert_true(cJSON_GetArraySize(models) >= 1);
	double sums[4] = { 0 };
	const char *keys[4] = { "offered", "served", "late", "dropped" };
	const cJSON *m;
	cJSON_ArrayForEach(m, models)
	{
		assert_true(cJSON_IsObject(m));
		assert_true(cJSON_IsString(get(m, "name")));
		char what[256];
		snprintf(what, sizeof(what), "%s: model %s", path, get(m, "name")->valuestring);
		check_metrics(m, what);
		for (int k = 0; k < 4; k++)
			sums[k] += num(m, keys[k]);
	}
	for (int k = 0; k < 4; k++) {
		if (sums[k] != num(doc, keys[k])) {
			print_error("%s: per-model '%s' sum to %.0f, total %.0f\n", path, keys[k], sums[k],
				    num(doc, keys[k]));
			fail();
		}
	}
	if (goodput) {
		assert_true(num(doc, "goodput_rps") >= 0);
		assert_int_equal(cJSON_GetArraySize(get(doc, "goodput_by_seed")), (int)num(doc, "replications"));
		assert_true(cJSON_IsObject(get(doc, "metrics_from")));
	}
	cJSON_Delete(doc);
}

static void test_json_schema(void **state)
{
	(void)state;
	struct run r;
	RUN(&r, "sim", SMALL, "--json", "@out_s.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	check_result(tmp_path("out_s.json"), false);

	/* Several models, overloaded so that requests are dropped. */
	RUN(&r, "sim", "--zoo", "gtx1080ti", "--models", "NASNetMobile,DenseNet121,MobileNetV3Small", "--popularity",
	    "zipf:1", "--rate", "6000", "--gpus", "2", "--duration", "3", "--warmup", "1", "--json", "@out_s2.json",
	    "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	check_result(tmp_path("out_s2.json"), false);
	cJSON *doc = load_json(tmp_path("out_s2.json"));
	assert_int_equal(cJSON_GetArraySize(get(doc, "models")), 3);
	assert_true(num(doc, "dropped") + num(doc, "late") > 0);
	cJSON_Delete(doc);

	/* --json - writes the result to stdout. */
	RUN(&r, "sim", SMALL, "--json", "-", "--quiet");
	expect_status(&r, 0);
	cJSON *out = cJSON_Parse(r.out);
	assert_non_null(out);
	assert_true(cJSON_IsNumber(get(out, "served")));
	cJSON_Delete(out);
	run_free(&r);

	RUN(&r, "goodput", "--profile", "1.053,5.072", "--slo", "25", "--gpus", "2", "--duration", "4", "--warmup", "1",
	    "--tolerance", "0.05", "--json", "@out_g.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	check_result(tmp_path("out_g.json"), true);

	/* One schema for every policy, on a heterogeneous cluster; shepherd
	 * overloaded preempts and reports the GPU time lost. */
	const char *pols[] = { "symphony", "eager", "timeout:5", "betalambda", "clockwork", "shepherd",
			       "nexus:frontends=2", "urgency", "fcfs", "edf" };
	char first_keys[2048] = "";
	for (size_t i = 0; i < sizeof(pols) / sizeof(pols[0]); i++) {
		RUN(&r, "sim", "--zoo", "a100", "--models", "ResNet50,VGG16", "--cluster", "a100:2,gtx1080ti:2",
		    "--rate", "3000", "--duration", "3", "--warmup", "1", "--policy", pols[i], "--json", "@out_p.json",
		    "--trace", "@out_p.csv", "--quiet");
		expect_status(&r, 0);
		run_free(&r);
		check_result(tmp_path("out_p.json"), false);
		doc = load_json(tmp_path("out_p.json"));
		char keys[2048] = "";
		for (const cJSON *it = doc->child; it; it = it->next) {
			strncat(keys, it->string, sizeof(keys) - strlen(keys) - 2);
			strcat(keys, ",");
		}
		if (!i)
			snprintf(first_keys, sizeof(first_keys), "%s", keys);
		else if (strcmp(keys, first_keys))
			fail_msg("%s: result keys differ from symphony's:\n%s\n%s", pols[i], keys, first_keys);
		assert_string_equal(get(doc, "policy")->valuestring, pols[i]);
		assert_true(cJSON_IsArray(get(get(doc, "config"), "cluster")));
		if (!strcmp(pols[i], "shepherd")) {
			assert_true(num(doc, "preemptions") > 0);
			assert_true(num(doc, "preempted_gpu_seconds") > 0);
		} else {
			assert_true(num(doc, "preemptions") == 0);
		}
		cJSON_Delete(doc);
		char *trace = slurp(tmp_path("out_p.csv"));
		assert_non_null(trace);
		assert_non_null(strstr(trace, ",gtx1080ti,"));
		free(trace);
	}
	remove_outputs();
}

/* ---- plan ---------------------------------------------------------------- */

/* ResNet50 at 15000 r/s: the staggered estimate is exactly 21 GPUs (N = 20
 * gives batch 17 and 14800 r/s; N = 21, 15540 r/s); symphony's simulated
 * minimum is close to it and below eager's. */
/* symphony partition: the MILP's assignment in the JSON with its imbalance factors and the random
 * baseline's; 30 VGG16 on two 11 GB GTX 1080 Ti sub-clusters refused, naming the limit. */
static void test_partition(void **state)
{
	(void)state;
	struct run r;
	RUN(&r, "partition", "--zoo", "gtx1080ti", "--models", "all", "--rate", "1000", "--subclusters", "3",
	    "--time-limit", "1", "--random", "--json", "@out_part.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	cJSON *doc = load_json(tmp_path("out_part.json"));
	check_provenance(doc, true);
	assert_string_equal(get(doc, "command")->valuestring, "partition");
	const cJSON *milp = get(doc, "milp"), *rnd = get(doc, "random");
	const char *st = get(milp, "status")->valuestring;
	assert_true(!strcmp(st, "optimal") || !strcmp(st, "feasible"));
	int n = (int)num(get(doc, "problem"), "models");
	assert_int_equal(cJSON_GetArraySize(get(milp, "assignment")), n);
	for (int i = 0; i < n; i++) {
		int j = (int)cJSON_GetArrayItem(get(milp, "assignment"), i)->valuedouble;
		assert_true(j >= 0 && j < 3);
	}
	assert_true(num(milp, "objective") <= num(rnd, "objective") + 1e-6);
	assert_true(num(milp, "rate_imbalance") >= 0 && num(milp, "memory_imbalance") >= 0);
	assert_true(num(rnd, "tries") > 0);
	cJSON_Delete(doc);
	/* a rate table's rates are req/s, as given (they once showed 1000x: multiplied by --rate's default) */
	write_text("part_rates.csv", "ResNet50,VGG16\n100,300\n100,300\n");
	RUN(&r, "partition", "--zoo", "a100", "--models", "ResNet50,VGG16", "--rate-csv", "@part_rates.csv", "--warmup",
	    "0", "--subclusters", "2", "--json", "@out_part2.json");
	expect_status(&r, 0);
	assert_non_null(strstr(r.out, "300.0 req/s"));
	assert_non_null(strstr(r.out, "100.0 req/s"));
	run_free(&r);
	doc = load_json(tmp_path("out_part2.json"));
	assert_true(num(get(doc, "milp"), "delta_rate") == 100); /* one model a part: 300 over the mean 200 */
	cJSON_Delete(doc);
	RUN(&r, "partition", "--zoo", "gtx1080ti", "--models", "VGG16", "--variants", "30", "--rate", "100",
	    "--subclusters", "2", "--time-limit", "1");
	expect_status(&r, 1);
	expect_contains(r.err, "no assignment fits", "stderr", &r);
	run_free(&r);
	/* two levels: clusters (schedulers), then each cluster's sub-clusters */
	RUN(&r, "partition", "--zoo", "a100", "--variants", "2", "--rate", "4000", "--clusters", "2", "--subclusters", "3",
	    "--time-limit", "0.5", "--json", "@out_two.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	doc = load_json(tmp_path("out_two.json"));
	const cJSON *each = get(get(doc, "clusters"), "each");
	assert_int_equal(cJSON_GetArraySize(each), 2);
	int total = 0;
	for (int k = 0; k < 2; k++) {
		const cJSON *ck = cJSON_GetArrayItem(each, k);
		total += (int)num(ck, "models");
		assert_int_equal(cJSON_GetArraySize(get(get(ck, "subclusters"), "assignment")), (int)num(ck, "models"));
	}
	assert_int_equal(total, 74);
	cJSON_Delete(doc);
	/* the Figure 15 study: every configuration's imbalance factors, MILP and random */
	RUN(&r, "partition", "--zoo", "a100", "--rate", "2000", "--subclusters", "4", "--configs", "3", "--sample", "60",
	    "--time-limit", "0.5", "--json", "@out_study.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	doc = load_json(tmp_path("out_study.json"));
	const cJSON *sd = get(doc, "study");
	assert_int_equal((int)num(sd, "configurations"), 3);
	assert_int_equal(cJSON_GetArraySize(get(sd, "milp_rate_imbalance")), 3);
	assert_int_equal(cJSON_GetArraySize(get(sd, "random_memory_imbalance")), 3);
	assert_true(num(sd, "milp_rate_imbalance_median") <= num(sd, "random_rate_imbalance_median"));
	assert_true(num(sd, "milp_memory_imbalance_median") <= num(sd, "random_memory_imbalance_median"));
	cJSON_Delete(doc);
	RUN(&r, "partition", "--profile", "1,5", "--subclusters", "0");
	expect_status(&r, 2);
	run_free(&r);
}

/* GPU memory from the command line: the issue's 30 copies of VGG16 on four
 * 1080 Ti are refused by sim (with the sub-cluster count that fits), cannot be
 * split four ways, run in five sub-clusters, and are planned with at least
 * five GPUs, the plan saying what binds. */
static void test_memory(void **state)
{
	(void)state;
	struct run r;
	RUN(&r, "sim", "--zoo", "gtx1080ti", "--models", "VGG16", "--num-models", "30", "--gpus", "4");
	expect_status(&r, 2);
	expect_contains(r.err, "30 models need 30860 MB", "stderr", &r);
	expect_contains(r.err, "first-fit packing needs 5", "stderr", &r);
	run_free(&r);
	RUN(&r, "sim", "--zoo", "gtx1080ti", "--models", "VGG16", "--num-models", "30", "--gpus", "4", "--partition", "4",
	    "--duration", "2", "--warmup", "1");
	expect_status(&r, 2);
	expect_contains(r.err, "there is no way to split the 30 models into 4 sub-clusters", "stderr", &r);
	run_free(&r);
	RUN(&r, "sim", "--zoo", "gtx1080ti", "--models", "VGG16", "--num-models", "30", "--gpus", "10", "--partition", "5",
	    "--rate", "150", "--duration", "4", "--warmup", "1", "--json", "@out_mem_sim.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	cJSON *doc = load_json(tmp_path("out_mem_sim.json"));
	const cJSON *subs = get(doc, "subclusters");
	assert_int_equal(cJSON_GetArraySize(subs), 5);
	int gpus = 0;
	for (int j = 0; j < 5; j++) {
		const cJSON *x = cJSON_GetArrayItem(subs, j);
		assert_int_equal((int)num(x, "models"), 6);
		assert_true(num(x, "static_mb") + num(x, "max_dynamic_mb") <= 11264);
		gpus += (int)num(x, "gpus");
	}
	assert_int_equal(gpus, 10);
	/* the echoed configuration carries the assignment: it reruns without solving */
	assert_int_equal(cJSON_GetArraySize(get(get(get(doc, "config"), "partition"), "assign")), 30);
	cJSON_Delete(doc);
	RUN(&r, "plan", "--zoo", "gtx1080ti", "--models", "VGG16", "--num-models", "30", "--target-rate", "60",
	    "--duration", "6", "--warmup", "1", "--json", "@out_mem_plan.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	doc = load_json(tmp_path("out_mem_plan.json"));
	assert_int_equal((int)num(get(doc, "memory"), "subclusters"), 5);
	const cJSON *row = cJSON_GetArrayItem(get(doc, "policies"), 0);
	assert_true(num(row, "gpus") >= 5);
	assert_non_null(cJSON_GetObjectItem(row, "binding"));
	cJSON_Delete(doc);
	/* memory_check false: memory is not modelled */
	RUN(&r, "sim", "--zoo", "gtx1080ti", "--models", "VGG16", "--num-models", "30", "--gpus", "4", "--memory-check",
	    "false", "--duration", "2", "--warmup", "1", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
}

/* A per-request arrival trace, as every command that judges a rate reads it. */
static void test_trace_commands(void **state)
{
	(void)state;
	struct run r;
	char text[16384] = "time_s,model\n";
	size_t len = strlen(text);
	for (int i = 0; i < 600; i++) /* 150 req/s for 4 s: ResNet50 twice as often as VGG16 */
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%.4f,%s\n", i / 150.0 + 0.001 * (i % 5),
					i % 3 == 2 ? "VGG16" : "ResNet50");
	write_text("trace.csv", text);
	/* sim replays it request by request */
	RUN(&r, "sim", "--zoo", "a100", "--models", "ResNet50,VGG16", "--arrival-trace", "@trace.csv", "--gpus", "1",
	    "--warmup", "0", "--json", "@out_trace_sim.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	cJSON *doc = load_json(tmp_path("out_trace_sim.json"));
	assert_int_equal((int)num(doc, "simulated_requests"), 600);
	assert_string_equal(get(get(doc, "config"), "arrival_trace")->valuestring, tmp_path("trace.csv"));
	cJSON_Delete(doc);
	/* goodput scales it, and echoes the scale */
	RUN(&r, "goodput", "--zoo", "a100", "--models", "ResNet50,VGG16", "--arrival-trace", "@trace.csv", "--gpus", "1",
	    "--warmup", "0", "--json", "@out_trace_gp.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	doc = load_json(tmp_path("out_trace_gp.json"));
	double gp = num(doc, "goodput_rps"), scale = num(get(doc, "config"), "rate_scale");
	assert_true(gp > 150);
	assert_true(fabs(gp - scale * 150) < 1e-6 * gp); /* the trace's mean, 150 req/s, at the goodput's scale */
	cJSON_Delete(doc);
	/* plan's target is its mean */
	RUN(&r, "plan", "--zoo", "a100", "--models", "ResNet50,VGG16", "--arrival-trace", "@trace.csv", "--warmup", "0",
	    "--json", "@out_trace_plan.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	doc = load_json(tmp_path("out_trace_plan.json"));
	assert_true(fabs(num(doc, "target_rate") - 150) < 1e-9);
	assert_string_equal(get(get(doc, "schedule"), "kind")->valuestring, "arrival_trace");
	cJSON_Delete(doc);
	/* loadcurve: each load's rate is the trace's mean, scaled */
	RUN(&r, "loadcurve", "--zoo", "a100", "--models", "ResNet50,VGG16", "--arrival-trace", "@trace.csv", "--gpus",
	    "1", "--warmup", "0", "--reference", "300", "--loads", "0.5,1", "--json", "@out_trace_lc.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	doc = load_json(tmp_path("out_trace_lc.json"));
	const cJSON *pts = get(doc, "points");
	assert_true(fabs(num(cJSON_GetArrayItem(pts, 0), "offered_rps") - 150) < 1);
	assert_true(fabs(num(cJSON_GetArrayItem(pts, 1), "offered_rps") - 300) < 1);
	cJSON_Delete(doc);
	/* partition: the trace's rates per model */
	RUN(&r, "partition", "--zoo", "a100", "--models", "ResNet50,VGG16", "--arrival-trace", "@trace.csv", "--warmup",
	    "0", "--subclusters", "2");
	expect_status(&r, 0);
	expect_contains(r.out, "100.0 req/s", "ResNet50's rate", &r);
	expect_contains(r.out, "50.0 req/s", "VGG16's rate", &r);
	run_free(&r);
	/* a missing trace is named; exit 2 */
	RUN(&r, "sim", "--zoo", "a100", "--models", "ResNet50", "--arrival-trace", "@no-such-trace.csv");
	expect_status(&r, 2);
	expect_contains(r.err, "no-such-trace.csv", "stderr", &r);
	run_free(&r);
}

static void test_plan(void **state)
{
	(void)state;
	struct run r;
	/* per-model rates: plan's target is their sum without --target-rate; without rates, refused */
	write_text("plan_rates.json", "{\"models\": [{\"name\": \"a\", \"alpha_ms\": 1, \"beta_ms\": 5, \"slo_ms\": 50, "
				      "\"rate\": 100}, {\"name\": \"b\", \"alpha_ms\": 1, \"beta_ms\": 5, \"slo_ms\": "
				      "50, \"rate\": 300}], \"duration_s\": 4, \"warmup_s\": 1}\n");
	RUN(&r, "plan", "@plan_rates.json", "--json", "@out_plan_rates.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	cJSON *rdoc = load_json(tmp_path("out_plan_rates.json"));
	assert_true(num(rdoc, "target_rate") == 400);
	cJSON_Delete(rdoc);
	RUN(&r, "plan", "--profile", "1.053,5.072", "--slo", "25", "--quiet");
	expect_status(&r, 2);
	expect_contains(r.err, "unless every model has a \"rate\" of its own", "stderr", &r);
	run_free(&r);
	/* --gpus-per-model does not reach the answer's own runs: they are on the answer's count */
	RUN(&r, "plan", "--profile", "1.053,5.072", "--slo", "25", "--duration", "4", "--warmup", "1", "--target-rate",
	    "3000", "--gpus-per-model", "8", "--json", "@out_plan_gpm.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	cJSON *gdoc = load_json(tmp_path("out_plan_gpm.json"));
	const cJSON *gp0 = cJSON_GetArrayItem(get(gdoc, "policies"), 0);
	assert_int_equal((int)num(get(gp0, "worst_at_answer"), "gpus"), (int)num(gp0, "gpus"));
	assert_true(num(get(gp0, "at_answer"), "headroom") < 1); /* not the goodput of 8 GPUs */
	cJSON_Delete(gdoc);
	/* a rate table: the plan is for the table as written (its mean), or scaled to --target-rate; every
	 * simulation replays it whole, so the count serves its peak second */
	write_text("plan_table.csv", "second,a,b\n0,100,50\n1,900,100\n2,100,50\n3,100,50\n");
	write_text("plan_table.json", "{\"models\": [{\"name\": \"a\", \"alpha_ms\": 1, \"beta_ms\": 5, \"slo_ms\": 50}, "
				      "{\"name\": \"b\", \"alpha_ms\": 1, \"beta_ms\": 5, \"slo_ms\": 50}], "
				      "\"warmup_s\": 0}\n");
	double table_gpus[2];
	for (int k = 0; k < 2; k++) {
		RUN(&r, "plan", "@plan_table.json", "--rate-csv", "@plan_table.csv", "--json", "@out_plan_table.json",
		    "--quiet", k ? "--target-rate" : NULL, "1450", NULL);
		expect_status(&r, 0);
		run_free(&r);
		cJSON *tdoc = load_json(tmp_path("out_plan_table.json"));
		assert_true(fabs(num(tdoc, "target_rate") - (k ? 1450 : 362.5)) < 1e-9);
		assert_true(fabs(num(get(tdoc, "schedule"), "scale") - (k ? 4 : 1)) < 1e-9);
		/* the echo reloads to the planned load */
		const cJSON *rs = cJSON_GetObjectItemCaseSensitive(get(tdoc, "config"), "rate_scale"); /* absent: 1 */
		assert_true(fabs((rs ? rs->valuedouble : 1) - (k ? 4 : 1)) < 1e-9);
		const cJSON *tp = cJSON_GetArrayItem(get(tdoc, "policies"), 0);
		table_gpus[k] = num(tp, "gpus");
		/* the headroom is over the mean: the count serves the peak (1000 req/s, 2.8x the mean) */
		assert_true(num(get(tp, "at_answer"), "headroom") > 0);
		cJSON_Delete(tdoc);
	}
	assert_true(table_gpus[1] > table_gpus[0]);
	print_message("plan of a rate table: %g GPUs as written, %g scaled x4\n", table_gpus[0], table_gpus[1]);
	/* a cluster's memory_mb holds through the search: the 35 GTX 1080 Ti models fit one 60 GB device
	 * kind (one pool, 5 GPUs at 300 req/s); on the 11 GB default they need 2 sub-clusters. (The search
	 * once dropped the cluster for --gpus, and so its memory: 60 GB was planned as 11.) */
	for (int k = 0; k < 2; k++) {
		char conf[400];
		snprintf(conf, sizeof(conf), "{\"zoo\": \"gtx1080ti\", \"models\": \"all\", \"cluster\": [{\"kind\": "
			 "\"gtx1080ti\", \"count\": 8, \"memory_mb\": %d}], \"duration_s\": 3, \"warmup_s\": 1}\n",
			 k ? 11264 : 60000);
		write_text("plan_mem.json", conf);
		RUN(&r, "plan", "@plan_mem.json", "--target-rate", "300", "--json", "@out_plan_mem.json", "--quiet");
		expect_status(&r, 0);
		run_free(&r);
		cJSON *mdoc = load_json(tmp_path("out_plan_mem.json"));
		assert_true(num(get(mdoc, "memory"), "gpu_memory_mb") == (k ? 11264 : 60000));
		assert_int_equal((int)num(get(mdoc, "memory"), "subclusters"), k ? 2 : 1);
		double need = num(get(mdoc, "memory"), "one_pool_need_mb"); /* more than 11 GB, less than 60 */
		assert_true(need > 11264 && need < 60000);
		/* memory per GPU: each part's models fit its GPUs; one pool holds them all */
		double per_gpu = num(get(mdoc, "memory"), "per_gpu_need_mb");
		if (k) {
			const cJSON *parts = get(get(mdoc, "memory"), "parts");
			assert_int_equal(cJSON_GetArraySize(parts), 2);
			double most = 0, nm = 0;
			for (int p = 0; p < 2; p++) {
				double pn = num(cJSON_GetArrayItem(parts, p), "need_mb");
				assert_true(pn > 0 && pn <= 11264);
				most = pn > most ? pn : most;
				nm += num(cJSON_GetArrayItem(parts, p), "models");
			}
			assert_true(per_gpu == most);
			assert_true(nm == 35);
		} else {
			assert_true(per_gpu == need);
		}
		const cJSON *pol = cJSON_GetArrayItem(get(mdoc, "policies"), 0);
		assert_true(cJSON_IsTrue(get(pol, "meets_criterion")));
		/* sub-clusters are compared with one pool of the same GPUs (memory set aside) */
		const cJSON *pool = cJSON_GetObjectItemCaseSensitive(pol, "one_pool_at_answer");
		if (k) {
			assert_non_null(pool);
			assert_int_equal((int)num(pool, "gpus"), (int)num(pol, "gpus"));
			assert_true(cJSON_IsTrue(get(pool, "memory_ignored")));
			assert_true(num(pool, "goodput_rps") >= 0);
		} else {
			assert_null(pool);
		}
		print_message("plan at memory_mb %d: %d GPUs, %d sub-clusters\n", k ? 11264 : 60000, (int)num(pol, "gpus"),
			      (int)num(get(mdoc, "memory"), "subclusters"));
		cJSON_Delete(mdoc);
	}
	RUN(&r, "plan", "--profile", "1.053,5.072", "--slo", "25", "--duration", "10", "--warmup", "2",
	    "--target-rate", "15000", "--policies", "symphony;eager", "--json", "@out_plan.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	cJSON *doc = load_json(tmp_path("out_plan.json"));
	check_provenance(doc, true);
	assert_string_equal(get(doc, "command")->valuestring, "plan");
	assert_true(cJSON_IsObject(get(doc, "config")));
	assert_true(num(doc, "target_rate") == 15000);
	const cJSON *an = get(doc, "analytic");
	assert_int_equal((int)num(an, "staggered_gpus"), 21);
	assert_true(num(an, "nexus_gpus") >= 21);
	const cJSON *pols = get(doc, "policies");
	assert_int_equal(cJSON_GetArraySize(pols), 2);
	int sym = (int)num(cJSON_GetArrayItem(pols, 0), "gpus");
	int eag = (int)num(cJSON_GetArrayItem(pols, 1), "gpus");
	assert_string_equal(get(cJSON_GetArrayItem(pols, 1), "policy")->valuestring, "eager");
	assert_true(sym >= 20 && sym <= 24);
	assert_true(eag > sym);
	assert_true(num(cJSON_GetArrayItem(pols, 0), "bad_rate") <= 0.01);
	/* the headroom: the goodput on the answer's GPUs, about the target or above (the search's
	 * resolution and another criterion run may put it a step under), below what one GPU more serves */
	for (int k = 0; k < 2; k++) {
		const cJSON *at = get(cJSON_GetArrayItem(pols, k), "at_answer");
		assert_int_equal((int)num(at, "gpus"), k ? eag : sym);
		double h = num(at, "headroom");
		print_message("plan headroom (%s): %.4f\n", k ? "eager" : "symphony", h);
		assert_true(h > -0.02 && h < 1.0 / (k ? eag : sym) + 0.05);
		assert_true(fabs(num(at, "goodput_rps") / 15000 - 1 - h) < 1e-9);
	}
	/* the margin: one GPU fewer fails, naming the model that fails first */
	for (int k = 0; k < 2; k++) {
		const cJSON *fewer = get(cJSON_GetArrayItem(pols, k), "one_gpu_fewer");
		assert_int_equal((int)num(fewer, "gpus"), k ? eag - 1 : sym - 1);
		assert_string_equal(get(fewer, "fails_first")->valuestring, "model");
		assert_true(num(fewer, "fails_first_bad_rate") > 0.01);
	}
	cJSON_Delete(doc);
	/* above --max-gpus: said plainly, with the bad rate measured at --max-gpus (not 0) */
	RUN(&r, "plan", "--profile", "1.053,5.072", "--slo", "25", "--duration", "3", "--warmup", "1",
	    "--target-rate", "15000", "--max-gpus", "4", "--json", "@out_pmax.json");
	expect_status(&r, 0);
	expect_contains(r.out, "none <= 4", "stdout", &r);
	expect_contains(r.err, "no count up to --max-gpus 4 serves", "stderr", &r);
	run_free(&r);
	doc = load_json(tmp_path("out_pmax.json"));
	const cJSON *p0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "policies"), 0);
	assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(p0, "gpus")));
	assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p0, "meets_criterion")));
	assert_int_equal((int)num(get(p0, "metrics_from"), "gpus"), 4);
	/* 4 GPUs serve ~4 * 16 / 21.9 ms = 2900 of 15000 req/s: most requests are bad */
	assert_true(num(p0, "bad_rate") > 0.5);
	cJSON_Delete(doc);
	/* bad input: exit 2, no output */
	const char *const bad[][12] = {
		{ "plan", "--profile", "1,5", "--slo", "20", "--json", "@out_bad.json", NULL },
		{ "plan", "--profile", "1,5", "--slo", "20", "--target-rate", "0", "--json", "@out_bad.json", NULL },
		{ "plan", "--profile", "1,5", "--slo", "20", "--target-rate", "x", "--json", "@out_bad.json", NULL },
		{ "plan", "--profile", "1,5", "--slo", "20", "--target-rate", "10", "--max-gpus", "0", NULL },
		{ "plan", "--profile", "1,5", "--slo", "20", "--target-rate", "10", "--policies", "lifo", NULL },
		{ "plan", "--profile", "1,5", "--slo", "20", "--segments", "10:0", NULL },
		{ "plan", "--profile", "1,5", "--slo", "20", "--target-rate", "10", "--trace", "@t.csv", NULL },
		{ "plan", "--profile", "1,5", "--slo", "20", "--target-rate", "1000", "--jobs", "x", NULL },
		{ "plan", "--zoo", "a100", "--models", "ResNet50", "--target-rate", "10", "--cluster",
		  "a100:1,gtx1080ti:1", NULL },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run_argv(&r, bad[i]);
		expect_status(&r, 2);
		expect_contains(r.err, "plan", "stderr", &r);
		run_free(&r);
	}
	assert_int_equal(access(tmp_path("out_bad.json"), F_OK), -1);
	/* a search whose runs would not fit in memory: refused before it starts */
	RUN(&r, "plan", "--profile", "1,5", "--slo", "20", "--duration", "1e7", "--interval", "0.001", "--target-rate", "100",
	    "--json", "@out_bad.json");
	expect_status(&r, 2);
	expect_contains(r.err, "symphony plan: the run would need about", "stderr", &r);
	expect_contains(r.err, "interval_s", "stderr", &r);
	run_free(&r);
	assert_int_equal(access(tmp_path("out_bad.json"), F_OK), -1);
	RUN(&r, "help", "plan");
	expect_status(&r, 0);
	expect_contains(r.out, "--target-rate", "help plan", &r);
	run_free(&r);
	remove_outputs();
}

/* ---- sweep, merge and loadcurve ------------------------------------------- */

/* The lines of a results file, sorted by their point index. */
static int sorted_lines(const char *path, char *lines[], int max)
{
	char *text = slurp(path);
	assert_non_null(text);
	int n = 0;
	for (char *p = text, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = 0;
		assert_true(n < max);
		cJSON *o = cJSON_Parse(p);
		assert_non_null(o);
		int pt = (int)num(o, "point");
		cJSON_Delete(o);
		assert_true(pt >= 0 && pt < max);
		lines[pt] = strdup(p);
		n++;
	}
	free(text);
	return n;
}

#define GRID "{\"name\": \"cli\", \"compute\": \"goodput\", \"base\": {\"models\": [{\"name\": \"m\", " \
	     "\"alpha_ms\": 1.053, \"beta_ms\": 5.072}], \"slo_ms\": 25, \"gpus\": 4, \"duration_s\": 3, " \
	     "\"warmup_s\": 1, \"tolerance\": 0.02}, \"axes\": {\"arrival\": [\"poisson\", \"gamma:0.5\"], " \
	     "\"policy\": [\"symphony\", \"eager\", \"timeout:30%\"]}}"

static void test_sweep(void **state)
{
	(void)state;
	struct run r;
	write_text("grid.json", GRID);
	/* the manifest, whole and sharded */
	RUN(&r, "sweep", "@grid.json", "--list");
	expect_status(&r, 0);
	expect_contains(r.out, "0\t{\"arrival\":\"poisson\",\"policy\":\"symphony\"}\n", "list", &r);
	expect_contains(r.out, "5\t{\"arrival\":\"gamma:0.5\",\"policy\":\"timeout:30%\"}\n", "list", &r);
	run_free(&r);
	RUN(&r, "sweep", "@grid.json", "--list", "--shard", "1/2");
	expect_status(&r, 0);
	assert_string_equal(r.out, "1\t{\"arrival\":\"poisson\",\"policy\":\"eager\"}\n"
				   "3\t{\"arrival\":\"gamma:0.5\",\"policy\":\"symphony\"}\n"
				   "5\t{\"arrival\":\"gamma:0.5\",\"policy\":\"timeout:30%\"}\n");
	run_free(&r);
	/* Slurm's array selects the shard when --shard is not given */
	setenv("SLURM_ARRAY_TASK_ID", "2", 1);
	setenv("SLURM_ARRAY_TASK_COUNT", "3", 1);
	RUN(&r, "sweep", "@grid.json", "--list");
	unsetenv("SLURM_ARRAY_TASK_ID");
	unsetenv("SLURM_ARRAY_TASK_COUNT");
	expect_status(&r, 0);
	assert_string_equal(r.out, "2\t{\"arrival\":\"poisson\",\"policy\":\"timeout:30%\"}\n"
				   "5\t{\"arrival\":\"gamma:0.5\",\"policy\":\"timeout:30%\"}\n");
	run_free(&r);

	/* the whole sweep, on 2 threads */
	RUN(&r, "sweep", "@grid.json", "--out", "@out_full", "-j", "2");
	expect_status(&r, 0);
	expect_contains(r.err, "6/6 points", "progress", &r);
	run_free(&r);
	char *full[6] = { 0 };
	assert_int_equal(sorted_lines(tmp_path("out_full/results.jsonl"), full, 6), 6);
	/* an existing output is refused without --resume */
	RUN(&r, "sweep", "@grid.json", "--out", "@out_full");
	expect_status(&r, 2);
	expect_contains(r.err, "--resume", "stderr", &r);
	run_free(&r);

	/* shards on separate outputs, merged: the same lines as the whole sweep */
	for (int i = 0; i < 3; i++) {
		char shard[8], out[32];
		snprintf(shard, sizeof(shard), "%d/3", i);
		snprintf(out, sizeof(out), "@out_s%d", i);
		RUN(&r, "sweep", "@grid.json", "--shard", shard, "--out", out, "--quiet");
		expect_status(&r, 0);
		run_free(&r);
	}
	RUN(&r, "merge", "@out_s0", "@out_s1", "@out_s2", "--out", "@out_merged");
	expect_status(&r, 0);
	expect_contains(r.err, "merged 6 points", "stderr", &r);
	run_free(&r);
	char *merged[6] = { 0 };
	assert_int_equal(sorted_lines(tmp_path("out_merged/results.jsonl"), merged, 6), 6);
	for (int i = 0; i < 6; i++)
		assert_string_equal(merged[i], full[i]);
	/* to stdout; a missing shard is reported */
	RUN(&r, "merge", "@out_s0", "@out_s2");
	expect_status(&r, 0);
	expect_contains(r.err, "merged 4 of the grid's 6 points", "stderr", &r);
	expect_contains(r.out, full[0], "stdout", &r);
	run_free(&r);
	/* refusals: a shard twice (duplicate points) */
	RUN(&r, "merge", "@out_s0", "@out_full", "--out", "@out_bad");
	expect_status(&r, 2);
	expect_contains(r.err, "duplicate point 0", "stderr", &r);
	run_free(&r);
	assert_int_equal(access(tmp_path("out_bad/results.jsonl"), F_OK), -1);
	/* a point that would not fit in memory: refused before any runs */
	write_text("grid_big.json", "{\"name\": \"big\", \"compute\": \"sim\", \"base\": {\"models\": [{\"name\": \"m\", "
				    "\"alpha_ms\": 1, \"beta_ms\": 5}], \"slo_ms\": 25, \"rate\": 100, \"interval_s\": 0.001}, "
				    "\"axes\": {\"duration_s\": [10, 1e7]}}");
	RUN(&r, "sweep", "@grid_big.json", "--out", "@out_big");
	expect_status(&r, 2);
	expect_contains(r.err, "point 1: the run would need about", "stderr", &r);
	run_free(&r);
	assert_int_equal(access(tmp_path("out_big/results.jsonl"), F_OK), -1);

	/* resume after an interruption that cut a line in half */
	{
		char *text = slurp(tmp_path("out_s1/results.jsonl"));
		char *nl = strchr(text, '\n');
		assert_non_null(nl);
		size_t keep = (size_t)(nl - text) + 1 + 40; /* line 1 and 40 bytes of line 2 */
		FILE *f = fopen(tmp_path("out_s1/results.jsonl"), "w");
		assert_non_null(f);
		fwrite(text, 1, keep, f);
		fclose(f);
		free(text);
	}
	RUN(&r, "merge", "@out_s1");
	expect_status(&r, 2);
	expect_contains(r.err, "incomplete", "stderr", &r);
	run_free(&r);
	RUN(&r, "sweep", "@grid.json", "--shard", "1/3", "--out", "@out_s1", "--resume");
	expect_status(&r, 0);
	expect_contains(r.err, "incomplete last line", "stderr", &r);
	expect_contains(r.err, "1 already done; running 1", "stderr", &r);
	run_free(&r);
	RUN(&r, "merge", "@out_s0", "@out_s1", "@out_s2", "--out", "@out_merged2");
	expect_status(&r, 0);
	run_free(&r);
	char *again[6] = { 0 };
	assert_int_equal(sorted_lines(tmp_path("out_merged2/results.jsonl"), again, 6), 6);
	for (int i = 0; i < 6; i++) {
		assert_string_equal(again[i], full[i]);
		free(again[i]);
		free(merged[i]);
	}
	/* resuming a complete sweep runs nothing */
	RUN(&r, "sweep", "@grid.json", "--out", "@out_full", "--resume");
	expect_status(&r, 0);
	expect_contains(r.err, "6 already done; running 0", "stderr", &r);
	run_free(&r);
	/* resuming into another grid's results is refused */
	write_text("grid2.json", "{\"name\": \"other\", \"base\": {\"profile\": 1}}");
	write_text("grid3.json", "{\"name\": \"cli\", \"base\": {\"models\": [{\"name\": \"m\", \"alpha_ms\": 1.053, "
				 "\"beta_ms\": 5.072}], \"slo_ms\": 25, \"duration_s\": 3, \"warmup_s\": 1}, "
				 "\"axes\": {\"gpus\": [4, 5, 6, 7, 8, 9]}}");
	RUN(&r, "sweep", "@grid3.json", "--out", "@out_full", "--resume");
	expect_status(&r, 2);
	expect_contains(r.err, "another version of grid 'cli'", "stderr", &r);
	expect_contains(r.err, "its base, compute or axes changed since", "stderr", &r);
	run_free(&r);

	/* --seeds 2 for every point: another fingerprint than the grid's own, so resuming into the
	 * one-seed results is refused; its lines carry the mean, the interval and the seeds */
	RUN(&r, "sweep", "@grid.json", "--out", "@out_full", "--resume", "--seeds", "2");
	expect_status(&r, 2);
	expect_contains(r.err, "another version of grid 'cli'", "stderr", &r);
	expect_contains(r.err, "its lines ran without --seeds, this run has --seeds 2: drop it", "stderr", &r);
	run_free(&r);
	RUN(&r, "sweep", "@grid.json", "--out", "@out_seeds", "--seeds", "2", "--criterion", "aggregate", "-j", "2",
	    "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	/* resumed without them: the refusal says what to add */
	RUN(&r, "sweep", "@grid.json", "--out", "@out_seeds", "--resume");
	expect_status(&r, 2);
	expect_contains(r.err, "its lines ran with --seeds 2, this run has none: add --seeds 2", "stderr", &r);
	expect_contains(r.err, "its lines ran with --criterion aggregate, this run has none: add --criterion aggregate",
			"stderr", &r);
	run_free(&r);
	{
		char *two[6] = { 0 };
		assert_int_equal(sorted_lines(tmp_path("out_seeds/results.jsonl"), two, 6), 6);
		for (int i = 0; i < 6; i++) {
			cJSON *a = cJSON_Parse(full[i]), *b = cJSON_Parse(two[i]);
			assert_int_equal((int)num(b, "replications"), 2);
			assert_string_equal(get(get(b, "config"), "criterion")->valuestring, "aggregate");
			const cJSON *by = get(b, "goodput_by_seed");
			assert_int_equal(cJSON_GetArraySize(by), 2);
			assert_int_equal(cJSON_GetArraySize(get(b, "goodput_ci95")), 2);
			assert_true(fabs(num(b, "goodput_rps") -
					 (cJSON_GetArrayItem(by, 0)->valuedouble + cJSON_GetArrayItem(by, 1)->valuedouble) / 2) < 1e-9);
			/* one model: the criteria agree, so seed 1's goodput is the one-seed point's */
			assert_true(cJSON_GetArrayItem(by, 0)->valuedouble == num(a, "goodput_rps"));
			assert_true(cJSON_IsNull(get(a, "goodput_ci95")));
			assert_string_equal(get(a, "worst_model")->valuestring, "m");
			assert_true(cJSON_IsNumber(get(a, "worst_model_bad_rate")));
			cJSON_Delete(a);
			cJSON_Delete(b);
			free(two[i]);
			free(full[i]);
		}
	}

	/* bad grids and options: exit 2 with a message, nothing written */
	write_text("bad_value.json", "{\"base\": {\"gpus\": 2}, \"axes\": {\"slo_ms\": [25, -3]}}");
	write_text("bad_reps_grid.json", "{\"base\": {\"gpus\": 2}, \"axes\": {\"replications\": [2, -1]}}");
	const char *const bad[][8] = {
		{ "sweep", NULL },
		{ "sweep", "@nonexistent.json", NULL },
		{ "sweep", "@grid2.json", "--out", "@out_b1", NULL },
		{ "sweep", "@bad_value.json", "--out", "@out_b2", NULL },
		{ "sweep", "@grid.json", "--shard", "3/3", "--out", "@out_b3", NULL },
		{ "sweep", "@grid.json", "-j", "0", "--out", "@out_b4", NULL },
		{ "sweep", "@grid.json", "--frobnicate", NULL },
		{ "merge", NULL },
		{ "sweep", "@grid.json", "--seeds", "0", "--out", "@out_b5", NULL },
		{ "sweep", "@grid.json", "--seeds", "x", "--out", "@out_b6", NULL },
		{ "sweep", "@grid.json", "--criterion", "foo", "--out", "@out_b7", NULL },
		{ "sweep", "@bad_reps_grid.json", "--out", "@out_b8", NULL },
	};
	const char *msgs[] = { "give GRID.json", "no such file", "unknown key 'profile'", "point 1", "--shard",
			       "-j", "unknown option", "give DIR|FILE...", "--seeds", "--seeds",
			       "--criterion", "replications" };
	/* a value that is another option is a missing value */
	RUN(&r, "sweep", "@grid.json", "--out", "--resume");
	expect_status(&r, 2);
	expect_contains(r.err, "--out needs a value", "stderr", &r);
	run_free(&r);
	RUN(&r, "merge", "@out_s0", "--out");
	expect_status(&r, 2);
	expect_contains(r.err, "--out needs a value", "stderr", &r);
	run_free(&r);
	/* one writer per results file: a sweep into a file another holds is refused */
	{
		int fd = open(tmp_path("out_full/results.jsonl"), O_RDWR);
		assert_true(fd >= 0);
		assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
		RUN(&r, "sweep", "@grid.json", "--out", "@out_full", "--resume");
		expect_status(&r, 2);
		expect_contains(r.err, "being written by another sweep", "stderr", &r);
		run_free(&r);
		close(fd);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run_argv(&r, bad[i]);
		expect_status(&r, 2);
		expect_contains(r.err, msgs[i], "stderr", &r);
		run_free(&r);
	}
	for (int i = 1; i <= 8; i++) {
		char p[32];
		snprintf(p, sizeof(p), "out_b%d/results.jsonl", i);
		assert_int_equal(access(tmp_path(p), F_OK), -1);
	}
	RUN(&r, "help", "sweep");
	expect_status(&r, 0);
	expect_contains(r.out, "--resume", "help sweep", &r);
	expect_contains(r.out, "SLURM_ARRAY_TASK_ID", "help sweep", &r);
	run_free(&r);
	RUN(&r, "help", "merge");
	expect_status(&r, 0);
	run_free(&r);
}

static void test_loadcurve(void **state)
{
	(void)state;
	struct run r;
	RUN(&r, "loadcurve", "--profile", "1.053,5.072", "--slo", "25", "--gpus", "8", "--duration", "5", "--warmup", "1",
	    "--policies", "symphony;eager", "--loads", "0.5,1,2", "--reference", "5000", "-j", "2", "--json",
	    "@out_lc.json", "--csv", "@out_lc.csv");
	expect_status(&r, 0);
	expect_contains(r.out, "load 1 = 5000.0 req/s", "stdout", &r);
	run_free(&r);
	cJSON *doc = load_json(tmp_path("out_lc.json"));
	check_provenance(doc, true);
	assert_string_equal(get(doc, "command")->valuestring, "loadcurve");
	assert_true(num(doc, "reference_rps") == 5000);
	assert_true(cJSON_IsObject(get(doc, "config")));
	const cJSON *pts = get(doc, "points");
	assert_int_equal(cJSON_GetArraySize(pts), 6);
	/* per policy: offered follows the load; at 2x the goodput is flat near capacity and the bad rate high;
	 * GPU busy grows with load */
	for (int p = 0; p < 2; p++) {
		const cJSON *lo = cJSON_GetArrayItem(pts, 3 * p), *hi = cJSON_GetArrayItem(pts, 3 * p + 2);
		assert_near(num(lo, "offered_rps"), 2500, 150, "offered at 0.5");
		assert_near(num(hi, "offered_rps"), 10000, 500, "offered at 2");
		assert_true(num(lo, "bad_rate") < 0.01);
		assert_true(num(hi, "bad_rate") > 0.3);
		assert_true(num(hi, "goodput_rps") > 5000 && num(hi, "goodput_rps") < 5900); /* staggered bound 5839 */
		assert_true(num(hi, "gpu_busy_fraction") > 0.95);
	}
	/* symphony at half load keeps GPUs idle; eager keeps them busy with small batches */
	assert_true(num(cJSON_GetArrayItem(pts, 0), "gpu_busy_fraction") < 0.6);
	assert_true(num(cJSON_GetArrayItem(pts, 3), "gpu_busy_fraction") > 0.9);
	cJSON_Delete(doc);
	char *csv = slurp(tmp_path("out_lc.csv"));
	assert_non_null(csv);
	/* one header line first, no comments; what the comment said is in the sidecar */
	assert_int_equal(strncmp(csv, "policy,load,offered_rps,goodput_rps,bad_rate,gpu_busy_fraction", 62), 0);
	assert_null(strchr(csv, '#'));
	assert_non_null(strstr(csv, "\"eager\",2,"));
	free(csv);
	check_sidecar(tmp_path("out_lc.csv"), "loadcurve");
	{
		cJSON *meta = load_json(tmp_path("out_lc.csv.meta.json"));
		assert_true(num(meta, "reference_rps") > 0);
		assert_string_equal(get(meta, "criterion")->valuestring, "per-model");
		assert_int_equal((int)num(meta, "replications"), 1);
		cJSON_Delete(meta);
	}
	/* without --reference: the first policy's goodput is load 1 */
	RUN(&r, "loadcurve", "--profile", "1.053,5.072", "--slo", "25", "--gpus", "8", "--duration", "5", "--warmup", "1",
	    "--loads", "1", "--json", "-", "--quiet");
	expect_status(&r, 0);
	cJSON *d2 = cJSON_Parse(r.out);
	assert_non_null(d2);
	assert_true(num(d2, "reference_rps") > 5000 && num(d2, "reference_rps") < 5839);
	const cJSON *p0 = cJSON_GetArrayItem(get(d2, "points"), 0);
	assert_true(num(p0, "bad_rate") <= 0.011);
	cJSON_Delete(d2);
	run_free(&r);
	const char *const bad[][10] = {
		{ "loadcurve", "--profile", "1,5", "--slo", "20", "--loads", "0,1", NULL },
		{ "loadcurve", "--profile", "1,5", "--slo", "20", "--loads", "x", NULL },
		{ "loadcurve", "--profile", "1,5", "--slo", "20", "--reference", "-5", NULL },
		{ "loadcurve", "--profile", "1,5", "--slo", "20", "--policies", "lifo", NULL },
		{ "loadcurve", "--profile", "1,5", "--slo", "20", "--jobs", "0", NULL },
		{ "loadcurve", "--profile", "1,5", "--slo", "20", "--segments", "10:0", NULL },
		{ "loadcurve", "--profile", "1,5", "--slo", "20", "--loads", "@loads", NULL },
	};
	{
		/* 257 loads: refused (the list holds 256), not a crash */
		char many[257 * 4 + 1] = "";
		for (int i = 0; i < 257; i++)
			strcat(many, i ? ",0.5" : "0.5");
		FILE *f = fopen(tmp_path("loads"), "w");
		assert_non_null(f);
		fclose(f);
		RUN(&r, "loadcurve", "--profile", "1,5", "--slo", "20", "--loads", many);
		expect_status(&r, 2);
		expect_contains(r.err, "at most 256 loads", "stderr", &r);
		run_free(&r);
		/* points that would not fit in memory: refused before they run */
		RUN(&r, "loadcurve", "--profile", "1,5", "--slo", "20", "--rate", "100", "--duration", "1e7", "--interval",
		    "0.001", "--reference", "100", "--loads", "1", "--csv", "@out_bad.csv");
		expect_status(&r, 2);
		expect_contains(r.err, "symphony loadcurve: the run would need about", "stderr", &r);
		run_free(&r);
		assert_int_equal(access(tmp_path("out_bad.csv"), F_OK), -1);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run_argv(&r, bad[i]);
		expect_status(&r, 2);
		expect_contains(r.err, "loadcurve", "stderr", &r);
		run_free(&r);
	}
	remove_outputs();
}

/* ---- 5. the goodput acceptance floor ------------------------------------ */

static void test_goodput_floor(void **state)
{
	(void)state;
	struct run r;
	RUN(&r, "goodput", "--profile", "1.053,5.072", "--slo", "25", "--gpus", "8", "--arrival", "poisson", "--policy",
	    "symphony", "--json", "@out_goodput.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	check_result(tmp_path("out_goodput.json"), true);
	cJSON *doc = load_json(tmp_path("out_goodput.json"));
	double g = num(doc, "goodput_rps");
	/* The final run is at the goodput and meets the bad-rate bound. */
	assert_true(num(doc, "bad_rate") <= 0.01 + 1e-12);
	if (!(g >= 5250)) {
		print_error("goodput %.1f req/s is below the acceptance floor of 5250 req/s\n", g);
		cJSON_Delete(doc);
		remove_outputs();
		fail();
	}
	cJSON_Delete(doc);
	remove_outputs();
}


/* ---- 5c. conventions: no goodput said plainly, info as JSON, stdin ------- */

/* An impossible set-up (GPU time varies +-50% around l(1), the SLO is 1.7%
 * above it): no rate passes, and the search stops where too few requests
 * would be measured instead of passing on a handful of them. */
static void test_no_goodput(void **state)
{
	(void)state;
	struct run r;
	RUN(&r, "goodput", "--profile", "1,5", "--slo", "6.1", "--jitter", "0.5", "--gpus", "2", "--duration", "4",
	    "--warmup", "1", "--json", "@out_ng.json", "--quiet");
	expect_status(&r, 0);
	expect_contains(r.err, "no rate meets the per-model criterion", "stderr", &r);
	expect_contains(r.err, "too few to judge", "stderr", &r);
	run_free(&r);
	cJSON *doc = load_json(tmp_path("out_ng.json"));
	assert_true(num(doc, "goodput_rps") == 0);
	assert_true(cJSON_IsTrue(get(doc, "search_floor_reached")));
	assert_false(cJSON_IsTrue(get(doc, "meets_criterion")));
	/* the floor: 100 measured requests (1/max_bad_rate) in the 3 s measured */
	assert_near(num(doc, "search_floor_rps"), 100.0 / 3, 1e-6, "search_floor_rps");
	/* what was measured is reported: the run at the lowest rate tried, most of it late */
	assert_true(num(doc, "bad_rate") > 0.2);
	cJSON_Delete(doc);
	remove_outputs();
}

static void test_info_json(void **state)
{
	(void)state;
	struct run r;
	/* a custom profile's declared max_batch wins over the SLO's limit (24, not 19) */
	write_text("zoo24.json", "{\"gpu\": \"x\", \"models\": [{\"name\": \"m24\", \"alpha_ms\": 1, "
				 "\"beta_ms\": 5, \"max_batch\": 24, \"slo_ms\": 25}, {\"name\": \"free\", "
				 "\"alpha_ms\": 1, \"beta_ms\": 5, \"slo_ms\": 25}]}");
	RUN(&r, "models", "--zoo", "@zoo24.json");
	expect_status(&r, 0);
	expect_contains(r.out, "24 (declared)", "stdout", &r);
	expect_contains(r.out, "       20\n", "stdout", &r); /* free: (25 - 5) / 1 */
	run_free(&r);
	RUN(&r, "models", "--zoo", "@zoo24.json", "--json");
	expect_status(&r, 0);
	cJSON *doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	const cJSON *m0 = cJSON_GetArrayItem(get(doc, "models"), 0);
	assert_int_equal((int)num(m0, "largest_batch"), 24);
	assert_string_equal(get(m0, "largest_batch_from")->valuestring, "profile");
	cJSON_Delete(doc);
	run_free(&r);
	RUN(&r, "policies", "--json");
	expect_status(&r, 0);
	doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	assert_int_equal(cJSON_GetArraySize(get(doc, "policies")), 10);
	assert_string_equal(get(cJSON_GetArrayItem(get(doc, "policies"), 0), "name")->valuestring, "symphony");
	cJSON_Delete(doc);
	run_free(&r);
	/* unknown input to the information commands is refused too */
	RUN(&r, "policies", "--bogus");
	expect_status(&r, 2);
	expect_contains(r.err, "unknown option '--bogus'", "stderr", &r);
	run_free(&r);
	RUN(&r, "models", "extra");
	expect_status(&r, 2);
	expect_contains(r.err, "unexpected argument 'extra'", "stderr", &r);
	run_free(&r);
	RUN(&r, "help", "--markdown");
	expect_status(&r, 0);
	expect_contains(r.out, "## symphony sim", "stdout", &r);
	expect_contains(r.out, "## Configuration keys", "stdout", &r);
	run_free(&r);
}

/* symphony fabbench, as docs/runtime.md runs it (fewer iterations, a smaller region):
 * both ways, the JSON has what the docs quote; with auth the read is of a sealed input
 * (opened, its bytes checked) and the seal's costs are there, without they are not. */
static void test_fabbench(void **state)
{
	(void)state;
	struct run h;
	RUN(&h, "help", "fabbench");
	bool built = h.status == 0; /* a build without the runtime has no fabbench */
	run_free(&h);
	if (!built)
		skip();
	const char *modes[] = { "on", "off" };
	for (int i = 0; i < 2; i++) {
		struct run r;
		RUN(&r, "fabbench", "--auth", modes[i], "--iters", "200", "--size", "8192", "--json", "-");
		expect_status(&r, 0);
		cJSON *doc = cJSON_Parse(r.out);
		assert_non_null(doc);
		assert_true(cJSON_IsTrue(get(doc, "authenticated")) == (i == 0));
		assert_true(num(get(doc, "rtt_us"), "p50") > 0);
		assert_true(num(get(doc, "read150k_us"), "p50") > 0);
		assert_true(num(doc, "stream_messages_per_s") > 0);
		assert_int_equal((int)num(doc, "stream_messages"), 2000);
		const cJSON *seal = cJSON_GetObjectItemCaseSensitive(doc, "input_seal_p50_us");
		if (i == 0)
			assert_true(num(seal, "seal_encrypted") > 0 && num(seal, "open_authenticated") > 0);
		else
			assert_null(seal);
		cJSON_Delete(doc);
		run_free(&r);
	}
	struct run r;
	RUN(&r, "fabbench", "--auth", "maybe");
	expect_status(&r, 2);
	run_free(&r);
}

/* A configuration on standard input ("-"), as a file would be. */
static void test_config_stdin(void **state)
{
	(void)state;
	write_text("stdin.json", "{\"models\": [{\"name\": \"m\", \"alpha_ms\": 1.053, \"beta_ms\": 5.072}], "
				 "\"slo_ms\": 25, \"gpus\": 8, \"rate\": 3000, \"duration_s\": 3, \"warmup_s\": 1, "
				 "\"seed\": 7}");
	struct run r;
	child_stdin = "stdin.json";
	RUN(&r, "sim", "-", "--json", "@out_stdin.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	RUN(&r, "sim", "@stdin.json", "--json", "@out_file.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	cJSON *a = load_json(tmp_path("out_stdin.json")), *b = load_json(tmp_path("out_file.json"));
	assert_int_equal((int)num(a, "seed"), 7);
	assert_true(num(a, "offered") == num(b, "offered"));
	assert_true(num(a, "served") == num(b, "served"));
	cJSON_Delete(a);
	cJSON_Delete(b);
	/* an empty standard input is a malformed configuration, named */
	RUN(&r, "sim", "-", "--quiet");
	expect_status(&r, 2);
	expect_contains(r.err, "standard input", "stderr", &r);
	run_free(&r);
	remove_outputs();
}

/* ---- 5b. the per-model criterion and replications ------------------------ */

#define FOUR "--zoo", "a100", "--models", "ResNet50,DenseNet121,EfficientNetB0,VGG16", "--gpus", "8", \
	     "--duration", "10", "--warmup", "1", "--policy", "symphony:lookahead=off"

/* Every model's bad rate within 1% at the goodput, the worst model named, and
 * the result's config reruns the reported run; the aggregate rule gives a
 * higher rate at which a model is above 1% (the paper's rule: look-ahead
 * deferral gives these four models the same goodput on both criteria,
 * test_sim's test_goodput_per_model). */
static void test_per_model_criterion(void **state)
{
	(void)state;
	struct run r;
	RUN(&r, "goodput", FOUR, "--json", "@out_pm.json");
	expect_status(&r, 0);
	expect_contains(r.out, "worst model", "stdout", &r);
	expect_contains(r.out, "per-model criterion", "stdout", &r);
	run_free(&r);
	RUN(&r, "sim", "@out_pm.json", "--json", "@out_pm_rerun.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	compare_rerun("out_pm.json", "out_pm_rerun.json");
	cJSON *pm = load_json(tmp_path("out_pm.json")), *re = load_json(tmp_path("out_pm_rerun.json"));
	double g = num(pm, "goodput_rps");
	assert_true(num(get(pm, "config"), "rate") == g);
	assert_true(fabs(num(re, "offered_rps") - g) < 0.03 * g);
	assert_true(get(re, "meets_criterion")->type == cJSON_True);
	assert_string_equal(get(re, "criterion")->valuestring, "per-model");
	const cJSON *m;
	double worst = 0;
	cJSON_ArrayForEach(m, get(re, "models"))
	{
		assert_true(num(m, "bad_rate") <= 0.01);
		worst = num(m, "bad_rate") > worst ? num(m, "bad_rate") : worst;
	}
	assert_true(cJSON_IsString(get(re, "worst_model")));
	assert_true(num(re, "worst_model_bad_rate") == worst);
	assert_int_equal((int)num(re, "failing_models"), 0);
	assert_int_equal((int)num(re, "few_request_models"), 0);
	cJSON_Delete(re);

	RUN(&r, "goodput", FOUR, "--criterion", "aggregate", "--json", "@out_ag.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	cJSON *ag = load_json(tmp_path("out_ag.json"));
	assert_string_equal(get(get(ag, "config"), "criterion")->valuestring, "aggregate");
	assert_true(num(ag, "goodput_rps") > g);
	assert_true(num(ag, "bad_rate") <= 0.01);
	assert_true(get(ag, "meets_criterion")->type == cJSON_True);
	assert_true(num(ag, "failing_models") >= 1);
	assert_true(num(ag, "worst_model_bad_rate") > 0.01);
	/* the same result judged per model: it fails */
	RUN(&r, "sim", "@out_ag.json", "--criterion", "per-model", "--json", "@out_ag_pm.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	cJSON *agpm = load_json(tmp_path("out_ag_pm.json"));
	assert_true(get(agpm, "meets_criterion")->type == cJSON_False);
	assert_string_equal(get(agpm, "worst_model")->valuestring, get(ag, "worst_model")->valuestring);
	cJSON_Delete(agpm);
	cJSON_Delete(ag);
	cJSON_Delete(pm);

	/* too few measured requests for a model: a warning and a count */
	RUN(&r, "sim", "--zoo", "a100", "--models", "ResNet50,VGG16", "--popularity", "zipf:4", "--rate", "300",
	    "--duration", "3", "--warmup", "1", "--json", "@out_few.json", "--quiet");
	expect_status(&r, 0);
	expect_contains(r.err, "warning", "stderr", &r);
	expect_contains(r.err, "fewer than 100 measured requests (VGG16", "stderr", &r);
	run_free(&r);
	cJSON *few = load_json(tmp_path("out_few.json"));
	assert_int_equal((int)num(few, "few_request_models"), 1);
	cJSON_Delete(few);
	remove_outputs();
}

/* --seeds N: N searches on seeds seed..seed+N-1; the mean, its interval and
 * the per-seed values; deterministic; the detailed run is the first seed's. */
static void test_seeds(void **state)
{
	(void)state;
	struct run r;
	for (int i = 0; i < 2; i++) {
		RUN(&r, "goodput", "--profile", "1.053,5.072", "--slo", "25", "--gpus", "8", "--duration", "5", "--warmup",
		    "1", "--seed", "3", "--seeds", "4", "--json", i ? "@out_s4b.json" : "@out_s4a.json");
		expect_status(&r, 0);
		if (!i)
			expect_contains(r.out, ", 95% interval ", "stdout", &r); /* goodput: 5455.0 req/s, 95% interval ... */
		run_free(&r);
	}
	char *a = canonical(tmp_path("out_s4a.json")), *b = canonical(tmp_path("out_s4b.json"));
	assert_string_equal(a, b);
	free(a);
	free(b);
	cJSON *d = load_json(tmp_path("out_s4a.json"));
	assert_int_equal((int)num(d, "replications"), 4);
	assert_int_equal((int)num(d, "seed"), 3);
	assert_int_equal((int)num(get(d, "config"), "replications"), 4);
	const cJSON *by = get(d, "goodput_by_seed");
	assert_int_equal(cJSON_GetArraySize(by), 4);
	double x[4], sum = 0, ss = 0;
	for (int i = 0; i < 4; i++)
		sum += x[i] = cJSON_GetArrayItem(by, i)->valuedouble;
	double mean = sum / 4;
	for (int i = 0; i < 4; i++)
		ss += (x[i] - mean) * (x[i] - mean);
	assert_true(fabs(num(d, "goodput_rps") - mean) < 1e-9);
	const cJSON *ci = get(d, "goodput_ci95");
	double half = 3.182446305 * sqrt(ss / 3) / 2; /* t(0.975, 3) */
	assert_true(fabs(cJSON_GetArrayItem(ci, 0)->valuedouble - (mean - half)) < 1e-6);
	/* the high end: the same over the searches' failing ends (goodput_bracket_by_seed) */
	const cJSON *br = get(d, "goodput_bracket_by_seed");
	assert_int_equal(cJSON_GetArraySize(br), 4);
	double y[4], fsum = 0, fss = 0;
	for (int i = 0; i < 4; i++) {
		const cJSON *bi = cJSON_GetArrayItem(br, i);
		assert_true(cJSON_GetArrayItem(bi, 0)->valuedouble == x[i]);
		fsum += y[i] = cJSON_GetArrayItem(bi, 1)->valuedouble;
		assert_true(y[i] > x[i]);
	}
	for (int i = 0; i < 4; i++)
		fss += (y[i] - fsum / 4) * (y[i] - fsum / 4);
	double fhalf = 3.182446305 * sqrt(fss / 3) / 2;
	assert_true(fabs(cJSON_GetArrayItem(ci, 1)->valuedouble - (fsum / 4 + fhalf)) < 1e-6);
	assert_true(cJSON_GetArrayItem(ci, 1)->valuedouble > mean + half);
	assert_int_equal((int)num(get(d, "metrics_from"), "seed"), 3);
	assert_true(num(get(d, "metrics_from"), "rate_rps") == x[0]);
	assert_true(num(get(d, "config"), "rate") == x[0]);
	assert_int_equal((int)num(get(d, "config"), "seed"), 3);
	cJSON_Delete(d);
	/* seed 4 alone is the second value */
	RUN(&r, "goodput", "--profile", "1.053,5.072", "--slo", "25", "--gpus", "8", "--duration", "5", "--warmup", "1",
	    "--seed", "4", "--json", "@out_s1.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	d = load_json(tmp_path("out_s1.json"));
	assert_true(num(d, "goodput_rps") == x[1]);
	assert_true(cJSON_IsNull(get(d, "goodput_ci95")));
	assert_int_equal((int)num(d, "replications"), 1);
	cJSON_Delete(d);
	/* the result reruns the first seed's run: sim runs one seed */
	RUN(&r, "sim", "@out_s4a.json", "--json", "@out_s4_rerun.json");
	expect_status(&r, 0);
	expect_contains(r.err, "one run, seed 3", "stderr", &r);
	run_free(&r);
	compare_rerun("out_s4a.json", "out_s4_rerun.json");

	/* plan: the count per seed, its range and mean; the answer is the largest */
	RUN(&r, "plan", "--profile", "1.053,5.072", "--slo", "25", "--duration", "5", "--warmup", "1", "--target-rate",
	    "10000", "--seeds", "3", "--json", "@out_plan3.json");
	expect_status(&r, 0);
	expect_contains(r.out, "GPUs over the seeds", "stdout", &r);
	run_free(&r);
	d = load_json(tmp_path("out_plan3.json"));
	assert_int_equal((int)num(d, "replications"), 3);
	const cJSON *p0 = cJSON_GetArrayItem(get(d, "policies"), 0);
	const cJSON *gs = get(p0, "gpus_by_seed");
	assert_int_equal(cJSON_GetArraySize(gs), 3);
	int lo = 1 << 30, hi = 0;
	double gsum = 0;
	for (int i = 0; i < 3; i++) {
		int v = (int)cJSON_GetArrayItem(gs, i)->valuedouble;
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
		gsum += v;
	}
	assert_int_equal((int)num(p0, "gpus"), hi);
	assert_int_equal((int)num(p0, "gpus_min"), lo);
	assert_int_equal((int)num(p0, "gpus_max"), hi);
	assert_true(fabs(num(p0, "gpus_mean") - gsum / 3) < 1e-9);
	assert_true(hi >= 13 && hi <= 18);
	assert_string_equal(get(p0, "worst_model")->valuestring, "model");
	assert_true(num(p0, "bad_rate") <= 0.01);
	assert_int_equal((int)num(get(p0, "metrics_from"), "gpus"), (int)cJSON_GetArrayItem(gs, 0)->valuedouble);
	/* the worst model at the answer: every seed's run at that count, the worst of them */
	const cJSON *wa = get(p0, "worst_at_answer");
	assert_int_equal((int)num(wa, "gpus"), hi);
	const cJSON *wby = get(wa, "by_seed");
	assert_int_equal(cJSON_GetArraySize(wby), 3);
	double wmax = 0;
	for (int i = 0; i < 3; i++) {
		double wb = num(cJSON_GetArrayItem(wby, i), "bad_rate");
		assert_true(wb <= 0.02); /* near the criterion under every seed (a seed that needed fewer GPUs is not re-searched) */
		wmax = wb > wmax ? wb : wmax;
	}
	assert_true(num(wa, "bad_rate") == wmax);
	cJSON_Delete(d);

	/* loadcurve: mean and interval of goodput and bad rate per point */
	RUN(&r, "loadcurve", "--profile", "1.053,5.072", "--slo", "25", "--gpus", "8", "--duration", "5", "--warmup",
	    "1", "--loads", "0.5,2", "--reference", "5000", "--seeds", "3", "-j", "2", "--json", "@out_lc3.json", "--csv",
	    "@out_lc3.csv");
	expect_status(&r, 0);
	expect_contains(r.out, " \u00b1 ", "stdout", &r);
	run_free(&r);
	d = load_json(tmp_path("out_lc3.json"));
	assert_int_equal((int)num(d, "replications"), 3);
	const cJSON *pt;
	cJSON_ArrayForEach(pt, get(d, "points"))
	{
		const cJSON *gb = get(pt, "goodput_by_seed"), *bb = get(pt, "bad_rate_by_seed");
		assert_int_equal(cJSON_GetArraySize(gb), 3);
		assert_int_equal(cJSON_GetArraySize(bb), 3);
		double gm = 0, bm = 0;
		for (int i = 0; i < 3; i++)
			gm += cJSON_GetArrayItem(gb, i)->valuedouble / 3, bm += cJSON_GetArrayItem(bb, i)->valuedouble / 3;
		assert_true(fabs(num(pt, "goodput_rps") - gm) < 1e-6);
		assert_true(fabs(num(pt, "bad_rate") - bm) < 1e-9);
		const cJSON *gci = get(pt, "goodput_ci95");
		assert_true(cJSON_GetArrayItem(gci, 0)->valuedouble <= gm && gm <= cJSON_GetArrayItem(gci, 1)->valuedouble);
		assert_int_equal(cJSON_GetArraySize(get(pt, "bad_rate_ci95")), 2);
		assert_string_equal(get(pt, "worst_model")->valuestring, "model");
	}
	/* at twice the load the per-seed goodputs differ, and the interval is not empty */
	const cJSON *over = cJSON_GetArrayItem(get(d, "points"), 1);
	assert_true(cJSON_GetArrayItem(get(over, "goodput_ci95"), 0)->valuedouble <
		    cJSON_GetArrayItem(get(over, "goodput_ci95"), 1)->valuedouble);
	cJSON_Delete(d);
	char *csv = slurp(tmp_path("out_lc3.csv"));
	assert_non_null(csv);
	assert_non_null(strstr(csv, ",goodput_ci95_low,goodput_ci95_high,bad_rate_ci95_low,bad_rate_ci95_high,worst_model,"));
	free(csv);
	remove_outputs();
}

/* ---- 6. trace and timeline ---------------------------------------------- */

static int count_fields(const char *line, size_t len)
{
	int n = 1;
	for (size_t i = 0; i < len; i++)
		n += line[i] == ',';
	return n;
}

/* Checks a CSV: exactly one header line (no comments), starting with
 * header_start with nfields fields, then at least one data row of nfields
 * fields, and its sidecar. Returns the number of data rows. */
static int check_csv(const char *path, const char *header_start, int nfields)
{
	char *text = slurp(path);
	if (!text) {
		print_error("%s: not created\n", path);
		fail();
	}
	int rows = 0;
	bool header = false;
	for (char *line = text; *line;) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (!len || line[0] == '#') {
			print_error("%s: %s line '%.*s'\n", path, len ? "a comment" : "an empty", (int)len, line);
			fail();
		}
		if (len) {
			if (!header) {
				if (strncmp(line, header_start, strlen(header_start)) ||
				    count_fields(line, len) != nfields) {
					print_error("%s: bad header '%.*s'\n", path, (int)len, line);
					fail();
				}
				header = true;
			} else {
				if (count_fields(line, len) != nfields) {
					print_error("%s: row %d '%.*s' has %d fields, want %d\n", path, rows + 1, (int)len,
						    line, count_fields(line, len), nfields);
					fail();
				}
				rows++;
			}
		}
		line += len + (nl ? 1 : 0);
	}
	free(text);
	if (!header || rows < 1) {
		print_error("%s: %s, %d data rows\n", path, header ? "header" : "no header", rows);
		fail();
	}
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	check_sidecar(path, strstr(base, "trace") ? "trace" : strstr(base, "mt") ? "model-timeline"
							  : strstr(base, "lc") ? "loadcurve" : "timeline");
	return rows;
}

static void test_trace_timeline(void **state)
{
	(void)state;
	struct run r;
	RUN(&r, "sim", SMALL, "--trace", "@out_trace.csv", "--timeline", "@out_timeline.csv", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	check_csv(tmp_path("out_trace.csv"), "gpu,kind,model,batch_size,", 7);
	int secs = check_csv(tmp_path("out_timeline.csv"), "t_s,", 10);
	assert_true(secs >= 3);
	/* Each row's advice follows from its own columns (8 GPUs, threshold 1%). */
	char *tl = slurp(tmp_path("out_timeline.csv"));
	assert_non_null(tl);
	int checked = 0;
	for (char *line = strtok(tl, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "t_s,", 4))
			continue;
		double t, off, good, bad, rate, busy, f;
		int in_use, add, rel;
		assert_int_equal(sscanf(line, "%lf,%lf,%lf,%lf,%lf,%lf,%d,%lf,%d,%d", &t, &off, &good, &bad, &rate, &busy,
					&in_use, &f, &add, &rel), 10);
		assert_true(in_use >= 0 && in_use <= 8);
		assert_true(busy <= in_use + 1e-3);
		assert_true(fabs(f - (busy >= 8 ? 0 : 1 - busy / 8)) <= 2e-4);
		if (rate > 0.01) {
			assert_int_equal(add, (int)ceil(8 * rate / (1 - rate) - 1e-6));
			assert_int_equal(rel, 0);
		} else {
			assert_int_equal(add, 0);
			assert_int_equal(rel, (int)floor(8 * f + 1e-6));
		}
		checked++;
	}
	assert_int_equal(checked, secs);
	free(tl);

	/* Trace rows: gpu in [0, 8), model name, batch >= 1, start <= finish. */
	char *text = slurp(tmp_path("out_trace.csv"));
	assert_non_null(text);
	int rows = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "gpu,", 4))
			continue;
		int gpu, batch;
		char kind[64], model[64];
		double start, finish, dropped;
		if (sscanf(line, "%d,%63[^,],%63[^,],%d,%lf,%lf,%lf", &gpu, kind, model, &batch, &start, &finish,
			   &dropped) != 7) {
			print_error("trace row '%s' does not parse\n", line);
			fail();
		}
		assert_true(gpu >= 0 && gpu < 8);
		assert_string_equal(kind, "a100");
		assert_string_equal(model, "model");
		assert_true(batch >= 1);
		assert_true(start >= 0 && finish > start);
		assert_true(dropped >= 0);
		rows++;
	}
	free(text);
	assert_true(rows >= 1);

	/* The per-model timeline adds up to the timeline, interval by interval. */
	RUN(&r, "sim", "--zoo", "a100", "--models", "ResNet50,VGG16,BERT", "--gpus", "4", "--rate", "1500",
	    "--arrival", "gamma:0.3", "--duration", "4", "--warmup", "1", "--timeline", "@out_t2.csv",
	    "--model-timeline", "@out_mt.csv", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	{
		double sums[16][3] = { { 0 } };
		char *mt = slurp(tmp_path("out_mt.csv"));
		assert_non_null(mt);
		assert_int_equal(strncmp(mt, "t_s,model,offered,good,bad\n", 27), 0); /* the first line */
		int n = 0;
		for (char *line = strtok(mt, "\n"); line; line = strtok(NULL, "\n")) {
			if (!strncmp(line, "t_s,", 4))
				continue;
			double t, o, g, b;
			char model[64];
			assert_int_equal(sscanf(line, "%lf,%63[^,],%lf,%lf,%lf", &t, model, &o, &g, &b), 5);
			assert_true(t >= 0 && t < 16);
			sums[(int)t][0] += o, sums[(int)t][1] += g, sums[(int)t][2] += b;
			n++;
		}
		free(mt);
		assert_int_equal(n, 4 * 3);
		char *t2 = slurp(tmp_path("out_t2.csv"));
		int intervals = 0;
		for (char *line = strtok(t2, "\n"); line; line = strtok(NULL, "\n")) {
			if (!strncmp(line, "t_s,", 4))
				continue;
			double t, o, g, b;
			assert_int_equal(sscanf(line, "%lf,%lf,%lf,%lf", &t, &o, &g, &b), 4);
			assert_true(sums[(int)t][0] == o && sums[(int)t][1] == g && sums[(int)t][2] == b);
			assert_true(o > 0);
			intervals++;
		}
		free(t2);
		assert_int_equal(intervals, 4);
	}

	/* goodput writes them for the run at the goodput. */
	RUN(&r, "goodput", "--profile", "1.053,5.072", "--slo", "25", "--gpus", "2", "--duration", "4", "--warmup", "1",
	    "--tolerance", "0.05", "--trace", "@out_gtrace.csv", "--timeline", "@out_gtimeline.csv",
	    "--model-timeline", "@out_gmt.csv", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	check_csv(tmp_path("out_gmt.csv"), "t_s,model,", 5);
	check_csv(tmp_path("out_gtrace.csv"), "gpu,kind,model,batch_size,", 7);
	check_csv(tmp_path("out_gtimeline.csv"), "t_s,", 10);

	/* No temporaries left behind. */
	DIR *d = opendir(tmpdir);
	assert_non_null(d);
	for (struct dirent *de; (de = readdir(d));) {
		if (strstr(de->d_name, ".tmp")) {
			print_error("temporary file left behind: %s\n", de->d_name);
			fail();
		}
	}
	closedir(d);
	remove_outputs();
}

/* ---- 8. where outputs go: devices, FIFOs, links, stdout ------------------- */

/* Whether tmpdir holds a temporary (NAME.tmp.PID), naming it. */
static bool temporaries_left(void)
{
	DIR *d = opendir(tmpdir);
	assert_non_null(d);
	bool any = false;
	for (struct dirent *de; (de = readdir(d));) {
		if (strstr(de->d_name, ".tmp.")) {
			print_error("temporary file left behind: %s\n", de->d_name);
			any = true;
		}
	}
	closedir(d);
	return any;
}

static void test_output_targets(void **state)
{
	(void)state;
	struct run r;
	struct stat st;
	/* a character device is written directly: /dev/null stays a device */
	RUN(&r, "sim", SMALL, "--json", "/dev/null", "--timeline", "/dev/null", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	/* /dev/full: the write error, with the path, exit 1 */
	if (!access("/dev/full", W_OK)) {
		RUN(&r, "sim", SMALL, "--json", "/dev/full", "--quiet");
		expect_status(&r, 1);
		expect_contains(r.err, "/dev/full: cannot write: No space left on device", "stderr", &r);
		run_free(&r);
		assert_int_equal(stat("/dev/full", &st), 0);
		assert_true(S_ISCHR(st.st_mode));
		RUN(&r, "sim", SMALL, "--trace", "/dev/full", "--quiet");
		expect_status(&r, 1);
		expect_contains(r.err, "/dev/full: cannot write", "stderr", &r);
		run_free(&r);
	}
	/* "-" is standard output for every CSV; the table moves to stderr; no sidecar, no file named "-" */
	const char *csv_opts[][2] = { { "--trace", "gpu,kind,model,batch_size," }, { "--timeline", "t_s,offered," },
				      { "--model-timeline", "t_s,model,offered," } };
	for (size_t i = 0; i < 3; i++) {
		RUN(&r, "sim", SMALL, csv_opts[i][0], "-");
		expect_status(&r, 0);
		if (strncmp(r.out, csv_opts[i][1], strlen(csv_opts[i][1]))) {
			print_error("`%s`: stdout does not begin with the header '%s':\n%.300s\n", r.cmd, csv_opts[i][1], r.out);
			fail();
		}
		assert_null(strchr(r.out, '#'));
		expect_contains(r.err, "offered", "stderr (the table)", &r);
		run_free(&r);
		assert_int_equal(access(tmp_path("-"), F_OK), -1);
		assert_int_equal(access(tmp_path("-.meta.json"), F_OK), -1);
	}
	/* two outputs on stdout, or one file twice: refused before running */
	RUN(&r, "sim", SMALL, "--timeline", "-", "--model-timeline", "-");
	expect_status(&r, 2);
	expect_contains(r.err, "--timeline and --model-timeline both write to standard output", "stderr", &r);
	run_free(&r);
	RUN(&r, "goodput", SMALL, "--json", "-", "--trace", "-");
	expect_status(&r, 2);
	expect_contains(r.err, "standard output", "stderr", &r);
	run_free(&r);
	RUN(&r, "sim", SMALL, "--json", "@out_same", "--trace", "@out_same");
	expect_status(&r, 2);
	expect_contains(r.err, "both write", "stderr", &r);
	run_free(&r);
	assert_int_equal(access(tmp_path("out_same"), F_OK), -1);
	/* a directory: refused, naming it */
	assert_int_equal(mkdir(tmp_path("out_dir"), 0777), 0);
	RUN(&r, "sim", SMALL, "--json", "@out_dir");
	expect_status(&r, 2);
	expect_contains(r.err, "is a directory", "stderr", &r);
	run_free(&r);
	/* a symbolic link: its target is replaced (created when missing), the link stays a link; through two
	 * links as well */
	assert_int_equal(symlink("out_real.json", tmp_path("out_link.json")), 0);
	assert_int_equal(symlink("out_link.json", tmp_path("out_link2.json")), 0);
	for (int pass = 0; pass < 2; pass++) {
		RUN(&r, "sim", SMALL, "--json", pass ? "@out_link2.json" : "@out_link.json", "--quiet");
		expect_status(&r, 0);
		run_free(&r);
		assert_int_equal(lstat(tmp_path("out_link.json"), &st), 0);
		assert_true(S_ISLNK(st.st_mode));
		assert_int_equal(lstat(tmp_path("out_link2.json"), &st), 0);
		assert_true(S_ISLNK(st.st_mode));
		assert_int_equal(lstat(tmp_path("out_real.json"), &st), 0);
		assert_true(S_ISREG(st.st_mode));
		cJSON_Delete(load_json(tmp_path("out_link.json")));
	}
	/* a link into a directory that does not exist: refused before running */
	assert_int_equal(symlink("no_such_dir/x.json", tmp_path("out_dangling.json")), 0);
	RUN(&r, "sim", SMALL, "--json", "@out_dangling.json");
	expect_status(&r, 2);
	expect_contains(r.err, "no directory", "stderr", &r);
	run_free(&r);
	/* an existing file keeps its permissions */
	write_text("out_perm.json", "{}\n");
	assert_int_equal(chmod(tmp_path("out_perm.json"), 0640), 0);
	RUN(&r, "sim", SMALL, "--json", "@out_perm.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	assert_int_equal(stat(tmp_path("out_perm.json"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	/* a FIFO is written through, and stays a FIFO */
	assert_int_equal(mkfifo(tmp_path("out_fifo"), 0600), 0);
	fflush(stdout);
	pid_t reader = fork();
	assert_true(reader >= 0);
	if (reader == 0) { /* copies the FIFO into a file */
		int in = open(tmp_path("out_fifo"), O_RDONLY), out = open(tmp_path("out_fifo_copy.json"),
									   O_WRONLY | O_CREAT | O_TRUNC, 0644);
		char buf[4096];
		ssize_t n;
		while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n)
				_exit(1);
		_exit(in < 0 || out < 0);
	}
	RUN(&r, "sim", SMALL, "--json", "@out_fifo", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	int rst;
	assert_int_equal(waitpid(reader, &rst, 0), reader);
	assert_true(WIFEXITED(rst) && WEXITSTATUS(rst) == 0);
	cJSON_Delete(load_json(tmp_path("out_fifo_copy.json")));
	assert_int_equal(lstat(tmp_path("out_fifo"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	/* the other commands: loadcurve's CSV and plan's JSON on stdout; merge --out -; sweep --out - refused */
	RUN(&r, "loadcurve", SMALL, "--loads", "0.5", "--reference", "3000", "--csv", "-", "--json", "@out_lc.json");
	expect_status(&r, 0);
	assert_int_equal(strncmp(r.out, "policy,load,", 12), 0);
	expect_contains(r.err, "loadcurve:", "stderr (the table)", &r);
	run_free(&r);
	RUN(&r, "loadcurve", SMALL, "--loads", "0.5", "--reference", "3000", "--csv", "-", "--json", "-");
	expect_status(&r, 2);
	expect_contains(r.err, "--json and --csv both write to standard output", "stderr", &r);
	run_free(&r);
	RUN(&r, "plan", "--profile", "1.053,5.072", "--slo", "25", "--duration", "3", "--warmup", "1", "--target-rate",
	    "2000", "--json", "-");
	expect_status(&r, 0);
	cJSON *doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	check_provenance(doc, true);
	cJSON_Delete(doc);
	run_free(&r);
	write_text("grid.json", GRID);
	RUN(&r, "sweep", "@grid.json", "--out", "-");
	expect_status(&r, 2);
	expect_contains(r.err, "--out -", "stderr", &r);
	run_free(&r);
	assert_int_equal(access(tmp_path("-"), F_OK), -1);
	RUN(&r, "sweep", "@grid.json", "--out", "@out_sw", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	RUN(&r, "merge", "@out_sw", "--out", "-");
	expect_status(&r, 0);
	assert_int_equal(strncmp(r.out, "{\"grid\":\"cli\"", 13), 0);
	run_free(&r);
	assert_false(temporaries_left());
	remove_outputs();
}

/* ---- 9. interrupted: SIGINT and SIGTERM --------------------------------- */

/* Starts symphony with args in the background (stdout, stderr to
 * tmpdir/bg_stdout.txt and bg_stderr.txt). Returns its pid. */
static pid_t start_bg(const char *const *args)
{
	return spawn(args, "bg_stdout.txt", "bg_stderr.txt", NULL, 0);
}

/* Waits (up to 60 s) until ready() holds, the process still running. */
static void wait_until(pid_t pid, bool (*ready)(void), const char *what)
{
	for (int i = 0; i < 6000; i++) {
		if (ready())
			return;
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			print_error("the command ended (status %d) before %s\n", st, what);
			fail();
		}
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	kill(pid, SIGKILL);
	print_error("timed out waiting for %s\n", what);
	fail();
}

static bool trace_temporary(void)
{
	DIR *d = opendir(tmpdir);
	bool found = false;
	for (struct dirent *de; d && (de = readdir(d));)
		found |= !strncmp(de->d_name, "out_int_trace.csv.tmp.", 22);
	if (d)
		closedir(d);
	return found;
}

static bool sweep_line(void)
{
	char *text = slurp(tmp_path("out_isw/results.jsonl"));
	bool found = text && strchr(text, '\n');
	free(text);
	return found;
}

/* Sends sig and returns the exit status (128 + signal when killed by it). */
static int interrupt(pid_t pid, int sig)
{
	assert_int_equal(kill(pid, sig), 0);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		assert_int_equal(errno, EINTR);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

#define ISWEEP_GRID "{\"name\": \"isw\", \"compute\": \"sim\", \"base\": {\"models\": [{\"name\": \"m\", " \
	"\"alpha_ms\": 1.053, \"beta_ms\": 5.072}], \"slo_ms\": 25, \"gpus\": 8, \"rate\": 3000, \"duration_s\": 120, " \
	"\"warmup_s\": 1}, \"axes\": {\"seed\": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}}"

static void test_interrupt(void **state)
{
	(void)state;
	const int sigs[] = { SIGINT, SIGTERM };
	const char *names[] = { "SIGINT", "SIGTERM" };
	for (int i = 0; i < 2; i++) {
		/* a long run: its trace's temporary shows it is running */
		const char *const args[] = { "sim", "--profile", "1.053,5.072", "--slo", "25", "--gpus", "8", "--rate", "3000",
					     "--duration", "100000", "--json", "@out_int.json", "--trace", "@out_int_trace.csv",
					     "--timeline", "@out_int_tl.csv", NULL };
		pid_t pid = start_bg(args);
		wait_until(pid, trace_temporary, "the trace's temporary file");
		int status = interrupt(pid, sigs[i]);
		char *err = slurp(tmp_path("bg_stderr.txt"));
		if (status != 128 + sigs[i] || !strstr(err, names[i]) || !strstr(err, "no result written")) {
			print_error("%s: exit status %d, want %d; stderr:\n%s\n", names[i], status, 128 + sigs[i], err);
			fail();
		}
		expect_contains(err, "symphony sim: interrupted by ", "stderr", NULL);
		free(err);
		assert_false(temporaries_left());
		char left[1024];
		assert_int_equal(count_outputs(left, sizeof(left)), 0);
	}
	/* a sweep: interrupted, it says how far it got; --resume completes it, as a run never interrupted */
	write_text("isweep.json", ISWEEP_GRID);
	const char *const args[] = { "sweep", "@isweep.json", "--out", "@out_isw", "-j", "1", "--quiet", NULL };
	pid_t pid = start_bg(args);
	wait_until(pid, sweep_line, "the sweep's first line");
	int status = interrupt(pid, SIGINT);
	char *err = slurp(tmp_path("bg_stderr.txt"));
	if (status != 130 || !strstr(err, "symphony sweep: interrupted by SIGINT after ") ||
	    !strstr(err, " of 10 points; ") || !strstr(err, "out_isw/results.jsonl holds them: resume with --resume")) {
		print_error("sweep: exit status %d, want 130; stderr:\n%s\n", status, err);
		fail();
	}
	free(err);
	struct run r;
	RUN(&r, "sweep", "@isweep.json", "--out", "@out_isw", "--resume", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	RUN(&r, "sweep", "@isweep.json", "--out", "@out_isw_full", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	cJSON *line0 = NULL;
	{
		char *text = slurp(tmp_path("out_isw_full/results.jsonl"));
		*strchr(text, '\n') = 0;
		line0 = cJSON_Parse(text);
		free(text);
	}
	check_provenance(line0, false); /* a line is the same whenever it ran */
	cJSON_Delete(line0);
	char *resumed[10] = { 0 }, *full[10] = { 0 };
	assert_int_equal(sorted_lines(tmp_path("out_isw/results.jsonl"), resumed, 10), 10);
	assert_int_equal(sorted_lines(tmp_path("out_isw_full/results.jsonl"), full, 10), 10);
	for (int i = 0; i < 10; i++) {
		assert_string_equal(resumed[i], full[i]);
		free(resumed[i]);
		free(full[i]);
	}
	/* the sweep's sidecar: where and when */
	cJSON *meta = load_json(tmp_path("out_isw/results.jsonl.meta.json"));
	check_provenance(meta, true);
	assert_int_equal((int)num(meta, "npoints"), 10);
	cJSON_Delete(meta);
	unlink(tmp_path("bg_stdout.txt"));
	unlink(tmp_path("bg_stderr.txt"));
	remove_outputs();
}

/* ---- 7. help, models, policies, version --------------------------------- */

static void test_info_commands(void **state)
{
	(void)state;
	struct run r;
	RUN(&r, "help");
	expect_status(&r, 0);
	expect_contains(r.out, "usage", "stdout", &r);
	expect_contains(r.out, "sim", "stdout", &r);
	expect_contains(r.out, "goodput", "stdout", &r);
	run_free(&r);

	RUN(&r, "help", "sim");
	expect_status(&r, 0);
	expect_contains(r.out, "symphony sim", "stdout", &r);
	const char *flags[] = { "--gpus", "--rate", "--policy", "--json", "--trace", "--timeline", "--seed", "--warmup",
				"--cluster" };
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		expect_contains(r.out, flags[i], "help sim", &r);
	const char *pols[] = { "symphony", "eager", "timeout", "betalambda", "clockwork", "shepherd", "nexus",
			       "urgency", "fcfs", "edf", "lambda=X", "frontends=N" };
	for (size_t i = 0; i < sizeof(pols) / sizeof(pols[0]); i++)
		expect_contains(r.out, pols[i], "help sim", &r);
	run_free(&r);

	RUN(&r, "policies");
	expect_status(&r, 0);
	for (size_t i = 0; i < 10; i++)
		expect_contains(r.out, pols[i], "policies", &r);
	run_free(&r);

	RUN(&r, "help", "goodput");
	expect_status(&r, 0);
	expect_contains(r.out, "--max-bad-rate", "help goodput", &r);
	expect_contains(r.out, "--criterion per-model", "help goodput", &r);
	expect_contains(r.out, "--seeds N", "help goodput", &r);
	expect_contains(r.out, "goodput_ci95", "help goodput", &r);
	run_free(&r);
	const char *topics[] = { "plan", "loadcurve", "sweep" };
	for (size_t i = 0; i < 3; i++) {
		RUN(&r, "help", topics[i]);
		expect_status(&r, 0);
		expect_contains(r.out, "--seeds", topics[i], &r);
		expect_contains(r.out, "criterion", topics[i], &r);
		run_free(&r);
	}

	RUN(&r, "help", "config");
	expect_status(&r, 0);
	const char *keys[] = { "\"gpus\"", "\"rate\"", "\"slo_ms\"", "\"policy\"", "\"rate_csv\"", "\"warmup_s\"",
			       "\"criterion\"", "\"replications\"" };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		expect_contains(r.out, keys[i], "help config", &r);
	run_free(&r);

	RUN(&r, "sim", "--help");
	expect_status(&r, 0);
	expect_contains(r.out, "symphony sim", "stdout", &r);
	run_free(&r);

	RUN(&r, "models", "--zoo", "gtx1080ti");
	expect_status(&r, 0);
	expect_contains(r.out, "35 models", "stdout", &r);
	expect_contains(r.out, "NASNetMobile", "stdout", &r);
	int lines = 0;
	for (const char *p = r.out; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 35 + 2); /* title, column names, one per model */
	run_free(&r);

	RUN(&r, "models", "--zoo=gtx1080ti");
	expect_status(&r, 0);
	expect_contains(r.out, "35 models", "stdout", &r);
	run_free(&r);

	RUN(&r, "models");
	expect_status(&r, 0);
	expect_contains(r.out, "a100", "stdout", &r);
	run_free(&r);

	RUN(&r, "policies");
	expect_status(&r, 0);
	expect_contains(r.out, "symphony", "stdout", &r);
	expect_contains(r.out, "eager", "stdout", &r);
	expect_contains(r.out, "timeout", "stdout", &r);
	run_free(&r);

	RUN(&r, "version");
	expect_status(&r, 0);
	assert_true(!strncmp(r.out, "symphony ", 9));
	assert_true(r.out[9] >= '0' && r.out[9] <= '9');
	run_free(&r);
}

/* ---- 8. --flag=value and overriding a config file ----------------------- */

static void test_flag_forms_and_override(void **state)
{
	(void)state;
	struct run r;
	RUN(&r, "sim", "--profile", "1.053,5.072", "--slo", "25", "--gpus", "8", "--rate", "3000", "--duration", "3",
	    "--warmup", "1", "--seed", "4", "--policy", "timeout:30%", "--json", "@out_space.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	char jsonflag[600];
	snprintf(jsonflag, sizeof(jsonflag), "--json=%s", tmp_path("out_eq.json"));
	RUN(&r, "sim", "--profile=1.053,5.072", "--slo=25", "--gpus=8", "--rate=3000", "--duration=3", "--warmup=1",
	    "--seed=4", "--policy=timeout:30%", jsonflag, "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	char *a = canonical(tmp_path("out_space.json"));
	char *b = canonical(tmp_path("out_eq.json"));
	assert_string_equal(a, b);
	free(a);
	free(b);
	cJSON *doc = load_json(tmp_path("out_eq.json"));
	assert_string_equal(get(doc, "policy")->valuestring, "timeout:30%");
	cJSON_Delete(doc);

	/* gpus4.json says gpus 4, rate 3000, seed 5; --gpus 8 wins, the rest
	 * comes from the file, wherever the file is on the command line. */
	const char *const forms[][16] = {
		{ "sim", "@gpus4.json", "--gpus", "8", NULL },
		{ "sim", "--gpus", "8", "@gpus4.json", NULL },
		{ "sim", "--gpus=8", "--config", "@gpus4.json", NULL },
		{ "sim", "--config=@gpus4.json", "--gpus", "8", NULL },
	};
	char cfgflag[600];
	snprintf(cfgflag, sizeof(cfgflag), "--config=%s", tmp_path("gpus4.json"));
	for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		const char *args[32];
		size_t n = 0;
		for (size_t i = 0; forms[f][i]; i++)
			args[n++] = strcmp(forms[f][i], "--config=@gpus4.json") ? forms[f][i] : cfgflag;
		const char *rest[] = { "--profile", "1.053,5.072", "--slo", "25", "--duration", "3", "--warmup", "1",
				       "--json", "@out_o.json", "--quiet" };
		for (size_t i = 0; i < sizeof(rest) / sizeof(rest[0]); i++)
			args[n++] = rest[i];
		args[n] = NULL;
		run_argv(&r, args);
		expect_status(&r, 0);
		run_free(&r);
		doc = load_json(tmp_path("out_o.json"));
		const cJSON *cfg = get(doc, "config");
		if (num(cfg, "gpus") != 8) {
			print_error("form %zu: config.gpus %g, want 8 (the option overrides the file)\n", f,
				    num(cfg, "gpus"));
			fail();
		}
		assert_true(num(cfg, "rate") == 3000);
		assert_true(num(cfg, "seed") == 5);
		assert_true(num(doc, "gpus") == 8);
		cJSON_Delete(doc);
		unlink(tmp_path("out_o.json"));
	}

	/* Without the option the file's value stands. */
	RUN(&r, "sim", "@gpus4.json", "--profile", "1.053,5.072", "--slo", "25", "--duration", "3", "--warmup", "1",
	    "--json", "@out_o.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	doc = load_json(tmp_path("out_o.json"));
	assert_true(num(get(doc, "config"), "gpus") == 4);
	cJSON_Delete(doc);

	/* The last of a repeated option wins. */
	RUN(&r, "sim", SMALL, "--gpus", "2", "--gpus=6", "--json", "@out_o.json", "--quiet");
	expect_status(&r, 0);
	run_free(&r);
	doc = load_json(tmp_path("out_o.json"));
	assert_true(num(get(doc, "config"), "gpus") == 6);
	cJSON_Delete(doc);
	remove_outputs();
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s /path/to/symphony\n", argv[0]);
		return 2;
	}
	/* Absolute, since the program runs in the temporary directory. */
	static char abs_path[4096];
	char cwd[2048];
	if (argv[1][0] == '/')
		snprintf(abs_path, sizeof(abs_path), "%s", argv[1]);
	else if (getcwd(cwd, sizeof(cwd)))
		snprintf(abs_path, sizeof(abs_path), "%s/%s", cwd, argv[1]);
	else
		return 2;
	symphony = abs_path;
	if (access(symphony, X_OK)) {
		fprintf(stderr, "%s: not executable\n", symphony);
		return 2;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_result_as_config),
		cmocka_unit_test(test_json_schema),
		cmocka_unit_test(test_goodput_floor),
		cmocka_unit_test(test_no_goodput),
		cmocka_unit_test(test_info_json),
		cmocka_unit_test(test_fabbench),
		cmocka_unit_test(test_config_stdin),
		cmocka_unit_test(test_per_model_criterion),
		cmocka_unit_test(test_seeds),
		cmocka_unit_test(test_trace_timeline),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_trace_commands),
		cmocka_unit_test(test_partition),
		cmocka_unit_test(test_split_and_queries),
		cmocka_unit_test(test_sweep),
		cmocka_unit_test(test_loadcurve),
		cmocka_unit_test(test_info_commands),
		cmocka_unit_test(test_flag_forms_and_override),
		cmocka_unit_test(test_output_targets),
		cmocka_unit_test(test_interrupt),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
