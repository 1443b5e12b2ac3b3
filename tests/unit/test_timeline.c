/* test_timeline.c — output/timeline.c: a thread's calls that overlap (two clocks that disagree)
 * are clamped so that they follow each other, 1 ns apart, and counted in the file's otherData;
 * calls that do not overlap are written as they came; complete events carry no args (one
 * speedscope frame a function); the file is a whole JSON document. */
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

int main(void)
{
	char path[] = "/tmp/test_timeline.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	check(timeline_open(fd, 1 << 20, getpid()) == 0, "the timeline opens");
	pid_t pid = getpid(), tid = pid;
	uint64_t t0 = 1000000000;
	timeline_call(pid, tid, "cudaMemcpyAsync", t0, t0 + 1000);		/* 1: as it came */
	timeline_call(pid, tid, "cudaStreamSynchronize", t0 + 900, t0 + 5000);	/* 2: starts 100 ns early */
	timeline_call(pid, tid, "cudaLaunchKernel", t0 + 6000, t0 + 6020);	/* 3: as it came */
	timeline_call(pid, tid, "cudaLaunchKernel", t0 + 6020, t0 + 6040);	/* 4: touches 3 */
	timeline_call(pid, tid, "cudaMemcpy", t0 + 5500, t0 + 6010);		/* 5: came late, overlaps 3 */
	timeline_call(pid, tid + 1, "cudaMalloc", t0 + 900, t0 + 5000);		/* another thread */
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
	return failures != 0;
}
