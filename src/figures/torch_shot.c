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
