/* keys.c — the table of the TUI's keys (keys.h). Adding a key is one row here and one case
 * in actions.c's dispatcher; the bar and the help follow by themselves. */
#include "keys.h"

#include <curses.h>

#define CTRL_L 12	/* ^L, as in every curses program */

const struct tui_key tui_keys[] = {
	{ { 'q', KEY_F(10) }, "q/F10", "Quit",
	  "quit: detach; in launch mode, ask: kill or detach", ACT_QUIT },
	{ { '?', 'h', KEY_F(1) }, "?/h/F1", "Help", "this help; arrows scroll it, other keys close it",
	  ACT_HELP },
	{ { 'o', 'l', 'm', 'k', 'b', 'a', 'c' }, "o l m k b a c", "Views",
	  "views: Overview Leaks Memory Kernels Bandwidth API Comm", ACT_VIEW },
	{ { '\t' }, "Tab", NULL, "next view", ACT_NEXT_VIEW },
	{ { KEY_BTAB }, "S-Tab", NULL, "previous view", ACT_PREV_VIEW },
	{ { KEY_UP, KEY_DOWN, KEY_PPAGE, KEY_NPAGE, KEY_HOME, KEY_END }, "Up Down PgUp PgDn Home End",
	  NULL, "move the cursor: a row, a page, to the first, the last", ACT_SCROLL },
	{ { KEY_LEFT, KEY_RIGHT }, "Left Right", NULL, "scroll long names sideways", ACT_HSCROLL },
	{ { 's', '>', KEY_F(6) }, "s/>/F6", "Sort", "sort by the next column", ACT_SORT },
	{ { '<' }, "<", NULL, "sort by the column before", ACT_SORT },
	{ { 'r' }, "r", "Reverse", "reverse the sort order", ACT_REVERSE },
	{ { '/' }, "/", "Filter",
	  "filter by name (Enter applies, Esc clears)", ACT_FILTER },
	{ { 'p' }, "p", "Pause", "pause the display; tracing goes on",
	  ACT_PAUSE },
	{ { 'P' }, "P", "Process",
	  "one process alone (each press: the next), then all again", ACT_PROCESS },
	{ { 'z' }, "z", "Reset", "reset counters (live allocations stay)", ACT_RESET },
	{ { '\n', '\r', KEY_ENTER }, "Enter", "Stacks",
	  "call stacks of the selected row (Leaks, Kernels, API)", ACT_STACKS },
	{ { 'g' }, "g", "Group", "group Leaks by allocation site, Memory by line; or not", ACT_GROUP },
	{ { 'G' }, "G", "GPUs", "the figures by GPU, over any view, or back", ACT_BY_GPU },
	{ { CTRL_L }, "Ctrl-L", NULL, "redraw the whole screen", ACT_REDRAW },
};

const size_t tui_keys_count = sizeof(tui_keys) / sizeof(tui_keys[0]);

const struct tui_key *keys_find(int ch)
{
	for (size_t i = 0; i < tui_keys_count; i++)
		for (int k = 0; k < KEYS_PER_ENTRY && tui_keys[i].keys[k]; k++)
			if (tui_keys[i].keys[k] == ch)
				return &tui_keys[i];
	return NULL;
}
