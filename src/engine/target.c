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

#include "cli.h"
#include "log.h"
#include "seccomp.h"
#include "tracer.h"

#define PF_KTHREAD 0x00200000

static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, size - 1);
	int err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = 0;
	return (int)n;
}

static long status_field(pid_t pid, const char *key)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	if (read_file(path, buf, sizeof buf) < 0)
		return -1;
	char *p = strstr(buf, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

void target_command(pid_t pid, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
	int n = read_file(path, buf, size);
	if (n <= 0) {
		snprintf(path, sizeof path, "/proc/%d/comm", pid);
		n = read_file(path, buf, size);
		if (n > 0 && buf[n - 1] == '\n')
			buf[n - 1] = 0;
		if (n <= 0)
			snprintf(buf, size, "?");
		return;
	}
	for (int i = 0; i < n - 1; i++)
		if (!buf[i])
			buf[i] = ' ';
}

static bool has_cap_sys_ptrace(void)
{
	char buf[4096];
	if (read_file("/proc/self/status", buf, sizeof buf) < 0)
		return false;
	char *p = strstr(buf, "CapEff:");
	unsigned long long eff = p ? strtoull(p + 7, NULL, 16) : 0;
	return eff & (1ull << 19);	/* CAP_SYS_PTRACE */
}

/* Why is a ptrace attach refused? Say the likeliest reasons, in order. */
static void explain_eperm(pid_t pid)
{
	char buf[64];
	long uid = status_field(pid, "Uid:");
	int scope = read_file("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof buf) > 0 ? atoi(buf) : -1;
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
	if (read_file(path, stat, sizeof stat) < 0) {
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
	if ((state == 'Z' || state == 'X') && status_field(pid, "Threads:") > 1) {
		/* Its main thread called pthread_exit; the others run on, but the kernel lets no
		 * tracer attach to the exited one, and its /proc files no longer show the memory. */
		log_error("cannot attach to %d: its main thread has exited (pthread_exit) while %ld other "
			  "threads run on; gputop cannot trace such a process", pid,
			  status_field(pid, "Threads:") - 1);
		log_hint("start the program under gputop instead (gputop -- PROGRAM)");
		return EXIT_NO_PROCESS;
	}
	if (state == 'Z' || state == 'X') {
		log_error("cannot attach to %d: it has exited (a zombie waiting for its parent)", pid);
		return EXIT_NO_PROCESS;
	}
	if (status_field(pid, "Tgid:") != pid) {
		log_error("cannot attach to %d: it is a thread of process %ld; give the process's PID", pid,
			  status_field(pid, "Tgid:"));
		return EXIT_NO_PROCESS;
	}
	long tracer = status_field(pid, "TracerPid:");
	if (tracer > 0) {
		char comm[64] = "?";
		snprintf(path, sizeof path, "/proc/%ld/comm", tracer);
		if (read_file(path, comm, sizeof comm) > 0)
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
		tracer_detach();	/* held, nothing written: let it go */
	if (err == 0)
		return code;
	if (err == -EPERM) {
		/* Another tracer may have won the race since the check. */
		if (status_field(pid, "TracerPid:") > 0)
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

/* The processes below pid, parents before their children: up to max, found in /proc. */
int target_descendants(pid_t pid, pid_t *out, int max)
{
	enum { SCAN_MAX = 65536 };
	static pid_t procs[SCAN_MAX], parents[SCAN_MAX];
	int n = 0, found = 0;
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	for (struct dirent *e; n < SCAN_MAX && (e = readdir(d));) {
		pid_t p = (pid_t)atoi(e->d_name);
		long pp;
		char path[64];
		snprintf(path, sizeof path, "/proc/%d", p);
		if (p > 0 && (pp = status_field(p, "PPid:")) >= 0) {
			procs[n] = p;
			parents[n++] = (pid_t)pp;
		}
	}
	closedir(d);
	/* Breadth first from pid: each round adds the children of what was found before. */
	out[0] = pid;
	int done = 0, total = 1;
	while (done < total && total < max + 1) {
		pid_t parent = out[done++];
		for (int i = 0; i < n && total < max + 1; i++)
			if (parents[i] == parent)
				out[total++] = procs[i];
	}
	found = total - 1;
	memmove(out, out + 1, (size_t)found * sizeof *out);
	return found;
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
