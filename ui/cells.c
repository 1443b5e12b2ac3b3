/* cells.c — the text of every row's cells (cells.h), for the TUI's views and batch mode alike.
 * Pure functions of a row and the ASCII flag of format.c; nothing here draws or prints. */
#include "cells.h"

#include <stdio.h>
#include <string.h>

void cells_launch_count(char *buf, size_t n, uint64_t v, bool estimated)
{
	char c[FMT_LEN];

	fmt_count(c, sizeof(c), v);
	snprintf(buf, n, "%s%s", estimated ? "~" : "", c);
}

void cells_per_sec(char *buf, size_t n, uint64_t delta, uint64_t ns, bool estimated)
{
	char c[FMT_LEN];
	double v = rows_per_sec(delta, ns);

	if (!ns) {
		snprintf(buf, n, "%s", fmt_dash());
		return;
	}
	if (v > 0 && v < 9.95)
		snprintf(c, sizeof(c), "%.1f", v);
	else
		fmt_count(c, sizeof(c), (uint64_t)(v + 0.5));
	snprintf(buf, n, "%s%s", estimated ? "~" : "", c);
}

/* "256" when y and z are 1, else "(x,y,z)"; "?" when the launch did not say. */
static void cells_dim3(char *buf, size_t n, const uint32_t d[3])
{
	if (!d[0])
		snprintf(buf, n, "?");
	else if (d[1] == 1 && d[2] == 1)
		snprintf(buf, n, "%u", d[0]);
	else
		snprintf(buf, n, "(%u,%u,%u)", d[0], d[1], d[2]);
}

void cells_dims(char *buf, size_t n, const uint32_t grid[3], const uint32_t block[3])
{
	char g[40], b[40];	/* "(4294967295,4294967295,4294967295)" */

	if (!grid[0] && !block[0]) {
		snprintf(buf, n, "%s", fmt_dash());
		return;
	}
	cells_dim3(g, sizeof(g), grid);
	cells_dim3(b, sizeof(b), block);
	snprintf(buf, n, "%s %s %s", g, fmt_times(), b);
}

static void cells_last_error(char *buf, size_t n, const struct row_api *r)
{
	if (!r->last_error)
		snprintf(buf, n, "%s", fmt_dash());
	else if (r->last_error_name)
		snprintf(buf, n, "%s", r->last_error_name);
	else
		snprintf(buf, n, "error %d", r->last_error);
}

void cells_api(struct cells_api *c, const struct row_api *r, const struct rows *rs,
	       bool estimated)
{
	bool est = estimated && r->launch;	/* launch calls are what --max-overhead extrapolates */
	cells_process(c->process, sizeof(c->process), r->pid, rs);

	c->name = r->name ? r->name : "?";
	cells_launch_count(c->calls, sizeof(c->calls), r->calls, est);
	cells_per_sec(c->rate, sizeof(c->rate), r->calls_delta, rs->interval_ns, est);
	if (!r->returns_seen) {		/* entry-only probe: errors and time are not known */
		snprintf(c->errors, sizeof(c->errors), "%s", fmt_dash());
		snprintf(c->last_error, sizeof(c->last_error), "%s", fmt_dash());
		snprintf(c->time, sizeof(c->time), "%s", fmt_dash());
		snprintf(c->avg, sizeof(c->avg), "%s", fmt_dash());
		return;
	}
	fmt_count(c->errors, sizeof(c->errors), r->errors);
	cells_last_error(c->last_error, sizeof(c->last_error), r);
	fmt_duration(c->time, sizeof(c->time), r->ns);
	fmt_duration(c->avg, sizeof(c->avg), r->avg_ns);
}

void cells_kernel(struct cells_kernel *c, const struct row_kernel *r, const struct rows *rs,
		  bool estimated)
{
	char share[FMT_LEN];
	cells_process(c->process, sizeof(c->process), r->pid, rs);

	c->name = r->name ? r->name : "?";
	cells_launch_count(c->launches, sizeof(c->launches), r->launches, estimated);
	fmt_count(c->graph, sizeof(c->graph), r->graph_launches);
	cells_per_sec(c->rate, sizeof(c->rate), r->launches_delta + r->graph_launches_delta, rs->interval_ns,
		      estimated);
	cells_dims(c->dims, sizeof(c->dims), r->grid, r->block);
	fmt_percent(share, sizeof(share), r->launches + r->graph_launches, rs->launches + rs->graph_kernel_runs);
	snprintf(c->share, sizeof(c->share), "%s%s", estimated && rs->launches ? "~" : "", share);
	const struct stats_gpu_time *g = &r->gpu;
	if (g->count) {
		fmt_duration(c->gpu_total, sizeof(c->gpu_total), g->total_ns);
		fmt_duration(c->gpu_avg, sizeof(c->gpu_avg), g->total_ns / g->count);
		fmt_duration(c->gpu_min, sizeof(c->gpu_min), g->min_ns);
		fmt_duration(c->gpu_max, sizeof(c->gpu_max), g->max_ns);
	} else {
		snprintf(c->gpu_total, sizeof(c->gpu_total), "%s", fmt_dash());
		snprintf(c->gpu_avg, sizeof(c->gpu_avg), "%s", fmt_dash());
		snprintf(c->gpu_min, sizeof(c->gpu_min), "%s", fmt_dash());
		snprintf(c->gpu_max, sizeof(c->gpu_max), "%s", fmt_dash());
	}
}

void cells_gpu_busy(char *buf, size_t n, const struct rows *rs)
{
	char busy[FMT_LEN], span[FMT_LEN];
	const struct stats_gpu *g = &rs->gpu;
	buf[0] = 0;
	if (!g->on)
		return;
	uint64_t end = g->until_ns ? g->until_ns : rs->snap->t_ns;
	fmt_duration(busy, sizeof(busy), g->busy_ns);
	fmt_duration(span, sizeof(span), end > g->since_ns ? end - g->since_ns : 0);
	if (rs->gpu_busy >= 0)
		snprintf(buf, n, "GPU busy: %.1f%% (%s of kernels in %s recorded)", 100 * rs->gpu_busy, busy, span);
	else
		snprintf(buf, n, "GPU busy: %s (%s of kernels)", fmt_dash(), busy);
	if (g->dropped || g->unnamed) {
		size_t len = strlen(buf);
		snprintf(buf + len, n - len, "; %llu records lost, %llu without a kernel name",
			 (unsigned long long)g->dropped, (unsigned long long)g->unnamed);
	}
}

void cells_xfer(struct cells_xfer *c, const struct row_xfer *r)
{
	c->name = r->name;
	fmt_count(c->calls, sizeof(c->calls), r->total.calls);
	fmt_bytes(c->bytes, sizeof(c->bytes), r->total.bytes);
	fmt_duration(c->time, sizeof(c->time), r->total.ns);
	fmt_rate(c->avg_rate, sizeof(c->avg_rate), r->total.bytes, r->total.ns);
	if (r->delta.calls)
		fmt_rate(c->rate, sizeof(c->rate), r->delta.bytes, r->delta.ns);
	else
		snprintf(c->rate, sizeof(c->rate), "%s", fmt_dash());	/* no copy in the interval */
}

void cells_process(char *buf, size_t n, pid_t pid, const struct rows *rs)
{
	int rank = rs && rs->snap ? rows_rank(rs->snap, pid) : -1;
	if (!pid)
		snprintf(buf, n, "all");
	else if (rank >= 0)
		snprintf(buf, n, "%d:r%d", (int)pid, rank);
	else
		snprintf(buf, n, "%d", (int)pid);
}

void cells_alloc(struct cells_alloc *c, const struct row_alloc *r, const struct rows *rs)
{
	cells_process(c->process, sizeof(c->process), r->pid, rs);
	c->address = r->address;
	c->kind = r->kind_name ? r->kind_name : "?";
	c->api = r->api ? r->api : "?";
	fmt_bytes(c->size, sizeof(c->size), r->bytes);
	if (r->device >= 0)
		snprintf(c->device, sizeof(c->device), "%d", r->device);
	else
		snprintf(c->device, sizeof(c->device), "%s", fmt_dash());
	snprintf(c->thread, sizeof(c->thread), "%d", (int)r->tid);
	fmt_age(c->age, sizeof(c->age), r->age_ns);
}

void cells_gpu(char *buf, size_t n, int device)
{
	if (device >= 0)
		snprintf(buf, n, "%d", device);
	else
		snprintf(buf, n, "?");
}

void cells_coll(struct cells_coll *c, const struct row_coll *r, const struct rows *rs)
{
	cells_process(c->process, sizeof(c->process), r->pid, rs);
	c->op = r->name ? r->name : "?";
	if (r->rank >= 0 && r->nranks > 0)
		snprintf(c->rank, sizeof(c->rank), "%d/%d", r->rank, r->nranks);
	else if (r->nranks > 0)
		snprintf(c->rank, sizeof(c->rank), "?/%d", r->nranks);
	else
		snprintf(c->rank, sizeof(c->rank), "%s", fmt_dash());
	fmt_count(c->calls, sizeof(c->calls), r->total.calls);
	fmt_bytes(c->bytes, sizeof(c->bytes), r->total.bytes);
	fmt_rate(c->rate, sizeof(c->rate), r->delta.bytes, rs->interval_ns);
	fmt_duration(c->time, sizeof(c->time), r->total.ns);
}

void cells_device(struct cells_device *c, const struct row_device *r, const struct rows *rs, bool estimated)
{
	cells_gpu(c->device, sizeof(c->device), r->device);
	fmt_bytes(c->live, sizeof(c->live), r->live_bytes);
	fmt_count(c->allocs, sizeof(c->allocs), r->total.allocs);
	cells_launch_count(c->launches, sizeof(c->launches), r->total.launches, estimated);
	cells_per_sec(c->launch_rate, sizeof(c->launch_rate), r->delta.launches, rs->interval_ns, estimated);
	fmt_count(c->copies, sizeof(c->copies), r->total.copies);
	fmt_bytes(c->copy_bytes, sizeof(c->copy_bytes), r->total.copy_bytes);
	fmt_count(c->syncs, sizeof(c->syncs), r->total.syncs);
	fmt_duration(c->sync_time, sizeof(c->sync_time), r->total.sync_ns);
}

static void gpu_copy_part(char *buf, size_t n, const char *name, const struct stats_xfer *x)
{
	char count[FMT_LEN], time[FMT_LEN], rate[FMT_LEN];
	size_t len = strlen(buf);
	if (!x->calls)
		return;
	fmt_count(count, sizeof(count), x->calls);
	fmt_duration(time, sizeof(time), x->ns);
	fmt_rate(rate, sizeof(rate), x->bytes, x->ns);
	snprintf(buf + len, n - len, "%s%s %s in %s (%s)", len ? ", " : "GPU side: ", name, count, time, rate);
}

void cells_gpu_copies(char *buf, size_t n, const struct rows *rs)
{
	buf[0] = 0;
	if (!rs->gpu.on)
		return;
	for (int d = 0; d < DIR_COUNT; d++)
		gpu_copy_part(buf, n, copy_dir_name[d], &rs->gpu.xfer[d]);
	gpu_copy_part(buf, n, "memset", &rs->gpu.memset_);
}

void cells_all_failed(char *buf, size_t n, const struct rows *rs)
{
	const char *e = rs->all_failed;
	/* The errors of a program that finds no driver or no GPU (runtime, then driver names). */
	static const char *const no_driver[] = { "cudaErrorInsufficientDriver", "cudaErrorNoDevice",
						 "CUDA_ERROR_NO_DEVICE", "CUDA_ERROR_NOT_INITIALIZED" };
	bool driver = false;
	for (size_t i = 0; e && i < sizeof no_driver / sizeof *no_driver; i++)
		driver |= !strcmp(e, no_driver[i]);
	if (!e)
		buf[0] = '\0';
	else if (!*e)
		snprintf(buf, n, "every CUDA call failed, with several errors (see the API table)");
	else
		snprintf(buf, n, "every CUDA call failed: %s%s%s", e, !driver ? "" : fmt_ascii() ? " - " : " \u2014 ",
			 driver ? "is there a driver?" : "");
}
