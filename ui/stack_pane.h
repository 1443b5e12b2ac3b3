/* stack_pane.h — the pane Enter opens over a view: the call stacks behind its top row (an
 * allocation's or a site's stack, a kernel's launch sites, an API function's error sites),
 * from the interned stacks (figures/stacks.h); or a process's threads in the live picture of
 * the job (figures/job_live.h), each one's call in flight and stack. Draws only. */
#ifndef GPUTOP_STACK_PANE_H
#define GPUTOP_STACK_PANE_H

#include <stdint.h>
#include <sys/types.h>

enum stack_pane_kind {
	PANE_STACK,		/* subject: a stack id */
	PANE_LAUNCH_SITES,	/* subject: the kernel's name (a pointer from the snapshot, valid
				 * for the stats module's life; its index may change between
				 * snapshots as processes add kernels) */
	PANE_ERROR_SITES,	/* subject: an API table row + 1 */
	PANE_JOB_THREADS,	/* subject: a pid: its threads in the live picture of the job */
};

/* Draws the pane over a screen of h x w from line scroll on, with the sites of process pid
 * (0: of all), the threads from live (PANE_JOB_THREADS); returns scroll, kept within the pane's
 * lines. */
struct job_live;
int stack_pane_draw(int h, int w, int kind, uint64_t subject, pid_t pid, int scroll, struct job_live *live);

#endif
