/* cli.h — the command line: what the user asked for, parsed and checked before anything
 * touches a process. --help and man/gputop.1 list the same options (a test checks it). */
#ifndef GPUTOP_CLI_H
#define GPUTOP_CLI_H

#include <stdbool.h>
#include <sys/types.h>

#include "exit_codes.h"	/* the statuses cli_parse's caller exits with */

#define CLI_MAX_PIDS 64

struct options {
	pid_t pid;		/* -p PID: attach (the first PID); 0 when launching */
	pid_t pids[CLI_MAX_PIDS];	/* -p PID[,PID...] (repeatable): every process to attach */
	int n_pids;
	bool no_follow;		/* --no-follow: launch mode, the program's children are let go */
	bool children;		/* --children: attach mode, descendants too, and new ones */
	bool dump;		/* --dump: attach, print where every thread is, detach */
	char **argv;		/* -- PROG ARGS...: launch; NULL when attaching */
	bool batch;		/* -b: plain tables on stdout, no TUI */
	double delay_s;		/* -d SECONDS between refreshes (default 1) */
	long iterations;	/* -n N refreshes, then detach; -1 = until the program ends */
	const char *json_path;	/* --json FILE: summary written at the end */
	const char *trace_path;	/* --trace FILE ('-' = stderr): every call, one line each */
	const char *output_path;	/* -o FILE: launch mode, the program's stdout and stderr */
	double timeout_s;	/* --timeout SECONDS: end the session after this long; 0 = never */
	double max_overhead;	/* --max-overhead PCT; 0 = no budget */
	bool no_color;		/* --no-color, or NO_COLOR in the environment */
	bool quiet;		/* -q: no progress messages on stderr */
	bool trust_seccomp;	/* --trust-seccomp: inject under a filter gputop cannot read */
	bool no_int3;		/* --no-int3: plant no int3 in the program's code */
	int stack_depth;	/* --stack-depth N: frames per call stack, 0 = none (default 32) */
	unsigned stacks;	/* --stacks LIST: CONFIG_STACKS_* bits of the calls that stop for one
				 * (default none: only the stops gputop takes anyway) */
	const char *folded_path;	/* --folded FILE: folded stacks of folded_metric */
	int folded_metric;	/* --folded-metric: enum folded_metric (output/folded.h) */
	const char *timeline_path;	/* --timeline FILE: Chrome trace event JSON */
	double timeline_max_mb;	/* --timeline-max-mb: its bound (default 256) */
	bool timeline_compact;	/* --timeline-compact: runs of calls, launch counters */
	const char *listen;	/* --listen [ADDR:]PORT: serve GET /metrics; NULL = no */
	double linger_s;	/* --linger SECONDS: serve the last figures that long after the end */
	long metrics_top_kernels;	/* --metrics-top-kernels N: kernel series per process */
	bool gpu_time;		/* --gpu-time: kernels' GPU time from CUPTI, loaded into the program */
	double leak_age_s;	/* --leak-age SECONDS: PyTorch blocks older are leak candidates; 0:
				 * the default (30) */
	const char *memory_snapshot_path;	/* --memory-snapshot FILE: PyTorch's _snapshot() */
	const char *oom_snapshot_path;		/* --oom-snapshot FILE: ... at an out-of-memory */
	const char *oom_report_path;		/* --oom-report FILE: the report of an out-of-memory */
	double json_interval_s;	/* --json-interval SECONDS FILE; 0 = no */
	const char *json_interval_path;
};

/* Parses argv into opt. Prints --help/--version itself and returns 1 (exit 0);
 * on an error prints "gputop: ..." and returns -1 (exit EXIT_USAGE); 0 to go on. */
int cli_parse(int argc, char **argv, struct options *opt);

#endif
