/* runtime/prom.h - metrics in the Prometheus text exposition format (0.0.4).
 *
 * Each process writes its metrics when scraped (GET /metrics), straight from
 * the counters it keeps anyway: no registry, no lock. A family is declared
 * once (HELP, TYPE), then its samples follow; label values are escaped.
 * Histograms come from core/hist.h histograms of nanoseconds, written in
 * seconds with fixed bucket bounds. Names follow Prometheus conventions:
 * symphony_ prefix, _total for counters, _seconds for durations.
 */
#ifndef SYM_PROM_H
#define SYM_PROM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/hist.h"

/* A growing text buffer; once an allocation fails, `oom` is set and further
 * writes are ignored. */
struct sym_buf {
	char *p;
	size_t len, cap;
	bool oom;
};

void sym_buf_printf(struct sym_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sym_buf_append(struct sym_buf *b, const void *data, size_t n); /* raw bytes */
void sym_buf_free(struct sym_buf *b);

/* "# HELP name help\n# TYPE name type\n" (type: counter, gauge, histogram). */
void sym_prom_family(struct sym_buf *b, const char *name, const char *type, const char *help);

/* name{labels} value. labels: NULL or "k1", "v1", "k2", "v2", ..., NULL
 * passed as an array (values are escaped). */
void sym_prom_sample(struct sym_buf *b, const char *name, const char *const *labels, double value);

/* The _bucket, _sum and _count samples of histogram h (ns), in seconds, at
 * the bounds given (seconds, increasing; +Inf is added). */
void sym_prom_hist(struct sym_buf *b, const char *name, const char *const *labels, const struct sym_hist *h,
		   const double *bounds, int nbounds);

/* Latency bounds in seconds used by every process: 0.5 ms .. 10 s. */
extern const double sym_prom_latency_bounds[];
extern const int sym_prom_latency_nbounds;

#endif
