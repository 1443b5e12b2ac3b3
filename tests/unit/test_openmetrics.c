/* test_openmetrics.c — unit test of src/output/openmetrics.c: figures fed through the stats API,
 * written in both formats and checked line by line: 20,000 kernels give top_kernels series plus
 * "(other kernels)" holding the rest; a kernel that gets hot later does not take a series (so no
 * counter ever goes down) until a reset; devices stay shown once seen; label values escaped,
 * made UTF-8 and cut without merging two kernels; the two formats' headers; several processes
 * in one family block; content negotiation; NCCL operations and P2P bytes; --gpu-time's busy
 * seconds; the labels that say which process of which job on which host or pod a series is
 * (rank, local_rank, job_id, hostname, k8s_*) on every series, the same on all of a process's.
 * One "ok"/"not ok" line per check. */
#include "clock.h"
#include "cuda_api.h"
#include "openmetrics.h"
#include "rows.h"
#include "stats.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(bool ok, const char *what)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	failures += !ok;
}

/* Renders the current figures of "process" pid (rank, command) in format; caller frees. */
static char *render(enum metrics_format format, struct openmetrics_series *series, pid_t pid,
		    int rank, const char *command, size_t top)
{
	struct stats_snapshot snap;
	struct rows rows;
	char *text = NULL;
	size_t len;

	if (stats_snapshot(&snap) < 0 || rows_build(&rows, &snap, NULL) < 0)
		return NULL;
	struct openmetrics_process p = { .pid = pid, .rank = rank, .local_rank = -1, .running = true, .command = command,
					 .snap = &snap, .rows = &rows, .series = series };
	struct openmetrics_session session = { .tracer_cpu_ns = 1500000000u };
	FILE *f = open_memstream(&text, &len);
	int err = openmetrics_write(f, format, &session, &p, 1, top);
	fclose(f);
	rows_free(&rows);
	stats_snapshot_free(&snap);
	if (err) {
		free(text);
		return NULL;
	}
	return text;
}

/* Lines of text that start with prefix, and the sum of their last fields. */
static int lines_starting(const char *text, const char *prefix, uint64_t *sum)
{
	int n = 0;
	size_t pl = strlen(prefix);

	if (sum)
		*sum = 0;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, prefix, pl) != 0)
			continue;
		n++;
		const char *end = strchr(l, '\n') ? strchr(l, '\n') : l + strlen(l), *sp = end;
		while (sp > l && sp[-1] != ' ')
			sp--;
		if (sum)
			*sum += strtoull(sp, NULL, 10);
	}
	return n;
}

/* The value of the first sample line starting with prefix, or -1. */
static long long value_of(const char *text, const char *prefix)
{
	uint64_t v;
	const char *l = strstr(text, prefix);
	if (!l || (l != text && l[-1] != '\n'))
		return -1;
	char line[1024];
	snprintf(line, sizeof line, "%.*s", (int)(strchr(l, '\n') - l), l);
	return lines_starting(line, prefix, &v) ? (long long)v : -1;
}

static void test_kernel_bound(void)
{
	int launch = cuda_api_find("cuLaunchKernel");
	uint64_t total = 0, sum;
	char name[32], msg[160];
	struct openmetrics_series series;

	openmetrics_series_init(&series);
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof name, "k%05d", i);
		int id = stats_kernel_id(0, name);
		for (int j = 0; j <= i % 100; j++, total++) {
			stats_on_launch(0, id, NULL, NULL);
			stats_on_call(0, launch, 0, false, 0);
		}
	}
	char *t = render(METRICS_PROMETHEUS, &series, 10, -1, "app", 10);
	check(t != NULL, "20,000 kernels: rendered");
	if (!t)
		return;
	int n = lines_starting(t, "gputop_kernel_launches_total{", &sum);
	snprintf(msg, sizeof msg, "20,000 kernels, top 10: 11 kernel series (%d)", n);
	check(n == 11, msg);
	snprintf(msg, sizeof msg, "the kernel series hold all %" PRIu64 " launches (%" PRIu64 ")", total, sum);
	check(sum == total, msg);
	check(value_of(t, "gputop_launches_total{pid=\"10\"}") == (long long)total, "gputop_launches_total: all");
	check(lines_starting(t, "gputop_kernel_launches_total{pid=\"10\",kernel=\"k00099\"}", NULL) == 1,
	      "a kernel with most launches (100) has a series");
	long long other = value_of(t, "gputop_kernel_launches_total{pid=\"10\",kernel=\"(other kernels)\"}");
	free(t);

	/* A kernel that becomes the hottest of all later counts in "(other kernels)". */
	int hot = stats_kernel_id(0, "late_hot");
	for (int i = 0; i < 5000; i++)
		stats_on_launch(0, hot, NULL, NULL);
	t = render(METRICS_PROMETHEUS, &series, 10, -1, "app", 10);
	check(t && lines_starting(t, "gputop_kernel_launches_total{", NULL) == 11, "later: still 11 kernel series");
	check(t && !strstr(t, "kernel=\"late_hot\""), "later: a kernel hot only later takes no series");
	check(t && value_of(t, "gputop_kernel_launches_total{pid=\"10\",kernel=\"(other kernels)\"}") == other + 5000,
	      "later: its launches count in (other kernels), which only grew");
	check(t && lines_starting(t, "gputop_kernel_launches_total{pid=\"10\",kernel=\"k00099\"}", NULL) == 1,
	      "later: the series made first stay");
	free(t);

	/* A reset (z) starts the choice afresh. */
	stats_reset();
	for (int i = 0; i < 3; i++)
		stats_on_launch(0, hot, NULL, NULL);
	t = render(METRICS_PROMETHEUS, &series, 10, -1, "app", 10);
	check(t && value_of(t, "gputop_kernel_launches_total{pid=\"10\",kernel=\"late_hot\"}") == 3,
	      "after a reset: the kernels launched since get series");
	check(t && lines_starting(t, "gputop_kernel_launches_total{", NULL) == 2, "after a reset: late_hot + other");
	free(t);

	/* top 0: only (other kernels). */
	struct openmetrics_series none;
	openmetrics_series_init(&none);
	t = render(METRICS_PROMETHEUS, &none, 10, -1, "app", 0);
	check(t && lines_starting(t, "gputop_kernel_launches_total{", &sum) == 1 && sum == 3,
	      "top 0: one series, (other kernels), with every launch");
	free(t);
	openmetrics_series_free(&none);
	openmetrics_series_free(&series);
}

static void test_devices(void)
{
	int malloc_ = cuda_api_find("cudaMalloc");
	struct openmetrics_series series;
	uint64_t t0 = now_ns();

	openmetrics_series_init(&series);
	stats_on_alloc(0, malloc_, 0x7f0000000000, 4096, MEM_DEVICE, 0, 1, t0, "");
	stats_on_alloc(0, malloc_, 0x7f0000100000, 1000, MEM_DEVICE, 1, 1, t0, "");
	stats_on_alloc(0, malloc_, 0x7f0000200000, 500, MEM_MANAGED, 1, 1, t0, "");
	stats_on_alloc(0, malloc_, 0x600000, 64, MEM_HOST, -1, 1, t0, "");
	char *t = render(METRICS_OPENMETRICS, &series, 10, -1, NULL, 10);
	check(t && value_of(t, "gputop_live_bytes{pid=\"10\",device=\"0\",kind=\"device\"}") == 4096, "device 0: 4096 bytes");
	check(t && value_of(t, "gputop_live_bytes{pid=\"10\",device=\"1\",kind=\"managed\"}") == 500, "device 1: 500 managed");
	check(t && value_of(t, "gputop_live_bytes{pid=\"10\",device=\"unknown\",kind=\"host\"}") == 64, "device not known: \"unknown\"");
	check(t && lines_starting(t, "gputop_live_bytes{", NULL) == 9, "3 devices x 3 kinds");
	check(t && value_of(t, "gputop_live_allocations{pid=\"10\",device=\"1\",kind=\"device\"}") == 1, "allocations counted");
	free(t);
	stats_on_free(0, 0x7f0000100000);
	stats_on_free(0, 0x7f0000200000);
	t = render(METRICS_OPENMETRICS, &series, 10, -1, NULL, 10);
	check(t && value_of(t, "gputop_live_bytes{pid=\"10\",device=\"1\",kind=\"device\"}") == 0,
	      "a device whose memory was freed stays shown, at 0 (no stale series)");
	free(t);
	openmetrics_series_free(&series);
	stats_on_free(0, 0x7f0000000000);
	stats_on_free(0, 0x600000);
}

static void test_labels(void)
{
	struct openmetrics_series series;
	char long_a[301], long_b[301];

	openmetrics_series_init(&series);
	memset(long_a, 'a', 300);
	memcpy(long_b, long_a, 300);
	long_a[300] = long_b[300] = 0;
	long_b[299] = 'b';	/* the same first 200 bytes */
	memcpy(long_a + 199, "\xc3\xa9", 2);	/* é across the cut at 200 */
	stats_on_launch(0, stats_kernel_id(0, long_a), NULL, NULL);
	stats_on_launch(0, stats_kernel_id(0, long_b), NULL, NULL);
	char *t = render(METRICS_PROMETHEUS, &series, 10, 3, "run \"x\" a\\b\nc \xff\xfe end", 50);
	check(t && strstr(t, "command=\"run \\\"x\\\" a\\\\b\\nc \xef\xbf\xbd\xef\xbf\xbd end\""),
	      "command: quote, backslash, newline escaped; not UTF-8 as U+FFFD (utf8.h)");
	check(t && strstr(t, "gputop_launches_total{pid=\"10\",rank=\"3\"}"), "rank label after pid when known");
	int cut = 0;
	char first[16] = "", second[16] = "";
	for (const char *p = t; p && (p = strstr(p, "...#")); p += 4, cut++)
		snprintf(cut ? second : first, 16, "%.8s", p + 4);
	check(cut == 2 && strcmp(first, second) != 0, "two long kernel names cut: two labels, told apart by a hash");
	check(t && !strstr(t, "\xc3\"") && !strstr(t, "\xc3..."), "a cut never splits a UTF-8 character");
	free(t);
	openmetrics_series_free(&series);
}

static void test_formats(void)
{
	struct openmetrics_series s1, s2;
	struct stats_snapshot snap;
	struct rows rows;
	char *t = NULL;
	size_t len;

	openmetrics_series_init(&s1);
	openmetrics_series_init(&s2);
	if (stats_snapshot(&snap) < 0 || rows_build(&rows, &snap, NULL) < 0) {
		check(false, "snapshot");
		return;
	}
	struct openmetrics_process p[2] = {
		{ .pid = 1, .rank = 0, .local_rank = -1, .running = true, .command = "a", .snap = &snap, .rows = &rows, .series = &s1 },
		{ .pid = 2, .rank = 1, .local_rank = -1, .running = false, .command = "b", .snap = &snap, .rows = &rows, .series = &s2 },
	};
	struct openmetrics_session session = { .tracer_cpu_ns = 2500000001u };
	FILE *f = open_memstream(&t, &len);
	check(openmetrics_write(f, METRICS_OPENMETRICS, &session, p, 2, 5) == 0, "OpenMetrics: two processes written");
	fclose(f);
	check(len > 6 && strcmp(t + len - 6, "# EOF\n") == 0, "OpenMetrics: ends with # EOF");
	check(lines_starting(t, "# TYPE gputop_launches counter", NULL) == 1, "OpenMetrics: one family header for both");
	check(strstr(t, "# TYPE gputop_launches counter\n# HELP gputop_launches Kernel launches, all kernels.\n"
			"gputop_launches_total{pid=\"1\",rank=\"0\"} ") != NULL &&
	      strstr(t, "\ngputop_launches_total{pid=\"2\",rank=\"1\"} ") != NULL,
	      "OpenMetrics: both processes' samples right after the header");
	check(strstr(t, "# TYPE gputop_process info\n") && strstr(t, "gputop_process_info{pid=\"1\""), "OpenMetrics: an info family");
	check(strstr(t, "# UNIT gputop_api_seconds seconds\n") != NULL, "OpenMetrics: units");
	check(lines_starting(t, "gputop_cpu_seconds_total 2.500000001\n", NULL) == 1 &&
	      lines_starting(t, "gputop_cpu_seconds_total", NULL) == 1,
	      "gputop's CPU time: one series for the session, no pid label");
	check(strstr(t, "gputop_process_running{pid=\"2\",rank=\"1\"} 0\n") &&
	      strstr(t, "gputop_process_running{pid=\"1\",rank=\"0\"} 1\n"), "process_running: 1 traced, 0 ended");
	free(t);
	t = NULL;
	f = open_memstream(&t, &len);
	check(openmetrics_write(f, METRICS_PROMETHEUS, &session, p, 1, 5) == 0, "Prometheus text: written");
	fclose(f);
	check(!strstr(t, "# EOF") && !strstr(t, "# UNIT"), "Prometheus text: no # EOF, no # UNIT");
	check(strstr(t, "# HELP gputop_launches_total Kernel launches, all kernels.\n# TYPE gputop_launches_total counter\n") != NULL,
	      "Prometheus text: HELP and TYPE of the sample name");
	check(strstr(t, "# TYPE gputop_process_info gauge\n") != NULL, "Prometheus text: info as a gauge");
	free(t);
	rows_free(&rows);
	stats_snapshot_free(&snap);
	openmetrics_series_free(&s1);
	openmetrics_series_free(&s2);

	check(openmetrics_negotiate(NULL) == METRICS_PROMETHEUS, "no Accept: Prometheus text");
	check(openmetrics_negotiate("*/*") == METRICS_PROMETHEUS, "*/*: Prometheus text");
	check(openmetrics_negotiate("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
				    "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1") == METRICS_OPENMETRICS,
	      "Prometheus's Accept: OpenMetrics");
}

/* NCCL: each operation called gets its three series (only those called), P2P its bytes by
 * source and destination device ("unknown" where not known). */
static void test_nccl(void)
{
	struct openmetrics_series series;
	openmetrics_series_init(&series);
	stats_reset();
	char *t = render(METRICS_PROMETHEUS, &series, 10, 1, "rank", 10);
	check(t && lines_starting(t, "gputop_nccl_calls_total{", NULL) == 0,
	      "nccl: no operation called, no series (the family's header only)");
	check(t && strstr(t, "# TYPE gputop_nccl_calls_total counter"), "nccl: the family is declared all the same");
	free(t);
	stats_on_collective(0, COLL_ALLREDUCE, 4096, 2000000, 0x1000, -1, 0);
	stats_on_collective(0, COLL_ALLREDUCE, 1024, 1000000, 0x1000, -1, 0);
	stats_on_collective(0, COLL_BROADCAST, 666, 500000, 0x1000, -1, 0);
	stats_on_p2p(0, 0, 1, 1 << 20);
	stats_on_p2p(0, 0, -1, 100);
	t = render(METRICS_PROMETHEUS, &series, 10, 1, "rank", 10);
	check(t && value_of(t, "gputop_nccl_calls_total{pid=\"10\",rank=\"1\",op=\"AllReduce\"}") == 2,
	      "nccl: AllReduce called twice");
	check(t && value_of(t, "gputop_nccl_bytes_total{pid=\"10\",rank=\"1\",op=\"AllReduce\"}") == 5120,
	      "nccl: AllReduce's bytes, summed");
	check(t && strstr(t, "gputop_nccl_seconds_total{pid=\"10\",rank=\"1\",op=\"AllReduce\"} 0.003000000\n"),
	      "nccl: AllReduce's seconds");
	check(t && value_of(t, "gputop_nccl_calls_total{pid=\"10\",rank=\"1\",op=\"Broadcast\"}") == 1 &&
	      lines_starting(t, "gputop_nccl_calls_total{", NULL) == 2, "nccl: Broadcast once, and no other op");
	check(t && value_of(t, "gputop_p2p_bytes_total{pid=\"10\",rank=\"1\",src_device=\"0\",dst_device=\"1\"}") == 1 << 20,
	      "p2p: GPU 0 to GPU 1");
	check(t && value_of(t, "gputop_p2p_bytes_total{pid=\"10\",rank=\"1\",src_device=\"0\",dst_device=\"unknown\"}") == 100,
	      "p2p: a destination not known is \"unknown\"");
	free(t);
	openmetrics_series_free(&series);
}

/* --gpu-time's busy seconds: a sample only while GPU time is recorded. */
static void test_gpu_busy(void)
{
	struct openmetrics_series series;
	openmetrics_series_init(&series);
	stats_reset();
	char *t = render(METRICS_PROMETHEUS, &series, 10, -1, "app", 10);
	check(t && lines_starting(t, "gputop_gpu_busy_seconds_total{", NULL) == 0,
	      "gpu busy: no sample without --gpu-time");
	free(t);
	stats_set_gpu_time(0, true, now_ns(), 0, 0);
	stats_on_gpu_busy(0, 1500000000);
	stats_on_gpu_busy(0, 250000000);
	t = render(METRICS_PROMETHEUS, &series, 10, -1, "app", 10);
	check(t && strstr(t, "gputop_gpu_busy_seconds_total{pid=\"10\"} 1.750000000\n"),
	      "gpu busy: the busy time recorded, in seconds");
	free(t);
	openmetrics_series_free(&series);
}

/* Every sample line of text that starts with name{ has the labels want right after its '{'. */
static bool all_samples_have(const char *text, const char *want, int *n)
{
	*n = 0;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (*l == '#' || *l == '\n')
			continue;
		const char *brace = strchr(l, '{'), *end = strchr(l, '\n');
		if (!brace || (end && brace > end) || strncmp(brace + 1, want, strlen(want)) != 0)
			return false;
		(*n)++;
	}
	return *n > 0;
}

/* The stable labels of issue 26: a process's rank, local rank and job, and the session's host and
 * pod, on every series; the same rank in two jobs makes two series; unset ones are left out. */
static void test_identity(void)
{
	struct openmetrics_series s1, s2;
	struct stats_snapshot snap;
	struct rows rows;
	char *t = NULL;
	size_t len;
	int n;

	openmetrics_series_init(&s1);
	openmetrics_series_init(&s2);
	stats_reset();
	stats_on_launch(0, stats_kernel_id(0, "k"), NULL, NULL);
	if (stats_snapshot(&snap) < 0 || rows_build(&rows, &snap, NULL) < 0) {
		check(false, "snapshot");
		return;
	}
	struct openmetrics_process p[2] = {
		{ .pid = 41, .rank = 3, .local_rank = 1, .job_id = "run-\"7\"", .running = true, .command = "a",
		  .snap = &snap, .rows = &rows, .series = &s1 },
		{ .pid = 41, .rank = 3, .local_rank = -1, .job_id = "123456", .running = true, .command = "a",
		  .snap = &snap, .rows = &rows, .series = &s2 },
	};
	const struct openmetrics_label labels[] = {
		{ "hostname", "node-a" }, { "k8s_namespace", "ml" }, { "k8s_pod", "train-0" },
		{ "k8s_node", NULL }, { "unset", "" },
	};
	struct openmetrics_session session = { .tracer_cpu_ns = 1000000000u, .labels = labels, .n_labels = 5 };
	FILE *f = open_memstream(&t, &len);
	check(openmetrics_write(f, METRICS_OPENMETRICS, &session, p, 1, 5) == 0, "identity: written");
	fclose(f);
	char msg[160];
	/* The session family has the session's labels only. */
	check(strstr(t, "\ngputop_cpu_seconds_total{hostname=\"node-a\",k8s_namespace=\"ml\",k8s_pod=\"train-0\"} 1.000000000\n") != NULL,
	      "identity: gputop_cpu_seconds carries the session's labels only");
	/* Every other sample: the process's labels, then the session's, in that order. */
	char *copy = strdup(t), *cpu = strstr(copy, "gputop_cpu_seconds_total{");
	if (cpu)
		memset(cpu, '#', strcspn(cpu, "\n"));	/* out of the way, as a comment line */
	bool all = all_samples_have(copy, "pid=\"41\",rank=\"3\",local_rank=\"1\",job_id=\"run-\\\"7\\\"\","
				   "hostname=\"node-a\",k8s_namespace=\"ml\",k8s_pod=\"train-0\"", &n);
	snprintf(msg, sizeof msg, "identity: all %d samples carry pid, rank, local_rank, job_id (escaped), hostname, pod", n);
	check(all && n > 20, msg);
	check(!strstr(t, "k8s_node=") && !strstr(t, "unset="), "identity: labels not set are left out (no empty value)");
	free(copy);
	free(t);

	/* The same pid and rank in another job: other series, told apart by job_id. */
	t = NULL;
	f = open_memstream(&t, &len);
	check(openmetrics_write(f, METRICS_PROMETHEUS, NULL, p, 2, 5) == 0, "two jobs: written");
	fclose(f);
	check(strstr(t, "gputop_launches_total{pid=\"41\",rank=\"3\",local_rank=\"1\",job_id=\"run-\\\"7\\\"\"} 1\n") &&
	      strstr(t, "gputop_launches_total{pid=\"41\",rank=\"3\",job_id=\"123456\"} 1\n"),
	      "two jobs, same pid and rank: two series; no local_rank label where it is not known");
	check(strstr(t, "\ngputop_cpu_seconds_total 0.000000000\n") != NULL, "no session labels: the session family unlabelled");
	free(t);
	rows_free(&rows);
	stats_snapshot_free(&snap);
	openmetrics_series_free(&s1);
	openmetrics_series_free(&s2);
}

int main(void)
{
	if (stats_init() < 0) {
		printf("not ok - stats_init\n");
		return 1;
	}
	test_kernel_bound();
	test_devices();
	test_labels();
	test_formats();
	test_nccl();
	test_gpu_busy();
	test_identity();
	stats_free();
	printf("# %d failed\n", failures);
	return failures != 0;
}
