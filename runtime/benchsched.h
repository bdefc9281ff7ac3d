/* runtime/benchsched.h - `symphony bench-sched`: the scheduler scalability
 * benchmark (the largest request rate the threaded scheduler of
 * runtime/sched.h sustains in real time, per scheduler thread count).
 *
 * One process, no network: a driver thread generates requests in real time
 * and emulates the GPUs; the scheduler runs on its own threads. Options and
 * the pass criterion are in `symphony help bench-sched` (cli/commands.c).
 */
#ifndef SYM_BENCHSCHED_H
#define SYM_BENCHSCHED_H

#include <stdbool.h>
#include <stdint.h>

#define SYM_BENCHSCHED_MAX_THREAD_COUNTS 16
#define MAX_THREAD_COUNTS SYM_BENCHSCHED_MAX_THREAD_COUNTS

/* The options; each within the range the command line checks. */
struct sym_benchsched_opts {
	int models;
	int gpus;
	int threads[SYM_BENCHSCHED_MAX_THREAD_COUNTS]; /* scheduler thread counts to measure, each 1..64 */
	int nthreads;
	double alpha_ms, beta_ms, slo_ms, ctrl_us;
	int max_batch;
	double duration_s;
	char policy[128];
	bool poisson;
	double start_rate, max_rate, precision;
	double late_limit_us, lag_limit_us, max_drop;
	int retries;
	uint64_t seed;
	const char *json;
	bool quiet;
};

/* Runs the benchmark. Returns the process exit status: 0, 1 (a run failed)
 * or 2 (options that do not fit together; nothing written). */
int sym_benchsched_run(const struct sym_benchsched_opts *o);

#endif
