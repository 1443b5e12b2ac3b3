/* tracer.c — the event loop over waitpid(__WALL): thread creation and exit, signals (passed
 * on unchanged; only our own SIGTRAPs are swallowed), group-stops (PTRACE_LISTEN, so
 * kill -STOP/-CONT and Ctrl-Z behave), fork/vfork (the child is cleaned of our breakpoints and
 * let go), exec (the new image is probed again), dlopen (the dynamic linker's hook), and the
 * detach that puts every byte back. The UI never calls into this file. */
#define _GNU_SOURCE
#include "tracer.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "breakpoints.h"
#include "budget.h"
#include "cuda_api.h"
#include "clock.h"
#include "hit.h"
#include "log.h"
#include "memory.h"
#include "probes.h"
#include "rescue.h"
#include "session_internal.h"
#include "stats.h"
#include "symbols.h"
#include "threads.h"
#include "xol.h"

#define SPIN_US_DEFAULT 30	/* measured on the H100 host: a stop 22 -> 15 us */
#define PTRACE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC)

static pid_t pid;		/* thread group being traced */
static bool launched;
static bool exited;
static int exit_status, term_signal;
static bool stopping_world;	/* detaching: threads that stop are kept stopped */
static bool no_cuda_timeout;
static volatile sig_atomic_t stop_signal;	/* SIGINT/SIGTERM/SIGHUP/SIGQUIT received */
static volatile sig_atomic_t stop_from_terminal;	/* ... sent by the terminal driver */
static pthread_t tracer_thread;
static timer_t tick_timer;
static bool tick_armed;
static uint64_t stops;		/* every stop at a breakpoint of ours */
static uint64_t exited_threads_cpu;
static uint64_t crash_at;	/* GPUTOP_TEST_CRASH=SIG:N, tests only: crash at the Nth stop */
static int crash_signal;	/* CPU time of threads gone, so the sum never goes back */

static uint64_t program_cpu_ns(void);

static int ptrace_errno(long r)
{
	return r < 0 ? -errno : 0;
}

static void resume(struct thread *t, int sig)
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
static void release(struct thread *t)
{
	if (stopping_world && t->want_stop)
		return;
	if (t->group_stopped) {
		if (ptrace(PTRACE_LISTEN, t->tid, 0, 0) == 0)
			t->state = TS_LISTENING;
		return;
	}
	int sig = t->pending_sig;
	t->pending_sig = 0;
	resume(t, sig);
	for (int n = 1; t->deferred && n <= 64; n++)
		if (t->deferred & (1ull << (n - 1))) {
			t->deferred &= ~(1ull << (n - 1));
			syscall(SYS_tgkill, pid, t->tid, n);
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
			for (uint32_t i = 0; i < t->depth; i++)
				rescue_frame_done(t->frames[i].rescue);
			threads_remove(t->tid);
		}
}

static void on_exit_status(pid_t tid, int status)
{
	struct thread *gone = threads_find(tid);
	if (gone && !gone->guest)
		exited_threads_cpu += gone->cpu_ns;
	for (uint32_t i = 0; gone && i < gone->depth; i++)
		rescue_frame_done(gone->frames[i].rescue);	/* calls that will never return */
	if (tid == pid) {
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

/* ---- new processes (fork, vfork, posix_spawn) ------------------------------------------- */

static pid_t tgid_of(pid_t tid)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", tid);
	FILE *f = fopen(path, "re");
	pid_t tgid = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

static bool shares_memory(pid_t child)
{
	long r = syscall(SYS_kcmp, pid, child, KCMP_VM, 0, 0);
	return r == 0;
}

/* Forked children already cleaned (at the parent's fork event, or at their own first stop,
 * whichever came first): a small ring is enough, the two come close together. */
static pid_t cleaned_children[64];
static unsigned cleaned_next;

static bool child_cleaned(pid_t child)
{
	for (size_t i = 0; i < sizeof cleaned_children / sizeof cleaned_children[0]; i++)
		if (cleaned_children[i] == child)
			return true;
	return false;
}

/* A forked child has a copy of our breakpoints and swapped return addresses: put the
 * program's bytes back in its copy. It must happen while the parent is still held at its
 * fork event, or before: once the parent goes on, the call it forked from may return and its
 * frame (where the child's copy of the stack still holds the trampoline) be forgotten. A
 * return address is written back only where the child's slot still holds the trampoline. */
static void clean_child(pid_t child)
{
	char path[64];
	if (child_cleaned(child))
		return;
	cleaned_children[cleaned_next++ % (sizeof cleaned_children / sizeof cleaned_children[0])] = child;
	snprintf(path, sizeof path, "/proc/%d/mem", child);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		log_warn("cannot clean forked child %d of breakpoints: %s", child, strerror(errno));
		return;
	}
	uint32_t it = 0;
	for (struct bp *b; (b = bp_iter(&it));)
		if (b->armed)
			mem_write_fd(fd, b->addr, b->orig, arch_breakpoint_len);
	uint64_t tramp = xol_ready() ? xol_trampoline() : 0, cur;
	it = 0;
	for (struct thread *t; (t = threads_iter(&it));)
		for (uint32_t i = 0; i < t->depth; i++)
			if (pread(fd, &cur, 8, (off_t)t->frames[i].ret_slot) == 8 && cur == tramp)
				mem_write_fd(fd, t->frames[i].ret_slot, &t->frames[i].ret_addr, 8);
	close(fd);
}

/* Cleans a forked child (if not done yet) and lets it go: children are not traced. */
static void release_child(pid_t child)
{
	clean_child(child);
	ptrace(PTRACE_DETACH, child, 0, 0);
}

/* A stop from a tid we do not know: a new thread of ours (its clone event may come later) or
 * a new process. Returns the thread to go on with, or NULL when handled here. */
static struct thread *adopt(pid_t tid, int status)
{
	pid_t tgid = tgid_of(tid);
	if (tgid == pid)
		return threads_add(tid);
	if (WIFSTOPPED(status) && tgid > 0) {
		if (shares_memory(tid)) {
			/* vfork/posix_spawn: it runs in our memory, over our breakpoints, until it
			 * execs; step it through them without counting. */
			struct thread *t = threads_add(tid);
			if (t)
				t->guest = true;
			return t;
		}
		release_child(tid);
	}
	return NULL;
}

/* ---- exec ------------------------------------------------------------------------------- */

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

/* At the exec event stop, execve has not returned yet: its return value will overwrite rax
 * when the thread goes on, which would spoil an injected system call. One single-step lets
 * the syscall finish (and runs the new image's first instruction, as it would anyway). */
static int settle_after_exec(struct thread *t)
{
	int status;
	if (ptrace(PTRACE_SINGLESTEP, t->tid, 0, 0) < 0)
		return -errno;
	for (;;) {
		if (waitpid(t->tid, &status, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!WIFSTOPPED(status))
			return -ESRCH;
		int sig = WSTOPSIG(status);
		if (sig == SIGTRAP && (status >> 16) == 0)
			return 0;
		if ((status >> 16) == 0)
			t->pending_sig = sig;
		if (ptrace(PTRACE_SINGLESTEP, t->tid, 0, 0) < 0)
			return -errno;
	}
}

/* Maps the trampoline page and probes what is loaded. Every thread is stopped. */
static int setup_image(struct thread *t)
{
	int err;
	if ((err = mem_open(pid)) < 0) {
		log_error("cannot open /proc/%d/mem: %s", pid, strerror(-err));
		return err;
	}
	if ((err = sym_open(pid)) < 0)
		return err;
	uint64_t entry = program_entry(pid);
	if (!entry || (err = xol_init(t, entry)) < 0) {
		log_error("cannot map the trampoline page into %d: %s", pid,
			  strerror(entry ? -err : ENOENT));
		return entry ? err : -ENOENT;
	}
	rescue_set_target(mem_fd(), xol_trampoline());
	return probes_refresh(t);
}

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
		if (o->tid != pid && !o->guest)
			threads_remove(o->tid);
	if (t->tid != pid) {
		threads_remove(t->tid);
		t = threads_add(pid);
	}
	t->depth = 0;
	t->state = TS_STOPPED;
	probes_reset();
	xol_forget();
	rescue_forget_all();
	log_info("%d ran exec: probing the new image", pid);
	if (settle_after_exec(t) < 0 || setup_image(t) < 0)
		log_warn("the new image of %d is not traced", pid);
	rescue_watchdog_stop();	/* it holds the old image's /proc/PID/mem */
	rescue_watchdog_start(pid);
	release(t);
}

/* ---- breakpoint hits -------------------------------------------------------------------- */

/* For the robustness tests only: gputop crashing in the middle of a hit. */
static bool crash_in_thread;	/* GPUTOP_TEST_CRASH=thread:N: in another thread of gputop */

static void *crash_thread(void *arg)
{
	raise(SIGSEGV);	/* this thread's: as a crash of the UI thread would be */
	return arg;
}

static void crash_for_test(void)
{
	pthread_t th;
	if (crash_in_thread && pthread_create(&th, NULL, crash_thread, NULL) == 0) {
		pthread_join(th, NULL);	/* the rescue comes to this thread as a signal */
		return;
	}
	if (crash_signal == SIGABRT)
		abort();
	raise(crash_signal ? crash_signal : SIGSEGV);
}

static void crash_test_setup(void)
{
	const char *e = getenv("GPUTOP_TEST_CRASH");
	char name[16];
	unsigned long long n;
	if (!e || sscanf(e, "%15[a-z]:%llu", name, &n) != 2)
		return;
	crash_signal = strcmp(name, "abort") == 0 ? SIGABRT : SIGSEGV;
	crash_in_thread = strcmp(name, "thread") == 0;
	crash_at = n;
}

static bool trap_is_breakpoint(pid_t tid)
{
	siginfo_t si;
	if (ptrace(PTRACE_GETSIGINFO, tid, 0, &si) < 0)
		return false;
	return si.si_code == SI_KERNEL;
}

static void on_rtld_hit(struct thread *t)
{
	/* _dl_debug_state runs before and after each change of the library list; look when the
	 * list is consistent again (r_state == RT_CONSISTENT == 0). */
	uint64_t state_addr = probes_rtld_state_addr();
	int32_t state = 0;
	if (state_addr && mem_read(t->tid, state_addr, &state, sizeof state) == 0 && state != 0)
		return;
	bool had_cuda = probes_cuda_seen();
	probes_refresh(t);
	if (!had_cuda && probes_cuda_seen())
		session_set_cuda_seen();
}

static enum budget_stop budget_kind(int api)
{
	const struct api_spec *s = cuda_api_get(api);
	if (!s)
		return STOP_OTHER;
	return s->op == OP_LAUNCH ? STOP_LAUNCH : s->op == OP_KERNEL_NAME ? STOP_OTHER : STOP_WORK;
}

/* Handles a SIGTRAP stop. Returns false if the trap is not ours (it is then delivered). */
static bool on_trap(struct thread *t, uint64_t now)
{
	arch_regs_t r;
	if (arch_get_regs(t->tid, &r) < 0)
		return true;	/* gone */
	uint64_t addr = arch_breakpoint_addr(&r);

	if (xol_ready() && addr == xol_trampoline()) {
		stats_on_stop();
		stops++;
		int api = hit_return(t, &r, now);
		if (api >= 0)
			arch_set_regs(t->tid, &r);
		if (budget_active())
			budget_on_stop(now_ns() - now, budget_kind(api));
		release(t);
		return true;
	}
	struct bp *b = bp_find(addr);
	if (!b || (b->ambiguous && !trap_is_breakpoint(t->tid)))
		return false;
	if (!b->armed || (stopping_world && t->want_stop)) {
		/* Disarmed since it trapped, or we are detaching: run the program's instruction
		 * again as if the breakpoint had never been there. */
		arch_set_pc(&r, addr);
		arch_set_regs(t->tid, &r);
		release(t);
		return true;
	}
	stats_on_stop();
	stops++;
	if (crash_at && stops >= crash_at)
		crash_for_test();
	struct frame *timed = NULL;
	if (b->kind == BP_RTLD) {
		on_rtld_hit(t);
		arch_set_pc(&r, b->slot);
	} else {
		hit_entry(t, b, &r, &timed);
	}
	arch_set_regs(t->tid, &r);
	if (timed)
		timed->t_entry = now_ns();
	if (budget_active())
		budget_on_stop(now_ns() - now, b->kind == BP_PROBE ? budget_kind(b->api) : STOP_OTHER);
	release(t);
	return true;
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
		if (sig == SIGTRAP && on_trap(t, now))
			return;
		t->pending_sig = sig;	/* the program's own signal: deliver it unchanged */
		release(t);
		return;
	case PTRACE_EVENT_STOP:
		/* A group-stop stays stopped until SIGCONT (release listens); otherwise it is
		 * PTRACE_INTERRUPT, or a new thread's first stop. */
		release(t);
		return;
	case PTRACE_EVENT_CLONE:
		/* The new thread's own stops may have come first (waitpid reports the newest tracee
		 * first): if it has even exited and been reaped since, adding it now would make a
		 * thread that never reports, and a detach that waits for it forever. */
		if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg) == 0 && !thread_vanished((pid_t)msg)) {
			struct thread *n = threads_add((pid_t)msg);
			if (n && t->guest)
				n->guest = true;
			if (n && stopping_world)
				n->want_stop = true;
		}
		release(t);
		return;
	case PTRACE_EVENT_FORK:
		/* Clean the child now, while this thread's calls in flight are as they were when
		 * it forked (see clean_child); it is let go at its own first stop. */
		if (ptrace(PTRACE_GETEVENTMSG, t->tid, 0, &msg) == 0 && !shares_memory((pid_t)msg))
			clean_child((pid_t)msg);
		release(t);
		return;
	case PTRACE_EVENT_EXEC:
		on_exec(t);
		return;
	case PTRACE_EVENT_EXIT:
		program_cpu_ns();	/* the thread's last CPU figure, while /proc still has it */
		release(t);
		return;
	default:	/* fork/vfork events: the child is handled when it reports */
		release(t);
		return;
	}
}

static void dispatch(pid_t tid, int status, uint64_t now)
{
	if (tid == rescue_watchdog_pid())
		return;	/* our own child, not the program's */
	struct thread *t = threads_find(tid);
	if (!t && !(t = adopt(tid, status)))
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
			if (errno == EINTR)
				continue;
			return -errno;
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

static struct thread *injectable_thread(void);
static int settle_event_stops(void);

/* ---- attach and launch ------------------------------------------------------------------ */

/* Waits until every thread in the table has reported a stop. */
static int wait_all_stopped(void)
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

static int seize(pid_t tid)
{
	if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)PTRACE_OPTIONS) < 0)
		return -errno;
	struct thread *t = threads_add(tid);
	if (!t)
		return -ENOMEM;
	t->want_stop = true;
	return ptrace_errno(ptrace(PTRACE_INTERRUPT, tid, 0, 0));
}

int tracer_attach(pid_t p)
{
	pid = p;
	launched = false;
	stopping_world = true;	/* hold every thread as it reports, until tracer_start */
	int err = seize(p);
	if (err < 0) {
		threads_clear();
		return err;
	}
	/* Threads may be created while we attach: re-read the list until it holds no stranger
	 * (clones of seized threads are seized by the kernel through PTRACE_O_TRACECLONE). */
	for (bool again = true; again;) {
		again = false;
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/task", p);
		DIR *d = opendir(path);
		if (!d)
			return -ESRCH;
		for (struct dirent *e; (e = readdir(d));) {
			pid_t tid = (pid_t)atoi(e->d_name);
			if (tid <= 0 || threads_find(tid))
				continue;
			if (seize(tid) == 0)
				again = true;
		}
		closedir(d);
	}
	return wait_all_stopped();
}

int tracer_launch(pid_t child, int exec_status_fd, int *child_errno)
{
	int status;
	pid = child;
	launched = true;
	*child_errno = 0;
	/* The child stopped itself before exec; seize it, wake it, and wait for the exec. */
	pid_t w;
	while ((w = waitpid(child, &status, WUNTRACED)) < 0 && errno == EINTR)
		;	/* the tick timer */
	if (w < 0 || !WIFSTOPPED(status))
		return -ECHILD;
	if (ptrace(PTRACE_SEIZE, child, 0, (void *)(long)PTRACE_OPTIONS) < 0)
		return -errno;
	struct thread *t = threads_add(child);
	if (!t)
		return -ENOMEM;
	kill(child, SIGCONT);
	for (;;) {
		if (waitpid(child, &status, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			threads_remove(child);
			if (read(exec_status_fd, child_errno, sizeof *child_errno) != sizeof *child_errno)
				*child_errno = 0;
			return -ENOEXEC;
		}
		int event = status >> 16, sig = WSTOPSIG(status);
		t->state = TS_STOPPED;
		if (event == PTRACE_EVENT_EXEC)
			return settle_after_exec(t);
		if (event == PTRACE_EVENT_STOP || sig == SIGCONT || sig == SIGSTOP)
			resume(t, 0);	/* our own SIGSTOP/SIGCONT handshake */
		else
			resume(t, event ? 0 : sig);
	}
}

/* CPU time of one thread (first field of /proc/PID/task/TID/schedstat, in ns); the last
 * figure read once the thread is gone. */
static uint64_t thread_cpu_ns(struct thread *t)
{
	char path[64], buf[128];
	snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", pid, t->tid);
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
static uint64_t program_cpu_ns(void)
{
	uint64_t sum = exited_threads_cpu;
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(&it));)
		if (!t->guest)
			sum += thread_cpu_ns(t);
	return sum;
}

int tracer_start(bool was_launched, double max_overhead_pct)
{
	uint32_t it = 0;
	if (settle_event_stops() < 0)
		return -ESRCH;
	struct thread *first = injectable_thread();
	if (!first) {
		log_error("every thread of %d is stopped by a signal: continue it (kill -CONT %d) "
			  "and try again", pid, pid);
		return -EAGAIN;
	}
	int err = setup_image(first);
	if (err < 0)
		return err;
	uint64_t cpu0 = thread_cpu_ns(first);
	uint64_t cost = xol_calibrate(first);
	/* The kernel charges the trap and the stop to the stopped thread: its CPU time grows
	 * with every stop, which the budget must not take for the program's own work. */
	uint64_t stop_cpu = (thread_cpu_ns(first) - cpu0) / XOL_CALIBRATION_STOPS;
	log_debug("a stop costs %" PRIu64 " ns (subtracted from every call's time)", cost);
	hit_init(pid, cost, was_launched ? 0 : -1);
	budget_init(max_overhead_pct, cost, stop_cpu, program_cpu_ns);
	crash_test_setup();
	if (budget_active()) {
		/* The budget reads each thread's CPU time; a thread's last figure can only be read
		 * at its exit stop. Clones inherit the options. */
		it = 0;
		for (struct thread *t; (t = threads_iter(&it));)
			ptrace(PTRACE_SETOPTIONS, t->tid, 0, (void *)(long)(PTRACE_OPTIONS | PTRACE_O_TRACEEXIT));
		it = 0;
	}
	if (probes_cuda_seen())
		session_set_cuda_seen();
	stopping_world = false;
	for (struct thread *t; (t = threads_iter(&it));) {
		t->want_stop = false;
		if (t->state != TS_STOPPED)
			continue;
		release(t);
	}
	stats_set_threads(threads_count());
	return 0;
}

/* ---- detach ----------------------------------------------------------------------------- */

static void restore_thread(struct thread *t)
{
	arch_regs_t r;
	if (arch_get_regs(t->tid, &r) < 0)
		return;
	uint64_t pc = arch_pc(&r);
	if (xol_ready() && pc == xol_trampoline() && t->depth) {
		/* Returned into the trampoline but not trapped yet: finish the return for it. */
		arch_regs_t after = r;
		after.rip += arch_breakpoint_len;	/* as if it had trapped */
		if (hit_return(t, &after, now_ns()) >= 0) {
			arch_set_pc(&r, arch_pc(&after));
			arch_set_regs(t->tid, &r);
		}
	} else {
		uint64_t to = bp_unwind_pc(pc);
		if (to != pc) {
			arch_set_pc(&r, to);
			arch_set_regs(t->tid, &r);
		}
	}
	/* Every swapped return address back; the stack may have been reused only if the call
	 * left by longjmp, so check the slot still holds ours. */
	uint64_t tramp = xol_ready() ? xol_trampoline() : 0;
	for (uint32_t i = 0; i < t->depth; i++) {
		struct frame *f = &t->frames[i];
		uint64_t cur = 0;
		if (mem_read(t->tid, f->ret_slot, &cur, 8) == 0 && cur == tramp)
			mem_write(t->tid, f->ret_slot, &f->ret_addr, 8);
	}
	t->depth = 0;
}

/* A stop where the thread's registers are final, so that code can be run in it and its
 * registers put back: a signal-delivery-stop, or PTRACE_EVENT_STOP (but not a group-stop:
 * running it would end its stop). Not the stop of a fork, clone or exec event: the system call
 * has not returned yet, and when it does it writes its result over rax; glibc's pthread_create,
 * seeing clone3 "fail", would start the same thread a second time, on the same stack. */
static bool injectable(const struct thread *t)
{
	return !t->guest && t->state == TS_STOPPED && !t->group_stopped &&
	       (t->stop_event == 0 || t->stop_event == PTRACE_EVENT_STOP);
}

static struct thread *injectable_thread(void)
{
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(&it));)
		if (injectable(t))
			return t;
	return NULL;
}

/* Threads held at a clone or fork event stop (inside the system call) are let finish it: an
 * interrupt queued first stops them again as they return to user space, registers final.
 * (A vfork parent is not: it waits in the kernel until its child, which we hold, lets go.) */
static int settle_event_stops(void)
{
	bool any = false;
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(&it));) {
		if (t->state != TS_STOPPED ||
		    (t->stop_event != PTRACE_EVENT_CLONE && t->stop_event != PTRACE_EVENT_FORK))
			continue;
		t->want_stop = true;
		if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) == 0)
			resume(t, 0);
		any = true;
	}
	return any ? wait_all_stopped() : 0;
}

/* The thread's own pending signals (not the process's), unblocked ones only, from
 * /proc/PID/task/TID/status; 0 if it cannot be read. */
static uint64_t unblocked_pending(pid_t tid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/task/%d/status", pid, tid);
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
 * trace it: on_trap puts its pc back on the breakpoint (or keeps a SIGTRAP of the program's
 * own to deliver at detach), and the thread is held again. */
static int take_pending_traps(void)
{
	for (int round = 0; round < 4; round++) {
		bool any = false;
		uint32_t it = 0;
		for (struct thread *t; (t = threads_iter(&it));) {
			if (t->state != TS_STOPPED || t->group_stopped || t->pending_sig ||
			    !(unblocked_pending(t->tid) & (1ull << (SIGTRAP - 1))))
				continue;
			t->want_stop = true;
			resume(t, 0);
			any = true;
		}
		if (!any)
			return 0;
		int err = wait_all_stopped();
		if (err < 0)
			return err;
	}
	return 0;
}

int tracer_detach(void)
{
	uint32_t it = 0;
	stopping_world = true;
	for (struct thread *t; (t = threads_iter(&it));) {
		t->want_stop = true;
		if (t->state != TS_STOPPED)
			ptrace(PTRACE_INTERRUPT, t->tid, 0, 0);
	}
	int err = wait_all_stopped();
	if (err == 0)
		err = take_pending_traps();
	if (err == 0)
		err = settle_event_stops();
	if (err == -ESRCH || !threads_count_all())
		return 0;	/* it exited meanwhile */

	int restore_err = bp_disarm_all();
	it = 0;
	for (struct thread *t; (t = threads_iter(&it));)
		if (!t->guest)
			restore_thread(t);
	struct thread *injector = injectable_thread();
	if (xol_ready()) {
		if (injector)
			xol_unmap_all(injector);
		else
			log_warn("every thread is stopped by a signal: the trampoline page (64 KiB, "
				 "never used again) stays mapped in %d", pid);
	}
	it = 0;
	for (struct thread *t; (t = threads_iter(&it));) {
		ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)t->pending_sig);
		threads_remove(t->tid);
	}
	if (restore_err == 0)
		rescue_forget_all();
	mem_close();
	if (restore_err < 0) {
		log_error("could not restore every breakpoint of %d: %s", pid, strerror(-restore_err));
		return restore_err;
	}
	return 0;
}

/* ---- the crash path: plain memory reads and system calls only ----------------------------- */

/* Puts the pc of a thread held in a stop back into the program's code and detaches it. Its
 * stop is a trap of ours only if the kernel says it was an int3 (SI_KERNEL SIGTRAP): at any
 * other stop, a pc just past one of our breakpoints is simply where the out-of-line copy of a
 * one-byte instruction jumped back to. */
static void emergency_release(struct thread *t, uint64_t tramp, int sig)
{
	siginfo_t si;
	arch_regs_t r;
	bool trapped = ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) == 0 && si.si_signo == SIGTRAP &&
		       si.si_code == SI_KERNEL;
	if (arch_get_regs(t->tid, &r) == 0) {
		uint64_t pc = arch_pc(&r), at = arch_breakpoint_addr(&r), to = pc;
		bool ours = false;
		if (trapped && bp_find(at)) {
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
			to = bp_unwind_pc(pc);
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
static void emergency_catch(struct thread *t, uint64_t tramp, uint64_t deadline)
{
	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0)
		return;	/* gone, or a zombie leader: nothing to do */
	for (int rounds = 0; rounds < 8;) {
		int st;
		pid_t w = waitpid(t->tid, &st, __WALL | WNOHANG);
		if (w == 0) {
			if (now_ns() > deadline)
				return;	/* the kernel detaches it when gputop dies */
			struct timespec nap = { 0, 200000 };
			nanosleep(&nap, NULL);
			continue;
		}
		if (w < 0 || !WIFSTOPPED(st))
			return;	/* exited */
		int sig = WSTOPSIG(st), event = st >> 16;
		if (event == 0) {
			emergency_release(t, tramp, sig);	/* a signal-delivery-stop */
			return;
		}
		rounds++;
		if (!(unblocked_pending(t->tid) & (1ull << (SIGTRAP - 1)))) {
			emergency_release(t, tramp, 0);	/* interrupt, group-stop, event */
			return;
		}
		if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0)	/* take the pending SIGTRAP first */
			return;
	}
	emergency_release(t, tramp, 0);
}

/* From the crash handler (rescue.c), after the code and stacks were restored: every thread is
 * brought to a stop, its pc put back into the program's code, and let go. */
static void emergency_detach(void)
{
	uint32_t it = 0;
	uint64_t tramp = xol_ready() ? xol_trampoline() : 0;
	uint64_t deadline = now_ns() + 2000000000u;
	for (struct thread *t; (t = threads_iter(&it));) {
		if (t->state != TS_STOPPED) {
			emergency_catch(t, tramp, deadline);
			continue;
		}
		siginfo_t si;
		bool at_signal = ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) == 0 && (si.si_code >> 8) == 0;
		if (!at_signal && !t->group_stopped &&
		    (unblocked_pending(t->tid) & (1ull << (SIGTRAP - 1))) &&
		    ptrace(PTRACE_CONT, t->tid, 0, 0) == 0) {
			t->state = TS_RUNNING;	/* its trap comes first, then it is caught */
			emergency_catch(t, tramp, deadline);
			continue;
		}
		emergency_release(t, tramp, t->pending_sig);
	}
	/* Stops of threads we never heard of (a new thread whose clone event was not read yet) and
	 * of forked children not cleaned yet (their copy of memory still has our int3s). */
	for (int n = 0; n < 4096 && now_ns() < deadline; n++) {
		int st;
		pid_t w = waitpid(-1, &st, __WALL | WNOHANG);
		if (w <= 0)
			break;
		if (w == rescue_watchdog_pid() || !WIFSTOPPED(st))
			continue;
		struct thread tmp = { .tid = w }, *t = threads_find(w);
		if (!t && !shares_memory(w)) {
			release_child(w);
			continue;
		}
		emergency_release(t ? t : &tmp, tramp, (st >> 16) == 0 ? WSTOPSIG(st) : 0);
	}
}

void tracer_install_crash_handler(void)
{
	rescue_install_crash_handler(emergency_detach);
}

/* ---- the loop --------------------------------------------------------------------------- */

static void on_stop_signal(int sig, siginfo_t *si, void *ctx)
{
	stop_signal = sig;
	/* ^C and ^\ signal the whole foreground process group: in launch mode the program got the
	 * same signal (kill(1) says SI_USER instead). A hangup too, but then nobody is left to
	 * report to. */
	stop_from_terminal = si && si->si_code == SI_KERNEL && sig != SIGHUP;
}

static void on_tick(int sig)
{
	/* Only to interrupt waitpid. */
}

/* The signal state gputop started with, for the program it launches: dispositions of the
 * signals gputop handles itself (a handler becomes SIG_DFL at exec, but an inherited SIG_IGN,
 * as under nohup or in a background job, must stay SIG_IGN) and the signal mask. */
static const int own_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGSEGV, SIGBUS,
				   SIGABRT, SIGFPE, SIGILL };
#define N_OWN_SIGNALS (sizeof own_signals / sizeof own_signals[0])
static bool own_ignored[N_OWN_SIGNALS], rtmin_ignored, signal_state_saved;
static sigset_t original_mask;

static void save_signal_state(void)
{
	struct sigaction old;
	for (size_t i = 0; i < N_OWN_SIGNALS; i++)
		own_ignored[i] = sigaction(own_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN;
	rtmin_ignored = sigaction(SIGRTMIN, NULL, &old) == 0 && old.sa_handler == SIG_IGN;
	sigprocmask(SIG_SETMASK, NULL, &original_mask);
	signal_state_saved = true;
}

void tracer_restore_signal_state(void)
{
	if (!signal_state_saved)
		return;
	for (size_t i = 0; i < N_OWN_SIGNALS; i++)
		signal(own_signals[i], own_ignored[i] ? SIG_IGN : SIG_DFL);
	signal(SIGRTMIN, rtmin_ignored ? SIG_IGN : SIG_DFL);
	sigprocmask(SIG_SETMASK, &original_mask, NULL);
}

static bool was_ignored(int sig)
{
	for (size_t i = 0; i < N_OWN_SIGNALS; i++)
		if (own_signals[i] == sig)
			return own_ignored[i];
	return false;
}

void tracer_install_signal_handlers(void)
{
	struct sigaction sa = { 0 };
	save_signal_state();
	sa.sa_sigaction = on_stop_signal;	/* no SA_RESTART: waitpid returns EINTR */
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	/* SIGTERM always detaches; SIGINT, SIGHUP and SIGQUIT unless gputop was started with them
	 * ignored (nohup, a background job), as every well-behaved Unix tool does. */
	const int detach_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	for (size_t i = 0; i < sizeof detach_signals / sizeof detach_signals[0]; i++)
		if (detach_signals[i] == SIGTERM || !was_ignored(detach_signals[i]))
			sigaction(detach_signals[i], &sa, NULL);
	sa.sa_flags = 0;
	sa.sa_handler = on_tick;
	sigaction(SIGRTMIN, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	tracer_thread = pthread_self();

	/* A tick every 100 ms to this thread, so requests and timeouts are seen while the
	 * program sleeps and nothing else wakes waitpid. */
	struct sigevent sev = { 0 };
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGRTMIN;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &tick_timer) == 0) {
		struct itimerspec its = { { 0, 100000000 }, { 0, 100000000 } };
		timer_settime(tick_timer, 0, &its, NULL);
		tick_armed = true;
	}
}

void tracer_wake(void)
{
	pthread_kill(tracer_thread, SIGRTMIN);
}

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
	stop_signal = 0;
	log_info("waiting for %d, which got the same signal from the terminal", pid);
	for (;;) {
		pid_t w = waitpid(pid, &status, 0);
		if (w == pid && (WIFEXITED(status) || WIFSIGNALED(status))) {
			on_exit_status(pid, status);
			return;
		}
		if (w < 0 && errno != EINTR)
			return;
		if ((stop_signal && !stop_from_terminal) || session_take_request() != REQ_NONE)
			return;	/* kill(1), or q in the TUI: stop waiting */
	}
}

int tracer_loop(double timeout_s, bool need_cuda)
{
	uint64_t start = now_ns(), last_house = 0;
	/* Beyond ~30 years (e.g. -n 9223372036854775807), never: the conversion would overflow. */
	uint64_t deadline = timeout_s > 0 && timeout_s < 1e9 ? start + (uint64_t)(timeout_s * 1e9) : 0;
	bool killing = false;

	while (threads_count_all() > 0) {
		uint64_t now = now_ns();
		if (now - last_house > 100000000u) {
			housekeeping();
			last_house = now;
		}
		enum session_request req = session_take_request();
		if (stop_signal) {
			log_info("%s: detaching from %d", strsignal(stop_signal), pid);
			stop_signal = 0;
			req = REQ_DETACH;
		}
		if (deadline && now >= deadline) {
			if (need_cuda && !probes_cuda_seen())
				no_cuda_timeout = true;
			req = REQ_DETACH;
		}
		if (req == REQ_DETACH) {
			housekeeping();
			budget_finish(now_ns(), stops);
			int err = tracer_detach();
			if (launched && !exited && stop_from_terminal)
				wait_for_launched();
			return err;
		}
		budget_poll(now, stops);
		if (req == REQ_KILL && !killing) {
			kill(pid, SIGKILL);
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
	budget_finish(now_ns(), stops);
	return 0;
}
