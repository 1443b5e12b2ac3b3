/* job_live.h — the job as it is now, during a live session: the picture the tracer takes every
 * JOB_LIVE_PERIOD_NS without a stop (engine/job_watch.c: each thread's call in flight from the
 * stubs' records and the int3 path's frames, its Python frames read from memory), kept here
 * with each process's wait share over the last JOB_LIVE_WINDOW_NS and the odd ones out, for
 * the TUI's Job view, --json-interval's `job` section and the metrics. The session makes one
 * and hands it to each of them; the tracer publishes, any thread copies. */
#ifndef GPUTOP_JOB_LIVE_H
#define GPUTOP_JOB_LIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "job.h"

#define JOB_LIVE_PERIOD_NS 250000000ull
/* The wait share's window: long enough that one step's waits do not make it jump, short enough
 * that a rank that starts straggling is named within seconds. */
#define JOB_LIVE_WINDOW_NS 10000000000ull
/* A mark of a moment (behind, not waiting, another line) is shown once it held that long: in a
 * running job some rank is always the last to arrive; one that stays apart is news. */
#define JOB_LIVE_HOLD_NS 2000000000ull

struct job_live;

/* A new one, empty; NULL: out of memory. */
struct job_live *job_live_new(void);
void job_live_free(struct job_live *l);	/* NULL: nothing */
/* Whether a picture is due at now (JOB_LIVE_PERIOD_NS since the last one); never for NULL. */
bool job_live_due(const struct job_live *l, uint64_t now);
/* The tracer's picture, taken at now: each process's wait_ns the time its threads spent in
 * synchronizes and collectives that returned since since_ns (stats_wait_of), its threads'
 * calls in flight. Its shares and marks are set here; j is kept (freed by the next). */
void job_live_publish(struct job_live *l, struct job *j, uint64_t now);
/* A copy of the last picture (job_free it); NULL: none yet, none kept (l NULL), or out of
 * memory. */
struct job *job_live_copy(struct job_live *l);

#endif
