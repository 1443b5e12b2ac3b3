/* timeline.c — the Chrome trace event file's events (timeline.h), each built by jansson
 * (json_writer.h: names by the one UTF-8 rule) and written through timeline_file.c, whose
 * closing (the array's end and otherData: the count of clamped calls, the compact mode's rules)
 * is written here. In compact mode a thread's calls are held as a run until one does not join
 * it, and counters keep their latest value until they may be written again. */
#define _GNU_SOURCE
#include "timeline.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hashmap.h"
#include "json_writer.h"
#include "timeline_file.h"

enum { DEVICES = 64, DIRECTIONS = 8, RUN_NOTE_MAX = 256 };
/* Compact mode: a call joins its thread's run when it starts within RUN_GAP_NS of the run's
 * end and the run stays within RUN_MAX_NS; a counter is written at most every COUNTER_NS; a
 * run or a counter's value is written at the latest HOLD_NS after it stopped changing. */
#define RUN_GAP_NS 50000ull
#define RUN_MAX_NS 10000000ull
#define COUNTER_NS 50000000ull
#define HOLD_NS 200000000ull

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

/* Compact mode: a run of calls of one function on one thread, one after another, with one
 * result; calls 0: none. */
struct run {
	const char *api;
	int error;
	const char *error_name;
	uint64_t start, end, inside, calls;
};

enum { RECENT = 4 };
/* A thread's track: the latest calls put on it, which the next one must not overlap (a call
 * whose end was counted late comes after later ones), and in compact mode its run. */
struct thread_track {
	uint64_t key;		/* tid + 1 */
	pid_t pid;
	uint64_t start[RECENT], end[RECENT];	/* ns; end 0: none */
	struct run run;
};

/* Compact mode: a counter's latest value, written at most every COUNTER_NS. */
struct counter_entry {
	uint64_t key;		/* hash of pid, name */
	pid_t pid;
	const char *cat;
	char *name;
	uint64_t value, at, written_at;
	bool written, pending;
};

static struct {
	struct timeline_file file;
	bool compact;
	struct hashmap tids;	/* of thread_track: threads named so far */
	struct hashmap counters;	/* compact: of counter_entry */
	uint64_t clamped;	/* calls whose times were clamped to their thread's previous call */
	struct track *tracks;	/* one per process seen, in that order */
	size_t n_tracks;
} tl = { .file.fd = -1 };

bool timeline_on(void)
{
	return timeline_file_on(&tl.file);
}

static size_t closing(char *buf, size_t room)
{
	int n = snprintf(buf, room, "\n],\"otherData\":{\"tool\":\"gputop\",\"clamped_calls\":%" PRIu64 "%s}}\n",
			 tl.clamped,
			 tl.compact ? ",\"compact\":{\"run_gap_us\":50,\"run_max_us\":10000,\"counter_every_us\":50000}" : "");
	return n < 0 ? 0 : (size_t)n < room ? (size_t)n : room - 1;
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
	timeline_file_emit(&tl.file, &w, 0, 0);
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
	t->pid = pid;
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

int timeline_open(int fd, uint64_t max_bytes, pid_t pid, bool compact)
{
	timeline_close();
	int err = timeline_file_open(&tl.file, fd, max_bytes, closing);
	if (err < 0)
		return err;
	tl.compact = compact;
	tl.clamped = 0;
	hashmap_init(&tl.tids, sizeof(struct thread_track), 64, 0);
	hashmap_init(&tl.counters, sizeof(struct counter_entry), 64, 0);
	track_of(pid);
	timeline_file_flush(&tl.file);
	return 0;
}

static void write_held(uint64_t before_ns);

int timeline_close(void)
{
	if (!timeline_file_on(&tl.file))
		return 0;
	write_held(UINT64_MAX);
	int err = timeline_file_close(&tl.file);
	hashmap_clear(&tl.tids);
	size_t it = 0;
	for (struct counter_entry *e; (e = hashmap_next(&tl.counters, &it));)
		free(e->name);
	hashmap_clear(&tl.counters);
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

/* A failed call's instant (the full mode: at its end, one call). */
static void error_instant(pid_t pid, pid_t tid, const char *api, int error, const char *error_name, uint64_t at_ns)
{
	struct jw w = { 0 };
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
	timeline_file_emit(&tl.file, &w, us(at_ns), 0);
}

/* Writes thread t's run: its complete event, clamped, and where it stands for more than one
 * call or failed, the instant right after it that says how many calls and their time inside
 * (and the error): a viewer shows it on the track, speedscope's frames stay one a function. */
static void write_run(struct thread_track *t, pid_t tid)
{
	struct run r = t->run;
	struct jw w = { 0 };
	t->run.calls = 0;
	if (!r.calls || !timeline_file_taking(&tl.file))
		return;
	clamp(t, &r.start, &r.end);
	event_begin(&w, r.api, tl.compact ? NULL : "cuda", "X", t->pid, tid);
	jw_key(&w, "ts");
	jw_double(&w, us(r.start));
	jw_key(&w, "dur");
	jw_double(&w, us(r.end - r.start));
	jw_close(&w);
	bool note = tl.compact && (r.calls > 1 || r.error);
	timeline_file_emit(&tl.file, &w, us(r.end), note ? RUN_NOTE_MAX : 0);
	if (!note || !timeline_file_taking(&tl.file))
		return;
	char name[32];
	snprintf(name, sizeof name, "%" PRIu64 " calls", r.calls);
	event_begin(&w, r.error ? (r.error_name && *r.error_name ? r.error_name : "error") : name,
		    r.error ? "error" : "run", "i", t->pid, tid);
	jw_key(&w, "s");
	jw_str(&w, "t");
	jw_key(&w, "ts");
	jw_double(&w, us(r.start));
	jw_key(&w, "args");
	jw_open(&w, '{');
	jw_key(&w, "call");
	jw_str(&w, r.api);
	if (r.error) {
		jw_key(&w, "error");
		jw_int(&w, r.error);
	}
	jw_key(&w, "calls");
	jw_u64(&w, r.calls);
	jw_key(&w, "inside_us");
	jw_double(&w, us(r.inside));
	jw_close(&w);
	jw_close(&w);
	timeline_file_emit(&tl.file, &w, us(r.end), 0);
}

/* Whether a call joins run r: the same function and result, starting after the run began and
 * within RUN_GAP_NS of its end, the run then no longer than RUN_MAX_NS. */
static bool joins(const struct run *r, const char *api, int error, uint64_t start, uint64_t end)
{
	return r->calls && r->error == error && start >= r->start && start <= r->end + RUN_GAP_NS &&
	       (end > r->end ? end : r->end) - r->start <= RUN_MAX_NS && strcmp(r->api, api) == 0;
}

void timeline_call(pid_t pid, pid_t tid, const char *api, uint64_t start_ns, uint64_t end_ns, int error,
		   const char *error_name)
{
	if (!timeline_file_taking(&tl.file))
		return;
	struct thread_track *t = thread_of(pid, tid);
	if (end_ns < start_ns)
		end_ns = start_ns;
	if (!t)
		return;
	if (tl.compact && joins(&t->run, api, error, start_ns, end_ns)) {
		struct run *r = &t->run;
		r->end = end_ns > r->end ? end_ns : r->end;
		r->inside += end_ns - start_ns;
		r->calls++;
		return;
	}
	write_run(t, tid);
	t->run = (struct run){ .api = api, .error = error, .error_name = error_name, .start = start_ns,
			       .end = end_ns, .inside = end_ns - start_ns, .calls = 1 };
	if (tl.compact)
		return;
	write_run(t, tid);	/* the full mode: each call its own, an error its instant at its end */
	if (error)
		error_instant(pid, tid, api, error, error_name, end_ns);
}

static void counter_event(pid_t pid, const char *cat, const char *name, uint64_t value, uint64_t at_ns)
{
	struct jw w = { 0 };
	event_begin(&w, name, cat, "C", pid, 0);
	jw_key(&w, "ts");
	jw_double(&w, us(at_ns));
	jw_key(&w, "args");
	jw_open(&w, '{');
	jw_key(&w, strcmp(cat, "launches") ? "bytes" : "launches");
	jw_u64(&w, value);
	jw_close(&w);
	jw_close(&w);
	timeline_file_emit(&tl.file, &w, us(at_ns), 0);
}

static uint64_t name_hash(pid_t pid, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)pid;
	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	return h ? h : 1;
}

/* Compact mode: counter name of process pid (the next key where two names hash alike); NULL
 * when out of memory. */
static struct counter_entry *counter_of(pid_t pid, const char *cat, const char *name)
{
	bool added;
	for (uint64_t key = name_hash(pid, name);; key = key + 1 ? key + 1 : 1) {
		struct counter_entry *e = hashmap_insert(&tl.counters, key, &added);
		if (!e)
			return NULL;
		if (added) {
			*e = (struct counter_entry){ .key = key, .pid = pid, .cat = cat, .name = strdup(name) };
			return e->name ? e : NULL;
		}
		if (e->pid == pid && e->name && strcmp(e->name, name) == 0)
			return e;
	}
}

/* Counter e is value at at_ns: written once COUNTER_NS passed since its last value was
 * written (else its latest value is, later, at its time). */
static void counter_update(struct counter_entry *e, uint64_t value, uint64_t at_ns)
{
	e->value = value;
	e->at = at_ns;
	e->pending = true;
	if (!e->written || at_ns >= e->written_at + COUNTER_NS || at_ns < e->written_at) {
		counter_event(e->pid, e->cat, e->name, value, at_ns);
		e->written = true;
		e->written_at = at_ns;
		e->pending = false;
	}
}

/* Counter name of process pid is value at at_ns: written now, in compact mode as
 * counter_update says. */
static void counter_set(pid_t pid, const char *cat, const char *name, uint64_t value, uint64_t at_ns)
{
	struct counter_entry *e = tl.compact ? counter_of(pid, cat, name) : NULL;
	if (e)
		counter_update(e, value, at_ns);
	else
		counter_event(pid, cat, name, value, at_ns);
}

/* Compact mode: writes the runs and counters' values held since before before_ns. */
static void write_held(uint64_t before_ns)
{
	size_t it = 0;
	for (struct thread_track *t; (t = hashmap_next(&tl.tids, &it));)
		if (t->run.calls && t->run.end < before_ns)
			write_run(t, (pid_t)(t->key - 1));
	it = 0;
	for (struct counter_entry *e; (e = hashmap_next(&tl.counters, &it));)
		if (e->pending && e->at < before_ns) {
			counter_event(e->pid, e->cat, e->name, e->value, e->at);
			e->written_at = e->at;
			e->pending = false;
		}
}

void timeline_tick(uint64_t now)
{
	if (tl.compact && timeline_file_taking(&tl.file) && now > HOLD_NS) {
		write_held(now - HOLD_NS);
		timeline_file_flush(&tl.file);
	}
}

void timeline_launch(pid_t pid, pid_t tid, const char *kernel, uint64_t at_ns, const uint32_t g[3],
		     const uint32_t b[3], int device)
{
	struct jw w = { 0 };
	if (!timeline_file_taking(&tl.file))
		return;
	if (tl.compact) {	/* a count of the kernel's launches */
		char *name = NULL;
		track_of(pid);
		if (asprintf(&name, "launches, %s", kernel ? kernel : "kernel") < 0)
			return;
		struct counter_entry *e = counter_of(pid, "launches", name);
		if (e)
			counter_update(e, e->value + 1, at_ns);
		free(name);
		return;
	}
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
	timeline_file_emit(&tl.file, &w, us(at_ns), 0);
}

static void live_counter(const struct track *t, int64_t device, uint64_t at_ns)
{
	char name[48] = "live bytes, device not known";
	if (device >= 0 && device < DEVICES)
		snprintf(name, sizeof name, "live bytes, device %d", (int)device);
	counter_set(t->pid, "memory", name, t->live_bytes[device >= 0 && device < DEVICES ? device : DEVICES],
		    at_ns);
}

void timeline_alloc(pid_t pid, uint64_t ptr, uint64_t bytes, int device, uint64_t at_ns)
{
	struct track *t = timeline_file_on(&tl.file) && ptr ? track_of(pid) : NULL;
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
	live_counter(t, dev, at_ns);
}

void timeline_copy(pid_t pid, int dir, const char *dir_name, uint64_t bytes, uint64_t at_ns)
{
	struct track *t = timeline_file_taking(&tl.file) && dir >= 0 && dir < DIRECTIONS ? track_of(pid) : NULL;
	if (!t || !bytes)
		return;
	t->copied[dir] += bytes;
	char name[48];
	snprintf(name, sizeof name, "copied bytes, %s", dir_name);
	counter_set(pid, "copy", name, t->copied[dir], at_ns);
}

void timeline_free(pid_t pid, uint64_t ptr, uint64_t at_ns)
{
	struct live_entry gone;
	struct track *t = timeline_file_on(&tl.file) && ptr ? track_of(pid) : NULL;
	if (!t || !hashmap_remove(&t->live, ptr, &gone))
		return;
	t->live_bytes[gone.device >= 0 ? gone.device : DEVICES] -= gone.bytes;
	live_counter(t, gone.device, at_ns);
}
