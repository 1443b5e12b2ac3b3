/* hashmap.h — the one hash map of gputop: 64-bit keys (addresses, tids, kernel handles, name
 * hashes) to fixed-size entries, open addressing with linear probing and backward-shift
 * deletion, so no tombstones: churn never fills it. Depends on libc alone. Not thread-safe;
 * never touches the traced program.
 *
 * An entry is a block of entry_size bytes that begins with its uint64_t key (a struct whose
 * first member is the key); key 0 marks an empty slot, so 0 is never a key. Pointers to
 * entries stay valid until the next insert or remove. */
#ifndef GPUTOP_HASHMAP_H
#define GPUTOP_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	/* Halve the slots when fewer than 1/8 are used (never below min_cap): memory follows
	 * what is live rather than the peak. Removal while iterating is then not allowed. */
	HASHMAP_SHRINK = 1,
};

struct hashmap {
	unsigned char *slot;	/* cap entries; NULL until the first insert */
	size_t cap;		/* 0, or a power of two >= min_cap, at most half full */
	size_t count;
	size_t entry_size;	/* a multiple of 8 (the key's alignment) */
	size_t min_cap;		/* a power of two >= 8 */
	unsigned shift;		/* 64 - log2(cap): the hash's top bits pick a key's home slot */
	unsigned flags;
};

/* A static map that allocates min_cap slots at its first insert (min_cap a power of two >= 8). */
#define HASHMAP_INIT(entry_size_, min_cap_, flags_) \
	{ .entry_size = (entry_size_), .min_cap = (min_cap_), .flags = (flags_) }

/* Sets m up and allocates its first slots now (min_cap rounded up to a power of two, >= 8).
 * 0, -EINVAL (entry_size not a multiple of 8) or -ENOMEM. */
int hashmap_init(struct hashmap *m, size_t entry_size, size_t min_cap, unsigned flags);
/* Drops every entry and frees the slots; m stays usable (it allocates again when needed). */
void hashmap_clear(struct hashmap *m);

/* The entry of key, or NULL. */
void *hashmap_find(const struct hashmap *m, uint64_t key);
/* The entry of key, added (key set, the rest zeroed; *added true if added is not NULL) when
 * absent. NULL for key 0, or when out of memory with no slot to spare. */
void *hashmap_insert(struct hashmap *m, uint64_t key, bool *added);
/* Removes key's entry, copied to *gone first if gone is not NULL; false if there is none. */
bool hashmap_remove(struct hashmap *m, uint64_t key, void *gone);

/* Iteration, in no set order: size_t it = 0; for (T *e; (e = hashmap_next(m, &it));) ...
 * Removing the entry just returned is allowed (not in a HASHMAP_SHRINK map): no entry is
 * then missed or seen twice. Removing another one may show an entry twice; inserting is not
 * allowed (the map may grow). */
void *hashmap_next(const struct hashmap *m, size_t *cursor);

static inline size_t hashmap_count(const struct hashmap *m)
{
	return m->count;
}

static inline size_t hashmap_capacity(const struct hashmap *m)	/* slots allocated */
{
	return m->cap;
}

#endif
