/* dump_take.h — --dump's picture of a process (figures/job.h), taken by tracer_detach while it
 * holds every thread. */
#ifndef GPUTOP_DUMP_TAKE_H
#define GPUTOP_DUMP_TAKE_H

#include <stdint.h>

struct job;
struct tracee;

/* Every thread of p held (tracer_detach, after its last drain): each one's call in flight and
 * stack into the job's entry for p. */
void dump_take(struct job *j, struct tracee *p);
/* p was held ns (an attach's stop, a detach's): added to its entry in j (NULL: nothing). */
void dump_note_held(struct job *j, struct tracee *p, uint64_t ns);

#endif
