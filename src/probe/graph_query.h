/* graph_query.h — what a CUDA graph holds, asked from the driver in a stopped thread (xol_call,
 * the way a debugger calls functions): cuGraphGetNodes, then each node's type and parameters.
 * Once per graph, at its capture's end, instantiation or update (engine/hit_graphs.c). The
 * driver has no call that tells an executable graph's nodes: only a graph's. */
#ifndef GPUTOP_GRAPH_QUERY_H
#define GPUTOP_GRAPH_QUERY_H

#include <stdint.h>

struct thread;
struct tracee;

/* The driver functions asked, found by name in libcuda (probes.c). */
enum graph_query_fn {
	GQ_GET_NODES, GQ_NODE_TYPE, GQ_KERNEL_PARAMS, GQ_MEMCPY_PARAMS, GQ_MEMSET_PARAMS, GQ_FN_COUNT
};
int graph_query_fn_index(const char *symbol);	/* enum graph_query_fn, or -1 */

/* A node as the driver describes it (cuda.h's CUgraphNodeType: 0 kernel, 1 memcpy, 2 memset). */
struct graph_query_node {
	uint32_t type;
	uint64_t func, kern;		/* kernels: the CUfunction and CUkernel (either may be 0) */
	uint32_t grid[3], block[3];
	uint64_t bytes;			/* copies and memsets */
	uint32_t src_type, dst_type;	/* copies: CUmemorytype (1 host, 2 device, 3 array, 4 unified) */
	uint64_t src, dst;		/* copies: the addresses (host or device, by type) */
};
#define GQ_TYPE_KERNEL 0
#define GQ_TYPE_MEMCPY 1
#define GQ_TYPE_MEMSET 2
/* Nodes a graph may have for gputop to list them (the list lives in xol_call's scratch). */
#define GQ_MAX_NODES ((65536 - 1024) / 8)

/* Graph's nodes into out (room for GQ_MAX_NODES), their count in *n. fns: the driver
 * functions' addresses by enum graph_query_fn. 0, -ENOSYS (a function missing), -E2BIG (too
 * many nodes), or the error of a call (-EIO: the driver said no). */
int graph_query_nodes(struct tracee *p, struct thread *t, const uint64_t fns[GQ_FN_COUNT], uint64_t graph,
		      struct graph_query_node *out, uint32_t *n);

#endif
