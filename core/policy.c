#include "core/policy.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"

static const struct sym_policy_ops *const registry[] = {
	&sym_policy_symphony,
	&sym_policy_eager,
	&sym_policy_timeout,
};

const struct sym_policy_ops *const *sym_policy_list(size_t *n)
{
	*n = sizeof(registry) / sizeof(registry[0]);
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

int sym_policy_parse(const char *spec, struct sym_policy *out, char *err, size_t errlen)
{
	const char *colon = strchr(spec, ':');
	size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
	const char *params = colon ? colon + 1 : "";
	for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++) {
		if (strlen(registry[i]->name) != nlen || strncmp(registry[i]->name, spec, nlen))
			continue;
		struct sym_policy p = { .ops = registry[i] };
		int e = registry[i]->parse(&p, params, err, errlen);
		if (e)
			return e;
		*out = p;
		return 0;
	}
	char names[256] = "";
	for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++) {
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
