/* runtime/cuda/example_plugin.cu - a minimal Symphony model plugin: y = a*x + b on FP32.
 *
 * Spec: {"lib": "/path/libsymphony_example_model.so", "args": {"a": 2, "b": 1}}
 * (a and b are optional, default 2 and 1). Input and output: FP32 tensors of
 * the same number of elements. See symphony_model.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "runtime/cuda/symphony_model.h"

struct affine {
	float a, b;
	long long elems; /* of one request */
};

__global__ void affine_kernel(const float *__restrict__ x, float *__restrict__ y, long long n, float a, float b)
{
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x)
		y[i] = a * x[i] + b;
}

/* The number after "key": in a flat JSON object, or def. Enough for this example's args. */
static float arg(const char *json, const char *key, float def)
{
	char pat[32];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = strstr(json, pat);
	return p ? strtof(p + strlen(pat), NULL) : def;
}

static int load(const struct symphony_model_info *info, void **state, char *err, size_t errlen)
{
	if (strcmp(info->input.datatype, "FP32") || strcmp(info->output.datatype, "FP32") ||
	    info->input.bytes != info->output.bytes) {
		snprintf(err, errlen,
			 "example model: expected FP32 input and output of the same shape, got %s (%llu "
			 "bytes) -> %s (%llu bytes)",
			 info->input.datatype, (unsigned long long)info->input.bytes, info->output.datatype,
			 (unsigned long long)info->output.bytes);
		return -EINVAL;
	}
	struct affine *m = (struct affine *)malloc(sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "example model: out of memory");
		return -ENOMEM;
	}
	m->a = arg(info->args_json, "a", 2.0f);
	m->b = arg(info->args_json, "b", 1.0f);
	m->elems = (long long)(info->input.bytes / sizeof(float));
	*state = m;
	return 0;
}

static int run(void *state, int n, const void *input, void *output, void *stream, char *err, size_t errlen)
{
	const struct affine *m = (const struct affine *)state;
	long long total = m->elems * n, blocks = (total + 255) / 256;
	affine_kernel<<<(unsigned)(blocks < 65536 ? blocks : 65536), 256, 0, (cudaStream_t)stream>>>(
		(const float *)input, (float *)output, total, m->a, m->b);
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess) {
		snprintf(err, errlen, "example model: kernel launch failed: %s", cudaGetErrorName(e));
		return -EIO;
	}
	return 0;
}

static int memory(void *state, int n, uint64_t *static_bytes, uint64_t *dynamic_bytes)
{
	(void)state;
	(void)n;
	*static_bytes = 0; /* no weights, no workspace: it works in the executor's buffers */
	*dynamic_bytes = 0;
	return 0;
}

static void unload(void *state)
{
	free(state);
}

static const struct symphony_model_api api = {
	SYMPHONY_MODEL_ABI, sizeof(struct symphony_model_api), load, run, memory, unload
};

const struct symphony_model_api *symphony_model_api(void)
{
	return &api;
}
