/* cudart.c — *** SIMULATED *** CUDA RUNTIME (libcudart.so.13) FOR gputop's TESTS. NOT NVIDIA's.
 * *** There is no GPU behind it: "device" memory is host memory (mmap), kernels never run. ***
 * Same soname, symbol version and signatures as the toolkit's libcudart.so.13, so that a program
 * built against the real one (gcc -lcudart, or nvcc -cudart shared) runs on it unchanged when a
 * test puts tests/bin/sim first on LD_LIBRARY_PATH. Like the real runtime it loads libcuda.so.1
 * at the first call — only the SIMULATED driver (tests/bin/simdrv) is accepted — and then forwards
 * every operation to it through cuGetProcAddress pointers; without it, it does the work itself.
 * This file: memory, copies, memsets, synchronization, devices, streams, errors.
 * Kernels and the nvcc glue: cudart_kernels.c. Environment: SIMCUDA_GBPS, SIMCUDA_SYNC_US,
 * SIMCUDA_TIMES (simmem.h), SIMCUDA_SYNC_HOOK (a test hook: see sync_hook).
 * Rule: exported functions never call each other (a nested probed call would count twice);
 * the one exception is __cudaLaunchKernel, which jumps to cudaLaunchKernel like NVIDIA's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "cudart_internal.h"

/* --- the driver below, and errors ------------------------------------------------------- */

SIM_HIDDEN const char simmem_library[] = "runtime";	/* for SIMCUDA_TIMES */

static struct driver driver;
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static __thread cudaError_t last_error;

#define DRIVER_ENTRY(field, name) { offsetof(struct driver, field), name }
static const struct {
	size_t offset;
	const char *name;	/* as the runtime asks cuGetProcAddress for it: without _v2 */
} driver_entries[] = {
	DRIVER_ENTRY(Init, "cuInit"),
	DRIVER_ENTRY(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
	DRIVER_ENTRY(CtxSetCurrent, "cuCtxSetCurrent"),
	DRIVER_ENTRY(MemAlloc, "cuMemAlloc"),
	DRIVER_ENTRY(MemAllocAsync, "cuMemAllocAsync"),
	DRIVER_ENTRY(MemAllocFromPoolAsync, "cuMemAllocFromPoolAsync"),
	DRIVER_ENTRY(MemAllocManaged, "cuMemAllocManaged"),
	DRIVER_ENTRY(MemAllocPitch, "cuMemAllocPitch"),
	DRIVER_ENTRY(MemAllocHost, "cuMemAllocHost"),
	DRIVER_ENTRY(MemHostAlloc, "cuMemHostAlloc"),
	DRIVER_ENTRY(MemFree, "cuMemFree"),
	DRIVER_ENTRY(MemFreeAsync, "cuMemFreeAsync"),
	DRIVER_ENTRY(MemFreeHost, "cuMemFreeHost"),
	DRIVER_ENTRY(Memcpy, "cuMemcpy"),
	DRIVER_ENTRY(MemcpyAsync, "cuMemcpyAsync"),
	DRIVER_ENTRY(MemcpyHtoD, "cuMemcpyHtoD"),
	DRIVER_ENTRY(MemcpyDtoH, "cuMemcpyDtoH"),
	DRIVER_ENTRY(MemcpyDtoD, "cuMemcpyDtoD"),
	DRIVER_ENTRY(MemcpyHtoDAsync, "cuMemcpyHtoDAsync"),
	DRIVER_ENTRY(MemcpyDtoHAsync, "cuMemcpyDtoHAsync"),
	DRIVER_ENTRY(MemcpyDtoDAsync, "cuMemcpyDtoDAsync"),
	DRIVER_ENTRY(Memcpy2D, "cuMemcpy2D"),
	DRIVER_ENTRY(MemcpyPeer, "cuMemcpyPeer"),
	DRIVER_ENTRY(MemsetD8, "cuMemsetD8"),
	DRIVER_ENTRY(MemsetD8Async, "cuMemsetD8Async"),
	DRIVER_ENTRY(CtxSynchronize, "cuCtxSynchronize"),
	DRIVER_ENTRY(StreamSynchronize, "cuStreamSynchronize"),
	DRIVER_ENTRY(EventSynchronize, "cuEventSynchronize"),
	DRIVER_ENTRY(LibraryLoadData, "cuLibraryLoadData"),
	DRIVER_ENTRY(LibraryGetKernel, "cuLibraryGetKernel"),
	DRIVER_ENTRY(LaunchKernel, "cuLaunchKernel"),
	DRIVER_ENTRY(LaunchKernelEx, "cuLaunchKernelEx"),
	DRIVER_ENTRY(StreamBeginCapture, "cuStreamBeginCapture"),
	DRIVER_ENTRY(StreamEndCapture, "cuStreamEndCapture"),
	DRIVER_ENTRY(GraphCreate, "cuGraphCreate"),
	DRIVER_ENTRY(GraphAddKernelNode, "cuGraphAddKernelNode"),
	DRIVER_ENTRY(GraphAddMemcpyNode, "cuGraphAddMemcpyNode"),
	DRIVER_ENTRY(GraphAddMemsetNode, "cuGraphAddMemsetNode"),
	DRIVER_ENTRY(GraphInstantiateWithFlags, "cuGraphInstantiateWithFlags"),
	DRIVER_ENTRY(GraphLaunch, "cuGraphLaunch"),
	DRIVER_ENTRY(GraphExecUpdate, "cuGraphExecUpdate"),
	DRIVER_ENTRY(GraphDestroy, "cuGraphDestroy"),
	DRIVER_ENTRY(GraphExecDestroy, "cuGraphExecDestroy"),
};

/* A real driver would need real kernels: only the simulated one (it exports cuSimulatedDriver)
 * is used, so that these tests behave the same on a machine with a GPU. */
static void driver_load(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return;
	__typeof__(cuGetProcAddress_v2) *get_proc = dlsym(lib, "cuGetProcAddress_v2");
	if (!dlsym(lib, "cuSimulatedDriver") || !get_proc) {
		dlclose(lib);
		return;
	}
	for (size_t i = 0; i < sizeof(driver_entries) / sizeof(driver_entries[0]); i++) {
		void **slot = (void **)((char *)&driver + driver_entries[i].offset);
		CUdriverProcAddressQueryResult status;
		if (get_proc(driver_entries[i].name, slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT,
			     &status) != CUDA_SUCCESS) {
			dlclose(lib);
			return;
		}
	}
	CUcontext ctx;
	if (driver.Init(0) != CUDA_SUCCESS || driver.DevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS ||
	    driver.CtxSetCurrent(ctx) != CUDA_SUCCESS) {
		dlclose(lib);
		return;
	}
	driver.loaded = 1;
}

const struct driver *rt_driver(void)
{
	pthread_once(&driver_once, driver_load);
	return &driver;
}

cudaError_t rt_error(cudaError_t e)
{
	if (e != cudaSuccess)
		last_error = e;
	return e;
}

cudaError_t rt_from_driver(CUresult r)
{
	switch (r) {
	case CUDA_SUCCESS: return cudaSuccess;
	case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
	case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
	case CUDA_ERROR_INVALID_DEVICE: return cudaErrorInvalidDevice;
	case CUDA_ERROR_INVALID_HANDLE: return cudaErrorInvalidResourceHandle;
	case CUDA_ERROR_NOT_FOUND: return cudaErrorSymbolNotFound;
	default: return cudaErrorUnknown;
	}
}

static const struct {
	cudaError_t code;
	const char *name, *text;
} error_names[] = {
	{ cudaSuccess, "cudaSuccess", "no error" },
	{ cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument" },
	{ cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory" },
	{ cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
	  "invalid copy direction for memcpy" },
	{ cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
	  "CUDA driver version is insufficient for CUDA runtime version" },
	{ cudaErrorMissingConfiguration, "cudaErrorMissingConfiguration",
	  "__global__ function call is not configured" },
	{ cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function" },
	{ cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal" },
	{ cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle" },
	{ cudaErrorSymbolNotFound, "cudaErrorSymbolNotFound", "named symbol not found" },
	{ cudaErrorUnknown, "cudaErrorUnknown", "unknown error" },
};

EXPORT const char *CUDARTAPI cudaGetErrorName(cudaError_t e)
{
	for (size_t i = 0; i < sizeof(error_names) / sizeof(error_names[0]); i++)
		if (error_names[i].code == e)
			return error_names[i].name;
	return "cudaErrorUnknown";
}

EXPORT const char *CUDARTAPI cudaGetErrorString(cudaError_t e)
{
	for (size_t i = 0; i < sizeof(error_names) / sizeof(error_names[0]); i++)
		if (error_names[i].code == e)
			return error_names[i].text;
	return "unrecognized error code";
}

EXPORT cudaError_t CUDARTAPI cudaGetLastError(void)
{
	cudaError_t e = last_error;
	last_error = cudaSuccess;
	return e;
}

EXPORT cudaError_t CUDARTAPI cudaPeekAtLastError(void)
{
	return last_error;
}

/* --- devices and streams ---------------------------------------------------------------- */

/* SIMCUDA_DEVICES=N (1 to 8, default 1): N simulated devices; the current one is per thread. */
static __thread int current_device;

static int sim_devices(void)
{
	const char *e = getenv("SIMCUDA_DEVICES");
	int n = e ? atoi(e) : 1;
	return n >= 1 && n <= 8 ? n : 1;
}

EXPORT cudaError_t CUDARTAPI cudaGetDeviceCount(int *count)
{
	if (!count)
		return rt_error(cudaErrorInvalidValue);
	*count = sim_devices();
	return cudaSuccess;
}

/* As NVIDIA's runtime: the device's primary context made current, through the driver. */
EXPORT cudaError_t CUDARTAPI cudaSetDevice(int device)
{
	const struct driver *d = rt_driver();
	if (device < 0 || device >= sim_devices())
		return rt_error(cudaErrorInvalidDevice);
	CUcontext ctx;
	if (d->loaded && (d->DevicePrimaryCtxRetain(&ctx, device) != CUDA_SUCCESS || d->CtxSetCurrent(ctx) != CUDA_SUCCESS))
		return rt_error(cudaErrorInvalidDevice);
	current_device = device;
	return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaGetDevice(int *device)
{
	if (!device)
		return rt_error(cudaErrorInvalidValue);
	*device = current_device;
	return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaDeviceReset(void)
{
	return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t *stream)
{
	if (!stream)
		return rt_error(cudaErrorInvalidValue);
	*stream = malloc(16);	/* a unique dummy handle */
	return *stream ? cudaSuccess : rt_error(cudaErrorMemoryAllocation);
}

EXPORT cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t stream)
{
	free(stream);
	return cudaSuccess;
}

/* --- allocations -------------------------------------------------------------------------
 * Size 0 gives NULL and success; more than SIMMEM_MAX_BYTES gives cudaErrorMemoryAllocation and
 * *p = NULL, with or without the driver. */

enum alloc_how { A_DEVICE, A_ASYNC, A_POOL, A_MANAGED, A_HOST_MALLOC, A_HOST_ALLOC };

static cudaError_t allocate(void **p, size_t size, enum alloc_how how, cudaStream_t stream,
			    unsigned int flags, cudaMemPool_t pool)
{
	const struct driver *d = rt_driver();
	if (!p)
		return rt_error(cudaErrorInvalidValue);
	*p = NULL;
	if (size == 0)
		return cudaSuccess;
	if (!d->loaded) {
		int host = how == A_HOST_MALLOC || how == A_HOST_ALLOC;
		*p = simmem_alloc(size, host ? SIMMEM_HOST : how == A_MANAGED ? SIMMEM_MANAGED
									: SIMMEM_DEVICE);
		return *p ? cudaSuccess : rt_error(cudaErrorMemoryAllocation);
	}
	CUdeviceptr dp = 0;
	CUresult r;
	switch (how) {
	case A_DEVICE: r = d->MemAlloc(&dp, size); break;
	case A_ASYNC: r = d->MemAllocAsync(&dp, size, (CUstream)stream); break;
	case A_POOL: r = d->MemAllocFromPoolAsync(&dp, size, (CUmemoryPool)pool, (CUstream)stream); break;
	case A_MANAGED: r = d->MemAllocManaged(&dp, size, flags); break;
	case A_HOST_MALLOC: return rt_error(rt_from_driver(d->MemAllocHost(p, size)));
	case A_HOST_ALLOC: return rt_error(rt_from_driver(d->MemHostAlloc(p, size, flags)));
	default: return rt_error(cudaErrorInvalidValue);
	}
	*p = r == CUDA_SUCCESS ? (void *)(uintptr_t)dp : NULL;
	return rt_error(rt_from_driver(r));
}

EXPORT cudaError_t CUDARTAPI cudaMalloc(void **p, size_t size)
{
	return allocate(p, size, A_DEVICE, NULL, 0, NULL);
}

EXPORT cudaError_t CUDARTAPI cudaMallocAsync(void **p, size_t size, cudaStream_t stream)
{
	return allocate(p, size, A_ASYNC, stream, 0, NULL);
}

EXPORT cudaError_t CUDARTAPI cudaMallocAsync_ptsz(void **p, size_t size, cudaStream_t stream)
{
	return allocate(p, size, A_ASYNC, stream, 0, NULL);
}

EXPORT cudaError_t CUDARTAPI cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool,
						     cudaStream_t stream)
{
	return allocate(p, size, A_POOL, stream, 0, pool);
}

EXPORT cudaError_t CUDARTAPI cudaMallocFromPoolAsync_ptsz(void **p, size_t size,
							  cudaMemPool_t pool, cudaStream_t stream)
{
	return allocate(p, size, A_POOL, stream, 0, pool);
}

EXPORT cudaError_t CUDARTAPI cudaMallocManaged(void **p, size_t size, unsigned int flags)
{
	return allocate(p, size, A_MANAGED, NULL, flags, NULL);
}

EXPORT cudaError_t CUDARTAPI cudaMallocHost(void **p, size_t size)
{
	return allocate(p, size, A_HOST_MALLOC, NULL, 0, NULL);
}

EXPORT cudaError_t CUDARTAPI cudaHostAlloc(void **p, size_t size, unsigned int flags)
{
	return allocate(p, size, A_HOST_ALLOC, NULL, flags, NULL);
}

/* Rows are padded to a multiple of 512 bytes. */
EXPORT cudaError_t CUDARTAPI cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height)
{
	const struct driver *d = rt_driver();
	if (!p || !pitch)
		return rt_error(cudaErrorInvalidValue);
	*p = NULL;
	*pitch = 0;
	if (width == 0 || height == 0)
		return cudaSuccess;
	if (d->loaded) {
		CUdeviceptr dp = 0;
		CUresult r = d->MemAllocPitch(&dp, pitch, width, height, 4);
		*p = r == CUDA_SUCCESS ? (void *)(uintptr_t)dp : NULL;
		return rt_error(rt_from_driver(r));
	}
	size_t row = (width + 511) / 512 * 512;
	if (height > SIMMEM_MAX_BYTES / row)
		return rt_error(cudaErrorMemoryAllocation);
	*p = simmem_alloc(row * height, SIMMEM_DEVICE);
	if (!*p)
		return rt_error(cudaErrorMemoryAllocation);
	*pitch = row;
	return cudaSuccess;
}

enum free_how { F_DEVICE, F_ASYNC, F_HOST };

static cudaError_t release(void *ptr, enum free_how how, cudaStream_t stream)
{
	const struct driver *d = rt_driver();
	if (!ptr)
		return cudaSuccess;
	if (!d->loaded)
		return simmem_free(ptr, how == F_HOST) == 0 ? cudaSuccess
							    : rt_error(cudaErrorInvalidValue);
	CUdeviceptr dp = (CUdeviceptr)(uintptr_t)ptr;
	CUresult r = how == F_HOST    ? d->MemFreeHost(ptr)
		     : how == F_ASYNC ? d->MemFreeAsync(dp, (CUstream)stream)
				      : d->MemFree(dp);
	return rt_error(rt_from_driver(r));
}

EXPORT cudaError_t CUDARTAPI cudaFree(void *ptr)
{
	return release(ptr, F_DEVICE, NULL);
}

EXPORT cudaError_t CUDARTAPI cudaFreeAsync(void *ptr, cudaStream_t stream)
{
	return release(ptr, F_ASYNC, stream);
}

EXPORT cudaError_t CUDARTAPI cudaFreeAsync_ptsz(void *ptr, cudaStream_t stream)
{
	return release(ptr, F_ASYNC, stream);
}

EXPORT cudaError_t CUDARTAPI cudaFreeHost(void *ptr)
{
	return release(ptr, F_HOST, NULL);
}

/* --- copies and memsets ------------------------------------------------------------------ */

#define DP(p) ((CUdeviceptr)(uintptr_t)(p))

static cudaError_t copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
			int async, cudaStream_t stream)
{
	double t0 = simmem_now();
	const struct driver *d = rt_driver();
	if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
		return rt_error(cudaErrorInvalidMemcpyDirection);
	if (n == 0)
		return cudaSuccess;
	if (!dst || !src)
		return rt_error(cudaErrorInvalidValue);
	if (!d->loaded) {
		simmem_copy(t0, dst, src, n);
		return cudaSuccess;
	}
	CUstream s = (CUstream)stream;
	CUresult r;
	switch (kind) {
	case cudaMemcpyHostToDevice:
		r = async ? d->MemcpyHtoDAsync(DP(dst), src, n, s) : d->MemcpyHtoD(DP(dst), src, n);
		break;
	case cudaMemcpyDeviceToHost:
		r = async ? d->MemcpyDtoHAsync(dst, DP(src), n, s) : d->MemcpyDtoH(dst, DP(src), n);
		break;
	case cudaMemcpyDeviceToDevice:
		r = async ? d->MemcpyDtoDAsync(DP(dst), DP(src), n, s)
			  : d->MemcpyDtoD(DP(dst), DP(src), n);
		break;
	default:	/* host to host, or "default": unified addressing decides */
		r = async ? d->MemcpyAsync(DP(dst), DP(src), n, s) : d->Memcpy(DP(dst), DP(src), n);
		break;
	}
	return rt_error(rt_from_driver(r));
}

EXPORT cudaError_t CUDARTAPI cudaMemcpy(void *dst, const void *src, size_t n,
					enum cudaMemcpyKind kind)
{
	return copy(dst, src, n, kind, 0, NULL);
}

EXPORT cudaError_t CUDARTAPI cudaMemcpy_ptds(void *dst, const void *src, size_t n,
					     enum cudaMemcpyKind kind)
{
	return copy(dst, src, n, kind, 0, NULL);
}

EXPORT cudaError_t CUDARTAPI cudaMemcpyAsync(void *dst, const void *src, size_t n,
					     enum cudaMemcpyKind kind, cudaStream_t stream)
{
	return copy(dst, src, n, kind, 1, stream);
}

EXPORT cudaError_t CUDARTAPI cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t n,
						  enum cudaMemcpyKind kind, cudaStream_t stream)
{
	return copy(dst, src, n, kind, 1, stream);
}

static cudaError_t copy_peer(void *dst, int dst_device, const void *src, int src_device, size_t n)
{
	double t0 = simmem_now();
	const struct driver *d = rt_driver();
	if (dst_device < 0 || dst_device >= sim_devices() || src_device < 0 || src_device >= sim_devices())
		return rt_error(cudaErrorInvalidDevice);
	if (n == 0)
		return cudaSuccess;
	if (!dst || !src)
		return rt_error(cudaErrorInvalidValue);
	if (!d->loaded) {
		simmem_copy(t0, dst, src, n);
		return cudaSuccess;
	}
	return rt_error(rt_from_driver(d->MemcpyPeer(DP(dst), NULL, DP(src), NULL, n)));
}

EXPORT cudaError_t CUDARTAPI cudaMemcpyPeer(void *dst, int dst_device, const void *src,
					    int src_device, size_t n)
{
	return copy_peer(dst, dst_device, src, src_device, n);
}

EXPORT cudaError_t CUDARTAPI cudaMemcpyPeer_ptds(void *dst, int dst_device, const void *src,
						 int src_device, size_t n)
{
	return copy_peer(dst, dst_device, src, src_device, n);
}

EXPORT cudaError_t CUDARTAPI cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src,
						 int src_device, size_t n, cudaStream_t stream)
{
	(void)stream;
	return copy_peer(dst, dst_device, src, src_device, n);
}

static CUmemorytype memory_type(enum cudaMemcpyKind kind, int is_dst)
{
	switch (kind) {
	case cudaMemcpyHostToHost: return CU_MEMORYTYPE_HOST;
	case cudaMemcpyHostToDevice: return is_dst ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
	case cudaMemcpyDeviceToHost: return is_dst ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
	case cudaMemcpyDeviceToDevice: return CU_MEMORYTYPE_DEVICE;
	default: return CU_MEMORYTYPE_UNIFIED;
	}
}

static cudaError_t copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
			   size_t height, enum cudaMemcpyKind kind)
{
	double t0 = simmem_now();
	const struct driver *d = rt_driver();
	if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
		return rt_error(cudaErrorInvalidMemcpyDirection);
	if (width == 0 || height == 0)
		return cudaSuccess;
	if (!dst || !src || width > dpitch || width > spitch)
		return rt_error(cudaErrorInvalidValue);
	if (!d->loaded) {
		simmem_copy_2d(t0, dst, dpitch, src, spitch, width, height);
		return cudaSuccess;
	}
	CUDA_MEMCPY2D c = {
		.srcMemoryType = memory_type(kind, 0),
		.srcHost = src,
		.srcDevice = DP(src),
		.srcPitch = spitch,
		.dstMemoryType = memory_type(kind, 1),
		.dstHost = dst,
		.dstDevice = DP(dst),
		.dstPitch = dpitch,
		.WidthInBytes = width,
		.Height = height,
	};
	return rt_error(rt_from_driver(d->Memcpy2D(&c)));
}

EXPORT cudaError_t CUDARTAPI cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
					  size_t width, size_t height, enum cudaMemcpyKind kind)
{
	return copy_2d(dst, dpitch, src, spitch, width, height, kind);
}

EXPORT cudaError_t CUDARTAPI cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src,
					       size_t spitch, size_t width, size_t height,
					       enum cudaMemcpyKind kind)
{
	return copy_2d(dst, dpitch, src, spitch, width, height, kind);
}

static cudaError_t fill(void *ptr, int value, size_t n, int async, cudaStream_t stream)
{
	const struct driver *d = rt_driver();
	if (n == 0)
		return cudaSuccess;
	if (!ptr)
		return rt_error(cudaErrorInvalidValue);
	if (!d->loaded) {
		simmem_set(ptr, value, n);
		return cudaSuccess;
	}
	CUresult r = async ? d->MemsetD8Async(DP(ptr), (unsigned char)value, n, (CUstream)stream)
			   : d->MemsetD8(DP(ptr), (unsigned char)value, n);
	return rt_error(rt_from_driver(r));
}

EXPORT cudaError_t CUDARTAPI cudaMemset(void *ptr, int value, size_t n)
{
	return fill(ptr, value, n, 0, NULL);
}

EXPORT cudaError_t CUDARTAPI cudaMemset_ptds(void *ptr, int value, size_t n)
{
	return fill(ptr, value, n, 0, NULL);
}

EXPORT cudaError_t CUDARTAPI cudaMemsetAsync(void *ptr, int value, size_t n, cudaStream_t stream)
{
	return fill(ptr, value, n, 1, stream);
}

EXPORT cudaError_t CUDARTAPI cudaMemsetAsync_ptsz(void *ptr, int value, size_t n,
						  cudaStream_t stream)
{
	return fill(ptr, value, n, 1, stream);
}

/* --- synchronization --------------------------------------------------------------------- */

enum sync_what { S_DEVICE, S_STREAM, S_EVENT };

/* TEST HOOK (robustness tests only): SIMCUDA_SYNC_HOOK=SYMBOL makes every synchronize call
 * first call the program's function SYMBOL (void SYMBOL(void), found with dlsym, so the
 * program must be linked with -rdynamic) from inside the call, as a CUDA host callback would:
 * it may pthread_exit, longjmp, fork... while the synchronize call is in flight. */
static void sync_hook(void)
{
	static void (*hook)(void);
	static int known;
	if (!__atomic_load_n(&known, __ATOMIC_ACQUIRE)) {
		const char *name = getenv("SIMCUDA_SYNC_HOOK");
		hook = name && *name ? (void (*)(void))dlsym(RTLD_DEFAULT, name) : NULL;
		__atomic_store_n(&known, 1, __ATOMIC_RELEASE);
	}
	if (hook)
		hook();
}

static cudaError_t synchronize(enum sync_what what, void *handle)
{
	double t0 = simmem_now();
	const struct driver *d = rt_driver();
	sync_hook();
	if (!d->loaded) {
		simmem_sync_wait(t0);
		return cudaSuccess;
	}
	CUresult r = what == S_DEVICE   ? d->CtxSynchronize()
		     : what == S_STREAM ? d->StreamSynchronize((CUstream)handle)
					: d->EventSynchronize((CUevent)handle);
	return rt_error(rt_from_driver(r));
}

EXPORT cudaError_t CUDARTAPI cudaDeviceSynchronize(void)
{
	return synchronize(S_DEVICE, NULL);
}

EXPORT cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream)
{
	return synchronize(S_STREAM, stream);
}

EXPORT cudaError_t CUDARTAPI cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
	return synchronize(S_STREAM, stream);
}

EXPORT cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event)
{
	return synchronize(S_EVENT, event);
}
