// threads.cu — several host threads launching at the same time: 4 threads that exist before the
// go file (gputop must attach to each of them) and 4 created after it (gputop must follow the
// clones), all released together by a barrier. usage: threads [--go FILE]
//
// Each thread, on its own stream: cudaMalloc 1 MiB (freed) and 64 KiB (leaked), cudaMemcpy
// H2D 1 MiB, bump<<<1024, 256>>> 50 times, cudaStreamSynchronize, cudaMemcpy D2H 1 MiB (every
// element must be 50), cudaFree. Set-up: cudaSetDevice(0) in the main thread and in the four
// early threads (not among the checked figures), streams created (not probed).
#include <pthread.h>

#include "gpucheck.h"

#define EARLY 4
#define LATE 4
#define THREADS (EARLY + LATE)
#define LAUNCHES 50
#define NI ((int)(MiB / sizeof(int)))

__global__ void bump(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] += 1;
}

static pthread_barrier_t start_line;
static pthread_mutex_t go_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go_cond = PTHREAD_COND_INITIALIZER;
static int go;

static void *worker(void *arg)
{
	long early = (long)arg;
	int *d, *leak, *h = (int *)calloc(NI, sizeof(int));
	cudaStream_t s;

	if (!h)
		gc_fail("calloc", NULL);
	if (early) {	// exists before the go file: waits for it here
		CK(cudaSetDevice(0));
		pthread_mutex_lock(&go_lock);
		while (!go)
			pthread_cond_wait(&go_cond, &go_lock);
		pthread_mutex_unlock(&go_lock);
	}
	CK(cudaStreamCreate(&s));
	pthread_barrier_wait(&start_line);
	CK(cudaMalloc((void **)&d, MiB));
	CK(cudaMalloc((void **)&leak, 64 * KiB));
	CK(cudaMemcpy(d, h, MiB, cudaMemcpyHostToDevice));
	for (int i = 0; i < LAUNCHES; i++) {
		bump<<<1024, 256, 0, s>>>(d, NI);
		CK_LAUNCH();
	}
	CK(cudaStreamSynchronize(s));
	CK(cudaMemcpy(h, d, MiB, cudaMemcpyDeviceToHost));
	for (int i = 0; i < NI; i++)
		gc_expect_true("every element bumped 50 times", h[i] == LAUNCHES);
	CK(cudaFree(d));
	free(h);
	return NULL;
}

int main(int argc, char **argv)
{
	gc_name = "threads";
	printf("EXPECT {\"program\": \"threads\", \"setup\": {},"
	       " \"measured\": {\"kernels\": {\"bump(int*, int)\": {\"launches\": %d, \"grid\": [1024,1,1], \"block\": [256,1,1]}},"
	       " \"launches\": %d,"
	       " \"transfers\": {\"H2D\": {\"sync\": [%d, %lu]}, \"D2H\": {\"sync\": [%d, %lu]}},"
	       " \"synchronize\": %d,"
	       " \"api\": {\"cudaMalloc\": %d, \"cudaMemcpy\": %d, \"cudaStreamSynchronize\": %d, \"cudaFree\": %d},"
	       " \"leaks\": [",
	       THREADS * LAUNCHES, THREADS * LAUNCHES, THREADS, THREADS * MiB, THREADS, THREADS * MiB, THREADS,
	       2 * THREADS, 2 * THREADS, THREADS, THREADS);
	for (int i = 0; i < THREADS; i++)
		printf("%s{\"kind\": \"device\", \"bytes\": %lu, \"api\": \"cudaMalloc\"}", i ? ", " : "", 64 * KiB);
	printf("], \"allocations\": %d, \"frees\": %d}}\n", 2 * THREADS, THREADS);
	fflush(stdout);

	pthread_t t[THREADS];
	pthread_barrier_init(&start_line, NULL, THREADS);
	CK(cudaSetDevice(0));
	for (long i = 0; i < EARLY; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)1))
			gc_fail("pthread_create", NULL);

	gc_wait_go(argc, argv);

	pthread_mutex_lock(&go_lock);
	go = 1;
	pthread_cond_broadcast(&go_cond);
	pthread_mutex_unlock(&go_lock);
	for (long i = EARLY; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)0))
			gc_fail("pthread_create", NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	char line[64];
	snprintf(line, sizeof line, "threads=%d launches=%d", THREADS, THREADS * LAUNCHES);
	gc_ok(line);
	return 0;
}
