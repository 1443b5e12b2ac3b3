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

#include "account.h"
#include "budget.h"
#include "clock.h"
#include "config.h"
#include "exit_watch.h"
#include "gputime.h"
#include "hit.h"
#include "hit_drain.h"
#include "job_watch.h"
#include "launchring.h"
#include "memory.h"
#include "log.h"
#include "probes.h"
#include "stack_capture.h"
#include "reap.h"
#include "rescue.h"
#include "rescue_cycle.h"
#include "retfast.h"
#include "session_state.h"
#include "stats.h"
#include "procfs.h"
#include "threads.h"
#include "xol.h"

#define SPIN_US_DEFAULT 30	/* measured on the H100 host: a stop 22 -> 15 us */

/* ---- exec ------------------------------------------------------------------------------- */

static void on_exec(struct tracee *p, struct thread *t)
{
	unsigned long former = 0;
	ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &former);
	if (t->guest) {
		/* A vfork child ran exec: it has its own memory now, without our breakpoints; a
		 * process of its own, followed or let go. */
		if (!(t = follow_guest_exec(p, t, &p)))
			return;	/* p: from here on, the new process */
	}
	/* Every other thread is gone and the exec'ing one now has the group's id. The old image
	 * took breakpoints and trampoline page with it: nothing to restore, everything to redo. */
	uint32_t it = 0;
	for (struct thread *o; (o = threads_iter(p, &it));)
		if (o->tid != p->pid && !o->guest)
			threads_remove(p, o->tid);
	if (t->tid != p->pid) {
		threads_remove(p, t->tid);
		t = threads_add(p, p->pid);
	}
	t->depth = 0;
	t->state = TS_STOPPED;
	probes_reset(p);
	xol_forget(p);
	retfast_forget(p);
	launchring_forget(p);
	hit_reset(p);
	gputime_forget(p);
	stack_capture_forget(p);
	account_gone(p);	/* what the consumers kept of the old image */
	rescue_forget_all(p->rescue_slot);
	rescue_watchdog_stop(p->rescue_slot);	/* it holds the old image's /proc/PID/mem */
	mem_close(p);
	char command[256];
	proc_command(p->pid, command, sizeof command);
	stats_process_set_command(p->stats_id, command);
	struct proc_job job;
	proc_job(p->pid, &job);
	stats_process_set_rank(p->stats_id, job.rank, job.local_rank);
	stats_process_set_job_id(p->stats_id, job.id);
	if (p->followed) {
		/* Probed now if it links CUDA, else watched until CUDA shows up (follow.c). */
		p->set_up = false;
		if (!follow_wants_setup_at_exec(p)) {
			tracee_release(p, t);
			return;
		}
		p->set_up = true;
		tracer_init_hit(p, 0);
	}
	log_info("%d ran exec: probing the new image", p->pid);
	if (tracer_settle_after_exec(t) < 0 || tracer_setup_image(p, t) < 0)
		log_warn("the new image of %d is not traced", p->pid);
	else
		exit_watch_start(p);
	tracee_release(p, t);
}

/* ---- the stop dispatcher ---------------------------------------------------------------- */

/* A stop of t, a thread of p. */
static void on_stop(struct tracee *p, struct thread *t, const struct trace_stop *e, uint64_t now)
{
	unsigned long msg = 0;

	tracee_note_stop(t, e);
	exit_watch_first_stop(p, t);
	if (e->event == TE_EVENT_STOP && follow_first_stop(p, t))
		return;
	switch (e->event) {
	case TE_SIGNAL:
		if (e->sig == SIGTRAP && tracer_on_trap(p, t, now))
			return;
		t->pending_sig = e->sig;	/* the program's own signal: deliver it unchanged */
		tracee_release(p, t);
		return;
	case TE_EVENT_STOP:
		if (park_on_stop(p, t, now))
			return;
		/* fall through */
	case TE_GROUP_STOP:
		/* A group-stop stays stopped until SIGCONT (tracee_release listens); otherwise it
		 * is PTRACE_INTERRUPT, or a new thread's first stop. */
		tracee_release(p, t);
		return;
	case TE_CLONE:
		/* The new thread's own stops may have come first (waitpid reports the newest tracee
		 * first): if it has even exited and been reaped since, adding it now would make a
		 * thread that never reports, and a detach that waits for it forever. */
		if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg) == 0 && !tracee_thread_vanished((pid_t)msg)) {
			struct thread *n = threads_add(p, (pid_t)msg);
			if (n && t->guest)
				n->guest = true;
			/* Asked, not only marked: it may have run since a first stop of its own
			 * (a thread blocked on its creator, held here, never stops by itself). */
			if (n && p->stopping_world && !n->want_stop && !n->guest)
				tracee_hold(n);
		}
		tracee_release(p, t);
		return;
	case TE_FORK:
		/* Clean the child now, while this thread's calls in flight are as they were when
		 * it forked (see tracer_clean_child); followed, or let go at its own first stop. */
		if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg) == 0 &&
		    !tracer_shares_memory(p, (pid_t)msg)) {
			if (!tracee_owner((pid_t)msg))
				follow_fork(p, (pid_t)msg, NULL);
		}
		tracee_release(p, t);
		return;
	case TE_EXEC:
		on_exec(p, t);
		return;
	case TE_EXIT:
		/* The thread's last CPU figure and the last returns the stub recorded, while its
		 * memory and /proc entry are still there. */
		tracee_cpu_ns(p);
		/* Every thread's exit reads the tallies whole; the group leader's (which an
		 * exit_group brings too) or the last thread's for the last time: the area may be
		 * gone next. */
		hit_drain(p, now, t->tid == p->pid || threads_count_all(p) <= 1 ? HIT_DRAIN_LAST : HIT_DRAIN_WHOLE);
		gputime_drain(p);	/* the GPU records its exit flushed */
		hit_forget_frames(p, t, 0);	/* its calls in flight never return */
		exit_watch_on_exit(p, t);
		tracee_release(p, t);
		return;
	default:	/* vfork events: the child is handled when it reports */
		tracee_release(p, t);
		return;
	}
}

/* The stop goes to the process it belongs to, found by its thread (or adopted: a new one). */
static void dispatch(const struct trace_stop *e, uint64_t now)
{
	if (rescue_is_watchdog(e->tid))
		return;	/* our own child, not the program's */
	struct tracee *p = tracee_owner(e->tid);
	struct thread *t = p ? threads_find(p, e->tid) : tracer_adopt(e, &p);
	if (t && event_is_end(e))
		tracee_on_exit(p, e);
	else if (t)
		on_stop(p, t, e, now);
}

/* ---- the loop --------------------------------------------------------------------------- */

/* GPUTOP_DEBUG: a step of the loop that held gputop 20 ms or more, said with its time (what
 * makes a start, an attach or an exit slow). */
static void slow_note(uint64_t since, const char *what, pid_t tid)
{
	uint64_t ns = now_ns() - since;
	if (config.debug && ns >= 20000000u)
		log_debug("%s (%d) took %.1f ms", what, tid, (double)ns / 1e6);
}

void tracer_init(void)
{
	tracee_set_dispatcher(dispatch);
}

/* Before the loop, the first process taken. */
static struct tracee *first_process(void)
{
	uint32_t it = 0;
	if (!tracer.root)
		tracer.root = tracee_next(&it);
	return tracer.root;
}

bool tracer_exited(int *status, int *sig)
{
	first_process();
	if (tracer.root && tracer.root->exited) {
		*status = tracer.root->exit_status;
		*sig = tracer.root->term_signal;
	}
	return tracer.root && tracer.root->exited;
}

bool tracer_timed_out_without_cuda(void)
{
	first_process();
	return tracer.root && tracer.root->no_cuda_timeout;
}

/* A stop of a traced thread, or an end, waits to be taken (peeked at, left for the loop). */
#define STOPS_BEFORE_DRAIN 256	/* in a row at most: a storm of stops still lets rings drain */
static bool stop_waiting(void)
{
	siginfo_t si = { 0 };
	return waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) == 0 && si.si_pid != 0;
}

/* Calls the stubs recorded and launches in the rings, of every probed process, each once a
 * round. With `yield`, it returns after any process once a stop waits, and the next call goes
 * on with those not drained yet this round: a thread waits in its stop, nobody waits for a
 * drain, and a drain of a process whose memory is hard to read (a starved gputop, the
 * program's own mmap and munmap in 16 threads: 0.2 s a read) must not hold the stops of all
 * the others. Whether a ring of one drained fills fast (drained every LR_DRAIN_HOT_NS then,
 * rather than LR_DRAIN_NS). */
static bool drain_all(uint64_t now, bool yield)
{
	uint32_t it = 0;
	bool filling = false, drained = false;
	if (!tracer.drain_round)
		tracer.drain_round = 1;	/* a new tracee's 0 is never a round */
	for (struct tracee *p; (p = tracee_next(&it));) {
		if (!p->set_up || p->drain_round == tracer.drain_round)
			continue;
		if (yield && drained && stop_waiting())
			return filling;
		p->drain_round = tracer.drain_round;
		hit_drain(p, now, HIT_DRAIN_TICK);	/* calls recorded whole: no stop brings them */
		park_poll(p, now);	/* threads the stubs hold for gputop */
		gputime_drain(p);	/* --gpu-time's records */
		filling |= launchring_filling(p, now);
		drained = true;
	}
	tracer.drain_round++;
	return filling;
}

/* Between drains, while parks keep coming: only the parks. */
static void poll_parks(uint64_t now)
{
	uint32_t it = 0;
	for (struct tracee *p; (p = tracee_next(&it));)
		if (p->set_up)
			park_poll(p, now);
}

/* Processes that ended are let go of (their figures stay); the first one is kept to the end,
 * for its exit status. */
static void close_ended(void)
{
	uint32_t it = 0;
	for (struct tracee *p; (p = tracee_next(&it));) {
		if (p == tracer.root || threads_count_all(p) > 0)
			continue;
		if (p->exited)
			log_info("%d %s %d", p->pid, p->term_signal ? "was killed by signal" : "exited with status",
				 p->term_signal ? p->term_signal : p->exit_status);
		tracee_close(p);
		it = 0;	/* the list moved */
	}
}

static void housekeeping(void)
{
	drain_all(now_ns(), true);	/* returns of threads that have not stopped since */
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		stats_set_tracer_cpu((uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
				     (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u);
	uint32_t it = 0;
	for (struct tracee *p; (p = tracee_next(&it));) {
		tracee_forget_vanished_threads(p);
		if (threads_count(p))	/* the last count stays once it ended */
			stats_set_threads(p->stats_id, threads_count(p));
		stack_capture_sample_launches(p);
		libwatch_tick(p);
	}
	job_watch_tick(tracer.job_live, now_ns());	/* the live picture of the job, when one is due */
	follow_tick();
	close_ended();
	rescue_cycle_guard_tick();	/* a guard killed is replaced */
}

void tracer_set_job(struct job *j)
{
	tracer.job = j;
}

void tracer_set_job_live(struct job_live *l)
{
	tracer.job_live = l;
}

bool tracer_traces(pid_t pid)
{
	return tracee_of_pid(pid) != NULL;
}

/* The traced processes served (their stops, drains and parks) until `until`, as the loop would. */
static void serve_until(uint64_t until)
{
	uint64_t last_drain = 0;
	for (uint64_t now; (now = now_ns()) < until && tracee_live_count() > 0;) {
		if (now - last_drain >= LR_DRAIN_NS) {
			drain_all(now, false);
			last_drain = now;
		} else if (park_due(now)) {
			poll_parks(now);
		}
		tracer_tick_every(park_hot(now) ? PARK_POLL_NS : LR_DRAIN_NS);
		struct trace_stop e;
		pid_t tid = event_wait(-1, 0, &e);	/* the tick ends the wait */
		if (tid > 0)
			dispatch(&e, now_ns());
		else if (tid != -EINTR)
			break;
	}
}

void tracer_space_attach(void)
{
	uint64_t due = tracer_next_attach_due();
	if (due > now_ns())
		serve_until(due);
}

/* Detaches from every process still traced, the first one last (its detach may wait for it,
 * below). Returns the first error. */
int tracer_detach_all(void)
{
	int err = 0;
	uint32_t it = 0;
	first_process();
	for (struct tracee *p; (p = tracee_next(&it));) {
		if (p == tracer.root)
			continue;
		if (threads_count_all(p) > 0) {
			int e = tracer_detach(p);
			err = err ? err : e;
		}
	}
	if (tracer.root && threads_count_all(tracer.root) > 0) {
		int e = tracer_detach(tracer.root);
		err = err ? err : e;
	}
	return err;
}

/* The next stop of any thread. A call's return, or the next call, often comes within a few
 * microseconds: polling for that long first spares the tracer a sleep and a wake-up, which
 * on an idle many-core host costs more than the poll (GPUTOP_SPIN_US, default below). Only
 * while stops come, though: with every probe a stub, a wait is ended by the tick (100 a
 * second), and a poll before each cost the tracer 50 ms a second for nothing (gputop's CPU
 * 122 -> 72 ms/s in a PyTorch loop on an H200, scripts/gpu-cpu). */
#define SPIN_AFTER_STOP_NS 2000000ull
static pid_t wait_event(struct trace_stop *e)
{
	if (tracer.spin_ns < 0) {
		/* Only where a core can be spared: on two cores the poll takes the program's. */
		tracer.spin_ns = (config.spin_us >= 0 ? config.spin_us
					       : sysconf(_SC_NPROCESSORS_ONLN) >= 4 ? SPIN_US_DEFAULT : 0) * 1000;
	}
	uint64_t now = now_ns();
	if (tracer.spin_ns > 0 && now - tracer.last_stop_ns < SPIN_AFTER_STOP_NS) {
		uint64_t until = now + (uint64_t)tracer.spin_ns;
		do {
			pid_t tid = event_wait(-1, WNOHANG, e);
			if (tid > 0)
				tracer.last_stop_ns = now_ns();
			if (tid != 0)
				return tid;
		} while (now_ns() < until);
	}
	pid_t tid = event_wait(-1, 0, e);
	if (tid > 0)
		tracer.last_stop_ns = now_ns();
	return tid;
}

/* Launch mode, detached because the terminal signalled the whole foreground process group
 * (^C, ^\): the program got that signal too. Wait for it, as the shell would have
 * without gputop, so that gputop ends with it and exits with its status. A signal from
 * kill(1) ends the wait. */
static void wait_for_launched(struct tracee *p)
{
	struct trace_stop e;
	tracer_stop_clear();
	log_info("waiting for %d, which got the same signal from the terminal", p->pid);
	for (;;) {
		pid_t w = event_wait(p->pid, 0, &e);
		if (w == p->pid && event_is_end(&e)) {
			tracee_on_exit(p, &e);
			return;
		}
		if (w < 0 && w != -EINTR)
			return;
		if ((tracer_stop_signal() && !tracer_stop_from_terminal()) ||
		    session_take_request() != REQ_NONE)
			return;	/* kill(1), or q in the TUI: stop waiting */
	}
}

void tracer_on_no_cuda(uint64_t after_ns, void (*say)(pid_t pid))
{
	tracer.no_cuda_after_ns = after_ns;
	tracer.no_cuda_say = say;
}

/* tracer_on_no_cuda's word, once, when it is due. */
static void no_cuda_news(uint64_t start, uint64_t now)
{
	struct session_status st;

	if (!tracer.no_cuda_say || now - start < tracer.no_cuda_after_ns)
		return;
	session_status_get(&st);
	if (!st.cuda_seen && !st.ended)
		tracer.no_cuda_say(tracer.root->pid);
	tracer.no_cuda_say = NULL;
}

static int loop(double timeout_s, bool need_cuda)
{
	uint64_t start = now_ns(), last_house = 0, last_drain = 0, drain_every = LR_DRAIN_NS;
	first_process();
	/* Beyond ~30 years (e.g. -n 9223372036854775807), never: the conversion would overflow. */
	uint64_t deadline = timeout_s > 0 && timeout_s < 1e9 ? start + (uint64_t)(timeout_s * 1e9) : 0;
	bool killing = false;
	/* Stops first: threads wait in a stop, nobody waits for a drain. Under a starved gputop a
	 * drain of 8 processes took seconds (their memory read behind their own mmap and munmap),
	 * and one stop served between two drains held 8 programs 82 s where they take 0.4 s
	 * untraced. When a drain is due and a stop waits, the stops are served until none comes
	 * before the tick (or STOPS_BEFORE_DRAIN of them): one look a burst, none a stop. */
	bool stops_first = false;
	int stops_in_row = 0;	/* stops served since the last drain or housekeeping */

	while (tracee_live_count() > 0) {
		uint64_t now = now_ns();
		bool house_due = now - last_house > 100000000u, drain_due = now - last_drain >= drain_every;
		if (stops_in_row >= STOPS_BEFORE_DRAIN)
			stops_first = false;
		else if (!stops_first && (house_due || drain_due))
			stops_first = stop_waiting();
		if (stops_first) {
			/* the drain waits for the burst's end */
		} else if (house_due) {
			housekeeping();
			no_cuda_news(start, now);
			slow_note(now, "housekeeping", 0);
			last_house = last_drain = now;
			stops_in_row = 0;
		} else if (drain_due) {
			drain_every = drain_all(now, true) ? LR_DRAIN_HOT_NS : LR_DRAIN_NS;
			slow_note(now, "a drain", 0);
			last_drain = now;
			stops_in_row = 0;
		} else if (park_due(now)) {
			poll_parks(now);
		}
		tracer_tick_every(park_hot(now) ? PARK_POLL_NS : drain_every);
		enum session_request req = session_take_request();
		if (tracer_stop_signal()) {
			log_info("%s: detaching from %d", strsignal(tracer_stop_signal()),
				 tracer.root->pid);
			tracer_stop_clear();
			req = REQ_DETACH;
		}
		if ((deadline && now >= deadline) || req == REQ_COUNT_DONE) {
			if (need_cuda && !probes_cuda_seen(tracer.root))
				tracer.root->no_cuda_timeout = true;
			req = REQ_DETACH;
		}
		if (req == REQ_DETACH) {
			gputime_stop_all();	/* its library flushes and unloads itself first */
			housekeeping();
			budget_finish(tracer.root, now_ns());
			int err = tracer_detach_all();
			if (tracer.root->launched && !tracer.root->exited && tracer_stop_from_terminal())
				wait_for_launched(tracer.root);
			return err;
		}
		budget_poll(tracer.root, now);
		if (req == REQ_KILL && !killing) {
			uint32_t it = 0;
			for (struct tracee *p; (p = tracee_next(&it));)
				kill(p->pid, SIGKILL);
			killing = true;
		}
		struct trace_stop e;
		pid_t tid = wait_event(&e);
		if (tid == -EINTR) {
			stops_first = false;	/* the tick came first: the burst is over */
			continue;
		}
		if (tid == -ECHILD)
			break;
		if (tid < 0) {
			log_error("waitpid: %s", strerror((int)-tid));
			return (int)tid;
		}
		uint64_t t0 = now_ns();
		dispatch(&e, t0);
		slow_note(t0, "a stop", e.tid);
		stops_in_row++;
	}
	housekeeping();
	budget_finish(tracer.root, now_ns());
	return 0;
}

int tracer_loop(double timeout_s, bool need_cuda)
{
	int err = loop(timeout_s, need_cuda);
	/* The first process's watchdog says goodbye: its program ended or was let go. */
	if (tracer.root)
		rescue_watchdog_stop(tracer.root->rescue_slot);
	return err;
}
