/* tui_internal.h — the TUI's own state, shared by its parts: tui.c (the loop and the figures),
 * screen.c (the layout and the status line), help.c (the function bar and the help overlay)
 * and actions.c (what keys do). Views never see it: they get a frame (tui.h). */
#ifndef GPUTOP_TUI_INTERNAL_H
#define GPUTOP_TUI_INTERNAL_H

#include <curses.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "ui.h"
#include "history.h"
#include "rows.h"
#include "session_state.h"
#include "stats.h"
#include "tui.h"

enum {	/* the tabs' views, views.def's order */
#define VIEW(v) TUI_VIEW_INDEX_##v,
#include "views.def"
#undef VIEW
	TUI_VIEW_COUNT
};
#define TUI_ESC		27

/* The views, in the order of their tabs (views.c, from views.def). */
extern const struct tui_view *const tui_views[TUI_VIEW_COUNT];

enum tui_mode { MODE_NORMAL, MODE_HELP, MODE_FILTER, MODE_ASK_QUIT, MODE_STACKS, MODE_OOM };

struct tui {
	const struct ui_options *opt;
	SCREEN *screen;
	int view;
	struct tui_view_state vs[TUI_VIEW_COUNT];
	bool grouped[TUI_VIEW_COUNT];		/* g: the view's grouped form shows */
	struct tui_view_state gvs[TUI_VIEW_COUNT];	/* ... and its state */
	bool by_gpu;				/* G: the figures by GPU, over any view */
	struct tui_view_state gpu_vs;		/* ... and its state */
	int pane_kind;				/* MODE_STACKS: what the pane shows, */
	uint64_t pane_subject;			/* of which row, */
	int pane_scroll;			/* from which line */
	int help_scroll;			/* MODE_HELP: the help from which line */
	int oom_scroll;				/* MODE_OOM: the frozen Memory view from which line */
	struct stats_snapshot cur, prev;	/* shown; prev for the interval rates */
	struct rows rows;			/* of cur, against prev */
	struct devices_snapshot dev;		/* the GPUs' meters, taken with cur */
	bool have_cur;
	struct session_status st;
	struct history hist;
	time_t reset_at;			/* when z last reset the figures; 0: never */
	enum tui_mode mode;
	char edit[TUI_FILTER_LEN];		/* the filter being typed */
	bool paused;
	pid_t only_pid;				/* the process shown alone (P); 0: all */
	enum session_request asked;		/* what 'q' requested, REQ_NONE before */
	bool leave;
	long refreshes;
	uint64_t next_ns, step;			/* the next refresh; -d in ns */
	char info[128];				/* a short answer to the last key */
	uint64_t info_ns;
	char drawn_status[512];			/* the status line as last drawn */
};

/* The view on screen and its state: the figures by GPU when G chose them, else the current
 * view's grouped form when g chose it. */
static inline const struct tui_view *tui_view_now(const struct tui *t)
{
	const struct tui_view *v = tui_views[t->view];
	if (t->by_gpu)
		return &view_gpus;
	return t->grouped[t->view] && v->grouped ? v->grouped : v;
}

static inline struct tui_view_state *tui_state_now(struct tui *t)
{
	if (t->by_gpu)
		return &t->gpu_vs;
	return t->grouped[t->view] && tui_views[t->view]->grouped ? &t->gvs[t->view] : &t->vs[t->view];
}

/* screen.c */
void screen_draw(struct tui *t);
/* The left part of the status line into buf; returns its attributes. */
int screen_status_text(const struct tui *t, char *buf, size_t n);
void screen_say(struct tui *t, const char *what);	/* a short answer to a key */
void screen_log_sink(const char *msg);		/* gputop's messages, while the TUI shows */
bool screen_estimated(const struct tui *t);	/* launch figures are estimates */

/* help.c */
void help_draw_bar(int y, int width);
/* Every key of the table in a box over the screen, from line scroll on; returns scroll, kept
 * within the lines. */
int help_draw_overlay(int h, int width, int scroll);

/* actions.c: what a key asks of the loop, besides a redraw. */
enum {
	ACTED_TAKE = 1,		/* a fresh interval from now (the display resumed) */
	ACTED_RESET = 2,	/* counters back to zero, then a fresh interval */
};
int actions_key(struct tui *t, int ch);

#endif
