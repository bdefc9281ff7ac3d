/* runtime/clock.c - the runtime's clock (runtime/clock.h): CLOCK_MONOTONIC
 * in nanoseconds, and waiting until a moment of it. A file of its own so
 * that the TorchScript module (runtime/torch/) links its own copy. */
#include <errno.h>
#include <time.h>

#include "runtime/clock.h"

sym_time sym_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (sym_time)ts.tv_sec * SYM_S + ts.tv_nsec;
}

sym_time sym_wait_until(sym_time t, sym_time spin)
{
	sym_time now = sym_monotonic_ns();
	if (t - now > spin) {
		sym_time wake = t - spin;
		struct timespec ts = { (time_t)(wake / SYM_S), (long)(wake % SYM_S) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	while ((now = sym_monotonic_ns()) < t)
		;
	return now;
}
