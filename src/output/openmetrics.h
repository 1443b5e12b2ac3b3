/* openmetrics.h — gputop's figures as metrics a Prometheus server scrapes (--listen): the
 * OpenMetrics 1.0 text format, or the Prometheus 0.0.4 text format for scrapers that ask for it.
 * It only formats: the figures come in as each traced process's snapshot and rows. */
#ifndef GPUTOP_OPENMETRICS_H
#define GPUTOP_OPENMETRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "job.h"
#include "rows.h"
#include "stats.h"

enum metrics_format {
	METRICS_OPENMETRICS,	/* application/openmetrics-text; version=1.0.0 */
	METRICS_PROMETHEUS,	/* text/plain; version=0.0.4 */
};

/* The series a process keeps from one scrape to the next, so that every counter only grows:
 * a kernel that got a series of its own keeps it (the first top_kernels kernels by launches
 * when their series are made); the others count in one "(other kernels)" series. A device
 * whose live bytes were shown stays shown (at 0 once its memory is freed) rather than going
 * stale. Zero it with openmetrics_series_init; free it with openmetrics_series_free. */
struct openmetrics_series {
	uint64_t start_ns;		/* the snapshot's start: a reset ('z') starts afresh */
	int *kernel_ids;		/* kernels with a series of their own, in the order chosen */
	size_t n_kernels;
	bool *has_series;		/* by kernel id: in kernel_ids */
	size_t has_series_len;
	uint64_t devices_seen;		/* bit d: device d (0..62); bit 63: device not known */
};

void openmetrics_series_init(struct openmetrics_series *s);
void openmetrics_series_free(struct openmetrics_series *s);

/* One traced process: its own figures (stats_snapshot_of). Its labels, on every series of it:
 * pid; rank and local_rank (< 0: not known, no label); job_id (NULL or "": no label). */
struct openmetrics_process {
	pid_t pid;
	int rank, local_rank;
	const char *job_id;			/* TORCHELASTIC_RUN_ID or SLURM_JOB_ID of the process */
	bool running;				/* not ended: traced now */
	const char *command;			/* the process_info series; NULL: none */
	const struct stats_snapshot *snap;
	const struct rows *rows;		/* built from snap */
	struct openmetrics_series *series;	/* kept by the caller across scrapes */
	const struct job_process *job;		/* in the live picture of the job (figures/job.h):
						 * the gputop_job_* gauges; NULL: none */
};

/* A label that every series of the session carries (where gputop runs: hostname, the
 * Kubernetes pod...). A NULL or empty value: no label. */
struct openmetrics_label {
	const char *name, *value;
};

/* What belongs to the session rather than to one process. */
struct openmetrics_session {
	uint64_t tracer_cpu_ns;			/* gputop's own CPU time */
	const struct openmetrics_label *labels;	/* after each process's own labels */
	size_t n_labels;
};

/* Writes every metric family for the session and its n processes to f. top_kernels bounds the
 * kernel series of each process (plus one "(other kernels)"). Returns 0, or -errno (-ENOMEM,
 * a write error). */
int openmetrics_write(FILE *f, enum metrics_format format, const struct openmetrics_session *session,
		      const struct openmetrics_process *procs, size_t n, size_t top_kernels);

/* The format to answer with, from a request's Accept header (NULL: none): OpenMetrics when the
 * scraper accepts it, otherwise the Prometheus text format. */
enum metrics_format openmetrics_negotiate(const char *accept);
/* The Content-Type of a format. */
const char *openmetrics_content_type(enum metrics_format format);

#endif
