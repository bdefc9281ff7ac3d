/* tests/test_config.c - experiments (experiment/config.h): defaults, JSON keys,
 * command-line flags, resolution against the zoos and the echoed config. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/error.h"
#include "experiment/config.h"
#include "experiment/estimate.h"

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* cJSON allocations still live: main() installs counting hooks, so a test
 * can see that code it calls frees every cJSON object it creates. */
static long cjson_live;

static void *count_malloc(size_t n)
{
	void *p = malloc(n);
	if (p)
		cjson_live++;
	return p;
}

static void count_free(void *p)
{
	if (p)
		cjson_live--;
	free(p);
}

/* ---- helpers ------------------------------------------------------------ */



static void write_temp(const char *text, char *path, size_t len)
{
	write_temp_bytes("config", text, strlen(text), path, len);
}

/* Policy p's parameter key as canonical text (a buffer the next call reuses). */
static const char *param_text(const struct sym_policy *p, const char *key)
{
	static char buf[64];
	assert_int_equal(sym_policy_param_text(p, key, buf, sizeof(buf)), 0);
	return buf;
}

static void init(struct sym_experiment *e)
{
	assert_int_equal(sym_experiment_init(e), 0);
}

/* Applies JSON text to e; returns the code, message in err. */
static int apply_text(struct sym_experiment *e, const char *text, const char *origin, char *err, size_t errlen)
{
	cJSON *o = cJSON_Parse(text);
	if (!o) {
		print_error("test JSON does not parse: %s\n", text);
		fail();
	}
	int rc = sym_experiment_apply_json(e, o, origin, err, errlen);
	cJSON_Delete(o);
	return rc;
}

static void apply_ok(struct sym_experiment *e, const char *text)
{
	char err[1024] = "";
	int rc = apply_text(e, text, "test.json", err, sizeof(err));
	if (rc)
		print_error("applying %s: %d %s\n", text, rc, err);
	assert_int_equal(rc, 0);
}

static void flag_ok(struct sym_experiment *e, const char *flag, const char *value)
{
	char err[1024] = "";
	int rc = sym_experiment_apply_flag(e, flag, value, err, sizeof(err));
	if (rc)
		print_error("--%s %s: %d %s\n", flag, value, rc, err);
	assert_int_equal(rc, 0);
}

static void resolve_ok(struct sym_experiment *e)
{
	char err[1024] = "";
	int rc = sym_experiment_resolve(e, err, sizeof(err));
	if (rc)
		print_error("resolve: %d %s\n", rc, err);
	assert_int_equal(rc, 0);
	assert_true(e->resolved);
}

/* Resolving fails; the message must contain each of the NULL-terminated needles. */
static void resolve_fails(struct sym_experiment *e, const char *const *needles)
{
	char err[1024] = "";
	int rc = sym_experiment_resolve(e, err, sizeof(err));
	if (rc == 0) {
		print_error("resolve succeeded, expected an error containing '%s'\n", needles[0]);
		fail();
	}
	assert_true(rc < 0);
	for (int i = 0; needles[i]; i++)
		assert_contains(err, needles[i]);
	assert_false(e->resolved);
	assert_int_equal(e->nmodels, 0);
	assert_null(e->models);
	assert_null(e->profiles);
}

static size_t model_index(const struct sym_experiment *e, const char *name)
{
	for (size_t i = 0; i < e->nmodels; i++)
		if (!strcmp(e->models[i].name, name))
			return i;
	print_error("model %s not resolved\n", name);
	fail();
	return 0;
}

/* ---- defaults ------------------------------------------------------------ */

static void test_init_defaults(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	assert_string_equal(e.zoo, "a100");
	assert_true(cJSON_IsString(e.models_json));
	assert_string_equal(e.models_json->valuestring, "all");
	assert_near(e.slo_ms, 0, 0, "slo_ms");
	assert_int_equal(e.gpus, 8);
	assert_near(e.rate, 1000, 0, "rate");
	assert_int_equal(e.arrival.kind, SYM_ARRIVAL_POISSON);
	assert_near(e.arrival.shape, 1, 0, "shape");
	assert_int_equal(e.popularity.kind, SYM_POP_EQUAL);
	assert_string_equal(sym_policy_name(&e.policy), "symphony");
	char buf[64];
	assert_string_equal(sym_policy_format(&e.policy, buf, sizeof(buf)), "symphony");
	/* early drop with an automatic target (experiment/config.h) */
	assert_int_equal(e.gather.rule, SYM_GATHER_EARLY);
	assert_int_equal(e.gather.target, 0);
	assert_string_equal(sym_gather_format(&e.gather, buf, sizeof(buf)), "early:auto");
	assert_null(e.segments);
	assert_int_equal(e.nseg, 0);
	assert_string_equal(e.rate_csv, "");
	assert_near(e.ctrl_ms, 0, 0, "ctrl");
	assert_near(e.data_ms, 0, 0, "data");
	assert_near(e.resp_ms, 0, 0, "resp");
	assert_near(e.jitter, 0, 0, "jitter");
	assert_near(e.duration_s, 0, 0, "duration_s");
	assert_near(sym_experiment_duration(&e), 30, 0, "duration");
	assert_near(e.warmup_s, 3, 0, "warmup");
	assert_int_equal(e.seed, 1);
	assert_near(e.max_bad_rate, 0.01, 0, "max_bad_rate");
	assert_near(e.tolerance, 0.005, 0, "tolerance");
	assert_int_equal(e.criterion, SYM_CRITERION_PER_MODEL); /* the papers' goodput */
	assert_int_equal(e.replications, 1);
	assert_false(e.resolved);
	assert_int_equal(e.nmodels, 0);
	sym_experiment_finish(&e);
	sym_experiment_finish(&e); /* finish twice and on NULL is harmless */
	sym_experiment_finish(NULL);
}

/* ---- apply_json ------------------------------------------------------------ */

static void test_apply_json_sets_every_key(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	apply_ok(&e, "{"
		     "\"zoo\": \"gtx1080ti\","
		     "\"models\": [\"ResNet50\", {\"name\": \"Custom\", \"alpha_ms\": 1, \"beta_ms\": 2, \"slo_ms\": 30}],"
		     "\"slo_ms\": 50,"
		     "\"gpus\": 4,"
		     "\"rate\": 250.5,"
		     "\"arrival\": \"gamma:0.5\","
		     "\"popularity\": \"zipf:1.25\","
		     "\"segments\": [{\"duration_s\": 2, \"rate\": 100}, {\"duration_s\": 0.5, \"rate\": 0}],"
		     "\"rate_csv\": \"rates.csv\","
		     "\"policy\": \"timeout:30%\","
		     "\"drop\": \"early:8\","
		     "\"network\": {\"ctrl_ms\": 1, \"data_ms\": 0.5, \"resp_ms\": 2},"
		     "\"jitter\": 0.1,"
		     "\"duration_s\": 20,"
		     "\"warmup_s\": 2,"
		     "\"seed\": 42,"
		     "\"max_bad_rate\": 0.02,"
		     "\"tolerance\": 0.01,"
		     "\"criterion\": \"aggregate\","
		     "\"replications\": 7"
		     "}");
	assert_string_equal(e.zoo, "gtx1080ti");
	assert_true(cJSON_IsArray(e.models_json));
	assert_int_equal(cJSON_GetArraySize(e.models_json), 2);
	assert_string_equal(cJSON_GetArrayItem(e.models_json, 0)->valuestring, "ResNet50");
	assert_true(cJSON_IsObject(cJSON_GetArrayItem(e.models_json, 1)));
	assert_near(e.slo_ms, 50, 0, "slo_ms");
	assert_int_equal(e.gpus, 4);
	assert_near(e.rate, 250.5, 0, "rate");
	assert_int_equal(e.arrival.kind, SYM_ARRIVAL_GAMMA);
	assert_near(e.arrival.shape, 0.5, 0, "shape");
	assert_int_equal(e.popularity.kind, SYM_POP_ZIPF);
	assert_near(e.popularity.s, 1.25, 0, "zipf s");
	assert_int_equal(e.nseg, 2);
	assert_int_equal(e.segments[0].duration, 2 * SYM_S);
	assert_near(e.segments[0].rate, 100, 0, "seg rate");
	assert_int_equal(e.segments[1].duration, SYM_S / 2);
	assert_near(e.segments[1].rate, 0, 0, "seg rate");
	assert_string_equal(e.rate_csv, "rates.csv");
	assert_string_equal(sym_policy_name(&e.policy), "timeout");
	assert_string_equal(param_text(&e.policy, "timeout"), "30%");
	assert_int_equal(e.gather.rule, SYM_GATHER_EARLY);
	assert_int_equal(e.gather.target, 8);
	assert_near(e.ctrl_ms, 1, 0, "ctrl");
	assert_near(e.data_ms, 0.5, 0, "data");
	assert_near(e.resp_ms, 2, 0, "resp");
	assert_near(e.jitter, 0.1, 0, "jitter");
	assert_near(e.duration_s, 20, 0, "duration_s");
	assert_near(sym_experiment_duration(&e), 20, 0, "duration");
	assert_near(e.warmup_s, 2, 0, "warmup");
	assert_int_equal(e.seed, 42);
	assert_near(e.max_bad_rate, 0.02, 0, "max_bad_rate");
	assert_near(e.tolerance, 0.01, 0, "tolerance");
	assert_int_equal(e.criterion, SYM_CRITERION_AGGREGATE);
	assert_int_equal(e.replications, 7);

	/* the other spellings: "all", no segments, no CSV, early = early:auto, a
	 * partial network object */
	apply_ok(&e, "{\"models\": \"all\", \"segments\": [], \"rate_csv\": \"\", \"drop\": \"early\","
		     " \"arrival\": \"uniform\", \"popularity\": \"equal\", \"policy\": \"eager\","
		     " \"network\": {\"data_ms\": 0}, \"seed\": 0}");
	assert_true(cJSON_IsString(e.models_json));
	assert_string_equal(e.models_json->valuestring, "all");
	assert_null(e.segments);
	assert_int_equal(e.nseg, 0);
	assert_string_equal(e.rate_csv, "");
	assert_int_equal(e.gather.rule, SYM_GATHER_EARLY);
	assert_int_equal(e.gather.target, 0);
	assert_int_equal(e.arrival.kind, SYM_ARRIVAL_UNIFORM);
	assert_int_equal(e.popularity.kind, SYM_POP_EQUAL);
	assert_string_equal(sym_policy_name(&e.policy), "eager");
	assert_near(e.ctrl_ms, 1, 0, "ctrl untouched");
	assert_near(e.data_ms, 0, 0, "data");
	assert_near(e.resp_ms, 2, 0, "resp untouched");
	assert_int_equal(e.seed, 0);
	apply_ok(&e, "{\"drop\": \"lazy\", \"seed\": 9007199254740991, \"criterion\": \"per-model\", \"replications\": 1000}");
	assert_int_equal(e.criterion, SYM_CRITERION_PER_MODEL);
	assert_int_equal(e.replications, 1000);
	assert_int_equal(e.gather.rule, SYM_GATHER_LAZY);
	assert_int_equal(e.seed, 9007199254740991ULL);
	apply_ok(&e, "{}");
	sym_experiment_finish(&e);
}

static void test_apply_json_unknown_key(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{ "{\"rates\": 5}", "rates" },
		{ "{\"Gpus\": 5}", "Gpus" },
		{ "{\"network.ctrl_ms\": 1}", "network.ctrl_ms" },
		{ "{\"ctrl_ms\": 1}", "ctrl_ms" },
		{ "{\"profile\": \"1,2\"}", "profile" },
		{ "{\"gpus\": 2, \"nosuch\": true}", "nosuch" },
	};
	for (size_t i = 0; i < NELEMS(cases); i++) {
		struct sym_experiment e;
		init(&e);
		char err[1024] = "";
		int rc = apply_text(&e, cases[i][0], "origin-7.json", err, sizeof(err));
		if (rc != -EINVAL)
			print_error("%s: rc %d\n", cases[i][0], rc);
		assert_int_equal(rc, -EINVAL);
		assert_contains(err, "origin-7.json");
		assert_contains(err, cases[i][1]);
		sym_experiment_finish(&e);
	}

	/* not an object at all */
	struct sym_experiment e;
	init(&e);
	char err[1024] = "";
	assert_int_equal(apply_text(&e, "[1, 2]", "origin-8.json", err, sizeof(err)), -EINVAL);
	assert_contains(err, "origin-8.json");
	sym_experiment_finish(&e);
}

static void test_apply_json_bad_values(void **state)
{
	(void)state;
	/* JSON, then the key (or sub-key) the message must name */
	static const char *const cases[][2] = {
		{ "{\"gpus\": 0}", "gpus" },
		{ "{\"gpus\": 1.5}", "gpus" },
		{ "{\"gpus\": -3}", "gpus" },
		{ "{\"gpus\": \"8\"}", "gpus" },
		{ "{\"gpus\": true}", "gpus" },
		{ "{\"gpus\": null}", "gpus" },
		{ "{\"gpus\": 1e300}", "gpus" },
		{ "{\"rate\": -1}", "rate" },
		{ "{\"rate\": 0}", "rate" },
		{ "{\"rate\": \"fast\"}", "rate" },
		{ "{\"rate\": 1e300}", "rate" },
		{ "{\"slo_ms\": 0}", "slo_ms" },
		{ "{\"slo_ms\": -5}", "slo_ms" },
		{ "{\"slo_ms\": \"20\"}", "slo_ms" },
		{ "{\"arrival\": \"gamma:0\"}", "arrival" },
		{ "{\"arrival\": \"gamma:-1\"}", "arrival" },
		{ "{\"arrival\": \"gamma:\"}", "arrival" },
		{ "{\"arrival\": \"bursty\"}", "arrival" },
		{ "{\"arrival\": \"\"}", "arrival" },
		{ "{\"arrival\": 1}", "arrival" },
		{ "{\"popularity\": \"zipf:-1\"}", "popularity" },
		{ "{\"popularity\": \"zipf\"}", "popularity" },
		{ "{\"popularity\": \"uniform\"}", "popularity" },
		{ "{\"popularity\": 1}", "popularity" },
		{ "{\"policy\": \"nosuch\"}", "policy" },
		{ "{\"policy\": \"timeout:abc\"}", "policy" },
		{ "{\"policy\": \"timeout:-5\"}", "policy" },
		{ "{\"policy\": \"timeout:\"}", "policy" },
		{ "{\"policy\": \"\"}", "policy" },
		{ "{\"policy\": 3}", "policy" },
		{ "{\"drop\": \"early:0\"}", "drop" },
		{ "{\"drop\": \"early:-2\"}", "drop" },
		{ "{\"drop\": \"early:x\"}", "drop" },
		{ "{\"drop\": \"late\"}", "drop" },
		{ "{\"drop\": 8}", "drop" },
		{ "{\"network\": {\"ctrl_ms\": -1}}", "ctrl_ms" },
		{ "{\"network\": {\"data_ms\": \"1\"}}", "data_ms" },
		{ "{\"network\": {\"resp_ms\": -0.5}}", "resp_ms" },
		{ "{\"network\": {\"tail_ms\": -1}}", "tail_ms" },
		{ "{\"num_models\": -1}", "num_models" },
		{ "{\"num_models\": 2.5}", "num_models" },
		{ "{\"gpus_per_model\": -1}", "gpus_per_model" },
		{ "{\"gpus_per_model\": \"2\"}", "gpus_per_model" },
		{ "{\"network\": {\"latency_ms\": 1}}", "latency_ms" },
		{ "{\"network\": 5}", "network" },
		{ "{\"network\": [1]}", "network" },
		{ "{\"jitter\": 1.5}", "jitter" },
		{ "{\"jitter\": 1}", "jitter" },
		{ "{\"jitter\": -0.1}", "jitter" },
		{ "{\"start_late_ms\": 1}", "expected [P50_MS, P99_MS]" },
		{ "{\"start_late_ms\": [1]}", "expected [P50_MS, P99_MS]" },
		{ "{\"start_late_ms\": [1, 2, 3]}", "expected [P50_MS, P99_MS]" },
		{ "{\"start_late_ms\": [2, 1]}", "expected 0 < P50 <= P99" },
		{ "{\"start_late_ms\": [0, 1]}", "expected 0 < P50 <= P99" },
		{ "{\"start_late_ms\": [-1, 1]}", "'start_late_ms'[0]" },
		{ "{\"start_late_ms\": [1, \"2\"]}", "'start_late_ms'[1]" },
		{ "{\"start_late_ms\": [1, 1e5]}", "'start_late_ms'[1]" },
		{ "{\"seed\": -1}", "seed" },
		{ "{\"seed\": 1.5}", "seed" },
		{ "{\"seed\": \"1\"}", "seed" },
		{ "{\"seed\": 1e17}", "seed" },
		{ "{\"segments\": [{\"duration_s\": 10, \"rate\": -1}]}", "segments" },
		{ "{\"segments\": [{\"duration_s\": 0, \"rate\": 100}]}", "segments" },
		{ "{\"segments\": [{\"duration_s\": -1, \"rate\": 100}]}", "duration_s" },
		{ "{\"segments\": [{\"duration_s\": 10}]}", "segments" },
		{ "{\"segments\": [{\"duration_s\": 10, \"rate\": 5, \"extra\": 1}]}", "segments" },
		{ "{\"segments\": [{\"duration_s\": 10, \"rate\": 5}, 5]}", "segments" },
		{ "{\"segments\": {\"duration_s\": 1, \"rate\": 1}}", "segments" },
		{ "{\"segments\": \"10:1000\"}", "segments" },
		{ "{\"models\": []}", "models" },
		{ "{\"models\": [1]}", "models" },
		{ "{\"models\": [\"ResNet50\", null]}", "models" },
		{ "{\"models\": [\"\"]}", "models" },
		{ "{\"models\": \"some\"}", "models" },
		{ "{\"models\": 5}", "models" },
		{ "{\"models\": [{\"name\": \"x\", \"beta_ms\": 1}]}", "alpha_ms" },
		{ "{\"models\": [{\"name\": \"x\", \"alpha_ms\": 1, \"beta_ms\": 1, \"bogus\": 1}]}", "bogus" },
		{ "{\"duration_s\": 0}", "duration_s" },
		{ "{\"duration_s\": -1}", "duration_s" },
		{ "{\"warmup_s\": -1}", "warmup_s" },
		{ "{\"max_bad_rate\": 0}", "max_bad_rate" },
		{ "{\"max_bad_rate\": 0.6}", "max_bad_rate" },
		{ "{\"tolerance\": 0}", "tolerance" },
		{ "{\"tolerance\": 1}", "tolerance" },
		/* the ranges the simulator honours */
		{ "{\"tolerance\": 1e-7}", "tolerance" },
		{ "{\"max_bad_rate\": 1e-7}", "max_bad_rate" },
		{ "{\"arrival\": \"gamma:0.0001\"}", "below 0.001" },
		{ "{\"arrival\": \"gamma:1e-300\"}", "bursts" },
		{ "{\"arrival\": \"gamma:2e6\"}", "uniform" },
		{ "{\"popularity\": \"zipf:101\"}", "popularity" },
		{ "{\"slo_ms\": 1.5e6}", "slo_ms" },
		{ "{\"duration_s\": 0.0009}", "duration_s" },
		{ "{\"duration_s\": 1.1e7}", "duration_s" },
		{ "{\"warmup_s\": 1.1e7}", "warmup_s" },
		{ "{\"rate\": 1.1e9}", "rate" },
		{ "{\"segments\": [{\"duration_s\": 6e6, \"rate\": 1}, {\"duration_s\": 6e6, \"rate\": 1}]}", "1e+07" },
		{ "{\"segments\": [{\"duration_s\": 1, \"rate\": 2e9}]}", "rate" },
		{ "{\"models\": [{\"name\": \"x\", \"alpha_ms\": 2e6, \"beta_ms\": 1}]}", "alpha_ms" },
		{ "{\"models\": [{\"name\": \"x\", \"alpha_ms\": 0, \"beta_ms\": 1e-6}]}", "l(1)" },
		{ "{\"models\": [{\"name\": \"x\", \"latency_ms\": [1e-6, 1]}]}", "latency_ms[0]" },
		{ "{\"models\": [{\"name\": \"x\", \"latency_ms\": [1, 2e6]}]}", "latency_ms[1]" },
		{ "{\"models\": [{\"name\": \"x\", \"alpha_ms\": 1, \"beta_ms\": 1, \"static_mb\": 1e10}]}", "static_mb" },
		{ "{\"models\": [{\"name\": \"x\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 2e6}]}", "slo_ms" },
		{ "{\"zoo\": \"\"}", "zoo" },
		{ "{\"zoo\": 3}", "zoo" },
		{ "{\"rate_csv\": 5}", "rate_csv" },
		{ "{\"rate_csv\": null}", "rate_csv" },
		{ "{\"criterion\": \"foo\"}", "criterion" },
		{ "{\"criterion\": \"per_model\"}", "criterion" },
		{ "{\"criterion\": 1}", "criterion" },
		{ "{\"criterion\": \"\"}", "criterion" },
		{ "{\"replications\": -1}", "replications" },
		{ "{\"replications\": 0}", "replications" },
		{ "{\"replications\": 2.5}", "replications" },
		{ "{\"replications\": \"3\"}", "replications" },
		{ "{\"replications\": 1001}", "replications" },
	};
	for (size_t i = 0; i < NELEMS(cases); i++) {
		struct sym_experiment e;
		init(&e);
		char err[1024] = "";
		int rc = apply_text(&e, cases[i][0], "my-config.json", err, sizeof(err));
		if (rc != -EINVAL || !strstr(err, "my-config.json") || !strstr(err, cases[i][1]))
			print_error("case %s: rc %d, message '%s'\n", cases[i][0], rc, err);
		assert_int_equal(rc, -EINVAL);
		assert_contains(err, "my-config.json");
		assert_contains(err, cases[i][1]);
		sym_experiment_finish(&e);
	}
}

/* ---- apply_flag ------------------------------------------------------------- */

static void test_apply_flag_not_config(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	char err[256] = "";
	static const char *const flags[] = { "quiet", "json", "config", "trace", "nosuch", "", "gpus-count",
					     "slo_ms", "network.ctrl_ms" };
	for (size_t i = 0; i < NELEMS(flags); i++)
		assert_int_equal(sym_experiment_apply_flag(&e, flags[i], "1", err, sizeof(err)), 1);
	assert_int_equal(e.gpus, 8);
	sym_experiment_finish(&e);
}

static void test_apply_flag_profile(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	flag_ok(&e, "profile", "1.053,5.072");
	assert_true(cJSON_IsArray(e.models_json));
	assert_int_equal(cJSON_GetArraySize(e.models_json), 1);
	flag_ok(&e, "slo", "25");
	resolve_ok(&e);
	assert_int_equal(e.nmodels, 1);
	assert_string_equal(e.models[0].name, "model");
	assert_near(e.models[0].alpha_ms, 1.053, 0, "alpha");
	assert_near(e.models[0].beta_ms, 5.072, 0, "beta");
	assert_near(e.model_slo_ms[0], 25, 0, "slo");
	/* (25 - 5.072) / 1.053 = 18.9 */
	assert_int_equal(e.profiles[0].max_batch, 18);
	assert_int_equal(e.profiles[0].lat[1], sym_ms(6.125));
	assert_near(e.shares[0], 1, 0, "share");
	sym_experiment_finish(&e);

	static const char *const bad[] = { "x", "1", "1,", ",2", "1,2,3", "a,b", "1;2", "", "-1,5", "0,0",
					   "nan,1", "inf,1", "1,5ms" };
	for (size_t i = 0; i < NELEMS(bad); i++) {
		init(&e);
		char err[1024] = "";
		int rc = sym_experiment_apply_flag(&e, "profile", bad[i], err, sizeof(err));
		if (rc != -EINVAL)
			print_error("--profile '%s': rc %d\n", bad[i], rc);
		assert_int_equal(rc, -EINVAL);
		assert_contains(err, "--profile");
		sym_experiment_finish(&e);
	}
}

static void test_apply_flag_models(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	flag_ok(&e, "models", "ResNet50,VGG16");
	assert_true(cJSON_IsArray(e.models_json));
	assert_int_equal(cJSON_GetArraySize(e.models_json), 2);
	resolve_ok(&e);
	assert_int_equal(e.nmodels, 2);
	assert_string_equal(e.models[0].name, "ResNet50");
	assert_string_equal(e.models[1].name, "VGG16");
	assert_near(e.models[0].alpha_ms, 0.268, 0, "alpha");
	assert_near(e.models[1].alpha_ms, 0.660, 0, "alpha");
	assert_near(e.model_slo_ms[1], 20, 0, "slo");
	assert_near(e.shares[0], 0.5, 0, "share");
	assert_near(e.shares[1], 0.5, 0, "share");

	flag_ok(&e, "models", "all");
	assert_true(cJSON_IsString(e.models_json));
	resolve_ok(&e);
	assert_int_equal(e.nmodels, 37);

	flag_ok(&e, "models", "BERT");
	resolve_ok(&e);
	assert_int_equal(e.nmodels, 1);
	assert_string_equal(e.models[0].name, "BERT");
	sym_experiment_finish(&e);

	static const char *const bad[] = { "", "ResNet50,,VGG16", "ResNet50,", ",ResNet50" };
	for (size_t i = 0; i < NELEMS(bad); i++) {
		init(&e);
		char err[1024] = "";
		int rc = sym_experiment_apply_flag(&e, "models", bad[i], err, sizeof(err));
		if (rc != -EINVAL)
			print_error("--models '%s': rc %d\n", bad[i], rc);
		assert_int_equal(rc, -EINVAL);
		assert_contains(err, "--models");
		sym_experiment_finish(&e);
	}
}

static void test_apply_flag_segments(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	flag_ok(&e, "segments", "10:1000,5:3000");
	assert_int_equal(e.nseg, 2);
	assert_int_equal(e.segments[0].duration, 10 * SYM_S);
	assert_near(e.segments[0].rate, 1000, 0, "rate 0");
	assert_int_equal(e.segments[1].duration, 5 * SYM_S);
	assert_near(e.segments[1].rate, 3000, 0, "rate 1");
	assert_near(sym_experiment_duration(&e), 15, 0, "duration");

	flag_ok(&e, "segments", "0.25:0");
	assert_int_equal(e.nseg, 1);
	assert_int_equal(e.segments[0].duration, SYM_S / 4);
	assert_near(e.segments[0].rate, 0, 0, "rate");
	assert_near(sym_experiment_duration(&e), 0.25, 0, "duration");
	/* an explicit duration wins over the schedule's length */
	flag_ok(&e, "duration", "7");
	assert_near(sym_experiment_duration(&e), 7, 0, "duration");
	sym_experiment_finish(&e);

	static const char *const bad[] = { "10", "10:", ":5", "10:abc", "abc:10", "0:100", "-1:100", "10:-5",
					   "", "10:1000,", ",10:1000", "10:1000;5:3000", "10:1000:5", "1e8:1" };
	for (size_t i = 0; i < NELEMS(bad); i++) {
		init(&e);
		char err[1024] = "";
		int rc = sym_experiment_apply_flag(&e, "segments", bad[i], err, sizeof(err));
		if (rc != -EINVAL)
			print_error("--segments '%s': rc %d\n", bad[i], rc);
		assert_int_equal(rc, -EINVAL);
		assert_contains(err, "--segments");
		sym_experiment_finish(&e);
	}
}

static void test_apply_flag_scalars(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	flag_ok(&e, "zoo", "gtx1080ti");
	flag_ok(&e, "slo", "30");
	flag_ok(&e, "gpus", "3");
	flag_ok(&e, "rate", "1500.5");
	flag_ok(&e, "arrival", "gamma:2");
	flag_ok(&e, "popularity", "zipf:0.5");
	flag_ok(&e, "rate-csv", "trace.csv");
	flag_ok(&e, "policy", "timeout:5");
	flag_ok(&e, "drop", "early:4");
	flag_ok(&e, "ctrl-ms", "0.5");
	flag_ok(&e, "data-ms", "0.01");
	flag_ok(&e, "resp-ms", "1");
	flag_ok(&e, "tail-ms", "0.25");
	flag_ok(&e, "jitter", "0.2");
	flag_ok(&e, "start-late", "0.05,1.5");
	flag_ok(&e, "duration", "12");
	flag_ok(&e, "warmup", "1.5");
	flag_ok(&e, "seed", "77");
	flag_ok(&e, "max-bad-rate", "0.05");
	flag_ok(&e, "tolerance", "0.02");
	flag_ok(&e, "criterion", "aggregate");
	flag_ok(&e, "seeds", "5");
	assert_int_equal(e.criterion, SYM_CRITERION_AGGREGATE);
	assert_int_equal(e.replications, 5);
	assert_string_equal(e.zoo, "gtx1080ti");
	assert_near(e.slo_ms, 30, 0, "slo");
	assert_int_equal(e.gpus, 3);
	assert_near(e.rate, 1500.5, 0, "rate");
	assert_int_equal(e.arrival.kind, SYM_ARRIVAL_GAMMA);
	assert_near(e.arrival.shape, 2, 0, "shape");
	assert_int_equal(e.popularity.kind, SYM_POP_ZIPF);
	assert_near(e.popularity.s, 0.5, 0, "s");
	assert_string_equal(e.rate_csv, "trace.csv");
	assert_string_equal(sym_policy_name(&e.policy), "timeout");
	assert_string_equal(param_text(&e.policy, "timeout"), "5");
	assert_int_equal(e.gather.rule, SYM_GATHER_EARLY);
	assert_int_equal(e.gather.target, 4);
	assert_near(e.ctrl_ms, 0.5, 0, "ctrl");
	assert_near(e.data_ms, 0.01, 0, "data");
	assert_near(e.resp_ms, 1, 0, "resp");
	assert_near(e.jitter, 0.2, 0, "jitter");
	assert_near(e.late_p50_ms, 0.05, 0, "late_p50_ms");
	assert_near(e.late_p99_ms, 1.5, 0, "late_p99_ms");
	assert_near(e.duration_s, 12, 0, "duration");
	assert_near(e.warmup_s, 1.5, 0, "warmup");
	assert_int_equal(e.seed, 77);
	assert_near(e.max_bad_rate, 0.05, 0, "max_bad_rate");
	assert_near(e.tolerance, 0.02, 0, "tolerance");
	sym_experiment_finish(&e);

	static const char *const bad[][2] = {
		{ "gpus", "1.5" }, { "gpus", "abc" }, { "gpus", "" }, { "gpus", "0" },
		{ "rate", "0" }, { "rate", "1e999" }, { "rate", "-5" }, { "rate", "1k" },
		{ "slo", "0" }, { "seed", "-1" }, { "seed", "1.5" }, { "jitter", "2" },
		{ "policy", "nosuch" }, { "policy", "timeout:abc" }, { "drop", "early:0" },
		{ "arrival", "gamma:0" }, { "popularity", "zipf:-1" }, { "ctrl-ms", "-1" },
		{ "data-ms", "x" }, { "resp-ms", "-0.1" }, { "tail-ms", "-2" }, { "num-models", "x" },
		{ "start-late", "1" }, { "start-late", "1,x" }, { "start-late", "2,1" }, { "start-late", "0,1" },
		{ "gpus-per-model", "-0.5" }, { "duration", "0" }, { "warmup", "-1" },
		{ "max-bad-rate", "0" }, { "tolerance", "0.9" }, { "zoo", "" },
		{ "seeds", "0" }, { "seeds", "x" }, { "seeds", "-2" }, { "seeds", "1.5" }, { "seeds", "" },
		{ "criterion", "foo" }, { "criterion", "Per-Model" }, { "criterion", "" },
	};
	for (size_t i = 0; i < NELEMS(bad); i++) {
		init(&e);
		char err[1024] = "";
		int rc = sym_experiment_apply_flag(&e, bad[i][0], bad[i][1], err, sizeof(err));
		char opt[64];
		snprintf(opt, sizeof(opt), "--%s", bad[i][0]);
		if (rc != -EINVAL || !strstr(err, opt))
			print_error("%s '%s': rc %d, message '%s'\n", opt, bad[i][1], rc, err);
		assert_int_equal(rc, -EINVAL);
		assert_contains(err, opt);
		sym_experiment_finish(&e);
	}
}

/* String-valued flags take any text: a file may be called "2024". */
static void test_apply_flag_path_values(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	char err[1024] = "";
	int rc_csv = sym_experiment_apply_flag(&e, "rate-csv", "2024", err, sizeof(err));
	int rc_zoo = sym_experiment_apply_flag(&e, "zoo", "1e3", err, sizeof(err));
	char csv[sizeof(e.rate_csv)], zoo[sizeof(e.zoo)];
	snprintf(csv, sizeof(csv), "%s", e.rate_csv);
	snprintf(zoo, sizeof(zoo), "%s", e.zoo);
	sym_experiment_finish(&e);
	if (rc_csv || rc_zoo)
		print_error("%s\n", err);
	assert_int_equal(rc_csv, 0);
	assert_string_equal(csv, "2024");
	assert_int_equal(rc_zoo, 0);
	assert_string_equal(zoo, "1e3");
}

static void test_flags_override_json(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	apply_ok(&e, "{\"gpus\": 4, \"rate\": 500, \"policy\": \"eager\", \"models\": [\"VGG16\"],"
		     " \"segments\": [{\"duration_s\": 20, \"rate\": 10}], \"slo_ms\": 40, \"seed\": 5,"
		     " \"network\": {\"ctrl_ms\": 2}, \"drop\": \"early:3\", \"zoo\": \"gtx1080ti\"}");
	flag_ok(&e, "gpus", "16");
	flag_ok(&e, "rate", "2000");
	flag_ok(&e, "policy", "symphony");
	flag_ok(&e, "models", "ResNet50");
	flag_ok(&e, "segments", "1:2,3:4");
	flag_ok(&e, "slo", "45");
	flag_ok(&e, "seed", "6");
	flag_ok(&e, "ctrl-ms", "0");
	flag_ok(&e, "drop", "lazy");
	flag_ok(&e, "zoo", "a100");
	assert_int_equal(e.gpus, 16);
	assert_near(e.rate, 2000, 0, "rate");
	assert_string_equal(sym_policy_name(&e.policy), "symphony");
	assert_int_equal(e.nseg, 2);
	assert_near(sym_experiment_duration(&e), 4, 0, "duration");
	assert_near(e.slo_ms, 45, 0, "slo");
	assert_int_equal(e.seed, 6);
	assert_near(e.ctrl_ms, 0, 0, "ctrl");
	assert_int_equal(e.gather.rule, SYM_GATHER_LAZY);
	assert_string_equal(e.zoo, "a100");
	flag_ok(&e, "warmup", "1");
	resolve_ok(&e);
	assert_int_equal(e.nmodels, 1);
	assert_string_equal(e.models[0].name, "ResNet50");
	assert_near(e.models[0].alpha_ms, 0.268, 0, "a100 alpha");
	assert_near(e.model_slo_ms[0], 45, 0, "slo");
	sym_experiment_finish(&e);

	/* --profile replaces the JSON's model list too */
	init(&e);
	apply_ok(&e, "{\"models\": [\"VGG16\", \"BERT\"]}");
	flag_ok(&e, "profile", "1,5");
	flag_ok(&e, "slo", "20");
	resolve_ok(&e);
	assert_int_equal(e.nmodels, 1);
	assert_string_equal(e.models[0].name, "model");
	sym_experiment_finish(&e);
}

/* ---- resolve -------------------------------------------------------------- */

static void check_resolved_zoo(const char *zoo, size_t n)
{
	struct sym_experiment e;
	init(&e);
	flag_ok(&e, "zoo", zoo);
	if (!strcmp(zoo, "gtx1080ti")) {
		/* the 35 models do not fit one 1080 Ti together (15,446 MB): two sub-clusters do */
		static const char *const want[] = { "35 models need 15446 MB", "gtx1080ti", "11264", "partition", NULL };
		resolve_fails(&e, want);
		flag_ok(&e, "partition", "2");
	}
	resolve_ok(&e);
	assert_int_equal(e.nmodels, n);
	assert_non_null(e.profiles);
	assert_non_null(e.shares);
	double sum = 0;
	for (size_t i = 0; i < e.nmodels; i++) {
		const struct sym_profile *p = &e.profiles[i];
		const struct sym_model_spec *s = &e.models[i];
		sum += e.shares[i];
		assert_near(e.shares[i], 1.0 / (double)n, 1e-15, "equal share");
		assert_string_equal(p->name, s->name);
		assert_true(p->linear);
		assert_near(e.model_slo_ms[i], s->slo_ms, 0, "model slo");
		assert_true(p->max_batch >= 4);
		assert_non_null(p->lat);
		assert_true(p->lat[p->max_batch] <= sym_ms(e.model_slo_ms[i]));
		if (p->max_batch < SYM_PROFILE_BATCH_LIMIT)
			assert_true(s->alpha_ms * (p->max_batch + 1) + s->beta_ms > e.model_slo_ms[i]);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(e.models[j].name, s->name);
	}
	assert_near(sum, 1, 1e-12, "shares sum");
	size_t r = model_index(&e, "ResNet50");
	assert_near(e.models[r].slo_ms, strcmp(zoo, "a100") ? 27 : 20, 0, "ResNet50 slo");
	sym_experiment_finish(&e);
}

static void test_resolve_all_a100(void **state)
{
	(void)state;
	check_resolved_zoo("a100", 37);
}

static void test_resolve_all_gtx1080ti(void **state)
{
	(void)state;
	check_resolved_zoo("gtx1080ti", 35);
}

/* GPU memory: a model that fits no device, a model set that fits no GPU
 * without sub-clusters (the 30 copies of VGG16 on four 1080 Ti), a
 * given assignment per sub-cluster, and the switch that turns it off. */
static void test_memory_check(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	apply_ok(&e, "{\"zoo\": \"gtx1080ti\", \"models\": [\"VGG16\"], \"num_models\": 30, \"gpus\": 4}");
	/* 30 x 822 + 6200 = 30860 MB; six copies fit a GPU (6200 + 6 x 822 = 11132), so five parts */
	static const char *const want[] = { "30 models need 30860 MB", "static 24660", "dynamic 6200", "gtx1080ti",
					    "memory_mb 11264", "first-fit packing needs 5", "memory_check false", NULL };
	resolve_fails(&e, want);
	/* five sub-clusters need five GPUs */
	flag_ok(&e, "partition", "5");
	static const char *const want2[] = { "5 sub-clusters need at least one GPU each", "has 4", NULL };
	resolve_fails(&e, want2);
	flag_ok(&e, "gpus", "5");
	resolve_ok(&e);
	/* a given assignment is checked per sub-cluster: seven copies in part 0 do not fit */
	int bad[30], good[30];
	for (int i = 0; i < 30; i++) {
		bad[i] = i < 7 ? 0 : 1 + (i - 7) % 4;
		good[i] = i / 6;
	}
	cJSON *o = cJSON_CreateObject(), *p = cJSON_AddObjectToObject(o, "partition");
	cJSON_AddNumberToObject(p, "subclusters", 5);
	cJSON_AddItemToObject(p, "assign", cJSON_CreateIntArray(bad, 30));
	char err[1024];
	assert_int_equal(sym_experiment_apply_json(&e, o, "t", err, sizeof(err)), 0);
	static const char *const want3[] = { "sub-cluster 0's models need 11954 MB", "static 5754", NULL };
	resolve_fails(&e, want3);
	cJSON_ReplaceItemInObject(p, "assign", cJSON_CreateIntArray(good, 30));
	assert_int_equal(sym_experiment_apply_json(&e, o, "t", err, sizeof(err)), 0);
	resolve_ok(&e);
	/* the echo carries the assignment */
	cJSON *echo = sym_experiment_to_json(&e);
	cJSON *ea = cJSON_GetObjectItem(cJSON_GetObjectItem(echo, "partition"), "assign");
	assert_int_equal(cJSON_GetArraySize(ea), 30);
	assert_int_equal(cJSON_GetArrayItem(ea, 29)->valueint, 4);
	/* and the epochs' noise bound, 2 by default */
	assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(echo, "partition"), "noise_sigmas")->valuedouble == 2);
	cJSON_Delete(echo);
	/* a wrong length, a part out of range, an assignment without a count */
	cJSON_ReplaceItemInObject(p, "assign", cJSON_CreateIntArray(good, 29));
	assert_int_equal(sym_experiment_apply_json(&e, o, "t", err, sizeof(err)), 0);
	static const char *const want4[] = { "29 entries for 30 models", NULL };
	resolve_fails(&e, want4);
	good[3] = 5;
	cJSON_ReplaceItemInObject(p, "assign", cJSON_CreateIntArray(good, 30));
	assert_int_equal(sym_experiment_apply_json(&e, o, "t", err, sizeof(err)), 0);
	static const char *const want5[] = { "partition.assign[3]", "VGG16#4", "not below subclusters (5)", NULL };
	resolve_fails(&e, want5);
	cJSON_Delete(o);
	assert_true(apply_text(&e, "{\"partition\": {\"sub\": 1}}", "t", err, sizeof(err)) == -EINVAL);
	assert_contains(err, "unknown key (expected subclusters");
	assert_true(apply_text(&e, "{\"partition\": {\"assign\": [0, -1]}}", "t", err, sizeof(err)) == -EINVAL);
	assert_contains(err, "assign[1]");
	assert_true(apply_text(&e, "{\"partition\": {\"noise_sigmas\": -1}}", "t", err, sizeof(err)) == -EINVAL);
	assert_contains(err, "noise_sigmas: expected a number from 0 to 100, got -1");
	assert_true(apply_text(&e, "{\"partition\": {\"noise_sigmas\": 1000}}", "t", err, sizeof(err)) == -EINVAL);
	apply_ok(&e, "{\"partition\": {\"noise_sigmas\": 0}}");
	assert_true(e.partition.noise_sigmas == 0);
	assert_true(apply_text(&e, "{\"partition\": {\"phase_s\": -1}}", "t", err, sizeof(err)) == -EINVAL);
	assert_contains(err, "phase_s");
	apply_ok(&e, "{\"partition\": {\"epoch_s\": 60, \"phase_s\": 60}}");
	static const char *const want_phase[] = { "partition.phase_s: 60 s, but it must be below epoch_s (60 s)", NULL };
	resolve_fails(&e, want_phase);
	apply_ok(&e, "{\"partition\": {\"phase_s\": 0}}");
	assert_true(apply_text(&e, "{\"partition\": \"many\"}", "t", err, sizeof(err)) == -EINVAL);
	assert_true(apply_text(&e, "{\"memory_check\": 3}", "t", err, sizeof(err)) == -EINVAL);
	/* off: memory is not modelled */
	apply_ok(&e, "{\"partition\": {\"subclusters\": 0}, \"memory_check\": false}");
	free(e.partition.assign);
	e.partition.assign = NULL;
	e.partition.nassign = 0;
	resolve_ok(&e);
	/* a model larger than the device */
	apply_ok(&e, "{\"memory_check\": true, \"models\": [{\"name\": \"huge\", \"alpha_ms\": 1, \"beta_ms\": 5, "
		 "\"slo_ms\": 50, \"static_mb\": 9000, \"dynamic_mb\": 3000}], \"num_models\": 0}");
	static const char *const want6[] = { "model 'huge' needs 12000 MB", "gtx1080ti", NULL };
	resolve_fails(&e, want6);
	sym_experiment_finish(&e);
}

static void test_resolve_unknown_model(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	flag_ok(&e, "models", "ResNet50,NoSuchNet");
	static const char *const want[] = { "NoSuchNet", NULL };
	resolve_fails(&e, want);
	/* case matters */
	flag_ok(&e, "models", "resnet50");
	static const char *const want2[] = { "resnet50", NULL };
	resolve_fails(&e, want2);
	/* EfficientNetB7 is an a100 model only */
	flag_ok(&e, "models", "EfficientNetB7");
	resolve_ok(&e);
	flag_ok(&e, "zoo", "gtx1080ti");
	static const char *const want3[] = { "EfficientNetB7", NULL };
	resolve_fails(&e, want3);
	sym_experiment_finish(&e);
}

static void test_resolve_duplicate_model(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	flag_ok(&e, "models", "ResNet50,VGG16,ResNet50");
	static const char *const want[] = { "ResNet50", NULL };
	resolve_fails(&e, want);
	apply_ok(&e, "{\"models\": [\"VGG16\", {\"name\": \"VGG16\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 9}]}");
	static const char *const want2[] = { "VGG16", NULL };
	resolve_fails(&e, want2);
	sym_experiment_finish(&e);
}

static void test_resolve_slo_too_short(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	/* a100 ResNet50: l(1) = 5.44 ms */
	flag_ok(&e, "models", "VGG16,ResNet50");
	flag_ok(&e, "slo", "5");
	static const char *const want[] = { "l(1)", NULL };
	resolve_fails(&e, want);
	flag_ok(&e, "models", "ResNet50");
	static const char *const want_r[] = { "ResNet50", "l(1)", "5.44", NULL };
	resolve_fails(&e, want_r);
	flag_ok(&e, "slo", "5.44");
	resolve_ok(&e);
	assert_int_equal(e.profiles[0].max_batch, 1);
	sym_experiment_finish(&e);

	init(&e);
	flag_ok(&e, "profile", "1,5");
	flag_ok(&e, "slo", "5.5");
	static const char *const want2[] = { "'model'", "l(1)", NULL };
	resolve_fails(&e, want2);
	sym_experiment_finish(&e);

	/* a model's own SLO, and a table model */
	init(&e);
	apply_ok(&e, "{\"models\": [{\"name\": \"Tab\", \"latency_ms\": [4, 5], \"slo_ms\": 3}]}");
	static const char *const want3[] = { "Tab", "l(1)", NULL };
	resolve_fails(&e, want3);
	sym_experiment_finish(&e);
}

static void test_resolve_needs_an_slo(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	flag_ok(&e, "profile", "1,5");
	static const char *const want[] = { "model", "SLO", NULL };
	resolve_fails(&e, want);
	flag_ok(&e, "slo", "12");
	resolve_ok(&e);
	assert_int_equal(e.profiles[0].max_batch, 7);
	assert_int_equal(e.profiles[0].lat[7], 12 * SYM_MS);
	assert_near(e.model_slo_ms[0], 12, 0, "slo");
	sym_experiment_finish(&e);
}

/* slo_mode at-least: the grid's SLO is a floor under each model's own; the
 * echo reruns the same SLOs; a bad mode is refused naming it; send_ahead
 * parses booleans and refuses anything else. */
static void test_slo_mode_and_send_ahead(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	flag_ok(&e, "zoo", "gtx1080ti");
	flag_ok(&e, "models", "NASNetMobile,MobileNetV3Small,BERT");
	flag_ok(&e, "slo", "25");
	resolve_ok(&e);
	assert_near(e.model_slo_ms[model_index(&e, "NASNetMobile")], 25, 0, "all: the grid's SLO");
	flag_ok(&e, "slo-mode", "at-least");
	resolve_ok(&e);
	assert_near(e.model_slo_ms[model_index(&e, "NASNetMobile")], 33, 0, "its own, longer");
	assert_near(e.model_slo_ms[model_index(&e, "MobileNetV3Small")], 25, 0, "the floor");
	assert_near(e.model_slo_ms[model_index(&e, "BERT")], 56, 0, "its own, longer");
	cJSON *o = sym_experiment_to_json(&e);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(o, "slo_mode")->valuestring, "at-least");
	struct sym_experiment f;
	init(&f);
	char err[512] = "";
	assert_int_equal(sym_experiment_apply_json(&f, o, "echo", err, sizeof(err)), 0);
	resolve_ok(&f);
	for (size_t m = 0; m < e.nmodels; m++)
		assert_near(f.model_slo_ms[m], e.model_slo_ms[m], 0, "echo");
	cJSON_Delete(o);
	sym_experiment_finish(&f);
	assert_int_not_equal(sym_experiment_apply_flag(&e, "slo-mode", "some", err, sizeof(err)), 0);
	assert_contains(err, "--slo-mode");
	assert_contains(err, "at-least");
	flag_ok(&e, "send-ahead", "false");
	assert_false(e.send_ahead);
	flag_ok(&e, "send-ahead", "1");
	assert_true(e.send_ahead);
	apply_ok(&e, "{\"send_ahead\": false}");
	assert_false(e.send_ahead);
	assert_int_not_equal(apply_text(&e, "{\"send_ahead\": \"yes\"}", "t.json", err, sizeof(err)), 0);
	assert_contains(err, "send_ahead");
	sym_experiment_finish(&e);
}

static void test_resolve_network_delays(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	flag_ok(&e, "profile", "1,5");
	flag_ok(&e, "slo", "12");
	resolve_ok(&e);
	assert_int_equal(e.profiles[0].max_batch, 7);
	flag_ok(&e, "ctrl-ms", "3");
	resolve_ok(&e);
	assert_int_equal(e.profiles[0].max_batch, 4);
	assert_int_equal(e.profiles[0].lat[4], 9 * SYM_MS);
	assert_near(e.model_slo_ms[0], 12, 0, "the SLO itself is unchanged");
	/* the response delay counts the same */
	flag_ok(&e, "ctrl-ms", "0");
	flag_ok(&e, "resp-ms", "3");
	resolve_ok(&e);
	assert_int_equal(e.profiles[0].max_batch, 4);
	/* with per-request transfer the table still covers every feasible
	 * batch: b + 5 + 1 + 1*b + 1 <= 12 holds up to b = 2 */
	flag_ok(&e, "ctrl-ms", "1");
	flag_ok(&e, "data-ms", "1");
	flag_ok(&e, "resp-ms", "1");
	resolve_ok(&e);
	assert_true(e.profiles[0].max_batch >= 2);
	/* delays that leave no room for l(1) */
	flag_ok(&e, "data-ms", "0");
	flag_ok(&e, "resp-ms", "0");
	flag_ok(&e, "ctrl-ms", "7");
	static const char *const want[] = { "model", "l(1)", "network", NULL };
	resolve_fails(&e, want);
	flag_ok(&e, "ctrl-ms", "6");
	resolve_ok(&e);
	assert_int_equal(e.profiles[0].max_batch, 1);
	sym_experiment_finish(&e);
}

static void test_resolve_warmup_vs_duration(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	flag_ok(&e, "models", "ResNet50");
	flag_ok(&e, "warmup", "30");
	static const char *const want[] = { "warmup", NULL };
	resolve_fails(&e, want);
	flag_ok(&e, "warmup", "29.5");
	resolve_ok(&e);

	flag_ok(&e, "duration", "10");
	flag_ok(&e, "warmup", "10");
	resolve_fails(&e, want);
	flag_ok(&e, "warmup", "12");
	resolve_fails(&e, want);
	flag_ok(&e, "warmup", "0");
	resolve_ok(&e);
	sym_experiment_finish(&e);

	/* the length of a schedule counts */
	init(&e);
	flag_ok(&e, "models", "ResNet50");
	flag_ok(&e, "segments", "1:100,1:200");
	resolve_fails(&e, want); /* default warm-up 3 s >= 2 s */
	flag_ok(&e, "segments", "1:100,2.5:200");
	resolve_ok(&e);
	assert_near(sym_experiment_duration(&e), 3.5, 0, "duration");
	sym_experiment_finish(&e);
}

/* Per-model rates: they split the load and sum to the total, --rate scales them, the echo
 * reloads to the same load; a model without one, a popularity or a rate table besides, refused. */
static void test_model_rates(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	const char *two = "{\"models\": ["
			  "{\"name\": \"A\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10, \"rate\": 100},"
			  "{\"name\": \"B\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10, \"rate\": 300}]}";
	apply_ok(&e, two);
	resolve_ok(&e);
	assert_near(e.shares[0], 0.25, 1e-15, "A");
	assert_near(e.shares[1], 0.75, 1e-15, "B");
	assert_near(e.rate, 400, 1e-12, "the total is their sum");
	assert_near(sym_experiment_model_rps(&e, 1), 300, 1e-9, "B's req/s");
	/* the echo reloads to the same load */
	cJSON *echo = sym_experiment_to_json(&e);
	char *text = cJSON_PrintUnformatted(echo);
	cJSON_Delete(echo);
	struct sym_experiment f;
	init(&f);
	apply_ok(&f, text);
	free(text);
	resolve_ok(&f);
	assert_near(f.rate, 400, 1e-12, "echo's total");
	assert_near(f.shares[1], 0.75, 1e-15, "echo's share");
	sym_experiment_finish(&f);
	/* --rate scales them all (a what-if): the shares stay */
	flag_ok(&e, "rate", "800");
	resolve_ok(&e);
	assert_near(e.rate, 800, 1e-12, "scaled total");
	assert_near(sym_experiment_model_rps(&e, 0), 200, 1e-9, "A scaled");
	flag_ok(&e, "popularity", "zipf:1");
	resolve_fails(&e, (const char *const[]){ "popularity: the models carry their own rates", NULL });
	sym_experiment_finish(&e);
	init(&e);
	apply_ok(&e, "{\"models\": ["
		     "{\"name\": \"A\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10, \"rate\": 100},"
		     "{\"name\": \"B\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10}]}");
	resolve_fails(&e, (const char *const[]){ "1 of the 2 models have a \"rate\", 'B' has none", NULL });
	sym_experiment_finish(&e);
	init(&e);
	apply_ok(&e, two);
	flag_ok(&e, "segments", "5:100,5:200");
	resolve_fails(&e, (const char *const[]){ "per-model rates with segments", NULL });
	sym_experiment_finish(&e);
	/* shares: weights that split --rate (default 1000 req/s) */
	init(&e);
	apply_ok(&e, "{\"models\": [{\"name\": \"A\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10, \"share\": 3},"
		     "{\"name\": \"B\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10, \"share\": 1}], \"rate\": 400}");
	resolve_ok(&e);
	assert_near(e.shares[0], 0.75, 1e-15, "A's share");
	assert_near(sym_experiment_model_rps(&e, 1), 100, 1e-9, "B's req/s");
	assert_near(e.rate, 400, 0, "the total stays --rate");
	sym_experiment_finish(&e);
	init(&e);
	apply_ok(&e, "{\"models\": [{\"name\": \"A\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10, \"share\": 3},"
		     "{\"name\": \"B\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10, \"rate\": 1}]}");
	resolve_fails(&e, (const char *const[]){ "1 models have a \"rate\" (req/s) and 1 a \"share\"", NULL });
	sym_experiment_finish(&e);
	init(&e);
	apply_ok(&e, "{\"models\": [{\"name\": \"A\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10, \"share\": 3, "
		     "\"rate\": 5}]}");
	resolve_fails(&e, (const char *const[]){ "'A' has a \"rate\" and a \"share\"", NULL });
	sym_experiment_finish(&e);
	init(&e);
	apply_ok(&e, "{\"models\": [{\"name\": \"A\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10, \"share\": 3},"
		     "{\"name\": \"B\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10}]}");
	resolve_fails(&e, (const char *const[]){ "1 of the 2 models have a \"share\", 'B' has none", NULL });
	sym_experiment_finish(&e);
	/* a zoo model named in an object without a profile: the zoo's, with the object's keys over it */
	init(&e);
	apply_ok(&e, "{\"zoo\": \"a100\", \"models\": [{\"name\": \"ResNet50\", \"rate\": 100, \"slo_ms\": 30}, "
		     "{\"name\": \"VGG16\", \"rate\": 300}]}");
	resolve_ok(&e);
	assert_near(e.models[0].alpha_ms, 0.268, 1e-12, "ResNet50's alpha from the zoo");
	assert_near(e.models[0].slo_ms, 30, 1e-12, "its own SLO over the zoo's 20");
	assert_near(e.models[1].slo_ms, 20, 1e-12, "VGG16's SLO from the zoo");
	assert_near(sym_experiment_model_rps(&e, 1), 300, 1e-9, "VGG16's rate");
	assert_near(e.rate, 400, 1e-12, "the total");
	sym_experiment_finish(&e);
	init(&e);
	apply_ok(&e, "{\"zoo\": \"a100\", \"models\": [{\"name\": \"ResNt50\", \"rate\": 100}]}");
	resolve_fails(&e, (const char *const[]){ "models[0]: unknown model 'ResNt50'", "did you mean 'ResNet50'",
						  NULL });
	sym_experiment_finish(&e);
	init(&e);
	apply_ok(&e, "{\"zoo\": \"a100\", \"models\": [{\"name\": \"ResNet50\", \"rate\": 100, \"bogus\": 1}]}");
	resolve_fails(&e, (const char *const[]){ "unknown key 'bogus'", NULL });
	sym_experiment_finish(&e);
	init(&e);
	char err[1024] = "";
	assert_int_not_equal(apply_text(&e, "{\"models\": [{\"name\": \"A\", \"alpha_ms\": 1, \"beta_ms\": 1, "
					    "\"rate\": -5}]}", "test.json", err, sizeof(err)), 0);
	assert_contains(err, "key 'rate': expected a number > 0");
	sym_experiment_finish(&e);
}

static void test_resolve_zipf_shares(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	apply_ok(&e, "{\"models\": ["
		     "{\"name\": \"A\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10},"
		     "{\"name\": \"B\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10},"
		     "{\"name\": \"C\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10}],"
		     " \"popularity\": \"zipf:1\"}");
	resolve_ok(&e);
	assert_near(e.shares[0], 6.0 / 11, 1e-15, "A");
	assert_near(e.shares[1], 3.0 / 11, 1e-15, "B");
	assert_near(e.shares[2], 2.0 / 11, 1e-15, "C");
	flag_ok(&e, "popularity", "zipf:0");
	resolve_ok(&e);
	for (int i = 0; i < 3; i++)
		assert_near(e.shares[i], 1.0 / 3, 1e-15, "zipf:0 is equal");
	sym_experiment_finish(&e);

	/* the whole zoo, in zoo order */
	init(&e);
	flag_ok(&e, "popularity", "zipf:1");
	resolve_ok(&e);
	double sum = 0;
	for (size_t i = 0; i < e.nmodels; i++) {
		sum += e.shares[i];
		if (i > 0)
			assert_true(e.shares[i] < e.shares[i - 1]);
		assert_near(e.shares[i] / e.shares[0], 1.0 / (double)(i + 1), 1e-12, "1/(i+1)");
	}
	assert_near(sum, 1, 1e-12, "sum");
	sym_experiment_finish(&e);
}

static void test_resolve_trace(void **state)
{
	(void)state;
	char csv[512], csv2[512];
	write_temp("time_s,model\n0.5,A\n1.5,B\n2.25,A\n3.75,A\n", csv, sizeof(csv));
	struct sym_experiment e;
	init(&e);
	const char *two = "{\"models\": [{\"name\": \"A\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10},"
			  "{\"name\": \"B\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10}], \"warmup_s\": 0.5}";
	apply_ok(&e, two);
	flag_ok(&e, "arrival-trace", csv);
	resolve_ok(&e);
	assert_true(sym_experiment_has_schedule(&e));
	assert_near(sym_experiment_duration(&e), 4, 0, "duration: the trace's length");
	assert_near(sym_experiment_model_rate(&e, 0), 0.75, 1e-12, "A: 3 requests in 4 s");
	assert_near(sym_experiment_model_rate(&e, 1), 0.25, 1e-12, "B: 1 in 4 s");
	assert_near(e.shares[0], 0.75, 1e-12, "A's share of the requests");
	assert_near(sym_experiment_scale(&e), 1, 0, "played as written");
	/* a what-if: played twice as fast */
	flag_ok(&e, "rate-scale", "2");
	resolve_ok(&e);
	assert_near(sym_experiment_model_rps(&e, 0), 1.5, 1e-12, "A at twice the rate");
	/* the echo reloads to the same load */
	cJSON *j = sym_experiment_to_json(&e);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "arrival_trace")->valuestring, csv);
	assert_near(cJSON_GetObjectItemCaseSensitive(j, "rate_scale")->valuedouble, 2, 0, "echoed scale");
	char *text = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	struct sym_experiment f;
	init(&f);
	apply_ok(&f, text);
	free(text);
	resolve_ok(&f);
	assert_near(sym_experiment_model_rps(&f, 0), 1.5, 1e-12, "the echo's rate");
	sym_experiment_finish(&f);
	/* the scale a search may find is bounded by the load it makes */
	flag_ok(&e, "rate-scale", "1e12");
	resolve_fails(&e, (const char *const[]){ "rate_scale: 1e+12 times the schedule's mean", NULL });
	flag_ok(&e, "rate-scale", "2");
	/* one load at a time */
	flag_ok(&e, "segments", "5:100");
	resolve_fails(&e, (const char *const[]){ "arrival_trace: a trace replaces the rate schedule", NULL });
	sym_experiment_finish(&e);
	/* rate_scale scales schedules only */
	init(&e);
	apply_ok(&e, two);
	flag_ok(&e, "rate-scale", "2");
	resolve_fails(&e, (const char *const[]){ "rate_scale: scales a rate schedule", NULL });
	sym_experiment_finish(&e);
	/* a served model without a request: named, with the trace's nearest name */
	write_temp("time_s,model\n0.5,A\n1.5,Bee\n", csv2, sizeof(csv2));
	init(&e);
	apply_ok(&e, two);
	flag_ok(&e, "arrival-trace", csv2);
	resolve_fails(&e, (const char *const[]){ "no request for model 'B'", "the trace has '", NULL });
	sym_experiment_finish(&e);
	unlink(csv2);
	/* per-model rates and a trace */
	init(&e);
	apply_ok(&e, "{\"models\": [{\"name\": \"A\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10, \"rate\": 5}]}");
	flag_ok(&e, "arrival-trace", csv);
	resolve_fails(&e, (const char *const[]){ "per-model rates with arrival_trace", NULL });
	sym_experiment_finish(&e);
	unlink(csv);
	/* a missing file is named */
	init(&e);
	apply_ok(&e, two);
	flag_ok(&e, "arrival-trace", "/nonexistent/trace.csv");
	resolve_fails(&e, (const char *const[]){ "/nonexistent/trace.csv", NULL });
	sym_experiment_finish(&e);
}

static void test_resolve_rate_csv(void **state)
{
	(void)state;
	char csv[512];
	write_temp("second,model\n0,10\n1,20\n2,30\n3,40\n4,50\n", csv, sizeof(csv));
	struct sym_experiment e;
	init(&e);
	flag_ok(&e, "profile", "1,5");
	flag_ok(&e, "slo", "20");
	flag_ok(&e, "rate-csv", csv);
	flag_ok(&e, "warmup", "1");
	resolve_ok(&e);
	assert_int_equal(e.table.nrows, 5);
	assert_int_equal(e.table.ncols, 1);
	assert_non_null(e.table_col);
	assert_int_equal(e.table_col[0], 0);
	assert_near(e.table.rates[4], 50, 0, "rate");
	assert_near(sym_experiment_duration(&e), 5, 0, "duration from the table");
	cJSON *j = sym_experiment_to_json(&e);
	assert_near(cJSON_GetObjectItemCaseSensitive(j, "duration_s")->valuedouble, 5, 0, "echoed duration");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "rate_csv")->valuestring, csv);
	cJSON_Delete(j);
	/* an explicit duration wins */
	flag_ok(&e, "duration", "3");
	resolve_ok(&e);
	assert_near(sym_experiment_duration(&e), 3, 0, "explicit duration");
	sym_experiment_finish(&e);
	unlink(csv);

	/* columns are matched by name, in any order */
	write_temp("time,B,A\n0,1,2\n1,3,4\n2,5,6\n3,7,8\n", csv, sizeof(csv));
	init(&e);
	apply_ok(&e, "{\"models\": ["
		     "{\"name\": \"A\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10},"
		     "{\"name\": \"B\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 10}]}");
	flag_ok(&e, "rate-csv", csv);
	resolve_ok(&e);
	assert_int_equal(e.table_col[0], 1);
	assert_int_equal(e.table_col[1], 0);
	assert_near(sym_experiment_duration(&e), 4, 0, "duration");
	sym_experiment_finish(&e);
	unlink(csv);

	/* a served model without a column */
	write_temp("second,other\n0,1\n1,1\n2,1\n3,1\n4,1\n", csv, sizeof(csv));
	init(&e);
	flag_ok(&e, "profile", "1,5");
	flag_ok(&e, "slo", "20");
	flag_ok(&e, "rate-csv", csv);
	static const char *const want[] = { "'model'", NULL };
	resolve_fails(&e, want);
	char err[1024] = "";
	assert_true(sym_experiment_resolve(&e, err, sizeof(err)) < 0);
	assert_contains(err, csv);
	sym_experiment_finish(&e);
	unlink(csv);

	/* a missing file */
	init(&e);
	flag_ok(&e, "profile", "1,5");
	flag_ok(&e, "slo", "20");
	flag_ok(&e, "rate-csv", "/nonexistent-dir-for-symphony-tests/rates.csv");
	static const char *const want2[] = { "/nonexistent-dir-for-symphony-tests/rates.csv", NULL };
	resolve_fails(&e, want2);
	sym_experiment_finish(&e);
}

/* The duration of a CSV replay is its number of rows, so a warm-up as long as
 * the table must be rejected just as it is for a schedule or --duration. */
static void test_resolve_rate_csv_warmup(void **state)
{
	(void)state;
	char csv[512];
	write_temp("second,model\n0,10\n1,20\n", csv, sizeof(csv));
	struct sym_experiment e;
	init(&e);
	flag_ok(&e, "profile", "1,5");
	flag_ok(&e, "slo", "20");
	flag_ok(&e, "rate-csv", csv);
	/* default warm-up 3 s, table 2 s */
	static const char *const want[] = { "warmup", NULL };
	resolve_fails(&e, want);
	flag_ok(&e, "warmup", "2");
	resolve_fails(&e, want);
	flag_ok(&e, "warmup", "1");
	resolve_ok(&e);
	sym_experiment_finish(&e);
	unlink(csv);
}

/* A schedule whose rates are all 0 offers nothing to measure. */
static void test_resolve_schedule_offers_requests(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	flag_ok(&e, "models", "ResNet50");
	flag_ok(&e, "segments", "5:0,5:0");
	static const char *const want[] = { "segments", NULL };
	resolve_fails(&e, want);
	flag_ok(&e, "segments", "5:0,5:10");
	resolve_ok(&e);
	sym_experiment_finish(&e);

	char csv[512];
	write_temp("second,model,other\n0,0,5\n1,0,5\n2,0,5\n3,0,5\n4,0,5\n", csv, sizeof(csv));
	init(&e);
	flag_ok(&e, "profile", "1,5");
	flag_ok(&e, "slo", "20");
	flag_ok(&e, "rate-csv", csv);
	const char *const want2[] = { csv, NULL };
	resolve_fails(&e, want2);
	sym_experiment_finish(&e);
	unlink(csv);
}

static void test_resolve_custom_zoo(void **state)
{
	(void)state;
	char zoo[512];
	write_temp("{\"gpu\": \"t4\", \"models\": ["
		   "{\"name\": \"Small\", \"alpha_ms\": 0.5, \"beta_ms\": 1, \"slo_ms\": 10, \"static_mb\": 50},"
		   "{\"name\": \"Table\", \"latency_ms\": [2, 3, 4, 6, 9], \"slo_ms\": 8}]}",
		   zoo, sizeof(zoo));
	struct sym_experiment e;
	init(&e);
	flag_ok(&e, "zoo", zoo);
	resolve_ok(&e);
	assert_int_equal(e.nmodels, 2);
	assert_int_equal(e.profiles[0].max_batch, 18);
	assert_near(e.profiles[0].static_mb, 50, 0, "static");
	assert_false(e.profiles[1].linear);
	assert_int_equal(e.profiles[1].max_batch, 5);
	flag_ok(&e, "models", "Table");
	resolve_ok(&e);
	assert_int_equal(e.nmodels, 1);
	assert_string_equal(e.models[0].name, "Table");
	sym_experiment_finish(&e);
	unlink(zoo);

	/* a zoo that cannot be read: an error naming it, unless no model needs it */
	init(&e);
	flag_ok(&e, "zoo", zoo);
	char err[1024] = "";
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), -ENOENT);
	assert_contains(err, zoo);
	assert_false(e.resolved);
	flag_ok(&e, "profile", "1,2");
	flag_ok(&e, "slo", "10");
	resolve_ok(&e);
	sym_experiment_finish(&e);
}

static void test_resolve_again(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	resolve_ok(&e);
	resolve_ok(&e);
	assert_int_equal(e.nmodels, 37);
	flag_ok(&e, "models", "VGG16,BERT");
	resolve_ok(&e);
	assert_int_equal(e.nmodels, 2);
	flag_ok(&e, "models", "Nope");
	char err[256] = "";
	assert_true(sym_experiment_resolve(&e, err, sizeof(err)) < 0);
	assert_false(e.resolved);
	assert_int_equal(e.nmodels, 0);
	flag_ok(&e, "models", "all");
	resolve_ok(&e);
	assert_int_equal(e.nmodels, 37);
	sym_experiment_finish(&e);
}

/* ---- copies ------------------------------------------------------------------- */

static void assert_same_experiment(const struct sym_experiment *a, const struct sym_experiment *b, double rel);

/* A copy is the same experiment and shares nothing with the original. */
static void test_copy(void **state)
{
	(void)state;
	struct sym_experiment a, b;
	char err[1024] = "";
	init(&a);
	flag_ok(&a, "models", "ResNet50,VGG16,BERT");
	flag_ok(&a, "cluster", "a100:3,gtx1080ti:2");
	flag_ok(&a, "segments", "5:1000,5:2000");
	flag_ok(&a, "criterion", "aggregate");
	flag_ok(&a, "seeds", "3");
	/* unresolved: an unresolved copy */
	assert_int_equal(sym_experiment_copy(&b, &a, err, sizeof(err)), 0);
	assert_false(b.resolved);
	assert_int_equal(b.nmodels, 0);
	assert_int_equal(b.ngroups, 2);
	assert_ptr_not_equal(b.groups, a.groups);
	assert_ptr_not_equal(b.segments, a.segments);
	assert_ptr_not_equal(b.models_json, a.models_json);
	resolve_ok(&b);
	resolve_ok(&a);
	assert_same_experiment(&a, &b, 0);
	sym_experiment_finish(&b);
	/* resolved: resolved again, equal, independent */
	assert_int_equal(sym_experiment_copy(&b, &a, err, sizeof(err)), 0);
	assert_true(b.resolved);
	assert_same_experiment(&a, &b, 0);
	assert_ptr_not_equal(b.profiles, a.profiles);
	assert_ptr_not_equal(b.gpu_kind, a.gpu_kind);
	assert_int_equal(b.criterion, SYM_CRITERION_AGGREGATE);
	assert_int_equal(b.replications, 3);
	sym_experiment_finish(&a);
	/* the copy outlives its original */
	assert_int_equal(b.nmodels, 3);
	assert_string_equal(b.models[2].name, "BERT");
	assert_int_equal(b.gpus, 5);
	assert_int_equal(b.gpu_kind[4], 1);
	assert_int_equal(b.segments[1].duration, 5 * SYM_S);
	flag_ok(&b, "seeds", "2");
	resolve_ok(&b);
	sym_experiment_finish(&b);
}

/* ---- the echoed config -------------------------------------------------------- */

static void assert_close(double a, double b, double rel, const char *what)
{
	if (isnan(a) && isnan(b))
		return;
	assert_near(b, a, rel * fabs(a), what);
}

/* b reproduces a: same models, profiles and settings. rel is the relative
 * tolerance on doubles (0: exact). */
static void assert_same_experiment(const struct sym_experiment *a, const struct sym_experiment *b, double rel)
{
	assert_true(a->resolved && b->resolved);
	assert_int_equal(a->nmodels, b->nmodels);
	for (size_t i = 0; i < a->nmodels; i++) {
		const struct sym_model_spec *x = &a->models[i], *y = &b->models[i];
		assert_string_equal(x->name, y->name);
		assert_close(x->alpha_ms, y->alpha_ms, rel, "alpha_ms");
		assert_close(x->beta_ms, y->beta_ms, rel, "beta_ms");
		assert_int_equal(x->max_batch, y->max_batch);
		assert_int_equal(x->ntable, y->ntable);
		for (int k = 0; k < x->ntable; k++)
			assert_close(x->table_ms[k], y->table_ms[k], rel, "table_ms");
		assert_close(a->model_slo_ms[i], b->model_slo_ms[i], rel, "model slo");
		assert_true((x->static_mb < 0) == (y->static_mb < 0));
		if (x->static_mb >= 0)
			assert_close(x->static_mb, y->static_mb, rel, "static_mb");
		assert_true((x->dynamic_mb < 0) == (y->dynamic_mb < 0));
		const struct sym_profile *p = &a->profiles[i], *q = &b->profiles[i];
		assert_int_equal(p->max_batch, q->max_batch);
		assert_int_equal(p->linear, q->linear);
		for (int k = 0; k <= p->max_batch; k++)
			assert_int_equal(p->lat[k], q->lat[k]);
		assert_close(a->shares[i], b->shares[i], rel + 1e-15, "share");
	}
	assert_close(a->slo_ms, b->slo_ms, rel, "slo_ms");
	assert_int_equal(a->gpus, b->gpus);
	assert_close(a->rate, b->rate, rel, "rate");
	assert_int_equal(a->arrival.kind, b->arrival.kind);
	assert_close(a->arrival.shape, b->arrival.shape, rel, "arrival shape");
	assert_int_equal(a->popularity.kind, b->popularity.kind);
	assert_close(a->popularity.s, b->popularity.s, rel, "zipf s");
	assert_int_equal(a->nseg, b->nseg);
	for (size_t i = 0; i < a->nseg; i++) {
		assert_int_equal(a->segments[i].duration, b->segments[i].duration);
		assert_close(a->segments[i].rate, b->segments[i].rate, rel, "segment rate");
	}
	assert_string_equal(a->rate_csv, b->rate_csv);
	assert_true(sym_policy_equal(&a->policy, &b->policy));
	assert_int_equal(a->gather.rule, b->gather.rule);
	assert_int_equal(a->gather.target, b->gather.target);
	assert_close(a->ctrl_ms, b->ctrl_ms, rel, "ctrl_ms");
	assert_close(a->data_ms, b->data_ms, rel, "data_ms");
	assert_close(a->resp_ms, b->resp_ms, rel, "resp_ms");
	assert_close(a->tail_ms, b->tail_ms, rel, "tail_ms");
	assert_close(a->jitter, b->jitter, rel, "jitter");
	assert_close(a->late_p50_ms, b->late_p50_ms, rel, "late_p50_ms");
	assert_close(a->late_p99_ms, b->late_p99_ms, rel, "late_p99_ms");
	assert_close(sym_experiment_duration(a), sym_experiment_duration(b), rel, "duration");
	assert_close(a->warmup_s, b->warmup_s, rel, "warmup");
	assert_int_equal(a->seed, b->seed);
	assert_close(a->max_bad_rate, b->max_bad_rate, rel, "max_bad_rate");
	assert_close(a->tolerance, b->tolerance, rel, "tolerance");
	assert_int_equal(a->criterion, b->criterion);
	assert_int_equal(a->replications, b->replications);
}

/* Echoes a (resolved) and applies the echo to a fresh experiment b, as an
 * object or through text, and resolves b. */
static void echo_into(const struct sym_experiment *a, struct sym_experiment *b, bool via_text)
{
	cJSON *j = sym_experiment_to_json(a);
	assert_non_null(j);
	char *text = NULL;
	if (via_text) {
		text = cJSON_Print(j);
		assert_non_null(text);
		cJSON_Delete(j);
		j = cJSON_Parse(text);
		assert_non_null(j);
	}
	init(b);
	char err[1024] = "";
	int rc = sym_experiment_apply_json(b, j, "echo", err, sizeof(err));
	if (rc)
		print_error("applying the echo: %s\n", err);
	assert_int_equal(rc, 0);
	cJSON_Delete(j);
	cJSON_free(text);
	resolve_ok(b);
}

static void check_round_trip(struct sym_experiment *a)
{
	resolve_ok(a);
	struct sym_experiment b, c;
	echo_into(a, &b, false);
	assert_same_experiment(a, &b, 0);
	/* the echo of the echo is the same text */
	cJSON *ja = sym_experiment_to_json(a), *jb = sym_experiment_to_json(&b);
	char *ta = cJSON_PrintUnformatted(ja), *tb = cJSON_PrintUnformatted(jb);
	assert_string_equal(ta, tb);
	cJSON_free(ta);
	cJSON_free(tb);
	cJSON_Delete(ja);
	cJSON_Delete(jb);
	sym_experiment_finish(&b);
	/* cJSON prints 15 significant digits */
	echo_into(a, &c, true);
	assert_same_experiment(a, &c, 1e-14);
	sym_experiment_finish(&c);
}

static void test_echo_round_trip(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	apply_ok(&e, "{"
		     "\"models\": [\"ResNet50\","
		     " {\"name\": \"Custom\", \"latency_ms\": [2, 3, 4], \"slo_ms\": 10, \"dynamic_mb\": 300},"
		     " {\"name\": \"Lin\", \"alpha_ms\": 0.5, \"beta_ms\": 2, \"max_batch\": 8, \"slo_ms\": 9}],"
		     "\"gpus\": 3, \"rate\": 1234.5, \"arrival\": \"gamma:0.5\", \"popularity\": \"zipf:0.9\","
		     "\"policy\": \"timeout:30%\", \"drop\": \"early:6\","
		     "\"network\": {\"ctrl_ms\": 0.25, \"data_ms\": 0.01, \"resp_ms\": 0.5},"
		     "\"jitter\": 0.05, \"start_late_ms\": [0.07, 1.3], \"duration_s\": 12, \"warmup_s\": 2,"
		     "\"seed\": 987654321,"
		     "\"max_bad_rate\": 0.02, \"tolerance\": 0.01, \"criterion\": \"aggregate\","
		     "\"replications\": 4}");
	check_round_trip(&e);
	sym_experiment_finish(&e);

	/* defaults: the whole a100 zoo */
	init(&e);
	check_round_trip(&e);
	sym_experiment_finish(&e);

	/* one SLO for all, a schedule, flags */
	init(&e);
	flag_ok(&e, "zoo", "gtx1080ti");
	flag_ok(&e, "models", "VGG16,BERT,ResNet50");
	flag_ok(&e, "slo", "100");
	flag_ok(&e, "segments", "10:1000,5:3000,0.5:0");
	flag_ok(&e, "policy", "timeout:5");
	flag_ok(&e, "drop", "early");
	flag_ok(&e, "arrival", "uniform");
	flag_ok(&e, "seed", "0");
	check_round_trip(&e);
	sym_experiment_finish(&e);

	/* --profile with awkward numbers */
	init(&e);
	flag_ok(&e, "profile", "1.053,5.072");
	flag_ok(&e, "slo", "25");
	flag_ok(&e, "rate", "333.333");
	flag_ok(&e, "policy", "eager");
	check_round_trip(&e);
	sym_experiment_finish(&e);
}

/* The echo must carry every setting at full precision: a policy parameter,
 * a gamma shape or a zipf exponent with more than six significant digits
 * must come back unchanged, or the echoed config runs a different
 * experiment. */
static void test_echo_keeps_full_precision(void **state)
{
	(void)state;
	struct sym_experiment e, b;
	init(&e);
	flag_ok(&e, "models", "ResNet50,VGG16");
	flag_ok(&e, "arrival", "gamma:0.123456789");
	flag_ok(&e, "popularity", "zipf:1.23456789");
	flag_ok(&e, "policy", "timeout:12.3456789");
	resolve_ok(&e);
	echo_into(&e, &b, false);
	double shape = b.arrival.shape, zipf = b.popularity.s, timeout = 0;
	assert_int_equal(sym_policy_param_num(&b.policy, "timeout", &timeout), 0);
	sym_experiment_finish(&b);
	init(&b);
	flag_ok(&b, "policy", "timeout:0.123456789%");
	flag_ok(&b, "models", "ResNet50");
	resolve_ok(&b);
	struct sym_experiment c;
	echo_into(&b, &c, false);
	double pct = 0;
	assert_int_equal(sym_policy_param_num(&c.policy, "timeout", &pct), 0);
	bool is_pct = !strcmp(param_text(&c.policy, "timeout"), "0.123456789%");
	sym_experiment_finish(&c);
	sym_experiment_finish(&b);
	sym_experiment_finish(&e);
	assert_near(shape, 0.123456789, 0, "gamma shape");
	assert_near(zipf, 1.23456789, 0, "zipf exponent");
	assert_near(timeout, 12.3456789, 0, "timeout ms");
	assert_true(is_pct);
	assert_near(pct, 0.123456789, 0, "timeout percent");
}

/* Echoing frees everything it makes, also for a model whose SLO comes from
 * --slo (it has no slo_ms of its own). */
static void test_echo_frees_everything(void **state)
{
	(void)state;
	struct sym_experiment e;
	init(&e);
	flag_ok(&e, "profile", "1.053,5.072");
	flag_ok(&e, "slo", "25");
	resolve_ok(&e);
	long before = cjson_live;
	cJSON *j = sym_experiment_to_json(&e);
	assert_non_null(j);
	cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "models"), 0);
	assert_non_null(m);
	/* the model carries the SLO it was served under, once */
	int nslo = 0;
	for (const cJSON *it = m->child; it; it = it->next)
		nslo += !strcmp(it->string, "slo_ms");
	assert_int_equal(nslo, 1);
	assert_near(cJSON_GetObjectItemCaseSensitive(m, "slo_ms")->valuedouble, 25, 0, "model slo");
	cJSON_Delete(j);
	long leaked = cjson_live - before;
	sym_experiment_finish(&e);
	assert_int_equal(leaked, 0);

	/* the same for models with their own SLO, and for the whole cycle */
	before = cjson_live;
	init(&e);
	apply_ok(&e, "{\"models\": [\"ResNet50\", {\"name\": \"T\", \"latency_ms\": [1, 2]}], \"slo_ms\": 30}");
	resolve_ok(&e);
	j = sym_experiment_to_json(&e);
	cJSON_Delete(j);
	sym_experiment_finish(&e);
	init(&e);
	resolve_ok(&e);
	j = sym_experiment_to_json(&e);
	cJSON_Delete(j);
	sym_experiment_finish(&e);
	assert_int_equal(cjson_live - before, 0);
}

/* ---- load_file -------------------------------------------------------------- */

static void test_load_file(void **state)
{
	(void)state;
	char path[512];
	struct sym_experiment e;
	char err[1024] = "";

	/* a plain config */
	write_temp("{\"gpus\": 6, \"models\": [\"VGG16\"], \"rate\": 42}", path, sizeof(path));
	init(&e);
	assert_int_equal(sym_experiment_load_file(&e, path, err, sizeof(err)), 0);
	assert_int_equal(e.gpus, 6);
	assert_near(e.rate, 42, 0, "rate");
	sym_experiment_finish(&e);
	unlink(path);

	/* a result-like file: the inner config, not the result's own keys */
	write_temp("{\"program\": \"symphony\", \"version\": \"x\", \"gpus\": 99, \"seed\": 123,"
		   " \"config\": {\"gpus\": 5, \"rate\": 77, \"seed\": 8, \"models\": [\"BERT\"]},"
		   " \"models\": [{\"name\": \"BERT\", \"served\": 10}], \"wall_seconds\": 1.5}",
		   path, sizeof(path));
	init(&e);
	err[0] = '\0';
	int rc = sym_experiment_load_file(&e, path, err, sizeof(err));
	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	assert_int_equal(e.gpus, 5);
	assert_near(e.rate, 77, 0, "rate");
	assert_int_equal(e.seed, 8);
	resolve_ok(&e);
	assert_int_equal(e.nmodels, 1);
	assert_string_equal(e.models[0].name, "BERT");
	sym_experiment_finish(&e);
	unlink(path);

	/* a bad key inside a result's config names the file and the key */
	write_temp("{\"version\": \"x\", \"config\": {\"gpus\": 0}}", path, sizeof(path));
	init(&e);
	err[0] = '\0';
	assert_int_equal(sym_experiment_load_file(&e, path, err, sizeof(err)), -EINVAL);
	assert_contains(err, path);
	assert_contains(err, "gpus");
	sym_experiment_finish(&e);
	unlink(path);

	/* "config" without "version" is not a result file */
	write_temp("{\"config\": {\"gpus\": 5}}", path, sizeof(path));
	init(&e);
	err[0] = '\0';
	assert_int_equal(sym_experiment_load_file(&e, path, err, sizeof(err)), -EINVAL);
	assert_contains(err, path);
	assert_contains(err, "config");
	sym_experiment_finish(&e);
	unlink(path);

	/* malformed JSON: FILE:LINE */
	write_temp("{\n  \"gpus\": 4,\n  \"rate\": ,\n}\n", path, sizeof(path));
	init(&e);
	err[0] = '\0';
	assert_int_equal(sym_experiment_load_file(&e, path, err, sizeof(err)), -EINVAL);
	char want[600];
	snprintf(want, sizeof(want), "%s:3", path);
	assert_contains(err, want);
	sym_experiment_finish(&e);
	unlink(path);

	/* not an object */
	write_temp("[1, 2]", path, sizeof(path));
	init(&e);
	err[0] = '\0';
	assert_int_equal(sym_experiment_load_file(&e, path, err, sizeof(err)), -EINVAL);
	assert_contains(err, path);
	sym_experiment_finish(&e);
	unlink(path);

	/* a missing file */
	init(&e);
	err[0] = '\0';
	const char *missing = "/nonexistent-dir-for-symphony-tests/exp.json";
	assert_int_equal(sym_experiment_load_file(&e, missing, err, sizeof(err)), -ENOENT);
	assert_contains(err, missing);
	sym_experiment_finish(&e);
}

/* A result file written from the echo reruns the same experiment. */
static void test_load_file_echo(void **state)
{
	(void)state;
	struct sym_experiment a, b;
	init(&a);
	flag_ok(&a, "models", "ResNet50,VGG16,BERT");
	flag_ok(&a, "gpus", "5");
	flag_ok(&a, "rate", "2500");
	flag_ok(&a, "policy", "timeout:20%");
	flag_ok(&a, "drop", "early:4");
	flag_ok(&a, "ctrl-ms", "0.5");
	flag_ok(&a, "seed", "31337");
	resolve_ok(&a);
	cJSON *res = cJSON_CreateObject();
	cJSON_AddStringToObject(res, "version", "0.1.0");
	cJSON_AddItemToObject(res, "config", sym_experiment_to_json(&a));
	cJSON_AddNumberToObject(res, "gpus", 1);
	char *text = cJSON_Print(res);
	cJSON_Delete(res);
	char path[512];
	write_temp(text, path, sizeof(path));
	cJSON_free(text);
	init(&b);
	char err[1024] = "";
	int rc = sym_experiment_load_file(&b, path, err, sizeof(err));
	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	unlink(path);
	resolve_ok(&b);
	assert_same_experiment(&a, &b, 1e-14);
	sym_experiment_finish(&a);
	sym_experiment_finish(&b);
}

/* Heterogeneous clusters: groups from JSON and flags, the errors, the
 * per-kind profiles (zoo, scale, built-in by name), and the echo. */
static void test_cluster(void **state)
{
	(void)state;
	struct sym_experiment e;
	sym_experiment_init(&e);
	apply_ok(&e, "{\"models\": [\"ResNet50\", \"BERT\"], \"cluster\": [{\"kind\": \"a100\", \"count\": 3}, "
		     "{\"kind\": \"gtx1080ti\", \"count\": 2, \"memory_mb\": 11000}, "
		     "{\"kind\": \"cpu\", \"count\": 1, \"scale\": 20}]}");
	assert_int_equal(e.gpus, 6);
	resolve_ok(&e);
	assert_int_equal(e.nkinds, 3);
	assert_string_equal(e.kinds[0].name, "a100");
	assert_near(e.kinds[0].memory_mb, 40960, 0, "a100 memory");
	assert_near(e.kinds[1].memory_mb, 11000, 0, "configured memory");
	assert_false(e.kinds[1].cpu);
	assert_true(e.kinds[2].cpu);
	int want_kind[6] = { 0, 0, 0, 1, 1, 2 };
	assert_memory_equal(e.gpu_kind, want_kind, sizeof(want_kind));
	/* kind 1 from the gtx1080ti zoo by name: ResNet50 is slower there */
	const struct sym_profile *a = &e.profiles[0], *g = &e.profiles[2], *c = &e.profiles[4];
	assert_true(g->lat[1] > a->lat[1]);
	/* the cpu: the base latencies times 20 (a batch of 1 may not even fit) */
	assert_true(c->lat[1] >= 19 * a->lat[1] && c->lat[1] <= 21 * a->lat[1]);
	/* the echo reproduces the cluster */
	cJSON *o = sym_experiment_to_json(&e);
	char *text = cJSON_PrintUnformatted(o);
	assert_contains(text, "\"cluster\":[{\"kind\":\"a100\",\"count\":3}");
	assert_contains(text, "\"scale\":20");
	struct sym_experiment e2;
	sym_experiment_init(&e2);
	char err[1024];
	assert_int_equal(sym_experiment_apply_json(&e2, o, "echo", err, sizeof(err)), 0);
	resolve_ok(&e2);
	assert_int_equal(e2.nkinds, 3);
	assert_int_equal(e2.gpus, 6);
	assert_int_equal(e2.profiles[4].lat[1], c->lat[1]);
	free(text);
	cJSON_Delete(o);
	sym_experiment_finish(&e2);
	/* --gpus sets the count of a one-group cluster, and is refused for several */
	char msg[1024];
	assert_int_equal(sym_experiment_apply_flag(&e, "gpus", "4", msg, sizeof(msg)), -EINVAL);
	assert_contains(msg, "cluster");
	flag_ok(&e, "cluster", "a100:2");
	flag_ok(&e, "gpus", "5");
	assert_int_equal(e.groups[0].count, 5);
	assert_int_equal(e.gpus, 5);
	/* flag form with a scale */
	flag_ok(&e, "cluster", "a100:2,cpu:4:x12.5");
	assert_int_equal(e.ngroups, 2);
	assert_near(e.groups[1].scale, 12.5, 0, "scale");
	assert_int_equal(e.gpus, 6);
	/* an empty array goes back to a homogeneous cluster */
	apply_ok(&e, "{\"cluster\": []}");
	assert_int_equal(e.ngroups, 0);
	sym_experiment_finish(&e);
}

static void test_cluster_errors(void **state)
{
	(void)state;
	struct {
		const char *json, *want;
	} bad[] = {
		{ "{\"cluster\": 3}", "array of" },
		{ "{\"cluster\": [3]}", "'cluster'[0]" },
		{ "{\"cluster\": [{\"kind\": \"a100\"}]}", "count" },
		{ "{\"cluster\": [{\"count\": 2}]}", "kind" },
		{ "{\"cluster\": [{\"kind\": \"a100\", \"count\": 0}]}", "count" },
		{ "{\"cluster\": [{\"kind\": \"a100\", \"count\": 1}, {\"kind\": \"a100\", \"count\": 1}]}", "twice" },
		{ "{\"cluster\": [{\"kind\": \"x\", \"count\": 1, \"scale\": -1}]}", "scale" },
		{ "{\"cluster\": [{\"kind\": \"x\", \"count\": 1, \"scale\": 2, \"zoo\": \"a100\"}]}", "either" },
		{ "{\"cluster\": [{\"kind\": \"x\", \"count\": 1, \"speed\": 2}]}", "speed" },
		{ "{\"cluster\": [{\"kind\": \"x\", \"count\": 1, \"cpu\": 1}]}", "true or false" },
		{ "{\"cluster\": [{\"kind\": \"a\", \"count\": 1}, {\"kind\": \"b\", \"count\": 1}, {\"kind\": \"c\", \"count\": 1}, "
		  "{\"kind\": \"d\", \"count\": 1}, {\"kind\": \"e\", \"count\": 1}, {\"kind\": \"f\", \"count\": 1}, "
		  "{\"kind\": \"g\", \"count\": 1}, {\"kind\": \"h\", \"count\": 1}, {\"kind\": \"i\", \"count\": 1}]}", "at most" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sym_experiment e;
		sym_experiment_init(&e);
		char err[1024] = "";
		assert_int_equal(apply_text(&e, bad[i].json, "c.json", err, sizeof(err)), -EINVAL);
		assert_contains(err, "c.json: key 'cluster'");
		assert_contains(err, bad[i].want);
		sym_experiment_finish(&e);
	}
	const char *bad_flags[] = { "a100", "a100:x", "a100:2:3", "a100:2:xq", ":2" };
	for (size_t i = 0; i < sizeof(bad_flags) / sizeof(bad_flags[0]); i++) {
		struct sym_experiment e;
		sym_experiment_init(&e);
		char err[1024] = "";
		assert_int_equal(sym_experiment_apply_flag(&e, "cluster", bad_flags[i], err, sizeof(err)), -EINVAL);
		assert_contains(err, "--cluster");
		sym_experiment_finish(&e);
	}
	/* resolve: an unknown kind needs zoo or scale; a zoo lacking a model */
	struct sym_experiment e;
	sym_experiment_init(&e);
	flag_ok(&e, "models", "ResNet50");
	flag_ok(&e, "cluster", "a100:1,tpu:2");
	char err[1024] = "";
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), -EINVAL);
	assert_contains(err, "kind 'tpu' needs");
	flag_ok(&e, "profile", "1,5");
	flag_ok(&e, "slo", "20");
	apply_ok(&e, "{\"cluster\": [{\"kind\": \"a100\", \"count\": 1}, {\"kind\": \"g\", \"count\": 1, \"zoo\": \"gtx1080ti\"}]}");
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), -EINVAL);
	assert_contains(err, "has no profile for model 'model'");
	sym_experiment_finish(&e);
}

/* The run-size estimate: what grows with the run, and the refusals. */
static void test_estimate(void **state)
{
	(void)state;
	struct sym_experiment e;
	char err[1024] = "";
	init(&e);
	flag_ok(&e, "profile", "1.053,5.072");
	flag_ok(&e, "slo", "1e6"); /* the longest SLO is accepted */
	flag_ok(&e, "slo", "25");
	flag_ok(&e, "rate", "3000");
	flag_ok(&e, "duration", "100");
	flag_ok(&e, "interval", "0.5");
	flag_ok(&e, "arrival", "gamma:0.001"); /* the smallest shape */
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), 0);
	struct sym_estimate x, y;
	sym_estimate_run(&e, e.rate, 0, false, &x);
	assert_near(x.requests, 3e5, 1e-6, "requests");
	assert_near(x.model_requests, 3e5, 1e-6, "model requests");
	assert_near(x.timeline_rows, 200, 0, "rows");
	assert_true(x.live >= 1000 && x.live < 3e5); /* a burst of 1/K, and about two SLOs of arrivals */
	sym_estimate_run(&e, e.rate, 0, true, &y);
	assert_near(y.bytes - x.bytes, 200 * 24, 1e-6, "per-model timeline");
	sym_estimate_run(&e, e.rate, 1000, false, &y);
	assert_true(y.bytes > x.bytes);
	assert_int_equal(sym_estimate_check(&e, e.rate, 0, true, 4, err, sizeof(err)), 0);
	assert_true(sym_memory_available() > 0);
	/* a model past the histograms' 32-bit counts */
	assert_int_equal(sym_estimate_check(&e, 1e9, 0, false, 1, err, sizeof(err)), -EINVAL);
	assert_contains(err, "model 'model' would get about 1e+11 requests");
	/* a per-model timeline of 1e10 intervals x 1000 models (240 TB) */
	flag_ok(&e, "duration", "1e7");
	flag_ok(&e, "interval", "0.001");
	flag_ok(&e, "num-models", "1000");
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), 0);
	assert_int_equal(sym_estimate_check(&e, 1, 0, true, 1, err, sizeof(err)), -EINVAL);
	assert_contains(err, "the run would need about");
	assert_contains(err, "a per-model timeline of 1e+10 intervals x 1000 models");
	assert_contains(err, "leave out --model-timeline");
	sym_experiment_finish(&e);

	/* the schedule's peak counts for the requests alive at once, its mean for the count */
	init(&e);
	flag_ok(&e, "profile", "1.053,5.072");
	flag_ok(&e, "slo", "25");
	flag_ok(&e, "segments", "10:100,10:10000");
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), 0);
	sym_estimate_run(&e, 1, 0, false, &x);
	assert_near(x.requests, 10 * 100 + 10 * 10000, 1e-6, "schedule requests");
	assert_true(x.live >= 10000 * 0.05);
	sym_experiment_finish(&e);

	/* gpus_per_model may not make more than a million GPUs */
	init(&e);
	flag_ok(&e, "profile", "1.053,5.072");
	flag_ok(&e, "slo", "25");
	flag_ok(&e, "num-models", "2000");
	flag_ok(&e, "gpus-per-model", "1000");
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), -EINVAL);
	assert_contains(err, "gpus_per_model: 1000 GPUs per model x 2000 models is 2000000 GPUs; at most 1000000");
	sym_experiment_finish(&e);
}

static void test_flag_table(void **state)
{
	(void)state;
	static const char *const flags[] = { "zoo", "models", "profile", "slo", "gpus", "rate",
					     "arrival", "popularity", "segments", "rate-csv", "policy",
					     "drop", "ctrl-ms", "data-ms", "resp-ms", "tail-ms", "jitter", "start-late",
					     "num-models", "gpus-per-model",
					     "duration", "warmup", "seed", "max-bad-rate", "tolerance",
					     "criterion", "seeds" };
	bool seen[NELEMS(flags)] = { false };
	struct sym_flag_info fi;
	size_t n = 0;
	for (size_t i = 0; sym_experiment_flag_at(i, &fi); i++, n++) {
		assert_non_null(fi.flag);
		assert_non_null(fi.arg);
		assert_true(fi.help && strlen(fi.help) > 10);
		for (size_t k = 0; k < NELEMS(flags); k++)
			seen[k] |= !strcmp(fi.flag, flags[k]);
		/* every flag of the table is one the experiment takes (1 = unknown flag) */
		struct sym_experiment e;
		char err[512];
		assert_int_equal(sym_experiment_init(&e), 0);
		assert_int_not_equal(sym_experiment_apply_flag(&e, fi.flag, "", err, sizeof(err)), 1);
		sym_experiment_finish(&e);
	}
	assert_true(n >= NELEMS(flags));
	for (size_t k = 0; k < NELEMS(flags); k++)
		assert_true(seen[k]);
	assert_false(sym_experiment_flag_at(n, &fi));
}

int main(void)
{
	cJSON_Hooks hooks = { count_malloc, count_free };
	cJSON_InitHooks(&hooks);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_defaults),
		cmocka_unit_test(test_apply_json_sets_every_key),
		cmocka_unit_test(test_apply_json_unknown_key),
		cmocka_unit_test(test_apply_json_bad_values),
		cmocka_unit_test(test_apply_flag_not_config),
		cmocka_unit_test(test_apply_flag_profile),
		cmocka_unit_test(test_apply_flag_models),
		cmocka_unit_test(test_apply_flag_segments),
		cmocka_unit_test(test_apply_flag_scalars),
		cmocka_unit_test(test_apply_flag_path_values),
		cmocka_unit_test(test_flags_override_json),
		cmocka_unit_test(test_resolve_all_a100),
		cmocka_unit_test(test_resolve_all_gtx1080ti),
		cmocka_unit_test(test_memory_check),
		cmocka_unit_test(test_resolve_unknown_model),
		cmocka_unit_test(test_resolve_duplicate_model),
		cmocka_unit_test(test_resolve_slo_too_short),
		cmocka_unit_test(test_resolve_needs_an_slo),
		cmocka_unit_test(test_resolve_network_delays),
		cmocka_unit_test(test_slo_mode_and_send_ahead),
		cmocka_unit_test(test_resolve_warmup_vs_duration),
		cmocka_unit_test(test_resolve_zipf_shares),
		cmocka_unit_test(test_resolve_rate_csv),
		cmocka_unit_test(test_resolve_trace),
		cmocka_unit_test(test_resolve_rate_csv_warmup),
		cmocka_unit_test(test_resolve_schedule_offers_requests),
		cmocka_unit_test(test_resolve_custom_zoo),
		cmocka_unit_test(test_resolve_again),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_echo_round_trip),
		cmocka_unit_test(test_cluster),
		cmocka_unit_test(test_cluster_errors),
		cmocka_unit_test(test_echo_keeps_full_precision),
		cmocka_unit_test(test_echo_frees_everything),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_load_file_echo),
		cmocka_unit_test(test_model_rates),
		cmocka_unit_test(test_flag_table),
		cmocka_unit_test(test_estimate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
