/* crt.h — the terminal under the TUI, like htop's CRT: opening and closing it, the attribute
 * of each color role (colors, or plain bold/reverse) and writing text that cannot escape its
 * box. It knows nothing of views, statistics or the traced program. */
#ifndef GPUTOP_CRT_H
#define GPUTOP_CRT_H

#include <curses.h>
#include <stdbool.h>

enum tui_color {
	TC_NORMAL,
	TC_TITLE,	/* table column titles */
	TC_SORTED,	/* the sort column's title */
	TC_LABEL,	/* labels in front of figures */
	TC_VALUE,	/* figures that matter */
	TC_SPARK,	/* sparklines */
	TC_WARN,	/* leaks, errors, estimates */
	TC_DIM,		/* secondary text */
	TC_BAR_KEY,	/* the function bar: keys */
	TC_BAR_LABEL,	/* the function bar: what they do */
	TC_TAB,		/* the current view's tab */
	TC_CURSOR,	/* the selected row of a table */
	TC_COUNT,
};

/* Takes the terminal on stdin/stdout in the locale's character set, with colors unless
 * no_color (or NO_COLOR, or TERM=dumb) says otherwise; NULL when it cannot draw a screen. */
SCREEN *tui_term_open(bool no_color);
void tui_term_close(SCREEN *screen);	/* gives the terminal back as it was */

int tui_attr(enum tui_color c);	/* the attributes of a role: colors, or plain bold/reverse */

/* Writes s at (y, x) cut to at most width columns, with attributes attr. */
void tui_put(WINDOW *w, int y, int x, int width, int attr, const char *s);
/* Writes s from (y, x) on up to max_lines lines of width columns, each line ended after a
 * ", " or "; " where the text is too long (the last line cut): the lines written. */
int tui_put_wrapped(WINDOW *w, int y, int x, int width, int max_lines, int attr, const char *s);
/* Fills width columns from (y, x) with blanks in attr (a title bar). */
void tui_fill(WINDOW *w, int y, int x, int width, int attr);
/* A blank box of h rows and w columns at (y, x) with a bold frame (the help and stack panes). */
void tui_box(WINDOW *win, int y, int x, int h, int w);

#endif
