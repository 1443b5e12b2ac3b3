/* torch_snapshot.h — --memory-snapshot and --oom-snapshot: a snapshot of PyTorch's allocator
 * (figures/torch_shot.h) written as torch.cuda.memory._snapshot()'s pickle, the file that
 * `python -m torch.cuda._memory_viz` and pytorch.org/memory_viz read. Each is written whole to a
 * temporary file beside the path and renamed over it, at once (the program may die next). */
#ifndef GPUTOP_TORCH_SNAPSHOT_H
#define GPUTOP_TORCH_SNAPSHOT_H

#include "torch_shot.h"

/* The pickle of s, in *buf (malloc'ed) and *len: 0 or -ENOMEM. */
int torch_snapshot_pickle(const struct torch_shot *s, unsigned char **buf, size_t *len);
/* s written to path: 0, or -errno (said). */
int torch_snapshot_write(const char *path, const struct torch_shot *s);

/* The files of the command line (NULL: not asked for), and the sink that writes a snapshot to
 * the one its reason goes to (torch_shot_read.h's torch_shot_set_sink). */
/* Whether path (NULL: none asked for) can be written, before anything runs: 0, or -errno
 * after saying why (what: the option). */
int torch_snapshot_check(const char *path, const char *what);
void torch_snapshot_set_paths(const char *memory_snapshot, const char *oom_snapshot);
void torch_snapshot_on_shot(const struct torch_shot *s);
bool torch_snapshot_wanted(void);	/* --memory-snapshot given */

#endif
