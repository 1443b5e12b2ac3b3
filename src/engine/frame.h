/* frame.h — a traced call in flight on a thread (its shadow stack, base/threads.h's frames):
 * where its real return address was and what to restore there, and the call as decoded at its
 * entry (cuda/cuda_call.h), which its return completes. Engine-only: base knows frames as an
 * array it frees. */
#ifndef GPUTOP_FRAME_H
#define GPUTOP_FRAME_H

#include <stdint.h>

#include "cuda_call.h"

struct thread;

struct frame {
	uint64_t ret_addr;	/* the real return address */
	uint64_t ret_slot;	/* where it was on the stack (now holds the trampoline address) */
	uint64_t entry_sp;
	uint64_t t_entry;	/* monotonic ns when the call was let go */
	int32_t rescue;		/* its entry in the rescue table, -1 if none */
	int32_t rec;		/* its record for the return stub (retfast.h), -1 if it traps */
	uint64_t swapped;	/* what its return slot holds: the trampoline or the stub */
	struct cuda_call call;	/* its row (call.api), whether it counts, its stack, what its
				 * arguments said */
};

/* A new frame on top of t's, zeroed; NULL if out of memory. */
struct frame *frame_push(struct thread *t);

#endif
