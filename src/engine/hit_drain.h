/* hit_drain.h — what the stubs of a process recorded and counted since the last look, handed
 * on, in the one order every step of the engine needs: the calls recorded whole and the
 * returns (hit_collect_returns), the launch ring (hit_drain_launches), the tallies
 * (hit_tallies.h), then each consumer's .drained (account.h: what the calls leave to read from
 * the program, PyTorch's Blocks). A step that must see the
 * program's calls so far (the tracer's tick, a stop, a park, a thread's exit, a library's
 * load, an exec, a detach) drains here, never through its parts. */
#ifndef GPUTOP_HIT_DRAIN_H
#define GPUTOP_HIT_DRAIN_H

#include <stdint.h>

struct tracee;

enum hit_drain_how {
	/* The records alone: a stop or a park, whose thread's earlier calls come first. */
	HIT_DRAIN_RECORDS,
	/* And the tallies (at most every 50 ms), then the consumers told: the tracer's tick. */
	HIT_DRAIN_TICK,
	/* The tallies now: a thread's exit, a library's load (its probes may go), a CUDA graph's
	 * capture or life, an attach. */
	HIT_DRAIN_WHOLE,
	/* The tallies now and for the last time (a detach, the process's exit, an exec): a
	 * handle not named yet waits no more for its name. */
	HIT_DRAIN_LAST,
};

/* Drains process p (now: the time of the look, which the returns are stamped against). */
void hit_drain(struct tracee *p, uint64_t now, enum hit_drain_how how);

#endif
