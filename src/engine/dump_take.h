/* dump_take.h — --dump's picture of a process (figures/job.h), taken by tracer_detach while it
 * holds every thread. */
#ifndef GPUTOP_DUMP_TAKE_H
#define GPUTOP_DUMP_TAKE_H

#include <stdint.h>

struct job;
struct tracee;

/* Every thread of p held (tracer_detach, after its last drain): each one's call in flight and
 * a copy of its stack into the job's entry for p. */
void dump_take(struct job *j, struct tracee *p);
/* After dump_take, once p's threads are let go (and always: it frees the copies): each
 * thread's stack unwound and named, and a call found on it where no record said one. */
void dump_take_finish(struct job *j, struct tracee *p);
/* p was held ns (an attach's stop, a detach's): added to its entry in j (NULL: nothing). */
void dump_note_held(struct job *j, struct tracee *p, uint64_t ns);

#endif
