/* fake_tracee.c — the fake traced process of fake_tracee.h: the probe layer's functions (and
 * symbols) as the engine's hot path calls them, answered from what the test set. Kernel ids
 * come from the real figures (stats_kernel_id), by the names learned. */
#include "fake_tracee.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "breakpoints.h"
#include "hit.h"
#include "kernels.h"
#include "memory.h"
#include "probes.h"
#include "rescue.h"
#include "retfast.h"
#include "stack_capture.h"
#include "stacks.h"
#include "stats.h"
#include "symbols.h"
#include "tallies.h"
#include "tally.h"
#include "tally_spec.h"
#include "threads.h"
#include "tracee.h"
#include "xol.h"

static struct tracee process;
struct tracee *tracee;
static uint64_t cuda_lo, cuda_hi;

static struct lr_call done[64], flight[16];
static int n_done, n_flight;

static struct {
	int api, n, lost_api;
	uint64_t w[8], n_lost;
} ring;

static struct {
	uint64_t graph;
	struct graph_query_node nodes[8];
	uint32_t n;
} graphs[4];
static int n_graphs;

static struct {
	uint64_t handle;
	char name[128];
} names[64];
static int n_names;

static struct bp *bps[32];
static int n_bps;

/* The stubs' tallies (arch/tally.h), kept by the real arch/tally.c as the stubs would keep them
 * for the records the test hands in, at FAKE_RING + LR_OFF_TALLY of the fake memory, where the
 * real probe/tallies.c reads them. A probe's index is its API row. */
#define FAKE_RING 0x7e0000000000ull
static struct tally_area *area;

static void tallies_fresh(void)
{
	if (!area)
		area = mmap(NULL, sizeof *area, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		abort();
	memset(area, 0, sizeof *area);
	for (int i = 0; i < cuda_api_count() && i < TALLY_PROBES; i++)
		cuda_tally_spec(cuda_api_get(i), &area->spec[i]);
	fake_memory_region(FAKE_RING + LR_OFF_TALLY, area, sizeof *area);
}

void fake_tracee_init(pid_t pid)
{
	if (process.hit)
		hit_state_free(process.hit);
	if (process.threads)
		threads_state_free(process.threads);
	if (process.tallies)
		tallies_state_free(process.tallies);
	process = (struct tracee){ .pid = pid, .threads = threads_state_new(), .hit = hit_state_new(),
				   .tallies = tallies_state_new() };
	tallies_fresh();
	tracee = &process;
	fake_memory_clear();
	n_done = n_flight = n_graphs = n_names = n_bps = 0;
	ring.n = 0;
	ring.n_lost = 0;
}

void fake_cuda_module(uint64_t lo, uint64_t hi)
{
	cuda_lo = lo;
	cuda_hi = hi;
}

void fake_calls(const struct lr_call *d, int nd, const struct lr_call *f, int nf)
{
	int kept = 0;
	for (int i = 0; i < nd; i++) {	/* each returned through the call stub's return */
		uint64_t probe = d[i].probe - 1;
		bool quiet = probe < TALLY_PROBES && (area->spec[probe].flags & TALLY_DIMS) && area->head.quiet;
		/* A quiet launch leaves no record (the fake keeps a registration's, which names). */
		if (tally_entry(area, TALLY_OP_RETURN, (uint64_t)(uintptr_t)&d[i], 0, NULL) || !quiet)
			done[kept++] = d[i];
	}
	if (nf)
		memcpy(flight, f, (size_t)nf * sizeof *f);
	n_done = kept;
	n_flight = nf;
}

void fake_ring(int api, const uint64_t w[8], int n, int lost_api, uint64_t n_lost)
{
	ring.api = api;
	if (w)
		memcpy(ring.w, w, sizeof ring.w);
	/* The launch stub counted each, recorded or dropped, under its handle. */
	uint8_t key = area->spec[api].key;
	bool quiet = area->head.quiet && (area->spec[api].flags & TALLY_DIMS) && w;
	for (int i = 0; i < n; i++)	/* quiet: counted with its words, not recorded */
		tally_entry(area, quiet ? TALLY_OP_QUIET : TALLY_OP_LAUNCH, (uint64_t)api, w && key ? w[key] : 0, w);
	for (uint64_t i = 0; i < n_lost; i++)
		tally_entry(area, TALLY_OP_LAUNCH, (uint64_t)lost_api, w && key ? w[key] : 0, NULL);
	ring.n = quiet ? 0 : n;
	ring.lost_api = lost_api;
	ring.n_lost = n_lost;
}

void fake_graph(uint64_t graph, const struct graph_query_node *nodes, uint32_t n)
{
	graphs[n_graphs].graph = graph;
	memcpy(graphs[n_graphs].nodes, nodes, n * sizeof *nodes);
	graphs[n_graphs++].n = n;
}

const char *fake_kernel_name(uint64_t handle)
{
	for (int i = n_names - 1; i >= 0; i--)
		if (names[i].handle == handle)
			return names[i].name;
	return NULL;
}

/* ---- base: symbols ------------------------------------------------------------------------------ */

const struct module *sym_module_at(const struct tracee *p, uint64_t addr)
{
	(void)p;
	static const struct module cuda = { .id = 1, .path = "/fake/libcudart.so.13", .base = "libcudart.so.13" };
	return addr >= cuda_lo && addr < cuda_hi ? &cuda : NULL;
}

/* ---- probe: where the probes are, what the stubs recorded ------------------------------------- */

bool probes_in_scope(const struct tracee *p, const struct api_spec *s, uint64_t addr)
{
	(void)s;
	return addr >= cuda_lo && addr < cuda_hi;
}

bool probes_stops_for_stack(const struct api_spec *spec)
{
	(void)spec;
	return false;
}

const uint64_t *probes_graph_fns(const struct tracee *p)
{
	static const uint64_t fns[GQ_FN_COUNT];
	return fns;
}

uint64_t probes_func_get_name(const struct tracee *p)
{
	return 0;
}

uint64_t probes_kernel_get_name(const struct tracee *p)
{
	return 0;
}

int graph_query_nodes(struct tracee *p, struct thread *t, const uint64_t fns[GQ_FN_COUNT], uint64_t graph, struct graph_query_node *out,
		      uint32_t *n)
{
	(void)t, (void)fns;
	for (int i = 0; i < n_graphs; i++)
		if (graphs[i].graph == graph) {
			memcpy(out, graphs[i].nodes, graphs[i].n * sizeof *out);
			*n = graphs[i].n;
			return 0;
		}
	return -ENOENT;
}

void fake_bp(struct bp *b)
{
	if (n_bps < (int)(sizeof bps / sizeof bps[0]))
		bps[n_bps++] = b;
}

struct bp *bp_find(const struct tracee *p, uint64_t addr)
{
	for (int i = 0; i < n_bps; i++)
		if (bps[i]->addr == addr)
			return bps[i];
	return NULL;
}

struct bp *bp_iter(const struct tracee *p, uint32_t *cursor)
{
	return *cursor < (uint32_t)n_bps ? bps[(*cursor)++] : NULL;
}

uint64_t launchring_base(const struct tracee *p)
{
	return FAKE_RING;
}

int launchring_probes(const struct tracee *p)
{
	return cuda_api_count() < TALLY_PROBES ? cuda_api_count() : TALLY_PROBES;
}

uint32_t launchring_generation(const struct tracee *p)
{
	return 1;
}

int launchring_io(const struct tracee *p, uint64_t addr, void *buf, size_t len, bool write)
{
	return write ? mem_write(p->pid, addr, buf, len) : mem_read(p->pid, addr, buf, len);
}

int launchring_probe_api(const struct tracee *p, int probe)
{
	return probe >= 0 && probe < cuda_api_count() ? probe : -1;
}

bool launchring_has_calls(const struct tracee *p)
{
	return true;
}

int launchring_take_calls(struct tracee *p, struct lr_call *out, struct lr_call *in_flight, int *n_in_flight)
{
	int n = n_done;
	memcpy(out, done, (size_t)n_done * sizeof *out);
	memcpy(in_flight, flight, (size_t)n_flight * sizeof *in_flight);
	*n_in_flight = n_flight;
	n_done = n_flight = 0;
	return n;
}

void launchring_drain(struct tracee *p, void (*on_record)(int api, const uint64_t *w, void *arg),
		      void (*on_lost)(int api, uint64_t n, void *arg), void *arg)
{
	for (int i = 0; i < ring.n; i++)
		on_record(ring.api, ring.w, arg);
	if (ring.n_lost)
		on_lost(ring.lost_api, ring.n_lost, arg);
	ring.n = 0;
	ring.n_lost = 0;
}

void launchring_set_quiet(struct tracee *p, bool quiet)
{
	area->head.quiet = quiet;
}

bool launchring_quiet(const struct tracee *p)
{
	return area->head.quiet;
}

void launchring_set_quiet_blocks(struct tracee *p, bool quiet)
{
	area->head.quiet_blocks = quiet;
}

bool launchring_quiet_blocks(const struct tracee *p)
{
	return area->head.quiet_blocks;
}

void launchring_seen(struct tracee *p, uint64_t handle)
{
	(void)handle;
}

void launchring_unsee(struct tracee *p, uint64_t handle)
{
	(void)handle;
}

/* The return stub: ready (its records are read), but it never takes a call at an int3's entry:
 * those return through the trampoline. Ticks are ns. */
bool retfast_ready(const struct tracee *p)
{
	return true;
}

int retfast_begin(struct tracee *p, pid_t tid, uint64_t key, uint64_t ret, uint64_t out, uint64_t out2, uint64_t slot, uint64_t next)
{
	(void)tid, (void)key, (void)ret, (void)out, (void)out2, (void)slot, (void)next;
	return -1;
}

int retfast_read(const struct tracee *p, pid_t pid, const int32_t *idx, int n, struct ret_record *out)
{
	(void)pid, (void)idx, (void)n, (void)out;
	return -ESRCH;
}

void retfast_free(struct tracee *p, pid_t pid, const int32_t *idx, int n)
{
	(void)pid, (void)idx, (void)n;
}

uint64_t retfast_stub(const struct tracee *p)
{
	return 0;
}

uint64_t retfast_entry_stamp(const struct tracee *p)
{
	return 0;
}

uint64_t retfast_record_addr(const struct tracee *p, int rec)
{
	(void)rec;
	return 0;
}

uint64_t retfast_ticks_to_ns(uint64_t ticks)
{
	return ticks;
}

uint64_t retfast_tsc_to_mono(uint64_t tsc)
{
	return tsc;
}

uint64_t xol_trampoline(const struct tracee *p)
{
	return FAKE_TRAMPOLINE;
}

int xol_call(struct tracee *p, struct thread *t, uint64_t func, const uint64_t args[6], uint64_t *ret, uint64_t *scratch_out)
{
	(void)t, (void)func, (void)args, (void)ret, (void)scratch_out;
	return -ENOSYS;
}

int rescue_frame(int slot, uint64_t stack_slot, uint64_t ret)
{
	(void)slot, (void)stack_slot, (void)ret;
	return 0;
}

void rescue_frame_done(int slot, int handle)
{
	(void)slot, (void)handle;
}

/* ---- kernels: names by handle, ids from the figures ---------------------------------------- */

static void learn(uint64_t value, const char *name)
{
	if (n_names == (int)(sizeof names / sizeof names[0]))
		return;
	names[n_names].handle = value;
	snprintf(names[n_names++].name, sizeof names[0].name, "%s", name);
}

void kernels_learn_name(struct tracee *p, uint64_t value, const char *mangled)
{
	learn(value, mangled);
}

void kernels_learn_from_stub(struct tracee *p, uint64_t value, uint64_t stub)
{
	const char *name = fake_kernel_name(stub);
	if (name)
		learn(value, name);
}

void kernels_learn_alias(struct tracee *p, uint64_t value, uint64_t known)
{
	kernels_learn_from_stub(p, value, known);
}

int kernels_id_of(struct tracee *p, pid_t pid, uint64_t value)
{
	char unnamed[32];
	const char *name = fake_kernel_name(value);
	(void)pid;
	if (!name) {
		snprintf(unnamed, sizeof unnamed, "kernel@%#" PRIx64, value);
		name = unnamed;
	}
	return stats_kernel_id(tracee->stats_id, name);
}

bool kernels_seen(const struct tracee *p, uint64_t value)
{
	return fake_kernel_name(value) != NULL;
}

bool kernels_named(const struct tracee *p, uint64_t value)
{
	return fake_kernel_name(value) != NULL;	/* else the driver would be asked: it never is here */
}

bool kernels_unknown(const struct tracee *p, uint64_t value)
{
	(void)value;
	return false;	/* its launches count at once, under its name or "kernel@0x…" */
}

bool kernels_recheck(struct tracee *p, uint64_t value)
{
	(void)value;
	return false;
}

void kernels_asked(struct tracee *p, uint64_t value)
{
	(void)p, (void)value;	/* no name here is doubtful */
}

/* ---- call stacks: none taken ---------------------------------------------------------------- */

uint32_t stack_capture(struct tracee *p, struct thread *t, const arch_regs_t *r)
{
	(void)t, (void)r;
	return STACK_NONE;
}

uint32_t stack_capture_launch(struct tracee *p, struct thread *t, const arch_regs_t *r)
{
	(void)t, (void)r;
	return STACK_NONE;
}

bool stack_capture_launch_due(struct tracee *p, int kernel, uint64_t now)
{
	(void)kernel, (void)now;
	return false;
}

void stack_capture_note_handle(struct tracee *p, uint64_t handle)
{
	(void)handle;
}
