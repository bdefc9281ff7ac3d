/* experiment/interrupt.h - what a command leaves behind when SIGINT,
 * SIGTERM or SIGHUP ends it.
 *
 * Result files are written to temporaries that are renamed into place when
 * complete (experiment/output.h). Each temporary is registered here while it
 * exists; the handler that sym_interrupt_install() sets removes every one
 * still registered, prints one line on stderr saying what was kept, and exits
 * 128 + the signal number (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP),
 * the shell's convention for a command ended by a signal.
 *
 * The handler is async-signal-safe: it reads a fixed table of paths and
 * counters and calls only unlink(2), write(2) and _exit(2), so it may run on
 * any thread, at any moment, while worker threads go on (they end with the
 * process). It does not return: a simulation has no useful partial result,
 * and a sweep's results file is resumable line by line (a line cut short by
 * the signal is removed by --resume).
 *
 * The runtime's processes (schedd, frontend, backend, loadgen, profile) do
 * not install it: they shut down cleanly on the same signals (runtime/rt.h,
 * sym_rt_signals) and write their results on the way out.
 */
#ifndef SYM_INTERRUPT_H
#define SYM_INTERRUPT_H

#include <stddef.h>

/* Installs the handler for SIGINT, SIGTERM and SIGHUP, except for a signal
 * ignored when the program started (nohup, or a background job of a script:
 * it stays ignored); messages begin "symphony CMD:" (cmd must live as long as
 * the process). */
void sym_interrupt_install(const char *cmd);

/* Registers a temporary file that an interruption removes. Returns its slot
 * (>= 0), or -EMFILE when the table is full (SYM_INTERRUPT_SLOTS files at
 * once) and -ENAMETOOLONG for a path longer than the table holds. Safe from
 * any thread. */
#define SYM_INTERRUPT_SLOTS 32
int sym_interrupt_add_temp(const char *tmp);

/* The temporary of `slot` was renamed into place as `path`: an interruption
 * from now on reports it as written. */
void sym_interrupt_kept(int slot, const char *path);

/* Forgets `slot` (its temporary was removed; or, once written, it need no
 * longer be named). Accepts -1. */
void sym_interrupt_forget(int slot);

/* A sweep: an interruption reports "after DONE of TOTAL points; PATH holds
 * them: resume with --resume" (done counts from `done`, then one more per
 * sym_interrupt_progress_step). path must stay valid until
 * sym_interrupt_progress_end(). */
void sym_interrupt_progress(const char *path, size_t total, size_t done);
void sym_interrupt_progress_step(void);
void sym_interrupt_progress_end(void);

#endif
