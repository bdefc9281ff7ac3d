#include "runtime/prom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double sym_prom_latency_bounds[] = { 0.0005, 0.001, 0.002, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03,
					   0.04,   0.05,  0.075, 0.1,   0.15, 0.2,   0.3,  0.5,   1,    2.5, 5, 10 };
const int sym_prom_latency_nbounds = sizeof(sym_prom_latency_bounds) / sizeof(sym_prom_latency_bounds[0]);

/* Makes room for `need` bytes in all (the text and its NUL). */
static bool grow(struct sym_buf *b, size_t need)
{
	if (need <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < need)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

static void vput(struct sym_buf *b, const char *fmt, va_list ap)
{
	if (b->oom)
		return;
	for (;;) {
		va_list aq;
		va_copy(aq, ap);
		int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, aq);
		va_end(aq);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->p && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		if (!grow(b, b->len + (size_t)n + 1))
			return;
	}
}

void sym_buf_printf(struct sym_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vput(b, fmt, ap);
	va_end(ap);
}

void sym_buf_append(struct sym_buf *b, const void *data, size_t n)
{
	if (b->oom || !grow(b, b->len + n + 1))
		return;
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = 0;
}

void sym_buf_free(struct sym_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void sym_prom_family(struct sym_buf *b, const char *name, const char *type, const char *help)
{
	sym_buf_printf(b, "# HELP %s ", name);
	for (const char *s = help; *s; s++) /* HELP escapes backslash and newline */
		sym_buf_printf(b, "%s", *s == '\\' ? "\\\\" : *s == '\n' ? "\\n" : (char[2]){ *s, 0 });
	sym_buf_printf(b, "\n# TYPE %s %s\n", name, type);
}

static void labels_put(struct sym_buf *b, const char *const *labels, const char *extra_k, const char *extra_v)
{
	bool any = (labels && labels[0]) || extra_k;
	if (!any)
		return;
	sym_buf_printf(b, "{");
	int n = 0;
	for (int i = 0; labels && labels[i] && labels[i + 1]; i += 2, n++) {
		sym_buf_printf(b, "%s%s=\"", n ? "," : "", labels[i]);
		for (const char *s = labels[i + 1]; *s; s++)
			sym_buf_printf(b, "%s", *s == '\\' ? "\\\\" : *s == '"' ? "\\\"" : *s == '\n' ? "\\n"
											: (char[2]){ *s, 0 });
		sym_buf_printf(b, "\"");
	}
	if (extra_k)
		sym_buf_printf(b, "%s%s=\"%s\"", n ? "," : "", extra_k, extra_v);
	sym_buf_printf(b, "}");
}

static void value_put(struct sym_buf *b, double v)
{
	if (isnan(v))
		sym_buf_printf(b, " NaN\n");
	else if (isinf(v))
		sym_buf_printf(b, " %s\n", v > 0 ? "+Inf" : "-Inf");
	else
		sym_buf_printf(b, " %.17g\n", v);
}

void sym_prom_sample(struct sym_buf *b, const char *name, const char *const *labels, double value)
{
	sym_buf_printf(b, "%s", name);
	labels_put(b, labels, NULL, NULL);
	value_put(b, value);
}

void sym_prom_hist(struct sym_buf *b, const char *name, const char *const *labels, const struct sym_hist *h,
		   const double *bounds, int nbounds)
{
	/* buckets of h are [low, high) ns; one counts toward bound B when it
	 * starts at or below B, so a value equal to B counts (le is inclusive),
	 * and one up to 0.4% above it may too (the histogram's precision) */
	uint64_t cum = 0;
	int bk = 0;
	char le[32];
	for (int i = 0; i < nbounds; i++) {
		int64_t lim = (int64_t)llround(bounds[i] * 1e9);
		while (h->counts && bk < SYM_HIST_BUCKETS && sym_hist_bucket_low(bk) <= lim)
			cum += h->counts[bk++];
		snprintf(le, sizeof(le), "%g", bounds[i]);
		sym_buf_printf(b, "%s_bucket", name);
		labels_put(b, labels, "le", le);
		value_put(b, (double)cum);
	}
	sym_buf_printf(b, "%s_bucket", name);
	labels_put(b, labels, "le", "+Inf");
	value_put(b, (double)h->n);
	sym_buf_printf(b, "%s_sum", name);
	labels_put(b, labels, NULL, NULL);
	value_put(b, h->sum / 1e9);
	sym_buf_printf(b, "%s_count", name);
	labels_put(b, labels, NULL, NULL);
	value_put(b, (double)h->n);
}
