// spin.cu — a kernel that spins for a known time on the GPU's own clock (%globaltimer, ns),
// for scripts/gpu-gputime (--gpu-time, issue 13 part 3): N launches of spin(MS ms), one after
// another on one stream, so that gputop's GPU time of spin must be N x MS ms.
// usage: spin [--n N] [--ms MS] [--go FILE]
// Set-up first (context, module, a warm-up of another kernel, warm); with --go it then says
// "ready PID" and waits for FILE (attach mode). Prints
//   MEASURED {"spin_gpu_s": S}   the spins' own total on the GPU's clock
//   spin: ok n=N ms=MS
#include "gpucheck.h"

#include <cstdint>

__global__ void warm(unsigned long long *out) { *out = 1; }

// One thread spins until the GPU's global timer has advanced ns; it writes what it measured.
__global__ void spin(unsigned long long ns, unsigned long long *took)
{
	unsigned long long t0, t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < ns);
	*took += t - t0;
}

int main(int argc, char **argv)
{
	gc_name = "spin";
	const char *n_arg = gc_option(argc, argv, "--n"), *ms_arg = gc_option(argc, argv, "--ms");
	int n = n_arg ? atoi(n_arg) : 100;
	double ms = ms_arg ? atof(ms_arg) : 2.0;
	unsigned long long *d, took = 0;
	CK(cudaMalloc(&d, sizeof *d));
	CK(cudaMemset(d, 0, sizeof *d));
	warm<<<1, 1>>>(d);
	CK_LAUNCH();
	CK(cudaDeviceSynchronize());
	CK(cudaMemset(d, 0, sizeof *d));
	gc_wait_go(argc, argv);
	for (int i = 0; i < n; i++) {
		spin<<<1, 1>>>((unsigned long long)(ms * 1e6), d);
		CK_LAUNCH();
	}
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(&took, d, sizeof took, cudaMemcpyDeviceToHost));
	printf("MEASURED {\"spin_gpu_s\": %.6f}\n", took / 1e9);
	gc_expect_true("the spins lasted at least N x MS", took >= (unsigned long long)(n * ms * 1e6));
	char extra[64];
	snprintf(extra, sizeof extra, "n=%d ms=%g", n, ms);
	gc_ok(extra);
	CK(cudaFree(d));
	return 0;
}
