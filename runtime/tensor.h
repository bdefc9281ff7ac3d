/* runtime/tensor.h - what a model takes and gives, per request.
 *
 * A model served by the runtime has one input tensor and one output tensor
 * per request (no batch dimension here: a batch of b stacks b of them). The
 * datatypes are the KServe v2 / Open Inference Protocol names. Signatures
 * come from the cluster file ("runtime": {"models": {NAME: {"input": {...},
 * "output": {...}}}}), or from an executor's built-in model, or default to
 * what the emulated executor does: UINT8 [input_bytes] in, UINT64 [1] out
 * (the FNV-1a 64 digest of the input).
 */
#ifndef SYM_TENSOR_H
#define SYM_TENSOR_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define SYM_TENSOR_DIMS 8

enum sym_dtype {
	SYM_DT_INVALID = 0,
	SYM_DT_BOOL,
	SYM_DT_UINT8,
	SYM_DT_UINT16,
	SYM_DT_UINT32,
	SYM_DT_UINT64,
	SYM_DT_INT8,
	SYM_DT_INT16,
	SYM_DT_INT32,
	SYM_DT_INT64,
	SYM_DT_FP16,
	SYM_DT_FP32,
	SYM_DT_FP64,
	SYM_DT_COUNT
};

struct sym_tensor_sig {
	char name[64];
	enum sym_dtype dtype;
	int ndim;                        /* 1..SYM_TENSOR_DIMS */
	int64_t shape[SYM_TENSOR_DIMS];  /* each >= 1 */
};

/* "FP32" etc., or "INVALID". */
const char *sym_dtype_name(enum sym_dtype t);
/* The datatype named s (exact KServe spelling), or SYM_DT_INVALID. */
enum sym_dtype sym_dtype_parse(const char *s);
/* Bytes of one element (BOOL: 1). 0 for SYM_DT_INVALID. */
size_t sym_dtype_size(enum sym_dtype t);

/* Elements in one request's tensor (the product of its shape). */
int64_t sym_tensor_elems(const struct sym_tensor_sig *s);
/* Bytes of one request's tensor. */
size_t sym_tensor_bytes(const struct sym_tensor_sig *s);

/* Sets s to NAME, DTYPE [dim0, dim1, ...] (ndim dims). Returns 0 or -EINVAL. */
int sym_tensor_sig_set(struct sym_tensor_sig *s, const char *name, enum sym_dtype t, int ndim, const int64_t *shape);

/* Parses {"name": "INPUT0", "datatype": "FP32", "shape": [3, 32, 32]}. Every
 * key is required except "name" (default def_name); the bytes of the tensor
 * must fit in max_bytes. Returns 0 or -EINVAL with "WHERE: key 'K': ..." in err. */
int sym_tensor_sig_from_json(const cJSON *obj, const char *where, const char *def_name, size_t max_bytes,
			     struct sym_tensor_sig *s, char *err, size_t errlen);

/* Checks one input tensor of a KServe request for model `model` (its name,
 * datatype (NULL: none given) and shape, nd dimensions, -1: not a shape)
 * against the model's input signature sig, the shape with or without a
 * leading batch dimension of 1 (*batch says which): 0, or -EINVAL with the
 * API's words ("inputs[0].shape: expected [...] or [...], got GOT"). REST
 * and gRPC share it. */
int sym_tensor_check_input(const struct sym_tensor_sig *sig, const char *model, const char *name, const char *datatype,
			   const int64_t *shape, int nd, const char *got, bool *batch, char *err, size_t errlen);

/* Fills buf (sym_tensor_bytes(s) bytes) with a random tensor from the
 * xorshift64 stream *state (nonzero): floating-point elements finite and
 * uniform-ish in [-1, 1), BOOL 0 or 1, integers any bit pattern. What a load
 * generator sends to a real model. */
void sym_tensor_fill_random(const struct sym_tensor_sig *s, void *buf, uint64_t *state);

/* The JSON form above (the KServe v2 model-metadata tensor object). */
cJSON *sym_tensor_sig_to_json(const struct sym_tensor_sig *s);

#endif
