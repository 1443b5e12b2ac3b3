// bandwidth.cu — pinned host <-> device copies of 64 MiB and 256 MiB, each timed by the program
// itself with CUDA events, so that scripts/gpu-check can hold gputop's GB/s per direction against
// them. usage: bandwidth [--go FILE]
//
// Set-up (before the go file; launch mode only): cudaMallocHost 256 MiB and cudaMalloc 256 MiB,
// never freed (so both modes see the same memory figures for the measured part: none).
// Measured: 3 x (H2D, D2H) of 64 MiB, then 3 x (H2D, D2H) of 256 MiB, each a cudaMemcpy between
// two cudaEventRecord and followed by a cudaEventSynchronize. Nothing else copies, so every copy
// gputop sees in either direction is one of these. Prints MEASURED {"bandwidth": {"H2D": GB/s,
// "D2H": GB/s}}: bytes of all copies of a direction / their summed event time (GB = 1e9 B).
#include "gpucheck.h"

#define BIG (256 * MiB)
#define REPS 3

int main(int argc, char **argv)
{
	gc_name = "bandwidth";
	unsigned long total = REPS * (64 * MiB + BIG);
	printf("EXPECT {\"program\": \"bandwidth\","
	       " \"setup\": {\"api\": {\"cudaMallocHost\": 1, \"cudaMalloc\": 1}, \"allocations\": 2,"
	       " \"leaks\": [{\"kind\": \"host\", \"bytes\": %lu, \"api\": \"cudaMallocHost\"},"
	       " {\"kind\": \"device\", \"bytes\": %lu, \"api\": \"cudaMalloc\"}]},"
	       " \"measured\": {\"transfers\": {\"H2D\": {\"sync\": [%d, %lu]}, \"D2H\": {\"sync\": [%d, %lu]}},"
	       " \"synchronize\": %d, \"api\": {\"cudaMemcpy\": %d, \"cudaEventSynchronize\": %d},"
	       " \"bandwidth\": true}}\n",
	       BIG, BIG, 2 * REPS, total, 2 * REPS, total, 4 * REPS, 4 * REPS, 4 * REPS);
	fflush(stdout);

	// --- set-up ---
	unsigned char *h, *d;
	cudaEvent_t start, stop;
	CK(cudaMallocHost((void **)&h, BIG));
	CK(cudaMalloc((void **)&d, BIG));
	CK(cudaEventCreate(&start));
	CK(cudaEventCreate(&stop));
	for (size_t i = 0; i < BIG; i += 4096)
		h[i] = (unsigned char)(i >> 12);	// touch every page; a pattern to check

	gc_wait_go(argc, argv);

	// --- measured ---
	double ms_dir[2] = { 0, 0 };
	const size_t sizes[2] = { 64 * MiB, BIG };
	for (int s = 0; s < 2; s++) {
		size_t n = sizes[s];
		for (int r = 0; r < REPS; r++) {
			for (int dir = 0; dir < 2; dir++) {
				float ms = 0;
				if (dir == 1 && s == 1 && r == REPS - 1)	// the last D2H must bring the pattern back
					memset(h, 0, n);
				CK(cudaEventRecord(start, 0));
				if (dir == 0)
					CK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
				else
					CK(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost));
				CK(cudaEventRecord(stop, 0));
				CK(cudaEventSynchronize(stop));
				CK(cudaEventElapsedTime(&ms, start, stop));
				ms_dir[dir] += ms;
				printf("%s %3zu MiB: %.3f ms %.2f GB/s\n", dir ? "D2H" : "H2D", n / MiB, ms,
				       n / (ms / 1e3) / 1e9);
			}
		}
	}
	int bad = 0;
	for (size_t i = 0; i < BIG; i += 4096)
		bad += h[i] != (unsigned char)(i >> 12);
	gc_expect_true("256 MiB round trip brought the pattern back", bad == 0);
	double h2d = total / (ms_dir[0] / 1e3) / 1e9, d2h = total / (ms_dir[1] / 1e3) / 1e9;
	printf("MEASURED {\"bandwidth\": {\"H2D\": %.4f, \"D2H\": %.4f}}\n", h2d, d2h);
	char line[96];
	snprintf(line, sizeof line, "H2D %.2f GB/s D2H %.2f GB/s (CUDA events, %lu MiB each way)", h2d, d2h,
		 total / MiB);
	gc_ok(line);
	return 0;
}
