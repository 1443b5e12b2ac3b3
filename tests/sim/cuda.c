/* cuda.c — *** SIMULATED *** CUDA DRIVER (libcuda.so.1) FOR gputop's TESTS. NOT NVIDIA's DRIVER.
 * *** There is no GPU behind it: "device" memory is host memory (mmap), kernels never run. ***
 * It exists so that tests on machines without a GPU can trace the driver API's success paths
 * (pointers returned and freed, copies that take time, launches) with the real signatures from
 * cuda.h. Built as tests/bin/simdrv/libcuda.so.1; used only when a test puts that folder on
 * LD_LIBRARY_PATH. Environment: SIMCUDA_GBPS (copy bandwidth), SIMCUDA_SYNC_US (synchronize),
 * SIMCUDA_TIMES (its own account of those times: simmem.h), SIMCUDA_NAME_MS (cuFuncGetName). */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_graphs.h"
#include "simmem.h"

#define EXPORT __attribute__((visibility("default")))

SIM_HIDDEN const char simmem_library[] = "driver";	/* for SIMCUDA_TIMES */

/* The simulated runtime forwards to a libcuda.so.1 only when it finds this marker. */
EXPORT const int cuSimulatedDriver = 1;

/* Any non-NULL pointer that cannot be mistaken for memory of ours serves as a dummy handle. */
static char dummy_module, dummy_library;
/* SIMCUDA_DEVICES=N (1 to SIM_MAX_DEVICES, default 1): N simulated devices, one primary context
 * each; a thread's current context is its own, as with NVIDIA's driver. */
#define SIM_MAX_DEVICES 8
static char contexts[SIM_MAX_DEVICES];
static __thread CUcontext current_ctx, pushed_ctx[8];
static __thread int n_pushed;

static int sim_devices(void)
{
	const char *e = getenv("SIMCUDA_DEVICES");
	int n = e ? atoi(e) : 1;
	return n >= 1 && n <= SIM_MAX_DEVICES ? n : 1;
}

static int context_device(CUcontext ctx)
{
	for (int i = 0; i < SIM_MAX_DEVICES; i++)
		if (ctx == (CUcontext)&contexts[i])
			return i;
	return -1;
}

EXPORT CUresult CUDAAPI cuInit(unsigned int flags)
{
	(void)flags;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDriverGetVersion(int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = CUDA_VERSION;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetCount(int *count)
{
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = sim_devices();
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
	if (!device || ordinal < 0 || ordinal >= sim_devices())
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

/* Exported functions never call each other (a call between two probed entry points would be
 * a second, nested call for the tracer); they share static helpers instead. */
static CUresult primary_context(CUcontext *ctx, CUdevice dev)
{
	if (!ctx || dev < 0 || dev >= sim_devices())
		return CUDA_ERROR_INVALID_VALUE;
	*ctx = (CUcontext)&contexts[dev];
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
	return primary_context(ctx, dev);
}

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
	return dev >= 0 && dev < sim_devices() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

/* cuda.h maps cuCtxCreate to cuCtxCreate_v4 (with a params struct); v2 is the classic form. */
EXPORT CUresult CUDAAPI cuCtxCreate(CUcontext *ctx, CUctxCreateParams *params, unsigned int flags,
				    CUdevice dev)
{
	(void)params;
	(void)flags;
	return primary_context(ctx, dev);
}

EXPORT CUresult CUDAAPI cuCtxCreate_v2(CUcontext *ctx, unsigned int flags, CUdevice dev)
{
	(void)flags;
	return primary_context(ctx, dev);
}

EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	if (ctx && context_device(ctx) < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	current_ctx = ctx;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext *ctx)
{
	if (!ctx)
		return CUDA_ERROR_INVALID_VALUE;
	*ctx = current_ctx ? current_ctx : (CUcontext)&contexts[0];
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx)	/* cuda.h: cuCtxPushCurrent_v2 */
{
	if (!ctx || context_device(ctx) < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (n_pushed == (int)(sizeof pushed_ctx / sizeof pushed_ctx[0]))
		return CUDA_ERROR_OUT_OF_MEMORY;
	pushed_ctx[n_pushed++] = current_ctx;
	current_ctx = ctx;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxPopCurrent(CUcontext *ctx)	/* cuda.h: cuCtxPopCurrent_v2 */
{
	if (!n_pushed)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (ctx)
		*ctx = current_ctx;
	current_ctx = pushed_ctx[--n_pushed];
	return CUDA_SUCCESS;
}

/* --- memory ----------------------------------------------------------------------------- */

static CUresult alloc_device(CUdeviceptr *dptr, size_t bytes, enum simmem_kind kind)
{
	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	*dptr = 0;
	if (bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	void *p = simmem_alloc(bytes, kind);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*dptr = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

static CUresult alloc_host(void **pp, size_t bytes)
{
	if (!pp)
		return CUDA_ERROR_INVALID_VALUE;
	*pp = NULL;
	if (bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	*pp = simmem_alloc(bytes, SIMMEM_HOST);
	return *pp ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult free_device(CUdeviceptr dptr)
{
	if (dptr == 0)
		return CUDA_SUCCESS;
	return simmem_free((void *)(uintptr_t)dptr, 0) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytes)
{
	return alloc_device(dptr, bytes, SIMMEM_DEVICE);
}

EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream stream)
{
	(void)stream;
	return alloc_device(dptr, bytes, SIMMEM_DEVICE);
}

EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool,
						CUstream stream)
{
	(void)pool;
	(void)stream;
	return alloc_device(dptr, bytes, SIMMEM_DEVICE);
}

EXPORT CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned int flags)
{
	(void)flags;
	return alloc_device(dptr, bytes, SIMMEM_MANAGED);
}

/* Rows are padded to a multiple of 512 bytes, as on the hardware. */
EXPORT CUresult CUDAAPI cuMemAllocPitch(CUdeviceptr *dptr, size_t *pitch, size_t width,
					size_t height, unsigned int elem_size)
{
	(void)elem_size;
	if (!pitch)
		return CUDA_ERROR_INVALID_VALUE;
	size_t p = (width + 511) / 512 * 512;
	if (height && p > SIMMEM_MAX_BYTES / height)
		p = SIMMEM_MAX_BYTES;	/* overflow: let the size check fail */
	CUresult r = alloc_device(dptr, p * height, SIMMEM_DEVICE);
	*pitch = r == CUDA_SUCCESS ? p : 0;
	return r;
}

EXPORT CUresult CUDAAPI cuMemAllocHost(void **pp, size_t bytes)
{
	return alloc_host(pp, bytes);
}

EXPORT CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags)
{
	(void)flags;
	return alloc_host(pp, bytes);
}

EXPORT CUresult CUDAAPI cuMemFree(CUdeviceptr dptr)
{
	return free_device(dptr);
}

EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
	(void)stream;
	return free_device(dptr);
}

EXPORT CUresult CUDAAPI cuMemFreeHost(void *p)
{
	if (!p)
		return CUDA_SUCCESS;
	return simmem_free(p, 1) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The virtual memory API's physical memory (what PyTorch's expandable segments map page by
 * page): no address until cuMemMap, which nothing here simulates; the handle is the size's
 * own record. Counted against SIMCUDA_MEM_LIMIT: past it, CUDA_ERROR_OUT_OF_MEMORY. */
EXPORT CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
				    const CUmemAllocationProp *prop, unsigned long long flags)
{
	(void)flags;
	if (!handle || !prop || !size)
		return CUDA_ERROR_INVALID_VALUE;
	size_t *h = malloc(sizeof *h);
	if (!h)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!simmem_reserve(size)) {
		free(h);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*h = size;
	*handle = (CUmemGenericAllocationHandle)(uintptr_t)h;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
	size_t *h = (size_t *)(uintptr_t)handle;
	if (!h)
		return CUDA_ERROR_INVALID_VALUE;
	simmem_unreserve(*h);
	free(h);
	return CUDA_SUCCESS;
}

/* --- the SIMULATED CUPTI's view (tests/sim/cupti.c) --------------------------------------- */

/* The simulated CUPTI, once enabled, asks to hear of every kernel run, copy and memset (what
 * the real driver tells CUPTI), to make its activity records from. */
typedef void sim_activity_hook(int kind, const char *name, unsigned long long bytes, int copy_kind);
static sim_activity_hook *activity_hook;
static int hook_users;	/* calls in flight: a hook is unset only once none runs it (it may
			 * be unloaded next) */

EXPORT void cuSimSetActivityHook(sim_activity_hook *hook)
{
	__atomic_store_n(&activity_hook, hook, __ATOMIC_SEQ_CST);
	while (!hook && __atomic_load_n(&hook_users, __ATOMIC_SEQ_CST))
		sched_yield();
}

static void activity(int kind, const char *name, unsigned long long bytes, int copy_kind)
{
	__atomic_add_fetch(&hook_users, 1, __ATOMIC_SEQ_CST);
	sim_activity_hook *hook = __atomic_load_n(&activity_hook, __ATOMIC_SEQ_CST);
	if (hook)
		hook(kind, name, bytes, copy_kind);
	__atomic_sub_fetch(&hook_users, 1, __ATOMIC_SEQ_CST);
}

/* --- copies and memsets ------------------------------------------------------------------ */

#define DPTR(d) ((void *)(uintptr_t)(d))

static CUresult copy(double t0, void *dst, const void *src, size_t n)
{
	if (n && (!dst || !src))
		return CUDA_ERROR_INVALID_VALUE;
	simmem_copy(t0, dst, src, n);
	/* CUPTI's copy kinds: 1 HtoD, 2 DtoH, 8 DtoD (pageable host memory as host). */
	int d = simmem_on_device(dst), s = simmem_on_device(src);
	activity(2, NULL, n, d && s ? 8 : d ? 1 : s ? 2 : 0);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return copy(simmem_now(), DPTR(dst), DPTR(src), n);
}

EXPORT CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	if (simgraph_capturing(s))	/* a graph node, not a copy now */
		return simgraph_capture_copy(s, CU_MEMORYTYPE_UNIFIED, DPTR(dst), CU_MEMORYTYPE_UNIFIED, DPTR(src), n);
	return copy(simmem_now(), DPTR(dst), DPTR(src), n);
}

EXPORT CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
				     CUcontext src_ctx, size_t n)
{
	(void)dst_ctx;
	(void)src_ctx;
	return copy(simmem_now(), DPTR(dst), DPTR(src), n);
}

EXPORT CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n)
{
	return copy(simmem_now(), DPTR(dst), src, n);
}

EXPORT CUresult CUDAAPI cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n)
{
	return copy(simmem_now(), dst, DPTR(src), n);
}

EXPORT CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return copy(simmem_now(), DPTR(dst), DPTR(src), n);
}

EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
	if (simgraph_capturing(s))
		return simgraph_capture_copy(s, CU_MEMORYTYPE_DEVICE, DPTR(dst), CU_MEMORYTYPE_HOST, src, n);
	return copy(simmem_now(), DPTR(dst), src, n);
}

EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	if (simgraph_capturing(s))
		return simgraph_capture_copy(s, CU_MEMORYTYPE_HOST, dst, CU_MEMORYTYPE_DEVICE, DPTR(src), n);
	return copy(simmem_now(), dst, DPTR(src), n);
}

EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	if (simgraph_capturing(s))
		return simgraph_capture_copy(s, CU_MEMORYTYPE_DEVICE, DPTR(dst), CU_MEMORYTYPE_DEVICE, DPTR(src), n);
	return copy(simmem_now(), DPTR(dst), DPTR(src), n);
}

/* Only host and device memory (both plain pointers here); arrays are not simulated. */
static const void *copy2d_ptr(CUmemorytype type, const void *host, CUdeviceptr dev)
{
	return type == CU_MEMORYTYPE_HOST ? host : DPTR(dev);
}

EXPORT CUresult CUDAAPI cuMemcpy2D(const CUDA_MEMCPY2D *c)
{
	double t0 = simmem_now();
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	const char *src = copy2d_ptr(c->srcMemoryType, c->srcHost, c->srcDevice);
	char *dst = (char *)copy2d_ptr(c->dstMemoryType, c->dstHost, c->dstDevice);
	if (!src || !dst)
		return CUDA_ERROR_INVALID_VALUE;
	src += c->srcY * c->srcPitch + c->srcXInBytes;
	dst += c->dstY * c->dstPitch + c->dstXInBytes;
	simmem_copy_2d(t0, dst, c->dstPitch, src, c->srcPitch, c->WidthInBytes, c->Height);
	return CUDA_SUCCESS;
}

static CUresult memset_d8(CUdeviceptr dst, unsigned char value, size_t n)
{
	if (n && !dst)
		return CUDA_ERROR_INVALID_VALUE;
	simmem_set(DPTR(dst), value, n);
	activity(3, NULL, n, 0);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t n)
{
	return memset_d8(dst, value, n);
}

EXPORT CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n, CUstream s)
{
	if (simgraph_capturing(s))
		return simgraph_capture_memset(s, dst, value, 1, n);
	return memset_d8(dst, value, n);
}

static CUresult memset_d32(CUdeviceptr dst, unsigned int value, size_t n)
{
	if (n && !dst)
		return CUDA_ERROR_INVALID_VALUE;
	unsigned int *p = DPTR(dst);
	for (size_t i = 0; i < n; i++)
		p[i] = value;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemsetD32(CUdeviceptr dst, unsigned int value, size_t n)
{
	return memset_d32(dst, value, n);
}

EXPORT CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t n, CUstream s)
{
	if (simgraph_capturing(s))
		return simgraph_capture_memset(s, dst, value, 4, n);
	return memset_d32(dst, value, n);
}

/* --- synchronization --------------------------------------------------------------------- */

EXPORT CUresult CUDAAPI cuCtxSynchronize(void)
{
	simmem_sync_wait(simmem_now());
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream stream)
{
	(void)stream;
	simmem_sync_wait(simmem_now());
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent event)
{
	(void)event;
	simmem_sync_wait(simmem_now());
	return CUDA_SUCCESS;
}

/* --- modules, libraries, kernels ---------------------------------------------------------
 * A CUfunction or CUkernel is a handle made once per (mangled) name: the same name always gives
 * the same handle, and a CUkernel differs from the CUfunction of the same name. */

EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
	if (!module || !image)
		return CUDA_ERROR_INVALID_VALUE;
	*module = (CUmodule)&dummy_module;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *f, CUmodule module, const char *name)
{
	if (!f || !module || !name)
		return CUDA_ERROR_INVALID_VALUE;
	*f = simmem_handle(name, SIM_KEY_NAME2);
	return *f ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code,
					  CUjit_option *jit_options, void **jit_values,
					  unsigned int n_jit, CUlibraryOption *lib_options,
					  void **lib_values, unsigned int n_lib)
{
	(void)jit_options;
	(void)jit_values;
	(void)n_jit;
	(void)lib_options;
	(void)lib_values;
	(void)n_lib;
	if (!library || !code)
		return CUDA_ERROR_INVALID_VALUE;
	*library = (CUlibrary)&dummy_library;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuLibraryGetKernel(CUkernel *kernel, CUlibrary library, const char *name)
{
	if (!kernel || !library || !name)
		return CUDA_ERROR_INVALID_VALUE;
	*kernel = simmem_handle(name, SIM_KEY_NAME);
	return *kernel ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult CUDAAPI cuKernelGetFunction(CUfunction *f, CUkernel kernel)
{
	const char *name = simmem_handle_key(kernel);
	if (!f || !name)
		return CUDA_ERROR_INVALID_HANDLE;
	*f = simmem_handle(name, SIM_KEY_NAME2);
	return *f ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* What a driver may do after a module's unload: a function loaded later gets the address of
 * one that went. Here the CUfunction or CUkernel h stands for the kernel of that (mangled) name
 * from now on: module loading of the name returns h, cuFuncGetName and cuKernelGetName say it.
 * A simulation-only export (dlsym it), for the tests of gputop naming a reused handle. */
EXPORT CUresult cuSimReuseHandle(void *h, const char *name)
{
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	return simmem_handle_rename(h, name) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* The mangled name of a CUfunction or CUkernel (both kinds of handle carry it). */
static CUresult handle_name(const char **name, const void *handle)
{
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	*name = simmem_handle_key(handle);
	return *name ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* SIMCUDA_NAME_MS=MS makes each call take that long, creating the file SIMCUDA_NAME_MARK names
 * first: a test can kill gputop while it asks a thread it holds for a kernel's name. */
EXPORT CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction f)
{
	const char *ms = getenv("SIMCUDA_NAME_MS"), *mark = getenv("SIMCUDA_NAME_MARK");
	if (ms && *ms) {
		FILE *m = mark && *mark ? fopen(mark, "we") : NULL;
		if (m)
			fclose(m);
		usleep((useconds_t)strtoul(ms, NULL, 10) * 1000);
	}
	return handle_name(name, f);
}

EXPORT CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel k)
{
	return handle_name(name, k);
}

/* Kernels never run: a launch succeeds for any non-NULL function and is counted (cuSimKernelRuns),
 * or, into a capturing stream, becomes a graph node. */
static CUresult launch(CUfunction f, const unsigned dims[6], unsigned shmem, CUstream stream, void **params)
{
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (simgraph_capturing(stream))
		return simgraph_capture_kernel(stream, f, dims, shmem, params);
	simgraph_kernel_ran(f);
	activity(1, simmem_handle_key(f), 0, 0);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy,
				       unsigned int gz, unsigned int bx, unsigned int by,
				       unsigned int bz, unsigned int shmem, CUstream stream,
				       void **params, void **extra)
{
	(void)extra;
	return launch(f, (const unsigned[6]){ gx, gy, gz, bx, by, bz }, shmem, stream, params);
}

EXPORT CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params,
					 void **extra)
{
	(void)extra;
	if (!config)
		return CUDA_ERROR_INVALID_VALUE;
	return launch(f, (const unsigned[6]){ config->gridDimX, config->gridDimY, config->gridDimZ,
					      config->blockDimX, config->blockDimY, config->blockDimZ },
		      config->sharedMemBytes, config->hStream, params);
}

/* --- errors and entry points ------------------------------------------------------------- */

static const struct {
	CUresult code;
	const char *name, *text;
} errors[] = {
	{ CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
	{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
	{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
	{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
};

EXPORT CUresult CUDAAPI cuGetErrorName(CUresult error, const char **str)
{
	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == error) {
			*str = errors[i].name;
			return CUDA_SUCCESS;
		}
	*str = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult CUDAAPI cuGetErrorString(CUresult error, const char **str)
{
	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == error) {
			*str = errors[i].text;
			return CUDA_SUCCESS;
		}
	*str = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

static void *self_handle(void)
{
	static void *self;
	if (!self) {
		Dl_info info;
		if (dladdr((void *)cuInit, &info) && info.dli_fname)
			self = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	}
	return self;
}

/* Like the real driver, a request for "cuMemAlloc" gets the newest version, cuMemAlloc_v2. */
EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cuda_version,
					 cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
	(void)cuda_version;
	(void)flags;
	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	void *self = self_handle();
	char name[256];
	*pfn = NULL;
	if (self) {
		snprintf(name, sizeof(name), "%s_v2", symbol);
		*pfn = dlsym(self, name);
		if (!*pfn)
			*pfn = dlsym(self, symbol);
	}
	if (status)
		*status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
