/* job.c — the picture --dump takes (job.h), and which processes of it differ from the others. */
#include "job.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_table.h"
#include "cuda_api.h"
#include "stacks.h"

struct job *job_new(void)
{
	return calloc(1, sizeof(struct job));
}

void job_free(struct job *j)
{
	for (int i = 0; j && i < j->n; i++)
		free(j->proc[i].threads);
	free(j);
}

struct job *job_copy(const struct job *j)
{
	struct job *c = malloc(sizeof *c);
	if (!c)
		return NULL;
	*c = *j;
	for (int i = 0; i < c->n; i++) {
		struct job_process *jp = &c->proc[i];
		size_t size = (size_t)jp->n_threads * sizeof *jp->threads;
		jp->threads = size ? malloc(size) : NULL;
		if (size && !jp->threads) {
			c->n = i;
			job_free(c);
			return NULL;
		}
		if (size)
			memcpy(jp->threads, j->proc[i].threads, size);
		for (int k = 0; k < jp->n_threads; k++)
			jp->threads[k].taken = NULL;	/* the engine's, never the copy's */
	}
	return c;
}

struct job_process *job_process_of(struct job *j, pid_t pid)
{
	for (int i = 0; i < j->n; i++)
		if (j->proc[i].pid == pid)
			return &j->proc[i];
	if (j->n == JOB_MAX_PROCS)
		return NULL;
	struct job_process *jp = &j->proc[j->n++];
	*jp = (struct job_process){ .pid = pid, .rank = -1, .nranks = -1 };
	return jp;
}

struct job_thread *job_thread_add(struct job_process *jp, pid_t tid)
{
	if (!jp->threads && !(jp->threads = calloc(JOB_MAX_THREADS, sizeof *jp->threads)))
		return NULL;
	if (jp->n_threads == JOB_MAX_THREADS)
		return NULL;
	struct job_thread *t = &jp->threads[jp->n_threads++];
	*t = (struct job_thread){ .tid = tid, .api = -1 };
	return t;
}

static int thread_op(const struct job_thread *t)
{
	const struct api_spec *s = t->api >= 0 ? cuda_api_get(t->api) : NULL;
	return s ? s->op : -1;
}

bool job_thread_waits(const struct job_thread *t)
{
	int op = thread_op(t);
	return op == OP_SYNC || op == OP_COLLECTIVE;
}

bool job_thread_in_collective(const struct job_thread *t)
{
	return thread_op(t) == OP_COLLECTIVE;
}

/* A file of Python's standard library: under .../lib/pythonX.Y[t]/ but not in a
 * site-packages or dist-packages there, or a frozen module ("<frozen importlib._bootstrap>"). */
static bool python_stdlib(const char *file)
{
	if (!file)
		return false;
	if (strncmp(file, "<frozen ", 8) == 0)
		return true;
	for (const char *at = strstr(file, "/lib/python"); at; at = strstr(at + 1, "/lib/python")) {
		const char *c = at + strlen("/lib/python");
		size_t major = strspn(c, "0123456789"), minor = major && c[major] == '.' ? strspn(c + major + 1, "0123456789") : 0;
		if (!minor)
			continue;
		c += major + 1 + minor;
		c += *c == 't';	/* a free-threaded build's */
		if (*c == '/' && !strstr(c, "-packages/"))
			return true;
	}
	return false;
}

/* The line of t's stack that tells where the program is: its innermost Python frame outside
 * the standard library (a straggler polling os.path.exists is at its own loop, not in
 * genericpath.py), else its innermost Python frame; NULL if it has none. */
static const struct stack_frame *python_frame(const struct job_thread *t)
{
	const struct stack *s = stacks_get(t->stack);
	const struct stack_frame *first = NULL;
	for (uint32_t i = 0; s && i < s->n; i++) {
		if (!s->frame[i].python)
			continue;
		if (!python_stdlib(s->frame[i].file))
			return &s->frame[i];
		if (!first)
			first = &s->frame[i];
	}
	return first;
}

/* A process's own figures from its threads: waiting, position, Python line (a waiting
 * thread's first: the one the job is about; else the main thread's, where a training loop
 * runs, not a loader's or helper's). */
void job_sum(struct job_process *jp)
{
	const struct stack_frame *py = NULL;
	int py_rank = 0;
	jp->waiting = false;
	jp->in_collective = 0;
	for (int i = 0; i < jp->n_threads; i++) {
		const struct job_thread *t = &jp->threads[i];
		bool waits = job_thread_waits(t);
		jp->waiting |= waits;
		jp->in_collective += job_thread_in_collective(t);
		const struct stack_frame *f = python_frame(t);
		int rank = 2 * waits + (t->tid == jp->pid);
		if (f && (!py || rank > py_rank)) {
			py = f;
			py_rank = rank;
		}
	}
	jp->position = (uint32_t)jp->collectives + (jp->in_collective > 0);
	uint64_t wait = jp->wait_ns;
	for (int i = 0; i < jp->n_threads; i++)
		if (job_thread_waits(&jp->threads[i]) && jp->threads[i].from != JOB_CALL_STACK)
			wait += jp->threads[i].age_ns < jp->watched_ns ? jp->threads[i].age_ns : jp->watched_ns;
	jp->wait_share = -1;
	if (jp->watched_ns >= JOB_WATCH_MIN_NS)
		jp->wait_share = wait >= jp->watched_ns ? 1.0 : (double)wait / (double)jp->watched_ns;
	jp->py_function = py ? py->function : NULL;
	jp->py_file = py ? py->file : NULL;
	jp->py_line = py ? py->line : 0;
}

static bool same_line(const struct job_process *a, const struct job_process *b)
{
	return a->py_file && b->py_file && a->py_line == b->py_line && strcmp(a->py_file, b->py_file) == 0;
}

/* The Python line more than half of the ranks (processes with CUDA) are at; NULL where none is. */
static const struct job_process *majority_line(const struct job *j, int ranks)
{
	for (int i = 0; i < j->n; i++) {
		int same = 0;
		for (int k = 0; k < j->n && j->proc[i].cuda; k++)
			same += j->proc[k].cuda && same_line(&j->proc[i], &j->proc[k]);
		if (2 * same > ranks)
			return &j->proc[i];
	}
	return NULL;
}

/* The rank that waited least, where every other rank waited JOB_STRAGGLER_GAP of the time more:
 * the one the others wait for. None where a rank's share is not known. */
static void mark_straggler(struct job *j)
{
	struct job_process *least = NULL;
	for (int i = 0; i < j->n; i++) {
		struct job_process *jp = &j->proc[i];
		if (!jp->cuda)
			continue;
		if (jp->wait_share < 0)
			return;
		if (!least || jp->wait_share < least->wait_share)
			least = jp;
	}
	int ranks = 0;
	for (int i = 0; i < j->n; i++) {
		const struct job_process *jp = &j->proc[i];
		if (!jp->cuda || jp == least)
			continue;
		if (jp->wait_share < least->wait_share + JOB_STRAGGLER_GAP)
			return;
		ranks++;
	}
	if (ranks)
		least->odd |= JOB_ODD_WAITS_LEAST;
}

/* Every rank's NCCL counter checked: positions from the communicators' start, collectives
 * before the attach included; one not checked: all counted since the attach, like with like. */
static void positions_from_counters(struct job *j)
{
	for (int i = 0; i < j->n; i++)
		if (j->proc[i].cuda && !j->proc[i].counter_checked)
			return;
	for (int i = 0; i < j->n; i++)
		if (j->proc[i].cuda)
			j->proc[i].position = (uint32_t)j->proc[i].counter;
}

void job_mark(struct job *j)
{
	for (int i = 0; i < j->n; i++)
		job_sum(&j->proc[i]);
	positions_from_counters(j);
	job_mark_odd(j);
}

void job_mark_odd(struct job *j)
{
	uint32_t top = 0;
	int waiting = 0, ranks = 0;
	for (int i = 0; i < j->n; i++) {
		if (!j->proc[i].cuda)
			continue;
		ranks++;
		top = j->proc[i].position > top ? j->proc[i].position : top;
		waiting += j->proc[i].waiting;
	}
	const struct job_process *line = majority_line(j, ranks);
	for (int i = 0; i < j->n; i++) {
		struct job_process *jp = &j->proc[i];
		jp->odd = 0;
		if (!jp->cuda || ranks < 2)
			continue;
		if (jp->position < top)
			jp->odd |= JOB_ODD_BEHIND;
		if (!jp->waiting && waiting == ranks - 1)
			jp->odd |= JOB_ODD_NOT_WAITING;
		if (line && jp->py_file && !same_line(jp, line))
			jp->odd |= JOB_ODD_LINE;
	}
	mark_straggler(j);
}

/* ---- the words every presenter uses ---- */

const char *job_call_source(const struct job_thread *t)
{
	switch (t->from) {
	case JOB_CALL_RECORD: return "call stub";
	case JOB_CALL_FRAME: return "int3";
	case JOB_CALL_STACK: return "stack";
	default: return NULL;
	}
}

int job_call_args(const struct job_thread *t, char *buf, size_t size)
{
	const struct cuda_call *c = &t->call;
	buf[0] = '\0';
	if (t->from != JOB_CALL_RECORD && t->from != JOB_CALL_FRAME)
		return 0;
	switch (c->op) {
	case OP_COLLECTIVE:
		if (c->coll.coll == COLL_SEND || c->coll.coll == COLL_RECV)
			return snprintf(buf, size, "%s %" PRIu64 " bytes, peer %d, comm 0x%" PRIx64,
					coll_name[c->coll.coll], c->coll.bytes, c->coll.peer, c->coll.comm);
		return snprintf(buf, size, "%s %" PRIu64 " bytes, comm 0x%" PRIx64,
				c->coll.coll < COLL_COUNT ? coll_name[c->coll.coll] : "?", c->coll.bytes, c->coll.comm);
	case OP_COPY:
		return snprintf(buf, size, "%" PRIu64 " bytes", c->copy.bytes);
	case OP_MEMSET:
		return snprintf(buf, size, "%" PRIu64 " bytes", c->memset_.bytes);
	case OP_ALLOC:
		return snprintf(buf, size, "%" PRIu64 " bytes", c->alloc.requested);
	case OP_FREE:
		return snprintf(buf, size, "0x%" PRIx64, c->free_.ptr);
	default:
		return 0;
	}
}

const char *const job_odd_names[JOB_ODD_KINDS] = { "behind", "not waiting", "another line", "waits least" };
