/* wait_then_work.cpp — for attach tests: starts, says "ready <pid>", waits, then works.
 * Usage: wait_then_work [--go FILE] [--iters K=1] [--no-leak]
 * Before the go signal it makes no CUDA call at all (libcudart is loaded, nothing is called).
 * The go signal is SIGUSR1 or the existence of FILE (polled every 10 ms). Then it does K times
 * the iteration listed in workload.cpp (exactly as basic K does) and prints
 * "wait_then_work: ok iterations=K" (or the failures), exit 0. */
#include <string.h>

#include "workload.h"

int main(int argc, char **argv)
{
	const char *go_file = NULL;
	int iterations = 1;
	bool no_leak = false;
	struct fails f = {};
	long mismatches = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--go") == 0 && i + 1 < argc)
			go_file = argv[++i];
		else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
			iterations = atoi(argv[++i]);
		else if (strcmp(argv[i], "--no-leak") == 0)
			no_leak = true;
		else {
			fprintf(stderr, "usage: wait_then_work [--go FILE] [--iters K] [--no-leak]\n");
			return 2;
		}
	}
	if (iterations < 1) {
		fprintf(stderr, "wait_then_work: --iters must be at least 1\n");
		return 2;
	}
	progs_block_go_signal();
	progs_ready();
	progs_wait_go(go_file);
	for (int i = 0; i < iterations; i++)
		mismatches += work_iteration(&f, i, no_leak && i == iterations - 1);
	return work_report("wait_then_work", iterations, &f, mismatches);
}
