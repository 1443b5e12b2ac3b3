/* probes.c — planting the breakpoints: module scan, the dynamic linker hook, launch policy. */
#define _GNU_SOURCE
#include "probes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "breakpoints.h"
#include "clock.h"
#include "config.h"
#include "cuda_api.h"
#include "graph_query.h"
#include "kernels.h"
#include "launchring.h"
#include "log.h"
#include "module_scan.h"
#include "rescue.h"
#include "retfast.h"
#include "stats.h"
#include "symbols.h"
#include "threads.h"
#include "torch_alloc.h"
#include "tracee.h"
#include "xol.h"

#define CUDA_MODULES_MAX 64
#define INSIDE_MAX 64
struct range {
	uint64_t start, end;
	uint32_t module;
};

/* The process's part (p->probes). */
struct probes_state {
	bool cuda_seen;
	bool driver_launch_probed;
	bool launches_armed;	/* true until --max-overhead disarms them */
	uint64_t rtld_state_addr;
	uint64_t func_get_name, kernel_get_name;
	uint64_t graph_fn[GQ_FN_COUNT];	/* what a graph holds, asked of the driver */
	/* The modules holding probed functions: a call made from inside one of them, while a
	 * traced call of the same thread is in flight, is part of that call (cudart calling the
	 * driver). */
	struct range cuda_modules[CUDA_MODULES_MAX];
	int n_cuda_modules;
	struct range nccl_modules[CUDA_MODULES_MAX];	/* the modules holding probed NCCL functions */
	int n_nccl_modules;
	bool ring_failed;	/* mapping the launch ring failed: not tried again */
	/* Functions whose jump waits (probes_retry_inside): a stopped thread stood inside their
	 * first bytes when they were probed at an attach. */
	struct inside {
		uint64_t addr, size;
		int api;
		uint32_t module;
	} inside[INSIDE_MAX];
	int n_inside;
	bool defer_inside;	/* probes_defer_inside: such a jump waits instead of an int3 */
	bool refreshed;		/* the process's modules were looked at once: a module found later was
				 * loaded while gputop was there */
};

struct probes_state *probes_state_new(void)
{
	struct probes_state *st = calloc(1, sizeof *st);
	if (st)
		st->launches_armed = true;
	return st;
}

void probes_state_free(struct probes_state *st)
{
	free(st);
}

static bool in_ranges(const struct range *r, int n, uint64_t addr)
{
	for (int i = 0; i < n; i++)
		if (addr - r[i].start < r[i].end - r[i].start)
			return true;
	return false;
}

bool probes_in_scope(const struct tracee *p, const struct api_spec *s, uint64_t addr)
{
	const struct probes_state *st = p->probes;
	if (s && s->layer == LAYER_TORCH)	/* PyTorch's allocator: never part of another call */
		return false;
	if (s && s->layer == LAYER_NCCL)
		return in_ranges(st->nccl_modules, st->n_nccl_modules, addr);
	return in_ranges(st->cuda_modules, st->n_cuda_modules, addr);
}

static void forget_module(struct range *r, int *n, uint32_t id)
{
	for (int i = 0; i < *n; i++)
		if (r[i].module == id)
			r[i--] = r[--*n];
}

/* The call stub learns the scopes' modules (launchring_set_scope_ranges). */
static void tell_stub_scopes(struct tracee *p)
{
	const struct probes_state *st = p->probes;
	uint64_t r[CUDA_MODULES_MAX][2];
	for (int i = 0; i < st->n_cuda_modules; i++)
		r[i][0] = st->cuda_modules[i].start, r[i][1] = st->cuda_modules[i].end;
	launchring_set_scope_ranges(p, LR_SCOPE_CUDA, (const uint64_t (*)[2])r, st->n_cuda_modules);
	for (int i = 0; i < st->n_nccl_modules; i++)
		r[i][0] = st->nccl_modules[i].start, r[i][1] = st->nccl_modules[i].end;
	launchring_set_scope_ranges(p, LR_SCOPE_NCCL, (const uint64_t (*)[2])r, st->n_nccl_modules);
}

uint64_t probes_func_get_name(const struct tracee *p)
{
	const struct probes_state *st = p->probes;
	return st->func_get_name;
}

uint64_t probes_kernel_get_name(const struct tracee *p)
{
	const struct probes_state *st = p->probes;
	return st->kernel_get_name;
}

const uint64_t *probes_graph_fns(const struct tracee *p)
{
	const struct probes_state *st = p->probes;
	return st->graph_fn;
}

bool probes_cuda_seen(const struct tracee *p)
{
	const struct probes_state *st = p->probes;
	return st->cuda_seen;
}

uint64_t probes_rtld_state_addr(const struct tracee *p)
{
	const struct probes_state *st = p->probes;
	return st->rtld_state_addr;
}

void probes_reset(struct tracee *p)
{
	struct probes_state *st = p->probes;
	bp_forget_all(p);
	kernels_reset(p);
	st->cuda_seen = st->driver_launch_probed = st->refreshed = false;
	st->n_cuda_modules = st->n_nccl_modules = 0;
	st->rtld_state_addr = st->func_get_name = st->kernel_get_name = 0;
	memset(st->graph_fn, 0, sizeof st->graph_fn);
}

static bool launch_wanted(const struct tracee *p, const struct api_spec *spec)
{
	const struct probes_state *st = p->probes;
	if (!(spec->flags & API_LAUNCH_PROBE))
		return true;
	if (!st->launches_armed && spec->op == OP_LAUNCH)
		return false;	/* --max-overhead samples kernel launches; graph launches stay exact */
	if (config.launch_layer == LAUNCH_LAYER_BOTH)
		return true;
	bool at_driver = st->driver_launch_probed;
	if (config.launch_layer == LAUNCH_LAYER_RUNTIME)
		at_driver = false;
	else if (config.launch_layer == LAUNCH_LAYER_DRIVER)
		at_driver = true;
	return (spec->layer == LAYER_DRIVER) == at_driver;
}

/* A jump probe: armed, except a runtime launch's once the driver's launches are probed (a
 * runtime launch is then counted at the driver, as with int3 probes). Its jump goes out as it
 * went in (breakpoints.c, write_jump_bytes): a thread arriving meanwhile traps and runs the
 * program's bytes again. --max-overhead has nothing to shed there: no launch stops. */
static bool ring_wanted_now(const struct tracee *p, const struct api_spec *spec)
{
	const struct probes_state *st = p->probes;
	return !(spec->flags & API_LAUNCH_PROBE) || spec->layer != LAYER_RUNTIME || !st->driver_launch_probed;
}

void probes_apply_launch_policy(struct tracee *p)
{
	uint32_t it = 0;
	for (struct bp *b; (b = bp_iter(p, &it));) {
		if (b->kind != BP_PROBE)
			continue;
		const struct api_spec *spec = cuda_api_get(b->api);
		bool want = b->ring >= 0 ? ring_wanted_now(p, spec) : launch_wanted(p, spec);
		int err = want ? bp_arm(p, b) : bp_disarm(p, b);
		if (err < 0)
			log_warn("cannot %s the probe on %s: %s", want ? "arm" : "disarm", spec->name,
				 strerror(-err));
	}
}

void probes_set_launches_armed(struct tracee *p, bool armed)
{
	struct probes_state *st = p->probes;
	st->launches_armed = armed;
	probes_apply_launch_policy(p);
}

static void probe_rtld(struct tracee *p, struct thread *t, const struct module *m)
{
	struct probes_state *st = p->probes;
	uint64_t hook = sym_find(m, "_dl_debug_state");
	uint64_t r_debug = sym_find(m, "_r_debug");
	struct bp *b;
	const char *why;
	if (!hook)
		return;
	if (config.no_int3) {
		log_info("libraries loaded later are looked for every 100 ms (--no-int3: no hook in "
			 "the dynamic linker)");
		return;
	}
	if (bp_create(p, t, hook, BP_RTLD, -1, m->id, &b, &why) < 0 || bp_arm(p, b) < 0) {
		log_warn("cannot watch the dynamic linker: libraries loaded later will not be seen");
		return;
	}
	/* glibc's struct r_debug: r_state (RT_CONSISTENT = 0) is at offset 24 on 64-bit. */
	st->rtld_state_addr = r_debug ? r_debug + 24 : 0;
}

/* An exec replaces the memory where the return stub keeps its records: the tracer reads them
 * when the program enters execve, before they are gone (execv, execvp... all go through it). */
static void probe_exec(struct tracee *p, struct thread *t, const struct module *m, const uint64_t fn[2])
{
	if (config.no_int3)	/* calls returning just before an exec go uncounted */
		return;
	for (int i = 0; i < 2; i++) {
		struct bp *b;
		const char *why;
		if (fn[i] && bp_create(p, t, fn[i], BP_EXEC, -1, m->id, &b, &why) == 0 && bp_arm(p, b) < 0)
			log_warn("cannot watch exec in %s: calls just before an exec may be missed", m->base);
	}
}

/* Which stub, if any, a function's jump probe calls, so that calling it costs no stop:
 * launches, of kernels and graphs, go through the launch ring (counted at their entry), but
 * for the runtime's that the call stub can record whole (stub_for); every other call probed
 * at its return (and the registration of kernels) through the call records, where the time
 * stamp counter times it (GPUTOP_CALL_STUB=0: they stop). The int3 stays for calls whose
 * return stops (API_STOPS), for out-parameters beyond the registers, for module loading on a
 * driver that cannot name a kernel handle (no cuFuncGetName: the name is read from the
 * caller's buffer at the return), and for everything when every call is traced (--trace
 * wants each with its thread, in order) or an experiment picks the launch layers. */
bool probes_stops_for_stack(const struct api_spec *spec)
{
	unsigned which = spec->op == OP_ALLOC || spec->op == OP_TORCH_ALLOC ? CONFIG_STACKS_ALLOCS
		       : spec->op == OP_FREE ? CONFIG_STACKS_FREES
		       : spec->op == OP_SYNC ? CONFIG_STACKS_SYNCS : 0;
	return config.stack_depth > 0 && (config.stacks & which);
}

/* Where the call stub parks at spec's calls (stub_layout.h's LR_TRAP_*): at the entry for
 * --stacks; at a CUDA allocation's return out of memory, so that the state of that instant is
 * read while the thread that failed is held (docs/torch_memory.md). */
static unsigned call_traps(const struct api_spec *spec)
{
	return (probes_stops_for_stack(spec) ? LR_TRAP_STACK : 0) | (spec->op == OP_ALLOC ? LR_TRAP_OOM : 0);
}

static int stub_for(const struct tracee *p, const struct api_spec *spec)
{
	if (config.tracing || config.launch_layer_forced)
		return -1;
	/* Runtime launches are armed only while the driver's are not probed (no libcuda: the
	 * simulated runtime alone, or cudart before it loads libcuda). cudaLaunchKernel passes
	 * everything gputop reads in registers (dim3 by value): the call stub records it whole, its
	 * result and time too (a failed launch is no launch), and names it from the host stub's
	 * symbol as the records are read; so does cudaGraphLaunch. cudaLaunchKernelExC passes its
	 * dimensions by a config pointer (its memory may be gone by then), whose first 24 bytes are
	 * the grid and block as CUlaunchConfig's, and --stacks launches wants a kernel's first launch
	 * held for its stack: the driver's launch stubs serve there, counting at entry. */
	if ((spec->op == OP_LAUNCH || spec->op == OP_GRAPH_LAUNCH) && spec->layer == LAYER_RUNTIME &&
	    (spec->op == OP_GRAPH_LAUNCH || spec->launch == LAUNCH_RT) && retfast_ready(p) && config.call_stub &&
	    !(spec->op == OP_LAUNCH && (config.stacks & CONFIG_STACKS_LAUNCHES)))
		return LR_STUB_CALL;
	if (spec->op == OP_LAUNCH)
		return spec->launch == LAUNCH_DRV_EX || spec->launch == LAUNCH_RT_EXC ? LR_STUB_LAUNCH_EX
										      : LR_STUB_LAUNCH;
	/* A graph launch: its executable graph in the first argument, like a launched function. */
	if (spec->op == OP_GRAPH_LAUNCH)
		return LR_STUB_LAUNCH;
	if (spec->flags & API_STOPS)
		return -1;
	if (!retfast_ready(p) || !config.call_stub)
		return -1;
	/* A kernel handle module loading returns is named at its first launch, by the driver
	 * (engine/kernel_names.c): where the driver cannot say, the int3 reads the caller's. */
	if (spec->name_src == NAME_FROM_STRING && !p->probes->func_get_name)
		return -1;
	if (!(spec->flags & API_RETURN) && spec->name_src != NAME_REGISTER)
		return -1;
	if (cuda_api_out_pointer(spec) && (spec->arg_out > 6 || spec->arg_pitch_out > 6))
		return -1;	/* the stub records the register arguments only */
	if (spec->op == OP_COPY && spec->arg_kind > 6)
		return -1;	/* a copy's direction on the stack (cudaMemcpy2D's kind): read at the int3 */
	return LR_STUB_CALL;
}

static bool ring_wanted(struct tracee *p, struct thread *t, const struct api_spec *spec)
{
	struct probes_state *st = p->probes;
	if (stub_for(p, spec) < 0)
		return false;
	if (!launchring_ready(p) && !st->ring_failed && xol_ready(p)) {
		/* Mapped when the first launch function is found: nothing for programs without. */
		int err = launchring_init(p, t);
		if (err < 0)
			log_warn("launches will stop the program: no launch ring (%s)", strerror(-err));
		else
			rescue_set_flag(p->rescue_slot, launchring_present_flag(p));
		launchring_say_absent(p);	/* no park until engine/seccomp_watch.c has looked */
		st->ring_failed = !launchring_ready(p);
	}
	return launchring_ready(p);
}

static bool is_rtld(const struct module *m)
{
	return strncmp(m->base, "ld-linux", 8) == 0 || strncmp(m->base, "ld64.so", 7) == 0 ||
	       strncmp(m->base, "ld-2.", 5) == 0;
}

/* What m's symbols say outside the API table: kernel handle variables, the functions gputop
 * calls (cuFuncGetName, the graph queries) and execve's address into fn. */
static void learn_from_scan(struct tracee *p, struct module *m, const struct module_scan *ms,
			    uint64_t fn[2])
{
	struct probes_state *st = p->probes;
	for (size_t i = 0; i < ms->n_handles; i++)	/* read once it runs (kernels_scan_pending) */
		kernels_add_handle_var(p, m, m->start + ms->handles[i].off, ms->handles[i].name);
	if (ms->fn[SCAN_FUNC_GET_NAME])
		st->func_get_name = module_scan_addr(m, ms->fn[SCAN_FUNC_GET_NAME]);
	if (ms->fn[SCAN_KERNEL_GET_NAME])
		st->kernel_get_name = module_scan_addr(m, ms->fn[SCAN_KERNEL_GET_NAME]);
	for (int g = 0; g < GQ_FN_COUNT; g++)
		if (ms->graph_fn[g])
			st->graph_fn[g] = module_scan_addr(m, ms->graph_fn[g]);
	fn[0] = module_scan_addr(m, ms->fn[SCAN_EXECVE]);
	fn[1] = module_scan_addr(m, ms->fn[SCAN_EXECVEAT]);
}

/* What probes_refresh hands the symbols' callbacks: the process, the stopped thread. */
struct refresh {
	struct tracee *p;
	struct thread *t;
};

static void on_new_module(struct module *m, void *arg)
{
	const struct refresh *rf = arg;
	struct tracee *p = rf->p;
	struct thread *t = rf->t;
	struct probes_state *st = p->probes;
	uint64_t exec_fn[2];

	m->probed = true;
	if (is_rtld(m)) {
		probe_rtld(p, t, m);
		return;
	}
	const struct module_scan *ms = module_scan(m);
	learn_from_scan(p, m, ms, exec_fn);
	int planted = 0, refused = 0, int3_refused = 0, nccl = 0, torch = 0;
	unsigned torch_ops = 0;
	for (size_t i = 0; i < ms->n_funcs; i++) {
		uint64_t addr = m->start + ms->funcs[i].off, size = ms->funcs[i].size;
		int api = ms->funcs[i].api;
		const struct api_spec *spec = cuda_api_get(api);
		struct bp *b;
		const char *why = NULL;
		int err = -ENOEXEC;
		bool stack_trap = false;
		if (ring_wanted(p, t, spec)) {
			err = bp_create_jump(p, t, addr, size, api,
					     stub_for(p, spec), m->id, &b, &why);
			if (err == -EBUSY && st->defer_inside && st->n_inside < INSIDE_MAX) {
				st->inside[st->n_inside++] = (struct inside){ addr, size,
									      api, m->id };
				planted++;	/* it will be, jump or int3 */
				if (spec->op == OP_LAUNCH && spec->layer == LAYER_DRIVER)
					st->driver_launch_probed = true;
				if (spec->layer == LAYER_TORCH) {
					torch++;
					torch_ops |= 1u << (spec->op - OP_TORCH_ALLOC);
				}
				continue;
			}
			if (err < 0)
				log_info("%s in %s stops at each call: %s", spec->name, m->base,
					 why ? why : strerror(-err));
			/* --stacks: the call stub traps there, while gputop drains (docs/stacks.md). */
			else if (stub_for(p, spec) == LR_STUB_CALL && call_traps(spec) &&
				 launchring_set_traps(p, b->ring, call_traps(spec)) == 0)
				stack_trap = call_traps(spec) & LR_TRAP_STACK;
		}
		if (err < 0)
			err = bp_create(p, t, addr, BP_PROBE, api, m->id, &b, &why);
		if (err == 0)
			stats_set_stops_per_call(p->stats_id, api, b->ring >= 0 ? stack_trap :
						 !(spec->flags & API_RETURN) || retfast_records_return(p, spec) ? 1 : 2);
		if (err == -EPERM && config.no_int3) {	/* asked for: named once for all, below */
			int3_refused++;
			log_debug("not probing %s in %s: %s", spec->name, m->base, why);
			continue;
		}
		if (err < 0) {
			refused++;
			log_warn("not probing %s in %s: %s", spec->name, m->base, why ? why : strerror(-err));
			continue;
		}
		planted++;
		nccl += spec->layer == LAYER_NCCL;
		if (spec->layer == LAYER_TORCH) {
			torch++;
			torch_ops |= 1u << (spec->op - OP_TORCH_ALLOC);
		}
		if (spec->op == OP_LAUNCH && spec->layer == LAYER_DRIVER)
			st->driver_launch_probed = true;
	}
	if (retfast_ready(p))
		probe_exec(p, t, m, exec_fn);
	if (torch_is_allocator_module(m)) {
		uint64_t sym[TORCH_SYM_COUNT];
		for (int i = 0; i < TORCH_SYM_COUNT; i++)
			sym[i] = module_scan_addr(m, ms->torch_sym[i]);
		torch_on_module(p, m, sym, torch_ops, !st->refreshed);
	}
	if (planted > nccl + torch && st->n_cuda_modules < CUDA_MODULES_MAX)
		st->cuda_modules[st->n_cuda_modules++] = (struct range){ m->start, m->end, m->id };
	if (nccl && st->n_nccl_modules < CUDA_MODULES_MAX)
		st->nccl_modules[st->n_nccl_modules++] = (struct range){ m->start, m->end, m->id };
	if (planted)
		tell_stub_scopes(p);
	if (int3_refused)
		log_info("%d CUDA functions in %s not probed: each would need an int3 (--no-int3; "
			 "GPUTOP_DEBUG=1 names them)", int3_refused, m->base);
	if (planted) {
		st->cuda_seen = true;
		log_info("probing %d %s functions in %s%s", planted, torch == planted ? "PyTorch allocator" : "CUDA",
			 m->base, refused ? " (some refused, see above)" : "");
	}
}

static void on_gone_module(struct module *m, void *arg)
{
	const struct refresh *rf = arg;
	struct tracee *p = rf->p;
	struct probes_state *st = p->probes;
	forget_module(st->cuda_modules, &st->n_cuda_modules, m->id);
	forget_module(st->nccl_modules, &st->n_nccl_modules, m->id);
	tell_stub_scopes(p);
	if (st->func_get_name - m->start < m->end - m->start)
		st->func_get_name = st->kernel_get_name = 0;
	if (st->graph_fn[GQ_GET_NODES] - m->start < m->end - m->start)
		memset(st->graph_fn, 0, sizeof st->graph_fn);
	bp_forget_module(p, m->id);
	kernels_forget_module(p, m);
	torch_on_module_gone(p, m);
}

void probes_defer_inside(struct tracee *p, bool on)
{
	p->probes->defer_inside = on;
}

int probes_inside_left(const struct tracee *p)
{
	return p->probes->n_inside;
}

/* The jump, or with int3 the breakpoint, for a function that waited; its stop count. */
static int plant_waiting(struct tracee *p, struct thread *t, const struct inside *w, bool int3)
{
	const struct api_spec *spec = cuda_api_get(w->api);
	struct bp *b;
	const char *why;
	int err = int3 ? bp_create(p, t, w->addr, BP_PROBE, w->api, w->module, &b, &why)
		       : bp_create_jump(p, t, w->addr, w->size, w->api, stub_for(p, spec), w->module, &b, &why);
	bool stack_trap = err == 0 && b->ring >= 0 && stub_for(p, spec) == LR_STUB_CALL && call_traps(spec) &&
			  launchring_set_traps(p, b->ring, call_traps(spec)) == 0 && (call_traps(spec) & LR_TRAP_STACK);
	if (err == 0)
		stats_set_stops_per_call(p->stats_id, w->api,
					 b->ring >= 0 ? stack_trap : !(spec->flags & API_RETURN) || retfast_records_return(p, spec) ? 1 : 2);
	if (err == 0 && int3)
		log_info("%s stops at each call: a thread stood inside its first bytes at every try", spec->name);
	else if (err < 0 && err != -EBUSY)
		log_warn("not probing %s: %s", spec->name, why ? why : strerror(-err));
	return err;
}

void probes_retry_inside(struct tracee *p, struct thread *t, bool last)
{
	struct probes_state *st = p->probes;
	int kept = 0;
	for (int i = 0; i < st->n_inside; i++)
		if (plant_waiting(p, t, &st->inside[i], false) == -EBUSY) {
			if (last)
				plant_waiting(p, t, &st->inside[i], true);
			else
				st->inside[kept++] = st->inside[i];
		}
	st->n_inside = last ? 0 : kept;
	probes_apply_launch_policy(p);
}

static void prepare_module(struct module *m, void *arg)
{
	if (!is_rtld(m))
		module_scan(m);
}

void probes_prepare(const struct tracee *p)
{
	uint64_t t0 = now_ns();
	if (sym_open(p) == 0)
		sym_refresh(p, prepare_module, NULL, NULL);
	sym_close(p);
	log_debug("%d: modules read before the stop in %.1f ms", p->pid, (double)(now_ns() - t0) / 1e6);
}

int probes_refresh(struct tracee *p, struct thread *t)
{
	struct refresh rf = { p, t };
	int err = sym_refresh(p, on_new_module, on_gone_module, &rf);
	probes_apply_launch_policy(p);
	p->probes->refreshed = true;
	return err;
}
