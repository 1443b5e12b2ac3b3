/* test_stats.c — unit test of src/stats.c: exact live bytes and peak, interior pointers,
 * reset, kernel interning and its overflow row, bounded memory under churn, threads.
 * Standalone (links src/stats.c and src/cuda_api.c); one "ok"/"not ok" line per check. */
#include "cuda_api.h"
#include "stats.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static struct stats_snapshot snap(void)
{
	struct stats_snapshot s;

	if (stats_snapshot(&s) < 0) {
		printf("not ok - stats_snapshot failed\n");
		exit(1);
	}
	return s;
}

static uint64_t live_device(const struct stats_snapshot *s)
{
	return s->live_bytes[MEM_DEVICE] + s->live_bytes[MEM_MANAGED];
}

static int api(const char *name)
{
	int i = cuda_api_find(name);

	if (i < 0) {
		printf("not ok - %s is in the API table\n", name);
		exit(1);
	}
	return i;
}

static void test_allocations(void)
{
	int malloc_ = api("cudaMalloc"), host = api("cudaMallocHost");
	struct stats_snapshot s;

	stats_on_alloc(0, malloc_, 0x7f0000000000, 4096, MEM_DEVICE, 0, 100, 1, "libcaller.so");
	stats_on_alloc(0, malloc_, 0x7f0000100000, 1 << 20, MEM_DEVICE, 0, 100, 2, "libcaller.so");
	stats_on_alloc(0, api("cudaMallocManaged"), 0x7f0000400000, 8192, MEM_MANAGED, 1, 101, 3, "libcaller.so");
	stats_on_alloc(0, host, 0x600000, 65536, MEM_HOST, -1, 100, 4, "libcaller.so");
	s = snap();
	check(live_device(&s) == 4096 + (1 << 20) + 8192, "live device+managed bytes after 3 allocations: %" PRIu64, live_device(&s));
	check(s.live_bytes[MEM_HOST] == 65536, "live host bytes 65536");
	check(s.live_count == 4 && s.n_alloc == 4, "4 live allocations in count and snapshot");
	check(s.peak_device_bytes == live_device(&s), "peak equals live before any free");
	check(s.allocs == 4, "4 allocations counted");
	stats_snapshot_free(&s);

	check(stats_on_free(0, 0x7f0000100000), "free of a known allocation");
	check(!stats_on_free(0, 0x7f0000100000), "second free of it is unknown");
	check(!stats_on_free(0, 0x7f0000000010), "free of an interior pointer is unknown");
	s = snap();
	check(live_device(&s) == 4096 + 8192, "live bytes after the free: %" PRIu64, live_device(&s));
	check(s.peak_device_bytes == 4096 + (1 << 20) + 8192, "peak kept after the free");
	check(s.frees == 1, "1 free counted");
	stats_snapshot_free(&s);
}

static void test_interior(void)
{
	check(stats_is_device_ptr(0, 0x7f0000000000), "start of a device allocation");
	check(stats_is_device_ptr(0, 0x7f0000000fff), "last byte of a device allocation");
	check(!stats_is_device_ptr(0, 0x7f0000001000), "one past the end is not inside");
	check(!stats_is_device_ptr(0, 0x7f0000100800), "inside a freed allocation is not");
	check(stats_is_device_ptr(0, 0x7f0000401000), "inside a managed allocation");
	check(!stats_is_device_ptr(0, 0x600010), "inside pinned host memory is not device");
	check(!stats_is_device_ptr(0, 0x10), "a low address is not");
}

/* An allocation over a live one proves its free was missed: the old one must go. */
static void test_missed_free(void)
{
	int malloc_ = api("cudaMalloc");
	struct stats_snapshot s;

	stats_on_alloc(0, malloc_, 0x7e0000000000, 1000, MEM_DEVICE, 0, 1, 1, "libcaller.so");
	stats_on_alloc(0, malloc_, 0x7e0000000000, 3000, MEM_DEVICE, 0, 1, 2, NULL);	/* same address */
	stats_on_alloc(0, malloc_, 0x7e0000100000, 0x100000, MEM_DEVICE, 0, 1, 3, "libcaller.so");
	stats_on_alloc(0, malloc_, 0x7e0000180000, 16, MEM_DEVICE, 0, 1, 4, NULL);	/* inside it */
	s = snap();
	check(live_device(&s) == 4096 + 8192 + 3000 + 16, "re-allocations replace stale ones: %" PRIu64, live_device(&s));
	stats_snapshot_free(&s);
	check(stats_is_device_ptr(0, 0x7e0000000bb7) && !stats_is_device_ptr(0, 0x7e0000000bb8), "bounds follow the newer size");
	check(!stats_is_device_ptr(0, 0x7e0000100000), "evicted allocation is no longer device memory");
	stats_on_free(0, 0x7e0000000000);
	stats_on_free(0, 0x7e0000180000);
}

static void test_calls_and_reset(void)
{
	int malloc_ = api("cudaMalloc"), launch = api("cuLaunchKernel");
	struct stats_snapshot s;
	uint32_t g[3] = { 4, 2, 1 }, b[3] = { 256, 1, 1 };

	stats_on_call(0, malloc_, 1000, true, 0);
	stats_on_call(0, malloc_, 3000, true, 2);
	stats_on_call(0, launch, 0, false, 0);
	stats_on_launch(0, stats_kernel_id(0, "k1"), g, b);
	stats_on_copy(0, DIR_H2D, COPY_SYNC, 1 << 20, 5000);
	stats_on_copy(0, DIR_H2D, COPY_ASYNC, 100, 7);
	stats_on_memset(0, 64, 9);
	stats_on_sync(0, 11);
	stats_on_stop(0);
	stats_set_tracer_cpu(5000);
	s = snap();
	check(s.api[malloc_].calls == 2 && s.api[malloc_].errors == 1 && s.api[malloc_].ns == 4000,
	      "cudaMalloc row: 2 calls, 1 error, 4000 ns");
	check(s.api[malloc_].last_error == 2 && s.api[malloc_].returns_seen, "last error 2, returns seen");
	check(s.api[launch].calls == 1 && !s.api[launch].returns_seen, "entry-only row has no returns");
	check(s.xfer[COPY_SYNC][DIR_H2D].bytes == 1 << 20 && s.xfer[COPY_ASYNC][DIR_H2D].calls == 1,
	      "copies split by mode");
	check(s.memset_.bytes == 64 && s.sync_calls == 1 && s.sync_ns == 11 && s.stops == 1,
	      "memset, sync and stops");
	check(s.launches == 1 && s.n_kernel == 1 && s.kernel[0].launches == 1 &&
	      s.kernel[0].grid[0] == 4 && s.kernel[0].block[0] == 256, "launch with its dimensions");
	stats_snapshot_free(&s);
	stats_on_lost(0, malloc_, 3);	/* records a stub could not keep: the tallies count the calls */
	stats_add_call(0, malloc_, 3, 1, 900, 2, true);	/* which the tallies then add */
	s = snap();
	check(s.api[malloc_].calls == 5 && s.api[malloc_].lost == 3 && s.lost == 3 && s.api[malloc_].ns == 4900 &&
		      s.api[malloc_].errors == 2 && s.api[malloc_].last_error == 2,
	      "lost records: their detail counted as lost, their calls, errors and time from the tallies");
	stats_snapshot_free(&s);

	stats_reset();
	stats_set_tracer_cpu(7000);
	s = snap();
	check(s.api[malloc_].calls == 0 && s.api[malloc_].errors == 0 && s.launches == 0 &&
	      s.xfer[COPY_SYNC][DIR_H2D].calls == 0 && s.stops == 0 && s.allocs == 0 && s.frees == 0,
	      "reset zeroes counters");
	check(s.n_kernel == 1 && s.kernel[0].launches == 0 && strcmp(s.kernel[0].name, "k1") == 0,
	      "reset keeps kernel names, zeroes their launches");
	check(live_device(&s) == 4096 + 8192 && s.n_alloc == 3, "reset keeps live allocations");
	check(s.peak_device_bytes == 4096 + 8192, "reset sets peak to the current live bytes");
	check(s.tracer_cpu_ns == 2000, "tracer CPU counts from the reset");
	stats_snapshot_free(&s);
	check(stats_kernel_id(0, "k1") == 0, "a name keeps its id across a reset");
}

static void test_kernels(void)
{
	char name[64];
	int a = stats_kernel_id(0, "void scale<float>(float*, int)");
	int b = stats_kernel_id(0, "void scale<double>(double*, int)");
	struct stats_snapshot s;

	strcpy(name, "void scale<float>(float*, int)");
	check(a >= 0 && b >= 0 && a != b, "distinct names get distinct ids");
	check(stats_kernel_id(0, name) == a, "the same name (another buffer) gets the same id");
	name[0] = 'X';
	s = snap();
	check(strcmp(s.kernel[a].name, "void scale<float>(float*, int)") == 0, "names are copied");
	stats_snapshot_free(&s);

	char *big = malloc(10000);
	memset(big, 'a', 9999);
	big[9999] = '\0';
	int c = stats_kernel_id(0, big);
	big[5000] = 'b';	/* differs only past the kept length */
	check(c >= 0 && stats_kernel_id(0, big) == c, "very long names are kept cut, same id");
	s = snap();
	check(strlen(s.kernel[c].name) < 9999, "a cut name is shorter: %zu bytes", strlen(s.kernel[c].name));
	stats_snapshot_free(&s);
	free(big);
}

static void test_kernel_overflow(void)
{
	char name[32];
	int id = 0, first_full = -2;
	struct stats_snapshot s;
	uint32_t g[3] = { 1, 1, 1 };

	for (int i = 0; i < STATS_MAX_KERNELS + 10; i++) {
		snprintf(name, sizeof(name), "kernel_%d", i);
		id = stats_kernel_id(0, name);
		if (id < 0 && first_full == -2)
			first_full = i;
	}
	s = snap();
	check(s.n_kernel == STATS_MAX_KERNELS, "table holds %d kernels (has %zu)", STATS_MAX_KERNELS, s.n_kernel);
	stats_snapshot_free(&s);
	check(id == -1 && first_full > 0, "a full table answers -1");
	check(stats_kernel_id(0, "kernel_7") >= 0, "known names still resolve when full");
	stats_on_launch(0, -1, g, g);
	stats_on_launch(0, -1, g, g);
	s = snap();
	check(s.n_kernel == STATS_MAX_KERNELS + 1, "one overflow row added");
	struct stats_kernel *other = &s.kernel[s.n_kernel - 1];
	check(strcmp(other->name, "(other kernels)") == 0 && other->launches == 2,
	      "launches of unnamed kernels count under \"(other kernels)\"");
	stats_snapshot_free(&s);
}

static void test_churn(void)
{
	int malloc_ = api("cudaMalloc");
	size_t before = stats_debug_capacity(0), peak_cap = 0;

	for (uint64_t i = 0; i < 1000000; i++) {
		uint64_t addr = 0x700000000000 + (i % 4096) * 0x200000 + (i / 4096) * 512;

		stats_on_alloc(0, malloc_, addr, 512, MEM_DEVICE, 0, 1, i, "libcaller.so");
		if (!stats_on_free(0, addr))
			break;
		if (stats_debug_capacity(0) > peak_cap)
			peak_cap = stats_debug_capacity(0);
	}
	check(peak_cap <= 1024 && stats_debug_capacity(0) == before,
	      "1,000,000 alloc/free pairs keep the hash map small (peak %zu slots)", peak_cap);

	for (uint64_t i = 1; i <= 100000; i++)
		stats_on_alloc(0, malloc_, 0x710000000000 + i * 4096, 4096, MEM_DEVICE, 0, 1, i, "libcaller.so");
	size_t grown = stats_debug_capacity(0);
	check(stats_is_device_ptr(0, 0x710000000000 + 50000 * 4096 + 123), "interior lookup among 100k live");
	for (uint64_t i = 1; i <= 100000; i++)
		stats_on_free(0, 0x710000000000 + i * 4096);
	check(grown >= 200000 && stats_debug_capacity(0) <= 1024,
	      "the map grows for 100k live (%zu) and shrinks back when freed (%zu)", grown,
	      stats_debug_capacity(0));
}

static void *feeder(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 1; i <= 20000; i++) {
		stats_on_alloc(0, 0, base + i * 256, 256, MEM_DEVICE, 0, 1, i, "libcaller.so");
		stats_on_call(0, 0, 1, true, 0);
		if (i % 2)
			stats_on_free(0, base + i * 256);
	}
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200; i++) {
		struct stats_snapshot s = snap();

		stats_snapshot_free(&s);
	}
	return NULL;
}

static void test_threads(void)
{
	pthread_t t[3];
	struct stats_snapshot s, before = snap();

	pthread_create(&t[0], NULL, feeder, (void *)(uintptr_t)0x720000000000);
	pthread_create(&t[1], NULL, feeder, (void *)(uintptr_t)0x730000000000);
	pthread_create(&t[2], NULL, reader, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	s = snap();
	check(s.api[0].calls - before.api[0].calls == 40000 && s.live_count - before.live_count == 20000 &&
	      live_device(&s) - live_device(&before) == 20000 * 256,
	      "two feeding threads and a reader: exact counts");
	stats_snapshot_free(&s);
	stats_snapshot_free(&before);
}

static void test_sorting(void)
{
	struct stats_snapshot s = snap();
	const struct stats_alloc **a = malloc(s.n_alloc * sizeof(*a));
	int *idx = malloc(s.n_api * sizeof(*idx));
	bool ok = true;

	stats_sort_allocs(&s, a);
	for (size_t i = 1; i < s.n_alloc; i++)
		ok &= a[i - 1]->bytes > a[i]->bytes ||
		      (a[i - 1]->bytes == a[i]->bytes && a[i - 1]->addr < a[i]->addr);
	check(ok && s.n_alloc > 0, "allocations sort by bytes desc then address");
	size_t n = stats_sort_api(&s, idx);
	check(n == 1 && idx[0] == 0, "only rows with calls are listed");
	free(a);
	free(idx);
	stats_snapshot_free(&s);
}

/* Two processes: each keeps its figures (the same device address in both is two allocations),
 * a snapshot of all sums them and merges kernels by name, one of a pid has only its own. */
static void test_processes(void)
{
	struct stats_snapshot all, one;
	uint32_t g[3] = { 1, 1, 1 };

	stats_init();
	int a = stats_process_new(100, 1, "rank0"), b = stats_process_new(200, 1, "rank1");
	check(a == 0 && b == 1, "the first process takes the figures made at init, the second is new");
	stats_on_alloc(a, 0, 0x7f0000000000, 1000, MEM_DEVICE, 0, 100, 1, "");
	stats_on_launch(a, stats_kernel_id(a, "k_shared"), g, g);
	stats_on_launch(a, stats_kernel_id(a, "k_a"), g, g);
	stats_on_call(a, 0, 10, true, 0);
	stats_on_alloc(b, 0, 0x7f0000000000, 500, MEM_DEVICE, 1, 200, 1, "");
	for (int i = 0; i < 3; i++)
		stats_on_launch(b, stats_kernel_id(b, "k_shared"), g, g);
	stats_process_set_rank(b, 1, 1);
	stats_process_ended(b, true, 3, 0);
	check(stats_snapshot(&all) == 0, "snapshot of all");
	check(all.n_proc == 2 && all.n_procs == 2 && all.proc[1].info.rank == 1 &&
	      all.proc[1].info.ended && all.proc[1].info.exit_status == 3 &&
	      strcmp(all.proc[0].info.command, "rank0") == 0, "both processes listed, with rank and end");
	check(all.n_alloc == 2 && all.live_bytes[MEM_DEVICE] == 1500, "one address, two processes: two allocations");
	check(all.launches == 5 && all.n_kernel == 2, "launches summed, kernels merged by name");
	bool merged = false;
	for (size_t i = 0; i < all.n_kernel; i++)
		if (strcmp(all.kernel[i].name, "k_shared") == 0)
			merged = all.kernel[i].launches == 4 && all.kernel[i].pid == 0;
	check(merged, "a kernel of both: one row, 4 launches, pid 0 (several)");
	check(all.api[0].calls == 1 && all.api[0].pid == 100, "a function one process called names it");
	check(all.proc[1].device == 1 && all.proc[1].live_bytes == 500, "per process: its device and live bytes");
	check(stats_snapshot_of(200, &one) == 0 && one.n_alloc == 1 && one.alloc[0].pid == 200 &&
	      one.launches == 3 && one.api[0].calls == 0, "a snapshot of one process has its own figures only");
	stats_snapshot_free(&one);
	stats_snapshot_free(&all);
	stats_free();
}

/* The ranks of a job hold the same kernels by the thousand (every name of libtorch_cuda.so):
 * a snapshot of all merges them by name, each once, whatever the order of their rows. */
static void test_processes_many_kernels(void)
{
	enum { PROCS = 4, KERNELS = 20000 };
	struct stats_snapshot all;
	uint32_t g[3] = { 1, 1, 1 };
	char name[64];

	stats_init();
	for (int p = 0; p < PROCS; p++) {
		int id = stats_process_new(100 + p, 1, "rank");
		for (int i = 0; i < KERNELS; i++) {
			/* Each process names them in another order, and has one of its own. */
			static const int step[PROCS] = { 1, 3, 7, 9 };	/* prime to KERNELS */
			int k = (i * step[p]) % KERNELS;
			snprintf(name, sizeof name, "kernel_%d", k);
			int kid = stats_kernel_id(id, name);
			if (k % 1000 == 0)
				stats_on_launch(id, kid, g, g);
		}
		snprintf(name, sizeof name, "own_%d", p);
		stats_on_launch(id, stats_kernel_id(id, name), g, g);
	}
	check(stats_snapshot(&all) == 0, "snapshot of %d processes of %d kernels", PROCS, KERNELS);
	check(all.n_kernel == KERNELS + PROCS, "one row a name: %zu", all.n_kernel);
	size_t shared = 0, own = 0;
	for (size_t i = 0; i < all.n_kernel; i++) {
		if (strncmp(all.kernel[i].name, "kernel_", 7) == 0 && all.kernel[i].launches)
			shared += all.kernel[i].launches == PROCS && all.kernel[i].pid == 0;
		if (strncmp(all.kernel[i].name, "own_", 4) == 0)
			own += all.kernel[i].launches == 1 && all.kernel[i].pid >= 100;
	}
	check(shared == KERNELS / 1000 && own == PROCS, "launched by all: one row each, pid 0 (%zu); "
	      "each process's own: its pid (%zu)", shared, own);
	stats_snapshot_free(&all);
	stats_free();
}

int main(void)
{
	struct stats_snapshot s;

	check(stats_snapshot(&s) < 0, "no snapshot before stats_init");
	check(stats_init() == 0, "stats_init");
	test_allocations();
	test_interior();
	test_missed_free();
	test_calls_and_reset();
	test_kernels();
	test_kernel_overflow();
	test_churn();
	test_threads();
	test_sorting();
	stats_free();
	test_processes();
	test_processes_many_kernels();
	check(stats_snapshot(&s) < 0 && !stats_is_device_ptr(0, 0x7f0000000000), "nothing left after stats_free");
	check(stats_init() == 0 && stats_snapshot(&s) == 0 && s.n_alloc == 0 && s.n_kernel == 0,
	      "stats_init again starts empty");
	stats_snapshot_free(&s);
	stats_free();
	printf("# %d failure(s)\n", failures);
	return failures != 0;
}
