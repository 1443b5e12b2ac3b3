/* test_park.c — unit test of the park (arch_park in arch/x86_64_launch.S), run for real in this
 * process: a copy of the stubs' code in an executable page, its ring a buffer of ours. A parked
 * thread must go on by itself when gputop is gone (`present` 0), has not drained lately (a stale
 * heartbeat) or cannot be judged (no time stamp counter: a bounded number of waits), and must
 * return "served" when gputop answers its slot; it keeps every register but rax, and frees its
 * slot. This is what makes a gputop killed at a kernel's first launch harmless (issue 17). */
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

/* Calls the park with known values in every register it saves; whether they came back. */
static uint64_t call_park(bool *kept)
{
	uint64_t rax, out[8];
	__asm__ volatile("mov $0x11, %%rcx\n\t"
			 "mov $0x22, %%rdx\n\t"
			 "mov $0x33, %%rsi\n\t"
			 "mov $0x44, %%rdi\n\t"
			 "mov $0x55, %%r8\n\t"
			 "mov $0x66, %%r9\n\t"
			 "mov $0x77, %%r10\n\t"
			 "mov $0x88, %%r11\n\t"
			 "call *%[park]\n\t"
			 "mov %%rcx, 0(%[out])\n\t"
			 "mov %%rdx, 8(%[out])\n\t"
			 "mov %%rsi, 16(%[out])\n\t"
			 "mov %%rdi, 24(%[out])\n\t"
			 "mov %%r8, 32(%[out])\n\t"
			 "mov %%r9, 40(%[out])\n\t"
			 "mov %%r10, 48(%[out])\n\t"
			 "mov %%r11, 56(%[out])\n\t"
			 : "=&a"(rax)
			 : [park] "b"(park), [out] "r"(out)
			 : "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory", "cc");
	*kept = true;
	for (int i = 0; i < 8; i++)
		*kept &= out[i] == 0x11 * (uint64_t)(i + 1);
	return rax;
}

/* gputop's part, in a thread: waits for a parked slot, then answers it served. */
static void *answer(void *arg)
{
	(void)arg;
	for (int n = 0; n < 5000; n++) {
		for (int i = 0; i < LR_PARK_SLOTS; i++) {
			uint64_t *state = word(LR_OFF_PARK + (size_t)i * LR_PARK_SIZE);
			if (__atomic_load_n(state, __ATOMIC_ACQUIRE) == 1) {
				uint64_t tid = *word(LR_OFF_PARK + (size_t)i * LR_PARK_SIZE + 8);
				uint64_t sp = *word(LR_OFF_PARK + (size_t)i * LR_PARK_SIZE + 16);
				/* The saved registers at sp: r11 first, the return address last. */
				uint64_t r11 = ((uint64_t *)sp)[0], rdi = ((uint64_t *)sp)[4];
				*word(NOTES) = tid;
				*word(NOTES + 8) = r11 == 0x88 && rdi == 0x44;
				__atomic_store_n(state, 2, __ATOMIC_RELEASE);
				return NULL;
			}
		}
		usleep(1000);
	}
	return NULL;
}

static bool slots_free(void)
{
	for (int i = 0; i < LR_PARK_SLOTS; i++)
		if (*word(LR_OFF_PARK + (size_t)i * LR_PARK_SIZE))
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
	struct timespec wait = { 0, 1000000 }, t0;
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
	check(r == 1 && kept && slots_free() && ms >= 200, "no heartbeat to judge by: goes on after its "
	      "200 waits of 1 ms (%.1f ms)", ms);

	*word(LR_OFF_HEARTBEAT) = tsc();
	*word(LR_OFF_FRESH) = UINT64_MAX / 2;	/* gputop drains: the park waits for its answer */
	pthread_t th;
	pthread_create(&th, NULL, answer, NULL);
	r = call_park(&kept);
	pthread_join(th, NULL);
	check(r == 0 && kept && slots_free(), "answered: served, registers kept, slot free (answer %llu, registers %s)",
	      (unsigned long long)r, kept ? "kept" : "changed");
	check(*word(NOTES) == (uint64_t)gettid() && *word(NOTES + 8) == 1,
	      "the slot named the thread and where its registers were");
	return failures ? 1 : 0;
}
