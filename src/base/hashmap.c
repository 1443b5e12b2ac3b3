/* hashmap.c — owns the hash map behind hashmap.h: probing, growth and shrinking, backward-shift
 * removal and the iteration order that lets a caller remove what it is iterating over. */
#include "hashmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HASHMAP_MIN_CAP 8u

static inline unsigned char *hashmap_entry(const struct hashmap *m, size_t i)
{
	return m->slot + i * m->entry_size;
}

static inline uint64_t hashmap_key(const struct hashmap *m, size_t i)
{
	return *(const uint64_t *)hashmap_entry(m, i);
}

/* Fibonacci hashing on the top bits, after folding the high half in: addresses are aligned
 * (their low bits are zero) and tids are small, so every bit must reach the ones kept. */
static inline size_t hashmap_home(const struct hashmap *m, uint64_t key)
{
	return (size_t)(((key ^ (key >> 32)) * 0x9e3779b97f4a7c15ull) >> m->shift);
}

/* The slot holding key, or the empty slot where it would go (m->cap > 0, key != 0). The load
 * limit leaves an empty slot, so the walk ends. */
static size_t hashmap_probe(const struct hashmap *m, uint64_t key)
{
	size_t mask = m->cap - 1;

	for (size_t i = hashmap_home(m, key);; i = (i + 1) & mask) {
		uint64_t k = hashmap_key(m, i);

		if (k == key || !k)
			return i;
	}
}

static size_t hashmap_round_cap(size_t n)
{
	size_t cap = HASHMAP_MIN_CAP;

	while (cap < n)
		cap *= 2;
	return cap;
}

static int hashmap_resize(struct hashmap *m, size_t cap)
{
	unsigned char *old = m->slot;
	size_t old_cap = m->cap;
	unsigned char *slot = calloc(cap, m->entry_size);

	if (!slot)
		return -ENOMEM;
	m->slot = slot;
	m->cap = cap;
	m->shift = 64 - (unsigned)__builtin_ctzll(cap);
	for (size_t i = 0; i < old_cap; i++) {
		const unsigned char *e = old + i * m->entry_size;
		uint64_t key = *(const uint64_t *)e;

		if (key)
			memcpy(hashmap_entry(m, hashmap_probe(m, key)), e, m->entry_size);
	}
	free(old);
	return 0;
}

int hashmap_init(struct hashmap *m, size_t entry_size, size_t min_cap, unsigned flags)
{
	if (!entry_size || entry_size % 8)
		return -EINVAL;
	*m = (struct hashmap){ .entry_size = entry_size, .min_cap = hashmap_round_cap(min_cap),
			       .flags = flags };
	return hashmap_resize(m, m->min_cap);
}

void hashmap_clear(struct hashmap *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->count = 0;
}

void *hashmap_find(const struct hashmap *m, uint64_t key)
{
	if (!m->cap || !key)
		return NULL;
	size_t i = hashmap_probe(m, key);
	return hashmap_key(m, i) ? hashmap_entry(m, i) : NULL;
}

void *hashmap_insert(struct hashmap *m, uint64_t key, bool *added)
{
	size_t i = 0;

	if (added)
		*added = false;
	if (!key)
		return NULL;
	if (m->cap && hashmap_key(m, i = hashmap_probe(m, key)))
		return hashmap_entry(m, i);
	if ((m->count + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : hashmap_round_cap(m->min_cap);

		/* If growing fails, fill up further rather than lose the entry; one empty slot
		 * must stay so that probes end. */
		if (hashmap_resize(m, cap) < 0 && m->count + 2 > m->cap)
			return NULL;
		i = hashmap_probe(m, key);
	}
	unsigned char *e = hashmap_entry(m, i);
	memset(e, 0, m->entry_size);
	*(uint64_t *)e = key;
	m->count++;
	if (added)
		*added = true;
	return e;
}

bool hashmap_remove(struct hashmap *m, uint64_t key, void *gone)
{
	if (!m->cap || !key)
		return false;
	size_t mask = m->cap - 1, i = hashmap_probe(m, key);
	if (!hashmap_key(m, i))
		return false;
	if (gone)
		memcpy(gone, hashmap_entry(m, i), m->entry_size);
	/* Backward shift: the entries after the hole, up to the next empty slot, move back into
	 * it when that keeps them reachable, so no probe ever has to step over a tombstone. */
	for (size_t j = (i + 1) & mask; hashmap_key(m, j); j = (j + 1) & mask) {
		size_t home = hashmap_home(m, hashmap_key(m, j));

		/* The entry at j may fill the hole at i only if i lies between its home and j. */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			memcpy(hashmap_entry(m, i), hashmap_entry(m, j), m->entry_size);
			i = j;
		}
	}
	*(uint64_t *)hashmap_entry(m, i) = 0;
	m->count--;
	if ((m->flags & HASHMAP_SHRINK) && m->cap > m->min_cap && m->count * 8 < m->cap)
		hashmap_resize(m, m->cap / 2);		/* on failure it simply stays larger */
	return true;
}

/* The order: an entry's place is its slot, plus cap when its probe wrapped past the last slot
 * (its home lies above its slot), and entries come from the highest place down. A backward
 * shift moves entries only down, and only within their cluster: one above the removed entry's
 * place stays at or above it, one below stays below (a cluster's wrapped part sits cap higher
 * than its start). So removing the entry just returned neither hides an entry nor shows one
 * twice; removing another may move a seen one below the cursor, never an unseen one above.
 * The cursor counts the places passed: the next place looked at is 2 * cap - 1 - cursor. */
void *hashmap_next(const struct hashmap *m, size_t *cursor)
{
	size_t cap = m->cap, c = *cursor;

	if (c < cap) {
		/* Wrapped entries lie before the first empty slot: start there. */
		size_t first_empty = 0;

		while (hashmap_key(m, first_empty))
			first_empty++;
		if (c < cap - first_empty)
			c = cap - first_empty;
		for (; c < cap; c++) {
			size_t i = cap - 1 - c;

			if (hashmap_home(m, hashmap_key(m, i)) > i) {
				*cursor = c + 1;
				return hashmap_entry(m, i);
			}
		}
	}
	for (; c < 2 * cap; c++) {
		size_t i = 2 * cap - 1 - c;
		uint64_t key = hashmap_key(m, i);

		if (key && hashmap_home(m, key) <= i) {
			*cursor = c + 1;
			return hashmap_entry(m, i);
		}
	}
	*cursor = 2 * cap;
	return NULL;
}
