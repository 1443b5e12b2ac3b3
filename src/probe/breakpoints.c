/* breakpoints.c — breakpoint table and the writes that arm and disarm them. Arming writes only
 * the int3 byte over the first instruction, which other threads may be running: that is the
 * one write a concurrent instruction fetch sees either before or after, never half of. */
#include "breakpoints.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "config.h"
#include "hashmap.h"
#include "launchring.h"
#include "log.h"
#include "memory.h"
#include "rescue.h"
#include "threads.h"
#include "tracee.h"
#include "xol.h"

struct bp_slot {
	uint64_t addr;		/* the key */
	struct bp *b;		/* its own allocation: callers keep pointers across inserts */
};

/* The process's part (p->breakpoints). */
struct breakpoints_state {
	struct hashmap table;
};

struct breakpoints_state *breakpoints_state_new(void)
{
	struct breakpoints_state *st = malloc(sizeof *st);
	if (st)
		*st = (struct breakpoints_state){ .table = HASHMAP_INIT(sizeof(struct bp_slot), 256, 0) };
	return st;
}

void breakpoints_state_free(struct breakpoints_state *st)
{
	if (!st)
		return;
	size_t it = 0;
	for (struct bp_slot *s; (s = hashmap_next(&st->table, &it));)
		free(s->b);
	hashmap_clear(&st->table);
	free(st);
}

struct bp *bp_find(const struct tracee *p, uint64_t addr)
{
	struct breakpoints_state *st = p->breakpoints;
	struct bp_slot *s = hashmap_find(&st->table, addr);
	return s ? s->b : NULL;
}

static int insert(struct tracee *p, struct bp *b)
{
	struct breakpoints_state *st = p->breakpoints;
	struct bp_slot *s = hashmap_insert(&st->table, b->addr, NULL);
	if (!s)
		return -ENOMEM;
	s->b = b;
	return 0;
}

/* A jump probe an earlier gputop left at addr when it died (its page, slot and stub stay in
 * the program and work without it): the program's own bytes are put back, in code[] and in
 * the program, before anything is planted there. Every thread is stopped (attach). */
static void reclaim_leftover(const struct tracee *p, struct thread *t, uint64_t addr, uint8_t *code)
{
	uint8_t slot[ARCH_XOL_SLOT], orig[ARCH_JUMP_LEN];
	uint64_t target = arch_jump_target(code, addr);
	if (!target || mem_read(t->tid, target, slot, sizeof slot) < 0 ||
	    arch_jump_leftover(slot, sizeof slot, target, addr, orig) < 0)
		return;
	if (mem_write_code(p, addr, orig, sizeof orig) == 0) {
		memcpy(code, orig, sizeof orig);
		log_info("put back the entry at %#llx that an earlier gputop left", (unsigned long long)addr);
	}
}

int bp_create(struct tracee *p, struct thread *t, uint64_t addr, enum bp_kind kind, int api, uint32_t module,
	      struct bp **out, const char **why)
{
	uint8_t code[32], slot_code[ARCH_XOL_SLOT];
	size_t slot_len;
	bool ambiguous;
	uint64_t slot;
	int err;

	*why = NULL;
	if (config.no_int3) {
		*why = "it would need an int3 in the program's code (--no-int3)";
		return -EPERM;
	}
	if (bp_find(p, addr))
		return -EEXIST;
	/* Read what is under it; a read can fail near the end of a mapping, so shrink. */
	size_t n = sizeof code;
	while ((err = mem_read(t->tid, addr, code, n)) < 0 && n > 16)
		n /= 2;
	if (err < 0)
		return err;
	reclaim_leftover(p, t, addr, code);
	if ((err = xol_slot_alloc(p, t, 0, &slot)) < 0)
		return err;
	int displaced = arch_xol_build(code, n, addr, slot, slot_code, &slot_len, why, &ambiguous);
	if (displaced < 0 && *why && strstr(*why, "out of reach")) {
		/* Rip-relative code: move to a slot within reach of it. */
		xol_slot_free(p, slot);
		if ((err = xol_slot_alloc(p, t, addr, &slot)) < 0)
			return err;
		displaced = arch_xol_build(code, n, addr, slot, slot_code, &slot_len, why, &ambiguous);
	}
	if (displaced < 0) {
		xol_slot_free(p, slot);
		return -ENOEXEC;
	}
	if ((err = mem_write_code(p, slot, slot_code, slot_len)) < 0) {
		xol_slot_free(p, slot);
		return err;
	}
	struct bp *b = calloc(1, sizeof *b);
	if (!b)
		return -ENOMEM;
	*b = (struct bp){ .addr = addr, .slot = slot, .displaced = (uint8_t)displaced,
			  .kind = (uint8_t)kind, .ambiguous = ambiguous, .api = (int16_t)api,
			  .module = module, .patch_len = (uint8_t)arch_breakpoint_len, .ring = -1 };
	memcpy(b->orig, code, sizeof b->orig);
	if ((err = insert(p, b)) < 0) {
		free(b);
		xol_slot_free(p, slot);
		return err;
	}
	*out = b;
	return 0;
}

/* A stopped thread standing inside the bytes a jump would cover. */
static bool thread_inside(const struct tracee *p, uint64_t lo, uint64_t hi)
{
	uint32_t it = 0;
	arch_regs_t r;
	for (struct thread *t; (t = threads_iter(p, &it));)
		if (t->state == TS_STOPPED && arch_get_regs(t->tid, &r) == 0 && arch_pc(&r) > lo &&
		    arch_pc(&r) < hi)
			return true;
	return false;
}

int bp_create_jump(struct tracee *p, struct thread *t, uint64_t addr, uint64_t size, int api, int stub,
		   uint32_t module, struct bp **out, const char **why)
{
	enum { MAX_FUNC = 65536 };
	uint8_t slot_code[ARCH_XOL_SLOT];
	size_t slot_len;
	uint64_t slot;
	int err, ring = -1;

	*why = NULL;
	if (bp_find(p, addr))
		return -EEXIST;
	if (size < 16 || size > MAX_FUNC) {
		*why = "the function's size is unknown";
		return -ENOEXEC;
	}
	uint8_t *code = malloc(size);
	if (!code)
		return -ENOMEM;
	if ((err = mem_read(t->tid, addr, code, size)) < 0)
		goto out;
	reclaim_leftover(p, t, addr, code);
	if ((ring = launchring_add_probe(p, api)) < 0) {
		*why = "no launch ring";
		err = -ENOEXEC;
		goto out;
	}
	if ((err = xol_slot_alloc(p, t, addr, &slot)) < 0)
		goto out;
	int displaced = arch_jump_slot_build(code, size, addr, slot, (uint32_t)ring,
					     launchring_stub(p, slot, (enum lr_stub)stub), slot_code, &slot_len, why);
	if (displaced > 0 && arch_branches_into(code, size, addr, addr, addr + (uint64_t)displaced)) {
		*why = "a branch of the function lands in its first bytes";
		displaced = -1;
	}
	bool inside = false;
	if (displaced > 0 && thread_inside(p, addr, addr + (uint64_t)displaced)) {
		*why = "a thread stands inside its first bytes";
		displaced = -1;
		inside = true;
	}
	struct bp *b = displaced > 0 ? calloc(1, sizeof *b) : NULL;
	if (!b) {
		err = displaced > 0 ? -ENOMEM : inside ? -EBUSY : -ENOEXEC;
		goto free_slot;
	}
	*b = (struct bp){ .addr = addr, .slot = slot + ARCH_JUMP_PREFIX, .jump_slot = slot,
			  .displaced = (uint8_t)displaced, .kind = BP_PROBE, .api = (int16_t)api,
			  .module = module, .patch_len = ARCH_JUMP_LEN, .ring = (int16_t)ring };
	memcpy(b->orig, code, sizeof b->orig);
	if ((err = mem_write_code(p, slot, slot_code, slot_len)) < 0 || (err = insert(p, b)) < 0) {
		free(b);
		goto free_slot;
	}
	*out = b;
	free(code);
	return 0;
free_slot:
	xol_slot_free(p, slot);
out:
	if (ring >= 0)
		launchring_drop_probe(p, ring);
	free(code);
	return err;
}

/* A jump goes in (or out) in three writes, each of which a thread arriving meanwhile sees
 * whole: the int3 first (a thread then traps, and is handled as at any breakpoint), the four
 * bytes it hides, then the first byte. No thread is inside the range (checked at creation;
 * afterwards nothing but the jump leads there). */
static int write_jump_bytes(const struct tracee *p, struct bp *b, const uint8_t *from, const uint8_t *bytes)
{
	/* Meanwhile the int3 is in the rescue table, with the first byte that makes the four
	 * behind it whole again: a gputop dying between two writes leaves no int3 behind (the
	 * watchdog writes that byte), only the old or the new instruction. */
	rescue_code_armed(p->rescue_slot, b->addr, from[0]);
	int err = mem_write_code(p, b->addr, arch_breakpoint, arch_breakpoint_len);
	if (err == 0)
		err = mem_write_code(p, b->addr + 1, bytes + 1, ARCH_JUMP_LEN - 1);
	if (err == 0)
		rescue_code_armed(p->rescue_slot, b->addr, bytes[0]);
	if (err == 0)
		err = mem_write_code(p, b->addr, bytes, 1);
	rescue_code_disarmed(p->rescue_slot, b->addr);
	return err;
}

int bp_arm(const struct tracee *p, struct bp *b)
{
	if (b->armed)
		return 0;
	if (b->ring >= 0) {
		/* Not in the rescue table: if gputop dies, the jump and its stub go on working
		 * (the rescue clears the ring's "present" word, so the stub never traps). */
		uint8_t jump[ARCH_JUMP_LEN];
		arch_jump_encode(jump, b->addr, b->jump_slot);
		int err = write_jump_bytes(p, b, b->orig, jump);
		if (err == 0)
			b->armed = true;
		else
			mem_write_code(p, b->addr, b->orig, ARCH_JUMP_LEN);
		return err;
	}

	rescue_code_armed(p->rescue_slot, b->addr, b->orig[0]);	/* before: a crash right after must find it */
	int err = mem_write_code(p, b->addr, arch_breakpoint, arch_breakpoint_len);
	if (err == 0)
		b->armed = true;
	else
		rescue_code_disarmed(p->rescue_slot, b->addr);
	return err;
}

int bp_disarm(const struct tracee *p, struct bp *b)
{
	if (!b->armed)
		return 0;
	if (b->ring >= 0) {
		uint8_t jump[ARCH_JUMP_LEN];
		arch_jump_encode(jump, b->addr, b->jump_slot);
		int err = write_jump_bytes(p, b, jump, b->orig);
		if (err == 0)
			b->armed = false;
		return err;
	}
	int err = mem_write_code(p, b->addr, b->orig, arch_breakpoint_len);
	if (err == 0) {
		b->armed = false;
		rescue_code_disarmed(p->rescue_slot, b->addr);
	}
	return err;
}

static void drop_if(struct tracee *p, bool (*match)(const struct bp *, uint32_t), uint32_t arg)
{
	struct breakpoints_state *st = p->breakpoints;
	size_t it = 0;
	for (struct bp_slot *s; (s = hashmap_next(&st->table, &it));) {
		struct bp *b = s->b;
		if (!match(b, arg))
			continue;
		rescue_code_disarmed(p->rescue_slot, b->addr);
		if (b->ring >= 0) {
			launchring_drop_probe(p, b->ring);
			xol_slot_free(p, b->jump_slot);
		} else {
			xol_slot_free(p, b->slot);
		}
		hashmap_remove(&st->table, b->addr, NULL);	/* the current entry: allowed */
		free(b);
	}
}

static bool in_module(const struct bp *b, uint32_t module)
{
	return b->module == module;
}

static bool any(const struct bp *b, uint32_t unused)
{
	return true;
}

void bp_forget_module(struct tracee *p, uint32_t module)
{
	drop_if(p, in_module, module);
}

void bp_forget_all(struct tracee *p)
{
	drop_if(p, any, 0);
}

int bp_disarm_all(struct tracee *p)
{
	int err = 0;
	uint32_t it = 0;
	for (struct bp *b; (b = bp_iter(p, &it));) {
		int e = bp_disarm(p, b);
		if (e < 0 && !err)
			err = e;
	}
	return err;
}

struct bp *bp_iter(const struct tracee *p, uint32_t *cursor)
{
	struct breakpoints_state *st = p->breakpoints;
	size_t it = *cursor;
	struct bp_slot *s = hashmap_next(&st->table, &it);
	*cursor = (uint32_t)it;
	return s ? s->b : NULL;
}

uint64_t bp_unwind_pc(const struct tracee *p, uint64_t pc)
{
	if (!xol_contains(p, pc))
		return pc;
	uint32_t it = 0;
	for (struct bp *b; (b = bp_iter(p, &it));) {
		if (b->ring >= 0 && pc - b->jump_slot < ARCH_JUMP_PREFIX)
			return b->addr;	/* before the stub: the call has not begun */
		if (pc - b->slot < ARCH_XOL_SLOT - (b->ring >= 0 ? ARCH_JUMP_PREFIX : 0))
			return arch_xol_unwind_pc(pc, b->slot, b->addr, b->displaced, b->displaced);
	}
	return pc;
}
