/* dump.c — --dump: the session attaches as usual, the engine takes its picture of every process
 * while the detach holds it (engine/dump_take.c), and this completes and prints it: each
 * process's rank and collectives from the figures, the odd ones out (figures/job.c), the text
 * on stdout. */
#include "dump.h"

#include <string.h>

#include "log.h"
#include "job_text.h"
#include "stats.h"
#include "tracer.h"

/* With --timeout, the session watches that long first; without, the picture is taken as soon
 * as every process is attached (a timeout that is over at once). */
double dump_timeout(const struct options *opt)
{
	return opt->timeout_s > 0 ? opt->timeout_s : 1e-9;
}

struct job *dump_start(const struct options *opt)
{
	struct job *j = opt->dump ? job_new() : NULL;
	tracer_set_job(j);
	return j;
}

/* The time its threads spent inside synchronizes and collectives that returned. */
static void add_wait(struct job_process *jp)
{
	struct stats_snapshot s;
	if (stats_snapshot_of(jp->pid, &s) < 0)
		return;
	jp->wait_ns = s.sync_ns;
	for (int op = 0; op < COLL_COUNT; op++)
		jp->wait_ns += s.comm.coll[op].ns;
	stats_snapshot_free(&s);
}

/* Each process's rank and its collectives since the attach, from the figures. */
static void add_figures(struct job *j)
{
	struct stats_snapshot s;
	if (stats_snapshot(&s) < 0)
		return;
	for (int i = 0; i < j->n; i++) {
		struct job_process *jp = &j->proc[i];
		for (size_t k = 0; k < s.n_proc; k++) {
			const struct stats_process *sp = &s.proc[k];
			if (sp->info.pid != jp->pid)
				continue;
			jp->rank = sp->info.rank;
			jp->watched_ns = jp->taken_at > sp->start_ns ? jp->taken_at - sp->start_ns : 0;
			jp->nranks = sp->info.nranks;
			jp->collectives = 0;
			for (int op = 0; op < COLL_COUNT; op++)
				jp->collectives += sp->coll[op].calls;
		}
	}
	stats_snapshot_free(&s);
	for (int i = 0; i < j->n; i++)
		add_wait(&j->proc[i]);
}

const struct job *dump_finish(struct job *j)
{
	tracer_set_job(NULL);
	if (!j)
		return NULL;
	add_figures(j);
	job_mark(j);
	return j;
}

int dump_print(struct job *j, FILE *f)
{
	int err = job_text_write(f, j);
	if (err < 0)
		log_error("cannot write the dump: %s", strerror(-err));
	return err;
}

void dump_end(struct job *j)
{
	tracer_set_job(NULL);
	job_free(j);
}
