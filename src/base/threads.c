/* threads.c — the thread table: a map from tid to thread (hashmap.h). PyTorch runs dozens of
 * threads and short-lived ones come and go, so lookups must stay O(1). */
#include "threads.h"

#include <stdlib.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hashmap.h"
#include "nspid.h"
#include "tracee.h"

struct thread_slot {
	uint64_t tid;		/* the key: tids are > 0 */
	struct thread *t;	/* its own allocation: callers keep pointers across inserts */
};

/* The process's part (p->threads). */
#define GONE_KEPT 64	/* threads that ended, remembered by their pointer */

struct threads_state {
	struct hashmap table;
	enum { NS_UNKNOWN, NS_OURS, NS_OTHER } pid_ns;	/* the process's PID namespace, gputop's
							 * or another (a container) */
	struct thread *by_pointer;	/* the last thread threads_with_pointer found (records
					 * come in runs of one thread's) */
	uint64_t removed;		/* threads_removed */
	/* The last GONE_KEPT threads removed: their pointer and id (threads_gone_with_pointer). */
	struct {
		uint64_t thread_pointer;
		pid_t tid;
	} gone[GONE_KEPT];
};

struct threads_state *threads_state_new(void)
{
	struct threads_state *st = malloc(sizeof *st);
	if (st)
		*st = (struct threads_state){ .table = HASHMAP_INIT(sizeof(struct thread_slot), 64, 0) };
	return st;
}

static void thread_free(struct thread *t)
{
	if (t->status_fd >= 0)
		close(t->status_fd);
	if (t->sched_fd >= 0)
		close(t->sched_fd);
	free(t->frames);
	free(t);
}

static void free_all(struct threads_state *st)
{
	size_t it = 0;
	for (struct thread_slot *s; (s = hashmap_next(&st->table, &it));)
		thread_free(s->t);
	st->by_pointer = NULL;
	hashmap_clear(&st->table);
}

void threads_state_free(struct threads_state *st)
{
	if (!st)
		return;
	free_all(st);
	free(st);
}

struct thread *threads_find_in(struct threads_state *st, pid_t tid)
{
	struct thread_slot *s = hashmap_find(&st->table, (uint64_t)tid);
	return s ? s->t : NULL;
}

struct thread *threads_find(const struct tracee *p, pid_t tid)
{
	return threads_find_in(p->threads, tid);
}

struct thread *threads_add(struct tracee *p, pid_t tid)
{
	struct threads_state *st = p->threads;
	bool added;
	struct thread_slot *s = hashmap_insert(&st->table, (uint64_t)tid, &added);
	if (!s || !added)
		return s ? s->t : NULL;
	struct thread *t = calloc(1, sizeof *t);
	if (!t) {
		hashmap_remove(&st->table, (uint64_t)tid, NULL);
		return NULL;
	}
	t->tid = tid;
	t->device = -1;
	t->status_fd = -1;
	t->sched_fd = -1;
	t->state = TS_RUNNING;
	s->t = t;
	return t;
}

void threads_remove(struct tracee *p, pid_t tid)
{
	struct threads_state *st = p->threads;
	struct thread_slot gone;
	if (!hashmap_remove(&st->table, (uint64_t)tid, &gone))
		return;
	if (st->by_pointer == gone.t)
		st->by_pointer = NULL;
	st->gone[st->removed % GONE_KEPT].thread_pointer = gone.t->guest ? 0 : gone.t->thread_pointer;
	st->gone[st->removed % GONE_KEPT].tid = gone.t->tid;
	st->removed++;
	thread_free(gone.t);
}

void threads_clear(struct tracee *p)
{
	p->threads->removed += hashmap_count(&p->threads->table);
	memset(p->threads->gone, 0, sizeof p->threads->gone);	/* (an exec's: not kept) */
	free_all(p->threads);
}

uint64_t threads_removed(const struct tracee *p)
{
	return p->threads->removed;
}

bool threads_ran(struct thread *t)
{
	char path[64], buf[96];
	if (t->sched_fd < 0) {
		snprintf(path, sizeof path, "/proc/%d/schedstat", t->tid);
		if ((t->sched_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return true;
	}
	ssize_t n = pread(t->sched_fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return true;
	buf[n] = 0;
	uint64_t ns = strtoull(buf, NULL, 10);
	bool ran = !t->ran_ns || ns != t->ran_ns;
	t->ran_ns = ns;
	return ran;
}

/* Whether the process's PID namespace is gputop's: its NSpid has one id. Read once: a process
 * never changes its PID namespace. */
static bool in_our_pid_ns(const struct tracee *p)
{
	struct threads_state *st = p->threads;
	pid_t ids[2];
	if (st->pid_ns == NS_UNKNOWN) {
		int n = nspid_read(p->pid, ids, 2);
		if (n == 0)
			return true;	/* gone: its threads are found by nothing anyway */
		st->pid_ns = n == 1 ? NS_OURS : NS_OTHER;
	}
	return st->pid_ns == NS_OURS;
}

pid_t threads_own_tid(const struct tracee *p, struct thread *t)
{
	if (in_our_pid_ns(p))
		return t->tid;
	if (!t->own_tid)
		t->own_tid = nspid_own(p->pid, t->tid);
	return t->own_tid;
}

struct thread *threads_find_own(const struct tracee *p, pid_t own)
{
	if (own <= 0)
		return NULL;
	if (in_our_pid_ns(p))
		return threads_find(p, own);
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(p, &it));)
		if (threads_own_tid(p, t) == own)
			return t;
	return NULL;
}

int threads_count_all(const struct tracee *p)
{
	struct threads_state *st = p->threads;
	return (int)hashmap_count(&st->table);
}

int threads_count(const struct tracee *p)
{
	int n = 0;
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(p, &it));)
		n += !t->guest;
	return n;
}

struct thread *threads_with_pointer(const struct tracee *p, uint64_t tp)
{
	struct threads_state *st = p->threads;
	uint32_t it = 0;
	if (tp && st->by_pointer && st->by_pointer->thread_pointer == tp)
		return st->by_pointer;
	for (struct thread *t; (t = threads_iter(p, &it));)
		if (t->thread_pointer == tp)
			return st->by_pointer = t;
	return NULL;
}

pid_t threads_gone_with_pointer(const struct tracee *p, uint64_t tp)
{
	const struct threads_state *st = p->threads;
	for (uint64_t i = 0; tp && i < GONE_KEPT && i < st->removed; i++) {	/* the newest first */
		uint64_t k = (st->removed - 1 - i) % GONE_KEPT;
		if (st->gone[k].thread_pointer == tp)
			return st->gone[k].tid;
	}
	return 0;
}

struct thread *threads_iter(const struct tracee *p, uint32_t *cursor)
{
	struct threads_state *st = p->threads;
	size_t it = *cursor;
	struct thread_slot *s = hashmap_next(&st->table, &it);
	*cursor = (uint32_t)it;
	return s ? s->t : NULL;
}
