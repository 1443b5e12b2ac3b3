/* test_arch.c — unit test of arch/x86_64.c's jump probes (capstone, no tracee): the slot a
 * jump probe runs (prefix, relocated instructions, jump back), the refusals, and the check for
 * branches into the bytes a jump covers; and the self-resuming syscall gadget, run for real in
 * this process (a getpid, then every register back from the save area and a jump back), with
 * the code a function gputop calls returns to.
 * Prints one "ok"/"not ok" line per check. */
#include "arch.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

static int failures;

static void check(const char *what, bool ok)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	failures += !ok;
}

/* In the gadgets' tests: the registers the save area holds, in its order (rax rdi rsi rdx r10
 * r8 r9 rcx r11), stored to out[0..8]. */
#define STORE_SAVED_REGS                                                                       \
	"mov %%rax, 0(%[out])\n\t"                                                             \
	"mov %%rdi, 8(%[out])\n\t"                                                             \
	"mov %%rsi, 16(%[out])\n\t"                                                            \
	"mov %%rdx, 24(%[out])\n\t"                                                            \
	"mov %%r10, 32(%[out])\n\t"                                                            \
	"mov %%r8, 40(%[out])\n\t"                                                             \
	"mov %%r9, 48(%[out])\n\t"                                                             \
	"mov %%rcx, 56(%[out])\n\t"                                                            \
	"mov %%r11, 64(%[out])\n\t"

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static int32_t i32_at(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* The tail a thread runs when gputop died during an injected call: with the save area holding
 * known values and the address of label 1 as rip, every register must come back. */
static void test_syscall_resume(void)
{
	/* Code in one page (read+execute), its save area in the next (read+write). */
	uint8_t *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		check("pages for the gadget", false);
		return;
	}
	uint64_t *save = (uint64_t *)(page + 4096);
	size_t n = arch_syscall_resume_code(page, 256, (uint64_t)page, (uint64_t)save);
	check("the self-resuming gadget fits", n > 0 && n <= 256);
	check("no room: refused", arch_syscall_resume_code(page, 8, (uint64_t)page, (uint64_t)save) == 0);
	mprotect(page, 4096, PROT_READ | PROT_EXEC);
	for (int i = 0; i < 9; i++)
		save[i] = 0x1111111111111111ull * (uint64_t)(i + 1);
	uint64_t got[9];
	/* rip slot = label 1; rax = getpid's number; to the gadget, which must come back to 1:
	 * with every register as the save area says. */
	__asm__ volatile("lea 1f(%%rip), %%rax\n\t"
			 "mov %%rax, 72(%[save])\n\t"
			 "mov %[nr], %%eax\n\t"
			 "jmp *%[gadget]\n\t"
			 "1:\n\t"
			 STORE_SAVED_REGS
			 :
			 : [nr] "i"(SYS_getpid), [gadget] "r"(page), [out] "r"(got), [save] "r"(save)
			 : "rax", "rdi", "rsi", "rdx", "r10", "r8", "r9", "rcx", "r11", "memory", "cc");
	bool all = true;
	for (int i = 0; i < 9; i++)
		all &= got[i] == 0x1111111111111111ull * (uint64_t)(i + 1);
	check("after its system call the gadget gives every register back and returns", all);
	munmap(page, 8192);

	arch_regs_t r = { 0 };
	uint64_t w[ARCH_SYSCALL_SAVE_WORDS];
	r.rax = (uint64_t)-512, r.orig_rax = 202, r.rip = 0x1000;	/* futex, -ERESTARTSYS */
	arch_syscall_resume_save(&r, w);
	check("a system call to restart: back to its syscall instruction, its number in rax",
	      w[0] == 202 && w[9] == 0x1000 - 2);
	r.rax = (uint64_t)-516;	/* -ERESTART_RESTARTBLOCK */
	arch_syscall_resume_save(&r, w);
	check("ERESTART_RESTARTBLOCK: restart_syscall", w[0] == 219 && w[9] == 0x1000 - 2);
	r.rax = 5, r.orig_rax = (uint64_t)-1;
	arch_syscall_resume_save(&r, w);
	check("no system call: registers as they were", w[0] == 5 && w[9] == 0x1000);
	r.rax = (uint64_t)-512, r.orig_rax = 202, r.rip = 0x1000;
	arch_restart_in_user(&r);
	check("registers put back at a system call stop: the call restarts from user space, nothing "
	      "left for the kernel to restart", r.rax == 202 && r.rip == 0x1000 - 2 && r.orig_rax == (uint64_t)-1);
}

/* Where a function gputop calls in a thread returns to (xol_call): if gputop died meanwhile, the
 * thread must come back with every register and its own stack pointer, which the called
 * function's stack had replaced. */
static void test_call_resume(void)
{
	uint8_t *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		check("pages for the call's return", false);
		return;
	}
	uint64_t *save = (uint64_t *)(page + 4096);
	size_t n = arch_syscall_resume_code(page, 256, (uint64_t)page, (uint64_t)save);
	size_t m = arch_call_resume_code(page + 256, 64, (uint64_t)page + 256, SYS_getpid,
					 (uint64_t)&save[ARCH_SYSCALL_SAVE_WORDS], (uint64_t)page);
	check("the call's return code fits", n > 0 && m > 0 && m <= 64);
	check("no room: refused", arch_call_resume_code(page, 8, (uint64_t)page, SYS_getpid, 0, 0) == 0);
	mprotect(page, 4096, PROT_READ | PROT_EXEC);
	for (int i = 0; i < 9; i++)
		save[i] = 0x0101010101010101ull * (uint64_t)(i + 3);
	uint64_t got[10];
	/* As a called function returns: rax its value, rsp its own stack (64 bytes lower here). */
	__asm__ volatile("lea 1f(%%rip), %%rax\n\t"
			 "mov %%rax, 72(%[save])\n\t"
			 "mov %%rsp, 80(%[save])\n\t"
			 "mov $0x77, %%eax\n\t"
			 "sub $64, %%rsp\n\t"
			 "jmp *%[back]\n\t"
			 "1:\n\t"
			 STORE_SAVED_REGS
			 "mov %%rsp, 72(%[out])\n\t"
			 :
			 : [back] "r"(page + 256), [out] "r"(got), [save] "r"(save)
			 : "rax", "rdi", "rsi", "rdx", "r10", "r8", "r9", "rcx", "r11", "memory", "cc");
	bool all = true;
	for (int i = 0; i < 9; i++)
		all &= got[i] == 0x0101010101010101ull * (uint64_t)(i + 3);
	check("after the call the thread has every register back and returns", all);
	check("and its own stack pointer", got[9] == save[ARCH_SYSCALL_SAVE_WORDS]);
	munmap(page, 8192);
	arch_regs_t r = { 0 };
	r.rdi = 0x77;
	check("the return value is read where the code moved it", arch_call_resume_retval(&r) == 0x77);
}

/* The return lookup (rescue.c, once gputop is gone): a thread returning into the trampoline
 * finds its return address by the stack slot it just popped, with rax and rdx kept. */
static void test_return_lookup(void)
{
	uint8_t *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		check("pages for the return lookup", false);
		return;
	}
	uint64_t *table = (uint64_t *)(page + 4096);
	size_t n = arch_return_lookup_code(page, 64, (uint64_t)page, (uint64_t)table, 8);
	check("the return lookup fits", n > 0 && n <= 64);
	mprotect(page, 4096, PROT_READ | PROT_EXEC);
	uint64_t got[3];
	/* A stale entry first (another slot), then this return's: slot = the word the ret popped. */
	table[0] = 0x1234, table[1] = 0;
	__asm__ volatile("lea 1f(%%rip), %%rax\n\t"
			 "mov %%rax, 24(%[table])\n\t"
			 "lea -8(%%rsp), %%rax\n\t"
			 "mov %%rax, 16(%[table])\n\t"
			 "mov $0x5a, %%eax\n\t"
			 "mov $0x6b, %%edx\n\t"
			 "jmp *%[lookup]\n\t"
			 "1:\n\t"
			 "mov %%rax, 0(%[out])\n\t"
			 "mov %%rdx, 8(%[out])\n\t"
			 "mov %%rsp, 16(%[out])\n\t"
			 :
			 : [lookup] "r"(page), [table] "r"(table), [out] "r"(got)
			 : "rax", "rdx", "rcx", "r10", "r11", "memory", "cc");
	uint64_t sp;
	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	check("the returning thread goes to its own return address, rax and rdx kept, its stack as after "
	      "the ret", got[0] == 0x5a && got[1] == 0x6b && got[2] == sp);
	munmap(page, 8192);
}

int main(void)
{
	test_syscall_resume();
	test_call_resume();
	test_return_lookup();
	if (arch_init() < 0) {
		printf("not ok - capstone opens\n");
		return 1;
	}
	const uint64_t fn = 0x7f0000001000, slot = 0x7f0000100400, stub = 0x7f0000100200;
	uint8_t buf[ARCH_XOL_SLOT];
	size_t len = 0;
	const char *why = NULL;

	/* endbr64; push %rbp; mov %rsp,%rbp; ...: 5 bytes move (endbr64 + push). */
	const uint8_t entry[32] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0x90, 0x90, 0x90, 0x90,
				    0x90, 0x90, 0x90, 0x90 };
	int d = arch_jump_slot_build(entry, sizeof entry, fn, slot, 7, stub, buf, &len, &why);
	check("endbr64 + push %rbp: 5 bytes displaced", d == 5);
	check("prefix: mov $7, %r11d", buf[0] == 0x41 && buf[1] == 0xbb && i32_at(buf + 2) == 7);
	check("prefix: call rel32 to the stub",
	      buf[6] == 0xe8 && slot + 11 + (uint64_t)(int64_t)i32_at(buf + 7) == stub);
	check("the displaced bytes, unchanged", memcmp(buf + ARCH_JUMP_PREFIX, entry, 5) == 0);
	check("then jmp *0(%rip) back to the entry + 5",
	      buf[16] == 0xff && buf[17] == 0x25 && i32_at(buf + 18) == 0 && u64_at(buf + 22) == fn + 5);
	check("slot length: prefix + 5 + 14", len == ARCH_JUMP_PREFIX + 5 + 14);

	/* mov 0x100(%rip),%rax; ret: the displacement is fixed for the slot's address. */
	const uint8_t riprel[32] = { 0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00, 0xc3 };
	d = arch_jump_slot_build(riprel, sizeof riprel, fn, slot, 1, stub, buf, &len, &why);
	uint64_t target = fn + 7 + 0x100, at = slot + ARCH_JUMP_PREFIX;
	check("rip-relative load: 7 bytes displaced", d == 7);
	check("rip-relative load: still reads the same address",
	      d == 7 && at + 7 + (uint64_t)(int64_t)i32_at(buf + ARCH_JUMP_PREFIX + 3) == target);

	/* push %rbp; jmp rel32: a branch among the first 5 bytes cannot move. */
	const uint8_t branch[32] = { 0x55, 0xe9, 0x10, 0x00, 0x00, 0x00 };
	why = NULL;
	d = arch_jump_slot_build(branch, sizeof branch, fn, slot, 1, stub, buf, &len, &why);
	check("a jmp among the first 5 bytes: refused, with a reason", d < 0 && why);

	/* push %rbp; ret: fewer than 5 movable bytes. */
	const uint8_t tiny[32] = { 0x55, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc };
	why = NULL;
	d = arch_jump_slot_build(tiny, sizeof tiny, fn, slot, 1, stub, buf, &len, &why);
	check("fewer than 5 movable bytes: refused, with a reason", d < 0 && why);

	/* A slot beyond a rel32 jump's reach of the function. */
	why = NULL;
	d = arch_jump_slot_build(entry, sizeof entry, fn, fn + (3ull << 31), 1, fn + (3ull << 31) - 512, buf,
				 &len, &why);
	check("a slot 6 GiB away: refused, with a reason", d < 0 && why);

	uint8_t jmp[ARCH_JUMP_LEN];
	arch_jump_encode(jmp, fn, slot);
	check("the entry's jmp rel32 lands on the slot",
	      jmp[0] == 0xe9 && fn + 5 + (uint64_t)(int64_t)i32_at(jmp + 1) == slot);

	/* A loop back to the entry itself is fine; one to entry + 2 is not. */
	const uint8_t loop0[] = { 0x55, 0x48, 0x89, 0xe5, 0x90, 0x90, 0xeb, 0xf8 };	/* jmp fn+0 */
	const uint8_t loop2[] = { 0x55, 0x48, 0x89, 0xe5, 0x90, 0x90, 0xeb, 0xfa };	/* jmp fn+2 */
	const uint8_t call4[] = { 0x55, 0x48, 0x89, 0xe5, 0x90, 0xe8, 0xfa, 0xff, 0xff, 0xff };	/* call fn+4 */
	check("a branch to the entry itself: allowed", !arch_branches_into(loop0, sizeof loop0, fn, fn, fn + 5));
	check("a branch to entry + 2: caught", arch_branches_into(loop2, sizeof loop2, fn, fn, fn + 5));
	check("a call to entry + 4: caught", arch_branches_into(call4, sizeof call4, fn, fn, fn + 5));
	check("a branch past the covered bytes: allowed", !arch_branches_into(loop2, sizeof loop2, fn, fn, fn + 2));

	arch_fini();
	printf("%d failure(s)\n", failures);
	return failures != 0;
}
