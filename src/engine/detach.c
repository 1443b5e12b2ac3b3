/* detach.c — letting the program go: the clean detach (every thread stopped, every byte and
 * return address put back, the trampoline page unmapped) and the crash path, which runs in
 * gputop's crash handler and so makes do with plain memory reads and system calls. */
#define _GNU_SOURCE
#include "tracer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "breakpoints.h"
#include "clock.h"
#include "dump_take.h"
#include "nccl_counter.h"
#include "frame.h"
#include "hit.h"
#include "hit_drain.h"
#include "launchring.h"
#include "log.h"
#include "memory.h"
#include "rescue.h"
#include "retfast.h"
#include "threads.h"
#include "xol.h"
#include "torch_dumps.h"

/* ---- detach ----------------------------------------------------------------------------- */

static bool in_stub(struct tracee *p, uint64_t pc)
{
	return retfast_in_stub(p, pc) || launchring_in_stub(p, pc);
}

/* A thread caught inside a stub (a few hundred instructions at most; every jump and int3 is
 * removed by now, and the stubs no longer wait: gputop said it is going) is let run a few
 * microseconds at a time and stopped again with PTRACE_INTERRUPT until its pc has left the stub:
 * event stops only, never a single step, so a gputop killed meanwhile leaves a thread that runs
 * on, not one with the trap flag set (which would die of it). A return that traps at the
 * trampoline on the way is left there for restore_thread to finish; the program's own signals
 * are kept for the detach. 0 once out, -errno. */
static int run_out_of_stub(struct tracee *p, struct thread *t, arch_regs_t *r)
{
	for (int n = 0; n < 4000 && in_stub(p, arch_pc(r)); n++) {
		if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
			return -errno;
		struct timespec nap = { 0, 20000 };
		nanosleep(&nap, NULL);
		if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0)
			return -errno;
		for (;;) {
			struct trace_stop e;
			pid_t w;
			while ((w = event_wait(t->tid, 0, &e)) == -EINTR)
				;
			if (w < 0 || event_is_end(&e))
				return -ESRCH;
			if (arch_get_regs(t->tid, r) < 0)
				return -ESRCH;
			if (e.event != TE_SIGNAL)
				break;	/* our interrupt */
			if (e.sig == SIGTRAP && xol_ready(p) && arch_breakpoint_addr(r) == xol_trampoline(p)) {
				arch_set_pc(r, xol_trampoline(p));	/* as if it had not trapped yet */
				return arch_set_regs(t->tid, r) < 0 ? -ESRCH : 0;
			}
			if (!t->pending_sig)
				t->pending_sig = e.sig;
			if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)	/* on to the interrupt */
				return -errno;
		}
	}
	return in_stub(p, arch_pc(r)) ? -EAGAIN : 0;
}

/* Returns false if the thread could not be brought out of a stub (the pages must then stay). */
static bool restore_thread(struct tracee *p, struct thread *t)
{
	arch_regs_t r;
	if (arch_get_regs(t->tid, &r) < 0)
		return true;
	uint64_t pc = arch_pc(&r);
	if (in_stub(p, pc)) {
		park_release(p, t, &r);	/* parked: told to go on, out of its sleep */
		if (run_out_of_stub(p, t, &r) < 0)
			return false;
		pc = arch_pc(&r);	/* it finished its return (or its record) in the stub */
		hit_collect_returns(p, now_ns());
	}
	if (xol_ready(p) && pc == xol_trampoline(p) && t->depth) {
		/* Returned into the trampoline but not trapped yet: finish the return for it. */
		arch_regs_t after = r;
		arch_set_pc(&after, arch_pc(&after) + arch_breakpoint_len);	/* as if it had trapped */
		if (hit_return(p, t, &after, now_ns()) >= 0) {
			arch_set_pc(&r, arch_pc(&after));
			arch_set_regs(t->tid, &r);
		}
	} else {
		uint64_t to = bp_unwind_pc(p, pc);
		if (to != pc) {
			arch_set_pc(&r, to);
			arch_set_regs(t->tid, &r);
		}
	}
	/* Every swapped return address back; the stack may have been reused only if the call
	 * left by longjmp, so check the slot still holds ours. */
	for (uint32_t i = 0; i < t->depth; i++) {
		struct frame *f = &t->frames[i];
		uint64_t cur = 0;
		if (mem_read(t->tid, f->ret_slot, &cur, 8) == 0 && cur == f->swapped)
			mem_write(t->tid, f->ret_slot, &f->ret_addr, 8);
	}
	hit_forget_frames(p, t, 0);
	return true;
}

/* The thread's own pending signals (not the process's), unblocked ones only, from
 * /proc/PID/task/TID/status; 0 if it cannot be read. */
static uint64_t unblocked_pending(struct tracee *p, pid_t tid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/task/%d/status", p->pid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *pnd = strstr(buf, "\nSigPnd:"), *blk = strstr(buf, "\nSigBlk:");
	if (!pnd || !blk)
		return 0;
	return strtoull(pnd + 8, NULL, 16) & ~strtoull(blk + 8, NULL, 16);
}

/* PTRACE_INTERRUPT races with our breakpoints: a thread that has just executed an int3 of ours
 * has its SIGTRAP queued but not yet taken, and the kernel reports the interrupt first (job
 * control traps come before signals). Detached like that, it would take the SIGTRAP with no
 * tracer and die, its pc past the int3. So let each such thread take its trap while we still
 * trace it: tracer_on_trap puts its pc back on the breakpoint (or keeps a SIGTRAP of the program's
 * own to deliver at detach), and the thread is held again. */
static int take_pending_traps(struct tracee *p)
{
	for (int round = 0; round < 4; round++) {
		bool any = false;
		uint32_t it = 0;
		for (struct thread *t; (t = threads_iter(p, &it));) {
			if (t->state != TS_STOPPED || t->group_stopped || t->pending_sig ||
			    !(unblocked_pending(p, t->tid) & (1ull << (SIGTRAP - 1))))
				continue;
			t->want_stop = true;
			tracee_resume(t, 0);
			any = true;
		}
		if (!any)
			return 0;
		int err = tracee_wait_all_stopped(p);
		if (err < 0)
			return err;
	}
	return 0;
}

int tracer_detach(struct tracee *p)
{
	if (!p)
		return -ESRCH;	/* a pid gputop does not trace (never taken, or let go already) */
	uint32_t it = 0;
	uint64_t t0 = now_ns();
	int err = tracee_stop_world(p);
	if (err == 0)
		err = take_pending_traps(p);
	if (err == 0)
		err = tracer_settle_event_stops(p);
	if (err == -ESRCH || !threads_count_all(p))
		return 0;	/* it exited meanwhile */

	launchring_say_absent(p);	/* a thread still in a stub must not trap once we are gone */
	int restore_err = bp_disarm_all(p);
	/* What the stubs recorded before everyone stopped (a thread waiting for room in the ring
	 * gets it); PyTorch's last blocks, and its allocator's totals with every thread held. */
	hit_drain(p, now_ns(), HIT_DRAIN_WHOLE);
	torch_dumps_take(p, SHOT_DETACH);	/* --memory-snapshot, at this held instant */
	uint64_t t_stopped = now_ns();
	if (tracer.job) {
		dump_take(tracer.job, p);	/* --dump: every thread held here anyway */
		nccl_counter_take(tracer.job, p);
	}
	uint64_t t_picture = now_ns();
	it = 0;
	bool all_out = true;
	for (struct thread *t; (t = threads_iter(p, &it));)
		if (!t->guest && !restore_thread(p, t))
			all_out = false;
	launchring_restore_calls(p);	/* calls in flight through the call stub: their returns back */
	struct thread *injector = tracer_injectable_thread(p);
	if (xol_ready(p)) {
		/* The last launches, those of threads brought out included, and the last totals:
		 * the area goes. */
		hit_drain(p, now_ns(), HIT_DRAIN_LAST);
		if (!all_out)
			log_warn("a thread of %d could not be brought out of gputop's code: its pages stay "
				 "mapped (they work without gputop)", p->pid);
		else if (injector) {
			retfast_unmap(p, injector);
			launchring_unmap(p, injector);
			xol_unmap_all(p, injector);
		}
		else
			log_warn("every thread is stopped by a signal: the trampoline page (64 KiB, "
				 "never used again) stays mapped in %d", p->pid);
	}
	uint64_t t_out = now_ns();
	it = 0;
	for (struct thread *t; (t = threads_iter(p, &it));) {
		ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)t->pending_sig);
		threads_remove(p, t->tid);
	}
	uint64_t held = now_ns() - t0;
	if (restore_err == 0) {
		rescue_forget_all(p->rescue_slot);
		rescue_watchdog_stop(p->rescue_slot);	/* goodbye: nothing of ours is left for it to restore */
	}
	mem_close(p);
	dump_note_held(tracer.job, p, held);
	uint64_t t_named = now_ns();
	dump_take_finish(tracer.job, p);	/* the stacks' costly part, the program running */
	log_debug("%d: held %.1f ms for the detach (stopped and drained %.1f, picture %.1f, restored %.1f, "
		  "let go %.1f); stacks named after, in %.1f ms", p->pid, (double)held / 1e6,
		  (double)(t_stopped - t0) / 1e6, (double)(t_picture - t_stopped) / 1e6,
		  (double)(t_out - t_picture) / 1e6, (double)(t0 + held - t_out) / 1e6,
		  (double)(now_ns() - t_named) / 1e6);
	if (restore_err < 0) {
		log_error("could not restore every breakpoint of %d: %s", p->pid,
			  strerror(-restore_err));
		return restore_err;
	}
	return 0;
}

/* ---- the crash path: plain memory reads and system calls only ----------------------------- */

/* Puts the pc of a thread held in a stop back into the program's code and detaches it. Its
 * stop is a trap of ours only if the kernel says it was an int3 (SI_KERNEL SIGTRAP): at any
 * other stop, a pc just past one of our breakpoints is simply where the out-of-line copy of a
 * one-byte instruction jumped back to. */
static void emergency_release(struct tracee *p, struct thread *t, uint64_t tramp, int sig)
{
	siginfo_t si;
	arch_regs_t r;
	bool trapped = ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) == 0 && si.si_signo == SIGTRAP &&
		       si.si_code == SI_KERNEL;
	if (arch_get_regs(t->tid, &r) == 0) {
		uint64_t pc = arch_pc(&r), at = arch_breakpoint_addr(&r), to = pc;
		bool ours = false;
		if (trapped && bp_find(p, at)) {
			to = at;	/* trapped, not handled: run the original */
			ours = true;
		} else if (trapped && tramp && at == tramp) {
			ours = true;
			for (int i = (int)t->depth - 1; i >= 0; i--)
				if (arch_sp_after_return(t->frames[i].entry_sp) == arch_sp(&r)) {
					to = t->frames[i].ret_addr;
					break;
				}
		} else {
			to = bp_unwind_pc(p, pc);
		}
		if (to != pc) {
			arch_set_pc(&r, to);
			arch_set_regs(t->tid, &r);
		}
		if (ours && sig == SIGTRAP)
			sig = 0;	/* our own trap: swallowed */
	}
	ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)sig);
}

/* Brings a thread that was not held (running, or stopped in a stop not read yet) to a stop and
 * lets it go: PTRACE_INTERRUPT, then its stops one by one until one can be detached from. A
 * thread that executed an int3 of ours just before the code was restored must take that SIGTRAP
 * while still traced, or it dies of it once gputop is gone. Bounded by deadline (ns). */
static void emergency_catch(struct tracee *p, struct thread *t, uint64_t tramp, uint64_t deadline)
{
	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0)
		return;	/* gone, or a zombie leader: nothing to do */
	for (int rounds = 0; rounds < 8;) {
		struct trace_stop e;
		pid_t w = event_wait(t->tid, WNOHANG, &e);
		if (w == 0) {
			if (now_ns() > deadline)
				return;	/* the kernel detaches it when gputop dies */
			struct timespec nap = { 0, 200000 };
			nanosleep(&nap, NULL);
			continue;
		}
		if (w < 0 || event_is_end(&e))
			return;	/* exited */
		if (e.event == TE_SIGNAL) {
			emergency_release(p, t, tramp, e.sig);	/* a signal-delivery-stop */
			return;
		}
		rounds++;
		if (!(unblocked_pending(p, t->tid) & (1ull << (SIGTRAP - 1)))) {
			emergency_release(p, t, tramp, 0);	/* interrupt, group-stop, event */
			return;
		}
		if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)	/* take the pending SIGTRAP first */
			return;
	}
	emergency_release(p, t, tramp, 0);
}

/* From the crash handler (rescue.c), after the code and stacks were restored: every thread is
 * brought to a stop, its pc put back into the program's code, and let go. */
static void emergency_detach_one(struct tracee *p, uint64_t deadline)
{
	uint32_t it = 0;
	uint64_t tramp = xol_ready(p) ? xol_trampoline(p) : 0;
	for (struct thread *t; (t = threads_iter(p, &it));) {
		if (t->state != TS_STOPPED) {
			emergency_catch(p, t, tramp, deadline);
			continue;
		}
		siginfo_t si;
		bool at_signal = ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) == 0 && (si.si_code >> 8) == 0;
		if (!at_signal && !t->group_stopped &&
		    (unblocked_pending(p, t->tid) & (1ull << (SIGTRAP - 1))) &&
		    ptrace(PTRACE_CONT, t->tid, 0, 0) == 0) {
			t->state = TS_RUNNING;	/* its trap comes first, then it is caught */
			emergency_catch(p, t, tramp, deadline);
			continue;
		}
		emergency_release(p, t, tramp, t->pending_sig);
	}
}

/* The thread tid and, in *p, the process it belongs to (the last one tried, when none owns
 * it: NULL, that one in *p). */
static struct thread *emergency_owner(pid_t tid, struct tracee **p)
{
	uint32_t it = 0;
	for (struct tracee *q; (q = tracee_next(&it));) {
		*p = q;
		struct thread *t = threads_find(q, tid);
		if (t)
			return t;
	}
	return NULL;
}

static void emergency_detach(void)
{
	uint64_t deadline = now_ns() + 2000000000u;
	uint32_t it = 0;
	struct tracee *any = NULL;
	for (struct tracee *p; (p = tracee_next(&it));) {
		any = p;
		emergency_detach_one(p, deadline);
	}
	if (!any)
		return;	/* a crash before any process was taken: nothing of ours is anywhere */
	/* Stops of threads we never heard of (a new thread whose clone event was not read yet) and
	 * of forked children not cleaned yet (their copy of memory still has our int3s). */
	for (int n = 0; n < 4096 && now_ns() < deadline; n++) {
		struct trace_stop e;
		pid_t w = event_wait(-1, WNOHANG, &e);
		if (w <= 0)
			break;
		if (rescue_is_watchdog(w) || event_is_end(&e))
			continue;
		struct tracee *p = any;
		struct thread tmp = { .tid = w }, *t = emergency_owner(w, &p);
		uint64_t tramp = t && xol_ready(p) ? xol_trampoline(p) : 0;
		if (!t && !tracer_shares_memory(p, w)) {
			tracer_release_child(p, w);
			continue;
		}
		emergency_release(p, t ? t : &tmp, tramp, e.event == TE_SIGNAL ? e.sig : 0);
	}
}

void tracer_install_crash_handler(void)
{
	rescue_install_crash_handler(emergency_detach);
}
