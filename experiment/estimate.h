/* experiment/estimate.h - what a run will need, before it starts.
 *
 * A simulation streams its requests: only those alive at once (queued, or
 * in a batch) are in memory, so the request count costs time, not memory.
 * What does take memory (measured with /usr/bin/time -v; docs/simulator.md,
 * "How big a run can be"):
 *   - per model: two latency histograms (SYM_HIST_BUCKETS 32-bit counts
 *     each, 72 KB), its profile per device kind, its batch counts, its
 *     arrival generator (a Mersenne Twister, 5 KB) and its copy of a rate
 *     schedule (16 bytes a segment or a rate_csv row);
 *   - per GPU: its slots of planned batches (a pointer per request of the
 *     largest batch);
 *   - the timeline: one row per interval_s of the run (40 bytes), and with
 *     the per-model timeline 24 bytes per interval and model;
 *   - the requests alive at once: about the peak rate times the SLO, plus a
 *     burst of about 1/K requests per model under gamma:K arrivals, at most
 *     the run's requests (64 bytes each).
 * goodput, plan, loadcurve and sweep run `jobs` simulations at once.
 *
 * The latency histograms count in 32 bits: a model may get at most
 * SYM_MAX_MODEL_REQUESTS requests in one run.
 */
#ifndef SYM_ESTIMATE_H
#define SYM_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>

#include "experiment/config.h"

#define SYM_MAX_MODEL_REQUESTS 4e9

struct sym_estimate {
	double requests;           /* expected arrivals of the run, all models */
	double model_requests;     /* of the busiest model */
	size_t busiest;            /* that model */
	double live;               /* requests in memory at once, at most */
	double timeline_rows;      /* intervals */
	double bytes;              /* memory of one run */
	double part[5];            /* bytes of: models, GPUs, timeline, per-model timeline, requests */
};

/* What one run of resolved experiment e needs at rate option `rate` (the
 * total rate, or the scale of a rate schedule), with gpus GPUs (0: e's) and,
 * when model_timeline, the per-model timeline. */
void sym_estimate_run(const struct sym_experiment *e, double rate, int gpus, bool model_timeline,
		      struct sym_estimate *out);

/* Memory this process may use (bytes): MemAvailable of /proc/meminfo, else
 * the free physical pages; 0 when unknown. */
double sym_memory_available(void);

/* Refuses a command that cannot be honoured: a model expecting more than
 * SYM_MAX_MODEL_REQUESTS requests, or `jobs` runs at once needing more than
 * 80% of the available memory. The message says how many requests or bytes,
 * what takes them and which keys to change. Returns 0 or -EINVAL. */
int sym_estimate_check(const struct sym_experiment *e, double rate, int gpus, bool model_timeline, int jobs,
		       char *err, size_t errlen);

#endif
