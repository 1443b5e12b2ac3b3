/* gputime.h — --gpu-time in each traced process: libgputop-gpu.so loaded (dlopen called in a
 * thread gputop holds at the entry of a CUDA call of the program's own), its ring read at
 * every tick, and at the end stopped and unloaded, nothing left (inject/gputime.c, README's
 * "What gputop writes into your program"). */
#ifndef GPUTOP_ENGINE_GPUTIME_H
#define GPUTOP_ENGINE_GPUTIME_H

#include <stdbool.h>

struct thread;
struct tracee;

/* --gpu-time asked: lib is libgputop-gpu.so's path (gputime_find.h). Set once, before any
 * process is taken. */
void gputime_enable(const char *lib);

void gputime_forget(struct tracee *p);	/* exec: the library went with the old image; loaded again */

/* A stop just handled (trap.c), t still held: if t stands at the entry of a CUDA call of the
 * program's own and the library is not loaded yet, loads it there and waits (other threads run
 * and their stops are handled) until CUPTI records or says why not. */
void gputime_at_stop(struct tracee *p, struct thread *t);
/* The library waits for such a stop in p (a park then stops rather than be served in place). */
bool gputime_wants_stop(const struct tracee *p);
/* The tick: p's new records into the figures. */
void gputime_drain(struct tracee *p);
/* t is held at the entry of execve: the records CUPTI holds are flushed (the library's flush
 * called in t, which holds no lock there) and read before the image goes. */
void gputime_before_exec(struct tracee *p, struct thread *t);
/* Before a detach: asks every process's library to flush and unload, and waits for it (at most
 * a few seconds, handling the program's stops meanwhile). */
void gputime_stop_all(void);
/* Whether a seccomp filter refused --gpu-time's library in some process. */
bool gputime_refused(void);

#endif
