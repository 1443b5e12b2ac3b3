/* rows.h — the rows every presenter shows: the TUI's views, batch mode (-b) and --json all
 * build them here, from a statistics snapshot and the one before it, so that they cannot
 * disagree on a figure. Rows hold figures, not text: the presenters format them. */
#ifndef GPUTOP_ROWS_H
#define GPUTOP_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stats.h"
#include "torch_rows.h"

/* One CUDA function that was called. */
struct row_api {
	int index;			/* its row in the API table (cuda_api.h) */
	pid_t pid;			/* the process; 0: several */
	const char *name;		/* NULL: the table has no such row */
	int layer;			/* enum api_layer */
	bool launch;			/* a launch function: its calls are estimates under
					 * --max-overhead */
	uint64_t calls, calls_delta;	/* in all; in the interval */
	bool returns_seen;		/* the return is probed: errors and time are known */
	uint64_t errors;
	uint64_t ns, avg_ns;		/* time inside the calls; per call */
	int last_error;			/* 0: none */
	const char *last_error_name;	/* NULL: a code without a name (or none) */
	int stops_per_call;		/* -1: not probed */
	uint64_t lost;			/* records dropped, detail only (stats.h) */
};

/* One kernel that was launched. */
struct row_kernel {
	int id;				/* its index in the snapshot's kernel table */
	pid_t pid;			/* the process; 0: several */
	const char *name;		/* demangled; NULL: not known */
	uint64_t launches, launches_delta;	/* direct launches */
	uint64_t graph_launches, graph_launches_delta;	/* executions as a node of a graph launch */
	uint32_t grid[3], block[3];	/* of the last launch; 0 when not known */
	struct stats_gpu_time gpu;	/* --gpu-time: its runs' GPU time (count 0: none seen) */
};

/* Copies (or memsets) of one kind: in all, and in the interval. */
struct row_xfer {
	char name[16];			/* "H2D", "H2D async", "memset" */
	struct stats_xfer total, delta;
};

/* One live allocation. */
struct row_alloc {
	pid_t pid;			/* the process that holds it */
	uint64_t addr;
	char address[24];		/* "0x7f0000000000": the one way it is written */
	uint64_t bytes;
	int kind;			/* enum mem_kind */
	const char *kind_name;		/* "device"; NULL: not known */
	const char *api;		/* the allocating function; NULL: not known */
	int device;			/* -1: not known */
	pid_t tid;
	uint64_t age_ns;		/* at the snapshot */
	const char *caller;		/* calling module, "" when not known */
	uint32_t stack;			/* its call stack (stacks.h), STACK_NONE if none */
};

/* One GPU's figures (comm_table.h); device -1: what ran where gputop could not tell. */
struct row_device {
	int device;
	struct stats_device_use total, delta;
	uint64_t live_bytes;		/* device and managed memory live there */
};

/* One NCCL operation of one process (pid 0: of all, the totals). */
struct row_coll {
	pid_t pid;
	int rank, nranks;		/* the process's; -1: not known (or several) */
	int op;				/* enum coll_op */
	const char *name;		/* "AllReduce" */
	struct stats_coll total, delta;
};

/* Bytes moved from one GPU to another (peer copies, ncclSend); -1: not known. */
struct row_p2p {
	int src, dst;
	struct stats_p2p total, delta;
};

/* An NCCL communicator of a process. */
struct row_comm {
	pid_t pid;
	int rank, nranks, device;	/* -1: not known */
};

struct rows {
	uint64_t interval_ns;			/* the interval the deltas cover */
	const struct stats_snapshot *snap;	/* cur: its process list, for ranks */
	size_t n_api;
	struct row_api *api;			/* by calls, most first, then by name */
	size_t n_kernel;
	struct row_kernel *kernel;		/* by launches, most first, then by name */
	size_t n_alloc;
	struct row_alloc *alloc;		/* by size, largest first, then by address */
	struct row_xfer copy[DIR_COUNT][COPY_MODE_COUNT];	/* with calls or not */
	struct row_xfer dir[DIR_COUNT];		/* both modes of a direction */
	struct row_xfer copies;			/* every copy, all directions */
	struct row_xfer memset_;
	struct row_xfer graph_copy[DIR_COUNT];	/* copies run as graph nodes ("H2D graph"): calls are
						 * executions, no time of their own */
	struct row_xfer graph_memset;		/* "memset graph" */
	uint64_t calls, calls_delta, errors;	/* all API rows */
	const char *all_failed;			/* every call whose result is known failed (no
						 * driver, no GPU): the error's name, "" where the
						 * rows' last errors differ; NULL otherwise */
	uint64_t launches, launches_delta;	/* direct kernel launches */
	uint64_t graph_kernel_runs, graph_kernel_runs_delta;	/* kernel executions in graphs */
	uint64_t graph_launches, graph_launches_delta;		/* graph launches */
	size_t n_graph;
	struct stats_graph *graph;		/* executable graphs, by id */
	/* Devices and communication (comm_rows.c). */
	size_t n_device;
	struct row_device device[COMM_DEV_SLOTS];	/* GPUs with figures, by number; not known last */
	size_t n_coll_total;
	struct row_coll coll_total[COLL_COUNT];	/* operations called, all processes of the snapshot */
	size_t n_coll;
	struct row_coll *coll;			/* per process, by rank (then pid), then operation */
	size_t n_p2p;
	struct row_p2p *p2p;			/* by source, then destination */
	size_t n_comm;
	struct row_comm *comm;			/* in the order they were made, by process */
	struct stats_gpu gpu;			/* --gpu-time (gpu.on false: not recorded) */
	double gpu_busy;			/* busy_ns over the time recorded, -1 if none */
	struct torch_rows torch;		/* PyTorch's memory (torch_rows.h) */
};

/* The share of the time --gpu-time recorded (until now_ns, where it is still on) in which a
 * kernel ran: busy_ns is a union per device, summed, so with several GPUs it may pass 1.
 * -1 when nothing was recorded. */
double rows_gpu_busy(const struct stats_gpu *g, uint64_t now_ns);

/* Builds the rows of cur. prev is the snapshot before it, for the interval figures; NULL
 * makes the interval the whole session (since cur->start_ns). Returns 0, or -ENOMEM with r
 * empty. Names point into the API table and the stats module, valid for its life. */
int rows_build(struct rows *r, const struct stats_snapshot *cur,
	       const struct stats_snapshot *prev);
void rows_free(struct rows *r);

/* The rows of devices and communication (comm_rows.c; rows_build calls it). */
int comm_rows_build(struct rows *r, const struct stats_snapshot *cur, const struct stats_snapshot *prev);
void comm_rows_free(struct rows *r);

/* The rank of process pid in a distributed job, from the snapshot's process list; -1: none. */
int rows_rank(const struct stats_snapshot *s, pid_t pid);

/* cur - prev of a counter; cur alone after a reset ('z') in between. (Inline: comm_rows.c,
 * which rows.c calls, uses it too.) */
static inline uint64_t rows_delta(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : cur;
}
/* delta per second over ns; 0 when ns is 0. */
double rows_per_sec(uint64_t delta, uint64_t ns);

#endif
