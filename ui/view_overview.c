/* view_overview.c — the Overview: what is traced (PID, command, threads, for how long) and
 * the headline figures — live GPU memory and its peak, launches/s, H2D and D2H bandwidth,
 * API calls/s — now (over the last interval), in all since the launch or the attach, and a
 * sparkline of the last minute. A bandwidth is one thing in both columns: the bytes over the
 * time inside the copies (the Bandwidth view's LAST RATE and AVG RATE), so that one steady
 * copy reads the same in both. Draws from the frame only. */
#include "tui.h"
#include "cells.h"
#include "crt.h"
#include "device_rows.h"
#include "format.h"
#include "meters.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define LABEL_W	12
#define NOW_W	17
#define TOTAL_W	26

/* label | now | total | sparkline of the last minute (as many seconds as fit). */
static void overview_metric(WINDOW *w, struct tui_rect r, int y, const char *label,
			    const char *now, const char *total, const struct history *h,
			    enum history_series k, bool warn)
{
	double v[HISTORY_LEN];
	char spark[3 * HISTORY_LEN + 1];
	int n = history_get(h, k, v);
	int x = r.x, room;

	if (y >= r.y + r.h)
		return;
	tui_put(w, y, x, LABEL_W, tui_attr(TC_LABEL), label);
	x += LABEL_W + 1;
	tui_put(w, y, x, NOW_W, tui_attr(warn ? TC_WARN : TC_VALUE), now);
	x += NOW_W + 1;
	tui_put(w, y, x, TOTAL_W, tui_attr(TC_DIM), total);
	x += TOTAL_W + 1;
	room = r.x + r.w - x;
	if (room < 8)
		return;
	if (n > room)
		memmove(v, v + (n - room), (size_t)room * sizeof(v[0])), n = room;
	fmt_sparkline(spark, sizeof(spark), v, n, 0);
	tui_put(w, y, x, room, tui_attr(TC_SPARK), spark);
}

static void overview_target(WINDOW *w, struct tui_rect r, const struct tui_frame *f, int *y)
{
	const struct session_status *st = f->st;
	const struct stats_snapshot *s = f->cur;
	char line[TUI_CELL + 64], age[FMT_LEN], cuda[64];
	uint64_t start = st->start_ns ? st->start_ns : s->start_ns;

	fmt_age(age, sizeof(age), s->t_ns >= start ? s->t_ns - start : 0);
	tui_put(w, *y, r.x, LABEL_W, tui_attr(TC_LABEL), "Target");
	snprintf(line, sizeof(line), "PID %d  %s", (int)st->pid, st->command);
	tui_put(w, *y, r.x + LABEL_W + 1, r.w - LABEL_W - 1, tui_attr(TC_VALUE), line);
	(*y)++;
	if (st->cuda_seen)
		snprintf(cuda, sizeof(cuda), "CUDA probed");
	else
		snprintf(cuda, sizeof(cuda), "no CUDA library yet");
	snprintf(line, sizeof(line), "%d thread%s, %s for %s, %s", s->threads, s->threads == 1 ? "" : "s",
		 st->launched ? "launched and traced" : "attached", age, cuda);
	tui_put(w, *y, r.x + LABEL_W + 1, r.w - LABEL_W - 1, tui_attr(TC_NORMAL), line);
	*y += 2;
}

/* One line per traced process: PID, rank, GPU, live device bytes, launches per second in
 * the interval, command; "*" marks the one shown alone. */
static void overview_processes(WINDOW *w, struct tui_rect r, const struct tui_frame *f, int *y)
{
	const struct stats_snapshot *s = f->cur;
	char line[TUI_CELL + 64], live[FMT_LEN], rate[FMT_LEN], rank[16], gpu[16];

	if (s->n_proc < 2 || *y >= r.y + r.h)
		return;
	snprintf(line, sizeof(line), "%-8s %5s %4s %10s %10s %s %s", "PID", "RANK", "GPU", "LIVE",
		 "LAUNCH/s", s->gpu.on ? "GPU BUSY " : "", "COMMAND");
	tui_put(w, (*y)++, r.x, r.w, tui_attr(TC_LABEL), line);
	for (size_t i = 0; i < s->n_proc && *y < r.y + r.h; i++) {
		const struct stats_process *p = &s->proc[i];
		uint64_t before = 0;
		for (size_t j = 0; f->prev && j < f->prev->n_proc; j++)
			if (f->prev->proc[j].info.pid == p->info.pid)
				before = f->prev->proc[j].launches;
		fmt_bytes(live, sizeof(live), p->live_bytes);
		cells_per_sec(rate, sizeof(rate), rows_delta(p->launches, before), f->rows->interval_ns,
			      f->estimated);
		snprintf(rank, sizeof(rank), p->info.rank >= 0 ? "%d" : "-", p->info.rank);
		snprintf(gpu, sizeof(gpu), p->device >= 0 ? "%d" : "-", p->device);
		char busy[24] = "";	/* --gpu-time: over the time it was recorded */
		double share = rows_gpu_busy(&p->gpu, s->t_ns);
		if (s->gpu.on && share >= 0)
			snprintf(busy, sizeof(busy), "%8.1f%% ", 100 * share);
		else if (s->gpu.on)
			snprintf(busy, sizeof(busy), "%9s ", "-");
		snprintf(line, sizeof(line), "%-8d %5s %4s %10s %10s %s %.180s%s", (int)p->info.pid, rank, gpu,
			 live, rate, busy, p->info.command, p->info.ended ? " (ended)" : "");
		tui_put(w, (*y)++, r.x, r.w, tui_attr(p->info.ended ? TC_DIM : TC_NORMAL), line);
	}
	(*y)++;
}

static void overview_draw(WINDOW *w, struct tui_rect r, const struct tui_frame *f,
			  struct tui_view_state *vs)
{
	const struct stats_snapshot *s = f->cur;
	const struct rows *rs = f->rows;
	const struct row_xfer *h2d = &rs->dir[DIR_H2D], *d2h = &rs->dir[DIR_D2H];
	uint64_t ns = rs->interval_ns;
	char now[TUI_CELL], a[FMT_LEN], b[FMT_LEN], total[TUI_CELL];
	int y = r.y;

	vs->rows = vs->page = 0;
	overview_target(w, r, f, &y);
	overview_processes(w, r, f, &y);
	if (y < r.y + r.h)
		tui_put(w, y, r.x + LABEL_W + 1 + NOW_W + 1 + TOTAL_W + 1, r.w, tui_attr(TC_DIM),
		"last minute");
	char when[TUI_CELL];
	if (ns)
		snprintf(when, sizeof(when), "now (last %.2g s)", (double)ns / 1e9);
	else
		snprintf(when, sizeof(when), "now");
	if (y < r.y + r.h)
		tui_put(w, y, r.x + LABEL_W + 1, NOW_W, tui_attr(TC_DIM), when);
	if (y < r.y + r.h)
		tui_put(w, y, r.x + LABEL_W + 1 + NOW_W + 1, TOTAL_W, tui_attr(TC_DIM),
			f->st->launched ? "since the launch" : "since the attach");
	y++;

	fmt_bytes(now, sizeof(now), s->live_bytes[MEM_DEVICE] + s->live_bytes[MEM_MANAGED]);
	fmt_bytes(a, sizeof(a), s->peak_device_bytes);
	snprintf(total, sizeof(total), "peak %s, %" PRIu64 " live", a, s->live_count);
	overview_metric(w, r, y++, "GPU memory", now, total, f->hist, HIST_MEMORY, false);
	if (f->st->cuda_before_attach) {	/* what it holds from before the attach, where NVML
						 * cannot tell it (its meters do where it can) */
		struct row_unseen u;
		device_rows_unseen(&u, f->dev, f->st->pid, 0, true);
		if (!u.known && y < r.y + r.h) {
			meters_unseen_text(total, sizeof(total), &u);
			tui_put(w, y++, r.x + LABEL_W + 1, r.w - LABEL_W - 1, tui_attr(TC_WARN), total);
		}
	}

	cells_per_sec(now, sizeof(now), rs->launches_delta, ns, f->estimated);
	cells_launch_count(a, sizeof(a), rs->launches, f->estimated);
	if (rs->graph_launches) {	/* and the kernels run by graph launches, apart */
		fmt_count(b, sizeof(b), rs->graph_kernel_runs);
		snprintf(total, sizeof(total), "%s launches, %s in graphs", a, b);
	} else {
		snprintf(total, sizeof(total), "%s launches", a);
	}
	overview_metric(w, r, y++, "Launches/s", now, total, f->hist, HIST_LAUNCHES, f->estimated);

	fmt_rate(now, sizeof(now), h2d->delta.bytes, h2d->delta.ns);
	fmt_bytes(a, sizeof(a), h2d->total.bytes);
	fmt_rate(b, sizeof(b), h2d->total.bytes, h2d->total.ns);
	snprintf(total, sizeof(total), "%s at %s", a, b);
	overview_metric(w, r, y++, "H2D", now, total, f->hist, HIST_H2D, false);

	fmt_rate(now, sizeof(now), d2h->delta.bytes, d2h->delta.ns);
	fmt_bytes(a, sizeof(a), d2h->total.bytes);
	fmt_rate(b, sizeof(b), d2h->total.bytes, d2h->total.ns);
	snprintf(total, sizeof(total), "%s at %s", a, b);
	overview_metric(w, r, y++, "D2H", now, total, f->hist, HIST_D2H, false);

	/* Launch calls are among them: estimates too under --max-overhead. */
	cells_per_sec(now, sizeof(now), rs->calls_delta, ns, f->estimated);
	cells_launch_count(a, sizeof(a), rs->calls, f->estimated);
	snprintf(total, sizeof(total), "%s calls", a);
	overview_metric(w, r, y++, "API calls/s", now, total, f->hist, HIST_CALLS, false);

	cells_gpu_busy(total, sizeof(total), rs);	/* --gpu-time */
	if (total[0] && y < r.y + r.h)
		tui_put(w, y++, r.x, r.w, tui_attr(TC_NORMAL), total);

	y++;
	fmt_duration(a, sizeof(a), s->sync_ns);
	fmt_duration(b, sizeof(b), s->tracer_cpu_ns);
	snprintf(total, sizeof(total), "synchronize: %" PRIu64 " calls, %s blocked; gputop: %" PRIu64
		 " stops, %s CPU%s", s->sync_calls, a, s->stops, b, s->lost ? ", records dropped" : "");
	if (s->lost)
		snprintf(total + strlen(total), sizeof(total) - strlen(total), " %" PRIu64, s->lost);
	if (y < r.y + r.h)
		tui_put(w, y, r.x, r.w, tui_attr(TC_DIM), total);
}

const struct tui_view view_overview = {
	.name = "Overview", .key = 'o', .cols = NULL, .n_cols = 0, .default_sort = 0,
	.empty = "", .draw = overview_draw,
};
