/* signals.c — CUDA calls while signals arrive, for robustness tests: gputop must pass every
 * signal on to the program (none lost, none added) and keep counting.
 * Usage: signals [--loops N=50] [--sleep-ms MS=20] [--wait-usr1 K]
 * Installs a SIGUSR1 handler that counts, prints "ready <pid>", then N times:
 *   cudaMalloc 4096 B, sleep MS (restarted when a signal interrupts it), cudaFree it.
 * With --wait-usr1, it then waits (no CUDA call; 30 s at most) until K signals have come, so that
 * a sender slowed down by a loaded machine cannot find it gone before its last signal.
 * Calls, exactly: cudaMalloc xN (4096 B), cudaFree xN. Prints
 * "signals: loops=N sigusr1=<signals received> failures=<failed calls>", exit 0. */
#include <cuda_runtime_api.h>

#include "progs.h"

static volatile sig_atomic_t received;

static void on_usr1(int sig)
{
	(void)sig;
	received++;
}

int main(int argc, char **argv)
{
	int loops = 50, wait_usr1 = 0;
	long sleep_ms = 20;
	struct fails f = { 0 };

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--loops") == 0)
			loops = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--sleep-ms") == 0)
			sleep_ms = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--wait-usr1") == 0)
			wait_usr1 = atoi(argv[i + 1]);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	progs_ready();
	for (int i = 0; i < loops; i++) {
		void *p = NULL;
		progs_check(&f, "cudaMalloc", cudaMalloc(&p, 4096));
		progs_sleep_ms(sleep_ms);
		progs_check(&f, "cudaFree", cudaFree(p));
	}
	for (double end = progs_now() + 30; received < wait_usr1 && progs_now() < end;)
		progs_sleep_ms(10);
	progs_print_fails("signals", &f);
	printf("signals: loops=%d sigusr1=%d failures=%ld\n", loops, (int)received, f.total);
	return 0;
}
