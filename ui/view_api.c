/* view_api.c — the API view: one row per CUDA function called, with calls, errors and the
 * name of the last one, time inside the calls and calls per second over the last interval.
 * Draws the frame's rows (rows.h) with their cells (cells.h) only. */
#include "tui.h"
#include "table.h"
#include "cells.h"
#include "crt.h"
#include "format.h"
#include "stack_pane.h"

#include <stdio.h>
#include <stdlib.h>

enum { COL_NAME, COL_CALLS, COL_RATE, COL_ERRORS, COL_LAST, COL_TIME, COL_AVG, COL_PID, COL_COUNT };

static const struct tui_column api_cols[COL_COUNT] = {
	[COL_PID] = { "PID", 9, true, SORT_NUM, false, true, .prio = 8 },
	[COL_NAME] = { "FUNCTION", 0, false, SORT_TEXT, false, .prio = 6 },
	[COL_CALLS] = { "CALLS", 8, true, SORT_NUM, true, .prio = 9 },
	[COL_RATE] = { "PER SEC", 8, true, SORT_NUM, true, .prio = 5 },
	[COL_ERRORS] = { "ERRORS", 7, true, SORT_NUM, true, .prio = 7, .sparse = true },
	[COL_LAST] = { "LAST ERROR", 26, false, SORT_NONE, false, .prio = 3, .sparse = true },
	[COL_TIME] = { "TIME", 9, true, SORT_NUM, true, .prio = 8, .sparse = true },
	[COL_AVG] = { "AVG", 9, true, SORT_NUM, true, .prio = 7, .sparse = true },
};

static void api_cells(const struct tui_frame *f, const struct tui_row *row, char cell[][TUI_CELL])
{
	struct cells_api c;

	cells_api(&c, row->item, f->rows, f->estimated);
	snprintf(cell[COL_PID], TUI_CELL, "%s", c.process);
	snprintf(cell[COL_NAME], TUI_CELL, "%s", c.name);
	snprintf(cell[COL_CALLS], TUI_CELL, "%s", c.calls);
	snprintf(cell[COL_RATE], TUI_CELL, "%s", c.rate);
	snprintf(cell[COL_ERRORS], TUI_CELL, "%s", c.errors);
	snprintf(cell[COL_LAST], TUI_CELL, "%s", c.last_error);
	snprintf(cell[COL_TIME], TUI_CELL, "%s", c.time);
	snprintf(cell[COL_AVG], TUI_CELL, "%s", c.avg);
}

static void api_draw(WINDOW *w, struct tui_rect r, const struct tui_frame *f,
		     struct tui_view_state *vs)
{
	const struct rows *rs = f->rows;
	struct tui_row *rows = calloc(rs->n_api ? rs->n_api : 1, sizeof(*rows));
	char c[FMT_LEN], e[FMT_LEN], rate[FMT_LEN], line[TUI_CELL];

	if (!rows)
		return;
	for (size_t i = 0; i < rs->n_api; i++) {
		const struct row_api *a = &rs->api[i];
		struct tui_row *row = &rows[i];

		row->item = a;
		row->name = a->name ? a->name : "?";
		row->key[COL_PID] = a->pid;
		row->key[COL_CALLS] = (double)a->calls;
		row->key[COL_RATE] = rows_per_sec(a->calls_delta, rs->interval_ns);
		row->key[COL_ERRORS] = (double)a->errors;
		row->key[COL_TIME] = (double)a->ns;
		row->key[COL_AVG] = a->calls ? (double)a->ns / (double)a->calls : 0;
		row->tie = (uint64_t)a->index;
		row->select = (uint64_t)a->index + 1;	/* Enter: its error sites */
	}
	cells_launch_count(c, sizeof(c), rs->calls, f->estimated);
	fmt_count(e, sizeof(e), rs->errors);
	cells_per_sec(rate, sizeof(rate), rs->calls_delta, rs->interval_ns, f->estimated);
	snprintf(line, sizeof(line), "%zu functions called, %s calls (%s per second), %s errors",
		 rs->n_api, c, rate, e);
	tui_put(w, r.y, r.x, r.w, tui_attr(rs->errors ? TC_WARN : TC_LABEL), line);
	r.y += 2;
	r.h -= 2;
	tui_table_draw(w, r, &view_api, vs, f, rows, rs->n_api, api_cells);
	free(rows);
}

const struct tui_view view_api = {
	.name = "API", .key = 'a', .cols = api_cols, .n_cols = COL_COUNT,
	.default_sort = COL_CALLS, .empty = "no CUDA call traced yet", .draw = api_draw,
	.details = PANE_ERROR_SITES + 1,
};
