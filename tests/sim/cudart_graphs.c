/* cudart_graphs.c — *** SIMULATED *** CUDA RUNTIME: stream capture and CUDA graphs, for gputop's
 * tests. NOT NVIDIA's. Like NVIDIA's runtime, each call is the driver's (tests/sim/cuda_graphs.c,
 * which records and replays the nodes) through cuGetProcAddress pointers; a cudaGraph_t is the
 * driver's CUgraph. Without the simulated driver, graphs are not supported. */
#include <string.h>

#include "cudart_internal.h"

static const struct driver *graph_driver(void)
{
	const struct driver *d = rt_driver();
	return d->loaded ? d : NULL;
}

#define NEED_DRIVER(d) \
	const struct driver *d = graph_driver(); \
	if (!d) \
		return rt_error(cudaErrorNotSupported)

static cudaError_t begin_capture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	NEED_DRIVER(d);
	return rt_error(rt_from_driver(d->StreamBeginCapture((CUstream)stream, (CUstreamCaptureMode)mode)));
}

EXPORT cudaError_t CUDARTAPI cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	return begin_capture(stream, mode);
}

EXPORT cudaError_t CUDARTAPI cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	return begin_capture(stream, mode);
}

static cudaError_t end_capture(cudaStream_t stream, cudaGraph_t *graph)
{
	NEED_DRIVER(d);
	return rt_error(rt_from_driver(d->StreamEndCapture((CUstream)stream, (CUgraph *)graph)));
}

EXPORT cudaError_t CUDARTAPI cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
	return end_capture(stream, graph);
}

EXPORT cudaError_t CUDARTAPI cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *graph)
{
	return end_capture(stream, graph);
}

EXPORT cudaError_t CUDARTAPI cudaGraphCreate(cudaGraph_t *graph, unsigned int flags)
{
	NEED_DRIVER(d);
	return rt_error(rt_from_driver(d->GraphCreate((CUgraph *)graph, flags)));
}

EXPORT cudaError_t CUDARTAPI cudaGraphAddKernelNode(cudaGraphNode_t *node, cudaGraph_t graph,
						    const cudaGraphNode_t *deps, size_t n_deps,
						    const struct cudaKernelNodeParams *p)
{
	NEED_DRIVER(d);
	void *f;
	if (!p)
		return rt_error(cudaErrorInvalidValue);
	cudaError_t e = rt_kernel_handle(p->func, &f);
	if (e != cudaSuccess)
		return rt_error(e);
	CUDA_KERNEL_NODE_PARAMS_v2 k = { .func = (CUfunction)f, .gridDimX = p->gridDim.x, .gridDimY = p->gridDim.y,
					 .gridDimZ = p->gridDim.z, .blockDimX = p->blockDim.x,
					 .blockDimY = p->blockDim.y, .blockDimZ = p->blockDim.z,
					 .sharedMemBytes = p->sharedMemBytes, .kernelParams = p->kernelParams };
	return rt_error(rt_from_driver(d->GraphAddKernelNode((CUgraphNode *)node, (CUgraph)graph,
							     (const CUgraphNode *)deps, n_deps, &k)));
}

static CUmemorytype memory_type(enum cudaMemcpyKind kind, int dst)
{
	switch (kind) {
	case cudaMemcpyHostToDevice: return dst ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
	case cudaMemcpyDeviceToHost: return dst ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
	case cudaMemcpyDeviceToDevice: return CU_MEMORYTYPE_DEVICE;
	case cudaMemcpyHostToHost: return CU_MEMORYTYPE_HOST;
	default: return CU_MEMORYTYPE_UNIFIED;
	}
}

EXPORT cudaError_t CUDARTAPI cudaGraphAddMemcpyNode1D(cudaGraphNode_t *node, cudaGraph_t graph,
						      const cudaGraphNode_t *deps, size_t n_deps, void *dst,
						      const void *src, size_t count, enum cudaMemcpyKind kind)
{
	NEED_DRIVER(d);
	CUDA_MEMCPY3D c = { .srcMemoryType = memory_type(kind, 0), .dstMemoryType = memory_type(kind, 1),
			    .WidthInBytes = count, .Height = 1, .Depth = 1 };
	if (c.srcMemoryType == CU_MEMORYTYPE_HOST)
		c.srcHost = src;
	else
		c.srcDevice = (CUdeviceptr)(uintptr_t)src;
	if (c.dstMemoryType == CU_MEMORYTYPE_HOST)
		c.dstHost = dst;
	else
		c.dstDevice = (CUdeviceptr)(uintptr_t)dst;
	return rt_error(rt_from_driver(d->GraphAddMemcpyNode((CUgraphNode *)node, (CUgraph)graph,
							     (const CUgraphNode *)deps, n_deps, &c, NULL)));
}

EXPORT cudaError_t CUDARTAPI cudaGraphAddMemsetNode(cudaGraphNode_t *node, cudaGraph_t graph,
						    const cudaGraphNode_t *deps, size_t n_deps,
						    const struct cudaMemsetParams *p)
{
	NEED_DRIVER(d);
	if (!p)
		return rt_error(cudaErrorInvalidValue);
	CUDA_MEMSET_NODE_PARAMS m = { .dst = (CUdeviceptr)(uintptr_t)p->dst, .pitch = p->pitch, .value = p->value,
				      .elementSize = p->elementSize, .width = p->width, .height = p->height };
	return rt_error(rt_from_driver(d->GraphAddMemsetNode((CUgraphNode *)node, (CUgraph)graph,
							     (const CUgraphNode *)deps, n_deps, &m, NULL)));
}

static cudaError_t instantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
	NEED_DRIVER(d);
	return rt_error(rt_from_driver(d->GraphInstantiateWithFlags((CUgraphExec *)exec, (CUgraph)graph, flags)));
}

EXPORT cudaError_t CUDARTAPI cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
	return instantiate(exec, graph, flags);
}

EXPORT cudaError_t CUDARTAPI cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t graph,
							   unsigned long long flags)
{
	return instantiate(exec, graph, flags);
}

static cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t stream)
{
	NEED_DRIVER(d);
	return rt_error(rt_from_driver(d->GraphLaunch((CUgraphExec)exec, (CUstream)stream)));
}

EXPORT cudaError_t CUDARTAPI cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
	return graph_launch(exec, stream);
}

EXPORT cudaError_t CUDARTAPI cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t stream)
{
	return graph_launch(exec, stream);
}

EXPORT cudaError_t CUDARTAPI cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
						 cudaGraphExecUpdateResultInfo *info)
{
	NEED_DRIVER(d);
	CUgraphExecUpdateResultInfo ci;
	CUresult r = d->GraphExecUpdate((CUgraphExec)exec, (CUgraph)graph, &ci);
	if (info)
		*info = (cudaGraphExecUpdateResultInfo){ .result = (enum cudaGraphExecUpdateResult)ci.result };
	return rt_error(r == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE ? cudaErrorGraphExecUpdateFailure : rt_from_driver(r));
}

EXPORT cudaError_t CUDARTAPI cudaGraphDestroy(cudaGraph_t graph)
{
	NEED_DRIVER(d);
	return rt_error(rt_from_driver(d->GraphDestroy((CUgraph)graph)));
}

EXPORT cudaError_t CUDARTAPI cudaGraphExecDestroy(cudaGraphExec_t exec)
{
	NEED_DRIVER(d);
	return rt_error(rt_from_driver(d->GraphExecDestroy((CUgraphExec)exec)));
}
