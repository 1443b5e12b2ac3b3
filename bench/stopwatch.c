/* stopwatch.c — runs a command and stamps, with CLOCK_MONOTONIC (the clock bench/worker's stamps
 * use), the edges of its run: its start (just before the fork), the first line of its stderr that
 * holds TEXT, a SIGTERM sent to it SECONDS after that line, its exit (its waitpid).
 * Usage: stopwatch [-l TEXT [-k SECONDS]] -- COMMAND [ARGS...]
 *   -l TEXT     the command's stderr goes through a pipe, copied to ours line by line, and the
 *               first line that holds TEXT is stamped (e.g. gputop's "attached to")
 *   -k SECONDS  SIGTERM to the command that long after that line (gputop then detaches)
 * Prints on stderr "stopwatch: start_ns=S [line_ns=L] [term_ns=T] end_ns=E status=X" (X: the
 * exit status, or 128 + the signal); exits with X. Nothing is timed but these edges. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct stamps {
	uint64_t start, line, term, end;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "stopwatch: %s: %s\n", what, strerror(errno));
	exit(125);
}

/* The command, its stderr on err_fd unless that is -1. */
static pid_t start_command(char **argv, int err_fd, int close_fd)
{
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid)
		return pid;
	if (err_fd >= 0 && (dup2(err_fd, STDERR_FILENO) < 0 || close(err_fd) < 0 || close(close_fd) < 0))
		_exit(125);
	execvp(argv[0], argv);
	fprintf(stderr, "stopwatch: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Whether the buffered text holds TEXT in a complete line; what is copied to stderr is dropped
 * from the buffer, except the last line's beginning. */
static int scan_lines(char *buf, size_t *len, const char *text)
{
	int found = 0;
	char *nl, *p = buf;
	while ((nl = memchr(p, '\n', *len - (size_t)(p - buf)))) {
		*nl = 0;
		found |= strstr(p, text) != NULL;
		fprintf(stderr, "%s\n", p);
		p = nl + 1;
	}
	*len -= (size_t)(p - buf);
	memmove(buf, p, *len);
	return found;
}

/* Reads the command's stderr to its end, stamping TEXT's line and sending SIGTERM kill_ms
 * after it (kill_ms < 0: never). */
static void watch_stderr(int fd, pid_t pid, const char *text, long kill_ms, struct stamps *st)
{
	char buf[8192];
	size_t len = 0;
	for (;;) {
		int timeout = -1;
		if (st->line && !st->term && kill_ms >= 0) {
			int64_t left = (int64_t)(st->line + (uint64_t)kill_ms * 1000000u) - (int64_t)now_ns();
			if (left <= 0) {
				st->term = now_ns();
				kill(pid, SIGTERM);
				continue;
			}
			timeout = (int)((left + 999999) / 1000000);
		}
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, timeout);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("poll");
		if (r == 0)
			continue;
		ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (scan_lines(buf, &len, text) && !st->line)
			st->line = now_ns();
		if (len == sizeof buf - 1)	/* a line longer than the buffer: let it go */
			len = 0;
	}
	if (len)
		fprintf(stderr, "%.*s\n", (int)len, buf);
}

static int usage(void)
{
	fprintf(stderr, "usage: stopwatch [-l TEXT [-k SECONDS]] -- COMMAND [ARGS...]\n");
	return 125;
}

int main(int argc, char **argv)
{
	const char *text = NULL;
	long kill_ms = -1;
	int opt;
	while ((opt = getopt(argc, argv, "+l:k:")) != -1) {
		switch (opt) {
		case 'l': text = optarg; break;
		case 'k': kill_ms = (long)(atof(optarg) * 1000); break;
		default: return usage();
		}
	}
	if (optind >= argc || (kill_ms >= 0 && !text))
		return usage();
	char **cmd = argv + optind;

	struct stamps st = { 0 };
	int fds[2] = { -1, -1 };
	if (text && pipe2(fds, O_CLOEXEC) < 0)
		die("pipe");
	st.start = now_ns();
	pid_t pid = start_command(cmd, fds[1], fds[0]);
	if (text) {
		close(fds[1]);
		watch_stderr(fds[0], pid, text, kill_ms, &st);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	st.end = now_ns();

	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	fprintf(stderr, "stopwatch: start_ns=%llu", (unsigned long long)st.start);
	if (st.line)
		fprintf(stderr, " line_ns=%llu", (unsigned long long)st.line);
	if (st.term)
		fprintf(stderr, " term_ns=%llu", (unsigned long long)st.term);
	fprintf(stderr, " end_ns=%llu status=%d\n", (unsigned long long)st.end, code);
	return code;
}
