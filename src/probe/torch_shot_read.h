/* torch_shot_read.h — PyTorch's caching allocator read whole out of the program, as
 * torch.cuda.memory._snapshot() would list it (figures/torch_shot.h): the blocks handed out
 * that gputop follows, the free blocks of each device's two pools (the std::sets large_blocks
 * and small_blocks), and every segment they lie in, walked block by block. Memory reads only;
 * engine/torch_dumps.c decides when and writes it. */
#ifndef GPUTOP_TORCH_SHOT_READ_H
#define GPUTOP_TORCH_SHOT_READ_H

#include "torch_shot.h"

struct tracee;

/* 0, or -errno with out->why saying why (-ENODATA: no PyTorch allocator followed). Where the
 * program runs, a chain that changed under the walk is read again (3 times at most). */
int torch_shot_read(struct tracee *p, struct torch_shot *out);

#endif
