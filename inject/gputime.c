/* gputime.c — libgputop-gpu.so, the library `gputop --gpu-time` loads into the program (dlopen
 * called in a thread gputop holds at a CUDA API entry). It does not link libcupti: its start
 * function dlopens the libcupti gputop found and returns at once; a thread of its own then
 * subscribes to CUPTI (another subscriber there: it says so and stops), enables the activity
 * kinds for kernels, copies and memsets with a flush period, and sums each buffer of records
 * into the totals of gputime_layout.h in place (gputime_totals.h), which gputop reads with
 * process_vm_readv whenever it likes: no figure depends on gputop keeping up, and the program
 * never waits for gputop. Asked to stop (or finding itself untraced: gputop died), its thread
 * flushes, disables, unsubscribes, finalizes CUPTI, waits for gputop to read the last totals,
 * unloads libcupti and then itself (a tail call to
 * dlclose from a frame of its own, so no code of the library runs after it is gone). A CUPTI
 * that was not finalized (it refused us) is never unloaded, nor the library: both stay, idle. */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "gputime_layout.h"
#include "gputime_totals.h"

#define EXPORT __attribute__((visibility("default")))
#define HIDDEN __attribute__((visibility("hidden")))

/* What gputop reads: the one symbol it looks up besides the start function. */
EXPORT struct gt_shared gputop_gpu_shared;	/* .bss: 2.3 MiB that cost the file nothing */
#define SH gputop_gpu_shared

/* The CUPTI functions used, found in the libcupti gputop named. */
static struct {
	void *lib;
	__typeof__(cuptiSubscribe) *subscribe;
	__typeof__(cuptiSubscribe_v2) *subscribe_v2;	/* CUDA 13: names us and the other one */
	__typeof__(cuptiUnsubscribe) *unsubscribe;
	__typeof__(cuptiActivityRegisterCallbacks) *register_callbacks;
	__typeof__(cuptiActivityEnable) *enable;
	__typeof__(cuptiActivityDisable) *disable;
	__typeof__(cuptiActivityFlushAll) *flush_all;
	__typeof__(cuptiActivityFlushPeriod) *flush_period;
	__typeof__(cuptiActivityGetNextRecord) *next_record;
	__typeof__(cuptiFinalize) *finalize;	/* optional: without it CUPTI stays loaded */
	__typeof__(cuptiGetResultString) *result_string;	/* optional: names a failure */
	__typeof__(cuptiActivityGetNumDroppedRecords) *num_dropped;	/* optional: CUPTI's losses */
} cupti;

static char cupti_path[4096];
static bool cupti_theirs;	/* libcupti was in the process before us: our dlclose only drops
				 * our reference */
static uint32_t flush_ms;
static void *self;		/* our own handle, from gputop's dlopen */
static CUpti_SubscriberHandle subscriber;
static bool stopping;		/* the thread tears CUPTI down: at_exit must not flush */
static pthread_mutex_t produce = PTHREAD_MUTEX_INITIALIZER;	/* CUPTI's threads, never gputop */

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])
#define BUFFER_SIZE (1u << 20)

static void fail(int status, const char *what, int result)
{
	SH.status = status;
	SH.cupti_result = result;
	size_t n = what ? strnlen(what, sizeof SH.message - 1) : 0;	/* cut, NUL-terminated */
	memcpy(SH.message, what, n);
	SH.message[n] = 0;
}

/* A CUPTI call failed: "cuptiSubscribe: CUPTI_ERROR_UNKNOWN" in the message. */
static void fail_call(const char *call, CUptiResult result)
{
	const char *name = NULL;
	char text[256];
	if (!cupti.result_string || cupti.result_string(result, &name) != CUPTI_SUCCESS || !name)
		name = "error";
	snprintf(text, sizeof text, "%s: %s", call, name);
	fail(GT_ERR_CUPTI_CALL, text, result);
}

/* ---- records into the totals (CUPTI's threads) ------------------------------------------- */

/* CUPTI's name pointers are its own and stable per kernel: interned once by pointer. */
#define NAME_SLOTS (2 * GT_NAMES)
static struct { const char *ptr; uint32_t id; } name_slots[NAME_SLOTS];
static uint32_t names_len;

static uint32_t name_id(const char *name)
{
	if (!name)
		return GT_NO_NAME;
	size_t h = ((uintptr_t)name >> 3) * 0x9e3779b97f4a7c15ull >> 40;
	for (size_t i = 0; i < NAME_SLOTS; i++) {
		size_t k = (h + i) % NAME_SLOTS;
		if (name_slots[k].ptr == name)
			return name_slots[k].id;
		if (name_slots[k].ptr)
			continue;
		size_t len = strlen(name) + 1;
		if (SH.names_used == GT_NAMES || names_len + len > GT_NAME_BYTES) {
			SH.names_dropped++;
			return GT_NO_NAME;
		}
		memcpy(SH.names + names_len, name, len);
		uint32_t id = SH.names_used;
		SH.name_at[id] = names_len;
		names_len += (uint32_t)len;
		name_slots[k].ptr = name;
		name_slots[k].id = id;
		__atomic_store_n(&SH.names_used, id + 1, __ATOMIC_RELEASE);	/* text, then count */
		return id;
	}
	SH.names_dropped++;
	return GT_NO_NAME;
}

/* A buffer's records, read out of it to be summed (CUPTI's thread, under the lock). A kernel's
 * record is over 100 bytes: a buffer holds fewer than this many. */
#define WORK_MAX (BUFFER_SIZE / 64)
static struct gt_work work[WORK_MAX];
static uint64_t dev_end[GT_DEVICES];	/* gt_totals_add's */

/* The record's essentials into *w: 1, or 0 for a kind not summed. */
static int read_record(const CUpti_Activity *a, struct gt_work *w)
{
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		/* The fields read sit at the same offsets in every CUpti_ActivityKernel since 4. */
		const CUpti_ActivityKernel10 *k = (const void *)a;
		*w = (struct gt_work){ .kind = GT_KERNEL, .start = k->start, .end = k->end,
				       .device = k->deviceId, .name = name_id(k->name) };
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)a;
		*w = (struct gt_work){ .kind = GT_MEMCPY, .start = m->start, .end = m->end, .bytes = m->bytes,
				       .device = m->deviceId, .copy_kind = m->copyKind, .name = GT_NO_NAME };
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)a;
		*w = (struct gt_work){ .kind = GT_MEMSET, .start = m->start, .end = m->end, .bytes = m->bytes,
				       .device = m->deviceId, .name = GT_NO_NAME };
		return 1;
	}
	default:
		return 0;
	}
}

/* CUPTI's buffers are mapped, not malloc'ed: a thread's first malloc gives it an arena of its
 * own, which glibc keeps for the life of the process. */
static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	void *p = mmap(NULL, BUFFER_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	*buffer = p == MAP_FAILED ? NULL : p;
	*size = *buffer ? BUFFER_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	CUpti_Activity *a = NULL;
	size_t n = 0, dropped = 0;
	pthread_mutex_lock(&produce);
	while (valid && cupti.next_record(buffer, valid, &a) == CUPTI_SUCCESS) {
		n += read_record(a, &work[n]);
		if (n == WORK_MAX) {
			gt_totals_add(&SH.totals, SH.kernel, dev_end, work, n);
			n = 0;
		}
	}
	gt_totals_add(&SH.totals, SH.kernel, dev_end, work, n);
	if (cupti.num_dropped && cupti.num_dropped(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
		__atomic_store_n(&SH.cupti_dropped, SH.cupti_dropped + dropped, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&produce);
	munmap(buffer, BUFFER_SIZE);
}

static void CUPTIAPI no_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId id,
				 const void *data)
{
}

/* ---- setting up and tearing down (the library's thread) ---------------------------------- */

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* This thread's TracerPid: gputop's pid as the program's /proc names it, 0 when untraced or
 * when gputop is in no PID namespace of that /proc's (a container seen from the node); -1
 * when it cannot be read. */
static int tracer_pid(void)
{
	char buf[2048];
	int fd = open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);	/* no stdio: no malloc */
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	const char *p = strstr(buf, "\nTracerPid:");
	return p ? atoi(p + 11) : -1;
}

/* ---- the threads CUPTI makes ------------------------------------------------------------- */

/* The process's threads before libcupti was loaded: a thread not among them after
 * cuptiFinalize may still run CUPTI's code, and libcupti is then not unloaded. Read with
 * getdents64, not opendir: no malloc in this thread. */
#define MAX_TIDS 8192
static pid_t before[MAX_TIDS];
static int n_before;

/* Calls fn(tid) for each thread of the process; the number of threads, or -1. */
static int each_thread(void (*fn)(pid_t tid, void *arg), void *arg)
{
	char buf[8192];
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0;
	if (fd < 0)
		return -1;
	for (long got; (got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0;)
		for (long off = 0; off < got;) {
			struct { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; }
				*d = (void *)(buf + off);
			if (d->name[0] != '.') {
				fn((pid_t)atoi(d->name), arg);
				n++;
			}
			off += d->reclen;
		}
	close(fd);
	return n;
}

static void note_before(pid_t tid, void *arg)
{
	if (n_before < MAX_TIDS)
		before[n_before++] = tid;
}

static void count_new(pid_t tid, void *arg)
{
	if (tid == (pid_t)syscall(SYS_gettid))
		return;
	for (int i = 0; i < n_before; i++)
		if (before[i] == tid)
			return;
	(*(int *)arg)++;
}

/* Whether every thread made since libcupti was loaded has ended (waiting up to limit_ms). A
 * thread the program made meanwhile counts too: then CUPTI stays, which is the safe side. */
static bool new_threads_gone(long limit_ms)
{
	for (long waited = 0;; waited += 10) {
		int fresh = 0;
		if (each_thread(count_new, &fresh) < 0 || n_before == MAX_TIDS)
			return false;
		if (!fresh)
			return true;
		if (waited >= limit_ms)
			return false;
		nap_ms(10);
	}
}

static int find_cupti(void)
{
	each_thread(note_before, NULL);
	cupti_theirs = (cupti.lib = dlopen(cupti_path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) != NULL;
	if (!cupti.lib && !(cupti.lib = dlopen(cupti_path, RTLD_NOW | RTLD_LOCAL))) {
		const char *e = dlerror();
		fail(GT_ERR_CUPTI_OPEN, e ? e : cupti_path, 0);
		return -1;
	}
#define FIND(field, name) \
	if (!(cupti.field = dlsym(cupti.lib, name))) { fail(GT_ERR_CUPTI_SYMBOL, name, 0); return -1; }
	FIND(subscribe, "cuptiSubscribe");
	FIND(unsubscribe, "cuptiUnsubscribe");
	FIND(register_callbacks, "cuptiActivityRegisterCallbacks");
	FIND(enable, "cuptiActivityEnable");
	FIND(disable, "cuptiActivityDisable");
	FIND(flush_all, "cuptiActivityFlushAll");
	FIND(flush_period, "cuptiActivityFlushPeriod");
	FIND(next_record, "cuptiActivityGetNextRecord");
#undef FIND
	cupti.subscribe_v2 = dlsym(cupti.lib, "cuptiSubscribe_v2");
	cupti.finalize = dlsym(cupti.lib, "cuptiFinalize");
	cupti.result_string = dlsym(cupti.lib, "cuptiGetResultString");
	cupti.num_dropped = dlsym(cupti.lib, "cuptiActivityGetNumDroppedRecords");
	return 0;
}

static int subscribe(void)
{
	CUptiResult res;
	char other[sizeof SH.message] = "";	/* at least CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN */
	if (cupti.subscribe_v2) {
		CUpti_SubscriberParams p = { .structSize = CUpti_SubscriberParams_STRUCT_SIZE,
					     .subscriberName = "gputop --gpu-time",
					     .oldSubscriberName = other,
					     .oldSubscriberSize = sizeof other - 1 };
		res = cupti.subscribe_v2(&subscriber, no_callback, NULL, &p);
	} else {
		res = cupti.subscribe(&subscriber, no_callback, NULL);
	}
	if (res == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		fail(GT_ERR_SUBSCRIBER, other, res);
		return -1;
	}
	if (res != CUPTI_SUCCESS) {
		fail_call("cuptiSubscribe", res);
		return -1;
	}
	return 0;
}

static int enable(void)
{
	CUptiResult res = cupti.register_callbacks(buffer_requested, buffer_completed);
	if (res != CUPTI_SUCCESS) {
		fail_call("cuptiActivityRegisterCallbacks", res);
		return -1;
	}
	for (size_t i = 0; i < N_KINDS; i++)
		if ((res = cupti.enable(kinds[i])) != CUPTI_SUCCESS) {
			fail_call("cuptiActivityEnable", res);
			return -1;
		}
	/* Records come while the program runs, not only when CUPTI's buffers fill. */
	if ((res = cupti.flush_period(flush_ms)) != CUPTI_SUCCESS) {
		fail_call("cuptiActivityFlushPeriod", res);
		return -1;
	}
	return 0;
}

/* Flush what CUPTI holds, then nothing more: every kind off, our subscription gone, CUPTI
 * finalized (CUPTI's "detach": it then leaves the driver alone; the CUPTI documentation asks
 * for buffers flushed first, done here, and no other CUPTI user racing us, which the subscription
 * guaranteed). Without cuptiFinalize libcupti stays loaded, disabled, and so do we: CUPTI keeps
 * our callbacks. A CUPTI that refused us was never set up, so never finalized: it stays too.
 * CUDA 13.0's, refusing, leaves thread-specific data in this thread whose destructor is its
 * code, run when this thread ends: unloaded, that killed the program (SIGSEGV). */
static void teardown(bool subscribed, bool enabled)
{
	__atomic_store_n(&stopping, true, __ATOMIC_RELEASE);
	if (enabled) {
		cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		for (size_t i = 0; i < N_KINDS; i++)
			cupti.disable(kinds[i]);
		cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		cupti.flush_period(0);
	}
	if (subscribed)
		cupti.unsubscribe(subscriber);
	/* Finalized only if it was ours to (another subscriber's CUPTI is left alone); unloaded
	 * only once no thread made since it was loaded runs, whoever made it. */
	if (subscribed && (!cupti.finalize || cupti.finalize() != CUPTI_SUCCESS))
		SH.cupti_kept = GT_KEPT_FINALIZE;
	else if (!subscribed && cupti.lib && !cupti_theirs)
		SH.cupti_kept = GT_KEPT_UNFINALIZED;
	if (cupti.lib && !SH.cupti_kept && !new_threads_gone(2000))
		SH.cupti_kept = GT_KEPT_THREAD;
}

#define BEAT_LOST_MS 10000	/* gputop's looks come every 10 ms; a gputop stopped (SIGSTOP)
				 * that long is taken for gone where TracerPid cannot tell */
static bool tracer_named;	/* TracerPid named gputop when the thread started */
static uint64_t last_beat;
static long beat_quiet_ms;	/* waited since last_beat was new (naps: no clock to ask) */

/* gputop is still there: this thread is traced (by gputop, which traces every thread), as
 * TracerPid says where it can; elsewhere, gputop's looks (its beat) went on within the last
 * BEAT_LOST_MS. waited_ms: how long this thread waited since it last asked. */
static bool traced(long waited_ms)
{
	if (tracer_named)
		return tracer_pid() != 0;
	uint64_t beat = __atomic_load_n(&SH.beat, __ATOMIC_ACQUIRE);
	beat_quiet_ms = beat != last_beat ? 0 : beat_quiet_ms + waited_ms;
	last_beat = beat;
	return beat_quiet_ms < BEAT_LOST_MS;
}

/* Waits for gputop's word (stop or released) while gputop is there, at most limit_ms
 * (0: no limit). False: gputop went away or the time ran out. */
static bool wait_for(const uint32_t *word, long limit_ms)
{
	for (long waited = 0; !__atomic_load_n(word, __ATOMIC_ACQUIRE); waited += 10) {
		if (limit_ms && waited >= limit_ms)
			return false;
		if (waited % 250 == 0 && !traced(waited ? 250 : 0))
			return false;
		nap_ms(10);
	}
	return true;
}

/* The program exits: what CUPTI still holds goes into the totals, which gputop reads at the
 * exiting threads' last stop (registered last, this runs before the CUDA runtime's own exit
 * handlers). After a stop, or run by dlclose, it does nothing. */
static pid_t started_in;	/* a child forked meanwhile has a copy of us, CUPTI not its own */

static void at_exit(void)
{
	if (__atomic_load_n(&SH.state, __ATOMIC_ACQUIRE) == GT_RUNNING && !__atomic_load_n(&stopping, __ATOMIC_ACQUIRE) &&
	    cupti.flush_all && getpid() == started_in)
		cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

struct closing { void *handle, *dlclose_fn; };

/* The thread's work; returns what gt_thread_entry tail-calls: dlclose(self). */
HIDDEN struct closing gt_thread_main(void)
{
	pthread_setname_np(pthread_self(), "gputop-gpu");
	SH.helper_tid = (uint32_t)syscall(SYS_gettid);
	tracer_named = tracer_pid() != 0;	/* traced now: gputop made this thread run */
	bool subscribed = false, enabled = false;
	atexit(at_exit);
	if (find_cupti() == 0 && subscribe() == 0) {
		subscribed = true;
		enabled = true;	/* a failed enable is undone as a whole */
		if (enable() == 0 && !__atomic_load_n(&SH.stop, __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&SH.state, GT_RUNNING, __ATOMIC_RELEASE);
			if (!wait_for(&SH.stop, 0) && !SH.status)
				fail(GT_ERR_TRACER_GONE, "gputop went away", 0);
		}
	}
	teardown(subscribed, enabled);
	__atomic_store_n(&SH.state, GT_FINAL, __ATOMIC_RELEASE);
	wait_for(&SH.released, 10000);	/* gputop reads the last records and the status */
	__atomic_store_n(&SH.state, GT_UNLOADING, __ATOMIC_RELEASE);
	if (SH.cupti_kept)	/* CUPTI stays, and may hold our callbacks: we stay too, idle */
		return (struct closing){ NULL, NULL };
	if (cupti.lib)
		dlclose(cupti.lib);
	return (struct closing){ self, (void *)dlclose };
}

/* The thread's start: gt_thread_main, then a jump (not a call) to dlclose(self), which
 * returns straight to glibc's start_thread with our frame gone: the thread ends normally, and
 * no instruction of ours runs once dlclose has unmapped us. */
HIDDEN void *gt_thread_entry(void *arg);
__asm__(".text\n"
	".type gt_thread_entry, @function\n"
	"gt_thread_entry:\n"
	"	sub $8, %rsp\n"		/* 16-byte aligned for the call */
	"	call gt_thread_main\n"	/* rax: handle, rdx: dlclose */
	"	add $8, %rsp\n"		/* as at entry: start_thread's return address on top */
	"	test %rax, %rax\n"
	"	jz 1f\n"
	"	mov %rax, %rdi\n"
	"	jmp *%rdx\n"
	"1:	xor %eax, %eax\n"
	"	ret\n"
	".size gt_thread_entry, .-gt_thread_entry\n");

/* Called by gputop in a thread it holds at the entry of execve: what CUPTI holds goes into
 * the totals now, for gputop to read before the image, and they with it, are gone. */
EXPORT void gputop_gpu_flush(void)
{
	at_exit();
}

/* Called by gputop in a thread it holds at a CUDA API entry: copies the arguments and starts
 * the library's thread, every signal blocked in it (and so in the threads CUPTI makes from it):
 * the program's signals go to the program's threads, as before. Returns 0, or GT_ERR_THREAD,
 * GT_ERR_FORKED, GT_ERR_STAYED.
 * gputop then waits for state GT_RUNNING or GT_FINAL, holding that thread only. */
EXPORT int gputop_gpu_start(const char *path, uint32_t period_ms, void *handle)
{
	if (started_in)	/* a fork's copy of us, or a copy an earlier session left loaded */
		return started_in == getpid() ? GT_ERR_STAYED : GT_ERR_FORKED;
	snprintf(cupti_path, sizeof cupti_path, "%s", path);
	flush_ms = period_ms;
	self = handle;
	started_in = getpid();
	SH.version = GT_VERSION;
	SH.size = sizeof SH;
	SH.magic = GT_MAGIC;
	SH.state = GT_STARTING;
	sigset_t all, old;
	sigfillset(&all);
	pthread_attr_t attr;
	pthread_t th;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&th, &attr, gt_thread_entry, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		fail(GT_ERR_THREAD, strerror(err), 0);
		SH.state = GT_FINAL;
		return GT_ERR_THREAD;
	}
	return 0;
}
