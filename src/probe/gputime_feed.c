/* gputime_feed.c — --gpu-time's totals turned into figures (gputime_ring.h): what grew since
 * the last read added, pure but for the figures it feeds, so that tests/unit/test_gputime_feed.c
 * runs it on totals made by the library's own summing (inject/gputime_totals.h). */
#include "gputime_ring.h"

#include "stats.h"

/* CUpti_ActivityMemcpyKind: 1 HtoD, 2 DtoH, 3 HtoA, 4 AtoH, 5 AtoA, 6 AtoD, 7 DtoA, 8 DtoD,
 * 9 HtoH, 10 PtoP (arrays are device memory). */
static enum copy_dir copy_dir_of(unsigned kind)
{
	switch (kind) {
	case 1: case 3: return DIR_H2D;
	case 2: case 4: return DIR_D2H;
	case 5: case 6: case 7: case 8: case 10: return DIR_D2D;
	case 9: return DIR_H2H;
	default: return DIR_COUNT;	/* unknown: counted in no direction */
	}
}

static void feed_bytes(int proc, enum copy_dir dir, bool memset, const struct gt_bytes *now, struct gt_bytes *last)
{
	if (now->count != last->count || now->ns != last->ns || now->bytes != last->bytes)
		stats_on_gpu_copies(proc, dir, memset, now->count - last->count, now->bytes - last->bytes,
				    now->ns - last->ns);
	*last = *now;
}

void gputime_feed_totals(struct gputime_feed *f, const struct gt_totals *t, const struct gt_sum *kernel, uint32_t n)
{
	for (uint32_t i = 0; i < n && i < GT_NAMES; i++) {
		struct gt_sum *last = &f->last_kernel[i];
		if (kernel[i].count == last->count && kernel[i].ns == last->ns)
			continue;	/* a read between two stores of the library's may see the time
				 * before the count, or after: both are made whole at the next read */
		int id = f->kernel_id(f->ctx, i);
		struct stats_gpu_time runs = { .count = kernel[i].count - last->count,
					       .total_ns = kernel[i].ns - last->ns,
					       .min_ns = kernel[i].min_ns, .max_ns = kernel[i].max_ns };
		if (id < 0)
			f->unnamed += runs.count;	/* its time counts only into busy time */
		else
			stats_on_gpu_kernel_runs(f->proc, id, &runs);
		*last = kernel[i];
	}
	if (t->unnamed.count > f->last.unnamed.count)
		f->unnamed += t->unnamed.count - f->last.unnamed.count;
	f->last.unnamed = t->unnamed;
	for (unsigned k = 0; k < GT_COPY_KINDS; k++)
		feed_bytes(f->proc, copy_dir_of(k), false, &t->copy[k], &f->last.copy[k]);
	feed_bytes(f->proc, DIR_COUNT, true, &t->memset, &f->last.memset);
	if (t->busy_ns > f->last.busy_ns) {
		stats_on_gpu_busy(f->proc, t->busy_ns - f->last.busy_ns);
		f->last.busy_ns = t->busy_ns;
	}
	f->last.records = t->records;
}
