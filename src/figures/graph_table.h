/* graph_table.h — the executable CUDA graphs gputop knows, each with its nodes and launches,
 * bounded (GRAPH_TABLE_MAX graphs; later ones share no row and count as unknown). Not
 * thread-safe: stats.c calls it under its mutex. What a launch adds to the kernels and the
 * copies is stats.c's; this file keeps the graphs. */
#ifndef GPUTOP_GRAPH_TABLE_H
#define GPUTOP_GRAPH_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "stats.h"

#define GRAPH_TABLE_MAX 4096

struct graph_entry {
	struct stats_graph row;
	struct stats_graph_node *node;	/* row.nodes of them; NULL when not known */
};

struct graph_table;

struct graph_table *graph_table_new(void);	/* NULL when out of memory */
void graph_table_free(struct graph_table *g);	/* g may be NULL */

/* The entry of exec, added (nodes not known) if new; NULL when the table is full. */
struct graph_entry *graph_table_get(struct graph_table *g, uint64_t exec);
/* Sets exec's nodes (copied); a new id unless keep_id. 0 or -ENOMEM. */
int graph_table_define(struct graph_table *g, uint64_t exec, const struct stats_graph_node *nodes,
		       uint32_t n, bool known, bool keep_id);
void graph_table_reset_counts(struct graph_table *g);	/* 'z': launches back to zero */
uint32_t graph_table_count(const struct graph_table *g);
const struct graph_entry *graph_table_at(const struct graph_table *g, uint32_t i);	/* by id order */

#endif
