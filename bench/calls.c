/* calls.c — the benchmark's program: calls one CUDA driver function N times from T threads and
 * times itself; the tracers under test (floor, gputop, ltrace, the shim) only watch it.
 * Linked against the SIMULATED libcuda.so.1 of tests/ (no GPU: each call is a cheap no-op on
 * host memory), bound at load time (-z now), so the timed loop does nothing but the calls.
 *
 * Usage: calls FUNC N [THREADS]
 *   launch  cuLaunchKernel(f, 1,1,1, 32,1,1, 0, 0, args, 0)   gputop: the launch ring, no stop
 *   sync    cuStreamSynchronize(0)                           gputop: entry+return (call stub: no stop)
 *   alloc   cuMemAlloc_v2(&p, 4096), then cuMemFree_v2(p)    gputop: entry+return, 1 stop each
 *           (N counts calls: N/2 pairs)
 *   graph   cuGraphLaunch(exec, 0) of a graph of one kernel node, made (cuGraphCreate,
 *           cuGraphAddKernelNode_v2, cuGraphInstantiateWithFlags) before the timed loop
 *                                                             gputop: the launch ring, no stop
 * N calls in all, N/THREADS per thread (N must divide evenly). Prints one line:
 *   calls func=launch n=N threads=T ns_per_call=X
 * where X is the wall time from the moment all threads start to the moment the last one ends,
 * divided by N: what a call costs the program as a whole (for T > 1, a throughput figure). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The few driver declarations we need (cuda.h is not needed to build the bench). */
typedef int CUresult;
typedef uint64_t CUdeviceptr;
extern CUresult cuInit(unsigned int flags);
extern CUresult cuLaunchKernel(void *f, unsigned int gx, unsigned int gy, unsigned int gz,
			       unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
			       void *stream, void **params, void **extra);
extern CUresult cuStreamSynchronize(void *stream);
extern CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes);
extern CUresult cuMemFree_v2(CUdeviceptr p);
extern CUresult cuGraphCreate(void **graph, unsigned int flags);
/* CUDA_KERNEL_NODE_PARAMS_v2 (cuda.h): the function, then grid and block dimensions. */
struct kernel_node {
	void *func;
	unsigned int dims[6], shmem;
	void **params, **extra;
	void *kern, *ctx;
};
extern CUresult cuGraphAddKernelNode_v2(void **node, void *graph, void *const *deps, size_t n_deps,
					const struct kernel_node *p);
extern CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags);
extern CUresult cuGraphLaunch(void *exec, void *stream);

enum func { F_LAUNCH, F_SYNC, F_ALLOC, F_GRAPH };

static enum func func;
static long per_thread;
static pthread_barrier_t start;
static volatile int failures;

static char fake_kernel;	/* the simulated driver accepts any non-NULL CUfunction */
static void *graph_exec;	/* F_GRAPH: made before the timed loop */

static int make_graph(void)
{
	void *graph = NULL, *node = NULL;
	struct kernel_node p = { .func = &fake_kernel, .dims = { 1, 1, 1, 32, 1, 1 } };
	return cuGraphCreate(&graph, 0) || cuGraphAddKernelNode_v2(&node, graph, NULL, 0, &p) ||
	       cuGraphInstantiateWithFlags(&graph_exec, graph, 0);
}

static void loop(void)
{
	void *params[1] = { NULL };
	long i;
	switch (func) {
	case F_LAUNCH:
		for (i = 0; i < per_thread; i++)
			if (cuLaunchKernel(&fake_kernel, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL))
				failures++;
		break;
	case F_SYNC:
		for (i = 0; i < per_thread; i++)
			if (cuStreamSynchronize(0))
				failures++;
		break;
	case F_GRAPH:
		for (i = 0; i < per_thread; i++)
			if (cuGraphLaunch(graph_exec, NULL))
				failures++;
		break;
	case F_ALLOC:
		for (i = 0; i < per_thread; i += 2) {
			CUdeviceptr p = 0;
			if (cuMemAlloc_v2(&p, 4096) || cuMemFree_v2(p))
				failures++;
		}
		break;
	}
}

static void *worker(void *unused)
{
	(void)unused;
	pthread_barrier_wait(&start);
	loop();
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int usage(void)
{
	fprintf(stderr, "usage: calls launch|sync|alloc|graph N [THREADS]   (N a multiple of THREADS, "
			"and of 2*THREADS for alloc)\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4)
		return usage();
	if (strcmp(argv[1], "launch") == 0)
		func = F_LAUNCH;
	else if (strcmp(argv[1], "sync") == 0)
		func = F_SYNC;
	else if (strcmp(argv[1], "alloc") == 0)
		func = F_ALLOC;
	else if (strcmp(argv[1], "graph") == 0)
		func = F_GRAPH;
	else
		return usage();
	long n = atol(argv[2]);
	int threads = argc > 3 ? atoi(argv[3]) : 1;
	long unit = threads * (func == F_ALLOC ? 2 : 1);
	if (n <= 0 || threads <= 0 || threads > 256 || n % unit)
		return usage();
	per_thread = n / threads;
	/* A real driver (first on LD_LIBRARY_PATH) would time something else entirely. */
	if (!dlsym(RTLD_DEFAULT, "cuSimulatedDriver")) {
		fprintf(stderr, "calls: libcuda.so.1 is not the simulated driver of tests/ (LD_LIBRARY_PATH?)\n");
		return 1;
	}
	if (cuInit(0)) {
		fprintf(stderr, "calls: cuInit failed\n");
		return 1;
	}
	if (func == F_GRAPH && make_graph()) {
		fprintf(stderr, "calls: cannot make the graph\n");
		return 1;
	}

	pthread_t tids[256];
	pthread_barrier_init(&start, NULL, (unsigned)threads);
	for (int i = 1; i < threads; i++)
		if (pthread_create(&tids[i], NULL, worker, NULL)) {
			fprintf(stderr, "calls: cannot create a thread\n");
			return 1;
		}
	pthread_barrier_wait(&start);
	double t0 = now_s();
	loop();
	for (int i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	double t1 = now_s();

	printf("calls func=%s n=%ld threads=%d ns_per_call=%.1f\n", argv[1], n, threads,
	       (t1 - t0) * 1e9 / (double)n);
	if (failures) {
		fprintf(stderr, "calls: %d calls failed\n", failures);
		return 1;
	}
	return 0;
}
