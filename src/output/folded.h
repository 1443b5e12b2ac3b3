/* folded.h — --folded FILE: call stacks in the folded format that flamegraph.pl, inferno and
 * speedscope read, one line per stack, "outermost;...;innermost VALUE", for one metric. Written
 * at the end of the session from the figures; it formats, nothing more. */
#ifndef GPUTOP_FOLDED_H
#define GPUTOP_FOLDED_H

#include <stdio.h>

#include "stats.h"

enum folded_metric {
	FOLDED_LIVE_BYTES,	/* bytes still allocated, by allocation site (the default) */
	FOLDED_ALLOCATED_BYTES,	/* bytes allocated in the session, by site */
	FOLDED_LAUNCHES,	/* launches per kernel, split over its sampled launch sites */
	FOLDED_API_TIME,	/* ns inside the calls whose stacks were taken */
};

int folded_metric_parse(const char *name);	/* enum folded_metric, or -1 */

/* Writes the metric's folded stacks to f. 0, or -errno. */
int folded_write(FILE *f, int metric, const struct stats_snapshot *s);

#endif
