/* rescue.h — what it takes to put the program back together if gputop dies without a clean
 * detach: the program's bytes under every armed breakpoint and every return address swapped
 * for the trampoline (given to the returning threads through a lookup table, never written
 * into their stacks), mirrored into a shared mapping. Two users: the crash handler (SIGSEGV,
 * SIGABRT... in gputop) and the watchdog process, which outlives a SIGKILLed gputop and writes
 * them back through the /proc/PID/mem it inherited. */
#ifndef GPUTOP_RESCUE_H
#define GPUTOP_RESCUE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Traced processes at once, each with its table (a process beyond that is not followed). */
#define RESCUE_SLOTS 64

int rescue_init(void);		/* the shared mapping; 0 or -errno */
/* A table for a new traced process: its slot, or -1 when all are taken. Freeing stops its
 * watchdog and forgets the table. The calls below act on the table of the slot they are given
 * (the process's: struct tracee's rescue_slot); -1 (none) does nothing. */
int rescue_slot_new(void);
void rescue_slot_free(int slot);
void rescue_set_target(int slot, int mem_fd, uint64_t trampoline);
/* Where the trampoline jumps once gputop is gone, and the table the rescue fills for it
 * (xol_return_lookup): the swapped return addresses are found there by the returning threads
 * themselves, never written into a stack that runs. */
void rescue_set_lookup(int slot, uint64_t code, uint64_t table, uint32_t entries);

/* Code: the byte a rescue writes at addr (the program's, while an int3 is armed there; while a
 * jump is written or removed, the first byte of whichever instruction the bytes behind it
 * complete). Armed again, the entry takes the new byte. */
void rescue_code_armed(int slot, uint64_t addr, uint8_t orig);
void rescue_code_disarmed(int slot, uint64_t addr);
/* A word in the program the rescue sets to 0 (the launch ring's "present": its stub then never
 * traps, and its jumps can stay); 0 for none. */
void rescue_set_flag(int slot, uint64_t addr);
void rescue_forget_all(int slot);	/* exec, or a clean detach: nothing left to restore */

/* A swapped return address (ret, kept at stack_slot): returns a handle for rescue_frame_done,
 * or -1 if the table is full (that frame is then not rescued). Hot path: a few stores. */
int rescue_frame(int slot, uint64_t stack_slot, uint64_t ret);
void rescue_frame_done(int slot, int handle);

/* Writes every slot's table back (async-signal-safe: pread/pwrite only). Returns the number of
 * writes that failed. */
int rescue_restore_all(void);

/* Starts the watchdog: a process that waits for gputop to go, and if it went without saying
 * goodbye (rescue_watchdog_stop), restores the program. */
int rescue_watchdog_start(int slot, pid_t traced);
void rescue_watchdog_stop(int slot);
bool rescue_is_watchdog(pid_t pid);	/* one of gputop's watchdogs (or its guard, rescue_cycle.h) */

/* The crash handler: restore, let detach() let go of the threads we hold, die of the same
 * signal. Call it from the tracer thread: a crash in another thread asks that one (with
 * SIGRTMIN + 1) to do the rescue, since only it may use ptrace. */
void rescue_install_crash_handler(void (*detach)(void));

#endif
