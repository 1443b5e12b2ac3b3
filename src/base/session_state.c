/* session_state.c — the session's status and requests, under one lock (session_state.h). */
#include "session_state.h"

#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct session_status status;
static enum session_request pending;
static void (*wake)(void);

void session_status_get(struct session_status *out)
{
	pthread_mutex_lock(&lock);
	*out = status;
	pthread_mutex_unlock(&lock);
}

void session_set_waker(void (*waker)(void))
{
	wake = waker;
}

void session_request(enum session_request r)
{
	pthread_mutex_lock(&lock);
	if (r > pending)
		pending = r;
	pthread_mutex_unlock(&lock);
	if (wake)
		wake();
}

enum session_request session_take_request(void)
{
	pthread_mutex_lock(&lock);
	enum session_request r = pending;
	pending = REQ_NONE;
	pthread_mutex_unlock(&lock);
	return r;
}

void session_set_started(pid_t pid, bool launched, uint64_t start_ns, const char *command)
{
	pthread_mutex_lock(&lock);
	status.pid = pid;
	status.launched = launched;
	status.start_ns = start_ns;
	snprintf(status.command, sizeof status.command, "%s", command);
	pthread_mutex_unlock(&lock);
}

void session_set_cuda_seen(void)
{
	pthread_mutex_lock(&lock);
	status.cuda_seen = true;
	pthread_mutex_unlock(&lock);
}

void session_set_ended(bool exited, int exit_status, int term_signal)
{
	pthread_mutex_lock(&lock);
	status.ended = true;
	status.exited = exited;
	status.exit_status = exit_status;
	status.term_signal = term_signal;
	pthread_mutex_unlock(&lock);
}
