/* session.h — one session from the parsed command line to gputop's exit status: the target
 * attached or launched, the tracer loop, the UI, the summary and the JSON. The top of gputop:
 * only main.c calls it. */
#ifndef GPUTOP_SESSION_H
#define GPUTOP_SESSION_H

#include "cli.h"

/* Returns gputop's exit status. */
int session_run(const struct options *opt);

#endif
