#include "runtime/kserve.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

uint16_t sym_fp16_from_float(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000u;
	uint32_t exp = (x >> 23) & 0xffu;
	uint32_t man = x & 0x7fffffu;
	if (exp == 0xff) /* inf, nan */
		return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
	int e = (int)exp - 127 + 15;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00u);
	if (e <= 0) { /* subnormal or zero */
		if (e < -10)
			return (uint16_t)sign;
		man |= 0x800000u;
		int shift = 14 - e;
		uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
		if (rem > half || (rem == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	uint32_t h = (uint32_t)e << 10 | man >> 13, rem = man & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
		h++; /* may carry into the exponent, up to inf: correct */
	return (uint16_t)(sign | h);
}

float sym_fp16_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, x;
	if (exp == 0) {
		if (!man)
			x = sign;
		else { /* subnormal: normalise */
			int e = -1;
			do {
				man <<= 1;
				e++;
			} while (!(man & 0x400u));
			x = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ffu) << 13;
		}
	} else if (exp == 31) {
		x = sign | 0x7f800000u | man << 13;
	} else {
		x = sign | (exp - 15 + 127) << 23 | man << 13;
	}
	float f;
	memcpy(&f, &x, 4);
	return f;
}

/* ---- decoding ---- */

struct fill {
	const struct sym_tensor_sig *sig;
	unsigned char *out;
	int64_t n, want;
	const char *field;
};

static int put_elem(struct fill *f, const cJSON *v, char *err, size_t errlen)
{
	if (f->n >= f->want)
		return ERR("%s: more elements than the %lld its shape holds", f->field, (long long)f->want);
	size_t sz = sym_dtype_size(f->sig->dtype);
	unsigned char *p = f->out + (size_t)f->n * sz;
	enum sym_dtype t = f->sig->dtype;
	if (t == SYM_DT_BOOL) {
		if (!cJSON_IsBool(v))
			return ERR("%s: element %lld is not true or false (datatype BOOL)", f->field, (long long)f->n);
		*p = cJSON_IsTrue(v) ? 1 : 0;
		f->n++;
		return 0;
	}
	if (!cJSON_IsNumber(v))
		return ERR("%s: element %lld is not a number (datatype %s)", f->field, (long long)f->n, sym_dtype_name(t));
	double d = v->valuedouble;
	if (t == SYM_DT_FP32 || t == SYM_DT_FP64 || t == SYM_DT_FP16) {
		if (t == SYM_DT_FP64)
			memcpy(p, &d, 8);
		else if (t == SYM_DT_FP32) {
			if (fabs(d) > 3.4028234663852886e38)
				return ERR("%s: element %lld (%g) is out of range for FP32", f->field, (long long)f->n, d);
			float x = (float)d;
			memcpy(p, &x, 4);
		} else {
			if (fabs(d) > 65504)
				return ERR("%s: element %lld (%g) is out of range for FP16", f->field, (long long)f->n, d);
			uint16_t h = sym_fp16_from_float((float)d);
			memcpy(p, &h, 2);
		}
		f->n++;
		return 0;
	}
	static const double lo[SYM_DT_COUNT] = { [SYM_DT_INT8] = -128, [SYM_DT_INT16] = -32768,
						 [SYM_DT_INT32] = -2147483648.0, [SYM_DT_INT64] = -9007199254740992.0 };
	static const double hi[SYM_DT_COUNT] = { [SYM_DT_UINT8] = 255, [SYM_DT_UINT16] = 65535,
						 [SYM_DT_UINT32] = 4294967295.0, [SYM_DT_UINT64] = 9007199254740992.0,
						 [SYM_DT_INT8] = 127, [SYM_DT_INT16] = 32767, [SYM_DT_INT32] = 2147483647.0,
						 [SYM_DT_INT64] = 9007199254740992.0 };
	if (d != floor(d) || d < lo[t] || d > hi[t])
		return ERR("%s: element %lld (%.17g) is not a %s", f->field, (long long)f->n, d, sym_dtype_name(t));
	if (t == SYM_DT_INT8 || t == SYM_DT_INT16 || t == SYM_DT_INT32 || t == SYM_DT_INT64) {
		int64_t x = (int64_t)d;
		memcpy(p, &x, sz); /* little-endian: the low bytes */
	} else {
		uint64_t x = (uint64_t)d;
		memcpy(p, &x, sz);
	}
	f->n++;
	return 0;
}

static int fill_from(struct fill *f, const cJSON *arr, int depth, char *err, size_t errlen)
{
	if (depth > SYM_TENSOR_DIMS + 1)
		return ERR("%s: nested too deeply", f->field);
	for (const cJSON *v = arr->child; v; v = v->next) {
		int rc = cJSON_IsArray(v) ? fill_from(f, v, depth + 1, err, errlen) : put_elem(f, v, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}



int sym_kserve_decode(const char *body, size_t len, size_t json_len, const struct sym_model_desc *m, void *input,
		      struct sym_infer_req *q, char *err, size_t errlen)
{
	memset(q, 0, sizeof(*q));
	if (json_len > len)
		return ERR("header Inference-Header-Content-Length: %zu is more than the body's %zu bytes", json_len, len);
	cJSON *root = cJSON_ParseWithLength(body, json_len);
	if (!root)
		return ERR("body: malformed JSON near byte %zu",
			   cJSON_GetErrorPtr() ? (size_t)(cJSON_GetErrorPtr() - body) : (size_t)0);
	int rc = 0;
	const struct sym_tensor_sig *sig = &m->input;
	if (!cJSON_IsObject(root)) {
		rc = ERR("body: expected a JSON object with \"inputs\"");
		goto out;
	}
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
	if (id) {
		if (!cJSON_IsString(id) || strlen(id->valuestring) >= sizeof(q->id)) {
			rc = ERR("id: expected a string of at most %zu characters", sizeof(q->id) - 1);
			goto out;
		}
		snprintf(q->id, sizeof(q->id), "%s", id->valuestring);
	}
	const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "parameters");
	if (params && !cJSON_IsObject(params)) {
		rc = ERR("parameters: expected an object");
		goto out;
	}
	const cJSON *dl = cJSON_GetObjectItemCaseSensitive(params, "deadline_ms");
	if (dl) {
		if (!cJSON_IsNumber(dl) || !(dl->valuedouble > 0) || !isfinite(dl->valuedouble)) {
			rc = ERR("parameters.deadline_ms: expected a positive number of milliseconds");
			goto out;
		}
		q->deadline_ms = dl->valuedouble;
	}
	const cJSON *bo = cJSON_GetObjectItemCaseSensitive(params, "binary_data_output");
	if (bo) {
		if (!cJSON_IsBool(bo)) {
			rc = ERR("parameters.binary_data_output: expected true or false");
			goto out;
		}
		q->binary_out = cJSON_IsTrue(bo);
	}
	const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(root, "inputs");
	if (!cJSON_IsArray(inputs) || cJSON_GetArraySize(inputs) != 1) {
		rc = ERR("inputs: expected an array of exactly one tensor (model '%s' takes %s)", m->name, sig->name);
		goto out;
	}
	const cJSON *in = inputs->child;
	const cJSON *nm = cJSON_GetObjectItemCaseSensitive(in, "name");
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(in, "datatype");
	const cJSON *sh = cJSON_GetObjectItemCaseSensitive(in, "shape");
	if (!cJSON_IsObject(in) || !cJSON_IsString(nm)) {
		rc = ERR("inputs[0].name: expected a string");
		goto out;
	}
	int64_t dims[SYM_TENSOR_DIMS + 1];
	int nd = cJSON_IsArray(sh) ? cJSON_GetArraySize(sh) : -1;
	if (nd > SYM_TENSOR_DIMS + 1)
		nd = -1;
	int i = 0;
	for (const cJSON *v = nd >= 0 ? sh->child : NULL; v; v = v->next, i++)
		if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > 1e15)
			nd = -1; /* (not a shape: refused below, the JSON shown) */
		else
			dims[i] = (int64_t)v->valuedouble;
	char *got = cJSON_PrintUnformatted(sh);
	bool batch = false;
	rc = sym_tensor_check_input(&m->input, m->name, nm->valuestring, cJSON_IsString(dt) ? dt->valuestring : NULL, dims, nd,
				    got ? got : "nothing", &batch, err, errlen);
	cJSON_free(got);
	if (rc)
		goto out;
	q->batch_dim = batch;
	size_t bytes = sym_tensor_bytes(sig);
	const cJSON *ip = cJSON_GetObjectItemCaseSensitive(in, "parameters");
	const cJSON *bds = cJSON_GetObjectItemCaseSensitive(ip, "binary_data_size");
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(in, "data");
	if (bds) {
		if (!cJSON_IsNumber(bds) || bds->valuedouble != (double)bytes) {
			rc = ERR("inputs[0].parameters.binary_data_size: expected %zu (%lld %s elements)", bytes,
				 (long long)sym_tensor_elems(sig), sym_dtype_name(sig->dtype));
			goto out;
		}
		if (data) {
			rc = ERR("inputs[0]: has both \"data\" and binary_data_size");
			goto out;
		}
		if (len - json_len != bytes) {
			rc = ERR("body: %zu bytes of binary data after the JSON header, expected %zu", len - json_len, bytes);
			goto out;
		}
		memcpy(input, body + json_len, bytes);
	} else {
		if (len != json_len) {
			rc = ERR("body: %zu bytes of binary data but no input with binary_data_size", len - json_len);
			goto out;
		}
		if (!cJSON_IsArray(data)) {
			rc = ERR("inputs[0].data: expected an array of %lld %s elements", (long long)sym_tensor_elems(sig),
				 sym_dtype_name(sig->dtype));
			goto out;
		}
		struct fill f = { sig, input, 0, sym_tensor_elems(sig), "inputs[0].data" };
		if ((rc = fill_from(&f, data, 0, err, errlen)))
			goto out;
		if (f.n != f.want) {
			rc = ERR("inputs[0].data: %lld elements, the shape holds %lld", (long long)f.n, (long long)f.want);
			goto out;
		}
	}
	const cJSON *outs = cJSON_GetObjectItemCaseSensitive(root, "outputs");
	if (outs) {
		if (!cJSON_IsArray(outs) || cJSON_GetArraySize(outs) > 1) {
			rc = ERR("outputs: expected an array of at most one output (model '%s' gives %s)", m->name,
				 m->output.name);
			goto out;
		}
		const cJSON *o = outs->child;
		const cJSON *on = cJSON_GetObjectItemCaseSensitive(o, "name");
		if (o && (!cJSON_IsString(on) || strcmp(on->valuestring, m->output.name))) {
			rc = ERR("outputs[0].name: model '%s' has no output %s%s%s (its output is '%s')", m->name,
				 cJSON_IsString(on) ? "'" : "", cJSON_IsString(on) ? on->valuestring : "without a name",
				 cJSON_IsString(on) ? "'" : "", m->output.name);
			goto out;
		}
		const cJSON *op = cJSON_GetObjectItemCaseSensitive(o, "parameters");
		const cJSON *bd = cJSON_GetObjectItemCaseSensitive(op, "binary_data");
		if (bd) {
			if (!cJSON_IsBool(bd)) {
				rc = ERR("outputs[0].parameters.binary_data: expected true or false");
				goto out;
			}
			q->binary_out = cJSON_IsTrue(bd);
		}
	}
out:
	cJSON_Delete(root);
	return rc;
}

/* ---- encoding ---- */

static cJSON *shape_json(const struct sym_tensor_sig *s, bool batch)
{
	cJSON *a = cJSON_CreateArray();
	if (batch)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(1));
	for (int i = 0; i < s->ndim; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)s->shape[i]));
	return a;
}

static double elem(enum sym_dtype t, const unsigned char *p)
{
	switch (t) {
	case SYM_DT_BOOL:
	case SYM_DT_UINT8: return p[0];
	case SYM_DT_INT8: return (int8_t)p[0];
	case SYM_DT_UINT16: { uint16_t x; memcpy(&x, p, 2); return x; }
	case SYM_DT_INT16: { int16_t x; memcpy(&x, p, 2); return x; }
	case SYM_DT_UINT32: { uint32_t x; memcpy(&x, p, 4); return x; }
	case SYM_DT_INT32: { int32_t x; memcpy(&x, p, 4); return x; }
	case SYM_DT_UINT64: { uint64_t x; memcpy(&x, p, 8); return (double)x; }
	case SYM_DT_INT64: { int64_t x; memcpy(&x, p, 8); return (double)x; }
	case SYM_DT_FP16: { uint16_t x; memcpy(&x, p, 2); return sym_fp16_to_float(x); }
	case SYM_DT_FP32: { float x; memcpy(&x, p, 4); return x; }
	case SYM_DT_FP64: { double x; memcpy(&x, p, 8); return x; }
	default: return 0;
	}
}

int sym_kserve_encode(const struct sym_model_desc *m, const struct sym_infer_req *q, const void *output,
		      size_t len, struct sym_buf *out, size_t *json_len)
{
	const struct sym_tensor_sig *s = &m->output;
	if (len != sym_tensor_bytes(s))
		return -EINVAL;
	cJSON *root = cJSON_CreateObject();
	if (!root)
		return -ENOMEM;
	cJSON_AddStringToObject(root, "model_name", m->name);
	char ver[16];
	snprintf(ver, sizeof(ver), "%d", m->version > 0 ? m->version : 1);
	cJSON_AddStringToObject(root, "model_version", ver);
	if (q->id[0])
		cJSON_AddStringToObject(root, "id", q->id);
	cJSON *outs = cJSON_AddArrayToObject(root, "outputs");
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToArray(outs, o);
	cJSON_AddStringToObject(o, "name", s->name);
	cJSON_AddStringToObject(o, "datatype", sym_dtype_name(s->dtype));
	cJSON_AddItemToObject(o, "shape", shape_json(s, q->batch_dim));
	if (q->binary_out) {
		cJSON *p = cJSON_AddObjectToObject(o, "parameters");
		cJSON_AddNumberToObject(p, "binary_data_size", (double)len);
	} else {
		cJSON *d = cJSON_AddArrayToObject(o, "data");
		size_t sz = sym_dtype_size(s->dtype);
		for (size_t i = 0; i < len / sz; i++) {
			const unsigned char *p = (const unsigned char *)output + i * sz;
			char num[24];
			if (s->dtype == SYM_DT_UINT64 || s->dtype == SYM_DT_INT64) { /* exact, beyond 2^53 too */
				uint64_t u;
				memcpy(&u, p, 8);
				if (s->dtype == SYM_DT_INT64)
					snprintf(num, sizeof(num), "%lld", (long long)(int64_t)u);
				else
					snprintf(num, sizeof(num), "%llu", (unsigned long long)u);
				cJSON_AddItemToArray(d, cJSON_CreateRaw(num));
				continue;
			}
			double v = elem(s->dtype, p);
			cJSON_AddItemToArray(d, s->dtype == SYM_DT_BOOL ? cJSON_CreateBool(v != 0) : cJSON_CreateNumber(v));
		}
	}
	char *text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!text)
		return -ENOMEM;
	*json_len = strlen(text);
	sym_buf_append(out, text, *json_len);
	cJSON_free(text);
	if (q->binary_out)
		sym_buf_append(out, output, len);
	return out->oom ? -ENOMEM : 0;
}

cJSON *sym_kserve_model_metadata(const struct sym_model_desc *m, const char *platform)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", m->name);
	cJSON *v = cJSON_AddArrayToObject(o, "versions");
	char ver[16];
	snprintf(ver, sizeof(ver), "%d", m->version > 0 ? m->version : 1);
	cJSON_AddItemToArray(v, cJSON_CreateString(ver));
	cJSON_AddStringToObject(o, "platform", platform);
	cJSON *ins = cJSON_AddArrayToObject(o, "inputs");
	cJSON_AddItemToArray(ins, sym_tensor_sig_to_json(&m->input));
	cJSON *outs = cJSON_AddArrayToObject(o, "outputs");
	cJSON_AddItemToArray(outs, sym_tensor_sig_to_json(&m->output));
	return o;
}
