/* tsc_map.h — the time stamp counter the stubs stamp (arch_timestamp) mapped to the one monotonic
 * clock (clock.h). A map that never changes a time it handed out: knots (a counter value and
 * the clock read together) are added as the session goes, each segment between two knots is
 * fixed once the later knot exists, and a value converted beyond the last knot is pinned before
 * the next one is added. So two stamps of one thread keep their order and their distance
 * whenever they are converted (a call's end never passes the next call's start), while the rate
 * still follows the clock over the session. gputop-wide: the counter is the machine's. Tracer
 * thread only. */
#ifndef GPUTOP_TSC_MAP_H
#define GPUTOP_TSC_MAP_H

#include <stdbool.h>
#include <stdint.h>

/* Measures the rate (two points 10 ms apart) the first time; later calls do nothing. 0, or
 * -EINVAL where the counter did not advance. */
int tsc_map_start(void);
bool tsc_map_started(void);
/* A counter value as monotonic ns; the same value always gives the same ns; never decreasing in
 * tsc. 0 before tsc_map_start. */
uint64_t tsc_map_to_mono(uint64_t tsc);
/* A count of ticks as ns and back, at the rate measured over the whole session so far. */
uint64_t tsc_map_ticks_to_ns(uint64_t ticks);
uint64_t tsc_map_ns_to_ticks(uint64_t ns);

/* For tests: the map as if (tsc, ns) had been read now (the clock read replaced), and the map
 * started again empty. */
void tsc_map_test_point(uint64_t tsc, uint64_t ns);
void tsc_map_test_reset(void);

#endif
