/* ui.h — the two ways gputop shows its figures: the ncurses TUI and batch mode (plain
 * tables on stdout, like top -b). Both run in the UI thread, read statistics snapshots and
 * session status, and never touch the traced program. */
#ifndef GPUTOP_UI_H
#define GPUTOP_UI_H

#include <stdbool.h>
#include <stdio.h>

/* What the UI takes of the command line (the session fills it from its options). */
struct ui_options {
	double delay_s;		/* -d: seconds between refreshes */
	long iterations;	/* -n: refreshes, then detach; < 0 none */
	bool no_color;		/* --no-color */
	bool memory_snapshot;	/* --memory-snapshot: the key S writes one */
	bool alloc_stacks;	/* --stacks allocs: allocations wait for their call stack */
};

/* Runs until the session ends (or the user quits, which requests a detach or kill), then
 * returns. Batch prints a final summary when the session ends. */
int batch_run(const struct ui_options *opt);
/* The final summary alone (all tables), for sessions without periodic output. */
void batch_print_final(FILE *f);
int tui_run(const struct ui_options *opt);

#endif
