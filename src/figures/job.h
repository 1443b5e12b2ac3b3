/* job.h — the picture --dump takes of a job: for each process, held once for its detach, each
 * thread's CUDA or NCCL call in flight (from the call stub's record, the int3 path's frame, or
 * else its stack: a call entered before gputop attached) and its call stack; then, across the
 * processes, the ones that differ (job_mark). The session makes it, the engine fills it
 * (engine/dump_take.c) while it holds each process, presenters read it once the tracing is
 * over. Not thread-safe: one writer, then readers. */
#ifndef GPUTOP_JOB_H
#define GPUTOP_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cuda_call.h"

struct stack_taken;

#define JOB_MAX_PROCS 64
#define JOB_MAX_THREADS 512

/* Where a thread's call in flight was learnt. */
enum job_call_from {
	JOB_CALL_NONE,		/* in no CUDA or NCCL call */
	JOB_CALL_RECORD,	/* the call stub's record: entry time and register arguments */
	JOB_CALL_FRAME,		/* an int3 at its entry: entry time and every argument */
	JOB_CALL_STACK,		/* only its frame on the stack: entered before the attach */
};

struct job_thread {
	pid_t tid;
	char name[16];		/* /proc/TID/comm */
	uint8_t from;		/* enum job_call_from */
	int api;		/* the call's API row; -1: none */
	struct cuda_call call;	/* what its arguments say (RECORD, FRAME) */
	uint64_t age_ns;	/* how long it has been inside (RECORD, FRAME) */
	uint32_t stack;		/* figures/stacks.h; STACK_NONE: not taken */
	struct stack_taken *taken;	/* the engine's copy of it, until interned (engine/dump_take.c) */
};

/* What sets a process apart from the others of its job (job_mark). */
enum {
	JOB_ODD_BEHIND = 1,	/* fewer collectives reached than another process */
	JOB_ODD_NOT_WAITING = 2,	/* in no synchronize or collective while all the others wait */
	JOB_ODD_LINE = 4,	/* its Python line is not the one most processes are at */
	JOB_ODD_WAITS_LEAST = 8,	/* the straggler: it waited least of the watched time, every
				 * other rank at least JOB_STRAGGLER_GAP more */
};
#define JOB_ODD_KINDS 4
/* The straggler's margin: the share of the watched time by which every other rank waited more. */
#define JOB_STRAGGLER_GAP 0.2
/* Shorter watches say no share (a dump without --timeout watches a few milliseconds). */
#define JOB_WATCH_MIN_NS 500000000ull

struct job_process {
	pid_t pid;
	bool cuda;		/* it loaded CUDA: a rank (a launcher is none, and never odd) */
	uint64_t held_ns;	/* how long gputop held it stopped, attach and detach together */
	uint64_t taken_ns;	/* of which taking this picture */
	uint64_t described_ns;	/* unwinding and naming its stacks, after (not held) */
	uint64_t taken_at;	/* monotonic, when it was taken */
	int n_threads;
	struct job_thread *threads;
	int quiet_threads;	/* a live picture's threads left out: in no call seen, no Python */
	uint64_t since_ns;	/* a live picture's: when its figures began (the attach, or z) */
	/* Set by job_mark, from the figures and the threads. */
	int rank, nranks;	/* -1: not known */
	uint64_t collectives;	/* NCCL operations returned since the attach */
	/* NCCL's own count of its communicator's collectives (engine/nccl_counter.c), from its
	 * start: where found and checked; else why not (counter_why). */
	bool counter_checked;
	uint64_t counter;
	uint32_t counter_offset;	/* of the field in the communicator */
	const char *counter_why;
	int in_collective;	/* threads inside one now */
	bool waiting;		/* a thread inside a synchronize or a collective */
	uint32_t position;	/* collectives + (inside one now ? 1 : 0); NCCL's counter where every
				 * rank's was checked (job_mark); a live picture's less its offset from
				 * the first process's (job_live.c) */
	uint64_t watched_ns;	/* from the attach to the picture */
	uint64_t wait_ns;	/* of which its threads were inside synchronizes and collectives
				 * (returned, then the calls in flight for their age) */
	double wait_share;	/* wait_ns / watched_ns, at most 1; -1: watched too short */
	const char *py_function, *py_file;	/* its innermost Python frame (the waiting thread's
						 * first, else the first thread's with one); NULL */
	uint32_t py_line;
	uint32_t odd;		/* JOB_ODD_* */
};

struct job {
	bool live;		/* a live session's picture (figures/job_live.h), not --dump's */
	int n;
	struct job_process proc[JOB_MAX_PROCS];
	uint64_t taken_ns;	/* monotonic, when the picture was taken */
};

struct job *job_new(void);	/* empty; NULL: out of memory */
void job_free(struct job *j);
struct job *job_copy(const struct job *j);	/* a deep copy; NULL: out of memory */
/* The process pid's entry, made on first use; NULL when the table is full. */
struct job_process *job_process_of(struct job *j, pid_t pid);
/* A new thread of process jp, zeroed but for tid and api -1; NULL when none is left. */
struct job_thread *job_thread_add(struct job_process *jp, pid_t tid);

/* Whether a thread is waiting on the GPU or its peers: inside a synchronize or a collective. */
bool job_thread_waits(const struct job_thread *t);
bool job_thread_in_collective(const struct job_thread *t);
/* Sets each process's waiting, position and Python line from its threads, then its odd bits
 * (with the collectives and ranks filled in): job_sum on each, positions from NCCL's counters
 * where every rank's was checked, then job_mark_odd. */
void job_mark(struct job *j);
/* A process's waiting, position, Python line and wait share (wait_ns and the calls in flight
 * over watched_ns) from its threads. */
void job_sum(struct job_process *jp);
/* The odd bits of every process, from what job_sum set (a live picture sets its own share). */
void job_mark_odd(struct job *j);

/* Where the thread's call was learnt: "call stub", "int3", "stack"; NULL: no call. */
const char *job_call_source(const struct job_thread *t);
/* The arguments that matter of the call (op, bytes, peer, comm), as text; "" where none are
 * known. snprintf's return. */
int job_call_args(const struct job_thread *t, char *buf, size_t size);
/* The words of JOB_ODD_* bits 0 to JOB_ODD_KINDS - 1. */
extern const char *const job_odd_names[JOB_ODD_KINDS];

#endif
