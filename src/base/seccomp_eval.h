/* seccomp_eval.h — what a seccomp filter answers to one system call: a classic-BPF interpreter
 * with the kernel's seccomp rules (only 32-bit loads from struct seccomp_data, forward jumps),
 * and the kernel's way of combining the answers of stacked filters. Pure logic, no process:
 * probe/seccomp.c fetches the filters and decides. */
#ifndef GPUTOP_SECCOMP_EVAL_H
#define GPUTOP_SECCOMP_EVAL_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Runs one filter program on d. 0 with *ret its return value (action | data), or -EINVAL for
 * a program the kernel would not have run this way (a bad instruction, a load outside
 * seccomp_data, a jump out of the program, no return at the end). */
int seccomp_eval_run(const struct sock_filter *prog, size_t len, const struct seccomp_data *d,
		     uint32_t *ret);

/* Of two answers, the one the kernel acts on when both filters are stacked: the more
 * restrictive action (SECCOMP_RET_KILL_PROCESS first, SECCOMP_RET_ALLOW last). */
uint32_t seccomp_eval_combine(uint32_t a, uint32_t b);

/* The call runs: SECCOMP_RET_ALLOW, or SECCOMP_RET_LOG (it runs and is logged). */
bool seccomp_eval_allows(uint32_t ret);

/* "SECCOMP_RET_KILL_PROCESS", "SECCOMP_RET_ERRNO"... ("an unknown action" otherwise). */
const char *seccomp_eval_action_name(uint32_t ret);

#endif
