/* module_names.c — kernels loaded while gputop traces, through a name buffer the program writes
 * over right after each call, and a handle the driver reuses for another kernel, on the
 * SIMULATED libcuda.so.1 (LD_LIBRARY_PATH=tests/bin/simdrv), for tests/e2e/sim_module_names.sh.
 * Usage: module_names
 * Calls, in this order: cuInit, cuDeviceGet, cuDevicePrimaryCtxRetain, cuCtxSetCurrent,
 * cuModuleLoadData, cuLibraryLoadData; for i in 0..7 cuModuleGetFunction of "_Z6mfun_<i>Pf"
 * (mfun_<i>(float*)) and cuLibraryGetKernel of "_Z6lker_<i>Pi" (lker_<i>(int*)), the name
 * written into one buffer, which holds "_Z9overwritePc" once each call returned; then
 * cuLaunchKernel of mfun_<i> i + 1 times, grid (i+1,1,1) block (32,1,1), and of each lker_<i>
 * (a CUkernel, launched as a CUfunction) twice, grid (1,1,1) block (64,1,1);
 * cuModuleGetFunction of mfun_1 again (the same handle) and 2 more launches of it; then the
 * simulation's cuSimReuseHandle makes mfun_0's handle stand for "_Z6reusedPf" (as a driver may
 * after a module's unload), cuModuleGetFunction of that name returns it, a 300 ms sleep (gputop
 * reads what the program did meanwhile) and 3 launches of it, grid (5,1,1) block (128,1,1).
 * Launches: mfun_0 1, mfun_1 4, mfun_<i> i + 1 for i 2..7, lker_<i> 2 each, reused 3: 57.
 * Prints "module_names: functions=8 kernels=8 launches=57 reused=1 failures=0" (reused=0 when the
 * reused handle is not mfun_0's), exit 0, or 1 if a call failed. */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>

#include "progs.h"

#define N 8

static char buf[32];	/* one name buffer for every call, as a loop over names may have */

static const char *name(const char *fmt, int i)
{
	snprintf(buf, sizeof buf, fmt, i);
	return buf;
}

static void overwrite(void)
{
	snprintf(buf, sizeof buf, "_Z9overwritePc");
}

int main(void)
{
	struct fails f = { 0 };
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUlibrary lib;
	CUfunction fun[N], again, reused;
	CUkernel ker[N];
	long launches = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx) || cuModuleLoadData(&mod, "module") ||
	    cuLibraryLoadData(&lib, "library", NULL, NULL, 0, NULL, NULL, 0)) {
		printf("module_names: set-up failed\n");
		return 1;
	}
	for (int i = 0; i < N; i++) {
		progs_check(&f, "cuModuleGetFunction", cuModuleGetFunction(&fun[i], mod, name("_Z6mfun_%dPf", i)));
		overwrite();
		progs_check(&f, "cuLibraryGetKernel", cuLibraryGetKernel(&ker[i], lib, name("_Z6lker_%dPi", i)));
		overwrite();
	}
	for (int i = 0; i < N; i++) {
		for (int k = 0; k <= i; k++)
			launches += !progs_check(&f, "cuLaunchKernel",
						 cuLaunchKernel(fun[i], (unsigned)i + 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
		for (int k = 0; k < 2; k++)
			launches += !progs_check(&f, "cuLaunchKernel",
						 cuLaunchKernel((CUfunction)ker[i], 1, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL));
	}
	progs_check(&f, "cuModuleGetFunction", cuModuleGetFunction(&again, mod, name("_Z6mfun_%dPf", 1)));
	overwrite();
	for (int k = 0; k < 2; k++)
		launches += !progs_check(&f, "cuLaunchKernel",
					 cuLaunchKernel(again, 2, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));

	CUresult (*reuse)(void *, const char *) = (CUresult (*)(void *, const char *))dlsym(RTLD_DEFAULT, "cuSimReuseHandle");
	if (!reuse) {
		printf("module_names: not the simulated driver\n");
		return 1;
	}
	progs_check(&f, "cuSimReuseHandle", reuse(fun[0], "_Z6reusedPf"));
	progs_check(&f, "cuModuleGetFunction", cuModuleGetFunction(&reused, mod, name("_Z6reusedPf", 0)));
	overwrite();
	progs_sleep_ms(300);
	for (int k = 0; k < 3; k++)
		launches += !progs_check(&f, "cuLaunchKernel",
					 cuLaunchKernel(reused, 5, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL));
	progs_print_fails("module_names", &f);
	printf("module_names: functions=%d kernels=%d launches=%ld reused=%d failures=%ld\n", N, N, launches,
	       reused == fun[0], f.total);
	return f.total ? 1 : 0;
}
