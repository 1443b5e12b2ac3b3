/* seccomp.h — may gputop make the program run a system call? gputop makes a stopped thread of
 * the program run mmap and munmap (xol.c: its trampoline page, record table, launch ring); under
 * a seccomp filter that forbids them, that kills the program (SIGSYS). These checks come before
 * attaching at all, once every thread is held, and before each such call; a refusal is said once,
 * where it is decided, naming the filter. What "gputop can show a call is allowed" means is
 * written at the top of seccomp.c, in the man page (SECCOMP) and in the README. */
#ifndef GPUTOP_SECCOMP_H
#define GPUTOP_SECCOMP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* --trust-seccomp: where gputop cannot read a filter, go on as if it allowed the calls (never
 * where a filter is shown to refuse them). */
void seccomp_set_trust(bool trust);

/* Before anything touches the program: pid to attach to, or 0 in launch mode (the program then
 * starts under gputop's own filters). Decides what can be decided without stopping it. 0 to go
 * on, or an exit status (cli.h) after saying why; the program is untouched. */
int seccomp_check_target(pid_t pid);

/* With every thread of pid held and nothing written into it yet: where gputop can read the
 * filters, runs them on every call it may make. 0, or an exit status after saying why (the
 * caller then lets the program go). */
int seccomp_check_stopped(pid_t pid);

/* Just before the stopped thread tid runs system call nr(args) at gadget_addr: 0 to go ahead,
 * or -EPERM after a warning (the call is not made). */
int seccomp_check_inject(pid_t tid, long nr, const uint64_t args[6], uint64_t gadget_addr);

/* A seccomp refusal happened in this session (for the exit status). */
bool seccomp_refused(void);

#endif
