/* rb_reap.c — runs a command as a child subreaper (PR_SET_CHILD_SUBREAPER), so that a process
 * orphaned below it (the program gputop launched, once gputop is killed; gputop's watchdog) is
 * reparented to it instead of to init, and its exit status can still be told. For
 * tests/e2e/robust_kill9.sh (launch mode). No CUDA.
 * Usage: rb_reap STATUS_FILE CMD [ARGS...]
 * Appends to STATUS_FILE "child <pid>" (CMD's pid), then "<pid> <status>" for every process it
 * reaps (CMD and any orphan reparented to it), as a shell writes a status: the exit code, or
 * 128 + the signal that ended it. Each line is written whole with one write(2). Exits when it
 * has nothing left to wait for, with CMD's status. SIGTERM, SIGINT and SIGHUP to it are passed
 * to CMD. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t child;

static void pass_on(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static void put(int fd, const char *fmt, long a, long b)
{
	char line[64];
	int n = snprintf(line, sizeof(line), fmt, a, b);
	if (write(fd, line, (size_t)n) != n)
		_exit(125);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: rb_reap STATUS_FILE CMD [ARGS...]\n");
		return 2;
	}
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		perror("rb_reap");
		return 125;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("rb_reap: fork");
		return 125;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	child = pid;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = pass_on;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	put(fd, "child %ld\n", (long)pid, 0);
	int own = 125;
	for (;;) {
		int st;
		pid_t w = waitpid(-1, &st, __WALL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;	/* ECHILD: nothing left */
		}
		int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		put(fd, "%ld %ld\n", (long)w, code);
		if (w == pid)
			own = code;
	}
	return own;
}
