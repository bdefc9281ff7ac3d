/* Policy parameters from the policies' tables: every policy's defaults, each
 * bad value refused with a message naming the policy, the key and what it
 * accepts, unknown keys, the canonical text round-tripping random valid
 * specs, the generated help, table validation; and a policy defined in this
 * file, registered and run, to show that a policy needs no core header
 * changes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "core/policy_api.h"
#include "coredriver.h"
#include "testutil.h"

/* ---- a policy of the test's own ----
 *
 * testfill: whatever happens, each free GPU (lowest id first) takes a batch
 * from a model with requests queued: the lowest id (order=low) or the
 * highest (order=high); the batch is batch=N, or batch.MODEL=N for that
 * model, or with greedy=true all that is queued; never more than queued or
 * the model's largest batch. Heads that cannot finish are dropped. */

enum { ORDER_LOW, ORDER_HIGH };

struct tf_params {
	int batch;
	struct sym_policy_overrides per_model;
	int order;
	bool greedy;
};
SYM_POLICY_PARAMS(struct tf_params, tf_params_of)

static const struct sym_param_word order_words[] = { { "low", ORDER_LOW }, { "high", ORDER_HIGH }, { NULL, 0 } };

static const struct sym_param tf_table[] = {
	{ .key = "batch", .type = SYM_PARAM_INT, .offset = offsetof(struct tf_params, batch), .lo = 1, .hi = 64,
	  .def = 2, .bare = SYM_PARAM_BARE_OK, .help = "the batch size" },
	{ .key = "batch", .type = SYM_PARAM_PER_MODEL, .offset = offsetof(struct tf_params, per_model), .lo = 1,
	  .hi = 64, .help = "one model's batch size" },
	{ .key = "order", .type = SYM_PARAM_ENUM, .offset = offsetof(struct tf_params, order), .words = order_words,
	  .def = ORDER_LOW, .help = "which model goes first" },
	{ .key = "greedy", .type = SYM_PARAM_BOOL, .offset = offsetof(struct tf_params, greedy), .def = 0,
	  .help = "take all that is queued" },
	{ .key = NULL },
};

struct tf_state {
	int *batch; /* per model */
	bool high;
};

static void tf_finish(struct sym_core *c)
{
	struct tf_state *st = c->sched_state;
	free(st->batch);
	free(st);
	c->sched_state = NULL;
}

static int tf_init(struct sym_core *c, char *err, size_t errlen)
{
	const struct tf_params p = tf_params_of(&c->policy);
	struct tf_state *st = calloc(1, sizeof(*st));
	if (!st || !(st->batch = calloc((size_t)c->nmodels, sizeof(int)))) {
		free(st);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->sched_state = st;
	st->high = p.order == ORDER_HIGH;
	for (int m = 0; m < c->nmodels; m++) {
		st->batch[m] = p.greedy ? INT32_MAX : p.batch;
		for (int i = 0; i < p.per_model.n; i++)
			if (c->shards[m].name && !strcmp(c->shards[m].name, p.per_model.v[i].model))
				st->batch[m] = p.per_model.v[i].value;
	}
	return 0;
}

static void tf_react(struct sym_core *c, enum sym_sched_event ev, int id, sym_time now)
{
	(void)ev, (void)id;
	struct tf_state *st = c->sched_state;
	for (int g = 0; g < c->ngpus; g++) {
		if (c->gpus[g].busy)
			continue;
		int m = -1;
		size_t n = 0;
		for (int i = 0; i < c->nmodels && m < 0; i++) {
			int mi = st->high ? c->nmodels - 1 - i : i;
			if ((n = sym_core_expire(c, mi, now)) > 0)
				m = mi;
		}
		if (m < 0)
			return;
		int b = sym_core_max_batch(c, m, c->gpus[g].kind);
		b = st->batch[m] < b ? st->batch[m] : b;
		b = (size_t)b < n ? b : (int)n;
		sym_core_dispatch_queue(c, m, g, b, now);
	}
}

static const struct sym_sched_ops tf_sched = {
	.init = tf_init,
	.finish = tf_finish,
	.react = tf_react,
};

static const struct sym_policy_ops testfill = {
	.name = "testfill",
	.summary = "a test's own policy: free GPUs take fixed batches, lowest (or highest) model first",
	.params = tf_table,
	.params_size = sizeof(struct tf_params),
	.sched = &tf_sched,
};

/* Registers testfill once (the registry is the process's). */
static void register_testfill(void)
{
	if (sym_policy_find("testfill"))
		return;
	char err[256] = "";
	if (sym_policy_register(&testfill, err, sizeof(err)))
		fail_msg("register: %s", err);
}

/* ---- helpers ---- */

static bool is_required(const struct sym_policy_ops *ops)
{
	for (const struct sym_param *prm = ops->params; prm && prm->key; prm++)
		if (prm->required)
			return true;
	return false;
}

/* "NAME", or "NAME:required=VALUE,extra" with a valid value for a required
 * parameter (timeout). */
static void spec_with(const struct sym_policy_ops *ops, const char *extra, char *buf, size_t len)
{
	const char *req = NULL;
	for (const struct sym_param *prm = ops->params; prm && prm->key; prm++)
		if (prm->required)
			req = prm->key;
	if (req && extra)
		snprintf(buf, len, "%s:%s=5,%s", ops->name, req, extra);
	else if (req)
		snprintf(buf, len, "%s:%s=5", ops->name, req);
	else if (extra)
		snprintf(buf, len, "%s:%s", ops->name, extra);
	else
		snprintf(buf, len, "%s", ops->name);
}

static void expect_bad(const char *spec, const char *n1, const char *n2, const char *n3)
{
	struct sym_policy p;
	char err[512] = "";
	int rc = sym_policy_parse(spec, &p, err, sizeof(err));
	if (rc != -EINVAL)
		fail_msg("'%s' gave %d (%s), want -EINVAL", spec, rc, err);
	assert_contains(err, n1);
	if (n2)
		assert_contains(err, n2);
	if (n3)
		assert_contains(err, n3);
}

/* ---- every policy's table ---- */

static void test_tables_valid(void **state)
{
	(void)state;
	register_testfill();
	size_t n;
	const struct sym_policy_ops *const *list = sym_policy_list(&n);
	assert_int_equal(n, 11);
	for (size_t i = 0; i < n; i++) {
		char err[256] = "", line[512];
		if (sym_policy_validate(list[i], err, sizeof(err)))
			fail_msg("%s: %s", list[i]->name, err);
		/* a help line per parameter and preset, each naming its key */
		size_t lines = 0;
		for (const struct sym_param *prm = list[i]->params; prm && prm->key; prm++, lines++) {
			assert_true(sym_policy_help_line(list[i], lines, line, sizeof(line)));
			assert_contains(line, prm->key);
		}
		for (const struct sym_policy_preset *pr = list[i]->presets; pr && pr->word; pr++, lines++) {
			assert_true(sym_policy_help_line(list[i], lines, line, sizeof(line)));
			assert_contains(line, pr->word);
		}
		assert_false(sym_policy_help_line(list[i], lines, line, sizeof(line)));
	}
}

/* Parsing the bare name gives every table default. */
static void test_defaults(void **state)
{
	(void)state;
	register_testfill();
	size_t n;
	const struct sym_policy_ops *const *list = sym_policy_list(&n);
	for (size_t i = 0; i < n; i++) {
		char spec[128], err[256] = "";
		spec_with(list[i], NULL, spec, sizeof(spec));
		struct sym_policy p;
		if (sym_policy_parse(spec, &p, err, sizeof(err)))
			fail_msg("%s: %s", spec, err);
		assert_true(sym_policy_is_scheduler(&p) == (list[i]->sched != NULL));
		for (const struct sym_param *prm = list[i]->params; prm && prm->key; prm++) {
			double x = NAN;
			if (prm->type == SYM_PARAM_PER_MODEL) {
				char key[80];
				snprintf(key, sizeof(key), "%s.anymodel", prm->key);
				assert_int_equal(sym_policy_param_num(&p, key, &x), -ENOENT);
				continue;
			}
			assert_int_equal(sym_policy_param_num(&p, prm->key, &x), 0);
			if (!prm->required && x != prm->def)
				fail_msg("%s: %s is %g, its default %g", spec, prm->key, x, prm->def);
		}
		assert_int_equal(sym_policy_param_num(&p, "nosuchkey", &(double){ 0 }), -ENOENT);
	}
	/* a few by name */
	struct sym_policy p;
	char err[256], buf[64];
	assert_int_equal(sym_policy_parse("shepherd", &p, err, sizeof(err)), 0);
	assert_true(cd_param(&p, "lambda") == 3);
	assert_int_equal(sym_policy_parse("nexus", &p, err, sizeof(err)), 0);
	assert_string_equal(cd_param_text(&p, "spare"), "use");
	assert_int_equal(sym_policy_parse("clockwork", &p, err, sizeof(err)), 0);
	assert_string_equal(cd_param_text(&p, "reject"), "10");
	assert_int_equal(sym_policy_parse("timeout:30%", &p, err, sizeof(err)), 0);
	assert_int_equal(sym_policy_param_text(&p, "timeout", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "30%");
	assert_true(cd_param(&p, "timeout") == 30);
}

/* Each parameter's bad values: the message names the policy, the key and
 * the accepted range. */
static void bad_values(const struct sym_policy_ops *ops, const struct sym_param *prm)
{
	char name[80], spec[256], item[160], lo[32], hi[32];
	snprintf(name, sizeof(name), "policy '%s", ops->name);
	const char *key = prm->key;
	char pm_key[80];
	if (prm->type == SYM_PARAM_PER_MODEL) {
		snprintf(pm_key, sizeof(pm_key), "%s.somemodel", prm->key);
		key = pm_key;
	}
	if (prm->type == SYM_PARAM_ENUM || prm->type == SYM_PARAM_BOOL) {
		snprintf(item, sizeof(item), "%s=zzz", key);
		spec_with(ops, item, spec, sizeof(spec));
		expect_bad(spec, name, key, prm->type == SYM_PARAM_BOOL ? "true" : prm->words[0].word);
		return;
	}
	bool num = prm->type == SYM_PARAM_NUM;
	snprintf(lo, sizeof(lo), num ? "%g" : "%.0f", prm->lo);
	snprintf(hi, sizeof(hi), num ? "%g" : "%.0f", prm->hi);
	const char *vals[8];
	char below[32], above[32];
	int nv = 0;
	snprintf(below, sizeof(below), "%.17g", prm->lo_open ? prm->lo : prm->lo - 1);
	vals[nv++] = below;
	if (isfinite(prm->hi)) {
		snprintf(above, sizeof(above), "%.17g", num ? prm->hi * 2 + 1 : prm->hi + 1);
		vals[nv++] = above;
	}
	vals[nv++] = "abc";
	vals[nv++] = num ? "nan" : "1.5";
	vals[nv++] = num ? "1e999" : "99999999999999999999";
	for (int i = 0; i < nv; i++) {
		snprintf(item, sizeof(item), "%s=%s", key, vals[i]);
		spec_with(ops, item, spec, sizeof(spec));
		expect_bad(spec, name, key, lo);
		if (isfinite(prm->hi))
			expect_bad(spec, name, key, hi);
	}
	if (prm->percent) {
		snprintf(item, sizeof(item), "%s=%.17g%%", key, prm->pct_hi + 1);
		spec_with(ops, item, spec, sizeof(spec));
		expect_bad(spec, name, key, "percent");
	}
}

static void test_bad_values(void **state)
{
	(void)state;
	register_testfill();
	size_t n;
	const struct sym_policy_ops *const *list = sym_policy_list(&n);
	for (size_t i = 0; i < n; i++) {
		const struct sym_policy_ops *ops = list[i];
		char spec[256], name[80];
		snprintf(name, sizeof(name), "'%s'", ops->name);
		for (const struct sym_param *prm = ops->params; prm && prm->key; prm++)
			bad_values(ops, prm);
		/* an unknown key, and a parameter for a policy that takes none */
		spec_with(ops, "zzz=1", spec, sizeof(spec));
		expect_bad(spec, name, ops->params ? "unknown parameter 'zzz'" : "takes no parameters", NULL);
		/* a bare word that is no preset, for a policy without a bare parameter */
		bool bare = false;
		for (const struct sym_param *prm = ops->params; prm && prm->key; prm++)
			bare |= prm->bare != SYM_PARAM_KEYED;
		if (ops->params && !bare) {
			spec_with(ops, "zzz", spec, sizeof(spec));
			expect_bad(spec, name, "expected key=value", "'zzz'");
		}
		if (is_required(ops)) {
			snprintf(spec, sizeof(spec), "%s", ops->name);
			expect_bad(spec, name, "needs", NULL);
		}
	}
	/* per-model keys: a name is needed, once each, at most 16 */
	expect_bad("testfill:batch.=3", "testfill", "batch.MODEL", NULL);
	expect_bad("testfill:batch.a=1,batch.a=2", "testfill", "batch.a given twice", NULL);
	char many[512] = "testfill:";
	for (int i = 0; i <= SYM_POLICY_MAX_OVERRIDES; i++) {
		size_t l = strlen(many);
		snprintf(many + l, sizeof(many) - l, "%sbatch.m%d=1", i ? "," : "", i);
	}
	expect_bad(many, "testfill", "too many", NULL);
}

/* ---- random valid specs round-trip ---- */

static uint64_t rng = 12345;

static int rnd(int n)
{
	return (int)(cd_rnd(&rng) * n);
}

/* A random value prm accepts. */
static void random_value(const struct sym_param *prm, char *buf, size_t len)
{
	double span;
	switch (prm->type) {
	case SYM_PARAM_ENUM: {
		int nw = 0;
		while (prm->words[nw].word)
			nw++;
		snprintf(buf, len, "%s", prm->words[rnd(nw)].word);
		return;
	}
	case SYM_PARAM_BOOL:
		snprintf(buf, len, "%s", (const char *[]){ "true", "false", "1", "0" }[rnd(4)]);
		return;
	case SYM_PARAM_NUM:
		if (prm->words && prm->words[0].word && rnd(4) == 0) {
			snprintf(buf, len, "%s", prm->words[0].word);
			return;
		}
		if (prm->percent && rnd(2)) {
			snprintf(buf, len, "%.17g%%", cd_rnd(&rng) * prm->pct_hi);
			return;
		}
		span = (isfinite(prm->hi) ? prm->hi : prm->lo + 1000) - prm->lo;
		/* an exact bound, a round number, or any double */
		switch (rnd(3)) {
		case 0:
			snprintf(buf, len, "%.17g", rnd(2) && !prm->lo_open ? prm->lo : prm->lo + span);
			return;
		case 1:
			snprintf(buf, len, "%.3f", prm->lo + span * (0.001 + 0.998 * cd_rnd(&rng)));
			return;
		default:
			snprintf(buf, len, "%.17g", prm->lo + span * (0.001 + 0.998 * cd_rnd(&rng)));
			return;
		}
	default:
		snprintf(buf, len, "%.0f", prm->lo + floor(cd_rnd(&rng) * (fmin(prm->hi, prm->lo + 5000) - prm->lo + 1)));
		return;
	}
}

/* A random valid spec of ops: a preset or not, then random items. */
static void random_spec(const struct sym_policy_ops *ops, char *buf, size_t len)
{
	size_t l = (size_t)snprintf(buf, len, "%s", ops->name);
	char sep = ':';
	int npreset = 0, nparams = 0;
	while (ops->presets && ops->presets[npreset].word)
		npreset++;
	while (ops->params && ops->params[nparams].key)
		nparams++;
	if (npreset && rnd(3) == 0) {
		l += (size_t)snprintf(buf + l, len - l, "%c%s", sep, ops->presets[rnd(npreset)].word);
		sep = ',';
	}
	int items = nparams ? rnd(6) : 0, models = 0;
	for (int i = 0; i < nparams; i++) {
		const struct sym_param *prm = &ops->params[i];
		if (!prm->required && (i >= items && rnd(3)))
			continue;
		char val[64];
		random_value(prm, val, sizeof(val));
		if (prm->type == SYM_PARAM_PER_MODEL) {
			for (int k = rnd(4); k > 0; k--, sep = ',')
				l += (size_t)snprintf(buf + l, len - l, "%c%s.model_%d=%s", sep, prm->key, models++, val);
			continue;
		}
		if (prm->bare != SYM_PARAM_KEYED && rnd(2))
			l += (size_t)snprintf(buf + l, len - l, "%c%s", sep, val);
		else
			l += (size_t)snprintf(buf + l, len - l, "%c%s=%s", sep, prm->key, val);
		sep = ',';
	}
}

static void test_round_trip_random(void **state)
{
	(void)state;
	register_testfill();
	size_t n;
	const struct sym_policy_ops *const *list = sym_policy_list(&n);
	int checked = 0;
	for (int iter = 0; iter < 3000; iter++) {
		const struct sym_policy_ops *ops = list[iter % n];
		char spec[1024], text[1024], text2[1024], err[512] = "";
		random_spec(ops, spec, sizeof(spec));
		struct sym_policy p, q;
		int rc = sym_policy_parse(spec, &p, err, sizeof(err));
		if (rc && ops->check) /* a spec the table accepts may fail the policy's cross-checks */
			continue;
		if (rc)
			fail_msg("'%s': %s", spec, err);
		sym_policy_format(&p, text, sizeof(text));
		if (sym_policy_parse(text, &q, err, sizeof(err)))
			fail_msg("'%s' formats as '%s', which does not parse: %s", spec, text, err);
		if (!sym_policy_equal(&p, &q))
			fail_msg("'%s' formats as '%s', which parses to another policy", spec, text);
		assert_string_equal(sym_policy_format(&q, text2, sizeof(text2)), text);
		/* and each value reads back the same through the canonical text */
		for (const struct sym_param *prm = ops->params; prm && prm->key; prm++) {
			double a, b;
			if (prm->type == SYM_PARAM_PER_MODEL)
				continue;
			assert_int_equal(sym_policy_param_num(&p, prm->key, &a), 0);
			assert_int_equal(sym_policy_param_num(&q, prm->key, &b), 0);
			assert_true(a == b);
		}
		checked++;
	}
	assert_true(checked > 2500);
	/* different values are different policies */
	struct sym_policy a, b;
	char err[256];
	assert_int_equal(sym_policy_parse("urgency:max.x=2", &a, err, sizeof(err)), 0);
	assert_int_equal(sym_policy_parse("urgency:max.x=3", &b, err, sizeof(err)), 0);
	assert_false(sym_policy_equal(&a, &b));
	assert_int_equal(sym_policy_parse("urgency", &a, err, sizeof(err)), 0);
	assert_false(sym_policy_equal(&a, &b));
	assert_int_equal(sym_policy_parse("timeout:5", &a, err, sizeof(err)), 0);
	assert_int_equal(sym_policy_parse("timeout:5%", &b, err, sizeof(err)), 0);
	assert_false(sym_policy_equal(&a, &b));
	assert_int_equal(sym_policy_parse("eager", &b, err, sizeof(err)), 0);
	assert_false(sym_policy_equal(&a, &b));
}

/* ---- a policy added without touching the core ---- */

static void test_registered_policy_parses(void **state)
{
	(void)state;
	register_testfill();
	struct sym_policy p;
	char err[256] = "", buf[256];
	assert_int_equal(sym_policy_parse("testfill", &p, err, sizeof(err)), 0);
	assert_string_equal(sym_policy_format(&p, buf, sizeof(buf)), "testfill");
	assert_int_equal(sym_policy_parse("testfill:greedy=1,order=high,batch.m0=3,4", &p, err, sizeof(err)), 0);
	assert_string_equal(sym_policy_format(&p, buf, sizeof(buf)), "testfill:batch=4,batch.m0=3,order=high,greedy=true");
	assert_true(cd_param(&p, "batch.m0") == 3);
	assert_string_equal(cd_param_text(&p, "greedy"), "true");
	expect_bad("testfill:greedy=maybe", "testfill", "greedy must be true, false, on, off, 1 or 0", "'maybe'");
	expect_bad("testfill:batch=65", "testfill", "batch must be an integer in 1..64", "'65'");
	/* the help names its parameters */
	assert_true(sym_policy_help_line(sym_policy_find("testfill"), 3, buf, sizeof(buf)));
	assert_contains(buf, "greedy=true|false");
	assert_contains(buf, "default false");
	/* a name is registered once */
	assert_int_equal(sym_policy_register(&testfill, err, sizeof(err)), -EEXIST);
	assert_contains(err, "testfill");
	assert_int_equal(sym_policy_parse("nosuch", &p, err, sizeof(err)), -ENOENT);
	assert_contains(err, "testfill");
}

/* Two models (m0, m1), two GPUs, l(b) = b + 5 ms. At 0: m0, m1, m0, m0, m1,
 * m0, m1. The first two take a GPU each alone (1 ms... 6 ms); the rest
 * queue: m0 has requests 2, 3, 5 and m1 has 4, 6. */
static void fill_run(const char *spec, const int (*want)[4], int nwant)
{
	struct sym_profile prof;
	assert_int_equal(sym_profile_init_linear(&prof, "p", 1, 5, 8), 0);
	struct sym_model_cfg mc[2] = { { &prof, 100 * SYM_MS, 0, "m0", { NULL }, 0, 0 },
				       { &prof, 100 * SYM_MS, 0, "m1", { NULL }, 0, 0 } };
	struct sym_core_cfg cfg = { .nmodels = 2, .models = mc, .ngpus = 2 };
	struct cd_driver *dr = cd_new();
	cd_start_policy(dr, &cfg, spec);
	const int models[] = { 0, 1, 0, 0, 1, 0, 1 };
	for (int i = 0; i < 7; i++)
		cd_arrive(dr, 0, models[i]);
	cd_run(dr);
	if (dr->nd != nwant)
		fail_msg("%s: %d dispatches, want %d", spec, dr->nd, nwant);
	for (int i = 0; i < nwant; i++) {
		/* want: time (ms), GPU, model, first request id */
		assert_int_equal(dr->d[i].now, want[i][0] * SYM_MS);
		assert_int_equal(dr->d[i].gpu, want[i][1]);
		assert_int_equal(dr->d[i].model, want[i][2]);
		assert_int_equal((int)dr->d[i].ids[0], want[i][3]);
	}
	assert_int_equal(dr->ndrops, 0);
	cd_free(dr);
	sym_profile_finish(&prof);
}

static void test_registered_policy_runs(void **state)
{
	(void)state;
	register_testfill();
	/* order=low, batch 2: at 6 GPU 0 takes m0's 2, 3 (until 13), GPU 1 m0's 5
	 * (until 12); at 12 GPU 1 takes m1's 4, 6 */
	fill_run("testfill", (const int[][4]){ { 0, 0, 0, 0 }, { 0, 1, 1, 1 }, { 6, 0, 0, 2 }, { 6, 1, 0, 5 },
					       { 12, 1, 1, 4 } }, 5);
	/* order=high: at 6 GPU 0 takes m1's 4, 6, GPU 1 m0's 2, 3; at 13 GPU 0 m0's 5 */
	fill_run("testfill:order=high", (const int[][4]){ { 0, 0, 0, 0 }, { 0, 1, 1, 1 }, { 6, 0, 1, 4 },
							  { 6, 1, 0, 2 }, { 13, 0, 0, 5 } }, 5);
	/* m0's batch 3 (or greedy): at 6 GPU 0 takes 2, 3, 5 and GPU 1 m1's 4, 6 */
	const int both[][4] = { { 0, 0, 0, 0 }, { 0, 1, 1, 1 }, { 6, 0, 0, 2 }, { 6, 1, 1, 4 } };
	fill_run("testfill:batch.m0=3", both, 4);
	fill_run("testfill:greedy=true", both, 4);
}

/* ---- what a definition must be ---- */

static void test_validate(void **state)
{
	(void)state;
	struct bad {
		const char *why;
		struct sym_param t[3];
		size_t size;
	};
	const struct bad bads[] = {
		{ "given twice", { tf_table[0], tf_table[0], { .key = NULL } }, sizeof(struct tf_params) },
		{ "outside", { tf_table[0], { .key = NULL } }, 2 },
		{ "default", { { .key = "x", .type = SYM_PARAM_INT, .lo = 1, .hi = 4, .def = 0 }, { .key = NULL } }, 8 },
		{ "words", { { .key = "x", .type = SYM_PARAM_ENUM }, { .key = NULL } }, 8 },
		{ "alias", { { .key = "x", .type = SYM_PARAM_ENUM, .words = order_words, .alias = true },
			     { .key = NULL } }, 8 },
		{ "word", { { .key = "a.b", .type = SYM_PARAM_INT, .lo = 1, .hi = 4, .def = 1 }, { .key = NULL } }, 8 },
		{ "range", { { .key = "x", .type = SYM_PARAM_NUM, .lo = 2, .hi = 1, .def = 1 }, { .key = NULL } }, 8 },
	};
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		struct sym_policy_ops ops = testfill;
		ops.name = "broken";
		ops.params = bads[i].t;
		ops.params_size = bads[i].size;
		char err[256] = "";
		assert_int_equal(sym_policy_register(&ops, err, sizeof(err)), -EINVAL);
		assert_contains(err, "broken");
		assert_contains(err, bads[i].why);
	}
	struct sym_policy_ops ops = testfill;
	char err[256] = "";
	ops.name = "a:b";
	assert_int_equal(sym_policy_validate(&ops, err, sizeof(err)), -EINVAL);
	ops.name = "both";
	ops.exec = NULL;
	ops.sched = NULL;
	assert_int_equal(sym_policy_validate(&ops, err, sizeof(err)), -EINVAL);
	assert_contains(err, "exactly one of exec and sched");
	ops = testfill;
	ops.presets = (const struct sym_policy_preset[]){ { "fast", "batch=99", NULL }, { NULL, NULL, NULL } };
	assert_int_equal(sym_policy_validate(&ops, err, sizeof(err)), -EINVAL);
	assert_contains(err, "batch must be");
	assert_null(sym_policy_find("broken"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_valid),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_round_trip_random),
		cmocka_unit_test(test_registered_policy_parses),
		cmocka_unit_test(test_registered_policy_runs),
		cmocka_unit_test(test_validate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
