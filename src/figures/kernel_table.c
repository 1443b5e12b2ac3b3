/* kernel_table.c — owns the kernel names (kernel_table.h): a map from name to id (hashmap.h,
 * keyed by the name's 64-bit hash), the rows by id, and the names themselves packed in chunks.
 * It takes no lock and counts no launches (stats.c does both); it never touches the traced
 * program.
 *
 * Memory bound (part of stats.c's product promise): at most STATS_MAX_KERNELS + 1 rows (40 B),
 * a name map of at most 2^17 slots (16 B) and at most NAME_BYTES_MAX bytes of names, each cut at
 * NAME_LEN_MAX. So ~37 MiB at worst, however many kernels a program makes. */
#include "kernel_table.h"

#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

#define NAME_LEN_MAX	4096u		/* bytes kept of one kernel name, NUL included */
#define NAME_BYTES_MAX	(32u << 20)	/* all kernel names together */
#define NAME_CHUNK	(64u << 10)	/* names are packed into chunks of this size */
#define KERNEL_OTHER	"(other kernels)"

/* A name's entry: the key is its hash, or the next in the hash's chain (kernel_table_intern). */
struct kernel_slot {
	uint64_t key;
	int32_t id;
};

struct name_chunk {
	struct name_chunk *next;
	size_t used, cap;
	char data[];
};

struct kernel_table {
	struct stats_kernel *row;	/* by id */
	uint32_t n, cap;		/* n counts the "(other kernels)" row once it exists */
	uint32_t named;			/* rows with an interned name */
	int32_t other;			/* id of "(other kernels)", -1 until first needed */
	struct hashmap slot;		/* name -> id: struct kernel_slot */
	size_t name_bytes;
	struct name_chunk *chunks;
};

/* The part of a name that is kept: at most NAME_LEN_MAX - 1 bytes, cut on a UTF-8 boundary. */
static size_t kernel_table_name_len(const char *name)
{
	size_t len = strnlen(name, NAME_LEN_MAX);

	if (len < NAME_LEN_MAX)
		return len;
	len = NAME_LEN_MAX - 1;
	while (len && ((unsigned char)name[len] & 0xc0) == 0x80)
		len--;
	return len;
}

static uint64_t kernel_table_hash(const char *name, size_t len)
{
	uint64_t h = 14695981039346656037ull;	/* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
	return h ? h : 1;	/* 0 is no key */
}

static const char *kernel_table_name_store(struct kernel_table *k, const char *name, size_t len)
{
	struct name_chunk *c = k->chunks;

	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > NAME_CHUNK ? len + 1 : NAME_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = k->chunks;
		c->used = 0;
		c->cap = cap;
		k->chunks = c;
	}
	char *p = c->data + c->used;
	memcpy(p, name, len);
	p[len] = '\0';
	c->used += len + 1;
	k->name_bytes += len + 1;
	return p;
}

/* A new row with this name; its id, or -1. */
static int kernel_table_row_add(struct kernel_table *k, const char *name)
{
	if (k->n == k->cap) {
		uint32_t cap = k->cap ? k->cap * 2 : 256;
		struct stats_kernel *row;

		if (cap > STATS_MAX_KERNELS + 1)
			cap = STATS_MAX_KERNELS + 1;
		row = cap > k->cap ? realloc(k->row, (size_t)cap * sizeof(*row)) : NULL;
		if (!row)
			return -1;
		k->row = row;
		k->cap = cap;
	}
	k->row[k->n] = (struct stats_kernel){ .name = name };
	return (int)k->n++;
}

int kernel_table_intern(struct kernel_table *k, const char *name)
{
	size_t len = kernel_table_name_len(name);
	uint64_t key = kernel_table_hash(name, len);
	struct kernel_slot *s;

	/* Two names with one hash: the later one takes the next key of the chain. Names are
	 * never removed, so a name's chain holds every key taken before it, up to its own. */
	for (; (s = hashmap_find(&k->slot, key)); key = key + 1 ? key + 1 : 1) {
		const char *have = k->row[s->id].name;

		if (strncmp(have, name, len) == 0 && !have[len])
			return s->id;
	}
	if (k->named >= STATS_MAX_KERNELS || k->name_bytes + len + 1 > NAME_BYTES_MAX)
		return -1;
	if (!(s = hashmap_insert(&k->slot, key, NULL)))
		return -1;
	const char *copy = kernel_table_name_store(k, name, len);
	int id = copy ? kernel_table_row_add(k, copy) : -1;
	if (id < 0) {
		hashmap_remove(&k->slot, key, NULL);
		return -1;
	}
	s->id = id;
	k->named++;
	return id;
}

struct stats_kernel *kernel_table_row(struct kernel_table *k, int id)
{
	if (id >= 0 && (uint32_t)id < k->n)
		return &k->row[id];
	if (k->other < 0)
		k->other = kernel_table_row_add(k, KERNEL_OTHER);
	return k->other >= 0 ? &k->row[k->other] : NULL;
}

struct kernel_table *kernel_table_new(void)
{
	struct kernel_table *k = calloc(1, sizeof(*k));

	if (k) {
		k->other = -1;
		k->slot = (struct hashmap)HASHMAP_INIT(sizeof(struct kernel_slot), 1024, 0);
	}
	return k;
}

void kernel_table_free(struct kernel_table *k)
{
	if (!k)
		return;
	while (k->chunks) {
		struct name_chunk *next = k->chunks->next;

		free(k->chunks);
		k->chunks = next;
	}
	free(k->row);
	hashmap_clear(&k->slot);
	free(k);
}

struct stats_kernel *kernel_table_rows(struct kernel_table *k)
{
	return k->row;
}

uint32_t kernel_table_count(const struct kernel_table *k)
{
	return k->n;
}
