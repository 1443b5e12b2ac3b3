/* site_rows.c — live allocations by site (site_rows.h). */
#include "site_rows.h"

#include <errno.h>
#include <stdlib.h>

#include "hashmap.h"

struct site_entry {		/* by stack id + 1 (0 is not a key) */
	uint64_t key;
	struct row_site row;
};

static int by_live_bytes(const void *a, const void *b)
{
	const struct row_site *x = a, *y = b;
	if (x->live_bytes != y->live_bytes)
		return x->live_bytes > y->live_bytes ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

long site_rows_build(const struct rows *rs, const struct stacks_snapshot *ss, struct row_site **out)
{
	struct hashmap m;
	*out = NULL;
	if (hashmap_init(&m, sizeof(struct site_entry), 16, 0) < 0)
		return -ENOMEM;
	long err = 0;
	for (size_t i = 0; i < rs->n_alloc && !err; i++) {
		const struct row_alloc *a = &rs->alloc[i];
		struct site_entry *e = hashmap_insert(&m, (uint64_t)a->stack + 1, NULL);
		if (!e) {
			err = -ENOMEM;
			break;
		}
		e->row.stack = a->stack;
		e->row.live_bytes += a->bytes;
		e->row.live_allocations++;
		if (a->age_ns > e->row.oldest_age_ns)
			e->row.oldest_age_ns = a->age_ns;
	}
	for (size_t i = 0; ss && i < ss->n_counts && !err; i++) {
		struct site_entry *e = hashmap_find(&m, (uint64_t)ss->counts[i].stack + 1);
		if (e) {	/* sites with nothing live are not rows */
			e->row.allocated_bytes = ss->counts[i].allocated_bytes;
			e->row.allocations = ss->counts[i].allocations;
		}
	}
	struct row_site *rows = err ? NULL : malloc((hashmap_count(&m) + 1) * sizeof *rows);
	long n = 0;
	if (!rows)
		err = -ENOMEM;
	size_t it = 0;
	for (struct site_entry *e; !err && (e = hashmap_next(&m, &it));)
		rows[n++] = e->row;
	hashmap_clear(&m);
	if (err)
		return err;
	qsort(rows, (size_t)n, sizeof *rows, by_live_bytes);
	*out = rows;
	return n;
}
