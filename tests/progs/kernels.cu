/* kernels.cu — real __global__ kernels launched with <<<>>>, built by nvcc with -cudart shared:
 * CUDA 13's nvcc makes each stub call __cudaGetKernel once and launch through
 * __cudaLaunchKernel(handle, ...), so cudaLaunchKernel sees an opaque handle, not the stub.
 * Usage: kernels [--verify]   (--verify: check the results; only where kernels really run)
 *
 * Kernels and launches (n = 4096):
 *   void fill<float>(float*, float, int)        x3  <<<(4,1,1),   (1024,1,1)>>>
 *   void fill<int>(int*, int, int)              x2  <<<(64,1,1),  (64,1,1)>>>
 *   vec_add(float*, float const*, int)          x7  <<<(16,1,1),  (256,1,1)>>>
 *   nn::relu(float*, int)                       x5  <<<(8,1,1),   (512,1,1)>>>
 *   vec_add(float*, float const*, int)          x1  cudaLaunchKernelEx (so cudaLaunchKernelExC
 *                                                   with the host stub), grid (32,1,1) block (128,1,1)
 *   => 18 launches: vec_add 8, nn::relu 5, fill<float> 3, fill<int> 2
 * Other calls, exactly: cudaMalloc x3 (16384 B each), cudaMemset x1 (16384 B),
 * cudaGetLastError x5 (after each group of launches), cudaDeviceSynchronize x1,
 * cudaMemcpy D2H x2 (16384 B each), cudaFree x3. Never frees less: no leak.
 * Prints "kernels: launches vec_add=8 nn::relu=5 fill<float>=3 fill<int>=2" and "kernels: ok"
 * (or each failing call and "kernels: FAILED ..."; exit 0 all the same unless --verify fails). */
#include <cstdio>
#include <cstring>

#include "progs.h"

__global__ void vec_add(float *a, const float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		a[i] += b[i];
}

namespace nn {
__global__ void relu(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n && x[i] < 0)
		x[i] = 0;
}
} // namespace nn

template <typename T> __global__ void fill(T *x, T value, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = value;
}

#define CHECK(name, expr) progs_check(&f, name, (int)(expr))

int main(int argc, char **argv)
{
	const int n = 4096;
	const size_t bytes = n * sizeof(float);
	bool verify = argc > 1 && strcmp(argv[1], "--verify") == 0;
	struct fails f = {};
	float *a = NULL, *b = NULL;
	int *c = NULL;
	int counts[4] = { 0, 0, 0, 0 };	/* vec_add, relu, fill<float>, fill<int> */

	CHECK("cudaMalloc", cudaMalloc(&a, bytes));
	CHECK("cudaMalloc", cudaMalloc(&b, bytes));
	CHECK("cudaMalloc", cudaMalloc(&c, n * sizeof(int)));
	CHECK("cudaMemset", cudaMemset(a, 0, bytes));

	for (int i = 0; i < 3; i++, counts[2]++)
		fill<float><<<dim3(4, 1, 1), dim3(1024, 1, 1)>>>(b, 2.0f, n);
	CHECK("cudaGetLastError", cudaGetLastError());
	for (int i = 0; i < 2; i++, counts[3]++)
		fill<int><<<dim3(64, 1, 1), dim3(64, 1, 1)>>>(c, 7, n);
	CHECK("cudaGetLastError", cudaGetLastError());
	for (int i = 0; i < 7; i++, counts[0]++)
		vec_add<<<dim3(16, 1, 1), dim3(256, 1, 1)>>>(a, b, n);
	CHECK("cudaGetLastError", cudaGetLastError());
	for (int i = 0; i < 5; i++, counts[1]++)
		nn::relu<<<dim3(8, 1, 1), dim3(512, 1, 1)>>>(a, n);
	CHECK("cudaGetLastError", cudaGetLastError());

	cudaLaunchConfig_t config = {};
	config.gridDim = dim3(32, 1, 1);
	config.blockDim = dim3(128, 1, 1);
	CHECK("cudaLaunchKernelExC", cudaLaunchKernelEx(&config, vec_add, a, (const float *)b, n));
	counts[0]++;
	CHECK("cudaGetLastError", cudaGetLastError());

	CHECK("cudaDeviceSynchronize", cudaDeviceSynchronize());
	static float ha[4096];
	static int hc[4096];
	CHECK("cudaMemcpy", cudaMemcpy(ha, a, bytes, cudaMemcpyDeviceToHost));
	CHECK("cudaMemcpy", cudaMemcpy(hc, c, n * sizeof(int), cudaMemcpyDeviceToHost));
	CHECK("cudaFree", cudaFree(a));
	CHECK("cudaFree", cudaFree(b));
	CHECK("cudaFree", cudaFree(c));

	long wrong = 0;
	if (verify)
		for (int i = 0; i < n; i++)
			wrong += ha[i] != 16.0f || hc[i] != 7;
	printf("kernels: launches vec_add=%d nn::relu=%d fill<float>=%d fill<int>=%d\n", counts[0],
	       counts[1], counts[2], counts[3]);
	if (f.total == 0 && wrong == 0) {
		printf("kernels: ok%s\n", verify ? " verified" : "");
		return 0;
	}
	progs_print_fails("kernels", &f);
	printf("kernels: FAILED failures=%ld wrong=%ld\n", f.total, wrong);
	return wrong ? 1 : 0;
}
