/* cli/progress.h - a progress line with an ETA on a terminal, for commands
 * that run simulations (sim, goodput, plan, loadcurve; sweep counts points
 * itself). It reads the simulated time every simulation of the process has
 * run (sim/engine.h: sym_sim_work_ns) against the command's estimate of the
 * total, and shows nothing for runs shorter than two seconds, when stderr is
 * not a terminal, or with --quiet. */
#ifndef SYM_CLI_PROGRESS_H
#define SYM_CLI_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

struct cli_progress;

/* Starts the meter (a thread) when enabled and stderr is a terminal; NULL
 * otherwise (and cli_progress_stop(NULL) does nothing). total_s: the
 * simulated seconds the command expects to run, all simulations together (an
 * estimate: a goodput search's failing steps stop early, so the ETA is an
 * upper bound). */
struct cli_progress *cli_progress_start(const char *what, double total_s, bool enabled);

/* Stops the meter and clears its line. */
void cli_progress_stop(struct cli_progress *p);

/* "42s", "3m05s", "2h10m"; "?" for a negative or absurd duration. */
void cli_fmt_duration(double s, char *buf, size_t len);

/* Monotonic seconds. */
double cli_now(void);

#endif
