/* table.c — owns the table most views draw with (table.h): filtering by the view's filter,
 * sorting by the chosen column, scrolling, leaving out the least important columns where the
 * width is short (struct tui_column.prio, blank sparse columns first) and marking the sort
 * column, and the keys that scroll and sort it. Views fill rows and format cells; this file
 * never reads statistics. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* strcasestr, qsort_r */
#endif
#include "table.h"
#include "crt.h"
#include "format.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TABLE_GAP	1		/* blanks between table columns */
#define TABLE_FLEX_MIN	16		/* the flexible column never gets less than this */
#define TABLE_FLEX_WANT	48		/* ... and takes this much from minor columns */
#define TABLE_SCAN_MAX	4096		/* rows looked at for the layout: all, up to this */
#define TABLE_HSTEP	8		/* columns Left and Right scroll the names by */

struct table_order {
	const struct tui_view *v;
	const struct tui_view_state *vs;
};

static int table_cmp(const void *a, const void *b, void *arg)
{
	const struct tui_row *x = a, *y = b;
	const struct table_order *o = arg;
	const struct tui_column *col = &o->v->cols[o->vs->sort];
	int c = 0;

	if (col->sort == SORT_TEXT)
		c = strcasecmp(tui_row_name(x), tui_row_name(y));
	else if (col->sort == SORT_NUM && x->key[o->vs->sort] != y->key[o->vs->sort])
		c = x->key[o->vs->sort] < y->key[o->vs->sort] ? -1 : 1;
	if (col->desc)
		c = -c;
	if (o->vs->reverse)
		c = -c;
	if (!c)
		c = x->tie < y->tie ? -1 : x->tie > y->tie;
	return c;
}

static bool table_match(const struct tui_row *r, const char *filter)
{
	return !filter[0] || strcasestr(tui_row_name(r), filter) ||
	       (r->name && strcasestr(r->name_buf, filter));
}

/* A fixed column's width: never narrower than its title and the sort mark. */
static int table_col_width(const struct tui_column *c)
{
	int title = fmt_width(c->title) + 1;

	return c->width > title ? c->width : title;
}

/* A column not shown now: the view hides it, or it is shown only when several processes are
 * traced, and they are not. */
static bool table_hidden(const struct tui_view *v, const struct tui_view_state *vs, int c)
{
	return (vs->hidden & (1u << c)) || (v->cols[c].multi && !vs->several);
}

/* What the rows hold, for the layout: which columns have a figure in some row, and how wide
 * the flexible column's widest cell is. */
struct table_scan {
	uint32_t filled;	/* bit = column index */
	int flex_w;
};

/* Nothing to show: "", "0" or the dash ("~" aside). */
static bool table_blank(const char *s)
{
	if (*s == '~')
		s++;
	return !*s || !strcmp(s, "0") || !strcmp(s, "-") || !strcmp(s, fmt_dash());
}

/* Rows from..from+count (the rows shown, or all of them where they are not too many); none
 * where the layout does not depend on them (no names, no sparse column: Leaks' thousands). */
static void table_scan(const struct tui_view *v, const struct tui_frame *f, const struct tui_row *rows,
		       int from, int count, tui_cells_fn *cells, struct table_scan *sc)
{
	char cell[TUI_COLS_MAX][TUI_CELL];
	bool needed = false;

	memset(sc, 0, sizeof(*sc));
	for (int c = 0; c < v->n_cols; c++)
		needed |= !v->cols[c].width || v->cols[c].sparse;
	for (int i = from; needed && i < from + count; i++) {
		for (int c = 0; c < v->n_cols; c++)
			cell[c][0] = '\0';
		cells(f, &rows[i], cell);
		for (int c = 0; c < v->n_cols; c++) {
			if (!table_blank(cell[c]))
				sc->filled |= 1u << c;
			if (!v->cols[c].width && fmt_width(cell[c]) > sc->flex_w)
				sc->flex_w = fmt_width(cell[c]);
		}
	}
}

/* The column of col[0..n) to leave out next, or -1: one with nothing in it (a sparse column
 * blank in every row), else the least important below prio (the rightmost among equals). The
 * flexible column (the names) and the sort column stay. */
static int table_drop_next(const struct tui_view *v, const struct tui_view_state *vs,
			   const struct table_scan *sc, const int *col, int n, int prio)
{
	int best = -1, best_prio = INT_MAX;

	for (int k = 0; k < n; k++) {
		const struct tui_column *c = &v->cols[col[k]];
		/* blank ones rank below every column that has something */
		int p = c->sparse && !(sc->filled & (1u << col[k])) ? -1 : c->prio;

		if (!c->width || col[k] == vs->sort || p >= prio || p > best_prio)
			continue;
		best = k;
		best_prio = p;
	}
	return best;
}

/* Which of the columns not hidden show at this width, and how wide each is. Columns go one at
 * a time (table_drop_next) until the rest fit; then the flexible column, the names, gets room
 * up to its widest cell (TABLE_FLEX_WANT at most) from blank columns and those less important
 * than it, so that a name is not cut to keep a minor figure; and no more than its widest
 * cell where the line is wider. */
static int table_layout(const struct tui_view *v, const struct tui_view_state *vs,
			const struct table_scan *sc, int width, int *col, int *w)
{
	int n = 0, flex = -1, fixed, want;

	for (int i = 0; i < v->n_cols; i++)
		if (!table_hidden(v, vs, i))
			col[n++] = i;
	for (int i = 0; i < n; i++)
		if (!v->cols[col[i]].width)
			flex = col[i];
	want = sc->flex_w < TABLE_FLEX_WANT ? sc->flex_w : TABLE_FLEX_WANT;
	for (;;) {
		int drop = -1;

		fixed = 0;
		for (int i = 0; i < n; i++)
			fixed += (i ? TABLE_GAP : 0) + (v->cols[col[i]].width ? table_col_width(&v->cols[col[i]]) : 0);
		if (fixed + (flex >= 0 ? TABLE_FLEX_MIN : 0) > width)
			drop = table_drop_next(v, vs, sc, col, n, INT_MAX);
		else if (flex >= 0 && width - fixed < want)
			drop = table_drop_next(v, vs, sc, col, n, v->cols[flex].prio);
		if (drop < 0)
			break;
		memmove(&col[drop], &col[drop + 1], (size_t)(n - drop - 1) * sizeof(*col));
		n--;
	}
	/* The names as wide as the widest (its title at least), not wider: at 200 columns the
	 * figures stay beside the names, and what is left over is blank at the end of the line. */
	int need = flex >= 0 ? table_col_width(&v->cols[flex]) : 0;
	need = sc->flex_w > need ? sc->flex_w : need;
	need = need > TABLE_FLEX_MIN ? need : TABLE_FLEX_MIN;
	for (int i = 0; i < n; i++)
		w[i] = v->cols[col[i]].width ? table_col_width(&v->cols[col[i]])
		       : width - fixed < TABLE_FLEX_MIN ? TABLE_FLEX_MIN
		       : width - fixed < need ? width - fixed : need;
	return n;
}

static void table_titles(WINDOW *w, struct tui_rect r, const struct tui_view *v,
			 const struct tui_view_state *vs, const int *col, const int *cw, int n)
{
	int x = r.x;

	tui_fill(w, r.y, r.x, r.w, tui_attr(TC_TITLE));
	for (int i = 0; i < n; i++) {
		const struct tui_column *c = &v->cols[col[i]];
		bool sorted = col[i] == vs->sort;
		bool down = c->desc != vs->reverse;
		char t[64];
		int pad;

		snprintf(t, sizeof(t), "%s%s", c->title,
			 !sorted ? "" : fmt_ascii() ? (down ? "v" : "^") : (down ? "\u25bc" : "\u25b2"));
		pad = c->right ? cw[i] - fmt_width(t) : 0;
		tui_put(w, r.y, x + (pad > 0 ? pad : 0), cw[i], tui_attr(sorted ? TC_SORTED : TC_TITLE), t);
		x += cw[i] + TABLE_GAP;
	}
}

/* The selected row: the one a key chose, wherever the order took it since, else the same
 * place (the top row until a key moves it); the rows scroll to show it. */
static void table_place_cursor(struct tui_view_state *vs, const struct tui_row *rows, int m, int page)
{
	int max = m > page ? m - page : 0;

	if (vs->cursor_chosen && !vs->cursor_moved)
		for (int i = 0; i < m; i++)
			if (rows[i].tie == vs->cursor_row) {
				vs->cursor = i;
				break;
			}
	vs->cursor = vs->cursor >= m ? m - 1 : vs->cursor;
	vs->cursor = vs->cursor < 0 ? 0 : vs->cursor;
	vs->cursor_moved = false;
	vs->cursor_row = m ? rows[vs->cursor].tie : 0;
	if (vs->cursor < vs->scroll)
		vs->scroll = vs->cursor;
	if (vs->cursor >= vs->scroll + page)
		vs->scroll = vs->cursor - page + 1;
	vs->scroll = vs->scroll < 0 ? 0 : vs->scroll > max ? max : vs->scroll;
}

/* How far the names may scroll sideways: until the widest one's end shows. */
static void table_clamp_hscroll(const struct tui_view *v, struct tui_view_state *vs,
				const struct table_scan *sc, const int *col, const int *cw, int nc)
{
	int max = 0;

	for (int c = 0; c < nc; c++)
		if (!v->cols[col[c]].width && sc->flex_w > cw[c])
			max = sc->flex_w - cw[c];
	vs->hscroll = vs->hscroll < 0 ? 0 : vs->hscroll > max ? max : vs->hscroll;
}

/* One row of cells; the selected one in reverse video all across. */
static void table_row(WINDOW *w, struct tui_rect r, int y, const struct tui_view *v,
		      const struct tui_view_state *vs, char cell[][TUI_CELL], const int *col,
		      const int *cw, int nc, bool selected)
{
	int attr = tui_attr(selected ? TC_CURSOR : TC_NORMAL), x = r.x;

	if (selected)
		tui_fill(w, y, r.x, r.w, attr);
	for (int c = 0; c < nc; c++) {
		char shifted[TUI_CELL], buf[TUI_CELL];
		const char *text = cell[col[c]];
		int pad;

		if (!v->cols[col[c]].width && vs->hscroll) {	/* Left/Right: the names sideways */
			fmt_skip(shifted, sizeof(shifted), text, vs->hscroll);
			text = shifted;
		}
		fmt_truncate(buf, sizeof(buf), text, cw[c]);
		pad = v->cols[col[c]].right ? cw[c] - fmt_width(buf) : 0;
		tui_put(w, y, x + pad, cw[c], attr, buf);
		x += cw[c] + TABLE_GAP;
	}
}

void tui_table_draw(WINDOW *w, struct tui_rect r, const struct tui_view *v,
		    struct tui_view_state *vs, const struct tui_frame *f, struct tui_row *rows,
		    size_t n, tui_cells_fn *cells)
{
	struct table_order order = { v, vs };
	struct table_scan sc;
	int col[TUI_COLS_MAX], cw[TUI_COLS_MAX], nc, page = r.h - 1;
	char cell[TUI_COLS_MAX][TUI_CELL];
	int m = 0;

	vs->several = f->cur && f->cur->n_proc > 1;
	if (r.h < 2 || r.w < 10)
		return;
	if (table_hidden(v, vs, vs->sort))	/* sorted by a column not shown now */
		vs->sort = v->default_sort;
	for (size_t i = 0; i < n; i++)
		if (table_match(&rows[i], vs->filter))
			rows[m++] = rows[i];
	qsort_r(rows, (size_t)m, sizeof(*rows), table_cmp, &order);
	table_place_cursor(vs, rows, m, page);
	vs->rows = m;
	vs->page = page;
	vs->selected = m ? rows[vs->cursor].select : 0;

	if (m <= TABLE_SCAN_MAX)
		table_scan(v, f, rows, 0, m, cells, &sc);
	else
		table_scan(v, f, rows, vs->scroll, m - vs->scroll < page ? m - vs->scroll : page, cells, &sc);
	nc = table_layout(v, vs, &sc, r.w, col, cw);
	table_clamp_hscroll(v, vs, &sc, col, cw, nc);
	table_titles(w, r, v, vs, col, cw, nc);
	if (!m) {
		char why[TUI_CELL];

		if (vs->filter[0] && n)
			snprintf(why, sizeof(why), "no row matches the filter \"%s\" (/ then Esc clears it)",
				 vs->filter);
		else
			snprintf(why, sizeof(why), "%s", v->empty);
		tui_put(w, r.y + 1, r.x + 1, r.w - 1, tui_attr(TC_DIM), why);
		return;
	}
	for (int i = 0; i < page && vs->scroll + i < m; i++) {
		for (int c = 0; c < v->n_cols; c++)
			cell[c][0] = '\0';
		cells(f, &rows[vs->scroll + i], cell);
		table_row(w, r, r.y + 1 + i, v, vs, cell, col, cw, nc, vs->scroll + i == vs->cursor);
	}
}

/* Up/Down a row, PgUp/PgDn a page (the rows with it), Home/End the first and the last. */
static void table_move(struct tui_view_state *vs, int ch)
{
	int page = vs->page > 1 ? vs->page : 1;

	switch (ch) {
	case KEY_UP: vs->cursor--; break;
	case KEY_DOWN: vs->cursor++; break;
	case KEY_PPAGE: vs->cursor -= page; vs->scroll -= page; break;
	case KEY_NPAGE: vs->cursor += page; vs->scroll += page; break;
	case KEY_HOME: vs->cursor = 0; break;
	case KEY_END: vs->cursor = vs->rows - 1; break;
	}
	vs->cursor = vs->cursor >= vs->rows ? vs->rows - 1 : vs->cursor;
	vs->cursor = vs->cursor < 0 ? 0 : vs->cursor;
	vs->cursor_moved = true;
	vs->cursor_chosen = vs->cursor > 0;	/* back on top, it stays on top */
}

/* The next column to sort by (dir 1), or the one before (-1). */
static bool table_sort_step(const struct tui_view *v, struct tui_view_state *vs, int dir)
{
	for (int i = 1; i <= v->n_cols; i++) {
		int c = (vs->sort + dir * i + v->n_cols * i) % v->n_cols;

		if (v->cols[c].sort != SORT_NONE && !table_hidden(v, vs, c)) {
			vs->sort = c;
			vs->scroll = 0;
			return true;
		}
	}
	return false;
}

static bool table_has_names(const struct tui_view *v)
{
	for (int c = 0; c < v->n_cols; c++)
		if (!v->cols[c].width)
			return true;
	return false;
}

bool tui_table_key(const struct tui_view *v, struct tui_view_state *vs, enum tui_action a,
		   int ch)
{
	switch (a) {
	case ACT_SCROLL:
		table_move(vs, ch);
		return true;
	case ACT_HSCROLL:	/* the draw stops it where the widest name ends */
		vs->hscroll += ch == KEY_LEFT ? -TABLE_HSTEP : TABLE_HSTEP;
		vs->hscroll = vs->hscroll < 0 ? 0 : vs->hscroll;
		return table_has_names(v);
	case ACT_SORT:
		return table_sort_step(v, vs, ch == '<' ? -1 : 1);
	case ACT_REVERSE:
		vs->reverse = !vs->reverse;
		vs->scroll = 0;
		return true;
	default:
		return false;
	}
}
