/* core/time.h - the one time type of the project.
 *
 * Time is an int64_t count of nanoseconds everywhere: virtual time in the
 * simulator, CLOCK_MONOTONIC in the runtime. Never use double for a point in
 * time; doubles appear only for rates (requests per second) and for profile
 * coefficients before they are converted.
 */
#ifndef SYM_TIME_H
#define SYM_TIME_H

#include <stdint.h>

typedef int64_t sym_time;

#define SYM_NS ((sym_time)1)
#define SYM_US ((sym_time)1000)
#define SYM_MS ((sym_time)1000000)
#define SYM_S ((sym_time)1000000000)

/* A time that never comes: larger than every real time, safe to compare. */
#define SYM_TIME_NEVER INT64_MAX

/* Milliseconds (double) to nanoseconds, rounded to the nearest ns. */
static inline sym_time sym_ms(double ms)
{
	double ns = ms * 1e6;
	return (sym_time)(ns < 0 ? ns - 0.5 : ns + 0.5);
}

/* Seconds (double) to nanoseconds, rounded to the nearest ns. */
static inline sym_time sym_s(double s)
{
	double ns = s * 1e9;
	return (sym_time)(ns < 0 ? ns - 0.5 : ns + 0.5);
}

static inline double sym_to_ms(sym_time t) { return (double)t / 1e6; }
static inline double sym_to_s(sym_time t) { return (double)t / 1e9; }

#endif
