/* gputime_ring.h — gputop's side of --gpu-time's shared memory (inject/gputime_layout.h): the
 * header and the totals libgputop-gpu.so keeps in the program, read with process_vm_readv
 * whenever gputop likes; what grew since the last read turned into figures (kernels' GPU time
 * joined to gputop's kernel rows by demangled name, copies' GPU-side durations, busy time). */
#ifndef GPUTOP_GPUTIME_RING_H
#define GPUTOP_GPUTIME_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gputime_layout.h"

/* The library's words gputop looks at: state, status, message, counts. */
struct gputime_header {
	uint32_t state;		/* enum gt_state */
	int32_t status;		/* enum gt_status */
	int32_t cupti_result;
	uint32_t cupti_kept;
	uint32_t helper_tid;	/* the library's thread */
	uint64_t cupti_dropped;
	uint32_t names_used, names_dropped;
	struct gt_totals totals;
	char message[256];
};

/* A traced process's --gpu-time (tracee->gputime, made and freed with it; its life is
 * engine/gputime.c's). */
enum gputime_phase { GPUTIME_WAITING, GPUTIME_LOADING, GPUTIME_ON, GPUTIME_DONE };
struct gputime_state {
	enum gputime_phase phase;
	uint64_t handle;		/* the library's, from dlopen */
	uint64_t flush;			/* its gputop_gpu_flush */
	struct gputime_ring *ring;
	struct gputime_header last;	/* the header at the last look */
	bool final_read;		/* stopping: its last totals read, release said */
};
struct gputime_state *gputime_state_new(void);
void gputime_state_free(struct gputime_state *st);

/* What turns the totals into figures: the part of it that needs no program (unit-tested). */
struct gputime_feed {
	struct gt_totals last;		/* the totals at the last read */
	struct gt_sum *last_kernel;	/* [GT_NAMES]: each kernel's at the last read */
	uint64_t unnamed;	/* kernel runs without a name */
	int proc;		/* the process's figures (stats.h) */
	/* A kernel id of those figures for the library's name index; -1: none. */
	int (*kernel_id)(void *ctx, uint32_t name);
	void *ctx;
};

/* Adds to the figures (stats.h) what grew between the last totals fed and these: each
 * kernel's runs (kernel[0..n)), copies by direction, memsets, the busy time. */
void gputime_feed_totals(struct gputime_feed *f, const struct gt_totals *t, const struct gt_sum *kernel, uint32_t n);

/* The reader of one process's ring. */
struct gputime_ring;
struct gputime_ring *gputime_ring_new(pid_t pid, int proc, uint64_t shared);
void gputime_ring_free(struct gputime_ring *g);
/* Reads the header: 0, or -errno (-EFAULT / -ESRCH: the library is gone). */
int gputime_ring_header(struct gputime_ring *g, struct gputime_header *h);
/* Reads the totals and feeds what grew since the last read: the number of records it sums, or
 * -errno. */
long gputime_ring_drain(struct gputime_ring *g);
/* gputop's words: stop (flush and unload) and released (the last totals were read). */
int gputime_ring_ask_stop(struct gputime_ring *g);
int gputime_ring_release(struct gputime_ring *g);
/* Counts one look of gputop's into the program: the library's sign that gputop is there
 * where TracerPid cannot say (gputop outside the program's PID namespace). 0 or -errno. */
int gputime_ring_beat(struct gputime_ring *g);
uint64_t gputime_ring_unnamed(const struct gputime_ring *g);

#endif
