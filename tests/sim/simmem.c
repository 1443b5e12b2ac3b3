/* simmem.c — SIMULATED CUDA memory for gputop's tests (host memory, no GPU): the allocation
 * table, the bandwidth and synchronize models, and kernel handles. See simmem.h. */
#define _GNU_SOURCE
#include "simmem.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
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

/* SIMCUDA_MEM_LIMIT=BYTES: the simulated device holds that much; an allocation past it fails
 * (cudaErrorMemoryAllocation), as a real GPU's out-of-memory. */
static size_t device_bytes;

static bool over_limit(size_t bytes)
{
	const char *limit = getenv("SIMCUDA_MEM_LIMIT");
	return limit && *limit && device_bytes + bytes > strtoull(limit, NULL, 10);
}

bool simmem_reserve(size_t bytes)
{
	pthread_mutex_lock(&table_lock);
	bool over = over_limit(bytes);
	if (!over)
		device_bytes += bytes;
	pthread_mutex_unlock(&table_lock);
	if (!over)
		simnvml_account((long long)bytes);
	return !over;
}

void simmem_unreserve(size_t bytes)
{
	pthread_mutex_lock(&table_lock);
	device_bytes -= bytes;
	pthread_mutex_unlock(&table_lock);
	simnvml_account(-(long long)bytes);
}

void *simmem_alloc(size_t bytes, enum simmem_kind kind)
{
	if (bytes == 0 || bytes > SIMMEM_MAX_BYTES)
		return NULL;
	if (kind != SIMMEM_HOST && !simmem_reserve(bytes))
		return NULL;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t mapped = (bytes + page - 1) / page * page;
	void *p = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct block *b = p == MAP_FAILED ? NULL : malloc(sizeof(*b));
	if (!b) {
		if (p != MAP_FAILED)
			munmap(p, mapped);
		if (kind != SIMMEM_HOST)
			simmem_unreserve(bytes);
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
	if (found->kind != SIMMEM_HOST)
		simmem_unreserve(found->bytes);
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

/* --- SIMCUDA_TIMES: the library's own account of its timed operations ---------------------- */

enum { T_H2D, T_D2H, T_D2D, T_H2H, T_SYNC, T_COUNT };
static const char *const t_names[T_COUNT] = { "H2D", "D2H", "D2D", "H2H", "sync" };
static uint64_t t_calls[T_COUNT], t_bytes[T_COUNT], t_ns[T_COUNT];

static const char *times_file(void)
{
	static const char *file;
	static int known;
	if (!__atomic_load_n(&known, __ATOMIC_ACQUIRE)) {
		const char *s = getenv("SIMCUDA_TIMES");
		file = s && *s ? s : NULL;
		__atomic_store_n(&known, 1, __ATOMIC_RELEASE);
	}
	return file;
}

/* Whether a lies in a device or managed block (interior pointers too). */
int simmem_on_device(const void *p)
{
	uintptr_t a = (uintptr_t)p;
	int found = -1;
	pthread_mutex_lock(&table_lock);
	for (struct block *b = buckets[bucket_of(a)]; b && found < 0; b = b->next)
		if (a >= b->addr && a < b->addr + b->mapped)
			found = b->kind != SIMMEM_HOST;
	for (size_t i = 0; i < NBUCKETS && found < 0; i++)
		for (struct block *b = buckets[i]; b && found < 0; b = b->next)
			if (a >= b->addr && a < b->addr + b->mapped)
				found = b->kind != SIMMEM_HOST;
	pthread_mutex_unlock(&table_lock);
	return found > 0;
}

/* Adds one operation that started at t0 and ends now (the time is read first: the bookkeeping
 * after it is not part of the operation). */
static void account(int what, double t0, const void *dst, const void *src, size_t n)
{
	double end = simmem_now();
	if (what != T_SYNC) {
		int d = simmem_on_device(dst), s = simmem_on_device(src);
		what = s ? (d ? T_D2D : T_D2H) : (d ? T_H2D : T_H2H);
	}
	uint64_t ns = end > t0 ? (uint64_t)((end - t0) * 1e9 + 0.5) : 0;
	__atomic_add_fetch(&t_calls[what], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t_bytes[what], (uint64_t)n, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t_ns[what], ns, __ATOMIC_RELAXED);
}

__attribute__((destructor)) static void write_times(void)
{
	const char *file = times_file();
	if (!file)
		return;
	char line[1024];
	int len = snprintf(line, sizeof line, "{\"library\":\"%s\",\"pid\":%d", simmem_library,
			   (int)getpid());
	for (int i = 0; i < T_COUNT && len < (int)sizeof line; i++)
		len += snprintf(line + len, sizeof line - (size_t)len,
				",\"%s\":{\"calls\":%llu,\"bytes\":%llu,\"seconds\":%.9f}", t_names[i],
				(unsigned long long)t_calls[i], (unsigned long long)t_bytes[i],
				(double)t_ns[i] * 1e-9);
	if (len >= (int)sizeof line - 2)
		return;
	line[len++] = '}';
	line[len++] = '\n';
	int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	ssize_t w = write(fd, line, (size_t)len);
	(void)w;
	close(fd);
}

void simmem_transfer_wait(double t0, size_t n)
{
	static double gbps;
	static int known;
	double v = env_number("SIMCUDA_GBPS", &gbps, &known);
	if (v > 0)
		busy_wait_until(t0 + (double)n / (v * 1e9));
}

void simmem_sync_wait(double t0)
{
	static double us;
	static int known;
	double v = env_number("SIMCUDA_SYNC_US", &us, &known);
	if (v > 0)
		busy_wait_until(simmem_now() + v * 1e-6);
	if (times_file())
		account(T_SYNC, t0, NULL, NULL, 0);
}

void simmem_copy(double t0, void *dst, const void *src, size_t n)
{
	if (n && dst != src)
		memmove(dst, src, n);
	simmem_transfer_wait(t0, n);
	if (times_file())
		account(T_H2H, t0, dst, src, n);
}

void simmem_copy_2d(double t0, void *dst, size_t dpitch, const void *src, size_t spitch,
		    size_t width, size_t height)
{
	for (size_t r = 0; r < height; r++)
		memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
	simmem_transfer_wait(t0, width * height);
	if (times_file())
		account(T_H2H, t0, dst, src, width * height);
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

int simmem_handle_rename(const void *p, const char *key)
{
	int err = -1;
	char *copy = strdup(key);
	pthread_mutex_lock(&handle_lock);
	for (struct handle *h = handles; h && copy; h = h->next)
		if (h == p && h->space != SIM_KEY_ADDR) {
			h->key = copy;	/* the old key stays allocated: a name given out lives on */
			copy = NULL;
			err = 0;
			break;
		}
	pthread_mutex_unlock(&handle_lock);
	free(copy);
	return err;
}
