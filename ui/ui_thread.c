/* ui_thread.c — the UI's own thread (ui.h): the TUI or batch mode run there, beside the tracer,
 * which keeps every signal to gputop. */
#include "ui.h"

#include <pthread.h>
#include <signal.h>

static void *ui_main(void *arg)
{
	const struct ui_thread *u = arg;
	if (u->batch)
		batch_run(&u->opt);
	else
		tui_run(&u->opt);
	return NULL;
}

int ui_start(struct ui_thread *u, const struct ui_options *opt, bool batch)
{
	*u = (struct ui_thread){ .opt = *opt, .batch = batch };
	/* Signals to gputop belong to the tracer thread: they must interrupt its waitpid. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&u->thread, NULL, ui_main, u);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	u->running = err == 0;
	return -err;
}

void ui_join(struct ui_thread *u)
{
	if (u->running)
		pthread_join(u->thread, NULL);
	u->running = false;
}
