/* Urgency scheduler and its baselines (fcfs, edf): worked examples with
 * exact dispatches, the resource choice, consolidation limits, the history
 * table's fit, parameters, and conservation on a heterogeneous overload. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "core/core.h"
#include "coredriver.h"
#include "testutil.h"

static struct sym_core_cfg make_cfg(const char *policy, const struct sym_model_cfg *mc, int nmodels, int ngpus)
{
	struct sym_core_cfg cfg = { .nmodels = nmodels, .models = mc, .ngpus = ngpus };
	char err[256] = "";
	if (sym_policy_parse(policy, &cfg.policy, err, sizeof(err)))
		fail_msg("%s: %s", policy, err);
	assert_int_equal(sym_gather_parse("lazy", &cfg.gather), 0);
	return cfg;
}

static void expect(const struct cd_driver *dr, int i, sym_time now, int model, int size, int gpu)
{
	const struct cd_dispatch *d = &dr->d[i];
	if (d->now != now || d->model != model || d->size != size || d->gpu != gpu)
		fail_msg("dispatch %d: got (%.3f ms, model %d, size %d, gpu %d), want (%.3f ms, model %d, size %d, gpu %d)",
			 i, sym_to_ms(d->now), d->model, d->size, d->gpu, sym_to_ms(now), model, size, gpu);
}

/* Worked example: one GPU, l(b) = b + 4 ms. Model A (0) SLO 30 ms, model B
 * (1) SLO 20 ms. B's request at 0 takes the GPU until 5 ms; four A requests
 * arrive at 1 ms (deadline 31), one B request at 2 ms (deadline 22). At 5 ms:
 *   A: b = 4, est l(4) = 8, slack = 31 - 5 - 8 = 18 ms, U = -18^3 = -5832;
 *   B: b = 1, est l(1) = 5, slack = 22 - 5 - 5 = 12 ms, U = -12^3 = -1728.
 * By slack alone B is more urgent. Loads with navg=slo (expected = rate * SLO; the default
 * navg=second gives the same picks here, see the end of test_load_changes_pick):
 *   rates 133.3/s and 50/s: L_A = L_B = 1, the pure slack order: B[1] at 5 ms,
 *     A[4] at 10 ms (done 18 <= 31), in every form.
 *   Published product U*L (the default), rates 1000/s and 50/s: L_A = 4/30,
 *     L_B = 1: A -777.6, B -1728, A wins: A[4] at 5 ms (done 13), then B[1]
 *     at 13 ms (done 18 <= 22). (With a negative U a *smaller* relative load
 *     makes A more urgent: the product's known sign effect.)
 *   load=monotone (U/L for U < 0), rates 100/s and 500/s: L_A = 4/3,
 *     L_B = 1/10: A -4374, B -17280, A wins; the product would give A -7776,
 *     B -172.8 and pick B.
 * Linear (U = -slack) picks the same way (product: -2.4 vs -12; monotone:
 * -13.5 vs -120). Exp (2^-slack, log2: -slack + log2 L) is dominated by the
 * slack: B first at rates 100/500 (-17.6 vs -15.3). */
static void load_run(const char *policy, double rate_a, double rate_b, bool a_first)
{
	struct sym_profile prof;
	assert_int_equal(sym_profile_init_linear(&prof, "p", 1, 4, 8), 0);
	struct sym_model_cfg mc[2] = {
		{ .profile = &prof, .slo = 30 * SYM_MS, .rate_hint = rate_a, .name = "a" },
		{ .profile = &prof, .slo = 20 * SYM_MS, .rate_hint = rate_b, .name = "b" },
	};
	struct sym_core_cfg cfg = make_cfg(policy, mc, 2, 1);
	struct cd_driver *dr = cd_new();
	cd_start(dr, &cfg);
	cd_arrive(dr, 0, 1);
	for (int i = 0; i < 4; i++)
		cd_arrive(dr, 1 * SYM_MS, 0);
	cd_arrive(dr, 2 * SYM_MS, 1);
	cd_run(dr);
	assert_int_equal(dr->nd, 3);
	expect(dr, 0, 0, 1, 1, 0);
	if (a_first) {
		expect(dr, 1, 5 * SYM_MS, 0, 4, 0);
		expect(dr, 2, 13 * SYM_MS, 1, 1, 0);
	} else {
		expect(dr, 1, 5 * SYM_MS, 1, 1, 0);
		expect(dr, 2, 10 * SYM_MS, 0, 4, 0);
	}
	assert_int_equal(dr->ndrops, 0);
	assert_int_equal(dr->nlate, 0);
	cd_free(dr);
	sym_profile_finish(&prof);
}

static void test_load_changes_pick(void **state)
{
	(void)state;
	const double equal_a = 4 / 0.030, equal_b = 1 / 0.020;
	load_run("urgency:app=signed", 1000, 50, true);
	load_run("urgency:navg=slo,app=signed", 1000, 50, true);
	load_run("urgency:app=signed", equal_a, equal_b, false);
	load_run("urgency:navg=slo,app=signed", equal_a, equal_b, false);
	load_run("urgency:app=signed", 100, 500, false);
	load_run("urgency:load=monotone,navg=slo,app=signed", 100, 500, true);
	load_run("urgency:load=monotone,app=signed", 100, 500, true);
	load_run("urgency:load=monotone,app=signed", equal_a, equal_b, false);
	load_run("urgency:shape=linear,app=signed", 1000, 50, true);
	load_run("urgency:shape=linear,app=signed", equal_a, equal_b, false);
	load_run("urgency:shape=linear,load=monotone,app=signed", 100, 500, true);
	load_run("urgency:shape=exp,app=signed", 100, 500, false);
	load_run("urgency:shape=exp,load=monotone,app=signed", 100, 500, false);
	load_run("urgency:shape=exp,app=signed", equal_a, equal_b, false);
	/* Eq. 3 (navg=second, the default) against navg=slo: at rates 1100/s and 100/s, per second
	 * L_A = 4/1100, L_B = 1/100: A -21.2, B -17.3, B first; per SLO L_A = 4/33, L_B = 1/2:
	 * A -706.9, B -864, A first. (The cases above pick alike under both: their load ratios are
	 * far from the boundary, rA/rB > 13.5 per second, > 9 per SLO.) */
	load_run("urgency:app=signed", 1100, 100, false);
	load_run("urgency:navg=second,app=signed", 1100, 100, false);
	load_run("urgency:navg=slo,app=signed", 1100, 100, true);
	/* Eq. 5 as printed (the default, app=abs), rates 1000/50: |U_A| = 5832 * 4/1000 = 23.3,
	 * |U_B| = 1728 / 50 = 34.6: B, the application with more slack relative to its load, goes
	 * first; app=signed picks A (-23.3 > -34.6). With equal loads (L = 1) Eq. 5 ranks by slack
	 * the other way round from the signed rule: |U_A| = 5832 > |U_B| = 1728, A first (A has the
	 * more slack); both still end in time here. */
	load_run("urgency", 1000, 50, false);
	load_run("urgency:app=abs", 1000, 50, false);
	load_run("urgency", equal_a, equal_b, true);
	load_run("urgency:navg=slo", equal_a, equal_b, true);
	load_run("urgency:app=abs,shape=exp", 100, 500, false); /* exp: urg > 0, the two agree */
	load_run("urgency:shape=exp", equal_a, equal_b, false);
}

/* The resource: the free kind where the application is least urgent (the
 * most slack). GPU 0 is slow (l = 2b + 8 ms), GPU 1 fast (l = b + 4 ms), SLO
 * 50 ms: slack 40 vs 45 ms, so the first request goes to GPU 1 although
 * GPU 0 has the lower id, the second (at the same time) to GPU 0, the only
 * free one. With a CPU kind and a GPU kind of equal speed the tie goes to
 * the GPU. */
static void test_resource_choice(void **state)
{
	(void)state;
	struct sym_profile slow, fast;
	assert_int_equal(sym_profile_init_linear(&slow, "slow", 2, 8, 8), 0);
	assert_int_equal(sym_profile_init_linear(&fast, "fast", 1, 4, 8), 0);
	struct sym_model_cfg mc = { .profile = &slow, .slo = 50 * SYM_MS, .name = "m", .by_kind = { NULL, &fast } };
	int gpu_kind[2] = { 0, 1 };
	for (int v = 0; v < 2; v++) {
		struct sym_kind kinds[2] = { { .name = "k0", .cpu = v == 1 }, { .name = "k1" } };
		if (v == 1)
			mc.profile = &fast; /* equal speeds, kind 0 is a CPU */
		struct sym_core_cfg cfg = make_cfg("urgency", &mc, 1, 2);
		cfg.nkinds = 2;
		cfg.kinds = kinds;
		cfg.gpu_kind = gpu_kind;
		struct cd_driver *dr = cd_new();
		cd_start(dr, &cfg);
		cd_arrive(dr, 0, 0);
		cd_arrive(dr, 0, 0);
		cd_run(dr);
		assert_int_equal(dr->nd, 2);
		expect(dr, 0, 0, 0, 1, 1);
		expect(dr, 1, 0, 0, 1, 0);
		assert_int_equal(dr->d[0].finish, 5 * SYM_MS);
		assert_int_equal(dr->d[1].finish, (v ? 5 : 10) * SYM_MS);
		cd_free(dr);
	}
	sym_profile_finish(&slow);
	sym_profile_finish(&fast);
}

/* Consolidation limit. One GPU, l = b + 4 ms (largest batch 8), SLO 200 ms,
 * models resnet (0) and bert (1). A resnet request at 0 takes the GPU; at
 * 1 ms 7 more resnet and 5 bert requests queue. The sizes issued per model
 * follow the limit: max=4 and max.resnet=2 gives resnet 1,2,2,2,1 and bert
 * 4,1; max=4 alone resnet 1,4,3; max=100 is capped at the largest batch 8:
 * resnet 1,7 and bert 5, as with no limit. */
static void limit_run(const char *policy, const int *want_resnet, int nres, const int *want_bert, int nbert)
{
	struct sym_profile prof;
	assert_int_equal(sym_profile_init_linear(&prof, "p", 1, 4, 8), 0);
	struct sym_model_cfg mc[2] = {
		{ .profile = &prof, .slo = 200 * SYM_MS, .rate_hint = 10, .name = "resnet" },
		{ .profile = &prof, .slo = 200 * SYM_MS, .rate_hint = 10, .name = "bert" },
	};
	struct sym_core_cfg cfg = make_cfg(policy, mc, 2, 1);
	struct cd_driver *dr = cd_new();
	cd_start(dr, &cfg);
	cd_arrive(dr, 0, 0);
	for (int i = 0; i < 7; i++)
		cd_arrive(dr, 1 * SYM_MS, 0);
	for (int i = 0; i < 5; i++)
		cd_arrive(dr, 1 * SYM_MS, 1);
	cd_run(dr);
	int got[2][16], n[2] = { 0, 0 };
	for (int i = 0; i < dr->nd; i++) {
		int m = dr->d[i].model;
		assert_true(n[m] < 16);
		got[m][n[m]++] = dr->d[i].size;
	}
	if (n[0] != nres || n[1] != nbert)
		fail_msg("%s: %d resnet and %d bert batches, want %d and %d", policy, n[0], n[1], nres, nbert);
	for (int i = 0; i < nres; i++)
		assert_int_equal(got[0][i], want_resnet[i]);
	for (int i = 0; i < nbert; i++)
		assert_int_equal(got[1][i], want_bert[i]);
	assert_int_equal(dr->ndrops, 0);
	cd_free(dr);
	sym_profile_finish(&prof);
}

static void test_consolidation_limit(void **state)
{
	(void)state;
	limit_run("urgency:max=4,max.resnet=2", (int[]){ 1, 2, 2, 2, 1 }, 5, (int[]){ 4, 1 }, 2);
	limit_run("urgency:max=4", (int[]){ 1, 4, 3 }, 3, (int[]){ 4, 1 }, 2);
	limit_run("urgency:max.bert=3", (int[]){ 1, 7 }, 2, (int[]){ 3, 2 }, 2);
	limit_run("urgency:max=100", (int[]){ 1, 7 }, 2, (int[]){ 5 }, 1);
	limit_run("urgency", (int[]){ 1, 7 }, 2, (int[]){ 5 }, 1);
}

/* ---- the history table: a core driven by hand, GPUs freed at chosen times ---- */

#define HX_MAXR 64

struct hx {
	struct sym_core *core;
	struct sym_request req[HX_MAXR];
	int nreq;
	int nd;
	int last_gpu, last_size;
	sym_time last_now;
};

static void hx_dispatch(void *ctx, const struct sym_dispatch *d)
{
	struct hx *h = ctx;
	h->nd++;
	h->last_gpu = d->gpu;
	h->last_size = d->size;
	h->last_now = d->now;
}

static void hx_drop(void *ctx, struct sym_request *r, enum sym_drop_reason why, sym_time now)
{
	(void)ctx;
	(void)r;
	(void)why;
	(void)now;
	fail_msg("unexpected drop");
}

static void hx_arrive_sized(struct hx *h, sym_time t, int n, float size)
{
	for (int i = 0; i < n; i++) {
		assert_true(h->nreq < HX_MAXR);
		struct sym_request *r = &h->req[h->nreq];
		*r = (struct sym_request){ .id = (uint64_t)h->nreq, .arrival = t, .deadline = t + 1000 * SYM_MS,
					   .size = size };
		h->nreq++;
		assert_int_equal(sym_core_arrive(h->core, r, t), 0);
	}
}

static void hx_arrive(struct hx *h, sym_time t, int n)
{
	hx_arrive_sized(h, t, n, 0);
}

/* h's core under policy: one model (SLO 1 s) on two GPUs of two kinds,
 * GPU 0 of kind 0 (l = b + 4 ms, fast) and GPU 1 of kind 1 (l = 2b + 6). */
static void two_kinds(struct hx *h, const char *policy, struct sym_profile *fast, struct sym_profile *slow)
{
	assert_int_equal(sym_profile_init_linear(fast, "fast", 1, 4, 8), 0);
	assert_int_equal(sym_profile_init_linear(slow, "slow", 2, 6, 8), 0);
	struct sym_model_cfg mc = { .profile = fast, .slo = 1000 * SYM_MS, .name = "m", .by_kind = { NULL, slow } };
	struct sym_kind kinds[2] = { { .name = "k0" }, { .name = "k1" } };
	int gpu_kind[2] = { 0, 1 };
	struct sym_core_cfg cfg = make_cfg(policy, &mc, 1, 2);
	cfg.nkinds = 2;
	cfg.kinds = kinds;
	cfg.gpu_kind = gpu_kind;
	memset(h, 0, sizeof(*h));
	struct sym_sink sink = { .ctx = h, .dispatch = hx_dispatch, .drop = hx_drop };
	char err[256] = "";
	if (sym_core_create_err(&h->core, &cfg, &sink, err, sizeof(err)))
		fail_msg("%s", err);
}

/* Kind 0 (GPU 0) is fast by its profile, l = b + 4 ms; kind 1 (GPU 1) is
 * l = 2b + 6 ms. SLO 1 s. Requests at 0 go to GPU 0 (the most slack), then
 * GPU 1. GPU 1 stays busy while GPU 0 serves batches of 1 and 2 (or only 1)
 * that really take 10b + 20 ms: each is freed at start + 10b + 20, the queued
 * requests taking it at once. After five completions on kind 0 a request
 * arriving with both GPUs free goes
 *   - to GPU 1 once the fit (min_samples=4, sizes 1 and 2) says l(1) = 30 ms
 *     on kind 0 (slack 970 ms) against kind 1's profile 8 ms (992 ms);
 *   - to GPU 0 while the profile still rules: too few samples
 *     (min_samples 16), or a single batch size (no line to fit). */
static void fit_run(const char *policy, bool two_sizes, int want_gpu)
{
	struct sym_profile fast, slow;
	static struct hx h;
	two_kinds(&h, policy, &fast, &slow);
	hx_arrive(&h, 0, 1);
	assert_int_equal(h.last_gpu, 0);
	hx_arrive(&h, 0, 1);
	assert_int_equal(h.last_gpu, 1);
	sym_time start = 0;
	int size = 1;
	for (int i = 0; i < 5; i++) {
		int next = i == 4 ? 0 : two_sizes && size == 1 ? 2 : 1;
		if (next)
			hx_arrive(&h, start + 1 * SYM_MS, next);
		sym_time t = start + (10 * size + 20) * SYM_MS;
		int nd = h.nd;
		sym_core_gpu_free(h.core, 0, t);
		if (next) {
			assert_int_equal(h.nd, nd + 1);
			assert_int_equal(h.last_gpu, 0);
			assert_int_equal(h.last_size, next);
			assert_int_equal(h.last_now, t);
		}
		start = t;
		size = next;
	}
	sym_core_gpu_free(h.core, 1, start + 1 * SYM_MS);
	int nd = h.nd;
	hx_arrive(&h, start + 2 * SYM_MS, 1);
	assert_int_equal(h.nd, nd + 1);
	if (h.last_gpu != want_gpu)
		fail_msg("%s (%s): went to GPU %d, want %d", policy, two_sizes ? "sizes 1, 2" : "size 1", h.last_gpu,
			 want_gpu);
	assert_int_equal(sym_core_queued(h.core), 0);
	sym_core_destroy(h.core);
	sym_profile_finish(&fast);
	sym_profile_finish(&slow);
}

static void test_history_fit(void **state)
{
	(void)state;
	fit_run("urgency:min_samples=4", true, 1);
	fit_run("urgency:min_samples=5", true, 1);
	fit_run("urgency:min_samples=6", true, 0);
	fit_run("urgency", true, 0);
	fit_run("urgency:min_samples=4", false, 0);
}

/* The history table fits time against the batch's summed data size
 * (Section IV-A3), not its request count. The same two kinds as fit_run
 * (profiles l = b + 4 and 2b + 6 ms), min_samples 4; every batch on GPU 0
 * holds one request, of size 1, 3, 1, 3, 1, and really takes 10 size - 5
 * ms (5 or 25), GPU 1 busy meanwhile. The fit is 10 x - 5; by count (every
 * batch 1) there would be no line to fit. Then a request of size `size`
 * arrives with both GPUs free: size 0.5 gives EPT 0 on kind 0 against
 * kind 1's profile 8 ms, GPU 0; size 2 gives 15 ms, GPU 1. */
static void size_run(float size, int want_gpu)
{
	struct sym_profile fast, slow;
	static struct hx h;
	two_kinds(&h, "urgency:min_samples=4,max=1", &fast, &slow);
	hx_arrive_sized(&h, 0, 1, 1);
	assert_int_equal(h.last_gpu, 0);
	hx_arrive_sized(&h, 0, 1, 1);
	assert_int_equal(h.last_gpu, 1);
	const float sizes[] = { 1, 3, 1, 3, 1 };
	sym_time start = 0;
	for (int i = 0; i < 5; i++) {
		if (i < 4)
			hx_arrive_sized(&h, start + 1 * SYM_MS, 1, sizes[i + 1]);
		sym_time t = start + (sym_time)(10 * sizes[i] - 5) * SYM_MS;
		sym_core_gpu_free(h.core, 0, t);
		if (i < 4) {
			assert_int_equal(h.last_gpu, 0);
			assert_int_equal(h.last_now, t);
		}
		start = t;
	}
	sym_core_gpu_free(h.core, 1, start + 1 * SYM_MS);
	int nd = h.nd;
	hx_arrive_sized(&h, start + 2 * SYM_MS, 1, size);
	assert_int_equal(h.nd, nd + 1);
	if (h.last_gpu != want_gpu)
		fail_msg("size %g: went to GPU %d, want %d", size, h.last_gpu, want_gpu);
	sym_core_destroy(h.core);
	sym_profile_finish(&fast);
	sym_profile_finish(&slow);
}

static void test_history_by_size(void **state)
{
	(void)state;
	size_run(0.5f, 0);
	size_run(2, 1);
}

/* fcfs and edf. One GPU, l = b + 4 ms; model A (0) SLO 100 ms, B (1) SLO
 * 10 ms. A at 0 takes the GPU until 5 ms; A at 1 ms (deadline 101), B at
 * 2 ms (deadline 12).
 *   fcfs: A (arrived first) at 5 ms until 10; B cannot finish alone by 12
 *     (10 + 5 > 12): dropped, expired, at 10 ms.
 *   edf: B (deadline 12) at 5 ms until 10; A at 10 ms. */
static void test_fcfs_vs_edf(void **state)
{
	(void)state;
	struct sym_profile prof;
	assert_int_equal(sym_profile_init_linear(&prof, "p", 1, 4, 8), 0);
	struct sym_model_cfg mc[2] = {
		{ .profile = &prof, .slo = 100 * SYM_MS, .name = "a" },
		{ .profile = &prof, .slo = 10 * SYM_MS, .name = "b" },
	};
	for (int v = 0; v < 2; v++) {
		struct sym_core_cfg cfg = make_cfg(v ? "edf" : "fcfs", mc, 2, 1);
		struct cd_driver *dr = cd_new();
		cd_start(dr, &cfg);
		cd_arrive(dr, 0, 0);
		cd_arrive(dr, 1 * SYM_MS, 0);
		cd_arrive(dr, 2 * SYM_MS, 1);
		cd_run(dr);
		expect(dr, 0, 0, 0, 1, 0);
		if (v) {
			assert_int_equal(dr->nd, 3);
			expect(dr, 1, 5 * SYM_MS, 1, 1, 0);
			expect(dr, 2, 10 * SYM_MS, 0, 1, 0);
			assert_int_equal(dr->ndrops, 0);
		} else {
			assert_int_equal(dr->nd, 2);
			expect(dr, 1, 5 * SYM_MS, 0, 1, 0);
			assert_int_equal(dr->ndrops, 1);
			assert_int_equal(dr->drops[0].id, 2);
			assert_int_equal(dr->drops[0].why, SYM_DROP_EXPIRED);
			assert_int_equal(dr->drops[0].now, 10 * SYM_MS);
		}
		assert_int_equal(dr->nlate, 0);
		cd_free(dr);
	}
	sym_profile_finish(&prof);
}

/* max=N: four requests at 0 on one GPU (l = b + 4 ms). The first goes at
 * once (work conserving); by default the other three go together when the
 * GPU frees at 5 ms; with max=1 one at a time (5, 10, 15 ms); with max=2 two
 * at 5 ms (until 11) and the last at 11 ms. */
static void test_fifo_max(void **state)
{
	(void)state;
	struct sym_profile prof;
	assert_int_equal(sym_profile_init_linear(&prof, "p", 1, 4, 8), 0);
	struct sym_model_cfg mc = { .profile = &prof, .slo = 100 * SYM_MS, .name = "a" };
	const char *pols[] = { "fcfs", "edf:max=1", "fcfs:max=2" };
	for (int v = 0; v < 3; v++) {
		struct sym_core_cfg cfg = make_cfg(pols[v], &mc, 1, 1);
		struct cd_driver *dr = cd_new();
		cd_start(dr, &cfg);
		for (int i = 0; i < 4; i++)
			cd_arrive(dr, 0, 0);
		cd_run(dr);
		expect(dr, 0, 0, 0, 1, 0);
		if (v == 0) {
			assert_int_equal(dr->nd, 2);
			expect(dr, 1, 5 * SYM_MS, 0, 3, 0);
		} else if (v == 1) {
			assert_int_equal(dr->nd, 4);
			for (int i = 1; i < 4; i++)
				expect(dr, i, 5 * SYM_MS * i, 0, 1, 0);
		} else {
			assert_int_equal(dr->nd, 3);
			expect(dr, 1, 5 * SYM_MS, 0, 2, 0);
			expect(dr, 2, 11 * SYM_MS, 0, 1, 0);
		}
		cd_free(dr);
	}
	sym_profile_finish(&prof);
}

/* GPUs before CPUs, batches up to the kind's largest. Device 0 is a CPU
 * (l = b + 1 ms, largest batch 2), device 1 a GPU (l = b + 9 ms, largest 8).
 * Requests at 0 go to the GPU (until 10 ms) although the CPU is device 0 and
 * faster, then to the CPU (until 2 ms); five more at 1 ms are served by the
 * CPU as it frees, two at a time: 2 at 2 ms, 2 at 5 ms, 1 at 8 ms. */
static void test_gpu_before_cpu(void **state)
{
	(void)state;
	struct sym_profile cpu, gpu;
	assert_int_equal(sym_profile_init_linear(&cpu, "cpu", 1, 1, 2), 0);
	assert_int_equal(sym_profile_init_linear(&gpu, "gpu", 1, 9, 8), 0);
	struct sym_model_cfg mc = { .profile = &cpu, .slo = 100 * SYM_MS, .name = "m", .by_kind = { NULL, &gpu } };
	struct sym_kind kinds[2] = { { .name = "cpu", .cpu = true }, { .name = "gpu" } };
	int gpu_kind[2] = { 0, 1 };
	const char *pols[] = { "fcfs", "edf" };
	for (int v = 0; v < 2; v++) {
		struct sym_core_cfg cfg = make_cfg(pols[v], &mc, 1, 2);
		cfg.nkinds = 2;
		cfg.kinds = kinds;
		cfg.gpu_kind = gpu_kind;
		struct cd_driver *dr = cd_new();
		cd_start(dr, &cfg);
		cd_arrive(dr, 0, 0);
		cd_arrive(dr, 0, 0);
		for (int i = 0; i < 5; i++)
			cd_arrive(dr, 1 * SYM_MS, 0);
		cd_run(dr);
		assert_int_equal(dr->nd, 5);
		expect(dr, 0, 0, 0, 1, 1);
		expect(dr, 1, 0, 0, 1, 0);
		expect(dr, 2, 2 * SYM_MS, 0, 2, 0);
		expect(dr, 3, 5 * SYM_MS, 0, 2, 0);
		expect(dr, 4, 8 * SYM_MS, 0, 1, 0);
		assert_int_equal(dr->ndrops, 0);
		cd_free(dr);
	}
	sym_profile_finish(&cpu);
	sym_profile_finish(&gpu);
}

static void round_trip(const char *spec, const char *canonical)
{
	struct sym_policy p, q;
	char err[256] = "", buf[512], buf2[512];
	if (sym_policy_parse(spec, &p, err, sizeof(err)))
		fail_msg("%s: %s", spec, err);
	sym_policy_format(&p, buf, sizeof(buf));
	if (strcmp(buf, canonical))
		fail_msg("'%s' formats as '%s', want '%s'", spec, buf, canonical);
	assert_int_equal(sym_policy_parse(buf, &q, err, sizeof(err)), 0);
	assert_string_equal(sym_policy_format(&q, buf2, sizeof(buf2)), canonical);
	assert_true(sym_policy_equal(&q, &p));
}

static void bad(const char *spec, const char *needle)
{
	struct sym_policy p;
	char err[256] = "";
	int rc = sym_policy_parse(spec, &p, err, sizeof(err));
	if (rc != -EINVAL)
		fail_msg("'%s' gave %d, want -EINVAL", spec, rc);
	assert_contains(err, needle);
}

static void test_params(void **state)
{
	(void)state;
	round_trip("urgency", "urgency");
	round_trip("urgency:p=3,shape=power,min_samples=16", "urgency");
	round_trip("urgency:shape=linear", "urgency:shape=linear");
	round_trip("urgency:p=2.5", "urgency:p=2.5");
	round_trip("urgency:load=product", "urgency");
	round_trip("urgency:navg=second,app=abs", "urgency");
	round_trip("urgency:app=signed,navg=slo", "urgency:navg=slo,app=signed");
	round_trip("urgency:max=4,load=monotone", "urgency:load=monotone,max=4");
	round_trip("urgency:min_samples=8,max.resnet=4,p=2,shape=exp,max=8,max.bert_large=1",
		   "urgency:shape=exp,p=2,max=8,max.resnet=4,max.bert_large=1,min_samples=8");
	struct sym_policy p;
	char err[256];
	assert_int_equal(sym_policy_parse("urgency:shape=exp,p=0.5,max=3,max.x=2,min_samples=2", &p, err, sizeof(err)), 0);
	assert_string_equal(cd_param_text(&p, "shape"), "exp");
	assert_true(cd_param(&p, "p") == 0.5);
	assert_true(cd_param(&p, "max") == 3);
	assert_true(cd_param(&p, "max.x") == 2);
	double none;
	assert_int_equal(sym_policy_param_num(&p, "max.y", &none), -ENOENT);
	assert_true(cd_param(&p, "min_samples") == 2);
	assert_int_equal(sym_policy_parse("urgency", &p, err, sizeof(err)), 0);
	assert_string_equal(cd_param_text(&p, "shape"), "power");
	assert_true(cd_param(&p, "p") == 3);
	assert_true(cd_param(&p, "max") == 0);
	assert_true(cd_param(&p, "min_samples") == 16);

	bad("urgency:shape=cubic", "shape");
	bad("urgency:load=sum", "load must");
	bad("urgency:p=0", "p must");
	bad("urgency:p=-1", "p must");
	bad("urgency:p=17", "p must");
	bad("urgency:p=x", "'x'");
	bad("urgency:max=0", "max must");
	bad("urgency:max=2.5", "max must");
	bad("urgency:max.resnet=0", "max.resnet");
	bad("urgency:max.=3", "max.");
	bad("urgency:max.a=1,max.a=2", "twice");
	bad("urgency:min_samples=1", "min_samples");
	bad("urgency:min_samples=65", "min_samples");
	bad("urgency:foo=1", "'foo'");
	bad("urgency:3", "'3'");
	bad("urgency:shape=linear,", "trailing");
	bad("urgency:max.a_model_name_that_is_far_too_long_to_fit_in_the_override_table_x=1", "too long");
	char many[512] = "urgency:";
	for (int i = 0; i <= 16; i++) { /* one more than the overrides a policy holds */
		size_t l = strlen(many);
		snprintf(many + l, sizeof(many) - l, "%smax.m%d=1", i ? "," : "", i);
	}
	bad(many, "too many");
	for (int i = 0; i < 2; i++) {
		const char *spec = i ? "edf:x=1" : "fcfs:1";
		assert_int_equal(sym_policy_parse(spec, &p, err, sizeof(err)), -EINVAL);
		assert_contains(err, i ? "unknown parameter 'x' (expected max)" : "expected key=value (max)");
		assert_contains(err, i ? "edf" : "fcfs");
	}
	bad("fcfs:max=0", "max must be an integer in 1..");
	round_trip("fcfs", "fcfs");
	round_trip("edf", "edf");
	round_trip("edf:max=1", "edf:max=1");

	/* an override naming no model is refused when the core starts */
	struct sym_profile prof;
	assert_int_equal(sym_profile_init_linear(&prof, "p", 1, 4, 8), 0);
	struct sym_model_cfg mc = { .profile = &prof, .slo = 50 * SYM_MS, .name = "resnet" };
	struct sym_core_cfg cfg = make_cfg("urgency:max.resnet=2,max.nosuch=3", &mc, 1, 1);
	struct cd_driver *dr = cd_new();
	assert_int_equal(cd_start_err(dr, &cfg, err, sizeof(err)), -EINVAL);
	assert_null(dr->core);
	assert_contains(err, "urgency");
	assert_contains(err, "max.nosuch");
	cd_free(dr);
	sym_profile_finish(&prof);
}

/* Conservation and determinism on a heterogeneous cluster in overload:
 * three models, two GPU kinds and a CPU kind, bursty arrivals. */
static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

static void random_run(struct cd_driver *dr, const char *policy, const struct sym_model_cfg *mc)
{
	static const struct sym_kind kinds[3] = { { .name = "a100" }, { .name = "t4" }, { .name = "cpu", .cpu = true } };
	static const int gpu_kind[6] = { 2, 0, 1, 2, 1, 0 };
	struct sym_core_cfg cfg = make_cfg(policy, mc, 3, 6);
	cfg.nkinds = 3;
	cfg.kinds = kinds;
	cfg.gpu_kind = gpu_kind;
	cfg.net = (struct sym_net){ .ctrl = 100 * SYM_US, .data = 10 * SYM_US, .resp = 50 * SYM_US };
	cd_start(dr, &cfg);
	uint32_t seed = 12345;
	sym_time t = 0;
	for (int i = 0; i < 8000; i++) {
		/* alternating calm (mean gap 400 us) and burst (mean gap 40 us) phases */
		bool burst = (i / 1000) % 2;
		t += (sym_time)(lcg(&seed) % (burst ? 80 : 800)) * SYM_US;
		cd_arrive(dr, t, (int)(lcg(&seed) % 3));
	}
	cd_run(dr);
}

static void test_random_conservation(void **state)
{
	(void)state;
	struct sym_profile p[3][3];
	/* per model: a100, t4, cpu */
	const double ab[3][3][2] = { { { 0.5, 3 }, { 1.2, 6 }, { 8, 20 } },
				     { { 1, 5 }, { 2, 9 }, { 15, 30 } },
				     { { 0.2, 2 }, { 0.5, 4 }, { 3, 10 } } };
	const int maxb[3] = { 32, 16, 8 };
	for (int m = 0; m < 3; m++)
		for (int k = 0; k < 3; k++)
			assert_int_equal(sym_profile_init_linear(&p[m][k], "x", ab[m][k][0], ab[m][k][1],
								k == 2 ? 4 : maxb[m]), 0);
	const char *names[3] = { "m0", "m1", "m2" };
	const sym_time slo[3] = { 40 * SYM_MS, 60 * SYM_MS, 25 * SYM_MS };
	const double rate[3] = { 800, 500, 1200 };
	struct sym_model_cfg mc[3];
	for (int m = 0; m < 3; m++)
		mc[m] = (struct sym_model_cfg){ .profile = &p[m][0], .slo = slo[m], .rate_hint = rate[m], .name = names[m],
						.by_kind = { NULL, &p[m][1], &p[m][2] } };
	const char *pols[] = { "urgency", "urgency:shape=linear,max=4", "urgency:shape=exp,min_samples=4",
			       "urgency:p=1.5,max.m1=2", "fcfs", "edf" };
	for (size_t i = 0; i < sizeof(pols) / sizeof(pols[0]); i++) {
		struct cd_driver *a = cd_new(), *b = cd_new();
		random_run(a, pols[i], mc);
		random_run(b, pols[i], mc);
		if (!a->ndrops || a->nd < 100)
			fail_msg("%s: %d dispatches, %d drops: not an overload", pols[i], a->nd, a->ndrops);
		assert_int_equal(a->nd, b->nd);
		assert_int_equal(a->ndrops, b->ndrops);
		assert_memory_equal(a->d, b->d, (size_t)a->nd * sizeof(a->d[0]));
		for (int j = 0; j < a->nd; j++) {
			const struct cd_dispatch *d = &a->d[j];
			int lim = sym_core_max_batch(a->core, d->model, d->kind);
			if (strstr(pols[i], "max=4"))
				lim = lim < 4 ? lim : 4;
			if (strstr(pols[i], "max.m1=2") && d->model == 1)
				lim = 2;
			assert_true(d->size <= lim);
		}
		cd_free(a);
		cd_free(b);
	}
	for (int m = 0; m < 3; m++)
		for (int k = 0; k < 3; k++)
			sym_profile_finish(&p[m][k]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_changes_pick),
		cmocka_unit_test(test_resource_choice),
		cmocka_unit_test(test_consolidation_limit),
		cmocka_unit_test(test_history_fit), cmocka_unit_test(test_history_by_size),
		cmocka_unit_test(test_fcfs_vs_edf),
		cmocka_unit_test(test_fifo_max),
		cmocka_unit_test(test_gpu_before_cpu),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_random_conservation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
