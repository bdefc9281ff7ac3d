#include "control/epoch.h"

#include <math.h>

bool sym_epoch_assign_pays(double gain, double total_rate, double secs, double k)
{
	if (!(k > 0) || !(secs > 0))
		return true;
	return gain >= k * sqrt(total_rate / secs);
}

bool sym_epoch_split_pays(double cur, double cur_rate, double next, double secs, double k)
{
	if (!(next < cur))
		return false;
	if (!(k > 0) || !(secs > 0) || isinf(cur))
		return true;
	return cur_rate * secs > 0 && cur - next > k * cur / sqrt(cur_rate * secs);
}
