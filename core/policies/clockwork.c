/* clockwork: centralized, work-conserving, deadline-driven batching (after
 * Clockwork, OSDI'20).
 *
 * For every model and every allowed batch size b (1..max batch, or only the
 * powers of two with pow2=1) there is a candidate: the b requests with the
 * earliest deadlines, which must start by its *latest executable moment*
 *
 *     latest(b) = d - le_k(b)        (d: the earliest deadline, the queue head)
 *
 * on a GPU of kind k. Whenever a GPU is free (it finished, or a request
 * arrived while it was idle) it runs, across all models, the candidate with
 * the earliest latest among those still feasible on its kind (latest >= now);
 * ties go to the lower model id. The candidates of the chosen model shared
 * its requests, so they are recomputed before the next decision. Clockwork
 * never waits for a batch to grow: an idle GPU takes whatever is feasible.
 *
 * What it reduces to. All candidates of a model share the head, so d is the
 * same for every size and latest(b) falls as b grows (le is non-decreasing).
 * The model's feasible candidate with the earliest latest is therefore its
 * largest feasible size, b* = the largest allowed b <= min(queued, max batch)
 * with le_k(b) <= d - now (among sizes with equal le the largest, which
 * starts at the same moment and serves more); with pow2 it is the largest
 * power of two <= b*, since every smaller size is feasible too. A decision
 * is then one binary search per model and a minimum over models: O(M log B).
 *
 * Kinds. A free GPU of kind k uses kind k's le table; a model whose head
 * cannot meet its deadline on kind k has no candidate there. Free GPUs are
 * filled in GPU id order (a request arriving while several GPUs are idle goes
 * to the lowest-numbered one whose kind can serve a candidate).
 *
 * Drops. A head that cannot finish even alone on the fastest kind
 * (now + le(1) > d) is dropped as expired whenever a decision looks at its
 * model, so an expired request never holds a batch back. While a GPU stays
 * idle with requests queued (they cannot meet their deadline on its kind)
 * one timer is held at the earliest moment a head expires, so nothing is
 * stranded.
 *
 * Parameters: pow2=1 (or true) restricts batch sizes to powers of two.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/policy.h"

#define TIMER 0 /* the one timer: the earliest expiry while a GPU idles */

static int parse(struct sym_policy *p, const char *params, char *err, size_t errlen)
{
	p->u.clockwork.pow2 = false;
	char key[32], val[64];
	int rc;
	while ((rc = sym_policy_kv_next(p, &params, key, sizeof(key), val, sizeof(val), err, errlen)) > 0) {
		if (!key[0]) {
			snprintf(err, errlen, "policy 'clockwork': parameter '%s' has no name (expected pow2=0|1)", val);
			return -EINVAL;
		}
		if (strcmp(key, "pow2")) {
			snprintf(err, errlen, "policy 'clockwork': unknown parameter '%s' (expected pow2=0|1)", key);
			return -EINVAL;
		}
		if (!strcmp(val, "1") || !strcmp(val, "true")) {
			p->u.clockwork.pow2 = true;
		} else if (!strcmp(val, "0") || !strcmp(val, "false")) {
			p->u.clockwork.pow2 = false;
		} else {
			snprintf(err, errlen, "policy 'clockwork': pow2 must be 0, 1, false or true (got '%s')", val);
			return -EINVAL;
		}
	}
	return rc;
}

static void format(const struct sym_policy *p, char *buf, size_t len)
{
	snprintf(buf, len, "%s", p->u.clockwork.pow2 ? "clockwork:pow2=1" : "clockwork");
}

static int floor_pow2(int b)
{
	int p = 1;
	while (p <= b / 2)
		p *= 2;
	return p;
}

/* The model whose candidate on kind k has the earliest latest executable
 * moment (ties: lower id), with its size in *size; -1 when none is feasible. */
static int pick(struct sym_core *c, int k, sym_time now, int *size)
{
	bool pow2 = c->policy.u.clockwork.pow2;
	int best = -1;
	sym_time best_latest = SYM_TIME_NEVER;
	for (int m = 0; m < c->nmodels; m++) {
		size_t n = sym_core_expire(c, m, now);
		if (!n)
			continue;
		const struct sym_shard *s = &c->shards[m];
		sym_time d = sym_queue_at(&s->queue, 0)->deadline;
		int b = sym_le_fit(s->lek[k], s->maxb_k[k], n, d - now);
		if (!b)
			continue;
		if (pow2)
			b = floor_pow2(b);
		sym_time latest = d - s->lek[k][b];
		if (best < 0 || latest < best_latest) {
			best = m;
			best_latest = latest;
			*size = b;
		}
	}
	return best;
}

/* Fills the free GPUs (see sym_core_fill). */
static void schedule(struct sym_core *c, sym_time now)
{
	sym_core_fill(c, pick, TIMER, now);
}

static void poke(struct sym_core *c, int m, sym_time now)
{
	(void)m;
	schedule(c, now);
}

static void gpu_free(struct sym_core *c, int g, sym_time now)
{
	(void)g;
	schedule(c, now);
}

static void timer(struct sym_core *c, int id, sym_time now)
{
	(void)id;
	schedule(c, now);
}

static const struct sym_sched_ops sched = {
	.init = NULL, /* no state of its own */
	.finish = NULL,
	.arrive = NULL,
	.poke = poke,
	.gpu_free = gpu_free,
	.timer = timer,
	.held = NULL,
};

const struct sym_policy_ops sym_policy_clockwork = {
	.name = "clockwork",
	.summary = "work-conserving: a free GPU runs the feasible candidate batch with the earliest latest start "
		   "(d - l(b)), over all models and sizes",
	.params_help = "pow2=0|1: only batch sizes that are powers of two (default 0)",
	.parse = parse,
	.format = format,
	.exec = NULL,
	.sched = &sched,
};
