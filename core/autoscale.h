/* core/autoscale.h - autoscaling advice from one interval's signals.
 *
 * Deferred scheduling keeps batches large and packs load onto the lowest GPU
 * ids, so the busy GPUs follow the load. Two signals measured over an
 * interval then say how many GPUs to add or to release:
 *   - the bad rate r = bad / (good + bad) of the requests that arrived in
 *     the interval (late or dropped over offered): with N GPUs serving only
 *     a fraction 1 - r of the load well, about N / (1 - r) GPUs would serve
 *     all of it, so the advice is to allocate N * r / (1 - r) more when r
 *     exceeds a threshold (default 1%);
 *   - the idle fraction f = 1 - busy GPU-time / (N * interval): when the
 *     bad rate is within the threshold, N * f GPUs' worth of time was idle
 *     and can be released.
 * Pure arithmetic; no state.
 */
#ifndef SYM_AUTOSCALE_H
#define SYM_AUTOSCALE_H

#include <stdint.h>

/* The bad rate used in the formula is capped here: at r = 1 nothing was
 * served well and N*r/(1-r) carries no information (the cap advises at most
 * 99 N more). */
#define SYM_AUTOSCALE_MAX_BAD 0.99

struct sym_autoscale {
	double bad_rate;      /* r, 0 when nothing arrived */
	double idle_fraction; /* f in [0, 1] */
	int add;              /* GPUs to allocate: ceil(N r / (1 - r)) when r > threshold, else 0 */
	int release;          /* GPUs to release: floor(N f) when r <= threshold, else 0 */
};

/* Advice for an interval of interval_s seconds with `good` and `bad`
 * requests, busy_gpu_s GPU-seconds of work on gpus GPUs. interval_s > 0,
 * gpus >= 1, threshold in [0, 1). */
void sym_autoscale_advice(uint64_t good, uint64_t bad, double busy_gpu_s, double interval_s, int gpus,
			  double threshold, struct sym_autoscale *out);

/* The same advice when GPUs came or went during the interval: busy_gpu_s of
 * work over serving_gpu_s GPU-seconds in service (f = 1 - busy / serving, at
 * least 0; a GPU serving a tenth of the interval counts a tenth), N = gpus,
 * those serving at its end (>= 1). No service: f = 0. Both drivers measure
 * this way (the simulator's on_scale, schedd's advice intervals). */
void sym_autoscale_advice_served(uint64_t good, uint64_t bad, double busy_gpu_s, double serving_gpu_s, int gpus,
				 double threshold, struct sym_autoscale *out);

#endif
