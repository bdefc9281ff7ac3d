/* tests/cuda_badabi_plugin.c - a model plugin built for another ABI number, which the cuda
 * executor must refuse (tests/test_cuda.c). Needs no CUDA. */
#include <stddef.h>

#include "runtime/cuda/symphony_model.h"

static const struct symphony_model_api api = { 999, sizeof(struct symphony_model_api), NULL, NULL, NULL, NULL };

const struct symphony_model_api *symphony_model_api(void)
{
	return &api;
}
