/* cuda_api.c — the probe table: every CUDA function gputop traces, one row each.
 * Adding a function is adding a row. Only calls that do work are here: probing the hot
 * bookkeeping calls (cudaGetDevice, cudaGetLastError, ...) would stop the program for nothing. */
#include "cuda_api.h"

#include <stddef.h>
#include <string.h>

#define R LAYER_RUNTIME
#define D LAYER_DRIVER
#define N LAYER_NCCL

/* Rows by kind. Positions are 1-based argument numbers. */
#define ALLOC(n, l, fl, out, size) \
	{ .name = n, .layer = l, .op = OP_ALLOC, .flags = API_RETURN | (fl), .arg_out = out, .arg_size = size }
#define PITCHED(n, l, out, pitch, width, height) \
	{ .name = n, .layer = l, .op = OP_ALLOC, .flags = API_RETURN | API_PITCH, .arg_out = out, \
	  .arg_pitch_out = pitch, .arg_size = width, .arg_height = height }
#define FREE(n, l, ptr) \
	{ .name = n, .layer = l, .op = OP_FREE, .flags = API_RETURN, .arg_ptr = ptr }
#define LAUNCH(n, l, abi, func) \
	{ .name = n, .layer = l, .op = OP_LAUNCH, .flags = API_LAUNCH_PROBE | ((l) == R ? API_RETURN : 0), \
	  .launch = abi, .arg_ptr = func }
#define COPY(n, l, fl, dst, src, size, kind) \
	{ .name = n, .layer = l, .op = OP_COPY, .flags = API_RETURN | (fl), .arg_dst = dst, .arg_src = src, \
	  .arg_size = size, .arg_kind = kind }
/* (dst, dst device or context, src, src device or context, bytes) */
#define PEER(n, l, fl) \
	{ .name = n, .layer = l, .op = OP_COPY, .flags = API_RETURN | API_PEER | (fl), .arg_dst = 1, \
	  .arg_dev = 2, .arg_src = 3, .arg_src_dev = 4, .arg_size = 5 }
#define COPY2D(n, l, fl, dst, src, width, height, kind) \
	{ .name = n, .layer = l, .op = OP_COPY, .flags = API_RETURN | API_2D | (fl), .arg_dst = dst, \
	  .arg_src = src, .arg_size = width, .arg_height = height, .arg_kind = kind }
#define COPYDIR(n, fl, dir) \
	{ .name = n, .layer = D, .op = OP_COPY, .flags = API_RETURN | (fl), .arg_dst = 1, .arg_src = 2, \
	  .arg_size = 3, .fixed_dir = (dir) + 1 }
#define MEMSET(n, l, ptr, size, elem) \
	{ .name = n, .layer = l, .op = OP_MEMSET, .flags = API_RETURN, .arg_dst = ptr, .arg_size = size, \
	  .elem_size = elem }
#define MEMSET2D(n, l, ptr, width, height) \
	{ .name = n, .layer = l, .op = OP_MEMSET, .flags = API_RETURN | API_2D, .arg_dst = ptr, \
	  .arg_size = width, .arg_height = height }
#define SYNC(n, l) { .name = n, .layer = l, .op = OP_SYNC, .flags = API_RETURN }
/* Graphs: the return stops, so that the tracer can ask the driver about the graph there. */
#define GRAPH(n, l, o, out, ptr) \
	{ .name = n, .layer = l, .op = o, .flags = API_RETURN | API_STOPS, .arg_out = out, .arg_ptr = ptr }
/* A graph launch: like a kernel launch, counted at one layer; the driver's goes through the
 * launch ring (its executable graph in the first argument, where the launch stub reads it). */
#define GRAPH_LAUNCH(n, l) \
	{ .name = n, .layer = l, .op = OP_GRAPH_LAUNCH, .flags = API_LAUNCH_PROBE | ((l) == R ? API_RETURN : 0), \
	  .arg_ptr = 1 }
#define OTHER(n, l) { .name = n, .layer = l, .op = OP_OTHER, .flags = API_RETURN }
/* Contexts: where the thread's current device comes from with the driver API. */
#define CTX(n, o, out, ptr, dev) \
	{ .name = n, .layer = D, .op = o, .flags = API_RETURN, .arg_out = out, .arg_ptr = ptr, .arg_dev = dev }
/* NCCL (nccl.h, 2.x): a collective or point-to-point call, its count, datatype, communicator and
 * peer. A communicator past the 6th argument (ncclReduce's) is on the stack, which the call stub
 * does not record: those calls are counted and sized, their communicator is not known. */
#define COLL(n, c, count, dtype, comm, peer) \
	{ .name = n, .layer = N, .op = OP_COLLECTIVE, .flags = API_RETURN, .coll = c, .arg_count = count, \
	  .arg_dtype = dtype, .arg_comm = comm, .arg_peer = peer }
/* Communicators made: the return stops (rare calls), so that the tracer reads what the
 * out-parameters point to while the caller's memory surely holds them. */
#define COMM_INIT(n, out, nranks, rank) \
	{ .name = n, .layer = N, .op = OP_COMM_INIT, .flags = API_RETURN | API_STOPS, .arg_out = out, \
	  .arg_nranks = nranks, .arg_rank = rank }
#define COMM_QUERY(n, what) \
	{ .name = n, .layer = N, .op = OP_COMM_QUERY, .flags = API_RETURN | API_STOPS, .coll = what, \
	  .arg_comm = 1, .arg_out = 2 }
/* PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp, PyTorch 2.x): local C++ member
 * functions of libc10_cuda.so, found by their mangled names in its .symtab; `this` is argument 1.
 * Probed through the call stub (no stop); neither throws (an exception leaving a probed function
 * could not unwind through the stub's return: docs/torch_memory.md). */
#define TORCH(n, label_, o, size, ptr) \
	{ .name = n, .label = label_, .layer = LAYER_TORCH, .op = o, .flags = API_RETURN | API_VALUE_RET, \
	  .arg_size = size, .arg_ptr = ptr }
#define NAMER(n, l, src, out, from) \
	{ .name = n, .layer = l, .op = OP_KERNEL_NAME, .flags = API_RETURN, .name_src = src, \
	  .arg_out = out, .arg_name = from }

static const struct api_spec api_table[] = {
	/* Runtime API: allocation. */
	ALLOC("cudaMalloc", R, 0, 1, 2),
	ALLOC("cudaMallocAsync", R, 0, 1, 2),
	ALLOC("cudaMallocAsync_ptsz", R, 0, 1, 2),
	ALLOC("cudaMallocFromPoolAsync", R, 0, 1, 2),
	ALLOC("cudaMallocFromPoolAsync_ptsz", R, 0, 1, 2),
	ALLOC("cudaMallocManaged", R, API_MANAGED, 1, 2),
	PITCHED("cudaMallocPitch", R, 1, 2, 3, 4),
	ALLOC("cudaMallocHost", R, API_HOST, 1, 2),
	ALLOC("cudaHostAlloc", R, API_HOST, 1, 2),
	FREE("cudaFree", R, 1),
	FREE("cudaFreeAsync", R, 1),
	FREE("cudaFreeAsync_ptsz", R, 1),
	FREE("cudaFreeHost", R, 1),

	/* Runtime API: launches (func is a host stub or, from CUDA 13's <<<>>>, a kernel handle). */
	LAUNCH("cudaLaunchKernel", R, LAUNCH_RT, 1),
	LAUNCH("cudaLaunchKernel_ptsz", R, LAUNCH_RT, 1),
	LAUNCH("cudaLaunchKernelExC", R, LAUNCH_RT_EXC, 2),
	LAUNCH("cudaLaunchKernelExC_ptsz", R, LAUNCH_RT_EXC, 2),
	LAUNCH("cudaLaunchCooperativeKernel", R, LAUNCH_RT, 1),
	LAUNCH("cudaLaunchCooperativeKernel_ptsz", R, LAUNCH_RT, 1),

	/* Runtime API: copies. kind: 0 H2H, 1 H2D, 2 D2H, 3 D2D, 4 inferred from the pointers. */
	COPY("cudaMemcpy", R, 0, 1, 2, 3, 4),
	COPY("cudaMemcpy_ptds", R, 0, 1, 2, 3, 4),
	COPY("cudaMemcpyAsync", R, API_ASYNC, 1, 2, 3, 4),
	COPY("cudaMemcpyAsync_ptsz", R, API_ASYNC, 1, 2, 3, 4),
	PEER("cudaMemcpyPeer", R, 0),
	PEER("cudaMemcpyPeer_ptds", R, 0),
	PEER("cudaMemcpyPeerAsync", R, API_ASYNC),
	PEER("cudaMemcpyPeerAsync_ptsz", R, API_ASYNC),
	COPY2D("cudaMemcpy2D", R, 0, 1, 3, 5, 6, 7),
	COPY2D("cudaMemcpy2D_ptds", R, 0, 1, 3, 5, 6, 7),
	COPY2D("cudaMemcpy2DAsync", R, API_ASYNC, 1, 3, 5, 6, 7),
	COPY2D("cudaMemcpy2DAsync_ptsz", R, API_ASYNC, 1, 3, 5, 6, 7),
	COPY("cudaMemcpyToSymbol", R, 0, 1, 2, 3, 5),
	COPY("cudaMemcpyFromSymbol", R, 0, 1, 2, 3, 5),

	/* Runtime API: memsets. */
	MEMSET("cudaMemset", R, 1, 3, 1),
	MEMSET("cudaMemset_ptds", R, 1, 3, 1),
	MEMSET("cudaMemsetAsync", R, 1, 3, 1),
	MEMSET("cudaMemsetAsync_ptsz", R, 1, 3, 1),
	MEMSET2D("cudaMemset2D", R, 1, 4, 5),
	MEMSET2D("cudaMemset2DAsync", R, 1, 4, 5),

	/* Runtime API: waiting, devices. */
	SYNC("cudaDeviceSynchronize", R),
	SYNC("cudaStreamSynchronize", R),
	SYNC("cudaStreamSynchronize_ptsz", R),
	SYNC("cudaEventSynchronize", R),
	{ .name = "cudaSetDevice", .layer = R, .op = OP_SET_DEVICE, .flags = API_RETURN },

	/* Runtime API: where kernel handles and names come from. */
	NAMER("__cudaGetKernel", R, NAME_FROM_STUB, 1, 2),
	NAMER("cudaGetKernel", R, NAME_FROM_STUB, 1, 2),
	{ .name = "__cudaRegisterFunction", .layer = R, .op = OP_KERNEL_NAME,
	  .name_src = NAME_REGISTER, .arg_out = 2, .arg_name = 3 },

	/* Runtime API: CUDA graphs. A graph's nodes are asked from the driver when it is
	 * instantiated; the explicit node calls are counted only. */
	GRAPH("cudaStreamBeginCapture", R, OP_CAPTURE_BEGIN, 0, 1),
	GRAPH("cudaStreamBeginCapture_ptsz", R, OP_CAPTURE_BEGIN, 0, 1),
	GRAPH("cudaStreamBeginCaptureToGraph", R, OP_CAPTURE_BEGIN, 0, 1),
	GRAPH("cudaStreamBeginCaptureToGraph_ptsz", R, OP_CAPTURE_BEGIN, 0, 1),
	GRAPH("cudaStreamEndCapture", R, OP_CAPTURE_END, 2, 1),
	GRAPH("cudaStreamEndCapture_ptsz", R, OP_CAPTURE_END, 2, 1),
	GRAPH("cudaGraphInstantiate", R, OP_GRAPH_INSTANTIATE, 1, 2),
	GRAPH("cudaGraphInstantiateWithFlags", R, OP_GRAPH_INSTANTIATE, 1, 2),
	GRAPH("cudaGraphInstantiateWithParams", R, OP_GRAPH_INSTANTIATE, 1, 2),
	GRAPH("cudaGraphInstantiateWithParams_ptsz", R, OP_GRAPH_INSTANTIATE, 1, 2),
	GRAPH("cudaGraphExecUpdate", R, OP_GRAPH_UPDATE, 1, 2),
	GRAPH_LAUNCH("cudaGraphLaunch", R),
	GRAPH_LAUNCH("cudaGraphLaunch_ptsz", R),
	OTHER("cudaGraphCreate", R),
	OTHER("cudaGraphAddKernelNode", R),
	OTHER("cudaGraphAddMemcpyNode", R),
	OTHER("cudaGraphAddMemcpyNode1D", R),
	OTHER("cudaGraphAddMemsetNode", R),
	OTHER("cudaGraphDestroy", R),
	GRAPH("cudaGraphExecDestroy", R, OP_GRAPH_EXEC_DESTROY, 0, 1),

	/* Driver API: allocation. */
	ALLOC("cuMemAlloc_v2", D, 0, 1, 2),
	ALLOC("cuMemAllocAsync", D, 0, 1, 2),
	ALLOC("cuMemAllocAsync_ptsz", D, 0, 1, 2),
	ALLOC("cuMemAllocFromPoolAsync", D, 0, 1, 2),
	ALLOC("cuMemAllocFromPoolAsync_ptsz", D, 0, 1, 2),
	ALLOC("cuMemAllocManaged", D, API_MANAGED, 1, 2),
	PITCHED("cuMemAllocPitch_v2", D, 1, 2, 3, 4),
	ALLOC("cuMemAllocHost_v2", D, API_HOST, 1, 2),
	ALLOC("cuMemHostAlloc", D, API_HOST, 1, 2),
	/* The virtual memory API's physical memory (PyTorch's expandable segments, NCCL's buffers):
	 * its size, and its out-of-memory; the handle is no address, so no live allocation. */
	{ .name = "cuMemCreate", .layer = D, .op = OP_ALLOC, .flags = API_RETURN | API_PAGES, .arg_size = 2 },
	FREE("cuMemFree_v2", D, 1),
	FREE("cuMemFreeAsync", D, 1),
	FREE("cuMemFreeAsync_ptsz", D, 1),
	FREE("cuMemFreeHost", D, 1),

	/* Driver API: launches. */
	LAUNCH("cuLaunchKernel", D, LAUNCH_DRV, 1),
	LAUNCH("cuLaunchKernel_ptsz", D, LAUNCH_DRV, 1),
	LAUNCH("cuLaunchKernelEx", D, LAUNCH_DRV_EX, 2),
	LAUNCH("cuLaunchKernelEx_ptsz", D, LAUNCH_DRV_EX, 2),
	LAUNCH("cuLaunchCooperativeKernel", D, LAUNCH_DRV, 1),
	LAUNCH("cuLaunchCooperativeKernel_ptsz", D, LAUNCH_DRV, 1),

	/* Driver API: copies. */
	COPYDIR("cuMemcpyHtoD_v2", 0, DIR_H2D),
	COPYDIR("cuMemcpyHtoD_v2_ptds", 0, DIR_H2D),
	COPYDIR("cuMemcpyDtoH_v2", 0, DIR_D2H),
	COPYDIR("cuMemcpyDtoH_v2_ptds", 0, DIR_D2H),
	COPYDIR("cuMemcpyDtoD_v2", 0, DIR_D2D),
	COPYDIR("cuMemcpyDtoD_v2_ptds", 0, DIR_D2D),
	COPYDIR("cuMemcpyHtoDAsync_v2", API_ASYNC, DIR_H2D),
	COPYDIR("cuMemcpyHtoDAsync_v2_ptsz", API_ASYNC, DIR_H2D),
	COPYDIR("cuMemcpyDtoHAsync_v2", API_ASYNC, DIR_D2H),
	COPYDIR("cuMemcpyDtoHAsync_v2_ptsz", API_ASYNC, DIR_D2H),
	COPYDIR("cuMemcpyDtoDAsync_v2", API_ASYNC, DIR_D2D),
	COPYDIR("cuMemcpyDtoDAsync_v2_ptsz", API_ASYNC, DIR_D2D),
	COPY("cuMemcpy", D, 0, 1, 2, 3, 0),
	COPY("cuMemcpy_ptds", D, 0, 1, 2, 3, 0),
	COPY("cuMemcpyAsync", D, API_ASYNC, 1, 2, 3, 0),
	COPY("cuMemcpyAsync_ptsz", D, API_ASYNC, 1, 2, 3, 0),
	PEER("cuMemcpyPeer", D, API_CTX_ARGS),
	PEER("cuMemcpyPeerAsync", D, API_CTX_ARGS | API_ASYNC),

	/* Driver API: memsets (N elements of 1, 2 or 4 bytes). */
	MEMSET("cuMemsetD8_v2", D, 1, 3, 1),
	MEMSET("cuMemsetD16_v2", D, 1, 3, 2),
	MEMSET("cuMemsetD32_v2", D, 1, 3, 4),
	MEMSET("cuMemsetD8Async", D, 1, 3, 1),
	MEMSET("cuMemsetD16Async", D, 1, 3, 2),
	MEMSET("cuMemsetD32Async", D, 1, 3, 4),

	/* Driver API: waiting. */
	SYNC("cuCtxSynchronize", D),
	SYNC("cuStreamSynchronize", D),
	SYNC("cuStreamSynchronize_ptsz", D),
	SYNC("cuEventSynchronize", D),

	/* Driver API: CUDA graphs. */
	GRAPH("cuStreamBeginCapture", D, OP_CAPTURE_BEGIN, 0, 1),
	GRAPH("cuStreamBeginCapture_ptsz", D, OP_CAPTURE_BEGIN, 0, 1),
	GRAPH("cuStreamBeginCapture_v2", D, OP_CAPTURE_BEGIN, 0, 1),
	GRAPH("cuStreamBeginCapture_v2_ptsz", D, OP_CAPTURE_BEGIN, 0, 1),
	GRAPH("cuStreamBeginCaptureToGraph", D, OP_CAPTURE_BEGIN, 0, 1),
	GRAPH("cuStreamBeginCaptureToGraph_ptsz", D, OP_CAPTURE_BEGIN, 0, 1),
	GRAPH("cuStreamEndCapture", D, OP_CAPTURE_END, 2, 1),
	GRAPH("cuStreamEndCapture_ptsz", D, OP_CAPTURE_END, 2, 1),
	GRAPH("cuGraphInstantiate", D, OP_GRAPH_INSTANTIATE, 1, 2),
	GRAPH("cuGraphInstantiate_v2", D, OP_GRAPH_INSTANTIATE, 1, 2),
	GRAPH("cuGraphInstantiateWithFlags", D, OP_GRAPH_INSTANTIATE, 1, 2),
	GRAPH("cuGraphInstantiateWithParams", D, OP_GRAPH_INSTANTIATE, 1, 2),
	GRAPH("cuGraphInstantiateWithParams_ptsz", D, OP_GRAPH_INSTANTIATE, 1, 2),
	GRAPH("cuGraphExecUpdate", D, OP_GRAPH_UPDATE, 1, 2),
	GRAPH("cuGraphExecUpdate_v2", D, OP_GRAPH_UPDATE, 1, 2),
	GRAPH_LAUNCH("cuGraphLaunch", D),
	GRAPH_LAUNCH("cuGraphLaunch_ptsz", D),
	OTHER("cuGraphCreate", D),
	OTHER("cuGraphAddKernelNode", D),
	OTHER("cuGraphAddKernelNode_v2", D),
	OTHER("cuGraphAddMemcpyNode", D),
	OTHER("cuGraphAddMemsetNode", D),
	OTHER("cuGraphDestroy", D),
	GRAPH("cuGraphExecDestroy", D, OP_GRAPH_EXEC_DESTROY, 0, 1),

	/* Driver API: contexts and the device they are of (cudaSetDevice does its own). */
	CTX("cuDevicePrimaryCtxRetain", OP_CTX_LEARN, 1, 0, 2),
	CTX("cuCtxCreate_v2", OP_CTX_LEARN, 1, 0, 3),
	CTX("cuCtxCreate_v3", OP_CTX_LEARN, 1, 0, 5),
	CTX("cuCtxCreate_v4", OP_CTX_LEARN, 1, 0, 4),
	CTX("cuCtxSetCurrent", OP_CTX_SET, 0, 1, 0),
	CTX("cuCtxPushCurrent_v2", OP_CTX_PUSH, 0, 1, 0),
	CTX("cuCtxPopCurrent_v2", OP_CTX_POP, 0, 0, 0),

	/* Driver API: where CUfunction and CUkernel values get their names. */
	NAMER("cuModuleGetFunction", D, NAME_FROM_STRING, 1, 3),
	NAMER("cuLibraryGetKernel", D, NAME_FROM_STRING, 1, 3),
	/* Not cuKernelGetFunction: cudart calls it on many launches (two stops each, 11% of a
	 * PyTorch step on the H100); a CUfunction it made is named by cuFuncGetName instead, once,
	 * at its first launch (engine/kernel_names.c, kernel_names_id). */

	/* NCCL: collectives (count, datatype, communicator). Not ncclBcast: it calls ncclBroadcast,
	 * which counts it (probing both would count it twice). */
	COLL("ncclAllReduce", COLL_ALLREDUCE, 3, 4, 6, 0),
	COLL("ncclBroadcast", COLL_BROADCAST, 3, 4, 6, 0),
	COLL("ncclReduce", COLL_REDUCE, 3, 4, 7, 0),
	COLL("ncclAllGather", COLL_ALLGATHER, 3, 4, 5, 0),
	COLL("ncclReduceScatter", COLL_REDUCESCATTER, 3, 4, 6, 0),
	COLL("ncclAlltoAll", COLL_ALLTOALL, 3, 4, 5, 0),
	COLL("ncclGather", COLL_GATHER, 3, 4, 6, 0),
	COLL("ncclScatter", COLL_SCATTER, 3, 4, 6, 0),
	/* Point-to-point: (buff, count, datatype, peer, comm, stream). */
	COLL("ncclSend", COLL_SEND, 2, 3, 5, 4),
	COLL("ncclRecv", COLL_RECV, 2, 3, 5, 4),
	/* Groups: counted, once each. */
	OTHER("ncclGroupStart", N),
	OTHER("ncclGroupEnd", N),
	/* Communicators: (comm *, nranks, [ncclUniqueId on the stack], rank, ...). */
	COMM_INIT("ncclCommInitRank", 1, 2, 3),
	COMM_INIT("ncclCommInitRankConfig", 1, 2, 3),
	COMM_INIT("ncclCommInitRankScalable", 1, 2, 3),
	{ .name = "ncclCommInitAll", .layer = N, .op = OP_COMM_INIT, .flags = API_RETURN | API_STOPS,
	  .arg_out = 1, .arg_nranks = 2, .arg_dev = 3 },
	/* ncclCommSplit(comm, color, key, ncclComm_t *newcomm, config): rank and size asked below. */
	COMM_INIT("ncclCommSplit", 4, 0, 0),
	COMM_QUERY("ncclCommUserRank", COLL_RANK),
	COMM_QUERY("ncclCommCount", COLL_SIZE),
	OTHER("ncclCommFinalize", N),
	OTHER("ncclCommDestroy", N),
	OTHER("ncclCommAbort", N),

	/* PyTorch's CUDA caching allocator (libc10_cuda.so). Every block the allocator hands out
	 * comes from alloc_found_block, called once the block is found (never on an out-of-memory
	 * error, which DeviceCachingAllocator::malloc throws before it), and every block given back
	 * goes through DeviceCachingAllocator::free, checkpointed CUDA graph pools included: the two
	 * places where the allocator's own allocated_bytes statistic moves.
	 *   Block* DeviceCachingAllocator::alloc_found_block(const AllocParams&, size_t orig_size,
	 *          std::shared_ptr<GatheredContext>, bool split_remainder)      (this, &params,
	 *          orig_size, &context, split): the Block in rax, orig_size is argument 3 */
	TORCH("_ZN3c104cuda20CUDACachingAllocator6Native22DeviceCachingAllocator17alloc_found_block"
	      "ERKNS2_12_GLOBAL__N_111AllocParamsEmSt10shared_ptrINS_15GatheredContextEEb",
	      "DeviceCachingAllocator::alloc_found_block", OP_TORCH_ALLOC, 3, 0),
	/*   void DeviceCachingAllocator::free(Block*)                           (this, block) */
	TORCH("_ZN3c104cuda20CUDACachingAllocator6Native22DeviceCachingAllocator4freeEPNS2_12_GLOBAL__N_15BlockE",
	      "DeviceCachingAllocator::free", OP_TORCH_FREE, 0, 2),
};

#define N_API ((int)(sizeof api_table / sizeof api_table[0]))

int cuda_api_count(void)
{
	return N_API;
}

const struct api_spec *cuda_api_get(int index)
{
	return index >= 0 && index < N_API ? &api_table[index] : NULL;
}

int cuda_api_find(const char *name)
{
	/* ~100 rows, looked up once per symbol while scanning modules: a linear scan is enough,
	 * behind a cheap first-letter filter since most symbols do not start with "cu"/"__cu". */
	static const char torch_prefix[] = "_ZN3c104cuda20CUDACachingAllocator";
	if (!(name[0] == 'c' && name[1] == 'u') && strncmp(name, "__cuda", 6) != 0 && strncmp(name, "nccl", 4) != 0 &&
	    strncmp(name, torch_prefix, sizeof torch_prefix - 1) != 0)
		return -1;
	for (int i = 0; i < N_API; i++)
		if (strcmp(api_table[i].name, name) == 0)
			return i;
	return -1;
}

/* The name in the row, not a pointer to it: the tables need no relocation and lie in .rodata.
 * The longest name is 41 characters (CUDA 13's headers); one of 48 or more would not fit (the
 * compiler refuses one longer than the array, but one of exactly 48 would lose its NUL). */
struct cuda_error_row {
	int code;
	char name[48];
};
#include "cuda_errors.inc"

/* ncclResult_t (nccl.h). */
static const struct cuda_error_row nccl_errors[] = {
	{ 0, "ncclSuccess" }, { 1, "ncclUnhandledCudaError" }, { 2, "ncclSystemError" },
	{ 3, "ncclInternalError" }, { 4, "ncclInvalidArgument" }, { 5, "ncclInvalidUsage" },
	{ 6, "ncclRemoteError" }, { 7, "ncclInProgress" },
};

const char *cuda_error_name(enum api_layer layer, int code)
{
	if (layer == LAYER_TORCH)	/* its rows return values, not error codes */
		return NULL;
	const struct cuda_error_row *rows = layer == LAYER_RUNTIME ? runtime_errors
					  : layer == LAYER_NCCL ? nccl_errors : driver_errors;
	size_t n = layer == LAYER_RUNTIME ? sizeof runtime_errors / sizeof runtime_errors[0]
		 : layer == LAYER_NCCL ? sizeof nccl_errors / sizeof nccl_errors[0]
				       : sizeof driver_errors / sizeof driver_errors[0];
	for (size_t i = 0; i < n; i++)
		if (rows[i].code == code)
			return rows[i].name;
	return NULL;
}

bool cuda_api_out_pointer(const struct api_spec *s)
{
	return s->op == OP_ALLOC || s->op == OP_KERNEL_NAME || s->op == OP_CTX_LEARN;
}

const char *cuda_layer_name(enum api_layer layer)
{
	return layer == LAYER_DRIVER ? "driver" : layer == LAYER_NCCL ? "nccl" : layer == LAYER_TORCH ? "torch" : "runtime";
}

unsigned cuda_nccl_type_size(uint64_t datatype)
{
	/* ncclInt8/Char, Uint8, Int32/Int, Uint32, Int64, Uint64, Float16/Half, Float32/Float,
	 * Float64/Double, Bfloat16, Float8e4m3, Float8e5m2 */
	static const uint8_t size[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };
	return datatype < sizeof size ? size[datatype] : 0;
}
