/* cudart_internal.h — shared state of the *** SIMULATED *** CUDA runtime for gputop's tests
 * (tests/sim/cudart.c, tests/sim/cudart_kernels.c): the driver it forwards to, if any, and the
 * per-thread last error. Nothing here is exported from libcudart.so.13. */
#ifndef CUDART_INTERNAL_H
#define CUDART_INTERNAL_H

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "simmem.h"

#define EXPORT __attribute__((visibility("default")))

/* The driver's entry points, as cuGetProcAddress gave them (never through the PLT), so that a
 * breakpoint at the driver function's own address sees the runtime's calls, as with NVIDIA's. */
struct driver {
	int loaded;	/* the simulated libcuda.so.1 was found: forward everything to it */
	__typeof__(cuInit) *Init;
	__typeof__(cuDevicePrimaryCtxRetain) *DevicePrimaryCtxRetain;
	__typeof__(cuCtxSetCurrent) *CtxSetCurrent;
	__typeof__(cuMemAlloc_v2) *MemAlloc;
	__typeof__(cuMemAllocAsync) *MemAllocAsync;
	__typeof__(cuMemAllocFromPoolAsync) *MemAllocFromPoolAsync;
	__typeof__(cuMemAllocManaged) *MemAllocManaged;
	__typeof__(cuMemAllocPitch_v2) *MemAllocPitch;
	__typeof__(cuMemAllocHost_v2) *MemAllocHost;
	__typeof__(cuMemHostAlloc) *MemHostAlloc;
	__typeof__(cuMemFree_v2) *MemFree;
	__typeof__(cuMemFreeAsync) *MemFreeAsync;
	__typeof__(cuMemFreeHost) *MemFreeHost;
	__typeof__(cuMemcpy) *Memcpy;
	__typeof__(cuMemcpyAsync) *MemcpyAsync;
	__typeof__(cuMemcpyHtoD_v2) *MemcpyHtoD;
	__typeof__(cuMemcpyDtoH_v2) *MemcpyDtoH;
	__typeof__(cuMemcpyDtoD_v2) *MemcpyDtoD;
	__typeof__(cuMemcpyHtoDAsync_v2) *MemcpyHtoDAsync;
	__typeof__(cuMemcpyDtoHAsync_v2) *MemcpyDtoHAsync;
	__typeof__(cuMemcpyDtoDAsync_v2) *MemcpyDtoDAsync;
	__typeof__(cuMemcpy2D_v2) *Memcpy2D;
	__typeof__(cuMemcpyPeer) *MemcpyPeer;
	__typeof__(cuMemsetD8_v2) *MemsetD8;
	__typeof__(cuMemsetD8Async) *MemsetD8Async;
	__typeof__(cuCtxSynchronize) *CtxSynchronize;
	__typeof__(cuStreamSynchronize) *StreamSynchronize;
	__typeof__(cuEventSynchronize) *EventSynchronize;
	__typeof__(cuLibraryLoadData) *LibraryLoadData;
	__typeof__(cuLibraryGetKernel) *LibraryGetKernel;
	__typeof__(cuLaunchKernel) *LaunchKernel;
	__typeof__(cuLaunchKernelEx) *LaunchKernelEx;
	/* Stream capture and graphs (cudart_graphs.c). */
	__typeof__(cuStreamBeginCapture_v2) *StreamBeginCapture;
	__typeof__(cuStreamEndCapture) *StreamEndCapture;
	__typeof__(cuGraphCreate) *GraphCreate;
	__typeof__(cuGraphAddKernelNode_v2) *GraphAddKernelNode;
	__typeof__(cuGraphAddMemcpyNode) *GraphAddMemcpyNode;
	__typeof__(cuGraphAddMemsetNode) *GraphAddMemsetNode;
	__typeof__(cuGraphInstantiateWithFlags) *GraphInstantiateWithFlags;
	__typeof__(cuGraphLaunch) *GraphLaunch;
	__typeof__(cuGraphExecUpdate_v2) *GraphExecUpdate;
	__typeof__(cuGraphDestroy) *GraphDestroy;
	__typeof__(cuGraphExecDestroy) *GraphExecDestroy;
};

/* Loads the driver on first use (like NVIDIA's runtime, at the first API call) and returns it. */
SIM_HIDDEN const struct driver *rt_driver(void);
/* Records e as the thread's last error when it is one; returns e. */
SIM_HIDDEN cudaError_t rt_error(cudaError_t e);
SIM_HIDDEN cudaError_t rt_from_driver(CUresult r);
/* The driver's handle of a kernel (host function or handle), with a driver only. */
SIM_HIDDEN cudaError_t rt_kernel_handle(const void *func, void **handle);

#endif
