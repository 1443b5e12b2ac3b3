/* test_tally.c — unit test of arch/tally.c, the tallies the stubs keep in the program: per probe
 * (calls, errors, time, sums by class), launches per handle, the live allocations, the names
 * registered; exact under 8 threads at once, a full table counted, never waited on. Run twice:
 * on tally.c as compiled here (AddressSanitizer and UBSan), and on build/arch/tally.bin, the
 * very bytes the stubs carry into the program, copied into an executable page and called. */
#define _GNU_SOURCE
#include "check.h"
#include "stub_layout.h"
#include "tally.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef uint64_t (*entry_fn)(struct tally_area *, uint64_t, uint64_t, uint64_t, const uint64_t *);
static entry_fn entry;
static const char *which;
static struct tally_area *t;

enum { PROBE_ALLOC = 1, PROBE_FREE = 2, PROBE_LAUNCH = 3, PROBE_COPY = 4, PROBE_NAME = 5, PROBE_BLOCK = 6,
       PROBE_UNBLOCK = 7 };

/* A call stub's record (stub_layout.h) of probe with six arguments, a result and out values. */
static void record(uint64_t *rec, uint64_t probe, const uint64_t args[6], uint64_t result, uint64_t out,
		   uint64_t ticks)
{
	memset(rec, 0, LR_CALL_SIZE);
	rec[LR_CALL_OFF_PROBE / 8] = probe + 1;
	memcpy(&rec[LR_CALL_OFF_ARGS / 8], args, 6 * sizeof *args);
	rec[LR_CALL_OFF_THREAD / 8] = 0x7000;
	rec[LR_CALL_OFF_ENTRY_TSC / 8] = 1000;
	rec[LR_CALL_OFF_RET_TSC / 8] = 1000 + ticks;
	rec[LR_CALL_OFF_RETVAL / 8] = result;
	rec[LR_CALL_OFF_OUT_VALUE / 8] = out;
}

static uint64_t call(uint64_t probe, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t result, uint64_t out)
{
	uint64_t rec[LR_CALL_SIZE / 8], args[6] = { a1, a2, a3, 0, 0, 0 };
	record(rec, probe, args, result, out, 10);
	return entry(t, TALLY_OP_RETURN, (uint64_t)(uintptr_t)rec, 0, NULL);
}

static uint64_t handle_count(uint64_t h)
{
	uint64_t n = 0;
	for (size_t i = 0; i < t->head.handles_used; i++)
		if (t->launched[i].key == h)
			n += t->launches[i];
	return n;
}

static size_t live_keys(uint64_t key)
{
	size_t n = 0;
	for (size_t i = 0; i < 1u << TALLY_LIVE_BITS; i++)
		n += t->live[i].key == key;
	return n;
}

static void specs(void)
{
	memset(t, 0, sizeof *t);
	t->spec[PROBE_ALLOC] = (struct tally_spec){ .effect = TALLY_INSERT, .key = TALLY_OUT, .value = 2 };
	t->spec[PROBE_FREE] = (struct tally_spec){ .effect = TALLY_REMOVE, .key = 1 };
	t->spec[PROBE_LAUNCH] = (struct tally_spec){ .effect = TALLY_HANDLE, .key = 1 };
	t->spec[PROBE_COPY] = (struct tally_spec){ .value = 3, .class_arg = 1 };
	t->spec[PROBE_NAME] = (struct tally_spec){ .effect = TALLY_NAME, .key = 2, .value = 3, .flags = TALLY_VOID };
	/* PyTorch's alloc_found_block(this, params, size) returns the Block; free(this, Block). */
	t->spec[PROBE_BLOCK] = (struct tally_spec){ .effect = TALLY_BLOCK_IN, .key = TALLY_RETVAL, .value = 3,
						    .owner = 1, .flags = TALLY_VOID };
	t->spec[PROBE_UNBLOCK] = (struct tally_spec){ .effect = TALLY_BLOCK_OUT, .key = 2, .flags = TALLY_VOID };
}

static uint64_t gens(void)
{
	uint64_t n = 0;
	for (size_t i = 0; i < sizeof t->block_gen / sizeof t->block_gen[0]; i++)
		n += t->block_gen[i];
	return n;
}

static size_t block_keys(uint64_t key)
{
	size_t n = 0;
	for (size_t i = 0; i < 1u << TALLY_BLOCK_BITS; i++)
		n += t->block[i].key == key;
	return n;
}

static void single(void)
{
	specs();
	/* Copies: class from argument 1 (a kind), value argument 3; a failed one is an error. */
	call(PROBE_COPY, 1, 0, 100, 0, 0);
	call(PROBE_COPY, 1, 0, 50, 0, 0);
	call(PROBE_COPY, 2, 0, 7, 0, 0);
	call(PROBE_COPY, 99, 0, 1, 0, 0);	/* a kind past the classes: the last class */
	call(PROBE_COPY, 1, 0, 1000, 3, 0);
	struct tally_probe *c = &t->probe[PROBE_COPY];
	check(c->calls == 5 && c->errors == 1 && c->last_error == 3 && c->ticks == 50,
	      "%s: 5 copies, 1 error (code 3), 50 ticks: %llu, %llu, %llu, %llu", which,
	      (unsigned long long)c->calls, (unsigned long long)c->errors, (unsigned long long)c->last_error,
	      (unsigned long long)c->ticks);
	check(c->class_calls[1] == 2 && c->class_sum[1] == 150 && c->class_ticks[1] == 20 && c->class_calls[2] == 1 &&
		      c->class_sum[2] == 7 && c->class_sum[TALLY_CLASSES - 1] == 1,
	      "%s: sums by class: kind 1 150 bytes in 2, kind 2 7, a kind past the classes in the last", which);

	/* Allocations: inserted at a successful return, removed by a successful free. */
	call(PROBE_ALLOC, 0, 4096, 0, 0, 0x10000);
	call(PROBE_ALLOC, 0, 512, 0, 0, 0x20000);
	call(PROBE_ALLOC, 0, 64, 0, 2, 0x30000);	/* failed: nothing */
	call(PROBE_ALLOC, 0, 0, 0, 0, 0);		/* zero bytes, NULL: nothing held */
	struct tally_probe *a = &t->probe[PROBE_ALLOC];
	check(a->live_count == 2 && a->live_bytes == 4608,
	      "%s: 2 live allocations of 4,608 bytes: %llu, %llu", which, (unsigned long long)a->live_count,
	      (unsigned long long)a->live_bytes);
	call(PROBE_FREE, 0x10000, 0, 0, 0, 0);
	call(PROBE_FREE, 0x20000, 0, 0, 1, 0);	/* failed: still live */
	call(PROBE_FREE, 0x40000, 0, 0, 0, 0);	/* never allocated here (before the attach) */
	call(PROBE_FREE, 0, 0, 0, 0, 0);	/* cudaFree(NULL) */
	check(a->live_count == 1 && a->live_bytes == 512 &&
		      t->probe[PROBE_FREE].unmatched == 1 && live_keys(0x10000) == 0 && live_keys(0x20000) == 1,
	      "%s: after the frees 1 live allocation of 512 bytes, 1 free of an unknown address", which);

	/* The address comes back to another thread before the free that gave it back returns:
	 * the free removes the older one. */
	call(PROBE_ALLOC, 0, 100, 0, 0, 0x50000);
	call(PROBE_ALLOC, 0, 200, 0, 0, 0x50000);
	call(PROBE_FREE, 0x50000, 0, 0, 0, 0);
	size_t found = 0;
	uint64_t size = 0;
	for (size_t i = 0; i < 1u << TALLY_LIVE_BITS; i++)
		if (t->live[i].key == 0x50000) {
			found++;
			size = t->live[i].size & ((1ull << TALLY_SIZE_BITS) - 1);
		}
	check(found == 1 && size == 200 && (t->live[tally_slot(0x50000, TALLY_LIVE_BITS)].size >> TALLY_SIZE_BITS) ==
						    PROBE_ALLOC + 1,
	      "%s: an address allocated again before its free returned: the free takes the older (left: %zu of %llu bytes)",
	      which, found, (unsigned long long)size);

	/* Launches by handle. */
	for (int i = 0; i < 10; i++)
		entry(t, TALLY_OP_LAUNCH, PROBE_LAUNCH, 0xabc0, NULL);
	entry(t, TALLY_OP_LAUNCH, PROBE_LAUNCH, 0xdef0, NULL);
	call(PROBE_LAUNCH, 0xdef0, 0, 0, 0, 0);	/* the runtime's, through the call stub */
	call(PROBE_LAUNCH, 0xdef0, 0, 0, 1, 0);	/* failed: no launch */
	check(handle_count(0xabc0) == 10 && handle_count(0xdef0) == 2 && t->probe[PROBE_LAUNCH].calls == 13 &&
		      t->head.handles_used == 2 && t->launched[0].key == 0xabc0 && t->launched[1].key == 0xdef0 &&
		      t->launched[0].probe == PROBE_LAUNCH && t->handle[tally_slot(0xdef0, TALLY_HANDLE_BITS)].index == 1,
	      "%s: launches by handle 10 and 2, 13 calls, the two handles listed in the order they came", which);

	/* A window of slots full: counted as lost by the probe, not waited for. */
	uint64_t full = 0;
	for (uint64_t h = 0x100000, n = 0; n < 2 * TALLY_WINDOW + 1; h++)
		if (tally_slot(h, TALLY_HANDLE_BITS) == tally_slot(0xabc0, TALLY_HANDLE_BITS) + 5) {
			entry(t, TALLY_OP_LAUNCH, PROBE_LAUNCH, h, NULL);
			n++;
			full = h;
		}
	check(t->probe[PROBE_LAUNCH].unmatched > 0 && handle_count(full) == 0 && handle_count(0xabc0) == 10,
	      "%s: handles past a full window are counted as lost (%llu), the others kept", which,
	      (unsigned long long)t->probe[PROBE_LAUNCH].unmatched);

	/* Names: kept, the last registration of a function winning; no record wanted. */
	uint64_t keep1 = call(PROBE_NAME, 0, 0x4000, 0x9000, 0xdeadbeef, 0);
	call(PROBE_NAME, 0, 0x4000, 0x9100, 0, 0);
	call(PROBE_NAME, 0, 0x4010, 0x9200, 0, 0);
	uint32_t s = tally_slot(0x4000, TALLY_NAME_BITS);
	uint64_t keep2 = call(PROBE_COPY, 1, 0, 1, 0, 0);
	check(keep1 == 0 && keep2 == 1 && t->name[s].key == 0x4000 && t->name[s].name == 0x9100 &&
		      t->probe[PROBE_NAME].errors == 0,
	      "%s: a registration names its function (the last wins), its result is no error, no record", which);
	uint64_t un = entry(t, TALLY_OP_UNRECORDED, PROBE_COPY, 0, NULL);
	check(un == 1 && t->probe[PROBE_COPY].calls == 7 && t->probe[PROBE_COPY].untimed == 1,
	      "%s: a call with no record is counted, untimed", which);

	/* Quiet launches (a kernel's, while gputop wants no record): counted with their words. */
	t->spec[PROBE_LAUNCH].flags |= TALLY_DIMS;
	uint64_t loud = call(PROBE_LAUNCH, 0xabc0, 7, 8, 0, 0);
	t->head.quiet = 1;
	uint64_t w[8] = { 0, 0xabc0, 1, 2, 3, 4, 5, 6 };
	entry(t, TALLY_OP_QUIET, PROBE_LAUNCH, 0xabc0, w);
	entry(t, TALLY_OP_QUIET, PROBE_LAUNCH, 0xabc0, w);
	const struct tally_quiet *q = &t->quiet[0];
	bool words = q->w[0] == 1 && q->w[5] == 6 && q->check == tally_dims_check(PROBE_LAUNCH, w + 2) && q->probe == PROBE_LAUNCH;
	uint64_t hush = call(PROBE_LAUNCH, 0xabc0, 9, 10, 0, 0);	/* the runtime's: no record */
	uint64_t failed = call(PROBE_LAUNCH, 0xabc0, 9, 10, 2, 0);	/* failed: recorded */
	t->head.quiet = 0;
	check(loud == 1 && words && hush == 0 && failed == 1 && q->launches == 3 && q->w[0] == 9 && q->w[1] == 10 &&
		      q->w[5] == 0 && q->check == tally_dims_check(PROBE_LAUNCH, q->w) && handle_count(0xabc0) == 14,
	      "%s: quiet launches: 3 counted with their last words, no record; 14 launches in all", which);
	uint64_t parked[8] = { 0, 0xabc0, 7, 7, 7, 7, 7, 7 };
	entry(t, TALLY_OP_WORDS, PROBE_LAUNCH, 0xabc0, parked);	/* a parked launch: its words, not quiet */
	check(q->launches == 3 && q->w[0] == 7 && handle_count(0xabc0) == 15 && q->check == tally_dims_check(PROBE_LAUNCH, q->w),
	      "%s: a parked launch keeps its words, counted, not as quiet", which);
	t->head.quiet = 1;
	entry(t, TALLY_OP_QUIET, PROBE_LAUNCH, 0xabc0, w);
	t->head.quiet = 0;
	check(q->launches == 4 && q->w[0] == 1 && handle_count(0xabc0) == 16, "%s: quiet again: its words", which);

	/* PyTorch's Blocks: kept by the Block returned, with the size asked and the allocator in
	 * place of the thread; each change moves its chunk's generation; no record while quiet. */
	uint64_t b1 = call(PROBE_BLOCK, 0xdca0, 0, 1000, 0xb10c0, 0);
	uint32_t bs = tally_slot(0xb10c0, TALLY_BLOCK_BITS);
	const struct tally_live *bl = &t->block[bs];
	check(b1 == 1 && bl->key == 0xb10c0 && (bl->size & ((1ull << TALLY_SIZE_BITS) - 1)) == 1000 &&
		      bl->thread == 0xdca0 && gens() == 1 && t->block_gen[bs >> TALLY_CHUNK_BITS] == 1 &&
		      live_keys(0xb10c0) == 0 && t->probe[PROBE_BLOCK].live_count == 1,
	      "%s: a Block handed out: in the Blocks' table (size asked, allocator), its chunk's generation 1, recorded", which);
	t->head.quiet_blocks = 1;
	uint64_t b2 = call(PROBE_BLOCK, 0xdca0, 0, 2000, 0xb20c0, 0);
	uint64_t u1 = call(PROBE_UNBLOCK, 0xdca0, 0xb10c0, 0, 0, 0);
	uint64_t u2 = call(PROBE_UNBLOCK, 0xdca0, 0xbef0e0, 0, 0, 0);	/* from before the attach */
	uint64_t c1 = call(PROBE_COPY, 1, 0, 1, 0, 0);
	t->head.quiet_blocks = 0;
	check(b2 == 0 && u1 == 0 && u2 == 0 && c1 == 1 && block_keys(0xb10c0) == 0 && block_keys(0xb20c0) == 1 &&
		      gens() == 3 && t->probe[PROBE_BLOCK].live_count == 1 && t->probe[PROBE_BLOCK].live_bytes == 2000 &&
		      t->probe[PROBE_UNBLOCK].unmatched == 1,
	      "%s: quiet Blocks: no record, the table exact (1 live of 2,000 bytes), 3 changes, 1 free of an unknown Block",
	      which);
}

/* Threads at once: each launches its own kernel and a shared one, allocates and frees. */
enum { THREADS = 8, ROUNDS = 20000 };

static void *worker(void *arg)
{
	uint64_t id = (uint64_t)(uintptr_t)arg;
	for (uint64_t i = 0; i < ROUNDS; i++) {
		entry(t, TALLY_OP_LAUNCH, PROBE_LAUNCH, 0x1000 + id * 16, NULL);
		entry(t, TALLY_OP_LAUNCH, PROBE_LAUNCH, 0x777770, NULL);
		uint64_t addr = 0x10000000 + (id << 24) + (i % 64) * 256;
		if (i % 128 < 64) {
			call(PROBE_ALLOC, 0, 256, 0, 0, addr);
			call(PROBE_BLOCK, 0xdca0, 0, 512, addr, 0);
		} else {
			call(PROBE_FREE, addr, 0, 0, 0, 0);
			call(PROBE_UNBLOCK, 0xdca0, addr, 0, 0, 0);
		}
	}
	return NULL;
}

static void threads(void)
{
	pthread_t th[THREADS];
	specs();
	for (uintptr_t i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	bool own = true;
	for (uint64_t i = 0; i < THREADS; i++)
		own &= handle_count(0x1000 + i * 16) == ROUNDS;
	size_t live = 0;
	for (size_t i = 0; i < 1u << TALLY_LIVE_BITS; i++)
		live += t->live[i].key > TALLY_BUSY;
	check(own && handle_count(0x777770) == (uint64_t)THREADS * ROUNDS &&
		      t->probe[PROBE_LAUNCH].calls == 2ull * THREADS * ROUNDS && t->probe[PROBE_LAUNCH].unmatched == 0,
	      "%s: %d threads x %d launches of their own kernel and a shared one: every count exact", which, THREADS,
	      ROUNDS);
	/* ROUNDS % 128 == 32: each thread ends with its first 32 addresses live. */
	check(live == THREADS * 32 && t->probe[PROBE_ALLOC].live_count == THREADS * 32 &&
		      t->probe[PROBE_ALLOC].live_bytes == THREADS * 32 * 256 &&
		      t->probe[PROBE_FREE].unmatched == 0 && t->probe[PROBE_ALLOC].unmatched == 0,
	      "%s: %d threads' allocations and frees: %zu live, exactly those never freed", which, THREADS, live);
	size_t blocks = 0;
	for (size_t i = 0; i < 1u << TALLY_BLOCK_BITS; i++)
		blocks += t->block[i].key > TALLY_BUSY;
	check(blocks == THREADS * 32 && t->probe[PROBE_BLOCK].live_count == THREADS * 32 &&
		      t->probe[PROBE_BLOCK].live_bytes == THREADS * 32 * 512 && t->probe[PROBE_UNBLOCK].unmatched == 0 &&
		      gens() == (uint64_t)THREADS * ROUNDS,
	      "%s: %d threads' Blocks: %zu live, exactly those never given back; a generation per change", which,
	      THREADS, blocks);
}

static void run(void)
{
	single();
	threads();
}

int main(void)
{
	t = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return 1;
	entry = tally_entry;
	which = "tally.c";
	run();

	/* The bytes the stubs carry (the Makefile made them from the same source). */
	FILE *f = fopen(TALLY_BIN, "rb");
	uint8_t *code = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t n = f && code != MAP_FAILED ? fread(code, 1, 65536, f) : 0;
	if (f)
		fclose(f);
	check(n > 0 && n < 65536, "%s read (%zu bytes)", TALLY_BIN, n);
	if (n > 0 && mprotect(code, 65536, PROT_READ | PROT_EXEC) == 0) {
		entry = (entry_fn)(uintptr_t)code;
		which = "tally.bin";
		run();
	}
	printf("%d failures\n", failures);
	return failures ? 1 : 0;
}
