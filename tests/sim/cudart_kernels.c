/* cudart_kernels.c — kernels in the *** SIMULATED *** CUDA runtime for gputop's tests (no GPU:
 * kernels never run). The nvcc glue (__cudaRegisterFatBinary, __cudaRegisterFunction, call
 * configurations, __cudaGetKernel, __cudaLaunchKernel) and the launch calls. A kernel is known by
 * its host stub (legacy launches), by its cudaKernel_t handle (CUDA 13 nvcc code), or not at all
 * (a test program launching a plain host function as a "stub": accepted, named by dladdr). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudart_internal.h"

/* The nvcc glue, declared here as crt/host_runtime.h and crt/device_functions.h declare it
 * (those headers are C++ only). */
void **CUDARTAPI __cudaRegisterFatBinary(void *fat_cubin);
void CUDARTAPI __cudaRegisterFatBinaryEnd(void **handle);
void CUDARTAPI __cudaUnregisterFatBinary(void **handle);
void CUDARTAPI __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
				      const char *device_name, int thread_limit, uint3 *tid,
				      uint3 *bid, dim3 *bdim, dim3 *gdim, int *wsize);
void CUDARTAPI __cudaRegisterVar(void **handle, char *host_var, char *device_address,
				 const char *device_name, int ext, size_t size, int constant,
				 int global);
void CUDARTAPI __cudaRegisterManagedVar(void **handle, void **host_var_ptr, char *device_address,
					const char *device_name, int ext, size_t size, int constant,
					int global);
char CUDARTAPI __cudaInitModule(void **handle);
unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem,
					       struct CUstream_st *stream);
cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shmem,
						 void *stream);
cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *kernel, const void *host_fun);
cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
					 size_t shmem, cudaStream_t stream);
cudaError_t CUDARTAPI __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block,
					      void **args, size_t shmem, cudaStream_t stream);
cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void *func, dim3 grid, dim3 block, void **args,
					    size_t shmem, cudaStream_t stream);
cudaError_t CUDARTAPI cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
					       void **args);

/* NVIDIA's 13.0 __cudaLaunchKernel is exactly this: a frame that is torn down at once and a jump
 * to the exported cudaLaunchKernel, so a probe there sees the handle and the caller's return
 * address. Written in assembly so that no compiler turns the jump into a call. */
__asm__(".text\n"
	".globl __cudaLaunchKernel\n"
	".type __cudaLaunchKernel, @function\n"
	"__cudaLaunchKernel:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	pop %rbp\n"
	"	jmp cudaLaunchKernel@PLT\n"
	".size __cudaLaunchKernel, .-__cudaLaunchKernel\n"
	".globl __cudaLaunchKernel_ptsz\n"
	".type __cudaLaunchKernel_ptsz, @function\n"
	"__cudaLaunchKernel_ptsz:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	pop %rbp\n"
	"	jmp cudaLaunchKernel_ptsz@PLT\n"
	".size __cudaLaunchKernel_ptsz, .-__cudaLaunchKernel_ptsz\n");

/* --- registered modules and kernels -------------------------------------------------------- */

struct module {
	void *fat_cubin;	/* first member: the handle nvcc keeps is a void ** to it */
	CUlibrary library;	/* loaded in the driver when first needed */
};

struct kernel {
	const void *host_fun;	/* the host stub, or the plain function a test launched */
	char *device_name;	/* mangled name, as the driver knows the kernel */
	struct module *module;	/* NULL for an unregistered function */
	void *handle;		/* what __cudaGetKernel returns: a CUkernel with a driver, else ours */
};

static struct kernel *kernels;
static size_t n_kernels, cap_kernels;
static struct module unregistered_module;	/* for functions nobody registered */
static pthread_mutex_t kernels_lock = PTHREAD_MUTEX_INITIALIZER;

void **CUDARTAPI __cudaRegisterFatBinary(void *fat_cubin)
{
	struct module *m = calloc(1, sizeof(*m));
	if (!m)
		abort();
	m->fat_cubin = fat_cubin;
	return (void **)m;
}

void CUDARTAPI __cudaRegisterFatBinaryEnd(void **handle)
{
	(void)handle;
}

/* Modules stay registered: kernel handles must outlive the atexit handlers that call this. */
void CUDARTAPI __cudaUnregisterFatBinary(void **handle)
{
	(void)handle;
}

static struct kernel *kernel_add(const void *host_fun, const char *device_name,
				 struct module *module)
{
	if (n_kernels == cap_kernels) {
		size_t cap = cap_kernels ? 2 * cap_kernels : 64;
		struct kernel *k = realloc(kernels, cap * sizeof(*k));
		if (!k)
			abort();
		kernels = k;
		cap_kernels = cap;
	}
	struct kernel *k = &kernels[n_kernels++];
	k->host_fun = host_fun;
	k->device_name = strdup(device_name);
	k->module = module;
	k->handle = NULL;
	return k;
}

void CUDARTAPI __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
				      const char *device_name, int thread_limit, uint3 *tid,
				      uint3 *bid, dim3 *bdim, dim3 *gdim, int *wsize)
{
	(void)device_name, (void)thread_limit, (void)tid, (void)bid, (void)bdim, (void)gdim;
	(void)wsize;
	pthread_mutex_lock(&kernels_lock);
	kernel_add(host_fun, device_fun, (struct module *)handle);
	pthread_mutex_unlock(&kernels_lock);
}

void CUDARTAPI __cudaRegisterVar(void **handle, char *host_var, char *device_address,
				 const char *device_name, int ext, size_t size, int constant,
				 int global)
{
	(void)handle, (void)host_var, (void)device_address, (void)device_name, (void)ext;
	(void)size, (void)constant, (void)global;
}

void CUDARTAPI __cudaRegisterManagedVar(void **handle, void **host_var_ptr, char *device_address,
					const char *device_name, int ext, size_t size, int constant,
					int global)
{
	(void)handle, (void)host_var_ptr, (void)device_address, (void)device_name, (void)ext;
	(void)size, (void)constant, (void)global;
}

char CUDARTAPI __cudaInitModule(void **handle)
{
	(void)handle;
	return 1;
}

/* The name of a function nobody registered: its dynamic symbol (test programs are linked with
 * -rdynamic), else an honest placeholder. */
static char *unregistered_name(const void *fun, char *buf, size_t size)
{
	Dl_info info;
	if (dladdr(fun, &info) && info.dli_sname && info.dli_saddr == fun)
		return (char *)info.dli_sname;
	snprintf(buf, size, "kernel@%p", fun);
	return buf;
}

/* Finds the kernel that func names (a handle or a host function), adding unregistered ones. */
static struct kernel *kernel_find_locked(const void *func)
{
	for (size_t i = 0; i < n_kernels; i++)
		if (kernels[i].handle == func || kernels[i].host_fun == func)
			return &kernels[i];
	char buf[64];
	return kernel_add(func, unregistered_name(func, buf, sizeof(buf)), NULL);
}

/* Gives k its handle: with the driver, the CUkernel that cuLibraryGetKernel returns (asked once
 * per kernel, like NVIDIA's runtime); without it, a handle of our own. */
static cudaError_t kernel_handle_locked(struct kernel *k)
{
	const struct driver *d = rt_driver();
	if (k->handle)
		return cudaSuccess;
	if (!d->loaded) {
		k->handle = simmem_handle(k->host_fun, SIM_KEY_ADDR);
		return k->handle ? cudaSuccess : cudaErrorMemoryAllocation;
	}
	struct module *m = k->module ? k->module : &unregistered_module;
	if (!m->library) {
		static const char dummy_image[] = "simulated image";
		const void *image = m->fat_cubin ? m->fat_cubin : dummy_image;
		CUresult r = d->LibraryLoadData(&m->library, image, NULL, NULL, 0, NULL, NULL, 0);
		if (r != CUDA_SUCCESS)
			return rt_from_driver(r);
	}
	CUkernel handle;
	CUresult r = d->LibraryGetKernel(&handle, m->library, k->device_name);
	if (r != CUDA_SUCCESS)
		return rt_from_driver(r);
	k->handle = handle;
	return cudaSuccess;
}

/* The driver's handle for func (with a driver only). */
static cudaError_t kernel_resolve(const void *func, void **handle)
{
	pthread_mutex_lock(&kernels_lock);
	struct kernel *k = kernel_find_locked(func);
	cudaError_t e = kernel_handle_locked(k);
	*handle = k->handle;
	pthread_mutex_unlock(&kernels_lock);
	return e;
}

cudaError_t rt_kernel_handle(const void *func, void **handle)
{
	return kernel_resolve(func, handle);
}

static cudaError_t get_kernel(cudaKernel_t *out, const void *host_fun)
{
	if (!out || !host_fun)
		return rt_error(cudaErrorInvalidDeviceFunction);
	void *handle;
	cudaError_t e = kernel_resolve(host_fun, &handle);
	*out = e == cudaSuccess ? handle : NULL;
	return rt_error(e);
}

cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *out, const void *host_fun)
{
	return get_kernel(out, host_fun);
}

EXPORT cudaError_t CUDARTAPI cudaGetKernel(cudaKernel_t *out, const void *host_fun)
{
	return get_kernel(out, host_fun);
}

/* --- <<<>>> call configurations: a per-thread stack ----------------------------------------- */

struct call_config {
	dim3 grid, block;
	size_t shmem;
	void *stream;
};

#define CONFIG_DEPTH 32
static __thread struct call_config configs[CONFIG_DEPTH];
static __thread int n_configs;

unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem,
					       struct CUstream_st *stream)
{
	if (n_configs == CONFIG_DEPTH)
		return 1;
	configs[n_configs++] = (struct call_config){ grid, block, shmem, stream };
	return 0;
}

cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shmem,
						 void *stream)
{
	if (n_configs == 0)
		return rt_error(cudaErrorMissingConfiguration);
	struct call_config *c = &configs[--n_configs];
	*grid = c->grid;
	*block = c->block;
	*shmem = c->shmem;
	*(void **)stream = c->stream;
	return cudaSuccess;
}

/* --- launches ----------------------------------------------------------------------------------
 * Without a driver a launch succeeds for any non-NULL function and does nothing; with one, it
 * becomes cuLaunchKernel / cuLaunchKernelEx on the kernel's driver handle. */

static cudaError_t launch(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
			  cudaStream_t stream)
{
	const struct driver *d = rt_driver();
	if (!func)
		return rt_error(cudaErrorInvalidDeviceFunction);
	if (!d->loaded)
		return cudaSuccess;
	void *f;
	cudaError_t e = kernel_resolve(func, &f);
	if (e != cudaSuccess)
		return rt_error(e);
	return rt_error(rt_from_driver(d->LaunchKernel((CUfunction)f, grid.x, grid.y, grid.z,
						       block.x, block.y, block.z,
						       (unsigned int)shmem, (CUstream)stream, args,
						       NULL)));
}

static cudaError_t launch_ex(const cudaLaunchConfig_t *config, const void *func, void **args)
{
	const struct driver *d = rt_driver();
	if (!config)
		return rt_error(cudaErrorInvalidValue);
	if (!func)
		return rt_error(cudaErrorInvalidDeviceFunction);
	if (!d->loaded)
		return cudaSuccess;
	void *f;
	cudaError_t e = kernel_resolve(func, &f);
	if (e != cudaSuccess)
		return rt_error(e);
	CUlaunchConfig c = {
		.gridDimX = config->gridDim.x,
		.gridDimY = config->gridDim.y,
		.gridDimZ = config->gridDim.z,
		.blockDimX = config->blockDim.x,
		.blockDimY = config->blockDim.y,
		.blockDimZ = config->blockDim.z,
		.sharedMemBytes = (unsigned int)config->dynamicSmemBytes,
		.hStream = (CUstream)config->stream,
	};
	return rt_error(rt_from_driver(d->LaunchKernelEx(&c, (CUfunction)f, args, NULL)));
}

EXPORT cudaError_t CUDARTAPI cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
					      size_t shmem, cudaStream_t stream)
{
	return launch(func, grid, block, args, shmem, stream);
}

EXPORT cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void *func, dim3 grid, dim3 block,
						   void **args, size_t shmem, cudaStream_t stream)
{
	return launch(func, grid, block, args, shmem, stream);
}

EXPORT cudaError_t CUDARTAPI cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
						 void **args)
{
	return launch_ex(config, func, args);
}

EXPORT cudaError_t CUDARTAPI cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config,
						      const void *func, void **args)
{
	return launch_ex(config, func, args);
}
