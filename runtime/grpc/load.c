/* runtime/grpc/load.c - the gRPC server's module (symphony-grpc.so), loaded
 * on the first sym_grpc_start, and the functions of runtime/grpc/grpc.h
 * handed on to it. */
#include "runtime/grpc/grpc.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sym_version.h"

#define GRPC_MODULE_NAME "symphony-grpc.so"

static const struct sym_grpc_api *api; /* loaded, or NULL (set on the loop's thread before any call) */

/* Loads the module: $SYM_GRPC_MODULE, else beside this object, else LIBDIR/symphony. */
static int load(char *err, size_t errlen)
{
	if (api)
		return 0;
	char beside[PATH_MAX + 64];
	sym_module_beside(GRPC_MODULE_NAME, beside, sizeof(beside));
	const char *env = getenv("SYM_GRPC_MODULE");
	const char *path = env && env[0] ? env : beside[0] && !access(beside, F_OK) ? beside : SYM_GRPC_MODULE;
	if (access(path, F_OK))
		return snprintf(err, errlen, "the gRPC module %s was not found (%s)", path,
				env && env[0] ? "SYM_GRPC_MODULE" : "looked for beside symphony-runtime.so and in LIBDIR/symphony"),
		       -ENOENT;
	void *m = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	const struct sym_grpc_api *(*get)(void) = NULL;
	if (m)
		*(void **)&get = dlsym(m, "sym_grpc_module_api");
	if (!get) {
		const char *e = dlerror();
		return snprintf(err, errlen, "the gRPC module %s: %s", path, e ? e : "no sym_grpc_module_api"), -ENOENT;
	}
	const struct sym_grpc_api *a = get();
	if (!a || a->version != SYM_GRPC_API_VERSION)
		return snprintf(err, errlen, "the gRPC module %s is of another build (API %d, this one %d)", path,
				a ? a->version : -1, SYM_GRPC_API_VERSION),
		       -EINVAL;
	api = a;
	return 0;
}

int sym_grpc_start(struct sym_grpc **out, const struct sym_grpc_cfg *cfg, char *err, size_t errlen)
{
	*out = NULL;
	int rc = load(err, errlen);
	return rc ? rc : api->start(out, cfg, err, errlen);
}

/* The rest exist only once a server started (api set). */
int sym_grpc_fd(const struct sym_grpc *g) { return api->fd(g); }
struct sym_grpc_call *sym_grpc_next(struct sym_grpc *g) { return api->next(g); }
void sym_grpc_stop(struct sym_grpc *g)
{
	if (g)
		api->stop(g);
}
enum sym_grpc_kind sym_grpc_call_kind(const struct sym_grpc_call *c) { return api->call_kind(c); }
const char *sym_grpc_call_model(const struct sym_grpc_call *c) { return api->call_model(c); }
const char *sym_grpc_call_version(const struct sym_grpc_call *c) { return api->call_version(c); }
const char *sym_grpc_call_repository(const struct sym_grpc_call *c) { return api->call_repository(c); }
bool sym_grpc_call_ready_only(const struct sym_grpc_call *c) { return api->call_ready_only(c); }
const char *sym_grpc_call_token(const struct sym_grpc_call *c, size_t *len) { return api->call_token(c, len); }
int64_t sym_grpc_call_deadline_ns(const struct sym_grpc_call *c) { return api->call_deadline_ns(c); }
bool sym_grpc_call_cancelled(const struct sym_grpc_call *c) { return api->call_cancelled(c); }
int sym_grpc_call_input(const struct sym_grpc_call *c, const struct sym_model_desc *m, void *dst, double *deadline_ms,
			bool *batch_dim, char *err, size_t errlen)
{
	return api->call_input(c, m, dst, deadline_ms, batch_dim, err, errlen);
}
void sym_grpc_finish_bool(struct sym_grpc_call *c, bool v) { api->finish_bool(c, v); }
void sym_grpc_finish_server_metadata(struct sym_grpc_call *c, const char *name, const char *version,
				     const char *const *extensions, size_t n)
{
	api->finish_server_metadata(c, name, version, extensions, n);
}
void sym_grpc_finish_model_metadata(struct sym_grpc_call *c, const struct sym_model_desc *m, const char *platform)
{
	api->finish_model_metadata(c, m, platform);
}
void sym_grpc_add_index(struct sym_grpc_call *c, const char *name, const char *version, const char *state,
			const char *reason)
{
	api->add_index(c, name, version, state, reason);
}
void sym_grpc_finish_ok(struct sym_grpc_call *c) { api->finish_ok(c); }
void sym_grpc_finish_infer(struct sym_grpc_call *c, const struct sym_model_desc *m, bool batch_dim, const void *out,
			   size_t len)
{
	api->finish_infer(c, m, batch_dim, out, len);
}
void sym_grpc_finish_error(struct sym_grpc_call *c, int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	api->finish_error_msg(c, code, msg);
}
int sym_grpc_code_of_http(unsigned status) { return api->code_of_http(status); }
