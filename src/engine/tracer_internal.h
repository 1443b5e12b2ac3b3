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

struct thread;

/* tracee.h: the program, the ptrace steps on its threads, its CPU time. */

/* attach.c: a new image set up; every thread held where code can run in one. */
int tracer_settle_after_exec(struct thread *t);
int tracer_setup_image(struct thread *t);
int tracer_settle_event_stops(void);
struct thread *tracer_injectable_thread(void);

/* attach.c: probing a followed process, every thread stopped; lets it run. */
int tracer_start_followed(int default_device);
void tracer_init_hit(int default_device);	/* with the stop cost measured at the start */

/* follow.c: descendants followed. */
extern bool tracer_follow;
struct thread *follow_fork(struct tracee *parent, pid_t child);
struct thread *follow_guest_exec(struct thread *guest);
bool follow_wants_setup_at_exec(void);
bool follow_first_stop(struct thread *t);
void follow_tick(void);

/* libwatch.c: --no-int3: new libraries found by looking at the maps, every tick. */
void libwatch_tick(void);

/* trap.c: SIGTRAP stops. */
bool tracer_on_trap(struct thread *t, uint64_t now);

/* children.c: processes the program creates. */
bool tracer_shares_memory(pid_t child);
void tracer_clean_child(pid_t child);
void tracer_release_child(pid_t child);
struct thread *tracer_adopt(const struct trace_stop *e);

/* signals.c: set by the handler of gputop's own signals, read and cleared by the loop. */
extern volatile sig_atomic_t tracer_stop_signal;
extern volatile sig_atomic_t tracer_stop_from_terminal;

#endif
