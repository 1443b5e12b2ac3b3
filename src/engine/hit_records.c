/* hit_records.c — what the stubs recorded in the program without a stop, made into calls
 * (cuda/cuda_call.h) and accounted (account.h): the returns the return stub recorded for calls
 * that stopped at their entry, the calls the call stub recorded whole (entry and return), in
 * the order they returned, and the launches in the ring. Memory reads only; nothing here stops
 * a thread. */
#define _GNU_SOURCE
#include "hit.h"
#include "hit_internal.h"
#include "account.h"
#include "frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"
#include "decode.h"
#include "kernels.h"
#include "launchring.h"
#include "probes.h"
#include "retfast.h"
#include "threads.h"
#include "tracee.h"

/* ---- launches through the ring (launchring.h) ------------------------------------------ */

static void on_ring_record(int api, const uint64_t *w, void *arg)
{
	struct tracee *p = arg;
	struct cuda_call c;
	decode_ring_call(api, w, &c);
	c.pid = p->pid;
	c.counted = true;
	c.tallied = true;	/* the launch stub counted it in place */
	c.device = hit_ring_device(p);
	if (c.op == OP_LAUNCH) {
		c.launch.kernel = kernels_id_of(p, p->pid, c.launch.handle);
		p->hit->launch_records++;
	}
	account_call(p, NULL, &c);
}

static void on_ring_lost(int api, uint64_t n, void *arg)
{
	struct tracee *p = arg;
	const struct api_spec *s = cuda_api_get(api);
	if (s && (s->op == OP_ALLOC || s->op == OP_FREE))
		p->hit->live_records_lost = true;	/* the live table says what they did */
	account_lost(p, api, n);
}

void hit_drain_launches(struct tracee *p)
{
	launchring_drain(p, on_ring_record, on_ring_lost, p);
}

/* ---- returns and calls the stubs recorded ------------------------------------------------ */


struct done {
	struct thread *t;
	uint32_t frame;
	struct ret_record rec;
};

static int by_time(const void *a, const void *b)
{
	const struct done *x = a, *y = b;
	return x->rec.tsc < y->rec.tsc ? -1 : x->rec.tsc > y->rec.tsc;
}

/* Whether a recorded call can hold a call of row s (hit_same_scope). */
static bool record_of_scope(const struct tracee *p, const struct lr_call *c, const struct api_spec *s)
{
	return hit_same_scope(launchring_probe_api(p, (int)c->probe - 1), s);
}

/* A call the call stub recorded inside another recorded call of the same thread and scope: one
 * that began before it and had not returned when it did (still in flight, or returned later). */
static bool inside_recorded_call(const struct tracee *p, const struct lr_call *c, const struct api_spec *s,
				 const struct lr_call *ret, int n_ret)
{
	const struct hit_state *st = p->hit;
	for (int i = 0; i < st->n_in_flight; i++)
		if (st->in_flight[i].thread == c->thread && st->in_flight[i].entry_tsc < c->entry_tsc &&
		    record_of_scope(p, &st->in_flight[i], s))
			return true;
	for (int i = 0; i < n_ret; i++)
		if (&ret[i] != c && ret[i].thread == c->thread && ret[i].entry_tsc < c->entry_tsc &&
		    ret[i].ret_tsc > c->ret_tsc && record_of_scope(p, &ret[i], s))
			return true;
	return false;
}

/* A call the call stub recorded (launchring.h), entry and return, counted like any return.
 * Part of a traced call of the same thread (made from inside a CUDA module while that call was
 * in flight: stopped at its entry, or recorded), it is not: that call counts. Its thread is the
 * one whose thread pointer it recorded (learnt at each thread's first stop). */
static void on_call_record(struct tracee *p, const struct lr_call *c, const struct lr_call *all, int n_all,
			   uint64_t now)
{
	int api = launchring_probe_api(p, (int)c->probe - 1);
	const struct api_spec *s = api >= 0 ? cuda_api_get(api) : NULL;
	struct thread *t = threads_with_pointer(p, c->thread);
	pid_t gone = t ? 0 : threads_gone_with_pointer(p, c->thread);	/* it ended since */
	/* A thread never seen (its device: the default), or one that ended: its own id. */
	struct thread nobody = { .tid = gone ? gone : p->pid, .device = -1 };
	struct thread *who = t ? t : &nobody;
	uint64_t a[DECODE_MAX_ARGS + 1] = { 0 };
	struct cuda_call call;
	for (int i = 0; i < 6; i++)
		a[i + 1] = c->arg[i];
	if (!s)
		return;
	if (!(s->flags & API_RETURN)) {	/* __cudaRegisterFunction: it only names */
		if (s->op == OP_KERNEL_NAME && s->name_src == NAME_REGISTER) {
			hit_call_from_args(p, who, api, a, &call);
			call.source = CALL_RECORDED;
			call.tallied = true;
			account_call(p, who, &call);
		}
		return;
	}
	bool nested = probes_in_scope(p, s, c->ret) &&
		      ((t && hit_in_frame_of_scope(t, s)) || inside_recorded_call(p, c, s, all, n_all));
	hit_call_from_args(p, who, api, a, &call);
	call.source = CALL_RECORDED;
	call.tallied = true;	/* the call stub counted it in place */
	call.counted = !nested;
	call.caller = c->ret;
	call.stack = hit_take_call_stack(p, c);
	if (call.op == OP_LAUNCH) {
		call.launch.kernel = kernels_id_of(p, who->tid, call.launch.handle);
		p->hit->launch_records++;
	}
	uint64_t ticks = c->ret_tsc > c->entry_tsc ? c->ret_tsc - c->entry_tsc : 0;
	struct call_return r = { .retval = c->retval, .ns = retfast_ticks_to_ns(ticks), .outs_read = true,
				 .out = c->out_value, .out2 = c->out2_value, .end_ns = retfast_tsc_to_mono(c->ret_tsc),
				 .start_ns = c->entry_tsc ? retfast_tsc_to_mono(c->entry_tsc) : 0 };
	hit_call_return(p, who, &call, &r, now);
}

static int call_by_time(const void *a, const void *b)
{
	const struct lr_call *x = a, *y = b;
	return x->ret_tsc < y->ret_tsc ? -1 : x->ret_tsc > y->ret_tsc;
}

/* Counts the calls whose returns the stub recorded since the last look, in the order they
 * returned (a free on one thread and the allocation that reuses its address on another must
 * be seen in that order). Frames above a returned one were left (longjmp) and go too. */
static void collect_batch(struct tracee *p, struct done *d, int n, struct lr_call *c, int nc, uint64_t now)
{
	qsort(d, (size_t)n, sizeof *d, by_time);
	qsort(c, (size_t)nc, sizeof *c, call_by_time);
	/* Innermost first within a thread: a later return stamps a later time. The driver calls
	 * the call stub recorded go in among them, by time: one made inside a traced call finds
	 * that call still in flight. */
	int kc = 0;
	for (int k = 0; k < n; k++) {
		while (kc < nc && c[kc].ret_tsc < d[k].rec.tsc)
			on_call_record(p, &c[kc++], c, nc, now);
		struct thread *t = d[k].t;
		if (d[k].frame >= t->depth || t->frames[d[k].frame].rec < 0)
			continue;
		struct frame f = t->frames[d[k].frame];
		/* The program's own time, stamp to stamp: no stop of ours in it. */
		const struct ret_record *rr = &d[k].rec;
		uint64_t ticks = rr->entry_tsc && rr->tsc > rr->entry_tsc ? rr->tsc - rr->entry_tsc : 0;
		struct call_return r = { .retval = rr->retval, .ns = retfast_ticks_to_ns(ticks), .outs_read = true,
					 .out = rr->out_value, .out2 = rr->out2_value,
					 .end_ns = retfast_tsc_to_mono(rr->tsc),
					 .start_ns = rr->entry_tsc ? retfast_tsc_to_mono(rr->entry_tsc) : 0 };
		hit_forget_frames(p, t, d[k].frame);
		hit_call_return(p, t, &f.call, &r, now);
	}
	while (kc < nc)
		on_call_record(p, &c[kc++], c, nc, now);
}

/* Through a thread of the batch whose memory is there: a thread that has exited (the group
 * leader after pthread_exit stays a zombie) has none. */
static int read_batch(const struct tracee *p, struct thread *const *who, const int32_t *idx, int n,
		      struct ret_record *rec)
{
	int err = -ESRCH;
	for (int k = 0; k < n && err; k++)
		if (k == 0 || who[k]->tid != who[k - 1]->tid)
			err = retfast_read(p, who[k]->tid, idx, n, rec);
	/* Threads that ended (their last returns, read at their end): through any other. */
	uint32_t it = 0;
	for (struct thread *t; err && (t = threads_iter(p, &it));)
		err = retfast_read(p, t->tid, idx, n, rec);
	return err;
}

void hit_collect_returns(struct tracee *p, uint64_t now)
{
	enum { BATCH = 64 };
	struct done done[BATCH];
	struct thread *who[BATCH];
	uint32_t frame[BATCH];
	int32_t idx[BATCH];
	struct ret_record rec[BATCH];
	static struct lr_call calls[LR_DONE_CAP];	/* 2 MiB: off the stack */
	int n = 0, nd = 0;

	struct hit_state *st = p->hit;
	if (!retfast_ready(p) || (st->recs_in_flight <= 0 && !launchring_has_calls(p))) {
		st->n_in_flight = 0;
		return;
	}
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(p, &it));) {
		for (uint32_t i = 0; i < t->depth; i++) {
			if (t->frames[i].rec < 0)
				continue;
			who[n] = t;
			frame[n] = i;
			idx[n] = t->frames[i].rec;
			if (++n < BATCH)
				continue;
			/* A full batch: read it, keep what returned, go on. */
			if (read_batch(p, who, idx, n, rec) == 0)
				for (int k = 0; k < n && nd < BATCH; k++)
					if (rec[k].state == RET_DONE)
						done[nd++] = (struct done){ who[k], frame[k], rec[k] };
			n = 0;
		}
	}
	if (n && read_batch(p, who, idx, n, rec) == 0)
		for (int k = 0; k < n && nd < BATCH; k++)
			if (rec[k].state == RET_DONE)
				done[nd++] = (struct done){ who[k], frame[k], rec[k] };
	/* After the returns above: a call made inside one of them returned before it did. */
	int nc = launchring_take_calls(p, calls, st->in_flight, &st->n_in_flight);
	if (nd || nc)
		collect_batch(p, done, nd, calls, nc, now);
}

/* ---- calls in flight (--dump) ----------------------------------------------------------- */

int hit_collectives_in_flight(struct tracee *p)
{
	const struct hit_state *st = p->hit;
	int n = 0;
	for (int i = 0; i < st->n_in_flight; i++) {
		const struct lr_call *r = &st->in_flight[i];
		int api = r->state == LR_CALL_IN_FLIGHT ? launchring_probe_api(p, (int)r->probe - 1) : -1;
		const struct api_spec *s = api >= 0 ? cuda_api_get(api) : NULL;
		n += s && s->op == OP_COLLECTIVE;
	}
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(p, &it));)
		for (uint32_t i = 0; i < t->depth; i++)
			n += t->frames[i].call.op == OP_COLLECTIVE;
	return n;
}

bool hit_record_in_flight(struct tracee *p, struct thread *t, uint64_t thread_pointer, struct cuda_call *c,
			  uint64_t *entry_ns)
{
	const struct hit_state *st = p->hit;
	const struct lr_call *first = NULL;
	for (int i = 0; thread_pointer && i < st->n_in_flight; i++) {
		const struct lr_call *r = &st->in_flight[i];
		/* The outermost: a call made inside it is part of it. */
		if (r->thread == thread_pointer && r->state == LR_CALL_IN_FLIGHT &&
		    launchring_probe_api(p, (int)r->probe - 1) >= 0 && (!first || r->entry_tsc < first->entry_tsc))
			first = r;
	}
	if (!first)
		return false;
	uint64_t a[DECODE_MAX_ARGS + 1] = { 0 };
	for (int i = 0; i < 6; i++)
		a[i + 1] = first->arg[i];
	hit_call_from_args(p, t, launchring_probe_api(p, (int)first->probe - 1), a, c);
	c->source = CALL_RECORDED;
	c->caller = first->ret;
	*entry_ns = retfast_tsc_to_mono(first->entry_tsc);
	return true;
}
