/* cells.h — the text of every row's cells (rows.h), written once for the TUI's views and for
 * batch mode: which figures are estimates ("~"), how a rate per second, a grid x block or a
 * last error reads, and what a figure that is not known shows. Each presenter picks the cells
 * it has room for; none writes a figure of a row itself. */
#ifndef GPUTOP_CELLS_H
#define GPUTOP_CELLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "rows.h"

#define CELLS_FIG (FMT_LEN + 1)	/* a figure, with its "~" */
#define CELLS_LEN 96		/* a last error's name, a grid x block */

struct cells_api {
	const char *name;
	char process[CELLS_FIG];
	char calls[CELLS_FIG], rate[CELLS_FIG], errors[CELLS_FIG], last_error[CELLS_LEN];
	char time[CELLS_FIG], avg[CELLS_FIG];
};

struct cells_kernel {
	const char *name;
	char process[CELLS_FIG];
	char launches[CELLS_FIG];	/* direct launches */
	char graph[CELLS_FIG];		/* executions as a node of a graph launch */
	char rate[CELLS_FIG], dims[CELLS_LEN], share[CELLS_FIG];	/* of all executions */
	/* --gpu-time: its runs' GPU time (the dash where none was recorded) */
	char gpu_total[CELLS_FIG], gpu_avg[CELLS_FIG], gpu_min[CELLS_FIG], gpu_max[CELLS_FIG];
};

struct cells_xfer {
	const char *name;
	char calls[CELLS_FIG], bytes[CELLS_FIG], time[CELLS_FIG];
	char avg_rate[CELLS_FIG];		/* of every copy so far */
	char rate[CELLS_FIG];		/* of the copies in the interval */
};

struct cells_alloc {
	const char *address, *kind, *api;
	char process[CELLS_FIG];
	char size[CELLS_FIG], device[CELLS_FIG], thread[CELLS_FIG], age[CELLS_FIG];
};

/* One NCCL operation of one process (row_coll). rate: bytes per second of the interval. */
struct cells_coll {
	const char *op;
	char process[CELLS_FIG], rank[CELLS_FIG];	/* "0/2"; the dash when not known */
	char calls[CELLS_FIG], bytes[CELLS_FIG], rate[CELLS_FIG], time[CELLS_FIG];
};

/* One GPU (row_device). */
struct cells_device {
	char device[CELLS_FIG];				/* "0"; "?" for not known */
	char live[CELLS_FIG], allocs[CELLS_FIG], launches[CELLS_FIG], launch_rate[CELLS_FIG];
	char copies[CELLS_FIG], copy_bytes[CELLS_FIG], syncs[CELLS_FIG], sync_time[CELLS_FIG];
};

/* estimated: launch figures are extrapolated (--max-overhead); they get a "~". */
void cells_api(struct cells_api *c, const struct row_api *r, const struct rows *rs,
	       bool estimated);
void cells_kernel(struct cells_kernel *c, const struct row_kernel *r, const struct rows *rs,
		  bool estimated);
void cells_xfer(struct cells_xfer *c, const struct row_xfer *r);
void cells_alloc(struct cells_alloc *c, const struct row_alloc *r, const struct rows *rs);
void cells_coll(struct cells_coll *c, const struct row_coll *r, const struct rows *rs);
void cells_device(struct cells_device *c, const struct row_device *r, const struct rows *rs, bool estimated);
/* "every CUDA call failed: cudaErrorInsufficientDriver — is there a driver?" when every call
 * whose result is known failed (rows.all_failed); empty otherwise. */
void cells_all_failed(char *buf, size_t n, const struct rows *rs);
/* A GPU's number, "?" when not known (-1). */
void cells_gpu(char *buf, size_t n, int device);
/* --gpu-time's line: "GPU busy: 37.5% (375 ms of kernels in 1.00 s recorded)", with its
 * lost records; empty when GPU time was not recorded. */
void cells_gpu_busy(char *buf, size_t n, const struct rows *rs);
/* --gpu-time's copies: "GPU side: H2D 300 in 2.00 ms (15.7 GB/s), memset 300 in 15.0 ms
 * (5.12 MB/s)"; empty when GPU time was not recorded or no copy has a record. */
void cells_gpu_copies(char *buf, size_t n, const struct rows *rs);
/* The process column: "4242", "4242:r1" with its rank, "all" for a row of several. */
void cells_process(char *buf, size_t n, pid_t pid, const struct rows *rs);

/* A process of the job as it is now (figures/job_live.h; cells_job.c): its rank ("1/4"), what
 * it is in now (the call in flight its threads entered first, else its Python line) and for how
 * long, its collectives ("99+1": one in flight), its wait share, and its odd-one-out marks with
 * the reason ("straggler: waits least"); the dash where a figure is not known. */
struct cells_job {
	char process[CELLS_FIG], rank[CELLS_FIG], age[CELLS_FIG], collectives[CELLS_FIG], wait[CELLS_FIG];
	char now[CELLS_LEN * 2], odd[CELLS_LEN];
};
struct job_process;
struct job_thread;
void cells_job(struct cells_job *c, const struct job_process *jp);
/* The thread of jp whose call in flight is oldest (a wait first), NULL where none is in one. */
const struct job_thread *cells_job_headline(const struct job_process *jp);
/* A thread's call in flight: "ncclAllReduce(AllReduce 4096 bytes, comm 0x...) for 12s [call
 * stub]"; what is not known said so. */
void cells_job_call(char *buf, size_t n, const struct job_thread *t);

/* PyTorch's memory (torch_rows.h; cells_torch.c). A block's cells; its age, for a block from
 * before gputop came, is a lower bound (">12s"). */
struct cells_torch_block {
	const char *address;
	char process[CELLS_FIG], size[CELLS_FIG], requested[CELLS_FIG], device[CELLS_FIG];
	char stream[CELLS_FIG + 8], age[CELLS_FIG];
	char site[CELLS_LEN * 2];
};
void cells_torch_block(struct cells_torch_block *c, const struct torch_row_block *b, const struct rows *rs);
/* "PyTorch's caching allocator: 6 live blocks; ...", or what keeps it from being followed. */
void cells_torch_state(char *buf, size_t n, const struct torch_rows *t);
/* An out-of-memory in one line: the request, its line, the allocator's free bytes then. */
void cells_torch_oom(char *buf, size_t n, const struct torch_oom_event *e);
/* "GPU 0: reserved 142 MiB, allocated 121 MiB (as PyTorch counts) in 6 blocks, free in ...". */
void cells_torch_device(char *buf, size_t n, const struct torch_row_device *d, const struct rows *rs);
/* The line that allocated: "build at train.py:57 [python]", or why there is none. */
void cells_torch_site(char *buf, size_t n, const struct stack_frame *site, bool before);

/* A launch figure: "~" in front when it is an estimate. */
void cells_launch_count(char *buf, size_t n, uint64_t v, bool estimated);
/* delta per second over ns, as a launch figure; the dash when ns is 0. */
void cells_per_sec(char *buf, size_t n, uint64_t delta, uint64_t ns, bool estimated);
/* "16 x 128", "(2,3,1) x (64,2,1)"; "?" for a side not known, the dash for neither. */
void cells_dims(char *buf, size_t n, const uint32_t grid[3], const uint32_t block[3]);

#endif
