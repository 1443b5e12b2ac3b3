/* ring_loop.c — driver launches from several threads at once, for the launch ring
 * (tests/e2e/launch_ring.sh), on the SIMULATED libcuda.so.1 (LD_LIBRARY_PATH=tests/bin/simdrv).
 * Usage: ring_loop THREADS N   Each thread makes N rounds of:
 *   cuLaunchKernel(ring_a, grid (2,3,4), block (32,2,1))
 *   cuLaunchKernelEx({grid (5,1,1), block (64,1,1)}, ring_b)
 * so THREADS x N launches of ring_a(int*) and as many of ring_b(float*) (names the simulated
 * driver gives cuModuleGetFunction's strings); with RB_CALLS=1 each round then also makes
 *   cuMemsetD8Async(its own 256-byte buffer, round & 255, 256, 0), cuStreamSynchronize(0)
 * (the call stub's calls). Prints "ring_loop: launches=<n> calls=<c> failures=<f>".
 * With RB_GO_FILE set it first prints "ready <pid>" and waits for that file (to be attached
 * to); with RB_STOP_FILE set it then keeps launching until that file exists, counting; with
 * RB_PAUSE_US it sleeps that long after each round (a launch rate like a real program's).
 * With RB_GO_FILE set it also prints "ring_loop: running" once every thread has made its first
 * round (its allocations and mappings are then all there: a test may take its picture).
 * With RB_IDLE_FILE set, once done it prints its result line and "idle", and waits for that
 * file before it exits (a test detaches from it while it makes no call). */
#include <cuda.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "progs.h"

static CUfunction fa, fb;
static long rounds;
static const char *stop_file;
static long pause_us;
static int with_calls, threads, started;
static const char *go;

static void *worker(void *arg)
{
	long *fails = arg, n = 0;
	CUdeviceptr buf = 0;
	if (with_calls && cuMemAlloc(&buf, 256) != CUDA_SUCCESS)
		(*fails)++;
	CUlaunchConfig cfg = { .gridDimX = 5, .gridDimY = 1, .gridDimZ = 1,
			       .blockDimX = 64, .blockDimY = 1, .blockDimZ = 1 };
	for (long i = 0; i < rounds || (stop_file && access(stop_file, F_OK) != 0); i++, n++) {
		*fails += cuLaunchKernel(fa, 2, 3, 4, 32, 2, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS;
		*fails += cuLaunchKernelEx(&cfg, fb, NULL, NULL) != CUDA_SUCCESS;
		if (with_calls) {
			*fails += cuMemsetD8Async(buf, (unsigned char)i, 256, NULL) != CUDA_SUCCESS;
			*fails += cuStreamSynchronize(NULL) != CUDA_SUCCESS;
		}
		if (i == 0 && go && __atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST) == threads) {
			printf("ring_loop: running\n");
			fflush(stdout);
		}
		if (pause_us)
			usleep((useconds_t)pause_us);
	}
	fails[1] = n;
	if (buf)
		cuMemFree(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	threads = argc > 1 ? atoi(argv[1]) : 4;
	rounds = argc > 2 ? atol(argv[2]) : 10000;
	if (threads < 1 || threads > 64)
		return 2;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx) || cuModuleLoadData(&mod, "ring") ||
	    cuModuleGetFunction(&fa, mod, "_Z6ring_aPi") || cuModuleGetFunction(&fb, mod, "_Z6ring_bPf")) {
		printf("ring_loop: set-up failed\n");
		return 1;
	}
	go = getenv("RB_GO_FILE");
	stop_file = getenv("RB_STOP_FILE");
	pause_us = getenv("RB_PAUSE_US") ? atol(getenv("RB_PAUSE_US")) : 0;
	with_calls = getenv("RB_CALLS") && atoi(getenv("RB_CALLS"));
	if (go) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		while (access(go, F_OK) != 0)
			progs_sleep_ms(10);
	}
	pthread_t th[64];
	long res[64][2] = { { 0 } };
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, worker, res[i]);
	long launches = 0, fails = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		fails += res[i][0];
		launches += 2 * res[i][1];
	}
	printf("ring_loop: launches=%ld calls=%ld failures=%ld\n", launches, with_calls ? launches : 0, fails);
	const char *idle = getenv("RB_IDLE_FILE");
	if (idle) {
		printf("idle\n");
		fflush(stdout);
		while (access(idle, F_OK) != 0)
			progs_sleep_ms(10);
	}
	return fails != 0;
}
