/* stats.c — owns every figure gputop counts (stats.h), behind one mutex: the tracer thread
 * feeds it on each breakpoint hit, the UI thread copies snapshots out. It never touches the
 * traced program and never prints. The live allocations are kept by alloc_table.c and the
 * kernel names by kernel_table.c, both only under this file's mutex.
 *
 * Memory bound (a product promise): one row per API function, the live-allocation table (at
 * most ~350 B per allocation the program itself holds live, at its peak: alloc_table.c) and
 * the kernel table (~37 MiB at worst: kernel_table.c); nothing grows with the number of calls. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* qsort_r */
#endif
#include "stats.h"
#include "alloc_table.h"
#include "clock.h"
#include "cuda_api.h"
#include "kernel_table.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

const char *const copy_dir_name[DIR_COUNT] = { "H2H", "H2D", "D2H", "D2D" };
const char *const mem_kind_name[MEM_KIND_COUNT] = { "device", "managed", "host" };

struct counters {
	struct stats_xfer xfer[COPY_MODE_COUNT][DIR_COUNT];
	struct stats_xfer memset_;
	uint64_t sync_calls, sync_ns;
	uint64_t launches, allocs, frees, stops, lost;
};

struct stats_state {
	bool ready;
	struct stats_api *api;
	size_t n_api;
	struct alloc_table *allocs;
	struct kernel_table *kernels;
	struct counters c;
	uint64_t live_bytes[MEM_KIND_COUNT];
	uint64_t live_count;
	uint64_t peak;
	uint64_t start_ns;
	uint64_t cpu_ns, cpu_base_ns;	/* reset keeps the tracer's absolute figure as a base */
	int threads;
	bool estimated;
};

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stats_state S;

/* Launch counts at the last extrapolation: per kernel id, and per API row. */
static uint64_t *kernel_marks, *api_marks;
static uint32_t n_kernel_marks;

/* ---- allocations ---- */

static void live_add(const struct stats_alloc *a, int sign)
{
	if (sign > 0) {
		S.live_bytes[a->kind] += a->bytes;
		S.live_count++;
	} else {
		S.live_bytes[a->kind] -= a->bytes;
		S.live_count--;
	}
	uint64_t dev = S.live_bytes[MEM_DEVICE] + S.live_bytes[MEM_MANAGED];
	if (dev > S.peak)
		S.peak = dev;
}

/* A record the allocation table dropped: its bytes are no longer live. */
static void live_gone(const struct stats_alloc *a, void *arg)
{
	live_add(a, -1);
}

/* Drops the live allocation at addr; false if there is none. */
static bool alloc_forget(uint64_t addr)
{
	struct stats_alloc a;

	if (!alloc_table_remove(S.allocs, addr, &a))
		return false;
	live_add(&a, -1);
	return true;
}

static void alloc_record(const struct stats_alloc *a)
{
	alloc_forget(a->addr);	/* a second allocation at a live address: its free was missed */
	/* Live device memory cannot overlap: an old allocation that does must have been freed by
	 * a path we did not see. Forgetting it keeps live bytes and leak reports honest. */
	alloc_table_forget_overlaps(S.allocs, a, live_gone, NULL);
	if (alloc_table_put(S.allocs, a) < 0)
		return;
	live_add(a, +1);
}

/* ---- life cycle ---- */

static void stats_release(void)
{
	free(S.api);
	alloc_table_free(S.allocs);
	kernel_table_free(S.kernels);
	memset(&S, 0, sizeof(S));
}

int stats_init(void)
{
	int err = 0;

	pthread_mutex_lock(&stats_lock);
	stats_release();
	S.n_api = (size_t)cuda_api_count();
	S.api = calloc(S.n_api ? S.n_api : 1, sizeof(*S.api));
	for (size_t i = 0; S.api && i < S.n_api; i++)
		S.api[i].stops_per_call = -1;
	S.allocs = alloc_table_new();
	S.kernels = kernel_table_new();
	S.start_ns = now_ns();
	if (!S.api || !S.allocs || !S.kernels) {
		stats_release();
		err = -ENOMEM;
	} else {
		S.ready = true;
	}
	pthread_mutex_unlock(&stats_lock);
	return err;
}

void stats_free(void)
{
	pthread_mutex_lock(&stats_lock);
	stats_release();
	pthread_mutex_unlock(&stats_lock);
}

void stats_reset(void)
{
	pthread_mutex_lock(&stats_lock);
	if (S.ready) {
		struct stats_kernel *kernel = kernel_table_rows(S.kernels);

		for (size_t i = 0; i < S.n_api; i++)	/* how each is probed stays */
			S.api[i] = (struct stats_api){ .stops_per_call = S.api[i].stops_per_call };
		memset(&S.c, 0, sizeof(S.c));
		for (uint32_t i = 0; i < kernel_table_count(S.kernels); i++)
			kernel[i].launches = 0;
		if (kernel_marks)
			memset(kernel_marks, 0, n_kernel_marks * sizeof(*kernel_marks));
		if (api_marks)
			memset(api_marks, 0, S.n_api * sizeof(*api_marks));
		S.peak = S.live_bytes[MEM_DEVICE] + S.live_bytes[MEM_MANAGED];
		S.start_ns = now_ns();
		S.cpu_base_ns = S.cpu_ns;
	}
	pthread_mutex_unlock(&stats_lock);
}

/* ---- feeding ---- */

void stats_on_call(int api, uint64_t ns, bool returned, int error)
{
	pthread_mutex_lock(&stats_lock);
	if (S.ready && api >= 0 && (size_t)api < S.n_api) {
		struct stats_api *row = &S.api[api];

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
	pthread_mutex_unlock(&stats_lock);
}

/* Caller module names: few (the libraries that allocate), kept for the life of the module so
 * snapshots can point at them. Bounded: past CALLERS_MAX names, "(other)". */
#define CALLERS_MAX 256
static char *callers[CALLERS_MAX];
static int n_callers;

static const char *caller_intern(const char *name)
{
	if (!name || !*name)
		return "";
	for (int i = 0; i < n_callers; i++)
		if (strcmp(callers[i], name) == 0)
			return callers[i];
	if (n_callers == CALLERS_MAX)
		return "(other)";
	char *copy = strdup(name);
	if (!copy)
		return "";
	callers[n_callers++] = copy;
	return copy;
}

void stats_on_alloc(int api, uint64_t addr, uint64_t bytes, enum mem_kind kind, int device,
		    pid_t tid, uint64_t now_ns, const char *caller)
{
	struct stats_alloc a = {
		.addr = addr, .bytes = bytes, .t_ns = now_ns, .tid = tid, .api = (int16_t)api,
		.device = (int8_t)(device >= 0 && device <= INT8_MAX ? device : -1),
		.kind = (uint8_t)kind,
	};

	if ((unsigned)kind >= MEM_KIND_COUNT)
		return;
	pthread_mutex_lock(&stats_lock);
	a.caller = caller_intern(caller);
	if (S.ready) {
		S.c.allocs++;
		if (addr)	/* NULL from a zero-byte allocation holds nothing */
			alloc_record(&a);
	}
	pthread_mutex_unlock(&stats_lock);
}

bool stats_on_free(uint64_t addr)
{
	bool known = false;

	pthread_mutex_lock(&stats_lock);
	/* Only frees of known allocations count, so that allocs - frees tracks what we saw. */
	if (S.ready && addr && alloc_forget(addr)) {
		S.c.frees++;
		known = true;
	}
	pthread_mutex_unlock(&stats_lock);
	return known;
}

bool stats_is_device_ptr(uint64_t addr)
{
	bool inside = false;

	pthread_mutex_lock(&stats_lock);
	if (S.ready) {
		inside = alloc_table_on_device(S.allocs, addr);
	}
	pthread_mutex_unlock(&stats_lock);
	return inside;
}

int stats_kernel_id(const char *name)
{
	int id = -1;

	if (!name)
		return -1;
	pthread_mutex_lock(&stats_lock);
	if (S.ready)
		id = kernel_table_intern(S.kernels, name);
	pthread_mutex_unlock(&stats_lock);
	return id;
}

void stats_on_launch(int kernel, const uint32_t grid[3], const uint32_t block[3])
{
	pthread_mutex_lock(&stats_lock);
	if (S.ready) {
		struct stats_kernel *row = kernel_table_row(S.kernels, kernel);

		S.c.launches++;
		if (row) {
			row->launches++;
			for (int i = 0; i < 3; i++) {
				row->grid[i] = grid ? grid[i] : 0;
				row->block[i] = block ? block[i] : 0;
			}
		}
	}
	pthread_mutex_unlock(&stats_lock);
}

static void xfer_add(struct stats_xfer *x, uint64_t bytes, uint64_t ns)
{
	x->calls++;
	x->bytes += bytes;
	x->ns += ns;
}

void stats_on_copy(enum copy_dir dir, enum copy_mode mode, uint64_t bytes, uint64_t ns)
{
	if ((unsigned)dir >= DIR_COUNT || (unsigned)mode >= COPY_MODE_COUNT)
		return;
	pthread_mutex_lock(&stats_lock);
	if (S.ready)
		xfer_add(&S.c.xfer[mode][dir], bytes, ns);
	pthread_mutex_unlock(&stats_lock);
}

void stats_on_memset(uint64_t bytes, uint64_t ns)
{
	pthread_mutex_lock(&stats_lock);
	if (S.ready)
		xfer_add(&S.c.memset_, bytes, ns);
	pthread_mutex_unlock(&stats_lock);
}

void stats_on_sync(uint64_t ns)
{
	pthread_mutex_lock(&stats_lock);
	if (S.ready) {
		S.c.sync_calls++;
		S.c.sync_ns += ns;
	}
	pthread_mutex_unlock(&stats_lock);
}

void stats_on_lost(int api, uint64_t n)
{
	pthread_mutex_lock(&stats_lock);
	if (S.ready && api >= 0 && (size_t)api < S.n_api) {
		S.api[api].calls += n;
		S.api[api].lost += n;
		S.c.lost += n;
	}
	pthread_mutex_unlock(&stats_lock);
}

void stats_on_stop(void)
{
	pthread_mutex_lock(&stats_lock);
	S.c.stops++;
	pthread_mutex_unlock(&stats_lock);
}

void stats_set_stops_per_call(int api, int stops)
{
	pthread_mutex_lock(&stats_lock);
	if (S.ready && api >= 0 && (size_t)api < S.n_api)
		S.api[api].stops_per_call = (int8_t)stops;
	pthread_mutex_unlock(&stats_lock);
}

void stats_set_threads(int n)
{
	pthread_mutex_lock(&stats_lock);
	S.threads = n;
	pthread_mutex_unlock(&stats_lock);
}

void stats_set_tracer_cpu(uint64_t ns)
{
	pthread_mutex_lock(&stats_lock);
	S.cpu_ns = ns;
	pthread_mutex_unlock(&stats_lock);
}


static uint64_t scale_since(uint64_t *value, uint64_t *mark, double factor)
{
	uint64_t delta = *value - *mark;
	uint64_t add = (uint64_t)llround((double)delta * (factor - 1));
	*value += add;
	*mark = *value;
	return add;
}

void stats_extrapolate_launches(double factor)
{
	uint32_t n_kernels;
	struct stats_kernel *kernel;

	pthread_mutex_lock(&stats_lock);
	if (!S.ready)
		goto out;
	n_kernels = kernel_table_count(S.kernels);
	kernel = kernel_table_rows(S.kernels);
	if (n_kernel_marks < n_kernels) {
		uint64_t *m = realloc(kernel_marks, n_kernels * sizeof(*m));
		if (!m)
			goto out;
		memset(m + n_kernel_marks, 0, (n_kernels - n_kernel_marks) * sizeof(*m));
		kernel_marks = m;
		n_kernel_marks = n_kernels;
	}
	if (!api_marks && !(api_marks = calloc(S.n_api, sizeof(*api_marks))))
		goto out;
	for (uint32_t i = 0; i < n_kernels; i++)
		S.c.launches += scale_since(&kernel[i].launches, &kernel_marks[i], factor);
	for (size_t i = 0; i < S.n_api; i++)
		if (cuda_api_get((int)i)->op == OP_LAUNCH)
			scale_since(&S.api[i].calls, &api_marks[i], factor);
	if (factor != 1.0)
		S.estimated = true;
out:
	pthread_mutex_unlock(&stats_lock);
}

void stats_set_launches_estimated(bool estimated)
{
	pthread_mutex_lock(&stats_lock);
	S.estimated = estimated;
	pthread_mutex_unlock(&stats_lock);
}

/* ---- reading ---- */

static int snapshot_copy_arrays(struct stats_snapshot *out)
{
	size_t n_allocs = alloc_table_count(S.allocs);	/* == S.live_count */
	uint32_t n_kernels = kernel_table_count(S.kernels);
	const struct stats_alloc *a;

	if (S.n_api) {
		if (!(out->api = malloc(S.n_api * sizeof(*out->api))))
			return -ENOMEM;
		memcpy(out->api, S.api, S.n_api * sizeof(*out->api));
		out->n_api = S.n_api;
	}

	if (n_allocs && !(out->alloc = malloc(n_allocs * sizeof(*out->alloc))))
		return -ENOMEM;
	for (size_t pos = 0; (a = alloc_table_next(S.allocs, &pos));)
		out->alloc[out->n_alloc++] = *a;

	if (n_kernels && !(out->kernel = malloc(n_kernels * sizeof(*out->kernel))))
		return -ENOMEM;
	if (n_kernels)	/* names stay the module's: interned strings live until stats_free */
		memcpy(out->kernel, kernel_table_rows(S.kernels), n_kernels * sizeof(*out->kernel));
	out->n_kernel = n_kernels;
	return 0;
}

static void snapshot_copy_scalars(struct stats_snapshot *out)
{
	out->start_ns = S.start_ns;
	memcpy(out->xfer, S.c.xfer, sizeof(out->xfer));
	out->memset_ = S.c.memset_;
	out->sync_calls = S.c.sync_calls;
	out->sync_ns = S.c.sync_ns;
	memcpy(out->live_bytes, S.live_bytes, sizeof(out->live_bytes));
	out->live_count = S.live_count;
	out->peak_device_bytes = S.peak;
	out->launches = S.c.launches;
	out->allocs = S.c.allocs;
	out->frees = S.c.frees;
	out->stops = S.c.stops;
	out->lost = S.c.lost;
	out->tracer_cpu_ns = S.cpu_ns >= S.cpu_base_ns ? S.cpu_ns - S.cpu_base_ns : S.cpu_ns;
	out->threads = S.threads;
	out->launches_estimated = S.estimated;
}

int stats_snapshot(struct stats_snapshot *out)
{
	int err = -EINVAL;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&stats_lock);
	if (S.ready) {
		out->t_ns = now_ns();
		snapshot_copy_scalars(out);
		err = snapshot_copy_arrays(out);
	}
	pthread_mutex_unlock(&stats_lock);
	if (err)
		stats_snapshot_free(out);
	return err;
}

void stats_snapshot_free(struct stats_snapshot *s)
{
	free(s->api);
	free(s->alloc);
	free(s->kernel);
	memset(s, 0, sizeof(*s));
}

size_t stats_debug_capacity(void)
{
	size_t cap;

	pthread_mutex_lock(&stats_lock);
	cap = S.allocs ? alloc_table_capacity(S.allocs) : 0;
	pthread_mutex_unlock(&stats_lock);
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

	if (x->launches != y->launches)
		return x->launches > y->launches ? -1 : 1;
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

size_t stats_sort_kernels(const struct stats_snapshot *s, const struct stats_kernel **out)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_kernel; i++)
		if (s->kernel[i].launches)
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
