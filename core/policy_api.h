/* core/policy_api.h - what a policy author needs: a policy's definition
 * (struct sym_policy_ops), its parameter table, and for scheduler policies
 * the core's state and services. Drivers use core/core.h and core/policy.h
 * and never include this header (tests/check_layers.py enforces it).
 *
 * A policy comes in one of two shapes:
 *
 *   - A *candidate* policy (symphony, eager, timeout, betalambda) sets `exec`
 *     and leaves `sched` NULL. The core's shared machinery (model shards with
 *     their candidate batch, and the ranker) runs it; the policy only decides
 *     *when* the candidate may take a GPU: given the batch the shard gathered
 *     (its size B, its earliest deadline d, the effective latency table) it
 *     returns `exec`, the earliest moment the candidate may be dispatched.
 *   - A *scheduler* policy (clockwork, shepherd, nexus, urgency, fcfs, edf)
 *     sets `sched` (struct sym_sched_ops below): it receives every event
 *     (arrival, GPU free, its own timers) and acts through the core's
 *     services (dispatch, drop, cancel, timers). It may use the shards'
 *     queues or keep its own.
 *
 * Adding a policy is one file in core/policies/ defining a `const struct
 * sym_policy_ops` (with its parameter table and its own parameter struct,
 * SYM_POLICY_PARAMS), plus a line in the registry of core/policy.c (or a
 * sym_policy_register call): no core header changes.
 *
 * Times in the view are *dispatch-decision* times: a batch of b dispatched at
 * t starts executing at t + ctrl + data*b and its response is back at
 * t + le(b), where le(b) = l(b) + ctrl + data*b + resp (see core/shard.h).
 */
#ifndef SYM_POLICY_API_H
#define SYM_POLICY_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/core.h"
#include "core/policy.h"
#include "core/request.h"
#include "core/shard.h"

/* ---- candidate policies ---- */

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
	double cv;             /* the coefficient of variation of the model's inter-arrival gaps (1:
				* Poisson, also until enough arrivals were seen), as of the last
				* rate window (core/shard.h) */
	int target;            /* the batch the model's measured load can sustain staggered (the
				* early-drop target, core/shard.h) */
	double spread;         /* GPUs the model's measured load keeps busy at its largest batch that
				* fills and finishes within its SLO (sym_shard_spread) */
	sym_time wait_safe;    /* the same with a head lost while waiting counted as longer than any */
	sym_time wait;         /* look-ahead with a measured wait: the high quantile of the time a
				* candidate of this kind waits from due to granted (0 otherwise) */
};


/* ---- parameters ----
 *
 * A policy keeps its parameters in a struct of its own, stored in struct
 * sym_policy's bytes; SYM_POLICY_PARAMS(type, getter) checks that it fits
 * and defines `type getter(const struct sym_policy *)`, a copy of them. The
 * table (struct sym_param, one entry per key, ended by an entry with a NULL
 * key) says where each lives and what it accepts. From it the core parses
 * specs (defaults first, then the items in order; a later item overrides an
 * earlier one), refuses bad values with a message naming the policy, the key
 * and the accepted range, writes the canonical text (the parameters that
 * differ from the defaults, in table order) and the help. */

enum sym_param_type {
	SYM_PARAM_NUM,       /* double, in [lo, hi] ((lo, hi] with lo_open) */
	SYM_PARAM_INT,       /* int, in lo..hi */
	SYM_PARAM_BOOL,      /* bool: true, false, 1 or 0 */
	SYM_PARAM_ENUM,      /* int: one of words' values */
	SYM_PARAM_PER_MODEL, /* struct sym_policy_overrides: KEY.MODEL=N, N an integer in lo..hi */
};

/* A word and the value it stands for. */
struct sym_param_word {
	const char *word;
	int value;
};

/* Where a bare value (NAME:VALUE) goes. */
enum sym_param_bare {
	SYM_PARAM_KEYED,   /* only key=value */
	SYM_PARAM_BARE_OK, /* a bare value sets it too; written key=value */
	SYM_PARAM_BARE,    /* a bare value sets it, and it is written bare (timeout:30%) */
};

/* Per-model overrides (urgency's max.MODEL=N). */
#define SYM_POLICY_MAX_OVERRIDES 16
#define SYM_POLICY_MODEL_NAME 64

struct sym_policy_override {
	char model[SYM_POLICY_MODEL_NAME];
	int value;
};

struct sym_policy_overrides {
	int n;
	struct sym_policy_override v[SYM_POLICY_MAX_OVERRIDES];
};

struct sym_param {
	const char *key;
	enum sym_param_type type;
	size_t offset;         /* of its field in the policy's parameter struct */
	double lo, hi;         /* NUM, INT, PER_MODEL: the accepted range (hi may be INFINITY) */
	bool lo_open;          /* NUM: lo itself is refused */
	double def;            /* the default (BOOL: 0 or 1; ENUM: a value); may lie outside the range
				* to mean "automatic" (def_text says what) */
	const char *def_text;  /* help: the default in words, or NULL: def */
	/* ENUM: the words (several may stand for one value: the first is
	 * written); NUM: words for special values (reject=off is -1). Ended by
	 * a NULL word. */
	const struct sym_param_word *words;
	const char *unit;      /* NUM: "ms" or "s", or NULL for a plain number */
	const char *meta;      /* help: the value's placeholder (NULL: N, MS, S or X by type and unit) */
	bool percent;          /* NUM: a value may also be a percentage of the SLO ("30%", up to
				* pct_hi); the bool at pct_offset says which it is */
	size_t pct_offset;
	double pct_hi;
	enum sym_param_bare bare;
	bool required;         /* no default: the spec must give it */
	bool alias;            /* another spelling of the parameter before it (the same field):
				* parsed, never written or compared */
	const char *help;
};

/* A preset: a bare word that sets several parameters (clockwork:legacy).
 * The canonical text starts from the preset when that is shorter. */
struct sym_policy_preset {
	const char *word;
	const char *spec;      /* key=value,... */
	const char *help;
};

/* Declares type as a policy's parameter struct: it must fit struct
 * sym_policy; getter(p) returns a copy of p's. */
#define SYM_POLICY_PARAMS(type, getter)                                                                    \
	_Static_assert(sizeof(type) <= SYM_POLICY_PARAMS_SIZE, #type " does not fit SYM_POLICY_PARAMS_SIZE"); \
	_Static_assert(_Alignof(type) <= _Alignof(max_align_t), #type " is over-aligned");                    \
	static inline type getter(const struct sym_policy *p)                                                 \
	{                                                                                                     \
		type x;                                                                                       \
		memcpy(&x, p->params.bytes, sizeof(x));                                                       \
		return x;                                                                                     \
	}

struct sym_sched_ops;

struct sym_policy_ops {
	const char *name;
	const char *summary;                      /* one line for `symphony policies` */
	const struct sym_param *params;           /* the table, or NULL: no parameters */
	const struct sym_policy_preset *presets;  /* ended by a NULL word, or NULL */
	size_t params_size;                       /* sizeof the parameter struct (0: none) */
	/* Checks between parameters after parsing (NULL: none): 0, or -EINVAL
	 * with a message in err (the caller names the policy). */
	int (*check)(const struct sym_policy *p, char *err, size_t errlen);
	/* Candidate policies: the earliest moment the candidate may be
	 * dispatched (anything <= now means "now"). Pure: same view, same
	 * answer. NULL for scheduler policies. */
	sym_time (*exec)(const struct sym_policy *p, const struct sym_cand_view *v);
	/* Candidate policies: the look-ahead they ask for (NULL: none). */
	void (*lookahead)(const struct sym_policy *p, struct sym_lookahead *out);
	/* Scheduler policies: the event handlers. NULL for candidate policies. */
	const struct sym_sched_ops *sched;
};

/* Whether ops is a valid policy: a name (no ':' or ','), one shape, a sane
 * parameter table (known types, unique keys, fields inside params_size,
 * defaults in range or explained, presets that parse). Returns 0 or -EINVAL
 * with a message. */
int sym_policy_validate(const struct sym_policy_ops *ops, char *err, size_t errlen);

/* Adds ops to the registry (after sym_policy_validate), after the built-in
 * policies; ops must outlive every use. Call it before threads use the
 * registry. Returns 0, -EINVAL, -EEXIST (the name is taken) or -ENOSPC. */
int sym_policy_register(const struct sym_policy_ops *ops, char *err, size_t errlen);

/* Splits the next "key=value" (or bare "value") off *params, which advances
 * past it and its comma. Returns 1 with key ("" for a bare value) and value
 * filled, 0 at the end, or -EINVAL (item too long, empty item or empty value)
 * with a message naming the policy in err. */
int sym_policy_kv_next(const struct sym_policy *p, const char **params, char *key, size_t keylen,
		       char *val, size_t vallen, char *err, size_t errlen);

/* ---- scheduler policies: the core's state ---- */

/* What the core remembers of each GPU. */
struct sym_gpu_state {
	int kind;
	bool busy;          /* nout > 0, or out of service */
	bool off;           /* out of service (sym_core_gpu_offline) */
	int nout;           /* batches outstanding: running, then planned */
	uint32_t epoch;
	sym_time free_at;   /* predicted: the planned finish of its last outstanding batch */
	int model;          /* of the last batch sent to it */
	int size;
	sym_time start;     /* its planned start */
	sym_time finish;    /* its planned finish */
	struct sym_batch_end last_end; /* the last batch end reported (read it when reacting to SYM_SCHED_GPU_FREE) */
	struct sym_request **reqs; /* the running batch, only with sym_core_track_running */
};

/* The core as a scheduler policy reads it (read-only but for sched_state;
 * the core's own books live behind it, in core/core.c). */
struct sym_core {
	int nmodels;
	int ngpus;
	int nkinds;
	struct sym_shard *shards;      /* per model: queue, latency tables, rate */
	struct sym_gpu_state *gpus;
	int nfree;                     /* idle devices in service */
	int maxb;                      /* the largest batch over models and kinds */
	int max_outstanding;           /* batches a GPU may have outstanding: 1 + the plans it may hold ahead */
	void *sched_state;             /* the policy's own */
	struct sym_policy policy;
	int nfree_kind[SYM_MAX_KINDS]; /* idle devices per kind */
	struct sym_kind kinds[SYM_MAX_KINDS];
};

/* What a scheduler policy reacts to (with the id of the model, GPU or timer). */
enum sym_sched_event {
	SYM_SCHED_ARRIVED,  /* model id's shard queue grew (the core's default arrive) */
	SYM_SCHED_GPU_FREE, /* GPU id's oldest outstanding batch ended (c->gpus[id].last_end says how;
			     * c->gpus[id].nout batches are still outstanding), or it came back online idle */
	SYM_SCHED_TIMER,    /* timer id fired (set with sym_core_timer_set) */
};

/* A scheduler policy's handlers run inside the core's entry points. Handlers
 * must leave no GPU idle that their policy would use (there is no later
 * chance unless they set a timer). */
struct sym_sched_ops {
	/* Sets up c->sched_state (NULL: a policy with no state of its own). The
	 * shards (queues, le tables, drop rule) and GPU states exist already.
	 * Returns 0, or -EINVAL/-ENOMEM with a message in err. */
	int (*init)(struct sym_core *c, char *err, size_t errlen);
	void (*finish)(struct sym_core *c); /* NULL when init keeps no state */
	/* A request arrived. NULL: the core queues it in its model's shard and
	 * reacts with SYM_SCHED_ARRIVED. Returns 0 or -ENOMEM (the request is
	 * then not held). */
	int (*arrive)(struct sym_core *c, struct sym_request *r, sym_time now);
	/* Something happened at now (ev, to model, GPU or timer id). Most
	 * policies do the same whatever it was (use the free devices now) and
	 * look at ev only where they must. */
	void (*react)(struct sym_core *c, enum sym_sched_event ev, int id, sym_time now);
	/* Requests the policy holds outside the shard queues (NULL: none). */
	uint64_t (*held)(const struct sym_core *c);
};

/* ---- scheduler policies: the core's services ---- */

/* Timers: ids 0..n-1, at most one pending time each. init may resize
 * (default n = nmodels). Returns 0 or -ENOMEM. */
int sym_core_timers_reserve(struct sym_core *c, int n);
void sym_core_timer_set(struct sym_core *c, int id, sym_time t);
void sym_core_timer_clear(struct sym_core *c, int id);

/* Keep the request pointers of every running batch (needed to cancel).
 * Returns 0 or -ENOMEM. */
int sym_core_track_running(struct sym_core *c);

/* Whether the driver can cancel running batches (its sink has cancel). */
bool sym_core_can_cancel(const struct sym_core *c);

/* Dispatches reqs[0..size) of model m on free GPU g at now (0 < size <=
 * the model's largest batch on g's kind; every request must be model m's and
 * no longer in any queue), to start at now + ctrl + data*size. Marks g busy
 * and calls the sink. */
void sym_core_dispatch(struct sym_core *c, int m, int g, struct sym_request **reqs, int size, sym_time now);

/* The same on GPU g, idle or not (fewer than c->max_outstanding batches
 * outstanding there): the batch is planned to start at
 * `start` (at least now + ctrl + data*size and at least g's predicted free
 * time free_at; it is raised to both) and the driver rejects it if it
 * cannot start by reject_after (SYM_TIME_NEVER: never). Returns its planned
 * start. */
sym_time sym_core_dispatch_ahead(struct sym_core *c, int m, int g, struct sym_request **reqs, int size, sym_time now,
				 sym_time start, sym_time reject_after);

/* Takes the first size requests of model m's shard queue and dispatches them
 * on g (the shard's dropped-since-batch counter goes with them). */
void sym_core_dispatch_queue(struct sym_core *c, int m, int g, int size, sym_time now);

/* Ends r with a drop (reason why). */
void sym_core_drop(struct sym_core *c, struct sym_request *r, enum sym_drop_reason why, sym_time now);

/* Cancels the batch running on busy GPU g (needs sym_core_track_running and
 * a sink with cancel): calls the sink, frees g, and writes the batch's
 * requests to out (room for the model's largest batch). Returns their count. */
int sym_core_cancel(struct sym_core *c, int g, sym_time now, struct sym_request **out);

/* Chooses what a free device of kind k runs at now: a model (its batch size
 * in *size, taken from the head of its shard queue), or -1 for nothing. */
typedef int (*sym_core_pick_fn)(struct sym_core *c, int k, sym_time now, int *size);

/* Work-conserving fill: offers each free device, in id order, to pick and
 * dispatches what it chooses. A kind that got nothing is not asked again in
 * the same pass; the pass repeats when a dispatch followed such a miss
 * (taking a batch moves a head to a later deadline, which may now fit that
 * kind). Then, while a device stays idle with requests queued, keeps timer
 * `timer_id` at the next head expiry (sym_core_next_expiry), else clears it. */
void sym_core_fill(struct sym_core *c, sym_core_pick_fn pick, int timer_id, sym_time now);

/* Drops model m's queue heads that cannot finish by their deadline even
 * alone on the fastest kind (now + le(1) > deadline; reason expired).
 * Returns the queue length after. */
size_t sym_core_expire(struct sym_core *c, int m, sym_time now);

/* After expiring every model's heads at now: the earliest moment one of the
 * heads will expire (deadline - le(1) + 1), or SYM_TIME_NEVER when every
 * queue is empty. A scheduler that leaves a device idle while requests wait
 * (none fits that device's kind) sets a timer there, so that the head is
 * dropped and the requests behind it get their chance. */
sym_time sym_core_next_expiry(struct sym_core *c, sym_time now);

#endif
