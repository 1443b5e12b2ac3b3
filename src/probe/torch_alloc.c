/* torch_alloc.c — PyTorch's caching allocator read out of the program (torch_alloc.h).
 *
 * The layouts, from c10/cuda/CUDACachingAllocator.cpp and c10/core/CachingDeviceAllocator.h
 * (PyTorch 2.x, x86-64, libstdc++), each checked before use:
 *
 *   struct Block        device (int8) @0, stream @8, stream_uses (ska::flat_hash_set, 32 bytes)
 *                       @16, [int32 registration_counter, 2.10+], size, requested_size, pool, ptr,
 *                       bool allocated, bool mapped, prev, next, ..., expandable_segment_ last.
 *                       Two layouts (with and without registration_counter); the one in use is
 *                       the one where a Block just handed out reads requested_size == the size
 *                       the probed call was asked for, allocated == mapped == 1, size a multiple
 *                       of 512 not below it (or, read from the table below, ptr == the key).
 *   DeviceCachingAllocator  std::recursive_mutex (40) @0, DeviceStats @40 (Stat {current, peak,
 *                       allocated, freed} x 3 per StatArray: AGGREGATE, SMALL_POOL, LARGE_POOL);
 *                       checked: AGGREGATE == SMALL + LARGE for the counts and bytes read,
 *                       peaks not below currents, reserved not below allocated. Its address is
 *                       the `this` of the probed calls (or, at an attach, found from a block's
 *                       pool: large_blocks @1024, small_blocks @1144, device_id @1016, 2.10+).
 *   NativeCachingAllocator  67 ska::flat_hash_map<void*, Block*> allocated_blocks (the blocks
 *                       handed out, by pointer; 4352 bytes in), each {entries, num_slots_minus_one,
 *                       int8 shift, int8 max_lookups, float max_load_factor = 0.5, num_elements},
 *                       entries of {int8 distance (-1: empty), void *key, Block *value}: found
 *                       by that signature (67 tables in a row), not by the offset alone. */
#define _GNU_SOURCE
#include "torch_alloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cuda_api.h"
#include "hashmap.h"
#include "launchring.h"
#include "log.h"
#include "memory.h"
#include "retfast.h"
#include "stacks.h"
#include "symbols.h"
#include "tallies.h"
#include "threads.h"
#include "torch_mem.h"
#include "torch_shot.h"
#include "tracee.h"

#define SHARDS 67			/* NativeCachingAllocator::kNumMutexShard */
#define MAP_SIZE 32			/* a ska::flat_hash_map */
#define MAPS_AT 4352			/* where PyTorch 2.x puts them: 64 + 67 x 64 */
#define NATIVE_READ 8192		/* bytes of the object searched for them */
#define ENTRY_SIZE 24			/* {int8 distance; void *key; Block *value} */
#define MAX_ENTRIES (1u << 24)
#define STATS_AT 40			/* DeviceStats in a DeviceCachingAllocator */
#define STAT_ARRAY 96			/* 3 x Stat {current, peak, allocated, freed} */
#define STATS_BYTES (9 * STAT_ARRAY + 16)	/* the nine StatArrays, retries and OOMs */
#define DEVICE_ID_AT 1016		/* 2.10+: DeviceCachingAllocator::device_id */
#define LARGE_POOL_AT 1024		/* ... large_blocks */
#define SMALL_POOL_AT 1144		/* ... small_blocks */
#define BLOCK_READ 176			/* bytes read of a Block: the largest layout, rounded */
#define SMALL_SIZE (1u << 20)		/* kSmallSize: larger blocks are the large pool's */
#define SMALL_PAGE (2u << 20)		/* expandable segments map 2 MiB (small) */
#define LARGE_PAGE (20u << 20)		/* ... or 20 MiB pages (large pool) */
#define TRIES 3				/* flushes a Block that does not read right is tried at */
#define TABLE_TRIES 200			/* ... one the Blocks' table told of: until its gone is told
					 * (its chunk may change under every read for a while) */
#define WALK_STEPS_PER_FLUSH 8192	/* Blocks read to find segments, at most, per flush */
#define BAD_IN_A_ROW 64			/* unreadable blocks in a row: the layout is not the one */
#define BAD_STATS_IN_A_ROW 20		/* statistics that do not add up in a row, never once right:
					 * not the layout (one read may tear: the program runs) */

/* StatArrays of DeviceStats, in order. */
enum { ST_ALLOCATION, ST_SEGMENT, ST_ACTIVE, ST_INACTIVE_SPLIT, ST_ALLOCATED_BYTES, ST_RESERVED_BYTES,
       ST_ACTIVE_BYTES, ST_INACTIVE_SPLIT_BYTES, ST_REQUESTED_BYTES };

struct block_layout {
	const char *what;
	uint16_t size, requested, pool, ptr, allocated, prev, next, expandable;
};

static const struct block_layout layouts[] = {
	{ "PyTorch 2.10 and later", 56, 64, 72, 80, 88, 96, 104, 160 },
	{ "PyTorch 2.1 to 2.9", 48, 56, 64, 72, 80, 88, 96, 152 },
};
#define N_LAYOUTS ((int)(sizeof layouts / sizeof layouts[0]))
/* Neither fits (a field added before size, say): the same run of fields, size to next, and
 * expandable_segment_ as far after requested_size as in both, found where a block's values
 * say (its requested_size equals what was asked, or its ptr the table's key); within the bytes
 * read (a Block is no longer: what follows it may not be mapped). Layout index N_LAYOUTS: the
 * process's found one. */
#define FOUND_FIRST 16			/* where requested_size is looked for */
#define FOUND_EXPANDABLE 96		/* expandable_segment_ - requested_size */
#define FOUND_LAST (BLOCK_READ - FOUND_EXPANDABLE - 8)

static const char *const sym_names[TORCH_SYM_COUNT] = {
	[TORCH_SYM_NATIVE] = "_ZN3c104cuda20CUDACachingAllocator6NativeL9allocatorE",
	[TORCH_SYM_NATIVE_OLD] = "_ZN3c104cuda20CUDACachingAllocator6Native9allocatorE",
	[TORCH_SYM_BACKEND] = "_ZN3c104cuda20CUDACachingAllocator9allocatorE",
};

/* A block handed out, to be read at the flush (unless taken back first). */
struct pending {
	uint64_t block;		/* the key */
	uint64_t dca, requested, t_ns;
	uint64_t tsc;		/* from the tallies' table of Blocks: when its life began; 0: a record */
	uint32_t stack;
	uint8_t tries;		/* reads that did not check */
	bool done;		/* read: in the figures */
};

/* A block read before gputop came, and its memory. */
struct before_block {
	uint64_t block, ptr;
};

/* A Block's life from the tallies' table, in the figures. */
struct table_life {
	uint64_t block;		/* the key */
	uint64_t tsc;		/* when it began, as the table says */
};

/* A live block whose segment is to be found. */
struct want_segment {
	uint64_t block;
	int device;
};

struct torch_state {
	bool on;			/* the allocator's functions are probed */
	uint32_t module;
	uint64_t native;		/* the NativeCachingAllocator object; 0: not known */
	uint64_t backend;		/* c10::cuda::CUDACachingAllocator::allocator; 0: checked (or none) */
	uint64_t module_size;
	int layout;			/* layouts[] (N_LAYOUTS: found), -1 until one checked */
	struct block_layout found;
	int bad_in_a_row;
	bool said_layout, said_bad;
	uint64_t dca[TORCH_MAX_DEVICES];	/* each device's DeviceCachingAllocator */
	int64_t last_reserved[TORCH_MAX_DEVICES];
	bool bad_stats[TORCH_MAX_DEVICES];	/* its statistics did not check: not read again */
	bool stats_read[TORCH_MAX_DEVICES];	/* ... they checked once */
	uint8_t stats_failed[TORCH_MAX_DEVICES];	/* reads in a row that did not check */
	struct hashmap pending;		/* struct pending by Block */
	/* While the stubs keep the Blocks in place (launchring_quiet_blocks): the table's lives
	 * in the figures (struct table_life by Block), and the blocks read before gputop came,
	 * whose frees no stub saw, checked by reading them every BEFORE_CHECK_NS. */
	struct hashmap lives;
	struct hashmap before;		/* struct before_block by Block */
	uint64_t before_checked_ns;
	uint64_t allocs, frees;		/* calls since the last flush, counted there */
	struct want_segment *want;
	size_t n_want, cap_want;
	/* Out of memory: the last failed CUDA allocation, whether one is to be said, each
	 * device's count of the allocator's OOMs when last read. */
	struct torch_oom oom;
	bool oom_now;
	int64_t ooms[TORCH_MAX_DEVICES];
	/* The allocator's state read at its last failed cudaMalloc's return (torch_oom_hold). */
	struct torch_shot held;
	bool have_held;
	bool instant;			/* a failed call's thread is held now (torch_oom_instant) */
};

static bool check_backend(struct tracee *p);

struct torch_state *torch_state_new(void)
{
	struct torch_state *st = calloc(1, sizeof *st);
	if (st) {
		st->layout = -1;
		st->pending = (struct hashmap)HASHMAP_INIT(sizeof(struct pending), 256, 0);
		st->lives = (struct hashmap)HASHMAP_INIT(sizeof(struct table_life), 256, 0);
		st->before = (struct hashmap)HASHMAP_INIT(sizeof(struct before_block), 256, 0);
	}
	return st;
}

void torch_state_free(struct torch_state *st)
{
	if (!st)
		return;
	hashmap_clear(&st->pending);
	hashmap_clear(&st->lives);
	free(st->want);
	hashmap_clear(&st->before);
	if (st->have_held)
		torch_shot_free(&st->held);
	free(st);
}

/* exec, or the module unloaded: the old image's allocator is gone (a consumer's .gone). */
static void torch_forget(struct tracee *p)
{
	struct torch_state *st = p->torch;
	torch_mem_forget(p->pid);	/* an allocator gputop did not know included */
	hashmap_clear(&st->pending);
	hashmap_clear(&st->lives);
	free(st->want);
	hashmap_clear(&st->before);
	if (st->have_held)
		torch_shot_free(&st->held);
	*st = (struct torch_state){ .layout = -1, .pending = st->pending, .lives = st->lives, .before = st->before };
}

int torch_symbol_index(const char *name)
{
	static const char prefix[] = "_ZN3c104cuda20CUDACachingAllocator";
	if (strncmp(name, prefix, sizeof prefix - 1) != 0)
		return -1;
	for (int i = 0; i < TORCH_SYM_COUNT; i++)
		if (strcmp(name, sym_names[i]) == 0)
			return i;
	return -1;
}

bool torch_is_allocator_module(const struct module *m)
{
	return strncmp(m->base, "libc10_cuda.", 12) == 0;
}

static uint64_t u64_at(const unsigned char *p, size_t off)
{
	uint64_t v;
	memcpy(&v, p + off, sizeof v);
	return v;
}

/* A Block's fields by layout l. */
static void parse_with(const unsigned char *raw, const struct block_layout *L, struct torch_block_view *b)
{
	*b = (struct torch_block_view){
		.device = (int8_t)raw[0],
		.stream = u64_at(raw, 8),
		.size = u64_at(raw, L->size),
		.requested = u64_at(raw, L->requested),
		.pool = u64_at(raw, L->pool),
		.ptr = u64_at(raw, L->ptr),
		.allocated = raw[L->allocated] == 1,
		.mapped = raw[L->allocated + 1] == 1,
		.prev = u64_at(raw, L->prev),
		.next = u64_at(raw, L->next),
		.expandable = u64_at(raw, L->expandable) != 0,
	};
}

static void block_parse(struct tracee *p, const unsigned char *raw, int l, struct torch_block_view *b)
{
	parse_with(raw, l < N_LAYOUTS ? &layouts[l] : &p->torch->found, b);
}

/* Whether b reads as a block handed out: allocated and mapped, on a device, its size rounded to
 * the allocator's 512 bytes and not below what was asked. */
static bool block_live(const struct torch_block_view *b)
{
	return b->allocated && b->mapped && b->device >= 0 && b->device < TORCH_MAX_DEVICES && b->ptr &&
	       b->size && b->size % 512 == 0 && b->size >= b->requested && b->size - b->requested < (1ull << 40);
}

static bool fits(const struct torch_block_view *b, uint64_t requested, uint64_t key)
{
	return block_live(b) && (key ? b->ptr == key : b->requested == requested);
}

/* The layout in which raw is a live block asked for `requested` bytes (or handing out key). */
static int layout_that_fits(struct tracee *p, const unsigned char *raw, uint64_t requested, uint64_t key)
{
	struct torch_block_view b;
	for (int l = 0; l < N_LAYOUTS; l++) {
		block_parse(p, raw, l, &b);
		if (fits(&b, requested, key))
			return l;
	}
	for (uint16_t off = FOUND_FIRST; off <= FOUND_LAST; off += 8) {
		struct block_layout L = { "neither: found by its fields' values", (uint16_t)(off - 8), off,
					  (uint16_t)(off + 8), (uint16_t)(off + 16), (uint16_t)(off + 24),
					  (uint16_t)(off + 32), (uint16_t)(off + 40), (uint16_t)(off + FOUND_EXPANDABLE) };
		parse_with(raw, &L, &b);
		if (fits(&b, requested, key)) {
			p->torch->found = L;
			return N_LAYOUTS;
		}
	}
	return -1;
}

static void choose_layout(struct tracee *p, struct torch_state *st, int l)
{
	st->layout = l;
	if (!st->said_layout) {
		log_debug("%d: PyTorch's caching allocator: Blocks laid out as in %s (requested_size at %u)", p->pid,
			  l < N_LAYOUTS ? layouts[l].what : st->found.what,
			  l < N_LAYOUTS ? layouts[l].requested : st->found.requested);
		st->said_layout = true;
	}
}

/* ---- the allocator's statistics ------------------------------------------------------------ */

static int64_t stat_cur(const int64_t *s, int array, int type)
{
	return s[(array * STAT_ARRAY) / 8 + type * 4];
}

static int64_t stat_peak(const int64_t *s, int array, int type)
{
	return s[(array * STAT_ARRAY) / 8 + type * 4 + 1];
}

/* Whether raw reads as a DeviceStats: every pool's figure adds up to the aggregate's. */
static bool stats_check(const int64_t *s)
{
	static const int arrays[] = { ST_ALLOCATION, ST_SEGMENT, ST_ALLOCATED_BYTES, ST_RESERVED_BYTES,
				      ST_REQUESTED_BYTES };
	for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
		int a = arrays[i];
		if (stat_cur(s, a, 0) != stat_cur(s, a, 1) + stat_cur(s, a, 2))
			return false;
		for (int t = 0; t < 3; t++)
			if (stat_cur(s, a, t) < 0 || stat_peak(s, a, t) < stat_cur(s, a, t))
				return false;
	}
	return stat_cur(s, ST_RESERVED_BYTES, 0) >= stat_cur(s, ST_ALLOCATED_BYTES, 0) &&
	       stat_cur(s, ST_ALLOCATED_BYTES, 0) % 512 == 0;
}

static int read_stats(struct tracee *p, uint64_t dca, int64_t s[STATS_BYTES / 8])
{
	int err = mem_read(p->pid, dca + STATS_AT, s, STATS_BYTES);
	return err < 0 ? err : stats_check(s) ? 0 : -EINVAL;
}

static void feed_stats(struct tracee *p, int device, const int64_t *s)
{
	struct torch_state *st = p->torch;
	struct torch_alloc_stats a = {
		.read_ns = now_ns(),
		.allocated = stat_cur(s, ST_ALLOCATED_BYTES, 0),
		.allocated_peak = stat_peak(s, ST_ALLOCATED_BYTES, 0),
		.reserved = stat_cur(s, ST_RESERVED_BYTES, 0),
		.reserved_peak = stat_peak(s, ST_RESERVED_BYTES, 0),
		.requested = stat_cur(s, ST_REQUESTED_BYTES, 0),
		.segments = stat_cur(s, ST_SEGMENT, 0),
		.blocks = stat_cur(s, ST_ALLOCATION, 0),
		.alloc_retries = s[9 * STAT_ARRAY / 8],
		.ooms = s[9 * STAT_ARRAY / 8 + 1],
	};
	/* It gave up (OutOfMemoryError): its count rose since the last read, or since 0 at the
	 * first read that follows a failed cudaMalloc of its own. */
	if (a.ooms > st->ooms[device] && (st->stats_read[device] || st->oom.api)) {
		st->oom.by_torch = st->oom_now = true;
		st->oom.device = device;
	}
	st->ooms[device] = a.ooms;
	if (st->last_reserved[device] > a.reserved)	/* memory given back: segments may be gone */
		torch_mem_prune_segments(p->pid, device);
	st->last_reserved[device] = a.reserved;
	torch_mem_set_alloc_stats(p->pid, device, &a);
}

/* The DeviceCachingAllocator of device d is dca, as a probed call's `this` says. */
static void learn_dca(struct tracee *p, int d, uint64_t dca)
{
	struct torch_state *st = p->torch;
	if (d < 0 || d >= TORCH_MAX_DEVICES || !dca || st->dca[d] == dca)
		return;
	st->dca[d] = dca;
	st->bad_stats[d] = st->stats_read[d] = false;
	st->stats_failed[d] = 0;
}

static void read_all_stats(struct tracee *p)
{
	struct torch_state *st = p->torch;
	for (int d = 0; d < TORCH_MAX_DEVICES; d++) {
		int64_t s[STATS_BYTES / 8];
		if (!st->dca[d] || st->bad_stats[d])
			continue;
		int err = read_stats(p, st->dca[d], s);
		if (err == 0) {
			feed_stats(p, d, s);
			st->stats_read[d] = true;
			st->stats_failed[d] = 0;
		} else if (err == -EINVAL && !st->stats_read[d] && ++st->stats_failed[d] >= BAD_STATS_IN_A_ROW) {
			st->bad_stats[d] = true;
			log_info("PyTorch's caching allocator of GPU %d: its statistics are not laid out as gputop "
				 "expects; reserved memory not shown", d);
		}
	}
}

/* gputop-wide: the Blocks read at one system call (the tracer thread only; read_blocks_of and
 * record_before never nest). */
static struct {
	unsigned char raw[MEM_READV_MAX][BLOCK_READ];
} torch_alloc;

/* ---- segments ---------------------------------------------------------------------------- */

static int read_block(struct tracee *p, uint64_t at, unsigned char raw[BLOCK_READ], struct torch_block_view *b)
{
	int err = mem_read(p->pid, at, raw, BLOCK_READ);
	if (err == 0)
		block_parse(p, raw, p->torch->layout, b);
	return err;
}

/* The segment holding live block at `at`, from its neighbours: back to the first (no prev), on
 * to the last; each neighbour must border the one before and point back at it. -EAGAIN: the
 * chain changed under the walk (the program runs), to try again; *steps counts the reads. */
static int walk_segment(struct tracee *p, uint64_t at, int device, struct torch_segment *seg, int *steps)
{
	unsigned char raw[BLOCK_READ];
	struct torch_block_view b, n;
	if (read_block(p, at, raw, &b) < 0 || !block_live(&b) || b.device != device)
		return -ENOENT;	/* taken back meanwhile */
	uint64_t first = b.ptr, end = b.ptr + b.size, cur = at, ptr = b.ptr;
	for (uint64_t prev = b.prev; prev; prev = n.prev) {
		if (++*steps > WALK_STEPS_PER_FLUSH || read_block(p, prev, raw, &n) < 0 || n.next != cur ||
		    n.ptr + n.size != ptr || n.device != device)
			return -EAGAIN;
		cur = prev;
		first = ptr = n.ptr;
	}
	cur = at;
	for (uint64_t next = b.next; next; next = n.next) {
		if (++*steps > WALK_STEPS_PER_FLUSH || read_block(p, next, raw, &n) < 0 || n.prev != cur ||
		    n.ptr != end || n.device != device)
			return -EAGAIN;
		cur = next;
		end = n.ptr + n.size;
	}
	*seg = (struct torch_segment){ .base = first, .size = end - first, .device = (int8_t)device,
				       .expandable = b.expandable,
				       .page = b.expandable ? (b.size > SMALL_SIZE ? LARGE_PAGE : SMALL_PAGE) : 0 };
	return 0;
}

static void want_segment(struct tracee *p, uint64_t block, int device)
{
	struct torch_state *st = p->torch;
	if (st->n_want == st->cap_want) {
		size_t cap = st->cap_want ? 2 * st->cap_want : 256;
		struct want_segment *w = realloc(st->want, cap * sizeof *w);
		if (!w)
			return;
		st->want = w;
		st->cap_want = cap;
	}
	st->want[st->n_want++] = (struct want_segment){ block, device };
}

/* Segments of the blocks read lately, as many as the flush's reads allow; the rest wait. */
static void find_segments(struct tracee *p)
{
	struct torch_state *st = p->torch;
	int steps = 0;
	size_t kept = 0, i = 0;
	for (; i < st->n_want && steps < WALK_STEPS_PER_FLUSH; i++) {
		struct want_segment *w = &st->want[i];
		unsigned char raw[BLOCK_READ];
		struct torch_block_view b;
		struct torch_segment seg;
		steps++;
		if (read_block(p, w->block, raw, &b) < 0 || !block_live(&b))
			continue;	/* taken back */
		if (torch_mem_in_segment(p->pid, w->device, b.ptr))
			continue;
		int err = walk_segment(p, w->block, w->device, &seg, &steps);
		if (err == 0)
			torch_mem_add_segment(p->pid, &seg);
		else if (err == -EAGAIN)
			st->want[kept++] = *w;	/* again at the next flush */
	}
	for (; i < st->n_want; i++)
		st->want[kept++] = st->want[i];
	st->n_want = kept;
}

/* ---- blocks handed out and taken back --------------------------------------------------------- */

static void torch_on_block_alloc(struct tracee *p, uint64_t dca, uint64_t block, uint64_t requested, uint64_t t_ns,
				 uint32_t stack)
{
	struct torch_state *st = p->torch;
	struct pending *pend;
	if (!st->on || !block)
		return;
	st->allocs++;
	if (!(pend = hashmap_insert(&st->pending, block, NULL)))
		return;
	*pend = (struct pending){ .block = block, .dca = dca, .requested = requested, .t_ns = t_ns ? t_ns : now_ns(),
				  .stack = stack };
}

static void torch_on_block_free(struct tracee *p, uint64_t dca, uint64_t block, uint64_t entry_ns)
{
	struct torch_state *st = p->torch;
	struct pending *pend;
	(void)dca;
	if (!st->on || !block)
		return;
	st->frees++;
	if ((pend = hashmap_find(&st->pending, block)) && pend->t_ns > entry_ns)
		return;	/* of its life before (the free returned after it came back out) */
	if (!hashmap_remove(&st->pending, block, NULL))	/* handed out and back before a read */
		torch_mem_on_free(p->pid, block, entry_ns);
}

/* A CUDA allocation that returned out-of-memory (cudaErrorMemoryAllocation and
 * CUDA_ERROR_OUT_OF_MEMORY are both 2). Made by PyTorch's allocator, it frees its cache and
 * tries again first: only its count of OOMs says it gave up. */
static void note_failed_alloc(struct tracee *p, const struct cuda_call *c)
{
	struct torch_state *st = p->torch;
	bool by_allocator = c->alloc.caller_module && strncmp(c->alloc.caller_module, "libc10_cuda.", 12) == 0;
	st->oom = (struct torch_oom){ .pid = p->pid, .t_ns = c->end_ns, .size = c->alloc.requested * c->alloc.height,
				      .device = c->device, .stack = c->stack, .api = c->spec->name, .error = c->result,
				      .page_bytes = by_allocator && (c->spec->flags & API_PAGES)
							    ? c->alloc.requested : 0 };
	/* The row's stream argument, if it has one (cudaMallocAsync): its position in the API row
	 * is not kept by the event; a request of PyTorch's has its own, read where it can be. */
	st->oom.stream_is = by_allocator && st->on ? TORCH_OOM_STREAM_UNKNOWN
			    : strstr(c->spec->name, "Async") ? TORCH_OOM_STREAM_ARGUMENT : TORCH_OOM_STREAM_NONE;
	if (st->have_held) {	/* of an earlier failure, which the allocator survived */
		torch_shot_free(&st->held);
		st->have_held = false;
	}
	if (!by_allocator || !st->on)
		st->oom_now = true;
}

bool torch_oom_pending(struct tracee *p)
{
	struct torch_state *st = p->torch;
	return st && st->oom.api && !st->oom_now && !st->have_held;
}

/* PyTorch's DeviceCachingAllocator::malloc keeps its request in an AllocParams on its stack,
 * {Block search_key (device, stream, size); BlockPool *pool; size_t alloc_size; ...}, and asks
 * CUDA for alloc_size bytes: found above the failed call's sp as the device's pool (one of its
 * two) followed by the failed request's size, its search_key checked (no pool, no ptr, nothing
 * requested, not allocated, a size rounded to 512 not above the request). An expandable
 * segment's page (cuMemCreate) is not the request: there any alloc_size the checked search_key
 * fits is, and becomes the request's size (the "Tried to allocate" of PyTorch's message). */
#define PARAMS_SCAN 16384		/* bytes of stack looked at, above sp */

void torch_oom_read_request(struct tracee *p, uint64_t sp)
{
	struct torch_state *st = p->torch;
	if (!st || !st->on || st->layout < 0 || st->oom.stream_is != TORCH_OOM_STREAM_UNKNOWN || !st->oom.size)
		return;
	const struct block_layout *L = st->layout < N_LAYOUTS ? &layouts[st->layout] : &st->found;
	size_t key = (size_t)L->expandable + 8, n = PARAMS_SCAN;
	unsigned char *buf = malloc(n);
	while (buf && n >= 512 && mem_read(p->pid, sp, buf, n) < 0)
		n /= 2;	/* the stack's top is nearer */
	for (size_t off = key; buf && n >= 512 && off + 16 <= n; off += 8) {
		uint64_t pool = u64_at(buf, off), dca = 0;
		for (int d = 0; d < TORCH_MAX_DEVICES && !dca; d++)
			if (st->dca[d] && (pool == st->dca[d] + LARGE_POOL_AT || pool == st->dca[d] + SMALL_POOL_AT))
				dca = st->dca[d];
		uint64_t alloc_size = u64_at(buf, off + 8);
		if (!dca || (st->oom.page_bytes ? alloc_size % 512 != 0 : alloc_size != st->oom.size))
			continue;
		struct torch_block_view b;
		parse_with(buf + off - key, L, &b);
		if (b.pool || b.ptr || b.allocated || b.requested || !b.size || b.size % 512 || b.size > alloc_size)
			continue;
		st->oom.size = alloc_size;
		st->oom.stream = b.stream;
		st->oom.stream_is = TORCH_OOM_STREAM_READ;
		break;
	}
	free(buf);
}

void torch_oom_instant(struct tracee *p, bool held)
{
	if (p->torch)
		p->torch->instant = held;
}

void torch_oom_hold(struct tracee *p, struct torch_shot *s)
{
	struct torch_state *st = p->torch;
	st->held = *s;
	st->have_held = true;
	*s = (struct torch_shot){ 0 };
}

bool torch_take_oom(struct tracee *p, struct torch_oom *out, struct torch_shot *held, bool *have_held)
{
	struct torch_state *st = p->torch;
	*have_held = false;
	if (!st || !st->oom_now)
		return false;
	*out = st->oom;
	out->pid = p->pid;
	out->held = st->instant;
	if (st->have_held) {
		*held = st->held;
		*have_held = out->held = true;
		st->have_held = false;
	}
	st->oom_now = false;
	st->oom = (struct torch_oom){ .device = -1 };
	return true;
}

static void torch_on_call(struct tracee *p, const struct cuda_call *c)
{
	if (c->op == OP_ALLOC && c->returned && c->result == 2 && c->counted && p->torch)
		note_failed_alloc(p, c);
	if (c->tallied && launchring_quiet_blocks(p))
		return;	/* the tallies' table of Blocks tells it (torch_flush) */
	if (c->op == OP_TORCH_ALLOC)	/* this, the Block it returned, the size asked for */
		torch_on_block_alloc(p, c->torch.allocator, c->torch.block, c->torch.requested, c->end_ns, c->stack);
	else if (c->op == OP_TORCH_FREE)	/* this, the Block; when the free began */
		torch_on_block_free(p, c->torch.allocator, c->torch.block, c->end_ns > c->ns ? c->end_ns - c->ns : 0);
}


static void block_read(struct tracee *p, struct pending *pend, const unsigned char *raw)
{
	struct torch_state *st = p->torch;
	struct torch_block_view b;
	if (st->layout < 0) {
		int l = layout_that_fits(p, raw, pend->requested, 0);
		if (l >= 0)
			choose_layout(p, st, l);
	}
	if (st->layout >= 0)
		block_parse(p, raw, st->layout, &b);
	if (st->layout < 0 || !block_live(&b) || b.requested != pend->requested) {
		pend->tries++;	/* taken back and reused while it was read? Again later */
		return;
	}
	struct torch_block tb = { .block = pend->block, .ptr = b.ptr, .size = b.size, .requested = b.requested,
				  .stream = b.stream, .t_ns = pend->t_ns, .stack = pend->stack, .device = (int8_t)b.device,
				  .expandable = b.expandable };
	learn_dca(p, b.device, pend->dca);
	torch_mem_on_alloc(p->pid, &tb);
	struct table_life *life = pend->tsc ? hashmap_insert(&st->lives, pend->block, NULL) : NULL;
	if (life)
		*life = (struct table_life){ pend->block, pend->tsc };
	if (!torch_mem_in_segment(p->pid, b.device, b.ptr))
		want_segment(p, pend->block, b.device);
	st->bad_in_a_row = 0;
	pend->done = true;
}

/* A block that could not be read right TRIES times: counted unread; many in a row say that
 * the Block is not laid out as gputop knows it, once. */
static void give_up(struct tracee *p, struct pending *pend)
{
	struct torch_state *st = p->torch;
	(void)pend;
	torch_mem_on_unread(p->pid);
	if (++st->bad_in_a_row >= BAD_IN_A_ROW && !st->said_bad) {
		st->said_bad = true;
		const char *why = "its Blocks do not read as in the PyTorch versions gputop knows: blocks not shown";
		log_warn("PyTorch's caching allocator in %d: %s", p->pid, why);
		torch_mem_set_state(p->pid, TORCH_NOT_READ, why);
	}
}

/* Every Block the entries of map m key (their first word), read MEM_READV_MAX at a system call
 * (one by one where a batch fails): on(p, entry, raw), raw NULL where it could not be read.
 * on must not insert into m or remove from it. */
static void read_blocks_of(struct tracee *p, struct hashmap *m,
			   void (*on)(struct tracee *p, void *entry, const unsigned char *raw))
{
	unsigned char (*raw)[BLOCK_READ] = torch_alloc.raw;
	struct mem_range r[MEM_READV_MAX];
	void *entry[MEM_READV_MAX];
	size_t it = 0;
	for (bool more = true; more;) {
		int n = 0;
		more = false;
		for (uint64_t *key; (key = hashmap_next(m, &it));) {
			entry[n] = key;
			r[n] = (struct mem_range){ *key, raw[n], BLOCK_READ };
			if (++n == MEM_READV_MAX) {
				more = true;
				break;
			}
		}
		bool all = n && mem_readv(p->pid, r, n) == 0;
		for (int i = 0; i < n; i++)
			on(p, entry[i], all || mem_read(p->pid, r[i].addr, raw[i], BLOCK_READ) == 0 ? raw[i] : NULL);
	}
}

static void on_pending(struct tracee *p, void *entry, const unsigned char *raw)
{
	struct pending *pend = entry;
	if (raw)
		block_read(p, pend, raw);
	else
		pend->tries++;
}

/* Reads the pending Blocks; those read, and those tried TRIES times, leave the table. */
static void read_pending(struct tracee *p)
{
	struct torch_state *st = p->torch;
	size_t it = 0;
	read_blocks_of(p, &st->pending, on_pending);
	for (struct pending *pend; (pend = hashmap_next(&st->pending, &it));) {
		if (pend->tries <= (pend->tsc ? TABLE_TRIES : TRIES) && !pend->done)
			continue;	/* again at the next flush */
		if (!pend->done)
			give_up(p, pend);
		hashmap_remove(&st->pending, pend->block, NULL);
	}
}

int torch_block_read(struct tracee *p, uint64_t at, struct torch_block_view *b)
{
	unsigned char raw[BLOCK_READ];
	if (!p->torch || !p->torch->on || p->torch->layout < 0)
		return -ENODATA;
	return read_block(p, at, raw, b);
}

bool torch_followed(struct tracee *p)
{
	return p->torch && p->torch->on && p->torch->layout >= 0;
}

uint64_t torch_device_allocator(struct tracee *p, int device)
{
	return p->torch && device >= 0 && device < TORCH_MAX_DEVICES ? p->torch->dca[device] : 0;
}

/* ---- the Blocks the stubs keep in place ------------------------------------------------------ */

/* A life the table told of: read at the flush, as a record's Block is. */
static void table_came(struct tracee *p, const struct tallies_alloc *a, void *arg)
{
	struct torch_state *st = p->torch;
	struct pending *pend = hashmap_insert(&st->pending, a->addr, NULL);
	(void)arg;
	hashmap_remove(&st->before, a->addr, NULL);	/* its life from before gputop is over */
	if (pend)	/* a life still unread is replaced: gone, and its gone is told later */
		*pend = (struct pending){ .block = a->addr, .dca = a->thread, .requested = a->bytes,
					  .t_ns = retfast_tsc_to_mono(a->tsc), .tsc = a->tsc, .stack = STACK_NONE };
}

/* A life that ended: unread, it never reaches the figures; in them, it leaves (a later life of
 * the Block, read already, stays). */
static void table_gone(struct tracee *p, uint64_t block, uint64_t tsc, void *arg)
{
	struct torch_state *st = p->torch;
	struct pending *pend = hashmap_find(&st->pending, block);
	struct table_life *life = hashmap_find(&st->lives, block);
	(void)arg;
	if (pend && pend->tsc == tsc) {
		hashmap_remove(&st->pending, block, NULL);
	} else if (life && life->tsc == tsc) {
		hashmap_remove(&st->lives, block, NULL);
		torch_mem_on_free(p->pid, block, UINT64_MAX);
	}
}

/* A block from before gputop, read again: one no longer handed out (or handed out anew, which
 * the table then tells) leaves the figures now, and the map after the read. */
static void on_before(struct tracee *p, void *entry, const unsigned char *raw)
{
	struct before_block *bb = entry;
	struct torch_block_view b;
	if (raw)
		block_parse(p, raw, p->torch->layout, &b);
	if (!bb->ptr || (raw && block_live(&b) && b.ptr == bb->ptr))
		return;	/* told already (no memory to drop it then), or live */
	torch_mem_on_free(p->pid, bb->block, UINT64_MAX);
	bb->ptr = 0;
}

#define BEFORE_CHECK_NS 100000000ull
static void check_before(struct tracee *p)
{
	struct torch_state *st = p->torch;
	uint64_t now = now_ns();
	if (!hashmap_count(&st->before) || st->layout < 0 || now - st->before_checked_ns < BEFORE_CHECK_NS)
		return;
	st->before_checked_ns = now;
	read_blocks_of(p, &st->before, on_before);
	/* Removal moves entries back (hashmap.h): the keys first, then the removals. */
	size_t n = 0, cap = hashmap_count(&st->before), it = 0;
	uint64_t *gone = malloc(cap * sizeof *gone);
	for (struct before_block *bb; gone && (bb = hashmap_next(&st->before, &it));)
		if (!bb->ptr)
			gone[n++] = bb->block;
	for (size_t i = 0; i < n; i++)
		hashmap_remove(&st->before, gone[i], NULL);
	free(gone);
}

static void note_before(struct tracee *p, uint64_t block, uint64_t ptr)
{
	struct before_block *bb = hashmap_insert(&p->torch->before, block, NULL);
	if (bb)
		*bb = (struct before_block){ block, ptr };
}

/* What the stubs counted of the allocator's calls (a consumer's .tallied): while the table
 * tells the Blocks, the calls handed out and taken back, and those whose Block the table could
 * not keep (no record to read it from at the return, or no room): blocks unread. */
static void torch_on_tallied(struct tracee *p, const struct cuda_tally *t)
{
	struct torch_state *st = p->torch;
	if (!st || !st->on || !launchring_quiet_blocks(p))
		return;
	if (t->spec->op == OP_TORCH_ALLOC) {
		st->allocs += t->calls;
		for (uint64_t i = 0; i < t->untimed + t->unmatched; i++)
			torch_mem_on_unread(p->pid);
	} else if (t->spec->op == OP_TORCH_FREE) {
		st->frees += t->calls;
	}
}

static const struct tallies_blocks_reader table_reader = { .gone = table_gone, .came = table_came };

/* After each drain of the recorded calls (a consumer's .drained): the Blocks handed out
 * meanwhile are read (those taken back in the same drain are never read), segments are found,
 * the statistics read. While the stubs keep the Blocks in place (no record of them), only
 * with the tallies (tallied): every 50 ms on the tick, and on every other drain. */
static void torch_flush(struct tracee *p, bool tallied)
{
	struct torch_state *st = p->torch;
	if (!st || !st->on || (!tallied && launchring_quiet_blocks(p)) || !check_backend(p))
		return;
	if (st->allocs || st->frees)
		torch_mem_count(p->pid, st->allocs, st->frees);
	st->allocs = st->frees = 0;
	if (launchring_quiet_blocks(p)) {
		tallies_blocks(p, &table_reader, NULL);
		check_before(p);
	}
	read_pending(p);
	find_segments(p);
	read_all_stats(p);
}

const struct cuda_consumer torch_consumer = {
	.name = "PyTorch's memory",
	.call = torch_on_call,
	.tallied = torch_on_tallied,
	.drained = torch_flush,
	.gone = torch_forget,
};

/* ---- blocks live before gputop came -------------------------------------------------------- */

/* Whether the 32 bytes at p read as an empty or used ska::flat_hash_map with its default load
 * factor (0.5): power-of-two slots and the shift that goes with them. */
static bool map_header_ok(const unsigned char *p)
{
	uint64_t slots = u64_at(p, 8) + 1, elements = u64_at(p, 24);
	int8_t shift = (int8_t)p[16], lookups = (int8_t)p[17];
	float lf;
	memcpy(&lf, p + 20, sizeof lf);
	if (lf != 0.5f || lookups < 3 || lookups > 64 || !u64_at(p, 0))
		return false;
	if (slots == 1)
		return elements == 0 && shift == 63;
	return (slots & (slots - 1)) == 0 && slots <= MAX_ENTRIES && elements <= slots &&
	       shift == 64 - __builtin_ctzll(slots);
}

/* Where the 67 tables of allocated blocks begin in the NativeCachingAllocator read into obj
 * (len bytes): where PyTorch 2.x puts them, else the first place 67 such tables follow one
 * another. -1: nowhere. */
static long find_maps(const unsigned char *obj, size_t len)
{
	long at[] = { MAPS_AT, -1 };
	for (long off = 8; at[1] < 0 && off + SHARDS * MAP_SIZE <= (long)len; off += 8) {
		int k = 0;
		while (k < SHARDS && map_header_ok(obj + off + k * MAP_SIZE))
			k++;
		if (k == SHARDS)
			at[1] = off;
	}
	for (int i = 0; i < 2; i++) {
		int k = 0;
		while (at[i] >= 0 && at[i] + SHARDS * MAP_SIZE <= (long)len && k < SHARDS &&
		       map_header_ok(obj + at[i] + k * MAP_SIZE))
			k++;
		if (k == SHARDS)
			return at[i];
	}
	return -1;
}

struct entry_pair {
	uint64_t ptr, block;
};

/* The (pointer, Block) pairs of one table (header at h). */
static int map_entries(struct tracee *p, const unsigned char *h, struct entry_pair **pairs, size_t *n, size_t *cap)
{
	uint64_t elements = u64_at(h, 24), slots = u64_at(h, 8) + (uint64_t)(int8_t)h[17];
	if (!elements)
		return 0;
	unsigned char *e = malloc(slots * ENTRY_SIZE);
	if (!e)
		return -ENOMEM;
	int err = mem_read(p->pid, u64_at(h, 0), e, slots * ENTRY_SIZE);
	uint64_t found = 0;
	for (uint64_t i = 0; err == 0 && i < slots; i++) {
		const unsigned char *x = e + i * ENTRY_SIZE;
		if ((int8_t)x[0] < 0)
			continue;
		if (*n == *cap) {
			size_t c = *cap ? 2 * *cap : 1024;
			struct entry_pair *grown = realloc(*pairs, c * sizeof *grown);
			if (!grown) {
				err = -ENOMEM;
				break;
			}
			*pairs = grown;
			*cap = c;
		}
		(*pairs)[(*n)++] = (struct entry_pair){ u64_at(x, 8), u64_at(x, 16) };
		found++;
	}
	free(e);
	return err ? err : found == elements ? 0 : -EINVAL;
}

/* A device's DeviceCachingAllocator from a block's pool (one of its two default pools, whose
 * owner says which device it is): checked by its statistics, which must count at least the
 * block's bytes allocated (zeros would check: a CUDA graph's pool is elsewhere). */
static void dca_from_pool(struct tracee *p, int device, uint64_t pool, uint64_t size)
{
	struct torch_state *st = p->torch;
	static const uint64_t pools[] = { LARGE_POOL_AT, SMALL_POOL_AT };
	for (size_t i = 0; i < 2 && device >= 0 && device < TORCH_MAX_DEVICES && !st->dca[device]; i++) {
		uint64_t dca = pool - pools[i];
		int8_t id;
		int64_t s[STATS_BYTES / 8];
		if (pool > pools[i] && mem_read(p->pid, dca + DEVICE_ID_AT, &id, 1) == 0 && id == device &&
		    read_stats(p, dca, s) == 0 && stat_cur(s, ST_ALLOCATED_BYTES, 0) >= (int64_t)size)
			learn_dca(p, device, dca);
	}
}

/* Reads the blocks of `pairs` and records those that check (with layout l, or the first that
 * fits). The number recorded; -EINVAL when too few of them check. */
static long record_before(struct tracee *p, const struct entry_pair *pairs, size_t n)
{
	struct torch_state *st = p->torch;
	unsigned char (*raw)[BLOCK_READ] = torch_alloc.raw;
	struct mem_range r[MEM_READV_MAX];
	size_t good = 0;
	for (size_t at = 0; at < n; at += MEM_READV_MAX) {
		int k = n - at < MEM_READV_MAX ? (int)(n - at) : MEM_READV_MAX;
		for (int i = 0; i < k; i++)
			r[i] = (struct mem_range){ pairs[at + i].block, raw[i], BLOCK_READ };
		if (mem_readv(p->pid, r, k) < 0)
			for (int i = 0; i < k; i++)
				if (mem_read(p->pid, r[i].addr, raw[i], BLOCK_READ) < 0)
					memset(raw[i], 0, BLOCK_READ);
		for (int i = 0; i < k; i++) {
			const struct entry_pair *e = &pairs[at + i];
			struct torch_block_view b;
			if (st->layout < 0) {
				int l = layout_that_fits(p, raw[i], 0, e->ptr);
				if (l >= 0)
					choose_layout(p, st, l);
			}
			if (st->layout < 0)
				continue;
			block_parse(p, raw[i], st->layout, &b);
			if (!block_live(&b) || b.ptr != e->ptr)
				continue;	/* caught in the middle of a change: left out */
			struct torch_block tb = { .block = e->block, .ptr = b.ptr, .size = b.size,
						  .requested = b.requested, .stream = b.stream, .stack = STACK_NONE,
						  .device = (int8_t)b.device, .expandable = b.expandable };
			torch_mem_on_alloc(p->pid, &tb);
			note_before(p, e->block, b.ptr);
			want_segment(p, e->block, b.device);
			dca_from_pool(p, b.device, b.pool, b.size);
			good++;
		}
	}
	/* A table read while a thread stood inside an update may hold a stale entry or two. */
	return n && good * 100 < n * 99 ? -EINVAL : (long)good;
}

/* The blocks live in the allocator's table of allocated blocks, read while every thread is held
 * (the attach's stop). Why not, when they cannot be: said in the figures. */
static void read_before(struct tracee *p, uint64_t native, const char **why)
{
	unsigned char obj[NATIVE_READ];
	size_t len = sizeof obj;
	struct entry_pair *pairs = NULL;
	size_t n = 0, cap = 0;
	*why = NULL;
	if (!native) {
		*why = "blocks before attach unknown: the allocator's object has no symbol in libc10_cuda.so";
		return;
	}
	if (mem_read(p->pid, native, obj, len) < 0 &&	/* at the end of its mapping? */
	    mem_read(p->pid, native, obj, len = MAPS_AT + SHARDS * MAP_SIZE) < 0) {
		*why = "blocks before attach unknown: the allocator's object cannot be read";
		return;
	}
	long at = find_maps(obj, len);
	if (at < 0) {
		*why = "blocks before attach unknown: the allocator's table of blocks is not laid out as gputop knows";
		return;
	}
	int err = 0;
	for (int i = 0; i < SHARDS && err == 0; i++)
		err = map_entries(p, obj + at + i * MAP_SIZE, &pairs, &n, &cap);
	long got = err == 0 ? record_before(p, pairs, n) : err;
	free(pairs);
	if (got < 0) {
		*why = err == -ENOMEM ? "blocks before attach unknown: out of memory"
				      : "blocks before attach unknown: the allocator's table did not read consistently";
		return;
	}
	log_debug("%d: PyTorch's caching allocator: %ld blocks live before gputop came (table at +%ld)", p->pid,
		  got, at);
}

/* ---- the library --------------------------------------------------------------------------- */

/* Whether the allocator in use is the native one (else cudaMallocAsync's, whose memory the CUDA
 * API's rows show): false says so and stops following. Its pointer is set by a static
 * initializer: a library just loaded has not run it yet (0, or not relocated yet: an offset in
 * the library), it is asked again at each flush. */
static bool check_backend(struct tracee *p)
{
	struct torch_state *st = p->torch;
	uint64_t in_use = 0;
	if (!st->backend || mem_read(p->pid, st->backend, &in_use, sizeof in_use) < 0 ||
	    in_use < st->module_size)
		return true;
	st->backend = 0;	/* asked */
	if (!st->native)
		st->native = in_use;
	if (in_use == st->native)
		return true;
	torch_mem_set_state(p->pid, TORCH_UNKNOWN, "PyTorch uses another allocator backend "
			    "(PYTORCH_CUDA_ALLOC_CONF backend:cudaMallocAsync?): its memory shows as "
			    "cudaMallocAsync allocations");
	st->on = false;
	return false;
}

void torch_on_module(struct tracee *p, const struct module *m, const uint64_t sym[TORCH_SYM_COUNT], unsigned probed_ops,
		     bool before_gputop)
{
	struct torch_state *st = p->torch;
	pid_t pid = p->pid;
	unsigned all = (1u << (OP_TORCH_FREE - OP_TORCH_ALLOC + 1)) - 1;
	if ((probed_ops & all) != all) {
		const char *why = probed_ops ? "not every function of PyTorch's caching allocator that gputop probes "
					       "could be probed: memory by tensor not shown"
					     : "PyTorch's caching allocator is not one gputop knows (its functions "
					       "were not found by their names): memory by tensor not shown";
		torch_mem_set_state(pid, TORCH_UNKNOWN, why);
		if (log_first("torch: allocator not known"))
			log_info("%s: %s", m->base, why);
		return;
	}
	st->on = true;
	st->module = m->id;
	st->native = sym[TORCH_SYM_NATIVE] ? sym[TORCH_SYM_NATIVE] : sym[TORCH_SYM_NATIVE_OLD];
	st->backend = sym[TORCH_SYM_BACKEND];
	st->module_size = m->end - m->start;
	torch_mem_set_state(pid, TORCH_TRACKING, NULL);
	if (!check_backend(p))
		return;
	torch_mem_set_attach(pid, now_ns());
	if (!before_gputop) {
		torch_mem_set_before(pid, TORCH_BEFORE_NONE, NULL, 0);
		return;
	}
	const char *why;
	read_before(p, st->native, &why);
	torch_mem_set_before(pid, why ? TORCH_BEFORE_UNKNOWN : TORCH_BEFORE_READ, why, (uint32_t)threads_count(p));
	if (why)
		log_info("%d: PyTorch's caching allocator: %s", pid, why);
	read_all_stats(p);
}

void torch_on_module_gone(struct tracee *p, const struct module *m)
{
	struct torch_state *st = p->torch;
	if (!st->on || st->module != m->id)
		return;
	torch_forget(p);
	torch_mem_set_state(p->pid, TORCH_ABSENT, NULL);
}
