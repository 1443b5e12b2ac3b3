/* torch_dumps.c — PyTorch's memory written out whole, when asked (torch_dumps.h). */
#define _GNU_SOURCE
#include "torch_dumps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "hit.h"
#include "hit_drain.h"
#include "log.h"
#include "oom_report.h"
#include "torch_alloc.h"
#include "torch_mem.h"
#include "session_state.h"
#include "torch_shot_read.h"
#include "torch_snapshot.h"
#include "tracee.h"

void torch_dumps_take(struct tracee *p, enum torch_shot_why why)
{
	const char *path = why == SHOT_OOM ? config.oom_snapshot : config.memory_snapshot;
	struct torch_shot s;
	if (!path)
		return;
	if (torch_shot_read(p, &s) == -ENODATA) {
		if (why == SHOT_ASKED)
			log_info("%d: no PyTorch caching allocator followed: no memory snapshot", p->pid);
		return;
	}
	s.why_taken = (uint8_t)why;
	if (torch_snapshot_write(path, &s) == 0)
		log_info("%s snapshot of %d's PyTorch memory written to %s: %zu segments, %zu blocks%s%s",
			 why == SHOT_OOM ? "out-of-memory" : "memory", (int)p->pid, path, s.n_segment, s.n_block,
			 s.why[0] ? "; " : "", s.why);
	torch_shot_free(&s);
}

/* An out-of-memory: said at once, its report and snapshot written with the state of the
 * instant: read while the failed call's thread was held at its return (torch_dumps_at_oom:
 * now, or held for PyTorch's allocator until it gave up), else read now (gputop's next look). */
static void on_oom(struct tracee *p, const struct torch_oom *o, struct torch_shot *held, bool have_held)
{
	struct torch_shot s;
	bool have = have_held;
	if (have_held)
		s = *held;
	else
		have = torch_shot_read(p, &s) != -ENODATA;
	struct torch_oom_event e = { .t_ns = o->t_ns, .size = o->size, .page_bytes = o->page_bytes,
				     .device = o->device, .error = o->error,
				     .by_torch = o->by_torch, .stack = o->stack, .stream_is = (uint8_t)o->stream_is,
				     .stream = o->stream };
	snprintf(e.api, sizeof e.api, "%s", o->api ? o->api : "");
	if (have) {
		struct torch_shot_sums sum;
		if (e.device < 0)
			e.device = s.n_device ? s.device[0].device : 0;
		torch_shot_sum(&s, e.device, &sum);
		e.sums_known = true;
		e.reserved = sum.total;
		e.allocated = sum.allocated;
		e.free_in_segments = sum.free;
		e.largest_free = sum.largest_free;
		e.fragmentation = o->size && sum.free >= o->size && sum.largest_free < o->size;
	}
	torch_mem_on_oom(p->pid, &e);
	char line[512];
	oom_report_line(line, sizeof line, o, have ? &s : NULL);
	log_warn("%s", line);
	char *text = NULL;	/* the Memory view frozen at this instant, for the TUI's key O */
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (f) {
		oom_report_print(f, o, have ? &s : NULL);
		if (fclose(f) == 0 && text)
			torch_mem_set_oom_view(p->pid, o->t_ns, text);
	}
	free(text);
	if (config.oom_report && oom_report_write(config.oom_report, o, have ? &s : NULL) == 0)
		log_info("out-of-memory report written to %s", config.oom_report);
	if (have && config.oom_snapshot) {
		s.why_taken = SHOT_OOM;
		if (torch_snapshot_write(config.oom_snapshot, &s) == 0)
			log_info("out-of-memory snapshot written to %s", config.oom_snapshot);
	}
	if (have)
		torch_shot_free(&s);
}

static void torch_dumps_drained(struct tracee *p, bool tallied)
{
	struct torch_oom o;
	struct torch_shot held;
	bool have_held;
	if (torch_take_oom(p, &o, &held, &have_held))
		on_oom(p, &o, &held, have_held);
	/* The Blocks kept in place are read with the tallies: the snapshot waits for them. */
	if (tallied && !p->stopping_world && session_take_memory_snapshot())
		torch_dumps_take(p, SHOT_ASKED);
}

void torch_dumps_at_oom(struct tracee *p, uint64_t sp, uint64_t now, struct hit_keeper *g)
{
	/* The failed call, the blocks handed out and the statistics, as they are now; an
	 * out-of-memory already known (a caller other than PyTorch's allocator) is written in
	 * this drain (torch_dumps_drained), the thread still held. */
	torch_oom_instant(p, true);
	hit_drain(p, now, HIT_DRAIN_WHOLE);
	torch_oom_instant(p, false);
	if (torch_oom_pending(p)) {
		struct torch_shot s;
		torch_oom_read_request(p, sp);
		if (torch_shot_read(p, &s) != -ENODATA)
			torch_oom_hold(p, &s);
	}
	if (g && !g->keep(p, g))
		log_debug("%d: the thread whose allocation failed went on before its state was read whole", (int)p->pid);
}

const struct cuda_consumer torch_dumps_consumer = {
	.name = "PyTorch's memory snapshots",
	.drained = torch_dumps_drained,
};
