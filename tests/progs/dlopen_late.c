/* dlopen_late.c — loads the CUDA runtime only after the go signal, as lazily initialising
 * frameworks do: for "attach first, library later" tests. Not linked against libcudart.
 * Usage: dlopen_late [--go FILE [--loaded-go FILE2]]
 * Prints "ready <pid>", waits for SIGUSR1 or FILE (polled every 10 ms), then
 * dlopen("libcudart.so.13"). With --loaded-go it also loads libcuda.so.1 if there is one (as the
 * runtime would at its first call), prints "loaded" and waits for FILE2 (so that a test can
 * wait until gputop has seen the libraries). Then, through dlsym:
 *   cudaMalloc       x3  1048576 B each
 *   cudaFree         x1  the first one (2 x 1 MiB leak)
 *   cudaLaunchKernel x4  func = late_kernel (a C host function used as a stub),
 *                        grid (2,1,1) block (64,1,1)
 * and prints "dlopen_late: ok mallocs=3 frees=1 launches=4" (or the failures), exit 0; exit 1 if
 * the library cannot be loaded. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "progs.h"

__attribute__((noinline)) void late_kernel(float *x)
{
	static volatile int calls;
	calls = calls + 1;
	(void)x;
}

typedef cudaError_t (*malloc_fn)(void **, size_t);
typedef cudaError_t (*free_fn)(void *);
typedef cudaError_t (*launch_fn)(const void *, dim3, dim3, void **, size_t, cudaStream_t);

int main(int argc, char **argv)
{
	const char *go_file = argc > 2 && strcmp(argv[1], "--go") == 0 ? argv[2] : NULL;
	const char *loaded_go = argc > 4 && strcmp(argv[3], "--loaded-go") == 0 ? argv[4] : NULL;
	struct fails f = { 0 };

	progs_block_go_signal();
	progs_ready();
	progs_wait_go(go_file);

	void *lib = dlopen("libcudart.so.13", RTLD_NOW);
	if (!lib) {
		printf("dlopen_late: cannot load libcudart.so.13: %s\n", dlerror());
		return 1;
	}
	if (loaded_go) {
		dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
		printf("loaded\n");
		fflush(stdout);
		progs_wait_go(loaded_go);
	}
	malloc_fn cuda_malloc = (malloc_fn)dlsym(lib, "cudaMalloc");
	free_fn cuda_free = (free_fn)dlsym(lib, "cudaFree");
	launch_fn cuda_launch = (launch_fn)dlsym(lib, "cudaLaunchKernel");
	if (!cuda_malloc || !cuda_free || !cuda_launch) {
		printf("dlopen_late: libcudart.so.13 lacks cudaMalloc/cudaFree/cudaLaunchKernel\n");
		return 1;
	}
	void *p[3] = { NULL, NULL, NULL };
	for (int i = 0; i < 3; i++)
		progs_check(&f, "cudaMalloc", cuda_malloc(&p[i], 1048576));
	progs_check(&f, "cudaFree", cuda_free(p[0]));
	float *x = (float *)p[1];
	void *args[] = { &x };
	dim3 grid = { 2, 1, 1 }, block = { 64, 1, 1 };
	for (int i = 0; i < 4; i++)
		progs_check(&f, "cudaLaunchKernel",
			    cuda_launch((const void *)late_kernel, grid, block, args, 0, NULL));
	if (f.total == 0) {
		printf("dlopen_late: ok mallocs=3 frees=1 launches=4\n");
		return 0;
	}
	progs_print_fails("dlopen_late", &f);
	printf("dlopen_late: FAILED failures=%ld\n", f.total);
	return 0;
}
