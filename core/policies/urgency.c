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
 *   L_A     = pending_A / expected_A, expected_A = max(1, rate_A * SLO_A):
 *             the requests that arrive within one SLO at the configured rate
 *             (the measured rate when none was configured), at least one;
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
 * (ties: earlier head deadline, then lower model index) issues its batch of
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
 * Parameters: shape=power|linear|exp, p=X (0 < X <= 16), load=product|monotone,
 * max=N, max.MODEL=N (up to SYM_POLICY_MAX_OVERRIDES), min_samples=N
 * (2..HIST_CAP).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_fit.h>

#include "core/core.h"
#include "core/policy.h"

#define NAME "urgency"
#define HIST_CAP 64
#define DEFAULT_P 3.0
#define DEFAULT_MIN_SAMPLES 16
#define EXPECTED_FLOOR 1.0 /* requests */

/* ---- parameters ---- */

static const char *const shape_names[] = {
	[SYM_URGENCY_POWER] = "power",
	[SYM_URGENCY_LINEAR] = "linear",
	[SYM_URGENCY_EXP] = "exp",
};

static int parse(struct sym_policy *p, const char *params, char *err, size_t errlen)
{
#define U (&p->u.urgency)
	memset(U, 0, sizeof(*U));
	U->shape = SYM_URGENCY_POWER;
	U->p = DEFAULT_P;
	U->min_samples = DEFAULT_MIN_SAMPLES;
	char key[4 + sizeof(U->over[0].model)], val[64];
	int rc;
	while ((rc = sym_policy_kv_next(p, &params, key, sizeof(key), val, sizeof(val), err, errlen)) > 0) {
		if (!strcmp(key, "shape")) {
			int s = -1;
			for (int i = 0; i < (int)(sizeof(shape_names) / sizeof(shape_names[0])); i++)
				if (!strcmp(val, shape_names[i]))
					s = i;
			if (s < 0) {
				snprintf(err, errlen, "policy '" NAME "': shape must be power, linear or exp (got '%s')",
					 val);
				return -EINVAL;
			}
			U->shape = s;
		} else if (!strcmp(key, "load")) {
			if (strcmp(val, "product") && strcmp(val, "monotone")) {
				snprintf(err, errlen, "policy '" NAME "': load must be product or monotone (got '%s')", val);
				return -EINVAL;
			}
			U->monotone = !strcmp(val, "monotone");
		} else if (!strcmp(key, "p")) {
			if (sym_policy_num(val, 0, 16, &U->p) || !(U->p > 0)) {
				snprintf(err, errlen, "policy '" NAME "': p must be a power in (0, 16] (got '%s')", val);
				return -EINVAL;
			}
		} else if (!strcmp(key, "max")) {
			if (sym_policy_int(val, 1, SYM_PROFILE_BATCH_LIMIT, &U->max)) {
				snprintf(err, errlen, "policy '" NAME "': max must be a batch size in 1..%d (got '%s')",
					 SYM_PROFILE_BATCH_LIMIT, val);
				return -EINVAL;
			}
		} else if (!strncmp(key, "max.", 4)) {
			const char *model = key + 4;
			if (!*model) {
				snprintf(err, errlen, "policy '" NAME "': max. needs a model name (max.MODEL=N)");
				return -EINVAL;
			}
			for (int i = 0; i < U->nover; i++)
				if (!strcmp(U->over[i].model, model)) {
					snprintf(err, errlen, "policy '" NAME "': %s given twice", key);
					return -EINVAL;
				}
			if (U->nover >= SYM_POLICY_MAX_OVERRIDES) {
				snprintf(err, errlen, "policy '" NAME "': too many max.MODEL overrides (at most %d)",
					 SYM_POLICY_MAX_OVERRIDES);
				return -EINVAL;
			}
			struct sym_policy_override *o = &U->over[U->nover];
			if (sym_policy_int(val, 1, SYM_PROFILE_BATCH_LIMIT, &o->value)) {
				snprintf(err, errlen, "policy '" NAME "': %s must be a batch size in 1..%d (got '%s')",
					 key, SYM_PROFILE_BATCH_LIMIT, val);
				return -EINVAL;
			}
			snprintf(o->model, sizeof(o->model), "%s", model);
			U->nover++;
		} else if (!strcmp(key, "min_samples")) {
			if (sym_policy_int(val, 2, HIST_CAP, &U->min_samples)) {
				snprintf(err, errlen, "policy '" NAME "': min_samples must be in 2..%d (got '%s')",
					 HIST_CAP, val);
				return -EINVAL;
			}
		} else {
			snprintf(err, errlen,
				 "policy '" NAME "': unknown parameter '%s' (expected shape, p, load, max, max.MODEL, min_samples)",
				 key[0] ? key : val);
			return -EINVAL;
		}
	}
	return rc;
#undef U
}

static void format(const struct sym_policy *p, char *buf, size_t len)
{
#define U (&p->u.urgency)
	char num[32];
	size_t n = 0;
	int items = 0;
#define ADD(...)                                                                               \
	do {                                                                                   \
		if (n < len)                                                                   \
			n += (size_t)snprintf(buf + n, len - n, "%s", items++ ? "," : ":");    \
		if (n < len)                                                                   \
			n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__);                  \
	} while (0)
	n = (size_t)snprintf(buf, len, NAME);
	if (U->shape != SYM_URGENCY_POWER)
		ADD("shape=%s", shape_names[U->shape]);
	if (U->p != DEFAULT_P)
		ADD("p=%s", sym_policy_fmt_num(U->p, num, sizeof(num)));
	if (U->monotone)
		ADD("load=monotone");
	if (U->max > 0)
		ADD("max=%d", U->max);
	for (int i = 0; i < U->nover; i++)
		ADD("max.%s=%d", U->over[i].model, U->over[i].value);
	if (U->min_samples != DEFAULT_MIN_SAMPLES)
		ADD("min_samples=%d", U->min_samples);
#undef ADD
#undef U
}

/* ---- state ---- */

/* Completed batches of one model on one kind: batch size and measured l(b) (ms). */
struct hist {
	double x[HIST_CAP], y[HIST_CAP];
	int n, pos;
	bool fitted;
	double c0, c1; /* l(b) = c0 + c1*b ms, when fitted */
};

struct running {
	int model, size; /* size 0: nothing of ours running */
	sym_time start;
};

struct ustate {
	int *limit;          /* [m * nkinds + k]: the consolidation limit MAX_A,R */
	double *rate;        /* [m]: the configured rate (requests/s), 0 when none */
	struct hist *hist;   /* [m * nkinds + k] */
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
#define U (&c->policy.u.urgency)
	for (int i = 0; i < U->nover; i++) {
		bool found = false;
		for (int m = 0; m < c->nmodels && !found; m++)
			found = model_name(c, m) && !strcmp(model_name(c, m), U->over[i].model);
		if (!found) {
			snprintf(err, errlen, "max.%s: no model named '%s'", U->over[i].model, U->over[i].model);
			return -EINVAL;
		}
	}
	struct ustate *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	c->sched_state = st;
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
		int lim = U->max;
		const char *name = model_name(c, m);
		for (int i = 0; name && i < U->nover; i++)
			if (!strcmp(name, U->over[i].model))
				lim = U->over[i].value;
		for (int k = 0; k < c->nkinds; k++) {
			int maxb = sym_core_max_batch(c, m, k);
			st->limit[m * c->nkinds + k] = lim > 0 && lim < maxb ? lim : maxb;
		}
		st->rate[m] = c->shards[m].lambda; /* the configured rate, before any arrival */
	}
#undef U
	return 0;
}

/* ---- estimates ---- */

static void observe(struct ustate *st, const struct sym_core *c, int m, int k, int b, sym_time took)
{
	struct hist *h = &st->hist[m * c->nkinds + k];
	h->x[h->pos] = b;
	h->y[h->pos] = sym_to_ms(took);
	h->pos = (h->pos + 1) % HIST_CAP;
	if (h->n < HIST_CAP)
		h->n++;
	if (h->n < c->policy.u.urgency.min_samples)
		return;
	bool distinct = false;
	for (int i = 1; i < h->n && !distinct; i++)
		distinct = h->x[i] != h->x[0];
	if (!distinct)
		return; /* keep the previous fit, if any */
	double c0, c1, cov00, cov01, cov11, sumsq;
	gsl_fit_linear(h->x, 1, h->y, 1, (size_t)h->n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
	if (isfinite(c0) && isfinite(c1)) {
		h->c0 = c0;
		h->c1 = c1;
		h->fitted = true;
	}
}

/* Estimated response time (ms) of a batch of b (<= the kind's largest) of
 * model m dispatched now on kind k. */
static double est_ms(const struct ustate *st, const struct sym_core *c, int m, int k, int b)
{
	const struct sym_shard *s = &c->shards[m];
	const struct hist *h = &st->hist[m * c->nkinds + k];
	if (!h->fitted)
		return sym_to_ms(s->lek[k][b]);
	double l = h->c0 + h->c1 * b;
	return sym_to_ms(s->lek[k][b] - s->prof_k[k]->lat[b]) + (l > 0 ? l : 0);
}

static double expected(const struct ustate *st, const struct sym_core *c, int m)
{
	double rate = st->rate[m] > 0 ? st->rate[m] : c->shards[m].lambda;
	double e = rate * sym_to_s(c->shards[m].slo);
	return e > EXPECTED_FLOOR ? e : EXPECTED_FLOOR;
}

/* The application urgency (a monotone image of it for exp; see the top). */
static double urgency(const struct sym_policy *p, double slack, double load)
{
	double u;
	switch (p->u.urgency.shape) {
	case SYM_URGENCY_EXP:
		return -slack + log2(load);
	case SYM_URGENCY_LINEAR:
		u = -slack;
		break;
	default:
		u = p->u.urgency.p == 3 ? -(slack * slack * slack) : -copysign(pow(fabs(slack), p->u.urgency.p), slack);
		break;
	}
	return u >= 0 || !p->u.urgency.monotone ? u * load : u / load;
}

/* ---- scheduling ---- */

static int lowest_free(const struct sym_core *c, int k)
{
	for (int g = 0; g < c->ngpus; g++)
		if (!c->gpus[g].busy && c->gpus[g].kind == k)
			return g;
	return -1;
}

static void schedule(struct sym_core *c, sym_time now)
{
	struct ustate *st = c->sched_state;
	const int nk = c->nkinds;
	while (c->nfree > 0) {
		int best = -1, best_k = -1;
		double best_u = -INFINITY;
		sym_time best_dl = 0;
		for (int m = 0; m < c->nmodels; m++) {
			size_t n = sym_core_expire(c, m, now);
			if (!n)
				continue;
			sym_time dl = sym_queue_at(&c->shards[m].queue, 0)->deadline;
			double to_dl = sym_to_ms(dl - now);
			double load = (double)n / expected(st, c, m);
			double umax = -INFINITY, umin = INFINITY;
			int kmin = -1;
			for (int k = 0; k < nk; k++) {
				if (!c->nfree_kind[k])
					continue;
				int b = st->limit[m * nk + k];
				if ((size_t)b > n)
					b = (int)n;
				double u = urgency(&c->policy, to_dl - est_ms(st, c, m, k, b), load);
				if (u > umax)
					umax = u;
				if (kmin < 0 || u < umin || (u == umin && c->kinds[kmin].cpu && !c->kinds[k].cpu)) {
					umin = u;
					kmin = k;
				}
			}
			if (best < 0 || umax > best_u || (umax == best_u && dl < best_dl)) {
				best = m;
				best_k = kmin;
				best_u = umax;
				best_dl = dl;
			}
		}
		if (best < 0)
			return;
		int g = lowest_free(c, best_k);
		size_t n = sym_queue_len(&c->shards[best].queue);
		int b = st->limit[best * nk + best_k];
		if ((size_t)b > n)
			b = (int)n;
		sym_core_dispatch_queue(c, best, g, b, now);
		st->run[g] = (struct running){ .model = best, .size = b, .start = c->gpus[g].start };
	}
}

static void poke(struct sym_core *c, int m, sym_time now)
{
	(void)m;
	if (c->nfree > 0)
		schedule(c, now);
}

static void gpu_free(struct sym_core *c, int g, sym_time now)
{
	struct ustate *st = c->sched_state;
	struct running *r = &st->run[g];
	int k = c->gpus[g].kind;
	if (r->size > 0 && now >= r->start)
		observe(st, c, r->model, k, r->size, now - r->start);
	r->size = 0;
	schedule(c, now);
}

static void timer(struct sym_core *c, int id, sym_time now)
{
	(void)id; /* no timers are set; acting is harmless */
	schedule(c, now);
}

static const struct sym_sched_ops ops = {
	.init = init,
	.finish = finish,
	.arrive = NULL,
	.poke = poke,
	.gpu_free = gpu_free,
	.timer = timer,
	.held = NULL,
};

const struct sym_policy_ops sym_policy_urgency = {
	.name = NAME,
	.summary = "slack-based: the application with the highest load-weighted urgency -slack^p goes to the free "
		   "resource where it is least urgent",
	.params_help = "shape=power|linear|exp (default power), p=X: power (default 3), load=product|monotone: U*L as published (default) or U/L for U < 0, max=N: consolidation limit "
		       "(default: the model's largest batch), max.MODEL=N: per model, min_samples=N: history "
		       "samples before the fitted latency replaces the profile (default 16)",
	.parse = parse,
	.format = format,
	.exec = NULL,
	.sched = &ops,
};
