/* torch_storm.c — a storm of PyTorch allocator calls from many threads at once, in two halves
 * with a pause between them, for tests/e2e/torch_late.sh: gputop frozen or starved while the
 * second half runs must still show PyTorch's live blocks exactly (issue 32: the stubs keep the
 * Blocks in place). Through the SIMULATED libc10_cuda.so (tests/sim/c10_cuda.c) over the
 * SIMULATED runtime.
 * Usage: torch_storm THREADS N [GO]   (THREADS at most 16, N a multiple of 8)
 * Each thread first takes BEFORE blocks; the program prints "ready <pid>" and, when GO is given,
 * waits for the file GO.1 (an attach first: those blocks are then from before gputop). Each
 * thread then, N times, takes a block of 512 x (1 + (7i + t) mod 64) bytes and keeps one in
 * eight of them, giving the rest back at once; after N/2 the program prints "half" and waits for
 * GO.2 (when given). Then each thread gives back its BEFORE blocks and every block it kept but
 * the first. It prints what torch.cuda.memory_allocated() says and its live blocks:
 *   torch_storm: allocs=A frees=F allocated=B live=L failures=f
 * and exits 0 (1 if a call failed). */
#include <pthread.h>
#include <stdint.h>

#include "storm.h"

void *simtorch_alloc(size_t size, void *stream);
int simtorch_free(void *ptr);
long long simtorch_allocated(void);

#define MAX_THREADS 16
#define BEFORE 4
#define STREAM ((void *)0x5000)

static int n_threads;
static long n_calls;
static pthread_barrier_t taken, start;
static struct storm storm;
static long failures;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	long t = (long)arg, failed = 0, kept = 0;
	void *before[BEFORE];
	void **keep = calloc((size_t)n_calls / 8 + 1, sizeof *keep);
	if (!keep)
		abort();
	for (int i = 0; i < BEFORE; i++)
		failed += !(before[i] = simtorch_alloc(4096u * (size_t)(i + 1), STREAM));
	pthread_barrier_wait(&taken);	/* main prints "ready" and waits for GO.1 */
	pthread_barrier_wait(&start);
	for (long i = 0; i < n_calls; i++) {
		if (i == n_calls / 2) {
			storm_worker_half(&storm);
		}
		void *p = simtorch_alloc(512u * (size_t)(1 + (7 * i + t) % 64), STREAM);
		failed += !p;
		if (p && i % 8 == 0)
			keep[kept++] = p;
		else if (p)
			failed += simtorch_free(p) != 0;
	}
	for (int i = 0; i < BEFORE; i++)
		failed += before[i] && simtorch_free(before[i]) != 0;
	for (long i = 1; i < kept; i++)
		failed += simtorch_free(keep[i]) != 0;
	free(keep);
	pthread_mutex_lock(&lock);
	failures += failed;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	n_threads = argc > 2 ? atoi(argv[1]) : 0;
	n_calls = argc > 2 ? atol(argv[2]) : 0;
	if (n_threads < 1 || n_threads > MAX_THREADS || n_calls < 8 || n_calls % 8) {
		fprintf(stderr, "usage: torch_storm THREADS N [GO] (1 <= THREADS <= %d, N a multiple of 8)\n",
			MAX_THREADS);
		return 2;
	}
	pthread_t th[MAX_THREADS];
	pthread_barrier_init(&taken, NULL, (unsigned)n_threads + 1);
	pthread_barrier_init(&start, NULL, (unsigned)n_threads + 1);
	storm_init(&storm, n_threads, argc > 3 ? argv[3] : NULL);
	for (long t = 0; t < n_threads; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	pthread_barrier_wait(&taken);
	storm_ready(&storm);
	pthread_barrier_wait(&start);
	storm_main_half(&storm);
	for (int t = 0; t < n_threads; t++)
		pthread_join(th[t], NULL);
	long allocs = (long)n_threads * (BEFORE + n_calls);
	long frees = (long)n_threads * (BEFORE + n_calls - 1);
	printf("torch_storm: allocs=%ld frees=%ld allocated=%lld live=%d failures=%ld\n", allocs, frees,
	       simtorch_allocated(), n_threads, failures);
	return failures ? 1 : 0;
}
