/* json.h — the machine-readable summary written at the end of a session (--json FILE). */
#ifndef GPUTOP_JSON_H
#define GPUTOP_JSON_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "devices.h"
#include "job.h"
#include "stats.h"

struct job_live;

struct report_info {
	pid_t pid;
	const char *command;
	double duration_s;
	bool has_exit_status;	/* false in attach mode when the program outlives the session */
	int exit_status;	/* exit code, or 128 + signal */
	int term_signal;	/* 0 unless killed by a signal */
	bool launched;
	bool cuda_before_attach;	/* attached to a program that had loaded CUDA: what it
					 * allocated before is not seen (session_state.h) */
	int stops_per_return;	/* 0: returns recorded by the stub (retfast.h), 1: they trap */
	int stops_per_launch;	/* 0: driver launches through the launch ring, 1: they trap */
	const struct devices_snapshot *devices;	/* what NVML said last; NULL: not polled */
	const struct job *job;	/* --dump's picture, or the live one (figures/job.h): the `job`
				 * section; NULL: none */
	struct job_live *job_live;	/* --json-interval: where the live picture comes from */
};

/* Writes the summary as one JSON object to f. Returns 0, or -errno. */
int json_write(FILE *f, const struct report_info *info, const struct stats_snapshot *s);

#endif
