/* view_kernels.c — the Kernels view: one row per kernel name (demangled), launches in all and
 * per second over the last interval, the last grid x block, and its share of all launches.
 * Draws from snapshots only. */
#include "tui.h"
#include "table.h"
#include "crt.h"
#include "format.h"

#include <stdio.h>
#include <stdlib.h>

enum { COL_NAME, COL_LAUNCHES, COL_RATE, COL_DIMS, COL_SHARE, COL_COUNT };

static const struct tui_column kernel_cols[COL_COUNT] = {
	[COL_NAME] = { "KERNEL", 0, false, SORT_TEXT, false },
	[COL_LAUNCHES] = { "LAUNCHES", 8, true, SORT_NUM, true },
	[COL_RATE] = { "PER SEC", 8, true, SORT_NUM, true },
	[COL_DIMS] = { "GRID x BLOCK", 18, false, SORT_NONE, false },
	[COL_SHARE] = { "SHARE", 6, true, SORT_NUM, true },
};

/* "(x,y,z)", or "?" when the launch did not say. */
static void kernel_dim3(char *buf, size_t n, const uint32_t d[3])
{
	if (!d[0])
		snprintf(buf, n, "?");
	else if (d[1] == 1 && d[2] == 1)
		snprintf(buf, n, "%u", d[0]);
	else
		snprintf(buf, n, "(%u,%u,%u)", d[0], d[1], d[2]);
}

static uint64_t kernel_delta(const struct tui_frame *f, const struct stats_kernel *k)
{
	size_t id = (size_t)(k - f->cur->kernel);
	uint64_t before = f->prev && id < f->prev->n_kernel ? f->prev->kernel[id].launches : 0;

	return tui_delta(k->launches, before);
}

static void kernel_cells(const struct tui_frame *f, const struct tui_row *row,
			 char cell[][TUI_CELL])
{
	const struct stats_kernel *k = row->item;
	char grid[48], block[48], share[FMT_LEN];

	snprintf(cell[COL_NAME], TUI_CELL, "%s", k->name ? k->name : "?");
	tui_launch_count(cell[COL_LAUNCHES], TUI_CELL, k->launches, f->estimated);
	tui_per_sec(cell[COL_RATE], TUI_CELL, kernel_delta(f, k), tui_interval_ns(f), f->estimated);
	if (!k->grid[0] && !k->block[0]) {
		snprintf(cell[COL_DIMS], TUI_CELL, "%s", fmt_dash());
	} else {
		kernel_dim3(grid, sizeof(grid), k->grid);
		kernel_dim3(block, sizeof(block), k->block);
		snprintf(cell[COL_DIMS], TUI_CELL, "%s %s %s", grid, fmt_times(), block);
	}
	fmt_percent(share, sizeof(share), k->launches, f->cur->launches);
	snprintf(cell[COL_SHARE], TUI_CELL, "%s%s", f->estimated && f->cur->launches ? "~" : "",
		 share);
}

static void kernels_draw(WINDOW *w, struct tui_rect r, const struct tui_frame *f,
			 struct tui_view_state *vs)
{
	const struct stats_snapshot *s = f->cur;
	struct tui_row *rows = calloc(s->n_kernel ? s->n_kernel : 1, sizeof(*rows));
	uint64_t ns = tui_interval_ns(f);
	size_t n = 0;
	char total[FMT_LEN], rate[FMT_LEN], line[TUI_CELL];

	if (!rows)
		return;
	for (size_t i = 0; i < s->n_kernel; i++) {
		const struct stats_kernel *k = &s->kernel[i];
		struct tui_row *row = &rows[n];

		if (!k->launches)
			continue;
		row->item = k;
		row->name = k->name ? k->name : "?";
		row->key[COL_LAUNCHES] = (double)k->launches;
		row->key[COL_RATE] = ns ? (double)kernel_delta(f, k) * 1e9 / (double)ns : 0;
		row->key[COL_SHARE] = (double)k->launches;
		row->tie = i;
		n++;
	}
	tui_launch_count(total, sizeof(total), s->launches, f->estimated);
	tui_per_sec(rate, sizeof(rate), tui_delta(s->launches, f->prev ? f->prev->launches : 0), ns,
		    f->estimated);
	snprintf(line, sizeof(line), "%zu kernels, %s launches, %s per second%s", n, total, rate,
		 f->estimated ? " (estimated: --max-overhead samples launches)" : "");
	tui_put(w, r.y, r.x, r.w, tui_attr(f->estimated ? TC_WARN : TC_LABEL), line);
	r.y += 2;
	r.h -= 2;
	tui_table_draw(w, r, &view_kernels, vs, f, rows, n, kernel_cells);
	free(rows);
}

const struct tui_view view_kernels = {
	.name = "Kernels", .key = 'k', .cols = kernel_cols, .n_cols = COL_COUNT,
	.default_sort = COL_LAUNCHES, .empty = "no kernel launched yet", .draw = kernels_draw,
};
