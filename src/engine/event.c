/* event.c — wait statuses decoded into trace events, in one place (event.h). */
#define _GNU_SOURCE
#include "event.h"

#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

static int is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

void event_decode(pid_t tid, int status, struct trace_stop *e)
{
	*e = (struct trace_stop){ .tid = tid, .status = status, .event = TE_OTHER };
	if (WIFEXITED(status)) {
		e->event = TE_EXITED;
		e->code = WEXITSTATUS(status);
		return;
	}
	if (WIFSIGNALED(status)) {
		e->event = TE_KILLED;
		e->sig = WTERMSIG(status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	e->sig = WSTOPSIG(status);
	switch (status >> 16) {
	case 0:
		e->event = TE_SIGNAL;
		break;
	case PTRACE_EVENT_STOP:
		e->event = is_stop_signal(e->sig) ? TE_GROUP_STOP : TE_EVENT_STOP;
		break;
	case PTRACE_EVENT_CLONE:
		e->event = TE_CLONE;
		break;
	case PTRACE_EVENT_FORK:
		e->event = TE_FORK;
		break;
	case PTRACE_EVENT_VFORK:
		e->event = TE_VFORK;
		break;
	case PTRACE_EVENT_VFORK_DONE:
		e->event = TE_VFORK_DONE;
		break;
	case PTRACE_EVENT_EXEC:
		e->event = TE_EXEC;
		break;
	case PTRACE_EVENT_EXIT:
		e->event = TE_EXIT;
		break;
	}
}

pid_t event_wait(pid_t who, int options, struct trace_stop *e)
{
	int status;
	pid_t tid = waitpid(who, &status, __WALL | options);
	if (tid < 0)
		return -errno;
	if (tid == 0) {
		*e = (struct trace_stop){ .event = TE_NONE };
		return 0;
	}
	event_decode(tid, status, e);
	return tid;
}
