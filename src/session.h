/* session.h — one tracing session from start to end, as the UI sees it: what is traced,
 * whether it still runs, and the requests the UI may make. The UI never calls ptrace;
 * it asks the session, and the tracer thread carries the request out. */
#ifndef GPUTOP_SESSION_H
#define GPUTOP_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum session_request {
	REQ_NONE,
	REQ_DETACH,	/* stop tracing; the program runs on */
	REQ_KILL,	/* launch mode: kill the program, then end */
};

struct session_status {
	pid_t pid;
	char command[256];	/* the program's command line, as in /proc/PID/cmdline */
	bool launched;		/* started by gputop (launch mode) */
	uint64_t start_ns;	/* monotonic time tracing began */
	bool cuda_seen;		/* a CUDA library is probed */
	bool ended;		/* tracing is over: the program exited, or gputop detached */
	bool exited;		/* the program ended: exit_status / term_signal tell how */
	int exit_status;	/* exit code, or 128 + signal */
	int term_signal;	/* signal that killed it, 0 if it exited */
	bool launches_estimated;	/* --max-overhead is shedding launch probes */
};

void session_status_get(struct session_status *out);
void session_request(enum session_request r);

#endif
