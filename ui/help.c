/* help.c — what the TUI says about its keys: the function bar and the help overlay, both
 * written from keys.c's table alone, so that neither can lie about a key. */
#include "tui_internal.h"
#include "crt.h"
#include "format.h"
#include "keys.h"

#include <stdio.h>
#include <string.h>

#define HELP_BOX_W	90	/* the overlay's width, where the terminal is wider */
#define HELP_NAMES_W	14	/* the keys' column; longer names get a line of their own */
#define HELP_LINES	96
#define HELP_LINE	160

/* The bar: each key of the table that has a label, like htop's F-key bar, by its first name
 * ("q" of "q/F10"), as many whole as fit. */
void help_draw_bar(int y, int width)
{
	int x = 0;

	tui_fill(stdscr, y, 0, width, tui_attr(TC_BAR_LABEL));
	for (size_t i = 0; i < tui_keys_count; i++) {
		const struct tui_key *k = &tui_keys[i];
		struct key_text kt;
		const char *alt;
		char name[64];

		if (!k->label)
			continue;
		keys_describe(k, &kt);
		alt = kt.names[0] ? strchr(kt.names + 1, '/') : NULL;
		snprintf(name, sizeof(name), "%.*s", alt ? (int)(alt - kt.names) : (int)strlen(kt.names),
			 kt.names);
		if (x + fmt_width(name) + 1 + fmt_width(k->label) > width)
			break;
		tui_put(stdscr, y, x, width - x, tui_attr(TC_BAR_KEY), name);
		x += fmt_width(name) + 1;
		tui_put(stdscr, y, x, width - x, tui_attr(TC_BAR_LABEL), k->label);
		x += fmt_width(k->label) + 1;
	}
}

/* The overlay's lines: the keys on the first line of each entry, its text wrapped at words. */
struct help_text {
	char keys[HELP_LINES][64];	/* "": a line that goes on the entry above */
	char text[HELP_LINES][HELP_LINE];
	int n;
};

static void help_add(struct help_text *h, const char *keys, const char *text, int len)
{
	if (h->n >= HELP_LINES)
		return;
	snprintf(h->keys[h->n], sizeof h->keys[h->n], "%s", keys ? keys : "");
	snprintf(h->text[h->n], HELP_LINE, "%.*s", len, text);
	h->n++;
}

/* text in lines of at most width columns, broken at blanks. */
static void help_wrap(struct help_text *h, const char *keys, const char *text, int width)
{
	while (*text) {
		int len = 0, end = 0;
		char part[HELP_LINE];

		/* the longest run of whole words that fits */
		for (int i = 0; text[i] && i < HELP_LINE - 1; i++) {
			if (text[i + 1] && text[i + 1] != ' ')
				continue;
			snprintf(part, sizeof(part), "%.*s", i + 1, text);
			if (fmt_width(part) > width && end)
				break;
			end = i + 1;
			if (fmt_width(part) > width)	/* one word wider than the line: cut */
				break;
		}
		len = end ? end : (int)strlen(text);
		help_add(h, keys, text, len);
		keys = NULL;
		text += len;
		while (*text == ' ')
			text++;
	}
}

static void help_lines(struct help_text *h, int names_w, int text_w)
{
	h->n = 0;
	for (size_t i = 0; i < tui_keys_count; i++) {
		struct key_text kt;

		keys_describe(&tui_keys[i], &kt);
		if (fmt_width(kt.names) > names_w) {	/* "Up Down PgUp PgDn Home End" */
			help_add(h, kt.names, "", 0);
			help_wrap(h, NULL, kt.help, text_w);
		} else {
			help_wrap(h, kt.names, kt.help, text_w);
		}
	}
}

int help_draw_overlay(int h, int width, int scroll)
{
	struct help_text lines;
	int names_w = 0, bw = width - 4 < HELP_BOX_W ? width - 4 : HELP_BOX_W, bh, pad, rows, max, y0, x0;

	for (size_t i = 0; i < tui_keys_count; i++) {
		struct key_text kt;

		keys_describe(&tui_keys[i], &kt);
		if (fmt_width(kt.names) <= HELP_NAMES_W && fmt_width(kt.names) > names_w)
			names_w = fmt_width(kt.names);
	}
	help_lines(&lines, names_w, bw - names_w - 6);
	/* a blank line above and below the keys where there is room */
	pad = lines.n + 4 <= h - 2 ? 1 : 0;
	bh = lines.n + 2 + 2 * pad < h - 2 ? lines.n + 2 + 2 * pad : h - 2;
	rows = bh - 2 - 2 * pad;
	max = lines.n > rows ? lines.n - rows : 0;
	scroll = scroll < 0 ? 0 : scroll > max ? max : scroll;
	y0 = (h - bh) / 2;
	x0 = (width - bw) / 2;
	tui_box(stdscr, y0, x0, bh, bw);
	tui_put(stdscr, y0, x0 + 2, bw - 4, A_BOLD, " gputop keys ");
	for (int i = 0; i < rows && scroll + i < lines.n; i++) {
		int y = y0 + 1 + pad + i;

		if (lines.keys[scroll + i][0])
			tui_put(stdscr, y, x0 + 2, bw - 4, tui_attr(TC_VALUE), lines.keys[scroll + i]);
		tui_put(stdscr, y, x0 + 4 + names_w, bw - names_w - 6, A_NORMAL, lines.text[scroll + i]);
	}
	if (max) {
		char more[96];

		snprintf(more, sizeof(more), " %d-%d/%d, Up Down PgUp PgDn scroll ", scroll + 1,
			 scroll + rows, lines.n);
		tui_put(stdscr, y0 + bh - 1, x0 + 2, bw - 4, tui_attr(TC_DIM), more);
	}
	return scroll;
}
