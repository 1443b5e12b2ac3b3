/* tracee.h — one traced process: everything gputop keeps about it, in one structure reached
 * from the session. Each layer's module keeps its part behind a pointer only it knows
 * (engine/tracee_ctl.c makes and frees them); `tracee` is the process being handled, as gdb's
 * current inferior, so that several can be traced by switching it. */
#ifndef GPUTOP_TRACEE_H
#define GPUTOP_TRACEE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct tracee {
	pid_t pid;			/* the thread group */
	bool launched;			/* started by gputop */

	/* The engine's. */
	bool stopping_world;		/* detaching: threads that stop are kept stopped */
	uint64_t stops;			/* every stop at a breakpoint of ours */
	uint64_t exited_threads_cpu;	/* CPU time of threads gone, so the sum never goes back */
	bool exited;			/* the process ended: exit_status, term_signal */
	int exit_status;		/* exit code, or 128 + signal */
	int term_signal;
	bool no_cuda_timeout;		/* the timeout came before any CUDA library */
};

/* The process being handled; NULL before the first. */
extern struct tracee *tracee;

#endif
