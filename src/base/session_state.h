/* session_state.h — what the tracer thread and the UI share: the session's status and the
 * requests the UI makes (detach, kill). A mailbox under a lock, below both: the UI reads it and
 * posts requests, the tracer writes it and takes them; neither calls the other. */
#ifndef GPUTOP_SESSION_STATE_H
#define GPUTOP_SESSION_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum session_request {
	REQ_NONE,
	REQ_DETACH,	/* stop tracing; the program runs on */
	REQ_COUNT_DONE,	/* -n's count of tables ran out: as REQ_DETACH, and a program that never
			 * loaded CUDA is then exit status 7, as at --timeout */
	REQ_KILL,	/* launch mode: kill the program, then end */
};

struct session_status {
	pid_t pid;
	char command[256];	/* the program's command line, as in /proc/PID/cmdline */
	bool launched;		/* started by gputop (launch mode) */
	uint64_t start_ns;	/* monotonic time tracing began */
	bool cuda_seen;		/* a CUDA library is probed */
	bool cuda_before_attach;	/* attached to a program that had loaded CUDA already: what
					 * it allocated before the attach is not seen */
	bool ended;		/* tracing is over: the program exited, or gputop detached */
	bool exited;		/* the program ended: exit_status / term_signal tell how */
	int exit_status;	/* exit code, or 128 + signal */
	int term_signal;	/* signal that killed it, 0 if it exited */
};

/* A program gputop starts loads CUDA in its first moments: one that has not after this long
 * is news, said then (the session on stderr, the TUI's status line), not at every launch. */
#define NO_CUDA_NEWS_NS 2000000000ull

/* The UI's side. */
void session_status_get(struct session_status *out);
void session_request(enum session_request r);

/* The tracer's side. waker is called after each request (it wakes the tracer out of waitpid). */
void session_set_waker(void (*waker)(void));
enum session_request session_take_request(void);
void session_set_started(pid_t pid, bool launched, uint64_t start_ns, const char *command);
void session_set_cuda_before_attach(void);
void session_set_cuda_seen(void);
void session_set_ended(bool exited, int exit_status, int term_signal);

/* A snapshot of PyTorch's memory asked for (the TUI's key): posted by the UI, taken once by
 * the tracer at its next drain (probe/torch_shot_read.c). */
void session_ask_memory_snapshot(void);
bool session_take_memory_snapshot(void);

#endif
