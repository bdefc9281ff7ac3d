/* tests/test_sched.c - the threaded scheduler (runtime/sched.h), on one
 * thread (the whole core) and split (workers plus a ranker).
 *
 * A driver written here plays arrivals in real time, emulates the GPUs (a
 * dispatched GPU is busy until the planned finish, then freed) and checks,
 * for threads = 1 and threads >= 2:
 *   - every submitted request ends dispatched or dropped exactly once;
 *   - dispatch sizes are 1..max batch, the ids belong to the model;
 *   - no dispatch goes to a busy GPU or to a GPU the driver took offline,
 *     and a GPU put back online is used again;
 *   - with symphony every dispatched batch's planned finish meets its
 *     earliest deadline, and at low load nothing is dropped;
 *   - overload through tiny queues (queue full, backlogs) loses nothing, and
 *     decisions the driver does not poll wait in the scheduler's backlog;
 *   - split at low load batches like the single-threaded core in virtual
 *     time (same arrival times): no drops either way, mean batch within 15%;
 *   - two GPU kinds split (a ranker per kind): each batch runs its GPU's kind's
 *     l(b), one kind serves alone while the other is offline, then both;
 *   - bad configurations and arguments are refused with a message.
 * Timing is never asserted tightly: the profiles leave milliseconds of slack,
 * so that a loaded two-core machine (or ThreadSanitizer) passes too.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "runtime/executor.h"
#include "runtime/sched.h"
#include "coredriver.h"
#include "testutil.h"

#define MAXG 16
#define MAXB 64

struct action {
	sym_time at; /* relative to the start */
	int gpu;
	bool online;
};

struct td {
	struct sym_sched *s;
	int ngpus, maxb;
	sym_time resp;
	/* the plan */
	int nreq;
	sym_time *arr;      /* relative arrival times, non-decreasing */
	int *model;
	sym_time *deadline; /* absolute, set at submission */
	int next;
	const struct action *act;
	int nact, next_act;
	/* what happened */
	uint8_t *ended;
	bool off[MAXG], busy[MAXG];
	sym_time until[MAXG];
	int gpu_batches[MAXG];
	int batches_after_online[MAXG];
	uint64_t ndisp, ndisp_reqs, ndrops;
	uint64_t late, busy_viol, off_viol, size_viol, id_viol, dup;
	const struct sym_profile *gprof[MAXG]; /* when set: each batch on GPU g runs its l(b) */
	uint64_t lat_viol;
	uint64_t sizes[MAXB + 1];
	sym_time t0;
};

static void on_dispatch(void *ctx, const struct sym_sched_dispatch *d)
{
	struct td *t = ctx;
	if (d->gpu < 0 || d->gpu >= t->ngpus) {
		t->id_viol++;
		return;
	}
	if (t->busy[d->gpu])
		t->busy_viol++;
	if (t->off[d->gpu])
		t->off_viol++;
	if (d->size < 1 || d->size > t->maxb)
		t->size_viol++;
	sym_time dl = SYM_TIME_NEVER;
	for (int i = 0; i < d->size; i++) {
		uint64_t id = d->ids[i];
		if (id >= (uint64_t)t->nreq || t->model[id] != d->model) {
			t->id_viol++;
			continue;
		}
		if (t->ended[id]++)
			t->dup++;
		if (t->deadline[id] < dl)
			dl = t->deadline[id];
	}
	if (d->finish + t->resp > dl || d->start < d->now || d->finish < d->start)
		t->late++;
	if (t->gprof[d->gpu] && d->size >= 1 && d->size <= t->gprof[d->gpu]->max_batch &&
	    d->finish - d->start != t->gprof[d->gpu]->lat[d->size])
		t->lat_viol++;
	t->ndisp++;
	t->ndisp_reqs += (uint64_t)d->size;
	if (d->size >= 0 && d->size <= MAXB)
		t->sizes[d->size]++;
	t->busy[d->gpu] = true;
	t->until[d->gpu] = d->finish;
	t->gpu_batches[d->gpu]++;
	t->batches_after_online[d->gpu]++;
}

static void on_drop(void *ctx, uint64_t id, int model, enum sym_drop_reason why, sym_time now)
{
	struct td *t = ctx;
	(void)why;
	(void)now;
	if (id >= (uint64_t)t->nreq || t->model[id] != model) {
		t->id_viol++;
		return;
	}
	if (t->ended[id]++)
		t->dup++;
	t->ndrops++;
}

static void td_init(struct td *t, int nreq)
{
	memset(t, 0, sizeof(*t));
	t->nreq = nreq;
	t->arr = calloc((size_t)nreq, sizeof(*t->arr));
	t->model = calloc((size_t)nreq, sizeof(*t->model));
	t->deadline = calloc((size_t)nreq, sizeof(*t->deadline));
	t->ended = calloc((size_t)nreq, 1);
	assert_true(t->arr && t->model && t->deadline && t->ended);
}

static void td_finish(struct td *t)
{
	sym_sched_destroy(t->s);
	free(t->arr);
	free(t->model);
	free(t->deadline);
	free(t->ended);
}

static uint64_t rnd_state = 88172645463325252ull;

static double rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (double)(rnd_state >> 11) / 9007199254740992.0;
}

/* Arrivals at `rate` per second over [from, from + dur) spread round-robin
 * over nmodels models: uniform gaps, or Poisson. Returns the next index. */
static int plan(struct td *t, int i, sym_time from, sym_time dur, double rate, int nmodels, bool poisson)
{
	double at = (double)from;
	for (int k = 0; i < t->nreq; k++) {
		at += poisson ? -log(1 - rnd()) * 1e9 / rate : 1e9 / rate;
		if (at >= (double)(from + dur))
			break;
		t->arr[i] = (sym_time)at;
		t->model[i] = k % nmodels;
		i++;
	}
	return i;
}

/* Plays the plan in real time. Runs until every request is decided and
 * every GPU is idle (or limit passes: fails). SLO per model in slo[]. */
static void td_run(struct td *t, const sym_time *slo, sym_time limit)
{
	const struct sym_sched_out out = { t, on_dispatch, on_drop };
	t->t0 = sym_monotonic_ns() + 2 * SYM_MS;
	for (;;) {
		sym_time now = sym_monotonic_ns();
		sym_time rel = now - t->t0;
		assert_true(rel < limit);
		while (t->next_act < t->nact && t->act[t->next_act].at <= rel) {
			const struct action *a = &t->act[t->next_act];
			if (a->online) {
				assert_int_equal(sym_sched_gpu_online(t->s, a->gpu), 0);
				t->off[a->gpu] = false;
				t->busy[a->gpu] = false; /* a batch lost while offline */
				t->batches_after_online[a->gpu] = 0;
			} else {
				assert_int_equal(sym_sched_gpu_offline(t->s, a->gpu), 0);
				/* a running batch never completes; its requests count
				 * as ended at dispatch already */
				t->off[a->gpu] = true;
			}
			t->next_act++;
		}
		for (int g = 0; g < t->ngpus; g++) {
			if (t->busy[g] && !t->off[g] && t->until[g] <= now) {
				int rc = sym_sched_gpu_free(t->s, g);
				assert_true(rc == 0 || rc == -EAGAIN);
				if (!rc)
					t->busy[g] = false;
			}
		}
		bool full = false;
		while (t->next < t->nreq && t->arr[t->next] <= rel) {
			int i = t->next;
			sym_time a = t->t0 + t->arr[i];
			struct sym_sched_req r = { (uint64_t)i, t->model[i], a, a + slo[t->model[i]] };
			t->deadline[i] = r.deadline;
			int rc = sym_sched_submit(t->s, &r);
			if (rc == -EAGAIN) {
				full = true; /* poll, then retry */
				break;
			}
			assert_int_equal(rc, 0);
			t->next++;
		}
		while (sym_sched_poll(t->s, &out, 256) == 256)
			;
		bool idle = true;
		for (int g = 0; g < t->ngpus; g++)
			if (t->busy[g] && !t->off[g])
				idle = false;
		if (t->next == t->nreq && t->next_act == t->nact && idle && t->ndisp_reqs + t->ndrops == (uint64_t)t->nreq) {
			assert_int_equal(sym_sched_pending(t->s), 0);
			break;
		}
		/* Sleep on the decision fd until the next arrival, action or GPU
		 * finish (never longer than 5 ms). */
		sym_time wake = now + 5 * SYM_MS;
		if (t->next < t->nreq && t->t0 + t->arr[t->next] < wake)
			wake = t->t0 + t->arr[t->next];
		if (t->next_act < t->nact && t->t0 + t->act[t->next_act].at < wake)
			wake = t->t0 + t->act[t->next_act].at;
		for (int g = 0; g < t->ngpus; g++)
			if (t->busy[g] && !t->off[g] && t->until[g] < wake)
				wake = t->until[g];
		if (full) /* give the scheduler the CPU for a moment */
			wake = sym_monotonic_ns() + 100 * SYM_US;
		sym_time d = wake - sym_monotonic_ns();
		if (d <= 0)
			continue;
		struct pollfd pf = { sym_sched_fd(t->s), POLLIN, 0 };
		struct timespec ts = { (time_t)(d / SYM_S), (long)(d % SYM_S) };
		ppoll(&pf, 1, &ts, NULL);
	}
	for (int i = 0; i < t->nreq; i++) {
		if (t->ended[i] != 1)
			print_error("request %d ended %d times\n", i, t->ended[i]);
		assert_int_equal(t->ended[i], 1);
	}
	assert_int_equal(t->dup, 0);
	assert_int_equal(t->id_viol, 0);
	assert_int_equal(t->busy_viol, 0);
	assert_int_equal(t->off_viol, 0);
	assert_int_equal(t->size_viol, 0);
	struct sym_sched_stats st;
	sym_sched_stats(t->s, &st);
	assert_int_equal(st.submitted, (uint64_t)t->nreq);
	assert_int_equal(st.dispatched_reqs + st.drops, (uint64_t)t->nreq);
	assert_int_equal(st.dispatches, t->ndisp);
	assert_int_equal(st.drops, t->ndrops);
	assert_true(st.lag_max >= st.lag_p99);
}

/* The low-load profile: l(b) = 10b + 5 ms, batches up to 8, SLO 150 ms. A
 * request alone is dropped only when its timer is 10 ms late. */
static struct sym_profile slow;
static struct sym_profile fast;

static int setup(void **state)
{
	(void)state;
	assert_int_equal(sym_profile_init_linear(&slow, "slow", 10, 5, 8), 0);
	assert_int_equal(sym_profile_init_linear(&fast, "fast", 0.05, 0.5, 32), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sym_profile_finish(&slow);
	sym_profile_finish(&fast);
	return 0;
}

static void make_cfg(struct sym_sched_cfg *cfg, struct sym_model_cfg *mc, int nmodels, const struct sym_profile *p,
		     sym_time slo, int ngpus, const char *policy, int threads)
{
	memset(cfg, 0, sizeof(*cfg));
	for (int m = 0; m < nmodels; m++)
		mc[m] = (struct sym_model_cfg){ .profile = p, .slo = slo };
	cfg->core.nmodels = nmodels;
	cfg->core.models = mc;
	cfg->core.ngpus = ngpus;
	char err[256];
	if (sym_policy_parse(policy, &cfg->core.policy, err, sizeof(err)))
		fail_msg("%s: %s", policy, err);
	assert_int_equal(sym_gather_parse("lazy", &cfg->core.gather), 0);
	cfg->threads = threads;
}

static void start(struct td *t, const struct sym_sched_cfg *cfg)
{
	char err[256] = "";
	int rc = sym_sched_create(&t->s, cfg, err, sizeof(err));
	if (rc)
		fail_msg("sym_sched_create: %d %s", rc, err);
	t->ngpus = cfg->core.ngpus;
	t->maxb = cfg->core.models[0].profile->max_batch;
}

/* Low load with symphony: 4 models at 50 requests/s each for a second, 8
 * GPUs. Nothing dropped, every batch planned to meet its deadline, batches
 * of several requests (deferred), load packed onto the low GPU ids. */
static void low_load(int threads)
{
	struct td t;
	td_init(&t, 400);
	t.nreq = plan(&t, 0, 0, 1 * SYM_S, 200, 4, false);
	struct sym_model_cfg mc[4];
	struct sym_sched_cfg cfg;
	make_cfg(&cfg, mc, 4, &slow, 150 * SYM_MS, 8, "symphony", threads);
	start(&t, &cfg);
	sym_time slo[4] = { 150 * SYM_MS, 150 * SYM_MS, 150 * SYM_MS, 150 * SYM_MS };
	td_run(&t, slo, 20 * SYM_S);
	assert_int_equal(t.ndrops, 0);
	assert_int_equal(t.late, 0);
	assert_true(t.ndisp_reqs == (uint64_t)t.nreq);
	/* deferred: far fewer batches than requests */
	assert_true(t.ndisp * 2 < (uint64_t)t.nreq);
	for (int g = 1; g < 8; g++) /* the lowest free id first: GPU 0 works most */
		assert_true(t.gpu_batches[0] >= t.gpu_batches[g]);
	td_finish(&t);
}

static void test_low_load_1(void **state)
{
	(void)state;
	low_load(1);
}

static void test_low_load_2(void **state)
{
	(void)state;
	low_load(2);
}

/* Offline and online: all GPUs start offline (gpus_offline), 2 and 3 come
 * online at once; 0 and 1 come online at 300 ms, 3 goes offline then (its
 * running batch, if any, is lost) and 0 at 500 ms; both are back at 700 ms.
 * No dispatch reaches an offline GPU; GPUs put back online are used again. */
static void offline_online(int threads)
{
	struct td t;
	td_init(&t, 2000);
	t.nreq = plan(&t, 0, 0, 900 * SYM_MS, 1200, 4, true);
	static const struct action act[] = {
		{ 0, 2, true }, { 0, 3, true },
		{ 300 * SYM_MS, 0, true }, { 300 * SYM_MS, 1, true }, { 300 * SYM_MS, 3, false },
		{ 500 * SYM_MS, 0, false },
		{ 700 * SYM_MS, 3, true }, { 700 * SYM_MS, 0, true },
	};
	t.act = act;
	t.nact = (int)(sizeof(act) / sizeof(act[0]));
	struct sym_model_cfg mc[4];
	struct sym_sched_cfg cfg;
	/* l(b) = 0.5b + 1 ms, up to 16: 1200 requests/s keep two GPUs busy */
	struct sym_profile p;
	assert_int_equal(sym_profile_init_linear(&p, "p", 0.5, 1, 16), 0);
	make_cfg(&cfg, mc, 4, &p, 30 * SYM_MS, 4, "symphony", threads);
	cfg.gpus_offline = true;
	for (int g = 0; g < 4; g++)
		t.off[g] = true;
	start(&t, &cfg);
	sym_time slo[4] = { 30 * SYM_MS, 30 * SYM_MS, 30 * SYM_MS, 30 * SYM_MS };
	td_run(&t, slo, 20 * SYM_S);
	assert_true(t.gpu_batches[0] > 0); /* online at 300 ms and again at 700 ms */
	assert_true(t.batches_after_online[0] > 0); /* used after its second online */
	assert_true(t.gpu_batches[2] > 0);
	assert_int_equal(t.late, 0);
	assert_true(t.ndrops < (uint64_t)t.nreq / 5); /* lost batches, the odd drop */
	td_finish(&t);
	sym_profile_finish(&p);
}

static void test_offline_online_1(void **state)
{
	(void)state;
	offline_online(1);
}

static void test_offline_online_2(void **state)
{
	(void)state;
	offline_online(2);
}

/* Overload through tiny queues (16 elements): submissions refused (EAGAIN)
 * and retried, backlogs inside the scheduler, many drops; still every
 * request ends exactly once. Poisson arrivals at 50k/s over 8 models for
 * 200 ms on 2 GPUs that serve a fraction of that. */
static void overload(int threads, const char *policy)
{
	struct td t;
	td_init(&t, 20000);
	t.nreq = plan(&t, 0, 0, 200 * SYM_MS, 50000, 8, true);
	struct sym_model_cfg mc[8];
	struct sym_sched_cfg cfg;
	make_cfg(&cfg, mc, 8, &fast, 5 * SYM_MS, 2, policy, threads);
	cfg.queue_cap = 16;
	start(&t, &cfg);
	sym_time slo[8];
	for (int m = 0; m < 8; m++)
		slo[m] = 5 * SYM_MS;
	td_run(&t, slo, 20 * SYM_S);
	assert_true(t.ndrops > 0);
	assert_true(t.ndisp > 0);
	if (!strcmp(policy, "symphony"))
		assert_int_equal(t.late, 0);
	td_finish(&t);
}

static void test_overload_1(void **state)
{
	(void)state;
	overload(1, "symphony");
}

static void test_overload_2(void **state)
{
	(void)state;
	overload(2, "symphony");
}

static void test_overload_3_eager(void **state)
{
	(void)state;
	overload(3, "eager");
}

/* Decisions the driver does not poll wait in the scheduler's backlog (the
 * decision queue holds 16): 300 requests already past their deadline are
 * all dropped, counted as queue_full, and delivered once polled. */
static void backlog(int threads)
{
	struct td t;
	td_init(&t, 300);
	struct sym_model_cfg mc[3];
	struct sym_sched_cfg cfg;
	make_cfg(&cfg, mc, 3, &fast, 5 * SYM_MS, 2, "symphony", threads);
	cfg.queue_cap = 16;
	start(&t, &cfg);
	sym_time now = sym_monotonic_ns();
	for (int i = 0; i < t.nreq; i++) {
		t.model[i] = i % 3;
		t.deadline[i] = now - SYM_MS;
		struct sym_sched_req r = { (uint64_t)i, i % 3, now - 10 * SYM_MS, t.deadline[i] };
		int rc;
		while ((rc = sym_sched_submit(t.s, &r)) == -EAGAIN) /* the scheduler drains it */
			sym_wait_until(sym_monotonic_ns() + 50 * SYM_US, 0);
		assert_int_equal(rc, 0);
	}
	sym_time limit = sym_monotonic_ns() + 10 * SYM_S;
	while (sym_sched_pending(t.s) > 0) {
		assert_true(sym_monotonic_ns() < limit);
		sym_wait_until(sym_monotonic_ns() + 100 * SYM_US, 0);
	}
	struct sym_sched_stats st;
	sym_sched_stats(t.s, &st);
	assert_true(st.queue_full > 0);
	assert_int_equal(st.drops, (uint64_t)t.nreq);
	const struct sym_sched_out out = { &t, on_dispatch, on_drop };
	while (t.ndrops < (uint64_t)t.nreq) {
		assert_true(sym_monotonic_ns() < limit);
		if (!sym_sched_poll(t.s, &out, 7))
			sym_wait_until(sym_monotonic_ns() + 100 * SYM_US, 0);
	}
	for (int i = 0; i < t.nreq; i++)
		assert_int_equal(t.ended[i], 1);
	assert_int_equal(t.ndisp, 0);
	assert_int_equal(t.dup + t.id_viol, 0);
	td_finish(&t);
}

static void test_backlog_1(void **state)
{
	(void)state;
	backlog(1);
}

static void test_backlog_2(void **state)
{
	(void)state;
	backlog(2);
}

/* Scheduler policies run on one thread. (Clockwork with ahead=0: published
 * Clockwork sends batches to busy GPUs 10 ms ahead, and this driver, like
 * schedd and the backends, runs one batch per GPU.) */
static void test_scheduler_policies_1(void **state)
{
	(void)state;
	const char *pols[] = { "clockwork:ahead=0", "fcfs" };
	for (int i = 0; i < 2; i++) {
		struct td t;
		td_init(&t, 400);
		t.nreq = plan(&t, 0, 0, 300 * SYM_MS, 1000, 4, true);
		struct sym_model_cfg mc[4];
		struct sym_sched_cfg cfg;
		make_cfg(&cfg, mc, 4, &fast, 20 * SYM_MS, 2, pols[i], 1);
		start(&t, &cfg);
		sym_time slo[4] = { 20 * SYM_MS, 20 * SYM_MS, 20 * SYM_MS, 20 * SYM_MS };
		td_run(&t, slo, 20 * SYM_S);
		assert_true(t.ndisp > 0);
		td_finish(&t);
	}
}

/* Split at low load batches like the core: the single-threaded core in
 * virtual time on the same arrival times (uniform, 3 models) and the split
 * scheduler in real time both drop nothing, and their mean batch sizes
 * agree within 15% (lateness cannot grow a deferred batch, only shrink it,
 * and the slow profile leaves 10 ms before it would). */
static void test_split_matches_core(void **state)
{
	(void)state;
	struct td t;
	td_init(&t, 400);
	t.nreq = plan(&t, 0, 0, 1 * SYM_S, 240, 3, false);
	struct sym_model_cfg mc[3];
	struct sym_sched_cfg cfg;
	make_cfg(&cfg, mc, 3, &slow, 150 * SYM_MS, 8, "symphony", 2);
	struct cd_driver *dr = cd_new();
	cd_start(dr, &cfg.core);
	for (int i = 0; i < t.nreq; i++)
		cd_arrive(dr, t.arr[i], t.model[i]);
	cd_run(dr);
	int core_reqs = 0;
	for (int k = 0; k < dr->nd; k++)
		core_reqs += dr->d[k].size;
	assert_int_equal(dr->ndrops, 0);
	assert_int_equal(core_reqs, t.nreq);
	double core_mean = (double)core_reqs / dr->nd;
	cd_free(dr);
	start(&t, &cfg);
	sym_time slo[3] = { 150 * SYM_MS, 150 * SYM_MS, 150 * SYM_MS };
	td_run(&t, slo, 20 * SYM_S);
	assert_int_equal(t.ndrops, 0);
	double mean = (double)t.ndisp_reqs / (double)t.ndisp;
	assert_near(mean, core_mean, 0.15 * core_mean, "mean batch, split vs core");
	assert_true(core_mean > 2);
	td_finish(&t);
}

/* Two GPU kinds split over 2 workers and one ranker per kind: kind 0 (GPUs
 * 0-3, l(b) = 10b + 5 ms) is offline for the first 400 ms, so kind 1 (GPUs
 * 4-7, l(b) = 5b + 2.5 ms) serves alone; then both. Every request ends once,
 * none is dropped or late, no batch goes to a GPU offline or busy, each
 * batch runs its GPU's kind's l(b), and kind 0 serves again once back. */
static void test_split_kinds(void **state)
{
	(void)state;
	struct sym_profile half;
	assert_int_equal(sym_profile_init_linear(&half, "half", 5, 2.5, 8), 0);
	struct td t;
	td_init(&t, 400);
	t.nreq = plan(&t, 0, 0, 1 * SYM_S, 200, 4, false);
	struct sym_model_cfg mc[4];
	struct sym_sched_cfg cfg;
	make_cfg(&cfg, mc, 4, &slow, 150 * SYM_MS, 8, "symphony", 2);
	for (int m = 0; m < 4; m++)
		mc[m].by_kind[1] = &half;
	struct sym_kind kinds[2] = { { "k0", false, 0 }, { "k1", false, 0 } };
	int gk[8] = { 0, 0, 0, 0, 1, 1, 1, 1 };
	cfg.core.nkinds = 2;
	cfg.core.kinds = kinds;
	cfg.core.gpu_kind = gk;
	struct action act[8];
	for (int g = 0; g < 4; g++) {
		act[g] = (struct action){ 0, g, false };
		act[4 + g] = (struct action){ 400 * SYM_MS, g, true };
	}
	t.act = act;
	t.nact = 8;
	start(&t, &cfg);
	for (int g = 0; g < 8; g++)
		t.gprof[g] = g < 4 ? &slow : &half;
	sym_time slo[4] = { 150 * SYM_MS, 150 * SYM_MS, 150 * SYM_MS, 150 * SYM_MS };
	td_run(&t, slo, 20 * SYM_S);
	assert_int_equal(t.ndrops, 0);
	assert_int_equal(t.late, 0);
	assert_int_equal(t.lat_viol, 0);
	int k0 = 0, k1 = 0;
	for (int g = 0; g < 8; g++)
		*(g < 4 ? &k0 : &k1) += t.gpu_batches[g];
	print_message("batches on kind 0: %d, on kind 1: %d\n", k0, k1);
	assert_true(k1 > 0);
	assert_true(t.batches_after_online[0] > 0); /* kind 0 serves again */
	td_finish(&t);
	sym_profile_finish(&half);
}

/* More workers than models: the idle worker sleeps, the others serve. */
static void test_more_threads_than_models(void **state)
{
	(void)state;
	struct td t;
	td_init(&t, 400);
	t.nreq = plan(&t, 0, 0, 200 * SYM_MS, 1000, 2, true);
	struct sym_model_cfg mc[2];
	struct sym_sched_cfg cfg;
	make_cfg(&cfg, mc, 2, &fast, 20 * SYM_MS, 2, "symphony", 4);
	start(&t, &cfg);
	sym_time slo[2] = { 20 * SYM_MS, 20 * SYM_MS };
	td_run(&t, slo, 20 * SYM_S);
	assert_int_equal(t.late, 0);
	td_finish(&t);
}

static void test_bad_config(void **state)
{
	(void)state;
	struct sym_model_cfg mc[2];
	struct sym_sched_cfg cfg;
	struct sym_sched *s = (struct sym_sched *)1;
	char err[256] = "";
	/* scheduler policies need one thread */
	make_cfg(&cfg, mc, 2, &fast, 20 * SYM_MS, 2, "clockwork", 2);
	assert_int_equal(sym_sched_create(&s, &cfg, err, sizeof(err)), -EINVAL);
	assert_null(s);
	assert_contains(err, "scheduler policy");
	assert_contains(err, "clockwork");
	make_cfg(&cfg, mc, 2, &fast, 20 * SYM_MS, 2, "fcfs", 3);
	assert_int_equal(sym_sched_create(&s, &cfg, err, sizeof(err)), -EINVAL);
	assert_contains(err, "--threads");
	/* several GPU kinds: split (a ranker per kind) and on one thread */
	make_cfg(&cfg, mc, 2, &fast, 20 * SYM_MS, 2, "symphony", 2);
	struct sym_kind kinds[2] = { { "a", false, 0 }, { "b", false, 0 } };
	int gk[2] = { 0, 1 };
	cfg.core.nkinds = 2;
	cfg.core.kinds = kinds;
	cfg.core.gpu_kind = gk;
	assert_int_equal(sym_sched_create(&s, &cfg, err, sizeof(err)), 0);
	sym_sched_destroy(s);
	cfg.threads = 1;
	assert_int_equal(sym_sched_create(&s, &cfg, err, sizeof(err)), 0);
	sym_sched_destroy(s);
	/* a GPU of a kind that does not exist (the core's message) */
	gk[1] = 2;
	cfg.threads = 2;
	assert_int_equal(sym_sched_create(&s, &cfg, err, sizeof(err)), -EINVAL);
	assert_contains(err, "GPU kind");
	/* threads out of range */
	make_cfg(&cfg, mc, 2, &fast, 20 * SYM_MS, 2, "symphony", 0);
	assert_int_equal(sym_sched_create(&s, &cfg, err, sizeof(err)), -EINVAL);
	assert_contains(err, "threads");
	/* a bad model (the core's message) */
	make_cfg(&cfg, mc, 2, &fast, 20 * SYM_MS, 2, "symphony", 2);
	mc[1].slo = 0;
	assert_int_equal(sym_sched_create(&s, &cfg, err, sizeof(err)), -EINVAL);
	assert_contains(err, "model 1");
	/* shepherd preempts: it needs cancels, which the threaded scheduler has not */
	make_cfg(&cfg, mc, 2, &fast, 20 * SYM_MS, 2, "shepherd", 1);
	assert_int_equal(sym_sched_create(&s, &cfg, err, sizeof(err)), -EINVAL);
	assert_contains(err, "cancel");
	sym_sched_destroy(NULL);
}

static void test_bad_args(void **state)
{
	(void)state;
	for (int threads = 1; threads <= 2; threads++) {
		struct sym_model_cfg mc[2];
		struct sym_sched_cfg cfg;
		make_cfg(&cfg, mc, 2, &fast, 20 * SYM_MS, 2, "symphony", threads);
		struct sym_sched *s;
		char err[256];
		assert_int_equal(sym_sched_create(&s, &cfg, err, sizeof(err)), 0);
		struct sym_sched_req r = { 1, 2, 0, 0 };
		assert_int_equal(sym_sched_submit(s, &r), -EINVAL);
		r.model = -1;
		assert_int_equal(sym_sched_submit(s, &r), -EINVAL);
		assert_int_equal(sym_sched_gpu_free(s, 2), -EINVAL);
		assert_int_equal(sym_sched_gpu_offline(s, -1), -EINVAL);
		assert_int_equal(sym_sched_gpu_online(s, 5), -EINVAL);
		assert_int_equal(sym_sched_gpu_online(s, 1), 0); /* already online: nothing */
		assert_true(sym_sched_fd(s) >= 0);
		assert_int_equal(sym_sched_pending(s), 0);
		struct sym_sched_stats st;
		sym_sched_stats(s, &st);
		assert_int_equal(st.submitted, 0);
		/* destroy with requests still held: no leak, threads joined */
		sym_time now = sym_monotonic_ns();
		for (int i = 0; i < 10; i++) {
			struct sym_sched_req q = { (uint64_t)i, i % 2, now, now + 10 * SYM_S };
			assert_int_equal(sym_sched_submit(s, &q), 0);
		}
		sym_sched_destroy(s);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* e.g. "test_overload_*" */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_split_kinds),
		cmocka_unit_test(test_low_load_1),
		cmocka_unit_test(test_low_load_2),
		cmocka_unit_test(test_offline_online_1),
		cmocka_unit_test(test_offline_online_2),
		cmocka_unit_test(test_overload_1),
		cmocka_unit_test(test_overload_2),
		cmocka_unit_test(test_overload_3_eager),
		cmocka_unit_test(test_backlog_1),
		cmocka_unit_test(test_backlog_2),
		cmocka_unit_test(test_scheduler_policies_1),
		cmocka_unit_test(test_split_matches_core),
		cmocka_unit_test(test_more_threads_than_models),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
