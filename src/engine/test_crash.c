/* test_crash.c — the crash the robustness tests ask for (test_crash.h). */
#include "test_crash.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "config.h"

static void *crash_thread(void *arg)
{
	raise(SIGSEGV);	/* this thread's: as a crash of the UI thread would be */
	return arg;
}

void test_crash_now(void)
{
	pthread_t th;
	if (config.crash_in_thread && pthread_create(&th, NULL, crash_thread, NULL) == 0) {
		pthread_join(th, NULL);	/* the rescue comes to this thread as a signal */
		return;
	}
	if (config.crash_signal == SIGABRT)
		abort();
	raise(config.crash_signal ? config.crash_signal : SIGSEGV);
}
