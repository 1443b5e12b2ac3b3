/* rescue_cycle.c — the watch for a tracer loop (rescue_cycle.h): the guard, and the same looks
 * made by every watchdog. They use only poll, nanosleep, write, kill and /proc reads: they are
 * forked from a gputop with threads. */
#define _GNU_SOURCE
#include "rescue_cycle.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "tracer_chain.h"

/* Shared by the guard and the watchdogs (a mapping made before any of them is forked). */
struct cycle_shared {
	int seen;	/* the loop was seen: every watchdog puts its program back */
	int said;	/* why gputop is ended was written (once, by whichever came first) */
};

static struct {
	struct cycle_shared *shared;
	pid_t guard_pid;
	int guard_pipe;	/* gputop's end: a byte is goodbye; no reader left (POLLERR) is a dead guard */
	unsigned restarts;
} cycle = { .guard_pipe = -1 };

bool rescue_cycle_seen(void)
{
	return cycle.shared && __atomic_load_n(&cycle.shared->seen, __ATOMIC_ACQUIRE);
}

void rescue_cycle_forked(void)
{
	if (cycle.guard_pipe >= 0)
		close(cycle.guard_pipe);
	cycle.guard_pipe = -1;
}

bool rescue_cycle_is_guard(pid_t pid)
{
	return cycle.guard_pid > 0 && pid == cycle.guard_pid;
}

static char *put_str(char *at, const char *end, const char *s)
{
	while (*s && at < end)
		*at++ = *s++;
	return at;
}

static char *put_num(char *at, const char *end, long v)
{
	char d[24];
	int n = 0;
	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof d);
	while (n && at < end)
		*at++ = d[--n];
	return at;
}

static void say(pid_t gputop, pid_t by)
{
	char comm[32], msg[512], *at = msg, *end = msg + sizeof msg;
	tracer_chain_comm(by, comm, sizeof comm);
	at = put_str(at, end, "gputop: gputop (");
	at = put_num(at, end, gputop);
	at = put_str(at, end, ") is traced by ");
	at = put_num(at, end, by);
	at = put_str(at, end, " (");
	at = put_str(at, end, comm);
	at = put_str(at, end, "), a process gputop traces itself: each would wait for the other for good. "
			      "The traced programs' code is put back and gputop is ended (SIGKILL); they run "
			      "on without it\n");
	if (write(STDERR_FILENO, msg, (size_t)(at - msg)) < 0)
		(void)0;
}

/* The tracer of gputop that gputop traces (through any chain), 0 when there is no loop. */
static pid_t looping_tracer(pid_t gputop)
{
	pid_t by;
	return tracer_chain_loops(gputop, &by) ? by : 0;
}

bool rescue_cycle_look(pid_t gputop)
{
	if (rescue_cycle_seen())
		return true;
	if (!looping_tracer(gputop))
		return false;
	if (cycle.shared)
		__atomic_store_n(&cycle.shared->seen, 1, __ATOMIC_RELEASE);
	return true;
}

/* Of the guard and the watchdogs, the first to end gputop says why; the others end it too (a
 * first one stopped or killed meanwhile must not leave gputop held). */
static bool first_to_say(void)
{
	return !cycle.shared || __atomic_exchange_n(&cycle.shared->said, 1, __ATOMIC_ACQ_REL) == 0;
}

void rescue_cycle_end(pid_t gputop)
{
	pid_t by = looping_tracer(gputop);
	if (!by)
		return;	/* the tracer let go meanwhile */
	if (first_to_say())
		say(gputop, by);
	kill(gputop, SIGKILL);
}

static void guard_main(int pipe_rd, pid_t gputop)
{
	/* Not a child anyone waits for: invisible to terminal signals meant for gputop. */
	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	prctl(PR_SET_NAME, "gputop-guard");	/* told apart in ps from gputop and its watchdogs */
	/* Only its pipe and stderr: a guard started again later would hold the watchdogs' pipes
	 * (their EOF is gputop's death) and gputop's files and sockets. */
	if (pipe_rd > 3)
		close_range(3, (unsigned)pipe_rd - 1, 0);
	close_range((unsigned)pipe_rd + 1, ~0u, 0);
	struct pollfd pf = { .fd = pipe_rd, .events = POLLIN };
	for (;;) {
		int r = poll(&pf, 1, RESCUE_CYCLE_LOOK_MS);
		if (r > 0 || (r < 0 && errno != EINTR))
			_exit(0);	/* gputop ended, or said goodbye */
		if (r == 0 && rescue_cycle_look(gputop))
			break;
	}
	/* The watchdogs look as often: two looks, and every one has put its program back. */
	struct timespec nap = { 0, 2 * RESCUE_CYCLE_LOOK_MS * 1000000L };
	while (nanosleep(&nap, &nap) < 0 && errno == EINTR)
		;
	rescue_cycle_end(gputop);
	_exit(0);
}

int rescue_cycle_guard_start(void)
{
	int fds[2];
	if (!cycle.shared) {
		void *p = mmap(NULL, sizeof *cycle.shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		cycle.shared = p;
	}
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	pid_t gputop = getpid();
	pid_t p = fork();
	if (p < 0) {
		int err = -errno;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (p == 0) {
		close(fds[1]);
		guard_main(fds[0], gputop);
	}
	close(fds[0]);
	cycle.guard_pipe = fds[1];
	cycle.guard_pid = p;
	log_debug("the guard against a tracer loop: %d", (int)p);
	return 0;
}

void rescue_cycle_guard_tick(void)
{
	struct pollfd pf = { .fd = cycle.guard_pipe, .events = 0 };
	if (cycle.guard_pipe < 0 || poll(&pf, 1, 0) <= 0 || !(pf.revents & (POLLERR | POLLHUP)))
		return;
	/* No reader: the guard is gone (killed: it ends on its own only after gputop's end). Its
	 * exit is taken here, so that the loop's waitpid never meets it under a pid no longer the
	 * guard's; the watchdogs looked for the loop meanwhile. */
	pid_t old = cycle.guard_pid;
	close(cycle.guard_pipe);
	cycle.guard_pipe = -1;
	cycle.guard_pid = 0;
	while (waitpid(old, NULL, __WALL) < 0 && errno == EINTR)
		;	/* its files are closed: it is exiting */
	if (cycle.restarts++ < RESCUE_CYCLE_RESTARTS && rescue_cycle_guard_start() == 0)
		log_info("the guard against a tracer loop (%d) ended: another started (%d)", (int)old,
			 (int)cycle.guard_pid);
	else
		log_warn("the guard against a tracer loop (%d) ended; the watchdogs still look for a loop",
			 (int)old);
}

void rescue_cycle_guard_stop(void)
{
	if (cycle.guard_pipe < 0)
		return;
	char bye = 1;	/* a byte, not only EOF: a child forked since may hold the pipe too */
	if (write(cycle.guard_pipe, &bye, 1) < 0)
		(void)0;
	close(cycle.guard_pipe);
	cycle.guard_pipe = -1;
	while (waitpid(cycle.guard_pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	cycle.guard_pid = 0;
}
