/* trace.h — --trace FILE: one line per traced call, in the order gputop sees them. A consumer
 * of calls (cuda/cuda_call.h): formats and writes; knows nothing of how the calls were caught. */
#ifndef GPUTOP_TRACE_H
#define GPUTOP_TRACE_H

#include "cuda_call.h"

/* Writes to a copy of fd (the caller keeps fd), or to stderr where fd is -1. 0 or -errno.
 * (config.tracing is the session's: --trace given.) */
int trace_open(int fd);
/* 0, or the first failed write's -errno: after it nothing more was written (stderr: 0). */
int trace_close(void);

/* The lines: a call's return (its error, 0 or the code and its name, and its time), or a failed
 * allocation's error alone; an allocation's pointer and bytes; a launch's dimensions (held by a
 * capture or not; tid 0 from the ring); a graph launch seen at its entry. Nothing while no file
 * is open. */
extern const struct cuda_consumer trace_consumer;

#endif
