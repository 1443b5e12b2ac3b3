/* openmetrics.c — writes gputop's figures as OpenMetrics 1.0 or Prometheus 0.0.4 text
 * (openmetrics.h): one table of metric families, each written for every process in turn (a
 * family's samples must stand together). It formats a snapshot's rows; it gathers nothing. */
#include "openmetrics.h"
#include "cuda_api.h"
#include "utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define OTHER_KERNELS	"(other kernels)"	/* as the kernel table names its overflow row */
#define LABEL_MAX	200			/* bytes of a label value; longer ones are cut */
#define DEVICE_UNKNOWN	63			/* devices_seen's bit for "not known" */

enum family_type { COUNTER, GAUGE, INFO };

struct writer {
	FILE *f;
	enum metrics_format format;
	const struct family *family;
	const struct openmetrics_session *session;
};

struct family {
	const char *name;	/* without the _total / _info suffix of its samples */
	enum family_type type;
	const char *unit;	/* OpenMetrics UNIT ("seconds", "bytes"; the name ends with it) */
	const char *help;
	/* Each process's samples; NULL: the family has one sample for the whole session, without
	 * labels (session_sample). */
	void (*samples)(struct writer *w, const struct openmetrics_process *p);
};

/* --- label values ------------------------------------------------------------------------- */

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* A label value, escaped; what is not UTF-8 becomes U+FFFD (utf8.h). A value longer than LABEL_MAX
 * is cut and, when unique must stay unique (kernel names), ends with a hash of the whole. */
static void label_value(FILE *f, const char *v, bool unique)
{
	const unsigned char *s = (const unsigned char *)v;
	size_t n = strlen(v), done = 0;
	bool cut = n > LABEL_MAX;

	fputc('"', f);
	while (done < n) {
		bool valid;
		size_t len = utf8_next(v + done, n - done, &valid);

		if (cut && done + len > LABEL_MAX)
			break;
		if (!valid)
			fputs(UTF8_REPLACEMENT, f);	/* utf8.h: the one rule of every output */
		else if (s[done] == '\\' || s[done] == '"')
			fprintf(f, "\\%c", s[done]);
		else if (s[done] == '\n')
			fputs("\\n", f);
		else
			fwrite(s + done, 1, len, f);
		done += len;
	}
	if (cut)
		fprintf(f, unique ? "...#%08x" : "...", fnv1a(v));
	fputc('"', f);
}

/* --- samples --------------------------------------------------------------------------------- */

static void label(struct writer *w, const char *key, const char *value)
{
	fprintf(w->f, ",%s=", key);
	label_value(w->f, value, false);
}

/* The session's labels (hostname, pod...), on every series; each after sep, then ','. Returns
 * how many were written. */
static int session_labels(struct writer *w, const char *sep)
{
	int n = 0;

	for (size_t i = 0; w->session && i < w->session->n_labels; i++) {
		const struct openmetrics_label *l = &w->session->labels[i];

		if (!l->value || !*l->value)
			continue;
		fprintf(w->f, "%s%s=", n++ ? "," : sep, l->name);
		label_value(w->f, l->value, false);
	}
	return n;
}

/* name{pid="P"[,rank="R"][,local_rank="L"][,job_id="J"], then the session's labels: those every
 * series of a process has. A family's own labels follow. */
static void sample_begin(struct writer *w, const struct openmetrics_process *p)
{
	const char *suffix = w->family->type == COUNTER ? "_total" : w->family->type == INFO ? "_info" : "";

	fprintf(w->f, "%s%s{pid=\"%d\"", w->family->name, suffix, (int)p->pid);
	if (p->rank >= 0)
		fprintf(w->f, ",rank=\"%d\"", p->rank);
	if (p->local_rank >= 0)
		fprintf(w->f, ",local_rank=\"%d\"", p->local_rank);
	if (p->job_id && *p->job_id)
		label(w, "job_id", p->job_id);
	session_labels(w, ",");
}

/* The value ends a sample, after its labels ('}' closes them). */
static void sample_u64(struct writer *w, uint64_t v)
{
	fprintf(w->f, "} %" PRIu64 "\n", v);
}

static void sample_seconds(struct writer *w, uint64_t ns)
{
	fprintf(w->f, "} %" PRIu64 ".%09" PRIu64 "\n", ns / 1000000000u, ns % 1000000000u);
}

/* --- the families ------------------------------------------------------------------------------ */

/* A sample of an API row: its process's labels, then api and layer. */
static void api_sample_begin(struct writer *w, const struct openmetrics_process *p,
			     const struct row_api *a)
{
	sample_begin(w, p);
	label(w, "api", a->name);
	label(w, "layer", cuda_layer_name(a->layer));
}

static void api_calls(struct writer *w, const struct openmetrics_process *p)
{
	for (size_t i = 0; i < p->rows->n_api; i++) {
		const struct row_api *a = &p->rows->api[i];

		if (!a->name)
			continue;
		api_sample_begin(w, p, a);
		sample_u64(w, a->calls);
	}
}

/* Errors and time are known only where the return is probed. */
static void api_errors(struct writer *w, const struct openmetrics_process *p)
{
	for (size_t i = 0; i < p->rows->n_api; i++) {
		const struct row_api *a = &p->rows->api[i];

		if (!a->name || !a->returns_seen)
			continue;
		api_sample_begin(w, p, a);
		sample_u64(w, a->errors);
	}
}

static void api_seconds(struct writer *w, const struct openmetrics_process *p)
{
	for (size_t i = 0; i < p->rows->n_api; i++) {
		const struct row_api *a = &p->rows->api[i];

		if (!a->name || !a->returns_seen)
			continue;
		api_sample_begin(w, p, a);
		sample_seconds(w, a->ns);
	}
}

static void api_unrecorded(struct writer *w, const struct openmetrics_process *p)
{
	for (size_t i = 0; i < p->rows->n_api; i++) {
		const struct row_api *a = &p->rows->api[i];

		if (!a->name || !a->lost)
			continue;
		api_sample_begin(w, p, a);
		sample_u64(w, a->lost);
	}
}

static void launches(struct writer *w, const struct openmetrics_process *p)
{
	sample_begin(w, p);
	sample_u64(w, p->snap->launches);
}

static void launches_estimated(struct writer *w, const struct openmetrics_process *p)
{
	sample_begin(w, p);
	sample_u64(w, p->snap->launches_estimated);
}

static void kernel_launches(struct writer *w, const struct openmetrics_process *p)
{
	const struct openmetrics_series *s = p->series;
	const struct stats_snapshot *snap = p->snap;
	uint64_t other = 0;
	char unnamed[32];

	for (size_t i = 0; i < s->n_kernels; i++) {
		const struct stats_kernel *k = &snap->kernel[s->kernel_ids[i]];
		const char *name = k->name;

		if (!name) {	/* never two series with one label: the id tells them apart */
			snprintf(unnamed, sizeof unnamed, "(kernel %d)", s->kernel_ids[i]);
			name = unnamed;
		}
		sample_begin(w, p);
		fputs(",kernel=", w->f);
		label_value(w->f, name, true);
		sample_u64(w, k->launches);
	}
	for (size_t id = 0; id < snap->n_kernel; id++)
		if (id >= s->has_series_len || !s->has_series[id])
			other += snap->kernel[id].launches;
	sample_begin(w, p);
	label(w, "kernel", OTHER_KERNELS);
	sample_u64(w, other);
}

/* Copies: every direction and mode, with calls or not, so that each series lives all along. */
static void copies(struct writer *w, const struct openmetrics_process *p, int what)
{
	for (int d = 0; d < DIR_COUNT; d++)
		for (int m = 0; m < COPY_MODE_COUNT; m++) {
			const struct stats_xfer *x = &p->rows->copy[d][m].total;

			sample_begin(w, p);
			label(w, "direction", copy_dir_name[d]);
			label(w, "mode", m == COPY_ASYNC ? "async" : "sync");
			if (what == 0)
				sample_u64(w, x->calls);
			else if (what == 1)
				sample_u64(w, x->bytes);
			else
				sample_seconds(w, x->ns);
		}
}

static void copy_calls(struct writer *w, const struct openmetrics_process *p) { copies(w, p, 0); }
static void copy_bytes(struct writer *w, const struct openmetrics_process *p) { copies(w, p, 1); }
static void copy_seconds(struct writer *w, const struct openmetrics_process *p) { copies(w, p, 2); }

static void memset_calls(struct writer *w, const struct openmetrics_process *p)
{
	sample_begin(w, p);
	sample_u64(w, p->rows->memset_.total.calls);
}

static void memset_bytes(struct writer *w, const struct openmetrics_process *p)
{
	sample_begin(w, p);
	sample_u64(w, p->rows->memset_.total.bytes);
}

static void memset_seconds(struct writer *w, const struct openmetrics_process *p)
{
	sample_begin(w, p);
	sample_seconds(w, p->rows->memset_.total.ns);
}

static void sync_calls(struct writer *w, const struct openmetrics_process *p)
{
	sample_begin(w, p);
	sample_u64(w, p->snap->sync_calls);
}

static void sync_seconds(struct writer *w, const struct openmetrics_process *p)
{
	sample_begin(w, p);
	sample_seconds(w, p->snap->sync_ns);
}

static int device_bit(int device)
{
	return device >= 0 && device < DEVICE_UNKNOWN ? device : DEVICE_UNKNOWN;
}

/* Live memory per device and kind: bytes (count false) or allocations (count true). */
static void live(struct writer *w, const struct openmetrics_process *p, bool count)
{
	for (int bit = 0; bit <= DEVICE_UNKNOWN; bit++) {
		char device[16];

		if (!(p->series->devices_seen & (UINT64_C(1) << bit)))
			continue;
		if (bit == DEVICE_UNKNOWN)
			snprintf(device, sizeof device, "unknown");
		else
			snprintf(device, sizeof device, "%d", bit);
		for (int kind = 0; kind < MEM_KIND_COUNT; kind++) {
			uint64_t sum = 0;

			for (size_t i = 0; i < p->rows->n_alloc; i++) {
				const struct row_alloc *a = &p->rows->alloc[i];

				if (a->kind == kind && device_bit(a->device) == bit)
					sum += count ? 1 : a->bytes;
			}
			sample_begin(w, p);
			label(w, "device", device);
			label(w, "kind", mem_kind_name[kind]);
			sample_u64(w, sum);
		}
	}
}

static void live_bytes(struct writer *w, const struct openmetrics_process *p) { live(w, p, false); }
static void live_allocations(struct writer *w, const struct openmetrics_process *p) { live(w, p, true); }

static void peak_device_bytes(struct writer *w, const struct openmetrics_process *p)
{
	sample_begin(w, p);
	sample_u64(w, p->snap->peak_device_bytes);
}

static void allocations(struct writer *w, const struct openmetrics_process *p)
{
	sample_begin(w, p);
	sample_u64(w, p->snap->allocs);
}

static void frees(struct writer *w, const struct openmetrics_process *p)
{
	sample_begin(w, p);
	sample_u64(w, p->snap->frees);
}

static void stops(struct writer *w, const struct openmetrics_process *p)
{
	sample_begin(w, p);
	sample_u64(w, p->snap->stops);
}

/* The families of the session as a whole: gputop's CPU time (one tracer for every process),
 * with the session's labels only. */
static void session_sample(struct writer *w)
{
	uint64_t ns = w->session ? w->session->tracer_cpu_ns : 0;

	fprintf(w->f, "%s_total", w->family->name);
	if (session_labels(w, "{"))
		fputc('}', w->f);
	fprintf(w->f, " %" PRIu64 ".%09" PRIu64 "\n", ns / 1000000000u, ns % 1000000000u);
}

static void running(struct writer *w, const struct openmetrics_process *p)
{
	sample_begin(w, p);
	sample_u64(w, p->running);
}

static void threads(struct writer *w, const struct openmetrics_process *p)
{
	sample_begin(w, p);
	sample_u64(w, p->snap->threads > 0 ? (uint64_t)p->snap->threads : 0);
}

/* NCCL's operations the process called (only those it called: most processes call none). */
static void nccl(struct writer *w, const struct openmetrics_process *p, int what)
{
	for (size_t i = 0; i < p->rows->n_coll_total; i++) {
		const struct row_coll *c = &p->rows->coll_total[i];
		sample_begin(w, p);
		label(w, "op", c->name);
		if (what == 0)
			sample_u64(w, c->total.calls);
		else if (what == 1)
			sample_u64(w, c->total.bytes);
		else
			sample_seconds(w, c->total.ns);
	}
}

static void nccl_calls(struct writer *w, const struct openmetrics_process *p) { nccl(w, p, 0); }
static void nccl_bytes(struct writer *w, const struct openmetrics_process *p) { nccl(w, p, 1); }
static void nccl_seconds(struct writer *w, const struct openmetrics_process *p) { nccl(w, p, 2); }

/* Bytes from one GPU to another: peer copies and ncclSend ("unknown" where gputop cannot
 * tell a device). */
static void p2p_bytes(struct writer *w, const struct openmetrics_process *p)
{
	for (size_t i = 0; i < p->rows->n_p2p; i++) {
		const struct row_p2p *x = &p->rows->p2p[i];
		char src[16] = "unknown", dst[16] = "unknown";
		if (x->src >= 0)
			snprintf(src, sizeof src, "%d", x->src);
		if (x->dst >= 0)
			snprintf(dst, sizeof dst, "%d", x->dst);
		sample_begin(w, p);
		label(w, "src_device", src);
		label(w, "dst_device", dst);
		sample_u64(w, x->total.bytes);
	}
}

/* --gpu-time: the time some kernel ran on a GPU (a union of CUPTI's kernel intervals per
 * device, summed over devices). No sample without --gpu-time. */
static void gpu_busy_seconds(struct writer *w, const struct openmetrics_process *p)
{
	if (!p->rows->gpu.on)
		return;
	sample_begin(w, p);
	sample_seconds(w, p->rows->gpu.busy_ns);
}

/* PyTorch's caching allocator, per device (torch_rows.h): a figure of each of its rows. */
enum torch_figure { TF_RESERVED, TF_ALLOCATED, TF_FREE, TF_EMPTY_CACHE, TF_BLOCKS, TF_LEAK };

static void torch(struct writer *w, const struct openmetrics_process *p, enum torch_figure what)
{
	for (size_t i = 0; i < p->rows->torch.n_device; i++) {
		const struct torch_row_device *d = &p->rows->torch.device[i];
		uint64_t v = what == TF_RESERVED ? d->reserved : what == TF_ALLOCATED ? d->allocated
			   : what == TF_FREE ? d->free_in_segments : what == TF_EMPTY_CACHE ? d->empty_cache
			   : what == TF_BLOCKS ? d->live_blocks : d->leak_bytes;
		bool known = what == TF_RESERVED || what == TF_FREE ? d->stats_known
			   : what == TF_EMPTY_CACHE ? d->empty_cache_known : true;
		char device[16];
		if (!known)
			continue;
		snprintf(device, sizeof device, "%d", d->device);
		sample_begin(w, p);
		label(w, "device", device);
		sample_u64(w, v);
	}
}

static void torch_reserved(struct writer *w, const struct openmetrics_process *p) { torch(w, p, TF_RESERVED); }
static void torch_allocated(struct writer *w, const struct openmetrics_process *p) { torch(w, p, TF_ALLOCATED); }
static void torch_free(struct writer *w, const struct openmetrics_process *p) { torch(w, p, TF_FREE); }
static void torch_empty(struct writer *w, const struct openmetrics_process *p) { torch(w, p, TF_EMPTY_CACHE); }
static void torch_blocks(struct writer *w, const struct openmetrics_process *p) { torch(w, p, TF_BLOCKS); }
static void torch_leak(struct writer *w, const struct openmetrics_process *p) { torch(w, p, TF_LEAK); }

/* The live picture of the job (figures/job_live.h): no sample where the process is not in it. */
static void job_wait_ratio(struct writer *w, const struct openmetrics_process *p)
{
	if (!p->job || p->job->wait_share < 0)
		return;
	sample_begin(w, p);
	fprintf(w->f, "} %.6f\n", p->job->wait_share);
}

/* Calls in flight at least this old, in seconds: a hang shows as calls a minute old. */
static const unsigned job_ages[] = { 0, 1, 10, 60 };

static void job_calls_in_flight(struct writer *w, const struct openmetrics_process *p)
{
	for (size_t a = 0; p->job && a < sizeof job_ages / sizeof job_ages[0]; a++) {
		uint64_t n = 0;
		for (int i = 0; i < p->job->n_threads; i++) {
			const struct job_thread *t = &p->job->threads[i];
			n += t->api >= 0 && t->from != JOB_CALL_STACK && t->age_ns >= job_ages[a] * 1000000000ull;
		}
		char age[16];
		snprintf(age, sizeof age, "%u", job_ages[a]);
		sample_begin(w, p);
		label(w, "min_age_seconds", age);
		sample_u64(w, n);
	}
}

static void job_oldest_call(struct writer *w, const struct openmetrics_process *p)
{
	if (!p->job)
		return;
	uint64_t oldest = 0;
	for (int i = 0; i < p->job->n_threads; i++) {
		const struct job_thread *t = &p->job->threads[i];
		if (t->api >= 0 && t->from != JOB_CALL_STACK && t->age_ns > oldest)
			oldest = t->age_ns;
	}
	sample_begin(w, p);
	sample_seconds(w, oldest);
}

static void job_odd_one_out(struct writer *w, const struct openmetrics_process *p)
{
	for (int b = 0; p->job && p->job->cuda && b < JOB_ODD_KINDS; b++) {
		sample_begin(w, p);
		label(w, "reason", job_odd_names[b]);
		sample_u64(w, (p->job->odd >> b) & 1);
	}
}

static void process_info(struct writer *w, const struct openmetrics_process *p)
{
	if (!p->command)
		return;
	sample_begin(w, p);
	label(w, "command", p->command);
	sample_u64(w, 1);
}

static const struct family families[] = {
	{ "gputop_process", INFO, NULL, "The traced process: its command line.", process_info },
	{ "gputop_process_running", GAUGE, NULL,
	  "1 while the process is traced, 0 once it has ended (its figures stay).", running },
	{ "gputop_api_calls", COUNTER, NULL, "Calls of a CUDA API function.", api_calls },
	{ "gputop_api_errors", COUNTER, NULL,
	  "Calls of a CUDA API function that returned an error (only where the return is probed).",
	  api_errors },
	{ "gputop_api_seconds", COUNTER, "seconds",
	  "Time spent inside a CUDA API function (only where the return is probed).", api_seconds },
	{ "gputop_api_unrecorded_calls", COUNTER, NULL,
	  "Records of calls dropped while gputop fell behind: the counts stay exact (the stubs keep them), the detail (per GPU, NCCL communicators, timeline) misses them.",
	  api_unrecorded },
	{ "gputop_launches", COUNTER, NULL, "Kernel launches, all kernels.", launches },
	{ "gputop_launches_estimated", GAUGE, NULL,
	  "1 when launch figures are extrapolated from samples (--max-overhead).", launches_estimated },
	{ "gputop_kernel_launches", COUNTER, NULL,
	  "Launches per kernel: the kernels with most launches when their series were made (at most "
	  "--metrics-top-kernels), the rest as \"(other kernels)\".", kernel_launches },
	{ "gputop_copy_calls", COUNTER, NULL, "Memory copy calls by direction and mode.", copy_calls },
	{ "gputop_copy_bytes", COUNTER, "bytes", "Bytes copied by direction and mode.", copy_bytes },
	{ "gputop_copy_seconds", COUNTER, "seconds", "Time inside copy calls by direction and mode.",
	  copy_seconds },
	{ "gputop_memset_calls", COUNTER, NULL, "Memset calls.", memset_calls },
	{ "gputop_memset_bytes", COUNTER, "bytes", "Bytes set by memset calls.", memset_bytes },
	{ "gputop_memset_seconds", COUNTER, "seconds", "Time inside memset calls.", memset_seconds },
	{ "gputop_sync_calls", COUNTER, NULL, "Synchronize calls.", sync_calls },
	{ "gputop_sync_seconds", COUNTER, "seconds", "Time blocked in synchronize calls.", sync_seconds },
	{ "gputop_live_bytes", GAUGE, "bytes", "Bytes allocated and not freed, by device and kind.",
	  live_bytes },
	{ "gputop_live_allocations", GAUGE, NULL, "Allocations not freed, by device and kind.",
	  live_allocations },
	{ "gputop_peak_device_bytes", GAUGE, "bytes", "Peak of live device and managed bytes.",
	  peak_device_bytes },
	{ "gputop_allocations", COUNTER, NULL, "Successful allocation calls.", allocations },
	{ "gputop_frees", COUNTER, NULL, "Frees of known allocations.", frees },
	{ "gputop_torch_reserved_bytes", GAUGE, "bytes",
	  "PyTorch's caching allocator: memory it holds from CUDA (torch.cuda.memory_reserved()), by device.",
	  torch_reserved },
	{ "gputop_torch_allocated_bytes", GAUGE, "bytes",
	  "PyTorch's caching allocator: bytes of the blocks it has handed out, by device.", torch_allocated },
	{ "gputop_torch_free_in_segments_bytes", GAUGE, "bytes",
	  "PyTorch's caching allocator: reserved but not handed out (cached, fragments), by device.",
	  torch_free },
	{ "gputop_torch_empty_cache_bytes", GAUGE, "bytes",
	  "PyTorch's caching allocator: about what torch.cuda.empty_cache() would give back, by device.",
	  torch_empty },
	{ "gputop_torch_live_blocks", GAUGE, NULL, "PyTorch's caching allocator: blocks handed out, by device.",
	  torch_blocks },
	{ "gputop_torch_leak_candidate_bytes", GAUGE, "bytes",
	  "PyTorch's caching allocator: bytes of blocks older than --leak-age, by device.", torch_leak },
	{ "gputop_nccl_calls", COUNTER, NULL, "NCCL operations called (collectives, Send, Recv), by op.",
	  nccl_calls },
	{ "gputop_nccl_bytes", COUNTER, "bytes",
	  "Bytes given to NCCL operations, by op (count x the datatype's size, as nccl-tests' size).",
	  nccl_bytes },
	{ "gputop_nccl_seconds", COUNTER, "seconds", "Time inside NCCL operation calls, by op.",
	  nccl_seconds },
	{ "gputop_p2p_bytes", COUNTER, "bytes",
	  "Bytes moved from one GPU to another: peer copies and ncclSend, by source and destination.",
	  p2p_bytes },
	{ "gputop_gpu_busy_seconds", COUNTER, "seconds",
	  "With --gpu-time: time some kernel of the process ran on a GPU (CUPTI's records; per device, "
	  "summed).", gpu_busy_seconds },
	{ "gputop_stops", COUNTER, NULL, "Times gputop stopped the program (its cost to the program).",
	  stops },
	{ "gputop_cpu_seconds", COUNTER, "seconds",
	  "gputop's own CPU time (user and system), for every traced process together.", NULL },
	{ "gputop_program_threads", GAUGE, NULL, "Threads of the traced program.", threads },
	{ "gputop_job_wait_ratio", GAUGE, "ratio",
	  "The job now: the share of the last 10 s the process's threads spent inside synchronizes and "
	  "collectives (no sample before half a second is watched).", job_wait_ratio },
	{ "gputop_job_calls_in_flight", GAUGE, NULL,
	  "The job now: CUDA and NCCL calls in flight that gputop saw begin, at least min_age_seconds old.",
	  job_calls_in_flight },
	{ "gputop_job_oldest_call_seconds", GAUGE, "seconds",
	  "The job now: how long the oldest CUDA or NCCL call in flight gputop saw begin has been inside (0: none).",
	  job_oldest_call },
	{ "gputop_job_odd_one_out", GAUGE, NULL,
	  "The job now: 1 where the rank is the odd one out for the reason (waits least: the straggler the "
	  "others wait for; behind, not waiting, another line: held 2 s), else 0.", job_odd_one_out },
};

static void family_header(struct writer *w)
{
	const struct family *fam = w->family;
	static const char om_type[][8] = { "counter", "gauge", "info" };

	if (w->format == METRICS_OPENMETRICS) {
		fprintf(w->f, "# TYPE %s %s\n", fam->name, om_type[fam->type]);
		if (fam->unit)
			fprintf(w->f, "# UNIT %s %s\n", fam->name, fam->unit);
		fprintf(w->f, "# HELP %s %s\n", fam->name, fam->help);
		return;
	}
	/* 0.0.4 has no info type: an info family is a gauge of value 1, named with _info. */
	const char *suffix = fam->type == COUNTER ? "_total" : fam->type == INFO ? "_info" : "";
	fprintf(w->f, "# HELP %s%s %s\n", fam->name, suffix, fam->help);
	fprintf(w->f, "# TYPE %s%s %s\n", fam->name, suffix, fam->type == COUNTER ? "counter" : "gauge");
}

/* --- the series a process keeps ---------------------------------------------------------------- */

void openmetrics_series_init(struct openmetrics_series *s)
{
	memset(s, 0, sizeof(*s));
}

void openmetrics_series_free(struct openmetrics_series *s)
{
	free(s->kernel_ids);
	free(s->has_series);
	memset(s, 0, sizeof(*s));
}

/* Gives series to the kernels with most launches while there is room, and notes the devices
 * with live memory. A reset of the figures starts the choice afresh. */
static int series_update(struct openmetrics_series *s, const struct openmetrics_process *p, size_t top)
{
	const struct stats_snapshot *snap = p->snap;

	if (s->start_ns != snap->start_ns) {
		s->start_ns = snap->start_ns;
		s->n_kernels = 0;
		s->devices_seen = 0;
		if (s->has_series)
			memset(s->has_series, 0, s->has_series_len * sizeof(*s->has_series));
	}
	if (!s->kernel_ids && top) {
		s->kernel_ids = calloc(top, sizeof(*s->kernel_ids));
		if (!s->kernel_ids)
			return -ENOMEM;
	}
	if (s->has_series_len < snap->n_kernel) {
		bool *grown = realloc(s->has_series, snap->n_kernel * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		memset(grown + s->has_series_len, 0, (snap->n_kernel - s->has_series_len) * sizeof(*grown));
		s->has_series = grown;
		s->has_series_len = snap->n_kernel;
	}
	for (size_t i = 0; i < p->rows->n_kernel && s->n_kernels < top; i++) {
		const struct row_kernel *k = &p->rows->kernel[i];

		if (s->has_series[k->id] || (k->name && strcmp(k->name, OTHER_KERNELS) == 0))
			continue;
		s->has_series[k->id] = true;
		s->kernel_ids[s->n_kernels++] = k->id;
	}
	for (size_t i = 0; i < p->rows->n_alloc; i++)
		s->devices_seen |= UINT64_C(1) << device_bit(p->rows->alloc[i].device);
	return 0;
}

int openmetrics_write(FILE *f, enum metrics_format format, const struct openmetrics_session *session,
		      const struct openmetrics_process *procs, size_t n, size_t top_kernels)
{
	struct writer w = { .f = f, .format = format, .session = session };

	for (size_t i = 0; i < n; i++)
		if (series_update(procs[i].series, &procs[i], top_kernels) < 0)
			return -ENOMEM;
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		w.family = &families[i];
		family_header(&w);
		if (!families[i].samples)
			session_sample(&w);
		for (size_t j = 0; families[i].samples && j < n; j++)
			families[i].samples(&w, &procs[j]);
	}
	if (format == METRICS_OPENMETRICS)
		fputs("# EOF\n", f);
	if (fflush(f) == EOF || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

/* --- content negotiation ------------------------------------------------------------------------ */

enum metrics_format openmetrics_negotiate(const char *accept)
{
	/* Prometheus asks "application/openmetrics-text;version=1.0.0,...;q=0.75,text/plain;
	 * version=0.0.4;q=0.5,*\/\*;q=0.1". A scraper that names OpenMetrics gets it; curl and
	 * older scrapers get the text format every Prometheus reads. */
	return accept && strstr(accept, "application/openmetrics-text") ? METRICS_OPENMETRICS
								       : METRICS_PROMETHEUS;
}

const char *openmetrics_content_type(enum metrics_format format)
{
	return format == METRICS_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
					     : "text/plain; version=0.0.4; charset=utf-8";
}
