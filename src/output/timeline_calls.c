/* timeline_calls.c — what a call (cuda/cuda_call.h) puts on the --timeline (timeline.h): its
 * complete event, from its start to its end stamped on one clock where a stub stamped both;
 * a failed call's error; a launch's instant (not one a capture holds: a graph's node) with its
 * kernel, grid, block and device; a copy's move of the bytes copied counter; an allocation's or
 * a free's move of the live bytes counter; after a drain, what compact mode held. The consumer
 * timeline_consumer. */
#include "timeline.h"

#include "clock.h"
#include "stats.h"
#include "tracee.h"

/* Where its start was not stamped (an int3's stops taken out of its time), its end less the
 * time inside. */
static uint64_t call_start(const struct cuda_call *c)
{
	if (c->start_ns)
		return c->start_ns;
	return c->end_ns > c->ns ? c->end_ns - c->ns : 0;
}

static void timeline_on_call(struct tracee *p, const struct cuda_call *c)
{
	if (!timeline_on())
		return;
	const struct api_spec *s = c->spec;
	uint64_t start = c->returned ? call_start(c) : now_ns();	/* a ring launch's time: when the
								 * ring was read */
	if (c->returned) {
		timeline_call(c->pid, c->tid, cuda_api_label(s), start, c->end_ns, c->result,
			      c->result ? cuda_error_name(s->layer, c->result) : NULL);
	}
	if (!cuda_call_ok(c))
		return;
	if (c->op == OP_ALLOC)
		timeline_alloc(c->pid, c->alloc.ptr, c->alloc.bytes, c->device, c->end_ns);
	else if (c->op == OP_FREE)
		timeline_free(c->pid, c->free_.ptr, c->end_ns);
	else if (c->op == OP_COPY && c->copy.dir < DIR_COUNT && !c->held)
		timeline_copy(c->pid, c->copy.dir, copy_dir_name[c->copy.dir], c->copy.bytes,
			      c->returned ? c->end_ns : start);
	else if (c->op == OP_LAUNCH && !c->held)
		timeline_launch(c->pid, c->tid, stats_kernel_name(p->stats_id, c->launch.kernel), start,
				c->launch.grid, c->launch.block, c->thread_device);
}

/* After a drain: compact mode's runs and counters held while the program is quiet go out. */
static void timeline_on_drained(struct tracee *p, bool tallied)
{
	(void)p;
	(void)tallied;
	timeline_tick(now_ns());
}

const struct cuda_consumer timeline_consumer = {
	.name = "--timeline",
	.launch_records = true,
	.call = timeline_on_call,
	.drained = timeline_on_drained,
};
