/* test_timeline.c — output/timeline.c: a thread's calls that overlap (two clocks that disagree)
 * are clamped so that they follow each other, 1 ns apart, and counted in the file's otherData;
 * calls that do not overlap are written as they came; complete events carry no args (one
 * speedscope frame a function); the file is a whole JSON document. Compact mode
 * (--timeline-compact): runs of one function's calls on a thread are one complete event and an
 * instant right after it with their count and time inside, split by another function, another
 * result, a gap over 50 us or a run over 10 ms; a counter is written at most every 50 ms and
 * its last value at the end; launches are counted per kernel; a tick writes what went quiet. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "timeline.h"

/* The complete events of the file, in order, as [ts, ts + dur] in ns. */
static int spans(json_t *doc, double (*out)[2], int max, bool *args)
{
	int n = 0;
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(doc, "traceEvents"), i, e) {
		if (strcmp(json_string_value(json_object_get(e, "ph")), "X") || n == max)
			continue;
		double ts = json_number_value(json_object_get(e, "ts")) * 1e3;
		out[n][0] = ts;
		out[n][1] = ts + json_number_value(json_object_get(e, "dur")) * 1e3;
		*args |= json_object_get(e, "args") != NULL;
		n++;
	}
	return n;
}

/* The events of doc with ph ph (and cat cat unless NULL), at most max, in file order. */
static int events(json_t *doc, const char *ph, const char *cat, json_t **out, int max)
{
	int n = 0;
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(doc, "traceEvents"), i, e) {
		const char *c = json_string_value(json_object_get(e, "cat"));
		if (strcmp(json_string_value(json_object_get(e, "ph")), ph) || (cat && (!c || strcmp(c, cat))))
			continue;
		if (n < max)
			out[n] = e;
		n++;
	}
	return n;
}

static double num(json_t *e, const char *key)
{
	return json_number_value(json_object_get(e, key));
}

static double arg(json_t *e, const char *key)
{
	return json_number_value(json_object_get(json_object_get(e, "args"), key));
}

static void compact_mode(void)
{
	char path[] = "/tmp/test_timeline.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return;
	pid_t pid = getpid(), tid = pid;
	uint64_t t0 = 1000000000;
	check(timeline_open(fd, 1 << 24, pid, true) == 0, "compact: the timeline opens");
	for (int i = 0; i < 3; i++)	/* a: one run of 3, 100 ns apart */
		timeline_call(pid, tid, "cudaLaunchKernel", t0 + 120 * i, t0 + 120 * i + 20, 0, NULL);
	timeline_call(pid, tid, "cudaMemcpy", t0 + 300, t0 + 1300, 0, NULL);	/* b: alone */
	timeline_call(pid, tid, "cudaLaunchKernel", t0 + 1400, t0 + 1420, 0, NULL);	/* c: then a gap */
	timeline_call(pid, tid, "cudaLaunchKernel", t0 + 61420, t0 + 61440, 0, NULL);	/* d: of 60 us */
	timeline_call(pid, tid, "cudaStreamSynchronize", t0 + 70000, t0 + 70010, 999, "cudaErrorX");	/* e: */
	timeline_call(pid, tid, "cudaStreamSynchronize", t0 + 70020, t0 + 70030, 999, "cudaErrorX");	/* 2 failed */
	timeline_call(pid, tid, "cudaStreamSynchronize", t0 + 70040, t0 + 70050, 0, NULL);	/* f: then one did not */
	uint64_t t1 = t0 + 100000;
	for (int i = 0; i < 15000; i++)	/* g: 15 ms of calls 1 us apart: runs of at most 10 ms */
		timeline_call(pid, tid, "cudaMemsetAsync", t1 + 1000 * (uint64_t)i, t1 + 1000 * (uint64_t)i + 10, 0, NULL);
	for (int i = 0; i < 3; i++) {	/* counters within 50 ms: the first and the last written */
		timeline_copy(pid, 1, "H2D", 100, t0 + 1000 * (uint64_t)i);
		timeline_launch(pid, tid, "k(int)", t0 + 1000 * (uint64_t)i, NULL, NULL, -1);
	}
	timeline_call(pid, tid + 1, "cudaMalloc", t0, t0 + 10, 0, NULL);	/* another thread: held */
	timeline_tick(t0 + 400000000);	/* 400 ms later: what went quiet is in the file */
	json_t *doc = json_load_file(path, 0, NULL), *x[16], *in[16], *c[8];
	int held = doc ? events(doc, "X", NULL, x, 16) : 0;
	check(held >= 9, "compact: after a tick, the quiet runs are in the file (%d complete events)", held);
	json_decref(doc);
	check(timeline_close() == 0, "compact: the timeline closes");

	doc = json_load_file(path, 0, NULL);
	check(doc != NULL, "compact: a whole JSON document");
	if (!doc)
		return;
	check(json_object_get(json_object_get(doc, "otherData"), "compact") != NULL, "compact: otherData.compact");
	int nx = events(doc, "X", NULL, x, 16), ni = events(doc, "i", NULL, in, 16);
	check(nx == 9, "compact: 9 complete events (a b c d e f g g, another thread's) (%d)", nx);
	check(ni == 4, "compact: 4 instants (a, e, the two of g) (%d)", ni);
	if (nx != 9 || ni != 4)
		return;
	check(num(x[0], "ts") == 1e6 && num(x[0], "dur") == 0.26, "a: one event from the first's start to the last's end");
	check(!strcmp(json_string_value(json_object_get(in[0], "name")), "3 calls") && arg(in[0], "calls") == 3 &&
	      arg(in[0], "inside_us") == 0.06 && num(in[0], "ts") == 1e6, "a: its instant says 3 calls, 0.06 us inside");
	check(num(x[1], "ts") == 1e6 + 0.3 && num(x[2], "ts") == 1e6 + 1.4 && num(x[3], "ts") == 1e6 + 61.42,
	      "b, c, d: each alone (another function, a gap of 60 us)");
	check(!strcmp(json_string_value(json_object_get(in[1], "cat")), "error") && arg(in[1], "calls") == 2 &&
	      arg(in[1], "error") == 999 && num(x[4], "dur") == 0.03, "e: 2 failed calls, one event and its error");
	check(num(x[5], "ts") == 1e6 + 70.04, "f: the call that did not fail is its own");
	/* The runs a tick or the end wrote come in the order of the threads' table. */
	int other = json_integer_value(json_object_get(x[7], "tid")) == tid + 1 ? 7 : 8;
	json_t *g1 = x[6], *g2 = x[other == 7 ? 8 : 7];
	check(arg(in[2], "calls") + arg(in[3], "calls") == 15000 && num(g1, "dur") <= 10000 && num(g2, "dur") <= 10000,
	      "g: 15000 calls in two runs of at most 10 ms (%.0f + %.0f)", arg(in[2], "calls"), arg(in[3], "calls"));
	check(json_integer_value(json_object_get(x[other], "tid")) == tid + 1 && num(x[other], "ts") == 1e6,
	      "another thread's call is its own");
	int nc = events(doc, "C", "copy", c, 8);
	check(nc == 2 && arg(c[1], "bytes") == 300 && num(c[1], "ts") == 1e6 + 2,
	      "copies: the first value, then the last at its time (%d)", nc);
	nc = events(doc, "C", "launches", c, 8);
	check(nc == 2 && arg(c[1], "launches") == 3 &&
	      !strcmp(json_string_value(json_object_get(c[1], "name")), "launches, k(int)"),
	      "launches: counted per kernel, the last value at the end (%d)", nc);
	check(events(doc, "i", "launch", in, 16) == 0, "no instant per launch");
	json_decref(doc);
	close(fd);
	unlink(path);
}

int main(void)
{
	char path[] = "/tmp/test_timeline.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	check(timeline_open(fd, 1 << 20, getpid(), false) == 0, "the timeline opens");
	pid_t pid = getpid(), tid = pid;
	uint64_t t0 = 1000000000;
	timeline_call(pid, tid, "cudaMemcpyAsync", t0, t0 + 1000, 0, NULL);		/* 1: as it came */
	timeline_call(pid, tid, "cudaStreamSynchronize", t0 + 900, t0 + 5000, 0, NULL);	/* 2: starts 100 ns early */
	timeline_call(pid, tid, "cudaLaunchKernel", t0 + 6000, t0 + 6020, 0, NULL);	/* 3: as it came */
	timeline_call(pid, tid, "cudaLaunchKernel", t0 + 6020, t0 + 6040, 0, NULL);	/* 4: touches 3 */
	timeline_call(pid, tid, "cudaMemcpy", t0 + 5500, t0 + 6010, 0, NULL);		/* 5: came late, overlaps 3 */
	timeline_call(pid, tid + 1, "cudaMalloc", t0 + 900, t0 + 5000, 0, NULL);		/* another thread */
	check(timeline_clamped() == 3, "3 calls clamped (%llu)", (unsigned long long)timeline_clamped());
	check(timeline_close() == 0, "the timeline closes");

	json_error_t err;
	json_t *doc = json_load_file(path, 0, &err);
	check(doc != NULL, "a whole JSON document (%s)", doc ? "" : err.text);
	if (!doc)
		return 1;
	check(json_integer_value(json_object_get(json_object_get(doc, "otherData"), "clamped_calls")) == 3,
	      "otherData.clamped_calls is 3");
	double s[8][2];
	bool args = false;
	int n = spans(doc, s, 8, &args);
	check(n == 6, "6 complete events (%d)", n);
	check(!args, "complete events carry no args");
	check(s[0][0] == 1e9 && s[0][1] == 1e9 + 1000, "1: as it came");
	check(s[1][0] == 1e9 + 1001 && s[1][1] == 1e9 + 5000, "2: starts 1 ns after 1 ends (%.0f)", s[1][0] - 1e9);
	check(s[2][0] == 1e9 + 6000, "3: as it came");
	check(s[3][0] == 1e9 + 6021 && s[3][1] == 1e9 + 6040, "4: 1 ns after 3 (%.0f)", s[3][0] - 1e9);
	check(s[4][0] == 1e9 + 5500 && s[4][1] == 1e9 + 6000 - 1, "5: ends 1 ns before 3 began (%.0f)", s[4][1] - 1e9);
	check(s[5][0] == 1e9 + 900, "another thread's call is its own (%.0f)", s[5][0] - 1e9);
	json_decref(doc);
	close(fd);
	unlink(path);
	compact_mode();
	return failures != 0;
}
