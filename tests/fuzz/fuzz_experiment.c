/* tests/fuzz/fuzz_experiment.c - libFuzzer: an experiment file (experiment/config.h),
 * applied and resolved: every model, profile, policy, workload and network key
 * checked, the profiles built. Bad input must be an error message, never a crash
 * or a leak. */
#include "experiment/config.h"
#include "tests/fuzz/fuzz_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *root = fuzz_json(data, size);
	if (!root)
		return 0;
	struct sym_experiment e;
	char err[1024];
	if (!sym_experiment_init(&e) && !sym_experiment_load_json(&e, root, "fuzz", err, sizeof(err)))
		sym_experiment_resolve(&e, err, sizeof(err));
	sym_experiment_finish(&e);
	cJSON_Delete(root);
	return 0;
}
