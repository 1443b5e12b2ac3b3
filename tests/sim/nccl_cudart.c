/* nccl_cudart.c — the *** SIMULATED *** NCCL's own cudart: NVIDIA's libnccl.so.2 links the CUDA
 * runtime statically, so its cudaMalloc & co. are local functions of libnccl (in its .symtab),
 * which gputop probes like any cudart. These hidden ones forward to the runtime the program
 * loaded (the simulated one), and nccl.c makes a communicator's buffers with them, as NCCL does:
 * an allocation made inside an NCCL call is counted (it is NCCL's memory on the GPU), once. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

#define HIDDEN __attribute__((visibility("hidden"), noinline))

HIDDEN int cudaMalloc(void **p, size_t n);
HIDDEN int cudaFree(void *p);

HIDDEN int cudaMalloc(void **p, size_t n)
{
	int (*real)(void **, size_t) = (int (*)(void **, size_t))dlsym(RTLD_DEFAULT, "cudaMalloc");
	return real ? real(p, n) : 35;	/* cudaErrorInsufficientDriver */
}

HIDDEN int cudaFree(void *p)
{
	int (*real)(void *) = (int (*)(void *))dlsym(RTLD_DEFAULT, "cudaFree");
	return real ? real(p) : 35;
}

/* What nccl.c calls (it includes nccl.h, whose cuda_runtime.h declares the exported names). */
HIDDEN int sim_nccl_malloc(void **p, size_t n);
HIDDEN int sim_nccl_free(void *p);

HIDDEN int sim_nccl_malloc(void **p, size_t n)
{
	return cudaMalloc(p, n);
}

HIDDEN int sim_nccl_free(void *p)
{
	return cudaFree(p);
}
