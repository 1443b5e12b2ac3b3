/* tracee_ctl.c — the ptrace steps on the traced process's threads (tracee_ctl.h). */
#define _GNU_SOURCE
#include "tracee_ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "breakpoints.h"
#include "clock.h"
#include "gputime_ring.h"
#include "hit.h"
#include "frame.h"
#include "hit_drain.h"
#include "kernels.h"
#include "launchring.h"
#include "tallies.h"
#include "log.h"
#include "memory.h"
#include "probes.h"
#include "pystack.h"
#include "reap.h"
#include "rescue.h"
#include "stats.h"
#include "retfast.h"
#include "stack_capture.h"
#include "symbols.h"
#include "threads.h"
#include "torch_alloc.h"
#include "tracer_internal.h"
#include "xol.h"

static struct {
	void (*dispatch)(const struct trace_stop *e, uint64_t now);
	/* The traced processes: few (one per rescue table), scanned whole. */
	struct tracee *list[RESCUE_SLOTS];
	uint32_t n_list;
} tracees;

static void tracee_free(struct tracee *t)
{
	if (!t)
		return;
	rescue_slot_free(t->rescue_slot);
	threads_state_free(t->threads);
	memory_state_free(t->memory);
	symbols_state_free(t->symbols);
	xol_state_free(t->xol);
	breakpoints_state_free(t->breakpoints);
	launchring_state_free(t->launchring);
	tallies_state_free(t->tallies);
	retfast_state_free(t->retfast);
	probes_state_free(t->probes);
	gputime_state_free(t->gputime);
	kernels_state_free(t->kernels);
	hit_state_free(t->hit);
	pystack_state_free(t->pystack);
	stack_capture_state_free(t->stack_capture);
	free(t->nccl_counter);
	torch_state_free(t->torch);
	free(t);
}

static pid_t parent_of(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	FILE *f = fopen(path, "re");
	pid_t ppid = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "PPid: %d", &ppid) == 1)
			break;
	fclose(f);
	return ppid;
}

static void command_of(pid_t pid, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/comm", pid);
	FILE *f = fopen(path, "re");
	buf[0] = 0;
	if (f) {
		if (fgets(buf, (int)size, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
}

int tracee_open(pid_t pid, bool launched, struct tracee **out)
{
	if (tracees.n_list == RESCUE_SLOTS)
		return -EMFILE;
	struct tracee *t = calloc(1, sizeof *t);
	if (!t)
		return -ENOMEM;
	t->pid = pid;
	t->launched = launched;
	if (launched)
		tracer_signals_launched(pid);
	t->seen_ns = now_ns();
	t->ppid = parent_of(pid);
	t->rescue_slot = rescue_slot_new();
	char comm[64];
	command_of(pid, comm, sizeof comm);
	t->stats_id = stats_process_new(pid, t->ppid, comm);
	t->threads = threads_state_new();
	t->memory = memory_state_new();
	t->symbols = symbols_state_new();
	t->xol = xol_state_new();
	t->breakpoints = breakpoints_state_new();
	t->launchring = launchring_state_new();
	t->tallies = tallies_state_new();
	t->retfast = retfast_state_new();
	t->probes = probes_state_new();
	t->gputime = gputime_state_new();
	t->kernels = kernels_state_new();
	t->hit = hit_state_new();
	t->pystack = pystack_state_new();
	t->stack_capture = stack_capture_state_new();
	t->torch = torch_state_new();
	if (!t->threads || !t->memory || !t->symbols || !t->xol || !t->breakpoints || !t->launchring || !t->tallies ||
	    !t->retfast || !t->probes || !t->gputime || !t->kernels || !t->hit || !t->pystack || !t->stack_capture || !t->torch ||
	    t->rescue_slot < 0 || t->stats_id < 0) {
		tracee_free(t);
		return -ENOMEM;
	}
	tracees.list[tracees.n_list++] = t;
	*out = t;
	return 0;
}

struct tracee *tracee_of_pid(pid_t pid)
{
	for (uint32_t i = 0; i < tracees.n_list; i++)
		if (tracees.list[i]->pid == pid)
			return tracees.list[i];
	return NULL;
}

struct tracee *tracee_owner(pid_t tid)
{
	for (uint32_t i = 0; i < tracees.n_list; i++)
		if (threads_find_in(tracees.list[i]->threads, tid))
			return tracees.list[i];
	return NULL;
}

struct tracee *tracee_next(uint32_t *it)
{
	return *it < tracees.n_list ? tracees.list[(*it)++] : NULL;
}

void tracee_close(struct tracee *t)
{
	if (!t)
		return;
	stats_process_ended(t->stats_id, t->exited && !t->term_signal, t->exit_status, t->term_signal);
	for (uint32_t i = 0; i < tracees.n_list; i++)
		if (tracees.list[i] == t) {
			memmove(&tracees.list[i], &tracees.list[i + 1], (--tracees.n_list - i) * sizeof tracees.list[0]);
			break;
		}
	tracee_free(t);
}

int tracee_live_count(void)
{
	int n = 0;
	for (uint32_t i = 0; i < tracees.n_list; i++)
		n += threads_count_all(tracees.list[i]) > 0;
	return n;
}

void tracee_set_dispatcher(void (*d)(const struct trace_stop *e, uint64_t now))
{
	tracees.dispatch = d;
}

void tracee_resume(struct thread *t, int sig)
{
	if (ptrace(PTRACE_CONT, t->tid, 0, (void *)(long)sig) == 0)
		t->state = TS_RUNNING;
	/* ESRCH: it died under us; its exit is reported by waitpid. */
}

void tracee_note_stop(struct thread *t, const struct trace_stop *e)
{
	arch_regs_t r;
	/* Its thread pointer, once: calls the call stub records name their thread by it. */
	if (!t->thread_pointer && !t->guest && arch_get_regs(t->tid, &r) == 0)
		t->thread_pointer = arch_thread_pointer(&r);
	t->state = TS_STOPPED;
	t->stop_event = (uint8_t)e->event;
	t->group_stopped = e->event == TE_GROUP_STOP;
}

void tracee_release(struct tracee *p, struct thread *t)
{
	if (p->stopping_world && t->want_stop)
		return;
	if (t->group_stopped) {
		if (ptrace(PTRACE_LISTEN, t->tid, 0, 0) == 0)
			t->state = TS_LISTENING;
		return;
	}
	int sig = t->pending_sig;
	t->pending_sig = 0;
	tracee_resume(t, sig);
	for (int n = 1; t->deferred && n <= 64; n++)
		if (t->deferred & (1ull << (n - 1))) {
			t->deferred &= ~(1ull << (n - 1));
			syscall(SYS_tgkill, p->pid, t->tid, n);
		}
}

/* ---- exits ---------------------------------------------------------------------------- */

bool tracee_thread_vanished(pid_t tid)
{
	return syscall(SYS_tkill, tid, 0) < 0 && errno == ESRCH;
}

/* A thread gone (most end without an exit stop: exit_watch.c): the returns its last calls
 * recorded in the return stub's table, which the other threads keep in memory, read before its
 * calls in flight are forgotten. */
static void forget_calls(struct tracee *p, struct thread *t)
{
	bool recorded = false;
	for (uint32_t i = 0; i < t->depth && !recorded; i++)
		recorded = t->frames[i].rec >= 0;
	if (recorded && threads_count_all(p) > 1)
		hit_drain(p, now_ns(), HIT_DRAIN_RECORDS);
	hit_forget_frames(p, t, 0);
}

void tracee_forget_vanished_threads(struct tracee *p)
{
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(p, &it));)
		if (t->state != TS_STOPPED && tracee_thread_vanished(t->tid)) {
			log_debug("thread %d vanished", t->tid);
			forget_calls(p, t);
			threads_remove(p, t->tid);
		}
}

void tracee_on_exit(struct tracee *p, const struct trace_stop *e)
{
	struct thread *gone = threads_find(p, e->tid);
	if (gone && !gone->guest)
		p->exited_threads_cpu += gone->cpu_ns;
	if (gone)
		forget_calls(p, gone);	/* calls that will never return */
	if (e->tid == p->pid) {
		p->exited = true;
		if (e->event == TE_EXITED) {
			p->exit_status = e->code;
		} else {
			p->term_signal = e->sig;
			p->exit_status = 128 + e->sig;
		}
		/* Its figures say so now: the first process is closed only at the session's end. */
		stats_process_ended(p->stats_id, !p->term_signal, p->exit_status, p->term_signal);
		log_debug("%d ended (status %d)", p->pid, p->exit_status);
	}
	threads_remove(p, e->tid);
}

/* ---- one thread to a trap of ours ------------------------------------------------------- */

/* A stop on the way that is not ours: the program's signal, kept for later (and any it
 * already owed resent then: standard signals do not queue twice anyway). */
static void keep_signal(struct thread *t, int sig)
{
	if (!t->pending_sig)
		t->pending_sig = sig;
	else if (sig != t->pending_sig && sig <= 64)
		t->deferred |= 1ull << (sig - 1);
}

/* The next stop of t: 0, -ESRCH once it ended (a program that died meanwhile is never waited on
 * forever: reap.h), or another -errno. */
static int next_stop(struct tracee *p, struct thread *t, struct trace_stop *e)
{
	for (;;) {
		pid_t w = event_wait(t->tid, 0, e);
		if (w == -EINTR) {
			if (reap_after_interrupted_wait(p, t->tid, tracer_stop_signal()))
				return -ESRCH;
			continue;
		}
		if (w < 0)
			return (int)w;
		if (event_is_end(e)) {
			tracee_on_exit(p, e);
			return -ESRCH;
		}
		return 0;
	}
}

int tracee_run_to_trap(struct tracee *p, struct thread *t, uint64_t trap_addr, arch_regs_t *r)
{
	int foreign = 0;
	struct trace_stop e;
	if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
		return -errno;
	int err;
	while ((err = next_stop(p, t, &e)) == 0) {
		if (e.event == TE_SIGNAL && e.sig == SIGTRAP && arch_get_regs(t->tid, r) == 0 &&
		    arch_breakpoint_addr(r) == trap_addr) {
			tracee_note_stop(t, &e);
			return 0;
		}
		struct bp *b = e.event == TE_SIGNAL && e.sig == SIGTRAP ? bp_find(p, arch_breakpoint_addr(r))
								 : NULL;
		if (b && b->armed && b->slot) {
			/* A probe of ours inside the called function (dlopen runs the dynamic linker's
			 * hook): the displaced instructions run out of line, uncounted; the call is
			 * gputop's, not the program's. */
			arch_set_pc(r, b->slot);
			if (arch_set_regs(t->tid, r) < 0 || ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
				return -ESRCH;
			continue;
		}
		if (e.event == TE_SIGNAL && ++foreign > 64)
			return -EFAULT;	/* a fault that repeats: this thread cannot get there */
		if (e.event == TE_SIGNAL)
			keep_signal(t, e.sig);	/* a signal for the program arrived first */
		if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
			return -errno;
	}
	return err;
}

/* A signal that ends the process is on its way to the thread (a seccomp filter's SIGSYS, a
 * SIGKILL): /proc/PID/task/TID/status, its pending sets. */
static bool fatal_signal_pending(struct tracee *p, pid_t tid)
{
	char path[64], line[128];
	snprintf(path, sizeof path, "/proc/%d/task/%d/status", p->pid, tid);
	FILE *f = fopen(path, "re");
	unsigned long long set, fatal = (1ull << (SIGKILL - 1)) | (1ull << (SIGSYS - 1));
	bool pending = false;
	if (!f)
		return true;	/* gone already */
	while (fgets(line, sizeof line, f))
		if ((sscanf(line, "SigPnd: %llx", &set) == 1 || sscanf(line, "ShdPnd: %llx", &set) == 1) &&
		    (set & fatal))
			pending = true;
	fclose(f);
	return pending;
}

int tracee_run_syscall(struct tracee *p, struct thread *t, uint64_t exit_pc, arch_regs_t *r)
{
	struct trace_stop e;
	int foreign = 0;
	if (ptrace(PTRACE_SYSCALL, t->tid, 0, 0) < 0)
		return -errno;
	int err;
	while ((err = next_stop(p, t, &e)) == 0) {
		struct bp *b = e.event == TE_SIGNAL && e.sig == SIGTRAP && arch_get_regs(t->tid, r) == 0
				       ? bp_find(p, arch_breakpoint_addr(r)) : NULL;
		if (b && b->armed && b->slot) {
			/* A probe of ours inside a called function (dlopen runs the dynamic linker's
			 * hook): as in tracee_run_to_trap. */
			arch_set_pc(r, b->slot);
			if (arch_set_regs(t->tid, r) < 0 || ptrace(PTRACE_SYSCALL, t->tid, 0, 0) < 0)
				return -ESRCH;
			continue;
		}
		/* A system call stop (PTRACE_O_TRACESYSGOOD: SIGTRAP | 0x80). struct
		 * ptrace_syscall_info (linux/ptrace.h; glibc's headers may lack it) begins with
		 * its op: 1 at the entry stop, 2 at the exit stop. */
		uint8_t info[128] = { 0 };
		bool syscall_stop = e.event == TE_SIGNAL && e.sig == (SIGTRAP | 0x80);
		if (syscall_stop &&
		    ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, sizeof info, info) > 0 && info[0] == 2 &&
		    (!exit_pc || (arch_get_regs(t->tid, r) == 0 && arch_pc(r) == exit_pc))) {
			if (fatal_signal_pending(p, t->tid)) {
				/* The call killed it (a seccomp filter's SIGSYS): let it die, and say so
				 * when its end is seen. */
				if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
					return -ESRCH;
				continue;
			}
			tracee_note_stop(t, &e);
			return arch_get_regs(t->tid, r) < 0 ? -ESRCH : 0;
		}
		if (e.event == TE_SIGNAL && !syscall_stop) {
			if (++foreign > 64)
				return -EFAULT;
			keep_signal(t, e.sig);
		}
		if (ptrace(PTRACE_SYSCALL, t->tid, 0, 0) < 0)
			return -errno;
	}
	return err;
}

/* ---- every thread stopped --------------------------------------------------------------- */

int tracee_dispatch_pending(void)
{
	int n = 0;
	struct trace_stop e;
	for (pid_t tid; (tid = event_wait(-1, WNOHANG, &e)) > 0; n++)
		tracees.dispatch(&e, now_ns());
	return n;
}

static int wait_all_stopped_until(struct tracee *p, uint64_t deadline_ns);

void tracee_hold(struct thread *t)
{
	t->want_stop = true;
	if (t->state != TS_STOPPED)
		ptrace(PTRACE_INTERRUPT, t->tid, 0, 0);
}

/* A vfork's child before its exec (a guest: it runs in the process's memory) is not held: its
 * parent thread waits for it beyond any interrupt, and would never stop if it were. It only
 * makes system calls until it execs or ends, which lets its parent stop. */
int tracee_stop_world_within(struct tracee *p, uint64_t limit_ns)
{
	uint32_t it = 0;
	p->stopping_world = true;
	for (struct thread *t; (t = threads_iter(p, &it));) {
		t->want_stop = false;
		if (!t->guest)
			tracee_hold(t);
	}
	return wait_all_stopped_until(p, limit_ns ? now_ns() + limit_ns : 0);
}

int tracee_stop_world(struct tracee *p)
{
	return tracee_stop_world_within(p, 0);
}

void tracee_release_world(struct tracee *p)
{
	uint32_t it = 0;
	p->stopping_world = false;
	for (struct thread *t; (t = threads_iter(p, &it));) {
		t->want_stop = false;
		if (t->state == TS_STOPPED)
			tracee_release(p, t);
	}
}

int tracee_wait_all_stopped(struct tracee *p)
{
	return wait_all_stopped_until(p, 0);
}

static int wait_all_stopped_until(struct tracee *p, uint64_t deadline_ns)
{
	for (;;) {
		bool all = true;
		uint32_t it = 0;
		for (struct thread *t; (t = threads_iter(p, &it));)
			if (t->state != TS_STOPPED && !t->guest)
				all = false;
		if (all)
			return threads_count_all(p) ? 0 : -ESRCH;
		struct trace_stop e;
		pid_t tid = event_wait(-1, 0, &e);
		if (tid == -EINTR) {
			/* The tick: a thread we wait for that no longer exists at all will never
			 * report; never wait for it forever. One not stopped yet is asked again (an
			 * interrupt is idempotent): a thread let go by a path that did not know a
			 * world stop was under way would otherwise run on, and the stopped ones,
			 * which it may wait for, with it, forever. */
			tracee_forget_vanished_threads(p);
			if (deadline_ns && now_ns() >= deadline_ns)
				return -ETIMEDOUT;
			it = 0;
			for (struct thread *t; (t = threads_iter(p, &it));)
				if (t->want_stop)
					tracee_hold(t);
			continue;
		}
		if (tid < 0)
			return (int)tid;
		tracees.dispatch(&e, now_ns());
	}
}

/* ---- CPU time ------------------------------------------------------------------------------- */

/* First field of /proc/PID/task/TID/schedstat, in ns; the last figure read once it is gone. */
uint64_t tracee_thread_cpu_ns(struct tracee *p, struct thread *t)
{
	char path[64], buf[128];
	snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", p->pid, t->tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			uint64_t v = strtoull(buf, NULL, 10);
			if (v > t->cpu_ns)
				t->cpu_ns = v;
		}
	}
	return t->cpu_ns;
}

uint64_t tracee_cpu_ns(struct tracee *p)
{
	uint64_t sum = p->exited_threads_cpu;
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(p, &it));)
		if (!t->guest)
			sum += tracee_thread_cpu_ns(p, t);
	return sum;
}
