/* crt.c — owns the terminal under the TUI (crt.h), like htop's CRT.c: taking it and giving
 * it back, colors or plain attributes per role, and text that stays inside its box. It draws
 * no layout and reads no statistics; the loop is tui.c's, the layout screen.c's. */
#include "crt.h"
#include "format.h"

#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TERM_TEXT_MAX	1024	/* bytes of one string tui_put writes: a status line, a cell */

static int tui_attrs[TC_COUNT];

int tui_attr(enum tui_color c)
{
	return c < TC_COUNT ? tui_attrs[c] : 0;
}

void tui_put(WINDOW *w, int y, int x, int width, int attr, const char *s)
{
	char buf[TERM_TEXT_MAX], clean[TERM_TEXT_MAX];
	int maxy, maxx;
	size_t i;

	getmaxyx(w, maxy, maxx);
	if (y < 0 || y >= maxy || x < 0 || x >= maxx || width <= 0)
		return;
	if (width > maxx - x)
		width = maxx - x;
	/* Control characters would move the cursor: a command line may hold anything. */
	for (i = 0; s[i] && i + 1 < sizeof(clean); i++)
		clean[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	clean[i] = '\0';
	fmt_truncate(buf, sizeof(buf), clean, width);
	wattrset(w, attr);
	mvwaddstr(w, y, x, buf);
	wattrset(w, A_NORMAL);
}

/* Where to end a line of s of at most width columns: just after the last "; " that leaves it
 * short enough, where that fills half the line at least, else after the last ", " (the blank
 * goes); 0 where none does. */
static size_t tui_wrap_point(const char *s, int width)
{
	char head[TERM_TEXT_MAX];
	size_t comma = 0, semicolon = 0;
	int semicolon_w = 0;

	for (size_t i = 0; s[i] && s[i + 1] && i + 1 < sizeof(head); i++) {
		if ((s[i] != ',' && s[i] != ';') || s[i + 1] != ' ')
			continue;
		snprintf(head, sizeof(head), "%.*s", (int)(i + 1), s);
		int w = fmt_width(head);
		if (w > width)
			break;
		if (s[i] == ';')
			semicolon = i + 1, semicolon_w = w;
		comma = i + 1;
	}
	return semicolon && 2 * semicolon_w >= width ? semicolon : comma;
}

int tui_put_wrapped(WINDOW *w, int y, int x, int width, int max_lines, int attr, const char *s)
{
	int lines = 0;

	while (*s && lines < max_lines) {
		size_t cut = strlen(s), at;
		char line[TERM_TEXT_MAX];

		if (fmt_width(s) > width && lines + 1 < max_lines && (at = tui_wrap_point(s, width)))
			cut = at;
		snprintf(line, sizeof(line), "%.*s", (int)cut, s);
		tui_put(w, y + lines++, x, width, attr, line);
		s += cut;
		while (*s == ' ')
			s++;
	}
	return lines;
}

void tui_fill(WINDOW *w, int y, int x, int width, int attr)
{
	wattrset(w, attr);
	mvwhline(w, y, x, ' ', width);
	wattrset(w, A_NORMAL);
}

void tui_box(WINDOW *win, int y, int x, int h, int w)
{
	for (int r = 0; r < h; r++)
		tui_fill(win, y + r, x, w, A_NORMAL);
	wattrset(win, A_BOLD);
	mvwhline(win, y, x, ACS_HLINE, w);
	mvwhline(win, y + h - 1, x, ACS_HLINE, w);
	mvwvline(win, y, x, ACS_VLINE, h);
	mvwvline(win, y, x + w - 1, ACS_VLINE, h);
	mvwaddch(win, y, x, ACS_ULCORNER);
	mvwaddch(win, y, x + w - 1, ACS_URCORNER);
	mvwaddch(win, y + h - 1, x, ACS_LLCORNER);
	mvwaddch(win, y + h - 1, x + w - 1, ACS_LRCORNER);
	wattrset(win, A_NORMAL);
}

static void tui_term_colors(bool color)
{
	if (color) {
		use_default_colors();
		init_pair(1, COLOR_BLACK, COLOR_GREEN);		/* titles */
		init_pair(2, COLOR_BLACK, COLOR_CYAN);		/* sort column, bar labels */
		init_pair(3, COLOR_CYAN, -1);			/* labels */
		init_pair(4, COLOR_GREEN, -1);			/* sparklines */
		init_pair(5, COLOR_YELLOW, -1);			/* warnings */
		init_pair(6, COLOR_BLUE, -1);			/* dim */
	}
	tui_attrs[TC_NORMAL] = A_NORMAL;
	tui_attrs[TC_TITLE] = color ? COLOR_PAIR(1) : A_REVERSE;
	tui_attrs[TC_SORTED] = color ? COLOR_PAIR(2) | A_BOLD : A_REVERSE | A_BOLD;
	tui_attrs[TC_LABEL] = color ? COLOR_PAIR(3) : A_NORMAL;
	tui_attrs[TC_VALUE] = A_BOLD;
	tui_attrs[TC_SPARK] = color ? COLOR_PAIR(4) : A_NORMAL;
	tui_attrs[TC_WARN] = color ? COLOR_PAIR(5) | A_BOLD : A_BOLD;
	tui_attrs[TC_DIM] = color ? COLOR_PAIR(6) | A_BOLD : A_NORMAL;
	tui_attrs[TC_BAR_KEY] = A_BOLD;
	tui_attrs[TC_BAR_LABEL] = color ? COLOR_PAIR(2) : A_REVERSE;
	tui_attrs[TC_TAB] = color ? COLOR_PAIR(2) | A_BOLD : A_REVERSE | A_BOLD;
	/* Reverse video shows on any terminal; bold sets it apart from the plain titles. */
	tui_attrs[TC_CURSOR] = color ? A_REVERSE : A_REVERSE | A_BOLD;
}

static bool tui_term_want_color(bool no_color)
{
	const char *term = getenv("TERM"), *nc = getenv("NO_COLOR");

	if (no_color || (nc && *nc) || !term || !strcmp(term, "dumb"))
		return false;
	return has_colors() && start_color() == OK;
}

/* Whether the terminal can move the cursor: without it no layout can be drawn. */
static bool tui_term_can_address(void)
{
	char cup[] = "cup";
	const char *s = tigetstr(cup);

	return s && s != (const char *)-1;
}

SCREEN *tui_term_open(bool no_color)
{
	SCREEN *screen;

	/* The terminal's own character set: ncursesw needs LC_CTYPE to write UTF-8. */
	setlocale(LC_CTYPE, "");
	fmt_set_ascii(strcmp(nl_langinfo(CODESET), "UTF-8") != 0);
	screen = newterm(NULL, stdout, stdin);
	if (!screen)
		return NULL;
	set_term(screen);
	if (!tui_term_can_address()) {	/* TERM=dumb: a full screen cannot be drawn at all */
		endwin();
		delscreen(screen);
		return NULL;
	}
	cbreak();		/* Ctrl-C still signals gputop: the tracer detaches */
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);	/* Esc answers prompts: don't wait a second for a sequence */
	tui_term_colors(tui_term_want_color(no_color));
	return screen;
}

void tui_term_close(SCREEN *screen)
{
	endwin();
	delscreen(screen);
}
