/* stats.h — what gputop has counted: calls per API function, live allocations, kernels,
 * transfers and time blocked in synchronize calls. The tracer feeds it from its thread; views
 * and exporters read copies (snapshots) from theirs. Nothing here touches the traced program. */
#ifndef GPUTOP_STATS_H
#define GPUTOP_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "comm_table.h"
#include "cuda_api.h"
#include "torch_mem.h"

enum copy_mode { COPY_SYNC, COPY_ASYNC, COPY_MODE_COUNT };

/* Distinct kernel names kept; launches of any further kernel count under one shared
 * "(other kernels)" row, so memory stays bounded however many kernels a program makes. */
#define STATS_MAX_KERNELS 65536

/* One row per API function in cuda_api.c's table (same index). */
struct stats_api {
	pid_t pid;		/* the process that called it; 0: several (a snapshot of all) */
	uint64_t calls;
	uint64_t errors;	/* calls that returned non-zero (only for probes with a return) */
	uint64_t ns;		/* time inside the call, stop overhead subtracted */
	int last_error;		/* last non-zero return code, 0 if none */
	uint64_t lost;		/* records the stubs could not keep (a full ring or call table while
				 * gputop fell behind): every count stays exact (the tallies), the
				 * detail (devices, communicators, timeline, stacks) misses them */
	bool returns_seen;	/* the return is probed, so errors and time are known */
	int8_t stops_per_call;	/* what a call costs the program in stops: 0 (ring or call stub),
				 * 1 or 2; -1 when not probed */
};

struct stats_alloc {
	uint64_t addr;		/* first: the allocation table's key */
	pid_t pid;		/* the process that holds it */
	uint64_t bytes;
	uint64_t t_ns;		/* when it was allocated (monotonic) */
	pid_t tid;		/* thread that allocated it */
	int16_t api;		/* index into the API table */
	int8_t device;		/* current device of that thread, -1 if unknown */
	uint8_t kind;		/* enum mem_kind */
	bool in_place;		/* the stubs' live table holds it too (arch/tally.h): counted there */
	const char *caller;	/* module that called the allocation function, "" if unknown;
				 * interned by the stats module, valid for its life */
	uint32_t stack;		/* its call stack (stacks.h), STACK_NONE if none was taken */
};

/* GPU time of a kernel's runs, from CUPTI's activity records (--gpu-time). */
struct stats_gpu_time {
	uint64_t count;		/* runs with a record */
	uint64_t total_ns, min_ns, max_ns;
};

struct stats_kernel {
	const char *name;	/* demangled; owned by the stats module, valid for its life */
	pid_t pid;		/* the process that launched it; 0: several (a snapshot of all) */
	uint64_t launches;	/* direct launches (a launch captured into a graph is none) */
	uint64_t graph_launches;	/* executions as a node of a launched graph */
	uint32_t grid[3], block[3];	/* of the last launch; 0 when not known */
	struct stats_gpu_time gpu;	/* --gpu-time */
};

struct stats_xfer {
	uint64_t calls;
	uint64_t bytes;
	uint64_t ns;		/* time inside the copy calls */
};

/* A node of an executable CUDA graph, as the driver described it (engine/hit_graphs.c). */
enum graph_node_type { GRAPH_NODE_KERNEL, GRAPH_NODE_COPY, GRAPH_NODE_MEMSET, GRAPH_NODE_OTHER };
struct stats_graph_node {
	uint8_t type;		/* enum graph_node_type */
	uint8_t dir;		/* copies: enum copy_dir */
	int kernel;		/* kernels: an id from stats_kernel_id (-1: "(other kernels)") */
	uint64_t bytes;		/* copies and memsets, per execution */
	uint32_t grid[3], block[3];
};

/* One executable graph (a cudaGraphExec_t / CUgraphExec). */
struct stats_graph {
	uint64_t exec;		/* its handle in the program */
	pid_t pid;		/* the program's process (set in snapshots) */
	uint32_t id;		/* 1, 2, ... in the order gputop learnt of them, per process */
	bool nodes_known;	/* false: instantiated before gputop attached; the driver cannot tell
				 * an executable graph's nodes, so its launches name no kernel */
	uint32_t nodes, kernel_nodes, copy_nodes, memset_nodes;
	uint64_t launches;
};

/* What --gpu-time measured of a process (or of all of them, summed): CUPTI's records. */
struct stats_gpu {
	bool on;		/* GPU time was (or is being) recorded */
	uint64_t since_ns, until_ns;	/* when recording began and ended (monotonic; until 0:
					 * still on) */
	uint64_t busy_ns;	/* time some kernel ran, per device: the union of kernel
				 * intervals, summed over devices */
	struct stats_xfer xfer[DIR_COUNT];	/* copies' records: count, bytes, GPU-side ns */
	struct stats_xfer memset_;
	uint64_t dropped;	/* records lost (the library's ring or CUPTI's buffers were full) */
	uint64_t unnamed;	/* kernel records without a name (the library's name table full) */
};

/* Traced processes kept (each keeps its figures after it ends); more are not traced. */
#define STATS_MAX_PROCESSES 1024

/* Who a traced process is. */
struct stats_process_info {
	pid_t pid, ppid;
	char command[256];
	int rank, local_rank;	/* RANK and LOCAL_RANK from its environment (or the rank of its
				 * NCCL communicator where the environment gave none); -1: none */
	int nranks;		/* the size of its NCCL communicator; -1: none known */
	char job_id[64];	/* TORCHELASTIC_RUN_ID or SLURM_JOB_ID from its environment; "" */
	bool ended, exited;	/* ended: exited (exit_status) or killed (term_signal) */
	int exit_status, term_signal;
};

/* One process's figures in brief, for the process list. */
struct stats_process {
	struct stats_process_info info;
	uint64_t live_bytes;	/* device + managed */
	uint64_t live_count;
	uint64_t launches, calls, stops;
	uint64_t start_ns;
	int threads;
	int device;		/* where most of its live device bytes are; -1: none known */
	struct stats_coll coll[COLL_COUNT];	/* its NCCL operations */
	struct stats_gpu gpu;	/* --gpu-time */
};

struct stats_snapshot {
	pid_t pid;			/* the process it covers; 0: all of them */
	uint64_t t_ns;			/* monotonic time of this snapshot */
	uint64_t start_ns;		/* when tracing began, or the last stats_reset */
	size_t n_api;			/* == cuda_api_count() */
	struct stats_api *api;
	size_t n_alloc;			/* live allocations, unordered */
	struct stats_alloc *alloc;
	size_t n_kernel;
	struct stats_kernel *kernel;	/* kernel[i] is kernel id i, launched or not */
	struct stats_xfer xfer[COPY_MODE_COUNT][DIR_COUNT];
	struct stats_xfer memset_;	/* cudaMemset* / cuMemset*: calls, bytes, ns */
	uint64_t sync_calls, sync_ns;	/* synchronize calls and time blocked in them */
	uint64_t live_bytes[MEM_KIND_COUNT];
	uint64_t live_count;
	uint64_t peak_device_bytes;	/* peak of device + managed bytes */
	uint64_t launches;		/* all direct kernel launches */
	uint64_t graph_kernel_runs;	/* kernel executions as nodes of launched graphs */
	uint64_t graph_launches;	/* graph launches */
	size_t n_graph;
	struct stats_graph *graph;	/* by process, then id */
	struct stats_xfer graph_xfer[DIR_COUNT];	/* copies run as graph nodes, per execution */
	struct stats_xfer graph_memset;	/* memsets run as graph nodes */
	uint64_t allocs, frees;		/* successful allocation and free calls */
	uint64_t stops;			/* times the program was stopped by gputop */
	uint64_t lost;			/* records dropped (detail only), all functions */
	uint64_t tracer_cpu_ns;		/* gputop's own CPU time (user + system) */
	int threads;			/* threads of the program being traced */
	bool launches_estimated;	/* launch figures are extrapolated (--max-overhead) */
	struct stats_comm comm;		/* per device, NCCL, the P2P matrix (comm_table.h) */
	struct stats_gpu gpu;		/* --gpu-time: the processes' figures summed */
	size_t n_procs;			/* processes whose figures are in it */
	size_t n_proc;			/* every traced process, in the order they were seen */
	struct stats_process *proc;
	struct torch_snapshot torch;	/* PyTorch's memory, block by block (torch_mem.h) */
};

int stats_init(void);
/* A traced process: its id (proc below), or -1 when STATS_MAX_PROCESSES are kept already.
 * Process 0 is there from stats_init, with no pid: the first stats_process_new takes it. */
int stats_process_new(pid_t pid, pid_t ppid, const char *command);
void stats_process_set_command(int id, const char *command);
void stats_process_set_rank(int id, int rank, int local_rank);
/* The job the process belongs to (proc_job's id; "" for none): a label of its metrics. */
void stats_process_set_job_id(int id, const char *job_id);
void stats_process_ended(int id, bool exited, int exit_status, int term_signal);
void stats_reset(void);		/* 'z': counters back to zero; live allocations stay */
void stats_free(void);

/* Feeding (tracer thread): each counts into process proc (none: -1 or an id not made). api is
 * an index into the API table. */
void stats_on_call(int proc, int api, uint64_t ns, bool returned, int error);
/* n calls of api whose records the stubs could not keep (their detail is missing; their
 * totals come from the tallies). */
void stats_on_lost(int proc, int api, uint64_t n);
void stats_on_alloc(int proc, int api, uint64_t addr, uint64_t bytes, enum mem_kind kind, int device,
		    pid_t tid, uint64_t now_ns, const char *caller);
/* The call stack (stacks.h) of the live allocation at addr, just recorded. */
void stats_set_alloc_stack(int proc, uint64_t addr, uint32_t stack);
bool stats_on_free(int proc, uint64_t addr);	/* false if addr was not a known allocation */
/* The same, for allocations and frees the stubs counted in place (stats_add_allocs counts
 * them): the live allocation only. */
void stats_note_alloc(int proc, int api, uint64_t addr, uint64_t bytes, enum mem_kind kind, int device,
		      pid_t tid, uint64_t now_ns, const char *caller);
bool stats_note_free(int proc, uint64_t addr);
/* The live allocations held as the stubs' table's (in_place), and that table read whole (n
 * records, sorted here): those held and gone from the table are dropped (their free's record
 * was lost), those in it and not held are added (their record was lost, or is not read yet). */
size_t stats_live_in_place(int proc);
void stats_sync_live(int proc, struct stats_alloc *table, size_t n);
bool stats_is_device_ptr(int proc, uint64_t addr);	/* inside a live device or managed allocation */
int stats_kernel_id(int proc, const char *name);	/* interns the name; -1 when the table is full */
/* The name of kernel id kernel of process proc: valid for the module's life, and
 * never another process's pointer (so it tells the process's kernels apart); NULL if none. */
const char *stats_kernel_name(int proc, int kernel);
/* kernel: an id from stats_kernel_id; -1 (full table) counts under "(other kernels)".
 * grid and block may be NULL when not known. */
void stats_on_launch(int proc, int kernel, const uint32_t grid[3], const uint32_t block[3]);
/* A launch the stubs counted in place: its dimensions only (the last launch's). */
void stats_set_launch_dims(int proc, int kernel, const uint32_t grid[3], const uint32_t block[3]);
/* What the stubs' tallies add (figures/stats_calls.c reads them): differences, negative for
 * what comes back out (a launch a capture held). */
void stats_add_launches(int proc, int kernel, int64_t n);
void stats_add_call(int proc, int api, int64_t calls, int64_t errors, int64_t ns, int last_error, bool returns);
void stats_add_copy(int proc, enum copy_dir dir, enum copy_mode mode, int64_t calls, int64_t bytes, int64_t ns);
void stats_add_memset(int proc, int64_t calls, int64_t bytes, int64_t ns);
void stats_add_sync(int proc, int64_t calls, int64_t ns);
void stats_add_allocs(int proc, int64_t allocs, int64_t frees);
/* An executable graph and its nodes (instantiated, or updated: keep_id keeps its row's id and
 * launches); known false when its nodes cannot be learnt. Nodes are copied. */
void stats_graph_define(int proc, uint64_t exec, const struct stats_graph_node *nodes, uint32_t n, bool known,
			bool keep_id);
/* One launch of exec: each of its nodes runs once (an exec never defined gets a row of its own,
 * nodes not known). */
void stats_on_graph_launch(int proc, uint64_t exec);
void stats_on_graph_launches(int proc, uint64_t exec, uint64_t n);	/* n launches of exec */
/* exec was destroyed (its row stays; its handle may name a new graph later). */
void stats_graph_forget(int proc, uint64_t exec);
void stats_on_copy(int proc, enum copy_dir dir, enum copy_mode mode, uint64_t bytes, uint64_t ns);
void stats_on_memset(int proc, uint64_t bytes, uint64_t ns);
void stats_on_sync(int proc, uint64_t ns);
/* --gpu-time (CUPTI's records summed in the program, probe/gputime_ring.c): a kernel's runs
 * (count, GPU time, their min and max); copies (dir: DIR_COUNT when CUPTI names no host/device
 * direction) or memsets; ns of busy time (kernel intervals' union); the recording began (on)
 * or ended, with the records CUPTI lost and the kernel runs without a name. */
void stats_on_gpu_kernel_runs(int proc, int kernel, const struct stats_gpu_time *runs);
void stats_on_gpu_copies(int proc, enum copy_dir dir, bool memset, uint64_t count, uint64_t bytes, uint64_t ns);
void stats_on_gpu_busy(int proc, uint64_t ns);
void stats_set_gpu_time(int proc, bool on, uint64_t now_ns, uint64_t dropped, uint64_t unnamed);
void stats_on_stop(int proc);
/* What ran on which GPU (device -1: not known), peer copies (source, destination), NCCL
 * (comm_table.h). */
void stats_on_device(int proc, int device, enum dev_event ev, uint64_t bytes, uint64_t ns);
/* n launches on device that left no record (struct cuda_quiet). */
void stats_add_device_launches(int proc, int device, uint64_t n);
void stats_on_p2p(int proc, int src_device, int dst_device, uint64_t bytes);
void stats_on_collective(int proc, enum coll_op op, uint64_t bytes, uint64_t ns, uint64_t comm, int peer, int device);
/* A collective the stubs counted in place: its detail only (stats_add_coll adds its totals). */
void stats_note_collective(int proc, enum coll_op op, uint64_t bytes, uint64_t comm, int peer, int device);
void stats_add_coll(int proc, enum coll_op op, int64_t calls, int64_t bytes, int64_t ns);
/* An NCCL communicator of the process (-1: not known); names_rank: its rank is the process's
 * when its environment gave none (a communicator of one process per rank). */
void stats_comm_learn(int proc, uint64_t comm, int rank, int nranks, int device, bool names_rank);
/* The device of a live device allocation holding addr; -1: none known. */
int stats_device_of_ptr(int proc, uint64_t addr);
void stats_set_threads(int proc, int n);
void stats_set_tracer_cpu(uint64_t ns);
void stats_set_launches_estimated(int proc, bool estimated);
/* How the probe on API row api works, in stops per call (kept across stats_reset). */
void stats_set_stops_per_call(int proc, int api, int stops);
/* --max-overhead: launches counted since the last call (per kernel, and the launch rows of
 * the API table) are multiplied by factor, because the launch probes were armed for only
 * 1/factor of the time; marks the launch figures as estimates when factor != 1. */
void stats_extrapolate_launches(int proc, double factor);

/* What a live picture of the job (figures/job_live.h) takes of process proc, without a
 * snapshot: who it is, the NCCL operations it made and the time its threads spent inside
 * synchronizes and collectives that returned, since start_ns (the attach, or the last
 * stats_reset). 0, or -1 for no such process. */
struct stats_wait {
	int rank, nranks;
	uint64_t collectives, wait_ns, start_ns;
};
int stats_wait_of(int proc, struct stats_wait *out);

/* Reading (any thread). The snapshot owns its arrays; free them with stats_snapshot_free. */
int stats_snapshot(struct stats_snapshot *out);	/* every process */
int stats_snapshot_of(pid_t pid, struct stats_snapshot *out);	/* pid 0: every process */
void stats_snapshot_free(struct stats_snapshot *s);

/* Orderings shared by views and exporters; they only read the snapshot. */
size_t stats_sort_api(const struct stats_snapshot *s, int *idx);
	/* rows with calls, by calls desc then name; idx has room for n_api; returns the count */
size_t stats_sort_kernels(const struct stats_snapshot *s, const struct stats_kernel **out);
	/* kernels that ran (directly or in graphs), by executions desc then name; out has room
	 * for n_kernel */
void stats_sort_allocs(const struct stats_snapshot *s, const struct stats_alloc **out);
	/* all live allocations, by bytes desc then address; out has room for n_alloc */

/* For tests: slots in the live-allocation hash map (shows that churn keeps it small). */
size_t stats_debug_capacity(int proc);

extern const char copy_dir_name[DIR_COUNT][4];	/* "H2H", "H2D", "D2H", "D2D" */
extern const char mem_kind_name[MEM_KIND_COUNT][8];	/* "device", "managed", "host" */

#endif
