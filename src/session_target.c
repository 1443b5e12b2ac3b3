/* session_target.c — what a session traces (session_target.h). */
#define _GNU_SOURCE
#include "session_target.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "config.h"
#include "exit_codes.h"
#include "gputime.h"
#include "gputime_find.h"
#include "launch_check.h"
#include "log.h"
#include "probes.h"
#include "procfs.h"
#include "reap.h"
#include "seccomp.h"
#include "session_state.h"
#include "target.h"
#include "tracee_ctl.h"
#include "tracer.h"

/* --gpu-time: gputop's library is there, and GPUTOP_CUPTI, if set, names a file in the file
 * system of the program to attach to, pid (another mount namespace: a container's), or in
 * gputop's own for a program it starts. */
static int gpu_time_check(pid_t pid)
{
	char lib[PATH_MAX];
	if (gputime_find_library(lib, sizeof lib) < 0) {
		log_error("--gpu-time: %s is missing", lib);
		log_hint("it is built with gputop where CUDA's CUPTI headers are (make CUDA=/path/to/cuda)");
		return -1;
	}
	const char *cupti = config.cupti_path;
	if (cupti && !gputime_file_there(pid, cupti)) {
		log_error("GPUTOP_CUPTI=%s: %s%s", cupti, strerror(errno), pid ? " (in the program's file system)" : "");
		return -1;
	}
	gputime_enable(lib);
	config.gpu_time = true;
	return 0;
}

/* AT_SECURE: the kernel says this exec gained privilege, which also covers file capabilities
 * (setcap cap_sys_ptrace+ep), where the ids stay the user's. */
static bool privileged(void)
{
	if (geteuid() == getuid() && getegid() == getgid() && !getauxval(AT_SECURE))
		return false;
	log_error("refusing to run set-uid, set-gid or with file capabilities: gputop must not "
		  "have more privilege than you");
	return true;
}

int session_check_target(const struct options *opt)
{
	int code;
	if (privileged())
		return EXIT_PERMISSION;
	if (!opt->pid && (code = launch_check(opt->argv[0])) != 0)
		return code;
	if (opt->gpu_time && gpu_time_check(opt->pid) < 0)
		return EXIT_FAILURE_;
	return 0;
}

int session_take_target(const struct options *opt, int output_fd, pid_t *pid)
{
	if (opt->pid) {
		*pid = opt->pid;
		return target_attach(opt->pid);
	}
	return target_launch(opt->argv, output_fd, pid);
}

/* The other processes of -p PID,PID... (all or none: a PID that cannot be attached ends the
 * session, as a bad first one does), then with --children the descendants of each (those
 * that cannot be attached are said and skipped: they may have ended meanwhile). */
int session_attach_more(const struct options *opt)
{
	for (int i = 1; i < opt->n_pids; i++) {
		tracer_space_attach();
		int code = target_attach(opt->pids[i]);
		if (code)
			return code;
		if (tracer_start_another(tracee_of_pid(opt->pids[i])) < 0) {
			log_error("cannot probe %d", opt->pids[i]);
			return EXIT_FAILURE_;
		}
		log_info("attached to %d", opt->pids[i]);
	}
	for (int i = 0; opt->children && i < opt->n_pids; i++) {
		pid_t below[256];
		int n = proc_descendants(opt->pids[i], below, 255);
		for (int k = 0; k < n; k++) {
			if (tracer_traces(below[k]))
				continue;
			tracer_space_attach();
			if (target_attach(below[k]) != 0 || tracer_start_another(tracee_of_pid(below[k])) < 0)
				log_warn("child %d of %d is not traced", below[k], opt->pids[i]);
			else
				log_info("attached to %d, a descendant of %d", below[k], opt->pids[i]);
		}
	}
	return 0;
}

/* tracer_start failed. If the program died meanwhile (a seccomp filter's SIGSYS at an injected
 * call, kill -9...), say how, once its threads are reaped. A launched program still alive is
 * stopped before its first instruction: it is killed rather than left to run behind gputop's
 * back once gputop has exited; an attached one is let go as it was. */
int session_start_failed(const struct options *opt, pid_t pid, int err)
{
	int code = 0, sig = 0;
	bool dead = tracer_exited(&code, &sig);
	/* ESRCH: a thread of it vanished under gputop; the rest of it may still be on its way out. */
	if (!dead && reap_dead_program(tracee_of_pid(pid), pid, &code, &sig, err == -ESRCH ? 2000 : 0))
		dead = true;
	if (dead && sig)
		log_error("%d was killed by SIG%s while gputop was attaching%s", pid,
			  sigabbrev_np(sig) ? sigabbrev_np(sig) : "?",
			  sig == SIGSYS ? ": a seccomp filter (it forbids a system call gputop made it run)" : "");
	else if (dead)
		log_error("%d exited with status %d while gputop was attaching", pid, code);
	if (dead)
		return opt->pid ? EXIT_FAILURE_ : code;
	if (opt->pid) {
		tracer_detach(tracee_of_pid(pid));
	} else {
		kill(pid, SIGKILL);
		reap_dead_program(tracee_of_pid(pid), pid, &code, &sig, 2000);
		log_error("'%s' was not run", opt->argv[0]);
	}
	return seccomp_refused() ? EXIT_SECCOMP : EXIT_FAILURE_;
}

/* Whether process pid has a CUDA library mapped (libcudart or libcuda, by the file's name). */
static bool maps_cuda(pid_t pid)
{
	char path[64], *line = NULL;
	size_t size = 0;
	bool found = false;

	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	while (f && !found && getline(&line, &size, f) > 0) {
		const char *name = strrchr(line, '/');
		found = name && (strncmp(name, "/libcudart.so", 13) == 0 || strncmp(name, "/libcuda.so", 11) == 0);
	}
	free(line);
	if (f)
		fclose(f);
	return found;
}

/* Attached without --children to a process with no CUDA (a launcher, a shell, torchrun's
 * agent): where its descendants have CUDA, they are what the user wanted to see. */
static void hint_children(pid_t pid)
{
	pid_t below[256];
	int n = proc_descendants(pid, below, 255), cuda = 0;
	pid_t first = 0;

	for (int i = 0; i < n; i++)
		if (maps_cuda(below[i]) && !cuda++)
			first = below[i];
	if (cuda)
		log_hint("%d of its descendants use%s CUDA (%d%s): --children traces them (gputop -p %d --children)",
			 cuda, cuda == 1 ? "s" : "", first, cuda > 1 ? ", ..." : "", pid);
	else if (n)
		log_hint("it has %d descendant%s: --children traces them too, once they load CUDA", n, n == 1 ? "" : "s");
}

/* No CUDA library in the program yet: said once, in these words, at the attach or when a
 * program gputop started has loaded none after NO_CUDA_NEWS_NS. */
static void say_no_cuda(pid_t pid)
{
	log_info("no CUDA library in %d yet: waiting for one to load", pid);
}

void session_say_target(const struct options *opt, pid_t pid, const char *command)
{
	if (opt->pid)
		log_info("attached to %d (%s)", pid, command);
	if (opt->pid && !probes_cuda_seen(tracee_of_pid(pid))) {	/* a running program: news at once */
		say_no_cuda(pid);
		if (!opt->children && !opt->quiet)
			hint_children(pid);
	} else if (!opt->pid) {
		tracer_on_no_cuda(NO_CUDA_NEWS_NS, say_no_cuda);
	}
}

int session_target_status(const struct options *opt, pid_t pid, int err)
{
	int exit_code = 0, sig = 0;
	bool exited = tracer_exited(&exit_code, &sig);
	if (tracer_timed_out_without_cuda()) {
		log_error("%d never loaded a CUDA library", pid);
		return EXIT_NO_CUDA;
	}
	if (err < 0)
		return EXIT_FAILURE_;
	if (!opt->pid && exited)
		return exit_code;
	return gputime_refused() ? EXIT_SECCOMP : EXIT_OK;	/* --gpu-time refused */
}
