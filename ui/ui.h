/* ui.h — the two ways gputop shows its figures: the ncurses TUI and batch mode (plain
 * tables on stdout, like top -b). Both run in the UI thread, read statistics snapshots and
 * session status, and never touch the traced program. */
#ifndef GPUTOP_UI_H
#define GPUTOP_UI_H

#include <stdio.h>

#include "cli.h"

/* Runs until the session ends (or the user quits, which requests a detach or kill), then
 * returns. Batch prints a final summary when the session ends. */
int batch_run(const struct options *opt);
/* The final summary alone (all tables), for sessions without periodic output. */
void batch_print_final(FILE *f);
int tui_run(const struct options *opt);

#endif
