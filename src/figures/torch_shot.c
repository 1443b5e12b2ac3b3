/* torch_shot.c — a snapshot of PyTorch's allocator, summed (torch_shot.h). */
#include "torch_shot.h"

#include <stdlib.h>

void torch_shot_free(struct torch_shot *s)
{
	free(s->segment);
	free(s->block);
	free(s->device);
	*s = (struct torch_shot){ 0 };
}

const char *torch_shot_state_name(enum torch_shot_state st)
{
	switch (st) {
	case SHOT_ACTIVE_ALLOCATED:
		return "active_allocated";
	case SHOT_ACTIVE_PENDING_FREE:
		return "active_pending_free";
	case SHOT_INACTIVE:
		break;
	}
	return "inactive";
}

const char *torch_oom_stream_text(enum torch_oom_stream s)
{
	switch (s) {
	case TORCH_OOM_STREAM_NONE:
		return "no stream (the function takes none)";
	case TORCH_OOM_STREAM_ARGUMENT:
		return "stream not read (a stream-ordered allocation's argument)";
	case TORCH_OOM_STREAM_READ:
		break;
	case TORCH_OOM_STREAM_UNKNOWN:
		return "stream not known (PyTorch's request, not read at the failure's instant)";
	}
	return "";
}

void torch_shot_sum(const struct torch_shot *s, int device, struct torch_shot_sums *out)
{
	*out = (struct torch_shot_sums){ 0 };
	for (size_t i = 0; i < s->n_segment; i++) {
		const struct torch_shot_segment *g = &s->segment[i];
		if (g->device != device)
			continue;
		out->segments++;
		out->total += g->total_size;
		for (size_t k = g->first; k < g->first + g->n; k++) {
			const struct torch_shot_block *b = &s->block[k];
			if (b->state == SHOT_ACTIVE_ALLOCATED) {
				out->allocated += b->size;
			} else if (b->state == SHOT_INACTIVE) {
				out->free += b->size;
				if (b->size > out->largest_free)
					out->largest_free = b->size;
			}
		}
	}
}
