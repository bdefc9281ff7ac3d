/* tests/test_sweep.c - grid files, the manifest, shards, point results and
 * merging (sim/sweep.h); num_models and gpus_per_model (experiment/config.h).
 *
 *   - the manifest is the product of the axes, last axis fastest, with the
 *     keys in axis order; '@' axes apply objects (their "label" is not a key);
 *   - every malformed grid is refused with a message naming what is wrong;
 *   - shards I/N partition the manifest exactly, for N = 1..9 and from Slurm's
 *     environment; bad shard strings and environments are refused;
 *   - a point's line is identical run twice and carries no wall time; with
 *     replications it carries the mean, interval and per-seed values, and
 *     command-line keys (--seeds, --criterion) override the axes and change
 *     the fingerprint;
 *   - experiments are copied and resolved on several threads at once (plan's
 *     replications);
 *   - merge refuses mixed versions, mixed grids, duplicate points, a changed
 *     grid and an incomplete line, and sorts by point.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/goodput.h"
#include "sim/plan.h"
#include "sim/parallel.h"
#include "sim/sweep.h"
#include "testutil.h"

static cJSON *parse(const char *text)
{
	cJSON *j = cJSON_Parse(text);
	assert_non_null(j);
	return j;
}

static int grid_from(const char *text, struct sym_grid *g, char *err, size_t errlen)
{
	cJSON *j = parse(text);
	int rc = sym_grid_parse(j, "g.json", "g", g, err, errlen);
	cJSON_Delete(j);
	return rc;
}

#define SMALL_BASE "\"base\": {\"models\": [{\"name\": \"m\", \"alpha_ms\": 1.053, \"beta_ms\": 5.072}], " \
		   "\"slo_ms\": 25, \"gpus\": 2, \"rate\": 800, \"duration_s\": 2, \"warmup_s\": 0.5}"

static void test_manifest_order(void **state)
{
	(void)state;
	struct sym_grid g;
	char err[512];
	assert_int_equal(grid_from("{" SMALL_BASE ", \"compute\": \"sim\", \"axes\": {\"slo_ms\": [20, 30], "
				   "\"policy\": [\"symphony\", \"eager\", \"timeout:30%\"]}}", &g, err, sizeof(err)), 0);
	assert_string_equal(g.name, "g");
	assert_int_equal(g.compute, SYM_COMPUTE_SIM);
	assert_int_equal(g.naxes, 2);
	assert_int_equal(g.npoints, 6);
	const char *want[] = {
		"{\"slo_ms\":20,\"policy\":\"symphony\"}", "{\"slo_ms\":20,\"policy\":\"eager\"}",
		"{\"slo_ms\":20,\"policy\":\"timeout:30%\"}", "{\"slo_ms\":30,\"policy\":\"symphony\"}",
		"{\"slo_ms\":30,\"policy\":\"eager\"}", "{\"slo_ms\":30,\"policy\":\"timeout:30%\"}",
	};
	for (size_t i = 0; i < 6; i++) {
		char *id = sym_grid_point_id(&g, i);
		assert_string_equal(id, want[i]);
		free(id);
	}
	/* the point's experiment has the axis values applied over the base */
	struct sym_experiment e;
	assert_int_equal(sym_grid_point_experiment(&g, 4, &e, err, sizeof(err)), 0);
	assert_true(e.slo_ms == 30);
	assert_string_equal(sym_policy_name(&e.policy), "eager");
	assert_int_equal(e.gpus, 2);
	sym_experiment_finish(&e);
	sym_grid_finish(&g);

	/* no axes: one point, the base */
	assert_int_equal(grid_from("{" SMALL_BASE "}", &g, err, sizeof(err)), 0);
	assert_int_equal(g.npoints, 1);
	assert_int_equal(g.compute, SYM_COMPUTE_GOODPUT);
	char *id = sym_grid_point_id(&g, 0);
	assert_string_equal(id, "{}");
	free(id);
	sym_grid_finish(&g);
}

static void test_label_axis_and_derived_keys(void **state)
{
	(void)state;
	struct sym_grid g;
	char err[512];
	assert_int_equal(grid_from("{\"name\": \"n\", " SMALL_BASE ", \"axes\": {\"@load\": ["
				   "{\"label\": \"small\", \"num_models\": 3, \"gpus_per_model\": 1.5},"
				   "{\"label\": \"big\", \"num_models\": 8, \"gpus_per_model\": 2}]}}",
				   &g, err, sizeof(err)), 0);
	assert_string_equal(g.name, "n");
	struct sym_experiment e;
	assert_int_equal(sym_grid_point_experiment(&g, 0, &e, err, sizeof(err)), 0);
	/* three models: m, m#2, m#3; round(1.5 * 3) = 5 GPUs (round half away from zero: 4.5 -> 5) */
	assert_int_equal(e.nmodels, 3);
	assert_string_equal(e.models[0].name, "m");
	assert_string_equal(e.models[1].name, "m#2");
	assert_string_equal(e.models[2].name, "m#3");
	assert_int_equal(e.gpus, 5);
	/* the resolved config lists the model once and reproduces the copies */
	cJSON *cfg = sym_experiment_to_json(&e);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cfg, "models")), 1);
	struct sym_experiment e2;
	assert_int_equal(sym_experiment_init(&e2), 0);
	assert_int_equal(sym_experiment_apply_json(&e2, cfg, "cfg", err, sizeof(err)), 0);
	assert_int_equal(sym_experiment_resolve(&e2, err, sizeof(err)), 0);
	assert_int_equal(e2.nmodels, 3);
	assert_int_equal(e2.gpus, 5);
	assert_string_equal(e2.models[2].name, "m#3");
	sym_experiment_finish(&e2);
	cJSON_Delete(cfg);
	sym_experiment_finish(&e);
	assert_int_equal(sym_grid_point_experiment(&g, 1, &e, err, sizeof(err)), 0);
	assert_int_equal(e.nmodels, 8);
	assert_int_equal(e.gpus, 16);
	sym_experiment_finish(&e);
	/* the fingerprint: the same for the same grid, another when the base changes */
	struct sym_grid g2;
	assert_int_equal(grid_from("{\"name\": \"n\", " SMALL_BASE ", \"axes\": {\"@load\": ["
				   "{\"label\": \"small\", \"num_models\": 3, \"gpus_per_model\": 1.5},"
				   "{\"label\": \"big\", \"num_models\": 8, \"gpus_per_model\": 2}]}}",
				   &g2, err, sizeof(err)), 0);
	assert_string_equal(g.id, g2.id);
	assert_int_equal(strlen(g.id), 16);
	sym_grid_finish(&g2);
	assert_int_equal(grid_from("{\"name\": \"n\", \"base\": {\"gpus\": 3}, \"axes\": {\"@load\": ["
				   "{\"label\": \"small\", \"num_models\": 3, \"gpus_per_model\": 1.5},"
				   "{\"label\": \"big\", \"num_models\": 8, \"gpus_per_model\": 2}]}}",
				   &g2, err, sizeof(err)), 0);
	assert_string_not_equal(g.id, g2.id);
	sym_grid_finish(&g2);
	/* the label stays in the key */
	char *id = sym_grid_point_id(&g, 1);
	assert_contains(id, "\"label\":\"big\"");
	free(id);
	sym_grid_finish(&g);

	/* the last of gpus and gpus_per_model wins */
	assert_int_equal(sym_experiment_init(&e), 0);
	cJSON *k = parse("{\"models\": [{\"name\": \"m\", \"alpha_ms\": 1, \"beta_ms\": 5}], \"slo_ms\": 20, "
			 "\"num_models\": 4, \"gpus_per_model\": 2, \"gpus\": 3}");
	assert_int_equal(sym_experiment_apply_json(&e, k, "x", err, sizeof(err)), 0);
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), 0);
	assert_int_equal(e.gpus, 3);
	cJSON_Delete(k);
	k = parse("{\"gpus_per_model\": 1.5}");
	assert_int_equal(sym_experiment_apply_json(&e, k, "x", err, sizeof(err)), 0);
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), 0);
	assert_int_equal(e.gpus, 6);
	cJSON_Delete(k);
	sym_experiment_finish(&e);
	/* copies on a second kind take the listed model's profile there */
	assert_int_equal(sym_experiment_init(&e), 0);
	k = parse("{\"zoo\": \"a100\", \"models\": [\"ResNet50\"], \"num_models\": 3, \"cluster\": "
		  "[{\"kind\": \"a100\", \"count\": 2}, {\"kind\": \"gtx1080ti\", \"count\": 2}]}");
	assert_int_equal(sym_experiment_apply_json(&e, k, "x", err, sizeof(err)), 0);
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), 0);
	assert_int_equal(e.nmodels, 3);
	assert_true(e.profiles[1 * 3 + 2].lat[1] == e.profiles[1 * 3 + 0].lat[1]);
	assert_true(e.profiles[1 * 3 + 0].lat[1] != e.profiles[0].lat[1]);
	cJSON_Delete(k);
	sym_experiment_finish(&e);
	/* a copy may not take a listed model's name */
	assert_int_equal(sym_experiment_init(&e), 0);
	k = parse("{\"models\": [{\"name\": \"A\", \"alpha_ms\": 1, \"beta_ms\": 5}, {\"name\": \"A#2\", "
		  "\"alpha_ms\": 1, \"beta_ms\": 5}], \"num_models\": 3, \"slo_ms\": 20}");
	assert_int_equal(sym_experiment_apply_json(&e, k, "x", err, sizeof(err)), 0);
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), -EINVAL);
	assert_contains(err, "num_models");
	cJSON_Delete(k);
	sym_experiment_finish(&e);

	/* num_models below the list keeps the first models */
	assert_int_equal(sym_experiment_init(&e), 0);
	cJSON *j = parse("{\"zoo\": \"a100\", \"models\": [\"ResNet50\", \"VGG16\", \"InceptionV3\"], \"num_models\": 2}");
	assert_int_equal(sym_experiment_apply_json(&e, j, "x", err, sizeof(err)), 0);
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), 0);
	assert_int_equal(e.nmodels, 2);
	assert_string_equal(e.models[1].name, "VGG16");
	cJSON_Delete(j);
	sym_experiment_finish(&e);
}

static void test_bad_grids(void **state)
{
	(void)state;
	const struct {
		const char *text, *msg;
	} bad[] = {
		{ "[1, 2]", "expected a grid object" },
		{ "{\"axes\": {\"slo_ms\": []}}", "axis 'slo_ms': expected a non-empty array" },
		{ "{\"axes\": {\"slo_ms\": 25}}", "axis 'slo_ms': expected a non-empty array" },
		{ "{\"axes\": [1]}", "key 'axes': expected an object" },
		{ "{\"axes\": {\"@x\": [1]}}", "axis '@x' value 0: a '@' axis takes objects" },
		{ "{\"compute\": \"fast\"}", "key 'compute': expected \"goodput\"" },
		{ "{\"base\": [1]}", "key 'base': expected an object" },
		{ "{\"bases\": {}}", "unknown key 'bases'" },
		{ "{\"name\": \"\"}", "key 'name': expected a non-empty string" },
		{ "{\"name\": \"../x\"}", "no '/'" },
		{ "{\"axes\": {\"seed\": [1,2,3,4,5,6,7,8,9,10], \"gpus\": [1,2,3,4,5,6,7,8,9,10], \"rate\": "
		  "[1,2,3,4,5,6,7,8,9,10], \"jitter\": [0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9], \"duration_s\": "
		  "[1,2,3,4,5,6,7,8,9,10], \"warmup_s\": [0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9], \"slo_ms\": "
		  "[10,20,30,40,50,60,70,80,90,100], \"tolerance\": [0.1,0.2,0.3,0.4,0.5,0.11,0.12,0.13,0.14,0.15], "
		  "\"interval_s\": [1,2,3,4,5,6,7,8,9,10]}}", "more than 100000000 points" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sym_grid g;
		char err[512] = "";
		assert_int_equal(grid_from(bad[i].text, &g, err, sizeof(err)), -EINVAL);
		assert_contains(err, bad[i].msg);
		assert_contains(err, "g.json");
	}
	/* a bad value surfaces when its point is built, naming the point, axis and key */
	struct sym_grid g;
	char err[512];
	assert_int_equal(grid_from("{" SMALL_BASE ", \"axes\": {\"gpus\": [2, -1]}}", &g, err, sizeof(err)), 0);
	struct sym_experiment e;
	assert_int_equal(sym_grid_point_experiment(&g, 0, &e, err, sizeof(err)), 0);
	sym_experiment_finish(&e);
	assert_int_not_equal(sym_grid_point_experiment(&g, 1, &e, err, sizeof(err)), 0);
	sym_experiment_finish(&e);
	assert_contains(err, "point 1 {\"gpus\":-1}");
	assert_contains(err, "axis 'gpus' value 1");
	sym_grid_finish(&g);
	assert_int_equal(grid_from("{" SMALL_BASE ", \"axes\": {\"slo_ms\": [3]}}", &g, err, sizeof(err)), 0);
	assert_int_not_equal(sym_grid_point_experiment(&g, 0, &e, err, sizeof(err)), 0);
	sym_experiment_finish(&e);
	assert_contains(err, "shorter than l(1)");
	sym_grid_finish(&g);
	/* a missing grid file */
	assert_int_equal(sym_grid_load("/nonexistent/grid.json", &g, err, sizeof(err)), -ENOENT);
	assert_contains(err, "no such file");
}

static void test_shards_partition(void **state)
{
	(void)state;
	for (int n = 1; n <= 9; n++) {
		for (size_t p = 0; p < 100; p++) {
			int owners = 0;
			for (int i = 0; i < n; i++)
				owners += sym_slice_has(p, i, n);
			assert_int_equal(owners, 1);
		}
	}
	int i, n;
	char err[256];
	assert_int_equal(sym_slice_parse("2/5", &i, &n, err, sizeof(err)), 0);
	assert_int_equal(i, 2);
	assert_int_equal(n, 5);
	const char *bad[] = { "5/5", "-1/3", "1", "1/0", "a/b", "1/3x", "" };
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		assert_int_equal(sym_slice_parse(bad[k], &i, &n, err, sizeof(err)), -EINVAL);
		assert_contains(err, "--shard");
	}
	/* Slurm's array variables */
	unsetenv("SLURM_ARRAY_TASK_ID");
	unsetenv("SLURM_ARRAY_TASK_COUNT");
	unsetenv("SLURM_ARRAY_TASK_MIN");
	assert_int_equal(sym_slice_from_env(&i, &n, err, sizeof(err)), 0);
	setenv("SLURM_ARRAY_TASK_ID", "3", 1);
	setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
	assert_int_equal(sym_slice_from_env(&i, &n, err, sizeof(err)), 1);
	assert_int_equal(i, 3);
	assert_int_equal(n, 4);
	setenv("SLURM_ARRAY_TASK_MIN", "1", 1); /* --array=1-4 */
	setenv("SLURM_ARRAY_TASK_ID", "4", 1);
	assert_int_equal(sym_slice_from_env(&i, &n, err, sizeof(err)), 1);
	assert_int_equal(i, 3);
	setenv("SLURM_ARRAY_TASK_ID", "5", 1);
	assert_int_equal(sym_slice_from_env(&i, &n, err, sizeof(err)), -EINVAL);
	assert_contains(err, "is not one of");
	setenv("SLURM_ARRAY_TASK_ID", "x", 1);
	assert_int_equal(sym_slice_from_env(&i, &n, err, sizeof(err)), -EINVAL);
	assert_contains(err, "SLURM_ARRAY_TASK_ID");
	/* --array=0-90:10: ids 0, 10, ..., 90 are shards 0..9 */
	setenv("SLURM_ARRAY_TASK_MIN", "0", 1);
	setenv("SLURM_ARRAY_TASK_STEP", "10", 1);
	setenv("SLURM_ARRAY_TASK_COUNT", "10", 1);
	setenv("SLURM_ARRAY_TASK_ID", "70", 1);
	assert_int_equal(sym_slice_from_env(&i, &n, err, sizeof(err)), 1);
	assert_int_equal(i, 7);
	assert_int_equal(n, 10);
	setenv("SLURM_ARRAY_TASK_ID", "75", 1);
	assert_int_equal(sym_slice_from_env(&i, &n, err, sizeof(err)), -EINVAL);
	unsetenv("SLURM_ARRAY_TASK_STEP");
	/* an id without a count is an error, not the whole grid */
	unsetenv("SLURM_ARRAY_TASK_COUNT");
	setenv("SLURM_ARRAY_TASK_ID", "3", 1);
	assert_int_equal(sym_slice_from_env(&i, &n, err, sizeof(err)), -EINVAL);
	assert_contains(err, "SLURM_ARRAY_TASK_COUNT is not");
	unsetenv("SLURM_ARRAY_TASK_ID");
	unsetenv("SLURM_ARRAY_TASK_COUNT");
	unsetenv("SLURM_ARRAY_TASK_MIN");
}

static void test_point_lines_deterministic(void **state)
{
	(void)state;
	struct sym_grid g;
	char err[512];
	assert_int_equal(grid_from("{" SMALL_BASE ", \"axes\": {\"policy\": [\"symphony\", \"eager\"]}}", &g, err,
				   sizeof(err)), 0);
	for (size_t p = 0; p < g.npoints; p++) {
		cJSON *a, *b;
		assert_int_equal(sym_grid_run_point(&g, p, false, &a, err, sizeof(err)), 0);
		assert_int_equal(sym_grid_run_point(&g, p, false, &b, err, sizeof(err)), 0);
		char *sa = cJSON_PrintUnformatted(a), *sb = cJSON_PrintUnformatted(b);
		assert_string_equal(sa, sb);
		assert_null(cJSON_GetObjectItem(a, "wall_seconds"));
		assert_null(cJSON_GetObjectItem(a, "models"));
		assert_string_equal(cJSON_GetObjectItem(a, "grid")->valuestring, "g");
		assert_int_equal(cJSON_GetObjectItem(a, "point")->valuedouble, p);
		assert_int_equal(cJSON_GetObjectItem(a, "npoints")->valuedouble, 2);
		assert_non_null(cJSON_GetObjectItem(a, "config"));
		assert_non_null(cJSON_GetObjectItem(a, "version"));
		assert_true(cJSON_GetObjectItem(a, "goodput_rps")->valuedouble > 0);
		free(sa);
		free(sb);
		cJSON_Delete(a);
		cJSON_Delete(b);
	}
	/* per_model keeps the per-model results */
	cJSON *s;
	assert_int_equal(sym_grid_run_point(&g, 0, true, &s, err, sizeof(err)), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(s, "models")), 1);
	cJSON_Delete(s);
	sym_grid_finish(&g);
}


static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(v))
		fail_msg("key '%s' is not a number", key);
	return v->valuedouble;
}

/* Replicated points: goodput and sim lines with the mean, the interval and
 * the per-seed values; the seeds are seed, seed+1, ... */
static void test_point_replications(void **state)
{
	(void)state;
	struct sym_grid g;
	char err[512];
	assert_int_equal(grid_from("{" SMALL_BASE ", \"axes\": {\"replications\": [1, 3]}}", &g, err, sizeof(err)), 0);
	cJSON *one, *three;
	assert_int_equal(sym_grid_run_point(&g, 0, false, &one, err, sizeof(err)), 0);
	assert_int_equal(sym_grid_run_point(&g, 1, false, &three, err, sizeof(err)), 0);
	assert_int_equal(num(one, "replications"), 1);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(one, "goodput_ci95")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(one, "goodput_by_seed")), 1);
	assert_int_equal(num(three, "replications"), 3);
	const cJSON *by = cJSON_GetObjectItem(three, "goodput_by_seed");
	assert_int_equal(cJSON_GetArraySize(by), 3);
	double x[3], sum = 0;
	for (int i = 0; i < 3; i++)
		sum += x[i] = cJSON_GetArrayItem(by, i)->valuedouble;
	/* the first seed's goodput is the one-seed point's; the mean is the mean */
	assert_true(x[0] == num(one, "goodput_rps"));
	assert_true(fabs(num(three, "goodput_rps") - sum / 3) < 1e-9);
	const cJSON *ci = cJSON_GetObjectItem(three, "goodput_ci95");
	assert_int_equal(cJSON_GetArraySize(ci), 2);
	double lo = cJSON_GetArrayItem(ci, 0)->valuedouble, hi = cJSON_GetArrayItem(ci, 1)->valuedouble;
	assert_true(lo <= num(three, "goodput_rps") && num(three, "goodput_rps") <= hi);
	/* the config reruns the first seed's run: its rate is that seed's goodput */
	assert_true(num(cJSON_GetObjectItem(three, "config"), "rate") == x[0]);
	assert_int_equal(num(cJSON_GetObjectItem(three, "metrics_from"), "seed"), 1);
	assert_true(cJSON_IsString(cJSON_GetObjectItem(three, "worst_model")));
	assert_int_equal(num(cJSON_GetObjectItem(three, "config"), "replications"), 3);
	/* seed 2 alone gives the second value */
	struct sym_experiment e;
	assert_int_equal(sym_grid_point_experiment(&g, 0, &e, err, sizeof(err)), 0);
	e.seed = 2;
	struct sym_goodput gp;
	assert_int_equal(sym_goodput_search(&e, false, &gp, err, sizeof(err)), 0);
	assert_true(gp.goodput_rps == x[1]);
	sym_goodput_finish(&gp);
	sym_experiment_finish(&e);
	cJSON_Delete(one);
	cJSON_Delete(three);
	sym_grid_finish(&g);

	/* sim points: the first seed's run and the bad and served rates over the seeds */
	assert_int_equal(grid_from("{\"compute\": \"sim\", " SMALL_BASE ", \"axes\": {\"replications\": [2]}}", &g, err,
				   sizeof(err)), 0);
	cJSON *s;
	assert_int_equal(sym_grid_run_point(&g, 0, false, &s, err, sizeof(err)), 0);
	assert_int_equal(num(s, "replications"), 2);
	const cJSON *bs = cJSON_GetObjectItem(s, "bad_rate_by_seed");
	const cJSON *gs = cJSON_GetObjectItem(s, "goodput_served_rps_by_seed");
	assert_int_equal(cJSON_GetArraySize(bs), 2);
	assert_int_equal(cJSON_GetArraySize(gs), 2);
	assert_true(cJSON_GetArrayItem(bs, 0)->valuedouble == num(s, "bad_rate"));
	assert_true(cJSON_GetArrayItem(gs, 0)->valuedouble == num(s, "goodput_served_rps"));
	assert_true(cJSON_GetArrayItem(gs, 0)->valuedouble != cJSON_GetArrayItem(gs, 1)->valuedouble);
	assert_true(fabs(num(s, "goodput_served_rps_mean") - (cJSON_GetArrayItem(gs, 0)->valuedouble +
							     cJSON_GetArrayItem(gs, 1)->valuedouble) / 2) < 1e-9);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(s, "bad_rate_ci95")), 2);
	cJSON_Delete(s);
	sym_grid_finish(&g);
}

/* sweep --seeds / --criterion: after the axes, and part of the fingerprint */
static void test_grid_override(void **state)
{
	(void)state;
	struct sym_grid g, h;
	char err[512];
	const char *text = "{" SMALL_BASE ", \"axes\": {\"replications\": [1, 2], \"criterion\": [\"aggregate\"]}}";
	assert_int_equal(grid_from(text, &g, err, sizeof(err)), 0);
	assert_int_equal(grid_from(text, &h, err, sizeof(err)), 0);
	assert_string_equal(g.id, h.id);
	assert_int_equal(sym_grid_override(&h, "replications", cJSON_CreateNumber(4)), 0);
	assert_string_not_equal(g.id, h.id);
	char id1[17];
	snprintf(id1, sizeof(id1), "%s", h.id);
	assert_int_equal(sym_grid_override(&h, "criterion", cJSON_CreateString("per-model")), 0);
	assert_string_not_equal(id1, h.id);
	/* setting a key again replaces it */
	assert_int_equal(sym_grid_override(&h, "replications", cJSON_CreateNumber(5)), 0);
	assert_int_equal(cJSON_GetArraySize(h.over), 2);
	for (size_t p = 0; p < 2; p++) {
		struct sym_experiment e;
		assert_int_equal(sym_grid_point_experiment(&g, p, &e, err, sizeof(err)), 0);
		assert_int_equal(e.replications, (int)p + 1);
		assert_int_equal(e.criterion, SYM_CRITERION_AGGREGATE);
		sym_experiment_finish(&e);
		assert_int_equal(sym_grid_point_experiment(&h, p, &e, err, sizeof(err)), 0);
		assert_int_equal(e.replications, 5);
		assert_int_equal(e.criterion, SYM_CRITERION_PER_MODEL);
		sym_experiment_finish(&e);
	}
	/* the keys stay the axes' values */
	char *a = sym_grid_point_id(&g, 1), *b = sym_grid_point_id(&h, 1);
	assert_string_equal(a, b);
	free(a);
	free(b);
	sym_grid_finish(&g);
	sym_grid_finish(&h);
}

/* Copies of one experiment resolved on several threads (plan's replications
 * run one search per seed, each on its own copy); goodput's replications on
 * threads, equal to one thread's. */
struct copy_job {
	const struct sym_experiment *e;
	int nmodels[8];
	int gpus[8];
};

static int copy_one(void *ctx, size_t i)
{
	struct copy_job *J = ctx;
	struct sym_experiment c;
	char err[512];
	int rc = sym_experiment_copy(&c, J->e, err, sizeof(err));
	if (!rc) {
		c.gpus = 2 + (int)i;
		rc = sym_experiment_resolve(&c, err, sizeof(err));
	}
	J->nmodels[i] = rc ? -1 : (int)c.nmodels;
	J->gpus[i] = rc ? -1 : c.gpus;
	sym_experiment_finish(&c);
	return 0;
}

static void test_copies_on_threads(void **state)
{
	(void)state;
	struct sym_experiment e;
	char err[512];
	assert_int_equal(sym_experiment_init(&e), 0);
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), 0); /* the whole a100 zoo */
	struct copy_job J = { .e = &e };
	assert_int_equal(sym_parallel_for(8, 4, copy_one, &J), 0);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(J.nmodels[i], 37);
		assert_int_equal(J.gpus[i], 2 + i);
	}
	assert_int_equal(e.gpus, 8);
	/* plan's replications: one search per seed, in parallel, equal to each seed's own search */
	sym_experiment_finish(&e);
	assert_int_equal(sym_experiment_init(&e), 0);
	assert_int_equal(sym_experiment_apply_flag(&e, "profile", "1.053,5.072", err, sizeof(err)), 0);
	assert_int_equal(sym_experiment_apply_flag(&e, "slo", "25", err, sizeof(err)), 0);
	assert_int_equal(sym_experiment_apply_flag(&e, "duration", "3", err, sizeof(err)), 0);
	assert_int_equal(sym_experiment_apply_flag(&e, "warmup", "1", err, sizeof(err)), 0);
	assert_int_equal(sym_experiment_apply_flag(&e, "seeds", "3", err, sizeof(err)), 0);
	assert_int_equal(sym_experiment_resolve(&e, err, sizeof(err)), 0);
	struct sym_plan_result by[3];
	assert_int_equal(sym_plan_replicate(&e, 10000, 64, 3, false, by, err, sizeof(err)), 0);
	assert_int_equal(e.gpus, 8);
	for (int i = 0; i < 3; i++) {
		struct sym_experiment c;
		struct sym_plan_result one;
		assert_int_equal(sym_experiment_copy(&c, &e, err, sizeof(err)), 0);
		c.seed = 1 + (uint64_t)i;
		assert_int_equal(sym_plan_search(&c, 10000, 64, false, &one, err, sizeof(err)), 0);
		assert_int_equal(one.gpus, by[i].gpus);
		assert_int_equal(one.steps, by[i].steps);
		assert_true(one.gpus >= 13 && one.gpus <= 18); /* staggered bound: 14 */
		assert_int_equal(one.worst, 0);
		sym_experiment_finish(&c);
	}
	/* goodput's replications: the searches share the experiment, read-only, on 3 threads */
	struct sym_goodput_reps par, ser;
	assert_int_equal(sym_goodput_replicate(&e, 3, false, &par, err, sizeof(err)), 0);
	assert_int_equal(sym_goodput_replicate(&e, 1, false, &ser, err, sizeof(err)), 0);
	for (int i = 0; i < 3; i++) {
		assert_true(par.by_seed[i].goodput_rps == ser.by_seed[i].goodput_rps);
		assert_int_equal(par.by_seed[i].nsteps, ser.by_seed[i].nsteps);
	}
	assert_int_equal(par.by_seed[0].run.total.offered, ser.by_seed[0].run.total.offered);
	sym_goodput_reps_finish(&par);
	sym_goodput_reps_finish(&ser);
	sym_experiment_finish(&e);
}

/* ---- merge ---- */

static char dir[256];

static const char *file_with(const char *name, const char *text)
{
	static char paths[32][512];
	static int k;
	assert_true(k < 32);
	char *p = paths[k++];
	snprintf(p, 512, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

#define LINE(v, g, p, key) "{\"version\":\"" v "\",\"grid\":\"" g "\",\"point\":" #p ",\"npoints\":4,\"key\":" key "}\n"

static void expect_merge_error(const char *a, const char *b, const char *msg)
{
	const char *paths[] = { a, b };
	cJSON *out;
	size_t np;
	char err[1024] = "";
	assert_int_equal(sym_results_merge(paths, b ? 2 : 1, &out, &np, err, sizeof(err)), -EINVAL);
	assert_null(out);
	assert_contains(err, msg);
}

static void test_merge(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/symphony-test-merge-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(dir));
	const char *a = file_with("a.jsonl", LINE("1.0", "g", 2, "{\"x\":3}") LINE("1.0", "g", 0, "{\"x\":1}"));
	const char *b = file_with("b.jsonl", LINE("1.0", "g", 1, "{\"x\":2}") "\n");
	const char *paths[] = { a, b };
	cJSON *out;
	size_t np;
	char err[1024];
	assert_int_equal(sym_results_merge(paths, 2, &out, &np, err, sizeof(err)), 0);
	assert_int_equal(cJSON_GetArraySize(out), 3);
	assert_int_equal(np, 4);
	for (int i = 0; i < 3; i++)
		assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(out, i), "point")->valuedouble, i);
	cJSON_Delete(out);

	expect_merge_error(a, file_with("v.jsonl", LINE("2.0", "g", 1, "{\"x\":2}")), "mixed versions");
	expect_merge_error(file_with("i1.jsonl", "{\"version\":\"1.0\",\"grid\":\"g\",\"grid_id\":\"aa\",\"point\":0,"
						  "\"npoints\":4,\"key\":{\"x\":1}}\n"),
			   file_with("i2.jsonl", "{\"version\":\"1.0\",\"grid\":\"g\",\"grid_id\":\"bb\",\"point\":1,"
						  "\"npoints\":4,\"key\":{\"x\":2}}\n"),
			   "different versions of grid 'g'");
	expect_merge_error(a, file_with("n.jsonl", "{\"version\":\"1.0\",\"grid\":\"g\",\"point\":1,\"npoints\":5,"
						"\"key\":{\"x\":2}}\n"), "one of 5 points");
	expect_merge_error(file_with("neg.jsonl", LINE("1.0", "g", -1, "{\"x\":2}")), NULL, "not a sweep result");
	expect_merge_error(a, file_with("h.jsonl", LINE("1.0", "other", 1, "{\"x\":2}")), "mixed grids");
	expect_merge_error(a, file_with("d.jsonl", LINE("1.0", "g", 0, "{\"x\":1}")), "duplicate point 0");
	expect_merge_error(a, file_with("c.jsonl", LINE("1.0", "g", 0, "{\"x\":9}")), "the grid changed");
	expect_merge_error(a, file_with("t.jsonl", "{\"version\":\"1.0\",\"grid\":\"g\",\"poi"), "incomplete");
	expect_merge_error(file_with("j.jsonl", "not json\n"), NULL, "j.jsonl:1: not a sweep result line");
	expect_merge_error(file_with("k.jsonl", "{\"version\":\"1.0\",\"grid\":\"g\"}\n"), NULL, "not a sweep result");
	expect_merge_error("/nonexistent/results.jsonl", NULL, "cannot read");
	/* the messages name the files and lines */
	expect_merge_error(a, file_with("d2.jsonl", "\n" LINE("1.0", "g", 2, "{\"x\":3}")), "d2.jsonl:2");
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static _Atomic int hits[1000];

static int count_hit(void *ctx, size_t i)
{
	(void)ctx;
	hits[i]++;
	return 0;
}

static int fail_at_10(void *ctx, size_t i)
{
	(void)ctx;
	hits[i]++;
	return i == 10 ? 7 : 0;
}

static void test_parallel_for(void **state)
{
	(void)state;
	/* every index exactly once, whatever the number of threads */
	for (int jobs = 1; jobs <= 4; jobs++) {
		for (int i = 0; i < 1000; i++)
			hits[i] = 0;
		assert_int_equal(sym_parallel_for(1000, jobs, count_hit, NULL), 0);
		for (int i = 0; i < 1000; i++)
			assert_int_equal(hits[i], 1);
	}
	/* a failure is returned and stops new calls (at most one per other thread after it) */
	for (int jobs = 1; jobs <= 3; jobs++) {
		for (int i = 0; i < 1000; i++)
			hits[i] = 0;
		assert_int_equal(sym_parallel_for(1000, jobs, fail_at_10, NULL), 7);
		int ran = 0;
		for (int i = 0; i < 1000; i++)
			ran += hits[i];
		assert_true(ran >= 11 && ran <= 11 + 2 * jobs);
	}
	assert_int_equal(sym_parallel_for(0, 4, count_hit, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manifest_order),
		cmocka_unit_test(test_label_axis_and_derived_keys),
		cmocka_unit_test(test_bad_grids),
		cmocka_unit_test(test_shards_partition),
		cmocka_unit_test(test_point_lines_deterministic),
		cmocka_unit_test(test_point_replications),
		cmocka_unit_test(test_grid_override),
		cmocka_unit_test(test_copies_on_threads),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_parallel_for),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
