/* shim.c — the in-process reference: an LD_PRELOAD library that interposes the functions
 * bench/calls uses and does, in the program itself, what gputop does from outside: counts each
 * call, and for the calls gputop probes at return too (sync, alloc, free) times the call and
 * looks at its result. Prints the counts on stderr at exit:
 *   shim: cuLaunchKernel=N cuStreamSynchronize=N cuMemAlloc_v2=N cuMemFree_v2=N cuGraphLaunch=N
 * Only calls through the PLT are seen (the usual limit of LD_PRELOAD; gputop has no such limit). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int CUresult;
typedef uint64_t CUdeviceptr;

enum { LAUNCH, SYNC, ALLOC, FREE, GRAPH, N_COUNTERS };
static const char *const names[N_COUNTERS] = { "cuLaunchKernel", "cuStreamSynchronize", "cuMemAlloc_v2",
					       "cuMemFree_v2", "cuGraphLaunch" };
static uint64_t counts[N_COUNTERS];
static uint64_t busy_ns[N_COUNTERS];
static uint64_t errors;

static void *real(int which)
{
	static void *cache[N_COUNTERS];
	void *f = __atomic_load_n(&cache[which], __ATOMIC_RELAXED);
	if (!f) {
		f = dlsym(RTLD_NEXT, names[which]);
		if (!f) {
			fprintf(stderr, "shim: %s not found\n", names[which]);
			abort();
		}
		__atomic_store_n(&cache[which], f, __ATOMIC_RELAXED);
	}
	return f;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void count(int which)
{
	__atomic_fetch_add(&counts[which], 1, __ATOMIC_RELAXED);
}

static CUresult returned(int which, CUresult r, uint64_t t0)
{
	__atomic_fetch_add(&busy_ns[which], now_ns() - t0, __ATOMIC_RELAXED);
	if (r)
		__atomic_fetch_add(&errors, 1, __ATOMIC_RELAXED);
	return r;
}

CUresult cuLaunchKernel(void *f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
			unsigned int by, unsigned int bz, unsigned int shmem, void *stream, void **params,
			void **extra)
{
	CUresult (*fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
		       void **, void **) = real(LAUNCH);
	count(LAUNCH);
	return fn(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra);
}

CUresult cuGraphLaunch(void *exec, void *stream)
{
	CUresult (*fn)(void *, void *) = real(GRAPH);
	count(GRAPH);
	return fn(exec, stream);
}

CUresult cuStreamSynchronize(void *stream)
{
	CUresult (*fn)(void *) = real(SYNC);
	count(SYNC);
	uint64_t t0 = now_ns();
	return returned(SYNC, fn(stream), t0);
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
	CUresult (*fn)(CUdeviceptr *, size_t) = real(ALLOC);
	count(ALLOC);
	uint64_t t0 = now_ns();
	return returned(ALLOC, fn(p, bytes), t0);
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
	CUresult (*fn)(CUdeviceptr) = real(FREE);
	count(FREE);
	uint64_t t0 = now_ns();
	return returned(FREE, fn(p), t0);
}

__attribute__((destructor)) static void report(void)
{
	fprintf(stderr, "shim:");
	for (int i = 0; i < N_COUNTERS; i++)
		fprintf(stderr, " %s=%llu", names[i], (unsigned long long)counts[i]);
	fprintf(stderr, " errors=%llu\n", (unsigned long long)errors);
}
