/* exit_watch.h — which threads of a traced process stop at their exit (exit_watch.c). */
#ifndef GPUTOP_EXIT_WATCH_H
#define GPUTOP_EXIT_WATCH_H

struct tracee;
struct thread;

/* Every thread stopped, the process about to run: the leader set to stop at its exit, where
 * anything is read there. */
void exit_watch_start(struct tracee *p);
/* A thread's first stop (a new thread inherits its creator's options). */
void exit_watch_first_stop(struct tracee *p, struct thread *t);
/* t is held at its exit stop (the caller lets it go). A leader leaving before the others: each
 * of them set to stop at its exit, at its next stop (interrupted now). */
void exit_watch_on_exit(struct tracee *p, struct thread *t);

#endif
