/* view_comm.c — the Communication view (c): NCCL's operations per process and rank (calls,
 * bytes as the calls were given them, rate over the last interval, time inside the calls),
 * and under them the GPU x GPU matrix of bytes moved by peer copies and ncclSend. Draws the
 * frame's rows (rows.h) with their cells (cells.h) only. */
#include "tui.h"
#include "table.h"
#include "cells.h"
#include "crt.h"
#include "format.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

enum { COL_RANK, COL_OP, COL_CALLS, COL_BYTES, COL_RATE, COL_TIME, COL_PID, COL_COUNT };

static const struct tui_column comm_cols[COL_COUNT] = {
	[COL_PID] = { "PID", 9, true, SORT_NUM, false, true, .prio = 8 },
	[COL_RANK] = { "RANK", 7, true, SORT_NUM, false, .prio = 8, .sparse = true },
	[COL_OP] = { "OPERATION", 0, false, SORT_TEXT, false, .prio = 6 },
	[COL_CALLS] = { "CALLS", 9, true, SORT_NUM, true, .prio = 8 },
	[COL_BYTES] = { "BYTES", 11, true, SORT_NUM, true, .prio = 9 },
	[COL_RATE] = { "RATE", 11, true, SORT_NUM, true, .prio = 5 },
	[COL_TIME] = { "TIME", 10, true, SORT_NUM, true, .prio = 7 },
};

#define MATRIX_CELL 11	/* "1023.9 MiB" and a space */

static void comm_cells(const struct tui_frame *f, const struct tui_row *row, char cell[][TUI_CELL])
{
	struct cells_coll c;

	cells_coll(&c, row->item, f->rows);
	snprintf(cell[COL_PID], TUI_CELL, "%s", c.process);
	snprintf(cell[COL_RANK], TUI_CELL, "%s", c.rank);
	snprintf(cell[COL_OP], TUI_CELL, "%s", c.op);
	snprintf(cell[COL_CALLS], TUI_CELL, "%s", c.calls);
	snprintf(cell[COL_BYTES], TUI_CELL, "%s", c.bytes);
	snprintf(cell[COL_RATE], TUI_CELL, "%s", c.rate);
	snprintf(cell[COL_TIME], TUI_CELL, "%s", c.time);
}

/* The devices of the matrix, in order, "not known" (-1) last. */
static int matrix_devices(const struct rows *rs, int *dev)
{
	bool seen[COMM_DEV_SLOTS] = { false };
	int n = 0;
	for (size_t i = 0; i < rs->n_p2p; i++) {
		seen[comm_dev_slot(rs->p2p[i].src)] = true;
		seen[comm_dev_slot(rs->p2p[i].dst)] = true;
	}
	for (int d = 0; d < COMM_DEV_SLOTS; d++)
		if (seen[d])
			dev[n++] = d == COMM_DEV_UNKNOWN ? -1 : d;
	return n;
}

/* Bytes from the row's GPU (FROM) to the column's (TO); the dash where nothing moved. */
static void matrix_draw(WINDOW *w, struct tui_rect r, const struct rows *rs, const int *dev, int n)
{
	char line[TUI_CELL], cell[FMT_LEN], name[16], title[24];
	int len;

	len = snprintf(line, sizeof(line), "%-10s", "FROM \\ TO");
	for (int j = 0; j < n && len < (int)sizeof(line) - MATRIX_CELL; j++) {
		cells_gpu(name, sizeof(name), dev[j]);
		snprintf(title, sizeof(title), "GPU%s", name);
		len += snprintf(line + len, sizeof(line) - (size_t)len, "%*s", MATRIX_CELL, title);
	}
	tui_put(w, r.y, r.x, r.w, tui_attr(TC_TITLE), line);
	for (int i = 0; i < n && i + 1 < r.h; i++) {
		cells_gpu(name, sizeof(name), dev[i]);
		len = snprintf(line, sizeof(line), "GPU%-7s", name);
		for (int j = 0; j < n && len < (int)sizeof(line) - MATRIX_CELL; j++) {
			const struct row_p2p *p = NULL;
			for (size_t k = 0; k < rs->n_p2p && !p; k++)
				if (rs->p2p[k].src == dev[i] && rs->p2p[k].dst == dev[j])
					p = &rs->p2p[k];
			if (p)
				fmt_bytes(cell, sizeof(cell), p->total.bytes);
			else
				snprintf(cell, sizeof(cell), "%s", fmt_dash());
			len += snprintf(line + len, sizeof(line) - (size_t)len, "%*s", MATRIX_CELL, cell);
		}
		tui_put(w, r.y + 1 + i, r.x, r.w, tui_attr(TC_NORMAL), line);
	}
}

static void comm_totals(WINDOW *w, struct tui_rect r, const struct rows *rs)
{
	uint64_t calls = 0, bytes = 0, moved = 0;
	char b[FMT_LEN], m[FMT_LEN], line[TUI_CELL];

	for (size_t i = 0; i < rs->n_coll_total; i++) {
		calls += rs->coll_total[i].total.calls;
		bytes += rs->coll_total[i].total.bytes;
	}
	for (size_t i = 0; i < rs->n_p2p; i++)
		moved += rs->p2p[i].total.bytes;
	fmt_bytes(b, sizeof(b), bytes);
	fmt_bytes(m, sizeof(m), moved);
	snprintf(line, sizeof(line), "NCCL: %" PRIu64 " calls, %s; %zu communicator(s); P2P: %s between GPUs", calls,
		 b, rs->n_comm, m);
	tui_put(w, r.y, r.x, r.w, tui_attr(TC_LABEL), line);
}

static void comm_draw(WINDOW *w, struct tui_rect r, const struct tui_frame *f, struct tui_view_state *vs)
{
	const struct rows *rs = f->rows;
	struct tui_row *rows = calloc(rs->n_coll ? rs->n_coll : 1, sizeof(*rows));
	int dev[COMM_DEV_SLOTS], n_dev = matrix_devices(rs, dev);

	if (!rows)
		return;
	for (size_t i = 0; i < rs->n_coll; i++) {
		const struct row_coll *c = &rs->coll[i];
		struct tui_row *row = &rows[i];

		row->item = c;
		row->name = c->name;
		row->key[COL_PID] = (double)c->pid;
		row->key[COL_RANK] = c->rank >= 0 ? c->rank : 1e9;
		row->key[COL_CALLS] = (double)c->total.calls;
		row->key[COL_BYTES] = (double)c->total.bytes;
		row->key[COL_RATE] = (double)c->delta.bytes;
		row->key[COL_TIME] = (double)c->total.ns;
		row->tie = i;
	}
	comm_totals(w, r, rs);
	r.y += 2;
	r.h -= 2;
	int matrix_h = n_dev ? n_dev + 2 : 0;
	if (matrix_h > r.h / 2)
		matrix_h = r.h / 2;
	struct tui_rect table = { r.y, r.x, r.h - matrix_h, r.w };
	tui_table_draw(w, table, &view_comm, vs, f, rows, rs->n_coll, comm_cells);
	if (matrix_h >= 3) {
		struct tui_rect m = { r.y + table.h + 1, r.x, matrix_h - 1, r.w };
		matrix_draw(w, m, rs, dev, n_dev);
	}
	free(rows);
}

const struct tui_view view_comm = {
	.name = "Comm", .key = 'c', .cols = comm_cols, .n_cols = COL_COUNT,
	.default_sort = COL_RANK, .empty = "no NCCL call yet", .draw = comm_draw,
};
