/* gpucheck.h — what every program of scripts/gpu-check shares: the go file that separates the
 * set-up from the measured work (so one binary serves launch and attach mode), error checks
 * that stop the program, and the verdict line. C and CUDA C++ alike; no CUDA calls here.
 *
 * Protocol (read by tests/gpu/check.py):
 *   EXPECT {json}     printed first, before any CUDA call: the figures gputop must show.
 *                     "setup" holds what the program does before the go file (counted only in
 *                     launch mode), "measured" what it does after it (counted in both modes).
 *   ready PID         printed when it starts waiting for the go file (--go FILE).
 *   MEASURED {json}   figures the program measured itself (e.g. its CUDA-event bandwidth).
 *   NAME: ok ...      the program's own results were right; it exits 0.
 *   NAME: FAILED ...  something went wrong; it exits 1.
 * GPUCHECK_SIMULATED=1 in the environment skips the checks of the numerical results: only for
 * testing the harness itself on gputop's simulated runtime, where kernels never run. */
#ifndef GPUCHECK_H
#define GPUCHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KiB (1024ul)
#define MiB (1024ul * 1024ul)

static const char *gc_name = "gpucheck";

static void gc_fail(const char *what, const char *detail)
{
	printf("%s: FAILED: %s%s%s\n", gc_name, what, detail ? ": " : "", detail ? detail : "");
	fflush(stdout);
	exit(1);
}

/* True when the numerical results are not to be checked (simulated runtime, see above). */
static int gc_simulated(void)
{
	const char *s = getenv("GPUCHECK_SIMULATED");
	return s && *s && strcmp(s, "0") != 0;
}

/* The value after "--name" in argv, or NULL. */
static const char *gc_option(int argc, char **argv, const char *name)
{
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return argv[i + 1];
	return NULL;
}

/* With --go FILE: says "ready PID" and waits (at most 120 s) until FILE exists. */
static void gc_wait_go(int argc, char **argv)
{
	const char *go = gc_option(argc, argv, "--go");
	struct timespec nap = { 0, 2 * 1000 * 1000 };

	if (!go)
		return;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; access(go, F_OK) != 0; i++) {
		if (i > 60000)
			gc_fail("no go file after 120 s", go);
		nanosleep(&nap, NULL);
	}
}

/* Compares n floats against want; names the first mismatch. Skipped when simulated. */
static void gc_expect_floats(const char *what, const float *got, size_t n, float want)
{
	if (gc_simulated())
		return;
	for (size_t i = 0; i < n; i++)
		if (got[i] != want) {
			char d[128];
			snprintf(d, sizeof d, "[%zu] = %g, expected %g", i, (double)got[i], (double)want);
			gc_fail(what, d);
		}
}

static void gc_expect_true(const char *what, int ok)
{
	if (!gc_simulated() && !ok)
		gc_fail(what, NULL);
}

static void gc_ok(const char *extra)
{
	printf("%s: ok%s%s%s\n", gc_name, extra ? " " : "", extra ? extra : "",
	       gc_simulated() ? " (results not checked: GPUCHECK_SIMULATED)" : "");
	fflush(stdout);
}

#ifdef __CUDACC__
#include <cuda_runtime.h>
/* A runtime call that must succeed. */
#define CK(x)                                                                     \
	do {                                                                      \
		cudaError_t e_ = (x);                                             \
		if (e_ != cudaSuccess)                                            \
			gc_fail(#x, cudaGetErrorName(e_));                        \
	} while (0)
/* The last launch was accepted. */
#define CK_LAUNCH() CK(cudaGetLastError())
#endif

#endif
