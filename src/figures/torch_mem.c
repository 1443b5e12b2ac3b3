/* torch_mem.c — PyTorch's live blocks and its allocator's totals, per process (torch_mem.h),
 * behind one mutex: the tracer feeds, presenters copy snapshots out. Memory: one record of
 * 64 bytes per block the program holds live, one per segment holding them; nothing grows with
 * the number of allocations made. */
#include "torch_mem.h"
#include "clock.h"
#include "hashmap.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct torch_block) % 8 == 0, "hashmap entries are multiples of 8 bytes");

#define TORCH_MAX_PROCESSES 1024
#define TORCH_LEAK_AGE_NS 30000000000ull

struct proc {
	struct torch_process info;
	struct hashmap blocks;		/* struct torch_block by Block address */
	struct torch_device dev[TORCH_MAX_DEVICES];
	uint64_t dev_used;		/* bit d: dev[d] has figures */
	struct torch_segment *seg;
	size_t n_seg, cap_seg;
	struct torch_oom_event oom[TORCH_OOM_KEPT];	/* the last ones, a ring */
	uint64_t n_oom;					/* seen in all */
	char *oom_view;			/* the Memory view at the last one, as text */
	uint64_t oom_view_ns;
};

static struct {
	pthread_mutex_t lock;
	struct proc *procs[TORCH_MAX_PROCESSES];
	size_t n_procs;
	uint64_t leak_age_ns;
} torch_mem = { .lock = PTHREAD_MUTEX_INITIALIZER, .leak_age_ns = TORCH_LEAK_AGE_NS };

/* The process's record, made when asked to (NULL when out of room or memory). Under lock. */
static struct proc *proc_of(pid_t pid, bool make)
{
	for (size_t i = 0; i < torch_mem.n_procs; i++)
		if (torch_mem.procs[i]->info.pid == pid)
			return torch_mem.procs[i];
	if (!make || torch_mem.n_procs == TORCH_MAX_PROCESSES)
		return NULL;
	struct proc *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->info.pid = pid;
	p->blocks = (struct hashmap)HASHMAP_INIT(sizeof(struct torch_block), 256, HASHMAP_SHRINK);
	torch_mem.procs[torch_mem.n_procs++] = p;
	return p;
}

/* Device d's figures (d in range), marked used. */
static struct torch_device *dev_of(struct proc *p, int d)
{
	if (d < 0 || d >= TORCH_MAX_DEVICES)
		return NULL;
	if (!(p->dev_used & (1ull << d))) {
		p->dev_used |= 1ull << d;
		p->dev[d] = (struct torch_device){ .pid = p->info.pid, .device = d };
	}
	return &p->dev[d];
}

void torch_mem_set_state(pid_t pid, enum torch_status state, const char *why)
{
	pthread_mutex_lock(&torch_mem.lock);
	struct proc *p = proc_of(pid, true);
	if (p) {
		p->info.state = (uint8_t)state;
		snprintf(p->info.why, sizeof p->info.why, "%s", why ? why : "");
	}
	pthread_mutex_unlock(&torch_mem.lock);
}

void torch_mem_set_before(pid_t pid, enum torch_before before, const char *why, uint32_t read_threads)
{
	pthread_mutex_lock(&torch_mem.lock);
	struct proc *p = proc_of(pid, true);
	if (p) {
		p->info.before = (uint8_t)before;
		p->info.read_threads = read_threads;
		if (why && *why)
			snprintf(p->info.why, sizeof p->info.why, "%s", why);
	}
	pthread_mutex_unlock(&torch_mem.lock);
}

void torch_mem_set_attach(pid_t pid, uint64_t now_ns)
{
	pthread_mutex_lock(&torch_mem.lock);
	struct proc *p = proc_of(pid, true);
	if (p)
		p->info.attach_ns = now_ns;
	pthread_mutex_unlock(&torch_mem.lock);
}

static void block_count(struct proc *p, const struct torch_block *b, int sign)
{
	struct torch_device *d = dev_of(p, b->device);
	if (!d)
		return;
	if (sign > 0) {
		d->live_bytes += b->size;
		d->requested_bytes += b->requested;
		d->live_blocks++;
		if (d->live_bytes > d->peak_live_bytes)
			d->peak_live_bytes = d->live_bytes;
	} else {
		d->live_bytes -= b->size;
		d->requested_bytes -= b->requested;
		d->live_blocks--;
	}
}

void torch_mem_on_alloc(pid_t pid, const struct torch_block *b)
{
	pthread_mutex_lock(&torch_mem.lock);
	struct proc *p = proc_of(pid, true);
	bool added;
	struct torch_block *e = p && b->block ? hashmap_insert(&p->blocks, b->block, &added) : NULL;
	if (e) {
		if (!added)	/* its free was missed */
			block_count(p, e, -1);
		*e = *b;
		block_count(p, e, +1);
		if (!b->t_ns) {
			p->info.before_blocks++;
			p->info.before_bytes += b->size;
		}
	}
	pthread_mutex_unlock(&torch_mem.lock);
}

bool torch_mem_on_free(pid_t pid, uint64_t block, uint64_t entry_ns)
{
	struct torch_block gone, *e;
	bool found = false;
	pthread_mutex_lock(&torch_mem.lock);
	struct proc *p = proc_of(pid, true);
	if (p && (e = hashmap_find(&p->blocks, block)) && e->t_ns > entry_ns) {
		found = true;	/* of its life before: this one goes on */
	} else if (p && hashmap_remove(&p->blocks, block, &gone)) {
		found = true;
		block_count(p, &gone, -1);
	} else if (p) {
		p->info.unknown_frees++;
	}
	pthread_mutex_unlock(&torch_mem.lock);
	return found;
}

void torch_mem_on_unread(pid_t pid)
{
	pthread_mutex_lock(&torch_mem.lock);
	struct proc *p = proc_of(pid, true);
	if (p)
		p->info.unread++;
	pthread_mutex_unlock(&torch_mem.lock);
}

void torch_mem_on_oom(pid_t pid, const struct torch_oom_event *e)
{
	pthread_mutex_lock(&torch_mem.lock);
	struct proc *p = proc_of(pid, true);
	if (p) {
		p->oom[p->n_oom % TORCH_OOM_KEPT] = *e;
		p->oom[p->n_oom++ % TORCH_OOM_KEPT].pid = pid;
	}
	pthread_mutex_unlock(&torch_mem.lock);
}

void torch_mem_count(pid_t pid, uint64_t allocs, uint64_t frees)
{
	pthread_mutex_lock(&torch_mem.lock);
	struct proc *p = proc_of(pid, true);
	if (p) {
		p->info.allocs += allocs;
		p->info.frees += frees;
	}
	pthread_mutex_unlock(&torch_mem.lock);
}

void torch_mem_set_alloc_stats(pid_t pid, int device, const struct torch_alloc_stats *s)
{
	pthread_mutex_lock(&torch_mem.lock);
	struct proc *p = proc_of(pid, true);
	struct torch_device *d = p ? dev_of(p, device) : NULL;
	if (d) {
		d->alloc = *s;
		d->alloc.known = true;
		d->alloc.tracked_at_read = d->live_bytes;
	}
	pthread_mutex_unlock(&torch_mem.lock);
}

uint64_t torch_mem_live_bytes(pid_t pid, int device)
{
	uint64_t n = 0;
	pthread_mutex_lock(&torch_mem.lock);
	struct proc *p = proc_of(pid, false);
	if (p && device >= 0 && device < TORCH_MAX_DEVICES && (p->dev_used & (1ull << device)))
		n = p->dev[device].live_bytes;
	pthread_mutex_unlock(&torch_mem.lock);
	return n;
}

/* Segments are kept in order of (device, base): the one holding addr is found by bisection. */
static bool seg_before(const struct torch_segment *s, int device, uint64_t addr)
{
	return s->device < device || (s->device == device && s->base <= addr);
}

/* Where a segment of (device, addr) goes: after every one that begins at or before it. */
static size_t seg_place(const struct proc *p, int device, uint64_t addr)
{
	size_t lo = 0, hi = p->n_seg;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (seg_before(&p->seg[mid], device, addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct torch_segment *segment_at(const struct proc *p, int device, uint64_t addr)
{
	size_t i = seg_place(p, device, addr);
	if (!i)
		return NULL;
	const struct torch_segment *s = &p->seg[i - 1];
	return s->device == device && addr - s->base < s->size ? s : NULL;
}

bool torch_mem_in_segment(pid_t pid, int device, uint64_t addr)
{
	pthread_mutex_lock(&torch_mem.lock);
	struct proc *p = proc_of(pid, false);
	bool in = p && segment_at(p, device, addr);
	pthread_mutex_unlock(&torch_mem.lock);
	return in;
}

void torch_mem_add_segment(pid_t pid, const struct torch_segment *s)
{
	pthread_mutex_lock(&torch_mem.lock);
	struct proc *p = proc_of(pid, true);
	if (p && !segment_at(p, s->device, s->base)) {
		if (p->n_seg == p->cap_seg) {
			size_t cap = p->cap_seg ? 2 * p->cap_seg : 16;
			struct torch_segment *n = realloc(p->seg, cap * sizeof *n);
			if (n) {
				p->seg = n;
				p->cap_seg = cap;
			}
		}
		if (p->n_seg < p->cap_seg) {
			size_t at = seg_place(p, s->device, s->base);
			memmove(&p->seg[at + 1], &p->seg[at], (p->n_seg - at) * sizeof *p->seg);
			p->seg[at] = *s;
			p->n_seg++;
		}
	}
	pthread_mutex_unlock(&torch_mem.lock);
}

void torch_mem_prune_segments(pid_t pid, int device)
{
	pthread_mutex_lock(&torch_mem.lock);
	struct proc *p = proc_of(pid, false);
	if (p) {
		bool *used = calloc(p->n_seg ? p->n_seg : 1, sizeof *used);
		size_t it = 0;
		for (struct torch_block *b; used && (b = hashmap_next(&p->blocks, &it));)
			for (size_t i = 0; i < p->n_seg; i++)
				if (p->seg[i].device == b->device && b->ptr - p->seg[i].base < p->seg[i].size)
					used[i] = true;
		size_t kept = 0;
		for (size_t i = 0; used && i < p->n_seg; i++)
			if (used[i] || p->seg[i].device != device)
				p->seg[kept++] = p->seg[i];
		if (used)
			p->n_seg = kept;
		free(used);
	}
	pthread_mutex_unlock(&torch_mem.lock);
}

static void proc_free(struct proc *p)
{
	hashmap_clear(&p->blocks);
	free(p->seg);
	free(p->oom_view);
	free(p);
}

void torch_mem_set_oom_view(pid_t pid, uint64_t t_ns, const char *text)
{
	char *copy = strdup(text);
	pthread_mutex_lock(&torch_mem.lock);
	struct proc *p = copy ? proc_of(pid, true) : NULL;
	if (p) {
		free(p->oom_view);
		p->oom_view = copy;
		p->oom_view_ns = t_ns;
		copy = NULL;
	}
	pthread_mutex_unlock(&torch_mem.lock);
	free(copy);
}

void torch_mem_forget(pid_t pid)
{
	pthread_mutex_lock(&torch_mem.lock);
	for (size_t i = 0; i < torch_mem.n_procs; i++)
		if (torch_mem.procs[i]->info.pid == pid) {
			proc_free(torch_mem.procs[i]);
			torch_mem.procs[i] = torch_mem.procs[--torch_mem.n_procs];
			break;
		}
	pthread_mutex_unlock(&torch_mem.lock);
}

void torch_mem_free_all(void)
{
	pthread_mutex_lock(&torch_mem.lock);
	for (size_t i = 0; i < torch_mem.n_procs; i++)
		proc_free(torch_mem.procs[i]);
	torch_mem.n_procs = 0;
	pthread_mutex_unlock(&torch_mem.lock);
}

void torch_mem_set_leak_age(uint64_t ns)
{
	torch_mem.leak_age_ns = ns;
}

uint64_t torch_mem_leak_age(void)
{
	return torch_mem.leak_age_ns;
}

/* ---- snapshots ---------------------------------------------------------------------------- */

static bool take(const struct proc *p, pid_t pid)
{
	return !pid || p->info.pid == pid;
}

int torch_mem_snapshot(pid_t pid, struct torch_snapshot *out)
{
	memset(out, 0, sizeof *out);
	out->t_ns = now_ns();
	pthread_mutex_lock(&torch_mem.lock);
	size_t np = 0, nd = 0, nb = 0, ns = 0, no = 0;
	for (size_t i = 0; i < torch_mem.n_procs; i++) {
		if (!take(torch_mem.procs[i], pid))
			continue;
		np++;
		nd += (size_t)__builtin_popcountll(torch_mem.procs[i]->dev_used);
		nb += hashmap_count(&torch_mem.procs[i]->blocks);
		ns += torch_mem.procs[i]->n_seg;
		no += torch_mem.procs[i]->n_oom < TORCH_OOM_KEPT ? torch_mem.procs[i]->n_oom : TORCH_OOM_KEPT;
	}
	out->proc = calloc(np ? np : 1, sizeof *out->proc);
	out->device = calloc(nd ? nd : 1, sizeof *out->device);
	out->block = malloc((nb ? nb : 1) * sizeof *out->block);
	out->segment = malloc((ns ? ns : 1) * sizeof *out->segment);
	out->seg_pid = malloc((ns ? ns : 1) * sizeof *out->seg_pid);
	out->oom = malloc((no ? no : 1) * sizeof *out->oom);
	int err = out->proc && out->device && out->block && out->segment && out->seg_pid && out->oom ? 0 : -ENOMEM;
	for (size_t i = 0; !err && i < torch_mem.n_procs; i++) {
		const struct proc *p = torch_mem.procs[i];
		if (!take(p, pid))
			continue;
		out->proc[out->n_proc++] = p->info;
		for (int d = 0; d < TORCH_MAX_DEVICES; d++)
			if (p->dev_used & (1ull << d))
				out->device[out->n_device++] = p->dev[d];
		size_t it = 0;
		for (const struct torch_block *b; (b = hashmap_next(&p->blocks, &it));) {
			out->block[out->n_block] = *b;
			out->block[out->n_block++].pid = p->info.pid;
		}
		for (size_t s = 0; s < p->n_seg; s++) {
			out->seg_pid[out->n_segment] = p->info.pid;
			out->segment[out->n_segment++] = p->seg[s];
		}
		uint64_t first = p->n_oom > TORCH_OOM_KEPT ? p->n_oom - TORCH_OOM_KEPT : 0;
		for (uint64_t k = first; k < p->n_oom; k++)
			out->oom[out->n_oom++] = p->oom[k % TORCH_OOM_KEPT];
		if (p->oom_view && (!out->oom_view || p->oom_view_ns > out->oom_view_ns)) {
			free(out->oom_view);
			out->oom_view = strdup(p->oom_view);
			out->oom_view_ns = p->oom_view_ns;
			out->oom_view_pid = p->info.pid;
		}
	}
	pthread_mutex_unlock(&torch_mem.lock);
	if (err)
		torch_mem_snapshot_free(out);
	return err;
}

void torch_mem_snapshot_free(struct torch_snapshot *s)
{
	free(s->proc);
	free(s->device);
	free(s->block);
	free(s->segment);
	free(s->seg_pid);
	free(s->oom);
	free(s->oom_view);
	memset(s, 0, sizeof *s);
}

const char *torch_status_name(enum torch_status s)
{
	switch (s) {
	case TORCH_ABSENT: return "absent";
	case TORCH_UNKNOWN: return "unknown";
	case TORCH_TRACKING: return "tracking";
	case TORCH_NOT_READ: return "not read";
	}
	return "?";
}

const char *torch_before_name(enum torch_before b)
{
	switch (b) {
	case TORCH_BEFORE_NONE: return "none";
	case TORCH_BEFORE_READ: return "read";
	case TORCH_BEFORE_UNKNOWN: return "unknown";
	}
	return "?";
}
