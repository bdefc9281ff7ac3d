/* cli/rtmodule.c - the runtime's commands, reached through a module.
 *
 * The runtime links libfabric and libmicrohttpd, and libfabric's providers
 * bring libraries that act when loaded (libinfinipath, under the psm
 * provider, installs its own SIGINT, SIGTERM, SIGSEGV, ... handlers in its
 * constructor). So `symphony` links only the simulator, and loads the
 * runtime (symphony-runtime.so: runtime/ and cli/runtime.c) with dlopen when
 * one of its commands runs: beside the binary (the build tree), else in
 * LIBDIR/symphony once installed. The module is linked -Bsymbolic: it uses
 * its own copies of the core and of the experiment layer, and takes only the
 * command line's helpers (cli_str, cli_fail, ...) from this executable,
 * which exports them (export_dynamic). Built only with the runtime. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "sym_version.h"

#define MODULE_NAME "symphony-runtime.so"

int cli_cmd_runtime(struct cli *c)
{
	static void *module;
	char why[2400] = "", here[PATH_MAX + 64] = "";
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(here, sizeof(here), "%s/%s", exe, MODULE_NAME);
		}
	}
	const char *tried[] = { here, SYM_RUNTIME_MODULE };
	for (size_t i = 0; i < 2 && !module; i++) {
		if (!tried[i][0] || access(tried[i], F_OK))
			continue;
		module = dlopen(tried[i], RTLD_NOW | RTLD_LOCAL);
		if (!module) {
			size_t l = strlen(why);
			snprintf(why + l, sizeof(why) - l, "%s%s", l ? "; " : "", dlerror());
		}
	}
	if (!module && !why[0])
		snprintf(why, sizeof(why), "neither %.1000s nor %.1000s exists", here[0] ? here : "(the binary's directory)",
			 SYM_RUNTIME_MODULE);
	int (*run)(struct cli *) = NULL;
	if (module)
		*(void **)&run = dlsym(module, "cli_runtime_main");
	if (!run)
		return cli_fail(c, 1, "cannot load the runtime: %s", module ? dlerror() : why);
	return run(c);
}
