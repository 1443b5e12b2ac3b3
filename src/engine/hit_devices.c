/* hit_devices.c — which GPU a call ran on, and NCCL's communicators: a thread's current device
 * followed through cudaSetDevice and the contexts it makes current (cuCtxSetCurrent, push and
 * pop, contexts learnt where they are made), a copy's source and destination devices, and what
 * calls say of devices to the figures: work per device, peer copies, collectives, the
 * communicators made (rank, size, device). Memory reads only. */
#include "hit.h"
#include "hit_internal.h"

#include <stdlib.h>

#include "memory.h"
#include "stats.h"
#include "threads.h"
#include "tracee.h"

int hit_thread_device(const struct tracee *p, const struct thread *t)
{
	return t->device >= 0 ? t->device : p->hit->default_dev;
}

int hit_ring_device(const struct tracee *p)
{
	const struct hit_state *st = p->hit;
	uint64_t m = st->devices_made_current;
	if (!m)
		return st->default_dev;
	return (m & (m - 1)) ? -1 : __builtin_ctzll(m);
}

static void set_device(struct tracee *p, struct thread *t, int device)
{
	struct hit_state *st = p->hit;
	t->device = device;
	if (device >= 0 && device < 64)
		st->devices_made_current |= 1ull << device;
}

static int ctx_device(const struct tracee *p, uint64_t ctx)
{
	const struct hit_state *st = p->hit;
	for (int i = 0; ctx && i < st->n_ctx; i++)
		if (st->ctx[i].ctx == ctx)
			return st->ctx[i].device;
	return -1;
}

static void ctx_learn(struct tracee *p, uint64_t ctx, int device)
{
	struct hit_state *st = p->hit;
	int i = 0;
	if (!ctx || device < 0)
		return;
	while (i < st->n_ctx && st->ctx[i].ctx != ctx)
		i++;
	if (i == st->n_ctx) {
		if (st->n_ctx == HIT_MAX_CONTEXTS)
			i = st->n_ctx - 1;	/* full: the newest replaces the last */
		else
			st->n_ctx++;
	}
	st->ctx[i].ctx = ctx;
	st->ctx[i].device = device;
}

bool hit_always_read(const struct api_spec *s)
{
	return s->op == OP_KERNEL_NAME || s->op == OP_CTX_LEARN;
}

/* A copy's devices as its arguments say (a peer copy's device or context arguments) or the
 * allocations its pointers are in; -1 where neither tells. */
void hit_copy_devices(const struct tracee *p, struct call_copy *m)
{
	int src = -1, dst = -1;
	if (m->peer) {
		src = m->ctx_args ? ctx_device(p, m->src_arg) : (int)(int32_t)m->src_arg;
		dst = m->ctx_args ? ctx_device(p, m->dst_arg) : (int)(int32_t)m->dst_arg;
	}
	if (src < 0 && m->dir != DIR_H2D && m->dir != DIR_H2H)
		src = stats_device_of_ptr(p->stats_id, m->src);
	if (dst < 0 && m->dir != DIR_D2H && m->dir != DIR_H2H)
		dst = stats_device_of_ptr(p->stats_id, m->dst);
	m->src_device = src;
	m->dst_device = dst;
}

/* A copy counted on its device, and as P2P when it is a peer copy or its devices differ, in
 * process proc's figures. */
static void count_copy(int proc, const struct cuda_call *c)
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

/* ncclCommInitAll(comms, ndev, devlist): ndev communicators of one process, rank i on device
 * devlist[i] (i when devlist is NULL), read at the return, which stops. */
static void learn_init_all(int proc, const struct cuda_call *c)
{
	const struct call_comm_init *m = &c->comm_init;
	int n = m->nranks;
	if (n <= 0 || n > 1024)
		return;
	uint64_t *comms = calloc((size_t)n, sizeof *comms);
	int *dev = calloc((size_t)n, sizeof *dev);
	if (comms && dev && mem_read(c->tid, m->out, comms, (size_t)n * sizeof *comms) == 0 &&
	    (!m->devlist || mem_read(c->tid, m->devlist, dev, (size_t)n * sizeof *dev) == 0))
		for (int i = 0; i < n; i++)
			stats_comm_learn(proc, comms[i], i, n, m->devlist ? dev[i] : i, false);
	free(comms);
	free(dev);
}

static void on_comm_init(int proc, const struct cuda_call *c)
{
	if (c->comm_init.all) {
		learn_init_all(proc, c);
		return;
	}
	/* NCCL makes a communicator on the calling thread's current device. */
	stats_comm_learn(proc, c->comm_init.comm, c->comm_init.rank, c->comm_init.nranks, c->device, true);
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

static void devices_on_call(struct tracee *p, const struct cuda_call *c)
{
	int proc = p->stats_id;
	if (!cuda_call_ok(c))
		return;
	switch (c->op) {
	case OP_ALLOC:
		if (c->alloc.ptr && c->alloc.kind != MEM_HOST)
			stats_on_device(proc, c->device, DEV_ALLOC, c->alloc.bytes, 0);
		break;
	case OP_LAUNCH:
		if (!c->held)
			stats_on_device(proc, c->device, DEV_LAUNCH, 0, 0);
		break;
	case OP_COPY:
		if (!c->held)
			count_copy(proc, c);
		break;
	case OP_SYNC:
		stats_on_device(proc, c->device, DEV_SYNC, 0, c->ns);
		break;
	case OP_COLLECTIVE:
		if (c->tallied)	/* its calls, bytes and time: the tallies' */
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

const struct cuda_consumer devices_consumer = {
	.name = "devices",
	.call = devices_on_call,
};

void hit_devices_learn(struct tracee *p, const struct cuda_call *c)
{
	if (c->op == OP_CTX_LEARN)
		ctx_learn(p, c->ctx.ctx, c->ctx.device);
}

void hit_devices_follow(struct tracee *p, struct thread *t, const struct cuda_call *c)
{
	int dev;
	switch (c->op) {
	case OP_SET_DEVICE:
		set_device(p, t, c->set_device.device);
		break;
	case OP_CTX_PUSH:
		if (t->n_pushed < sizeof t->dev_pushed)
			t->dev_pushed[t->n_pushed++] = (int8_t)t->device;
		/* fall through */
	case OP_CTX_SET:
		if ((dev = ctx_device(p, c->ctx.ctx)) >= 0)
			set_device(p, t, dev);
		else if (c->ctx.ctx)
			t->device = -1;	/* a context gputop did not see made: not known */
		break;
	case OP_CTX_POP:
		if (t->n_pushed)
			t->device = t->dev_pushed[--t->n_pushed];
		break;
	}
}
