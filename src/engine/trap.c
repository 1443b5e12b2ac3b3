/* trap.c — a SIGTRAP stop: a breakpoint of ours (a probe, the dynamic linker's hook), the
 * return trampoline, or the program's own trap, which tracer.c then delivers; and what a stub's
 * park wants (park.c serves it at an event stop, as a trap once was). Decoding a hit is hit.c's;
 * this file decides whose stop it is, counts it and lets the thread go on. */
#define _GNU_SOURCE
#include "tracer_internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "breakpoints.h"
#include "budget.h"
#include "clock.h"
#include "config.h"
#include "cuda_api.h"
#include "frame.h"
#include "gputime.h"
#include "hit.h"
#include "hit_drain.h"
#include "launchring.h"
#include "memory.h"
#include "probes.h"
#include "retfast.h"
#include "seccomp_watch.h"
#include "session_state.h"
#include "stats.h"
#include "test_crash.h"
#include "threads.h"
#include "torch_dumps.h"
#include "xol.h"

static bool trap_is_breakpoint(pid_t tid)
{
	siginfo_t si;
	if (ptrace(PTRACE_GETSIGINFO, tid, 0, &si) < 0)
		return false;
	return si.si_code == SI_KERNEL;
}

/* A stop of ours: in the figures (cost.stops) and in the process's count (the budget's). */
static void count_stop(struct tracee *p)
{
	stats_on_stop(p->stats_id);
	p->stops++;
}

/* The dynamic linker's r_state at its stop (RT_CONSISTENT 0, RT_ADD 1, RT_DELETE 2); -1 unknown. */
static int rtld_state(struct tracee *p, struct thread *t)
{
	uint64_t state_addr = probes_rtld_state_addr(p);
	int32_t state = 0;
	return state_addr && mem_read(t->tid, state_addr, &state, sizeof state) == 0 ? state : -1;
}

/* _dl_debug_state runs before and after each change of the library list. The records are
 * drained whole before a library's probes may go: where one is removed (RT_DELETE, and the
 * consistent list after it) or where it is not known which. Not where one only comes: a
 * drain reads much of the program's memory, and the thread waits in this stop (a dlopen held
 * 0.4 s a stop in 8 processes whose threads map and unmap at once, docs/validation-harm.md). */
static void on_rtld_hit(struct tracee *p, struct thread *t, uint64_t now)
{
	int state = rtld_state(p, t);
	bool after_add = state == 0 && p->rtld_adding;
	p->rtld_adding = state == 1;
	if (state != 1 && !after_add)
		hit_drain(p, now, HIT_DRAIN_WHOLE);
	if (state != 0 && state != -1)
		return;	/* the list is looked at once consistent again */
	bool had_cuda = probes_cuda_seen(p);
	probes_refresh(p, t);
	hit_quiet_launches(p);
	seccomp_watch_review(p, now_ns());	/* a ring made now parks once its threads are looked at */
	if (!had_cuda && probes_cuda_seen(p))
		session_set_cuda_seen();
}

static enum budget_stop budget_kind(int api)
{
	const struct api_spec *s = cuda_api_get(api);
	if (!s)
		return STOP_OTHER;
	return s->op == OP_LAUNCH ? STOP_LAUNCH : s->op == OP_KERNEL_NAME ? STOP_OTHER : STOP_WORK;
}

bool tracer_stub_wait_in_place(struct tracee *p, const arch_regs_t *r, uint64_t addr)
{
	bool ex;
	int record;
	if (launchring_is_call_trap(p, addr, arch_call_trap_record(r), &record) || launchring_is_oom_trap(p, addr))
		return true;	/* a stack, the state at an out-of-memory: memory only */
	/* A launch whose kernel has a name (a sampled launch site; a handle named from the
	 * program's data), unless --gpu-time waits to load at a stop. */
	return launchring_is_trap(p, addr, &ex) && hit_launch_named(p, r, ex) && !gputime_wants_stop(p);
}

bool tracer_on_stub_wait(struct tracee *p, struct thread *t, const arch_regs_t *r, uint64_t addr, uint64_t now,
			 struct hit_keeper *g)
{
	bool ex;
	int record;
	if (launchring_is_trap(p, addr, &ex)) {
		/* A launch of a handle not seen yet: counted and named now. Bookkeeping for the
		 * budget: it cannot shed these. */
		count_stop(p);
		hit_launch_trap(p, t, r, ex, g);
		if (!g)
			gputime_at_stop(p, t);	/* --gpu-time: loaded at the first such stop */
		if (budget_active())
			budget_on_stop(now_ns() - now, STOP_OTHER);
		return true;
	}
	if (launchring_is_call_trap(p, addr, arch_call_trap_record(r), &record)) {
		/* A call that wants its stack (--stacks): taken now. */
		count_stop(p);
		hit_call_trap(p, t, r, record, g);
		if (budget_active())
			budget_on_stop(now_ns() - now, STOP_OTHER);
		return true;
	}
	if (launchring_is_oom_trap(p, addr)) {
		/* An allocation out of memory, its thread held at the return: the state now. */
		torch_dumps_at_oom(p, arch_sp(r), now, g);
		return true;
	}
	return false;
}

/* Handles a SIGTRAP stop. Returns false if the trap is not ours (it is then delivered). */
bool tracer_on_trap(struct tracee *p, struct thread *t, uint64_t now)
{
	arch_regs_t r;
	if (arch_get_regs(t->tid, &r) < 0)
		return true;	/* gone */
	uint64_t addr = arch_breakpoint_addr(&r);
	t->thread_pointer = arch_thread_pointer(&r);	/* names it in call records */
	struct bp *early = bp_find(p, addr);
	if (early && early->kind == BP_PROBE && early->armed && !p->stopping_world &&
	    !(early->ambiguous && !trap_is_breakpoint(t->tid))) {
		/* Out of the int3 before anything slow: a gputop killed from here on leaves the
		 * thread running the displaced instructions (the call untraced), not resuming
		 * inside them. */
		arch_regs_t at_slot = r;
		arch_set_pc(&at_slot, early->slot);
		arch_set_regs(t->tid, &at_slot);
	}

	/* Returns the stub recorded come first: they happened before this stop. */
	hit_collect_returns(p, now);
	if (xol_ready(p) && (addr == xol_trampoline(p) || (retfast_ready(p) && addr == retfast_fallback_trap(p)))) {
		count_stop(p);
		/* So did the launches the ring holds: a handle module loading returns again, which
		 * the driver may have reused for another kernel, ran under its old name there (its
		 * count in the tallies, kernel_names.c). */
		hit_drain_launches(p);
		int api = hit_return(p, t, &r, now);
		if (api >= 0)
			arch_set_regs(t->tid, &r);
		const struct api_spec *spec = cuda_api_get(api);
		if (spec && spec->op == OP_ALLOC && (uint32_t)arch_retval(&r) == 2)
			torch_dumps_at_oom(p, arch_sp(&r), now, NULL);	/* out of memory: the state while it stands here */
		if (budget_active())
			budget_on_stop(now_ns() - now, budget_kind(api));
		tracee_release(p, t);
		return true;
	}
	struct bp *b = bp_find(p, addr);
	if (!b || (b->ambiguous && !trap_is_breakpoint(t->tid)))
		return false;
	if (!b->armed || (p->stopping_world && t->want_stop)) {
		/* Disarmed since it trapped, or we are detaching: run the program's instruction
		 * again as if the breakpoint had never been there. */
		arch_set_pc(&r, addr);
		arch_set_regs(t->tid, &r);
		tracee_release(p, t);
		return true;
	}
	count_stop(p);
	if (config.crash_at && p->stops >= config.crash_at)
		test_crash_now();
	struct frame *timed = NULL;
	if (b->kind == BP_RTLD) {
		on_rtld_hit(p, t, now);
		arch_set_pc(&r, b->slot);
	} else if (b->kind == BP_EXEC) {
		hit_drain(p, now, HIT_DRAIN_LAST);	/* the image and its tallies go */
		gputime_before_exec(p, t);	/* --gpu-time: CUPTI's last records of this image */
		arch_set_pc(&r, b->slot);
	} else {
		hit_entry(p, t, b, &r, &timed);
	}
	arch_set_regs(t->tid, &r);
	if (b->kind == BP_PROBE)
		gputime_at_stop(p, t);	/* --gpu-time: loaded at the first such stop */
	if (timed)
		timed->t_entry = now_ns();
	if (budget_active())
		budget_on_stop(now_ns() - now, b->kind == BP_PROBE ? budget_kind(b->api) : STOP_OTHER);
	tracee_release(p, t);
	return true;
}
