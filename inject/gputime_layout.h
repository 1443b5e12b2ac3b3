/* gputime_layout.h — the memory that libgputop-gpu.so (inject/gputime.c, loaded into the
 * program by --gpu-time) shares with gputop (src/probe/gputime_ring.c): a header of words each
 * written by one side only, the totals the library sums CUPTI's records into in place (each
 * kernel's runs by name, copies, memsets, busy time: gputop reads them whenever it likes, so
 * that no figure depends on gputop keeping up) and the kernel names. Written once here for
 * both; plain C types, x86-64 layout. */
#ifndef GPUTOP_GPUTIME_LAYOUT_H
#define GPUTOP_GPUTIME_LAYOUT_H

#include <stdint.h>

#define GT_MAGIC 0x656d697475706721ull	/* "!gputime" */
#define GT_VERSION 2
#define GT_NAMES 8192			/* distinct kernel names */
#define GT_NAME_BYTES (2u << 20)	/* their text */
#define GT_NO_NAME 0xffffffffu
#define GT_COPY_KINDS 16		/* CUpti_ActivityMemcpyKind, below 16 */
#define GT_DEVICES 64

/* The library's state (gt_shared.state), in order. */
enum gt_state {
	GT_STARTING = 1,	/* the start function returned; its thread is setting CUPTI up */
	GT_RUNNING,		/* CUPTI records kernels, copies and memsets into the totals */
	GT_FINAL,		/* set up failed (status says why), or stopped and flushed: the totals
				 * hold every record there will be; it waits for gputop's release */
	GT_UNLOADING,		/* released: CUPTI and the library are being unloaded */
};

/* Why it stopped or failed (gt_shared.status). */
enum gt_status {
	GT_OK = 0,
	GT_ERR_CUPTI_OPEN,	/* dlopen of libcupti failed (message: dlerror) */
	GT_ERR_CUPTI_SYMBOL,	/* a CUPTI function is missing (message: its name) */
	GT_ERR_SUBSCRIBER,	/* another CUPTI subscriber is there (torch.profiler, Nsight...) */
	GT_ERR_CUPTI_CALL,	/* a CUPTI call failed (message: which, cupti_result: its result) */
	GT_ERR_THREAD,		/* pthread_create failed */
	GT_ERR_TRACER_GONE,	/* gputop went away without a word: it unloaded itself */
	GT_ERR_FORKED,		/* the start function ran in a child forked from a process it runs in:
				 * CUPTI is the parent's there, not to be used */
	GT_ERR_STAYED,		/* the start function ran again where an earlier session left the
				 * library loaded, idle (cupti_kept): its CUPTI is not to be used again */
};

/* Why libcupti stays loaded, idle (gt_shared.cupti_kept); the library stays with it. */
enum gt_kept {
	GT_KEPT_NO = 0,		/* both unloaded */
	GT_KEPT_FINALIZE,	/* cuptiFinalize was missing or failed */
	GT_KEPT_THREAD,		/* a thread made since libcupti was loaded still runs */
	GT_KEPT_UNFINALIZED,	/* CUPTI was loaded but refused (or lacked a function) before it was
				 * set up, so it was never finalized: what it left in the threads
				 * that called it (thread-specific data whose destructors are its
				 * code) is unknown */
};

/* The runs of one kernel (by name): count, then their GPU time. A writer (CUPTI's thread, under
 * the library's lock) stores count last; a reader between two stores sees at most one run
 * half-counted, made whole at its next read. Times are CUPTI's (ns). */
struct gt_sum {
	uint64_t count, ns, min_ns, max_ns;
};

/* Copies of one kind, or memsets. */
struct gt_bytes {
	uint64_t count, bytes, ns;
};

struct gt_totals {
	uint64_t records;	/* records summed: grows whenever anything below does (stored last) */
	uint64_t busy_ns;	/* time some kernel ran: per device the union of kernel intervals,
				 * summed over devices */
	struct gt_sum unnamed;	/* kernels whose name the full table could not take */
	struct gt_bytes copy[GT_COPY_KINDS];	/* by CUpti_ActivityMemcpyKind */
	struct gt_bytes memset;
};

struct gt_shared {
	uint64_t magic;		/* GT_MAGIC once the library is loaded */
	uint32_t version, size;	/* GT_VERSION, sizeof(struct gt_shared) */
	/* Written by the library. */
	uint32_t state;		/* enum gt_state, 0 before start */
	int32_t status;		/* enum gt_status */
	int32_t cupti_result;	/* the failed call's CUptiResult */
	uint32_t helper_tid;	/* its thread */
	uint64_t cupti_dropped;	/* records CUPTI itself dropped (its buffers were full) */
	uint32_t names_used;	/* entries of name_at[] written (release order) */
	uint32_t names_dropped;	/* kernel names the full table could not take */
	uint32_t cupti_kept;	/* enum gt_kept: why libcupti, and so the library, stay loaded
				 * (every activity kind disabled, unsubscribed), or 0 */
	uint32_t pad0;
	char message[256];	/* what failed, for gputop to say */
	/* Written by gputop. */
	uint32_t stop;		/* 1: flush, disable, unload */
	uint32_t released;	/* 1: gputop read the final totals (GT_FINAL): unload now */
	uint64_t beat;		/* counts gputop's looks: how the library tells gputop is there
				 * where TracerPid cannot (gputop outside its PID namespace) */
	uint8_t pad[56];
	struct gt_totals totals;	/* written by the library */
	struct gt_sum kernel[GT_NAMES];	/* per name index; names_used of them */
	uint32_t name_at[GT_NAMES];	/* offsets into names[] of NUL-terminated names */
	char names[GT_NAME_BYTES];
};

#endif
