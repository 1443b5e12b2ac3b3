/* x86_64.c — the x86-64 side of arch.h: SysV argument registers, int3, the syscall gadget,
 * and out-of-line copies of displaced instructions, decoded and relocated with capstone.
 * What it cannot relocate safely it refuses, with the reason, instead of guessing. */
#include "arch.h"
#include "stub_layout.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <linux/audit.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>

const uint8_t arch_breakpoint[] = { 0xcc };
const size_t arch_breakpoint_len = 1;
const uint8_t arch_syscall_gadget[] = { 0x0f, 0x05, 0xcc };	/* syscall; int3 */
const size_t arch_syscall_gadget_len = 3;

static csh capstone;

int arch_init(void)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &capstone) != CS_ERR_OK)
		return -EINVAL;
	cs_option(capstone, CS_OPT_DETAIL, CS_OPT_ON);
	return 0;
}

void arch_fini(void)
{
	if (capstone)
		cs_close(&capstone);
}

uint64_t arch_breakpoint_addr(const arch_regs_t *r)
{
	return r->rip - 1;	/* int3 is a trap: rip points past it */
}

int arch_get_regs(pid_t tid, arch_regs_t *r)
{
	return ptrace(PTRACE_GETREGS, tid, 0, r) < 0 ? -errno : 0;
}

int arch_set_regs(pid_t tid, const arch_regs_t *r)
{
	return ptrace(PTRACE_SETREGS, tid, 0, r) < 0 ? -errno : 0;
}

uint64_t arch_pc(const arch_regs_t *r)
{
	return r->rip;
}

void arch_set_pc(arch_regs_t *r, uint64_t pc)
{
	r->rip = pc;
}

uint64_t arch_thread_pointer(const arch_regs_t *r)
{
	return r->fs_base;
}

/* The x86-64 psABI's DWARF numbers: rax rdx rcx rbx rsi rdi rbp rsp r8..r15, then rip. */
void arch_dwarf_regs(const arch_regs_t *r, uint64_t out[ARCH_DWARF_REGS])
{
	const uint64_t regs[ARCH_DWARF_REGS] = {
		r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp,
		r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->rip,
	};
	memcpy(out, regs, sizeof regs);
}

uint64_t arch_sp(const arch_regs_t *r)
{
	return r->rsp;
}

int arch_arg(const arch_regs_t *r, int n, uint64_t *value, uint64_t *stack_addr)
{
	switch (n) {
	case 1: *value = r->rdi; return 1;
	case 2: *value = r->rsi; return 1;
	case 3: *value = r->rdx; return 1;
	case 4: *value = r->rcx; return 1;
	case 5: *value = r->r8; return 1;
	case 6: *value = r->r9; return 1;
	}
	*stack_addr = r->rsp + 8 + 8 * (uint64_t)(n - 7);	/* past the return address */
	return 0;
}

uint64_t arch_retval(const arch_regs_t *r)
{
	return r->rax;
}

uint64_t arch_return_slot(const arch_regs_t *r)
{
	return r->rsp;
}

uint64_t arch_sp_after_return(uint64_t entry_sp)
{
	return entry_sp + 8;
}

void arch_rt_launch_dims(const uint64_t *a, uint32_t grid[3], uint32_t block[3])
{
	/* A 12-byte dim3 by value travels in two integer slots (registers): x | y << 32, then z. */
	grid[0] = (uint32_t)a[2];
	grid[1] = (uint32_t)(a[2] >> 32);
	grid[2] = (uint32_t)a[3];
	block[0] = (uint32_t)a[4];
	block[1] = (uint32_t)(a[4] >> 32);
	block[2] = (uint32_t)a[5];
}

void arch_prepare_syscall(arch_regs_t *r, uint64_t gadget_addr, long nr, const uint64_t args[6])
{
	r->rax = (uint64_t)nr;
	r->orig_rax = (uint64_t)-1;	/* no restart of whatever syscall the thread was in */
	r->rdi = args[0];
	r->rsi = args[1];
	r->rdx = args[2];
	r->r10 = args[3];
	r->r8 = args[4];
	r->r9 = args[5];
	r->rip = gadget_addr;
}

const uint32_t arch_seccomp_arch = AUDIT_ARCH_X86_64;

uint64_t arch_syscall_ip(uint64_t gadget_addr)
{
	return gadget_addr + 2;	/* after the 2-byte syscall instruction */
}

/* Save area order: rax rdi rsi rdx r10 r8 r9 rcx r11 rip. `mov reg, [rip + disp32]` for each
 * (REX.W 8B, ModRM mod=00 rm=101), then `jmp [rip + disp32]`: no flag changes, no stack use. */
static const uint8_t resume_load[9][3] = {
	{ 0x48, 0x8b, 0x05 }, { 0x48, 0x8b, 0x3d }, { 0x48, 0x8b, 0x35 }, { 0x48, 0x8b, 0x15 },
	{ 0x4c, 0x8b, 0x15 }, { 0x4c, 0x8b, 0x05 }, { 0x4c, 0x8b, 0x0d }, { 0x48, 0x8b, 0x0d },
	{ 0x4c, 0x8b, 0x1d },
};

size_t arch_syscall_resume_code(uint8_t *buf, size_t room, uint64_t code_at, uint64_t save_at)
{
	size_t n = 2 + 9 * 7 + 6;
	if (room < n)
		return 0;
	buf[0] = 0x0f, buf[1] = 0x05;	/* syscall */
	size_t at = 2;
	for (int i = 0; i <= 9; i++) {
		size_t len = i < 9 ? 7 : 6;
		if (i < 9)
			memcpy(buf + at, resume_load[i], 3);
		else
			buf[at] = 0xff, buf[at + 1] = 0x25;	/* jmp [rip + disp32] */
		size_t disp_at = at + (i < 9 ? 3 : 2);
		int32_t disp = (int32_t)((int64_t)(save_at + 8u * (unsigned)i) - (int64_t)(code_at + at + len));
		memcpy(buf + disp_at, &disp, 4);
		at += len;
	}
	return n;
}

size_t arch_call_resume_code(uint8_t *buf, size_t room, uint64_t code_at, long nr, uint64_t sp_at,
			     uint64_t resume_at)
{
	static const uint8_t code[20] = {
		0x48, 0x89, 0xc7,		/* mov %rax, %rdi */
		0xb8, 0, 0, 0, 0,		/* mov $nr, %eax */
		0x48, 0x8b, 0x25, 0, 0, 0, 0,	/* mov sp_at(%rip), %rsp */
		0xe9, 0, 0, 0, 0,		/* jmp resume_at */
	};
	if (room < sizeof code)
		return 0;
	memcpy(buf, code, sizeof code);
	int32_t n32 = (int32_t)nr;
	int32_t sp_disp = (int32_t)((int64_t)sp_at - (int64_t)(code_at + 15));
	int32_t jmp_disp = (int32_t)((int64_t)resume_at - (int64_t)(code_at + 20));
	memcpy(buf + 4, &n32, 4);
	memcpy(buf + 11, &sp_disp, 4);
	memcpy(buf + 16, &jmp_disp, 4);
	return sizeof code;
}

size_t arch_return_lookup_code(uint8_t *buf, size_t room, uint64_t code_at, uint64_t table_at,
			       uint32_t entries)
{
	static const uint8_t code[37] = {
		0x48, 0x8d, 0x4c, 0x24, 0xf8,	/* lea -8(%rsp), %rcx: the slot the ret popped */
		0x4c, 0x8d, 0x1d, 0, 0, 0, 0,	/* lea table(%rip), %r11 */
		0x41, 0xba, 0, 0, 0, 0,		/* mov $entries, %r10d */
		0x49, 0x39, 0x0b,		/* 1: cmp %rcx, (%r11) */
		0x74, 0x0a,			/* je 2f */
		0x49, 0x83, 0xc3, 0x10,		/* add $16, %r11 */
		0x41, 0xff, 0xca,		/* dec %r10d */
		0x75, 0xf2,			/* jnz 1b */
		0xcc,				/* int3: no entry */
		0x41, 0xff, 0x63, 0x08,		/* 2: jmp *8(%r11) */
	};
	if (room < sizeof code || !entries)
		return 0;
	memcpy(buf, code, sizeof code);
	int32_t disp = (int32_t)((int64_t)table_at - (int64_t)(code_at + 12));
	memcpy(buf + 8, &disp, 4);
	memcpy(buf + 14, &entries, 4);
	return sizeof code;
}

uint64_t arch_call_resume_retval(const arch_regs_t *r)
{
	return r->rdi;
}

void arch_restart_in_user(arch_regs_t *r)
{
	long ret = (long)r->rax;
	if ((long)r->orig_rax >= 0 && (ret == -512 || ret == -513 || ret == -514 || ret == -516)) {
		r->rax = ret == -516 ? 219 /* restart_syscall */ : r->orig_rax;
		r->rip -= 2;
	}
	r->orig_rax = (uint64_t)-1;
}

void arch_syscall_resume_save(const arch_regs_t *r, uint64_t save[ARCH_SYSCALL_SAVE_WORDS])
{
	/* Stopped inside a system call that is to restart (no signal handler runs here): back to
	 * its syscall instruction with its number, as the kernel's own return would do. */
	arch_regs_t u = *r;
	arch_restart_in_user(&u);
	const uint64_t v[ARCH_SYSCALL_SAVE_WORDS] = { u.rax, u.rdi, u.rsi, u.rdx, u.r10, u.r8,
						      u.r9, u.rcx, u.r11, u.rip };
	memcpy(save, v, sizeof v);
}

void arch_prepare_call(arch_regs_t *r, uint64_t func, uint64_t sp, const uint64_t args[6])
{
	r->rdi = args[0];
	r->rsi = args[1];
	r->rdx = args[2];
	r->rcx = args[3];
	r->r8 = args[4];
	r->r9 = args[5];
	r->rax = 0;	/* no vector registers used, for variadic callees */
	r->rsp = sp;
	r->rip = func;
	r->orig_rax = (uint64_t)-1;
}

void arch_set_scratch(arch_regs_t *r, uint64_t value)
{
	r->r11 = value;	/* caller-saved and no argument: dead at a function's entry */
}

uint64_t arch_scratch(const arch_regs_t *r)
{
	return r->r11;
}

uint64_t arch_call_trap_record(const arch_regs_t *r)
{
	return r->rcx;
}

void arch_launch_trap_entry(const arch_regs_t *r, const uint64_t saved[ARCH_LAUNCH_TRAP_SAVED],
			    arch_regs_t *entry)
{
	/* x86_64_launch.S pushes rax, rdx, rcx: rcx is at [sp]. */
	*entry = *r;
	entry->rcx = saved[0];
	entry->rdx = saved[1];
	entry->rax = saved[2];
	entry->rsp = r->rsp + LR_TRAP_SP_OFFSET;
}

void arch_park_regs(const uint64_t saved[ARCH_PARK_SAVED], uint64_t sp, arch_regs_t *at)
{
	/* x86_64_launch.S's arch_park pushes rax, rcx, rdx, rsi, rdi, r8-r11, rbx, rbp, r12-r15 and
	 * %fs:0 (the thread pointer: glibc's TCB points to itself) below the return address of its
	 * call (a 5-byte call rel32). */
	memset(at, 0, sizeof *at);
	at->fs_base = saved[0];
	at->r15 = saved[1];
	at->r14 = saved[2];
	at->r13 = saved[3];
	at->r12 = saved[4];
	at->rbp = saved[5];
	at->rbx = saved[6];
	at->r11 = saved[7];
	at->r10 = saved[8];
	at->r9 = saved[9];
	at->r8 = saved[10];
	at->rdi = saved[11];
	at->rsi = saved[12];
	at->rdx = saved[13];
	at->rcx = saved[14];
	at->rax = saved[15];
	at->rip = saved[16] - 5 + 1;
	at->rsp = sp + 8 * ARCH_PARK_SAVED;
	at->orig_rax = (uint64_t)-1;
}

void arch_cancel_syscall(arch_regs_t *r)
{
	r->orig_rax = (uint64_t)-1;
	r->rax = (uint64_t)-4;	/* -EINTR */
}

void arch_fill_breakpoints(uint8_t *buf, size_t n)
{
	memset(buf, 0xcc, n);
}

const uint8_t arch_return_insn[] = { 0xc3 };
const size_t arch_return_insn_len = sizeof arch_return_insn;

void arch_prepare_return(arch_regs_t *r, uint64_t pc, uint64_t sp)
{
	r->rsp = sp;
	r->orig_rax = (uint64_t)-1;
	r->rip = pc;
}

uint64_t arch_timestamp(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

bool arch_timestamp_reliable(void)
{
	/* constant_tsc: the same rate at any frequency; nonstop_tsc: it runs in deep idle too.
	 * Linux keeps the counters of all CPUs in step when it trusts them this way. */
	char line[4096];
	bool constant = false, nonstop = false;
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof line, f) && !(constant && nonstop))
		if (strncmp(line, "flags", 5) == 0) {
			constant = strstr(line, " constant_tsc") != NULL;
			nonstop = strstr(line, " nonstop_tsc") != NULL;
			break;
		}
	fclose(f);
	return constant && nonstop;
}

long arch_syscall_result(const arch_regs_t *r)
{
	return (long)r->rax;
}

static bool insn_in_group(const cs_insn *insn, uint8_t group)
{
	const cs_detail *d = insn->detail;
	for (int i = 0; i < d->groups_count; i++)
		if (d->groups[i] == group)
			return true;
	return false;
}

static bool insn_is_control_flow(const cs_insn *insn)
{
	return insn_in_group(insn, CS_GRP_JUMP) || insn_in_group(insn, CS_GRP_CALL) ||
	       insn_in_group(insn, CS_GRP_RET) || insn_in_group(insn, CS_GRP_INT) ||
	       insn_in_group(insn, CS_GRP_IRET) || insn_in_group(insn, CS_GRP_BRANCH_RELATIVE);
}

/* Copies one instruction into out, fixing a rip-relative displacement for its new address.
 * Returns 0, or -1 with *why set when it cannot move. */
static int relocate_one(const cs_insn *insn, uint64_t new_addr, uint8_t *out, const char **why)
{
	const cs_x86 *x = &insn->detail->x86;
	memcpy(out, insn->bytes, insn->size);
	if (insn->id == X86_INS_INT3 || insn->id == X86_INS_INT || insn->id == X86_INS_INT1) {
		*why = "an interrupt instruction (another breakpoint?) at the entry";
		return -1;
	}
	/* A call run from the slot would leave a return address into the slot on the stack,
	 * which must not outlive the slot; a relative branch would need rewriting. */
	if (insn_in_group(insn, CS_GRP_BRANCH_RELATIVE) || insn_in_group(insn, CS_GRP_CALL)) {
		*why = "a relative branch or a call at the entry";
		return -1;
	}
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP)
			continue;
		if (x->encoding.disp_offset == 0 || x->encoding.disp_size != 4) {
			*why = "a rip-relative operand of unexpected encoding";
			return -1;
		}
		int64_t target = (int64_t)insn->address + insn->size + op->mem.disp;
		int64_t disp = target - (int64_t)(new_addr + insn->size);
		if (disp < INT32_MIN || disp > INT32_MAX) {
			*why = "a rip-relative operand out of reach of the trampoline page";
			return -1;
		}
		int32_t d32 = (int32_t)disp;
		memcpy(out + x->encoding.disp_offset, &d32, 4);
	}
	return 0;
}

/* The displaced instructions (at least min_bytes of them where they can move) and the jump
 * back, for a slot at slot_addr with room bytes. */
static int build_displaced(const uint8_t *code, size_t code_len, uint64_t orig_addr, uint64_t slot_addr,
			   uint8_t *buf, size_t room, size_t min_bytes, size_t *slot_len, const char **why,
			   bool *ends_in_jump_out)
{
	const size_t jump_len = 14;
	size_t displaced = 0;
	bool ends_in_jump = false;
	cs_insn *insn = cs_malloc(capstone);
	const uint8_t *p = code;
	size_t left = code_len;
	uint64_t addr = orig_addr;

	*why = NULL;
	while (displaced < min_bytes) {
		if (!cs_disasm_iter(capstone, &p, &left, &addr, insn)) {
			if (displaced == 0)
				*why = "an instruction capstone cannot decode at the entry";
			break;
		}
		if (displaced + insn->size + jump_len > room)
			break;
		const char *reason = NULL;
		if (relocate_one(insn, slot_addr + displaced, buf + displaced, &reason) < 0) {
			if (displaced == 0)
				*why = reason;
			break;	/* stop before what cannot move; what came before is enough */
		}
		displaced += insn->size;
		if (insn_is_control_flow(insn)) {
			ends_in_jump = true;	/* nothing after a ret or jmp belongs to this path */
			break;
		}
	}
	cs_free(insn, 1);
	if (displaced == 0)
		return -1;

	/* jmp *0(%rip); .quad orig_addr + displaced — reaches anywhere. */
	uint64_t back = orig_addr + displaced;
	static const uint8_t jmp_abs[6] = { 0xff, 0x25, 0, 0, 0, 0 };
	memcpy(buf + displaced, jmp_abs, sizeof jmp_abs);
	memcpy(buf + displaced + 6, &back, 8);
	*slot_len = displaced + jump_len;
	*ends_in_jump_out = ends_in_jump;
	return (int)displaced;
}

int arch_xol_build(const uint8_t *code, size_t code_len, uint64_t orig_addr, uint64_t slot_addr,
		   uint8_t *buf, size_t *slot_len, const char **why, bool *resume_ambiguous)
{
	/* Displace at least two bytes where the entry allows it: a thread coming back from the
	 * slot then never lands right after the breakpoint, so every stop there is a hit. */
	bool ends_in_jump;
	int displaced = build_displaced(code, code_len, orig_addr, slot_addr, buf, ARCH_XOL_SLOT, 2,
					slot_len, why, &ends_in_jump);
	if (displaced > 0)
		*resume_ambiguous = displaced < 2 && !ends_in_jump;
	return displaced;
}

/* ---- jump probes -------------------------------------------------------------------------- */

static void put_rel32(uint8_t *at, uint64_t from_next, uint64_t to)
{
	int32_t rel = (int32_t)(int64_t)(to - from_next);
	memcpy(at, &rel, 4);
}

static bool reaches(uint64_t from_next, uint64_t to)
{
	int64_t d = (int64_t)(to - from_next);
	return d >= INT32_MIN && d <= INT32_MAX;
}

int arch_jump_slot_build(const uint8_t *code, size_t code_len, uint64_t orig_addr, uint64_t slot_addr,
			 uint32_t probe, uint64_t stub, uint8_t *buf, size_t *slot_len, const char **why)
{
	/* mov $probe, %r11d ; call stub */
	buf[0] = 0x41, buf[1] = 0xbb;
	memcpy(buf + 2, &probe, 4);
	buf[6] = 0xe8;
	if (!reaches(slot_addr + 11, stub) || !reaches(orig_addr + ARCH_JUMP_LEN, slot_addr)) {
		*why = "the slot is out of a jump's reach";
		return -1;
	}
	put_rel32(buf + 7, slot_addr + 11, stub);
	bool ends_in_jump;
	size_t len;
	int displaced = build_displaced(code, code_len, orig_addr, slot_addr + ARCH_JUMP_PREFIX,
					buf + ARCH_JUMP_PREFIX, ARCH_XOL_SLOT - ARCH_JUMP_PREFIX,
					ARCH_JUMP_LEN, &len, why, &ends_in_jump);
	if (displaced < 0)
		return -1;
	if ((size_t)displaced < ARCH_JUMP_LEN || ends_in_jump) {
		*why = "fewer than 5 bytes of movable instructions at the entry";
		return -1;
	}
	*slot_len = ARCH_JUMP_PREFIX + len;
	return displaced;
}

void arch_jump_encode(uint8_t out[ARCH_JUMP_LEN], uint64_t from, uint64_t to)
{
	out[0] = 0xe9;	/* jmp rel32 */
	put_rel32(out + 1, from + ARCH_JUMP_LEN, to);
}

uint64_t arch_jump_target(const uint8_t *entry, uint64_t addr)
{
	return entry[0] == 0xe9 ? addr + ARCH_JUMP_LEN + (uint64_t)(int64_t)(int32_t)(entry[1] | entry[2] << 8 |
								       entry[3] << 16 | (uint32_t)entry[4] << 24)
				: 0;
}

int arch_jump_leftover(const uint8_t *slot, size_t n, uint64_t slot_addr, uint64_t addr,
		       uint8_t orig[ARCH_JUMP_LEN])
{
	/* mov $probe, %r11d; call rel32; the displaced instructions; jmp *0(%rip); .quad back */
	static const uint8_t jmp_abs[6] = { 0xff, 0x25, 0, 0, 0, 0 };
	if (n < ARCH_XOL_SLOT || slot[0] != 0x41 || slot[1] != 0xbb || slot[6] != 0xe8)
		return -1;
	size_t at = ARCH_JUMP_PREFIX;
	while (at + 14 <= n && memcmp(slot + at, jmp_abs, sizeof jmp_abs) != 0)
		at++;
	if (at + 14 > n)
		return -1;
	uint64_t back;
	memcpy(&back, slot + at + 6, 8);
	size_t displaced = at - ARCH_JUMP_PREFIX;
	if (back != addr + displaced || displaced < ARCH_JUMP_LEN)
		return -1;
	/* Moving the instructions back undoes their relocation (rip-relative operands). */
	uint8_t buf[ARCH_XOL_SLOT];
	size_t len;
	const char *why;
	bool ends_in_jump;
	int d = build_displaced(slot + ARCH_JUMP_PREFIX, displaced, slot_addr + ARCH_JUMP_PREFIX, addr, buf,
				sizeof buf, displaced, &len, &why, &ends_in_jump);
	if (d != (int)displaced)
		return -1;
	memcpy(orig, buf, ARCH_JUMP_LEN);
	return 0;
}

bool arch_branches_into(const uint8_t *code, size_t len, uint64_t addr, uint64_t lo, uint64_t hi)
{
	cs_insn *insn = cs_malloc(capstone);
	const uint8_t *p = code;
	size_t left = len;
	uint64_t at = addr;
	bool found = false;
	while (left && !found) {
		if (!cs_disasm_iter(capstone, &p, &left, &at, insn)) {
			found = true;	/* undecodable: cannot tell, so assume the worst */
			break;
		}
		if (!insn_in_group(insn, CS_GRP_BRANCH_RELATIVE) && !insn_in_group(insn, CS_GRP_JUMP) &&
		    !insn_in_group(insn, CS_GRP_CALL))
			continue;
		const cs_x86 *x = &insn->detail->x86;
		for (int i = 0; i < x->op_count; i++)
			if (x->operands[i].type == X86_OP_IMM) {
				uint64_t target = (uint64_t)x->operands[i].imm;
				if (target > lo && target < hi)
					found = true;
			}
	}
	cs_free(insn, 1);
	return found;
}

uint64_t arch_xol_unwind_pc(uint64_t pc, uint64_t slot_addr, uint64_t orig_addr, int displaced,
			    size_t jump_offset)
{
	/* Relocation keeps every instruction's length, so offsets in the slot are offsets in
	 * the original code, up to the jump back. */
	if (pc >= slot_addr + jump_offset)
		return orig_addr + (uint64_t)displaced;
	return orig_addr + (pc - slot_addr);
}
