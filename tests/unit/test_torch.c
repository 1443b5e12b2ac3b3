/* test_torch.c — unit test of PyTorch's memory figures (src/figures/torch_mem.c, torch_rows.c)
 * and their presenters' (openmetrics.c's torch families): blocks fed as probe/torch_alloc.c
 * feeds them. Live bytes and blocks per device, a free of an unknown block counted apart, a
 * block recorded twice (its free missed) counted once; blocks largest first; what
 * empty_cache() would give back: reserved minus the segments holding a live block, minus the
 * pages they touch in an expandable segment, unknown where a block's segment is; leak
 * candidates (a block from before gputop came is at least as old as the attach) oldest first;
 * the line of a block (innermost Python frame outside the torch package, else the outermost
 * frame of a stack of PyTorch's libraries alone); lines grouped;
 * several processes merged (the most informative state, "unknown" blocks before attach
 * winning); the metrics' series per device. One "ok"/"not ok" line per check. */
#include "clock.h"
#include "openmetrics.h"
#include "rows.h"
#include "stacks.h"
#include "stats.h"
#include "torch_mem.h"
#include "torch_rows.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1024ull * 1024)

static int failures;

static void check(bool ok, const char *what)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	failures += !ok;
}

static void block(pid_t pid, uint64_t id, uint64_t ptr, uint64_t size, uint64_t t_ns, uint32_t stack, bool exp)
{
	struct torch_block b = { .block = id, .ptr = ptr, .size = size, .requested = size - 100, .stream = 7,
				 .t_ns = t_ns, .stack = stack, .device = 0, .expandable = exp };
	torch_mem_on_alloc(pid, &b);
}

/* A stack of frames (innermost first): "py:FILE:LINE" for a Python frame, else a native one of
 * module "libc10_cuda.so". */
static uint32_t stack_of(uint64_t key, const char *const *frames, int n)
{
	struct stack_frame f[8];
	for (int i = 0; i < n; i++) {
		bool py = strncmp(frames[i], "py:", 3) == 0;
		f[i] = (struct stack_frame){ .function = py ? "fn" : frames[i], .file = py ? frames[i] + 3 : NULL,
					     .line = py ? (uint32_t)(10 + i) : 0, .python = py,
					     .module = py ? "python3" : "libc10_cuda.so" };
	}
	return stacks_add(100, &key, 1, f, (uint32_t)n, false);
}

static void rows_of(pid_t pid, struct torch_snapshot *s, struct torch_rows *r)
{
	if (torch_mem_snapshot(pid, s) < 0 || torch_rows_build(r, s) < 0) {
		check(false, "snapshot and rows");
		exit(1);
	}
}

static void figures(void)
{
	pid_t pid = 100;
	uint64_t now = now_ns();
	const char *py_model[] = { "alloc_found_block", "py:/venv/lib/torch/nn/modules/linear.py", "py:/job/train.py" };
	const char *native[] = { "alloc_found_block", "malloc" };
	uint32_t s_model = stack_of(1, py_model, 3), s_native = stack_of(2, native, 2);
	torch_mem_set_state(pid, TORCH_TRACKING, NULL);
	torch_mem_set_before(pid, TORCH_BEFORE_READ, NULL, 3);
	torch_mem_set_attach(pid, now - 100000000000ull);	/* 100 s ago */
	/* A segment of 20 MiB with two blocks; one of 10 MiB emptied; an expandable one of 1 GiB
	 * with 20 MiB pages. */
	torch_mem_add_segment(pid, &(struct torch_segment){ .base = 0x100000000, .size = 20 * MiB, .device = 0 });
	torch_mem_add_segment(pid, &(struct torch_segment){ .base = 0x200000000, .size = 10 * MiB, .device = 0 });
	torch_mem_add_segment(pid, &(struct torch_segment){ .base = 0x300000000, .size = 1024 * MiB, .device = 0,
							      .expandable = true, .page = 20 * MiB });
	block(pid, 0xa1, 0x100000000, 4 * MiB, 0, 0, false);			/* before gputop came */
	block(pid, 0xa2, 0x100000000 + 4 * MiB, 8 * MiB, now - 1000000000, s_model, false);
	block(pid, 0xa3, 0x200000000, 2 * MiB, now - 2000000000, s_native, false);
	torch_mem_on_free(pid, 0xa3, now);					/* its segment is empty */
	block(pid, 0xb1, 0x300000000 + 19 * MiB, 2 * MiB, now - 40000000000ull, s_model, true);	/* pages 0, 1 */
	block(pid, 0xb2, 0x300000000 + 100 * MiB, 1 * MiB, now - 500000000, s_model, true);	/* page 5 */
	block(pid, 0xb2, 0x300000000 + 100 * MiB, 1 * MiB, now - 500000000, s_model, true);	/* again */
	check(!torch_mem_on_free(pid, 0xdead, now), "a free of a block never seen is not one");
	/* A free that began before its block was handed out again (another thread's, returned
	 * late) leaves the block's new life alone. */
	block(pid, 0xe1, 0x100000000 + 12 * MiB, 1 * MiB, now - 300000000, s_model, false);
	check(torch_mem_on_free(pid, 0xe1, now - 400000000) && torch_mem_live_bytes(pid, 0) == 16 * MiB,
	      "a free of the block's life before: the block stays");
	check(torch_mem_on_free(pid, 0xe1, now - 200000000) && torch_mem_live_bytes(pid, 0) == 15 * MiB,
	      "its own free: gone");
	struct torch_alloc_stats st = { .allocated = (int64_t)(15 * MiB), .reserved = (int64_t)(20 * MiB + 10 * MiB + 140 * MiB),
					.segments = 3 };
	torch_mem_set_alloc_stats(pid, 0, &st);

	struct torch_snapshot s;
	struct torch_rows r;
	rows_of(pid, &s, &r);
	check(r.state == TORCH_TRACKING && r.before == TORCH_BEFORE_READ, "tracking, blocks before read");
	check(r.n_device == 1 && r.device[0].allocated == 15 * MiB && r.device[0].live_blocks == 4,
	      "15 MiB in 4 live blocks (the block recorded twice counted once)");
	check(r.device[0].agrees, "the allocator's count agrees");
	check(r.device[0].free_in_segments == 155 * MiB, "free in segments: reserved - allocated");
	check(r.unknown_frees == 1, "one unknown free");
	check(r.read_threads == 3, "the threads held while the blocks before were read");
	/* Held: the 20 MiB segment, 3 pages of the expandable one; the 10 MiB segment goes. */
	check(r.device[0].empty_cache_known && r.device[0].empty_cache == 170 * MiB - 20 * MiB - 60 * MiB,
	      "empty_cache(): reserved - held segments - touched pages (90 MiB)");
	check(r.n_block == 4 && r.block[0].b->size == 8 * MiB && r.block[3].b->size == 1 * MiB, "blocks largest first");
	check(r.block[1].before && r.block[1].age_ns >= 100000000000ull, "a block from before: as old as the attach");
	check(r.n_leak == 2 && r.leak[0]->before && r.leak[1]->b->block == 0xb1, "leak candidates (30 s), oldest first");
	check(r.block[0].site && r.block[0].site->python && strcmp(r.block[0].site->file, "/job/train.py") == 0,
	      "the line: the innermost Python frame outside the torch package");
	check(r.n_site == 2 && r.site[0].live_bytes == 11 * MiB && r.site[0].live_blocks == 3 && !r.site[1].site &&
	      r.site[1].before, "by line: train.py's 3 blocks, then the one from before");
	torch_rows_free(&r);
	torch_mem_snapshot_free(&s);

	/* A live block whose segment is not known: no estimate. */
	block(pid, 0xc1, 0x900000000, 1 * MiB, now, s_native, false);
	rows_of(pid, &s, &r);
	check(!r.device[0].empty_cache_known, "a block in an unknown segment: empty_cache() not known");
	check(r.block[r.n_block - 1].site && strcmp(r.block[r.n_block - 1].site->function, "malloc") == 0,
	      "a stack of PyTorch's libraries alone: its outermost frame");
	check(r.device[0].agrees, "agrees: compared when the allocator's count was read, not since");
	torch_rows_free(&r);
	torch_mem_snapshot_free(&s);

	/* A second process: one whose blocks before are unknown; merged rows say unknown. */
	torch_mem_set_state(200, TORCH_TRACKING, NULL);
	torch_mem_set_before(200, TORCH_BEFORE_UNKNOWN, "blocks before attach unknown: test", 2);
	torch_mem_set_state(300, TORCH_UNKNOWN, "not one gputop knows");
	rows_of(0, &s, &r);
	check(r.state == TORCH_TRACKING && r.before == TORCH_BEFORE_UNKNOWN, "several: tracking, before unknown");
	check(strstr(r.why, "unknown: test") != NULL, "several: says why");
	torch_rows_free(&r);
	torch_mem_snapshot_free(&s);
	rows_of(300, &s, &r);
	check(r.state == TORCH_UNKNOWN && r.n_device == 0, "an unknown allocator alone: nothing shown");
	torch_rows_free(&r);
	torch_mem_snapshot_free(&s);
	rows_of(4242, &s, &r);
	check(r.state == TORCH_ABSENT, "a process without PyTorch: absent");
	torch_rows_free(&r);
	torch_mem_snapshot_free(&s);
}

static void metrics(void)
{
	struct stats_snapshot snap;
	struct rows rows;
	char *text = NULL;
	size_t len;
	if (stats_snapshot_of(100, &snap) < 0 || rows_build(&rows, &snap, NULL) < 0) {
		check(false, "metrics: a snapshot");
		return;
	}
	struct openmetrics_series series;
	openmetrics_series_init(&series);
	struct openmetrics_process p = { .pid = 100, .rank = -1, .local_rank = -1, .running = true,
					 .snap = &snap, .rows = &rows, .series = &series };
	struct openmetrics_session session = { 0 };
	FILE *f = open_memstream(&text, &len);
	int err = openmetrics_write(f, METRICS_OPENMETRICS, &session, &p, 1, 10);
	fclose(f);
	check(!err && strstr(text, "gputop_torch_reserved_bytes{pid=\"100\",device=\"0\"} 178257920\n"),
	      "metrics: reserved bytes by device");
	check(strstr(text, "gputop_torch_allocated_bytes{pid=\"100\",device=\"0\"} 16777216\n") != NULL,
	      "metrics: allocated bytes (16 MiB)");
	check(strstr(text, "gputop_torch_live_blocks{pid=\"100\",device=\"0\"} 5\n") != NULL, "metrics: live blocks");
	check(strstr(text, "# TYPE gputop_torch_empty_cache_bytes gauge\n") &&
	      !strstr(text, "gputop_torch_empty_cache_bytes{"), "metrics: no empty_cache sample where not known");
	free(text);
	openmetrics_series_free(&series);
	rows_free(&rows);
	stats_snapshot_free(&snap);
}

int main(void)
{
	if (stats_init() < 0)
		return 1;
	stats_process_new(100, 1, "train");
	figures();
	metrics();
	torch_mem_free_all();
	stacks_free();
	stats_free();
	printf("# %d failure(s)\n", failures);
	return failures != 0;
}
