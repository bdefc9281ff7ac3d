/* runtime/benchsched.h - `symphony bench-sched`: the scheduler scalability
 * benchmark (the largest request rate the threaded scheduler of
 * runtime/sched.h sustains in real time, per scheduler thread count).
 *
 * One process, no network: a driver thread generates requests in real time
 * and emulates the GPUs; the scheduler runs on its own threads. Options and
 * the pass criterion are in the usage text (`symphony bench-sched --help`).
 */
#ifndef SYM_BENCHSCHED_H
#define SYM_BENCHSCHED_H

/* argv[0] is "bench-sched". Returns the process exit status: 0, 1 (a run
 * failed) or 2 (bad options; nothing written). */
int sym_benchsched_main(int argc, char **argv);

#endif
