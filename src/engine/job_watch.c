/* job_watch.c — the live picture of the job (job_watch.h). The threads run while it is taken:
 * a call is read from the records the last drain kept (at most one tick old) and a Python
 * stack from memory that may change under the read (the reader checks every object's type,
 * and a stack that does not look right is none). No native stack: it needs a stop. */
#define _GNU_SOURCE
#include "job_watch.h"

#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "hit.h"
#include "job_live.h"
#include "probes.h"
#include "procfs.h"
#include "pystack.h"
#include "stacks.h"
#include "stats.h"
#include "threads.h"
#include "tracee.h"
#include "tracee_ctl.h"

#define PY_DEPTH 32
/* Starts the key of a stack of Python frames alone (stack_capture.c's begin with an image id,
 * a small number): with the pid, the code objects and lines. */
#define PY_KEY 0x7079746830000000ull

/* The outermost frame of t that is a call of the program's own (counted): the one it made. */
static const struct frame *own_frame(const struct thread *t)
{
	for (uint32_t i = 0; i < t->depth; i++)
		if (t->frames[i].call.counted)
			return &t->frames[i];
	return t->depth ? &t->frames[0] : NULL;
}

/* t's Python frames, read while it runs, interned as a stack (figures/stacks.h). */
static uint32_t python_stack(struct tracee *p, struct thread *t)
{
	struct py_frame py[PY_DEPTH];
	struct stack_frame frames[PY_DEPTH];
	uint64_t key[2 + 2 * PY_DEPTH];
	int n = pystack_read(p, t, py, PY_DEPTH);
	if (n <= 0)
		return STACK_NONE;
	uint32_t nk = 0;
	key[nk++] = PY_KEY;
	key[nk++] = (uint64_t)p->pid;
	for (int i = 0; i < n; i++) {
		key[nk++] = py[i].code;
		key[nk++] = py[i].line;
	}
	uint32_t id = stacks_find(key, nk);
	if (id != STACK_NONE)
		return id;
	for (int i = 0; i < n; i++) {
		pystack_describe(p, t->tid, &py[i]);
		frames[i] = (struct stack_frame){ .function = py[i].function, .file = py[i].file, .line = py[i].line,
						  .module = py[i].module, .python = true };
	}
	return stacks_add(p->pid, key, nk, frames, (uint32_t)n, n == PY_DEPTH);
}

static void thread_name(pid_t pid, pid_t tid, char *out, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", pid, tid);
	if (proc_read_file(path, out, size) < 0)
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

/* t into jp where it is in a call gputop saw begin, or runs Python code; else only counted. */
static void take_thread(struct tracee *p, struct thread *t, struct job_process *jp, uint64_t now)
{
	const struct frame *f = own_frame(t);
	struct cuda_call call;
	uint64_t entry = 0;
	uint8_t from = JOB_CALL_NONE;
	if (f) {
		from = JOB_CALL_FRAME;
		call = f->call;
		entry = f->t_entry;
	} else if (hit_record_in_flight(p, t, t->thread_pointer, &call, &entry)) {
		from = JOB_CALL_RECORD;
	}
	uint32_t stack = from == JOB_CALL_FRAME && f->call.stack != STACK_NONE ? f->call.stack : python_stack(p, t);
	struct job_thread *jt = from != JOB_CALL_NONE || stack != STACK_NONE ? job_thread_add(jp, t->tid) : NULL;
	if (!jt) {
		jp->quiet_threads++;
		return;
	}
	thread_name(p->pid, t->tid, jt->name, sizeof jt->name);
	jt->stack = stack;
	jt->from = from;
	if (from == JOB_CALL_NONE)
		return;
	jt->call = call;
	jt->api = call.api;
	jt->age_ns = entry && now > entry ? now - entry : 0;
}

static void take_process(struct job *j, struct tracee *p, uint64_t now)
{
	struct stats_wait w;
	struct job_process *jp = job_process_of(j, p->pid);
	if (!jp)
		return;
	jp->cuda = probes_cuda_seen(p);
	jp->taken_at = now;
	if (stats_wait_of(p->stats_id, &w) == 0) {
		jp->rank = w.rank;
		jp->nranks = w.nranks;
		jp->collectives = w.collectives;
		jp->wait_ns = w.wait_ns;
		jp->since_ns = w.start_ns;
	}
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(p, &it));)
		if (!t->guest)
			take_thread(p, t, jp, now);
}

void job_watch_tick(struct job_live *l, uint64_t now)
{
	if (!job_live_due(l, now))
		return;
	struct job *j = job_new();
	if (!j)
		return;
	uint32_t it = 0;
	for (struct tracee *p; (p = tracee_next(&it));)
		if (threads_count(p) > 0)
			take_process(j, p, now);
	job_live_publish(l, j, now);
}
