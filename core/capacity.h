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

#endif
