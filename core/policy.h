/* core/policy.h - scheduling policies as their users see them: a policy is
 * a value (struct sym_policy) parsed from its spec and written back in
 * canonical form.
 *
 * Every compared system is a policy of the same core, so that comparisons
 * run on the same workload, the same emulated cluster and the same metrics.
 * A spec is NAME or NAME:key=value,key=value (some policies also take a
 * bare value, as timeout:30% does, or a preset word, as clockwork:legacy).
 * Each policy declares its parameters in a table (core/policy_api.h, for
 * policy authors), from which parsing, validation, the canonical text and
 * the help are generated; this header is what drivers, the experiment layer
 * and the command line use: parse, format, compare, read a parameter, list.
 */
#ifndef SYM_POLICY_H
#define SYM_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "core/time.h"

/* A policy's definition (core/policy_api.h). */
struct sym_policy_ops;

/* Room for a policy's parameter struct (the largest, urgency's, holds its
 * per-model overrides). */
#define SYM_POLICY_PARAMS_SIZE 1152

/* A parsed policy: a value type, copied freely. Its parameters are the
 * policy's own struct, kept here as bytes (only the policy reads them; others
 * use sym_policy_param_num and sym_policy_param_text). */
struct sym_policy {
	const struct sym_policy_ops *ops;
	union {
		max_align_t align;
		unsigned char bytes[SYM_POLICY_PARAMS_SIZE];
	} params;
};

/* Parses "NAME" or "NAME:PARAMS". Returns 0, -ENOENT for an unknown name or
 * -EINVAL for bad parameters, with a message naming what was wrong (the
 * policy, the key and what it accepts) in err. */
int sym_policy_parse(const char *spec, struct sym_policy *out, char *err, size_t errlen);

/* Canonical text of a parsed policy: the name, then the parameters that
 * differ from the defaults (or from a preset, when that is shorter), in the
 * order the policy declares them. Parsing it gives an equal policy. Returns
 * buf. */
char *sym_policy_format(const struct sym_policy *p, char *buf, size_t len);

/* Same policy, same parameter values. */
bool sym_policy_equal(const struct sym_policy *a, const struct sym_policy *b);

const char *sym_policy_name(const struct sym_policy *p);

/* A scheduler policy (clockwork, shepherd, nexus, urgency, fcfs, edf) sees
 * every event and runs on one thread; a candidate policy (symphony, eager,
 * timeout, betalambda) only chooses when a candidate may go, and the
 * runtime may split it over threads. */
bool sym_policy_is_scheduler(const struct sym_policy *p);

/* What a candidate policy asks of the core's look-ahead (core/ranker.h,
 * core/models.h). */
struct sym_lookahead {
	bool plan;             /* the rankers plan every candidate on the GPUs' free times and pull a
				* deferred one earlier when its batch would collide (PULL caps) */
	double margin;         /* plan: batch lengths kept free between batches planned on one GPU */
	double replan;         /* plan: made again at most once per this many of the shortest batch it
				* planned (0: after every change) */
	bool idle;             /* plan: while every candidate has an idle GPU of its own, a deferred one
				* goes at once (low-load latency instead of larger batches) */
	bool wait;             /* measure the wait from due to granted, per kind (the view's wait) */
	double wait_quantile;  /* its quantile, in (0, 1) */
};

/* The look-ahead p asks for (all off for policies that ask none). */
void sym_policy_lookahead(const struct sym_policy *p, struct sym_lookahead *out);

/* One parameter's value by key ("lambda", or "max.MODEL" for a per-model
 * override): a number or integer as is, a bool as 0 or 1, an enumeration as
 * its value. Returns 0, or -ENOENT (no such parameter, or no override for
 * that model). */
int sym_policy_param_num(const struct sym_policy *p, const char *key, double *out);

/* The same as canonical text ("latest", "off", "30%"). Returns 0 or -ENOENT. */
int sym_policy_param_text(const struct sym_policy *p, const char *key, char *buf, size_t len);

/* ---- the registry ---- */

/* The registered policies: the built-in ones in a fixed order, then those
 * added with sym_policy_register (core/policy_api.h). */
const struct sym_policy_ops *const *sym_policy_list(size_t *n);

/* The policy named name, or NULL. */
const struct sym_policy_ops *sym_policy_find(const char *name);

const char *sym_policy_ops_name(const struct sym_policy_ops *ops);
const char *sym_policy_ops_summary(const struct sym_policy_ops *ops);

/* Help line i (0, 1, ...) on ops's parameters, generated from its table
 * ("lambda=X  ...(>= 1, default 3)"). Returns false, writing nothing, past
 * the last. */
bool sym_policy_help_line(const struct sym_policy_ops *ops, size_t i, char *buf, size_t len);

/* ---- strict parsing helpers (also used for other options) ---- */

/* The whole text, finite, in [lo, hi]. Return 0 or -EINVAL (no message). */
int sym_policy_num(const char *text, double lo, double hi, double *out);
int sym_policy_int(const char *text, long lo, long hi, int *out);

/* Shortest decimal text that reads back to exactly x. */
char *sym_policy_fmt_num(double x, char *buf, size_t len);

#endif
