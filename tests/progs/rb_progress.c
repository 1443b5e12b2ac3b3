/* rb_progress.c — a busy multi-threaded CUDA program that says how far it has got, for the
 * tests of a frozen or killed gputop (tests/e2e/robust_frozen.sh, robust_kill9.sh).
 * Usage: rb_progress THREADS ROUNDS   (ROUNDS 0 = until the file $RB_STOP_FILE exists)
 * Prints "ready <pid>" first and, when RB_GO_FILE is set, waits for that file to exist (polled
 * every 10 ms) before any CUDA call. Then THREADS threads each make ROUNDS rounds (at least one)
 * of, as fast as they can:
 *   cudaMalloc 4096 B, cudaMemcpy H2D 4096 B (a pattern of the thread and the round),
 *   [with RB_LAUNCH=1: cudaLaunchKernel progress_kernel(int*) grid (1,1,1) block (32,1,1)],
 *   [with RB_SYNC=1: cudaStreamSynchronize(0)],
 *   cudaMemcpy D2H 4096 B (compared with what went in), cudaFree
 * and with RB_PAUSE_US set sleeps that long after each round (a pace a real program keeps: it
 * waits for its GPU between calls). Once every
 * thread has made its first round it prints "rb_progress: running". At the end it prints
 * "rb_progress: threads=T rounds=<T x ROUNDS, or "many" when ROUNDS is 0> failures=<f>
 * mismatches=<m>", exit status 0, or 1 if a call failed or a copy came back wrong.
 * Progress: with RB_PROGRESS_FILE set, a thread of its own that makes no CUDA call appends
 *   "progress <seconds> <rounds>"
 * to that file every 100 ms (each line written whole with one write(2)), <seconds> on the
 * program's own CLOCK_MONOTONIC (since its start, microseconds), <rounds> completed by all
 * threads together; and at the end "total <seconds> <rounds>". */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "progs.h"

static long rounds_each;
static const char *stop_file;
static bool with_launch, with_sync;
static long pause_us;
static int nthreads;
static long done_rounds, started_threads, mismatches;
static volatile int finished;
static struct fails fails;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double t_start;

__attribute__((noinline)) void progress_kernel(int *out)
{
	static volatile int calls;
	calls = calls + 1;
	(void)out;
}

static void record(const char *name, int code)
{
	if (!code)
		return;
	pthread_mutex_lock(&lock);
	progs_check(&fails, name, code);
	pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
	unsigned char src[4096], back[4096];
	int *out = NULL;
	void *args[] = { &out };
	long seed = (long)arg * 7919;
	for (long i = 0; i == 0 || (rounds_each ? i < rounds_each : access(stop_file, F_OK) != 0); i++) {
		void *p = NULL;
		memset(src, (int)((seed + i) & 0xff), sizeof(src));
		memset(back, 0, sizeof(back));
		record("cudaMalloc", cudaMalloc(&p, sizeof(src)));
		record("cudaMemcpy", cudaMemcpy(p, src, sizeof(src), cudaMemcpyHostToDevice));
		if (with_launch)
			record("cudaLaunchKernel", cudaLaunchKernel((const void *)progress_kernel, (dim3){ 1, 1, 1 },
								    (dim3){ 32, 1, 1 }, args, 0, 0));
		if (with_sync)
			record("cudaStreamSynchronize", cudaStreamSynchronize(0));
		record("cudaMemcpy", cudaMemcpy(back, p, sizeof(back), cudaMemcpyDeviceToHost));
		if (memcmp(src, back, sizeof(src)) != 0)
			__atomic_add_fetch(&mismatches, 1, __ATOMIC_RELAXED);
		record("cudaFree", cudaFree(p));
		__atomic_add_fetch(&done_rounds, 1, __ATOMIC_RELAXED);
		if (pause_us)
			usleep((useconds_t)pause_us);
		if (i == 0 && __atomic_add_fetch(&started_threads, 1, __ATOMIC_SEQ_CST) == nthreads)
			printf("rb_progress: running\n");
	}
	return NULL;
}

static void progress_line(int fd, const char *what)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "%s %.6f %ld\n", what, progs_now() - t_start,
			 __atomic_load_n(&done_rounds, __ATOMIC_RELAXED));
	if (write(fd, line, (size_t)n) != n)
		_exit(3);
}

/* Every 100 ms by the program's own clock (a deadline, not a sleep: no drift). */
static void *reporter(void *arg)
{
	int fd = (int)(intptr_t)arg;
	double next = progs_now();
	while (!__atomic_load_n(&finished, __ATOMIC_ACQUIRE)) {
		progress_line(fd, "progress");
		next += 0.1;
		double wait = next - progs_now();
		if (wait > 0) {
			struct timespec ts = { (time_t)wait, (long)((wait - (time_t)wait) * 1e9) };
			while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
				;
		} else {
			next = progs_now();	/* late (a loaded machine): the next line 100 ms on */
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	t_start = progs_now();
	nthreads = argc > 1 ? atoi(argv[1]) : 2;
	rounds_each = argc > 2 ? atol(argv[2]) : 100;
	stop_file = getenv("RB_STOP_FILE");
	with_launch = getenv("RB_LAUNCH") && atoi(getenv("RB_LAUNCH"));
	with_sync = getenv("RB_SYNC") && atoi(getenv("RB_SYNC"));
	pause_us = getenv("RB_PAUSE_US") ? atol(getenv("RB_PAUSE_US")) : 0;
	if (argc < 3 || nthreads < 1 || nthreads > 64 || rounds_each < 0 || (!rounds_each && !stop_file)) {
		fprintf(stderr, "usage: rb_progress THREADS ROUNDS (ROUNDS 0 needs RB_STOP_FILE)\n");
		return 2;
	}
	int fd = -1;
	const char *progress = getenv("RB_PROGRESS_FILE");
	if (progress && (fd = open(progress, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0) {
		perror(progress);
		return 2;
	}
	progs_ready();
	const char *go = getenv("RB_GO_FILE");
	if (go)
		progs_wait_go(go);
	pthread_t rep, th[64];
	if (fd >= 0)
		pthread_create(&rep, NULL, reporter, (void *)(intptr_t)fd);
	for (long i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	if (fd >= 0) {
		__atomic_store_n(&finished, 1, __ATOMIC_RELEASE);
		pthread_join(rep, NULL);
		progress_line(fd, "total");
		close(fd);
	}
	progs_print_fails("rb_progress", &fails);
	if (rounds_each)
		printf("rb_progress: threads=%d rounds=%ld failures=%ld mismatches=%ld\n", nthreads,
		       (long)nthreads * rounds_each, fails.total, mismatches);
	else
		printf("rb_progress: threads=%d rounds=many failures=%ld mismatches=%ld\n", nthreads,
		       fails.total, mismatches);
	return fails.total || mismatches;
}
