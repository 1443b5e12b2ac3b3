/* dump_take.c — --dump's picture of one process (figures/job.h), taken while tracer_detach
 * holds every thread anyway: no stop of its own. Held, only memory is read (registers, records,
 * a copy of each stack); the stacks are unwound and named once the threads run again. Each thread's call in flight comes from what
 * gputop already holds — the int3 path's frames, the call stub's records read at the detach's
 * last drain — and, for a call entered before the attach, from its stack: the outermost frame
 * of a probed function (which call, not its arguments nor since when: said so). */
#define _GNU_SOURCE
#include "dump_take.h"

#include <stdio.h>
#include <string.h>

#include "arch.h"
#include "clock.h"
#include "cuda_api.h"
#include "frame.h"
#include "hit.h"
#include "job.h"
#include "probes.h"
#include "procfs.h"
#include "stack_capture.h"
#include "stacks.h"
#include "threads.h"
#include "tracee.h"

static void thread_name(pid_t pid, pid_t tid, char *out, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", pid, tid);
	if (proc_read_file(path, out, size) < 0)
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

/* The outermost frame of t that is a call of the program's own (counted): the one it made. */
static const struct frame *own_frame(const struct thread *t)
{
	for (uint32_t i = 0; i < t->depth; i++)
		if (t->frames[i].call.counted)
			return &t->frames[i];
	return t->depth ? &t->frames[0] : NULL;
}

/* The outermost frame of the stack that is a probed API function, its row; -1 if none. */
static int api_on_stack(uint32_t id)
{
	const struct stack *s = stacks_get(id);
	int api = -1;
	for (uint32_t i = 0; s && i < s->n; i++) {
		int a = s->frame[i].python ? -1 : cuda_api_find(s->frame[i].function);
		if (a >= 0)
			api = a;
	}
	return api;
}

/* While t is stopped: what it is in, from gputop's own records, and its stack's copy. */
static void take_thread(struct tracee *p, struct thread *t, struct job_thread *jt, uint64_t now)
{
	arch_regs_t r;
	bool regs = arch_get_regs(t->tid, &r) == 0;
	thread_name(p->pid, t->tid, jt->name, sizeof jt->name);
	jt->taken = regs ? stack_capture_take(p, t, &r) : NULL;
	const struct frame *f = own_frame(t);
	uint64_t entry = 0;
	if (f) {
		jt->from = JOB_CALL_FRAME;
		jt->call = f->call;
		entry = f->t_entry;
	} else if (regs && hit_record_in_flight(p, t, arch_thread_pointer(&r), &jt->call, &entry)) {
		jt->from = JOB_CALL_RECORD;
	} else {
		return;
	}
	jt->api = jt->call.api;
	jt->age_ns = entry && now > entry ? now - entry : 0;
}

void dump_take(struct job *j, struct tracee *p)
{
	struct job_process *jp = job_process_of(j, p->pid);
	if (!jp)
		return;
	uint64_t t0 = now_ns();
	jp->taken_at = t0;
	jp->cuda = probes_cuda_seen(p);
	stack_capture_take_begin();
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(p, &it));) {
		if (t->guest || t->state != TS_STOPPED)
			continue;
		struct job_thread *jt = job_thread_add(jp, t->tid);
		if (!jt)
			break;
		take_thread(p, t, jt, t0);
	}
	jp->taken_ns = now_ns() - t0;
}

void dump_take_finish(struct job *j, struct tracee *p)
{
	struct job_process *jp = j ? job_process_of(j, p->pid) : NULL;
	if (!jp)
		return;
	uint64_t t0 = now_ns();
	for (int i = 0; i < jp->n_threads; i++) {
		struct job_thread *jt = &jp->threads[i];
		jt->stack = stack_capture_intern(p, jt->taken);
		jt->taken = NULL;
		if (jt->from == JOB_CALL_NONE && (jt->api = api_on_stack(jt->stack)) >= 0)
			jt->from = JOB_CALL_STACK;
	}
	jp->described_ns = now_ns() - t0;
}

void dump_note_held(struct job *j, struct tracee *p, uint64_t ns)
{
	struct job_process *jp = j ? job_process_of(j, p->pid) : NULL;
	if (jp)
		jp->held_ns += ns;
}
