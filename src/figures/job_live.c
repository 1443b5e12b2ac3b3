/* job_live.c — the live picture of the job (job_live.h): the last one the tracer took, each
 * process's wait share over a sliding window, and the marks of the moment held before they
 * show. Behind one mutex: the tracer publishes, the UI, --json-interval's and the metrics'
 * threads copy. */
#include "job_live.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLES 64	/* > JOB_LIVE_WINDOW_NS / JOB_LIVE_PERIOD_NS: the window is always covered */
#define MOMENT_MARKS (JOB_ODD_BEHIND | JOB_ODD_NOT_WAITING | JOB_ODD_LINE)
/* The positions' base: each process's offset from the first one, averaged over the pictures
 * from 1 s to 3 s after the last arrival. A call it was inside when attached is counted by none
 * of its figures, and one picture reads counts a tally read apart (50 ms: a collective or two
 * of a fast loop); the average of eight is off by less than one. */
#define BASE_FROM_NS 1000000000ull
#define BASE_UNTIL_NS 3000000000ull

/* A process's past: its waits so far (those that returned and the calls in flight for their
 * age) at each picture, since when each mark of the moment has held, and its position's offset
 * from the first process's: processes attached one after another count their collectives from
 * different moments. */
struct history {
	pid_t pid;
	uint64_t since;		/* its figures' start: another (z) begins a new history */
	int n, head;		/* samples kept; the next one's slot */
	uint64_t at[SAMPLES], waited[SAMPLES];
	uint64_t odd_since[JOB_ODD_KINDS];
	int64_t offset_sum;	/* its position less the first process's, summed over the base's */
	int offset_n;		/* pictures */
	int64_t base;		/* the average: what its position is less for comparisons */
};

struct job_live {
	pthread_mutex_t lock;
	uint64_t last;		/* when the last picture was taken */
	uint64_t base_from, base_until;	/* the pictures the positions' base is taken over;
					 * until 0: taken */
	struct job *job;
	struct history hist[JOB_MAX_PROCS];
};

struct job_live *job_live_new(void)
{
	struct job_live *l = calloc(1, sizeof *l);
	if (l)
		pthread_mutex_init(&l->lock, NULL);
	return l;
}

void job_live_free(struct job_live *l)
{
	if (!l)
		return;
	job_free(l->job);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

bool job_live_due(const struct job_live *l, uint64_t now)
{
	return l && now - l->last >= JOB_LIVE_PERIOD_NS;
}

/* The history of jp: its own, begun anew where its figures began anew (z), or a new one in
 * the slot of a process gone from the picture. NULL: none is left. */
static struct history *history_of(struct job_live *live, const struct job *j, const struct job_process *jp)
{
	struct history *h = NULL;
	for (int i = 0; i < JOB_MAX_PROCS && !h; i++)
		if (live->hist[i].pid == jp->pid)
			h = &live->hist[i];
	if (h && h->since == jp->since_ns)
		return h;
	for (int i = 0; i < JOB_MAX_PROCS && !h; i++) {
		bool in_job = false;
		for (int k = 0; k < j->n && live->hist[i].pid; k++)
			in_job |= j->proc[k].pid == live->hist[i].pid;
		if (!in_job)
			h = &live->hist[i];
	}
	if (h)
		*h = (struct history){ .pid = jp->pid, .since = jp->since_ns };
	return h;
}

/* Its threads' time in the calls in flight that wait, each at most the watched time. */
static uint64_t in_flight_wait(const struct job_process *jp)
{
	uint64_t sum = 0;
	for (int i = 0; i < jp->n_threads; i++) {
		const struct job_thread *t = &jp->threads[i];
		if (job_thread_waits(t) && t->from != JOB_CALL_STACK)
			sum += t->age_ns < jp->watched_ns ? t->age_ns : jp->watched_ns;
	}
	return sum;
}

/* The wait share over the window: what it waited between the oldest sample in the window
 * (or its start, with nothing waited, when it is younger than the window) and now. */
static void window_share(struct job_process *jp, struct history *h, uint64_t now)
{
	uint64_t waited = jp->wait_ns + in_flight_wait(jp);
	uint64_t base_at = jp->since_ns, base = 0;
	for (int k = 0; h && k < h->n; k++) {
		int i = (h->head - h->n + k + SAMPLES) % SAMPLES;	/* oldest first */
		bool in_window = now - h->at[i] <= JOB_LIVE_WINDOW_NS;
		/* From its start while all it has is in the window; else from the oldest sample in
		 * the window (the newest, if none is: the tracer was held up that long). */
		if (in_window && k == 0 && h->n < SAMPLES)
			break;
		if (in_window || k == h->n - 1) {
			base_at = h->at[i];
			base = h->waited[i];
			break;
		}
	}
	if (h) {
		h->at[h->head] = now;
		h->waited[h->head] = waited;
		h->head = (h->head + 1) % SAMPLES;
		h->n += h->n < SAMPLES;
	}
	jp->watched_ns = now > base_at ? now - base_at : 0;
	jp->wait_ns = waited > base ? waited - base : 0;
	jp->wait_share = -1;
	if (jp->watched_ns >= JOB_WATCH_MIN_NS)
		jp->wait_share = jp->wait_ns >= jp->watched_ns ? 1.0 : (double)jp->wait_ns / (double)jp->watched_ns;
}

/* The marks of the moment that held JOB_LIVE_HOLD_NS stay; the others wait. */
static void hold_marks(struct job_process *jp, struct history *h, uint64_t now)
{
	for (int b = 0; b < JOB_ODD_KINDS; b++) {
		uint32_t bit = 1u << b;
		if (!(bit & MOMENT_MARKS))
			continue;
		if (!(jp->odd & bit)) {
			if (h)
				h->odd_since[b] = 0;
			continue;
		}
		if (h && !h->odd_since[b])
			h->odd_since[b] = now;
		if (!h || now - h->odd_since[b] < JOB_LIVE_HOLD_NS)
			jp->odd &= ~bit;
	}
}

/* Each position made comparable: less its process's base, once taken; meanwhile the offsets
 * summed. */
static void positions(struct job_live *l, struct job *j, struct history **h, uint64_t now)
{
	int64_t first = j->n ? j->proc[0].position : 0;
	bool summing = l->base_until && now >= l->base_from && now < l->base_until;
	bool done = l->base_until && now >= l->base_until;
	for (int i = 0; i < j->n; i++) {
		if (!h[i])
			continue;
		if (summing) {
			h[i]->offset_sum += (int64_t)j->proc[i].position - first;
			h[i]->offset_n++;
		}
		if (done)
			h[i]->base = h[i]->offset_n ? (h[i]->offset_sum + (h[i]->offset_sum >= 0 ? 1 : -1) * h[i]->offset_n / 2) /
							      h[i]->offset_n
						    : 0;
		int64_t p = (int64_t)j->proc[i].position - h[i]->base;
		j->proc[i].position = p > 0 ? (uint32_t)p : 0;
	}
	if (done)
		l->base_until = 0;
}

/* Behind, in a running job: two collectives or more (none before the positions' base). Ranks come out of a collective one after
 * another and their counts are read a few milliseconds apart, so one behind is any rank at any
 * moment; a rank held one behind (a hang before the next collective) is also not waiting and at
 * another line, and --dump says where each one stands. */
static void behind_by_two(struct job *j, bool no_base)
{
	uint32_t top = 0;
	for (int i = 0; i < j->n; i++)
		if (j->proc[i].cuda && j->proc[i].position > top)
			top = j->proc[i].position;
	for (int i = 0; i < j->n; i++)
		if (no_base || !(j->proc[i].position + 1 < top))
			j->proc[i].odd &= ~(uint32_t)JOB_ODD_BEHIND;
}

void job_live_publish(struct job_live *l, struct job *j, uint64_t now)
{
	j->live = true;
	j->taken_ns = now;
	struct history *h[JOB_MAX_PROCS];
	bool arrived = false;
	pthread_mutex_lock(&l->lock);
	for (int i = 0; i < j->n; i++) {
		struct job_process *jp = &j->proc[i];
		jp->watched_ns = now > jp->since_ns ? now - jp->since_ns : 0;
		job_sum(jp);
		h[i] = history_of(l, j, jp);
		arrived |= h[i] && h[i]->n == 0;
		window_share(jp, h[i], now);
	}
	if (arrived) {
		l->base_from = now + BASE_FROM_NS;
		l->base_until = now + BASE_UNTIL_NS;
		for (int i = 0; i < JOB_MAX_PROCS; i++)
			l->hist[i].offset_sum = l->hist[i].offset_n = 0;
	}
	positions(l, j, h, now);
	job_mark_odd(j);
	behind_by_two(j, l->base_until != 0);
	for (int i = 0; i < j->n; i++)
		hold_marks(&j->proc[i], h[i], now);
	struct job *old = l->job;
	l->job = j;
	l->last = now;
	pthread_mutex_unlock(&l->lock);
	job_free(old);
}

struct job *job_live_copy(struct job_live *l)
{
	if (!l)
		return NULL;
	pthread_mutex_lock(&l->lock);
	struct job *c = l->job ? job_copy(l->job) : NULL;
	pthread_mutex_unlock(&l->lock);
	return c;
}
