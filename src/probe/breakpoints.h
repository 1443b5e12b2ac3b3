/* breakpoints.h — the int3s gputop plants: where each is, the bytes it covers, the out-of-line
 * slot that runs those bytes, and what it is for. Lookup by address is the hot path of every
 * stop, so it is one hash probe. */
#ifndef GPUTOP_BREAKPOINTS_H
#define GPUTOP_BREAKPOINTS_H

#include <stdbool.h>
#include <stdint.h>

struct thread;
struct tracee;
struct breakpoints_state;

enum bp_kind {
	BP_PROBE,	/* entry of a CUDA API function: api says which */
	BP_RTLD,	/* the dynamic linker's _dl_debug_state: a library came or went */
	BP_EXEC,	/* libc's execve: the last returns the stub recorded must be read now */
};

struct bp {
	uint64_t addr;
	uint64_t slot;		/* out-of-line copy of the displaced instructions */
	uint64_t jump_slot;	/* a jump probe's slot: its prefix (launch stub call), then slot */
	uint8_t orig[16];	/* the program's bytes under the breakpoint */
	uint8_t displaced;	/* bytes the slot runs before jumping back to addr + displaced */
	uint8_t kind;		/* enum bp_kind */
	bool armed;		/* the int3 is in the program */
	bool ambiguous;		/* leaving the slot lands at addr + 1: check the trap's origin */
	uint8_t patch_len;	/* bytes armed: the int3, or a jump probe's jump */
	int16_t ring;		/* a jump probe's index in the launch ring, else -1 */
	int16_t api;		/* row of the API table for BP_PROBE */
	uint32_t module;	/* module id (symbols.h), to forget it when the module goes */
};

/* A process's part (p->breakpoints, base/tracee.h): its breakpoint table; made and freed with
 * it. Every function below acts on the table of the process p it is given. */
struct breakpoints_state *breakpoints_state_new(void);
void breakpoints_state_free(struct breakpoints_state *st);

struct bp *bp_find(const struct tracee *p, uint64_t addr);
/* Creates a disarmed breakpoint (reads the code, builds and writes its slot). t is a stopped
 * thread that may be used to map a trampoline area near addr. 0 or -errno; *why explains a
 * refusal (an entry that cannot run out of line). */
int bp_create(struct tracee *p, struct thread *t, uint64_t addr, enum bp_kind kind, int api, uint32_t module,
	      struct bp **out, const char **why);
/* A jump probe (launchring.h) on a function of size bytes: no stop. stub: an enum lr_stub,
 * which stub its slot calls. Refused (-ENOEXEC, *why) where fewer than 5 bytes can move or a
 * branch of the function lands inside them; -EBUSY (*why) while a stopped thread stands
 * inside them (it may not be later). */
int bp_create_jump(struct tracee *p, struct thread *t, uint64_t addr, uint64_t size, int api, int stub,
		   uint32_t module, struct bp **out, const char **why);
int bp_arm(const struct tracee *p, struct bp *b);
int bp_disarm(const struct tracee *p, struct bp *b);
void bp_forget_module(struct tracee *p, uint32_t module);	/* its code is gone: drop without writing */
void bp_forget_all(struct tracee *p);				/* after exec */
int bp_disarm_all(struct tracee *p);				/* detach: every byte back */

/* Iteration: uint32_t it = 0; for (struct bp *b; (b = bp_iter(p, &it));) */
struct bp *bp_iter(const struct tracee *p, uint32_t *cursor);

/* Where a thread stopped inside a slot must resume once the slots are gone; pc itself if it
 * is not in one. */
uint64_t bp_unwind_pc(const struct tracee *p, uint64_t pc);

#endif
