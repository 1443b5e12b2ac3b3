/* test_seccomp.c — unit test of src/base/seccomp_eval.c: what a seccomp filter answers to the
 * calls gputop makes a program run, against the filters the kernel would answer the same way
 * (a W^X sandbox, an errno filter, stacked filters), and programs the kernel would not run; and
 * of src/probe/seccomp_calls.c, the table of those calls by feature, judged row by row as
 * probe/seccomp.c judges them (a filter that kills gettid refuses the park and nothing else; a
 * container's clone3 answered ENOSYS leaves --gpu-time allowed). Prints one "ok"/"not ok" line
 * per check. */
#include "seccomp_eval.h"
#include "seccomp_calls.h"

#include <errno.h>
#include <linux/audit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

static int failures;

static void check(const char *what, bool ok)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	failures += !ok;
}

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Kills any mmap/mprotect asking for PROT_EXEC; a foreign architecture is killed too. */
static const struct sock_filter wx[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/* munmap fails with EPERM; everything else is logged. Uses X, scratch memory and ALU ops. */
static const struct sock_filter errno_munmap[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_STMT(BPF_ST, 3),
	BPF_STMT(BPF_LDX | BPF_IMM, 5),
	BPF_STMT(BPF_LD | BPF_MEM, 3),
	BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0),	/* nr + 5 */
	BPF_STMT(BPF_ALU | BPF_SUB | BPF_K, 5),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_munmap, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_LOG),
};

static struct seccomp_data call(long nr, uint64_t prot)
{
	struct seccomp_data d = { .nr = (int)nr, .arch = AUDIT_ARCH_X86_64 };
	d.args[1] = 65536;
	d.args[2] = prot;
	d.args[3] = MAP_PRIVATE | MAP_ANONYMOUS;
	d.args[4] = (uint64_t)-1;
	return d;
}

static uint32_t run(const struct sock_filter *prog, size_t len, struct seccomp_data d)
{
	uint32_t r = 0xdeadbeef;
	if (seccomp_eval_run(prog, len, &d, &r) < 0)
		return 0xdeadbeef;
	return r;
}

static void test_wx(void)
{
	check("W^X: mmap PROT_READ|PROT_EXEC is killed",
	      run(wx, LEN(wx), call(SYS_mmap, PROT_READ | PROT_EXEC)) == SECCOMP_RET_KILL_PROCESS);
	check("W^X: mmap PROT_READ|PROT_WRITE runs",
	      run(wx, LEN(wx), call(SYS_mmap, PROT_READ | PROT_WRITE)) == SECCOMP_RET_ALLOW);
	check("W^X: munmap runs", run(wx, LEN(wx), call(SYS_munmap, 0)) == SECCOMP_RET_ALLOW);
	struct seccomp_data foreign = call(SYS_munmap, 0);
	foreign.arch = AUDIT_ARCH_I386;
	check("W^X: another architecture is killed", run(wx, LEN(wx), foreign) == SECCOMP_RET_KILL_PROCESS);
	check("W^X's kill is not allowed", !seccomp_eval_allows(SECCOMP_RET_KILL_PROCESS));
	check("action name", strcmp(seccomp_eval_action_name(SECCOMP_RET_KILL_PROCESS),
				    "SECCOMP_RET_KILL_PROCESS") == 0);
}

static void test_errno(void)
{
	uint32_t r = run(errno_munmap, LEN(errno_munmap), call(SYS_munmap, 0));
	check("errno filter: munmap gets SECCOMP_RET_ERRNO|EPERM", r == (SECCOMP_RET_ERRNO | EPERM));
	check("errno is not allowed (the call does not run)", !seccomp_eval_allows(r));
	r = run(errno_munmap, LEN(errno_munmap), call(SYS_mmap, PROT_READ));
	check("errno filter: mmap is logged and runs", r == SECCOMP_RET_LOG && seccomp_eval_allows(r));
}

static void test_combine(void)
{
	/* Stacked: the most restrictive action wins, whichever filter gave it. */
	uint32_t a = seccomp_eval_combine(SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM);
	check("ALLOW + ERRNO -> ERRNO", a == (SECCOMP_RET_ERRNO | EPERM));
	check("ERRNO + KILL_THREAD -> KILL_THREAD",
	      seccomp_eval_combine(a, SECCOMP_RET_KILL_THREAD) == SECCOMP_RET_KILL_THREAD);
	check("KILL_THREAD + KILL_PROCESS -> KILL_PROCESS",
	      seccomp_eval_combine(SECCOMP_RET_KILL_THREAD, SECCOMP_RET_KILL_PROCESS) == SECCOMP_RET_KILL_PROCESS);
	check("LOG + ALLOW -> LOG", seccomp_eval_combine(SECCOMP_RET_LOG, SECCOMP_RET_ALLOW) == SECCOMP_RET_LOG);
	check("USER_NOTIF + TRACE -> USER_NOTIF (not allowed)",
	      seccomp_eval_combine(SECCOMP_RET_TRACE, SECCOMP_RET_USER_NOTIF) == SECCOMP_RET_USER_NOTIF &&
		      !seccomp_eval_allows(SECCOMP_RET_USER_NOTIF));
	check("ERRNO + TRAP -> TRAP", seccomp_eval_combine(a, SECCOMP_RET_TRAP) == SECCOMP_RET_TRAP);
}

static void test_invalid(void)
{
	struct seccomp_data d = call(SYS_mmap, PROT_READ);
	uint32_t r;
	const struct sock_filter no_ret[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0) };
	check("no return at the end: invalid", seccomp_eval_run(no_ret, LEN(no_ret), &d, &r) == -EINVAL);
	const struct sock_filter outside[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64),
					       BPF_STMT(BPF_RET | BPF_A, 0) };
	check("load past seccomp_data: invalid", seccomp_eval_run(outside, LEN(outside), &d, &r) == -EINVAL);
	const struct sock_filter unaligned[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2),
						 BPF_STMT(BPF_RET | BPF_A, 0) };
	check("unaligned load: invalid", seccomp_eval_run(unaligned, LEN(unaligned), &d, &r) == -EINVAL);
	const struct sock_filter byte_load[] = { BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),
						 BPF_STMT(BPF_RET | BPF_A, 0) };
	check("byte load (not seccomp's): invalid", seccomp_eval_run(byte_load, LEN(byte_load), &d, &r) == -EINVAL);
	const struct sock_filter jump_out[] = { BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 0),
						BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	check("jump out of the program: invalid", seccomp_eval_run(jump_out, LEN(jump_out), &d, &r) == -EINVAL);
	const struct sock_filter div0[] = { BPF_STMT(BPF_LDX | BPF_IMM, 0),
					    BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
					    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	check("division by X = 0 ends the program with 0 (kill)",
	      seccomp_eval_run(div0, LEN(div0), &d, &r) == 0 && r == 0 && !seccomp_eval_allows(r));
	check("empty program: invalid", seccomp_eval_run(wx, 0, &d, &r) == -EINVAL);
}

/* Kills one system call; everything else runs. */
#define KILL_ONE(which) { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)), \
		       BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, which, 0, 1), \
		       BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS), \
		       BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) }

/* Docker's answer to clone3: ENOSYS (glibc then makes a thread with clone). */
static const struct sock_filter clone3_enosys[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/* As probe/seccomp.c: every row of the feature under one filter; the first harmful one's nr. */
static long feature_refused(enum seccomp_feature f, const struct sock_filter *prog, size_t len)
{
	const struct seccomp_feature_calls *fc = seccomp_feature_calls(f);
	for (size_t i = 0; i < fc->n; i++) {
		struct seccomp_data d = { .nr = (int)fc->calls[i].nr, .arch = AUDIT_ARCH_X86_64 };
		memcpy(d.args, fc->calls[i].args, sizeof d.args);
		uint32_t r;
		if (seccomp_eval_run(prog, len, &d, &r) < 0 || !seccomp_call_harmless(&fc->calls[i], r))
			return fc->calls[i].nr;
	}
	return 0;
}

static void test_features(void)
{
	static const struct sock_filter gettid[] = KILL_ONE(SYS_gettid), openat[] = KILL_ONE(SYS_openat),
					futex[] = KILL_ONE(SYS_futex), clone3[] = KILL_ONE(SYS_clone3);
	char buf[32];
	check("every feature has calls", seccomp_feature_calls(SECCOMP_INJECT)->n &&
	      seccomp_feature_calls(SECCOMP_CALL_RETURN)->n && seccomp_feature_calls(SECCOMP_PARK)->n &&
	      seccomp_feature_calls(SECCOMP_GPU_TIME)->n && !seccomp_feature_calls(SECCOMP_FEATURES));
	check("a filter killing gettid refuses the park, at gettid",
	      feature_refused(SECCOMP_PARK, gettid, LEN(gettid)) == SYS_gettid);
	check("... and --gpu-time (its thread asks its tid)",
	      feature_refused(SECCOMP_GPU_TIME, gettid, LEN(gettid)) == SYS_gettid);
	check("... but neither the injected mmap/munmap nor the call return",
	      !feature_refused(SECCOMP_INJECT, gettid, LEN(gettid)) &&
		      !feature_refused(SECCOMP_CALL_RETURN, gettid, LEN(gettid)));
	check("a filter killing futex refuses the park", feature_refused(SECCOMP_PARK, futex, LEN(futex)) == SYS_futex);
	static const struct sock_filter yield[] = KILL_ONE(SYS_sched_yield);
	check("a filter killing sched_yield refuses none of them (the stubs never wait for room)",
	      !feature_refused(SECCOMP_PARK, yield, LEN(yield)) && !feature_refused(SECCOMP_INJECT, yield, LEN(yield)));
	check("a filter killing openat refuses --gpu-time only, at openat",
	      feature_refused(SECCOMP_GPU_TIME, openat, LEN(openat)) == SYS_openat &&
		      !feature_refused(SECCOMP_PARK, openat, LEN(openat)));
	check("W^X (anonymous executable mappings killed) refuses the injection, not --gpu-time's dlopen",
	      feature_refused(SECCOMP_INJECT, wx, LEN(wx)) == SYS_mmap);
	check("clone3 answered ENOSYS (Docker): --gpu-time allowed (glibc uses clone)",
	      !feature_refused(SECCOMP_GPU_TIME, clone3_enosys, LEN(clone3_enosys)));
	check("clone3 killed: --gpu-time refused", feature_refused(SECCOMP_GPU_TIME, clone3, LEN(clone3)) == SYS_clone3);
	check("an errno answer harms a call that may not fail (the park's gettid)",
	      !seccomp_call_harmless(&seccomp_feature_calls(SECCOMP_PARK)->calls[0], SECCOMP_RET_ERRNO | EPERM));
	check("call names", strcmp(seccomp_call_name(SYS_gettid, buf, sizeof buf), "gettid") == 0 &&
	      strcmp(seccomp_call_name(SYS_kexec_load, buf, sizeof buf), "system call 246") == 0);
}

int main(void)
{
	test_wx();
	test_errno();
	test_combine();
	test_invalid();
	test_features();
	if (failures) {
		printf("# %d checks failed\n", failures);
		return 1;
	}
	printf("# all checks passed\n");
	return 0;
}
