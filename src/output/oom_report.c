/* oom_report.c — the report of an out-of-memory (oom_report.h). */
#define _GNU_SOURCE
#include "oom_report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "outfile.h"
#include "stacks.h"
#include "torch_rows.h"

#define TOP 10

static void where(char *buf, size_t size, uint32_t stack)
{
	const struct stack_frame *f = torch_rows_site(stack);
	if (!f)
		snprintf(buf, size, "%s", stack ? "?" : "(no stack: from before gputop came, or no --stacks allocs)");
	else if (f->file && f->line)
		snprintf(buf, size, "%s:%u (%s)", f->file, f->line, f->function ? f->function : "?");
	else
		snprintf(buf, size, "%s", f->function ? f->function : "?");
}

static void frame_text(char *buf, size_t size, const struct stack_frame *f)
{
	if (!f)
		snprintf(buf, size, "(no stack: no --stacks allocs)");
	else if (f->file && f->line)
		snprintf(buf, size, "%s:%u (%s)", f->file, f->line, f->function ? f->function : "?");
	else
		snprintf(buf, size, "%s", f->function ? f->function : "?");
}

static int device_of(const struct torch_oom *o, const struct torch_shot *s)
{
	return o->device >= 0 ? o->device : s && s->n_device ? s->device[0].device : 0;
}

void oom_report_line(char *buf, size_t size, const struct torch_oom *o, const struct torch_shot *s)
{
	struct torch_shot_sums sum = { 0 };
	int d = device_of(o, s);
	if (s)
		torch_shot_sum(s, d, &sum);
	const char *verdict = !s || !o->size ? ""
			      : sum.free >= o->size && sum.largest_free < o->size
				  ? ": fragmentation (free in segments >= the request, no free block large enough)"
				  : ": not fragmentation (the segments' free bytes are fewer than the request)";
	char what[160];
	bool request_read = o->stream_is == TORCH_OOM_STREAM_READ;	/* its AllocParams, and size */
	if (o->page_bytes && request_read)
		snprintf(what, sizeof what, "a request of %llu bytes (%s of a %llu-byte page of an expandable segment)",
			 (unsigned long long)o->size, o->api, (unsigned long long)o->page_bytes);
	else if (o->page_bytes)
		snprintf(what, sizeof what, "%s of a %llu-byte page of an expandable segment (the request not read)",
			 o->api, (unsigned long long)o->page_bytes);
	else
		snprintf(what, sizeof what, "%s of %llu bytes", o->api ? o->api : "an allocation",
			 (unsigned long long)o->size);
	snprintf(buf, size, "out of memory in %d: %s on GPU %d failed (error %d)%s%s", (int)o->pid, what, d,
		 o->error, o->by_torch ? "; PyTorch's allocator gave up after freeing its cache" : "", verdict);
}

struct line_sum {
	const struct stack_frame *site;
	uint32_t stack;
	uint64_t bytes, blocks;
};

static int by_bytes(const void *a, const void *b)
{
	const struct line_sum *x = a, *y = b;
	return x->bytes > y->bytes ? -1 : x->bytes < y->bytes;
}

static int by_size(const void *a, const void *b)
{
	const struct torch_shot_block *x = *(const struct torch_shot_block *const *)a;
	const struct torch_shot_block *y = *(const struct torch_shot_block *const *)b;
	return x->size > y->size ? -1 : x->size < y->size;
}

void oom_report_print(FILE *f, const struct torch_oom *o, const struct torch_shot *s)
{
	char line[512], at[300];
	oom_report_line(line, sizeof line, o, s);
	fprintf(f, "gputop: %s\n", line);
	frame_text(at, sizeof at, torch_rows_request_site(o->stack));
	fprintf(f, "request: %llu bytes, GPU %d, %s, error %d, at %s\n", (unsigned long long)o->size, device_of(o, s),
		o->api ? o->api : "?", o->error, at);
	if (o->page_bytes)
		fprintf(f, "page: the failed %s made one %llu-byte page of an expandable segment; %s\n", o->api,
			(unsigned long long)o->page_bytes,
			o->stream_is == TORCH_OOM_STREAM_READ ? "the request's bytes are PyTorch's (its AllocParams, read held)"
							      : "PyTorch's request was not read: the bytes are the page's");
	if (o->stream_is == TORCH_OOM_STREAM_READ)
		fprintf(f, "stream: %#llx (PyTorch's allocator's request)\n", (unsigned long long)o->stream);
	else
		fprintf(f, "stream: %s\n", torch_oom_stream_text(o->stream_is));
	if (!s) {
		fprintf(f, "PyTorch's caching allocator: not followed in this process\n");
		return;
	}
	int d = device_of(o, s);
	struct torch_shot_sums sum;
	torch_shot_sum(s, d, &sum);
	for (size_t i = 0; i < s->n_device; i++)
		if (s->device[i].device == d && s->device[i].stats_known)
			fprintf(f, "allocator: reserved %lld, allocated %lld (memory_reserved(), memory_allocated())\n",
				(long long)s->device[i].reserved, (long long)s->device[i].allocated);
	fprintf(f, "segments: %llu, %llu bytes; allocated %llu; free in segments %llu; largest free block %llu\n",
		(unsigned long long)sum.segments, (unsigned long long)sum.total, (unsigned long long)sum.allocated,
		(unsigned long long)sum.free, (unsigned long long)sum.largest_free);
	if (o->size)
		fprintf(f, "verdict: %s\n", sum.free >= o->size && sum.largest_free < o->size
			? "fragmentation: enough bytes free in segments, no free block large enough"
			: "not fragmentation: the segments' free bytes are fewer than the request");
	fprintf(f, "state: %s\n", o->held ? "read at the failure's instant (its thread held at the failed call's return)"
					  : "read at gputop's next look after the failure (the program ran on meanwhile)");
	if (s->why[0])
		fprintf(f, "note: %s\n", s->why);
	/* Live bytes by line, the largest blocks. */
	struct line_sum *ls = calloc(s->n_block + 1, sizeof *ls);
	const struct torch_shot_block **big = calloc(s->n_block + 1, sizeof *big);
	size_t n_ls = 0, n_big = 0;
	for (size_t i = 0; ls && big && i < s->n_segment; i++) {
		const struct torch_shot_segment *g = &s->segment[i];
		for (size_t k = g->first; g->device == d && k < g->first + g->n; k++) {
			const struct torch_shot_block *b = &s->block[k];
			if (b->state != SHOT_ACTIVE_ALLOCATED)
				continue;
			big[n_big++] = b;
			const struct stack_frame *site = torch_rows_site(b->stack);
			size_t j = 0;
			while (j < n_ls && !(ls[j].site == site ||
					     (site && ls[j].site && site->file && ls[j].site->file &&
					      !strcmp(site->file, ls[j].site->file) && site->line == ls[j].site->line)))
				j++;
			if (j == n_ls)
				ls[n_ls++] = (struct line_sum){ .site = site, .stack = b->stack };
			ls[j].bytes += b->size;
			ls[j].blocks++;
		}
	}
	if (ls && big) {
		qsort(ls, n_ls, sizeof *ls, by_bytes);
		qsort(big, n_big, sizeof *big, by_size);
		fprintf(f, "live bytes by line:\n");
		for (size_t j = 0; j < n_ls; j++) {
			where(at, sizeof at, ls[j].site ? ls[j].stack : 0);
			fprintf(f, "  %14llu %6llu  %s\n", (unsigned long long)ls[j].bytes, (unsigned long long)ls[j].blocks, at);
		}
		fprintf(f, "largest blocks:\n");
		for (size_t j = 0; j < n_big && j < TOP; j++) {
			where(at, sizeof at, big[j]->stack);
			fprintf(f, "  %#14llx %14llu %14llu  %s\n", (unsigned long long)big[j]->address,
				(unsigned long long)big[j]->size, (unsigned long long)big[j]->requested, at);
		}
	}
	free(ls);
	free(big);
}

int oom_report_write(const char *path, const struct torch_oom *o, const struct torch_shot *s)
{
	char *tmp = NULL;
	int fd = outfile_temp_beside(path, &tmp), err = 0;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		err = -errno;
		if (fd >= 0)
			close(fd);
	} else {
		oom_report_print(f, o, s);
		if (fflush(f) != 0 || fsync(fileno(f)) < 0)
			err = -errno;
		if (fclose(f) != 0 && !err)
			err = -errno;
		if (!err && rename(tmp, path) < 0)
			err = -errno;
	}
	if (err && tmp)
		unlink(tmp);
	if (err)
		log_warn("cannot write the out-of-memory report %s: %s", path, strerror(-err));
	free(tmp);
	return err;
}
