/* seccomp_calls.h — the system calls gputop makes a traced program run, by feature: one table,
 * so that a stub that makes one more call is one more row. Each row is what seccomp.c runs the
 * program's filters on (seccomp_eval.c), with the arguments the call really has where a filter
 * may look at them (flags, protections; pointers and lengths are stand-ins). Pure data and
 * pure functions: no process, no message (tests/unit/test_seccomp.c runs them). */
#ifndef GPUTOP_SECCOMP_CALLS_H
#define GPUTOP_SECCOMP_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum seccomp_feature {
	SECCOMP_INJECT,		/* the trampoline pages, the record table, the ring: mmap and munmap,
				 * made at attach and detach (xol.c); refused: no attach */
	SECCOMP_CALL_RETURN,	/* a function gputop calls in a thread (cuFuncGetName, dlopen)
				 * returns through a getpid (xol.c); refused: through an int3 */
	SECCOMP_PARK,		/* the stubs' park (arch_park: a kernel's first launch, --stacks):
				 * gettid, futex; refused: the stubs never park in that process */
	SECCOMP_GPU_TIME,	/* --gpu-time: dlopen of libgputop-gpu.so, its thread, CUPTI's
				 * loading; refused: no GPU time for that process */
	SECCOMP_FEATURES
};

/* The answers of a filter that do not harm: SECCOMP_RET_ALLOW and SECCOMP_RET_LOG (it runs),
 * and for a call whose failure the code that makes it handles (may_fail), SECCOMP_RET_ERRNO and
 * SECCOMP_RET_TRACE (gputop asks for no seccomp stops: the call fails with ENOSYS). A kill, a
 * trap (SIGSYS) or a supervisor's answer (SECCOMP_RET_USER_NOTIF) always harms. */
struct seccomp_call {
	long nr;
	uint64_t args[6];
	bool may_fail;
};

struct seccomp_feature_calls {
	const char *what;	/* for messages: "the stubs' park (a kernel's first launch, --stacks)" */
	const struct seccomp_call *calls;
	size_t n;
};

const struct seccomp_feature_calls *seccomp_feature_calls(enum seccomp_feature f);
/* The call's name ("gettid"), or "system call N" in buf. */
const char *seccomp_call_name(long nr, char *buf, size_t size);
/* The filters' combined answer to the call harms nothing (see struct seccomp_call). */
bool seccomp_call_harmless(const struct seccomp_call *c, uint32_t answer);

/* The stand-in size of a trampoline area (xol.c's AREA_SIZE). */
#define SECCOMP_AREA 65536

#endif
