/* seccomp_own.h — gputop's own seccomp state, and whether its own filters let a process make a
 * feature's calls (seccomp_calls.h): a child of gputop (the same filters) does what the feature
 * does in the program and must neither die nor be refused. That is what gputop can show of a
 * program's filter it cannot read but shares (a container's, which every process in it
 * inherits). seccomp.c decides; this file only reads /proc and forks. */
#ifndef GPUTOP_SECCOMP_OWN_H
#define GPUTOP_SECCOMP_OWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "seccomp_calls.h"

struct thread;

/* A thread's seccomp state: mode (-1 when the kernel does not say) and how many filters. */
struct seccomp_state {
	int mode;
	int filters;
};

int seccomp_thread_state(pid_t tid, struct seccomp_state *s);	/* 0 or -errno */
/* The same of a traced thread, through its /proc/TID/status kept open (t->status_fd): read
 * again and again, it costs no path lookup, and a thread gone reads as gone (-ESRCH), never as
 * a new thread of the same id. */
int seccomp_thread_state_of(struct thread *t, struct seccomp_state *s);
const struct seccomp_state *seccomp_own_state(void);	/* gputop's, read once */
/* The kernel hands a tracer the filters only with CAP_SYS_ADMIN, and only to one that runs
 * under no filter itself. */
bool seccomp_own_can_read_filters(void);
/* gputop's own filters let a child of gputop do what feature f does (tried once, at most 2 s).
 * When not: why, for messages. */
bool seccomp_own_allows(enum seccomp_feature f);
const char *seccomp_own_why(enum seccomp_feature f);

#endif
