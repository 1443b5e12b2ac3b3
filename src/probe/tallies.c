/* tallies.c — reading the stubs' tallies out of the program (tallies.h): memory reads only,
 * process_vm_readv, many ranges a system call; nothing here stops or waits for a thread. */
#include "tallies.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cuda_api.h"
#include "hashmap.h"
#include "launchring.h"
#include "memory.h"
#include "tally_spec.h"
#include "threads.h"
#include "tracee.h"

/* A handle the stubs counted, by its index in their dense arrays (tally.h). */
struct seen_handle {
	int api;		/* the row of its first launch's probe */
	uint64_t key;
	uint64_t taken;		/* launches handed on so far */
	uint64_t quiet_taken;	/* of them, those that left no record */
	uint64_t check_taken;	/* the check of the last launch's words handed on */
	uint64_t first_ns;
};

/* Index of a handle, by handle (a handle counted twice, in two slots: its last index). */
struct handle_index {
	uint64_t key;
	uint64_t index;
};

/* The process's part (p->tallies). */
struct tallies_state {
	uint32_t generation;	/* of the ring mapping read (launchring_generation) */
	struct tally_probe last[TALLY_PROBES];	/* each probe's figures at the last read */
	struct seen_handle *handles;	/* by index, those read so far */
	size_t n_handles, cap_handles;
	struct hashmap by_key;	/* struct handle_index */
	uint64_t launch_calls;	/* launch probes' calls at the last read of the handles' counts */
	uint64_t dropped;	/* allocations gputop took out of the live table (tallies_drop_alloc) */
	struct seen_block *blocks;	/* the Blocks' table as last read, slot by slot; NULL: not yet */
	uint64_t *block_gen;	/* each chunk's generation at that read */
};

/* A slot of the Blocks' table as gputop last read it: which life of which Block it held. */
struct seen_block {
	uint64_t key, tsc;
};

/* Scratch space of the reads, kept off the stack (the tracer's thread only): nothing is kept
 * in it from one read to the next. */
static struct {
	struct tally_probe now[TALLY_PROBES];	/* 456 KiB */
	uint64_t counts[1u << TALLY_HANDLE_BITS];	/* 512 KiB */
	struct tally_launched launched[256];
	struct tally_quiet quiet[1024];	/* 64 KiB: the handles' quiet launches, a part at a time */
	struct tally_live live[8192];	/* 256 KiB: a read of the live table */
	uint64_t block_gen[1u << (TALLY_BLOCK_BITS - TALLY_CHUNK_BITS)];	/* 8 KiB */
	uint64_t block_gen_after[1u << (TALLY_BLOCK_BITS - TALLY_CHUNK_BITS)];	/* ... after the chunks' read */
	struct tally_live chunk[256][1u << TALLY_CHUNK_BITS];	/* 512 KiB: chunks of the Blocks' table */
	uint32_t chunk_of[256];
} scratch;
#define CHUNKS_READ 256

static const struct hashmap by_key_init = HASHMAP_INIT(sizeof(struct handle_index), 256, 0);

struct tallies_state *tallies_state_new(void)
{
	struct tallies_state *st = calloc(1, sizeof(struct tallies_state));
	if (st)
		st->by_key = by_key_init;
	return st;
}

void tallies_state_free(struct tallies_state *st)
{
	if (!st)
		return;
	free(st->handles);
	hashmap_clear(&st->by_key);
	free(st->blocks);
	free(st->block_gen);
	free(st);
}

static void tallies_forget(struct tracee *p)
{
	struct tallies_state *st = p->tallies;
	free(st->handles);
	hashmap_clear(&st->by_key);
	free(st->blocks);
	free(st->block_gen);
	memset(st, 0, sizeof *st);
	st->by_key = by_key_init;
}

static uint64_t area(const struct tracee *p)
{
	uint64_t ring = launchring_base(p);
	return ring ? ring + LR_OFF_TALLY : 0;
}

/* A new mapping (an exec, a ring made again): its tallies start from zero. */
static void same_area(struct tracee *p)
{
	if (p->tallies->generation != launchring_generation(p)) {
		tallies_forget(p);
		p->tallies->generation = launchring_generation(p);
	}
}

#define PROBE_AT(base, i) ((base) + offsetof(struct tally_area, probe) + (uint64_t)(i) * sizeof(struct tally_probe))

static void diff(const struct tally_probe *now, const struct tally_probe *before, struct tally_probe *d)
{
	const uint64_t *a = (const uint64_t *)now, *b = (const uint64_t *)before;
	uint64_t *out = (uint64_t *)d;
	for (size_t k = 0; k < sizeof *d / 8; k++)
		out[k] = a[k] - b[k];
	d->last_error = now->last_error;
	d->live_bytes = now->live_bytes;
	d->live_count = now->live_count;
}

static void read_probes(struct tracee *p, uint64_t base, const struct tallies_reader *r, void *arg)
{
	struct tallies_state *st = p->tallies;
	struct tally_probe *now = scratch.now;
	int n = launchring_probes(p);
	/* Every probe's at once: one range (n x 456 bytes) costs less than a range a probe. */
	if (n <= 0 || mem_read_any(p, PROBE_AT(base, 0), now, (size_t)n * sizeof now[0]) < 0)
		return;
	for (int i = 0; i < n; i++) {
		if (memcmp(&now[i], &st->last[i], sizeof now[i]) == 0)
			continue;
		int api = launchring_probe_api(p, i);
		struct tally_probe d;
		diff(&now[i], &st->last[i], &d);
		st->last[i] = now[i];
		if (api >= 0 && r->probe)
			r->probe(p, api, &d, arg);
	}
}

/* Handles counted since the last read: their keys and first probes, in the order they came. */
static void read_new_handles(struct tracee *p, uint64_t base)
{
	struct tallies_state *st = p->tallies;
	uint64_t used;
	if (mem_read_any(p, base + offsetof(struct tally_area, head.handles_used), &used, sizeof used) < 0)
		return;
	if (used > (1u << TALLY_HANDLE_BITS))
		used = 1u << TALLY_HANDLE_BITS;
	while (st->n_handles < used) {
		struct tally_launched *l = scratch.launched;
		size_t n = used - st->n_handles > 256 ? 256 : used - st->n_handles;
		if (mem_read_any(p, base + offsetof(struct tally_area, launched) + st->n_handles * sizeof *l, l, n * sizeof *l) < 0)
			return;
		for (size_t i = 0; i < n; i++) {
			if (l[i].key == 0)
				return;	/* not written yet: the next read */
			if (st->n_handles == st->cap_handles) {
				size_t cap = st->cap_handles ? 2 * st->cap_handles : 256;
				struct seen_handle *a = realloc(st->handles, cap * sizeof *a);
				if (!a)
					return;
				st->handles = a;
				st->cap_handles = cap;
			}
			struct handle_index *hi = hashmap_insert(&st->by_key, l[i].key, NULL);
			if (hi)
				hi->index = st->n_handles;
			st->handles[st->n_handles++] = (struct seen_handle){
				.key = l[i].key, .first_ns = now_ns(), .api = launchring_probe_api(p, (int)l[i].probe),
			};
		}
	}
}

/* Handle i's count is now count (q: its quiet launches, NULL if not read): its launches since
 * the last read go to r (or wait). */
static void hand_on(struct tracee *p, size_t i, uint64_t count, const struct tally_quiet *q,
		    const struct tallies_reader *r, void *arg)
{
	struct seen_handle *h = &p->tallies->handles[i];
	struct tally_quiet d;
	bool quiet = q && q->launches != h->quiet_taken, words = q && q->check && q->check != h->check_taken;
	if (count == h->taken && !quiet && !words)
		return;
	if (quiet || words) {
		d = *q;
		d.launches = q->launches - h->quiet_taken;
		if (!words)
			d.check = 0;	/* the words handed on already */
	}
	if (!r->launches ||
	    r->launches(p, h->api, h->key, count - h->taken, h->first_ns, quiet || words ? &d : NULL, arg)) {
		h->taken = count;
		if (q) {
			h->quiet_taken = q->launches;
			h->check_taken = q->check;
		}
	}
}

/* Every handle's count, at once: the dense array, 8 bytes a handle; their quiet launches, 64
 * bytes a handle, a part at a time. */
static void read_handles(struct tracee *p, uint64_t base, const struct tallies_reader *r, void *arg)
{
	enum { PART = sizeof scratch.quiet / sizeof scratch.quiet[0] };
	struct tallies_state *st = p->tallies;
	read_new_handles(p, base);
	if (!st->n_handles ||
	    mem_read_any(p, base + offsetof(struct tally_area, launches), scratch.counts, st->n_handles * 8) < 0)
		return;
	for (size_t i0 = 0; i0 < st->n_handles; i0 += PART) {
		size_t n = st->n_handles - i0 < PART ? st->n_handles - i0 : PART;
		bool quiet = mem_read_any(p, base + offsetof(struct tally_area, quiet) + i0 * sizeof scratch.quiet[0],
				      scratch.quiet, n * sizeof scratch.quiet[0]) == 0;
		for (size_t i = 0; i < n; i++)
			hand_on(p, i0 + i, scratch.counts[i0 + i], quiet ? &scratch.quiet[i] : NULL, r, arg);
	}
}

void tallies_read_handle(struct tracee *p, uint64_t handle, const struct tallies_reader *r, void *arg)
{
	struct tallies_state *st = p->tallies;
	uint64_t base = area(p), count;
	if (!base)
		return;
	same_area(p);
	read_new_handles(p, base);
	const struct handle_index *hi = hashmap_find(&st->by_key, handle);
	struct tally_quiet q;
	if (hi && mem_read_any(p, base + offsetof(struct tally_area, launches) + hi->index * 8, &count, 8) == 0)
		hand_on(p, hi->index, count,
			mem_read_any(p, base + offsetof(struct tally_area, quiet) + hi->index * sizeof q, &q, sizeof q) == 0 ? &q
															: NULL,
			r, arg);
}

static bool counts_handles(int api)
{
	const struct api_spec *s = api >= 0 ? cuda_api_get(api) : NULL;
	return s && (s->op == OP_LAUNCH || s->op == OP_GRAPH_LAUNCH);
}

void tallies_read(struct tracee *p, const struct tallies_reader *r, void *arg)
{
	struct tallies_state *st = p->tallies;
	uint64_t base = area(p);
	if (!base)
		return;
	same_area(p);
	read_probes(p, base, r, arg);
	/* The handles' counts only when a launch probe counted since (or some wait to be taken). */
	uint64_t launch_calls = 0;
	bool waiting = false;
	for (int i = 0; i < launchring_probes(p); i++)
		if (counts_handles(launchring_probe_api(p, i)))
			launch_calls += st->last[i].calls;
	for (size_t i = 0; i < st->n_handles && !waiting; i++)
		waiting = st->handles[i].taken == 0;
	if (launch_calls == st->launch_calls && !waiting)
		return;
	st->launch_calls = launch_calls;
	read_handles(p, base, r, arg);
}

uint64_t tallies_live_count(const struct tracee *p)
{
	const struct tallies_state *st = p->tallies;
	struct tally_spec spec;
	uint64_t n = 0;
	for (int i = 0; i < launchring_probes(p); i++) {
		int api = launchring_probe_api(p, i);
		if (api < 0)
			continue;
		cuda_tally_spec(cuda_api_get(api), &spec);
		if (spec.effect == TALLY_INSERT)
			n += st->last[i].live_count;
	}
	return n > st->dropped ? n - st->dropped : 0;
}

void tallies_drop_alloc(struct tracee *p, uint64_t addr)
{
	const uint32_t mask = (1u << TALLY_LIVE_BITS) - 1;
	uint64_t base = area(p);
	uint32_t at = tally_slot(addr, TALLY_LIVE_BITS);
	if (!base || addr <= TALLY_BUSY)
		return;
	for (uint32_t i = 0; i < TALLY_WINDOW; i++) {
		uint64_t slot = base + offsetof(struct tally_area, live) + (uint64_t)((at + i) & mask) * sizeof(struct tally_live);
		uint64_t key, gone = TALLY_GONE;
		if (mem_read_any(p, slot, &key, sizeof key) < 0 || key == TALLY_EMPTY)
			return;
		/* The first slot of addr, the oldest, as a free the stub saw would take: no stub
		 * writes a slot holding a live address but to free that address, which the
		 * program just did through a stop. */
		if (key == addr) {
			if (launchring_io(p, slot, &gone, sizeof gone, true) == 0)
				p->tallies->dropped++;
			return;
		}
	}
}

uint64_t tallies_registered_name(const struct tracee *p, uint64_t key)
{
	const uint32_t size = 1u << TALLY_NAME_BITS;
	uint64_t base = area(p);
	uint32_t at = tally_slot(key, TALLY_NAME_BITS);
	struct tally_name w[TALLY_WINDOW];
	if (!base || key <= TALLY_BUSY)
		return 0;
	/* The window, in one or two pieces (it may wrap at the table's end). */
	uint32_t first = size - at < TALLY_WINDOW ? size - at : TALLY_WINDOW;
	struct mem_range r[2] = {
		{ base + offsetof(struct tally_area, name) + (uint64_t)at * sizeof w[0], w, first * sizeof w[0] },
		{ base + offsetof(struct tally_area, name), w + first, (TALLY_WINDOW - first) * sizeof w[0] },
	};
	if (mem_readv_any(p, r, first < TALLY_WINDOW ? 2 : 1) < 0)
		return 0;
	for (int i = 0; i < TALLY_WINDOW && w[i].key != TALLY_EMPTY; i++)
		if (w[i].key == key)
			return w[i].name;
	return 0;
}

int tallies_live(struct tracee *p, void (*each)(const struct tallies_alloc *a, void *arg), void *arg)
{
	enum { CHUNK = sizeof scratch.live / sizeof scratch.live[0] };
	struct tally_live *buf = scratch.live;
	uint64_t base = area(p);
	int n = 0;
	if (!base)
		return -ENOENT;
	for (uint32_t i0 = 0; i0 < (1u << TALLY_LIVE_BITS); i0 += CHUNK) {
		int err = mem_read_any(p, base + offsetof(struct tally_area, live) + (uint64_t)i0 * sizeof buf[0], buf,
				   sizeof scratch.live);
		if (err < 0)
			return err;
		for (int i = 0; i < CHUNK; i++) {
			if (buf[i].key <= TALLY_BUSY)
				continue;
			uint64_t probe = (buf[i].size >> TALLY_SIZE_BITS) - 1;
			struct tallies_alloc a = {
				.addr = buf[i].key, .bytes = buf[i].size & ((1ull << TALLY_SIZE_BITS) - 1),
				.tsc = buf[i].tsc, .thread = buf[i].thread,
				.api = probe < TALLY_PROBES ? launchring_probe_api(p, (int)probe) : -1,
			};
			each(&a, arg);
			n++;
		}
	}
	return n;
}

/* ---- PyTorch's Blocks ------------------------------------------------------------------------ */

#define CHUNK_SLOTS (1u << TALLY_CHUNK_BITS)
#define CHUNKS (1u << (TALLY_BLOCK_BITS - TALLY_CHUNK_BITS))

/* The chunks whose generation moved, read (up to CHUNKS_READ at a system call) and compared
 * slot by slot with what they held: every life gone first, then every new one, so that a Block
 * handed out again in another slot is taken back before it comes anew. A chunk with a slot
 * being written, or whose generation moved during the read, is read again next time (its
 * generation is not taken). */
int tallies_blocks(struct tracee *p, const struct tallies_blocks_reader *r, void *arg)
{
	struct tally_live (*got)[CHUNK_SLOTS] = scratch.chunk;
	uint32_t *chunk_of = scratch.chunk_of;
	struct tallies_state *st = p->tallies;
	uint64_t base = area(p);
	int changes = 0;
	if (!base)
		return -ENOENT;
	same_area(p);
	if (!st->blocks) {
		st->blocks = calloc(1u << TALLY_BLOCK_BITS, sizeof *st->blocks);
		st->block_gen = calloc(CHUNKS, sizeof *st->block_gen);
		if (!st->blocks || !st->block_gen) {
			free(st->blocks);
			free(st->block_gen);
			st->blocks = NULL;
			st->block_gen = NULL;
			return -ENOMEM;
		}
	}
	uint64_t *gen = scratch.block_gen;
	int err = mem_read_any(p, base + offsetof(struct tally_area, block_gen), gen, sizeof scratch.block_gen);
	if (err < 0)
		return err;
	for (uint32_t c = 0; c < CHUNKS;) {
		struct mem_range rr[CHUNKS_READ];
		int n = 0;
		for (; c < CHUNKS && n < CHUNKS_READ; c++) {
			if (gen[c] == st->block_gen[c])
				continue;
			chunk_of[n] = c;
			rr[n] = (struct mem_range){ base + offsetof(struct tally_area, block) +
							(uint64_t)c * CHUNK_SLOTS * sizeof(struct tally_live),
						    got[n], sizeof got[n] };
			n++;
		}
		if (!n)
			break;
		if ((err = mem_readv_any(p, rr, n)) < 0)
			return err;
		/* The generations again: a chunk changed while it was read may hold a slot torn
		 * between two lives (one's key, the next one's time); it is read next time. */
		if ((err = mem_read_any(p, base + offsetof(struct tally_area, block_gen), scratch.block_gen_after,
				    sizeof scratch.block_gen_after)) < 0)
			return err;
		for (int pass = 0; pass < 2; pass++)	/* 0: lives gone, 1: lives new */
			for (int i = 0; i < n; i++) {
				bool busy = scratch.block_gen_after[chunk_of[i]] != gen[chunk_of[i]];
				for (uint32_t k = 0; k < CHUNK_SLOTS; k++)
					busy |= got[i][k].key == TALLY_BUSY;
				if (busy)
					continue;
				for (uint32_t k = 0; k < CHUNK_SLOTS; k++) {
					struct seen_block *was = &st->blocks[chunk_of[i] * CHUNK_SLOTS + k];
					const struct tally_live *l = &got[i][k];
					uint64_t key = l->key > TALLY_BUSY ? l->key : 0, tsc = key ? l->tsc : 0;
					if (key == was->key && tsc == was->tsc)
						continue;
					if (pass == 0 && was->key) {
						r->gone(p, was->key, was->tsc, arg);
						changes++;
					}
					if (pass == 1 && key) {
						uint64_t probe = (l->size >> TALLY_SIZE_BITS) - 1;
						struct tallies_alloc a = {
							.addr = key, .bytes = l->size & ((1ull << TALLY_SIZE_BITS) - 1),
							.tsc = tsc, .thread = l->thread,
							.api = probe < TALLY_PROBES ? launchring_probe_api(p, (int)probe) : -1,
						};
						r->came(p, &a, arg);
						changes++;
					}
					if (pass == 1)
						*was = (struct seen_block){ key, tsc };
				}
				if (pass == 1)
					st->block_gen[chunk_of[i]] = gen[chunk_of[i]];
			}
	}
	return changes;
}
