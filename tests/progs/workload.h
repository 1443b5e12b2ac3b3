/* workload.h — the unit of CUDA work that basic, static_basic and wait_then_work repeat; its exact
 * calls are listed in workload.cpp, and the e2e tests count them. */
#ifndef WORK_H
#define WORK_H

#include "progs.h"

/* One iteration. free_leaks: also free the buffers an iteration otherwise leaks.
 * Adds failed calls to f and returns how many data checks failed although the calls succeeded. */
long work_iteration(struct fails *f, int iteration, bool free_leaks);

/* "<prog>: ok iterations=N", or the failures and "<prog>: FAILED ...". Returns the exit status:
 * 0 unless data came back wrong from calls that all succeeded (failed calls alone exit 0, so
 * that a program is the same with and without a GPU). */
int work_report(const char *prog, int iterations, const struct fails *f, long mismatches);

#endif
