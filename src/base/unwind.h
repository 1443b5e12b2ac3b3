/* unwind.h — a stopped thread's native call stack, through libdw's unwinder (the way eu-stack
 * and perf use it): CFI from .eh_frame/.debug_frame, frame pointers where a module has none. */
#ifndef GPUTOP_UNWIND_H
#define GPUTOP_UNWIND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"

struct tracee;

/* Writes the pcs of up to max frames of the stopped thread tid of process p,
 * innermost first, unwinding from regs (its registers now, or those it entered a function
 * with). Each pc but the first is a return address less one, so that it lies inside the call
 * instruction (the line of the call, not of the next statement). Returns how many (0 when
 * none); *truncated is set when frames beyond max were left out. Memory reads only. */
int unwind_stack(const struct tracee *p, pid_t tid, const arch_regs_t *regs, uint64_t *pcs, int max,
		 bool *truncated);

/* A copy of a stopped thread's stack memory, [base, base + len): unwound later, the thread
 * running again (--dump holds each thread for the copy only, libdw's work comes after). */
struct unwind_copy {
	uint64_t base;
	const unsigned char *bytes;
	size_t len;
};
/* As unwind_stack, with the memory read from copy alone: a frame that needs memory outside it
 * ends the stack there. */
int unwind_stack_copy(const struct tracee *p, pid_t tid, const arch_regs_t *regs, const struct unwind_copy *copy,
		      uint64_t *pcs, int max, bool *truncated);

#endif
