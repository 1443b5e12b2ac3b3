/* lambdas.cu — kernels of nvcc's extended lambdas (--extended-lambda), as PyTorch's elementwise
 * kernels are: a template kernel instantiated with a __host__ __device__ lambda and with a
 * __device__ lambda. nvcc names their host side with placeholder types (the stub and its static
 * __handle variable hold "Unvhdl…" / "Unvdl…", which __cxa_demangle cannot read), the device side
 * (what the runtime registers, the driver and CUPTI know) with the lambdas' own types ("UlfE_").
 * Built by nvcc with -cudart shared; run on the SIMULATED runtime and driver by
 * tests/e2e/sim_lambda_names.sh. Usage: lambdas GO_FILE
 * Launches each kernel once (its __handle filled), prints "ready <pid>", waits for GO_FILE, then
 * launches twice<> 30 and plus_one<> 20 more times, <<<(1,1,1), (256,1,1)>>>, synchronizes and
 * prints "lambdas: launches=52 failures=N", exit 0. */
#include <cstdio>

#include "progs.h"

template <typename F> __global__ void apply(float *p, int n, F f)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = f(p[i]);
}

int main(int argc, char **argv)
{
	const int n = 256;
	float *d = NULL;
	int failures = 0, launches = 0;
	if (argc != 2) {
		fprintf(stderr, "usage: lambdas GO_FILE\n");
		return 2;
	}
	auto twice = [] __host__ __device__(float x) { return 2 * x; };
	auto plus_one = [] __device__(float x) { return x + 1; };
	failures += cudaMalloc(&d, n * sizeof *d) != cudaSuccess;
	apply<<<1, n>>>(d, n, twice);
	failures += cudaGetLastError() != cudaSuccess;
	apply<<<1, n>>>(d, n, plus_one);
	failures += cudaGetLastError() != cudaSuccess;
	launches += 2;
	progs_ready();
	progs_wait_go(argv[1]);
	for (int i = 0; i < 30; i++, launches++) {
		apply<<<1, n>>>(d, n, twice);
		failures += cudaGetLastError() != cudaSuccess;
	}
	for (int i = 0; i < 20; i++, launches++) {
		apply<<<1, n>>>(d, n, plus_one);
		failures += cudaGetLastError() != cudaSuccess;
	}
	failures += cudaDeviceSynchronize() != cudaSuccess;
	failures += cudaFree(d) != cudaSuccess;
	printf("lambdas: launches=%d failures=%d\n", launches, failures);
	return 0;
}
