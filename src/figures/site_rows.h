/* site_rows.h — live allocations grouped by the call stack that made them (their site), for
 * the Leaks view's "by site" mode, -b, --json and --folded: one row model for all of them. */
#ifndef GPUTOP_SITE_ROWS_H
#define GPUTOP_SITE_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "rows.h"
#include "stacks.h"

struct row_site {
	uint32_t stack;			/* STACK_NONE: allocations made without a stack */
	uint64_t live_bytes, live_allocations;
	uint64_t allocated_bytes, allocations;	/* all made there in the session */
	uint64_t oldest_age_ns;		/* age of its oldest live allocation */
};

/* Rows for the live allocations of rs (all kinds), largest live bytes first, then by stack
 * id; ss gives the session's counts per stack. *out is malloc'd (free it); the count, or
 * -ENOMEM. */
long site_rows_build(const struct rows *rs, const struct stacks_snapshot *ss, struct row_site **out);

#endif
