#include "core/policy.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static const struct sym_policy_ops *const registry[] = {
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

#define NREG (sizeof(registry) / sizeof(registry[0]))

const struct sym_policy_ops *const *sym_policy_list(size_t *n)
{
	*n = NREG;
	return registry;
}

int sym_policy_parse_none(struct sym_policy *p, const char *params, char *err, size_t errlen)
{
	if (*params) {
		snprintf(err, errlen, "policy '%s' takes no parameters (got '%s')", p->ops->name, params);
		return -EINVAL;
	}
	return 0;
}

void sym_policy_format_name(const struct sym_policy *p, char *buf, size_t len)
{
	snprintf(buf, len, "%s", p->ops->name);
}

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

int sym_policy_parse(const char *spec, struct sym_policy *out, char *err, size_t errlen)
{
	const char *colon = strchr(spec, ':');
	size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
	const char *params = colon ? colon + 1 : "";
	for (size_t i = 0; i < NREG; i++) {
		if (strlen(registry[i]->name) != nlen || strncmp(registry[i]->name, spec, nlen))
			continue;
		struct sym_policy p;
		memset(&p, 0, sizeof(p));
		p.ops = registry[i];
		if (colon && !*params) {
			snprintf(err, errlen, "policy '%s': empty parameters after ':'", registry[i]->name);
			return -EINVAL;
		}
		int e = registry[i]->parse(&p, params, err, errlen);
		if (e)
			return e;
		*out = p;
		return 0;
	}
	char names[256] = "";
	for (size_t i = 0; i < NREG; i++) {
		size_t l = strlen(names);
		snprintf(names + l, sizeof(names) - l, "%s%s", i ? ", " : "", registry[i]->name);
	}
	snprintf(err, errlen, "unknown policy '%.*s' (expected one of: %s)", (int)nlen, spec, names);
	return -ENOENT;
}

char *sym_policy_format(const struct sym_policy *p, char *buf, size_t len)
{
	p->ops->format(p, buf, len);
	return buf;
}
