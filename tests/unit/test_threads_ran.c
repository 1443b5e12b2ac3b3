/* test_threads_ran.c — unit test of threads_ran (src/base/threads.c), which lets the seccomp
 * sweep skip the threads that did not run since its last look: a thread blocked on a pipe did
 * not run, one woken up did, and the first look always says it ran. And of
 * threads_gone_with_pointer: a call record read after its thread ended is still that thread's
 * (it was the main thread's: two threads' calls on one track, overlapping in --timeline). */
#define _GNU_SOURCE
#include "threads.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "tracee.h"

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

	struct tracee p = { .pid = 100, .threads = threads_state_new() };
	for (pid_t tid = 101; tid <= 103; tid++)
		threads_add(&p, tid)->thread_pointer = 0x7000 + (uint64_t)tid;
	threads_remove(&p, 102);
	check(threads_with_pointer(&p, 0x7000 + 102) == NULL && threads_gone_with_pointer(&p, 0x7000 + 102) == 102,
	      "a thread ended: its pointer still names it");
	check(threads_gone_with_pointer(&p, 0x7000 + 101) == 0 && threads_gone_with_pointer(&p, 0) == 0,
	      "a live thread's pointer, or none, names no thread that ended");
	threads_add(&p, 104)->thread_pointer = 0x7000 + 102;	/* its memory reused */
	threads_remove(&p, 104);
	check(threads_gone_with_pointer(&p, 0x7000 + 102) == 104, "two ended with one pointer: the later one");
	for (pid_t tid = 200; tid < 300; tid++) {
		threads_add(&p, tid)->thread_pointer = 0x9000 + (uint64_t)tid;
		threads_remove(&p, tid);
	}
	check(threads_gone_with_pointer(&p, 0x9000 + 299) == 299 && threads_gone_with_pointer(&p, 0x9000 + 200) == 0,
	      "the last 64 that ended are kept, no more");
	threads_state_free(p.threads);
	printf("# %d failure(s)\n", failures);
	return failures != 0;
}
