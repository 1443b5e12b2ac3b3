/* view_memory.c — the Memory view (key m): PyTorch's GPU memory block by block. On top, the
 * caching allocator's state and a line per device (reserved, allocated, free inside segments,
 * what torch.cuda.empty_cache() would give back); below, every live block, largest first (sort
 * by AGE for the leak candidates); g groups them by the line that allocated them. Enter shows a
 * block's or a line's call stack. Draws PyTorch's rows (torch_rows.h) with their cells only. */
#include "tui.h"
#include "table.h"
#include "cells.h"
#include "crt.h"
#include "format.h"
#include "stack_pane.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

enum { COL_ADDR, COL_SIZE, COL_REQUESTED, COL_DEV, COL_STREAM, COL_AGE, COL_SITE, COL_PID, COL_COUNT };

static const struct tui_column block_cols[COL_COUNT] = {
	[COL_PID] = { "PID", 9, true, SORT_NUM, false, true, .prio = 8 },
	[COL_ADDR] = { "ADDRESS", 16, false, SORT_NUM, false, .prio = 7 },
	[COL_SIZE] = { "SIZE", 10, true, SORT_NUM, true, .prio = 9 },
	[COL_REQUESTED] = { "REQUESTED", 10, true, SORT_NUM, true, .prio = 5 },
	[COL_DEV] = { "DEV", 3, true, SORT_NUM, false, .prio = 4 },
	[COL_STREAM] = { "STREAM", 14, false, SORT_NUM, false, .prio = 3 },
	[COL_AGE] = { "AGE", 8, true, SORT_NUM, true, .prio = 8 },
	[COL_SITE] = { "LINE (where it was allocated)", 0, false, SORT_TEXT, false, .prio = 6 },
};

/* The header: the allocator's state, then a line per device while there is room (a few).
 * Returns the lines drawn. */
static int memory_header(WINDOW *w, struct tui_rect r, const struct rows *rs)
{
	const struct torch_rows *t = &rs->torch;
	char line[TUI_CELL * 2];
	int y = 0;
	cells_torch_state(line, sizeof line, t);
	tui_put(w, r.y + y++, r.x, r.w, tui_attr(t->state == TORCH_TRACKING ? TC_LABEL : TC_DIM), line);
	for (size_t i = 0; i < t->n_device && y < 5 && y < r.h - 3; i++) {
		const struct torch_row_device *d = &t->device[i];
		cells_torch_device(line, sizeof line, d, rs);
		tui_put(w, r.y + y++, r.x, r.w, tui_attr(d->stats_known && !d->agrees ? TC_WARN : TC_VALUE), line);
	}
	return y;
}

static void block_cells(const struct tui_frame *f, const struct tui_row *row, char cell[][TUI_CELL])
{
	struct cells_torch_block c;
	cells_torch_block(&c, row->item, f->rows);
	snprintf(cell[COL_PID], TUI_CELL, "%s", c.process);
	snprintf(cell[COL_ADDR], TUI_CELL, "%s", c.address);
	snprintf(cell[COL_SIZE], TUI_CELL, "%s", c.size);
	snprintf(cell[COL_REQUESTED], TUI_CELL, "%s", c.requested);
	snprintf(cell[COL_DEV], TUI_CELL, "%s", c.device);
	snprintf(cell[COL_STREAM], TUI_CELL, "%s", c.stream);
	snprintf(cell[COL_AGE], TUI_CELL, "%s", c.age);
	snprintf(cell[COL_SITE], TUI_CELL, "%s", c.site);
}

static void memory_draw(WINDOW *w, struct tui_rect r, const struct tui_frame *f, struct tui_view_state *vs)
{
	const struct torch_rows *t = &f->rows->torch;
	struct tui_row *rows = calloc(t->n_block ? t->n_block : 1, sizeof(*rows));
	if (!rows)
		return;
	for (size_t i = 0; i < t->n_block; i++) {
		const struct torch_row_block *b = &t->block[i];
		struct tui_row *row = &rows[i];
		row->item = b;
		cells_torch_site(row->name_buf, sizeof row->name_buf, b->site, b->before);
		row->key[COL_PID] = b->b->pid;
		row->key[COL_ADDR] = (double)b->b->ptr;
		row->key[COL_SIZE] = (double)b->b->size;
		row->key[COL_REQUESTED] = (double)b->b->requested;
		row->key[COL_DEV] = b->b->device;
		row->key[COL_STREAM] = (double)b->b->stream;
		row->key[COL_AGE] = (double)b->age_ns;
		row->tie = b->b->block;
		row->select = b->b->stack;	/* Enter: its call stack */
	}
	int h = memory_header(w, r, f->rows) + 1;
	r.y += h;
	r.h -= h;
	tui_table_draw(w, r, &view_memory, vs, f, rows, t->n_block, block_cells);
	free(rows);
}

const struct tui_view view_memory = {
	.name = "Memory", .key = 'm', .cols = block_cols, .n_cols = COL_COUNT,
	.default_sort = COL_SIZE, .empty = "no live PyTorch block", .draw = memory_draw,
	.details = PANE_STACK + 1, .grouped = &view_memory_lines,
};

/* ---- g: by line --------------------------------------------------------------------------- */

enum { LCOL_LIVE, LCOL_BLOCKS, LCOL_OLDEST, LCOL_SITE, LCOL_COUNT };

static const struct tui_column line_cols[LCOL_COUNT] = {
	[LCOL_LIVE] = { "LIVE", 10, true, SORT_NUM, true, .prio = 9 },
	[LCOL_BLOCKS] = { "BLOCKS", 7, true, SORT_NUM, true, .prio = 7 },
	[LCOL_OLDEST] = { "OLDEST", 8, true, SORT_NUM, true, .prio = 8 },
	[LCOL_SITE] = { "LINE (where they were allocated)", 0, false, SORT_TEXT, false, .prio = 6 },
};

static void line_cells(const struct tui_frame *f, const struct tui_row *row, char cell[][TUI_CELL])
{
	const struct torch_row_site *s = row->item;
	char age[FMT_LEN];
	fmt_bytes(cell[LCOL_LIVE], TUI_CELL, s->live_bytes);
	snprintf(cell[LCOL_BLOCKS], TUI_CELL, "%" PRIu64, s->live_blocks);
	fmt_age(age, sizeof age, s->oldest_age_ns);
	snprintf(cell[LCOL_OLDEST], TUI_CELL, "%s%s", s->before ? ">" : "", age);
	cells_torch_site(cell[LCOL_SITE], TUI_CELL, s->site, s->before);
}

static void lines_draw(WINDOW *w, struct tui_rect r, const struct tui_frame *f, struct tui_view_state *vs)
{
	const struct torch_rows *t = &f->rows->torch;
	struct tui_row *rows = calloc(t->n_site ? t->n_site : 1, sizeof(*rows));
	if (!rows)
		return;
	for (size_t i = 0; i < t->n_site; i++) {
		const struct torch_row_site *s = &t->site[i];
		struct tui_row *row = &rows[i];
		row->item = s;
		cells_torch_site(row->name_buf, sizeof row->name_buf, s->site, s->before);
		row->key[LCOL_LIVE] = (double)s->live_bytes;
		row->key[LCOL_BLOCKS] = (double)s->live_blocks;
		row->key[LCOL_OLDEST] = (double)s->oldest_age_ns;
		row->tie = s->site ? (uint64_t)(uintptr_t)s->site->function * 31 + (uint64_t)(uintptr_t)s->site->file +
					     s->site->line : s->before ? 1 : 2;	/* its strings are interned */
		row->select = s->site ? s->stack : 0;
	}
	int h = memory_header(w, r, f->rows) + 1;
	r.y += h;
	r.h -= h;
	tui_table_draw(w, r, &view_memory_lines, vs, f, rows, t->n_site, line_cells);
	free(rows);
}

const struct tui_view view_memory_lines = {
	.name = "Memory", .key = 'm', .cols = line_cols, .n_cols = LCOL_COUNT,
	.default_sort = LCOL_LIVE, .empty = "no live PyTorch block", .draw = lines_draw,
	.details = PANE_STACK + 1,
};
