/* dump.h — --dump: attach, print where every thread of every process is, detach. */
#ifndef GPUTOP_DUMP_H
#define GPUTOP_DUMP_H

#include <stdio.h>

#include "cli.h"
#include "job.h"

/* Before the attach: the picture the engine fills (job_free it at the end); NULL without --dump. */
struct job *dump_start(const struct options *opt);
double dump_timeout(const struct options *opt);	/* the session's length */
/* After the tracing (every process let go): the picture completed and marked; NULL for NULL. */
const struct job *dump_finish(struct job *j);
int dump_print(struct job *j, FILE *f);	/* 0 or -errno */
void dump_end(struct job *j);	/* the session's end: no more picture, j freed */

#endif
