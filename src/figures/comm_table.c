/* comm_table.c — per device figures, NCCL operations, the P2P matrix and the communicators of
 * one process (comm_table.h). */
#include "comm_table.h"

#include <string.h>

const char coll_name[COLL_COUNT][COLL_NAME_MAX] = {
	[COLL_ALLREDUCE] = "AllReduce", [COLL_BROADCAST] = "Broadcast", [COLL_REDUCE] = "Reduce",
	[COLL_ALLGATHER] = "AllGather", [COLL_REDUCESCATTER] = "ReduceScatter",
	[COLL_ALLTOALL] = "AlltoAll", [COLL_GATHER] = "Gather", [COLL_SCATTER] = "Scatter",
	[COLL_SEND] = "Send", [COLL_RECV] = "Recv",
};

int comm_dev_slot(int device)
{
	return device >= 0 && device < STATS_MAX_DEVICES ? device : COMM_DEV_UNKNOWN;
}

void comm_table_on_device(struct stats_comm *c, int device, enum dev_event ev, uint64_t bytes, uint64_t ns)
{
	struct stats_device_use *d = &c->dev[comm_dev_slot(device)];
	switch (ev) {
	case DEV_ALLOC:
		d->allocs++;
		d->alloc_bytes += bytes;
		break;
	case DEV_LAUNCH:
		d->launches++;
		break;
	case DEV_COPY:
		d->copies++;
		d->copy_bytes += bytes;
		break;
	case DEV_SYNC:
		d->syncs++;
		d->sync_ns += ns;
		break;
	}
}

void comm_table_add_launches(struct stats_comm *c, int device, uint64_t n)
{
	c->dev[comm_dev_slot(device)].launches += n;
}

void comm_table_on_p2p(struct stats_comm *c, int src, int dst, uint64_t bytes)
{
	struct stats_p2p *p = &c->p2p[comm_dev_slot(src)][comm_dev_slot(dst)];
	p->calls++;
	p->bytes += bytes;
}

const struct stats_comm_info *comm_table_find(const struct stats_comm *c, uint64_t comm)
{
	for (int i = 0; comm && i < c->n_comms; i++)
		if (c->comms[i].comm == comm)
			return &c->comms[i];
	return NULL;
}

const struct stats_comm_info *comm_table_learn(struct stats_comm *c, uint64_t comm, int rank, int nranks, int device)
{
	struct stats_comm_info *e = (struct stats_comm_info *)comm_table_find(c, comm);
	if (!comm)
		return NULL;
	if (!e) {
		if (c->n_comms == COMM_MAX_COMMS)
			return NULL;
		e = &c->comms[c->n_comms++];
		*e = (struct stats_comm_info){ .comm = comm, .rank = -1, .nranks = -1, .device = -1 };
	}
	if (rank >= 0)
		e->rank = rank;
	if (nranks >= 0)
		e->nranks = nranks;
	if (device >= 0)
		e->device = device;
	return e;
}

void comm_table_on_coll(struct stats_comm *c, enum coll_op op, uint64_t bytes, uint64_t ns, uint64_t comm,
			int peer, int device)
{
	if ((unsigned)op >= COLL_COUNT)
		return;
	c->coll[op].calls++;
	c->coll[op].bytes += bytes;
	c->coll[op].ns += ns;
	comm_table_on_coll_detail(c, op, bytes, comm, peer, device);
}

void comm_table_on_coll_detail(struct stats_comm *c, enum coll_op op, uint64_t bytes, uint64_t comm, int peer,
			       int device)
{
	if (op != COLL_SEND)
		return;
	const struct stats_comm_info *info = comm_table_find(c, comm);
	if (info && info->device >= 0)
		device = info->device;	/* NCCL runs on its communicator's device */
	int i = 0;
	for (; i < c->n_sends; i++)
		if (c->sends[i].comm == comm && c->sends[i].peer == peer && c->sends[i].src_device == device)
			break;
	if (i == c->n_sends) {
		if (c->n_sends == COMM_MAX_SENDS) {	/* full: to a device not known */
			comm_table_on_p2p(c, device, -1, bytes);
			return;
		}
		c->sends[c->n_sends++] = (struct comm_send){ .comm = comm, .peer = peer, .src_device = device };
	}
	c->sends[i].calls++;
	c->sends[i].bytes += bytes;
}

int comm_table_peer_device(const struct stats_comm *c, const struct stats_comm *const *all, int n_all,
			   int nranks, int peer)
{
	if (nranks < 0 || peer < 0)
		return -1;
	for (int i = 0; i < c->n_comms; i++)
		if (c->comms[i].nranks == nranks && c->comms[i].rank == peer)
			return c->comms[i].device;
	int found = -1;
	for (int p = 0; p < n_all; p++) {
		if (all[p] == c)
			continue;
		for (int i = 0; i < all[p]->n_comms; i++) {
			const struct stats_comm_info *e = &all[p]->comms[i];
			if (e->nranks != nranks || e->rank != peer || e->device < 0)
				continue;
			if (found >= 0 && found != e->device)
				return -1;	/* two jobs of that size: which one is not known */
			found = e->device;
		}
	}
	return found;
}

void comm_table_add(struct stats_comm *dst, const struct stats_comm *src, pid_t pid,
		    const struct stats_comm *const *all, int n_all)
{
	for (int d = 0; d < COMM_DEV_SLOTS; d++) {
		struct stats_device_use *o = &dst->dev[d];
		const struct stats_device_use *x = &src->dev[d];
		o->allocs += x->allocs;
		o->alloc_bytes += x->alloc_bytes;
		o->launches += x->launches;
		o->copies += x->copies;
		o->copy_bytes += x->copy_bytes;
		o->syncs += x->syncs;
		o->sync_ns += x->sync_ns;
		for (int e = 0; e < COMM_DEV_SLOTS; e++) {
			dst->p2p[d][e].calls += src->p2p[d][e].calls;
			dst->p2p[d][e].bytes += src->p2p[d][e].bytes;
		}
	}
	for (int k = 0; k < COLL_COUNT; k++) {
		dst->coll[k].calls += src->coll[k].calls;
		dst->coll[k].bytes += src->coll[k].bytes;
		dst->coll[k].ns += src->coll[k].ns;
	}
	for (int i = 0; i < src->n_sends; i++) {
		const struct comm_send *s = &src->sends[i];
		const struct stats_comm_info *info = comm_table_find(src, s->comm);
		int dev = comm_table_peer_device(src, all, n_all, info ? info->nranks : -1, s->peer);
		struct stats_p2p *p = &dst->p2p[comm_dev_slot(s->src_device)][comm_dev_slot(dev)];
		p->calls += s->calls;
		p->bytes += s->bytes;
	}
	for (int i = 0; i < src->n_comms && dst->n_comms < COMM_MAX_COMMS; i++) {
		dst->comms[dst->n_comms] = src->comms[i];
		dst->comms[dst->n_comms++].pid = pid;
	}
}

void comm_table_reset(struct stats_comm *c)
{
	memset(c->dev, 0, sizeof c->dev);
	memset(c->coll, 0, sizeof c->coll);
	memset(c->p2p, 0, sizeof c->p2p);
	c->n_sends = 0;
}
