// driver_api.cpp — the CUDA driver API used directly, no runtime at all (a .cpp: no kernels,
// built with `nvcc -cudart none ... -lcuda`): a module loaded from a cubin embedded in the executable
// (drv_kernels.cu, compiled with `nvcc -cubin`; CUBIN_PATH names it at build time), functions
// looked up by name, launches with cuLaunchKernel and cuLaunchKernelEx, cuMemAlloc/cuMemcpy/
// cuMemset/cuMemFree, pinned host memory, async copies. usage: driver_api [--go FILE]
//
// Set-up (before the go file; launch mode only): cuInit, the primary context, a first
// module and its drv_early function (cuModuleGetFunction x1).
// Measured: the second module and its two functions, then the work listed in EXPECT; drv_early is
// launched twice with the CUfunction fetched before the go file.
#include <cuda.h>

#include "gpucheck.h"

#ifndef CUBIN_PATH
#error "build with -DCUBIN_PATH='\"/path/to/drv_kernels.cubin\"' (scripts/gpu-check does)"
#endif

// The cubin, embedded at build time; NUL-terminated after the data, as cuModuleLoadData wants
// for text images (harmless for ELF ones).
__asm__(".pushsection .rodata\n"
	".balign 64\n"
	".globl drv_cubin\n"
	"drv_cubin:\n"
	".incbin \"" CUBIN_PATH "\"\n"
	".byte 0\n"
	".popsection\n");
extern "C" const unsigned char drv_cubin[];

#define NF ((int)(MiB / sizeof(float)))

#define CU(x)                                                         \
	do {                                                          \
		CUresult r_ = (x);                                    \
		if (r_ != CUDA_SUCCESS) {                             \
			const char *n_ = NULL;                        \
			cuGetErrorName(r_, &n_);                      \
			gc_fail(#x, n_ ? n_ : "unknown CUresult");    \
		}                                                     \
	} while (0)

static void print_expect(void)
{
	printf("EXPECT {\"program\": \"driver_api\","
	       " \"setup\": {\"api\": {\"cuModuleGetFunction\": 1}},"
	       " \"measured\": {\"kernels\": {"
	       "\"drv_fill\": {\"launches\": 8, \"grid\": [1024,1,1], \"block\": [256,1,1]},"
	       " \"drv::saxpy(float*, float const*, float, int)\": {\"launches\": 4, \"grid\": [512,1,1], \"block\": [512,1,1]},"
	       " \"drv_early\": {\"launches\": 2, \"grid\": [32,1,1], \"block\": [128,1,1]}},"
	       " \"launches\": 14,"
	       " \"transfers\": {\"H2D\": {\"sync\": [2, %lu], \"async\": [1, %lu]},"
	       " \"D2H\": {\"sync\": [2, %lu], \"async\": [1, %lu]},"
	       " \"D2D\": {\"sync\": [1, %lu]}},"
	       " \"memset\": [1, %lu], \"synchronize\": 3,"
	       " \"api\": {\"cuModuleGetFunction\": 2, \"cuMemAlloc_v2\": 3, \"cuMemAllocHost_v2\": 1,"
	       " \"cuMemcpyHtoD_v2\": 2, \"cuMemcpyDtoH_v2\": 2, \"cuMemcpyDtoD_v2\": 1, \"cuMemcpyHtoDAsync_v2\": 1,"
	       " \"cuMemcpyDtoHAsync_v2\": 1, \"cuMemsetD32_v2\": 1, \"cuCtxSynchronize\": 1,"
	       " \"cuStreamSynchronize\": 2, \"cuMemFree_v2\": 2, \"cuMemFreeHost\": 1},"
	       " \"leaks\": [{\"kind\": \"device\", \"bytes\": %lu, \"api\": \"cuMemAlloc_v2\"}],"
	       " \"allocations\": 4, \"frees\": 3}}\n",
	       2 * MiB, MiB, 4 * MiB, MiB, MiB, 3 * MiB, 3 * MiB);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	gc_name = "driver_api";
	print_expect();

	// --- set-up ---
	CUdevice dev;
	CUcontext ctx;
	CUstream s = 0;	// the legacy default stream (async calls on it are still the async API)
	CUmodule early_mod, mod;
	CUfunction f_early, f_fill, f_saxpy;
	float *hx = (float *)malloc(MiB), *hy = (float *)malloc(MiB), *hout = (float *)malloc(3 * MiB);
	if (!hx || !hy || !hout)
		gc_fail("malloc", NULL);
	for (int i = 0; i < NF; i++) {
		hx[i] = 1.0f;
		hy[i] = 3.0f;
	}
	CU(cuInit(0));
	CU(cuDeviceGet(&dev, 0));
	CU(cuDevicePrimaryCtxRetain(&ctx, dev));
	CU(cuCtxSetCurrent(ctx));
	CU(cuModuleLoadData(&early_mod, drv_cubin));
	CU(cuModuleGetFunction(&f_early, early_mod, "drv_early"));

	gc_wait_go(argc, argv);

	// --- measured ---
	CU(cuModuleLoadData(&mod, drv_cubin));
	CU(cuModuleGetFunction(&f_fill, mod, "drv_fill"));
	CU(cuModuleGetFunction(&f_saxpy, mod, "_ZN3drv5saxpyEPfPKffi"));

	CUdeviceptr da, db, dc;
	float *hp;
	CU(cuMemAlloc(&da, MiB));
	CU(cuMemAlloc(&db, MiB));
	CU(cuMemAlloc(&dc, 3 * MiB));	// leaked
	CU(cuMemAllocHost((void **)&hp, MiB));
	CU(cuMemcpyHtoD(da, hx, MiB));
	CU(cuMemcpyHtoD(db, hy, MiB));
	CU(cuMemsetD32(dc, 0, 3 * MiB / 4));

	int n = NF;
	float v3 = 3.0f, v4 = 4.0f, two = 2.0f;
	CUdeviceptr dc1 = dc + MiB;
	void *fill_args[] = { &dc, &v3, &n };
	for (int i = 0; i < 6; i++)	// dc[0, NF) = 3
		CU(cuLaunchKernel(f_fill, 1024, 1, 1, 256, 1, 1, 0, NULL, fill_args, NULL));
	void *fill1_args[] = { &dc1, &v4, &n };
	CUlaunchConfig cfg = {};
	cfg.gridDimX = 1024, cfg.gridDimY = 1, cfg.gridDimZ = 1;
	cfg.blockDimX = 256, cfg.blockDimY = 1, cfg.blockDimZ = 1;
	for (int i = 0; i < 2; i++)	// dc[NF, 2NF) = 4
		CU(cuLaunchKernelEx(&cfg, f_fill, fill1_args, NULL));
	void *saxpy_args[] = { &da, &db, &two, &n };
	for (int i = 0; i < 4; i++)	// da = 1 + 4 * 2 * 3 = 25
		CU(cuLaunchKernel(f_saxpy, 512, 1, 1, 512, 1, 1, 0, NULL, saxpy_args, NULL));
	void *early_args[] = { &db, &n };
	for (int i = 0; i < 2; i++)	// db = 3 + 2 = 5
		CU(cuLaunchKernel(f_early, 32, 1, 1, 128, 1, 1, 0, NULL, early_args, NULL));
	CU(cuCtxSynchronize());

	CU(cuMemcpyDtoD(dc + 2 * MiB, da, MiB));	// dc[2NF, 3NF) = 25
	CU(cuMemcpyDtoH(hout, dc, 3 * MiB));
	gc_expect_floats("drv_fill x6 (cuLaunchKernel)", hout, NF, 3.0f);
	gc_expect_floats("drv_fill x2 (cuLaunchKernelEx)", hout + NF, NF, 4.0f);
	gc_expect_floats("drv::saxpy x4, then cuMemcpyDtoD", hout + 2 * NF, NF, 25.0f);
	CU(cuMemcpyDtoH(hout, db, MiB));
	gc_expect_floats("drv_early x2", hout, NF, 5.0f);

	for (int i = 0; i < NF; i++)
		hp[i] = 9.0f;
	CU(cuMemcpyHtoDAsync(da, hp, MiB, s));
	CU(cuStreamSynchronize(s));
	memset(hp, 0, MiB);
	CU(cuMemcpyDtoHAsync(hp, da, MiB, s));
	CU(cuStreamSynchronize(s));
	gc_expect_floats("async H2D then async D2H", hp, NF, 9.0f);

	CU(cuMemFree(da));
	CU(cuMemFree(db));
	CU(cuMemFreeHost(hp));
	gc_ok("launches=14 leaked=3 MiB");
	return 0;
}
