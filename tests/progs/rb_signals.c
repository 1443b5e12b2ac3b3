/* rb_signals.c — signals around CUDA calls, for tests/e2e/robust_signals.sh: gputop must pass
 * every signal of the program on unchanged, and none of its own SIGTRAPs.
 * Usage: rb_signals MODE [N]
 *   usr1 N    a counting SIGUSR1 handler; N times: cudaMalloc 4096 B, raise(SIGUSR1), cudaMemcpy
 *             H2D 4096 B, a SIGUSR1 sent to the process by a second thread (waited for),
 *             cudaMemcpy D2H 4096 B (data compared), cudaFree. Prints
 *             "rb_signals: usr1 sent=2N received=<count> failures=<failed calls> mismatches=<m>".
 *   trap N    a counting SIGTRAP handler; N times: cudaMalloc, raise(SIGTRAP), an int3
 *             instruction of its own (a breakpoint that is not gputop's), cudaFree. Prints
 *             "rb_signals: trap sent=2N received=<count> kernel=<si_code SI_KERNEL ones>
 *             failures=<f>".
 *   handler N a SIGUSR1 handler that calls cudaMalloc 64 B + cudaFree; a second thread sends
 *             N SIGUSR1, 50 ms apart, while the main thread is inside cudaDeviceSynchronize
 *             (make it last with SIMCUDA_SYNC_US). Prints "rb_signals: handler calls=N
 *             failures=<f>". Calls: cudaDeviceSynchronize x1, cudaMalloc xN, cudaFree xN.
 *   segv N    N x (cudaMalloc, cudaFree), prints "rb_signals: about to crash", then writes
 *             through a null pointer: dies of SIGSEGV (status 139 in a shell).
 *   loop      "ready <pid>", then cudaMalloc + cudaMemcpy H2D + cudaFree and 2 ms of sleep,
 *             over and over, until the file named by RB_STOP_FILE exists; default SIGINT,
 *             SIGTSTP... Each loop also writes its count to RB_COUNT_FILE when set (so a test
 *             can see whether it runs). Prints "rb_signals: loop done failures=<f>", exit 0;
 *             writes the same line to RB_DONE_FILE when set (the terminal may be gone).
 * Exit status 0 unless said otherwise. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "progs.h"

static volatile sig_atomic_t received, kernel_traps;
static struct fails f;

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)sig, (void)ctx;
	received++;
	if (si->si_code == SI_KERNEL)
		kernel_traps++;
}

static void handle(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void *send_usr1(void *arg)
{
	(void)arg;
	kill(getpid(), SIGUSR1);
	return NULL;
}

static int mode_usr1(int n)
{
	static unsigned char src[4096], back[4096];
	long mismatches = 0;
	handle(SIGUSR1);
	for (int i = 0; i < n; i++) {
		void *p = NULL;
		memset(src, i & 0xff, sizeof(src));
		memset(back, 0, sizeof(back));
		progs_check(&f, "cudaMalloc", cudaMalloc(&p, 4096));
		raise(SIGUSR1);
		progs_check(&f, "cudaMemcpy", cudaMemcpy(p, src, 4096, cudaMemcpyHostToDevice));
		pthread_t th;
		pthread_create(&th, NULL, send_usr1, NULL);
		pthread_join(th, NULL);
		/* a process-directed signal may be taken by any thread: wait until it was */
		for (int spin = 0; received < 2 * (i + 1) && spin < 5000; spin++)
			progs_sleep_ms(1);
		progs_check(&f, "cudaMemcpy", cudaMemcpy(back, p, 4096, cudaMemcpyDeviceToHost));
		if (memcmp(src, back, sizeof(src)) != 0)
			mismatches++;
		progs_check(&f, "cudaFree", cudaFree(p));
	}
	progs_print_fails("rb_signals", &f);
	printf("rb_signals: usr1 sent=%d received=%d failures=%ld mismatches=%ld\n", 2 * n,
	       (int)received, f.total, mismatches);
	return 0;
}

static int mode_trap(int n)
{
	handle(SIGTRAP);
	for (int i = 0; i < n; i++) {
		void *p = NULL;
		progs_check(&f, "cudaMalloc", cudaMalloc(&p, 4096));
		raise(SIGTRAP);
		__asm__ volatile("int3");
		progs_check(&f, "cudaFree", cudaFree(p));
	}
	progs_print_fails("rb_signals", &f);
	printf("rb_signals: trap sent=%d received=%d kernel=%d failures=%ld\n", 2 * n, (int)received,
	       (int)kernel_traps, f.total);
	return 0;
}

/* A SIGUSR1 handler that calls the CUDA API, run while the main thread is inside a traced
 * cudaDeviceSynchronize (SIMCUDA_SYNC_US long): the handler's calls are the program's own. */
static volatile sig_atomic_t handler_calls, handler_failures;

static void on_usr1_cuda(int sig)
{
	void *p = NULL;
	(void)sig;
	handler_failures += cudaMalloc(&p, 64) != cudaSuccess;
	handler_failures += cudaFree(p) != cudaSuccess;
	handler_calls++;
}

static void *send_usr1_slowly(void *arg)
{
	int n = (int)(long)arg;
	for (int i = 0; i < n; i++) {
		progs_sleep_ms(50);
		kill(getpid(), SIGUSR1);
		for (int spin = 0; handler_calls <= i && spin < 5000; spin++)
			progs_sleep_ms(1);
	}
	return NULL;
}

static int mode_handler(int n)
{
	struct sigaction sa;
	sigset_t usr1;
	pthread_t th;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1_cuda;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);	/* the sender never takes it itself */
	pthread_create(&th, NULL, send_usr1_slowly, (void *)(long)n);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	progs_check(&f, "cudaDeviceSynchronize", cudaDeviceSynchronize());
	pthread_join(th, NULL);
	progs_print_fails("rb_signals", &f);
	printf("rb_signals: handler calls=%d failures=%d\n", (int)handler_calls, (int)handler_failures);
	return 0;
}

static int mode_segv(int n)
{
	for (int i = 0; i < n; i++) {
		void *p = NULL;
		progs_check(&f, "cudaMalloc", cudaMalloc(&p, 4096));
		progs_check(&f, "cudaFree", cudaFree(p));
	}
	progs_print_fails("rb_signals", &f);
	printf("rb_signals: about to crash\n");
	fflush(stdout);
	*(volatile int *)(uintptr_t)0 = 1;
	return 0;
}

static int mode_loop(void)
{
	const char *stop = getenv("RB_STOP_FILE");
	const char *count_file = getenv("RB_COUNT_FILE");
	static unsigned char src[4096];
	long count = 0;
	progs_ready();
	while (!stop || access(stop, F_OK) != 0) {
		void *p = NULL;
		progs_check(&f, "cudaMalloc", cudaMalloc(&p, 4096));
		progs_check(&f, "cudaMemcpy", cudaMemcpy(p, src, 4096, cudaMemcpyHostToDevice));
		progs_check(&f, "cudaFree", cudaFree(p));
		count++;
		if (count_file) {	/* written aside and renamed: a reader never sees it half done */
			char tmp[4096];
			snprintf(tmp, sizeof(tmp), "%s.tmp", count_file);
			FILE *c = fopen(tmp, "w");
			if (c) {
				fprintf(c, "%ld\n", count);
				fclose(c);
				rename(tmp, count_file);
			}
		}
		progs_sleep_ms(2);
	}
	progs_print_fails("rb_signals", &f);
	printf("rb_signals: loop done failures=%ld\n", f.total);
	const char *done_file = getenv("RB_DONE_FILE");
	FILE *done = done_file ? fopen(done_file, "w") : NULL;
	if (done) {
		fprintf(done, "rb_signals: loop done failures=%ld\n", f.total);
		fclose(done);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 10;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && strcmp(argv[1], "usr1") == 0)
		return mode_usr1(n);
	if (argc > 1 && strcmp(argv[1], "trap") == 0)
		return mode_trap(n);
	if (argc > 1 && strcmp(argv[1], "segv") == 0)
		return mode_segv(n);
	if (argc > 1 && strcmp(argv[1], "handler") == 0)
		return mode_handler(n);
	if (argc > 1 && strcmp(argv[1], "loop") == 0)
		return mode_loop();
	fprintf(stderr, "usage: rb_signals usr1|trap|handler|segv|loop [N]\n");
	return 2;
}
