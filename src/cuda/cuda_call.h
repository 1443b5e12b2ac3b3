/* cuda_call.h — one CUDA call as gputop saw it: the one event that everything counting, tracing
 * or learning from calls receives. The common part says which API row, who made it, what it
 * returned and when; a union tagged by the row's op holds what its arguments and out-parameters
 * say, typed. decode_call.c makes it from every source (an int3 at the entry and the return,
 * the call stub's record, the launch ring's record), so that nothing after it reads registers
 * or argument words. The consumers (struct cuda_consumer below, like perf's struct perf_tool)
 * are told of each call in one place, engine/account.c. */
#ifndef GPUTOP_CUDA_CALL_H
#define GPUTOP_CUDA_CALL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>


/* What a call of an API row (cuda_api.h's struct api_spec, its op) does: which member of
 * struct cuda_call's union it fills. A new kind of call is an op here, its member below, its
 * decoding (decode_call.c), its rows (cuda_api.c) and the consumer that uses it. */
enum api_op {
	OP_OTHER,	/* counted and timed only */
	OP_ALLOC,	/* *arg_out = pointer of arg_size bytes, at return */
	OP_FREE,	/* arg_ptr freed, at return if it succeeded */
	OP_LAUNCH,	/* kernel launch; see enum launch_abi */
	OP_COPY,	/* arg_size bytes from arg_src to arg_dst */
	OP_MEMSET,	/* arg_size bytes (times arg_height for 2D) */
	OP_SYNC,	/* time blocked */
	OP_SET_DEVICE,	/* arg 1 is the new current device of the thread */
	OP_KERNEL_NAME,	/* learns a kernel name: *arg_out names arg_name (see enum name_src) */
	/* CUDA graphs (engine/hit_graphs.c): rows with API_STOPS, whose return stops. */
	OP_CAPTURE_BEGIN,	/* a stream starts capturing: its launches and copies are graph nodes */
	OP_CAPTURE_END,		/* *arg_out is the captured graph */
	OP_GRAPH_INSTANTIATE,	/* *arg_out is an executable graph made from graph arg_ptr */
	OP_GRAPH_UPDATE,	/* executable graph arg_out now runs the nodes of graph arg_ptr */
	OP_GRAPH_LAUNCH,	/* executable graph arg_ptr runs once: each of its nodes once */
	OP_GRAPH_EXEC_DESTROY,	/* executable graph arg_ptr is gone (its handle may come back) */
	/* Devices and contexts (the thread's current device, engine/hit_devices.c). */
	OP_CTX_LEARN,		/* *arg_out is a context of device arg_dev */
	OP_CTX_SET,		/* context arg_ptr is the thread's current one */
	OP_CTX_PUSH,		/* context arg_ptr is pushed: current until popped */
	OP_CTX_POP,		/* the context pushed last is popped */
	/* NCCL (libnccl.so.2). */
	OP_COLLECTIVE,		/* coll: arg_count elements of datatype arg_dtype on comm arg_comm
				 * (peer arg_peer for Send/Recv) */
	OP_COMM_INIT,		/* *arg_out is a communicator: rank arg_rank of arg_nranks (InitAll:
				 * arg_out is an array of arg_nranks, ranks 0.., devices arg_dev[]) */
	OP_COMM_QUERY,		/* *arg_out (an int) is the rank (coll COLL_RANK) or the size of
				 * communicator arg_comm */
	/* PyTorch's caching allocator (probe/torch_alloc.c reads the Blocks): argument 1 is the
	 * DeviceCachingAllocator (`this`). */
	OP_TORCH_ALLOC,		/* the return value is the Block handed out for arg_size bytes
				 * requested */
	OP_TORCH_FREE,		/* Block arg_ptr is freed (its bytes no longer allocated) */
};

struct api_spec;

/* Where gputop saw the call. */
enum call_source {
	CALL_STOPPED,	/* an int3 at its entry; its return recorded by the return stub or trapped
			 * at the trampoline, or not probed (returned false: a driver launch) */
	CALL_RECORDED,	/* the call stub recorded it whole, entry and return, without a stop */
	CALL_RING,	/* the launch ring recorded it: a launch, without its thread or return */
};

/* OP_ALLOC: *out = ptr of bytes, at a successful return. */
struct call_alloc {
	uint64_t out;		/* where the allocation's address goes */
	uint64_t pitch_out;	/* cudaMallocPitch's size_t *pitch; 0: none */
	uint64_t requested;	/* the size argument (the width of a pitched allocation) */
	uint64_t height;	/* rows of a pitched allocation; 1 */
	uint8_t kind;		/* enum mem_kind */
	uint64_t ptr;		/* at the return: the allocation (0: none) */
	uint64_t bytes;		/* at the return: its size (pitch * height for a pitched one) */
	const char *caller_module;	/* at the return: the file name of the module that called
					 * it, which the engine finds; NULL: not known */
};

/* OP_FREE. */
struct call_free {
	uint64_t ptr;
};

/* OP_LAUNCH. */
struct call_launch {
	uint64_t handle;	/* the launched function (host stub, CUfunction or CUkernel) */
	int kernel;		/* its kernel id (figures' stats_kernel_id), which the engine finds */
	uint32_t grid[3], block[3];	/* zeros where they could not be read */
};

/* OP_COPY. */
struct call_copy {
	uint64_t bytes;		/* width * height for a 2D copy */
	uint8_t dir;		/* enum copy_dir */
	bool dir_known;		/* dir is its row's or its kind argument's, not the pointers' */
	bool async;
	bool peer;		/* a peer copy (API_PEER): between devices by its arguments */
	bool ctx_args;		/* a peer copy's devices are contexts (cuMemcpyPeer) */
	uint64_t dst, src;	/* the pointers */
	uint64_t dst_arg, src_arg;	/* a peer copy's device (or context) arguments */
	int src_device, dst_device;	/* which the engine finds: -1 where not known */
};

/* OP_MEMSET. */
struct call_memset {
	uint64_t bytes;		/* elements * element size, * height for a 2D memset */
};

/* OP_SET_DEVICE. */
struct call_set_device {
	int device;
};

/* OP_KERNEL_NAME: value gets the name of from (enum name_src). */
struct call_name {
	uint8_t src;		/* enum name_src */
	uint64_t out;		/* where the handle goes (0 for a registration) */
	uint64_t from;		/* the stub, the name string or the handle named already */
	uint64_t value;		/* the handle (at a successful return), or the registered stub */
};

/* OP_CTX_LEARN, OP_CTX_SET, OP_CTX_PUSH, OP_CTX_POP. */
struct call_ctx {
	uint64_t out;		/* LEARN: where the context goes */
	int device;		/* LEARN: the device it is of */
	uint64_t ctx;		/* SET, PUSH: the context; LEARN: the one made (at the return) */
};

/* OP_COLLECTIVE. */
struct call_collective {
	uint8_t coll;		/* enum coll_op */
	uint64_t bytes;		/* count * the datatype's size (decode_nccl_bytes) */
	uint64_t comm;		/* 0: not known (an argument on the stack) */
	int peer;		/* Send/Recv: the peer's rank; -1: none */
};

/* OP_COMM_INIT. */
struct call_comm_init {
	uint64_t out;		/* where the communicator goes (InitAll: an array of nranks) */
	int nranks, rank;	/* -1: not an argument */
	bool all;		/* ncclCommInitAll: nranks communicators, devices from devlist */
	uint64_t devlist;	/* InitAll's int devlist[] (0: devices 0..) */
	uint64_t comm;		/* at a successful return (not InitAll): the communicator */
	/* InitAll, at a successful return: its nranks communicators, rank i on devices[i], which
	 * the engine reads (valid while the call is told); NULL: not read. */
	const uint64_t *comms;
	const int *devices;
};

/* OP_COMM_QUERY: the rank (COLL_RANK) or size (COLL_SIZE) of comm. */
struct call_comm_query {
	uint8_t what;
	uint64_t out;		/* the int it goes to */
	uint64_t comm;
	int value;		/* at a successful return; -1: not read */
};

/* OP_CAPTURE_BEGIN, OP_CAPTURE_END, OP_GRAPH_INSTANTIATE, OP_GRAPH_UPDATE, OP_GRAPH_LAUNCH,
 * OP_GRAPH_EXEC_DESTROY. */
struct call_graph {
	uint64_t out;		/* END: where the graph goes; INSTANTIATE: where the exec goes */
	uint64_t stream;	/* BEGIN, END: the capturing stream */
	uint64_t graph;		/* INSTANTIATE, UPDATE: the graph; END: the captured one (return) */
	uint64_t exec;		/* UPDATE, LAUNCH, DESTROY: the executable graph; INSTANTIATE: the
				 * one made (at the return) */
};

/* OP_TORCH_ALLOC, OP_TORCH_FREE: PyTorch's caching allocator. */
struct call_torch {
	uint64_t allocator;	/* the DeviceCachingAllocator (`this`) */
	uint64_t requested;	/* ALLOC: the size asked for */
	uint64_t block;		/* FREE: the Block freed; ALLOC: the Block handed out (the return) */
};

struct cuda_call {
	const struct api_spec *spec;	/* its row of the API table */
	int16_t api;		/* the row's index */
	uint8_t op;		/* spec->op: which member of the union holds */
	uint8_t source;		/* enum call_source */
	bool counted;		/* a call of the program's own: false for one made inside another
				 * traced call (that one counts) and for a kernel's registration */
	bool returned;		/* its return was seen: result, ns and retval hold */
	bool held;		/* a launch, copy or memset a stream's capture holds: a graph's
				 * node, not work done (the account step asks the consumers) */
	bool tallied;		/* a stub counted it in place (arch/tally.h): its totals come from
				 * the tallies (struct cuda_tally below), not from this event */
	pid_t pid;		/* the process */
	pid_t tid;		/* the thread (the pid where it is not known; 0 for the ring) */
	int device;		/* the GPU its work counts on: the thread's current one, else the
				 * process's default; -1: not known */
	int thread_device;	/* the device the thread itself made current; -1: none */
	int result;		/* its error code: 0 for success, without a return, and for rows
				 * whose return is a value (API_VALUE_RET) */
	uint64_t retval;	/* the whole return register */
	uint64_t ns;		/* its time inside, gputop's stops taken out */
	uint64_t end_ns;	/* when it returned (monotonic), else when gputop saw it */
	uint64_t start_ns;	/* when it was called, stamped as end_ns was; 0: not stamped
				 * (end_ns - ns is the best guess) */
	uint64_t seen_ns;	/* when gputop counted it */
	uint64_t caller;	/* its return address; 0: not known */
	uint32_t stack;		/* its call stack (figures/stacks.h), 0 (STACK_NONE): none */
	union {
		struct call_alloc alloc;
		struct call_free free_;
		struct call_launch launch;
		struct call_copy copy;
		struct call_memset memset_;
		struct call_set_device set_device;
		struct call_name name;
		struct call_ctx ctx;
		struct call_collective coll;
		struct call_comm_init comm_init;
		struct call_comm_query comm_query;
		struct call_graph graph;
		struct call_torch torch;
	};
};

/* Whether the call did its work: it returned success, or was seen without a return. */
static inline bool cuda_call_ok(const struct cuda_call *c)
{
	return c->result == 0;
}

/* Whether the call is of a CUDA graph's life (the ops between OP_CAPTURE_BEGIN and
 * OP_GRAPH_EXEC_DESTROY). */
static inline bool cuda_call_is_graph(const struct cuda_call *c)
{
	return c->op >= OP_CAPTURE_BEGIN && c->op <= OP_GRAPH_EXEC_DESTROY;
}

/* The traced process a call is of (base/tracee.h): a consumer is told it with each call, as
 * strace hands its struct tcb, rather than asking who is current. */
struct tracee;

/* What the calls of a probe of row api added since the last read of the stubs' tallies
 * (arch/tally.h, engine/hit_tallies.c): counters as differences, time in ns. Classes: a copy's
 * kind, an NCCL operation's datatype (cuda/tally_spec.h says what each means for a row). */
#define CUDA_TALLY_CLASSES 16
struct cuda_tally {
	const struct api_spec *spec;
	int16_t api;
	uint64_t calls;		/* every call */
	uint64_t untimed;	/* of them, not timed (no record) */
	uint64_t errors;
	int last_error;
	uint64_t ns;
	uint64_t effects;	/* allocations inserted, frees removed, launches counted */
	uint64_t unmatched;	/* frees of an address not held; keys a full table lost */
	uint64_t class_calls[CUDA_TALLY_CLASSES];	/* successful calls */
	uint64_t class_sum[CUDA_TALLY_CLASSES];		/* bytes, elements */
	uint64_t class_ns[CUDA_TALLY_CLASSES];
};

/* Kernel launches counted in place that left no record (arch/tally.h: the stubs' quiet
 * launches): what their records would have told the consumers. */
struct cuda_quiet {
	uint64_t launches;
	bool dims;			/* grid and block are the last one's (else not known) */
	uint32_t grid[3], block[3];
	int device;			/* where they ran, as a launch record would say */
};

/* Who is told of calls: the figures, devices, call stacks, PyTorch's memory, --trace,
 * --timeline, the CUDA graphs... Registered at start-up (engine/account.h); each says what it
 * wants, NULL for what it does not. Told in the order registered, on the tracer's thread, of
 * calls in the order they returned; p is the process that made them. */
struct cuda_consumer {
	const char *name;
	/* Wants every kernel launch's record (its order and time: --timeline, --trace): while no
	 * consumer does, a launch of a kernel already named leaves none (struct cuda_quiet). */
	bool launch_records;
	/* Whether a capture holds the call (a launch, copy or memset that succeeded): a graph's
	 * node, not work done; c->held tells every consumer then. */
	bool (*hold)(struct tracee *p, const struct cuda_call *c);
	/* A call of the program's own (c->counted), done or failed; never one made inside
	 * another traced call. */
	void (*call)(struct tracee *p, const struct cuda_call *c);
	/* n calls of row api whose records the stubs could not keep (a full ring): their
	 * detail is missing; their totals are in the tallies. */
	void (*lost)(struct tracee *p, int api, uint64_t n);
	/* What a probe's calls added, from the stubs' tallies: what every total comes from
	 * for calls a stub counts (c->tallied), whose events then add only detail. */
	void (*tallied)(struct tracee *p, const struct cuda_tally *t);
	/* n more launches of handle (a kernel, or an executable graph for an OP_GRAPH_LAUNCH
	 * row s), counted in place; kernel: its id in the figures (-1 for a graph). q: of them,
	 * those that left no record (a kernel's, while no consumer wants launch records), with
	 * what their records would have said; NULL if none. */
	void (*launched)(struct tracee *p, const struct api_spec *s, uint64_t handle, int kernel, uint64_t n,
			 const struct cuda_quiet *q);
	/* A call the stubs tallied that is not work after all: made inside another traced call
	 * (c->counted false: all of it comes back out), or a launch, copy or memset a capture
	 * holds (c->held: its work comes back out, the call stays). */
	void (*retract)(struct tracee *p, const struct cuda_call *c);
	/* After each drain of process p's stubs (engine/hit_drain.h: the tracer's tick, a
	 * thread's exit, a library's load, an exec, a detach...): the calls just told are all
	 * there are so far, and what they leave to read from the program can be read now
	 * (PyTorch's Blocks). tallied: the tallies were read in this drain (every drain but the
	 * ticks between two reads, 50 ms apart: what the stubs keep in place is as new as the
	 * records only then). */
	void (*drained)(struct tracee *p, bool tallied);
	/* Process p's image is gone (an exec): what the consumer kept of the old image, which
	 * the new image's calls must not find, goes. */
	void (*gone)(struct tracee *p);
};

#endif
