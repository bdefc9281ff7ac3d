/* tests/coredriver.h - a tiny deterministic driver for core and policy tests,
 * independent of the simulator. Include after <cmocka.h>.
 *
 * Requests arrive at given times (deadline = arrival + the model's SLO, or a
 * per-request deadline); GPUs finish at the planned finish time; cancels are
 * honoured. At equal times: GPU completions first (lowest GPU id first), then
 * arrivals, then core timers. Every dispatch, drop and cancel is recorded, and
 * the run checks the core's contract as it goes:
 *   - a dispatch goes to a free GPU, with 1..64 requests of one model;
 *   - a request ends exactly once (served on completion, or dropped), and a
 *     cancelled batch's requests come back and end later;
 *   - at the end nothing is queued.
 *
 * With dr->ahead set (before cd_start) a GPU also takes batches while busy,
 * up to the core's max_outstanding, and runs them as sim/engine.c does: in
 * the order they came, each at its planned start or when the one before it
 * ends, whichever is later; a batch that could only start after its
 * reject_after is rejected instead, at that moment (its requests are dropped
 * by the driver, reason rejected, and the core hears of a rejected end).
 * Batch ends are reported with their real start and end (sym_core_gpu_done).
 * dr->dur, when set, gives a batch's real run time (jitter); by default it
 * is its planned finish - start.
 * Usage:
 *   struct cd_driver *dr = cd_new();
 *   cd_start(dr, &cfg);                    (cfg.models, nmodels, ngpus, policy, ...)
 *   cd_arrive(dr, t, model);  ...           (queue the arrivals, in time order)
 *   cd_run(dr);
 *   ... inspect dr->d[0..nd), dr->drops, dr->cancels, dr->late ...
 *   cd_free(dr);
 */
#ifndef SYM_COREDRIVER_H
#define SYM_COREDRIVER_H

#include <stdlib.h>
#include <string.h>

#include "core/core.h"

#define CD_MAXR 20000
#define CD_MAXD 20000
#define CD_MAXG 64
#define CD_MAXB 64

struct cd_dispatch {
	int gpu, kind, model, size;
	sym_time now, start, finish;
	sym_time reject_after;
	sym_time real_start, real_end; /* what the GPU did (0 until it started) */
	bool rejected;
	uint64_t ids[CD_MAXB];
};

struct cd_driver;
/* The real run time of dispatch d (index i). */
typedef sym_time (*cd_dur_fn)(struct cd_driver *dr, int i, const struct cd_dispatch *d);

struct cd_drop {
	uint64_t id;
	enum sym_drop_reason why;
	sym_time now;
};

struct cd_cancel {
	int gpu;
	sym_time now;
	int size;
};

struct cd_driver {
	struct sym_core *core;
	const struct sym_model_cfg *mc;
	int ngpus;
	/* arrivals to play */
	int narr, next;
	sym_time arr_t[CD_MAXR];
	sym_time arr_deadline[CD_MAXR]; /* 0: arrival + SLO */
	int arr_model[CD_MAXR];
	/* requests that arrived */
	struct sym_request req[CD_MAXR];
	int nreq;
	int ended[CD_MAXR];   /* times each request ended */
	int late[CD_MAXR];    /* served after its deadline */
	/* GPUs */
	bool ahead;            /* GPUs queue batches (see above) */
	cd_dur_fn dur;         /* real run times (NULL: as planned) */
	void *dur_arg;
	sym_time gpu_finish[CD_MAXG]; /* of the running batch, SYM_TIME_NEVER when idle */
	int gpu_disp[CD_MAXG]; /* index into d of the running batch */
	int gpu_q[CD_MAXG][SYM_GPU_MAX_OUTSTANDING]; /* indices into d: the running batch, then those waiting */
	int gpu_qn[CD_MAXG];
	/* records */
	struct cd_dispatch d[CD_MAXD];
	int nd;
	struct cd_drop drops[CD_MAXR];
	int ndrops;
	struct cd_cancel cancels[CD_MAXD];
	int ncancels;
	int nlate;
};

/* The batch at the head of GPU g's queue starts, the GPU being free since
 * avail (sim/engine.c start_next): at its planned start or at avail,
 * whichever is later, or it is rejected then if that is after its
 * reject_after. */
static void cd_start_next(struct cd_driver *dr, int g, sym_time avail)
{
	int i = dr->gpu_q[g][0];
	struct cd_dispatch *x = &dr->d[i];
	sym_time start = x->start > avail ? x->start : avail;
	x->real_start = start;
	if (start > x->reject_after) {
		x->rejected = true;
		x->real_end = start;
	} else {
		x->real_end = start + (dr->dur ? dr->dur(dr, i, x) : x->finish - x->start);
	}
	dr->gpu_disp[g] = i;
	dr->gpu_finish[g] = x->real_end;
}

static void cd_on_dispatch(void *ctx, const struct sym_dispatch *d)
{
	struct cd_driver *dr = ctx;
	assert_true(d->gpu >= 0 && d->gpu < dr->ngpus);
	if (dr->ahead)
		assert_true(dr->gpu_qn[d->gpu] < sym_core_max_outstanding(dr->core));
	else
		assert_true(dr->gpu_finish[d->gpu] == SYM_TIME_NEVER); /* the GPU was free */
	assert_true(d->size >= 1 && d->size <= CD_MAXB);
	assert_true(dr->nd < CD_MAXD);
	assert_true(d->start >= d->now && d->finish >= d->start);
	struct cd_dispatch *x = &dr->d[dr->nd];
	*x = (struct cd_dispatch){ d->gpu, d->kind, d->model, d->size, d->now, d->start, d->finish,
				   d->reject_after, 0, 0, false, { 0 } };
	for (int i = 0; i < d->size; i++) {
		assert_int_equal(d->reqs[i]->model, d->model);
		assert_int_equal(dr->ended[d->reqs[i]->id], 0);
		x->ids[i] = d->reqs[i]->id;
	}
	dr->gpu_q[d->gpu][dr->gpu_qn[d->gpu]++] = dr->nd++;
	if (dr->gpu_qn[d->gpu] == 1)
		cd_start_next(dr, d->gpu, d->now);
}

static void cd_on_drop(void *ctx, struct sym_request *r, enum sym_drop_reason why, sym_time now)
{
	struct cd_driver *dr = ctx;
	assert_int_equal(dr->ended[r->id], 0);
	dr->ended[r->id]++;
	dr->drops[dr->ndrops++] = (struct cd_drop){ r->id, why, now };
}

static void cd_on_cancel(void *ctx, int gpu, sym_time now)
{
	struct cd_driver *dr = ctx;
	assert_true(dr->gpu_finish[gpu] != SYM_TIME_NEVER); /* it was running */
	assert_true(now < dr->gpu_finish[gpu]);
	assert_int_equal(dr->gpu_qn[gpu], 1); /* nothing waits behind a preempted batch */
	dr->cancels[dr->ncancels++] = (struct cd_cancel){ gpu, now, dr->d[dr->gpu_disp[gpu]].size };
	dr->gpu_finish[gpu] = SYM_TIME_NEVER;
	dr->gpu_qn[gpu] = 0;
}

static inline struct cd_driver *cd_new(void)
{
	struct cd_driver *dr = calloc(1, sizeof(*dr));
	assert_non_null(dr);
	return dr;
}

/* Creates the core (cfg->ngpus <= CD_MAXG). Returns sym_core_create_err's code. */
static inline int cd_start_err(struct cd_driver *dr, const struct sym_core_cfg *cfg, char *err, size_t errlen)
{
	dr->mc = cfg->models;
	dr->ngpus = cfg->ngpus;
	assert_true(cfg->ngpus <= CD_MAXG);
	for (int g = 0; g < CD_MAXG; g++)
		dr->gpu_finish[g] = SYM_TIME_NEVER;
	struct sym_sink sink = { dr, cd_on_dispatch, cd_on_drop, cd_on_cancel };
	return sym_core_create_err(&dr->core, cfg, &sink, err, errlen);
}

static inline void cd_start(struct cd_driver *dr, const struct sym_core_cfg *cfg)
{
	char err[256] = "";
	int rc = cd_start_err(dr, cfg, err, sizeof(err));
	if (rc)
		print_error("sym_core_create: %d %s\n", rc, err);
	assert_int_equal(rc, 0);
}

/* Parses the policy spec into cfg->policy (failing the test with the
 * parser's message) and creates the core. */
static inline void cd_start_policy(struct cd_driver *dr, struct sym_core_cfg *cfg, const char *spec)
{
	char err[256] = "";
	if (sym_policy_parse(spec, &cfg->policy, err, sizeof(err)))
		fail_msg("%s: %s", spec, err);
	cd_start(dr, cfg);
}

/* Policy p's parameter key as a number (failing the test when it has
 * none). */
static inline double cd_param(const struct sym_policy *p, const char *key)
{
	double x = 0;
	if (sym_policy_param_num(p, key, &x))
		fail_msg("policy '%s' has no parameter '%s'", sym_policy_name(p), key);
	return x;
}

/* The same as canonical text (in a buffer that the next call reuses). */
static inline const char *cd_param_text(const struct sym_policy *p, const char *key)
{
	static char buf[64];
	if (sym_policy_param_text(p, key, buf, sizeof(buf)))
		fail_msg("policy '%s' has no parameter '%s'", sym_policy_name(p), key);
	return buf;
}

/* Queues an arrival at t (non-decreasing) for model m; deadline 0 means
 * t + SLO. */
static inline void cd_arrive_dl(struct cd_driver *dr, sym_time t, int m, sym_time deadline)
{
	assert_true(dr->narr < CD_MAXR);
	assert_true(!dr->narr || dr->arr_t[dr->narr - 1] <= t);
	dr->arr_t[dr->narr] = t;
	dr->arr_model[dr->narr] = m;
	dr->arr_deadline[dr->narr] = deadline;
	dr->narr++;
}

static inline void cd_arrive(struct cd_driver *dr, sym_time t, int m)
{
	cd_arrive_dl(dr, t, m, 0);
}

/* Plays events until nothing is left or time passes `until`. */
static inline void cd_run_until(struct cd_driver *dr, sym_time until)
{
	for (;;) {
		sym_time tg = SYM_TIME_NEVER;
		int g = -1;
		for (int i = 0; i < dr->ngpus; i++)
			if (dr->gpu_finish[i] < tg) {
				tg = dr->gpu_finish[i];
				g = i;
			}
		sym_time ta = dr->next < dr->narr ? dr->arr_t[dr->next] : SYM_TIME_NEVER;
		sym_time tc = sym_core_next_wakeup(dr->core);
		sym_time t = tg < ta ? tg : ta;
		if (tc < t)
			t = tc;
		if (t == SYM_TIME_NEVER || t > until)
			break;
		if (tg == t) {
			const struct cd_dispatch *x = &dr->d[dr->gpu_disp[g]];
			for (int i = 0; i < x->size; i++) {
				struct sym_request *r = &dr->req[x->ids[i]];
				assert_int_equal(dr->ended[r->id], 0);
				dr->ended[r->id]++;
				if (x->rejected) {
					dr->drops[dr->ndrops++] = (struct cd_drop){ r->id, SYM_DROP_REJECTED, tg };
				} else if (tg + sym_core_net(dr->core)->resp > r->deadline) {
					dr->late[r->id] = 1;
					dr->nlate++;
				}
			}
			struct sym_batch_end e = { x->real_start, tg, x->rejected };
			dr->gpu_finish[g] = SYM_TIME_NEVER;
			memmove(dr->gpu_q[g], dr->gpu_q[g] + 1, (size_t)(--dr->gpu_qn[g]) * sizeof(int));
			if (dr->gpu_qn[g])
				cd_start_next(dr, g, tg);
			sym_core_gpu_done(dr->core, g, tg, &e);
		} else if (ta == t) {
			int i = dr->next++;
			struct sym_request *r = &dr->req[dr->nreq];
			int m = dr->arr_model[i];
			sym_time dl = dr->arr_deadline[i] ? dr->arr_deadline[i] : ta + dr->mc[m].slo;
			*r = (struct sym_request){ .id = (uint64_t)dr->nreq, .arrival = ta, .deadline = dl, .model = m };
			dr->nreq++;
			assert_int_equal(sym_core_arrive(dr->core, r, ta), 0);
		} else {
			sym_core_advance(dr->core, tc);
		}
	}
}

/* Plays everything and checks conservation. */
static inline void cd_run(struct cd_driver *dr)
{
	cd_run_until(dr, SYM_TIME_NEVER - 1);
	assert_int_equal(sym_core_queued(dr->core), 0);
	for (int i = 0; i < dr->nreq; i++) {
		if (dr->ended[i] != 1)
			print_error("request %d ended %d times\n", i, dr->ended[i]);
		assert_int_equal(dr->ended[i], 1);
	}
}

/* A long mixed workload for conservation tests: about 6000 arrivals over
 * nmodels models in phases of underload, overload, silence and a burst,
 * 5% of them with a per-request deadline (out of deadline order). The same
 * for the same seed (an LCG). */
static inline double cd_rnd(uint64_t *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*state >> 11) / 9007199254740992.0;
}

static inline void cd_mixed_workload(struct cd_driver *dr, int nmodels, const struct sym_model_cfg *mc, uint64_t seed)
{
	uint64_t rng = seed;
	const struct {
		double until_ms, rate; /* total arrivals per second */
	} phase[] = { { 400, 300 }, { 900, 6000 }, { 1000, 0 }, { 1400, 800 }, { 1450, 30000 }, { 2000, 200 } };
	double t = 0;
	for (size_t p = 0; p < sizeof(phase) / sizeof(phase[0]); p++) {
		if (phase[p].rate <= 0) {
			t = phase[p].until_ms;
			continue;
		}
		for (;;) {
			t += cd_rnd(&rng) * 2 * 1000 / phase[p].rate;
			if (t >= phase[p].until_ms)
				break;
			int m = (int)(cd_rnd(&rng) * nmodels);
			sym_time at = sym_ms(t);
			if (cd_rnd(&rng) < 0.05)
				cd_arrive_dl(dr, at, m, at + (sym_time)((0.3 + cd_rnd(&rng)) * (double)mc[m].slo));
			else
				cd_arrive(dr, at, m);
		}
	}
}

static inline void cd_free(struct cd_driver *dr)
{
	if (!dr)
		return;
	sym_core_destroy(dr->core);
	free(dr);
}

#endif
