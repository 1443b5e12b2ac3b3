/* screen.c — the TUI's layout, drawn from its state (tui_internal.h): the header (since when
 * the figures count, after z), the view tabs, the current view, the status line (gputop's own
 * messages and answers to keys, for a few seconds), the function bar and the help overlay
 * (help.c). It only draws and says; keys are actions.c's. */
#include "tui_internal.h"
#include "clock.h"
#include "cells.h"
#include "crt.h"
#include "format.h"
#include "meters.h"
#include "oom_pane.h"
#include "stack_pane.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define TUI_MIN_W	60		/* below this the layout does not fit: say so instead */
#define TUI_MIN_H	14
#define TUI_MSG_NS	5000000000ull	/* a message of gputop's stays this long in the status line */
#define TUI_SAY_NS	3000000000ull	/* ... and an answer to a key this long */

/* Messages from gputop's own modules while the TUI owns the terminal (log_set_sink). */
static struct {
	pthread_mutex_t msg_lock;
	char msg_text[256];
	uint64_t msg_ns;
} status_line = { .msg_lock = PTHREAD_MUTEX_INITIALIZER };

void screen_log_sink(const char *msg)
{
	pthread_mutex_lock(&status_line.msg_lock);
	snprintf(status_line.msg_text, sizeof(status_line.msg_text), "%s", msg);
	status_line.msg_ns = now_ns();
	pthread_mutex_unlock(&status_line.msg_lock);
}

void screen_say(struct tui *t, const char *what)
{
	snprintf(t->info, sizeof(t->info), "%s", what);
	t->info_ns = now_ns();
}

bool screen_estimated(const struct tui *t)
{
	return t->have_cur && t->cur.launches_estimated;
}

/* ", figures since 12:34:56" once z reset them; "" before. */
static void screen_since(const struct tui *t, char *buf, size_t n)
{
	struct tm tm;
	char hms[16];

	buf[0] = '\0';
	if (!t->reset_at || !localtime_r(&t->reset_at, &tm))
		return;
	strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
	snprintf(buf, n, ", figures since %s", hms);
}

static void screen_header(const struct tui *t, int width)
{
	char line[512], age[FMT_LEN], since[48];
	uint64_t now = t->have_cur ? t->cur.t_ns : now_ns();
	int threads = t->have_cur ? t->cur.threads : 0;

	fmt_age(age, sizeof(age), now >= t->st.start_ns ? now - t->st.start_ns : 0);

	size_t procs = t->have_cur ? t->cur.n_proc : 1;
	char who[64];
	if (procs > 1)
		snprintf(who, sizeof(who), "%zu processes (PID %d first)", procs, (int)t->st.pid);
	else
		snprintf(who, sizeof(who), "PID %d", (int)t->st.pid);
	screen_since(t, since, sizeof(since));
	snprintf(line, sizeof(line), "gputop %s %s %s, %d thread%s, %s%s %s %s", GPUTOP_VERSION,
		 fmt_dash(), who, threads, threads == 1 ? "" : "s", age, since, fmt_dash(),
		 t->st.command);
	tui_put(stdscr, 0, 0, width, A_BOLD, line);
}

static void screen_tabs(const struct tui *t, int y, int width)
{
	int x = 0;

	for (int i = 0; i < TUI_VIEW_COUNT && x < width; i++) {
		char tab[32];

		snprintf(tab, sizeof(tab), " %s ", tui_views[i]->name);
		tui_put(stdscr, y, x, width - x, i == t->view ? tui_attr(TC_TAB) : 0, tab);
		/* The key is the name's first letter (in lower case): underline it. */
		tui_put(stdscr, y, x + 1, 1, (i == t->view ? tui_attr(TC_TAB) : 0) | A_UNDERLINE,
			(char[]){ tui_views[i]->name[0], 0 });
		x += fmt_width(tab) + 1;
	}
}

static void screen_exit_note(const struct session_status *st, char *buf, size_t n)
{
	if (st->exited && st->term_signal)
		snprintf(buf, n, "program killed by signal %d %s press q to quit", st->term_signal,
			 fmt_dash());
	else if (st->exited)
		snprintf(buf, n, "program exited with status %d %s press q to quit", st->exit_status,
			 fmt_dash());
	else
		snprintf(buf, n, "tracing ended, the program runs on %s press q to quit", fmt_dash());
}

/* The most pressing thing to say. */
int screen_status_text(const struct tui *t, char *buf, size_t n)
{
	uint64_t now = now_ns();
	char msg[sizeof(status_line.msg_text)];
	uint64_t msg_at;

	pthread_mutex_lock(&status_line.msg_lock);
	snprintf(msg, sizeof(msg), "%s", status_line.msg_text);
	msg_at = status_line.msg_ns;
	pthread_mutex_unlock(&status_line.msg_lock);

	if (t->mode == MODE_FILTER) {
		snprintf(buf, n, "Filter %s: %s_   (Enter applies, Esc clears)",
			 tui_views[t->view]->name, t->edit);
		return A_BOLD;
	}
	if (t->mode == MODE_ASK_QUIT) {
		snprintf(buf, n, "k: kill the program, d: detach and let it run, Esc: cancel");
		return tui_attr(TC_WARN) | A_REVERSE;
	}
	if (t->asked != REQ_NONE && !t->st.ended) {
		snprintf(buf, n, "%s %d%s", t->asked == REQ_KILL ? "killing" : "detaching from",
			 (int)t->st.pid, fmt_ascii() ? "..." : "\u2026");
		return tui_attr(TC_WARN);
	}
	if (t->st.ended) {
		screen_exit_note(&t->st, buf, n);
		return tui_attr(TC_WARN) | A_REVERSE;
	}
	if (t->info[0] && now - t->info_ns < TUI_SAY_NS) {
		snprintf(buf, n, "%s", t->info);
		return A_BOLD;
	}
	if (msg[0] && now - msg_at < TUI_MSG_NS) {
		snprintf(buf, n, "%s", msg);
		return tui_attr(TC_WARN);
	}
	if (t->have_cur && t->rows.torch.snap && t->rows.torch.snap->n_oom) {	/* it stays */
		cells_torch_oom(buf, n, &t->rows.torch.snap->oom[t->rows.torch.snap->n_oom - 1]);
		return tui_attr(TC_WARN) | A_REVERSE;
	}
	if (!t->st.cuda_seen && (!t->st.launched || now - t->st.start_ns >= NO_CUDA_NEWS_NS)) {
		snprintf(buf, n, "no CUDA library in %d yet: waiting for one to load", (int)t->st.pid);
		return tui_attr(TC_WARN);
	}
	if (t->have_cur) {
		cells_all_failed(buf, n, &t->rows);
		if (buf[0])
			return tui_attr(TC_WARN);
	}
	if (screen_estimated(t)) {
		snprintf(buf, n, "~ launch figures are estimates (--max-overhead samples launches)");
		return tui_attr(TC_WARN);
	}
	buf[0] = '\0';
	return A_NORMAL;
}

/* The right part of the status line: PAUSED, the filter, the rows shown. */
static void screen_status_flags(const struct tui *t, char *buf, size_t n)
{
	const struct tui_view_state *vs = tui_state_now((struct tui *)t);
	size_t used = 0;

	buf[0] = '\0';
	if (screen_estimated(t))
		used += (size_t)snprintf(buf + used, n - used, " ~estimates");
	if (vs->filter[0] && used < n)
		used += (size_t)snprintf(buf + used, n - used, " filter:%s", vs->filter);
	if (tui_view_now(t)->n_cols && vs->rows > vs->page && used < n)
		used += (size_t)snprintf(buf + used, n - used, " %d-%d/%d", vs->scroll + 1,
					 vs->scroll + vs->page, vs->rows);
	if (t->paused && used < n)
		snprintf(buf + used, n - used, " PAUSED");
}

static void screen_status(struct tui *t, int y, int width)
{
	char left[512], right[160];
	int attr = screen_status_text(t, left, sizeof(left)), rw;

	snprintf(t->drawn_status, sizeof(t->drawn_status), "%s", left);
	screen_status_flags(t, right, sizeof(right));
	rw = fmt_width(right);
	if (rw > width / 2)
		rw = width / 2;
	tui_put(stdscr, y, 0, width - rw - 1, attr, left);
	if (rw)
		tui_put(stdscr, y, width - rw, rw, A_BOLD | (t->paused ? A_REVERSE : 0), right);
}

static void screen_too_small(int h, int width)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "terminal too small: need %dx%d", TUI_MIN_W, TUI_MIN_H);
	tui_put(stdscr, h / 2, width > fmt_width(msg) ? (width - fmt_width(msg)) / 2 : 0, width,
		A_BOLD, msg);
}

void screen_draw(struct tui *t)
{
	int h, w;

	getmaxyx(stdscr, h, w);
	werase(stdscr);
	if (w < TUI_MIN_W || h < TUI_MIN_H) {
		screen_too_small(h, w);
	} else {
		struct tui_frame f = {
			.cur = &t->cur, .prev = &t->prev, .rows = &t->rows, .st = &t->st, .hist = &t->hist,
			.estimated = screen_estimated(t), .dev = &t->dev, .job_live = t->opt->job_live,
		};
		/* The GPUs' meters under the header, as many as leave the views their room. */
		int meters = meters_lines(&t->dev) < h - TUI_MIN_H ? meters_lines(&t->dev) : h - TUI_MIN_H;
		meters = meters_draw(stdscr, 1, w, meters, &t->dev, t->st.pid);
		struct tui_rect body = { 3 + meters, 1, h - 6 - meters, w - 2 };

		screen_header(t, w);
		screen_tabs(t, 1 + meters, w);
		if (t->have_cur)
			tui_view_now(t)->draw(stdscr, body, &f, tui_state_now(t));
		else
			tui_put(stdscr, body.y, body.x, body.w, A_NORMAL, "waiting for figures");
		screen_status(t, h - 2, w);
		help_draw_bar(h - 1, w);
		if (t->mode == MODE_HELP)
			t->help_scroll = help_draw_overlay(h, w, t->help_scroll);
		if (t->mode == MODE_OOM && t->rows.torch.snap && t->rows.torch.snap->oom_view)
			t->oom_scroll = oom_pane_draw(h, w, t->rows.torch.snap, t->oom_scroll);
		if (t->mode == MODE_STACKS)
			t->pane_scroll = stack_pane_draw(h, w, t->pane_kind, t->pane_subject, t->only_pid,
							 t->pane_scroll, t->opt->job_live);
	}
	wnoutrefresh(stdscr);
	doupdate();
}
