/* tests/test_sched.c - the threaded scheduler (runtime/sched.h), on one
 * thread (the whole core) and split (workers plus a ranker).
 *
 * A driver written here plays arrivals in real time, emulates the GPUs (a
 * dispatched GPU is busy until the planned finish, then freed) and checks,
 * for threads = 1 and threads >= 2:
 *   - every submitted request ends dispatched or dropped exactly once;
 *   - dispatch sizes are 1..max batch, the ids belong to the model;
 *   - no dispatch goes to a GPU the driver took offline, nor to a busy GPU
 *     unless planned ahead (send-ahead: at most one batch ahead, starting
 *     after the running one's end), and a GPU put back online is used again;
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
#include "coredriver.h"
#include "runtime/executor.h"
#include "runtime/sched.h"
#include "testutil.h"

#define MAXG 16
#define MAXB 64

struct action {
	sym_time at; /* relative to the start */
	int gpu;
	bool online;
	int move;           /* > 0: model move - 1 gets kinds_off instead (gpu, online unused) */
	uint32_t kinds_off;
	int kind;           /* online, > 0: the GPU comes online as one of kind - 1's (a GPU moving) */
	bool by_part;       /* move and kind through the parts API (sym_sched_set_part, _gpu_online_part:
			     * one GPU kind, so part = kind) */
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
	bool off[MAXG];
	int nq[MAXG];            /* batches on the GPU: running, then at most one planned ahead */
	sym_time until[MAXG][2]; /* when each ends */
	uint64_t ahead;          /* dispatches to a GPU with a batch running (send-ahead) */
	int gpu_batches[MAXG];
	int batches_after_online[MAXG];
	uint64_t ndisp, ndisp_reqs, ndrops;
	uint64_t late, busy_viol, off_viol, size_viol, id_viol, dup;
	const struct sym_profile *gprof[MAXG]; /* when set: each batch on GPU g runs its l(b) */
	uint64_t lat_viol;
	uint64_t sizes[MAXB + 1];
	sym_time t0;
	/* moves: each GPU's kind, each model's kinds_off once its move was reported */
	const int *gpu_kind;
	int moved_kind[MAXG]; /* > 0: the GPU moved to kind - 1 */
	uint32_t kinds_off[8];
	int moved_rc[8], moves_reported;
	uint32_t pending_off[8]; /* asked for, not yet reported */
	uint64_t kind_viol, disp_by_kind[8][2];
};

static void on_dispatch(void *ctx, const struct sym_sched_dispatch *d)
{
	struct td *t = ctx;
	if (d->gpu < 0 || d->gpu >= t->ngpus) {
		t->id_viol++;
		return;
	}
	/* at most one batch planned ahead, never to start before the running
	 * one's planned end */
	int q = t->nq[d->gpu];
	if (q >= 2 || (q == 1 && d->start < t->until[d->gpu][0])) {
		t->busy_viol++;
		print_error("busy: gpu %d q %d start %lld until0 %lld until1 %lld now %lld finish %lld size %d\n", d->gpu, q,
			    (long long)(d->start - t->t0), (long long)(t->until[d->gpu][0] - t->t0),
			    (long long)(t->until[d->gpu][1] - t->t0), (long long)(d->now - t->t0),
			    (long long)(d->finish - t->t0), d->size);
	}
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
	if (q < 2) {
		sym_time end = d->finish;
		if (q == 1) {
			t->ahead++;
			sym_time from = t->until[d->gpu][0] > d->start ? t->until[d->gpu][0] : d->start;
			end = from + (d->finish - d->start);
		}
		t->until[d->gpu][q] = end;
		t->nq[d->gpu]++;
	}
	t->gpu_batches[d->gpu]++;
	t->batches_after_online[d->gpu]++;
	if (t->gpu_kind && d->model < 8) {
		int k = t->moved_kind[d->gpu] ? t->moved_kind[d->gpu] - 1 : t->gpu_kind[d->gpu];
		if (t->kinds_off[d->model] >> k & 1)
			t->kind_viol++;
		t->disp_by_kind[d->model][k]++;
	}
}

static void on_moved(void *ctx, int model, int rc)
{
	struct td *t = ctx;
	assert_true(model >= 0 && model < 8);
	t->moved_rc[model] = rc;
	t->moves_reported++;
	if (!rc)
		t->kinds_off[model] = t->pending_off[model];
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
	const struct sym_sched_out out = { t, on_dispatch, on_drop, on_moved };
	t->t0 = sym_monotonic_ns() + 2 * SYM_MS;
	for (;;) {
		sym_time now = sym_monotonic_ns();
		sym_time rel = now - t->t0;
		assert_true(rel < limit);
		while (t->next_act < t->nact && t->act[t->next_act].at <= rel) {
			const struct action *a = &t->act[t->next_act];
			if (a->move) {
				t->pending_off[a->move - 1] = a->kinds_off;
				if (a->by_part) /* (the part is the kind left on) */
					assert_int_equal(sym_sched_set_part(t->s, a->move - 1, __builtin_ctz(~a->kinds_off)), 0);
				else
					assert_int_equal(sym_sched_set_kinds_off(t->s, a->move - 1, a->kinds_off), 0);
			} else if (a->online && a->kind) {
				if (a->by_part)
					assert_int_equal(sym_sched_gpu_online_part(t->s, a->gpu, a->kind - 1), 0);
				else
					assert_int_equal(sym_sched_gpu_online_kind(t->s, a->gpu, a->kind - 1), 0);
				t->moved_kind[a->gpu] = a->kind;
				t->off[a->gpu] = false;
				t->nq[a->gpu] = 0;
				t->batches_after_online[a->gpu] = 0;
			} else if (a->online) {
				assert_int_equal(sym_sched_gpu_online(t->s, a->gpu), 0);
				t->off[a->gpu] = false;
				t->nq[a->gpu] = 0; /* batches lost while offline */
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
			if (t->nq[g] && !t->off[g] && t->until[g][0] <= now) {
				int rc = sym_sched_gpu_free(t->s, g);
				assert_true(rc == 0 || rc == -EAGAIN);
				if (!rc) {
					t->until[g][0] = t->until[g][1];
					t->nq[g]--;
				}
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
			if (t->nq[g] && !t->off[g])
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
			if (t->nq[g] && !t->off[g] && t->until[g][0] < wake)
				wake = t->until[g][0];
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
	for (int m = 0; m < 4; m++) /* (a model back in service: nothing else changes) */
		assert_int_equal(sym_sched_restart_arrivals(t.s, m), 0);
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
		{ 0, 2, true, 0, 0, 0, false }, { 0, 3, true, 0, 0, 0, false },
		{ 300 * SYM_MS, 0, true, 0, 0, 0, false }, { 300 * SYM_MS, 1, true, 0, 0, 0, false }, { 300 * SYM_MS, 3, false, 0, 0, 0, false },
		{ 500 * SYM_MS, 0, false, 0, 0, 0, false },
		{ 700 * SYM_MS, 3, true, 0, 0, 0, false }, { 700 * SYM_MS, 0, true, 0, 0, 0, false },
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
	/* a 5 ms SLO; 50 ms in the thread-sanitizer build (SYM_TEST_TIMING=loose, set by
	 * scripts/test), whose threads run many times slower: on a busy machine every request
	 * expired there before the scheduler threads ran (no dispatch at all) */
	const char *timing = getenv("SYM_TEST_TIMING");
	sym_time slo_ns = (timing && !strcmp(timing, "loose") ? 50 : 5) * SYM_MS;
	struct sym_model_cfg mc[8];
	struct sym_sched_cfg cfg;
	make_cfg(&cfg, mc, 8, &fast, slo_ns, 2, policy, threads);
	cfg.queue_cap = 16;
	/* send-ahead with a 0.2 ms control delay: busy GPUs get their next batch planned */
	cfg.core.send_ahead = true;
	cfg.core.net.ctrl = 200 * SYM_US;
	start(&t, &cfg);
	sym_time slo[8];
	for (int m = 0; m < 8; m++)
		slo[m] = slo_ns;
	td_run(&t, slo, 20 * SYM_S);
	assert_true(t.ndrops > 0);
	assert_true(t.ndisp > 0);
	/* how many were planned ahead depends on timing (a slow build's ranker may
	 * hear of a GPU's end before its send-ahead moment); that they are right
	 * is checked above, and test_split_same_as_core checks that they happen */
	print_message("%s, %d thread(s): %llu dispatches, %llu planned ahead\n", policy, threads,
		      (unsigned long long)t.ndisp, (unsigned long long)t.ahead);
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
	const struct sym_sched_out out = { &t, on_dispatch, on_drop, on_moved };
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

/* Scheduler policies run on one thread: published Clockwork (which sends
 * batches to busy GPUs, at most one ahead here, as in schedd), Clockwork
 * with only idle GPUs taking work, and fcfs. */
static void test_scheduler_policies_1(void **state)
{
	(void)state;
	const char *pols[] = { "clockwork", "clockwork:ahead=0", "fcfs" };
	for (int i = 0; i < 3; i++) {
		struct td t;
		td_init(&t, 400);
		t.nreq = plan(&t, 0, 0, 300 * SYM_MS, 1000, 4, true);
		struct sym_model_cfg mc[4];
		struct sym_sched_cfg cfg;
		make_cfg(&cfg, mc, 4, &fast, 20 * SYM_MS, 2, pols[i], 1);
		cfg.core.max_ahead = 1; /* as schedd */
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

/* ---- the same event sequence through the core and the split ----
 *
 * A virtual-time driver: arrivals at given nanoseconds; each GPU runs its
 * batches in order, each from its planned start or the end of the one
 * before, whichever is later, and its end is reported then (with its real
 * start); at equal times ends first, then arrivals, then timers. It drives
 * either a single-threaded core directly or the threaded scheduler in
 * manual mode (its workers and rankers run by sym_sched_step, their
 * messages delivered without delay), and records every dispatch and drop. */

#define VMAXQ 4
#define VMAXD 20000

struct vrec {
	sym_time now, start;
	int gpu, model, size;
	uint64_t first;
};

struct vgpu {
	sym_time start[VMAXQ], len[VMAXQ];
	int qh, qn;
	sym_time run_start, run_end; /* of the running batch (qn > 0) */
};

struct vd {
	struct sym_core *core;   /* or */
	struct sym_sched *sched;
	int ngpus;
	struct vgpu g[MAXG];
	struct vrec d[VMAXD];
	int nd;
	uint64_t drop_ids[VMAXD];
	int ndrops;
	int max_q;
};

static void vd_push(struct vd *v, int g, sym_time now, sym_time start, sym_time finish)
{
	struct vgpu *x = &v->g[g];
	assert_true(x->qn < VMAXQ);
	int i = (x->qh + x->qn) % VMAXQ;
	x->start[i] = start;
	x->len[i] = finish - start;
	if (x->qn++ == 0) {
		x->run_start = start > now ? start : now;
		x->run_end = x->run_start + x->len[i];
	}
	if (x->qn > v->max_q)
		v->max_q = x->qn;
}

static void vd_record(struct vd *v, sym_time now, sym_time start, sym_time finish, int g, int model, int size,
		      uint64_t first)
{
	assert_true(v->nd < VMAXD);
	v->d[v->nd++] = (struct vrec){ now, start, g, model, size, first };
	vd_push(v, g, now, start, finish);
}

static void vd_core_dispatch(void *ctx, const struct sym_dispatch *d)
{
	vd_record(ctx, d->now, d->start, d->finish, d->gpu, d->model, d->size, d->reqs[0]->id);
}

static void vd_core_drop(void *ctx, struct sym_request *r, enum sym_drop_reason why, sym_time now)
{
	struct vd *v = ctx;
	(void)why, (void)now;
	v->drop_ids[v->ndrops++] = r->id;
}

static void vd_sched_dispatch(void *ctx, const struct sym_sched_dispatch *d)
{
	vd_record(ctx, d->now, d->start, d->finish, d->gpu, d->model, d->size, d->ids[0]);
}

static void vd_sched_drop(void *ctx, uint64_t id, int model, enum sym_drop_reason why, sym_time now)
{
	struct vd *v = ctx;
	(void)model, (void)why, (void)now;
	v->drop_ids[v->ndrops++] = id;
}

static void vd_poll(struct vd *v, sym_time now)
{
	if (!v->sched)
		return;
	sym_sched_step(v->sched, now);
	const struct sym_sched_out out = { v, vd_sched_dispatch, vd_sched_drop, NULL };
	while (sym_sched_poll(v->sched, &out, 1024) > 0)
		;
}

/* Plays n arrivals (times ascending, ns) and everything after them. */
static void vd_run(struct vd *v, const sym_time *at, const int *model, const sym_time *slo, int n)
{
	static struct sym_request reqs[VMAXD];
	int next = 0;
	for (;;) {
		sym_time te = SYM_TIME_NEVER;
		int ge = -1;
		for (int g = 0; g < v->ngpus; g++)
			if (v->g[g].qn && v->g[g].run_end < te) {
				te = v->g[g].run_end;
				ge = g;
			}
		sym_time ta = next < n ? at[next] : SYM_TIME_NEVER;
		sym_time tt = v->core ? sym_core_next_wakeup(v->core) : sym_sched_next_wakeup(v->sched);
		sym_time t = te < ta ? te : ta;
		t = tt < t ? tt : t;
		if (t == SYM_TIME_NEVER)
			break;
		if (te == t) {
			struct vgpu *x = &v->g[ge];
			sym_time start = x->run_start;
			x->qh = (x->qh + 1) % VMAXQ;
			if (--x->qn) {
				sym_time s0 = x->start[x->qh];
				x->run_start = s0 > t ? s0 : t;
				x->run_end = x->run_start + x->len[x->qh];
			}
			if (v->core) {
				struct sym_batch_end e = { start, t, false };
				sym_core_gpu_done(v->core, ge, t, &e);
			} else {
				assert_int_equal(sym_sched_gpu_done(v->sched, ge, start, t, false), 0);
				vd_poll(v, t);
			}
		} else if (ta == t) {
			int i = next++;
			if (v->core) {
				reqs[i] = (struct sym_request){ .id = (uint64_t)i, .arrival = t, .deadline = t + slo[model[i]],
								.model = model[i] };
				assert_int_equal(sym_core_arrive(v->core, &reqs[i], t), 0);
			} else {
				struct sym_sched_req q = { .id = (uint64_t)i, .model = model[i], .arrival = t,
							   .deadline = t + slo[model[i]] };
				assert_int_equal(sym_sched_submit(v->sched, &q), 0);
				vd_poll(v, t);
			}
		} else if (v->core) {
			sym_core_advance(v->core, t);
		} else {
			vd_poll(v, t);
		}
	}
}

static int vrec_cmp(const void *a, const void *b)
{
	const struct vrec *x = a, *y = b;
	if (x->now != y->now)
		return x->now < y->now ? -1 : 1;
	if (x->gpu != y->gpu)
		return x->gpu - y->gpu;
	return x->model - y->model;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The single-threaded core and the split path (3 workers, a ranker per
 * kind, manual mode) see the same event sequence in virtual time: 12
 * models, 6 GPUs (one kind, then two), network delays (so that send-ahead
 * plans batches on running GPUs), and a workload of light load, overload
 * and bursts at nanosecond-random times. Their dispatches (decision time,
 * GPU, model, size, planned start, first request) and their drops are
 * identical. */
static void test_split_same_as_core(void **state)
{
	(void)state;
	enum { NM = 12, NG = 6 };
	static sym_time at[VMAXD];
	static int model[VMAXD];
	sym_time slo[NM];
	int n = 0;
	sym_time t = 0;
	uint64_t x = 12345;
	const struct {
		sym_time until;
		double rate;
	} phase[] = { { 300 * SYM_MS, 800 }, { 600 * SYM_MS, 5000 }, { 700 * SYM_MS, 200 }, { 750 * SYM_MS, 20000 },
		      { 1200 * SYM_MS, 1500 } };
	for (size_t p = 0; p < sizeof(phase) / sizeof(phase[0]); p++) {
		for (;;) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			t += (sym_time)((double)(x >> 11) / 9007199254740992.0 * 2e9 / phase[p].rate) + 1;
			if (t >= phase[p].until || n >= 6000)
				break;
			at[n] = t;
			model[n++] = (int)((x >> 40) % NM);
		}
	}
	struct sym_profile pk[2];
	assert_int_equal(sym_profile_init_linear(&pk[0], "a", 1, 5, 32), 0);
	assert_int_equal(sym_profile_init_linear(&pk[1], "b", 0.6, 3.2, 32), 0);
	struct sym_kind kinds[2] = { { "a", false, 0 }, { "b", false, 0 } };
	int gpu_kind[NG] = { 0, 1, 0, 1, 0, 1 };
	const char *pols[] = { "symphony", "eager", "timeout:30%" };
	for (int nk = 1; nk <= 2; nk++) {
		for (size_t pi = 0; pi < sizeof(pols) / sizeof(pols[0]); pi++) {
			struct sym_model_cfg mc[NM];
			for (int m = 0; m < NM; m++) {
				slo[m] = (sym_time)(20 + 3 * m) * SYM_MS;
				mc[m] = (struct sym_model_cfg){ .profile = &pk[0], .slo = slo[m], .name = "m",
								.by_kind = { NULL, &pk[1] } };
			}
			struct sym_sched_cfg cfg = { .threads = 3, .manual = true };
			cfg.core = (struct sym_core_cfg){ .nmodels = NM, .models = mc, .ngpus = NG, .nkinds = nk,
							  .kinds = nk > 1 ? kinds : NULL, .gpu_kind = nk > 1 ? gpu_kind : NULL,
							  .net = { 300 * SYM_US, 20 * SYM_US, 100 * SYM_US },
							  .send_ahead = true };
			char err[256];
			assert_int_equal(sym_policy_parse(pols[pi], &cfg.core.policy, err, sizeof(err)), 0);
			assert_int_equal(sym_gather_parse("early", &cfg.core.gather), 0);
			static struct vd a, b;
			memset(&a, 0, sizeof(a));
			memset(&b, 0, sizeof(b));
			a.ngpus = b.ngpus = NG;
			struct sym_sink sink = { &a, vd_core_dispatch, vd_core_drop, NULL };
			assert_int_equal(sym_core_create_err(&a.core, &cfg.core, &sink, err, sizeof(err)), 0);
			assert_int_equal(sym_sched_create(&b.sched, &cfg, err, sizeof(err)), 0);
			vd_run(&a, at, model, slo, n);
			vd_run(&b, at, model, slo, n);
			qsort(a.d, (size_t)a.nd, sizeof(a.d[0]), vrec_cmp);
			qsort(b.d, (size_t)b.nd, sizeof(b.d[0]), vrec_cmp);
			qsort(a.drop_ids, (size_t)a.ndrops, sizeof(uint64_t), u64_cmp);
			qsort(b.drop_ids, (size_t)b.ndrops, sizeof(uint64_t), u64_cmp);
			print_message("%d kind(s), %s: %d dispatches, %d drops, %d batches at most on a GPU at once\n", nk,
				      pols[pi], a.nd, a.ndrops, a.max_q);
			assert_int_equal(a.nd, b.nd);
			for (int i = 0; i < a.nd; i++) {
				const struct vrec *p = &a.d[i], *q = &b.d[i];
				if (p->now != q->now || p->gpu != q->gpu || p->model != q->model || p->size != q->size ||
				    p->start != q->start || p->first != q->first)
					fail_msg("dispatch %d: core (%lld ns, gpu %d, model %d, %d from %llu) split (%lld ns, gpu %d, model %d, %d from %llu)",
						 i, (long long)p->now, p->gpu, p->model, p->size, (unsigned long long)p->first,
						 (long long)q->now, q->gpu, q->model, q->size, (unsigned long long)q->first);
			}
			assert_int_equal(a.ndrops, b.ndrops);
			for (int i = 0; i < a.ndrops; i++)
				assert_int_equal(a.drop_ids[i], b.drop_ids[i]);
			int served = 0;
			for (int i = 0; i < a.nd; i++)
				served += a.d[i].size;
			assert_int_equal(served + a.ndrops, n); /* every request ended once */
			assert_true(a.max_q == 2);              /* send-ahead happened, one plan ahead at most */
			assert_true(a.ndrops > 0 && a.nd > 100);
			sym_core_destroy(a.core);
			sym_sched_destroy(b.sched);
		}
	}
	sym_profile_finish(&pk[0]);
	sym_profile_finish(&pk[1]);
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
		act[g] = (struct action){ 0, g, false, 0, 0, 0, false };
		act[4 + g] = (struct action){ 400 * SYM_MS, g, true, 0, 0, 0, false };
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

/* Two sub-clusters as two kinds of 4 GPUs each: models 0 and 1 on kind 0, 2
 * and 3 on kind 1; 400 requests over a second. With by_part, the same as two
 * parts of one GPU kind (core/parts.h: the scheduler's kinds are then the
 * parts, in the same order). */
static const struct sym_kind two_parts[2] = { { "part0", false, 0 }, { "part1", false, 0 } };
static const int two_parts_gk[8] = { 0, 0, 0, 0, 1, 1, 1, 1 };

static void two_parts_cfg(struct td *t, struct sym_sched_cfg *cfg, struct sym_model_cfg *mc, int threads,
			  bool by_part)
{
	td_init(t, 800);
	t->nreq = plan(t, 0, 0, 1 * SYM_S, 400, 4, false);
	make_cfg(cfg, mc, 4, &slow, 150 * SYM_MS, 8, "symphony", threads);
	for (int m = 0; m < 4; m++) {
		t->kinds_off[m] = m < 2 ? 2u : 1u;
		if (by_part) {
			mc[m].part = m < 2 ? 0 : 1;
		} else {
			mc[m].by_kind[1] = &slow;
			mc[m].kinds_off = t->kinds_off[m];
		}
	}
	if (by_part) {
		cfg->core.nparts = 2;
		cfg->core.gpu_part = two_parts_gk;
	} else {
		cfg->core.nkinds = 2;
		cfg->core.kinds = two_parts;
		cfg->core.gpu_kind = two_parts_gk;
	}
	t->gpu_kind = two_parts_gk;
}

/* A model moving to another sub-cluster while it serves (an epoch's move,
 * schedd's runtime/schedd.c): 4 models on two kinds of 4 GPUs each, models
 * 0 and 1 on kind 0, 2 and 3 on kind 1; at 400 ms model 1 moves to kind 1.
 * Once the move is reported, no batch of model 1 goes to kind 0; before, none
 * went to kind 1; every request is decided once, none late. */
static void split_move(int threads, bool by_part)
{
	struct td t;
	struct sym_model_cfg mc[4];
	struct sym_sched_cfg cfg;
	two_parts_cfg(&t, &cfg, mc, threads, by_part);
	struct action act[] = { { .at = 400 * SYM_MS, .move = 2, .kinds_off = 1u, .by_part = by_part } };
	t.act = act;
	t.nact = 1;
	start(&t, &cfg);
	sym_time slo[4] = { 150 * SYM_MS, 150 * SYM_MS, 150 * SYM_MS, 150 * SYM_MS };
	td_run(&t, slo, 20 * SYM_S);
	assert_int_equal(t.moves_reported, 1);
	assert_int_equal(t.moved_rc[1], 0);
	assert_int_equal(t.kind_viol, 0);
	assert_int_equal(t.dup, 0);
	assert_int_equal(t.late, 0);
	assert_true(t.ndisp_reqs + t.ndrops == (uint64_t)t.nreq);
	assert_true(t.disp_by_kind[1][0] > 0 && t.disp_by_kind[1][1] > 0); /* served on both sides of the move */
	assert_int_equal(t.disp_by_kind[0][1], 0);
	td_finish(&t);
}

static void test_split_move_1(void **state)
{
	(void)state;
	split_move(1, false);
	split_move(1, true);
}

static void test_split_move_2(void **state)
{
	(void)state;
	split_move(2, false);
	split_move(2, true);
}

/* A GPU moving to another sub-cluster (an epoch's GPU move, runtime/schedd.c):
 * models 0 and 1 run on kind 0's four GPUs, 2 and 3 on kind 1's; at 300 ms
 * GPU 3 goes offline, at 350 ms it comes online as one of kind 1's. After,
 * GPU 3 serves models 2 and 3 only; no batch ever goes to a kind its model is
 * off; every request is decided once, none late. Bad calls refused. */
static void split_gpu_move(int threads, bool by_part)
{
	struct td t;
	struct sym_model_cfg mc[4];
	struct sym_sched_cfg cfg;
	two_parts_cfg(&t, &cfg, mc, threads, by_part);
	struct action act[] = { { .at = 300 * SYM_MS, .gpu = 3, .online = false },
				{ .at = 350 * SYM_MS, .gpu = 3, .online = true, .kind = 2, .by_part = by_part } };
	t.act = act;
	t.nact = 2;
	start(&t, &cfg);
	assert_int_equal(sym_sched_gpu_online_kind(t.s, 2, 1), -EBUSY); /* online: not moved */
	assert_int_equal(sym_sched_gpu_online_kind(t.s, 2, 2), -EINVAL); /* no kind 2 */
	assert_int_equal(sym_sched_gpu_online_kind(t.s, 8, 0), -EINVAL);
	if (by_part) {
		assert_int_equal(sym_sched_gpu_online_part(t.s, 2, 1), -EBUSY);
		assert_int_equal(sym_sched_gpu_online_part(t.s, 2, 2), -EINVAL); /* no part 2 */
		assert_int_equal(sym_sched_gpu_online_part(t.s, 8, 0), -EINVAL);
		assert_int_equal(sym_sched_set_part(t.s, 0, 2), -EINVAL);
		assert_int_equal(sym_sched_set_part(t.s, 4, 0), -EINVAL);
	} else { /* (a scheduler without parts) */
		assert_int_equal(sym_sched_gpu_online_part(t.s, 2, 0), -EINVAL);
		assert_int_equal(sym_sched_set_part(t.s, 0, 0), -EINVAL);
	}
	sym_time slo[4] = { 150 * SYM_MS, 150 * SYM_MS, 150 * SYM_MS, 150 * SYM_MS };
	td_run(&t, slo, 20 * SYM_S);
	assert_int_equal(t.kind_viol, 0);
	assert_int_equal(t.late, 0);
	assert_true(t.ndisp_reqs + t.ndrops == (uint64_t)t.nreq);
	assert_true(t.batches_after_online[3] > 0); /* GPU 3 serves its new kind's models */
	print_message("threads %d: GPU 3 ran %d batches after its move\n", threads, t.batches_after_online[3]);
	td_finish(&t);
}

static void test_split_gpu_move_1(void **state)
{
	(void)state;
	split_gpu_move(1, false);
	split_gpu_move(1, true);
}

static void test_split_gpu_move_2(void **state)
{
	(void)state;
	split_gpu_move(2, false);
	split_gpu_move(2, true);
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
		assert_int_equal(sym_sched_restart_arrivals(s, 2), -EINVAL);
		assert_int_equal(sym_sched_restart_arrivals(s, 1), 0); /* queued to its thread, applied there */
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
		cmocka_unit_test(test_split_same_as_core),
		cmocka_unit_test(test_split_kinds),
		cmocka_unit_test(test_split_move_1),
		cmocka_unit_test(test_split_move_2),
		cmocka_unit_test(test_split_gpu_move_1),
		cmocka_unit_test(test_split_gpu_move_2),
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
