/* seccomp_watch.c — the stubs' park and --gpu-time kept within what the process's seccomp
 * filters allow (seccomp_watch.h). Only reads (/proc, the filters through ptrace) and the
 * ring's `present` word; a thread is stopped for a look only where its filters can be read and
 * only once per change. */
#define _GNU_SOURCE
#include "seccomp_watch.h"

#include <string.h>
#include <sys/ptrace.h>

#include "launchring.h"
#include "log.h"
#include "seccomp.h"
#include "threads.h"
#include "tracee.h"

enum parks {
	PARKS_UNSEEN,	/* the ring is new: its threads not looked at yet (present 0, probes.c) */
	PARKS_ON,	/* every thread shown to let the stubs park */
	PARKS_HELD,	/* a thread is being looked at: no park until then */
	PARKS_OFF,	/* a thread's filter refuses them (or cannot be shown): never again */
};


/* The stubs may park, or not: the ring's `present` word (a dead or detaching gputop's is 0). */
static void parks_allow(struct tracee *p, bool on)
{
	uint64_t flag = launchring_present_flag(p), v = on;
	if (flag && launchring_io(p, flag, &v, sizeof v, true) < 0)
		log_debug("%d: cannot write the ring's present word", p->pid);
}

static void parks_never(struct tracee *p, const struct seccomp_refusal *why, enum seccomp_verdict v)
{
	char text[320];
	p->parks = PARKS_OFF;
	parks_allow(p, false);
	seccomp_refusal_describe(why, text, sizeof text);
	log_warn("%d: %s%s, a call of %s: the stubs park no more in %d (a kernel launched for the "
		 "first time is counted and named only where its loading named it; --stacks takes no "
		 "stack at such calls; a full ring drops and counts at once)", p->pid, text,
		 v == SECCOMP_UNKNOWN ? " (--trust-seccomp parks anyway)" : "",
		 seccomp_feature_calls(SECCOMP_PARK)->what, p->pid);
}

/* t's filters let it park? Records it (t->seccomp_ok) when they do. */
static enum seccomp_verdict look(struct thread *t, const struct seccomp_state *s, struct seccomp_refusal *why)
{
	int filters = s->mode <= 0 ? 0 : s->filters;
	enum seccomp_verdict v = seccomp_feature_verdict(t->tid, SECCOMP_PARK, s, why);
	if (v == SECCOMP_UNKNOWN && seccomp_trusted())
		v = SECCOMP_ALLOWED;
	if (v == SECCOMP_ALLOWED)
		t->seccomp_ok = (int16_t)(filters + 1);
	return v;
}

/* Every thread looked at (all), or, on the sweep, only those that ran since the last look (a
 * filter is installed by a thread that runs: a thread that did not run is under the filters it
 * was shown to park under), then every thread if one of them has other filters now (a filter
 * installed with SECCOMP_FILTER_FLAG_TSYNC is every thread's), or if a thread went since the
 * last look (the one that installed it). */
static void review(struct tracee *p, uint64_t now, bool all)
{
	uint64_t ring = launchring_base(p);
	if (p->parks_ring != ring) {	/* a new ring (a new image): looked at again */
		p->parks_ring = ring;
		p->parks = PARKS_UNSEEN;
	}
	if (!ring || p->parks == PARKS_OFF)
		return;
	p->seccomp_swept_ns = now;
	if (p->seccomp_removed != threads_removed(p))
		all = true;
	p->seccomp_removed = threads_removed(p);
	/* Filter counts some thread was shown to park under: a new thread under as many inherited
	 * its maker's (a filter installed since shows as one more there). */
	uint64_t shown = 0;
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(p, &it));)
		if (t->seccomp_ok > 0 && t->seccomp_ok <= 64)
			shown |= 1ull << (t->seccomp_ok - 1);
	bool held = false;
	it = 0;
	for (struct thread *t; (t = threads_iter(p, &it));) {
		struct seccomp_state s;
		struct seccomp_refusal why;
		if (t->guest)
			continue;
		/* Its run time before its filters: a filter installed after this read ran after it. */
		if (!threads_ran(t) && !all && t->seccomp_ok > 0)
			continue;	/* did not run since the last look */
		if (seccomp_thread_state_of(t, &s) < 0)
			continue;	/* gone: its exit is on its way */
		int filters = s.mode <= 0 ? 0 : s.filters;
		if (s.mode != 1 && t->seccomp_ok == filters + 1)
			continue;
		if (!all && t->seccomp_ok > 0) {	/* other filters now: maybe every thread's */
			all = true;
			held = false;
			it = 0;
			continue;
		}
		if (s.mode != 1 && t->seccomp_ok == 0 && filters < 64 && (shown >> filters & 1)) {
			t->seccomp_ok = (int16_t)(filters + 1);
			continue;
		}
		enum seccomp_verdict v = look(t, &s, &why);
		if (v == SECCOMP_REFUSED || (v == SECCOMP_UNKNOWN &&
					     (t->state == TS_STOPPED || !seccomp_own_can_read_filters()))) {
			parks_never(p, &why, v);
			return;
		}
		if (v == SECCOMP_UNKNOWN) {	/* readable once held: asked to stop for a look */
			if (!t->seccomp_asked && ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) == 0)
				t->seccomp_asked = true;
			held = true;
		} else if (filters < 64) {
			shown |= 1ull << filters;
		}
	}
	enum parks now_parks = held ? PARKS_HELD : PARKS_ON;
	if (now_parks != p->parks)
		parks_allow(p, now_parks == PARKS_ON);
	p->parks = now_parks;
}

void seccomp_watch_review(struct tracee *p, uint64_t now)
{
	review(p, now, true);
}

void seccomp_watch_sweep(struct tracee *p, uint64_t now)
{
	if (p->stopping_world)
		return;	/* held for a detach (or a set-up, which looks itself) */
	if (p->parks_ring != launchring_base(p) || p->parks == PARKS_UNSEEN) {
		review(p, now, true);
	} else if (p->parks != PARKS_OFF && now - p->seccomp_swept_ns >= SECCOMP_WATCH_SWEEP_NS) {
		/* Every thread read every SECCOMP_WATCH_ALL_EVERY sweeps all the same: a thread
		 * whose run time does not show (a CPU without ticks, no schedstat) is seen then. */
		review(p, now, ++p->seccomp_sweeps % SECCOMP_WATCH_ALL_EVERY == 0);
	}
}

void seccomp_watch_on_stop(struct tracee *p, struct thread *t, uint64_t now)
{
	bool asked = t->seccomp_asked;
	t->seccomp_asked = false;
	if ((!asked && t->seccomp_ok) || !launchring_base(p) || p->parks == PARKS_OFF ||
	    p->parks_ring != launchring_base(p) || p->stopping_world)
		return;
	struct seccomp_state s;
	struct seccomp_refusal why;
	if (seccomp_thread_state_of(t, &s) < 0)
		return;
	enum seccomp_verdict v = look(t, &s, &why);
	if (v != SECCOMP_ALLOWED)
		parks_never(p, &why, v);
	else if (p->parks == PARKS_HELD)
		seccomp_watch_review(p, now);	/* the last one looked at? parks again */
}

int seccomp_watch_gpu_time(struct tracee *p, struct thread *t)
{
	struct seccomp_refusal why;
	enum seccomp_verdict v = seccomp_feature_verdict(t->tid, SECCOMP_GPU_TIME, NULL, &why);
	if (v == SECCOMP_ALLOWED)
		return 0;
	if (v == SECCOMP_UNKNOWN && seccomp_trusted()) {
		log_warn("--trust-seccomp: loading --gpu-time's library into %d under a seccomp filter gputop "
			 "cannot read", p->pid);
		return 0;
	}
	char text[320];
	seccomp_refusal_describe(&why, text, sizeof text);
	log_error("--gpu-time: not loading gputop's library and CUPTI into %d: %s, a call of %s: no GPU "
		  "time for %d", p->pid, text, seccomp_feature_calls(SECCOMP_GPU_TIME)->what, p->pid);
	if (v == SECCOMP_UNKNOWN)
		log_hint("--trust-seccomp loads them anyway (a filter that kills one of their calls then "
			 "kills the program)");
	return -1;
}
