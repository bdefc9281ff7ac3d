/* tests/test_kserve.c - the KServe v2 bodies, tensor signatures and the
 * Prometheus text writer, without processes:
 *   - JSON tensors (flat and nested, with and without the batch dimension)
 *     decode into exact bytes for every datatype family; the answer encodes
 *     back with the request's id and shape form; 64-bit integers exactly;
 *   - the binary tensor extension both ways;
 *   - every malformed field is refused with a message naming it;
 *   - FP16 conversion rounds to nearest even and round-trips;
 *   - signatures parse from the cluster file's form and reject bad ones;
 *   - Prometheus samples escape label values; histograms are cumulative.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kserve.h"
#include "runtime/prom.h"
#include "runtime/tensor.h"
#include "testutil.h"

static struct sym_model_desc model(enum sym_dtype in, int ndim, const int64_t *shape, enum sym_dtype out,
				   int64_t out_n)
{
	struct sym_model_desc m = { .name = "m" };
	assert_int_equal(sym_tensor_sig_set(&m.input, "x", in, ndim, shape), 0);
	assert_int_equal(sym_tensor_sig_set(&m.output, "y", out, 1, &out_n), 0);
	return m;
}

static int decode(const struct sym_model_desc *m, const char *body, void *in, struct sym_infer_req *q, char *err)
{
	return sym_kserve_decode(body, strlen(body), strlen(body), m, in, q, err, 512);
}

static void test_decode_json(void **state)
{
	(void)state;
	int64_t sh[2] = { 2, 3 };
	struct sym_model_desc m = model(SYM_DT_FP32, 2, sh, SYM_DT_FP32, 2);
	float in[6];
	struct sym_infer_req q;
	char err[512];
	/* nested, with the batch dimension */
	assert_int_equal(decode(&m, "{\"id\": \"a\", \"inputs\": [{\"name\": \"x\", \"datatype\": \"FP32\", "
				    "\"shape\": [1, 2, 3], \"data\": [[[1, 2, 3], [4.5, -5, 6e-3]]]}]}",
			       in, &q, err), 0);
	float want[6] = { 1, 2, 3, 4.5f, -5, 6e-3f };
	assert_memory_equal(in, want, sizeof(want));
	assert_string_equal(q.id, "a");
	assert_true(q.batch_dim);
	assert_false(q.binary_out);
	/* flat, no batch dimension, a deadline */
	assert_int_equal(decode(&m, "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"FP32\", \"shape\": [2, 3], "
				    "\"data\": [6, 5, 4, 3, 2, 1]}], \"parameters\": {\"deadline_ms\": 12.5}}",
			       in, &q, err), 0);
	assert_true(in[0] == 6 && in[5] == 1);
	assert_false(q.batch_dim);
	assert_true(q.deadline_ms == 12.5);
	assert_string_equal(q.id, "");
	/* integers: exact bytes, little-endian, signed */
	int64_t n4 = 4;
	struct sym_model_desc mi = model(SYM_DT_INT16, 1, &n4, SYM_DT_INT64, 1);
	int16_t i16[4];
	assert_int_equal(decode(&mi, "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"INT16\", \"shape\": [4], "
				     "\"data\": [-32768, -1, 0, 32767]}]}",
				i16, &q, err), 0);
	assert_true(i16[0] == -32768 && i16[1] == -1 && i16[2] == 0 && i16[3] == 32767);
	struct sym_model_desc mb = model(SYM_DT_BOOL, 1, &n4, SYM_DT_BOOL, 1);
	uint8_t b[4];
	assert_int_equal(decode(&mb, "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"BOOL\", \"shape\": [4], "
				     "\"data\": [true, false, false, true]}]}",
				b, &q, err), 0);
	assert_true(b[0] == 1 && b[1] == 0 && b[2] == 0 && b[3] == 1);
}

static void test_decode_errors(void **state)
{
	(void)state;
	int64_t n3 = 3;
	struct sym_model_desc m = model(SYM_DT_UINT8, 1, &n3, SYM_DT_UINT64, 1);
	uint8_t in[3];
	struct sym_infer_req q;
	char err[512];
	const struct {
		const char *body, *want;
	} bad[] = {
		{ "", "malformed JSON" },
		{ "[1]", "expected a JSON object" },
		{ "{\"inputs\": []}", "inputs: expected an array of exactly one" },
		{ "{\"inputs\": [{\"datatype\": \"UINT8\", \"shape\": [3], \"data\": [1,2,3]}]}", "inputs[0].name" },
		{ "{\"inputs\": [{\"name\": \"z\", \"datatype\": \"UINT8\", \"shape\": [3], \"data\": [1,2,3]}]}",
		  "has no input 'z' (its input is 'x')" },
		{ "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"INT8\", \"shape\": [3], \"data\": [1,2,3]}]}",
		  "inputs[0].datatype: expected \"UINT8\", got \"INT8\"" },
		{ "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"UINT8\", \"shape\": [2, 3], \"data\": [1,2,3]}]}",
		  "inputs[0].shape: expected [3] or [1, 3], got [2,3]" },
		{ "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"UINT8\", \"shape\": [3], \"data\": [1,2]}]}",
		  "inputs[0].data: 2 elements, the shape holds 3" },
		{ "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"UINT8\", \"shape\": [3], \"data\": [1,2,3,4]}]}",
		  "more elements than the 3" },
		{ "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"UINT8\", \"shape\": [3], \"data\": [1,2.5,3]}]}",
		  "element 1 (2.5) is not a UINT8" },
		{ "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"UINT8\", \"shape\": [3], \"data\": [1,\"a\",3]}]}",
		  "element 1 is not a number" },
		{ "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"UINT8\", \"shape\": [3], \"data\": 7}]}",
		  "inputs[0].data: expected an array" },
		{ "{\"id\": 5, \"inputs\": []}", "id: expected a string" },
		{ "{\"parameters\": {\"deadline_ms\": -1}, \"inputs\": []}", "parameters.deadline_ms" },
		{ "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"UINT8\", \"shape\": [3], \"data\": [1,2,3]}], "
		  "\"outputs\": [{\"name\": \"q\"}]}",
		  "outputs[0].name: model 'm' has no output 'q'" },
		{ "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"UINT8\", \"shape\": [3], "
		  "\"parameters\": {\"binary_data_size\": 4}}]}",
		  "binary_data_size: expected 3" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(decode(&m, bad[i].body, in, &q, err), -EINVAL);
		if (!strstr(err, bad[i].want))
			fail_msg("case %zu: '%s' not in '%s'", i, bad[i].want, err);
	}
	/* a JSON header longer than the body */
	assert_int_equal(sym_kserve_decode("{}", 2, 3, &m, in, &q, err, sizeof(err)), -EINVAL);
	assert_contains(err, "Inference-Header-Content-Length");
}

static void test_binary_and_encode(void **state)
{
	(void)state;
	int64_t n3 = 3;
	struct sym_model_desc m = model(SYM_DT_UINT8, 1, &n3, SYM_DT_UINT64, 1);
	const char hdr[] = "{\"id\": \"b\", \"inputs\": [{\"name\": \"x\", \"datatype\": \"UINT8\", \"shape\": [1, 3], "
			   "\"parameters\": {\"binary_data_size\": 3}}], \"parameters\": {\"binary_data_output\": true}}";
	char body[sizeof(hdr) + 3];
	memcpy(body, hdr, sizeof(hdr) - 1);
	memcpy(body + sizeof(hdr) - 1, "\x01\x00\xff", 3);
	uint8_t in[3];
	struct sym_infer_req q;
	char err[512];
	assert_int_equal(sym_kserve_decode(body, sizeof(hdr) + 2, sizeof(hdr) - 1, &m, in, &q, err, sizeof(err)), 0);
	assert_memory_equal(in, "\x01\x00\xff", 3);
	assert_true(q.binary_out && q.batch_dim);
	/* binary answer: JSON, then the 8 raw bytes */
	uint64_t out = 0x1122334455667788ull;
	struct sym_buf b = { 0 };
	size_t jl;
	assert_int_equal(sym_kserve_encode(&m, &q, &out, 8, &b, &jl), 0);
	assert_int_equal(b.len, jl + 8);
	assert_memory_equal(b.p + jl, &out, 8);
	const char want[] = "{\"model_name\":\"m\",\"model_version\":\"1\",\"id\":\"b\",\"outputs\":[{\"name\":\"y\","
			    "\"datatype\":\"UINT64\",\"shape\":[1,1],\"parameters\":{\"binary_data_size\":8}}]}";
	assert_int_equal(jl, sizeof(want) - 1);
	assert_memory_equal(b.p, want, jl);
	sym_buf_free(&b);
	/* JSON answer: a 64-bit integer exactly (beyond 2^53) */
	q.binary_out = false;
	q.batch_dim = false;
	out = 18446744073709551615ull;
	assert_int_equal(sym_kserve_encode(&m, &q, &out, 8, &b, &jl), 0);
	assert_non_null(strstr(b.p, "\"shape\":[1],\"data\":[18446744073709551615]"));
	sym_buf_free(&b);
	/* the wrong output size is refused */
	assert_int_equal(sym_kserve_encode(&m, &q, &out, 4, &b, &jl), -EINVAL);
	sym_buf_free(&b);
	/* metadata */
	cJSON *md = sym_kserve_model_metadata(&m, "symphony_emulated");
	char *t = cJSON_PrintUnformatted(md);
	assert_string_equal(t, "{\"name\":\"m\",\"versions\":[\"1\"],\"platform\":\"symphony_emulated\",\"inputs\":[{"
			       "\"name\":\"x\",\"datatype\":\"UINT8\",\"shape\":[3]}],\"outputs\":[{\"name\":\"y\","
			       "\"datatype\":\"UINT64\",\"shape\":[1]}]}");
	cJSON_free(t);
	cJSON_Delete(md);
}

/* Decodes a copy of body[0..len) in a buffer of exactly len bytes (no NUL after it), into an
 * input buffer of exactly the model's size: under AddressSanitizer any read or write past
 * either fails. The answer must be 0, or -EINVAL with a message. */
static int decode_exact(const struct sym_model_desc *m, const char *body, size_t len, size_t json_len)
{
	char *b = malloc(len ? len : 1), err[512] = "";
	void *in = malloc(sym_tensor_bytes(&m->input));
	assert_true(b && in);
	memcpy(b, body, len);
	struct sym_infer_req q;
	int rc = sym_kserve_decode(b, len, json_len < len ? json_len : len, m, in, &q, err, sizeof(err));
	if (rc != 0 && (rc != -EINVAL || !err[0]))
		fail_msg("status %d, message '%s', for a body of %zu bytes", rc, err, len);
	free(b);
	free(in);
	return rc;
}

/* Every truncation and thousands of random byte changes of valid bodies (JSON, nested,
 * binary) decode to an answer or a clear error, never past a buffer. */
static void test_decode_fuzz(void **state)
{
	(void)state;
	int64_t sh[2] = { 2, 3 }, n3 = 3;
	struct sym_model_desc mf = model(SYM_DT_FP32, 2, sh, SYM_DT_FP32, 2);
	struct sym_model_desc mu = model(SYM_DT_UINT8, 1, &n3, SYM_DT_UINT64, 1);
	const char nested[] = "{\"id\": \"a\", \"inputs\": [{\"name\": \"x\", \"datatype\": \"FP32\", "
			      "\"shape\": [1, 2, 3], \"data\": [[[1, 2, 3], [4.5, -5, 6e-3]]]}], "
			      "\"parameters\": {\"deadline_ms\": 12.5}, \"outputs\": [{\"name\": \"y\"}]}";
	const char hdr[] = "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"UINT8\", \"shape\": [1, 3], "
			   "\"parameters\": {\"binary_data_size\": 3}}], \"parameters\": {\"binary_data_output\": true}}";
	char bin[sizeof(hdr) + 3];
	memcpy(bin, hdr, sizeof(hdr) - 1);
	memcpy(bin + sizeof(hdr) - 1, "\x01\x00\xff", 3);
	const struct {
		const struct sym_model_desc *m;
		const char *body;
		size_t len, json_len;
	} cases[] = {
		{ &mf, nested, sizeof(nested) - 1, sizeof(nested) - 1 },
		{ &mu, bin, sizeof(hdr) + 2, sizeof(hdr) - 1 },
	};
	static const char pick[] = "{}[]\":,.-+0123456789eE \\u\x00\xff";
	uint64_t x = 88172645463325252ull;
	int ok = 0, refused = 0;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		size_t len = cases[c].len;
		for (size_t l = 0; l <= len; l++)
			decode_exact(cases[c].m, cases[c].body, l, cases[c].json_len);
		char *mut = malloc(len);
		assert_non_null(mut);
		for (int r = 0; r < 3000; r++) {
			memcpy(mut, cases[c].body, len);
			for (int k = 0; k < 1 + r % 3; k++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				mut[x % len] = (x >> 32) % 4 ? pick[(x >> 40) % (sizeof(pick) - 1)] : (char)(x >> 48);
			}
			if (decode_exact(cases[c].m, mut, len, cases[c].json_len))
				refused++;
			else
				ok++;
		}
		free(mut);
	}
	print_message("mutated bodies: %d decoded, %d refused\n", ok, refused);
	assert_true(ok > 100 && refused > 1000); /* both paths exercised */
}

static void test_fp16(void **state)
{
	(void)state;
	assert_int_equal(sym_fp16_from_float(1.0f), 0x3c00);
	assert_int_equal(sym_fp16_from_float(-2.0f), 0xc000);
	assert_int_equal(sym_fp16_from_float(65504.0f), 0x7bff);
	assert_int_equal(sym_fp16_from_float(65520.0f), 0x7c00);  /* rounds up to inf */
	assert_int_equal(sym_fp16_from_float(5.9604645e-8f), 0x0001); /* smallest subnormal */
	assert_int_equal(sym_fp16_from_float(1.0f + 1.0f / 2048), 0x3c00); /* a tie: to even */
	assert_int_equal(sym_fp16_from_float(1.0f + 3.0f / 2048), 0x3c02); /* a tie: to even, up */
	for (uint32_t h = 0; h < 0x7c00; h++) /* every finite half round-trips */
		assert_int_equal(sym_fp16_from_float(sym_fp16_to_float((uint16_t)h)), h);
	assert_true(isinf(sym_fp16_to_float(0x7c00)));
	assert_true(isnan(sym_fp16_to_float(0x7e00)));
}

static void test_signature(void **state)
{
	(void)state;
	char err[512];
	struct sym_tensor_sig s;
	cJSON *o = cJSON_Parse("{\"datatype\": \"FP16\", \"shape\": [3, 32, 32]}");
	assert_int_equal(sym_tensor_sig_from_json(o, "W", "IN", 1 << 20, &s, err, sizeof(err)), 0);
	assert_string_equal(s.name, "IN");
	assert_int_equal(sym_tensor_bytes(&s), 3 * 32 * 32 * 2);
	cJSON_Delete(o);
	const struct {
		const char *json, *want;
	} bad[] = {
		{ "{\"datatype\": \"FP8\", \"shape\": [3]}", "W: key 'datatype': unknown datatype \"FP8\"" },
		{ "{\"datatype\": \"FP32\", \"shape\": []}", "W: key 'shape'" },
		{ "{\"datatype\": \"FP32\", \"shape\": [0]}", "element 0 is not a positive integer" },
		{ "{\"datatype\": \"FP32\", \"shape\": [1.5]}", "element 0 is not a positive integer" },
		{ "{\"datatype\": \"FP32\", \"shape\": [1000, 1000]}", "more than the limit of 1048576" },
		{ "{\"datatype\": \"FP32\", \"shape\": [1], \"dims\": 2}", "unknown key 'dims'" },
		{ "[1]", "W: expected an object" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o = cJSON_Parse(bad[i].json);
		assert_int_equal(sym_tensor_sig_from_json(o, "W", "IN", 1 << 20, &s, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].want))
			fail_msg("case %zu: '%s' not in '%s'", i, bad[i].want, err);
		cJSON_Delete(o);
	}
	/* random tensors: finite floats in [-1, 1), BOOL 0/1, deterministic per state */
	int64_t dim = 4096;
	static const enum sym_dtype fl[] = { SYM_DT_FP32, SYM_DT_FP64, SYM_DT_FP16, SYM_DT_BOOL, SYM_DT_INT32 };
	for (size_t t = 0; t < sizeof(fl) / sizeof(fl[0]); t++) {
		assert_int_equal(sym_tensor_sig_set(&s, "X", fl[t], 1, &dim), 0);
		size_t nb = sym_tensor_bytes(&s);
		unsigned char *a = malloc(nb), *b = malloc(nb);
		assert_true(a && b);
		uint64_t st1 = 7, st2 = 7;
		sym_tensor_fill_random(&s, a, &st1);
		sym_tensor_fill_random(&s, b, &st2);
		assert_memory_equal(a, b, nb);
		double lo = 1, hi = -1;
		for (int64_t i = 0; i < dim; i++) {
			double v;
			if (fl[t] == SYM_DT_FP32) {
				float f;
				memcpy(&f, a + 4 * i, 4);
				v = f;
			} else if (fl[t] == SYM_DT_FP64) {
				memcpy(&v, a + 8 * i, 8);
			} else if (fl[t] == SYM_DT_FP16) {
				uint16_t h;
				memcpy(&h, a + 2 * i, 2);
				v = sym_fp16_to_float(h);
			} else if (fl[t] == SYM_DT_BOOL) {
				v = a[i];
				assert_true(v == 0 || v == 1);
				continue;
			} else {
				continue;
			}
			assert_true(isfinite(v) && v >= -1 && v < 1);
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		if (fl[t] != SYM_DT_BOOL && fl[t] != SYM_DT_INT32)
			assert_true(lo < -0.4 && hi > 0.4); /* spread over the range */
		free(a);
		free(b);
	}
	assert_int_equal(sym_dtype_parse("fp32"), SYM_DT_INVALID); /* exact spelling */
	assert_string_equal(sym_dtype_name(SYM_DT_UINT64), "UINT64");
}

static void test_prom(void **state)
{
	(void)state;
	struct sym_buf b = { 0 };
	sym_prom_family(&b, "x_total", "counter", "a\\b\nc");
	const char *l[] = { "model", "a\"b\\c\nd", NULL };
	sym_prom_sample(&b, "x_total", l, 3);
	sym_prom_sample(&b, "x_total", NULL, 1.5);
	struct sym_hist h;
	sym_hist_init(&h);
	sym_hist_record(&h, 1000000);  /* 1 ms */
	sym_hist_record(&h, 3000000);  /* 3 ms */
	sym_hist_record(&h, 20000000); /* 20 ms */
	const double bounds[] = { 0.001, 0.005, 0.01 };
	sym_prom_hist(&b, "lat_seconds", NULL, &h, bounds, 3);
	assert_string_equal(b.p, "# HELP x_total a\\\\b\\nc\n# TYPE x_total counter\n"
				 "x_total{model=\"a\\\"b\\\\c\\nd\"} 3\n"
				 "x_total 1.5\n"
				 "lat_seconds_bucket{le=\"0.001\"} 1\n"
				 "lat_seconds_bucket{le=\"0.005\"} 2\n"
				 "lat_seconds_bucket{le=\"0.01\"} 2\n"
				 "lat_seconds_bucket{le=\"+Inf\"} 3\n"
				 "lat_seconds_sum 0.024\n"
				 "lat_seconds_count 3\n");
	sym_hist_finish(&h);
	sym_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_json), cmocka_unit_test(test_decode_errors),
		cmocka_unit_test(test_binary_and_encode), cmocka_unit_test(test_decode_fuzz), cmocka_unit_test(test_fp16),
		cmocka_unit_test(test_signature), cmocka_unit_test(test_prom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
