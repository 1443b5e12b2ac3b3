/* job_text.c — --dump's picture as text (job_text.h): a block per process, the odd ones out
 * marked, each thread's call in flight and stack, and what the picture cost each process. */
#include "job_text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "comm_table.h"
#include "cuda_api.h"
#include "stacks.h"

static void print_odd(FILE *f, const struct job *j, const struct job_process *jp)
{
	uint32_t top = 0;
	for (int i = 0; i < j->n; i++)
		top = j->proc[i].position > top ? j->proc[i].position : top;
	fprintf(f, "  ODD ONE OUT:");
	if (jp->odd & JOB_ODD_BEHIND)
		fprintf(f, " behind (collective %u, others up to %u);", jp->position, top);
	if (jp->odd & JOB_ODD_NOT_WAITING)
		fprintf(f, " not waiting while the others are;");
	if (jp->odd & JOB_ODD_LINE)
		fprintf(f, " at another Python line than most;");
	if (jp->odd & JOB_ODD_WAITS_LEAST)
		fprintf(f, " waits least (%.0f%% of the time; the others %.0f%% more at least): the one they wait for;",
			100 * jp->wait_share, 100 * JOB_STRAGGLER_GAP);
	fputc('\n', f);
}

static void print_frames(FILE *f, uint32_t id)
{
	const struct stack *s = stacks_get(id);
	if (!s) {
		fprintf(f, "      (no stack)\n");
		return;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		const struct stack_frame *fr = &s->frame[i];
		fprintf(f, "      %s%s", fr->python ? "py " : "", fr->function ? fr->function : "?");
		if (fr->file && fr->line)
			fprintf(f, " (%s:%u)", fr->file, fr->line);
		else if (fr->module)
			fprintf(f, " [%s]", fr->module);
		fputc('\n', f);
	}
	if (s->truncated)
		fprintf(f, "      ... (deeper than --stack-depth)\n");
}

static void print_thread(FILE *f, const struct job_thread *t)
{
	const struct api_spec *s = t->api >= 0 ? cuda_api_get(t->api) : NULL;
	fprintf(f, "  thread %d (%s): ", t->tid, t->name);
	if (!s) {
		fprintf(f, "in no CUDA or NCCL call\n");
	} else if (t->from == JOB_CALL_STACK) {
		fprintf(f, "in %s, entered before gputop attached (since when, and its arguments: not known)\n",
			cuda_api_label(s));
	} else {
		char args[160];
		job_call_args(t, args, sizeof args);
		fprintf(f, "in %s(%s) for %.3f s [%s]\n", cuda_api_label(s), args, (double)t->age_ns / 1e9,
			job_call_source(t));
	}
	print_frames(f, t->stack);
}

static void print_process(FILE *f, const struct job *j, const struct job_process *jp)
{
	fprintf(f, "process %d", jp->pid);
	if (jp->rank >= 0)
		fprintf(f, "  rank %d", jp->rank);
	if (jp->rank >= 0 && jp->nranks > 0)
		fprintf(f, " of %d", jp->nranks);
	if (!jp->cuda)
		fprintf(f, "  (no CUDA: no rank)");
	if (jp->counter_checked)
		fprintf(f, "  NCCL's counter %" PRIu64 ",", jp->counter);
	fprintf(f, "  collectives %" PRIu64 " since the attach", jp->collectives);
	if (jp->in_collective)
		fprintf(f, " (+1 in flight)");
	fprintf(f, "  %s", jp->waiting ? "waiting" : "not waiting");
	if (jp->wait_share >= 0)
		fprintf(f, "  waited %.0f%% of %.1f s", 100 * jp->wait_share, (double)jp->watched_ns / 1e9);
	fputc('\n', f);
	if (jp->cuda && !jp->counter_checked && jp->counter_why)
		fprintf(f, "  NCCL's counter: not read (%s): counted since the attach\n", jp->counter_why);
	if (jp->py_file)
		fprintf(f, "  Python: %s (%s:%u)\n", jp->py_function ? jp->py_function : "?", jp->py_file, jp->py_line);
	if (jp->odd)
		print_odd(f, j, jp);
	for (int i = 0; i < jp->n_threads; i++)
		print_thread(f, &jp->threads[i]);
}

int job_text_write(FILE *f, const struct job *j)
{
	errno = 0;
	int odd = 0;
	for (int i = 0; i < j->n; i++) {
		print_process(f, j, &j->proc[i]);
		fputc('\n', f);
		odd += j->proc[i].odd != 0;
	}
	if (j->n > 1)
		fprintf(f, "odd ones out: %d of %d processes\n", odd, j->n);
	fprintf(f, "held:");
	for (int i = 0; i < j->n; i++)
		fprintf(f, " %d %.1f ms (picture %.1f ms);", j->proc[i].pid, (double)j->proc[i].held_ns / 1e6,
			(double)j->proc[i].taken_ns / 1e6);
	fputc('\n', f);
	if (fflush(f) == EOF || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}
