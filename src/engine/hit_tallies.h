/* hit_tallies.h — the stubs' tallies (probe/tallies.h) read and handed to the consumers
 * (account.h): where the totals of every call a stub counts come from. */
#ifndef GPUTOP_HIT_TALLIES_H
#define GPUTOP_HIT_TALLIES_H

#include <stdbool.h>
#include <stdint.h>

struct tracee;

/* When a read reads: on the tracer's tick, at most every 50 ms (the views refresh no faster);
 * WHOLE, now (a thread's exit, a library's load: its probes may go); LAST, now and for the last
 * time (a detach, the process's exit, an exec): a handle not named yet waits no more for its
 * name. */
enum hit_tally_read { HIT_TALLY_TICK, HIT_TALLY_WHOLE, HIT_TALLY_LAST };
/* What the stubs tallied in place since the last read, to the consumers; the figures' live
 * allocations made the stubs' table's again where records of it were lost. False: not read
 * (a tick within 50 ms of the last read). */
bool hit_read_tallies(struct tracee *p, enum hit_tally_read how);
/* handle's launches alone, before it is named anew (its park, module loading that returned it
 * again): those counted so far go under the name it had. */
void hit_read_launches_of(struct tracee *p, uint64_t handle);

#endif
