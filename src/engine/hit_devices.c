/* hit_devices.c — which GPU a call ran on, and NCCL's communicators: a thread's current device
 * followed through cudaSetDevice and the contexts it makes current (cuCtxSetCurrent, push and
 * pop, contexts learnt where they are made), a copy's source and destination devices, and the
 * communicators made (rank, size, device). Feeds the figures; memory reads only. */
#include "hit.h"
#include "hit_internal.h"

#include <stdlib.h>

#include "decode.h"
#include "memory.h"
#include "stats.h"
#include "threads.h"
#include "tracee.h"

int hit_thread_device(const struct thread *t)
{
	return t->device >= 0 ? t->device : tracee->hit->default_dev;
}

int hit_ring_device(void)
{
	const struct hit_state *st = tracee->hit;
	uint64_t m = st->devices_made_current;
	if (!m)
		return st->default_dev;
	return (m & (m - 1)) ? -1 : __builtin_ctzll(m);
}

static void set_device(struct thread *t, int device)
{
	struct hit_state *st = tracee->hit;
	t->device = device;
	if (device >= 0 && device < 64)
		st->devices_made_current |= 1ull << device;
}

static int ctx_device(uint64_t ctx)
{
	const struct hit_state *st = tracee->hit;
	for (int i = 0; ctx && i < st->n_ctx; i++)
		if (st->ctx[i].ctx == ctx)
			return st->ctx[i].device;
	return -1;
}

static void ctx_learn(uint64_t ctx, int device)
{
	struct hit_state *st = tracee->hit;
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
void hit_copy_devices(struct frame *f, const struct api_spec *s, const uint64_t *a)
{
	int src = -1, dst = -1;
	if (s->flags & API_PEER) {
		src = s->flags & API_CTX_ARGS ? ctx_device(a[s->arg_src_dev]) : (int)(int32_t)a[s->arg_src_dev];
		dst = s->flags & API_CTX_ARGS ? ctx_device(a[s->arg_dev]) : (int)(int32_t)a[s->arg_dev];
	}
	if (src < 0 && f->arg[1] != DIR_H2D && f->arg[1] != DIR_H2H)
		src = stats_device_of_ptr(a[s->arg_src]);
	if (dst < 0 && f->arg[1] != DIR_D2H && f->arg[1] != DIR_H2H)
		dst = stats_device_of_ptr(a[s->arg_dst]);
	f->arg[2] = (uint64_t)(src >= 0 ? src + 1 : 0);
	f->arg[3] = (uint64_t)(dst >= 0 ? dst + 1 : 0);
}

void hit_count_copy_devices(const struct frame *f, const struct thread *t, const struct api_spec *s, uint64_t bytes)
{
	int src = (int)f->arg[2] - 1, dst = (int)f->arg[3] - 1;
	enum copy_dir dir = (enum copy_dir)f->arg[1];
	/* The device a copy counts on: the one whose memory it reads (writes, for H2D); where its
	 * pointers do not tell, the calling thread's, which issued it. */
	int on = dir == DIR_H2D ? dst : src;
	if (dir != DIR_H2H)
		stats_on_device(on >= 0 ? on : hit_thread_device(t), DEV_COPY, bytes, 0);
	/* P2P: a peer copy between two devices (a side not known is "?"), or a D2D copy between
	 * allocations gputop saw made on two devices. */
	if ((s->flags & API_PEER) ? !(src >= 0 && src == dst) : (dir == DIR_D2D && src >= 0 && dst >= 0 && src != dst))
		stats_on_p2p(src, dst, bytes);
}

/* ncclCommInitAll(comms, ndev, devlist): ndev communicators of one process, rank i on device
 * devlist[i] (i when devlist is NULL), read at the return, which stops. */
static void learn_init_all(struct thread *t, const struct frame *f)
{
	int n = (int)(int64_t)f->arg[1];
	if (n <= 0 || n > 1024)
		return;
	uint64_t *comms = calloc((size_t)n, sizeof *comms);
	int *dev = calloc((size_t)n, sizeof *dev);
	if (comms && dev && mem_read(t->tid, f->arg[0], comms, (size_t)n * sizeof *comms) == 0 &&
	    (!f->arg[3] || mem_read(t->tid, f->arg[3], dev, (size_t)n * sizeof *dev) == 0))
		for (int i = 0; i < n; i++)
			stats_comm_learn(comms[i], i, n, f->arg[3] ? dev[i] : i, false);
	free(comms);
	free(dev);
}

static void on_comm_init(struct thread *t, const struct api_spec *s, const struct frame *f,
			 const struct ret_info *ri)
{
	if (s->arg_dev) {	/* ncclCommInitAll */
		learn_init_all(t, f);
		return;
	}
	uint64_t comm = hit_out_param(t->tid, f->arg[0], ri);
	int nranks = (int)(int64_t)f->arg[1], rank = (int)(int64_t)f->arg[2];
	/* NCCL makes a communicator on the calling thread's current device. */
	stats_comm_learn(comm, rank, nranks, hit_thread_device(t), true);
}

static void on_comm_query(struct thread *t, const struct api_spec *s, const struct frame *f)
{
	int32_t v;
	if (mem_read(t->tid, f->arg[0], &v, sizeof v) < 0 || v < 0)
		return;
	if (s->coll == COLL_RANK)
		stats_comm_learn(f->arg[1], v, -1, -1, true);
	else
		stats_comm_learn(f->arg[1], -1, v, -1, true);
}

void hit_devices_on_return(struct thread *t, const struct api_spec *s, const struct frame *f,
			   const struct ret_info *ri)
{
	int dev;
	switch (s->op) {
	case OP_SET_DEVICE:
		set_device(t, (int)f->arg[0]);
		break;
	case OP_CTX_LEARN:
		ctx_learn(hit_out_param(t->tid, f->arg[0], ri), (int)f->arg[1]);
		break;
	case OP_CTX_PUSH:
		if (t->n_pushed < sizeof t->dev_pushed)
			t->dev_pushed[t->n_pushed++] = (int8_t)t->device;
		/* fall through */
	case OP_CTX_SET:
		if ((dev = ctx_device(f->arg[0])) >= 0)
			set_device(t, dev);
		else if (f->arg[0])
			t->device = -1;	/* a context gputop did not see made: not known */
		break;
	case OP_CTX_POP:
		if (t->n_pushed)
			t->device = t->dev_pushed[--t->n_pushed];
		break;
	case OP_COMM_INIT:
		on_comm_init(t, s, f, ri);
		break;
	case OP_COMM_QUERY:
		on_comm_query(t, s, f);
		break;
	case OP_COLLECTIVE:
		stats_on_collective((enum coll_op)f->arg[3], f->arg[0], ri->ns, f->arg[1], (int)(int64_t)f->arg[2],
				    hit_thread_device(t));
		break;
	}
}
