/* torch_mem.h — PyTorch's GPU memory, block by block: the blocks its CUDA caching allocator
 * (libc10_cuda.so) has handed out and not taken back, per process and device, the allocator's
 * own totals (reserved, allocated) and the segments the blocks lie in. probe/torch_alloc.c feeds
 * it from the tracer thread; presenters read snapshots (stats_snapshot_of takes one with the
 * rest of the figures) and their rows (torch_rows.c). Nothing here touches the program.
 * docs/torch_memory.md says where each figure comes from. */
#ifndef GPUTOP_TORCH_MEM_H
#define GPUTOP_TORCH_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TORCH_MAX_DEVICES 64

/* What gputop knows of a process's caching allocator. */
enum torch_status {
	TORCH_ABSENT,		/* no libc10_cuda.so in the process (no PyTorch with CUDA) */
	TORCH_UNKNOWN,		/* libc10_cuda.so without the allocator functions gputop knows */
	TORCH_TRACKING,		/* its blocks are followed */
	TORCH_NOT_READ,		/* probed, but its blocks cannot be read (see why) */
};

/* Blocks that were live when gputop came (attach). */
enum torch_before {
	TORCH_BEFORE_NONE,	/* there were none: gputop saw the library load */
	TORCH_BEFORE_READ,	/* read from the allocator's table of allocated blocks */
	TORCH_BEFORE_UNKNOWN,	/* could not be read (see before_why) */
};

/* A live block. */
struct torch_block {
	uint64_t block;		/* first: the Block's address in the program, the table's key */
	uint64_t ptr;		/* the device memory it hands out */
	uint64_t size;		/* as the allocator counts it (rounded up: memory_allocated()) */
	uint64_t requested;	/* as the program asked for it */
	uint64_t stream;	/* the cudaStream_t it was allocated on */
	uint64_t t_ns;		/* when it was handed out (monotonic); 0: before gputop came */
	pid_t pid;		/* the process (set in snapshots) */
	uint32_t stack;		/* its allocation's call stack (stacks.h); STACK_NONE: none taken */
	int8_t device;
	bool expandable;	/* it lies in an expandable segment */
};

/* A segment (a cudaMalloc'd range, or an expandable segment's reserved range) holding blocks. */
struct torch_segment {
	uint64_t base, size;
	uint64_t page;		/* expandable: the unit it maps and unmaps (2 MiB small, 20 MiB large) */
	int8_t device;
	bool expandable;
};

/* The allocator's own statistics of a device (its DeviceStats, AGGREGATE), read from the program:
 * what torch.cuda.memory_allocated() / memory_reserved() return. */
struct torch_alloc_stats {
	bool known;		/* read at least once */
	uint64_t read_ns;	/* when last read (monotonic) */
	int64_t allocated, allocated_peak;
	int64_t reserved, reserved_peak;
	int64_t requested;
	int64_t segments, blocks;	/* segments and allocations it counts */
	int64_t alloc_retries, ooms;
	/* What gputop's own blocks summed to on the device when the statistics were read (the
	 * comparison is exact when no block changed in between). */
	uint64_t tracked_at_read;
};

struct torch_device {
	pid_t pid;
	int device;
	uint64_t live_bytes, live_blocks, requested_bytes;
	uint64_t peak_live_bytes;		/* since gputop came */
	struct torch_alloc_stats alloc;
};

/* One process's part of a snapshot. */
struct torch_process {
	pid_t pid;
	uint8_t state;		/* enum torch_status */
	uint8_t before;		/* enum torch_before */
	uint64_t before_blocks, before_bytes;	/* what was read */
	uint64_t attach_ns;	/* when gputop came (the age of blocks from before is at least
				 * the time since) */
	uint64_t allocs, frees;	/* blocks handed out and taken back since gputop came */
	uint64_t unknown_frees;	/* frees of blocks gputop never saw handed out */
	uint32_t read_threads;	/* threads held while the blocks before were read: each may
				 * have stood inside a free (its block gone from the table) or
				 * an allocation (not in it yet), that block's free then unknown:
				 * at most one unknown free a thread comes of the attach */
	uint64_t unread;	/* blocks handed out whose Block could not be read */
	char why[160];		/* state or before: what went wrong, "" if nothing */
};

/* An out-of-memory as gputop saw it (engine/torch_dumps.c): the request, and PyTorch's
 * allocator on its device then (where followed). The last TORCH_OOM_KEPT of a process are kept. */
#define TORCH_OOM_KEPT 16
struct torch_oom_event {
	pid_t pid;
	uint64_t t_ns;			/* when gputop saw it (monotonic) */
	uint64_t size;			/* bytes asked of CUDA (torch_oom's size) */
	uint64_t page_bytes;		/* an expandable segment's page that failed (cuMemCreate); 0 */
	int device, error;
	char api[48];			/* the CUDA function that failed */
	bool by_torch;			/* PyTorch's allocator gave up (OutOfMemoryError) */
	bool sums_known;		/* the allocator was read: the figures below hold */
	bool fragmentation;		/* free in segments >= size, no free block as large */
	uint64_t reserved, allocated, free_in_segments, largest_free;
	uint32_t stack;			/* the failed call's stack */
	uint8_t stream_is;		/* enum torch_oom_stream (torch_shot.h) */
	uint64_t stream;
};

struct torch_snapshot {
	uint64_t t_ns;
	size_t n_proc;
	struct torch_process *proc;
	size_t n_device;
	struct torch_device *device;	/* by process, then device */
	size_t n_block;
	struct torch_block *block;	/* every live block, unordered */
	size_t n_segment;
	struct torch_segment *segment;	/* with their pid in seg_pid */
	pid_t *seg_pid;
	size_t n_oom;
	struct torch_oom_event *oom;	/* by process, oldest first */
	char *oom_view;			/* the last out-of-memory's state as text (its report), NULL: none */
	uint64_t oom_view_ns;		/* when it failed (monotonic) */
	pid_t oom_view_pid;
};

/* Feeding (the tracer thread); pid is the traced process. */
void torch_mem_set_state(pid_t pid, enum torch_status state, const char *why);
void torch_mem_set_before(pid_t pid, enum torch_before before, const char *why, uint32_t read_threads);
void torch_mem_set_attach(pid_t pid, uint64_t now_ns);
/* A block handed out (b->block != 0); an old record of the same Block is replaced. */
void torch_mem_on_alloc(pid_t pid, const struct torch_block *b);
/* Block block taken back by a call that began at entry_ns (monotonic): false when gputop did
 * not know it (counted as an unknown free). A free that began before the block was last handed
 * out is of its previous life (another thread's free returned after the block came back out:
 * the calls are read in the order they returned): it is left alone, true. */
bool torch_mem_on_free(pid_t pid, uint64_t block, uint64_t entry_ns);
void torch_mem_on_unread(pid_t pid);
void torch_mem_on_oom(pid_t pid, const struct torch_oom_event *e);
/* The Memory view at process pid's last out-of-memory (at t_ns), as its report's text: the TUI's
 * key O shows it, frozen. */
void torch_mem_set_oom_view(pid_t pid, uint64_t t_ns, const char *text);	/* a block handed out whose Block could not be read */
/* Calls that handed out and took back blocks (all of them: those taken back before they were
 * read included). */
void torch_mem_count(pid_t pid, uint64_t allocs, uint64_t frees);
void torch_mem_set_alloc_stats(pid_t pid, int device, const struct torch_alloc_stats *s);
/* Segments: whether addr lies in one gputop knows, and adding one. */
bool torch_mem_in_segment(pid_t pid, int device, uint64_t addr);
void torch_mem_add_segment(pid_t pid, const struct torch_segment *s);
/* The allocator gave memory back on device (its reserved bytes went down): segments that hold
 * no live block may be gone, and are forgotten. */
void torch_mem_prune_segments(pid_t pid, int device);
/* The live blocks' bytes on device, as gputop counts them. */
uint64_t torch_mem_live_bytes(pid_t pid, int device);
void torch_mem_forget(pid_t pid);	/* exec: a new image, no allocator yet */
void torch_mem_free_all(void);

/* Blocks older than this are leak candidates (--leak-age); 30 s unless set. */
void torch_mem_set_leak_age(uint64_t ns);
uint64_t torch_mem_leak_age(void);

/* Reading (any thread): pid 0 for every process. 0 or -ENOMEM (then empty). */
int torch_mem_snapshot(pid_t pid, struct torch_snapshot *out);
void torch_mem_snapshot_free(struct torch_snapshot *s);

const char *torch_status_name(enum torch_status s);	/* "absent", "unknown", "tracking", "not read" */
const char *torch_before_name(enum torch_before b);	/* "none", "read", "unknown" */

#endif
