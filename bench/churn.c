/* churn.c — the benchmark's starved-tracer program (bench/run's "a starved gputop" row): a
 * process whose threads keep the kernel's mmap lock busy while its main thread loads libraries.
 * Linked against the SIMULATED libcudart.so.13 of tests/, whose cudaMalloc and cudaFree map and
 * unmap: THREADS threads (default 16) loop on cudaMalloc(4 KiB), cudaLaunchKernel, cudaFree;
 * the main thread dlopens the LIBS libraries named on the command line (each a stop at the
 * dynamic linker's breakpoint under gputop), sleeps MS milliseconds (default 200) and exits
 * with the threads still calling. bench/run starts 8 at once, untraced and under gputop, and
 * times them to their end: what the programs wait for a gputop that gets 1/136 of the CPUs.
 *
 * Usage: churn [-t THREADS] [-m MS] LIB...   Prints "churn libs=N loaded=N" at its end. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The few runtime declarations needed (as bench/worker.c). */
typedef int cudaError_t;
typedef struct {
	unsigned int x, y, z;
} dim3;
cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaFree(void *p);
cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shm, void *stream);

__attribute__((noinline)) void churn_kernel(int *out)
{
	(void)out;
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		void *p = NULL;
		void *args[1] = { &p };
		cudaMalloc(&p, 4096);
		cudaLaunchKernel((const void *)churn_kernel, (dim3){ 1, 1, 1 }, (dim3){ 32, 1, 1 }, args, 0, NULL);
		cudaFree(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 16, ms = 200, c, loaded = 0;
	while ((c = getopt(argc, argv, "t:m:")) != -1) {
		if (c == 't')
			threads = atoi(optarg);
		else if (c == 'm')
			ms = atoi(optarg);
		else
			return 2;
	}
	for (int i = 0; i < threads; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, worker, NULL) != 0)
			return 1;
	}
	for (int i = optind; i < argc; i++)
		loaded += dlopen(argv[i], RTLD_NOW) != NULL;
	usleep((useconds_t)ms * 1000);
	printf("churn libs=%d loaded=%d\n", argc - optind, loaded);
	fflush(stdout);
	_exit(loaded == argc - optind ? 0 : 1);	/* the threads still calling */
}
