/* kernel_table.c — owns the kernel names (kernel_table.h): an open-addressing map from name to
 * id, the rows by id, and the names themselves packed in chunks. It takes no lock and counts no
 * launches (stats.c does both); it never touches the traced program.
 *
 * Memory bound (part of stats.c's product promise): at most STATS_MAX_KERNELS + 1 rows (40 B),
 * a name map of at most 2^17 slots (8 B) and at most NAME_BYTES_MAX bytes of names, each cut at
 * NAME_LEN_MAX. So ~36 MiB at worst, however many kernels a program makes. */
#include "kernel_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NAME_LEN_MAX	4096u		/* bytes kept of one kernel name, NUL included */
#define NAME_BYTES_MAX	(32u << 20)	/* all kernel names together */
#define NAME_CHUNK	(64u << 10)	/* names are packed into chunks of this size */
#define KERNEL_OTHER	"(other kernels)"

struct kernel_slot {
	uint32_t hash;
	int32_t id;		/* < 0: empty */
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
	struct kernel_slot *slot;	/* name -> id, open addressing */
	uint32_t slot_cap;
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

static uint32_t kernel_table_hash(const char *name, size_t len)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return h;
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

static void kernel_table_slot_place(struct kernel_table *k, uint32_t hash, int32_t id)
{
	uint32_t mask = k->slot_cap - 1;
	uint32_t i = hash & mask;

	while (k->slot[i].id >= 0)
		i = (i + 1) & mask;
	k->slot[i] = (struct kernel_slot){ .hash = hash, .id = id };
}

static int kernel_table_slots_grow(struct kernel_table *k)
{
	uint32_t cap = k->slot_cap ? k->slot_cap * 2 : 1024;
	struct kernel_slot *old = k->slot;
	uint32_t old_cap = k->slot_cap;
	struct kernel_slot *slot = malloc((size_t)cap * sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (uint32_t i = 0; i < cap; i++)
		slot[i].id = -1;
	k->slot = slot;
	k->slot_cap = cap;
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i].id >= 0)
			kernel_table_slot_place(k, old[i].hash, old[i].id);
	free(old);
	return 0;
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
	uint32_t hash = kernel_table_hash(name, len);
	uint32_t mask = k->slot_cap - 1;

	for (uint32_t i = k->slot_cap ? hash & mask : 0; k->slot_cap && k->slot[i].id >= 0;
	     i = (i + 1) & mask) {
		const char *have = k->row[k->slot[i].id].name;

		if (k->slot[i].hash == hash && strncmp(have, name, len) == 0 && !have[len])
			return k->slot[i].id;
	}
	if (k->named >= STATS_MAX_KERNELS || k->name_bytes + len + 1 > NAME_BYTES_MAX)
		return -1;
	if ((k->named + 1) * 2 > k->slot_cap && kernel_table_slots_grow(k) < 0)
		return -1;
	const char *copy = kernel_table_name_store(k, name, len);
	int id = copy ? kernel_table_row_add(k, copy) : -1;
	if (id < 0)
		return -1;
	kernel_table_slot_place(k, hash, id);
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

	if (k)
		k->other = -1;
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
	free(k->slot);
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
