/* xol.h — the trampoline page: memory gputop maps into the traced program (by making one of
 * its stopped threads run an mmap system call) to hold the return trampoline, a syscall
 * gadget, and one out-of-line slot per breakpoint where the displaced instructions run.
 * It is the only thing besides the breakpoints that gputop writes into the program. */
#ifndef GPUTOP_XOL_H
#define GPUTOP_XOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"

struct thread;
struct tracee;
struct xol_state;

/* A process's part (p->xol, base/tracee.h): its areas and slots; made and freed with it. The
 * functions below that take a process act on its areas (t: one of its threads, stopped). */
struct xol_state *xol_state_new(void);
void xol_state_free(struct xol_state *st);

/* Maps the first area. tid is stopped and every other thread too (at attach, or the exec stop
 * in launch mode): scratch is code nobody runs then (the program's entry point), borrowed
 * for the one mmap and restored. Returns 0 or -errno. */
/* How code injected into a thread is run: the engine resumes the stopped thread t of p and waits
 * until it traps at trap_addr (other stops on the way are kept for later); *r gets its
 * registers there. 0 or -errno. Set once, before xol_init. */
typedef int (*xol_runner)(struct tracee *p, struct thread *t, uint64_t trap_addr, arch_regs_t *r);
/* And how an injected system call is run: the thread, its registers set, resumes and is
 * stopped at the exit of the system call it makes (PTRACE_SYSCALL), or with exit_pc != 0, of
 * the first one whose pc is then exit_pc (a called function's own calls run on); *r gets its
 * registers there. 0 or -errno. */
typedef int (*xol_syscall_runner)(struct tracee *p, struct thread *t, uint64_t exit_pc, arch_regs_t *r);
void xol_set_runner(xol_runner run, xol_syscall_runner syscall_run);
int xol_init(struct tracee *p, struct thread *t, uint64_t scratch);
bool xol_ready(const struct tracee *p);
void xol_forget(struct tracee *p);		/* after exec: the mappings went with the old image */

uint64_t xol_trampoline(const struct tracee *p);	/* an int3 every swapped return address points to */
/* The return lookup's code (rescue.c makes the trampoline jump there once gputop is gone) and
 * its table: *entries pairs of (stack slot, return address) at *table. 0 before area 0. */
uint64_t xol_return_lookup(const struct tracee *p, uint64_t *table, uint32_t *entries);
/* Room for the return stub in the first area (retfast.c writes it there); *room: bytes. */
uint64_t xol_ret_stub(const struct tracee *p, size_t *room);
bool xol_contains(const struct tracee *p, uint64_t addr);

/* Code every area carries, at the same offset (the launch stub: a slot reaches it with a
 * rel32 call within its own area), written into the areas there are and each new one. */
int xol_set_shared_code(struct tracee *p, const uint8_t *code, size_t len);
uint64_t xol_shared_code(const struct tracee *p, uint64_t addr);	/* its copy in the area holding addr, 0 if none */
bool xol_in_shared_code(const struct tracee *p, uint64_t pc, uint64_t *offset);	/* pc in a copy: offset into it */

/* A slot for code that will live at slot_out. If near != 0, the slot must lie within 2 GiB
 * of near (a new area is mapped there through a stopped thread t when needed). */
int xol_slot_alloc(struct tracee *p, struct thread *t, uint64_t near, uint64_t *slot_out);
void xol_slot_free(struct tracee *p, uint64_t slot);

/* Runs a system call in the stopped thread t and returns its result (or -errno). */
long xol_syscall(struct tracee *p, struct thread *t, long nr, const uint64_t args[6]);
/* A private anonymous read-write mapping of size bytes in the program, through t (gputop's
 * tables there); its address, or -errno. xol_munmap takes one away: 0 or -errno. */
long xol_mmap_rw(struct tracee *p, struct thread *t, size_t size);
int xol_munmap(struct tracee *p, struct thread *t, uint64_t addr, size_t size);

/* Calls func(args...) in the stopped thread t, the way a debugger does: on a stack of our own
 * (a read-write mapping of gputop's, so the program's stack is not touched), returning to code
 * of ours that puts the thread back where it was if gputop is gone by then. *ret gets the function's return value. scratch_out (if not NULL) gets the
 * address of XOL_SCRATCH_SIZE bytes of that mapping the call may write results into (and the
 * tracer arguments: a graph's node list); pass it as an argument by giving args[i] =
 * XOL_SCRATCH. 0 or -errno. */
#define XOL_SCRATCH ((uint64_t)-2)
#define XOL_SCRATCH_SIZE 65536
int xol_call(struct tracee *p, struct thread *t, uint64_t func, const uint64_t args[6], uint64_t *ret,
	     uint64_t *scratch_out);

/* The address of xol_call's scratch (mapped through t if it is not yet), for arguments the
 * tracer writes before a call (strings: a path to dlopen). 0 or -errno. */
int xol_scratch(struct tracee *p, struct thread *t, uint64_t *addr);

/* Unmaps every area through the stopped thread t (at detach). */
int xol_unmap_all(struct tracee *p, struct thread *t);

/* The time a stop costs a call's measured duration: a stopped thread is sent through a bare
 * `ret` into the call-resume code (two system call stops, halved) and back, several times; the
 * median is kept. A gputop killed meanwhile leaves it to go back where it was by itself. It is
 * done while the first process is held at its attach: 11 times (~1.5 ms; 31 took ~4 ms of an
 * ~18 ms stop on the 2-CPU machine), enough for a median. */
#define XOL_CALIBRATION_STOPS 11
uint64_t xol_calibrate(struct tracee *p, struct thread *t);

#endif
