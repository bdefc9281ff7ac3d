/* experiment/repository.h - a model repository: a directory of models, each in
 * the layout an operator of Triton knows, as far as it applies:
 *
 *   DIR/NAME/config.json       the model: its tensors, largest batch, SLO and profile
 *   DIR/NAME/VERSION/model.pt  its TorchScript file, VERSION a positive integer
 *
 * config.json (JSON, not Triton's protobuf text; Triton's key names where
 * Triton has one):
 *
 *   {
 *     "name": "resnet18",                    (optional) must be the directory's name
 *     "platform": "pytorch_libtorch",        (optional) the only one there is
 *     "max_batch_size": 32,                  the largest batch (1..SYM_PROFILE_BATCH_LIMIT)
 *     "input":  [{"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [3, 224, 224]}],
 *     "output": [{"name": "OUTPUT0", "data_type": "TYPE_FP32", "dims": [1000]}],
 *     "slo_ms": 100,                         (optional) its latency SLO
 *     "version": 2,                          (optional) the version to serve (default: the highest
 *                                            VERSION directory holding a model.pt)
 *     "profile": {"alpha_ms": 33.4, "beta_ms": 0, "static_mb": 45, "dynamic_mb": 120, ...}
 *   }
 *
 * One input and one output per model (a request carries one tensor each
 * way: runtime/tensor.h). "dims" leave out the batch dimension, as in
 * Triton with max_batch_size > 0; "data_type" is Triton's TYPE_FP32 or the
 * KServe spelling FP32; "shape" and "datatype" are taken too. "profile" is
 * what `symphony profile --executor torch --model-repository DIR --model
 * NAME --write` measured (alpha_ms and beta_ms, or a latency_ms table, plus
 * static_mb and dynamic_mb: core/memory.h; with the fit's figures and the
 * measurement's, which are kept but not read). A latency_ms table
 * may be shorter than max_batch_size: its length is then the largest batch
 * (as in a zoo).
 *
 * A repository turns into the configuration's two model lists: an entry of
 * the experiment's "models" (name, profile, max batch, SLO, file size:
 * experiment/config.c, key model_repository) and one of the cluster file's
 * "runtime.models" (input, output, version, executor {"file": PATH}:
 * runtime/cluster.c), so the simulator, the planner and every runtime
 * process read a model from a repository exactly as from a file.
 */
#ifndef SYM_REPOSITORY_H
#define SYM_REPOSITORY_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* Whether the n bytes at s are a model name a repository's directory may
 * carry: 1..40 of A-Z a-z 0-9 _ . -, not starting with a dot. */
bool sym_repo_name_ok(const char *s, size_t n);

/* Reads model `name` of repository `dir`: its experiment model object
 * (*model) and its runtime.models entry (*rt), both new, and the version it
 * serves. With unprofiled_ok, a config.json without "profile" gets a
 * placeholder (alpha 1 ms, beta 0; what `symphony profile` measures over),
 * and *profiled says whether it had one. 0, or -ENOENT / -EINVAL / -ENOMEM
 * with a message naming the file and what is wrong. */
int sym_repo_read_model(const char *dir, const char *name, bool unprofiled_ok, cJSON **model, cJSON **rt,
			int *version, bool *profiled, char *err, size_t errlen);

/* Reads every model of repository `dir` (each subdirectory holding a
 * config.json, in name order), appending its model object to the array
 * `models` and its entry to the object `rt` (either may be NULL). Returns the count read (>= 0),
 * or a negative errno with a message. A directory without config.json is
 * skipped; an empty repository is an error. */
int sym_repo_read(const char *dir, bool unprofiled_ok, cJSON *models, cJSON *rt, char *err, size_t errlen);

/* Writes `profile` (an object: alpha_ms, beta_ms or latency_ms, static_mb,
 * dynamic_mb and the fit's figures) as the "profile" of model `name` in
 * DIR/NAME/config.json, keeping every other key. The file is replaced
 * atomically (written beside, then renamed). 0 or a negative errno with a
 * message. */
int sym_repo_write_profile(const char *dir, const char *name, const cJSON *profile, char *err, size_t errlen);

#endif
