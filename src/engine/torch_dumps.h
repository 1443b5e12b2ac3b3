/* torch_dumps.h — when PyTorch's memory is written out whole: --memory-snapshot at a detach
 * (every thread held) and when the TUI's key S asks (session_state), --oom-snapshot at an
 * out-of-memory. The snapshot read by probe/torch_shot_read.c, written by
 * output/torch_snapshot.c. */
#ifndef GPUTOP_TORCH_DUMPS_H
#define GPUTOP_TORCH_DUMPS_H

#include "account.h"
#include "torch_shot.h"

struct tracee;

/* A consumer of calls whose .drained writes the snapshot the key S asked for (registered after
 * torch_consumer, whose .drained reads the blocks). */
extern const struct cuda_consumer torch_dumps_consumer;
/* A snapshot of p now, to the file its reason goes to (none asked for: nothing read). */
void torch_dumps_take(struct tracee *p, enum torch_shot_why why);
/* A CUDA allocation returned out of memory and its thread is held there (the call stub's park
 * at its return, or the return's stop): the state of this instant read, the out-of-memory
 * written now where it is known (any caller but PyTorch's allocator), else the state kept for
 * when the allocator gives up, with its request's stream (from the stack at sp, the thread's
 * there). g: the park's keeper (NULL at a stop), answered at the end. */
struct hit_keeper;
void torch_dumps_at_oom(struct tracee *p, uint64_t sp, uint64_t now, struct hit_keeper *g);

#endif
