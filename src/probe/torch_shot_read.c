/* torch_shot_read.c — PyTorch's allocator at one instant (torch_shot_read.h).
 *
 * Layouts (libstdc++, x86-64; PyTorch 2.x's BlockPool, checked before use):
 *   BlockPool @ DeviceCachingAllocator + 1024 (large_blocks), + 1144 (small_blocks):
 *     std::set<Block*, Comparison> blocks: {comparator @0, header {color @8, parent (the root)
 *     @16, leftmost @24, rightmost @32}, node_count @40}; then the set of unmapped blocks
 *     (48 bytes), bool is_small @96.
 *   A node of the set: {color @0, parent @8, left @16, right @24, Block* @32}.
 * A node read must point back at its parent, its Block must read as free and of this pool, and
 * the nodes found must number node_count; else the pool is not used (the snapshot then holds
 * the segments of the blocks handed out only, and says so).
 *
 * The segments, as PyTorch's own snapshot() makes them: a mapped block whose prev is none or
 * unmapped begins one, which runs while next is mapped. Each neighbour must border the one
 * before and point back at it. A block neither handed out nor in its pool's set is freed but
 * still used by a stream (its events pending): "active_pending_free". */
#define _GNU_SOURCE
#include "torch_shot_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "hashmap.h"
#include "memory.h"
#include "stacks.h"
#include "torch_alloc.h"
#include "torch_mem.h"
#include "tracee.h"

#define LARGE_POOL_AT 1024
#define SMALL_POOL_AT 1144
#define POOL_IS_SMALL_AT 96
#define SET_ROOT_AT 16
#define SET_COUNT_AT 40
#define SET_HEADER_AT 8
#define NODE_READ 40
#define MAX_POOL_NODES (1u << 22)
#define MAX_BLOCKS (1u << 23)
#define TRIES 3

/* A Block met: read once. */
struct met {
	uint64_t at;		/* the key: the Block's address */
	struct torch_block_view b;
	uint32_t stack;
	bool live;		/* one gputop follows as handed out */
	bool pooled;		/* in its pool's set of free blocks */
	bool done;		/* placed in a segment */
};

struct reading {
	struct tracee *p;
	struct hashmap met;	/* struct met by Block */
	uint64_t *seed;		/* Blocks to start from */
	size_t n_seed, cap_seed;
	uint64_t pools[TORCH_MAX_DEVICES][2];	/* each device's default pools (0: none) */
};

static int push_seed(struct reading *r, uint64_t at)
{
	if (r->n_seed == r->cap_seed) {
		size_t cap = r->cap_seed ? 2 * r->cap_seed : 1024;
		uint64_t *s = realloc(r->seed, cap * sizeof *s);
		if (!s)
			return -ENOMEM;
		r->seed = s;
		r->cap_seed = cap;
	}
	r->seed[r->n_seed++] = at;
	return 0;
}

/* The Block at `at`, read now or before; NULL when it cannot be read. */
static struct met *meet(struct reading *r, uint64_t at)
{
	bool added;
	struct met *m = hashmap_insert(&r->met, at, &added);
	if (!m || !added)
		return m;
	if (hashmap_count(&r->met) > MAX_BLOCKS || torch_block_read(r->p, at, &m->b) < 0) {
		hashmap_remove(&r->met, at, NULL);
		return NULL;
	}
	m->stack = STACK_NONE;
	return m;
}

static uint64_t u64_at(const unsigned char *p, size_t off)
{
	uint64_t v;
	memcpy(&v, p + off, sizeof v);
	return v;
}

/* The free blocks of the pool at `pool` (a std::set walked from its root). */
static int read_pool(struct reading *r, uint64_t pool, int device)
{
	unsigned char set[48];
	if (mem_read(r->p->pid, pool, set, sizeof set) < 0)
		return -EFAULT;
	uint64_t root = u64_at(set, SET_ROOT_AT), count = u64_at(set, SET_COUNT_AT);
	if (count > MAX_POOL_NODES || (!root) != (!count))
		return -EINVAL;
	uint64_t *todo = malloc(2 * sizeof *todo * (count + 1)), seen = 0;
	size_t n = 0;
	int err = 0;
	if (!todo)
		return -ENOMEM;
	if (root) {
		todo[n++] = root;
		todo[n++] = pool + SET_HEADER_AT;	/* its parent */
	}
	while (n && err == 0) {
		uint64_t parent = todo[--n], node = todo[--n];
		unsigned char raw[NODE_READ];
		if (++seen > count || mem_read(r->p->pid, node, raw, sizeof raw) < 0 || u64_at(raw, 8) != parent) {
			err = -EINVAL;
			break;
		}
		struct met *m = meet(r, u64_at(raw, 32));
		if (!m || m->b.allocated || m->b.pool != pool || m->b.device != device) {
			err = -EINVAL;
			break;
		}
		m->pooled = true;
		if ((err = push_seed(r, m->at)) < 0)
			break;
		for (int side = 16; side <= 24; side += 8)
			if (u64_at(raw, (size_t)side)) {
				todo[n++] = u64_at(raw, (size_t)side);
				todo[n++] = node;
			}
	}
	free(todo);
	return err ? err : seen == count ? 0 : -EINVAL;
}

static void say(struct torch_shot *out, const char *why)
{
	if (!out->why[0])
		snprintf(out->why, sizeof out->why, "%s", why);
}

/* The blocks handed out that gputop follows, with their stacks. */
static int seed_live(struct reading *r)
{
	struct torch_snapshot ts;
	if (torch_mem_snapshot(r->p->pid, &ts) < 0)
		return -ENOMEM;
	int err = 0;
	for (size_t i = 0; i < ts.n_block && err == 0; i++) {
		struct met *m = meet(r, ts.block[i].block);
		if (!m || !m->b.allocated)
			continue;	/* taken back meanwhile */
		m->live = true;
		m->stack = ts.block[i].stack;
		err = push_seed(r, m->at);
		int d = m->b.device;
		if (d >= 0 && d < TORCH_MAX_DEVICES && !r->pools[d][0] && torch_device_allocator(r->p, d)) {
			r->pools[d][0] = torch_device_allocator(r->p, d) + LARGE_POOL_AT;
			r->pools[d][1] = torch_device_allocator(r->p, d) + SMALL_POOL_AT;
		}
	}
	torch_mem_snapshot_free(&ts);
	return err;
}

static int add_block(struct torch_shot *s, size_t *cap, const struct met *m, enum torch_shot_state state)
{
	if (s->n_block == *cap) {
		size_t c = *cap ? 2 * *cap : 1024;
		struct torch_shot_block *b = realloc(s->block, c * sizeof *b);
		if (!b)
			return -ENOMEM;
		s->block = b;
		*cap = c;
	}
	s->block[s->n_block++] = (struct torch_shot_block){ .address = m->b.ptr, .size = m->b.size,
							     .requested = m->b.requested, .stack = m->stack,
							     .state = (uint8_t)state };
	return 0;
}

static bool is_default_pool(const struct reading *r, uint64_t pool, int device)
{
	return device >= 0 && device < TORCH_MAX_DEVICES && pool && (pool == r->pools[device][0] || pool == r->pools[device][1]);
}

/* The segment holding seed m: back to its first mapped block, then each block to its last.
 * -EAGAIN: the chain changed under the walk. */
static int walk(struct reading *r, struct met *m, struct torch_shot *s, size_t *cap_seg, size_t *cap_block,
		bool pools_read)
{
	struct met *head = m;
	for (uint64_t steps = 0; head->b.prev; steps++) {
		struct met *prev = meet(r, head->b.prev);
		if (!prev || steps > MAX_BLOCKS || prev->b.next != head->at || prev->b.ptr + prev->b.size != head->b.ptr)
			return -EAGAIN;
		if (!prev->b.mapped)
			break;
		head = prev;
	}
	if (head->done)
		return 0;
	if (s->n_segment == *cap_seg) {
		size_t c = *cap_seg ? 2 * *cap_seg : 64;
		struct torch_shot_segment *g = realloc(s->segment, c * sizeof *g);
		if (!g)
			return -ENOMEM;
		s->segment = g;
		*cap_seg = c;
	}
	size_t first = s->n_block;
	struct torch_shot_segment g = { .device = head->b.device, .address = head->b.ptr, .stream = head->b.stream,
					.expandable = head->b.expandable, .first = first };
	unsigned char small = 0;
	if (head->b.pool && mem_read(r->p->pid, head->b.pool + POOL_IS_SMALL_AT, &small, 1) < 0)
		small = 0;
	g.large = !small;
	uint64_t end = head->b.ptr;
	for (struct met *b = head; b && b->b.mapped;) {
		enum torch_shot_state st = b->b.allocated ? SHOT_ACTIVE_ALLOCATED
					 : pools_read && !b->pooled && is_default_pool(r, b->b.pool, b->b.device)
					     ? SHOT_ACTIVE_PENDING_FREE : SHOT_INACTIVE;
		if (b->b.ptr != end || add_block(s, cap_block, b, st) < 0) {
			s->n_block = first;
			return b->b.ptr != end ? -EAGAIN : -ENOMEM;
		}
		b->done = true;
		end += b->b.size;
		g.total_size += b->b.size;
		if (st == SHOT_ACTIVE_ALLOCATED)
			g.allocated_size += b->b.size;
		if (st != SHOT_INACTIVE) {
			g.active_size += b->b.size;
			g.requested_size += b->b.requested;
		}
		if (!b->b.next)
			break;
		struct met *next = meet(r, b->b.next);
		if (!next || next->b.prev != b->at) {
			s->n_block = first;
			return -EAGAIN;
		}
		b = next;
	}
	g.n = s->n_block - first;
	s->segment[s->n_segment++] = g;
	return 0;
}

static int by_device_address(const void *a, const void *b)
{
	const struct torch_shot_segment *x = a, *y = b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return x->address < y->address ? -1 : x->address > y->address;
}

/* Segments sorted, their blocks kept in segment order (block[] rebuilt in the new order). */
static int sort_segments(struct torch_shot *s)
{
	qsort(s->segment, s->n_segment, sizeof *s->segment, by_device_address);
	struct torch_shot_block *b = malloc((s->n_block ? s->n_block : 1) * sizeof *b);
	if (!b)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < s->n_segment; i++) {
		memcpy(b + n, s->block + s->segment[i].first, s->segment[i].n * sizeof *b);
		s->segment[i].first = n;
		n += s->segment[i].n;
	}
	free(s->block);
	s->block = b;
	return 0;
}

static void read_alloc_conf(pid_t pid, char *out, size_t size)
{
	char path[64], buf[65536];
	static const char key[] = "PYTORCH_CUDA_ALLOC_CONF=";
	snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	out[0] = 0;
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1) {
		buf[n] = 0;
		if (strncmp(buf + i, key, sizeof key - 1) == 0) {
			snprintf(out, size, "%s", buf + i + sizeof key - 1);
			return;
		}
	}
}

static void read_devices(struct tracee *p, struct torch_shot *s)
{
	struct torch_snapshot ts;
	if (torch_mem_snapshot(p->pid, &ts) < 0)
		return;
	s->device = calloc(ts.n_device ? ts.n_device : 1, sizeof *s->device);
	for (size_t i = 0; s->device && i < ts.n_device; i++)
		s->device[s->n_device++] = (struct torch_shot_device){
			.device = ts.device[i].device, .stats_known = ts.device[i].alloc.known,
			.reserved = ts.device[i].alloc.reserved, .allocated = ts.device[i].alloc.allocated };
	torch_mem_snapshot_free(&ts);
}

static int read_once(struct tracee *p, struct torch_shot *out)
{
	struct reading r = { .p = p, .met = HASHMAP_INIT(sizeof(struct met), 1024, 0) };
	size_t cap_seg = 0, cap_block = 0;
	int err = seed_live(&r);
	bool pools_read = err == 0;
	for (int d = 0; d < TORCH_MAX_DEVICES && err == 0; d++)
		for (int k = 0; k < 2 && r.pools[d][k]; k++) {
			int e = read_pool(&r, r.pools[d][k], d);
			if (e == -ENOMEM)
				err = e;
			else if (e < 0)
				pools_read = false;
		}
	for (size_t i = 0; i < r.n_seed && err == 0; i++) {
		struct met *m = hashmap_find(&r.met, r.seed[i]);
		if (m && !m->done && m->b.mapped)
			err = walk(&r, m, out, &cap_seg, &cap_block, pools_read);
	}
	out->pools_read = pools_read;
	if (err == 0)
		err = sort_segments(out);
	hashmap_clear(&r.met);
	free(r.seed);
	return err;
}

int torch_shot_read(struct tracee *p, struct torch_shot *out)
{
	int err = -EAGAIN;
	*out = (struct torch_shot){ .pid = p->pid };
	if (!torch_followed(p)) {
		say(out, "no PyTorch caching allocator followed in the process");
		return -ENODATA;
	}
	for (int t = 0; t < TRIES && err == -EAGAIN; t++) {
		torch_shot_free(out);
		*out = (struct torch_shot){ .pid = p->pid };
		err = read_once(p, out);
	}
	out->t_ns = now_ns();
	read_alloc_conf(p->pid, out->alloc_conf, sizeof out->alloc_conf);
	read_devices(p, out);
	if (err == -EAGAIN)
		say(out, "the allocator changed under every read (the program runs): some segments left out");
	else if (err < 0)
		say(out, "out of memory");
	if (!out->pools_read)
		say(out, "the free blocks of the allocator's pools could not be read: segments holding no "
			 "block handed out are left out");
	return err == -EAGAIN ? 0 : err;
}
