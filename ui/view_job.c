/* view_job.c — the Job view (j): where every rank is now, one row per traced process — its
 * rank, the call in flight its threads entered first (else its Python line) and for how long,
 * its collectives since the attach, its wait share over the last seconds and the odd-one-out
 * marks with their reason — from the live picture of the job (figures/job_live.h), which the
 * tracer takes without a stop. Enter: the process's threads, each one's call and stack. */
#include "tui.h"
#include "table.h"
#include "cells.h"
#include "crt.h"
#include "cuda_api.h"
#include "format.h"
#include "job_live.h"
#include "stack_pane.h"

#include <stdio.h>
#include <stdlib.h>

enum { COL_RANK, COL_PID, COL_NOW, COL_AGE, COL_COLL, COL_WAIT, COL_ODD, COL_COUNT };

static const struct tui_column job_cols[COL_COUNT] = {
	[COL_RANK] = { "RANK", 6, true, SORT_NUM, false, .prio = 9 },
	[COL_PID] = { "PID", 8, true, SORT_NUM, false, .prio = 7 },
	[COL_NOW] = { "NOW", 0, false, SORT_TEXT, false, .prio = 8 },
	[COL_AGE] = { "FOR", 7, true, SORT_NUM, true, .prio = 6, .sparse = true },
	[COL_COLL] = { "COLLS", 8, true, SORT_NUM, true, .prio = 7 },
	[COL_WAIT] = { "WAIT", 5, true, SORT_NUM, true, .prio = 8 },
	[COL_ODD] = { "ODD ONE OUT", 30, false, SORT_NUM, true, .prio = 9, .sparse = true },
};

static void job_cells(const struct tui_frame *f, const struct tui_row *row, char cell[][TUI_CELL])
{
	struct cells_job c;
	(void)f;
	cells_job(&c, row->item);
	snprintf(cell[COL_RANK], TUI_CELL, "%s", c.rank);
	snprintf(cell[COL_PID], TUI_CELL, "%s", c.process);
	snprintf(cell[COL_NOW], TUI_CELL, "%s", c.now);
	snprintf(cell[COL_AGE], TUI_CELL, "%s", c.age);
	snprintf(cell[COL_COLL], TUI_CELL, "%s", c.collectives);
	snprintf(cell[COL_WAIT], TUI_CELL, "%s", c.wait);
	snprintf(cell[COL_ODD], TUI_CELL, "%s", c.odd);
}

static void job_summary(WINDOW *w, struct tui_rect r, const struct job *j)
{
	char line[TUI_CELL];
	int odd = 0, ranks = 0;
	for (int i = 0; i < j->n; i++) {
		odd += j->proc[i].odd != 0;
		ranks += j->proc[i].cuda;
	}
	snprintf(line, sizeof line, "%d process%s, %d with CUDA; %d odd one%s out; wait share over the last %.0f s",
		 j->n, j->n == 1 ? "" : "es", ranks, odd, odd == 1 ? "" : "s", (double)JOB_LIVE_WINDOW_NS / 1e9);
	tui_put(w, r.y, r.x, r.w, tui_attr(odd ? TC_WARN : TC_LABEL), line);
}

static void job_draw(WINDOW *w, struct tui_rect r, const struct tui_frame *f, struct tui_view_state *vs)
{
	struct job *j = job_live_copy(f->job_live);
	struct tui_row *rows = calloc(j && j->n ? (size_t)j->n : 1, sizeof(*rows));
	int n = 0;
	if (!rows) {
		job_free(j);
		return;
	}
	for (int i = 0; j && i < j->n; i++) {
		const struct job_process *jp = &j->proc[i];
		const struct job_thread *t = cells_job_headline(jp);
		struct tui_row *row = &rows[n++];
		row->item = jp;
		snprintf(row->name_buf, sizeof row->name_buf, "%s", t ? cuda_api_label(cuda_api_get(t->api))
								    : jp->py_function ? jp->py_function : "");
		row->key[COL_RANK] = jp->rank >= 0 ? jp->rank : 1e9;
		row->key[COL_PID] = jp->pid;
		row->key[COL_AGE] = t ? (double)t->age_ns : -1;
		row->key[COL_COLL] = jp->position;
		row->key[COL_WAIT] = jp->wait_share;
		row->key[COL_ODD] = jp->odd;
		row->tie = (uint64_t)jp->pid;
		row->select = (uint64_t)jp->pid;	/* Enter: its threads */
	}
	if (j)
		job_summary(w, r, j);
	else
		tui_put(w, r.y, r.x, r.w, tui_attr(TC_DIM), "taking the first picture of the job");
	r.y += 2;
	r.h -= 2;
	tui_table_draw(w, r, &view_job, vs, f, rows, (size_t)n, job_cells);
	free(rows);
	job_free(j);
}

const struct tui_view view_job = {
	.name = "Job", .key = 'j', .cols = job_cols, .n_cols = COL_COUNT,
	.default_sort = COL_RANK, .empty = "no traced process yet", .draw = job_draw,
	.details = PANE_JOB_THREADS + 1,
};
