/* timeline.c — the Chrome trace event file (timeline.h). Events are gathered in a buffer and
 * written with one pwrite together with the document's closing "]}" at the end; the next
 * write starts over that closing, so the file on disk is always a complete JSON document. */
#define _GNU_SOURCE
#include "timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "hashmap.h"

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

static void flush(void)
{
	if (tl.fd < 0 || (!tl.len && tl.off))
		return;
	memcpy(tl.buf + tl.len, tail, sizeof tail - 1);
	if (pwrite(tl.fd, tl.buf, tl.len + sizeof tail - 1, tl.off) == (ssize_t)(tl.len + sizeof tail - 1))
		tl.off += (off_t)tl.len;
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

/* A JSON string's inside (no quotes), into out of size n. */
static const char *esc(const char *s, char *out, size_t n)
{
	size_t k = 0;
	for (; s && *s && k + 7 < n; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			k += (size_t)snprintf(out + k, n - k, "\\%c", c);
		else if (c < 0x20)
			k += (size_t)snprintf(out + k, n - k, "\\u%04x", c);
		else
			out[k++] = (char)c;
	}
	out[k] = 0;
	return out;
}

static void event(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void event(const char *fmt, ...)
{
	char ev[EVENT_MAX];
	int n = 0;
	if (tl.fd < 0 || tl.full)
		return;
	if (tl.any)
		ev[n++] = ',';
	ev[n++] = '\n';
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(ev + n, sizeof ev - (size_t)n, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)(n + k) >= sizeof ev)
		return;
	n += k;
	if ((uint64_t)tl.off + tl.len + (uint64_t)n + 256 > tl.max_bytes) {
		tl.full = true;
		const char *note = ",\n{\"name\":\"gputop: --timeline-max-mb reached, later events left out\","
				   "\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":0}";
		put(tl.any ? note : note + 1, strlen(tl.any ? note : note + 1));
		flush();
		return;
	}
	put(ev, (size_t)n);
	tl.any = true;
	if (tl.len > BUF / 2 || now_ns() - tl.last_flush > FLUSH_NS)
		flush();
}

static double us(uint64_t ns)
{
	return (double)ns / 1e3;
}

static void name_process(pid_t pid)
{
	char path[64], comm[64] = "", e[160];
	snprintf(path, sizeof path, "/proc/%d/comm", pid);
	FILE *f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof comm, f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	event("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"%s (%d)\"}}",
	      pid, esc(comm, e, sizeof e), pid);
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
	char path[64], comm[64] = "", e[160];
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
	event("{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}", pid, tid,
	      esc(comm, e, sizeof e));
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
	tl.full = tl.any = false;
	tl.max_bytes = max_bytes < 4096 ? 4096 : max_bytes;
	hashmap_init(&tl.tids, sizeof(uint64_t), 64, 0);
	static const char head[] = "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"gputop\"},\"traceEvents\":[";
	put(head, sizeof head - 1);
	track_of(pid);
	flush();
	return 0;
}

void timeline_close(void)
{
	if (tl.fd < 0)
		return;
	flush();
	close(tl.fd);
	tl.fd = -1;
	hashmap_clear(&tl.tids);
	for (size_t i = 0; i < tl.n_tracks; i++)
		hashmap_clear(&tl.tracks[i].live);
	free(tl.tracks);
	tl.tracks = NULL;
	tl.n_tracks = 0;
}

void timeline_call(pid_t pid, pid_t tid, const char *api, uint64_t start_ns, uint64_t dur_ns,
		   const struct timeline_args *a)
{
	char args[1024], e[512];
	int n = 0;
	if (tl.fd < 0)
		return;
	name_thread(pid, tid);
#define ARG(...) (n += snprintf(args + n, sizeof args - (size_t)n, __VA_ARGS__), n = n < (int)sizeof args ? n : (int)sizeof args - 1)
	ARG("{");
	if (a->bytes)
		ARG("\"bytes\":%" PRIu64 ",", a->bytes);
	if (a->ptr)
		ARG("\"ptr\":\"0x%" PRIx64 "\",", a->ptr);
	if (a->copy_kind)
		ARG("\"kind\":\"%s\",", a->copy_kind);
	if (a->copy_kind && a->bytes && dur_ns)
		ARG("\"GBps\":%.3f,", (double)a->bytes / (double)dur_ns);
	if (a->kernel)
		ARG("\"kernel\":\"%s\",", esc(a->kernel, e, sizeof e));
	if (a->grid)
		ARG("\"grid\":\"(%u,%u,%u)\",\"block\":\"(%u,%u,%u)\",", a->grid[0], a->grid[1], a->grid[2],
		    a->block[0], a->block[1], a->block[2]);
	if (a->device >= 0)
		ARG("\"device\":%d,", a->device);
	if (a->error)
		ARG("\"error\":%d,\"error_name\":\"%s\",", a->error, esc(a->error_name ? a->error_name : "", e, sizeof e));
	if (n > 1)
		n--;	/* the last comma */
	ARG("}");
#undef ARG
	event("{\"name\":\"%s\",\"cat\":\"cuda\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":%s}",
	      api, pid, tid, us(start_ns), us(dur_ns), args);
}

void timeline_launch(pid_t pid, pid_t tid, const char *kernel, uint64_t at_ns, const uint32_t g[3],
		     const uint32_t b[3])
{
	char e[512];
	if (tl.fd < 0)
		return;
	name_thread(pid, tid);
	if (g && b)
		event("{\"name\":\"%s\",\"cat\":\"launch\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
		      "\"args\":{\"grid\":\"(%u,%u,%u)\",\"block\":\"(%u,%u,%u)\"}}",
		      esc(kernel ? kernel : "kernel", e, sizeof e), pid, tid, us(at_ns), g[0], g[1], g[2], b[0], b[1], b[2]);
	else
		event("{\"name\":\"%s\",\"cat\":\"launch\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f}",
		      esc(kernel ? kernel : "kernel", e, sizeof e), pid, tid, us(at_ns));
}

static void counter(const struct track *t, int64_t device, uint64_t at_ns)
{
	uint64_t v = t->live_bytes[device >= 0 && device < DEVICES ? device : DEVICES];
	if (device >= 0 && device < DEVICES)
		event("{\"name\":\"live bytes, device %d\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":%d,\"tid\":0,"
		      "\"ts\":%.3f,\"args\":{\"bytes\":%" PRIu64 "}}", (int)device, t->pid, us(at_ns), v);
	else
		event("{\"name\":\"live bytes, device not known\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":%d,\"tid\":0,"
		      "\"ts\":%.3f,\"args\":{\"bytes\":%" PRIu64 "}}", t->pid, us(at_ns), v);
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
