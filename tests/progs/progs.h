/* progs.h — small helpers shared by gputop's test programs (C and C++): counting failed CUDA
 * calls without making any extra CUDA call (error names come from a local table, so the calls a
 * program's comment lists are exactly the calls it makes), "ready <pid>", and waiting for the
 * go signal (SIGUSR1 or a file) in the attach tests. */
#ifndef PROGS_H
#define PROGS_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAIL_KINDS 32

/* Failures by API name, in the order they first happened. */
struct fails {
	const char *name[FAIL_KINDS];
	int code[FAIL_KINDS];	/* the first error code seen for that name */
	long count[FAIL_KINDS];
	int n;
	long total;
};

static inline const char *progs_error_name(int code)
{
	switch (code) {
	case 1: return "InvalidValue";
	case 2: return "MemoryAllocation";
	case 3: return "InitializationError/NotInitialized";
	case 21: return "InvalidMemcpyDirection";
	case 34: return "StubLibrary";
	case 35: return "InsufficientDriver";
	case 98: return "InvalidDeviceFunction";
	case 100: return "NoDevice";
	case 101: return "InvalidDevice";
	case 400: return "InvalidResourceHandle";
	case 500: return "NotFound";
	case 999: return "Unknown";
	default: return "?";
	}
}

/* Records a failed call (code != 0); returns code so that callers can test it. */
static inline int progs_check(struct fails *f, const char *name, int code)
{
	if (code == 0)
		return 0;
	f->total++;
	for (int i = 0; i < f->n; i++)
		if (strcmp(f->name[i], name) == 0) {
			f->count[i]++;
			return code;
		}
	if (f->n < FAIL_KINDS) {
		f->name[f->n] = name;
		f->code[f->n] = code;
		f->count[f->n] = 1;
		f->n++;
	}
	return code;
}

/* One line per failing API: "<prog>: cudaMalloc failed 3 times (error 35 InsufficientDriver)". */
static inline void progs_print_fails(const char *prog, const struct fails *f)
{
	for (int i = 0; i < f->n; i++)
		printf("%s: %s failed %ld time%s (error %d %s)\n", prog, f->name[i], f->count[i],
		       f->count[i] == 1 ? "" : "s", f->code[i], progs_error_name(f->code[i]));
}

static inline void progs_ready(void)
{
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
}

static inline void progs_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static inline double progs_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Call before progs_ready(): SIGUSR1 is then held pending until progs_wait_go() takes it. */
static inline void progs_block_go_signal(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* Waits until SIGUSR1 arrives or go_file (may be NULL) exists, polling every 10 ms. */
static inline void progs_wait_go(const char *go_file)
{
	sigset_t set;
	struct timespec tick = { 0, 10 * 1000000L };
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	for (;;) {
		if (go_file && access(go_file, F_OK) == 0)
			return;
		if (sigtimedwait(&set, NULL, &tick) == SIGUSR1)
			return;
	}
}

#endif
