/* tests/fuzz/fuzz_wire.c - libFuzzer: the wire decoder (runtime/wire.h) on any bytes.
 * A decoded message must encode back to the same bytes, and its size must be what
 * the decoder consumed: the decoder accepts exactly what the encoder writes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_msg m;
	char err[256];
	long n = sym_wire_decode(data, size, &m, err, sizeof(err));
	if (n <= 0)
		return 0;
	/* the plan's inputs and the hello's and status's models, decoded again for the encoder */
	static struct sym_wire_input inputs[SYM_WIRE_MAX_BATCH];
	static uint16_t models[SYM_WIRE_MAX_MODELS];
	if (m.type == SYM_MSG_PLAN)
		for (uint16_t i = 0; i < m.u.plan.n; i++)
			sym_wire_plan_input(&m, i, &inputs[i]);
	if (m.type == SYM_MSG_HELLO)
		for (uint16_t i = 0; i < m.u.hello.nmodels; i++)
			models[i] = sym_wire_hello_model(&m, i);
	if (m.type == SYM_MSG_STATUS) /* the models off */
		for (uint16_t i = 0; i < m.u.status.noff; i++)
			models[i] = sym_wire_status_model(&m, i);
	size_t want = sym_wire_size(&m);
	if (want != (size_t)n)
		abort();
	uint8_t *out = malloc(want);
	if (!out)
		return 0;
	size_t w = sym_wire_encode(&m, inputs, models, out, want);
	if (w != want || memcmp(out, data, want))
		abort();
	free(out);
	return 0;
}
