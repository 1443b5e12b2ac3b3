/* budget.h — --max-overhead: keeps the time the program spends stopped by gputop under a share
 * of its run time. Launch probes are armed for only part of each period and what they count
 * is extrapolated (and marked as an estimate); allocation, free, copy and synchronize probes
 * stay armed, so memory figures stay exact: a leak is never an estimate. */
#ifndef GPUTOP_BUDGET_H
#define GPUTOP_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

struct tracee;

/* stop_cpu_ns: the CPU time one stop costs the stopped thread (kernel trap and stop);
 * cpu_ns: the CPU time the program's threads have used so far, in ns. */
void budget_init(double max_overhead_pct, uint64_t stop_cost_ns, uint64_t stop_cpu_ns,
		 uint64_t (*cpu_ns)(struct tracee *p));
bool budget_active(void);
double budget_share(void);	/* the budget as a share of run time, 0 without --max-overhead */
/* Called by the tracer on every pass of its loop for process p: its stops so far; the launches
 * it extrapolates are those of its figures (stats.h), its launch probes those it arms. */
void budget_poll(struct tracee *p, uint64_t now_ns);
/* What a stop was for: a launch, another call that does work (allocation, copy,
 * synchronize...: the program's pace), or bookkeeping (kernel names, the dynamic linker). */
enum budget_stop { STOP_LAUNCH, STOP_WORK, STOP_OTHER };
/* Called for each stop: how long gputop held the program (trap to resume, as far as the
 * tracer sees it) and what it was for. */
void budget_on_stop(uint64_t held_ns, enum budget_stop what);
/* The session ends: extrapolate the last, partial period. */
void budget_finish(struct tracee *p, uint64_t now_ns);

#endif
