/* view_leak_sites.c — the Leaks view grouped by allocation site (key g): live bytes, live
 * allocations, the oldest one's age and the bytes allocated there in all, per call stack, the
 * largest first; the SITE column names the caller of the allocation function. Enter shows the
 * whole stack. Draws site rows (site_rows.h) only. */
#include "tui.h"
#include "table.h"
#include "crt.h"
#include "format.h"
#include "site_rows.h"
#include "stack_pane.h"
#include "stack_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

enum { COL_LIVE, COL_COUNT_, COL_OLDEST, COL_ALLOCATED, COL_SITE, COL_COUNT };

static const struct tui_column site_cols[COL_COUNT] = {
	[COL_LIVE] = { "LIVE", 10, true, SORT_NUM, true, .prio = 9 },
	[COL_COUNT_] = { "ALLOCS", 7, true, SORT_NUM, true, .prio = 7 },
	[COL_OLDEST] = { "OLDEST", 7, true, SORT_NUM, true, .prio = 8 },
	[COL_ALLOCATED] = { "ALLOCATED", 10, true, SORT_NUM, true, .prio = 4 },
	[COL_SITE] = { "SITE (caller of the allocation function)", 0, false, SORT_TEXT, false, .prio = 6 },
};

/* The frame that says where: the first below the allocation function (frame 0). */
static void site_name(char *buf, size_t n, uint32_t id)
{
	const struct stack *st = stacks_get(id);
	if (!st || !st->n)
		snprintf(buf, n, "(no stack taken)");
	else
		stack_text_frame_brief(buf, n, &st->frame[st->n > 1 ? 1 : 0]);
}

static void site_cells(const struct tui_frame *f, const struct tui_row *row, char cell[][TUI_CELL])
{
	const struct row_site *s = row->item;
	fmt_bytes(cell[COL_LIVE], TUI_CELL, s->live_bytes);
	snprintf(cell[COL_COUNT_], TUI_CELL, "%" PRIu64, s->live_allocations);
	fmt_age(cell[COL_OLDEST], TUI_CELL, s->oldest_age_ns);
	if (s->stack != STACK_NONE)
		fmt_bytes(cell[COL_ALLOCATED], TUI_CELL, s->allocated_bytes);
	else
		snprintf(cell[COL_ALLOCATED], TUI_CELL, "-");
	site_name(cell[COL_SITE], TUI_CELL, s->stack);	/* whole: name_buf may have cut it */
}

static void sites_draw(WINDOW *w, struct tui_rect r, const struct tui_frame *f, struct tui_view_state *vs)
{
	struct stacks_snapshot ss;
	struct row_site *sites = NULL;
	bool have = stacks_snapshot(&ss) == 0;
	long n = site_rows_build(f->rows, have ? &ss : NULL, &sites);
	if (have)
		stacks_snapshot_free(&ss);
	struct tui_row *rows = calloc(n > 0 ? (size_t)n : 1, sizeof(*rows));
	if (!rows || n < 0) {
		free(rows);
		return;
	}
	for (long i = 0; i < n; i++) {
		struct tui_row *row = &rows[i];
		row->item = &sites[i];
		site_name(row->name_buf, sizeof row->name_buf, sites[i].stack);
		row->key[COL_LIVE] = (double)sites[i].live_bytes;
		row->key[COL_COUNT_] = (double)sites[i].live_allocations;
		row->key[COL_OLDEST] = (double)sites[i].oldest_age_ns;
		row->key[COL_ALLOCATED] = (double)sites[i].allocated_bytes;
		row->tie = sites[i].stack;
		row->select = sites[i].stack;
	}
	char line[TUI_CELL];
	snprintf(line, sizeof(line), "Live allocations by allocation site: %ld site%s (g: every allocation)", n,
		 n == 1 ? "" : "s");
	tui_put(w, r.y, r.x, r.w, tui_attr(TC_LABEL), line);
	r.y += 2;
	r.h -= 2;
	tui_table_draw(w, r, &view_leak_sites, vs, f, rows, (size_t)n, site_cells);
	free(rows);
	free(sites);
}

const struct tui_view view_leak_sites = {
	.name = "Leaks", .key = 'l', .cols = site_cols, .n_cols = COL_COUNT,
	.default_sort = COL_LIVE, .empty = "no live allocation", .draw = sites_draw,
	.details = PANE_STACK + 1,
};
