/* rescue_cycle.h — the watch for a tracer loop. A program gputop traces that runs `strace -p`
 * on gputop (or any tracer of it) stops gputop, and gputop then never resumes the tracer, which
 * it traces: both stay stopped for good, and only SIGKILL frees them, which no signal gputop
 * could catch does. Processes of gputop's that no one traces look for the loop
 * (tracer_chain.h) every RESCUE_CYCLE_LOOK_MS for the whole session: the guard, started first,
 * and each process's watchdog (rescue.h), so that no one of them is needed — a guard killed or
 * stopped, the watchdogs see the loop as soon, and gputop starts another guard at its tick.
 * Seen, the watchdogs put their programs' code back while gputop still holds them; two looks
 * later the first of them to come says why on stderr, and each ends gputop with SIGKILL; the
 * programs, let go by the kernel, run on. A thread that stood at one of gputop's int3 then
 * resumes inside the instruction the int3 displaced (the kernel drops the trap): with libcuda
 * probed none does in steady state. */
#ifndef GPUTOP_RESCUE_CYCLE_H
#define GPUTOP_RESCUE_CYCLE_H

#include <stdbool.h>
#include <sys/types.h>

#define RESCUE_CYCLE_LOOK_MS 100
#define RESCUE_CYCLE_RESTARTS 100	/* guards started again at most, in a session */

/* The guard, started before gputop traces anything. 0 or -errno (no guard: the watchdogs still
 * look, once a program is traced). */
int rescue_cycle_guard_start(void);
/* gputop's tick: a guard gone (killed) is replaced. */
void rescue_cycle_guard_tick(void);
/* Ends the guard (a clean end of the session). */
void rescue_cycle_guard_stop(void);
bool rescue_cycle_is_guard(pid_t pid);	/* gputop's guard, not a process of the program's */
/* In a child of gputop that lives on (a watchdog): gputop's end of the guard's pipe closed, so
 * that the guard sees gputop's death. */
void rescue_cycle_forked(void);
/* The loop was seen, by any of them: put the program back now. */
bool rescue_cycle_seen(void);
/* In the guard and the watchdogs, at each look: the loop seen (by this process, or another)?
 * Seen here, the others are told. */
bool rescue_cycle_look(pid_t gputop);
/* Two looks after: ends gputop if the loop still holds, said once whoever comes first. */
void rescue_cycle_end(pid_t gputop);

#endif
