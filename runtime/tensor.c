#include "runtime/tensor.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	size_t size;
} dtypes[SYM_DT_COUNT] = {
	[SYM_DT_INVALID] = { "INVALID", 0 }, [SYM_DT_BOOL] = { "BOOL", 1 },   [SYM_DT_UINT8] = { "UINT8", 1 },
	[SYM_DT_UINT16] = { "UINT16", 2 },   [SYM_DT_UINT32] = { "UINT32", 4 }, [SYM_DT_UINT64] = { "UINT64", 8 },
	[SYM_DT_INT8] = { "INT8", 1 },       [SYM_DT_INT16] = { "INT16", 2 },   [SYM_DT_INT32] = { "INT32", 4 },
	[SYM_DT_INT64] = { "INT64", 8 },     [SYM_DT_FP16] = { "FP16", 2 },     [SYM_DT_FP32] = { "FP32", 4 },
	[SYM_DT_FP64] = { "FP64", 8 },
};

const char *sym_dtype_name(enum sym_dtype t)
{
	return t > SYM_DT_INVALID && t < SYM_DT_COUNT ? dtypes[t].name : "INVALID";
}

enum sym_dtype sym_dtype_parse(const char *s)
{
	for (int t = SYM_DT_INVALID + 1; s && t < SYM_DT_COUNT; t++)
		if (!strcmp(s, dtypes[t].name))
			return (enum sym_dtype)t;
	return SYM_DT_INVALID;
}

size_t sym_dtype_size(enum sym_dtype t)
{
	return t > SYM_DT_INVALID && t < SYM_DT_COUNT ? dtypes[t].size : 0;
}

static uint64_t xorshift64(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

void sym_tensor_fill_random(const struct sym_tensor_sig *s, void *buf, uint64_t *state)
{
	size_t n = (size_t)sym_tensor_elems(s), es = sym_dtype_size(s->dtype);
	unsigned char *b = buf;
	for (size_t i = 0; i < n; i++, b += es) {
		uint64_t r = xorshift64(state);
		double u = (double)(r >> 11) * 0x1p-53 * 2 - 1; /* [-1, 1) */
		if (s->dtype == SYM_DT_FP32) {
			float f = (float)u;
			memcpy(b, &f, 4);
		} else if (s->dtype == SYM_DT_FP64) {
			memcpy(b, &u, 8);
		} else if (s->dtype == SYM_DT_FP16) {
			/* sign, exponent 1..14 (2^-14 .. 2^-1 scaled by 1.mantissa), any mantissa */
			uint16_t h = (uint16_t)(((r >> 63) << 15) | ((1 + (r >> 20) % 14) << 10) | (r & 0x3ff));
			memcpy(b, &h, 2);
		} else if (s->dtype == SYM_DT_BOOL) {
			*b = (unsigned char)(r >> 63);
		} else {
			memcpy(b, &r, es);
		}
	}
}

int64_t sym_tensor_elems(const struct sym_tensor_sig *s)
{
	int64_t n = 1;
	for (int i = 0; i < s->ndim; i++)
		n *= s->shape[i];
	return n;
}

size_t sym_tensor_bytes(const struct sym_tensor_sig *s)
{
	return (size_t)sym_tensor_elems(s) * sym_dtype_size(s->dtype);
}

int sym_tensor_sig_set(struct sym_tensor_sig *s, const char *name, enum sym_dtype t, int ndim, const int64_t *shape)
{
	if (!name || !*name || strlen(name) >= sizeof(s->name) || t <= SYM_DT_INVALID || t >= SYM_DT_COUNT ||
	    ndim < 1 || ndim > SYM_TENSOR_DIMS)
		return -EINVAL;
	int64_t n = 1;
	for (int i = 0; i < ndim; i++) {
		if (shape[i] < 1 || shape[i] > (INT64_C(1) << 40) / n)
			return -EINVAL;
		n *= shape[i];
	}
	memset(s, 0, sizeof(*s));
	strcpy(s->name, name);
	s->dtype = t;
	s->ndim = ndim;
	memcpy(s->shape, shape, sizeof(*shape) * (size_t)ndim);
	return 0;
}

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

int sym_tensor_sig_from_json(const cJSON *obj, const char *where, const char *def_name, size_t max_bytes,
			     struct sym_tensor_sig *s, char *err, size_t errlen)
{
	if (!cJSON_IsObject(obj))
		return ERR("%s: expected an object {\"name\", \"datatype\", \"shape\"}", where);
	for (const cJSON *it = obj->child; it; it = it->next)
		if (strcmp(it->string, "name") && strcmp(it->string, "datatype") && strcmp(it->string, "shape"))
			return ERR("%s: unknown key '%s' (expected name, datatype, shape)", where, it->string);
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(obj, "name");
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(obj, "datatype");
	const cJSON *sh = cJSON_GetObjectItemCaseSensitive(obj, "shape");
	const char *name = def_name;
	if (n) {
		if (!cJSON_IsString(n) || !*n->valuestring || strlen(n->valuestring) >= sizeof(s->name))
			return ERR("%s: key 'name': expected a string of 1..%zu characters", where, sizeof(s->name) - 1);
		name = n->valuestring;
	}
	if (!cJSON_IsString(d))
		return ERR("%s: key 'datatype': expected a string such as \"FP32\"", where);
	enum sym_dtype t = sym_dtype_parse(d->valuestring);
	if (t == SYM_DT_INVALID)
		return ERR("%s: key 'datatype': unknown datatype \"%s\" (expected BOOL, UINT8, UINT16, UINT32, UINT64, "
			   "INT8, INT16, INT32, INT64, FP16, FP32 or FP64)", where, d->valuestring);
	int nd = cJSON_GetArraySize(sh);
	if (!cJSON_IsArray(sh) || nd < 1 || nd > SYM_TENSOR_DIMS)
		return ERR("%s: key 'shape': expected an array of 1..%d positive integers", where, SYM_TENSOR_DIMS);
	int64_t shape[SYM_TENSOR_DIMS];
	int i = 0;
	for (const cJSON *v = sh->child; v; v = v->next, i++) {
		double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
		if (!(x >= 1 && x <= 1e9) || x != floor(x))
			return ERR("%s: key 'shape': element %d is not a positive integer", where, i);
		shape[i] = (int64_t)x;
	}
	if (sym_tensor_sig_set(s, name, t, nd, shape))
		return ERR("%s: key 'shape': the tensor is too large", where);
	if (sym_tensor_bytes(s) > max_bytes)
		return ERR("%s: the tensor is %zu bytes, more than the limit of %zu", where, sym_tensor_bytes(s),
			   max_bytes);
	return 0;
}

cJSON *sym_tensor_sig_to_json(const struct sym_tensor_sig *s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", s->name);
	cJSON_AddStringToObject(o, "datatype", sym_dtype_name(s->dtype));
	cJSON *sh = cJSON_AddArrayToObject(o, "shape");
	for (int i = 0; i < s->ndim; i++)
		cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)s->shape[i]));
	return o;
}

static void shape_text(const struct sym_tensor_sig *s, bool batch, char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "[%s", batch ? "1" : "");
	for (int i = 0; i < s->ndim && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%lld", i || batch ? ", " : "", (long long)s->shape[i]);
	if (o < len)
		snprintf(buf + o, len - o, "]");
}

int sym_tensor_check_input(const struct sym_tensor_sig *sig, const char *model, const char *name, const char *datatype,
			   const int64_t *shape, int nd, const char *got, bool *batch, char *err, size_t errlen)
{
	if (strcmp(name, sig->name))
		return ERR("inputs[0].name: model '%s' has no input '%s' (its input is '%s')", model, name, sig->name);
	if (!datatype || sym_dtype_parse(datatype) != sig->dtype)
		return ERR("inputs[0].datatype: expected \"%s\", got %s%s%s", sym_dtype_name(sig->dtype),
			   datatype ? "\"" : "", datatype ? datatype : "no string", datatype ? "\"" : "");
	*batch = nd == sig->ndim + 1;
	bool ok = nd == sig->ndim || *batch;
	for (int i = 0; ok && i < nd; i++)
		ok = shape[i] == (*batch ? (i == 0 ? 1 : sig->shape[i - 1]) : sig->shape[i]);
	if (!ok) {
		char want[160], b1[160];
		shape_text(sig, false, want, sizeof(want));
		shape_text(sig, true, b1, sizeof(b1));
		return ERR("inputs[0].shape: expected %s or %s, got %s", want, b1, got);
	}
	return 0;
}
