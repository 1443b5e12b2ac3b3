/* kernel_names.h — the kernel id of a launched function handle (a CUfunction, CUkernel or
 * runtime handle), its name asked of the driver in the stopped thread the first time it is
 * seen. Shared by the stops at launches (hit.c) and a graph's kernel nodes (hit_graphs.c). */
#ifndef GPUTOP_KERNEL_NAMES_H
#define GPUTOP_KERNEL_NAMES_H

#include <stdint.h>

struct thread;

int kernel_names_id(struct thread *t, uint64_t f);

#endif
