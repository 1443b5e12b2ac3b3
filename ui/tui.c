/* tui.c — the live ncurses TUI: owns the loop (a refresh every -d seconds, keys read with a
 * timeout so they act at once), the layout (header, view tabs, the current view, status line,
 * function bar), the help overlay and the prompts. Views draw (most with table.c); term.c
 * owns the terminal and its colors; keys.c says which key does what. It reads statistics
 * snapshots and the session status and makes requests; it never touches the traced program,
 * and the tracer thread never waits for it. */
#include "ui.h"
#include "tui.h"
#include "crt.h"
#include "keys.h"
#include "format.h"
#include "log.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TUI_MIN_W	60		/* below this the layout does not fit: say so instead */
#define TUI_MIN_H	14
#define TUI_POLL_MS	100		/* how often the session's state is looked at */
#define TUI_MSG_NS	15000000000ull	/* a log message stays this long in the status line */
#define TUI_ESC		27
#define TUI_LOST_READS	20		/* reads failing at once in a row: the terminal is gone */

static const struct tui_view *const views[] = {
	&view_overview, &view_leaks, &view_kernels, &view_bandwidth, &view_api,
};
#define VIEW_COUNT ((int)(sizeof(views) / sizeof(views[0])))

enum tui_mode { MODE_NORMAL, MODE_HELP, MODE_FILTER, MODE_ASK_QUIT };

struct tui {
	const struct options *opt;
	SCREEN *screen;
	int view;
	struct tui_view_state vs[VIEW_COUNT];
	struct stats_snapshot cur, prev;	/* shown; prev for the interval rates */
	bool have_cur;
	struct session_status st;
	struct history hist;
	enum tui_mode mode;
	char edit[TUI_FILTER_LEN];		/* the filter being typed */
	bool paused;
	enum session_request asked;		/* what 'q' requested, REQ_NONE before */
	bool leave;
	long refreshes;
	uint64_t next_ns, step;			/* the next refresh; -d in ns */
	char info[128];				/* a short answer to the last key */
	uint64_t info_ns;
	char drawn_status[512];			/* the status line as last drawn */
};

/* Messages from gputop's own modules while the TUI owns the terminal (log_set_sink). */
static pthread_mutex_t msg_lock = PTHREAD_MUTEX_INITIALIZER;
static char msg_text[256];
static uint64_t msg_ns;

static uint64_t tui_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void tui_log_sink(const char *msg)
{
	pthread_mutex_lock(&msg_lock);
	snprintf(msg_text, sizeof(msg_text), "%s", msg);
	msg_ns = tui_now();
	pthread_mutex_unlock(&msg_lock);
}

/* ---- figures for views ---- */

uint64_t tui_delta(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : cur;	/* a reset ('z') in between: count from zero */
}

uint64_t tui_interval_ns(const struct tui_frame *f)
{
	return f->prev ? tui_delta(f->cur->t_ns, f->prev->t_ns) : 0;
}

void tui_launch_count(char *buf, size_t n, uint64_t v, bool estimated)
{
	char c[FMT_LEN];

	fmt_count(c, sizeof(c), v);
	snprintf(buf, n, "%s%s", estimated ? "~" : "", c);
}

void tui_per_sec(char *buf, size_t n, uint64_t delta, uint64_t ns, bool estimated)
{
	char c[FMT_LEN];
	double v;

	if (!ns) {
		snprintf(buf, n, "%s", fmt_dash());
		return;
	}
	v = (double)delta * 1e9 / (double)ns;
	if (v > 0 && v < 9.95)
		snprintf(c, sizeof(c), "%.1f", v);
	else
		fmt_count(c, sizeof(c), (uint64_t)(v + 0.5));
	snprintf(buf, n, "%s%s", estimated ? "~" : "", c);
}

/* ---- figures ---- */

static void tui_take(struct tui *t)
{
	struct stats_snapshot s;

	if (stats_snapshot(&s) < 0)
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
}

static void tui_reset(struct tui *t)
{
	stats_reset();
	t->have_cur = false;
	stats_snapshot_free(&t->cur);
	t->paused = false;
	tui_take(t);
}

static void tui_say(struct tui *t, const char *what)
{
	snprintf(t->info, sizeof(t->info), "%s", what);
	t->info_ns = tui_now();
}

/* ---- layout ---- */

static bool tui_estimated(const struct tui *t)
{
	return t->st.launches_estimated || (t->have_cur && t->cur.launches_estimated);
}

static void tui_draw_header(const struct tui *t, int width)
{
	char line[512], age[FMT_LEN];
	uint64_t now = t->have_cur ? t->cur.t_ns : tui_now();
	int threads = t->have_cur ? t->cur.threads : 0;

	fmt_age(age, sizeof(age), now >= t->st.start_ns ? now - t->st.start_ns : 0);

	snprintf(line, sizeof(line), "gputop %s %s PID %d, %d thread%s, %s %s %s", GPUTOP_VERSION,
		 fmt_dash(), (int)t->st.pid, threads, threads == 1 ? "" : "s", age, fmt_dash(),
		 t->st.command);
	tui_put(stdscr, 0, 0, width, A_BOLD, line);
}

static void tui_draw_tabs(const struct tui *t, int width)
{
	int x = 0;

	for (int i = 0; i < VIEW_COUNT && x < width; i++) {
		char tab[32];

		snprintf(tab, sizeof(tab), " %s ", views[i]->name);
		tui_put(stdscr, 1, x, width - x, i == t->view ? tui_attr(TC_TAB) : 0, tab);
		/* The key is the name's first letter (in lower case): underline it. */
		tui_put(stdscr, 1, x + 1, 1, (i == t->view ? tui_attr(TC_TAB) : 0) | A_UNDERLINE,
			(char[]){ views[i]->name[0], 0 });
		x += fmt_width(tab) + 1;
	}
}

static void tui_exit_note(const struct session_status *st, char *buf, size_t n)
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

/* The left part of the status line: the most pressing thing to say. */
static int tui_status_text(const struct tui *t, char *buf, size_t n)
{
	uint64_t now = tui_now();
	char msg[sizeof(msg_text)];
	uint64_t msg_at;

	pthread_mutex_lock(&msg_lock);
	snprintf(msg, sizeof(msg), "%s", msg_text);
	msg_at = msg_ns;
	pthread_mutex_unlock(&msg_lock);

	if (t->mode == MODE_FILTER) {
		snprintf(buf, n, "Filter %s: %s_   (Enter applies, Esc clears)", views[t->view]->name,
			 t->edit);
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
		tui_exit_note(&t->st, buf, n);
		return tui_attr(TC_WARN) | A_REVERSE;
	}
	if (t->info[0] && now - t->info_ns < TUI_MSG_NS / 3) {
		snprintf(buf, n, "%s", t->info);
		return A_BOLD;
	}
	if (msg[0] && now - msg_at < TUI_MSG_NS) {
		snprintf(buf, n, "%s", msg);
		return tui_attr(TC_WARN);
	}
	if (!t->st.cuda_seen) {
		snprintf(buf, n, "no CUDA library in %d yet: waiting for one to load", (int)t->st.pid);
		return tui_attr(TC_WARN);
	}
	if (tui_estimated(t)) {
		snprintf(buf, n, "~ launch figures are estimates (--max-overhead samples launches)");
		return tui_attr(TC_WARN);
	}
	buf[0] = '\0';
	return A_NORMAL;
}

/* The right part: PAUSED, the filter, the rows shown. */
static void tui_status_flags(const struct tui *t, char *buf, size_t n)
{
	const struct tui_view_state *vs = &t->vs[t->view];
	size_t used = 0;

	buf[0] = '\0';
	if (tui_estimated(t))
		used += (size_t)snprintf(buf + used, n - used, " ~estimates");
	if (vs->filter[0] && used < n)
		used += (size_t)snprintf(buf + used, n - used, " filter:%s", vs->filter);
	if (views[t->view]->n_cols && vs->rows > vs->page && used < n)
		used += (size_t)snprintf(buf + used, n - used, " %d-%d/%d", vs->scroll + 1,
					 vs->scroll + vs->page, vs->rows);
	if (t->paused && used < n)
		snprintf(buf + used, n - used, " PAUSED");
}

static void tui_draw_status(struct tui *t, int y, int width)
{
	char left[512], right[160];
	int attr = tui_status_text(t, left, sizeof(left)), rw;

	snprintf(t->drawn_status, sizeof(t->drawn_status), "%s", left);
	tui_status_flags(t, right, sizeof(right));
	rw = fmt_width(right);
	if (rw > width / 2)
		rw = width / 2;
	tui_put(stdscr, y, 0, width - rw - 1, attr, left);
	if (rw)
		tui_put(stdscr, y, width - rw, rw, A_BOLD | (t->paused ? A_REVERSE : 0), right);
}

/* The function bar: each key of the table that has a label, like htop's F-key bar. */
static void tui_draw_bar(int y, int width)
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

/* The help overlay: every row of the key table, so it can never lie. */
static void tui_draw_help(int h, int width)
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
	for (int y = 0; y < bh; y++)
		tui_fill(stdscr, y0 + y, x0, bw, A_NORMAL);
	wattrset(stdscr, A_BOLD);
	mvwhline(stdscr, y0, x0, ACS_HLINE, bw);
	mvwhline(stdscr, y0 + bh - 1, x0, ACS_HLINE, bw);
	mvwvline(stdscr, y0, x0, ACS_VLINE, bh);
	mvwvline(stdscr, y0, x0 + bw - 1, ACS_VLINE, bh);
	mvwaddch(stdscr, y0, x0, ACS_ULCORNER);
	mvwaddch(stdscr, y0, x0 + bw - 1, ACS_URCORNER);
	mvwaddch(stdscr, y0 + bh - 1, x0, ACS_LLCORNER);
	mvwaddch(stdscr, y0 + bh - 1, x0 + bw - 1, ACS_LRCORNER);
	wattrset(stdscr, A_NORMAL);
	tui_put(stdscr, y0, x0 + 2, bw - 4, A_BOLD, " gputop keys ");
	for (size_t i = 0; i < tui_keys_count && (int)i + 2 < bh - 1; i++) {
		tui_put(stdscr, y0 + 2 + (int)i, x0 + 2, names_w, tui_attr(TC_VALUE), tui_keys[i].names);
		tui_put(stdscr, y0 + 2 + (int)i, x0 + 4 + names_w, bw - names_w - 6, A_NORMAL,
			tui_keys[i].help);
	}
}

static void tui_draw_too_small(int h, int width)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "terminal too small: need %dx%d", TUI_MIN_W, TUI_MIN_H);
	tui_put(stdscr, h / 2, width > fmt_width(msg) ? (width - fmt_width(msg)) / 2 : 0, width,
		A_BOLD, msg);
}

static void tui_draw(struct tui *t)
{
	int h, w;

	getmaxyx(stdscr, h, w);
	werase(stdscr);
	if (w < TUI_MIN_W || h < TUI_MIN_H) {
		tui_draw_too_small(h, w);
	} else {
		struct tui_frame f = {
			.cur = &t->cur, .prev = &t->prev, .st = &t->st, .hist = &t->hist,
			.estimated = tui_estimated(t),
		};
		struct tui_rect body = { 3, 1, h - 6, w - 2 };

		tui_draw_header(t, w);
		tui_draw_tabs(t, w);
		if (t->have_cur)
			views[t->view]->draw(stdscr, body, &f, &t->vs[t->view]);
		else
			tui_put(stdscr, body.y, body.x, body.w, A_NORMAL, "waiting for figures");
		tui_draw_status(t, h - 2, w);
		tui_draw_bar(h - 1, w);
		if (t->mode == MODE_HELP)
			tui_draw_help(h, w);
	}
	wnoutrefresh(stdscr);
	doupdate();
}

/* ---- keys ---- */

static void tui_quit(struct tui *t)
{
	if (t->st.ended)
		t->leave = true;
	else if (t->st.launched)
		t->mode = MODE_ASK_QUIT;
	else if (t->asked == REQ_NONE)
		session_request(t->asked = REQ_DETACH);
}

static void tui_scroll(struct tui_view_state *vs, int ch)
{
	int page = vs->page > 1 ? vs->page : 1;

	switch (ch) {
	case KEY_UP: vs->scroll--; break;
	case KEY_DOWN: vs->scroll++; break;
	case KEY_PPAGE: vs->scroll -= page; break;
	case KEY_NPAGE: vs->scroll += page; break;
	case KEY_HOME: vs->scroll = 0; break;
	case KEY_END: vs->scroll = INT_MAX / 2; break;	/* the draw clamps it */
	}
}

static void tui_sort_next(struct tui *t)
{
	const struct tui_view *v = views[t->view];
	struct tui_view_state *vs = &t->vs[t->view];

	for (int i = 1; i <= v->n_cols; i++) {
		int c = (vs->sort + i) % v->n_cols;

		if (v->cols[c].sort != SORT_NONE) {
			char what[96];

			vs->sort = c;
			vs->scroll = 0;
			snprintf(what, sizeof(what), "sorted by %s", v->cols[c].title);
			tui_say(t, what);
			return;
		}
	}
}

static bool tui_has_table(struct tui *t)
{
	if (views[t->view]->n_cols)
		return true;
	tui_say(t, "the Overview has no table: o l k b a switch views");
	return false;
}

static void tui_action(struct tui *t, const struct tui_key *k, int ch)
{
	struct tui_view_state *vs = &t->vs[t->view];

	switch (k->action) {
	case ACT_QUIT: tui_quit(t); break;
	case ACT_HELP: t->mode = MODE_HELP; break;
	case ACT_VIEW:
		for (int i = 0; i < VIEW_COUNT; i++)
			if (views[i]->key == ch)
				t->view = i;
		break;
	case ACT_NEXT_VIEW: t->view = (t->view + 1) % VIEW_COUNT; break;
	case ACT_PREV_VIEW: t->view = (t->view + VIEW_COUNT - 1) % VIEW_COUNT; break;
	case ACT_SCROLL: tui_scroll(vs, ch); break;
	case ACT_SORT:
		if (tui_has_table(t))
			tui_sort_next(t);
		break;
	case ACT_REVERSE:
		if (tui_has_table(t)) {
			vs->reverse = !vs->reverse;
			vs->scroll = 0;
		}
		break;
	case ACT_FILTER:
		if (tui_has_table(t)) {
			snprintf(t->edit, sizeof(t->edit), "%s", vs->filter);
			t->mode = MODE_FILTER;
		}
		break;
	case ACT_PAUSE:
		t->paused = !t->paused;
		tui_say(t, t->paused ? "display paused, tracing goes on: p resumes" : "display resumed");
		if (!t->paused) {	/* a fresh interval from now, not a sliver of one */
			tui_take(t);
			t->next_ns = tui_now() + t->step;
		}
		break;
	case ACT_RESET:
		tui_reset(t);
		t->next_ns = tui_now() + t->step;
		tui_say(t, "counters reset to zero");
		break;
	case ACT_REDRAW: clearok(curscr, TRUE); break;
	}
}

static void tui_key_filter(struct tui *t, int ch)
{
	struct tui_view_state *vs = &t->vs[t->view];
	size_t len = strlen(t->edit);

	if (ch == TUI_ESC) {
		vs->filter[0] = '\0';
		vs->scroll = 0;
		t->mode = MODE_NORMAL;
	} else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		snprintf(vs->filter, sizeof(vs->filter), "%s", t->edit);
		vs->scroll = 0;
		t->mode = MODE_NORMAL;
	} else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (len)
			t->edit[len - 1] = '\0';
	} else if (ch >= 0x20 && ch < 0x7f && len + 1 < sizeof(t->edit)) {
		t->edit[len] = (char)ch;
		t->edit[len + 1] = '\0';
	}
}

static void tui_key_ask_quit(struct tui *t, int ch)
{
	if (ch == 'k' || ch == 'd') {
		session_request(t->asked = ch == 'k' ? REQ_KILL : REQ_DETACH);
		t->mode = MODE_NORMAL;
	} else if (ch == TUI_ESC || ch == 'q') {
		t->mode = MODE_NORMAL;
	}
}

static void tui_key(struct tui *t, int ch)
{
	const struct tui_key *k;

	if (ch == KEY_RESIZE) {		/* ncurses resized stdscr: lay out again, all of it */
		clearok(curscr, TRUE);
		return;
	}
	switch (t->mode) {
	case MODE_HELP: t->mode = MODE_NORMAL; return;
	case MODE_FILTER: tui_key_filter(t, ch); return;
	case MODE_ASK_QUIT: tui_key_ask_quit(t, ch); return;
	case MODE_NORMAL: break;
	}
	if (t->st.ended && ch == TUI_ESC)
		return;
	k = keys_find(ch);
	if (k)
		tui_action(t, k, ch);
}

/* ---- the loop ---- */

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
		session_request(t->asked = REQ_DETACH);
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
	t->next_ns = tui_now() + t->step;
	tui_take(t);
	for (;;) {
		uint64_t now;
		int ch, wait_ms;

		char status[sizeof(t->drawn_status)];

		session_status_get(&t->st);
		if (t->st.ended && !ended) {	/* show the final figures */
			ended = dirty = true;
			t->mode = t->mode == MODE_ASK_QUIT ? MODE_NORMAL : t->mode;
			tui_take(t);
			clearok(curscr, TRUE);
		}
		if (tui_done(t))
			return;
		/* Drawing sorts every row: only when something changed, not every poll. */
		tui_status_text(t, status, sizeof(status));
		if (dirty || strcmp(status, t->drawn_status) != 0)
			tui_draw(t);
		dirty = false;
		now = tui_now();
		wait_ms = t->next_ns > now ? (int)((t->next_ns - now) / 1000000) : 0;
		/* Once it ended no refresh is due: wait for a key, not 0 ms (that spun a core, and a
		 * lost terminal, whose reads fail at once, went unnoticed: gputop never left). */
		wait_ms = wait_ms < TUI_POLL_MS && !ended ? wait_ms : TUI_POLL_MS;
		wtimeout(stdscr, wait_ms);
		ch = wgetch(stdscr);
		/* This thread blocks every signal, so a read ends early only when it fails. */
		if (ch == ERR && wait_ms >= 20 && tui_now() - now < (uint64_t)wait_ms * 250000) {
			if (++failed_reads >= TUI_LOST_READS) {
				tui_lost(t);
				return;
			}
		} else {
			failed_reads = 0;
		}
		if (ch != ERR) {
			tui_key(t, ch);
			dirty = true;
		}
		now = tui_now();
		if (now >= t->next_ns && !ended) {
			tui_tick(t, now);
			dirty = true;
		}
	}
}

int tui_run(const struct options *opt)
{
	struct tui t = { .opt = opt };

	for (int i = 0; i < VIEW_COUNT; i++)
		t.vs[i].sort = views[i]->default_sort;
	history_init(&t.hist);
	session_status_get(&t.st);
	t.screen = tui_term_open(opt->no_color);
	if (!t.screen) {		/* no usable terminal after all: plain tables */
		log_warn("the terminal (TERM=%s) cannot show the TUI: plain tables instead",
			 getenv("TERM") ? getenv("TERM") : "");
		return batch_run(opt);
	}
	log_set_sink(tui_log_sink);
	tui_loop(&t);
	tui_term_close(t.screen);
	log_set_sink(NULL);
	stats_snapshot_free(&t.cur);
	stats_snapshot_free(&t.prev);
	return 0;
}
