/* profiles/zoo.h - model profile files (JSON) and their loader.
 *
 * A profile file describes the models of one GPU kind:
 *
 *   { "gpu": "a100", "source": "...",
 *     "models": [ { "name": "ResNet50", "alpha_ms": 0.268, "beta_ms": 5.172,
 *                   "slo_ms": 20, "static_mb": 170, "dynamic_mb": 2798 }, ... ] }
 *
 * A model is linear (alpha_ms and beta_ms) or a table ("latency_ms": [l(1),
 * l(2), ...], non-decreasing); "max_batch" (linear only) caps the batch size,
 * "slo_ms" is its usual SLO, and the memory keys are optional. Unknown keys
 * are errors, so a misspelt key never silently does nothing. The same model
 * object is accepted inline in an experiment's "models" list.
 *
 * The built-in files profiles/a100.json and profiles/gtx1080ti.json are
 * compiled into the program: sym_zoo_load("a100") needs no file.
 */
#ifndef SYM_ZOO_H
#define SYM_ZOO_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/profile.h"

/* The latencies a model may have (ms): l(1) at least a microsecond (the
 * simulator's clock counts nanoseconds, and a batch that takes no time would
 * make capacity infinite), and no latency or SLO above 1e6 ms (latencies are
 * measured to 2^42 ns, 73 minutes: core/hist.h). */
#define SYM_LATENCY_MIN_MS 0.001
#define SYM_LATENCY_MAX_MS 1e6

struct sym_model_spec {
	char name[64];
	double alpha_ms;  /* linear models; NAN for tables */
	double beta_ms;
	double *table_ms; /* table models: ntable latencies, owned; NULL for linear */
	int ntable;
	int max_batch;    /* 0: derive from the SLO */
	double slo_ms;    /* 0: unknown */
	double static_mb; /* < 0: unknown */
	double dynamic_mb;
	double file_mb;
	double size_cv;   /* its requests' data sizes: gamma, mean 1, this coefficient of variation (0: none
			   * given; the simulator's size_cv applies) */
	double rate;      /* an experiment's model: the requests per second offered to it (0: none given;
			   * the popularity splits the total rate) */
	double share;     /* or its share of the total rate (any positive weight: the models' shares are
			   * normalised; 0: none given) */
};

#define SYM_SIZE_CV_MAX 10

struct sym_zoo {
	char gpu[32];
	size_t n;
	struct sym_model_spec *models;
};

struct sym_zoo_builtin {
	const char *name;
	const char *json;
};
extern const struct sym_zoo_builtin sym_zoo_builtins[]; /* NULL-terminated */

/* Parses one model object. `where` names it in messages ("FILE: models[3]").
 * Returns 0 or -EINVAL with "WHERE: key 'K': expected ..., got ..." in err. */
int sym_model_spec_from_json(const cJSON *obj, const char *where, struct sym_model_spec *out,
			     char *err, size_t errlen);

/* A JSON object describing the spec (for echoing a configuration). */
cJSON *sym_model_spec_to_json(const struct sym_model_spec *s);

int sym_model_spec_copy(struct sym_model_spec *dst, const struct sym_model_spec *src);
void sym_model_spec_finish(struct sym_model_spec *s);

/* Builds the profile for serving under slo_ms: a linear model's table runs
 * to max_batch if given, else to the largest b with l(b) <= slo_ms. Returns 0,
 * -ERANGE when even l(1) exceeds slo_ms (message in err), or -ENOMEM. */
int sym_model_spec_profile(const struct sym_model_spec *s, double slo_ms, struct sym_profile *out,
			   char *err, size_t errlen);

/* Loads "a100", "gtx1080ti" (built in) or a file path. Returns 0, -ENOENT,
 * -EIO or -EINVAL with a message naming the file, the key and what was
 * expected. */
int sym_zoo_load(const char *name_or_path, struct sym_zoo *z, char *err, size_t errlen);

/* Parses profile JSON text; origin names it in messages. */
int sym_zoo_parse(const char *text, const char *origin, struct sym_zoo *z, char *err, size_t errlen);

/* The model called name, or NULL. */
const struct sym_model_spec *sym_zoo_find(const struct sym_zoo *z, const char *name);

void sym_zoo_finish(struct sym_zoo *z);

/* Reads a whole file ("-": standard input) into a NUL-terminated malloc'ed
 * buffer. Returns 0, -ENOENT, -EACCES, -EISDIR, -EFBIG (over
 * SYM_READ_FILE_MAX bytes: /dev/zero is not a configuration), -EIO or
 * -ENOMEM. */
#define SYM_READ_FILE_MAX ((size_t)1 << 30)
int sym_read_file(const char *path, char **out);

/* Parses JSON text (nothing may follow it). On error returns NULL with
 * "ORIGIN:LINE: malformed JSON near byte N" in err. */
cJSON *sym_json_parse(const char *text, const char *origin, char *err, size_t errlen);

/* The JSON type of v in words ("a string", "a number", ...), for messages. */
const char *sym_json_type(const cJSON *v);

#endif
