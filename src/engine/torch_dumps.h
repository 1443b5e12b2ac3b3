/* torch_dumps.h — when PyTorch's memory is written out whole: --memory-snapshot at a detach
 * (every thread held) and when the TUI's key S asks (session_state), --oom-snapshot at an
 * out-of-memory. Runs after the allocator's flush (probe/torch_alloc.h's torch_set_flushed): the
 * snapshot read by probe/torch_shot_read.c, written by output/torch_snapshot.c. */
#ifndef GPUTOP_TORCH_DUMPS_H
#define GPUTOP_TORCH_DUMPS_H

#include "torch_shot.h"

struct tracee;

void torch_dumps_flushed(struct tracee *p);
/* A snapshot of p now, to the file its reason goes to (none asked for: nothing read). */
void torch_dumps_take(struct tracee *p, enum torch_shot_why why);

#endif
