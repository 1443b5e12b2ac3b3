/* stack_capture.c — a stopped thread's stack, unwound, merged with its Python frames and
 * interned (stack_capture.h), at once or in two steps (taken while stopped, interned after). A stack is symbolized once, when first seen: later captures of
 * the same stack cost the unwind and one lookup. */
#define _GNU_SOURCE
#include "stack_capture.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "clock.h"
#include "config.h"
#include "hashmap.h"
#include "kernels.h"
#include "launchring.h"
#include "memory.h"
#include "tracee.h"
#include "pystack.h"
#include "stacks.h"
#include "symbols.h"
#include "threads.h"
#include "unwind.h"

/* The process's part (p->stack_capture): its image's id, which starts every stack's key
 * (the same pcs in another process, or after an exec, are another stack), and the sampling of
 * its launch sites. */
struct due_entry {	/* kernel + 1 -> when its last launch stack was taken */
	uint64_t key;
	uint64_t at;
};
struct stack_capture_state {
	uint64_t image;
	struct hashmap last_sample;	/* of due_entry */
	struct hashmap handles;		/* handles noted, each once */
	uint64_t *handle_list;		/* the same, in turn for sampling */
	size_t n_handles, cap_handles, next_handle;
	/* The sampling budget: what is left to spend (ns of the program stopped for launch
	 * stacks, may go below 0 after a costly one), since when it was refilled, and the
	 * average cost of a launch stack. */
	int64_t credit_ns;
	uint64_t credit_at;
	double avg_cost_ns;
};

#define NAMED_MAX 64
static struct {
	uint64_t images;	/* image ids given so far */
	/* Scratch, off the stack (the tracer thread only). */
	uint64_t pcs[CONFIG_STACK_DEPTH_MAX];
	struct py_frame py[CONFIG_STACK_DEPTH_MAX];
	uint64_t key[1 + 3 * CONFIG_STACK_DEPTH_MAX];
	struct stack_frame frames[CONFIG_STACK_DEPTH_MAX];
	int order[2 * CONFIG_STACK_DEPTH_MAX];	/* merge()'s, choose()'s */
	bool keep[2 * CONFIG_STACK_DEPTH_MAX];
	char names[CONFIG_STACK_DEPTH_MAX][64];
	char files[CONFIG_STACK_DEPTH_MAX][sizeof ((struct sym_place *)0)->file_whole];	/* whole names */
	struct {
		int n;
		struct py_frame frame[NAMED_MAX];
	} named;	/* stack_capture_take's */
} capture;

struct stack_capture_state *stack_capture_state_new(void)
{
	struct stack_capture_state *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	st->image = ++capture.images;
	if (hashmap_init(&st->last_sample, sizeof(struct due_entry), 16, 0) < 0 ||
	    hashmap_init(&st->handles, sizeof(uint64_t), 16, 0) < 0) {
		stack_capture_state_free(st);
		return NULL;
	}
	return st;
}

void stack_capture_state_free(struct stack_capture_state *st)
{
	if (!st)
		return;
	hashmap_clear(&st->last_sample);
	hashmap_clear(&st->handles);
	free(st->handle_list);
	free(st);
}

void stack_capture_forget(struct tracee *p)
{
	struct stack_capture_state *st = p->stack_capture;
	st->image = ++capture.images;
	hashmap_clear(&st->last_sample);
	hashmap_clear(&st->handles);
	st->n_handles = st->next_handle = 0;
	pystack_forget(p);
}

/* One native frame, named: demangled function, or module+offset where no symbol names it.
 * Names that need freeing go to *owned. */
static void name_native(const struct tracee *p, uint64_t pc, int i, struct stack_frame *f, char **owned)
{
	struct sym_place place;
	*owned = NULL;
	*f = (struct stack_frame){ 0 };
	if (sym_describe(p, pc, &place) < 0) {
		snprintf(capture.names[i], sizeof capture.names[i], "0x%" PRIx64, pc);
		f->function = capture.names[i];
		return;
	}
	f->module = place.module;
	f->file = place.file;
	if (place.file == place.file_whole) {	/* the place's own: kept for the frame until stacks_add copies it */
		memcpy(capture.files[i], place.file_whole, sizeof capture.files[i]);
		f->file = capture.files[i];
	}
	f->line = place.line > 0 ? (uint32_t)place.line : 0;
	if (place.function) {
		*owned = kernels_demangle(place.function);
		f->function = *owned ? *owned : place.function;
	} else {
		snprintf(capture.names[i], sizeof capture.names[i], "%s+0x%" PRIx64, place.module ? place.module : "?", place.module_offset);
		f->function = capture.names[i];
	}
}

/* Whether pc lies in the interpreter's eval loop, where Python frames are run. */
static bool in_eval_loop(const struct tracee *p, uint64_t pc)
{
	struct sym_place place;
	return sym_describe(p, pc, &place) == 0 && place.function && pystack_is_eval_function(place.function);
}

/* Naming a new stack's frames can take long the first time a module is met (a PyTorch
 * process's first stack: 0.7 s on an H200, libtorch's symbols): gputop beats while it names, so
 * that the stubs keep parking for their stacks (they give up on a heartbeat older than 250 ms)
 * and a parked thread's stack is not dropped as late. They wait for it, once. */
static void beat(struct tracee *p)
{
	if (launchring_base(p) && now_ns() - launchring_beat_ns(p) > 20000000u)
		launchring_beat(p);
}

/* The frames in order, innermost first, as (native index) or (-1 - Python index): at each native
 * frame of the eval loop, the Python frames it runs go in just above it (each eval call runs
 * Python frames up to an entry frame). */
static int merge(struct tracee *p, int n_native, int n_py, int *order)
{
	int n = 0, k = 0;
	for (int i = 0; i < n_native; i++) {
		beat(p);
		if (n_py && k < n_py && in_eval_loop(p, capture.pcs[i]))
			while (k < n_py) {
				bool entry = capture.py[k].entry;
				order[n++] = -1 - k++;
				if (entry)
					break;
			}
		order[n++] = i;
	}
	/* No native frame of the eval loop was seen (unwinding stopped short, or its symbol is
	 * not there): the Python frames still go in, outermost. */
	while (k < n_py)
		order[n++] = -1 - k++;
	return n;
}

/* Which of the n merged frames stay when there are more than depth: the called function, then
 * the Python frames (the lines users read), then native frames from the innermost. A PyTorch
 * allocation is 40 and more native frames below its Python line: cut from the outside, the
 * stack would end in the dispatcher and never say the line. */
static void choose(const int *order, int n, int depth, bool *keep)
{
	int left = depth;
	for (int i = 0; i < n; i++)
		keep[i] = i == 0 && left > 0;
	left -= keep[0];
	for (int i = 1; i < n && left > 0; i++)
		if (order[i] < 0)
			keep[i] = true, left--;
	for (int i = 1; i < n && left > 0; i++)
		if (!keep[i])
			keep[i] = true, left--;
}

static uint32_t build(struct tracee *p, int depth, int n_native, int n_py, char **owned)
{
	int n = merge(p, n_native, n_py, capture.order);
	choose(capture.order, n, depth, capture.keep);
	uint32_t out = 0;
	for (int i = 0; i < n; i++) {
		if (!capture.keep[i])
			continue;
		int at = capture.order[i];
		beat(p);
		if (at >= 0) {
			name_native(p, capture.pcs[at], (int)out, &capture.frames[out], &owned[out]);
		} else {
			const struct py_frame *f = &capture.py[-1 - at];
			capture.frames[out] = (struct stack_frame){ .function = f->function, .file = f->file, .line = f->line,
								    .module = f->module, .python = true };
		}
		out++;
	}
	return out;
}

static int capture_depth(void)
{
	return config.stack_depth > CONFIG_STACK_DEPTH_MAX ? CONFIG_STACK_DEPTH_MAX : config.stack_depth;
}

/* The n native pcs and n_py Python frames in capture, interned: found by their key, or named
 * (the Python frames too, unless described already) and added. */
static uint32_t intern(struct tracee *p, pid_t tid, int depth, int n, int n_py, bool described, bool truncated)
{
	/* The key: the process image, the pcs, then each Python frame's code object and line. */
	uint32_t nk = 0;
	capture.key[nk++] = p->stack_capture->image;
	for (int i = 0; i < n; i++)
		capture.key[nk++] = capture.pcs[i];
	for (int i = 0; i < n_py; i++) {
		capture.key[nk++] = capture.py[i].code;
		capture.key[nk++] = capture.py[i].line;
	}
	uint32_t id = stacks_find(capture.key, nk);
	if (id != STACK_NONE)
		return id;
	for (int i = 0; i < n_py && !described; i++) {
		beat(p);
		pystack_describe(p, tid, &capture.py[i]);
	}
	char *owned[CONFIG_STACK_DEPTH_MAX] = { 0 };
	uint32_t nf = build(p, depth, n, n_py, owned);
	id = stacks_add(p->pid, capture.key, nk, capture.frames, nf, truncated || nf < (uint32_t)(n + n_py));
	for (uint32_t i = 0; i < nf; i++)
		free(owned[i]);
	return id;
}

uint32_t stack_capture(struct tracee *p, struct thread *t, const arch_regs_t *r)
{
	bool truncated;
	int depth = capture_depth();
	if (depth <= 0)
		return STACK_NONE;
	/* With Python frames, the native ones are unwound past depth, down to the eval loop that
	 * runs them: choose() then keeps the Python frames. */
	int n_py = pystack_read(p, t, capture.py, depth);
	int n = unwind_stack(p, t->tid, r, capture.pcs, n_py ? CONFIG_STACK_DEPTH_MAX : depth, &truncated);
	if (n <= 0)
		return STACK_NONE;
	return intern(p, t->tid, depth, n, n_py, false, truncated);
}

/* ---- a stack taken in two steps (--dump) ------------------------------------------------------ */

/* The stack's memory copied from the stack pointer up: PyTorch's deepest stacks (a Python line
 * 40 and more native frames above its CUDA call) use tens of KiB. Below the stack pointer, the
 * red zone of a leaf function. */
#define TAKEN_STACK_BYTES (256 * 1024)
#define RED_ZONE 128

struct stack_taken {
	pid_t tid;
	arch_regs_t regs;
	struct unwind_copy copy;
	int n_py;
	struct py_frame py[];
};

/* The code objects named during one hold (capture.named; stack_capture_take_begin empties it):
 * the threads of a process run the same few functions, each named once. Only while the
 * process is held: a code object's address may be another's once it runs. */
void stack_capture_take_begin(void)
{
	capture.named.n = 0;
}

static void describe_once(struct tracee *p, pid_t tid, struct py_frame *f)
{
	for (int i = 0; i < capture.named.n; i++)
		if (capture.named.frame[i].code == f->code) {
			*f = (struct py_frame){ .code = f->code, .line = f->line, .entry = f->entry,
						.module = capture.named.frame[i].module };
			memcpy(f->function, capture.named.frame[i].function, sizeof f->function);
			memcpy(f->file, capture.named.frame[i].file, sizeof f->file);
			return;
		}
	pystack_describe(p, tid, f);
	if (capture.named.n < NAMED_MAX)
		capture.named.frame[capture.named.n++] = *f;
}

struct stack_taken *stack_capture_take(struct tracee *p, struct thread *t, const arch_regs_t *r)
{
	int depth = capture_depth();
	if (depth <= 0)
		return NULL;
	int n_py = pystack_read(p, t, capture.py, depth);
	struct stack_taken *s = malloc(sizeof *s + (size_t)n_py * sizeof s->py[0]);
	unsigned char *bytes = malloc(TAKEN_STACK_BYTES);
	if (!s || !bytes) {
		free(s);
		free(bytes);
		return NULL;
	}
	s->tid = t->tid;
	s->regs = *r;
	s->copy.base = arch_sp(r) - RED_ZONE;
	long got = mem_read_upto(t->tid, s->copy.base, bytes, TAKEN_STACK_BYTES);
	s->copy.len = got > 0 ? (size_t)got : 0;
	s->copy.bytes = bytes;
	/* Named now: their code objects are read while the thread cannot free them. */
	s->n_py = n_py;
	for (int i = 0; i < n_py; i++) {
		s->py[i] = capture.py[i];
		describe_once(p, t->tid, &s->py[i]);
	}
	return s;
}

uint32_t stack_capture_intern(struct tracee *p, struct stack_taken *s)
{
	if (!s)
		return STACK_NONE;
	bool truncated;
	int n_py = s->n_py;
	memcpy(capture.py, s->py, (size_t)n_py * sizeof s->py[0]);
	int n = unwind_stack_copy(p, s->tid, &s->regs, &s->copy, capture.pcs, n_py ? CONFIG_STACK_DEPTH_MAX : capture_depth(),
				  &truncated);
	uint32_t id = n > 0 ? intern(p, s->tid, capture_depth(), n, n_py, true, truncated) : STACK_NONE;
	stack_capture_drop(s);
	return id;
}

void stack_capture_drop(struct stack_taken *s)
{
	if (s)
		free((void *)s->copy.bytes);
	free(s);
}

/* ---- launch sites, sampled (--stacks launches) ---------------------------------------------- */

/* Sampled launch stacks cost the launching thread its unwind (about 10 ms for a PyTorch
 * thread, native and Python frames): at 80 samples a second a PyTorch loop on the H100 ran at
 * 8% of its speed (scripts/gpu-stacks). Hence the credit: at most the budget's share of wall
 * time goes to them, at most 100 ms of it is saved up for a burst, and at most 100 ms is owed
 * (the first launches of a PyTorch process, right after an attach, cost seconds: they would
 * hold off every sample for minutes). */
#define CREDIT_MAX_NS 100000000
static bool refill(struct tracee *p, uint64_t now)
{
	struct stack_capture_state *st = p->stack_capture;
	double share = budget_active() ? budget_share() : STACK_SAMPLE_SHARE;
	if (st->credit_at && now > st->credit_at)
		st->credit_ns += (int64_t)(share * (double)(now - st->credit_at));
	if (st->credit_ns > CREDIT_MAX_NS)
		st->credit_ns = CREDIT_MAX_NS;
	st->credit_at = now;
	return st->credit_ns > 0;
}

uint32_t stack_capture_launch(struct tracee *p, struct thread *t, const arch_regs_t *r)
{
	struct stack_capture_state *st = p->stack_capture;
	uint64_t t0 = now_ns();
	uint32_t id = stack_capture(p, t, r);
	uint64_t cost = now_ns() - t0;
	st->credit_ns -= (int64_t)cost;
	if (st->credit_ns < -CREDIT_MAX_NS)
		st->credit_ns = -CREDIT_MAX_NS;
	st->avg_cost_ns = st->avg_cost_ns ? 0.8 * st->avg_cost_ns + 0.2 * (double)cost : (double)cost;
	return id;
}

bool stack_capture_launch_due(struct tracee *p, int kernel, uint64_t now)
{
	struct stack_capture_state *st = p->stack_capture;
	/* Only with --stacks launches: unwinding a PyTorch process at the first launch of each of
	 * its kernels cost it 95% of its steps/s right after an attach on the H100 (libdw reading
	 * the CFI of libtorch_cuda.so, Python frames; scripts/gpu-attach-speed). */
	if (kernel < 0 || config.stack_depth <= 0 || !(config.stacks & CONFIG_STACKS_LAUNCHES))
		return false;
	/* Its first launch, or a sample when its last one is old enough and the budget allows. */
	struct due_entry *e = hashmap_find(&st->last_sample, (uint64_t)kernel + 1);
	if (e && (now - e->at < STACK_SAMPLE_NS || !refill(p, now)))
		return false;
	if (e || (e = hashmap_insert(&st->last_sample, (uint64_t)kernel + 1, NULL)))
		e->at = now;
	return true;
}

void stack_capture_note_handle(struct tracee *p, uint64_t handle)
{
	struct stack_capture_state *st = p->stack_capture;
	bool added;
	if (!(config.stacks & CONFIG_STACKS_LAUNCHES) || !handle)
		return;
	if (!hashmap_insert(&st->handles, handle, &added) || !added)
		return;
	if (st->n_handles == st->cap_handles) {
		size_t cap = st->cap_handles ? 2 * st->cap_handles : 64;
		uint64_t *l = realloc(st->handle_list, cap * sizeof *l);
		if (!l)
			return;
		st->handle_list = l;
		st->cap_handles = cap;
	}
	st->handle_list[st->n_handles++] = handle;
}

void stack_capture_sample_launches(struct tracee *p)
{
	struct stack_capture_state *st = p->stack_capture;
	if (!(config.stacks & CONFIG_STACKS_LAUNCHES) || config.stack_depth <= 0 || !refill(p, now_ns()))
		return;
	/* As many handles as the credit pays for at the average cost (one before any is known). */
	size_t n = st->avg_cost_ns > 0 ? (size_t)((double)st->credit_ns / st->avg_cost_ns) : 1;
	if (n < 1)
		n = 1;
	for (size_t k = 0; k < STACK_SAMPLES_PER_TICK && k < n && k < st->n_handles; k++) {
		launchring_unsee(p, st->handle_list[st->next_handle]);
		st->next_handle = (st->next_handle + 1) % st->n_handles;
	}
}
