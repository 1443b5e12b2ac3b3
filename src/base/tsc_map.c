/* tsc_map.c — the time stamp counter mapped to the monotonic clock (tsc_map.h). Why a map that
 * never moves: the stubs stamp a call's entry and return with the counter and gputop converts
 * the stamps at each drain; with one line refitted as the session went (the old way), a call
 * converted before a refit and the next one after it disagreed by the refit's change times the
 * distance from the first point: tens of µs, so that a thread's calls overlapped on the
 * timeline (issue 36). Here a segment between two knots never changes, and what was handed out
 * past the last knot is pinned on the line it was read from before a knot is added. */
#include "tsc_map.h"

#include <errno.h>
#include <time.h>

#include "arch.h"
#include "clock.h"

enum { KNOTS = 4096 };			/* at one per 10 ms or more: 20 s of history at least */
#define KNOT_GAP_NS 10000000ull		/* a knot at most this often: the segments' own rates
					 * stay within a few ppm of the clock's */

/* A knot: from tsc on (up to the next knot), ns + (t - tsc) * num / den. */
struct knot {
	uint64_t tsc, ns, num, den;
};

static struct {
	struct knot k[KNOTS];	/* a ring: k[head] the oldest, n of them */
	unsigned head, n;
	uint64_t base_tsc, base_ns;	/* the first point read: the session's rate from it */
	uint64_t last_tsc, last_ns;	/* the last point read */
	uint64_t handed;	/* the largest counter value converted past the last knot; 0: none */
	bool manual;		/* tests: knots only from tsc_map_test_point */
} map;

static struct knot *knot_at(unsigned i)
{
	return &map.k[(map.head + i) % KNOTS];
}

static struct knot *last_knot(void)
{
	return knot_at(map.n - 1);
}

static uint64_t scale(uint64_t v, uint64_t num, uint64_t den)
{
	return den ? (uint64_t)((unsigned __int128)v * num / den) : 0;
}

/* The map's value at tsc on knot k's segment (before the oldest knot: its line backwards). */
static uint64_t on_segment(const struct knot *k, uint64_t tsc)
{
	if (tsc >= k->tsc)
		return k->ns + scale(tsc - k->tsc, k->num, k->den);
	uint64_t back = scale(k->tsc - tsc, k->num, k->den);
	return back < k->ns ? k->ns - back : 0;
}

static void push(struct knot k)
{
	if (map.n == KNOTS) {
		map.head = (map.head + 1) % KNOTS;
		map.n--;
	}
	map.n++;
	*last_knot() = k;
}

/* A counter value and the clock read together: the closest of a few tries. */
static void clock_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 5 && best > 2000; i++) {
		uint64_t a = arch_timestamp();
		uint64_t n = now_ns();
		uint64_t b = arch_timestamp();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = n;
		}
	}
}

/* The point (tsc, ns) read now becomes a knot: what was handed out past the last knot is pinned
 * first, the segment up to the new knot gets the rate that joins them (never decreasing), and
 * the session's rate takes the new point in. */
static void add_point(uint64_t tsc, uint64_t ns)
{
	struct knot *last = last_knot();
	if (tsc <= last->tsc || map.handed >= tsc)
		return;
	if (map.handed > last->tsc) {
		push((struct knot){ map.handed, on_segment(last, map.handed), last->num, last->den });
		last = last_knot();
	}
	uint64_t at = ns > last->ns ? ns : last->ns;
	last->num = at - last->ns;
	last->den = tsc - last->tsc;
	map.last_tsc = tsc;
	map.last_ns = ns;
	map.handed = 0;
	push((struct knot){ tsc, at, map.last_ns - map.base_ns, map.last_tsc - map.base_tsc });
}

bool tsc_map_started(void)
{
	return map.n > 0;
}

int tsc_map_start(void)
{
	if (tsc_map_started())
		return 0;
	uint64_t t0, n0, t1, n1;
	clock_pair(&t0, &n0);
	struct timespec ts = { 0, 10000000 };
	nanosleep(&ts, NULL);
	clock_pair(&t1, &n1);
	if (t1 <= t0 || n1 <= n0)
		return -EINVAL;
	map.base_tsc = t0;
	map.base_ns = n0;
	push((struct knot){ t0, n0, n1 - n0, t1 - t0 });
	add_point(t1, n1);
	return 0;
}

uint64_t tsc_map_to_mono(uint64_t tsc)
{
	if (!tsc_map_started())
		return 0;
	if (tsc > last_knot()->tsc && !map.manual && tsc - map.last_tsc >= tsc_map_ns_to_ticks(KNOT_GAP_NS)) {
		uint64_t t, n;
		clock_pair(&t, &n);
		add_point(t, n);
	}
	if (tsc > last_knot()->tsc) {
		if (tsc > map.handed)
			map.handed = tsc;
		return on_segment(last_knot(), tsc);
	}
	unsigned lo = 0, hi = map.n;	/* the last knot at or before tsc: in [lo, hi) */
	while (hi - lo > 1) {
		unsigned mid = lo + (hi - lo) / 2;
		if (knot_at(mid)->tsc <= tsc)
			lo = mid;
		else
			hi = mid;
	}
	return on_segment(knot_at(lo), tsc);
}

uint64_t tsc_map_ticks_to_ns(uint64_t ticks)
{
	return scale(ticks, map.last_ns - map.base_ns, map.last_tsc - map.base_tsc);
}

uint64_t tsc_map_ns_to_ticks(uint64_t ns)
{
	return scale(ns, map.last_tsc - map.base_tsc, map.last_ns - map.base_ns);
}

void tsc_map_test_point(uint64_t tsc, uint64_t ns)
{
	map.manual = true;
	if (!tsc_map_started()) {
		map.base_tsc = map.last_tsc = tsc;
		map.base_ns = map.last_ns = ns;
		push((struct knot){ tsc, ns, 0, 1 });
		return;
	}
	if (map.n == 1) {	/* the second point gives the first rate */
		map.last_tsc = tsc, map.last_ns = ns;
		knot_at(0)->num = ns - map.base_ns;
		knot_at(0)->den = tsc - map.base_tsc;
	}
	add_point(tsc, ns);
}

void tsc_map_test_reset(void)
{
	map.n = map.head = 0;
	map.handed = 0;
	map.manual = false;
}
