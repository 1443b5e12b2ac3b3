/* torch_rows.h — the rows of PyTorch's memory (torch_mem.h) that the Memory view, -b, --json and
 * the metrics all present: per device (reserved, allocated, free inside segments, what
 * torch.cuda.empty_cache() would give back), every live block largest first, live bytes by the
 * line that allocated them, and the leak candidates. Built from a snapshot; they hold figures,
 * not text, and point into the snapshot (keep it while the rows are used). */
#ifndef GPUTOP_TORCH_ROWS_H
#define GPUTOP_TORCH_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stacks.h"
#include "torch_mem.h"

struct torch_row_device {
	pid_t pid;
	int device;
	uint64_t allocated;		/* the live blocks gputop follows, summed */
	uint64_t requested;		/* ... what the program asked for them */
	uint64_t live_blocks, peak_allocated;
	bool stats_known;		/* the allocator's own statistics were read */
	uint64_t reserved, reserved_peak;	/* memory_reserved() and its peak */
	uint64_t stats_allocated, stats_allocated_peak;	/* memory_allocated() and its peak */
	int64_t segments, ooms, alloc_retries;
	bool agrees;			/* its allocated bytes equalled gputop's blocks at its last read */
	uint64_t free_in_segments;	/* reserved - allocated: cached, and fragments */
	bool empty_cache_known;		/* every live block's segment is known */
	uint64_t empty_cache;		/* what torch.cuda.empty_cache() would give back, about */
	uint64_t leak_bytes, leak_blocks;	/* blocks older than the leak age */
};

struct torch_row_block {
	const struct torch_block *b;	/* in the snapshot */
	char address[24];		/* "0x7f0000000000" */
	uint64_t age_ns;		/* since it was handed out; from before: since gputop came
					 * (at least that) */
	bool before;			/* handed out before gputop came: no time, no stack */
	bool leak;			/* older than the leak age */
	const struct stack_frame *site;	/* the line that allocated it (torch_rows_site); NULL */
};

/* Live blocks grouped by the line that allocated them. */
struct torch_row_site {
	const struct stack_frame *site;	/* NULL: blocks without a stack */
	uint32_t stack;			/* one of the blocks' stacks (the largest's) */
	bool before;			/* the group of blocks from before gputop came */
	uint64_t live_bytes, live_blocks, oldest_age_ns;
};

struct torch_rows {
	const struct torch_snapshot *snap;
	/* The processes together: the most that is known of any (tracking before not read before
	 * unknown before absent), what went wrong where (why: "" if nothing), their counts. */
	uint8_t state;				/* enum torch_status */
	uint8_t before;				/* enum torch_before: unknown if any is */
	const char *why;
	uint64_t before_blocks, before_bytes, unknown_frees, unread;
	uint64_t read_threads;			/* struct torch_process's, summed */
	uint64_t allocs, frees;			/* blocks handed out and taken back, seen */
	uint64_t leak_age_ns;
	size_t n_device;
	struct torch_row_device *device;	/* by process, then device */
	size_t n_block;
	struct torch_row_block *block;		/* by size, largest first, then by address */
	size_t n_site;
	struct torch_row_site *site;		/* by live bytes, most first */
	size_t n_leak;
	const struct torch_row_block **leak;	/* the leak candidates, oldest first */
	uint64_t leak_bytes;			/* all devices */
};

/* The frame of stack id that stands for the line that allocated: its innermost Python frame
 * outside the torch package (a model's line, not nn.Linear's), else its innermost Python frame,
 * else its innermost frame outside PyTorch's and the C++ runtime's libraries. */
const struct stack_frame *torch_rows_site(uint32_t id);

/* The line of a failed allocation's stack (an out-of-memory's request): its innermost Python
 * frame outside the torch package, else its innermost native frame outside the CUDA and
 * PyTorch libraries and the C++ runtime; NULL without a stack. */
const struct stack_frame *torch_rows_request_site(uint32_t id);

/* 0, or -ENOMEM (r then empty). */
int torch_rows_build(struct torch_rows *r, const struct torch_snapshot *s);
void torch_rows_free(struct torch_rows *r);

/* The process's part of the snapshot (NULL if gputop knows nothing of its allocator). */
const struct torch_process *torch_rows_process(const struct torch_snapshot *s, pid_t pid);

#endif
