/* tui_loop.cpp — for the TUI tests: launches a named kernel in a loop and keeps one
 * allocation live, at a slow, steady pace so that counts on the screen are small and grow.
 * Usage: tui_loop [--seconds S=30] [--stop FILE] [--info FILE] [--copy MIB]
 * Setup: cudaSetDevice(0); cudaMalloc 48 MiB (kept live until the end: the "leak" the Leaks
 * view shows); cudaMallocHost 3 MiB; cudaMemcpy H2D 3 MiB (3145728 bytes) once.
 * Loop, every 20 ms until S seconds have passed or FILE exists: cudaLaunchKernel of
 *   tui_demo::zeta_step(float*, int) (grid 16, block 128), and every 10th time also
 *   tui_demo::alpha_init(int*) (grid 2 x 3, block 64 x 2).
 * --copy MIB: every pass of the loop also copies MIB MiB host to device (cudaMemcpy), from a
 *   pinned buffer of that size: one steady copy, for the bandwidth figures.
 * End: cudaFree, cudaFreeHost; prints "tui_loop: ok launches=N" (or the failures), exit 0.
 * --info FILE: after the setup writes "pid P", "live 0xADDR" and "ready" lines to FILE (so
 * that in launch mode nothing is printed over the TUI before the end).
 * The kernels are host stubs: on the simulated runtime they are accepted and never run. */
#include <cuda_runtime_api.h>

#include "progs.h"

#define MiB (1024UL * 1024UL)

namespace tui_demo {
static volatile int calls;
__attribute__((noinline)) void zeta_step(float *x, int n) { calls = calls + 1; (void)x, (void)n; }
__attribute__((noinline)) void alpha_init(int *x) { calls = calls + 2; (void)x; }
} // namespace tui_demo

#define CHECK(name, expr) progs_check(&f, name, (int)(expr))

int main(int argc, char **argv)
{
	double seconds = 30;
	const char *stop = NULL, *info = NULL;
	struct fails f = {};
	void *live = NULL, *host = NULL, *copy_host = NULL;
	size_t copy = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (strcmp(argv[i], "--stop") == 0 && i + 1 < argc)
			stop = argv[++i];
		else if (strcmp(argv[i], "--info") == 0 && i + 1 < argc)
			info = argv[++i];
		else if (strcmp(argv[i], "--copy") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0 &&
			 atoi(argv[i + 1]) <= 48)
			copy = (size_t)atoi(argv[++i]) * MiB;
		else {
			fprintf(stderr, "usage: tui_loop [--seconds S] [--stop FILE] [--info FILE] [--copy MIB <= 48]\n");
			return 2;
		}
	}
	CHECK("cudaSetDevice", cudaSetDevice(0));
	CHECK("cudaMalloc", cudaMalloc(&live, 48 * MiB));
	CHECK("cudaMallocHost", cudaMallocHost(&host, 3 * MiB));
	CHECK("cudaMemcpy", cudaMemcpy(live, host, 3 * MiB, cudaMemcpyHostToDevice));
	if (copy)
		CHECK("cudaMallocHost", cudaMallocHost(&copy_host, copy));
	if (info) {
		FILE *out = fopen(info, "w");
		if (!out) {
			perror(info);
			return 2;
		}
		fprintf(out, "pid %d\nlive %p\nready\n", (int)getpid(), live);
		fclose(out);
	}

	float *x = (float *)live;
	int n = 1 << 10, *ix = (int *)live;
	void *step_args[] = { &x, &n }, *init_args[] = { &ix };
	long launches = 0;
	double end = progs_now() + seconds;

	for (long i = 0; progs_now() < end && !(stop && access(stop, F_OK) == 0); i++) {
		CHECK("cudaLaunchKernel", cudaLaunchKernel((const void *)tui_demo::zeta_step, dim3(16),
							   dim3(128), step_args, 0, 0));
		launches++;
		if (i % 10 == 0) {
			CHECK("cudaLaunchKernel", cudaLaunchKernel((const void *)tui_demo::alpha_init,
								   dim3(2, 3), dim3(64, 2), init_args, 0, 0));
			launches++;
		}
		if (copy)
			CHECK("cudaMemcpy", cudaMemcpy(live, copy_host, copy, cudaMemcpyHostToDevice));
		progs_sleep_ms(20);
	}
	CHECK("cudaFree", cudaFree(live));
	CHECK("cudaFreeHost", cudaFreeHost(host));
	if (copy)
		CHECK("cudaFreeHost", cudaFreeHost(copy_host));
	progs_print_fails("tui_loop", &f);
	printf("tui_loop: %s launches=%ld\n", f.total ? "FAILED" : "ok", launches);
	return 0;
}
