/* test_park.c — unit test of the park (arch_park in arch/x86_64_launch.S), run for real in this
 * process: a copy of the stubs' code in an executable page, its ring a buffer of ours. A parked
 * thread must go on by itself when gputop is gone (`present` 0), has not drained lately (a stale
 * heartbeat) or cannot be judged (no time stamp counter: once its heartbeat stood still for 200
 * waits, and then no park waits again until the heartbeat moves), and must return "served" when
 * gputop answers its park by number; an answer that comes after the park gave up is taken by no
 * later park. It keeps every register but rax, saves them all where gputop reads them without a
 * stop (the thread pointer too), and frees its slot. This is what makes a gputop killed at a
 * kernel's first launch harmless (issue 17), and a frozen one never hold a thread (issue 33). */
#define _GNU_SOURCE
#include "arch.h"
#include "check.h"
#include "stub_layout.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static uint8_t *ring;	/* the header and the park slots are all the park reads */
#define NOTES (LR_OFF_PARK + LR_PARK_SLOTS * LR_PARK_SIZE)	/* past them: what the answer saw */
static uint64_t (*park)(void);

static uint64_t *word(size_t off)
{
	return (uint64_t *)(ring + off);
}

static uint64_t tsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Calls the park with known values in every register it saves; whether they came back. What
 * they were after the call goes to a static array, addressed relative to the pc: every
 * register is taken. */
static uint64_t regs_after[12];
static uint64_t call_park(bool *kept)
{
	uint64_t rax;
	__asm__ volatile("mov $0x11, %%rcx\n\t"
			 "mov $0x22, %%rdx\n\t"
			 "mov $0x33, %%rsi\n\t"
			 "mov $0x44, %%rdi\n\t"
			 "mov $0x55, %%r8\n\t"
			 "mov $0x66, %%r9\n\t"
			 "mov $0x77, %%r10\n\t"
			 "mov $0x88, %%r11\n\t"
			 "mov $0x99, %%r12\n\t"
			 "mov $0xaa, %%r13\n\t"
			 "mov $0xbb, %%r14\n\t"
			 "mov $0xcc, %%r15\n\t"
			 "call *%[park]\n\t"
			 "mov %%rcx, %[o0]\n\t"
			 "mov %%rdx, %[o1]\n\t"
			 "mov %%rsi, %[o2]\n\t"
			 "mov %%rdi, %[o3]\n\t"
			 "mov %%r8, %[o4]\n\t"
			 "mov %%r9, %[o5]\n\t"
			 "mov %%r10, %[o6]\n\t"
			 "mov %%r11, %[o7]\n\t"
			 "mov %%r12, %[o8]\n\t"
			 "mov %%r13, %[o9]\n\t"
			 "mov %%r14, %[o10]\n\t"
			 "mov %%r15, %[o11]\n\t"
			 : "=&a"(rax), [o0] "=m"(regs_after[0]), [o1] "=m"(regs_after[1]), [o2] "=m"(regs_after[2]),
			   [o3] "=m"(regs_after[3]), [o4] "=m"(regs_after[4]), [o5] "=m"(regs_after[5]),
			   [o6] "=m"(regs_after[6]), [o7] "=m"(regs_after[7]), [o8] "=m"(regs_after[8]),
			   [o9] "=m"(regs_after[9]), [o10] "=m"(regs_after[10]), [o11] "=m"(regs_after[11])
			 : [park] "b"(park)
			 : "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "memory", "cc");
	*kept = true;
	for (int i = 0; i < 12; i++)
		*kept &= regs_after[i] == 0x11 * (uint64_t)(i + 1);
	return rax;
}

static uint64_t *slot_word(int i, size_t off)
{
	return word(LR_OFF_PARK + (size_t)i * LR_PARK_SIZE + off);
}

/* gputop's part, in a thread: waits for a parked slot, reads what the park saved (as gputop does
 * without a stop), then answers it by number: served, or go on. With arg "late", it answers only
 * after the park gave up (its slot free again). */
static uint64_t main_thread_pointer;
static void *answer(void *arg)
{
	bool late = arg != NULL;
	for (int n = 0; n < 5000; n++) {
		for (int i = 0; i < LR_PARK_SLOTS; i++) {
			if (__atomic_load_n(slot_word(i, 0), __ATOMIC_ACQUIRE) != 1)
				continue;
			uint64_t tid = *slot_word(i, 8), sp = *slot_word(i, 16), number = *slot_word(i, 24);
			/* The saved words at sp: the thread pointer, r15 ... rbx, r11 ... rax, the
			 * return address (arch_park_regs). */
			const uint64_t *saved = (const uint64_t *)sp;
			*word(NOTES) = tid;
			*word(NOTES + 8) = saved[0] == main_thread_pointer && saved[1] == 0xcc && saved[4] == 0x99 &&
					   saved[7] == 0x88 && saved[11] == 0x44 && saved[14] == 0x11;
			*word(NOTES + 16) = number;
			if (late)
				while (__atomic_load_n(slot_word(i, 0), __ATOMIC_ACQUIRE) == 1)
					usleep(1000);
			__atomic_store_n(slot_word(i, 32), number << 1, __ATOMIC_RELEASE);
			return NULL;
		}
		usleep(1000);
	}
	return NULL;
}

/* A gputop that drains without a time stamp counter: the heartbeat moves every 10 ms for 400 ms,
 * then the park is answered served. */
static void *drain_then_answer(void *arg)
{
	(void)arg;
	for (int k = 0; k < 40; k++) {
		usleep(10000);
		__atomic_add_fetch(word(LR_OFF_HEARTBEAT), 1, __ATOMIC_RELEASE);
	}
	for (int i = 0; i < LR_PARK_SLOTS; i++)
		if (__atomic_load_n(slot_word(i, 0), __ATOMIC_ACQUIRE) == 1)
			__atomic_store_n(slot_word(i, 32), *slot_word(i, 24) << 1, __ATOMIC_RELEASE);
	return NULL;
}

static bool slots_free(void)
{
	for (int i = 0; i < LR_PARK_SLOTS; i++)
		if (*slot_word(i, 0))
			return false;
	return true;
}

int main(void)
{
	size_t size = (size_t)(arch_launch_stub_end - arch_launch_stub);
	uint8_t *code = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ring = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED || ring == MAP_FAILED || size > 8192) {
		check(false, "pages for the park");
		return 1;
	}
	memcpy(code, arch_launch_stub, size);
	memcpy(code + (arch_launch_stub_ring - arch_launch_stub), &ring, sizeof ring);
	mprotect(code, 8192, PROT_READ | PROT_EXEC);
	park = (uint64_t (*)(void))(code + (arch_park - arch_launch_stub));
	struct timespec wait = { 0, 100000 }, t0;	/* LR_PARK_WAIT_NS */
	memcpy(ring + LR_OFF_PARK_WAIT, &wait, sizeof wait);
	bool kept;

	*word(LR_OFF_PRESENT) = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint64_t r = call_park(&kept);
	check(r == 1 && kept && slots_free(), "gputop gone (present 0): goes on at once, not served, "
	      "registers kept, slot free (%.1f ms)", ms_since(&t0));

	*word(LR_OFF_PRESENT) = 1;
	*word(LR_OFF_HEARTBEAT) = tsc() - 1000000000ull;	/* a drain long ago */
	*word(LR_OFF_FRESH) = 1000000;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = call_park(&kept);
	check(r == 1 && kept && slots_free(), "a stale heartbeat (gputop frozen or starved): goes on "
	      "(%.1f ms)", ms_since(&t0));

	*word(LR_OFF_FRESH) = 0;	/* no time stamp counter to judge by */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = call_park(&kept);
	double ms = ms_since(&t0);
	check(r == 1 && kept && slots_free() && ms >= 200, "no heartbeat to judge by: goes on once the "
	      "heartbeat stood still for 2000 waits of 0.1 ms (%.1f ms)", ms);
	check(*word(LR_OFF_STALE) == *word(LR_OFF_HEARTBEAT), "and writes that heartbeat down as stale");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = call_park(&kept);
	ms = ms_since(&t0);
	check(r == 1 && kept && slots_free() && ms < 50, "the next park, no drain since: goes on at once "
	      "(%.1f ms), not 200 ms a park while gputop is frozen", ms);
	pthread_t th;
	++*word(LR_OFF_HEARTBEAT);	/* gputop drained again */
	pthread_create(&th, NULL, drain_then_answer, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = call_park(&kept);
	ms = ms_since(&t0);
	pthread_join(th, NULL);
	check(r == 0 && kept && slots_free() && ms >= 300, "a heartbeat that moves (gputop drains): the park "
	      "waits past 0.2 s for its answer, served (%.1f ms)", ms);

	*word(LR_OFF_HEARTBEAT) = tsc();
	*word(LR_OFF_FRESH) = UINT64_MAX / 2;	/* gputop drains: the park waits for its answer */
	main_thread_pointer = (uint64_t)pthread_self();
	pthread_create(&th, NULL, answer, NULL);
	r = call_park(&kept);
	pthread_join(th, NULL);
	check(r == 0 && kept && slots_free(), "answered: served, registers kept, slot free (answer %llu, registers %s)",
	      (unsigned long long)r, kept ? "kept" : "changed");
	check(*word(NOTES) == (uint64_t)gettid() && *word(NOTES + 8) == 1,
	      "the slot named the thread and where its registers were, every one saved and the thread pointer");

	/* An answer that comes after the park gave up (gputop frozen between its look and its
	 * answer): the park went on unserved, and the next park of that slot does not take it. */
	*word(LR_OFF_HEARTBEAT) = tsc();
	*word(LR_OFF_FRESH) = 20000000;	/* a few ms of ticks: it gives up soon */
	pthread_create(&th, NULL, answer, (void *)1);
	r = call_park(&kept);
	pthread_join(th, NULL);
	uint64_t number = *word(NOTES + 16);
	check(r == 1 && kept && slots_free(), "a park given up before its answer: not served (%llu)", (unsigned long long)r);
	*word(LR_OFF_HEARTBEAT) = tsc();
	*word(LR_OFF_FRESH) = 20000000;
	r = call_park(&kept);
	check(r == 1 && *word(LR_OFF_PARK + 24) == number + 1, "the slot's next park (number %llu) does not take "
	      "the late answer to park %llu: it waits, then goes on unserved (%llu)",
	      (unsigned long long)*word(LR_OFF_PARK + 24), (unsigned long long)number, (unsigned long long)r);
	return failures ? 1 : 0;
}
