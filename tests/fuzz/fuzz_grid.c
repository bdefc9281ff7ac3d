/* tests/fuzz/fuzz_grid.c - libFuzzer: a sweep's grid file (sim/sweep.h): axes,
 * values, zips, overrides and the points they expand to, checked. */
#include "sim/sweep.h"
#include "tests/fuzz/fuzz_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *root = fuzz_json(data, size);
	if (!root)
		return 0;
	struct sym_grid g;
	char err[1024];
	memset(&g, 0, sizeof(g));
	sym_grid_parse(root, "fuzz", "grid", &g, err, sizeof(err));
	sym_grid_finish(&g);
	cJSON_Delete(root);
	return 0;
}
