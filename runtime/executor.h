/* runtime/executor.h - where a backend runs its batches.
 *
 * An executor loads models and runs batches of inputs, each batch starting
 * no earlier than a given moment of CLOCK_MONOTONIC. Implementations are
 * small vtables: `emulated` (here: it holds the device for l(b) from the
 * model's profile, and writes a digest of each input as its output), `cuda`
 * (runtime/cuda/) and `torch` (TorchScript files through libtorch, on the CPU
 * or a CUDA device: runtime/torch/). Everything above this interface (the
 * backend, its tests, the fidelity check) runs on a machine without a GPU.
 *
 * Thread safety: one executor per GPU. `run` is called from one thread;
 * `load` and `unload` may be called from one other thread at the same time,
 * for a model that no batch in flight runs (the backend loads on command
 * while the GPU serves its other models: docs/runtime.md, "Sub-clusters").
 */
#ifndef SYM_EXECUTOR_H
#define SYM_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/profile.h"
#include "core/time.h"
#include "runtime/clock.h"
#include "runtime/tensor.h"


#define SYM_EXEC_OUTPUT 8 /* bytes of the emulated executor's default output: the input's FNV-1a 64 digest */

struct sym_batch_io {
	int n;                       /* inputs, 1..max_batch of the model */
	const void *const *inputs;   /* n pointers */
	const uint32_t *lens;        /* n lengths */
	void *const *outputs;        /* n buffers of at least out_cap bytes */
	uint32_t out_cap;
	uint32_t *out_lens;          /* n output lengths, written */
};

/* What an executor is told about a model when it loads it. Everything it
 * points to must outlive the executor. */
struct sym_model_desc {
	const char *name;
	const struct sym_profile *profile; /* emulated: its l(b); every executor: max_batch */
	struct sym_tensor_sig input;       /* one request's input and output */
	struct sym_tensor_sig output;
	const cJSON *spec;                 /* the model's "executor" object in the cluster file, or NULL */
	double file_mb;                    /* its file (weights) size in MB, < 0 when unknown: the emulated
					    * executor's load time */
	int version;                       /* the version served (a repository's; 1 otherwise) */
};

/* The path of module `name` beside the object this function is in
 * (symphony-runtime.so, in the build tree or LIBDIR/symphony once
 * installed) into out, or "" when that is unknown. */
void sym_module_beside(const char *name, char *out, size_t len);

/* The default signature of a model on the emulated executor: INPUT0 UINT8
 * [input_bytes] in, OUTPUT0 UINT64 [1] out. */
void sym_model_desc_default(struct sym_model_desc *m, const char *name, const struct sym_profile *p,
			    size_t input_bytes);

/* Memory a loaded model holds on its device, in MB (negative when unknown). */
struct sym_model_memory {
	double static_mb;  /* held while loaded (weights, workspace) */
	double dynamic_mb; /* allocated by a batch of the size asked for (activations, workspace) */
};

struct sym_executor;

struct sym_executor_ops {
	const char *name;
	/* Loads model `id`. Checks the signature against what the executor can
	 * run and, where it knows the device's memory, that the model fits.
	 * 0, or -EINVAL / -ENOMEM / -ENOSPC (does not fit) with a message. */
	int (*load)(struct sym_executor *x, int id, const struct sym_model_desc *m, char *err, size_t errlen);
	/* Runs a batch of model `id` no earlier than `start`; returns when it is done, with the
	 * moments it began and ended. 0, or -EINVAL (unknown model, bad size) with a message. */
	int (*run)(struct sym_executor *x, int id, const struct sym_batch_io *io, sym_time start, sym_time *began,
		   sym_time *ended, char *err, size_t errlen);
	/* Unloads model `id`, freeing its memory. 0, or -EINVAL (not loaded). */
	int (*unload)(struct sym_executor *x, int id, char *err, size_t errlen);
	/* Memory of loaded model `id` for batches of b. 0 or -EINVAL. */
	int (*memory)(struct sym_executor *x, int id, int b, struct sym_model_memory *out);
	void (*destroy)(struct sym_executor *x);
};

struct sym_executor {
	const struct sym_executor_ops *ops;
};

/* Options for sym_executor_open. */
struct sym_executor_opts {
	sym_time spin_ns;      /* emulated: see sym_executor_emulated */
	double memory_mb;      /* emulated, torch: the device's memory (0: unlimited) */
	double load_mbps;      /* emulated: a load holds file_mb / load_mbps s ... (0: no hold) */
	double load_ms;        /* ... plus this */
	int device;            /* cuda, and torch on "cuda": the device ordinal */
	const char *model_lib; /* cuda: a plugin library for models with no built-in (--model-lib), or NULL */
	int torch_threads;     /* torch: intra-op threads of a batch, 1..256 (0: 1) */
	const char *torch_device; /* torch: "cpu" (NULL: the same) or "cuda" (device `device`) */
};

/* "emulated", "cuda" or "torch". NULL with a message in err: an unknown name,
 * or for cuda, no usable GPU (the CUDA error name and a one-line explanation)
 * or a build without CUDA; for torch, a build without libtorch, bad options,
 * or "cuda" asked of a libtorch without CUDA or a device it does not have. */
struct sym_executor *sym_executor_open(const char *name, const struct sym_executor_opts *o, char *err,
				       size_t errlen);

/* The emulated executor: a batch holds for l(n) of the model's profile
 * (sleeping, then spinning the last `spin_ns`; 0: the default 200 us). Each
 * output is the input's digest, repeated to fill the output signature's
 * bytes. Memory is the profile's static_mb and dynamic_mb, a batch's
 * dynamic memory whatever its size (core/memory.h; unknown stays negative). A load holds for the modelled loading time (file_mb, or
 * static_mb when the file size is unknown, over load_mbps, plus load_ms:
 * the simulator's model, symphony-centralized-orchestration.md Section 4.7)
 * and, with memory_mb > 0, is refused (-ENOSPC) when the models loaded and
 * it would not fit by the memory rule of core/memory.h (the sum of their
 * static memory plus the largest dynamic memory). NULL when out of memory; o may be NULL. */
struct sym_executor *sym_executor_emulated(const struct sym_executor_opts *o);

/* The CUDA executor (runtime/cuda/), with the same contract as above. */
struct sym_executor *sym_executor_cuda(const struct sym_executor_opts *o, char *err, size_t errlen);

/* True when this build has the CUDA executor. */
int sym_executor_cuda_built(void);

/* The TorchScript executor (runtime/torch/, C++ behind this C interface),
 * with the same contract as above. Each model's spec is {"file": "PATH"}, a
 * file torch.jit.save wrote (a relative path is from the working directory).
 * load checks the model against its signature with dry runs at batch 1 and
 * max_batch, and measures its memory; run stacks the n inputs into one
 * tensor [n, shape...], runs forward in inference mode and splits the output
 * per request. No exception crosses into C: a libtorch error is -EINVAL with
 * its message. */
struct sym_executor *sym_executor_torch(const struct sym_executor_opts *o, char *err, size_t errlen);

/* True when this build has the TorchScript executor (its module,
 * symphony-torch.so, is loaded by the first sym_executor_torch: see
 * runtime/executor.c for where it is looked for). */
int sym_executor_torch_built(void);

/* What the runtime and a separately built executor module (the TorchScript
 * one) check of each other before either trusts the other's structures:
 * the interface's version and the sizes of what crosses it. */
#define SYM_EXECUTOR_ABI_VERSION 1
struct sym_executor_abi {
	unsigned version;
	unsigned opts, desc, io, ops, memory, sig;
};

static inline struct sym_executor_abi sym_executor_abi_here(void)
{
	struct sym_executor_abi a = { SYM_EXECUTOR_ABI_VERSION,
				      (unsigned)sizeof(struct sym_executor_opts),
				      (unsigned)sizeof(struct sym_model_desc),
				      (unsigned)sizeof(struct sym_batch_io),
				      (unsigned)sizeof(struct sym_executor_ops),
				      (unsigned)sizeof(struct sym_model_memory),
				      (unsigned)sizeof(struct sym_tensor_sig) };
	return a;
}

/* The TorchScript module's one entry (runtime/torch/, found by dlsym in
 * runtime/executor.c): sym_executor_torch, once abi matches its own. */
struct sym_executor *sym_torch_module_open(const struct sym_executor_abi *abi, const struct sym_executor_opts *o,
					   char *err, size_t errlen);

/* The digest an emulated output holds: FNV-1a 64 of the input, little-endian. */
uint64_t sym_exec_digest(const void *data, size_t len);

/* The emulated executor's output for an input of digest d: len bytes, d's
 * eight little-endian bytes repeated (whatever the output's signature). */
void sym_exec_fill_output(uint64_t d, void *out, size_t len);

#endif
