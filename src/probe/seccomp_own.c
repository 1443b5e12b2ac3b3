/* seccomp_own.c — gputop's own filters, tried by a child per feature (seccomp_own.h). The
 * children do what the program would be made to do: the trampoline's mappings, a getpid, the
 * park's gettid and timed futex wait, and for --gpu-time a dlopen of gputop's library and a
 * thread that does what the library's does. */
#define _GNU_SOURCE
#include "seccomp_own.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procfs.h"
#include "threads.h"
#include "gputime_find.h"

#define CAP_SYS_ADMIN_BIT 21
#define PROBE_TIMEOUT_NS 2000000000ull

/* gputop's own seccomp state and what it found it may do. */
static struct {
	struct seccomp_state own;		/* mode -2 until read */
	int tried[SECCOMP_FEATURES];		/* 0 untried, 1 allowed, -1 not */
	char why[SECCOMP_FEATURES][96];
} self = { .own = { -2, 0 } };

static long status_number(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static void parse_state(const char *buf, struct seccomp_state *s)
{
	s->mode = (int)status_number(buf, "\nSeccomp:");
	s->filters = (int)status_number(buf, "\nSeccomp_filters:");
}

static int read_state(const char *path, struct seccomp_state *s)
{
	char buf[4096];
	int err = proc_read_file(path, buf, sizeof buf);
	if (err < 0)
		return err;
	parse_state(buf, s);
	return 0;
}

int seccomp_thread_state(pid_t tid, struct seccomp_state *s)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", tid);
	return read_state(path, s);
}

int seccomp_thread_state_of(struct thread *t, struct seccomp_state *s)
{
	char path[64], buf[4096];
	if (t->status_fd < 0) {
		snprintf(path, sizeof path, "/proc/%d/status", t->tid);
		t->status_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (t->status_fd < 0)	/* out of descriptors: read by its path */
			return errno == EMFILE || errno == ENFILE ? seccomp_thread_state(t->tid, s) : -errno;
	}
	ssize_t n = pread(t->status_fd, buf, sizeof buf - 1, 0);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	parse_state(buf, s);
	return 0;
}

const struct seccomp_state *seccomp_own_state(void)
{
	if (self.own.mode == -2 && read_state("/proc/self/status", &self.own) < 0)
		self.own = (struct seccomp_state){ -1, -1 };
	return &self.own;
}

static bool has_cap_sys_admin(void)
{
	char buf[4096];
	if (proc_read_file("/proc/self/status", buf, sizeof buf) < 0)
		return false;
	const char *p = strstr(buf, "CapEff:");
	return p && (strtoull(p + 7, NULL, 16) >> CAP_SYS_ADMIN_BIT & 1);
}

bool seccomp_own_can_read_filters(void)
{
	return seccomp_own_state()->mode <= 0 && has_cap_sys_admin();
}

/* ---- what each feature does, in a child ------------------------------------------------------ */

static int try_inject(void)
{
	void *a = mmap(NULL, SECCOMP_AREA, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || munmap(a, SECCOMP_AREA) < 0)
		return 1;
	void *b = mmap(a, SECCOMP_AREA, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (b != a || munmap(b, SECCOMP_AREA) < 0)
		return 2;
	void *w = mmap(NULL, SECCOMP_AREA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED || munmap(w, SECCOMP_AREA) < 0)
		return 3;
	return 0;
}

static int try_call_return(void)
{
	return syscall(SYS_getpid) == getpid() ? 0 : 1;
}

/* As arch_park: its tid (the child has one thread: its pid), a timed wait that finds the word
 * changed (EAGAIN: the call ran). */
static int try_park(void)
{
	uint32_t word = 0;
	struct timespec wait = { 0, 1000 };
	if (syscall(SYS_gettid) != getpid())
		return 1;
	long r = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 1, &wait, NULL, 0);
	return r < 0 && errno == EAGAIN ? 0 : 2;
}

/* What libgputop-gpu.so's thread does, short of CUPTI: named, its tid, /proc read, a nap. */
static void *gpu_thread(void *arg)
{
	char buf[2048];
	struct timespec nap = { 0, 1000 };
	(void)arg;
	prctl(PR_SET_NAME, "gputop-probe");
	if (syscall(SYS_gettid) <= 0 || proc_read_file("/proc/thread-self/status", buf, sizeof buf) < 0)
		return (void *)1;
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || syscall(SYS_getdents64, fd, buf, sizeof buf) < 0)
		return (void *)2;
	close(fd);
	nanosleep(&nap, NULL);
	return NULL;
}

static int try_gpu_time(void)
{
	char lib[PATH_MAX];
	if (gputime_find_library(lib, sizeof lib) < 0)
		return 0;	/* nothing to load: --gpu-time says so by itself */
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 1;
	pthread_t th;
	void *ret = (void *)1;
	if (pthread_create(&th, NULL, gpu_thread, NULL) != 0 || pthread_join(th, &ret) != 0 || ret)
		return 2;
	dlclose(h);
	return 0;
}

static int (*const tries[SECCOMP_FEATURES])(void) = {
	[SECCOMP_INJECT] = try_inject, [SECCOMP_CALL_RETURN] = try_call_return,
	[SECCOMP_PARK] = try_park, [SECCOMP_GPU_TIME] = try_gpu_time,
};

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Bounded: a filter that asks a supervisor may never answer. */
bool seccomp_own_allows(enum seccomp_feature f)
{
	if (f >= SECCOMP_FEATURES)
		return false;
	if (self.tried[f])
		return self.tried[f] > 0;
	self.tried[f] = -1;
	pid_t c = fork();
	if (c < 0) {
		snprintf(self.why[f], sizeof self.why[f], "cannot fork to try: %s", strerror(errno));
		return false;
	}
	if (c == 0) {
		/* gputop's crash handler puts the program back: not this child's business. */
		const int crash[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGSYS };
		for (size_t i = 0; i < sizeof crash / sizeof crash[0]; i++)
			signal(crash[i], SIG_DFL);
		_exit(tries[f]());
	}
	int status = 0;
	struct timespec nap = { 0, 2000000 };
	for (uint64_t start = mono_ns();;) {
		pid_t w = waitpid(c, &status, WNOHANG | __WALL);
		if (w == c)
			break;
		if (w < 0 && errno != EINTR)
			return false;
		if (mono_ns() - start > PROBE_TIMEOUT_NS) {
			kill(c, SIGKILL);
			while (waitpid(c, &status, __WALL) < 0 && errno == EINTR)
				;
			snprintf(self.why[f], sizeof self.why[f], "a child of gputop making them never returned");
			return false;
		}
		nanosleep(&nap, NULL);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		self.tried[f] = 1;
		return true;
	}
	if (WIFSIGNALED(status))
		snprintf(self.why[f], sizeof self.why[f], "a child of gputop making them was killed by SIG%s",
			 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "a signal");
	else
		snprintf(self.why[f], sizeof self.why[f], "a child of gputop making them got an error");
	return false;
}

const char *seccomp_own_why(enum seccomp_feature f)
{
	return f < SECCOMP_FEATURES ? self.why[f] : "";
}
