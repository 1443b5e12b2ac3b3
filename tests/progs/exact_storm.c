/* exact_storm.c — a burst of calls from many threads at once, in two halves with a pause
 * between them, for tests/e2e/exact_late.sh: gputop frozen or starved while the second half
 * runs must still count every call exactly (issue 32: the stubs' tallies). On the SIMULATED
 * runtime (LD_LIBRARY_PATH=tests/bin/sim, optionally with tests/bin/simdrv for the driver's
 * launches).
 * Usage: exact_storm THREADS N [GO]   (THREADS at most 16, N even)
 * Prints "ready <pid>" and, when GO is given, waits for the file GO.1 (an attach first). Each
 * thread t then makes, N/2 times, one cudaLaunchKernel of its own
 * kernel worker<t> (void worker<t>(int*), grid (1,1,1) block (32,1,1)) and one cudaMalloc of
 * 256 + t bytes, keeping every pointer. When every thread has made its first half, the program
 * prints "half", waits for the file GO.2 (when given), and each thread makes its second half, with
 * one launch more of a kernel of its own never launched before, late<t>; then frees all its
 * allocations but the first. Calls: THREADS * (N + 1) cudaLaunchKernel, THREADS * N cudaMalloc,
 * THREADS * (N - 1) cudaFree. Prints "exact_storm: threads=T launches=L allocs=A frees=F live=T
 * live_bytes=B failures=<f>" and exits 0 (1 if a call failed). */
#include <cuda_runtime_api.h>
#include <pthread.h>

#include "storm.h"

#define MAX_THREADS 16

/* Kernels: distinct host functions the simulated runtime names with dladdr. */
static volatile int sink;
#define KERNELS(t) \
	__attribute__((noinline)) void worker##t(int *p) { sink = t; (void)p; } \
	__attribute__((noinline)) void late##t(int *p) { sink = 100 + t; (void)p; }
KERNELS(0) KERNELS(1) KERNELS(2) KERNELS(3) KERNELS(4) KERNELS(5) KERNELS(6) KERNELS(7)
KERNELS(8) KERNELS(9) KERNELS(10) KERNELS(11) KERNELS(12) KERNELS(13) KERNELS(14) KERNELS(15)
#define PAIR(t) { worker##t, late##t }
static void (*const kernels[MAX_THREADS][2])(int *) = {
	PAIR(0), PAIR(1), PAIR(2), PAIR(3), PAIR(4), PAIR(5), PAIR(6), PAIR(7),
	PAIR(8), PAIR(9), PAIR(10), PAIR(11), PAIR(12), PAIR(13), PAIR(14), PAIR(15),
};

static int n_threads;
static long n_calls;
static struct storm storm;
static long failures;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int launch(void (*k)(int *))
{
	void *args[1] = { NULL };
	return cudaLaunchKernel((const void *)k, (dim3){ 1, 1, 1 }, (dim3){ 32, 1, 1 }, args, 0, 0);
}

static void *worker(void *arg)
{
	long t = (long)arg, failed = 0;
	void **ptrs = calloc((size_t)n_calls, sizeof *ptrs);
	if (!ptrs)
		return NULL;
	for (long i = 0; i < n_calls; i++) {
		if (i == n_calls / 2) {
			storm_worker_half(&storm);
			failed += launch(kernels[t][1]) != 0;
		}
		failed += launch(kernels[t][0]) != 0;
		failed += cudaMalloc(&ptrs[i], (size_t)(256 + t)) != 0;
	}
	for (long i = 1; i < n_calls; i++)
		failed += cudaFree(ptrs[i]) != 0;
	free(ptrs);
	pthread_mutex_lock(&lock);
	failures += failed;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	n_threads = argc > 2 ? atoi(argv[1]) : 0;
	n_calls = argc > 2 ? atol(argv[2]) : 0;
	if (n_threads < 1 || n_threads > MAX_THREADS || n_calls < 2 || n_calls % 2) {
		fprintf(stderr, "usage: exact_storm THREADS N [GO] (1 <= THREADS <= %d, N even)\n", MAX_THREADS);
		return 2;
	}
	pthread_t th[MAX_THREADS];
	storm_init(&storm, n_threads, argc > 3 ? argv[3] : NULL);
	storm_ready(&storm);
	for (long t = 0; t < n_threads; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	storm_main_half(&storm);
	for (int t = 0; t < n_threads; t++)
		pthread_join(th[t], NULL);
	long live_bytes = 0;
	for (int t = 0; t < n_threads; t++)
		live_bytes += 256 + t;
	printf("exact_storm: threads=%d launches=%ld allocs=%ld frees=%ld live=%d live_bytes=%ld failures=%ld\n",
	       n_threads, (long)n_threads * (n_calls + 1), (long)n_threads * n_calls, (long)n_threads * (n_calls - 1),
	       n_threads, live_bytes, failures);
	return failures ? 1 : 0;
}
