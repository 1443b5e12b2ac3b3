/* json.c — writes the end-of-session summary (--json FILE) from a statistics snapshot and its
 * rows (rows.h, as the TUI and -b show them), as one pretty-printed JSON object with a fixed
 * key order (json.h), through json_writer.h (jansson; names by the one UTF-8 rule). It only
 * formats: it never gathers figures itself, and it writes nothing but the FILE it is given. */
#include "json.h"
#include "json_writer.h"
#include "json_torch.h"
#include "cuda_api.h"
#include "device_rows.h"
#include "rows.h"
#include "site_rows.h"
#include "stacks.h"
#include "json_job.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static double json_seconds(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* The stacks the sites of errors of API row index were seen at (in process pid; 0: any), with
 * their counts. */
static void json_error_sites(struct jw *w, int index, pid_t pid, const struct stacks_snapshot *ss)
{
	jw_key(w, "error_sites");
	jw_open(w, '[');
	for (size_t i = 0; ss && i < ss->n_error; i++) {
		if (ss->error[i].api != index || !stacks_in_process(ss->error[i].stack, pid))
			continue;
		jw_open(w, '{');
		jw_key(w, "error");
		jw_int(w, ss->error[i].err);
		jw_key(w, "count");
		jw_u64(w, ss->error[i].count);
		jw_key(w, "stack");
		jw_stack(w, ss->error[i].stack);
		jw_close(w);
	}
	jw_close(w);
}

static void json_api_row(struct jw *w, const struct row_api *a, pid_t pid, const struct stacks_snapshot *ss)
{
	jw_open(w, '{');
	jw_key(w, "name");
	jw_str(w, a->name);
	jw_key(w, "layer");
	jw_str(w, cuda_layer_name(a->layer));
	jw_key(w, "calls");
	jw_u64(w, a->calls);
	jw_key(w, "errors");
	jw_u64_if(w, a->returns_seen, a->errors);
	jw_key(w, "seconds");
	jw_double_if(w, a->returns_seen, json_seconds(a->ns));
	jw_key(w, "last_error");
	if (a->last_error_name)
		jw_str(w, a->last_error_name);
	else if (a->last_error)
		jw_int(w, a->last_error);
	else
		jw_null(w);
	jw_key(w, "stops_per_call");
	jw_int_if(w, a->stops_per_call >= 0, a->stops_per_call);
	jw_key(w, "lost");
	jw_u64(w, a->lost);
	json_error_sites(w, a->index, pid, ss);
	jw_close(w);
}

static void json_api(struct jw *w, const struct rows *rs, pid_t pid, const struct stacks_snapshot *ss)
{
	jw_key(w, "api");
	jw_open(w, '[');
	for (size_t i = 0; i < rs->n_api; i++)
		json_api_row(w, &rs->api[i], pid, ss);
	jw_close(w);
}

/* Where a kernel was launched from (in process pid; 0: any): the stacks of its first launch
 * and of the sampled ones. */
static void json_launch_sites(struct jw *w, const char *kernel, pid_t pid, const struct stacks_snapshot *ss)
{
	jw_key(w, "sites");
	jw_open(w, '[');
	for (size_t i = 0; ss && i < ss->n_launch; i++) {
		if (!stacks_launch_site_of(&ss->launch[i], kernel, pid))
			continue;
		jw_open(w, '{');
		jw_key(w, "samples");
		jw_u64(w, ss->launch[i].samples);
		jw_key(w, "stack");
		jw_stack(w, ss->launch[i].stack);
		jw_close(w);
	}
	jw_close(w);
}

/* --gpu-time: a kernel's GPU time (null where it was not recorded). */
static void json_kernel_gpu_time(struct jw *w, const struct rows *rs, const struct stats_gpu_time *g)
{
	jw_key(w, "gpu_time");
	if (!rs->gpu.on) {
		jw_null(w);
		return;
	}
	jw_open(w, '{');
	jw_key(w, "total_s");
	jw_double(w, json_seconds(g->total_ns));
	jw_key(w, "avg_s");
	jw_double_if(w, g->count, g->count ? json_seconds(g->total_ns) / (double)g->count : 0);
	jw_key(w, "min_s");
	jw_double_if(w, g->count, json_seconds(g->min_ns));
	jw_key(w, "max_s");
	jw_double_if(w, g->count, json_seconds(g->max_ns));
	jw_key(w, "count");
	jw_u64(w, g->count);
	jw_close(w);
}

/* Copies' or memsets' GPU-side figures from CUPTI's records. */
static void json_gpu_xfer(struct jw *w, const char *key, const struct stats_xfer *x)
{
	jw_key(w, key);
	jw_open(w, '{');
	jw_key(w, "count");
	jw_u64(w, x->calls);
	jw_key(w, "bytes");
	jw_u64(w, x->bytes);
	jw_key(w, "gpu_s");
	jw_double(w, json_seconds(x->ns));
	jw_key(w, "gpu_gb_per_s");
	jw_double_if(w, x->ns, x->ns ? (double)x->bytes / json_seconds(x->ns) / 1e9 : 0);
	jw_close(w);
}

/* --gpu-time's figures of the whole (or of one process): null when it was not recorded. */
static void json_gpu_time(struct jw *w, const struct rows *rs)
{
	const struct stats_gpu *g = &rs->gpu;
	jw_key(w, "gpu_busy");
	jw_double_if(w, rs->gpu_busy >= 0, rs->gpu_busy);
	jw_key(w, "gpu_time");
	if (!g->on) {
		jw_null(w);
		return;
	}
	jw_open(w, '{');
	jw_key(w, "busy_s");
	jw_double(w, json_seconds(g->busy_ns));
	jw_key(w, "recorded_s");
	jw_double(w, json_seconds((g->until_ns ? g->until_ns : rs->snap->t_ns) - g->since_ns));
	jw_key(w, "copies");
	jw_open(w, '{');
	for (int d = 0; d < DIR_COUNT; d++)
		json_gpu_xfer(w, copy_dir_name[d], &g->xfer[d]);
	jw_close(w);
	json_gpu_xfer(w, "memset", &g->memset_);
	jw_key(w, "dropped_records");
	jw_u64(w, g->dropped);
	jw_key(w, "unnamed_records");
	jw_u64(w, g->unnamed);
	jw_close(w);
}

static void json_kernels(struct jw *w, const struct rows *rs, const struct stats_snapshot *s,
			 const struct stacks_snapshot *ss)
{
	jw_key(w, "kernels");
	jw_open(w, '[');
	for (size_t i = 0; i < rs->n_kernel; i++) {
		const struct row_kernel *k = &rs->kernel[i];

		jw_open(w, '{');
		jw_key(w, "name");
		jw_str(w, k->name);
		jw_key(w, "launches");
		jw_u64(w, k->launches);
		jw_key(w, "graph_launches");
		jw_u64(w, k->graph_launches);
		jw_key(w, "grid");
		jw_dim3(w, k->grid);
		jw_key(w, "block");
		jw_dim3(w, k->block);
		json_kernel_gpu_time(w, rs, &k->gpu);
		json_launch_sites(w, k->name, s->pid, ss);
		jw_close(w);
	}
	jw_close(w);
	jw_key(w, "launches");
	jw_u64(w, rs->launches);
	jw_key(w, "launches_estimated");
	jw_bool(w, s->launches_estimated);
	jw_key(w, "graph_kernel_runs");
	jw_u64(w, rs->graph_kernel_runs);
}

/* Executable graphs: "nodes" and "kernels" null where gputop attached after the graph was
 * instantiated (the driver cannot tell an executable graph's nodes). */
static void json_graphs(struct jw *w, const struct rows *rs)
{
	jw_key(w, "graph_launches");
	jw_u64(w, rs->graph_launches);
	jw_key(w, "graphs");
	jw_open(w, '[');
	for (size_t i = 0; i < rs->n_graph; i++) {
		const struct stats_graph *g = &rs->graph[i];
		jw_open(w, '{');
		jw_key(w, "pid");	/* ids are per process: (pid, id) names a graph */
		jw_int(w, g->pid);
		jw_key(w, "id");
		jw_u64(w, g->id);
		jw_key(w, "nodes");
		if (g->nodes_known)
			jw_u64(w, g->nodes);
		else
			jw_null(w);
		jw_key(w, "kernels");
		if (g->nodes_known)
			jw_u64(w, g->kernel_nodes);
		else
			jw_null(w);
		jw_key(w, "copies");
		jw_u64(w, g->copy_nodes);
		jw_key(w, "memsets");
		jw_u64(w, g->memset_nodes);
		jw_key(w, "launches");
		jw_u64(w, g->launches);
		jw_close(w);
	}
	jw_close(w);
}

/* {"calls", "bytes", "seconds"}; bytes left out for synchronize. */
static void json_xfer(struct jw *w, const char *key, const struct stats_xfer *x, bool bytes)
{
	jw_key(w, key);
	jw_open(w, '{');
	jw_key(w, "calls");
	jw_u64(w, x->calls);
	if (bytes) {
		jw_key(w, "bytes");
		jw_u64(w, x->bytes);
	}
	jw_key(w, "seconds");
	jw_double(w, json_seconds(x->ns));
	jw_close(w);
}

static void json_transfer(struct jw *w, const struct rows *rs, enum copy_dir d)
{
	const struct stats_xfer *all = &rs->dir[d].total;

	if (!all->calls)
		return;
	jw_open(w, '{');
	jw_key(w, "kind");
	jw_str(w, rs->dir[d].name);
	jw_key(w, "calls");
	jw_u64(w, all->calls);
	jw_key(w, "bytes");
	jw_u64(w, all->bytes);
	jw_key(w, "seconds");
	jw_double(w, json_seconds(all->ns));
	jw_key(w, "gbps");
	jw_double_if(w, all->ns, all->ns ? (double)all->bytes / json_seconds(all->ns) / 1e9 : 0);
	json_xfer(w, "sync", &rs->copy[d][COPY_SYNC].total, true);
	json_xfer(w, "async", &rs->copy[d][COPY_ASYNC].total, true);
	jw_close(w);
}

static void json_transfers(struct jw *w, const struct rows *rs, const struct stats_snapshot *s)
{
	struct stats_xfer sync = { .calls = s->sync_calls, .ns = s->sync_ns };

	jw_key(w, "transfers");
	jw_open(w, '[');
	for (int d = 0; d < DIR_COUNT; d++)
		json_transfer(w, rs, d);
	jw_close(w);
	json_xfer(w, "memset", &rs->memset_.total, true);
	json_xfer(w, "synchronize", &sync, false);
	/* Copies and memsets run as nodes of launched graphs: per execution, no time of their own. */
	jw_key(w, "graph_transfers");
	jw_open(w, '[');
	for (int d = 0; d < DIR_COUNT; d++) {
		const struct stats_xfer *g = &rs->graph_copy[d].total;
		if (!g->calls)
			continue;
		jw_open(w, '{');
		jw_key(w, "kind");
		jw_str(w, copy_dir_name[d]);
		jw_key(w, "executions");
		jw_u64(w, g->calls);
		jw_key(w, "bytes");
		jw_u64(w, g->bytes);
		jw_close(w);
	}
	jw_close(w);
	jw_key(w, "graph_memset");
	jw_open(w, '{');
	jw_key(w, "executions");
	jw_u64(w, rs->graph_memset.total.calls);
	jw_key(w, "bytes");
	jw_u64(w, rs->graph_memset.total.bytes);
	jw_close(w);
}

static void json_leak(struct jw *w, const struct row_alloc *a)
{
	jw_open(w, '{');
	jw_key(w, "address");
	jw_str(w, a->address);
	jw_key(w, "bytes");
	jw_u64(w, a->bytes);
	jw_key(w, "api");
	jw_str(w, a->api);
	jw_key(w, "kind");
	jw_str(w, a->kind_name);
	jw_key(w, "device");
	jw_int_if(w, a->device >= 0, a->device);
	jw_key(w, "thread");
	jw_int(w, a->tid);
	jw_key(w, "age_s");
	jw_double(w, json_seconds(a->age_ns));
	jw_key(w, "caller");
	jw_str(w, a->caller);
	jw_key(w, "stack");
	jw_stack(w, a->stack);
	jw_close(w);
}

/* Live memory by the call stack that allocated it, largest first. */
static void json_by_site(struct jw *w, const struct rows *rs, const struct stacks_snapshot *ss)
{
	struct row_site *sites;
	long n = site_rows_build(rs, ss, &sites);
	jw_key(w, "by_site");
	jw_open(w, '[');
	for (long i = 0; i < n; i++) {
		jw_open(w, '{');
		jw_key(w, "stack");
		jw_stack(w, sites[i].stack);
		jw_key(w, "live_bytes");
		jw_u64(w, sites[i].live_bytes);
		jw_key(w, "live_allocations");
		jw_u64(w, sites[i].live_allocations);
		jw_key(w, "allocated_bytes");
		jw_u64_if(w, sites[i].stack != STACK_NONE, sites[i].allocated_bytes);
		jw_close(w);
	}
	jw_close(w);
	if (n >= 0)
		free(sites);
}

/* Live device (and managed) memory per calling module: which library holds the memory, e.g.
 * PyTorch's caching allocator (libc10_cuda.so) against cuBLAS's workspaces. Modules in the
 * order of their largest allocation. */
static void json_by_caller(struct jw *w, const struct rows *rs)
{
	bool *done = calloc(rs->n_alloc ? rs->n_alloc : 1, sizeof(*done));

	jw_key(w, "by_caller");
	jw_open(w, '[');
	for (size_t i = 0; done && i < rs->n_alloc; i++) {
		const struct row_alloc *a = &rs->alloc[i];
		uint64_t bytes = 0, count = 0;

		if (done[i] || a->kind == MEM_HOST)
			continue;
		for (size_t j = i; j < rs->n_alloc; j++) {
			const struct row_alloc *b = &rs->alloc[j];

			if (done[j] || b->kind == MEM_HOST || strcmp(b->caller, a->caller) != 0)
				continue;
			done[j] = true;
			bytes += b->bytes;
			count++;
		}
		jw_open(w, '{');
		jw_key(w, "module");
		jw_str(w, a->caller);
		jw_key(w, "live_bytes");
		jw_u64(w, bytes);
		jw_key(w, "live_allocations");
		jw_u64(w, count);
		jw_close(w);
	}
	jw_close(w);
	free(done);
}

/* The process's device memory as the GPU tells it, and the part gputop did not see allocated
 * (device_rows.h): device_bytes = seen_bytes + unseen_bytes. */
static void json_process_memory(struct jw *w, const struct report_info *info,
				const struct stats_snapshot *s)
{
	struct row_unseen u;

	device_rows_unseen(&u, info->devices, info->pid,
			   s->live_bytes[MEM_DEVICE] + s->live_bytes[MEM_MANAGED], info->cuda_before_attach);
	jw_key(w, "process");
	jw_open(w, '{');
	jw_key(w, "device_bytes");
	jw_u64_if(w, u.known, u.process_bytes);
	jw_key(w, "peak_device_bytes");
	jw_u64_if(w, u.peak_bytes > 0, u.peak_bytes);
	jw_key(w, "seen_bytes");
	jw_u64(w, u.seen_bytes);
	jw_key(w, "unseen_bytes");
	jw_u64_if(w, u.known, u.unseen_bytes);
	jw_key(w, "unseen");
	jw_str(w, u.label);
	jw_key(w, "context_made_while_traced");
	jw_bool(w, u.from_start);
	jw_key(w, "sm_utilization_pct");
	jw_int_if(w, u.sm_util >= 0, u.sm_util);
	jw_key(w, "why");
	jw_str(w, u.known ? NULL : u.why);
	jw_close(w);
}

static void json_device(struct jw *w, const struct device_meter *m)
{
	const struct nvml_device_reading *r = &m->r;

	jw_open(w, '{');
	jw_key(w, "index");
	jw_int(w, m->index);
	jw_key(w, "name");
	jw_str(w, m->readable ? r->name : NULL);
	jw_key(w, "uuid");
	jw_str(w, m->readable && r->uuid[0] ? r->uuid : NULL);
	jw_key(w, "utilization_pct");
	jw_int_if(w, r->util_gpu >= 0, r->util_gpu);
	jw_key(w, "memory_utilization_pct");
	jw_int_if(w, r->util_mem >= 0, r->util_mem);
	jw_key(w, "memory_used_bytes");
	jw_u64_if(w, r->mem_known, r->mem_used);
	jw_key(w, "memory_total_bytes");
	jw_u64_if(w, r->mem_known, r->mem_total);
	jw_key(w, "temperature_c");
	jw_int_if(w, r->temp_c >= 0, r->temp_c);
	jw_key(w, "power_w");
	jw_double_if(w, r->power_mw >= 0, r->power_mw / 1000.0);
	jw_key(w, "sm_clock_mhz");
	jw_int_if(w, r->sm_mhz >= 0, r->sm_mhz);
	jw_key(w, "pcie_tx_bytes_per_s");	/* NVML counts KB/s */
	jw_u64_if(w, r->pcie_tx_kbs >= 0, (uint64_t)r->pcie_tx_kbs * 1024);
	jw_key(w, "pcie_rx_bytes_per_s");
	jw_u64_if(w, r->pcie_rx_kbs >= 0, (uint64_t)r->pcie_rx_kbs * 1024);
	jw_key(w, "nvlink_tx_bytes_per_s");
	jw_int_if(w, m->nvlink_tx_bps >= 0, m->nvlink_tx_bps);
	jw_key(w, "nvlink_rx_bytes_per_s");
	jw_int_if(w, m->nvlink_rx_bps >= 0, m->nvlink_rx_bps);
	jw_close(w);
}

/* Every GPU's meters at the end (NVML), or why there are none. */
static void json_devices(struct jw *w, const struct devices_snapshot *d)
{
	jw_key(w, "devices");
	jw_open(w, '[');
	for (int i = 0; d && d->available && i < d->n_dev; i++)
		json_device(w, &d->dev[i]);
	jw_close(w);
	jw_key(w, "nvml");
	jw_str(w, d && d->available ? NULL : d && d->why[0] ? d->why : "not polled");
}

static void json_memory(struct jw *w, const struct report_info *info, const struct rows *rs,
			const struct stats_snapshot *s, const struct stacks_snapshot *ss)
{
	jw_key(w, "memory");
	jw_open(w, '{');
	jw_key(w, "counted_since");	/* allocations, frees, live: since the attach, or the start */
	jw_str(w, info->launched ? "start" : "attach");
	jw_key(w, "live_bytes");
	jw_u64(w, s->live_bytes[MEM_DEVICE] + s->live_bytes[MEM_MANAGED]);
	jw_key(w, "live_host_bytes");
	jw_u64(w, s->live_bytes[MEM_HOST]);
	jw_key(w, "live_allocations");
	jw_u64(w, s->live_count);
	jw_key(w, "peak_bytes");
	jw_u64(w, s->peak_device_bytes);
	jw_key(w, "allocations");
	jw_u64(w, s->allocs);
	jw_key(w, "frees");
	jw_u64(w, s->frees);
	jw_key(w, "leaks");
	jw_open(w, '[');
	for (size_t i = 0; i < rs->n_alloc; i++)
		json_leak(w, &rs->alloc[i]);
	jw_close(w);
	json_by_caller(w, rs);
	json_by_site(w, rs, ss);
	json_process_memory(w, info, s);
	jw_close(w);
}

/* What ran on which GPU (device null: where gputop could not tell). */
static void json_device_use(struct jw *w, const struct rows *rs)
{
	jw_key(w, "device_use");
	jw_open(w, '[');
	for (size_t i = 0; i < rs->n_device; i++) {
		const struct row_device *d = &rs->device[i];
		jw_open(w, '{');
		jw_key(w, "device");
		jw_int_if(w, d->device >= 0, d->device);
		jw_key(w, "allocations");
		jw_u64(w, d->total.allocs);
		jw_key(w, "allocated_bytes");
		jw_u64(w, d->total.alloc_bytes);
		jw_key(w, "live_bytes");
		jw_u64(w, d->live_bytes);
		jw_key(w, "launches");
		jw_u64(w, d->total.launches);
		jw_key(w, "copies");
		jw_u64(w, d->total.copies);
		jw_key(w, "copy_bytes");
		jw_u64(w, d->total.copy_bytes);
		jw_key(w, "synchronize_calls");
		jw_u64(w, d->total.syncs);
		jw_key(w, "synchronize_s");
		jw_double(w, json_seconds(d->total.sync_ns));
		jw_close(w);
	}
	jw_close(w);
}

/* NCCL's operations and the GPU x GPU bytes moved (comm_table.h says what counts). */
static void json_communication(struct jw *w, const struct rows *rs)
{
	jw_key(w, "collectives");
	jw_open(w, '[');
	for (size_t i = 0; i < rs->n_coll_total; i++) {
		const struct row_coll *c = &rs->coll_total[i];
		jw_open(w, '{');
		jw_key(w, "op");
		jw_str(w, c->name);
		jw_key(w, "calls");
		jw_u64(w, c->total.calls);
		jw_key(w, "bytes");
		jw_u64(w, c->total.bytes);
		jw_key(w, "seconds");
		jw_double(w, json_seconds(c->total.ns));
		jw_close(w);
	}
	jw_close(w);
	jw_key(w, "p2p");
	jw_open(w, '[');
	for (size_t i = 0; i < rs->n_p2p; i++) {
		const struct row_p2p *p = &rs->p2p[i];
		jw_open(w, '{');
		jw_key(w, "src_device");
		jw_int_if(w, p->src >= 0, p->src);
		jw_key(w, "dst_device");
		jw_int_if(w, p->dst >= 0, p->dst);
		jw_key(w, "calls");
		jw_u64(w, p->total.calls);
		jw_key(w, "bytes");
		jw_u64(w, p->total.bytes);
		jw_close(w);
	}
	jw_close(w);
}

static void json_communicators(struct jw *w, const struct rows *rs)
{
	jw_key(w, "communicators");
	jw_open(w, '[');
	for (size_t i = 0; i < rs->n_comm; i++) {
		const struct row_comm *c = &rs->comm[i];
		jw_open(w, '{');
		jw_key(w, "rank");
		jw_int_if(w, c->rank >= 0, c->rank);
		jw_key(w, "nranks");
		jw_int_if(w, c->nranks >= 0, c->nranks);
		jw_key(w, "device");
		jw_int_if(w, c->device >= 0, c->device);
		jw_close(w);
	}
	jw_close(w);
}

static void json_header(struct jw *w, const struct report_info *info)
{
	jw_key(w, "pid");
	jw_int(w, info->pid);
	jw_key(w, "command");
	jw_str(w, info->command);
	jw_key(w, "launched");
	jw_bool(w, info->launched);
	jw_key(w, "duration_s");
	jw_double(w, info->duration_s);
	jw_key(w, "exit_status");
	jw_int_if(w, info->has_exit_status, info->exit_status);
	jw_key(w, "term_signal");
	jw_int_if(w, info->term_signal, info->term_signal);
}

static void json_cost(struct jw *w, const struct report_info *info, const struct stats_snapshot *s)
{
	jw_key(w, "cost");
	jw_open(w, '{');
	jw_key(w, "stops");
	jw_u64(w, s->stops);
	jw_key(w, "stops_per_return");
	jw_int(w, info->stops_per_return);
	jw_key(w, "stops_per_launch");
	jw_int(w, info->stops_per_launch);
	jw_key(w, "tracer_cpu_s");
	jw_double(w, json_seconds(s->tracer_cpu_ns));
	jw_key(w, "lost_records");
	jw_u64(w, s->lost);
	jw_close(w);
	jw_key(w, "threads");
	jw_int(w, s->threads);
}

/* One traced process: who it is, how it ended, and its own api/kernels/transfers/memory. */
static int json_process(struct jw *w, const struct report_info *info, const struct stats_process *p,
			const struct stacks_snapshot *ss)
{
	struct stats_snapshot s;
	struct rows rs;
	int err = stats_snapshot_of(p->info.pid, &s);
	if (err < 0)
		return err;
	if ((err = rows_build(&rs, &s, NULL)) < 0) {
		stats_snapshot_free(&s);
		return err;
	}
	jw_open(w, '{');
	jw_key(w, "pid");
	jw_int(w, p->info.pid);
	jw_key(w, "ppid");
	jw_int(w, p->info.ppid);
	jw_key(w, "command");
	jw_str(w, p->info.command);
	jw_key(w, "rank");
	jw_int_if(w, p->info.rank >= 0, p->info.rank);
	jw_key(w, "local_rank");
	jw_int_if(w, p->info.rank >= 0 && p->info.local_rank >= 0, p->info.local_rank);
	jw_key(w, "nranks");
	jw_int_if(w, p->info.nranks >= 0, p->info.nranks);
	jw_key(w, "job_id");	/* as the metrics' label: torchrun's run id, else Slurm's job */
	jw_str(w, p->info.job_id[0] ? p->info.job_id : NULL);
	jw_key(w, "exit_status");
	jw_int_if(w, p->info.ended, p->info.exit_status);
	jw_key(w, "term_signal");
	jw_int_if(w, p->info.term_signal, p->info.term_signal);
	jw_key(w, "devices");
	jw_open(w, '[');
	bool dev[64] = { false };	/* with live memory, or that it used */
	for (size_t i = 0; i < rs.n_alloc; i++)
		if (rs.alloc[i].device >= 0 && rs.alloc[i].device < 64)
			dev[rs.alloc[i].device] = true;
	for (size_t i = 0; i < rs.n_device; i++)
		if (rs.device[i].device >= 0)
			dev[rs.device[i].device] = true;
	for (int d = 0; d < 64; d++)
		if (dev[d])
			jw_int(w, d);
	jw_close(w);
	json_device_use(w, &rs);
	json_communication(w, &rs);
	json_communicators(w, &rs);
	json_api(w, &rs, s.pid, ss);
	json_kernels(w, &rs, &s, ss);
	json_graphs(w, &rs);
	json_transfers(w, &rs, &s);
	json_gpu_time(w, &rs);
	struct report_info own = *info;	/* its device memory as NVML tells, where it does */
	own.pid = p->info.pid;
	json_memory(w, &own, &rs, &s, ss);
	json_torch(w, &rs);
	jw_key(w, "cost");
	jw_open(w, '{');
	jw_key(w, "stops");
	jw_u64(w, s.stops);
	jw_key(w, "lost_records");
	jw_u64(w, s.lost);
	jw_close(w);
	jw_key(w, "threads");
	jw_int(w, p->threads);
	jw_close(w);
	rows_free(&rs);
	stats_snapshot_free(&s);
	return 0;
}

int json_write(FILE *f, const struct report_info *info, const struct stats_snapshot *s)
{
	struct jw w = { 0 };
	struct rows rs;
	int err;

	struct stacks_snapshot ss;
	if ((err = rows_build(&rs, s, NULL)) < 0)	/* the summary: the whole session */
		return err;
	bool have_stacks = stacks_snapshot(&ss) == 0;
	jw_open(&w, '{');
	json_header(&w, info);
	json_api(&w, &rs, 0, have_stacks ? &ss : NULL);
	json_kernels(&w, &rs, s, have_stacks ? &ss : NULL);
	json_graphs(&w, &rs);
	json_transfers(&w, &rs, s);
	json_gpu_time(&w, &rs);
	json_memory(&w, info, &rs, s, have_stacks ? &ss : NULL);
	json_torch(&w, &rs);
	json_device_use(&w, &rs);
	json_communication(&w, &rs);
	rows_free(&rs);
	json_cost(&w, info, s);
	json_devices(&w, info->devices);
	if (info->job)
		json_job(&w, info->job);
	jw_key(&w, "processes");
	jw_open(&w, '[');
	for (size_t i = 0; i < s->n_proc && !err; i++)
		err = json_process(&w, info, &s->proc[i], have_stacks ? &ss : NULL);
	jw_close(&w);
	jw_close(&w);
	if (have_stacks)
		stacks_snapshot_free(&ss);
	/* Pretty-printed, 2-space indent; seconds and rates with 9 significant digits. */
	if (!err)
		err = jw_dump(&w, f, JSON_INDENT(2) | JSON_REAL_PRECISION(9));
	jw_free(&w);
	if (err)
		return err;
	if (fputc('\n', f) == EOF || fflush(f) == EOF || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}
