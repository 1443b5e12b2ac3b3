/* keys.c — the table of the TUI's keys (keys.h). Adding a key is one row here and one case
 * in actions.c's dispatcher; the bar and the help follow by themselves. The views' keys are
 * their own (struct tui_view.key, the list views.def): one row stands for them all. */
#include "keys.h"
#include "tui_internal.h"

#include <curses.h>
#include <stdio.h>

#define CTRL_L 12	/* ^L, as in every curses program */

const struct tui_key tui_keys[] = {
	{ { 'q', KEY_F(10) }, "q/F10", "Quit",
	  "quit: detach; in launch mode, ask: kill or detach", ACT_QUIT },
	{ { '?', 'h', KEY_F(1) }, "?/h/F1", "Help", "this help; arrows scroll it, other keys close it",
	  ACT_HELP },
	{ { 0 }, NULL, "Views", NULL, ACT_VIEW },	/* keys, names and help: the views' own */
	{ { '\t' }, "Tab", NULL, "next view", ACT_NEXT_VIEW },
	{ { KEY_BTAB }, "S-Tab", NULL, "previous view", ACT_PREV_VIEW },
	{ { KEY_UP, KEY_DOWN, KEY_PPAGE, KEY_NPAGE, KEY_HOME, KEY_END }, "Up Down PgUp PgDn Home End",
	  NULL, "move the cursor: a row, a page, to the first, the last", ACT_SCROLL },
	{ { KEY_LEFT, KEY_RIGHT }, "Left Right", NULL, "scroll long names sideways", ACT_HSCROLL },
	{ { 's', '>', KEY_F(6), '<' }, "s/>/F6 <", "Sort", "sort by the next column; < by the one before",
	  ACT_SORT },
	{ { 'r' }, "r", "Reverse", "reverse the sort order", ACT_REVERSE },
	{ { '/' }, "/", "Filter",
	  "filter by name (Enter applies, Esc clears)", ACT_FILTER },
	{ { 'p' }, "p", "Pause", "pause the display; tracing goes on",
	  ACT_PAUSE },
	{ { 'P' }, "P", "Process",
	  "one process alone (each press: the next), then all again", ACT_PROCESS },
	{ { 'z' }, "z", "Reset", "reset counters (live allocations stay)", ACT_RESET },
	{ { '\n', '\r', KEY_ENTER }, "Enter", "Stacks",
	  "the row's call stacks (Leaks, Memory, Kernels, API, Job)", ACT_STACKS },
	{ { 'g' }, "g", "Group", "group Leaks by allocation site, Memory by line; or not", ACT_GROUP },
	{ { 'G' }, "G", "GPUs", "the figures by GPU, over any view, or back", ACT_BY_GPU },
	/* One row for PyTorch's memory at one instant (the help fits 80x24): the key says which. */
	{ { 'S', 'O' }, "S O", NULL, "S: write the memory snapshot; O: Memory at the last OOM", ACT_MEMORY_AT },
	{ { CTRL_L }, "Ctrl-L", NULL, "redraw the whole screen", ACT_REDRAW },
};

const size_t tui_keys_count = sizeof(tui_keys) / sizeof(tui_keys[0]);

static const struct tui_key *views_row(void)
{
	for (size_t i = 0; i < tui_keys_count; i++)
		if (tui_keys[i].action == ACT_VIEW)
			return &tui_keys[i];
	return NULL;
}

void keys_describe(const struct tui_key *k, struct key_text *out)
{
	if (k->action != ACT_VIEW) {
		snprintf(out->names, sizeof out->names, "%s", k->names);
		snprintf(out->help, sizeof out->help, "%s", k->help);
		return;
	}
	int n = 0, h = snprintf(out->help, sizeof out->help, "views:");	/* "o l m ...", "views: Overview ..." */
	out->names[0] = 0;
	for (int i = 0; i < TUI_VIEW_COUNT; i++) {
		n += snprintf(out->names + n, sizeof out->names - (size_t)n, "%s%c", i ? " " : "", tui_views[i]->key);
		h += snprintf(out->help + h, sizeof out->help - (size_t)h, " %s", tui_views[i]->name);
		if (n >= (int)sizeof out->names || h >= (int)sizeof out->help)
			break;
	}
}

const struct tui_key *keys_find(int ch)
{
	for (int i = 0; i < TUI_VIEW_COUNT; i++)
		if (tui_views[i]->key == ch)
			return views_row();
	for (size_t i = 0; i < tui_keys_count; i++)
		for (int k = 0; k < KEYS_PER_ENTRY && tui_keys[i].keys[k]; k++)
			if (tui_keys[i].keys[k] == ch)
				return &tui_keys[i];
	return NULL;
}
