/* xol.c — the trampoline page: areas mapped into the program, their fixed entries and the
 * out-of-line slots. Layout of an area:
 *   +0   int3              return trampoline (swapped return addresses point here)
 *   +1   jmp +448          on to the return lookup (area 0; rescue.c)
 *   +16  ret               target of the calibration calls, which return to +33
 *   +24  .quad +33         their "stack": the return address ret pops
 *   +32  int3              where functions called by xol_call return to under a seccomp
 *                          filter that may refuse getpid
 *   +33  what functions called by xol_call and the calibration calls return to
 *        (arch_call_resume_code): a getpid from the gadget at +256, which puts the thread back
 *        where it was if gputop is gone by then
 *   +64  the return stub (retfast.c), up to 192 bytes (area 0)
 *   +256 the self-resuming syscall gadget (arch_syscall_resume_code), its save area at +352,
 *        then the stack pointer an xol_call puts back
 *   +448 the return lookup (arch_return_lookup_code, area 0): where the trampoline jumps once
 *        gputop is gone (rescue.c), its table in area 0's last LOOKUP_BYTES
 *   +512 shared code every area carries (the launch and call stubs and the park, launchring.c), up
 *        to 2560 bytes
 *   +3072 slots of ARCH_XOL_SLOT bytes, one per breakpoint
 * The page is mapped read+execute: gputop writes it through /proc/PID/mem, the program
 * cannot. */
#define _GNU_SOURCE
#include "xol.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "arch.h"
#include "clock.h"
#include "log.h"
#include "memory.h"
#include "procfs.h"
#include "seccomp.h"
#include "symbols.h"
#include "threads.h"
#include "tracee.h"

#define AREA_SIZE (64 * 1024)
#define OFF_TRAMP 0
#define OFF_RET 16
#define OFF_RETADDR 24
#define OFF_CALL_TRAP 32
#define OFF_CALL_RESUME 33
#define CALL_STACK_SIZE (256 * 1024)
#define OFF_RET_STUB 64
#define OFF_RET_STUB_END 256
#define OFF_RESUME 256
#define OFF_RESUME_SAVE 352
#define OFF_RESUME_SP (OFF_RESUME_SAVE + 8 * ARCH_SYSCALL_SAVE_WORDS)
#define OFF_LOOKUP 448
#define OFF_SHARED 512
#define LOOKUP_ENTRIES 1024	/* return addresses swapped for the trampoline, in flight at once */
#define LOOKUP_BYTES (16 * LOOKUP_ENTRIES)
#define OFF_SLOTS 8192
#define MAX_AREAS 64

struct area {
	uint64_t base;
	uint32_t next_slot;	/* offset of the next never-used slot */
};


/* The engine's, set once: gputop-wide. */
static struct {
	xol_runner run_to_trap;
	xol_syscall_runner run_syscall;
} runners;

void xol_set_runner(xol_runner run, xol_syscall_runner syscall_run)
{
	runners.run_to_trap = run;
	runners.run_syscall = syscall_run;
}

/* The process's part (p->xol). */
struct xol_state {
	struct area areas[MAX_AREAS];
	int n_areas;
	uint64_t call_stack;	/* read-write mapping for xol_call, 0 until first needed */
	uint64_t *free_slots;	/* slots given back, reused first */
	uint8_t shared[OFF_SLOTS - OFF_SHARED];	/* what every area carries at OFF_SHARED */
	size_t shared_len;
	size_t n_free, cap_free;
};

struct xol_state *xol_state_new(void)
{
	return calloc(1, sizeof(struct xol_state));
}

void xol_state_free(struct xol_state *st)
{
	if (!st)
		return;
	free(st->free_slots);
	free(st);
}

bool xol_ready(const struct tracee *p)
{
	struct xol_state *st = p->xol;
	return st->n_areas > 0;
}

uint64_t xol_ret_stub(const struct tracee *p, size_t *room)
{
	struct xol_state *st = p->xol;
	*room = OFF_RET_STUB_END - OFF_RET_STUB;
	return st->areas[0].base + OFF_RET_STUB;
}

uint64_t xol_trampoline(const struct tracee *p)
{
	struct xol_state *st = p->xol;
	return st->areas[0].base + OFF_TRAMP;
}

bool xol_contains(const struct tracee *p, uint64_t addr)
{
	struct xol_state *st = p->xol;
	for (int i = 0; i < st->n_areas; i++)
		if (addr - st->areas[i].base < AREA_SIZE)
			return true;
	return false;
}

int xol_set_shared_code(struct tracee *p, const uint8_t *code, size_t len)
{
	struct xol_state *st = p->xol;
	if (len > sizeof st->shared)
		return -ENOSPC;
	memcpy(st->shared, code, len);
	st->shared_len = len;
	for (int i = 0; i < st->n_areas; i++) {
		int err = mem_write_code(p, st->areas[i].base + OFF_SHARED, st->shared, st->shared_len);
		if (err < 0)
			return err;
	}
	return 0;
}

uint64_t xol_shared_code(const struct tracee *p, uint64_t addr)
{
	struct xol_state *st = p->xol;
	for (int i = 0; i < st->n_areas; i++)
		if (addr - st->areas[i].base < AREA_SIZE)
			return st->shared_len ? st->areas[i].base + OFF_SHARED : 0;
	return 0;
}

bool xol_in_shared_code(const struct tracee *p, uint64_t pc, uint64_t *offset)
{
	struct xol_state *st = p->xol;
	for (int i = 0; i < st->n_areas && st->shared_len; i++)
		if (pc - (st->areas[i].base + OFF_SHARED) < st->shared_len) {
			*offset = pc - (st->areas[i].base + OFF_SHARED);
			return true;
		}
	return false;
}

void xol_forget(struct tracee *p)
{
	struct xol_state *st = p->xol;
	st->n_areas = 0;
	st->shared_len = 0;
	st->n_free = 0;
	st->call_stack = 0;
}

static int area_fill_header(struct tracee *p, uint64_t base)
{
	uint8_t head[OFF_RET_STUB];
	arch_fill_breakpoints(head, sizeof head);	/* a stray jump here traps */
	memcpy(head + OFF_TRAMP, arch_breakpoint, arch_breakpoint_len);
	memcpy(head + OFF_RET, arch_return_insn, arch_return_insn_len);
	uint64_t call_resume = base + OFF_CALL_RESUME;
	memcpy(head + OFF_RETADDR, &call_resume, sizeof call_resume);
	memcpy(head + OFF_CALL_TRAP, arch_breakpoint, arch_breakpoint_len);
	int err = arch_call_resume_code(head + OFF_CALL_RESUME, OFF_RET_STUB - OFF_CALL_RESUME,
					base + OFF_CALL_RESUME, SYS_getpid, base + OFF_RESUME_SP,
					base + OFF_RESUME) ? 0 : -ENOSPC;
	if (!err)
		err = mem_write_code(p, base, head, sizeof head);
	uint8_t resume[OFF_RESUME_SAVE - OFF_RESUME];
	size_t n = arch_syscall_resume_code(resume, sizeof resume, base + OFF_RESUME, base + OFF_RESUME_SAVE);
	if (!err && !n)
		err = -ENOSPC;
	if (!err)
		err = mem_write_code(p, base + OFF_RESUME, resume, n);
	if (!err && !p->xol->n_areas) {	/* area 0: the trampoline's */
		uint8_t lookup[OFF_SHARED - OFF_LOOKUP], jump[ARCH_JUMP_LEN];
		n = arch_return_lookup_code(lookup, sizeof lookup, base + OFF_LOOKUP,
					    base + AREA_SIZE - LOOKUP_BYTES, LOOKUP_ENTRIES);
		err = n ? mem_write_code(p, base + OFF_LOOKUP, lookup, n) : -ENOSPC;
		/* Right after the trampoline's int3, a jump to the lookup: where a thread stopped at
		 * the int3 when gputop died resumes (the kernel drops the trap), and where the rescue's
		 * one-byte no-op over the int3 sends every later return. */
		arch_jump_encode(jump, base + OFF_TRAMP + arch_breakpoint_len, base + OFF_LOOKUP);
		if (!err)
			err = mem_write_code(p, base + OFF_TRAMP + arch_breakpoint_len, jump, sizeof jump);
	}
	return err;
}

uint64_t xol_return_lookup(const struct tracee *p, uint64_t *table, uint32_t *entries)
{
	struct xol_state *st = p->xol;
	if (!st->n_areas)
		return 0;
	*table = st->areas[0].base + AREA_SIZE - LOOKUP_BYTES;
	*entries = LOOKUP_ENTRIES;
	return st->areas[0].base + OFF_LOOKUP;
}

/* Area 0 ends with the return lookup's table. */
static uint32_t area_end(int i)
{
	return i == 0 ? AREA_SIZE - LOOKUP_BYTES : AREA_SIZE;
}

/* The thread runs the system call at gadget and is stopped at its exit, before it returns to
 * the gadget's next instruction. save_at: the save area of a self-resuming gadget (arch.h),
 * filled first so that a thread whose tracer dies meanwhile goes back where it was; 0 for the
 * one-off gadget of xol_init (syscall; int3). */
static long run_syscall_at(struct tracee *p, struct thread *t, uint64_t gadget, uint64_t save_at, long nr,
			   const uint64_t args[6])
{
	arch_regs_t saved, r;
	int err = arch_get_regs(t->tid, &saved);
	if (err < 0)
		return err;
	/* Issue 17 (probe/seccomp.c): never a call the program's seccomp filter may refuse. */
	if ((err = seccomp_check_inject(t->tid, SECCOMP_INJECT, nr, args, gadget)) < 0)
		return err;
	if (save_at) {
		uint64_t words[ARCH_SYSCALL_SAVE_WORDS];
		arch_syscall_resume_save(&saved, words);
		if ((err = mem_write_code(p, save_at, words, sizeof words)) < 0)
			return err;
	}
	r = saved;
	arch_prepare_syscall(&r, gadget, nr, args);
	if ((err = arch_set_regs(t->tid, &r)) < 0)
		return err;
	err = runners.run_syscall(p, t, 0, &r);
	if (err < 0)
		return err;
	long ret = arch_syscall_result(&r);
	/* Back to exactly where it was; a system call it was in restarts as it would have. A thread
	 * that cannot be put back is being killed (a seccomp filter's SIGSYS at this very call). */
	arch_restart_in_user(&saved);
	err = arch_set_regs(t->tid, &saved);
	return err < 0 ? -ESRCH : ret;
}

long xol_syscall(struct tracee *p, struct thread *t, long nr, const uint64_t args[6])
{
	struct xol_state *st = p->xol;
	if (!st->n_areas)
		return -ENOEXEC;
	return run_syscall_at(p, t, st->areas[0].base + OFF_RESUME, st->areas[0].base + OFF_RESUME_SAVE,
			      nr, args);
}

long xol_mmap_rw(struct tracee *p, struct thread *t, size_t size)
{
	uint64_t args[6] = { 0, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 };
	return xol_syscall(p, t, SYS_mmap, args);
}

int xol_munmap(struct tracee *p, struct thread *t, uint64_t addr, size_t size)
{
	uint64_t args[6] = { addr, size, 0, 0, 0, 0 };
	long r = xol_syscall(p, t, SYS_munmap, args);
	return r < 0 ? (int)r : 0;
}

static long map_area(struct tracee *p, struct thread *t, uint64_t gadget, uint64_t save_at, uint64_t hint)
{
	uint64_t args[6] = { hint, AREA_SIZE, PROT_READ | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS | (hint ? MAP_FIXED_NOREPLACE : 0),
			     (uint64_t)-1, 0 };
	return run_syscall_at(p, t, gadget, save_at, SYS_mmap, args);
}

static int add_area(struct tracee *p, uint64_t base)
{
	struct xol_state *st = p->xol;
	int err = area_fill_header(p, base);
	if (err == 0 && st->shared_len)
		err = mem_write_code(p, base + OFF_SHARED, st->shared, st->shared_len);
	if (err < 0)
		return err;
	st->areas[st->n_areas++] = (struct area){ .base = base, .next_slot = OFF_SLOTS };
	return 0;
}

/* A system call run from a self-resuming gadget written where the program never runs anything:
 * the unused end of the last page of one of its executable segments (base/symbols.h,
 * sym_exec_tail). For the two calls that have no gadget of gputop's to run from: the first mmap
 * of an attach (before area 0 exists) and the last munmap of a detach (of area 0 itself: a
 * gputop killed during that call left the thread returning into a page that was gone, SIGSEGV,
 * 2 of 20 detach-then-SIGKILL trials on a loaded 2-CPU machine). A thread whose gputop dies
 * during the call comes back to code that still exists and goes on where it was. gputop puts
 * the bytes back after the call; a gputop killed meanwhile leaves them, and so does the
 * watchdog (the thread may still be about to run them: a copy over the program's entry point,
 * tried before and restored by the watchdog, raced the thread). -ENOSPC without such a tail. */
static long syscall_from_tail(struct tracee *p, struct thread *t, long nr, const uint64_t args[6])
{
	enum { SAVE_AT = 96, ROOM = SAVE_AT + 8 * ARCH_SYSCALL_SAVE_WORDS };
	uint8_t orig[ROOM], code[SAVE_AT];
	uint64_t at = sym_exec_tail(p, ROOM);
	size_t n = at ? arch_syscall_resume_code(code, sizeof code, at, at + SAVE_AT) : 0;
	if (!n || mem_read(t->tid, at, orig, sizeof orig) < 0 || mem_write_code(p, at, code, n) < 0) {
		log_debug("no spare bytes at the end of an executable segment for a gadget");
		return -ENOSPC;
	}
	log_debug("system call %ld from a copy of the gadget at %#" PRIx64, nr, at);
	long r = run_syscall_at(p, t, at, at + SAVE_AT, nr, args);
	if (mem_write_code(p, at, orig, sizeof orig) < 0)
		log_warn("could not put back %d bytes at %#" PRIx64 " (the unused end of an executable "
			 "segment; never run by the program)", ROOM, at);
	return r;
}

static int save_for_resume(struct tracee *p, const arch_regs_t *saved);

static long unmap_last(struct tracee *p, struct thread *t, const uint64_t args[6])
{
	long r = syscall_from_tail(p, t, SYS_munmap, args);
	return r == -ENOSPC ? xol_syscall(p, t, SYS_munmap, args) : r;
}

int xol_init(struct tracee *p, struct thread *t, uint64_t scratch)
{
	/* The first mapping: from a copy of the resuming gadget (syscall_from_tail), else from
	 * `syscall; int3` written over the program's entry point for that one call. */
	uint64_t args[6] = { 0, AREA_SIZE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 };
	long addr = syscall_from_tail(p, t, SYS_mmap, args);
	if (addr != -ENOSPC) {
		if (addr < 0 && addr > -4096)
			return (int)addr;
		return add_area(p, (uint64_t)addr);
	}
	uint8_t saved[8];
	int err = mem_read(t->tid, scratch, saved, arch_syscall_gadget_len);
	if (err < 0)
		return err;
	if ((err = mem_write_code(p, scratch, arch_syscall_gadget, arch_syscall_gadget_len)) < 0)
		return err;
	addr = map_area(p, t, scratch, 0, 0);
	int restore = mem_write_code(p, scratch, saved, arch_syscall_gadget_len);
	if (addr < 0 && addr > -4096)
		return (int)addr;
	if (restore < 0)
		return restore;
	return add_area(p, (uint64_t)addr);
}

static bool within_2g(uint64_t a, uint64_t b)
{
	uint64_t d = a > b ? a - b : b - a;
	return d < (1ull << 31) - AREA_SIZE;
}

static int area_near(struct tracee *p, struct thread *t, uint64_t near)
{
	struct xol_state *st = p->xol;
	for (int i = 0; i < st->n_areas; i++)
		if (!near || within_2g(st->areas[i].base, near))
			if (st->areas[i].next_slot + ARCH_XOL_SLOT <= area_end(i))
				return i;
	if (st->n_areas == MAX_AREAS)
		return -ENOSPC;
	/* The gaps between the program's mappings nearest to the code, as /proc/PID/maps tells
	 * (a PyTorch process's CUDA reservations leave few: stepping away from libnccl found
	 * none, and its 87 functions fell back to int3); then stepping, as before. */
	uint64_t gaps[8];
	int n_gaps = near ? proc_free_ranges_near(p->pid, near, AREA_SIZE, AREA_SIZE,
						  (1ull << 31) - 2 * AREA_SIZE, gaps, 8) : 0;
	for (int k = 0; k < n_gaps; k++) {
		long addr = map_area(p, t, st->areas[0].base + OFF_RESUME, st->areas[0].base + OFF_RESUME_SAVE, gaps[k]);
		if (addr > 0 && within_2g((uint64_t)addr, near)) {
			int err = add_area(p, (uint64_t)addr);
			return err < 0 ? err : st->n_areas - 1;
		}
	}
	/* Try below and above the code, a step further each time, until the kernel gives us a
	 * free range (MAP_FIXED_NOREPLACE never clobbers a mapping). */
	for (uint64_t step = 16u << 20; step < (1u << 30); step *= 2) {
		uint64_t tries[2] = { (near - step) & ~0xffffull, (near + step) & ~0xffffull };
		for (int k = 0; k < 2; k++) {
			long addr = map_area(p, t, st->areas[0].base + OFF_RESUME,
					     st->areas[0].base + OFF_RESUME_SAVE, tries[k]);
			if (addr > 0 && within_2g((uint64_t)addr, near)) {
				int err = add_area(p, (uint64_t)addr);
				return err < 0 ? err : st->n_areas - 1;
			}
		}
	}
	return -ENOMEM;
}

int xol_slot_alloc(struct tracee *p, struct thread *t, uint64_t near, uint64_t *slot_out)
{
	struct xol_state *st = p->xol;
	for (size_t i = 0; i < st->n_free; i++)
		if (!near || within_2g(st->free_slots[i], near)) {
			*slot_out = st->free_slots[i];
			st->free_slots[i] = st->free_slots[--st->n_free];
			return 0;
		}
	int a = area_near(p, t, near);
	if (a < 0)
		return a;
	*slot_out = st->areas[a].base + st->areas[a].next_slot;
	st->areas[a].next_slot += ARCH_XOL_SLOT;
	return 0;
}

void xol_slot_free(struct tracee *p, uint64_t slot)
{
	struct xol_state *st = p->xol;
	if (st->n_free == st->cap_free) {
		size_t ncap = st->cap_free ? st->cap_free * 2 : 64;
		uint64_t *n = realloc(st->free_slots, ncap * sizeof *n);
		if (!n)
			return;	/* the slot is just not reused */
		st->free_slots = n;
		st->cap_free = ncap;
	}
	st->free_slots[st->n_free++] = slot;
}

int xol_scratch(struct tracee *p, struct thread *t, uint64_t *addr)
{
	struct xol_state *st = p->xol;
	if (!st->n_areas)
		return -ENOEXEC;
	if (!st->call_stack) {
		long a = xol_mmap_rw(p, t, CALL_STACK_SIZE);
		if (a < 0 && a > -4096)
			return (int)a;
		st->call_stack = (uint64_t)a;
	}
	*addr = st->call_stack;	/* the scratch is the bottom of the mapping */
	return 0;
}

/* The function returns to the call-resume code (area_fill_header), which leaves the thread
 * needing nobody: gputop stops it at the exit of the getpid that code makes and puts its
 * registers back; a gputop killed during the call (dlopen of --gpu-time's library takes
 * seconds) leaves it to go back where it was by itself. It returned to an int3 before, and
 * died of SIGTRAP then. Under a seccomp filter that may refuse that getpid, the int3 still. */
int xol_call(struct tracee *p, struct thread *t, uint64_t func, const uint64_t args[6], uint64_t *ret,
	     uint64_t *scratch_out)
{
	struct xol_state *st = p->xol;
	uint64_t at;
	int serr = xol_scratch(p, t, &at);
	if (serr < 0)
		return serr;
	/* Layout of the mapping: XOL_SCRATCH_SIZE bytes of scratch at the bottom, the stack above. */
	_Static_assert(CALL_STACK_SIZE - XOL_SCRATCH_SIZE >= 128 * 1024, "xol_call's stack");
	_Static_assert(OFF_RESUME_SP + 8 <= OFF_SHARED, "the area's header");
	uint64_t base = st->areas[0].base, scratch = st->call_stack;
	static const uint64_t none[6];
	bool resumes = seccomp_check_inject(t->tid, SECCOMP_CALL_RETURN, SYS_getpid, none, base + OFF_RESUME) == 0;
	uint64_t back_to = base + (resumes ? OFF_CALL_RESUME : OFF_CALL_TRAP);
	uint64_t sp = (st->call_stack + CALL_STACK_SIZE - 64) & ~15ull;
	sp -= 8;	/* as after a call: the return address on top, sp + 8 aligned */
	int err = mem_write(t->tid, sp, &back_to, sizeof back_to);
	if (err < 0)
		return err;
	uint64_t real[6];
	for (int i = 0; i < 6; i++)
		real[i] = args[i] == XOL_SCRATCH ? scratch : args[i];
	if (scratch_out)
		*scratch_out = scratch;

	arch_regs_t saved, r;
	if ((err = arch_get_regs(t->tid, &saved)) < 0)
		return err;
	if ((err = save_for_resume(p, &saved)) < 0)
		return err;
	r = saved;
	arch_prepare_call(&r, func, sp, real);
	if ((err = arch_set_regs(t->tid, &r)) < 0)
		return err;
	if (resumes) {
		err = runners.run_syscall(p, t, arch_syscall_ip(base + OFF_RESUME), &r);
		if (err == 0)
			*ret = arch_call_resume_retval(&r);
	} else {
		err = runners.run_to_trap(p, t, base + OFF_CALL_TRAP, &r);
		if (err == 0)
			*ret = arch_retval(&r);
	}
	arch_restart_in_user(&saved);	/* put back at a system call stop */
	int restore = arch_set_regs(t->tid, &saved);
	return err < 0 ? err : restore;
}

int xol_unmap_all(struct tracee *p, struct thread *t)
{
	struct xol_state *st = p->xol;
	int err = 0;
	if (st->call_stack) {
		xol_munmap(p, t, st->call_stack, CALL_STACK_SIZE);
		st->call_stack = 0;
	}
	/* The gadget lives in area 0: unmap it last, from a copy (unmap_last). */
	for (int i = st->n_areas - 1; i >= 0; i--) {
		uint64_t args[6] = { st->areas[i].base, AREA_SIZE, 0, 0, 0, 0 };
		long r = i == 0 ? unmap_last(p, t, args) : xol_syscall(p, t, SYS_munmap, args);
		if (r < 0 && !err)
			err = (int)r;
	}
	st->n_areas = 0;
	st->n_free = 0;
	st->shared_len = 0;
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The thread's registers into the save area of the resuming gadget (area 0's), where a thread
 * at the call trap or in a called function goes back to if gputop dies. */
static int save_for_resume(struct tracee *p, const arch_regs_t *saved)
{
	struct xol_state *st = p->xol;
	uint64_t words[ARCH_SYSCALL_SAVE_WORDS + 1];
	arch_syscall_resume_save(saved, words);
	words[ARCH_SYSCALL_SAVE_WORDS] = arch_sp(saved);
	return mem_write_code(p, st->areas[0].base + OFF_RESUME_SAVE, words, sizeof words);
}

uint64_t xol_calibrate(struct tracee *p, struct thread *t)
{
	struct xol_state *st = p->xol;
	enum { N = XOL_CALIBRATION_STOPS };
	static const uint64_t none[6];
	uint64_t samples[N], base = st->n_areas ? st->areas[0].base : 0;
	arch_regs_t saved, r;
	/* No int3: the thread returns into the call-resume code and is stopped at its getpid's
	 * exit, two stops (the entry's, passed through, and the exit's): a thread that was on its
	 * way to an int3 when gputop died, on a loaded machine not yet scheduled, died of SIGTRAP
	 * (2 of 80 kills while attaching). Under a filter that may refuse getpid: not measured. */
	if (!base || seccomp_check_inject(t->tid, SECCOMP_CALL_RETURN, SYS_getpid, none, base + OFF_RESUME) < 0 ||
	    arch_get_regs(t->tid, &saved) < 0 || save_for_resume(p, &saved) < 0)
		return 0;
	int n = 0;
	for (int i = 0; i < N; i++) {
		/* A `ret` whose "stack" is a word of our own page holding the call-resume code's
		 * address: the thread's own stack is not touched. */
		r = saved;
		arch_prepare_return(&r, base + OFF_RET, base + OFF_RETADDR);
		if (arch_set_regs(t->tid, &r) < 0)
			break;
		uint64_t t0 = now_ns();
		if (runners.run_syscall(p, t, arch_syscall_ip(base + OFF_RESUME), &r) < 0)
			break;
		samples[n++] = (now_ns() - t0) / 2;
	}
	arch_restart_in_user(&saved);	/* put back at a system call stop */
	arch_set_regs(t->tid, &saved);
	if (!n)
		return 0;
	qsort(samples, (size_t)n, sizeof samples[0], cmp_u64);
	return samples[n / 2];
}
