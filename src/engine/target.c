/* target.c — attach to a PID or launch a program, with clear errors: what went wrong, why,
 * and what to do. Nothing is left behind when it fails. */
#define _GNU_SOURCE
#include "target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exit_codes.h"
#include "fdlimit.h"
#include "procfs.h"
#include "log.h"
#include "seccomp.h"
#include "tracee_ctl.h"
#include "tracer.h"

#define PF_KTHREAD 0x00200000


/* A capability set of /proc/PID/status ("CapEff:", "CapPrm:"); 0 when unreadable. */
static unsigned long long caps_of(const char *status_path, const char *field)
{
	char buf[4096];
	if (proc_read_file(status_path, buf, sizeof buf) < 0)
		return 0;
	char *p = strstr(buf, field);
	return p ? strtoull(p + strlen(field), NULL, 16) : 0;
}

static bool has_cap_sys_ptrace(void)
{
	return caps_of("/proc/self/status", "CapEff:") & (1ull << 19);	/* CAP_SYS_PTRACE */
}

/* The kernel lets a process attach to one whose permitted capabilities are not a subset of its
 * own only with CAP_SYS_PTRACE: a root program, and a gputop (a sidecar) with capabilities
 * dropped. */
static bool holds_caps_we_lack(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	return caps_of(path, "CapPrm:") & ~caps_of("/proc/self/status", "CapPrm:");
}

/* Why is a ptrace attach refused? Say the likeliest reasons, in order. */
static void explain_eperm(pid_t pid)
{
	char buf[64];
	long uid = proc_status_field(pid, "Uid:");
	int scope = proc_read_file("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof buf) > 0 ? atoi(buf) : -1;
	bool has_ptrace = has_cap_sys_ptrace();
	if (uid >= 0 && uid != (long)getuid() && !has_ptrace) {
		log_error("cannot attach to %d: Operation not permitted: it belongs to user %ld, you are %d",
			  pid, uid, (int)getuid());
		log_hint("run gputop as that user, or with CAP_SYS_PTRACE (in a container: --cap-add=SYS_PTRACE), "
			 "or start the program under gputop (gputop -- PROGRAM)");
	} else if (scope >= 1 && !has_ptrace) {
		log_error("cannot attach to %d: Operation not permitted: kernel.yama.ptrace_scope is %d", pid,
			  scope);
		if (scope == 1)
			log_hint("only a parent may trace its children; start the program under gputop "
				 "(gputop -- PROGRAM), or: sudo sysctl kernel.yama.ptrace_scope=0");
		else
			log_hint("ptrace_scope %d allows %s; start the program under gputop (gputop -- PROGRAM)",
				 scope, scope == 2 ? "only CAP_SYS_PTRACE" : "no attaching at all");
	} else if (!has_ptrace && holds_caps_we_lack(pid)) {
		log_error("cannot attach to %d: Operation not permitted: it holds capabilities gputop lacks%s", pid,
			  uid == 0 ? " (it runs as root)" : "");
		log_hint("attaching to it takes CAP_SYS_PTRACE (in a container: --cap-add=SYS_PTRACE; Kubernetes: "
			 "capabilities add SYS_PTRACE, as root), or start the program under gputop (gputop -- PROGRAM)");
	} else {
		log_error("cannot attach to %d: Operation not permitted", pid);
		log_hint("a set-uid or non-dumpable program, or a container without CAP_SYS_PTRACE; "
			 "start the program under gputop instead (gputop -- PROGRAM)");
	}
}

static int check_pid(pid_t pid)
{
	char path[64], stat[1024];
	if (pid == getpid()) {
		log_error("cannot trace %d: that is gputop itself", pid);
		return EXIT_NO_PROCESS;
	}
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	if (proc_read_file(path, stat, sizeof stat) < 0) {
		log_error("cannot attach to %d: no such process", pid);
		return EXIT_NO_PROCESS;
	}
	/* Fields after the command name, which may hold spaces and parentheses. */
	char *p = strrchr(stat, ')');
	char state = 0;
	unsigned long flags = 0;
	if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2) {
		log_error("cannot attach to %d: cannot read %s", pid, path);
		return EXIT_NO_PROCESS;
	}
	if (flags & PF_KTHREAD) {
		log_error("cannot attach to %d: it is a kernel thread", pid);
		return EXIT_NO_PROCESS;
	}
	if ((state == 'Z' || state == 'X') && proc_status_field(pid, "Threads:") > 1) {
		/* Its main thread called pthread_exit; the others run on, but the kernel lets no
		 * tracer attach to the exited one, and its /proc files no longer show the memory. */
		log_error("cannot attach to %d: its main thread has exited (pthread_exit) while %ld other "
			  "threads run on; gputop cannot trace such a process", pid,
			  proc_status_field(pid, "Threads:") - 1);
		log_hint("start the program under gputop instead (gputop -- PROGRAM)");
		return EXIT_NO_PROCESS;
	}
	if (state == 'Z' || state == 'X') {
		log_error("cannot attach to %d: it has exited (a zombie waiting for its parent)", pid);
		return EXIT_NO_PROCESS;
	}
	if (proc_status_field(pid, "Tgid:") != pid) {
		log_error("cannot attach to %d: it is a thread of process %ld; give the process's PID", pid,
			  proc_status_field(pid, "Tgid:"));
		return EXIT_NO_PROCESS;
	}
	long tracer = proc_status_field(pid, "TracerPid:");
	if (tracer > 0) {
		char comm[64] = "?";
		snprintf(path, sizeof path, "/proc/%ld/comm", tracer);
		if (proc_read_file(path, comm, sizeof comm) > 0)
			comm[strcspn(comm, "\n")] = 0;
		log_error("cannot attach to %d: it is already traced by %ld (%s)", pid, tracer, comm);
		log_hint("only one tracer at a time: detach the other one (gdb, strace, ...) first");
		return EXIT_BUSY;
	}
	return 0;
}

int target_attach(pid_t pid)
{
	int code = check_pid(pid);
	if (!code)
		code = seccomp_check_target(pid);	/* before anything touches it */
	if (code)
		return code;
	int err = tracer_attach(pid);
	if (err == 0 && (code = seccomp_check_stopped(pid)) != 0)
		tracer_detach(tracee_of_pid(pid));	/* held, nothing written: let it go */
	if (err == 0)
		return code;
	if (err == -EPERM) {
		/* Another tracer may have won the race since the check. */
		if (proc_status_field(pid, "TracerPid:") > 0)
			return check_pid(pid);
		explain_eperm(pid);
		return EXIT_PERMISSION;
	}
	if (err == -ESRCH) {
		log_error("cannot attach to %d: it exited", pid);
		return EXIT_NO_PROCESS;
	}
	log_error("cannot attach to %d: %s", pid, strerror(-err));
	return EXIT_FAILURE_;
}

/* Where execvp would find it; the reason in errno when it would not. */
static bool find_program(const char *name, char *out, size_t size)
{
	struct stat st;
	if (strchr(name, '/')) {
		snprintf(out, size, "%s", name);
		if (stat(out, &st) < 0)
			return false;
		if (S_ISDIR(st.st_mode) || access(out, X_OK) < 0) {
			errno = S_ISDIR(st.st_mode) ? EISDIR : EACCES;
			return false;
		}
		return true;
	}
	const char *path = getenv("PATH");
	int saved = ENOENT;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, ":");
		snprintf(out, size, "%.*s/%s", (int)len, len ? p : ".", name);
		if (stat(out, &st) == 0 && !S_ISDIR(st.st_mode)) {
			if (access(out, X_OK) == 0)
				return true;
			saved = EACCES;
		}
		p += len + (p[len] == ':');
	}
	errno = saved;
	return false;
}

int target_launch(char **argv, int output_fd, pid_t *pid_out)
{
	char found[PATH_MAX];
	if (!find_program(argv[0], found, sizeof found)) {
		log_error("cannot run '%s': %s", argv[0], strerror(errno));
		return EXIT_NO_PROGRAM;
	}
	int code = seccomp_check_target(0);	/* gputop's own filters, which it would inherit */
	if (code)
		return code;
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		log_error("pipe: %s", strerror(errno));
		return EXIT_FAILURE_;
	}
	pid_t parent = getpid();
	pid_t child = fork();
	if (child < 0) {
		log_error("fork: %s", strerror(errno));
		return EXIT_FAILURE_;
	}
	if (child == 0) {
		/* The program gets the signal state it would have had without gputop (an inherited
		 * SIG_IGN stays, e.g. SIGHUP under nohup; gputop's own handlers go). */
		tracer_restore_signal_state();
		fdlimit_restore();	/* --listen raised gputop's */
		close(pipefd[0]);
		if (output_fd >= 0 && (dup2(output_fd, STDOUT_FILENO) < 0 || dup2(output_fd, STDERR_FILENO) < 0))
			_exit(127);
		/* Stopped until gputop has seized us; were gputop to die meanwhile, we would stay
		 * stopped for ever: the kernel kills us instead (issue 17). Cleared before the exec:
		 * the program must not die with gputop. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		raise(SIGSTOP);	/* gputop seizes us here */
		prctl(PR_SET_PDEATHSIG, 0);
		execv(found, argv);
		int err = errno;
		if (write(pipefd[1], &err, sizeof err) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	int child_errno = 0;
	int err = tracer_launch(child, pipefd[0], &child_errno);
	close(pipefd[0]);
	if (err == -ENOEXEC) {
		log_error("cannot run '%s': %s", argv[0], strerror(child_errno ? child_errno : ENOEXEC));
		return EXIT_NO_PROGRAM;
	}
	if (err < 0) {
		log_error("cannot trace '%s': %s", argv[0], strerror(-err));
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return EXIT_FAILURE_;
	}
	*pid_out = child;
	return 0;
}
