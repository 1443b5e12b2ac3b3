/* test_tsc_map.c — base/tsc_map.c: a counter value converted once gives the same time whenever
 * it is converted again, however the knots added meanwhile moved the rate; the map never goes
 * back; a thread's calls (entry and return stamps, each call after the last) stay apart when
 * each is converted at a different drain. The clock's reads are the test's (tsc_map_test_point):
 * a counter at 3 GHz whose rate against the clock wanders by 0.1% between knots. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "tsc_map.h"

uint64_t arch_timestamp(void)	/* the map's own reads are off under tsc_map_test_point */
{
	abort();
}

enum { CALLS = 20000, VALUES = 256 };

int main(void)
{
	uint64_t tsc = 1000000000000ull, ns = 5000000000ull;
	uint64_t seen_tsc[VALUES], seen_ns[VALUES];
	int n_seen = 0;
	bool same = true, monotone = true, apart = true;
	uint64_t prev_end = 0, prev_mono = 0;
	unsigned seed = 1;

	tsc_map_test_reset();
	tsc_map_test_point(tsc, ns);
	tsc_map_test_point(tsc + 30000000, ns + 10000000);	/* 10 ms: 3 ticks a ns */
	uint64_t t = tsc + 30000000;
	/* Calls of one thread: each 100 to 10,000 ticks long, 50 to 500 ticks after the last; a
	 * drain (a knot, the rate moved) every 64 calls; the entry and return of a call converted
	 * at the drain after it, as hit_records.c does. */
	for (int i = 0; i < CALLS; i++) {
		seed = seed * 1103515245u + 12345u;
		uint64_t entry = t + 50 + seed % 450, ret = entry + 100 + (seed >> 8) % 9900;
		t = ret;
		if (i % 64 == 63) {	/* the clock read with the counter: the rate wanders */
			double rate = 3.0 * (1.0 + ((double)(seed % 2001) - 1000.0) * 1e-6);
			ns += (uint64_t)((double)(t + 1000 - tsc) / rate);
			tsc = t + 1000;
			tsc_map_test_point(tsc, ns);
		}
		uint64_t start = tsc_map_to_mono(entry), end = tsc_map_to_mono(ret);
		if (start < prev_end)
			apart = false;
		if (end < start || start < prev_mono)
			monotone = false;
		prev_end = end;
		prev_mono = end;
		if (i % (CALLS / VALUES) == 0 && n_seen < VALUES) {
			seen_tsc[n_seen] = entry;
			seen_ns[n_seen++] = start;
		}
	}
	for (int k = 0; k < n_seen; k++)
		same &= tsc_map_to_mono(seen_tsc[k]) == seen_ns[k];
	check(n_seen == VALUES, "%d values kept to convert again", n_seen);
	check(same, "a counter value converted again (after every knot since) gives the same time");
	check(monotone, "the map never goes back");
	check(apart, "each call of the thread starts after the previous one ended");

	/* Durations: at the rate of the whole session (3 ticks a ns, wandering by 0.1%). */
	uint64_t ticks = tsc_map_ns_to_ticks(1000000000);
	check(ticks > 2990000000ull && ticks < 3010000000ull, "the session's rate: %llu ticks a second",
	      (unsigned long long)ticks);

	/* Past the last knot: extrapolated, then pinned when the next knot comes, even if the clock
	 * read then lies below the line (a late read): never decreasing. */
	tsc_map_test_reset();
	tsc_map_test_point(1000, 1000);
	tsc_map_test_point(31000, 11000);
	uint64_t beyond = tsc_map_to_mono(61000);
	check(beyond == 21000, "past the last knot, on the rate so far (%llu)", (unsigned long long)beyond);
	tsc_map_test_point(91000, 20000);	/* the clock says 20000 where the line said 31000 */
	check(tsc_map_to_mono(61000) == beyond, "the value handed out past the knot is pinned (%llu)",
	      (unsigned long long)tsc_map_to_mono(61000));
	check(tsc_map_to_mono(91000) >= beyond && tsc_map_to_mono(76000) >= beyond,
	      "and the map does not go back after it (%llu at the new knot)", (unsigned long long)tsc_map_to_mono(91000));
	check(tsc_map_to_mono(500) < 1000, "before the first knot: its line backwards");
	return failures != 0;
}
