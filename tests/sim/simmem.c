/* simmem.c — SIMULATED CUDA memory for gputop's tests (host memory, no GPU): the allocation
 * table, the bandwidth and synchronize models, and kernel handles. See simmem.h. */
#define _GNU_SOURCE
#include "simmem.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct block {
	uintptr_t addr;
	size_t bytes;		/* requested */
	size_t mapped;		/* page-rounded */
	int kind;
	struct block *next;
};

#define NBUCKETS 4096
static struct block *buckets[NBUCKETS];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t bucket_of(uintptr_t addr)
{
	return (addr >> 12) % NBUCKETS;
}

void *simmem_alloc(size_t bytes, enum simmem_kind kind)
{
	if (bytes == 0 || bytes > SIMMEM_MAX_BYTES)
		return NULL;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t mapped = (bytes + page - 1) / page * page;
	void *p = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	struct block *b = malloc(sizeof(*b));
	if (!b) {
		munmap(p, mapped);
		return NULL;
	}
	b->addr = (uintptr_t)p;
	b->bytes = bytes;
	b->mapped = mapped;
	b->kind = kind;
	pthread_mutex_lock(&table_lock);
	size_t i = bucket_of(b->addr);
	b->next = buckets[i];
	buckets[i] = b;
	pthread_mutex_unlock(&table_lock);
	return p;
}

int simmem_free(void *ptr, int host)
{
	uintptr_t a = (uintptr_t)ptr;
	struct block *found = NULL;

	pthread_mutex_lock(&table_lock);
	for (struct block **pp = &buckets[bucket_of(a)]; *pp; pp = &(*pp)->next) {
		struct block *b = *pp;
		if (b->addr == a && (b->kind == SIMMEM_HOST) == (host != 0)) {
			*pp = b->next;
			found = b;
			break;
		}
	}
	pthread_mutex_unlock(&table_lock);
	if (!found)
		return -1;
	munmap((void *)found->addr, found->mapped);
	free(found);
	return 0;
}

double simmem_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Reads a positive number from the environment once; 0 when unset or not a number. */
static double env_number(const char *name, double *cache, int *known)
{
	if (!__atomic_load_n(known, __ATOMIC_ACQUIRE)) {
		const char *s = getenv(name);
		char *end;
		double v = s ? strtod(s, &end) : 0;
		if (!s || end == s || v < 0)
			v = 0;
		*cache = v;
		__atomic_store_n(known, 1, __ATOMIC_RELEASE);
	}
	return *cache;
}

static void busy_wait_until(double deadline)
{
	while (simmem_now() < deadline)
		;
}

void simmem_transfer_wait(double t0, size_t n)
{
	static double gbps;
	static int known;
	double v = env_number("SIMCUDA_GBPS", &gbps, &known);
	if (v > 0)
		busy_wait_until(t0 + (double)n / (v * 1e9));
}

void simmem_sync_wait(void)
{
	static double us;
	static int known;
	double v = env_number("SIMCUDA_SYNC_US", &us, &known);
	if (v > 0)
		busy_wait_until(simmem_now() + v * 1e-6);
}

void simmem_copy(double t0, void *dst, const void *src, size_t n)
{
	if (n && dst != src)
		memmove(dst, src, n);
	simmem_transfer_wait(t0, n);
}

void simmem_copy_2d(double t0, void *dst, size_t dpitch, const void *src, size_t spitch,
		    size_t width, size_t height)
{
	for (size_t r = 0; r < height; r++)
		memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
	simmem_transfer_wait(t0, width * height);
}

void simmem_set(void *dst, int value, size_t n)
{
	memset(dst, value, n);
}

struct handle {
	uint64_t magic;
	const void *key;
	int space;
	struct handle *next;
};

#define HANDLE_MAGIC 0x53494d4b45524e4cULL	/* "SIMKERNL" */
static struct handle *handles;
static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;

void *simmem_handle(const void *key, int space)
{
	struct handle *h;

	pthread_mutex_lock(&handle_lock);
	for (h = handles; h; h = h->next)
		if (h->space == space &&
		    (space != SIM_KEY_ADDR ? strcmp(h->key, key) == 0 : h->key == key))
			break;
	if (!h) {
		h = calloc(1, sizeof(*h));
		if (h) {
			h->magic = HANDLE_MAGIC;
			h->key = space != SIM_KEY_ADDR ? strdup(key) : key;
			h->space = space;
			h->next = handles;
			handles = h;
		}
	}
	pthread_mutex_unlock(&handle_lock);
	return h;
}

const void *simmem_handle_key(const void *p)
{
	const void *key = NULL;

	pthread_mutex_lock(&handle_lock);
	for (struct handle *h = handles; h; h = h->next)
		if (h == p) {
			key = h->key;
			break;
		}
	pthread_mutex_unlock(&handle_lock);
	return key;
}
