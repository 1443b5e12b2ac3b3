/* test_job.c — unit test of src/figures/job.c (--dump's picture): a process's position (its
 * collectives, one more while a thread is inside one), whether it waits (a thread in a
 * synchronize or a collective; a launch does not wait), its Python line (a waiting thread's
 * first; the innermost frame outside the standard library), and the odd ones out: behind the furthest, not waiting while every other one does,
 * away from the line most are at; two processes that disagree on a line mark none by it; one
 * process alone is never odd. Stacks are interned through figures/stacks.c as the engine does. */
#include "job.h"

#include <string.h>

#include "cuda_api.h"
#include "stacks.h"

#include "check.h"

/* A stack of one native frame over one Python frame at file:line; its id. */
static uint32_t py_stack(pid_t pid, const char *native, const char *file, uint32_t line)
{
	struct stack_frame f[2] = {
		{ .function = native, .module = "lib.so" },
		{ .function = "fn", .file = file, .line = line, .python = true },
	};
	uint64_t key[4] = { (uint64_t)pid, (uint64_t)(uintptr_t)native, (uint64_t)(uintptr_t)file, line };
	uint32_t id = stacks_find(key, 4);
	return id != STACK_NONE ? id : stacks_add(pid, key, 4, f, 2, false);
}

/* Process pid with one thread in API row api (-1: none) at file:line, colls collectives. */
static struct job_process *add(struct job *j, pid_t pid, const char *api, const char *file, uint32_t line,
			       uint64_t colls)
{
	struct job_process *jp = job_process_of(j, pid);
	jp->cuda = true;
	struct job_thread *t = job_thread_add(jp, pid);
	t->api = api ? cuda_api_find(api) : -1;
	t->stack = py_stack(pid, api ? api : "sleep", file, line);
	jp->collectives = colls;
	return jp;
}

static void test_straggler(void)
{
	struct job *j = job_new();
	add(j, 10, "ncclAllReduce", "train.py", 57, 99);
	struct job_process *odd = add(j, 11, NULL, "train.py", 39, 99);
	add(j, 12, "ncclAllReduce", "train.py", 57, 99);
	add(j, 13, "cudaStreamSynchronize", "train.py", 57, 99);
	check(job_process_of(j, 10) == &j->proc[0] && j->n == 4, "a process's entry is found again, not added twice");
	job_mark(j);
	check(j->proc[0].waiting && j->proc[0].position == 100 && j->proc[0].in_collective == 1,
	      "inside a collective: waiting, its position one past its collectives");
	check(j->proc[3].waiting && j->proc[3].position == 99, "inside a synchronize: waiting, position unchanged");
	check(odd->odd == (JOB_ODD_BEHIND | JOB_ODD_NOT_WAITING | JOB_ODD_LINE), "the straggler: behind, not waiting, another line");
	check(odd->py_line == 39 && strcmp(odd->py_file, "train.py") == 0, "its Python line, from its stack");
	check(j->proc[3].odd == JOB_ODD_BEHIND, "a rank in a synchronize: only behind those inside the collective");
	check(!j->proc[0].odd && !j->proc[2].odd, "the ranks at the front are not odd");
	job_free(j);
}

/* NCCL's counters: the positions where every rank's was checked; else the counts since the
 * attach for all (not a mix of the two). */
static void test_counters(void)
{
	struct job *j = job_new();
	struct job_process *a = add(j, 50, "ncclAllReduce", "t.py", 5, 10);
	struct job_process *b = add(j, 51, NULL, "t.py", 9, 10);
	a->counter_checked = b->counter_checked = true;
	a->counter = 1011;	/* the one inside counted already (NCCL counts inside the call) */
	b->counter = 1000;	/* its counter says it is 11 behind: collectives before the attach */
	job_mark(j);
	check(a->position == 1011 && b->position == 1000 && (b->odd & JOB_ODD_BEHIND) && !(a->odd & JOB_ODD_BEHIND),
	      "every counter checked: positions from NCCL's counters, the one behind named by them");
	b->counter_checked = false;
	job_mark(j);
	check(a->position == 11 && b->position == 10, "one counter not checked: every position counted since the attach");
	job_free(j);
}

static void test_two_and_one(void)
{
	struct job *j = job_new();
	add(j, 20, "ncclAllReduce", "a.py", 5, 7);
	add(j, 21, "cudaLaunchKernel", "a.py", 9, 7);
	job_mark(j);
	check(!j->proc[1].waiting, "a launch is no wait");
	check(j->proc[1].odd == (JOB_ODD_BEHIND | JOB_ODD_NOT_WAITING), "two ranks: the one not waiting, behind; no line is most's");
	check(j->proc[0].odd == 0, "two ranks: the waiting one is not odd");
	job_free(j);

	j = job_new();
	add(j, 30, NULL, "a.py", 1, 0);
	job_mark(j);
	check(j->proc[0].odd == 0 && !j->proc[0].waiting, "one process alone is never odd");
	/* --children of a launcher: the launcher has no CUDA; it is no rank, and never odd. */
	struct job_process *launcher = job_process_of(j, 29);
	job_thread_add(launcher, 29)->stack = py_stack(29, "wait", "run.py", 2);
	add(j, 31, "ncclAllReduce", "a.py", 5, 0);
	job_mark(j);
	check(launcher->odd == 0, "a process without CUDA (a launcher) is never odd");
	check(j->proc[0].odd == (JOB_ODD_BEHIND | JOB_ODD_NOT_WAITING), "the ranks beside it are compared among themselves");
	job_free(j);
}

static void test_threads(void)
{
	struct job *j = job_new();
	struct job_process *jp = job_process_of(j, 40);
	struct job_thread *idle = job_thread_add(jp, 40);
	idle->stack = py_stack(40, "poll", "loader.py", 3);
	struct job_thread *w = job_thread_add(jp, 41);
	w->api = cuda_api_find("cudaStreamSynchronize");
	w->stack = py_stack(40, "cudaStreamSynchronize", "step.py", 8);
	check(idle->api == -1 && w->tid == 41, "a new thread: its id, no call");
	job_mark(j);
	check(jp->py_line == 8 && strcmp(jp->py_file, "step.py") == 0, "the process's line: the waiting thread's, not the first's");
	job_free(j);
	/* No thread waits: the main thread's line (tid == pid), not a helper's seen first. */
	j = job_new();
	jp = job_process_of(j, 60);
	job_thread_add(jp, 61)->stack = py_stack(60, "wait", "threading.py", 320);
	job_thread_add(jp, 60)->stack = py_stack(60, "sleep", "train.py", 12);
	job_mark(j);
	check(jp->py_line == 12 && strcmp(jp->py_file, "train.py") == 0,
	      "no thread waits: the process's line is its main thread's, not a helper's");
	int n = 0;
	while (job_thread_add(jp, 50 + n))
		n++;
	check(jp->n_threads == JOB_MAX_THREADS && n == JOB_MAX_THREADS - 2, "threads beyond JOB_MAX_THREADS are refused");
	job_free(j);
	j = job_new();
	for (int i = 0; i < JOB_MAX_PROCS; i++)
		job_process_of(j, 100 + i);
	check(job_process_of(j, 99) == NULL && job_process_of(j, 100) == &j->proc[0], "a full table refuses a new process only");
	job_free(j);
}

/* Ranks watched 2 s: waited (ns returned) w[i]; rank 0 also inside a collective 0.5 s. */
static struct job *watched(const uint64_t *w, int n)
{
	struct job *j = job_new();
	for (int i = 0; i < n; i++) {
		struct job_process *jp = add(j, 60 + i, i == 0 ? "ncclAllReduce" : NULL, "s.py", 3, 10);
		jp->watched_ns = 2000000000ull;
		jp->wait_ns = w[i];
		jp->threads[0].from = i == 0 ? JOB_CALL_RECORD : JOB_CALL_NONE;
		jp->threads[0].age_ns = 500000000ull;
	}
	job_mark(j);
	return j;
}

static void test_straggler_share(void)
{
	const uint64_t w[3] = { 1300000000ull, 100000000ull, 1800000000ull };
	struct job *j = watched(w, 3);
	check(j->proc[0].wait_share > 0.89 && j->proc[0].wait_share < 0.91,
	      "a share: returned waits plus the call in flight's age, over the time watched (%.3f)", j->proc[0].wait_share);
	check(j->proc[1].odd & JOB_ODD_WAITS_LEAST, "the rank that waited least, 0.2 below every other: the straggler");
	check(!(j->proc[0].odd & JOB_ODD_WAITS_LEAST) && !(j->proc[2].odd & JOB_ODD_WAITS_LEAST), "the others are not");
	job_free(j);
	const uint64_t close[3] = { 1300000000ull, 1500000000ull, 1800000000ull };
	j = watched(close, 3);
	check(!(j->proc[1].odd & JOB_ODD_WAITS_LEAST), "within 0.2 of another rank: no straggler named");
	job_free(j);
	struct job *k = job_new();
	add(k, 70, NULL, "s.py", 3, 0)->watched_ns = 1000000;
	add(k, 71, "ncclAllReduce", "s.py", 3, 0)->watched_ns = 1000000;
	job_mark(k);
	check(k->proc[0].wait_share < 0 && !(k->proc[0].odd & JOB_ODD_WAITS_LEAST), "watched 1 ms: no share, no straggler");
	job_free(k);
}

/* A thread's line is the program's: its innermost Python frame outside the standard library. */
static void test_own_line(void)
{
	static const struct {
		const char *inner;	/* the innermost Python frame's file */
		uint32_t want;		/* the line the process gets */
		const char *what;
	} cases[] = {
		{ "/usr/lib/python3.12/genericpath.py", 49, "a stdlib frame (genericpath.py) is passed over" },
		{ "/opt/conda/lib/python3.11/threading.py", 49, "a conda stdlib frame too" },
		{ "/usr/lib/python3.14t/threading.py", 49, "a free-threaded build's stdlib too" },
		{ "<frozen importlib._bootstrap>", 49, "a frozen module too" },
		{ "/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", 19, "a package's frame is the program's" },
		{ "/home/u/lib/python_tools/util.py", 19, "a directory merely named like one is the program's" },
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		struct stack_frame f[3] = {
			{ .function = "sleep", .module = "libc.so.6" },
			{ .function = "inner", .file = cases[k].inner, .line = 19, .python = true },
			{ .function = "straggle", .file = "train.py", .line = 49, .python = true },
		};
		uint64_t key[3] = { 70, 700 + k, 3 };
		uint32_t id = stacks_add(70, key, 3, f, 3, false);
		struct job *j = job_new();
		struct job_process *jp = job_process_of(j, 70);
		job_thread_add(jp, 70)->stack = id;
		job_mark(j);
		check(jp->py_line == cases[k].want, cases[k].what);
		job_free(j);
	}
}

int main(void)
{
	check(cuda_api_find("ncclAllReduce") >= 0 && cuda_api_find("cudaStreamSynchronize") >= 0,
	      "the API table has the rows the test uses");
	test_straggler();
	test_two_and_one();
	test_counters();
	test_threads();
	test_straggler_share();
	test_own_line();
	stacks_free();
	return failures != 0;
}
