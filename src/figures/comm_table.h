/* comm_table.h — what a process did on which GPU, and how it communicated: per device its
 * allocations, launches, copies and synchronize calls; NCCL's collectives and point-to-point
 * calls by operation; the GPU x GPU matrix of bytes moved by peer copies and ncclSend; the NCCL
 * communicators it made (rank, size, device). Fixed size (no allocation), so that a snapshot
 * copies it whole. Not thread-safe: stats.c calls it under its mutex. */
#ifndef GPUTOP_COMM_TABLE_H
#define GPUTOP_COMM_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cuda_api.h"

/* Devices 0..STATS_MAX_DEVICES-1 have their own slot; the last slot, COMM_DEV_UNKNOWN, holds
 * what ran where gputop could not tell (a higher device number counts there too). */
#define STATS_MAX_DEVICES	16
#define COMM_DEV_UNKNOWN	STATS_MAX_DEVICES
#define COMM_DEV_SLOTS		(STATS_MAX_DEVICES + 1)
#define COMM_MAX_COMMS		16	/* communicators kept per process; later ones are not */
#define COMM_MAX_SENDS		32	/* (communicator, peer) pairs of ncclSend kept */

enum dev_event { DEV_ALLOC, DEV_LAUNCH, DEV_COPY, DEV_SYNC };

struct stats_device_use {
	uint64_t allocs, alloc_bytes;	/* successful allocations of device or managed memory */
	uint64_t launches;		/* direct kernel launches */
	uint64_t copies, copy_bytes;	/* copies issued there (a peer copy: on its source) */
	uint64_t syncs, sync_ns;
};

/* One NCCL operation: successful calls, their bytes (count x datatype size, decode.h) and the
 * time inside the calls (NCCL enqueues work on a stream: this is the host's time, not the
 * GPU's). */
struct stats_coll {
	uint64_t calls, bytes, ns;
};

struct stats_p2p {
	uint64_t calls, bytes;
};

/* An NCCL communicator of the process. rank, nranks: -1 while not known. */
struct stats_comm_info {
	uint64_t comm;
	pid_t pid;		/* the process (set in snapshots) */
	int rank, nranks, device;
};

/* An ncclSend's peer is a rank; which GPU that is, is resolved when a snapshot is taken (the
 * peer's communicator may be another process's, learnt later). */
struct comm_send {
	uint64_t comm;
	int peer, src_device;
	uint64_t calls, bytes;
};

struct stats_comm {
	struct stats_device_use dev[COMM_DEV_SLOTS];
	struct stats_coll coll[COLL_COUNT];
	struct stats_p2p p2p[COMM_DEV_SLOTS][COMM_DEV_SLOTS];	/* [source][destination] */
	int n_comms;
	struct stats_comm_info comms[COMM_MAX_COMMS];
	int n_sends;
	struct comm_send sends[COMM_MAX_SENDS];	/* not yet in p2p: see comm_table_resolve */
};

/* "AllReduce", ..., "Send", "Recv": characters, not pointers, so the table needs no relocation
 * and lies in .rodata. */
enum { COLL_NAME_MAX = 16 };
extern const char coll_name[COLL_COUNT][COLL_NAME_MAX];

/* The slot of a device number: COMM_DEV_UNKNOWN for -1 or one past the table. */
int comm_dev_slot(int device);

void comm_table_on_device(struct stats_comm *c, int device, enum dev_event ev, uint64_t bytes, uint64_t ns);
void comm_table_add_launches(struct stats_comm *c, int device, uint64_t n);
void comm_table_on_p2p(struct stats_comm *c, int src, int dst, uint64_t bytes);
/* A collective or point-to-point call of op on comm (0: not known) by a thread whose current
 * device is device; peer: Send/Recv's. An ncclSend goes to the matrix (bytes moved are counted
 * once, by the sender; an ncclRecv only under its op). */
void comm_table_on_coll(struct stats_comm *c, enum coll_op op, uint64_t bytes, uint64_t ns, uint64_t comm,
			int peer, int device);
/* The same, where the stubs counted the op's calls, bytes and time in place (its totals come
 * from stats_add_coll): the rest only (an ncclSend to the matrix). */
void comm_table_on_coll_detail(struct stats_comm *c, enum coll_op op, uint64_t bytes, uint64_t comm, int peer,
			       int device);
/* Learns (or updates) a communicator; -1 leaves a figure as it was. Returns its entry or NULL. */
const struct stats_comm_info *comm_table_learn(struct stats_comm *c, uint64_t comm, int rank, int nranks, int device);
const struct stats_comm_info *comm_table_find(const struct stats_comm *c, uint64_t comm);
/* The device of rank peer of a job of nranks: a communicator of the same process first (one
 * process driving several GPUs, ncclCommInitAll), then of the other processes given (all[],
 * which may include c); -1 when none or when they disagree. */
int comm_table_peer_device(const struct stats_comm *c, const struct stats_comm *const *all, int n_all,
			   int nranks, int peer);
/* Adds src's figures (process pid's) into dst, its sends resolved into the matrix against all[]
 * (the communicators of every process); dst's own sends stay as they are. */
void comm_table_add(struct stats_comm *dst, const struct stats_comm *src, pid_t pid,
		    const struct stats_comm *const *all, int n_all);
/* Counters back to zero ('z'); communicators stay. */
void comm_table_reset(struct stats_comm *c);

#endif
