/* tests/test_cuda.c - the cuda executor on a GPU.
 *
 * Everywhere: opening the cuda executor either works, or fails with a message
 * that names the CUDA error (a build without CUDA: that it has none). Without
 * a GPU the rest is skipped (exit 77). With one:
 *   - the mlp and cnn built-ins (and odd sizes that do not fill the kernels'
 *     thread blocks) give the CPU reference's outputs (runtime/cuda/cuda_models.h) within
 *     a tolerance, for batches of several sizes;
 *   - the example plugin (argv[1], y = a*x + b) by spec and by --model-lib;
 *     plugin errors: no such library, no entry point, another ABI (argv[2]);
 *   - a signature mismatch and a model larger than the GPU are refused;
 *   - memory: static and dynamic(b) = b * dynamic(1);
 *   - began >= start, ended > began, and latency is a straight line in the batch size
 *     (a least-squares fit over batches of 1..64 with R^2 > 0.95, 64 over 4x of 1);
 *   - bad runs (unloaded model, batch sizes, input lengths, small outputs) are refused.
 * Args: [example plugin path] [bad-ABI plugin path].
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_fit.h>

#include "runtime/cuda/cuda_models.h"
#include "runtime/executor.h"
#include "testutil.h"

/* CUDA under AddressSanitizer needs the shadow gap unprotected; its driver's
 * allocations at exit are not ours. */
#if defined(__SANITIZE_ADDRESS__)
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "protect_shadow_gap=0";
}
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libcuda.so\nleak:libcudart.so\n";
}
#endif

static const char *plugin_path, *badabi_path;
static int have_gpu;

struct model {
	struct sym_profile p;
	cJSON *spec;
	struct sym_model_desc d;
	struct sym_cuda_builtin net; /* a built-in's */
};

/* A model named name with max_batch, the given spec (NULL: none) and, for a
 * built-in, its signature; else FP32 [elems] -> FP32 [elems]. */
static struct model *model_new(const char *name, const char *spec, int max_batch, int64_t elems)
{
	struct model *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	assert_int_equal(sym_profile_init_linear(&m->p, name, 0.1, 0.1, max_batch), 0);
	sym_model_desc_default(&m->d, m->p.name, &m->p, 16);
	if (spec) {
		m->spec = cJSON_Parse(spec);
		assert_non_null(m->spec);
		m->d.spec = m->spec;
	}
	char err[512];
	if (spec && strstr(spec, "builtin")) {
		assert_int_equal(sym_cuda_builtin_parse(m->spec, &m->net, err, sizeof(err)), 0);
		m->d.input = m->net.input;
		m->d.output = m->net.output;
	} else {
		sym_tensor_sig_set(&m->d.input, "INPUT0", SYM_DT_FP32, 1, &elems);
		sym_tensor_sig_set(&m->d.output, "OUTPUT0", SYM_DT_FP32, 1, &elems);
	}
	return m;
}

/* Gives m the emulated executor's default signature (UINT8 [bytes] -> UINT64 [1]); it keeps its spec. */
static void model_default_sig(struct model *m, size_t bytes)
{
	sym_model_desc_default(&m->d, m->p.name, &m->p, bytes);
	m->d.spec = m->spec;
}

static void model_free(struct model *m)
{
	cJSON_Delete(m->spec);
	sym_profile_finish(&m->p);
	free(m);
}

static struct sym_executor *open_gpu(const char *model_lib)
{
	struct sym_executor_opts o = { .device = 0, .model_lib = model_lib };
	char err[512];
	struct sym_executor *x = sym_executor_open("cuda", &o, err, sizeof(err));
	if (!x)
		print_error("%s\n", err);
	assert_non_null(x);
	assert_string_equal(x->ops->name, "cuda");
	return x;
}

/* A batch of n requests of model m: inputs uniform in [-1, 1) from seed. */
struct batch {
	int n;
	size_t in_bytes, out_bytes;
	float *in, *out;
	const void **inputs;
	void **outputs;
	uint32_t *lens, *out_lens;
	struct sym_batch_io io;
};

static struct batch *batch_new(const struct model *m, int n, uint64_t seed)
{
	struct batch *b = calloc(1, sizeof(*b));
	assert_non_null(b);
	b->n = n;
	b->in_bytes = sym_tensor_bytes(&m->d.input);
	b->out_bytes = sym_tensor_bytes(&m->d.output);
	b->in = malloc((size_t)n * b->in_bytes);
	b->out = calloc((size_t)n, b->out_bytes);
	b->inputs = calloc((size_t)n, sizeof(void *));
	b->outputs = calloc((size_t)n, sizeof(void *));
	b->lens = calloc((size_t)n, sizeof(uint32_t));
	b->out_lens = calloc((size_t)n, sizeof(uint32_t));
	assert_true(b->in && b->out && b->inputs && b->outputs && b->lens && b->out_lens);
	for (size_t i = 0; i < (size_t)n * b->in_bytes / sizeof(float); i++)
		b->in[i] = sym_cuda_uniform(&seed, 1.0f);
	for (int i = 0; i < n; i++) {
		b->inputs[i] = (const char *)b->in + (size_t)i * b->in_bytes;
		b->outputs[i] = (char *)b->out + (size_t)i * b->out_bytes;
		b->lens[i] = (uint32_t)b->in_bytes;
	}
	b->io = (struct sym_batch_io){ n, b->inputs, b->lens, b->outputs, (uint32_t)b->out_bytes, b->out_lens };
	return b;
}

static void batch_free(struct batch *b)
{
	free(b->in);
	free(b->out);
	free(b->inputs);
	free(b->outputs);
	free(b->lens);
	free(b->out_lens);
	free(b);
}

/* Runs b on model id, starting 1 ms from now; returns ended - began. */
static sym_time run_ok(struct sym_executor *x, int id, struct batch *b)
{
	char err[512];
	sym_time start = sym_monotonic_ns() + 1 * SYM_MS, began = 0, ended = 0;
	int rc = x->ops->run(x, id, &b->io, start, &began, &ended, err, sizeof(err));
	if (rc)
		print_error("run: %s\n", err);
	assert_int_equal(rc, 0);
	assert_true(began >= start);
	assert_true(ended > began);
	for (int i = 0; i < b->n; i++)
		assert_int_equal(b->out_lens[i], b->out_bytes);
	return ended - began;
}

/* The GPU's outputs against the CPU reference's. */
static void check_builtin(const struct model *m, const struct batch *b)
{
	float *p = malloc(m->net.nparams * sizeof(float)), *want = malloc((size_t)b->n * b->out_bytes);
	assert_true(p && want);
	sym_cuda_builtin_init_params(&m->net, p);
	assert_int_equal(sym_cuda_builtin_ref(&m->net, p, b->n, b->in, want), 0);
	double worst = 0;
	for (size_t i = 0; i < (size_t)b->n * m->net.out_elems; i++) {
		double d = fabs((double)b->out[i] - want[i]) / (1 + fabs(want[i]));
		if (!(d <= worst))
			worst = d;
	}
	print_message("%s: batch of %d: worst |gpu - cpu| / (1 + |cpu|) %.3g\n", m->p.name, b->n, worst);
	assert_true(worst < 1e-3);
	free(p);
	free(want);
}

static void test_open(void **state)
{
	(void)state;
	char err[512] = "";
	struct sym_executor *x = sym_executor_open("cuda", NULL, err, sizeof(err));
	if (!sym_executor_cuda_built()) {
		assert_null(x);
		assert_contains(err, "no CUDA support");
		print_message("no CUDA in this build: %s\n", err);
		return;
	}
	if (!x) {
		assert_contains(err, "cuda executor: cudaGetDeviceCount failed: cudaError");
		assert_contains(err, "use --executor emulated");
		print_message("no GPU here: %s\n", err);
		return;
	}
	have_gpu = 1;
	x->ops->destroy(x);
	struct sym_executor_opts o = { .device = 99 };
	assert_null(sym_executor_open("cuda", &o, err, sizeof(err)));
	assert_contains(err, "there is no CUDA device 99");
	o.device = -1;
	assert_null(sym_executor_open("cuda", &o, err, sizeof(err)));
	assert_contains(err, "there is no CUDA device -1");
}

static void test_builtins(void **state)
{
	(void)state;
	struct sym_executor *x = open_gpu(NULL);
	struct model *ms[] = {
		model_new("mlp", "{\"builtin\": \"mlp\", \"layers\": [784, 1024, 1024, 10], \"seed\": 1}", 64, 0),
		model_new("cnn",
			  "{\"builtin\": \"cnn\", \"input\": [3, 32, 32], \"channels\": [16, 32], \"classes\": 10, "
			  "\"seed\": 1}",
			  64, 0),
		model_new("mlp-odd", "{\"builtin\": \"mlp\", \"layers\": [37, 50, 17, 3], \"seed\": 3}", 64, 0),
		model_new("cnn-odd",
			  "{\"builtin\": \"cnn\", \"input\": [2, 7, 9], \"channels\": [5, 3], \"classes\": 19, "
			  "\"seed\": 4}",
			  64, 0),
		model_new("mlp-1", "{\"builtin\": \"mlp\", \"layers\": [3, 2]}", 64, 0),
	};
	char err[512];
	int nm = (int)(sizeof(ms) / sizeof(ms[0]));
	for (int i = 0; i < nm; i++) {
		int rc = x->ops->load(x, 10 + i, &ms[i]->d, err, sizeof(err));
		if (rc)
			print_error("load %s: %s\n", ms[i]->p.name, err);
		assert_int_equal(rc, 0);
	}
	static const int sizes[] = { 1, 3, 16, 17, 64 };
	for (int i = 0; i < nm; i++)
		for (int s = 0; s < 5; s++) {
			struct batch *b = batch_new(ms[i], sizes[s], 100 + (uint64_t)s);
			run_ok(x, 10 + i, b);
			check_builtin(ms[i], b);
			batch_free(b);
		}
	/* memory: the weights are static; dynamic grows with b */
	struct sym_model_memory m1, m8;
	assert_int_equal(x->ops->memory(x, 10, 1, &m1), 0);
	assert_int_equal(x->ops->memory(x, 10, 8, &m8), 0);
	print_message("mlp memory: static %.2f MiB, dynamic %.3f MiB for 1, %.3f MiB for 8\n", m1.static_mb,
		      m1.dynamic_mb, m8.dynamic_mb);
	assert_true(m1.static_mb >= ms[0]->net.nparams * 4.0 / (1 << 20));
	assert_true(m1.static_mb == m8.static_mb);
	assert_true(m1.dynamic_mb > 0);
	assert_near(m8.dynamic_mb, 8 * m1.dynamic_mb, 1e-9, "dynamic(8) = 8 dynamic(1)");
	assert_int_equal(x->ops->memory(x, 10, 65, &m1), -EINVAL);
	assert_int_equal(x->ops->memory(x, 10, 0, &m1), -EINVAL);
	assert_int_equal(x->ops->memory(x, 99, 1, &m1), -EINVAL);
	x->ops->destroy(x);
	for (int i = 0; i < nm; i++)
		model_free(ms[i]);
}

static void test_refusals(void **state)
{
	(void)state;
	struct sym_executor *x = open_gpu(NULL);
	char err[512];
	/* a signature that is not the built-in's */
	struct model *m = model_new("mnist", "{\"builtin\": \"mlp\", \"layers\": [784, 10]}", 8, 0);
	model_default_sig(m, 784);
	assert_int_equal(x->ops->load(x, 0, &m->d, err, sizeof(err)), -EINVAL);
	assert_contains(err, "model 'mnist': input is UINT8 [784], the builtin mlp takes FP32 [784]");
	assert_contains(err, "runtime.models.mnist.input");
	model_free(m);
	/* a bad spec names its key */
	m = model_new("bad", NULL, 8, 784);
	m->d.spec = m->spec = cJSON_Parse("{\"builtin\": \"mlp\", \"layers\": [784, 10], \"depth\": 3}");
	assert_int_equal(x->ops->load(x, 0, &m->d, err, sizeof(err)), -EINVAL);
	assert_contains(err, "runtime.models.bad.executor: builtin mlp: unknown key 'depth'");
	model_free(m);
	/* no spec and no default library */
	m = model_new("nospec", NULL, 8, 4);
	assert_int_equal(x->ops->load(x, 0, &m->d, err, sizeof(err)), -EINVAL);
	assert_contains(err, "no executor spec");
	model_free(m);
	/* larger than any GPU: 2^40 weights (4 TiB) */
	m = model_new("huge", "{\"builtin\": \"mlp\", \"layers\": [1048576, 1048576, 10]}", 8, 0);
	assert_int_equal(x->ops->load(x, 1, &m->d, err, sizeof(err)), -ENOSPC);
	print_message("%s\n", err);
	assert_contains(err, "model 'huge' does not fit on GPU 0");
	assert_contains(err, "it needs 4096.1 GiB (4096.0 GiB static for weights");
	assert_contains(err, "are free");
	model_free(m);
	assert_int_equal(x->ops->load(x, 4096, NULL, err, sizeof(err)), -EINVAL);
	/* runs: an unloaded model, bad batch sizes, input lengths and output buffers */
	m = model_new("small", "{\"builtin\": \"mlp\", \"layers\": [8, 4]}", 4, 0);
	assert_int_equal(x->ops->load(x, 2, &m->d, err, sizeof(err)), 0);
	struct batch *b = batch_new(m, 5, 1);
	sym_time began, ended, now = sym_monotonic_ns();
	assert_int_equal(x->ops->run(x, 3, &b->io, now, &began, &ended, err, sizeof(err)), -EINVAL);
	assert_contains(err, "model 3 is not loaded");
	assert_int_equal(x->ops->run(x, 2, &b->io, now, &began, &ended, err, sizeof(err)), -EINVAL);
	assert_contains(err, "batch of 5");
	b->io.n = 0;
	assert_int_equal(x->ops->run(x, 2, &b->io, now, &began, &ended, err, sizeof(err)), -EINVAL);
	b->io.n = 2;
	b->lens[1] = 31;
	assert_int_equal(x->ops->run(x, 2, &b->io, now, &began, &ended, err, sizeof(err)), -EINVAL);
	assert_contains(err, "input 1 of the batch has 31 bytes, model 'small' takes 32");
	b->lens[1] = 32;
	b->io.out_cap = 15;
	assert_int_equal(x->ops->run(x, 2, &b->io, now, &began, &ended, err, sizeof(err)), -EINVAL);
	assert_contains(err, "output buffers of 15 bytes");
	b->io.out_cap = 16;
	assert_int_equal(x->ops->run(x, 2, &b->io, now - SYM_S, &began, &ended, err, sizeof(err)), 0);
	batch_free(b);
	model_free(m);
	x->ops->destroy(x);
}

static void test_plugin(void **state)
{
	(void)state;
	if (!plugin_path)
		skip();
	char err[512], spec[1024];
	snprintf(spec, sizeof(spec), "{\"lib\": \"%s\", \"args\": {\"a\": 3, \"b\": -0.5}}", plugin_path);
	struct sym_executor *x = open_gpu(plugin_path);
	struct model *m = model_new("affine", spec, 32, 1000), *d = model_new("default", NULL, 32, 7);
	assert_int_equal(x->ops->load(x, 0, &m->d, err, sizeof(err)), 0);
	assert_int_equal(x->ops->load(x, 1, &d->d, err, sizeof(err)), 0); /* --model-lib, no args: 2x + 1 */
	for (int n = 1; n <= 32; n *= 4) {
		struct batch *b = batch_new(m, n, 7);
		run_ok(x, 0, b);
		for (int i = 0; i < n * 1000; i++)
			assert_near(b->out[i], 3.0 * b->in[i] - 0.5, 1e-5, "3x - 0.5");
		batch_free(b);
		b = batch_new(d, n, 8);
		run_ok(x, 1, b);
		for (int i = 0; i < n * 7; i++)
			assert_near(b->out[i], 2.0 * b->in[i] + 1, 1e-5, "2x + 1");
		batch_free(b);
	}
	struct sym_model_memory mem;
	assert_int_equal(x->ops->memory(x, 0, 4, &mem), 0);
	assert_near(mem.dynamic_mb * (1 << 20), 4 * 8000, 1e-6, "inputs and outputs of 4");
	/* the plugin checks the signature */
	struct model *u = model_new("u8", spec, 4, 16);
	model_default_sig(u, 16);
	assert_int_equal(x->ops->load(x, 2, &u->d, err, sizeof(err)), -EINVAL);
	assert_contains(err, "model 'u8': plugin");
	assert_contains(err, "example model: expected FP32 input and output");
	model_free(u);
	/* no such library, no entry point, another ABI */
	static const char *const bad[][2] = {
		{ "/nonexistent/libnothing.so", "cannot open plugin library: /nonexistent/libnothing.so: cannot open" },
		{ "libm.so.6", "plugin library 'libm.so.6' does not export symphony_model_api()" },
		{ NULL, "is built for model ABI 999, this symphony takes ABI 1" },
	};
	for (int i = 0; i < 3; i++) {
		const char *lib = bad[i][0] ? bad[i][0] : badabi_path;
		if (!lib)
			continue;
		snprintf(spec, sizeof(spec), "{\"lib\": \"%s\"}", lib);
		u = model_new("p", spec, 4, 16);
		assert_int_equal(x->ops->load(x, 3, &u->d, err, sizeof(err)), -EINVAL);
		assert_contains(err, bad[i][1]);
		model_free(u);
	}
	x->ops->destroy(x);
	model_free(m);
	model_free(d);
}

static int cmp_time(const void *a, const void *b)
{
	sym_time p = *(const sym_time *)a, q = *(const sym_time *)b;
	return (p > q) - (p < q);
}

/* The built-ins' latency is a straight line in the batch size (runtime/cuda/kernel_body.h). */
static void test_latency(void **state)
{
	(void)state;
	struct sym_executor *x = open_gpu(NULL);
	char err[512];
	struct model *m = model_new("mlp", "{\"builtin\": \"mlp\", \"layers\": [1024, 2048, 2048, 10]}", 64, 0);
	assert_int_equal(x->ops->load(x, 0, &m->d, err, sizeof(err)), 0);
	enum { NS = 6, REPS = 7 };
	static const int sizes[NS] = { 1, 8, 16, 32, 48, 64 };
	double bs[NS], ms[NS];
	for (int s = 0; s < NS; s++) {
		struct batch *b = batch_new(m, sizes[s], 5);
		sym_time t[REPS];
		run_ok(x, 0, b); /* warm-up */
		for (int r = 0; r < REPS; r++)
			t[r] = run_ok(x, 0, b);
		qsort(t, REPS, sizeof(t[0]), cmp_time);
		bs[s] = sizes[s];
		ms[s] = (double)t[REPS / 2] / 1e6;
		batch_free(b);
	}
	double beta, alpha, c00, c01, c11, sumsq, mean = 0, tot = 0;
	gsl_fit_linear(bs, 1, ms, 1, NS, &beta, &alpha, &c00, &c01, &c11, &sumsq);
	for (int s = 0; s < NS; s++)
		mean += ms[s] / NS;
	for (int s = 0; s < NS; s++)
		tot += (ms[s] - mean) * (ms[s] - mean);
	double r2 = tot > 0 ? 1 - sumsq / tot : 0;
	print_message("mlp 1024-2048-2048-10: median latency %.3f ms (batch 1) .. %.3f ms (64); fit alpha %.5f ms, "
		      "beta %.4f ms, R^2 %.4f\n",
		      ms[0], ms[NS - 1], alpha, beta, r2);
	assert_true(ms[NS - 1] > 4 * ms[0]);
	assert_true(alpha > 0);
	assert_true(r2 > 0.95);
	x->ops->destroy(x);
	model_free(m);
}

int main(int argc, char **argv)
{
	plugin_path = argc > 1 ? argv[1] : NULL;
	badabi_path = argc > 2 ? argv[2] : NULL;
	const struct CMUnitTest everywhere[] = {
		cmocka_unit_test(test_open),
	};
	int rc = cmocka_run_group_tests_name("cuda (everywhere)", everywhere, NULL, NULL);
	if (rc || !have_gpu)
		return rc ? rc : 77;
	const struct CMUnitTest gpu[] = {
		cmocka_unit_test(test_builtins),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_plugin),
		cmocka_unit_test(test_latency),
	};
	return cmocka_run_group_tests_name("cuda (GPU)", gpu, NULL, NULL);
}
