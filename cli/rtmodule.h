/* cli/rtmodule.h - the runtime's commands, reached through a module.
 *
 * The runtime (runtime/: schedd, frontend, backend, loadgen, bench-sched,
 * fabbench, profile) links libfabric and libmicrohttpd, and libfabric's
 * providers bring libraries that act when loaded (libinfinipath, under the
 * psm provider, installs its own SIGINT, SIGTERM, SIGSEGV, ... handlers in
 * its constructor). So `symphony` itself links only the simulator, and loads
 * the runtime (symphony-runtime.so, beside the binary in the build tree, or
 * in LIBDIR/symphony once installed) with dlopen when one of these commands
 * runs. A build without the runtime has no module, and these commands say
 * what is missing.
 */
#ifndef SYM_CLI_RTMODULE_H
#define SYM_CLI_RTMODULE_H

#include <stdbool.h>
#include <stdio.h>

/* Whether cmd is one of the runtime's process commands (not "profile"). */
bool sym_rt_is_command(const char *cmd);

/* Their help: the list (cmd NULL) or one command's. */
void sym_rt_usage(FILE *f, const char *cmd);

/* Runs runtime command argv[0] (schedd, ..., fabbench). Returns its exit
 * status; 2 when the runtime cannot be loaded, after saying why. */
int sym_rt_main(int argc, char **argv);

/* `symphony profile`, and its help. */
int sym_profiler_main(int argc, char **argv);
void sym_profiler_usage(FILE *f);

#endif
