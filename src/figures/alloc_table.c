/* alloc_table.c — owns the live-allocation records (alloc_table.h): a hash map by address and
 * a treap of the device/managed address ranges. It stores and finds; it takes no lock, counts
 * no bytes and never touches the traced program (stats.c does the locking and the counting).
 *
 * Memory bound (part of stats.c's product promise): a hash map (hashmap.h) kept between
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
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

#define ALLOC_MIN_CAP	256u		/* hash slots; a power of two */

_Static_assert(offsetof(struct stats_alloc, addr) == 0, "a hashmap entry begins with its key");

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
	struct hashmap map;		/* struct stats_alloc by addr (its first member, never 0) */
	struct itree tree;
};

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
	if (hashmap_init(&t->map, sizeof(struct stats_alloc), ALLOC_MIN_CAP, HASHMAP_SHRINK) < 0) {
		free(t);
		return NULL;
	}
	t->tree.rng = 2463534242u;
	return t;
}

void alloc_table_free(struct alloc_table *t)
{
	if (!t)
		return;
	hashmap_clear(&t->map);
	free(t->tree.node);
	free(t);
}

int alloc_table_put(struct alloc_table *t, const struct stats_alloc *a)
{
	struct stats_alloc *rec = hashmap_insert(&t->map, a->addr, NULL);

	if (!rec)
		return -ENOMEM;
	*rec = *a;
	/* If the treap cannot take it, only interior-pointer lookups miss it. */
	if (alloc_table_in_tree(a))
		itree_insert(&t->tree, a->addr, alloc_table_end(a));
	return 0;
}

bool alloc_table_remove(struct alloc_table *t, uint64_t addr, struct stats_alloc *gone)
{
	if (!hashmap_remove(&t->map, addr, gone))
		return false;
	if (alloc_table_in_tree(gone))
		itree_remove(&t->tree, gone->addr);
	return true;
}

struct stats_alloc *alloc_table_find(struct alloc_table *t, uint64_t addr)
{
	return addr ? hashmap_find(&t->map, addr) : NULL;
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

int alloc_table_device_at(const struct alloc_table *t, uint64_t addr)
{
	uint32_t i = itree_floor(&t->tree, addr);
	if (!i || addr >= N(&t->tree, i).end)
		return -1;
	const struct stats_alloc *a = hashmap_find(&t->map, N(&t->tree, i).start);
	return a ? a->device : -1;
}

const struct stats_alloc *alloc_table_next(const struct alloc_table *t, size_t *pos)
{
	return hashmap_next(&t->map, pos);
}

size_t alloc_table_count(const struct alloc_table *t)
{
	return hashmap_count(&t->map);
}

size_t alloc_table_capacity(const struct alloc_table *t)
{
	return hashmap_capacity(&t->map);
}
