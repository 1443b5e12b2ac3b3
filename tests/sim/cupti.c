/* cupti.c — *** SIMULATED *** CUPTI (libcupti.so.13) FOR gputop's TESTS. NOT NVIDIA's CUPTI.
 * *** No GPU: its activity records describe kernels, copies and memsets of the SIMULATED
 * driver (tests/sim/cuda.c), which tells it of each one through cuSimSetActivityHook. ***
 * It implements the CUPTI entry points libgputop-gpu.so (inject/gputime.c) uses, with the real
 * record layouts of cupti_activity.h, so that tests can check --gpu-time's loading, ring
 * hand-off and unloading against exact, known GPU times. Built as
 * tests/bin/simcupti/libcupti.so.13. Environment:
 *   SIMCUPTI_KERNEL_NS  simulated GPU duration of every kernel run, in ns (default 1000000);
 *                       "NAME=NS,NAME=NS,...,NS" gives some kernels (by mangled name) their own
 *   SIMCUPTI_COPY_NS    of every copy and memset (default 100000)
 *   SIMCUPTI_OTHER_SUBSCRIBER=NAME  another CUPTI subscriber "is there": cuptiSubscribe fails
 *                       with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, naming NAME
 *   SIMCUPTI_LOG=FILE   appends one line per CUPTI call that changes state (subscribe, enable,
 *                       finalize...), for tests that check the teardown
 *   SIMCUPTI_LINGER=1   cuptiFinalize leaves a thread of its own running (in this library's
 *                       code): a CUPTI that must not be unloaded
 *   SIMCUPTI_REFUSE=subscribe  cuptiSubscribe fails with CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, as
 *                       where profiling is for administrators only
 *                       (NVreg_RestrictProfilingToAdminUsers) or the driver is older than CUPTI
 * A refused cuptiSubscribe leaves thread-specific data in the calling thread, with a destructor
 * in this library, as NVIDIA's does: CUDA 13.0's libcupti, refusing on a machine without a driver
 * (CUPTI_ERROR_UNKNOWN), kills a thread that called it and exits after a dlclose of it (SIGSEGV,
 * in the destructor), cuptiFinalize called first or not.
 * Records: a kernel starts when the simulated GPU is free (its previous kernel ended) or now,
 * whichever is later, and lasts its duration: runs never overlap, so a test knows the union. */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int subscribed, finalized;
static unsigned enabled;	/* bit per kind: 1 kernel, 2 memcpy, 3 memset */
static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static uint8_t *buf;
static size_t buf_size, buf_used;
static uint64_t gpu_free_at;
static uint32_t correlation;
static pthread_t flusher;
static int flusher_on, flusher_stop;
static uint32_t period_ms;

static void note(const char *what)
{
	const char *file = getenv("SIMCUPTI_LOG");
	FILE *f = file && *file ? fopen(file, "ae") : NULL;
	if (f) {
		fprintf(f, "%s\n", what);
		fclose(f);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t kernel_ns(const char *name)
{
	const char *spec = getenv("SIMCUPTI_KERNEL_NS");
	uint64_t dflt = 1000000;
	if (!spec || !*spec)
		return dflt;
	size_t len = name ? strlen(name) : 0;
	for (const char *p = spec; *p;) {
		const char *end = strchr(p, ','), *eq = strchr(p, '=');
		if (!end)
			end = p + strlen(p);
		if (eq && eq < end) {
			if (name && (size_t)(eq - p) == len && strncmp(p, name, len) == 0)
				return strtoull(eq + 1, NULL, 10);
		} else {
			dflt = strtoull(p, NULL, 10);
		}
		p = *end ? end + 1 : end;
	}
	return dflt;
}

/* A name that outlives the record, as CUPTI's do (one copy per distinct name). */
static const char *intern(const char *name)
{
	static char *names[4096];
	static int n;
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return names[i];
	return n < 4096 ? (names[n++] = strdup(name)) : "(too many names)";
}

/* Hands the current buffer to the client (lock held; the callback runs without it). */
static void hand_over(void)
{
	uint8_t *b = buf;
	size_t used = buf_used;
	buf = NULL;
	buf_used = 0;
	if (b && completed) {
		pthread_mutex_unlock(&lock);
		completed(NULL, 0, b, buf_size, used);
		pthread_mutex_lock(&lock);
	}
}

static void *room(size_t size)
{
	if (buf && buf_used + size > buf_size)
		hand_over();
	if (!buf) {
		size_t max = 0;
		requested(&buf, &buf_size, &max);
		buf_used = 0;
		if (!buf || buf_size < size)
			return NULL;
	}
	void *at = buf + buf_used;
	buf_used += size;
	return at;
}

/* The simulated driver's news (cuSimSetActivityHook): 1 kernel, 2 copy, 3 memset. */
static void on_activity(int kind, const char *name, unsigned long long bytes, int copy_kind)
{
	pthread_mutex_lock(&lock);
	if (!(enabled & (1u << kind)) || finalized) {
		pthread_mutex_unlock(&lock);
		return;
	}
	uint64_t dur = kind == 1 ? kernel_ns(name) : strtoull(getenv("SIMCUPTI_COPY_NS") ? getenv("SIMCUPTI_COPY_NS") : "100000", NULL, 10);
	uint64_t start = now_ns() > gpu_free_at ? now_ns() : gpu_free_at;
	gpu_free_at = start + dur;
	if (kind == 1) {
		CUpti_ActivityKernel10 *k = room(sizeof *k);
		if (k)
			*k = (CUpti_ActivityKernel10){ .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
				.start = start, .end = start + dur, .deviceId = 0, .streamId = 7,
				.correlationId = ++correlation, .name = intern(name ? name : "") };
	} else if (kind == 2) {
		CUpti_ActivityMemcpy6 *m = room(sizeof *m);
		if (m)
			*m = (CUpti_ActivityMemcpy6){ .kind = CUPTI_ACTIVITY_KIND_MEMCPY, .copyKind = (uint8_t)copy_kind,
				.bytes = bytes, .start = start, .end = start + dur, .correlationId = ++correlation };
	} else {
		CUpti_ActivityMemset4 *m = room(sizeof *m);
		if (m)
			*m = (CUpti_ActivityMemset4){ .kind = CUPTI_ACTIVITY_KIND_MEMSET, .bytes = bytes,
				.start = start, .end = start + dur, .correlationId = ++correlation };
	}
	pthread_mutex_unlock(&lock);
}

typedef void sim_activity_hook(int, const char *, unsigned long long, int);

static void hook_driver(sim_activity_hook *hook)
{
	void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void (*set)(sim_activity_hook *) = drv ? (void (*)(sim_activity_hook *))dlsym(drv, "cuSimSetActivityHook") : NULL;
	if (set)
		set(hook);
	if (drv)
		dlclose(drv);
}

static void *flush_thread(void *arg)
{
	pthread_mutex_lock(&lock);
	while (!flusher_stop) {
		pthread_mutex_unlock(&lock);
		struct timespec ts = { period_ms / 1000, (long)(period_ms % 1000) * 1000000 };
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&lock);
		if (buf_used)
			hand_over();
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* The calling thread's state a refusal leaves behind: its destructor runs at the thread's exit. */
static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;

static void thread_state_free(void *state)
{
	free(state);
}

static void thread_key_make(void)
{
	pthread_key_create(&thread_key, thread_state_free);
}

static CUptiResult refuse(CUptiResult result)
{
	pthread_once(&thread_key_once, thread_key_make);
	if (!pthread_getspecific(thread_key))
		pthread_setspecific(thread_key, malloc(64));
	return result;
}

EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *u)
{
	if (!s)
		return CUPTI_ERROR_INVALID_PARAMETER;
	const char *other = getenv("SIMCUPTI_OTHER_SUBSCRIBER"), *no = getenv("SIMCUPTI_REFUSE");
	if ((other && *other) || subscribed)
		return refuse(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
	if (no && strcmp(no, "subscribe") == 0)
		return refuse(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
	subscribed = 1;
	*s = (CUpti_SubscriberHandle)&subscribed;
	note("subscribe");
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *u,
					      CUpti_SubscriberParams *p)
{
	CUptiResult r = cuptiSubscribe(s, cb, u);
	const char *other = getenv("SIMCUPTI_OTHER_SUBSCRIBER");
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && p && p->oldSubscriberName && other)
		snprintf(p->oldSubscriberName, p->oldSubscriberSize, "CUPTI for %s", other);
	return r;
}

EXPORT CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
	if (s != (CUpti_SubscriberHandle)&subscribed || !subscribed)
		return CUPTI_ERROR_INVALID_PARAMETER;
	subscribed = 0;
	note("unsubscribe");
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
							   CUpti_BuffersCallbackCompleteFunc comp)
{
	if (!req || !comp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	requested = req;
	completed = comp;
	return CUPTI_SUCCESS;
}

static int kind_bit(CUpti_ActivityKind kind)
{
	return kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || kind == CUPTI_ACTIVITY_KIND_KERNEL ? 1
	     : kind == CUPTI_ACTIVITY_KIND_MEMCPY ? 2 : kind == CUPTI_ACTIVITY_KIND_MEMSET ? 3 : 0;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
	int bit = kind_bit(kind);
	if (!bit || !requested)
		return CUPTI_ERROR_NOT_COMPATIBLE;
	pthread_mutex_lock(&lock);
	enabled |= 1u << bit;
	pthread_mutex_unlock(&lock);
	hook_driver(on_activity);
	note("enable");
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	pthread_mutex_lock(&lock);
	enabled &= ~(1u << kind_bit(kind));
	pthread_mutex_unlock(&lock);
	note("disable");
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	pthread_mutex_lock(&lock);
	hand_over();
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

static void flusher_end(void)
{
	pthread_mutex_lock(&lock);
	int on = flusher_on;
	flusher_stop = 1;
	flusher_on = 0;
	pthread_mutex_unlock(&lock);
	if (on)
		pthread_join(flusher, NULL);
}

EXPORT CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t ms)
{
	flusher_end();
	if (!ms)
		return CUPTI_SUCCESS;
	pthread_mutex_lock(&lock);
	period_ms = ms;
	flusher_stop = 0;
	flusher_on = pthread_create(&flusher, NULL, flush_thread, NULL) == 0;
	pthread_mutex_unlock(&lock);
	return flusher_on ? CUPTI_SUCCESS : CUPTI_ERROR_UNKNOWN;
}

EXPORT CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	size_t off = *record ? (size_t)((uint8_t *)*record - buffer) : 0;
	if (*record) {
		int k = (*record)->kind;
		off += k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ? sizeof(CUpti_ActivityKernel10)
		     : k == CUPTI_ACTIVITY_KIND_MEMCPY ? sizeof(CUpti_ActivityMemcpy6) : sizeof(CUpti_ActivityMemset4);
	}
	if (off >= valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = (CUpti_Activity *)(buffer + off);
	return CUPTI_SUCCESS;
}

static void *linger(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

EXPORT CUptiResult CUPTIAPI cuptiFinalize(void)
{
	const char *l = getenv("SIMCUPTI_LINGER");
	pthread_t th;
	if (l && *l == '1' && pthread_create(&th, NULL, linger, NULL) == 0)
		pthread_detach(th);
	flusher_end();
	hook_driver(NULL);
	pthread_mutex_lock(&lock);
	finalized = 1;
	enabled = 0;
	pthread_mutex_unlock(&lock);
	note("finalize");
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
	*str = result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"
	     : "simulated CUPTI error";
	return CUPTI_SUCCESS;
}
