/* account.h — the one place a CUDA call is delivered. Every source (a stop at a probe and its
 * return, the call stub's records, the launch ring) makes the call's event (cuda/cuda_call.h)
 * and hands it here; account_call keeps what the engine learns from it (kernel names,
 * contexts, the thread's current device), asks whether a capture holds it, and tells the
 * consumers the session registered at start-up (struct cuda_consumer: the figures, devices,
 * call stacks, PyTorch's memory, --trace, --timeline, the CUDA graphs), as perf's session tells
 * its struct perf_tool. The tracer's thread only. */
#ifndef GPUTOP_ACCOUNT_H
#define GPUTOP_ACCOUNT_H

#include <stdint.h>

#include "cuda_call.h"

struct thread;
struct tracee;

/* Consumers are told in the order added, at most ACCOUNT_MAX_CONSUMERS (more are refused,
 * said once each). The table holds the pointer: a consumer lives as long as the session. */
#define ACCOUNT_MAX_CONSUMERS 16
void account_add(const struct cuda_consumer *c);
void account_clear(void);

/* The call c of process p's thread t (a stand-in for a thread not known; NULL for a ring
 * launch). Calls come in the order they returned, each once. */
void account_call(struct tracee *p, struct thread *t, struct cuda_call *c);
/* n calls of row api whose records the stubs of process p could not keep (a full ring). */
void account_lost(struct tracee *p, int api, uint64_t n);
/* What the stubs of process p tallied in place since the last read (engine/hit_tallies.c): a
 * probe's calls, and n more launches of a handle (kernel: its id; -1 for a graph). */
void account_tally(struct tracee *p, const struct cuda_tally *tally);
void account_launched(struct tracee *p, const struct api_spec *s, uint64_t handle, int kernel, uint64_t n,
		      const struct cuda_quiet *q);
/* Whether a consumer wants every kernel launch's record (struct cuda_consumer.launch_records). */
bool account_wants_launch_records(void);
/* Process p was drained (engine/hit_drain.h), and its image is gone (an exec): each consumer's
 * .drained and .gone. */
void account_drained(struct tracee *p, bool tallied);
void account_gone(struct tracee *p);

#endif
