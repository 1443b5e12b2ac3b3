/* json_job.h — --json's `job` section, written with --dump (figures/job.h's picture). */
#ifndef GPUTOP_JSON_JOB_H
#define GPUTOP_JSON_JOB_H

#include "job.h"
#include "json_writer.h"

void json_job(struct jw *w, const struct job *j);

#endif
