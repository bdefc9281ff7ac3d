/* core/capacity.h - analytic capacity estimates for one model (pure).
 *
 * Staggered execution. N GPUs serving one model in turn, each starting a
 * batch of b every l(b)/N, leave a request at most l(b)/N waiting for the
 * next start plus l(b) running: it meets its SLO when
 *
 *     (1 + 1/N) * l(b) <= SLO,
 *
 * and the N GPUs sustain N * b / l(b) requests per second. The
 * uncoordinated case (each GPU on its own, a request may wait a whole batch)
 * is N = 1: 2 * l(b) <= SLO. With a linear profile the batch is
 * floor((SLO / (1 + 1/N) - beta) / alpha).
 *
 * The SLO passed here is the budget for l (the SLO minus any network
 * delays); lat is the profile's table, lat[b] for b = 1..max_batch.
 */
#ifndef SYM_CAPACITY_H
#define SYM_CAPACITY_H

#include "core/time.h"

/* The largest b <= max_batch with (1 + 1/n) * lat[b] <= slo, or 0 when
 * none (n >= 1). */
int sym_staggered_batch(const sym_time *lat, int max_batch, sym_time slo, double n);

/* The smallest whole number of GPUs N >= 1 whose staggered batch b (as
 * above) gives N * b / l(b) >= rate (requests/s, >= 0), with that b in
 * *batch; or -1 when even an unlimited number of GPUs cannot meet the SLO
 * (l(1) > slo) or N would exceed max_gpus. */
int sym_staggered_min_gpus(const sym_time *lat, int max_batch, sym_time slo, double rate, int max_gpus,
			   int *batch);

/* ---- the multi-model bound: the staggered bound generalised ----
 *
 * Models share G GPUs; model i gets the share s_i of the total rate R and
 * may run on a real number n_i of GPUs (time-sharing them with others). At
 * rate r its batches of b fill in (b - 1)/r (the first request of a batch
 * waits for the others to arrive, evenly spaced at best), and the batch must
 * then finish within the SLO:
 *
 *     (b - 1) / r + le(b) <= SLO
 *
 * (le: l plus the network delays). Each batch holds n's GPU time for l(b),
 * so it needs n_i(r) = r * l(b) / b GPUs, least at the largest b that meets
 * the SLO (l(b)/b falls with b). With n GPUs fully busy this is exactly the
 * staggered condition (1 + 1/n) l(b) <= SLO up to that one request (b/r =
 * l(b)/n); it also holds below one GPU per model, where a model's batches
 * take turns with others'. No scheduler serves model i at rate r on fewer
 * GPUs without missing its SLO (arrivals evenly spaced and batches
 * perfectly packed are the best case), so the largest R with
 *
 *     sum_i n_i(s_i R) <= G
 *
 * bounds every scheduler's goodput; R follows by bisection, sum_i n_i(s_i R)
 * growing with R. */

#define SYM_BOUND_KINDS 8

/* A model, on each GPU kind it may run on (several kinds: every GPU counts
 * as the kind on which the model needs the fewest, which keeps the bound an
 * upper one). */
struct sym_bound_model {
	int nkinds;                         /* 1..SYM_BOUND_KINDS */
	const sym_time *lat[SYM_BOUND_KINDS]; /* l(b), b = 1..max_batch: GPU time */
	const sym_time *le[SYM_BOUND_KINDS];  /* le(b): the latency (l plus network delays); NULL: lat */
	int max_batch[SYM_BOUND_KINDS];
	sym_time slo;
	double share;          /* of the total rate (the shares sum to 1) */
};

/* GPUs model m needs at rate r (requests/s): r l(b)/b at its largest b that
 * meets the SLO (above), on the kind where that is least; 0 at r = 0;
 * HUGE_VAL when not even a batch of one meets it. */
double sym_bound_gpus(const struct sym_bound_model *m, double rate);

/* The largest total rate n models sharing gpus GPUs can be served at (above),
 * in requests/s; 0 when some model with a share cannot meet its SLO at all.
 * To the precision 1e-6 of the rate. */
double sym_multi_bound(const struct sym_bound_model *models, int n, double gpus);

#endif
