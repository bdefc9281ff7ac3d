#include "cli/rtmodule.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym_version.h"

/* Must match runtime/tools.c's command table. */
static const char *const rt_names[] = { "schedd", "frontend", "backend", "loadgen", "bench-sched", "fabbench" };
#define NRT (sizeof(rt_names) / sizeof(rt_names[0]))

bool sym_rt_is_command(const char *cmd)
{
	for (size_t i = 0; i < NRT; i++)
		if (!strcmp(cmd, rt_names[i]))
			return true;
	return false;
}

#if SYM_HAVE_RUNTIME

#define MODULE_NAME "symphony-runtime.so"

static void *module;
static char why[2400];

/* Loads the module: beside this binary (the build tree), else where it is
 * installed. Returns its handle, or NULL with the reasons in why. */
static void *load(void)
{
	if (module)
		return module;
	char exe[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *tried[2] = { NULL, SYM_RUNTIME_MODULE };
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/%s", exe, MODULE_NAME);
			tried[0] = path;
		}
	}
	why[0] = '\0';
	for (int i = 0; i < 2 && !module; i++) {
		if (!tried[i] || access(tried[i], F_OK))
			continue;
		module = dlopen(tried[i], RTLD_NOW | RTLD_LOCAL);
		if (!module) {
			size_t l = strlen(why);
			snprintf(why + l, sizeof(why) - l, "%s%s", l ? "; " : "", dlerror());
		}
	}
	if (!module && !why[0]) {
		if (tried[0])
			snprintf(why, sizeof(why), "neither %s nor %s exists", tried[0], SYM_RUNTIME_MODULE);
		else
			snprintf(why, sizeof(why), "%s does not exist", SYM_RUNTIME_MODULE);
	}
	return module;
}

static void *sym(const char *cmd, const char *name)
{
	void *h = load(), *f = h ? dlsym(h, name) : NULL;
	if (!f)
		fprintf(stderr, "symphony %s: cannot load the runtime: %s\n", cmd, h ? dlerror() : why);
	return f;
}

void sym_rt_usage(FILE *f, const char *cmd)
{
	void (*fn)(FILE *, const char *) = (void (*)(FILE *, const char *))sym(cmd ? cmd : "help", "sym_rt_usage");
	if (fn) {
		fn(f, cmd);
		return;
	}
	for (size_t i = 0; !cmd && i < NRT; i++)
		fprintf(f, "  %s\n", rt_names[i]);
}

int sym_rt_main(int argc, char **argv)
{
	int (*fn)(int, char **) = (int (*)(int, char **))sym(argv[0], "sym_rt_main");
	return fn ? fn(argc, argv) : 2;
}

int sym_profiler_main(int argc, char **argv)
{
	int (*fn)(int, char **) = (int (*)(int, char **))sym(argv[0], "sym_profiler_main");
	return fn ? fn(argc, argv) : 2;
}

void sym_profiler_usage(FILE *f)
{
	void (*fn)(FILE *) = (void (*)(FILE *))sym("profile", "sym_profiler_usage");
	if (fn)
		fn(f);
}

#else /* a simulator-only build: the runtime commands exist, and say what is missing */

void sym_rt_usage(FILE *f, const char *cmd)
{
	fprintf(f, "  %s\n", cmd ? cmd : "(none: this symphony was built without the runtime, which needs " SYM_RUNTIME_MISSING ")");
}

int sym_rt_main(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "symphony %s: this symphony was built without the runtime, which needs %s; install it and "
			"rebuild (scripts/setup), or configure with meson -Dfabric=enabled -Dhttp=enabled to be told "
			"what is missing\n", argv[0], SYM_RUNTIME_MISSING);
	return 2;
}

int sym_profiler_main(int argc, char **argv)
{
	return sym_rt_main(argc, argv);
}

void sym_profiler_usage(FILE *f)
{
	sym_rt_usage(f, NULL);
}

#endif
