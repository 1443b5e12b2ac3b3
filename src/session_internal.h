/* session_internal.h — the session's side of the tracer/UI boundary: what the tracer thread
 * reports to the session and takes from it. */
#ifndef GPUTOP_SESSION_INTERNAL_H
#define GPUTOP_SESSION_INTERNAL_H

#include "cli.h"
#include "session.h"

enum session_request session_take_request(void);
void session_set_cuda_seen(void);
void session_set_launches_estimated(void);

/* Runs a whole session from the parsed command line; returns gputop's exit status. */
int session_run(const struct options *opt);

#endif
