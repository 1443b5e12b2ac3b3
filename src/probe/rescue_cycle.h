/* rescue_cycle.h — a guard against a tracer loop. A program gputop traces that runs `strace -p`
 * on gputop (or any tracer of it) stops gputop, and gputop then never resumes the tracer, which
 * it traces: both stay stopped for good, and only SIGKILL frees them, which no signal gputop
 * could catch does. The guard, a process of gputop's that no one traces, looks for the loop
 * (tracer_chain.h) every RESCUE_CYCLE_LOOK_MS for the whole session. Seen, it tells the
 * watchdogs (rescue.h), which put their programs' code back while gputop still holds them, then
 * says why on stderr and ends gputop with SIGKILL; the programs, let go by the kernel, run on.
 * A thread that stood at one of gputop's int3 then resumes inside the instruction the int3
 * displaced (the kernel drops the trap): with libcuda probed none does in steady state. */
#ifndef GPUTOP_RESCUE_CYCLE_H
#define GPUTOP_RESCUE_CYCLE_H

#include <stdbool.h>
#include <sys/types.h>

#define RESCUE_CYCLE_LOOK_MS 100

/* The guard, started before gputop traces anything. 0 or -errno (no guard: a loop then holds
 * gputop and the program until gputop is killed). */
int rescue_cycle_guard_start(void);
/* Ends the guard (a clean end of the session). */
void rescue_cycle_guard_stop(void);
bool rescue_cycle_is_guard(pid_t pid);	/* gputop's guard, not a process of the program's */
/* In a child of gputop that lives on (a watchdog): gputop's end of the guard's pipe closed, so
 * that the guard sees gputop's death. */
void rescue_cycle_forked(void);
/* In a watchdog, at each look: the guard saw the loop; put the program back now. */
bool rescue_cycle_seen(void);

#endif
