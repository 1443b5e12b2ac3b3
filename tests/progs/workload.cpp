/* workload.cpp — one iteration of known CUDA runtime work, for basic, static_basic and wait_then_work.
 *
 * Exactly these calls per iteration, in this order (MiB = 1048576 bytes):
 *   cudaMalloc            x3  p1 = 1 MiB, p2 = 2 MiB, p3 = 3 MiB
 *   cudaMallocHost        x1  h = 4096 bytes
 *   cudaMemcpy            x3  H2D 1 MiB host -> p1; D2D 1 MiB p1 -> p2; D2H 1 MiB p2 -> host
 *                             (the data that comes back is compared with what went in)
 *   cudaMemcpyAsync       x1  H2D 4096 bytes h -> p1, stream 0
 *   cudaMemset            x1  p3, 3 MiB
 *   cudaLaunchKernel      x10 func = scale(float*, int)             grid (4,2,1) block (128,1,1)
 *   cudaLaunchKernel      x5  func = ml::axpy<float>(float*, float*, int)
 *                                                                   grid (8,1,1) block (256,1,1)
 *   cudaDeviceSynchronize x1
 *   cudaFree              x2  p1, p2
 * and, only when free_leaks (basic --no-leak, last iteration):
 *   cudaFree x1 (p3), cudaFreeHost x1 (h)
 * So an iteration leaks 3 MiB of device memory (cudaMalloc) and 4096 bytes of pinned host memory
 * (cudaMallocHost) unless they are freed. Every call is made even when earlier ones failed.
 *
 * The "kernels" are plain host functions used as stubs (what nvcc generates for a legacy launch
 * is a host function with the kernel's mangled name): scale is _Z5scalePfi, axpy<float> is
 * _ZN2ml4axpyIfEEvPT_S2_i. They never run; the simulated runtime accepts them. */
#include <cuda_runtime_api.h>

#include <string.h>

#include "workload.h"

static volatile int stub_calls;

/* Distinct bodies, so that no identical-code folding merges the two stubs into one address. */
__attribute__((noinline)) void scale(float *x, int n)
{
	stub_calls = stub_calls + 1;
	(void)x, (void)n;
}

namespace ml {
template <typename T> __attribute__((noinline)) void axpy(T *x, T *y, int n)
{
	stub_calls = stub_calls + 2;
	(void)x, (void)y, (void)n;
}
template void axpy<float>(float *, float *, int);
} // namespace ml

#define MiB (1024UL * 1024UL)
#define CHECK(call_name, expr) progs_check(f, call_name, (int)(expr))

static float src[MiB / sizeof(float)], dst[MiB / sizeof(float)];

long work_iteration(struct fails *f, int iteration, bool free_leaks)
{
	void *p1 = NULL, *p2 = NULL, *p3 = NULL, *h = NULL;
	long mismatches = 0;
	int ok = 1;

	for (size_t i = 0; i < MiB / sizeof(float); i++) {
		src[i] = (float)i * 0.5f + (float)iteration;
		dst[i] = -1.0f;
	}
	ok &= CHECK("cudaMalloc", cudaMalloc(&p1, 1 * MiB)) == 0;
	ok &= CHECK("cudaMalloc", cudaMalloc(&p2, 2 * MiB)) == 0;
	ok &= CHECK("cudaMalloc", cudaMalloc(&p3, 3 * MiB)) == 0;
	CHECK("cudaMallocHost", cudaMallocHost(&h, 4096));

	ok &= CHECK("cudaMemcpy", cudaMemcpy(p1, src, 1 * MiB, cudaMemcpyHostToDevice)) == 0;
	ok &= CHECK("cudaMemcpy", cudaMemcpy(p2, p1, 1 * MiB, cudaMemcpyDeviceToDevice)) == 0;
	ok &= CHECK("cudaMemcpy", cudaMemcpy(dst, p2, 1 * MiB, cudaMemcpyDeviceToHost)) == 0;
	if (ok && memcmp(src, dst, sizeof(src)) != 0) {
		fprintf(stderr, "work: iteration %d: data copied back differs\n", iteration);
		mismatches++;
	}
	if (h)
		memset(h, 0x5a, 4096);
	CHECK("cudaMemcpyAsync", cudaMemcpyAsync(p1, h, 4096, cudaMemcpyHostToDevice, 0));
	CHECK("cudaMemset", cudaMemset(p3, 0, 3 * MiB));

	float *fp1 = (float *)p1, *fp2 = (float *)p2;
	int n = (int)(MiB / sizeof(float));
	void *scale_args[] = { &fp1, &n };
	void *axpy_args[] = { &fp1, &fp2, &n };
	void (*axpy_float)(float *, float *, int) = ml::axpy<float>;
	for (int i = 0; i < 10; i++)
		CHECK("cudaLaunchKernel", cudaLaunchKernel((const void *)scale, dim3(4, 2, 1),
							   dim3(128, 1, 1), scale_args, 0, 0));
	for (int i = 0; i < 5; i++)
		CHECK("cudaLaunchKernel", cudaLaunchKernel((const void *)axpy_float, dim3(8, 1, 1),
							   dim3(256, 1, 1), axpy_args, 0, 0));
	CHECK("cudaDeviceSynchronize", cudaDeviceSynchronize());

	CHECK("cudaFree", cudaFree(p1));
	CHECK("cudaFree", cudaFree(p2));
	if (free_leaks) {
		CHECK("cudaFree", cudaFree(p3));
		CHECK("cudaFreeHost", cudaFreeHost(h));
	}
	return mismatches;
}

int work_report(const char *prog, int iterations, const struct fails *f, long mismatches)
{
	if (f->total == 0 && mismatches == 0) {
		printf("%s: ok iterations=%d\n", prog, iterations);
		return 0;
	}
	progs_print_fails(prog, f);
	printf("%s: FAILED iterations=%d failures=%ld mismatches=%ld\n", prog, iterations, f->total,
	       mismatches);
	return mismatches ? 1 : 0;
}
