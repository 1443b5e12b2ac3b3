/* graph_table.c — executable graphs and their nodes (graph_table.h). A few graphs per program
 * (PyTorch makes one per captured shape): an array by id, with a hash map from the handle. */
#include "graph_table.h"
#include "hashmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct graph_key {
	uint64_t exec;
	uint64_t index;		/* into entries */
};

struct graph_table {
	struct graph_entry *entries;
	uint32_t n, cap;
	struct hashmap by_exec;
};

struct graph_table *graph_table_new(void)
{
	struct graph_table *g = calloc(1, sizeof *g);
	if (g && hashmap_init(&g->by_exec, sizeof(struct graph_key), 16, 0) < 0) {
		free(g);
		return NULL;
	}
	return g;
}

void graph_table_free(struct graph_table *g)
{
	if (!g)
		return;
	for (uint32_t i = 0; i < g->n; i++)
		free(g->entries[i].node);
	free(g->entries);
	hashmap_clear(&g->by_exec);
	free(g);
}

/* A new row for exec (its handle may be one a destroyed graph had: the old row stays, with its
 * launches, and the handle names the new one from now on). */
static struct graph_entry *add(struct graph_table *g, uint64_t exec)
{
	if (g->n == GRAPH_TABLE_MAX)
		return NULL;
	if (g->n == g->cap) {
		uint32_t cap = g->cap ? g->cap * 2 : 16;
		struct graph_entry *e = realloc(g->entries, cap * sizeof *e);
		if (!e)
			return NULL;
		g->entries = e;
		g->cap = cap;
	}
	struct graph_key *k = hashmap_insert(&g->by_exec, exec, NULL);
	if (!k)
		return NULL;
	k->index = g->n;
	struct graph_entry *e = &g->entries[g->n++];
	memset(e, 0, sizeof *e);
	e->row.exec = exec;
	e->row.id = g->n;
	return e;
}

struct graph_entry *graph_table_get(struct graph_table *g, uint64_t exec)
{
	struct graph_key *k = exec ? hashmap_find(&g->by_exec, exec) : NULL;
	return k ? &g->entries[k->index] : exec ? add(g, exec) : NULL;
}

int graph_table_define(struct graph_table *g, uint64_t exec, const struct stats_graph_node *nodes,
		       uint32_t n, bool known, bool keep_id)
{
	struct graph_key *k = exec ? hashmap_find(&g->by_exec, exec) : NULL;
	struct graph_entry *e = k && keep_id ? &g->entries[k->index] : add(g, exec);
	struct stats_graph_node *copy = NULL;
	if (!e)
		return -ENOMEM;
	if (known && n && !(copy = malloc(n * sizeof *copy)))
		return -ENOMEM;
	if (copy)
		memcpy(copy, nodes, n * sizeof *copy);
	free(e->node);
	e->node = copy;
	e->row.nodes_known = known;
	e->row.nodes = known ? n : 0;
	e->row.kernel_nodes = e->row.copy_nodes = e->row.memset_nodes = 0;
	for (uint32_t i = 0; known && i < n; i++) {
		e->row.kernel_nodes += nodes[i].type == GRAPH_NODE_KERNEL;
		e->row.copy_nodes += nodes[i].type == GRAPH_NODE_COPY;
		e->row.memset_nodes += nodes[i].type == GRAPH_NODE_MEMSET;
	}
	return 0;
}

void graph_table_reset_counts(struct graph_table *g)
{
	for (uint32_t i = 0; i < g->n; i++)
		g->entries[i].row.launches = 0;
}

uint32_t graph_table_count(const struct graph_table *g)
{
	return g->n;
}

const struct graph_entry *graph_table_at(const struct graph_table *g, uint32_t i)
{
	return i < g->n ? &g->entries[i] : NULL;
}
