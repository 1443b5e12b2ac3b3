/* attach.c — getting hold of the program: seizing every thread of a running one, or launching
 * one and following it through its exec; settling a thread after an exec and setting up an image
 * (trampoline page, probes); bringing every thread to a stop where code can be run in one; and
 * tracer_start, which lets the program run. Its stops from then on are tracer.c's; letting it
 * go is detach.c's. */
#define _GNU_SOURCE
#include "tracer_internal.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "budget.h"
#include "clock.h"
#include "config.h"
#include "dump_take.h"
#include "exit_watch.h"
#include "hit.h"
#include "hit_drain.h"
#include "kernels.h"
#include "log.h"
#include "memory.h"
#include "probes.h"
#include "rescue.h"
#include "retfast.h"
#include "seccomp_watch.h"
#include "session_state.h"
#include "stats.h"
#include "symbols.h"
#include "procfs.h"
#include "threads.h"
#include "xol.h"

#define PTRACE_OPTIONS TRACER_PTRACE_OPTIONS

static int ptrace_errno(long r)
{
	return r < 0 ? -errno : 0;
}

/* ---- attach and launch ------------------------------------------------------------------ */

static int seize(struct tracee *p, pid_t tid)
{
	if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)PTRACE_OPTIONS) < 0)
		return -errno;
	struct thread *t = threads_add(p, tid);
	if (!t)
		return -ENOMEM;
	t->want_stop = true;
	return ptrace_errno(ptrace(PTRACE_INTERRUPT, tid, 0, 0));
}

/* tracer_internal.h's: here, at the bottom of the tracer's files that use it. */
struct tracer_session tracer = { .spin_ns = -1 };

uint64_t tracer_next_attach_due(void)
{
	uint64_t ended = tracer.stop_ended_ns, held = tracer.stop_ns;
	return ended && held < 1000000000u ? ended + 2 * held : 0;
}

int tracer_attach(pid_t pid)
{
	struct tracee *p;
	int err = tracee_open(pid, false, &p);
	if (err < 0)
		return err;
	probes_prepare(p);	/* the slow part, while it runs */
	tracer.stop_began_ns = now_ns();
	/* Hold every thread as it reports, until tracer_start. */
	p->stopping_world = true;
	err = seize(p, pid);
	if (err < 0) {
		threads_clear(p);
		return err;
	}
	/* Threads may be created while we attach: re-read the list until it holds no stranger
	 * (clones of seized threads are seized by the kernel through PTRACE_O_TRACECLONE). */
	for (bool again = true; again;) {
		again = false;
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/task", pid);
		DIR *d = opendir(path);
		if (!d)
			return -ESRCH;
		for (struct dirent *e; (e = readdir(d));) {
			pid_t tid = (pid_t)atoi(e->d_name);
			if (tid <= 0 || threads_find(p, tid))
				continue;
			if (seize(p, tid) == 0)
				again = true;
		}
		closedir(d);
	}
	return tracee_wait_all_stopped(p);
}

int tracer_launch(pid_t child, int exec_status_fd, int *child_errno)
{
	struct trace_stop e;
	struct tracee *p;
	int err = tracee_open(child, true, &p);
	if (err < 0)
		return err;
	*child_errno = 0;
	/* The child stopped itself before exec; seize it, wake it, and wait for the exec. */
	pid_t w;
	while ((w = event_wait(child, WUNTRACED, &e)) == -EINTR)
		;	/* the tick timer */
	if (w < 0 || e.event != TE_SIGNAL)
		return -ECHILD;
	if (ptrace(PTRACE_SEIZE, child, 0, (void *)(long)PTRACE_OPTIONS) < 0)
		return -errno;
	struct thread *t = threads_add(p, child);
	if (!t)
		return -ENOMEM;
	kill(child, SIGCONT);
	for (;;) {
		pid_t w = event_wait(child, 0, &e);
		if (w == -EINTR)
			continue;
		if (w < 0)
			return (int)w;
		if (event_is_end(&e)) {
			threads_remove(p, child);
			if (read(exec_status_fd, child_errno, sizeof *child_errno) != sizeof *child_errno)
				*child_errno = 0;
			return -ENOEXEC;
		}
		tracee_note_stop(t, &e);
		if (e.event == TE_EXEC)
			return tracer_settle_after_exec(t);
		if (e.event == TE_GROUP_STOP || e.event == TE_EVENT_STOP || e.sig == SIGCONT || e.sig == SIGSTOP)
			tracee_resume(t, 0);	/* our own SIGSTOP/SIGCONT handshake */
		else
			tracee_resume(t, e.event == TE_SIGNAL ? e.sig : 0);
	}
}

/* ---- a new image ---------------------------------------------------------------------------- */

static uint64_t program_entry(pid_t p)
{
	char path[64];
	uint64_t aux[2], entry = 0;
	snprintf(path, sizeof path, "/proc/%d/auxv", p);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (read(fd, aux, sizeof aux) == sizeof aux && aux[0] != AT_NULL)
		if (aux[0] == AT_ENTRY)
			entry = aux[1];
	close(fd);
	return entry;
}

/* At the exec event stop, execve has not returned yet: its return value will overwrite the
 * return register when the thread goes on, which would spoil an injected system call. The
 * thread is let finish it up to its system-call-exit stop (PTRACE_SYSCALL; its registers are
 * final there, at the new image's first instruction). Not a single-step: a gputop killed
 * meanwhile would leave the thread a trace trap to die of; from a system call stop it just
 * goes on. */
int tracer_settle_after_exec(struct thread *t)
{
	struct trace_stop e;
	if (ptrace(PTRACE_SYSCALL, t->tid, 0, 0) < 0)
		return -errno;
	for (;;) {
		pid_t w = event_wait(t->tid, 0, &e);
		if (w == -EINTR)
			continue;
		if (w < 0)
			return (int)w;
		if (event_is_end(&e))
			return -ESRCH;
		if (e.event == TE_SIGNAL && e.sig == (SIGTRAP | 0x80)) {
			tracee_note_stop(t, &e);
			return 0;
		}
		if (e.event == TE_SIGNAL)
			t->pending_sig = e.sig;
		if (ptrace(PTRACE_SYSCALL, t->tid, 0, 0) < 0)
			return -errno;
	}
}

/* Maps the trampoline page and probes what is loaded. Every thread is stopped. */
/* What the stubs recorded and counted so far: before a CUDA graph's capture begins or ends, or
 * an executable graph is made anew or destroyed (the launches counted ran its nodes until now). */
static void count_records(struct tracee *p, uint64_t now)
{
	hit_drain(p, now, HIT_DRAIN_WHOLE);
}

int tracer_setup_image(struct tracee *p, struct thread *t)
{
	int err;
	if ((err = mem_open(p)) < 0) {
		log_error("cannot open /proc/%d/mem: %s", p->pid, strerror(-err));
		return err;
	}
	uint64_t t0 = now_ns();
	if ((err = sym_open(p)) < 0)
		return err;
	log_debug("%d: modules reported in %.1f ms", p->pid, (double)(now_ns() - t0) / 1e6);
	/* The watchdog first: whatever gputop writes from here on, a gputop killed now leaves it
	 * to the watchdog to take back (a runtime launch's int3 planted before the watchdog was
	 * there stayed, and killed the program at its next launch). */
	rescue_set_target(p->rescue_slot, mem_fd(p), 0);
	rescue_watchdog_start(p->rescue_slot, p->pid);
	if (config.no_int3)	/* libwatch.c compares later mappings with these */
		p->maps_hash = proc_exec_maps_hash(p->pid);
	uint64_t entry = program_entry(p->pid);
	xol_set_runner(tracee_run_to_trap, tracee_run_syscall);
	graphs_set_catch_up(count_records);
	if (!entry || (err = xol_init(p, t, entry)) < 0) {
		log_error("cannot map the trampoline page into %d: %s", p->pid,
			  strerror(entry ? -err : ENOENT));
		return entry ? err : -ENOENT;
	}
	rescue_set_target(p->rescue_slot, mem_fd(p), xol_trampoline(p));
	uint64_t lookup_table;
	uint32_t lookup_entries;
	uint64_t lookup = xol_return_lookup(p, &lookup_table, &lookup_entries);
	rescue_set_lookup(p->rescue_slot, lookup, lookup_table, lookup_entries);
	if ((err = retfast_init(p, t)) < 0)	/* without it, every return traps: slower, as exact */
		log_warn("returns will stop the program: no record table (%s)", strerror(-err));
	t0 = now_ns();
	err = probes_refresh(p, t);
	hit_quiet_launches(p);
	log_debug("%d: probes planted in %.1f ms", p->pid, (double)(now_ns() - t0) / 1e6);
	seccomp_watch_review(p, now_ns());	/* may its stubs park: every thread held, looked at */
	return err;
}

/* ---- every thread held where code can run in one -------------------------------------------- */

/* A stop where the thread's registers are final, so that code can be run in it and its
 * registers put back: a signal-delivery-stop, or PTRACE_EVENT_STOP (but not a group-stop:
 * running it would end its stop). Not the stop of a fork, clone or exec event: the system call
 * has not returned yet, and when it does it writes its result over the return register; glibc's pthread_create,
 * seeing clone3 "fail", would start the same thread a second time, on the same stack. */
static bool injectable(const struct thread *t)
{
	return !t->guest && t->state == TS_STOPPED && !t->group_stopped &&
	       (t->stop_event == TE_SIGNAL || t->stop_event == TE_EVENT_STOP);
}

struct thread *tracer_injectable_thread(struct tracee *p)
{
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(p, &it));)
		if (injectable(t))
			return t;
	return NULL;
}

/* Threads held at a clone or fork event stop (inside the system call) are let finish it: an
 * interrupt queued first stops them again as they return to user space, registers final.
 * (A vfork parent is not: it waits in the kernel until its child, which we hold, lets go.) */
int tracer_settle_event_stops(struct tracee *p)
{
	bool any = false;
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(p, &it));) {
		if (t->state != TS_STOPPED ||
		    (t->stop_event != TE_CLONE && t->stop_event != TE_FORK))
			continue;
		t->want_stop = true;
		if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) == 0)
			tracee_resume(t, 0);
		any = true;
	}
	return any ? tracee_wait_all_stopped(p) : 0;
}

/* ---- start ---------------------------------------------------------------------------------- */

/* Every thread stopped, the image set up: lets the process run. */
static void start_running(struct tracee *p)
{
	char command[256];
	proc_command(p->pid, command, sizeof command);	/* what it runs now */
	stats_process_set_command(p->stats_id, command);
	struct proc_job job;
	proc_job(p->pid, &job);
	stats_process_set_rank(p->stats_id, job.rank, job.local_rank);
	stats_process_set_job_id(p->stats_id, job.id);
	exit_watch_start(p);
	if (probes_cuda_seen(p))
		session_set_cuda_seen();
	tracee_release_world(p);
	stats_set_threads(p->stats_id, threads_count(p));
	if (tracer.stop_began_ns) {	/* an attach's stop */
		tracer.stop_ended_ns = now_ns();
		tracer.stop_ns = tracer.stop_ended_ns - tracer.stop_began_ns;
		tracer.stop_began_ns = 0;
		dump_note_held(tracer.job, p, tracer.stop_ns);
	}
	kernels_scan_pending(p, p->pid);	/* the handles' values, read while it runs */
}

/* Jumps that wait for a thread to leave a function's first bytes (probes.h): the world runs a
 * millisecond and is stopped again, INSIDE_ROUNDS times at most; those still refused then take
 * an int3. */
#define INSIDE_ROUNDS 5
static struct thread *plant_waiting_jumps(struct tracee *p, struct thread *first)
{
	for (int round = 1; first && probes_inside_left(p) > 0; round++) {
		if (round <= INSIDE_ROUNDS) {
			tracee_release_world(p);
			struct timespec nap = { 0, 1000000 };
			nanosleep(&nap, NULL);
			if (tracee_stop_world(p) < 0 || tracer_settle_event_stops(p) < 0)
				return NULL;
			first = tracer_injectable_thread(p);
		}
		if (first)
			probes_retry_inside(p, first, round > INSIDE_ROUNDS);
	}
	return first;
}

int tracer_start(struct tracee *p, bool was_launched, double max_overhead_pct)
{
	p->set_up = true;
	if (tracer_settle_event_stops(p) < 0)
		return -ESRCH;
	struct thread *first = tracer_injectable_thread(p);
	if (!first) {
		log_error("every thread of %d is stopped by a signal: continue it (kill -CONT %d) "
			  "and try again", p->pid, p->pid);
		return -EAGAIN;
	}
	probes_defer_inside(p, true);
	int err = tracer_setup_image(p, first);
	if (err == 0 && !(first = plant_waiting_jumps(p, first)))
		err = threads_count_all(p) ? -EAGAIN : -ESRCH;
	probes_defer_inside(p, false);
	if (err < 0)
		return err;
	uint64_t cpu0 = tracee_thread_cpu_ns(p, first);
	uint64_t cost = xol_calibrate(p, first);
	/* The kernel charges the trap and the stop to the stopped thread: its CPU time grows
	 * with every stop, which the budget must not take for the program's own work. */
	uint64_t stop_cpu = (tracee_thread_cpu_ns(p, first) - cpu0) / (2 * XOL_CALIBRATION_STOPS);	/* two stops each */
	log_debug("a stop costs %" PRIu64 " ns (subtracted from every call's time)", cost);
	tracer.stop_cost_ns = cost;
	hit_init(p, cost, was_launched ? 0 : -1);
	budget_init(max_overhead_pct, cost, stop_cpu, tracee_cpu_ns);
	start_running(p);
	return 0;
}

void tracer_init_hit(struct tracee *p, int default_device)
{
	hit_init(p, tracer.stop_cost_ns, default_device);
}

int tracer_start_followed(struct tracee *p, int default_device)
{
	p->set_up = true;	/* tried: a process that cannot be probed is not tried again */
	if (tracer_settle_event_stops(p) < 0)
		return -ESRCH;
	struct thread *first = tracer_injectable_thread(p);
	int err = first ? tracer_setup_image(p, first) : -EAGAIN;
	if (err == 0) {
		hit_init(p, tracer.stop_cost_ns, default_device);
		log_info("probing %d (%s)", p->pid, probes_cuda_seen(p) ? "CUDA loaded" : "no CUDA yet");
	}
	start_running(p);
	return err;
}

int tracer_start_another(struct tracee *p)
{
	return tracer_start_followed(p, -1);
}
