/* tracer.c — the event loop over waitpid(__WALL) and the stop dispatcher: thread creation and
 * exit, signals (passed on unchanged; only our own SIGTRAPs are swallowed, by trap.c),
 * group-stops (PTRACE_LISTEN, so kill -STOP/-CONT and Ctrl-Z behave), fork/vfork (children.c
 * cleans the child of our breakpoints), exec (the new image is probed again), and the program's
 * CPU time. Getting hold of the program is attach.c's, letting it go detach.c's. The UI never
 * calls into this file. */
#define _GNU_SOURCE
#include "tracer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "budget.h"
#include "clock.h"
#include "hit.h"
#include "launchring.h"
#include "log.h"
#include "probes.h"
#include "reap.h"
#include "rescue.h"
#include "retfast.h"
#include "session_state.h"
#include "stats.h"
#include "threads.h"
#include "xol.h"

#define SPIN_US_DEFAULT 30	/* measured on the H100 host: a stop 22 -> 15 us */

pid_t tracer_pid;		/* thread group being traced */
bool tracer_launched;
static bool exited;
static int exit_status, term_signal;
bool tracer_stopping_world;	/* detaching: threads that stop are kept stopped */
static bool no_cuda_timeout;
uint64_t tracer_stops;		/* every stop at a breakpoint of ours */
/* CPU time of threads gone, so the sum never goes back */
static uint64_t exited_threads_cpu;

void tracer_resume(struct thread *t, int sig)
{
	if (ptrace(PTRACE_CONT, t->tid, 0, (void *)(long)sig) == 0)
		t->state = TS_RUNNING;
	/* ESRCH: it died under us; its exit is reported by waitpid. */
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Resumes t the way its stop requires, unless the world is being stopped. */
void tracer_release(struct thread *t)
{
	if (tracer_stopping_world && t->want_stop)
		return;
	if (t->group_stopped) {
		if (ptrace(PTRACE_LISTEN, t->tid, 0, 0) == 0)
			t->state = TS_LISTENING;
		return;
	}
	int sig = t->pending_sig;
	t->pending_sig = 0;
	tracer_resume(t, sig);
	for (int n = 1; t->deferred && n <= 64; n++)
		if (t->deferred & (1ull << (n - 1))) {
			t->deferred &= ~(1ull << (n - 1));
			syscall(SYS_tgkill, tracer_pid, t->tid, n);
		}
}

/* ---- exits ---------------------------------------------------------------------------- */

/* No thread of that id exists any more, not even as a zombie whose exit we have yet to read. */
static bool thread_vanished(pid_t tid)
{
	return syscall(SYS_tkill, tid, 0) < 0 && errno == ESRCH;
}

static void on_exit_status(pid_t tid, int status);

/* Threads in the table that vanished without an exit report we could read (see
 * thread_vanished): their calls in flight will never return. */
static void forget_vanished_threads(void)
{
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(&it));)
		if (t->state != TS_STOPPED && thread_vanished(t->tid)) {
			log_debug("thread %d vanished", t->tid);
			hit_forget_frames(t, 0);
			threads_remove(t->tid);
		}
}

static void on_exit_status(pid_t tid, int status)
{
	struct thread *gone = threads_find(tid);
	if (gone && !gone->guest)
		exited_threads_cpu += gone->cpu_ns;
	if (gone)
		hit_forget_frames(gone, 0);	/* calls that will never return */
	if (tid == tracer_pid) {
		exited = true;
		if (WIFEXITED(status)) {
			exit_status = WEXITSTATUS(status);
		} else {
			term_signal = WTERMSIG(status);
			exit_status = 128 + term_signal;
		}
	}
	threads_remove(tid);
}

/* ---- exec ------------------------------------------------------------------------------- */

static void on_exec(struct thread *t)
{
	unsigned long former = 0;
	ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &former);
	if (t->guest) {
		/* A vfork child ran exec: it has its own memory now, without our breakpoints. */
		ptrace(PTRACE_DETACH, t->tid, 0, 0);
		threads_remove(t->tid);
		return;
	}
	/* Every other thread is gone and the exec'ing one now has the group's id. The old image
	 * took breakpoints and trampoline page with it: nothing to restore, everything to redo. */
	uint32_t it = 0;
	for (struct thread *o; (o = threads_iter(&it));)
		if (o->tid != tracer_pid && !o->guest)
			threads_remove(o->tid);
	if (t->tid != tracer_pid) {
		threads_remove(t->tid);
		t = threads_add(tracer_pid);
	}
	t->depth = 0;
	t->state = TS_STOPPED;
	probes_reset();
	xol_forget();
	retfast_forget();
	launchring_forget();
	hit_reset();
	rescue_forget_all();
	log_info("%d ran exec: probing the new image", tracer_pid);
	if (tracer_settle_after_exec(t) < 0 || tracer_setup_image(t) < 0)
		log_warn("the new image of %d is not traced", tracer_pid);
	rescue_watchdog_stop();	/* it holds the old image's /proc/PID/mem */
	rescue_watchdog_start(tracer_pid);
	tracer_release(t);
}

/* ---- the stop dispatcher ---------------------------------------------------------------- */

static void on_stop(struct thread *t, int status, uint64_t now)
{
	int sig = WSTOPSIG(status);
	int event = status >> 16;
	unsigned long msg = 0;

	t->state = TS_STOPPED;
	t->stop_event = (uint8_t)event;
	t->group_stopped = event == PTRACE_EVENT_STOP && is_stop_signal(sig);
	switch (event) {
	case 0:	/* signal-delivery-stop */
		if (sig == SIGTRAP && tracer_on_trap(t, now))
			return;
		t->pending_sig = sig;	/* the program's own signal: deliver it unchanged */
		tracer_release(t);
		return;
	case PTRACE_EVENT_STOP:
		/* A group-stop stays stopped until SIGCONT (tracer_release listens); otherwise it
		 * is PTRACE_INTERRUPT, or a new thread's first stop. */
		tracer_release(t);
		return;
	case PTRACE_EVENT_CLONE:
		/* The new thread's own stops may have come first (waitpid reports the newest tracee
		 * first): if it has even exited and been reaped since, adding it now would make a
		 * thread that never reports, and a detach that waits for it forever. */
		if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg) == 0 && !thread_vanished((pid_t)msg)) {
			struct thread *n = threads_add((pid_t)msg);
			if (n && t->guest)
				n->guest = true;
			if (n && tracer_stopping_world)
				n->want_stop = true;
		}
		tracer_release(t);
		return;
	case PTRACE_EVENT_FORK:
		/* Clean the child now, while this thread's calls in flight are as they were when
		 * it forked (see tracer_clean_child); it is let go at its own first stop. */
		if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg) == 0 &&
		    !tracer_shares_memory((pid_t)msg))
			tracer_clean_child((pid_t)msg);
		tracer_release(t);
		return;
	case PTRACE_EVENT_EXEC:
		on_exec(t);
		return;
	case PTRACE_EVENT_EXIT:
		/* The thread's last CPU figure and the last returns the stub recorded, while its
		 * memory and /proc entry are still there. */
		tracer_program_cpu_ns();
		hit_collect_returns(now);
		hit_drain_launches(tracer_pid);
		hit_forget_frames(t, 0);	/* its calls in flight never return */
		tracer_release(t);
		return;
	default:	/* fork/vfork events: the child is handled when it reports */
		tracer_release(t);
		return;
	}
}

static void dispatch(pid_t tid, int status, uint64_t now)
{
	if (tid == rescue_watchdog_pid())
		return;	/* our own child, not the program's */
	struct thread *t = threads_find(tid);
	if (!t && !(t = tracer_adopt(tid, status)))
		return;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		on_exit_status(tid, status);
		return;
	}
	if (WIFSTOPPED(status))
		on_stop(t, status, now);
}

/* ---- for xol.c: run one thread to a trap of ours ---------------------------------------- */

int tracer_run_to_trap(struct thread *t, uint64_t trap_addr, arch_regs_t *r)
{
	int status, foreign = 0;
	if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
		return -errno;
	for (;;) {
		pid_t w = waitpid(t->tid, &status, __WALL);
		if (w < 0) {
			int err = errno;
			/* Issue 17 (reap.c): a program that died meanwhile is never waited on forever. */
			if (err == EINTR && reap_after_interrupted_wait(tracer_pid, t->tid, tracer_stop_signal))
				return -ESRCH;
			if (err == EINTR)
				continue;
			return -err;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			on_exit_status(t->tid, status);
			return -ESRCH;
		}
		int sig = WSTOPSIG(status), event = status >> 16;
		if (event == 0 && sig == SIGTRAP && arch_get_regs(t->tid, r) == 0 &&
		    arch_breakpoint_addr(r) == trap_addr) {
			t->state = TS_STOPPED;
			t->stop_event = 0;
			return 0;
		}
		/* munmap of the page holding the gadget: the trap after it is fetched from a page
		 * that is gone, a SIGSEGV right there. Ours, and as good as the trap. */
		if (event == 0 && sig == SIGSEGV && arch_get_regs(t->tid, r) == 0 && arch_pc(r) == trap_addr) {
			arch_set_pc(r, trap_addr + arch_breakpoint_len);
			t->state = TS_STOPPED;
			t->stop_event = 0;
			return 0;
		}
		if (event == 0 && ++foreign > 64)
			return -EFAULT;	/* a fault that repeats: this thread cannot get there */
		if (event == 0) {
			/* A signal for the program arrived first: keep it for later, and resend any
			 * it already owed (standard signals do not queue twice anyway). */
			if (!t->pending_sig)
				t->pending_sig = sig;
			else if (sig != t->pending_sig && sig <= 64)
				t->deferred |= 1ull << (sig - 1);
		}
		if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)
			return -errno;
	}
}

/* ---- waiting for every thread --------------------------------------------------------------- */

/* Waits until every thread in the table has reported a stop. */
int tracer_wait_all_stopped(void)
{
	for (;;) {
		bool all = true;
		uint32_t it = 0;
		for (struct thread *t; (t = threads_iter(&it));)
			if (t->state != TS_STOPPED)
				all = false;
		if (all)
			return threads_count_all() ? 0 : -ESRCH;
		int status;
		pid_t tid = waitpid(-1, &status, __WALL);
		if (tid < 0) {
			if (errno == EINTR) {
				/* The tick: a thread we wait for that no longer exists at all will
				 * never report; never wait for it forever. */
				forget_vanished_threads();
				continue;
			}
			return -errno;
		}
		dispatch(tid, status, now_ns());
	}
}

/* ---- the program's CPU time ----------------------------------------------------------------- */

/* CPU time of one thread (first field of /proc/PID/task/TID/schedstat, in ns); the last
 * figure read once the thread is gone. */
uint64_t tracer_thread_cpu_ns(struct thread *t)
{
	char path[64], buf[128];
	snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", tracer_pid, t->tid);
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

/* CPU time of all the program's threads, those gone included. */
uint64_t tracer_program_cpu_ns(void)
{
	uint64_t sum = exited_threads_cpu;
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(&it));)
		if (!t->guest)
			sum += tracer_thread_cpu_ns(t);
	return sum;
}

/* ---- the loop --------------------------------------------------------------------------- */

bool tracer_exited(int *status, int *sig)
{
	if (exited) {
		*status = exit_status;
		*sig = term_signal;
	}
	return exited;
}

bool tracer_timed_out_without_cuda(void)
{
	return no_cuda_timeout;
}

static void housekeeping(void)
{
	hit_collect_returns(now_ns());	/* returns of threads that have not stopped since */
	hit_drain_launches(tracer_pid);
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		stats_set_tracer_cpu((uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
				     (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u);
	forget_vanished_threads();
	if (threads_count())
		stats_set_threads(threads_count());	/* the last count stays once it ended */
}

/* The next stop of any thread. A call's return, or the next call, often comes within a few
 * microseconds: polling for that long first spares the tracer a sleep and a wake-up, which
 * on an idle many-core host costs more than the poll (GPUTOP_SPIN_US, default below). */
static pid_t wait_event(int *status)
{
	static long spin_ns = -1;
	if (spin_ns < 0) {
		/* Only where a core can be spared: on two cores the poll takes the program's. */
		const char *e = getenv("GPUTOP_SPIN_US");
		spin_ns = (e ? atol(e) : sysconf(_SC_NPROCESSORS_ONLN) >= 4 ? SPIN_US_DEFAULT : 0) * 1000;
	}
	if (spin_ns > 0) {
		uint64_t until = now_ns() + (uint64_t)spin_ns;
		do {
			pid_t tid = waitpid(-1, status, __WALL | WNOHANG);
			if (tid != 0)
				return tid;
		} while (now_ns() < until);
	}
	return waitpid(-1, status, __WALL);
}

/* Launch mode, detached because the terminal signalled the whole foreground process group
 * (^C, ^\): the program got that signal too. Wait for it, as the shell would have
 * without gputop, so that gputop ends with it and exits with its status. A signal from
 * kill(1) ends the wait. */
static void wait_for_launched(void)
{
	int status;
	tracer_stop_signal = 0;
	log_info("waiting for %d, which got the same signal from the terminal", tracer_pid);
	for (;;) {
		pid_t w = waitpid(tracer_pid, &status, 0);
		if (w == tracer_pid && (WIFEXITED(status) || WIFSIGNALED(status))) {
			on_exit_status(tracer_pid, status);
			return;
		}
		if (w < 0 && errno != EINTR)
			return;
		if ((tracer_stop_signal && !tracer_stop_from_terminal) ||
		    session_take_request() != REQ_NONE)
			return;	/* kill(1), or q in the TUI: stop waiting */
	}
}

int tracer_loop(double timeout_s, bool need_cuda)
{
	uint64_t start = now_ns(), last_house = 0, last_drain = 0;
	/* Beyond ~30 years (e.g. -n 9223372036854775807), never: the conversion would overflow. */
	uint64_t deadline = timeout_s > 0 && timeout_s < 1e9 ? start + (uint64_t)(timeout_s * 1e9) : 0;
	bool killing = false;

	while (threads_count_all() > 0) {
		uint64_t now = now_ns();
		if (now - last_house > 100000000u) {
			housekeeping();
			last_house = last_drain = now;
		} else if (now - last_drain >= LR_DRAIN_NS) {
			hit_drain_launches(tracer_pid);
			last_drain = now;
		}
		enum session_request req = session_take_request();
		if (tracer_stop_signal) {
			log_info("%s: detaching from %d", strsignal(tracer_stop_signal),
				 tracer_pid);
			tracer_stop_signal = 0;
			req = REQ_DETACH;
		}
		if (deadline && now >= deadline) {
			if (need_cuda && !probes_cuda_seen())
				no_cuda_timeout = true;
			req = REQ_DETACH;
		}
		if (req == REQ_DETACH) {
			housekeeping();
			budget_finish(now_ns(), tracer_stops);
			int err = tracer_detach();
			if (tracer_launched && !exited && tracer_stop_from_terminal)
				wait_for_launched();
			return err;
		}
		budget_poll(now, tracer_stops);
		if (req == REQ_KILL && !killing) {
			kill(tracer_pid, SIGKILL);
			killing = true;
		}
		int status;
		pid_t tid = wait_event(&status);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				break;
			log_error("waitpid: %s", strerror(errno));
			return -errno;
		}
		dispatch(tid, status, now_ns());
	}
	housekeeping();
	budget_finish(now_ns(), tracer_stops);
	return 0;
}
