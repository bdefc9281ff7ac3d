/* tests/fuzz/fuzz_kserve.c - libFuzzer: the KServe v2 inference body decoder
 * (runtime/kserve.h), JSON and binary-tensor forms, for models of several
 * signatures. The first input byte picks the model and where the JSON ends
 * (the Inference-Header-Content-Length of the binary extension); the decoder
 * must refuse or fill exactly the input tensor, never more. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/executor.h"
#include "runtime/kserve.h"
#include "runtime/tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	static const struct {
		enum sym_dtype t;
		int ndim;
		int64_t shape[3];
	} sigs[] = { { SYM_DT_UINT8, 1, { 16 } }, { SYM_DT_FP32, 2, { 2, 3 } }, { SYM_DT_INT64, 1, { 4 } },
		     { SYM_DT_FP16, 3, { 1, 2, 2 } }, { SYM_DT_BOOL, 1, { 5 } }, { SYM_DT_FP64, 1, { 8 } } };
	size_t nsig = sizeof(sigs) / sizeof(sigs[0]);
	uint8_t pick = data[0];
	data++, size--;
	struct sym_model_desc m;
	memset(&m, 0, sizeof(m));
	m.name = "m";
	const int64_t out_shape[1] = { 1 };
	if (sym_tensor_sig_set(&m.input, "INPUT0", sigs[pick % nsig].t, sigs[pick % nsig].ndim, sigs[pick % nsig].shape) ||
	    sym_tensor_sig_set(&m.output, "OUTPUT0", SYM_DT_UINT64, 1, out_shape))
		return 0;
	size_t in_bytes = sym_tensor_bytes(&m.input);
	/* the body in a buffer of its own size (no NUL after it), the input with a guard after it */
	char *body = malloc(size ? size : 1);
	uint8_t *input = malloc(in_bytes + 16);
	if (!body || !input)
		abort();
	memcpy(body, data, size);
	memset(input + in_bytes, 0xa5, 16);
	size_t json_len = (pick & 0x80) ? size / 2 : size; /* the binary extension, or plain JSON */
	struct sym_infer_req q;
	char err[512];
	sym_kserve_decode(body, size, json_len, &m, input, &q, err, sizeof(err));
	for (int i = 0; i < 16; i++)
		if (input[in_bytes + i] != 0xa5)
			abort();
	free(body);
	free(input);
	return 0;
}
