/* registered_kernels.c — many kernels registered, few launched, as a PyTorch rank does (its
 * libtorch_cuda.so registers ~21,000 kernels as it loads and launches a few hundred), on the
 * SIMULATED libcudart.so.13 (LD_LIBRARY_PATH=tests/bin/sim), for tests/e2e/kernel_rows.sh.
 * Usage: registered_kernels N L GO_FILE
 * Prints "ready <pid>", waits for GO_FILE, then makes the calls nvcc's glue makes when a module
 * loads: __cudaRegisterFatBinary, and __cudaRegisterFunction for N kernels named
 * "_Z11kernel<5 digits>Pfi" (kernel<i>(float*, int)), each with a host stub of its own; then
 * cudaLaunchKernel of the first L of them, kernel i i + 1 times (grid (1,1,1), block (32,1,1)),
 * and cudaDeviceSynchronize. Prints "registered_kernels: registered=N launched=L launches=T
 * failures=F" and exits 0 (1 if a call failed). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "progs.h"

void **__cudaRegisterFatBinary(void *fat_cubin);
void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
			    const char *device_name, int thread_limit, uint3 *tid, uint3 *bid,
			    dim3 *bdim, dim3 *gdim, int *wsize);

#define MAX_KERNELS 65536

static char stubs[MAX_KERNELS];		/* a host stub's address a kernel: stubs + i */

int main(int argc, char **argv)
{
	int n = argc > 3 ? atoi(argv[1]) : 0, l = argc > 3 ? atoi(argv[2]) : 0;
	long launches = 0;
	struct fails f = { 0 };

	if (n <= 0 || n > MAX_KERNELS || l < 0 || l > n) {
		fprintf(stderr, "usage: registered_kernels N L GO_FILE (0 < N <= %d, L <= N)\n", MAX_KERNELS);
		return 2;
	}
	progs_ready();
	progs_wait_go(argv[3]);
	void **module = __cudaRegisterFatBinary(NULL);
	for (int i = 0; i < n; i++) {
		char *name = malloc(32);	/* lives as long as the module, as nvcc's strings do */
		if (!name)
			return 1;
		snprintf(name, 32, "_Z11kernel%05dPfi", i);
		__cudaRegisterFunction(module, stubs + i, name, name, -1, NULL, NULL, NULL, NULL, NULL);
	}
	for (int i = 0; i < l; i++)
		for (int k = 0; k <= i; k++, launches++) {
			void *args[2] = { NULL, NULL };
			progs_check(&f, "cudaLaunchKernel",
				    cudaLaunchKernel(stubs + i, (dim3){ 1, 1, 1 }, (dim3){ 32, 1, 1 }, args, 0, 0));
		}
	progs_check(&f, "cudaDeviceSynchronize", cudaDeviceSynchronize());
	printf("registered_kernels: registered=%d launched=%d launches=%ld failures=%ld\n", n, l, launches, f.total);
	return f.total ? 1 : 0;
}
