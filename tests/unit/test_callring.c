/* test_callring.c — unit test of the call stub (arch_call_stub and arch_call_ret in
 * arch/x86_64_launch.S), run for real in this process: a copy of the stubs' code in an
 * executable page, a slot made as gputop makes one (mov $probe, %r11d; call <stub>; jump to the
 * function), its ring a mapping of ours. Each call through the slot must land, in the order the
 * calls returned, in the calls' ring with its arguments, return value, thread and out-parameter
 * (read only when the call succeeded), and free its record in the table of calls in flight; a
 * full ring drops and counts, and the call goes on; a call left by longjmp leaves a record that
 * the next call from the same depth takes over, so the table never fills (issue 23: a call never
 * waits on gputop's drain); a call nested in a recorded call of its scope is not recorded. */
#define _GNU_SOURCE
#include "arch.h"
#include "check.h"
#include "stub_layout.h"
#include "tally.h"

#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

enum { PROBE = 3 };
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
	if (code == MAP_FAILED || ring == MAP_FAILED || size > 8192) {
		check(false, "pages for the stub");
		return 1;
	}
	memcpy(code, arch_launch_stub, size);
	memcpy(code + (arch_launch_stub_ring - arch_launch_stub), &ring, sizeof ring);
	const uint8_t *stub = code + (arch_call_stub - arch_launch_stub);
	through_slot = (uint64_t (*)(uint64_t, uint64_t))make_slot(code + 8192, stub, probed);
	uint64_t (*leave_slot)(uint64_t, uint64_t) =
		(uint64_t (*)(uint64_t, uint64_t))make_slot(code + 8192 + 64, stub, leaves);
	uint64_t (*outer_slot)(uint64_t, uint64_t) =
		(uint64_t (*)(uint64_t, uint64_t))make_slot(code + 8192 + 128, stub, outer);
	uint32_t outer_probe = PROBE + 1;
	memcpy(code + 8192 + 128 + 2, &outer_probe, 4);
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
	printf("# %d failure(s)\n", failures);
	return failures != 0;
}
