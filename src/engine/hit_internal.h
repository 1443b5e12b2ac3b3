/* hit_internal.h — what the files of a probe hit share: hit.c (stops at probes), hit_records.c
 * (what the stubs recorded without a stop), hit_devices.c (devices, contexts, communicators) and
 * hit_graphs.c (CUDA graphs): a call's event made and completed for a thread, the scope of a
 * call in flight, and the process's part. */
#ifndef GPUTOP_HIT_INTERNAL_H
#define GPUTOP_HIT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"
#include "cuda_api.h"
#include "cuda_call.h"
#include "decode.h"
#include "launchring.h"

struct thread;
struct tracee;

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

/* The event of a call of row api that thread t made, from its arguments a[] (decode_call): the
 * process and thread filled in, a copy's devices found. Not a launch's kernel: each source finds
 * it its own way. */
void hit_call_from_args(struct tracee *p, struct thread *t, int api, const uint64_t *a, struct cuda_call *c);
/* The call c of thread t came back at now: its return decoded (out-parameters read through t
 * where no stub read them), the devices it ran on, and accounted (engine/account.h). */
void hit_call_return(struct tracee *p, struct thread *t, struct cuda_call *c, const struct call_return *r,
		     uint64_t now);

/* Devices, contexts and NCCL communicators (hit_devices.c). The device a thread's work runs
 * on: its current one, else the process's default (0 when gputop started it; -1, not known,
 * when it attached and the thread made none current since). */
int hit_thread_device(const struct tracee *p, const struct thread *t);
/* Where a launch the ring recorded ran (the ring does not record the thread): the one device
 * the process has made current, else the default; -1 when it used several. */
int hit_ring_device(const struct tracee *p);
/* A copy's source and destination devices, from its peer arguments or the allocations its
 * pointers are in (-1: not known). */
void hit_copy_devices(const struct tracee *p, struct call_copy *m);
/* ncclCommInitAll(comms, ndev, devlist) that succeeded: its ndev communicators and their devices
 * (devlist[i], i when devlist is NULL) read into the event at the return (which stops), for the
 * consumers; let go once they were told. Any other call: nothing. */
void hit_comms_read(struct cuda_call *c);
void hit_comms_free(struct cuda_call *c);
/* Rows whose return is read even when the call is part of another traced call: names of
 * kernels, contexts (cudart retains the primary context inside its own calls). */
bool hit_always_read(const struct api_spec *s);
/* What the engine keeps of a call that succeeded (account.c): a context made (OP_CTX_LEARN, read
 * even inside another call), and the thread's current device from now on (OP_SET_DEVICE,
 * OP_CTX_SET, _PUSH, _POP; t may stand in for a thread not known). */
void hit_devices_learn(struct tracee *p, const struct cuda_call *c);
void hit_devices_follow(struct tracee *p, struct thread *t, const struct cuda_call *c);

/* The process's part (p->hit). */
#define HIT_MAX_CONTEXTS 64

struct graph_held;

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
	/* The live allocations against the stubs' table (hit_tallies.c): when they were last made
	 * the same, and whether an allocation's or a free's record was lost since. */
	uint64_t live_synced_ns;
	uint64_t live_sync_took_ns;	/* the last whole read of the live table */
	bool live_records_lost;
	uint64_t tallies_read_ns;	/* the tallies were last read whole */
	uint64_t tally_reads, tally_read_ns, live_syncs, live_sync_ns;	/* what they cost (debug) */
	uint64_t launch_records;	/* kernel launches the stubs recorded, read (debug) */
};

void graphs_free(struct hit_state *st);

/* The stack the call stub's trap took for a recorded call, STACK_NONE if none (forgotten). */
uint32_t hit_take_call_stack(struct tracee *p, const struct lr_call *c);

#endif
