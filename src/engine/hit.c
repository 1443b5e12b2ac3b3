/* hit.c — a stop at a probe: the call's event (cuda/cuda_call.h) made from its arguments by its
 * API table row, its return caught by the return stub or the trampoline, the event completed
 * there and accounted (account.h). Each operation is counted once: a call made from inside a
 * CUDA module while another traced call of the same thread is in flight (a driver call made by
 * the runtime) only goes through its slot, except calls that name kernels, which are always
 * read. No ptrace here beyond memory reads and writes. */
#define _GNU_SOURCE
#include "hit.h"
#include "hit_tallies.h"
#include "hit_internal.h"
#include "account.h"
#include "frame.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakpoints.h"
#include "clock.h"
#include "config.h"
#include "cuda_api.h"
#include "decode.h"
#include "kernel_names.h"
#include "kernels.h"
#include "launchring.h"
#include "log.h"
#include "memory.h"
#include "probes.h"
#include "rescue.h"
#include "stack_capture.h"
#include "stacks.h"
#include "retfast.h"
#include "stats.h"
#include "symbols.h"
#include "threads.h"
#include "tracee.h"
#include "xol.h"

/* The process's part (p->hit, struct hit_state in hit_internal.h). The static buffers in
 * the functions below are scratch, static only to keep them off the stack. */
struct hit_state *hit_state_new(void)
{
	struct hit_state *st = calloc(1, sizeof *st);
	if (st)
		st->default_dev = -1;
	return st;
}

void hit_state_free(struct hit_state *st)
{
	if (st)
		graphs_free(st);
	free(st);
}

void hit_init(struct tracee *p, uint64_t stop_cost_ns, int default_device)
{
	struct hit_state *st = p->hit;
	st->stop_cost = stop_cost_ns;
	st->default_dev = default_device;
}

/* What decode reads through (its ctx): a thread's memory, the process's allocations. */
struct reader {
	const struct tracee *p;
	pid_t tid;
};

static int read_mem(void *ctx, uint64_t addr, void *buf, size_t n)
{
	const struct reader *rd = ctx;
	return mem_read(rd->tid, addr, buf, n);
}

static int load_args(struct tracee *p, pid_t tid, const struct api_spec *s, const arch_regs_t *r,
		     uint64_t a[DECODE_MAX_ARGS + 1], uint64_t *ret)
{
	struct reader rd = { p, tid };
	return decode_args(s, r, read_mem, &rd, a, ret);
}

/* Whether addr is in a live device allocation of the reader's process (decode's question). */
static bool is_device_ptr(void *ctx, uint64_t addr)
{
	const struct reader *rd = ctx;
	return stats_is_device_ptr(rd->p->stats_id, addr);
}

void hit_call_from_args(struct tracee *p, struct thread *t, int api, const uint64_t *a, struct cuda_call *c)
{
	struct reader rd = { p, t->tid };
	decode_call(api, a, read_mem, &rd, is_device_ptr, c);
	c->pid = p->pid;
	c->tid = t->tid;
	if (c->op == OP_COPY)
		hit_copy_devices(p, &c->copy);
}

void hit_call_return(struct tracee *p, struct thread *t, struct cuda_call *c, const struct call_return *r,
		     uint64_t now)
{
	struct reader rd = { p, t->tid };
	decode_call_return(c, r, now, read_mem, &rd);
	c->device = hit_thread_device(p, t);
	c->thread_device = t->device;
	if (c->op == OP_ALLOC) {	/* a failed one too: whose it was (torch_alloc.c) */
		const struct module *caller = sym_module_at(p, c->caller);
		c->alloc.caller_module = caller ? caller->base : NULL;
	}
	/* Module loading that returned a handle known already names it anew at once
	 * (kernel_names.c): the launches the stubs counted so far go under the name it had. */
	if (c->op == OP_KERNEL_NAME && c->name.src == NAME_FROM_STRING && c->source != CALL_RECORDED &&
	    cuda_call_ok(c) && c->name.value && kernels_seen(p, c->name.value))
		hit_read_launches_of(p, c->name.value);
	hit_comms_read(c);
	account_call(p, t, c);
	hit_comms_free(c);
}

/* Calls probed at entry only: driver launches of kernels and graphs (one stop each, where the
 * launch ring cannot take them) and kernel registration, which only names. */
/* tallied: a launch stub's park, which counted the launch in place (arch/tally.h); counted
 * false: made inside another traced call, which counts (its tallies come back out). */
static void entry_only(struct tracee *p, struct thread *t, int api, const arch_regs_t *r, const uint64_t *a,
		       bool sampled, bool tallied, bool counted, struct hit_keeper *g)
{
	struct cuda_call c;
	hit_call_from_args(p, t, api, a, &c);
	if (c.op != OP_LAUNCH && c.op != OP_GRAPH_LAUNCH && !(c.op == OP_KERNEL_NAME && c.name.src == NAME_REGISTER))
		return;
	c.counted = counted && c.op != OP_KERNEL_NAME;
	c.tallied = tallied;
	c.device = hit_thread_device(p, t);
	c.thread_device = t->device;
	if (c.op == OP_LAUNCH) {
		int kernel = c.launch.kernel = kernel_names_id(p, t, c.launch.handle);
		if (counted && kernel >= 0 &&
		    ((sampled && config.stack_depth > 0) || stack_capture_launch_due(p, kernel, now_ns())))
			c.stack = stack_capture_launch(p, t, r);
	}
	if (g && !g->keep(p, g))
		return;	/* the thread went on: it records the launch itself */
	account_call(p, t, &c);
}

/* A new frame on t's shadow stack (frame.h). */
struct frame *frame_push(struct thread *t)
{
	if (t->depth == t->cap) {
		uint32_t ncap = t->cap ? t->cap * 2 : 8;
		struct frame *f = realloc(t->frames, ncap * sizeof *f);
		if (!f)
			return NULL;
		t->frames = f;
		t->cap = ncap;
	}
	struct frame *f = &t->frames[t->depth++];
	memset(f, 0, sizeof *f);
	return f;
}

bool hit_take_top_entry(struct tracee *p, const struct thread *t)
{
	struct hit_state *st = p->hit;
	bool top = st->top_entry == t->tid;
	st->top_entry = 0;
	return top;
}

void hit_reset(struct tracee *p)
{
	struct hit_state *st = p->hit;
	st->recs_in_flight = 0;
}

void hit_forget_frames(struct tracee *p, struct thread *t, uint32_t from)
{
	struct hit_state *st = p->hit;
	for (uint32_t k = from; k < t->depth; k++) {
		rescue_frame_done(p->rescue_slot, t->frames[k].rescue);
		if (t->frames[k].rec >= 0) {
			retfast_free(p, t->tid, &t->frames[k].rec, 1);
			t->frames[k].rec = -1;
			st->recs_in_flight--;
		}
	}
	if (from < t->depth)
		t->depth = from;
}

/* Calls left by longjmp (or an exception, or a thread's cancellation unwinding through
 * them) never come back through the trampoline: their frames are dead once their return
 * slot no longer holds the trampoline's address, which a live call's slot always does. */
static void drop_dead_frames(struct tracee *p, struct thread *t)
{
	uint64_t cur;
	while (t->depth) {
		struct frame *f = &t->frames[t->depth - 1];
		if (mem_read(t->tid, f->ret_slot, &cur, sizeof cur) == 0 && cur == f->swapped)
			return;
		hit_forget_frames(p, t, t->depth - 1);
	}
}

/* Whether a thread (by its thread pointer) is inside a call the call stub recorded that had not
 * returned at the last look (hit_records.c keeps in_flight), of s's scope (hit_same_scope). */
static bool in_recorded_call(const struct tracee *p, uint64_t thread_pointer, const struct api_spec *s)
{
	const struct hit_state *st = p->hit;
	for (int i = 0; thread_pointer && i < st->n_in_flight; i++)
		if (st->in_flight[i].thread == thread_pointer &&
		    hit_same_scope(launchring_probe_api(p, (int)st->in_flight[i].probe - 1), s))
			return true;
	return false;
}

bool hit_in_frame_of_scope(const struct thread *t, const struct api_spec *s)
{
	for (uint32_t k = 0; k < t->depth; k++)
		if (hit_same_scope(t->frames[k].call.api, s))
			return true;
	return false;
}

/* Part of a traced call in flight, not a call of the program's own: a call made from inside
 * a CUDA module (cudart calling the driver; for an NCCL row, NCCL calling itself) while the
 * thread is in a traced call, stopped at or recorded by the call stub. A CUDA call made by a
 * signal handler or a callback of the program's is its own, and counts. s: the row (NULL: a
 * CUDA one). */
static bool is_nested(struct tracee *p, struct thread *t, const arch_regs_t *r, const struct api_spec *s)
{
	if (t->depth)
		drop_dead_frames(p, t);
	if (!hit_in_frame_of_scope(t, s) && !in_recorded_call(p, t->thread_pointer, s))
		return false;
	uint64_t caller = 0;
	return mem_read(t->tid, arch_return_slot(r), &caller, sizeof caller) == 0 && probes_in_scope(p, s, caller);
}

/* Swaps the call's return address: for the return stub where it can record this call's
 * return (its out-parameters are plain pointers it copies; a name string is read here, at a
 * return that traps, while the caller's buffer surely lives), else for the trampoline. */
static int swap_return(struct tracee *p, struct thread *t, struct frame *f, const struct api_spec *s,
		       const struct bp *b, arch_regs_t *r)
{
	struct hit_state *st = p->hit;
	if (retfast_records_return(p, s)) {
		uint64_t out, out2;
		decode_call_outs(&f->call, &out, &out2);
		f->rec = retfast_begin(p, t->tid, arch_sp_after_return(f->entry_sp), f->ret_addr, out, out2,
				       f->ret_slot, b->slot);
		if (f->rec >= 0) {
			st->recs_in_flight++;
			f->swapped = retfast_stub(p);
			/* It resumes through the entry stamp, which then runs the slot. */
			arch_set_scratch(r, retfast_record_addr(p, f->rec));
			arch_set_pc(r, retfast_entry_stamp(p));
			return 0;	/* the stub works without gputop: nothing to rescue */
		}
	}
	f->swapped = xol_trampoline(p);
	/* Before the swap: a crash must find it. */
	f->rescue = rescue_frame(p->rescue_slot, f->ret_slot, f->ret_addr);
	if (mem_write(t->tid, f->ret_slot, &f->swapped, sizeof f->swapped) < 0) {
		rescue_frame_done(p->rescue_slot, f->rescue);
		return -1;
	}
	return 0;
}

/* ---- launches through the ring (launchring.h) ------------------------------------------ */

/* The function whose jump probe has ring index probe (0 if none): where a stack taken at the
 * stub's park starts, as if the thread stood at the function's entry. */
static uint64_t ring_probe_function(const struct tracee *p, int probe)
{
	uint32_t it = 0;
	for (struct bp *b; (b = bp_iter(p, &it));)
		if (b->ring == probe)
			return b->addr;
	return 0;
}

bool hit_launch_named(struct tracee *p, const arch_regs_t *r, bool ex)
{
	uint64_t handle = 0, where;	/* the launch stub keeps the argument registers */
	return arch_arg(r, ex ? 2 : 1, &handle, &where) == 1 && handle && kernels_named(p, handle);
}

/* The stub parked the thread (engine/park.c): the first launch of a function handle. r holds
 * the registers as at the park's call, some of the call's saved on its stack
 * (arch_launch_trap_entry rebuilds its entry): the call is counted from that view of its entry,
 * the kernel named (asking the driver if need be), and the handle marked seen. */
void hit_launch_trap(struct tracee *p, struct thread *t, const arch_regs_t *r, bool ex, struct hit_keeper *g)
{
	int probe = (int)(uint32_t)arch_scratch(r);
	int api = launchring_probe_api(p, probe);
	const struct api_spec *s = api >= 0 ? cuda_api_get(api) : NULL;
	uint64_t saved[ARCH_LAUNCH_TRAP_SAVED], a[DECODE_MAX_ARGS + 1] = { 0 };
	arch_regs_t entry;
	if (!s || mem_read(t->tid, arch_sp(r), saved, sizeof saved) < 0)
		return;
	arch_launch_trap_entry(r, saved, &entry);
	uint64_t function = ring_probe_function(p, probe);
	if (function)
		arch_set_pc(&entry, function);
	if (load_args(p, t->tid, s, &entry, a, NULL) < 0)
		return;
	uint64_t handle = 0, where;
	arch_arg(&entry, ex ? 2 : 1, &handle, &where);	/* the launched function */
	/* With --stacks launches, a trap of a handle already named is a sample it asked for. (Not
	 * otherwise: after an attach, handles named from the program's data trap once each too.) */
	bool sampled = (config.stacks & CONFIG_STACKS_LAUNCHES) && kernels_seen(p, handle);
	bool top = !t->guest && !is_nested(p, t, &entry, s);
	/* The launches the stub counted so far (it counts this one after the park) go under the
	 * name the handle had, before it is named anew here. A launch inside another traced call
	 * (the driver's, inside the runtime's launch that loaded the driver) is named all the same,
	 * so that its later launches are; that call counts it, and its tally comes back out. */
	hit_read_launches_of(p, handle);
	if (!t->guest)
		entry_only(p, t, api, &entry, a, sampled, true, top, g);
	p->hit->top_entry = top && !g ? t->tid : 0;	/* --gpu-time loads at a stop only */
	launchring_seen(p, handle);
	if (s->op == OP_LAUNCH)	/* sampled launch sites: kernels only, not executable graphs */
		stack_capture_note_handle(p, handle);
}

void hit_call_trap(struct tracee *p, struct thread *t, const arch_regs_t *r, int index, struct hit_keeper *g)
{
	struct hit_state *st = p->hit;
	int probe = (int)(uint32_t)arch_scratch(r);
	uint64_t saved[ARCH_LAUNCH_TRAP_SAVED], record = arch_call_trap_record(r), function = ring_probe_function(p, probe);
	struct lr_call c;
	arch_regs_t entry;
	if (index < 0 || !function || t->guest || mem_read(t->tid, arch_sp(r), saved, sizeof saved) < 0 ||
	    mem_read(t->tid, record, &c, sizeof c) < 0)
		return;
	arch_launch_trap_entry(r, saved, &entry);
	arch_set_pc(&entry, function);
	int api = launchring_probe_api(p, probe);
	if (is_nested(p, t, &entry, api >= 0 ? cuda_api_get(api) : NULL))
		return;	/* part of a traced call: that one counts, and has its stack */
	uint64_t t0 = now_ns();
	uint32_t stack = stack_capture(p, t, &entry);
	if (stack == STACK_NONE || (g && !g->keep(p, g))) {
		/* GPUTOP_DEBUG: why a call --stacks wants has none (the thread left the park, or
		 * nothing unwound) */
		log_debug("%d: a parked call's stack %s after %.1f ms", t->tid,
			  stack == STACK_NONE ? "did not unwind" : "was dropped (the park was left)", (double)(now_ns() - t0) / 1e6);
		return;
	}
	if (!st->call_stack[index].entry_tsc)
		st->n_call_stacks++;
	st->call_stack[index].entry_tsc = c.entry_tsc;
	st->call_stack[index].thread = c.thread;
	st->call_stack[index].stack = stack;
}

uint32_t hit_take_call_stack(struct tracee *p, const struct lr_call *c)
{
	struct hit_state *st = p->hit;
	for (int i = 0; st->n_call_stacks && i < LR_CALL_RECORDS; i++) {
		if (!st->call_stack[i].entry_tsc || st->call_stack[i].entry_tsc != c->entry_tsc ||
		    st->call_stack[i].thread != c->thread)
			continue;
		st->call_stack[i].entry_tsc = 0;
		st->n_call_stacks--;
		return st->call_stack[i].stack;
	}
	return STACK_NONE;
}

void hit_entry(struct tracee *p, struct thread *t, const struct bp *b, arch_regs_t *r, struct frame **timed)
{
	const struct api_spec *s = cuda_api_get(b->api);
	uint64_t a[DECODE_MAX_ARGS + 1] = { 0 }, ret = 0;
	bool nested = is_nested(p, t, r, s);
	arch_regs_t at_entry = *r;	/* where a stack is unwound from: the function's entry */

	*timed = NULL;
	arch_set_pc(&at_entry, b->addr);
	arch_set_pc(r, b->slot);
	p->hit->top_entry = !t->guest && !nested && s->op != OP_KERNEL_NAME ? t->tid : 0;
	if (t->guest || (nested && !hit_always_read(s)))
		return;
	bool with_return = s->flags & API_RETURN;
	if (load_args(p, t->tid, s, r, a, with_return ? &ret : NULL) < 0)
		return;	/* unreadable stack: let the call go untraced rather than guess */
	if (!with_return) {
		entry_only(p, t, b->api, &at_entry, a, false, false, true, NULL);
		return;
	}
	uint64_t slot = arch_return_slot(r);
	struct frame *f = frame_push(t);
	if (!f)
		return;
	f->ret_addr = ret;
	f->ret_slot = slot;
	f->entry_sp = arch_sp(r);
	f->rescue = f->rec = -1;
	struct cuda_call *c = &f->call;
	hit_call_from_args(p, t, b->api, a, c);
	c->counted = !nested;
	c->caller = ret;
	if (c->op == OP_LAUNCH)
		c->launch.kernel = kernels_id_of(p, t->tid, c->launch.handle);
	if (c->counted && c->op == OP_LAUNCH && stack_capture_launch_due(p, c->launch.kernel, now_ns()))
		c->stack = stack_capture_launch(p, t, &at_entry);
	else if (c->counted && probes_stops_for_stack(s))
		c->stack = stack_capture(p, t, &at_entry);
	if (swap_return(p, t, f, s, b, r) < 0) {
		t->depth--;
		return;
	}
	*timed = f;
}

/* The frame this return belongs to: the innermost one whose stack pointer matches. Frames
 * above it belong to calls left by longjmp or an exception and never come back. */
static int find_frame(const struct thread *t, uint64_t sp)
{
	for (int i = (int)t->depth - 1; i >= 0; i--)
		if (arch_sp_after_return(t->frames[i].entry_sp) == sp)
			return i;
	return -1;
}

int hit_return(struct tracee *p, struct thread *t, arch_regs_t *r, uint64_t now)
{
	struct hit_state *st = p->hit;
	int i = find_frame(t, arch_sp(r));
	if (i < 0) {
		if (!t->depth) {
			log_error("thread %d returned through the trampoline with no call in flight", t->tid);
			return -1;
		}
		i = (int)t->depth - 1;
		log_debug("thread %d: return at sp %#llx matches no frame; using the innermost", t->tid,
			  (unsigned long long)arch_sp(r));
	}
	struct frame f = t->frames[i];
	hit_forget_frames(p, t, (uint32_t)i);
	arch_set_pc(r, f.ret_addr);

	uint64_t elapsed = now - f.t_entry;
	struct call_return ret = { .retval = arch_retval(r),
				   .ns = elapsed > st->stop_cost ? elapsed - st->stop_cost : 0 };
	hit_call_return(p, t, &f.call, &ret, now);
	return f.call.api;
}

