/* cuda_api.h — the table of CUDA API functions gputop probes, like strace's syscall tables:
 * one row per function says which layer it belongs to, what operation it is, and which
 * arguments carry what. The tracer never grows a switch per function; it reads the row. */
#ifndef GPUTOP_CUDA_API_H
#define GPUTOP_CUDA_API_H

#include <stdbool.h>
#include <stdint.h>

#include "cuda_call.h"

/* LAYER_TORCH: PyTorch's CUDA caching allocator (libc10_cuda.so), whose C++ member functions are
 * probed like the CUDA API (their `this` is argument 1); see the OP_TORCH_* rows. */
enum api_layer { LAYER_RUNTIME, LAYER_DRIVER, LAYER_NCCL, LAYER_TORCH };

/* A copy's direction: cudaMemcpyKind's first four values. */
enum copy_dir { DIR_H2H, DIR_H2D, DIR_D2H, DIR_D2D, DIR_COUNT };
/* What an allocation gives. */
enum mem_kind { MEM_DEVICE, MEM_MANAGED, MEM_HOST, MEM_KIND_COUNT };

/* enum api_op, what a row's call does: cuda_call.h, beside the event its op tags. */

/* NCCL's operations, as gputop counts them (figures/comm_table.h names them). */
enum coll_op {
	COLL_ALLREDUCE, COLL_BROADCAST, COLL_REDUCE, COLL_ALLGATHER, COLL_REDUCESCATTER,
	COLL_ALLTOALL, COLL_GATHER, COLL_SCATTER, COLL_SEND, COLL_RECV, COLL_COUNT,
	/* OP_COMM_QUERY: what it asks. */
	COLL_RANK = COLL_COUNT, COLL_SIZE,
};

/* How a launch passes its kernel and its dimensions (x86-64 SysV; arch reads the slots). */
enum launch_abi {
	LAUNCH_NONE,
	LAUNCH_RT,		/* cudaLaunchKernel(func, dim3 grid, dim3 block, args, shmem, stream) */
	LAUNCH_RT_EXC,		/* cudaLaunchKernelExC(const cudaLaunchConfig_t *, func, args) */
	LAUNCH_DRV,		/* cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, stream, ...) */
	LAUNCH_DRV_EX,		/* cuLaunchKernelEx(const CUlaunchConfig *, f, params, extra) */
};

/* Where a kernel-name row gets the name of what it returns. */
enum name_src {
	NAME_NONE,
	NAME_FROM_STUB,		/* arg_name is a host stub: its symbol is the mangled kernel name */
	NAME_FROM_STRING,	/* arg_name points to the (mangled) name string in the program */
	NAME_FROM_HANDLE,	/* arg_name is a handle already named: the new one gets its name */
	NAME_REGISTER,		/* __cudaRegisterFunction: arg_out is the stub, arg_name the string */
};

#define API_RETURN	0x01	/* probe the return: error code, time, out-arguments */
#define API_ASYNC	0x02	/* copies: asynchronous */
#define API_HOST	0x04	/* allocations: pinned host memory */
#define API_MANAGED	0x08	/* allocations: managed memory */
#define API_PITCH	0x10	/* allocations: bytes = *arg_pitch_out * arg_height */
#define API_2D		0x20	/* copies/memsets: bytes = arg_size (width) * arg_height */
#define API_PEER	0x40	/* copies: device to device between devices */
#define API_LAUNCH_PROBE 0x80	/* launch rows: disarmed when the other layer counts launches */
#define API_STOPS	0x100	/* the return stops (trampoline, no stub): the tracer asks the
				 * driver things in the stopped thread there */
#define API_CTX_ARGS	0x200	/* copies: arg_dev and arg_src_dev are contexts (cuMemcpyPeer) */
#define API_VALUE_RET	0x400	/* the return value is a result (a pointer), or nothing: never an
				 * error code */
#define API_PAGES	0x800	/* allocations: physical memory by handle (cuMemCreate), no address
				 * (cuMemMap gives it one): counted, watched for out-of-memory, never
				 * a live allocation */

struct api_spec {
	const char *name;	/* the symbol probed (C++ functions: mangled) */
	const char *label;	/* what presenters call it; NULL: its name */
	uint8_t layer;		/* enum api_layer */
	uint8_t op;		/* enum api_op */
	uint16_t flags;		/* API_* */
	uint8_t launch;		/* enum launch_abi, for OP_LAUNCH */
	uint8_t name_src;	/* enum name_src, for OP_KERNEL_NAME */
	/* Argument positions, 1-based; 0 = not used. */
	int8_t arg_out;		/* void **: the allocated pointer / the returned handle */
	int8_t arg_size;	/* bytes (width for 2D) */
	int8_t arg_height;	/* rows, for pitched/2D */
	int8_t arg_pitch_out;	/* size_t *pitch, for cudaMallocPitch */
	int8_t arg_ptr;		/* freed pointer; launched function */
	int8_t arg_dst, arg_src;
	int8_t arg_kind;	/* enum cudaMemcpyKind */
	int8_t fixed_dir;	/* enum copy_dir + 1 when the function fixes it (cuMemcpyHtoD) */
	int8_t arg_name;	/* OP_KERNEL_NAME: the stub, string or handle to take the name from */
	uint8_t elem_size;	/* memsets: bytes per element (cuMemsetD32: 4); 0 means 1 */
	/* Devices and NCCL. Positions count registers as the ABI gives them: a struct passed by
	 * value on the stack (ncclUniqueId, 128 bytes) takes none, so ncclCommInitRank's rank,
	 * its 4th parameter, is register argument 3. */
	int8_t arg_dev;		/* a device number (int); copies: the destination's (Peer) */
	int8_t arg_src_dev;	/* copies: the source's device (Peer), or context (driver Peer) */
	int8_t arg_count;	/* elements */
	int8_t arg_dtype;	/* ncclDataType_t */
	int8_t arg_comm;	/* ncclComm_t */
	int8_t arg_peer;	/* Send/Recv: the peer's rank */
	int8_t arg_rank, arg_nranks;
	uint8_t coll;		/* enum coll_op */
};

int cuda_api_count(void);
const struct api_spec *cuda_api_get(int index);
int cuda_api_find(const char *name);	/* index, or -1 */
const char *cuda_error_name(enum api_layer layer, int code);	/* NULL if not known */
/* Whether a successful return leaves a pointer-sized value at *arg_out that the figures need
 * (an allocation, a kernel handle, a context), which the stubs read at the return. */
bool cuda_api_out_pointer(const struct api_spec *s);
const char *cuda_layer_name(enum api_layer layer);	/* "runtime", "driver", "nccl", "torch" */
/* What presenters call row s: its label, else its name. */
static inline const char *cuda_api_label(const struct api_spec *s)
{
	return s->label ? s->label : s->name;
}
/* Bytes per element of an ncclDataType_t (nccl.h, NCCL 2.x); 0 for a type it does not know. */
unsigned cuda_nccl_type_size(uint64_t datatype);

#endif
