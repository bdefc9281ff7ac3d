/* sim/goodput.h - goodput search: the highest total offered rate whose bad
 * rate is at most max_bad_rate.
 *
 * Bisection on the rate between 0 and an upper bound that no policy can
 * serve (every GPU busy running maximum-size batches), stopping when the
 * bracket is narrower than `tolerance` times its upper end. Every step reuses
 * the experiment's seed (common random numbers: at a fixed seed a higher rate
 * gives the same arrival pattern compressed), so the bad rate moves smoothly
 * with the rate. With a rate schedule (segments or CSV) the search scales the
 * whole schedule and the goodput is the scaled schedule's mean rate.
 *
 * A step stops early once its late and dropped requests exceed 1.5 times the
 * acceptable count at the expected number of measured arrivals (plus 20;
 * with a rate schedule, at its peak rate over the whole window):
 * such a step fails whatever the rest of the run would do, and a step far
 * above capacity then costs a fraction of a full run. The complete run of
 * the best ok step is kept, so the caller need not run it again.
 */
#ifndef SYM_GOODPUT_H
#define SYM_GOODPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/config.h"
#include "sim/engine.h"

struct sym_goodput_step {
	double rate;      /* mean total offered rate of the step */
	double bad_rate;  /* of the part that ran when stopped early */
	bool ok;
	bool stopped_early;
};

struct sym_goodput {
	double goodput_rps;    /* 0 when even the lowest rate fails */
	double scale;          /* the run option `rate` that achieves it */
	double upper_bound_rps;
	size_t nsteps;
	struct sym_goodput_step steps[64];
	bool have_run;            /* run: the complete run at the goodput (the best ok step) */
	struct sym_run_result run;
};

/* The mean total rate of the experiment's schedule at scale 1 (for a
 * constant rate: 1, the scale *is* the rate). */
double sym_schedule_mean_rate(const struct sym_experiment *e);

/* Runs the search. progress: one line per step on stderr. Returns 0 or an
 * error from the engine (message in err). */
int sym_goodput_search(const struct sym_experiment *e, bool progress, struct sym_goodput *out, char *err,
		       size_t errlen);

/* Releases the kept run; call it whatever the search returned. */
void sym_goodput_finish(struct sym_goodput *g);

#endif
