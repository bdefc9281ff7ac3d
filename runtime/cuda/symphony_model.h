/* symphony_model.h - the ABI of a Symphony model plugin for the cuda executor.
 *
 * A plugin is a shared library that exports one C function,
 *
 *     const struct symphony_model_api *symphony_model_api(void);
 *
 * returning a table (static storage) of the callbacks below with
 * abi = SYMPHONY_MODEL_ABI. The executor opens the library with
 * dlopen(RTLD_NOW | RTLD_LOCAL) for a model whose executor spec is
 * {"lib": "/path/libfoo.so", "args": {...}} (or that has no built-in when the
 * backend runs with --model-lib), calls `load` once, `run` per batch and
 * `unload` when the executor is destroyed. Right after load the executor runs
 * one batch of 1 all-zero input (a warm-up). This header needs no CUDA include:
 * a stream is a cudaStream_t passed as void *. Link the plugin with the shared
 * CUDA runtime (nvcc --cudart shared), so that it uses the executor's.
 *
 * Threads: calls never overlap; load and run may come from different
 * threads. load, run and unload have the model's device current
 * (cudaSetDevice); memory should not call CUDA. Errors: 0 on success, else a
 * negative errno value (-EINVAL a bad signature or argument, -ENOSPC not
 * enough device memory, ...) with a one-line message written into err
 * (errlen bytes, NUL included).
 *
 * The ABI number changes whenever a struct or a callback here changes; the
 * executor refuses a library built for another number.
 */
#ifndef SYMPHONY_MODEL_H
#define SYMPHONY_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SYMPHONY_MODEL_ABI   1
#define SYMPHONY_MODEL_ENTRY "symphony_model_api" /* the exported function's name */

/* One request's tensor (a batch of b stacks b of them, contiguous). */
struct symphony_tensor {
	const char *name;     /* "INPUT0" */
	const char *datatype; /* the KServe v2 name: "FP32", "UINT8", ... */
	int ndim;             /* 1..8 */
	const int64_t *shape; /* ndim dimensions, each >= 1 */
	uint64_t bytes;       /* of one request's tensor */
};

/* What the executor tells `load`. Valid during the call only: copy what you keep. */
struct symphony_model_info {
	uint32_t abi;     /* SYMPHONY_MODEL_ABI */
	const char *name; /* the model's name in the cluster file */
	int device;       /* the CUDA device ordinal */
	int max_batch;    /* run() gets batches of 1..max_batch */
	struct symphony_tensor input, output;
	const char *args_json; /* the spec's "args" as JSON text ("{}" when it has none) */
	uint64_t free_bytes;   /* device memory free before this load */
};

struct symphony_model_api {
	uint32_t abi;  /* SYMPHONY_MODEL_ABI */
	uint32_t size; /* sizeof(struct symphony_model_api) */
	/* Checks the signature and args, allocates weights and workspace for
	 * batches up to max_batch, and sets *state (passed back below). */
	int (*load)(const struct symphony_model_info *info, void **state, char *err, size_t errlen);
	/* Enqueues a batch of n (1..max_batch) on stream: input is n * input.bytes
	 * of device memory, output n * output.bytes, both owned by the executor.
	 * It may return before the work is done; the executor synchronizes the
	 * stream. It should not allocate. */
	int (*run)(void *state, int n, const void *input, void *output, void *stream, char *err, size_t errlen);
	/* Device memory held for the model: static_bytes (weights, workspace) and
	 * dynamic_bytes (activations for a batch of n). Optional (NULL: the
	 * executor reports what it measured around load). */
	int (*memory)(void *state, int n, uint64_t *static_bytes, uint64_t *dynamic_bytes);
	/* Frees everything load allocated. */
	void (*unload)(void *state);
};

#if defined(__GNUC__)
#define SYMPHONY_MODEL_EXPORT __attribute__((visibility("default")))
#else
#define SYMPHONY_MODEL_EXPORT
#endif

/* The entry point, which the plugin defines (declared here so that it has C
 * linkage and is exported from C++ and CUDA sources too). */
SYMPHONY_MODEL_EXPORT const struct symphony_model_api *symphony_model_api(void);
typedef const struct symphony_model_api *(*symphony_model_api_fn)(void);

#ifdef __cplusplus
}
#endif

#endif
