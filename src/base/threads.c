/* threads.c — the thread table: an open-addressing map from tid to thread. PyTorch runs
 * dozens of threads and short-lived ones come and go, so lookups must stay O(1). */
#include "threads.h"

#include <stdlib.h>
#include <string.h>

static struct thread **slots;	/* NULL = empty, TOMBSTONE = deleted */
static uint32_t cap_slots, used, live;
#define TOMBSTONE ((struct thread *)1)

static uint32_t hash_tid(pid_t tid)
{
	return (uint32_t)tid * 2654435761u;
}

static struct thread **slot_of(pid_t tid)
{
	if (!cap_slots)
		return NULL;
	for (uint32_t i = hash_tid(tid) & (cap_slots - 1);; i = (i + 1) & (cap_slots - 1)) {
		if (!slots[i])
			return NULL;
		if (slots[i] != TOMBSTONE && slots[i]->tid == tid)
			return &slots[i];
	}
}

struct thread *threads_find(pid_t tid)
{
	struct thread **s = slot_of(tid);
	return s ? *s : NULL;
}

static int grow(void)
{
	uint32_t ncap = cap_slots ? cap_slots * 2 : 64;
	while (live * 2 >= ncap)
		ncap *= 2;
	struct thread **n = calloc(ncap, sizeof *n);
	if (!n)
		return -1;
	for (uint32_t i = 0; i < cap_slots; i++) {
		struct thread *t = slots[i];
		if (!t || t == TOMBSTONE)
			continue;
		uint32_t j = hash_tid(t->tid) & (ncap - 1);
		while (n[j])
			j = (j + 1) & (ncap - 1);
		n[j] = t;
	}
	free(slots);
	slots = n;
	cap_slots = ncap;
	used = live;
	return 0;
}

struct thread *threads_add(pid_t tid)
{
	struct thread *t = threads_find(tid);
	if (t)
		return t;
	if ((used + 1) * 4 >= cap_slots * 3 && grow() < 0)
		return NULL;
	t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->tid = tid;
	t->device = -1;
	t->state = TS_RUNNING;
	uint32_t i = hash_tid(tid) & (cap_slots - 1);
	while (slots[i] && slots[i] != TOMBSTONE)
		i = (i + 1) & (cap_slots - 1);
	if (!slots[i])
		used++;
	slots[i] = t;
	live++;
	return t;
}

void threads_remove(pid_t tid)
{
	struct thread **s = slot_of(tid);
	if (!s)
		return;
	free((*s)->frames);
	free(*s);
	*s = TOMBSTONE;
	live--;
}

void threads_clear(void)
{
	for (uint32_t i = 0; i < cap_slots; i++)
		if (slots[i] && slots[i] != TOMBSTONE) {
			free(slots[i]->frames);
			free(slots[i]);
		}
	free(slots);
	slots = NULL;
	cap_slots = used = live = 0;
}

int threads_count_all(void)
{
	return (int)live;
}

int threads_count(void)
{
	int n = 0;
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(&it));)
		n += !t->guest;
	return n;
}

struct thread *threads_iter(uint32_t *cursor)
{
	for (uint32_t i = *cursor; i < cap_slots; i++)
		if (slots[i] && slots[i] != TOMBSTONE) {
			*cursor = i + 1;
			return slots[i];
		}
	*cursor = cap_slots;
	return NULL;
}

struct frame *thread_push(struct thread *t)
{
	if (t->depth == t->cap) {
		uint32_t ncap = t->cap ? t->cap * 2 : 8;
		struct frame *f = realloc(t->frames, ncap * sizeof *f);
		if (!f)
			return NULL;
		t->frames = f;
		t->cap = ncap;
	}
	struct frame *f = &t->frames[t->depth++];
	memset(f, 0, sizeof *f);
	return f;
}

struct frame *thread_top(struct thread *t)
{
	return t->depth ? &t->frames[t->depth - 1] : NULL;
}
