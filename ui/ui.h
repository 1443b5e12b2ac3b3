/* ui.h — the two ways gputop shows its figures: the ncurses TUI and batch mode (plain
 * tables on stdout, like top -b). Both run in the UI thread, read statistics snapshots and
 * session status, and never touch the traced program. */
#ifndef GPUTOP_UI_H
#define GPUTOP_UI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

/* What the UI takes of the command line (the session fills it from its options). */
struct job_live;

struct ui_options {
	double delay_s;		/* -d: seconds between refreshes */
	long iterations;	/* -n: refreshes, then detach; < 0 none */
	bool no_color;		/* --no-color */
	bool memory_snapshot;	/* --memory-snapshot: the key S writes one */
	bool alloc_stacks;	/* --stacks allocs: allocations wait for their call stack */
	struct job_live *job_live;	/* the live picture of the job (the Job view); NULL: none */
};

/* Runs until the session ends (or the user quits, which requests a detach or kill), then
 * returns. Batch prints a final summary when the session ends. */
int batch_run(const struct ui_options *opt);
/* The final summary alone (all tables), for sessions without periodic output. */
void batch_print_final(FILE *f);
int tui_run(const struct ui_options *opt);

/* The UI in a thread of its own (ui_thread.c), batch mode or the TUI, with every signal blocked
 * there (they are the tracer's); u lives until ui_join. 0, or -errno (no UI: tracing goes on). */
struct ui_thread {
	struct ui_options opt;
	bool batch;
	bool running;
	pthread_t thread;
};
int ui_start(struct ui_thread *u, const struct ui_options *opt, bool batch);
void ui_join(struct ui_thread *u);	/* once the session ended; nothing if none was started */

#endif
