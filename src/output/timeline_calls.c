/* timeline_calls.c — what a call (cuda/cuda_call.h) puts on the --timeline (timeline.h): its
 * complete event with what its arguments say, a launch's instant (not one a capture holds: a
 * graph's node), an allocation's or a free's move of the live bytes counter. The consumer
 * timeline_consumer. */
#include "timeline.h"

#include "clock.h"
#include "stats.h"
#include "tracee.h"

/* The call's complete event. Its device is the one its thread made current (none shown where
 * it made none). */
static void call_event(struct tracee *p, const struct cuda_call *c)
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
		a.kernel = stats_kernel_name(p->stats_id, c->launch.kernel);
		a.grid = c->launch.grid;
		a.block = c->launch.block;
	}
	timeline_call(c->pid, c->tid, cuda_api_label(s), c->end_ns > c->ns ? c->end_ns - c->ns : 0, c->ns, &a);
}

static void timeline_on_call(struct tracee *p, const struct cuda_call *c)
{
	if (!timeline_on())
		return;
	if (c->returned)
		call_event(p, c);
	if (!cuda_call_ok(c))
		return;
	if (c->op == OP_ALLOC)
		timeline_alloc(c->pid, c->alloc.ptr, c->alloc.bytes, c->device, c->end_ns);
	else if (c->op == OP_FREE)
		timeline_free(c->pid, c->free_.ptr, c->end_ns);
	else if (c->op == OP_LAUNCH && !c->held)	/* a ring launch's time: when the ring was read */
		timeline_launch(c->pid, c->tid, stats_kernel_name(p->stats_id, c->launch.kernel), now_ns(), c->launch.grid,
				c->launch.block);
}

const struct cuda_consumer timeline_consumer = {
	.name = "--timeline",
	.call = timeline_on_call,
};
