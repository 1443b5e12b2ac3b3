/* test_probes.c — unit test of planting the probes (probe/probes.c over the real
 * probe/breakpoints.c and arch/x86_64.c) without a process: fake modules (a runtime, a driver,
 * NCCL, libc, the dynamic linker) whose functions are real x86-64 code in fake memory
 * (fake_memory.h), their symbols as a module scan would list them. Checked: which functions get a
 * jump to which stub and which an int3 (the call stub where it can take the call, an int3 where
 * the return must stop, every int3 under --trace, none under --no-int3), the bytes written (the
 * jump, or one int3 byte with the rest of the function intact) and the out-of-line slot, a
 * module's probes and its scope (CUDA or NCCL), the dynamic linker's hook and execve's, the
 * launch layer's policy (the runtime's launches off once the driver's are probed, --max-overhead,
 * GPUTOP_LAUNCH_LAYER), a jump deferred while a stopped thread stands in its bytes, and removal:
 * every byte of every function back as it was, a module gone forgotten with its slots. The
 * layers under probes.c and breakpoints.c (trampoline slots, the launch ring, the module scan,
 * symbols, the rescue table, kernels, PyTorch) are stand-ins defined here; the registers a
 * stopped thread has are the test's (the link wraps arch_get_regs: tests/Makefile). One
 * "ok"/"not ok" line per check. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "breakpoints.h"
#include "check.h"
#include "config.h"
#include "cuda_api.h"
#include "fake_memory.h"
#include "kernels.h"
#include "launchring.h"
#include "lookup.h"
#include "module_scan.h"
#include "probes.h"
#include "rescue.h"
#include "retfast.h"
#include "stats.h"
#include "symbols.h"
#include "threads.h"
#include "torch_alloc.h"
#include "tracee.h"
#include "xol.h"

/* A function's code: push %rbp; mov %rsp,%rbp; sub $0x10,%rsp; mov $0,%eax; leave; ret; nops. */
#define FUNC_SIZE 32
static const uint8_t func_code[FUNC_SIZE] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0xb8, 0x00, 0x00, 0x00, 0x00, 0xc9, 0xc3, 0x90,
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
};

/* Where things are in the fake memory. */
#define CODE_LO (FAKE_MEM + 0x1000)	/* the modules' code: [CODE_LO, CODE_HI) */
#define CODE_HI (FAKE_MEM + 0x8000)
#define SLOTS (FAKE_MEM + 0x8000)	/* out-of-line slots, ARCH_XOL_SLOT bytes each */
#define N_SLOTS 256
#define STUBS (FAKE_MEM + 0xc000)	/* the launch ring's stubs (never run here) */
#define FUNC_GAP 0x40			/* functions of a module: FUNC_GAP bytes apart */

/* ---- the modules -------------------------------------------------------------------------------- */

enum { M_CUDART, M_CUDA, M_NCCL, M_LIBC, M_RTLD, M_COUNT };

static struct module mods[M_COUNT] = {
	[M_CUDART] = { .id = 1, .path = "/fake/libcudart.so.13", .base = "libcudart.so.13",
		       .start = FAKE_MEM + 0x1000, .end = FAKE_MEM + 0x2000 },
	[M_CUDA] = { .id = 2, .path = "/fake/libcuda.so.1", .base = "libcuda.so.1",
		     .start = FAKE_MEM + 0x2000, .end = FAKE_MEM + 0x3000 },
	[M_NCCL] = { .id = 3, .path = "/fake/libnccl.so.2", .base = "libnccl.so.2",
		     .start = FAKE_MEM + 0x3000, .end = FAKE_MEM + 0x4000 },
	[M_LIBC] = { .id = 4, .path = "/fake/libc.so.6", .base = "libc.so.6",
		     .start = FAKE_MEM + 0x4000, .end = FAKE_MEM + 0x5000 },
	[M_RTLD] = { .id = 5, .path = "/fake/ld-linux-x86-64.so.2", .base = "ld-linux-x86-64.so.2",
		     .start = FAKE_MEM + 0x5000, .end = FAKE_MEM + 0x6000 },
};
static const char *const mod_funcs[M_COUNT][6] = {
	[M_CUDART] = { "cudaMalloc", "cudaLaunchKernel", "cudaStreamBeginCapture", "cudaGraphLaunch" },
	[M_CUDA] = { "cuMemAlloc_v2", "cuLaunchKernel", "cuLaunchKernelEx", "cuModuleGetFunction", "cuGraphLaunch" },
	[M_NCCL] = { "ncclAllReduce" },
};
#define CU_FUNC_GET_NAME_OFF 0x800	/* libcuda's cuFuncGetName (called, never probed) */
#define EXECVE_OFF 0x40			/* libc's execve */
#define DL_DEBUG_STATE_OFF 0x40		/* ld.so's _dl_debug_state and _r_debug */
#define R_DEBUG_OFF 0x800

static struct scan_func scan_funcs[M_COUNT][6];
static struct module_scan scans[M_COUNT];
static bool present[M_COUNT], known[M_COUNT];
static uint8_t pristine[CODE_HI - CODE_LO];	/* the code as the program had it */

/* The address of the API function name in the module that has it. */
static uint64_t fn(const char *name)
{
	for (int m = 0; m < M_COUNT; m++)
		for (int i = 0; i < 6 && mod_funcs[m][i]; i++)
			if (strcmp(mod_funcs[m][i], name) == 0)
				return mods[m].start + (uint64_t)i * FUNC_GAP;
	printf("not ok - test_probes has no function %s\n", name);
	exit(1);
}

static void make_modules(void)
{
	for (int m = 0; m < M_COUNT; m++) {
		size_t n = 0;
		for (; n < 6 && mod_funcs[m][n]; n++)
			scan_funcs[m][n] = (struct scan_func){ .off = n * FUNC_GAP, .size = FUNC_SIZE,
							       .api = row(mod_funcs[m][n]) };
		scans[m] = (struct module_scan){ .funcs = scan_funcs[m], .n_funcs = n };
		for (uint64_t off = 0; off + FUNC_SIZE <= mods[m].end - mods[m].start; off += FUNC_GAP)
			memcpy(fake_bytes(mods[m].start + off, FUNC_SIZE), func_code, FUNC_SIZE);
	}
	scans[M_CUDA].fn[SCAN_FUNC_GET_NAME] = CU_FUNC_GET_NAME_OFF + 1;
	scans[M_LIBC].fn[SCAN_EXECVE] = EXECVE_OFF + 1;
	memcpy(pristine, fake_bytes(CODE_LO, sizeof pristine), sizeof pristine);
}

/* ---- the stand-ins under probes.c and breakpoints.c ------------------------------------------- */

static bool retfast_is_ready = true;
static bool slot_used[N_SLOTS];
static int slots_freed, ring_inits, ring_n, ring_live, forgotten_modules;
static int ring_api[256], ring_stub[256];
static int scope_n[3];
static uint64_t rescue_armed[256];
static int n_rescue_armed;
static arch_regs_t stopped_regs;	/* what a stopped thread's registers hold */

int __wrap_arch_get_regs(pid_t tid, arch_regs_t *r);
int __wrap_arch_get_regs(pid_t tid, arch_regs_t *r)
{
	(void)tid;
	*r = stopped_regs;
	return 0;
}

bool xol_ready(const struct tracee *p)
{
	return true;
}

bool xol_contains(const struct tracee *p, uint64_t addr)
{
	return addr >= SLOTS && addr < SLOTS + N_SLOTS * ARCH_XOL_SLOT;
}

int xol_slot_alloc(struct tracee *p, struct thread *t, uint64_t near, uint64_t *slot_out)
{
	(void)t, (void)near;
	for (int i = 0; i < N_SLOTS; i++)
		if (!slot_used[i]) {
			slot_used[i] = true;
			*slot_out = SLOTS + (uint64_t)i * ARCH_XOL_SLOT;
			return 0;
		}
	return -ENOSPC;
}

void xol_slot_free(struct tracee *p, uint64_t slot)
{
	slot_used[(slot - SLOTS) / ARCH_XOL_SLOT] = false;
	slots_freed++;
}

int launchring_init(struct tracee *p, struct thread *t)
{
	(void)t;
	ring_inits++;
	return 0;
}

bool launchring_ready(const struct tracee *p)
{
	return ring_inits > 0;
}

uint64_t launchring_present_flag(const struct tracee *p)
{
	return 0;
}

void launchring_say_absent(struct tracee *p)
{
}

int launchring_add_probe(struct tracee *p, int api)
{
	if (ring_n == 256)
		return -1;
	ring_api[ring_n] = api;
	ring_stub[ring_n] = -1;
	ring_live++;
	return ring_n++;
}

void launchring_drop_probe(struct tracee *p, int probe)
{
	(void)probe;
	ring_live--;
}

uint64_t launchring_stub(struct tracee *p, uint64_t slot, enum lr_stub which)
{
	(void)slot;
	ring_stub[ring_n - 1] = (int)which;	/* asked right after the probe's index */
	return STUBS + (uint64_t)which * 0x100;
}

void launchring_set_scope_ranges(struct tracee *p, int scope, const uint64_t (*range)[2], int n)
{
	(void)range;
	scope_n[scope] = n;
}

int launchring_set_traps(struct tracee *p, int probe, unsigned traps)
{
	(void)probe, (void)traps;
	return 0;
}

bool retfast_ready(const struct tracee *p)
{
	return retfast_is_ready;
}

void rescue_set_flag(int slot, uint64_t addr)
{
	(void)addr;
}

/* The rescue table: what the watchdog would put back if gputop died now. */
void rescue_code_armed(int slot, uint64_t addr, uint8_t orig)
{
	(void)orig;
	for (int i = 0; i < n_rescue_armed; i++)
		if (rescue_armed[i] == addr)
			return;
	if (n_rescue_armed < 256)
		rescue_armed[n_rescue_armed++] = addr;
}

void rescue_code_disarmed(int slot, uint64_t addr)
{
	for (int i = 0; i < n_rescue_armed; i++)
		if (rescue_armed[i] == addr)
			rescue_armed[i--] = rescue_armed[--n_rescue_armed];
}

const struct module_scan *module_scan(const struct module *m)
{
	return &scans[m->id - 1];
}

uint64_t module_scan_addr(const struct module *m, uint64_t off_plus_1)
{
	return off_plus_1 ? m->start + off_plus_1 - 1 : 0;
}

int sym_open(const struct tracee *p)
{
	(void)p;
	return 0;
}

void sym_close(const struct tracee *p)
{
	(void)p;
}

uint64_t sym_find(const struct module *m, const char *name)
{
	if (m->id - 1 != M_RTLD)
		return 0;
	return strcmp(name, "_dl_debug_state") == 0 ? m->start + DL_DEBUG_STATE_OFF
	       : strcmp(name, "_r_debug") == 0	     ? m->start + R_DEBUG_OFF
						     : 0;
}

int sym_refresh(const struct tracee *p, void (*on_new)(struct module *m, void *arg),
		void (*on_gone)(struct module *m, void *arg), void *arg)
{
	for (int m = 0; m < M_COUNT; m++)
		if (known[m] && !present[m]) {
			on_gone(&mods[m], arg);
			known[m] = false;
			/* Unmapped: whatever is mapped there later holds the file's bytes again. */
			memcpy(fake_bytes(mods[m].start, mods[m].end - mods[m].start), pristine + (mods[m].start - CODE_LO),
			       mods[m].end - mods[m].start);
		}
	for (int m = 0; m < M_COUNT; m++)
		if (present[m] && !known[m]) {
			mods[m].probed = false;
			on_new(&mods[m], arg);
			known[m] = true;
		}
	return 0;
}

void kernels_add_handle_var(struct tracee *p, const struct module *m, uint64_t var_addr, const char *name)
{
	(void)m, (void)var_addr, (void)name;
}

void kernels_forget_module(struct tracee *p, const struct module *m)
{
	(void)m;
	forgotten_modules++;
}

void kernels_reset(struct tracee *p)
{
}

bool torch_is_allocator_module(const struct module *m)
{
	(void)m;
	return false;
}

void torch_on_module(struct tracee *p, const struct module *m, const uint64_t sym[TORCH_SYM_COUNT], unsigned probed_ops,
		     bool at_start)
{
	(void)p, (void)m, (void)sym, (void)probed_ops, (void)at_start;
}

void torch_on_module_gone(struct tracee *p, const struct module *m)
{
	(void)p, (void)m;
}

/* ---- the process --------------------------------------------------------------------------------- */

static struct tracee process, *tracee;	/* the test's process */

/* A fresh process pid: no module known, pristine code, default settings; its one thread,
 * stopped, stands outside every function. */
static struct thread *fresh(pid_t pid)
{
	if (process.threads) {
		breakpoints_state_free(process.breakpoints);
		probes_state_free(process.probes);
		threads_state_free(process.threads);
	}
	process = (struct tracee){ .pid = pid, .threads = threads_state_new(), .breakpoints = breakpoints_state_new(),
				   .probes = probes_state_new() };
	tracee = &process;
	fake_memory_clear();
	make_modules();
	memset(present, 0, sizeof present);
	memset(known, 0, sizeof known);
	memset(slot_used, 0, sizeof slot_used);
	slots_freed = ring_inits = ring_n = ring_live = forgotten_modules = n_rescue_armed = 0;
	memset(scope_n, 0, sizeof scope_n);
	config = (struct config){ .call_stub = true };
	retfast_is_ready = true;
	memset(&stopped_regs, 0, sizeof stopped_regs);
	stopped_regs.rip = 0x401000;
	tracee->stats_id = stats_process_new(pid, 1, "test");
	struct thread *t = threads_add(tracee, pid);
	t->state = TS_STOPPED;
	return t;
}

static bool code_is(uint64_t addr, const uint8_t *bytes, size_t n)
{
	return memcmp(fake_bytes(addr, n), bytes, n) == 0;
}

/* The function at addr is as the program had it. */
static bool pristine_at(uint64_t addr)
{
	return code_is(addr, pristine + (addr - CODE_LO), FUNC_SIZE);
}

/* A jump probe armed at addr: the entry jumps to its slot; stub: which stub it calls. */
static bool jump_armed(const char *name, int stub)
{
	struct bp *b = bp_find(tracee, fn(name));
	uint8_t jump[ARCH_JUMP_LEN];
	if (!b || b->ring < 0 || !b->armed || b->kind != BP_PROBE || b->api != row(name) || ring_stub[b->ring] != stub ||
	    ring_api[b->ring] != row(name))
		return false;
	arch_jump_encode(jump, b->addr, b->jump_slot);
	return code_is(b->addr, jump, ARCH_JUMP_LEN) && code_is(b->addr + ARCH_JUMP_LEN, func_code + ARCH_JUMP_LEN,
								FUNC_SIZE - ARCH_JUMP_LEN);
}

/* An int3 armed at addr's entry, the rest of the function intact, its slot the displaced code. */
static bool int3_armed(uint64_t addr)
{
	struct bp *b = bp_find(tracee, addr);
	return b && b->ring < 0 && b->armed && *fake_bytes(addr, 1) == arch_breakpoint[0] &&
	       code_is(addr + 1, func_code + 1, FUNC_SIZE - 1) && code_is(b->slot, func_code, b->displaced);
}

static int stops_per_call(const char *name)
{
	struct stats_snapshot s;
	if (stats_snapshot_of(process.pid, &s) < 0)
		return -2;
	int n = s.api[row(name)].stops_per_call;
	stats_snapshot_free(&s);
	return n;
}

static bool all_pristine(void)
{
	return memcmp(fake_bytes(CODE_LO, sizeof pristine), pristine, sizeof pristine) == 0;
}

/* ---- the cases ------------------------------------------------------------------------------------ */

/* The default: stubs where they can take the call, an int3 where the return must stop. */
static void stubs_and_int3s(void)
{
	struct thread *t = fresh(301);

	present[M_LIBC] = present[M_RTLD] = true;
	probes_refresh(tracee, t);
	struct bp *hook = bp_find(tracee, mods[M_RTLD].start + DL_DEBUG_STATE_OFF);
	check(hook && hook->kind == BP_RTLD && int3_armed(hook->addr) &&
		      probes_rtld_state_addr(tracee) == mods[M_RTLD].start + R_DEBUG_OFF + 24,
	      "the dynamic linker: an int3 on _dl_debug_state, r_state read at _r_debug + 24");
	struct bp *exec = bp_find(tracee, mods[M_LIBC].start + EXECVE_OFF);
	check(exec && exec->kind == BP_EXEC && int3_armed(exec->addr), "libc's execve: an int3 (the returns read first)");
	check(!probes_cuda_seen(tracee) && ring_inits == 0 && !probes_in_scope(tracee, NULL, mods[M_LIBC].start),
	      "no CUDA yet: no launch ring mapped, libc no CUDA scope");

	/* The runtime is loaded. */
	present[M_CUDART] = true;
	probes_refresh(tracee, t);
	check(probes_cuda_seen(tracee) && ring_inits == 1, "cudart: CUDA seen, the launch ring mapped at its first function");
	check(jump_armed("cudaMalloc", LR_STUB_CALL) && stops_per_call("cudaMalloc") == 0,
	      "cudaMalloc: a jump to the call stub, no stop per call");
	check(jump_armed("cudaLaunchKernel", LR_STUB_CALL) && jump_armed("cudaGraphLaunch", LR_STUB_CALL),
	      "cudaLaunchKernel, cudaGraphLaunch without libcuda: the call stub records them whole");
	check(int3_armed(fn("cudaStreamBeginCapture")) && stops_per_call("cudaStreamBeginCapture") == 2,
	      "cudaStreamBeginCapture (its return stops): an int3, 2 stops a call");
	check(probes_in_scope(tracee, NULL, fn("cudaMalloc") + 3) && !probes_in_scope(tracee, NULL, 0x401000) && scope_n[LR_SCOPE_CUDA] == 1,
	      "cudart is a CUDA module, the program is not; the stub told 1 CUDA range");

	/* The driver is loaded. */
	present[M_CUDA] = true;
	probes_refresh(tracee, t);
	check(jump_armed("cuLaunchKernel", LR_STUB_LAUNCH) && jump_armed("cuLaunchKernelEx", LR_STUB_LAUNCH_EX) &&
		      jump_armed("cuGraphLaunch", LR_STUB_LAUNCH),
	      "the driver's launches: jumps to the launch stub (cuLaunchKernelEx to its variant)");
	check(jump_armed("cuMemAlloc_v2", LR_STUB_CALL) && jump_armed("cuModuleGetFunction", LR_STUB_CALL) &&
		      probes_func_get_name(tracee) == mods[M_CUDA].start + CU_FUNC_GET_NAME_OFF,
	      "cuMemAlloc_v2 and cuModuleGetFunction (cuFuncGetName found): the call stub");
	struct bp *rt_launch = bp_find(tracee, fn("cudaLaunchKernel")), *rt_graph = bp_find(tracee, fn("cudaGraphLaunch"));
	check(rt_launch && !rt_launch->armed && pristine_at(fn("cudaLaunchKernel")) && rt_graph && !rt_graph->armed &&
		      pristine_at(fn("cudaGraphLaunch")),
	      "with the driver's launches probed, the runtime's jumps go out: the program's bytes back");
	check(jump_armed("cudaMalloc", LR_STUB_CALL), "cudaMalloc keeps its jump");
	check(scope_n[LR_SCOPE_CUDA] == 2 && probes_in_scope(tracee, NULL, fn("cuMemAlloc_v2")), "2 CUDA modules in scope");

	/* NCCL. */
	present[M_NCCL] = true;
	probes_refresh(tracee, t);
	const struct api_spec *nccl = cuda_api_get(row("ncclAllReduce"));
	check(jump_armed("ncclAllReduce", LR_STUB_CALL) && probes_in_scope(tracee, nccl, fn("ncclAllReduce")) &&
		      !probes_in_scope(tracee, NULL, fn("ncclAllReduce")) && !probes_in_scope(tracee, nccl, fn("cudaMalloc")) &&
		      scope_n[LR_SCOPE_NCCL] == 1 && scope_n[LR_SCOPE_CUDA] == 2,
	      "libnccl with NCCL functions only: NCCL's scope, not CUDA's");
	check(n_rescue_armed == 3, "the rescue table holds the 3 int3s (the two hooks, cudaStreamBeginCapture), no jump");

	/* Removal. */
	int slots_before = slots_freed, live_before = ring_live, writes_before = fake_code_writes();
	present[M_CUDA] = false;
	probes_refresh(tracee, t);
	check(!bp_find(tracee, fn("cuLaunchKernel")) && !bp_find(tracee, fn("cuMemAlloc_v2")) && bp_find(tracee, fn("cudaMalloc")),
	      "libcuda gone: its probes forgotten, the runtime's kept");
	check(fake_code_writes() == writes_before, "nothing written where its code was (it is gone)");
	check(slots_freed - slots_before == 5 && live_before - ring_live == 5 && forgotten_modules == 1,
	      "its 5 slots and ring indexes let go, its kernels forgotten");
	check(!probes_in_scope(tracee, NULL, fn("cuMemAlloc_v2")) && scope_n[LR_SCOPE_CUDA] == 1 && probes_func_get_name(tracee) == 0,
	      "its range out of scope (the stub told), cuFuncGetName no more");

	check(bp_disarm_all(tracee) == 0 && all_pristine() && n_rescue_armed == 0,
	      "every probe disarmed: every byte of every function as the program had it, nothing left to rescue");
	uint32_t it = 0;
	int armed = 0;
	for (struct bp *b; (b = bp_iter(tracee, &it));)
		armed += b->armed;
	check(armed == 0, "no probe says it is armed");

	probes_reset(tracee);
	check(!bp_find(tracee, fn("cudaMalloc")) && !probes_cuda_seen(tracee) && probes_rtld_state_addr(tracee) == 0 && all_pristine(),
	      "exec: every probe forgotten, nothing written");
}

/* --trace: an int3 on every function; the launch layer's policy on int3s. */
static void tracing(void)
{
	struct thread *t = fresh(302);
	config.tracing = true;
	present[M_CUDART] = present[M_CUDA] = true;
	probes_refresh(tracee, t);
	check(int3_armed(fn("cudaMalloc")) && int3_armed(fn("cuLaunchKernel")) && int3_armed(fn("cuMemAlloc_v2")) &&
		      ring_n == 0,
	      "--trace: an int3 on every function, no jump");
	check(stops_per_call("cudaMalloc") == 1, "cudaMalloc: one stop a call (its return through the return stub)");
	check(stops_per_call("cudaStreamBeginCapture") == 2,
	      "cudaStreamBeginCapture: 2 stops a call (its return stops at the trampoline, not the stub)");
	retfast_is_ready = false;
	present[M_NCCL] = true;
	probes_refresh(tracee, t);
	check(stops_per_call("ncclAllReduce") == 2, "without the return stub, a call with a return costs 2 stops");
	struct bp *rt = bp_find(tracee, fn("cudaLaunchKernel"));
	check(rt && !rt->armed && pristine_at(fn("cudaLaunchKernel")) && int3_armed(fn("cuLaunchKernel")),
	      "launches counted at the driver: the runtime's int3 out, the driver's in");

	probes_set_launches_armed(tracee, false);
	struct bp *drv = bp_find(tracee, fn("cuLaunchKernel"));
	check(drv && !drv->armed && pristine_at(fn("cuLaunchKernel")) && int3_armed(fn("cuGraphLaunch")),
	      "--max-overhead sheds the kernel launches' int3s; graph launches stay exact");
	probes_set_launches_armed(tracee, true);
	check(int3_armed(fn("cuLaunchKernel")), "and arms them again");

	config.launch_layer = LAUNCH_LAYER_RUNTIME;
	probes_apply_launch_policy(tracee);
	drv = bp_find(tracee, fn("cuLaunchKernel"));
	check(int3_armed(fn("cudaLaunchKernel")) && drv && !drv->armed && pristine_at(fn("cuLaunchKernel")),
	      "GPUTOP_LAUNCH_LAYER=runtime: the runtime's launches in, the driver's out");
	config.launch_layer = LAUNCH_LAYER_BOTH;
	probes_apply_launch_policy(tracee);
	check(int3_armed(fn("cudaLaunchKernel")) && int3_armed(fn("cuLaunchKernel")), "=both: both in");

	check(bp_disarm_all(tracee) == 0 && all_pristine() && n_rescue_armed == 0, "disarmed: every byte back");
}

/* --no-int3: jumps only. */
static void no_int3(void)
{
	struct thread *t = fresh(303);
	config.no_int3 = true;
	present[M_CUDART] = present[M_RTLD] = present[M_LIBC] = true;
	probes_refresh(tracee, t);
	check(jump_armed("cudaMalloc", LR_STUB_CALL) && !bp_find(tracee, fn("cudaStreamBeginCapture")) &&
		      pristine_at(fn("cudaStreamBeginCapture")),
	      "--no-int3: cudaMalloc's jump in, cudaStreamBeginCapture (it would need an int3) not probed");
	check(!bp_find(tracee, mods[M_RTLD].start + DL_DEBUG_STATE_OFF) && !bp_find(tracee, mods[M_LIBC].start + EXECVE_OFF) &&
		      n_rescue_armed == 0,
	      "no int3 on the dynamic linker's hook nor on execve");
	bp_disarm_all(tracee);
	check(all_pristine(), "disarmed: every byte back");
}

/* At an attach, a thread stopped inside a function's first bytes: its jump waits. */
static void thread_inside(void)
{
	struct thread *t = fresh(304);
	probes_defer_inside(tracee, true);
	stopped_regs.rip = fn("cudaMalloc") + 1;	/* inside the jump's 5 bytes, past the int3's */
	present[M_CUDART] = true;
	probes_refresh(tracee, t);
	check(!bp_find(tracee, fn("cudaMalloc")) && pristine_at(fn("cudaMalloc")) && probes_inside_left(tracee) == 1 &&
		      int3_armed(fn("cudaStreamBeginCapture")),
	      "a stopped thread inside cudaMalloc's first bytes: its jump waits, nothing written there");
	probes_retry_inside(tracee, t, false);
	check(!bp_find(tracee, fn("cudaMalloc")) && probes_inside_left(tracee) == 1, "still inside at the retry: it waits again");
	stopped_regs.rip = 0x401000;
	probes_retry_inside(tracee, t, false);
	check(jump_armed("cudaMalloc", LR_STUB_CALL) && probes_inside_left(tracee) == 0, "the thread moved on: the jump goes in");

	t = fresh(305);
	probes_defer_inside(tracee, true);
	stopped_regs.rip = fn("cudaMalloc") + 1;
	present[M_CUDART] = true;
	probes_refresh(tracee, t);
	probes_retry_inside(tracee, t, true);
	check(int3_armed(fn("cudaMalloc")) && probes_inside_left(tracee) == 0 && stops_per_call("cudaMalloc") == 1,
	      "inside at the last try: an int3 instead (one byte, before the thread's pc)");
	bp_disarm_all(tracee);
	check(all_pristine(), "disarmed: every byte back");
}

int main(void)
{
	if (stats_init() < 0 || arch_init() < 0) {
		printf("not ok - stats_init, arch_init (capstone)\n");
		return 1;
	}
	stubs_and_int3s();
	tracing();
	no_int3();
	thread_inside();
	breakpoints_state_free(process.breakpoints);
	probes_state_free(process.probes);
	threads_state_free(process.threads);
	stats_free();
	arch_fini();
	printf("# %d failure(s)\n", failures);
	return failures != 0;
}
