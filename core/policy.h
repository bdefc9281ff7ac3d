/* core/policy.h - scheduling policies.
 *
 * Every compared system is a policy of the same core, so that comparisons
 * run on the same workload, the same emulated cluster and the same metrics.
 * A policy comes in one of two shapes:
 *
 *   - A *candidate* policy (symphony, eager, timeout, betalambda) sets `exec`
 *     and leaves `sched` NULL. The core's shared machinery (model shards with
 *     their candidate batch, and the ranker) runs it; the policy only decides
 *     *when* the candidate may take a GPU: given the batch the shard gathered
 *     (its size B, its earliest deadline d, the effective latency table) it
 *     returns `exec`, the earliest moment the candidate may be dispatched.
 *   - A *scheduler* policy (clockwork, shepherd, nexus, urgency, fcfs, edf)
 *     sets `sched` (see core/core.h, struct sym_sched_ops): it receives every
 *     event (arrival, GPU free, its own timers) and acts through the core's
 *     services (dispatch, drop, cancel, timers). It may use the shards' queues
 *     or keep its own.
 *
 * Adding a policy is one file in core/policies/ defining a `const struct
 * sym_policy_ops`, one line in the registry in core/policy.c, and (when it
 * has parameters) one member of the `u` union below.
 *
 * Parameters are written NAME:key=value,key=value (a policy may also accept
 * a bare value, as timeout:30% does). sym_policy_kv_next() splits them.
 *
 * Times in the view are *dispatch-decision* times: a batch of b dispatched at
 * t starts executing at t + ctrl + data*b and its response is back at
 * t + le(b), where le(b) = l(b) + ctrl + data*b + resp (see core/shard.h).
 */
#ifndef SYM_POLICY_H
#define SYM_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "core/time.h"

struct sym_cand_view {
	sym_time now;          /* current time */
	sym_time deadline;     /* d: the earliest deadline in the batch (the queue head) */
	sym_time head_arrival; /* arrival time of the queue head */
	int size;              /* B >= 1: the largest batch that can still meet d */
	int max_batch;         /* the model's largest batch (on this GPU kind) */
	size_t queued;         /* requests in the model's queue (>= size) */
	const sym_time *le;    /* le[b] for b = 0..max_batch+1; le[max_batch+1] = SYM_TIME_NEVER */
	sym_time slo;          /* the model's SLO */
	double lambda;         /* the model's measured arrival rate (requests/s), 0 when unknown */
	double beta_ms;        /* the profile's intercept beta (ms) on this kind */
};

struct sym_policy;
struct sym_sched_ops;

struct sym_policy_ops {
	const char *name;
	const char *summary;     /* one line for `symphony help` */
	const char *params_help; /* the parameters, or NULL when there are none */
	/* Parses the text after "NAME:" (params is "" when there is none) into
	 * p->u, starting from the defaults (parse is always called, with "" for
	 * none). Returns 0, or -EINVAL with a message in err. */
	int (*parse)(struct sym_policy *p, const char *params, char *err, size_t errlen);
	/* Writes the canonical spec ("timeout:30%") into buf; parsing it gives
	 * the same policy back. */
	void (*format)(const struct sym_policy *p, char *buf, size_t len);
	/* Candidate policies: the earliest moment the candidate may be
	 * dispatched (anything <= now means "now"). Pure: same view, same
	 * answer. NULL for scheduler policies. */
	sym_time (*exec)(const struct sym_policy *p, const struct sym_cand_view *v);
	/* Scheduler policies: the event handlers. NULL for candidate policies. */
	const struct sym_sched_ops *sched;
};

/* Per-model overrides a policy may carry (urgency's consolidation limit). */
#define SYM_POLICY_MAX_OVERRIDES 16

struct sym_policy_override {
	char model[64];
	int value;
};

struct sym_policy {
	const struct sym_policy_ops *ops;
	/* Parameters, by policy (a value type: policies are copied freely). */
	union {
		struct { double k; bool percent; } timeout;
		struct {
			int select;       /* SYM_CLOCKWORK_STRATEGY (published) or SYM_CLOCKWORK_LATEST */
			bool pow2;        /* batch sizes: powers of two (published) or every size */
			int max;          /* the largest batch size (published 16); 0: the model's largest */
			double ahead_ms;  /* schedule ahead (published 10); 0: idle GPUs only */
			double margin_ms; /* the internal deadline's buffer (published 5) */
			double reject_ms; /* latest start after the planned one (published 10); < 0: none */
			double future_ms; /* the earliest start assumed for a new action (published 1) */
			int window;       /* measured latencies per estimate (published 10); 0: the profile */
			double pct;       /* the estimate's percentile of them (published 99) */
		} clockwork;
		struct { double lambda; } shepherd;
		struct { int frontends; double epoch_s; bool lazy; bool spare_idle; } nexus;
		struct {
			int shape;        /* SYM_URGENCY_POWER, _LINEAR, _EXP */
			double p;         /* power */
			int max;          /* consolidation limit (0: the model's largest batch) */
			int nover;
			struct sym_policy_override over[SYM_POLICY_MAX_OVERRIDES];
			int min_samples;  /* history samples before the fit replaces the profile */
			bool monotone;    /* load=monotone: U/L when U < 0 (default: the product U*L) */
		} urgency;
		struct { double beta; } betalambda;
	} u;
};

enum { SYM_URGENCY_POWER, SYM_URGENCY_LINEAR, SYM_URGENCY_EXP };
enum { SYM_CLOCKWORK_STRATEGY, SYM_CLOCKWORK_LATEST };

/* parse and format for a policy that takes no parameters. */
int sym_policy_parse_none(struct sym_policy *p, const char *params, char *err, size_t errlen);
void sym_policy_format_name(const struct sym_policy *p, char *buf, size_t len);

/* Splits the next "key=value" (or bare "value") off *params, which advances
 * past it and its comma. Returns 1 with key ("" for a bare value) and value
 * filled, 0 at the end, or -EINVAL (item too long, empty item or empty value)
 * with a message naming the policy in err. */
int sym_policy_kv_next(const struct sym_policy *p, const char **params, char *key, size_t keylen,
		       char *val, size_t vallen, char *err, size_t errlen);

/* Strict number parsing for parameters: the whole text, finite, in
 * [lo, hi]. Return 0 or -EINVAL (no message). */
int sym_policy_num(const char *text, double lo, double hi, double *out);
int sym_policy_int(const char *text, long lo, long hi, int *out);

/* Shortest decimal text that reads back to exactly x. */
char *sym_policy_fmt_num(double x, char *buf, size_t len);

/* Parses "NAME" or "NAME:PARAMS". Returns 0, -ENOENT for an unknown name or
 * -EINVAL for bad parameters, with a message naming what was wrong in err. */
int sym_policy_parse(const char *spec, struct sym_policy *out, char *err, size_t errlen);

/* Canonical text of a parsed policy. Returns buf. */
char *sym_policy_format(const struct sym_policy *p, char *buf, size_t len);

/* The registered policies, in a fixed order. */
const struct sym_policy_ops *const *sym_policy_list(size_t *n);

extern const struct sym_policy_ops sym_policy_symphony;
extern const struct sym_policy_ops sym_policy_eager;
extern const struct sym_policy_ops sym_policy_timeout;
extern const struct sym_policy_ops sym_policy_betalambda;
extern const struct sym_policy_ops sym_policy_clockwork;
extern const struct sym_policy_ops sym_policy_shepherd;
extern const struct sym_policy_ops sym_policy_nexus;
extern const struct sym_policy_ops sym_policy_urgency;
extern const struct sym_policy_ops sym_policy_fcfs;
extern const struct sym_policy_ops sym_policy_edf;

#endif
