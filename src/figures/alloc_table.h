/* alloc_table.h — the live allocations stats.c holds: records by address, and the address
 * ranges of the device/managed ones for interior-pointer lookups. Not thread-safe: stats.c
 * calls it under its mutex. It keeps records only; live byte counts and peaks are stats.c's. */
#ifndef GPUTOP_ALLOC_TABLE_H
#define GPUTOP_ALLOC_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

struct alloc_table;

struct alloc_table *alloc_table_new(void);	/* NULL when out of memory */
void alloc_table_free(struct alloc_table *t);	/* t may be NULL */

/* Records a (addr != 0, not live in t): -ENOMEM, and nothing recorded, when it cannot. */
int alloc_table_put(struct alloc_table *t, const struct stats_alloc *a);
/* Drops the record at addr, copied to *gone; false if there is none. */
bool alloc_table_remove(struct alloc_table *t, uint64_t addr, struct stats_alloc *gone);

/* The record at addr, to change its details (never its address or size); NULL if none. */
struct stats_alloc *alloc_table_find(struct alloc_table *t, uint64_t addr);

typedef void alloc_table_gone_fn(const struct stats_alloc *gone, void *arg);
/* Drops every device/managed record whose range overlaps a's (when a is one itself), calling
 * gone for each. */
void alloc_table_forget_overlaps(struct alloc_table *t, const struct stats_alloc *a,
				 alloc_table_gone_fn *gone, void *arg);

/* Whether addr lies inside a live device/managed allocation. */
bool alloc_table_on_device(const struct alloc_table *t, uint64_t addr);

/* The next record from *pos on, in no order (start with *pos = 0); NULL after the last. */
/* The device of the live device or managed allocation holding addr; -1: none, or not known. */
int alloc_table_device_at(const struct alloc_table *t, uint64_t addr);
const struct stats_alloc *alloc_table_next(const struct alloc_table *t, size_t *pos);
size_t alloc_table_count(const struct alloc_table *t);
size_t alloc_table_capacity(const struct alloc_table *t);	/* slots of the hash map */

#endif
