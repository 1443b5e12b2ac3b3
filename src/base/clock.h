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

#endif
