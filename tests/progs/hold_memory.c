/* hold_memory.c — for the tests of the memory gputop did not see: holds device memory allocated
 * before gputop attaches, and more after.
 * Usage: hold_memory --before BYTES --after BYTES --go FILE --stop FILE
 * cudaMalloc(BEFORE), "ready <pid>", waits for FILE (or SIGUSR1), cudaMalloc(AFTER), prints
 * "allocated", waits for the stop FILE, frees both, prints "hold_memory: ok" (or the
 * failures), exit 0. CUDA calls: exactly those two cudaMalloc and two cudaFree. */
#include <cuda_runtime_api.h>

#include "progs.h"

int main(int argc, char **argv)
{
	size_t before = 0, after = 0;
	const char *go = NULL, *stop = NULL;
	void *held = NULL, *more = NULL;
	struct fails f = { 0 };

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--before") == 0)
			before = strtoull(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--after") == 0)
			after = strtoull(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--go") == 0)
			go = argv[i + 1];
		else if (strcmp(argv[i], "--stop") == 0)
			stop = argv[i + 1];
		else
			break;
	}
	if (!go || !stop || argc % 2 == 0) {
		fprintf(stderr, "usage: hold_memory --before BYTES --after BYTES --go FILE --stop FILE\n");
		return 2;
	}
	progs_block_go_signal();
	progs_check(&f, "cudaMalloc", cudaMalloc(&held, before));
	progs_ready();
	progs_wait_go(go);
	progs_check(&f, "cudaMalloc", cudaMalloc(&more, after));
	printf("allocated\n");
	fflush(stdout);
	while (access(stop, F_OK) != 0)
		progs_sleep_ms(10);
	progs_check(&f, "cudaFree", cudaFree(more));
	progs_check(&f, "cudaFree", cudaFree(held));
	if (f.total) {
		progs_print_fails("hold_memory", &f);
		return 1;
	}
	printf("hold_memory: ok\n");
	return 0;
}
