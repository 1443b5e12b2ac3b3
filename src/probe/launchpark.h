/* launchpark.h — the park slots of the launch ring (arch_park, arch/x86_64_launch.S). Where a
 * stub wants gputop (a kernel to name at its first launch, a stack to take) it holds the thread
 * in a slot, sleeping a millisecond at a time, only while gputop is there and drains; it used
 * to trap instead, and a gputop killed just before that trap (the watchdog not yet done) left
 * the program to die of SIGTRAP. A parked thread whose gputop is gone, frozen or late gives up
 * and goes on as without gputop. The engine (engine/park.c) finds the parked threads here and
 * serves each from the registers the park saved, without a stop where it only reads (a stack),
 * else at a stop (PTRACE_INTERRUPT: an event stop, which a tracer that dies leaves running). */
#ifndef GPUTOP_LAUNCHPARK_H
#define GPUTOP_LAUNCHPARK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"

struct tracee;

/* A park: its slot, its number there (a slot's parks are numbered: an answer names one), the
 * thread's id as gettid() gave it in the program (in the program's own PID namespace, which is
 * not gputop's in a container seen from the node: threads_find_own) and where its registers
 * are. */
struct lr_parked {
	int slot;
	pid_t own_tid;
	uint64_t sp;
	uint64_t number;
};

/* The parks waiting for an answer now (up to LR_PARK_SLOTS into out); how many. */
int launchpark_waiting(struct tracee *p, struct lr_parked out[]);
/* The park is still waiting, unanswered: its thread has stood in the park since it was found,
 * so what gputop read of its stack meanwhile is its stack. */
bool launchpark_still(struct tracee *p, const struct lr_parked *k);
/* The park of the thread whose own id is own_tid into *k; its slot, or -1 if none. */
int launchpark_find(struct tracee *p, pid_t own_tid, struct lr_parked *k);
/* Answers the park: served (the stub returns: its launch was counted) or not (the stub goes
 * on as if gputop were gone). A park given up meanwhile ignores it. 0 or -errno. */
int launchpark_answer(struct tracee *p, const struct lr_parked *k, bool served);
/* pc lies in the park's code (any copy), or right after its system call. */
bool launchpark_in(const struct tracee *p, uint64_t pc);
bool launchpark_at_syscall(const struct tracee *p, uint64_t pc);
/* The registers tid had at the park's call, its pc as if an int3 there had trapped
 * (arch_park_regs), from the words the park saved at sp: read while the thread runs or sleeps
 * in the park. 0 or -errno. */
int launchpark_regs(pid_t tid, uint64_t sp, arch_regs_t *at);

#endif
