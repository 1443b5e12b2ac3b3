// empty_loop.cu — launches an empty kernel N times and reports its own launch rate: the
// worst case for a tracer (nothing but launches). usage: empty_loop N [--wait-go FILE]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <thread>
#include <sys/stat.h>
#include <unistd.h>
#include <cuda_runtime.h>

__global__ void empty_kernel() {}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	const char *go = argc > 3 && strcmp(argv[2], "--wait-go") == 0 ? argv[3] : nullptr;
	empty_kernel<<<1, 1>>>();	// set-up: context, module
	if (cudaDeviceSynchronize() != cudaSuccess)
		return 1;
	if (go) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		struct stat st;
		while (stat(go, &st) != 0)
			std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	auto t0 = std::chrono::steady_clock::now();
	for (long i = 0; i < n; i++)
		empty_kernel<<<1, 1>>>();
	cudaError_t e = cudaDeviceSynchronize();
	double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	printf("RESULT {\"launches\": %ld, \"launches_per_s\": %.0f, \"ok\": %s}\n", n, n / s,
	       e == cudaSuccess ? "true" : "false");
	return e == cudaSuccess ? 0 : 1;
}
