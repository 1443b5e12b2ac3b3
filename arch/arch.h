/* arch.h — everything that depends on the instruction set, behind one interface: registers,
 * argument and return slots, the breakpoint instruction, injected system calls, and the
 * relocation of displaced instructions (with capstone). arch/x86_64.c implements it now; an
 * aarch64 port adds arch/aarch64.c and touches nothing in src/. */
#ifndef GPUTOP_ARCH_H
#define GPUTOP_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#if defined(__x86_64__)
#include <sys/user.h>
typedef struct user_regs_struct arch_regs_t;
#else
#error "gputop supports x86-64 only for now (arch/aarch64.c is the place for Grace Hopper)"
#endif

/* The breakpoint instruction and where the pc is after it trapped. */
extern const uint8_t arch_breakpoint[];
extern const size_t arch_breakpoint_len;
uint64_t arch_breakpoint_addr(const arch_regs_t *r);	/* address of the trapping breakpoint */
/* Fills buf with breakpoints (padding: a stray jump there traps). */
void arch_fill_breakpoints(uint8_t *buf, size_t n);
/* A bare return instruction, for the calibration of a stop's cost. */
extern const uint8_t arch_return_insn[];
extern const size_t arch_return_insn_len;
/* Sets r to run the return instruction at pc with its return address at sp (no system call
 * restarts on the way). */
void arch_prepare_return(arch_regs_t *r, uint64_t pc, uint64_t sp);

int arch_get_regs(pid_t tid, arch_regs_t *r);
int arch_set_regs(pid_t tid, const arch_regs_t *r);
uint64_t arch_pc(const arch_regs_t *r);
void arch_set_pc(arch_regs_t *r, uint64_t pc);
uint64_t arch_sp(const arch_regs_t *r);

/* Arguments at function entry. Integer/pointer argument n (1-based): if it lives in a register,
 * *value is set and 1 returned; if on the stack, *stack_addr is set and 0 returned. */
int arch_arg(const arch_regs_t *r, int n, uint64_t *value, uint64_t *stack_addr);
uint64_t arch_retval(const arch_regs_t *r);

/* Return address at function entry: x86-64 keeps it at [sp]; returns the address of the slot
 * (0 if it is kept in a register, as on aarch64, where arch_return_reg would be used). */
uint64_t arch_return_slot(const arch_regs_t *r);
/* The sp a function returns with, given the sp at its entry (x86-64: sp + 8 after ret). */
uint64_t arch_sp_after_return(uint64_t entry_sp);

/* dim3-by-value arguments of cudaLaunchKernel(func, grid, block, ...): grid and block from its
 * integer argument slots a[1..] (as arch_arg reads them; a call record holds the same words).
 * ARCH_RT_LAUNCH_SLOTS: the highest slot they use. */
#define ARCH_RT_LAUNCH_SLOTS 5
void arch_rt_launch_dims(const uint64_t *a, uint32_t grid[3], uint32_t block[3]);

/* Injected system calls: a stopped thread runs `syscall` at gadget_addr, then traps. */
extern const uint8_t arch_syscall_gadget[];	/* syscall instruction followed by a breakpoint */
extern const size_t arch_syscall_gadget_len;
void arch_prepare_syscall(arch_regs_t *r, uint64_t gadget_addr, long nr, const uint64_t args[6]);
long arch_syscall_result(const arch_regs_t *r);
/* What a seccomp filter sees of such a call: its architecture (seccomp_data.arch, an
 * AUDIT_ARCH_* value) and the instruction pointer, which is past the syscall instruction. */
extern const uint32_t arch_seccomp_arch;
uint64_t arch_syscall_ip(uint64_t gadget_addr);
/* A gadget that needs nobody after its system call: `syscall`, then every register the
 * injection or the instruction changed loaded back from a save area, and a jump to where the
 * thread was. gputop stops the thread at the system call's exit (PTRACE_SYSCALL) and never lets
 * it run that tail; a thread whose tracer died meanwhile runs it and goes on as if nothing had
 * happened. arch_syscall_resume_code writes it (code_at: where it will be; save_at: the save
 * area, ARCH_SYSCALL_SAVE_WORDS words) into buf and returns its length (0: no room);
 * arch_syscall_resume_save fills the save area from the registers the thread had, a system
 * call it was interrupted in set to restart as the kernel would have restarted it. */
#define ARCH_SYSCALL_SAVE_WORDS 10
size_t arch_syscall_resume_code(uint8_t *buf, size_t room, uint64_t code_at, uint64_t save_at);
void arch_syscall_resume_save(const arch_regs_t *saved, uint64_t save[ARCH_SYSCALL_SAVE_WORDS]);
/* A thread's registers, taken where it was inside a system call to restart, made to restart it
 * from user space (back to its syscall instruction, its number loaded, nothing left for the
 * kernel to restart): for registers put back at a system call stop of an injected call, where
 * the kernel does not restart the thread's own call (it returned -ERESTARTSYS to glibc, which
 * aborted: "The futex facility returned an unexpected error code"). */
void arch_restart_in_user(arch_regs_t *r);

/* Where a function the tracer calls in a thread returns to, so that the thread needs nobody
 * after it: the return value moved aside (arch_call_resume_retval reads it at the stop), the
 * stack pointer loaded from sp_at, system call nr made from the resuming gadget at resume_at
 * (above), which loads back the rest. gputop stops the thread at that system call's exit and
 * puts every register back itself; a thread whose tracer died during the call goes back where it
 * was. Written into buf (code_at: where it will be); its length, 0 if no room. */
size_t arch_call_resume_code(uint8_t *buf, size_t room, uint64_t code_at, long nr, uint64_t sp_at,
			     uint64_t resume_at);
uint64_t arch_call_resume_retval(const arch_regs_t *r);
/* Where the return trampoline jumps once gputop is gone (rescue.c): the returning thread looks
 * its own return address up by the stack slot it just popped, in a table of `entries` pairs
 * (slot, return address) at table_at, and jumps there; an int3 if none. It keeps rax and rdx
 * (return values) and uses registers a return leaves dead. Written into buf; its length, 0 if
 * no room. */
#define ARCH_NOP 0x90	/* a one-byte no-op (over the trampoline's int3, rescue.c) */
size_t arch_return_lookup_code(uint8_t *buf, size_t room, uint64_t code_at, uint64_t table_at,
			       uint32_t entries);

/* A function call made by the tracer: pc = func, sp = sp (the return address is already at
 * [sp]), integer arguments in their registers; no system call restarts. */
void arch_prepare_call(arch_regs_t *r, uint64_t func, uint64_t sp, const uint64_t args[6]);

/* Execution out of line. arch_xol_build relocates the instruction(s) at orig_addr (code holds
 * at least 32 bytes read from there) into a slot at slot_addr (buf, ARCH_XOL_SLOT bytes): the
 * displaced copy followed by a jump back. It displaces at least min_bytes when it safely can.
 * Returns the number of bytes displaced (>= 1), or -1 with *why set if it cannot be done safely.
 * *resume_ambiguous is set when a thread leaving the slot lands at orig_addr + breakpoint
 * length (indistinguishable from a fresh hit without asking for the signal's origin). */
#define ARCH_XOL_SLOT 64
int arch_xol_build(const uint8_t *code, size_t code_len, uint64_t orig_addr, uint64_t slot_addr,
		   uint8_t *buf, size_t *slot_len, const char **why, bool *resume_ambiguous);

/* Jump probes: the entry's first ARCH_JUMP_LEN bytes become a jump to the slot, which runs
 * `mov $probe, %r11d; call stub` (ARCH_JUMP_PREFIX bytes), then the displaced instructions and
 * a jump back. arch_jump_slot_build builds that slot; it returns the bytes displaced (at least
 * ARCH_JUMP_LEN), or -1 with *why set (too few movable bytes, or out of reach). */
#define ARCH_JUMP_LEN 5
#define ARCH_JUMP_PREFIX 11
int arch_jump_slot_build(const uint8_t *code, size_t code_len, uint64_t orig_addr, uint64_t slot_addr,
			 uint32_t probe, uint64_t stub, uint8_t *buf, size_t *slot_len, const char **why);
void arch_jump_encode(uint8_t out[ARCH_JUMP_LEN], uint64_t from, uint64_t to);
/* Where the jump at entry (code read there) leads, if it is a jump probe's: else 0. */
uint64_t arch_jump_target(const uint8_t *entry, uint64_t addr);
/* A jump probe left by a gputop that died (its page and the slot stay in the program): slot
 * holds n bytes read at slot_addr, where that jump leads. If they are a jump probe's slot for
 * addr, writes the program's original first ARCH_JUMP_LEN bytes to orig (its displaced
 * instructions moved back) and returns 0; else -1. */
int arch_jump_leftover(const uint8_t *slot, size_t n, uint64_t slot_addr, uint64_t addr,
		       uint8_t orig[ARCH_JUMP_LEN]);
/* Whether a direct branch of the function code[0..len) at addr targets (lo, hi): the inside
 * of a range a jump probe overwrites. Undecodable code counts as yes. */
bool arch_branches_into(const uint8_t *code, size_t len, uint64_t addr, uint64_t lo, uint64_t hi);

/* The launch stub (arch/<arch>_launch.S, launchring.c): two variants (launched function in
 * the first argument; in the second, dimensions by pointer in the first), each with a trap
 * for handles the tracer has not seen; the ring's address is patched in at
 * arch_launch_stub_ring. */
extern const uint8_t arch_launch_stub[], arch_launch_stub_ex[], arch_launch_stub_end[], arch_launch_stub_ring[];
extern const uint8_t arch_launch_stub_trap[], arch_launch_stub_trap_ex[];
/* The call stub and its return (same block of code): a driver copy, memset or synchronize
 * recorded in the ring's call records, entry and return, without a stop. */
extern const uint8_t arch_call_stub[], arch_call_ret[];
/* The call stub's trap for a stack (x86_64_launch.S): the thread stands as at the launch stub's
 * trap (arch_launch_trap_entry rebuilds its entry), its call record's address in a register. */
extern const uint8_t arch_call_stub_trap[];
/* The call stub's return parks there at an allocation out of memory (the thread stands as at
 * any park: the call returned, its record given, its result in the saved registers). */
extern const uint8_t arch_call_ret_oom_trap[];
uint64_t arch_call_trap_record(const arch_regs_t *r);
/* The thread pointer a thread's registers hold (what %fs:0 reads on x86-64). */
uint64_t arch_thread_pointer(const arch_regs_t *r);

/* Where a thread whose pc lies in a slot must go when the slot disappears: the displaced
 * instruction(s) not yet run (pc at the slot start) restart at orig_addr; after them, at
 * orig_addr + displaced. */
uint64_t arch_xol_unwind_pc(uint64_t pc, uint64_t slot_addr, uint64_t orig_addr, int displaced,
			    size_t jump_offset);

/* The return stub (arch/<arch>_ret.S): code that a traced call returns to instead of a
 * trapping breakpoint, which records the return in gputop's table and goes on (retfast.c).
 * The table's address is patched in at arch_ret_stub_table; arch_ret_stub_trap is its
 * fallback breakpoint. */
extern const uint8_t arch_ret_stub[], arch_ret_stub_end[], arch_ret_stub_table[], arch_ret_stub_trap[];
/* The stub's block of code runs from arch_ret_stub to arch_ret_stub_end. */
/* arch_entry_stamp (in the same block of code, before arch_ret_stub_end) runs at a recorded
 * call's entry with the record's address in the scratch register (arch_set_scratch). */
extern const uint8_t arch_entry_stamp[];
void arch_set_scratch(arch_regs_t *r, uint64_t value);
uint64_t arch_scratch(const arch_regs_t *r);	/* at the launch stub's trap: the probe's index */
/* At the launch stub's trap (r), the registers the launch function was entered with: the stub
 * saved the first three it uses at [sp] (saved[] read from there, ARCH_LAUNCH_TRAP_SAVED words)
 * and the entry sp is sp + LR_TRAP_SP_OFFSET (stub_layout.h). */
#define ARCH_LAUNCH_TRAP_SAVED 3
void arch_launch_trap_entry(const arch_regs_t *r, const uint64_t saved[ARCH_LAUNCH_TRAP_SAVED],
			    arch_regs_t *entry);
/* The park (x86_64_launch.S, probe/launchpark.c): where a stub holds a thread for gputop.
 * arch_park..arch_park_end is its code; arch_park_syscall its one system call (the futex
 * wait). It saved ARCH_PARK_SAVED words at its sp: every general register and the thread
 * pointer, then its return address. arch_park_regs gives the registers the thread had at the
 * park's call from those words alone (no stop needed), its pc as if an int3 there had trapped
 * (so that the stub's trap addresses name the park's calls). */
extern const uint8_t arch_park[], arch_park_syscall[], arch_park_end[];
#define ARCH_PARK_SAVED 17
#define ARCH_SYSCALL_LEN 2	/* the system call instruction's length */
void arch_park_regs(const uint64_t saved[ARCH_PARK_SAVED], uint64_t sp, arch_regs_t *at);
/* The thread, stopped inside a system call, returns from it with -EINTR (no restart). */
void arch_cancel_syscall(arch_regs_t *r);
/* The registers in DWARF's numbering, from number 0, for libdw's unwinder (base/unwind.c):
 * ARCH_DWARF_REGS of them, the last the return address column (the pc). */
#define ARCH_DWARF_REGS 17
void arch_dwarf_regs(const arch_regs_t *r, uint64_t out[ARCH_DWARF_REGS]);
/* The CPU's time stamp counter, as the stub reads it. */
uint64_t arch_timestamp(void);
/* Whether that counter runs at a constant rate on every CPU (else the stub is not used). */
bool arch_timestamp_reliable(void);

int arch_init(void);
void arch_fini(void);

#endif
