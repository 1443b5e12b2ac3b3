/* tracer_internal.h — what the tracer's files (tracer.c, attach.c, detach.c, trap.c, children.c,
 * signals.c) share with one another: the traced program's state and the steps one of them takes
 * for another. Nothing outside the tracer includes it; the rest of gputop sees tracer.h. */
#ifndef GPUTOP_TRACER_INTERNAL_H
#define GPUTOP_TRACER_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "event.h"
#include "tracee_ctl.h"
#include "tracer.h"

struct hit_keeper;

/* TRACESYSGOOD: the only system call stops are those of injected calls (tracee_run_syscall)
 * and the end of an exec (tracer_settle_after_exec), told apart from a SIGTRAP of the
 * program's by it. PTRACE_O_TRACEEXIT is set thread by thread (exit_watch.c). */
#define TRACER_PTRACE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | \
			       PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD)

struct thread;

/* The tracer's session (tracer.c's): the first process (the one gputop launched or the first
 * -p: its end ends the session's exit status; the others' go to their figures), the wait's
 * poll, and the last attach's stop (attach.c: when it began, 0 once it ended; when the
 * process ran again; how long it was held; what a stop costs, measured in the first process,
 * used for all). */
struct tracer_session {
	struct tracee *root;
	long spin_ns;	/* wait_event's poll, -1 until chosen */
	uint64_t last_stop_ns;	/* when wait_event last returned a stop */
	uint64_t stop_began_ns, stop_ended_ns, stop_ns;
	uint64_t stop_cost_ns;
	struct job *job;	/* --dump's picture, taken at each detach; NULL: none */
	struct job_live *job_live;	/* the live picture, taken at the housekeeping; NULL: none */
	/* tracer_on_no_cuda: said once, when no process has loaded CUDA that long into the loop */
	void (*no_cuda_say)(pid_t pid);
	uint64_t no_cuda_after_ns;
	uint64_t drain_round;	/* drain_all's round: a process drained in it is not again */
};
extern struct tracer_session tracer;

/* tracee.h: the program, the ptrace steps on its threads, its CPU time. */

/* attach.c: a new image set up; every thread held where code can run in one. */
int tracer_settle_after_exec(struct thread *t);
int tracer_setup_image(struct tracee *p, struct thread *t);
int tracer_settle_event_stops(struct tracee *p);
struct thread *tracer_injectable_thread(struct tracee *p);

/* attach.c: when the next attach may stop a process (tracer_space_attach): two lengths of the
 * last attach's stop after it; 0: at once. */
uint64_t tracer_next_attach_due(void);

/* attach.c: probing a followed process, every thread stopped; lets it run. */
int tracer_start_followed(struct tracee *p, int default_device);
void tracer_init_hit(struct tracee *p, int default_device);	/* with the stop cost measured at the start */

/* follow.c: descendants followed. */
struct thread *follow_fork(struct tracee *parent, pid_t child, struct tracee **child_p);
struct thread *follow_guest_exec(struct tracee *host, struct thread *guest, struct tracee **p);
bool follow_wants_setup_at_exec(struct tracee *p);
bool follow_first_stop(struct tracee *p, struct thread *t);
void follow_tick(void);

/* libwatch.c: --no-int3: new libraries found by looking at the maps, every tick. */
void libwatch_tick(struct tracee *p);

/* trap.c: SIGTRAP stops of t, a thread of p. */
bool tracer_on_trap(struct tracee *p, struct thread *t, uint64_t now);
/* What a stub wanted gputop for (a launch to name, a call's stack), with r as at the stub's
 * park (addr: the park's call); the thread is not let go. Whether it was one. g: the park is
 * served without a stop (hit.h); NULL: the thread is stopped. A park held for gputop counts
 * as a stop either way (cost.stops: the times gputop held the program). */
bool tracer_on_stub_wait(struct tracee *p, struct thread *t, const arch_regs_t *r, uint64_t addr, uint64_t now,
			 struct hit_keeper *g);
/* Whether that park wants memory only (a stack, a launch of a kernel named already): served
 * in place, the thread never stopped, so a gputop frozen meanwhile cannot hold it. */
bool tracer_stub_wait_in_place(struct tracee *p, const arch_regs_t *r, uint64_t addr);

/* park.c: threads the stubs park for gputop (probe/launchpark.h). park_poll asks each one
 * parked to stop: every drain, and every PARK_POLL_NS while parks keep coming (park_hot; the
 * next one park_due); park_on_stop serves one at that stop and lets it go (false: the stop was
 * not for that). */
#define PARK_POLL_NS 200000ull
void park_poll(struct tracee *p, uint64_t now);
bool park_hot(uint64_t now);
bool park_due(uint64_t now);
bool park_on_stop(struct tracee *p, struct thread *t, uint64_t now);
/* Detach: a thread parked is told to go on, and out of its wait now. */
void park_release(struct tracee *p, struct thread *t, arch_regs_t *r);

/* children.c: processes the program creates. */
bool tracer_shares_memory(struct tracee *p, pid_t child);
void tracer_clean_child(struct tracee *p, pid_t child);
void tracer_release_child(struct tracee *parent, pid_t child);
struct thread *tracer_adopt(const struct trace_stop *e, struct tracee **p);

/* signals.c: set by the handler of gputop's own signals, read and cleared by the loop. */
int tracer_stop_signal(void);		/* SIGINT/SIGTERM/SIGHUP/SIGQUIT received, or 0 */
bool tracer_stop_from_terminal(void);	/* ... sent by the terminal driver */
void tracer_stop_clear(void);
/* The program gputop launched, to which a hangup of gputop's own session is passed on. */
void tracer_signals_launched(pid_t program);
/* The loop's tick (10 ms unless parks want it sooner); the timer is set only on a change. */
void tracer_tick_every(uint64_t ns);

#endif
