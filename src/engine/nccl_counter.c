/* nccl_counter.c — NCCL's own count of a communicator's collectives, found by value
 * (nccl_counter.h). At each drain where no collective is in flight, a window of the
 * communicator's memory is read; at the next, if still none is in flight and none returned
 * meanwhile, the read was quiet: the first quiet read is the base, and every later one keeps
 * only the 8-byte fields that grew since the base by exactly the collectives gputop counted
 * since (a field that moved with no collective goes too). With three different counts among the
 * quiet reads and one field left, that is the counter (two that moved alike so far wait for a
 * read that parts them: a count of calls of every kind equals it until a query is made). NCCL
 * 2.28.9's struct ncclComm (its DWARF) is 1,082,968 bytes: opCount and collOpCount lie at
 * 1,066,480 and move only when a plan has proxy work (a network, not one node's NVLink);
 * seqNumber[5], each function's collectives (counted in ncclProfilerStartTaskEvents), at
 * 1,075,728: past the first MiB, all of them. Where, gputop does not assume. */
#define _GNU_SOURCE
#include "nccl_counter.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"
#include "hit.h"
#include "job.h"
#include "log.h"
#include "memory.h"
#include "tracee.h"

#define WINDOW (2u << 20)	/* bytes of the communicator read: past NCCL 2.28's struct */
#define SLOTS (WINDOW / 8)
#define QUIET_COUNTS 3		/* different counts among the quiet reads before it is taken */

struct nccl_counter_find {
	uint64_t comm;		/* the communicator (the first collective's) */
	uint64_t count;		/* its collectives that returned since the attach */
	const char *why;	/* why it cannot be checked; NULL while looking, or found */
	bool pending;		/* read at the last drain, quiet if nothing moved since */
	uint64_t pending_count;
	size_t pending_len;
	bool based;
	uint64_t base_count;
	size_t base_len;
	int counts;		/* different counts among the quiet reads */
	uint64_t last_count;
	bool found;
	uint32_t slot;		/* the field: comm + 8 * slot */
	int64_t lag;		/* the field = count + lag (the collectives before the attach) */
	uint8_t alive[SLOTS / 8];	/* fields still in the running */
	uint64_t base[SLOTS], read[SLOTS];
};

static bool alive(const struct nccl_counter_find *f, size_t s)
{
	return f->alive[s / 8] & (1u << (s % 8));
}

static void kill_slot(struct nccl_counter_find *f, size_t s)
{
	f->alive[s / 8] &= (uint8_t)~(1u << (s % 8));
}

static void on_call(struct tracee *p, const struct cuda_call *c)
{
	if (c->op != OP_COLLECTIVE || !c->counted || c->result != 0)
		return;
	struct nccl_counter_find *f = p->nccl_counter;
	if (!f && !(f = p->nccl_counter = calloc(1, sizeof *f)))
		return;
	f->count++;
	if (f->why)
		return;
	if (c->coll.coll == COLL_SEND || c->coll.coll == COLL_RECV)
		f->why = "point-to-point calls made too";
	else if (!c->coll.comm)
		f->why = "a collective's communicator was not known";
	else if (f->comm && c->coll.comm != f->comm)
		f->why = "collectives on more than one communicator";
	f->comm = c->coll.comm;
}

static void on_lost(struct tracee *p, int api, uint64_t n)
{
	const struct api_spec *s = cuda_api_get(api);
	if (!s || s->op != OP_COLLECTIVE)
		return;
	struct nccl_counter_find *f = p->nccl_counter;
	if (!f && !(f = p->nccl_counter = calloc(1, sizeof *f)))
		return;
	f->count += n;
	f->why = "records of collectives were lost (a full ring)";
}

/* Why the sieve emptied, for GPUTOP_DEBUG: the fields that grew since the base by 1 to 8 a
 * collective (a counter NCCL moves more than once a call), the first 8 of them. */
static void say_moved(const struct nccl_counter_find *f, uint64_t k, size_t n)
{
	char line[512];
	size_t len = 0;
	int shown = 0;
	for (size_t s = 0; s < f->base_len && s < n && shown < 8; s++) {
		uint64_t d = f->read[s] - f->base[s];
		if (!k || d < k || d > 8 * k)
			continue;
		len += (size_t)snprintf(line + len, sizeof line - len, " +%zu:%" PRIu64, 8 * s, d);
		shown++;
		if (len >= sizeof line)
			break;
	}
	log_debug("NCCL's counter: none of %zu fields of communicator 0x%" PRIx64 " grew by %" PRIu64
		  " (the collectives since the first quiet read); grew by 1-8 a collective:%s", f->base_len, f->comm, k,
		  shown ? line : " none");
}

/* The read in f->read was quiet: the base, or a sieve of the fields. */
static void quiet(struct nccl_counter_find *f)
{
	size_t n = f->pending_len / 8;
	if (!f->based) {
		memcpy(f->base, f->read, n * 8);
		memset(f->alive, 0, sizeof f->alive);
		for (size_t s = 0; s < n; s++)
			f->alive[s / 8] |= (uint8_t)(1u << (s % 8));
		f->based = true;
		f->base_count = f->last_count = f->pending_count;
		f->base_len = n;
		f->counts = 1;
		return;
	}
	uint64_t k = f->pending_count - f->base_count;
	size_t left = 0, first = 0;
	for (size_t s = 0; s < f->base_len; s++) {
		if (!alive(f, s))
			continue;
		if (s >= n || f->read[s] - f->base[s] != k) {
			kill_slot(f, s);
			continue;
		}
		if (!left++)
			first = s;
	}
	if (!left) {
		f->why = "no field of the communicator grew by one a collective";
		say_moved(f, k, n);
		return;
	}
	if (f->pending_count != f->last_count) {
		f->counts++;
		f->last_count = f->pending_count;
	}
	if (f->counts < QUIET_COUNTS || left > 1)
		return;	/* more quiet reads may part fields that moved alike so far */
	int64_t lag = (int64_t)(f->read[first] - f->pending_count);
	f->found = true;
	f->slot = (uint32_t)first;
	f->lag = lag;
	log_debug("NCCL's counter found at communicator+%zu: %" PRIu64 " at %" PRIu64 " collectives since the attach",
		  8 * first, f->read[first], f->pending_count);
}

static void on_drained(struct tracee *p, bool tallied)
{
	struct nccl_counter_find *f = p->nccl_counter;
	if (!f || f->why || f->found || !f->comm)
		return;
	bool busy = hit_collectives_in_flight(p) > 0;
	if (f->pending && !busy && f->count == f->pending_count)
		quiet(f);
	f->pending = false;
	if (busy || f->why || f->found)
		return;
	long got = mem_read_upto(p->pid, f->comm, f->read, WINDOW);
	if (got < 8) {
		f->why = "the communicator's memory could not be read";
		return;
	}
	f->pending = true;
	f->pending_count = f->count;
	f->pending_len = (size_t)got;
}

static void on_gone(struct tracee *p)
{
	free(p->nccl_counter);
	p->nccl_counter = NULL;
}

const struct cuda_consumer nccl_counter_consumer = {
	.name = "nccl_counter",
	.call = on_call,
	.lost = on_lost,
	.drained = on_drained,
	.gone = on_gone,
};

void nccl_counter_take(struct job *j, struct tracee *p)
{
	struct job_process *jp = j ? job_process_of(j, p->pid) : NULL;
	const struct nccl_counter_find *f = p->nccl_counter;
	if (!jp)
		return;
	if (!f || !f->comm) {
		jp->counter_why = "no collective seen since the attach";
		return;
	}
	if (f->why) {
		jp->counter_why = f->why;
		return;
	}
	if (!f->found) {
		jp->counter_why = f->counts < QUIET_COUNTS ? "too few quiet moments between collectives to find it"
							   : "more than one field grew by one a collective";
		return;
	}
	/* Checked once more, held: the field is the count since the attach and the same lag, the
	 * collectives in flight counted or not yet (NCCL counts one inside the call). */
	uint64_t v;
	int64_t extra;
	int in_flight = hit_collectives_in_flight(p);
	bool read = mem_read(p->pid, f->comm + 8ull * f->slot, &v, sizeof v) == 0;
	log_debug("%d: NCCL's counter %" PRIu64 ", %" PRIu64 " collectives since the attach, lag %" PRId64 ", %d in flight",
		  p->pid, v, f->count, f->lag, in_flight);
	if (!read ||
	    (extra = (int64_t)(v - f->count) - f->lag) < 0 || extra > in_flight) {
		jp->counter_why = "the field found no longer matched gputop's count";
		return;
	}
	jp->counter_checked = true;
	jp->counter = v;
	jp->counter_offset = 8u * f->slot;
}
