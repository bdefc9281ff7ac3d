/* tests/test_cudamodels.c - the cuda executor's plain C parts (runtime/cuda/cuda_models.h); no GPU needed.
 *
 *   - the signatures of the mlp and cnn built-ins, their layers, parameter counts and activations;
 *   - every bad spec (built-in or plugin) is refused with a message naming the key;
 *   - a model signature is checked against the built-in's, naming the expected one;
 *   - the weight generator is splitmix64 (its published first values), deterministic for a seed,
 *     within [-s, s], and its first values match an independent computation;
 *   - the CPU reference on a 2-2-1 MLP and two 1-channel CNNs computed by hand;
 *   - the GPU kernels' per-thread bodies (runtime/cuda/kernel_body.h), run on the CPU for every
 *     thread index with the device layout of the weights, give the reference's outputs.
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

#include "runtime/cuda/kernel_body.h"
#include "runtime/cuda/cuda_models.h"
#include "testutil.h"

static cJSON *parse(const char *text)
{
	cJSON *j = cJSON_Parse(text);
	assert_non_null(j);
	return j;
}

/* Parses the built-in spec text into b; returns what sym_cuda_builtin_parse returned. */
static int builtin(const char *text, struct sym_cuda_builtin *b, char *err, size_t errlen)
{
	cJSON *j = parse(text);
	int rc = sym_cuda_builtin_parse(j, b, err, errlen);
	cJSON_Delete(j);
	return rc;
}

static void test_signatures(void **state)
{
	(void)state;
	char err[512], s[128];
	struct sym_tensor_sig in, out;
	cJSON *j = parse("{\"builtin\": \"mlp\", \"layers\": [784, 1024, 1024, 10], \"seed\": 1}");
	assert_int_equal(sym_cuda_builtin_signature(j, &in, &out, err, sizeof(err)), 0);
	cJSON_Delete(j);
	assert_string_equal(sym_cuda_sig_str(&in, s, sizeof(s)), "FP32 [784]");
	assert_string_equal(sym_cuda_sig_str(&out, s, sizeof(s)), "FP32 [10]");
	assert_string_equal(in.name, "INPUT0");
	assert_string_equal(out.name, "OUTPUT0");
	j = parse(
		"{\"builtin\": \"cnn\", \"input\": [3, 32, 32], \"channels\": [16, 32], \"classes\": 10, \"seed\": 1}");
	assert_int_equal(sym_cuda_builtin_signature(j, &in, &out, err, sizeof(err)), 0);
	cJSON_Delete(j);
	assert_string_equal(sym_cuda_sig_str(&in, s, sizeof(s)), "FP32 [3, 32, 32]");
	assert_string_equal(sym_cuda_sig_str(&out, s, sizeof(s)), "FP32 [10]");
	assert_int_equal(sym_tensor_bytes(&in), 3 * 32 * 32 * 4);

	struct sym_cuda_builtin b;
	assert_int_equal(builtin("{\"builtin\": \"mlp\", \"layers\": [784, 1024, 1024, 10]}", &b, err, sizeof(err)), 0);
	assert_string_equal(b.kind, "mlp");
	assert_true(b.seed == 1); /* the default */
	assert_int_equal(b.nlayers, 3);
	assert_int_equal(b.nparams, 784 * 1024 + 1024 + 1024 * 1024 + 1024 + 1024 * 10 + 10);
	assert_int_equal(b.max_act, 1024);
	assert_int_equal(b.in_elems, 784);
	assert_int_equal(b.out_elems, 10);
	assert_true(b.layers[0].relu && b.layers[1].relu && !b.layers[2].relu);
	assert_int_equal(b.layers[1].w_off, 784 * 1024 + 1024);
	assert_int_equal(b.layers[1].b_off, 784 * 1024 + 1024 + 1024 * 1024);

	assert_int_equal(
		builtin("{\"builtin\": \"cnn\", \"input\": [3, 32, 32], \"channels\": [16, 32], \"classes\": 10,"
			" \"seed\": 5}",
			&b, err, sizeof(err)),
		0);
	assert_true(b.seed == 5);
	assert_int_equal(b.nlayers, 3);
	assert_int_equal(b.layers[0].kind, SYM_CUDA_CONV);
	assert_int_equal(b.layers[0].out_h, 16);
	assert_int_equal(b.layers[1].in_c, 16);
	assert_int_equal(b.layers[1].out_w, 8);
	assert_int_equal(b.layers[2].kind, SYM_CUDA_FC);
	assert_int_equal(b.layers[2].fan_in, 32 * 8 * 8);
	assert_int_equal(b.nparams, (16 * 27 + 16) + (32 * 16 * 9 + 32) + (10 * 2048 + 10));
	assert_int_equal(b.max_act, 16 * 16 * 16);
	/* odd sizes pool down (rows and columns left over are dropped) */
	assert_int_equal(builtin("{\"builtin\": \"cnn\", \"input\": [2, 7, 9], \"channels\": [4, 3], \"classes\": 5}",
				 &b, err, sizeof(err)),
			 0);
	assert_int_equal(b.layers[1].out_h, 1);
	assert_int_equal(b.layers[1].out_w, 2);
	assert_int_equal(b.layers[2].fan_in, 3 * 1 * 2);
	/* one layer: no activations between layers */
	assert_int_equal(builtin("{\"builtin\": \"mlp\", \"layers\": [5, 3]}", &b, err, sizeof(err)), 0);
	assert_int_equal(b.max_act, 0);
	assert_false(b.layers[0].relu);
}

static void test_bad_specs(void **state)
{
	(void)state;
	static const struct {
		const char *spec, *want;
	} bad[] = {
		{ "[1, 2]", "expected an object" },
		{ "{\"builtin\": \"rnn\"}", "key 'builtin': expected \"mlp\" or \"cnn\", got a string \"rnn\"" },
		{ "{\"builtin\": 3}", "key 'builtin'" },
		{ "{\"builtin\": \"mlp\"}", "builtin mlp: key 'layers': expected an array of 2..17" },
		{ "{\"builtin\": \"mlp\", \"layers\": [10]}", "key 'layers'" },
		{ "{\"builtin\": \"mlp\", \"layers\": {\"a\": 1}}", "key 'layers'" },
		{ "{\"builtin\": \"mlp\", \"layers\": [10, 0]}",
		  "key 'layers': element 1 is not an integer in 1..16777216" },
		{ "{\"builtin\": \"mlp\", \"layers\": [10, 2.5]}", "key 'layers': element 1" },
		{ "{\"builtin\": \"mlp\", \"layers\": [\"10\", 2]}", "key 'layers': element 0" },
		{ "{\"builtin\": \"mlp\", \"layers\": [10, 16777217]}", "key 'layers': element 1" },
		{ "{\"builtin\": \"mlp\", \"layers\": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18]}",
		  "key 'layers'" },
		{ "{\"builtin\": \"mlp\", \"layers\": [2, 2], \"seed\": -1}", "key 'seed'" },
		{ "{\"builtin\": \"mlp\", \"layers\": [2, 2], \"seed\": 1.5}", "key 'seed'" },
		{ "{\"builtin\": \"mlp\", \"layers\": [2, 2], \"seed\": \"1\"}",
		  "key 'seed': expected an integer in 0..2^53, "
		  "got a string" },
		{ "{\"builtin\": \"mlp\", \"layers\": [2, 2], \"dropout\": 0.1}",
		  "builtin mlp: unknown key 'dropout' (expected builtin, layers, seed)" },
		{ "{\"builtin\": \"mlp\", \"layers\": [2, 2], \"classes\": 3}", "unknown key 'classes'" },
		{ "{\"builtin\": \"cnn\", \"channels\": [4], \"classes\": 2}",
		  "builtin cnn: key 'input': expected an array "
		  "of 3 positive integers, got nothing" },
		{ "{\"builtin\": \"cnn\", \"input\": [3, 32], \"channels\": [4], \"classes\": 2}", "key 'input'" },
		{ "{\"builtin\": \"cnn\", \"input\": [3, 32, 32, 1], \"channels\": [4], \"classes\": 2}",
		  "key 'input'" },
		{ "{\"builtin\": \"cnn\", \"input\": [3, 0, 32], \"channels\": [4], \"classes\": 2}",
		  "key 'input': element 1" },
		{ "{\"builtin\": \"cnn\", \"input\": [1024, 1024, 1024], \"channels\": [4], \"classes\": 2}",
		  "key 'input': [1024, 1024, 1024] has more than" },
		{ "{\"builtin\": \"cnn\", \"input\": [3, 32, 32], \"classes\": 2}", "key 'channels'" },
		{ "{\"builtin\": \"cnn\", \"input\": [3, 32, 32], \"channels\": [], \"classes\": 2}",
		  "key 'channels'" },
		{ "{\"builtin\": \"cnn\", \"input\": [3, 4, 4], \"channels\": [8, 8, 8], \"classes\": 2}",
		  "key 'channels': entry 2 would pool a 1x1 map" },
		{ "{\"builtin\": \"cnn\", \"input\": [3, 4, 1], \"channels\": [8], \"classes\": 2}",
		  "key 'channels': entry 0" },
		{ "{\"builtin\": \"cnn\", \"input\": [3, 32, 32], \"channels\": [4]}",
		  "builtin cnn: key 'classes': expected an "
		  "integer in 1..16777216, got nothing" },
		{ "{\"builtin\": \"cnn\", \"input\": [3, 32, 32], \"channels\": [4], \"classes\": 0}",
		  "key 'classes'" },
		{ "{\"builtin\": \"cnn\", \"input\": [3, 32, 32], \"channels\": [4], \"classes\": 2, \"layers\": [1]}",
		  "builtin cnn: unknown key 'layers' (expected builtin, input, channels, classes, seed)" },
		{ "{\"builtin\": \"cnn\", \"input\": [3, 32, 32], \"channels\": [4], \"classes\": 2, \"seed\": true}",
		  "key 'seed'" },
	};
	char err[512];
	struct sym_cuda_spec *s = malloc(sizeof(*s));
	assert_non_null(s);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cJSON *j = parse(bad[i].spec);
		err[0] = 0;
		int rc = sym_cuda_spec_parse(j, "/lib/default.so", s, err, sizeof(err));
		if (rc != -EINVAL || !strstr(err, bad[i].want))
			print_error("spec %s: rc %d, message '%s', want '%s'\n", bad[i].spec, rc, err, bad[i].want);
		assert_int_equal(rc, -EINVAL);
		assert_contains(err, bad[i].want);
		struct sym_tensor_sig in, out;
		if (strstr(bad[i].spec, "builtin")) { /* the same message through the signature */
			char err2[512];
			assert_int_equal(sym_cuda_builtin_signature(j, &in, &out, err2, sizeof(err2)), -EINVAL);
			assert_string_equal(err, err2);
		}
		cJSON_Delete(j);
	}
	free(s);
}

static void test_plugin_specs(void **state)
{
	(void)state;
	char err[512];
	struct sym_cuda_spec *s = malloc(sizeof(*s));
	assert_non_null(s);
	static const struct {
		const char *spec, *want;
	} bad[] = {
		{ "{\"lib\": 3}", "plugin: key 'lib': expected the path of a shared library, got a number" },
		{ "{\"lib\": \"\"}", "key 'lib'" },
		{ "{\"lib\": \"/x.so\", \"args\": [1]}", "plugin: key 'args': expected an object, got an array" },
		{ "{\"lib\": \"/x.so\", \"arguments\": {}}", "plugin: unknown key 'arguments' (expected lib, args)" },
		{ "{\"args\": {}}", "plugin: key 'lib' is missing" },
		{ "\"mlp\"", "expected an object" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cJSON *j = parse(bad[i].spec);
		assert_int_equal(sym_cuda_spec_parse(j, NULL, s, err, sizeof(err)), -EINVAL);
		assert_contains(err, bad[i].want);
		cJSON_Delete(j);
	}
	/* no spec: the default library, else an error */
	assert_int_equal(sym_cuda_spec_parse(NULL, NULL, s, err, sizeof(err)), -EINVAL);
	assert_contains(err, "no executor spec");
	assert_contains(err, "--model-lib");
	assert_int_equal(sym_cuda_spec_parse(NULL, "/lib/default.so", s, err, sizeof(err)), 0);
	assert_false(s->is_builtin);
	assert_string_equal(s->lib, "/lib/default.so");
	assert_null(s->args);
	/* a spec without "lib" takes the default; its own "lib" wins */
	cJSON *j = parse("{\"args\": {\"a\": 3}}");
	assert_int_equal(sym_cuda_spec_parse(j, "/lib/default.so", s, err, sizeof(err)), 0);
	assert_string_equal(s->lib, "/lib/default.so");
	assert_true(cJSON_IsObject(s->args));
	cJSON_Delete(j);
	j = parse("{\"lib\": \"/opt/libfoo.so\"}");
	assert_int_equal(sym_cuda_spec_parse(j, "/lib/default.so", s, err, sizeof(err)), 0);
	assert_string_equal(s->lib, "/opt/libfoo.so");
	cJSON_Delete(j);
	/* a built-in wins over the default library */
	j = parse("{\"builtin\": \"mlp\", \"layers\": [4, 2]}");
	assert_int_equal(sym_cuda_spec_parse(j, "/lib/default.so", s, err, sizeof(err)), 0);
	assert_true(s->is_builtin);
	assert_int_equal(s->net.nparams, 10);
	cJSON_Delete(j);
	free(s);
}

static void test_check_sig(void **state)
{
	(void)state;
	char err[512];
	struct sym_cuda_builtin b;
	assert_int_equal(builtin("{\"builtin\": \"mlp\", \"layers\": [784, 10]}", &b, err, sizeof(err)), 0);
	struct sym_tensor_sig in, out;
	int64_t d16 = 16, d1 = 1, d784 = 784, d10 = 10, d28[2] = { 28, 28 };
	sym_tensor_sig_set(&in, "INPUT0", SYM_DT_UINT8, 1, &d16);
	sym_tensor_sig_set(&out, "OUTPUT0", SYM_DT_UINT64, 1, &d1);
	assert_int_equal(sym_cuda_builtin_check_sig(&b, &in, &out, err, sizeof(err)), -EINVAL);
	assert_contains(err, "input is UINT8 [16], the builtin mlp takes FP32 [784]");
	sym_tensor_sig_set(&in, "pixels", SYM_DT_FP32, 1, &d784);
	assert_int_equal(sym_cuda_builtin_check_sig(&b, &in, &out, err, sizeof(err)), -EINVAL);
	assert_contains(err, "output is UINT64 [1], the builtin mlp gives FP32 [10]");
	sym_tensor_sig_set(&out, "logits", SYM_DT_FP32, 1, &d10);
	assert_int_equal(sym_cuda_builtin_check_sig(&b, &in, &out, err, sizeof(err)), 0); /* names are free */
	sym_tensor_sig_set(&in, "INPUT0", SYM_DT_FP32, 2, d28); /* same bytes, another shape */
	assert_int_equal(sym_cuda_builtin_check_sig(&b, &in, &out, err, sizeof(err)), -EINVAL);
	assert_contains(err, "input is FP32 [28, 28]");
	sym_tensor_sig_set(&in, "INPUT0", SYM_DT_FP64, 1, &d784);
	assert_int_equal(sym_cuda_builtin_check_sig(&b, &in, &out, err, sizeof(err)), -EINVAL);
	assert_contains(err, "input is FP64 [784]");
}

static void test_weights(void **state)
{
	(void)state;
	/* splitmix64's published first outputs from state 0 */
	uint64_t st = 0;
	assert_true(sym_cuda_splitmix64(&st) == 0xe220a8397b1dcdafull);
	assert_true(sym_cuda_splitmix64(&st) == 0x6e789e6aa1b965f4ull);
	assert_true(sym_cuda_splitmix64(&st) == 0x06c45d188009454full);
	st = 42;
	for (int i = 0; i < 10000; i++) {
		float u = sym_cuda_uniform(&st, 0.5f);
		assert_true(u >= -0.5f && u < 0.5f);
	}
	char err[256];
	struct sym_cuda_builtin b;
	/* values computed independently (Python, double precision) */
	assert_int_equal(builtin("{\"builtin\": \"mlp\", \"layers\": [4, 3, 2], \"seed\": 7}", &b, err, sizeof(err)),
			 0);
	assert_int_equal(b.nparams, 23);
	float p[23], q[23];
	sym_cuda_builtin_init_params(&b, p);
	assert_near(p[0], -0.26986103150624213, 1e-6, "first weight");
	assert_near(p[12], 0.41801953315734863, 1e-6, "first bias");
	assert_near(p[22], -0.17962200015612384, 1e-6, "last bias");
	double sum = 0;
	for (int i = 0; i < 23; i++)
		sum += p[i];
	assert_near(sum, 0.34541091694677084, 1e-5, "sum of the parameters");
	/* deterministic: the same seed gives the same bits, another seed others; bounds per layer */
	sym_cuda_builtin_init_params(&b, q);
	assert_memory_equal(p, q, sizeof(p));
	for (int i = 0; i < 12; i++)
		assert_true(fabsf(p[i]) <= sqrtf(6.0f / 4));
	for (int i = 12; i < 15; i++)
		assert_true(fabsf(p[i]) <= 0.5f);
	for (int i = 15; i < 21; i++)
		assert_true(fabsf(p[i]) <= sqrtf(6.0f / 3));
	b.seed = 8;
	sym_cuda_builtin_init_params(&b, q);
	int same = 0;
	for (int i = 0; i < 23; i++)
		same += p[i] == q[i];
	assert_true(same < 3);
}

static void test_reference_by_hand(void **state)
{
	(void)state;
	char err[256];
	struct sym_cuda_builtin b;
	/* 2-2-1 MLP: h = ReLU(W0 x + b0), y = W1 h + b1 */
	assert_int_equal(builtin("{\"builtin\": \"mlp\", \"layers\": [2, 2, 1]}", &b, err, sizeof(err)), 0);
	const float mlp[] = { 1, -1, 2, 1, /* W0 */ 0, -1, /* b0 */ 3, -2, /* W1 */ 0.5f /* b1 */ };
	assert_int_equal(b.nparams, 9);
	const float x[] = { 1, 2, -1, 0.5f, 3, 2 };
	float y[3];
	assert_int_equal(sym_cuda_builtin_ref(&b, mlp, 3, x, y), 0);
	assert_near(y[0], -5.5, 1e-6, "x = (1, 2): h = (0, 3)");   /* h0 = 1-2 = -1 -> 0; h1 = 2+2-1 = 3 */
	assert_near(y[1], 0.5, 1e-6, "x = (-1, 0.5): h = (0, 0)"); /* h0 = -1.5 -> 0; h1 = -2+0.5-1 -> 0 */
	assert_near(y[2], -10.5, 1e-6, "x = (3, 2): h = (1, 7)");  /* 3*1 - 2*7 + 0.5 */

	/* CNN [1, 2, 2] -> conv (1 channel) + ReLU + pool -> FC to 1: y = 2 * pooled + 1 */
	assert_int_equal(builtin("{\"builtin\": \"cnn\", \"input\": [1, 2, 2], \"channels\": [1], \"classes\": 1}", &b,
				 err, sizeof(err)),
			 0);
	assert_int_equal(b.nparams, 9 + 1 + 1 + 1);
	float cnn[12] = { 0, 0, 0, 0, 1, 0, 0, 0, 0, /* identity kernel */ 0, /* bias */ 2, 1 /* FC */ };
	const float img[] = { -1, 3, 2, -5, -1, -2, -3, -4 };
	assert_int_equal(sym_cuda_builtin_ref(&b, cnn, 2, img, y), 0);
	assert_near(y[0], 7, 1e-6, "identity conv: 2 * max(ReLU(x)) + 1");
	assert_near(y[1], 1, 1e-6, "identity conv, all negative: ReLU gives 0");
	/* an all-ones kernel with zero padding: each of the four 3x3 windows covers the whole 2x2 input */
	for (int k = 0; k < 9; k++)
		cnn[k] = 1;
	cnn[9] = -1;
	const float img2[] = { 1, 2, 3, 4 };
	assert_int_equal(sym_cuda_builtin_ref(&b, cnn, 1, img2, y), 0);
	assert_near(y[0], 2 * 9 + 1, 1e-6, "ones kernel: 2 * (1+2+3+4-1) + 1");
	/* padding on a 3x2 map: pooling keeps the top 2x2 window, whose corner (0,0) sees x[0..1][0..1] */
	assert_int_equal(builtin("{\"builtin\": \"cnn\", \"input\": [1, 3, 2], \"channels\": [1], \"classes\": 1}", &b,
				 err, sizeof(err)),
			 0);
	const float img3[] = { 1, 2, 3, 4, 100, 100 }; /* row 2 is dropped by the pool but seen by the conv */
	assert_int_equal(sym_cuda_builtin_ref(&b, cnn, 1, img3, y), 0);
	/* windows at (0,0),(0,1): 1+2+3+4 = 10; at (1,0),(1,1): all six = 210; minus the bias 1 */
	assert_near(y[0], 2 * 209 + 1, 1e-6, "3x2 map: the max window sees row 2");
}

static void test_reference_default_models(void **state)
{
	(void)state;
	char err[256];
	static const char *const specs[] = {
		"{\"builtin\": \"mlp\", \"layers\": [784, 1024, 1024, 10], \"seed\": 1}",
		"{\"builtin\": \"cnn\", \"input\": [3, 32, 32], \"channels\": [16, 32], \"classes\": 10, \"seed\": 1}",
	};
	for (int m = 0; m < 2; m++) {
		struct sym_cuda_builtin b;
		assert_int_equal(builtin(specs[m], &b, err, sizeof(err)), 0);
		float *p = malloc(b.nparams * sizeof(float)), *in = malloc(2 * b.in_elems * sizeof(float));
		float *out = malloc(2 * b.out_elems * sizeof(float));
		assert_non_null(p);
		assert_non_null(in);
		assert_non_null(out);
		sym_cuda_builtin_init_params(&b, p);
		uint64_t st = 99;
		for (size_t i = 0; i < 2 * b.in_elems; i++)
			in[i] = sym_cuda_uniform(&st, 1.0f);
		assert_int_equal(sym_cuda_builtin_ref(&b, p, 2, in, out), 0);
		/* activations stay finite and of the order of the inputs; the samples differ */
		double norm = 0;
		for (size_t i = 0; i < b.out_elems; i++) {
			assert_true(isfinite(out[i]) && fabsf(out[i]) < 100);
			norm += fabs(out[i]);
		}
		assert_true(norm > 1e-3);
		assert_memory_not_equal(out, out + b.out_elems, b.out_elems * sizeof(float));
		free(p);
		free(in);
		free(out);
	}
}

/* The built-in run as the executor runs it (cuda_executor.c's enqueue): per
 * layer, every thread index of the kernel, on ping-pong activations. */
static void run_bodies(const struct sym_cuda_builtin *b, const float *dev, int n, const float *in, float *out)
{
	size_t act = (b->max_act ? b->max_act : 1) * (size_t)n;
	float *buf[2] = { malloc(act * sizeof(float)), malloc(act * sizeof(float)) };
	assert_true(buf[0] && buf[1]);
	const float *cur = in;
	for (int i = 0; i < b->nlayers; i++) {
		const struct sym_cuda_layer *l = &b->layers[i];
		float *dst = i + 1 == b->nlayers ? out : buf[i % 2];
		const float *w = dev + l->w_off, *bias = dev + l->b_off;
		if (l->kind == SYM_CUDA_CONV)
			for (long long e = 0; e < (long long)l->out_c * l->out_h * l->out_w; e++)
				sym_conv_pool_elem(cur, w, bias, dst, n, l->in_c, l->in_h, l->in_w, l->out_c, e);
		else
			for (int u = 0; u < l->out_c; u++)
				sym_fc_unit(cur, w, bias, dst, n, l->fan_in, l->out_c, l->relu, u);
		cur = dst;
	}
	free(buf[0]);
	free(buf[1]);
}

static void test_kernel_bodies(void **state)
{
	(void)state;
	char err[256];
	static const char *const specs[] = {
		"{\"builtin\": \"mlp\", \"layers\": [784, 1024, 1024, 10], \"seed\": 1}",
		"{\"builtin\": \"cnn\", \"input\": [3, 32, 32], \"channels\": [16, 32], \"classes\": 10}",
		"{\"builtin\": \"mlp\", \"layers\": [37, 50, 17, 3], \"seed\": 3}",
		"{\"builtin\": \"cnn\", \"input\": [2, 7, 9], \"channels\": [5, 3], \"classes\": 19, \"seed\": 4}",
		"{\"builtin\": \"mlp\", \"layers\": [3, 2]}",
	};
	static const int sizes[] = { 1, 3, 17 };
	for (size_t m = 0; m < sizeof(specs) / sizeof(specs[0]); m++) {
		struct sym_cuda_builtin b;
		assert_int_equal(builtin(specs[m], &b, err, sizeof(err)), 0);
		float *p = malloc(b.nparams * sizeof(float)), *dev = malloc(b.nparams * sizeof(float));
		assert_true(p && dev);
		sym_cuda_builtin_init_params(&b, p);
		sym_cuda_builtin_device_params(&b, p, dev);
		if (b.layers[0].kind == SYM_CUDA_FC && b.layers[0].out_c > 1) /* transposed: w[1][0] is at [0][1] */
			assert_true(dev[b.layers[0].w_off + 1] == p[b.layers[0].w_off + (size_t)b.layers[0].fan_in]);
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			int n = sizes[s];
			float *in = malloc((size_t)n * b.in_elems * sizeof(float));
			float *want = malloc((size_t)n * b.out_elems * sizeof(float));
			float *got = malloc((size_t)n * b.out_elems * sizeof(float));
			assert_true(in && want && got);
			uint64_t st = 1000 + (uint64_t)s;
			for (size_t i = 0; i < (size_t)n * b.in_elems; i++)
				in[i] = sym_cuda_uniform(&st, 1.0f);
			assert_int_equal(sym_cuda_builtin_ref(&b, p, n, in, want), 0);
			memset(got, 0xff, (size_t)n * b.out_elems * sizeof(float)); /* NaNs: every output is written */
			run_bodies(&b, dev, n, in, got);
			for (size_t i = 0; i < (size_t)n * b.out_elems; i++)
				assert_near(got[i], want[i], 1e-4 * (1 + fabs(want[i])), "kernel body against the reference");
			free(in);
			free(want);
			free(got);
		}
		free(p);
		free(dev);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signatures),
		cmocka_unit_test(test_bad_specs),
		cmocka_unit_test(test_plugin_specs),
		cmocka_unit_test(test_check_sig),
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_reference_by_hand),
		cmocka_unit_test(test_reference_default_models),
		cmocka_unit_test(test_kernel_bodies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
