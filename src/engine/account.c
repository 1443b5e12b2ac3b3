/* account.c — the one place a CUDA call is delivered (account.h): what the engine learns from
 * it first, then whether a capture holds it, then the figures, the devices, the call stacks,
 * PyTorch's memory, --trace, --timeline and the CUDA graphs, in that order (a graph call's
 * catching up with the stubs' records comes after its own lines), then the thread's current
 * device. No ptrace, no memory of the program: the event says everything. */
#include "account.h"
#include "hit_internal.h"

#include "clock.h"
#include "kernel_names.h"
#include "stacks.h"
#include "stats.h"
#include "timeline.h"
#include "torch_alloc.h"
#include "trace.h"

/* ---- the figures ---------------------------------------------------------------------------- */

static void figures_on_call(const struct cuda_call *c)
{
	stats_on_call(c->api, c->ns, c->returned, c->result);
	if (!cuda_call_ok(c))
		return;
	switch (c->op) {
	case OP_ALLOC:
		if (!c->alloc.ptr)
			break;
		stats_on_alloc(c->api, c->alloc.ptr, c->alloc.bytes, (enum mem_kind)c->alloc.kind, c->device, c->tid,
			       c->seen_ns, c->alloc.caller_module);
		stats_set_alloc_stack(c->alloc.ptr, c->stack);
		break;
	case OP_FREE:
		if (c->free_.ptr)
			stats_on_free(c->free_.ptr);
		break;
	case OP_LAUNCH:
		if (!c->held)
			stats_on_launch(c->launch.kernel, c->launch.grid, c->launch.block);
		break;
	case OP_GRAPH_LAUNCH:	/* the executable graph: each of its nodes runs */
		stats_on_graph_launch(c->graph.exec);
		break;
	case OP_COPY:
		if (!c->held)
			stats_on_copy((enum copy_dir)c->copy.dir, c->copy.async ? COPY_ASYNC : COPY_SYNC, c->copy.bytes,
				      c->ns);
		break;
	case OP_MEMSET:
		if (!c->held)
			stats_on_memset(c->memset_.bytes, c->ns);
		break;
	case OP_SYNC:
		stats_on_sync(c->ns);
		break;
	}
}

static void figures_on_lost(int api, uint64_t n)
{
	const struct api_spec *s = cuda_api_get(api);
	stats_on_lost(api, n);
	if (s->op == OP_GRAPH_LAUNCH)	/* counted as graph launches; which graph is not known */
		for (uint64_t i = 0; i < n; i++)
			stats_on_graph_launch(0);
	if (s->op == OP_LAUNCH) {
		int id = stats_kernel_id("(not recorded: the launch ring was full)");
		for (uint64_t i = 0; i < n; i++)
			stats_on_launch(id, NULL, NULL);
	}
}

/* ---- call stacks ---------------------------------------------------------------------------- */

static void stacks_on_cuda_call(const struct cuda_call *c)
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
		stacks_on_launch(c->stack, stats_kernel_name(c->launch.kernel));
}

/* ---- PyTorch's caching allocator ------------------------------------------------------------ */

static void torch_on_call(const struct cuda_call *c)
{
	if (c->op == OP_TORCH_ALLOC)	/* this, the Block it returned, the size asked for */
		torch_on_block_alloc(c->torch.allocator, c->torch.block, c->torch.requested, c->end_ns, c->stack);
	else if (c->op == OP_TORCH_FREE)	/* this, the Block; when the free began */
		torch_on_block_free(c->torch.allocator, c->torch.block, c->end_ns > c->ns ? c->end_ns - c->ns : 0);
}

/* ---- --trace -------------------------------------------------------------------------------- */

static void trace_on_call(const struct cuda_call *c)
{
	const struct api_spec *s = c->spec;
	if (c->returned && c->op != OP_ALLOC)
		trace_return(c->tid, cuda_api_label(s), c->result, cuda_error_name(s->layer, c->result), c->ns);
	if (!cuda_call_ok(c)) {
		if (c->op == OP_ALLOC)
			trace_error(c->tid, s->name, c->result, cuda_error_name(s->layer, c->result));
		return;
	}
	if (c->op == OP_ALLOC && c->alloc.ptr)
		trace_alloc(c->tid, s->name, c->alloc.ptr, c->alloc.bytes);
	else if (c->op == OP_LAUNCH)	/* held by a capture too */
		trace_launch(c->tid, s->name, c->launch.grid, c->launch.block);
	else if (c->op == OP_GRAPH_LAUNCH && c->source == CALL_STOPPED && !c->returned)
		trace_graph_launch(c->tid, s->name, c->graph.exec);
}

/* ---- --timeline ----------------------------------------------------------------------------- */

/* The call's complete event, with what its arguments say. */
static void timeline_event(const struct cuda_call *c)
{
	const struct api_spec *s = c->spec;
	struct timeline_args a = { .device = c->thread_device, .error = c->result,
				   .error_name = c->result ? cuda_error_name(s->layer, c->result) : NULL };
	if (c->op == OP_ALLOC) {
		a.bytes = c->alloc.requested;
		a.ptr = c->alloc.ptr;
	} else if (c->op == OP_COPY && c->copy.dir < DIR_COUNT) {
		a.bytes = c->copy.bytes;
		a.copy_kind = copy_dir_name[c->copy.dir];
	} else if (c->op == OP_MEMSET) {
		a.bytes = c->memset_.bytes;
	} else if (c->op == OP_FREE) {
		a.ptr = c->free_.ptr;
	} else if (c->op == OP_LAUNCH) {
		a.kernel = stats_kernel_name(c->launch.kernel);
		a.grid = c->launch.grid;
		a.block = c->launch.block;
	}
	timeline_call(c->pid, c->tid, cuda_api_label(s), c->end_ns > c->ns ? c->end_ns - c->ns : 0, c->ns, &a);
}

static void timeline_on_cuda_call(const struct cuda_call *c)
{
	if (!timeline_on())
		return;
	if (c->returned)
		timeline_event(c);
	if (!cuda_call_ok(c))
		return;
	if (c->op == OP_ALLOC)
		timeline_alloc(c->pid, c->alloc.ptr, c->alloc.bytes, c->device, c->end_ns);
	else if (c->op == OP_FREE)
		timeline_free(c->pid, c->free_.ptr, c->end_ns);
	else if (c->op == OP_LAUNCH && !c->held)	/* a ring launch's time: when the ring was read */
		timeline_launch(c->pid, c->tid, stats_kernel_name(c->launch.kernel), now_ns(), c->launch.grid,
				c->launch.block);
}

/* ---- delivery ------------------------------------------------------------------------------- */

void account_call(struct thread *t, struct cuda_call *c)
{
	/* What the engine learns from every call whose return it reads, part of another or not. */
	if (cuda_call_ok(c) && c->op == OP_KERNEL_NAME)
		kernel_names_learn(t, c);
	else if (cuda_call_ok(c) && c->op == OP_CTX_LEARN)
		hit_devices_learn(c);
	if (!c->counted)
		return;
	c->held = cuda_call_ok(c) && graphs_hold(c);
	figures_on_call(c);
	hit_devices_on_call(c);
	stacks_on_cuda_call(c);
	torch_on_call(c);
	trace_on_call(c);
	timeline_on_cuda_call(c);
	graphs_on_call(c);
	if (t && cuda_call_ok(c))
		hit_devices_follow(t, c);
}

void account_lost(int api, uint64_t n)
{
	figures_on_lost(api, n);
}
