/* hit.h — what happens when a thread stops at a probe: the API table row says which
 * arguments to read, the call's event is accounted (account.h), and the thread is sent on
 * through the out-of-line slot (entry) or back to its caller (return). No ptrace here beyond
 * memory reads and writes; the tracer sets the registers and resumes. */
#ifndef GPUTOP_HIT_H
#define GPUTOP_HIT_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h"
#include "cuda_call.h"

struct thread;
struct bp;
struct frame;
struct hit_state;
struct tracee;

/* A process's part (p->hit, base/tracee.h): what a stop costs there, its default device, the
 * returns the stub is to record; made and freed with it. Every function below acts for the
 * process p it is given (t: one of its threads). */
struct hit_state *hit_state_new(void);
void hit_state_free(struct hit_state *st);

void hit_init(struct tracee *p, uint64_t stop_cost_ns, int default_device);

/* Entry of a probed function: updates r (the pc goes to the slot). *timed is set to the
 * frame whose entry time the tracer stamps right before resuming, or NULL. */
void hit_entry(struct tracee *p, struct thread *t, const struct bp *b, arch_regs_t *r, struct frame **timed);

/* The thread came back through the trampoline at now_ns: r's pc goes to the real return
 * address. Returns the API row of the call that returned, or -1 if no call of this thread was
 * waiting for it (a bug, reported). */
int hit_return(struct tracee *p, struct thread *t, arch_regs_t *r, uint64_t now);

/* Counts the calls that came back through the return stub since the last look (retfast.h).
 * Called at every stop, before anything else, and on the tracer's tick. */
void hit_collect_returns(struct tracee *p, uint64_t now);
/* A thread's frames from index from up are gone (exit, longjmp): their rescue entries and
 * stub records are let go. */
void hit_forget_frames(struct tracee *p, struct thread *t, uint32_t from);
void hit_reset(struct tracee *p);	/* exec: no frame of the old image is left */

/* A park served without a stop (engine/park.c): what was read of the thread holds only if it
 * stood in the park all along. keep says so, and answers the park, right before anything read
 * is kept; false: nothing is (the thread went on by itself). NULL where the thread is stopped. */
struct hit_keeper {
	bool (*keep)(struct tracee *p, struct hit_keeper *g);
};

/* Launches through the launch ring (launchring.h): the stub's park for a handle not seen yet
 * (r: the thread's registers there; ex: the stub's variant), and the records of the others,
 * read now. */
void hit_launch_trap(struct tracee *p, struct thread *t, const arch_regs_t *r, bool ex, struct hit_keeper *g);
/* Whether the launch parked at r has a kernel known by name: it needs no call into the thread. */
bool hit_launch_named(struct tracee *p, const arch_regs_t *r, bool ex);
/* The call stub parked for the call's stack (--stacks): taken now, kept for its record (the
 * index-th), whose return is counted later (hit_records.c). */
void hit_call_trap(struct tracee *p, struct thread *t, const arch_regs_t *r, int index, struct hit_keeper *g);
void hit_drain_launches(struct tracee *p);
/* The outermost call of thread t (whose thread pointer is given) that the call stub recorded
 * at its entry and that has not returned at the last hit_collect_returns: decoded into *c from
 * its register arguments, its entry time in *entry_ns (monotonic). False if none. */
/* How many NCCL collectives of p are in flight at the last drain: recorded at their entry by the
 * call stub and not returned, or stopped at by the int3 path. */
int hit_collectives_in_flight(struct tracee *p);
bool hit_record_in_flight(struct tracee *p, struct thread *t, uint64_t thread_pointer, struct cuda_call *c,
			  uint64_t *entry_ns);

/* The engine's consumer of calls (cuda/cuda_call.h), which the session registers (account.h).
 * graphs_consumer (hit_graphs.c): while a stream captures, launches, copies and memsets are held
 * (its hold); at the capture's end those that became nodes of the captured graph are dropped,
 * the others counted; an executable graph's nodes are asked of the driver at its instantiation
 * or update (the thread stopped there), forgotten at its destruction. */
extern const struct cuda_consumer graphs_consumer;

/* How the CUDA graphs (hit_graphs.c) count what the stubs recorded before a capture begins or
 * ends or an executable graph is redefined: a whole drain (hit_drain.h), given by the engine's
 * set-up (it counts through account.c, which calls the graphs: no cycle). */
void graphs_set_catch_up(void (*catch_up)(struct tracee *p, uint64_t now));


/* Whether the stop just handled found t at the entry of a CUDA call of the program's own (not
 * a call a CUDA library makes inside another, nor a kernel's registration): a point where the
 * thread holds no CUDA or loader lock, so that gputop may call into the program there. Asked
 * once per stop. */
bool hit_take_top_entry(struct tracee *p, const struct thread *t);

/* Whether the stubs leave a named kernel's launches unrecorded (hit_graphs.c): yes while no
 * consumer wants launch records, no capture holds launches and --stacks launches is not asked.
 * Set where probes are planted (the first launches come before the first drain) and at each
 * drain. */
void hit_quiet_launches(struct tracee *p);

#endif
