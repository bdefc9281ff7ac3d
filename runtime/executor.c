#define _GNU_SOURCE /* dladdr: where symphony-runtime.so is, to find the modules beside it */
#include <dlfcn.h>
#include "runtime/executor.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/memory.h"

#define MAX_MODELS 4096

uint64_t sym_exec_digest(const void *data, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

void sym_model_desc_default(struct sym_model_desc *m, const char *name, const struct sym_profile *p,
			    size_t input_bytes)
{
	memset(m, 0, sizeof(*m));
	m->name = name;
	m->profile = p;
	m->file_mb = -1;
	m->version = 1;
	int64_t in = input_bytes ? (int64_t)input_bytes : 1, out = 1;
	sym_tensor_sig_set(&m->input, "INPUT0", SYM_DT_UINT8, 1, &in);
	sym_tensor_sig_set(&m->output, "OUTPUT0", SYM_DT_UINT64, 1, &out);
}

void sym_exec_fill_output(uint64_t d, void *out, size_t len)
{
	unsigned char *o = out;
	for (size_t k = 0; k < len; k++)
		o[k] = (unsigned char)(d >> (8 * (k % 8)));
}

struct emulated {
	struct sym_executor base;
	sym_time spin;
	double memory_mb, load_mbps, load_ms;
	/* written by the loading thread for a model no batch runs, read by the running one */
	_Atomic(const struct sym_profile *) models[MAX_MODELS];
	uint32_t out_bytes[MAX_MODELS];
};

/* What the loaded models but `skip`, plus `extra`, need on the device by the
 * memory rule (core/memory.h), in MB. */
static double emu_footprint(struct emulated *e, int skip, const struct sym_profile *extra)
{
	struct sym_mem use = { 0, 0 };
	for (int i = 0; i <= MAX_MODELS; i++) {
		const struct sym_profile *p = i == skip ? NULL : i < MAX_MODELS ? atomic_load(&e->models[i]) : extra;
		if (p)
			sym_mem_add_profile(&use, p);
	}
	return sym_mem_need(&use);
}

static int emu_load(struct sym_executor *x, int id, const struct sym_model_desc *m, char *err, size_t errlen)
{
	struct emulated *e = (struct emulated *)x;
	if (id < 0 || id >= MAX_MODELS || !m || !m->profile)
		return snprintf(err, errlen, "emulated executor: model id %d is not within 0..%d", id, MAX_MODELS - 1),
		       -EINVAL;
	size_t ob = sym_tensor_bytes(&m->output);
	if (ob < 1 || ob > UINT32_MAX)
		return snprintf(err, errlen, "emulated executor: model '%s': its output signature is empty or too large",
				m->name ? m->name : m->profile->name), -EINVAL;
	const char *name = m->name ? m->name : m->profile->name;
	double need = emu_footprint(e, id, m->profile); /* (a model loaded again replaces itself) */
	if (e->memory_mb > 0 && need > e->memory_mb)
		return snprintf(err, errlen, "emulated executor: model '%s' does not fit: the models loaded and it need "
					     "%.0f MB, the GPU has %.0f", name, need, e->memory_mb), -ENOSPC;
	/* the time the model's weights take to reach the GPU */
	double mb = m->file_mb >= 0 ? m->file_mb : m->profile->static_mb > 0 ? m->profile->static_mb : 0;
	double hold_ms = (e->load_mbps > 0 ? mb / e->load_mbps * 1e3 : 0) + (e->load_ms > 0 ? e->load_ms : 0);
	if (hold_ms > 0)
		sym_wait_until(sym_monotonic_ns() + (sym_time)(hold_ms * 1e6), 0);
	e->out_bytes[id] = (uint32_t)ob;
	atomic_store(&e->models[id], m->profile);
	return 0;
}

static int emu_unload(struct sym_executor *x, int id, char *err, size_t errlen)
{
	struct emulated *e = (struct emulated *)x;
	if (id < 0 || id >= MAX_MODELS || !atomic_load(&e->models[id]))
		return snprintf(err, errlen, "emulated executor: model %d is not loaded", id), -EINVAL;
	atomic_store(&e->models[id], NULL);
	return 0;
}

static int emu_memory(struct sym_executor *x, int id, int b, struct sym_model_memory *out)
{
	struct emulated *e = (struct emulated *)x;
	const struct sym_profile *p = id >= 0 && id < MAX_MODELS ? atomic_load(&e->models[id]) : NULL;
	if (!p || b < 1 || b > p->max_batch)
		return -EINVAL;
	out->static_mb = p->static_mb;
	out->dynamic_mb = p->dynamic_mb; /* a batch's, whatever its size (core/memory.h) */
	return 0;
}

static int emu_run(struct sym_executor *x, int id, const struct sym_batch_io *io, sym_time start, sym_time *began,
		   sym_time *ended, char *err, size_t errlen)
{
	struct emulated *e = (struct emulated *)x;
	const struct sym_profile *p = id >= 0 && id < MAX_MODELS ? atomic_load(&e->models[id]) : NULL;
	if (!p)
		return snprintf(err, errlen, "emulated executor: model %d is not loaded", id), -EINVAL;
	if (io->n < 1 || io->n > p->max_batch)
		return snprintf(err, errlen, "emulated executor: batch of %d for model '%s' (1..%d)", io->n, p->name,
				p->max_batch), -EINVAL;
	uint32_t ob = e->out_bytes[id];
	if (io->out_cap < ob)
		return snprintf(err, errlen, "emulated executor: output buffers of %u bytes, need %u", io->out_cap, ob),
		       -EINVAL;
	sym_time b = sym_wait_until(start, e->spin);
	/* the outputs are computed while the "GPU" runs: they cost no extra time */
	for (int i = 0; i < io->n; i++) {
		sym_exec_fill_output(sym_exec_digest(io->inputs[i], io->lens[i]), io->outputs[i], ob);
		io->out_lens[i] = ob;
	}
	*began = b;
	*ended = sym_wait_until(b + p->lat[io->n], e->spin);
	return 0;
}

static void emu_destroy(struct sym_executor *x)
{
	free(x);
}

static const struct sym_executor_ops emulated_ops = { "emulated", emu_load, emu_run, emu_unload, emu_memory,
							emu_destroy };

struct sym_executor *sym_executor_emulated(const struct sym_executor_opts *o)
{
	struct emulated *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->base.ops = &emulated_ops;
	e->spin = o && o->spin_ns > 0 ? o->spin_ns : 200 * SYM_US;
	if (o) {
		e->memory_mb = o->memory_mb;
		e->load_mbps = o->load_mbps;
		e->load_ms = o->load_ms;
	}
	return &e->base;
}

struct sym_executor *sym_executor_open(const char *name, const struct sym_executor_opts *o, char *err, size_t errlen)
{
	struct sym_executor_opts none = { 0 };
	if (!o)
		o = &none;
	if (name && !strcmp(name, "emulated")) {
		struct sym_executor *x = sym_executor_emulated(o);
		if (!x)
			snprintf(err, errlen, "emulated executor: out of memory");
		return x;
	}
	if (name && !strcmp(name, "cuda"))
		return sym_executor_cuda(o, err, errlen);
	if (name && !strcmp(name, "torch"))
		return sym_executor_torch(o, err, errlen);
	snprintf(err, errlen, "unknown executor '%s' (expected emulated, cuda or torch)", name ? name : "");
	return NULL;
}

#ifndef SYM_HAVE_CUDA
struct sym_executor *sym_executor_cuda(const struct sym_executor_opts *o, char *err, size_t errlen)
{
	(void)o;
	snprintf(err, errlen, "cuda executor: this build of symphony has no CUDA support (nvcc was not found when it "
			      "was configured; put /usr/local/cuda/bin on PATH and reconfigure)");
	return NULL;
}

int sym_executor_cuda_built(void)
{
	return 0;
}
#endif

void sym_module_beside(const char *name, char *out, size_t len)
{
	Dl_info info;
	out[0] = '\0';
	if (dladdr((void *)&sym_module_beside, &info) && info.dli_fname && strchr(info.dli_fname, '/')) {
		snprintf(out, len, "%s", info.dli_fname);
		*strrchr(out, '/') = '\0';
		size_t l = strlen(out);
		snprintf(out + l, len - l, "/%s", name);
	}
}

/* The TorchScript executor is a module of its own (symphony-torch.so, from
 * runtime/torch/), loaded here only when a process asks for it: libtorch
 * takes most of a second to load (about 2 s under ThreadSanitizer), which
 * every runtime process paid while it was linked in. The module is looked
 * for where $SYM_TORCH_MODULE says, else beside the object this function is
 * in (symphony-runtime.so, in the build tree or LIBDIR/symphony once
 * installed), else in LIBDIR/symphony. It is never unloaded (libtorch does
 * not support it). */
#ifdef SYM_HAVE_TORCH
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <unistd.h>

#include "sym_version.h"

#define TORCH_MODULE_NAME "symphony-torch.so"

typedef __typeof__(sym_torch_module_open) *torch_open_fn;

static pthread_mutex_t torch_lock = PTHREAD_MUTEX_INITIALIZER;
static torch_open_fn torch_open;
static char torch_why[2048];

static void torch_find(void)
{
	char beside[PATH_MAX + 64];
	sym_module_beside(TORCH_MODULE_NAME, beside, sizeof(beside));
	const char *env = getenv("SYM_TORCH_MODULE");
	const char *tried[3] = { env && env[0] ? env : NULL, beside[0] ? beside : NULL, SYM_TORCH_MODULE };
	size_t used = 0;
	torch_why[0] = '\0';
	for (int i = 0; i < 3 && !torch_open; i++) {
		if (!tried[i] || (i > 0 && access(tried[i], F_OK)))
			continue;
		if (i == 0 && access(tried[i], F_OK)) {
			snprintf(torch_why, sizeof(torch_why), "SYM_TORCH_MODULE=%.1500s does not exist", tried[i]);
			return;
		}
		void *m = dlopen(tried[i], RTLD_NOW | RTLD_LOCAL);
		if (m)
			*(void **)&torch_open = dlsym(m, "sym_torch_module_open");
		if (!torch_open) {
			const char *e = dlerror(); /* names the file */
			used += (size_t)snprintf(torch_why + used, sizeof(torch_why) - used, "%s%.900s%s%.900s", used ? "; " : "",
						 e ? "" : tried[i], e ? "" : ": ", e ? e : "no sym_torch_module_open");
			if (used >= sizeof(torch_why))
				used = sizeof(torch_why) - 1;
		}
		if (i == 0)
			return; /* asked for this one: no other */
	}
	if (!torch_open && !torch_why[0])
		snprintf(torch_why, sizeof(torch_why), "%s was found neither beside %.900s nor at %.900s", TORCH_MODULE_NAME,
			 beside[0] ? beside : "(this program)", SYM_TORCH_MODULE);
}

struct sym_executor *sym_executor_torch(const struct sym_executor_opts *o, char *err, size_t errlen)
{
	pthread_mutex_lock(&torch_lock);
	if (!torch_open)
		torch_find();
	torch_open_fn open = torch_open;
	pthread_mutex_unlock(&torch_lock);
	if (!open) {
		snprintf(err, errlen, "torch executor: cannot load its module: %s", torch_why);
		return NULL;
	}
	struct sym_executor_abi abi = sym_executor_abi_here();
	return open(&abi, o, err, errlen);
}

int sym_executor_torch_built(void)
{
	return 1;
}
#else
struct sym_executor *sym_executor_torch(const struct sym_executor_opts *o, char *err, size_t errlen)
{
	(void)o;
	snprintf(err, errlen, "torch executor: this build has no TorchScript support (libtorch-dev was not found when "
			      "it was configured, or -Dtorch=disabled; install it, e.g. with scripts/setup, and "
			      "reconfigure)");
	return NULL;
}

int sym_executor_torch_built(void)
{
	return 0;
}
#endif
