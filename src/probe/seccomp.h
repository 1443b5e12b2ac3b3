/* seccomp.h — may gputop make the program run a system call? gputop makes a stopped thread of
 * the program run mmap and munmap (xol.c: its trampoline page, record table, launch ring) and a
 * getpid (the return of a call it makes there); the stubs make gettid and futex when they park;
 * --gpu-time's dlopen makes many more (the table: seccomp_calls.h). Under a seccomp filter that
 * kills one of them, the program dies (SIGSYS). These checks come before attaching at all, once
 * every thread is held, before each injected call, and (engine/seccomp_watch.c) before the
 * stubs may park and before --gpu-time loads; a refusal is said once, where it is decided,
 * naming the filter. What "gputop can show a call is allowed" means is written at the top of
 * seccomp.c, in the man page (SECCOMP) and in the README. */
#ifndef GPUTOP_SECCOMP_H
#define GPUTOP_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "seccomp_calls.h"
#include "seccomp_own.h"

/* --trust-seccomp: where gputop cannot read a filter, go on as if it allowed the calls (never
 * where a filter is shown to refuse them). */
void seccomp_set_trust(bool trust);
bool seccomp_trusted(void);

/* Before anything touches the program: pid to attach to, or 0 in launch mode (the program then
 * starts under gputop's own filters). Decides what can be decided without stopping it. 0 to go
 * on, or an exit status (exit_codes.h) after saying why; the program is untouched. */
int seccomp_check_target(pid_t pid);

/* With every thread of pid held and nothing written into it yet: where gputop can read the
 * filters, runs them on every call it may make. 0, or an exit status after saying why (the
 * caller then lets the program go). */
int seccomp_check_stopped(pid_t pid);

/* Just before the stopped thread tid runs system call nr(args) at gadget_addr, for feature f
 * (SECCOMP_INJECT or SECCOMP_CALL_RETURN): 0 to go ahead, or -EPERM after a warning (the call
 * is not made). */
int seccomp_check_inject(pid_t tid, enum seccomp_feature f, long nr, const uint64_t args[6],
			 uint64_t gadget_addr);

enum seccomp_verdict { SECCOMP_ALLOWED, SECCOMP_UNKNOWN, SECCOMP_REFUSED };

/* Why a feature was refused (or cannot be shown allowed) in a thread. */
struct seccomp_refusal {
	pid_t tid;
	bool strict;		/* seccomp strict mode */
	int filter, filters;	/* the filter that answered (1 = newest; 0: none read), of how many */
	size_t insns;
	uint32_t answer;
	bool unreadable;	/* a filter gputop could not evaluate */
	long nr;		/* the call */
	uint64_t args[6];
};

/* Would every call of feature f harm nothing in thread tid? Its filters are read where gputop
 * can (tid held), else judged by gputop's own (seccomp_own.h). known: the thread's state if the
 * caller just read it, else NULL. No message: *why says what the caller tells
 * (seccomp_refusal_describe). */
enum seccomp_verdict seccomp_feature_verdict(pid_t tid, enum seccomp_feature f,
					     const struct seccomp_state *known, struct seccomp_refusal *why);
/* "the seccomp filter 1 of 1 of thread 12 (newest first, 4 BPF instructions) answers
 * SECCOMP_RET_KILL_PROCESS to gettid", or why it could not be shown. */
void seccomp_refusal_describe(const struct seccomp_refusal *r, char *buf, size_t size);

/* A seccomp refusal happened in this session (for the exit status). */
bool seccomp_refused(void);

#endif
