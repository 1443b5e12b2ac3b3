/* history.h — the last minute of a few figures, one sample per second, for the Overview's
 * sparklines: live GPU memory, launches/s, H2D and D2H bytes/s, API calls/s. Fed from the
 * statistics snapshots the TUI takes anyway; it never reads anything else. */
#ifndef GPUTOP_HISTORY_H
#define GPUTOP_HISTORY_H

#include <stdbool.h>
#include <stdint.h>

#include "stats.h"

#define HISTORY_LEN 60		/* seconds kept */

enum history_series {
	HIST_MEMORY,		/* live device + managed bytes (a level, not a rate) */
	HIST_LAUNCHES,		/* launches per second */
	HIST_H2D,		/* bytes per second, sync and async copies */
	HIST_D2H,
	HIST_CALLS,		/* API calls per second */
	HIST_COUNT,
};

struct history {
	double v[HIST_COUNT][HISTORY_LEN];	/* ring buffers, head is the next slot */
	int head, count;
	bool primed;
	uint64_t last_ns;			/* time of the counters below */
	uint64_t last[HIST_COUNT];		/* counters at last_ns (rates are deltas of these) */
};

void history_init(struct history *h);
/* Adds one sample per whole second since the last one (none before a second has passed);
 * a refresh interval of several seconds fills that many slots with its average rate. */
void history_sample(struct history *h, const struct stats_snapshot *s);
/* Copies the samples of one series, oldest first, into out (room for HISTORY_LEN);
 * returns how many there are. */
int history_get(const struct history *h, enum history_series k, double *out);

#endif
