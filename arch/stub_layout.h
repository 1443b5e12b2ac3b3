/* stub_layout.h — the layout of gputop's read-write mappings in the program, written once for
 * the C that sets them up and reads them (src/probe/launchring.c, retfast.c) and the assembly
 * that writes them in the program (arch/x86_64_launch.S, x86_64_ret.S). Numbers only, so that
 * both can include it; the C side checks its structures against it with static asserts. */
#ifndef GPUTOP_STUB_LAYOUT_H
#define GPUTOP_STUB_LAYOUT_H

/* The launch ring (2.6 MiB): words of its header, then tables, then the records. */
#define LR_OFF_HEAD		0	/* producers: lock cmpxchg */
#define LR_OFF_TAIL		64	/* the tracer */
#define LR_OFF_PRESENT		128	/* 1 while gputop traces */
#define LR_OFF_CAPACITY		192	/* records in use, at most LR_CAP (smaller in tests) */
#define LR_OFF_HEARTBEAT	256	/* time stamp counter at the tracer's last drain */
#define LR_OFF_FRESH		264	/* ticks: a heartbeat younger than this is a tracer that reads
					 * (a park waits for gputop only then) */
#define LR_OFF_STALE		272	/* without ticks (fresh 0): the heartbeat a park gave up on;
					 * no park waits again until the heartbeat moves */
#define LR_OFF_PARK_WAIT	320	/* a struct timespec: how long a parked thread sleeps at a time */
#define LR_OFF_DONE_HEAD	384	/* the calls' ring (below): producers, lock cmpxchg */
#define LR_OFF_DONE_TAIL	448	/* the tracer */
#define LR_OFF_DONE_CAPACITY	512	/* records in use, at most LR_DONE_CAP (smaller in tests) */
#define LR_OFF_RANGES		576	/* per scope (1 CUDA, 2 NCCL): LR_SCOPE_RANGES [lo, hi) pairs of
					 * the modules holding its probed functions; lo 0 ends the list */
#define LR_SCOPE_RANGES		12
#define LR_OFF_PARK		1024	/* park slots (arch_park): state, tid, the saved registers' sp,
					 * the slot's parks so far (this one's number), gputop's answer */
#define LR_PARK_SLOTS		64
#define LR_PARK_SIZE		40
#define LR_OFF_LOST		4096	/* u64 per probe: calls a full ring or table dropped */
#define LR_OFF_OUTS		12288	/* u8 pairs per probe: out-parameter argument positions */
#define LR_OFF_TRAPS		14336	/* u8 per probe: where the call stub parks (while gputop
					 * drains: a fresh heartbeat), bits: */
#define LR_TRAP_STACK		1	/* at the entry, for the call's stack */
#define LR_TRAP_OOM		2	/* at a return out of memory (error 2), for the state then */
#define LR_OFF_SCOPE		15360	/* u8 per probe: its scope (1 CUDA, 2 NCCL) where a call of it
					 * made inside a recorded call of the same thread and scope is
					 * not recorded at all (gputop counts the outer one); 0 never */
#define LR_OFF_CALLS		16384	/* the call stub's records */
#define LR_OFF_FILTER		65536	/* seen handles: 1 << LR_FILTER_BITS u64, two ways at the hash */
#define LR_FILTER_BITS		16	/* 65,536 handles: a model's thousands of kernels fit */
#define LR_OFF_RECORDS		589824	/* LR_CAP launch records */
#define LR_CAP			32768	/* a power of two */
#define LR_RECORD_SIZE		64	/* probe + 1 (written last), 6 register arguments, 1 stack */
#define LR_FILTER_HASH		0x9e3779b97f4a7c15	/* Fibonacci hashing: every bit counts */
/* The calls' ring: each call the call stub recorded, copied there by its return, in the order
 * they returned; LR_DONE_CAP records of LR_CALL_SIZE (struct lr_call), committed by their state
 * (LR_CALL_OFF_STATE) written last. Sized for the fastest call loop between two drains: a full
 * ring drops the record and counts the call (LR_OFF_LOST), it never waits. */
#define LR_OFF_DONE		(LR_OFF_RECORDS + LR_CAP * LR_RECORD_SIZE)
#define LR_DONE_CAP		16384	/* a power of two */
/* The tallies (arch/tally.h: struct tally_area, LR_TALLY_SIZE bytes): the figures the stubs
 * keep in place, through tally_entry (arch/tally.c) with one of the TALLY_OP_* below. */
#define LR_OFF_TALLY		(LR_OFF_DONE + LR_DONE_CAP * LR_CALL_SIZE)
#define LR_TALLY_SIZE		15163456
#define LR_SIZE			(LR_OFF_TALLY + LR_TALLY_SIZE)
#define TALLY_OP_RETURN		0	/* the call stub's record, at the call's return */
#define TALLY_OP_LAUNCH		1	/* a launch stub's launch: its probe and handle */
#define TALLY_OP_UNRECORDED	2	/* a call the call stub found no record for: its probe */
#define TALLY_OP_QUIET		3	/* a launch stub's launch left unrecorded: probe, handle, words */
#define TALLY_OP_WORDS		4	/* a launch stub's parked launch: probe, handle, words */
/* What the launch stub reads of the tallies to leave a launch unrecorded: the head's quiet word,
 * and a probe's spec flags (struct tally_spec, 8 bytes a probe, after the 64-byte head). */
#define LR_OFF_QUIET		(LR_OFF_TALLY + 8)
#define LR_OFF_TALLY_FLAGS	(LR_OFF_TALLY + 64 + 5)
#define LR_TALLY_DIMS		0x02	/* tally.h's TALLY_DIMS */

/* A call record (the call stub): struct lr_call in launchring.h. The table of calls in flight
 * (LR_OFF_CALLS) holds one per call not returned yet; its return frees it. */
#define LR_CALL_RECORDS		128
#define LR_CALL_SIZE		128
#define LR_CALL_SHIFT		7
#define LR_CALL_OFF_PROBE	16	/* its probe + 1 */
#define LR_CALL_OFF_ARGS	24	/* six words */
#define LR_CALL_OFF_THREAD	72	/* %fs:0 */
#define LR_CALL_OFF_ENTRY_TSC	80
#define LR_CALL_OFF_RET_TSC	88
#define LR_CALL_OFF_RETVAL	96
#define LR_CALL_OFF_STATE	104
#define LR_CALL_OFF_OUT_VALUE	112	/* what the out-parameters point to, at a successful return */
#define LR_CALL_OFF_OUT2_VALUE	120

/* The launch stub's stack at its trap: the entry sp is sp + this; the program's first three
 * saved registers at [sp], [sp + 8], [sp + 16] (arch_launch_trap_entry reads them). */
#define LR_TRAP_SP_OFFSET	32

/* The return table (retfast.c): RET_RECORDS records of struct ret_record. */
#define RET_RECORDS		1024	/* a power of two */
#define RET_RECORD_SHIFT	7
#define RET_RECORD_SIZE		(1 << RET_RECORD_SHIFT)
#define RET_OFF_KEY		0
#define RET_OFF_RET		8
#define RET_OFF_OUT		16
#define RET_OFF_OUT2		24
#define RET_OFF_RETVAL		32
#define RET_OFF_TSC		40
#define RET_OFF_OUT_VALUE	48
#define RET_OFF_OUT2_VALUE	56
#define RET_OFF_STATE		64
#define RET_OFF_ENTRY_TSC	72
#define RET_OFF_NEXT		80
#define RET_OFF_SCRATCH		88	/* two words */

#endif
