/* kernel_names.h — the kernel id of a launched function handle (a CUfunction, CUkernel or
 * runtime handle), its name asked of the driver in the stopped thread the first time it is
 * seen, and what the calls that name kernels say (their registration, cuModuleGetFunction...).
 * Shared by the stops at launches (hit.c), a graph's kernel nodes (hit_graphs.c) and the
 * account step (account.c). */
#ifndef GPUTOP_KERNEL_NAMES_H
#define GPUTOP_KERNEL_NAMES_H

#include <stdint.h>

struct thread;
struct tracee;

/* The kernel id of handle f, launched by t, a thread of p. */
int kernel_names_id(struct tracee *p, struct thread *t, uint64_t f);

struct cuda_call;
/* A call of an OP_KERNEL_NAME row that succeeded (or a registration, seen at its entry), of
 * thread t: the handle it made named (a name string read through t). */
void kernel_names_learn(struct tracee *p, struct thread *t, const struct cuda_call *c);

#endif
