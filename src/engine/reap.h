/* reap.h — a program that dies while gputop holds it (killed by a seccomp filter's SIGSYS while
 * gputop attaches, by kill -9, ...): no wait on one of its threads may last forever, and how it
 * died must be said. The kernel reports a thread-group leader's exit only once every other
 * thread of the group has been reaped, and a traced thread is reaped only by its tracer. */
#ifndef GPUTOP_REAP_H
#define GPUTOP_REAP_H

#include <stdbool.h>
#include <sys/types.h>

struct tracee;

/* A wait for thread tid of program p was interrupted (the 10 ms tick, or a signal to gputop).
 * If tid has exited but cannot be reported yet (the group's leader, its other threads dead and
 * not reaped), reaps every other dead thread of p (__WALL), so that tid's exit comes next.
 * True when the wait should end now: the program is dead and tid's exit has not come within
 * a second, or it is dead and gputop was asked to stop (stop_asked). A live thread is waited
 * for: it is running a single call gputop gave it. */
bool reap_after_interrupted_wait(struct tracee *p, pid_t tid, bool stop_asked);

/* After an attach or start that failed: if pid dies within wait_ms (0: has died), reaps what is
 * left of it (every thread, forgotten in p's table; p NULL: gputop never took it) and says how
 * the leader ended: *exit_code (128 + signal if killed), *term_signal (0 if it exited). False
 * while it lives (no stop of a live thread is taken), or when its exit was already read
 * elsewhere. */
bool reap_dead_program(struct tracee *p, pid_t pid, int *exit_code, int *term_signal, int wait_ms);

#endif
