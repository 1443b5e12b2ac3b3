/* actions.c — what a key does in the TUI: keys.c's table says which action a key is; this
 * file does it, or hands it to the current view's table (table.c), and runs the two prompts
 * (the filter being typed, kill or detach). What needs new figures it asks of the loop
 * (ACTED_*); a detach or kill is a request to the session, never a call into the tracer. */
#include "tui_internal.h"
#include "keys.h"
#include "table.h"

#include <stdio.h>
#include <string.h>

static void actions_quit(struct tui *t)
{
	if (t->st.ended)
		t->leave = true;
	else if (t->st.launched)
		t->mode = MODE_ASK_QUIT;
	else if (t->asked == REQ_NONE)
		session_request(t->asked = REQ_DETACH);
}

static bool actions_has_table(struct tui *t)
{
	if (tui_view_now(t)->n_cols)
		return true;
	screen_say(t, "the Overview has no table: o l k b a switch views");
	return false;
}

/* The view's table: the cursor, the names sideways, sort, reverse. */
static void actions_table(struct tui *t, enum tui_action a, int ch)
{
	const struct tui_view *v = tui_view_now(t);
	struct tui_view_state *vs = tui_state_now(t);
	char what[96];
	bool changed;

	if (a != ACT_SCROLL && !actions_has_table(t))
		return;
	changed = tui_table_key(v, vs, a, ch);
	if (changed && a == ACT_SORT) {
		snprintf(what, sizeof(what), "sorted by %s", v->cols[vs->sort].title);
		screen_say(t, what);
	} else if (!changed && a == ACT_HSCROLL) {
		screen_say(t, "no long names here to scroll sideways");
	}
}

/* The next process alone, in the order they were seen, then all of them again. */
static int actions_process(struct tui *t)
{
	const struct stats_snapshot *s = &t->cur;
	char what[384];
	size_t next = 0;

	if (!t->have_cur || s->n_proc < 2) {
		screen_say(t, "one process is traced: nothing else to show");
		return 0;
	}
	if (t->only_pid)
		for (size_t i = 0; i < s->n_proc; i++)
			if (s->proc[i].info.pid == t->only_pid)
				next = i + 1;
	t->only_pid = next < s->n_proc ? s->proc[next].info.pid : 0;
	if (t->only_pid)
		snprintf(what, sizeof(what), "showing process %d (%.60s) alone: P for the next",
			 (int)t->only_pid, s->proc[next].info.command);
	else
		snprintf(what, sizeof(what), "showing all %zu processes", s->n_proc);
	screen_say(t, what);
	t->have_cur = false;	/* a fresh interval for what is shown now */
	stats_snapshot_free(&t->cur);
	return ACTED_TAKE;
}

/* Enter: the pane of call stacks behind the selected row, where the view has one. */
static void actions_stacks(struct tui *t)
{
	const struct tui_view *v = tui_view_now(t);
	const struct tui_view_state *vs = tui_state_now(t);
	if (!v->details) {
		screen_say(t, "no call stacks here: Enter opens them in Leaks, Memory, Kernels, API and Job");
	} else if (!vs->rows) {
		screen_say(t, "no row to open");
	} else if (!vs->selected && !t->opt->alloc_stacks) {	/* Leaks, Memory: allocations' stacks */
		screen_say(t, "no call stack: run with --stacks allocs to see where allocations are made");
	} else if (!vs->selected) {
		screen_say(t, "no call stack for this one: made before gputop came, or not read");
	} else {
		t->pane_kind = v->details - 1;
		t->pane_subject = vs->selected;
		t->pane_scroll = 0;
		t->mode = MODE_STACKS;
	}
}

static void actions_group(struct tui *t)
{
	if (!tui_views[t->view]->grouped) {
		screen_say(t, "g groups the Leaks view by allocation site, the Memory view by line");
		return;
	}
	t->grouped[t->view] = !t->grouped[t->view];
	if (tui_views[t->view] == &view_memory)
		screen_say(t, t->grouped[t->view] ? "live blocks by line: g ungroups"
						  : "every live block: g groups them by line");
	else
		screen_say(t, t->grouped[t->view] ? "live allocations by allocation site: g ungroups"
						  : "every live allocation: g groups them by site");
}

/* The pane of stacks or the help: Up/Down/PgUp/PgDn scroll it (the draw stops it at its last
 * line), any other key closes it. */
static void actions_pane(struct tui *t, int *scroll, int ch)
{
	int step = ch == KEY_UP || ch == KEY_DOWN ? 1 : ch == KEY_PPAGE || ch == KEY_NPAGE ? 10 : 0;
	if (!step) {
		t->mode = MODE_NORMAL;
		return;
	}
	*scroll += ch == KEY_UP || ch == KEY_PPAGE ? -step : step;
	if (*scroll < 0)
		*scroll = 0;
}

static int actions_do(struct tui *t, const struct tui_key *k, int ch)
{
	struct tui_view_state *vs = tui_state_now(t);

	switch (k->action) {
	case ACT_QUIT: actions_quit(t); break;
	case ACT_HELP: t->mode = MODE_HELP; t->help_scroll = 0; break;
	case ACT_VIEW:
		for (int i = 0; i < TUI_VIEW_COUNT; i++)
			if (tui_views[i]->key == ch)
				t->view = i;
		t->by_gpu = false;
		break;
	case ACT_NEXT_VIEW: t->view = (t->view + 1) % TUI_VIEW_COUNT; t->by_gpu = false; break;
	case ACT_PREV_VIEW: t->view = (t->view + TUI_VIEW_COUNT - 1) % TUI_VIEW_COUNT; t->by_gpu = false; break;
	case ACT_SCROLL:
	case ACT_HSCROLL:
	case ACT_SORT:
	case ACT_REVERSE: actions_table(t, k->action, ch); break;
	case ACT_FILTER:
		if (actions_has_table(t)) {
			snprintf(t->edit, sizeof(t->edit), "%s", vs->filter);
			t->mode = MODE_FILTER;
		}
		break;
	case ACT_PAUSE:
		t->paused = !t->paused;
		screen_say(t, t->paused ? "display paused, tracing goes on: p resumes"
					: "display resumed");
		if (!t->paused)		/* a fresh interval from now, not a sliver of one */
			return ACTED_TAKE;
		break;
	case ACT_RESET:
		screen_say(t, "counters reset to zero");
		return ACTED_RESET;
	case ACT_REDRAW: clearok(curscr, TRUE); break;
	case ACT_PROCESS: return actions_process(t);
	case ACT_STACKS: actions_stacks(t); break;
	case ACT_GROUP: actions_group(t); break;
	case ACT_MEMORY_AT:
		if (ch == 'O' && t->have_cur && t->rows.torch.snap && t->rows.torch.snap->oom_view) {
			t->mode = MODE_OOM;
			t->oom_scroll = 0;
		} else if (ch == 'O') {
			screen_say(t, "no out-of-memory seen: O shows the Memory view as it was at one");
		} else if (t->opt->memory_snapshot) {
			session_ask_memory_snapshot();
			screen_say(t, "PyTorch's memory snapshot: written at the next look (a line says where)");
		} else {
			screen_say(t, "no --memory-snapshot FILE given: no snapshot to write");
		}
		break;
	case ACT_BY_GPU:
		t->by_gpu = !t->by_gpu;
		screen_say(t, t->by_gpu ? "by GPU: G again goes back" : "back to the view");
		break;
	}
	return 0;
}

static void actions_filter_prompt(struct tui *t, int ch)
{
	struct tui_view_state *vs = tui_state_now(t);
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

static void actions_quit_prompt(struct tui *t, int ch)
{
	if (ch == 'k' || ch == 'd') {
		session_request(t->asked = ch == 'k' ? REQ_KILL : REQ_DETACH);
		t->mode = MODE_NORMAL;
	} else if (ch == TUI_ESC || ch == 'q') {
		t->mode = MODE_NORMAL;
	}
}

int actions_key(struct tui *t, int ch)
{
	const struct tui_key *k;

	if (ch == KEY_RESIZE) {		/* ncurses resized stdscr: lay out again, all of it */
		clearok(curscr, TRUE);
		return 0;
	}
	switch (t->mode) {
	case MODE_HELP: actions_pane(t, &t->help_scroll, ch); return 0;
	case MODE_FILTER: actions_filter_prompt(t, ch); return 0;
	case MODE_ASK_QUIT: actions_quit_prompt(t, ch); return 0;
	case MODE_STACKS: actions_pane(t, &t->pane_scroll, ch); return 0;
	case MODE_OOM: actions_pane(t, &t->oom_scroll, ch); return 0;	/* O, Esc: live */
	case MODE_NORMAL: break;
	}
	if (t->st.ended && ch == TUI_ESC)
		return 0;
	k = keys_find(ch);
	return k ? actions_do(t, k, ch) : 0;
}
