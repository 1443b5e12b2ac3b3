/* test_threads_ran.c — unit test of threads_ran (src/base/threads.c), which lets the seccomp
 * sweep skip the threads that did not run since its last look: a thread blocked on a pipe did
 * not run, one woken up did, and the first look always says it ran. */
#define _GNU_SOURCE
#include "threads.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"

static int pipe_in[2], pipe_out[2];
static volatile pid_t worker_tid;

static void *worker(void *arg)
{
	char c;
	worker_tid = (pid_t)syscall(SYS_gettid);
	for (;;) {
		if (read(pipe_in[0], &c, 1) != 1 || c == 'q')
			return NULL;
		volatile unsigned long spin = 0;
		for (unsigned long i = 0; i < 20000000ul; i++)	/* runs for a few ms */
			spin += i;
		if (write(pipe_out[1], &c, 1) != 1)
			return NULL;
	}
}

/* The worker blocked in read() for sure: its state in /proc is S. */
static void wait_blocked(void)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)worker_tid);
	for (;;) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = 0;
		char *s = strrchr(buf, ')');
		if (s && s[1] == ' ' && s[2] == 'S')
			return;
		usleep(1000);
	}
}

int main(void)
{
	pthread_t th;
	char c = 'x';
	if (pipe(pipe_in) || pipe(pipe_out) || pthread_create(&th, NULL, worker, NULL))
		abort();
	while (!worker_tid)
		usleep(1000);
	wait_blocked();
	struct thread t = { .tid = worker_tid, .status_fd = -1, .sched_fd = -1 };
	check(threads_ran(&t), "the first look: it ran (nothing to compare with)");
	check(t.sched_fd >= 0, "its schedstat kept open");
	usleep(20000);
	check(!threads_ran(&t), "blocked on a pipe 20 ms: it did not run");
	check(!threads_ran(&t), "still blocked: it did not run");
	if (write(pipe_in[1], &c, 1) != 1 || read(pipe_out[0], &c, 1) != 1)
		abort();
	wait_blocked();
	check(threads_ran(&t), "woken up, it spun and blocked again: it ran");
	check(!threads_ran(&t), "blocked again: it did not run since");
	c = 'q';
	if (write(pipe_in[1], &c, 1) != 1)
		abort();
	pthread_join(th, NULL);
	check(threads_ran(&t), "gone: told as ran (cannot be told otherwise)");
	close(t.sched_fd);
	printf("# %d failure(s)\n", failures);
	return failures != 0;
}
