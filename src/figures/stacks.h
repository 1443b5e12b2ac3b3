/* stacks.h — call stacks, interned: one copy of each distinct stack under a small id, and what
 * was counted per stack (the sites): allocations and their bytes, time in the calls, sampled
 * launches per kernel, errors per API function. A stack belongs to one process image (its key
 * says which), so whatever is counted per stack is that process's. Bounded: STACKS_MAX stacks and STACK_SITES_MAX
 * launch and error sites; beyond them nothing new is kept (counted as stack 0, "no stack").
 * The tracer adds and counts; any thread reads. A stack, once added, never changes or moves,
 * so a pointer from stacks_get stays valid until stacks_free. */
#ifndef GPUTOP_STACKS_H
#define GPUTOP_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define STACKS_MAX 65536
#define STACK_SITES_MAX 65536
#define STACK_NONE 0u		/* no stack: not taken, or not kept */

struct stack_frame {
	const char *function;	/* demangled; "module+0xOFFSET" where no symbol names it */
	const char *file;	/* source file, NULL where unknown */
	uint32_t line;		/* 0 where unknown */
	const char *module;	/* the module's file name; for a Python frame, the interpreter's */
	bool python;		/* a frame of Python code (file and line are the .py's) */
};

struct stack {
	pid_t pid;		/* the process it was taken in */
	uint32_t n;		/* frames, innermost first */
	bool truncated;		/* deeper than --stack-depth: native frames left out (the outermost, or
				 * those between the Python frames and the called function) */
	struct stack_frame frame[];
};

void stacks_free(void);

/* The id of the stack whose key (words that tell stacks apart: the process image, pcs, Python
 * code and line) is key[0..n), or STACK_NONE when it is not kept yet. */
uint32_t stacks_find(const uint64_t *key, uint32_t n);
/* Keeps a new stack of process pid under key, its frames copied; its id, or STACK_NONE when
 * the table is full or out of memory. */
uint32_t stacks_add(pid_t pid, const uint64_t *key, uint32_t n_key, const struct stack_frame *frames,
		    uint32_t n_frames, bool truncated);
const struct stack *stacks_get(uint32_t id);	/* NULL for STACK_NONE or an unknown id */
/* Whether stack id was taken in process pid; pid 0 (a snapshot of all): any stack. */
bool stacks_in_process(uint32_t id, pid_t pid);

/* Counting at a site (tracer thread); STACK_NONE counts nothing. */
void stacks_on_alloc(uint32_t id, uint64_t bytes);
void stacks_on_call_time(uint32_t id, uint64_t ns);
/* A launch of kernel (its name from stats_kernel_name: one pointer per process and kernel)
 * seen with its stack (its first, or a sample). */
void stacks_on_launch(uint32_t id, const char *kernel);
void stacks_on_error(uint32_t id, int api, int err);

struct stack_counts {
	uint32_t stack;
	uint64_t allocations, allocated_bytes;	/* successful allocations made there */
	uint64_t ns;				/* time in the calls whose stack it is */
};
struct stack_launch_site {
	const char *kernel;	/* stats_kernel_name's pointer: compare names with strcmp */
	uint32_t stack;
	uint64_t samples;	/* launches seen there with a stack */
};
struct stack_error_site {
	int api, err;
	uint32_t stack;
	uint64_t count;
};

/* A copy of the counts, for presenters; free with stacks_snapshot_free. */
struct stacks_snapshot {
	size_t n_counts, n_launch, n_error;
	struct stack_counts *counts;		/* stacks with allocations or time */
	struct stack_launch_site *launch;
	struct stack_error_site *error;
};
int stacks_snapshot(struct stacks_snapshot *out);
/* Whether launch site l is one of the kernel named name (snapshots merge kernels of several
 * processes by name) in process pid (0: any). */
bool stacks_launch_site_of(const struct stack_launch_site *l, const char *name, pid_t pid);
void stacks_snapshot_free(struct stacks_snapshot *s);

#endif
