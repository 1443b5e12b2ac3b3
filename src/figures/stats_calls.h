/* stats_calls.h — the figures as consumers of calls (cuda/cuda_call.h): the statistics (calls,
 * errors and time per API function, allocations, launches, graph launches, copies, memsets,
 * synchronizes, lost records) and the call-stack sites (stacks.h). Registered by the session
 * (engine/account.h). */
#ifndef GPUTOP_STATS_CALLS_H
#define GPUTOP_STATS_CALLS_H

#include "cuda_call.h"

extern const struct cuda_consumer stats_consumer;
extern const struct cuda_consumer stacks_consumer;

#endif
