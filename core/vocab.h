/* core/vocab.h - the words the core and its drivers share: why a request
 * was dropped, how batches are gathered (the drop rule), the network delays
 * the core plans with, and what a model brings to the core's configuration.
 * Drivers read them through core/core.h; the shards that act on them are
 * core/shard.h's, which drivers never see. */
#ifndef SYM_VOCAB_H
#define SYM_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "core/profile.h"
#include "core/time.h"

enum sym_drop_reason {
	SYM_DROP_EXPIRED, /* could not finish by its deadline even alone */
	SYM_DROP_EARLY,   /* skipped by early drop to protect the batch size */
	SYM_DROP_REJECTED, /* its batch was rejected by the GPU's worker: it could not start by the
			    * latest start its scheduler gave it (clockwork) */
	SYM_DROP_NREASONS
};

const char *sym_drop_reason_name(enum sym_drop_reason why);

enum sym_gather_rule { SYM_GATHER_LAZY, SYM_GATHER_EARLY };

/* Default margin of the auto target, in standard deviations of the
 * gathering time (measured best; see docs/policies.md). */
#define SYM_TARGET_SIGMAS 3.0

struct sym_gather {
	enum sym_gather_rule rule;
	int target;    /* early drop target batch size; 0 = estimate from the rate */
	double sigmas; /* auto target: margin in standard deviations of the gathering time */
};

/* Parses "lazy", "early" (= "early:auto" = "early:auto:3"), "early:auto:K"
 * (K >= 0 standard deviations of margin; 0 is the plain staggered formula)
 * or "early:N" (a fixed target, N >= 1). */
int sym_gather_parse(const char *text, struct sym_gather *out);
char *sym_gather_format(const struct sym_gather *g, char *buf, size_t len);

struct sym_net {
	sym_time ctrl; /* control message, scheduler to backend */
	sym_time data; /* input transfer, per request of the batch */
	sym_time resp; /* response back to the client */
};

/* Rankers of one core: its GPU kinds times its parts (sub-clusters, core/parts.h). */
#define SYM_MAX_KINDS 32
/* GPU kinds in one cluster (see core/core.h). */
#define SYM_MAX_DEVICE_KINDS 8

/* The mask of kinds 0..n-1 (n <= SYM_MAX_KINDS). */
static inline uint32_t sym_kinds_all(int n)
{
	return n >= 32 ? UINT32_MAX : (1u << n) - 1;
}

/* What a model contributes to the core's configuration. */
struct sym_model_cfg {
	const struct sym_profile *profile; /* on kind 0; must outlive the core */
	sym_time slo;                      /* > 0 */
	double rate_hint;                  /* expected arrivals per second (>= 0), seeds the estimate */
	const char *name;                  /* for messages and per-model policy settings, or NULL */
	/* Profiles on kinds 1..SYM_MAX_KINDS-1 (entry 0 unused; NULL: same as
	 * profile). Must outlive the core. */
	const struct sym_profile *by_kind[SYM_MAX_KINDS];
	/* Bit k set: the model does not run on kind k (its GPUs do not hold it:
	 * a sub-cluster that is not the model's). At least one kind must stay;
	 * candidate policies only (scheduler policies refuse it). A core of
	 * parts (sym_core_cfg.nparts) sets it from `part`. */
	uint32_t kinds_off;
	/* The model's part (sub-cluster) in a core of parts: 0..nparts-1. */
	int part;
};

#endif
