/* tracer.h — the ptrace side of gputop: every thread of the program, its stops and signals,
 * breakpoint hits, fork/exec/dlopen, and a clean detach. Runs in one thread (the one that
 * attached: ptrace belongs to a thread, not a process). */
#ifndef GPUTOP_TRACER_H
#define GPUTOP_TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"

struct thread;
struct tracee;

/* Before anything else: connects the event loop's dispatcher to the steps below it. */
void tracer_init(void);

/* Attach mode: seizes every thread of pid and stops them all. 0 or -errno (EPERM, ESRCH,
 * EBUSY when another tracer holds it); the caller explains. */
int tracer_attach(pid_t pid);
/* Launch mode: child is stopped (raise(SIGSTOP) before its execvp); seizes it, lets it exec and
 * stops at the new image. 0 or -errno; -ENOEXEC if the exec failed (child_errno says why). */
int tracer_launch(pid_t child, int exec_status_fd, int *child_errno);

/* With every thread stopped: maps the trampoline page, measures the stop cost, probes what is
 * loaded, and lets the program run. */
int tracer_start(struct tracee *p, bool launched, double max_overhead_pct);

/* Another process attached (tracer_attach): probes it with what tracer_start measured, and
 * lets it run. 0 or -errno. */
int tracer_start_another(struct tracee *p);
/* Before attaching another process of the same job: the ranks of a job wait for each other in
 * their collectives, so a rank stopped stalls them all; stopped one right after another, their
 * stops would add up into one long stall of every rank. This waits two lengths of the last
 * attach's stop after it, serving the processes attached (their stops, drains, parks), so that
 * each stall stays one stop long. */
void tracer_space_attach(void);

/* say(pid of the first process) is called once, from the loop, when after_ns into it no traced
 * process has loaded a CUDA library yet: a program gputop starts loads it in its first moments,
 * and only one that has not after a while is news. */
void tracer_on_no_cuda(uint64_t after_ns, void (*say)(pid_t pid));

/* Runs until the program ends or the session is asked to stop (session_request, a signal to
 * gputop, the timeout), then stops the first process's watchdog. Returns 0 when it ended
 * normally. */
int tracer_loop(double timeout_s, bool need_cuda);

/* Stops every thread of p, restores every byte and return address, unmaps the trampoline page
 * and lets the program go. -ESRCH for NULL (a pid not traced). */
int tracer_detach(struct tracee *p);

/* Every traced process let go, as tracer_detach does for one. */
int tracer_detach_all(void);
/* --dump: each process's picture goes into j (figures/job.h) as it is detached. */
struct job;
void tracer_set_job(struct job *j);
/* The live picture of the job (figures/job_live.h), taken every JOB_LIVE_PERIOD_NS at the
 * housekeeping, without a stop; NULL: none. */
struct job_live;
void tracer_set_job_live(struct job_live *l);
/* pid is one of the traced processes. */
bool tracer_traces(pid_t pid);

/* Program status once it ended: exited == false while it runs. */
bool tracer_exited(int *exit_status, int *term_signal);
bool tracer_timed_out_without_cuda(void);


/* A crash of gputop restores the program and lets its threads go (rescue.c). */
void tracer_install_crash_handler(void);

/* Signals to gputop (SIGINT, SIGTERM, SIGHUP, SIGQUIT) ask for a detach; installs their
 * handlers, after noting the signal state gputop started with. */
void tracer_install_signal_handlers(void);
/* After the tracing: the stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) received since the
 * last call, or 0 (--linger waits on it). */
int tracer_take_stop_signal(void);
/* In the child about to exec the program (launch mode): the signal dispositions and mask
 * gputop started with, so that the program runs as it would without gputop. */
void tracer_restore_signal_state(void);
/* Wakes the tracer thread out of waitpid (from another thread, after session_request). */
void tracer_wake(void);

#endif
