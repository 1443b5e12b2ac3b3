/* rescue_cycle.c — the guard against a tracer loop (rescue_cycle.h). The guard process uses only
 * poll, nanosleep, write, kill and /proc reads: it is forked from a gputop with threads. */
#define _GNU_SOURCE
#include "rescue_cycle.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tracer_chain.h"

static struct {
	int *seen;	/* shared with the guard and the watchdogs: the loop was seen */
	pid_t guard_pid;
	int guard_pipe;
} cycle = { .guard_pipe = -1 };

bool rescue_cycle_seen(void)
{
	return cycle.seen && __atomic_load_n(cycle.seen, __ATOMIC_ACQUIRE);
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

static void say_and_end(pid_t gputop, pid_t by)
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
	kill(gputop, SIGKILL);
}

static void guard_main(int pipe_rd, pid_t gputop)
{
	/* Not a child anyone waits for: invisible to terminal signals meant for gputop. */
	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	struct pollfd pf = { .fd = pipe_rd, .events = POLLIN };
	for (;;) {
		int r = poll(&pf, 1, RESCUE_CYCLE_LOOK_MS);
		if (r > 0 || (r < 0 && errno != EINTR))
			_exit(0);	/* gputop ended, or said goodbye */
		pid_t by;
		if (r == 0 && tracer_chain_loops(gputop, &by))
			break;
	}
	__atomic_store_n(cycle.seen, 1, __ATOMIC_RELEASE);
	/* The watchdogs look as often: two looks, and every one has put its program back. */
	struct timespec nap = { 0, 2 * RESCUE_CYCLE_LOOK_MS * 1000000L };
	while (nanosleep(&nap, &nap) < 0 && errno == EINTR)
		;
	pid_t by;
	if (tracer_chain_loops(gputop, &by))
		say_and_end(gputop, by);
	_exit(0);
}

int rescue_cycle_guard_start(void)
{
	int fds[2];
	if (!cycle.seen) {
		void *p = mmap(NULL, sizeof *cycle.seen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		cycle.seen = p;
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
	return 0;
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
