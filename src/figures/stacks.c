/* stacks.c — interned call stacks and what was counted per stack (stacks.h), behind one mutex.
 * Stacks live in a fixed table of pointers published in order, so a reader holding an id
 * from a snapshot reads its stack without the lock. Strings (functions, files, modules) are
 * interned too: a program has few distinct ones, however many stacks. Nothing here touches
 * the traced program. */
#define _GNU_SOURCE
#include "stacks.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

struct stack_entry {		/* by the hash of its key */
	uint64_t hash;
	uint32_t id;
};
struct string_entry {
	uint64_t hash;
	const char *s;
};
struct counts_entry {
	uint64_t id;
	struct stack_counts c;
};
struct launch_entry {		/* by a hash of kernel and stack */
	uint64_t key;
	struct stack_launch_site site;
};
struct error_entry {		/* by a hash of api, err and stack */
	uint64_t key;
	struct stack_error_site site;
};

/* A kept stack: the frames the readers see, then its key. */
struct kept {
	uint32_t n_key;
	const uint64_t *key;
	struct stack stack;	/* last: its frames follow */
};

static struct {
	pthread_mutex_t lock;
	struct kept *table[STACKS_MAX];	/* table[0] stays NULL: STACK_NONE */
	_Atomic uint32_t n_table;
	struct hashmap by_hash, strings, counts, launches, errors;
} stacks = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.n_table = 1,
	.by_hash = HASHMAP_INIT(sizeof(struct stack_entry), 64, 0),
	.strings = HASHMAP_INIT(sizeof(struct string_entry), 64, 0),
	.counts = HASHMAP_INIT(sizeof(struct counts_entry), 64, 0),
	.launches = HASHMAP_INIT(sizeof(struct launch_entry), 64, 0),
	.errors = HASHMAP_INIT(sizeof(struct error_entry), 64, 0),
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

static uint64_t nonzero(uint64_t h)
{
	return h ? h : 1;
}

static uint64_t hash_key(const uint64_t *key, uint32_t n)
{
	uint64_t h = n;
	for (uint32_t i = 0; i < n; i++)
		h = mix(h, key[i]);
	return nonzero(h);
}

static uint64_t hash_string(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return nonzero(h);
}

void stacks_free(void)
{
	pthread_mutex_lock(&stacks.lock);
	for (uint32_t i = 1; i < stacks.n_table; i++) {
		free((void *)stacks.table[i]->key);
		free(stacks.table[i]);
		stacks.table[i] = NULL;
	}
	atomic_store(&stacks.n_table, 1);
	size_t it = 0;
	for (struct string_entry *e; (e = hashmap_next(&stacks.strings, &it));)
		free((char *)e->s);
	hashmap_clear(&stacks.strings);
	hashmap_clear(&stacks.by_hash);
	hashmap_clear(&stacks.counts);
	hashmap_clear(&stacks.launches);
	hashmap_clear(&stacks.errors);
	pthread_mutex_unlock(&stacks.lock);
}

/* The interned copy of s (NULL stays NULL; a string that cannot be kept reads "?"). Collisions
 * of the hash move to the next value. */
static const char *intern(const char *s)
{
	if (!s)
		return NULL;
	for (uint64_t h = hash_string(s);; h = nonzero(h + 1)) {
		bool added;
		struct string_entry *e = hashmap_insert(&stacks.strings, h, &added);
		if (!e)
			return "?";
		if (!added) {
			if (strcmp(e->s, s) == 0)
				return e->s;
			continue;
		}
		e->s = strdup(s);
		if (!e->s) {
			hashmap_remove(&stacks.strings, h, NULL);
			return "?";
		}
		return e->s;
	}
}

static bool same_key(const struct kept *k, const uint64_t *key, uint32_t n)
{
	return k->n_key == n && memcmp(k->key, key, n * sizeof *key) == 0;
}

/* The entry for key: the one holding it, or (when free is set) where it would go. */
static struct stack_entry *lookup(const uint64_t *key, uint32_t n, uint64_t *free_hash)
{
	for (uint64_t h = hash_key(key, n);; h = nonzero(h + 1)) {
		struct stack_entry *e = hashmap_find(&stacks.by_hash, h);
		if (!e) {
			*free_hash = h;
			return NULL;
		}
		if (same_key(stacks.table[e->id], key, n))
			return e;
	}
}

uint32_t stacks_find(const uint64_t *key, uint32_t n)
{
	uint64_t h;
	pthread_mutex_lock(&stacks.lock);
	struct stack_entry *e = lookup(key, n, &h);
	uint32_t id = e ? e->id : STACK_NONE;
	pthread_mutex_unlock(&stacks.lock);
	return id;
}

uint32_t stacks_add(pid_t pid, const uint64_t *key, uint32_t n_key, const struct stack_frame *frames,
		    uint32_t n_frames, bool truncated)
{
	uint64_t h;
	uint32_t id = STACK_NONE;
	pthread_mutex_lock(&stacks.lock);
	struct stack_entry *e = lookup(key, n_key, &h);
	if (e) {
		id = e->id;
		goto out;
	}
	uint32_t next = atomic_load(&stacks.n_table);
	if (next >= STACKS_MAX)
		goto out;
	struct kept *k = malloc(sizeof *k + n_frames * sizeof(struct stack_frame));
	uint64_t *kc = malloc(n_key * sizeof *kc + 1);
	if (!k || !kc || !(e = hashmap_insert(&stacks.by_hash, h, NULL))) {
		free(k);
		free(kc);
		goto out;
	}
	memcpy(kc, key, n_key * sizeof *kc);
	k->key = kc;
	k->n_key = n_key;
	k->stack.pid = pid;
	k->stack.n = n_frames;
	k->stack.truncated = truncated;
	for (uint32_t i = 0; i < n_frames; i++) {
		struct stack_frame *f = &k->stack.frame[i];
		*f = frames[i];
		f->function = intern(frames[i].function);
		f->file = intern(frames[i].file);
		f->module = intern(frames[i].module);
	}
	stacks.table[next] = k;
	e->id = id = next;
	atomic_store_explicit(&stacks.n_table, next + 1, memory_order_release);
out:
	pthread_mutex_unlock(&stacks.lock);
	return id;
}

const struct stack *stacks_get(uint32_t id)
{
	if (id == STACK_NONE || id >= atomic_load_explicit(&stacks.n_table, memory_order_acquire))
		return NULL;
	return &stacks.table[id]->stack;
}

bool stacks_in_process(uint32_t id, pid_t pid)
{
	const struct stack *s = stacks_get(id);
	return !pid || (s && s->pid == pid);
}

static struct stack_counts *counts_of(uint32_t id)
{
	struct counts_entry *e = hashmap_insert(&stacks.counts, id, NULL);
	if (e)
		e->c.stack = id;
	return e ? &e->c : NULL;
}

void stacks_on_alloc(uint32_t id, uint64_t bytes)
{
	if (id == STACK_NONE)
		return;
	pthread_mutex_lock(&stacks.lock);
	struct stack_counts *c = counts_of(id);
	if (c) {
		c->allocations++;
		c->allocated_bytes += bytes;
	}
	pthread_mutex_unlock(&stacks.lock);
}

void stacks_on_call_time(uint32_t id, uint64_t ns)
{
	if (id == STACK_NONE)
		return;
	pthread_mutex_lock(&stacks.lock);
	struct stack_counts *c = counts_of(id);
	if (c)
		c->ns += ns;
	pthread_mutex_unlock(&stacks.lock);
}

void stacks_on_launch(uint32_t id, const char *kernel)
{
	if (id == STACK_NONE || !kernel)
		return;
	pthread_mutex_lock(&stacks.lock);
	uint64_t key = nonzero(mix(mix(0, (uint64_t)(uintptr_t)kernel), id));
	for (;; key = nonzero(key + 1)) {
		struct launch_entry *e = hashmap_find(&stacks.launches, key);
		if (!e) {
			if (hashmap_count(&stacks.launches) >= STACK_SITES_MAX || !(e = hashmap_insert(&stacks.launches, key, NULL)))
				break;
			e->site = (struct stack_launch_site){ .kernel = kernel, .stack = id };
		}
		if (e->site.kernel == kernel && e->site.stack == id) {
			e->site.samples++;
			break;
		}
	}
	pthread_mutex_unlock(&stacks.lock);
}

void stacks_on_error(uint32_t id, int api, int err)
{
	if (id == STACK_NONE)
		return;
	pthread_mutex_lock(&stacks.lock);
	uint64_t key = nonzero(mix(mix(mix(0, (uint64_t)api), (uint64_t)(uint32_t)err), id));
	for (;; key = nonzero(key + 1)) {
		struct error_entry *e = hashmap_find(&stacks.errors, key);
		if (!e) {
			if (hashmap_count(&stacks.errors) >= STACK_SITES_MAX || !(e = hashmap_insert(&stacks.errors, key, NULL)))
				break;
			e->site = (struct stack_error_site){ .api = api, .err = err, .stack = id };
		}
		if (e->site.api == api && e->site.err == err && e->site.stack == id) {
			e->site.count++;
			break;
		}
	}
	pthread_mutex_unlock(&stacks.lock);
}

int stacks_snapshot(struct stacks_snapshot *out)
{
	*out = (struct stacks_snapshot){ 0 };
	pthread_mutex_lock(&stacks.lock);
	size_t nc = hashmap_count(&stacks.counts), nl = hashmap_count(&stacks.launches), ne = hashmap_count(&stacks.errors);
	out->counts = malloc((nc + 1) * sizeof *out->counts);
	out->launch = malloc((nl + 1) * sizeof *out->launch);
	out->error = malloc((ne + 1) * sizeof *out->error);
	int err = 0;
	if (!out->counts || !out->launch || !out->error) {
		err = -ENOMEM;
		goto out;
	}
	size_t it = 0;
	for (struct counts_entry *e; (e = hashmap_next(&stacks.counts, &it));)
		out->counts[out->n_counts++] = e->c;
	it = 0;
	for (struct launch_entry *e; (e = hashmap_next(&stacks.launches, &it));)
		out->launch[out->n_launch++] = e->site;
	it = 0;
	for (struct error_entry *e; (e = hashmap_next(&stacks.errors, &it));)
		out->error[out->n_error++] = e->site;
out:
	pthread_mutex_unlock(&stacks.lock);
	if (err)
		stacks_snapshot_free(out);
	return err;
}

bool stacks_launch_site_of(const struct stack_launch_site *l, const char *name, pid_t pid)
{
	return name && strcmp(l->kernel, name) == 0 && stacks_in_process(l->stack, pid);
}

void stacks_snapshot_free(struct stacks_snapshot *s)
{
	free(s->counts);
	free(s->launch);
	free(s->error);
	*s = (struct stacks_snapshot){ 0 };
}
