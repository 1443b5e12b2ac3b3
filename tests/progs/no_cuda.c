/* no_cuda.c — a program that never loads any CUDA library, for gputop's error paths
 * ("no CUDA library in the process yet").
 * Usage: no_cuda [--seconds N=10] [--stop FILE]
 * Prints "ready <pid>", sleeps in 100 ms steps for N seconds or until FILE exists (a test can
 * give it a long N, so that a loaded machine cannot end it too early, and end it with FILE),
 * prints "no_cuda: done", exit 0. */
#include "progs.h"

int main(int argc, char **argv)
{
	double seconds = 10;
	const char *stop = NULL;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--seconds") == 0)
			seconds = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--stop") == 0)
			stop = argv[i + 1];
	}
	progs_ready();
	double end = progs_now() + seconds;
	while (progs_now() < end && (!stop || access(stop, F_OK) != 0))
		progs_sleep_ms(100);
	printf("no_cuda: done\n");
	return 0;
}
