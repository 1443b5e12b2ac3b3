/* test_callring.c — unit test of the call stub (arch_call_stub and arch_call_ret in
 * arch/x86_64_launch.S), run for real in this process: a copy of the stubs' code in an
 * executable page, a slot made as gputop makes one (mov $probe, %r11d; call <stub>; jump to the
 * function), its ring a mapping of ours. Each call through the slot must land, in the order the
 * calls returned, in the calls' ring with its arguments, return value, thread and out-parameter
 * (read only when the call succeeded), and free its record in the table of calls in flight; a
 * full ring drops and counts, and the call goes on; a call left by longjmp leaves a record that
 * the next call from the same depth takes over, so the table never fills (issue 23: a call never
 * waits on gputop's drain); a call nested in a recorded call of its scope is not recorded; the
 * records ever used stay a prefix of the table (gputop reads only that far). */
#define _GNU_SOURCE
#include "arch.h"
#include "check.h"
#include "stub_layout.h"
#include "tally.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { PROBE = 3 };
#define SLOTS 8192	/* where the jump probes' slots go, after the stub's code */

static uint8_t *ring;
static uint64_t (*through_slot)(uint64_t, uint64_t);

static uint64_t *word(size_t off)
{
	return (uint64_t *)(ring + off);
}

static uint64_t *done_record(uint64_t i)
{
	return word(LR_OFF_DONE + (i & (LR_DONE_CAP - 1)) * LR_CALL_SIZE);
}

/* The probed function: *out = 2 * a; fails (returns 7) for a == 13 after writing 0. */
static uint64_t probed(uint64_t out, uint64_t a)
{
	*(uint64_t *)(uintptr_t)out = a == 13 ? 0 : 2 * a;
	return a == 13 ? 7 : 0;
}

static jmp_buf env;

/* A probed function that never returns: longjmp to its caller's caller. */
static uint64_t leaves(uint64_t unused, uint64_t a)
{
	longjmp(env, (int)a);
}

/* A probed function that calls another probed one (cudart calling the driver). */
static uint64_t outer(uint64_t out, uint64_t a)
{
	return through_slot(out, a) + 100;
}

/* A probed allocation out of memory: returns 2 (cudaErrorMemoryAllocation). */
static uint64_t fails_oom(uint64_t out, uint64_t a)
{
	(void)out, (void)a;
	return 2;
}

/* gputop, for the park at an out-of-memory: waits for a parked slot, notes what it saw then
 * (the call's record already given, none in flight), answers it. */
static struct {
	int parks;
	bool record_given;
	uint64_t sp;
} gputop_saw;
static uint64_t oom_head_before;

static int in_flight(void);

static void *gputop_answers(void *unused)
{
	(void)unused;
	uint64_t *slot = word(LR_OFF_PARK);	/* state, tid, sp, number, answer */
	for (int i = 0; i < 5000 && __atomic_load_n(&slot[0], __ATOMIC_ACQUIRE) != 1; i++)
		usleep(1000);
	if (__atomic_load_n(&slot[0], __ATOMIC_ACQUIRE) != 1)
		return NULL;
	gputop_saw.parks++;
	gputop_saw.sp = slot[2];
	gputop_saw.record_given = *word(LR_OFF_DONE_HEAD) == oom_head_before + 1 && in_flight() == 0 &&
				  (uint32_t)done_record(oom_head_before)[12] == 2;
	__atomic_store_n(&slot[4], slot[3] << 1, __ATOMIC_RELEASE);	/* served */
	return NULL;
}

/* A probed call that waits inside until released[a]: calls in flight at once. */
static int released[4];

static uint64_t blocks(uint64_t unused, uint64_t a)
{
	(void)unused;
	while (!__atomic_load_n(&released[a], __ATOMIC_ACQUIRE))
		usleep(100);
	return 0;
}

static uint64_t (*block_slot)(uint64_t, uint64_t);

static void *blocked_call(void *arg)
{
	block_slot(0, (uint64_t)(uintptr_t)arg);
	return NULL;
}

static uint64_t tsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static int in_flight(void)
{
	int n = 0;
	for (int i = 0; i < LR_CALL_RECORDS; i++)
		n += *word(LR_OFF_CALLS + (size_t)i * LR_CALL_SIZE) != 0;
	return n;
}

/* mov $PROBE, %r11d; call stub; jmp *target(%rip) — the slot of a jump probe. */
static uint8_t *make_slot(uint8_t *at, const uint8_t *stub, uint64_t (*target)(uint64_t, uint64_t))
{
	uint8_t *p = at;
	*p++ = 0x41, *p++ = 0xbb;
	uint32_t probe = PROBE;
	memcpy(p, &probe, 4), p += 4;
	*p++ = 0xe8;
	int32_t rel = (int32_t)(stub - (p + 4));
	memcpy(p, &rel, 4), p += 4;
	*p++ = 0xff, *p++ = 0x25;
	memset(p, 0, 4), p += 4;
	uint64_t abs = (uint64_t)(uintptr_t)target;
	memcpy(p, &abs, 8);
	return at;
}

int main(void)
{
	size_t size = (size_t)(arch_launch_stub_end - arch_launch_stub);
	uint8_t *code = mmap(NULL, 16384, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ring = mmap(NULL, LR_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED || ring == MAP_FAILED || size > SLOTS) {
		check(false, "pages for the stub");
		return 1;
	}
	memcpy(code, arch_launch_stub, size);
	memcpy(code + (arch_launch_stub_ring - arch_launch_stub), &ring, sizeof ring);
	const uint8_t *stub = code + (arch_call_stub - arch_launch_stub);
	through_slot = (uint64_t (*)(uint64_t, uint64_t))make_slot(code + SLOTS, stub, probed);
	uint64_t (*leave_slot)(uint64_t, uint64_t) =
		(uint64_t (*)(uint64_t, uint64_t))make_slot(code + SLOTS + 64, stub, leaves);
	uint64_t (*outer_slot)(uint64_t, uint64_t) =
		(uint64_t (*)(uint64_t, uint64_t))make_slot(code + SLOTS + 128, stub, outer);
	uint32_t outer_probe = PROBE + 1;
	memcpy(code + SLOTS + 128 + 2, &outer_probe, 4);
	uint64_t (*oom_slot)(uint64_t, uint64_t) =
		(uint64_t (*)(uint64_t, uint64_t))make_slot(code + SLOTS + 192, stub, fails_oom);
	uint32_t oom_probe = PROBE + 2;
	memcpy(code + SLOTS + 192 + 2, &oom_probe, 4);
	block_slot = (uint64_t (*)(uint64_t, uint64_t))make_slot(code + SLOTS + 256, stub, blocks);
	uint32_t block_probe = PROBE + 3;
	memcpy(code + SLOTS + 256 + 2, &block_probe, 4);
	mprotect(code, 16384, PROT_READ | PROT_EXEC);
	*word(LR_OFF_PRESENT) = 1;
	*word(LR_OFF_DONE_CAPACITY) = LR_DONE_CAP;
	ring[LR_OFF_OUTS + 2 * PROBE] = 1;	/* the first argument points to the out-parameter */
	/* Its tallies (arch/tally.c): an allocation of argument 2's bytes at what argument 1
	 * points to. */
	struct tally_area *ta = (struct tally_area *)(ring + LR_OFF_TALLY);
	ta->spec[PROBE] = (struct tally_spec){ .effect = TALLY_INSERT, .key = TALLY_OUT, .value = 2 };

	/* Calls, all recorded, in order. */
	enum { N = 1000 };
	uint64_t out = 0, sum = 0;
	bool values = true;
	for (uint64_t a = 1; a <= N; a++) {
		uint64_t r = through_slot((uint64_t)(uintptr_t)&out, a);
		values &= r == (a == 13 ? 7 : 0) && out == (a == 13 ? 0 : 2 * a);
		sum += r;
	}
	check(values, "every call returns its own value and writes its out-parameter through the stub");
	const struct tally_probe *tally = &ta->probe[PROBE];
	check(tally->calls == N && tally->errors == 1 && tally->last_error == 7 && tally->class_calls[0] == N - 1 &&
		      /* a == 13 failed; a == 1 put 2 there, which is no address */
		      tally->live_count == N - 2 && tally->live_bytes == (uint64_t)N * (N + 1) / 2 - 13 - 1 &&
		      tally->ticks > 0,
	      "the stub's return tallied every call in place: %llu calls, %llu error, %llu allocations live",
	      (unsigned long long)tally->calls, (unsigned long long)tally->errors,
	      (unsigned long long)tally->live_count);
	check(*word(LR_OFF_DONE_HEAD) == N && in_flight() == 0,
	      "%d calls: %llu records in the calls' ring, %d left in flight", N,
	      (unsigned long long)*word(LR_OFF_DONE_HEAD), in_flight());
	bool ordered = true, outs = true, threads = true;
	uint64_t tp;
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	for (uint64_t i = 0; i < N; i++) {
		const uint64_t *w = done_record(i);
		uint64_t a = i + 1;
		ordered &= w[LR_CALL_OFF_STATE / 8] == i + 1 && w[2] == PROBE + 1 && w[4] == a &&
			   w[3] == (uint64_t)(uintptr_t)&out && (uint32_t)w[12] == (a == 13 ? 7u : 0u) &&
			   w[11] >= w[10];
		outs &= a == 13 ? w[LR_CALL_OFF_OUT_VALUE / 8] == 0 : w[LR_CALL_OFF_OUT_VALUE / 8] == 2 * a;
		threads &= w[9] == tp;
	}
	check(ordered, "each record: committed (its sequence number + 1), its probe, arguments and return value, in call order");
	check(outs, "the out-parameter's value is recorded when the call succeeded, not when it failed");
	check(threads, "each record names the calling thread (%%fs:0)");
	check(*word(LR_OFF_LOST + 8 * PROBE) == 0, "nothing lost while the ring had room");

	/* A full ring (gputop late, frozen or gone): dropped and counted, never waited for. */
	*word(LR_OFF_DONE_TAIL) = *word(LR_OFF_DONE_HEAD);	/* as a drain would */
	*word(LR_OFF_DONE_CAPACITY) = 4;
	values = true;
	for (uint64_t a = 1; a <= 10; a++)
		values &= through_slot((uint64_t)(uintptr_t)&out, a) == 0 && out == 2 * a;
	check(values && *word(LR_OFF_DONE_HEAD) - *word(LR_OFF_DONE_TAIL) == 4 &&
	      *word(LR_OFF_LOST + 8 * PROBE) == 6 && in_flight() == 0,
	      "ring of 4, 10 calls: 4 recorded, 6 counted lost, every call returned its value");

	/* Calls left by longjmp: the next call from the same depth takes the record over. */
	*word(LR_OFF_DONE_CAPACITY) = LR_DONE_CAP;
	volatile int left = 0;
	for (int i = 0; i < 2 * LR_CALL_RECORDS; i++)
		if (setjmp(env) == 0)
			leave_slot(0, 1);
		else
			left++;
	check(left == 2 * LR_CALL_RECORDS && in_flight() == 1,
	      "%d calls left by longjmp hold one record between them (%d in flight)", left, in_flight());
	check(through_slot((uint64_t)(uintptr_t)&out, 5) == 0 && out == 10,
	      "a call after them is recorded as usual");
	/* A call made inside another recorded call of its scope, from inside a module of that
	 * scope: not recorded (gputop counts the outer one); from elsewhere, or of no scope: it is. */
	uint64_t lo = (uint64_t)(uintptr_t)outer;
	uint64_t *range = word(LR_OFF_RANGES);	/* scope 1 */
	ring[LR_OFF_SCOPE + PROBE] = ring[LR_OFF_SCOPE + PROBE + 1] = 1;
	range[1] = lo + 512, range[0] = lo;
	uint64_t head = *word(LR_OFF_DONE_HEAD);
	*word(LR_OFF_DONE_TAIL) = head;
	bool nested_ok = outer_slot((uint64_t)(uintptr_t)&out, 21) == 100 && out == 42;
	check(nested_ok && *word(LR_OFF_DONE_HEAD) == head + 1 && done_record(head)[2] == PROBE + 2 &&
	      in_flight() == 0, "a call inside a recorded call of its scope, made from a module of the "
	      "scope: only the outer call recorded (%llu)", (unsigned long long)(*word(LR_OFF_DONE_HEAD) - head));
	check(through_slot((uint64_t)(uintptr_t)&out, 4) == 0 && *word(LR_OFF_DONE_HEAD) == head + 2,
	      "the same function called on its own: recorded");
	range[0] = 0;	/* the caller in no module of the scope */
	outer_slot((uint64_t)(uintptr_t)&out, 21);
	check(*word(LR_OFF_DONE_HEAD) == head + 4, "called from outside the scope's modules: both recorded");
	range[0] = lo;
	ring[LR_OFF_SCOPE + PROBE] = 0;
	outer_slot((uint64_t)(uintptr_t)&out, 21);
	check(*word(LR_OFF_DONE_HEAD) == head + 6, "a probe of no scope (its effects are read): both recorded");

	/* Out of memory (error 2), its probe parking for it (LR_TRAP_OOM): gputop gone, or its
	 * heartbeat stale: no park, the call returns 2 at once, recorded. */
	ring[LR_OFF_TRAPS + PROBE + 2] = LR_TRAP_OOM;
	static const struct timespec wait_1ms = { 0, 1000000 };
	memcpy(word(LR_OFF_PARK_WAIT), &wait_1ms, sizeof wait_1ms);
	*word(LR_OFF_FRESH) = 1ull << 40;	/* ticks: minutes */
	*word(LR_OFF_HEARTBEAT) = tsc() - (1ull << 41);	/* older than that */
	head = *word(LR_OFF_DONE_HEAD);
	check(oom_slot(0, 0) == 2 && *word(LR_OFF_DONE_HEAD) == head + 1 && in_flight() == 0 && word(LR_OFF_PARK)[0] == 0,
	      "out of memory, gputop's heartbeat stale: returns 2 at once, recorded, no park");
	*word(LR_OFF_PRESENT) = 0;
	*word(LR_OFF_HEARTBEAT) = tsc();
	check(oom_slot(0, 0) == 2 && *word(LR_OFF_DONE_HEAD) == head + 2 && word(LR_OFF_PARK)[0] == 0,
	      "out of memory, gputop gone: returns 2 at once, recorded, no park");
	/* gputop there and fresh: the thread parks once its record is given, until answered. */
	*word(LR_OFF_PRESENT) = 1;
	*word(LR_OFF_HEARTBEAT) = tsc();
	oom_head_before = *word(LR_OFF_DONE_HEAD);
	pthread_t gputop;
	pthread_create(&gputop, NULL, gputop_answers, NULL);
	uint64_t r = oom_slot(0, 0);
	pthread_join(gputop, NULL);
	check(r == 2 && gputop_saw.parks == 1 && gputop_saw.record_given && word(LR_OFF_PARK)[0] == 0,
	      "out of memory, gputop there: the thread parked, its record given and freed first; it returns 2 once "
	      "answered (parks %d)", gputop_saw.parks);
	/* Another error of the same probe, or an out-of-memory of a probe without the bit: no park. */
	ring[LR_OFF_TRAPS + PROBE + 2] = 0;
	*word(LR_OFF_HEARTBEAT) = tsc();
	head = *word(LR_OFF_DONE_HEAD);
	check(oom_slot(0, 0) == 2 && *word(LR_OFF_DONE_HEAD) == head + 1 && word(LR_OFF_PARK)[0] == 0,
	      "out of memory of a probe that does not park for it: returns at once");
	check(through_slot((uint64_t)(uintptr_t)&out, 13) == 7 && word(LR_OFF_PARK)[0] == 0,
	      "another error (7): no park");

	/* The records ever used are a prefix of the table, which gputop reads no further than
	 * (launchring_take_calls): a call takes the first free record, and a record freed keeps its
	 * probe. 4 threads inside a probed call at once, let go but the last; then a fifth call. */
	memset(ring + LR_OFF_CALLS, 0, (size_t)LR_CALL_RECORDS * LR_CALL_SIZE);	/* a new ring's */
	pthread_t th[5];
	for (int i = 0; i < 4; i++) {
		pthread_create(&th[i], NULL, blocked_call, (void *)(uintptr_t)i);
		for (int w = 0; w < 5000 && in_flight() < i + 1; w++)
			usleep(1000);
	}
	const uint64_t *rec = word(LR_OFF_CALLS);
	const size_t words = LR_CALL_SIZE / 8;
	bool prefix = in_flight() == 4;
	for (int i = 0; i < 4; i++)
		prefix &= rec[i * words] != 0 && rec[i * words + 2] == PROBE + 4 && rec[i * words + 4] == (uint64_t)i;
	check(prefix, "4 calls in flight at once: records 0 to 3, in the order they came");
	for (int i = 0; i < 3; i++) {
		__atomic_store_n(&released[i], 1, __ATOMIC_RELEASE);
		pthread_join(th[i], NULL);
	}
	bool kept = rec[3 * words] != 0 && rec[4 * words] == 0 && rec[4 * words + 2] == 0;
	for (int i = 0; i < 3; i++)
		kept &= rec[i * words] == 0 && rec[i * words + 2] == PROBE + 4;
	check(kept, "3 of them returned: their records free, their probe kept; the 4th in flight at record 3");
	__atomic_store_n(&released[0], 0, __ATOMIC_RELEASE);	/* thread 0 is gone: it holds the next one */
	pthread_create(&th[4], NULL, blocked_call, (void *)(uintptr_t)0);
	for (int w = 0; w < 5000 && in_flight() < 2; w++)
		usleep(1000);
	check(in_flight() == 2 && rec[0] != 0 && rec[4 * words] == 0 && rec[4 * words + 2] == 0,
	      "a new call takes the first free record (0), none past those ever used");
	__atomic_store_n(&released[0], 1, __ATOMIC_RELEASE);
	__atomic_store_n(&released[3], 1, __ATOMIC_RELEASE);
	pthread_join(th[3], NULL);
	pthread_join(th[4], NULL);
	check(in_flight() == 0, "every call returned");
	printf("# %d failure(s)\n", failures);
	return failures != 0;
}
