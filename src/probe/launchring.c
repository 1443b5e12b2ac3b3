/* launchring.c — the launch ring and its stub (see launchring.h): mapping them into the
 * program, the probes' ring indexes, and draining. What a record means for the statistics is
 * hit.c's business. */
#define _GNU_SOURCE
#include "launchring.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "arch.h"
#include "clock.h"
#include "cuda_api.h"
#include "config.h"
#include "log.h"
#include "memory.h"
#include "retfast.h"
#include "tally.h"
#include "tally_spec.h"
#include "threads.h"
#include "tracee.h"
#include "xol.h"

/* The layout arch/x86_64_launch.S uses. */
#define OFF_PRESENT LR_OFF_PRESENT
#define OFF_CAPACITY LR_OFF_CAPACITY
#define OFF_LOST LR_OFF_LOST
#define OFF_CALLS LR_OFF_CALLS
#define OFF_FILTER LR_OFF_FILTER
#define RING_SIZE LR_SIZE
_Static_assert(sizeof(struct lr_call) == LR_CALL_SIZE && offsetof(struct lr_call, state) == LR_CALL_OFF_STATE &&
		       offsetof(struct lr_call, arg) == LR_CALL_OFF_ARGS &&
		       offsetof(struct lr_call, out_value) == LR_CALL_OFF_OUT_VALUE &&
		       offsetof(struct lr_call, out2_value) == LR_CALL_OFF_OUT2_VALUE,
	       "struct lr_call and arch/x86_64_launch.S disagree");
_Static_assert(sizeof(struct tally_area) == LR_TALLY_SIZE && LR_OFF_TALLY % 64 == 0,
	       "arch/tally.h and stub_layout.h disagree");
_Static_assert(TALLY_PROBES == LR_PROBES, "a tally per probe");
_Static_assert(LR_OFF_QUIET == LR_OFF_TALLY + offsetof(struct tally_area, head.quiet) &&
		       LR_OFF_TALLY_FLAGS == LR_OFF_TALLY + offsetof(struct tally_area, spec[0].flags) &&
		       sizeof(struct tally_spec) == 8 && LR_TALLY_DIMS == TALLY_DIMS,
	       "the launch stub's view of the tallies");
#define BATCH 512	/* records read at once */

/* The two rings in the program, the launches' and the calls': producers take the record at the
 * head (lock cmpxchg) and commit it with a word written last; the tracer reads from its tail up
 * to the first record not committed yet and moves the tail on. The launches' commit word is
 * non-zero (the probe + 1), so the tracer clears what it read; the calls' is the record's
 * sequence number + 1, so the tracer writes nothing there (a record the program writes next is
 * then not in a line gputop's core last wrote: the call stub's copy costs less). */
struct ring_desc {
	uint64_t off_head, off_tail, off_records;
	uint64_t cap;		/* records, a power of two */
	size_t size;		/* bytes a record */
	size_t commit;		/* the committing word's index */
	bool sequenced;		/* committed by sequence number + 1, else by non-zero */
};
static const struct ring_desc launch_ring = { LR_OFF_HEAD, LR_OFF_TAIL, LR_OFF_RECORDS, LR_CAP,
					      LR_RECORD_SIZE, 0, false };
static const struct ring_desc calls_ring = { LR_OFF_DONE_HEAD, LR_OFF_DONE_TAIL, LR_OFF_DONE, LR_DONE_CAP,
					     LR_CALL_SIZE, LR_CALL_OFF_STATE / 8, true };
struct ring_pos {
	uint64_t tail;		/* the next record to read (the program sees it at off_tail) */
	uint64_t stuck_since;	/* when the record at tail was first seen not committed */
};

/* The process's part (p->launchring). The static buffers in the functions below are
 * scratch, static only to keep them off the stack: nothing is kept in them from one call to
 * the next. */
struct launchring_state {
	uint64_t ring;		/* its address in the program, 0 if not mapped */
	bool launches_used;	/* a launch probe went through the ring this session */
	struct ring_pos launches, calls;	/* where the tracer reads each ring */
	int16_t api_of[LR_PROBES];	/* -1: free */
	uint64_t lost_seen[LR_PROBES];
	int n_probes;		/* indexes handed out so far (the high-water mark) */
	bool calls_used;	/* a probe calls the call stub */
	int calls_ever;		/* the call stub's records ever used: a prefix of the table */
	uint64_t filling_until;	/* a drain took many records: drain often until then */
	uint32_t generation;	/* mappings made so far: their tallies start from zero */
	uint64_t beat_ns;	/* when the heartbeat was last written (clock.h) */
	bool quiet;		/* the tallies' quiet word as gputop last wrote it */
	bool quiet_blocks;	/* their quiet_blocks word: as wanted, written into every ring */
};

struct launchring_state *launchring_state_new(void)
{
	return calloc(1, sizeof(struct launchring_state));
}

void launchring_state_free(struct launchring_state *st)
{
	free(st);
}

bool launchring_ready(const struct tracee *p)
{
	struct launchring_state *st = p->launchring;
	return st->ring != 0;
}

bool launchring_used(const struct tracee *p)
{
	struct launchring_state *st = p->launchring;
	return st->launches_used;
}

uint64_t launchring_present_flag(const struct tracee *p)
{
	struct launchring_state *st = p->launchring;
	return st->ring ? st->ring + OFF_PRESENT : 0;
}

static int ring_write(const struct tracee *p, uint64_t addr, const void *buf, size_t len);

uint64_t launchring_base(const struct tracee *p)
{
	return p->launchring->ring;
}

void launchring_say_absent(struct tracee *p)
{
	struct launchring_state *st = p->launchring;
	static const uint64_t zero;
	if (st->ring)
		ring_write(p, st->ring + OFF_PRESENT, &zero, sizeof zero);
}

void launchring_forget(struct tracee *p)
{
	struct launchring_state *st = p->launchring;
	st->calls_used = false;
	st->calls_ever = 0;
	st->ring = 0;
	st->launches = st->calls = (struct ring_pos){ 0 };
	st->n_probes = 0;
	st->quiet = false;
}

bool launchring_quiet(const struct tracee *p)
{
	return p->launchring->quiet;
}

static int write_quiet_blocks(struct tracee *p)
{
	struct launchring_state *st = p->launchring;
	uint64_t v = st->quiet_blocks;
	return ring_write(p, st->ring + LR_OFF_TALLY + offsetof(struct tally_area, head.quiet_blocks), &v, sizeof v);
}

void launchring_set_quiet_blocks(struct tracee *p, bool quiet)
{
	struct launchring_state *st = p->launchring;
	if (st->quiet_blocks == quiet)
		return;
	st->quiet_blocks = quiet;
	if (st->ring)
		write_quiet_blocks(p);
}

bool launchring_quiet_blocks(const struct tracee *p)
{
	return p->launchring->quiet_blocks;
}

void launchring_set_quiet(struct tracee *p, bool quiet)
{
	struct launchring_state *st = p->launchring;
	uint64_t v = quiet;
	if (st->ring && st->quiet != quiet && ring_write(p, st->ring + LR_OFF_QUIET, &v, sizeof v) == 0)
		st->quiet = quiet;
}

/* A park waits for gputop only while it drains: the time stamp of this drain, and how old one
 * may be (LR_FRESH_NS) for the tracer to count as reading. Without a calibrated time stamp
 * counter, 0: a park waits until the heartbeat stands still for a bounded number of waits. */
void launchring_beat(struct tracee *p)
{
	uint64_t hb[2] = { arch_timestamp(), retfast_ns_to_ticks(p, LR_FRESH_NS) };
	if (ring_write(p, p->launchring->ring + LR_OFF_HEARTBEAT, hb, sizeof hb) == 0)
		p->launchring->beat_ns = now_ns();
}

uint64_t launchring_beat_ns(const struct tracee *p)
{
	return p->launchring->beat_ns;
}

int launchring_init(struct tracee *p, struct thread *t)
{
	struct launchring_state *st = p->launchring;
	if (!config.launch_ring)
		return 0;
	long addr = xol_mmap_rw(p, t, RING_SIZE);
	if (addr < 0 && addr > -4096)
		return (int)addr;
	/* Smaller capacities, for tests that fill the rings. */
	uint64_t present = 1, cap = config.launch_ring_cap;
	uint64_t launches = cap && cap <= LR_CAP ? cap : LR_CAP, calls = cap && cap <= LR_DONE_CAP ? cap : LR_DONE_CAP;
	const struct timespec park_wait = { 0, LR_PARK_WAIT_NS };
	int err = mem_write(t->tid, (uint64_t)addr + OFF_PRESENT, &present, 8);
	if (err == 0)
		err = mem_write(t->tid, (uint64_t)addr + OFF_CAPACITY, &launches, 8);
	if (err == 0)
		err = mem_write(t->tid, (uint64_t)addr + LR_OFF_DONE_CAPACITY, &calls, 8);
	if (err == 0)
		err = mem_write(t->tid, (uint64_t)addr + LR_OFF_PARK_WAIT, &park_wait, sizeof park_wait);

	uint8_t code[7680];	/* xol.c's shared code: OFF_SLOTS - OFF_SHARED */
	size_t size = (size_t)(arch_launch_stub_end - arch_launch_stub);
	if (err == 0 && size > sizeof code)
		err = -ENOSPC;
	if (err == 0) {
		memcpy(code, arch_launch_stub, size);
		memcpy(code + (arch_launch_stub_ring - arch_launch_stub), &addr, sizeof addr);
		err = xol_set_shared_code(p, code, size);
	}
	if (err < 0) {
		xol_munmap(p, t, (uint64_t)addr, RING_SIZE);
		return err;
	}
	st->ring = (uint64_t)addr;
	st->calls_ever = 0;
	st->launches = st->calls = (struct ring_pos){ 0 };
	st->n_probes = 0;
	st->quiet = false;
	st->generation++;
	if (st->quiet_blocks)
		write_quiet_blocks(p);
	launchring_beat(p);	/* fresh from the start: the first calls may come before the first drain */
	log_debug("launches recorded in the ring at %#llx", (unsigned long long)st->ring);
	return 0;
}

int launchring_unmap(struct tracee *p, struct thread *t)
{
	struct launchring_state *st = p->launchring;
	if (!st->ring)
		return 0;
	int err = xol_munmap(p, t, st->ring, RING_SIZE);
	launchring_forget(p);
	return err;
}

/* Where the call stub's return half finds the row's out-parameters: argument positions 1-6
 * (register arguments, which it recorded), 0 for none. */
static void out_positions(int api, uint8_t pos[2])
{
	const struct api_spec *s = cuda_api_get(api);
	pos[0] = pos[1] = 0;
	if (s && cuda_api_out_pointer(s) && s->arg_out >= 1 && s->arg_out <= 6)
		pos[0] = (uint8_t)s->arg_out;
	if (s && s->op == OP_ALLOC && (s->flags & API_PITCH) && s->arg_pitch_out >= 1 && s->arg_pitch_out <= 6)
		pos[1] = (uint8_t)s->arg_pitch_out;
}

static int claim_probe(struct tracee *p, int api)
{
	struct launchring_state *st = p->launchring;
	for (int i = 0; i < st->n_probes; i++)
		if (st->api_of[i] < 0) {
			st->api_of[i] = (int16_t)api;
			return i;
		}
	if (st->n_probes == LR_PROBES)
		return -1;
	st->api_of[st->n_probes] = (int16_t)api;
	st->lost_seen[st->n_probes] = 0;	/* a fresh mapping: its counter is 0 */
	return st->n_probes++;
}

/* The scope whose nested calls the call stub leaves unrecorded (LR_OFF_SCOPE): calls whose only
 * effect is to be counted, which gputop does not do for a call made inside another of its scope
 * (hit.c is_nested); 0 for those it reads even then (kernel names, contexts, devices). */
static uint8_t nested_scope(int api)
{
	const struct api_spec *s = cuda_api_get(api);
	if (!s || !(s->flags & API_RETURN))
		return 0;
	switch (s->op) {
	case OP_OTHER: case OP_ALLOC: case OP_FREE: case OP_COPY: case OP_MEMSET: case OP_SYNC:
	case OP_COLLECTIVE:
		return s->layer == LAYER_NCCL ? LR_SCOPE_NCCL : LR_SCOPE_CUDA;
	default:
		return 0;
	}
}

int launchring_add_probe(struct tracee *p, int api)
{
	struct launchring_state *st = p->launchring;
	if (!st->ring)
		return -1;
	int i = claim_probe(p, api);
	uint8_t pos[2], scope = nested_scope(api);
	struct tally_spec spec;
	uint64_t spec_at = st->ring + LR_OFF_TALLY + offsetof(struct tally_area, spec) + (uint64_t)i * sizeof spec;
	out_positions(api, pos);
	cuda_tally_spec(cuda_api_get(api), &spec);
	/* The spec before the probe is armed; a reused index keeps its tallies, which gputop
	 * reads as differences (probe/tallies.c). */
	if (i >= 0 && (ring_write(p, st->ring + LR_OFF_OUTS + 2 * (uint64_t)i, pos, sizeof pos) < 0 ||
		       ring_write(p, st->ring + LR_OFF_SCOPE + (uint64_t)i, &scope, 1) < 0 ||
		       ring_write(p, spec_at, &spec, sizeof spec) < 0)) {
		st->api_of[i] = -1;
		return -1;
	}
	return i;
}

void launchring_set_scope_ranges(struct tracee *p, int scope, const uint64_t (*range)[2], int n)
{
	struct launchring_state *st = p->launchring;
	uint64_t table[LR_SCOPE_RANGES][2] = { { 0 } }, at;
	if (!st->ring || scope < LR_SCOPE_CUDA || scope > LR_SCOPE_NCCL)
		return;
	for (int i = 0; i < n && i < LR_SCOPE_RANGES; i++)
		memcpy(table[i], range[i], sizeof table[i]);
	/* A stub reading it meanwhile sees fewer ranges, never a wrong one: the first lo goes to 0
	 * (an empty list), the rest is written, then the first pair, hi before lo. */
	at = st->ring + LR_OFF_RANGES + (uint64_t)(scope - 1) * sizeof table;
	static const uint64_t zero;
	ring_write(p, at, &zero, 8);
	ring_write(p, at + sizeof table[0], table[1], sizeof table - sizeof table[0]);
	ring_write(p, at + 8, &table[0][1], 8);
	ring_write(p, at, &table[0][0], 8);
}

void launchring_drop_probe(struct tracee *p, int probe)
{
	struct launchring_state *st = p->launchring;
	/* Its lost counter stays where it is: the index, reused, carries on from there. */
	if (probe >= 0 && probe < st->n_probes) {
		st->api_of[probe] = -1;
		launchring_set_traps(p, probe, 0);	/* the index may be given again */
	}
}

int launchring_probes(const struct tracee *p)
{
	return p->launchring->ring ? p->launchring->n_probes : 0;
}

uint32_t launchring_generation(const struct tracee *p)
{
	return p->launchring->generation;
}

int launchring_probe_api(const struct tracee *p, int probe)
{
	struct launchring_state *st = p->launchring;
	return probe >= 0 && probe < st->n_probes ? st->api_of[probe] : -1;
}

uint64_t launchring_stub(struct tracee *p, uint64_t slot, enum lr_stub which)
{
	struct launchring_state *st = p->launchring;
	static const uint8_t *const stubs[] = { arch_launch_stub, arch_launch_stub_ex, arch_call_stub };
	uint64_t base = xol_shared_code(p, slot);
	if (which == LR_STUB_CALL)
		st->calls_used = true;
	else
		st->launches_used = true;
	return base ? base + (uint64_t)(stubs[which] - arch_launch_stub) : 0;
}

bool launchring_in_stub(const struct tracee *p, uint64_t pc)
{
	struct launchring_state *st = p->launchring;
	uint64_t off;
	return st->ring && xol_in_shared_code(p, pc, &off);
}

bool launchring_is_trap(const struct tracee *p, uint64_t addr, bool *ex)
{
	struct launchring_state *st = p->launchring;
	uint64_t off;
	if (!st->ring || !xol_in_shared_code(p, addr, &off))
		return false;
	const uint8_t *at = arch_launch_stub + off;
	*ex = at == arch_launch_stub_trap_ex;
	return at == arch_launch_stub_trap || at == arch_launch_stub_trap_ex;
}

bool launchring_is_call_trap(const struct tracee *p, uint64_t addr, uint64_t record, int *index)
{
	struct launchring_state *st = p->launchring;
	uint64_t off, calls = st->ring + LR_OFF_CALLS;
	*index = -1;
	if (!st->ring || !xol_in_shared_code(p, addr, &off) || arch_launch_stub + off != arch_call_stub_trap)
		return false;
	if (record >= calls && record < calls + LR_CALL_RECORDS * LR_CALL_SIZE && (record - calls) % LR_CALL_SIZE == 0)
		*index = (int)((record - calls) / LR_CALL_SIZE);
	return true;
}

bool launchring_is_oom_trap(const struct tracee *p, uint64_t addr)
{
	uint64_t off;
	return p->launchring->ring && xol_in_shared_code(p, addr, &off) && arch_launch_stub + off == arch_call_ret_oom_trap;
}

int launchring_set_traps(struct tracee *p, int probe, unsigned traps)
{
	struct launchring_state *st = p->launchring;
	uint8_t flag = (uint8_t)traps;
	if (!st->ring || probe < 0 || probe >= LR_PROBES)
		return -EINVAL;
	return ring_write(p, st->ring + LR_OFF_TRAPS + (uint64_t)probe, &flag, 1);
}

/* As the stub computes it (arch/x86_64_launch.S). Not hashmap.h: the filter lives in the
 * program's memory, the stub's assembly reads it, and it is a lossy cache that never grows. */
static uint32_t filter_slot(uint64_t handle)
{
	return (uint32_t)((handle * LR_FILTER_HASH) >> (64 - LR_FILTER_BITS));
}

void launchring_seen(struct tracee *p, uint64_t handle)
{
	struct launchring_state *st = p->launchring;
	uint32_t i = filter_slot(handle);
	uint64_t pair[2];
	if (!st->ring || launchring_io(p, st->ring + OFF_FILTER + 8 * (i & ~1u), pair, sizeof pair, false) < 0)
		return;
	if (pair[0] == handle || pair[1] == handle)
		return;	/* there already */
	/* The slot of the pair that is free, else the handle's own (the other handle there then
	 * parks once more, at its next launch). */
	if (pair[i & 1] && !pair[(i & 1) ^ 1])
		i ^= 1;
	launchring_io(p, st->ring + OFF_FILTER + 8 * i, &handle, 8, true);
}

/* Memory access through a thread that has some: the group leader may be a zombie. */
int launchring_io(const struct tracee *p, uint64_t addr, void *buf, size_t len, bool write)
{
	uint32_t it = 0;
	int err = -ESRCH;
	if (!write)
		return mem_read_any(p, addr, buf, len);
	for (struct thread *t; err && (t = threads_iter(p, &it));)
		if (!t->guest)
			err = mem_write(t->tid, addr, buf, len);
	return err;
}

void launchring_unsee(struct tracee *p, uint64_t handle)
{
	struct launchring_state *st = p->launchring;
	uint32_t i = filter_slot(handle) & ~1u;
	uint64_t pair[2], none = 0;
	if (!st->ring || launchring_io(p, st->ring + OFF_FILTER + 8 * i, pair, sizeof pair, false) < 0)
		return;
	for (int k = 0; k < 2; k++)	/* the stub only reads the filter: a word written whole */
		if (pair[k] == handle)
			launchring_io(p, st->ring + OFF_FILTER + 8 * (i + (uint32_t)k), &none, sizeof none, true);
}

static int ring_read(const struct tracee *p, uint64_t addr, void *buf, size_t len)
{
	return launchring_io(p, addr, buf, len, false);
}

static int ring_write(const struct tracee *p, uint64_t addr, const void *buf, size_t len)
{
	return launchring_io(p, addr, (void *)buf, len, true);
}

/* The records each probe's stub dropped (lost: read with the ring's head), told once each. */
static void drain_lost(struct tracee *p, const uint64_t *lost, void (*on_lost)(int, uint64_t, void *), void *arg)
{
	struct launchring_state *st = p->launchring;
	for (int i = 0; i < st->n_probes; i++)
		if (lost[i] != st->lost_seen[i]) {
			if (st->api_of[i] >= 0)
				on_lost(st->api_of[i], lost[i] - st->lost_seen[i], arg);
			st->lost_seen[i] = lost[i];
		}
}

/* Up to max committed records of ring d, in ring order, into out (max * d->size bytes), cleared
 * in the program and the tail moved past them; returns how many. head: the ring's head as just
 * read with what came before it, NULL to read it now. A record taken but never committed (its
 * thread killed inside the stub) would hold the ring up forever: after a second it is skipped. */
static size_t ring_take(struct tracee *p, const struct ring_desc *d, struct ring_pos *pos, const uint64_t *known_head,
			void *out, size_t max)
{
	struct launchring_state *st = p->launchring;
	static const uint64_t zero[BATCH * LR_RECORD_SIZE / 8];
	uint64_t head, start = pos->tail;
	size_t got = 0, words = d->size / 8;
	if (!st->ring)
		return 0;
	if (known_head)
		head = *known_head;
	else if (ring_read(p, st->ring + d->off_head, &head, 8) < 0)
		return 0;
	while (pos->tail != head && got < max) {
		uint64_t at = pos->tail & (d->cap - 1), n = head - pos->tail;
		n = n > BATCH ? BATCH : n;
		n = n > d->cap - at ? d->cap - at : n;	/* up to the end of the ring */
		n = n > max - got ? max - got : n;
		uint64_t addr = st->ring + d->off_records + at * d->size;
		uint64_t *w = (uint64_t *)out + got * words;
		if (ring_read(p, addr, w, n * d->size) < 0)
			break;
		uint64_t k = 0;
		while (k < n && (d->sequenced ? w[k * words + d->commit] == pos->tail + k + 1 : w[k * words + d->commit] != 0))
			k++;	/* a record not committed yet: the next drain reads it */
		if (k < n) {
			uint64_t now = now_ns();
			if (k == 0 && pos->stuck_since && now - pos->stuck_since > 1000000000u) {
				log_debug("a ring of %d: skipping a record never written", p->pid);
				memset(w, 0, d->size);	/* read as nothing */
				k = 1;
				pos->stuck_since = 0;
			} else if (k == 0 && !pos->stuck_since) {
				pos->stuck_since = now;
			}
		}
		if (k && !d->sequenced && ring_write(p, addr, zero, k * d->size) < 0)
			break;
		pos->tail += k;
		got += k;
		if (k)
			pos->stuck_since = 0;
		if (k < n)
			break;
	}
	if (pos->tail != start)
		ring_write(p, st->ring + d->off_tail, &pos->tail, 8);	/* after the records are cleared */
	if (pos->tail - start > d->cap / 16)
		st->filling_until = now_ns() + 100000000u;
	return got;
}

bool launchring_filling(const struct tracee *p, uint64_t now)
{
	return now < p->launchring->filling_until;
}

void launchring_drain(struct tracee *p, void (*on_record)(int api, const uint64_t *w, void *arg),
		      void (*on_lost)(int api, uint64_t n, void *arg), void *arg)
{
	struct launchring_state *st = p->launchring;
	uint64_t buf[BATCH * LR_WORDS];	/* 32 KiB */
	uint64_t head, lost[LR_PROBES];
	size_t n;
	if (!st->ring)
		return;
	/* The head and the drops at one system call (a drop after this read is told next time). */
	struct mem_range r[2] = { { st->ring + launch_ring.off_head, &head, 8 },
				  { st->ring + OFF_LOST, lost, 8 * (size_t)st->n_probes } };
	bool read = mem_readv_any(p, r, st->n_probes ? 2 : 1) == 0, lost_read = read && st->n_probes;
	do {
		n = ring_take(p, &launch_ring, &st->launches, read ? &head : NULL, buf, BATCH);
		read = false;	/* a ring that filled the batch: its head read again */
		for (size_t k = 0; k < n; k++) {
			const uint64_t *w = &buf[k * LR_WORDS];
			int probe = (int)w[0] - 1;
			if (probe >= 0 && probe < st->n_probes && st->api_of[probe] >= 0)
				on_record(st->api_of[probe], w, arg);
		}
	} while (n == BATCH);
	if (lost_read)
		drain_lost(p, lost, on_lost, arg);
	launchring_beat(p);
}

/* ---- call records ---------------------------------------------------------------------- */

/* Records of the calls' table read beyond those ever used (launchring_take_calls). */
#define CALLS_MARGIN 8

bool launchring_has_calls(const struct tracee *p)
{
	struct launchring_state *st = p->launchring;
	return st->ring && st->calls_used;
}

int launchring_take_calls(struct tracee *p, struct lr_call *out, struct lr_call *in_flight, int *n_in_flight)
{
	struct launchring_state *st = p->launchring;
	struct lr_call all[LR_CALL_RECORDS];	/* 16 KiB */
	uint64_t head;
	*n_in_flight = 0;
	if (!launchring_has_calls(p))
		return 0;
	/* The calls in flight first, then the ring's head, at one system call (read in that
	 * order): one that returns after this look is in the ring below, so a call made inside it
	 * always finds it in one or the other. Only the records ever used and a few more: the stub
	 * takes the first free record, so a record is used only once every one before it was
	 * (those ever used are a prefix; a record's probe stays when it is freed). The last one read
	 * used: the table may reach further, read again whole. */
	int n = st->calls_ever + CALLS_MARGIN < LR_CALL_RECORDS ? st->calls_ever + CALLS_MARGIN : LR_CALL_RECORDS;
	for (;;) {
		struct mem_range r[2] = { { st->ring + OFF_CALLS, all, (size_t)n * sizeof all[0] },
					  { st->ring + calls_ring.off_head, &head, 8 } };
		if (mem_readv_any(p, r, 2) < 0)
			return 0;
		if (n == LR_CALL_RECORDS || !(all[n - 1].key || all[n - 1].probe))
			break;
		n = LR_CALL_RECORDS;
	}
	for (int i = 0; i < n; i++) {
		if (all[i].key || all[i].probe)
			st->calls_ever = st->calls_ever > i + 1 ? st->calls_ever : i + 1;
		if (all[i].key && all[i].state == LR_CALL_IN_FLIGHT)
			in_flight[(*n_in_flight)++] = all[i];
	}
	return (int)ring_take(p, &calls_ring, &st->calls, &head, out, LR_DONE_CAP);
}

void launchring_restore_calls(struct tracee *p)
{
	struct launchring_state *st = p->launchring;
	struct lr_call all[LR_CALL_RECORDS];	/* 16 KiB */
	if (!launchring_has_calls(p) || ring_read(p, st->ring + OFF_CALLS, all, sizeof all) < 0)
		return;
	for (int i = 0; i < LR_CALL_RECORDS; i++) {
		uint64_t slot = all[i].key - 8, cur = 0;
		if (!all[i].key || all[i].state != LR_CALL_IN_FLIGHT)
			continue;
		/* Only where the return stub's address still is: the call may have been left. */
		if (ring_read(p, slot, &cur, sizeof cur) == 0 && launchring_in_stub(p, cur))
			ring_write(p, slot, &all[i].ret, sizeof all[i].ret);
	}
}
