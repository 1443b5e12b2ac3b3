/* torch_rows.c — PyTorch's memory as rows (torch_rows.h): figures per device, blocks, sites. It
 * formats nothing but the address and keeps no state. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* qsort_r */
#endif
#include "torch_rows.h"
#include "hashmap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct torch_process *torch_rows_process(const struct torch_snapshot *s, pid_t pid)
{
	for (size_t i = 0; s && i < s->n_proc; i++)
		if (s->proc[i].pid == pid)
			return &s->proc[i];
	return NULL;
}

/* A library of PyTorch's (or the C++ runtime's) own: not where a program allocated. */
static bool torch_library(const char *module)
{
	static const char own[][12] = { "libc10", "libtorch", "libstdc++", "libgcc_s" };
	for (size_t i = 0; module && i < sizeof own / sizeof own[0]; i++)
		if (strncmp(module, own[i], strlen(own[i])) == 0)
			return true;
	return false;
}

/* A Python frame of the torch package's own code (torch/nn/modules/linear.py...). */
static bool torch_package(const struct stack_frame *f)
{
	return f->file && strstr(f->file, "/torch/");
}

const struct stack_frame *torch_rows_site(uint32_t id)
{
	const struct stack *st = stacks_get(id);
	const struct stack_frame *python = NULL;
	if (!st)
		return NULL;
	for (uint32_t i = 0; i < st->n; i++)
		if (st->frame[i].python) {
			if (!torch_package(&st->frame[i]))
				return &st->frame[i];
			if (!python)
				python = &st->frame[i];
		}
	if (python)
		return python;
	for (uint32_t i = 0; i < st->n; i++)
		if (!torch_library(st->frame[i].module))
			return &st->frame[i];
	return st->n ? &st->frame[st->n - 1] : NULL;
}

static int by_size(const void *a, const void *b)
{
	const struct torch_row_block *x = a, *y = b;
	if (x->b->size != y->b->size)
		return x->b->size > y->b->size ? -1 : 1;
	return x->b->ptr < y->b->ptr ? -1 : x->b->ptr > y->b->ptr;
}

static int by_age(const void *a, const void *b)
{
	const struct torch_row_block *x = *(const struct torch_row_block *const *)a;
	const struct torch_row_block *y = *(const struct torch_row_block *const *)b;
	if (x->age_ns != y->age_ns)
		return x->age_ns > y->age_ns ? -1 : 1;
	return by_size(x, y);
}

static int by_live_bytes(const void *a, const void *b)
{
	const struct torch_row_site *x = a, *y = b;
	if (x->live_bytes != y->live_bytes)
		return x->live_bytes > y->live_bytes ? -1 : 1;
	return x->live_blocks > y->live_blocks ? -1 : x->live_blocks < y->live_blocks;
}

static bool same_site(const struct stack_frame *a, const struct stack_frame *b)
{
	if (!a || !b)
		return a == b;
	return a->line == b->line && a->python == b->python && strcmp(a->function, b->function) == 0 &&
	       (a->file == b->file || (a->file && b->file && strcmp(a->file, b->file) == 0));
}

struct site_key {
	uint64_t key;		/* a hash of the site (its strings are interned: their addresses) */
	size_t idx;
};

static uint64_t site_hash(const struct torch_row_block *b)
{
	if (!b->site)
		return b->before ? 1 : 2;
	uint64_t h = (uint64_t)(uintptr_t)b->site->function * 0x9e3779b97f4a7c15ull;
	h ^= (uint64_t)(uintptr_t)b->site->file * 0xc2b2ae3d27d4eb4full + b->site->line + (b->site->python ? 7 : 0);
	return h > 2 ? h : h + 3;
}

/* Live blocks by site: the blocks come sorted by size, so a site's first block is its largest. */
static int build_sites(struct torch_rows *r)
{
	struct hashmap by = HASHMAP_INIT(sizeof(struct site_key), 256, 0);
	r->site = calloc(r->n_block ? r->n_block : 1, sizeof *r->site);
	if (!r->site)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_block; i++) {
		const struct torch_row_block *b = &r->block[i];
		struct torch_row_site *s = NULL;
		bool added = false;
		struct site_key *k = NULL;
		for (uint64_t key = site_hash(b);; key = key + 1 ? key + 1 : 3) {
			if (!(k = hashmap_insert(&by, key, &added))) {
				hashmap_clear(&by);
				return -ENOMEM;
			}
			if (added)
				break;
			s = &r->site[k->idx];
			if (s->before == b->before && same_site(s->site, b->site))
				break;
			s = NULL;
		}
		if (!s) {
			k->idx = r->n_site;
			s = &r->site[r->n_site++];
			*s = (struct torch_row_site){ .site = b->site, .stack = b->b->stack, .before = b->before };
		}
		s->live_bytes += b->b->size;
		s->live_blocks++;
		if (b->age_ns > s->oldest_age_ns)
			s->oldest_age_ns = b->age_ns;
	}
	hashmap_clear(&by);
	qsort(r->site, r->n_site, sizeof *r->site, by_live_bytes);
	return 0;
}

static struct torch_row_device *device_row(struct torch_rows *r, pid_t pid, int device)
{
	for (size_t i = 0; i < r->n_device; i++)
		if (r->device[i].pid == pid && r->device[i].device == device)
			return &r->device[i];
	return NULL;
}

static int seg_cmp(pid_t pa, int da, uint64_t a, pid_t pb, int db, uint64_t b)
{
	if (pa != pb)
		return pa < pb ? -1 : 1;
	if (da != db)
		return da < db ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* The snapshot's segments in order of (process, device, base), to find a block's. */
static int by_place(const void *a, const void *b, void *arg)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const struct torch_snapshot *s = arg;
	return seg_cmp(s->seg_pid[x], s->segment[x].device, s->segment[x].base, s->seg_pid[y],
		       s->segment[y].device, s->segment[y].base);
}

/* The segment holding block b (order: the segments' indexes sorted by by_place), or NULL. */
static const struct torch_segment *segment_of(const struct torch_snapshot *s, const size_t *order,
					      const struct torch_block *b)
{
	size_t lo = 0, hi = s->n_segment;
	while (lo < hi) {	/* the first segment after b's place */
		size_t mid = (lo + hi) / 2, k = order[mid];
		if (seg_cmp(s->seg_pid[k], s->segment[k].device, s->segment[k].base, b->pid, b->device, b->ptr) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	size_t k = order[lo - 1];
	const struct torch_segment *seg = &s->segment[k];
	return s->seg_pid[k] == b->pid && seg->device == b->device && b->ptr - seg->base < seg->size ? seg : NULL;
}

struct held {
	size_t seg;		/* index in the snapshot's segments */
	uint64_t first, last;	/* pages an expandable segment's block touches; 0, 0 otherwise */
};

static int by_segment_page(const void *a, const void *b)
{
	const struct held *x = a, *y = b;
	if (x->seg != y->seg)
		return x->seg < y->seg ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* What torch.cuda.empty_cache() would give back on each device: its reserved memory but the
 * segments holding a live block (cudaMalloc'd segments are freed whole, or not at all) and,
 * in expandable segments, the pages they touch (those are unmapped page by page). Known where
 * every live block's segment is, and the blocks from before gputop came are. */
static int empty_cache(struct torch_rows *r, const struct torch_snapshot *s)
{
	struct held *h = malloc((r->n_block ? r->n_block : 1) * sizeof *h);
	size_t *order = malloc((s->n_segment ? s->n_segment : 1) * sizeof *order);
	size_t n = 0;
	if (!h || !order) {
		free(h);
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->n_segment; i++)
		order[i] = i;
	qsort_r(order, s->n_segment, sizeof *order, by_place, (void *)s);
	for (size_t i = 0; i < r->n_device; i++)
		r->device[i].empty_cache_known = r->device[i].stats_known;
	for (size_t i = 0; i < r->n_block; i++) {
		const struct torch_block *b = r->block[i].b;
		const struct torch_segment *seg = segment_of(s, order, b);
		struct torch_row_device *d = device_row(r, b->pid, b->device);
		if (!seg) {
			if (d)
				d->empty_cache_known = false;
			continue;
		}
		struct held x = { .seg = (size_t)(seg - s->segment) };
		if (seg->expandable && seg->page) {
			x.first = (b->ptr - seg->base) / seg->page;
			x.last = (b->ptr + b->size - 1 - seg->base) / seg->page;
		}
		h[n++] = x;
	}
	qsort(h, n, sizeof *h, by_segment_page);
	uint64_t *held = calloc(r->n_device ? r->n_device : 1, sizeof *held);
	if (!held) {
		free(h);
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n;) {
		const struct torch_segment *seg = &s->segment[h[i].seg];
		struct torch_row_device *d = device_row(r, s->seg_pid[h[i].seg], seg->device);
		size_t j = i;
		uint64_t bytes = 0;
		if (!seg->expandable || !seg->page) {
			bytes = seg->size;
			while (j < n && h[j].seg == h[i].seg)
				j++;
		} else {	/* the pages touched, runs merged */
			uint64_t from = h[i].first, to = h[i].last;
			for (; j < n && h[j].seg == h[i].seg; j++) {
				if (h[j].first > to + 1) {
					bytes += (to - from + 1) * seg->page;
					from = h[j].first;
				}
				if (h[j].last > to)
					to = h[j].last;
			}
			bytes += (to - from + 1) * seg->page;
		}
		if (d)
			held[d - r->device] += bytes;
		i = j;
	}
	for (size_t i = 0; i < r->n_device; i++) {
		struct torch_row_device *d = &r->device[i];
		const struct torch_process *p = torch_rows_process(s, d->pid);
		if (p && p->before == TORCH_BEFORE_UNKNOWN)
			d->empty_cache_known = false;
		d->empty_cache = d->reserved > held[i] ? d->reserved - held[i] : 0;
	}
	free(held);
	free(h);
	free(order);
	return 0;
}

/* How much an allocator's state tells: the order in which processes' states are merged. */
static int state_rank(int state)
{
	switch (state) {
	case TORCH_TRACKING: return 3;
	case TORCH_NOT_READ: return 2;
	case TORCH_UNKNOWN: return 1;
	default: return 0;
	}
}

static void process_rows(struct torch_rows *r, const struct torch_snapshot *s)
{
	r->state = TORCH_ABSENT;
	r->before = TORCH_BEFORE_NONE;
	r->why = "";
	for (size_t i = 0; i < s->n_proc; i++) {
		const struct torch_process *p = &s->proc[i];
		if (state_rank(p->state) > state_rank(r->state))
			r->state = p->state;
		if (p->state == TORCH_TRACKING && p->before > r->before)
			r->before = p->before;
		if (!*r->why && p->why[0])
			r->why = p->why;
		r->before_blocks += p->before_blocks;
		r->before_bytes += p->before_bytes;
		r->unknown_frees += p->unknown_frees;
		r->read_threads += p->read_threads;
		r->unread += p->unread;
		r->allocs += p->allocs;
		r->frees += p->frees;
	}
}

static void device_rows(struct torch_rows *r, const struct torch_snapshot *s)
{
	for (size_t i = 0; i < s->n_device; i++) {
		const struct torch_device *d = &s->device[i];
		struct torch_row_device *row = &r->device[r->n_device++];
		*row = (struct torch_row_device){
			.pid = d->pid, .device = d->device,
			.allocated = d->live_bytes, .requested = d->requested_bytes, .live_blocks = d->live_blocks,
			.peak_allocated = d->peak_live_bytes, .stats_known = d->alloc.known,
		};
		if (!d->alloc.known)
			continue;
		row->reserved = (uint64_t)d->alloc.reserved;
		row->reserved_peak = (uint64_t)d->alloc.reserved_peak;
		row->stats_allocated = (uint64_t)d->alloc.allocated;
		row->stats_allocated_peak = (uint64_t)d->alloc.allocated_peak;
		row->segments = d->alloc.segments;
		row->ooms = d->alloc.ooms;
		row->alloc_retries = d->alloc.alloc_retries;
		row->agrees = d->alloc.tracked_at_read == (uint64_t)d->alloc.allocated;
		row->free_in_segments = row->reserved > row->stats_allocated ? row->reserved - row->stats_allocated : 0;
	}
}

int torch_rows_build(struct torch_rows *r, const struct torch_snapshot *s)
{
	memset(r, 0, sizeof *r);
	r->snap = s;
	r->leak_age_ns = torch_mem_leak_age();
	r->device = calloc(s->n_device ? s->n_device : 1, sizeof *r->device);
	r->block = calloc(s->n_block ? s->n_block : 1, sizeof *r->block);
	if (!r->device || !r->block) {
		torch_rows_free(r);
		return -ENOMEM;
	}
	process_rows(r, s);
	device_rows(r, s);
	for (size_t i = 0; i < s->n_block; i++) {
		const struct torch_block *b = &s->block[i];
		const struct torch_process *p = torch_rows_process(s, b->pid);
		struct torch_row_block *row = &r->block[r->n_block++];
		uint64_t since = b->t_ns ? b->t_ns : p ? p->attach_ns : s->t_ns;
		*row = (struct torch_row_block){ .b = b, .before = !b->t_ns, .site = torch_rows_site(b->stack),
						 .age_ns = s->t_ns > since ? s->t_ns - since : 0 };
		snprintf(row->address, sizeof row->address, "0x%" PRIx64, b->ptr);
		row->leak = row->age_ns >= r->leak_age_ns;
		if (row->leak) {
			struct torch_row_device *d = device_row(r, b->pid, b->device);
			if (d) {
				d->leak_bytes += b->size;
				d->leak_blocks++;
			}
			r->leak_bytes += b->size;
			r->n_leak++;
		}
	}
	qsort(r->block, r->n_block, sizeof *r->block, by_size);
	r->leak = malloc((r->n_leak ? r->n_leak : 1) * sizeof *r->leak);
	if (!r->leak) {
		torch_rows_free(r);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < r->n_block; i++)
		if (r->block[i].leak)
			r->leak[k++] = &r->block[i];
	qsort(r->leak, r->n_leak, sizeof *r->leak, by_age);
	if (build_sites(r) < 0 || empty_cache(r, s) < 0) {
		torch_rows_free(r);
		return -ENOMEM;
	}
	return 0;
}

void torch_rows_free(struct torch_rows *r)
{
	free(r->device);
	free(r->block);
	free(r->site);
	free(r->leak);
	memset(r, 0, sizeof *r);
}

const struct stack_frame *torch_rows_request_site(uint32_t stack)
{
	static const char *const theirs[] = { "libcudart", "libcuda.", "libc10", "libtorch", "libstdc++" };
	const struct stack *st = stacks_get(stack);
	const struct stack_frame *native = NULL;
	for (uint32_t i = 0; st && i < st->n; i++) {
		const struct stack_frame *f = &st->frame[i];
		bool ours = true;
		if (f->python) {
			if (f->file && !strstr(f->file, "/torch/"))
				return f;
			continue;
		}
		for (size_t k = 0; k < sizeof theirs / sizeof *theirs; k++)
			ours &= !(f->module && strncmp(f->module, theirs[k], strlen(theirs[k])) == 0);
		if (ours && !native)
			native = f;
	}
	return native;
}
