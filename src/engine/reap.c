/* reap.c — reaping a program that died while gputop held it (reap.h). Only exits are taken:
 * each thread's status is looked at first (WNOWAIT) and consumed only when it is an exit, so
 * that a stop of a thread still alive is never lost to the tracer. */
#define _GNU_SOURCE
#include "reap.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "event.h"
#include "log.h"
#include "threads.h"
#include "tracee.h"

#define DEAD_WAIT_TICKS 100	/* interrupted waits (10 ms ticks) on a dead leader: ~1 s */

/* 'Z' or 'X' in /proc/TID/stat: the thread has exited. */
static bool thread_exited(pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return true;	/* gone altogether */
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

/* Takes tid's exit if that is what it has to report; true if it did (status in *status). */
static bool take_exit(pid_t tid, int *status)
{
	siginfo_t si = { 0 };
	if (waitid(P_PID, (id_t)tid, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0 || si.si_pid != tid)
		return false;
	if (si.si_code != CLD_EXITED && si.si_code != CLD_KILLED && si.si_code != CLD_DUMPED)
		return false;	/* a stop: it lives */
	int st;
	if (waitpid(tid, &st, WNOHANG | __WALL) != tid)
		return false;
	if (status)
		*status = st;
	return true;
}

/* Reaps every dead thread of pid but the leader, and forgets it in p's table (NULL: none);
 * returns how many. */
static int reap_others(struct tracee *p, pid_t pid)
{
	char path[64];
	int reaped = 0;
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0 || tid == pid || !thread_exited(tid) || !take_exit(tid, NULL))
			continue;
		if (p)
			threads_remove(p, tid);
		reaped++;
	}
	closedir(d);
	return reaped;
}

bool reap_after_interrupted_wait(struct tracee *p, pid_t tid, bool stop_asked)
{
	if (!thread_exited(tid)) {
		p->dead_tid = 0;
		return false;	/* alive: running the call it was given */
	}
	int n = reap_others(p, p->pid);
	if (n)
		log_debug("%d died while gputop waited for its thread %d: reaped %d other threads", p->pid, tid, n);
	if (p->dead_tid != tid) {
		p->dead_tid = tid;
		p->dead_ticks = 0;
	}
	return stop_asked || ++p->dead_ticks > DEAD_WAIT_TICKS;
}

bool reap_dead_program(struct tracee *p, pid_t pid, int *exit_code, int *term_signal, int wait_ms)
{
	struct timespec nap = { 0, 5000000 };
	for (int waited = 0;; waited += 5) {
		if (waited > wait_ms)
			return false;
		if (!thread_exited(pid)) {
			if (!wait_ms)
				return false;	/* the leader lives */
			nanosleep(&nap, NULL);
			continue;	/* it may be on its way out */
		}
		reap_others(p, pid);
		int status;
		if (take_exit(pid, &status)) {
			struct trace_stop e;
			event_decode(pid, status, &e);
			*term_signal = e.event == TE_KILLED ? e.sig : 0;
			*exit_code = e.event == TE_KILLED ? 128 + e.sig : e.code;
			if (p)
				threads_remove(p, pid);
			return true;
		}
		char path[64];
		snprintf(path, sizeof path, "/proc/%d", pid);
		if (access(path, F_OK) < 0)
			return false;	/* reaped already, elsewhere */
		nanosleep(&nap, NULL);
	}
	return false;
}
