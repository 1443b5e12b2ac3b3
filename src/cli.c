/* cli.c — parsing and checking the command line; --help and --version. Nothing here touches
 * a process: every mistake is caught before gputop attaches or launches. */
#define _GNU_SOURCE
#include "cli.h"
#include "config.h"
#include "folded.h"
#include "outfile.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"Usage: gputop [OPTIONS] -p PID\n"
	"       gputop [OPTIONS] [--] PROGRAM [ARGS...]\n"
	"\n"
	"Shows what a CUDA program does with the GPU, live: memory allocations that are never\n"
	"freed, kernel launches, host<->device copy bandwidth and time spent in the CUDA API.\n"
	"Attaches with ptrace: no root, no eBPF, no restart of the program.\n"
	"\n"
	"Options:\n"
	"  -p, --pid PID[,PID...]  attach to running processes; q or Ctrl-C detaches, they run on\n"
	"      --children          attach mode: also the processes' descendants, and new ones\n"
	"      --dump              attach, print where every thread of every process is now (the\n"
	"                          CUDA/NCCL call in flight, its stack, collectives; the rank\n"
	"                          that differs), detach; with --timeout S, watch S seconds first\n"
	"      --no-follow         launch mode: do not follow the program's children (by default\n"
	"                          every descendant is followed, and probed once it loads CUDA)\n"
	"  -b, --batch             print plain tables on stdout every interval, no TUI (like top -b)\n"
	"  -d, --delay SECONDS     seconds between refreshes (default 1)\n"
	"  -n, --iterations N      stop after N refreshes (then detach)\n"
	"      --json FILE         write a summary as JSON to FILE when the session ends\n"
	"      --json-interval SECONDS FILE\n"
	"                          rewrite the JSON summary to FILE every SECONDS, atomically\n"
	"      --trace FILE        write every traced call to FILE, one line each (- = stderr)\n"
	"      --listen [ADDR:]PORT  serve metrics for Prometheus at http://ADDR:PORT/metrics\n"
	"                          (OpenMetrics; ADDR 127.0.0.1 unless given; 0.0.0.0 = all)\n"
	"      --metrics-top-kernels N  kernels with a series of their own (default 50); the\n"
	"                          others are counted together as \"(other kernels)\"\n"
	"      --linger SECONDS    --listen: once the tracing ends, serve the last figures that\n"
	"                          long (the last scrapes of a short job); Ctrl-C ends it sooner\n"
	"  -o, --output FILE       launch mode: the program's stdout and stderr go to FILE\n"
	"                          (so they do not draw over the TUI; /dev/null too)\n"
	"      --timeout SECONDS   end the session after SECONDS (then detach)\n"
	"      --max-overhead PCT  keep gputop's cost under PCT% of the program's time by\n"
	"                          sampling launches (launch counts become estimates)\n"
	"      --trust-seccomp     make the program run gputop's mmap/munmap calls even under a\n"
	"                          seccomp filter gputop cannot read (it may kill the program)\n"
	"      --no-int3           plant no int3 in the program's code (the only probes a kill -9\n"
	"                          of gputop could turn into a SIGTRAP): functions that would need\n"
	"                          one are not probed, new libraries are looked for every 100 ms\n"
	"      --stack-depth N     frames kept of each call stack (default 32, 0 = no stacks)\n"
	"      --stacks LIST       calls that wait for their stack: allocs, frees, syncs,\n"
	"                          launches (sampled), all or none (default), comma-separated\n"
	"      --leak-age SECONDS  PyTorch blocks live longer are leak candidates (default 30)\n"
	"      --memory-snapshot FILE\n"
	"                          PyTorch's memory as torch.cuda.memory._snapshot() pickles it\n"
	"                          (python -m torch.cuda._memory_viz reads it): written when\n"
	"                          gputop detaches, and on the TUI's key S\n"
	"      --oom-snapshot FILE\n"
	"                          the same, at an out-of-memory\n"
	"      --oom-report FILE   at an out-of-memory: the request, PyTorch's segments (or\n"
	"                          fragmentation), live bytes by line, the largest blocks\n"
	"      --folded FILE       write folded stacks (flamegraph.pl, inferno, speedscope) at the end\n"
	"      --folded-metric M   live-bytes (default), allocated-bytes, launches or api-time\n"
	"      --timeline FILE     write a timeline (Chrome trace event JSON: Perfetto, speedscope)\n"
	"      --timeline-max-mb N\n"
	"                          stop adding events to the timeline at N MiB (default 256)\n"
	"      --timeline-compact  a run of calls of one function on a thread as one event\n"
	"                          (an instant says how many), launches as counters per kernel\n"
	"      --gpu-time          kernels' GPU time, copies' GPU-side time and GPU busy, from\n"
	"                          CUPTI, which gputop loads into the program (see SAFETY in\n"
	"                          gputop(1)); unloaded when gputop detaches\n"
	"      --no-color          no colors (also when NO_COLOR is set or TERM=dumb)\n"
	"  -q, --quiet             errors and warnings only on stderr: no progress, no summary\n"
	"  -h, --help              show this help and exit\n"
	"  -V, --version           show the version and exit\n"
	"\n"
	"Without -b and with a terminal on stdout, gputop shows a live TUI; otherwise it prints\n"
	"a summary on stderr when the session ends (not with -q). In launch mode gputop exits\n"
	"with the program's exit status, or 6 if an output file could not be written (the old\n"
	"file is then left as it was). See gputop(1) for keys, views and exit statuses.\n";

/* Long options without a short one, past every char. */
enum { OPT_JSON_INTERVAL = 256, OPT_LISTEN, OPT_TOP_KERNELS, OPT_NO_INT3, OPT_GPU_TIME, OPT_LEAK_AGE, OPT_LINGER,
       OPT_MEMORY_SNAPSHOT, OPT_OOM_SNAPSHOT, OPT_OOM_REPORT, OPT_DUMP, OPT_TIMELINE_COMPACT };

static const struct option long_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "batch", no_argument, NULL, 'b' },
	{ "delay", required_argument, NULL, 'd' },
	{ "iterations", required_argument, NULL, 'n' },
	{ "json", required_argument, NULL, 'J' },
	{ "trace", required_argument, NULL, 'T' },
	{ "json-interval", required_argument, NULL, OPT_JSON_INTERVAL },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "metrics-top-kernels", required_argument, NULL, OPT_TOP_KERNELS },
	{ "linger", required_argument, NULL, OPT_LINGER },
	{ "output", required_argument, NULL, 'o' },
	{ "timeout", required_argument, NULL, 't' },
	{ "max-overhead", required_argument, NULL, 'O' },
	{ "stack-depth", required_argument, NULL, 'D' },
	{ "stacks", required_argument, NULL, 'K' },
	{ "folded", required_argument, NULL, 'F' },
	{ "folded-metric", required_argument, NULL, 'M' },
	{ "timeline", required_argument, NULL, 'L' },
	{ "timeline-max-mb", required_argument, NULL, 'X' },
	{ "timeline-compact", no_argument, NULL, OPT_TIMELINE_COMPACT },
	{ "gpu-time", no_argument, NULL, OPT_GPU_TIME },
	{ "leak-age", required_argument, NULL, OPT_LEAK_AGE },
	{ "memory-snapshot", required_argument, NULL, OPT_MEMORY_SNAPSHOT },
	{ "oom-snapshot", required_argument, NULL, OPT_OOM_SNAPSHOT },
	{ "oom-report", required_argument, NULL, OPT_OOM_REPORT },
	{ "no-color", no_argument, NULL, 'C' },
	{ "trust-seccomp", no_argument, NULL, 'S' },
	{ "no-int3", no_argument, NULL, OPT_NO_INT3 },
	{ "children", no_argument, NULL, 'c' },
	{ "dump", no_argument, NULL, OPT_DUMP },
	{ "no-follow", no_argument, NULL, 'N' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static int bad(const char *fmt, const char *arg)
{
	fprintf(stderr, "gputop: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'gputop --help' for more information.\n");
	return -1;
}

/* The optimal string alignment distance of a and b (at most 63 bytes each): how many letters
 * missed, added, changed or two swapped turn one into the other. */
static int typo_distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b), d[64][64];

	if (la > 63 || lb > 63)
		return 99;
	for (int i = 0; i <= la; i++)
		for (int j = 0; j <= lb; j++) {
			if (!i || !j) {
				d[i][j] = i + j;
				continue;
			}
			int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			v = d[i - 1][j] + 1 < v ? d[i - 1][j] + 1 : v;
			v = d[i][j - 1] + 1 < v ? d[i][j - 1] + 1 : v;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

/* The long option nearest to name by typo_distance, if near enough to be a typo of it. */
static const char *nearest_option(const char *name)
{
	const char *nearest = NULL;
	int best = 99;

	for (const struct option *o = long_options; o->name; o++) {
		int d = typo_distance(name, o->name);
		if (d < best)
			best = d, nearest = o->name;
	}
	return best <= (strlen(name) >= 6 ? 2 : 1) ? nearest : NULL;
}

/* A word of the command line getopt_long did not take (short: the option letter it stopped
 * at in a word of short options), said with the long options it may have meant: "--jsn" (did
 * you mean --json?), "--tim" (ambiguous: --timeout, --timeline, ...), "-json"
 * (--json), "--batch=1" (takes no argument). */
static int unknown_option(const char *word, int short_opt)
{
	bool dashes = strncmp(word, "--", 2) == 0;
	char name[64], list[256] = "";
	int n = 0;

	snprintf(name, sizeof name, "%.*s", (int)strcspn(word + 1 + dashes, "="), word + 1 + dashes);
	for (const struct option *o = long_options; dashes && o->name && *name; o++)
		if (strncmp(o->name, name, strlen(name)) == 0 && n++ < 8)
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s--%s", n > 1 ? ", " : "", o->name);
	const char *nearest = *name ? nearest_option(name) : NULL;
	if (n == 1 && strchr(word, '='))	/* a unique (abbreviated) name given an argument */
		return bad("option '%s' takes no argument", list);
	if (n > 1) {
		fprintf(stderr, "gputop: ambiguous option '%s'\n  hint: it could be %s\n", word, list);
	} else if (!dashes && short_opt && !nearest) {
		char letter[3] = { '-', (char)short_opt, 0 };
		return bad("unknown option '%s'", letter);
	} else {
		fprintf(stderr, "gputop: unknown option '%s'\n", word);
		if (nearest)
			fprintf(stderr, "  hint: did you mean --%s?\n", nearest);
	}
	fprintf(stderr, "Try 'gputop --help' for more information.\n");
	return -1;
}

static bool parse_seconds(const char *s, double *out, bool allow_zero)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0 || (!allow_zero && v == 0) || v > 1e7)
		return false;
	*out = v;
	return true;
}

static bool parse_long(const char *s, long *out, long min)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min)
		return false;
	*out = v;
	return true;
}

/* PID[,PID...]: digits only (strtol would also take " 5" and "+5"), each once. */
static int parse_pids(const char *arg, struct options *opt)
{
	char buf[1024];
	long v;
	if (strlen(arg) >= sizeof buf)
		return bad("invalid PID list '%.40s...': too long", arg);
	strcpy(buf, arg);
	char *save = NULL;
	if (!*arg || arg[strlen(arg) - 1] == ',' || arg[0] == ',' || strstr(arg, ",,"))
		return bad("invalid PID '%s': expected a positive process ID", arg);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!isdigit((unsigned char)tok[0]) || !parse_long(tok, &v, 1) || v > INT_MAX)
			return bad("invalid PID '%s': expected a positive process ID", tok);
		for (int i = 0; i < opt->n_pids; i++)
			if (opt->pids[i] == (pid_t)v)
				return bad("PID %s is given twice", tok);
		if (opt->n_pids == CLI_MAX_PIDS)
			return bad("too many PIDs: gputop attaches to at most 64 at once%s", "");
		opt->pids[opt->n_pids++] = (pid_t)v;
	}
	opt->pid = opt->pids[0];
	return 0;
}

/* A word of PIDs (digits and commas): after -p's list, the second match of -p $(pgrep -f
 * train.py), not a program (no command is named by digits). */
static bool pid_word(const char *word)
{
	return isdigit((unsigned char)*word) && strspn(word, "0123456789,") == strlen(word);
}

/* -p's list and the PIDs after it: said as the one list meant ("-p 123,456"). */
static int pids_split(const struct options *opt, char **words)
{
	char list[256];
	size_t n = 0;

	for (int i = 0; i < opt->n_pids && n < sizeof list; i++)
		n += (size_t)snprintf(list + n, sizeof list - n, "%s%d", i ? "," : "", (int)opt->pids[i]);
	for (; *words && pid_word(*words) && n < sizeof list; words++)
		n += (size_t)snprintf(list + n, sizeof list - n, ",%s", *words);
	fprintf(stderr, "gputop: -p takes one list of PIDs, comma-separated: -p %s\n"
		"  hint: pgrep -d, writes one: gputop -p $(pgrep -d, -f NAME)\n", list);
	fprintf(stderr, "Try 'gputop --help' for more information.\n");
	return -1;
}

/* --stacks: a comma-separated list of allocs, frees, syncs, launches, all, none; not empty,
 * no empty item. */
static bool parse_stacks(const char *s, unsigned *out)
{
	static const struct { char name[12]; unsigned bits; } words[] = {
		{ "allocs", CONFIG_STACKS_ALLOCS }, { "frees", CONFIG_STACKS_FREES },
		{ "syncs", CONFIG_STACKS_SYNCS }, { "launches", CONFIG_STACKS_LAUNCHES },
		{ "all", CONFIG_STACKS_ALLOCS | CONFIG_STACKS_FREES | CONFIG_STACKS_SYNCS | CONFIG_STACKS_LAUNCHES },
		{ "none", 0 },
	};
	*out = 0;
	for (;;) {
		size_t len = strcspn(s, ","), i;
		for (i = 0; i < sizeof words / sizeof words[0]; i++)
			if (strlen(words[i].name) == len && strncmp(words[i].name, s, len) == 0)
				break;
		if (i == sizeof words / sizeof words[0])
			return false;
		*out |= words[i].bits;
		if (!s[len])
			return true;
		s += len + 1;
	}
}

/* Two output options naming one file would write over each other: refused before anything
 * is made. "-" is standard error, no file. */
static int outputs_distinct(const struct options *opt)
{
	const struct { const char *what, *path; } out[] = {
		{ "--json", opt->json_path }, { "--json-interval", opt->json_interval_path },
		{ "--trace", opt->trace_path }, { "--folded", opt->folded_path },
		{ "--timeline", opt->timeline_path }, { "-o", opt->output_path },
		{ "--memory-snapshot", opt->memory_snapshot_path }, { "--oom-snapshot", opt->oom_snapshot_path },
		{ "--oom-report", opt->oom_report_path },
	};
	const size_t n = sizeof out / sizeof out[0];
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n; k++) {
			if (!out[i].path || !out[k].path || !strcmp(out[i].path, "-") || !strcmp(out[k].path, "-") ||
			    !outfile_same(out[i].path, out[k].path))
				continue;
			char why[8448];
			snprintf(why, sizeof why, "%s '%s' and %s '%s' are the same file: give each output a file "
				 "of its own", out[i].what, out[i].path, out[k].what, out[k].path);
			return bad("%s", why);
		}
	return 0;
}

/* [ADDR:]PORT: a port of digits (0: any free one), and an address if a colon comes before it
 * (the server resolves it). "[::1]:9464" for IPv6. */
static bool listen_ok(const char *s)
{
	const char *port = strrchr(s, ':');
	long v;

	if (port == s || (port && port[-1] == '[') || (port && *s == '[' && port[-1] != ']'))
		return false;
	port = port ? port + 1 : s;
	return isdigit((unsigned char)*port) && parse_long(port, &v, 0) && v <= 65535;
}

int cli_parse(int argc, char **argv, struct options *opt)
{
	long v;
	double mb;
	*opt = (struct options){ .delay_s = 1.0, .iterations = -1, .metrics_top_kernels = -1,
				 .stack_depth = CONFIG_STACK_DEPTH_DEFAULT,
				 .stacks = 0, .timeline_max_mb = 256 };
	const char *nc = getenv("NO_COLOR");
	opt->no_color = nc && *nc;

	opterr = 0;
	optind = 1;
	int c, word = optind;	/* the word getopt_long looks at ("+": in order, none skipped) */
	while ((word = optind, c = getopt_long(argc, argv, "+:p:bd:n:o:qhV", long_options, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_pids(optarg, opt) < 0)
				return -1;
			break;
		case 'c':
			opt->children = true;
			break;
		case 'N':
			opt->no_follow = true;
			break;
		case 'b':
			opt->batch = true;
			break;
		case 'd':
			if (!parse_seconds(optarg, &opt->delay_s, false))
				return bad("invalid delay '%s': expected a number of seconds above 0", optarg);
			break;
		case 'n':
			if (!parse_long(optarg, &opt->iterations, 1))
				return bad("invalid iteration count '%s': expected a number above 0", optarg);
			break;
		case 'J':
			opt->json_path = optarg;
			break;
		case 'T':
			opt->trace_path = optarg;
			break;
		case 'o':
			opt->output_path = optarg;
			break;
		case OPT_JSON_INTERVAL:	/* two arguments: SECONDS here, FILE the next word */
			if (!parse_seconds(optarg, &opt->json_interval_s, false))
				return bad("invalid interval '%s': expected a number of seconds above 0", optarg);
			if (optind >= argc)
				return bad("option '--json-interval' needs SECONDS and FILE%s", "");
			opt->json_interval_path = argv[optind++];
			break;
		case OPT_LISTEN:
			if (!listen_ok(optarg))
				return bad("invalid listen address '%s': expected [ADDR:]PORT, PORT 0 to 65535", optarg);
			opt->listen = optarg;
			break;
		case OPT_TOP_KERNELS:
			if (!isdigit((unsigned char)optarg[0]) || !parse_long(optarg, &opt->metrics_top_kernels, 0) ||
			    opt->metrics_top_kernels > 100000)
				return bad("invalid kernel count '%s': expected a number from 0 to 100000", optarg);
			break;
		case OPT_LINGER:
			if (!parse_seconds(optarg, &opt->linger_s, false) || opt->linger_s > 86400)
				return bad("invalid linger '%s': expected a number of seconds above 0, at most 86400", optarg);
			break;
		case 't':
			if (!parse_seconds(optarg, &opt->timeout_s, false))
				return bad("invalid timeout '%s': expected a number of seconds above 0", optarg);
			break;
		case 'O':
			if (!parse_seconds(optarg, &opt->max_overhead, false) || opt->max_overhead >= 100)
				return bad("invalid overhead '%s': expected a percentage between 0 and 100", optarg);
			break;
		case 'D':
			if (!parse_long(optarg, &v, 0) || v > CONFIG_STACK_DEPTH_MAX)
				return bad("invalid stack depth '%s': expected a number of frames from 0 to 256", optarg);
			opt->stack_depth = (int)v;
			break;
		case 'K':
			if (!*optarg)
				return bad("--stacks '%s' is an empty list: give allocs, frees, syncs, launches, all or "
					   "none, comma-separated", optarg);
			if (!parse_stacks(optarg, &opt->stacks))
				return bad("invalid --stacks '%s': expected allocs, frees, syncs, launches, all or none, "
					   "comma-separated", optarg);
			break;
		case 'F':
			opt->folded_path = optarg;
			break;
		case 'M':
			opt->folded_metric = folded_metric_parse(optarg);
			if (opt->folded_metric < 0)
				return bad("invalid folded metric '%s': expected live-bytes, allocated-bytes, launches "
					   "or api-time", optarg);
			break;
		case 'L':
			opt->timeline_path = optarg;
			break;
		case OPT_MEMORY_SNAPSHOT:
			opt->memory_snapshot_path = optarg;
			break;
		case OPT_OOM_SNAPSHOT:
			opt->oom_snapshot_path = optarg;
			break;
		case OPT_OOM_REPORT:
			opt->oom_report_path = optarg;
			break;
		case 'X':
			if (!parse_seconds(optarg, &mb, false) || mb > 1024 * 1024)
				return bad("invalid timeline bound '%s': expected a number of MiB above 0", optarg);
			opt->timeline_max_mb = mb;
			break;
		case OPT_TIMELINE_COMPACT:
			opt->timeline_compact = true;
			break;
		case OPT_GPU_TIME:
			opt->gpu_time = true;
			break;
		case OPT_LEAK_AGE:
			if (!parse_seconds(optarg, &opt->leak_age_s, false))
				return bad("invalid leak age '%s': expected a number of seconds above 0", optarg);
			break;
		case 'C':
			opt->no_color = true;
			break;
		case 'S':
			opt->trust_seccomp = true;
			break;
		case OPT_NO_INT3:
			opt->no_int3 = true;
			break;
		case OPT_DUMP:
			opt->dump = true;
			break;
		case 'q':
			opt->quiet = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 1;
		case 'V':
			printf("gputop %s\n", GPUTOP_VERSION);
			return 1;
		case ':':
			return bad("option '%s' needs an argument", argv[optind - 1]);
		default:
			return unknown_option(argv[word], optopt);
		}
	}
	if (optind < argc)
		opt->argv = &argv[optind];
	if (opt->pid && opt->argv && pid_word(opt->argv[0]))	/* -p $(pgrep ...) with two matches */
		return pids_split(opt, opt->argv);
	if (opt->pid && opt->argv)
		return bad("give either -p PID or a program to run, not both%s", "");
	if (!opt->pid && !opt->argv)
		return bad("nothing to trace: give -p PID or a program to run%s", "");
	if (opt->pid && opt->no_follow)
		return bad("--no-follow is for launch mode (attach mode follows children only with --children)%s", "");
	if (!opt->pid && opt->children)
		return bad("--children is for attach mode (launch mode follows children unless --no-follow)%s", "");
	if (opt->dump && !opt->pid)
		return bad("--dump is for attach mode: gputop --dump -p PID[,PID...]%s", "");
	if (opt->dump && (opt->batch || opt->listen || opt->json_interval_path))
		return bad("--dump prints its picture once: -b, --listen and --json-interval are for a session that goes on%s", "");
	if (opt->metrics_top_kernels >= 0 && !opt->listen)
		return bad("--metrics-top-kernels is for --listen%s", "");
	if (opt->timeline_compact && !opt->timeline_path)
		return bad("--timeline-compact is for --timeline FILE (how it writes the timeline)%s", "");
	if (opt->linger_s > 0 && !opt->listen)
		return bad("--linger is for --listen (it keeps serving the metrics)%s", "");
	if (opt->metrics_top_kernels < 0)
		opt->metrics_top_kernels = 50;
	if (opt->no_int3 && opt->trace_path)
		return bad("--trace stops the program at every call (an int3 on each function); "
			   "--no-int3 refuses them: give one or the other%s", "");
	if (opt->pid && opt->output_path)
		return bad("-o FILE is for launch mode: the output of a running process is its own%s", "");
	return outputs_distinct(opt);
}
