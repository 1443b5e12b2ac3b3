/* stats.c — owns every figure gputop counts (stats.h), behind one mutex: the tracer thread
 * feeds it on each breakpoint hit, the UI thread copies snapshots out. It never touches the
 * traced program and never prints.
 *
 * Memory bound (a product promise). Apart from one row per API function it holds:
 *   - live allocations: an open-addressing hash map kept between 1/8 and 1/2 full, so at
 *     most 8 slots (32 B each) per live allocation and never below ALLOC_MIN_CAP — it shrinks
 *     again when they are freed, so a million malloc/free pairs cost no more than one — plus
 *     one 32 B interval-tree node per device/managed allocation live at the peak;
 *   - kernels: at most STATS_MAX_KERNELS + 1 rows (40 B), a name map of at most 2^17 slots
 *     (8 B) and at most NAME_BYTES_MAX bytes of names, each cut at NAME_LEN_MAX.
 * So: ~36 MiB for kernels at worst, plus at most ~300 B per allocation the program itself
 * holds live (at its peak); nothing grows with the number of calls.
 *
 * Interior-pointer lookups (stats_is_device_ptr) use a treap of the device/managed intervals:
 * O(log n) expected for insert, delete and lookup, no allocation once its node pool is warm,
 * and no rebuild spikes. A lazily sorted array would re-sort on every alloc/copy/free cycle
 * (common with cudaMemcpy kind "default"), which costs O(n log n) in the tracer's hot path. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* qsort_r */
#endif
#include "stats.h"
#include "cuda_api.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ALLOC_MIN_CAP	256u		/* hash slots; a power of two */
#define NAME_LEN_MAX	4096u		/* bytes kept of one kernel name, NUL included */
#define NAME_BYTES_MAX	(32u << 20)	/* all kernel names together */
#define NAME_CHUNK	(64u << 10)	/* names are packed into chunks of this size */
#define KERNEL_OTHER	"(other kernels)"

const char *const copy_dir_name[DIR_COUNT] = { "H2H", "H2D", "D2H", "D2D" };
const char *const mem_kind_name[MEM_KIND_COUNT] = { "device", "managed", "host" };

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

struct counters {
	struct stats_xfer xfer[COPY_MODE_COUNT][DIR_COUNT];
	struct stats_xfer memset_;
	uint64_t sync_calls, sync_ns;
	uint64_t launches, allocs, frees, stops;
};

struct stats_state {
	bool ready;
	struct stats_api *api;
	size_t n_api;
	struct alloc_map allocs;
	struct itree tree;
	struct kernel_table kernels;
	struct counters c;
	uint64_t live_bytes[MEM_KIND_COUNT];
	uint64_t live_count;
	uint64_t peak;
	uint64_t start_ns;
	uint64_t cpu_ns, cpu_base_ns;	/* reset keeps the tracer's absolute figure as a base */
	int threads;
	bool estimated;
};

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stats_state S;

/* Launch counts at the last extrapolation: per kernel id, and per API row. */
static uint64_t *kernel_marks, *api_marks;
static uint32_t n_kernel_marks;


static uint64_t stats_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool stats_kind_on_device(unsigned kind)
{
	return kind == MEM_DEVICE || kind == MEM_MANAGED;
}

/* ---- live-allocation hash map ---- */

/* CUDA addresses are 256-byte aligned or more: mix all bits before masking. */
static size_t alloc_hash(uint64_t addr)
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

	for (size_t i = alloc_hash(addr) & mask;; i = (i + 1) & mask) {
		if (m->slot[i].addr == addr)
			return i;
		if (!m->slot[i].addr)
			return m->cap;
	}
}

static void alloc_map_place(struct alloc_map *m, const struct stats_alloc *a)
{
	size_t mask = m->cap - 1;
	size_t i = alloc_hash(a->addr) & mask;

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
		size_t home = alloc_hash(m->slot[j].addr) & mask;

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

/* ---- allocations ---- */

static void live_add(const struct stats_alloc *a, int sign)
{
	if (sign > 0) {
		S.live_bytes[a->kind] += a->bytes;
		S.live_count++;
	} else {
		S.live_bytes[a->kind] -= a->bytes;
		S.live_count--;
	}
	uint64_t dev = S.live_bytes[MEM_DEVICE] + S.live_bytes[MEM_MANAGED];
	if (dev > S.peak)
		S.peak = dev;
}

/* Drops the live allocation at addr from every structure; false if there is none. */
static bool alloc_forget(uint64_t addr)
{
	size_t i = alloc_map_find(&S.allocs, addr);

	if (i == S.allocs.cap)
		return false;
	struct stats_alloc a = S.allocs.slot[i];
	if (stats_kind_on_device(a.kind) && a.bytes)
		itree_remove(&S.tree, a.addr);
	live_add(&a, -1);
	alloc_map_remove_at(&S.allocs, i);
	return true;
}

/* Live device memory cannot overlap: an old allocation that does must have been freed by a
 * path we did not see. Forgetting it keeps live bytes and leak reports honest. */
static void alloc_evict_overlaps(uint64_t start, uint64_t end)
{
	uint32_t i;

	while ((i = itree_floor(&S.tree, end - 1)) && N(&S.tree, i).end > start) {
		uint64_t old = N(&S.tree, i).start;

		if (!alloc_forget(old))
			itree_remove(&S.tree, old);	/* a node without a record: never loop */
	}
}

static void alloc_record(const struct stats_alloc *a)
{
	alloc_forget(a->addr);	/* a second allocation at a live address: its free was missed */
	uint64_t end = a->addr + a->bytes < a->addr ? UINT64_MAX : a->addr + a->bytes;
	bool on_device = stats_kind_on_device(a->kind) && a->bytes;

	if (on_device)
		alloc_evict_overlaps(a->addr, end);
	if (alloc_map_put(&S.allocs, a) < 0)
		return;
	if (on_device)
		itree_insert(&S.tree, a->addr, end);	/* on failure only lookups miss it */
	live_add(a, +1);
}

/* ---- kernels ---- */

/* The part of a name that is kept: at most NAME_LEN_MAX - 1 bytes, cut on a UTF-8 boundary. */
static size_t kernel_name_len(const char *name)
{
	size_t len = strnlen(name, NAME_LEN_MAX);

	if (len < NAME_LEN_MAX)
		return len;
	len = NAME_LEN_MAX - 1;
	while (len && ((unsigned char)name[len] & 0xc0) == 0x80)
		len--;
	return len;
}

static uint32_t kernel_hash(const char *name, size_t len)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return h;
}

static const char *kernel_name_store(struct kernel_table *k, const char *name, size_t len)
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

static void kernel_slot_place(struct kernel_table *k, uint32_t hash, int32_t id)
{
	uint32_t mask = k->slot_cap - 1;
	uint32_t i = hash & mask;

	while (k->slot[i].id >= 0)
		i = (i + 1) & mask;
	k->slot[i] = (struct kernel_slot){ .hash = hash, .id = id };
}

static int kernel_slots_grow(struct kernel_table *k)
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
			kernel_slot_place(k, old[i].hash, old[i].id);
	free(old);
	return 0;
}

/* A new row with this name; its id, or -1. */
static int kernel_row_add(struct kernel_table *k, const char *name)
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

static int kernel_intern(struct kernel_table *k, const char *name)
{
	size_t len = kernel_name_len(name);
	uint32_t hash = kernel_hash(name, len);
	uint32_t mask = k->slot_cap - 1;

	for (uint32_t i = k->slot_cap ? hash & mask : 0; k->slot_cap && k->slot[i].id >= 0;
	     i = (i + 1) & mask) {
		const char *have = k->row[k->slot[i].id].name;

		if (k->slot[i].hash == hash && strncmp(have, name, len) == 0 && !have[len])
			return k->slot[i].id;
	}
	if (k->named >= STATS_MAX_KERNELS || k->name_bytes + len + 1 > NAME_BYTES_MAX)
		return -1;
	if ((k->named + 1) * 2 > k->slot_cap && kernel_slots_grow(k) < 0)
		return -1;
	const char *copy = kernel_name_store(k, name, len);
	int id = copy ? kernel_row_add(k, copy) : -1;
	if (id < 0)
		return -1;
	kernel_slot_place(k, hash, id);
	k->named++;
	return id;
}

static struct stats_kernel *kernel_row(struct kernel_table *k, int id)
{
	if (id >= 0 && (uint32_t)id < k->n)
		return &k->row[id];
	if (k->other < 0)
		k->other = kernel_row_add(k, KERNEL_OTHER);
	return k->other >= 0 ? &k->row[k->other] : NULL;
}

static void kernel_table_free(struct kernel_table *k)
{
	while (k->chunks) {
		struct name_chunk *next = k->chunks->next;

		free(k->chunks);
		k->chunks = next;
	}
	free(k->row);
	free(k->slot);
	memset(k, 0, sizeof(*k));
	k->other = -1;
}

/* ---- life cycle ---- */

static void stats_release(void)
{
	free(S.api);
	free(S.allocs.slot);
	free(S.tree.node);
	kernel_table_free(&S.kernels);
	memset(&S, 0, sizeof(S));
}

int stats_init(void)
{
	int err = 0;

	pthread_mutex_lock(&stats_lock);
	stats_release();
	S.n_api = (size_t)cuda_api_count();
	S.api = calloc(S.n_api ? S.n_api : 1, sizeof(*S.api));
	S.allocs.slot = calloc(ALLOC_MIN_CAP, sizeof(*S.allocs.slot));
	S.allocs.cap = ALLOC_MIN_CAP;
	S.tree.rng = 2463534242u;
	S.kernels.other = -1;
	S.start_ns = stats_now();
	if (!S.api || !S.allocs.slot) {
		stats_release();
		err = -ENOMEM;
	} else {
		S.ready = true;
	}
	pthread_mutex_unlock(&stats_lock);
	return err;
}

void stats_free(void)
{
	pthread_mutex_lock(&stats_lock);
	stats_release();
	pthread_mutex_unlock(&stats_lock);
}

void stats_reset(void)
{
	pthread_mutex_lock(&stats_lock);
	if (S.ready) {
		memset(S.api, 0, S.n_api * sizeof(*S.api));
		memset(&S.c, 0, sizeof(S.c));
		for (uint32_t i = 0; i < S.kernels.n; i++)
			S.kernels.row[i].launches = 0;
		if (kernel_marks)
			memset(kernel_marks, 0, n_kernel_marks * sizeof(*kernel_marks));
		if (api_marks)
			memset(api_marks, 0, S.n_api * sizeof(*api_marks));
		S.peak = S.live_bytes[MEM_DEVICE] + S.live_bytes[MEM_MANAGED];
		S.start_ns = stats_now();
		S.cpu_base_ns = S.cpu_ns;
	}
	pthread_mutex_unlock(&stats_lock);
}

/* ---- feeding ---- */

void stats_on_call(int api, uint64_t ns, bool returned, int error)
{
	pthread_mutex_lock(&stats_lock);
	if (S.ready && api >= 0 && (size_t)api < S.n_api) {
		struct stats_api *row = &S.api[api];

		row->calls++;
		if (returned) {
			row->returns_seen = true;
			row->ns += ns;
			if (error) {
				row->errors++;
				row->last_error = error;
			}
		}
	}
	pthread_mutex_unlock(&stats_lock);
}

/* Caller module names: few (the libraries that allocate), kept for the life of the module so
 * snapshots can point at them. Bounded: past CALLERS_MAX names, "(other)". */
#define CALLERS_MAX 256
static char *callers[CALLERS_MAX];
static int n_callers;

static const char *caller_intern(const char *name)
{
	if (!name || !*name)
		return "";
	for (int i = 0; i < n_callers; i++)
		if (strcmp(callers[i], name) == 0)
			return callers[i];
	if (n_callers == CALLERS_MAX)
		return "(other)";
	char *copy = strdup(name);
	if (!copy)
		return "";
	callers[n_callers++] = copy;
	return copy;
}

void stats_on_alloc(int api, uint64_t addr, uint64_t bytes, enum mem_kind kind, int device,
		    pid_t tid, uint64_t now_ns, const char *caller)
{
	struct stats_alloc a = {
		.addr = addr, .bytes = bytes, .t_ns = now_ns, .tid = tid, .api = (int16_t)api,
		.device = (int8_t)(device >= 0 && device <= INT8_MAX ? device : -1),
		.kind = (uint8_t)kind,
	};

	if ((unsigned)kind >= MEM_KIND_COUNT)
		return;
	pthread_mutex_lock(&stats_lock);
	a.caller = caller_intern(caller);
	if (S.ready) {
		S.c.allocs++;
		if (addr)	/* NULL from a zero-byte allocation holds nothing */
			alloc_record(&a);
	}
	pthread_mutex_unlock(&stats_lock);
}

bool stats_on_free(uint64_t addr)
{
	bool known = false;

	pthread_mutex_lock(&stats_lock);
	/* Only frees of known allocations count, so that allocs - frees tracks what we saw. */
	if (S.ready && addr && alloc_forget(addr)) {
		S.c.frees++;
		known = true;
	}
	pthread_mutex_unlock(&stats_lock);
	return known;
}

bool stats_is_device_ptr(uint64_t addr)
{
	bool inside = false;

	pthread_mutex_lock(&stats_lock);
	if (S.ready) {
		uint32_t i = itree_floor(&S.tree, addr);

		inside = i && addr < N(&S.tree, i).end;
	}
	pthread_mutex_unlock(&stats_lock);
	return inside;
}

int stats_kernel_id(const char *name)
{
	int id = -1;

	if (!name)
		return -1;
	pthread_mutex_lock(&stats_lock);
	if (S.ready)
		id = kernel_intern(&S.kernels, name);
	pthread_mutex_unlock(&stats_lock);
	return id;
}

void stats_on_launch(int kernel, const uint32_t grid[3], const uint32_t block[3])
{
	pthread_mutex_lock(&stats_lock);
	if (S.ready) {
		struct stats_kernel *row = kernel_row(&S.kernels, kernel);

		S.c.launches++;
		if (row) {
			row->launches++;
			for (int i = 0; i < 3; i++) {
				row->grid[i] = grid ? grid[i] : 0;
				row->block[i] = block ? block[i] : 0;
			}
		}
	}
	pthread_mutex_unlock(&stats_lock);
}

static void xfer_add(struct stats_xfer *x, uint64_t bytes, uint64_t ns)
{
	x->calls++;
	x->bytes += bytes;
	x->ns += ns;
}

void stats_on_copy(enum copy_dir dir, enum copy_mode mode, uint64_t bytes, uint64_t ns)
{
	if ((unsigned)dir >= DIR_COUNT || (unsigned)mode >= COPY_MODE_COUNT)
		return;
	pthread_mutex_lock(&stats_lock);
	if (S.ready)
		xfer_add(&S.c.xfer[mode][dir], bytes, ns);
	pthread_mutex_unlock(&stats_lock);
}

void stats_on_memset(uint64_t bytes, uint64_t ns)
{
	pthread_mutex_lock(&stats_lock);
	if (S.ready)
		xfer_add(&S.c.memset_, bytes, ns);
	pthread_mutex_unlock(&stats_lock);
}

void stats_on_sync(uint64_t ns)
{
	pthread_mutex_lock(&stats_lock);
	if (S.ready) {
		S.c.sync_calls++;
		S.c.sync_ns += ns;
	}
	pthread_mutex_unlock(&stats_lock);
}

void stats_on_stop(void)
{
	pthread_mutex_lock(&stats_lock);
	S.c.stops++;
	pthread_mutex_unlock(&stats_lock);
}

void stats_set_threads(int n)
{
	pthread_mutex_lock(&stats_lock);
	S.threads = n;
	pthread_mutex_unlock(&stats_lock);
}

void stats_set_tracer_cpu(uint64_t ns)
{
	pthread_mutex_lock(&stats_lock);
	S.cpu_ns = ns;
	pthread_mutex_unlock(&stats_lock);
}


static uint64_t scale_since(uint64_t *value, uint64_t *mark, double factor)
{
	uint64_t delta = *value - *mark;
	uint64_t add = (uint64_t)llround((double)delta * (factor - 1));
	*value += add;
	*mark = *value;
	return add;
}

void stats_extrapolate_launches(double factor)
{
	pthread_mutex_lock(&stats_lock);
	if (!S.ready)
		goto out;
	if (n_kernel_marks < S.kernels.n) {
		uint64_t *m = realloc(kernel_marks, S.kernels.n * sizeof(*m));
		if (!m)
			goto out;
		memset(m + n_kernel_marks, 0, (S.kernels.n - n_kernel_marks) * sizeof(*m));
		kernel_marks = m;
		n_kernel_marks = S.kernels.n;
	}
	if (!api_marks && !(api_marks = calloc(S.n_api, sizeof(*api_marks))))
		goto out;
	for (uint32_t i = 0; i < S.kernels.n; i++)
		S.c.launches += scale_since(&S.kernels.row[i].launches, &kernel_marks[i], factor);
	for (size_t i = 0; i < S.n_api; i++)
		if (cuda_api_get((int)i)->op == OP_LAUNCH)
			scale_since(&S.api[i].calls, &api_marks[i], factor);
	if (factor != 1.0)
		S.estimated = true;
out:
	pthread_mutex_unlock(&stats_lock);
}

void stats_set_launches_estimated(bool estimated)
{
	pthread_mutex_lock(&stats_lock);
	S.estimated = estimated;
	pthread_mutex_unlock(&stats_lock);
}

/* ---- reading ---- */

static int snapshot_copy_arrays(struct stats_snapshot *out)
{
	if (S.n_api) {
		if (!(out->api = malloc(S.n_api * sizeof(*out->api))))
			return -ENOMEM;
		memcpy(out->api, S.api, S.n_api * sizeof(*out->api));
		out->n_api = S.n_api;
	}

	if (S.live_count && !(out->alloc = malloc(S.live_count * sizeof(*out->alloc))))
		return -ENOMEM;
	for (size_t i = 0; i < S.allocs.cap; i++)
		if (S.allocs.slot[i].addr)
			out->alloc[out->n_alloc++] = S.allocs.slot[i];

	if (S.kernels.n && !(out->kernel = malloc(S.kernels.n * sizeof(*out->kernel))))
		return -ENOMEM;
	if (S.kernels.n)	/* names stay the module's: interned strings live until stats_free */
		memcpy(out->kernel, S.kernels.row, S.kernels.n * sizeof(*out->kernel));
	out->n_kernel = S.kernels.n;
	return 0;
}

static void snapshot_copy_scalars(struct stats_snapshot *out)
{
	out->start_ns = S.start_ns;
	memcpy(out->xfer, S.c.xfer, sizeof(out->xfer));
	out->memset_ = S.c.memset_;
	out->sync_calls = S.c.sync_calls;
	out->sync_ns = S.c.sync_ns;
	memcpy(out->live_bytes, S.live_bytes, sizeof(out->live_bytes));
	out->live_count = S.live_count;
	out->peak_device_bytes = S.peak;
	out->launches = S.c.launches;
	out->allocs = S.c.allocs;
	out->frees = S.c.frees;
	out->stops = S.c.stops;
	out->tracer_cpu_ns = S.cpu_ns >= S.cpu_base_ns ? S.cpu_ns - S.cpu_base_ns : S.cpu_ns;
	out->threads = S.threads;
	out->launches_estimated = S.estimated;
}

int stats_snapshot(struct stats_snapshot *out)
{
	int err = -EINVAL;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&stats_lock);
	if (S.ready) {
		out->t_ns = stats_now();
		snapshot_copy_scalars(out);
		err = snapshot_copy_arrays(out);
	}
	pthread_mutex_unlock(&stats_lock);
	if (err)
		stats_snapshot_free(out);
	return err;
}

void stats_snapshot_free(struct stats_snapshot *s)
{
	free(s->api);
	free(s->alloc);
	free(s->kernel);
	memset(s, 0, sizeof(*s));
}

size_t stats_debug_capacity(void)
{
	size_t cap;

	pthread_mutex_lock(&stats_lock);
	cap = S.allocs.cap;
	pthread_mutex_unlock(&stats_lock);
	return cap;
}

/* ---- orderings ---- */

static int sort_api_cmp(const void *a, const void *b, void *arg)
{
	const struct stats_snapshot *s = arg;
	int i = *(const int *)a, j = *(const int *)b;

	if (s->api[i].calls != s->api[j].calls)
		return s->api[i].calls > s->api[j].calls ? -1 : 1;
	const struct api_spec *x = cuda_api_get(i), *y = cuda_api_get(j);
	if (!x || !y)
		return i - j;
	return strcmp(x->name, y->name);
}

size_t stats_sort_api(const struct stats_snapshot *s, int *idx)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_api; i++)
		if (s->api[i].calls)
			idx[n++] = (int)i;
	qsort_r(idx, n, sizeof(*idx), sort_api_cmp, (void *)s);
	return n;
}

static int sort_kernel_cmp(const void *a, const void *b)
{
	const struct stats_kernel *x = *(const struct stats_kernel *const *)a;
	const struct stats_kernel *y = *(const struct stats_kernel *const *)b;

	if (x->launches != y->launches)
		return x->launches > y->launches ? -1 : 1;
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

size_t stats_sort_kernels(const struct stats_snapshot *s, const struct stats_kernel **out)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_kernel; i++)
		if (s->kernel[i].launches)
			out[n++] = &s->kernel[i];
	qsort(out, n, sizeof(*out), sort_kernel_cmp);
	return n;
}

static int sort_alloc_cmp(const void *a, const void *b)
{
	const struct stats_alloc *x = *(const struct stats_alloc *const *)a;
	const struct stats_alloc *y = *(const struct stats_alloc *const *)b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void stats_sort_allocs(const struct stats_snapshot *s, const struct stats_alloc **out)
{
	for (size_t i = 0; i < s->n_alloc; i++)
		out[i] = &s->alloc[i];
	qsort(out, s->n_alloc, sizeof(*out), sort_alloc_cmp);
}
