/* launchring.h — launches without a stop. A driver launch function (cuLaunchKernel,
 * cuLaunchKernelEx...) whose entry allows it is patched with a jump to its slot, which calls
 * the launch stub (arch/<arch>_launch.S): the stub appends the call's arguments to the launch
 * ring, a read-write mapping of gputop's in the program, and the call goes on. The tracer
 * drains the ring on its tick. The first launch of each function handle parks instead (the
 * stub holds the thread for gputop, launchpark.h), so the kernel is named while the thread stands
 * at the call (a filter of seen handles in the ring).
 * A full ring drops records but counts them per probe, at once: the launch count stays exact,
 * and a late gputop never holds the program up. The tracer drains it every LR_DRAIN_NS, every
 * LR_DRAIN_HOT_NS while a ring fills fast (launchring_filling). */
#ifndef GPUTOP_LAUNCHRING_H
#define GPUTOP_LAUNCHRING_H

#define LR_DRAIN_NS 10000000ull
#define LR_DRAIN_HOT_NS 1000000ull
/* A park waits for the tracer only if it drained this recently: a frozen, starved or dead
 * gputop is never waited for. */
#define LR_FRESH_NS 250000000ull
/* A parked thread (arch_park) sleeps this long at a time between its looks at gputop's
 * heartbeat, its `present` word and its slot: gputop, which serves most parks without a stop,
 * cannot wake it (a futex of another process's private memory), so this is what an answer
 * waits to be seen (1 ms made --stacks allocs' loop 3 times slower than 0.1). Without a time
 * stamp counter a park gives up after PARK_MAX_WAITS (x86_64_launch.S: 2000, 0.2 s) waits of a
 * heartbeat standing still. */
#define LR_PARK_WAIT_NS 100000

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "stub_layout.h"

struct thread;
struct tracee;
struct launchring_state;

#define LR_PROBES 1024		/* probes with a ring index */
#define LR_WORDS 8		/* a record: probe + 1, six register arguments, first stack arg */

/* A process's part (p->launchring, base/tracee.h): its ring and the probes' indexes in it; made
 * and freed with it. Every function below but launchring_io acts on the ring of the process p
 * it is given. */
struct launchring_state *launchring_state_new(void);
void launchring_state_free(struct launchring_state *st);

/* Maps the ring and puts the stub into every trampoline area, through the stopped thread t
 * (after xol_init). Does nothing where GPUTOP_LAUNCH_RING=0. 0 or -errno. */
int launchring_init(struct tracee *p, struct thread *t);
bool launchring_ready(const struct tracee *p);
bool launchring_used(const struct tracee *p);	/* a launch probe used it at some time in this session */
void launchring_forget(struct tracee *p);	/* exec: the mapping went with the old image */
int launchring_unmap(struct tracee *p, struct thread *t);	/* detach; after the last drain */
uint64_t launchring_base(const struct tracee *p);	/* the ring's address in the program, 0 if none */
/* Reads or writes the program's memory through a thread that has some (0 or -errno). */
int launchring_io(const struct tracee *p, uint64_t addr, void *buf, size_t len, bool write);
uint64_t launchring_present_flag(const struct tracee *p);	/* the word the rescue clears: no more parks */
/* The heartbeat (LR_OFF_HEARTBEAT): written at every drain, and by a park served in place;
 * launchring_beat_ns: when it was last written (clock.h's now_ns), 0 never. */
void launchring_beat(struct tracee *p);
uint64_t launchring_beat_ns(const struct tracee *p);
void launchring_say_absent(struct tracee *p);
/* Whether a kernel launch of a named handle leaves a record (false) or is only counted in the
 * tallies with its dimensions (true: arch/tally.h's quiet word); a new ring records. */
void launchring_set_quiet(struct tracee *p, bool quiet);
bool launchring_quiet(const struct tracee *p);	/* detach: the stubs park no more, from now on */
/* Whether a PyTorch Block call's success leaves a record (false) or is kept only in the
 * tallies' table of Blocks (true: arch/tally.h's quiet_blocks word), in this ring and those
 * made later. */
void launchring_set_quiet_blocks(struct tracee *p, bool quiet);
bool launchring_quiet_blocks(const struct tracee *p);

/* The stub a jump probe calls: a launch (its function handle in the first argument), a launch
 * with its dimensions by pointer (the handle in the second), or a call recorded at entry and
 * return (the call records, below). */
enum lr_stub { LR_STUB_LAUNCH, LR_STUB_LAUNCH_EX, LR_STUB_CALL };
/* A ring index for a probe of API row api; -1 when none is left. */
/* A ring index for a probe of the API table's row api; the call stub's return half learns
 * where the row's out-parameters are. -1 if none is left. */
int launchring_add_probe(struct tracee *p, int api);
void launchring_drop_probe(struct tracee *p, int probe);
/* The modules holding the probed functions of a scope (LR_SCOPE_CUDA, LR_SCOPE_NCCL): a call of
 * a probe of that scope made from inside one of them, while a recorded call of the same thread
 * and scope is in flight, is not recorded (the stub knows it is part of that call). range[i]:
 * [lo, hi); up to LR_SCOPE_RANGES are used (the others: recorded, and told apart by gputop). */
#define LR_SCOPE_CUDA 1
#define LR_SCOPE_NCCL 2
void launchring_set_scope_ranges(struct tracee *p, int scope, const uint64_t (*range)[2], int n);
int launchring_probe_api(const struct tracee *p, int probe);	/* -1 if none */
int launchring_probes(const struct tracee *p);	/* indexes handed out (0 without a ring) */
uint32_t launchring_generation(const struct tracee *p);	/* changes with each new mapping */
/* The stub a jump probe's slot at slot calls (the copy in slot's own area). */
uint64_t launchring_stub(struct tracee *p, uint64_t slot, enum lr_stub which);
bool launchring_in_stub(const struct tracee *p, uint64_t pc);
/* addr (the call of a park, launchpark.h) is the stub's wait for a handle not seen yet; the
 * thread goes on once the tracer has counted and named the launch. *ex: the stub's variant. */
bool launchring_is_trap(const struct tracee *p, uint64_t addr, bool *ex);
/* addr is the call stub's park for a stack (--stacks): the call record is at
 * arch_call_trap_record, its index in *index (-1 if it is not one). */
bool launchring_is_call_trap(const struct tracee *p, uint64_t addr, uint64_t record, int *index);
/* addr is the call stub's park at a return out of memory (an allocation's error 2). */
bool launchring_is_oom_trap(const struct tracee *p, uint64_t addr);
/* Where the call stub parks at the calls of probe (LR_TRAP_* of stub_layout.h): at the entry,
 * so that their stacks can be taken; at a return out of memory, so that the state of that
 * instant can be read. 0: nowhere. */
int launchring_set_traps(struct tracee *p, int probe, unsigned traps);
/* The handle is named now: later launches of it go through the ring. */
void launchring_seen(struct tracee *p, uint64_t handle);
/* The handle's next launch parks again (--stacks launches: a sampled launch site). */
void launchring_unsee(struct tracee *p, uint64_t handle);

/* Reads what the ring holds and frees it: on_record(api, words) per launch in ring order,
 * on_lost(api, n) for launches the full ring dropped and calls the call stub found no record
 * for. */
void launchring_drain(struct tracee *p, void (*on_record)(int api, const uint64_t *w, void *arg),
		      void (*on_lost)(int api, uint64_t n, void *arg), void *arg);
/* A drain of the last 100 ms took a sixteenth of a ring or more: drain every LR_DRAIN_HOT_NS. */
bool launchring_filling(const struct tracee *p, uint64_t now);

/* Call records (arch/x86_64_launch.S, the call stub): one per driver call in flight. */
struct lr_call {
	uint64_t key;		/* the sp the call returns with; 0 = free */
	uint64_t ret;		/* its return address */
	uint64_t probe;		/* ring index + 1 */
	uint64_t arg[6];	/* the six register arguments */
	uint64_t thread;	/* %fs:0 */
	uint64_t entry_tsc, ret_tsc;
	uint64_t retval;
	uint64_t state;		/* LR_CALL_* */
	uint64_t out_value;	/* what the out-parameters point to, at a successful return */
	uint64_t out2_value;
};
#define LR_CALL_IN_FLIGHT 1
#define LR_CALL_RETURNED 2
bool launchring_has_calls(const struct tracee *p);	/* some probe uses the call stub */
/* The calls that returned since the last look, in the order they returned, into out (room for
 * LR_DONE_CAP), taken from the calls' ring; returns how many. The calls still in flight go to
 * in_flight (room for LR_CALL_RECORDS), *n_in_flight of them: a call made inside one of them is
 * part of it. The api of each: launchring_probe_api(p, probe - 1). Calls the full ring dropped are
 * counted lost by launchring_drain. */
int launchring_take_calls(struct tracee *p, struct lr_call *out, struct lr_call *in_flight, int *n_in_flight);
/* Detach, every thread stopped: the calls still in flight get their return addresses back. */
void launchring_restore_calls(struct tracee *p);

#endif
