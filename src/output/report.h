/* report.h — what a session writes once its tracing has ended: --trace and --timeline closed,
 * --folded and --json written from one snapshot of the figures, --json-interval's last summary;
 * and what every summary says of the session from a snapshot (report_from_snapshot). */
#ifndef GPUTOP_REPORT_H
#define GPUTOP_REPORT_H

#include <stdbool.h>

#include "json.h"
#include "outfile.h"

/* The files of the command line a session writes at its end (outfile.h); those not asked for
 * have fd -1. */
struct report_files {
	struct outfile *json, *trace, *folded, *timeline;
	int folded_metric;	/* --folded's (folded.h) */
};

/* What a summary says of the session that the snapshot s tells: its duration so far, and what a
 * call cost the program in stops, once for every summary (stops_per_launch 1 where a launch
 * function of any process stopped at each call, stops_per_return 1 where a return trapped).
 * --json-interval's writer calls it for each summary (its thread: it reads only s). */
void report_from_snapshot(struct report_info *out, const struct stats_snapshot *s);

/* The end, the figures no longer changing: the files of f, then --json-interval's last summary.
 * info: what the session knows of itself (pid, command, exit status, duration); the devices and
 * the stops are filled here. False if a file could not be written (outfile_say_failed says
 * which, once the UI is gone). */
bool report_write_end(const struct report_files *f, struct report_info *info);

#endif
