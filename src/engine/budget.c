/* budget.c — the overhead governor behind --max-overhead. Time is cut into periods; in each,
 * launch probes are armed for a share `duty` of it, chosen from the last period's figures so
 * that (stops × cost per stop) stays under the budget. At the end of a period the launches
 * counted while armed are extrapolated to the whole period at the program's own rate. */
#include "budget.h"

#include <math.h>
#include <stdlib.h>

#include "config.h"
#include "log.h"
#include "probes.h"
#include "stats.h"
#include "tracee.h"

#define PERIOD_NS 200000000ull	/* 5 periods a second: short enough to follow the program */
#define MIN_DUTY 0.02		/* never blind: always sample a little */

/* gputop-wide, not in struct tracee: --max-overhead is one budget for the session; the
 * launches it extrapolates are those of the figures (figures/stats) budget_poll names. The
 * program's CPU time and stops come in through budget_init's callback and budget_poll. */

/* Where a period started, and where its armed part ended. */
struct mark {
	uint64_t t, cpu, stops, launch_stops, work_stops;
};

static struct {
	bool active, armed;
	double share;		/* e.g. 0.05 for --max-overhead 5 */
	uint64_t calibrated_cost;	/* round trip of a stop, from xol_calibrate */
	uint64_t cpu_per_stop;	/* CPU the kernel charges a thread for one stop */
	uint64_t (*program_cpu)(struct tracee *p);
	double avg_held_ns;	/* tracer's own time per stop, averaged */
	double duty, fixed_duty;
	uint64_t last_stops, launch_stops, work_stops;
	/* Over recent armed time (older periods weigh less and less): launch stops and work
	 * stops (allocations, copies, synchronize calls: always armed, always exact). */
	double armed_launches, armed_works;
	struct mark start, disarm;	/* of the current period */
} budget = { .armed = true, .duty = 1.0, .fixed_duty = -1 };
#define DECAY 0.8	/* per period: the ratio follows the program within a second or so */
#define MIN_WORKS 20	/* fewer work stops than this while armed: rate by CPU time instead */

void budget_init(double max_overhead_pct, uint64_t stop_cost_ns, uint64_t stop_cpu_ns,
		 uint64_t (*cpu_ns)(struct tracee *p))
{
	budget.active = max_overhead_pct > 0;
	budget.share = max_overhead_pct / 100.0;
	budget.calibrated_cost = stop_cost_ns;
	budget.cpu_per_stop = stop_cpu_ns;
	budget.fixed_duty = config.duty;
	budget.program_cpu = cpu_ns;
}

bool budget_active(void)
{
	return budget.active;
}

double budget_share(void)
{
	return budget.active ? budget.share : 0;
}

void budget_on_stop(uint64_t held_ns, enum budget_stop what)
{
	budget.avg_held_ns = budget.avg_held_ns ? budget.avg_held_ns * 0.99 + (double)held_ns * 0.01 : (double)held_ns;
	if (what == STOP_LAUNCH)
		budget.launch_stops++;
	else if (what == STOP_WORK)
		budget.work_stops++;
}

static struct mark mark_now(struct tracee *p, uint64_t now)
{
	return (struct mark){ now, budget.program_cpu(p), budget.last_stops, budget.launch_stops, budget.work_stops };
}

static void set_armed(struct tracee *p, bool on, uint64_t now)
{
	if (budget.armed && !on)
		budget.disarm = mark_now(p, now);
	if (budget.armed != on)
		probes_set_launches_armed(p, on);
	budget.armed = on;
}

/* The program's own CPU time between two marks: its threads' CPU time less what the kernel
 * charged them for our stops. A thread held in a stop uses no CPU, so this is the work the
 * program did, whatever our stops did to its wall-clock speed. */
static double own_cpu(const struct mark *a, const struct mark *b)
{
	double cpu = (double)(b->cpu - a->cpu) - (double)(b->stops - a->stops) * (double)budget.cpu_per_stop;
	double floor = 0.25 * (double)(b->cpu - a->cpu);	/* bound the error of the charge */
	return cpu > floor ? cpu : floor;
}

static double others(const struct mark *a, const struct mark *b)
{
	return (double)(b->stops - a->stops) - (double)(b->launch_stops - a->launch_stops);
}

static double works(const struct mark *a, const struct mark *b)
{
	return (double)(b->work_stops - a->work_stops);
}

/* How many launches the disarmed part of the period would have counted. A program's launches
 * keep step with its other CUDA work (a training step: its launches, a memset, a copy...), so
 * where there is enough of that, launches per work stop while armed, times the work stops
 * while disarmed. Otherwise launches per CPU-second of the program while armed, times its CPU
 * time while disarmed. */
static double launches_missed(const struct mark *armed_end, const struct mark *end)
{
	double counted = (double)(armed_end->launch_stops - budget.start.launch_stops);
	budget.armed_launches = budget.armed_launches * DECAY + counted;
	budget.armed_works = budget.armed_works * DECAY + works(&budget.start, armed_end);
	if (budget.armed || budget.armed_launches <= 0)
		return 0;
	if (budget.armed_works >= MIN_WORKS)
		return works(&budget.disarm, end) * budget.armed_launches / budget.armed_works;
	double armed_own = own_cpu(&budget.start, armed_end);
	return counted > 0 && armed_own > 0 ? counted * own_cpu(&budget.disarm, end) / armed_own : 0;
}

static void end_period(struct tracee *p, uint64_t now)
{
	int proc = p->stats_id;
	struct mark end = mark_now(p, now);
	const struct mark *armed_end = budget.armed ? &end : &budget.disarm;
	double counted = (double)(armed_end->launch_stops - budget.start.launch_stops);
	double missed = launches_missed(armed_end, &end);
	double factor = counted > 0 ? 1 + missed / counted : 1.0;
	stats_extrapolate_launches(proc, factor);
	if (factor != 1.0)
		stats_set_launches_estimated(proc, true);	/* the one flag: every presenter reads it */

	/* Next duty: what would arming all period cost? Launch stops scale with armed time;
	 * the other stops happen anyway. */
	double len = (double)(now - budget.start.t);
	double armed_len = (double)(armed_end->t - budget.start.t);
	double cost = (double)budget.calibrated_cost + budget.avg_held_ns;
	double other = others(&budget.start, &end);
	/* Aim at 80% of the budget: a stop also costs the program caches and wake-ups our
	 * per-stop figure does not see (on the H100, +5% measured where 5% was planned). */
	double allowed = 0.8 * budget.share * len / cost - (other > 0 ? other : 0);
	double wanted = armed_len > 0 ? counted / armed_len * len : 0;
	double next = wanted <= 0 ? 1.0 : allowed / wanted;
	next = next > 1 ? 1 : next < MIN_DUTY ? MIN_DUTY : next;
	if (budget.fixed_duty >= 0)
		next = budget.fixed_duty;	/* GPUTOP_DUTY, for experiments */
	if ((next < 1) != (budget.duty < 1))
		log_debug("--max-overhead: launch probes armed %.0f%% of the time", next * 100);
	budget.duty = next;

	budget.start = end;
	set_armed(p, true, now);
}

void budget_poll(struct tracee *p, uint64_t now)
{
	if (!budget.active)
		return;
	budget.last_stops = p->stops;
	if (!budget.start.t) {
		budget.start = mark_now(p, now);
		return;
	}
	if (budget.armed && budget.duty < 1 && now >= budget.start.t + (uint64_t)(budget.duty * (double)PERIOD_NS))
		set_armed(p, false, now);
	if (!budget.armed && budget.duty == 0)
		return;	/* GPUTOP_DUTY=0: launches never armed again, no period ends */
	if (now - budget.start.t >= PERIOD_NS)
		end_period(p, now);
}

void budget_finish(struct tracee *p, uint64_t now)
{
	budget.last_stops = p->stops;
	if (budget.active && budget.start.t && now > budget.start.t)
		end_period(p, now);
}
