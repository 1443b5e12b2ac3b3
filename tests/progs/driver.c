/* driver.c — the CUDA driver API called directly (no runtime), on the simulated libcuda.so.1
 * in tests (LD_LIBRARY_PATH=tests/bin/simdrv); the PTX below makes it run on a real GPU too.
 * Linked against the toolkit's stub libcuda.so (NEEDED libcuda.so.1).
 * Usage: driver [--verify]   (--verify: one more cuMemcpyDtoH_v2 to check the kernel ran;
 *                             only where kernels really run)
 *
 * Calls, exactly, in this order:
 *   cuInit x1, cuDeviceGet x1, cuDevicePrimaryCtxRetain x1, cuCtxSetCurrent x1,
 *   cuModuleLoadData x1 (PTX), cuModuleGetFunction x1 (name "_Z6driverPf" = driver(float*))
 *   cuMemAlloc_v2     x2  a = 65536 B, b = 131072 B
 *   cuMemcpyHtoD_v2   x1  65536 B host -> a
 *   cuMemcpyDtoH_v2   x1  65536 B a -> host, compared with what went in
 *   cuLaunchKernel    x9  f, grid (3,1,1) block (64,1,1), shared 0, stream 0
 *   cuCtxSynchronize  x1
 *   (--verify only: cuMemcpyDtoH_v2 x1 65536 B, checks the first 192 floats grew by 9)
 *   cuMemFree_v2      x1  a   (b, 131072 B, leaks on purpose)
 * Prints "driver: ok launches=9" (or each failing call and "driver: FAILED ..."), exit 0 unless
 * data came back wrong from calls that succeeded. */
#include <cuda.h>
#include <string.h>

#include "progs.h"

static const char ptx[] =
	".version 9.0\n"
	".target sm_75\n"
	".address_size 64\n"
	".visible .entry _Z6driverPf(\n"
	"\t.param .u64 _Z6driverPf_param_0\n"
	")\n"
	"{\n"
	"\t.reg .f32 \t%f<3>;\n"
	"\t.reg .b32 \t%r<5>;\n"
	"\t.reg .b64 \t%rd<5>;\n"
	"\tld.param.u64 \t%rd1, [_Z6driverPf_param_0];\n"
	"\tcvta.to.global.u64 \t%rd2, %rd1;\n"
	"\tmov.u32 \t%r1, %ctaid.x;\n"
	"\tmov.u32 \t%r2, %ntid.x;\n"
	"\tmov.u32 \t%r3, %tid.x;\n"
	"\tmad.lo.s32 \t%r4, %r1, %r2, %r3;\n"
	"\tmul.wide.s32 \t%rd3, %r4, 4;\n"
	"\tadd.s64 \t%rd4, %rd2, %rd3;\n"
	"\tld.global.f32 \t%f1, [%rd4];\n"
	"\tadd.f32 \t%f2, %f1, 0f3F800000;\n"
	"\tst.global.f32 \t[%rd4], %f2;\n"
	"\tret;\n"
	"}\n";

#define N_FLOATS (65536 / sizeof(float))
#define CHECK(name, expr) progs_check(&f, name, (int)(expr))

int main(int argc, char **argv)
{
	int verify = argc > 1 && strcmp(argv[1], "--verify") == 0;
	static float host[N_FLOATS], back[N_FLOATS];
	struct fails f = { 0 };
	CUdevice dev = 0;
	CUcontext ctx = NULL;
	CUmodule mod = NULL;
	CUfunction fn = NULL;
	CUdeviceptr a = 0, b = 0;
	long wrong = 0;
	int launched = 0;

	for (size_t i = 0; i < N_FLOATS; i++) {
		host[i] = (float)i;
		back[i] = -1.0f;
	}
	CHECK("cuInit", cuInit(0));
	CHECK("cuDeviceGet", cuDeviceGet(&dev, 0));
	CHECK("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK("cuCtxSetCurrent", cuCtxSetCurrent(ctx));
	CHECK("cuModuleLoadData", cuModuleLoadData(&mod, ptx));
	CHECK("cuModuleGetFunction", cuModuleGetFunction(&fn, mod, "_Z6driverPf"));
	CHECK("cuMemAlloc_v2", cuMemAlloc(&a, 65536));
	CHECK("cuMemAlloc_v2", cuMemAlloc(&b, 131072));
	int ok = CHECK("cuMemcpyHtoD_v2", cuMemcpyHtoD(a, host, 65536)) == 0;
	ok &= CHECK("cuMemcpyDtoH_v2", cuMemcpyDtoH(back, a, 65536)) == 0;
	if (ok && memcmp(host, back, sizeof(host)) != 0) {
		fprintf(stderr, "driver: data copied back differs\n");
		wrong++;
	}
	void *args[] = { &a };
	for (int i = 0; i < 9; i++)
		launched += CHECK("cuLaunchKernel", cuLaunchKernel(fn, 3, 1, 1, 64, 1, 1, 0, NULL,
								   args, NULL)) == 0;
	CHECK("cuCtxSynchronize", cuCtxSynchronize());
	if (verify && CHECK("cuMemcpyDtoH_v2", cuMemcpyDtoH(back, a, 65536)) == 0)
		for (int i = 0; i < 192; i++)
			wrong += back[i] != host[i] + 9.0f;
	CHECK("cuMemFree_v2", cuMemFree(a));

	if (f.total == 0 && wrong == 0) {
		printf("driver: ok launches=%d%s\n", launched, verify ? " verified" : "");
		return 0;
	}
	progs_print_fails("driver", &f);
	printf("driver: FAILED launches=%d failures=%ld wrong=%ld\n", launched, f.total, wrong);
	return wrong ? 1 : 0;
}
