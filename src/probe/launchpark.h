/* launchpark.h — the park slots of the launch ring (arch_park, arch/x86_64_launch.S). Where a
 * stub wants gputop (a kernel to name at its first launch, a stack to take) it holds the thread
 * in a slot, sleeping a millisecond at a time, only while gputop is there and drains; it used
 * to trap instead, and a gputop killed just before that trap (the watchdog not yet done) left
 * the program to die of SIGTRAP. A parked thread whose gputop is gone, frozen or late gives up
 * and goes on as without gputop. The engine (engine/park.c) finds the parked threads here, stops
 * each with PTRACE_INTERRUPT (an event stop: a tracer that dies leaves it running) and serves
 * it as the trap was served. */
#ifndef GPUTOP_LAUNCHPARK_H
#define GPUTOP_LAUNCHPARK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"

struct tracee;

/* A slot holds the thread's id as gettid() gave it in the program: in the program's own PID
 * namespace, which is not gputop's in a container seen from the node (threads_find_own). */
struct lr_parked {
	int slot;
	pid_t own_tid;
};

/* The threads parked now (up to LR_PARK_SLOTS into out); how many. */
int launchpark_waiting(struct tracee *p, struct lr_parked out[]);
/* The slot the thread whose own id is own_tid is parked in, -1 if none; *sp: where its
 * registers are. Read while it is stopped, the answer stands: nothing but gputop changes a
 * waiting slot then. */
int launchpark_slot_of(struct tracee *p, pid_t own_tid, uint64_t *sp);
/* Answers the park: served (the stub returns: its launch was counted) or not (the stub goes
 * on as if gputop were gone). 0 or -errno. */
int launchpark_answer(struct tracee *p, int slot, bool served);
/* pc lies in the park's code (any copy), or right after its system call. */
bool launchpark_in(const struct tracee *p, uint64_t pc);
bool launchpark_at_syscall(const struct tracee *p, uint64_t pc);
/* The registers tid had at the park's call, its pc as if an int3 there had trapped
 * (arch_park_regs), from now (its registers in the park) and the words at sp. 0 or -errno. */
int launchpark_regs(pid_t tid, const arch_regs_t *now, uint64_t sp, arch_regs_t *at);

#endif
