/* hit_tallies.c — the stubs' tallies (probe/tallies.h), read and handed to the consumers
 * (account.h): where every total of a call a stub counts comes from, however late gputop reads
 * them. Memory reads only; nothing here stops a thread. */
#include "hit_tallies.h"
#include "hit_internal.h"
#include "account.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cuda_api.h"
#include "decode.h"
#include "kernels.h"
#include "launchring.h"
#include "log.h"
#include "retfast.h"
#include "stats.h"
#include "tallies.h"
#include "threads.h"
#include "tracee.h"

/* A handle no name is known for yet (its first launch's park was not served: gputop was late,
 * frozen or busy) waits this long before its launches count under "kernel@0x…": it is named at
 * its next launch, which parks, so that its launches are not split between two rows. (A handle
 * module loading returned again counts under the name it had until a park names it anew:
 * hit_launch_trap reads its count first, hit_read_launches_of.) */
#define NAME_WAIT_NS 2000000000ull

struct reading {
	bool final;
	uint64_t now;
};

static void on_probe(struct tracee *p, int api, const struct tally_probe *d, void *arg)
{
	struct cuda_tally t = {
		.spec = cuda_api_get(api), .api = (int16_t)api, .calls = d->calls, .untimed = d->untimed,
		.errors = d->errors, .last_error = (int)d->last_error, .ns = retfast_ticks_to_ns(d->ticks),
		.effects = d->effects, .unmatched = d->unmatched,
	};
	_Static_assert(CUDA_TALLY_CLASSES == TALLY_CLASSES, "the classes of the tallies");
	if (!t.spec)
		return;
	memcpy(t.class_calls, d->class_calls, sizeof t.class_calls);
	memcpy(t.class_sum, d->class_sum, sizeof t.class_sum);
	for (int k = 0; k < TALLY_CLASSES; k++)
		t.class_ns[k] = retfast_ticks_to_ns(d->class_ticks[k]);
	account_tally(p, &t);
}

/* What launch records would have said of a handle's quiet launches (their device), and its
 * last launch's dimensions (a quiet one's, or a later park's) when its words are new and were
 * read whole (a torn write's check disagrees), read as its probe's row says. */
static void quiet_detail(struct tracee *p, uint64_t handle, const struct tally_quiet *d, struct cuda_quiet *q)
{
	uint64_t w[8] = { 0, handle };
	uint64_t handle_read;
	int api = launchring_probe_api(p, (int)d->probe);
	const struct api_spec *s = api >= 0 ? cuda_api_get(api) : NULL;
	*q = (struct cuda_quiet){ .launches = d->launches, .device = hit_ring_device(p) };
	/* While launches are quiet, every launch of a named kernel writes its words, a park's or
	 * an unnamed record's too: new words are the last launch's. Else only with quiet launches
	 * (records told the dimensions, and a park's words may be older than theirs). */
	if (!(d->launches || launchring_quiet(p)) || !d->check || d->check != tally_dims_check(d->probe, d->w) || !s ||
	    s->op != OP_LAUNCH)
		return;
	memcpy(&w[2], d->w, sizeof d->w);
	if (s->launch == LAUNCH_DRV_EX || s->launch == LAUNCH_RT_EXC)
		w[1] = 1;	/* the config was there: its words are the dimensions */
	decode_ring_launch(s, w, &handle_read, q->grid, q->block);
	q->dims = true;
}

static bool on_launches(struct tracee *p, int api, uint64_t handle, uint64_t n, uint64_t first_ns,
			const struct tally_quiet *d, void *arg)
{
	const struct reading *r = arg;
	const struct api_spec *s = api >= 0 ? cuda_api_get(api) : NULL;
	int kernel = -1;
	if (!s)
		return true;
	if (s->op == OP_LAUNCH) {
		/* Not looked up yet: not now either (a lookup of a handle no symbol names rescans the
		 * handle variables, ~21,000 in a PyTorch rank, and makes a "kernel@0x…" row). */
		if (kernels_unknown(p, handle) && !r->final && (r->now < first_ns || r->now - first_ns < NAME_WAIT_NS))
			return false;
		kernel = kernels_id_of(p, p->pid, handle);
	}
	struct cuda_quiet q;
	if (d && s->op == OP_LAUNCH)
		quiet_detail(p, handle, d, &q);
	account_launched(p, s, handle, kernel, n, d && s->op == OP_LAUNCH ? &q : NULL);
	return true;
}

/* The live table read whole, as the figures' allocations. */
struct live_read {
	struct tracee *p;
	struct stats_alloc *a;
	size_t n, cap;
};

static void on_live(const struct tallies_alloc *a, void *arg)
{
	struct live_read *lr = arg;
	const struct api_spec *s = a->api >= 0 ? cuda_api_get(a->api) : NULL;
	struct thread *t = threads_with_pointer(lr->p, a->thread);
	pid_t gone = t ? 0 : threads_gone_with_pointer(lr->p, a->thread);	/* it ended since */
	if (lr->n == lr->cap) {
		size_t cap = lr->cap ? 2 * lr->cap : 1024;
		struct stats_alloc *m = realloc(lr->a, cap * sizeof *m);
		if (!m)
			return;
		lr->a = m;
		lr->cap = cap;
	}
	int device = t ? hit_thread_device(lr->p, t) : -1;	/* as its record would have said */
	lr->a[lr->n++] = (struct stats_alloc){
		.addr = a->addr, .bytes = a->bytes, .t_ns = retfast_tsc_to_mono(a->tsc),
		.tid = t ? t->tid : gone ? gone : lr->p->pid,
		.api = (int16_t)a->api, .device = (int8_t)(device >= 0 && device < 128 ? device : -1),
		.kind = (uint8_t)(!s ? MEM_DEVICE : s->flags & API_HOST ? MEM_HOST : s->flags & API_MANAGED ? MEM_MANAGED
									     : MEM_DEVICE),
	};
}

/* The figures' live allocations made the table's again (a whole read of it, ~4 MiB): where a
 * record of an allocation or a free was lost, at most every LOST_SYNC_NS; where the figures
 * and the table differ, at the last read, and at most every DIFFER_SYNC_NS before (an
 * allocation and a free of one address on two threads whose returns crossed; on a running
 * program they differ for a moment whenever calls come between the read and the drains). */
#define LOST_SYNC_NS 200000000ull
#define DIFFER_SYNC_NS 2000000000ull
/* And never more than a twentieth of the time: where the program's memory is hard to read (a
 * starved gputop, the program's own threads mapping and unmapping: 4 MiB took 76 ms, 0.2 s a
 * read), the reads would hold every stop that waits behind them. */
#define SYNC_SHARE 20
static void sync_live(struct tracee *p, bool final, uint64_t now)
{
	struct hit_state *st = p->hit;
	bool differ = tallies_live_count(p) != stats_live_in_place(p->stats_id);
	if (!differ && !st->live_records_lost)
		return;
	uint64_t every = st->live_records_lost ? LOST_SYNC_NS : DIFFER_SYNC_NS;
	if (every < SYNC_SHARE * st->live_sync_took_ns)
		every = SYNC_SHARE * st->live_sync_took_ns;
	if (!final && now - st->live_synced_ns < every)
		return;
	struct live_read lr = { .p = p };
	if (tallies_live(p, on_live, &lr) >= 0) {
		stats_sync_live(p->stats_id, lr.a, lr.n);
		st->live_records_lost = false;
		st->live_synced_ns = now;
	}
	free(lr.a);
	st->live_syncs++;
	st->live_sync_took_ns = now_ns() - now;
	if (st->live_sync_took_ns > 50000000u)
		log_debug("%d: the live table read whole in %.1f ms%s", p->pid, st->live_sync_took_ns / 1e6,
			  final ? " (the last)" : "");
	st->live_sync_ns += st->live_sync_took_ns;
}

static const struct tallies_reader reader = { .probe = on_probe, .launches = on_launches };

/* On the tick, the tallies are read at most every TICK_NS: the views refresh no faster, and
 * every read is a system call that takes the program's mmap lock (its own mmap and munmap
 * wait on it). The handles' counts then too, every handle's at once. */
#define TICK_NS 50000000ull

bool hit_read_tallies(struct tracee *p, enum hit_tally_read how)
{
	struct hit_state *st = p->hit;
	struct reading r = { .final = how == HIT_TALLY_LAST, .now = now_ns() };
	if (how == HIT_TALLY_TICK && r.now - st->tallies_read_ns < TICK_NS)
		return false;
	tallies_read(p, &reader, &r);
	st->tallies_read_ns = r.now;
	sync_live(p, r.final, r.now);
	st->tally_reads++;
	st->tally_read_ns += now_ns() - r.now;
	if (r.final)
		log_debug("%d: tallies read %llu times (%.1f ms), the live table %llu times (%.1f ms); "
			  "kernel launch records read %llu", p->pid,
			  (unsigned long long)st->tally_reads, (double)st->tally_read_ns / 1e6,
			  (unsigned long long)st->live_syncs, (double)st->live_sync_ns / 1e6,
			  (unsigned long long)st->launch_records);
	return true;
}

void hit_read_launches_of(struct tracee *p, uint64_t handle)
{
	struct reading r = { .now = now_ns() };
	tallies_read_handle(p, handle, &reader, &r);
}
