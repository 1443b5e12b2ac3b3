/* gputime_totals.h — how libgputop-gpu.so sums CUPTI's records in place (struct gt_totals and
 * the kernels' struct gt_sum of gputime_layout.h): each kernel's runs by name, copies by CUPTI's
 * kind, memsets, and the busy time per device as the union of kernel intervals. Header-only:
 * the library (built apart; no malloc on CUPTI's thread) and tests/unit/test_gputime_feed.c
 * include it. One writer at a time (the library's lock). */
#ifndef GPUTOP_GPUTIME_TOTALS_H
#define GPUTOP_GPUTIME_TOTALS_H

#include <stddef.h>
#include <stdint.h>

#include "gputime_layout.h"

enum gt_kind { GT_KERNEL = 1, GT_MEMCPY, GT_MEMSET };

/* A record's essentials, as read from CUPTI's buffer. */
struct gt_work {
	uint64_t start, end;
	uint64_t bytes;		/* copies and memsets */
	uint32_t name;		/* kernels: index into name_at[], GT_NO_NAME if the table is full */
	uint32_t device;
	uint8_t kind;		/* enum gt_kind */
	uint8_t copy_kind;	/* copies: CUpti_ActivityMemcpyKind */
};

static inline void gt_sum_add(struct gt_sum *s, uint64_t ns)
{
	uint64_t n = s->count;
	if (!n || ns < s->min_ns)
		s->min_ns = ns;
	if (ns > s->max_ns)
		s->max_ns = ns;
	s->ns += ns;
	__atomic_store_n(&s->count, n + 1, __ATOMIC_RELEASE);	/* the time, then the count */
}

static inline void gt_bytes_add(struct gt_bytes *b, uint64_t bytes, uint64_t ns)
{
	b->bytes += bytes;
	b->ns += ns;
	__atomic_store_n(&b->count, b->count + 1, __ATOMIC_RELEASE);
}

/* By start time, in place, without malloc (a shell sort: a buffer's records come nearly in
 * order, and at most a buffer's worth). */
static inline void gt_sort_by_start(struct gt_work *w, size_t n)
{
	static const size_t gaps[] = { 1750, 701, 301, 132, 57, 23, 10, 4, 1 };
	for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++)
		for (size_t gap = gaps[g], i = gap; i < n; i++) {
			struct gt_work x = w[i];
			size_t j = i;
			for (; j >= gap && w[j - gap].start > x.start; j -= gap)
				w[j] = w[j - gap];
			w[j] = x;
		}
}

/* Sums n records (reordered: by start time) into t and kernel[]. dev_end[GT_DEVICES], the
 * writer's own: per device the latest kernel end counted into busy time (a kernel that starts
 * before it counts only past it). */
static inline void gt_totals_add(struct gt_totals *t, struct gt_sum *kernel, uint64_t *dev_end,
				 struct gt_work *w, size_t n)
{
	gt_sort_by_start(w, n);
	for (size_t i = 0; i < n; i++) {
		uint64_t ns = w[i].end > w[i].start ? w[i].end - w[i].start : 0;
		switch (w[i].kind) {
		case GT_KERNEL: {
			gt_sum_add(w[i].name < GT_NAMES ? &kernel[w[i].name] : &t->unnamed, ns);
			uint64_t *end = &dev_end[w[i].device < GT_DEVICES ? w[i].device : GT_DEVICES - 1];
			uint64_t from = w[i].start > *end ? w[i].start : *end;
			if (w[i].end > from) {
				t->busy_ns += w[i].end - from;
				*end = w[i].end;
			}
			break;
		}
		case GT_MEMCPY:
			gt_bytes_add(&t->copy[w[i].copy_kind < GT_COPY_KINDS ? w[i].copy_kind : 0], w[i].bytes, ns);
			break;
		case GT_MEMSET:
			gt_bytes_add(&t->memset, w[i].bytes, ns);
			break;
		default:
			continue;
		}
	}
	__atomic_store_n(&t->records, t->records + n, __ATOMIC_RELEASE);
}

#endif
