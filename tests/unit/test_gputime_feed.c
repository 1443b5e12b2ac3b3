/* test_gputime_feed.c — unit test of --gpu-time's records into the figures: the library's
 * summing in place (inject/gputime_totals.h) then src/probe/gputime_feed.c reading what grew:
 * each kernel's GPU time (count, total, min, max) by name, records out of order, busy time as
 * the union of intervals per device (overlaps counted once, devices apart, across buffers),
 * copies by CUPTI's copy kind, memsets, a record without a name, a buffer larger than any ring,
 * and a read that sees a kernel's time before its count. Standalone; "ok"/"not ok" per check. */
#include "gputime_ring.h"
#include "gputime_totals.h"
#include "stats.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const char *const names[] = { "kern_a(int)", "kern_b(float*)" };

static int kernel_id(void *ctx, uint32_t name)
{
	return name < 2 ? stats_kernel_id(0, names[name]) : -1;
}

static struct gt_work kernel(uint32_t name, uint32_t dev, uint64_t start, uint64_t end)
{
	return (struct gt_work){ .kind = GT_KERNEL, .name = name, .device = dev, .start = start, .end = end };
}

/* What the library keeps in the program, and its own state. */
static struct gt_totals totals;
static struct gt_sum sums[GT_NAMES];
static uint64_t dev_end[GT_DEVICES];
static struct gt_sum last_kernel[GT_NAMES];

/* The library sums a buffer; gputop reads the totals and feeds what grew. */
static void buffer(struct gputime_feed *f, struct gt_work *w, size_t n)
{
	gt_totals_add(&totals, sums, dev_end, w, n);
	gputime_feed_totals(f, &totals, sums, 2);
}

static const struct stats_kernel *row(const struct stats_snapshot *s, const char *name)
{
	for (size_t i = 0; i < s->n_kernel; i++)
		if (s->kernel[i].name && strcmp(s->kernel[i].name, name) == 0)
			return &s->kernel[i];
	return NULL;
}

int main(void)
{
	if (stats_init() < 0 || stats_process_new(42, 1, "test") < 0) {
		printf("not ok - stats set up\n");
		return 1;
	}
	struct gputime_feed f = { .kernel_id = kernel_id, .last_kernel = last_kernel };
	/* Device 0: a [100,200), b [150,400) overlapping it, a [500,530); out of order.
	 * Device 1: a [100,200) at the same time as device 0's. */
	struct gt_work batch1[] = {
		kernel(1, 0, 150, 400), kernel(0, 0, 500, 530), kernel(0, 0, 100, 200), kernel(0, 1, 100, 200),
		{ .kind = GT_MEMCPY, .copy_kind = 1, .bytes = 1000, .start = 10, .end = 20 },
		{ .kind = GT_MEMCPY, .copy_kind = 2, .bytes = 3000, .start = 30, .end = 60 },
		{ .kind = GT_MEMCPY, .copy_kind = 10, .bytes = 500, .start = 70, .end = 75 },
		{ .kind = GT_MEMSET, .bytes = 64, .start = 80, .end = 81 },
		kernel(GT_NO_NAME, 0, 600, 700),
	};
	buffer(&f, batch1, sizeof batch1 / sizeof batch1[0]);
	/* A later buffer: a record overlapping what was counted only counts past it. */
	struct gt_work batch2[] = { kernel(0, 0, 650, 800) };
	buffer(&f, batch2, 1);
	gputime_feed_totals(&f, &totals, sums, 2);	/* read again, nothing new: nothing added */
	stats_set_gpu_time(0, true, 1000, 3, f.unnamed);

	struct stats_snapshot s;
	if (stats_snapshot(&s) < 0) {
		printf("not ok - snapshot\n");
		return 1;
	}
	const struct stats_kernel *a = row(&s, "kern_a(int)"), *b = row(&s, "kern_b(float*)");
	check(a && a->gpu.count == 4 && a->gpu.total_ns == 100 + 30 + 100 + 150,
	      "kern_a: 4 runs, 380 ns (%" PRIu64 ", %" PRIu64 ")", a ? a->gpu.count : 0, a ? a->gpu.total_ns : 0);
	check(a && a->gpu.min_ns == 30 && a->gpu.max_ns == 150, "kern_a: min 30, max 150");
	check(b && b->gpu.count == 1 && b->gpu.total_ns == 250 && b->gpu.min_ns == 250, "kern_b: 1 run of 250 ns");
	check(a && a->launches == 0, "GPU time alone launches nothing");
	/* Device 0: [100,400) 300 + [500,530) 30 + [600,700) 100 (the unnamed one is busy time too)
	 * + [700,800) 100; device 1: 100. */
	check(s.gpu.busy_ns == 300 + 30 + 100 + 100 + 100, "busy: union per device, summed (%" PRIu64 ")", s.gpu.busy_ns);
	check(s.gpu.xfer[DIR_H2D].calls == 1 && s.gpu.xfer[DIR_H2D].bytes == 1000 && s.gpu.xfer[DIR_H2D].ns == 10,
	      "H2D copy: 1000 B in 10 ns");
	check(s.gpu.xfer[DIR_D2H].ns == 30 && s.gpu.xfer[DIR_D2D].bytes == 500, "D2H, and peer to peer as D2D");
	check(s.gpu.memset_.calls == 1 && s.gpu.memset_.bytes == 64 && s.gpu.memset_.ns == 1, "memset");
	check(f.unnamed == 1 && s.gpu.unnamed == 1 && s.gpu.dropped == 3, "one unnamed record, 3 dropped");
	check(s.gpu.on && s.gpu.since_ns == 1000 && s.gpu.until_ns == 0, "on since 1000");
	stats_snapshot_free(&s);

	/* 20,000 runs of kern_b in one buffer (a ring of 8,192 records dropped the rest before),
	 * in reverse order of start, and a read that sees kern_b's time before its count. */
	static struct gt_work many[20000];
	for (int i = 0; i < 20000; i++)
		many[i] = kernel(1, 2, 1000000 - 10 * (uint64_t)i, 1000000 - 10 * (uint64_t)i + 5 + i % 3);
	gt_totals_add(&totals, sums, dev_end, many, 20000);
	struct gt_sum seen[2] = { sums[0], sums[1] };
	seen[1].count--;	/* the count's store not yet seen: the time is */
	struct gt_totals t_seen = totals;
	gputime_feed_totals(&f, &t_seen, seen, 2);
	gputime_feed_totals(&f, &totals, sums, 2);	/* the next read */
	stats_snapshot(&s);
	b = row(&s, "kern_b(float*)");
	uint64_t want = 250;
	for (int i = 0; i < 20000; i++)
		want += 5 + i % 3;
	check(b && b->gpu.count == 20001 && b->gpu.total_ns == want && b->gpu.min_ns == 5 && b->gpu.max_ns == 250,
	      "kern_b: 20,001 runs, %" PRIu64 " ns, every one counted once (%" PRIu64 ", %" PRIu64 ")", want,
	      b ? b->gpu.count : 0, b ? b->gpu.total_ns : 0);
	check(s.gpu.busy_ns == 300 + 30 + 100 + 100 + 100 + (want - 250), "busy: device 2's runs, none overlapping (%" PRIu64 ")",
	      s.gpu.busy_ns);
	stats_snapshot_free(&s);

	stats_reset();	/* 'z' */
	stats_snapshot(&s);
	a = row(&s, "kern_a(int)");
	check(a && a->gpu.count == 0 && s.gpu.busy_ns == 0 && s.gpu.on, "z: GPU figures back to zero, still on");
	stats_snapshot_free(&s);
	stats_set_gpu_time(0, false, 5000, 0, 0);
	stats_snapshot(&s);
	check(s.gpu.on && s.gpu.until_ns == 5000, "off: recorded until 5000, still shown");
	stats_snapshot_free(&s);
	stats_free();
	return failures != 0;
}
