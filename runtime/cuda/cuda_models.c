#include "runtime/cuda/cuda_models.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiles/zoo.h"

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

/* Refuses a key of spec that is not in keys (NULL-terminated), naming the ones it takes. */
static int check_keys(const cJSON *spec, const char *what, const char *const *keys, char *err, size_t errlen)
{
	for (const cJSON *it = spec->child; it; it = it->next) {
		int known = 0;
		for (int i = 0; keys[i] && !known; i++)
			known = !strcmp(it->string, keys[i]);
		if (!known) {
			char list[128] = "";
			for (int i = 0; keys[i]; i++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
					 keys[i]);
			return ERR("%s: unknown key '%s' (expected %s)", what, it->string, list);
		}
	}
	return 0;
}

static int is_int_in(const cJSON *v, double lo, double hi)
{
	return cJSON_IsNumber(v) && v->valuedouble >= lo && v->valuedouble <= hi &&
	       v->valuedouble == floor(v->valuedouble);
}

/* spec[key], an array of min_n..max_n integers in 1..SYM_CUDA_MAX_DIM, into out. */
static int get_dims(const cJSON *spec, const char *what, const char *key, int min_n, int max_n, int *out, int *n,
		    char *err, size_t errlen)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(spec, key);
	int len = cJSON_GetArraySize(a);
	if (!cJSON_IsArray(a) || len < min_n || len > max_n)
		return min_n == max_n ? ERR("%s: key '%s': expected an array of %d positive integers, got %s", what,
					    key, min_n, sym_json_type(a))
				      : ERR("%s: key '%s': expected an array of %d..%d positive integers, got %s", what,
					    key, min_n, max_n, sym_json_type(a));
	int i = 0;
	for (const cJSON *v = a->child; v; v = v->next, i++) {
		if (!is_int_in(v, 1, SYM_CUDA_MAX_DIM))
			return ERR("%s: key '%s': element %d is not an integer in 1..%d", what, key, i,
				   SYM_CUDA_MAX_DIM);
		out[i] = (int)v->valuedouble;
	}
	*n = len;
	return 0;
}

static int get_seed(const cJSON *spec, const char *what, uint64_t *seed, char *err, size_t errlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, "seed");
	*seed = 1;
	if (!v)
		return 0;
	if (!is_int_in(v, 0, 9007199254740992.0))
		return ERR("%s: key 'seed': expected an integer in 0..2^53, got %s", what, sym_json_type(v));
	*seed = (uint64_t)v->valuedouble;
	return 0;
}

static void add_layer(struct sym_cuda_builtin *b, enum sym_cuda_layer_kind kind, int relu, int in_c, int in_h, int in_w,
		      int out_c)
{
	struct sym_cuda_layer *l = &b->layers[b->nlayers++];
	l->kind = kind;
	l->relu = relu;
	l->in_c = in_c;
	l->in_h = in_h;
	l->in_w = in_w;
	l->out_c = out_c;
	l->out_h = kind == SYM_CUDA_CONV ? in_h / 2 : 1;
	l->out_w = kind == SYM_CUDA_CONV ? in_w / 2 : 1;
	l->fan_in = kind == SYM_CUDA_CONV ? in_c * 9 : in_c * in_h * in_w;
	l->nw = (size_t)out_c * (size_t)l->fan_in;
	l->nb = (size_t)out_c;
	l->w_off = b->nparams;
	l->b_off = l->w_off + l->nw;
	b->nparams += l->nw + l->nb;
}

static int parse_mlp(const cJSON *spec, struct sym_cuda_builtin *b, char *err, size_t errlen)
{
	static const char *const keys[] = { "builtin", "layers", "seed", NULL };
	int rc, sizes[SYM_CUDA_MAX_LAYERS + 1], n;
	if ((rc = check_keys(spec, "builtin mlp", keys, err, errlen)) ||
	    (rc = get_dims(spec, "builtin mlp", "layers", 2, SYM_CUDA_MAX_LAYERS + 1, sizes, &n, err, errlen)) ||
	    (rc = get_seed(spec, "builtin mlp", &b->seed, err, errlen)))
		return rc;
	for (int i = 0; i + 1 < n; i++)
		add_layer(b, SYM_CUDA_FC, i + 2 < n, sizes[i], 1, 1, sizes[i + 1]);
	int64_t in = sizes[0];
	sym_tensor_sig_set(&b->input, "INPUT0", SYM_DT_FP32, 1, &in);
	return 0;
}

static int parse_cnn(const cJSON *spec, struct sym_cuda_builtin *b, char *err, size_t errlen)
{
	static const char *const keys[] = { "builtin", "input", "channels", "classes", "seed", NULL };
	int rc, chw[3], ch[SYM_CUDA_MAX_LAYERS - 1], nin, nch;
	if ((rc = check_keys(spec, "builtin cnn", keys, err, errlen)) ||
	    (rc = get_dims(spec, "builtin cnn", "input", 3, 3, chw, &nin, err, errlen)) ||
	    (rc = get_dims(spec, "builtin cnn", "channels", 1, SYM_CUDA_MAX_LAYERS - 1, ch, &nch, err, errlen)) ||
	    (rc = get_seed(spec, "builtin cnn", &b->seed, err, errlen)))
		return rc;
	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(spec, "classes");
	if (!is_int_in(cl, 1, SYM_CUDA_MAX_DIM))
		return ERR("builtin cnn: key 'classes': expected an integer in 1..%d, got %s", SYM_CUDA_MAX_DIM,
			   sym_json_type(cl));
	if ((int64_t)chw[0] * chw[1] * chw[2] > SYM_CUDA_MAX_DIM)
		return ERR("builtin cnn: key 'input': [%d, %d, %d] has more than %d elements", chw[0], chw[1], chw[2],
			   SYM_CUDA_MAX_DIM);
	int c = chw[0], h = chw[1], w = chw[2];
	for (int i = 0; i < nch; i++) {
		if (h < 2 || w < 2)
			return ERR(
				"builtin cnn: key 'channels': entry %d would pool a %dx%d map (each entry halves the "
				"height and width of the input [%d, %d, %d])",
				i, h, w, chw[0], chw[1], chw[2]);
		if ((int64_t)ch[i] * (h / 2) * (w / 2) > SYM_CUDA_MAX_DIM)
			return ERR("builtin cnn: key 'channels': entry %d makes a map of more than %d elements", i,
				   SYM_CUDA_MAX_DIM);
		add_layer(b, SYM_CUDA_CONV, 1, c, h, w, ch[i]);
		c = ch[i];
		h /= 2;
		w /= 2;
	}
	add_layer(b, SYM_CUDA_FC, 0, c, h, w, (int)cl->valuedouble);
	int64_t in[3] = { chw[0], chw[1], chw[2] };
	sym_tensor_sig_set(&b->input, "INPUT0", SYM_DT_FP32, 3, in);
	return 0;
}

int sym_cuda_builtin_parse(const cJSON *spec, struct sym_cuda_builtin *b, char *err, size_t errlen)
{
	memset(b, 0, sizeof(*b));
	if (!cJSON_IsObject(spec))
		return ERR("builtin: expected an object such as {\"builtin\": \"mlp\", \"layers\": [784, 10]}, got %s",
			   sym_json_type(spec));
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(spec, "builtin");
	const char *name = cJSON_IsString(k) ? k->valuestring : "";
	int rc;
	if (!strcmp(name, "mlp"))
		rc = parse_mlp(spec, b, err, errlen);
	else if (!strcmp(name, "cnn"))
		rc = parse_cnn(spec, b, err, errlen);
	else
		return ERR("builtin: key 'builtin': expected \"mlp\" or \"cnn\", got %s%s%s%s", sym_json_type(k),
			   cJSON_IsString(k) ? " \"" : "", cJSON_IsString(k) ? name : "",
			   cJSON_IsString(k) ? "\"" : "");
	if (rc)
		return rc;
	snprintf(b->kind, sizeof(b->kind), "%s", name);
	const struct sym_cuda_layer *last = &b->layers[b->nlayers - 1];
	int64_t out = last->out_c;
	sym_tensor_sig_set(&b->output, "OUTPUT0", SYM_DT_FP32, 1, &out);
	b->in_elems = (size_t)sym_tensor_elems(&b->input);
	b->out_elems = (size_t)out;
	for (int i = 0; i + 1 < b->nlayers; i++) {
		const struct sym_cuda_layer *l = &b->layers[i];
		size_t act = (size_t)l->out_c * (size_t)l->out_h * (size_t)l->out_w;
		if (act > b->max_act)
			b->max_act = act;
	}
	return 0;
}

int sym_cuda_builtin_signature(const cJSON *spec, struct sym_tensor_sig *in, struct sym_tensor_sig *out, char *err,
			       size_t errlen)
{
	struct sym_cuda_builtin *b = malloc(sizeof(*b));
	if (!b)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	int rc = sym_cuda_builtin_parse(spec, b, err, errlen);
	if (!rc) {
		*in = b->input;
		*out = b->output;
	}
	free(b);
	return rc;
}

int sym_cuda_spec_parse(const cJSON *spec, const char *model_lib, struct sym_cuda_spec *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	if (spec && cJSON_GetObjectItemCaseSensitive(spec, "builtin")) {
		s->is_builtin = 1;
		return sym_cuda_builtin_parse(spec, &s->net, err, errlen);
	}
	if (spec) {
		static const char *const keys[] = { "lib", "args", NULL };
		int rc;
		if (!cJSON_IsObject(spec))
			return ERR("executor spec: expected an object with \"builtin\" or \"lib\", got %s",
				   sym_json_type(spec));
		if ((rc = check_keys(spec, "plugin", keys, err, errlen)))
			return rc;
		const cJSON *lib = cJSON_GetObjectItemCaseSensitive(spec, "lib");
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(spec, "args");
		if (lib && (!cJSON_IsString(lib) || !lib->valuestring[0]))
			return ERR("plugin: key 'lib': expected the path of a shared library, got %s",
				   sym_json_type(lib));
		if (args && !cJSON_IsObject(args))
			return ERR("plugin: key 'args': expected an object, got %s", sym_json_type(args));
		s->lib = lib ? lib->valuestring : NULL;
		s->args = args;
	}
	if (!s->lib)
		s->lib = model_lib && model_lib[0] ? model_lib : NULL;
	if (!s->lib)
		return ERR("%s: expected {\"builtin\": \"mlp\" or \"cnn\", ...} or {\"lib\": PATH, \"args\": {...}} "
			   "(or a default plugin library from --model-lib)",
			   spec ? "plugin: key 'lib' is missing" : "no executor spec");
	return 0;
}

char *sym_cuda_sig_str(const struct sym_tensor_sig *s, char *buf, size_t len)
{
	size_t at = (size_t)snprintf(buf, len, "%s [", sym_dtype_name(s->dtype));
	for (int i = 0; i < s->ndim && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%lld", i ? ", " : "", (long long)s->shape[i]);
	if (at < len)
		snprintf(buf + at, len - at, "]");
	return buf;
}

static int sig_eq(const struct sym_tensor_sig *a, const struct sym_tensor_sig *b)
{
	if (a->dtype != b->dtype || a->ndim != b->ndim)
		return 0;
	for (int i = 0; i < a->ndim; i++)
		if (a->shape[i] != b->shape[i])
			return 0;
	return 1;
}

int sym_cuda_builtin_check_sig(const struct sym_cuda_builtin *b, const struct sym_tensor_sig *in,
			       const struct sym_tensor_sig *out, char *err, size_t errlen)
{
	char have[128], want[128];
	if (!sig_eq(in, &b->input))
		return ERR("input is %s, the builtin %s takes %s", sym_cuda_sig_str(in, have, sizeof(have)), b->kind,
			   sym_cuda_sig_str(&b->input, want, sizeof(want)));
	if (!sig_eq(out, &b->output))
		return ERR("output is %s, the builtin %s gives %s", sym_cuda_sig_str(out, have, sizeof(have)), b->kind,
			   sym_cuda_sig_str(&b->output, want, sizeof(want)));
	return 0;
}

uint64_t sym_cuda_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

float sym_cuda_uniform(uint64_t *state, float s)
{
	float u = (float)(sym_cuda_splitmix64(state) >> 40) * (1.0f / 16777216.0f);
	return (2.0f * u - 1.0f) * s;
}

void sym_cuda_builtin_init_params(const struct sym_cuda_builtin *b, float *params)
{
	uint64_t st = b->seed;
	for (int i = 0; i < b->nlayers; i++) {
		const struct sym_cuda_layer *l = &b->layers[i];
		float sw = sqrtf(6.0f / (float)l->fan_in), sb = 1.0f / sqrtf((float)l->fan_in);
		for (size_t k = 0; k < l->nw; k++)
			params[l->w_off + k] = sym_cuda_uniform(&st, sw);
		for (size_t k = 0; k < l->nb; k++)
			params[l->b_off + k] = sym_cuda_uniform(&st, sb);
	}
}

void sym_cuda_builtin_device_params(const struct sym_cuda_builtin *b, const float *params, float *dev)
{
	memcpy(dev, params, b->nparams * sizeof(float));
	for (int i = 0; i < b->nlayers; i++) {
		const struct sym_cuda_layer *l = &b->layers[i];
		if (l->kind != SYM_CUDA_FC)
			continue;
		size_t in = (size_t)l->fan_in, out = (size_t)l->out_c;
		for (size_t j = 0; j < out; j++)
			for (size_t k = 0; k < in; k++)
				dev[l->w_off + k * out + j] = params[l->w_off + j * in + k];
	}
}

/* y[j] = b[j] + sum_k w[j][k] x[k], then ReLU if asked. */
static void fc_ref(const struct sym_cuda_layer *l, const float *p, const float *x, float *y)
{
	const float *w = p + l->w_off, *bias = p + l->b_off;
	size_t in = (size_t)l->fan_in;
	for (int j = 0; j < l->out_c; j++) {
		double acc = bias[j];
		for (size_t k = 0; k < in; k++)
			acc += (double)w[(size_t)j * in + k] * x[k];
		y[j] = (float)(l->relu && acc < 0 ? 0 : acc);
	}
}

/* Each output is the max over a 2x2 window of ReLU(3x3 convolution, zero padding). */
static void conv_ref(const struct sym_cuda_layer *l, const float *p, const float *x, float *y)
{
	int h = l->in_h, w = l->in_w;
	for (int co = 0; co < l->out_c; co++)
		for (int py = 0; py < l->out_h; py++)
			for (int px = 0; px < l->out_w; px++) {
				double best = 0;
				for (int d = 0; d < 4; d++) {
					int cy = 2 * py + d / 2, cx = 2 * px + d % 2;
					double acc = p[l->b_off + (size_t)co];
					for (int ci = 0; ci < l->in_c; ci++)
						for (int k = 0; k < 9; k++) {
							int iy = cy + k / 3 - 1, ix = cx + k % 3 - 1;
							if (iy < 0 || iy >= h || ix < 0 || ix >= w)
								continue;
							acc += (double)x[((size_t)ci * h + iy) * w + ix] *
							       p[l->w_off + ((size_t)co * l->in_c + ci) * 9 + k];
						}
					if (acc > best)
						best = acc;
				}
				y[((size_t)co * l->out_h + py) * l->out_w + px] = (float)best;
			}
}

int sym_cuda_builtin_ref(const struct sym_cuda_builtin *b, const float *params, int n, const float *in, float *out)
{
	size_t act = b->max_act ? b->max_act : 1;
	float *buf = malloc(2 * act * sizeof(float));
	if (!buf)
		return -ENOMEM;
	for (int s = 0; s < n; s++) {
		const float *cur = in + (size_t)s * b->in_elems;
		for (int i = 0; i < b->nlayers; i++) {
			const struct sym_cuda_layer *l = &b->layers[i];
			float *dst = i + 1 == b->nlayers ? out + (size_t)s * b->out_elems : buf + (size_t)(i % 2) * act;
			if (l->kind == SYM_CUDA_CONV)
				conv_ref(l, params, cur, dst);
			else
				fc_ref(l, params, cur, dst);
			cur = dst;
		}
	}
	free(buf);
	return 0;
}
