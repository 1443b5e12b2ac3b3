/* json_interval.h — --json-interval SECONDS FILE: the JSON summary (json.h) rewritten every
 * interval by a thread of its own, atomically (a temporary file in FILE's directory, then
 * rename), so that a reader always finds a whole, valid summary. */
#ifndef GPUTOP_JSON_INTERVAL_H
#define GPUTOP_JSON_INTERVAL_H

#include "json.h"

/* Checks, before anything is traced, that FILE can be written this way (its directory takes
 * new files; FILE, if there, is a regular file and no symbolic link). Returns 0, or -errno after
 * saying why on stderr. Leaves nothing behind. */
int json_interval_check(const char *path);

/* Starts rewriting path every seconds (the first time at once); each time, base (copied) is what
 * the session knew of itself at its start, and info fills in the rest from the snapshot about
 * to be written (called from the writer's thread: it must not touch the tracer's state).
 * Returns 0 or -errno. */
int json_interval_start(const char *path, double seconds, const struct report_info *base,
			void (*info)(struct report_info *out, const struct stats_snapshot *s));

/* Stops the thread and writes the summary a last time with final (the session's end). Returns 0,
 * or -errno after saying why. No-op (0) when not started. */
int json_interval_stop(const struct report_info *final);

#endif
