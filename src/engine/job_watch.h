/* job_watch.h — the live picture of the job (figures/job_live.h), taken by the tracer at its
 * housekeeping without a stop: each thread's call in flight from what gputop holds already (the
 * int3 path's frames, the call stub's records read at the last drain) and its Python frames
 * read from the program's memory, as py-spy does without --blocking. */
#ifndef GPUTOP_JOB_WATCH_H
#define GPUTOP_JOB_WATCH_H

#include <stdint.h>

struct job_live;

/* Every traced process's picture into l, when one is due (job_live_due; none for NULL). */
void job_watch_tick(struct job_live *l, uint64_t now);

#endif
