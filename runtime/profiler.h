/* runtime/profiler.h - `symphony profile`: a model's batch latency and memory,
 * measured on an executor, fitted to l(b) = alpha*b + beta, and written as
 * profile files the simulator and the scheduler read directly.
 *
 * For each batch size b the profiler runs `warmup` batches, then `repeats`
 * timed batches, each started at once (start = now); a run's latency is
 * ended - began as the executor reports it. The timed runs go in rounds, one
 * run of every size per round, so that a burst of interference on a shared
 * machine shifts one run of many sizes rather than every run of one size
 * (and so its median). It keeps the median, mean, min,
 * p10, p90, max and the median absolute deviation (MAD) of the runs, and the
 * executor's memory figures for b. The line is fitted to the medians by
 * ordinary least squares (gsl_fit_linear); alpha's and beta's standard errors
 * come from the fit's covariance (estimated from the residuals).
 *
 * Two profile files come out, both in the zoo form of profiles/zoo.h, with
 * one model and the whole measurement record as their "source" object:
 *   - linear: alpha_ms, beta_ms, max_batch (the largest batch measured),
 *     slo_ms, static_mb and dynamic_mb (a batch's, at the largest batch
 *     measured: the memory rule of core/memory.h) where the executor knows
 *     them;
 *   - table: latency_ms = [l(1), ..., l(B)] up to the largest batch
 *     measured B: the medians; a size not measured between two that were
 *     is interpolated linearly, sizes below the smallest one measured take
 *     its median, and the table is made non-decreasing (a running maximum),
 *     as the zoo requires.
 *
 * Thread safety: none needed; one thread runs a profile.
 */
#ifndef SYM_PROFILER_H
#define SYM_PROFILER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "runtime/executor.h"

/* The statistics of one batch size. Latencies in ms. */
struct sym_profiler_point {
	int batch;
	int runs;
	double median_ms, mean_ms, min_ms, p10_ms, p90_ms, max_ms;
	double mad_ms;     /* median absolute deviation from the median */
	double static_mb;  /* the executor's memory for this size; < 0 when unknown */
	double dynamic_mb; /* for the whole batch; < 0 when unknown */
};

/* The least-squares line through the medians. */
struct sym_profiler_fit {
	double alpha_ms, beta_ms;
	double alpha_se_ms, beta_se_ms; /* standard errors; NAN with only 2 batch sizes */
	double r2;                      /* 1 - SS_res / SS_tot (1 when every median is equal and fits) */
	double max_rel_residual;        /* max |median - fit| / median over the sizes */
	int worst_batch;                /* where that maximum is */
	bool linear;                    /* r2 >= SYM_PROFILER_MIN_R2, max_rel_residual <= SYM_PROFILER_MAX_RESIDUAL */
};

#define SYM_PROFILER_MIN_R2 0.98
#define SYM_PROFILER_MAX_RESIDUAL 0.05

/* A size is noisy when its p90 is more than this fraction above its median
 * (the command warns: the machine may be busy). */
#define SYM_PROFILER_NOISE 0.05

/* Parses a batch-size list: comma-separated items, each N, A..B (every size
 * from A to B) or A..B:S (A, A+S, A+2S, ..., and B). Sizes are 1..limit.
 * Writes them sorted and without repeats to out (room for limit entries)
 * and returns how many, or -EINVAL with "--batches 'SPEC': ..." in err. */
int sym_profiler_parse_batches(const char *spec, int limit, int *out, char *err, size_t errlen);

struct sym_profiler_opts {
	int warmup;                        /* untimed runs per batch size, >= 0 */
	int repeats;                       /* timed runs per batch size, >= 1 */
	FILE *progress;                    /* a line per batch size, or NULL */
	const volatile sig_atomic_t *stop; /* checked between runs (-EINTR once set), or NULL */
};

/* Measures model `id`, already loaded on x with description m, at each of
 * the nb sizes in batches (each 1..m->profile->max_batch): the warm-up runs
 * of every size, then `repeats` rounds (progress: a line a second). Inputs are
 * m->input's size with fixed contents (valid small values of its datatype).
 * Fills out[nb]. Returns 0, -EINVAL (a run failed: the executor's message
 * in err), -ENOMEM or -EINTR. */
int sym_profiler_measure(struct sym_executor *x, int id, const struct sym_model_desc *m, const int *batches,
			 int nb, const struct sym_profiler_opts *o, struct sym_profiler_point *out, char *err,
			 size_t errlen);

/* Fits l(b) = alpha*b + beta to the medians of n >= 2 points (distinct
 * sizes). Returns 0 or -EINVAL (fewer than 2 points). */
int sym_profiler_fit(const struct sym_profiler_point *pts, int n, struct sym_profiler_fit *fit);

/* The table profile (see above): table_ms[b - 1] = l(b) for b = 1 ..
 * pts[n-1].batch; table_ms has room for that many. Points are sorted by
 * size. Entries are rounded to the nanosecond and are at least 1 ns. */
void sym_profiler_table(const struct sym_profiler_point *pts, int n, double *table_ms);

/* `symphony profile`'s options (cli/commands.c describes them). */
struct sym_profiler_cmd {
	const char *model;     /* NULL: the experiment's only model */
	const char *batches;   /* NULL: 1..max_batch, at most 1..64 */
	const char *out, *table_out, *json; /* NULL: the defaults */
	int repeats, warmup;
	bool quiet;
	bool write;            /* write the profile into the model repository's config.json */
	char out_buf[600], table_buf[700];
};

/* `symphony profile` on cluster c (loaded, flags applied, not resolved; the
 * caller finishes it). Returns the exit status: 0, 1 (a run or a write
 * failed), 2 (bad input; nothing written). */
struct sym_cluster;
int sym_profiler_run(struct sym_cluster *c, struct sym_profiler_cmd *o);

#endif
