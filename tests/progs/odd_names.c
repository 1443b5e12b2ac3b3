/* odd_names.c — kernels whose names hold any bytes (quotes, backslashes, ';', control
 * characters, UTF-8 and bytes that are not), for the tests of gputop's outputs
 * (tests/e2e/odd_names.sh), on the SIMULATED libcuda.so.1 (LD_LIBRARY_PATH=tests/bin/simdrv).
 * Usage: odd_names   (the test runs a copy whose own file name is not UTF-8 either)
 * Prints "name HEX" for each kernel name (its bytes in hex), then: cuModuleGetFunction of each,
 * cuMemAlloc 4096 (kept: a leak), 2 cuLaunchKernel of each, grid (1,1,1) block (32,1,1), and
 * "odd_names: kernels=K launches=L failures=F". With RB_STOP_FILE set it then waits for that
 * file (so that a test can scrape /metrics while it runs) before it exits (status 0, or 1 if a
 * call failed). */
#include <cuda.h>

#include "progs.h"

static const char *const names[] = {
	"plain_kernel",
	"quote\"back\\slash;semi",
	"ctl\x01\x1f tab\t nl\n cr\r del\x7f",
	"utf8 caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",
	"ff\xff fe\xfe lone\x80 c0af\xc0\xaf",
	"surrogate\xed\xa0\x80 big\xf4\x90\x80\x80 cut\xe2\x82",
	"end_cut\xf0\x9f\x98",
};
#define N_NAMES (sizeof(names) / sizeof(names[0]))

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f[N_NAMES];
	CUdeviceptr leak;
	long fails = 0, done = 0;

	for (size_t i = 0; i < N_NAMES; i++) {
		printf("name ");
		for (const unsigned char *p = (const unsigned char *)names[i]; *p; p++)
			printf("%02x", *p);
		printf("\n");
	}
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx) || cuModuleLoadData(&mod, "odd")) {
		printf("odd_names: set-up failed\n");
		return 1;
	}
	for (size_t i = 0; i < N_NAMES; i++)
		fails += cuModuleGetFunction(&f[i], mod, names[i]) != CUDA_SUCCESS;
	fails += cuMemAlloc(&leak, 4096) != CUDA_SUCCESS;
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < N_NAMES; i++) {
			if (cuLaunchKernel(f[i], 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) == CUDA_SUCCESS)
				done++;
			else
				fails++;
		}
	printf("odd_names: kernels=%zu launches=%ld failures=%ld\n", N_NAMES, done, fails);
	fflush(stdout);
	const char *stop = getenv("RB_STOP_FILE");
	if (stop)
		while (access(stop, F_OK) != 0)
			progs_sleep_ms(10);
	return fails != 0;
}
