/* tests/fuzz/fuzz_json.h - the bytes of a fuzz input as a NUL-terminated string
 * and as parsed JSON (NULL when they are not JSON: the parsers behind it are
 * what the harnesses exercise; cJSON is Debian's, fuzzed upstream). */
#ifndef SYM_FUZZ_JSON_H
#define SYM_FUZZ_JSON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *t = malloc(size + 1);
	if (!t)
		abort();
	memcpy(t, data, size);
	t[size] = '\0';
	return t;
}

static inline cJSON *fuzz_json(const uint8_t *data, size_t size)
{
	return cJSON_ParseWithLength((const char *)data, size);
}

#endif
