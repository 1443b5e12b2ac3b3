/* view_bandwidth.c — the Bandwidth view: copies per direction (H2D, D2H, D2D, H2H), the
 * synchronous and asynchronous ones on rows of their own, and memsets: calls, bytes, time,
 * average bandwidth and that of the last interval. Copies and memsets run as nodes of launched
 * CUDA graphs have rows of their own ("H2D graph", "memset graph"): executions and bytes, no
 * time (they are no calls). Draws the frame's rows (rows.h) with their
 * cells (cells.h) only. */
#include "tui.h"
#include "table.h"
#include "cells.h"
#include "crt.h"
#include "format.h"

#include <inttypes.h>
#include <stdio.h>

enum { COL_NAME, COL_CALLS, COL_BYTES, COL_TIME, COL_AVG, COL_RATE, COL_COUNT };

static const struct tui_column xfer_cols[COL_COUNT] = {
	[COL_NAME] = { "COPY", 12, false, SORT_NUM, false, .prio = 9 },
	[COL_CALLS] = { "CALLS", 9, true, SORT_NUM, true, .prio = 7 },
	[COL_BYTES] = { "BYTES", 11, true, SORT_NUM, true, .prio = 8 },
	[COL_TIME] = { "TIME", 10, true, SORT_NUM, true, .prio = 5 },
	[COL_AVG] = { "AVG RATE", 11, true, SORT_NUM, true, .prio = 7 },
	[COL_RATE] = { "LAST RATE", 11, true, SORT_NUM, true, .prio = 6 },
};

/* The rows: 4 directions x (sync, async), memset, then 4 directions and memset in graphs. */
#define XFER_MEMSET (DIR_COUNT * COPY_MODE_COUNT)
#define XFER_GRAPH (XFER_MEMSET + 1)
#define XFER_ROWS (XFER_GRAPH + DIR_COUNT + 1)

static const struct row_xfer *xfer_of(const struct rows *rs, int i)
{
	if (i == XFER_MEMSET)
		return &rs->memset_;
	if (i >= XFER_GRAPH)
		return i - XFER_GRAPH < DIR_COUNT ? &rs->graph_copy[i - XFER_GRAPH] : &rs->graph_memset;
	return &rs->copy[i / COPY_MODE_COUNT][i % COPY_MODE_COUNT];
}

static void xfer_cells(const struct tui_frame *f, const struct tui_row *row, char cell[][TUI_CELL])
{
	struct cells_xfer c;

	cells_xfer(&c, row->item);
	snprintf(cell[COL_NAME], TUI_CELL, "%s", c.name);
	snprintf(cell[COL_CALLS], TUI_CELL, "%s", c.calls);
	snprintf(cell[COL_BYTES], TUI_CELL, "%s", c.bytes);
	snprintf(cell[COL_TIME], TUI_CELL, "%s", c.time);
	snprintf(cell[COL_AVG], TUI_CELL, "%s", c.avg_rate);
	snprintf(cell[COL_RATE], TUI_CELL, "%s", c.rate);
}

/* The copies in all and the time blocked synchronizing, on two lines where one is too short:
 * the lines written. */
static int bandwidth_totals(WINDOW *w, struct tui_rect r, const struct tui_frame *f)
{
	const struct stats_xfer *all = &f->rows->copies.total;
	char bytes[FMT_LEN], rate[FMT_LEN], sync[FMT_LEN], line[TUI_CELL];

	fmt_bytes(bytes, sizeof(bytes), all->bytes);
	fmt_rate(rate, sizeof(rate), all->bytes, all->ns);
	fmt_duration(sync, sizeof(sync), f->cur->sync_ns);
	snprintf(line, sizeof(line), "Copies: %" PRIu64 " call(s), %s at %s; synchronize: %" PRIu64
		 " call(s), %s blocked", all->calls, bytes, rate, f->cur->sync_calls, sync);
	return tui_put_wrapped(w, r.y, r.x, r.w, 2, tui_attr(TC_LABEL), line);
}

static void bandwidth_draw(WINDOW *w, struct tui_rect r, const struct tui_frame *f,
			   struct tui_view_state *vs)
{
	struct tui_row rows[XFER_ROWS] = { 0 };
	size_t n = 0;

	for (int i = 0; i < XFER_ROWS; i++) {
		const struct row_xfer *x = xfer_of(f->rows, i);
		struct tui_row *row = &rows[n];

		if (!x->total.calls)
			continue;
		row->item = x;
		row->name = x->name;
		row->key[COL_NAME] = i;
		row->key[COL_CALLS] = (double)x->total.calls;
		row->key[COL_BYTES] = (double)x->total.bytes;
		row->key[COL_TIME] = (double)x->total.ns;
		row->key[COL_AVG] = x->total.ns ? (double)x->total.bytes / (double)x->total.ns : 0;
		row->key[COL_RATE] = x->delta.ns ? (double)x->delta.bytes / (double)x->delta.ns : 0;
		row->tie = (uint64_t)i;
		n++;
	}
	int totals = bandwidth_totals(w, r, f);
	r.y += totals - 1;
	r.h -= totals - 1;
	char gpu[TUI_CELL];
	cells_gpu_copies(gpu, sizeof(gpu), f->rows);	/* --gpu-time */
	if (gpu[0]) {
		tui_put(w, r.y + 1, r.x, r.w, tui_attr(TC_LABEL), gpu);
		r.y++;
		r.h--;
	}
	r.y += 2;
	r.h -= 2;
	tui_table_draw(w, r, &view_bandwidth, vs, f, rows, n, xfer_cells);
}

const struct tui_view view_bandwidth = {
	.name = "Bandwidth", .key = 'b', .cols = xfer_cols, .n_cols = COL_COUNT,
	.default_sort = COL_NAME, .empty = "no copy yet", .draw = bandwidth_draw,
};
