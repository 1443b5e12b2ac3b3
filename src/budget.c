/* budget.c — the overhead governor behind --max-overhead. Time is cut into periods; in each,
 * launch probes are armed for a share `duty` of it, chosen from the last period's figures so
 * that (stops × cost per stop) stays under the budget. At the end of a period the launches
 * counted while armed are extrapolated to the whole period at the program's own rate. */
#include "budget.h"

#include <math.h>

#include "log.h"
#include "probes.h"
#include "session_internal.h"
#include "stats.h"

#define PERIOD_NS 200000000ull	/* 5 periods a second: short enough to follow the program */
#define MIN_DUTY 0.02		/* never blind: always sample a little */

static double share;		/* e.g. 0.05 for --max-overhead 5 */
static uint64_t calibrated_cost;	/* round trip of a stop, from xol_calibrate */
static double avg_held_ns;	/* tracer's own time per stop, averaged */
static uint64_t period_start, armed_until;
static bool armed = true, active;
static double duty = 1.0;
static uint64_t stops_at_start, launch_stops, launch_stops_at_start;
static uint64_t (*program_cpu)(void);	/* CPU time of the program's threads, ns */
static uint64_t cpu_at_start, cpu_at_disarm, cpu_per_stop;

void budget_init(double max_overhead_pct, uint64_t stop_cost_ns, uint64_t stop_cpu_ns,
		 uint64_t (*cpu_ns)(void))
{
	cpu_per_stop = stop_cpu_ns;
	program_cpu = cpu_ns;
	active = max_overhead_pct > 0;
	share = max_overhead_pct / 100.0;
	calibrated_cost = stop_cost_ns;
}

bool budget_active(void)
{
	return active;
}

void budget_on_stop(uint64_t held_ns, bool launch)
{
	avg_held_ns = avg_held_ns ? avg_held_ns * 0.99 + (double)held_ns * 0.01 : (double)held_ns;
	if (launch)
		launch_stops++;
}

static void set_armed(bool on)
{
	if (armed != on)
		probes_set_launches_armed(on);
	if (armed && !on)
		cpu_at_disarm = program_cpu();
	armed = on;
}

static void end_period(uint64_t now, uint64_t stops)
{
	uint64_t len = now - period_start;
	uint64_t armed_len = (armed ? now : armed_until) - period_start;
	if (armed_len > len)
		armed_len = len;
	if (armed_len == 0)
		armed_len = 1;
	/* Launches per CPU-second of the program's threads while armed, times the CPU time they
	 * used while disarmed. CPU time, not wall time: a thread held in a stop uses none, so
	 * the rate is the program's own, not the one our stops slowed it down to. */
	uint64_t cpu_now = program_cpu();
	double counted = (double)(launch_stops - launch_stops_at_start);
	double armed_cpu = (double)((armed ? cpu_now : cpu_at_disarm) - cpu_at_start);
	double all_stops = (double)(stops - stops_at_start);
	armed_cpu -= all_stops * (double)cpu_per_stop;	/* the kernel's share of our stops */
	if (armed_cpu < 1000)
		armed_cpu = 1000;
	double disarmed_cpu = armed ? 0 : (double)(cpu_now - cpu_at_disarm);
	double factor = counted > 0 && armed_cpu > 0 ? 1 + disarmed_cpu / armed_cpu : 1.0;
	stats_extrapolate_launches(factor);
	double cost = (double)calibrated_cost + avg_held_ns;
	if (factor != 1.0)
		session_set_launches_estimated();

	/* What would arming all period have cost? Launch stops scale with armed time; the
	 * others happen anyway. */
	double launch_rate = counted / (double)armed_len;
	double other = (double)(stops - stops_at_start) - (double)(launch_stops - launch_stops_at_start);
	double allowed = share * (double)len / cost - (other > 0 ? other : 0);
	double wanted = launch_rate * (double)len;
	double next = wanted <= 0 ? 1.0 : allowed / wanted;
	next = next > 1 ? 1 : next < MIN_DUTY ? MIN_DUTY : next;
	if ((next < 1) != (duty < 1))
		log_debug("--max-overhead: launch probes armed %.0f%% of the time", next * 100);
	duty = next;

	period_start = now;
	stops_at_start = stops;
	launch_stops_at_start = launch_stops;
	armed_until = now + (uint64_t)(duty * (double)PERIOD_NS);
	set_armed(true);
	cpu_at_start = cpu_now;
}

void budget_poll(uint64_t now, uint64_t stops)
{
	if (!active)
		return;
	if (!period_start) {
		period_start = now;
		armed_until = now + PERIOD_NS;
		stops_at_start = stops;
		cpu_at_start = program_cpu();
		return;
	}
	if (armed && duty < 1 && now >= armed_until)
		set_armed(false);
	if (now - period_start >= PERIOD_NS)
		end_period(now, stops);
}

void budget_finish(uint64_t now, uint64_t stops)
{
	if (active && period_start && now > period_start)
		end_period(now, stops);
}
