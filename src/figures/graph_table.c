/* graph_table.c — executable graphs and what a launch of each runs (graph_table.h). A few
 * graphs per program (PyTorch makes one per captured shape): an array by id, with a hash map
 * from the live handles. */
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
	uint32_t kernel_entries;	/* over the live graphs, at most GRAPH_TABLE_MAX_KERNELS */
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
		free(g->entries[i].kernels);
	free(g->entries);
	hashmap_clear(&g->by_exec);
	free(g);
}

/* A new row for exec (a handle a destroyed graph had names the new one from now on). */
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

static struct graph_entry *find(struct graph_table *g, uint64_t exec)
{
	struct graph_key *k = exec ? hashmap_find(&g->by_exec, exec) : NULL;
	return k ? &g->entries[k->index] : NULL;
}

struct graph_entry *graph_table_get(struct graph_table *g, uint64_t exec)
{
	struct graph_entry *e = find(g, exec);
	return e ? e : exec ? add(g, exec) : NULL;
}

static void drop_kernels(struct graph_table *g, struct graph_entry *e)
{
	g->kernel_entries -= e->n_kernels;
	free(e->kernels);
	e->kernels = NULL;
	e->n_kernels = 0;
}

/* The graph's kernels, one entry per kernel with its count of nodes, into e. */
static int sum_kernels(struct graph_table *g, struct graph_entry *e, const struct stats_graph_node *nodes,
		       uint32_t n)
{
	uint32_t kernel_nodes = 0;
	for (uint32_t i = 0; i < n; i++)
		kernel_nodes += nodes[i].type == GRAPH_NODE_KERNEL;
	if (!kernel_nodes)
		return 0;
	struct graph_kernel *k = malloc(kernel_nodes * sizeof *k);
	uint32_t nk = 0;
	if (!k)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (nodes[i].type != GRAPH_NODE_KERNEL)
			continue;
		uint32_t j = 0;
		while (j < nk && k[j].kernel != nodes[i].kernel)
			j++;	/* a graph has a few distinct kernels: a linear search */
		if (j == nk)
			k[nk++] = (struct graph_kernel){ .kernel = nodes[i].kernel };
		k[j].nodes++;
		memcpy(k[j].grid, nodes[i].grid, sizeof k[j].grid);
		memcpy(k[j].block, nodes[i].block, sizeof k[j].block);
	}
	if (g->kernel_entries + nk > GRAPH_TABLE_MAX_KERNELS) {
		free(k);
		return -ENOSPC;
	}
	e->kernels = k;
	e->n_kernels = nk;
	g->kernel_entries += nk;
	return 0;
}

int graph_table_define(struct graph_table *g, uint64_t exec, const struct stats_graph_node *nodes,
		       uint32_t n, bool known, bool keep_id)
{
	struct graph_entry *e = keep_id ? find(g, exec) : NULL;
	if (!e && !(e = exec ? add(g, exec) : NULL))
		return -ENOMEM;
	drop_kernels(g, e);
	memset(e->copy, 0, sizeof e->copy);
	memset(&e->memset_, 0, sizeof e->memset_);
	e->row.nodes = e->row.kernel_nodes = e->row.copy_nodes = e->row.memset_nodes = 0;
	int err = known ? sum_kernels(g, e, nodes, n) : 0;
	e->row.nodes_known = known && err == 0;
	if (!e->row.nodes_known)
		return err;
	e->row.nodes = n;
	for (uint32_t i = 0; i < n; i++) {
		const struct stats_graph_node *d = &nodes[i];
		if (d->type == GRAPH_NODE_KERNEL) {
			e->row.kernel_nodes++;
		} else if (d->type == GRAPH_NODE_COPY && d->dir < DIR_COUNT) {
			e->row.copy_nodes++;
			e->copy[d->dir].calls++;
			e->copy[d->dir].bytes += d->bytes;
		} else if (d->type == GRAPH_NODE_MEMSET) {
			e->row.memset_nodes++;
			e->memset_.calls++;
			e->memset_.bytes += d->bytes;
		}
	}
	return 0;
}

void graph_table_forget(struct graph_table *g, uint64_t exec)
{
	struct graph_entry *e = find(g, exec);
	if (!e)
		return;
	drop_kernels(g, e);	/* the row keeps its figures; what a launch runs goes */
	hashmap_remove(&g->by_exec, exec, NULL);
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
