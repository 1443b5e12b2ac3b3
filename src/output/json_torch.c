/* json_torch.c — the --json summary's "torch_memory" (json.h lists its fields): PyTorch's
 * memory as its rows hold it (torch_rows.h), the same the Memory view and -b show. */
#include "json_torch.h"
#include "torch_rows.h"
#include "torch_shot.h"

#include <stdio.h>

#define JSON_TORCH_BLOCKS 50	/* largest blocks and leak candidates written, at most */

static double seconds(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* The line a block was allocated at: function, file, line; null when no stack was taken. */
static void json_site(struct jw *w, const struct stack_frame *f)
{
	if (!f) {
		jw_null(w);
		return;
	}
	jw_open(w, '{');
	jw_key(w, "function");
	jw_str(w, f->function);
	jw_key(w, "file");
	jw_str(w, f->file);
	jw_key(w, "line");
	jw_u64_if(w, f->line, f->line);
	jw_key(w, "python");
	jw_bool(w, f->python);
	jw_close(w);
}

static void json_device(struct jw *w, const struct torch_row_device *d)
{
	jw_open(w, '{');
	jw_key(w, "pid");
	jw_int(w, d->pid);
	jw_key(w, "device");
	jw_int(w, d->device);
	jw_key(w, "reserved_bytes");
	jw_u64_if(w, d->stats_known, d->reserved);
	jw_key(w, "reserved_peak_bytes");
	jw_u64_if(w, d->stats_known, d->reserved_peak);
	jw_key(w, "allocated_bytes");
	jw_u64(w, d->allocated);
	jw_key(w, "allocator_allocated_bytes");
	jw_u64_if(w, d->stats_known, d->stats_allocated);
	jw_key(w, "allocator_allocated_peak_bytes");
	jw_u64_if(w, d->stats_known, d->stats_allocated_peak);
	jw_key(w, "agrees");
	if (d->stats_known)
		jw_bool(w, d->agrees);
	else
		jw_null(w);
	jw_key(w, "requested_bytes");
	jw_u64(w, d->requested);
	jw_key(w, "free_in_segments_bytes");
	jw_u64_if(w, d->stats_known, d->free_in_segments);
	jw_key(w, "empty_cache_bytes");
	jw_u64_if(w, d->empty_cache_known, d->empty_cache);
	jw_key(w, "live_blocks");
	jw_u64(w, d->live_blocks);
	jw_key(w, "segments");
	jw_int_if(w, d->stats_known, d->segments);
	jw_key(w, "leak_candidate_bytes");
	jw_u64(w, d->leak_bytes);
	jw_key(w, "leak_candidate_blocks");
	jw_u64(w, d->leak_blocks);
	jw_key(w, "ooms");
	jw_int_if(w, d->stats_known, d->ooms);
	jw_close(w);
}

static void json_block(struct jw *w, const struct torch_row_block *b)
{
	jw_open(w, '{');
	jw_key(w, "pid");
	jw_int(w, b->b->pid);
	jw_key(w, "device");
	jw_int(w, b->b->device);
	jw_key(w, "address");
	jw_str(w, b->address);
	jw_key(w, "bytes");
	jw_u64(w, b->b->size);
	jw_key(w, "requested_bytes");
	jw_u64(w, b->b->requested);
	jw_key(w, "stream");
	jw_u64(w, b->b->stream);
	jw_key(w, "age_s");
	jw_double(w, seconds(b->age_ns));
	jw_key(w, "before_attach");
	jw_bool(w, b->before);
	jw_key(w, "expandable_segment");
	jw_bool(w, b->b->expandable);
	jw_key(w, "site");
	json_site(w, b->site);
	jw_close(w);
}

static void json_sites(struct jw *w, const struct torch_rows *r)
{
	jw_key(w, "by_line");
	jw_open(w, '[');
	for (size_t i = 0; i < r->n_site; i++) {
		const struct torch_row_site *s = &r->site[i];
		jw_open(w, '{');
		jw_key(w, "site");
		json_site(w, s->site);
		jw_key(w, "before_attach");
		jw_bool(w, s->before);
		jw_key(w, "live_bytes");
		jw_u64(w, s->live_bytes);
		jw_key(w, "live_blocks");
		jw_u64(w, s->live_blocks);
		jw_key(w, "oldest_age_s");
		jw_double(w, seconds(s->oldest_age_ns));
		jw_key(w, "stack");
		jw_stack(w, s->site ? s->stack : 0);
		jw_close(w);
	}
	jw_close(w);
}

/* An out-of-memory: the request, its line, the allocator then (null where not followed). */
static void json_oom(struct jw *w, const struct torch_oom_event *e, uint64_t now)
{
	jw_open(w, '{');
	jw_key(w, "pid");
	jw_u64(w, (uint64_t)e->pid);
	jw_key(w, "seconds_ago");
	jw_double(w, seconds(now > e->t_ns ? now - e->t_ns : 0));
	jw_key(w, "function");
	jw_str(w, e->api[0] ? e->api : NULL);
	jw_key(w, "error");
	jw_u64(w, (uint64_t)e->error);
	jw_key(w, "bytes");
	jw_u64(w, e->size);
	jw_key(w, "page_bytes");	/* an expandable segment's page that failed; null: not one */
	e->page_bytes ? jw_u64(w, e->page_bytes) : jw_null(w);
	jw_key(w, "device");
	jw_u64(w, (uint64_t)e->device);
	jw_key(w, "pytorch_gave_up");
	jw_bool(w, e->by_torch);
	jw_key(w, "stream");	/* "0x...", "none" (the function takes none), null (not known) */
	if (e->stream_is == TORCH_OOM_STREAM_READ) {
		char hex[24];
		snprintf(hex, sizeof hex, "%#llx", (unsigned long long)e->stream);
		jw_str(w, hex);
	} else {
		jw_str(w, e->stream_is == TORCH_OOM_STREAM_NONE ? "none" : NULL);
	}
	jw_key(w, "line");
	json_site(w, torch_rows_request_site(e->stack));
	jw_key(w, "reserved_bytes");
	e->sums_known ? jw_u64(w, e->reserved) : jw_null(w);
	jw_key(w, "allocated_bytes");
	e->sums_known ? jw_u64(w, e->allocated) : jw_null(w);
	jw_key(w, "free_in_segments_bytes");
	e->sums_known ? jw_u64(w, e->free_in_segments) : jw_null(w);
	jw_key(w, "largest_free_block_bytes");
	e->sums_known ? jw_u64(w, e->largest_free) : jw_null(w);
	jw_key(w, "fragmentation");
	e->sums_known ? jw_bool(w, e->fragmentation) : jw_null(w);
	jw_close(w);
}

void json_torch(struct jw *w, const struct rows *rs)
{
	const struct torch_rows *r = &rs->torch;
	jw_key(w, "torch_memory");
	jw_open(w, '{');
	jw_key(w, "state");
	jw_str(w, torch_status_name(r->state));
	jw_key(w, "message");
	jw_str(w, r->why && *r->why ? r->why : NULL);
	jw_key(w, "blocks_before_attach");
	jw_str(w, r->state == TORCH_TRACKING ? torch_before_name(r->before) : NULL);
	jw_key(w, "before_attach_blocks");
	jw_u64(w, r->before_blocks);
	jw_key(w, "before_attach_bytes");
	jw_u64(w, r->before_bytes);
	jw_key(w, "allocs");
	jw_u64(w, r->allocs);
	jw_key(w, "frees");
	jw_u64(w, r->frees);
	jw_key(w, "unknown_frees");
	jw_u64(w, r->unknown_frees);
	jw_key(w, "threads_at_read");
	jw_u64(w, r->read_threads);
	jw_key(w, "unread_blocks");
	jw_u64(w, r->unread);
	jw_key(w, "leak_age_s");
	jw_double(w, seconds(r->leak_age_ns));
	jw_key(w, "devices");
	jw_open(w, '[');
	for (size_t i = 0; i < r->n_device; i++)
		json_device(w, &r->device[i]);
	jw_close(w);
	jw_key(w, "largest_blocks");
	jw_open(w, '[');
	for (size_t i = 0; i < r->n_block && i < JSON_TORCH_BLOCKS; i++)
		json_block(w, &r->block[i]);
	jw_close(w);
	json_sites(w, r);
	jw_key(w, "oom");
	jw_open(w, '[');
	for (size_t i = 0; r->snap && i < r->snap->n_oom; i++)
		json_oom(w, &r->snap->oom[i], r->snap->t_ns);
	jw_close(w);
	jw_key(w, "leak_candidates");
	jw_open(w, '[');
	for (size_t i = 0; i < r->n_leak && i < JSON_TORCH_BLOCKS; i++)
		json_block(w, r->leak[i]);
	jw_close(w);
	jw_close(w);
}
