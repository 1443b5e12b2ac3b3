/* keys.h — the one table of the TUI's keys: what each key does, the word the function bar
 * shows and the line the help overlay shows. The bar, the help and the dispatcher all read
 * this table, so the help can never lie about a key. */
#ifndef GPUTOP_KEYS_H
#define GPUTOP_KEYS_H

#include <stddef.h>

enum tui_action {
	ACT_QUIT,		/* detach (attach mode) or ask kill/detach (launch mode) */
	ACT_HELP,
	ACT_VIEW,		/* the key names the view (struct tui_view.key) */
	ACT_NEXT_VIEW,
	ACT_PREV_VIEW,
	ACT_SCROLL,		/* the cursor: the key says which way and how far */
	ACT_HSCROLL,		/* names sideways: the key says which way */
	ACT_SORT,		/* the key says which way: '<' the column before, else the next */
	ACT_REVERSE,
	ACT_FILTER,
	ACT_PAUSE,
	ACT_RESET,
	ACT_REDRAW,
	ACT_PROCESS,		/* show the next process alone, then all again */
	ACT_STACKS,		/* Enter: the call stacks behind the selected row */
	ACT_GROUP,		/* g: the view's grouped form (Leaks by allocation site) */
	ACT_BY_GPU,		/* G: the figures by GPU, over any view */
	ACT_MEMORY_AT,		/* PyTorch's memory at one instant, the key says which: S written as
				 * _snapshot() (--memory-snapshot); O the Memory view frozen at the
				 * last out-of-memory, or back */
};

#define KEYS_PER_ENTRY 8

struct tui_key {
	int keys[KEYS_PER_ENTRY];	/* ncurses key codes; 0 ends the list early */
	const char *names;		/* how the bar and the help write the keys: "?/h" */
	const char *label;		/* one word for the function bar; NULL: help only */
	const char *help;		/* one line for the help overlay (keys_describe: both) */
	enum tui_action action;
};

extern const struct tui_key tui_keys[];
extern const size_t tui_keys_count;

/* The entry that handles ch, or NULL when no key of the table (or of a view) is ch. */
const struct tui_key *keys_find(int ch);

/* How the bar and the help write entry k's keys and what it does; the views' entry is made of
 * the views' own keys and names. */
struct key_text {
	char names[64];
	char help[160];
};
void keys_describe(const struct tui_key *k, struct key_text *out);

#endif
