/* tui.c — the live ncurses TUI: owns the loop (a refresh every -d seconds, keys read with a
 * timeout so they act at once) and the figures it shows (snapshots and their rows). The
 * layout is screen.c's, what keys do actions.c's; views draw (most with table.c); crt.c owns
 * the terminal and its colors. It reads statistics snapshots and the session status and
 * makes requests; it never touches the traced program, and the tracer thread never waits for
 * it. */
#include "ui.h"
#include "tui_internal.h"
#include "clock.h"
#include "crt.h"
#include "log.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TUI_POLL_MS	100		/* how often the session's state is looked at */
#define TUI_LOST_READS	20		/* reads failing at once in a row: the terminal is gone */

/* ---- figures ---- */

static void tui_take(struct tui *t)
{
	struct stats_snapshot s;

	if (stats_snapshot_of(t->only_pid, &s) < 0)
		return;
	history_sample(&t->hist, &s);
	if (t->paused && t->have_cur) {		/* the display stays; tracing and history go on */
		stats_snapshot_free(&s);
		return;
	}
	stats_snapshot_free(&t->prev);
	if (t->have_cur) {
		t->prev = t->cur;
	} else {	/* the first interval is the whole session so far */
		memset(&t->prev, 0, sizeof(t->prev));
		t->prev.t_ns = s.start_ns;
	}
	t->cur = s;
	t->have_cur = true;
	devices_snapshot(&t->dev);
	rows_free(&t->rows);
	rows_build(&t->rows, &t->cur, &t->prev);	/* on failure empty: tables say so */
}

static void tui_reset(struct tui *t)
{
	stats_reset();
	t->reset_at = time(NULL);
	t->have_cur = false;
	stats_snapshot_free(&t->cur);
	t->paused = false;
	tui_take(t);
}

/* ---- the loop ---- */

/* What a key asked for besides a redraw (actions.c). */
static void tui_acted(struct tui *t, int acted)
{
	if (acted & ACTED_RESET)
		tui_reset(t);
	else if (acted & ACTED_TAKE)
		tui_take(t);
	if (acted)
		t->next_ns = now_ns() + t->step;
}

/* One refresh every -d seconds; after -n of them, detach as batch mode does. */
static void tui_tick(struct tui *t, uint64_t now)
{
	uint64_t step = t->step;

	tui_take(t);
	clearok(curscr, TRUE);	/* the program's own output may have drawn over us */
	t->next_ns += step;
	if (t->next_ns <= now)
		t->next_ns = now + step;
	t->refreshes++;
	if (t->opt->iterations > 0 && t->refreshes >= t->opt->iterations && t->asked == REQ_NONE &&
	    !t->st.ended)
		session_request(t->asked = REQ_COUNT_DONE);
}

/* Leave once the session is over and nothing is left to show: the user quit, or asked for
 * the end (q, -n, a signal, --timeout). A program that exited stays on screen until q. */
static bool tui_done(struct tui *t)
{
	if (t->leave)
		return true;
	if (!t->st.ended)
		return false;
	return t->asked != REQ_NONE || !t->st.exited;
}

/* The terminal went away (its window closed, ssh dropped) and nobody can quit. Attached: detach,
 * as a SIGHUP does. Launched: the program goes on exactly as it would without gputop (a hangup
 * reaches it only the way it would have, signals.c), and gputop traces it to its end: a shell
 * waiting for gputop must not move on, exit and so hang up a program that still runs (issue 17).
 * Either way, wait for the end without touching the terminal again. */
static void tui_lost(struct tui *t)
{
	struct timespec pause = { 0, 50000000 };

	log_set_sink(NULL);
	if (!t->st.ended)
		log_info("the terminal is gone: %s", t->st.launched ? "tracing on until the program ends"
								    : "detaching");
	if (t->asked == REQ_NONE && !t->st.launched)
		session_request(t->asked = REQ_DETACH);
	for (session_status_get(&t->st); !t->st.ended; session_status_get(&t->st))
		nanosleep(&pause, NULL);
}

static void tui_loop(struct tui *t)
{
	double delay = t->opt->delay_s > 0 ? t->opt->delay_s : 1;
	bool ended = false, dirty = true;
	int failed_reads = 0;

	t->step = (uint64_t)(delay * 1e9);
	t->next_ns = now_ns() + t->step;
	tui_take(t);
	for (;;) {
		uint64_t now;
		int ch, wait_ms;
		char status[sizeof(t->drawn_status)];

		session_status_get(&t->st);
		if (t->st.ended && !ended) {	/* show the final figures */
			ended = dirty = true;
			/* q was pressed to quit and the program ended before k or d: nothing is left
			 * to kill or detach, so leave as q on the final figures does. (A q in the
			 * instant between the program's end and the session's sees the prompt.) */
			if (t->mode == MODE_ASK_QUIT)
				t->leave = true;
			tui_take(t);
			clearok(curscr, TRUE);
		}
		if (tui_done(t))
			return;
		/* Drawing sorts every row: only when something changed, not every poll. */
		screen_status_text(t, status, sizeof(status));
		if (dirty || strcmp(status, t->drawn_status) != 0)
			screen_draw(t);
		dirty = false;
		now = now_ns();
		wait_ms = t->next_ns > now ? (int)((t->next_ns - now) / 1000000) : 0;
		/* Once it ended no refresh is due: wait for a key, not 0 ms (that spun a core, and a
		 * lost terminal, whose reads fail at once, went unnoticed: gputop never left). */
		wait_ms = wait_ms < TUI_POLL_MS && !ended ? wait_ms : TUI_POLL_MS;
		wtimeout(stdscr, wait_ms);
		ch = wgetch(stdscr);
		/* This thread blocks every signal, so a read ends early only when it fails. */
		if (ch == ERR && wait_ms >= 20 && now_ns() - now < (uint64_t)wait_ms * 250000) {
			if (++failed_reads >= TUI_LOST_READS) {
				tui_lost(t);
				return;
			}
		} else {
			failed_reads = 0;
		}
		if (ch != ERR) {
			tui_acted(t, actions_key(t, ch));
			dirty = true;
		}
		now = now_ns();
		if (now >= t->next_ns && !ended) {
			tui_tick(t, now);
			dirty = true;
		}
	}
}

int tui_run(const struct ui_options *opt)
{
	struct tui t = { .opt = opt };

	for (int i = 0; i < TUI_VIEW_COUNT; i++) {
		t.vs[i].sort = tui_views[i]->default_sort;
		if (tui_views[i]->grouped)
			t.gvs[i].sort = tui_views[i]->grouped->default_sort;
	}
	history_init(&t.hist);
	session_status_get(&t.st);
	t.screen = tui_term_open(opt->no_color);
	if (!t.screen) {		/* no usable terminal after all: plain tables */
		log_warn("the terminal (TERM=%s) cannot show the TUI: plain tables instead",
			 getenv("TERM") ? getenv("TERM") : "");
		return batch_run(opt);
	}
	log_set_sink(screen_log_sink);
	tui_loop(&t);
	tui_term_close(t.screen);
	log_set_sink(NULL);
	rows_free(&t.rows);
	stats_snapshot_free(&t.cur);
	stats_snapshot_free(&t.prev);
	return 0;
}
