/* sim/sweep.h - parameter sweeps: a grid file, its manifest of points,
 * shards, and one JSON line per point.
 *
 * A grid file names a base experiment and the axes to vary:
 *
 *   { "name": "slo-x-burst",
 *     "base": { ...configuration keys... } | "base-config.json",
 *     "compute": "goodput" | "sim",
 *     "axes": { "slo_ms": [25, 50], "arrival": ["poisson", "gamma:0.1"],
 *               "@workload": [ {"zoo": "a100", "models": "all"}, {"models": ["ResNet50"]} ] } }
 *
 * An axis is a configuration key and its values, or a label starting with
 * '@' whose values are objects of configuration keys set together (plus an
 * optional "label" naming the value, which is not applied). The
 * manifest is the product of the axes in file order, the last axis varying
 * fastest; point i is the i-th combination. Shard I of N (0 <= I < N) holds
 * the points with i % N == I, so the N shards partition the manifest.
 *
 * A point is deterministic: its line (sym_grid_run_point) depends only on the
 * grid and the index, never on the shard, the thread or the machine (it
 * carries no wall-clock time).
 */
#ifndef SYM_SWEEP_H
#define SYM_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "experiment/config.h"

enum sym_compute { SYM_COMPUTE_GOODPUT, SYM_COMPUTE_SIM };

struct sym_axis {
	char *key;       /* configuration key, or "@label" */
	cJSON *values;   /* non-empty array (owned) */
	size_t n;
};

struct sym_grid {
	char name[128];
	cJSON *base;     /* configuration object (owned) */
	enum sym_compute compute;
	struct sym_axis *axes;
	size_t naxes;
	size_t npoints;   /* at most SYM_GRID_MAX_POINTS */
	cJSON *over;      /* configuration keys set on the command line (sweep --seeds, --criterion), applied
			   * after the axes, or NULL (owned) */
	char id[17];      /* fingerprint of base, compute, axes and over (hex FNV-1a 64): lines of a
			   * changed grid do not mix */
};

#define SYM_GRID_MAX_POINTS 100000000

/* Reads and checks a grid file (a "base" given as a path is read relative to
 * the grid file's directory). The name defaults to the file's base name.
 * Returns 0, or -EINVAL/-ENOENT/-ENOMEM with a message in err. */
int sym_grid_load(const char *path, struct sym_grid *g, char *err, size_t errlen);

/* Checks a parsed grid object; origin names it in messages. */
int sym_grid_parse(const cJSON *root, const char *origin, const char *default_name, struct sym_grid *g,
		   char *err, size_t errlen);

void sym_grid_finish(struct sym_grid *g);

/* Sets configuration key `key` to `value` (taken, even on failure) for every
 * point, after the axes, and updates the fingerprint. The value is checked
 * with the points. Returns 0 or -ENOMEM. */
int sym_grid_override(struct sym_grid *g, const char *key, cJSON *value);

/* Point i's key: an object {axis: value} in axis order. NULL on ENOMEM. */
cJSON *sym_grid_point_key(const struct sym_grid *g, size_t i);

/* The key as one compact line (malloc'd): the identity of a point in
 * results, resume and merge. */
char *sym_grid_point_id(const struct sym_grid *g, size_t i);

/* Point i's resolved and checked experiment (e is initialized here and must
 * be finished by the caller whatever the result). */
int sym_grid_point_experiment(const struct sym_grid *g, size_t i, struct sym_experiment *e, char *err,
			      size_t errlen);

/* Runs point i and returns its result line (an object: grid, grid_id, point,
 * npoints, key, then the result of `symphony goodput` or `symphony sim`
 * without per-model detail or wall time). per_model keeps the per-model
 * results. With replications the point runs its seeds one after the other
 * (the sweep runs points in parallel): goodput lines carry the fields of
 * sym_goodput_result_json, sim lines the first seed's run with the mean, the
 * 95% interval and the per-seed values of bad_rate and goodput_served_rps
 * (bad_rate_mean, bad_rate_ci95, bad_rate_by_seed, ...) and metrics_from.
 * Returns 0 or an error with a message. */
int sym_grid_run_point(const struct sym_grid *g, size_t i, bool per_model, cJSON **line, char *err,
		       size_t errlen);

/* A sweep's slice (--shard I/N on the command line: one job of a cluster
 * array runs every N-th point from I; named slices here so as not to be
 * taken for the core's model shards). "I/N" with 0 <= I < N. Returns 0 or
 * -EINVAL with a message. */
int sym_slice_parse(const char *s, int *index, int *count, char *err, size_t errlen);

/* The slice from SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT and (when set)
 * SLURM_ARRAY_TASK_MIN. Returns 1 when they select one, 0 when they are not
 * set, -EINVAL (message in err) when they are malformed. */
int sym_slice_from_env(int *index, int *count, char *err, size_t errlen);

static inline bool sym_slice_has(size_t point, int index, int count)
{
	return count <= 1 || point % (size_t)count == (size_t)index;
}

/* One line of a results file, parsed: the fields that identify its point.
 * The strings and key point into obj, which the caller deletes. */
struct sym_result_line {
	cJSON *obj;
	const char *version;
	const char *grid;
	const char *grid_id;   /* NULL in lines written before grid ids existed */
	size_t point;          /* < SYM_GRID_MAX_POINTS */
	size_t npoints;        /* 0 when absent */
	const cJSON *key;
};

/* Parses a line (without its newline). Returns 0, or -EINVAL (obj NULL)
 * when it is not a sweep result line. */
int sym_result_line_parse(const char *text, struct sym_result_line *l);

/* Merging results files: every line must parse, carry the same program
 * version, grid name, grid id (when the lines have one) and point count, and
 * no point may appear twice. Lines are returned
 * sorted by point index in *out (an array, owned by the caller), with the
 * grid's point count in *npoints (0 if unknown). Returns 0 or -EINVAL with a
 * message naming the file and line. */
int sym_results_merge(const char *const *paths, size_t npaths, cJSON **out, size_t *npoints, char *err,
		      size_t errlen);


#endif
