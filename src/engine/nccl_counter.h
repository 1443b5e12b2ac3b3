/* nccl_counter.h — NCCL's own count of a communicator's collectives, found in its memory by value
 * (--dump): the field of the communicator that grew by exactly the collectives gputop saw on it,
 * between quiet moments (no collective in flight, none returned while its memory was read), at
 * least three with different counts, one field left. Then a rank's
 * position is known from its communicator's start, collectives before the attach included.
 * Where it cannot be checked (several communicators, point-to-point calls, records lost, no quiet
 * moment, no single field), the position is counted since the attach, and why is said. Reads
 * memory only, at the tracer's drains; never stops a thread. */
#ifndef GPUTOP_NCCL_COUNTER_H
#define GPUTOP_NCCL_COUNTER_H

#include "cuda_call.h"

struct job;
struct tracee;

/* Counts each process's collectives and looks for the field at each drain (added with --dump). */
extern const struct cuda_consumer nccl_counter_consumer;

/* Process p held (tracer_detach): the field's value now into j's entry for p, checked once more
 * against gputop's count, or why there is none. */
void nccl_counter_take(struct job *j, struct tracee *p);

#endif
