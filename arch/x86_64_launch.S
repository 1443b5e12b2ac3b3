/* x86_64_launch.S — the launch stub: what a launch probe runs instead of a stop. A driver
 * launch function's first 5 bytes are a `jmp` to its slot, which runs
 *     mov $probe, %r11d ; call <this stub> ; <the displaced instructions> ; jmp back
 * The stub appends the call's arguments to gputop's launch ring (a read-write mapping of
 * gputop's in the program) and returns to the slot: a launch costs no stop. The tracer drains
 * the ring on its tick (every 10 ms). One case waits for gputop instead (arch_park, below,
 * while gputop is there, `present`, and drains): a function handle the filter has not seen
 * yet (the tracer names the kernel then, asking the driver if it must, and adds the handle).
 * A full ring is never waited on: the record is dropped and counted as lost for its probe (the
 * launch count stays exact); a late, frozen, starved or dead gputop costs detail, never time.
 * At a function's entry r11 is dead (the ABI's scratch register, no argument); everything else
 * the stub touches it saves on the stack below the return address, as the function would.
 * At the park's call: [rsp] rcx, [rsp+8] rdx, [rsp+16] rax, [rsp+24] the slot, [rsp+32] the
 * caller's return address (the entry sp).
 *
 * Ring layout (launchring.h):
 *   0 head (producers: lock xadd)   64 tail (the tracer)   128 present (1 while gputop traces)
 *   192 capacity in use (at most LR_CAP; smaller in tests, to fill it)
 *   4096 lost[probe] (u64 each)     LR_FILTER seen handles, 65,536 x u64, a handle at its hash
 *   (launchring.c filter_slot) or the slot next to it (index ^ 1)
 *   LR_RECORDS records of 64 bytes: 0 probe + 1 (written last), 8 rdi, 16 rsi, 24 rdx, 32 rcx,
 *   40 r8, 48 r9, 56 the first stack argument.  The _ex variant (a launch that takes its
 *   dimensions by pointer, in rdi) stores the first 24 bytes at rdi in place of rdx, rcx, r8.
 */
#include "stub_layout.h"
	.set LR_TAIL, LR_OFF_TAIL
	.set LR_PRESENT, LR_OFF_PRESENT
	.set LR_CAPACITY, LR_OFF_CAPACITY
	.set LR_HEARTBEAT, LR_OFF_HEARTBEAT
	.set LR_FRESH, LR_OFF_FRESH
	.set LR_STALE, LR_OFF_STALE
	.set LR_LOST, LR_OFF_LOST
	.set LR_CALLS, LR_OFF_CALLS		/* call records (the call stub) */
	.set RB_RECORDS, LR_CALL_RECORDS
	.set RB_SIZE, LR_CALL_SIZE
	.set LR_FILTER, LR_OFF_FILTER
	.set LR_HASH, LR_FILTER_HASH
	.set LR_RECORDS, LR_OFF_RECORDS
	.set LR_TRAPS, LR_OFF_TRAPS
	.set LR_DONE, LR_OFF_DONE
	.set LR_DONE_HEAD, LR_OFF_DONE_HEAD
	.set LR_DONE_TAIL, LR_OFF_DONE_TAIL
	.set LR_DONE_CAPACITY, LR_OFF_DONE_CAPACITY
	.set LR_SCOPE, LR_OFF_SCOPE
	.set LR_RANGES, LR_OFF_RANGES
	.set LR_TALLY, LR_OFF_TALLY

	.section .rodata
	.globl arch_launch_stub, arch_launch_stub_ring, arch_launch_stub_ex, arch_launch_stub_end
	.globl arch_launch_stub_trap, arch_launch_stub_trap_ex, arch_call_stub, arch_call_ret
	.globl arch_call_stub_trap, arch_call_ret_oom_trap

/* tally_entry(the tallies, op, a, b, w) (arch/tally.c, at arch_tally) at a function's entry,
 * from a stub that saved rax, rdx and rcx: every other register the function was entered with
 * is kept, and the call made on an aligned stack. a and b: registers other than rcx and rdx, or
 * immediates; w (TALLY_OP_QUIET's words) a register other than those. */
.macro TALLY_AT_ENTRY op, a, b, w
	push %rsi
	push %rdi
	push %r8
	push %r9
	push %r10
	push %r11
	push %rbx
	mov %rsp, %rbx
	and $-16, %rsp
.ifnb \w
	mov \w, %r8
.endif
	mov \b, %rcx
	mov \a, %rdx
	mov $\op, %esi
	mov 0f(%rip), %rdi
	add $LR_TALLY, %rdi
	call arch_tally
	mov %rbx, %rsp
	pop %rbx
	pop %r11
	pop %r10
	pop %r9
	pop %r8
	pop %rdi
	pop %rsi
.endm

/* One variant: \handle is the register holding the launched function, \ex selects the
 * dimensions by pointer. Stack at entry: [rsp] the slot to go back to, [rsp+8] the caller's
 * return address (the function's entry sp), [rsp+16] its first stack argument. */
/* The words of a launch record (all but its first) at rax: the argument registers, the first
 * stack argument (\so bytes more below it on the stack than at the stub's three pushes), and
 * for \ex the first 24 bytes of the config rdi points to in place of rdx, rcx, r8. */
.macro LAUNCH_WORDS ex, so
	mov %rdi, 8(%rax)
	mov %rsi, 16(%rax)
	mov %r9, 48(%rax)
	mov (40 + \so)(%rsp), %rcx	/* the first stack argument: above rcx, rdx, rax, the
					 * slot's return address and the caller's */
	mov %rcx, 56(%rax)
.if \ex
	xor %ecx, %ecx
	test %rdi, %rdi
	jz 6f
	mov (%rdi), %rcx
6:	mov %rcx, 24(%rax)
	jz 7f
	mov 8(%rdi), %rcx
7:	mov %rcx, 32(%rax)
	jz 8f
	mov 16(%rdi), %rcx
8:	mov %rcx, 40(%rax)
.else
	mov (8 + \so)(%rsp), %rcx	/* rdx as it was */
	mov %rcx, 24(%rax)
	mov (\so)(%rsp), %rcx		/* rcx as it was */
	mov %rcx, 32(%rax)
	mov %r8, 40(%rax)
.endif
.endm

/* One variant: \handle is the register holding the launched function, \ex selects the
 * dimensions by pointer. Stack at entry: [rsp] the slot to go back to, [rsp+8] the caller's
 * return address (the function's entry sp), [rsp+16] its first stack argument. A kernel's
 * launch (LR_TALLY_DIMS in its probe's tally spec) of a handle the filter knows, while gputop
 * says no one wants its record (LR_OFF_QUIET), writes no record: its words go to the tallies
 * (TALLY_OP_QUIET), from a copy on the stack. */
/* A launch record in the ring (rdx: the ring), its words from the registers; a full ring
 * goes to \full, rdx kept. */
.macro RECORD_LAUNCH ex, full
	mov (%rdx), %rax		/* head: this record's sequence number, if still free */
2:	mov %rax, %rcx
	sub LR_TAIL(%rdx), %rcx
	cmp LR_CAPACITY(%rdx), %rcx
	jae \full			/* full */
	lea 1(%rax), %rcx
	lock cmpxchg %rcx, (%rdx)	/* taken, or rax = the head another thread moved */
	jne 2b
	and $(LR_CAP - 1), %eax
	shl $6, %rax
	lea LR_RECORDS(%rdx,%rax), %rax	/* rax: the record */
	LAUNCH_WORDS \ex, 0
	lea 1(%r11), %rcx
	mov %rcx, (%rax)		/* committed: x86 keeps this store after the ones above */
.endm

.macro LAUNCH_STUB handle, ex, trap
	push %rax
	push %rdx
	push %rcx
	mov 0f(%rip), %rdx		/* the ring */
	movabs $LR_HASH, %rcx		/* the filter: two ways at (handle * LR_HASH) >> (64 - bits) */
	imul \handle, %rcx
	shr $(64 - LR_FILTER_BITS), %rcx
	cmp LR_FILTER(%rdx,%rcx,8), \handle
	je 10f
	xor $1, %ecx
	cmp LR_FILTER(%rdx,%rcx,8), \handle
	jne 5f
10:	testb $LR_TALLY_DIMS, LR_OFF_TALLY_FLAGS(%rdx,%r11,8)
	jz 1f
	cmpq $0, LR_OFF_QUIET(%rdx)
	jne 11f				/* quiet: counted in place, with its dimensions */
1:	RECORD_LAUNCH \ex, 4f
3:	TALLY_AT_ENTRY TALLY_OP_LAUNCH, %r11, \handle	/* counted, whatever became of its record;
					 * after a park, where gputop read the tallies before it named the
					 * handle: a handle the driver gave again is counted under its new
					 * name from this launch on */
12:	pop %rcx
	pop %rdx
	pop %rax
	ret
4:	lock incq LR_LOST(%rdx,%r11,8)	/* full: not recorded, never waited for */
	jmp 3b
11:	sub $64, %rsp			/* the record's words, on the stack */
	mov %rsp, %rax
	LAUNCH_WORDS \ex, 64
	TALLY_AT_ENTRY TALLY_OP_QUIET, %r11, \handle, %rax
	add $64, %rsp
	jmp 12b
5:	cmpq $0, LR_PRESENT(%rdx)
	je 14f				/* gputop is gone: record it unnamed */
	cmpq $0, LR_FRESH(%rdx)
	je \trap			/* no heartbeat to tell by: the park waits a bounded time */
	push %r8
	mov %rdx, %r8
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	sub LR_HEARTBEAT(%r8), %rax
	cmp LR_FRESH(%r8), %rax
	mov %r8, %rdx
	pop %r8
	jae 14f				/* no drain lately (frozen, starved): unnamed, never waited for */
\trap:	call arch_park			/* the tracer counts and names it, if it comes */
	mov 0f(%rip), %rdx		/* the ring, for the record (mov keeps the flags) */
	test %eax, %eax
	jnz 14f				/* it did not come: recorded unnamed, as without gputop */
	sub $64, %rsp			/* served: counted, its words kept (the handle's last) */
	mov %rsp, %rax
	LAUNCH_WORDS \ex, 64
	TALLY_AT_ENTRY TALLY_OP_WORDS, %r11, \handle, %rax
	add $64, %rsp
	jmp 12b
14:	sub $64, %rsp			/* unnamed: counted with its words (the handle's last, */
	mov %rsp, %rax			/* as a quiet launch's), then recorded */
	LAUNCH_WORDS \ex, 64
	TALLY_AT_ENTRY TALLY_OP_WORDS, %r11, \handle, %rax
	add $64, %rsp
	mov 0f(%rip), %rdx
	RECORD_LAUNCH \ex, 15f
	jmp 12b
15:	lock incq LR_LOST(%rdx,%r11,8)	/* full: not recorded, never waited for */
	jmp 12b
.endm

arch_launch_stub:
	LAUNCH_STUB %rdi, 0, arch_launch_stub_trap
	.p2align 4
arch_launch_stub_ex:
	LAUNCH_STUB %rsi, 1, arch_launch_stub_trap_ex
	.p2align 4

/* The call stub: what a driver call probed at entry and return (a copy, a memset, a
 * synchronize) runs instead of a stop, through a jump probe's slot as above. It claims a record
 * in the table of calls in flight (LR_CALLS: RB_RECORDS of 128 bytes, found by a free key),
 * writes the return address, the probe, the argument registers, the thread pointer (%fs:0) and
 * a TSC stamp in it, and swaps the call's return address for arch_call_ret. A record of the same
 * thread and stack depth still in flight (its call was left by longjmp, and will never return)
 * is taken over. No free record (as many calls in flight at once): the call runs untraced and
 * is counted as lost, never waited for. A call made from inside a module of its probe's scope
 * (LR_SCOPE, LR_RANGES: cudart calling the driver) while a recorded call of the same thread and
 * scope is in flight is part of that call: it runs unrecorded, as gputop would not count it.
 * It parks in one case (arch_park, with the record in rcx,
 * the stack as at the launch stub's park): a probe whose calls want their call stack
 * (LR_TRAPS), while gputop is there and has drained lately — a frozen, starved or dead gputop
 * is never stopped for.
 * Record: 0 key (the sp the call returns with)  8 return address  16 probe + 1  24 rdi  32 rsi
 * 40 rdx  48 rcx  56 r8  64 r9  72 %fs:0  80 entry TSC  88 return TSC  96 rax  104 state
 * (1 in flight, 2 returned)  112, 120 what the out-parameters point to. */
arch_call_stub:
	push %rax
	push %rdx
	push %rcx
	mov 0f(%rip), %rdx
	movzbl LR_SCOPE(%rdx,%r11), %eax	/* the probe's scope, 0: none */
	test %eax, %eax
	jz 20f
	push %rsi
	push %rdi
	push %r8
	mov %rax, %r8
	mov 56(%rsp), %rcx		/* the caller's return address */
	dec %rax
	imul $(LR_SCOPE_RANGES * 16), %rax, %rax
	lea LR_RANGES(%rdx,%rax), %rsi
	lea (LR_SCOPE_RANGES * 16)(%rsi), %rdi
21:	mov (%rsi), %rax		/* a module of the scope holds the caller? */
	test %rax, %rax
	jz 29f
	cmp %rax, %rcx
	jb 22f
	cmp 8(%rsi), %rcx
	jb 23f
22:	add $16, %rsi
	cmp %rdi, %rsi
	jb 21b
	jmp 29f
23:	mov %fs:0, %rcx			/* a recorded call of this thread and scope in flight? */
	lea LR_CALLS(%rdx), %rsi
	lea (LR_CALLS + RB_RECORDS * RB_SIZE)(%rdx), %rdi
24:	cmpq $0, (%rsi)
	je 25f
	cmp %rcx, 72(%rsi)
	jne 25f
	cmpq $1, 104(%rsi)
	jne 25f
	mov 16(%rsi), %rax		/* its probe + 1 */
	cmpb %r8b, (LR_SCOPE - 1)(%rdx,%rax)
	je 28f
25:	add $RB_SIZE, %rsi
	cmp %rdi, %rsi
	jb 24b
29:	pop %r8
	pop %rdi
	pop %rsi
	jmp 20f
28:	pop %r8				/* part of that call: not recorded */
	pop %rdi
	pop %rsi
	jmp 5f
20:	lea 40(%rsp), %rcx		/* the key: the entry sp + 8 */
	mov 0f(%rip), %rdx
	add $LR_CALLS, %rdx
	lea (RB_RECORDS * RB_SIZE)(%rdx), %rax
1:	cmp %rcx, (%rdx)		/* a stale call of this thread at this depth: ours now */
	je 4f
	add $RB_SIZE, %rdx
	cmp %rax, %rdx
	jb 1b
	mov 0f(%rip), %rdx
	add $LR_CALLS, %rdx
3:	xor %eax, %eax
	lock cmpxchg %rcx, (%rdx)	/* a free record: now ours */
	je 4f
	add $RB_SIZE, %rdx
	mov 0f(%rip), %rax
	add $(LR_CALLS + RB_RECORDS * RB_SIZE), %rax
	cmp %rax, %rdx
	jb 3b
	mov 0f(%rip), %rax		/* none free: untraced, counted */
	lock incq LR_LOST(%rax,%r11,8)
	TALLY_AT_ENTRY TALLY_OP_UNRECORDED, %r11, $0
	jmp 5f
4:	mov 32(%rsp), %rax		/* the caller's return address */
	mov %rax, 8(%rdx)
	lea 1(%r11), %rax
	mov %rax, 16(%rdx)
	mov %rdi, 24(%rdx)
	mov %rsi, 32(%rdx)
	mov 8(%rsp), %rax		/* rdx as it was */
	mov %rax, 40(%rdx)
	mov (%rsp), %rax		/* rcx as it was */
	mov %rax, 48(%rdx)
	mov %r8, 56(%rdx)
	mov %r9, 64(%rdx)
	mov %fs:0, %rax			/* the thread */
	mov %rax, 72(%rdx)
	mov %rdx, %rcx			/* rdtsc clobbers eax and edx */
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	mov %rax, 80(%rcx)
	movq $0, LR_CALL_OFF_OUT_VALUE(%rcx)	/* written at the return, on success only */
	movq $0, LR_CALL_OFF_OUT2_VALUE(%rcx)
	movq $1, 104(%rcx)		/* in flight */
	mov 0f(%rip), %rax		/* a stack wanted? Before the return address is swapped: */
	testb $LR_TRAP_STACK, LR_TRAPS(%rax,%r11)	/* the stack is unwound from the function's entry */
	jz 7f
	cmpq $0, LR_PRESENT(%rax)
	je 7f
	cmpq $0, LR_FRESH(%rax)
	je arch_call_stub_trap		/* no heartbeat to tell by: the park waits a bounded time */
	push %rsi
	mov %rax, %rsi
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	sub LR_HEARTBEAT(%rsi), %rax
	cmp LR_FRESH(%rsi), %rax
	pop %rsi
	jae 7f				/* no drain lately (frozen, starved): no stack, never waited for */
arch_call_stub_trap:
	call arch_park			/* the tracer takes the stack, if it comes; the call goes on */
7:	lea arch_call_ret(%rip), %rax
	mov %rax, 32(%rsp)		/* the call returns through arch_call_ret */
5:	pop %rcx
	pop %rdx
	pop %rax
	ret

/* Where such a call returns: its record (key == sp, in flight) gets rax, a TSC stamp and, on
 * success, what its out-parameters point to (LR_OFF_OUTS: the positions, 1-6, of the probe's
 * out-pointer arguments; 0 none); it is copied into the calls' ring (LR_DONE), or counted as lost
 * when the ring is full, then freed, and the caller gets control. Uses what a return leaves
 * dead: rcx, rdx, rsi, rdi, r8-r11 (CUDA API functions return an int in eax).
 * An allocation that failed out of memory (error 2) of a probe that asks for it (LR_TRAPS bit
 * LR_TRAP_OOM), while gputop is there and has drained lately, parks once its record is in the
 * calls' ring and freed (arch_call_ret_oom_trap): gputop reads the allocator's state while the
 * thread that failed is held (PyTorch's holds its mutex around cudaMalloc). Only that path
 * tests for it (the tail is written twice): a call that succeeded runs what it ran before. */
.macro CALL_RET_TAIL oom
	push %r9			/* tallied (arch/tally.c) before its record is given */
	push %r10
	push %rbx
	mov %rsp, %rbx
	and $-16, %rsp
	mov 0f(%rip), %rdi
	add $LR_TALLY, %rdi
	mov $TALLY_OP_RETURN, %esi
	mov %r10, %rdx
	call arch_tally
	mov %rbx, %rsp
	pop %rbx
	pop %r10
	pop %r9
	test %eax, %eax
	jz 9f				/* all it says is in the tallies: no record */
	mov 0f(%rip), %rsi		/* a record of the calls' ring */
	mov LR_DONE_HEAD(%rsi), %rax
6:	mov %rax, %rcx
	sub LR_DONE_TAIL(%rsi), %rcx
	cmp LR_DONE_CAPACITY(%rsi), %rcx
	jae 8f				/* full */
	lea 1(%rax), %rcx
	lock cmpxchg %rcx, LR_DONE_HEAD(%rsi)	/* taken, or rax = the head another thread moved */
	jne 6b
	and $(LR_DONE_CAP - 1), %eax
	shl $LR_CALL_SHIFT, %rax
	lea LR_DONE(%rsi,%rax), %rdi
	.irp off, 0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 112, 120
	mov \off(%r10), %r8
	mov %r8, \off(%rdi)
	.endr
	mov %rcx, LR_CALL_OFF_STATE(%rdi)	/* committed with its sequence number + 1 (the new
					 * head): x86 keeps this store after the ones above */
	jmp 9f
8:	mov 16(%r10), %rcx		/* full: counted, not recorded, never waited for */
	lock incq (LR_LOST - 8)(%rsi,%rcx,8)
9:	mov 8(%r10), %rcx		/* the caller's return address */
	movq $0, LR_CALL_OFF_STATE(%r10)
	movq $0, (%r10)			/* free for the next call */
.if \oom
arch_call_ret_oom_trap:
	call arch_park			/* gputop reads the state of this instant, if it comes */
.endif
	mov %r9, %rax
	jmp *%rcx
.endm

arch_call_ret:
	mov 0f(%rip), %r10
	add $LR_CALLS, %r10
	lea (RB_RECORDS * RB_SIZE)(%r10), %r11
1:	cmp %rsp, (%r10)
	jne 2f
	cmpq $1, 104(%r10)
	je 3f
2:	add $RB_SIZE, %r10
	cmp %r11, %r10
	jb 1b
	int3				/* no record: cannot be (gputop frees returned ones only) */
3:	mov %rax, 96(%r10)
	mov %rax, %r9			/* the return value, given back last */
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	mov %rax, 88(%r10)
	test %r9d, %r9d			/* read out-parameters only when the call succeeded: */
	jnz 10f				/* a failed call may not have written a valid pointer */
	mov 16(%r10), %r11		/* probe + 1 */
	mov 0f(%rip), %rsi
	movzbl (LR_OFF_OUTS - 2)(%rsi,%r11,2), %ecx	/* the first out position */
	test %ecx, %ecx
	jz 4f
	mov (LR_CALL_OFF_ARGS - 8)(%r10,%rcx,8), %rdx
	mov (%rdx), %rdx
	mov %rdx, LR_CALL_OFF_OUT_VALUE(%r10)
4:	movzbl (LR_OFF_OUTS - 1)(%rsi,%r11,2), %ecx	/* the second */
	test %ecx, %ecx
	jz 5f
	mov (LR_CALL_OFF_ARGS - 8)(%r10,%rcx,8), %rdx
	mov (%rdx), %rdx
	mov %rdx, LR_CALL_OFF_OUT2_VALUE(%r10)
5:	CALL_RET_TAIL 0
10:	cmp $2, %r9d			/* failed: out of memory (cudaErrorMemoryAllocation, */
	jne 5b				/* CUDA_ERROR_OUT_OF_MEMORY), of a probe that parks for it? */
	mov 16(%r10), %r11
	mov 0f(%rip), %rsi
	testb $LR_TRAP_OOM, (LR_TRAPS - 1)(%rsi,%r11)
	jz 5b
	cmpq $0, LR_PRESENT(%rsi)
	je 5b
	cmpq $0, LR_FRESH(%rsi)
	je 11f				/* no heartbeat to tell by: the park waits a bounded time */
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	sub LR_HEARTBEAT(%rsi), %rax
	cmp LR_FRESH(%rsi), %rax
	jae 5b				/* no drain lately (frozen, starved): never waited for */
11:	CALL_RET_TAIL 1

/* The park: where a stub wants the tracer (a kernel to name, a stack to take) without a trap
 * that would kill the program if gputop were gone. The thread saves every register it has (the
 * volatile ones, the callee-saved ones, then the thread pointer %fs:0: ARCH_PARK_SAVED words
 * with the return address, which stands for the trap's pc), takes a park slot (LR_OFF_PARK),
 * numbers the park in it (the slot's count of parks), writes its tid and where its registers
 * are, and waits on a futex of the slot, a millisecond at a time, while gputop is there
 * (present) and drains (a fresh heartbeat). gputop, at its next look, takes what it wants from
 * the saved registers and the stack without a stop (a call's stack, a sampled launch site), or
 * stops the thread with PTRACE_INTERRUPT (an event stop, which a dead tracer leaves running) to
 * run code in it (a kernel's name asked of the driver); then it answers: the park's number * 2,
 * + 1 for "go on". Only the thread writes the slot's state, so it can always leave: gone, frozen,
 * late, no free slot, or told to go on, rax = 1 (the caller records the launch unnamed);
 * answered as served, rax = 0. Every other register is kept. Without a heartbeat to judge by
 * (no reliable time stamp counter), a park that saw the heartbeat stand still for PARK_MAX_WAITS
 * waits writes it down as stale (LR_OFF_STALE): no park waits again until gputop drains. */
	.set PARK_WAITING, 1
	.set PARK_CLAIMED, 4
	.set PARK_MAX_WAITS, 2000		/* of LR_PARK_WAIT_NS (launchring.h): 0.2 s at least */
	.globl arch_park, arch_park_syscall, arch_park_end
arch_park:
	push %rax
	push %rcx
	push %rdx
	push %rsi
	push %rdi
	push %r8
	push %r9
	push %r10
	push %r11
	push %rbx
	push %rbp
	push %r12
	push %r13
	push %r14
	push %r15
	pushq %fs:0			/* the thread pointer */
	mov 0f(%rip), %r9		/* the ring */
	mov LR_HEARTBEAT(%r9), %rbp	/* the heartbeat as the park found it */
	cmpq $0, LR_FRESH(%r9)
	jne 10f
	cmp LR_STALE(%r9), %rbp
	je 9f				/* no drain since a park gave up: not waited for */
10:	lea LR_OFF_PARK(%r9), %r8
	lea (LR_OFF_PARK + LR_PARK_SLOTS * LR_PARK_SIZE)(%r9), %rsi
1:	xor %eax, %eax
	mov $PARK_CLAIMED, %ecx
	lock cmpxchg %rcx, (%r8)	/* a free slot: ours */
	je 2f
	add $LR_PARK_SIZE, %r8
	cmp %rsi, %r8
	jb 1b
9:	mov $1, %eax			/* none free, or not to wait */
	jmp 8f
2:	mov %rsp, 16(%r8)
	incq 24(%r8)			/* this park's number: an answer names it */
	mov $186, %eax			/* SYS_gettid */
	syscall
	mov %rax, 8(%r8)
	xor %ebx, %ebx			/* waits since the heartbeat last moved */
	movq $PARK_WAITING, (%r8)	/* gputop may serve it from here on */
3:	mov 32(%r8), %rax		/* answered? */
	shr $1, %rax
	cmp 24(%r8), %rax
	je 5f
	cmpq $0, LR_PRESENT(%r9)
	je 4f
	cmpq $0, LR_FRESH(%r9)
	je 6f
	rdtsc
	shl $32, %rdx
	or %rdx, %rax
	sub LR_HEARTBEAT(%r9), %rax
	cmp LR_FRESH(%r9), %rax
	jae 4f				/* no drain lately: frozen, starved or gone */
	jmp 7f
6:	mov LR_HEARTBEAT(%r9), %rax
	cmp %rax, %rbp
	je 11f
	mov %rax, %rbp			/* gputop drained meanwhile: it is there */
	xor %ebx, %ebx
11:	inc %rbx
	cmp $PARK_MAX_WAITS, %rbx
	jbe 7f
	mov %rbp, LR_STALE(%r9)
	jmp 4f
7:	mov %r8, %rdi			/* futex(&state, FUTEX_WAIT_PRIVATE, PARK_WAITING, &wait) */
	mov $128, %esi
	mov $PARK_WAITING, %edx
	lea LR_OFF_PARK_WAIT(%r9), %r10
	mov $202, %eax			/* SYS_futex */
arch_park_syscall:
	syscall
	jmp 3b
4:	mov 32(%r8), %rax		/* an answer that came meanwhile still counts */
	shr $1, %rax
	cmp 24(%r8), %rax
	je 5f
	movq $0, (%r8)			/* free again: a later answer names this park, no other */
	mov $1, %eax
	jmp 8f
5:	mov 32(%r8), %rax
	and $1, %eax			/* served: 0; go on: 1 */
	movq $0, (%r8)			/* free again */
8:	lea 8(%rsp), %rsp		/* the thread pointer */
	pop %r15
	pop %r14
	pop %r13
	pop %r12
	pop %rbp
	pop %rbx
	pop %r11
	pop %r10
	pop %r9
	pop %r8
	pop %rdi
	pop %rsi
	pop %rdx
	pop %rcx
	lea 8(%rsp), %rsp		/* rax: the answer */
	ret
arch_park_end:

/* The tallies' code: arch/tally.c, built into tally.bin (the Makefile), tally_entry first. */
	.p2align 4
arch_tally:
	.incbin "tally.bin"

	.p2align 3
0:
arch_launch_stub_ring:
	.quad 0				/* the ring's address, patched in */
arch_launch_stub_end:
	.section .note.GNU-stack,"",@progbits
