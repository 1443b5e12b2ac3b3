/* hit_devices.c — which GPU a call ran on: a thread's current device followed through
 * cudaSetDevice and the contexts it makes current (cuCtxSetCurrent, push and pop, contexts
 * learnt where they are made), a copy's source and destination devices, and the communicators
 * ncclCommInitAll made, read for the call's event. What the figures make of them is the figures'
 * (figures/stats_calls.c). Memory reads only. */
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

void hit_comms_read(struct cuda_call *c)
{
	if (c->op != OP_COMM_INIT || !c->comm_init.all || !cuda_call_ok(c))
		return;
	struct call_comm_init *m = &c->comm_init;
	int n = m->nranks;
	if (n <= 0 || n > 1024)
		return;
	uint64_t *comms = calloc((size_t)n, sizeof *comms);
	int *dev = calloc((size_t)n, sizeof *dev);
	if (comms && dev && mem_read(c->tid, m->out, comms, (size_t)n * sizeof *comms) == 0 &&
	    (!m->devlist || mem_read(c->tid, m->devlist, dev, (size_t)n * sizeof *dev) == 0)) {
		for (int i = 0; !m->devlist && i < n; i++)
			dev[i] = i;
		m->comms = comms;
		m->devices = dev;
		return;
	}
	free(comms);
	free(dev);
}

void hit_comms_free(struct cuda_call *c)
{
	if (c->op != OP_COMM_INIT)
		return;
	free((void *)c->comm_init.comms);
	free((void *)c->comm_init.devices);
	c->comm_init.comms = NULL;
	c->comm_init.devices = NULL;
}

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
