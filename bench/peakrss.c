/* peakrss.c — runs a command and reports the peak resident memory and the CPU time of that
 * process alone (not of its children): VmHWM from /proc/PID/status and utime/stime from
 * /proc/PID/stat, read every 5 ms while it runs (the last reading misses at most the last
 * 5 ms). getrusage's children figures would not do for gputop, which is the parent of the
 * program it traces: they would mix the two.
 * Usage: peakrss -- COMMAND [ARGS...]
 * Prints "peakrss: vmhwm_kb=N user_s=U sys_s=S" on stderr; exits with the command's status. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* utime and stime of pid, in seconds; false once it is gone. */
static int cpu_times(pid_t pid, double *user, double *sys)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');	/* the command name may hold spaces */
	unsigned long ut, st;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	double hz = (double)sysconf(_SC_CLK_TCK);
	*user = (double)ut / hz;
	*sys = (double)st / hz;
	return 1;
}

static long vmhwm_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	int first = 1;
	if (argc > 1 && strcmp(argv[1], "--") == 0)
		first = 2;
	if (first >= argc) {
		fprintf(stderr, "usage: peakrss -- COMMAND [ARGS...]\n");
		return 2;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("peakrss: fork");
		return 125;
	}
	if (pid == 0) {
		execvp(argv[first], argv + first);
		perror(argv[first]);
		_exit(127);
	}
	long peak = 0;
	int status;
	double user = 0, sys = 0;
	const struct timespec tick = { 0, 5000000 };
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			perror("peakrss: wait4");
			return 125;
		}
		long kb = vmhwm_kb(pid);
		if (kb > peak)
			peak = kb;
		double u, s;
		if (cpu_times(pid, &u, &s) && u + s >= user + sys)
			user = u, sys = s;
		nanosleep(&tick, NULL);
	}
	fprintf(stderr, "peakrss: vmhwm_kb=%ld user_s=%.2f sys_s=%.2f\n", peak, user, sys);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
