/* view_kernels.c — the Kernels view: one row per kernel name (demangled), its direct launches
 * and its executions as a node of launched CUDA graphs apart, executions per second over the last
 * interval, the last grid x block, and its share of all executions. IN GRAPHS shows once the
 * program launched a graph; GPU TIME, AVG, MIN and MAX (and a GPU busy line) with --gpu-time.
 * Draws the frame's rows (rows.h) with their cells (cells.h) only. */
#include "tui.h"
#include "table.h"
#include "cells.h"
#include "crt.h"
#include "format.h"
#include "stack_pane.h"

#include <stdio.h>
#include <stdlib.h>

enum { COL_NAME, COL_LAUNCHES, COL_GRAPH, COL_RATE, COL_GPU_TOTAL, COL_GPU_AVG, COL_GPU_MIN, COL_GPU_MAX,
       COL_DIMS, COL_SHARE, COL_PID, COL_COUNT };

static const struct tui_column kernel_cols[COL_COUNT] = {
	[COL_PID] = { "PID", 9, true, SORT_NUM, false, true, .prio = 8 },
	[COL_NAME] = { "KERNEL", 0, false, SORT_TEXT, false, .prio = 6 },
	[COL_LAUNCHES] = { "LAUNCHES", 8, true, SORT_NUM, true, .prio = 9, .sparse = true },
	[COL_GRAPH] = { "IN GRAPHS", 9, true, SORT_NUM, true, .prio = 8, .sparse = true },
	[COL_RATE] = { "PER SEC", 8, true, SORT_NUM, true, .prio = 7 },
	[COL_GPU_TOTAL] = { "GPU TIME", 9, true, SORT_NUM, true, .prio = 8, .sparse = true },
	[COL_GPU_AVG] = { "GPU AVG", 9, true, SORT_NUM, true, .prio = 5, .sparse = true },
	[COL_GPU_MIN] = { "GPU MIN", 9, true, SORT_NUM, true, .prio = 2, .sparse = true },
	[COL_GPU_MAX] = { "GPU MAX", 9, true, SORT_NUM, true, .prio = 3, .sparse = true },
	[COL_DIMS] = { "GRID x BLOCK", 18, false, SORT_NONE, false, .prio = 2, .sparse = true },
	[COL_SHARE] = { "SHARE", 6, true, SORT_NUM, true, .prio = 4 },
};

static void kernel_cells(const struct tui_frame *f, const struct tui_row *row,
			 char cell[][TUI_CELL])
{
	struct cells_kernel c;

	cells_kernel(&c, row->item, f->rows, f->estimated);
	snprintf(cell[COL_PID], TUI_CELL, "%s", c.process);
	snprintf(cell[COL_NAME], TUI_CELL, "%s", c.name);
	snprintf(cell[COL_LAUNCHES], TUI_CELL, "%s", c.launches);
	snprintf(cell[COL_GRAPH], TUI_CELL, "%s", c.graph);
	snprintf(cell[COL_RATE], TUI_CELL, "%s", c.rate);
	snprintf(cell[COL_DIMS], TUI_CELL, "%s", c.dims);
	snprintf(cell[COL_GPU_TOTAL], TUI_CELL, "%s", c.gpu_total);
	snprintf(cell[COL_GPU_AVG], TUI_CELL, "%s", c.gpu_avg);
	snprintf(cell[COL_GPU_MIN], TUI_CELL, "%s", c.gpu_min);
	snprintf(cell[COL_GPU_MAX], TUI_CELL, "%s", c.gpu_max);
	snprintf(cell[COL_SHARE], TUI_CELL, "%s", c.share);
}

static void kernels_draw(WINDOW *w, struct tui_rect r, const struct tui_frame *f,
			 struct tui_view_state *vs)
{
	const struct rows *rs = f->rows;
	struct tui_row *rows = calloc(rs->n_kernel ? rs->n_kernel : 1, sizeof(*rows));
	char total[FMT_LEN], rate[FMT_LEN], graph[FMT_LEN], graphs[FMT_LEN], graph_part[2 * FMT_LEN + 32], line[TUI_CELL];

	if (!rows)
		return;
	for (size_t i = 0; i < rs->n_kernel; i++) {
		const struct row_kernel *k = &rs->kernel[i];
		struct tui_row *row = &rows[i];

		row->item = k;
		row->name = k->name ? k->name : "?";
		row->key[COL_PID] = (double)k->pid;
		row->key[COL_LAUNCHES] = (double)k->launches;
		row->key[COL_GRAPH] = (double)k->graph_launches;
		row->key[COL_RATE] = rows_per_sec(k->launches_delta + k->graph_launches_delta, rs->interval_ns);
		row->key[COL_SHARE] = (double)(k->launches + k->graph_launches);
		row->key[COL_GPU_TOTAL] = (double)k->gpu.total_ns;
		row->key[COL_GPU_AVG] = k->gpu.count ? (double)k->gpu.total_ns / (double)k->gpu.count : 0;
		row->key[COL_GPU_MIN] = (double)k->gpu.min_ns;
		row->key[COL_GPU_MAX] = (double)k->gpu.max_ns;
		row->tie = (uint64_t)k->id;
		row->select = (uint64_t)(uintptr_t)k->name;	/* Enter: its launch sites (by name) */
	}
	cells_launch_count(total, sizeof(total), rs->launches, f->estimated);
	cells_per_sec(rate, sizeof(rate), rs->launches_delta + rs->graph_kernel_runs_delta, rs->interval_ns,
		      f->estimated);
	graph_part[0] = '\0';
	if (rs->graph_launches) {	/* the kernel runs of CUDA graph launches */
		fmt_count(graph, sizeof(graph), rs->graph_kernel_runs);
		fmt_count(graphs, sizeof(graphs), rs->graph_launches);
		snprintf(graph_part, sizeof(graph_part), ", %s in %s graph launches", graph, graphs);
	}
	snprintf(line, sizeof(line), "%zu kernels, %s launches%s, %s per second%s", rs->n_kernel, total,
		 graph_part, rate, f->estimated ? " (estimated: --max-overhead samples launches)" : "");
	tui_put(w, r.y, r.x, r.w, tui_attr(f->estimated ? TC_WARN : TC_LABEL), line);
	cells_gpu_busy(line, sizeof(line), rs);	/* --gpu-time */
	if (line[0]) {
		tui_put(w, r.y + 1, r.x, r.w, tui_attr(TC_LABEL), line);
		r.y++;
		r.h--;
	}
	r.y += 2;
	r.h -= 2;
	vs->hidden = rs->graph_launches ? 0 : 1u << COL_GRAPH;	/* no CUDA graph, no column */
	if (!rs->gpu.on)	/* no --gpu-time, no GPU columns */
		vs->hidden |= 1u << COL_GPU_TOTAL | 1u << COL_GPU_AVG | 1u << COL_GPU_MIN | 1u << COL_GPU_MAX;
	tui_table_draw(w, r, &view_kernels, vs, f, rows, rs->n_kernel, kernel_cells);
	free(rows);
}

const struct tui_view view_kernels = {
	.name = "Kernels", .key = 'k', .cols = kernel_cols, .n_cols = COL_COUNT,
	.default_sort = COL_LAUNCHES, .empty = "no kernel launched yet", .draw = kernels_draw,
	.details = PANE_LAUNCH_SITES + 1,
};
