/* timeline.c — the Chrome trace event file (timeline.h). Each event is built and written by
 * jansson (json_writer.h: names by the one UTF-8 rule), gathered in a buffer and written with
 * one pwrite together with the document's closing "]}" at the end; the next write starts over
 * that closing, so the file on disk is always a complete JSON document. */
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

enum { BUF = 1 << 16, EVENT_MAX = 2048, DEVICES = 64 };
#define FLUSH_NS 200000000ull	/* at least this often while events come */
static const char tail[] = "\n]}\n";

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
};

static struct {
	int fd;
	off_t off;		/* where the next events go (over the closing) */
	uint64_t max_bytes;
	bool full, any;
	int err;		/* the first failed write's errno: nothing more is written */
	size_t len;
	uint64_t last_flush;
	struct hashmap tids;	/* threads named so far (key: tid + 1) */
	struct track *tracks;	/* one per process seen, in that order */
	size_t n_tracks;
	char buf[BUF + sizeof tail];
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
	memcpy(tl.buf + tl.len, tail, sizeof tail - 1);
	ssize_t n = pwrite(tl.fd, tl.buf, tl.len + sizeof tail - 1, tl.off);
	if (n == (ssize_t)(tl.len + sizeof tail - 1))
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

/* A thread's track gets its name the first time it shows up. */
static void name_thread(pid_t pid, pid_t tid)
{
	bool added;
	track_of(pid);
	if (!hashmap_insert(&tl.tids, (uint64_t)tid + 1, &added) || !added)
		return;
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
	tl.max_bytes = max_bytes < 4096 ? 4096 : max_bytes;
	hashmap_init(&tl.tids, sizeof(uint64_t), 64, 0);
	static const char head[] = "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"gputop\"},\"traceEvents\":[";
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

/* "(x,y,z)": dimensions as the timeline has always shown them. */
static void dim3_text(struct jw *w, const char *key, const uint32_t v[3])
{
	char text[40];
	snprintf(text, sizeof text, "(%u,%u,%u)", v[0], v[1], v[2]);
	jw_key(w, key);
	jw_str(w, text);
}

void timeline_call(pid_t pid, pid_t tid, const char *api, uint64_t start_ns, uint64_t dur_ns,
		   const struct timeline_args *a)
{
	struct jw w = { 0 };
	double largest = us(start_ns) > us(dur_ns) ? us(start_ns) : us(dur_ns);
	if (!taking())
		return;
	name_thread(pid, tid);
	event_begin(&w, api, "cuda", "X", pid, tid);
	jw_key(&w, "ts");
	jw_double(&w, us(start_ns));
	jw_key(&w, "dur");
	jw_double(&w, us(dur_ns));
	jw_key(&w, "args");
	jw_open(&w, '{');
	if (a->bytes) {
		jw_key(&w, "bytes");
		jw_u64(&w, a->bytes);
	}
	if (a->ptr) {
		char ptr[24];
		snprintf(ptr, sizeof ptr, "0x%" PRIx64, a->ptr);
		jw_key(&w, "ptr");
		jw_str(&w, ptr);
	}
	if (a->copy_kind) {
		jw_key(&w, "kind");
		jw_str(&w, a->copy_kind);
	}
	if (a->copy_kind && a->bytes && dur_ns) {
		jw_key(&w, "GBps");	/* bytes per ns */
		jw_double(&w, round((double)a->bytes / (double)dur_ns * 1e3) / 1e3);
	}
	if (a->kernel) {
		jw_key(&w, "kernel");
		jw_str(&w, a->kernel);
	}
	if (a->grid) {
		dim3_text(&w, "grid", a->grid);
		dim3_text(&w, "block", a->block);
	}
	if (a->device >= 0) {
		jw_key(&w, "device");
		jw_int(&w, a->device);
	}
	if (a->error) {
		jw_key(&w, "error");
		jw_int(&w, a->error);
		jw_key(&w, "error_name");
		jw_str(&w, a->error_name ? a->error_name : "");
	}
	jw_close(&w);
	jw_close(&w);
	emit(&w, largest);
}

void timeline_launch(pid_t pid, pid_t tid, const char *kernel, uint64_t at_ns, const uint32_t g[3],
		     const uint32_t b[3])
{
	struct jw w = { 0 };
	if (!taking())
		return;
	name_thread(pid, tid);
	event_begin(&w, kernel ? kernel : "kernel", "launch", "i", pid, tid);
	jw_key(&w, "s");
	jw_str(&w, "t");
	jw_key(&w, "ts");
	jw_double(&w, us(at_ns));
	if (g && b) {
		jw_key(&w, "args");
		jw_open(&w, '{');
		dim3_text(&w, "grid", g);
		dim3_text(&w, "block", b);
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

void timeline_free(pid_t pid, uint64_t ptr, uint64_t at_ns)
{
	struct live_entry gone;
	struct track *t = tl.fd >= 0 && ptr ? track_of(pid) : NULL;
	if (!t || !hashmap_remove(&t->live, ptr, &gone))
		return;
	t->live_bytes[gone.device >= 0 ? gone.device : DEVICES] -= gone.bytes;
	counter(t, gone.device, at_ns);
}
