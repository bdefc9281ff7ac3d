#include "core/urgency.h"

#include <math.h>

#include <gsl/gsl_fit.h>

double sym_urgency(const struct sym_urg_shape *sh, double slack, double load)
{
	double u;
	switch (sh->kind) {
	case SYM_URG_EXP:
		return -slack + log2(load);
	case SYM_URG_LINEAR:
		u = -slack;
		break;
	default:
		u = sh->power == 3 ? -(slack * slack * slack) : -copysign(pow(fabs(slack), sh->power), slack);
		break;
	}
	return u >= 0 || !sh->monotone ? u * load : u / load;
}

double sym_urg_app_fold(enum sym_urg_app_rule rule, const struct sym_urg_shape *sh, double acc, double u)
{
	if (rule == SYM_URG_APP_SIGNED)
		return u > acc ? u : acc;
	double a = sh->kind == SYM_URG_EXP ? u : fabs(u);
	return acc == -INFINITY || a < acc ? a : acc;
}

void sym_urg_hist_add(struct sym_urg_hist *h, double x, double y_ms, int min_samples)
{
	h->x[h->pos] = x;
	h->y[h->pos] = y_ms;
	h->pos = (h->pos + 1) % SYM_URG_HIST_CAP;
	if (h->n < SYM_URG_HIST_CAP)
		h->n++;
	if (h->n < min_samples)
		return;
	bool distinct = false;
	for (int i = 1; i < h->n && !distinct; i++)
		distinct = h->x[i] != h->x[0];
	if (!distinct)
		return; /* keep the previous fit, if any */
	double c0, c1, cov00, cov01, cov11, sumsq;
	gsl_fit_linear(h->x, 1, h->y, 1, (size_t)h->n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
	if (isfinite(c0) && isfinite(c1)) {
		h->c0 = c0;
		h->c1 = c1;
		h->fitted = true;
	}
}

double sym_urg_hist_estimate(const struct sym_urg_hist *h, double x, double fallback)
{
	if (!h->fitted)
		return fallback;
	double y = h->c0 + h->c1 * x;
	return y > 0 ? y : 0;
}
