/* job_text.h — --dump's picture (figures/job.h) as text (the words for a call in flight, shared
 * with --json's `job` section and the TUI's Job view, are job.h's). */
#ifndef GPUTOP_JOB_TEXT_H
#define GPUTOP_JOB_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "job.h"

/* 0, or -errno of a failed write. */
int job_text_write(FILE *f, const struct job *j);

#endif
