/* worker.c — the benchmark's CUDA worker, one rank of a simulated training job, for the rows on
 * the edges of a run (bench/run: start-up and exit of a job; attaching to several processes).
 * Linked against the SIMULATED libcudart.so.13 of tests/ (which loads the simulated
 * libcuda.so.1 at the first call). It times itself with CLOCK_MONOTONIC, which gputop does not
 * change, so that its stamps can be set against those of bench/stopwatch.
 *
 * Usage: worker [-n STEPS] [-p PERIOD_US] [-g]
 *   cudaMalloc(1 MiB) first, then STEPS steps (default 100; 0: until SIGTERM or SIGINT) of
 *     cudaLaunchKernel x2, cudaStreamSynchronize(0), then a sleep of PERIOD_US (default 1000),
 *   then cudaFree. A step's gap is the time from its start to the next step's start, less the
 *   sleep: what the step itself took, plus any pause the process was made to take.
 * Prints on stdout "worker ready pid=P" (flushed) once its first call has returned, and at its end
 *   worker rank=R pid=P first_call_ns=F last_call_ns=L steps=S launches=N syncs=N
 *          longest_gap_us=G
 * (F: when the first call returned; L: when the last one did; R from $RANK, else -1), and with
 * -g a line per step before it: "gap start_ns=S end_ns=E extra_us=X". Exits 1 if a call failed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* The few runtime declarations we need (cuda_runtime_api.h is not needed to build the bench). */
typedef int cudaError_t;
typedef struct {
	unsigned int x, y, z;
} dim3;
extern cudaError_t cudaMalloc(void **p, size_t size);
extern cudaError_t cudaFree(void *p);
extern cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
				    void *stream);
extern cudaError_t cudaStreamSynchronize(void *stream);

#define MAX_GAPS (1L << 18)	/* -g: 262,144 steps, over 4 minutes at a step a millisecond */

struct gap {
	uint64_t start_ns, end_ns;
};

static volatile sig_atomic_t stop;

/* A "kernel": the simulated runtime accepts a plain host function and names it by dladdr. */
__attribute__((noinline, used)) void worker_step_kernel(void)
{
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* One training step's calls; the number of failed ones. */
static int step(void)
{
	dim3 grid = { 1, 1, 1 }, block = { 32, 1, 1 };
	int failed = 0;
	failed += cudaLaunchKernel((const void *)worker_step_kernel, grid, block, NULL, 0, NULL) != 0;
	failed += cudaLaunchKernel((const void *)worker_step_kernel, grid, block, NULL, 0, NULL) != 0;
	failed += cudaStreamSynchronize(NULL) != 0;
	return failed;
}

/* A relative sleep: a step that was paused is not made up for by a shorter sleep. An
 * interrupted sleep (SIGTERM) just ends early. */
static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

static int usage(void)
{
	fprintf(stderr, "usage: worker [-n STEPS] [-p PERIOD_US] [-g]\n");
	return 2;
}

int main(int argc, char **argv)
{
	long steps = 100, period_us = 1000;
	int opt, print_gaps = 0;
	while ((opt = getopt(argc, argv, "n:p:g")) != -1) {
		switch (opt) {
		case 'n': steps = atol(optarg); break;
		case 'p': period_us = atol(optarg); break;
		case 'g': print_gaps = 1; break;
		default: return usage();
		}
	}
	if (optind != argc || steps < 0 || period_us < 0)
		return usage();
	struct sigaction sa = { .sa_handler = on_stop };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	struct gap *gaps = print_gaps ? calloc(MAX_GAPS, sizeof *gaps) : NULL;
	if (print_gaps && !gaps) {
		fprintf(stderr, "worker: out of memory\n");
		return 1;
	}

	void *buf = NULL;
	int failed = cudaMalloc(&buf, 1 << 20) != 0;
	uint64_t first_ns = now_ns();
	/* A real driver (first on LD_LIBRARY_PATH) would time something else entirely. */
	void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (failed || !driver || !dlsym(driver, "cuSimulatedDriver")) {
		fprintf(stderr, "worker: cudaMalloc failed or libcuda.so.1 is not the simulated driver of tests/\n");
		return 1;
	}
	printf("worker ready pid=%d\n", (int)getpid());
	fflush(stdout);

	long done = 0, n_gaps = 0;
	uint64_t longest_ns = 0, period_ns = (uint64_t)period_us * 1000u, start = now_ns();
	while (!stop && (steps == 0 || done < steps)) {
		failed += step();
		sleep_us(period_us);
		done++;
		uint64_t next = now_ns(), extra = next - start > period_ns ? next - start - period_ns : 0;
		if (extra > longest_ns && !stop)
			longest_ns = extra;
		if (gaps && n_gaps < MAX_GAPS && !stop)
			gaps[n_gaps++] = (struct gap){ start, next };
		start = next;
	}
	failed += cudaFree(buf) != 0;
	uint64_t last_ns = now_ns();

	for (long i = 0; i < n_gaps; i++) {
		uint64_t d = gaps[i].end_ns - gaps[i].start_ns;
		printf("gap start_ns=%llu end_ns=%llu extra_us=%.1f\n", (unsigned long long)gaps[i].start_ns,
		       (unsigned long long)gaps[i].end_ns, d > period_ns ? (double)(d - period_ns) / 1e3 : 0.0);
	}
	const char *rank = getenv("RANK");
	printf("worker rank=%s pid=%d first_call_ns=%llu last_call_ns=%llu steps=%ld launches=%ld syncs=%ld "
	       "longest_gap_us=%.1f\n",
	       rank ? rank : "-1", (int)getpid(), (unsigned long long)first_ns, (unsigned long long)last_ns,
	       done, 2 * done, done, (double)longest_ns / 1e3);
	if (failed) {
		fprintf(stderr, "worker: %d calls failed\n", failed);
		return 1;
	}
	return 0;
}
