/* core/policy.h - scheduling policies.
 *
 * A policy decides *when* a model's candidate batch may go: given the batch
 * the shard gathered (its size B, its earliest deadline d, the effective
 * latency table) it returns `exec`, the earliest moment the candidate may take
 * a GPU. Everything else (gathering, matching, recomputation) is shared, so
 * every policy runs on the same machinery and the same metrics.
 *
 * Adding a policy is one file in core/policies/ defining a `const struct
 * sym_policy_ops` and one line in the registry in core/policy.c.
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
	int max_batch;         /* the model's largest batch */
	size_t queued;         /* requests in the model's queue (>= size) */
	const sym_time *le;    /* le[b] for b = 0..max_batch+1; le[max_batch+1] = SYM_TIME_NEVER */
	sym_time slo;          /* the model's SLO */
};

struct sym_policy;

struct sym_policy_ops {
	const char *name;
	const char *summary;     /* one line for `symphony help` */
	const char *params_help; /* the parameters, or NULL when there are none */
	/* Parses the text after "NAME:" (params is "" when there is none).
	 * Returns 0, or -EINVAL with a message in err. */
	int (*parse)(struct sym_policy *p, const char *params, char *err, size_t errlen);
	/* Writes the canonical spec ("timeout:30%") into buf. */
	void (*format)(const struct sym_policy *p, char *buf, size_t len);
	/* The earliest moment the candidate may be dispatched (>= v->now is not
	 * required: anything <= now means "now"). Pure: same view, same answer. */
	sym_time (*exec)(const struct sym_policy *p, const struct sym_cand_view *v);
};

struct sym_policy {
	const struct sym_policy_ops *ops;
	double param;      /* policy-specific number (timeout: K) */
	bool param_percent; /* param is a percentage of the SLO */
};

/* parse and format for a policy that takes no parameters. */
int sym_policy_parse_none(struct sym_policy *p, const char *params, char *err, size_t errlen);
void sym_policy_format_name(const struct sym_policy *p, char *buf, size_t len);

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

#endif
