/* report.c — the session's last writing (report.h): one snapshot of the figures, which no longer
 * change, for every file written at the end. */
#define _GNU_SOURCE
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "clock.h"
#include "cuda_api.h"
#include "folded.h"
#include "json_interval.h"
#include "log.h"
#include "session_state.h"
#include "timeline.h"
#include "trace.h"

/* What a call cost the program in stops, from the API rows of s: the one definition every
 * summary uses. */
static void stops_from(struct report_info *out, const struct stats_snapshot *s)
{
	out->stops_per_return = out->stops_per_launch = 0;
	for (size_t i = 0; i < s->n_api; i++) {
		const struct api_spec *spec = cuda_api_get((int)i);
		const struct stats_api *a = &s->api[i];

		if (!spec || !a->calls)
			continue;
		if (spec->op == OP_LAUNCH && a->stops_per_call > 0)
			out->stops_per_launch = 1;
		if (a->returns_seen && a->stops_per_call > 1)
			out->stops_per_return = 1;
	}
}

void report_from_snapshot(struct report_info *out, const struct stats_snapshot *s)
{
	struct session_status st;
	session_status_get(&st);
	out->cuda_before_attach = st.cuda_before_attach;
	out->duration_s = (double)(now_ns() - s->start_ns) / 1e9;
	stops_from(out, s);
}

/* What one presenter writes of snap (folded.h's, json.h's). */
struct writer {
	int (*write)(FILE *f, const struct writer *w, const struct stats_snapshot *snap);
	const struct report_info *info;	/* --json's */
	int metric;			/* --folded's */
};

static int folded_writer(FILE *f, const struct writer *w, const struct stats_snapshot *snap)
{
	return folded_write(f, w->metric, snap);
}

static int json_writer(FILE *f, const struct writer *w, const struct stats_snapshot *snap)
{
	return json_write(f, w->info, snap);
}

/* What w writes of snap (NULL: none could be taken) becomes the file's contents
 * (outfile_commit), or, if a write fails, the file stays as it was. 0, or -1. */
static int write_output(struct outfile *o, const struct writer *w, const struct stats_snapshot *snap)
{
	if (o->fd < 0)
		return 0;
	if (!snap)
		return outfile_commit(o, -ENOMEM);
	uint64_t t0 = now_ns();
	int fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 0), err = 0;	/* o->fd stays open to be synced */
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (f) {
		err = w->write(f, w, snap);
		if (fclose(f) != 0 && !err)
			err = -errno;
	} else {
		err = -errno;
		if (fd >= 0)
			close(fd);
	}
	log_debug("%s: %zu processes, %zu kernel rows, %zu live allocations; written %.1f ms", o->what,
		  snap->n_proc, snap->n_kernel, snap->n_alloc, (double)(now_ns() - t0) / 1e6);
	return outfile_commit(o, err);
}

bool report_write_end(const struct report_files *f, struct report_info *info)
{
	bool failed = false;
	failed |= outfile_commit(f->trace, trace_close()) < 0;
	failed |= outfile_commit(f->timeline, timeline_close()) < 0;
	if (timeline_clamped())
		log_info("--timeline: %llu calls' times clamped so as not to overlap their thread's previous "
			 "call (a stop's clock and the stubs' counter disagreed)", (unsigned long long)timeline_clamped());
	struct devices_snapshot devices;
	devices_snapshot(&devices);
	info->devices = &devices;
	struct stats_snapshot snap;
	uint64_t t0 = now_ns();
	bool have = stats_snapshot(&snap) == 0;
	if (have) {
		stops_from(info, &snap);
		log_debug("the end: snapshot of the figures %.1f ms", (double)(now_ns() - t0) / 1e6);
	}
	failed |= write_output(f->folded, &(struct writer){ .write = folded_writer, .metric = f->folded_metric },
			       have ? &snap : NULL) < 0;
	failed |= write_output(f->json, &(struct writer){ .write = json_writer, .info = info }, have ? &snap : NULL) < 0;
	failed |= json_interval_stop(info) < 0;
	info->devices = NULL;	/* this frame's */
	if (have)
		stats_snapshot_free(&snap);
	return !failed;
}
