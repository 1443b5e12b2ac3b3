/* kernel_table.h — kernel names interned to small ids, one stats_kernel row per id, bounded
 * (STATS_MAX_KERNELS names, then one shared "(other kernels)" row). Not thread-safe: stats.c
 * calls it under its mutex. It keeps names and rows; what a launch counts is stats.c's. */
#ifndef GPUTOP_KERNEL_TABLE_H
#define GPUTOP_KERNEL_TABLE_H

#include <stdint.h>

#include "stats.h"

struct kernel_table;

struct kernel_table *kernel_table_new(void);	/* NULL when out of memory */
void kernel_table_free(struct kernel_table *k);	/* k may be NULL; names die with it */

/* The id of name (cut at a bound), added if new; -1 when the table or the names are full. */
int kernel_table_intern(struct kernel_table *k, const char *name);
/* The row of id; any other id (-1) gets the "(other kernels)" row, NULL if it cannot exist. */
struct stats_kernel *kernel_table_row(struct kernel_table *k, int id);
/* All rows, by id, and how many: their launch figures are the caller's to change. */
struct stats_kernel *kernel_table_rows(struct kernel_table *k);
uint32_t kernel_table_count(const struct kernel_table *k);

#endif
