/* launcher.c — the benchmark's job launcher, as torchrun's agent is one: it forks N workers, each
 * exec'ing PROGRAM with RANK, LOCAL_RANK and WORLD_SIZE in its environment, waits for them all and
 * exits. Like the agent, which loads PyTorch's CUDA libraries without using them, it is linked
 * against the SIMULATED libcudart.so.13 of tests/ and makes no CUDA call: a tracer that follows
 * the job finds a CUDA library in the launcher too.
 * Usage: launcher N PROGRAM [ARGS...]
 * Exits 0 if every worker exited 0, else 1 (saying which did not). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_WORKERS 64

static void set_env_int(const char *name, int value)
{
	char s[16];
	snprintf(s, sizeof s, "%d", value);
	setenv(name, s, 1);
}

/* The child of rank `rank`: exec PROGRAM; 127 if it cannot. */
static pid_t start_worker(int rank, int n, char **argv)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	set_env_int("RANK", rank);
	set_env_int("LOCAL_RANK", rank);
	set_env_int("WORLD_SIZE", n);
	execv(argv[0], argv);
	fprintf(stderr, "launcher: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0;
	if (n < 1 || n > MAX_WORKERS) {
		fprintf(stderr, "usage: launcher N PROGRAM [ARGS...]   (1 <= N <= %d)\n", MAX_WORKERS);
		return 2;
	}
	/* Linked with --no-as-needed: it is loaded, unused, as the agent's libraries are. */
	if (!dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD)) {
		fprintf(stderr, "launcher: libcudart.so.13 is not loaded (see bench/Makefile)\n");
		return 1;
	}
	pid_t pids[MAX_WORKERS];
	for (int i = 0; i < n; i++) {
		pids[i] = start_worker(i, n, argv + 2);
		if (pids[i] < 0) {
			fprintf(stderr, "launcher: cannot fork: %s\n", strerror(errno));
			return 1;
		}
	}
	int failed = 0;
	for (int i = 0; i < n; i++) {
		int st;
		while (waitpid(pids[i], &st, 0) < 0)
			if (errno != EINTR) {
				fprintf(stderr, "launcher: waitpid: %s\n", strerror(errno));
				return 1;
			}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "launcher: worker %d (pid %d) %s %d\n", i, (int)pids[i],
				WIFEXITED(st) ? "exited with status" : "was killed by signal",
				WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			failed = 1;
		}
	}
	return failed;
}
