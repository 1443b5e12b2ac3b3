/* tracer_internal.h — what the tracer's files (tracer.c, attach.c, detach.c, trap.c, children.c,
 * signals.c) share with one another: the traced program's state and the steps one of them takes
 * for another. Nothing outside the tracer includes it; the rest of gputop sees tracer.h. */
#ifndef GPUTOP_TRACER_INTERNAL_H
#define GPUTOP_TRACER_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracer.h"

struct thread;

/* tracer.c: the program, the event loop and the program's CPU time. */
extern pid_t tracer_pid;		/* thread group being traced */
extern bool tracer_launched;
extern bool tracer_stopping_world;	/* detaching: threads that stop are kept stopped */
extern uint64_t tracer_stops;		/* every stop at a breakpoint of ours */
void tracer_resume(struct thread *t, int sig);
void tracer_release(struct thread *t);
int tracer_wait_all_stopped(void);
uint64_t tracer_thread_cpu_ns(struct thread *t);
uint64_t tracer_program_cpu_ns(void);

/* attach.c: a new image set up; every thread held where code can run in one. */
int tracer_settle_after_exec(struct thread *t);
int tracer_setup_image(struct thread *t);
int tracer_settle_event_stops(void);
struct thread *tracer_injectable_thread(void);

/* trap.c: SIGTRAP stops. */
bool tracer_on_trap(struct thread *t, uint64_t now);
void tracer_crash_test_setup(void);

/* children.c: processes the program creates. */
bool tracer_shares_memory(pid_t child);
void tracer_clean_child(pid_t child);
void tracer_release_child(pid_t child);
struct thread *tracer_adopt(pid_t tid, int status);

/* signals.c: set by the handler of gputop's own signals, read and cleared by the loop. */
extern volatile sig_atomic_t tracer_stop_signal;
extern volatile sig_atomic_t tracer_stop_from_terminal;

#endif
