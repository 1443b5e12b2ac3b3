/* tally_spec.h — what the stubs keep in place for a row of the API table (arch/tally.h), and
 * what those figures mean: the spec gputop writes for a probe of the row before it is armed,
 * and how a class of the row's sums reads (a copy's direction). Pure: the probe layer writes
 * specs with it (probe/launchring.c), the figures read tallies with it. */
#ifndef GPUTOP_TALLY_SPEC_H
#define GPUTOP_TALLY_SPEC_H

#include <stdbool.h>

#include "cuda_api.h"
#include "tally.h"

/* The spec of row s: its effect on the tables and the operands of its sums. */
void cuda_tally_spec(const struct api_spec *s, struct tally_spec *out);

/* Whether the class cls of copy row s's sums names its direction (*dir): a driver copy of a
 * fixed direction, a peer copy, a runtime copy whose kind (a register argument) is H2H, H2D,
 * D2H or D2D. Not for cudaMemcpyDefault's copies nor the driver's cuMemcpy, whose direction
 * only the pointers tell (gputop, from its allocations): those count by their records. */
bool cuda_tally_copy_dir(const struct api_spec *s, unsigned cls, enum copy_dir *dir);

/* Whether the stubs tallied call c's copy by its direction (so the tallies count its bytes). */
bool cuda_tally_copy_in_place(const struct cuda_call *c);

/* The bytes a row's class sum stands for: a memset's elements times their size. */
uint64_t cuda_tally_bytes(const struct api_spec *s, uint64_t sum);

#endif
