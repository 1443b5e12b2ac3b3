/* view_api.c — the API view: one row per CUDA function called, with calls, errors and the
 * name of the last one, time inside the calls and calls per second over the last interval.
 * Draws from snapshots only. */
#include "tui.h"
#include "table.h"
#include "crt.h"
#include "cuda_api.h"
#include "format.h"

#include <stdio.h>
#include <stdlib.h>

enum { COL_NAME, COL_CALLS, COL_RATE, COL_ERRORS, COL_LAST, COL_TIME, COL_AVG, COL_COUNT };

static const struct tui_column api_cols[COL_COUNT] = {
	[COL_NAME] = { "FUNCTION", 0, false, SORT_TEXT, false },
	[COL_CALLS] = { "CALLS", 8, true, SORT_NUM, true },
	[COL_RATE] = { "PER SEC", 8, true, SORT_NUM, true },
	[COL_ERRORS] = { "ERRORS", 7, true, SORT_NUM, true },
	[COL_LAST] = { "LAST ERROR", 26, false, SORT_NONE, false },
	[COL_TIME] = { "TIME", 9, true, SORT_NUM, true },
	[COL_AVG] = { "AVG", 9, true, SORT_NUM, true },
};

static int api_index(const struct tui_frame *f, const struct stats_api *a)
{
	return (int)(a - f->cur->api);
}

static uint64_t api_delta(const struct tui_frame *f, const struct stats_api *a)
{
	size_t i = (size_t)api_index(f, a);
	uint64_t before = f->prev && i < f->prev->n_api ? f->prev->api[i].calls : 0;

	return tui_delta(a->calls, before);
}

static void api_last_error(char *buf, size_t n, const struct api_spec *spec, int code)
{
	const char *name = spec ? cuda_error_name(spec->layer, code) : NULL;

	if (!code)
		snprintf(buf, n, "%s", fmt_dash());
	else if (name)
		snprintf(buf, n, "%s", name);
	else
		snprintf(buf, n, "error %d", code);
}

static void api_cells(const struct tui_frame *f, const struct tui_row *row, char cell[][TUI_CELL])
{
	const struct stats_api *a = row->item;
	const struct api_spec *spec = cuda_api_get(api_index(f, a));

	/* Launch calls are what --max-overhead extrapolates. */
	bool est = f->estimated && spec && spec->op == OP_LAUNCH;

	snprintf(cell[COL_NAME], TUI_CELL, "%s", row->name);
	tui_launch_count(cell[COL_CALLS], TUI_CELL, a->calls, est);
	tui_per_sec(cell[COL_RATE], TUI_CELL, api_delta(f, a), tui_interval_ns(f), est);
	if (!a->returns_seen) {		/* entry-only probe: errors and time are not known */
		for (int c = COL_ERRORS; c < COL_COUNT; c++)
			snprintf(cell[c], TUI_CELL, "%s", fmt_dash());
		return;
	}
	fmt_count(cell[COL_ERRORS], TUI_CELL, a->errors);
	api_last_error(cell[COL_LAST], TUI_CELL, spec, a->last_error);
	fmt_duration(cell[COL_TIME], TUI_CELL, a->ns);
	fmt_duration(cell[COL_AVG], TUI_CELL, a->calls ? a->ns / a->calls : 0);
}

static void api_draw(WINDOW *w, struct tui_rect r, const struct tui_frame *f,
		     struct tui_view_state *vs)
{
	const struct stats_snapshot *s = f->cur;
	struct tui_row *rows = calloc(s->n_api ? s->n_api : 1, sizeof(*rows));
	uint64_t ns = tui_interval_ns(f), calls = 0, errors = 0, delta = 0;
	size_t n = 0;
	char c[FMT_LEN], e[FMT_LEN], rate[FMT_LEN], line[TUI_CELL];

	if (!rows)
		return;
	for (size_t i = 0; i < s->n_api; i++) {
		const struct stats_api *a = &s->api[i];
		const struct api_spec *spec = cuda_api_get((int)i);
		struct tui_row *row = &rows[n];

		if (!a->calls)
			continue;
		calls += a->calls;
		errors += a->errors;
		delta += api_delta(f, a);
		row->item = a;
		row->name = spec ? spec->name : "?";
		row->key[COL_CALLS] = (double)a->calls;
		row->key[COL_RATE] = ns ? (double)api_delta(f, a) * 1e9 / (double)ns : 0;
		row->key[COL_ERRORS] = (double)a->errors;
		row->key[COL_TIME] = (double)a->ns;
		row->key[COL_AVG] = a->calls ? (double)a->ns / (double)a->calls : 0;
		row->tie = i;
		n++;
	}
	tui_launch_count(c, sizeof(c), calls, f->estimated);
	fmt_count(e, sizeof(e), errors);
	tui_per_sec(rate, sizeof(rate), delta, ns, f->estimated);
	snprintf(line, sizeof(line), "%zu functions called, %s calls (%s per second), %s errors", n,
		 c, rate, e);
	tui_put(w, r.y, r.x, r.w, tui_attr(errors ? TC_WARN : TC_LABEL), line);
	r.y += 2;
	r.h -= 2;
	tui_table_draw(w, r, &view_api, vs, f, rows, n, api_cells);
	free(rows);
}

const struct tui_view view_api = {
	.name = "API", .key = 'a', .cols = api_cols, .n_cols = COL_COUNT,
	.default_sort = COL_CALLS, .empty = "no CUDA call traced yet", .draw = api_draw,
};
