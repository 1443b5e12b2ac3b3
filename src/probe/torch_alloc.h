/* torch_alloc.h — PyTorch's CUDA caching allocator as it lies in the program (libc10_cuda.so):
 * the Blocks its probed functions hand out and take back (cuda_api.c's OP_TORCH_* rows), read
 * from the program's memory after each drain; the blocks that were live before gputop came, read
 * from the allocator's own table of allocated blocks while the attach holds the program; the
 * allocator's statistics (what torch.cuda.memory_allocated() and memory_reserved() return) and
 * the segments the blocks lie in. Layouts come from PyTorch's source (no DWARF in its wheels),
 * and every one is checked against values known independently before it is used: a layout that
 * does not check is said once and not read (docs/torch_memory.md). Memory reads only: nothing
 * here stops or writes the program. Feeds figures/torch_mem.h. */
#ifndef GPUTOP_TORCH_ALLOC_H
#define GPUTOP_TORCH_ALLOC_H

#include <stdbool.h>
#include <stdint.h>

#include "cuda_call.h"
#include "torch_shot.h"

struct module;
struct torch_state;

/* The process's part (tracee->torch, base/tracee.h), made and freed with it. */
struct torch_state *torch_state_new(void);
void torch_state_free(struct torch_state *st);

/* Data symbols of libc10_cuda.so that gputop reads (module_scan.c keeps their offsets). */
enum torch_sym {
	TORCH_SYM_NATIVE,	/* the NativeCachingAllocator object (static since PyTorch 2.6) */
	TORCH_SYM_NATIVE_OLD,	/* ... with external linkage, before */
	TORCH_SYM_BACKEND,	/* std::atomic<CUDAAllocator*> c10::cuda::CUDACachingAllocator::allocator */
	TORCH_SYM_COUNT
};
int torch_symbol_index(const char *name);	/* enum torch_sym, or -1 */
bool torch_is_allocator_module(const struct module *m);	/* libc10_cuda.so */

/* probes.c, for the module holding the allocator: its data symbols' addresses (0: none), which
 * OP_TORCH_* rows got a probe (bit op - OP_TORCH_ALLOC), and whether it was there when gputop
 * came (the first look at the process's modules, every thread held): then the blocks live
 * already are read now. Says once when the allocator is not one gputop knows. */
void torch_on_module(struct tracee *p, const struct module *m, const uint64_t sym[TORCH_SYM_COUNT], unsigned probed_ops,
		     bool before_gputop);
void torch_on_module_gone(struct tracee *p, const struct module *m);

/* The calls of the OP_TORCH_* rows (cuda/cuda_call.h), as a consumer of calls: a Block handed
 * out (when: the call's return) or freed (when the free began), with the call's stack. Calls
 * come in the order they returned; a free that began before its block was last handed out (on
 * another thread) is of the block's previous life. After each drain (its .drained): the Blocks
 * handed out meanwhile are read (those taken back in the same drain are never read), segments
 * are found, the statistics read. At an exec (its .gone): the old image's allocator is
 * forgotten. */
extern const struct cuda_consumer torch_consumer;
/* For probe/torch_shot_read.c: a Block read by the layout in use (0, -errno, -ENODATA while no
 * layout checked yet), and a device's DeviceCachingAllocator (0: not known). */
struct torch_block_view {
	uint64_t ptr, size, requested, stream, pool, prev, next;
	int device;
	bool allocated, mapped, expandable;
};
int torch_block_read(struct tracee *p, uint64_t at, struct torch_block_view *b);
bool torch_followed(struct tracee *p);
/* An out-of-memory seen since the last call (torch_shot.h): true, once for each; with the
 * state held for it (*have_held: *held is the caller's to free), if any. */
bool torch_take_oom(struct tracee *p, struct torch_oom *out, struct torch_shot *held, bool *have_held);
/* A failed CUDA allocation of PyTorch's allocator, which may yet free its cache and try again,
 * seen (the records drained) and no state held for it yet: torch_oom_hold keeps the state of
 * this instant (s taken over) for when its count of OOMs says it gave up. */
bool torch_oom_pending(struct tracee *p);
void torch_oom_hold(struct tracee *p, struct torch_shot *s);
/* The stream of that failed allocation's request (and, for an expandable segment's page, the
 * request's size), read from the allocator's AllocParams on the stack of its thread, held at
 * the call's return (sp there). */
void torch_oom_read_request(struct tracee *p, uint64_t sp);
/* While held is true, the thread of the last failed allocation is held at its return: an
 * out-of-memory taken then is of that instant. */
void torch_oom_instant(struct tracee *p, bool held);
uint64_t torch_device_allocator(struct tracee *p, int device);

#endif
