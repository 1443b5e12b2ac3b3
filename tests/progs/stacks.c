/* stacks.c — known call chains for the call-stack tests (tests/e2e/stacks_native.sh). Each call
 * of interest sits on a line marked with "@site NAME"; the tests find the lines by that mark.
 *   main -> leak_a -> leak_b -> cudaMalloc     3 MiB, never freed (the leak)
 *   main -> churn -> cudaMalloc, cudaFree      1 MiB, freed (nothing left live)
 *   main -> fail_site -> cudaMalloc            a size the runtime refuses (an error site)
 *   main -> launch_site -> cudaLaunchKernel    the stub kernel stacks_kernel, twice
 * Built with -fno-optimize-sibling-calls, so that no function of the chain is left out by a
 * tail call, and -fno-ipa-cp, so that none is renamed as a clone (leak_b.constprop.0); each
 * function is noinline. Prints "stacks: ok leaks=1 failures=F" at the end. */
#include <cuda_runtime_api.h>

#include "progs.h"

static struct fails f;
static volatile int sink;

__attribute__((noinline)) void stacks_kernel(int *p)
{
	sink = p != NULL;
}

__attribute__((noinline)) static void *leak_b(size_t n)
{
	void *p = NULL;
	progs_check(&f, "cudaMalloc", cudaMalloc(&p, n));	/* @site leak_b */
	return p;
}

__attribute__((noinline)) static void *leak_a(size_t n)
{
	void *p = leak_b(n);	/* @site leak_a */
	sink++;
	return p;
}

__attribute__((noinline)) static void churn(void)
{
	void *p = NULL;
	progs_check(&f, "cudaMalloc", cudaMalloc(&p, 1 << 20));	/* @site churn */
	progs_check(&f, "cudaFree", cudaFree(p));
}

__attribute__((noinline)) static void fail_site(void)
{
	void *p = NULL;
	int err = cudaMalloc(&p, (size_t)1 << 62);	/* @site fail_site */
	sink += err;
}

__attribute__((noinline)) static void launch_site(void)
{
	int *out = NULL;
	void *args[] = { &out };
	for (int i = 0; i < 2; i++)
		progs_check(&f, "cudaLaunchKernel", cudaLaunchKernel((const void *)stacks_kernel, (dim3){ 1, 1, 1 }, (dim3){ 32, 1, 1 }, args, 0, 0));	/* @site launch_site */
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	void *leak = leak_a(3 << 20);	/* @site main */
	churn();
	fail_site();
	launch_site();
	printf("stacks: ok leaks=%d failures=%ld\n", leak != NULL, f.total);
	return 0;
}
