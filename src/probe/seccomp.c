/* seccomp.c — may gputop make the program run a system call (seccomp.h)? What gputop can show:
 *   - the thread runs under no filter (Seccomp: 0 in /proc/TID/status): allowed;
 *   - strict mode (Seccomp: 1): only read, write, exit and sigreturn run: never;
 *   - filters gputop can read (PTRACE_SECCOMP_GET_FILTER: gputop has CAP_SYS_ADMIN and runs
 *     under no filter itself; the thread is held): every filter of the thread is run on the very
 *     call (seccomp_eval.c), as the kernel would; allowed when the answer is SECCOMP_RET_ALLOW
 *     or SECCOMP_RET_LOG. Anything else (kill, trap, errno, a supervisor's answer) is refused;
 *   - filters gputop cannot read: allowed only when the thread runs under exactly as many
 *     filters as gputop itself and gputop's own filters allow the calls (a child of gputop makes
 *     them first). That is a container's filter, which every process in it inherits, and in
 *     launch mode the program's filters until it installs one of its own: filters are only
 *     ever added, so the same count means the same filters there. In attach mode, two different
 *     filters of the same depth cannot be told apart without reading them; a program that
 *     installs a filter of its own always has one more than gputop.
 * --trust-seccomp goes on where gputop cannot show it, never where a filter is shown to refuse.
 * This file never writes into the program: it reads /proc and asks ptrace for the filters. */
#define _GNU_SOURCE
#include "seccomp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arch.h"
#include "exit_codes.h"
#include "log.h"
#include "seccomp_eval.h"

#define CAP_SYS_ADMIN_BIT 21
#define MAX_FILTERS 64
#define PROBE_TIMEOUT_NS 2000000000ull
#define AREA 65536

/* A thread's seccomp state: mode (-1 when the kernel does not say) and how many filters. */
struct seccomp_state {
	int mode;
	int filters;
};

struct filter_set {
	int n;
	struct sock_filter *prog[MAX_FILTERS];	/* [0] is the newest, as ptrace numbers them */
	size_t len[MAX_FILTERS];
};

/* The calls gputop may make the program run (xol.c, retfast.c, launchring.c): checked all at
 * once before anything is written, and each again with its real arguments when it is made. */
static const struct planned_call {
	long nr;
	uint64_t args[6];
} planned[] = {
	{ SYS_mmap, { 0, AREA, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 } },
	{ SYS_mmap, { 0x10000000, AREA, PROT_READ | PROT_EXEC,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, (uint64_t)-1, 0 } },
	{ SYS_mmap, { 0, AREA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 } },
	{ SYS_munmap, { 0x10000000, AREA, 0, 0, 0, 0 } },
};

static bool trust, refused, trust_said;
static struct seccomp_state own = { -2, 0 };	/* gputop's own; mode -2 until read */
static int own_probe = -1;	/* gputop's own filters let a child make the calls: 1, 0; -1 untried */
static char own_probe_why[96];
static int inject_warnings;

void seccomp_set_trust(bool t)
{
	trust = t;
}

bool seccomp_refused(void)
{
	return refused;
}

/* ---- reading /proc ------------------------------------------------------------------------- */

static long status_number(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static int read_state(const char *path, struct seccomp_state *s)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	int err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = 0;
	s->mode = (int)status_number(buf, "\nSeccomp:");
	s->filters = (int)status_number(buf, "\nSeccomp_filters:");
	return 0;
}

static int thread_state(pid_t tid, struct seccomp_state *s)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", tid);
	return read_state(path, s);
}

static bool has_cap_sys_admin(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	const char *p = strstr(buf, "CapEff:");
	return p && (strtoull(p + 7, NULL, 16) >> CAP_SYS_ADMIN_BIT & 1);
}

static void read_own(void)
{
	if (own.mode != -2)
		return;
	if (read_state("/proc/self/status", &own) < 0)
		own = (struct seccomp_state){ -1, -1 };
}

/* The kernel hands a tracer the filters only with CAP_SYS_ADMIN, and only to one that runs
 * under no filter itself. */
static bool can_read_filters(void)
{
	read_own();
	return own.mode <= 0 && has_cap_sys_admin();
}

/* ---- gputop's own filters -------------------------------------------------------------------- */

static void probe_child(void)
{
	void *a = mmap(NULL, AREA, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || munmap(a, AREA) < 0)
		_exit(1);
	void *b = mmap(a, AREA, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (b != a || munmap(b, AREA) < 0)
		_exit(2);
	void *w = mmap(NULL, AREA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED || munmap(w, AREA) < 0)
		_exit(3);
	_exit(0);
}

/* Do gputop's own filters let a process make the calls? A child of gputop (same filters) makes
 * them; it must neither die nor fail. Bounded: a filter that asks a supervisor may never answer. */
static bool own_filters_allow(void)
{
	if (own_probe >= 0)
		return own_probe;
	own_probe = 0;
	pid_t c = fork();
	if (c < 0) {
		snprintf(own_probe_why, sizeof own_probe_why, "cannot fork to try: %s", strerror(errno));
		return false;
	}
	if (c == 0)
		probe_child();
	int status = 0;
	struct timespec start, now, nap = { 0, 2000000 };
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		pid_t w = waitpid(c, &status, WNOHANG);
		if (w == c)
			break;
		if (w < 0 && errno != EINTR)
			return false;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((uint64_t)(now.tv_sec - start.tv_sec) * 1000000000ull + (uint64_t)now.tv_nsec -
			    (uint64_t)start.tv_nsec > PROBE_TIMEOUT_NS) {
			kill(c, SIGKILL);
			while (waitpid(c, &status, 0) < 0 && errno == EINTR)
				;
			snprintf(own_probe_why, sizeof own_probe_why, "a child of gputop making them never returned");
			return false;
		}
		nanosleep(&nap, NULL);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		own_probe = 1;
		return true;
	}
	if (WIFSIGNALED(status))
		snprintf(own_probe_why, sizeof own_probe_why, "a child of gputop making them was killed by SIG%s",
			 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "a signal");
	else
		snprintf(own_probe_why, sizeof own_probe_why, "a child of gputop making them got an error");
	return false;
}

/* ---- the filters themselves ------------------------------------------------------------------ */

static void filters_free(struct filter_set *fs)
{
	for (int i = 0; i < fs->n; i++)
		free(fs->prog[i]);
	fs->n = 0;
}

/* Every filter of the held thread tid, newest first. 0 or -errno (EACCES: not permitted). */
static int filters_fetch(pid_t tid, struct filter_set *fs)
{
	fs->n = 0;
	for (int i = 0; i < MAX_FILTERS; i++) {
		long len = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)(long)i, NULL);
		if (len < 0 && errno == ENOENT && i > 0)
			return 0;
		if (len <= 0) {
			int err = len < 0 ? -errno : -EINVAL;
			filters_free(fs);
			return err;
		}
		struct sock_filter *prog = calloc((size_t)len, sizeof *prog);
		if (!prog || ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)(long)i, prog) != len) {
			free(prog);
			filters_free(fs);
			return -ENOMEM;
		}
		fs->prog[i] = prog;
		fs->len[i] = (size_t)len;
		fs->n = i + 1;
	}
	filters_free(fs);
	return -E2BIG;
}

/* What the filters answer to the call, as the kernel combines them; *which gets the filter
 * that decided (0 = newest). A filter gputop cannot run answers as a kill. */
static uint32_t filters_run(const struct filter_set *fs, long nr, const uint64_t args[6], uint64_t ip,
			    int *which, bool *unreadable)
{
	struct seccomp_data d = { .nr = (int)nr, .arch = arch_seccomp_arch, .instruction_pointer = ip };
	memcpy(d.args, args, sizeof d.args);
	uint32_t answer = SECCOMP_RET_ALLOW;
	*which = -1;
	*unreadable = false;
	for (int i = 0; i < fs->n; i++) {	/* newest first, as the kernel: the first of equals wins */
		uint32_t r;
		if (seccomp_eval_run(fs->prog[i], fs->len[i], &d, &r) < 0) {
			r = SECCOMP_RET_KILL_PROCESS;
			*unreadable = true;
		}
		if (*which < 0 || seccomp_eval_combine(answer, r) != answer) {
			answer = seccomp_eval_combine(answer, r);
			*which = i;
		}
	}
	return answer;
}

/* "mmap(PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_ANONYMOUS)", for messages. */
static const char *describe_call(long nr, const uint64_t args[6], char *buf, size_t size)
{
	if (nr == SYS_mmap) {
		uint64_t prot = args[2], flags = args[3];
		snprintf(buf, size, "mmap(PROT_READ%s%s, MAP_PRIVATE|MAP_ANONYMOUS%s)",
			 prot & PROT_WRITE ? "|PROT_WRITE" : "", prot & PROT_EXEC ? "|PROT_EXEC" : "",
			 flags & MAP_FIXED_NOREPLACE ? "|MAP_FIXED_NOREPLACE" : "");
	} else if (nr == SYS_munmap) {
		snprintf(buf, size, "munmap");
	} else {
		snprintf(buf, size, "system call %ld", nr);
	}
	return buf;
}

/* ---- decisions -------------------------------------------------------------------------------- */

enum verdict { V_ALLOWED, V_UNKNOWN, V_REFUSED };

/* A filter gputop cannot read: the same as gputop's own, and those allow the calls? */
static enum verdict judge_unread(const struct seccomp_state *s)
{
	read_own();
	if (own.mode == 2 && s->filters >= 0 && s->filters == own.filters && own_filters_allow())
		return V_ALLOWED;
	return V_UNKNOWN;
}

/* Says why the filters of the held thread tid refuse one of the calls (error at attach, warning
 * later); V_ALLOWED, or V_UNKNOWN when they cannot be read. */
static enum verdict judge_read(pid_t pid, pid_t tid, const struct planned_call *calls, size_t n_calls,
			       uint64_t ip, bool at_attach, bool say)
{
	struct filter_set fs;
	int err = filters_fetch(tid, &fs);
	if (err < 0) {
		log_debug("cannot read the seccomp filters of %d: %s", tid, strerror(-err));
		return V_UNKNOWN;
	}
	enum verdict v = V_ALLOWED;
	for (size_t i = 0; i < n_calls && v == V_ALLOWED; i++) {
		int which;
		bool unreadable;
		uint32_t answer = filters_run(&fs, calls[i].nr, calls[i].args, ip, &which, &unreadable);
		if (seccomp_eval_allows(answer))
			continue;
		v = V_REFUSED;
		if (!say)
			break;
		char call[96];
		describe_call(calls[i].nr, calls[i].args, call, sizeof call);
		if (at_attach)
			log_error("cannot trace %d: its seccomp filter %d of %d (newest first, %zu BPF "
				  "instructions, thread %d) answers %s%s to %s, a call gputop must make it run",
				  pid, which + 1, fs.n, fs.len[which], tid, seccomp_eval_action_name(answer),
				  unreadable ? " (a filter gputop cannot evaluate)" : "", call);
		else
			log_warn("not making thread %d run %s: its seccomp filter %d of %d (%zu BPF "
				 "instructions) answers %s%s", tid, call, which + 1, fs.n, fs.len[which],
				 seccomp_eval_action_name(answer),
				 unreadable ? " (a filter gputop cannot evaluate)" : "");
	}
	filters_free(&fs);
	return v;
}

/* At attach (call NULL): an error and what to do. Later: a warning naming the call not made. */
static void say_unknown(pid_t pid, pid_t tid, const struct seccomp_state *s, const char *call)
{
	read_own();
	char own_desc[192];
	if (own.mode == 2)
		snprintf(own_desc, sizeof own_desc, "gputop runs under %d filter%s%s%s", own.filters,
			 own.filters == 1 ? "" : "s", own_filters_allow() ? "" : ", and ",
			 own_filters_allow() ? "" : own_probe_why);
	else
		snprintf(own_desc, sizeof own_desc, "gputop runs under none");
	if (call) {
		log_warn("not making thread %d run %s: it runs under a seccomp filter gputop cannot read "
			 "(Seccomp_filters: %d; %s)", tid, call, s->filters, own_desc);
		return;
	}
	log_error("cannot trace %d: thread %d runs under a seccomp filter gputop cannot read (Seccomp: 2, "
		  "Seccomp_filters: %d; %s): gputop cannot show that it allows the mmap and munmap calls "
		  "gputop must make the program run", pid, tid, s->filters, own_desc);
	log_hint("reading a filter needs CAP_SYS_ADMIN and gputop itself under no filter; "
		 "--trust-seccomp goes on anyway (a filter that forbids executable mappings then "
		 "kills the program with SIGSYS). Nothing was changed in %d: it runs on", pid);
}

static void say_trusted(pid_t pid)
{
	if (trust_said)
		return;
	trust_said = true;
	log_warn("--trust-seccomp: making %d run mmap and munmap under a seccomp filter gputop cannot read",
		 pid);
}

static int refuse(void)
{
	refused = true;
	return EXIT_SECCOMP;
}

int seccomp_check_target(pid_t pid)
{
	read_own();
	if (pid == 0) {
		/* Launch mode: the program starts under gputop's own filters. */
		if (own.mode == 2 && !own_filters_allow()) {
			log_error("cannot trace a program here: gputop itself runs under a seccomp filter "
				  "(Seccomp_filters: %d) that forbids the calls gputop would make the program "
				  "run (%s), and the program would inherit it; it was not started",
				  own.filters, own_probe_why);
			return refuse();
		}
		return 0;
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;	/* gone: the attach says so */
	int code = 0;
	for (struct dirent *e; !code && (e = readdir(d));) {
		pid_t tid = (pid_t)atoi(e->d_name);
		struct seccomp_state s;
		if (tid <= 0 || thread_state(tid, &s) < 0 || s.mode <= 0)
			continue;
		if (s.mode == 1) {
			log_error("cannot trace %d: thread %d runs in seccomp strict mode (Seccomp: 1), where "
				  "any system call but read, write, exit and sigreturn kills it", pid, tid);
			log_hint("nothing was changed in %d: it runs on", pid);
			code = refuse();
		} else if (can_read_filters()) {
			continue;	/* read and run once it is held: seccomp_check_stopped */
		} else if (judge_unread(&s) == V_UNKNOWN) {
			if (trust) {
				say_trusted(pid);
				continue;
			}
			say_unknown(pid, tid, &s, NULL);
			code = refuse();
		}
	}
	closedir(d);
	return code;
}

int seccomp_check_stopped(pid_t pid)
{
	if (!can_read_filters())
		return 0;	/* decided by seccomp_check_target */
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int code = 0;
	for (struct dirent *e; !code && (e = readdir(d));) {
		pid_t tid = (pid_t)atoi(e->d_name);
		struct seccomp_state s;
		if (tid <= 0 || thread_state(tid, &s) < 0 || s.mode != 2)
			continue;
		/* The instruction pointer is not known yet: 0 here, the real one at each call. */
		enum verdict v = judge_read(pid, tid, planned, sizeof planned / sizeof planned[0], 0, true, true);
		if (v == V_UNKNOWN)
			v = judge_unread(&s);
		if (v == V_REFUSED) {
			log_hint("gputop never makes a program run a call its filter refuses. Nothing was "
				 "changed in %d: it runs on", pid);
			code = refuse();
		} else if (v == V_UNKNOWN && trust) {
			say_trusted(pid);
		} else if (v == V_UNKNOWN) {
			say_unknown(pid, tid, &s, NULL);
			code = refuse();
		}
	}
	closedir(d);
	return code;
}

int seccomp_check_inject(pid_t tid, long nr, const uint64_t args[6], uint64_t gadget_addr)
{
	struct seccomp_state s;
	if (thread_state(tid, &s) < 0 || s.mode <= 0)
		return 0;	/* no filter (or no thread: the call fails by itself) */
	bool say = inject_warnings < 3;
	enum verdict v;
	if (s.mode == 1) {
		v = V_REFUSED;
		if (say)
			log_warn("not making %d run a system call: it runs in seccomp strict mode", tid);
	} else {
		struct planned_call call = { .nr = nr };
		memcpy(call.args, args, sizeof call.args);
		v = can_read_filters() ? judge_read(tid, tid, &call, 1, arch_syscall_ip(gadget_addr), false, say)
				       : V_UNKNOWN;
		if (v == V_UNKNOWN)
			v = judge_unread(&s);
		if (v == V_UNKNOWN && trust) {
			say_trusted(tid);
			return 0;
		}
		if (v == V_UNKNOWN && say) {
			char desc[96];
			say_unknown(tid, tid, &s, describe_call(nr, args, desc, sizeof desc));
		}
	}
	if (v == V_ALLOWED)
		return 0;
	inject_warnings++;
	refused = true;
	return -EPERM;
}
