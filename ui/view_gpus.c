/* view_gpus.c — the figures by GPU (G, from any view): per device its live memory,
 * allocations, kernel launches (and per second), bytes copied and synchronize calls, with a row "?"
 * for what ran where gputop could not tell (docs: README, "GPUs"). Draws the frame's rows
 * (rows.h) with their cells (cells.h) only. */
#include "tui.h"
#include "table.h"
#include "cells.h"
#include "crt.h"
#include "format.h"

#include <stdio.h>

enum { COL_GPU, COL_LIVE, COL_ALLOCS, COL_LAUNCHES, COL_RATE, COL_COPY_BYTES, COL_SYNCS, COL_SYNC_TIME,
       COL_COUNT };

static const struct tui_column gpu_cols[COL_COUNT] = {
	[COL_GPU] = { "GPU", 4, true, SORT_NUM, false, .prio = 9 },
	[COL_LIVE] = { "LIVE", 11, true, SORT_NUM, true, .prio = 9 },
	[COL_ALLOCS] = { "ALLOCS", 8, true, SORT_NUM, true, .prio = 5 },
	[COL_LAUNCHES] = { "LAUNCHES", 9, true, SORT_NUM, true, .prio = 8 },
	[COL_RATE] = { "PER SEC", 8, true, SORT_NUM, true, .prio = 6 },
	[COL_COPY_BYTES] = { "COPIED", 11, true, SORT_NUM, true, .prio = 7 },
	[COL_SYNCS] = { "SYNCS", 8, true, SORT_NUM, true, .prio = 4 },
	[COL_SYNC_TIME] = { "BLOCKED", 10, true, SORT_NUM, true, .prio = 6 },
};

static void gpu_cells(const struct tui_frame *f, const struct tui_row *row, char cell[][TUI_CELL])
{
	struct cells_device c;

	cells_device(&c, row->item, f->rows, f->estimated);
	snprintf(cell[COL_GPU], TUI_CELL, "%s", c.device);
	snprintf(cell[COL_LIVE], TUI_CELL, "%s", c.live);
	snprintf(cell[COL_ALLOCS], TUI_CELL, "%s", c.allocs);
	snprintf(cell[COL_LAUNCHES], TUI_CELL, "%s", c.launches);
	snprintf(cell[COL_RATE], TUI_CELL, "%s", c.launch_rate);
	snprintf(cell[COL_COPY_BYTES], TUI_CELL, "%s", c.copy_bytes);
	snprintf(cell[COL_SYNCS], TUI_CELL, "%s", c.syncs);
	snprintf(cell[COL_SYNC_TIME], TUI_CELL, "%s", c.sync_time);
}

static void gpus_draw(WINDOW *w, struct tui_rect r, const struct tui_frame *f, struct tui_view_state *vs)
{
	const struct rows *rs = f->rows;
	struct tui_row rows[COMM_DEV_SLOTS] = { 0 };

	for (size_t i = 0; i < rs->n_device; i++) {
		const struct row_device *d = &rs->device[i];
		struct tui_row *row = &rows[i];

		row->item = d;
		cells_gpu(row->name_buf, sizeof(row->name_buf), d->device);
		row->key[COL_GPU] = d->device >= 0 ? d->device : 1e9;
		row->key[COL_LIVE] = (double)d->live_bytes;
		row->key[COL_ALLOCS] = (double)d->total.allocs;
		row->key[COL_LAUNCHES] = (double)d->total.launches;
		row->key[COL_RATE] = (double)d->delta.launches;
		row->key[COL_COPY_BYTES] = (double)d->total.copy_bytes;
		row->key[COL_SYNCS] = (double)d->total.syncs;
		row->key[COL_SYNC_TIME] = (double)d->total.sync_ns;
		row->tie = i;
	}
	tui_put(w, r.y, r.x, r.w, tui_attr(TC_LABEL),
		"By GPU (G again: back): each call on its thread's current device; ? where not known");
	r.y += 2;
	r.h -= 2;
	tui_table_draw(w, r, &view_gpus, vs, f, rows, rs->n_device, gpu_cells);
}

const struct tui_view view_gpus = {
	.name = "GPUs", .key = 'G', .cols = gpu_cols, .n_cols = COL_COUNT,
	.default_sort = COL_GPU, .empty = "nothing ran on a GPU yet", .draw = gpus_draw,
};
