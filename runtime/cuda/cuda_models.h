/* runtime/cuda/cuda_models.h - the CUDA executor's model specs and built-in models, in plain C.
 *
 * A model served by the cuda executor has an "executor" object in the cluster
 * file (runtime.models.NAME.executor), its spec:
 *
 *   {"builtin": "mlp", "layers": [784, 1024, 1024, 10], "seed": 1}
 *       fully connected layers, ReLU after each but the last;
 *       in FP32 [layers[0]], out FP32 [layers[last]].
 *   {"builtin": "cnn", "input": [3, 32, 32], "channels": [16, 32], "classes": 10, "seed": 1}
 *       per entry of channels: 3x3 convolution (same padding) + ReLU + 2x2
 *       max-pool (stride 2, odd rows/columns dropped); then a fully connected
 *       layer to classes; in FP32 [C, H, W], out FP32 [classes].
 *   {"lib": "/path/libfoo.so", "args": {...}}
 *       a plugin library (runtime/cuda/symphony_model.h); "lib" may be left
 *       out when the executor has a default library (--model-lib).
 *
 * "seed" is optional (default 1). Everything here is plain C, compiled and
 * tested on machines without CUDA: parsing, signatures, the weights, and a
 * CPU reference of both built-ins that the GPU kernels are tested against.
 *
 * Weights (shared by the GPU loader and the CPU reference): one splitmix64
 * stream (state = seed; each draw adds 0x9E3779B97F4A7C15 to the state and
 * returns the mix of it) fills the parameters in order: for each layer its
 * weights, then its biases. A draw z becomes u = (z >> 40) / 2^24 in [0, 1)
 * and then (2u - 1) * s: weights use s = sqrt(6 / fan_in) (He uniform, which
 * keeps activations of the order of the inputs through ReLU layers), biases
 * s = 1 / sqrt(fan_in). fan_in is a layer's inputs (a convolution: C_in * 9).
 *
 * Layouts (row-major, floats): a fully connected layer's weights are
 * [out][in]; a convolution's [C_out][C_in][3][3]; biases [out] / [C_out];
 * activations of one sample [C][H][W], a batch stacks samples.
 */
#ifndef SYM_CUDA_MODELS_H
#define SYM_CUDA_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "runtime/tensor.h"

#define SYM_CUDA_MAX_LAYERS 16        /* weight layers of a built-in (mlp: 17 sizes; cnn: 15 conv entries) */
#define SYM_CUDA_MAX_DIM    (1 << 24) /* largest mlp layer, cnn channel count, classes and C*H*W */

enum sym_cuda_layer_kind { SYM_CUDA_FC = 1, SYM_CUDA_CONV };

/* One layer of a built-in. FC: in_c inputs to out_c outputs (h = w = 1).
 * CONV: conv 3x3 + ReLU + max-pool 2x2 from [in_c][in_h][in_w] to
 * [out_c][in_h/2][in_w/2]. */
struct sym_cuda_layer {
	enum sym_cuda_layer_kind kind;
	int relu; /* FC: ReLU after it (every layer but the last); CONV: always 1 */
	int in_c, in_h, in_w;
	int out_c, out_h, out_w;
	size_t w_off, b_off; /* where its weights and biases start in the parameters, in floats */
	size_t nw, nb;       /* how many */
	int fan_in;
};

struct sym_cuda_builtin {
	char kind[4]; /* "mlp" or "cnn" */
	uint64_t seed;
	int nlayers;
	struct sym_cuda_layer layers[SYM_CUDA_MAX_LAYERS];
	size_t in_elems, out_elems; /* one sample's input and output, floats */
	size_t max_act;             /* largest output of a layer but the last, one sample, floats (0: one layer) */
	size_t nparams;             /* floats */
	struct sym_tensor_sig input, output; /* the signature: INPUT0 / OUTPUT0, FP32 */
};

/* What runs a model: a built-in, or a plugin library with its arguments. */
struct sym_cuda_spec {
	int is_builtin;
	struct sym_cuda_builtin net; /* is_builtin */
	const char *lib;             /* plugin: the spec's "lib", else model_lib (points into those) */
	const cJSON *args;           /* plugin: the spec's "args" object, or NULL */
};

/* Parses a model's spec (NULL: no "executor" object). A spec without
 * "builtin" is a plugin: its "lib", or model_lib (--model-lib) when it has
 * none. Returns 0 or -EINVAL with a message in err that names the key
 * ("builtin mlp: key 'layers': ..."). */
int sym_cuda_spec_parse(const cJSON *spec, const char *model_lib, struct sym_cuda_spec *s, char *err, size_t errlen);

/* Parses a built-in's spec ("builtin" is required). 0 or -EINVAL as above. */
int sym_cuda_builtin_parse(const cJSON *spec, struct sym_cuda_builtin *b, char *err, size_t errlen);

/* The signature of a built-in spec: its input and output (names INPUT0 and
 * OUTPUT0). Returns 0 or -EINVAL with a message naming the key. */
int sym_cuda_builtin_signature(const cJSON *spec, struct sym_tensor_sig *in, struct sym_tensor_sig *out, char *err,
			       size_t errlen);

/* Checks a model's signature against a built-in's (datatype and shape; names
 * are free). 0, or -EINVAL with a message naming the expected signature, such
 * as "input is UINT8 [16], the builtin mlp takes FP32 [784]". */
int sym_cuda_builtin_check_sig(const struct sym_cuda_builtin *b, const struct sym_tensor_sig *in,
			       const struct sym_tensor_sig *out, char *err, size_t errlen);

/* Writes "FP32 [3, 32, 32]" into buf. Returns buf. */
char *sym_cuda_sig_str(const struct sym_tensor_sig *s, char *buf, size_t len);

/* The generator of the weights: advances *state and returns the next value. */
uint64_t sym_cuda_splitmix64(uint64_t *state);
/* The next value of the stream, uniform in [-s, s). */
float sym_cuda_uniform(uint64_t *state, float s);

/* Fills params (b->nparams floats) with the built-in's weights from its seed. */
void sym_cuda_builtin_init_params(const struct sym_cuda_builtin *b, float *params);

/* The parameters as the GPU kernels take them (dev: b->nparams floats): params
 * with each fully connected layer's weights transposed to [in][out]
 * (runtime/cuda/kernel_body.h); convolutions and biases as they are. */
void sym_cuda_builtin_device_params(const struct sym_cuda_builtin *b, const float *params, float *dev);

/* Runs the built-in on the CPU for n samples (in: n * in_elems floats, out:
 * n * out_elems), with the given parameters, accumulating in double. Returns
 * 0 or -ENOMEM. */
int sym_cuda_builtin_ref(const struct sym_cuda_builtin *b, const float *params, int n, const float *in, float *out);

#endif
