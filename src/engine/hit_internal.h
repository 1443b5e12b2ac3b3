/* hit_internal.h — what hit.c (stops at probes) gives hit_records.c (what the stubs recorded
 * without a stop): counting a return and a launch, the frame of a call, the process's part. */
#ifndef GPUTOP_HIT_INTERNAL_H
#define GPUTOP_HIT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"
#include "cuda_api.h"
#include "launchring.h"
#include "memory.h"
#include "stats.h"

struct thread;
struct frame;

/* What a return says: its value, the call's time, and the out-parameters when a stub already
 * read them (else they are read now, at a trapping return). */
struct ret_info {
	int err;
	uint64_t ns;
	bool outs_read;
	uint64_t out, out2;
	uint64_t end_ns;	/* when it returned (monotonic), where a stub stamped it; 0: now */
	uint64_t retval;	/* the whole return register (rows whose return is a pointer) */
};

/* Whether a traced call of row api in flight can hold a call of row s (NULL: a CUDA row): NCCL
 * calls hold NCCL calls (ncclBcast calling ncclBroadcast), CUDA calls hold CUDA calls (cudart
 * calling the driver). A CUDA call made inside an NCCL call is NCCL's work on the GPU (its
 * buffers, its kernels): it counts, as it did before NCCL was probed. PyTorch's allocator's
 * calls neither hold nor are held by any: each of them counts. */
static inline bool hit_same_scope(int api, const struct api_spec *s)
{
	const struct api_spec *outer = cuda_api_get(api);
	if (!outer || outer->layer == LAYER_TORCH || (s && s->layer == LAYER_TORCH))
		return false;
	return (outer->layer == LAYER_NCCL) == (s && s->layer == LAYER_NCCL);
}

/* A traced call of the thread's frames in flight that can hold a call of row s. */
bool hit_in_frame_of_scope(const struct thread *t, const struct api_spec *s);

/* What an out-parameter points to at the return: as the stub read it, or read now. */
static inline uint64_t hit_out_param(pid_t tid, uint64_t addr, const struct ret_info *ri)
{
	uint64_t v = 0;
	if (ri->outs_read)
		return ri->out;
	if (mem_read(tid, addr, &v, sizeof v) < 0)
		return 0;
	return v;
}

/* Devices, contexts and NCCL communicators (hit_devices.c). The device a thread's work runs
 * on: its current one, else the process's default (0 when gputop started it; -1, not known,
 * when it attached and the thread made none current since). */
int hit_thread_device(const struct thread *t);
/* Where a launch the ring recorded ran (the ring does not record the thread): the one device
 * the process has made current, else the default; -1 when it used several. */
int hit_ring_device(void);
/* A copy's source and destination devices into f->arg[2], f->arg[3] (device + 1; 0: not
 * known), from its peer arguments or the allocations its pointers are in. */
void hit_copy_devices(struct frame *f, const struct api_spec *s, const uint64_t *a);
/* A copy counted on its device, and as P2P when it is a peer copy or its devices differ. */
void hit_count_copy_devices(const struct frame *f, const struct thread *t, const struct api_spec *s, uint64_t bytes);
/* The return of a device, context or NCCL row (op OP_SET_DEVICE, OP_CTX_*, OP_COMM_*,
 * OP_COLLECTIVE) that succeeded. */
void hit_devices_on_return(struct thread *t, const struct api_spec *s, const struct frame *f,
			   const struct ret_info *ri);
/* Rows whose return is read even when the call is part of another traced call: names of
 * kernels, contexts (cudart retains the primary context inside its own calls). */
bool hit_always_read(const struct api_spec *s);

/* A call came back: counted by its API table row (and traced). */
void hit_on_return(struct thread *t, const struct frame *f, const struct ret_info *ri, uint64_t now);
void hit_count_launch(pid_t tid, const struct api_spec *s, int kernel, const uint32_t g[3], const uint32_t b[3],
		      int device);
/* What the frame keeps of a call for its return (decode.h), the launched kernel resolved. */
void hit_fill_frame(struct frame *f, struct thread *t, const struct api_spec *s, const uint64_t *a);


/* CUDA graphs (hit_graphs.c). While a stream captures, launches, copies and memsets are held:
 * at the capture's end those that became nodes of the captured graph are dropped, the others
 * counted. These say whether they held one (else the caller counts it). */
bool graphs_hold_launch(int kernel, const uint32_t g[3], const uint32_t b[3]);
bool graphs_hold_copy(enum copy_dir dir, enum copy_mode mode, uint64_t bytes, uint64_t ns);
bool graphs_hold_memset(uint64_t bytes, uint64_t ns);
/* The return of a capture begin or end, instantiation, update (t stopped there) or graph launch
 * (runtime layer, t may be running): err is what it returned. */
void graphs_on_return(struct thread *t, const struct api_spec *s, const struct frame *f, int err,
		      uint64_t now);
void graphs_free(struct hit_state *st);

struct graph_held;

/* The process's part (tracee->hit). */
#define HIT_MAX_CONTEXTS 64

struct hit_state {
	uint64_t stop_cost;
	int default_dev;
	uint64_t devices_made_current;	/* bit d: the program made device d current */
	struct {
		uint64_t ctx;
		int device;
	} ctx[HIT_MAX_CONTEXTS];	/* contexts learnt, and their devices */
	int n_ctx;
	int recs_in_flight;	/* frames whose return the return stub will record */
	/* The call stub's calls still in flight at the last look (a call made inside one of them
	 * is part of it), rebuilt at every look. */
	struct lr_call in_flight[LR_CALL_RECORDS];
	int n_in_flight;
	/* Captures in progress, and what was held meanwhile (hit_graphs.c). */
	int captures;
	struct graph_held *held;
	size_t n_held, cap_held;
	/* Stacks taken at the call stub's trap, by call record: the record's call is the one
	 * that entered at entry_tsc on that thread (a record is reused: both must match). */
	struct {
		uint64_t entry_tsc, thread;
		uint32_t stack;
	} call_stack[LR_CALL_RECORDS];
	int n_call_stacks;
	/* The thread the last stop found at the entry of a CUDA call of the program's own (not
	 * one a CUDA library makes inside another, nor a kernel registration): 0 if none. */
	pid_t top_entry;
};

/* The stack the call stub's trap took for a recorded call, STACK_NONE if none (forgotten). */
uint32_t hit_take_call_stack(const struct lr_call *c);

#endif
