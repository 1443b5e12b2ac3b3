/* simcheck.c — checks the SIMULATED CUDA runtime itself (tests/sim), without gputop: the
 * behaviours the e2e tests rely on (pitch rounding, error returns, NULL handling, copies of every
 * kind, the last-error state). Run it on the simulated runtime alone and over the simulated
 * driver; each check prints "ok - ..." or "not ok - ...", exit 1 if any failed.
 * Not meant for the real runtime. */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <string.h>

#include "progs.h"

static int failed;

static void check(int cond, const char *what)
{
	printf("%s - %s\n", cond ? "ok" : "not ok", what);
	failed += !cond;
}

static void kernel_stub(float *x)
{
	(void)x;
}

int main(void)
{
	void *p = (void *)1, *q = NULL, *h = NULL;
	size_t pitch = 0;
	int n = -1;
	char buf[4096], back[4096];

	check(cudaGetDeviceCount(&n) == cudaSuccess && n == 1, "one device");
	check(cudaSetDevice(0) == cudaSuccess, "cudaSetDevice(0)");
	check(cudaSetDevice(1) == cudaErrorInvalidDevice, "cudaSetDevice(1) fails");
	check(cudaGetLastError() == cudaErrorInvalidDevice, "the failure is the last error");
	check(cudaGetLastError() == cudaSuccess, "cudaGetLastError resets it");

	check(cudaMalloc(&p, (size_t)2 << 40) == cudaErrorMemoryAllocation && p == NULL,
	      "2 TiB: cudaErrorMemoryAllocation and NULL");
	check(cudaPeekAtLastError() == cudaErrorMemoryAllocation, "peek sees it");
	check(cudaPeekAtLastError() == cudaErrorMemoryAllocation, "peek does not reset it");
	cudaGetLastError();
	check(cudaMalloc(&p, 0) == cudaSuccess && p == NULL, "size 0: success and NULL");
	check(cudaFree(NULL) == cudaSuccess, "cudaFree(NULL)");
	check(cudaFreeHost(NULL) == cudaSuccess, "cudaFreeHost(NULL)");
	check(cudaFree(buf) == cudaErrorInvalidValue, "cudaFree(unknown) fails");

	check(cudaMallocPitch(&p, &pitch, 1000, 7) == cudaSuccess && pitch == 1024,
	      "cudaMallocPitch rounds 1000 up to 1024");
	check(((uintptr_t)p & 4095) == 0, "allocations are page-aligned");
	for (int i = 0; i < 4096; i++)
		buf[i] = (char)(i * 7);
	check(cudaMemcpy2D(p, pitch, buf, 100, 100, 7, cudaMemcpyHostToDevice) == cudaSuccess,
	      "cudaMemcpy2D H2D");
	memset(back, 0, sizeof(back));
	check(cudaMemcpy2D(back, 100, p, pitch, 100, 7, cudaMemcpyDeviceToHost) == cudaSuccess &&
		      memcmp(back, buf, 700) == 0, "cudaMemcpy2D round trip");
	check(cudaFree(p) == cudaSuccess, "cudaFree(pitched)");
	check(cudaFree(p) == cudaErrorInvalidValue, "double free fails");

	check(cudaMallocManaged(&p, 4096, cudaMemAttachGlobal) == cudaSuccess && p, "cudaMallocManaged");
	check(cudaMallocAsync(&q, 4096, 0) == cudaSuccess && q, "cudaMallocAsync");
	check(cudaMemcpyPeer(q, 0, buf, 0, 4096) == cudaSuccess, "cudaMemcpyPeer");
	check(cudaMemcpy(p, q, 4096, cudaMemcpyDefault) == cudaSuccess && memcmp(p, buf, 4096) == 0,
	      "cudaMemcpy default kind");
	check(cudaMemsetAsync(p, 0x11, 4096, 0) == cudaSuccess && ((char *)p)[4095] == 0x11,
	      "cudaMemsetAsync");
	check(cudaMemcpy(p, q, 1, (enum cudaMemcpyKind)9) == cudaErrorInvalidMemcpyDirection,
	      "bad copy kind fails");
	check(cudaFreeAsync(q, 0) == cudaSuccess, "cudaFreeAsync");
	check(cudaFree(p) == cudaSuccess, "cudaFree(managed)");
	check(cudaHostAlloc(&h, 8192, 0) == cudaSuccess && h, "cudaHostAlloc");
	check(cudaFree(h) == cudaErrorInvalidValue, "cudaFree of host memory fails");
	check(cudaFreeHost(h) == cudaSuccess, "cudaFreeHost");
	check(cudaMallocFromPoolAsync(&p, 4096, NULL, 0) == cudaSuccess && p, "cudaMallocFromPoolAsync");
	check(cudaFreeAsync(p, 0) == cudaSuccess, "cudaFreeAsync(pool)");

	dim3 g = { 1, 1, 1 }, b = { 32, 1, 1 };
	check(cudaLaunchKernel((const void *)kernel_stub, g, b, NULL, 0, 0) == cudaSuccess,
	      "launch of a host function");
	check(cudaLaunchKernel(NULL, g, b, NULL, 0, 0) == cudaErrorInvalidDeviceFunction,
	      "launch of NULL fails");
	cudaLaunchConfig_t config;
	memset(&config, 0, sizeof(config));
	config.gridDim = g;
	config.blockDim = b;
	check(cudaLaunchKernelExC(&config, (const void *)kernel_stub, NULL) == cudaSuccess,
	      "cudaLaunchKernelExC");
	cudaKernel_t k1 = NULL, k2 = NULL;
	check(cudaGetKernel(&k1, (const void *)kernel_stub) == cudaSuccess && k1, "cudaGetKernel");
	check(cudaGetKernel(&k2, (const void *)kernel_stub) == cudaSuccess && k1 == k2,
	      "the same handle every time");
	check(cudaLaunchKernel((const void *)k1, g, b, NULL, 0, 0) == cudaSuccess, "launch of a handle");
	check(cudaDeviceSynchronize() == cudaSuccess && cudaStreamSynchronize(0) == cudaSuccess,
	      "synchronize");
	check(strcmp(cudaGetErrorName(cudaErrorInsufficientDriver), "cudaErrorInsufficientDriver") == 0,
	      "cudaGetErrorName");
	printf("simcheck: %s\n", failed ? "FAILED" : "ok");
	return failed ? 1 : 0;
}
