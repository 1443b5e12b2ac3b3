/* json_job.c — --json's `job` section: --dump's picture (figures/job.h), or the live one in
 * --json-interval's summaries (figures/job_live.h), each process with its rank, collectives,
 * odd-one-out marks, and each thread's call in flight and stack. */
#include "json_job.h"

#include "cuda_api.h"
#include "comm_table.h"
#include "job_live.h"
#include "job_text.h"

static void json_call(struct jw *w, const struct job_thread *t)
{
	const struct api_spec *s = t->api >= 0 ? cuda_api_get(t->api) : NULL;
	if (!s) {
		jw_null(w);
		return;
	}
	bool known = t->from != JOB_CALL_STACK;
	jw_open(w, '{');
	jw_key(w, "name");
	jw_str(w, cuda_api_label(s));
	jw_key(w, "layer");
	jw_str(w, cuda_layer_name(s->layer));
	jw_key(w, "source");
	jw_str(w, job_call_source(t));
	jw_key(w, "before_attach");
	jw_bool(w, !known);
	jw_key(w, "age_s");
	jw_double_if(w, known, (double)t->age_ns / 1e9);
	if (known && t->call.op == OP_COLLECTIVE) {
		jw_key(w, "op");
		jw_str(w, t->call.coll.coll < COLL_COUNT ? coll_name[t->call.coll.coll] : NULL);
		jw_key(w, "bytes");
		jw_u64(w, t->call.coll.bytes);
		jw_key(w, "comm");
		jw_u64_if(w, t->call.coll.comm != 0, t->call.coll.comm);
		jw_key(w, "peer");
		jw_int_if(w, t->call.coll.peer >= 0, t->call.coll.peer);
	}
	char args[160];
	jw_key(w, "args");
	jw_str(w, job_call_args(t, args, sizeof args) > 0 ? args : NULL);
	jw_close(w);
}

static void json_thread(struct jw *w, const struct job_thread *t)
{
	jw_open(w, '{');
	jw_key(w, "tid");
	jw_int(w, t->tid);
	jw_key(w, "name");
	jw_str(w, t->name);
	jw_key(w, "call");
	json_call(w, t);
	jw_key(w, "stack");
	jw_stack(w, t->stack);
	jw_close(w);
}

static void json_proc(struct jw *w, const struct job_process *jp, bool live)
{
	jw_open(w, '{');
	jw_key(w, "pid");
	jw_int(w, jp->pid);
	jw_key(w, "rank");
	jw_int_if(w, jp->rank >= 0, jp->rank);
	jw_key(w, "nranks");
	jw_int_if(w, jp->nranks > 0, jp->nranks);
	jw_key(w, "collectives");
	jw_u64(w, jp->collectives);
	jw_key(w, "in_collective");
	jw_bool(w, jp->in_collective > 0);
	jw_key(w, "nccl_counter");
	jw_u64_if(w, jp->counter_checked, jp->counter);
	jw_key(w, "nccl_counter_offset");
	jw_u64_if(w, jp->counter_checked, jp->counter_offset);
	jw_key(w, "nccl_counter_why_not");
	jw_str(w, jp->counter_checked ? NULL : jp->counter_why);
	jw_key(w, "position");
	jw_u64(w, jp->position);
	jw_key(w, "waiting");
	jw_bool(w, jp->waiting);
	jw_key(w, "python");
	if (jp->py_file) {
		jw_open(w, '{');
		jw_key(w, "function");
		jw_str(w, jp->py_function);
		jw_key(w, "file");
		jw_str(w, jp->py_file);
		jw_key(w, "line");
		jw_u64(w, jp->py_line);
		jw_close(w);
	} else {
		jw_null(w);
	}
	jw_key(w, "odd");
	jw_open(w, '[');
	for (int b = 0; b < JOB_ODD_KINDS; b++)
		if (jp->odd & (1u << b))
			jw_str(w, job_odd_names[b]);
	jw_close(w);
	jw_key(w, "watched_s");
	jw_double(w, (double)jp->watched_ns / 1e9);
	jw_key(w, "wait_share");
	jw_double_if(w, jp->wait_share >= 0, jp->wait_share);
	jw_key(w, "held_ms");	/* a live picture holds nothing */
	jw_double_if(w, !live, (double)jp->held_ns / 1e6);
	jw_key(w, "picture_ms");
	jw_double_if(w, !live, (double)jp->taken_ns / 1e6);
	if (live) {
		jw_key(w, "threads_left_out");	/* in no call seen, running no Python */
		jw_int(w, jp->quiet_threads);
	}
	jw_key(w, "threads");
	jw_open(w, '[');
	for (int i = 0; i < jp->n_threads; i++)
		json_thread(w, &jp->threads[i]);
	jw_close(w);
	jw_close(w);
}

void json_job(struct jw *w, const struct job *j)
{
	jw_key(w, "job");
	jw_open(w, '{');
	jw_key(w, "live");	/* the live session's picture (figures/job_live.h), not --dump's */
	jw_bool(w, j->live);
	if (j->live) {
		jw_key(w, "window_s");
		jw_double(w, (double)JOB_LIVE_WINDOW_NS / 1e9);
	}
	jw_key(w, "processes");
	jw_open(w, '[');
	for (int i = 0; i < j->n; i++)
		json_proc(w, &j->proc[i], j->live);
	jw_close(w);
	jw_close(w);
}
