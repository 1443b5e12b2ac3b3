/* children.c — processes the program creates (fork, vfork, posix_spawn): a forked child is
 * cleaned of the breakpoints and swapped return addresses its copy of memory inherited (then
 * followed or let go: follow.c); a vfork child runs in the program's memory until it execs. */
#define _GNU_SOURCE
#include "tracer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "breakpoints.h"
#include "frame.h"
#include "log.h"
#include "memory.h"
#include "threads.h"
#include "xol.h"

bool tracer_shares_memory(struct tracee *p, pid_t child)
{
	long r = syscall(SYS_kcmp, p->pid, child, KCMP_VM, 0, 0);
	return r == 0;
}

/* Forked children already cleaned (at the parent's fork event, or at their own first stop,
 * whichever came first): a small ring is enough, the two come close together. gputop-wide,
 * not in struct tracee: a pid names one child whichever traced process forked it. */
static struct {
	pid_t pids[64];
	unsigned next;
} cleaned;

static bool child_cleaned(pid_t child)
{
	for (size_t i = 0; i < sizeof cleaned.pids / sizeof cleaned.pids[0]; i++)
		if (cleaned.pids[i] == child)
			return true;
	return false;
}

/* A forked child has a copy of our breakpoints and swapped return addresses: put the
 * program's bytes back in its copy. It must happen while the parent is still held at its
 * fork event, or before: once the parent goes on, the call it forked from may return and its
 * frame (where the child's copy of the stack still holds the trampoline) be forgotten. A
 * return address is written back only where the child's slot still holds the trampoline. */
void tracer_clean_child(struct tracee *p, pid_t child)
{
	char path[64];
	if (child_cleaned(child))
		return;
	cleaned.pids[cleaned.next++ % (sizeof cleaned.pids / sizeof cleaned.pids[0])] = child;
	snprintf(path, sizeof path, "/proc/%d/mem", child);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		log_warn("cannot clean forked child %d of breakpoints: %s", child, strerror(errno));
		return;
	}
	uint32_t it = 0;
	for (struct bp *b; (b = bp_iter(p, &it));)
		if (b->armed)
			mem_write_fd(fd, b->addr, b->orig, b->patch_len);
	uint64_t tramp = xol_ready(p) ? xol_trampoline(p) : 0, cur;
	it = 0;
	for (struct thread *t; (t = threads_iter(p, &it));)
		for (uint32_t i = 0; i < t->depth; i++)
			if (pread(fd, &cur, 8, (off_t)t->frames[i].ret_slot) == 8 && cur == tramp)
				mem_write_fd(fd, t->frames[i].ret_slot, &t->frames[i].ret_addr, 8);
	close(fd);
}

/* Cleans a forked child of parent (if not done yet) and lets it go: children are not traced. */
void tracer_release_child(struct tracee *parent, pid_t child)
{
	if (parent)
		tracer_clean_child(parent, child);
	ptrace(PTRACE_DETACH, child, 0, 0);
}
