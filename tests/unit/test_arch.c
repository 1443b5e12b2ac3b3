/* test_arch.c — unit test of arch/x86_64.c's jump probes (capstone, no tracee): the slot a
 * jump probe runs (prefix, relocated instructions, jump back), the refusals, and the check for
 * branches into the bytes a jump covers. Prints one "ok"/"not ok" line per check. */
#include "arch.h"

#include <stdio.h>
#include <string.h>

static int failures;

static void check(const char *what, bool ok)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	failures += !ok;
}

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

int main(void)
{
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
