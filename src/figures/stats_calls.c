/* stats_calls.c — what a call (cuda/cuda_call.h) adds to the figures (stats.h) and to the
 * call-stack sites (stacks.h): one consumer each (stats_calls.h). A call a capture holds
 * (c->held) is a graph's node, not work: its call counts, its launch, copy or memset does not. */
#include "stats_calls.h"

#include "stacks.h"
#include "stats.h"
#include "tracee.h"

static void stats_on_cuda_call(struct tracee *p, const struct cuda_call *c)
{
	int proc = p->stats_id;
	stats_on_call(proc, c->api, c->ns, c->returned, c->result);
	if (!cuda_call_ok(c))
		return;
	switch (c->op) {
	case OP_ALLOC:
		if (!c->alloc.ptr)
			break;
		stats_on_alloc(proc, c->api, c->alloc.ptr, c->alloc.bytes, (enum mem_kind)c->alloc.kind, c->device,
			       c->tid, c->seen_ns, c->alloc.caller_module);
		stats_set_alloc_stack(proc, c->alloc.ptr, c->stack);
		break;
	case OP_FREE:
		if (c->free_.ptr)
			stats_on_free(proc, c->free_.ptr);
		break;
	case OP_LAUNCH:
		if (!c->held)
			stats_on_launch(proc, c->launch.kernel, c->launch.grid, c->launch.block);
		break;
	case OP_GRAPH_LAUNCH:	/* the executable graph: each of its nodes runs */
		stats_on_graph_launch(proc, c->graph.exec);
		break;
	case OP_COPY:
		if (!c->held)
			stats_on_copy(proc, (enum copy_dir)c->copy.dir, c->copy.async ? COPY_ASYNC : COPY_SYNC,
				      c->copy.bytes, c->ns);
		break;
	case OP_MEMSET:
		if (!c->held)
			stats_on_memset(proc, c->memset_.bytes, c->ns);
		break;
	case OP_SYNC:
		stats_on_sync(proc, c->ns);
		break;
	}
}

static void stats_on_lost_calls(struct tracee *p, int api, uint64_t n)
{
	const struct api_spec *s = cuda_api_get(api);
	int proc = p->stats_id;
	stats_on_lost(proc, api, n);
	if (s->op == OP_GRAPH_LAUNCH)	/* counted as graph launches; which graph is not known */
		for (uint64_t i = 0; i < n; i++)
			stats_on_graph_launch(proc, 0);
	if (s->op == OP_LAUNCH) {
		int id = stats_kernel_id(proc, "(not recorded: the launch ring was full)");
		for (uint64_t i = 0; i < n; i++)
			stats_on_launch(proc, id, NULL, NULL);
	}
}

const struct cuda_consumer stats_consumer = {
	.name = "figures",
	.call = stats_on_cuda_call,
	.lost = stats_on_lost_calls,
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
