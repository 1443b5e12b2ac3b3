/* signals.c — gputop's own signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT ask for a detach, a
 * tick wakes waitpid, and the signal state gputop started with is kept for the program it
 * launches. The program's signals are not handled here: tracer.c passes them on. */
#define _GNU_SOURCE
#include "tracer_internal.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static struct {
	volatile sig_atomic_t stop_signal;	/* SIGINT/SIGTERM/SIGHUP/SIGQUIT received */
	volatile sig_atomic_t stop_from_terminal;	/* ... sent by the terminal driver */
	volatile pid_t launched;	/* the program gputop started, 0 in attach mode */
	pthread_t tracer_thread;
	timer_t tick_timer;
	bool tick_armed;
	uint64_t now_every;		/* the tick's period */
	/* The signal state gputop started with (save_signal_state). */
	bool own_ignored[10], rtmin_ignored, signal_state_saved;
	sigset_t original_mask;
} signals = { .now_every = 10000000 };

static void on_stop_signal(int sig, siginfo_t *si, void *ctx)
{
	bool from_terminal = si && si->si_code == SI_KERNEL;
	/* ^C and ^\ signal the whole foreground process group: in launch mode the program got the
	 * same signal (kill(1) says SI_USER instead). So does a hangup (the session leader exited,
	 * or the group was orphaned), unless gputop leads the session itself (a terminal or ssh ran
	 * it directly): then the kernel hangs up gputop alone, where without gputop the program
	 * would have led the session and got SIGHUP and SIGCONT; pass them on (issue 17). Either
	 * way gputop waits for the program and exits with its status. */
	pid_t program = signals.launched;	/* set once before any signal can matter */
	if (from_terminal && sig == SIGHUP && program > 0 && getsid(0) == getpid()) {
		kill(program, SIGHUP);
		kill(program, SIGCONT);
	}
	signals.stop_from_terminal = from_terminal;
	signals.stop_signal = sig;
}

void tracer_signals_launched(pid_t program)
{
	signals.launched = program;
}

int tracer_stop_signal(void)
{
	return signals.stop_signal;
}

bool tracer_stop_from_terminal(void)
{
	return signals.stop_from_terminal;
}

void tracer_stop_clear(void)
{
	signals.stop_signal = 0;
}

int tracer_take_stop_signal(void)
{
	int sig = signals.stop_signal;
	signals.stop_signal = 0;
	return sig;
}

static void on_tick(int sig)
{
	/* Only to interrupt waitpid. */
}

/* The signal state gputop started with, for the program it launches: dispositions of the
 * signals gputop handles itself (a handler becomes SIG_DFL at exec, but an inherited SIG_IGN,
 * as under nohup or in a background job, must stay SIG_IGN) and the signal mask. */
static const int own_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGSEGV, SIGBUS,
				   SIGABRT, SIGFPE, SIGILL };
#define N_OWN_SIGNALS (sizeof own_signals / sizeof own_signals[0])
_Static_assert(N_OWN_SIGNALS == sizeof signals.own_ignored, "own_ignored: one for each own signal");

static void save_signal_state(void)
{
	struct sigaction old;
	for (size_t i = 0; i < N_OWN_SIGNALS; i++)
		signals.own_ignored[i] = sigaction(own_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN;
	signals.rtmin_ignored = sigaction(SIGRTMIN, NULL, &old) == 0 && old.sa_handler == SIG_IGN;
	sigprocmask(SIG_SETMASK, NULL, &signals.original_mask);
	signals.signal_state_saved = true;
}

void tracer_restore_signal_state(void)
{
	if (!signals.signal_state_saved)
		return;
	for (size_t i = 0; i < N_OWN_SIGNALS; i++)
		signal(own_signals[i], signals.own_ignored[i] ? SIG_IGN : SIG_DFL);
	signal(SIGRTMIN, signals.rtmin_ignored ? SIG_IGN : SIG_DFL);
	sigprocmask(SIG_SETMASK, &signals.original_mask, NULL);
}

static bool was_ignored(int sig)
{
	for (size_t i = 0; i < N_OWN_SIGNALS; i++)
		if (own_signals[i] == sig)
			return signals.own_ignored[i];
	return false;
}

void tracer_install_signal_handlers(void)
{
	struct sigaction sa = { 0 };
	save_signal_state();
	sa.sa_sigaction = on_stop_signal;	/* no SA_RESTART: waitpid returns EINTR */
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	/* SIGTERM always detaches; SIGINT, SIGHUP and SIGQUIT unless gputop was started with them
	 * ignored (nohup, a background job), as every well-behaved Unix tool does. */
	const int detach_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	for (size_t i = 0; i < sizeof detach_signals / sizeof detach_signals[0]; i++)
		if (detach_signals[i] == SIGTERM || !was_ignored(detach_signals[i]))
			sigaction(detach_signals[i], &sa, NULL);
	sa.sa_flags = 0;
	sa.sa_handler = on_tick;
	sigaction(SIGRTMIN, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signals.tracer_thread = pthread_self();

	/* A tick every 10 ms to this thread, so requests and timeouts are seen while the
	 * program sleeps and nothing else wakes waitpid, and the launch ring is drained. */
	struct sigevent sev = { 0 };
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGRTMIN;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &signals.tick_timer) == 0) {
		struct itimerspec its = { { 0, 10000000 }, { 0, 10000000 } };
		timer_settime(signals.tick_timer, 0, &its, NULL);
		signals.tick_armed = true;
	}
}

void tracer_tick_every(uint64_t ns)
{
	if (!signals.tick_armed || ns == signals.now_every)
		return;
	struct itimerspec its = { { 0, (long)ns }, { 0, (long)ns } };
	if (timer_settime(signals.tick_timer, 0, &its, NULL) == 0)
		signals.now_every = ns;
}

void tracer_wake(void)
{
	pthread_kill(signals.tracer_thread, SIGRTMIN);
}
