/* graph_table.h — the executable CUDA graphs gputop knows: what one launch of each runs (its
 * kernels, each with how many nodes run it, and its copies and memsets summed per kind) and how
 * often it was launched. Bounded: at most GRAPH_TABLE_MAX graphs (later ones get no row) and
 * GRAPH_TABLE_MAX_KERNELS kernel entries over the graphs not destroyed (a graph beyond that is
 * kept with its nodes unknown): ~12 MiB at most. Not thread-safe: stats.c calls it under its
 * mutex, and adds what a launch runs to the kernels and the copies. */
#ifndef GPUTOP_GRAPH_TABLE_H
#define GPUTOP_GRAPH_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "stats.h"

#define GRAPH_TABLE_MAX 16384
#define GRAPH_TABLE_MAX_KERNELS (1u << 18)

/* A kernel of a graph: how many of its nodes run it, with the last one's dimensions. */
struct graph_kernel {
	int kernel;
	uint32_t nodes;
	uint32_t grid[3], block[3];
};

struct graph_entry {
	struct stats_graph row;
	struct graph_kernel *kernels;	/* n_kernels of them; NULL when not known or forgotten */
	uint32_t n_kernels;
	struct stats_xfer copy[DIR_COUNT];	/* per launch: calls = nodes, bytes */
	struct stats_xfer memset_;
};

struct graph_table;

struct graph_table *graph_table_new(void);	/* NULL when out of memory */
void graph_table_free(struct graph_table *g);	/* g may be NULL */

/* The entry of exec, added (nodes not known) if new; NULL for 0 or when the table is full. */
struct graph_entry *graph_table_get(struct graph_table *g, uint64_t exec);
/* Sets what exec runs from its nodes (summed); a new row unless keep_id (an update). 0,
 * -ENOMEM, or -ENOSPC (too many kernel entries: the row says its nodes are not known). */
int graph_table_define(struct graph_table *g, uint64_t exec, const struct stats_graph_node *nodes,
		       uint32_t n, bool known, bool keep_id);
/* exec was destroyed: its row stays, its handle may name a new graph. */
void graph_table_forget(struct graph_table *g, uint64_t exec);
void graph_table_reset_counts(struct graph_table *g);	/* 'z': launches back to zero */
uint32_t graph_table_count(const struct graph_table *g);
const struct graph_entry *graph_table_at(const struct graph_table *g, uint32_t i);	/* by id order */

#endif
