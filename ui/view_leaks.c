/* view_leaks.c — the Leaks view: every live allocation (address, size, kind, API, device,
 * thread, age), largest or oldest first, with the totals on top. An allocation that stays
 * here while the program runs on is the leak to look at. Draws from snapshots only. */
#include "tui.h"
#include "table.h"
#include "crt.h"
#include "cuda_api.h"
#include "format.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

enum { COL_ADDR, COL_SIZE, COL_KIND, COL_API, COL_DEV, COL_TID, COL_AGE, COL_COUNT };

static const struct tui_column leak_cols[COL_COUNT] = {
	[COL_ADDR] = { "ADDRESS", 16, false, SORT_NUM, false },
	[COL_SIZE] = { "SIZE", 10, true, SORT_NUM, true },
	[COL_KIND] = { "KIND", 7, false, SORT_NUM, false },
	[COL_API] = { "API", 22, false, SORT_TEXT, false },
	[COL_DEV] = { "DEV", 3, true, SORT_NUM, false },
	[COL_TID] = { "THREAD", 8, true, SORT_NUM, false },
	[COL_AGE] = { "AGE", 7, true, SORT_NUM, true },
};

static void leak_cells(const struct tui_frame *f, const struct tui_row *row, char cell[][TUI_CELL])
{
	const struct stats_alloc *a = row->item;

	snprintf(cell[COL_ADDR], TUI_CELL, "%s", row->name_buf);
	fmt_bytes(cell[COL_SIZE], TUI_CELL, a->bytes);
	snprintf(cell[COL_KIND], TUI_CELL, "%s", a->kind < MEM_KIND_COUNT ? mem_kind_name[a->kind] : "?");
	snprintf(cell[COL_API], TUI_CELL, "%s", row->name);
	if (a->device >= 0)
		snprintf(cell[COL_DEV], TUI_CELL, "%d", a->device);
	else
		snprintf(cell[COL_DEV], TUI_CELL, "%s", fmt_dash());
	snprintf(cell[COL_TID], TUI_CELL, "%d", (int)a->tid);
	fmt_age(cell[COL_AGE], TUI_CELL, f->cur->t_ns >= a->t_ns ? f->cur->t_ns - a->t_ns : 0);
}

/* "Live: 40.0 MiB on device in 5 allocations (peak 42.0 MiB); 1.00 MiB pinned host". */
static void leaks_totals(WINDOW *w, struct tui_rect r, const struct stats_snapshot *s)
{
	char dev[FMT_LEN], peak[FMT_LEN], host[FMT_LEN], managed[FMT_LEN], line[TUI_CELL];

	fmt_bytes(dev, sizeof(dev), s->live_bytes[MEM_DEVICE]);
	fmt_bytes(managed, sizeof(managed), s->live_bytes[MEM_MANAGED]);
	fmt_bytes(peak, sizeof(peak), s->peak_device_bytes);
	fmt_bytes(host, sizeof(host), s->live_bytes[MEM_HOST]);
	snprintf(line, sizeof(line), "Live: %" PRIu64 " allocations; %s device, %s managed "
		 "(peak %s), %s pinned host", s->live_count, dev, managed, peak, host);
	tui_put(w, r.y, r.x, r.w, tui_attr(s->live_count ? TC_WARN : TC_LABEL), line);
	snprintf(line, sizeof(line), "Since start: %" PRIu64 " allocations, %" PRIu64 " frees",
		 s->allocs, s->frees);
	tui_put(w, r.y + 1, r.x, r.w, tui_attr(TC_DIM), line);
}

static void leaks_draw(WINDOW *w, struct tui_rect r, const struct tui_frame *f,
		       struct tui_view_state *vs)
{
	const struct stats_snapshot *s = f->cur;
	struct tui_row *rows = calloc(s->n_alloc ? s->n_alloc : 1, sizeof(*rows));

	if (!rows)
		return;
	for (size_t i = 0; i < s->n_alloc; i++) {
		const struct stats_alloc *a = &s->alloc[i];
		const struct api_spec *spec = cuda_api_get(a->api);
		struct tui_row *row = &rows[i];

		row->item = a;
		row->name = spec ? spec->name : "?";
		snprintf(row->name_buf, sizeof(row->name_buf), "0x%" PRIx64, a->addr);
		row->key[COL_ADDR] = (double)a->addr;
		row->key[COL_SIZE] = (double)a->bytes;
		row->key[COL_KIND] = a->kind;
		row->key[COL_DEV] = a->device;
		row->key[COL_TID] = a->tid;
		row->key[COL_AGE] = s->t_ns >= a->t_ns ? (double)(s->t_ns - a->t_ns) : 0;
		row->tie = a->addr;
	}
	leaks_totals(w, r, s);
	r.y += 3;
	r.h -= 3;
	tui_table_draw(w, r, &view_leaks, vs, f, rows, s->n_alloc, leak_cells);
	free(rows);
}

const struct tui_view view_leaks = {
	.name = "Leaks", .key = 'l', .cols = leak_cols, .n_cols = COL_COUNT,
	.default_sort = COL_SIZE, .empty = "no live allocation", .draw = leaks_draw,
};
