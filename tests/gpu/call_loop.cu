// call_loop.cu — the fastest loops of CUDA API calls a program makes, timed by the program
// itself, for scripts/gpu-scale (issue 23: a call never waits on gputop's drain).
// usage: call_loop N   N cudaStreamSynchronize(0) calls, then N/2 cudaMalloc(4 KiB)/cudaFree
// pairs. Prints one line:
//   LOOP {"sync_ns": ns per cudaStreamSynchronize, "alloc_ns": ns per cudaMalloc or cudaFree,
//         "n": N}
// after a warm-up (the context made, a first allocation freed).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "call_loop: %s: %s\n", what, cudaGetErrorString(e));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	void *p;
	check(cudaMalloc(&p, 4096), "cudaMalloc");
	check(cudaFree(p), "cudaFree");
	check(cudaStreamSynchronize(0), "cudaStreamSynchronize");
	double t0 = now_ns();
	for (long i = 0; i < n; i++)
		check(cudaStreamSynchronize(0), "cudaStreamSynchronize");
	double t1 = now_ns();
	for (long i = 0; i < n / 2; i++) {
		check(cudaMalloc(&p, 4096), "cudaMalloc");
		check(cudaFree(p), "cudaFree");
	}
	double t2 = now_ns();
	printf("LOOP {\"sync_ns\": %.1f, \"alloc_ns\": %.1f, \"n\": %ld}\n", (t1 - t0) / n, (t2 - t1) / n, n);
	return 0;
}
