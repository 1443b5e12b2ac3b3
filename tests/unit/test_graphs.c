/* test_graphs.c — unit test of the CUDA graph figures (src/figures/graph_table.c through
 * stats.c): what one launch of a graph adds (each kernel node one execution, copies and memsets
 * per kind), an update keeping the row, a destroyed handle coming back as a new graph, a graph
 * whose nodes are not known, the bound on kernel entries, and reset. One "ok"/"not ok" line per
 * check. */
#include "graph_table.h"
#include "stats.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static struct stats_snapshot snap(void)
{
	struct stats_snapshot s;

	if (stats_snapshot(&s) < 0) {
		printf("not ok - stats_snapshot failed\n");
		exit(1);
	}
	return s;
}

static struct stats_graph_node kernel(int id, uint32_t grid)
{
	return (struct stats_graph_node){ .type = GRAPH_NODE_KERNEL, .kernel = id, .grid = { grid, 1, 1 },
					  .block = { 128, 1, 1 } };
}

static void stats_level(void)
{
	int a = stats_kernel_id(0, "a"), b = stats_kernel_id(0, "b");
	struct stats_graph_node nodes[] = {
		kernel(a, 1), kernel(b, 2), kernel(a, 3),
		{ .type = GRAPH_NODE_COPY, .dir = DIR_D2H, .bytes = 4096 },
		{ .type = GRAPH_NODE_MEMSET, .bytes = 100 },
		{ .type = GRAPH_NODE_OTHER },
	};
	stats_graph_define(0, 0x100, nodes, 6, true, false);
	for (int i = 0; i < 10; i++)
		stats_on_graph_launch(0, 0x100);
	struct stats_snapshot s = snap();
	check(s.kernel[a].graph_launches == 20 && s.kernel[a].launches == 0,
	      "a graph with 2 nodes of a, launched 10 times: a ran 20 times in graphs, 0 launches");
	check(s.kernel[b].graph_launches == 10, "b (1 node): 10");
	check(s.kernel[a].grid[0] == 3, "the last node's dimensions");
	check(s.graph_kernel_runs == 30 && s.graph_launches == 10, "30 kernel runs in 10 graph launches");
	check(s.graph_xfer[DIR_D2H].calls == 10 && s.graph_xfer[DIR_D2H].bytes == 40960,
	      "the copy node: 10 executions, 40 KiB");
	check(s.graph_memset.calls == 10 && s.graph_memset.bytes == 1000, "the memset node: 10, 1000 B");
	check(s.n_graph == 1 && s.graph[0].id == 1 && s.graph[0].nodes == 6 && s.graph[0].kernel_nodes == 3 &&
		      s.graph[0].copy_nodes == 1 && s.graph[0].memset_nodes == 1 && s.graph[0].launches == 10,
	      "one graph row: 6 nodes, 3 kernels, 1 copy, 1 memset, 10 launches");
	stats_snapshot_free(&s);

	/* An update: the same row, the new nodes from now on. */
	struct stats_graph_node b_only[] = { kernel(b, 1) };
	stats_graph_define(0, 0x100, b_only, 1, true, true);
	stats_on_graph_launch(0, 0x100);
	s = snap();
	check(s.n_graph == 1 && s.graph[0].launches == 11 && s.graph[0].nodes == 1,
	      "update: one row, 11 launches, 1 node now");
	check(s.kernel[a].graph_launches == 20 && s.kernel[b].graph_launches == 11,
	      "update: the launch after it ran b only");
	stats_snapshot_free(&s);

	/* Destroyed, then the handle comes back as a new graph: a second row. */
	stats_graph_forget(0, 0x100);
	stats_graph_define(0, 0x100, nodes, 1, true, false);
	stats_on_graph_launch(0, 0x100);
	/* A graph never described (instantiated before gputop came): counted, nodes unknown. */
	stats_on_graph_launch(0, 0x200);
	s = snap();
	check(s.n_graph == 3 && s.graph[0].launches == 11 && s.graph[1].launches == 1 && s.graph[1].id == 2,
	      "a handle destroyed and reused: a row of its own");
	check(s.graph[2].exec == 0x200 && !s.graph[2].nodes_known && s.graph[2].launches == 1,
	      "a graph not described: its launches, nodes not known");
	check(s.kernel[a].graph_launches == 21 && s.graph_launches == 13, "and nothing more ran for it");
	stats_snapshot_free(&s);

	stats_reset();
	s = snap();
	check(s.graph_launches == 0 && s.graph[0].launches == 0 && s.kernel[a].graph_launches == 0 &&
		      s.graph_xfer[DIR_D2H].calls == 0 && s.n_graph == 3,
	      "reset: graph figures back to zero, the graphs stay");
	stats_snapshot_free(&s);
}

/* The bound: kernel entries over the live graphs. */
static void bound(void)
{
	struct graph_table *g = graph_table_new();
	enum { PER = 4096 };
	static struct stats_graph_node nodes[PER];
	for (int i = 0; i < PER; i++)
		nodes[i] = kernel(i, 1);
	int err = 0;
	uint32_t full = GRAPH_TABLE_MAX_KERNELS / PER;
	for (uint32_t i = 0; i < full && !err; i++)
		err = graph_table_define(g, 0x1000 + i, nodes, PER, true, false);
	check(err == 0, "%u graphs of %d distinct kernels fit", full, PER);
	err = graph_table_define(g, 0x9999, nodes, PER, true, false);
	const struct graph_entry *last = graph_table_at(g, graph_table_count(g) - 1);
	check(err == -ENOSPC && last->row.exec == 0x9999 && !last->row.nodes_known && !last->kernels,
	      "one more: kept, its nodes not known (%d)", err);
	graph_table_forget(g, 0x1000);
	check(graph_table_define(g, 0x9999, nodes, PER, true, true) == 0 && graph_table_get(g, 0x9999)->row.nodes_known,
	      "a graph destroyed frees room: the update of the last one fits");
	check(graph_table_get(g, 0) == NULL, "handle 0 has no row");
	graph_table_free(g);
}

int main(void)
{
	if (stats_init() < 0) {
		printf("not ok - stats_init\n");
		return 1;
	}
	stats_level();
	bound();
	stats_free();
	printf("# %d failure(s)\n", failures);
	return failures != 0;
}
