/* job_text.h — --dump's picture (figures/job.h) as text, and the words for a call in flight
 * that --json's `job` section shares. */
#ifndef GPUTOP_JOB_TEXT_H
#define GPUTOP_JOB_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "job.h"

/* Where the thread's call was learnt: "call stub", "int3", "stack"; NULL: no call. */
const char *job_call_source(const struct job_thread *t);
/* The arguments that matter of the call (op, bytes, peer, comm), as text; "" where none are
 * known. snprintf's return. */
int job_call_args(const struct job_thread *t, char *buf, size_t size);
/* The words of JOB_ODD_* bits 0 to JOB_ODD_KINDS - 1. */
extern const char *const job_odd_names[JOB_ODD_KINDS];
/* 0, or -errno of a failed write. */
int job_text_write(FILE *f, const struct job *j);

#endif
