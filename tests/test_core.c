/* Core tests: the worked example of deferred batch scheduling, exactly, and
 * the core's contract (conservation, determinism, matching rules) on a tiny
 * driver written here, independent of the simulator. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/ranker.h" /* (SYM_WAIT_START) */

#define MAXD 4096
#define MAXR 4096

struct rec {
	int gpu, size, model;
	sym_time start;
	uint64_t first, last;
};

struct driver {
	struct sym_core *core;
	const struct sym_profile *prof;
	struct sym_request req[MAXR];
	int nreq;
	sym_time gpu_finish[64];
	int gpu_batch[64][64];
	int gpu_size[64];
	struct rec d[MAXD];
	int nd;
	int drops[MAXR];
	int ndrops;
	int served[MAXR]; /* times each request was served (must end at 1 or dropped) */
	sym_time wait, wait_safe; /* model 0's measured waits on kind 0 at the end */
};

/* How late run() processes the core's timers (a driver on a real clock wakes late). */
static sym_time timer_late;

static void on_dispatch(void *ctx, const struct sym_dispatch *d)
{
	struct driver *dr = ctx;
	assert_true(dr->gpu_finish[d->gpu] == SYM_TIME_NEVER); /* the GPU was free */
	assert_true(dr->nd < MAXD);
	dr->d[dr->nd++] = (struct rec){ d->gpu, d->size, d->model, d->start, d->reqs[0]->id,
					d->reqs[d->size - 1]->id };
	dr->gpu_finish[d->gpu] = d->finish;
	dr->gpu_size[d->gpu] = d->size;
	for (int i = 0; i < d->size; i++) {
		dr->gpu_batch[d->gpu][i] = (int)d->reqs[i]->id;
		/* every request in a dispatched batch can still meet its deadline */
		assert_true(d->finish <= d->reqs[i]->deadline);
	}
}

static void on_drop(void *ctx, struct sym_request *r, enum sym_drop_reason why, sym_time now)
{
	struct driver *dr = ctx;
	(void)why;
	/* lazy drops only what cannot finish even alone */
	assert_true(why == SYM_DROP_EARLY || now + sym_core_le_min(dr->core, r->model)[1] > r->deadline);
	dr->drops[dr->ndrops++] = (int)r->id;
	dr->served[r->id]++;
}

/* Runs arrivals (time, model) through the core with ngpus GPUs. Equal times:
 * GPU completions, then arrivals, then core timers. */
static void run(struct driver *dr, const sym_time *arr, const int *model, int n, int ngpus,
		const struct sym_model_cfg *mc, int nmodels, const char *policy, const char *gather)
{
	memset(dr, 0, sizeof(*dr));
	dr->prof = mc[0].profile;
	for (int g = 0; g < 64; g++)
		dr->gpu_finish[g] = SYM_TIME_NEVER;
	struct sym_core_cfg cfg = { .nmodels = nmodels, .models = mc, .ngpus = ngpus };
	char err[256];
	assert_int_equal(sym_policy_parse(policy, &cfg.policy, err, sizeof(err)), 0);
	assert_int_equal(sym_gather_parse(gather, &cfg.gather), 0);
	struct sym_sink sink = { dr, on_dispatch, on_drop, NULL };
	assert_int_equal(sym_core_create(&dr->core, &cfg, &sink), 0);
	int next = 0;
	for (;;) {
		sym_time tg = SYM_TIME_NEVER;
		int g = -1;
		for (int i = 0; i < ngpus; i++)
			if (dr->gpu_finish[i] < tg) {
				tg = dr->gpu_finish[i];
				g = i;
			}
		sym_time ta = next < n ? arr[next] : SYM_TIME_NEVER;
		sym_time tc = sym_core_next_wakeup(dr->core);
		if (tg == SYM_TIME_NEVER && ta == SYM_TIME_NEVER && tc == SYM_TIME_NEVER)
			break;
		if (tg <= ta && tg <= tc) {
			for (int i = 0; i < dr->gpu_size[g]; i++)
				dr->served[dr->gpu_batch[g][i]]++;
			dr->gpu_finish[g] = SYM_TIME_NEVER;
			sym_core_gpu_free(dr->core, g, tg);
		} else if (ta <= tc) {
			struct sym_request *r = &dr->req[dr->nreq++];
			int m = model ? model[next] : 0;
			*r = (struct sym_request){ .id = (uint64_t)(dr->nreq - 1), .arrival = ta,
						   .deadline = ta + mc[m].slo, .model = m };
			assert_int_equal(sym_core_arrive(dr->core, r, ta), 0);
			next++;
		} else {
			sym_time t = tc + timer_late; /* (never past the next completion or arrival) */
			sym_core_advance(dr->core, t < ta && t < tg ? t : ta < tg ? ta : tg);
		}
	}
	sym_core_waits(dr->core, 0, 0, &dr->wait, &dr->wait_safe);
	assert_int_equal(sym_core_queued(dr->core), 0);
	/* Conservation: each request ended exactly once. */
	for (int i = 0; i < dr->nreq; i++)
		assert_int_equal(dr->served[i], 1);
	sym_core_destroy(dr->core);
}

/* The worked example: l(b) = b + 5 ms, SLO 12 ms, 3 GPUs, request i at
 * 0.75*(i-1) ms. Request ids here are i-1. */
static struct sym_profile ex_prof;
static struct sym_model_cfg ex_cfg;

static int setup(void **state)
{
	(void)state;
	assert_int_equal(sym_profile_init_linear(&ex_prof, "ex", 1, 5, 7), 0);
	ex_cfg = (struct sym_model_cfg){ &ex_prof, 12 * SYM_MS, 0, NULL, { NULL }, 0, 0 };
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sym_profile_finish(&ex_prof);
	return 0;
}

static void test_worked_example(void **state)
{
	(void)state;
	static struct driver dr;
	sym_time arr[40];
	for (int i = 0; i < 40; i++)
		arr[i] = i * 750 * SYM_US;
	run(&dr, arr, NULL, 40, 3, &ex_cfg, 1, "symphony", "lazy");
	assert_int_equal(dr.ndrops, 0);
	assert_int_equal(dr.nd, 10);
	for (int k = 0; k < 10; k++) {
		/* batch k: requests 4k+1..4k+4 at 2.25 + 3k ms on GPU (k mod 3) + 1 */
		assert_int_equal(dr.d[k].size, 4);
		assert_int_equal(dr.d[k].start, 2250 * SYM_US + k * 3 * SYM_MS);
		assert_int_equal(dr.d[k].gpu, k % 3);
		assert_int_equal(dr.d[k].first, 4 * k);
		assert_int_equal(dr.d[k].last, 4 * k + 3);
	}
}

static void test_worked_example_gap(void **state)
{
	(void)state;
	static struct driver dr;
	/* Requests 13, 14 and 15 removed: ids stay those of the full sequence. */
	sym_time arr[37];
	int n = 0;
	for (int i = 1; i <= 40; i++)
		if (i < 13 || i > 15)
			arr[n++] = (i - 1) * 750 * SYM_US;
	run(&dr, arr, NULL, n, 3, &ex_cfg, 1, "symphony", "lazy");
	assert_int_equal(dr.ndrops, 0);
	assert_true(dr.nd >= 9);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(dr.d[k].start, 2250 * SYM_US + k * 3 * SYM_MS);
		assert_int_equal(dr.d[k].size, 4);
	}
	/* then batches of 4 at 13.5, 16.5, 19.5, ... starting with requests 16-19 on GPU 1 */
	for (int k = 3; k < 9; k++) {
		assert_int_equal(dr.d[k].size, 4);
		assert_int_equal(dr.d[k].start, 13500 * SYM_US + (k - 3) * 3 * SYM_MS);
		assert_int_equal(dr.d[k].gpu, (k - 3) % 3);
	}
	/* request 16 is index 12 of the reduced sequence */
	assert_int_equal(dr.d[3].first, 12);
	assert_int_equal(dr.d[3].last, 15);
}

static void test_worked_example_early_drop_same(void **state)
{
	(void)state;
	static struct driver dr;
	sym_time arr[40];
	for (int i = 0; i < 40; i++)
		arr[i] = i * 750 * SYM_US;
	run(&dr, arr, NULL, 40, 3, &ex_cfg, 1, "symphony", "early:4");
	assert_int_equal(dr.ndrops, 0);
	assert_int_equal(dr.nd, 10);
	for (int k = 0; k < 10; k++)
		assert_int_equal(dr.d[k].start, 2250 * SYM_US + k * 3 * SYM_MS);
}

static void test_worked_example_eager(void **state)
{
	(void)state;
	static struct driver dr;
	sym_time arr[400];
	for (int i = 0; i < 400; i++)
		arr[i] = i * 750 * SYM_US;
	run(&dr, arr, NULL, 400, 3, &ex_cfg, 1, "eager", "lazy");
	/* the first three requests each get a GPU alone */
	assert_int_equal(dr.d[0].size, 1);
	assert_int_equal(dr.d[0].start, 0);
	assert_int_equal(dr.d[1].size, 1);
	assert_int_equal(dr.d[1].start, 750 * SYM_US);
	assert_int_equal(dr.d[1].gpu, 1);
	int total = 0;
	for (int k = 0; k < dr.nd; k++)
		total += dr.d[k].size;
	assert_true((double)total / dr.nd < 4.0); /* smaller batches than symphony's 4 */
	assert_true(dr.ndrops > 0);               /* and requests are lost */
	assert_int_equal(total + dr.ndrops, 400);
}

/* The low-load option (symphony:idle=on), l(b) = b + 5 ms. A lone request with SLO 30 ms goes
 * at once on an idle GPU instead of at its frontrun moment d - l(2) = 30 - 7 ms, and so does
 * each of 20 requests 10 ms apart (latency l(1) = 6 ms instead of 29). On the worked example
 * (SLO 12, the GPUs saturated) only the start differs: once no second GPU idles, a GPU frees
 * when the batch is nearly full, and a batch going then would not end by the moment it
 * expects to be due, so it waits as before. */
static void test_idle_go(void **state)
{
	(void)state;
	static struct driver dr;
	struct sym_model_cfg slack = ex_cfg;
	slack.slo = 30 * SYM_MS;
	sym_time arr[40];
	for (int i = 0; i < 20; i++)
		arr[i] = i * 10 * SYM_MS;
	run(&dr, arr, NULL, 1, 3, &slack, 1, "symphony", "lazy");
	assert_int_equal(dr.nd, 1);
	assert_true(dr.d[0].start == 23 * SYM_MS);
	run(&dr, arr, NULL, 20, 3, &slack, 1, "symphony:idle=on", "lazy");
	assert_int_equal(dr.nd, 20);
	for (int k = 0; k < 20; k++) {
		assert_int_equal(dr.d[k].size, 1);
		assert_true(dr.d[k].start == arr[k]);
	}
	for (int i = 0; i < 40; i++)
		arr[i] = i * 750 * SYM_US;
	run(&dr, arr, NULL, 40, 3, &ex_cfg, 1, "symphony:idle=on", "lazy");
	/* requests 0 and 1 each take an idle GPU at arrival (another stays idle); request 2 waits
	 * (no second GPU idles) and goes with 3-5 at 3.75 ms. At 6.75 ms GPUs 0 and 1 both idle,
	 * so 6-8 go at once; from then on one GPU frees at a time, when the batch is nearly full,
	 * and batches of 4 go as without the option; nothing dropped (eager, above, drops) */
	static const int size[12] = { 1, 1, 4, 3, 4, 4, 4, 4, 4, 4, 4, 3 };
	static const int start_us[12] = { 0, 750, 3750, 6750, 9000, 12750, 15000, 18000, 21750, 24000, 27000, 30750 };
	assert_int_equal(dr.ndrops, 0);
	assert_int_equal(dr.nd, 12);
	for (int k = 0, first = 0; k < 12; first += size[k], k++) {
		assert_int_equal(dr.d[k].size, size[k]);
		assert_true(dr.d[k].start == start_us[k] * SYM_US);
		assert_int_equal(dr.d[k].first, first);
	}
}

/* The look-ahead guard's measured wait counts a timer's lateness: a driver that wakes 2 ms after
 * the moments the core asks for (a loaded machine) makes it due earlier, where one on time lets
 * the estimates fall (core/models.h). Lone requests, 100 ms apart, on an idle GPU: l(b) = 4b + 1
 * ms, SLO 50 ms, each due at its frontrun moment d - l(2) and latest at d - l(1), 4 ms later. */
static void test_wait_counts_late_timers(void **state)
{
	(void)state;
	static struct driver dr;
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "late", 4, 1, 8), 0);
	struct sym_model_cfg mc = { &p, 50 * SYM_MS, 0, NULL, { NULL }, 0, 0 };
	sym_time arr[20];
	for (int i = 0; i < 20; i++)
		arr[i] = i * 100 * SYM_MS;
	sym_time on_time[2] = { 0, 0 };
	for (int late = 0; late < 2; late++) {
		timer_late = late ? 2 * SYM_MS : 0;
		run(&dr, arr, NULL, 20, 1, &mc, 1, "symphony:gain=0,burst=0", "lazy");
		assert_int_equal(dr.nd, 20);
		assert_int_equal(dr.ndrops, 0);
		for (int k = 0; k < 20; k++) /* d - l(2) = arrival + 41 ms */
			assert_true(dr.d[k].start >= arr[k] + 41 * SYM_MS + timer_late &&
				    dr.d[k].start < arr[k] + 42 * SYM_MS + timer_late);
		if (!late) {
			on_time[0] = dr.wait;
			on_time[1] = dr.wait_safe;
		}
	}
	timer_late = 0;
	/* on time: every wait 0, each a step down (a 500th of a twentieth); 2 ms late: each a step up
	 * towards 2 ms (the twentieth) */
	assert_true(on_time[0] < SYM_WAIT_START && on_time[0] > SYM_WAIT_START * 99 / 100);
	assert_true(on_time[1] < SYM_WAIT_START && on_time[1] > SYM_WAIT_START * 99 / 100);
	assert_true(dr.wait > 3 * SYM_WAIT_START / 2 && dr.wait <= 2 * SYM_MS + 100 * SYM_US);
	assert_true(dr.wait_safe > 3 * SYM_WAIT_START / 2 && dr.wait_safe <= 2 * SYM_MS + 100 * SYM_US);
	sym_profile_finish(&p);
}

static void test_timeout_policy(void **state)
{
	(void)state;
	static struct driver dr;
	sym_time arr[2] = { 0, 1 * SYM_MS };
	/* timeout 3 ms: the batch of 2 goes at 0 + 3 ms */
	run(&dr, arr, NULL, 2, 3, &ex_cfg, 1, "timeout:3", "lazy");
	assert_int_equal(dr.nd, 1);
	assert_int_equal(dr.d[0].start, 3 * SYM_MS);
	assert_int_equal(dr.d[0].size, 2);
	/* 50% of the 12 ms SLO = 6 ms: the operator's max_batch_size is the
	 * largest b with l(b) <= 12 - 6, i.e. 1, so each request goes at once */
	run(&dr, arr, NULL, 2, 3, &ex_cfg, 1, "timeout:50%", "lazy");
	assert_int_equal(dr.ndrops, 0);
	assert_int_equal(dr.nd, 2);
	assert_int_equal(dr.d[0].size, 1);
	assert_int_equal(dr.d[0].start, 0);
	assert_int_equal(dr.d[1].start, 1 * SYM_MS);
	assert_int_equal(dr.d[1].gpu, 1);
	/* timeout:3 -> full at l(b) <= 9, b = 4: four requests by 0.3 ms go then,
	 * not at the 3 ms timeout */
	sym_time four[4] = { 0, 100 * SYM_US, 200 * SYM_US, 300 * SYM_US };
	run(&dr, four, NULL, 4, 3, &ex_cfg, 1, "timeout:3", "lazy");
	assert_int_equal(dr.nd, 1);
	assert_int_equal(dr.d[0].size, 4);
	assert_int_equal(dr.d[0].start, 300 * SYM_US);
}

/* Two models, one GPU: when the GPU frees, the waiting candidate with the
 * smallest latest wins; ties go to the lower model id. */
static void test_grant_smallest_latest(void **state)
{
	(void)state;
	static struct driver dr;
	struct sym_profile p2;
	assert_int_equal(sym_profile_init_linear(&p2, "slow", 1, 5, 7), 0);
	struct sym_model_cfg mc[2] = { ex_cfg, { &p2, 20 * SYM_MS, 0, NULL, { NULL }, 0, 0 } };
	/* t=0: model 0 takes the GPU (eager). t=1: model 1 (SLO 20), t=2: model 0
	 * (SLO 12): both wait; at t=6 the GPU frees and model 0 (latest 2+12-6 = 8)
	 * beats model 1 (latest 1+20-6 = 15). */
	sym_time arr[3] = { 0, 1 * SYM_MS, 2 * SYM_MS };
	int model[3] = { 0, 1, 0 };
	run(&dr, arr, model, 3, 1, mc, 2, "eager", "lazy");
	assert_int_equal(dr.nd, 3);
	assert_int_equal(dr.d[1].model, 0);
	assert_int_equal(dr.d[1].start, 6 * SYM_MS);
	assert_int_equal(dr.d[2].model, 1);
	assert_int_equal(dr.d[2].start, 12 * SYM_MS);
	/* equal latest: lower model id first */
	struct sym_model_cfg same[2] = { ex_cfg, { &p2, 12 * SYM_MS, 0, NULL, { NULL }, 0, 0 } };
	sym_time arr2[3] = { 0, 1 * SYM_MS, 1 * SYM_MS };
	int model2[3] = { 0, 1, 0 };
	run(&dr, arr2, model2, 3, 1, same, 2, "eager", "lazy");
	assert_int_equal(dr.nd, 2);
	assert_int_equal(dr.d[1].model, 0);
	assert_int_equal(dr.d[1].start, 6 * SYM_MS);
	/* model 1's request (deadline 13) cannot finish after 12 ms: dropped */
	assert_int_equal(dr.ndrops, 1);
	assert_int_equal(dr.drops[0], 1);
	sym_profile_finish(&p2);
}

/* Lowest free GPU id: with 4 GPUs and sparse load only GPU 0 is ever used. */
static void test_lowest_gpu(void **state)
{
	(void)state;
	static struct driver dr;
	sym_time arr[20];
	for (int i = 0; i < 20; i++)
		arr[i] = i * 20 * SYM_MS;
	run(&dr, arr, NULL, 20, 4, &ex_cfg, 1, "eager", "lazy");
	for (int k = 0; k < dr.nd; k++)
		assert_int_equal(dr.d[k].gpu, 0);
}

/* Determinism and conservation on a random, overloaded, multi-model input. */
static void test_random_conservation_determinism(void **state)
{
	(void)state;
	static struct driver a, b;
	static sym_time arr[3000];
	static int model[3000];
	uint64_t x = 12345;
	sym_time t = 0;
	for (int i = 0; i < 3000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		t += (sym_time)((x >> 33) % (400 * SYM_US));
		arr[i] = t;
		model[i] = (int)((x >> 20) % 3);
	}
	struct sym_profile p[3];
	assert_int_equal(sym_profile_init_linear(&p[0], "a", 1, 5, 7), 0);
	assert_int_equal(sym_profile_init_linear(&p[1], "b", 0.5, 8, 20), 0);
	double tab[4] = { 3, 3.5, 6, 6 };
	assert_int_equal(sym_profile_init_table(&p[2], "c", tab, 4), 0);
	struct sym_model_cfg mc[3] = { { &p[0], 12 * SYM_MS, 800, NULL, { NULL }, 0, 0 }, { &p[1], 20 * SYM_MS, 800, NULL, { NULL }, 0, 0 },
				       { &p[2], 9 * SYM_MS, 800, NULL, { NULL }, 0, 0 } };
	const char *pols[] = { "symphony", "eager", "timeout:2", "timeout:40%" };
	const char *gathers[] = { "lazy", "early", "early:3" };
	for (int pi = 0; pi < 4; pi++) {
		for (int gi = 0; gi < 3; gi++) {
			run(&a, arr, model, 3000, 2, mc, 3, pols[pi], gathers[gi]);
			run(&b, arr, model, 3000, 2, mc, 3, pols[pi], gathers[gi]);
			assert_int_equal(a.nd, b.nd);
			assert_int_equal(a.ndrops, b.ndrops);
			assert_memory_equal(a.d, b.d, sizeof(a.d[0]) * (size_t)a.nd);
			assert_true(a.ndrops > 0); /* overloaded: 2 GPUs for ~7500 req/s */
		}
	}
	for (int i = 0; i < 3; i++)
		sym_profile_finish(&p[i]);
}

/* An offline GPU gets no batch until it is back online; then it is used
 * again. Candidate (eager) and scheduler (fcfs) policies alike. */
static void test_gpu_hold(void **state)
{
	(void)state;
	static struct driver dr;
	const char *pols[] = { "eager", "fcfs" };
	for (int pi = 0; pi < 2; pi++) {
		memset(&dr, 0, sizeof(dr));
		for (int g = 0; g < 64; g++)
			dr.gpu_finish[g] = SYM_TIME_NEVER;
		struct sym_core_cfg cfg = { .nmodels = 1, .models = &ex_cfg, .ngpus = 2 };
		char err[256];
		assert_int_equal(sym_policy_parse(pols[pi], &cfg.policy, err, sizeof(err)), 0);
		struct sym_sink sink = { &dr, on_dispatch, on_drop, NULL };
		struct sym_core *c;
		assert_int_equal(sym_core_create(&c, &cfg, &sink), 0);
		dr.core = c;
		assert_int_equal(sym_core_gpu_offline(c, 0, 1, 0), 0);
		assert_int_equal(sym_core_gpu_offline(c, 0, 1, 0), 0); /* already out: nothing changes */
		assert_int_equal(sym_core_gpu_offline(c, 2, 1, 0), -EINVAL);
		assert_int_equal(sym_core_gpu_online(c, -1, 1, 0), -EINVAL);
		/* a GPU's kind changes only while it is offline, to a kind the core has */
		assert_int_equal(sym_core_gpu_set_kind(c, 1, 0), -EBUSY);
		assert_int_equal(sym_core_gpu_set_kind(c, 0, 1), -EINVAL);
		assert_int_equal(sym_core_gpu_set_kind(c, 2, 0), -EINVAL);
		assert_int_equal(sym_core_gpu_set_kind(c, 0, 0), 0);
		assert_int_equal(sym_core_idle_gpus(c), 1);
		/* two requests 1 ms apart, each alone for 6 ms: only GPU 1 serves,
		 * so the second waits for it */
		for (int i = 0; i < 2; i++) {
			struct sym_request *r = &dr.req[dr.nreq];
			*r = (struct sym_request){ .id = (uint64_t)dr.nreq, .arrival = i * SYM_MS,
						   .deadline = i * SYM_MS + 12 * SYM_MS, .model = 0 };
			dr.nreq++;
			assert_int_equal(sym_core_arrive(c, r, i * SYM_MS), 0);
		}
		assert_int_equal(dr.nd, 1);
		assert_int_equal(dr.d[0].gpu, 1);
		dr.gpu_finish[1] = SYM_TIME_NEVER;
		sym_core_gpu_free(c, 1, 6 * SYM_MS);
		assert_int_equal(dr.nd, 2);
		assert_int_equal(dr.d[1].gpu, 1);
		/* an end reported for the offline GPU changes nothing */
		sym_core_gpu_free(c, 0, 6 * SYM_MS);
		assert_int_equal(sym_core_idle_gpus(c), 0);
		/* GPU 0 back in service: the next request takes it (lowest id) */
		assert_int_equal(sym_core_gpu_online(c, 0, 2, 7 * SYM_MS), 0);
		assert_int_equal(sym_core_idle_gpus(c), 1);
		struct sym_request *r = &dr.req[dr.nreq];
		*r = (struct sym_request){ .id = (uint64_t)dr.nreq, .arrival = 8 * SYM_MS,
					   .deadline = 20 * SYM_MS, .model = 0 };
		dr.nreq++;
		assert_int_equal(sym_core_arrive(c, r, 8 * SYM_MS), 0);
		assert_int_equal(dr.nd, 3);
		assert_int_equal(dr.d[2].gpu, 0);
		assert_int_equal(dr.ndrops, 0);
		/* the core's own counts agree with what the sink saw */
		const struct sym_core_stats *st = sym_core_stats(c);
		assert_int_equal(st->arrivals, 3);
		assert_int_equal(st->dispatches, 3);
		assert_int_equal(st->drops, 0);
		assert_int_equal(st->cancels, 0);
		sym_core_destroy(c);
	}
}

/* A spare model slot filled (the runtime's model repository): model 1 starts with a
 * placeholder, l(b) = b ms up to 7; sym_core_set_model gives it the worked example's profile
 * (l(1) = 6 ms), which its tables and its requests then follow. Refused: a batch larger than
 * the core's largest, a model holding requests. */
static void test_set_model(void **state)
{
	(void)state;
	struct sym_profile ph;
	assert_int_equal(sym_profile_init_linear(&ph, "", 1, 0, 7), 0);
	struct sym_model_cfg mc[2] = { ex_cfg, { &ph, 8 * SYM_MS, 0, NULL, { NULL }, 0, 0 } };
	static struct driver dr;
	memset(&dr, 0, sizeof(dr));
	for (int g = 0; g < 64; g++)
		dr.gpu_finish[g] = SYM_TIME_NEVER;
	struct sym_core_cfg cfg = { .nmodels = 2, .models = mc, .ngpus = 1 };
	char err[256];
	assert_int_equal(sym_policy_parse("symphony", &cfg.policy, err, sizeof(err)), 0);
	assert_int_equal(sym_gather_parse("lazy", &cfg.gather), 0);
	struct sym_sink sink = { &dr, on_dispatch, on_drop, NULL };
	assert_int_equal(sym_core_create(&dr.core, &cfg, &sink), 0);
	assert_true(sym_core_le_min(dr.core, 1)[1] == 1 * SYM_MS);
	struct sym_profile big;
	assert_int_equal(sym_profile_init_linear(&big, "big", 1, 5, 8), 0);
	struct sym_model_cfg bc = { &big, 20 * SYM_MS, 0, "big", { NULL }, 0, 0 };
	assert_int_equal(sym_core_set_model(dr.core, 1, &bc), -EINVAL);
	assert_int_equal(sym_core_set_model(dr.core, 2, &ex_cfg), -EINVAL);
	struct sym_model_cfg filled = ex_cfg;
	filled.name = "filled";
	assert_int_equal(sym_core_set_model(dr.core, 1, &filled), 0);
	assert_true(sym_core_le_min(dr.core, 1)[1] == 6 * SYM_MS);
	assert_int_equal(sym_core_max_batch(dr.core, 1, 0), 7);
	/* its request runs on the new profile: alone, at the frontrun moment d - l(2) = 12 - 7 ms
	 * (the placeholder's would be 12 - 2) */
	dr.req[0] = (struct sym_request){ .id = 0, .arrival = 0, .deadline = 12 * SYM_MS, .model = 1 };
	assert_int_equal(sym_core_arrive(dr.core, &dr.req[0], 0), 0);
	assert_int_equal(sym_core_set_model(dr.core, 1, &filled), -EBUSY);
	sym_time t = sym_core_next_wakeup(dr.core);
	assert_true(t != SYM_TIME_NEVER);
	sym_core_advance(dr.core, t);
	assert_int_equal(dr.nd, 1);
	assert_int_equal(dr.d[0].model, 1);
	assert_int_equal(dr.d[0].size, 1);
	assert_true(dr.d[0].start == 5 * SYM_MS);
	sym_core_destroy(dr.core);
	sym_profile_finish(&big);
	sym_profile_finish(&ph);
}

static void arrive_at(struct driver *dr, int model, sym_time t, sym_time slo)
{
	struct sym_request *r = &dr->req[dr->nreq];
	*r = (struct sym_request){ .id = (uint64_t)dr->nreq, .arrival = t, .deadline = t + slo, .model = model };
	dr->nreq++;
	assert_int_equal(sym_core_arrive(dr->core, r, t), 0);
}

/* Sub-clusters as parts of one core (core/parts.h), eager so that each step
 * is one dispatch: GPU 0 in part 0, GPUs 1 and 2 in part 1; model 0 in part
 * 0, model 1 in part 1. A model's requests wait for its own part's GPUs even
 * beside idle ones of another; moved to part 1 (sym_core_set_part) its queue
 * goes with it; GPU 0, offline, joins part 1 (sym_core_gpu_set_part) and
 * serves model 1 there. Held (part -1), a model's request waits until it has
 * a part again. Refused: a scheduler policy, a part out of range,
 * more rankers than SYM_MAX_KINDS, a GPU moved while online. */
static void test_parts(void **state)
{
	(void)state;
	static struct driver dr;
	memset(&dr, 0, sizeof(dr));
	for (int g = 0; g < 64; g++)
		dr.gpu_finish[g] = SYM_TIME_NEVER;
	struct sym_model_cfg mc[2] = { ex_cfg, ex_cfg };
	mc[0].slo = mc[1].slo = 40 * SYM_MS;
	mc[1].part = 1;
	int gpu_part[3] = { 0, 1, 1 };
	struct sym_core_cfg cfg = { .nmodels = 2, .models = mc, .ngpus = 3, .nparts = 2, .gpu_part = gpu_part };
	char err[256];
	assert_int_equal(sym_policy_parse("eager", &cfg.policy, err, sizeof(err)), 0);
	struct sym_sink sink = { &dr, on_dispatch, on_drop, NULL };
	assert_int_equal(sym_core_create_err(&dr.core, &cfg, &sink, err, sizeof(err)), 0);
	struct sym_core *c = dr.core;
	arrive_at(&dr, 0, 0, 40 * SYM_MS); /* GPU 0 */
	arrive_at(&dr, 0, 0, 40 * SYM_MS); /* waits: GPUs 1 and 2 are part 1's */
	assert_int_equal(dr.nd, 1);
	assert_int_equal(dr.d[0].gpu, 0);
	arrive_at(&dr, 1, 1 * SYM_MS, 40 * SYM_MS); /* part 1's lowest GPU */
	assert_int_equal(dr.nd, 2);
	assert_int_equal(dr.d[1].gpu, 1);
	assert_int_equal(dr.d[1].model, 1);
	/* model 0 moves to part 1: its waiting request takes GPU 2 at once */
	assert_int_equal(sym_core_set_part(c, 0, 1, 2 * SYM_MS), 0);
	assert_int_equal(dr.nd, 3);
	assert_int_equal(dr.d[2].gpu, 2);
	assert_int_equal(dr.d[2].model, 0);
	assert_true(dr.d[2].start == 2 * SYM_MS);
	assert_int_equal(dr.d[2].first, 1);
	/* GPU 0 joins part 1 once offline (its batch is the driver's to end) */
	assert_int_equal(sym_core_gpu_set_part(c, 0, 1), -EBUSY);
	assert_int_equal(sym_core_gpu_offline(c, 0, 1, 3 * SYM_MS), 0);
	assert_int_equal(sym_core_gpu_set_part(c, 0, 2), -EINVAL);
	assert_int_equal(sym_core_gpu_set_part(c, 3, 1), -EINVAL);
	assert_int_equal(sym_core_gpu_set_part(c, 0, 1), 0);
	dr.gpu_finish[0] = SYM_TIME_NEVER;
	assert_int_equal(sym_core_gpu_online(c, 0, 2, 3 * SYM_MS), 0);
	arrive_at(&dr, 1, 3 * SYM_MS, 40 * SYM_MS); /* GPUs 1 and 2 busy: GPU 0, now part 1's */
	assert_int_equal(dr.nd, 4);
	assert_int_equal(dr.d[3].gpu, 0);
	assert_int_equal(dr.d[3].model, 1);
	assert_int_equal(sym_core_set_part(c, 0, 2, 4 * SYM_MS), -EINVAL);
	assert_int_equal(sym_core_set_part(c, 0, -2, 4 * SYM_MS), -EINVAL);
	/* part -1: held (a stalled move); its request waits, then goes where it is sent */
	assert_int_equal(sym_core_set_part(c, 0, -1, 4 * SYM_MS), 0);
	arrive_at(&dr, 0, 4 * SYM_MS, 40 * SYM_MS);
	assert_int_equal(dr.nd, 4);
	assert_int_equal(sym_core_queued(c), 1);
	assert_int_equal(sym_core_set_part(c, 0, 1, 5 * SYM_MS), 0);
	dr.gpu_finish[1] = SYM_TIME_NEVER;
	sym_core_gpu_free(c, 1, 7 * SYM_MS); /* (GPUs 0 and 2 still busy) */
	assert_int_equal(dr.nd, 5);
	assert_int_equal(dr.d[4].gpu, 1);
	assert_int_equal(dr.d[4].model, 0);
	assert_int_equal(sym_core_set_part(c, 2, 0, 4 * SYM_MS), -EINVAL);
	struct sym_model_cfg far = ex_cfg;
	far.part = 2;
	assert_int_equal(sym_core_set_model(c, 1, &far), -EINVAL);
	assert_int_equal(dr.ndrops, 0);
	sym_core_destroy(c);
	/* a core without parts has none to move to */
	cfg.nparts = 0;
	mc[1].part = 0;
	assert_int_equal(sym_core_create(&c, &cfg, &sink), 0);
	assert_int_equal(sym_core_set_part(c, 0, 0, 0), -EINVAL);
	assert_int_equal(sym_core_gpu_set_part(c, 0, 0), -EINVAL);
	sym_core_destroy(c);
	/* refused, saying why */
	cfg.nparts = 2;
	mc[1].part = 2;
	assert_int_equal(sym_core_create_err(&c, &cfg, &sink, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "model 1: part 2 out of range (0..1)"));
	mc[1].part = 1;
	gpu_part[2] = 5;
	assert_int_equal(sym_core_create_err(&c, &cfg, &sink, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "GPU 2: part 5"));
	gpu_part[2] = 1;
	assert_int_equal(sym_policy_parse("fcfs", &cfg.policy, err, sizeof(err)), 0);
	assert_int_equal(sym_core_create_err(&c, &cfg, &sink, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "policy 'fcfs' schedules every model on every GPU: sub-clusters need a candidate"));
	assert_int_equal(sym_policy_parse("eager", &cfg.policy, err, sizeof(err)), 0);
	cfg.nparts = SYM_MAX_KINDS + 1;
	assert_int_equal(sym_core_create_err(&c, &cfg, &sink, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "at most 32 rankers, one per sub-cluster and GPU kind: 33 sub-clusters of 1 kind make 33"));
	cfg.nparts = -1;
	assert_int_equal(sym_core_create(&c, &cfg, &sink), -EINVAL);
	assert_null(c);
}

static void test_bad_args(void **state)
{
	(void)state;
	struct sym_core *c = (struct sym_core *)1;
	struct sym_core_cfg cfg = { .nmodels = 1, .models = &ex_cfg, .ngpus = 0 };
	char err[128];
	sym_policy_parse("symphony", &cfg.policy, err, sizeof(err));
	struct sym_sink sink = { NULL, on_dispatch, on_drop, NULL };
	assert_int_equal(sym_core_create(&c, &cfg, &sink), -EINVAL);
	assert_null(c);
	cfg.ngpus = 1;
	struct sym_model_cfg bad = ex_cfg;
	bad.slo = 0;
	cfg.models = &bad;
	assert_int_equal(sym_core_create(&c, &cfg, &sink), -EINVAL);
	cfg.models = &ex_cfg;
	assert_int_equal(sym_core_create(&c, &cfg, &sink), 0);
	struct sym_request r = { .model = 5 };
	assert_int_equal(sym_core_arrive(c, &r, 0), -EINVAL);
	assert_int_equal(sym_core_set_slo(c, 0, 20 * SYM_MS), 0);
	assert_int_equal(sym_core_set_slo(c, 1, 20 * SYM_MS), -EINVAL);
	assert_int_equal(sym_core_set_slo(c, 0, 0), -EINVAL);
	assert_int_equal(sym_core_set_slo(NULL, 0, 20 * SYM_MS), -EINVAL);
	sym_core_destroy(c);
	sym_core_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_worked_example_gap),
		cmocka_unit_test(test_worked_example_early_drop_same),
		cmocka_unit_test(test_worked_example_eager),
		cmocka_unit_test(test_idle_go),
		cmocka_unit_test(test_wait_counts_late_timers),
		cmocka_unit_test(test_timeout_policy),
		cmocka_unit_test(test_grant_smallest_latest),
		cmocka_unit_test(test_lowest_gpu),
		cmocka_unit_test(test_random_conservation_determinism),
		cmocka_unit_test(test_gpu_hold),
		cmocka_unit_test(test_set_model),
		cmocka_unit_test(test_parts),
		cmocka_unit_test(test_bad_args),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
