/* test_account.c — unit test of the engine's hot path without a process: calls from every source
 * (an int3 at the entry and its return through the trampoline, an entry-only probe, the call
 * stub's records, the launch ring) made into events by hit.c and hit_records.c, delivered by
 * the account step (account.c) to a recording consumer and to the real figures, devices and
 * graphs consumers, on a fake process (fake_tracee.h). Nesting counted once (at an int3 and in
 * the records, a call still in flight included), a failed allocation never live, a free of an
 * unknown pointer, launches a capture holds settled at its end, a collective's bytes, copies'
 * directions and devices, lost ring records, a registration that only names. One "ok"/"not ok"
 * line per check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "breakpoints.h"
#include "check.h"
#include "fake_tracee.h"
#include "frame.h"
#include "hit.h"
#include "hit_tallies.h"
#include "kernels.h"
#include "lookup.h"
#include "stats.h"
#include "stats_calls.h"
#include "threads.h"
#include "tracee.h"

#define APP_RET 0x401234ull		/* a return address in the program */
#define CUDA_LO 0x7e0000000000ull	/* a CUDA module: [CUDA_LO, CUDA_HI) */
#define CUDA_HI 0x7e0000100000ull
#define CUDA_RET (CUDA_LO + 0x1234)	/* a return address inside it */
#define SP (FAKE_MEM + 0x8000)		/* a thread's stack pointer at a call's entry */
#define OUT (FAKE_MEM + 0x100)		/* out-parameters */
#define T0 1000000ull			/* when a stopped call was let go */
#define STOP_COST 100ull
#define TP 0x7f0000aa00ull		/* the thread's thread pointer, as records name it */

/* ---- a consumer that keeps what it is told ----------------------------------------------------- */

static struct cuda_call seen[64];
static int n_seen;
static uint64_t lost_n;
static int told_another_process;	/* calls and losses told with a process not the fake one */

static void record(struct tracee *p, const struct cuda_call *c)
{
	told_another_process += p != tracee;
	if (n_seen < (int)(sizeof seen / sizeof seen[0]))
		seen[n_seen++] = *c;
}

static void record_lost(struct tracee *p, int api, uint64_t n)
{
	(void)api;
	told_another_process += p != tracee;
	lost_n += n;
}

static const struct cuda_consumer recorder = { .name = "test", .call = record, .lost = record_lost };

/* ---- the sources --------------------------------------------------------------------------------- */

/* A fresh process pid with one thread (tid pid), figures of its own, nothing seen yet. */
static struct thread *process(pid_t pid)
{
	fake_tracee_init(pid);
	fake_cuda_module(CUDA_LO, CUDA_HI);
	hit_init(tracee, STOP_COST, 0);
	tracee->stats_id = stats_process_new(pid, 1, "test");
	struct thread *t = threads_add(tracee, pid);
	t->device = -1;
	t->thread_pointer = TP;
	n_seen = 0;
	lost_n = 0;
	return t;
}

/* What the stubs recorded and tallied since the last look: the calls' records (collect), the
 * launch ring's (drain), each with the tallies they add (read whole: as the last read, which
 * reads every handle's count at once). */
static void collect(uint64_t now)
{
	hit_collect_returns(tracee, now);
	hit_read_tallies(tracee, HIT_TALLY_LAST);
}

static void drain(void)
{
	hit_drain_launches(tracee);
	hit_read_tallies(tracee, HIT_TALLY_LAST);
}

/* t stops at the int3 of function name, called from ret with the register arguments args (the
 * stack pointer at SP - depth). */
static void enter(struct thread *t, const char *name, uint64_t depth, uint64_t ret, const uint64_t args[6])
{
	struct bp b = { .addr = 0x600000, .slot = 0x601000, .kind = BP_PROBE, .armed = true, .ring = -1,
			.api = (int16_t)row(name) };
	arch_regs_t r;
	struct frame *timed = NULL;
	memset(&r, 0, sizeof r);
	r.rsp = SP - depth;
	*fake_word(r.rsp) = ret;
	r.rdi = args[0], r.rsi = args[1], r.rdx = args[2], r.rcx = args[3], r.r8 = args[4], r.r9 = args[5];
	hit_entry(tracee, t, &b, &r, &timed);
	if (timed)
		timed->t_entry = T0;
}

/* The call t entered at SP - depth returns retval through the trampoline at now. */
static int leave(struct thread *t, uint64_t depth, uint64_t retval, uint64_t now)
{
	arch_regs_t r;
	memset(&r, 0, sizeof r);
	r.rsp = SP - depth + 8;
	r.rax = retval;
	r.rip = FAKE_TRAMPOLINE + 1;
	return hit_return(tracee, t, &r, now);
}

/* A call the call stub recorded whole on the thread of thread pointer TP. */
static struct lr_call recorded(const char *name, uint64_t ret, uint64_t entry_tsc, uint64_t ret_tsc, uint64_t retval,
			       const uint64_t args[6], uint64_t out_value)
{
	struct lr_call c = { .key = 1, .ret = ret, .probe = (uint64_t)row(name) + 1, .thread = TP,
			     .entry_tsc = entry_tsc, .ret_tsc = ret_tsc, .retval = retval, .state = LR_CALL_RETURNED,
			     .out_value = out_value };
	memcpy(c.arg, args, sizeof c.arg);
	return c;
}

static const struct stats_kernel *kernel_named(const struct stats_snapshot *s, const char *name)
{
	for (size_t i = 0; i < s->n_kernel; i++)
		if (s->kernel[i].name && strcmp(s->kernel[i].name, name) == 0)
			return &s->kernel[i];
	return NULL;
}

/* ---- the cases ------------------------------------------------------------------------------------ */

static void allocations(void)
{
	struct thread *t = process(101);
	int malloc_row = row("cudaMalloc");

	enter(t, "cudaMalloc", 0, APP_RET, (uint64_t[6]){ OUT, 4096 });
	check(t->depth == 1 && *fake_word(SP) == FAKE_TRAMPOLINE,
	      "cudaMalloc at its int3: a frame, the return address swapped for the trampoline");
	*fake_word(OUT) = 0xdead0000;	/* not what a failed call made */
	check(leave(t, 0, 2, T0 + 5000) == malloc_row && t->depth == 0, "its return finds the frame");
	check(n_seen == 1 && seen[0].op == OP_ALLOC && seen[0].source == CALL_STOPPED && seen[0].returned &&
		      seen[0].result == 2 && seen[0].alloc.ptr == 0 && seen[0].counted,
	      "a failed cudaMalloc (2): one call, its error, no pointer");
	check(seen[0].ns == 5000 - STOP_COST && seen[0].end_ns == T0 + 5000 && seen[0].caller == APP_RET,
	      "its time (the stop's cost taken out), its end, its caller");
	struct stats_snapshot s = snap(101);
	check(s.api[malloc_row].calls == 1 && s.api[malloc_row].errors == 1 && s.live_count == 0 && s.allocs == 0,
	      "the figures: 1 call, 1 error, nothing live");
	stats_snapshot_free(&s);

	enter(t, "cudaMalloc", 0, APP_RET, (uint64_t[6]){ OUT, 4096 });
	*fake_word(OUT) = 0x10000000;
	leave(t, 0, 0, T0 + 3000);
	check(n_seen == 2 && seen[1].result == 0 && seen[1].alloc.ptr == 0x10000000 && seen[1].alloc.bytes == 4096 &&
		      seen[1].alloc.kind == MEM_DEVICE && seen[1].device == 0 && seen[1].thread_device == -1,
	      "a cudaMalloc that succeeded: its pointer read at the return, 4096 bytes on the default device");
	s = snap(101);
	check(s.api[malloc_row].calls == 2 && s.live_count == 1 && s.live_bytes[MEM_DEVICE] == 4096 &&
		      s.comm.dev[comm_dev_slot(0)].allocs == 1,
	      "the figures: 2 calls, 4096 bytes live, an allocation on device 0");
	stats_snapshot_free(&s);

	/* Frees through the call stub: one of a pointer never allocated, then the live one. */
	struct lr_call frees[] = {
		recorded("cudaFree", APP_RET, 100, 200, 0, (uint64_t[6]){ 0xbad0000 }, 0),
		recorded("cudaFree", APP_RET, 300, 450, 0, (uint64_t[6]){ 0x10000000 }, 0),
	};
	fake_calls(frees, 2, NULL, 0);
	collect(T0 + 10000);
	check(n_seen == 4 && seen[2].op == OP_FREE && seen[2].free_.ptr == 0xbad0000 && seen[2].source == CALL_RECORDED &&
		      seen[2].ns == 100 && seen[2].end_ns == 200 && seen[2].tid == 101,
	      "a recorded cudaFree: its pointer, its time and end from the stamps, its thread by its pointer");
	s = snap(101);
	check(s.api[row("cudaFree")].calls == 2 && s.frees == 1 && s.live_count == 0,
	      "the free of an unknown pointer counts as a call, not a free; the live one is freed");
	stats_snapshot_free(&s);
}

static void nesting(void)
{
	struct thread *t = process(102);
	int rt = row("cudaMalloc"), drv = row("cuMemAlloc_v2");

	/* At int3s: cudart calls the driver inside cudaMalloc. */
	enter(t, "cudaMalloc", 0, APP_RET, (uint64_t[6]){ OUT, 1 << 20 });
	enter(t, "cuMemAlloc_v2", 0x80, CUDA_RET, (uint64_t[6]){ OUT + 8, 1 << 20 });
	check(t->depth == 1, "cuMemAlloc_v2 called by cudart inside cudaMalloc: no frame of its own");
	*fake_word(OUT) = 0x20000000;
	leave(t, 0, 0, T0 + 2000);
	struct stats_snapshot s = snap(102);
	check(n_seen == 1 && seen[0].api == rt && s.api[rt].calls == 1 && s.api[drv].calls == 0 && s.live_count == 1,
	      "one allocation counted, the runtime's");
	stats_snapshot_free(&s);

	/* A driver call made from the program's own code (a callback) inside it is its own. */
	enter(t, "cudaMalloc", 0, APP_RET, (uint64_t[6]){ OUT, 64 });
	enter(t, "cuMemAlloc_v2", 0x80, APP_RET + 0x10, (uint64_t[6]){ OUT + 8, 32 });
	check(t->depth == 2, "cuMemAlloc_v2 called by the program inside cudaMalloc: a frame of its own");
	*fake_word(OUT + 8) = 0x21000000;
	leave(t, 0x80, 0, T0 + 1500);
	*fake_word(OUT) = 0x22000000;
	leave(t, 0, 0, T0 + 2000);
	s = snap(102);
	check(s.api[rt].calls == 2 && s.api[drv].calls == 1 && s.live_count == 3, "both count");
	stats_snapshot_free(&s);

	/* Recorded by the call stub: the driver call returned inside the runtime's, same thread. */
	n_seen = 0;
	struct lr_call calls[] = {
		recorded("cudaMalloc", APP_RET, 1000, 4000, 0, (uint64_t[6]){ OUT, 4096 }, 0x30000000),
		recorded("cuMemAlloc_v2", CUDA_RET, 2000, 3000, 0, (uint64_t[6]){ OUT + 8, 4096 }, 0x30000000),
	};
	fake_calls(calls, 2, NULL, 0);
	collect(T0 + 10000);
	check(n_seen == 1 && seen[0].api == rt && seen[0].alloc.ptr == 0x30000000 && seen[0].ns == 3000,
	      "records: the runtime's call counted, with the pointer the stub read; the driver's inside it not");

	/* The driver call returned while the runtime's was still in flight at the look. */
	n_seen = 0;
	struct lr_call in_flight = recorded("cudaMalloc", APP_RET, 5000, 0, 0, (uint64_t[6]){ OUT, 4096 }, 0);
	in_flight.state = LR_CALL_IN_FLIGHT;
	struct lr_call inner = recorded("cuMemAlloc_v2", CUDA_RET, 6000, 7000, 0, (uint64_t[6]){ OUT + 8, 4096 },
					0x31000000);
	fake_calls(&inner, 1, &in_flight, 1);
	collect(T0 + 20000);
	check(n_seen == 0, "records: a driver call inside a runtime call still in flight is not counted");
	struct lr_call outer = recorded("cudaMalloc", APP_RET, 5000, 8000, 0, (uint64_t[6]){ OUT, 4096 }, 0x31000000);
	fake_calls(&outer, 1, NULL, 0);
	collect(T0 + 30000);
	s = snap(102);
	check(n_seen == 1 && seen[0].api == rt && s.api[rt].calls == 4 && s.api[drv].calls == 1 && s.live_count == 5,
	      "records: the runtime call counts when it returns, once");
	stats_snapshot_free(&s);
}

static void graphs(void)
{
	struct thread *t = process(103);
	const uint64_t stream = 0x5, graph = 0x6a, exec = 0xe0, kernel = 0xf00, other = 0xf10;
	int drv_launch = row("cuLaunchKernel");

	kernels_learn_name(tracee, kernel, "captured");
	kernels_learn_name(tracee, other, "other");
	enter(t, "cudaStreamBeginCapture", 0, APP_RET, (uint64_t[6]){ stream });
	leave(t, 0, 0, T0 + 1000);
	fake_ring(drv_launch, (uint64_t[8]){ (uint64_t)drv_launch + 1, kernel, 16, 1, 1, 64, 1, 1 }, 3, 0, 0);
	drain();
	fake_ring(drv_launch, (uint64_t[8]){ (uint64_t)drv_launch + 1, other, 2, 1, 1, 32, 1, 1 }, 1, 0, 0);
	drain();
	check(n_seen == 5 && seen[1].source == CALL_RING && seen[1].held && seen[4].held && seen[1].tid == 0 &&
		      seen[1].launch.grid[0] == 16 && seen[1].launch.block[0] == 64,
	      "ring launches while a stream captures: held, with their dims, no thread");
	struct stats_snapshot s = snap(103);
	check(s.launches == 0 && s.api[drv_launch].calls == 4, "held launches count as calls, not launches");
	stats_snapshot_free(&s);

	/* The captured graph has the three launches of kernel as nodes: the fourth ran. */
	struct graph_query_node nodes[3];
	for (int i = 0; i < 3; i++)
		nodes[i] = (struct graph_query_node){ .type = GQ_TYPE_KERNEL, .kern = kernel, .grid = { 16, 1, 1 },
						      .block = { 64, 1, 1 } };
	fake_graph(graph, nodes, 3);
	*fake_word(OUT) = graph;
	enter(t, "cudaStreamEndCapture", 0, APP_RET, (uint64_t[6]){ stream, OUT });
	leave(t, 0, 0, T0 + 2000);
	s = snap(103);
	const struct stats_kernel *k = kernel_named(&s, "captured"), *o = kernel_named(&s, "other");
	check(k && o && k->launches == 0 && o->launches == 1 && s.launches == 1,
	      "at the capture's end: the nodes' launches are not launches, the other one is");
	stats_snapshot_free(&s);

	/* Instantiated and launched twice through the ring: each node runs each time. */
	*fake_word(OUT + 8) = exec;
	enter(t, "cudaGraphInstantiate", 0, APP_RET, (uint64_t[6]){ OUT + 8, graph });
	leave(t, 0, 0, T0 + 3000);
	int graph_launch = row("cuGraphLaunch");
	fake_ring(graph_launch, (uint64_t[8]){ (uint64_t)graph_launch + 1, exec }, 2, 0, 0);
	drain();
	s = snap(103);
	k = kernel_named(&s, "captured");
	check(s.graph_launches == 2 && k && k->graph_launches == 6 && s.n_graph == 1 && s.graph[0].kernel_nodes == 3,
	      "2 launches of the executable graph: 6 runs of its kernel");
	stats_snapshot_free(&s);
}

static void nccl_and_copies(void)
{
	struct thread *t = process(104);

	/* ncclAllReduce(send, recv, count, datatype, op, comm, stream): 1000 x ncclFloat32. */
	struct lr_call coll = recorded("ncclAllReduce", APP_RET, 100, 900, 0,
				       (uint64_t[6]){ 0x1000, 0x2000, 1000, 7, 0, 0xc0 }, 0);
	fake_calls(&coll, 1, NULL, 0);
	collect(T0);
	struct stats_snapshot s = snap(104);
	check(n_seen == 1 && seen[0].coll.bytes == 4000 && seen[0].coll.comm == 0xc0 && seen[0].coll.peer == -1 &&
		      s.comm.coll[COLL_ALLREDUCE].calls == 1 && s.comm.coll[COLL_ALLREDUCE].bytes == 4000,
	      "ncclAllReduce of 1000 floats: 4000 bytes on its communicator");
	stats_snapshot_free(&s);

	/* An allocation on device 0, cudaSetDevice(1), one on device 1, then copies between them. */
	struct lr_call setup[] = {
		recorded("cudaMalloc", APP_RET, 1000, 1100, 0, (uint64_t[6]){ OUT, 1 << 20 }, 0x40000000),
		recorded("cudaSetDevice", APP_RET, 1200, 1300, 0, (uint64_t[6]){ 1 }, 0),
		recorded("cudaMalloc", APP_RET, 1400, 1500, 0, (uint64_t[6]){ OUT, 1 << 20 }, 0x50000000),
	};
	fake_calls(setup, 3, NULL, 0);
	collect(T0);
	check(t->device == 1 && seen[1].device == 0 && seen[3].device == 1,
	      "cudaSetDevice(1): the thread's calls after it are on device 1");
	/* cudaMemcpy(dst, src, bytes, cudaMemcpyDefault): the pointers say D2D, from 0 to 1. */
	struct lr_call copies[] = {
		recorded("cudaMemcpy", APP_RET, 2000, 2500, 0, (uint64_t[6]){ 0x50000000, 0x40000000, 4096, 4 }, 0),
		recorded("cudaMemcpy", APP_RET, 3000, 3100, 0, (uint64_t[6]){ 0x40000010, 0x7000, 512, 1 }, 0),
	};
	fake_calls(copies, 2, NULL, 0);
	collect(T0);
	const struct cuda_call *d2d = &seen[4], *h2d = &seen[5];
	check(n_seen == 6 && d2d->copy.dir == DIR_D2D && d2d->copy.src_device == 0 && d2d->copy.dst_device == 1 &&
		      d2d->copy.bytes == 4096 && !d2d->copy.async,
	      "cudaMemcpyDefault between the two allocations: D2D from device 0 to device 1");
	check(h2d->copy.dir == DIR_H2D && h2d->copy.src_device == -1 && h2d->copy.dst_device == 0,
	      "cudaMemcpy kind 1: H2D into device 0's allocation");
	s = snap(104);
	check(s.xfer[COPY_SYNC][DIR_D2D].bytes == 4096 && s.xfer[COPY_SYNC][DIR_H2D].bytes == 512 &&
		      s.comm.p2p[comm_dev_slot(0)][comm_dev_slot(1)].bytes == 4096 &&
		      s.comm.dev[comm_dev_slot(0)].copy_bytes == 4096 + 512,
	      "the figures: the D2D copy is P2P from 0 to 1, both copies count on device 0");
	stats_snapshot_free(&s);
}

static void ring_and_entry(void)
{
	struct thread *t = process(105);
	int drv_launch = row("cuLaunchKernel");

	/* A driver launch at its int3, probed at its entry only: (f, gx, gy, gz, bx, by, [bz]). */
	kernels_learn_name(tracee, 0xabc, "entry_kernel");
	*fake_word(SP + 8) = 2;	/* bz, on the stack after the return address */
	enter(t, "cuLaunchKernel", 0, APP_RET, (uint64_t[6]){ 0xabc, 8, 1, 1, 32, 4 });
	check(t->depth == 0 && n_seen == 1 && seen[0].source == CALL_STOPPED && !seen[0].returned && seen[0].counted &&
		      seen[0].launch.block[2] == 2 && seen[0].launch.grid[0] == 8,
	      "cuLaunchKernel at its int3: counted at its entry, no frame, its dims (one from the stack)");
	/* 5 more whose records the full ring dropped: the launch stub counted each under its
	 * handle all the same. */
	fake_ring(drv_launch, (uint64_t[8]){ (uint64_t)drv_launch + 1, 0xabc, 8, 1, 1, 32, 4 }, 0, drv_launch, 5);
	drain();
	struct stats_snapshot s = snap(105);
	const struct stats_kernel *k = kernel_named(&s, "entry_kernel");
	check(k && k->launches == 6 && lost_n == 5 && s.api[drv_launch].lost == 5 && s.launches == 6 &&
		      s.api[drv_launch].calls == 6 && s.n_kernel == 1,
	      "5 launches the ring lost: told as lost, counted under their kernel all the same (the tallies)");
	stats_snapshot_free(&s);

	/* __cudaRegisterFunction(handle, stub, name, ...), recorded: it names, it is no call. */
	fake_put_string(OUT, "_Z6kernelPf");
	struct lr_call reg = recorded("__cudaRegisterFunction", CUDA_RET, 10, 20, 0, (uint64_t[6]){ 0, 0x4010, OUT }, 0);
	fake_calls(&reg, 1, NULL, 0);
	collect(T0);
	s = snap(105);
	const char *name = fake_kernel_name(0x4010);
	check(name && strcmp(name, "_Z6kernelPf") == 0 && n_seen == 1 && s.api[row("__cudaRegisterFunction")].calls == 0,
	      "a kernel's registration names its stub, and no consumer hears of it");
	stats_snapshot_free(&s);
}

int main(void)
{
	if (stats_init() < 0) {
		printf("not ok - stats_init\n");
		return 1;
	}
	account_add(&recorder);
	account_add(&stats_consumer);
	account_add(&graphs_consumer);
	allocations();
	nesting();
	graphs();
	nccl_and_copies();
	ring_and_entry();
	check(told_another_process == 0, "every call and loss is told with the process that made it");
	account_clear();
	stats_free();
	printf("# %d failure(s)\n", failures);
	return failures != 0;
}
