/* fleet_kernels.c — driver launches of many distinct kernels, with a known amount of device
 * memory live, for the metrics tests (tests/e2e/metrics_*.sh), on the SIMULATED libcuda.so.1
 * (LD_LIBRARY_PATH=tests/bin/simdrv).
 * Usage: fleet_kernels KERNELS LAUNCHES   (KERNELS 1..100000)
 * With RB_GO_FILE set it first prints "ready <pid>" and waits for that file. Then:
 *   cuModuleGetFunction of KERNELS names fleet_k00000, fleet_k00001, ... (extern "C" names)
 *   cuMemAlloc 1048576, 3145728 and 12345 bytes (kept live), cuMemAlloc 2097152 + cuMemFree
 *   LAUNCHES x cuLaunchKernel, launch i of kernel fleet_k<i % KERNELS>, grid (1,1,1) block (32,1,1)
 * and prints "fleet_kernels: kernels=K launches=<succeeded> live_bytes=4206649 failures=<f>".
 * With RB_STOP_FILE set it then waits for that file (so that a test can scrape the figures
 * while the program still runs) before it frees the three buffers and exits (status 0, or 1 if
 * a call failed). */
#include <cuda.h>
#include <stdlib.h>
#include <unistd.h>

#include "progs.h"

static const size_t live_sizes[] = { 1048576, 3145728, 12345 };
#define N_LIVE (sizeof(live_sizes) / sizeof(live_sizes[0]))

int main(int argc, char **argv)
{
	long kernels = argc > 1 ? atol(argv[1]) : 4, launches = argc > 2 ? atol(argv[2]) : 100;
	const char *go = getenv("RB_GO_FILE"), *stop = getenv("RB_STOP_FILE");
	if (kernels < 1 || kernels > 100000 || launches < 0)
		return 2;
	if (go) {
		progs_ready();
		progs_wait_go(go);
	}
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx) || cuModuleLoadData(&mod, "fleet")) {
		printf("fleet_kernels: set-up failed\n");
		return 1;
	}
	CUfunction *f = calloc((size_t)kernels, sizeof(*f));
	long fails = 0, done = 0;
	size_t live_bytes = 0;
	for (long k = 0; f && k < kernels; k++) {
		char name[32];
		snprintf(name, sizeof name, "fleet_k%05ld", k);
		fails += cuModuleGetFunction(&f[k], mod, name) != CUDA_SUCCESS;
	}
	CUdeviceptr live[N_LIVE] = { 0 }, gone = 0;
	for (size_t i = 0; i < N_LIVE; i++) {
		if (cuMemAlloc(&live[i], live_sizes[i]) == CUDA_SUCCESS)
			live_bytes += live_sizes[i];
		else
			fails++;
	}
	fails += cuMemAlloc(&gone, 2097152) != CUDA_SUCCESS || cuMemFree(gone) != CUDA_SUCCESS;
	for (long i = 0; f && i < launches; i++) {
		if (cuLaunchKernel(f[i % kernels], 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) == CUDA_SUCCESS)
			done++;
		else
			fails++;
	}
	printf("fleet_kernels: kernels=%ld launches=%ld live_bytes=%zu failures=%ld\n", kernels, done,
	       live_bytes, fails + !f);
	fflush(stdout);
	if (stop)
		while (access(stop, F_OK) != 0)
			progs_sleep_ms(10);
	for (size_t i = 0; i < N_LIVE; i++)
		if (live[i])
			cuMemFree(live[i]);
	free(f);
	return fails || !f;
}
