/* sim/parallel.h - the simulator's thread pool: the searches' seeds, a
 * loadcurve's runs and a sweep's points run on it. Its own module, below
 * the goodput search, the planner and the sweep that all use it. */
#ifndef SYM_PARALLEL_H
#define SYM_PARALLEL_H

#include <stddef.h>

/* Calls fn(ctx, i) for i in [0, n) on `jobs` threads (at most n). After a
 * call returns non-zero no new call starts; returns the first such value, or
 * 0. fn must be thread-safe. */
int sym_parallel_for(size_t n, int jobs, int (*fn)(void *ctx, size_t i), void *ctx);

/* The number of online processors (at least 1). */
int sym_ncpus(void);

#endif
