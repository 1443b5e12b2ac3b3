/* c10_cuda.c — a SIMULATED libc10_cuda.so: PyTorch's CUDA caching allocator in miniature, in C,
 * with the memory layouts and the symbols of PyTorch 2.10+ (c10/cuda/CUDACachingAllocator.cpp) that
 * gputop reads and probes: Block, DeviceStats inside DeviceCachingAllocator, the 67 tables of
 * allocated blocks (ska::flat_hash_map) inside the NativeCachingAllocator object, and the member
 * functions DeviceCachingAllocator::alloc_found_block and ::free under their mangled names (local
 * symbols, as g++ emits them for functions whose signature names a type of an anonymous namespace).
 * Its policy is the real one, simplified: sizes rounded up to 512 bytes; blocks of 1 MiB or less
 * from 2 MiB segments (the small pool), larger ones from 20 MiB segments below 10 MiB, else
 * segments of their size rounded up to 2 MiB (the large pool); best fit among the free blocks of
 * the pool and stream; a block split when the rest is 512 bytes or more (small pool) or more than
 * 1 MiB (large); free blocks merged with free neighbours; segments from cudaMalloc (the SIMULATED
 * runtime's), given back by simtorch_empty_cache. With PYTORCH_CUDA_ALLOC_CONF=
 * expandable_segments:True, one expandable segment per pool: 16 GiB of address space whose
 * pages (2 MiB small, 20 MiB large) are "mapped" as needed (reserved grows by whole pages).
 * Built with -DSIM_OTHER_NAMES, its functions have names gputop does not know (an allocator of
 * another PyTorch); with -DSIM_EXTRA_FIELD, its Block has one more field before size (a layout
 * gputop has no table for, which it finds by the fields' values). The test programs call simtorch_* (tests/progs/torch_blocks.c, torch_alloc.py).
 * No GPU: addresses only; no memory behind the blocks is ever touched. One device (0). */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#define EXPORT __attribute__((visibility("default")))

#define MIN_BLOCK 512u
#define SMALL_SIZE (1u << 20)
#define SMALL_BUFFER (2u << 20)
#define LARGE_BUFFER (20u << 20)
#define MIN_LARGE_ALLOC (10u << 20)
#define ROUND_LARGE (2u << 20)
#define EXPANDABLE_SPACE (16ull << 30)	/* address space only (PROT_NONE) */

/* ---- the layouts gputop reads ------------------------------------------------------------- */

struct Block {
	int8_t device;
	void *stream;
	unsigned char stream_uses[32];	/* ska::flat_hash_set<CUDAStream> */
	int32_t registration_counter;
#ifdef SIM_EXTRA_FIELD
	int64_t a_field_of_a_later_pytorch;
#endif
	size_t size;
	size_t requested_size;
	struct BlockPool *pool;
	void *ptr;
	bool allocated;
	bool mapped;
	struct Block *prev, *next;
	int event_count;
	int64_t gc_count_base;
	unsigned char context_when_allocated[16];	/* std::shared_ptr */
	unsigned char context_when_segment_allocated[16];
	void *expandable_segment_;
};
#ifndef SIM_EXTRA_FIELD
_Static_assert(offsetof(struct Block, size) == 56 && offsetof(struct Block, requested_size) == 64 &&
	       offsetof(struct Block, ptr) == 80 && offsetof(struct Block, allocated) == 88 &&
	       offsetof(struct Block, prev) == 96 && offsetof(struct Block, next) == 104 &&
	       offsetof(struct Block, expandable_segment_) == 160 && sizeof(struct Block) == 168,
	       "PyTorch 2.10+'s Block");
#endif

struct Stat {
	int64_t current, peak, allocated, freed;
};
enum { AGGREGATE, SMALL_POOL, LARGE_POOL, STAT_TYPES };
struct DeviceStats {
	struct Stat allocation[3], segment[3], active[3], inactive_split[3];
	struct Stat allocated_bytes[3], reserved_bytes[3], active_bytes[3], inactive_split_bytes[3];
	struct Stat requested_bytes[3];
	int64_t num_alloc_retries, num_ooms;
	struct Stat oversize_allocations, oversize_segments;
	int64_t num_sync_all_streams, num_device_alloc, num_device_free, max_split_size;
};
_Static_assert(sizeof(struct DeviceStats) == 976, "c10/core/CachingDeviceAllocator.h's DeviceStats");

/* std::set<Block*, Comparison> as libstdc++ lays it out: the comparator, the header node (its
 * parent is the root; the root's parent is the header) and the count. The simulation keeps the
 * tree unbalanced and leaves the header's leftmost/rightmost unset: a reader walks from the
 * root. */
struct rb_node {
	int color;
	struct rb_node *parent, *left, *right;
	struct Block *value;
};
struct rb_set {
	void *compare;
	struct {
		int color;
		struct rb_node *parent, *left, *right;
	} header;
	size_t count;
};
_Static_assert(sizeof(struct rb_set) == 48 && offsetof(struct rb_node, value) == 32, "libstdc++'s std::set");

struct BlockPool {
	struct rb_set blocks;		/* the free blocks, by (stream, size, address) */
	unsigned char unmapped[48];
	bool is_small;
	void *owner_PrivatePool;
	int64_t get_free_blocks_call_count;
};
_Static_assert(sizeof(struct BlockPool) == 120, "BlockPool");

/* The expandable segment of a pool (the real one keeps its pages' handles): page size, and its
 * unmapped rest (the last block of its chain). */
struct ExpandableSegment {
	size_t page;
	struct Block *tail;
};

struct DeviceCachingAllocator {
	pthread_mutex_t mutex;		/* std::recursive_mutex */
	struct DeviceStats stats;
	int8_t device_id;
	struct BlockPool large_blocks, small_blocks;
	/* The simulation's own: the free blocks of each pool, unordered. */
	struct Block **free_blocks[2];
	size_t n_free[2], cap_free[2];
	struct ExpandableSegment *expandable[2];
};
_Static_assert(offsetof(struct DeviceCachingAllocator, stats) == 40 &&
	       offsetof(struct DeviceCachingAllocator, device_id) == 1016 &&
	       offsetof(struct DeviceCachingAllocator, large_blocks) == 1024 &&
	       offsetof(struct DeviceCachingAllocator, small_blocks) == 1144, "DeviceCachingAllocator");

/* ska::flat_hash_map<void *, Block *>. */
struct map_entry {
	int8_t distance_from_desired;	/* -1: empty */
	void *key;
	struct Block *value;
};
struct flat_hash_map {
	struct map_entry *entries;
	uint64_t num_slots_minus_one;
	int8_t shift;			/* fibonacci_hash_policy */
	int8_t max_lookups;
	float max_load_factor;
	uint64_t num_elements;
};
_Static_assert(sizeof(struct flat_hash_map) == 32 && sizeof(struct map_entry) == 24, "ska::flat_hash_map");

#define SHARDS 67
struct aligned_mutex {
	pthread_mutex_t m;
} __attribute__((aligned(64)));

struct NativeCachingAllocator {
	const void *vptr;
	bool enable_;
	struct aligned_mutex mutex[SHARDS];
	struct flat_hash_map allocated_blocks[SHARDS];
	struct DeviceCachingAllocator *device_allocator;
};
_Static_assert(offsetof(struct NativeCachingAllocator, allocated_blocks) == 4352, "NativeCachingAllocator");

#ifdef SIM_OTHER_NAMES
#define ALLOC_FOUND_BLOCK "_ZN3c104cuda20CUDACachingAllocator6Native22DeviceCachingAllocator17alloc_found_block_v2Em"
#define DCA_FREE "_ZN3c104cuda20CUDACachingAllocator6Native22DeviceCachingAllocator7releaseEPv"
#else
#define ALLOC_FOUND_BLOCK "_ZN3c104cuda20CUDACachingAllocator6Native22DeviceCachingAllocator17alloc_found_block" \
			  "ERKNS2_12_GLOBAL__N_111AllocParamsEmSt10shared_ptrINS_15GatheredContextEEb"
#define DCA_FREE "_ZN3c104cuda20CUDACachingAllocator6Native22DeviceCachingAllocator4freeEPNS2_12_GLOBAL__N_15BlockE"
#endif

static const void *fake_vtable[8];
static struct NativeCachingAllocator native __asm__("_ZN3c104cuda20CUDACachingAllocator6NativeL9allocatorE")
	__attribute__((used)) = { .vptr = fake_vtable + 2, .enable_ = true };
/* std::atomic<CUDAAllocator*> c10::cuda::CUDACachingAllocator::allocator: the backend in use. */
EXPORT struct NativeCachingAllocator *c10_allocator __asm__("_ZN3c104cuda20CUDACachingAllocator9allocatorE") = &native;
static struct DeviceCachingAllocator device0;
static int32_t registration_counter;
static bool expandable;

/* ---- the tables of allocated blocks ----------------------------------------------------------- */

static uint64_t fib_index(const struct flat_hash_map *m, void *key)
{
	return (0x9E3779B97F4A7C15ull * (uint64_t)(uintptr_t)key) >> m->shift;
}

static struct map_entry *empty_table(void)
{
	struct map_entry *e = calloc(4, sizeof *e);
	for (int i = 0; e && i < 3; i++)
		e[i].distance_from_desired = -1;
	return e;	/* e[3]: the special end entry (distance 0) */
}

static void map_init(struct flat_hash_map *m)
{
	*m = (struct flat_hash_map){ .entries = empty_table(), .shift = 63, .max_lookups = 3, .max_load_factor = 0.5f };
}

static void map_put(struct flat_hash_map *m, void *key, struct Block *value);

static void map_grow(struct flat_hash_map *m)
{
	uint64_t old_slots = m->num_slots_minus_one + m->max_lookups, slots = 2 * (m->num_slots_minus_one + 1);
	struct map_entry *old = m->entries;
	if (slots < 4)
		slots = 4;
	int log = __builtin_ctzll(slots);
	int8_t lookups = (int8_t)(log > 4 ? log : 4);
	struct map_entry *e = calloc(slots + (uint64_t)lookups, sizeof *e);
	if (!e)
		abort();
	for (uint64_t i = 0; i + 1 < slots + (uint64_t)lookups; i++)
		e[i].distance_from_desired = -1;
	m->entries = e;
	m->num_slots_minus_one = slots - 1;
	m->shift = (int8_t)(64 - log);
	m->max_lookups = lookups;
	m->num_elements = 0;
	for (uint64_t i = 0; i < old_slots; i++)
		if (old[i].distance_from_desired >= 0)
			map_put(m, old[i].key, old[i].value);
	free(old);
}

static void map_put(struct flat_hash_map *m, void *key, struct Block *value)
{
	if (m->num_slots_minus_one == 0 || m->num_elements + 1 > (m->num_slots_minus_one + 1) * 0.5)
		map_grow(m);
	uint64_t at = fib_index(m, key);
	for (int8_t d = 0; d < m->max_lookups; d++) {
		struct map_entry *e = &m->entries[at + (uint64_t)d];
		if (e->distance_from_desired < 0) {
			*e = (struct map_entry){ d, key, value };
			m->num_elements++;
			return;
		}
	}
	map_grow(m);
	map_put(m, key, value);
}

static struct Block *map_take(struct flat_hash_map *m, void *key)
{
	if (!m->num_slots_minus_one)
		return NULL;
	uint64_t at = fib_index(m, key);
	for (int8_t d = 0; d < m->max_lookups; d++) {
		struct map_entry *e = &m->entries[at + (uint64_t)d];
		if (e->distance_from_desired >= 0 && e->key == key) {
			e->distance_from_desired = -1;
			m->num_elements--;
			return e->value;
		}
	}
	return NULL;
}

static size_t shard_of(void *ptr)
{
	uint64_t k = (uint64_t)(uintptr_t)ptr;	/* twang_mix64 in PyTorch: any mix will do here */
	k = (~k) + (k << 21);
	k ^= k >> 24;
	return (size_t)(k % SHARDS);
}

/* ---- statistics ----------------------------------------------------------------------------- */

static void stat_add(struct Stat *s, int64_t n)
{
	s->current += n;
	if (n > 0) {
		s->allocated += n;
		if (s->current > s->peak)
			s->peak = s->current;
	} else {
		s->freed -= n;
	}
}

static void stat_pool(struct Stat a[3], bool small, int64_t n)
{
	stat_add(&a[AGGREGATE], n);
	stat_add(&a[small ? SMALL_POOL : LARGE_POOL], n);
}

/* ---- pools ---------------------------------------------------------------------------------- */

/* BlockComparatorSize: stream, then size, then address. */
static bool block_less(const struct Block *a, const struct Block *b)
{
	if (a->stream != b->stream)
		return (uintptr_t)a->stream < (uintptr_t)b->stream;
	if (a->size != b->size)
		return a->size < b->size;
	return (uintptr_t)a->ptr < (uintptr_t)b->ptr;
}

static struct rb_node *set_head(struct rb_set *s)
{
	return (struct rb_node *)&s->header;
}

static void set_insert(struct rb_set *s, struct Block *b)
{
	struct rb_node *n = calloc(1, sizeof *n), *parent = set_head(s), **link = &s->header.parent;
	if (!n)
		abort();
	while (*link) {
		parent = *link;
		link = block_less(b, parent->value) ? &parent->left : &parent->right;
	}
	n->value = b;
	n->parent = parent;
	*link = n;
	s->count++;
}

static void set_replace(struct rb_set *s, struct rb_node *z, struct rb_node *c)
{
	struct rb_node *p = z->parent;
	if (p == set_head(s))
		s->header.parent = c;
	else if (p->left == z)
		p->left = c;
	else
		p->right = c;
	if (c)
		c->parent = p;
}

static void set_erase(struct rb_set *s, struct Block *b)
{
	struct rb_node *z = s->header.parent;
	while (z && z->value != b)
		z = block_less(b, z->value) ? z->left : z->right;
	if (!z)
		return;
	if (z->left && z->right) {	/* its successor's value moves up; the successor goes */
		struct rb_node *y = z->right;
		while (y->left)
			y = y->left;
		z->value = y->value;
		z = y;
	}
	set_replace(s, z, z->left ? z->left : z->right);
	free(z);
	s->count--;
}

static int pool_index(const struct DeviceCachingAllocator *d, const struct BlockPool *p)
{
	return p == &d->small_blocks;
}

static void pool_insert(struct DeviceCachingAllocator *d, struct Block *b)
{
	int i = pool_index(d, b->pool);
	if (d->n_free[i] == d->cap_free[i]) {
		d->cap_free[i] = d->cap_free[i] ? 2 * d->cap_free[i] : 64;
		d->free_blocks[i] = realloc(d->free_blocks[i], d->cap_free[i] * sizeof *d->free_blocks[i]);
		if (!d->free_blocks[i])
			abort();
	}
	d->free_blocks[i][d->n_free[i]++] = b;
	set_insert(&b->pool->blocks, b);
}

static void pool_erase(struct DeviceCachingAllocator *d, struct Block *b)
{
	int i = pool_index(d, b->pool);
	for (size_t k = 0; k < d->n_free[i]; k++)
		if (d->free_blocks[i][k] == b) {
			d->free_blocks[i][k] = d->free_blocks[i][--d->n_free[i]];
			set_erase(&b->pool->blocks, b);
			return;
		}
}

static struct Block *new_block(void *stream, size_t size, struct BlockPool *pool, void *ptr)
{
	struct Block *b = calloc(1, sizeof *b);
	if (!b)
		abort();
	b->device = 0;
	b->stream = stream;
	b->size = size;
	b->pool = pool;
	b->ptr = ptr;
	b->mapped = true;
	b->registration_counter = ++registration_counter;
	return b;
}

static size_t round_size(size_t size)
{
	return size < MIN_BLOCK ? MIN_BLOCK : MIN_BLOCK * ((size + MIN_BLOCK - 1) / MIN_BLOCK);
}

static size_t allocation_size(size_t size)
{
	if (size <= SMALL_SIZE)
		return SMALL_BUFFER;
	if (size < MIN_LARGE_ALLOC)
		return LARGE_BUFFER;
	return ROUND_LARGE * ((size + ROUND_LARGE - 1) / ROUND_LARGE);
}

/* Best fit: the smallest free mapped block of the pool and stream that holds size. */
static struct Block *get_free_block(struct DeviceCachingAllocator *d, struct BlockPool *pool, void *stream,
				    size_t size)
{
	int i = pool_index(d, pool);
	struct Block *best = NULL;
	for (size_t k = 0; k < d->n_free[i]; k++) {
		struct Block *b = d->free_blocks[i][k];
		if (b->stream == stream && b->mapped && b->size >= size && (!best || b->size < best->size ||
		    (b->size == best->size && (uintptr_t)b->ptr < (uintptr_t)best->ptr)))
			best = b;
	}
	if (best)
		pool_erase(d, best);
	return best;
}

static struct Block *alloc_segment(struct DeviceCachingAllocator *d, struct BlockPool *pool, void *stream, size_t size)
{
	void *ptr = NULL;
	size_t bytes = allocation_size(size);
	if (cudaMalloc(&ptr, bytes) != cudaSuccess)
		return NULL;
	stat_pool(d->stats.segment, pool->is_small, 1);
	stat_pool(d->stats.reserved_bytes, pool->is_small, (int64_t)bytes);
	d->stats.num_device_alloc++;
	return new_block(stream, bytes, pool, ptr);
}

/* Merges src into dst (neighbours, both free); src goes. */
static void merge(struct DeviceCachingAllocator *d, struct Block *dst, struct Block *src)
{
	if (!src || src->allocated || src->mapped != dst->mapped)
		return;
	if (dst->prev == src) {
		dst->ptr = src->ptr;
		dst->prev = src->prev;
		if (dst->prev)
			dst->prev->next = dst;
	} else {
		dst->next = src->next;
		if (dst->next)
			dst->next->prev = dst;
	}
	dst->size += src->size;
	if (src->mapped)
		pool_erase(d, src);
	free(src);
}

/* PyTorch's DriverAPI: the driver's functions from cuGetProcAddress (cudaGetDriverEntryPoint
 * asks it), called through those pointers. Without a (SIMULATED) driver, pages take no memory. */
static struct {
	pthread_once_t once;
	__typeof__(cuMemCreate) *create;
	__typeof__(cuMemRelease) *release;
} driver_api = { .once = PTHREAD_ONCE_INIT };

static void driver_api_load(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	__typeof__(cuGetProcAddress_v2) *get_proc = lib ? dlsym(lib, "cuGetProcAddress_v2") : NULL;
	void *create = NULL, *release = NULL;
	if (!get_proc || !dlsym(lib, "cuSimulatedDriver") ||
	    get_proc("cuMemCreate", &create, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, NULL) != CUDA_SUCCESS ||
	    get_proc("cuMemRelease", &release, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, NULL) != CUDA_SUCCESS)
		return;
	driver_api.create = (__typeof__(cuMemCreate) *)create;
	driver_api.release = (__typeof__(cuMemRelease) *)release;
}

/* ExpandableSegment::map, in short: the physical memory of n pages, one cuMemCreate each; at an
 * out-of-memory the pages made so far are given back and nothing is mapped. */
static bool map_pages(size_t page, size_t n)
{
	pthread_once(&driver_api.once, driver_api_load);
	if (!driver_api.create)
		return true;
	CUmemGenericAllocationHandle h[n ? n : 1];
	CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
				     .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
	for (size_t k = 0; k < n; k++)
		if (driver_api.create(&h[k], page, &prop, 0) != CUDA_SUCCESS) {
			while (k--)
				driver_api.release(h[k]);
			return false;
		}
	return true;	/* the handles are not kept: pages are never unmapped here */
}

/* Expandable segments: a free mapped block that holds size bytes at the end of what the pool's
 * segment has mapped: whole pages mapped for it, merged with a free mapped block just before
 * (PyTorch's try_allocate_expandable_block, in short; pages are never unmapped here). */
static struct Block *expand(struct DeviceCachingAllocator *d, struct BlockPool *pool, void *stream, size_t size)
{
	int i = pool_index(d, pool);
	struct ExpandableSegment *es = d->expandable[i];
	if (!es) {
		void *va = mmap(NULL, EXPANDABLE_SPACE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (va == MAP_FAILED || !(es = calloc(1, sizeof *es)))
			return NULL;
		es->page = pool->is_small ? SMALL_BUFFER : LARGE_BUFFER;
		es->tail = new_block(stream, EXPANDABLE_SPACE, pool, va);
		es->tail->mapped = false;
		es->tail->expandable_segment_ = es;
		d->expandable[i] = es;
	}
	struct Block *tail = es->tail, *before = tail->prev;
	size_t need = before && !before->allocated ? (before->size < size ? size - before->size : 0) : size;
	size_t map = (need + es->page - 1) / es->page * es->page;
	if (!map || map >= tail->size)
		return NULL;	/* out of address space (or nothing to map: cannot be) */
	if (!map_pages(es->page, map / es->page))
		return NULL;	/* out of memory */
	struct Block *m = new_block(stream, map, pool, tail->ptr);
	m->expandable_segment_ = es;
	m->prev = before;
	m->next = tail;
	if (before)
		before->next = m;
	tail->prev = m;
	tail->ptr = (char *)tail->ptr + map;
	tail->size -= map;
	stat_pool(d->stats.reserved_bytes, pool->is_small, (int64_t)map);
	d->stats.num_device_alloc++;
	if (before && !before->allocated)
		merge(d, m, before);
	return m;
}

/* ---- DeviceCachingAllocator ------------------------------------------------------------------ */

struct AllocParams {
	struct Block search_key;	/* device, stream, size */
	struct BlockPool *pool;
	size_t alloc_size;
	struct Block *block;
};

/* Block* DeviceCachingAllocator::alloc_found_block(const AllocParams&, size_t orig_size,
 * std::shared_ptr<GatheredContext>, bool split_remainder): the block found, split if asked,
 * handed out. */
static struct Block *alloc_found_block(struct DeviceCachingAllocator *self, const struct AllocParams *params,
				       size_t orig_size, void *context, bool split_remainder)
	__asm__(ALLOC_FOUND_BLOCK) __attribute__((noinline, used));
static struct Block *alloc_found_block(struct DeviceCachingAllocator *self, const struct AllocParams *params,
				       size_t orig_size, void *context, bool split_remainder)
{
	(void)context;
	size_t size = params->search_key.size;
	struct Block *block = params->block;
	if (split_remainder) {
		struct Block *remaining = block;
		block = new_block(params->search_key.stream, size, params->pool, remaining->ptr);
		block->expandable_segment_ = remaining->expandable_segment_;
		block->prev = remaining->prev;
		if (block->prev)
			block->prev->next = block;
		block->next = remaining;
		remaining->prev = block;
		remaining->ptr = (char *)remaining->ptr + size;
		remaining->size -= size;
		pool_insert(self, remaining);
	}
	block->allocated = true;
	block->requested_size = orig_size;
	bool small = params->pool->is_small;
	stat_pool(self->stats.allocation, small, 1);
	stat_pool(self->stats.allocated_bytes, small, (int64_t)block->size);
	stat_pool(self->stats.active, small, 1);
	stat_pool(self->stats.active_bytes, small, (int64_t)block->size);
	stat_pool(self->stats.requested_bytes, small, (int64_t)block->requested_size);
	return block;
}

static void release_cached(struct DeviceCachingAllocator *d);

static struct Block *dca_malloc(struct DeviceCachingAllocator *d, size_t orig_size, void *stream)
{
	size_t size = round_size(orig_size);
	struct BlockPool *pool = size <= SMALL_SIZE ? &d->small_blocks : &d->large_blocks;
	struct AllocParams params = { .search_key = { .stream = stream, .size = size }, .pool = pool,
				      .alloc_size = allocation_size(size) };
	pthread_mutex_lock(&d->mutex);
	params.block = get_free_block(d, pool, stream, size);
	if (!params.block)
		params.block = expandable ? expand(d, pool, stream, size) : alloc_segment(d, pool, stream, size);
	if (!params.block && !expandable) {	/* PyTorch frees its cache and tries again */
		d->stats.num_alloc_retries++;
		release_cached(d);
		params.block = alloc_segment(d, pool, stream, size);
	}
	if (!params.block)	/* then gives up: OutOfMemoryError */
		d->stats.num_ooms++;
	struct Block *b = NULL;
	if (params.block) {
		size_t rest = params.block->size - size;
		bool split = pool->is_small || expandable ? rest >= MIN_BLOCK : rest > SMALL_SIZE;
		b = alloc_found_block(d, &params, orig_size, NULL, split);
	}
	pthread_mutex_unlock(&d->mutex);
	return b;
}

/* void DeviceCachingAllocator::free(Block*): counted free, merged with free neighbours. */
static void dca_free(struct DeviceCachingAllocator *self, struct Block *block) __asm__(DCA_FREE)
	__attribute__((noinline, used));
static void dca_free(struct DeviceCachingAllocator *self, struct Block *block)
{
	pthread_mutex_lock(&self->mutex);
	bool small = block->pool->is_small;
	block->allocated = false;
	stat_pool(self->stats.allocation, small, -1);
	stat_pool(self->stats.allocated_bytes, small, -(int64_t)block->size);
	stat_pool(self->stats.active, small, -1);
	stat_pool(self->stats.active_bytes, small, -(int64_t)block->size);
	stat_pool(self->stats.requested_bytes, small, -(int64_t)block->requested_size);
	block->requested_size = 0;
	merge(self, block, block->prev);
	merge(self, block, block->next);
	pool_insert(self, block);
	pthread_mutex_unlock(&self->mutex);
}

/* Gives back the segments whose one block is free (not expandable ones). */
static void release_cached(struct DeviceCachingAllocator *d)
{
	pthread_mutex_lock(&d->mutex);
	for (int i = 0; i < 2; i++)
		for (size_t k = 0; k < d->n_free[i];) {
			struct Block *b = d->free_blocks[i][k];
			if (b->prev || b->next || b->expandable_segment_) {
				k++;
				continue;
			}
			cudaFree(b->ptr);
			stat_pool(d->stats.segment, b->pool->is_small, -1);
			stat_pool(d->stats.reserved_bytes, b->pool->is_small, -(int64_t)b->size);
			d->stats.num_device_free++;
			d->free_blocks[i][k] = d->free_blocks[i][--d->n_free[i]];
			set_erase(&b->pool->blocks, b);
			free(b);
		}
	pthread_mutex_unlock(&d->mutex);
}

/* ---- NativeCachingAllocator: what the programs call -------------------------------------------- */

__attribute__((constructor)) static void sim_init(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&device0.mutex, &a);
	device0.large_blocks.is_small = false;
	device0.small_blocks.is_small = true;
	device0.large_blocks.blocks.header.left = device0.large_blocks.blocks.header.right = set_head(&device0.large_blocks.blocks);
	device0.small_blocks.blocks.header.left = device0.small_blocks.blocks.header.right = set_head(&device0.small_blocks.blocks);
	for (int i = 0; i < SHARDS; i++) {
		pthread_mutex_init(&native.mutex[i].m, NULL);
		map_init(&native.allocated_blocks[i]);
	}
	native.device_allocator = &device0;
	const char *conf = getenv("PYTORCH_CUDA_ALLOC_CONF");
	expandable = conf && strstr(conf, "expandable_segments:True");
}

/* NativeCachingAllocator::malloc: a block of size bytes on stream; NULL when out of memory. */
EXPORT void *simtorch_alloc(size_t size, void *stream)
{
	struct Block *b = size ? dca_malloc(&device0, size, stream) : NULL;
	if (!b)
		return NULL;
	size_t s = shard_of(b->ptr);
	pthread_mutex_lock(&native.mutex[s].m);
	map_put(&native.allocated_blocks[s], b->ptr, b);
	pthread_mutex_unlock(&native.mutex[s].m);
	return b->ptr;
}

/* NativeCachingAllocator::free: 0, or -1 for a pointer it did not hand out. */
EXPORT int simtorch_free(void *ptr)
{
	size_t s = shard_of(ptr);
	pthread_mutex_lock(&native.mutex[s].m);
	struct Block *b = map_take(&native.allocated_blocks[s], ptr);
	pthread_mutex_unlock(&native.mutex[s].m);
	if (!b)
		return -1;
	dca_free(native.device_allocator, b);
	return 0;
}

/* torch.cuda.memory_allocated() and memory_reserved(). */
EXPORT long long simtorch_allocated(void)
{
	return (long long)device0.stats.allocated_bytes[AGGREGATE].current;
}

EXPORT long long simtorch_reserved(void)
{
	return (long long)device0.stats.reserved_bytes[AGGREGATE].current;
}

EXPORT void simtorch_empty_cache(void)
{
	release_cached(&device0);
}

EXPORT int simtorch_expandable(void)
{
	return expandable;
}

/* The size the allocator counts for the block it handed out at ptr (0: none). */
EXPORT size_t simtorch_block_size(void *ptr)
{
	size_t s = shard_of(ptr), size = 0;
	pthread_mutex_lock(&native.mutex[s].m);
	struct flat_hash_map *m = &native.allocated_blocks[s];
	uint64_t at = m->num_slots_minus_one ? fib_index(m, ptr) : 0;
	for (int8_t d = 0; m->num_slots_minus_one && d < m->max_lookups; d++) {
		struct map_entry *e = &m->entries[at + (uint64_t)d];
		if (e->distance_from_desired >= 0 && e->key == ptr)
			size = e->value->size;
	}
	pthread_mutex_unlock(&native.mutex[s].m);
	return size;
}

/* The live blocks (for the stand-in torch's _snapshot, tests/sim/fake_torch): up to max of them
 * into addr, size, requested; returns how many there are. */
EXPORT size_t simtorch_live_blocks(uint64_t *addr, uint64_t *size, uint64_t *requested, size_t max)
{
	size_t n = 0;
	for (int s = 0; s < SHARDS; s++) {
		pthread_mutex_lock(&native.mutex[s].m);
		struct flat_hash_map *m = &native.allocated_blocks[s];
		uint64_t slots = m->num_slots_minus_one + (uint64_t)m->max_lookups;
		for (uint64_t i = 0; m->num_slots_minus_one && i < slots; i++) {
			struct map_entry *e = &m->entries[i];
			if (e->distance_from_desired < 0)
				continue;
			if (n < max) {
				addr[n] = (uint64_t)(uintptr_t)e->value->ptr;
				size[n] = e->value->size;
				requested[n] = e->value->requested_size;
			}
			n++;
		}
		pthread_mutex_unlock(&native.mutex[s].m);
	}
	return n;
}

/* What torch.cuda.memory._snapshot() would list, from the simulation's own books (its arrays of
 * free blocks and its tables of allocated ones, not the std::sets gputop reads), as PyTorch's
 * snapshot() walks them: a mapped block whose prev is none or unmapped begins a segment, which
 * runs while next is mapped. One line per segment, then one per block:
 *   simtorch: segment ADDRESS TOTAL ALLOCATED large|small expandable|fixed
 *   simtorch: block ADDRESS SIZE REQUESTED active_allocated|inactive
 * segments by address. */
static int by_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)(*(struct Block *const *)a)->ptr, y = (uintptr_t)(*(struct Block *const *)b)->ptr;
	return x < y ? -1 : x > y;
}

EXPORT void simtorch_print_snapshot(FILE *f)
{
	struct DeviceCachingAllocator *d = &device0;
	size_t n = 0, cap = d->n_free[0] + d->n_free[1] + 1;
	for (int s = 0; s < SHARDS; s++)
		cap += native.allocated_blocks[s].num_elements;
	struct Block **all = calloc(cap, sizeof *all);
	if (!all)
		abort();
	pthread_mutex_lock(&d->mutex);
	for (int i = 0; i < 2; i++)
		for (size_t k = 0; k < d->n_free[i]; k++)
			all[n++] = d->free_blocks[i][k];
	for (int s = 0; s < SHARDS; s++) {
		struct flat_hash_map *m = &native.allocated_blocks[s];
		uint64_t slots = m->num_slots_minus_one + (uint64_t)m->max_lookups;
		for (uint64_t i = 0; m->num_slots_minus_one && i < slots; i++)
			if (m->entries[i].distance_from_desired >= 0)
				all[n++] = m->entries[i].value;
	}
	qsort(all, n, sizeof *all, by_ptr);
	for (size_t i = 0; i < n; i++) {
		struct Block *h = all[i];
		if (!h->mapped || (h->prev && h->prev->mapped))
			continue;
		size_t total = 0, allocated = 0;
		for (struct Block *b = h; b && b->mapped; b = b->next) {
			total += b->size;
			allocated += b->allocated ? b->size : 0;
		}
		fprintf(f, "simtorch: segment %p %zu %zu %s %s\n", h->ptr, total, allocated,
			h->pool->is_small ? "small" : "large", h->expandable_segment_ ? "expandable" : "fixed");
		for (struct Block *b = h; b && b->mapped; b = b->next)
			fprintf(f, "simtorch: block %p %zu %zu %s\n", b->ptr, b->size, b->requested_size,
				b->allocated ? "active_allocated" : "inactive");
	}
	pthread_mutex_unlock(&d->mutex);
	fflush(f);
	free(all);
}
