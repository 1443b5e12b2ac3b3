/* test_hashmap.c — unit test of src/base/hashmap.c: insert/find/remove, growth and shrinking,
 * collisions and removal inside probe chains (wrapping past the table's end included),
 * removal while iterating, and random operations checked against a plain array.
 * One "ok"/"not ok" line per check. */
#include "hashmap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

struct entry {
	uint64_t key;
	uint64_t value;
	uint32_t extra;		/* makes the entry 24 bytes: not a power of two */
};

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void)	/* xorshift64: fixed seed, so a failure repeats */
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static size_t slot_of(const struct hashmap *m, const void *e)
{
	return (size_t)((const unsigned char *)e - m->slot) / m->entry_size;
}

/* The home slot of key in a map of cap slots: where it lands alone in an empty map. */
static size_t home_of(uint64_t key, size_t cap)
{
	struct hashmap m;
	size_t home;

	if (hashmap_init(&m, sizeof(struct entry), cap, 0) < 0)
		abort();
	home = slot_of(&m, hashmap_insert(&m, key, NULL));
	hashmap_clear(&m);
	return home;
}

/* Every entry of m, once each, with the value it should have (value = key * 3 + 1). */
static bool iteration_sees_all(const struct hashmap *m)
{
	size_t it = 0, n = 0;
	bool ok = true;

	for (struct entry *e; (e = hashmap_next(m, &it));) {
		ok &= e->value == e->key * 3 + 1 && hashmap_find(m, e->key) == e;
		n++;
	}
	return ok && n == hashmap_count(m);
}

static void test_basics(void)
{
	struct hashmap m = HASHMAP_INIT(sizeof(struct entry), 16, 0);
	size_t it = 0;
	bool added;

	check(!hashmap_find(&m, 42) && !hashmap_remove(&m, 42, NULL) && !hashmap_next(&m, &it) &&
	      hashmap_capacity(&m) == 0, "an empty static map has no slots and finds nothing");
	struct entry *e = hashmap_insert(&m, 42, &added);
	check(e && added && e->key == 42 && e->value == 0 && e->extra == 0 &&
	      hashmap_capacity(&m) == 16, "insert adds a zeroed entry and allocates min_cap slots");
	e->value = 7;
	check(hashmap_insert(&m, 42, &added) == e && !added && e->value == 7,
	      "insert of a present key returns its entry");
	check(hashmap_find(&m, 42) == e && hashmap_count(&m) == 1, "find");
	check(!hashmap_insert(&m, 0, &added) && !added && !hashmap_find(&m, 0) &&
	      !hashmap_remove(&m, 0, NULL), "key 0 is refused (it marks empty slots)");
	struct entry gone;
	check(hashmap_remove(&m, 42, &gone) && gone.key == 42 && gone.value == 7 &&
	      !hashmap_find(&m, 42) && hashmap_count(&m) == 0, "remove copies the entry out");
	check(!hashmap_remove(&m, 42, NULL), "a second remove finds nothing");
	hashmap_clear(&m);
	check(hashmap_capacity(&m) == 0 && hashmap_insert(&m, 5, NULL) && hashmap_count(&m) == 1,
	      "a cleared map is usable again");
	hashmap_clear(&m);

	struct hashmap bad;
	check(hashmap_init(&bad, 12, 8, 0) == -EINVAL, "an entry size that is not a multiple of 8 is refused");
}

static void test_growth_and_shrink(void)
{
	struct hashmap m, s;
	bool ok = true;
	size_t peak = 0;

	hashmap_init(&m, sizeof(struct entry), 8, 0);
	hashmap_init(&s, sizeof(struct entry), 64, HASHMAP_SHRINK);
	for (uint64_t k = 1; k <= 100000; k++) {
		uint64_t key = 0x7f0000000000ull + k * 256;	/* aligned, as addresses are */
		struct entry *a = hashmap_insert(&m, key, NULL), *b = hashmap_insert(&s, key, NULL);

		ok &= a && b;
		if (a && b)
			a->value = b->value = key * 3 + 1;
		ok &= hashmap_capacity(&m) >= 2 * hashmap_count(&m);
	}
	check(ok && hashmap_count(&m) == 100000 && hashmap_capacity(&m) == 262144,
	      "100,000 inserts: the map grows, at most half full (%zu slots)", hashmap_capacity(&m));
	ok = true;
	for (uint64_t k = 1; k <= 100000; k++) {
		struct entry *e = hashmap_find(&m, 0x7f0000000000ull + k * 256);
		ok &= e && e->value == e->key * 3 + 1;
	}
	check(ok && !hashmap_find(&m, 0x7f0000000000ull + 17), "every key found with its value");
	check(iteration_sees_all(&m), "iteration sees each of 100,000 entries once");

	peak = hashmap_capacity(&s);
	for (uint64_t k = 1; k <= 100000; k++) {
		hashmap_remove(&m, 0x7f0000000000ull + k * 256, NULL);
		hashmap_remove(&s, 0x7f0000000000ull + k * 256, NULL);
		if (k == 90000)
			check(iteration_sees_all(&s) && hashmap_capacity(&s) < peak,
			      "a shrinking map halves as entries go (%zu of %zu slots)",
			      hashmap_capacity(&s), peak);
	}
	check(hashmap_count(&m) == 0 && hashmap_capacity(&m) == 262144,
	      "a map without HASHMAP_SHRINK keeps its slots");
	check(hashmap_count(&s) == 0 && hashmap_capacity(&s) == 64,
	      "a HASHMAP_SHRINK map goes back to min_cap (%zu)", hashmap_capacity(&s));

	/* Churn: inserting and removing never fills the map (no tombstones). */
	ok = true;
	for (uint64_t k = 1; k <= 1000000; k++) {
		ok &= hashmap_insert(&m, k * 4096, NULL) && hashmap_remove(&m, k * 4096, NULL);
		ok &= hashmap_insert(&s, k * 4096, NULL) && hashmap_remove(&s, k * 4096, NULL);
	}
	check(ok && hashmap_capacity(&m) == 262144 && hashmap_capacity(&s) == 64,
	      "1,000,000 insert/remove pairs leave the capacity as it was");
	hashmap_clear(&m);
	hashmap_clear(&s);
}

/* Keys whose home is slot `home` in a map of cap slots. */
static void keys_at_home(size_t cap, size_t home, uint64_t *keys, int n)
{
	for (uint64_t k = 1; n; k++)
		if (home_of(k * 64, cap) == home) {
			*keys++ = k * 64;
			n--;
		}
}

static void test_collisions(void)
{
	enum { CAP = 64 };
	uint64_t a[4], b[3], w[3];
	struct hashmap m;
	bool ok = true;

	keys_at_home(CAP, 10, a, 4);
	keys_at_home(CAP, 11, b, 3);
	hashmap_init(&m, sizeof(struct entry), CAP, 0);
	/* Slots 10..16: a0 a1 b0 a2 b1 a3 b2, interleaved so that removals have to shift some
	 * and leave others where they are. */
	uint64_t order[] = { a[0], a[1], b[0], a[2], b[1], a[3], b[2] };
	for (size_t i = 0; i < sizeof order / sizeof *order; i++)
		((struct entry *)hashmap_insert(&m, order[i], NULL))->value = order[i] * 3 + 1;
	for (size_t i = 0; i < sizeof order / sizeof *order; i++)
		ok &= slot_of(&m, hashmap_find(&m, order[i])) == 10 + i;
	check(ok, "colliding keys take the following slots in insertion order");

	hashmap_remove(&m, a[1], NULL);		/* in the middle of both chains */
	ok = !hashmap_find(&m, a[1]);
	for (size_t i = 0; i < sizeof order / sizeof *order; i++)
		if (order[i] != a[1])
			ok &= hashmap_find(&m, order[i]) && slot_of(&m, hashmap_find(&m, order[i])) < 16;
	check(ok && iteration_sees_all(&m), "removal inside a probe chain: the rest shift back and stay found");
	hashmap_remove(&m, b[0], NULL);
	hashmap_remove(&m, a[0], NULL);		/* the chain's head */
	ok = !hashmap_find(&m, b[0]) && !hashmap_find(&m, a[0]);
	ok &= slot_of(&m, hashmap_find(&m, a[2])) == 10 && slot_of(&m, hashmap_find(&m, b[1])) == 11;
	check(ok && iteration_sees_all(&m), "removing the head moves the next one home (%zu)",
	      slot_of(&m, hashmap_find(&m, a[2])));
	ok = true;
	for (size_t i = 0; i < sizeof order / sizeof *order; i++)
		ok &= hashmap_find(&m, order[i]) ? order[i] != a[0] && order[i] != a[1] &&
		      order[i] != b[0] : order[i] == a[0] || order[i] == a[1] || order[i] == b[0];
	check(ok && hashmap_count(&m) == 4, "the four left are found, the three removed are not");
	hashmap_clear(&m);

	/* A chain that wraps past the last slot. */
	keys_at_home(CAP, CAP - 1, w, 3);
	keys_at_home(CAP, 0, a, 2);
	hashmap_init(&m, sizeof(struct entry), CAP, 0);
	uint64_t wrap[] = { w[0], w[1], a[0], w[2], a[1] };	/* slots 63, 0, 1, 2, 3 */
	for (size_t i = 0; i < sizeof wrap / sizeof *wrap; i++)
		((struct entry *)hashmap_insert(&m, wrap[i], NULL))->value = wrap[i] * 3 + 1;
	check(slot_of(&m, hashmap_find(&m, w[1])) == 0 && slot_of(&m, hashmap_find(&m, a[1])) == 3,
	      "a chain at the last slot wraps to the first");
	hashmap_remove(&m, w[0], NULL);
	ok = slot_of(&m, hashmap_find(&m, w[1])) == CAP - 1 && slot_of(&m, hashmap_find(&m, a[0])) == 0 &&
	     slot_of(&m, hashmap_find(&m, w[2])) == 1 && slot_of(&m, hashmap_find(&m, a[1])) == 2;
	check(ok && iteration_sees_all(&m), "removal at the last slot shifts entries back across the end");
	hashmap_clear(&m);
}

/* Removing each entry as iteration returns it (or every other one) must visit every entry
 * exactly once, however the clusters lie; many small dense maps make wrapped clusters. */
static void test_remove_while_iterating(void)
{
	bool ok = true;
	int wrapped = 0;

	for (int round = 0; round < 2000; round++) {
		struct hashmap m;
		uint64_t keys[31];
		unsigned char seen[31] = { 0 };
		int n = 8 + (int)(rng() % 24), every = 1 + round % 3;
		size_t it = 0;

		hashmap_init(&m, sizeof(struct entry), 64, 0);
		for (int i = 0; i < n; i++) {
			keys[i] = (rng() % 4096 + 1) * 16;
			struct entry *e = hashmap_insert(&m, keys[i], NULL);
			e->value = (uint64_t)i;
			for (int j = 0; j < i; j++)
				if (keys[j] == keys[i])
					e->value = (uint64_t)j;		/* a duplicate key: one entry */
		}
		size_t live = hashmap_count(&m), visited = 0, removed = 0;
		/* A cluster across the end: the case the iteration order is made for. */
		wrapped += *(uint64_t *)m.slot && *(uint64_t *)(m.slot + 63 * m.entry_size);
		for (struct entry *e; (e = hashmap_next(&m, &it));) {
			ok &= !seen[e->value]++;
			visited++;
			if (visited % (size_t)every == 0) {
				ok &= hashmap_remove(&m, e->key, NULL);
				removed++;
			}
		}
		ok &= visited == live && hashmap_count(&m) == live - removed;
		hashmap_clear(&m);
	}
	check(ok && wrapped > 100, "removing the current entry while iterating: each seen once "
	      "(2000 maps, %d with a cluster across the end)", wrapped);
}

/* Random operations on keys from a small set (so that most hit) and on aligned addresses,
 * checked against a plain array after each operation and by a full iteration now and then. */
static void test_random_against_reference(void)
{
	enum { KEYS = 3000, OPS = 400000 };
	static uint64_t key_of[KEYS], value_of[KEYS];
	static bool present[KEYS];
	struct hashmap m = HASHMAP_INIT(sizeof(struct entry), 8, HASHMAP_SHRINK);
	size_t live = 0;
	bool ok = true;

	for (int i = 0; i < KEYS; i++)
		key_of[i] = i % 2 ? (uint64_t)i : 0x7fff00000000ull + (uint64_t)i * 512;
	for (int op = 0; op < OPS && ok; op++) {
		int i = (int)(rng() % KEYS);
		uint64_t r = rng() % 10;
		struct entry *e;

		if (r < 4) {
			bool added;
			e = hashmap_insert(&m, key_of[i], &added);
			ok &= e && added == !present[i] && e->key == key_of[i];
			if (e && added) {
				e->value = key_of[i] * 3 + 1;
				present[i] = true;
				value_of[i] = e->value;
				live++;
			} else if (e) {
				ok &= e->value == value_of[i];
			}
		} else if (r < 8) {
			struct entry gone = { 0 };
			bool had = hashmap_remove(&m, key_of[i], &gone);
			ok &= had == present[i] && (!had || (gone.key == key_of[i] && gone.value == value_of[i]));
			live -= had;
			present[i] = false;
		} else {
			e = hashmap_find(&m, key_of[i]);
			ok &= present[i] ? e && e->key == key_of[i] && e->value == value_of[i] : !e;
		}
		ok &= hashmap_count(&m) == live;
		if (op % 20000 == 0)
			ok &= iteration_sees_all(&m);
	}
	for (int i = 0; i < KEYS && ok; i++)
		ok &= (hashmap_find(&m, key_of[i]) != NULL) == present[i];
	check(ok && iteration_sees_all(&m), "%d random operations agree with a plain array (%zu live)", OPS, live);
	hashmap_clear(&m);
}

int main(void)
{
	test_basics();
	test_growth_and_shrink();
	test_collisions();
	test_remove_while_iterating();
	test_random_against_reference();
	return failures ? 1 : 0;
}
