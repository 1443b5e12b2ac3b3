/* lookup.h — what the unit tests of the hot path look up (test_account.c, test_trap.c,
 * test_probes.c): the API table's row of a function they name, and a process's figures. A
 * lookup that fails ends the test with one "not ok" line. */
#ifndef GPUTOP_TEST_LOOKUP_H
#define GPUTOP_TEST_LOOKUP_H

#include <stdio.h>
#include <stdlib.h>

#include "cuda_api.h"
#include "stats.h"

static inline int row(const char *name)
{
	int i = cuda_api_find(name);
	if (i < 0) {
		printf("not ok - the API table has %s\n", name);
		exit(1);
	}
	return i;
}

/* The figures of process pid now; stats_snapshot_free it. */
static inline struct stats_snapshot snap(pid_t pid)
{
	struct stats_snapshot s;
	if (stats_snapshot_of(pid, &s) < 0) {
		printf("not ok - stats_snapshot_of failed\n");
		exit(1);
	}
	return s;
}

#endif
