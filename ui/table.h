/* table.h — the table most views draw with: it filters rows by the view's filter, sorts them
 * by the chosen column, scrolls, leaves out the least important columns where the width is
 * short (those with nothing in them first) and marks the sort column.
 * Views fill the rows and format the cells; the table lays them out, draws them and handles
 * the keys that move through them (the cursor, the names sideways, the sort). */
#ifndef GPUTOP_TABLE_H
#define GPUTOP_TABLE_H

#include <curses.h>
#include <stddef.h>
#include <stdint.h>

#include "keys.h"
#include "tui.h"

/* One row of a table: views fill key[] and name, then format cells of visible rows only.
 * Rows are moved while filtering and sorting: nothing may point into a row. */
struct tui_row {
	const void *item;		/* the view's own record (in the snapshot) */
	const char *name;		/* SORT_TEXT key and the filter's subject; NULL: name_buf */
	char name_buf[48];		/* a name the view formats itself; with name set, a second
					 * subject for the filter (e.g. an address) */
	double key[TUI_COLS_MAX];	/* SORT_NUM keys by column */
	uint64_t tie;			/* last resort of the order, so that rows never swap */
	uint64_t select;		/* what Enter opens for it (tui_view.details); 0: none */
};

static inline const char *tui_row_name(const struct tui_row *r)
{
	return r->name ? r->name : r->name_buf;
}

typedef void tui_cells_fn(const struct tui_frame *f, const struct tui_row *row,
			  char cell[][TUI_CELL]);

/* Filters, sorts and draws rows in r (titles on the first line), the selected row (the
 * cursor, vs->cursor: found again by its tie once a key chose it) in reverse video and shown,
 * scrolled by vs->scroll, which it clamps; sets vs->rows, vs->page and vs->selected (the
 * selected row's select). Says v->empty when nothing is left. */
void tui_table_draw(WINDOW *w, struct tui_rect r, const struct tui_view *v,
		    struct tui_view_state *vs, const struct tui_frame *f, struct tui_row *rows,
		    size_t n, tui_cells_fn *cells);

/* The keys a table handles itself (keys.h): the cursor and the names sideways (ch says which
 * way), the next sort column or the one before ('<'), the reverse order. Returns false for any
 * other action, when the sort did not change, or for Left/Right in a table without names. */
bool tui_table_key(const struct tui_view *v, struct tui_view_state *vs, enum tui_action a,
		   int ch);

#endif
