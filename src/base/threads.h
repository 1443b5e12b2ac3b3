/* threads.h — the traced program's threads as the tracer knows them: whether each is running
 * or held in a stop, the signal owed to it, its current device, and its shadow stack of calls
 * whose return address was swapped for the trampoline (whose frames the engine fills). */
#ifndef GPUTOP_THREADS_H
#define GPUTOP_THREADS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct threads_state;
struct tracee;

enum thread_state {
	TS_RUNNING,	/* resumed; a stop will be reported */
	TS_STOPPED,	/* in a ptrace stop we have not resumed yet */
	TS_LISTENING,	/* in group-stop (SIGSTOP & co.), resumed with PTRACE_LISTEN */
};

/* A traced call in flight (engine/frame.h: the engine's, which pushes them). */
struct frame;

struct thread {
	pid_t tid;
	uint8_t state;		/* enum thread_state */
	bool guest;		/* a vfork child sharing our memory: stepped, never counted */
	bool want_stop;		/* stop-the-world: keep it stopped when it reports */
	bool group_stopped;	/* its last stop was a group-stop (SIGSTOP & co.) */
	bool park_asked;	/* interrupted to be served in a stub's park (engine/park.c) */
	bool seccomp_asked;	/* interrupted for a look at its seccomp filters (seccomp_watch.c) */
	int16_t seccomp_ok;	/* 1 + the number of seccomp filters it ran under when they were
				 * shown to let it park; 0: not looked at (engine/seccomp_watch.c) */
	int status_fd;		/* its /proc/TID/status kept open (read by the seccomp sweep: no path
				 * lookup each time); -1 until then */
	int sched_fd;		/* its /proc/TID/schedstat kept open (threads_ran); -1 until then */
	uint64_t ran_ns;	/* its time on a CPU at the last threads_ran; 0: not read yet */
	bool options_set;	/* its ptrace options set by gputop (engine/exit_watch.c) */
	uint8_t stop_event;	/* enum trace_event of its last stop (engine/event.h) */
	int pending_sig;	/* signal to deliver when it is resumed */
	uint64_t deferred;	/* more signals that arrived while we held it (bit n-1 = signal n):
				 * sent again once it runs, so each is delivered in its turn */
	int device;		/* from cudaSetDevice or a context made current, -1 until known */
	int8_t dev_pushed[8];	/* devices under contexts pushed (cuCtxPushCurrent), innermost last */
	uint8_t n_pushed;
	uint64_t thread_pointer;	/* its %fs base, from its last stop: names it in call records */
	pid_t own_tid;		/* its id in its own PID namespace (threads_own_tid); 0: not read */
	uint64_t cpu_ns;	/* CPU time it had used when last looked at (--max-overhead) */
	uint32_t depth, cap;
	struct frame *frames;	/* its shadow stack of calls in flight: depth of cap */
};

/* A process's table (p->threads, base/tracee.h); made and freed with it. */
struct threads_state *threads_state_new(void);
void threads_state_free(struct threads_state *st);

struct thread *threads_find(const struct tracee *p, pid_t tid);
/* In the table st (whose thread tid is, when only the table is at hand). */
struct thread *threads_find_in(struct threads_state *st, pid_t tid);
struct thread *threads_add(struct tracee *p, pid_t tid);	/* finds or adds */
void threads_remove(struct tracee *p, pid_t tid);
void threads_clear(struct tracee *p);
/* The thread whose id in the program's own PID namespace is own (a gettid() of the program's:
 * a park slot, CPython's native id), NULL if none. A program in a container seen from the node
 * has other ids there than the ones gputop traces (NSpid in /proc/TID/status). */
struct thread *threads_find_own(const struct tracee *p, pid_t own);
/* t's id in the program's own PID namespace, as gettid() in t says it (0: unknown, gone). */
pid_t threads_own_tid(const struct tracee *p, struct thread *t);
int threads_count(const struct tracee *p);		/* traced threads, guests excluded */
int threads_count_all(const struct tracee *p);
/* Threads of p removed so far (exited, vanished, an exec's): a count that only grows. */
uint64_t threads_removed(const struct tracee *p);
/* Whether t ran (was on a CPU, in ns: /proc/TID/schedstat) since the last call; true the first
 * time, and whenever it cannot be told (no schedstat, out of descriptors). */
bool threads_ran(struct thread *t);

/* Iteration: uint32_t it = 0; for (struct thread *t; (t = threads_iter(p, &it));) ...
 * Removing the current thread while iterating is allowed (hashmap_next's order makes it
 * safe); adding is not (the table may grow). */
struct thread *threads_iter(const struct tracee *p, uint32_t *cursor);
/* The thread whose thread pointer (learnt at its first stop) is tp; NULL if none is known. */
struct thread *threads_with_pointer(const struct tracee *p, uint64_t tp);
/* The id of a thread that ended (one of the last 64) whose pointer was tp; 0 if none: a call
 * record read after its thread's end is still its thread's. */
pid_t threads_gone_with_pointer(const struct tracee *p, uint64_t tp);

#endif
