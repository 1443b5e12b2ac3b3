/* torch_shot.h — PyTorch's caching allocator at one instant, whole: every segment and every
 * block in it (handed out, cached, or freed while another stream still uses it), as
 * torch.cuda.memory._snapshot() lists them. probe/torch_shot_read.c reads one out of the program
 * (on a key, at a detach, at an out-of-memory); output/torch_snapshot.c writes it as _snapshot()'s
 * pickle; the OOM report (figures/torch_oom.c) sums it. A plain value: nothing here reads the
 * program or keeps state. */
#ifndef GPUTOP_TORCH_SHOT_H
#define GPUTOP_TORCH_SHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum torch_shot_state {
	SHOT_INACTIVE,			/* free, cached in its pool ("inactive") */
	SHOT_ACTIVE_ALLOCATED,		/* handed out ("active_allocated") */
	SHOT_ACTIVE_PENDING_FREE,	/* freed, still used by a stream ("active_pending_free") */
};

struct torch_shot_block {
	uint64_t address, size, requested;
	uint32_t stack;			/* its allocation's stack (stacks.h); STACK_NONE: none */
	uint8_t state;			/* enum torch_shot_state */
};

struct torch_shot_segment {
	int device;
	uint64_t address, total_size;	/* total_size: its mapped blocks, summed */
	uint64_t allocated_size, active_size, requested_size;
	uint64_t stream;
	bool large, expandable;
	size_t first, n;		/* its blocks: block[first .. first + n), by address */
};

/* The allocator's own totals of a device, where they were read. */
struct torch_shot_device {
	int device;
	bool stats_known;
	int64_t reserved, allocated;
};

enum torch_shot_why {
	SHOT_ASKED,		/* the key */
	SHOT_DETACH,		/* gputop lets the program go, every thread held */
	SHOT_OOM,		/* an out-of-memory, at its instant */
};

struct torch_shot {
	pid_t pid;
	uint8_t why_taken;		/* enum torch_shot_why */
	uint64_t t_ns;			/* when it was read (monotonic) */
	bool pools_read;		/* the free blocks of the allocator's pools were read: segments
					 * with no block handed out are in it (else only those holding one) */
	char why[160];			/* what could not be read, "" if nothing */
	char alloc_conf[256];		/* PYTORCH_CUDA_ALLOC_CONF, as the program started with it */
	size_t n_segment;
	struct torch_shot_segment *segment;	/* by device, then address */
	size_t n_block;
	struct torch_shot_block *block;
	size_t n_device;
	struct torch_shot_device *device;
};

/* The stream of an out-of-memory's request. */
enum torch_oom_stream {
	TORCH_OOM_STREAM_UNKNOWN,	/* PyTorch's request, its stream not found (read late) */
	TORCH_OOM_STREAM_NONE,		/* a CUDA allocation that takes no stream (cudaMalloc) */
	TORCH_OOM_STREAM_READ,		/* PyTorch's allocator's request: its AllocParams' stream */
	TORCH_OOM_STREAM_ARGUMENT,	/* a stream-ordered allocation's (cudaMallocAsync): not read */
};
const char *torch_oom_stream_text(enum torch_oom_stream s);	/* words for the report, none for READ */

/* An allocation that failed for want of memory: a CUDA allocation that returned out-of-memory
 * (any caller), or PyTorch's allocator giving up after freeing its cache (its count of OOMs
 * rose: the CUDA call it made is the request). */
struct torch_oom {
	pid_t pid;
	uint64_t t_ns;			/* when gputop saw it (monotonic) */
	uint64_t size;			/* bytes asked of CUDA; 0: not seen */
	/* The failed call was PyTorch's allocator's cuMemCreate of one page of an expandable
	 * segment: the page's bytes (0: any other call; another caller's cuMemCreate, NCCL's
	 * buffers, is a plain request). size is then the allocator's request where its
	 * AllocParams was read (stream_is TORCH_OOM_STREAM_READ), else the page's. */
	uint64_t page_bytes;
	int device;			/* -1: not known */
	uint32_t stack;			/* the failed call's stack (--stacks allocs) */
	const char *api;		/* the CUDA function that failed; NULL: none seen */
	int error;			/* its error code */
	bool by_torch;			/* PyTorch's allocator gave up (OutOfMemoryError) */
	bool held;			/* the state was read while the thread that failed was held
					 * at the failed call's return (else at gputop's next look) */
	enum torch_oom_stream stream_is;
	uint64_t stream;		/* the request's stream, where TORCH_OOM_STREAM_READ */
};

void torch_shot_free(struct torch_shot *s);
const char *torch_shot_state_name(enum torch_shot_state st);	/* "active_allocated", ... */

/* A device's blocks summed: its segments' bytes, those handed out, the free ones, and the
 * largest free block (a request larger than it needs a new segment). */
struct torch_shot_sums {
	uint64_t segments, total, allocated, free, largest_free;
};
void torch_shot_sum(const struct torch_shot *s, int device, struct torch_shot_sums *out);

#endif
