/* park.c — threads the stubs park for gputop (probe/launchpark.h): a kernel to name at its
 * first launch, a call's stack. Each drain finds them, asks each to stop (PTRACE_INTERRUPT: an
 * event stop, which a gputop killed meanwhile leaves running, where a trap would have killed the
 * program), serves it at that stop as the trap was served (tracer_on_stub_wait), answers its
 * slot and lets it go. While parks keep coming (the first launches after an attach or a model's
 * set-up) they are looked for every PARK_POLL_NS rather than every drain, so that a new kernel
 * costs its thread a fraction of a millisecond, not a drain's 10. */
#define _GNU_SOURCE
#include "tracer_internal.h"

#include <sys/ptrace.h>

#include "hit.h"
#include "launchpark.h"
#include "launchring.h"
#include "seccomp_watch.h"
#include "stub_layout.h"
#include "threads.h"

#define PARK_HOT_NS 1000000000ull	/* that long after the last park found, and after the first
					 * poll (right after an attach every kernel is new) */

static struct {
	uint64_t hot_until, last_poll;
} parks;

void park_poll(struct tracee *p, uint64_t now)
{
	struct lr_parked parked[LR_PARK_SLOTS];
	seccomp_watch_sweep(p, now);	/* may the stubs park at all */
	int n = launchpark_waiting(p, parked);
	if (n || (!parks.last_poll && launchring_base(p)))
		parks.hot_until = now + PARK_HOT_NS;
	parks.last_poll = now;
	for (int i = 0; i < n && !p->stopping_world; i++) {
		struct thread *t = threads_find_own(p, parked[i].own_tid);
		if (!t || t->guest || t->park_asked || t->state == TS_STOPPED)
			continue;
		if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) == 0)
			t->park_asked = true;
	}
}

bool park_hot(uint64_t now)
{
	return now < parks.hot_until;
}

bool park_due(uint64_t now)
{
	return now < parks.hot_until && now - parks.last_poll >= PARK_POLL_NS;
}

bool park_on_stop(struct tracee *p, struct thread *t, uint64_t now)
{
	arch_regs_t r, at;
	uint64_t sp;
	int slot;
	seccomp_watch_on_stop(p, t, now);	/* a new thread, or one asked for a look at its filters */
	if (!t->park_asked)
		return false;
	t->park_asked = false;
	/* Detaching: restore_thread tells it to go on. Elsewhere than in the park (a signal
	 * handler of the program's that ran meanwhile): not now; the next poll asks again. */
	if (p->stopping_world || arch_get_regs(t->tid, &r) < 0 || !launchpark_in(p, arch_pc(&r)) ||
	    (slot = launchpark_slot_of(p, threads_own_tid(p, t), &sp)) < 0 || launchpark_regs(t->tid, &r, sp, &at) < 0)
		return false;
	/* Out of its sleep now, not when it ends: first, so that code run in the thread below
	 * (naming a kernel, --gpu-time's loading) finds no system call to restart. */
	if (launchpark_at_syscall(p, arch_pc(&r))) {
		arch_cancel_syscall(&r);
		arch_set_regs(t->tid, &r);
	}
	t->thread_pointer = arch_thread_pointer(&r);
	hit_collect_returns(p, now);	/* the returns the stubs recorded came before this, */
	hit_drain_launches(p);	/* and so did the launches in the ring: the thread's
						 * own earlier ones are counted before this one */
	bool served = tracer_on_stub_wait(p, t, &at, arch_breakpoint_addr(&at), now);
	launchpark_answer(p, slot, served);
	tracee_release(p, t);
	return true;
}

void park_release(struct tracee *p, struct thread *t, arch_regs_t *r)
{
	uint64_t sp;
	int slot;
	if (!launchpark_in(p, arch_pc(r)) || (slot = launchpark_slot_of(p, threads_own_tid(p, t), &sp)) < 0)
		return;
	launchpark_answer(p, slot, false);
	if (launchpark_at_syscall(p, arch_pc(r))) {
		arch_cancel_syscall(r);
		arch_set_regs(t->tid, r);
	}
}
