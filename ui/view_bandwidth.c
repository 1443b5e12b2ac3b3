/* view_bandwidth.c — the Bandwidth view: copies per direction (H2D, D2H, D2D, H2H), the
 * synchronous and asynchronous ones on rows of their own, and memsets: calls, bytes, time,
 * average bandwidth and that of the last interval. Draws from snapshots only. */
#include "tui.h"
#include "table.h"
#include "crt.h"
#include "format.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

enum { COL_NAME, COL_CALLS, COL_BYTES, COL_TIME, COL_AVG, COL_RATE, COL_COUNT };

static const struct tui_column xfer_cols[COL_COUNT] = {
	[COL_NAME] = { "COPY", 10, false, SORT_NUM, false },
	[COL_CALLS] = { "CALLS", 9, true, SORT_NUM, true },
	[COL_BYTES] = { "BYTES", 11, true, SORT_NUM, true },
	[COL_TIME] = { "TIME", 10, true, SORT_NUM, true },
	[COL_AVG] = { "AVG RATE", 11, true, SORT_NUM, true },
	[COL_RATE] = { "LAST RATE", 11, true, SORT_NUM, true },
};

/* The rows: 4 directions x (sync, async), then memset. */
#define XFER_ROWS (DIR_COUNT * COPY_MODE_COUNT + 1)
#define XFER_MEMSET (XFER_ROWS - 1)

static const struct stats_xfer *xfer_of(const struct stats_snapshot *s, int i)
{
	if (i == XFER_MEMSET)
		return &s->memset_;
	return &s->xfer[i % COPY_MODE_COUNT][i / COPY_MODE_COUNT];
}

static int xfer_index(const struct tui_frame *f, const struct tui_row *row)
{
	for (int i = 0; i < XFER_ROWS; i++)
		if (xfer_of(f->cur, i) == row->item)
			return i;
	return 0;
}

static void xfer_cells(const struct tui_frame *f, const struct tui_row *row, char cell[][TUI_CELL])
{
	const struct stats_xfer *x = row->item;
	const struct stats_xfer *p = f->prev ? xfer_of(f->prev, xfer_index(f, row)) : NULL;

	snprintf(cell[COL_NAME], TUI_CELL, "%s", tui_row_name(row));
	fmt_count(cell[COL_CALLS], TUI_CELL, x->calls);
	fmt_bytes(cell[COL_BYTES], TUI_CELL, x->bytes);
	fmt_duration(cell[COL_TIME], TUI_CELL, x->ns);
	fmt_rate(cell[COL_AVG], TUI_CELL, x->bytes, x->ns);
	if (p && tui_delta(x->calls, p->calls))
		fmt_rate(cell[COL_RATE], TUI_CELL, tui_delta(x->bytes, p->bytes), tui_delta(x->ns, p->ns));
	else
		snprintf(cell[COL_RATE], TUI_CELL, "%s", fmt_dash());	/* no copy in the interval */
}

static void xfer_name(char *buf, size_t n, int i)
{
	if (i == XFER_MEMSET)
		snprintf(buf, n, "memset");
	else
		snprintf(buf, n, "%s%s", copy_dir_name[i / COPY_MODE_COUNT],
			 i % COPY_MODE_COUNT == COPY_ASYNC ? " async" : "");
}

static void bandwidth_totals(WINDOW *w, struct tui_rect r, const struct stats_snapshot *s)
{
	struct stats_xfer all = { 0 };
	char bytes[FMT_LEN], rate[FMT_LEN], sync[FMT_LEN], line[TUI_CELL];

	for (int i = 0; i < XFER_MEMSET; i++) {
		all.calls += xfer_of(s, i)->calls;
		all.bytes += xfer_of(s, i)->bytes;
		all.ns += xfer_of(s, i)->ns;
	}
	fmt_bytes(bytes, sizeof(bytes), all.bytes);
	fmt_rate(rate, sizeof(rate), all.bytes, all.ns);
	fmt_duration(sync, sizeof(sync), s->sync_ns);
	snprintf(line, sizeof(line), "Copies: %" PRIu64 " call(s), %s at %s; synchronize: %" PRIu64
		 " call(s), %s blocked", all.calls, bytes, rate, s->sync_calls, sync);
	tui_put(w, r.y, r.x, r.w, tui_attr(TC_LABEL), line);
}

static void bandwidth_draw(WINDOW *w, struct tui_rect r, const struct tui_frame *f,
			   struct tui_view_state *vs)
{
	struct tui_row rows[XFER_ROWS] = { 0 };
	size_t n = 0;

	for (int i = 0; i < XFER_ROWS; i++) {
		const struct stats_xfer *x = xfer_of(f->cur, i);
		const struct stats_xfer *p = f->prev ? xfer_of(f->prev, i) : NULL;
		uint64_t dns = p ? tui_delta(x->ns, p->ns) : 0;
		struct tui_row *row = &rows[n];

		if (!x->calls)
			continue;
		row->item = x;
		xfer_name(row->name_buf, sizeof(row->name_buf), i);
		row->key[COL_NAME] = i;
		row->key[COL_CALLS] = (double)x->calls;
		row->key[COL_BYTES] = (double)x->bytes;
		row->key[COL_TIME] = (double)x->ns;
		row->key[COL_AVG] = x->ns ? (double)x->bytes / (double)x->ns : 0;
		row->key[COL_RATE] = dns ? (double)tui_delta(x->bytes, p->bytes) / (double)dns : 0;
		row->tie = (uint64_t)i;
		n++;
	}
	bandwidth_totals(w, r, f->cur);
	r.y += 2;
	r.h -= 2;
	tui_table_draw(w, r, &view_bandwidth, vs, f, rows, n, xfer_cells);
}

const struct tui_view view_bandwidth = {
	.name = "Bandwidth", .key = 'b', .cols = xfer_cols, .n_cols = COL_COUNT,
	.default_sort = COL_NAME, .empty = "no copy yet", .draw = bandwidth_draw,
};
