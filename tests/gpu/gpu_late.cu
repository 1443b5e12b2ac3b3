// gpu_late.cu — the CUDA part of dlopen_late, a shared library built with `nvcc -shared
// -cudart shared`: loading it (after the go file) loads libcudart.so.13 with it, and its
// constructor registers late_kernel — all after gputop attached.
#include "gpucheck.h"

#define NF ((int)(MiB / sizeof(float)))

__global__ void late_kernel(float *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = 2.0f * p[i] + 1.0f;
}

// cudaMalloc 1 MiB (freed) and 512 KiB (leaked), cudaMemcpy H2D 1 MiB, late_kernel x4,
// cudaDeviceSynchronize, cudaMemcpy D2H 1 MiB, cudaFree. Exits the program on any error.
extern "C" void gpu_late_run(void)
{
	float *d, *leak, *h = (float *)malloc(MiB);

	gc_name = "dlopen_late";
	if (!h)
		gc_fail("malloc", NULL);
	for (int i = 0; i < NF; i++)
		h[i] = 0.0f;
	CK(cudaMalloc((void **)&d, MiB));
	CK(cudaMalloc((void **)&leak, 512 * KiB));
	CK(cudaMemcpy(d, h, MiB, cudaMemcpyHostToDevice));
	for (int i = 0; i < 4; i++) {
		late_kernel<<<NF / 128, 128>>>(d, NF);	// 0 -> 1 -> 3 -> 7 -> 15
		CK_LAUNCH();
	}
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(h, d, MiB, cudaMemcpyDeviceToHost));
	gc_expect_floats("late_kernel x4", h, NF, 15.0f);
	CK(cudaFree(d));
	free(h);
}
