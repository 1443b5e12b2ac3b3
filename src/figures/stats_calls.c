/* stats_calls.c — what a call (cuda/cuda_call.h) adds to the figures (stats.h) and to the
 * call-stack sites (stacks.h): one consumer each (stats_calls.h). A call a capture holds
 * (c->held) is a graph's node, not work: its call counts, its launch, copy or memset does not. */
#include "stats_calls.h"

#include "stacks.h"
#include "stats.h"
#include "tally_spec.h"
#include "tracee.h"

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
		break;
	case OP_GRAPH_LAUNCH:	/* the executable graph: each of its nodes runs */
		if (!tallied)
			stats_on_graph_launch(proc, c->graph.exec);
		break;
	case OP_COPY:
		if (!c->held && !cuda_tally_copy_in_place(c))
			stats_on_copy(proc, (enum copy_dir)c->copy.dir, c->copy.async ? COPY_ASYNC : COPY_SYNC,
				      c->copy.bytes, c->ns);
		break;
	case OP_MEMSET:
		if (!c->held && !tallied)
			stats_on_memset(proc, c->memset_.bytes, c->ns);
		break;
	case OP_SYNC:
		if (!tallied)
			stats_on_sync(proc, c->ns);
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

static void stats_on_launched(struct tracee *p, const struct api_spec *s, uint64_t handle, int kernel, uint64_t n)
{
	if (s->op == OP_GRAPH_LAUNCH)
		stats_on_graph_launches(p->stats_id, handle, n);
	else
		stats_add_launches(p->stats_id, kernel, (int64_t)n);
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
		if (all)
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
