/* no_cuda.c — a program that never loads any CUDA library, for gputop's error paths
 * ("no CUDA library in the process yet").
 * Usage: no_cuda [--seconds N=10]
 * Prints "ready <pid>", sleeps in 100 ms steps for N seconds, prints "no_cuda: done", exit 0. */
#include "progs.h"

int main(int argc, char **argv)
{
	double seconds = 10;
	if (argc > 2 && strcmp(argv[1], "--seconds") == 0)
		seconds = atof(argv[2]);
	progs_ready();
	double end = progs_now() + seconds;
	while (progs_now() < end)
		progs_sleep_ms(100);
	printf("no_cuda: done\n");
	return 0;
}
