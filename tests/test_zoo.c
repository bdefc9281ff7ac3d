/* tests/test_zoo.c - model profiles (core/profile.h) and profile files
 * (profiles/zoo.h): the built-in zoos against the reference data, the
 * profile builders, the file loader's error handling and JSON round trips. */
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
#include "core/profile.h"
#include "profiles/zoo.h"

/* ---- helpers ------------------------------------------------------------ */



/* Writes text to a fresh temporary file; its path goes into path. */
static void write_temp(const char *text, char *path, size_t len)
{
	write_temp_bytes("zoo", text, strlen(text), path, len);
}

/* A zoo filled with garbage, to see that a failed load zeroes it. */
static void poison_zoo(struct sym_zoo *z)
{
	memset(z, 0x5a, sizeof(*z));
}

static void assert_zoo_zeroed(const struct sym_zoo *z)
{
	assert_int_equal(z->n, 0);
	assert_null(z->models);
}

/* ---- reference data (shared/reference/model-zoo.tsv) -------------------- */

struct ref_model {
	const char *name;
	double alpha_ms, beta_ms, slo_ms;
};

static const struct ref_model ref_a100[] = {
	{ "DenseNet121", 0.054, 10.546, 21 },
	{ "DenseNet201", 0.304, 14.345, 31 },
	{ "DenseNet169", 0.289, 13.365, 29 },
	{ "ResNet50V2", 0.135, 5.560, 20 },
	{ "EfficientNetB0", 0.115, 4.326, 20 },
	{ "ResNet101", 0.284, 8.266, 20 },
	{ "ResNet152", 0.390, 10.449, 24 },
	{ "ResNet101V2", 0.391, 8.219, 20 },
	{ "MobileNetV3Large", 0.196, 4.072, 20 },
	{ "EfficientNetB1", 0.291, 5.797, 20 },
	{ "ResNet50", 0.268, 5.172, 20 },
	{ "ResNet152V2", 0.589, 10.054, 24 },
	{ "MobileNetV2", 0.190, 2.892, 20 },
	{ "EfficientNetV2B3", 0.543, 7.596, 20 },
	{ "InceptionResNetV2", 1.112, 15.27, 39 },
	{ "EfficientNetV2B1", 0.443, 5.929, 20 },
	{ "NASNetMobile", 0.536, 6.860, 20 },
	{ "EfficientNetV2B0", 0.377, 4.272, 20 },
	{ "EfficientNetB2", 0.520, 5.333, 20 },
	{ "MobileNetV3Small", 0.315, 3.211, 20 },
	{ "InceptionV3", 0.913, 6.732, 20 },
	{ "MobileNet", 0.285, 1.901, 20 },
	{ "EfficientNetV2S", 1.454, 7.378, 26 },
	{ "EfficientNetV2B2", 0.901, 4.532, 20 },
	{ "VGG16", 0.660, 2.252, 20 },
	{ "EfficientNetB3", 1.239, 4.205, 20 },
	{ "Xception", 0.801, 2.638, 20 },
	{ "VGG19", 0.893, 2.181, 20 },
	{ "NASNetLarge", 3.464, 7.154, 42 },
	{ "EfficientNetV2M", 4.479, 6.861, 49 },
	{ "EfficientNetB4", 2.881, 4.103, 31 },
	{ "EfficientNetV2L", 7.520, 6.675, 73 },
	{ "EfficientNetB5", 6.121, 2.283, 53 },
	{ "SSDMobilenet", 19.448, 4.442, 164 },
	{ "EfficientNetB6", 9.754, 1.984, 82 },
	{ "EfficientNetB7", 16.339, 2.751, 136 },
	{ "BERT", 7.353, 0.222, 59 },
};
static const struct ref_model ref_gtx1080ti[] = {
	{ "NASNetMobile", 0.570, 14.348, 33 },
	{ "MobileNetV3Small", 0.335, 5.350, 20 },
	{ "DenseNet169", 1.271, 13.618, 37 },
	{ "DenseNet121", 1.061, 10.312, 29 },
	{ "DenseNet201", 1.733, 15.687, 45 },
	{ "EfficientNetV2B0", 1.006, 7.493, 23 },
	{ "MobileNetV3Large", 0.820, 5.256, 20 },
	{ "InceptionV3", 1.964, 8.771, 33 },
	{ "EfficientNetV2B1", 1.661, 7.247, 27 },
	{ "ResNet50V2", 1.409, 5.947, 23 },
	{ "ResNet152V2", 3.471, 13.049, 53 },
	{ "ResNet101V2", 2.438, 9.095, 37 },
	{ "InceptionResNetV2", 5.090, 18.368, 77 },
	{ "EfficientNetB0", 1.569, 5.586, 23 },
	{ "MobileNetV2", 1.180, 3.483, 20 },
	{ "ResNet101", 3.164, 9.065, 43 },
	{ "EfficientNetB1", 2.489, 6.674, 33 },
	{ "ResNet50", 2.050, 5.378, 27 },
	{ "EfficientNetV2B2", 2.254, 5.896, 29 },
	{ "VGG19", 3.059, 7.857, 40 },
	{ "ResNet152", 4.599, 11.212, 59 },
	{ "MobileNet", 1.009, 2.390, 20 },
	{ "VGG16", 2.734, 5.786, 33 },
	{ "EfficientNetB2", 3.446, 5.333, 38 },
	{ "EfficientNetV2B3", 4.072, 5.981, 44 },
	{ "NASNetLarge", 17.656, 18.952, 179 },
	{ "EfficientNetV2S", 8.463, 8.862, 85 },
	{ "EfficientNetB3", 5.924, 4.849, 57 },
	{ "EfficientNetV2L", 40.313, 28.208, 378 },
	{ "EfficientNetV2M", 22.619, 14.786, 210 },
	{ "EfficientNetB5", 23.435, 10.301, 208 },
	{ "Xception", 4.751, 2.046, 42 },
	{ "SSDMobilenet", 23.778, 9.729, 209 },
	{ "EfficientNetB4", 12.088, 4.412, 105 },
	{ "BERT", 7.008, 0.159, 56 },
};

/* shared/reference/model-memory-1080ti.tsv */
struct ref_memory {
	const char *name;
	double file_mb, static_mb, dynamic_mb;
};

static const struct ref_memory ref_memory_1080ti[] = {
	{ "DenseNet121", 32, 99, 2172 },
	{ "EfficientNetB0", 21, 88, 1519 },
	{ "InceptionV3", 92, 230, 3386 },
	{ "MobileNet", 17, 84, 2653 },
	{ "ResNet50", 98, 170, 2798 },
	{ "VGG16", 528, 822, 6200 },
};

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* ---- built-in zoos -------------------------------------------------------- */

static void load_ok(const char *name, struct sym_zoo *z)
{
	char err[512] = "";
	int rc = sym_zoo_load(name, z, err, sizeof(err));
	if (rc)
		print_error("sym_zoo_load(%s): %d %s\n", name, rc, err);
	assert_int_equal(rc, 0);
}

static void check_against_reference(const char *gpu, const struct ref_model *ref, size_t nref)
{
	struct sym_zoo z;
	load_ok(gpu, &z);
	assert_int_equal(z.n, nref);
	assert_string_equal(z.gpu, gpu);
	for (size_t i = 0; i < nref; i++) {
		const struct sym_model_spec *s = sym_zoo_find(&z, ref[i].name);
		if (!s) {
			print_error("%s: model %s is missing\n", gpu, ref[i].name);
			fail();
		}
		char what[128];
		snprintf(what, sizeof(what), "%s %s alpha_ms", gpu, ref[i].name);
		assert_near(s->alpha_ms, ref[i].alpha_ms, 1e-12, what);
		snprintf(what, sizeof(what), "%s %s beta_ms", gpu, ref[i].name);
		assert_near(s->beta_ms, ref[i].beta_ms, 1e-12, what);
		snprintf(what, sizeof(what), "%s %s slo_ms", gpu, ref[i].name);
		assert_near(s->slo_ms, ref[i].slo_ms, 1e-12, what);
		assert_null(s->table_ms);
		assert_int_equal(s->ntable, 0);
		assert_int_equal(s->max_batch, 0);
	}
	sym_zoo_finish(&z);
	assert_zoo_zeroed(&z);
}

static void test_builtin_a100_matches_reference(void **state)
{
	(void)state;
	check_against_reference("a100", ref_a100, NELEMS(ref_a100));
}

static void test_builtin_gtx1080ti_matches_reference(void **state)
{
	(void)state;
	check_against_reference("gtx1080ti", ref_gtx1080ti, NELEMS(ref_gtx1080ti));
}

static void test_builtin_counts_and_spot_checks(void **state)
{
	(void)state;
	struct sym_zoo a, g;
	load_ok("a100", &a);
	load_ok("gtx1080ti", &g);
	assert_int_equal(a.n, 37);
	assert_int_equal(g.n, 35);

	const struct sym_model_spec *s = sym_zoo_find(&a, "ResNet50");
	assert_non_null(s);
	assert_near(s->alpha_ms, 0.268, 1e-12, "a100 ResNet50 alpha");
	assert_near(s->beta_ms, 5.172, 1e-12, "a100 ResNet50 beta");
	assert_near(s->slo_ms, 20, 1e-12, "a100 ResNet50 slo");

	s = sym_zoo_find(&a, "BERT");
	assert_non_null(s);
	assert_near(s->alpha_ms, 7.353, 1e-12, "a100 BERT alpha");
	assert_near(s->beta_ms, 0.222, 1e-12, "a100 BERT beta");
	assert_near(s->slo_ms, 59, 1e-12, "a100 BERT slo");

	s = sym_zoo_find(&g, "VGG16");
	assert_non_null(s);
	assert_near(s->alpha_ms, 2.734, 1e-12, "1080ti VGG16 alpha");
	assert_near(s->beta_ms, 5.786, 1e-12, "1080ti VGG16 beta");
	assert_near(s->slo_ms, 33, 1e-12, "1080ti VGG16 slo");
	assert_near(s->static_mb, 822, 1e-12, "1080ti VGG16 static_mb");
	assert_near(s->dynamic_mb, 6200, 1e-12, "1080ti VGG16 dynamic_mb");
	assert_near(s->file_mb, 528, 1e-12, "1080ti VGG16 file_mb");

	/* Models only in the a100 zoo. */
	assert_non_null(sym_zoo_find(&a, "EfficientNetB6"));
	assert_non_null(sym_zoo_find(&a, "EfficientNetB7"));
	assert_null(sym_zoo_find(&g, "EfficientNetB6"));

	/* sym_zoo_find is exact. */
	assert_null(sym_zoo_find(&a, "resnet50"));
	assert_null(sym_zoo_find(&a, "ResNet5"));
	assert_null(sym_zoo_find(&a, ""));

	sym_zoo_finish(&a);
	sym_zoo_finish(&g);
}

static void test_builtin_memory_figures(void **state)
{
	(void)state;
	struct sym_zoo g, a;
	load_ok("gtx1080ti", &g);
	load_ok("a100", &a);
	for (size_t i = 0; i < g.n; i++) {
		const struct sym_model_spec *s = &g.models[i];
		const struct ref_memory *m = NULL;
		for (size_t j = 0; j < NELEMS(ref_memory_1080ti); j++)
			if (!strcmp(ref_memory_1080ti[j].name, s->name))
				m = &ref_memory_1080ti[j];
		if (m) {
			assert_near(s->file_mb, m->file_mb, 1e-12, s->name);
			assert_near(s->static_mb, m->static_mb, 1e-12, s->name);
			assert_near(s->dynamic_mb, m->dynamic_mb, 1e-12, s->name);
		} else {
			/* the others: the fit of profiles/memory.py against the file size, and no
			 * fitted model smaller than the smallest measured one */
			assert_true(s->file_mb > 0);
			assert_near(s->static_mb, round(1.4463 * s->file_mb + 58.9), 1.0, s->name);
			assert_near(s->dynamic_mb, round(7.9246 * s->file_mb + 2080.6), 1.0, s->name);
			assert_true(s->static_mb > s->file_mb);
		}
	}
	/* every A100 model has the same figures as on the 1080 Ti, where both have it */
	for (size_t i = 0; i < a.n; i++) {
		const struct sym_model_spec *s = &a.models[i], *t = sym_zoo_find(&g, s->name);
		assert_true(s->file_mb > 0 && s->static_mb > 0 && s->dynamic_mb > 0);
		if (t) {
			assert_near(s->static_mb, t->static_mb, 0, s->name);
			assert_near(s->dynamic_mb, t->dynamic_mb, 0, s->name);
			assert_near(s->file_mb, t->file_mb, 0, s->name);
		}
	}
	/* spot checks against the Keras Applications table */
	assert_near(sym_zoo_find(&a, "VGG19")->file_mb, 549, 0, "VGG19");
	assert_near(sym_zoo_find(&a, "EfficientNetV2L")->file_mb, 479, 0, "EfficientNetV2L");
	sym_zoo_finish(&g);
	sym_zoo_finish(&a);
}

static void test_builtin_models_are_sane(void **state)
{
	(void)state;
	size_t nbuiltin = 0;
	for (int k = 0; sym_zoo_builtins[k].name; k++) {
		nbuiltin++;
		assert_non_null(sym_zoo_builtins[k].json);
		struct sym_zoo z;
		load_ok(sym_zoo_builtins[k].name, &z);
		assert_true(z.n > 0);
		for (size_t i = 0; i < z.n; i++) {
			const struct sym_model_spec *s = &z.models[i];
			assert_true(s->name[0] != '\0');
			assert_true(isfinite(s->alpha_ms) && s->alpha_ms >= 0);
			assert_true(isfinite(s->beta_ms) && s->beta_ms >= 0);
			assert_true(s->alpha_ms + s->beta_ms > 0);
			assert_true(isfinite(s->slo_ms) && s->slo_ms > 0);
			for (size_t j = 0; j < i; j++)
				if (!strcmp(z.models[j].name, s->name)) {
					print_error("%s: model %s appears twice\n", z.gpu, s->name);
					fail();
				}
			/* Every SLO leaves room for a batch of at least 4. */
			double l4 = 4 * s->alpha_ms + s->beta_ms;
			if (!(l4 <= s->slo_ms)) {
				print_error("%s %s: l(4) = %g ms > SLO %g ms\n", z.gpu, s->name, l4, s->slo_ms);
				fail();
			}
			struct sym_profile p;
			char err[256] = "";
			int rc = sym_model_spec_profile(s, s->slo_ms, &p, err, sizeof(err));
			if (rc)
				print_error("%s\n", err);
			assert_int_equal(rc, 0);
			assert_true(p.max_batch >= 4);
			assert_true(p.lat[4] <= sym_ms(s->slo_ms));
			assert_true(p.lat[p.max_batch] <= sym_ms(s->slo_ms));
			if (p.max_batch < SYM_PROFILE_BATCH_LIMIT)
				assert_true(s->alpha_ms * (p.max_batch + 1) + s->beta_ms > s->slo_ms);
			assert_string_equal(p.name, s->name);
			sym_profile_finish(&p);
		}
		sym_zoo_finish(&z);
	}
	assert_int_equal(nbuiltin, 2);
}

/* ---- sym_model_spec_profile ------------------------------------------------ */

static struct sym_model_spec linear_spec(const char *name, double a, double b, double slo, int max_batch)
{
	struct sym_model_spec s;
	memset(&s, 0, sizeof(s));
	snprintf(s.name, sizeof(s.name), "%s", name);
	s.alpha_ms = a;
	s.beta_ms = b;
	s.slo_ms = slo;
	s.max_batch = max_batch;
	s.static_mb = s.dynamic_mb = s.file_mb = -1;
	return s;
}

static void test_spec_profile_linear_from_slo(void **state)
{
	(void)state;
	struct sym_model_spec s = linear_spec("m", 1, 5, 12, 0);
	s.static_mb = 100;
	s.dynamic_mb = 250;
	struct sym_profile p;
	char err[256] = "";
	assert_int_equal(sym_model_spec_profile(&s, 12, &p, err, sizeof(err)), 0);
	assert_true(p.linear);
	assert_int_equal(p.max_batch, 7);
	assert_int_equal(p.lat[0], 0);
	assert_int_equal(p.lat[1], 6 * SYM_MS);
	assert_int_equal(p.lat[7], 12 * SYM_MS);
	assert_int_equal(sym_profile_latency(&p, 7), 12000000);
	assert_string_equal(p.name, "m");
	assert_near(p.slo_ms, 12, 0, "slo_ms");
	assert_near(p.static_mb, 100, 0, "static_mb");
	assert_near(p.dynamic_mb, 250, 0, "dynamic_mb");
	sym_profile_finish(&p);

	/* just under and over the boundary */
	assert_int_equal(sym_model_spec_profile(&s, 11.999, &p, err, sizeof(err)), 0);
	assert_int_equal(p.max_batch, 6);
	sym_profile_finish(&p);
	assert_int_equal(sym_model_spec_profile(&s, 12.999, &p, err, sizeof(err)), 0);
	assert_int_equal(p.max_batch, 7);
	sym_profile_finish(&p);
	assert_int_equal(sym_model_spec_profile(&s, 6, &p, err, sizeof(err)), 0);
	assert_int_equal(p.max_batch, 1);
	assert_int_equal(p.lat[1], 6 * SYM_MS);
	sym_profile_finish(&p);

	/* the serving SLO, not the model's own, bounds the table */
	assert_int_equal(sym_model_spec_profile(&s, 25, &p, err, sizeof(err)), 0);
	assert_int_equal(p.max_batch, 20);
	assert_int_equal(p.lat[20], 25 * SYM_MS);
	sym_profile_finish(&p);

	/* A100 ResNet50 under its 20 ms SLO: 0.268*55 + 5.172 = 19.912 <= 20 < l(56) */
	struct sym_model_spec r = linear_spec("ResNet50", 0.268, 5.172, 20, 0);
	assert_int_equal(sym_model_spec_profile(&r, 20, &p, err, sizeof(err)), 0);
	assert_int_equal(p.max_batch, 55);
	assert_int_equal(p.lat[1], 5440000);
	assert_int_equal(p.lat[55], 19912000);
	sym_profile_finish(&p);

	/* alpha 0: every batch costs the same, the table is capped at the limit */
	struct sym_model_spec flat = linear_spec("flat", 0, 5, 10, 0);
	assert_int_equal(sym_model_spec_profile(&flat, 10, &p, err, sizeof(err)), 0);
	assert_int_equal(p.max_batch, SYM_PROFILE_BATCH_LIMIT);
	assert_int_equal(p.lat[SYM_PROFILE_BATCH_LIMIT], 5 * SYM_MS);
	sym_profile_finish(&p);
}

static void test_spec_profile_explicit_max_batch(void **state)
{
	(void)state;
	struct sym_profile p;
	char err[256] = "";
	struct sym_model_spec s = linear_spec("capped", 1, 5, 12, 3);
	assert_int_equal(sym_model_spec_profile(&s, 12, &p, err, sizeof(err)), 0);
	assert_int_equal(p.max_batch, 3);
	assert_int_equal(p.lat[3], 8 * SYM_MS);
	sym_profile_finish(&p);

	/* max_batch is the table length even past what the SLO allows */
	s.max_batch = 10;
	assert_int_equal(sym_model_spec_profile(&s, 12, &p, err, sizeof(err)), 0);
	assert_int_equal(p.max_batch, 10);
	assert_int_equal(p.lat[10], 15 * SYM_MS);
	sym_profile_finish(&p);

	/* ... but l(1) must still fit */
	s.max_batch = 3;
	err[0] = '\0';
	assert_int_equal(sym_model_spec_profile(&s, 5.5, &p, err, sizeof(err)), -ERANGE);
	assert_contains(err, "capped");
}

static void test_spec_profile_slo_too_short(void **state)
{
	(void)state;
	struct sym_profile p;
	char err[256] = "";
	struct sym_model_spec s = linear_spec("TooSlowNet", 1, 5, 12, 0);
	assert_int_equal(sym_model_spec_profile(&s, 5.5, &p, err, sizeof(err)), -ERANGE);
	assert_contains(err, "TooSlowNet");
	assert_contains(err, "l(1)");

	double table[] = { 3, 4, 6 };
	struct sym_model_spec t = linear_spec("TableNet", NAN, NAN, 0, 0);
	t.table_ms = table;
	t.ntable = 3;
	err[0] = '\0';
	assert_int_equal(sym_model_spec_profile(&t, 2.5, &p, err, sizeof(err)), -ERANGE);
	assert_contains(err, "TableNet");
	assert_contains(err, "l(1)");
}

static void test_spec_profile_table(void **state)
{
	(void)state;
	double table[] = { 2, 3, 3, 5 };
	struct sym_model_spec t = linear_spec("TableNet", NAN, NAN, 10, 0);
	t.table_ms = table;
	t.ntable = 4;
	t.static_mb = 10;
	t.dynamic_mb = 20;
	struct sym_profile p;
	char err[256] = "";
	assert_int_equal(sym_model_spec_profile(&t, 10, &p, err, sizeof(err)), 0);
	assert_false(p.linear);
	assert_int_equal(p.max_batch, 4);
	assert_int_equal(p.lat[0], 0);
	assert_int_equal(p.lat[1], 2 * SYM_MS);
	assert_int_equal(p.lat[2], 3 * SYM_MS);
	assert_int_equal(p.lat[3], 3 * SYM_MS);
	assert_int_equal(p.lat[4], 5 * SYM_MS);
	assert_string_equal(p.name, "TableNet");
	assert_near(p.slo_ms, 10, 0, "slo_ms");
	assert_near(p.static_mb, 10, 0, "static_mb");
	assert_near(p.dynamic_mb, 20, 0, "dynamic_mb");
	sym_profile_finish(&p);

	/* the table length is the max batch whatever the SLO */
	assert_int_equal(sym_model_spec_profile(&t, 2, &p, err, sizeof(err)), 0);
	assert_int_equal(p.max_batch, 4);
	sym_profile_finish(&p);
}

/* ---- core/profile.h -------------------------------------------------------- */

static void test_profile_linear_validation(void **state)
{
	(void)state;
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "x", -1, 5, 4), -EINVAL);
	assert_int_equal(sym_profile_init_linear(&p, "x", 1, -5, 4), -EINVAL);
	assert_int_equal(sym_profile_init_linear(&p, "x", -0.001, 5, 4), -EINVAL);
	assert_int_equal(sym_profile_init_linear(&p, "x", NAN, 5, 4), -EINVAL);
	assert_int_equal(sym_profile_init_linear(&p, "x", 1, NAN, 4), -EINVAL);
	assert_int_equal(sym_profile_init_linear(&p, "x", INFINITY, 5, 4), -EINVAL);
	assert_int_equal(sym_profile_init_linear(&p, "x", 1, INFINITY, 4), -EINVAL);
	assert_int_equal(sym_profile_init_linear(&p, "x", 0, 0, 4), -EINVAL);
	assert_int_equal(sym_profile_init_linear(&p, "x", 1, 5, 0), -EINVAL);
	assert_int_equal(sym_profile_init_linear(&p, "x", 1, 5, -3), -EINVAL);
	assert_int_equal(sym_profile_init_linear(&p, "x", 1, 5, SYM_PROFILE_BATCH_LIMIT + 1), -EINVAL);

	/* the edges that are allowed */
	assert_int_equal(sym_profile_init_linear(&p, "x", 0, 5, 1), 0);
	assert_int_equal(p.max_batch, 1);
	sym_profile_finish(&p);
	assert_int_equal(sym_profile_init_linear(&p, "x", 1, 0, SYM_PROFILE_BATCH_LIMIT), 0);
	assert_int_equal(p.max_batch, SYM_PROFILE_BATCH_LIMIT);
	assert_int_equal(p.lat[SYM_PROFILE_BATCH_LIMIT], (sym_time)SYM_PROFILE_BATCH_LIMIT * SYM_MS);
	sym_profile_finish(&p);
}

static void test_profile_linear_values(void **state)
{
	(void)state;
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "ResNet50", 0.268, 5.172, 10), 0);
	assert_true(p.linear);
	assert_string_equal(p.name, "ResNet50");
	assert_near(p.alpha_ms, 0.268, 0, "alpha");
	assert_near(p.beta_ms, 5.172, 0, "beta");
	assert_int_equal(p.max_batch, 10);
	assert_int_equal(p.lat[0], 0);
	for (int b = 1; b <= 10; b++)
		assert_int_equal(sym_profile_latency(&p, b), sym_ms(0.268 * b + 5.172));
	assert_int_equal(p.lat[1], 5440000);
	assert_int_equal(p.lat[10], 7852000);
	/* memory unknown, SLO unknown */
	assert_true(p.static_mb < 0);
	assert_true(p.dynamic_mb < 0);
	assert_near(p.slo_ms, 0, 0, "slo");
	sym_profile_finish(&p);

	/* sub-ns values round to the nearest ns */
	assert_int_equal(sym_profile_init_linear(&p, "r", 0.0000004, 0.0000011, 2), 0);
	assert_int_equal(p.lat[1], 2);
	assert_int_equal(p.lat[2], 2);
	sym_profile_finish(&p);

	/* long names are truncated, NULL is empty */
	char longname[200];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(sym_profile_init_linear(&p, longname, 1, 1, 1), 0);
	assert_int_equal(strlen(p.name), sizeof(p.name) - 1);
	sym_profile_finish(&p);
	assert_int_equal(sym_profile_init_linear(&p, NULL, 1, 1, 1), 0);
	assert_string_equal(p.name, "");
	sym_profile_finish(&p);
}

static void test_profile_table_validation(void **state)
{
	(void)state;
	struct sym_profile p;
	double dec[] = { 2, 3, 2.5 };
	double zero[] = { 0, 1, 2 };
	double zero_later[] = { 1, 0 };
	double neg[] = { -1, 2 };
	double nan_[] = { 1, NAN };
	double inf_[] = { 1, INFINITY };
	double ok[] = { 1, 1, 2 };
	assert_int_equal(sym_profile_init_table(&p, "t", dec, 3), -EINVAL);
	assert_int_equal(sym_profile_init_table(&p, "t", zero, 3), -EINVAL);
	assert_int_equal(sym_profile_init_table(&p, "t", zero_later, 2), -EINVAL);
	assert_int_equal(sym_profile_init_table(&p, "t", neg, 2), -EINVAL);
	assert_int_equal(sym_profile_init_table(&p, "t", nan_, 2), -EINVAL);
	assert_int_equal(sym_profile_init_table(&p, "t", inf_, 2), -EINVAL);
	assert_int_equal(sym_profile_init_table(&p, "t", NULL, 2), -EINVAL);
	assert_int_equal(sym_profile_init_table(&p, "t", ok, 0), -EINVAL);
	assert_int_equal(sym_profile_init_table(&p, "t", ok, -1), -EINVAL);

	double *big = malloc((SYM_PROFILE_BATCH_LIMIT + 1) * sizeof(double));
	assert_non_null(big);
	for (int i = 0; i <= SYM_PROFILE_BATCH_LIMIT; i++)
		big[i] = 1 + i;
	assert_int_equal(sym_profile_init_table(&p, "t", big, SYM_PROFILE_BATCH_LIMIT + 1), -EINVAL);
	assert_int_equal(sym_profile_init_table(&p, "t", big, SYM_PROFILE_BATCH_LIMIT), 0);
	assert_int_equal(p.max_batch, SYM_PROFILE_BATCH_LIMIT);
	sym_profile_finish(&p);
	free(big);

	/* equal neighbours are fine (non-decreasing) */
	assert_int_equal(sym_profile_init_table(&p, "t", ok, 3), 0);
	sym_profile_finish(&p);
}

static void test_profile_table_values(void **state)
{
	(void)state;
	struct sym_profile p;
	double lat[] = { 2, 4, 6, 8 };
	assert_int_equal(sym_profile_init_table(&p, "tab", lat, 4), 0);
	assert_false(p.linear);
	assert_int_equal(p.max_batch, 4);
	assert_int_equal(p.lat[0], 0);
	for (int b = 1; b <= 4; b++)
		assert_int_equal(sym_profile_latency(&p, b), (sym_time)(2 * b) * SYM_MS);
	/* an exact line: the fit is the line itself */
	assert_near(p.alpha_ms, 2, 1e-12, "fit alpha");
	assert_near(p.beta_ms, 0, 1e-12, "fit beta");
	assert_true(p.static_mb < 0);
	assert_true(p.dynamic_mb < 0);
	sym_profile_finish(&p);

	double one[] = { 3.25 };
	assert_int_equal(sym_profile_init_table(&p, "one", one, 1), 0);
	assert_int_equal(p.max_batch, 1);
	assert_int_equal(p.lat[1], 3250000);
	assert_near(p.alpha_ms, 0, 1e-12, "fit alpha");
	assert_near(p.beta_ms, 3.25, 1e-12, "fit beta");
	sym_profile_finish(&p);

	double frac[] = { 1.0000004, 1.5 };
	assert_int_equal(sym_profile_init_table(&p, "frac", frac, 2), 0);
	assert_int_equal(p.lat[1], 1000000);
	assert_int_equal(p.lat[2], 1500000);
	sym_profile_finish(&p);
}

static void test_profile_max_batch_within(void **state)
{
	(void)state;
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "m", 1, 5, 10), 0);
	assert_int_equal(sym_profile_max_batch_within(&p, 12 * SYM_MS), 7);
	assert_int_equal(sym_profile_max_batch_within(&p, 12 * SYM_MS - 1), 6);
	assert_int_equal(sym_profile_max_batch_within(&p, 6 * SYM_MS), 1);
	assert_int_equal(sym_profile_max_batch_within(&p, 6 * SYM_MS - 1), 0);
	assert_int_equal(sym_profile_max_batch_within(&p, 0), 0);
	assert_int_equal(sym_profile_max_batch_within(&p, -SYM_MS), 0);
	assert_int_equal(sym_profile_max_batch_within(&p, 15 * SYM_MS), 10);
	assert_int_equal(sym_profile_max_batch_within(&p, SYM_TIME_NEVER), 10);
	/* agrees with a linear scan for every budget around each entry */
	for (int b = 1; b <= 10; b++)
		for (sym_time d = -1; d <= 1; d++) {
			sym_time budget = p.lat[b] + d;
			int want = 0;
			for (int k = 1; k <= p.max_batch; k++)
				if (p.lat[k] <= budget)
					want = k;
			assert_int_equal(sym_profile_max_batch_within(&p, budget), want);
		}
	sym_profile_finish(&p);

	double plateau[] = { 1, 2, 2, 2, 3 };
	assert_int_equal(sym_profile_init_table(&p, "t", plateau, 5), 0);
	assert_int_equal(sym_profile_max_batch_within(&p, 2 * SYM_MS), 4);
	assert_int_equal(sym_profile_max_batch_within(&p, 2 * SYM_MS - 1), 1);
	assert_int_equal(sym_profile_max_batch_within(&p, 3 * SYM_MS), 5);
	sym_profile_finish(&p);

	assert_int_equal(sym_profile_init_linear(&p, "one", 1, 1, 1), 0);
	assert_int_equal(sym_profile_max_batch_within(&p, 2 * SYM_MS), 1);
	assert_int_equal(sym_profile_max_batch_within(&p, SYM_MS), 0);
	sym_profile_finish(&p);
}

static void test_profile_linear_batch_limit(void **state)
{
	(void)state;
	assert_int_equal(sym_profile_linear_batch_limit(1, 5, 12), 7);
	assert_int_equal(sym_profile_linear_batch_limit(1, 5, 12.5), 7);
	assert_int_equal(sym_profile_linear_batch_limit(1, 5, 11.999), 6);
	assert_int_equal(sym_profile_linear_batch_limit(1, 5, 6), 1);
	assert_int_equal(sym_profile_linear_batch_limit(1, 5, 5.999), 0);
	assert_int_equal(sym_profile_linear_batch_limit(1, 5, 0), 0);
	assert_int_equal(sym_profile_linear_batch_limit(0.268, 5.172, 20), 55);
	/* values that are not exact in binary: 1.053*18 + 5.072 = 24.026 */
	assert_int_equal(sym_profile_linear_batch_limit(1.053, 5.072, 25), 18);
	assert_int_equal(sym_profile_linear_batch_limit(2, 4, 10), 3);
	/* no slope: capped at the limit */
	assert_int_equal(sym_profile_linear_batch_limit(0, 5, 5), SYM_PROFILE_BATCH_LIMIT);
	assert_int_equal(sym_profile_linear_batch_limit(0, 5, 4.9), 0);
	/* huge SLO: capped */
	assert_int_equal(sym_profile_linear_batch_limit(0.001, 0, 1e9), SYM_PROFILE_BATCH_LIMIT);
	assert_int_equal(sym_profile_linear_batch_limit(1, 0, SYM_PROFILE_BATCH_LIMIT + 0.5),
			 SYM_PROFILE_BATCH_LIMIT);
	assert_int_equal(sym_profile_linear_batch_limit(1, 0, SYM_PROFILE_BATCH_LIMIT - 1),
			 SYM_PROFILE_BATCH_LIMIT - 1);
	/* agrees with the definition on a grid of SLOs */
	for (int i = 0; i < 400; i++) {
		double slo = 5 + i * 0.137;
		int want = 0;
		for (int b = 1; b <= SYM_PROFILE_BATCH_LIMIT && 0.75 * b + 4.5 <= slo; b++)
			want = b;
		assert_int_equal(sym_profile_linear_batch_limit(0.75, 4.5, slo), want);
	}
}

/* An SLO equal to l(1) (or l(b)) written in decimal must allow that batch
 * whatever the rounding of alpha + beta in binary: the function already
 * tolerates rounding for b > 1 (0.1*3 + 0.2 = 0.5000000000000001 gives 3),
 * so it must for b = 1 too (0.1 + 0.2 = 0.30000000000000004). */
static void test_profile_linear_batch_limit_rounding(void **state)
{
	(void)state;
	assert_int_equal(sym_profile_linear_batch_limit(0.1, 0.2, 0.5), 3);
	assert_int_equal(sym_profile_linear_batch_limit(0.1, 0.2, 0.3), 1);
	/* the profile built for that SLO then has l(1) == SLO in ns */
	struct sym_model_spec s = linear_spec("tiny", 0.1, 0.2, 0.3, 0);
	struct sym_profile p;
	char err[256] = "";
	int rc = sym_model_spec_profile(&s, 0.3, &p, err, sizeof(err));
	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	assert_int_equal(p.max_batch, 1);
	assert_int_equal(p.lat[1], sym_ms(0.3));
	sym_profile_finish(&p);
}

static void test_profile_copy_is_deep(void **state)
{
	(void)state;
	struct sym_profile a, b;
	assert_int_equal(sym_profile_init_linear(&a, "orig", 1, 5, 8), 0);
	a.static_mb = 12;
	a.dynamic_mb = 34;
	a.slo_ms = 20;
	assert_int_equal(sym_profile_copy(&b, &a), 0);
	assert_ptr_not_equal(a.lat, b.lat);
	assert_string_equal(b.name, "orig");
	assert_int_equal(b.max_batch, 8);
	assert_true(b.linear);
	assert_near(b.static_mb, 12, 0, "static");
	assert_near(b.dynamic_mb, 34, 0, "dynamic");
	assert_near(b.slo_ms, 20, 0, "slo");
	for (int i = 0; i <= 8; i++)
		assert_int_equal(a.lat[i], b.lat[i]);
	a.lat[3] = 999;
	assert_int_equal(b.lat[3], 8 * SYM_MS);
	sym_profile_finish(&a);
	assert_null(a.lat);
	/* the copy survives its source */
	assert_int_equal(b.lat[8], 13 * SYM_MS);
	sym_profile_finish(&b);

	double tab[] = { 1, 2, 4 };
	assert_int_equal(sym_profile_init_table(&a, "tab", tab, 3), 0);
	assert_int_equal(sym_profile_copy(&b, &a), 0);
	sym_profile_finish(&a);
	assert_false(b.linear);
	assert_int_equal(b.lat[3], 4 * SYM_MS);
	sym_profile_finish(&b);

	/* finish accepts NULL, a zeroed profile, and a second call */
	struct sym_profile z;
	memset(&z, 0, sizeof(z));
	sym_profile_finish(NULL);
	sym_profile_finish(&z);
	sym_profile_finish(&b);
}

/* ---- profile files: errors ------------------------------------------------ */

/* Loads text from a temporary file, expecting rc; the message must name the
 * file and each of keys (NULL-terminated), and the zoo must come back zeroed. */
static void check_bad_file(const char *text, int want, const char *const *keys)
{
	char path[512];
	write_temp(text, path, sizeof(path));
	struct sym_zoo z;
	poison_zoo(&z);
	char err[1024] = "";
	int rc = sym_zoo_load(path, &z, err, sizeof(err));
	unlink(path);
	if (rc != want)
		print_error("rc %d (want %d), message: %s\n", rc, want, err);
	assert_int_equal(rc, want);
	assert_zoo_zeroed(&z);
	assert_contains(err, path);
	for (int i = 0; keys && keys[i]; i++)
		assert_contains(err, keys[i]);
	sym_zoo_finish(&z);
}

#define GOOD_MODEL "{\"name\": \"a\", \"alpha_ms\": 1, \"beta_ms\": 2, \"slo_ms\": 10}"
#define BAD_FILE(fn, text, ...)                                   \
	static void fn(void **state)                                  \
	{                                                             \
		(void)state;                                              \
		static const char *const keys[] = { __VA_ARGS__, NULL };  \
		check_bad_file(text, -EINVAL, keys);                      \
	}

BAD_FILE(test_bad_file_not_an_object, "[1, 2, 3]\n", "object")
BAD_FILE(test_bad_file_string_root, "\"a100\"\n", "object")
BAD_FILE(test_bad_file_unknown_top_key, "{\"gpu\": \"x\", \"modles\": [" GOOD_MODEL "]}", "modles")
BAD_FILE(test_bad_file_gpu_not_string, "{\"gpu\": 7, \"models\": [" GOOD_MODEL "]}", "'gpu'")
BAD_FILE(test_bad_file_models_missing, "{\"gpu\": \"x\"}", "'models'")
BAD_FILE(test_bad_file_models_empty, "{\"gpu\": \"x\", \"models\": []}", "'models'")
BAD_FILE(test_bad_file_models_not_array, "{\"models\": " GOOD_MODEL "}", "'models'")
BAD_FILE(test_bad_file_model_not_object, "{\"models\": [42]}", "models[0]")
BAD_FILE(test_bad_file_second_model_not_object, "{\"models\": [" GOOD_MODEL ", \"b\"]}", "models[1]")
BAD_FILE(test_bad_file_missing_name, "{\"models\": [{\"alpha_ms\": 1, \"beta_ms\": 2}]}", "models[0]", "'name'")
BAD_FILE(test_bad_file_empty_name, "{\"models\": [{\"name\": \"\", \"alpha_ms\": 1, \"beta_ms\": 2}]}", "'name'")
BAD_FILE(test_bad_file_name_not_string, "{\"models\": [{\"name\": 5, \"alpha_ms\": 1, \"beta_ms\": 2}]}", "'name'")
BAD_FILE(test_bad_file_name_too_long,
	 "{\"models\": [{\"name\": \"0123456789012345678901234567890123456789012345678901234567890123\", "
	 "\"alpha_ms\": 1, \"beta_ms\": 2}]}", "'name'")
BAD_FILE(test_bad_file_missing_alpha, "{\"models\": [{\"name\": \"a\", \"beta_ms\": 2}]}", "models[0]", "'alpha_ms'")
BAD_FILE(test_bad_file_missing_beta, "{\"models\": [{\"name\": \"a\", \"alpha_ms\": 2}]}", "'beta_ms'")
BAD_FILE(test_bad_file_negative_beta, "{\"models\": [{\"name\": \"a\", \"alpha_ms\": 1, \"beta_ms\": -2}]}",
	 "models[0]", "'beta_ms'", "-2")
BAD_FILE(test_bad_file_string_alpha, "{\"models\": [{\"name\": \"a\", \"alpha_ms\": \"1\", \"beta_ms\": 2}]}",
	 "'alpha_ms'", "a string")
BAD_FILE(test_bad_file_zero_latency, "{\"models\": [{\"name\": \"a\", \"alpha_ms\": 0, \"beta_ms\": 0}]}",
	 "alpha_ms", "beta_ms")
BAD_FILE(test_bad_file_unknown_model_key,
	 "{\"models\": [{\"name\": \"a\", \"alpah_ms\": 1, \"alpha_ms\": 1, \"beta_ms\": 2}]}", "models[0]",
	 "'alpah_ms'")
BAD_FILE(test_bad_file_duplicate_name, "{\"models\": [" GOOD_MODEL ", " GOOD_MODEL "]}", "models[1]", "'a'")
BAD_FILE(test_bad_file_table_decreasing, "{\"models\": [{\"name\": \"t\", \"latency_ms\": [1, 3, 2]}]}",
	 "models[0]", "latency_ms[2]")
BAD_FILE(test_bad_file_table_zero, "{\"models\": [{\"name\": \"t\", \"latency_ms\": [0, 3]}]}", "latency_ms")
BAD_FILE(test_bad_file_table_string, "{\"models\": [{\"name\": \"t\", \"latency_ms\": [1, \"2\"]}]}",
	 "latency_ms")
BAD_FILE(test_bad_file_table_empty, "{\"models\": [{\"name\": \"t\", \"latency_ms\": []}]}", "latency_ms")
BAD_FILE(test_bad_file_table_not_array, "{\"models\": [{\"name\": \"t\", \"latency_ms\": 5}]}", "latency_ms")
BAD_FILE(test_bad_file_table_plus_alpha,
	 "{\"models\": [{\"name\": \"t\", \"latency_ms\": [1, 2], \"alpha_ms\": 1}]}", "latency_ms", "alpha_ms")
BAD_FILE(test_bad_file_table_plus_max_batch,
	 "{\"models\": [{\"name\": \"t\", \"latency_ms\": [1, 2], \"max_batch\": 2}]}", "latency_ms", "max_batch")
BAD_FILE(test_bad_file_table_bad_slo,
	 "{\"models\": [{\"name\": \"t\", \"latency_ms\": [1, 2], \"slo_ms\": -1}]}", "'slo_ms'")
BAD_FILE(test_bad_file_max_batch_zero,
	 "{\"models\": [{\"name\": \"a\", \"alpha_ms\": 1, \"beta_ms\": 2, \"max_batch\": 0}]}", "'max_batch'")
BAD_FILE(test_bad_file_max_batch_fraction,
	 "{\"models\": [{\"name\": \"a\", \"alpha_ms\": 1, \"beta_ms\": 2, \"max_batch\": 2.5}]}", "'max_batch'")
BAD_FILE(test_bad_file_max_batch_too_big,
	 "{\"models\": [{\"name\": \"a\", \"alpha_ms\": 1, \"beta_ms\": 2, \"max_batch\": 5000}]}", "'max_batch'")
BAD_FILE(test_bad_file_slo_zero, "{\"models\": [{\"name\": \"a\", \"alpha_ms\": 1, \"beta_ms\": 2, \"slo_ms\": 0}]}",
	 "'slo_ms'")
BAD_FILE(test_bad_file_negative_memory,
	 "{\"models\": [{\"name\": \"a\", \"alpha_ms\": 1, \"beta_ms\": 2, \"static_mb\": -5}]}", "'static_mb'")
BAD_FILE(test_bad_file_after_good_models,
	 "{\"models\": [{\"name\": \"t\", \"latency_ms\": [1, 2]}, " GOOD_MODEL ", "
	 "{\"name\": \"u\", \"alpha_ms\": -1, \"beta_ms\": 1}]}", "models[2]", "'alpha_ms'")

static void test_bad_file_malformed_json(void **state)
{
	(void)state;
	/* the missing comma is on line 4 */
	const char *text = "{\n"
			   "  \"gpu\": \"x\",\n"
			   "  \"models\": [\n"
			   "    {\"name\": \"a\" \"alpha_ms\": 1, \"beta_ms\": 2}\n"
			   "  ]\n"
			   "}\n";
	char path[512];
	write_temp(text, path, sizeof(path));
	struct sym_zoo z;
	poison_zoo(&z);
	char err[1024] = "";
	assert_int_equal(sym_zoo_load(path, &z, err, sizeof(err)), -EINVAL);
	assert_zoo_zeroed(&z);
	char want[600];
	snprintf(want, sizeof(want), "%s:4", path);
	assert_contains(err, want);
	unlink(path);

	/* trailing garbage and an empty file are malformed too (line 1) */
	static const char *const others[] = { "{\"models\": [" GOOD_MODEL "]} x", "", "   \n" };
	for (size_t i = 0; i < NELEMS(others); i++) {
		write_temp(others[i], path, sizeof(path));
		poison_zoo(&z);
		err[0] = '\0';
		assert_int_equal(sym_zoo_load(path, &z, err, sizeof(err)), -EINVAL);
		assert_zoo_zeroed(&z);
		snprintf(want, sizeof(want), "%s:", path);
		assert_contains(err, want);
		unlink(path);
	}
}

static void test_bad_file_nonexistent(void **state)
{
	(void)state;
	const char *path = "/nonexistent-dir-for-symphony-tests/profile.json";
	struct sym_zoo z;
	poison_zoo(&z);
	char err[1024] = "";
	assert_int_equal(sym_zoo_load(path, &z, err, sizeof(err)), -ENOENT);
	assert_zoo_zeroed(&z);
	assert_contains(err, path);

	/* a name that is neither built in nor a file */
	poison_zoo(&z);
	err[0] = '\0';
	assert_int_equal(sym_zoo_load("h100", &z, err, sizeof(err)), -ENOENT);
	assert_zoo_zeroed(&z);
	assert_contains(err, "h100");
}

static void test_bad_file_directory(void **state)
{
	(void)state;
	struct sym_zoo z;
	poison_zoo(&z);
	char err[1024] = "";
	int rc = sym_zoo_load("/", &z, err, sizeof(err));
	assert_int_equal(rc, -EISDIR);
	assert_zoo_zeroed(&z);
	assert_contains(err, "/");
	assert_contains(err, "directory");
}

/* ---- profile files: good ones -------------------------------------------- */

static void test_file_load_valid(void **state)
{
	(void)state;
	const char *text =
		"{\n"
		"  \"gpu\": \"testgpu\",\n"
		"  \"source\": \"unit test\",\n"
		"  \"models\": [\n"
		"    {\"name\": \"Lin\", \"alpha_ms\": 1.5, \"beta_ms\": 2.25, \"max_batch\": 16, \"slo_ms\": 30,\n"
		"     \"static_mb\": 100, \"dynamic_mb\": 2000, \"file_mb\": 50},\n"
		"    {\"name\": \"Tab\", \"latency_ms\": [2, 3.5, 3.5, 7], \"slo_ms\": 12},\n"
		"    {\"name\": \"Bare\", \"alpha_ms\": 0, \"beta_ms\": 4}\n"
		"  ]\n"
		"}\n";
	char path[512];
	write_temp(text, path, sizeof(path));
	struct sym_zoo z;
	load_ok(path, &z);
	unlink(path);
	assert_string_equal(z.gpu, "testgpu");
	assert_int_equal(z.n, 3);

	const struct sym_model_spec *l = sym_zoo_find(&z, "Lin");
	assert_ptr_equal(l, &z.models[0]);
	assert_near(l->alpha_ms, 1.5, 0, "alpha");
	assert_near(l->beta_ms, 2.25, 0, "beta");
	assert_int_equal(l->max_batch, 16);
	assert_near(l->slo_ms, 30, 0, "slo");
	assert_near(l->static_mb, 100, 0, "static");
	assert_near(l->dynamic_mb, 2000, 0, "dynamic");
	assert_near(l->file_mb, 50, 0, "file");
	assert_null(l->table_ms);

	const struct sym_model_spec *t = sym_zoo_find(&z, "Tab");
	assert_non_null(t);
	assert_int_equal(t->ntable, 4);
	assert_non_null(t->table_ms);
	assert_near(t->table_ms[1], 3.5, 0, "table[1]");
	assert_near(t->table_ms[3], 7, 0, "table[3]");
	assert_true(isnan(t->alpha_ms));
	assert_int_equal(t->max_batch, 0);
	assert_true(t->static_mb < 0);

	const struct sym_model_spec *b = sym_zoo_find(&z, "Bare");
	assert_non_null(b);
	assert_near(b->slo_ms, 0, 0, "no slo");
	assert_true(b->static_mb < 0 && b->dynamic_mb < 0 && b->file_mb < 0);

	struct sym_profile p;
	char err[256];
	assert_int_equal(sym_model_spec_profile(t, t->slo_ms, &p, err, sizeof(err)), 0);
	assert_int_equal(p.max_batch, 4);
	assert_int_equal(p.lat[2], 3500000);
	sym_profile_finish(&p);
	assert_int_equal(sym_model_spec_profile(l, l->slo_ms, &p, err, sizeof(err)), 0);
	assert_int_equal(p.max_batch, 16);
	assert_near(p.static_mb, 100, 0, "profile static");
	sym_profile_finish(&p);

	sym_zoo_finish(&z);
	assert_zoo_zeroed(&z);
	sym_zoo_finish(&z); /* twice is fine */
	sym_zoo_finish(NULL);
}

static void test_spec_from_json_where(void **state)
{
	(void)state;
	cJSON *o = cJSON_Parse("{\"name\": \"a\", \"alpha_ms\": -1, \"beta_ms\": 1}");
	assert_non_null(o);
	struct sym_model_spec s;
	char err[512] = "";
	assert_int_equal(sym_model_spec_from_json(o, "exp.json: models[7]", &s, err, sizeof(err)), -EINVAL);
	assert_contains(err, "exp.json: models[7]");
	assert_contains(err, "'alpha_ms'");
	sym_model_spec_finish(&s);
	cJSON_Delete(o);

	o = cJSON_CreateArray();
	err[0] = '\0';
	assert_int_equal(sym_model_spec_from_json(o, "WHERE", &s, err, sizeof(err)), -EINVAL);
	assert_contains(err, "WHERE");
	assert_contains(err, "an array");
	sym_model_spec_finish(&s);
	cJSON_Delete(o);

	err[0] = '\0';
	assert_int_equal(sym_model_spec_from_json(NULL, "WHERE", &s, err, sizeof(err)), -EINVAL);
	assert_contains(err, "WHERE");
	sym_model_spec_finish(&s);
}

/* ---- JSON round trip -------------------------------------------------------- */

static void assert_same_double(double a, double b, const char *what)
{
	if (!(a == b || (isnan(a) && isnan(b)))) {
		print_error("%s: %.17g != %.17g\n", what, a, b);
		fail();
	}
}

static void assert_spec_equal(const struct sym_model_spec *a, const struct sym_model_spec *b)
{
	assert_string_equal(a->name, b->name);
	assert_same_double(a->alpha_ms, b->alpha_ms, "alpha_ms");
	assert_same_double(a->beta_ms, b->beta_ms, "beta_ms");
	assert_int_equal(a->max_batch, b->max_batch);
	assert_same_double(a->slo_ms, b->slo_ms, "slo_ms");
	/* unknown memory may be any negative number */
	if (a->static_mb >= 0 || b->static_mb >= 0)
		assert_same_double(a->static_mb, b->static_mb, "static_mb");
	if (a->dynamic_mb >= 0 || b->dynamic_mb >= 0)
		assert_same_double(a->dynamic_mb, b->dynamic_mb, "dynamic_mb");
	if (a->file_mb >= 0 || b->file_mb >= 0)
		assert_same_double(a->file_mb, b->file_mb, "file_mb");
	assert_int_equal(a->ntable, b->ntable);
	assert_int_equal(a->table_ms == NULL, b->table_ms == NULL);
	for (int i = 0; i < a->ntable; i++)
		assert_same_double(a->table_ms[i], b->table_ms[i], "table_ms[i]");
}

/* Like assert_spec_equal, but doubles only to within relative 1e-14: cJSON
 * prints numbers with 15 significant digits when that reads back within
 * DBL_EPSILON, so text loses the last bit of values like 0.1 + 0.2. */
static void assert_near_rel(double a, double b, const char *what)
{
	if (isnan(a) && isnan(b))
		return;
	assert_near(b, a, 1e-14 * fabs(a), what);
}

static void assert_spec_close(const struct sym_model_spec *a, const struct sym_model_spec *b)
{
	assert_string_equal(a->name, b->name);
	assert_near_rel(a->alpha_ms, b->alpha_ms, "alpha_ms");
	assert_near_rel(a->beta_ms, b->beta_ms, "beta_ms");
	assert_int_equal(a->max_batch, b->max_batch);
	assert_near_rel(a->slo_ms, b->slo_ms, "slo_ms");
	assert_true((a->static_mb < 0) == (b->static_mb < 0));
	if (a->static_mb >= 0)
		assert_near_rel(a->static_mb, b->static_mb, "static_mb");
	assert_true((a->dynamic_mb < 0) == (b->dynamic_mb < 0));
	if (a->dynamic_mb >= 0)
		assert_near_rel(a->dynamic_mb, b->dynamic_mb, "dynamic_mb");
	assert_true((a->file_mb < 0) == (b->file_mb < 0));
	if (a->file_mb >= 0)
		assert_near_rel(a->file_mb, b->file_mb, "file_mb");
	assert_int_equal(a->ntable, b->ntable);
	for (int i = 0; i < a->ntable; i++)
		assert_near_rel(a->table_ms[i], b->table_ms[i], "table_ms[i]");
}

/* to_json then from_json: exact on the cJSON object itself, and to within
 * cJSON's printing precision through text. */
static void round_trip(const struct sym_model_spec *s)
{
	cJSON *o = sym_model_spec_to_json(s);
	assert_non_null(o);
	struct sym_model_spec r;
	char err[512] = "";
	int rc = sym_model_spec_from_json(o, "round trip", &r, err, sizeof(err));
	if (rc)
		print_error("%s: %s\n", s->name, err);
	assert_int_equal(rc, 0);
	assert_spec_equal(s, &r);
	sym_model_spec_finish(&r);

	char *text = cJSON_PrintUnformatted(o);
	assert_non_null(text);
	cJSON_Delete(o);
	cJSON *back = cJSON_Parse(text);
	assert_non_null(back);
	rc = sym_model_spec_from_json(back, "round trip", &r, err, sizeof(err));
	if (rc)
		print_error("%s: %s (json %s)\n", s->name, err, text);
	assert_int_equal(rc, 0);
	assert_spec_close(s, &r);
	sym_model_spec_finish(&r);
	cJSON_Delete(back);
	cJSON_free(text);
}

static void test_spec_json_round_trip(void **state)
{
	(void)state;
	for (int k = 0; sym_zoo_builtins[k].name; k++) {
		struct sym_zoo z;
		load_ok(sym_zoo_builtins[k].name, &z);
		for (size_t i = 0; i < z.n; i++)
			round_trip(&z.models[i]);
		sym_zoo_finish(&z);
	}

	struct sym_model_spec s = linear_spec("awkward", 0.1 + 0.2, 1.0 / 3.0, 7.0 / 3.0, 0);
	round_trip(&s);
	s = linear_spec("capped", 1.053, 5.072, 25, 12);
	s.static_mb = 0;
	s.dynamic_mb = 1234.5;
	s.file_mb = 98;
	round_trip(&s);
	s = linear_spec("noslo", 2, 0, 0, 0);
	round_trip(&s);

	double table[] = { 1.25, 2.0 / 3.0 + 1, 1.75, 1.75, 9 };
	struct sym_model_spec t = linear_spec("table", NAN, NAN, 15, 0);
	t.table_ms = table;
	t.ntable = 5;
	t.static_mb = 10;
	round_trip(&t);

	/* copy is deep for tables */
	struct sym_model_spec c;
	assert_int_equal(sym_model_spec_copy(&c, &t), 0);
	assert_ptr_not_equal(c.table_ms, t.table_ms);
	assert_spec_equal(&c, &t);
	sym_model_spec_finish(&c);
	assert_null(c.table_ms);
	sym_model_spec_finish(NULL);

	/* to_json writes only the keys that apply */
	cJSON *o = sym_model_spec_to_json(&t);
	assert_non_null(cJSON_GetObjectItemCaseSensitive(o, "latency_ms"));
	assert_null(cJSON_GetObjectItemCaseSensitive(o, "alpha_ms"));
	assert_null(cJSON_GetObjectItemCaseSensitive(o, "max_batch"));
	assert_null(cJSON_GetObjectItemCaseSensitive(o, "dynamic_mb"));
	cJSON_Delete(o);
}

static void test_json_helpers(void **state)
{
	(void)state;
	cJSON *v = cJSON_Parse("[\"s\", 1, true, null, [], {}]");
	assert_non_null(v);
	const char *want[] = { "a string", "a number", "a boolean", "null", "an array", "an object" };
	int i = 0;
	for (const cJSON *it = v->child; it; it = it->next, i++)
		assert_string_equal(sym_json_type(it), want[i]);
	assert_int_equal(i, 6);
	assert_string_equal(sym_json_type(NULL), "nothing");
	cJSON_Delete(v);

	/* sym_read_file: empty, just under and over its first buffer, large */
	size_t sizes[] = { 0, 1, 4095, 4096, 4097, 100000 };
	for (size_t k = 0; k < NELEMS(sizes); k++) {
		char *text = malloc(sizes[k] + 1);
		assert_non_null(text);
		for (size_t j = 0; j < sizes[k]; j++)
			text[j] = (char)('a' + j % 26);
		text[sizes[k]] = '\0';
		char path[512];
		write_temp(text, path, sizeof(path));
		char *got = NULL;
		assert_int_equal(sym_read_file(path, &got), 0);
		assert_non_null(got);
		assert_int_equal(strlen(got), sizes[k]);
		assert_string_equal(got, text);
		free(got);
		free(text);
		unlink(path);
	}
	char *got = (char *)1;
	assert_int_equal(sym_read_file("/nonexistent-dir-for-symphony-tests/x", &got), -ENOENT);
	assert_null(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_a100_matches_reference),
		cmocka_unit_test(test_builtin_gtx1080ti_matches_reference),
		cmocka_unit_test(test_builtin_counts_and_spot_checks),
		cmocka_unit_test(test_builtin_memory_figures),
		cmocka_unit_test(test_builtin_models_are_sane),
		cmocka_unit_test(test_spec_profile_linear_from_slo),
		cmocka_unit_test(test_spec_profile_explicit_max_batch),
		cmocka_unit_test(test_spec_profile_slo_too_short),
		cmocka_unit_test(test_spec_profile_table),
		cmocka_unit_test(test_profile_linear_validation),
		cmocka_unit_test(test_profile_linear_values),
		cmocka_unit_test(test_profile_table_validation),
		cmocka_unit_test(test_profile_table_values),
		cmocka_unit_test(test_profile_max_batch_within),
		cmocka_unit_test(test_profile_linear_batch_limit),
		cmocka_unit_test(test_profile_linear_batch_limit_rounding),
		cmocka_unit_test(test_profile_copy_is_deep),
		cmocka_unit_test(test_bad_file_malformed_json),
		cmocka_unit_test(test_bad_file_not_an_object),
		cmocka_unit_test(test_bad_file_string_root),
		cmocka_unit_test(test_bad_file_unknown_top_key),
		cmocka_unit_test(test_bad_file_gpu_not_string),
		cmocka_unit_test(test_bad_file_models_missing),
		cmocka_unit_test(test_bad_file_models_empty),
		cmocka_unit_test(test_bad_file_models_not_array),
		cmocka_unit_test(test_bad_file_model_not_object),
		cmocka_unit_test(test_bad_file_second_model_not_object),
		cmocka_unit_test(test_bad_file_missing_name),
		cmocka_unit_test(test_bad_file_empty_name),
		cmocka_unit_test(test_bad_file_name_not_string),
		cmocka_unit_test(test_bad_file_name_too_long),
		cmocka_unit_test(test_bad_file_missing_alpha),
		cmocka_unit_test(test_bad_file_missing_beta),
		cmocka_unit_test(test_bad_file_negative_beta),
		cmocka_unit_test(test_bad_file_string_alpha),
		cmocka_unit_test(test_bad_file_zero_latency),
		cmocka_unit_test(test_bad_file_unknown_model_key),
		cmocka_unit_test(test_bad_file_duplicate_name),
		cmocka_unit_test(test_bad_file_table_decreasing),
		cmocka_unit_test(test_bad_file_table_zero),
		cmocka_unit_test(test_bad_file_table_string),
		cmocka_unit_test(test_bad_file_table_empty),
		cmocka_unit_test(test_bad_file_table_not_array),
		cmocka_unit_test(test_bad_file_table_plus_alpha),
		cmocka_unit_test(test_bad_file_table_plus_max_batch),
		cmocka_unit_test(test_bad_file_table_bad_slo),
		cmocka_unit_test(test_bad_file_max_batch_zero),
		cmocka_unit_test(test_bad_file_max_batch_fraction),
		cmocka_unit_test(test_bad_file_max_batch_too_big),
		cmocka_unit_test(test_bad_file_slo_zero),
		cmocka_unit_test(test_bad_file_negative_memory),
		cmocka_unit_test(test_bad_file_after_good_models),
		cmocka_unit_test(test_bad_file_nonexistent),
		cmocka_unit_test(test_bad_file_directory),
		cmocka_unit_test(test_file_load_valid),
		cmocka_unit_test(test_spec_from_json_where),
		cmocka_unit_test(test_spec_json_round_trip),
		cmocka_unit_test(test_json_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
