/* rb_busy.c — a busy multi-threaded CUDA program, for the detach and crash tests
 * (tests/e2e/robust_detach.sh, robust_crash.sh, robust_exit.sh).
 * Usage: rb_busy busy THREADS ITERS   (ITERS 0 = until the file $RB_STOP_FILE exists)
 *        rb_busy sync THREADS
 * Both print "ready <pid>" first and, when RB_GO_FILE is set, wait for that file to exist
 * (polled every 10 ms) before any CUDA call.
 *   busy: THREADS threads do ITERS iterations each of: cudaMalloc 4096 B, cudaMemcpy H2D 4096 B,
 *         cudaLaunchKernel busy_kernel(int*) grid (1,1,1) block (32,1,1) twice, cudaMemcpy D2H
 *         (compared with what went in), cudaFree: 6 calls. Prints "rb_busy: threads=T
 *         iterations=<T x ITERS, or "many" when ITERS is 0> failures=<f> mismatches=<m>".
 *   sync: THREADS threads each make one cudaMalloc, then all print "rb_busy: in sync" (once)
 *         and call cudaDeviceSynchronize (which lasts SIMCUDA_SYNC_US on the SIMULATED
 *         runtime), check that their stack canary survived the return, cudaFree. Prints
 *         "rb_busy: sync threads=T returned=<threads back with success> canaries=<intact>".
 *         With SIMCUDA_SYNC_HOOK=rb_busy_in_sync and RB_COUNT_FILE set, the simulated runtime
 *         calls rb_busy_in_sync from inside each synchronize call, which writes the number of
 *         threads inside one so far to RB_COUNT_FILE: a test can wait until every thread is in
 *         its call instead of sleeping and hoping they are (a loaded machine may be slow).
 * Exit status 0. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "progs.h"

static int iters;
static const char *stop_file;
static struct fails fails;
static long mismatches, returned, canaries;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t barrier;

__attribute__((noinline)) void busy_kernel(int *out)
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

static void *busy_thread(void *arg)
{
	unsigned char src[4096], back[4096];
	int *out = NULL;
	void *args[] = { &out };
	long seed = (long)arg * 7919;
	for (int i = 0; iters ? i < iters : access(stop_file, F_OK) != 0; i++) {
		void *p = NULL;
		memset(src, (int)((seed + i) & 0xff), sizeof(src));
		memset(back, 0, sizeof(back));
		record("cudaMalloc", cudaMalloc(&p, sizeof(src)));
		record("cudaMemcpy", cudaMemcpy(p, src, sizeof(src), cudaMemcpyHostToDevice));
		for (int k = 0; k < 2; k++)
			record("cudaLaunchKernel", cudaLaunchKernel((const void *)busy_kernel, (dim3){ 1, 1, 1 },
								    (dim3){ 32, 1, 1 }, args, 0, 0));
		record("cudaMemcpy", cudaMemcpy(back, p, sizeof(back), cudaMemcpyDeviceToHost));
		if (memcmp(src, back, sizeof(src)) != 0) {
			pthread_mutex_lock(&lock);
			mismatches++;
			pthread_mutex_unlock(&lock);
		}
		record("cudaFree", cudaFree(p));
	}
	return NULL;
}

/* The simulated runtime's test hook (SIMCUDA_SYNC_HOOK), called inside a synchronize call. */
void rb_busy_in_sync(void)
{
	static long inside;
	const char *count_file = getenv("RB_COUNT_FILE");
	long n = __atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST);
	if (!count_file)
		return;
	char tmp[4096];		/* written aside and renamed: a reader never sees it half done */
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", count_file, n);
	FILE *c = fopen(tmp, "w");
	if (c) {
		fprintf(c, "%ld\n", n);
		fclose(c);
		pthread_mutex_lock(&lock);	/* a smaller count never replaces a larger one */
		char cur[32] = "";
		FILE *r = fopen(count_file, "r");
		if (r) {
			if (!fgets(cur, sizeof(cur), r))
				cur[0] = 0;
			fclose(r);
		}
		if (atol(cur) < n)
			rename(tmp, count_file);
		else
			unlink(tmp);
		pthread_mutex_unlock(&lock);
	}
}

static void *sync_thread(void *arg)
{
	volatile uint64_t canary = 0x5eed0000u + (uint64_t)(uintptr_t)arg;
	void *p = NULL;
	record("cudaMalloc", cudaMalloc(&p, 4096));
	if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
		printf("rb_busy: in sync\n");
	int e = cudaDeviceSynchronize();
	record("cudaDeviceSynchronize", e);
	pthread_mutex_lock(&lock);
	returned += e == 0;
	canaries += canary == 0x5eed0000u + (uint64_t)(uintptr_t)arg;
	pthread_mutex_unlock(&lock);
	record("cudaFree", cudaFree(p));
	return NULL;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *mode = argc > 1 ? argv[1] : "";
	int threads = argc > 2 ? atoi(argv[2]) : 4;
	bool busy = strcmp(mode, "busy") == 0, is_sync = strcmp(mode, "sync") == 0;
	iters = argc > 3 ? atoi(argv[3]) : 100;
	stop_file = getenv("RB_STOP_FILE");
	if ((!busy && !is_sync) || threads < 1 || threads > 256 || iters < 0 || (busy && !iters && !stop_file)) {
		fprintf(stderr, "usage: rb_busy busy THREADS ITERS | sync THREADS "
				"(ITERS 0 needs RB_STOP_FILE)\n");
		return 2;
	}
	progs_ready();
	const char *go = getenv("RB_GO_FILE");
	if (go)
		progs_wait_go(go);
	pthread_t th[256];
	pthread_barrier_init(&barrier, NULL, (unsigned)threads);
	for (long i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, busy ? busy_thread : sync_thread, (void *)i);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	progs_print_fails("rb_busy", &fails);
	if (is_sync) {
		printf("rb_busy: sync threads=%d returned=%ld canaries=%ld\n", threads, returned, canaries);
		return 0;
	}
	if (iters)
		printf("rb_busy: threads=%d iterations=%ld failures=%ld mismatches=%ld\n", threads,
		       (long)threads * iters, fails.total, mismatches);
	else
		printf("rb_busy: threads=%d iterations=many failures=%ld mismatches=%ld\n", threads,
		       fails.total, mismatches);
	return 0;
}
