#include "core/autoscale.h"

#include <math.h>

void sym_autoscale_advice(uint64_t good, uint64_t bad, double busy_gpu_s, double interval_s, int gpus,
			  double threshold, struct sym_autoscale *out)
{
	uint64_t n = good + bad;
	double r = n ? (double)bad / (double)n : 0;
	double f = 1 - busy_gpu_s / ((double)gpus * interval_s);
	if (f < 0)
		f = 0;
	if (f > 1)
		f = 1;
	out->bad_rate = r;
	out->idle_fraction = f;
	out->add = 0;
	out->release = 0;
	if (r > threshold) {
		double rc = r < SYM_AUTOSCALE_MAX_BAD ? r : SYM_AUTOSCALE_MAX_BAD;
		/* a hair below the exact value, so that float noise does not add a GPU */
		out->add = (int)ceil((double)gpus * rc / (1 - rc) - 1e-9);
	} else {
		out->release = (int)floor((double)gpus * f + 1e-9);
	}
}

void sym_autoscale_advice_served(uint64_t good, uint64_t bad, double busy_gpu_s, double serving_gpu_s, int gpus,
				 double threshold, struct sym_autoscale *out)
{
	double busy = serving_gpu_s > 0 ? busy_gpu_s / serving_gpu_s : 1;
	sym_autoscale_advice(good, bad, (busy < 1 ? busy : 1) * gpus, 1, gpus, threshold, out);
}
