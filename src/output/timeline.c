/* timeline.c — the Chrome trace event file (timeline.h). Each event is built and written by
 * jansson (json_writer.h: names by the one UTF-8 rule), gathered in a buffer and written with
 * one pwrite together with the document's closing (the array's end and otherData, with the
 * count of clamped calls) at the end; the next write starts over that closing, so the file on
 * disk is always a complete JSON document. */
#define _GNU_SOURCE
#include "timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "hashmap.h"
#include "json_writer.h"

enum { BUF = 1 << 16, EVENT_MAX = 2048, DEVICES = 64, TAIL_MAX = 96, DIRECTIONS = 8 };
#define FLUSH_NS 200000000ull	/* at least this often while events come */

struct live_entry {	/* an allocation the counter counts, by address */
	uint64_t ptr;
	uint64_t bytes;
	int64_t device;
};

/* A process's track: its live allocations (device pointers of two processes may be equal)
 * and its counters. */
struct track {
	pid_t pid;
	struct hashmap live;	/* of live_entry */
	uint64_t live_bytes[DEVICES + 1];	/* [DEVICES]: device not known */
	uint64_t copied[DIRECTIONS];		/* bytes copied, by enum copy_dir */
};

enum { RECENT = 4 };
/* A thread's track: the latest calls put on it, which the next one must not overlap (a call
 * whose end was counted late comes after later ones). */
struct thread_track {
	uint64_t key;		/* tid + 1 */
	uint64_t start[RECENT], end[RECENT];	/* ns; end 0: none */
};

static struct {
	int fd;
	off_t off;		/* where the next events go (over the closing) */
	uint64_t max_bytes;
	bool full, any;
	int err;		/* the first failed write's errno: nothing more is written */
	size_t len;
	uint64_t last_flush;
	struct hashmap tids;	/* of thread_track: threads named so far */
	uint64_t clamped;	/* calls whose times were clamped to their thread's previous call */
	struct track *tracks;	/* one per process seen, in that order */
	size_t n_tracks;
	char buf[BUF + TAIL_MAX];
} tl = { .fd = -1 };

bool timeline_on(void)
{
	return tl.fd >= 0;
}

/* Whether events are still taken: not once the file reached its bound. */
static bool taking(void)
{
	return tl.fd >= 0 && !tl.full && !tl.err;
}

static void flush(void)
{
	if (tl.fd < 0 || tl.err || (!tl.len && tl.off))
		return;
	int tail = snprintf(tl.buf + tl.len, TAIL_MAX, "\n],\"otherData\":{\"tool\":\"gputop\",\"clamped_calls\":%" PRIu64 "}}\n",
			    tl.clamped);
	ssize_t n = pwrite(tl.fd, tl.buf, tl.len + (size_t)tail, tl.off);
	if (n == (ssize_t)(tl.len + (size_t)tail))
		tl.off += (off_t)tl.len;
	else
		tl.err = n < 0 ? errno : ENOSPC;	/* a short write: the file system is full */
	tl.len = 0;
	tl.last_flush = now_ns();
}

/* Appends raw text (an event, or the header) to the buffer. */
static void put(const char *s, size_t n)
{
	if (tl.len + n > BUF)
		flush();
	if (n <= BUF) {
		memcpy(tl.buf + tl.len, s, n);
		tl.len += n;
	}
}

/* Reals with 3 decimals (µs to the ns, GB/s) as %.Pg, P the digits of the largest of the event
 * before the point + 3, at most 17: up to 15 (times under 10^12 µs) each is written as it was
 * rounded, never with the binary fraction's noise of %.17g (jansson's default: 12.345 as
 * 12.345000000000001); past that the values stay exact, with some noise. */
static size_t precision_for(double largest)
{
	int digits = 1;
	for (double v = fabs(largest); v >= 10 && digits < 17; v /= 10)
		digits++;
	return JSON_REAL_PRECISION(digits + 3 > 17 ? 17 : digits + 3);
}

/* Appends the event w holds (then frees it); largest: its largest real, for their precision. */
static void emit(struct jw *w, double largest)
{
	char ev[EVENT_MAX], *big = NULL;
	const char *sep = tl.any ? ",\n" : "\n";
	size_t lead = strlen(sep), room = sizeof ev - lead;

	if (!taking())
		goto out;
	size_t flags = JSON_COMPACT | precision_for(largest);
	char *text = ev;
	size_t len = jw_dumpb(w, ev + lead, room, flags);
	if (len > room) {	/* a long kernel name */
		if (!(big = malloc(lead + len)))
			goto out;
		text = big;
		len = jw_dumpb(w, big + lead, len, flags);
	}
	if (!len)
		goto out;
	memcpy(text, sep, lead);
	len += lead;
	if ((uint64_t)tl.off + tl.len + (uint64_t)len + 256 > tl.max_bytes) {
		tl.full = true;
		const char *note = ",\n{\"name\":\"gputop: --timeline-max-mb reached, later events left out\","
				   "\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":0}";
		put(tl.any ? note : note + 1, strlen(tl.any ? note : note + 1));
		flush();
		goto out;
	}
	put(text, len);
	tl.any = true;
	if (tl.len > BUF / 2 || now_ns() - tl.last_flush > FLUSH_NS)
		flush();
out:
	free(big);
	jw_free(w);
}

/* The members every event has: name, cat (unless NULL), ph, pid, tid. */
static void event_begin(struct jw *w, const char *name, const char *cat, const char *ph, pid_t pid, pid_t tid)
{
	jw_open(w, '{');
	jw_key(w, "name");
	jw_str(w, name);
	if (cat) {
		jw_key(w, "cat");
		jw_str(w, cat);
	}
	jw_key(w, "ph");
	jw_str(w, ph);
	jw_key(w, "pid");
	jw_int(w, pid);
	jw_key(w, "tid");
	jw_int(w, tid);
}

static double us(uint64_t ns)
{
	return (double)ns / 1e3;
}

/* A metadata event: the name of a process's or a thread's track. */
static void named(pid_t pid, pid_t tid, const char *what, const char *name)
{
	struct jw w = { 0 };
	event_begin(&w, what, NULL, "M", pid, tid);
	jw_key(&w, "args");
	jw_open(&w, '{');
	jw_key(&w, "name");
	jw_str(&w, name);
	jw_close(&w);
	jw_close(&w);
	emit(&w, 0);
}

static void name_process(pid_t pid)
{
	char path[64], comm[64] = "", name[96];
	snprintf(path, sizeof path, "/proc/%d/comm", pid);
	FILE *f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof comm, f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	snprintf(name, sizeof name, "%s (%d)", comm, pid);
	named(pid, 0, "process_name", name);
}

/* The track of process pid, named the first time it shows up; NULL when out of memory. Valid
 * until the next call. */
static struct track *track_of(pid_t pid)
{
	for (size_t i = 0; i < tl.n_tracks; i++)
		if (tl.tracks[i].pid == pid)
			return &tl.tracks[i];
	struct track *t = realloc(tl.tracks, (tl.n_tracks + 1) * sizeof *t);
	if (!t)
		return NULL;
	tl.tracks = t;
	t = &tl.tracks[tl.n_tracks];
	*t = (struct track){ .pid = pid };
	if (hashmap_init(&t->live, sizeof(struct live_entry), 64, HASHMAP_SHRINK) < 0)
		return NULL;
	tl.n_tracks++;
	name_process(pid);
	return t;
}

/* A thread's track, named the first time it shows up; NULL when out of memory. */
static struct thread_track *thread_of(pid_t pid, pid_t tid)
{
	bool added;
	track_of(pid);
	struct thread_track *t = hashmap_insert(&tl.tids, (uint64_t)tid + 1, &added);
	if (!t || !added)
		return t;
	char path[64], comm[64] = "";
	if (tid == 0) {
		snprintf(comm, sizeof comm, "launches (thread not recorded)");
	} else {
		snprintf(path, sizeof path, "/proc/%d/task/%d/comm", pid, tid);
		FILE *f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof comm, f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
	}
	named(pid, tid, "thread_name", comm);
	return t;
}

int timeline_open(int fd, uint64_t max_bytes, pid_t pid)
{
	timeline_close();
	int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (copy < 0)
		return -errno;
	if (ftruncate(copy, 0) < 0) {
		int err = -errno;
		close(copy);
		return err;
	}
	tl.fd = copy;
	tl.off = 0;
	tl.len = 0;
	tl.err = 0;
	tl.full = tl.any = false;
	tl.clamped = 0;
	tl.max_bytes = max_bytes < 4096 ? 4096 : max_bytes;
	hashmap_init(&tl.tids, sizeof(struct thread_track), 64, 0);
	static const char head[] = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
	put(head, sizeof head - 1);
	track_of(pid);
	flush();
	return 0;
}

int timeline_close(void)
{
	if (tl.fd < 0)
		return 0;
	flush();
	int err = tl.err ? -tl.err : 0;
	close(tl.fd);
	tl.fd = -1;
	hashmap_clear(&tl.tids);
	for (size_t i = 0; i < tl.n_tracks; i++)
		hashmap_clear(&tl.tracks[i].live);
	free(tl.tracks);
	tl.tracks = NULL;
	tl.n_tracks = 0;
	return err;
}

uint64_t timeline_clamped(void)
{
	return tl.clamped;
}

/* "(x,y,z)": dimensions as the timeline has always shown them. */
static void dim3_text(struct jw *w, const char *key, const uint32_t v[3])
{
	char text[40];
	snprintf(text, sizeof text, "(%u,%u,%u)", v[0], v[1], v[2]);
	jw_key(w, key);
	jw_str(w, text);
}

/* A call [*start, *end] on thread t, made not to overlap the thread's recent calls: a thread's
 * calls follow each other (one made inside another is not put on the timeline), so an overlap
 * only says that two clocks disagree (the stop's clock at an int3 return, the counter's at the
 * next call's entry) or that gputop was late. It starts 1 ns after the latest one ends (or ends
 * 1 ns before it starts, where it came in late and began first): touching ends are left apart,
 * so that ts + dur, added in floating point by a viewer, cannot pass the next ts. */
static void clamp(struct thread_track *t, uint64_t *start, uint64_t *end)
{
	int order[RECENT], n = 0, oldest = 0;
	for (int i = 0; i < RECENT; i++) {	/* the recent calls by their start */
		if (t->end[i] < t->end[oldest])
			oldest = i;
		if (!t->end[i])
			continue;
		int j = n++;
		for (; j > 0 && t->start[order[j - 1]] > t->start[i]; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	bool clamped = false;
	for (int k = 0; k < n; k++) {
		int i = order[k];
		if (*end < t->start[i] || *start > t->end[i])
			continue;
		clamped = true;
		if (*start >= t->start[i]) {
			*start = t->end[i] + 1;
			if (*end < *start)
				*end = *start;
		} else {
			*end = t->start[i] - 1;
		}
	}
	tl.clamped += clamped;
	t->start[oldest] = *start;
	t->end[oldest] = *end;
}

void timeline_call(pid_t pid, pid_t tid, const char *api, uint64_t start_ns, uint64_t end_ns)
{
	struct jw w = { 0 };
	if (!taking())
		return;
	struct thread_track *t = thread_of(pid, tid);
	if (end_ns < start_ns)
		end_ns = start_ns;
	if (t)
		clamp(t, &start_ns, &end_ns);
	event_begin(&w, api, "cuda", "X", pid, tid);
	jw_key(&w, "ts");
	jw_double(&w, us(start_ns));
	jw_key(&w, "dur");
	jw_double(&w, us(end_ns - start_ns));
	jw_close(&w);
	emit(&w, us(end_ns));
}

void timeline_error(pid_t pid, pid_t tid, const char *api, int error, const char *error_name, uint64_t at_ns)
{
	struct jw w = { 0 };
	if (!taking())
		return;
	thread_of(pid, tid);
	event_begin(&w, error_name && *error_name ? error_name : "error", "error", "i", pid, tid);
	jw_key(&w, "s");
	jw_str(&w, "t");
	jw_key(&w, "ts");
	jw_double(&w, us(at_ns));
	jw_key(&w, "args");
	jw_open(&w, '{');
	jw_key(&w, "call");
	jw_str(&w, api);
	jw_key(&w, "error");
	jw_int(&w, error);
	jw_close(&w);
	jw_close(&w);
	emit(&w, us(at_ns));
}

void timeline_launch(pid_t pid, pid_t tid, const char *kernel, uint64_t at_ns, const uint32_t g[3],
		     const uint32_t b[3], int device)
{
	struct jw w = { 0 };
	if (!taking())
		return;
	thread_of(pid, tid);
	event_begin(&w, kernel ? kernel : "kernel", "launch", "i", pid, tid);
	jw_key(&w, "s");
	jw_str(&w, "t");
	jw_key(&w, "ts");
	jw_double(&w, us(at_ns));
	if ((g && b) || device >= 0) {
		jw_key(&w, "args");
		jw_open(&w, '{');
		if (g && b) {
			dim3_text(&w, "grid", g);
			dim3_text(&w, "block", b);
		}
		if (device >= 0) {
			jw_key(&w, "device");
			jw_int(&w, device);
		}
		jw_close(&w);
	}
	jw_close(&w);
	emit(&w, us(at_ns));
}

static void counter(const struct track *t, int64_t device, uint64_t at_ns)
{
	struct jw w = { 0 };
	char name[48] = "live bytes, device not known";
	if (device >= 0 && device < DEVICES)
		snprintf(name, sizeof name, "live bytes, device %d", (int)device);
	event_begin(&w, name, "memory", "C", t->pid, 0);
	jw_key(&w, "ts");
	jw_double(&w, us(at_ns));
	jw_key(&w, "args");
	jw_open(&w, '{');
	jw_key(&w, "bytes");
	jw_u64(&w, t->live_bytes[device >= 0 && device < DEVICES ? device : DEVICES]);
	jw_close(&w);
	jw_close(&w);
	emit(&w, us(at_ns));
}

void timeline_alloc(pid_t pid, uint64_t ptr, uint64_t bytes, int device, uint64_t at_ns)
{
	struct track *t = tl.fd >= 0 && ptr ? track_of(pid) : NULL;
	if (!t)
		return;
	int64_t dev = device >= 0 && device < DEVICES ? device : -1;
	struct live_entry *e = hashmap_insert(&t->live, ptr, NULL);
	if (!e)
		return;
	if (e->bytes)	/* its free was missed */
		t->live_bytes[e->device >= 0 ? e->device : DEVICES] -= e->bytes;
	e->bytes = bytes;
	e->device = dev;
	t->live_bytes[dev >= 0 ? dev : DEVICES] += bytes;
	counter(t, dev, at_ns);
}

void timeline_copy(pid_t pid, int dir, const char *dir_name, uint64_t bytes, uint64_t at_ns)
{
	struct track *t = taking() && dir >= 0 && dir < DIRECTIONS ? track_of(pid) : NULL;
	if (!t || !bytes)
		return;
	t->copied[dir] += bytes;
	struct jw w = { 0 };
	char name[48];
	snprintf(name, sizeof name, "copied bytes, %s", dir_name);
	event_begin(&w, name, "copy", "C", pid, 0);
	jw_key(&w, "ts");
	jw_double(&w, us(at_ns));
	jw_key(&w, "args");
	jw_open(&w, '{');
	jw_key(&w, "bytes");
	jw_u64(&w, t->copied[dir]);
	jw_close(&w);
	jw_close(&w);
	emit(&w, us(at_ns));
}

void timeline_free(pid_t pid, uint64_t ptr, uint64_t at_ns)
{
	struct live_entry gone;
	struct track *t = tl.fd >= 0 && ptr ? track_of(pid) : NULL;
	if (!t || !hashmap_remove(&t->live, ptr, &gone))
		return;
	t->live_bytes[gone.device >= 0 ? gone.device : DEVICES] -= gone.bytes;
	counter(t, gone.device, at_ns);
}
