/* park.c — threads the stubs park for gputop (probe/launchpark.h): a call's stack, a kernel to
 * name at its first launch. Each drain finds them. A park that wants only what memory holds (a
 * stack; a launch whose kernel has a name) is served in place: its registers are the words the
 * park saved, its stack is read while it sleeps, and what was read is kept only if it still
 * stood in the park afterwards. That takes no stop, so a gputop frozen at any moment holds such
 * a thread no longer than the park's own patience (a heartbeat 250 ms old). A park that needs
 * code run in the thread (the driver asked for a kernel's name, --gpu-time's loading) is asked
 * to stop (PTRACE_INTERRUPT: an event stop, which a gputop killed meanwhile leaves running),
 * served at that stop as the trap was (tracer_on_stub_wait), answered and let go. While parks
 * keep coming (the first launches after an attach or a model's set-up, every allocation under
 * --stacks allocs) they are looked for every PARK_POLL_NS rather than every drain, so that a
 * park costs its thread a fraction of a millisecond, not a drain's 10. */
#define _GNU_SOURCE
#include "tracer_internal.h"

#include <sys/ptrace.h>

#include "clock.h"
#include "hit.h"
#include "hit_drain.h"
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

/* A park served in place (hit.h's keeper first: keep finds the rest). */
struct in_place {
	struct hit_keeper keeper;
	struct lr_parked park;
	bool answered, kept;
};

/* What was read of the thread holds if it still stands in the park, unanswered. It is answered
 * served at once, before anything read is kept, and only while gputop's heartbeat is young
 * enough that the thread cannot be giving up at this moment (it gives up at LR_FRESH_NS):
 * else the launch would be kept here and recorded by the thread too. */
static bool keep(struct tracee *p, struct hit_keeper *g)
{
	struct in_place *ip = (struct in_place *)g;
	if (ip->answered)
		return ip->kept;
	ip->answered = true;
	ip->kept = now_ns() - launchring_beat_ns(p) < LR_FRESH_NS / 2 && launchpark_still(p, &ip->park);
	launchpark_answer(p, &ip->park, ip->kept);	/* else told to go on, if it still waits */
	return ip->kept;
}

static void serve_in_place(struct tracee *p, struct thread *t, const struct lr_parked *k, const arch_regs_t *at,
			   uint64_t now)
{
	struct in_place ip = { .keeper = { keep }, .park = *k };
	launchring_beat(p);	/* gputop is there: the thread waits for this answer */
	t->thread_pointer = arch_thread_pointer(at);
	tracer_on_stub_wait(p, t, at, arch_breakpoint_addr(at), now, &ip.keeper);
	if (!ip.answered)	/* nothing kept: a launch not counted here is recorded by its thread */
		launchpark_answer(p, k, false);
}

void park_poll(struct tracee *p, uint64_t now)
{
	struct lr_parked parked[LR_PARK_SLOTS];
	bool drained = false;
	seccomp_watch_sweep(p, now);	/* may the stubs park at all */
	int n = launchpark_waiting(p, parked);
	if (n || (!parks.last_poll && launchring_base(p)))
		parks.hot_until = now + PARK_HOT_NS;
	parks.last_poll = now;
	for (int i = 0; i < n && !p->stopping_world; i++) {
		struct thread *t = threads_find_own(p, parked[i].own_tid);
		arch_regs_t at;
		if (!t || t->guest || t->park_asked || launchpark_regs(t->tid, parked[i].sp, &at) < 0)
			continue;
		if (tracer_stub_wait_in_place(p, &at, arch_breakpoint_addr(&at))) {
			if (!drained) {
				/* The returns and launches the stubs recorded came before these parks:
				 * a thread's own earlier launches are counted before its parked one. */
				hit_drain(p, now, HIT_DRAIN_RECORDS);
				drained = true;
			}
			serve_in_place(p, t, &parked[i], &at, now);
		} else if (t->state != TS_STOPPED && ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) == 0) {
			t->park_asked = true;
		}
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
	struct lr_parked k;
	seccomp_watch_on_stop(p, t, now);	/* a new thread, or one asked for a look at its filters */
	if (!t->park_asked)
		return false;
	t->park_asked = false;
	/* Detaching: restore_thread tells it to go on. Elsewhere than in the park (a signal
	 * handler of the program's that ran meanwhile): not now; the next poll asks again. */
	if (p->stopping_world || arch_get_regs(t->tid, &r) < 0 || !launchpark_in(p, arch_pc(&r)) ||
	    launchpark_find(p, threads_own_tid(p, t), &k) < 0 || launchpark_regs(t->tid, k.sp, &at) < 0)
		return false;
	/* Out of its sleep now, not when it ends: first, so that code run in the thread below
	 * (naming a kernel, --gpu-time's loading) finds no system call to restart. */
	if (launchpark_at_syscall(p, arch_pc(&r))) {
		arch_cancel_syscall(&r);
		arch_set_regs(t->tid, &r);
	}
	t->thread_pointer = arch_thread_pointer(&r);
	/* The returns the stubs recorded came before this, and so did the launches in the ring:
	 * the thread's own earlier ones are counted before this one. */
	hit_drain(p, now, HIT_DRAIN_RECORDS);
	bool served = tracer_on_stub_wait(p, t, &at, arch_breakpoint_addr(&at), now, NULL);
	launchpark_answer(p, &k, served);
	tracee_release(p, t);
	return true;
}

void park_release(struct tracee *p, struct thread *t, arch_regs_t *r)
{
	struct lr_parked k;
	if (!launchpark_in(p, arch_pc(r)) || launchpark_find(p, threads_own_tid(p, t), &k) < 0)
		return;
	launchpark_answer(p, &k, false);
	if (launchpark_at_syscall(p, arch_pc(r))) {
		arch_cancel_syscall(r);
		arch_set_regs(t->tid, r);
	}
}
