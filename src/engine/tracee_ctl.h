/* tracee_ctl.h — the ptrace steps every part of the engine takes on the traced process's
 * threads: resume, release, wait until all are stopped, run one to a trap of ours; its exit;
 * its CPU time; starting and ending the keeping of a process (struct tracee, base/tracee.h,
 * with every layer's part, made and freed here). The bottom of the engine (it calls only hit.c,
 * to let go of calls that will never return, and to make and free hit's part); stops that come
 * while it waits go to the event loop's dispatcher through a hook. */
#ifndef GPUTOP_TRACEE_CTL_H
#define GPUTOP_TRACEE_CTL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"
#include "event.h"
#include "tracee.h"

struct thread;


/* Starts keeping pid (no ptrace request yet): a struct tracee with every layer's part, added
 * to the traced processes, in *out. 0, -ENOMEM, or -EMFILE when gputop keeps as many
 * processes as it can (RESCUE_SLOTS). There is no current process: every step is handed the
 * one it works on. */
int tracee_open(pid_t pid, bool launched, struct tracee **out);
/* The traced process one of whose threads is tid; NULL. */
struct tracee *tracee_owner(pid_t tid);
/* The traced process pid (its thread group); NULL. */
struct tracee *tracee_of_pid(pid_t pid);
/* The traced processes, in the order they were taken: *it starts at 0. */
struct tracee *tracee_next(uint32_t *it);
/* Stops keeping p (it ended, or gputop let it go): its figures stay. */
void tracee_close(struct tracee *p);
/* Processes with a thread still traced. */
int tracee_live_count(void);

/* The event loop's dispatcher, for stops that come while a step below waits for another. */
void tracee_set_dispatcher(void (*dispatch)(const struct trace_stop *e, uint64_t now));

void tracee_resume(struct thread *t, int sig);
/* Resumes t the way its stop requires (PTRACE_LISTEN for a group-stop, its pending signal
 * otherwise), unless the world is being stopped and t is to stay. */
void tracee_release(struct tracee *p, struct thread *t);
/* Notes that t stopped (state, last event, group-stop). */
void tracee_note_stop(struct thread *t, const struct trace_stop *e);
/* Handles every stop already reported (by any traced thread) through the dispatcher, without
 * waiting: for a step that holds one thread for a while and lets the others run meanwhile.
 * Returns how many. */
int tracee_dispatch_pending(void);
/* Waits until every thread in the table has reported a stop. 0, or -ESRCH if none is left. */
int tracee_wait_all_stopped(struct tracee *p);
/* Holds every thread of the process: each one that runs is interrupted (an event stop, no
 * signal), and every stop is kept (stopping_world) until the caller lets them go. Then waits
 * as tracee_wait_all_stopped. */
int tracee_stop_world(struct tracee *p);
/* t is to stop and stay stopped while the world stop lasts: asked (PTRACE_INTERRUPT) unless it
 * is stopped already. Marking a thread wanted without asking it is how a world stop waited for
 * good for a thread that ran on. */
void tracee_hold(struct thread *t);
/* The same, but gives up once limit_ns have passed and a thread still runs (-ETIMEDOUT): one
 * that cannot stop (an uninterruptible sleep, a vfork's parent whose child is held too) must
 * not hold the others for ever. The caller lets them go (tracee_release_world). */
int tracee_stop_world_within(struct tracee *p, uint64_t limit_ns);
/* The world stop over: every thread no longer wanted stopped, the stopped ones let go. */
void tracee_release_world(struct tracee *p);
/* Resumes the stopped thread t and waits until it traps at trap_addr (other stops of t on the
 * way are remembered and handled later); *r gets its registers there (xol.h's runner). */
int tracee_run_to_trap(struct tracee *p, struct thread *t, uint64_t trap_addr, arch_regs_t *r);
/* Resumes the stopped thread t, its registers set for an injected system call, and stops it at
 * that system call's exit, before it runs a further instruction; with exit_pc != 0, at the exit
 * of the first system call whose pc is then exit_pc (xol.h's syscall runner). */
int tracee_run_syscall(struct tracee *p, struct thread *t, uint64_t exit_pc, arch_regs_t *r);

/* A thread ended (e: TE_EXITED or TE_KILLED): the process's exit status if it was the leader. */
void tracee_on_exit(struct tracee *p, const struct trace_stop *e);
/* Threads in the table that vanished without an exit report we could read. */
void tracee_forget_vanished_threads(struct tracee *p);
/* No thread of that id exists any more, not even as a zombie. */
bool tracee_thread_vanished(pid_t tid);

uint64_t tracee_thread_cpu_ns(struct tracee *p, struct thread *t);
uint64_t tracee_cpu_ns(struct tracee *p);	/* every thread's, those gone included */

#endif
