/* help.c — what the TUI says about its keys: the function bar and the help overlay, both
 * written from keys.c's table alone, so that neither can lie about a key. */
#include "tui_internal.h"
#include "crt.h"
#include "format.h"
#include "keys.h"

/* Each key of the table that has a label, like htop's F-key bar. */
void help_draw_bar(int y, int width)
{
	int x = 0;

	tui_fill(stdscr, y, 0, width, tui_attr(TC_BAR_LABEL));
	for (size_t i = 0; i < tui_keys_count && x < width; i++) {
		const struct tui_key *k = &tui_keys[i];

		if (!k->label)
			continue;
		tui_put(stdscr, y, x, width - x, tui_attr(TC_BAR_KEY), k->names);
		x += fmt_width(k->names);
		tui_put(stdscr, y, x, width - x, tui_attr(TC_BAR_KEY), " ");
		x++;
		tui_put(stdscr, y, x, width - x, tui_attr(TC_BAR_LABEL), k->label);
		x += fmt_width(k->label) + 1;
	}
}

/* Every row of the table, in a box over the middle of the screen. */
void help_draw_overlay(int h, int width)
{
	int names_w = 0, bw, bh = (int)tui_keys_count + 4, y0, x0;

	for (size_t i = 0; i < tui_keys_count; i++)
		if (fmt_width(tui_keys[i].names) > names_w)
			names_w = fmt_width(tui_keys[i].names);
	bw = width - 4 < 90 ? width - 4 : 90;
	if (bh > h - 2)
		bh = h - 2;
	y0 = (h - bh) / 2;
	x0 = (width - bw) / 2;
	tui_box(stdscr, y0, x0, bh, bw);
	tui_put(stdscr, y0, x0 + 2, bw - 4, A_BOLD, " gputop keys ");
	for (size_t i = 0; i < tui_keys_count && (int)i + 2 < bh - 1; i++) {
		tui_put(stdscr, y0 + 2 + (int)i, x0 + 2, names_w, tui_attr(TC_VALUE), tui_keys[i].names);
		tui_put(stdscr, y0 + 2 + (int)i, x0 + 4 + names_w, bw - names_w - 6, A_NORMAL,
			tui_keys[i].help);
	}
}
