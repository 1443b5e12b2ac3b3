/* stack_capture.h — the call stack of a thread stopped at a probe, as an interned stack
 * (figures/stacks.h): native frames through libdw (base/unwind.h), with the Python frames of a
 * CPython interpreter merged in where its eval loop runs them (base/pystack.h). Only at a stop:
 * a call the stubs record without one has no stack (docs/stacks.md says why). */
#ifndef GPUTOP_STACK_CAPTURE_H
#define GPUTOP_STACK_CAPTURE_H

#include <stdint.h>

#include "arch.h"

struct thread;
struct tracee;
struct stack_capture_state;

/* A process's part (p->stack_capture, base/tracee.h), made and freed with it. The functions
 * below act for the process p they are given (t: one of its threads). */
struct stack_capture_state *stack_capture_state_new(void);
void stack_capture_state_free(struct stack_capture_state *st);
/* The process ran exec: a new image, whose stacks are not the old one's. */
void stack_capture_forget(struct tracee *p);

/* The stack of t, stopped, unwound from r (its registers, or those it entered the probed
 * function with), at most config.stack_depth frames: its id, STACK_NONE when stacks are off
 * (depth 0) or none could be taken. */
uint32_t stack_capture(struct tracee *p, struct thread *t, const arch_regs_t *r);

/* The same in two steps, for a picture of every thread (--dump): stack_capture_take, while t is
 * stopped, copies what is needed (registers, its stack's memory, its Python frames read and
 * named: memory reads only); stack_capture_intern, once it runs again, unwinds from the copy,
 * names and interns it, and frees it. libdw's part (CFI, and symbols looked up one by one
 * through tables like libtorch_cuda.so's 112,000 symbols) so costs the program nothing.
 * take: NULL when stacks are off or memory is short; drop: frees one not interned. */
struct stack_taken;
void stack_capture_take_begin(void);	/* a new hold: takes from here on are of one held process */
struct stack_taken *stack_capture_take(struct tracee *p, struct thread *t, const arch_regs_t *r);
uint32_t stack_capture_intern(struct tracee *p, struct stack_taken *s);
void stack_capture_drop(struct stack_taken *s);

/* Launch sites. The first launch of each kernel has its stack taken (it stops anyway); with
 * --stacks launches, more are sampled: a launch that stops at every call (an int3 probe) when
 * its kernel's last sample is STACK_SAMPLE_NS old, and a launch through the ring by making
 * its handle trap again, at most STACK_SAMPLES_PER_TICK handles per 100 ms, in turn. Samples
 * are paid for: each launch stack taken is charged its unwind time against a credit that grows
 * at the budget's share of wall time (--max-overhead, else STACK_SAMPLE_SHARE), and no sample
 * is made while the credit is spent. */
#define STACK_SAMPLE_NS 100000000ull
#define STACK_SAMPLES_PER_TICK 8
#define STACK_SAMPLE_SHARE 0.02
bool stack_capture_launch_due(struct tracee *p, int kernel, uint64_t now);	/* take this launch's stack? */
uint32_t stack_capture_launch(struct tracee *p, struct thread *t, const arch_regs_t *r);	/* taken, and charged */
void stack_capture_note_handle(struct tracee *p, uint64_t handle);	/* a handle the ring's stub trapped for */
void stack_capture_sample_launches(struct tracee *p);	/* the process's, at the tracer's 100 ms housekeeping */

#endif
