/* tallies.h — what the stubs keep in the program's memory (arch/tally.h), read without a stop,
 * whenever gputop likes: per probe, what its calls added since the last read; per kernel handle
 * (or executable graph), its launches; the live allocations; the names the runtime registered.
 * The totals of every view come from here where a stub counts the calls (engine/hit_tallies.c
 * hands them to the consumers); the rings carry only what needs order or detail. */
#ifndef GPUTOP_TALLIES_H
#define GPUTOP_TALLIES_H

#include <stdbool.h>
#include <stdint.h>

#include "tally.h"

struct tracee;
struct tallies_state;

/* A process's part (p->tallies, base/tracee.h): what was read so far; made and freed with it. */
struct tallies_state *tallies_state_new(void);
void tallies_state_free(struct tallies_state *st);

struct tallies_reader {
	/* Probe of row api: its counters' differences since the last read (calls, untimed,
	 * errors, ticks, unmatched and the class sums), its gauges as they are now (last_error,
	 * live_bytes, live_count). */
	void (*probe)(struct tracee *p, int api, const struct tally_probe *d, void *arg);
	/* handle launched n more times (api: the row of its first launch's probe), first seen at
	 * first_ns (monotonic); q: of them, q->launches left no record, and the last launch's
	 * words as read (struct tally_quiet; check 0 where they were handed on before); NULL if
	 * neither moved. False:
	 * not taken now, offered again (summed) at a later read. */
	bool (*launches)(struct tracee *p, int api, uint64_t handle, uint64_t n, uint64_t first_ns,
			 const struct tally_quiet *q, void *arg);
};
/* Reads the tallies of process p and tells r of what moved since the last read: the probes'
 * and every handle's count (its dense array: 8 bytes a handle). A new mapping (an exec, a
 * ring made again) starts from zero. */
void tallies_read(struct tracee *p, const struct tallies_reader *r, void *arg);
/* handle's count alone, and the handles that came since the last read (a park: cheap however
 * many handles there are). */
void tallies_read_handle(struct tracee *p, uint64_t handle, const struct tallies_reader *r, void *arg);

/* The name the runtime registered for host function key: its string's address in the
 * program, 0 if none. */
uint64_t tallies_registered_name(const struct tracee *p, uint64_t key);

/* An allocation the live table holds. */
struct tallies_alloc {
	uint64_t addr, bytes;
	uint64_t tsc;		/* when it returned (the time stamp counter) */
	uint64_t thread;	/* the thread pointer of its thread */
	int api;		/* the row of its probe; -1 if not known */
};
/* Calls each for every allocation live in the table (a whole read: ~4 MiB); returns how many,
 * or -errno. */
int tallies_live(struct tracee *p, void (*each)(const struct tallies_alloc *a, void *arg), void *arg);
/* The allocations the live table holds, by its counts at the last tallies_read. */
uint64_t tallies_live_count(const struct tracee *p);
/* addr was freed through a stop (no stub saw the free): it leaves the live table, if there. */
void tallies_drop_alloc(struct tracee *p, uint64_t addr);

/* PyTorch's live Blocks as the stubs keep them (tally.h's block[]): what changed since the last
 * call, read where the table's generations moved (a few KiB when little did), told as lives
 * gone (gone: the Block and when its life began, as came told it) then lives new (came: addr
 * the Block, bytes the size asked, tsc and api as for an allocation, thread the allocator:
 * the DeviceCachingAllocator the Block came from, tally_spec.owner). Returns the
 * number of changes told, or -errno. */
struct tallies_blocks_reader {
	void (*gone)(struct tracee *p, uint64_t block, uint64_t tsc, void *arg);
	void (*came)(struct tracee *p, const struct tallies_alloc *a, void *arg);
};
int tallies_blocks(struct tracee *p, const struct tallies_blocks_reader *r, void *arg);

#endif
