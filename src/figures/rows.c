/* rows.c — builds the rows all presenters show (rows.h) from statistics snapshots: what each
 * row holds, which rows there are and their order. It formats nothing and keeps no state. */
#include "rows.h"
#include "cuda_api.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double rows_per_sec(uint64_t delta, uint64_t ns)
{
	return ns ? (double)delta * 1e9 / (double)ns : 0;
}

static void rows_api_one(struct row_api *r, const struct stats_snapshot *cur,
			 const struct stats_snapshot *prev, int i)
{
	const struct stats_api *a = &cur->api[i];
	const struct api_spec *spec = cuda_api_get(i);
	uint64_t before = prev && (size_t)i < prev->n_api ? prev->api[i].calls : 0;

	*r = (struct row_api){
		.index = i,
		.pid = a->pid,
		.name = spec ? cuda_api_label(spec) : NULL,
		.layer = spec ? spec->layer : LAYER_RUNTIME,
		.launch = spec && spec->op == OP_LAUNCH,
		.calls = a->calls,
		.calls_delta = rows_delta(a->calls, before),
		.returns_seen = a->returns_seen,
		.errors = a->errors,
		.ns = a->ns,
		.avg_ns = a->calls ? a->ns / a->calls : 0,
		.last_error = a->last_error,
		.last_error_name = a->last_error && spec ? cuda_error_name(spec->layer, a->last_error)
							: NULL,
		.stops_per_call = a->stops_per_call,
		.lost = a->lost,
	};
}

/* Whether every call whose result gputop knows failed (rows with a return that says an error:
 * not PyTorch's allocator's, whose return is a value), and with which error: a program without
 * a driver or a GPU fails every call with one error, which is then to be said once, plainly. */
static const char *rows_all_failed(const struct rows *r)
{
	const char *error = NULL;
	uint64_t failed = 0;
	for (size_t i = 0; i < r->n_api; i++) {
		const struct row_api *a = &r->api[i];
		const struct api_spec *spec = cuda_api_get(a->index);
		if (!a->calls || !a->returns_seen || !spec || (spec->flags & API_VALUE_RET))
			continue;
		if (a->errors < a->calls)	/* read as the stubs count: an error before its call */
			return NULL;
		const char *name = a->last_error_name ? a->last_error_name : "";
		error = !error || !strcmp(error, name) ? name : "";
		failed += a->calls;
	}
	return failed ? error : NULL;
}

static int rows_api(struct rows *r, const struct stats_snapshot *cur,
		    const struct stats_snapshot *prev)
{
	int *idx = malloc((cur->n_api ? cur->n_api : 1) * sizeof(*idx));
	size_t n;

	r->api = malloc((cur->n_api ? cur->n_api : 1) * sizeof(*r->api));
	if (!idx || !r->api) {
		free(idx);
		return -ENOMEM;
	}
	n = stats_sort_api(cur, idx);
	for (size_t i = 0; i < n; i++) {
		struct row_api *a = &r->api[i];

		rows_api_one(a, cur, prev, idx[i]);
		r->calls += a->calls;
		r->calls_delta += a->calls_delta;
		r->errors += a->errors;
	}
	r->n_api = n;
	free(idx);
	r->all_failed = rows_all_failed(r);
	return 0;
}

int rows_rank(const struct stats_snapshot *s, pid_t pid)
{
	for (size_t i = 0; pid && i < s->n_proc; i++)
		if (s->proc[i].info.pid == pid)
			return s->proc[i].info.rank;
	return -1;
}

static int by_name_ptr(const void *a, const void *b)
{
	const struct stats_kernel *x = a, *y = b;
	return (uintptr_t)x->name < (uintptr_t)y->name ? -1 : (uintptr_t)x->name > (uintptr_t)y->name;
}

/* Kernel k's row in prev; NULL: none. Its index is the same in both snapshots, except where a
 * process listed before k's gained kernels in between (kernels of all processes, merged):
 * then it is found by its name, which is the same string in both. */
static const struct stats_kernel *kernel_before(const struct stats_snapshot *prev, size_t id,
						const struct stats_kernel *k,
						struct stats_kernel **sorted)
{
	if (!prev)
		return NULL;
	if (id < prev->n_kernel && prev->kernel[id].name == k->name)
		return &prev->kernel[id];
	if (!*sorted && prev->n_kernel) {
		if (!(*sorted = malloc(prev->n_kernel * sizeof(**sorted))))
			return NULL;
		memcpy(*sorted, prev->kernel, prev->n_kernel * sizeof(**sorted));
		qsort(*sorted, prev->n_kernel, sizeof(**sorted), by_name_ptr);
	}
	return *sorted ? bsearch(k, *sorted, prev->n_kernel, sizeof(**sorted), by_name_ptr) : NULL;
}

static int rows_kernels(struct rows *r, const struct stats_snapshot *cur,
			const struct stats_snapshot *prev)
{
	struct stats_kernel *prev_sorted = NULL;
	const struct stats_kernel **k = malloc((cur->n_kernel ? cur->n_kernel : 1) * sizeof(*k));
	size_t n;

	r->kernel = malloc((cur->n_kernel ? cur->n_kernel : 1) * sizeof(*r->kernel));
	if (!k || !r->kernel) {
		free(k);
		return -ENOMEM;
	}
	n = stats_sort_kernels(cur, k);
	for (size_t i = 0; i < n; i++) {
		size_t id = (size_t)(k[i] - cur->kernel);
		const struct stats_kernel *was = kernel_before(prev, id, k[i], &prev_sorted);
		struct row_kernel *row = &r->kernel[i];

		*row = (struct row_kernel){
			.id = (int)id,
			.pid = k[i]->pid,
			.name = k[i]->name,
			.launches = k[i]->launches,
			.launches_delta = rows_delta(k[i]->launches, was ? was->launches : 0),
			.graph_launches = k[i]->graph_launches,
			.graph_launches_delta = rows_delta(k[i]->graph_launches, was ? was->graph_launches : 0),
		};
		memcpy(row->grid, k[i]->grid, sizeof(row->grid));
		memcpy(row->block, k[i]->block, sizeof(row->block));
		row->gpu = k[i]->gpu;
	}
	r->n_kernel = n;
	free(k);
	free(prev_sorted);
	return 0;
}

static int rows_allocs(struct rows *r, const struct stats_snapshot *cur)
{
	const struct stats_alloc **a = malloc((cur->n_alloc ? cur->n_alloc : 1) * sizeof(*a));

	r->alloc = malloc((cur->n_alloc ? cur->n_alloc : 1) * sizeof(*r->alloc));
	if (!a || !r->alloc) {
		free(a);
		return -ENOMEM;
	}
	stats_sort_allocs(cur, a);
	for (size_t i = 0; i < cur->n_alloc; i++) {
		const struct api_spec *spec = cuda_api_get(a[i]->api);
		struct row_alloc *row = &r->alloc[i];

		*row = (struct row_alloc){
			.pid = a[i]->pid,
			.addr = a[i]->addr,
			.bytes = a[i]->bytes,
			.kind = a[i]->kind,
			.kind_name = a[i]->kind < MEM_KIND_COUNT ? mem_kind_name[a[i]->kind] : NULL,
			.api = spec ? spec->name : NULL,
			.device = a[i]->device,
			.tid = a[i]->tid,
			.age_ns = cur->t_ns >= a[i]->t_ns ? cur->t_ns - a[i]->t_ns : 0,
			.caller = a[i]->caller ? a[i]->caller : "",
			.stack = a[i]->stack,
		};
		snprintf(row->address, sizeof(row->address), "0x%" PRIx64, a[i]->addr);
	}
	r->n_alloc = cur->n_alloc;
	free(a);
	return 0;
}

static void xfer_add(struct stats_xfer *sum, const struct stats_xfer *x)
{
	sum->calls += x->calls;
	sum->bytes += x->bytes;
	sum->ns += x->ns;
}

/* total from cur; delta against prev's, or the whole of it without prev. */
static void xfer_row(struct row_xfer *row, const struct stats_xfer *cur,
		     const struct stats_xfer *prev)
{
	row->total = *cur;
	row->delta = prev ? (struct stats_xfer){ rows_delta(cur->calls, prev->calls),
						 rows_delta(cur->bytes, prev->bytes),
						 rows_delta(cur->ns, prev->ns) }
			  : *cur;
}

static void rows_xfers(struct rows *r, const struct stats_snapshot *cur,
		       const struct stats_snapshot *prev)
{
	for (int d = 0; d < DIR_COUNT; d++) {
		struct stats_xfer all = { 0 }, all_before = { 0 };

		for (int m = 0; m < COPY_MODE_COUNT; m++) {
			struct row_xfer *row = &r->copy[d][m];

			snprintf(row->name, sizeof(row->name), "%s%s", copy_dir_name[d],
				 m == COPY_ASYNC ? " async" : "");
			xfer_row(row, &cur->xfer[m][d], prev ? &prev->xfer[m][d] : NULL);
			xfer_add(&all, &cur->xfer[m][d]);
			if (prev)
				xfer_add(&all_before, &prev->xfer[m][d]);
		}
		snprintf(r->dir[d].name, sizeof(r->dir[d].name), "%s", copy_dir_name[d]);
		xfer_row(&r->dir[d], &all, prev ? &all_before : NULL);
		xfer_add(&r->copies.total, &r->dir[d].total);
		xfer_add(&r->copies.delta, &r->dir[d].delta);
	}
	snprintf(r->copies.name, sizeof(r->copies.name), "copies");
	snprintf(r->memset_.name, sizeof(r->memset_.name), "memset");
	xfer_row(&r->memset_, &cur->memset_, prev ? &prev->memset_ : NULL);
	for (int d = 0; d < DIR_COUNT; d++) {
		snprintf(r->graph_copy[d].name, sizeof(r->graph_copy[d].name), "%.3s graph", copy_dir_name[d]);
		xfer_row(&r->graph_copy[d], &cur->graph_xfer[d], prev ? &prev->graph_xfer[d] : NULL);
	}
	snprintf(r->graph_memset.name, sizeof(r->graph_memset.name), "memset graph");
	xfer_row(&r->graph_memset, &cur->graph_memset, prev ? &prev->graph_memset : NULL);
}

static int rows_graphs(struct rows *r, const struct stats_snapshot *cur,
		       const struct stats_snapshot *prev)
{
	r->graph_launches = cur->graph_launches;
	r->graph_launches_delta = rows_delta(cur->graph_launches, prev ? prev->graph_launches : 0);
	r->graph_kernel_runs = cur->graph_kernel_runs;
	r->graph_kernel_runs_delta = rows_delta(cur->graph_kernel_runs, prev ? prev->graph_kernel_runs : 0);
	if (!cur->n_graph)
		return 0;
	if (!(r->graph = malloc(cur->n_graph * sizeof(*r->graph))))
		return -ENOMEM;
	memcpy(r->graph, cur->graph, cur->n_graph * sizeof(*r->graph));
	r->n_graph = cur->n_graph;
	return 0;
}

int rows_build(struct rows *r, const struct stats_snapshot *cur,
	       const struct stats_snapshot *prev)
{
	memset(r, 0, sizeof(*r));
	r->snap = cur;
	r->interval_ns = rows_delta(cur->t_ns, prev ? prev->t_ns : cur->start_ns);
	r->launches = cur->launches;
	r->launches_delta = rows_delta(cur->launches, prev ? prev->launches : 0);
	rows_xfers(r, cur, prev);
	r->gpu = cur->gpu;
	r->gpu_busy = rows_gpu_busy(&cur->gpu, cur->t_ns);
	if (rows_api(r, cur, prev) < 0 || rows_kernels(r, cur, prev) < 0 ||
	    rows_allocs(r, cur) < 0 || rows_graphs(r, cur, prev) < 0 || comm_rows_build(r, cur, prev) < 0 ||
	    torch_rows_build(&r->torch, &cur->torch) < 0) {
		rows_free(r);
		return -ENOMEM;
	}
	return 0;
}

void rows_free(struct rows *r)
{
	free(r->api);
	free(r->kernel);
	free(r->alloc);
	free(r->graph);
	comm_rows_free(r);
	torch_rows_free(&r->torch);
	memset(r, 0, sizeof(*r));
}

double rows_gpu_busy(const struct stats_gpu *g, uint64_t now_ns)
{
	uint64_t end = g->until_ns ? g->until_ns : now_ns;
	if (!g->on || end <= g->since_ns)
		return -1;
	return (double)g->busy_ns / (double)(end - g->since_ns);
}
