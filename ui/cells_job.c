/* cells_job.c — the text of the Job view's cells (cells.h's cells_job) and of a thread's call in
 * flight, from the live picture of the job (figures/job.h). */
#include "cells.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "comm_table.h"
#include "cuda_api.h"
#include "job.h"
#include "stack_text.h"
#include "stacks.h"

const struct job_thread *cells_job_headline(const struct job_process *jp)
{
	const struct job_thread *best = NULL;
	for (int i = 0; i < jp->n_threads; i++) {
		const struct job_thread *t = &jp->threads[i];
		if (t->api < 0)
			continue;
		bool waits = job_thread_waits(t), best_waits = best && job_thread_waits(best);
		if (!best || (waits && !best_waits) || (waits == best_waits && t->age_ns > best->age_ns))
			best = t;
	}
	return best;
}

void cells_job_call(char *buf, size_t n, const struct job_thread *t)
{
	const struct api_spec *s = t->api >= 0 ? cuda_api_get(t->api) : NULL;
	char args[160], age[FMT_LEN];
	if (!s) {
		snprintf(buf, n, "in no call seen");
		return;
	}
	if (t->from == JOB_CALL_STACK) {
		snprintf(buf, n, "%s, entered before gputop attached", cuda_api_label(s));
		return;
	}
	job_call_args(t, args, sizeof args);
	fmt_age(age, sizeof age, t->age_ns);
	snprintf(buf, n, "%s(%s) for %s [%s]", cuda_api_label(s), args, age, job_call_source(t));
}

static void odd_text(char *buf, size_t n, const struct job_process *jp)
{
	size_t k = 0;
	buf[0] = '\0';
	for (int b = JOB_ODD_KINDS - 1; b >= 0 && k < n; b--) {	/* the straggler first */
		if (!(jp->odd & (1u << b)))
			continue;
		if (1u << b == JOB_ODD_WAITS_LEAST)
			k += (size_t)snprintf(buf + k, n - k, "%sstraggler: waits least", k ? ", " : "");
		else
			k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? ", " : "", job_odd_names[b]);
	}
	if (!k)
		snprintf(buf, n, "%s", fmt_dash());
}

void cells_job(struct cells_job *c, const struct job_process *jp)
{
	snprintf(c->process, sizeof c->process, "%d", (int)jp->pid);
	if (jp->rank >= 0 && jp->nranks > 0)
		snprintf(c->rank, sizeof c->rank, "%d/%d", jp->rank, jp->nranks);
	else if (jp->rank >= 0)
		snprintf(c->rank, sizeof c->rank, "%d", jp->rank);
	else
		snprintf(c->rank, sizeof c->rank, "%s", fmt_dash());
	snprintf(c->collectives, sizeof c->collectives, "%" PRIu64 "%s", jp->collectives, jp->in_collective ? "+1" : "");
	if (jp->wait_share >= 0)
		snprintf(c->wait, sizeof c->wait, "%.0f%%", 100 * jp->wait_share);
	else
		snprintf(c->wait, sizeof c->wait, "%s", fmt_dash());
	const struct job_thread *t = cells_job_headline(jp);
	char line[CELLS_LEN] = "";
	if (jp->py_file) {
		const char *base = strrchr(jp->py_file, '/');
		snprintf(line, sizeof line, "%s %s:%u", jp->py_function ? jp->py_function : "?",
			 base ? base + 1 : jp->py_file, jp->py_line);
	}
	snprintf(c->age, sizeof c->age, "%s", fmt_dash());
	if (t && t->from != JOB_CALL_STACK) {
		fmt_age(c->age, sizeof c->age, t->age_ns);
		char args[160];
		if (t->call.op == OP_COLLECTIVE && t->call.coll.coll != COLL_SEND && t->call.coll.coll != COLL_RECV)
			snprintf(args, sizeof args, "%" PRIu64 " bytes", t->call.coll.bytes);	/* the comm: Enter */
		else
			job_call_args(t, args, sizeof args);
		snprintf(c->now, sizeof c->now, "%s(%s)%s%s", cuda_api_label(cuda_api_get(t->api)), args,
			 line[0] ? " at " : "", line);
	} else if (line[0]) {
		snprintf(c->now, sizeof c->now, "%s", line);
	} else if (!jp->cuda) {
		snprintf(c->now, sizeof c->now, "(no CUDA: no rank)");
	} else {
		snprintf(c->now, sizeof c->now, "in no call seen, no Python line");
	}
	odd_text(c->odd, sizeof c->odd, jp);
}
