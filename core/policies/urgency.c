/* urgency: slack-based scheduling for multi-tenant heterogeneous clusters.
 *
 * A scheduler policy over the shards' deadline-ordered queues. Whenever a
 * resource (a GPU of some kind, or a CPU kind) is free and requests are
 * queued it issues a batch at once; it never waits, so it needs no timers.
 *
 * For each application (model) A with pending_A queued requests and each
 * resource kind R with a free device:
 *
 *   b       = min(MAX_A,R, pending_A), the batch that would be issued on R;
 *   slack   = d_head - (now + est_A,R(b))            (ms; d_head = queue head's deadline)
 *   U       = -sign(slack) |slack|^p  (power, default p = 3; = -slack^3),
 *             -slack (linear) or 2^-slack (exp);
 *   L_A     = pending_A / navg_A (Eq. 3), navg_A = max(1, rate_A * 1 s): the
 *             requests expected every second at the configured rate (the
 *             measured rate when none was configured), at least one, as
 *             published (navg=second, the default); navg=slo: rate_A * SLO_A,
 *             the requests that arrive within one SLO (this policy's form
 *             before it followed Eq. 3: it weighs a model's queue against its
 *             own deadline horizon, so tight-SLO models count as more loaded);
 *   urg_A,R = U * L_A, as published (load=product, the default), or with
 *             load=monotone: U * L_A when U >= 0, U / L_A when U < 0.
 *
 * The monotone form exists because with the power and linear shapes U is
 * negative while the slack is positive, and the plain product then makes a
 * *more* loaded application *less* urgent; dividing instead scales the
 * magnitude the same way (urg is increasing in both U and L_A, and
 * continuous at U = 0). The default stays the published product, so the
 * baseline is the one the literature compares against. With exp, U > 0
 * always and urg = U * L_A in both forms, compared in the log domain
 * (-slack + log2 L_A) so that it cannot overflow.
 * Busy resources count as urgency -infinity, i.e. only free kinds are looked at.
 *
 * Decision: the application with the highest urgency over the free kinds
 * (app=signed, the default: the largest urg_A,R over them; ties: earlier head
 * deadline, then lower model index) issues its batch of
 * min(MAX_A,R, pending_A) requests from its queue head (requests are never
 * reordered within an application) to the free kind on which its urgency is
 * *lowest* (the most slack, i.e. the fastest for it; ties: a GPU kind before
 * a CPU kind, then the lower kind), on that kind's lowest free device. Repeat
 * while devices are free and requests are queued. The batch is not shrunk to
 * fit the deadline (the published scheduler issues what is pending), so
 * responses may be late; a queue head is dropped (expired) once it cannot
 * finish even alone on the fastest kind: now + le(1) > d.
 *
 * MAX_A,R, the consolidation limit: max.MODEL=N for that model, else max=N,
 * else the model's largest batch on R; always capped at the largest batch on R.
 *
 * est_A,R(b): the network delays plus l(b), where l(b) comes from a history
 * table of the last HIST_CAP completed batches of A on kind R (batch size,
 * measured time from the planned execution start to the completion), fitted
 * as l(b) = c0 + c1*b by least squares (gsl_fit_linear) once min_samples
 * samples (default 16) with at least two distinct batch sizes exist; before
 * that, the configured profile's l(b). The fit is refreshed at every
 * completion; the batches' sizes and starts are recorded here at dispatch.
 *
 * Eq. 5 taken literally (app=abs): U_A = min over the free kinds of
 * |urg_A,R|, the application with the largest U_A. Not the default: with the
 * power and linear shapes urg is negative while the slack is positive, and
 * its absolute value is then largest for the application with the MOST slack,
 * the opposite of what the paper says the metric is for ("if a request falls
 * behind in meeting its deadline, its urgency sharply increases"); the signed
 * largest urgency is that intent. With exp (urg > 0) the two agree.
 *
 * Parameters: shape=power|linear|exp, p=X (0 < X <= 16), load=product|monotone,
 * navg=second|slo, app=signed|abs,
 * max=N, max.MODEL=N (up to SYM_POLICY_MAX_OVERRIDES), min_samples=N
 * (2..HIST_CAP).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy_api.h"
#include "core/urgency.h"

#define HIST_CAP SYM_URG_HIST_CAP
#define EXPECTED_FLOOR 1.0 /* requests */

/* ---- parameters ---- */

enum { SHAPE_POWER, SHAPE_LINEAR, SHAPE_EXP };
enum { LOAD_PRODUCT, LOAD_MONOTONE };
enum { NAVG_SECOND, NAVG_SLO };
enum { APP_ABS, APP_SIGNED };

struct params {
	int shape;  /* SHAPE_* */
	double p;   /* power */
	int load;   /* LOAD_PRODUCT (U*L as published) or LOAD_MONOTONE (U/L when U < 0) */
	int max;    /* consolidation limit (0: the model's largest batch) */
	struct sym_policy_overrides over; /* max.MODEL */
	int min_samples; /* history samples before the fit replaces the profile */
	int navg;   /* NAVG_SECOND (Eq. 3) or NAVG_SLO */
	int app;    /* APP_ABS (Eq. 5 as printed) or APP_SIGNED */
};
SYM_POLICY_PARAMS(struct params, params_of)

static const struct sym_param_word shape_words[] = {
	{ "power", SHAPE_POWER }, { "linear", SHAPE_LINEAR }, { "exp", SHAPE_EXP }, { NULL, 0 },
};
static const struct sym_param_word load_words[] = {
	{ "product", LOAD_PRODUCT }, { "monotone", LOAD_MONOTONE }, { NULL, 0 },
};

static const struct sym_param_word navg_words[] = { { "second", NAVG_SECOND }, { "slo", NAVG_SLO }, { NULL, 0 } };
static const struct sym_param_word app_words[] = { { "abs", APP_ABS }, { "signed", APP_SIGNED }, { NULL, 0 } };

static const struct sym_param params[] = {
	{ .key = "shape", .type = SYM_PARAM_ENUM, .offset = offsetof(struct params, shape), .words = shape_words,
	  .def = SHAPE_POWER, .help = "U = -slack^p, -slack or 2^-slack" },
	{ .key = "p", .type = SYM_PARAM_NUM, .offset = offsetof(struct params, p), .lo = 0, .lo_open = true,
	  .hi = 16, .def = 3, .help = "the power" },
	{ .key = "load", .type = SYM_PARAM_ENUM, .offset = offsetof(struct params, load), .words = load_words,
	  .def = LOAD_PRODUCT, .help = "U*L as published, or U/L for U < 0" },
	{ .key = "max", .type = SYM_PARAM_INT, .offset = offsetof(struct params, max), .lo = 1,
	  .hi = SYM_PROFILE_BATCH_LIMIT, .def = 0, .def_text = "the model's largest batch",
	  .help = "consolidation limit" },
	{ .key = "max", .type = SYM_PARAM_PER_MODEL, .offset = offsetof(struct params, over), .lo = 1,
	  .hi = SYM_PROFILE_BATCH_LIMIT, .help = "consolidation limit of one model" },
	{ .key = "navg", .type = SYM_PARAM_ENUM, .offset = offsetof(struct params, navg), .words = navg_words,
	  .def = NAVG_SECOND, .help = "L = pending / requests expected per second (Eq. 3), or per SLO" },
	{ .key = "app", .type = SYM_PARAM_ENUM, .offset = offsetof(struct params, app), .words = app_words,
	  .def = APP_ABS, .help = "Eq. 5: the application with the largest min |U| over resources, or the largest signed U" },
	{ .key = "min_samples", .type = SYM_PARAM_INT, .offset = offsetof(struct params, min_samples), .lo = 2,
	  .hi = HIST_CAP, .def = 16, .help = "history samples before the fitted latency replaces the profile" },
	{ .key = NULL },
};

/* ---- state ---- */

/* Completed batches of one model on one kind: their summed data size
 * (Section IV-A3: the history table fits time against size; a request of
 * unknown size counts 1, so without sizes this is the batch size) and
 * measured l(b) (ms), the history table of core/urgency.h. */
typedef struct sym_urg_hist hist_t;

struct running {
	int model, size; /* size 0: nothing of ours running */
	double data;     /* the batch's summed data size */
	sym_time start;
};

struct ustate {
	struct sym_urg_shape shape;
	bool per_slo;
	enum sym_urg_app_rule app;
	int min_samples;
	int *limit;          /* [m * nkinds + k]: the consolidation limit MAX_A,R */
	double *rate;        /* [m]: the configured rate (requests/s), 0 when none */
	hist_t *hist;        /* [m * nkinds + k] */
	struct running *run; /* [g] */
};

/* The model's name, for the max.MODEL overrides (NULL when it has none). */
static inline const char *model_name(const struct sym_core *c, int m)
{
	return c->shards[m].name;
}

static void finish(struct sym_core *c)
{
	struct ustate *st = c->sched_state;
	if (!st)
		return;
	free(st->limit);
	free(st->rate);
	free(st->hist);
	free(st->run);
	free(st);
	c->sched_state = NULL;
}

static int init(struct sym_core *c, char *err, size_t errlen)
{
	const struct params pp = params_of(&c->policy);
	const struct sym_policy_overrides *over = &pp.over;
	for (int i = 0; i < over->n; i++) {
		bool found = false;
		for (int m = 0; m < c->nmodels && !found; m++)
			found = model_name(c, m) && !strcmp(model_name(c, m), over->v[i].model);
		if (!found) {
			snprintf(err, errlen, "max.%s: no model named '%s'", over->v[i].model, over->v[i].model);
			return -EINVAL;
		}
	}
	struct ustate *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	c->sched_state = st;
	st->shape = (struct sym_urg_shape){ pp.shape == SHAPE_EXP ? SYM_URG_EXP : pp.shape == SHAPE_LINEAR ? SYM_URG_LINEAR
										 : SYM_URG_POWER,
					    pp.p, pp.load == LOAD_MONOTONE };
	st->min_samples = pp.min_samples;
	st->per_slo = pp.navg == NAVG_SLO;
	st->app = pp.app == APP_SIGNED ? SYM_URG_APP_SIGNED : SYM_URG_APP_EQ5;
	size_t mk = (size_t)c->nmodels * (size_t)c->nkinds;
	st->limit = malloc(mk * sizeof(*st->limit));
	st->rate = malloc((size_t)c->nmodels * sizeof(*st->rate));
	st->hist = calloc(mk, sizeof(*st->hist));
	st->run = calloc((size_t)c->ngpus, sizeof(*st->run));
	if (!st->limit || !st->rate || !st->hist || !st->run) {
		finish(c);
		return -ENOMEM;
	}
	for (int m = 0; m < c->nmodels; m++) {
		int lim = pp.max;
		const char *name = model_name(c, m);
		for (int i = 0; name && i < over->n; i++)
			if (!strcmp(name, over->v[i].model))
				lim = over->v[i].value;
		for (int k = 0; k < c->nkinds; k++) {
			int maxb = sym_core_max_batch(c, m, k);
			st->limit[m * c->nkinds + k] = lim > 0 && lim < maxb ? lim : maxb;
		}
		st->rate[m] = c->shards[m].lambda; /* the configured rate, before any arrival */
	}
	return 0;
}

/* ---- estimates ---- */

static void observe(struct ustate *st, const struct sym_core *c, int m, int k, double data, sym_time took)
{
	sym_urg_hist_add(&st->hist[m * c->nkinds + k], data, sym_to_ms(took), st->min_samples);
}

/* The summed data size of the first b queued requests of model m. */
static double data_size(const struct sym_core *c, int m, int b)
{
	double x = 0;
	for (int i = 0; i < b; i++) {
		float z = sym_queue_at(&c->shards[m].queue, (size_t)i)->size;
		x += z > 0 ? z : 1;
	}
	return x;
}

/* One model's data_size for one b, kept while its kinds are looked at (their
 * consolidation limits are mostly the same). */
struct data_memo {
	int b; /* 0: none yet */
	double x;
};

/* Estimated response time (ms) of a batch of the first b queued requests
 * (b <= the kind's largest) of model m dispatched now on kind k: the
 * profile's l(b) until the history has a fit, then the fit at their summed
 * data size. */
static double est_ms(const struct ustate *st, const struct sym_core *c, int m, int k, int b, struct data_memo *dm)
{
	const struct sym_shard *s = &c->shards[m];
	const hist_t *h = &st->hist[m * c->nkinds + k];
	if (!h->fitted)
		return sym_to_ms(s->lek[k][b]);
	if (dm->b != b)
		*dm = (struct data_memo){ b, data_size(c, m, b) };
	return sym_to_ms(s->lek[k][b] - s->prof_k[k]->lat[b]) + sym_urg_hist_estimate(h, dm->x, 0);
}

static double expected(const struct ustate *st, const struct sym_core *c, int m)
{
	double rate = st->rate[m] > 0 ? st->rate[m] : c->shards[m].lambda;
	double e = st->per_slo ? rate * sym_to_s(c->shards[m].slo) : rate;
	return e > EXPECTED_FLOOR ? e : EXPECTED_FLOOR;
}

/* ---- scheduling ---- */

static int lowest_free(const struct sym_core *c, int k)
{
	for (int g = 0; g < c->ngpus; g++)
		if (!c->gpus[g].busy && c->gpus[g].kind == k)
			return g;
	return -1;
}

/* Out of line: react runs on every event, and most arrivals find no free
 * device. */
static __attribute__((noinline)) void schedule(struct sym_core *c, sym_time now)
{
	struct ustate *st = c->sched_state;
	const struct sym_urg_shape shape = st->shape; /* a local: read once, not after every call */
	const int nk = c->nkinds;
	while (c->nfree > 0) {
		int best = -1, best_k = -1;
		double best_u = -INFINITY, best_dl = 0;
		for (int m = 0; m < c->nmodels; m++) {
			size_t n = sym_core_expire(c, m, now);
			if (!n)
				continue;
			sym_time dl = sym_queue_at(&c->shards[m].queue, 0)->deadline;
			double to_dl = sym_to_ms(dl - now);
			double load = (double)n / expected(st, c, m);
			struct sym_urg_app ua; /* ua.u: the application's urgency (see app=) */
			sym_urg_app_begin(&ua);
			struct data_memo dm = { 0, 0 };
			for (int k = 0; k < nk; k++) {
				if (!c->nfree_kind[k])
					continue;
				int b = st->limit[m * nk + k];
				if ((size_t)b > n)
					b = (int)n;
				double u = sym_urgency(&shape, to_dl - est_ms(st, c, m, k, b, &dm), load);
				/* a GPU takes a tie from a CPU */
				sym_urg_app_add(&ua, st->app, &shape, k, u, ua.res >= 0 && c->kinds[ua.res].cpu && !c->kinds[k].cpu);
			}
			if (sym_urg_app_before(ua.u, (double)dl, best >= 0, best_u, best_dl)) {
				best = m;
				best_k = ua.res;
				best_u = ua.u;
				best_dl = (double)dl;
			}
		}
		if (best < 0)
			return;
		int g = lowest_free(c, best_k);
		size_t n = sym_queue_len(&c->shards[best].queue);
		int b = st->limit[best * nk + best_k];
		if ((size_t)b > n)
			b = (int)n;
		double data = data_size(c, best, b);
		sym_core_dispatch_queue(c, best, g, b, now);
		st->run[g] = (struct running){ .model = best, .size = b, .data = data, .start = c->gpus[g].start };
	}
}

/* A batch that ended goes into the history; then, whatever happened (no
 * timers are set), the free resources take work. */
static void react(struct sym_core *c, enum sym_sched_event ev, int id, sym_time now)
{
	struct ustate *st = c->sched_state;
	if (ev == SYM_SCHED_GPU_FREE) {
		struct running *r = &st->run[id];
		if (r->size > 0 && now >= r->start)
			observe(st, c, r->model, c->gpus[id].kind, r->data, now - r->start);
		r->size = 0;
	}
	if (c->nfree > 0) /* an arrival with every device busy costs nothing more */
		schedule(c, now);
}

static const struct sym_sched_ops ops = {
	.init = init,
	.finish = finish,
	.arrive = NULL,
	.react = react,
	.held = NULL,
};

const struct sym_policy_ops sym_policy_urgency = {
	.name = "urgency",
	.summary = "slack-based: the application with the largest urgency by Eq. 5, min |U| over free resources of "
		   "U = -slack^p times its load, goes to the free resource where it is least urgent",
	.params = params,
	.params_size = sizeof(struct params),
	.sched = &ops,
};
