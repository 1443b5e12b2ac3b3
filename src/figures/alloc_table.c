/* alloc_table.c — owns the live-allocation records (alloc_table.h): a hash map by address and
 * a treap of the device/managed address ranges. It stores and finds; it takes no lock, counts
 * no bytes and never touches the traced program (stats.c does the locking and the counting).
 *
 * Memory bound (part of stats.c's product promise): an open-addressing hash map kept between
 * 1/8 and 1/2 full, so at most 8 slots (40 B each) per live allocation and never below
 * ALLOC_MIN_CAP — it shrinks again when they are freed, so a million malloc/free pairs cost no
 * more than one — plus one 32 B interval-tree node per device/managed allocation live at the
 * peak. So at most ~350 B per allocation the program itself holds live (at its peak); nothing
 * grows with the number of calls.
 *
 * Interior-pointer lookups (stats_is_device_ptr) use a treap of the device/managed intervals:
 * O(log n) expected for insert, delete and lookup, no allocation once its node pool is warm,
 * and no rebuild spikes. A lazily sorted array would re-sort on every alloc/copy/free cycle
 * (common with cudaMemcpy kind "default"), which costs O(n log n) in the tracer's hot path. */
#include "alloc_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ALLOC_MIN_CAP	256u		/* hash slots; a power of two */

/* Live allocations by address; addr == 0 marks an empty slot (nothing lives at NULL). */
struct alloc_map {
	struct stats_alloc *slot;
	size_t cap;		/* a power of two; load kept in [1/8, 1/2] above the minimum */
	size_t count;
};

/* Treap of [start, end) intervals of live device/managed allocations, which never overlap. */
struct itree_node {
	uint64_t start, end;
	uint32_t left, right;	/* 0 = none; left also links the free list */
	uint32_t prio;
};

struct itree {
	struct itree_node *node;	/* node[0] is unused so that 0 can mean "none" */
	uint32_t cap, used, free_list, root;
	uint32_t rng;
};

struct alloc_table {
	struct alloc_map map;
	struct itree tree;
};

/* ---- live-allocation hash map ---- */

/* CUDA addresses are 256-byte aligned or more: mix all bits before masking. */
static size_t alloc_map_hash(uint64_t addr)
{
	addr ^= addr >> 30;
	addr *= 0xbf58476d1ce4e5b9ull;
	addr ^= addr >> 27;
	addr *= 0x94d049bb133111ebull;
	addr ^= addr >> 31;
	return (size_t)addr;
}

/* Slot holding addr, or m->cap when absent. The load limit guarantees an empty slot. */
static size_t alloc_map_find(const struct alloc_map *m, uint64_t addr)
{
	size_t mask = m->cap - 1;

	for (size_t i = alloc_map_hash(addr) & mask;; i = (i + 1) & mask) {
		if (m->slot[i].addr == addr)
			return i;
		if (!m->slot[i].addr)
			return m->cap;
	}
}

static void alloc_map_place(struct alloc_map *m, const struct stats_alloc *a)
{
	size_t mask = m->cap - 1;
	size_t i = alloc_map_hash(a->addr) & mask;

	while (m->slot[i].addr)
		i = (i + 1) & mask;
	m->slot[i] = *a;
	m->count++;
}

static int alloc_map_resize(struct alloc_map *m, size_t cap)
{
	struct stats_alloc *old = m->slot;
	size_t old_cap = m->cap;
	struct stats_alloc *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	m->slot = slot;
	m->cap = cap;
	m->count = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].addr)
			alloc_map_place(m, &old[i]);
	free(old);
	return 0;
}

static int alloc_map_put(struct alloc_map *m, const struct stats_alloc *a)
{
	/* If growing fails, fill up further rather than lose the record; one empty slot must
	 * stay so that lookups end. */
	if ((m->count + 1) * 2 > m->cap && alloc_map_resize(m, m->cap * 2) < 0 &&
	    m->count + 2 > m->cap)
		return -ENOMEM;
	alloc_map_place(m, a);
	return 0;
}

/* Backward-shift delete: no tombstones, so churn never fills the table. */
static void alloc_map_remove_at(struct alloc_map *m, size_t i)
{
	size_t mask = m->cap - 1;

	for (size_t j = (i + 1) & mask; m->slot[j].addr; j = (j + 1) & mask) {
		size_t home = alloc_map_hash(m->slot[j].addr) & mask;

		/* The entry at j may fill the hole at i only if i lies between its home and j. */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->slot[i] = m->slot[j];
			i = j;
		}
	}
	m->slot[i].addr = 0;
	m->count--;
	if (m->cap > ALLOC_MIN_CAP && m->count * 8 < m->cap)
		alloc_map_resize(m, m->cap / 2);	/* on failure it simply stays larger */
}

/* ---- interval treap ---- */

#define N(t, i) ((t)->node[i])

static uint32_t itree_node_new(struct itree *t)
{
	uint32_t i = t->free_list;

	if (i) {
		t->free_list = N(t, i).left;
		return i;
	}
	if (t->used + 1 >= t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 64;
		struct itree_node *node;

		if (t->cap > UINT32_MAX / 2)
			return 0;
		node = realloc(t->node, (size_t)cap * sizeof(*node));
		if (!node)
			return 0;
		t->node = node;
		t->cap = cap;
	}
	return ++t->used;
}

static void itree_node_put(struct itree *t, uint32_t i)
{
	N(t, i).left = t->free_list;
	t->free_list = i;
}

/* Joins two treaps where every start in a is below every start in b. */
static uint32_t itree_merge(struct itree *t, uint32_t a, uint32_t b)
{
	if (!a || !b)
		return a ? a : b;
	if (N(t, a).prio > N(t, b).prio) {
		N(t, a).right = itree_merge(t, N(t, a).right, b);
		return a;
	}
	N(t, b).left = itree_merge(t, a, N(t, b).left);
	return b;
}

/* Splits i into starts below key (*lo) and starts at or above it (*hi). */
static void itree_split(struct itree *t, uint32_t i, uint64_t key, uint32_t *lo, uint32_t *hi)
{
	if (!i) {
		*lo = *hi = 0;
	} else if (N(t, i).start < key) {
		itree_split(t, N(t, i).right, key, &N(t, i).right, hi);
		*lo = i;
	} else {
		itree_split(t, N(t, i).left, key, lo, &N(t, i).left);
		*hi = i;
	}
}

static int itree_insert(struct itree *t, uint64_t start, uint64_t end)
{
	uint32_t i = itree_node_new(t), lo, hi;

	if (!i)
		return -ENOMEM;
	t->rng ^= t->rng << 13;		/* xorshift32: priorities need only be spread */
	t->rng ^= t->rng >> 17;
	t->rng ^= t->rng << 5;
	N(t, i) = (struct itree_node){ .start = start, .end = end, .prio = t->rng };
	itree_split(t, t->root, start, &lo, &hi);
	t->root = itree_merge(t, itree_merge(t, lo, i), hi);
	return 0;
}

static void itree_remove(struct itree *t, uint64_t start)
{
	uint32_t lo, mid, hi;

	if (start == UINT64_MAX)
		return;
	itree_split(t, t->root, start, &lo, &hi);
	itree_split(t, hi, start + 1, &mid, &hi);
	if (mid)
		itree_node_put(t, mid);		/* starts are unique: mid is one node */
	t->root = itree_merge(t, lo, hi);
}

/* The interval with the greatest start <= addr, or 0. */
static uint32_t itree_floor(const struct itree *t, uint64_t addr)
{
	uint32_t best = 0;

	for (uint32_t i = t->root; i;) {
		if (N(t, i).start <= addr) {
			best = i;
			i = N(t, i).right;
		} else {
			i = N(t, i).left;
		}
	}
	return best;
}

/* ---- the table ---- */

/* Device and managed memory is what kernels address: only its ranges go in the treap. */
static bool alloc_table_in_tree(const struct stats_alloc *a)
{
	return (a->kind == MEM_DEVICE || a->kind == MEM_MANAGED) && a->bytes;
}

/* The end of a's range, clamped where it would wrap around. */
static uint64_t alloc_table_end(const struct stats_alloc *a)
{
	return a->addr + a->bytes < a->addr ? UINT64_MAX : a->addr + a->bytes;
}

struct alloc_table *alloc_table_new(void)
{
	struct alloc_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->map.slot = calloc(ALLOC_MIN_CAP, sizeof(*t->map.slot));
	if (!t->map.slot) {
		free(t);
		return NULL;
	}
	t->map.cap = ALLOC_MIN_CAP;
	t->tree.rng = 2463534242u;
	return t;
}

void alloc_table_free(struct alloc_table *t)
{
	if (!t)
		return;
	free(t->map.slot);
	free(t->tree.node);
	free(t);
}

int alloc_table_put(struct alloc_table *t, const struct stats_alloc *a)
{
	if (alloc_map_put(&t->map, a) < 0)
		return -ENOMEM;
	/* If the treap cannot take it, only interior-pointer lookups miss it. */
	if (alloc_table_in_tree(a))
		itree_insert(&t->tree, a->addr, alloc_table_end(a));
	return 0;
}

bool alloc_table_remove(struct alloc_table *t, uint64_t addr, struct stats_alloc *gone)
{
	size_t i = alloc_map_find(&t->map, addr);

	if (i == t->map.cap)
		return false;
	*gone = t->map.slot[i];
	if (alloc_table_in_tree(gone))
		itree_remove(&t->tree, gone->addr);
	alloc_map_remove_at(&t->map, i);
	return true;
}

void alloc_table_forget_overlaps(struct alloc_table *t, const struct stats_alloc *a,
				 alloc_table_gone_fn *gone, void *arg)
{
	uint64_t start = a->addr, end = alloc_table_end(a);
	uint32_t i;

	if (!alloc_table_in_tree(a))
		return;
	while ((i = itree_floor(&t->tree, end - 1)) && N(&t->tree, i).end > start) {
		uint64_t old = N(&t->tree, i).start;
		struct stats_alloc rec;

		if (alloc_table_remove(t, old, &rec))
			gone(&rec, arg);
		else
			itree_remove(&t->tree, old);	/* a node without a record: never loop */
	}
}

bool alloc_table_on_device(const struct alloc_table *t, uint64_t addr)
{
	uint32_t i = itree_floor(&t->tree, addr);

	return i && addr < N(&t->tree, i).end;
}

const struct stats_alloc *alloc_table_next(const struct alloc_table *t, size_t *pos)
{
	for (; *pos < t->map.cap; (*pos)++)
		if (t->map.slot[*pos].addr)
			return &t->map.slot[(*pos)++];
	return NULL;
}

size_t alloc_table_count(const struct alloc_table *t)
{
	return t->map.count;
}

size_t alloc_table_capacity(const struct alloc_table *t)
{
	return t->map.cap;
}
