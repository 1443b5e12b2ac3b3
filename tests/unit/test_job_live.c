/* test_job_live.c — unit test of src/figures/job_live.c (the live picture of a job): pictures
 * published every 0.25 s as the tracer does, with made-up waits. The wait share over the last
 * 10 s (a rank that starts straggling is named, one that stops is no longer); the straggler at
 * once, the marks of a moment only once they held 2 s; positions compared from a base taken
 * after the last arrival (an attach offset is no "behind", a rank stuck two behind is); the
 * copy readers get; a reset (z) begins a process's history anew. */
#include "job_live.h"

#include "cuda_api.h"
#include "stacks.h"

#include "check.h"

#define MS 1000000ull
#define S 1000000000ull

/* What each of the 3 ranks did so far, as the figures say it (cumulative). */
struct rank {
	pid_t pid;
	uint64_t since, waited;	/* returned waits, ns */
	uint64_t colls;
	bool in_call;		/* inside ncclAllReduce now (its age: in_age) */
	uint64_t in_age;
};

static void publish(struct job_live *l, struct rank *r, int n, uint64_t now)
{
	struct job *j = job_new();
	for (int i = 0; i < n; i++) {
		struct job_process *jp = job_process_of(j, r[i].pid);
		jp->cuda = true;
		jp->since_ns = r[i].since;
		jp->wait_ns = r[i].waited;
		jp->collectives = r[i].colls;
		if (r[i].in_call) {
			struct job_thread *t = job_thread_add(jp, r[i].pid);
			t->api = cuda_api_find("ncclAllReduce");
			t->from = JOB_CALL_RECORD;
			t->age_ns = r[i].in_age;
		}
	}
	job_live_publish(l, j, now);
}

static const struct job_process *proc_of(const struct job *j, pid_t pid)
{
	for (int i = 0; j && i < j->n; i++)
		if (j->proc[i].pid == pid)
			return &j->proc[i];
	return NULL;
}

/* Runs the ranks from *t to until: each 0.25 s rank i waits share[i] of it and makes 8
 * collectives, as every other rank. */
static void run(struct job_live *l, struct rank *r, const double *share, uint64_t *t, uint64_t until)
{
	for (; *t < until; *t += 250 * MS) {
		for (int i = 0; i < 3; i++) {
			r[i].waited += (uint64_t)(share[i] * 250 * MS);
			r[i].colls += 8;
		}
		publish(l, r, 3, *t);
	}
}

static void test_window(void)
{
	struct job_live *l = job_live_new();
	check(l && !job_live_copy(l), "a new one: no picture yet");
	check(job_live_due(l, JOB_LIVE_PERIOD_NS) && !job_live_due(NULL, 1), "due at once; never without one");
	struct rank r[3] = { { .pid = 10, .colls = 5 }, { .pid = 11 }, { .pid = 12, .colls = 3 } };
	uint64_t t = 250 * MS;
	publish(l, r, 3, t);
	struct job *j = job_live_copy(l);
	check(j && j->live && j->n == 3 && proc_of(j, 11)->wait_share < 0, "the first picture: live, no share yet (0.25 s)");
	check(!job_live_due(l, t + 100 * MS) && job_live_due(l, t + JOB_LIVE_PERIOD_NS), "the next one due a period later");
	job_free(j);
	const double straggle[3] = { 0.9, 0.05, 0.9 };
	run(l, r, straggle, &t, 1 * S);
	j = job_live_copy(l);
	const struct job_process *odd = proc_of(j, 11);
	check(odd->odd & JOB_ODD_WAITS_LEAST, "rank 11 waits least: marked at once, 0.75 s in");
	check(odd->wait_share > 0.03 && odd->wait_share < 0.07 && proc_of(j, 10)->wait_share > 0.85,
	      "shares over the time since the attach (%.3f, %.3f)", odd->wait_share, proc_of(j, 10)->wait_share);
	check(!(proc_of(j, 10)->odd & JOB_ODD_BEHIND) && !(proc_of(j, 12)->odd & JOB_ODD_BEHIND),
	      "counts offset by the attaches (5, 0, 3): no one behind");
	job_free(j);
	run(l, r, straggle, &t, 12 * S);
	j = job_live_copy(l);
	check(j->proc[0].odd == 0 && j->proc[2].odd == 0, "12 s on: the others carry no mark (offsets gone into the base)");
	check(proc_of(j, 11)->watched_ns <= JOB_LIVE_WINDOW_NS && proc_of(j, 11)->watched_ns >= JOB_LIVE_WINDOW_NS - 500 * MS,
	      "the share's window: the last 10 s (%.2f s)", (double)proc_of(j, 11)->watched_ns / 1e9);
	job_free(j);
	/* Rank 11 stops straggling, rank 12 begins: within the window, the mark moves. */
	const double swap[3] = { 0.9, 0.9, 0.05 };
	run(l, r, swap, &t, 18 * S);
	j = job_live_copy(l);
	check(!(proc_of(j, 11)->odd & JOB_ODD_WAITS_LEAST), "6 s after it caught up: rank 11 no longer the straggler");
	run(l, r, swap, &t, 24 * S);
	job_free(j);
	j = job_live_copy(l);
	check(proc_of(j, 12)->odd & JOB_ODD_WAITS_LEAST, "rank 12, straggling 12 s: the straggler now (%.2f)",
	      proc_of(j, 12)->wait_share);
	job_free(j);
	job_live_free(l);
}

static void test_moment(void)
{
	struct job_live *l = job_live_new();
	struct rank r[3] = { { .pid = 20 }, { .pid = 21 }, { .pid = 22 } };
	uint64_t t = 250 * MS;
	const double even[3] = { 0.5, 0.5, 0.5 };
	run(l, r, even, &t, 3 * S);
	/* Rank 21 stuck in Python: the others inside a collective that waits for it. */
	uint64_t stuck = t;
	int held_at = -1, seen_early = 0;
	for (int k = 0; t < stuck + 4 * S; t += 250 * MS, k++) {
		r[0].in_call = r[2].in_call = true;
		r[0].in_age = r[2].in_age = t - stuck;
		r[0].colls = r[2].colls = r[1].colls + 2;	/* two ahead of it, then stuck */
		publish(l, r, 3, t);
		struct job *j = job_live_copy(l);
		uint32_t m = proc_of(j, 21)->odd & (JOB_ODD_BEHIND | JOB_ODD_NOT_WAITING);
		if (m && t - stuck < JOB_LIVE_HOLD_NS)
			seen_early++;
		if (m == (JOB_ODD_BEHIND | JOB_ODD_NOT_WAITING) && held_at < 0)
			held_at = k;
		job_free(j);
	}
	check(seen_early == 0, "behind and not waiting: not shown before they held 2 s");
	check(held_at >= 8 && held_at <= 9, "shown once they held 2 s (picture %d, 0.25 s apart)", held_at);
	struct job *j = job_live_copy(l);
	check(proc_of(j, 20)->wait_share > proc_of(j, 21)->wait_share, "the waiting ranks' share grows");
	job_free(j);
	/* z: its figures begin anew (since changes): a history of its own, no share yet. */
	r[1].since = t;
	r[1].waited = 0;
	publish(l, r, 3, t);
	j = job_live_copy(l);
	check(proc_of(j, 21)->wait_share < 0, "a reset: its share starts again");
	job_free(j);
	job_live_free(l);
}

int main(void)
{
	check(cuda_api_find("ncclAllReduce") >= 0, "the API table has ncclAllReduce");
	test_window();
	test_moment();
	stacks_free();
	return failures != 0;
}
