/* seccomp_watch.h — what gputop makes a traced process run beyond the injected calls, kept
 * within what its seccomp filters allow (probe/seccomp.h, the table in seccomp_calls.h):
 *   - the stubs' park (gettid, futex): allowed only while every thread of the process is shown
 *     to allow it; its threads are looked at when the ring is made, at each new thread's first
 *     stop (a filter installed before a thread is made is seen before that thread runs), and
 *     every SECCOMP_WATCH_SWEEP_NS (a filter a thread installs later: seen within that time;
 *     the threads that ran since, every thread every SECCOMP_WATCH_ALL_EVERY sweeps).
 *     Until a thread is shown, or for good once one is shown to refuse, the stubs do not park
 *     (the ring's `present` word at 0: a kernel's first launch is counted and goes on, named
 *     only where its loading named it; --stacks takes no stack at such calls);
 *   - --gpu-time's loading: refused for a process whose loading thread's filter refuses a call
 *     of it (said; no GPU time there; gputop's exit status in attach mode is 9). */
#ifndef GPUTOP_SECCOMP_WATCH_H
#define GPUTOP_SECCOMP_WATCH_H

#include <stdbool.h>
#include <stdint.h>

struct thread;
struct tracee;

#define SECCOMP_WATCH_SWEEP_NS 100000000ull
#define SECCOMP_WATCH_ALL_EVERY 10	/* sweeps: those that read every thread, not only those that ran */

/* p's threads looked at now (after its probes were planted: the ring may be
 * new), parks allowed or held. */
void seccomp_watch_review(struct tracee *p, uint64_t now);
/* Each drain: a review when due (a new ring, or SECCOMP_WATCH_SWEEP_NS since the last). */
void seccomp_watch_sweep(struct tracee *p, uint64_t now);
/* At an event stop of t: a thread not looked at yet (a new one) or asked to stop for a look is
 * looked at while it is held. The caller lets it go as before. */
void seccomp_watch_on_stop(struct tracee *p, struct thread *t, uint64_t now);
/* Before --gpu-time loads into the process through the held thread t: 0 to go on, or -1 after
 * saying why not. */
int seccomp_watch_gpu_time(struct tracee *p, struct thread *t);

#endif
