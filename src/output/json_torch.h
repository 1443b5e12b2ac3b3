/* json_torch.h — the --json summary's "torch_memory" (json_torch.c), which json.c writes into the
 * summary and into each process's object. */
#ifndef GPUTOP_JSON_TORCH_H
#define GPUTOP_JSON_TORCH_H

#include "json_writer.h"
#include "rows.h"

/* "torch_memory": the caching allocator's state, devices, blocks, lines, leak candidates. */
void json_torch(struct jw *w, const struct rows *rs);

#endif
