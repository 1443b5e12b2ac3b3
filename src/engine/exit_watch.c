/* exit_watch.c — which threads stop at their exit (PTRACE_EVENT_EXIT), and when.
 *
 * An exit stop is the last moment the figures the stubs keep in the program can be read: an
 * exit_group takes the memory with it. So the group leader, which an exit_group always brings
 * to its exit, stops there. Other threads do not: one that ends alone would wait in its exit
 * stop for a frozen gputop, and so would whoever joins it (pthread_join waited for a SIGSTOPped
 * gputop). What a thread did just before its end stays in the program's memory for the
 * leader's exit; only its last CPU figure since gputop last looked is lost (--max-overhead's
 * detail). Clones inherit their creator's options: a new thread's are set at its first stop.
 *
 * A leader that leaves before the others (pthread_exit from main) would leave no exit stop to
 * come: at its exit stop every thread left is interrupted and set to stop at its exit, the last
 * one's stop then being the last look. A thread that ends without an exit stop is drained at
 * its end (tracee_ctl.c), while the others keep the memory. */
#define _GNU_SOURCE
#include "exit_watch.h"

#include <sys/ptrace.h>

#include "budget.h"
#include "retfast.h"
#include "threads.h"
#include "tracee.h"
#include "tracer_internal.h"

/* Whether anything is read at an exit stop: the budget's CPU figures, the call stub's figures. */
static bool wanted(const struct tracee *p)
{
	return budget_active() || retfast_ready(p);
}

static bool stops_at_exit(const struct tracee *p, const struct thread *t)
{
	return p->exit_stops == EXIT_STOPS_ALL || (p->exit_stops == EXIT_STOPS_LEADER && t->tid == p->pid);
}

static void set_options(const struct tracee *p, struct thread *t)
{
	long opts = TRACER_PTRACE_OPTIONS | (stops_at_exit(p, t) ? PTRACE_O_TRACEEXIT : 0);
	ptrace(PTRACE_SETOPTIONS, t->tid, 0, (void *)opts);
	t->options_set = true;
}

void exit_watch_start(struct tracee *p)
{
	if (!wanted(p))
		return;
	p->exit_stops = EXIT_STOPS_LEADER;
	uint32_t it = 0;
	for (struct thread *t; (t = threads_iter(p, &it));)
		if (t->state == TS_STOPPED)
			set_options(p, t);
}

void exit_watch_first_stop(struct tracee *p, struct thread *t)
{
	if (!t->options_set)
		set_options(p, t);
}

void exit_watch_on_exit(struct tracee *p, struct thread *t)
{
	if (t->tid != p->pid || p->exit_stops != EXIT_STOPS_LEADER || threads_count_all(p) <= 1)
		return;
	/* Each of the others is set at its next stop, which an interrupt brings at once; the
	 * leader is not held for them (an exec in another thread waits for the leader's end). */
	p->exit_stops = EXIT_STOPS_ALL;
	uint32_t it = 0;
	for (struct thread *o; (o = threads_iter(p, &it));) {
		if (o == t || o->guest)
			continue;
		o->options_set = false;
		if (o->state == TS_STOPPED)
			set_options(p, o);
		else
			ptrace(PTRACE_INTERRUPT, o->tid, 0, 0);
	}
}
