/* dlopen_late.c — a program with no CUDA library at all until its go file appears; then it
 * dlopens libgpu_late.so (gpu_late.cu, which pulls in libcudart.so.13) and runs its work. So
 * gputop attaches to a process without CUDA and must notice the libraries when they arrive.
 * usage: dlopen_late LIBGPU_LATE.so [--go FILE]
 * Set-up: nothing (no CUDA before the go file). Measured: gpu_late_run(), listed in EXPECT. */
#include <dlfcn.h>

#include "gpucheck.h"

int main(int argc, char **argv)
{
	gc_name = "dlopen_late";
	printf("EXPECT {\"program\": \"dlopen_late\", \"setup\": {},"
	       " \"measured\": {\"kernels\": {\"late_kernel(float*, int)\": {\"launches\": 4, \"grid\": [2048,1,1], \"block\": [128,1,1]}},"
	       " \"launches\": 4, \"transfers\": {\"H2D\": {\"sync\": [1, %lu]}, \"D2H\": {\"sync\": [1, %lu]}},"
	       " \"synchronize\": 1,"
	       " \"api\": {\"cudaMalloc\": 2, \"cudaMemcpy\": 2, \"cudaDeviceSynchronize\": 1, \"cudaFree\": 1},"
	       " \"leaks\": [{\"kind\": \"device\", \"bytes\": %lu, \"api\": \"cudaMalloc\"}],"
	       " \"allocations\": 2, \"frees\": 1}}\n",
	       MiB, MiB, 512 * KiB);
	fflush(stdout);
	if (argc < 2 || argv[1][0] == '-')
		gc_fail("usage", "dlopen_late LIBGPU_LATE.so [--go FILE]");

	gc_wait_go(argc, argv);

	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		gc_fail("dlopen", dlerror());
	void (*run)(void) = (void (*)(void))dlsym(lib, "gpu_late_run");
	if (!run)
		gc_fail("dlsym gpu_late_run", dlerror());
	run();
	gc_ok("launches=4 leaked=512 KiB");
	return 0;
}
