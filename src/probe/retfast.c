/* retfast.c — the record table and the return stub (see retfast.h): mapping them into the
 * program, which record a call gets; the time stamp counter's conversion to the tracer's
 * clock is base/tsc_map.c's. What a record means for the statistics is hit.c's business. */
#define _GNU_SOURCE
#include "retfast.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "arch.h"
#include "clock.h"
#include "config.h"
#include "log.h"
#include "memory.h"
#include "tracee.h"
#include "tsc_map.h"
#include "xol.h"

#define TABLE_SIZE (RET_RECORDS * RET_RECORD_SIZE)
_Static_assert(offsetof(struct ret_record, retval) == RET_OFF_RETVAL &&
	       offsetof(struct ret_record, state) == RET_OFF_STATE &&
	       offsetof(struct ret_record, next) == RET_OFF_NEXT && sizeof(struct ret_record) <= RET_OFF_SCRATCH,
	       "struct ret_record and arch/x86_64_ret.S disagree");
#define RECORD_BYTES sizeof(struct ret_record)

#define PENDING_MAX 64

/* The process's part (p->retfast). */
struct retfast_state {
	uint64_t table;		/* the table's address in the program, 0 if not mapped */
	uint64_t stub, stub_size;
	bool used[RET_RECORDS];	/* gputop's own view of which records are taken */
	/* Records read and let go whose keys are still to be cleared in the program: cleared by
	 * the next retfast_begin's own write (one system call for both), or by retfast_flush. */
	int32_t pending[PENDING_MAX];
	int n_pending;
	bool ever_ready;
};

struct retfast_state *retfast_state_new(void)
{
	return calloc(1, sizeof(struct retfast_state));
}

void retfast_state_free(struct retfast_state *st)
{
	free(st);
}

bool retfast_ready(const struct tracee *p)
{
	struct retfast_state *st = p->retfast;
	return st->table != 0;
}

bool retfast_used(const struct tracee *p)
{
	struct retfast_state *st = p->retfast;
	return st->ever_ready;
}

uint64_t retfast_stub(const struct tracee *p)
{
	struct retfast_state *st = p->retfast;
	return st->stub;
}

bool retfast_in_stub(const struct tracee *p, uint64_t pc)
{
	struct retfast_state *st = p->retfast;
	return st->table && pc - st->stub < st->stub_size;
}

uint64_t retfast_entry_stamp(const struct tracee *p)
{
	struct retfast_state *st = p->retfast;
	return st->stub + (uint64_t)(arch_entry_stamp - arch_ret_stub);
}

uint64_t retfast_fallback_trap(const struct tracee *p)
{
	struct retfast_state *st = p->retfast;
	return st->stub + (uint64_t)(arch_ret_stub_trap - arch_ret_stub);
}

void retfast_forget(struct tracee *p)
{
	struct retfast_state *st = p->retfast;
	st->table = st->stub = st->stub_size = 0;
	st->n_pending = 0;
	memset(st->used, 0, sizeof st->used);
}

uint64_t retfast_ns_to_ticks(const struct tracee *p, uint64_t ns)
{
	return p->retfast->table ? tsc_map_ns_to_ticks(ns) : 0;
}

uint64_t retfast_ticks_to_ns(uint64_t ticks)
{
	return tsc_map_ticks_to_ns(ticks);
}

uint64_t retfast_tsc_to_mono(uint64_t tsc)
{
	return tsc_map_to_mono(tsc);
}

int retfast_init(struct tracee *p, struct thread *t)
{
	struct retfast_state *st = p->retfast;
	size_t room;
	if (!config.retfast || !arch_timestamp_reliable())
		return 0;
	size_t size = (size_t)(arch_ret_stub_end - arch_ret_stub);
	uint64_t at = xol_ret_stub(p, &room);
	if (size > room)
		return -ENOSPC;
	long addr = xol_mmap_rw(p, t, TABLE_SIZE);
	if (addr < 0 && addr > -4096)
		return (int)addr;

	uint8_t code[256];
	memcpy(code, arch_ret_stub, size);
	memcpy(code + (arch_ret_stub_table - arch_ret_stub), &addr, sizeof addr);
	int err = mem_write_code(p, at, code, size);
	if (err < 0)
		return err;
	/* The counter's map to the clock (the first process's attach measures its rate). */
	if (tsc_map_start() < 0)
		return -EINVAL;
	st->table = (uint64_t)addr;
	st->ever_ready = true;
	st->stub = at;
	st->stub_size = size;
	memset(st->used, 0, sizeof st->used);
	log_debug("returns recorded by the stub at %#llx, table at %#llx", (unsigned long long)st->stub,
		  (unsigned long long)st->table);
	return 0;
}

int retfast_unmap(struct tracee *p, struct thread *t)
{
	struct retfast_state *st = p->retfast;
	if (!st->table)
		return 0;
	int err = xol_munmap(p, t, st->table, TABLE_SIZE);
	retfast_forget(p);
	return err;
}

static uint64_t record_addr(const struct tracee *p, int i)
{
	struct retfast_state *st = p->retfast;
	return st->table + (uint64_t)i * RET_RECORD_SIZE;
}

uint64_t retfast_record_addr(const struct tracee *p, int rec)
{
	return record_addr(p, rec);
}

static const uint64_t zero_key;

/* The clears of the pending records as iovecs (into local/remote from index 0). */
static int pending_iov(const struct tracee *p, struct iovec *local, struct iovec *remote)
{
	struct retfast_state *st = p->retfast;
	for (int k = 0; k < st->n_pending; k++) {
		local[k] = (struct iovec){ (void *)&zero_key, sizeof zero_key };
		remote[k] = (struct iovec){ (void *)(uintptr_t)record_addr(p, st->pending[k]), sizeof zero_key };
	}
	return st->n_pending;
}

/* The first `cleared` pending records are clear in the program: they may be given out again. */
static void pending_done(struct tracee *p, int cleared)
{
	struct retfast_state *st = p->retfast;
	for (int k = 0; k < cleared; k++)
		st->used[st->pending[k]] = false;
	memmove(st->pending, st->pending + cleared, (size_t)(st->n_pending - cleared) * sizeof st->pending[0]);
	st->n_pending -= cleared;
}

int retfast_begin(struct tracee *p, pid_t tid, uint64_t key, uint64_t ret, uint64_t out, uint64_t out2,
		  uint64_t slot, uint64_t next)
{
	struct retfast_state *st = p->retfast;
	if (!st->table)
		return -1;
	/* The stub looks from the same place on: the first free record from there. */
	int i = (int)((key >> 4) & (RET_RECORDS - 1));
	for (int n = 0; st->used[i]; i = (i + 1) & (RET_RECORDS - 1))
		if (++n == RET_RECORDS)
			return -1;
	struct ret_record r = { .key = key, .ret = ret, .out = out, .out2 = out2, .state = RET_IN_FLIGHT,
				.next = next };
	/* Stale keys cleared first, in the same write: a later call of a thread that returns
	 * with the same stack pointer must find its own record, never an old one. */
	struct iovec local[PENDING_MAX + 2], remote[PENDING_MAX + 2];
	int m = pending_iov(p, local, remote);
	local[m] = (struct iovec){ &r, RECORD_BYTES };
	remote[m] = (struct iovec){ (void *)(uintptr_t)record_addr(p, i), RECORD_BYTES };
	local[m + 1] = (struct iovec){ &st->stub, sizeof st->stub };
	remote[m + 1] = (struct iovec){ (void *)(uintptr_t)slot, sizeof st->stub };
	ssize_t w = process_vm_writev(tid, local, (unsigned long)m + 2, remote, (unsigned long)m + 2, 0);
	pending_done(p, w < 0 ? 0 : (int)(w / (ssize_t)sizeof zero_key) < m ? (int)(w / (ssize_t)sizeof zero_key) : m);
	if (w != (ssize_t)(8 * (size_t)m + RECORD_BYTES + sizeof st->stub))
		return -1;	/* (a partial write leaves the slot alone: the record came first) */
	st->used[i] = true;
	return i;
}

void retfast_flush(struct tracee *p, pid_t pid)
{
	struct iovec local[PENDING_MAX], remote[PENDING_MAX];
	int m = pending_iov(p, local, remote);
	if (!m)
		return;
	ssize_t w = process_vm_writev(pid, local, (unsigned long)m, remote, (unsigned long)m, 0);
	/* If the program is gone, nothing is left to send anywhere. */
	pending_done(p, w < 0 ? (errno == ESRCH ? m : 0) : (int)(w / (ssize_t)sizeof zero_key));
}

int retfast_read(const struct tracee *p, pid_t pid, const int32_t *idx, int n, struct ret_record *out)
{
	struct mem_range r[64];
	if (n > 64)
		return -EINVAL;
	for (int k = 0; k < n; k++)
		r[k] = (struct mem_range){ record_addr(p, idx[k]), &out[k], RECORD_BYTES };
	return mem_readv(pid, r, n);
}

void retfast_free(struct tracee *p, pid_t pid, const int32_t *idx, int n)
{
	struct retfast_state *st = p->retfast;
	/* Only once its key is cleared may a record be given out again: a stale key would send
	 * some later return to the wrong address. */
	for (int k = 0; k < n; k++) {
		if (idx[k] < 0 || idx[k] >= RET_RECORDS || !st->used[idx[k]])
			continue;
		if (st->n_pending == PENDING_MAX)
			retfast_flush(p, pid);
		if (st->n_pending < PENDING_MAX)
			st->pending[st->n_pending++] = idx[k];
	}
}
