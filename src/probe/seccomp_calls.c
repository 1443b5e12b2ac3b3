/* seccomp_calls.c — the table of the system calls gputop makes a program run (seccomp_calls.h).
 * SECCOMP_GPU_TIME lists what strace showed glibc 2.36's dlopen of libgputop-gpu.so, its
 * gputop_gpu_start and its thread making, with CUPTI (the simulated one) loaded by that thread
 * and unloaded again (tests: the same list runs in a child of gputop, seccomp_own.c). A real
 * CUPTI makes more, through the CUDA driver the program already uses. */
#define _GNU_SOURCE
#include "seccomp_calls.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <linux/prctl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#define A SECCOMP_AREA
#define AT 0x10000000ull	/* a stand-in address */
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)
#define FILE_MAP (MAP_PRIVATE | MAP_DENYWRITE)
#define NO_FD ((uint64_t)-1)
#define FD 3
#define CALL(n, ...) { .nr = n, .args = { __VA_ARGS__ } }
#define MAY_FAIL(n, ...) { .nr = n, .args = { __VA_ARGS__ }, .may_fail = true }
#define THREAD_FLAGS (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | \
		      CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)

static const struct seccomp_call inject[] = {
	CALL(SYS_mmap, 0, A, PROT_READ | PROT_EXEC, ANON, NO_FD, 0),
	CALL(SYS_mmap, AT, A, PROT_READ | PROT_EXEC, ANON | MAP_FIXED_NOREPLACE, NO_FD, 0),
	CALL(SYS_mmap, 0, A, PROT_READ | PROT_WRITE, ANON, NO_FD, 0),
	CALL(SYS_munmap, AT, A),
};

static const struct seccomp_call call_return[] = {
	CALL(SYS_getpid),
};

/* arch/x86_64_launch.S, arch_park: its tid for gputop, then 1 ms waits on its slot's word. (A
 * full ring or call table never waits: no system call.) */
static const struct seccomp_call park[] = {
	CALL(SYS_gettid),
	CALL(SYS_futex, AT, FUTEX_WAIT_PRIVATE, 1, AT + 64, 0, 0),
};

static const struct seccomp_call gpu_time[] = {
	/* dlopen: the file, its segments, its relocations made read-only */
	CALL(SYS_openat, (uint64_t)AT_FDCWD, AT, O_RDONLY | O_CLOEXEC),
	CALL(SYS_read, FD, AT, 832),
	CALL(SYS_pread64, FD, AT, 784, 64),
	CALL(SYS_newfstatat, FD, AT, AT, AT_EMPTY_PATH),
	CALL(SYS_fstat, FD, AT),
	CALL(SYS_mmap, 0, A, PROT_READ, FILE_MAP, FD, 0),
	CALL(SYS_mmap, AT, A, PROT_READ | PROT_EXEC, FILE_MAP | MAP_FIXED, FD, 4096),
	CALL(SYS_mmap, AT, A, PROT_READ | PROT_WRITE, FILE_MAP | MAP_FIXED, FD, 4096),
	CALL(SYS_mmap, AT, A, PROT_READ | PROT_WRITE, ANON | MAP_FIXED, NO_FD, 0),
	CALL(SYS_close, FD),
	CALL(SYS_mprotect, AT, 4096, PROT_READ),
	/* gputop_gpu_start: its thread, every signal blocked */
	CALL(SYS_getpid),
	CALL(SYS_rt_sigprocmask, SIG_SETMASK, AT, AT, 8),
	CALL(SYS_rt_sigaction, 33, AT, 0, 8),
	CALL(SYS_mmap, 0, 8392704, PROT_NONE, ANON | MAP_STACK, NO_FD, 0),
	CALL(SYS_mprotect, AT, 8388608, PROT_READ | PROT_WRITE),
	MAY_FAIL(SYS_clone3, AT, 88),	/* refused with ENOSYS (Docker's): glibc uses clone */
	MAY_FAIL(SYS_clone, THREAD_FLAGS, AT, AT, AT, AT),
	/* the thread: set up by glibc, named, looking at /proc, sleeping, CUPTI loaded */
	MAY_FAIL(SYS_rseq, AT, 32, 0, 0x53053053),	/* glibc goes on without it */
	CALL(SYS_set_robust_list, AT, 24),
	CALL(SYS_prctl, PR_SET_NAME, AT),
	CALL(SYS_gettid),
	CALL(SYS_openat, (uint64_t)AT_FDCWD, AT, O_RDONLY | O_CLOEXEC | O_DIRECTORY),
	CALL(SYS_getdents64, FD, AT, 8192),
	CALL(SYS_clock_nanosleep, CLOCK_REALTIME, 0, AT, 0),
	CALL(SYS_nanosleep, AT, 0),
	CALL(SYS_mmap, 0, 134217728, PROT_NONE, ANON | MAP_NORESERVE, NO_FD, 0),	/* malloc's arena */
	CALL(SYS_brk, 0),
	CALL(SYS_munmap, AT, A),
	CALL(SYS_futex, AT, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, 1, 0, 0, FUTEX_BITSET_MATCH_ANY),
	CALL(SYS_futex, AT, FUTEX_WAKE_PRIVATE, 1),
	/* its end: dlclose, the thread's stack given back, the thread gone */
	CALL(SYS_madvise, AT, 8368128, MADV_DONTNEED),
	CALL(SYS_exit, 0),
};

#define FEATURE(f, text, rows) [f] = { text, rows, sizeof rows / sizeof rows[0] }
static const struct seccomp_feature_calls features[SECCOMP_FEATURES] = {
	FEATURE(SECCOMP_INJECT, "the mmap and munmap calls gputop must make it run", inject),
	FEATURE(SECCOMP_CALL_RETURN, "the getpid through which a call gputop makes there returns", call_return),
	FEATURE(SECCOMP_PARK, "the stubs' park (a kernel's first launch, --stacks) and waits for room", park),
	FEATURE(SECCOMP_GPU_TIME, "loading --gpu-time's library and CUPTI", gpu_time),
};

const struct seccomp_feature_calls *seccomp_feature_calls(enum seccomp_feature f)
{
	return f < SECCOMP_FEATURES ? &features[f] : NULL;
}

const char *seccomp_call_name(long nr, char *buf, size_t size)
{
	static const struct { long nr; char name[24]; } names[] = {
		{ SYS_mmap, "mmap" }, { SYS_munmap, "munmap" }, { SYS_getpid, "getpid" },
		{ SYS_gettid, "gettid" }, { SYS_futex, "futex" }, { SYS_openat, "openat" },
		{ SYS_read, "read" }, { SYS_pread64, "pread64" }, { SYS_newfstatat, "newfstatat" },
		{ SYS_fstat, "fstat" }, { SYS_close, "close" }, { SYS_mprotect, "mprotect" },
		{ SYS_rt_sigprocmask, "rt_sigprocmask" }, { SYS_rt_sigaction, "rt_sigaction" },
		{ SYS_clone3, "clone3" }, { SYS_clone, "clone" }, { SYS_rseq, "rseq" },
		{ SYS_set_robust_list, "set_robust_list" }, { SYS_prctl, "prctl" },
		{ SYS_getdents64, "getdents64" }, { SYS_clock_nanosleep, "clock_nanosleep" },
		{ SYS_nanosleep, "nanosleep" }, { SYS_brk, "brk" }, { SYS_madvise, "madvise" },
		{ SYS_exit, "exit" }, { SYS_sched_yield, "sched_yield" },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].nr == nr)
			return names[i].name;
	snprintf(buf, size, "system call %ld", nr);
	return buf;
}

bool seccomp_call_harmless(const struct seccomp_call *c, uint32_t answer)
{
	uint32_t action = answer & SECCOMP_RET_ACTION_FULL;
	if (action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG)
		return true;
	return c->may_fail && (action == SECCOMP_RET_ERRNO || action == SECCOMP_RET_TRACE);
}
