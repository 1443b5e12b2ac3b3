/* batch.c — batch mode (-b), like top -b: fixed-width plain-text tables on stdout every -d
 * seconds, then a full summary when the session ends. It reads statistics snapshots and the
 * session status only; it never touches the traced program (a detach is a request). */
#include "ui.h"

/* Where the tables go: stdout for -b, stderr for the summary of a session without a UI. */
static FILE *out;

static void fputc_out(int c)
{
	fputc(c, out);
}

#include "cuda_api.h"
#include "format.h"
#include "session_state.h"
#include "stats.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH_POLL_NS	50000000ull	/* notice the end of the session within 50 ms */
#define BATCH_TOP	10		/* rows per table in a periodic block */
#define BATCH_LEAKS_MAX	100		/* live allocations listed in the summary */
#define BATCH_CELL	512		/* bytes of one formatted cell */

struct batch_col {
	const char *title;
	int width;
	bool right;
};

struct batch {
	struct stats_snapshot prev;	/* figures of the last block, for interval rates */
	struct session_status st;
};

/* Kernel row of a periodic block, with its launches during the interval. */
struct batch_kernel {
	const struct stats_kernel *k;
	uint64_t delta;
};

static uint64_t batch_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t batch_delta(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : cur;	/* a reset ('z') in between: count from zero */
}

/* ---- cells and rows ---- */

/* One row: cells cut to their column, padded by display width (not bytes: "…", "µ"). */
static void batch_row(const struct batch_col *col, int n, char cell[][BATCH_CELL])
{
	for (int i = 0; i < n; i++) {
		char buf[BATCH_CELL];
		int pad;

		fmt_truncate(buf, sizeof(buf), cell[i], col[i].width);
		pad = col[i].width - fmt_width(buf);
		if (col[i].right)
			fprintf(out, "%*s%s", pad, "", buf);
		else if (i + 1 < n)
			fprintf(out, "%s%*s", buf, pad, "");
		else
			fputs(buf, out);	/* no trailing blanks */
		fputs(i + 1 < n ? "  " : "\n", out);
	}
}

static void batch_titles(const struct batch_col *col, int n)
{
	char cell[8][BATCH_CELL];

	for (int i = 0; i < n && i < 8; i++)
		snprintf(cell[i], BATCH_CELL, "%s", col[i].title);
	batch_row(col, n, cell);
}

/* "(x,y,z)"; "?" when the launch did not say. */
static void batch_one_dim3(char *buf, size_t n, const uint32_t d[3])
{
	if (d[0])
		snprintf(buf, n, "(%u,%u,%u)", d[0], d[1], d[2]);
	else
		snprintf(buf, n, "?");
}

static void batch_dim3(char *buf, size_t n, const struct stats_kernel *k)
{
	char grid[40], block[40];

	if (!k->grid[0] && !k->block[0]) {
		snprintf(buf, n, "%s", fmt_dash());
		return;
	}
	batch_one_dim3(grid, sizeof(grid), k->grid);
	batch_one_dim3(block, sizeof(block), k->block);
	snprintf(buf, n, "%s%s%s", grid, fmt_times(), block);
}

/* --max-overhead: launch figures are extrapolated; each one is printed with a "~". */
static bool estimated;

static void mark_estimate(char *cell, size_t n)
{
	size_t len = strnlen(cell, n - 1);
	if (!estimated || len + 2 > n)
		return;
	memmove(cell + 1, cell, len + 1);	/* counts are short: the "~" always fits */
	cell[0] = '~';
}

/* ---- tables (a NULL previous snapshot means: the summary, whole-session figures) ---- */

static const struct batch_col api_cols[] = {
	{ "API", 36, false }, { "CALLS", 9, true }, { "ERRORS", 8, true },
	{ "TIME", 10, true }, { "AVG", 10, true },
};

static void batch_api_row(const struct stats_snapshot *s, int i)
{
	const struct stats_api *a = &s->api[i];
	const struct api_spec *spec = cuda_api_get(i);
	char cell[5][BATCH_CELL];

	snprintf(cell[0], BATCH_CELL, "%s", spec ? spec->name : "?");
	fmt_count(cell[1], BATCH_CELL, a->calls);
	if (spec && spec->op == OP_LAUNCH)
		mark_estimate(cell[1], BATCH_CELL);
	if (a->returns_seen) {
		fmt_count(cell[2], BATCH_CELL, a->errors);
		fmt_duration(cell[3], BATCH_CELL, a->ns);
		fmt_duration(cell[4], BATCH_CELL, a->ns / a->calls);
	} else {	/* entry-only probe: errors and time are not known */
		for (int c = 2; c < 5; c++)
			snprintf(cell[c], BATCH_CELL, "%s", fmt_dash());
	}
	batch_row(api_cols, 5, cell);
}

static void batch_api(const struct stats_snapshot *s, size_t max)
{
	int *idx = malloc((s->n_api ? s->n_api : 1) * sizeof(*idx));
	size_t n = idx ? stats_sort_api(s, idx) : 0;

	if (!n) {
		fprintf(out, "%s\n", "API: (none)");
	} else {
		batch_titles(api_cols, 5);
		for (size_t i = 0; i < n && i < max; i++)
			batch_api_row(s, idx[i]);
	}
	free(idx);
}

static const struct batch_col kernel_cols[] = {
	{ "KERNEL", 44, false }, { "LAUNCHES", 8, true }, { "PER SEC", 8, true },
	{ "GRID x BLOCK", 30, false },
};

static void batch_kernel_row(const struct stats_kernel *k, uint64_t n, uint64_t ns)
{
	char cell[4][BATCH_CELL];

	snprintf(cell[0], BATCH_CELL, "%s", k->name ? k->name : "?");
	fmt_count(cell[1], BATCH_CELL, k->launches);
	mark_estimate(cell[1], BATCH_CELL);
	if (ns) {
		fmt_count(cell[2], BATCH_CELL, (uint64_t)((double)n * 1e9 / (double)ns + 0.5));
		mark_estimate(cell[2], BATCH_CELL);
	} else {
		snprintf(cell[2], BATCH_CELL, "%s", fmt_dash());
	}
	batch_dim3(cell[3], BATCH_CELL, k);
	batch_row(kernel_cols, 4, cell);
}

static int batch_kernel_cmp(const void *a, const void *b)
{
	const struct batch_kernel *x = a, *y = b;

	if (x->delta != y->delta)
		return x->delta > y->delta ? -1 : 1;
	if (x->k->launches != y->k->launches)
		return x->k->launches > y->k->launches ? -1 : 1;
	return strcmp(x->k->name ? x->k->name : "", y->k->name ? y->k->name : "");
}

/* Busiest kernels of the interval; kernel[i] is id i in both snapshots. */
static void batch_kernels_interval(const struct stats_snapshot *s, const struct stats_snapshot *p)
{
	struct batch_kernel *row = malloc((s->n_kernel ? s->n_kernel : 1) * sizeof(*row));
	uint64_t ns = batch_delta(s->t_ns, p->t_ns);
	size_t n = 0;

	for (size_t i = 0; row && i < s->n_kernel; i++) {
		uint64_t before = i < p->n_kernel ? p->kernel[i].launches : 0;

		if (s->kernel[i].launches)
			row[n++] = (struct batch_kernel){ &s->kernel[i],
							  batch_delta(s->kernel[i].launches, before) };
	}
	qsort(row, n, sizeof(*row), batch_kernel_cmp);
	if (!n)
		fprintf(out, "%s\n", "Kernels: (none)");
	else
		batch_titles(kernel_cols, 4);
	for (size_t i = 0; i < n && i < BATCH_TOP; i++)
		batch_kernel_row(row[i].k, row[i].delta, ns);
	free(row);
}

/* Every launched kernel, with its rate over the whole session. */
static void batch_kernels_all(const struct stats_snapshot *s)
{
	const struct stats_kernel **k = malloc((s->n_kernel ? s->n_kernel : 1) * sizeof(*k));
	size_t n = k ? stats_sort_kernels(s, k) : 0;

	if (!n)
		fprintf(out, "%s\n", "Kernels: (none)");
	else
		batch_titles(kernel_cols, 4);
	for (size_t i = 0; i < n; i++)
		batch_kernel_row(k[i], k[i]->launches, batch_delta(s->t_ns, s->start_ns));
	free(k);
}

/* AVG RATE: bandwidth of all copies so far; RATE: of those in the interval (periodic only). */
static const struct batch_col xfer_cols[] = {
	{ "COPY", 6, false }, { "CALLS", 9, true }, { "BYTES", 10, true },
	{ "AVG RATE", 11, true }, { "RATE", 11, true },
};

static void batch_xfer_row(const char *name, const struct stats_xfer *x,
			   const struct stats_xfer *prev)
{
	char cell[5][BATCH_CELL];

	snprintf(cell[0], BATCH_CELL, "%s", name);
	fmt_count(cell[1], BATCH_CELL, x->calls);
	fmt_bytes(cell[2], BATCH_CELL, x->bytes);
	fmt_rate(cell[3], BATCH_CELL, x->bytes, x->ns);
	if (prev)
		fmt_rate(cell[4], BATCH_CELL, batch_delta(x->bytes, prev->bytes),
			 batch_delta(x->ns, prev->ns));
	batch_row(xfer_cols, prev ? 5 : 4, cell);
}

static struct stats_xfer batch_dir_total(const struct stats_snapshot *s, int d)
{
	const struct stats_xfer *a = &s->xfer[COPY_SYNC][d], *b = &s->xfer[COPY_ASYNC][d];

	return (struct stats_xfer){ a->calls + b->calls, a->bytes + b->bytes, a->ns + b->ns };
}

static void batch_transfers(const struct stats_snapshot *s, const struct stats_snapshot *p)
{
	bool any = s->memset_.calls;

	for (int d = 0; d < DIR_COUNT; d++)
		any |= batch_dir_total(s, d).calls != 0;
	if (!any) {
		fprintf(out, "%s\n", "Transfers: (none)");
		return;
	}
	batch_titles(xfer_cols, p ? 5 : 4);
	for (int d = 0; d < DIR_COUNT; d++) {
		struct stats_xfer cur = batch_dir_total(s, d);
		struct stats_xfer before = p ? batch_dir_total(p, d) : cur;

		if (cur.calls)
			batch_xfer_row(copy_dir_name[d], &cur, p ? &before : NULL);
	}
	if (s->memset_.calls)
		batch_xfer_row("memset", &s->memset_, p ? &p->memset_ : NULL);
}

static const struct batch_col leak_cols[] = {
	{ "ADDRESS", 18, false }, { "SIZE", 10, true }, { "KIND", 7, false },
	{ "API", 30, false }, { "THREAD", 8, true }, { "AGE", 8, true },
};

static void batch_leak_row(const struct stats_alloc *a, uint64_t now_ns)
{
	const struct api_spec *spec = cuda_api_get(a->api);
	char cell[6][BATCH_CELL];

	snprintf(cell[0], BATCH_CELL, "0x%" PRIx64, a->addr);
	fmt_bytes(cell[1], BATCH_CELL, a->bytes);
	snprintf(cell[2], BATCH_CELL, "%s", a->kind < MEM_KIND_COUNT ? mem_kind_name[a->kind] : "?");
	snprintf(cell[3], BATCH_CELL, "%s", spec ? spec->name : "?");
	snprintf(cell[4], BATCH_CELL, "%d", (int)a->tid);
	fmt_age(cell[5], BATCH_CELL, now_ns >= a->t_ns ? now_ns - a->t_ns : 0);
	batch_row(leak_cols, 6, cell);
}

static void batch_memory(const struct stats_snapshot *s, size_t max)
{
	char live[FMT_LEN], peak[FMT_LEN], host[FMT_LEN];
	const struct stats_alloc **a = malloc((s->n_alloc ? s->n_alloc : 1) * sizeof(*a));

	fmt_bytes(live, sizeof(live), s->live_bytes[MEM_DEVICE] + s->live_bytes[MEM_MANAGED]);
	fmt_bytes(peak, sizeof(peak), s->peak_device_bytes);
	fmt_bytes(host, sizeof(host), s->live_bytes[MEM_HOST]);
	fprintf(out, "Memory: %s live on device, peak %s, %" PRIu64 " live allocations, %s pinned host\n",
	       live, peak, s->live_count, host);
	if (!s->n_alloc || !a) {
		fprintf(out, "%s\n", "Live allocations: (none)");
		free(a);
		return;
	}
	stats_sort_allocs(s, a);
	batch_titles(leak_cols, 6);
	for (size_t i = 0; i < s->n_alloc && i < max; i++)
		batch_leak_row(a[i], s->t_ns);
	if (s->n_alloc > max)
		fprintf(out, "... and %zu more\n", s->n_alloc - max);
	free(a);
}

/* ---- blocks ---- */

static void batch_header(const struct batch *b, const struct stats_snapshot *s)
{
	char cmd[BATCH_CELL], elapsed[FMT_LEN];
	uint64_t start = b->st.start_ns ? b->st.start_ns : s->start_ns;
	const char *dash = fmt_dash();

	fmt_truncate(cmd, sizeof(cmd), b->st.command, 40);
	fmt_duration(elapsed, sizeof(elapsed), batch_delta(s->t_ns, start));
	fprintf(out, "gputop %s PID %d %s %s %s %s %d threads\n", dash, (int)b->st.pid, cmd, dash, elapsed,
	       dash, s->threads);
}

static void batch_block(struct batch *b, const struct stats_snapshot *s)
{
	estimated = s->launches_estimated;
	batch_header(b, s);
	fputc_out('\n');
	batch_api(s, BATCH_TOP);
	fputc_out('\n');
	batch_kernels_interval(s, &b->prev);
	fputc_out('\n');
	batch_transfers(s, &b->prev);
	fputc_out('\n');
	batch_memory(s, BATCH_TOP);
	fputc_out('\n');
	fflush(out);
}

static void batch_outcome(const struct session_status *st, char *buf, size_t n)
{
	if (st->exited && st->term_signal)
		snprintf(buf, n, "killed by signal %d", st->term_signal);
	else if (st->exited)
		snprintf(buf, n, "exit status %d", st->exit_status);
	else
		snprintf(buf, n, "detached, the program runs on");
}

static void batch_summary(struct batch *b, const struct stats_snapshot *s)
{
	char outcome[64], cpu[FMT_LEN], sync[FMT_LEN];

	estimated = s->launches_estimated;
	fprintf(out, "%s\n", "gputop: summary");
	batch_header(b, s);
	batch_outcome(&b->st, outcome, sizeof(outcome));
	fmt_duration(cpu, sizeof(cpu), s->tracer_cpu_ns);
	fmt_duration(sync, sizeof(sync), s->sync_ns);
	fprintf(out, "%s; %" PRIu64 " launches%s; %" PRIu64 " stops, tracer CPU %s\n", outcome,
	       s->launches, s->launches_estimated ? " (estimated)" : "", s->stops, cpu);
	fputc_out('\n');
	batch_api(s, SIZE_MAX);
	fputc_out('\n');
	batch_kernels_all(s);
	fputc_out('\n');
	batch_transfers(s, NULL);
	fprintf(out, "Synchronize: %" PRIu64 " calls, %s blocked\n", s->sync_calls, sync);
	fputc_out('\n');
	batch_memory(s, BATCH_LEAKS_MAX);
	fflush(out);
}

/* ---- the loop ---- */

static void batch_poll(struct batch *b)
{
	session_status_get(&b->st);
}

static void batch_sleep(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	nanosleep(&ts, NULL);	/* a signal only wakes us early: the caller polls again */
}

/* Waits until deadline, polling the session in short steps; true once it has ended. */
static bool batch_wait(struct batch *b, uint64_t deadline)
{
	for (;;) {
		uint64_t now;

		batch_poll(b);
		if (b->st.ended)
			return true;
		now = batch_now();
		if (now >= deadline)
			return false;
		batch_sleep(deadline - now < BATCH_POLL_NS ? deadline - now : BATCH_POLL_NS);
	}
}

static void batch_tick(struct batch *b)
{
	struct stats_snapshot s;

	if (stats_snapshot(&s) < 0)
		return;
	batch_block(b, &s);
	stats_snapshot_free(&b->prev);
	b->prev = s;
}

void batch_print_final(FILE *f)
{
	struct batch b = { 0 };
	struct stats_snapshot s;

	out = f;
	fmt_set_ascii(fmt_ascii() || !fmt_locale_utf8());
	session_status_get(&b.st);
	if (stats_snapshot(&s) == 0) {
		batch_summary(&b, &s);
		stats_snapshot_free(&s);
	}
}

int batch_run(const struct options *opt)
{
	struct batch b = { 0 };
	double delay = opt->delay_s > 0 ? opt->delay_s : 1;
	uint64_t step = (uint64_t)(delay * 1e9), next = batch_now() + step;
	struct stats_snapshot s;

	out = stdout;
	fmt_set_ascii(fmt_ascii() || !fmt_locale_utf8());
	b.prev.t_ns = batch_now();
	for (long done = 0; opt->iterations < 0 || done < opt->iterations; done++) {
		if (batch_wait(&b, next))
			break;
		batch_tick(&b);
		next += step;
	}
	batch_poll(&b);
	if (!b.st.ended) {
		session_request(REQ_DETACH);
		while (!batch_wait(&b, UINT64_MAX))
			;
	}
	if (stats_snapshot(&s) == 0) {
		batch_summary(&b, &s);
		stats_snapshot_free(&s);
	}
	stats_snapshot_free(&b.prev);
	return 0;
}
