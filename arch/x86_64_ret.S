/* x86_64_ret.S — the return stub: where a traced call returns to instead of a trapping int3.
 * It is copied into the trampoline page and runs in the traced program, with no tracer: it
 * finds the call's record in gputop's read-write table by the stack pointer (after `ret`, rsp
 * is the call's entry sp + 8, which the tracer wrote as the record's key), stores the return
 * value, a TSC stamp and, on success, the out-parameters, marks the record returned and jumps
 * to the real return address. The tracer reads the record at its next stop: one stop a call
 * instead of two. It only uses registers a function's return leaves dead (rcx, rdx, r9-r11,
 * flags; CUDA API functions return an int in eax) and keeps rax. No record: int3, and the
 * tracer handles the return the trapping way.
 *
 * Record layout (RET_RECORD_SIZE bytes), see src/retfast.h:
 *   0 key   8 ret   16 out   24 out2   32 rax   40 tsc   48 out value   56 out2 value   64 state
 *   72 entry tsc   80 next   88, 96 scratch
 *
 * arch_entry_stamp runs first, at the call's entry, with r11 = the record (set by the tracer:
 * r11 is dead at a function's entry): it stamps the entry time and goes on to the breakpoint's
 * out-of-line slot. The call's time is then the program's own, stamp to stamp, with none of
 * the tracer's latencies in it. It keeps every register but r11 and flags.
 */
	.section .rodata
	.globl arch_ret_stub, arch_ret_stub_end, arch_ret_stub_table, arch_ret_stub_trap
	.globl arch_entry_stamp
#include "stub_layout.h"
	.set RECORDS, RET_RECORDS
	.set RECORD_SHIFT, RET_RECORD_SHIFT

arch_ret_stub:
	.byte 0x49, 0xb9		/* movabs $table, %r9: the table's address, patched in */
arch_ret_stub_table:
	.quad 0
	mov %rsp, %r10
	shr $4, %r10
	and $(RECORDS - 1), %r10	/* first slot to look at */
	mov $RECORDS, %ecx
1:	mov %r10, %r11
	shl $RECORD_SHIFT, %r11
	cmp %rsp, (%r9,%r11)
	je 2f
	inc %r10
	and $(RECORDS - 1), %r10
	dec %ecx
	jnz 1b
arch_ret_stub_trap:
	int3				/* no record: the tracer's trapping path */
2:	add %r9, %r11			/* r11: the record */
	mov %rax, (RET_OFF_RETVAL)(%r11)
	mov %rax, %r10			/* rdtsc clobbers eax and edx */
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	mov %rax, (RET_OFF_TSC)(%r11)
	test %r10d, %r10d		/* read out-parameters only when the call succeeded: */
	jnz 4f				/* a failed call may not have written a valid pointer */
	mov (RET_OFF_OUT)(%r11), %rcx
	test %rcx, %rcx
	jz 3f
	mov (%rcx), %rcx
	mov %rcx, (RET_OFF_OUT_VALUE)(%r11)
3:	mov (RET_OFF_OUT2)(%r11), %rcx
	test %rcx, %rcx
	jz 4f
	mov (%rcx), %rcx
	mov %rcx, (RET_OFF_OUT2_VALUE)(%r11)
4:	mov %r10, %rax
	mov (RET_OFF_RET)(%r11), %rcx
	movq $2, (RET_OFF_STATE)(%r11)		/* returned: x86 keeps this store after the ones above */
	jmp *%rcx

arch_entry_stamp:
	mov %rax, (RET_OFF_SCRATCH)(%r11)		/* rdtsc's registers, kept in the record, not on the stack */
	mov %rdx, (RET_OFF_SCRATCH + 8)(%r11)
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	mov %rax, (RET_OFF_ENTRY_TSC)(%r11)
	mov (RET_OFF_SCRATCH)(%r11), %rax
	mov (RET_OFF_SCRATCH + 8)(%r11), %rdx
	jmp *80(%r11)			/* the breakpoint's slot: the displaced instructions */
arch_ret_stub_end:
	.section .note.GNU-stack,"",@progbits
