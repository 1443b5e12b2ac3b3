/* fake_tracee.h — a traced process without a process, for the unit tests of the engine's hot
 * path (test_account.c, test_trap.c): `tracee` with its parts (threads, hit), its breakpoints
 * (struct bp the test makes), which return addresses lie in a CUDA module, kernel names by
 * handle, the call stub's records and the launch ring's the test hands in, and the nodes the
 * driver says a graph has; its memory is fake_memory.h's. fake_tracee.c defines every function
 * of the probe layer (and symbols) that hit.c, hit_records.c, hit_graphs.c, kernel_names.c and
 * trap.c's breakpoint lookup call, answered from these: no ptrace, no program. */
#ifndef GPUTOP_FAKE_TRACEE_H
#define GPUTOP_FAKE_TRACEE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fake_memory.h"
#include "graph_query.h"
#include "launchring.h"

struct bp;
/* The trampoline's address (the int3 every swapped return address points to). */
#define FAKE_TRAMPOLINE 0x7000ull

/* The test's process, handed to the functions under test. */
extern struct tracee *tracee;
/* Makes `tracee` a fresh fake process pid (its threads' table, its hit part), its memory
 * cleared (fake_memory.h) and no breakpoint. */
void fake_tracee_init(pid_t pid);
/* Return addresses in [lo, hi) are inside a CUDA module (probes_in_scope). */
void fake_cuda_module(uint64_t lo, uint64_t hi);
/* What the call stub recorded since the last look (hit_collect_returns takes them), and the calls
 * still in flight then. A record's probe is its API row + 1. The records done are tallied as the
 * stub would (arch/tally.c: hit_read_tallies reads them), as are the ring's launches below,
 * recorded or lost (their handle: w's). */
void fake_calls(const struct lr_call *done, int n_done, const struct lr_call *in_flight, int n_in_flight);
/* What the launch ring holds for the next drain (hit_drain_launches): n records of row api of
 * words w (stub_layout.h: probe + 1, the six register arguments, the first stack one), and
 * lost calls of row lost_api (n_lost 0: none). */
void fake_ring(int api, const uint64_t w[8], int n, int lost_api, uint64_t n_lost);
/* The nodes the driver lists for graph. */
void fake_graph(uint64_t graph, const struct graph_query_node *nodes, uint32_t n);
/* b is a breakpoint of the process (bp_find, bp_iter), until the next fake_tracee_init. */
void fake_bp(struct bp *b);
/* The name learned last for a handle (kernels_learn_*), NULL if none. */
const char *fake_kernel_name(uint64_t handle);

#endif
