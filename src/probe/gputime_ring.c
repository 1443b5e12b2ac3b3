/* gputime_ring.c — reading --gpu-time's totals out of the program (gputime_ring.h): the header
 * and the totals with process_vm_readv, the kernels' sums only when something grew; each kernel
 * name read once, demangled and joined to gputop's kernel rows by that name (the name gputop
 * gives a kernel is the demangled one too, whether from the program's symbols or from
 * cuFuncGetName). */
#include "gputime_ring.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "memory.h"
#include "stats.h"

struct gputime_ring {
	pid_t pid;
	uint64_t shared;	/* struct gt_shared in the program */
	uint64_t beat;		/* gputop's looks, counted into the program (gt_shared.beat) */
	int *ids;		/* kernel id per name index; -2: not read yet */
	struct gt_shared *head;	/* the words before the kernels' sums, as last read: only they
				 * are allocated (the whole is megabytes) */
	struct gputime_feed feed;
	struct gt_sum kernel[GT_NAMES];	/* the kernels' sums, as last read */
};

#define AT(field) (g->shared + offsetof(struct gt_shared, field))

static int kernel_id(void *ctx, uint32_t name)
{
	struct gputime_ring *g = ctx;
	if (name >= GT_NAMES)
		return -1;
	if (g->ids[name] != -2)
		return g->ids[name];
	uint32_t off = 0;
	char text[16384];
	g->ids[name] = -1;
	if (mem_read(g->pid, AT(name_at) + 4ull * name, &off, sizeof off) == 0 && off < GT_NAME_BYTES &&
	    mem_read_string(g->pid, AT(names) + off, text, sizeof text) == 0) {
		char *d = kernels_demangle(text);
		g->ids[name] = d ? stats_kernel_id(g->feed.proc, d) : -1;
		free(d);
	}
	return g->ids[name];
}

struct gputime_ring *gputime_ring_new(pid_t pid, int proc, uint64_t shared)
{
	struct gputime_ring *g = calloc(1, sizeof *g);
	if (!g || !(g->ids = malloc(GT_NAMES * sizeof *g->ids)) ||
	    !(g->head = malloc(offsetof(struct gt_shared, kernel))) ||
	    !(g->feed.last_kernel = calloc(GT_NAMES, sizeof *g->feed.last_kernel))) {
		gputime_ring_free(g);
		return NULL;
	}
	for (int i = 0; i < GT_NAMES; i++)
		g->ids[i] = -2;
	g->pid = pid;
	g->shared = shared;
	g->feed.proc = proc;
	g->feed.kernel_id = kernel_id;
	g->feed.ctx = g;
	return g;
}

void gputime_ring_free(struct gputime_ring *g)
{
	if (g) {
		free(g->ids);
		free(g->head);
		free(g->feed.last_kernel);
	}
	free(g);
}

int gputime_ring_header(struct gputime_ring *g, struct gputime_header *h)
{
	const struct gt_shared *head = g->head;
	int err = mem_read(g->pid, g->shared, g->head, offsetof(struct gt_shared, kernel));
	if (err < 0)
		return err;
	if (head->magic != GT_MAGIC || head->version != GT_VERSION)
		return -ENOENT;	/* unloaded, and something else mapped there */
	*h = (struct gputime_header){ .state = head->state, .status = head->status,
				      .cupti_result = head->cupti_result, .cupti_kept = head->cupti_kept,
				      .helper_tid = head->helper_tid,
				      .cupti_dropped = head->cupti_dropped, .names_used = head->names_used,
				      .names_dropped = head->names_dropped, .totals = head->totals };
	memcpy(h->message, head->message, sizeof h->message);
	h->message[sizeof h->message - 1] = 0;
	return 0;
}

long gputime_ring_drain(struct gputime_ring *g)
{
	struct gputime_header h;
	int err = gputime_ring_header(g, &h);
	if (err < 0)
		return err;
	uint64_t grew = h.totals.records - g->feed.last.records;
	if (!grew)
		return 0;
	uint32_t n = h.names_used < GT_NAMES ? h.names_used : GT_NAMES;
	if (n && (err = mem_read(g->pid, AT(kernel), g->kernel, n * sizeof *g->kernel)) < 0)
		return err;
	gputime_feed_totals(&g->feed, &h.totals, g->kernel, n);
	return (long)grew;
}

static int put_word(struct gputime_ring *g, uint64_t at)
{
	uint32_t one = 1;
	return mem_write(g->pid, at, &one, sizeof one);
}

int gputime_ring_ask_stop(struct gputime_ring *g)
{
	return put_word(g, AT(stop));
}

int gputime_ring_release(struct gputime_ring *g)
{
	return put_word(g, AT(released));
}

int gputime_ring_beat(struct gputime_ring *g)
{
	g->beat++;
	return mem_write(g->pid, AT(beat), &g->beat, sizeof g->beat);
}

uint64_t gputime_ring_unnamed(const struct gputime_ring *g)
{
	return g->feed.unnamed;
}

struct gputime_state *gputime_state_new(void)
{
	return calloc(1, sizeof(struct gputime_state));
}

void gputime_state_free(struct gputime_state *st)
{
	if (st)
		gputime_ring_free(st->ring);
	free(st);
}
