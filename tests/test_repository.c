/* tests/test_repository.c - the model repository (experiment/repository.h):
 * reading models from DIR/NAME/config.json and DIR/NAME/VERSION/model.pt,
 * every refusal naming its file, writing a profile back, and an experiment
 * serving a repository's models (with and beside the file's). schedd's
 * repository API is tested with the runtime (tests/test_runtime.c,
 * test_repository). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "experiment/config.h"
#include "experiment/repository.h"
#include "profiles/zoo.h"

static char dir[256];
static char err[1024];

static void put(const char *rel, const char *text)
{
	char path[600], cmd[700];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	assert_int_equal(system(cmd), 0);
	*slash = '/';
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

#define MLP_CONFIG(extra)                                                                                          \
	"{\"name\": \"mlp\", \"max_batch_size\": 8,\n"                                                             \
	" \"input\": [{\"name\": \"x\", \"data_type\": \"TYPE_FP32\", \"dims\": [16]}],\n"                          \
	" \"output\": [{\"name\": \"y\", \"datatype\": \"FP32\", \"shape\": [4]}],\n"                               \
	" \"slo_ms\": 50" extra "}\n"
#define PROFILE ", \"profile\": {\"alpha_ms\": 0.5, \"beta_ms\": 2, \"static_mb\": 10, \"dynamic_mb\": 5, \"r2\": 0.99}"

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/symphony-repo-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

static const cJSON *item(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (!v)
		fail_msg("no key %s", k);
	return v;
}

/* Reads model `name`; returns its rc, with the message in err. */
static int read_one(const char *name, bool unprofiled_ok, cJSON **mo, cJSON **ro, int *version, bool *profiled)
{
	err[0] = '\0';
	int rc = sym_repo_read_model(dir, name, unprofiled_ok, mo, ro, version, profiled, err, sizeof(err));
	if (rc)
		print_message("refused: %s\n", err);
	return rc;
}

static void test_read(void **state)
{
	(void)state;
	put("mlp/config.json", MLP_CONFIG(PROFILE));
	put("mlp/1/model.pt", "one");
	put("mlp/3/model.pt", "three!");
	put("mlp/10x/model.pt", "not a version");
	put("mlp/02/model.pt", "not a version either (leading zero)");
	cJSON *mo, *ro;
	int version = 0;
	bool profiled = false;
	assert_int_equal(read_one("mlp", false, &mo, &ro, &version, &profiled), 0);
	assert_int_equal(version, 3);
	assert_true(profiled);
	assert_string_equal(item(mo, "name")->valuestring, "mlp");
	assert_true(item(mo, "alpha_ms")->valuedouble == 0.5);
	assert_true(item(mo, "beta_ms")->valuedouble == 2);
	assert_true(item(mo, "max_batch")->valuedouble == 8);
	assert_true(item(mo, "slo_ms")->valuedouble == 50);
	assert_true(item(mo, "static_mb")->valuedouble == 10);
	assert_true(item(mo, "dynamic_mb")->valuedouble == 5);
	assert_true(item(mo, "file_mb")->valuedouble == 6.0 / (1024 * 1024));
	assert_null(cJSON_GetObjectItemCaseSensitive(mo, "r2")); /* the fit's figures stay in the file */
	char *t = cJSON_PrintUnformatted(ro);
	char want[700];
	snprintf(want, sizeof(want),
		 "{\"input\":{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[16]},\"output\":{\"name\":\"y\","
		 "\"datatype\":\"FP32\",\"shape\":[4]},\"version\":3,\"executor\":{\"file\":\"%s/mlp/3/model.pt\"}}",
		 dir);
	assert_string_equal(t, want);
	free(t);
	cJSON_Delete(mo);
	cJSON_Delete(ro);
	/* a version asked for */
	put("mlp/config.json", MLP_CONFIG(PROFILE ", \"version\": 1"));
	assert_int_equal(read_one("mlp", false, &mo, &ro, &version, NULL), 0);
	assert_int_equal(version, 1);
	cJSON_Delete(mo);
	cJSON_Delete(ro);
}

static void test_refusals(void **state)
{
	(void)state;
	cJSON *mo, *ro;
	int v;
	put("mlp/1/model.pt", "x");
	const struct {
		const char *config, *want;
		int rc;
	} cases[] = {
		{ MLP_CONFIG(PROFILE ", \"version\": 4"), "version 4 has no model file: ", -ENOENT },
		{ MLP_CONFIG(PROFILE ", \"version\": 0"), "key 'version': expected a positive integer", -EINVAL },
		{ MLP_CONFIG(PROFILE ", \"dynamic_batching\": {}"), "unknown key 'dynamic_batching'", -EINVAL },
		{ MLP_CONFIG(""), "no 'profile': measure it with `symphony profile --executor torch --model-repository",
		  -EINVAL },
		{ MLP_CONFIG(", \"profile\": {\"alpha_ms\": -1, \"beta_ms\": 2}"), "key 'alpha_ms'", -EINVAL },
		{ MLP_CONFIG(", \"profile\": {\"latency_ms\": [1, 2, 3, 4, 5, 6, 7, 8, 9]}"),
		  "9 entries, more than max_batch_size (8)", -EINVAL },
		{ MLP_CONFIG(", \"platform\": \"onnxruntime_onnx\"" PROFILE), "only pytorch_libtorch", -EINVAL },
		{ "{\"max_batch_size\": 0}", "key 'max_batch_size': expected an integer from 1", -EINVAL },
		{ "{\"name\": \"other\", \"max_batch_size\": 4}", "key 'name' must be the directory's name, 'mlp'", -EINVAL },
		{ "{\"max_batch_size\": 4, \"input\": [{\"data_type\": \"TYPE_FP32\", \"dims\": [1]}, {\"data_type\": "
		  "\"TYPE_FP32\", \"dims\": [1]}]}",
		  "key 'input': expected an array of one tensor", -EINVAL },
		{ "{\"max_batch_size\": 4, \"input\": [{\"data_type\": \"TYPE_STRING\", \"dims\": [1]}]}",
		  "TYPE_STRING tensors are not supported", -EINVAL },
		{ "[1, 2]", "expected an object", -EINVAL },
		{ "{\"max_batch_size\": 4,", "", -EINVAL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		put("mlp/config.json", cases[i].config);
		assert_int_equal(read_one("mlp", false, &mo, &ro, &v, NULL), cases[i].rc);
		assert_non_null(strstr(err, cases[i].want));
		assert_non_null(strstr(err, "mlp/config.json")); /* every message names the file */
	}
	/* no version at all */
	put("mlp/config.json", MLP_CONFIG(PROFILE));
	assert_int_equal(unlink(strcat(strcpy(err, dir), "/mlp/1/model.pt")), 0);
	assert_int_equal(read_one("mlp", false, &mo, &ro, &v, NULL), -ENOENT);
	assert_non_null(strstr(err, "no version to serve"));
	/* a model that is not there, a name that is not one */
	assert_int_equal(read_one("gone", false, &mo, &ro, &v, NULL), -ENOENT);
	assert_non_null(strstr(err, "model 'gone' is not in repository"));
	assert_int_equal(read_one("../mlp", false, &mo, &ro, &v, NULL), -EINVAL);
	assert_non_null(strstr(err, "'../mlp' is not a model name"));
	assert_int_equal(read_one(".hidden", false, &mo, &ro, &v, NULL), -EINVAL);
	/* unprofiled, allowed (what `symphony profile` reads) */
	put("mlp/config.json", MLP_CONFIG(""));
	put("mlp/1/model.pt", "x");
	bool profiled = true;
	assert_int_equal(read_one("mlp", true, &mo, &ro, &v, &profiled), 0);
	assert_false(profiled);
	assert_true(item(mo, "alpha_ms")->valuedouble == 1 && item(mo, "beta_ms")->valuedouble == 0);
	cJSON_Delete(mo);
	cJSON_Delete(ro);
}

static void test_read_all_and_write(void **state)
{
	(void)state;
	cJSON *models = cJSON_CreateArray(), *rt = cJSON_CreateObject();
	assert_true(sym_repo_read(dir, false, models, rt, err, sizeof(err)) < 0); /* empty */
	assert_non_null(strstr(err, "no model in it"));
	put("b/config.json", MLP_CONFIG(PROFILE));
	put("b/1/model.pt", "x");
	put("a/config.json", MLP_CONFIG(PROFILE));
	put("a/2/model.pt", "x");
	put("notes/readme.txt", "not a model: no config.json");
	/* the name in config.json must be the directory's: "mlp" is neither */
	assert_true(sym_repo_read(dir, false, models, rt, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "a/config.json: key 'name' must be the directory's name, 'a'"));
	put("a/config.json", "{\"max_batch_size\": 4, \"input\": [{\"data_type\": \"TYPE_UINT8\", \"dims\": [8]}], "
			     "\"output\": [{\"data_type\": \"TYPE_INT64\", \"dims\": [1]}], \"profile\": {\"alpha_ms\": 1, "
			     "\"beta_ms\": 1}}");
	put("b/config.json", "{\"max_batch_size\": 4, \"input\": [{\"data_type\": \"TYPE_UINT8\", \"dims\": [8]}], "
			     "\"output\": [{\"data_type\": \"TYPE_INT64\", \"dims\": [1]}]}");
	assert_true(sym_repo_read(dir, false, models, rt, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "b/config.json: no 'profile'"));
	/* the profile written back: kept keys, atomically */
	cJSON *p = cJSON_Parse("{\"alpha_ms\": 3.5, \"beta_ms\": 0, \"r2\": 0.97}");
	assert_int_equal(sym_repo_write_profile(dir, "b", p, err, sizeof(err)), 0);
	cJSON_Delete(p);
	assert_int_equal(sym_repo_read(dir, false, models, rt, err, sizeof(err)), 2);
	assert_int_equal(cJSON_GetArraySize(models), 2);
	assert_string_equal(item(cJSON_GetArrayItem(models, 0), "name")->valuestring, "a"); /* in name order */
	assert_true(item(cJSON_GetArrayItem(models, 1), "alpha_ms")->valuedouble == 3.5);
	assert_non_null(cJSON_GetObjectItemCaseSensitive(rt, "a"));
	assert_non_null(cJSON_GetObjectItemCaseSensitive(rt, "b"));
	char path[400];
	snprintf(path, sizeof(path), "%s/b/config.json", dir);
	char *text = NULL;
	assert_int_equal(sym_read_file(path, &text), 0);
	assert_non_null(strstr(text, "\"max_batch_size\":\t4"));
	assert_non_null(strstr(text, "\"r2\":\t0.97"));
	free(text);
	assert_int_equal(sym_repo_write_profile(dir, "zz", cJSON_GetArrayItem(models, 0), err, sizeof(err)), -ENOENT);
	cJSON_Delete(models);
	cJSON_Delete(rt);
}

/* Model a (batches of 4, SLO 80 ms, static 100 MB) in the repository, and e an experiment serving it. */
static void repo_a(struct sym_experiment *e)
{
	put("a/config.json", "{\"max_batch_size\": 4, \"input\": [{\"data_type\": \"TYPE_UINT8\", \"dims\": [8]}], "
			     "\"output\": [{\"data_type\": \"TYPE_INT64\", \"dims\": [1]}], \"slo_ms\": 80, "
			     "\"profile\": {\"alpha_ms\": 1, \"beta_ms\": 1, \"static_mb\": 100}}");
	put("a/1/model.pt", "x");
	assert_int_equal(sym_experiment_init(e), 0);
	assert_int_equal(sym_experiment_apply_flag(e, "model-repository", dir, err, sizeof(err)), 0);
}

/* An experiment serves a repository's models: instead of the zoo's, or beside the file's. */
static void test_experiment(void **state)
{
	(void)state;
	struct sym_experiment e;
	repo_a(&e);
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), 0);
	assert_int_equal(e.nmodels, 1);
	assert_string_equal(e.models[0].name, "a");
	assert_true(e.model_slo_ms[0] == 80);
	assert_true(e.profiles[0].static_mb == 100);
	assert_int_equal(e.profiles[0].max_batch, 4);
	/* beside the file's */
	assert_int_equal(sym_experiment_apply_flag(&e, "models", "ResNet50", err, sizeof(err)), 0);
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), 0);
	assert_int_equal(e.nmodels, 2);
	assert_string_equal(e.models[0].name, "ResNet50");
	assert_string_equal(e.models[1].name, "a");
	/* a name twice */
	assert_int_equal(sym_experiment_apply_flag(&e, "models", "all", err, sizeof(err)), 0);
	assert_int_not_equal(sym_experiment_resolve(&e, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "\"all\" with model_repository"));
	sym_experiment_finish(&e);
	/* a repository that is not there */
	assert_int_equal(sym_experiment_init(&e), 0);
	assert_int_equal(sym_experiment_apply_flag(&e, "model-repository", "/nonexistent/repo", err, sizeof(err)), 0);
	assert_int_not_equal(sym_experiment_resolve(&e, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "model repository /nonexistent/repo: No such file or directory"));
	sym_experiment_finish(&e);
}

/* Spare slots (the runtime's repository_slots): appended empty after the models, with a
 * placeholder profile up to the largest batch of the others, no share of the load and no
 * place in the configuration's echo; filling one resolves the model as a start would (its
 * SLO, profile, the memory check), caps its batches at the slots', refuses a name served
 * already and a model too big for the memory (the slot stays empty), and a slot fills once. */
static void test_slots(void **state)
{
	(void)state;
	struct sym_experiment e;
	repo_a(&e);
	assert_int_equal(sym_experiment_apply_flag(&e, "rate", "100", err, sizeof(err)), 0);
	e.model_slots = 2;
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), 0);
	assert_int_equal(e.nmodels, 3);
	assert_int_equal(e.slot0, 1);
	assert_int_equal(e.slot_batch, 4);
	assert_false(sym_experiment_slot_empty(&e, 0));
	assert_true(sym_experiment_slot_empty(&e, 1) && sym_experiment_slot_empty(&e, 2));
	assert_int_equal(e.profiles[1].max_batch, 4);
	assert_true(e.shares[0] == 1 && e.shares[1] == 0 && e.shares[2] == 0);
	cJSON *echo = sym_experiment_to_json(&e);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(echo, "models")), 1);
	cJSON_Delete(echo);
	/* a model of 16 batches, SLO 60: capped at 4 */
	cJSON *b = cJSON_Parse("{\"name\": \"b\", \"alpha_ms\": 2, \"beta_ms\": 1, \"max_batch\": 16, \"slo_ms\": 60, "
			       "\"static_mb\": 50, \"dynamic_mb\": 5}");
	bool capped = false;
	assert_int_equal(sym_experiment_fill_slot(&e, 1, b, &capped, err, sizeof(err)), 0);
	assert_true(capped);
	assert_false(sym_experiment_slot_empty(&e, 1));
	assert_string_equal(e.models[1].name, "b");
	assert_string_equal(e.profiles[1].name, "b");
	assert_int_equal(e.profiles[1].max_batch, 4);
	assert_true(e.profiles[1].lat[4] == 9000000); /* l(4) = 2 * 4 + 1 ms */
	assert_true(e.model_slo_ms[1] == 60 && e.shares[1] == 0);
	/* a slot fills once; a name served already; a model that does not fit the memory */
	assert_int_equal(sym_experiment_fill_slot(&e, 1, b, &capped, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not an empty spare slot"));
	assert_int_equal(sym_experiment_fill_slot(&e, 2, b, &capped, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a model of that name is served already"));
	cJSON_Delete(b);
	e.memory_check = true;
	e.kinds[0].memory_mb = 1000;
	cJSON *big = cJSON_Parse("{\"name\": \"big\", \"alpha_ms\": 1, \"beta_ms\": 1, \"slo_ms\": 60, "
				 "\"static_mb\": 2000, \"dynamic_mb\": 0}");
	assert_int_equal(sym_experiment_fill_slot(&e, 2, big, &capped, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "memory: model 'big' needs 2000 MB"));
	assert_true(sym_experiment_slot_empty(&e, 2));
	assert_int_equal(e.profiles[2].max_batch, 4);
	cJSON_Delete(big);
	/* no SLO at all */
	cJSON *nos = cJSON_Parse("{\"name\": \"c\", \"alpha_ms\": 1, \"beta_ms\": 1}");
	assert_int_equal(sym_experiment_fill_slot(&e, 2, nos, &capped, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "has no SLO"));
	assert_true(sym_experiment_slot_empty(&e, 2));
	cJSON_Delete(nos);
	sym_experiment_finish(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_all_and_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_experiment, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slots, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
