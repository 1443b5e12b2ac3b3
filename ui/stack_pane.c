/* stack_pane.c — the pane of call stacks (stack_pane.h): its lines are written first, then
 * the part that fits is drawn in a box, as the help overlay is. */
#include "stack_pane.h"
#include "crt.h"
#include "cuda_api.h"
#include "format.h"
#include "cells.h"
#include "job_live.h"
#include "stack_text.h"
#include "stacks.h"
#include "stats.h"

#include <curses.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LINES_MAX = 4000, LINE_LEN = 512 };

struct pane {
	char (*line)[LINE_LEN];
	int n;
};

static void add(struct pane *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct pane *p, const char *fmt, ...)
{
	va_list ap;
	if (p->n >= LINES_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(p->line[p->n++], LINE_LEN, fmt, ap);
	va_end(ap);
}

static void add_stack(struct pane *p, uint32_t id)
{
	const struct stack *st = stacks_get(id);
	char frame[LINE_LEN];
	if (!st) {
		add(p, "  (no stack taken: see --stacks in gputop(1))");
		return;
	}
	for (uint32_t i = 0; i < st->n; i++) {
		stack_text_frame(frame, sizeof frame, &st->frame[i]);
		add(p, "  %s", frame);
	}
	if (st->truncated)
		add(p, "  ... (deeper than --stack-depth)");
}

static void add_thread(struct pane *p, const struct job_thread *t)
{
	char call[LINE_LEN];
	cells_job_call(call, sizeof call, t);
	add(p, "%s", "");
	add(p, "thread %d (%s): %s", (int)t->tid, t->name, call);
	const struct stack *st = stacks_get(t->stack);
	bool native = false;
	for (uint32_t k = 0; st && k < st->n; k++)
		native |= !st->frame[k].python;
	add_stack(p, t->stack);
	if (st && !native)
		add(p, "  (Python frames, read while it runs; native frames need a stop: gputop --dump)");
}

/* A process of the live picture of the job: what it is in, its threads' calls and stacks, and
 * what the live picture cannot know. */
static void fill_job(struct pane *p, pid_t pid, struct job_live *live)
{
	struct job *j = job_live_copy(live);
	const struct job_process *jp = NULL;
	for (int i = 0; j && i < j->n && !jp; i++)
		if (j->proc[i].pid == pid)
			jp = &j->proc[i];
	if (!jp) {
		add(p, "process %d is not in the picture of the job any more", (int)pid);
		job_free(j);
		return;
	}
	struct cells_job c;
	cells_job(&c, jp);
	add(p, "process %d  rank %s  collectives %s since the attach  wait share %s of the last %.1f s", (int)pid,
	    c.rank, c.collectives, c.wait, (double)jp->watched_ns / 1e9);
	add(p, "odd one out: %s", c.odd);
	if (jp->odd & JOB_ODD_WAITS_LEAST)
		add(p, "  it waited %.0f%% of the time, every other rank %.0f%% more at least: the one they wait for",
		    100 * jp->wait_share, 100 * JOB_STRAGGLER_GAP);
	/* The main thread first (where a training loop runs), then those in a call, then the rest. */
	for (int pass = 0; pass < 3; pass++)
		for (int i = 0; i < jp->n_threads; i++) {
			const struct job_thread *t = &jp->threads[i];
			int order = t->tid == jp->pid ? 0 : t->api >= 0 ? 1 : 2;
			if (order == pass)
				add_thread(p, t);
		}
	add(p, "%s", "");
	if (jp->quiet_threads)
		add(p, "%d more thread%s: in no CUDA or NCCL call gputop saw begin, and running no Python code",
		    jp->quiet_threads, jp->quiet_threads == 1 ? "" : "s");
	add(p, "A call entered before gputop attached is not seen here (its Python line is): gputop --dump");
	add(p, "names it from the thread's stack.");
	job_free(j);
}

static void fill(struct pane *p, int kind, uint64_t subject, pid_t pid, const char **title, struct job_live *live)
{
	struct stacks_snapshot ss;
	if (kind == PANE_JOB_THREADS) {
		*title = " Threads of the process, now ";
		fill_job(p, (pid_t)subject, live);
		return;
	}
	if (kind == PANE_STACK) {
		*title = " Call stack, innermost first ";
		add_stack(p, (uint32_t)subject);
		return;
	}
	if (stacks_snapshot(&ss) < 0) {
		add(p, "out of memory");
		return;
	}
	if (kind == PANE_LAUNCH_SITES) {
		const char *name = (const char *)(uintptr_t)subject;
		*title = " Launch sites ";
		add(p, "%s", name);
		for (size_t i = 0; i < ss.n_launch; i++) {
			if (!stacks_launch_site_of(&ss.launch[i], name, pid))
				continue;
			add(p, "%s", "");
			add(p, "launched from here (%" PRIu64 " launch%s seen with a stack):", ss.launch[i].samples,
			    ss.launch[i].samples == 1 ? "" : "es");
			add_stack(p, ss.launch[i].stack);
		}
	} else {
		const struct api_spec *s = cuda_api_get((int)subject - 1);
		*title = " Error sites ";
		add(p, "%s", s ? s->name : "?");
		for (size_t i = 0; i < ss.n_error; i++) {
			if (ss.error[i].api != (int)subject - 1 || !stacks_in_process(ss.error[i].stack, pid))
				continue;
			const char *err = s ? cuda_error_name(s->layer, ss.error[i].err) : NULL;
			add(p, "%s", "");
			add(p, "error %d%s%s, %" PRIu64 " time%s, from here:", ss.error[i].err, err ? " " : "",
			    err ? err : "", ss.error[i].count, ss.error[i].count == 1 ? "" : "s");
			add_stack(p, ss.error[i].stack);
		}
	}
	if (p->n <= 1)
		add(p, "no stack was taken: gputop takes them at the calls that stop (--stacks)");
	stacks_snapshot_free(&ss);
}

int stack_pane_draw(int h, int w, int kind, uint64_t subject, pid_t pid, int scroll, struct job_live *live)
{
	struct pane p = { .line = calloc(LINES_MAX, LINE_LEN) };
	const char *title = "";
	if (!p.line)
		return scroll;
	fill(&p, kind, subject, pid, &title, live);
	int bw = w - 2, bh = p.n + 4 < h - 2 ? p.n + 4 : h - 2, y0 = (h - bh) / 2, x0 = 1;
	int rows = bh - 4, max = p.n > rows ? p.n - rows : 0;
	scroll = scroll > max ? max : scroll;
	tui_box(stdscr, y0, x0, bh, bw);
	tui_put(stdscr, y0, x0 + 2, bw - 4, A_BOLD, title);
	for (int i = 0; i < rows && scroll + i < p.n; i++)
		tui_put(stdscr, y0 + 2 + i, x0 + 2, bw - 4, i + scroll == 0 ? A_BOLD : A_NORMAL, p.line[scroll + i]);
	tui_put(stdscr, y0 + bh - 1, x0 + 2, bw - 4, tui_attr(TC_DIM),
		max ? " Up/Down/PgUp/PgDn scroll, any other key closes " : " any key closes ");
	free(p.line);
	return scroll;
}
