/* comm_rows.c — the rows of devices and communication (rows.h): per GPU, NCCL operations in all
 * and per process, the GPU x GPU matrix of bytes moved, the communicators. From snapshots only;
 * formats nothing. */
#include "rows.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct stats_device_use use_delta(const struct stats_device_use *c, const struct stats_device_use *p)
{
	if (!p)
		return *c;
	return (struct stats_device_use){
		.allocs = rows_delta(c->allocs, p->allocs), .alloc_bytes = rows_delta(c->alloc_bytes, p->alloc_bytes),
		.launches = rows_delta(c->launches, p->launches), .copies = rows_delta(c->copies, p->copies),
		.copy_bytes = rows_delta(c->copy_bytes, p->copy_bytes), .syncs = rows_delta(c->syncs, p->syncs),
		.sync_ns = rows_delta(c->sync_ns, p->sync_ns),
	};
}

static struct stats_coll coll_delta(const struct stats_coll *c, const struct stats_coll *p)
{
	if (!p)
		return *c;
	return (struct stats_coll){ rows_delta(c->calls, p->calls), rows_delta(c->bytes, p->bytes),
				    rows_delta(c->ns, p->ns) };
}

static void rows_devices(struct rows *r, const struct stats_snapshot *cur, const struct stats_snapshot *prev)
{
	uint64_t live[COMM_DEV_SLOTS] = { 0 };
	for (size_t i = 0; i < cur->n_alloc; i++)
		if (cur->alloc[i].kind != MEM_HOST)
			live[comm_dev_slot(cur->alloc[i].device)] += cur->alloc[i].bytes;
	for (int d = 0; d < COMM_DEV_SLOTS; d++) {
		const struct stats_device_use *u = &cur->comm.dev[d];
		if (!live[d] && !u->allocs && !u->launches && !u->copies && !u->syncs)
			continue;
		r->device[r->n_device++] = (struct row_device){
			.device = d == COMM_DEV_UNKNOWN ? -1 : d, .total = *u,
			.delta = use_delta(u, prev ? &prev->comm.dev[d] : NULL), .live_bytes = live[d],
		};
	}
}

static const struct stats_process *proc_of(const struct stats_snapshot *s, pid_t pid)
{
	for (size_t i = 0; s && i < s->n_proc; i++)
		if (s->proc[i].info.pid == pid)
			return &s->proc[i];
	return NULL;
}

static int by_rank(const void *a, const void *b)
{
	const struct row_coll *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < 0 ? 1 : y->rank < 0 ? -1 : x->rank - y->rank;	/* ranks first */
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->op - y->op;
}

static int rows_colls(struct rows *r, const struct stats_snapshot *cur, const struct stats_snapshot *prev)
{
	for (int k = 0; k < COLL_COUNT; k++)
		if (cur->comm.coll[k].calls)
			r->coll_total[r->n_coll_total++] = (struct row_coll){
				.pid = cur->pid, .rank = -1, .nranks = -1, .op = k, .name = coll_name[k],
				.total = cur->comm.coll[k],
				.delta = coll_delta(&cur->comm.coll[k], prev ? &prev->comm.coll[k] : NULL),
			};
	if (!cur->n_proc)
		return 0;
	if (!(r->coll = malloc(cur->n_proc * COLL_COUNT * sizeof(*r->coll))))
		return -ENOMEM;
	for (size_t i = 0; i < cur->n_proc; i++) {
		const struct stats_process *p = &cur->proc[i], *was = proc_of(prev, p->info.pid);
		if (cur->pid && p->info.pid != cur->pid)
			continue;
		for (int k = 0; k < COLL_COUNT; k++)
			if (p->coll[k].calls)
				r->coll[r->n_coll++] = (struct row_coll){
					.pid = p->info.pid, .rank = p->info.rank, .nranks = p->info.nranks, .op = k,
					.name = coll_name[k], .total = p->coll[k],
					.delta = coll_delta(&p->coll[k], was ? &was->coll[k] : NULL),
				};
	}
	qsort(r->coll, r->n_coll, sizeof(*r->coll), by_rank);
	return 0;
}

static int rows_p2p(struct rows *r, const struct stats_snapshot *cur, const struct stats_snapshot *prev)
{
	if (!(r->p2p = malloc(COMM_DEV_SLOTS * COMM_DEV_SLOTS * sizeof(*r->p2p))))
		return -ENOMEM;
	for (int s = 0; s < COMM_DEV_SLOTS; s++)
		for (int d = 0; d < COMM_DEV_SLOTS; d++) {
			const struct stats_p2p *c = &cur->comm.p2p[s][d], *p = prev ? &prev->comm.p2p[s][d] : NULL;
			if (!c->calls)
				continue;
			r->p2p[r->n_p2p++] = (struct row_p2p){
				.src = s == COMM_DEV_UNKNOWN ? -1 : s, .dst = d == COMM_DEV_UNKNOWN ? -1 : d, .total = *c,
				.delta = p ? (struct stats_p2p){ rows_delta(c->calls, p->calls), rows_delta(c->bytes, p->bytes) }
					   : *c,
			};
		}
	return 0;
}

/* The communicators: the snapshot's own list holds them by process, in the order summed. */
static int rows_comms(struct rows *r, const struct stats_snapshot *cur)
{
	if (!cur->comm.n_comms)
		return 0;
	if (!(r->comm = malloc((size_t)cur->comm.n_comms * sizeof(*r->comm))))
		return -ENOMEM;
	for (int i = 0; i < cur->comm.n_comms; i++) {
		const struct stats_comm_info *c = &cur->comm.comms[i];
		r->comm[r->n_comm++] = (struct row_comm){ .pid = c->pid, .rank = c->rank, .nranks = c->nranks,
							  .device = c->device };
	}
	return 0;
}

int comm_rows_build(struct rows *r, const struct stats_snapshot *cur, const struct stats_snapshot *prev)
{
	rows_devices(r, cur, prev);
	if (rows_colls(r, cur, prev) < 0 || rows_p2p(r, cur, prev) < 0 || rows_comms(r, cur) < 0)
		return -ENOMEM;
	return 0;
}

void comm_rows_free(struct rows *r)
{
	free(r->coll);
	free(r->p2p);
	free(r->comm);
}
