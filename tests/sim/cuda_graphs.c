/* cuda_graphs.c — *** SIMULATED *** CUDA DRIVER: stream capture and CUDA graphs, for gputop's
 * tests. NOT NVIDIA's DRIVER. Like the real one: a launch, copy or memset into a capturing
 * stream becomes a node of the graph being captured and does not run; a graph is also built
 * with the explicit node calls; cuGraphInstantiate copies its nodes into an executable graph;
 * cuGraphLaunch replays them: copies and memsets really happen (in host memory), kernels
 * "run" by being counted per function, which a test program reads back with cuSimKernelRuns
 * (an export of this simulation only) to check its own result. Streams run in order at once
 * (as the rest of the simulation does), so a replay is done when cuGraphLaunch returns. */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_graphs.h"

#define EXPORT __attribute__((visibility("default")))

struct CUgraphNode_st {
	CUgraphNodeType type;
	CUDA_KERNEL_NODE_PARAMS_v2 kernel;
	CUDA_MEMCPY3D copy;
	CUDA_MEMSET_NODE_PARAMS memset;
};

struct CUgraph_st {
	struct CUgraphNode_st **node;
	size_t n, cap;
};

struct CUgraphExec_st {
	struct CUgraphNode_st *node;	/* copies: an executable graph keeps its own parameters */
	size_t n;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* --- kernels "run": counted per function handle ----------------------------------------- */

#define MAX_FUNCS 256
static struct {
	const void *f;
	unsigned long long runs;
} runs[MAX_FUNCS];

void simgraph_kernel_ran(const void *f)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_FUNCS; i++)
		if (runs[i].f == f || !runs[i].f) {
			runs[i].f = f;
			runs[i].runs++;
			break;
		}
	pthread_mutex_unlock(&lock);
}

/* How many times the kernel of this (mangled) name ran, through any of its handles: the test
 * programs' own check. A simulation-only export (dlsym it). */
EXPORT unsigned long long cuSimKernelRuns(const char *name)
{
	const void *k = simmem_handle(name, SIM_KEY_NAME), *f = simmem_handle(name, SIM_KEY_NAME2);
	unsigned long long n = 0;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_FUNCS && runs[i].f; i++)
		if (runs[i].f == k || runs[i].f == f)
			n += runs[i].runs;
	pthread_mutex_unlock(&lock);
	return n;
}

/* --- graphs -------------------------------------------------------------------------------- */

static CUresult add_node(CUgraphNode *out, CUgraph g, const struct CUgraphNode_st *proto)
{
	struct CUgraphNode_st *node = malloc(sizeof *node);
	if (!node)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*node = *proto;
	pthread_mutex_lock(&lock);
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct CUgraphNode_st **n = realloc(g->node, cap * sizeof *n);
		if (!n) {
			pthread_mutex_unlock(&lock);
			free(node);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		g->node = n;
		g->cap = cap;
	}
	g->node[g->n++] = node;
	pthread_mutex_unlock(&lock);
	if (out)
		*out = node;
	return CUDA_SUCCESS;
}

static CUresult new_graph(CUgraph *g)
{
	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	*g = calloc(1, sizeof **g);
	return *g ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult CUDAAPI cuGraphCreate(CUgraph *g, unsigned int flags)
{
	(void)flags;
	return new_graph(g);
}

EXPORT CUresult CUDAAPI cuGraphDestroy(CUgraph g)
{
	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < g->n; i++)
		free(g->node[i]);
	free(g->node);
	free(g);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
						size_t n_deps, const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
	(void)deps, (void)n_deps;	/* in order, always: dependencies change nothing here */
	if (!g || !p || (!p->func && !p->kern))
		return CUDA_ERROR_INVALID_VALUE;
	return add_node(node, g, &(struct CUgraphNode_st){ .type = CU_GRAPH_NODE_TYPE_KERNEL, .kernel = *p });
}

EXPORT CUresult CUDAAPI cuGraphAddMemcpyNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
					     size_t n_deps, const CUDA_MEMCPY3D *p, CUcontext ctx)
{
	(void)deps, (void)n_deps, (void)ctx;
	if (!g || !p)
		return CUDA_ERROR_INVALID_VALUE;
	return add_node(node, g, &(struct CUgraphNode_st){ .type = CU_GRAPH_NODE_TYPE_MEMCPY, .copy = *p });
}

EXPORT CUresult CUDAAPI cuGraphAddMemsetNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
					     size_t n_deps, const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
	(void)deps, (void)n_deps, (void)ctx;
	if (!g || !p || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4))
		return CUDA_ERROR_INVALID_VALUE;
	return add_node(node, g, &(struct CUgraphNode_st){ .type = CU_GRAPH_NODE_TYPE_MEMSET, .memset = *p });
}

EXPORT CUresult CUDAAPI cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *n)
{
	if (!g || !n)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	if (nodes) {
		size_t k = *n < g->n ? *n : g->n;
		memcpy(nodes, g->node, k * sizeof *nodes);
	}
	*n = g->n;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphNodeGetType(CUgraphNode node, CUgraphNodeType *type)
{
	if (!node || !type)
		return CUDA_ERROR_INVALID_VALUE;
	*type = node->type;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphKernelNodeGetParams_v2(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
	if (!node || !p || node->type != CU_GRAPH_NODE_TYPE_KERNEL)
		return CUDA_ERROR_INVALID_VALUE;
	*p = node->kernel;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphMemcpyNodeGetParams(CUgraphNode node, CUDA_MEMCPY3D *p)
{
	if (!node || !p || node->type != CU_GRAPH_NODE_TYPE_MEMCPY)
		return CUDA_ERROR_INVALID_VALUE;
	*p = node->copy;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphMemsetNodeGetParams(CUgraphNode node, CUDA_MEMSET_NODE_PARAMS *p)
{
	if (!node || !p || node->type != CU_GRAPH_NODE_TYPE_MEMSET)
		return CUDA_ERROR_INVALID_VALUE;
	*p = node->memset;
	return CUDA_SUCCESS;
}

/* --- executable graphs ------------------------------------------------------------------- */

static CUresult copy_nodes(struct CUgraphExec_st *e, CUgraph g)
{
	pthread_mutex_lock(&lock);
	struct CUgraphNode_st *n = malloc((g->n ? g->n : 1) * sizeof *n);
	for (size_t i = 0; n && i < g->n; i++)
		n[i] = *g->node[i];
	if (n) {
		free(e->node);
		e->node = n;
		e->n = g->n;
	}
	pthread_mutex_unlock(&lock);
	return n ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult instantiate(CUgraphExec *exec, CUgraph g)
{
	if (!exec || !g)
		return CUDA_ERROR_INVALID_VALUE;
	struct CUgraphExec_st *e = calloc(1, sizeof *e);
	if (!e || copy_nodes(e, g) != CUDA_SUCCESS) {
		free(e);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*exec = e;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph g, unsigned long long flags)
{
	(void)flags;
	return instantiate(exec, g);
}

EXPORT CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec exec)
{
	if (!exec)
		return CUDA_ERROR_INVALID_VALUE;
	free(exec->node);
	free(exec);
	return CUDA_SUCCESS;
}

/* Allowed when the topology is the same: as many nodes, of the same types in the same order. */
EXPORT CUresult CUDAAPI cuGraphExecUpdate_v2(CUgraphExec exec, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
	if (!exec || !g)
		return CUDA_ERROR_INVALID_VALUE;
	int same = exec->n == g->n;
	for (size_t i = 0; same && i < g->n; i++)
		same = exec->node[i].type == g->node[i]->type;
	if (info)
		*info = (CUgraphExecUpdateResultInfo){ .result = same ? CU_GRAPH_EXEC_UPDATE_SUCCESS
								       : CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED };
	if (!same)
		return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	return copy_nodes(exec, g);
}

static const void *copy_side(CUmemorytype type, const void *host, CUdeviceptr dev)
{
	return type == CU_MEMORYTYPE_HOST ? host : (const void *)(uintptr_t)dev;
}

/* Copies and memsets of one row (what the simulated runtime and driver record). */
static void run_node(const struct CUgraphNode_st *n)
{
	switch (n->type) {
	case CU_GRAPH_NODE_TYPE_KERNEL:
		simgraph_kernel_ran(n->kernel.func ? (const void *)n->kernel.func : (const void *)n->kernel.kern);
		break;
	case CU_GRAPH_NODE_TYPE_MEMCPY: {
		const CUDA_MEMCPY3D *c = &n->copy;
		simmem_copy(simmem_now(), (void *)copy_side(c->dstMemoryType, c->dstHost, c->dstDevice),
			    copy_side(c->srcMemoryType, c->srcHost, c->srcDevice), c->WidthInBytes);
		break;
	}
	case CU_GRAPH_NODE_TYPE_MEMSET: {
		const CUDA_MEMSET_NODE_PARAMS *m = &n->memset;
		unsigned char *p = (unsigned char *)(uintptr_t)m->dst;
		for (size_t i = 0; i < m->width; i++)
			memcpy(p + i * m->elementSize, &m->value, m->elementSize);	/* little-endian */
		break;
	}
	default:
		break;
	}
}

EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec exec, CUstream stream)
{
	(void)stream;
	if (!exec)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < exec->n; i++)
		run_node(&exec->node[i]);
	return CUDA_SUCCESS;
}

/* --- stream capture ----------------------------------------------------------------------- */

#define MAX_CAPTURES 16
static struct {
	CUstream stream;
	CUgraph graph;
} captures[MAX_CAPTURES];

static CUgraph capture_graph(CUstream stream)
{
	CUgraph g = NULL;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_CAPTURES && !g; i++)
		if (captures[i].graph && captures[i].stream == stream)
			g = captures[i].graph;
	pthread_mutex_unlock(&lock);
	return g;
}

int simgraph_capturing(CUstream stream)
{
	return capture_graph(stream) != NULL;
}

EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream stream, CUstreamCaptureMode mode)
{
	(void)mode;
	CUgraph g;
	if (capture_graph(stream))
		return CUDA_ERROR_ILLEGAL_STATE;
	CUresult r = new_graph(&g);
	if (r != CUDA_SUCCESS)
		return r;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_CAPTURES; i++)
		if (!captures[i].graph) {
			captures[i].stream = stream;
			captures[i].graph = g;
			pthread_mutex_unlock(&lock);
			return CUDA_SUCCESS;
		}
	pthread_mutex_unlock(&lock);
	free(g);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult CUDAAPI cuStreamEndCapture(CUstream stream, CUgraph *graph)
{
	if (!graph)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_CAPTURES; i++)
		if (captures[i].graph && captures[i].stream == stream) {
			*graph = captures[i].graph;
			captures[i].graph = NULL;
			pthread_mutex_unlock(&lock);
			return CUDA_SUCCESS;
		}
	pthread_mutex_unlock(&lock);
	return CUDA_ERROR_ILLEGAL_STATE;
}

EXPORT CUresult CUDAAPI cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus *status)
{
	if (!status)
		return CUDA_ERROR_INVALID_VALUE;
	*status = capture_graph(stream) ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

CUresult simgraph_capture_kernel(CUstream stream, CUfunction f, const unsigned d[6], unsigned shmem, void **params)
{
	CUDA_KERNEL_NODE_PARAMS_v2 p = { .func = f, .gridDimX = d[0], .gridDimY = d[1], .gridDimZ = d[2],
					 .blockDimX = d[3], .blockDimY = d[4], .blockDimZ = d[5],
					 .sharedMemBytes = shmem, .kernelParams = params };
	return add_node(NULL, capture_graph(stream),
			&(struct CUgraphNode_st){ .type = CU_GRAPH_NODE_TYPE_KERNEL, .kernel = p });
}

CUresult simgraph_capture_copy(CUstream stream, CUmemorytype dst_type, void *dst, CUmemorytype src_type,
			       const void *src, size_t n)
{
	CUDA_MEMCPY3D c = { .srcMemoryType = src_type, .dstMemoryType = dst_type, .WidthInBytes = n,
			    .Height = 1, .Depth = 1 };
	if (src_type == CU_MEMORYTYPE_HOST)
		c.srcHost = src;
	else
		c.srcDevice = (CUdeviceptr)(uintptr_t)src;
	if (dst_type == CU_MEMORYTYPE_HOST)
		c.dstHost = dst;
	else
		c.dstDevice = (CUdeviceptr)(uintptr_t)dst;
	return add_node(NULL, capture_graph(stream), &(struct CUgraphNode_st){ .type = CU_GRAPH_NODE_TYPE_MEMCPY, .copy = c });
}

CUresult simgraph_capture_memset(CUstream stream, CUdeviceptr dst, unsigned value, unsigned element_size, size_t n)
{
	CUDA_MEMSET_NODE_PARAMS m = { .dst = dst, .value = value, .elementSize = element_size, .width = n, .height = 1 };
	return add_node(NULL, capture_graph(stream), &(struct CUgraphNode_st){ .type = CU_GRAPH_NODE_TYPE_MEMSET, .memset = m });
}
