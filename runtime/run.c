/* runtime/run.c - runs one of the runtime's processes (runtime/run.h). */
#include "runtime/run.h"

#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

int sym_rt_run(struct sym_cluster *c, const struct sym_rt_opts *o)
{
	sym_rt_signals();
	/* Timers to the microsecond (the default slack is 50 us): deferred
	 * batches have only alpha of slack, and precise sleeps let the emulated
	 * executor spin less. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	/* Every connection is a descriptor (http_conn_max, clients_max, peers): the soft
	 * limit, often 1024, goes up to the hard one so that the configured bounds are the ones
	 * that hold (a process at the soft limit refuses connections before its bounds do). */
	struct rlimit nofile;
	if (!getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	int rc = -1;
	if (!strcmp(o->cmd, "schedd"))
		rc = sym_schedd_run(c, o);
	else if (!strcmp(o->cmd, "frontend"))
		rc = sym_frontend_run(c, o);
	else if (!strcmp(o->cmd, "backend"))
		rc = sym_backend_run(c, o);
	if (rc >= 0) {
		sym_rt_metrics_close(); /* its loop is gone with the process's */
		return rc;
	}
	if (!strcmp(o->cmd, "loadgen"))
		return sym_loadgen_run(c, o);
	fprintf(stderr, "symphony: unknown runtime command '%s'\n", o->cmd);
	return 2;
}
