/* torch_blocks.c — allocates and frees known sizes through PyTorch's caching allocator (the
 * SIMULATED libc10_cuda.so of tests/sim/c10_cuda.c, linked), for tests/e2e/torch_*.sh. Before the
 * go signal (--go FILE; none: at once) it makes blocks A (small, large, split and not), then
 * the rest: the big block of 100 MiB at the line marked BIG, small ones, frees, a block carved
 * from a free rest. At the end it prints what torch.cuda.memory_allocated() and
 * memory_reserved() would, and every live block's size, largest first:
 *   torch_blocks: allocated=N reserved=N live=N
 *   torch_blocks: block SIZE REQUESTED
 * and, with --linger MS, waits that long before it exits (its blocks stay live). With --hold
 * FILE it frees the 5 MiB block (its segment's one), prints the allocator's segments and
 * blocks as _snapshot() would list them (simtorch_print_snapshot), says "held", waits for FILE, then empties
 * the cache (torch.cuda.empty_cache()) and prints what that gave back:
 *   torch_blocks: empty_cache freed=N reserved=N
 * --oom BYTES asks for that much more after B (on a stream of its own, 0x7000), which fails on a small simulated device and is
 * caught; with --oom-then free the big block is freed right after (its memory gone before
 * anyone looks later), with --oom-then exit the program ends at once with status 3, as one that
 * does not catch the error; --oom-times N fails N times (after --oom-go FILE, if given) and
 * prints how long the N failures took:  torch_blocks: oom x N in MS ms */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progs.h"

void simtorch_empty_cache(void);
void *simtorch_alloc(size_t size, void *stream);
int simtorch_free(void *ptr);
long long simtorch_allocated(void);
long long simtorch_reserved(void);
size_t simtorch_block_size(void *ptr);
void simtorch_print_snapshot(FILE *f);

#define MiB (1024 * 1024)
#define STREAM ((void *)0x5000)
#define OOM_STREAM ((void *)0x7000)	/* --oom's request: a stream of its own */
#define MAX_LIVE 64

static struct {
	void *ptr;
	size_t requested;
} live[MAX_LIVE];
static int n_live;

static void *remember(void *p, size_t size)
{
	if (!p) {
		fprintf(stderr, "torch_blocks: allocation of %zu failed\n", size);
		exit(1);
	}
	live[n_live].ptr = p;
	live[n_live++].requested = size;
	return p;
}

__attribute__((noinline)) static void *take(size_t size)
{
	return remember(simtorch_alloc(size, STREAM), size);	/* TAKE */
}

static void give(void *p)
{
	for (int i = 0; i < n_live; i++)
		if (live[i].ptr == p) {
			live[i] = live[--n_live];
			break;
		}
	if (simtorch_free(p) < 0) {
		fprintf(stderr, "torch_blocks: free failed\n");
		exit(1);
	}
}

static int by_size(const void *a, const void *b)
{
	size_t x = simtorch_block_size(*(void *const *)a), y = simtorch_block_size(*(void *const *)b);
	return x > y ? -1 : x < y;
}

void *make_big(void);
__attribute__((noinline)) void *make_big(void)
{
	void *p = simtorch_alloc(100 * MiB, STREAM);	/* BIG */
	return remember(p, 100 * MiB);
}

int main(int argc, char **argv)
{
	const char *go = NULL, *hold = NULL, *oom_then = "", *oom_go = NULL;
	long linger = 0, oom = 0, oom_times = 1;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--go") == 0 && i + 1 < argc)
			go = argv[++i];
		else if (strcmp(argv[i], "--hold") == 0 && i + 1 < argc)
			hold = argv[++i];
		else if (strcmp(argv[i], "--oom") == 0 && i + 1 < argc)
			oom = atol(argv[++i]);
		else if (strcmp(argv[i], "--linger") == 0 && i + 1 < argc)
			linger = atol(argv[++i]);
		else if (strcmp(argv[i], "--oom-then") == 0 && i + 1 < argc)
			oom_then = argv[++i];
		else if (strcmp(argv[i], "--oom-times") == 0 && i + 1 < argc)
			oom_times = atol(argv[++i]);
		else if (strcmp(argv[i], "--oom-go") == 0 && i + 1 < argc)
			oom_go = argv[++i];
	}
	/* A: before the go signal (an attach comes in between). */
	void *a1 = take(1000);
	take(3 * MiB + 1);
	void *a3 = take(200000);
	take(12 * MiB);
	give(a3);
	if (go) {
		progs_ready();
		progs_wait_go(go);
	}
	/* B */
	void *big = make_big();
	void *b[6];
	for (int i = 1; i <= 5; i++)
		b[i] = take((size_t)i * 70000);
	give(b[2]);
	give(b[4]);
	give(a1);
	void *c = take(5 * MiB);
	if (oom && oom_go) {
		progs_ready();
		progs_wait_go(oom_go);
	}
	double t0 = progs_now();
	for (long k = 0; oom && k < oom_times; k++) {	/* --oom BYTES: an allocation that fails
							 * (SIMCUDA_MEM_LIMIT), caught; it goes on */
		void *x = simtorch_alloc((size_t)oom, OOM_STREAM);	/* OOM */
		if (!x && strcmp(oom_then, "exit") == 0)
			_exit(3);	/* as an OutOfMemoryError nobody catches */
		long long allocated = simtorch_allocated(), reserved = simtorch_reserved();
		if (!x && strcmp(oom_then, "free") == 0 && k == 0)
			give(big);	/* the memory it held is gone before a later look */
		if (oom_times == 1)
			printf("torch_blocks: oom %s allocated=%lld reserved=%lld\n", x ? "not reached" : "caught",
			       allocated, reserved);
		if (x)
			simtorch_free(x);
	}
	if (oom && oom_times > 1)
		printf("torch_blocks: oom x %ld in %.0f ms\n", oom_times, (progs_now() - t0) * 1000);
	void *order[MAX_LIVE];
	for (int i = 0; i < n_live; i++)
		order[i] = live[i].ptr;
	qsort(order, (size_t)n_live, sizeof order[0], by_size);
	printf("torch_blocks: allocated=%lld reserved=%lld live=%d\n", simtorch_allocated(), simtorch_reserved(), n_live);
	for (int i = 0; i < n_live; i++)
		for (int k = 0; k < n_live; k++)
			if (live[k].ptr == order[i])
				printf("torch_blocks: block %zu %zu\n", simtorch_block_size(order[i]), live[k].requested);
	fflush(stdout);
	if (linger)
		progs_sleep_ms(linger);
	if (hold) {
		give(c);
		long long before = simtorch_reserved();
		simtorch_print_snapshot(stdout);
		printf("torch_blocks: held allocated=%lld reserved=%lld\n", simtorch_allocated(), before);
		fflush(stdout);
		progs_wait_go(hold);
		simtorch_empty_cache();
		printf("torch_blocks: empty_cache freed=%lld reserved=%lld\n", before - simtorch_reserved(),
		       simtorch_reserved());
	}
	return 0;
}
