/* gputime.c — --gpu-time's life in a traced process (gputime.h).
 *
 * Loading: dlopen may take the dynamic linker's lock and malloc's, so it is called only where
 * the thread surely holds neither, nor a CUDA lock: stopped at the entry of a CUDA call of the
 * program's own (hit_take_top_entry), where gputop already calls the driver to name kernels.
 * There it calls dlopen(libgputop-gpu.so), dlsym, and the library's start function, which only
 * starts the library's thread and returns; CUPTI is set up by that thread, with a stack of its
 * own, while gputop keeps holding the one thread (so that its call, a launch maybe, runs only
 * once CUPTI records) and lets every other thread run, handling their stops — the library's
 * thread's too: CUPTI may call probed functions, and its dlopen runs the dynamic linker's hook.
 * A program that is inside a call of its own to dlopen or a static constructor is never
 * interrupted for this: registration calls do not count as such an entry.
 *
 * Unloading: the library's thread does it itself when asked (or when it finds gputop gone:
 * its TracerPid is 0; where gputop is outside the program's PID namespace, which TracerPid
 * shows as 0 always, gputop's beat, counted at each look, stood still 10 s), so that no
 * thread of the program has to be stopped in an unknown state
 * for it: flush, disable, unsubscribe, finalize; gputop reads the last totals and says so;
 * the thread dlcloses libcupti and then the library. */
#define _GNU_SOURCE
#include "gputime.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "gputime_find.h"
#include "gputime_ring.h"
#include "hit.h"
#include "hit_drain.h"
#include "log.h"
#include "memory.h"
#include "seccomp_watch.h"
#include "stats.h"
#include "symbols.h"
#include "threads.h"
#include "tracee.h"
#include "tracee_ctl.h"
#include "tracer_internal.h"
#include "xol.h"

#define FLUSH_PERIOD_MS 100	/* CUPTI hands records over at least this often */
#define START_WAIT_NS 15000000000ull	/* CUPTI's set-up: loading a 100 MB library included */
#define STOP_WAIT_NS 10000000000ull
#define CUPTI_INSUFFICIENT_PRIVILEGES 35	/* CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (cupti_result.h) */

static struct {
	char lib_path[PATH_MAX];	/* set once */
	bool refused;		/* a seccomp filter refused it somewhere: gputop's exit status says so */
} gpu_time;	/* gputop-wide */

void gputime_enable(const char *lib)
{
	snprintf(gpu_time.lib_path, sizeof gpu_time.lib_path, "%s", lib);
}

void gputime_forget(struct tracee *p)
{
	struct gputime_state *st = p->gputime;
	gputime_ring_free(st->ring);
	*st = (struct gputime_state){ .phase = GPUTIME_WAITING };
}

/* ---- loading ---------------------------------------------------------------------------- */

/* dlopen, dlsym, dlerror, dlclose of the program's C library (glibc 2.34+), else libdl's. */
struct dl_fns { uint64_t open, sym, error, close; };

static bool find_dl(struct tracee *p, struct dl_fns *dl)
{
	size_t cursor = 0;
	for (const struct module *m; (m = sym_module_next(p, &cursor));) {
		if (strncmp(m->base, "libc.so", 7) != 0 && strncmp(m->base, "libdl.so", 8) != 0)
			continue;
		struct dl_fns f = { sym_find(m, "dlopen"), sym_find(m, "dlsym"), sym_find(m, "dlerror"),
				    sym_find(m, "dlclose") };
		if (f.open && f.sym && f.close) {
			*dl = f;
			if (strncmp(m->base, "libc.so", 7) == 0)
				return true;
		}
	}
	return dl->open != 0;
}

static int call(struct tracee *p, struct thread *t, uint64_t fn, uint64_t a, uint64_t b, uint64_t c, uint64_t *ret)
{
	uint64_t args[6] = { a, b, c, 0, 0, 0 };
	return xol_call(p, t, fn, args, ret, NULL);
}

/* Scratch layout: the strings the calls take (paths up to PATH_MAX, 4096 bytes). */
#define AT_LIB 0
#define AT_CUPTI 4096
#define AT_START 8192
#define AT_SHARED 8256
#define AT_FLUSH 8320
_Static_assert(AT_FLUSH + 64 <= XOL_SCRATCH_SIZE && PATH_MAX <= 4096, "the strings fit the scratch");

static int write_str(pid_t tid, uint64_t at, const char *s)
{
	return mem_write(tid, at, s, strlen(s) + 1);
}

/* dlopen's complaint, read from the program. */
static void say_dlerror(struct tracee *p, struct thread *t, const struct dl_fns *dl)
{
	uint64_t msg = 0;
	char text[512] = "(no message)";
	if (dl->error && call(p, t, dl->error, 0, 0, 0, &msg) == 0 && msg)
		mem_read_string(t->tid, msg, text, sizeof text);
	log_warn("--gpu-time: %d could not load %s: %s: no GPU time", p->pid, gpu_time.lib_path, text);
}

/* Loads the library and starts it; its handle and shared block, or -1 (said why). */
static int load(struct tracee *p, struct thread *t, const char *cupti, uint64_t *handle, uint64_t *shared, uint64_t *flush)
{
	struct dl_fns dl = { 0 };
	uint64_t scratch, start = 0, ret = 1;
	if (!find_dl(p, &dl)) {
		log_warn("--gpu-time: no dlopen in %d's C library: no GPU time", p->pid);
		return -1;
	}
	if (xol_scratch(p, t, &scratch) < 0 || write_str(t->tid, scratch + AT_LIB, gpu_time.lib_path) < 0 ||
	    write_str(t->tid, scratch + AT_START, "gputop_gpu_start") < 0 ||
	    write_str(t->tid, scratch + AT_SHARED, "gputop_gpu_shared") < 0 ||
	    write_str(t->tid, scratch + AT_FLUSH, "gputop_gpu_flush") < 0 ||
	    write_str(t->tid, scratch + AT_CUPTI, cupti) < 0 ||
	    call(p, t, dl.open, scratch + AT_LIB, RTLD_NOW | RTLD_LOCAL, 0, handle) < 0) {
		log_warn("--gpu-time: cannot call into %d: no GPU time", p->pid);
		return -1;
	}
	if (!*handle) {
		say_dlerror(p, t, &dl);
		return -1;
	}
	if (call(p, t, dl.sym, *handle, scratch + AT_START, 0, &start) < 0 || !start ||
	    call(p, t, dl.sym, *handle, scratch + AT_SHARED, 0, shared) < 0 || !*shared ||
	    call(p, t, dl.sym, *handle, scratch + AT_FLUSH, 0, flush) < 0 || !*flush ||
	    call(p, t, start, scratch + AT_CUPTI, FLUSH_PERIOD_MS, *handle, &ret) < 0 || (int)ret != 0) {
		if ((int)ret == GT_ERR_STAYED)
			log_warn("--gpu-time: %d still holds gputop's library and CUPTI from an earlier session, "
				 "idle (they could not be unloaded there): no GPU time", p->pid);
		else if ((int)ret != GT_ERR_FORKED)
			log_warn("--gpu-time: %s did not start in %d (%s): no GPU time", gpu_time.lib_path, p->pid,
				 (int)ret == GT_ERR_THREAD ? "it could not make its thread" : "not gputop's library?");
		else if (log_first("--gpu-time: forked"))	/* once a session: a program may fork many */
			log_info("--gpu-time: %d and other children forked from a process where CUPTI runs get no "
				 "GPU time (their CUPTI is their parent's copy)", p->pid);
		call(p, t, dl.close, *handle, 0, 0, &ret);
		return -1;
	}
	return 0;
}

/* Why the library stopped, said once. */
static void say_final(const struct gputime_header *h, pid_t pid)
{
	switch (h->status) {
	case GT_OK:
	case GT_ERR_TRACER_GONE:
		break;
	case GT_ERR_SUBSCRIBER:
		log_warn("--gpu-time: another CUPTI subscriber (torch.profiler, Nsight...) is present in %d%s%s: "
			 "no GPU time", pid, h->message[0] ? ": " : "", h->message);
		break;
	case GT_ERR_CUPTI_OPEN:
		log_warn("--gpu-time: %d could not load CUPTI: %s: no GPU time", pid, h->message);
		log_hint("GPUTOP_CUPTI=/path/to/libcupti.so.13 names the one to load");
		break;
	case GT_ERR_CUPTI_SYMBOL:
		log_warn("--gpu-time: the CUPTI found for %d lacks %s: no GPU time", pid, h->message);
		break;
	default:
		log_warn("--gpu-time: in %d, CUPTI said no: %s (%d): no GPU time", pid, h->message,
			 h->cupti_result);
		if (h->cupti_result == CUPTI_INSUFFICIENT_PRIVILEGES)
			log_hint("the driver may allow GPU profiling to administrators only "
				 "(NVreg_RestrictProfilingToAdminUsers=1): https://developer.nvidia.com/ERR_NVGPUCTRPERM");
	}
}

/* Why libcupti and gputop's library stay in the program, idle, if they do. */
static void say_kept(const struct gputime_header *h, pid_t pid)
{
	const char *why = h->cupti_kept == GT_KEPT_FINALIZE ? "cuptiFinalize is missing or failed"
			: h->cupti_kept == GT_KEPT_THREAD ? "a thread made since CUPTI was loaded still runs"
			: "CUPTI refused before it was set up, so it was never finalized, and a thread that "
			  "called it may still run its code at its exit";
	if (h->cupti_kept)
		log_warn("--gpu-time: libcupti and gputop's library stay loaded in %d, idle (every activity "
			 "kind off, no thread of gputop's): %s", pid, why);
}

/* The header's counters into the figures. */
static void note_counts(struct tracee *p, struct gputime_state *st, bool on)
{
	stats_set_gpu_time(p->stats_id, on, now_ns(), st->last.cupti_dropped,
			   gputime_ring_unnamed(st->ring));
}

/* Holding t, lets the others run until the library's thread says RUNNING or FINAL. */
static void wait_started(struct tracee *p, struct thread *t, struct gputime_state *st, const char *cupti)
{
	pid_t tid = t->tid;
	uint64_t deadline = now_ns() + START_WAIT_NS;
	while (gputime_ring_header(st->ring, &st->last) == 0 && st->last.state == GT_STARTING) {
		if (now_ns() > deadline || tracer_stop_signal()) {
			log_warn("--gpu-time: CUPTI did not start %s in %d: no GPU time (gputop's library "
				 "unloads itself once it is done)", tracer_stop_signal() ? "before gputop was told to go"
				 : "within 15 s", p->pid);
			gputime_ring_ask_stop(st->ring);
			gputime_ring_release(st->ring);
			st->phase = GPUTIME_DONE;
			return;
		}
		hit_drain(p, now_ns(), HIT_DRAIN_RECORDS);	/* the launch ring and call records: as the loop would */
		if (!tracee_dispatch_pending()) {
			struct timespec nap = { 0, 1000000 };
			nanosleep(&nap, NULL);
		}
		if (st->phase != GPUTIME_LOADING)
			return;	/* it ran exec meanwhile (gputime_forget): loaded again in the new image */
		if (!threads_find(p, tid)) {	/* the program ended meanwhile */
			st->phase = GPUTIME_DONE;
			return;
		}
	}
	if (st->last.state == GT_RUNNING) {
		st->phase = GPUTIME_ON;
		note_counts(p, st, true);
		log_info("--gpu-time: CUPTI records kernels, copies and memsets of %d (%s)", p->pid, cupti);
		return;
	}
	say_final(&st->last, p->pid);	/* it stopped at once (or vanished) */
	if (st->last.state == GT_FINAL)
		say_kept(&st->last, p->pid);
	gputime_ring_release(st->ring);
	st->phase = GPUTIME_DONE;
}

bool gputime_wants_stop(const struct tracee *p)
{
	return gpu_time.lib_path[0] && p->gputime->phase == GPUTIME_WAITING && xol_ready(p);
}

void gputime_at_stop(struct tracee *p, struct thread *t)
{
	struct gputime_state *st = p->gputime;
	if (!hit_take_top_entry(p, t) || !gpu_time.lib_path[0] || st->phase != GPUTIME_WAITING || !xol_ready(p))
		return;
	st->phase = GPUTIME_LOADING;
	char cupti[PATH_MAX];
	uint64_t handle = 0, shared = 0, flush = 0;
	int there = gputime_library_in(p->pid, gpu_time.lib_path);
	if (there < 0) {
		/* Its dlopen would find nothing, or another file (another gputop's library). */
		log_warn("--gpu-time: %s is %s in %d's file system (another mount namespace: a container?): "
			 "no GPU time", gpu_time.lib_path, there == -ESTALE ? "another file" : "not there", p->pid);
		st->phase = GPUTIME_DONE;
		return;
	}
	if (gputime_find_cupti(p->pid, cupti, sizeof cupti) < 0) {
		log_warn("--gpu-time: no libcupti found for %d (next to its CUDA libraries, in "
			 "/usr/local/cuda): no GPU time", p->pid);
		log_hint("GPUTOP_CUPTI=/path/to/libcupti.so.13 names the one to load");
		st->phase = GPUTIME_DONE;
		return;
	}
	if (seccomp_watch_gpu_time(p, t) < 0) {
		gpu_time.refused = true;
		st->phase = GPUTIME_DONE;
		return;
	}
	if (load(p, t, cupti, &handle, &shared, &flush) < 0 ||
	    !(st->ring = gputime_ring_new(p->pid, p->stats_id, shared))) {
		st->phase = GPUTIME_DONE;
		return;
	}
	st->handle = handle;
	st->flush = flush;
	log_debug("--gpu-time: %s loaded in %d, CUPTI %s", gpu_time.lib_path, p->pid, cupti);
	wait_started(p, t, st, cupti);
}

bool gputime_refused(void)
{
	return gpu_time.refused;
}

/* ---- reading and stopping --------------------------------------------------------------- */

void gputime_drain(struct tracee *p)
{
	struct gputime_state *st = p->gputime;
	if (st->phase != GPUTIME_ON)
		return;
	long n = gputime_ring_drain(st->ring);
	int err = gputime_ring_header(st->ring, &st->last);
	if (err < 0 || n < 0) {
		log_debug("--gpu-time: %d's totals are gone (%s)", p->pid, strerror(-(n < 0 ? (int)n : err)));
		st->phase = GPUTIME_DONE;	/* it went away by itself (gputop seemed gone to it) */
		note_counts(p, st, false);
		return;
	}
	gputime_ring_beat(st->ring);	/* gputop is there, where TracerPid cannot say so */
	if (st->last.state != GT_RUNNING) {	/* it stopped by itself: the last totals */
		gputime_ring_drain(st->ring);
		say_final(&st->last, p->pid);
		if (st->last.state == GT_FINAL)
			say_kept(&st->last, p->pid);
		gputime_ring_release(st->ring);
		st->phase = GPUTIME_DONE;
	}
	note_counts(p, st, st->phase == GPUTIME_ON);
}

void gputime_before_exec(struct tracee *p, struct thread *t)
{
	struct gputime_state *st = p->gputime;
	uint64_t ret;
	uint64_t args[6] = { 0 };
	if (st->phase != GPUTIME_ON || !st->flush)
		return;
	xol_call(p, t, st->flush, args, &ret, NULL);	/* CUPTI's buffers into the totals */
	gputime_drain(p);
}

/* One step of a process's stop: false once it is done (unloaded, or given up). */
static bool stop_step(struct tracee *p, struct gputime_state *st, uint64_t deadline)
{
	struct gputime_header h;
	int err = gputime_ring_header(st->ring, &h);
	if (err < 0) {
		note_counts(p, st, false);
		/* Unloaded; its thread, back in glibc, ends (its exit reaches the dispatcher). */
		pid_t helper = (pid_t)st->last.helper_tid;	/* gettid() there: the program's own id */
		return helper && threads_find_own(p, helper) && now_ns() < deadline;
	}
	st->last.helper_tid = h.helper_tid;
	gputime_ring_beat(st->ring);
	if (st->final_read && h.cupti_kept) {	/* both stay loaded: only its thread ends */
		pid_t helper = (pid_t)h.helper_tid;
		return helper && threads_find_own(p, helper) && now_ns() < deadline;
	}
	if (h.state == GT_FINAL && !st->final_read) {
		gputime_ring_drain(st->ring);	/* every record there will be */
		st->last = h;
		note_counts(p, st, false);
		say_kept(&h, p->pid);
		st->final_read = true;
		gputime_ring_release(st->ring);
	} else if (h.state == GT_RUNNING) {
		gputime_ring_drain(st->ring);
	}
	if (now_ns() > deadline) {
		log_warn("--gpu-time: gputop's library has not unloaded itself from %d yet; it does once "
			 "CUPTI lets its thread go", p->pid);
		return false;
	}
	return true;
}

void gputime_stop_all(void)
{
	uint32_t it = 0;
	int asked = 0;
	for (struct tracee *p; (p = tracee_next(&it));) {
		if (p->gputime->phase != GPUTIME_ON || p->exited)
			continue;
		gputime_ring_ask_stop(p->gputime->ring);
		asked++;
	}
	uint64_t deadline = now_ns() + STOP_WAIT_NS;
	while (asked) {
		asked = 0;
		it = 0;
		for (struct tracee *p; (p = tracee_next(&it));) {
			if (p->gputime->phase != GPUTIME_ON)
				continue;
			if (!p->exited && threads_count_all(p) > 0 && stop_step(p, p->gputime, deadline))
				asked++;
			else
				p->gputime->phase = GPUTIME_DONE;
		}
		if (asked && !tracee_dispatch_pending()) {	/* its dlclose stops at the linker's hook */
			struct timespec nap = { 0, 2000000 };
			nanosleep(&nap, NULL);
		}
	}
}
