/* tests/fuzz/fuzz_cluster.c - libFuzzer: a cluster file (runtime/cluster.h): the
 * experiment plus the "runtime" object, applied and resolved (addresses, ports,
 * models' signatures and executor specs). */
#include "runtime/cluster.h"
#include "tests/fuzz/fuzz_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *root = fuzz_json(data, size);
	if (!root)
		return 0;
	struct sym_cluster c;
	char err[1024];
	if (!sym_cluster_init(&c) && !sym_cluster_load_json(&c, root, "fuzz", err, sizeof(err)))
		sym_cluster_resolve(&c, err, sizeof(err));
	sym_cluster_finish(&c);
	cJSON_Delete(root);
	return 0;
}
