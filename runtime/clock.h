/* runtime/clock.h - the runtime's clock: CLOCK_MONOTONIC in nanoseconds
 * (runtime/clock.c). */
#ifndef SYM_CLOCK_H
#define SYM_CLOCK_H

#include "core/time.h"

/* CLOCK_MONOTONIC in nanoseconds: the runtime's clock. */
sym_time sym_monotonic_ns(void);

/* Sleeps until `t` (monotonic), then spins the last `spin` ns for precision.
 * Returns the moment it returned (>= t). */
sym_time sym_wait_until(sym_time t, sym_time spin);

#endif
