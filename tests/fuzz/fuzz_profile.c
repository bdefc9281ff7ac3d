/* tests/fuzz/fuzz_profile.c - libFuzzer: a profile (zoo) file (profiles/zoo.h):
 * models with linear or table latencies, memory, SLOs, and the profile each
 * model gets for serving under an SLO. */
#include "profiles/zoo.h"
#include "tests/fuzz/fuzz_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct sym_zoo z;
	char err[1024];
	memset(&z, 0, sizeof(z));
	if (!sym_zoo_parse(text, "fuzz", &z, err, sizeof(err)))
		for (size_t i = 0; i < z.n && i < 8; i++) {
			struct sym_profile p;
			memset(&p, 0, sizeof(p));
			if (!sym_model_spec_profile(&z.models[i], 100, &p, err, sizeof(err)))
				sym_profile_finish(&p);
		}
	sym_zoo_finish(&z);
	free(text);
	return 0;
}
