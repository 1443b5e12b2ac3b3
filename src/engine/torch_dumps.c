/* torch_dumps.c — PyTorch's memory written out whole, when asked (torch_dumps.h). */
#include "torch_dumps.h"

#include <errno.h>

#include "config.h"
#include "log.h"
#include "session_state.h"
#include "torch_shot_read.h"
#include "torch_snapshot.h"
#include "tracee.h"

void torch_dumps_take(struct tracee *p, enum torch_shot_why why)
{
	const char *path = why == SHOT_OOM ? config.oom_snapshot : config.memory_snapshot;
	struct torch_shot s;
	if (!path)
		return;
	if (torch_shot_read(p, &s) == -ENODATA) {
		if (why == SHOT_ASKED)
			log_info("%d: no PyTorch caching allocator followed: no memory snapshot", p->pid);
		return;
	}
	s.why_taken = (uint8_t)why;
	if (torch_snapshot_write(path, &s) == 0)
		log_info("%s snapshot of %d's PyTorch memory written to %s: %zu segments, %zu blocks%s%s",
			 why == SHOT_OOM ? "out-of-memory" : "memory", (int)p->pid, path, s.n_segment, s.n_block,
			 s.why[0] ? "; " : "", s.why);
	torch_shot_free(&s);
}

static void torch_dumps_drained(struct tracee *p)
{
	if (!p->stopping_world && session_take_memory_snapshot())
		torch_dumps_take(p, SHOT_ASKED);
}

const struct cuda_consumer torch_dumps_consumer = {
	.name = "PyTorch's memory snapshots",
	.drained = torch_dumps_drained,
};
