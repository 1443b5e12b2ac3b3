/* clock.h — monotonic time in nanoseconds, the one clock every timestamp in gputop uses. */
#ifndef GPUTOP_CLOCK_H
#define GPUTOP_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC's time seconds from now, as pthread_cond_timedwait takes it (for a condition
 * variable set to that clock with pthread_condattr_setclock). */
static inline struct timespec deadline_in(double seconds)
{
	uint64_t t = now_ns() + (uint64_t)(seconds * 1e9);
	return (struct timespec){ .tv_sec = (time_t)(t / 1000000000u), .tv_nsec = (long)(t % 1000000000u) };
}

#endif
