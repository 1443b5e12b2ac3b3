/* gputime_feed.c — --gpu-time's records turned into figures (gputime_ring.h): pure, but for
 * the figures it feeds, so that tests/unit/test_gputime_feed.c runs it on made-up records. */
#include "gputime_ring.h"

#include <stdlib.h>

#include "stats.h"

static int by_start(const void *a, const void *b)
{
	const struct gt_record *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* CUpti_ActivityMemcpyKind: 1 HtoD, 2 DtoH, 3 HtoA, 4 AtoH, 5 AtoA, 6 AtoD, 7 DtoA, 8 DtoD,
 * 9 HtoH, 10 PtoP (arrays are device memory). */
static enum copy_dir copy_dir_of(uint8_t kind)
{
	switch (kind) {
	case 1: case 3: return DIR_H2D;
	case 2: case 4: return DIR_D2H;
	case 5: case 6: case 7: case 8: case 10: return DIR_D2D;
	case 9: return DIR_H2H;
	default: return DIR_COUNT;	/* unknown: counted in no direction */
	}
}

static void busy_add(struct gputime_feed *f, const struct gt_record *r)
{
	uint64_t *end = &f->dev_end[r->device < 64 ? r->device : 63];
	uint64_t from = r->start > *end ? r->start : *end;
	if (r->end > from) {
		stats_on_gpu_busy(f->proc, r->end - from);
		*end = r->end;
	}
}

void gputime_feed_records(struct gputime_feed *f, struct gt_record *r, size_t n)
{
	qsort(r, n, sizeof *r, by_start);
	for (size_t i = 0; i < n; i++) {
		uint64_t ns = r[i].end > r[i].start ? r[i].end - r[i].start : 0;
		switch (r[i].kind) {
		case GT_KERNEL: {
			int id = r[i].name == GT_NO_NAME ? -1 : f->kernel_id(f->ctx, r[i].name);
			if (id < 0)
				f->unnamed++;
			else
				stats_on_gpu_kernel(f->proc, id, ns);
			busy_add(f, &r[i]);
			break;
		}
		case GT_MEMCPY:
			stats_on_gpu_copy(f->proc, copy_dir_of(r[i].copy_kind), false, r[i].bytes, ns);
			break;
		case GT_MEMSET:
			stats_on_gpu_copy(f->proc, DIR_COUNT, true, r[i].bytes, ns);
			break;
		}
	}
}
