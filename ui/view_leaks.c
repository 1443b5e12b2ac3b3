/* view_leaks.c — the Leaks view: every live allocation (address, size, kind, API, device,
 * thread, age), largest or oldest first, with the totals on top. An allocation that stays
 * here while the program runs on is the leak to look at. Draws the frame's rows (rows.h) with
 * their cells (cells.h) only. */
#include "tui.h"
#include "table.h"
#include "cells.h"
#include "crt.h"
#include "format.h"
#include "meters.h"
#include "stack_pane.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

enum { COL_ADDR, COL_SIZE, COL_KIND, COL_API, COL_DEV, COL_TID, COL_AGE, COL_PID, COL_COUNT };

static const struct tui_column leak_cols[COL_COUNT] = {
	[COL_PID] = { "PID", 9, true, SORT_NUM, false, true, .prio = 8 },
	[COL_ADDR] = { "ADDRESS", 16, false, SORT_NUM, false, .prio = 9 },
	[COL_SIZE] = { "SIZE", 10, true, SORT_NUM, true, .prio = 9 },
	[COL_KIND] = { "KIND", 7, false, SORT_NUM, false, .prio = 5 },
	[COL_API] = { "API", 22, false, SORT_TEXT, false, .prio = 6 },
	[COL_DEV] = { "DEV", 3, true, SORT_NUM, false, .prio = 4 },
	[COL_TID] = { "THREAD", 8, true, SORT_NUM, false, .prio = 3 },
	[COL_AGE] = { "AGE", 7, true, SORT_NUM, true, .prio = 8 },
};

static void leak_cells(const struct tui_frame *f, const struct tui_row *row, char cell[][TUI_CELL])
{
	struct cells_alloc c;

	cells_alloc(&c, row->item, f->rows);
	snprintf(cell[COL_PID], TUI_CELL, "%s", c.process);
	snprintf(cell[COL_ADDR], TUI_CELL, "%s", c.address);
	snprintf(cell[COL_SIZE], TUI_CELL, "%s", c.size);
	snprintf(cell[COL_KIND], TUI_CELL, "%s", c.kind);
	snprintf(cell[COL_API], TUI_CELL, "%s", c.api);
	snprintf(cell[COL_DEV], TUI_CELL, "%s", c.device);
	snprintf(cell[COL_TID], TUI_CELL, "%s", c.thread);
	snprintf(cell[COL_AGE], TUI_CELL, "%s", c.age);
}

/* With NVML: the process's device memory = what gputop saw allocated + the row of what it did
 * not see (before the attach, or outside the CUDA API). */
static int leaks_unseen(WINDOW *w, struct tui_rect r, const struct tui_frame *f)
{
	const struct stats_snapshot *s = f->cur;
	struct row_unseen u;
	char line[TUI_CELL * 2];

	if ((!f->dev || !f->dev->available) && !f->st->cuda_before_attach)
		return 0;
	device_rows_unseen(&u, f->dev, f->st->pid, s->live_bytes[MEM_DEVICE] + s->live_bytes[MEM_MANAGED],
			   f->st->cuda_before_attach);
	meters_unseen_text(line, sizeof(line), &u);
	tui_put(w, r.y, r.x, r.w, tui_attr((u.known && u.unseen_bytes) || (!u.known && u.before_attach) ? TC_WARN : TC_DIM),
		line);
	return 1;
}

/* "Live: 5 allocations; 40.0 MiB device, 0 B managed (peak 42.0 MiB), 1.00 MiB pinned host",
 * on two lines where one is too short (80 columns), then what was counted since the start, or
 * since the attach: the lines written. */
static int leaks_totals(WINDOW *w, struct tui_rect r, const struct stats_snapshot *s, const struct session_status *st)
{
	char dev[FMT_LEN], peak[FMT_LEN], host[FMT_LEN], managed[FMT_LEN], line[TUI_CELL];

	fmt_bytes(dev, sizeof(dev), s->live_bytes[MEM_DEVICE]);
	fmt_bytes(managed, sizeof(managed), s->live_bytes[MEM_MANAGED]);
	fmt_bytes(peak, sizeof(peak), s->peak_device_bytes);
	fmt_bytes(host, sizeof(host), s->live_bytes[MEM_HOST]);
	snprintf(line, sizeof(line), "Live%s: %" PRIu64 " allocations; %s device, %s managed "
		 "(peak %s), %s pinned host", st->cuda_before_attach ? " since the attach" : "", s->live_count, dev,
		 managed, peak, host);
	int n = tui_put_wrapped(w, r.y, r.x, r.w, 2, tui_attr(s->live_count ? TC_WARN : TC_LABEL), line);
	snprintf(line, sizeof(line), "%s: %" PRIu64 " allocations, %" PRIu64 " frees",
		 st->launched ? "Since start" : "Since the attach", s->allocs, s->frees);
	tui_put(w, r.y + n, r.x, r.w, tui_attr(TC_DIM), line);
	return n + 1;
}

static void leaks_draw(WINDOW *w, struct tui_rect r, const struct tui_frame *f,
		       struct tui_view_state *vs)
{
	const struct rows *rs = f->rows;
	struct tui_row *rows = calloc(rs->n_alloc ? rs->n_alloc : 1, sizeof(*rows));

	if (!rows)
		return;
	for (size_t i = 0; i < rs->n_alloc; i++) {
		const struct row_alloc *a = &rs->alloc[i];
		struct tui_row *row = &rows[i];

		row->item = a;
		row->name = a->api ? a->api : "?";
		snprintf(row->name_buf, sizeof(row->name_buf), "%s", a->address);
		row->key[COL_PID] = a->pid;
		row->key[COL_ADDR] = (double)a->addr;
		row->key[COL_SIZE] = (double)a->bytes;
		row->key[COL_KIND] = a->kind;
		row->key[COL_DEV] = a->device;
		row->key[COL_TID] = a->tid;
		row->key[COL_AGE] = (double)a->age_ns;
		row->tie = a->addr;
		row->select = a->stack;	/* Enter: its call stack */
	}
	int totals = leaks_totals(w, r, f->cur, f->st);
	r.y += totals;
	r.h -= totals;
	int unseen = leaks_unseen(w, r, f);
	r.y += 1 + unseen;
	r.h -= 1 + unseen;
	tui_table_draw(w, r, &view_leaks, vs, f, rows, rs->n_alloc, leak_cells);
	free(rows);
}

const struct tui_view view_leaks = {
	.name = "Leaks", .key = 'l', .cols = leak_cols, .n_cols = COL_COUNT,
	.default_sort = COL_SIZE, .empty = "no live allocation", .draw = leaks_draw,
	.details = PANE_STACK + 1, .grouped = &view_leak_sites,
};
