/* session_state.c — the session's status and requests, under one lock (session_state.h). */
#include "session_state.h"

#include <pthread.h>
#include <stdio.h>

static struct {
	pthread_mutex_t lock;
	struct session_status status;
	enum session_request pending;
	bool memory_snapshot;
	void (*wake)(void);
} session_state = { .lock = PTHREAD_MUTEX_INITIALIZER };

void session_status_get(struct session_status *out)
{
	pthread_mutex_lock(&session_state.lock);
	*out = session_state.status;
	pthread_mutex_unlock(&session_state.lock);
}

void session_set_waker(void (*waker)(void))
{
	session_state.wake = waker;
}

void session_request(enum session_request r)
{
	pthread_mutex_lock(&session_state.lock);
	if (r > session_state.pending)
		session_state.pending = r;
	pthread_mutex_unlock(&session_state.lock);
	if (session_state.wake)
		session_state.wake();
}

enum session_request session_take_request(void)
{
	pthread_mutex_lock(&session_state.lock);
	enum session_request r = session_state.pending;
	session_state.pending = REQ_NONE;
	pthread_mutex_unlock(&session_state.lock);
	return r;
}

void session_set_started(pid_t pid, bool launched, uint64_t start_ns, const char *command)
{
	pthread_mutex_lock(&session_state.lock);
	session_state.status.pid = pid;
	session_state.status.launched = launched;
	session_state.status.start_ns = start_ns;
	snprintf(session_state.status.command, sizeof session_state.status.command, "%s", command);
	pthread_mutex_unlock(&session_state.lock);
}

void session_set_cuda_before_attach(void)
{
	pthread_mutex_lock(&session_state.lock);
	session_state.status.cuda_before_attach = true;
	pthread_mutex_unlock(&session_state.lock);
}

void session_set_cuda_seen(void)
{
	pthread_mutex_lock(&session_state.lock);
	session_state.status.cuda_seen = true;
	pthread_mutex_unlock(&session_state.lock);
}

void session_set_ended(bool exited, int exit_status, int term_signal)
{
	pthread_mutex_lock(&session_state.lock);
	session_state.status.ended = true;
	session_state.status.exited = exited;
	session_state.status.exit_status = exit_status;
	session_state.status.term_signal = term_signal;
	pthread_mutex_unlock(&session_state.lock);
}

void session_ask_memory_snapshot(void)
{
	pthread_mutex_lock(&session_state.lock);
	session_state.memory_snapshot = true;
	pthread_mutex_unlock(&session_state.lock);
}

bool session_take_memory_snapshot(void)
{
	pthread_mutex_lock(&session_state.lock);
	bool asked = session_state.memory_snapshot;
	session_state.memory_snapshot = false;
	pthread_mutex_unlock(&session_state.lock);
	return asked;
}
