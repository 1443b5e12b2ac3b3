/* tui.h — the TUI's view interface: what every view (view_*.c) gets to draw from. screen.c
 * lays the screen out and calls a view's draw function with a window, a rectangle and a
 * frame; views only draw, with the table (table.h), the text of the rows' cells (cells.h)
 * and the terminal's text and colors (crt.h). */
#ifndef GPUTOP_TUI_H
#define GPUTOP_TUI_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices.h"
#include "history.h"
#include "rows.h"
#include "session_state.h"
#include "stats.h"

#define TUI_COLS_MAX	12	/* columns of one table (the Kernels view with --gpu-time: 11) */
#define TUI_CELL	256	/* bytes of one formatted cell */
#define TUI_FILTER_LEN	64

struct job_live;

struct tui_rect {
	int y, x, h, w;
};

enum tui_sort_kind {
	SORT_NONE,		/* this column cannot be sorted on */
	SORT_NUM,		/* by the row's key[column] */
	SORT_TEXT,		/* by the row's name */
};

struct tui_column {
	const char *title;
	int width;		/* 0: the flexible column, which takes the room left */
	bool right;		/* right-aligned (figures) */
	unsigned char sort;	/* enum tui_sort_kind */
	bool desc;		/* natural order is largest first ('r' reverses it) */
	bool multi;		/* shown only when several processes are traced (PID) */
	unsigned char prio;	/* 1-9: where the width is short, the lowest goes first */
	bool sparse;		/* often has nothing ("0", the dash): where the width is short and no
				 * row has a figure in it, it goes before any other */
};

/* What the user chose for one view; kept while switching views. */
struct tui_view_state {
	int scroll;			/* first table row shown */
	int cursor;			/* the selected row, by its place in the rows as drawn */
	uint64_t cursor_row;		/* ... and which row it is (struct tui_row.tie) */
	bool cursor_chosen;		/* a key moved it off the top: it stays on that row when the
					 * order changes (else on the top row) */
	bool cursor_moved;		/* a key moved it since the last draw: the place counts */
	int hscroll;			/* columns of the names scrolled off to the left (Left/Right) */
	int sort;			/* index of the sort column */
	bool reverse;
	char filter[TUI_FILTER_LEN];	/* case-insensitive substring of the row's name; "" = all */
	int rows, page;			/* set by the draw: rows after filtering, rows visible */
	bool several;			/* set by the draw: several processes are traced */
	uint32_t hidden;		/* set by the view: columns it does not show now (bit =
					 * column index; e.g. Kernels' IN GRAPHS without graphs) */
	uint64_t selected;		/* set by the draw: what Enter opens, the selected row's
					 * (struct tui_row.select); 0: nothing */
};

/* Everything a view draws from, for one refresh. */
struct tui_frame {
	const struct stats_snapshot *cur;	/* what to show: totals of the header lines */
	const struct stats_snapshot *prev;	/* the one before: its process list's figures */
	const struct rows *rows;		/* its rows, interval figures since the refresh
						 * before */
	const struct session_status *st;
	const struct history *hist;
	bool estimated;				/* launch figures are estimates: prefix "~" */
	const struct devices_snapshot *dev;	/* what the GPUs say (NVML) */
	struct job_live *job_live;		/* the live picture of the job (the Job view) */
};

struct tui_view {
	const char *name;		/* "Kernels" */
	int key;			/* 'k': must be a key of keys.c's ACT_VIEW row */
	const struct tui_column *cols;
	int n_cols;
	int default_sort;
	const char *empty;		/* what a table with no rows says */
	void (*draw)(WINDOW *w, struct tui_rect r, const struct tui_frame *f,
		     struct tui_view_state *vs);
	/* Enter: what the selected row came from, as call stacks (stack_pane.h); 0: nothing. */
	int details;			/* enum stack_pane_kind + 1; 0: none */
	const struct tui_view *grouped;	/* g: the same figures grouped (Leaks by site); NULL */
};

#define VIEW(v) extern const struct tui_view v;	/* the tabs' views, in Tab order */
#include "views.def"
#undef VIEW
extern const struct tui_view view_leak_sites;	/* Leaks, g: by allocation site */
extern const struct tui_view view_gpus;		/* G, from any view: the figures by GPU */
extern const struct tui_view view_memory_lines;	/* Memory, g: by the line that allocated them */

#endif
