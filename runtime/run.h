/* runtime/run.h - the runtime's processes and the one entry that runs any
 * of them (what `symphony schedd|frontend|backend|loadgen` call). Apart
 * from runtime/rt.h, the tools the processes share, so that the dispatcher
 * calls the processes and nothing calls back into it. */
#ifndef SYM_RUN_H
#define SYM_RUN_H

#include "runtime/rt.h"

/* Runs process o->cmd (schedd, frontend, backend, loadgen) of the resolved
 * cluster c until SIGINT or SIGTERM: installs the signal handlers and the
 * timer slack, then calls the process's entry below. Returns its status. */
int sym_rt_run(struct sym_cluster *c, const struct sym_rt_opts *o);

/* The processes (cluster resolved). Exit status: 0, 1 (run-time failure),
 * 2 (bad configuration). */
int sym_schedd_run(struct sym_cluster *c, const struct sym_rt_opts *o);
int sym_frontend_run(struct sym_cluster *c, const struct sym_rt_opts *o);
int sym_backend_run(struct sym_cluster *c, const struct sym_rt_opts *o);
int sym_loadgen_run(struct sym_cluster *c, const struct sym_rt_opts *o);

#endif
