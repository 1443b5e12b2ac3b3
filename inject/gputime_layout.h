/* gputime_layout.h — the memory that libgputop-gpu.so (inject/gputime.c, loaded into the
 * program by --gpu-time) shares with gputop (src/probe/gputime_ring.c): a header of words each
 * written by one side only, a ring of GPU activity records (one producer: the library; one
 * consumer: gputop, through process_vm_readv/writev) and the kernel names the records point
 * to. Written once here for both; plain C types, x86-64 layout. */
#ifndef GPUTOP_GPUTIME_LAYOUT_H
#define GPUTOP_GPUTIME_LAYOUT_H

#include <stdint.h>

#define GT_MAGIC 0x656d697475706721ull	/* "!gputime" */
#define GT_VERSION 1
#define GT_RING 8192			/* records; a power of two */
#define GT_NAMES 8192			/* distinct kernel names */
#define GT_NAME_BYTES (2u << 20)	/* their text */
#define GT_NO_NAME 0xffffffffu

/* The library's state (gt_shared.state), in order. */
enum gt_state {
	GT_STARTING = 1,	/* the start function returned; its thread is setting CUPTI up */
	GT_RUNNING,		/* CUPTI records kernels, copies and memsets into the ring */
	GT_FINAL,		/* set up failed (status says why), or stopped and flushed: the ring
				 * holds every record there will be; it waits for gputop's release */
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

enum gt_kind { GT_KERNEL = 1, GT_MEMCPY, GT_MEMSET };

/* One record: 48 bytes. Times are CUPTI's (ns, its own clock). */
struct gt_record {
	uint64_t start, end;
	uint64_t bytes;		/* copies and memsets */
	uint32_t name;		/* kernels: index into name_at[], GT_NO_NAME if the table is full */
	uint32_t device;
	uint32_t stream;
	uint32_t correlation;
	uint32_t graph;		/* CUPTI's graph id, 0 when not run by a graph */
	uint8_t kind;		/* enum gt_kind */
	uint8_t copy_kind;	/* copies: CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP) */
	uint8_t pad[2];
};

struct gt_shared {
	uint64_t magic;		/* GT_MAGIC once the library is loaded */
	uint32_t version, size;	/* GT_VERSION, sizeof(struct gt_shared) */
	/* Written by the library. */
	uint32_t state;		/* enum gt_state, 0 before start */
	int32_t status;		/* enum gt_status */
	int32_t cupti_result;	/* the failed call's CUptiResult */
	uint32_t helper_tid;	/* its thread */
	uint64_t head;		/* records written (release order: the record, then head) */
	uint64_t dropped;	/* records the full ring could not take */
	uint64_t cupti_dropped;	/* records CUPTI itself dropped (its buffers were full) */
	uint32_t names_used;	/* entries of name_at[] written (release order) */
	uint32_t names_dropped;	/* kernel names the full table could not take */
	uint32_t cupti_kept;	/* enum gt_kept: why libcupti, and so the library, stay loaded
				 * (every activity kind disabled, unsubscribed), or 0 */
	uint32_t pad0;
	char message[256];	/* what failed, for gputop to say */
	/* Written by gputop. */
	uint64_t tail;		/* records consumed */
	uint32_t stop;		/* 1: flush, disable, unload */
	uint32_t released;	/* 1: gputop read the final records (GT_FINAL): unload now */
	uint64_t beat;		/* counts gputop's looks: how the library tells gputop is there
				 * where TracerPid cannot (gputop outside its PID namespace) */
	uint8_t pad[56];
	struct gt_record ring[GT_RING];
	uint32_t name_at[GT_NAMES];	/* offsets into names[] of NUL-terminated names */
	char names[GT_NAME_BYTES];
};

#endif
