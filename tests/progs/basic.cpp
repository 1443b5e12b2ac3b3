/* basic.cpp — known CUDA runtime work, N times: the figures gputop must report exactly.
 * Usage: basic [ITERATIONS=1] [--no-leak]
 * Calls: ITERATIONS x the iteration listed in workload.cpp (3 cudaMalloc, 1 cudaMallocHost,
 * 3 cudaMemcpy, 1 cudaMemcpyAsync, 1 cudaMemset, 15 cudaLaunchKernel, 1 cudaDeviceSynchronize,
 * 2 cudaFree), plus with --no-leak 1 cudaFree (3 MiB) and 1 cudaFreeHost (4096 B) in the last
 * iteration. No other CUDA call. Prints "basic: ok iterations=N", or each failing call and
 * "basic: FAILED ..." (still exit 0: the real runtime without a GPU fails every call). */
#include <string.h>

#include "workload.h"

int main(int argc, char **argv)
{
	int iterations = 1;
	bool no_leak = false;
	struct fails f = {};
	long mismatches = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--no-leak") == 0)
			no_leak = true;
		else if ((iterations = atoi(argv[i])) < 1) {
			fprintf(stderr, "usage: basic [ITERATIONS] [--no-leak]\n");
			return 2;
		}
	}
	for (int i = 0; i < iterations; i++)
		mismatches += work_iteration(&f, i, no_leak && i == iterations - 1);
	return work_report("basic", iterations, &f, mismatches);
}
