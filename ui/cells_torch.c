/* cells_torch.c — the text of PyTorch's memory rows (torch_rows.h), once for the Memory view and
 * for -b (cells.h): the state line, a line per device, a block's cells, a line's. */
#include "cells.h"
#include "stack_text.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void cells_torch_state(char *buf, size_t n, const struct torch_rows *t)
{
	char bytes[FMT_LEN], age[FMT_LEN], before[160];
	switch (t->state) {
	case TORCH_ABSENT:
		snprintf(buf, n, "PyTorch: no CUDA caching allocator here (no libc10_cuda.so)");
		return;
	case TORCH_UNKNOWN:
	case TORCH_NOT_READ:
		snprintf(buf, n, "PyTorch: %s", *t->why ? t->why : torch_status_name(t->state));
		return;
	}
	fmt_bytes(bytes, sizeof bytes, t->before_bytes);
	if (t->before == TORCH_BEFORE_READ)
		snprintf(before, sizeof before, "%" PRIu64 " blocks (%s) live before gputop came, read",
			 t->before_blocks, bytes);
	else if (t->before == TORCH_BEFORE_UNKNOWN)
		snprintf(before, sizeof before, "%s", *t->why ? t->why : "blocks before attach unknown");
	else
		snprintf(before, sizeof before, "every block seen handed out");
	fmt_bytes(bytes, sizeof bytes, t->leak_bytes);
	fmt_age(age, sizeof age, t->leak_age_ns);
	snprintf(buf, n, "PyTorch's caching allocator: %zu live blocks; %s; older than %s: %zu (%s)", t->n_block,
		 before, age, t->n_leak, bytes);
}

void cells_torch_device(char *buf, size_t n, const struct torch_row_device *d, const struct rows *rs)
{
	char who[CELLS_FIG * 2], reserved[FMT_LEN], alloc[FMT_LEN], theirs[FMT_LEN], free_[FMT_LEN], empty[FMT_LEN];
	char pid[CELLS_FIG];
	cells_process(pid, sizeof pid, d->pid, rs);
	if (rs->torch.snap && rs->torch.snap->n_proc > 1)
		snprintf(who, sizeof who, "%s GPU %d", pid, d->device);
	else
		snprintf(who, sizeof who, "GPU %d", d->device);
	fmt_bytes(alloc, sizeof alloc, d->allocated);
	if (!d->stats_known) {
		snprintf(buf, n, "%s: allocated %s in %" PRIu64 " blocks (reserved not known)", who, alloc, d->live_blocks);
		return;
	}
	fmt_bytes(reserved, sizeof reserved, d->reserved);
	fmt_bytes(theirs, sizeof theirs, d->stats_allocated);
	fmt_bytes(free_, sizeof free_, d->free_in_segments);
	if (d->empty_cache_known)
		fmt_bytes(empty, sizeof empty, d->empty_cache);
	else
		snprintf(empty, sizeof empty, "%s", fmt_dash());
	char agree[FMT_LEN + 32];
	if (d->agrees)
		snprintf(agree, sizeof agree, "as PyTorch counts");
	else
		snprintf(agree, sizeof agree, "PyTorch counts %s", theirs);
	snprintf(buf, n, "%s: reserved %s, allocated %s (%s) in %" PRIu64 " blocks, free in segments %s, "
		 "empty_cache() would give back ~%s", who, reserved, alloc, agree, d->live_blocks, free_, empty);
}

void cells_torch_block(struct cells_torch_block *c, const struct torch_row_block *b, const struct rows *rs)
{
	memset(c, 0, sizeof *c);
	c->address = b->address;
	cells_process(c->process, sizeof c->process, b->b->pid, rs);
	fmt_bytes(c->size, sizeof c->size, b->b->size);
	fmt_bytes(c->requested, sizeof c->requested, b->b->requested);
	snprintf(c->device, sizeof c->device, "%d", b->b->device);
	snprintf(c->stream, sizeof c->stream, "%#" PRIx64, b->b->stream);
	char age[FMT_LEN];
	fmt_age(age, sizeof age, b->age_ns);
	snprintf(c->age, sizeof c->age, "%s%s", b->before ? ">" : "", age);	/* from before: at least */
	cells_torch_site(c->site, sizeof c->site, b->site, b->before);
}

void cells_torch_site(char *buf, size_t n, const struct stack_frame *site, bool before)
{
	if (site)
		stack_text_frame_brief(buf, n, site);
	else
		snprintf(buf, n, "%s", before ? "(before gputop came)" : "(no stack: --stacks allocs)");
}

void cells_torch_oom(char *buf, size_t n, const struct torch_oom_event *e)
{
	const struct stack_frame *f = torch_rows_request_site(e->stack);
	char size[FMT_LEN], free_[FMT_LEN], largest[FMT_LEN], at[300] = "", sums[160] = "";
	fmt_bytes(size, sizeof size, e->size);
	fmt_bytes(free_, sizeof free_, e->free_in_segments);
	fmt_bytes(largest, sizeof largest, e->largest_free);
	if (f && f->file)
		snprintf(at, sizeof at, " at %s:%u", f->file, f->line);
	if (e->sums_known)
		snprintf(sums, sizeof sums, "; free in segments %s, largest free block %s: %s", free_, largest,
			 e->fragmentation ? "fragmentation" : "not fragmentation");
	char what[160], page[FMT_LEN];
	fmt_bytes(page, sizeof page, e->page_bytes);
	if (e->page_bytes)	/* an expandable segment's page failed: the request is PyTorch's */
		snprintf(what, sizeof what, "a request of %s (%s of a %s page)", size, e->api, page);
	else
		snprintf(what, sizeof what, "%s of %s", e->api[0] ? e->api : "an allocation", size);
	snprintf(buf, n, "OUT OF MEMORY in %d: %s on GPU %d failed%s%s%s", (int)e->pid, what, e->device,
		 e->by_torch ? " (PyTorch's allocator gave up)" : "", at, sums);
}
