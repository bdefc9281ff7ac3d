/* core/policy.c - the policy registry, and parameters from each policy's
 * table: parsing, validation, canonical text, comparison and help. */
#include "core/policy.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy_api.h"

/* ---- the registry ---- */

/* The built-in policies (core/policies/). */
extern const struct sym_policy_ops sym_policy_symphony;
extern const struct sym_policy_ops sym_policy_eager;
extern const struct sym_policy_ops sym_policy_timeout;
extern const struct sym_policy_ops sym_policy_betalambda;
extern const struct sym_policy_ops sym_policy_clockwork;
extern const struct sym_policy_ops sym_policy_shepherd;
extern const struct sym_policy_ops sym_policy_nexus;
extern const struct sym_policy_ops sym_policy_urgency;
extern const struct sym_policy_ops sym_policy_fcfs;
extern const struct sym_policy_ops sym_policy_edf;

#define NBUILTIN 10
#define MAX_POLICIES 32

static const struct sym_policy_ops *registry[MAX_POLICIES] = {
	&sym_policy_symphony,
	&sym_policy_eager,
	&sym_policy_timeout,
	&sym_policy_betalambda,
	&sym_policy_clockwork,
	&sym_policy_shepherd,
	&sym_policy_nexus,
	&sym_policy_urgency,
	&sym_policy_fcfs,
	&sym_policy_edf,
};
static size_t nreg = NBUILTIN;

const struct sym_policy_ops *const *sym_policy_list(size_t *n)
{
	*n = nreg;
	return registry;
}

static const struct sym_policy_ops *find_n(const char *name, size_t len)
{
	for (size_t i = 0; i < nreg; i++)
		if (strlen(registry[i]->name) == len && !strncmp(registry[i]->name, name, len))
			return registry[i];
	return NULL;
}

const struct sym_policy_ops *sym_policy_find(const char *name)
{
	return find_n(name, strlen(name));
}

const char *sym_policy_ops_name(const struct sym_policy_ops *ops)
{
	return ops->name;
}

const char *sym_policy_ops_summary(const struct sym_policy_ops *ops)
{
	return ops->summary;
}

const char *sym_policy_name(const struct sym_policy *p)
{
	return p->ops->name;
}

bool sym_policy_is_scheduler(const struct sym_policy *p)
{
	return p->ops->sched != NULL;
}

void sym_policy_lookahead(const struct sym_policy *p, struct sym_lookahead *out)
{
	*out = (struct sym_lookahead){ .plan = false, .margin = 0, .replan = 0, .wait = false, .wait_quantile = 0.99 };
	if (p->ops->lookahead && !p->ops->sched)
		p->ops->lookahead(p, out);
}

int sym_policy_register(const struct sym_policy_ops *ops, char *err, size_t errlen)
{
	int rc = sym_policy_validate(ops, err, errlen);
	if (rc)
		return rc;
	if (sym_policy_find(ops->name)) {
		snprintf(err, errlen, "policy '%s' is already registered", ops->name);
		return -EEXIST;
	}
	if (nreg == MAX_POLICIES) {
		snprintf(err, errlen, "policy '%s': the registry is full (%d policies)", ops->name, MAX_POLICIES);
		return -ENOSPC;
	}
	registry[nreg++] = ops;
	return 0;
}

/* ---- text helpers ---- */

int sym_policy_kv_next(const struct sym_policy *p, const char **params, char *key, size_t keylen,
		       char *val, size_t vallen, char *err, size_t errlen)
{
	const char *s = *params;
	if (!*s)
		return 0;
	const char *comma = strchr(s, ',');
	size_t n = comma ? (size_t)(comma - s) : strlen(s);
	const char *eq = memchr(s, '=', n);
	size_t kn = eq ? (size_t)(eq - s) : 0;
	size_t vn = eq ? n - kn - 1 : n;
	const char *v = eq ? eq + 1 : s;
	if (!n || (eq && !kn) || !vn) {
		snprintf(err, errlen, "policy '%s': empty parameter in '%s' (expected key=value,...)",
			 p->ops->name, s);
		return -EINVAL;
	}
	if (kn >= keylen || vn >= vallen) {
		snprintf(err, errlen, "policy '%s': parameter '%.*s' is too long", p->ops->name, (int)n, s);
		return -EINVAL;
	}
	memcpy(key, s, kn);
	key[kn] = '\0';
	memcpy(val, v, vn);
	val[vn] = '\0';
	*params = comma ? comma + 1 : s + n;
	if (comma && !comma[1]) {
		snprintf(err, errlen, "policy '%s': trailing comma in the parameters", p->ops->name);
		return -EINVAL;
	}
	return 1;
}

int sym_policy_num(const char *text, double lo, double hi, double *out)
{
	char *end = NULL;
	errno = 0;
	double x = strtod(text, &end);
	if (!*text || end == text || *end || errno || !isfinite(x) || x < lo || x > hi)
		return -EINVAL;
	*out = x;
	return 0;
}

int sym_policy_int(const char *text, long lo, long hi, int *out)
{
	char *end = NULL;
	errno = 0;
	long x = strtol(text, &end, 10);
	if (!*text || end == text || *end || errno || x < lo || x > hi)
		return -EINVAL;
	*out = (int)x;
	return 0;
}

char *sym_policy_fmt_num(double x, char *buf, size_t len)
{
	snprintf(buf, len, "%.15g", x);
	if (strtod(buf, NULL) != x)
		snprintf(buf, len, "%.17g", x);
	return buf;
}

/* Appends to buf (length *l of len), keeping it terminated. */
static void put(char *buf, size_t len, size_t *l, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void put(char *buf, size_t len, size_t *l, const char *fmt, ...)
{
	if (*l >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *l, len - *l, fmt, ap);
	va_end(ap);
	*l = n < 0 ? *l : *l + (size_t)n;
}

/* ---- one parameter's field ---- */

static double field_get(const struct sym_policy *p, const struct sym_param *prm)
{
	const unsigned char *b = p->params.bytes + prm->offset;
	double d;
	int i;
	bool v;
	switch (prm->type) {
	case SYM_PARAM_NUM:
		memcpy(&d, b, sizeof(d));
		return d;
	case SYM_PARAM_BOOL:
		memcpy(&v, b, sizeof(v));
		return v;
	default:
		memcpy(&i, b, sizeof(i));
		return i;
	}
}

static void field_set(struct sym_policy *p, const struct sym_param *prm, double x)
{
	unsigned char *b = p->params.bytes + prm->offset;
	int i = (int)x;
	bool v = x != 0;
	switch (prm->type) {
	case SYM_PARAM_NUM:
		memcpy(b, &x, sizeof(x));
		break;
	case SYM_PARAM_BOOL:
		memcpy(b, &v, sizeof(v));
		break;
	default:
		memcpy(b, &i, sizeof(i));
		break;
	}
}

static bool pct_get(const struct sym_policy *p, const struct sym_param *prm)
{
	bool v = false;
	if (prm->percent)
		memcpy(&v, p->params.bytes + prm->pct_offset, sizeof(v));
	return v;
}

static void pct_set(struct sym_policy *p, const struct sym_param *prm, bool v)
{
	if (prm->percent)
		memcpy(p->params.bytes + prm->pct_offset, &v, sizeof(v));
}

static void over_get(const struct sym_policy *p, const struct sym_param *prm, struct sym_policy_overrides *o)
{
	memcpy(o, p->params.bytes + prm->offset, sizeof(*o));
}

static void over_put(struct sym_policy *p, const struct sym_param *prm, const struct sym_policy_overrides *o)
{
	memcpy(p->params.bytes + prm->offset, o, sizeof(*o));
}

static size_t field_size(const struct sym_param *prm)
{
	switch (prm->type) {
	case SYM_PARAM_NUM:
		return sizeof(double);
	case SYM_PARAM_BOOL:
		return sizeof(bool);
	case SYM_PARAM_PER_MODEL:
		return sizeof(struct sym_policy_overrides);
	default:
		return sizeof(int);
	}
}

/* The word written for value x, or NULL. */
static const char *word_of(const struct sym_param *prm, double x)
{
	for (const struct sym_param_word *w = prm->words; w && w->word; w++)
		if (w->value == x)
			return w->word;
	return NULL;
}

/* The canonical text of p's value of prm (not PER_MODEL). */
static char *value_text(const struct sym_policy *p, const struct sym_param *prm, char *buf, size_t len)
{
	double x = field_get(p, prm);
	const char *w = prm->type == SYM_PARAM_BOOL ? (x ? "true" : "false") : word_of(prm, x);
	if (w) {
		snprintf(buf, len, "%s", w);
	} else if (prm->type == SYM_PARAM_NUM) {
		char num[32];
		snprintf(buf, len, "%s%s", sym_policy_fmt_num(x, num, sizeof(num)), pct_get(p, prm) ? "%" : "");
	} else {
		snprintf(buf, len, "%d", (int)x);
	}
	return buf;
}

/* ---- what a parameter accepts, in words ---- */

/* "a, b or c" (or "a|b|c") of the words, synonyms too. */
static void put_words(char *buf, size_t len, size_t *l, const struct sym_param_word *w, const char *sep,
		      const char *sep_last)
{
	size_t n = 0;
	while (w && w[n].word)
		n++;
	for (size_t i = 0; i < n; i++)
		put(buf, len, l, "%s%s", i == 0 ? "" : i + 1 == n ? sep_last : sep, w[i].word);
}

static void put_range(char *buf, size_t len, size_t *l, const struct sym_param *prm)
{
	if (prm->type == SYM_PARAM_NUM && prm->hi == INFINITY)
		put(buf, len, l, " %s %g", prm->lo_open ? ">" : ">=", prm->lo);
	else if (prm->type == SYM_PARAM_NUM)
		put(buf, len, l, " in %c%g, %g]", prm->lo_open ? '(' : '[', prm->lo, prm->hi);
	else
		put(buf, len, l, " in %.0f..%.0f", prm->lo, prm->hi);
}

/* What prm accepts: "a time in ms in [0, 1e+06], or off". */
static char *accepts(const struct sym_param *prm, char *buf, size_t len)
{
	size_t l = 0;
	buf[0] = '\0';
	switch (prm->type) {
	case SYM_PARAM_ENUM:
		put_words(buf, len, &l, prm->words, ", ", " or ");
		return buf;
	case SYM_PARAM_BOOL:
		put(buf, len, &l, "true, false, on, off, 1 or 0");
		return buf;
	case SYM_PARAM_NUM:
		put(buf, len, &l, "%s", !prm->unit ? "a number" : !strcmp(prm->unit, "s") ? "a time in seconds"
											 : "a time in ms");
		break;
	default:
		put(buf, len, &l, "an integer");
		break;
	}
	put_range(buf, len, &l, prm);
	if (prm->percent)
		put(buf, len, &l, ", or a percentage of the SLO up to %g%%", prm->pct_hi);
	if (prm->type == SYM_PARAM_NUM && prm->words && prm->words[0].word) {
		put(buf, len, &l, ", or ");
		put_words(buf, len, &l, prm->words, ", ", " or ");
	}
	return buf;
}

/* The keys (and presets) a spec may name: "a, b, c or legacy". */
static char *keys_text(const struct sym_policy_ops *ops, char *buf, size_t len)
{
	size_t l = 0, n = 0, i = 0;
	buf[0] = '\0';
	for (const struct sym_param *prm = ops->params; prm && prm->key; prm++)
		n++;
	for (const struct sym_policy_preset *ps = ops->presets; ps && ps->word; ps++)
		n++;
	for (const struct sym_param *prm = ops->params; prm && prm->key; prm++, i++)
		put(buf, len, &l, "%s%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", prm->key,
		    prm->type == SYM_PARAM_PER_MODEL ? ".MODEL" : "");
	for (const struct sym_policy_preset *ps = ops->presets; ps && ps->word; ps++, i++)
		put(buf, len, &l, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", ps->word);
	return buf;
}

/* ---- parsing ---- */

struct parse {
	struct sym_policy *p;
	uint64_t given;   /* bit i: table entry i was given */
	char *err;
	size_t errlen;
};

#define MAX_PARAMS 64

static int bad_value(struct parse *ps, const char *key, const struct sym_param *prm, const char *val)
{
	char want[256];
	snprintf(ps->err, ps->errlen, "policy '%s': %s must be %s (got '%s')", ps->p->ops->name, key,
		 accepts(prm, want, sizeof(want)), val);
	return -EINVAL;
}

/* A number: one of the words, "K%" when percentages are allowed, or K. */
static int parse_num(const struct sym_param *prm, const char *val, double *x, bool *pct)
{
	*pct = false;
	for (const struct sym_param_word *w = prm->words; w && w->word; w++)
		if (!strcmp(val, w->word)) {
			*x = w->value;
			return 0;
		}
	size_t n = strlen(val);
	double hi = prm->hi;
	char num[64];
	if (prm->percent && n > 1 && n < sizeof(num) && val[n - 1] == '%') {
		memcpy(num, val, n - 1);
		num[n - 1] = '\0';
		val = num;
		hi = prm->pct_hi;
		*pct = true;
	}
	if (sym_policy_num(val, prm->lo, hi, x) || (prm->lo_open && *x == prm->lo))
		return -EINVAL;
	return 0;
}

static int parse_scalar(const struct sym_param *prm, const char *val, double *x, bool *pct)
{
	int i;
	*pct = false;
	switch (prm->type) {
	case SYM_PARAM_NUM:
		return parse_num(prm, val, x, pct);
	case SYM_PARAM_BOOL:
		if (!strcmp(val, "true") || !strcmp(val, "1") || !strcmp(val, "on") || !strcmp(val, "false") ||
		    !strcmp(val, "0") || !strcmp(val, "off")) {
			*x = !strcmp(val, "true") || !strcmp(val, "1") || !strcmp(val, "on");
			return 0;
		}
		return -EINVAL;
	case SYM_PARAM_ENUM:
		for (const struct sym_param_word *w = prm->words; w && w->word; w++)
			if (!strcmp(val, w->word)) {
				*x = w->value;
				return 0;
			}
		return -EINVAL;
	default:
		if (sym_policy_int(val, (long)prm->lo, (long)prm->hi, &i))
			return -EINVAL;
		*x = i;
		return 0;
	}
}

static int set_scalar(struct parse *ps, const struct sym_param *prm, const char *key, const char *val)
{
	double x;
	bool pct;
	if (parse_scalar(prm, val, &x, &pct))
		return bad_value(ps, key, prm, val);
	field_set(ps->p, prm, x);
	pct_set(ps->p, prm, pct);
	return 0;
}

/* KEY.MODEL=val: model is the text after the dot. */
static int set_override(struct parse *ps, const struct sym_param *prm, const char *key, const char *model,
			const char *val)
{
	const char *name = ps->p->ops->name;
	struct sym_policy_overrides o;
	over_get(ps->p, prm, &o);
	if (!*model) {
		snprintf(ps->err, ps->errlen, "policy '%s': %s. needs a model name (%s.MODEL=N)", name, prm->key,
			 prm->key);
		return -EINVAL;
	}
	if (strlen(model) >= sizeof(o.v[0].model)) {
		snprintf(ps->err, ps->errlen, "policy '%s': %s: the model name is too long (at most %zu characters)",
			 name, key, sizeof(o.v[0].model) - 1);
		return -EINVAL;
	}
	for (int i = 0; i < o.n; i++)
		if (!strcmp(o.v[i].model, model)) {
			snprintf(ps->err, ps->errlen, "policy '%s': %s given twice", name, key);
			return -EINVAL;
		}
	if (o.n >= SYM_POLICY_MAX_OVERRIDES) {
		snprintf(ps->err, ps->errlen, "policy '%s': too many %s.MODEL overrides (at most %d)", name, prm->key,
			 SYM_POLICY_MAX_OVERRIDES);
		return -EINVAL;
	}
	if (sym_policy_int(val, (long)prm->lo, (long)prm->hi, &o.v[o.n].value))
		return bad_value(ps, key, prm, val);
	snprintf(o.v[o.n].model, sizeof(o.v[o.n].model), "%s", model);
	o.n++;
	over_put(ps->p, prm, &o);
	return 0;
}

static void set_defaults(struct sym_policy *p)
{
	for (const struct sym_param *prm = p->ops->params; prm && prm->key; prm++)
		if (!prm->alias && prm->type != SYM_PARAM_PER_MODEL && !prm->required)
			field_set(p, prm, prm->def);
}

static int apply_items(struct parse *ps, const char *text, bool presets);

/* A bare value: a preset, or the value of the parameter that takes one. */
static int apply_bare(struct parse *ps, const char *val, bool presets)
{
	const struct sym_policy_ops *ops = ps->p->ops;
	for (const struct sym_policy_preset *pr = ops->presets; presets && pr && pr->word; pr++)
		if (!strcmp(val, pr->word))
			return apply_items(ps, pr->spec, false);
	int i = 0;
	for (const struct sym_param *prm = ops->params; prm && prm->key; prm++, i++)
		if (prm->bare != SYM_PARAM_KEYED) {
			ps->given |= 1ull << i;
			return set_scalar(ps, prm, prm->key, val);
		}
	char keys[256];
	snprintf(ps->err, ps->errlen, "policy '%s': expected key=value (%s), got '%s'", ops->name,
		 keys_text(ops, keys, sizeof(keys)), val);
	return -EINVAL;
}

static int apply_item(struct parse *ps, const char *key, const char *val, bool presets)
{
	const struct sym_policy_ops *ops = ps->p->ops;
	if (!key[0])
		return apply_bare(ps, val, presets);
	const char *dot = strchr(key, '.');
	size_t kn = dot ? (size_t)(dot - key) : strlen(key);
	int i = 0;
	for (const struct sym_param *prm = ops->params; prm && prm->key; prm++, i++) {
		if (strlen(prm->key) != kn || strncmp(prm->key, key, kn) || !dot != (prm->type != SYM_PARAM_PER_MODEL))
			continue;
		ps->given |= 1ull << i;
		return dot ? set_override(ps, prm, key, dot + 1, val) : set_scalar(ps, prm, key, val);
	}
	char keys[256];
	snprintf(ps->err, ps->errlen, "policy '%s': unknown parameter '%s' (expected %s)", ops->name, key,
		 keys_text(ops, keys, sizeof(keys)));
	return -EINVAL;
}

static int apply_items(struct parse *ps, const char *text, bool presets)
{
	char key[SYM_POLICY_MODEL_NAME + 32], val[64];
	int rc;
	while ((rc = sym_policy_kv_next(ps->p, &text, key, sizeof(key), val, sizeof(val), ps->err, ps->errlen)) > 0)
		if ((rc = apply_item(ps, key, val, presets)))
			return rc;
	return rc;
}

/* Parses params (the text after "NAME:") into p, whose ops are set. */
static int parse_params(struct sym_policy *p, const char *params, char *err, size_t errlen)
{
	const struct sym_policy_ops *ops = p->ops;
	struct parse ps = { p, 0, err, errlen };
	memset(&p->params, 0, sizeof(p->params));
	set_defaults(p);
	if (*params && !(ops->params && ops->params[0].key) && !(ops->presets && ops->presets[0].word)) {
		snprintf(err, errlen, "policy '%s' takes no parameters (got '%s')", ops->name, params);
		return -EINVAL;
	}
	int rc = apply_items(&ps, params, true);
	if (rc)
		return rc;
	int i = 0;
	for (const struct sym_param *prm = ops->params; prm && prm->key; prm++, i++) {
		if (prm->required && !(ps.given & (1ull << i))) {
			char want[256];
			snprintf(err, errlen, "policy '%s' needs %s: %s", ops->name, prm->key,
				 accepts(prm, want, sizeof(want)));
			return -EINVAL;
		}
	}
	if (ops->check && (rc = ops->check(p, err, errlen))) {
		char msg[256];
		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, errlen, "policy '%s': %s", ops->name, msg);
		return rc;
	}
	return 0;
}

int sym_policy_parse(const char *spec, struct sym_policy *out, char *err, size_t errlen)
{
	const char *colon = strchr(spec, ':');
	size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
	const struct sym_policy_ops *ops = find_n(spec, nlen);
	if (!ops) {
		char names[512];
		size_t l = 0;
		names[0] = '\0';
		for (size_t i = 0; i < nreg; i++)
			put(names, sizeof(names), &l, "%s%s", i ? ", " : "", registry[i]->name);
		snprintf(err, errlen, "unknown policy '%.*s' (expected one of: %s)", (int)nlen, spec, names);
		return -ENOENT;
	}
	const char *params = colon ? colon + 1 : "";
	if (colon && !*params) {
		snprintf(err, errlen, "policy '%s': empty parameters after ':'", ops->name);
		return -EINVAL;
	}
	struct sym_policy p;
	memset(&p, 0, sizeof(p));
	p.ops = ops;
	int rc = parse_params(&p, params, err, errlen);
	if (!rc)
		*out = p;
	return rc;
}

/* ---- comparing and writing ---- */

static bool over_equal(const struct sym_policy *a, const struct sym_policy *b, const struct sym_param *prm)
{
	struct sym_policy_overrides oa, ob;
	over_get(a, prm, &oa);
	over_get(b, prm, &ob);
	if (oa.n != ob.n)
		return false;
	for (int i = 0; i < oa.n; i++)
		if (oa.v[i].value != ob.v[i].value || strcmp(oa.v[i].model, ob.v[i].model))
			return false;
	return true;
}

static bool param_equal(const struct sym_policy *a, const struct sym_policy *b, const struct sym_param *prm)
{
	if (prm->type == SYM_PARAM_PER_MODEL)
		return over_equal(a, b, prm);
	return field_get(a, prm) == field_get(b, prm) && pct_get(a, prm) == pct_get(b, prm);
}

bool sym_policy_equal(const struct sym_policy *a, const struct sym_policy *b)
{
	if (a->ops != b->ops)
		return false;
	for (const struct sym_param *prm = a->ops->params; prm && prm->key; prm++)
		if (!prm->alias && !param_equal(a, b, prm))
			return false;
	return true;
}

/* Appends ",item" to buf for every parameter of p that differs from base
 * (and every required one); returns how many. */
static int diffs(const struct sym_policy *p, const struct sym_policy *base, char *buf, size_t len)
{
	int n = 0;
	size_t l = 0;
	char val[64];
	buf[0] = '\0';
	for (const struct sym_param *prm = p->ops->params; prm && prm->key; prm++) {
		if (prm->alias || (!prm->required && param_equal(p, base, prm)))
			continue;
		if (prm->type == SYM_PARAM_PER_MODEL) {
			struct sym_policy_overrides o;
			over_get(p, prm, &o);
			for (int i = 0; i < o.n; i++, n++)
				put(buf, len, &l, ",%s.%s=%d", prm->key, o.v[i].model, o.v[i].value);
			continue;
		}
		value_text(p, prm, val, sizeof(val));
		if (prm->bare == SYM_PARAM_BARE)
			put(buf, len, &l, ",%s", val);
		else
			put(buf, len, &l, ",%s=%s", prm->key, val);
		n++;
	}
	return n;
}

/* p's defaults with preset pr applied (pr NULL: the defaults). */
static void base_of(const struct sym_policy *p, const struct sym_policy_preset *pr, struct sym_policy *base)
{
	char err[8];
	memset(base, 0, sizeof(*base));
	base->ops = p->ops;
	set_defaults(base);
	if (pr) {
		struct parse ps = { base, 0, err, sizeof(err) };
		apply_items(&ps, pr->spec, false); /* checked when the policy was validated */
	}
}

char *sym_policy_format(const struct sym_policy *p, char *buf, size_t len)
{
	struct sym_policy base;
	char best[512], items[512];
	base_of(p, NULL, &base);
	int nbest = diffs(p, &base, best, sizeof(best));
	const struct sym_policy_preset *chosen = NULL;
	for (const struct sym_policy_preset *pr = p->ops->presets; pr && pr->word; pr++) {
		base_of(p, pr, &base);
		int n = diffs(p, &base, items, sizeof(items));
		if (n < nbest) {
			nbest = n;
			chosen = pr;
			memcpy(best, items, sizeof(best));
		}
	}
	if (chosen)
		snprintf(buf, len, "%s:%s%s", p->ops->name, chosen->word, best);
	else if (best[0])
		snprintf(buf, len, "%s:%s", p->ops->name, best + 1);
	else
		snprintf(buf, len, "%s", p->ops->name);
	return buf;
}

/* ---- reading one parameter ---- */

/* The entry for key ("max.MODEL" finds the PER_MODEL entry "max"), or NULL. */
static const struct sym_param *lookup(const struct sym_policy *p, const char *key, const char **model)
{
	const char *dot = strchr(key, '.');
	size_t kn = dot ? (size_t)(dot - key) : strlen(key);
	*model = dot ? dot + 1 : NULL;
	for (const struct sym_param *prm = p->ops->params; prm && prm->key; prm++)
		if (strlen(prm->key) == kn && !strncmp(prm->key, key, kn) && !dot == (prm->type != SYM_PARAM_PER_MODEL))
			return prm;
	return NULL;
}

/* Finds key in p: its entry in *prm and, for "KEY.MODEL", that model's
 * override in *over (*per_model says which). Returns 0 or -ENOENT. */
static int resolve(const struct sym_policy *p, const char *key, const struct sym_param **prm, bool *per_model,
		   int *over)
{
	const char *model;
	*prm = lookup(p, key, &model);
	*per_model = model != NULL;
	if (!*prm)
		return -ENOENT;
	if (!model)
		return 0;
	struct sym_policy_overrides o;
	over_get(p, *prm, &o);
	for (int i = 0; i < o.n; i++)
		if (!strcmp(o.v[i].model, model)) {
			*over = o.v[i].value;
			return 0;
		}
	return -ENOENT;
}

int sym_policy_param_num(const struct sym_policy *p, const char *key, double *out)
{
	const struct sym_param *prm;
	bool per_model;
	int over, rc = resolve(p, key, &prm, &per_model, &over);
	if (!rc)
		*out = per_model ? over : field_get(p, prm);
	return rc;
}

int sym_policy_param_text(const struct sym_policy *p, const char *key, char *buf, size_t len)
{
	const struct sym_param *prm;
	bool per_model;
	int over, rc = resolve(p, key, &prm, &per_model, &over);
	if (!rc && per_model)
		snprintf(buf, len, "%d", over);
	else if (!rc)
		value_text(p, prm, buf, len);
	return rc;
}

/* ---- help ---- */

/* The placeholder of prm's value: N, MS, S, X, or its words. */
static void put_meta(char *buf, size_t len, size_t *l, const struct sym_param *prm)
{
	if (prm->meta)
		put(buf, len, l, "%s", prm->meta);
	else if (prm->type == SYM_PARAM_ENUM)
		put_words(buf, len, l, prm->words, "|", "|");
	else if (prm->type == SYM_PARAM_BOOL)
		put(buf, len, l, "true|false");
	else if (prm->type == SYM_PARAM_NUM)
		put(buf, len, l, "%s", !prm->unit ? "X" : !strcmp(prm->unit, "s") ? "S" : "MS");
	else
		put(buf, len, l, "N");
	if (prm->percent)
		put(buf, len, l, "|P%%");
	if (prm->type == SYM_PARAM_NUM)
		for (const struct sym_param_word *w = prm->words; w && w->word; w++)
			put(buf, len, l, "|%s", w->word);
}

/* "default X", "default: what def_text says", "required", or "" (per model). */
static char *default_text(const struct sym_param *prm, char *buf, size_t len)
{
	char val[64];
	struct sym_policy d;
	if (prm->required) {
		snprintf(buf, len, "required");
	} else if (prm->type == SYM_PARAM_PER_MODEL) {
		buf[0] = '\0';
	} else if (prm->def_text) {
		snprintf(buf, len, "default: %s", prm->def_text);
	} else {
		memset(&d, 0, sizeof(d));
		field_set(&d, prm, prm->def);
		snprintf(buf, len, "default %s", value_text(&d, prm, val, sizeof(val)));
	}
	return buf;
}

static void param_help(const struct sym_param *prm, const struct sym_param *first, char *buf, size_t len)
{
	size_t l = 0;
	char want[256], dflt[128];
	buf[0] = '\0';
	put(buf, len, &l, "%s%s%s=", prm->bare == SYM_PARAM_BARE ? "[" : "", prm->key,
	    prm->type == SYM_PARAM_PER_MODEL ? ".MODEL" : "");
	if (prm->bare == SYM_PARAM_BARE)
		put(buf, len, &l, "]");
	put_meta(buf, len, &l, prm);
	put(buf, len, &l, ": %s", prm->help ? prm->help : "");
	if (prm->alias) {
		const struct sym_param *of = prm;
		while (of > first && of->alias)
			of--;
		put(buf, len, &l, "%sthe same as %s", prm->help ? "; " : "", of->key);
		return;
	}
	default_text(prm, dflt, sizeof(dflt));
	if (prm->type == SYM_PARAM_ENUM) /* its words are its placeholder already */
		put(buf, len, &l, " (%s)", dflt);
	else
		put(buf, len, &l, " (%s%s%s)", accepts(prm, want, sizeof(want)), dflt[0] ? "; " : "", dflt);
}

bool sym_policy_help_line(const struct sym_policy_ops *ops, size_t i, char *buf, size_t len)
{
	size_t n = 0;
	for (const struct sym_param *prm = ops->params; prm && prm->key; prm++, n++)
		if (n == i) {
			param_help(prm, ops->params, buf, len);
			return true;
		}
	for (const struct sym_policy_preset *pr = ops->presets; pr && pr->word; pr++, n++)
		if (n == i) {
			snprintf(buf, len, "%s: %s (%s)", pr->word, pr->help ? pr->help : "", pr->spec);
			return true;
		}
	return false;
}

/* ---- validating a definition ---- */

static int invalid(char *err, size_t errlen, const char *name, const char *key, const char *why)
{
	snprintf(err, errlen, "policy '%s'%s%s%s: %s", name ? name : "(null)", key ? ", parameter '" : "",
		 key ? key : "", key ? "'" : "", why);
	return -EINVAL;
}

/* Whether the default of prm is a value it accepts (or explained). */
static bool default_ok(const struct sym_param *prm)
{
	double x = prm->def;
	if (prm->required || prm->alias || prm->def_text || prm->type == SYM_PARAM_PER_MODEL)
		return true;
	if (prm->type == SYM_PARAM_ENUM || (prm->type == SYM_PARAM_NUM && word_of(prm, x)))
		return word_of(prm, x) != NULL;
	if (prm->type == SYM_PARAM_BOOL)
		return x == 0 || x == 1;
	if (prm->type == SYM_PARAM_INT && x != floor(x))
		return false;
	return x >= prm->lo && x <= prm->hi && !(prm->lo_open && x == prm->lo);
}

static int validate_param(const struct sym_policy_ops *ops, const struct sym_param *prm, char *err, size_t errlen)
{
	const char *k = prm->key;
	if (!k[0] || strpbrk(k, ",=.:"))
		return invalid(err, errlen, ops->name, k, "a key is a word without ',', '=', '.' or ':'");
	if (prm->type > SYM_PARAM_PER_MODEL)
		return invalid(err, errlen, ops->name, k, "unknown type");
	if (prm->offset + field_size(prm) > ops->params_size ||
	    (prm->percent && prm->pct_offset + sizeof(bool) > ops->params_size))
		return invalid(err, errlen, ops->name, k, "its field lies outside the parameter struct");
	if (prm->type == SYM_PARAM_ENUM && !(prm->words && prm->words[0].word))
		return invalid(err, errlen, ops->name, k, "an enumeration needs words");
	bool ranged = prm->type == SYM_PARAM_NUM || prm->type == SYM_PARAM_INT || prm->type == SYM_PARAM_PER_MODEL;
	if (ranged && !(prm->lo <= prm->hi))
		return invalid(err, errlen, ops->name, k, "empty range");
	if (prm->type != SYM_PARAM_NUM && ranged && (prm->lo < INT32_MIN || prm->hi > INT32_MAX))
		return invalid(err, errlen, ops->name, k, "an integer range beyond int");
	if (prm->alias && (prm == ops->params || prm[-1].offset != prm->offset))
		return invalid(err, errlen, ops->name, k, "an alias follows the parameter it spells otherwise");
	if (!default_ok(prm))
		return invalid(err, errlen, ops->name, k, "its default is not a value it accepts (give def_text)");
	for (const struct sym_param *q = ops->params; q < prm; q++)
		if (!strcmp(q->key, k) && (q->type == SYM_PARAM_PER_MODEL) == (prm->type == SYM_PARAM_PER_MODEL))
			return invalid(err, errlen, ops->name, k, "given twice in the table");
	return 0;
}

int sym_policy_validate(const struct sym_policy_ops *ops, char *err, size_t errlen)
{
	if (!ops || !ops->name || !ops->name[0] || strpbrk(ops->name, ":,= ") || strlen(ops->name) > 32)
		return invalid(err, errlen, ops ? ops->name : NULL, NULL, "a name is a word without ':', ',' or '='");
	if (!ops->summary || (ops->exec != NULL) == (ops->sched != NULL))
		return invalid(err, errlen, ops->name, NULL, "needs a summary and exactly one of exec and sched");
	if (ops->params_size > SYM_POLICY_PARAMS_SIZE)
		return invalid(err, errlen, ops->name, NULL, "its parameters do not fit SYM_POLICY_PARAMS_SIZE");
	int n = 0, nbare = 0, rc;
	for (const struct sym_param *prm = ops->params; prm && prm->key; prm++, n++) {
		if ((rc = validate_param(ops, prm, err, errlen)))
			return rc;
		nbare += prm->bare != SYM_PARAM_KEYED;
	}
	if (n > MAX_PARAMS || nbare > 1)
		return invalid(err, errlen, ops->name, NULL, "at most 64 parameters, one of them bare");
	struct sym_policy p;
	memset(&p, 0, sizeof(p));
	p.ops = ops;
	for (const struct sym_policy_preset *pr = ops->presets; pr && pr->word; pr++) {
		char msg[256] = "";
		struct parse ps = { &p, 0, msg, sizeof(msg) };
		if (apply_items(&ps, pr->spec, false))
			return invalid(err, errlen, ops->name, NULL, msg);
	}
	return 0;
}
