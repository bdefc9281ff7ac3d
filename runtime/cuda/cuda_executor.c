/* runtime/cuda/cuda_executor.c - the cuda executor (runtime/executor.h) on the CUDA runtime API.
 *
 * Per model, everything is allocated at load: its weights (built-ins) or
 * the plugin's state, device input and output buffers and activations for a
 * batch of max_batch, and pinned host staging for inputs and outputs. A run
 * copies the inputs into the staging, waits for its start, then on the
 * executor's stream copies them to the device, runs the layers (or the
 * plugin), copies the outputs back, and synchronizes; nothing is allocated.
 *
 * Memory: static = the weights (at least what cudaMemGetInfo saw go when
 * they were allocated; a plugin: what its memory callback says, else what
 * its load took), dynamic(b) = b * (input + output + activations of one
 * sample) (+ a plugin's dynamic bytes). A model whose static + dynamic(max_batch)
 * exceeds the free device memory is refused before anything is allocated.
 */
#include "runtime/executor.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "runtime/cuda/kernels.h"
#include "runtime/cuda/cuda_models.h"
#include "runtime/cuda/symphony_model.h"

#define MAX_MODELS   4096
#define MIB          (1024.0 * 1024.0)
#define DEFAULT_SPIN (50 * SYM_US)

struct cmodel {
	char name[128];
	int max_batch;
	size_t in_bytes, out_bytes; /* one request */
	struct sym_cuda_spec spec;
	float *d_params;             /* built-in: its weights */
	void *d_in, *d_out;          /* max_batch requests */
	float *d_act[2];             /* built-in: ping-pong activations, max_batch * net.max_act */
	unsigned char *h_in, *h_out; /* pinned staging, max_batch requests */
	void *dl;                    /* plugin */
	const struct symphony_model_api *api;
	void *state;
	int plugin_loaded;
	uint64_t static_bytes;
	uint64_t dyn_per_sample; /* executor buffers and built-in activations */
};

struct cuda_x {
	struct sym_executor base;
	int device;
	char gpu[256];
	sym_time spin;
	cudaStream_t stream;
	char *model_lib;
	/* written by the loading thread for a model no batch runs, read by the running one */
	_Atomic(struct cmodel *) models[MAX_MODELS];
};

#define ERR(rc, ...) (snprintf(err, errlen, __VA_ARGS__), (rc))

/* "cuda executor: WHO: CALL failed: cudaErrorX (its description)"; -ENOSPC for out of device memory, else -EIO. */
static int cu_fail(char *err, size_t errlen, const char *who, const char *call, cudaError_t e)
{
	snprintf(err, errlen, "cuda executor: %s%s%s failed: %s (%s)", who, who[0] ? ": " : "", call,
		 cudaGetErrorName(e), cudaGetErrorString(e));
	(void)cudaGetLastError(); /* clears it unless it is sticky */
	return e == cudaErrorMemoryAllocation ? -ENOSPC : -EIO;
}

#define CU(call, what) \
	do { \
		cudaError_t ce_ = (call); \
		if (ce_ != cudaSuccess) { \
			rc = cu_fail(err, errlen, who, what, ce_); \
			goto fail; \
		} \
	} while (0)

/* "12.3 MiB" or "1.5 GiB" into buf (32 bytes). */
static const char *human(uint64_t bytes, char *buf)
{
	double b = (double)bytes;
	snprintf(buf, 32, b >= 1024 * MIB ? "%.1f GiB" : "%.1f MiB", b >= 1024 * MIB ? b / (1024 * MIB) : b / MIB);
	return buf;
}

static void free_model(struct cmodel *cm)
{
	if (!cm)
		return;
	if (cm->plugin_loaded)
		cm->api->unload(cm->state);
	if (cm->dl)
		dlclose(cm->dl);
	cudaFree(cm->d_params);
	cudaFree(cm->d_in);
	cudaFree(cm->d_out);
	cudaFree(cm->d_act[0]);
	cudaFree(cm->d_act[1]);
	cudaFreeHost(cm->h_in);
	cudaFreeHost(cm->h_out);
	free(cm);
}

static void tensor_abi(const struct sym_tensor_sig *s, struct symphony_tensor *t)
{
	t->name = s->name;
	t->datatype = sym_dtype_name(s->dtype);
	t->ndim = s->ndim;
	t->shape = s->shape;
	t->bytes = sym_tensor_bytes(s);
}

/* Opens the plugin library, checks its ABI and calls its load. */
static int plugin_load(struct cuda_x *x, struct cmodel *cm, const struct sym_model_desc *m, const char *who, char *err,
		       size_t errlen)
{
	const char *lib = cm->spec.lib;
	const char *why;
	(void)dlerror();
	if (!(cm->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL))) {
		why = dlerror();
		return ERR(-EINVAL, "cuda executor: %s: cannot open plugin library: %s", who, why ? why : lib);
	}
	void *sym = dlsym(cm->dl, SYMPHONY_MODEL_ENTRY);
	if (!sym) {
		why = dlerror();
		return ERR(-EINVAL, "cuda executor: %s: plugin library '%s' does not export %s() (%s); see "
				    "runtime/cuda/symphony_model.h",
			   who, lib, SYMPHONY_MODEL_ENTRY, why ? why : "it is NULL");
	}
	symphony_model_api_fn fn;
	memcpy(&fn, &sym, sizeof(fn));
	const struct symphony_model_api *api = fn();
	if (!api)
		return ERR(-EINVAL, "cuda executor: %s: plugin library '%s': %s() returned NULL", who, lib,
			   SYMPHONY_MODEL_ENTRY);
	if (api->abi != SYMPHONY_MODEL_ABI)
		return ERR(-EINVAL,
			   "cuda executor: %s: plugin library '%s' is built for model ABI %u, this symphony "
			   "takes ABI %d (rebuild it against runtime/cuda/symphony_model.h)",
			   who, lib, (unsigned)api->abi, SYMPHONY_MODEL_ABI);
	if (api->size < sizeof(*api) || !api->load || !api->run || !api->unload)
		return ERR(-EINVAL, "cuda executor: %s: plugin library '%s' lacks a load, run or unload callback", who,
			   lib);
	size_t free_b = 0, total_b = 0, after = 0;
	cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
	if (e != cudaSuccess)
		return cu_fail(err, errlen, who, "cudaMemGetInfo", e);
	struct symphony_model_info info = { .abi = SYMPHONY_MODEL_ABI,
					    .name = cm->name,
					    .device = x->device,
					    .max_batch = cm->max_batch,
					    .free_bytes = free_b };
	tensor_abi(&m->input, &info.input);
	tensor_abi(&m->output, &info.output);
	char *args = cm->spec.args ? cJSON_PrintUnformatted(cm->spec.args) : NULL;
	if (cm->spec.args && !args)
		return ERR(-ENOMEM, "cuda executor: %s: out of memory", who);
	info.args_json = args ? args : "{}";
	char msg[768] = "";
	int rc = api->load(&info, &cm->state, msg, sizeof(msg));
	cJSON_free(args);
	if (rc)
		return ERR(rc < 0 ? rc : -EINVAL, "cuda executor: %s: plugin '%s' refused to load it: %s", who, lib,
			   msg[0] ? msg : "(no message)");
	cm->api = api;
	cm->plugin_loaded = 1;
	if ((e = cudaMemGetInfo(&after, &total_b)) != cudaSuccess)
		return cu_fail(err, errlen, who, "cudaMemGetInfo", e);
	cm->static_bytes = after < free_b ? free_b - after : 0;
	uint64_t st, dyn;
	if (api->memory && !api->memory(cm->state, cm->max_batch, &st, &dyn))
		cm->static_bytes = st;
	return 0;
}

/* Weights: generated on the host from the seed, laid out for the kernels, then copied. */
static int builtin_upload(struct cmodel *cm, const char *who, char *err, size_t errlen)
{
	const struct sym_cuda_builtin *net = &cm->spec.net;
	int rc = 0;
	float *host = malloc(net->nparams * sizeof(float)), *dev = malloc(net->nparams * sizeof(float));
	if (!host || !dev) {
		rc = ERR(-ENOMEM, "cuda executor: %s: out of host memory for %zu weights", who, net->nparams);
		goto fail;
	}
	sym_cuda_builtin_init_params(net, host);
	sym_cuda_builtin_device_params(net, host, dev);
	CU(cudaMalloc((void **)&cm->d_params, net->nparams * sizeof(float)), "cudaMalloc (weights)");
	CU(cudaMemcpy(cm->d_params, dev, net->nparams * sizeof(float), cudaMemcpyHostToDevice),
	   "cudaMemcpy (weights)");
fail:
	free(host);
	free(dev);
	return rc;
}

/* Enqueues the model on a batch of n in d_in, writing d_out: a built-in's layers, or the plugin's run. */
static int enqueue(struct cuda_x *x, struct cmodel *cm, int n, const char *who, char *err, size_t errlen)
{
	if (!cm->spec.is_builtin) {
		char msg[512] = "";
		int rc = cm->api->run(cm->state, n, cm->d_in, cm->d_out, x->stream, msg, sizeof(msg));
		return rc ? ERR(rc < 0 ? rc : -EIO, "cuda executor: %s: the plugin's run failed: %s", who,
				msg[0] ? msg : "(no message)")
			  : 0;
	}
	const struct sym_cuda_builtin *net = &cm->spec.net;
	const float *cur = cm->d_in;
	for (int i = 0; i < net->nlayers; i++) {
		const struct sym_cuda_layer *l = &net->layers[i];
		float *dst = i + 1 == net->nlayers ? cm->d_out : cm->d_act[i % 2];
		const float *w = cm->d_params + l->w_off, *bias = cm->d_params + l->b_off;
		int e = l->kind == SYM_CUDA_CONV
				? sym__cuda_conv_pool(cur, w, bias, dst, n, l->in_c, l->in_h, l->in_w, l->out_c,
						      x->stream)
				: sym__cuda_fc(cur, w, bias, dst, n, l->fan_in, l->out_c, l->relu, x->stream);
		if (e)
			return cu_fail(err, errlen, who,
				       l->kind == SYM_CUDA_CONV ? "conv kernel launch" : "fc kernel launch",
				       (cudaError_t)e);
		cur = dst;
	}
	return 0;
}

/* One batch of a zero input: CUDA loads kernels lazily, so the first real
 * batch does not pay for it, and a model that fails to run fails its load. */
static int warm_up(struct cuda_x *x, struct cmodel *cm, const char *who, char *err, size_t errlen)
{
	int rc = 0;
	CU(cudaMemsetAsync(cm->d_in, 0, cm->in_bytes, x->stream), "cudaMemsetAsync (warm-up input)");
	if ((rc = enqueue(x, cm, 1, who, err, errlen)))
		goto fail;
	CU(cudaStreamSynchronize(x->stream), "the warm-up batch (cudaStreamSynchronize)");
	return 0;
fail:
	(void)cudaStreamSynchronize(x->stream);
	return rc;
}

static int cu_load(struct sym_executor *xe, int id, const struct sym_model_desc *m, char *err, size_t errlen)
{
	struct cuda_x *x = (struct cuda_x *)xe;
	if (id < 0 || id >= MAX_MODELS || !m || !m->profile)
		return ERR(-EINVAL, "cuda executor: model id %d is not within 0..%d", id, MAX_MODELS - 1);
	const char *name = m->name ? m->name : m->profile->name;
	char who[160], msg[512];
	snprintf(who, sizeof(who), "model '%s'", name);
	struct cmodel *cm = calloc(1, sizeof(*cm));
	if (!cm)
		return ERR(-ENOMEM, "cuda executor: out of memory");
	snprintf(cm->name, sizeof(cm->name), "%s", name);
	cm->max_batch = m->profile->max_batch;
	cm->in_bytes = sym_tensor_bytes(&m->input);
	cm->out_bytes = sym_tensor_bytes(&m->output);
	int rc = -EINVAL;
	if (cm->max_batch < 1 || cm->in_bytes < 1 || cm->out_bytes < 1 || cm->in_bytes > UINT32_MAX ||
	    cm->out_bytes > UINT32_MAX) {
		rc = ERR(rc, "cuda executor: %s: its batch size or signature is empty or too large", who);
		goto fail;
	}
	if ((rc = sym_cuda_spec_parse(m->spec, x->model_lib, &cm->spec, msg, sizeof(msg)))) {
		rc = ERR(rc, "cuda executor: %s: runtime.models.%s.executor: %s", who, name, msg);
		goto fail;
	}
	const struct sym_cuda_builtin *net = &cm->spec.net;
	if (cm->spec.is_builtin && (rc = sym_cuda_builtin_check_sig(net, &m->input, &m->output, msg, sizeof(msg)))) {
		rc = ERR(rc, "cuda executor: %s: %s (set runtime.models.%s.input and .output to match)", who, msg,
			 name);
		goto fail;
	}
	CU(cudaSetDevice(x->device), "cudaSetDevice");
	size_t free_b = 0, total_b = 0, after = 0;
	CU(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
	/* the fit check, before anything is allocated */
	uint64_t st = cm->spec.is_builtin ? net->nparams * sizeof(float) : 0;
	cm->dyn_per_sample =
		cm->in_bytes + cm->out_bytes + (cm->spec.is_builtin ? 2 * net->max_act * sizeof(float) : 0);
	uint64_t dyn = cm->dyn_per_sample * (uint64_t)cm->max_batch;
	if (st + dyn > free_b) {
		char h[5][32];
		rc = ERR(-ENOSPC,
			 "cuda executor: %s does not fit on GPU %d (%s): it needs %s (%s static for weights, %s "
			 "dynamic for inputs, outputs and activations of a batch of %d), %s of %s are free",
			 who, x->device, x->gpu, human(st + dyn, h[0]), human(st, h[1]), human(dyn, h[2]),
			 cm->max_batch, human(free_b, h[3]), human(total_b, h[4]));
		goto fail;
	}
	if (cm->spec.is_builtin) {
		if ((rc = builtin_upload(cm, who, err, errlen)))
			goto fail;
		CU(cudaMemGetInfo(&after, &total_b), "cudaMemGetInfo");
		cm->static_bytes = after < free_b && free_b - after > st ? free_b - after : st;
		for (int i = 0; i < 2 && net->max_act; i++)
			CU(cudaMalloc((void **)&cm->d_act[i], net->max_act * sizeof(float) * (size_t)cm->max_batch),
			   "cudaMalloc (activations)");
	}
	CU(cudaMalloc(&cm->d_in, cm->in_bytes * (size_t)cm->max_batch), "cudaMalloc (inputs)");
	CU(cudaMalloc(&cm->d_out, cm->out_bytes * (size_t)cm->max_batch), "cudaMalloc (outputs)");
	cudaError_t e;
	if ((e = cudaMallocHost((void **)&cm->h_in, cm->in_bytes * (size_t)cm->max_batch)) != cudaSuccess ||
	    (e = cudaMallocHost((void **)&cm->h_out, cm->out_bytes * (size_t)cm->max_batch)) != cudaSuccess) {
		rc = cu_fail(err, errlen, who, "cudaMallocHost (pinned staging)", e);
		rc = rc == -ENOSPC ? -ENOMEM : rc;
		goto fail;
	}
	if ((!cm->spec.is_builtin && (rc = plugin_load(x, cm, m, who, err, errlen))) ||
	    (rc = warm_up(x, cm, who, err, errlen)))
		goto fail;
	free_model(atomic_load(&x->models[id]));
	atomic_store(&x->models[id], cm);
	return 0;
fail:
	free_model(cm);
	return rc;
}

static int cu_memory(struct sym_executor *xe, int id, int b, struct sym_model_memory *out)
{
	struct cuda_x *x = (struct cuda_x *)xe;
	const struct cmodel *cm = id >= 0 && id < MAX_MODELS ? atomic_load(&x->models[id]) : NULL;
	if (!cm || b < 1 || b > cm->max_batch)
		return -EINVAL;
	uint64_t dyn = cm->dyn_per_sample * (uint64_t)b, st, pdyn;
	if (cm->api && cm->api->memory && !cm->api->memory(cm->state, b, &st, &pdyn))
		dyn += pdyn;
	out->static_mb = (double)cm->static_bytes / MIB;
	out->dynamic_mb = (double)dyn / MIB;
	return 0;
}

static int cu_run(struct sym_executor *xe, int id, const struct sym_batch_io *io, sym_time start, sym_time *began,
		  sym_time *ended, char *err, size_t errlen)
{
	struct cuda_x *x = (struct cuda_x *)xe;
	struct cmodel *cm = id >= 0 && id < MAX_MODELS ? atomic_load(&x->models[id]) : NULL;
	if (!cm)
		return ERR(-EINVAL, "cuda executor: model %d is not loaded", id);
	char who[160];
	snprintf(who, sizeof(who), "model '%s'", cm->name);
	if (io->n < 1 || io->n > cm->max_batch)
		return ERR(-EINVAL, "cuda executor: batch of %d for %s (1..%d)", io->n, who, cm->max_batch);
	if (io->out_cap < cm->out_bytes)
		return ERR(-EINVAL, "cuda executor: output buffers of %u bytes, %s gives %zu", io->out_cap, who,
			   cm->out_bytes);
	for (int i = 0; i < io->n; i++) {
		if (io->lens[i] != cm->in_bytes)
			return ERR(-EINVAL, "cuda executor: input %d of the batch has %u bytes, %s takes %zu", i,
				   io->lens[i], who, cm->in_bytes);
		memcpy(cm->h_in + (size_t)i * cm->in_bytes, io->inputs[i], cm->in_bytes);
	}
	size_t n = (size_t)io->n;
	int rc = 0;
	CU(cudaSetDevice(x->device), "cudaSetDevice");
	*began = sym_wait_until(start, x->spin);
	CU(cudaMemcpyAsync(cm->d_in, cm->h_in, n * cm->in_bytes, cudaMemcpyHostToDevice, x->stream),
	   "cudaMemcpyAsync (inputs)");
	if ((rc = enqueue(x, cm, io->n, who, err, errlen)))
		goto fail;
	CU(cudaMemcpyAsync(cm->h_out, cm->d_out, n * cm->out_bytes, cudaMemcpyDeviceToHost, x->stream),
	   "cudaMemcpyAsync (outputs)");
	CU(cudaStreamSynchronize(x->stream), "the batch (cudaStreamSynchronize)");
	*ended = sym_monotonic_ns();
	for (size_t i = 0; i < n; i++) {
		memcpy(io->outputs[i], cm->h_out + i * cm->out_bytes, cm->out_bytes);
		io->out_lens[i] = (uint32_t)cm->out_bytes;
	}
	return 0;
fail:
	(void)cudaStreamSynchronize(x->stream); /* nothing of this batch stays in flight */
	return rc;
}

static void cu_destroy(struct sym_executor *xe)
{
	struct cuda_x *x = (struct cuda_x *)xe;
	if (!x)
		return;
	(void)cudaSetDevice(x->device);
	for (int i = 0; i < MAX_MODELS; i++)
		free_model(atomic_load(&x->models[i]));
	if (x->stream)
		cudaStreamDestroy(x->stream);
	free(x->model_lib);
	free(x);
}

/* Frees what the model holds on the GPU (cudaFree waits for the device:
 * the batch running another model finishes first). */
static int cu_unload(struct sym_executor *xe, int id, char *err, size_t errlen)
{
	struct cuda_x *x = (struct cuda_x *)xe;
	struct cmodel *cm = id >= 0 && id < MAX_MODELS ? atomic_load(&x->models[id]) : NULL;
	if (!cm)
		return ERR(-EINVAL, "cuda executor: model %d is not loaded", id);
	(void)cudaSetDevice(x->device);
	atomic_store(&x->models[id], NULL);
	free_model(cm);
	return 0;
}

static const struct sym_executor_ops cuda_ops = { "cuda", cu_load, cu_run, cu_unload, cu_memory, cu_destroy };

/* Why cudaGetDeviceCount failed, in a phrase. */
static const char *explain(cudaError_t e, char *buf, size_t len)
{
	int v = 0;
	(void)cudaRuntimeGetVersion(&v);
	if (e == cudaErrorInsufficientDriver)
		snprintf(buf, len, "no NVIDIA driver is loaded on this machine, or it is older than CUDA %d.%d needs",
			 v / 1000, v % 1000 / 10);
	else if (e == cudaErrorNoDevice)
		snprintf(buf, len, "no CUDA-capable GPU is visible; see nvidia-smi and CUDA_VISIBLE_DEVICES");
	else
		snprintf(buf, len, "%s", cudaGetErrorString(e));
	return buf;
}

struct sym_executor *sym_executor_cuda(const struct sym_executor_opts *o, char *err, size_t errlen)
{
	struct sym_executor_opts none = { 0 };
	if (!o)
		o = &none;
	char why[160];
	int n = 0, rc = 0;
	const char *who = "";
	struct cuda_x *x = NULL;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess || n < 1) {
		if (e == cudaSuccess)
			e = cudaErrorNoDevice;
		snprintf(err, errlen, "cuda executor: cudaGetDeviceCount failed: %s (%s; use --executor emulated)",
			 cudaGetErrorName(e), explain(e, why, sizeof(why)));
		return NULL;
	}
	if (o->device < 0 || o->device >= n) {
		snprintf(err, errlen, "cuda executor: there is no CUDA device %d (this machine has %d: 0..%d)",
			 o->device, n, n - 1);
		return NULL;
	}
	CU(cudaSetDevice(o->device), "cudaSetDevice");
	struct cudaDeviceProp p;
	CU(cudaGetDeviceProperties(&p, o->device), "cudaGetDeviceProperties");
	if (p.major < 8) {
		snprintf(err, errlen,
			 "cuda executor: GPU %d (%s) has compute capability %d.%d; this build runs on 8.0 "
			 "and newer",
			 o->device, p.name, p.major, p.minor);
		return NULL;
	}
	if (!(x = calloc(1, sizeof(*x))) || (o->model_lib && !(x->model_lib = strdup(o->model_lib)))) {
		snprintf(err, errlen, "cuda executor: out of memory");
		goto fail;
	}
	x->base.ops = &cuda_ops;
	x->device = o->device;
	x->spin = o->spin_ns > 0 ? o->spin_ns : DEFAULT_SPIN;
	snprintf(x->gpu, sizeof(x->gpu), "%s", p.name);
	CU(cudaStreamCreateWithFlags(&x->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
	return &x->base;
fail:
	(void)rc;
	cu_destroy(x ? &x->base : NULL);
	return NULL;
}

int sym_executor_cuda_built(void)
{
	return 1;
}
