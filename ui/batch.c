/* batch.c — batch mode (-b), like top -b: fixed-width plain-text tables on stdout every -d
 * seconds, then a full summary when the session ends. It reads statistics snapshots and the
 * session status only; it never touches the traced program (a detach is a request). */
#include "ui.h"
#include "cells.h"
#include "clock.h"
#include "devices.h"
#include "format.h"
#include "log.h"
#include "meters.h"
#include "rows.h"
#include "session_state.h"
#include "stack_text.h"
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
#define BATCH_COLS_MAX	8		/* columns of one table */

struct batch_col {
	const char *title;
	int width;
	bool right;
};

struct batch {
	struct stats_snapshot prev;	/* figures of the last block, for interval rates */
	struct session_status st;
	bool said_all_failed;		/* "every CUDA call failed ..." is said once, in the first table
					 * where it holds (and in the summary) */
};

static struct {
	FILE *out;	/* where the tables go: stdout for -b, stderr for a summary without a UI */
	bool estimated;	/* --max-overhead: launch figures are extrapolated, each printed with "~" */
} batch;

/* ---- cells and rows ---- */

/* One row: cells cut to their column, padded by display width (not bytes: "…", "µ"). */
static void batch_row(const struct batch_col *col, int n, const char *const *cell)
{
	for (int i = 0; i < n; i++) {
		char buf[BATCH_CELL];
		int pad;

		fmt_truncate(buf, sizeof(buf), cell[i], col[i].width);
		pad = col[i].width - fmt_width(buf);
		if (col[i].right)
			fprintf(batch.out, "%*s%s", pad, "", buf);
		else if (i + 1 < n)
			fprintf(batch.out, "%s%*s", buf, pad, "");
		else
			fputs(buf, batch.out);	/* no trailing blanks */
		fputs(i + 1 < n ? "  " : "\n", batch.out);
	}
}

static void batch_titles(const struct batch_col *col, int n)
{
	const char *cell[BATCH_COLS_MAX];

	for (int i = 0; i < n && i < BATCH_COLS_MAX; i++)
		cell[i] = col[i].title;
	batch_row(col, n, cell);
}

/* ---- tables (the rows of a summary cover the whole session) ---- */

static const struct batch_col api_cols[] = {
	{ "API", 36, false }, { "CALLS", 9, true }, { "ERRORS", 8, true },
	{ "TIME", 10, true }, { "AVG", 10, true },
};

static void batch_api(const struct rows *rs, size_t max)
{
	if (!rs->n_api) {
		fprintf(batch.out, "%s\n", "API: (none)");
		return;
	}
	batch_titles(api_cols, 5);
	for (size_t i = 0; i < rs->n_api && i < max; i++) {
		struct cells_api c;

		cells_api(&c, &rs->api[i], rs, batch.estimated);
		batch_row(api_cols, 5, (const char *[]){ c.name, c.calls, c.errors, c.time, c.avg });
	}
}

/* The kernel table's columns: IN GRAPHS once the program launched a CUDA graph, the GPU
 * time's four with --gpu-time. */
enum { KC_NAME, KC_LAUNCHES, KC_GRAPH, KC_RATE, KC_GPU_TOTAL, KC_GPU_AVG, KC_GPU_MIN, KC_GPU_MAX, KC_DIMS, KC_COUNT };
static const struct batch_col kernel_cols[KC_COUNT] = {
	[KC_NAME] = { "KERNEL", 44, false }, [KC_LAUNCHES] = { "LAUNCHES", 8, true },
	[KC_GRAPH] = { "IN GRAPHS", 9, true }, [KC_RATE] = { "PER SEC", 8, true },
	[KC_GPU_TOTAL] = { "GPU TIME", 10, true }, [KC_GPU_AVG] = { "GPU AVG", 10, true },
	[KC_GPU_MIN] = { "GPU MIN", 10, true }, [KC_GPU_MAX] = { "GPU MAX", 10, true },
	[KC_DIMS] = { "GRID x BLOCK", 30, false },
};

/* The columns shown, and their cells (titles when c is NULL): their count. */
static int batch_kernel_cells(const struct rows *rs, const struct cells_kernel *c, struct batch_col *col,
			      const char **cell)
{
	const char *all[KC_COUNT];
	if (c)
		memcpy(all, (const char *[KC_COUNT]){ c->name, c->launches, c->graph, c->rate, c->gpu_total,
						      c->gpu_avg, c->gpu_min, c->gpu_max, c->dims }, sizeof all);
	int n = 0;
	for (int i = 0; i < KC_COUNT; i++) {
		if ((i == KC_GRAPH && !rs->graph_launches) || (i >= KC_GPU_TOTAL && i <= KC_GPU_MAX && !rs->gpu.on))
			continue;
		col[n] = kernel_cols[i];
		cell[n++] = c ? all[i] : kernel_cols[i].title;
	}
	return n;
}

static void batch_kernel_titles(const struct rows *rs)
{
	struct batch_col col[KC_COUNT];
	const char *cell[KC_COUNT];
	int n = batch_kernel_cells(rs, NULL, col, cell);
	batch_row(col, n, cell);
}

static void batch_kernel_row(const struct row_kernel *k, const struct rows *rs)
{
	struct cells_kernel c;
	struct batch_col col[KC_COUNT];
	const char *cell[KC_COUNT];

	cells_kernel(&c, k, rs, batch.estimated);
	int n = batch_kernel_cells(rs, &c, col, cell);
	batch_row(col, n, cell);
}

/* --gpu-time: the busy line under the kernels, the copies' GPU side under the transfers. */
static void batch_gpu_busy(const struct rows *rs)
{
	char line[256];
	cells_gpu_busy(line, sizeof line, rs);
	if (line[0])
		fprintf(batch.out, "%s\n", line);
}

static void batch_gpu_copies(const struct rows *rs)
{
	char line[512];
	cells_gpu_copies(line, sizeof line, rs);
	if (line[0])
		fprintf(batch.out, "%s\n", line);
}

/* The busiest of the interval first. */
static int batch_kernel_cmp(const void *a, const void *b)
{
	const struct row_kernel *x = *(const struct row_kernel *const *)a;
	const struct row_kernel *y = *(const struct row_kernel *const *)b;

	uint64_t dx = x->launches_delta + x->graph_launches_delta, dy = y->launches_delta + y->graph_launches_delta;
	uint64_t nx = x->launches + x->graph_launches, ny = y->launches + y->graph_launches;
	if (dx != dy)
		return dx > dy ? -1 : 1;
	if (nx != ny)
		return nx > ny ? -1 : 1;
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

/* Busiest kernels of the interval. */
static void batch_kernels_interval(const struct rows *rs)
{
	const struct row_kernel **k = malloc((rs->n_kernel ? rs->n_kernel : 1) * sizeof(*k));
	size_t n = k ? rs->n_kernel : 0;

	for (size_t i = 0; i < n; i++)
		k[i] = &rs->kernel[i];
	qsort(k, n, sizeof(*k), batch_kernel_cmp);
	if (!n)
		fprintf(batch.out, "%s\n", "Kernels: (none)");
	else
		batch_kernel_titles(rs);
	for (size_t i = 0; i < n && i < BATCH_TOP; i++)
		batch_kernel_row(k[i], rs);
	free(k);
}

/* Every launched kernel, with its rate over the whole session. */
static void batch_kernels_all(const struct rows *rs)
{
	if (!rs->n_kernel)
		fprintf(batch.out, "%s\n", "Kernels: (none)");
	else
		batch_kernel_titles(rs);
	for (size_t i = 0; i < rs->n_kernel; i++)
		batch_kernel_row(&rs->kernel[i], rs);
}

/* AVG RATE: bandwidth of all copies so far; RATE: of those in the interval (periodic only). */
static const struct batch_col xfer_cols[] = {
	{ "COPY", 12, false }, { "CALLS", 9, true }, { "BYTES", 10, true },
	{ "AVG RATE", 11, true }, { "RATE", 11, true },
};

static void batch_xfer_row(const struct row_xfer *x, bool interval)
{
	struct cells_xfer c;

	cells_xfer(&c, x);
	batch_row(xfer_cols, interval ? 5 : 4,
		  (const char *[]){ c.name, c.calls, c.bytes, c.avg_rate, c.rate });
}

static void batch_transfers(const struct rows *rs, bool interval)
{
	bool any = rs->memset_.total.calls || rs->graph_memset.total.calls;

	for (int d = 0; d < DIR_COUNT; d++)
		any |= rs->dir[d].total.calls != 0 || rs->graph_copy[d].total.calls != 0;
	if (!any) {
		fprintf(batch.out, "%s\n", "Transfers: (none)");
		return;
	}
	batch_titles(xfer_cols, interval ? 5 : 4);
	for (int d = 0; d < DIR_COUNT; d++)
		if (rs->dir[d].total.calls)
			batch_xfer_row(&rs->dir[d], interval);
	if (rs->memset_.total.calls)
		batch_xfer_row(&rs->memset_, interval);
	for (int d = 0; d < DIR_COUNT; d++)
		if (rs->graph_copy[d].total.calls)
			batch_xfer_row(&rs->graph_copy[d], interval);
	if (rs->graph_memset.total.calls)
		batch_xfer_row(&rs->graph_memset, interval);
}

static const struct batch_col leak_cols[] = {
	{ "ADDRESS", 18, false }, { "SIZE", 10, true }, { "KIND", 7, false },
	{ "API", 30, false }, { "THREAD", 8, true }, { "AGE", 8, true },
};

/* With NVML: the process's device memory, and the part gputop did not see allocated. */
static void batch_unseen(const struct devices_snapshot *d, const struct stats_snapshot *s,
			 const struct session_status *st)
{
	struct row_unseen u;
	char line[1024];

	if (!d->available && !st->cuda_before_attach)
		return;
	device_rows_unseen(&u, d, st->pid, s->live_bytes[MEM_DEVICE] + s->live_bytes[MEM_MANAGED],
			   st->cuda_before_attach);
	meters_unseen_text(line, sizeof(line), &u);
	fprintf(batch.out, "%s\n", line);
}

static void batch_memory(const struct stats_snapshot *s, const struct rows *rs, size_t max,
			 const struct devices_snapshot *d, const struct session_status *st)
{
	char live[FMT_LEN], peak[FMT_LEN], host[FMT_LEN];

	fmt_bytes(live, sizeof(live), s->live_bytes[MEM_DEVICE] + s->live_bytes[MEM_MANAGED]);
	fmt_bytes(peak, sizeof(peak), s->peak_device_bytes);
	fmt_bytes(host, sizeof(host), s->live_bytes[MEM_HOST]);
	fprintf(batch.out, "Memory%s: %s live on device, peak %s, %" PRIu64 " live allocations, %s pinned host\n",
		st->launched ? "" : " (since the attach)", live, peak, s->live_count, host);
	batch_unseen(d, s, st);
	if (!rs->n_alloc) {
		fprintf(batch.out, "%s\n", "Live allocations: (none)");
		return;
	}
	batch_titles(leak_cols, 6);
	for (size_t i = 0; i < rs->n_alloc && i < max; i++) {
		struct cells_alloc c;

		cells_alloc(&c, &rs->alloc[i], rs);
		batch_row(leak_cols, 6,
			  (const char *[]){ c.address, c.size, c.kind, c.api, c.thread, c.age });
	}
	if (rs->n_alloc > max)
		fprintf(batch.out, "... and %zu more\n", rs->n_alloc - max);
}

/* PyTorch's blocks (the Memory view's figures): nothing where no process has PyTorch's CUDA
 * allocator, its state alone where gputop does not follow it. */
static const struct batch_col torch_cols[] = {
	{ "ADDRESS", 18, false }, { "SIZE", 10, true }, { "REQUESTED", 10, true }, { "DEV", 3, true },
	{ "AGE", 8, true }, { "LINE", 40, false },
};

/* Each out-of-memory kept: the request, its line, the allocator then. */
static void batch_oom(const struct torch_rows *t)
{
	char line[1024];
	for (size_t i = 0; t->snap && i < t->snap->n_oom; i++) {
		cells_torch_oom(line, sizeof line, &t->snap->oom[i]);
		fprintf(batch.out, "%s\n", line);
	}
}

static void batch_torch(const struct rows *rs, size_t max)
{
	const struct torch_rows *t = &rs->torch;
	char line[1024];
	batch_oom(t);
	if (t->state == TORCH_ABSENT)
		return;
	cells_torch_state(line, sizeof line, t);
	fprintf(batch.out, "%s\n", line);
	for (size_t i = 0; i < t->n_device; i++) {
		cells_torch_device(line, sizeof line, &t->device[i], rs);
		fprintf(batch.out, "%s\n", line);
	}
	if (t->state != TORCH_TRACKING || !t->n_block)
		return;
	batch_titles(torch_cols, 6);
	for (size_t i = 0; i < t->n_block && i < max; i++) {
		struct cells_torch_block c;
		cells_torch_block(&c, &t->block[i], rs);
		batch_row(torch_cols, 6, (const char *[]){ c.address, c.size, c.requested, c.device, c.age, c.site });
	}
	if (t->n_block > max)
		fprintf(batch.out, "... and %zu more\n", t->n_block - max);
	if (t->n_site && (t->site[0].site || t->n_site > 1)) {
		fprintf(batch.out, "%s\n", "Live blocks by line:");
		for (size_t i = 0; i < t->n_site && i < max; i++) {
			char bytes[FMT_LEN];
			fmt_bytes(bytes, sizeof bytes, t->site[i].live_bytes);
			cells_torch_site(line, sizeof line, t->site[i].site, t->site[i].before);
			fprintf(batch.out, "  %10s in %" PRIu64 " block%s: %s\n", bytes, t->site[i].live_blocks,
				t->site[i].live_blocks == 1 ? "" : "s", line);
		}
	}
	fputc('\n', batch.out);
}

/* Per GPU, where a program used more than one (or one gputop could not tell), and NCCL's
 * operations per process and the P2P matrix as lines, where there are any: a program on one
 * GPU without NCCL prints none of them. */
static const struct batch_col gpu_cols[] = {
	{ "GPU", 3, true }, { "LIVE", 10, true }, { "ALLOCS", 7, true }, { "LAUNCHES", 9, true },
	{ "COPIES", 7, true }, { "COPIED", 10, true }, { "SYNCS", 7, true }, { "BLOCKED", 10, true },
};
static const struct batch_col coll_cols[] = {
	{ "PID", 9, true }, { "RANK", 6, true }, { "OPERATION", 14, false }, { "CALLS", 9, true },
	{ "BYTES", 10, true }, { "RATE", 11, true }, { "TIME", 10, true },
};

static void batch_comm(const struct rows *rs, bool interval)
{
	bool gpus = rs->n_device > 1 || (rs->n_device == 1 && rs->device[0].device != 0);
	if (gpus) {
		batch_titles(gpu_cols, 8);
		for (size_t i = 0; i < rs->n_device; i++) {
			struct cells_device c;
			cells_device(&c, &rs->device[i], rs, batch.estimated);
			batch_row(gpu_cols, 8, (const char *[]){ c.device, c.live, c.allocs, c.launches, c.copies,
								 c.copy_bytes, c.syncs, c.sync_time });
		}
		fputc('\n', batch.out);
	}
	if (!rs->n_coll && !rs->n_p2p)
		return;
	if (rs->n_coll)
		batch_titles(coll_cols, interval ? 7 : 5);
	for (size_t i = 0; i < rs->n_coll; i++) {
		struct cells_coll c;
		cells_coll(&c, &rs->coll[i], rs);
		batch_row(coll_cols, interval ? 7 : 5,
			  (const char *[]){ c.process, c.rank, c.op, c.calls, c.bytes, c.rate, c.time });
	}
	for (size_t i = 0; i < rs->n_p2p; i++) {
		char src[16], dst[16], bytes[FMT_LEN];
		cells_gpu(src, sizeof(src), rs->p2p[i].src);
		cells_gpu(dst, sizeof(dst), rs->p2p[i].dst);
		fmt_bytes(bytes, sizeof(bytes), rs->p2p[i].total.bytes);
		fprintf(batch.out, "P2P GPU%s -> GPU%s: %" PRIu64 " calls, %s\n", src, dst, rs->p2p[i].total.calls, bytes);
	}
	fputc('\n', batch.out);
}

/* ---- blocks ---- */

static void batch_header(const struct batch *b, const struct stats_snapshot *s)
{
	char cmd[BATCH_CELL], elapsed[FMT_LEN];
	uint64_t start = b->st.start_ns ? b->st.start_ns : s->start_ns;
	const char *dash = fmt_dash();

	fmt_truncate(cmd, sizeof(cmd), b->st.command, 40);
	fmt_duration(elapsed, sizeof(elapsed), s->t_ns >= start ? s->t_ns - start : 0);
	fprintf(batch.out, "gputop %s PID %d %s %s %s %s %d threads\n", dash, (int)b->st.pid, cmd, dash, elapsed,
	       dash, s->threads);
}

static void batch_block(struct batch *b, const struct stats_snapshot *s)
{
	struct rows rs;
	struct devices_snapshot d;

	rows_build(&rs, s, &b->prev);	/* on failure empty: the tables say "(none)" */
	devices_snapshot(&d);
	batch.estimated = s->launches_estimated;
	batch_header(b, s);
	meters_print(batch.out, &d, b->st.pid);
	char failed[160];
	cells_all_failed(failed, sizeof failed, &rs);
	if (failed[0] && !b->said_all_failed) {
		fprintf(batch.out, "%s\n", failed);
		b->said_all_failed = true;
	}
	fputc('\n', batch.out);
	batch_api(&rs, BATCH_TOP);
	fputc('\n', batch.out);
	batch_kernels_interval(&rs);
	batch_gpu_busy(&rs);
	fputc('\n', batch.out);
	batch_transfers(&rs, true);
	batch_gpu_copies(&rs);
	fputc('\n', batch.out);
	batch_comm(&rs, true);
	batch_memory(s, &rs, BATCH_TOP, &d, &b->st);
	fputc('\n', batch.out);
	batch_torch(&rs, BATCH_TOP);
	stack_text_sites(batch.out, &rs, BATCH_TOP, 8);
	fflush(batch.out);
	rows_free(&rs);
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
	struct rows rs;
	struct devices_snapshot d;

	rows_build(&rs, s, NULL);	/* the whole session */
	devices_snapshot(&d);
	batch.estimated = s->launches_estimated;
	fprintf(batch.out, "%s\n", "gputop: summary");
	batch_header(b, s);
	batch_outcome(&b->st, outcome, sizeof(outcome));
	fmt_duration(cpu, sizeof(cpu), s->tracer_cpu_ns);
	fmt_duration(sync, sizeof(sync), s->sync_ns);
	fprintf(batch.out, "%s; %" PRIu64 " launches%s", outcome, s->launches, s->launches_estimated ? " (estimated)" : "");
	if (s->graph_launches)
		fprintf(batch.out, ", %" PRIu64 " kernel runs in %" PRIu64 " graph launches", s->graph_kernel_runs,
			s->graph_launches);
	fprintf(batch.out, "; %" PRIu64 " stops, tracer CPU %s\n", s->stops, cpu);
	meters_print(batch.out, &d, b->st.pid);
	if (s->lost)
		fprintf(batch.out, "records dropped: %" PRIu64 " (gputop fell behind: the counts stay exact; "
				   "per-GPU, NCCL, timeline and stack detail misses them)\n", s->lost);
	char failed[160];
	cells_all_failed(failed, sizeof failed, &rs);
	if (failed[0]) {
		fprintf(batch.out, "%s\n", failed);
		if (batch.out != stderr)	/* and where a container's log has it */
			log_warn("%s", failed);
	}
	fputc('\n', batch.out);
	batch_api(&rs, SIZE_MAX);
	fputc('\n', batch.out);
	batch_kernels_all(&rs);
	batch_gpu_busy(&rs);
	fputc('\n', batch.out);
	batch_transfers(&rs, false);
	batch_gpu_copies(&rs);
	fprintf(batch.out, "Synchronize: %" PRIu64 " calls, %s blocked\n", s->sync_calls, sync);
	fputc('\n', batch.out);
	batch_comm(&rs, false);
	batch_memory(s, &rs, BATCH_LEAKS_MAX, &d, &b->st);
	fputc('\n', batch.out);
	batch_torch(&rs, BATCH_LEAKS_MAX);
	stack_text_sites(batch.out, &rs, BATCH_LEAKS_MAX, SIZE_MAX);
	fflush(batch.out);
	rows_free(&rs);
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
		now = now_ns();
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

	batch.out = f;
	fmt_set_ascii(fmt_ascii() || !fmt_locale_utf8());
	session_status_get(&b.st);
	if (stats_snapshot(&s) == 0) {
		batch_summary(&b, &s);
		stats_snapshot_free(&s);
	}
}

int batch_run(const struct ui_options *opt)
{
	struct batch b = { 0 };
	double delay = opt->delay_s > 0 ? opt->delay_s : 1;
	uint64_t step = (uint64_t)(delay * 1e9), next = now_ns() + step;
	struct stats_snapshot s;

	batch.out = stdout;
	fmt_set_ascii(fmt_ascii() || !fmt_locale_utf8());
	b.prev.t_ns = now_ns();
	for (long done = 0; opt->iterations < 0 || done < opt->iterations; done++) {
		if (batch_wait(&b, next))
			break;
		batch_tick(&b);
		next += step;
	}
	batch_poll(&b);
	if (!b.st.ended) {
		session_request(opt->iterations > 0 ? REQ_COUNT_DONE : REQ_DETACH);
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
