/* libwatch.c — libraries loaded after the attach, found without the dynamic linker's hook.
 * Normally an int3 on _dl_debug_state tells gputop of every dlopen (probes.c). Under --no-int3
 * there is none, so the program's executable mappings are looked at every housekeeping tick
 * (100 ms): when they changed, every thread is brought to a stop and the new modules are
 * probed, as at an attach. A library that is loaded and called within the same 100 ms has
 * those first calls missed: the price of planting no int3. */
#define _GNU_SOURCE
#include "tracer_internal.h"
#include "hit.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "log.h"
#include "procfs.h"
#include "probes.h"
#include "seccomp_watch.h"
#include "session_state.h"
#include "threads.h"
#include "tracee.h"

/* Every thread stopped, the modules looked at again, every thread let go. */
static void refresh_held(struct tracee *p)
{
	if (tracee_stop_world(p) == 0 && tracer_settle_event_stops(p) == 0) {
		struct thread *t = tracer_injectable_thread(p);
		bool had_cuda = probes_cuda_seen(p);
		if (t) {
			probes_refresh(p, t);
			hit_quiet_launches(p);
		}
		if (!had_cuda && probes_cuda_seen(p))
			session_set_cuda_seen();
	}
	p->stopping_world = false;
	seccomp_watch_review(p, now_ns());	/* a ring made now: its threads, still held, looked at */
	tracee_release_world(p);
}

void libwatch_tick(struct tracee *p)
{
	if (!config.no_int3 || !p->set_up || p->exited || threads_count(p) == 0)
		return;
	uint64_t h = proc_exec_maps_hash(p->pid);
	if (!h || h == p->maps_hash)
		return;
	/* Against the mappings at the set-up (attach.c): a library loaded between the
	 * set-up and the first tick was missed when the first tick only took the picture. */
	p->maps_hash = h;
	log_debug("process %d: its executable mappings changed; looking for new libraries", p->pid);
	refresh_held(p);
}
