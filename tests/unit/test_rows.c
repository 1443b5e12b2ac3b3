/* test_rows.c — unit test of src/figures/rows.c and ui/cells.c: the rows every presenter shows
 * (which rows, their order, totals, interval deltas and rates, with and without a previous
 * snapshot) and the text of their cells that the TUI and -b share (launch figures with "~",
 * rates per second, grid x block, what is not known). Statistics are fed through the stats
 * API; snapshot times are set by hand so that intervals are exact. One "ok"/"not ok" line per
 * check. */
#include "cells.h"
#include "cuda_api.h"
#include "format.h"
#include "rows.h"
#include "stats.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEC 1000000000ull

#include "check.h"

static void check_str(const char *what, const char *got, const char *want)
{
	check(got && strcmp(got, want) == 0, "%s: \"%s\" (want \"%s\")", what, got ? got : "(null)",
	      want);
}

static int api(const char *name)
{
	int i = cuda_api_find(name);

	if (i < 0) {
		printf("not ok - %s is in the API table\n", name);
		exit(1);
	}
	return i;
}

static struct stats_snapshot snap(uint64_t t_ns)
{
	struct stats_snapshot s;

	if (stats_snapshot(&s) < 0) {
		printf("not ok - stats_snapshot failed\n");
		exit(1);
	}
	s.t_ns = t_ns;
	return s;
}

static const struct row_api *api_row(const struct rows *rs, const char *name)
{
	for (size_t i = 0; i < rs->n_api; i++)
		if (rs->api[i].name && strcmp(rs->api[i].name, name) == 0)
			return &rs->api[i];
	return NULL;
}

/* Before the previous snapshot: 2 kernels, copies, a memset, three allocations. */
static int k_step, k_init;
static uint64_t t0;
static const uint32_t g1[3] = { 16, 1, 1 }, b1[3] = { 128, 1, 1 };

static void feed_before(void)
{
	uint32_t g2[3] = { 2, 3, 1 }, b2[3] = { 64, 2, 1 };

	k_step = stats_kernel_id(0, "zeta_step(float*)");
	k_init = stats_kernel_id(0, "alpha_init(int)");
	stats_kernel_id(0, "never_launched");
	for (int i = 0; i < 4; i++) {
		stats_on_call(0, api("cudaLaunchKernel"), 0, false, 0);
		stats_on_launch(0, k_step, g1, b1);
	}
	stats_on_call(0, api("cudaLaunchKernel"), 0, false, 0);
	stats_on_launch(0, k_init, g2, b2);
	for (int i = 0; i < 3; i++)
		stats_on_call(0, api("cudaMalloc"), 1000, true, 0);
	stats_on_call(0, api("cudaMalloc"), 1000, true, 2);	/* cudaErrorMemoryAllocation */
	stats_on_call(0, api("cudaFree"), 600, true, 999999);	/* a code without a name */
	stats_on_copy(0, DIR_H2D, COPY_SYNC, 1000, 1000);
	stats_on_copy(0, DIR_H2D, COPY_ASYNC, 3000, 1000);
	stats_on_memset(0, 4096, 1000);
	stats_on_alloc(0, api("cudaMalloc"), 0x7f0000100000, 1024, MEM_DEVICE, 0, 4242, t0, "liba.so");
	stats_on_alloc(0, api("cudaMalloc"), 0x7f0000000000, 1024, MEM_DEVICE, -1, 4243, t0 + SEC,
		       "libb.so");
	stats_on_alloc(0, api("cudaMallocHost"), 0x600000, 8192, MEM_HOST, -1, 4242, t0, "liba.so");
}

/* Between the previous snapshot and the current one (2 s later). */
static void feed_after(void)
{
	for (int i = 0; i < 5; i++) {
		stats_on_call(0, api("cudaLaunchKernel"), 0, false, 0);
		stats_on_launch(0, k_step, g1, b1);
	}
	stats_on_copy(0, DIR_H2D, COPY_ASYNC, 2000, 500);
	stats_on_copy(0, DIR_D2H, COPY_SYNC, 100, 50);
}

static void test_rows_interval(const struct rows *rs)
{
	const struct row_api *launch = api_row(rs, "cudaLaunchKernel");
	const struct row_api *malloc_ = api_row(rs, "cudaMalloc"), *free_ = api_row(rs, "cudaFree");

	check(rs->interval_ns == 2 * SEC, "the interval is the time between the snapshots");

	check(rs->n_api == 3, "three API rows: the functions called (%zu)", rs->n_api);
	check(rs->n_api == 3 && rs->api[0].index == api("cudaLaunchKernel") &&
	      rs->api[1].index == api("cudaMalloc") && rs->api[2].index == api("cudaFree"),
	      "API rows by calls, most first");
	check(launch && launch->calls == 10 && launch->calls_delta == 5 && launch->launch &&
	      !launch->returns_seen && launch->layer == LAYER_RUNTIME,
	      "cudaLaunchKernel: 10 calls, 5 in the interval, a launch, entry only");
	check(malloc_ && malloc_->calls == 4 && malloc_->calls_delta == 0 && malloc_->errors == 1 &&
	      malloc_->ns == 4000 && malloc_->avg_ns == 1000 && !malloc_->launch &&
	      malloc_->stops_per_call == -1, "cudaMalloc: calls, errors, time and its average");
	check_str("cudaMalloc: the last error's name", malloc_ ? malloc_->last_error_name : NULL,
		  "cudaErrorMemoryAllocation");
	check(free_ && free_->last_error == 999999 && !free_->last_error_name,
	      "cudaFree: a last error without a name keeps its code");
	check(rs->calls == 15 && rs->calls_delta == 5 && rs->errors == 2,
	      "API totals: 15 calls, 5 in the interval, 2 errors");

	check(rs->n_kernel == 2, "two kernel rows: the launched ones (%zu)", rs->n_kernel);
	if (rs->n_kernel == 2) {
		const struct row_kernel *a = &rs->kernel[0], *b = &rs->kernel[1];

		check(a->id == k_step && a->launches == 9 && a->launches_delta == 5,
		      "zeta_step first: 9 launches, 5 in the interval");
		check(a->grid[0] == 16 && a->block[0] == 128 && b->grid[1] == 3 && b->block[1] == 2,
		      "kernel rows keep the last grid and block");
		check(b->id == k_init && b->launches == 1 && b->launches_delta == 0,
		      "alpha_init second: none in the interval");
	}
	check(rs->launches == 10 && rs->launches_delta == 5, "launches: 10, 5 in the interval");

	check_str("copy row name", rs->copy[DIR_H2D][COPY_SYNC].name, "H2D");
	check_str("async copy row name", rs->copy[DIR_H2D][COPY_ASYNC].name, "H2D async");
	check(rs->copy[DIR_H2D][COPY_ASYNC].total.bytes == 5000 &&
	      rs->copy[DIR_H2D][COPY_ASYNC].delta.bytes == 2000 &&
	      rs->copy[DIR_H2D][COPY_ASYNC].delta.calls == 1 &&
	      rs->copy[DIR_H2D][COPY_SYNC].delta.calls == 0, "H2D rows: totals and interval");
	check(rs->dir[DIR_H2D].total.calls == 3 && rs->dir[DIR_H2D].total.bytes == 6000 &&
	      rs->dir[DIR_H2D].total.ns == 2500 && rs->dir[DIR_H2D].delta.bytes == 2000,
	      "the H2D direction: both modes");
	check(rs->copies.total.calls == 4 && rs->copies.total.bytes == 6100 &&
	      rs->copies.delta.calls == 2, "all copies: every direction");
	check(rs->memset_.total.calls == 1 && rs->memset_.delta.calls == 0,
	      "memset: 1, none in the interval");

	check(rs->n_alloc == 3, "three allocation rows");
	if (rs->n_alloc == 3) {
		check_str("largest allocation first", rs->alloc[0].address, "0x600000");
		check_str("equal sizes by address", rs->alloc[1].address, "0x7f0000000000");
		check_str("its kind", rs->alloc[0].kind_name, "host");
		check_str("its function", rs->alloc[0].api, "cudaMallocHost");
		check(rs->alloc[1].age_ns == 5 * SEC && rs->alloc[2].age_ns == 6 * SEC,
		      "ages at the snapshot");
		check(rs->alloc[1].device == -1 && rs->alloc[2].device == 0 &&
		      rs->alloc[2].tid == 4242, "device and thread");
		check_str("the calling module", rs->alloc[1].caller, "libb.so");
	}
}

static void test_rows_session(const struct stats_snapshot *cur)
{
	struct rows rs;

	check(rows_build(&rs, cur, NULL) == 0, "rows_build without a previous snapshot");
	check(rs.interval_ns == cur->t_ns - cur->start_ns, "... the interval is the whole session");
	check(rs.n_kernel == 2 && rs.kernel[0].launches_delta == 9 && rs.launches_delta == 10,
	      "... deltas are the totals");
	check(rs.copy[DIR_H2D][COPY_ASYNC].delta.bytes == 5000 && rs.calls_delta == rs.calls,
	      "... for copies and calls too");
	rows_free(&rs);
	check(rs.n_api == 0 && !rs.api, "rows_free leaves the rows empty");
}

static void test_cells(const struct rows *rs)
{
	const struct row_api *launch = api_row(rs, "cudaLaunchKernel");
	const struct row_api *malloc_ = api_row(rs, "cudaMalloc"), *free_ = api_row(rs, "cudaFree");
	struct cells_api ca;
	struct cells_kernel ck;
	struct cells_xfer cx;
	struct cells_alloc cl;
	char buf[CELLS_LEN];

	if (!launch || !malloc_ || !free_ || rs->n_kernel != 2 || rs->n_alloc != 3) {
		check(false, "rows to format");
		return;
	}
	cells_api(&ca, launch, rs, true);
	check_str("launch calls, estimated", ca.calls, "~10");
	check_str("launch calls per second, estimated", ca.rate, "~2.5");
	check_str("entry-only: errors not known", ca.errors, "\u2014");
	check_str("entry-only: time not known", ca.avg, "\u2014");
	cells_api(&ca, malloc_, rs, true);
	check_str("other calls are never estimates", ca.calls, "4");
	check_str("last error", ca.last_error, "cudaErrorMemoryAllocation");
	check_str("average time", ca.avg, "1.00 \u00b5s");
	cells_api(&ca, free_, rs, false);
	check_str("a last error without a name", ca.last_error, "error 999999");

	cells_kernel(&ck, &rs->kernel[0], rs, false);
	check_str("kernel name", ck.name, "zeta_step(float*)");
	check_str("kernel launches", ck.launches, "9");
	check_str("kernel launches per second", ck.rate, "2.5");
	check_str("grid x block, y and z of 1", ck.dims, "16 \u00d7 128");
	check_str("share of launches", ck.share, "90.0%");
	cells_kernel(&ck, &rs->kernel[1], rs, true);
	check_str("grid x block in full", ck.dims, "(2,3,1) \u00d7 (64,2,1)");
	check_str("estimated launches", ck.launches, "~1");
	check_str("estimated share", ck.share, "~10.0%");
	check_str("no launch in the interval", ck.rate, "~0");

	cells_dims(buf, sizeof(buf), (uint32_t[3]){ 16, 1, 1 }, (uint32_t[3]){ 0, 0, 0 });
	check_str("a block not known", buf, "16 \u00d7 ?");
	cells_dims(buf, sizeof(buf), (uint32_t[3]){ 0 }, (uint32_t[3]){ 0 });
	check_str("neither known", buf, "\u2014");
	cells_per_sec(buf, sizeof(buf), 5, 0, false);
	check_str("no interval, no rate", buf, "\u2014");
	cells_per_sec(buf, sizeof(buf), 25000, SEC, false);
	check_str("a rate of thousands", buf, "25.0k");

	cells_xfer(&cx, &rs->copy[DIR_H2D][COPY_SYNC]);
	check_str("copy name", cx.name, "H2D");
	check_str("no copy in the interval: no rate", cx.rate, "\u2014");
	cells_xfer(&cx, &rs->copy[DIR_H2D][COPY_ASYNC]);
	check_str("copy bytes", cx.bytes, "4.88 KiB");
	check_str("rate of the interval", cx.rate, "4.00 GB/s");
	check_str("average rate", cx.avg_rate, "3.33 GB/s");

	cells_alloc(&cl, &rs->alloc[1], rs);
	check_str("allocation address", cl.address, "0x7f0000000000");
	check_str("allocation size", cl.size, "1.00 KiB");
	check_str("device not known", cl.device, "\u2014");
	check_str("allocation age", cl.age, "5.0s");
	check_str("allocation thread", cl.thread, "4243");

	fmt_set_ascii(true);
	cells_kernel(&ck, &rs->kernel[1], rs, false);
	check_str("ASCII: grid x block with an x", ck.dims, "(2,3,1) x (64,2,1)");
	fmt_set_ascii(false);
}

/* rows.all_failed and its line: said where every call with a known result failed, and only then
 * (after a reset: the counters start again; issue 36, item 5). */
static void test_all_failed(void)
{
	struct stats_snapshot s;
	struct rows rs;
	char line[160];

	s = snap(t0 + 7 * SEC);
	check(rows_build(&rs, &s, NULL) == 0 && !rs.all_failed, "calls that succeeded: nothing said");
	cells_all_failed(line, sizeof line, &rs);
	check(line[0] == 0, "... and no line");
	rows_free(&rs);
	stats_snapshot_free(&s);

	stats_reset();
	for (int i = 0; i < 3; i++)
		stats_on_call(0, api("cudaMalloc"), 100, true, 35);
	stats_on_call(0, api("cudaLaunchKernel"), 100, true, 35);
	stats_on_call(0, api("cudaSetDevice"), 0, false, 0);	/* entry only: its result is not known */
	s = snap(t0 + 8 * SEC);
	check(rows_build(&rs, &s, NULL) == 0, "rows_build after a reset");
	check_str("every call failed with one error", rs.all_failed, "cudaErrorInsufficientDriver");
	cells_all_failed(line, sizeof line, &rs);
	check_str("said once, plainly", line, "every CUDA call failed: cudaErrorInsufficientDriver \u2014 is there a driver?");
	rows_free(&rs);
	stats_snapshot_free(&s);

	stats_on_call(0, api("cudaFree"), 100, true, 2);
	s = snap(t0 + 9 * SEC);
	check(rows_build(&rs, &s, NULL) == 0, "rows_build");
	check_str("two errors: said without a name", rs.all_failed, "");
	cells_all_failed(line, sizeof line, &rs);
	check_str("... the line", line, "every CUDA call failed, with several errors (see the API table)");
	rows_free(&rs);
	stats_snapshot_free(&s);

	stats_on_call(0, api("cudaMemcpy"), 100, true, 0);
	s = snap(t0 + 10 * SEC);
	check(rows_build(&rs, &s, NULL) == 0 && !rs.all_failed, "one call that succeeded: nothing said");
	rows_free(&rs);
	stats_snapshot_free(&s);
}

int main(void)
{
	struct stats_snapshot prev, cur;
	struct rows rs;

	check(stats_init() == 0, "stats_init");
	prev = snap(0);
	t0 = prev.start_ns;
	stats_snapshot_free(&prev);
	feed_before();
	prev = snap(t0 + 4 * SEC);
	feed_after();
	cur = snap(t0 + 6 * SEC);

	check(rows_build(&rs, &cur, &prev) == 0, "rows_build");
	test_rows_interval(&rs);
	test_cells(&rs);
	rows_free(&rs);
	test_rows_session(&cur);

	check(rows_delta(3, 5) == 3 && rows_delta(5, 3) == 2, "rows_delta: from zero after a reset");
	check(rows_per_sec(5, 2 * SEC) == 2.5 && rows_per_sec(5, 0) == 0, "rows_per_sec");
	test_all_failed();

	stats_snapshot_free(&prev);
	stats_snapshot_free(&cur);
	stats_free();
	printf("# %d failure(s)\n", failures);
	return failures != 0;
}
