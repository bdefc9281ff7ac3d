/* runtime/grpc/grpc.h - a frontend's KServe v2 / Open Inference Protocol
 * gRPC server (runtime/grpc/inference.proto), with Debian's gRPC (C++).
 *
 * gRPC runs the calls on threads of its own; the frontend owns every
 * decision on its event loop. So each call is queued as it comes (bounded:
 * past calls_max it is refused RESOURCE_EXHAUSTED at once) and an eventfd
 * wakes the loop, which takes the calls (sym_grpc_next), reads them with
 * the accessors below and finishes each exactly once (sym_grpc_finish_*),
 * at once or when its answer comes back: a call's request stays valid until
 * then. The loop's thread is the only one that reads or finishes calls.
 *
 * The server is a module of its own, symphony-grpc.so (C++, with gRPC and
 * protobuf), loaded by sym_grpc_start (runtime/grpc/load.c) only in a
 * process given a gRPC address: the others never map gRPC's libraries
 * (whose thread-local storage, in a module the program loads, made
 * LeakSanitizer's exit check crash in processes that had threads). It is
 * looked for where $SYM_GRPC_MODULE says, else beside symphony-runtime.so,
 * else in LIBDIR/symphony.
 */
#ifndef SYM_GRPC_H
#define SYM_GRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/executor.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sym_grpc;
struct sym_grpc_call;

struct sym_grpc_cfg {
	const char *host, *port;        /* where it listens */
	const char *tls_cert, *tls_key; /* PEM text: TLS; NULL: plain */
	size_t msg_max;                 /* the largest request message (http_body_max) */
	unsigned calls_max;             /* calls queued or held at once; past it, RESOURCE_EXHAUSTED */
	size_t memory_max;              /* what gRPC may hold for its connections and messages (bytes) */
};

/* Listens. Returns 0, or a negative errno with a message in err. */
int sym_grpc_start(struct sym_grpc **out, const struct sym_grpc_cfg *cfg, char *err, size_t errlen);

/* The descriptor the loop watches: readable while calls wait. */
int sym_grpc_fd(const struct sym_grpc *g);

/* The next call waiting, or NULL (the descriptor is drained). */
struct sym_grpc_call *sym_grpc_next(struct sym_grpc *g);

/* Stops taking calls, finishes those still queued UNAVAILABLE, shuts the
 * server down (calls held and not finished are cancelled) and frees it.
 * Accepts NULL. */
void sym_grpc_stop(struct sym_grpc *g);

enum sym_grpc_kind {
	SYM_GRPC_SERVER_LIVE,
	SYM_GRPC_SERVER_READY,
	SYM_GRPC_MODEL_READY,
	SYM_GRPC_SERVER_METADATA,
	SYM_GRPC_MODEL_METADATA,
	SYM_GRPC_MODEL_INFER,
	SYM_GRPC_REPOSITORY_INDEX,  /* the repository extension (schedd's) */
	SYM_GRPC_REPOSITORY_LOAD,
	SYM_GRPC_REPOSITORY_UNLOAD,
};

enum sym_grpc_kind sym_grpc_call_kind(const struct sym_grpc_call *c);
/* The model and version named (MODEL_*, REPOSITORY_LOAD and _UNLOAD), "" when none. */
const char *sym_grpc_call_model(const struct sym_grpc_call *c);
const char *sym_grpc_call_version(const struct sym_grpc_call *c);
/* REPOSITORY_*: the repository named ("": the server's one); INDEX: whether
 * only the ready models are asked for. */
const char *sym_grpc_call_repository(const struct sym_grpc_call *c);
bool sym_grpc_call_ready_only(const struct sym_grpc_call *c);

/* The bearer token of the call's "authorization" metadata ("Bearer TOKEN"),
 * its length in *len; NULL when it has none. */
const char *sym_grpc_call_token(const struct sym_grpc_call *c, size_t *len);
/* How long the client's deadline leaves from now, in ns; 0: it set none. */
int64_t sym_grpc_call_deadline_ns(const struct sym_grpc_call *c);
/* Whether the client gave up on the call (cancelled, or past its deadline). */
bool sym_grpc_call_cancelled(const struct sym_grpc_call *c);

/* MODEL_INFER: checks the request against model m (one input, m's name,
 * datatype and shape, with or without a leading batch dimension of 1; the
 * data in raw_input_contents or as typed contents; only m's output
 * requested, if any) and writes the input's sym_tensor_bytes(&m->input)
 * bytes to dst; *deadline_ms is the request's "deadline_ms" parameter (0:
 * none) and *batch_dim whether the shape had the batch dimension. Returns
 * 0, or -EINVAL naming the field in err (the REST API's words). */
int sym_grpc_call_input(const struct sym_grpc_call *c, const struct sym_model_desc *m, void *dst, double *deadline_ms,
			bool *batch_dim, char *err, size_t errlen);

/* Finishing a call (exactly once each; the call is gone after). */
void sym_grpc_finish_bool(struct sym_grpc_call *c, bool v); /* live, ready, model ready */
void sym_grpc_finish_server_metadata(struct sym_grpc_call *c, const char *name, const char *version,
				     const char *const *extensions, size_t n);
void sym_grpc_finish_model_metadata(struct sym_grpc_call *c, const struct sym_model_desc *m, const char *platform);
/* REPOSITORY_INDEX: one model (call it for each, then finish_ok). */
void sym_grpc_add_index(struct sym_grpc_call *c, const char *name, const char *version, const char *state,
			const char *reason);
/* Finished with no more to say: OK (REPOSITORY_INDEX with the models
 * added, REPOSITORY_LOAD and _UNLOAD). */
void sym_grpc_finish_ok(struct sym_grpc_call *c);
/* The output of m: len bytes in raw_output_contents, its shape with the
 * batch dimension when the input had one. */
void sym_grpc_finish_infer(struct sym_grpc_call *c, const struct sym_model_desc *m, bool batch_dim, const void *out,
			   size_t len);
/* code: a gRPC status code (grpc/status.h's numbers: 3 INVALID_ARGUMENT,
 * 5 NOT_FOUND, 7 PERMISSION_DENIED, 8 RESOURCE_EXHAUSTED, 9
 * FAILED_PRECONDITION, 12 UNIMPLEMENTED, 13 INTERNAL, 14 UNAVAILABLE, 16
 * UNAUTHENTICATED); sym_grpc_code_of_http maps an HTTP status to one. */
void sym_grpc_finish_error(struct sym_grpc_call *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

int sym_grpc_code_of_http(unsigned status);

/* The module's functions (sym_grpc_module_api, its one exported symbol). */
#define SYM_GRPC_API_VERSION 1
struct sym_grpc_api {
	int version; /* SYM_GRPC_API_VERSION */
	int (*start)(struct sym_grpc **out, const struct sym_grpc_cfg *cfg, char *err, size_t errlen);
	int (*fd)(const struct sym_grpc *g);
	struct sym_grpc_call *(*next)(struct sym_grpc *g);
	void (*stop)(struct sym_grpc *g);
	enum sym_grpc_kind (*call_kind)(const struct sym_grpc_call *c);
	const char *(*call_model)(const struct sym_grpc_call *c);
	const char *(*call_version)(const struct sym_grpc_call *c);
	const char *(*call_repository)(const struct sym_grpc_call *c);
	bool (*call_ready_only)(const struct sym_grpc_call *c);
	const char *(*call_token)(const struct sym_grpc_call *c, size_t *len);
	int64_t (*call_deadline_ns)(const struct sym_grpc_call *c);
	bool (*call_cancelled)(const struct sym_grpc_call *c);
	int (*call_input)(const struct sym_grpc_call *c, const struct sym_model_desc *m, void *dst, double *deadline_ms,
			  bool *batch_dim, char *err, size_t errlen);
	void (*finish_bool)(struct sym_grpc_call *c, bool v);
	void (*finish_server_metadata)(struct sym_grpc_call *c, const char *name, const char *version,
				       const char *const *extensions, size_t n);
	void (*finish_model_metadata)(struct sym_grpc_call *c, const struct sym_model_desc *m, const char *platform);
	void (*add_index)(struct sym_grpc_call *c, const char *name, const char *version, const char *state,
			  const char *reason);
	void (*finish_ok)(struct sym_grpc_call *c);
	void (*finish_infer)(struct sym_grpc_call *c, const struct sym_model_desc *m, bool batch_dim, const void *out,
			     size_t len);
	void (*finish_error_msg)(struct sym_grpc_call *c, int code, const char *msg);
	int (*code_of_http)(unsigned status);
};
const struct sym_grpc_api *sym_grpc_module_api(void);

#ifdef __cplusplus
}
#endif

#endif
