/* tally.h — the figures the stubs keep in the program's memory, as eBPF maps keep a probe's:
 * updated in place, with atomic operations, by tally.c (which runs in the program, called by
 * the stubs of <arch>_launch.S), and read by gputop whenever it likes (src/probe/tallies.c),
 * without a stop. What a view shows as a total comes from here, so that it stays exact however
 * late gputop is: the rings carry only what needs order or detail, and a full ring loses
 * detail, never a count.
 *
 * The area lies in gputop's mapping at LR_OFF_TALLY (stub_layout.h). Per probe: calls, errors,
 * time, and sums by class (the bytes of a copy by its kind, an NCCL operation's elements by
 * datatype); launches per kernel handle (or executable graph); the live allocations keyed by
 * address; the kernels' names as the runtime registers them; PyTorch's live Blocks. Every table is fixed: a key that
 * finds no room in its TALLY_WINDOW slots is counted as overflow, never waited for. */
#ifndef GPUTOP_TALLY_H
#define GPUTOP_TALLY_H

#include <stdint.h>

#include "stub_layout.h"

#define TALLY_PROBES		1024	/* == LR_PROBES: one entry per probe's ring index */
#define TALLY_CLASSES		16	/* a class value beyond the last counts in the last */
#define TALLY_WINDOW		64	/* slots a key may lie past its hash */
#define TALLY_HANDLE_BITS	16	/* 65,536 kernel handles and executable graphs */
#define TALLY_LIVE_BITS		17	/* 131,072 live allocations */
#define TALLY_NAME_BITS		16	/* 65,536 registered kernels (a PyTorch rank: ~21,000) */
#define TALLY_BLOCK_BITS	16	/* 65,536 live PyTorch Blocks */
#define TALLY_CHUNK_BITS	6	/* a generation per 64 slots of the Blocks' table */

/* What a probe's call does to the tables (struct tally_spec.effect). */
enum tally_effect {
	TALLY_COUNT,		/* counted only */
	TALLY_HANDLE,		/* a launch: its handle's count (key) */
	TALLY_INSERT,		/* an allocation: key (its address) inserted, value its size */
	TALLY_REMOVE,		/* a free: key removed */
	TALLY_NAME,		/* a kernel's registration: key (its host function) named value */
	TALLY_BLOCK_IN,		/* PyTorch's allocator handed out Block key (value: the size asked) */
	TALLY_BLOCK_OUT,	/* ... took Block key back */
};

/* Where a spec's operand is: 1-6 a register argument, TALLY_OUT and TALLY_OUT2 what the
 * call's out-parameters point to at its successful return; 0 none. */
#define TALLY_OUT		7
#define TALLY_OUT2		8
#define TALLY_RETVAL		9	/* the value the call returned (a pointer) */

#define TALLY_VOID		0x01	/* returns nothing: no call is an error */
#define TALLY_DIMS		0x02	/* a kernel launch (TALLY_HANDLE): quiet, its record says
					 * nothing the tallies do not (struct tally_quiet) */

/* Written by gputop before the probe is armed; read by the stubs. */
struct tally_spec {
	uint8_t effect;		/* enum tally_effect, applied to successful calls only */
	uint8_t key;		/* the handle, address or host function */
	uint8_t value;		/* summed by class; an insert's size; a name's pointer */
	uint8_t times;		/* value times this operand (a pitch times a height); 0: 1 */
	uint8_t class_arg;	/* the class; 0: class 0 */
	uint8_t flags;		/* TALLY_VOID */
	uint8_t owner;		/* TALLY_BLOCK_IN: the operand its slot keeps in place of the
				 * thread (the allocator, `this`); 0: the thread */
	uint8_t pad;
};

struct tally_probe {
	uint64_t calls;		/* every call the stub counted */
	uint64_t untimed;	/* of them, with no record to time them (as many calls in flight) */
	uint64_t errors;	/* returned non-zero */
	uint64_t ticks;		/* time stamp counter ticks inside them, entry to return */
	uint64_t last_error;
	uint64_t unmatched;	/* TALLY_REMOVE: frees of an address the table did not hold;
				 * TALLY_INSERT, TALLY_HANDLE, TALLY_NAME: keys a full table lost */
	uint64_t effects;	/* effects done: keys inserted, removed, counted, named */
	uint64_t live_bytes;	/* TALLY_INSERT: its allocations in the table now, bytes and count */
	uint64_t live_count;
	uint64_t class_calls[TALLY_CLASSES];	/* successful calls, by class */
	uint64_t class_sum[TALLY_CLASSES];	/* their values summed */
	uint64_t class_ticks[TALLY_CLASSES];
};

/* Keys 0, 1 and 2 are no address: an empty slot, one emptied (a tombstone), one being
 * written (its fields are not yet what the key will say). */
#define TALLY_EMPTY		0
#define TALLY_GONE		1
#define TALLY_BUSY		2

/* A handle's slot of the hash table: where its figures are in the dense arrays below, so that
 * gputop reads every handle's count at once (launches[0, handles_used)). */
struct tally_handle {
	uint64_t key;		/* the function handle (or executable graph) launched */
	uint64_t index;		/* in launched[] and launches[] (written before the key) */
};

struct tally_launched {
	uint64_t key;		/* the handle, written last (0: not yet) */
	uint64_t probe;		/* the probe of its first launch */
};

struct tally_live {
	uint64_t key;		/* the allocation's address */
	uint64_t size;		/* bytes, and the allocating probe + 1 in the top 16 bits */
	uint64_t tsc;		/* when it returned */
	uint64_t thread;	/* the thread pointer of the thread that allocated it */
};
#define TALLY_SIZE_BITS		48

struct tally_name {
	uint64_t key;		/* a host function */
	uint64_t name;		/* its kernel's mangled name, in the program's memory */
};

/* A handle's launches that left no record (the stubs' quiet launches, below): how many, and
 * the last launch's argument words as the launch ring's record would hold them (words 2-7: the
 * dimensions) with its probe (which says how to read them; a parked launch writes them too,
 * so that they are the handle's last launch's), tally_dims_check's sum of both last, so that a
 * reader tells a torn write. */
struct tally_quiet {
	uint64_t launches;
	uint64_t probe;
	uint64_t w[6];
	uint64_t check;
};

struct tally_head {
	uint64_t handles_used;	/* handles taken: entries of launched[] and launches[] in use */
	uint64_t quiet;		/* gputop: 1 while no one wants a kernel launch's record (its
				 * order, --timeline, a capture): a launch of a named handle, or a
				 * TALLY_DIMS call's success, is then counted here with its
				 * dimensions (quiet[]), and writes no record */
	uint64_t quiet_blocks;	/* gputop: 1 while no one wants a PyTorch Block call's record (its
				 * stack, --timeline, --trace): a TALLY_BLOCK_* call's success is
				 * then kept in block[] only, and writes no record */
	uint64_t pad[5];
};

struct tally_area {	/* LR_TALLY_SIZE bytes */
	struct tally_head head;
	struct tally_spec spec[TALLY_PROBES];
	struct tally_probe probe[TALLY_PROBES];
	uint64_t launches[1u << TALLY_HANDLE_BITS];	/* by index, in the order handles came */
	struct tally_launched launched[1u << TALLY_HANDLE_BITS];
	struct tally_quiet quiet[1u << TALLY_HANDLE_BITS];
	struct tally_handle handle[1u << TALLY_HANDLE_BITS];
	struct tally_live live[1u << TALLY_LIVE_BITS];
	struct tally_name name[1u << TALLY_NAME_BITS];
	/* PyTorch's live Blocks, as live[] (key: the Block; size: the size asked, and the probe),
	 * and a generation per 1 << TALLY_CHUNK_BITS slots, one more after each change of one of
	 * them: gputop reads only the slots whose generation moved since it last looked. */
	struct tally_live block[1u << TALLY_BLOCK_BITS];
	uint64_t block_gen[1u << (TALLY_BLOCK_BITS - TALLY_CHUNK_BITS)];
};

/* What tally_quiet.check holds for probe's words w: never 0 (no write yet). */
static inline uint64_t tally_dims_check(uint64_t probe, const uint64_t *w)
{
	uint64_t h = 0x2545f4914f6cdd1dull ^ probe;
	for (int i = 0; i < 6; i++)
		h = (h ^ w[i]) * 0x9e3779b97f4a7c15ull;
	return h | 1;
}

/* The first slot of key in a table of 1 << bits: Fibonacci hashing, every bit of key counts. */
static inline uint32_t tally_slot(uint64_t key, unsigned bits)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

/* What the stubs call (one entry, the first function of tally.c's code), op one of
 * stub_layout.h's: TALLY_OP_RETURN (a: the call stub's record, at the call's return),
 * TALLY_OP_LAUNCH (a: the probe, b: the handle launched), TALLY_OP_QUIET (the same, for a
 * launch that writes no record; w: the words its record would have held, w[1]-w[7]),
 * TALLY_OP_WORDS (a launch gputop was told of at its park: counted, its words kept),
 * TALLY_OP_UNRECORDED (a: the probe of a call the call stub found no record for: counted, not
 * timed). Returns, for a call's return, whether its record goes to the calls' ring (0: its
 * figures are all here). */
uint64_t tally_entry(struct tally_area *t, uint64_t op, uint64_t a, uint64_t b, const uint64_t *w);

#endif
