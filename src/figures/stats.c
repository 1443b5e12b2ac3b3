/* stats.c — owns every figure gputop counts (stats.h), behind one mutex: the tracer thread
 * feeds it on each breakpoint hit, the UI thread copies snapshots out. It never touches the
 * traced program and never prints. The live allocations are kept by alloc_table.c and the
 * kernel names by kernel_table.c, both only under this file's mutex.
 *
 * Memory bound (a product promise): one row per API function, the live-allocation table (at
 * most ~350 B per allocation the program itself holds live, at its peak: alloc_table.c) and
 * the kernel table (~37 MiB at worst: kernel_table.c) and the CUDA graphs (~12 MiB at worst:
 * graph_table.c); nothing grows with the number of calls. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* qsort_r */
#endif
#include "stats.h"
#include "alloc_table.h"
#include "clock.h"
#include "cuda_api.h"
#include "graph_table.h"
#include "hashmap.h"
#include "kernel_table.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char copy_dir_name[DIR_COUNT][4] = { "H2H", "H2D", "D2H", "D2D" };
const char mem_kind_name[MEM_KIND_COUNT][8] = { "device", "managed", "host" };

struct counters {
	struct stats_xfer xfer[COPY_MODE_COUNT][DIR_COUNT];
	struct stats_xfer memset_;
	uint64_t sync_calls, sync_ns;
	uint64_t launches, allocs, frees, stops, lost;
	uint64_t graph_launches, graph_kernel_runs;
	struct stats_xfer graph_xfer[DIR_COUNT];
	struct stats_xfer graph_memset;
};

/* One traced process's figures; they outlive the process (its rows stay in the views). */
struct stats_state {
	struct stats_process_info info;
	struct stats_api *api;
	size_t n_api;
	struct alloc_table *allocs;
	struct kernel_table *kernels;
	struct graph_table *graphs;
	struct counters c;
	struct stats_comm comm;
	uint64_t live_bytes[MEM_KIND_COUNT];
	uint64_t live_count;
	uint64_t live_in_place;	/* of them, held by the stubs' live table too */
	uint64_t peak;
	uint64_t start_ns;
	struct stats_gpu gpu;	/* --gpu-time; its sums are reset by 'z', not on/since */
	int threads;
	bool estimated;
	/* Launch counts at the last extrapolation: per kernel id, and per API row. */
	uint64_t *kernel_marks, *api_marks;
	uint32_t n_kernel_marks;
};

#define CALLERS_MAX 256

static struct {
	pthread_mutex_t lock;
	struct stats_state *procs[STATS_MAX_PROCESSES];
	size_t n_procs;
	uint64_t cpu_ns, cpu_base_ns;	/* gputop's own; reset keeps the absolute as a base */
	uint64_t start_ns;		/* of the session, or the last reset */
	/* Caller module names: few (the libraries that allocate), kept for the life of the
	 * module so snapshots can point at them. Bounded: past CALLERS_MAX names, "(other)". */
	char *callers[CALLERS_MAX];
	int n_callers;
	const struct stats_comm *all_comm[STATS_MAX_PROCESSES];	/* a snapshot's, under the lock */
} stats = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- allocations ---- */

static void live_add(struct stats_state *st, const struct stats_alloc *a, int sign)
{
	if (sign > 0) {
		st->live_bytes[a->kind] += a->bytes;
		st->live_count++;
		st->live_in_place += a->in_place;
	} else {
		st->live_bytes[a->kind] -= a->bytes;
		st->live_count--;
		st->live_in_place -= a->in_place;
	}
	uint64_t dev = st->live_bytes[MEM_DEVICE] + st->live_bytes[MEM_MANAGED];
	if (dev > st->peak)
		st->peak = dev;
}

/* A record the allocation table dropped: its bytes are no longer live (arg: its process's figures). */
static void live_gone(const struct stats_alloc *a, void *arg)
{
	live_add(arg, a, -1);
}

/* Drops the live allocation at addr (into *a); false if there is none. */
static bool alloc_forget(struct stats_state *st, uint64_t addr, struct stats_alloc *a)
{
	if (!alloc_table_remove(st->allocs, addr, a))
		return false;
	live_add(st, a, -1);
	return true;
}

static void alloc_record(struct stats_state *st, const struct stats_alloc *a)
{
	struct stats_alloc old;
	alloc_forget(st, a->addr, &old);	/* a second allocation at a live address: its free was missed */
	/* Live device memory cannot overlap: an old allocation that does must have been freed by
	 * a path we did not see. Forgetting it keeps live bytes and leak reports honest. */
	alloc_table_forget_overlaps(st->allocs, a, live_gone, st);
	if (alloc_table_put(st->allocs, a) < 0)
		return;
	live_add(st, a, +1);
}

/* ---- life cycle ---- */

static void state_free(struct stats_state *st)
{
	if (!st)
		return;
	free(st->api);
	alloc_table_free(st->allocs);
	kernel_table_free(st->kernels);
	graph_table_free(st->graphs);
	free(st->kernel_marks);
	free(st->api_marks);
	free(st);
}

static struct stats_state *state_new(void)
{
	struct stats_state *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	st->n_api = (size_t)cuda_api_count();
	st->api = calloc(st->n_api ? st->n_api : 1, sizeof(*st->api));
	for (size_t i = 0; st->api && i < st->n_api; i++)
		st->api[i].stops_per_call = -1;
	st->allocs = alloc_table_new();
	st->kernels = kernel_table_new();
	st->graphs = graph_table_new();
	st->start_ns = now_ns();
	st->info.rank = st->info.nranks = -1;
	if (!st->api || !st->allocs || !st->kernels || !st->graphs) {
		state_free(st);
		return NULL;
	}
	return st;
}

static void stats_release(void)
{
	for (size_t i = 0; i < stats.n_procs; i++)
		state_free(stats.procs[i]);
	stats.n_procs = 0;
	stats.cpu_ns = stats.cpu_base_ns = 0;
}

int stats_init(void)
{
	int err = 0;

	pthread_mutex_lock(&stats.lock);
	stats_release();
	/* One process from the start, with no pid yet: the first stats_process_new takes it. */
	if ((stats.procs[0] = state_new())) {
		stats.n_procs = 1;
	} else {
		err = -ENOMEM;
	}
	stats.start_ns = now_ns();
	pthread_mutex_unlock(&stats.lock);
	return err;
}

void stats_free(void)
{
	pthread_mutex_lock(&stats.lock);
	stats_release();
	pthread_mutex_unlock(&stats.lock);
}

int stats_process_new(pid_t pid, pid_t ppid, const char *command)
{
	int id = -1;

	pthread_mutex_lock(&stats.lock);
	if (stats.n_procs == 1 && stats.procs[0]->info.pid == 0) {
		id = 0;
	} else if (stats.n_procs < STATS_MAX_PROCESSES && (stats.procs[stats.n_procs] = state_new())) {
		id = (int)stats.n_procs++;
	}
	if (id >= 0) {
		struct stats_process_info *i = &stats.procs[id]->info;
		i->pid = pid;
		i->ppid = ppid;
		snprintf(i->command, sizeof i->command, "%s", command ? command : "");
		stats.procs[id]->start_ns = now_ns();
	}
	pthread_mutex_unlock(&stats.lock);
	return id;
}

void stats_process_set_command(int id, const char *command)
{
	pthread_mutex_lock(&stats.lock);
	if (id >= 0 && (size_t)id < stats.n_procs)
		snprintf(stats.procs[id]->info.command, sizeof stats.procs[id]->info.command, "%s", command);
	pthread_mutex_unlock(&stats.lock);
}

void stats_process_set_rank(int id, int rank, int local_rank)
{
	pthread_mutex_lock(&stats.lock);
	if (id >= 0 && (size_t)id < stats.n_procs) {
		stats.procs[id]->info.rank = rank;
		stats.procs[id]->info.local_rank = local_rank;
	}
	pthread_mutex_unlock(&stats.lock);
}

void stats_process_set_job_id(int id, const char *job_id)
{
	pthread_mutex_lock(&stats.lock);
	if (id >= 0 && (size_t)id < stats.n_procs)
		snprintf(stats.procs[id]->info.job_id, sizeof stats.procs[id]->info.job_id, "%s", job_id);
	pthread_mutex_unlock(&stats.lock);
}

void stats_process_ended(int id, bool exited, int exit_status, int term_signal)
{
	pthread_mutex_lock(&stats.lock);
	if (id >= 0 && (size_t)id < stats.n_procs) {
		struct stats_process_info *i = &stats.procs[id]->info;
		i->ended = true;
		i->exited = exited;
		i->exit_status = exit_status;
		i->term_signal = term_signal;
		stats.procs[id]->threads = 0;
	}
	pthread_mutex_unlock(&stats.lock);
}

void stats_reset(void)
{
	pthread_mutex_lock(&stats.lock);
	for (size_t p = 0; p < stats.n_procs; p++) {
		struct stats_state *st = stats.procs[p];
		struct stats_kernel *kernel = kernel_table_rows(st->kernels);

		for (size_t i = 0; i < st->n_api; i++)	/* how each is probed stays */
			st->api[i] = (struct stats_api){ .stops_per_call = st->api[i].stops_per_call };
		memset(&st->c, 0, sizeof(st->c));
		comm_table_reset(&st->comm);
		for (uint32_t i = 0; i < kernel_table_count(st->kernels); i++) {
			kernel[i].launches = kernel[i].graph_launches = 0;
			kernel[i].gpu = (struct stats_gpu_time){ 0 };
		}
		st->gpu = (struct stats_gpu){ .on = st->gpu.on, .until_ns = st->gpu.until_ns,
					      .since_ns = st->gpu.on ? now_ns() : 0 };
		graph_table_reset_counts(st->graphs);
		if (st->kernel_marks)
			memset(st->kernel_marks, 0, st->n_kernel_marks * sizeof(*st->kernel_marks));
		if (st->api_marks)
			memset(st->api_marks, 0, st->n_api * sizeof(*st->api_marks));
		st->peak = st->live_bytes[MEM_DEVICE] + st->live_bytes[MEM_MANAGED];
		st->start_ns = now_ns();
	}
	stats.start_ns = now_ns();
	stats.cpu_base_ns = stats.cpu_ns;
	pthread_mutex_unlock(&stats.lock);
}

/* ---- feeding ---- */

/* The figures of process proc (an id from stats_process_new); NULL for none. Under stats_lock. */
static struct stats_state *process(int proc)
{
	return proc >= 0 && (size_t)proc < stats.n_procs ? stats.procs[proc] : NULL;
}

void stats_on_call(int proc, int api, uint64_t ns, bool returned, int error)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st && api >= 0 && (size_t)api < st->n_api) {
		struct stats_api *row = &st->api[api];

		row->calls++;
		if (returned) {
			row->returns_seen = true;
			row->ns += ns;
			if (error) {
				row->errors++;
				row->last_error = error;
			}
		}
	}
	pthread_mutex_unlock(&stats.lock);
}

static const char *caller_intern(const char *name)
{
	if (!name || !*name)
		return "";
	for (int i = 0; i < stats.n_callers; i++)
		if (strcmp(stats.callers[i], name) == 0)
			return stats.callers[i];
	if (stats.n_callers == CALLERS_MAX)
		return "(other)";
	char *copy = strdup(name);
	if (!copy)
		return "";
	stats.callers[stats.n_callers++] = copy;
	return copy;
}

static void on_alloc(int proc, int api, uint64_t addr, uint64_t bytes, enum mem_kind kind, int device,
		     pid_t tid, uint64_t now_ns, const char *caller, bool count)
{
	struct stats_alloc a = {
		.addr = addr, .bytes = bytes, .t_ns = now_ns, .tid = tid, .api = (int16_t)api,
		.device = (int8_t)(device >= 0 && device <= INT8_MAX ? device : -1),
		.kind = (uint8_t)kind, .in_place = !count,
	};

	if ((unsigned)kind >= MEM_KIND_COUNT)
		return;
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	a.caller = caller_intern(caller);
	if (st) {
		a.pid = st->info.pid;
		st->c.allocs += count;
		if (addr)	/* NULL from a zero-byte allocation holds nothing */
			alloc_record(st, &a);
	}
	pthread_mutex_unlock(&stats.lock);
}

void stats_on_alloc(int proc, int api, uint64_t addr, uint64_t bytes, enum mem_kind kind, int device,
		    pid_t tid, uint64_t now_ns, const char *caller)
{
	on_alloc(proc, api, addr, bytes, kind, device, tid, now_ns, caller, true);
}

void stats_note_alloc(int proc, int api, uint64_t addr, uint64_t bytes, enum mem_kind kind, int device,
		      pid_t tid, uint64_t now_ns, const char *caller)
{
	on_alloc(proc, api, addr, bytes, kind, device, tid, now_ns, caller, false);
}

void stats_set_alloc_stack(int proc, uint64_t addr, uint32_t stack)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	struct stats_alloc *a = st ? alloc_table_find(st->allocs, addr) : NULL;
	if (a)
		a->stack = stack;
	pthread_mutex_unlock(&stats.lock);
}

const char *stats_kernel_name(int proc, int kernel)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	const struct stats_kernel *k = st ? kernel_table_row(st->kernels, kernel) : NULL;
	const char *name = k ? k->name : NULL;
	pthread_mutex_unlock(&stats.lock);
	return name;
}

/* in_place: the stubs counted the free (a free of an allocation their table held). */
static bool on_free(int proc, uint64_t addr, bool in_place)
{
	bool known = false;
	struct stats_alloc a;

	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	/* Only frees of known allocations count, so that allocs - frees tracks what we saw. Where
	 * the stubs counted the free, the tallies count it, unless their table never held the
	 * allocation (made at a stop, or before the attach). */
	if (st && addr && alloc_forget(st, addr, &a)) {
		st->c.frees += !(in_place && a.in_place);
		known = true;
	}
	pthread_mutex_unlock(&stats.lock);
	return known;
}

bool stats_on_free(int proc, uint64_t addr)
{
	return on_free(proc, addr, false);
}

bool stats_note_free(int proc, uint64_t addr)
{
	return on_free(proc, addr, true);
}

size_t stats_live_in_place(int proc)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	size_t n = st ? st->live_in_place : 0;
	pthread_mutex_unlock(&stats.lock);
	return n;
}

static int by_addr(const void *a, const void *b)
{
	const struct stats_alloc *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void stats_sync_live(int proc, struct stats_alloc *table, size_t n)
{
	qsort(table, n, sizeof *table, by_addr);
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (!st) {
		pthread_mutex_unlock(&stats.lock);
		return;
	}
	/* Gone: held as the table's, not in the table any more (its free's record was lost). */
	size_t pos = 0, n_gone = 0, cap_gone = 0;
	uint64_t *gone = NULL;
	for (const struct stats_alloc *a; (a = alloc_table_next(st->allocs, &pos));) {
		if (!a->in_place || bsearch(a, table, n, sizeof *table, by_addr))
			continue;
		if (n_gone == cap_gone) {
			cap_gone = cap_gone ? 2 * cap_gone : 64;
			uint64_t *g = realloc(gone, cap_gone * sizeof *g);
			if (!g)
				break;
			gone = g;
		}
		gone[n_gone++] = a->addr;
	}
	struct stats_alloc old;
	for (size_t i = 0; i < n_gone; i++)
		alloc_forget(st, gone[i], &old);
	free(gone);
	/* Come: in the table, not held (its record was lost, or is not read yet). */
	for (size_t i = 0; i < n; i++)
		if (table[i].addr && !alloc_table_find(st->allocs, table[i].addr)) {
			table[i].pid = st->info.pid;
			table[i].in_place = true;
			table[i].caller = "";
			alloc_record(st, &table[i]);
		}
	pthread_mutex_unlock(&stats.lock);
}

bool stats_is_device_ptr(int proc, uint64_t addr)
{
	bool inside = false;

	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st) {
		inside = alloc_table_on_device(st->allocs, addr);
	}
	pthread_mutex_unlock(&stats.lock);
	return inside;
}

int stats_kernel_id(int proc, const char *name)
{
	int id = -1;

	if (!name)
		return -1;
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		id = kernel_table_intern(st->kernels, name);
	pthread_mutex_unlock(&stats.lock);
	return id;
}

void stats_on_launch(int proc, int kernel, const uint32_t grid[3], const uint32_t block[3])
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st) {
		struct stats_kernel *row = kernel_table_row(st->kernels, kernel);

		st->c.launches++;
		if (row) {
			row->launches++;
			for (int i = 0; i < 3; i++) {
				row->grid[i] = grid ? grid[i] : 0;
				row->block[i] = block ? block[i] : 0;
			}
		}
	}
	pthread_mutex_unlock(&stats.lock);
}

void stats_set_launch_dims(int proc, int kernel, const uint32_t grid[3], const uint32_t block[3])
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	struct stats_kernel *row = st ? kernel_table_row(st->kernels, kernel) : NULL;
	if (row) {
		memcpy(row->grid, grid, sizeof row->grid);
		memcpy(row->block, block, sizeof row->block);
	}
	pthread_mutex_unlock(&stats.lock);
}

/* The adders below take differences (negative: taken back) from the stubs' tallies. */
void stats_add_launches(int proc, int kernel, int64_t n)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st) {
		struct stats_kernel *row = kernel_table_row(st->kernels, kernel);
		st->c.launches += (uint64_t)n;
		if (row)
			row->launches += (uint64_t)n;
	}
	pthread_mutex_unlock(&stats.lock);
}

void stats_add_call(int proc, int api, int64_t calls, int64_t errors, int64_t ns, int last_error, bool returns)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st && api >= 0 && (size_t)api < st->n_api) {
		struct stats_api *row = &st->api[api];
		row->calls += (uint64_t)calls;
		row->errors += (uint64_t)errors;
		row->ns += (uint64_t)ns;
		row->returns_seen |= returns;
		if (errors > 0 && last_error)
			row->last_error = last_error;
	}
	pthread_mutex_unlock(&stats.lock);
}

static void xfer_add_n(struct stats_xfer *x, int64_t calls, int64_t bytes, int64_t ns)
{
	x->calls += (uint64_t)calls;
	x->bytes += (uint64_t)bytes;
	x->ns += (uint64_t)ns;
}

void stats_add_copy(int proc, enum copy_dir dir, enum copy_mode mode, int64_t calls, int64_t bytes, int64_t ns)
{
	if ((unsigned)dir >= DIR_COUNT || (unsigned)mode >= COPY_MODE_COUNT)
		return;
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		xfer_add_n(&st->c.xfer[mode][dir], calls, bytes, ns);
	pthread_mutex_unlock(&stats.lock);
}

void stats_add_memset(int proc, int64_t calls, int64_t bytes, int64_t ns)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		xfer_add_n(&st->c.memset_, calls, bytes, ns);
	pthread_mutex_unlock(&stats.lock);
}

void stats_add_sync(int proc, int64_t calls, int64_t ns)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st) {
		st->c.sync_calls += (uint64_t)calls;
		st->c.sync_ns += (uint64_t)ns;
	}
	pthread_mutex_unlock(&stats.lock);
}

void stats_add_allocs(int proc, int64_t allocs, int64_t frees)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st) {
		st->c.allocs += (uint64_t)allocs;
		st->c.frees += (uint64_t)frees;
	}
	pthread_mutex_unlock(&stats.lock);
}

static void xfer_add(struct stats_xfer *x, uint64_t bytes, uint64_t ns)
{
	x->calls++;
	x->bytes += bytes;
	x->ns += ns;
}

void stats_graph_define(int proc, uint64_t exec, const struct stats_graph_node *nodes, uint32_t n, bool known,
			bool keep_id)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		graph_table_define(st->graphs, exec, nodes, n, known, keep_id);
	pthread_mutex_unlock(&stats.lock);
}

/* Each node of the graph ran once: its kernels, copies and memsets (no time of their own: a
 * graph's copies are not calls). */
void stats_on_graph_launches(int proc, uint64_t exec, uint64_t n)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	struct graph_entry *e = st ? graph_table_get(st->graphs, exec) : NULL;
	if (st)
		st->c.graph_launches += n;
	if (e) {
		e->row.launches += n;
		for (uint32_t i = 0; i < e->n_kernels; i++) {
			const struct graph_kernel *k = &e->kernels[i];
			struct stats_kernel *row = kernel_table_row(st->kernels, k->kernel);
			if (!row)
				continue;
			row->graph_launches += n * k->nodes;
			st->c.graph_kernel_runs += n * k->nodes;
			memcpy(row->grid, k->grid, sizeof row->grid);
			memcpy(row->block, k->block, sizeof row->block);
		}
		for (int d = 0; d < DIR_COUNT; d++) {
			st->c.graph_xfer[d].calls += n * e->copy[d].calls;
			st->c.graph_xfer[d].bytes += n * e->copy[d].bytes;
		}
		st->c.graph_memset.calls += n * e->memset_.calls;
		st->c.graph_memset.bytes += n * e->memset_.bytes;
	}
	pthread_mutex_unlock(&stats.lock);
}

void stats_on_graph_launch(int proc, uint64_t exec)
{
	stats_on_graph_launches(proc, exec, 1);
}

void stats_graph_forget(int proc, uint64_t exec)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		graph_table_forget(st->graphs, exec);
	pthread_mutex_unlock(&stats.lock);
}

void stats_on_copy(int proc, enum copy_dir dir, enum copy_mode mode, uint64_t bytes, uint64_t ns)
{
	if ((unsigned)dir >= DIR_COUNT || (unsigned)mode >= COPY_MODE_COUNT)
		return;
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		xfer_add(&st->c.xfer[mode][dir], bytes, ns);
	pthread_mutex_unlock(&stats.lock);
}

void stats_on_memset(int proc, uint64_t bytes, uint64_t ns)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		xfer_add(&st->c.memset_, bytes, ns);
	pthread_mutex_unlock(&stats.lock);
}

void stats_on_sync(int proc, uint64_t ns)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st) {
		st->c.sync_calls++;
		st->c.sync_ns += ns;
	}
	pthread_mutex_unlock(&stats.lock);
}

/* ---- --gpu-time ---- */

void stats_on_gpu_kernel_runs(int proc, int kernel, const struct stats_gpu_time *runs)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	struct stats_kernel *row = st ? kernel_table_row(st->kernels, kernel) : NULL;
	if (row && runs->count) {
		struct stats_gpu_time *g = &row->gpu;
		g->min_ns = !g->count || runs->min_ns < g->min_ns ? runs->min_ns : g->min_ns;
		g->max_ns = runs->max_ns > g->max_ns ? runs->max_ns : g->max_ns;
	}
	if (row) {
		row->gpu.count += runs->count;
		row->gpu.total_ns += runs->total_ns;
	}
	pthread_mutex_unlock(&stats.lock);
}

void stats_on_gpu_copies(int proc, enum copy_dir dir, bool memset, uint64_t count, uint64_t bytes, uint64_t ns)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st && (memset || (unsigned)dir < DIR_COUNT))
		xfer_add_n(memset ? &st->gpu.memset_ : &st->gpu.xfer[dir], (int64_t)count, (int64_t)bytes, (int64_t)ns);
	pthread_mutex_unlock(&stats.lock);
}

void stats_on_gpu_busy(int proc, uint64_t ns)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		st->gpu.busy_ns += ns;
	pthread_mutex_unlock(&stats.lock);
}

void stats_set_gpu_time(int proc, bool on, uint64_t now, uint64_t dropped, uint64_t unnamed)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st) {
		if (on && !st->gpu.on)
			st->gpu.since_ns = now;
		st->gpu.until_ns = on ? 0 : st->gpu.on ? now : st->gpu.until_ns;
		st->gpu.on = st->gpu.on || on;
		st->gpu.dropped = dropped;
		st->gpu.unnamed = unnamed;
	}
	pthread_mutex_unlock(&stats.lock);
}

void stats_on_lost(int proc, int api, uint64_t n)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st && api >= 0 && (size_t)api < st->n_api) {
		st->api[api].lost += n;	/* its calls are in the tallies */
		st->c.lost += n;
	}
	pthread_mutex_unlock(&stats.lock);
}

void stats_on_stop(int proc)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		st->c.stops++;
	pthread_mutex_unlock(&stats.lock);
}

void stats_on_device(int proc, int device, enum dev_event ev, uint64_t bytes, uint64_t ns)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		comm_table_on_device(&st->comm, device, ev, bytes, ns);
	pthread_mutex_unlock(&stats.lock);
}

void stats_add_device_launches(int proc, int device, uint64_t n)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		comm_table_add_launches(&st->comm, device, n);
	pthread_mutex_unlock(&stats.lock);
}

void stats_on_p2p(int proc, int src_device, int dst_device, uint64_t bytes)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		comm_table_on_p2p(&st->comm, src_device, dst_device, bytes);
	pthread_mutex_unlock(&stats.lock);
}

void stats_on_collective(int proc, enum coll_op op, uint64_t bytes, uint64_t ns, uint64_t comm, int peer, int device)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		comm_table_on_coll(&st->comm, op, bytes, ns, comm, peer, device);
	pthread_mutex_unlock(&stats.lock);
}

void stats_note_collective(int proc, enum coll_op op, uint64_t bytes, uint64_t comm, int peer, int device)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		comm_table_on_coll_detail(&st->comm, op, bytes, comm, peer, device);
	pthread_mutex_unlock(&stats.lock);
}

void stats_add_coll(int proc, enum coll_op op, int64_t calls, int64_t bytes, int64_t ns)
{
	if ((unsigned)op >= COLL_COUNT)
		return;
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st) {
		st->comm.coll[op].calls += (uint64_t)calls;
		st->comm.coll[op].bytes += (uint64_t)bytes;
		st->comm.coll[op].ns += (uint64_t)ns;
	}
	pthread_mutex_unlock(&stats.lock);
}

void stats_comm_learn(int proc, uint64_t comm, int rank, int nranks, int device, bool names_rank)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	const struct stats_comm_info *e = st ? comm_table_learn(&st->comm, comm, rank, nranks, device) : NULL;
	if (e && names_rank && e->rank >= 0 && st->info.rank < 0) {
		st->info.rank = e->rank;
		st->info.local_rank = -1;
	}
	if (e && names_rank && e->nranks >= 0 && st->info.nranks < 0)
		st->info.nranks = e->nranks;
	pthread_mutex_unlock(&stats.lock);
}

int stats_device_of_ptr(int proc, uint64_t addr)
{
	int dev = -1;

	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		dev = alloc_table_device_at(st->allocs, addr);
	pthread_mutex_unlock(&stats.lock);
	return dev;
}

void stats_set_stops_per_call(int proc, int api, int stops)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st && api >= 0 && (size_t)api < st->n_api)
		st->api[api].stops_per_call = (int8_t)stops;
	pthread_mutex_unlock(&stats.lock);
}

void stats_set_threads(int proc, int n)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		st->threads = n;
	pthread_mutex_unlock(&stats.lock);
}

void stats_set_tracer_cpu(uint64_t ns)
{
	pthread_mutex_lock(&stats.lock);
	stats.cpu_ns = ns;
	pthread_mutex_unlock(&stats.lock);
}


static uint64_t scale_since(uint64_t *value, uint64_t *mark, double factor)
{
	uint64_t delta = *value - *mark;
	uint64_t add = (uint64_t)llround((double)delta * (factor - 1));
	*value += add;
	*mark = *value;
	return add;
}

void stats_extrapolate_launches(int proc, double factor)
{
	uint32_t n_kernels;
	struct stats_kernel *kernel;

	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (!st)
		goto out;
	n_kernels = kernel_table_count(st->kernels);
	kernel = kernel_table_rows(st->kernels);
	if (st->n_kernel_marks < n_kernels) {
		uint64_t *m = realloc(st->kernel_marks, n_kernels * sizeof(*m));
		if (!m)
			goto out;
		memset(m + st->n_kernel_marks, 0, (n_kernels - st->n_kernel_marks) * sizeof(*m));
		st->kernel_marks = m;
		st->n_kernel_marks = n_kernels;
	}
	if (!st->api_marks && !(st->api_marks = calloc(st->n_api, sizeof(*st->api_marks))))
		goto out;
	for (uint32_t i = 0; i < n_kernels; i++)
		st->c.launches += scale_since(&kernel[i].launches, &st->kernel_marks[i], factor);
	for (size_t i = 0; i < st->n_api; i++)
		if (cuda_api_get((int)i)->op == OP_LAUNCH)
			scale_since(&st->api[i].calls, &st->api_marks[i], factor);
	if (factor != 1.0)
		st->estimated = true;
out:
	pthread_mutex_unlock(&stats.lock);
}

void stats_set_launches_estimated(int proc, bool estimated)
{
	pthread_mutex_lock(&stats.lock);
	struct stats_state *st = process(proc);
	if (st)
		st->estimated = estimated;
	pthread_mutex_unlock(&stats.lock);
}

/* ---- reading ---- */

static uint64_t kernel_runs(const struct stats_kernel *k)
{
	return k->launches + k->graph_launches;
}

static void gpu_time_merge(struct stats_gpu_time *o, const struct stats_gpu_time *k)
{
	if (!k->count)
		return;
	o->min_ns = !o->count || k->min_ns < o->min_ns ? k->min_ns : o->min_ns;
	o->max_ns = k->max_ns > o->max_ns ? k->max_ns : o->max_ns;
	o->count += k->count;
	o->total_ns += k->total_ns;
}

/* Processes' GPU figures summed; on since the earliest, until the latest (0: one still on). */
static void gpu_merge(struct stats_gpu *o, const struct stats_gpu *g)
{
	if (!g->on)
		return;
	o->since_ns = !o->on || g->since_ns < o->since_ns ? g->since_ns : o->since_ns;
	o->until_ns = (o->on && !o->until_ns) || !g->until_ns ? 0
		    : g->until_ns > o->until_ns ? g->until_ns : o->until_ns;
	o->on = true;
	o->busy_ns += g->busy_ns;
	for (int d = 0; d < DIR_COUNT; d++) {
		o->xfer[d].calls += g->xfer[d].calls;
		o->xfer[d].bytes += g->xfer[d].bytes;
		o->xfer[d].ns += g->xfer[d].ns;
	}
	o->memset_.calls += g->memset_.calls;
	o->memset_.bytes += g->memset_.bytes;
	o->memset_.ns += g->memset_.ns;
	o->dropped += g->dropped;
	o->unnamed += g->unnamed;
}

/* The kernel rows of a snapshot by name, to merge the rows of a later process into those of the
 * earlier ones (each process interns its own names): name hash -> row index. A hash shared by two
 * names only costs a row of its own (the names are compared). */
struct kernel_by_name {
	uint64_t key;
	uint64_t row;
};

static uint64_t name_hash(const char *name)
{
	uint64_t h = 14695981039346656037ull;	/* FNV-1a */
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ull;
	return h ? h : 1;	/* 0 is no key */
}

/* Kernel k of a later process into out's rows: into the row of the same name, or a new row. */
static void kernel_merge(struct stats_snapshot *out, struct hashmap *by_name, const struct stats_kernel *k)
{
	struct kernel_by_name *e = k->name ? hashmap_find(by_name, name_hash(k->name)) : NULL;
	if (!e || strcmp(out->kernel[e->row].name, k->name) != 0) {
		if (!e && k->name && (e = hashmap_insert(by_name, name_hash(k->name), NULL)))
			e->row = out->n_kernel;
		out->kernel[out->n_kernel++] = *k;
		return;
	}
	struct stats_kernel *o = &out->kernel[e->row];
	if (kernel_runs(k)) {
		if (kernel_runs(o) && o->pid != k->pid)
			o->pid = 0;	/* launched by several processes */
		else if (!kernel_runs(o))
			o->pid = k->pid;
		memcpy(o->grid, k->grid, sizeof o->grid);
		memcpy(o->block, k->block, sizeof o->block);
	}
	o->launches += k->launches;
	o->graph_launches += k->graph_launches;
	gpu_time_merge(&o->gpu, &k->gpu);
}

/* Adds process st's figures into out: counters summed, allocations listed with their pid,
 * kernels merged by name (by_name: out's kernel rows so far). */
static int snapshot_add(struct stats_snapshot *out, const struct stats_state *st,
			const struct stats_comm *const *all_comms, int n_all, struct hashmap *by_name)
{
	size_t n_allocs = alloc_table_count(st->allocs);
	uint32_t n_kernels = kernel_table_count(st->kernels);
	uint32_t n_graphs = graph_table_count(st->graphs);
	const struct stats_kernel *krows = kernel_table_rows(st->kernels);
	const struct stats_alloc *a;

	if (!out->api) {
		if (!(out->api = calloc(st->n_api ? st->n_api : 1, sizeof(*out->api))))
			return -ENOMEM;
		out->n_api = st->n_api;
		for (size_t i = 0; i < st->n_api; i++)
			out->api[i].stops_per_call = -1;
	}
	for (size_t i = 0; i < st->n_api && i < out->n_api; i++) {
		struct stats_api *o = &out->api[i];
		const struct stats_api *x = &st->api[i];
		if (x->calls)
			o->pid = o->calls && o->pid != st->info.pid ? 0 : st->info.pid;
		o->calls += x->calls;
		o->errors += x->errors;
		o->ns += x->ns;
		o->lost += x->lost;
		if (x->last_error)
			o->last_error = x->last_error;
		o->returns_seen |= x->returns_seen;
		if (x->stops_per_call > o->stops_per_call)
			o->stops_per_call = x->stops_per_call;
	}

	if (n_allocs) {
		struct stats_alloc *m = realloc(out->alloc, (out->n_alloc + n_allocs) * sizeof(*m));
		if (!m)
			return -ENOMEM;
		out->alloc = m;
		for (size_t pos = 0; (a = alloc_table_next(st->allocs, &pos));)
			out->alloc[out->n_alloc++] = *a;
	}

	if (n_kernels) {
		struct stats_kernel *m = realloc(out->kernel, (out->n_kernel + n_kernels) * sizeof(*m));
		if (!m)
			return -ENOMEM;
		out->kernel = m;
		/* The first process's rows are copied whole, so that a row's index is its kernel id
		 * in a snapshot of one process (openmetrics.c keys its series by it). */
		for (uint32_t i = 0; i < n_kernels; i++) {
			struct stats_kernel k = krows[i];
			k.pid = st->info.pid;
			kernel_merge(out, by_name, &k);
		}
	}

	if (n_graphs) {
		struct stats_graph *m = realloc(out->graph, (out->n_graph + n_graphs) * sizeof(*m));
		if (!m)
			return -ENOMEM;
		out->graph = m;
		for (uint32_t i = 0; i < n_graphs; i++) {
			out->graph[out->n_graph] = graph_table_at(st->graphs, i)->row;
			out->graph[out->n_graph++].pid = st->info.pid;
		}
	}

	for (int m = 0; m < COPY_MODE_COUNT; m++)
		for (int d = 0; d < DIR_COUNT; d++) {
			out->xfer[m][d].calls += st->c.xfer[m][d].calls;
			out->xfer[m][d].bytes += st->c.xfer[m][d].bytes;
			out->xfer[m][d].ns += st->c.xfer[m][d].ns;
		}
	out->memset_.calls += st->c.memset_.calls;
	out->memset_.bytes += st->c.memset_.bytes;
	out->memset_.ns += st->c.memset_.ns;
	for (int d = 0; d < DIR_COUNT; d++) {
		out->graph_xfer[d].calls += st->c.graph_xfer[d].calls;
		out->graph_xfer[d].bytes += st->c.graph_xfer[d].bytes;
	}
	out->graph_memset.calls += st->c.graph_memset.calls;
	out->graph_memset.bytes += st->c.graph_memset.bytes;
	comm_table_add(&out->comm, &st->comm, st->info.pid, all_comms, n_all);
	out->sync_calls += st->c.sync_calls;
	out->sync_ns += st->c.sync_ns;
	for (int k = 0; k < MEM_KIND_COUNT; k++)
		out->live_bytes[k] += st->live_bytes[k];
	out->live_count += st->live_count;
	out->peak_device_bytes += st->peak;	/* the sum of peaks: an upper bound of the peak */
	out->launches += st->c.launches;
	out->graph_launches += st->c.graph_launches;
	out->graph_kernel_runs += st->c.graph_kernel_runs;
	out->allocs += st->c.allocs;
	out->frees += st->c.frees;
	out->stops += st->c.stops;
	out->lost += st->c.lost;
	out->threads += st->threads;
	out->launches_estimated |= st->estimated;
	gpu_merge(&out->gpu, &st->gpu);
	if (st->info.pid)
		out->n_procs++;
	return 0;
}

static void process_summary(struct stats_process *p, const struct stats_state *st)
{
	p->info = st->info;
	p->live_bytes = st->live_bytes[MEM_DEVICE] + st->live_bytes[MEM_MANAGED];
	p->live_count = st->live_count;
	p->launches = st->c.launches;
	p->stops = st->c.stops;
	p->threads = st->threads;
	p->start_ns = st->start_ns;
	p->gpu = st->gpu;
	uint64_t calls = 0;
	for (size_t i = 0; i < st->n_api; i++)
		calls += st->api[i].calls;
	p->calls = calls;
	memcpy(p->coll, st->comm.coll, sizeof p->coll);
	p->device = -1;	/* the device most of its live bytes are on */
	uint64_t best = 0, per[64] = { 0 };
	size_t pos = 0;
	for (const struct stats_alloc *a; (a = alloc_table_next(st->allocs, &pos));)
		if (a->device >= 0 && a->device < 64 && a->kind != MEM_HOST)
			per[a->device] += a->bytes;
	for (int d = 0; d < 64; d++)
		if (per[d] > best)
			best = per[d], p->device = d;
}

int stats_snapshot_of(pid_t pid, struct stats_snapshot *out)
{
	int err = -EINVAL;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&stats.lock);
	if (stats.n_procs) {
		err = 0;
		out->t_ns = now_ns();
		out->start_ns = stats.start_ns;
		out->pid = pid;
		/* Every process's communicators: an ncclSend's peer may be another's rank. */
		const struct stats_comm **all = stats.all_comm;
		struct hashmap by_name = HASHMAP_INIT(sizeof(struct kernel_by_name), 1024, 0);
		for (size_t i = 0; i < stats.n_procs; i++)
			all[i] = &stats.procs[i]->comm;
		for (size_t i = 0; i < stats.n_procs && !err; i++)
			if (!pid || stats.procs[i]->info.pid == pid) {
				err = snapshot_add(out, stats.procs[i], all, (int)stats.n_procs, &by_name);
				if (pid)
					out->start_ns = stats.procs[i]->start_ns > stats.start_ns ? stats.procs[i]->start_ns : stats.start_ns;
			}
		if (!err && stats.n_procs && !(out->proc = calloc(stats.n_procs, sizeof(*out->proc))))
			err = -ENOMEM;
		hashmap_clear(&by_name);
		for (size_t i = 0; !err && i < stats.n_procs; i++)
			if (stats.procs[i]->info.pid)
				process_summary(&out->proc[out->n_proc++], stats.procs[i]);
		out->tracer_cpu_ns = stats.cpu_ns >= stats.cpu_base_ns ? stats.cpu_ns - stats.cpu_base_ns : stats.cpu_ns;
	}
	pthread_mutex_unlock(&stats.lock);
	if (!err)	/* its own lock, never taken with this one */
		err = torch_mem_snapshot(pid, &out->torch);
	if (err)
		stats_snapshot_free(out);
	return err;
}

int stats_wait_of(int proc, struct stats_wait *out)
{
	int err = -1;
	pthread_mutex_lock(&stats.lock);
	const struct stats_state *st = process(proc);
	if (st) {
		*out = (struct stats_wait){ .rank = st->info.rank, .nranks = st->info.nranks, .start_ns = st->start_ns,
					    .wait_ns = st->c.sync_ns };
		for (int op = 0; op < COLL_COUNT; op++) {
			out->collectives += st->comm.coll[op].calls;
			out->wait_ns += st->comm.coll[op].ns;
		}
		err = 0;
	}
	pthread_mutex_unlock(&stats.lock);
	return err;
}

int stats_snapshot(struct stats_snapshot *out)
{
	return stats_snapshot_of(0, out);
}

void stats_snapshot_free(struct stats_snapshot *s)
{
	free(s->api);
	free(s->alloc);
	free(s->kernel);
	free(s->graph);
	free(s->proc);
	torch_mem_snapshot_free(&s->torch);
	memset(s, 0, sizeof(*s));
}

size_t stats_debug_capacity(int proc)
{
	size_t cap;

	pthread_mutex_lock(&stats.lock);
	cap = proc >= 0 && (size_t)proc < stats.n_procs ? alloc_table_capacity(stats.procs[proc]->allocs) : 0;
	pthread_mutex_unlock(&stats.lock);
	return cap;
}

/* ---- orderings ---- */

static int sort_api_cmp(const void *a, const void *b, void *arg)
{
	const struct stats_snapshot *s = arg;
	int i = *(const int *)a, j = *(const int *)b;

	if (s->api[i].calls != s->api[j].calls)
		return s->api[i].calls > s->api[j].calls ? -1 : 1;
	const struct api_spec *x = cuda_api_get(i), *y = cuda_api_get(j);
	if (!x || !y)
		return i - j;
	return strcmp(x->name, y->name);
}

size_t stats_sort_api(const struct stats_snapshot *s, int *idx)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_api; i++)
		if (s->api[i].calls)
			idx[n++] = (int)i;
	qsort_r(idx, n, sizeof(*idx), sort_api_cmp, (void *)s);
	return n;
}

static int sort_kernel_cmp(const void *a, const void *b)
{
	const struct stats_kernel *x = *(const struct stats_kernel *const *)a;
	const struct stats_kernel *y = *(const struct stats_kernel *const *)b;

	if (kernel_runs(x) != kernel_runs(y))
		return kernel_runs(x) > kernel_runs(y) ? -1 : 1;
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

size_t stats_sort_kernels(const struct stats_snapshot *s, const struct stats_kernel **out)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_kernel; i++)	/* GPU time alone: a run gputop did not see */
		if (kernel_runs(&s->kernel[i]) || s->kernel[i].gpu.count)
			out[n++] = &s->kernel[i];
	qsort(out, n, sizeof(*out), sort_kernel_cmp);
	return n;
}

static int sort_alloc_cmp(const void *a, const void *b)
{
	const struct stats_alloc *x = *(const struct stats_alloc *const *)a;
	const struct stats_alloc *y = *(const struct stats_alloc *const *)b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void stats_sort_allocs(const struct stats_snapshot *s, const struct stats_alloc **out)
{
	for (size_t i = 0; i < s->n_alloc; i++)
		out[i] = &s->alloc[i];
	qsort(out, s->n_alloc, sizeof(*out), sort_alloc_cmp);
}
