/* runtime/kserve.h - the KServe v2 / Open Inference Protocol bodies.
 *
 * Decodes an inference request's body into one request's input bytes, and
 * encodes the answer, for a model with one input and one output tensor
 * (runtime/tensor.h). JSON tensors ("data": a flat or nested array in
 * row-major order) and the binary tensor extension (a JSON header of
 * Inference-Header-Content-Length bytes, then the raw tensors; an input
 * with "parameters": {"binary_data_size": N}; an output asked for with
 * "parameters": {"binary_data": true}, or every output with the request
 * parameter "binary_data_output": true) are both supported.
 *
 * A request is one sample: its shape is the model's, optionally with a
 * leading batch dimension of 1 (as Triton clients send); the answer's
 * shape follows the same form. Every error names the field that is wrong.
 */
#ifndef SYM_KSERVE_H
#define SYM_KSERVE_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/executor.h"
#include "runtime/prom.h"

struct sym_infer_req {
	char id[129];         /* the request's "id", echoed ("" when absent) */
	bool batch_dim;       /* its input shape had a leading 1 */
	bool binary_out;      /* answer the output as a binary tensor */
	double deadline_ms;   /* "parameters": {"deadline_ms": D}, or 0 */
};

/* Decodes body (len bytes; the first json_len are JSON, the rest binary
 * tensors; json_len == len without the binary extension) for model m,
 * writing sym_tensor_bytes(&m->input) bytes to input. Returns 0, or
 * -EINVAL with a message naming the field. */
int sym_kserve_decode(const char *body, size_t len, size_t json_len, const struct sym_model_desc *m, void *input,
		      struct sym_infer_req *q, char *err, size_t errlen);

/* Encodes the answer to q: output holds len bytes of m's output tensor.
 * Appends the JSON (and, for a binary output, the raw bytes after it) to
 * out, and sets *json_len to the JSON's length. Returns 0 or -EINVAL
 * (wrong output size) / -ENOMEM. */
int sym_kserve_encode(const struct sym_model_desc *m, const struct sym_infer_req *q, const void *output,
		      size_t len, struct sym_buf *out, size_t *json_len);

/* The model metadata object of GET /v2/models/NAME. */
cJSON *sym_kserve_model_metadata(const struct sym_model_desc *m, const char *platform);

/* IEEE half precision <-> single, round to nearest even. */
uint16_t sym_fp16_from_float(float f);
float sym_fp16_to_float(uint16_t h);

#endif
