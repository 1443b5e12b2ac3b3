/* stats_calls.c — what a call (cuda/cuda_call.h) adds to the figures (stats.h) and to the
 * call-stack sites (stacks.h): one consumer each (stats_calls.h), the one writer of each. The
 * figures: per API function, per kernel, per copy direction, the live allocations, and what a
 * call says of devices (the work per device, peer copies, collectives, communicators made and
 * asked). A call a capture holds (c->held) is a graph's node, not work: its call counts, its
 * launch, copy or memset does not. */
#include "stats_calls.h"

#include "stacks.h"
#include "stats.h"
#include "tally_spec.h"
#include "tracee.h"

/* A copy counted on its device, and as P2P when it is a peer copy or its devices differ, in
 * process proc's figures. */
static void count_copy_devices(int proc, const struct cuda_call *c)
{
	const struct call_copy *m = &c->copy;
	int src = m->src_device, dst = m->dst_device;
	enum copy_dir dir = (enum copy_dir)m->dir;
	/* The device a copy counts on: the one whose memory it reads (writes, for H2D); where its
	 * pointers do not tell, the calling thread's, which issued it. */
	int on = dir == DIR_H2D ? dst : src;
	if (dir != DIR_H2H)
		stats_on_device(proc, on >= 0 ? on : c->device, DEV_COPY, m->bytes, 0);
	/* P2P: a peer copy between two devices (a side not known is "?"), or a D2D copy between
	 * allocations gputop saw made on two devices. */
	if (m->peer ? !(src >= 0 && src == dst) : (dir == DIR_D2D && src >= 0 && dst >= 0 && src != dst))
		stats_on_p2p(proc, src, dst, m->bytes);
}

static void on_comm_init(int proc, const struct cuda_call *c)
{
	const struct call_comm_init *m = &c->comm_init;
	if (m->all) {	/* ncclCommInitAll: rank i on devices[i], where the engine read them */
		for (int i = 0; m->comms && i < m->nranks; i++)
			stats_comm_learn(proc, m->comms[i], i, m->nranks, m->devices[i], false);
		return;
	}
	/* NCCL makes a communicator on the calling thread's current device. */
	stats_comm_learn(proc, m->comm, m->rank, m->nranks, c->device, true);
}

static void on_comm_query(int proc, const struct cuda_call *c)
{
	int v = c->comm_query.value;
	if (v < 0)
		return;
	if (c->comm_query.what == COLL_RANK)
		stats_comm_learn(proc, c->comm_query.comm, v, -1, -1, true);
	else
		stats_comm_learn(proc, c->comm_query.comm, -1, v, -1, true);
}

/* A call's event adds every figure, but where a stub counted the call in place
 * (c->tallied): its totals then come from the tallies (stats_on_tallied), and the event adds
 * only what needs it: the live allocation, a launch's dimensions, a copy whose direction the
 * pointers tell. */
static void stats_on_cuda_call(struct tracee *p, const struct cuda_call *c)
{
	int proc = p->stats_id;
	bool tallied = c->tallied;
	if (!tallied)
		stats_on_call(proc, c->api, c->ns, c->returned, c->result);
	if (!cuda_call_ok(c))
		return;
	switch (c->op) {
	case OP_ALLOC:
		if (!c->alloc.ptr)
			break;
		(tallied ? stats_note_alloc : stats_on_alloc)(proc, c->api, c->alloc.ptr, c->alloc.bytes,
							      (enum mem_kind)c->alloc.kind, c->device, c->tid,
							      c->seen_ns, c->alloc.caller_module);
		stats_set_alloc_stack(proc, c->alloc.ptr, c->stack);
		if (c->alloc.kind != MEM_HOST)
			stats_on_device(proc, c->device, DEV_ALLOC, c->alloc.bytes, 0);
		break;
	case OP_FREE:
		if (c->free_.ptr)
			(tallied ? stats_note_free : stats_on_free)(proc, c->free_.ptr);
		break;
	case OP_LAUNCH:
		if (c->held)
			break;
		if (tallied)
			stats_set_launch_dims(proc, c->launch.kernel, c->launch.grid, c->launch.block);
		else
			stats_on_launch(proc, c->launch.kernel, c->launch.grid, c->launch.block);
		stats_on_device(proc, c->device, DEV_LAUNCH, 0, 0);
		break;
	case OP_GRAPH_LAUNCH:	/* the executable graph: each of its nodes runs */
		if (!tallied)
			stats_on_graph_launch(proc, c->graph.exec);
		break;
	case OP_COPY:
		if (c->held)
			break;
		if (!cuda_tally_copy_in_place(c))
			stats_on_copy(proc, (enum copy_dir)c->copy.dir, c->copy.async ? COPY_ASYNC : COPY_SYNC,
				      c->copy.bytes, c->ns);
		count_copy_devices(proc, c);
		break;
	case OP_MEMSET:
		if (!c->held && !tallied)
			stats_on_memset(proc, c->memset_.bytes, c->ns);
		break;
	case OP_SYNC:
		if (!tallied)
			stats_on_sync(proc, c->ns);
		stats_on_device(proc, c->device, DEV_SYNC, 0, c->ns);
		break;
	case OP_COLLECTIVE:
		if (tallied)	/* its calls, bytes and time: the tallies' */
			stats_note_collective(proc, (enum coll_op)c->coll.coll, c->coll.bytes, c->coll.comm,
					      c->coll.peer, c->device);
		else
			stats_on_collective(proc, (enum coll_op)c->coll.coll, c->coll.bytes, c->ns, c->coll.comm,
					    c->coll.peer, c->device);
		break;
	case OP_COMM_INIT:
		on_comm_init(proc, c);
		break;
	case OP_COMM_QUERY:
		on_comm_query(proc, c);
		break;
	}
}

/* Detail the full ring dropped: counted as lost (the totals are in the tallies). */
static void stats_on_lost_calls(struct tracee *p, int api, uint64_t n)
{
	stats_on_lost(p->stats_id, api, n);
}

/* What a probe's calls added, from the stubs' tallies. */
static void stats_on_tallied(struct tracee *p, const struct cuda_tally *t)
{
	const struct api_spec *s = t->spec;
	int proc = p->stats_id;
	uint64_t ok = 0, sum = 0, ns = 0;
	if (s->op == OP_KERNEL_NAME && s->name_src == NAME_REGISTER)
		return;	/* a registration is no call of the program's, as its event is not */
	stats_add_call(proc, t->api, (int64_t)t->calls, (int64_t)t->errors, (int64_t)t->ns, t->last_error,
		       s->flags & API_RETURN);
	for (int k = 0; k < CUDA_TALLY_CLASSES; k++) {
		ok += t->class_calls[k];
		sum += t->class_sum[k];
		ns += t->class_ns[k];
	}
	enum copy_dir dir;
	switch (s->op) {
	case OP_ALLOC:
		if (!(s->flags & API_PAGES))	/* a handle, no allocation of an address */
			stats_add_allocs(proc, (int64_t)ok, 0);
		break;
	case OP_FREE:
		stats_add_allocs(proc, 0, (int64_t)t->effects);	/* frees of an allocation held */
		break;
	case OP_COPY:
		for (unsigned k = 0; k < CUDA_TALLY_CLASSES; k++)
			if (t->class_calls[k] && cuda_tally_copy_dir(s, k, &dir))
				stats_add_copy(proc, dir, s->flags & API_ASYNC ? COPY_ASYNC : COPY_SYNC,
					       (int64_t)t->class_calls[k], (int64_t)t->class_sum[k],
					       (int64_t)t->class_ns[k]);
		break;
	case OP_MEMSET:
		stats_add_memset(proc, (int64_t)ok, (int64_t)cuda_tally_bytes(s, sum), (int64_t)ns);
		break;
	case OP_SYNC:
		stats_add_sync(proc, (int64_t)ok, (int64_t)ns);
		break;
	case OP_COLLECTIVE:	/* elements by datatype */
		for (unsigned k = 0; k < CUDA_TALLY_CLASSES; k++)
			if (t->class_calls[k])
				stats_add_coll(proc, (enum coll_op)s->coll, (int64_t)t->class_calls[k],
					       (int64_t)(t->class_sum[k] * cuda_nccl_type_size(k)),
					       (int64_t)t->class_ns[k]);
		break;
	}
}

/* A handle's launches from the tallies; those that left no record bring what it would have
 * added (stats_on_cuda_call): the last dimensions, the launches on their device. */
static void stats_on_launched(struct tracee *p, const struct api_spec *s, uint64_t handle, int kernel, uint64_t n,
			      const struct cuda_quiet *q)
{
	int proc = p->stats_id;
	if (s->op == OP_GRAPH_LAUNCH) {
		stats_on_graph_launches(proc, handle, n);
		return;
	}
	stats_add_launches(proc, kernel, (int64_t)n);
	if (q && q->dims)
		stats_set_launch_dims(proc, kernel, q->grid, q->block);
	if (q && q->launches)
		stats_add_device_launches(proc, q->device, q->launches);
}

/* A tallied call that was no work: its share of the tallies comes back out. */
static void stats_on_retract(struct tracee *p, const struct cuda_call *c)
{
	int proc = p->stats_id;
	bool all = !c->counted;	/* part of another call: the call too, not only its work */
	bool ok = cuda_call_ok(c);
	if (all)
		stats_add_call(proc, c->api, -1, ok ? 0 : -1, -(int64_t)c->ns, 0, false);
	if (!ok)
		return;
	switch (c->op) {
	case OP_LAUNCH:
		stats_add_launches(proc, c->launch.kernel, -1);
		break;
	case OP_COPY:
		if (cuda_tally_copy_in_place(c))
			stats_add_copy(proc, (enum copy_dir)c->copy.dir, c->copy.async ? COPY_ASYNC : COPY_SYNC, -1,
				       -(int64_t)c->copy.bytes, -(int64_t)c->ns);
		break;
	case OP_MEMSET:
		stats_add_memset(proc, -1, -(int64_t)c->memset_.bytes, -(int64_t)c->ns);
		break;
	case OP_SYNC:
		if (all)
			stats_add_sync(proc, -1, -(int64_t)c->ns);
		break;
	case OP_ALLOC:
		if (all && !(c->spec->flags & API_PAGES))
			stats_add_allocs(proc, -1, 0);
		break;
	case OP_COLLECTIVE:
		if (all)
			stats_add_coll(proc, (enum coll_op)c->coll.coll, -1, -(int64_t)c->coll.bytes, -(int64_t)c->ns);
		break;
	}
}

const struct cuda_consumer stats_consumer = {
	.name = "figures",
	.call = stats_on_cuda_call,
	.lost = stats_on_lost_calls,
	.tallied = stats_on_tallied,
	.launched = stats_on_launched,
	.retract = stats_on_retract,
};

/* A site is counted where the call's stack was taken (at a stop): its time, its error, the bytes
 * it allocated, the kernel it launched (held by a capture or not: the site launched it). */
static void stacks_on_cuda_call(struct tracee *p, const struct cuda_call *c)
{
	if (c->stack == STACK_NONE)
		return;
	if (c->returned)
		stacks_on_call_time(c->stack, c->ns);
	if (!cuda_call_ok(c)) {
		stacks_on_error(c->stack, c->api, c->result);
		return;
	}
	if (c->op == OP_ALLOC && c->alloc.ptr)
		stacks_on_alloc(c->stack, c->alloc.bytes);
	else if (c->op == OP_LAUNCH)
		stacks_on_launch(c->stack, stats_kernel_name(p->stats_id, c->launch.kernel));
}

const struct cuda_consumer stacks_consumer = {
	.name = "call stacks",
	.call = stacks_on_cuda_call,
};
