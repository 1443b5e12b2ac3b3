/* ptrace_death.c — what this kernel does to a tracee whose tracer dies while it is stopped,
 * the premise of gputop's promise that a SIGKILLed gputop leaves the program alive. Relied on
 * (exit status 1 if not so): a thread in an event stop (PTRACE_INTERRUPT: PTRACE_EVENT_STOP)
 * runs on without a signal. Reported only: what a signal-delivery stop of SIGTRAP becomes (6.x
 * kernels drop the signal and resume the thread; either way a thread stopped at an int3 of a
 * tracer's would resume after the int3, inside the displaced instruction, which is why gputop
 * keeps int3 out of the steady state). No CUDA, no gputop. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum stop_kind { EVENT_STOP, SIGTRAP_STOP };

/* The tracee: waits for a byte, raises SIGTRAP if told to (as an int3 would), then works a
 * little and exits 7. */
static void tracee_main(int rd)
{
	char c;
	if (read(rd, &c, 1) != 1)
		_exit(2);
	if (c == 't')
		raise(SIGTRAP);
	struct timespec ts = { 0, 20000000 };
	for (int i = 0; i < 5; i++)
		nanosleep(&ts, NULL);
	_exit(7);
}

/* Returns how the tracee ended: exit code, or 128 + signal. */
static int trial(enum stop_kind kind)
{
	int go[2], ready[2];
	if (pipe(go) < 0 || pipe(ready) < 0)
		return -1;
	pid_t prog = fork();
	if (prog == 0) {
		close(go[1]);
		tracee_main(go[0]);
	}
	close(go[0]);
	pid_t tracer = fork();
	if (tracer == 0) {
		/* Seize, bring it to the stop, tell the parent, and wait to be killed. */
		if (ptrace(PTRACE_SEIZE, prog, 0, 0) < 0)
			_exit(3);
		int st;
		if (kind == EVENT_STOP) {
			if (ptrace(PTRACE_INTERRUPT, prog, 0, 0) < 0 || waitpid(prog, &st, __WALL) != prog ||
			    !WIFSTOPPED(st) || (st >> 16) != PTRACE_EVENT_STOP)
				_exit(4);
		} else {
			if (write(go[1], "t", 1) != 1 || waitpid(prog, &st, __WALL) != prog || !WIFSTOPPED(st) ||
			    WSTOPSIG(st) != SIGTRAP || (st >> 16) != 0)
				_exit(5);
		}
		if (write(ready[1], "r", 1) != 1)
			_exit(6);
		pause();
		_exit(0);
	}
	char c;
	if (read(ready[0], &c, 1) != 1)
		return -1;
	kill(tracer, SIGKILL);	/* the tracer dies with the tracee in its stop */
	waitpid(tracer, NULL, 0);
	if (kind == EVENT_STOP && write(go[1], "g", 1) != 1)
		return -1;
	int st;
	while (waitpid(prog, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
	int ev = trial(EVENT_STOP), trap = trial(SIGTRAP_STOP);
	printf("event stop (PTRACE_INTERRUPT), tracer killed: the program %s\n",
	       ev == 7 ? "ran on and exited 7" : ev > 128 ? strsignal(ev - 128) : "?");
	printf("signal-delivery stop (SIGTRAP), tracer killed: the program %s (reported only)\n",
	       trap == 128 + SIGTRAP ? "died of SIGTRAP" : trap == 7 ? "ran on, the signal dropped" : "?");
	return ev != 7;
}
