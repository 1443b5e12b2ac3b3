/* launchring.c — the launch ring and its stub (see launchring.h): mapping them into the
 * program, the probes' ring indexes, and draining. What a record means for the statistics is
 * hit.c's business. */
#define _GNU_SOURCE
#include "launchring.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "arch.h"
#include "clock.h"
#include "config.h"
#include "log.h"
#include "memory.h"
#include "threads.h"
#include "xol.h"

/* The layout arch/x86_64_launch.S uses. */
#define OFF_HEAD LR_OFF_HEAD
#define OFF_TAIL LR_OFF_TAIL
#define OFF_PRESENT LR_OFF_PRESENT
#define OFF_CAPACITY LR_OFF_CAPACITY
#define OFF_LOST LR_OFF_LOST
#define OFF_CALLS LR_OFF_CALLS
#define OFF_FILTER LR_OFF_FILTER
#define OFF_RECORDS LR_OFF_RECORDS
#define RECORD_SIZE LR_RECORD_SIZE
#define RING_SIZE LR_SIZE
_Static_assert(sizeof(struct lr_call) == LR_CALL_SIZE && offsetof(struct lr_call, state) == LR_CALL_OFF_STATE,
	       "struct lr_call and arch/x86_64_launch.S disagree");
#define BATCH 512	/* records read at once */

static uint64_t ring;		/* its address in the program, 0 if not mapped */
static bool launches_used;	/* a launch probe went through the ring this session */
static uint64_t tail;		/* the next record to read (the program sees it at OFF_TAIL) */
static int16_t api_of[LR_PROBES];	/* -1: free */
static uint64_t lost_seen[LR_PROBES];
static int n_probes;		/* indexes handed out so far (the high-water mark) */
static uint64_t stuck_since;	/* when the record at tail was first seen not committed */
static bool calls_used;		/* a probe calls the call stub */

bool launchring_ready(void)
{
	return ring != 0;
}

bool launchring_used(void)
{
	return launches_used;
}

uint64_t launchring_present_flag(void)
{
	return ring ? ring + OFF_PRESENT : 0;
}

static int ring_write(uint64_t addr, const void *buf, size_t len);

void launchring_say_absent(void)
{
	static const uint64_t zero;
	if (ring)
		ring_write(ring + OFF_PRESENT, &zero, sizeof zero);
}

void launchring_forget(void)
{
	calls_used = false;
	ring = tail = 0;
	n_probes = 0;
	stuck_since = 0;
}

int launchring_init(struct thread *t)
{
	if (!config.launch_ring)
		return 0;
	long addr = xol_mmap_rw(t, RING_SIZE);
	if (addr < 0 && addr > -4096)
		return (int)addr;
	/* A smaller capacity, for tests that fill the ring. */
	uint64_t present = 1, capacity = config.launch_ring_cap && config.launch_ring_cap <= LR_CAP
						     ? config.launch_ring_cap : LR_CAP;
	int err = mem_write(t->tid, (uint64_t)addr + OFF_PRESENT, &present, 8);
	if (err == 0)
		err = mem_write(t->tid, (uint64_t)addr + OFF_CAPACITY, &capacity, 8);

	uint8_t code[1536];
	size_t size = (size_t)(arch_launch_stub_end - arch_launch_stub);
	if (err == 0 && size > sizeof code)
		err = -ENOSPC;
	if (err == 0) {
		memcpy(code, arch_launch_stub, size);
		memcpy(code + (arch_launch_stub_ring - arch_launch_stub), &addr, sizeof addr);
		err = xol_set_shared_code(code, size);
	}
	if (err < 0) {
		xol_munmap(t, (uint64_t)addr, RING_SIZE);
		return err;
	}
	ring = (uint64_t)addr;
	tail = 0;
	n_probes = 0;
	log_debug("launches recorded in the ring at %#llx", (unsigned long long)ring);
	return 0;
}

int launchring_unmap(struct thread *t)
{
	if (!ring)
		return 0;
	int err = xol_munmap(t, ring, RING_SIZE);
	launchring_forget();
	return err;
}

int launchring_add_probe(int api)
{
	if (!ring)
		return -1;
	for (int i = 0; i < n_probes; i++)
		if (api_of[i] < 0) {
			api_of[i] = (int16_t)api;
			return i;
		}
	if (n_probes == LR_PROBES)
		return -1;
	api_of[n_probes] = (int16_t)api;
	lost_seen[n_probes] = 0;	/* a fresh mapping: its counter is 0 */
	return n_probes++;
}

void launchring_drop_probe(int probe)
{
	/* Its lost counter stays where it is: the index, reused, carries on from there. */
	if (probe >= 0 && probe < n_probes)
		api_of[probe] = -1;
}

int launchring_probe_api(int probe)
{
	return probe >= 0 && probe < n_probes ? api_of[probe] : -1;
}

uint64_t launchring_stub(uint64_t slot, enum lr_stub which)
{
	static const uint8_t *const stubs[] = { arch_launch_stub, arch_launch_stub_ex, arch_call_stub };
	uint64_t base = xol_shared_code(slot);
	if (which == LR_STUB_CALL)
		calls_used = true;
	else
		launches_used = true;
	return base ? base + (uint64_t)(stubs[which] - arch_launch_stub) : 0;
}

bool launchring_in_stub(uint64_t pc)
{
	uint64_t off;
	return ring && xol_in_shared_code(pc, &off);
}

bool launchring_is_trap(uint64_t addr, bool *ex)
{
	uint64_t off;
	if (!ring || !xol_in_shared_code(addr, &off))
		return false;
	const uint8_t *at = arch_launch_stub + off;
	*ex = at == arch_launch_stub_trap_ex;
	return at == arch_launch_stub_trap || at == arch_launch_stub_trap_ex;
}

/* As the stub computes it (arch/x86_64_launch.S). Not hashmap.h: the filter lives in the
 * program's memory, the stub's assembly reads it, and it is a lossy cache that never grows. */
static uint32_t filter_slot(uint64_t handle)
{
	return (uint32_t)((handle * 0x9e3779b97f4a7c15ull) >> 52);
}

void launchring_seen(pid_t tid, uint64_t handle)
{
	uint32_t i = filter_slot(handle);
	uint64_t pair[2];
	if (!ring || mem_read(tid, ring + OFF_FILTER + 8 * (i & ~1u), pair, sizeof pair) < 0)
		return;
	/* The slot of the pair that is free, else the handle's own (the other handle there then
	 * traps once more, at its next launch). */
	if (pair[i & 1] && !pair[(i & 1) ^ 1])
		i ^= 1;
	mem_write(tid, ring + OFF_FILTER + 8 * i, &handle, 8);
}

/* Memory access through a thread that has some: the group leader may be a zombie. */
static int ring_io(uint64_t addr, void *buf, size_t len, bool write)
{
	uint32_t it = 0;
	int err = -ESRCH;
	for (struct thread *t; err && (t = threads_iter(&it));)
		if (!t->guest)
			err = write ? mem_write(t->tid, addr, buf, len) : mem_read(t->tid, addr, buf, len);
	return err;
}

static int ring_read(uint64_t addr, void *buf, size_t len)
{
	return ring_io(addr, buf, len, false);
}

static int ring_write(uint64_t addr, const void *buf, size_t len)
{
	return ring_io(addr, (void *)buf, len, true);
}

static void drain_lost(void (*on_lost)(int, uint64_t, void *), void *arg)
{
	static uint64_t lost[LR_PROBES];
	if (!n_probes || ring_read(ring + OFF_LOST, lost, 8 * (size_t)n_probes) < 0)
		return;
	for (int i = 0; i < n_probes; i++)
		if (lost[i] != lost_seen[i]) {
			if (api_of[i] >= 0)
				on_lost(api_of[i], lost[i] - lost_seen[i], arg);
			lost_seen[i] = lost[i];
		}
}

void launchring_drain(void (*on_record)(int api, const uint64_t *w, void *arg),
		      void (*on_lost)(int api, uint64_t n, void *arg), void *arg)
{
	static uint64_t buf[BATCH * LR_WORDS];
	static const uint8_t zero[BATCH * RECORD_SIZE];
	uint64_t head;
	if (!ring || ring_read(ring + OFF_HEAD, &head, 8) < 0)
		return;
	uint64_t start = tail;
	while (tail != head) {
		uint64_t at = tail & (LR_CAP - 1), n = head - tail;
		n = n > BATCH ? BATCH : n;
		n = n > LR_CAP - at ? LR_CAP - at : n;	/* up to the end of the ring */
		uint64_t addr = ring + OFF_RECORDS + at * RECORD_SIZE;
		if (ring_read(addr, buf, n * RECORD_SIZE) < 0)
			break;
		uint64_t k = 0;
		for (; k < n; k++) {
			const uint64_t *w = &buf[k * LR_WORDS];
			if (!w[0])
				break;	/* taken, not written yet: the next drain reads it */
			int probe = (int)w[0] - 1;
			if (probe >= 0 && probe < n_probes && api_of[probe] >= 0)
				on_record(api_of[probe], w, arg);
		}
		if (k < n) {
			/* A record taken but never written (its thread killed inside the stub)
			 * would hold the ring up forever: after a second, skip it. */
			uint64_t now = now_ns();
			if (k == 0 && stuck_since && now - stuck_since > 1000000000u) {
				log_debug("launch ring: skipping a record never written");
				k = 1;
				stuck_since = 0;
			} else if (k == 0 && !stuck_since) {
				stuck_since = now;
			}
		}
		if (k && ring_write(addr, zero, k * RECORD_SIZE) < 0)
			break;
		tail += k;
		if (k)
			stuck_since = 0;
		if (k < n)
			break;
	}
	if (tail != start)
		ring_write(ring + OFF_TAIL, &tail, 8);	/* after the keys are cleared */
	drain_lost(on_lost, arg);
}

/* ---- call records ---------------------------------------------------------------------- */

bool launchring_has_calls(void)
{
	return ring && calls_used;
}

bool launchring_is_calls_full(uint64_t addr)
{
	uint64_t off;
	return launchring_has_calls() && xol_in_shared_code(addr, &off) &&
	       arch_launch_stub + off == arch_call_stub_full;
}

bool launchring_calls_can_free(void)
{
	static struct lr_call all[LR_CALL_RECORDS];
	if (!launchring_has_calls() || ring_read(ring + OFF_CALLS, all, sizeof all) < 0)
		return false;
	/* Free, being written, or returned (the next look frees it): only calls in flight hold
	 * their records for as long as they run. */
	for (int i = 0; i < LR_CALL_RECORDS; i++)
		if (!all[i].key || all[i].state != LR_CALL_IN_FLIGHT)
			return true;
	return false;
}

int launchring_take_calls(struct lr_call *out)
{
	static struct lr_call all[LR_CALL_RECORDS];
	static const struct lr_call zero;
	struct iovec local[2 * LR_CALL_RECORDS], remote[2 * LR_CALL_RECORDS];
	int n = 0, m = 0;
	if (!launchring_has_calls() || ring_read(ring + OFF_CALLS, all, sizeof all) < 0)
		return 0;
	for (int i = 0; i < LR_CALL_RECORDS; i++) {
		if (!all[i].key || (all[i].state != LR_CALL_RETURNED && all[i].state != LR_CALL_ABANDONED))
			continue;
		if (all[i].state == LR_CALL_RETURNED)
			out[n++] = all[i];
		/* Everything but the key first, then the key: once the key is 0 a thread may claim
		 * the record and write it, which a later clear must not undo. */
		uint64_t at = ring + OFF_CALLS + i * sizeof zero;
		local[m] = (struct iovec){ (void *)&zero, sizeof zero - 8 };
		remote[m++] = (struct iovec){ (void *)(uintptr_t)(at + 8), sizeof zero - 8 };
		local[m] = (struct iovec){ (void *)&zero, 8 };
		remote[m++] = (struct iovec){ (void *)(uintptr_t)at, 8 };
	}
	uint32_t it = 0;
	for (struct thread *t; m && (t = threads_iter(&it));)
		if (!t->guest && process_vm_writev(t->tid, local, (unsigned long)m, remote, (unsigned long)m, 0) >= 0)
			break;
	return n;
}

void launchring_restore_calls(void)
{
	static struct lr_call all[LR_CALL_RECORDS];
	if (!launchring_has_calls() || ring_read(ring + OFF_CALLS, all, sizeof all) < 0)
		return;
	for (int i = 0; i < LR_CALL_RECORDS; i++) {
		uint64_t slot = all[i].key - 8, cur = 0;
		if (!all[i].key || all[i].state != LR_CALL_IN_FLIGHT)
			continue;
		/* Only where the return stub's address still is: the call may have been left. */
		if (ring_read(slot, &cur, sizeof cur) == 0 && launchring_in_stub(cur))
			ring_write(slot, &all[i].ret, sizeof all[i].ret);
	}
}
