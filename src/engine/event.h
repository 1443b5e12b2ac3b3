/* event.h — the one decoder of wait statuses: every waitpid of the engine goes through
 * event_wait, which turns the status into one trace_event (strace's next_event). */
#ifndef GPUTOP_EVENT_H
#define GPUTOP_EVENT_H

#include <sys/types.h>

enum trace_event {
	TE_NONE,		/* WNOHANG and nothing to report */
	TE_EXITED,		/* the thread exited: code */
	TE_KILLED,		/* killed by signal sig */
	TE_SIGNAL,		/* signal-delivery-stop of sig (SIGTRAP: maybe ours) */
	TE_GROUP_STOP,		/* PTRACE_EVENT_STOP for a stop signal: stays stopped until SIGCONT */
	TE_EVENT_STOP,		/* PTRACE_EVENT_STOP otherwise: PTRACE_INTERRUPT, a new thread */
	TE_CLONE,
	TE_FORK,
	TE_VFORK,
	TE_VFORK_DONE,
	TE_EXEC,
	TE_EXIT,		/* PTRACE_EVENT_EXIT: about to exit, memory still there */
	TE_OTHER,		/* a ptrace event gputop does not ask for */
};

struct trace_stop {
	pid_t tid;
	int status;		/* as waitpid gave it */
	enum trace_event event;
	int sig;		/* the stop's or the killing signal */
	int code;		/* exit code (TE_EXITED) */
};

/* Decodes a waitpid status of tid. */
void event_decode(pid_t tid, int status, struct trace_stop *out);
/* waitpid(who, __WALL | options) decoded into *out. Returns the tid, 0 (WNOHANG, nothing:
 * TE_NONE) or -errno (-EINTR: a signal to gputop came first; the caller decides). */
pid_t event_wait(pid_t who, int options, struct trace_stop *out);

static inline int event_is_end(const struct trace_stop *e)
{
	return e->event == TE_EXITED || e->event == TE_KILLED;
}

#endif
