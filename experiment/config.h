/* experiment/config.h - an experiment: cluster, models, workload, policy, network,
 * duration, warm-up and seed.
 *
 * An experiment comes from defaults, then a JSON file, then command-line
 * flags, each overriding the one before; every key can be given either way
 * (see `symphony help config`). Each value is checked when it is set, and the
 * error names where it came from ("exp.json: key 'rate'" or "option --rate")
 * and what was expected. sym_experiment_resolve() then loads the zoo, picks
 * the models and builds their profiles; the resolved experiment is
 * self-contained and sym_experiment_to_json() writes it back as a config that
 * reproduces the run with no zoo file at all.
 */
#ifndef SYM_CONFIG_H
#define SYM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "control/scale.h"
#include "core/core.h"
#include "core/policy.h"
#include "core/profile.h"
#include "core/query.h"
#include "core/vocab.h"
#include "profiles/zoo.h"
#include "workloads/workload.h"

/* How a run is judged against max_bad_rate (experiment/result.h, sym_judge). */
enum sym_criterion {
	SYM_CRITERION_PER_MODEL, /* every model's bad fraction within max_bad_rate (the papers' goodput; default) */
	SYM_CRITERION_AGGREGATE, /* the bad fraction of all requests together (for comparison) */
};

/* One group of identical devices in a heterogeneous cluster. */
struct sym_gpu_group {
	char kind[32];     /* its name: a built-in zoo (a100, gtx1080ti), cpu, or any name */
	int count;         /* >= 1 */
	char zoo[512];     /* profiles from this zoo (by model name), or "" */
	double scale;      /* > 0: profiles = the base profiles with latencies times scale; 0: unset */
	double memory_mb;  /* per device; 0: the kind's known value or unknown */
	int cpu;           /* 1 CPU, 0 GPU, -1: from the name (kind "cpu" is a CPU) */
};

/* Sub-clusters (symphony-centralized-orchestration.md, Section 4.7 and
 * Appendix A): the models split into parts, each served by its own GPUs
 * (which hold all of its models) and its own ranker. */
struct sym_partition_cfg {
	int subclusters;     /* 0: none (every GPU holds every model) */
	double r_max;        /* a sub-cluster's largest rate (requests/s; 0: no limit) */
	double s_max;        /* its largest memory need (MB; 0: the smallest memory_mb of the kinds) */
	double w;            /* the MILP's weight of memory balance (0: R/S) */
	double time_limit_s; /* the solver's (default 10) */
	double epoch_s;      /* the simulator re-partitions every epoch_s from the measured rates (default 300;
			      * 0: never) */
	double phase_s;      /* epochs come at phase_s + k epoch_s, k >= 1 (0 <= phase_s < epoch_s, default 0: the
			      * first epoch is phase_s longer; to replay a running cluster's epochs, whose
			      * timer started before the load) */
	double c_max;        /* an epoch's change bound: MB of model files loaded or unloaded (< 0: none, default) */
	double noise_sigmas; /* an epoch changes the assignment only when the search's gain at the measured rates
			      * exceeds this many standard deviations of their counting noise, sqrt(R / T), and
			      * its GPUs only when the busiest part's gain does (default 2; 0: on any gain, as
			      * published) */
	double load_mbps;    /* host-to-GPU bandwidth a model loads at (MB/s, default 12000) */
	double load_ms;      /* plus this per model loaded (default 10) */
	int *assign;         /* nassign sub-clusters, one per model, or NULL: solved when a run starts */
	size_t nassign;
};

/* The simulated autoscaler (both Symphony papers' closed loop): every
 * interval_s it reads the interval's signals and adds or releases GPUs. */
struct sym_autoscale_cfg {
	bool on;
	double interval_s;  /* decisions this far apart (default 30) */
	double threshold;   /* papers: the bad rate above which to add (default: advice_threshold) */
	double provision_s; /* an added GPU serves this long after the decision, plus its models' loading (default 60) */
	int min_gpus;       /* default 1 */
	int max_gpus;       /* default: gpus (the pool the simulator holds) */
	int start_gpus;     /* in service at the start (default: max_gpus) */
	double cooldown_s;  /* no action sooner than this after the last (default: interval_s) */
	enum sym_scale_rule policy; /* papers (default): add N r/(1-r) above the threshold, release N f;
					   * target: Kubernetes HPA's rule on the busy fraction */
	double target;      /* target: the busy fraction aimed at (default 0.7; HPA's tolerance 0.1) */
	double release_fraction; /* papers: release this fraction of N f (default 1: as published; < 1 keeps headroom) */
	double phase_s;     /* the decisions come at phase_s + k interval_s, k >= 1 (0 <= phase_s < interval_s;
			     * default 0): where they fall against the load, which a running cluster does not
			     * choose (schedd's intervals start when it does) */
};

/* Complex queries (nexus.md, Sections 2 and 6.2): a query is a tree of
 * model invocations with one end-to-end SLO. Its arrivals are the root
 * stage's; a stage's requests arrive when its parent's response is back,
 * gamma of them per parent request (floor(gamma), plus one with probability
 * its fraction). Each stage's requests have the stage's deadline: the query's
 * arrival plus the budgets of the stages on its path, from the split. */
enum sym_split {
	SYM_SPLIT_NONE,  /* every stage's deadline is the query's (no analysis) */
	SYM_SPLIT_EVEN,  /* the SLO split evenly over the deepest path's stages */
	SYM_SPLIT_NEXUS, /* Nexus's query analysis (Section 6.2): the split that needs the fewest GPUs */
};

struct sym_query {
	char name[64];
	double slo_ms;
	double share;          /* of the total rate (normalised: the queries' shares sum to 1) */
	enum sym_split split;
	double eps_ms;         /* the split's grid (default slo_ms / 500) */
	double lat_factor;     /* a stage's batch fits its budget when lat_factor * l(b) <= budget: 1 ("budget":
				* "batch", default, as Nexus's Figure 4) or 2 ("session": a Nexus session's worst
				* case, Section 6.1) */
	int nstages;
	int *model;            /* stage -> model index */
	int *parent;           /* stage -> parent stage (-1: the root, stage 0) */
	double *gamma;         /* invocations per parent request (the root: 1) */
	double *mult;          /* requests per query: the product of the gammas on its path */
	double *deadline_ms;   /* from the query's arrival to the stage's deadline */
	struct sym_query_split *plan; /* the split at the query's rate (budget, batch, GPUs); with split none,
				       * every budget is the SLO */
	double plan_gpus;      /* the split's GPUs in all (fractional, kind 0's profiles) */
	double replan_s;       /* split nexus: re-plan every replan_s from the fan-outs measured meanwhile (0: the
				* split is fixed for the run) */
	/* a stage's fan-out over time: from gsteps[first[v] + i].t_s on, gsteps[...].gamma (ngsteps[v] steps,
	 * in time order; before the first, gamma[v]) */
	struct sym_gamma_step { double t_s, gamma; } *gsteps;
	int *gfirst, *ngsteps;
};

/* Query q's stage v's fan-out at simulated second t_s. */
double sym_query_gamma_at(const struct sym_query *q, int v, double t_s);

/* "none", "even" or "nexus". */
const char *sym_split_name(enum sym_split s);

struct sym_experiment {
	/* as configured */
	char zoo[512];
	cJSON *models_json;     /* "all", or an array of names and model objects */
	double slo_ms;          /* 0: each model's own SLO */
	bool slo_at_least;      /* slo_mode at-least: a model's SLO is max(slo_ms, its own) */
	int gpus;               /* total devices (the sum of the groups when a cluster is given) */
	int num_models;         /* > 0: cycle the model list to exactly this many models (copies NAME#2, ...) */
	double gpus_per_model;  /* > 0: gpus = round(gpus_per_model * number of models) at resolve */
	struct sym_gpu_group *groups; /* heterogeneous cluster, or NULL: `gpus` GPUs of the zoo's kind */
	size_t ngroups;
	double rate;            /* total offered requests/s (constant rate) */
	struct sym_arrival_spec arrival;
	struct sym_popularity popularity;
	struct sym_rate_segment *segments; /* total-rate schedule, or NULL */
	size_t nseg;
	char rate_csv[512];     /* per-model per-second rates, or "" */
	char arrival_trace[512]; /* a per-request arrival trace (workloads/workload.h, struct sym_trace), or "" */
	double rate_scale;      /* multiplies a rate schedule (segments, rate_csv, arrival_trace; default 1):
				 * the schedule scale the configuration runs at (sym_experiment_scale) */
	struct sym_policy policy;
	struct sym_gather gather;
	double ctrl_ms, data_ms, resp_ms;
	double done_ms;         /* a batch's completion reaches the scheduler this long after it ends: the GPU
				 * takes no new batch until then (default 0) */
	double tail_ms;         /* > 0: a batch's plan and inputs take Exp(mean tail_ms) to arrive; it starts
				 * at its planned start (ctrl + data*b after the decision) or then if later */
	bool send_ahead;        /* candidate policies: send a GPU's next plan before it frees (default true) */
	double jitter;          /* GPU time factor uniform in [1-jitter, 1+jitter] */
	double late_p50_ms, late_p99_ms; /* > 0: each batch begins this late past the moment it could (its
				 * planned start, or the end of the batch before it): lognormal with this median
				 * and 99th percentile, the start lateness a runtime backend measures (0, 0: on
				 * time) */
	double size_cv;         /* requests' data sizes: gamma, mean 1, this coefficient of variation, for
				 * models without their own size_cv (0: none) */
	double duration_s;      /* 0: from the schedule, else 30 */
	double warmup_s;
	uint64_t seed;
	double interval_s;      /* timeline and autoscaling interval (default 1) */
	double advice_threshold; /* bad rate above which the advice is to add GPUs (default 0.01) */
	double max_bad_rate;    /* goodput threshold */
	double tolerance;       /* goodput relative tolerance */
	enum sym_criterion criterion; /* how a rate is judged (default per-model) */
	bool memory_check;      /* refuse models that do not fit the GPUs' memory (default true) */
	struct sym_partition_cfg partition;
	struct sym_autoscale_cfg autoscale;
	int replications;       /* seeds seed, seed+1, ..., seed+replications-1 (goodput, plan, loadcurve, sweep;
				 * default 1) */
	cJSON *queries_json;    /* complex queries (an array), or NULL: requests are per model */
	cJSON *prefix_json;     /* prefix_models (nexus.md, Section 6.3: variants sharing all but their last
				 * layers), an array, or NULL */
	bool prefix_batching;   /* batch a prefix model's variants together through the prefix (default false) */
	bool models_given;      /* "models" was set (else, with prefix_models, only those are served) */
	bool rate_given;        /* "rate" was set: with per-model rates, it scales them to this total */
	char model_repository[512]; /* a model repository (experiment/repository.h) whose models join "models"
				     * (replacing the zoo's when "models" is not given), or "" */
	bool repo_unprofiled_ok; /* its models may lack a profile (a placeholder: `symphony profile` sets it) */
	int model_slots;         /* the runtime's spare model slots (runtime.repository_slots; not a key of
				  * its own): empty models after the others, filled by sym_experiment_fill_slot */
	/* resolved */
	bool resolved;
	size_t nmodels;
	size_t nlisted;          /* models before num_models repeated the list (<= nmodels) */
	size_t slot0;            /* the first spare slot: models slot0..nmodels-1 are model_slots' (nmodels
				  * when none); an empty one has the name "" */
	int slot_batch;          /* with slots: the largest batch a slot's model may form (the largest of the
				  * models served from the start, on any kind) */
	struct sym_model_spec *models;
	int nkinds;
	struct sym_kind kinds[SYM_MAX_DEVICE_KINDS];
	int *gpu_kind;           /* gpus entries */
	struct sym_profile *profiles; /* nkinds * nmodels, kind-major: profiles[k * nmodels + m] */
	double *model_slo_ms;
	double *shares;          /* popularity shares, sum 1 */
	struct sym_rate_table table; /* loaded rate_csv */
	int *table_col;          /* model -> column of table */
	const struct sym_trace *trace; /* loaded arrival_trace, read once and shared by copies (read-only) */
	struct sym_trace_share *trace_share; /* its holder (experiment/config.c) */
	int *trace_col;          /* model -> its requests in trace */
	int *pfx_n;              /* per model: with prefix batching, the variants it merges (0: a plain model) */
	double *pfx_sbeta_ms;    /* and each variant's suffix beta (ms), paid once per variant in a batch */
	size_t nqueries;         /* queries_json resolved (0: none) */
	struct sym_query *queries;
	int *query_of, *stage_of; /* with queries, per model: its query and stage (-1: in none, no arrivals) */
};

/* The unit of rates: "queries/s" with queries, else "req/s". */
const char *sym_rate_unit(const struct sym_experiment *e);

/* With queries, what a verdict's index names: query i's name; else model i's. */
const char *sym_unit_name(const struct sym_experiment *e, int i);

/* The memory model i needs on a GPU of kind k that holds it (static +
 * dynamic; 0 when unknown). */
double sym_experiment_model_memory(const struct sym_experiment *e, int k, size_t i);

/* The coefficient of variation of model i's request data sizes: its own
 * size_cv, else the experiment's (0: every request the mean size). */
double sym_experiment_size_cv(const struct sym_experiment *e, size_t i);

/* Checks memory (when memory_check is set and the kinds' memory is known):
 * every model fits a GPU of every kind alone, and every GPU's share of the
 * models fits it: all models without a partition, each sub-cluster's models
 * with assign (NULL: e->partition.assign). Returns 0 or -EINVAL with a
 * message naming the model or sub-cluster, the kind and what to change. */
int sym_experiment_check_memory(const struct sym_experiment *e, const int *assign, char *err, size_t errlen);

/* The fewest sub-clusters e's models fit in GPU memory (a first-fit
 * packing, largest dynamic memory first, on the kind that needs the most): 1
 * when they fit one GPU together, when memory is unknown or memory_check is
 * off; -1 when a model alone fits no GPU. */
int sym_experiment_min_subclusters(const struct sym_experiment *e);

/* Defaults: zoo a100, models "all", 8 GPUs, rate 1000, poisson, equal,
 * symphony, early drop (auto target), no network delays, no jitter, 30 s with 3 s warm-up,
 * seed 1, goodput at bad rate 1% per model with 0.5% tolerance, one replication.
 * Returns 0 or -ENOMEM. */
int sym_experiment_init(struct sym_experiment *e);
void sym_experiment_finish(struct sym_experiment *e);

/* Makes dst an independent deep copy of src (resolved again when src is).
 * dst needs no init; finish it whatever the result. Resolving is safe on
 * several threads at once (it serialises the zoo and CSV loading). Returns 0
 * or an error with a message. */
int sym_experiment_copy(struct sym_experiment *dst, const struct sym_experiment *src, char *err, size_t errlen);

/* "per-model" or "aggregate". */
const char *sym_criterion_name(enum sym_criterion c);

/* Applies a JSON config file ("-": standard input), or a result file: its
 * "config" object. Returns 0, or -EINVAL/-ENOENT/-EIO with a message in err. */
int sym_experiment_load_file(struct sym_experiment *e, const char *path, char *err, size_t errlen);

/* Reads and parses a JSON object from path ("-": standard input); NULL with
 * a message naming the file, and the error code in *rc (-ENOENT, -EISDIR,
 * -EINVAL for malformed JSON, ...), on error. */
cJSON *sym_experiment_read_json(const char *path, int *rc, char *err, size_t errlen);

/* The configuration in a parsed file: root, or a result file's "config". */
const cJSON *sym_experiment_config_of(const cJSON *root);

/* Applies sym_experiment_config_of(root); path names it in messages. */
int sym_experiment_load_json(struct sym_experiment *e, const cJSON *root, const char *path, char *err, size_t errlen);

/* Applies a JSON object's keys; origin names its source in messages. */
int sym_experiment_apply_json(struct sym_experiment *e, const cJSON *obj, const char *origin,
			      char *err, size_t errlen);

/* Applies one command-line flag (without the leading "--") and its value.
 * Returns 0, 1 when the flag is not a configuration flag, or -EINVAL. */
int sym_experiment_apply_flag(struct sym_experiment *e, const char *flag, const char *value,
			      char *err, size_t errlen);

/* Loads the zoo if needed, selects the models, builds their profiles, checks
 * that every SLO leaves room for a batch of 1 with the network delays, and
 * loads the rate table. Returns 0 or an error with a message. */
int sym_experiment_resolve(struct sym_experiment *e, char *err, size_t errlen);

/* Whether model m is an empty spare slot (model_slots): no name, no
 * requests, a placeholder profile (l(b) = b ms up to slot_batch). */
bool sym_experiment_slot_empty(const struct sym_experiment *e, size_t m);

/* Fills spare slot m (empty) with the model of `obj` (an experiment model
 * object: name, profile, max batch, SLO; experiment/repository.h reads one),
 * as resolving would have: its SLO, its profile on each kind, the memory
 * check. Its batches are capped at slot_batch (what the runtime's buffers
 * were sized for); *capped says whether they were. It gets no share of the
 * configured load. 0, or -EINVAL/-ENOMEM with a message, the slot left
 * empty. */
int sym_experiment_fill_slot(struct sym_experiment *e, size_t m, const cJSON *obj, bool *capped, char *err,
			     size_t errlen);

/* Empties spare slot m again (a fill that failed further on). */
void sym_experiment_clear_slot(struct sym_experiment *e, size_t m);

/* Model m's mean offered rate (req/s) at schedule scale 1: its share of the
 * constant rate (the scale *is* the rate then, so this is the share), of the
 * segments' time-weighted mean, or its rate-table column's mean. */
double sym_experiment_model_rate(const struct sym_experiment *e, size_t m);

/* The schedule scale the configuration itself runs at: its rate for a
 * constant rate, rate_scale for a schedule (segments, a rate table, an
 * arrival trace: they are in req/s at scale 1). */
double sym_experiment_scale(const struct sym_experiment *e);

/* Whether the load is a schedule (segments, rate_csv or arrival_trace), which
 * runs scale (the rate option) multiplies, rather than a constant rate. */
bool sym_experiment_has_schedule(const struct sym_experiment *e);

/* The schedule's name for messages: the rate table's or trace's file, or
 * "segments"; "" for a constant rate. */
const char *sym_experiment_schedule_name(const struct sym_experiment *e);

/* Model m's mean offered rate in req/s as configured: model_rate at the
 * configuration's own scale. */
double sym_experiment_model_rps(const struct sym_experiment *e, size_t m);

/* Model m's share of the total rate: its popularity share, or with queries,
 * its query's share times the requests per query its stage gets (a stage in
 * no query: 0). Unlike e->shares (arrivals: only the queries' roots arrive). */
double sym_experiment_share(const struct sym_experiment *e, size_t m);

/* Simulated length (s) and warm-up. */
double sym_experiment_duration(const struct sym_experiment *e);

/* The resolved experiment as a config object (models expanded). */
cJSON *sym_experiment_to_json(const struct sym_experiment *e);

/* A configuration key: its JSON key (dotted for nested objects:
 * "network.ctrl_ms"; NULL for --profile, which sets "models"), its
 * command-line flag (without "--"), the value's placeholder and its help. */
struct sym_flag_info {
	const char *key, *flag, *arg, *help;
};

/* The i-th configuration key, for help and the command line's parser; false
 * past the last. */
bool sym_experiment_flag_at(size_t i, struct sym_flag_info *out);

/* Initialises e->nmodels arrival generators, model m's as the simulator
 * draws them at total rate (or schedule scale) `rate`: the same seed gives
 * the same arrival times in `symphony sim` and in `symphony loadgen`.
 * Returns 0, -EINVAL or -ENOMEM. */
int sym_experiment_arrivals(const struct sym_experiment *e, double rate, struct sym_arrivals *arr);

#endif
