/* cuda_graphs.h — *** SIMULATED *** driver's stream capture and graphs (tests/sim/cuda_graphs.c),
 * for the simulated driver's launch, copy and memset functions (tests/sim/cuda.c). Hidden. */
#ifndef SIM_CUDA_GRAPHS_H
#define SIM_CUDA_GRAPHS_H

#include <cuda.h>

#include "simmem.h"

/* Whether stream is capturing: then the operation becomes a node of its graph (recorded by
 * these) and does not run. */
SIM_HIDDEN int simgraph_capturing(CUstream stream);
SIM_HIDDEN CUresult simgraph_capture_kernel(CUstream stream, CUfunction f, const unsigned dims[6],
					    unsigned shmem, void **params);
SIM_HIDDEN CUresult simgraph_capture_copy(CUstream stream, CUmemorytype dst_type, void *dst,
					  CUmemorytype src_type, const void *src, size_t n);
SIM_HIDDEN CUresult simgraph_capture_memset(CUstream stream, CUdeviceptr dst, unsigned value,
					    unsigned element_size, size_t n);
/* A kernel "ran" (kernels never run here: the driver counts them, cuSimKernelRuns). */
SIM_HIDDEN void simgraph_kernel_ran(const void *f);

#endif
