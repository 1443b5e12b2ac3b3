/* test_trap.c — unit test of a SIGTRAP stop (engine/trap.c) without a process: a thread of a
 * fake process (fake_tracee.h) stops at an int3 of ours — a probe's entry (with a return, or
 * entry only), the return trampoline, the return stub's trap, the dynamic linker's hook, execve —
 * at one that is disarmed or while the world stops for a detach, at a trap that is not ours, or
 * at a stub's wait (a launch to name, a call's stack). Checked: which breakpoint it was, where
 * the thread goes on (the out-of-line slot: the int3 stepped over, never taken out; the real
 * return address; the instruction again), that each stop of ours is counted once (process and
 * figures) and budgeted by its kind, that the stub's records are counted first, and that a
 * thread is let go exactly when trap.c says it is. The thread's registers are a fake one's
 * (the link wraps arch_get_regs, arch_set_regs and ptrace: tests/Makefile); the engine's
 * hit.c, account.c and the figures are the real ones. One "ok"/"not ok" line per check. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "account.h"
#include "breakpoints.h"
#include "budget.h"
#include "check.h"
#include "clock.h"
#include "config.h"
#include "fake_tracee.h"
#include "gputime.h"
#include "hit.h"
#include "kernels.h"
#include "launchring.h"
#include "lookup.h"
#include "probes.h"
#include "seccomp_watch.h"
#include "session_state.h"
#include "stats.h"
#include "stats_calls.h"
#include "test_crash.h"
#include "threads.h"
#include "tracee.h"
#include "tracee_ctl.h"
#include "tracer_internal.h"

#define APP_RET 0x401234ull		/* a return address in the program */
#define CUDA_LO 0x7e0000000000ull	/* a CUDA module: [CUDA_LO, CUDA_HI) */
#define CUDA_HI 0x7e0000100000ull
#define SP (FAKE_MEM + 0x8000)		/* the thread's stack pointer at a call's entry */
#define OUT (FAKE_MEM + 0x100)		/* out-parameters */
#define RTLD_STATE (FAKE_MEM + 0x200)	/* _r_debug.r_state */
#define TP 0x7f0000aa00ull		/* the thread's thread pointer */
#define FALLBACK_TRAP 0x7100ull		/* the return stub's int3 (retfast_fallback_trap) */
#define LAUNCH_TRAP 0x7200ull		/* the launch stub's wait (launchring_is_trap) */
#define CALL_TRAP 0x7300ull		/* the call stub's wait for a stack */
#define OOM_TRAP 0x7500ull		/* the call stub's return's wait at an out-of-memory */

/* ---- the thread's registers, and what the kernel is asked ---------------------------------- */

static struct {
	arch_regs_t r;		/* what arch_get_regs reads */
	bool gone;		/* the thread is gone: arch_get_regs fails */
	int sets;		/* arch_set_regs calls */
	uint64_t first_pc;	/* the pc the first of them wrote */
	int si_code;		/* what PTRACE_GETSIGINFO says of the trap */
	int other_ptrace;	/* ptrace requests nobody should make here */
} fake;

int __wrap_arch_get_regs(pid_t tid, arch_regs_t *r);
int __wrap_arch_set_regs(pid_t tid, const arch_regs_t *r);
long __wrap_ptrace(enum __ptrace_request req, ...);

int __wrap_arch_get_regs(pid_t tid, arch_regs_t *r)
{
	(void)tid;
	if (fake.gone)
		return -ESRCH;
	*r = fake.r;
	return 0;
}

int __wrap_arch_set_regs(pid_t tid, const arch_regs_t *r)
{
	(void)tid;
	if (!fake.sets++)
		fake.first_pc = r->rip;
	fake.r = *r;
	return 0;
}

long __wrap_ptrace(enum __ptrace_request req, ...)
{
	va_list ap;
	if (req != PTRACE_GETSIGINFO) {
		fake.other_ptrace++;
		errno = EPERM;
		return -1;
	}
	va_start(ap, req);
	(void)va_arg(ap, int);		/* tid */
	(void)va_arg(ap, void *);	/* addr: unused */
	siginfo_t *si = va_arg(ap, siginfo_t *);
	va_end(ap);
	memset(si, 0, sizeof *si);
	si->si_signo = SIGTRAP;
	si->si_code = fake.si_code;
	return 0;
}

/* ---- what trap.c tells the rest of the engine ------------------------------------------------ */

static struct {
	int released;		/* tracee_release */
	int budgeted;		/* budget_on_stop */
	enum budget_stop kind;	/* the last one's */
	int gputime_stops, gputime_execs;
	bool gputime_waits;	/* gputime_wants_stop */
	int refreshes, cuda_seen_told, crashes;
	bool cuda_seen;		/* probes_cuda_seen */
	bool refresh_finds_cuda;
	uint64_t rtld_state_addr;
	int ooms;		/* torch_dumps_at_oom */
	int seen_at_oom;	/* calls told to the consumers by then */
	struct hit_keeper *oom_keeper;
} told;

void tracee_release(struct tracee *p, struct thread *t)
{
	(void)p, (void)t;
	told.released++;
}

bool budget_active(void)
{
	return true;
}

void budget_on_stop(uint64_t held_ns, enum budget_stop what)
{
	(void)held_ns;
	told.budgeted++;
	told.kind = what;
}

void gputime_at_stop(struct tracee *p, struct thread *t)
{
	(void)p, (void)t;
	told.gputime_stops++;
}

bool gputime_wants_stop(const struct tracee *p)
{
	return told.gputime_waits;
}

void gputime_before_exec(struct tracee *p, struct thread *t)
{
	(void)p, (void)t;
	told.gputime_execs++;
}

void test_crash_now(void)
{
	told.crashes++;
}

void seccomp_watch_review(struct tracee *p, uint64_t now)
{
	(void)p, (void)now;
}

void session_set_cuda_seen(void)
{
	told.cuda_seen_told++;
}

uint64_t probes_rtld_state_addr(const struct tracee *p)
{
	return told.rtld_state_addr;
}

bool probes_cuda_seen(const struct tracee *p)
{
	return told.cuda_seen;
}

int probes_refresh(struct tracee *p, struct thread *t)
{
	(void)t;
	told.refreshes++;
	told.cuda_seen |= told.refresh_finds_cuda;
	return 0;
}

bool xol_ready(const struct tracee *p)
{
	return true;
}

uint64_t retfast_fallback_trap(const struct tracee *p)
{
	return FALLBACK_TRAP;
}

bool launchring_is_trap(const struct tracee *p, uint64_t addr, bool *ex)
{
	*ex = false;
	return addr == LAUNCH_TRAP;
}

bool launchring_is_call_trap(const struct tracee *p, uint64_t addr, uint64_t record, int *index)
{
	(void)record;
	*index = 0;
	return addr == CALL_TRAP;
}

bool launchring_is_oom_trap(const struct tracee *p, uint64_t addr)
{
	return addr == OOM_TRAP;
}

static int n_seen;

void torch_dumps_at_oom(struct tracee *p, uint64_t sp, uint64_t now, struct hit_keeper *g)
{
	(void)now, (void)sp;
	told.ooms++;
	told.seen_at_oom = n_seen;
	told.oom_keeper = g;
}

/* ---- a consumer that keeps what it is told ----------------------------------------------------- */

static struct cuda_call seen[16];
static struct tracee *seen_of[16];	/* whose call each was */

static void record(struct tracee *p, const struct cuda_call *c)
{
	if (n_seen < (int)(sizeof seen / sizeof seen[0])) {
		seen_of[n_seen] = p;
		seen[n_seen++] = *c;
	}
}

static const struct cuda_consumer recorder = { .name = "test", .call = record };

/* ---- helpers ------------------------------------------------------------------------------------ */

/* A fresh process pid with one thread (tid pid) and its figures; nothing told yet. */
static struct thread *process(pid_t pid)
{
	fake_tracee_init(pid);
	fake_cuda_module(CUDA_LO, CUDA_HI);
	hit_init(tracee, 0, 0);
	tracee->stats_id = stats_process_new(pid, 1, "test");
	struct thread *t = threads_add(tracee, pid);
	t->device = -1;
	memset(&fake, 0, sizeof fake);
	memset(&told, 0, sizeof told);
	fake.si_code = SI_KERNEL;
	n_seen = 0;
	config.crash_at = 0;
	return t;
}

/* The thread stands just after the trap at addr (the int3's pc), its stack at sp. */
static void stand_after(uint64_t addr, uint64_t sp)
{
	memset(&fake.r, 0, sizeof fake.r);
	fake.r.rip = addr + 1;
	fake.r.rsp = sp;
	fake.r.fs_base = TP;
	fake.sets = 0;
	fake.first_pc = 0;
}

static uint64_t stops_in_figures(pid_t pid)
{
	struct stats_snapshot s;
	if (stats_snapshot_of(pid, &s) < 0)
		return (uint64_t)-1;
	uint64_t n = s.stops;
	stats_snapshot_free(&s);
	return n;
}

/* ---- the cases ------------------------------------------------------------------------------------ */

/* An int3 at cudaMalloc's entry, then its return through the trampoline. */
static void entry_and_return(void)
{
	struct thread *t = process(201);
	int malloc_row = row("cudaMalloc");
	struct bp b = { .addr = 0x600000, .slot = 0x601000, .kind = BP_PROBE, .armed = true, .ring = -1,
			.api = (int16_t)malloc_row, .patch_len = 1 };
	fake_bp(&b);

	stand_after(b.addr, SP);
	fake.r.rdi = OUT;
	fake.r.rsi = 4096;
	*fake_word(SP) = APP_RET;
	bool ours = tracer_on_trap(tracee, t, now_ns());
	check(ours && fake.r.rip == b.slot,
	      "a probe's int3: ours, the thread goes on in the out-of-line slot (the int3 stepped over)");
	check(fake.first_pc == b.slot, "the first register write already leaves the int3 (before anything slow)");
	check(fake_code_writes() == 0, "nothing written to the code: the int3 stays in for the other threads");
	check(t->thread_pointer == TP, "the thread's thread pointer is taken from its registers");
	check(t->depth == 1 && *fake_word(SP) == FAKE_TRAMPOLINE,
	      "entry of a call with a return: a frame, its return address swapped for the trampoline");
	check(tracee->stops == 1 && stops_in_figures(201) == 1, "one stop counted, in the process and the figures");
	check(told.released == 1 && told.budgeted == 1 && told.kind == STOP_WORK && told.gputime_stops == 1,
	      "the thread let go once; the stop budgeted as work; --gpu-time told of it");

	/* The call returns 0 through the trampoline, its pointer written. */
	*fake_word(OUT) = 0x10000000;
	stand_after(FAKE_TRAMPOLINE, SP + 8);
	fake.r.rax = 0;
	ours = tracer_on_trap(tracee, t, now_ns());
	check(ours && fake.r.rip == APP_RET && t->depth == 0,
	      "the trampoline: ours, the thread goes back to the real return address, the frame gone");
	struct stats_snapshot s = snap(201);
	check(s.api[malloc_row].calls == 1 && s.live_count == 1 && s.live_bytes[MEM_DEVICE] == 4096 && n_seen == 1 &&
		      seen[0].returned && seen[0].alloc.ptr == 0x10000000 && seen_of[0] == tracee,
	      "the call is counted at its return: 4096 bytes live at the pointer it wrote, told as the process's");
	stats_snapshot_free(&s);
	check(tracee->stops == 2 && stops_in_figures(201) == 2 && told.released == 2 && told.budgeted == 2 &&
		      told.kind == STOP_WORK,
	      "the return's stop counted and budgeted as work too; the thread let go");
	check(told.ooms == 0, "a success: no out-of-memory's state read");


	/* Again, returning through the return stub's own int3 (a return it has no record for). */
	stand_after(b.addr, SP);
	fake.r.rdi = OUT;
	fake.r.rsi = 64;
	*fake_word(SP) = APP_RET + 4;
	tracer_on_trap(tracee, t, now_ns());
	stand_after(FALLBACK_TRAP, SP + 8);
	ours = tracer_on_trap(tracee, t, now_ns());
	check(ours && fake.r.rip == APP_RET + 4 && t->depth == 0 && n_seen == 2,
	      "the return stub's int3 is a return like the trampoline's: back to the caller, counted");
	check(tracee->stops == 4 && told.released == 4, "each of the two stops counted once");

	/* Out of memory (error 2), then another error (1): the state read at the first only, the
	 * thread still stopped at its return, the failed call told to the consumers first. */
	for (uint64_t err = 2; err >= 1; err--) {
		stand_after(b.addr, SP);
		fake.r.rdi = OUT;
		fake.r.rsi = 1ull << 40;
		*fake_word(SP) = APP_RET;
		tracer_on_trap(tracee, t, now_ns());
		stand_after(FAKE_TRAMPOLINE, SP + 8);
		fake.r.rax = err;
		int seen_before = n_seen, released = told.released;
		tracer_on_trap(tracee, t, now_ns());
		if (err == 2)
			check(told.ooms == 1 && told.seen_at_oom == seen_before + 1 && !told.oom_keeper &&
				      told.released == released + 1,
			      "a return out of memory through the trampoline: the state read at that stop, after the "
			      "failed call was told, before the thread was let go");
		else
			check(told.ooms == 1, "another error: no out-of-memory's state read");
	}
}

/* An int3 at cuLaunchKernel, probed at its entry only; the stub's records counted first. */
static void entry_only(void)
{
	struct thread *t = process(202);
	int launch_row = row("cuLaunchKernel");
	struct bp b = { .addr = 0x602000, .slot = 0x603000, .kind = BP_PROBE, .armed = true, .ring = -1,
			.api = (int16_t)launch_row, .patch_len = 1 };
	fake_bp(&b);
	kernels_learn_name(tracee, 0xabc, "k");

	/* A cudaFree the call stub recorded before this stop. */
	struct lr_call rec = { .key = 1, .ret = APP_RET, .probe = (uint64_t)row("cudaFree") + 1, .thread = TP,
			       .entry_tsc = 10, .ret_tsc = 20, .state = LR_CALL_RETURNED, .arg = { 0x1234 } };
	fake_calls(&rec, 1, NULL, 0);
	stand_after(b.addr, SP);
	fake.r.rdi = 0xabc, fake.r.rsi = 8, fake.r.rdx = 1, fake.r.rcx = 1, fake.r.r8 = 32, fake.r.r9 = 1;
	*fake_word(SP) = APP_RET;
	*fake_word(SP + 8) = 1;	/* blockDimZ */
	bool ours = tracer_on_trap(tracee, t, now_ns());
	check(ours && fake.r.rip == b.slot && t->depth == 0 && *fake_word(SP) == APP_RET,
	      "an entry-only probe: on into the slot, no frame, the return address left alone");
	check(n_seen == 2 && seen[0].op == OP_FREE && seen[1].op == OP_LAUNCH && seen[1].launch.grid[0] == 8 &&
		      seen[1].launch.block[0] == 32,
	      "the stub's recorded call is counted first, then the launch with its dims");
	struct stats_snapshot s = snap(202);
	check(s.launches == 1 && s.stops == 1 && told.kind == STOP_LAUNCH && told.released == 1,
	      "one launch, one stop, budgeted as a launch; the thread let go");
	stats_snapshot_free(&s);

	/* GPUTOP_TEST_CRASH: the robustness tests' crash comes at the stop it names. */
	config.crash_at = 2;
	stand_after(b.addr, SP);
	fake.r.rdi = 0xabc;
	tracer_on_trap(tracee, t, now_ns());
	check(told.crashes == 1 && tracee->stops == 2, "GPUTOP_TEST_CRASH=2: the crash asked for at the 2nd stop");
}

/* Traps that are not a hit: not ours, a probe disarmed, a detach, an ambiguous origin, a
 * thread gone. */
static void not_a_hit(void)
{
	struct thread *t = process(203);
	int malloc_row = row("cudaMalloc");
	struct bp b = { .addr = 0x600000, .slot = 0x601000, .kind = BP_PROBE, .armed = true, .ring = -1,
			.api = (int16_t)malloc_row, .patch_len = 1 };
	fake_bp(&b);

	stand_after(0x650000, SP);
	bool ours = tracer_on_trap(tracee, t, now_ns());
	check(!ours && fake.sets == 0 && tracee->stops == 0 && told.released == 0 && told.budgeted == 0,
	      "a trap where gputop has no breakpoint: not ours (delivered), nothing written, not counted");

	b.armed = false;
	stand_after(b.addr, SP);
	*fake_word(SP) = APP_RET;
	ours = tracer_on_trap(tracee, t, now_ns());
	check(ours && fake.r.rip == b.addr && t->depth == 0 && *fake_word(SP) == APP_RET,
	      "a probe disarmed since it trapped: the program's instruction runs again, no call begins");
	check(tracee->stops == 0 && told.released == 1 && n_seen == 0, "not counted as a stop; the thread let go");

	b.armed = true;
	tracee->stopping_world = true;
	t->want_stop = true;
	stand_after(b.addr, SP);
	ours = tracer_on_trap(tracee, t, now_ns());
	check(ours && fake.r.rip == b.addr && fake.sets == 1 && t->depth == 0 && tracee->stops == 0,
	      "a hit while detaching: back to the instruction, never into the slot; no call, no stop");
	tracee->stopping_world = false;
	t->want_stop = false;

	/* Leaving the slot lands at addr + 1: only the signal's origin tells a hit. */
	b.ambiguous = true;
	fake.si_code = SI_USER;	/* kill(pid, SIGTRAP) of the program's own */
	stand_after(b.addr, SP);
	ours = tracer_on_trap(tracee, t, now_ns());
	check(!ours && fake.sets == 0 && t->depth == 0 && tracee->stops == 0,
	      "an ambiguous probe, a SIGTRAP someone sent: not ours, nothing written");
	fake.si_code = SI_KERNEL;
	stand_after(b.addr, SP);
	fake.r.rdi = OUT;
	ours = tracer_on_trap(tracee, t, now_ns());
	check(ours && fake.r.rip == b.slot && t->depth == 1 && tracee->stops == 1,
	      "an ambiguous probe, an int3's trap (SI_KERNEL): a hit");
	check(fake.other_ptrace == 0, "no ptrace request but PTRACE_GETSIGINFO made by the stops");

	fake.gone = true;
	int released = told.released;
	check(tracer_on_trap(tracee, t, now_ns()) && tracee->stops == 1 && told.released == released,
	      "a thread gone before its registers are read: handled, not counted, not let go");
}

/* The dynamic linker's hook and execve. */
static void rtld_and_exec(void)
{
	struct thread *t = process(204);
	struct bp rtld = { .addr = 0x610000, .slot = 0x611000, .kind = BP_RTLD, .armed = true, .ring = -1, .api = -1 },
		  exec = { .addr = 0x620000, .slot = 0x621000, .kind = BP_EXEC, .armed = true, .ring = -1, .api = -1 };
	fake_bp(&rtld);
	fake_bp(&exec);
	told.rtld_state_addr = RTLD_STATE;
	told.refresh_finds_cuda = true;

	*(int32_t *)(void *)fake_word(RTLD_STATE) = 1;	/* RT_ADD: the list is changing */
	stand_after(rtld.addr, SP);
	bool ours = tracer_on_trap(tracee, t, now_ns());
	check(ours && fake.r.rip == rtld.slot && told.refreshes == 0,
	      "_dl_debug_state while a library is being added: on into the slot, modules not looked at yet");
	check(tracee->stops == 1 && told.kind == STOP_OTHER && told.gputime_stops == 0 && told.released == 1,
	      "counted as a stop of gputop's own (budget: other), no --gpu-time load there");

	*(int32_t *)(void *)fake_word(RTLD_STATE) = 0;	/* RT_CONSISTENT */
	stand_after(rtld.addr, SP);
	tracer_on_trap(tracee, t, now_ns());
	check(told.refreshes == 1 && told.cuda_seen_told == 1 && fake.r.rip == rtld.slot,
	      "once the list is consistent: the modules looked at again; CUDA found is told to the session");
	stand_after(rtld.addr, SP);
	tracer_on_trap(tracee, t, now_ns());
	check(told.refreshes == 2 && told.cuda_seen_told == 1, "CUDA seen before: told once only");

	/* Launches still in the ring are counted before the image goes. */
	int launch_row = row("cuLaunchKernel");
	fake_ring(launch_row, (uint64_t[8]){ (uint64_t)launch_row + 1, 0xabc, 1, 1, 1, 1, 1, 1 }, 3, 0, 0);
	stand_after(exec.addr, SP);
	ours = tracer_on_trap(tracee, t, now_ns());
	struct stats_snapshot s = snap(204);
	check(ours && fake.r.rip == exec.slot && told.gputime_execs == 1 && s.launches == 3 && tracee->stops == 4,
	      "execve's hook: the ring's 3 launches counted first, --gpu-time told, on into the slot");
	stats_snapshot_free(&s);
}

/* A keeper of a park served in place (hit.h): counts its questions, answers as told. */
static bool keeper_keep(struct tracee *p, struct hit_keeper *g)
{
	struct { struct hit_keeper g; int asked; bool answer; } *gt = (void *)g;
	(void)p;
	gt->asked++;
	return gt->answer;
}

/* What a stub waits for: a launch of a handle not seen yet, a call's stack. */
static void stub_waits(void)
{
	struct thread *t = process(205);
	int launch_row = row("cuLaunchKernel");
	/* The launch probe is a jump probe, ring index = its row (fake_tracee's launchring_probe_api). */
	struct bp b = { .addr = 0x630000, .slot = 0x631000, .kind = BP_PROBE, .armed = true, .ring = (int16_t)launch_row,
			.api = (int16_t)launch_row, .patch_len = 5 };
	fake_bp(&b);
	kernels_learn_name(tracee, 0xdef, "first");

	/* At the stub's wait: rcx, rdx, rax pushed at sp (x86_64_launch.S), the call's own stack
	 * 32 bytes above: the return address, then the 7th argument. */
	uint64_t sp = SP - 32;
	arch_regs_t r;
	memset(&r, 0, sizeof r);
	r.rsp = sp;
	r.r11 = (uint64_t)launch_row;	/* the probe's index */
	r.rdi = 0xdef, r.rsi = 4, r.r8 = 128, r.r9 = 1;
	*fake_word(sp) = 1;		/* gridDimZ (rcx) */
	*fake_word(sp + 8) = 1;		/* gridDimY (rdx) */
	*fake_word(SP) = APP_RET;
	*fake_word(SP + 8) = 1;		/* blockDimZ */
	bool ours = tracer_on_stub_wait(tracee, t, &r, LAUNCH_TRAP, now_ns(), NULL);
	check(ours && n_seen == 1 && seen[0].op == OP_LAUNCH && seen[0].launch.grid[0] == 4 &&
		      seen[0].launch.block[0] == 128,
	      "the launch stub's wait: the launch counted from its entry's registers, grid 4, block 128");
	check(tracee->stops == 1 && stops_in_figures(205) == 1 && told.kind == STOP_OTHER && told.gputime_stops == 1,
	      "one stop, budgeted as gputop's own (it cannot be shed); --gpu-time told");
	check(told.released == 0 && fake.sets == 0,
	      "the thread is not let go, its registers not written (park.c answers the slot)");

	ours = tracer_on_stub_wait(tracee, t, &r, CALL_TRAP, now_ns(), NULL);
	check(ours && tracee->stops == 2 && told.released == 0 && n_seen == 1,
	      "the call stub's wait for a stack: one stop, no call counted there (its record is)");

	struct keeper_test0 { struct hit_keeper g; int asked; bool answer; } g0 = { { keeper_keep }, 0, true };
	int ooms = told.ooms;
	ours = tracer_on_stub_wait(tracee, t, &r, OOM_TRAP, now_ns(), &g0.g);
	check(ours && told.ooms == ooms + 1 && told.oom_keeper == &g0.g && tracee->stops == 2 && told.released == 0,
	      "the call stub's return's wait at an out-of-memory: the state read there, the park's keeper handed on, "
	      "no stop counted, the thread not let go");
	check(tracer_stub_wait_in_place(tracee, &r, OOM_TRAP), "an out-of-memory's state: served in place");

	ours = tracer_on_stub_wait(tracee, t, &r, 0x7400, now_ns(), NULL);
	check(!ours && tracee->stops == 2, "a wait that is neither: not one, not counted");

	/* Served in place (park.c): what needs no code run in the thread. */
	check(tracer_stub_wait_in_place(tracee, &r, CALL_TRAP), "a stack: served in place");
	check(tracer_stub_wait_in_place(tracee, &r, LAUNCH_TRAP), "a launch of a kernel named already: in place");
	told.gputime_waits = true;
	check(!tracer_stub_wait_in_place(tracee, &r, LAUNCH_TRAP), "not while --gpu-time waits to load at a stop");
	told.gputime_waits = false;
	arch_regs_t unnamed = r;
	unnamed.rdi = 0x5150;	/* no name learnt */
	check(!tracer_stub_wait_in_place(tracee, &unnamed, LAUNCH_TRAP) && !tracer_stub_wait_in_place(tracee, &r, 0x7400),
	      "not a launch of a kernel with no name yet (the driver is asked, in the thread), nor a wait that is none");

	/* In place, what was read is kept only if the keeper says the thread stood in the park. */
	struct keeper_test { struct hit_keeper g; int asked; bool answer; } gt = { { keeper_keep }, 0, false };
	int gputime_before = told.gputime_stops;
	ours = tracer_on_stub_wait(tracee, t, &r, LAUNCH_TRAP, now_ns(), &gt.g);
	check(ours && gt.asked == 1 && n_seen == 1 && told.gputime_stops == gputime_before,
	      "in place, the thread gone on meanwhile: the launch not counted here (it records it), "
	      "--gpu-time not told (no stop)");
	gt.answer = true;
	ours = tracer_on_stub_wait(tracee, t, &r, LAUNCH_TRAP, now_ns(), &gt.g);
	check(ours && gt.asked == 2 && n_seen == 2 && seen[1].op == OP_LAUNCH && told.released == 0 && fake.sets == 0,
	      "in place, still parked: counted once the keeper said so; nothing written to the thread");
}

int main(void)
{
	if (stats_init() < 0) {
		printf("not ok - stats_init\n");
		return 1;
	}
	account_add(&recorder);
	account_add(&stats_consumer);
	entry_and_return();
	entry_only();
	not_a_hit();
	rtld_and_exec();
	stub_waits();
	account_clear();
	stats_free();
	printf("# %d failure(s)\n", failures);
	return failures != 0;
}
