/* experiment/result.h - what one run of an experiment measured, judged and
 * written out: per-model counts and histograms, the timeline, the verdict
 * under the experiment's criterion, the result object (JSON), its table and
 * the timeline CSVs.
 *
 * Both drivers fill a sym_run_result: the simulator (sim/engine.h) from
 * virtual time, loadgen (runtime/) from the answers it received. Every JSON
 * result carries the program version, commit, the seed and the full resolved
 * configuration, so the run can be repeated from the file alone
 * (`symphony sim --config RESULT.json`).
 */
#ifndef SYM_RESULT_H
#define SYM_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "core/hist.h"
#include "core/vocab.h"
#include "experiment/config.h"

struct sym_model_result {
	uint64_t offered, served, late, dropped;
	uint64_t dropped_by[SYM_DROP_NREASONS];
	struct sym_hist latency;  /* arrival to response, served and late */
	struct sym_hist queueing; /* arrival to execution start */
	uint64_t batches;
	uint64_t batched;         /* requests in those batches */
	int max_batch;
	uint64_t *batch_counts;   /* [0..max_batch] */
};

/* A complex query's outcomes (experiment/config.h, struct sym_query): a
 * query is good when every stage request it made was served and its
 * response was back by the query's deadline; bad when some stage was dropped
 * (dropped) or else some response came after the deadline (late). Counted
 * for queries that arrived in [warmup, duration). */
struct sym_query_result {
	uint64_t offered, good, late, dropped;
	uint64_t stage_requests;  /* the stage requests the counted queries made, the root's included */
	struct sym_hist latency;  /* arrival to its last stage's response, queries with no stage dropped */
};

/* One interval of the timeline (interval_s long; the last may be cut short
 * by the end of arrivals). Requests count in the interval they arrived in. */
struct sym_timeline_row {
	uint64_t offered, good, bad;
	double busy_gpu_s;  /* GPU-seconds busy during this interval */
	double paid_gpu_s, serving_gpu_s; /* the autoscaler's: GPU-seconds paid for and in service (else 0) */
	uint32_t gpus_used; /* distinct GPUs busy at some moment of it */
};

struct sym_run_result {
	double rate;                   /* the configured total rate scale of the run */
	size_t nmodels;
	struct sym_model_result *models;
	struct sym_model_result total;
	double window_s;               /* measured window: duration - warmup */
	double gpu_busy_fraction;      /* busy GPU-time / (gpus * window) */
	int gpus_used;                 /* distinct GPUs that ran a batch in the window */
	uint64_t preemptions;          /* batches cancelled in the window (shepherd) */
	double preempted_gpu_seconds;  /* GPU time those batches had used, lost */
	uint64_t simulated_requests;   /* all arrivals, warm-up included */
	uint64_t events;
	double wall_seconds;
	bool stopped_early;            /* stop_after_bad or a stop_model_bad limit reached: counts cover only
					* part of the run */
	double interval_s;             /* timeline interval */
	size_t nintervals;             /* covering [0, duration) */
	struct sym_timeline_row *timeline;
	uint64_t *model_timeline;      /* with opts.model_timeline: per interval and model, offered,
					* good, bad: [(i * nmodels + m) * 3 + 0..2]; else NULL */
	/* epochs (re-partitioning with sub-clusters), else nepochs 0 */
	size_t nepochs;
	struct sym_epoch_result {
		double t_s;              /* when */
		bool repartitioned;      /* false: kept (moves of the last epoch still under way, or no better
					  * assignment within the limits) */
		int models_moved, stalled; /* moves; of them, those the target had no memory for until its own
					    * models left (their arrivals wait for the load) */
		int gpus_moved;
		double load_gpu_s;       /* GPU time spent loading models */
		uint64_t held;           /* requests that waited for a stalled move's load */
		uint64_t moved_requests; /* requests of moving models that arrived during their move */
		uint64_t moved_bad;      /* of them, those that ended late or dropped */
		double rate_imbalance, mem_imbalance; /* of the new assignment at the measured rates */
	} *epochs;
	/* the autoscaler (experiment autoscale.on), else as.on false */
	struct sym_autoscale_result {
		bool on;
		double gpu_hours;        /* GPUs provisioned (in service, coming up or draining) over the run */
		double mean_gpus;        /* gpu_hours over the run's length */
		int peak_gpus;
		int adds, releases;      /* actions */
		int gpus_added, gpus_released;
		size_t ndecisions;
		struct sym_as_decision {
			double t_s;
			int in_service, provisioned; /* when it decided */
			double busy_fraction, bad_rate; /* of the interval that ended then (requests that ended in it) */
			int delta;               /* GPUs added (> 0) or released (< 0) */
			double bad_rate_next;    /* of the interval after it (-1: none) */
		} *decisions;
		/* with sub-clusters (nparts > 1), per decision i and part j at [i * nparts + j]: the GPUs in
		 * service in the part when it decided, the part's change, and the signals it decided on
		 * (the part's busy fraction and bad rate over the interval) */
		int nparts;
		int *part_in_service, *part_delta;
		double *part_busy, *part_bad;
	} as;
	/* complex queries (e->nqueries of them), else nqueries 0 */
	size_t nqueries;
	struct sym_query_result *queries;
	/* the splits re-planned during the run (queries with replan_s) */
	size_t nreplans;
	struct sym_replan {
		double t_s;
		int query, nstages;
		double gamma[SYM_QUERY_MAX_STAGES];  /* the fan-outs measured since the last (the root: 1) */
		double budget_ms[SYM_QUERY_MAX_STAGES]; /* the new split */
	} *replans;
	/* sub-clusters (a partition), else nsub 0 */
	int nsub;
	int *model_part;               /* nmodels: each model's sub-cluster */
	int *sub_gpus;                 /* nsub: the GPUs each was given */
	int *sub_gpus_kind;            /* nsub x nkinds (several kinds only): sub_gpus by kind */
	double *sub_need;              /* nsub: the GPU time its models need (staggered estimate, GPUs) */
};

void sym_run_result_finish(struct sym_run_result *r);

/* Allocates r's per-model results and a timeline covering [0, end) in steps
 * of interval (for drivers that count their own runs: loadgen). Returns 0
 * or -ENOMEM (release with sym_run_result_finish either way). */
int sym_run_result_alloc(struct sym_run_result *r, const struct sym_experiment *e, sym_time end, sym_time interval);

static inline double sym_bad_rate(const struct sym_model_result *m)
{
	return m->offered ? (double)(m->late + m->dropped) / (double)m->offered : 0;
}

static inline double sym_query_bad_rate(const struct sym_query_result *q)
{
	return q->offered ? (double)(q->late + q->dropped) / (double)q->offered : 0;
}

/* The bad rate a run is judged by in aggregate: all queries' together with
 * queries, else all requests'. */
double sym_run_bad_rate(const struct sym_run_result *r);

/* The length (s) of timeline interval i: interval_s, except a last one cut
 * short by the end of arrivals. */
double sym_timeline_interval_len(const struct sym_run_result *r, double duration_s, size_t i);

/* The q-quantile of the batch-size distribution (0 when no batch). */
int sym_batch_quantile(const struct sym_model_result *m, double q);

/* A run judged under its experiment's criterion. With queries, the units
 * judged are the queries, not the models: worst, failing and few count
 * queries (name them with sym_unit_name). */
struct sym_verdict {
	bool ok;               /* the run passes */
	int worst;             /* the worst model: the failing model with the highest bad rate, else the model
				* with the highest bad rate (the first of equals); -1 when no model had a request */
	double worst_bad_rate; /* its bad rate (0 when worst is -1) */
	size_t failing;        /* models over their per-model allowance (counted under either criterion) */
	size_t few;            /* models with fewer than sym_min_requests() measured requests */
};

/* Whether a model with `offered` measured requests of which `bad` were late
 * or dropped is within its allowance (the per-model rule above). */
bool sym_model_within(uint64_t offered, uint64_t bad, double max_bad_rate);

/* The measured requests a model needs for max_bad_rate to be meaningful:
 * ceil(1 / max_bad_rate) (100 at 1%). */
uint64_t sym_min_requests(double max_bad_rate);

/* Judges r (complete, or stopped early: then it fails) under e's criterion. */
void sym_judge(const struct sym_experiment *e, const struct sym_run_result *r, struct sym_verdict *v);

/* The mean of x[0..n) in *mean and, for n >= 2, its 95% confidence interval
 * by Student's t, mean -/+ t(0.975, n-1) s / sqrt(n) (s: the sample standard
 * deviation), in *lo and *hi. Returns false for n < 2 (no interval; *lo = *hi
 * = the mean). */
bool sym_mean_ci95(const double *x, size_t n, double *mean, double *lo, double *hi);

/* Where a result comes from: {version, commit (the git commit, without
 * "-dirty"), modified (true when built from a tree with uncommitted changes;
 * null when the commit is unknown), build_type (meson's: release, debug,
 * ...), date (UTC, ISO 8601: when the command started, see
 * sym_provenance_begin; else now)}. with_date false leaves the date out, for
 * results that must not depend on when they ran (sweep lines). Every JSON
 * result carries it as "provenance", beside the older top-level "version"
 * and "commit". */
cJSON *sym_provenance_json(bool with_date);

/* Records now as the start of the command, the date of its results. */
void sym_provenance_begin(void);

/* A new result object with what every result begins with: program
 * ("symphony"), version, commit, provenance (dated) and command. */
cJSON *sym_result_head(const char *command);

/* The result object of one run (command: "sim", "goodput", ...), with
 * "replications": 1, the criterion and the run's verdict under it
 * (meets_criterion, worst_model, worst_model_bad_rate, failing_models,
 * few_request_models). */
cJSON *sym_result_json(const char *command, const struct sym_experiment *e, const struct sym_run_result *r);

/* [low, high], the 95% interval of the mean of x[0..n), or null for n < 2. */
cJSON *sym_ci95_json(const double *x, size_t n);

/* An interval computed elsewhere as JSON: [lo, hi], or null without one. */
cJSON *sym_interval_json(bool have, double lo, double hi);

/* "MEAN" (n = 1) or "MEAN ± HALF" (the 95% interval's half-width), each
 * printed with fmt (e.g. "%.1f"), into buf. Returns buf. */
const char *sym_format_pm(char *buf, size_t len, const char *fmt, const double *x, size_t n);

/* The queries of e (their split per stage) and, with r, what r measured of
 * them: an array for the result's "queries". r may be NULL (a plan). */
cJSON *sym_queries_json(const struct sym_experiment *e, const struct sym_run_result *r);
/* Query i's split, one object per stage. */
cJSON *sym_query_plan_json(const struct sym_experiment *e, size_t i);
/* The same as text: per query its outcome (with r) and its split. */
void sym_queries_print(FILE *f, const struct sym_experiment *e, const struct sym_run_result *r);

/* The human-readable table of one run, with its worst model and verdict. */
void sym_result_print(FILE *f, const char *command, const struct sym_experiment *e,
		      const struct sym_run_result *r);

/* When some models of r had fewer than sym_min_requests() measured
 * requests, a warning on f naming them (`what` says where: "", "at the
 * goodput", ...). Returns their number. */
size_t sym_warn_few_requests(FILE *f, const char *what, const struct sym_experiment *e,
			     const struct sym_run_result *r);

/* The sidecar (FILE.meta.json, experiment/output.h) of a CSV named `csv`
 * ("trace", "timeline", ...) written by `command`: program, version, commit,
 * provenance, command, csv, description, and the run's seed, policy, GPUs and
 * full config; the caller adds what else describes the file. */
cJSON *sym_csv_meta(const char *command, const char *csv, const char *description, const struct sym_experiment *e);

/* Commits a CSV opened with sym_outfile_open, then writes meta (taken;
 * NULL: out of memory, the CSV is abandoned) as its sidecar. Returns 0 or
 * -errno with a message in err. */
struct sym_outfile;
int sym_csv_commit(struct sym_outfile *csv, cJSON *meta, char *err, size_t errlen);

/* Writes the timeline CSV ("-": stdout): per interval, offered, good, bad,
 * busy GPUs, GPUs in use and the autoscaling advice; one header line, and the
 * interval and the advice rule in its sidecar. */
int sym_write_timeline(const char *path, const char *command, const struct sym_experiment *e,
		       const struct sym_run_result *r, char *err, size_t errlen);

/* Writes the per-model timeline CSV (the run must have counted it): per
 * interval and model, offered, good and bad; with its sidecar. */
int sym_write_model_timeline(const char *path, const char *command, const struct sym_experiment *e,
			     const struct sym_run_result *r, char *err, size_t errlen);

#endif
